//! The reference interpreter's spatial operators: `group_norm`, `conv_transpose2d` and `resize`
//! (NCHW, PyTorch's semantics).
//!
//! What it keeps true (besides the parent module's rules):
//! - `conv_transpose2d` is computed in its scatter form (every input pixel adds its kernel,
//!   scaled, into the output at `ih*stride - pad + k*dilation`), the definition as the adjoint of
//!   `conv2d`; the lowering computes the equivalent gather form, so the two cross-check;
//! - `resize` finds nearest sources with exact integer arithmetic (`floor(dst * in / out)`) and
//!   bilinear sources from the exact rational `(dst + 0.5) * in / out - 0.5`, clamped at 0
//!   (or `dst * (in - 1) / (out - 1)` with `align_corners`);
//! - `group_norm` uses the biased variance of each group (channels and every later axis).

use super::{fail, want_f32, want_rank, want_shape};
use crate::diag::Diagnostic;
use crate::l0::ast::{ConvTranspose2dAttrs, Node, ResizeMode};
use crate::tensor::Tensor;
use crate::types::{DType, TensorType};

/// `(x - mean) / sqrt(var + eps) * scale[c] + bias[c]`, with the mean and biased variance of
/// each group of `C / groups` channels of one image (over those channels and all later axes).
pub(super) fn group_norm(
    node: &Node,
    groups: usize,
    eps: f64,
    x: &Tensor,
    scale: &Tensor,
    bias: &Tensor,
) -> Result<Tensor, Diagnostic> {
    want_f32(node, x, "the input")?;
    if x.ty.rank() < 2 {
        return Err(fail(
            node,
            format!("the input must have rank >= 2 (channels on axis 1), got `{}`", x.ty),
        ));
    }
    let c = x.ty.shape[1];
    if groups == 0 || !c.is_multiple_of(groups) {
        return Err(fail(node, format!("{c} channels cannot be split into {groups} groups")));
    }
    for (t, what) in [(scale, "the scale"), (bias, "the bias")] {
        want_f32(node, t, what)?;
        want_shape(node, t, &[c], what)?;
    }
    let inner: usize = x.ty.shape[2..].iter().product();
    let per_group = c / groups * inner;
    let mut data = Vec::with_capacity(x.data.len());
    if per_group > 0 {
        for (block, group) in x.data.chunks_exact(per_group).enumerate() {
            let n = per_group as f64;
            let mean = group.iter().sum::<f64>() / n;
            let var = group.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n;
            let inv = 1.0 / (var + eps).sqrt();
            for (j, v) in group.iter().enumerate() {
                let ch = (block % groups) * (c / groups) + j / inner;
                data.push((v - mean) * inv * scale.data[ch] + bias.data[ch]);
            }
        }
    }
    Ok(Tensor { ty: x.ty.clone(), data })
}

