//! A convolution whose windows tile its input becomes a matrix product over the tiles.
//!
//! A `conv2d` with stride equal to its kernel (`kh x kw`, more than one tap), no padding,
//! dilation 1, one group and an input whose height and width the kernel divides reads every input
//! element exactly once: each output pixel is the dot product of its `C*kh*kw` patch with each
//! filter. ViT-style patch embeddings (16x16 stride 16) and the stems and downsampling layers of
//! ConvNeXt and Swin (4x4 stride 4, 2x2 stride 2) are such convolutions. They become
//!
//! ```text
//! %p = reshape(x, [N, C, OH, kh, OW, kw])
//! %q = transpose(%p, [0, 2, 4, 1, 3, 5])          the patches, [N, OH, OW, C, kh, kw]
//! %r = reshape(%q, [N, OH*OW, C*kh*kw])
//! %w = reshape(w, [OC, C*kh*kw])                  a view of the weight, of parameters alone
//! %l = linear(%r, %w[, b])                         [N, OH*OW, OC]
//! %s = reshape(%l, [N, OH, OW, OC])
//! %c = transpose(%s, [0, 3, 1, 2])                 the convolution's [N, OC, OH, OW]
//! ```
//!
//! so the product runs on the register tiles of `linear` (with the weight packed once by the
//! prepare step) instead of a direct convolution over rows of a few pixels, and the patch copy is
//! one pass over the input. The last transpose is where the graph wants NCHW; a consumer that
//! turns it back into tokens (`reshape` to `[N, OC, OH*OW]` and `transpose` `[0, 2, 1]`, or a
//! `transpose` to NHWC) folds away with it (`fold`: a chain of data movements that keeps the
//! elements in order is a `reshape`).
//!
//! The rewrite is taken where it pays for its copies: where the window has at least [`MIN_TAPS`]
//! taps (a 16x16 patch: the direct convolution gathers 16-apart columns for rows of 14 pixels),
//! or where every user of the convolution moves its result (`reshape`, `transpose`), so the
//! transpose back to NCHW folds into that movement. Smaller windows whose NCHW result is used as
//! such stay direct convolutions: on a 2-core AVX-512 VM a 4x4 stem of 3 channels took 0.16 ms
//! direct and 0.21 ms as patches, product and transpose back, and ConvNeXt's 2x2 downsampling of
//! 96 channels the same time either way (0.60 ms) before the two copies.
//!
//! What it keeps true: the sums are the same products over the same terms (the order of the
//! terms within a sum may differ, as between any two lowerings); only f32 convolutions are
//! rewritten (an i8 one keeps its integer lowering).

use crate::index::Index;
use crate::rewrite::Rewrite;
use ekb_ir::l0::{Graph, Op};
use ekb_ir::{DType, Diagnostic};

/// The fewest taps of a window rewritten whatever the convolution's users are.
pub const MIN_TAPS: usize = 64;

pub fn run(g: &Graph) -> Result<Option<Graph>, Diagnostic> {
    let ix = Index::new(g);
    let mut rw = Rewrite::new(g);
    for (i, n) in g.nodes.iter().enumerate() {
        let Op::Conv2d(a) = &n.op else { continue };
        let (Some(xt), Some(wt)) = (g.type_of(&n.args[0].name), g.type_of(&n.args[1].name)) else {
            continue;
        };
        let (&[batch, c, h, w], &[oc, _, kh, kw]) = (xt.shape.as_slice(), wt.shape.as_slice()) else {
            continue;
        };
        let tiles = a.stride == [kh, kw]
            && a.pad == [0; 4]
            && a.dilation == [1, 1]
            && a.groups == 1
            && kh * kw > 1
            && h % kh == 0
            && w % kw == 0;
        if !tiles || xt.dtype != DType::F32 || wt.dtype != DType::F32 {
            continue;
        }
        let (oh, ow, k) = (h / kh, w / kw, c * kh * kw);
        let users = ix.users(&n.name);
        let moved = !ix.is_output(&n.name)
            && !users.is_empty()
            && users.iter().all(|&u| matches!(g.nodes[u].op, Op::Reshape { .. } | Op::Transpose { .. }));
        if kh * kw < MIN_TAPS && !moved {
            continue;
        }
        let dims = |d: &[usize]| d.iter().map(|&v| v as i64).collect::<Vec<i64>>();
        let reshape = |d: &[usize]| Op::Reshape { shape: dims(d) };
        let transpose = |p: &[usize]| Op::Transpose { perm: p.to_vec() };
        let (x, wname, span) = (n.args[0].name.as_str(), n.args[1].name.as_str(), n.span);
        let p = rw.insert_before(i, "patches", reshape(&[batch, c, oh, kh, ow, kw]), &[x], span)?;
        let q = rw.insert_before(i, "patches", transpose(&[0, 2, 4, 1, 3, 5]), &[&p], span)?;
        let r = rw.insert_before(i, "patches", reshape(&[batch, oh * ow, k]), &[&q], span)?;
        let wm = rw.insert_before(i, "patch_weight", reshape(&[oc, k]), &[wname], span)?;
        let mut args = vec![r.as_str(), wm.as_str()];
        if let Some(b) = n.args.get(2) {
            args.push(&b.name);
        }
        let l = rw.insert_before(i, "patch_product", Op::Linear, &args, span)?;
        let s = rw.insert_before(i, "patch_product", reshape(&[batch, oh, ow, oc]), &[&l], span)?;
        rw.set(i, transpose(&[0, 3, 1, 2]), &[&s])?;
    }
    rw.finish()
}

