//! A transposed convolution of a single input pixel becomes a matrix product with its weight.
//!
//! A `conv_transpose2d` whose input is one pixel (`[N, C, 1, 1]`), without padding, output
//! padding or dilation, in one group, writes that pixel's window and nothing else:
//! `y[n, o, ky, kx] = sum_c x[n, c] * w[c, o, ky, kx]` (+ `b[o]`), whatever the stride. The
//! weight `[C, OC, kh, kw]` is already the matrix `[C, OC*kh*kw]`, so this is
//!
//! ```text
//! %r = reshape(x, [N, C])
//! %w = reshape(w, [C, OC*kh*kw])        a view of the weight, of parameters alone
//! %m = matmul(%r, %w)                    [N, OC*kh*kw]
//! %y = reshape(%m, [N, OC, kh, kw])
//! %b = reshape(b, [1, OC, 1, 1])         with a bias, and the result add(%y, %b)
//! ```
//!
//! DCGAN's first layer (a 100-d latent vector to 512 planes of 4x4) is one. The transposed
//! convolution's lowerings compute a window by shifting the input over it, which for one pixel
//! is mostly lanes of zeros: on a 2-core AVX-512 VM that layer took 214 us, the product 25 us
//! (`ekb run` on the layer alone, both ways). The product streams the weight row by row, the
//! reshapes are views.
//!
//! What it keeps true: every output is the same sum of products over the same input channels
//! (their order within the sum may differ, as between any two lowerings); only f32 layers are
//! rewritten.

use crate::rewrite::Rewrite;
use ekb_ir::l0::{BinaryOp, Graph, Op};
use ekb_ir::{DType, Diagnostic};

pub fn run(g: &Graph) -> Result<Option<Graph>, Diagnostic> {
    let mut rw = Rewrite::new(g);
    for (i, n) in g.nodes.iter().enumerate() {
        let Op::ConvTranspose2d(a) = &n.op else { continue };
        let (Some(xt), Some(wt)) = (g.type_of(&n.args[0].name), g.type_of(&n.args[1].name)) else {
            continue;
        };
        let (&[batch, c, 1, 1], &[_, oc, kh, kw]) = (xt.shape.as_slice(), wt.shape.as_slice()) else {
            continue;
        };
        let window_only =
            a.pad == [0; 4] && a.output_padding == [0, 0] && a.dilation == [1, 1] && a.groups == 1;
        if !window_only || xt.dtype != DType::F32 || wt.dtype != DType::F32 {
            continue;
        }
        let reshape = |d: &[usize]| Op::Reshape { shape: d.iter().map(|&v| v as i64).collect() };
        let (x, w, span) = (n.args[0].name.as_str(), n.args[1].name.as_str(), n.span);
        let r = rw.insert_before(i, "pixel", reshape(&[batch, c]), &[x], span)?;
        let wm = rw.insert_before(i, "pixel_weight", reshape(&[c, oc * kh * kw]), &[w], span)?;
        let product = Op::MatMul { transpose_a: false, transpose_b: false };
        let m = rw.insert_before(i, "pixel_product", product, &[&r, &wm], span)?;
        let window = reshape(&[batch, oc, kh, kw]);
        match n.args.get(2) {
            None => rw.set(i, window, &[&m])?,
            Some(b) => {
                let y = rw.insert_before(i, "pixel_product", window, &[&m], span)?;
                let bias = rw.insert_before(i, "pixel_bias", reshape(&[1, oc, 1, 1]), &[&b.name], span)?;
                rw.set(i, Op::Binary(BinaryOp::Add), &[&y, &bias])?;
            }
        }
    }
    rw.finish()
}

#[cfg(test)]
mod tests {
    use crate::testing::{expect_unchanged, rewrite};

    #[test]
    fn a_latent_vector_layer_becomes_a_product_with_the_weight() {
        let out = rewrite(
            super::run,
            "graph t(z: f32[2,3,1,1]) -> (y: f32[2,4,2,5]) {
               param w: f32[3,4,2,5] = normal(0.0, 0.02)
               %c = conv_transpose2d(z, w, stride=[2,2])
               return %c
             }",
        );
        assert_eq!(
            out,
            "graph t(z: f32[2,3,1,1]) -> (y: f32[2,4,2,5]) {\n  param w: f32[3,4,2,5] = normal(0.0, 0.02)\n  \
             %pixel: f32[2,3] = reshape(z, shape=[2,3])\n  \
             %pixel_weight: f32[3,40] = reshape(w, shape=[3,40])\n  \
             %pixel_product: f32[2,40] = matmul(%pixel, %pixel_weight, transpose_a=false, transpose_b=false)\n  \
             %c: f32[2,4,2,5] = reshape(%pixel_product, shape=[2,4,2,5])\n  return %c\n}\n"
        );
    }

    #[test]
    fn a_bias_is_added_per_output_channel() {
        let out = rewrite(
            super::run,
            "graph t(z: f32[1,3,1,1]) -> (y: f32[1,4,3,3]) {
               param w: f32[3,4,3,3] = normal(0.0, 0.02)
               param b: f32[4] = uniform(-0.5, 0.5)
               %c = conv_transpose2d(z, w, b)
               %r = relu(%c)
               return %r
             }",
        );
        assert!(
            out.contains("%pixel_product_2: f32[1,4,3,3] = reshape(%pixel_product, shape=[1,4,3,3])"),
            "{out}"
        );
        assert!(out.contains("%pixel_bias: f32[1,4,1,1] = reshape(b, shape=[1,4,1,1])"), "{out}");
        assert!(out.contains("%c: f32[1,4,3,3] = add(%pixel_product_2, %pixel_bias)"), "{out}");
    }

    #[test]
    fn larger_inputs_padding_dilation_and_groups_are_unchanged() {
        for (x, w, y, attrs) in [
            ("f32[1,3,2,1]", "f32[3,4,2,2]", "f32[1,4,3,2]", ""),
            ("f32[1,3,1,1]", "f32[3,4,3,3]", "f32[1,4,1,1]", ", pad=[1,1,1,1]"),
            ("f32[1,3,1,1]", "f32[3,4,2,2]", "f32[1,4,3,3]", ", dilation=[2,2]"),
            ("f32[1,4,1,1]", "f32[4,2,2,2]", "f32[1,4,2,2]", ", groups=2"),
        ] {
            expect_unchanged(
                super::run,
                &format!(
                    "graph t(z: {x}) -> (y: {y}) {{
                       param w: {w} = normal(0.0, 0.02)
                       %c = conv_transpose2d(z, w{attrs})
                       return %c
                     }}"
                ),
            );
        }
    }
}