/// The transposed convolution, scatter form: `y[n, g*OCg + o, ih*sh - top + kh*dh, iw*sw -
/// left + kw*dw] += x[n, g*Cg + c, ih, iw] * w[g*Cg + c, o, kh, kw]` for every input position
/// and tap landing inside the output, then `+ b[oc]`. The output extent per axis is
/// `(in - 1) * stride - (pad_begin + pad_end) + dilation * (k - 1) + output_padding + 1`.
pub(super) fn conv_transpose2d(
    node: &Node,
    a: &ConvTranspose2dAttrs,
    x: &Tensor,
    w: &Tensor,
    b: Option<&Tensor>,
) -> Result<Tensor, Diagnostic> {
    want_f32(node, x, "the input")?;
    want_f32(node, w, "the weight")?;
    want_rank(node, x, 4, "the input [N,C,H,W]")?;
    want_rank(node, w, 4, "the weight [C,OC/groups,KH,KW]")?;
    let [n, c, h, wd] = [x.ty.shape[0], x.ty.shape[1], x.ty.shape[2], x.ty.shape[3]];
    let [wc, ocg, kh, kw] = [w.ty.shape[0], w.ty.shape[1], w.ty.shape[2], w.ty.shape[3]];
    let groups = a.groups;
    if groups == 0 || wc != c || c % groups != 0 {
        return Err(fail(
            node,
            format!("with groups={groups}, the input `{}` and weight `{}` do not match", x.ty, w.ty),
        )
        .with_expected("weight dim 0 = C, and C divisible by groups"));
    }
    let oc = ocg * groups;
    if let Some(b) = b {
        want_f32(node, b, "the bias")?;
        want_shape(node, b, &[oc], "the bias")?;
    }
    let extent = |i: usize, size: usize, k: usize| -> Option<usize> {
        let full = (size.checked_sub(1)? * a.stride[i])
            + a.dilation[i] * k.checked_sub(1)?
            + a.output_padding[i]
            + 1;
        full.checked_sub(a.pad[i] + a.pad[i + 2]).filter(|&o| o > 0)
    };
    let (Some(oh), Some(ow)) = (extent(0, h, kh), extent(1, wd, kw)) else {
        return Err(fail(node, "the padding leaves no output (or the input or kernel is empty)"));
    };
    let (top, left) = (a.pad[0] as i64, a.pad[1] as i64);
    let cg = c / groups;
    let mut data = vec![0.0; n * oc * oh * ow];
    for nn in 0..n {
        for ch in 0..c {
            let g = ch / cg;
            for o in 0..ocg {
                let y0 = (nn * oc + g * ocg + o) * oh * ow;
                for ih in 0..h {
                    for iw in 0..wd {
                        let v = x.data[((nn * c + ch) * h + ih) * wd + iw];
                        for r in 0..kh {
                            let y = (ih * a.stride[0] + r * a.dilation[0]) as i64 - top;
                            if !(0..oh as i64).contains(&y) {
                                continue;
                            }
                            for s in 0..kw {
                                let xo = (iw * a.stride[1] + s * a.dilation[1]) as i64 - left;
                                if !(0..ow as i64).contains(&xo) {
                                    continue;
                                }
                                let wv = w.data[((ch * ocg + o) * kh + r) * kw + s];
                                data[y0 + y as usize * ow + xo as usize] += v * wv;
                            }
                        }
                    }
                }
            }
        }
    }
    if let Some(b) = b {
        for (plane, out) in data.chunks_exact_mut(oh * ow).enumerate() {
            out.iter_mut().for_each(|v| *v += b.data[plane % oc]);
        }
    }
    Ok(Tensor { ty: TensorType::new(DType::F32, [n, oc, oh, ow]), data })
}

/// The two source rows (or columns) of a bilinear output position and the weight of the second.
fn bilinear_source(dst: usize, from: usize, to: usize, align_corners: bool) -> (usize, usize, f64) {
    let src = if align_corners {
        if to > 1 {
            (dst * (from - 1)) as f64 / (to - 1) as f64
        } else {
            0.0
        }
    } else {
        // (dst + 0.5) * from / to - 0.5 as one exact rational, clamped at 0 (PyTorch).
        (((2 * dst + 1) * from) as f64 - to as f64).max(0.0) / (2 * to) as f64
    };
    let i0 = (src.floor() as usize).min(from - 1);
    let i1 = (i0 + 1).min(from - 1);
    (i0, i1, src - i0 as f64)
}

/// PyTorch's `interpolate` of an NCHW tensor to `size`: `nearest` reads
/// `x[.., floor(oh * H / OH), floor(ow * W / OW)]`; `bilinear` weighs the four neighbours of the
/// source position.
pub(super) fn resize(
    node: &Node,
    size: [usize; 2],
    mode: ResizeMode,
    align_corners: bool,
    x: &Tensor,
) -> Result<Tensor, Diagnostic> {
    want_f32(node, x, "the input")?;
    want_rank(node, x, 4, "the input [N,C,H,W]")?;
    let [n, c, h, wd] = [x.ty.shape[0], x.ty.shape[1], x.ty.shape[2], x.ty.shape[3]];
    let [oh, ow] = size;
    if h == 0 || wd == 0 {
        return Err(fail(node, format!("cannot resize the empty input `{}`", x.ty)));
    }
    if align_corners && mode == ResizeMode::Nearest {
        return Err(fail(node, "`align_corners` applies only to bilinear resizing"));
    }
    let mut data = Vec::with_capacity(n * c * oh * ow);
    for plane in x.data.chunks_exact(h * wd).take(n * c) {
        for y in 0..oh {
            for xo in 0..ow {
                data.push(match mode {
                    ResizeMode::Nearest => plane[(y * h / oh) * wd + xo * wd / ow],
                    ResizeMode::Bilinear => {
                        let (r0, r1, lr) = bilinear_source(y, h, oh, align_corners);
                        let (c0, c1, lc) = bilinear_source(xo, wd, ow, align_corners);
                        let row = |r: usize| (1.0 - lc) * plane[r * wd + c0] + lc * plane[r * wd + c1];
                        (1.0 - lr) * row(r0) + lr * row(r1)
                    }
                });
            }
        }
    }
    Ok(Tensor { ty: TensorType::new(DType::F32, [n, c, oh, ow]), data })
}