#[cfg(test)]
mod tests {
    use crate::testing::{expect_unchanged, rewrite};

    #[test]
    fn a_patch_embedding_becomes_a_linear_layer_over_the_patches() {
        let out = rewrite(
            super::run,
            "graph t(x: f32[2,3,8,12]) -> (y: f32[2,6,5]) {
               param w: f32[5,3,4,4] = kaiming_uniform
               param b: f32[5] = uniform(-0.5, 0.5)
               %c = conv2d(x, w, b, stride=[4,4])
               %f = reshape(%c, shape=[2,5,6])
               %t = transpose(%f, perm=[0,2,1])
               return %t
             }",
        );
        assert_eq!(
            out,
            "graph t(x: f32[2,3,8,12]) -> (y: f32[2,6,5]) {\n  param w: f32[5,3,4,4] = kaiming_uniform\n  \
             param b: f32[5] = uniform(-0.5, 0.5)\n  \
             %patches: f32[2,3,2,4,3,4] = reshape(x, shape=[2,3,2,4,3,4])\n  \
             %patches_2: f32[2,2,3,3,4,4] = transpose(%patches, perm=[0,2,4,1,3,5])\n  \
             %patches_3: f32[2,6,48] = reshape(%patches_2, shape=[2,6,48])\n  \
             %patch_weight: f32[5,48] = reshape(w, shape=[5,48])\n  \
             %patch_product: f32[2,6,5] = linear(%patches_3, %patch_weight, b)\n  \
             %patch_product_2: f32[2,2,3,5] = reshape(%patch_product, shape=[2,2,3,5])\n  \
             %c: f32[2,5,2,3] = transpose(%patch_product_2, perm=[0,3,1,2])\n  \
             %f: f32[2,5,6] = reshape(%c, shape=[2,5,6])\n  \
             %t: f32[2,6,5] = transpose(%f, perm=[0,2,1])\n  return %t\n}\n"
        );
    }

    #[test]
    fn a_wide_window_without_bias_is_rewritten_whatever_reads_it() {
        // 8x16 taps, the result returned as NCHW.
        let out = rewrite(
            super::run,
            "graph t(x: f32[1,2,16,32]) -> (y: f32[1,3,2,2]) {
               param w: f32[3,2,8,16] = kaiming_uniform
               %c = conv2d(x, w, stride=[8,16])
               return %c
             }",
        );
        assert!(out.contains("linear(%patches_3, %patch_weight)"), "{out}");
    }

    #[test]
    fn a_small_window_whose_result_is_used_as_nchw_is_unchanged() {
        expect_unchanged(
            super::run,
            "graph t(x: f32[1,3,8,8]) -> (y: f32[1,4,2,2], z: f32[1,4,2,2]) {
               param w: f32[4,3,4,4] = kaiming_uniform
               %c = conv2d(x, w, stride=[4,4])
               %t = transpose(%c, perm=[0,1,3,2])
               %r = relu(%c)
               return %t, %r
             }",
        );
    }

    #[test]
    fn convolutions_whose_windows_do_not_tile_the_input_are_unchanged() {
        // Each result only moved (the users that let a short reduction be rewritten).
        for (weight, conv, out) in [
            // overlapping windows
            ("[4,2,2,2]", "stride=[1,1]", "7,7"),
            // padding
            ("[4,2,2,2]", "stride=[2,2], pad=[1,1,1,1]", "5,5"),
            // a kernel that does not divide the width (the last columns are dropped)
            ("[4,2,3,3]", "stride=[3,3]", "2,2"),
            // groups
            ("[4,1,2,2]", "stride=[2,2], groups=2", "4,4"),
            // dilation
            ("[4,2,2,2]", "stride=[2,2], dilation=[2,2]", "3,3"),
            // one tap: a pointwise convolution, lowered as one already
            ("[4,2,1,1]", "stride=[1,1]", "8,8"),
        ] {
            expect_unchanged(
                super::run,
                &format!(
                    "graph t(x: f32[1,2,8,8]) -> (y: f32[1,4,{out}]) {{
                       param w: f32{weight} = kaiming_uniform
                       %c = conv2d(x, w, {conv})
                       %t = transpose(%c, perm=[0,1,3,2])
                       return %t
                     }}"
                ),
            );
        }
    }
}
