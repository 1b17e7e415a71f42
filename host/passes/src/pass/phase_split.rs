//! A strided transposed convolution becomes one ordinary convolution per stride phase.
//!
//! Output row `oy = s*q + r` of a `conv_transpose2d` with stride `s`, a kernel of `K = A*s`
//! rows and top padding `t` takes kernel rows `ky = s*a + v` on input rows `q + u - a`, where
//! `r + t = s*u + v`: for each phase `r` a stride-1 correlation over the input with the `A`
//! taps `b = A-1-a` (the kernel rows of that phase, reversed), padded by `A-1-u` rows on top.
//! Likewise for columns. So with `sh*sw` phases
//!
//! ```text
//! %wr = reshape(w, [C, OC, Ah, sh, Aw, sw])             w: [C, OC, KH, KW]
//! %wt = transpose(%wr, [3, 5, 1, 0, 2, 4])               [sh, sw, OC, C, Ah, Aw]
//! %wf = gather(gather(%wt, A-1-i, axis=4), ..., axis=5)  the taps reversed
//! %k  = reshape(slice(%wf, [vy, vx]), [OC, C, Ah, Aw])   phase (ry, rx)'s kernel
//! %p  = conv2d(x, %k[, b], pad=[...])                    [N, OC, OH/sh, OW/sw]
//! ... the phases interleaved: reshaped to [N, OC, OH/sh, 1, OW/sw, 1], concatenated along
//! the two unit axes, reshaped to [N, OC, OH, OW]
//! ```
//!
//! The kernels are computed from parameters alone, so the lowering runs them once, as prepare
//! steps; each phase is a convolution of `A x A` taps that takes the convolution lowerings
//! (weights packed by blocks of output channels over few pixels, flattened planes), where the
//! transposed convolution's own lowerings shift the input over the output grid and compute
//! columns that are never stored. The rewrite applies where the kernel's rows and columns are
//! whole multiples of the stride and the output's height and width of it (every phase has
//! `A` taps and as many outputs), with at least two phases, dilation 1 and one group; f32.
//!
//! What it keeps true: every output is the sum of the same products over the same input
//! channels and taps (in another order), plus the same bias.

use crate::index::Index;
use crate::rewrite::Rewrite;
use ekb_ir::l0::{BinaryOp, Conv2dAttrs, Graph, Op};
use ekb_ir::{DType, Diagnostic, TensorType};

/// One axis of the split: the taps per phase, and per phase `r` the convolution's padding
/// before and after and which kernel row `v` of each stride group it takes.
struct Axis {
    taps: usize,
    phases: Vec<(usize, usize, usize)>,
}

impl Axis {
    /// The split of an axis of `size` inputs and `out` outputs, or `None` where the phases
    /// would not all have `taps` taps and `out / stride` outputs with padding of at least 0.
    fn new(size: usize, out: usize, stride: usize, kernel: usize, top: usize) -> Option<Axis> {
        if !kernel.is_multiple_of(stride) || !out.is_multiple_of(stride) {
            return None;
        }
        let (taps, per_phase) = (kernel / stride, out / stride);
        let phases = (0..stride)
            .map(|r| {
                let (u, v) = ((r + top) / stride, (r + top) % stride);
                let before = (taps - 1).checked_sub(u)?;
                let after = (per_phase + taps - 1).checked_sub(size + before)?;
                Some((before, after, v))
            })
            .collect::<Option<Vec<_>>>()?;
        Some(Axis { taps, phases })
    }
}