#[cfg(test)]
mod tests {
    use crate::l0::testing::{assert_close, assert_exact, eval};

    #[test]
    fn group_norm_normalises_each_group_with_its_own_statistics() {
        // Groups {c0, c1} = [1, 3, 5, 7] (mean 4, variance 5) and {c2, c3} = [2, 2, 2, 6] (mean 3,
        // variance 3); eps = 0; per-channel scale [1, 2, 3, 4] and bias [0, 0, 1, -1].
        let g = "graph g(x: f32[1,4,2], s: f32[4], b: f32[4]) -> (y: f32[1,4,2]) {
  %0 = group_norm(x, s, b, groups=2, eps=0)
  return %0
}
";
        let x = [1.0, 3.0, 5.0, 7.0, 2.0, 2.0, 2.0, 6.0];
        let out = eval(g, &[("x", &x), ("s", &[1.0, 2.0, 3.0, 4.0]), ("b", &[0.0, 0.0, 1.0, -1.0])]);
        let (r5, r3) = (5f64.sqrt(), 3f64.sqrt());
        let want = [
            -3.0 / r5,
            -1.0 / r5,
            2.0 * 1.0 / r5,
            2.0 * 3.0 / r5,
            -3.0 / r3 + 1.0,
            -3.0 / r3 + 1.0,
            -4.0 / r3 - 1.0,
            4.0 * 3.0 / r3 - 1.0,
        ];
        assert_close(&out[0], &[1, 4, 2], &want);
    }

    #[test]
    fn conv_transpose_with_stride_output_padding_and_groups() {
        // Stride 2 = kernel 2: every input pixel writes its own 2x2 block at (2*ih, 2*iw); the
        // output padding adds a last row and column that only get the bias. Group 0 (channel 0)
        // writes output channel 0 only, group 1 output channel 1.
        let g = "graph g(x: f32[1,2,2,2], w: f32[2,1,2,2], b: f32[2]) -> (y: f32[1,2,5,5]) {
  %0 = conv_transpose2d(x, w, b, stride=[2,2], output_padding=[1,1], groups=2)
  return %0
}
";
        let x = [1.0, 2.0, 3.0, 4.0, 1.0, 0.0, 0.0, -1.0];
        let w = [1.0, 10.0, 100.0, 1000.0, 1.0, 2.0, 3.0, 4.0];
        let out = eval(g, &[("x", &x), ("w", &w), ("b", &[0.5, -0.5])]);
        #[rustfmt::skip]
        let planes: [f64; 50] = [
            1.0, 10.0, 2.0, 20.0, 0.0,
            100.0, 1000.0, 200.0, 2000.0, 0.0,
            3.0, 30.0, 4.0, 40.0, 0.0,
            300.0, 3000.0, 400.0, 4000.0, 0.0,
            0.0, 0.0, 0.0, 0.0, 0.0,
            1.0, 2.0, 0.0, 0.0, 0.0,
            3.0, 4.0, 0.0, 0.0, 0.0,
            0.0, 0.0, -1.0, -2.0, 0.0,
            0.0, 0.0, -3.0, -4.0, 0.0,
            0.0, 0.0, 0.0, 0.0, 0.0,
        ];
        let want: Vec<f64> =
            planes.iter().enumerate().map(|(i, v)| v + if i < 25 { 0.5 } else { -0.5 }).collect();
        assert_exact(&out[0], &[1, 2, 5, 5], &want);
    }

    #[test]
    fn conv_transpose_overlapping_taps_padding_and_dilation() {
        // Stride 1: the taps of neighbouring inputs overlap and add; the full row
        // [1, 3, 6, 5, 3] loses one column on each side to the padding.
        let g = "graph g(x: f32[1,1,1,3], w: f32[1,1,1,3]) -> (y: f32[1,1,1,3]) {
  %0 = conv_transpose2d(x, w, pad=[0,1,0,1])
  return %0
}
";
        let out = eval(g, &[("x", &[1.0, 2.0, 3.0]), ("w", &[1.0, 1.0, 1.0])]);
        assert_exact(&out[0], &[1, 1, 1, 3], &[3.0, 6.0, 5.0]);
        // Dilation 2 spreads the two taps of each input two columns apart: x0 lands on columns
        // 0 and 2, x1 on 1 and 3.
        let g = "graph g(x: f32[1,1,1,2], w: f32[1,1,1,2]) -> (y: f32[1,1,1,4]) {
  %0 = conv_transpose2d(x, w, dilation=[1,2])
  return %0
}
";
        let out = eval(g, &[("x", &[1.0, 2.0]), ("w", &[1.0, 10.0])]);
        assert_exact(&out[0], &[1, 1, 1, 4], &[1.0, 2.0, 10.0, 20.0]);
    }

    #[test]
    fn resize_nearest_floors_the_scaled_position() {
        // Rows floor(dst * 2 / 4) = 0, 0, 1, 1; columns floor(dst * 3 / 2) = 0, 1.
        let g =
            "graph g(x: f32[1,1,2,3]) -> (y: f32[1,1,4,2]) {\n  %0 = resize(x, size=[4,2])\n  return %0\n}\n";
        let out = eval(g, &[("x", &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0])]);
        assert_exact(&out[0], &[1, 1, 4, 2], &[1.0, 2.0, 1.0, 2.0, 4.0, 5.0, 4.0, 5.0]);
    }

    #[test]
    fn resize_bilinear_half_pixel_clamps_at_the_borders() {
        // Up: sources max(0, (dst + 0.5) / 2 - 0.5) = 0, 0.25, 0.75, 1.25 (the last clamps to
        // the last column). Down: (dst + 0.5) * 2 - 0.5 = 0.5, 2.5.
        let g = "graph g(x: f32[1,1,1,2], z: f32[1,1,1,4]) -> (y: f32[1,1,1,4], d: f32[1,1,1,2]) {
  %0 = resize(x, size=[1,4], mode=bilinear)
  %1 = resize(z, size=[1,2], mode=bilinear)
  return %0, %1
}
";
        let out = eval(g, &[("x", &[0.0, 10.0]), ("z", &[0.0, 1.0, 2.0, 3.0])]);
        assert_close(&out[0], &[1, 1, 1, 4], &[0.0, 2.5, 7.5, 10.0]);
        assert_close(&out[1], &[1, 1, 1, 2], &[0.5, 2.5]);
    }

    #[test]
    fn resize_bilinear_align_corners_keeps_the_corners() {
        // dst * (in - 1) / (out - 1) in both dims: the centre of [[0, 1], [2, 3]] is 1.5; an
        // output of one element reads the first.
        let g = "graph g(x: f32[1,1,2,2]) -> (y: f32[1,1,3,3], o: f32[1,1,1,1]) {
  %0 = resize(x, size=[3,3], mode=bilinear, align_corners=true)
  %1 = resize(x, size=[1,1], mode=bilinear, align_corners=true)
  return %0, %1
}
";
        let out = eval(g, &[("x", &[0.0, 1.0, 2.0, 3.0])]);
        assert_close(&out[0], &[1, 1, 3, 3], &[0.0, 0.5, 1.0, 1.0, 1.5, 2.0, 2.0, 2.5, 3.0]);
        assert_close(&out[1], &[1, 1, 1, 1], &[0.0]);
        // Without aligned corners, a single output element is the centre (PyTorch).
        let g = "graph g(x: f32[1,1,2,2]) -> (o: f32[1,1,1,1]) {\n  %0 = resize(x, size=[1,1], mode=bilinear)\n  return %0\n}\n";
        assert_close(&eval(g, &[("x", &[0.0, 1.0, 2.0, 3.0])])[0], &[1, 1, 1, 1], &[1.5]);
    }
}
