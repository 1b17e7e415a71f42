//! A slice that keeps a window of a convolution's output becomes a convolution that computes
//! only that window.
//!
//! Causal 1-D convolutions are written this way (Mamba's `conv1d(..., padding=k-1)[..., :L]`,
//! WaveNet-style stacks): pad both sides, convolve, then cut the outputs that saw the future.
//! Computing the whole output and copying the kept part is a second pass over it; the window
//! alone is the same convolution with less padding:
//!
//! ```text
//! %c = conv2d(x, w, b, pad=[0,3,0,3])            [1, C, 1, L + 3]
//! %s = slice(%c, axes=[3], starts=[0], ends=[L])  [1, C, 1, L]
//! ```
//!
//! becomes `%s = conv2d(x, w, b, pad=[0,3,0,0])`. Keeping outputs `a .. a + n` of a spatial
//! dim with stride `s`, dilation `d` and kernel `k` over an input of `size`: the leading pad
//! becomes `pad_before - a*s`, and the trailing pad the least that gives `n` outputs,
//! `(n - 1)*s + d*(k - 1) + 1 - size - pad_before'`.
//!
//! Taken where the slice is the convolution's only user (and the convolution not an output),
//! every sliced axis is spatial (2 or 3) with step 1, and both new pads are non-negative: a
//! window that would need the input cut (outputs dropped from the start beyond the leading
//! pad, or from the end beyond the trailing pad) is left alone.
//!
//! What it keeps true: every kept output is the same sum over the same taps of the same input
//! elements; the slice's name and type stay, and the convolution it read has no user left
//! (`dce` removes it).

use crate::index::Index;
use crate::rewrite::Rewrite;
use ekb_ir::l0::{Graph, Op};
use ekb_ir::Diagnostic;

pub fn run(g: &Graph) -> Result<Option<Graph>, Diagnostic> {
    let ix = Index::new(g);
    let mut rw = Rewrite::new(g);
    for (i, n) in g.nodes.iter().enumerate() {
        let Op::Slice { axes, starts, steps, .. } = &n.op else { continue };
        let Some(conv) = ix.node(g, &n.args[0].name) else { continue };
        let Op::Conv2d(a) = &conv.op else { continue };
        if !ix.single_use(&conv.name) {
            continue;
        }
        let (Some(xt), Some(wt), Some(ct), Some(st)) = (
            g.type_of(&conv.args[0].name),
            g.type_of(&conv.args[1].name),
            g.type_of(&conv.name),
            g.type_of(&n.name),
        ) else {
            continue;
        };
        if xt.shape.len() != 4 || wt.shape.len() != 4 || st.shape.len() != 4 {
            continue;
        }
        let mut attrs = a.clone();
        let mut ok = steps.iter().all(|&s| s == 1);
        for (&axis, &start) in axes.iter().zip(starts) {
            let d = if axis < 0 { axis + 4 } else { axis };
            if !ok || !(2..=3).contains(&d) {
                ok = false;
                break;
            }
            let d = d as usize;
            let s = d - 2;
            let dim = ct.shape[d] as i64;
            let first = if start < 0 { start + dim } else { start }.clamp(0, dim);
            let kept = st.shape[d] as i64;
            let (stride, dil, k, size) =
                (attrs.stride[s] as i64, attrs.dilation[s] as i64, wt.shape[d] as i64, xt.shape[d] as i64);
            let before = attrs.pad[s] as i64 - first * stride;
            let after = (kept - 1) * stride + dil * (k - 1) + 1 - size - before;
            if kept < 1 || before < 0 || after < 0 {
                ok = false;
                break;
            }
            attrs.pad[s] = before as usize;
            attrs.pad[s + 2] = after as usize;
        }
        if !ok {
            continue;
        }
        let args: Vec<&str> = conv.args.iter().map(|r| r.name.as_str()).collect();
        rw.set(i, Op::Conv2d(attrs), &args)?;
    }
    rw.finish()
}

#[cfg(test)]
mod tests {
    use crate::testing::{expect_unchanged, rewrite};

    #[test]
    fn a_causal_convolution_computes_only_the_outputs_it_keeps() {
        let out = rewrite(
            super::run,
            "graph t(x: f32[1,6,1,20]) -> (y: f32[1,6,1,20]) {
               param w: f32[6,1,1,4] = kaiming_uniform
               param b: f32[6] = uniform(-0.5, 0.5)
               %c = conv2d(x, w, b, pad=[0,3,0,3], groups=6)
               %s = slice(%c, axes=[3], starts=[0], ends=[20], steps=[1])
               return %s
             }",
        );
        assert!(out.contains("%s: f32[1,6,1,20] = conv2d(x, w, b, stride=[1,1], pad=[0,3,0,0]"), "{out}");
    }

    #[test]
    fn a_window_of_both_spatial_dims_with_stride_and_dilation() {
        // Rows 1..7 of 8 (stride 2, kernel 3) and columns 2..10 of 11 (stride 2, dilation 2).
        let out = rewrite(
            super::run,
            "graph t(x: f32[1,2,11,17]) -> (y: f32[1,3,6,8]) {
               param w: f32[3,2,3,3] = kaiming_uniform
               %c = conv2d(x, w, stride=[2,2], pad=[3,4,3,4], dilation=[1,2])
               %s = slice(%c, axes=[2,3], starts=[1,2], ends=[7,10], steps=[1,1])
               return %s
             }",
        );
        assert!(
            out.contains("%s: f32[1,3,6,8] = conv2d(x, w, stride=[2,2], pad=[1,0,1,2], dilation=[1,2]"),
            "{out}"
        );
    }

    #[test]
    fn slices_that_need_the_input_cut_or_share_the_convolution_are_left() {
        // Keeping outputs from 2 on would need a pad of -1 before; keeping the first 5 of 10
        // would need the input cut after.
        expect_unchanged(
            super::run,
            "graph t(x: f32[1,2,1,10]) -> (y: f32[1,2,1,5]) {
               param w: f32[2,2,1,3] = kaiming_uniform
               %c = conv2d(x, w, pad=[0,1,0,1])
               %s = slice(%c, axes=[3], starts=[0], ends=[5], steps=[1])
               return %s
             }",
        );
        expect_unchanged(
            super::run,
            "graph t(x: f32[1,2,1,10]) -> (y: f32[1,2,1,8]) {
               param w: f32[2,2,1,3] = kaiming_uniform
               %c = conv2d(x, w, pad=[0,1,0,1])
               %s = slice(%c, axes=[3], starts=[2], ends=[10], steps=[1])
               return %s
             }",
        );
        // The convolution has another user.
        expect_unchanged(
            super::run,
            "graph t(x: f32[1,2,1,10]) -> (y: f32[1,2,1,9], z: f32[1,2,1,12]) {
               param w: f32[2,2,1,3] = kaiming_uniform
               %c = conv2d(x, w, pad=[0,2,0,2])
               %s = slice(%c, axes=[3], starts=[0], ends=[9], steps=[1])
               %z = relu(%c)
               return %s, %z
             }",
        );
        // A channel slice is not a window of the convolution.
        expect_unchanged(
            super::run,
            "graph t(x: f32[1,2,1,10]) -> (y: f32[1,1,1,10]) {
               param w: f32[2,2,1,3] = kaiming_uniform
               %c = conv2d(x, w, pad=[0,1,0,1])
               %s = slice(%c, axes=[1], starts=[0], ends=[1], steps=[1])
               return %s
             }",
        );
    }
}