pub fn run(g: &Graph) -> Result<Option<Graph>, Diagnostic> {
    let ix = Index::new(g);
    let mut rw = Rewrite::new(g);
    for (i, n) in g.nodes.iter().enumerate() {
        let Op::ConvTranspose2d(a) = &n.op else { continue };
        let (Some(xt), Some(wt), Some(yt)) =
            (g.type_of(&n.args[0].name), g.type_of(&n.args[1].name), g.type_of(&n.name))
        else {
            continue;
        };
        let (&[batch, c, h, w], &[_, oc, kh, kw], &[_, _, oh, ow]) =
            (xt.shape.as_slice(), wt.shape.as_slice(), yt.shape.as_slice())
        else {
            continue;
        };
        let [sh, sw] = a.stride;
        let plain = a.dilation == [1, 1] && a.groups == 1 && sh * sw >= 2 && ix.param_only(&n.args[1].name);
        if !plain || xt.dtype != DType::F32 || wt.dtype != DType::F32 {
            continue;
        }
        let (Some(rows), Some(cols)) =
            (Axis::new(h, oh, sh, kh, a.pad[0]), Axis::new(w, ow, sw, kw, a.pad[1]))
        else {
            continue;
        };
        let dims = |d: &[usize]| d.iter().map(|&v| v as i64).collect::<Vec<i64>>();
        let reshape = |d: &[usize]| Op::Reshape { shape: dims(d) };
        let span = n.span;
        let (x, wname) = (n.args[0].name.as_str(), n.args[1].name.as_str());

        // The kernels of every phase: [sh, sw, OC, C, Ah, Aw], the taps reversed.
        let wr = rw.insert_before(
            i,
            "phase_weight",
            reshape(&[c, oc, rows.taps, sh, cols.taps, sw]),
            &[wname],
            span,
        )?;
        let mut wf = rw.insert_before(
            i,
            "phase_weight",
            Op::Transpose { perm: vec![3, 5, 1, 0, 2, 4] },
            &[&wr],
            span,
        )?;
        for (axis, taps) in [(4usize, rows.taps), (5, cols.taps)] {
            if taps < 2 {
                continue;
            }
            let reversed = reversed_indices(&mut rw, i, taps, span)?;
            wf = rw.insert_before(
                i,
                "phase_weight",
                Op::Gather { axis: axis as i64 },
                &[&wf, &reversed],
                span,
            )?;
        }

        let mut row_parts = Vec::new();
        for &(top, bottom, vy) in &rows.phases {
            let mut col_parts = Vec::new();
            for &(left, right, vx) in &cols.phases {
                let slice = Op::Slice {
                    axes: vec![0, 1],
                    starts: vec![vy as i64, vx as i64],
                    ends: vec![vy as i64 + 1, vx as i64 + 1],
                    steps: vec![1, 1],
                };
                let k = rw.insert_before(i, "phase_weight", slice, &[&wf], span)?;
                let k = rw.insert_before(
                    i,
                    "phase_weight",
                    reshape(&[oc, c, rows.taps, cols.taps]),
                    &[&k],
                    span,
                )?;
                let conv = Op::Conv2d(Conv2dAttrs {
                    stride: [1, 1],
                    pad: [top, left, bottom, right],
                    dilation: [1, 1],
                    groups: 1,
                });
                let mut args = vec![x, k.as_str()];
                if let Some(b) = n.args.get(2) {
                    args.push(&b.name);
                }
                let p = rw.insert_before(i, "phase", conv, &args, span)?;
                let unit = reshape(&[batch, oc, oh / sh, 1, ow / sw, 1]);
                col_parts.push(rw.insert_before(i, "phase", unit, &[&p], span)?);
            }
            row_parts.push(concat(&mut rw, i, col_parts, 5, span)?);
        }
        let all = concat(&mut rw, i, row_parts, 3, span)?;
        rw.set(i, reshape(&[batch, oc, oh, ow]), &[&all])?;
    }
    rw.finish()
}

/// `[taps-1, ..., 1, 0]` as i32 indices, from parameters alone (computed once).
fn reversed_indices(
    rw: &mut Rewrite,
    at: usize,
    taps: usize,
    span: ekb_ir::Span,
) -> Result<String, Diagnostic> {
    let ty = TensorType { dtype: DType::I32, shape: vec![taps] };
    let last =
        rw.insert_before(at, "phase_taps", Op::Full { ty: ty.clone(), value: (taps - 1) as f64 }, &[], span)?;
    let iota = rw.insert_before(at, "phase_taps", Op::Iota { ty, axis: 0 }, &[], span)?;
    rw.insert_before(at, "phase_taps", Op::Binary(BinaryOp::Sub), &[&last, &iota], span)
}

/// The parts concatenated along `axis`, or the one part itself.
fn concat(
    rw: &mut Rewrite,
    at: usize,
    parts: Vec<String>,
    axis: i64,
    span: ekb_ir::Span,
) -> Result<String, Diagnostic> {
    if parts.len() == 1 {
        return Ok(parts.into_iter().next().expect("one part"));
    }
    let args: Vec<&str> = parts.iter().map(String::as_str).collect();
    rw.insert_before(at, "phases", Op::Concat { axis }, &args, span)
}

#[cfg(test)]
mod tests {
    use crate::testing::{expect_unchanged, rewrite};

    #[test]
    fn a_dcgan_layer_becomes_four_convolutions_of_two_by_two_taps() {
        let out = rewrite(
            super::run,
            "graph t(x: f32[1,3,4,5]) -> (y: f32[1,2,8,10]) {
               param w: f32[3,2,4,4] = normal(0.0, 0.5)
               param b: f32[2] = uniform(-0.5, 0.5)
               %c = conv_transpose2d(x, w, b, stride=[2,2], pad=[1,1,1,1])
               return %c
             }",
        );
        assert_eq!(out.matches("conv2d(x, ").count(), 4, "{out}");
        for pad in ["pad=[1,1,0,0]", "pad=[1,0,0,1]", "pad=[0,1,1,0]", "pad=[0,0,1,1]"] {
            assert!(out.contains(pad), "{pad}: {out}");
        }
        assert!(out.contains("%c: f32[1,2,8,10] = reshape(%phases_3, shape=[1,2,8,10])"), "{out}");
    }

    #[test]
    fn strides_paddings_and_output_padding_of_other_shapes_compute_the_same() {
        for (x, w, y, attrs) in [
            // Non-overlapping windows (a U-Net up-convolution): one tap a phase, no reversal.
            ("f32[1,4,3,3]", "f32[4,2,2,2]", "f32[1,2,6,6]", "stride=[2,2]"),
            // A 4x4 stride-4 layer, sixteen phases.
            ("f32[2,2,2,3]", "f32[2,3,4,4]", "f32[2,3,8,12]", "stride=[4,4]"),
            // Stride along one axis, three taps a phase, asymmetric padding and output padding.
            (
                "f32[1,2,5,4]",
                "f32[2,2,6,3]",
                "f32[1,2,10,5]",
                "stride=[2,1], pad=[2,1,2,0], output_padding=[0,0]",
            ),
            (
                "f32[1,2,3,3]",
                "f32[2,2,4,4]",
                "f32[1,2,6,6]",
                "stride=[2,2], pad=[2,2,1,1], output_padding=[1,1]",
            ),
        ] {
            rewrite(
                super::run,
                &format!(
                    "graph t(x: {x}) -> (y: {y}) {{
                   param w: {w} = normal(0.0, 0.5)
                   %c = conv_transpose2d(x, w, {attrs})
                   return %c
                 }}"
                ),
            );
        }
    }

    #[test]
    fn kernels_not_a_multiple_of_the_stride_groups_and_computed_weights_are_unchanged() {
        for (x, w, y, attrs, weight) in [
            (
                "f32[1,2,3,3]",
                "f32[2,2,3,3]",
                "f32[1,2,6,6]",
                "stride=[2,2], pad=[1,1,1,1], output_padding=[1,1]",
                "w",
            ),
            ("f32[1,4,3,3]", "f32[4,1,4,4]", "f32[1,4,6,6]", "stride=[2,2], pad=[1,1,1,1], groups=4", "w"),
            ("f32[1,2,3,3]", "f32[2,2,4,4]", "f32[1,2,6,6]", "stride=[2,2], pad=[1,1,1,1]", "x2"),
        ] {
            let x2 = if weight == "x2" { "\n  %x2 = relu(w2)" } else { "" };
            let w2 = if weight == "x2" { format!(", w2: {w}") } else { String::new() };
            let arg = if weight == "x2" { "%x2" } else { "w" };
            expect_unchanged(
                super::run,
                &format!(
                    "graph t(x: {x}{w2}) -> (y: {y}) {{
                       param w: {w} = normal(0.0, 0.5){x2}
                       %c = conv_transpose2d(x, {arg}, {attrs})
                       return %c
                     }}"
                ),
            );
        }
    }
}
