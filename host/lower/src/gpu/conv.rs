//! `conv2d` on a GPU as an implicit matrix product, through the matmul lowering's tiles: per
//! image, `y[oc, p] = sum_k w[oc, k] * patch[k, p]` with `k = (c, kh, kw)` and `p = (oh, ow)`.
//! No patch matrix is stored: the tiles of `patch` are loaded straight from `x`, a padded
//! position as zero (a `select` over an index clamped into the image, since both arms of a
//! select are evaluated). Ungrouped convolutions only; grouped and depthwise ones keep one
//! thread per output element, which reads each weight once per output anyway.
//!
//! `conv_transpose2d` whose kernel equals its stride (no padding, dilation or groups) is one
//! too: every output takes exactly one tap, so per image `y[(oc, kh, kw), (ih, iw)] = sum_c
//! w[c, (oc, kh, kw)] * x[c, (ih, iw)]`, each result stored at `(ih * s + kh, iw * s + kw)`.
//!
//! Each output is summed in increasing `k` (channel, then kernel row, then column), the CPU's
//! direct order, so results agree with the CPU's up to its vectorised reassociation.

use super::matmul::{product, Product};
use super::{unflatten, Gpu};
use crate::conv::dims4;
use ekb_ir::l0::{Conv2dAttrs, ConvTranspose2dAttrs};
use ekb_ir::l1::build::{int, ints, select, zero, Buf, Names, E};
use ekb_ir::l1::Stmt;

/// `y = conv2d(x, w[, bias])` when ungrouped; `None` otherwise (or where the product has no
/// tiled form).
pub fn conv2d(
    gpu: &Gpu,
    names: Names,
    a: &Conv2dAttrs,
    x: &Buf,
    w: &Buf,
    bias: Option<&Buf>,
    y: &Buf,
) -> Option<Vec<Stmt>> {
    if a.groups != 1 || x.ty.dtype != w.ty.dtype {
        return None;
    }
    let [n, c, h, wd] = dims4(x);
    let [oc, _, kh, kw] = dims4(w);
    let [_, _, oh, ow] = dims4(y);
    let taps = [c, kh, kw];
    let a_at = |_: &[E], r: E, k: E| {
        let t = unflatten(&k, &taps);
        w.load(&[r, t[0].clone(), t[1].clone(), t[2].clone()])
    };
    let b_at = |bi: &[E], k: E, p: E| {
        let t = unflatten(&k, &taps);
        let o = unflatten(&p, &[oh, ow]);
        let iy = o[0].clone() * int(a.stride[0]) + t[1].clone() * int(a.dilation[0]) - ints(a.pad[0] as i64);
        let ix = o[1].clone() * int(a.stride[1]) + t[2].clone() * int(a.dilation[1]) - ints(a.pad[1] as i64);
        let inside = iy.clone().in_range(int(0), int(h)).and(ix.clone().in_range(int(0), int(wd)));
        let v = x.load(&[bi[0].clone(), t[0].clone(), iy.clamp_index(h), ix.clamp_index(wd)]);
        select(inside, v, zero(x.ty.dtype))
    };
    let store = |bi: &[E], r: E, p: E, v: E| {
        let o = unflatten(&p, &[oh, ow]);
        let value = match bias {
            Some(b) => v + b.load1(r.clone()),
            None => v,
        };
        y.store(&[bi[0].clone(), r, o[0].clone(), o[1].clone()], value)
    };
    let batch_shape = [n];
    let p = Product {
        m: oc,
        n: oh * ow,
        k: c * kh * kw,
        batch: n,
        a_at: &a_at,
        b_at: &b_at,
        // `w`'s rows are contiguous along `k`; the patches run along a row of `x` (contiguous
        // where the stride is 1).
        a_along_k: true,
        b_along_k: false,
        store: &store,
        batch_shape: &batch_shape,
        operands: x.ty.dtype,
        result: y.ty.dtype,
        few_rows: false,
    };
    product(gpu, names, &p)
}

/// Whether a transposed convolution gives every output exactly one tap: its kernel equals its
/// stride, without padding, output padding, dilation or groups.
pub fn one_tap(a: &ConvTranspose2dAttrs, x: &Buf, w: &Buf) -> bool {
    let [_, _, kh, kw] = dims4(w);
    let plain = a.groups == 1 && a.dilation == [1, 1] && a.pad == [0; 4] && a.output_padding == [0, 0];
    plain && [kh, kw] == a.stride && x.ty.dtype == w.ty.dtype
}

/// `y = conv_transpose2d(x, w[, bias])` where [`one_tap`] holds; `None` where the product has
/// no tiled form.
pub fn conv_transpose2d(
    gpu: &Gpu,
    names: Names,
    a: &ConvTranspose2dAttrs,
    x: &Buf,
    w: &Buf,
    bias: Option<&Buf>,
    y: &Buf,
) -> Option<Vec<Stmt>> {
    let [n, c, h, wd] = dims4(x);
    let [_, ocg, kh, kw] = dims4(w);
    debug_assert!(one_tap(a, x, w));
    let taps = [ocg, kh, kw];
    let a_at = |_: &[E], r: E, k: E| {
        let t = unflatten(&r, &taps);
        w.load(&[k, t[0].clone(), t[1].clone(), t[2].clone()])
    };
    let b_at = |bi: &[E], k: E, p: E| {
        let i = unflatten(&p, &[h, wd]);
        x.load(&[bi[0].clone(), k, i[0].clone(), i[1].clone()])
    };
    let store = |bi: &[E], r: E, p: E, v: E| {
        let (t, i) = (unflatten(&r, &taps), unflatten(&p, &[h, wd]));
        let value = match bias {
            Some(b) => v + b.load1(t[0].clone()),
            None => v,
        };
        let (oy, ox) = (i[0].clone() * int(kh) + t[1].clone(), i[1].clone() * int(kw) + t[2].clone());
        y.store(&[bi[0].clone(), t[0].clone(), oy, ox], value)
    };
    let batch_shape = [n];
    let p = Product {
        m: ocg * kh * kw,
        n: h * wd,
        k: c,
        batch: n,
        a_at: &a_at,
        b_at: &b_at,
        // `w[c, ..]` and `x[.., c, ..]`: both run along their rows and columns, not `k`.
        a_along_k: false,
        b_along_k: false,
        store: &store,
        batch_shape: &batch_shape,
        operands: x.ty.dtype,
        result: y.ty.dtype,
        few_rows: false,
    };
    product(gpu, names, &p)
}
#[cfg(test)]
mod tests {
    use crate::testing::gpu_lowered_matches_reference;
    use crate::Schedule;
    use ekb_ir::l1::{Scope, Stmt};

    #[test]
    fn ungrouped_convolutions_are_tiled_products_and_match_the_reference() {
        // Stride, dilation and uneven padding with a bias and a fused relu; a 1x1 of two images;
        // integer operands; then a grouped one, which keeps one thread per output.
        let g = "graph g(x: f32[1,5,13,11], u: f32[2,20,6,7], q: i8[1,3,9,9], v: f32[1,4,8,8]) \
                 -> (y: f32[1,17,5,4], z: f32[2,9,6,7], n: i32[1,6,7,7], d: f32[1,4,8,8]) {
  param w: f32[17,5,3,3] = kaiming_uniform
  param b: f32[17] = uniform(-1, 1)
  param w1: f32[9,20,1,1] = kaiming_uniform
  param wq: i8[6,3,3,3] = randint(-9, 9)
  param wg: f32[4,2,3,3] = kaiming_uniform
  %0 = conv2d(x, w, b, stride=[2,3], pad=[1,2,0,1], dilation=[2,1])
  %y = relu(%0)
  %z = conv2d(u, w1)
  %n = conv2d(q, wq, pad=[0,0,0,0], dilation=[1,1])
  %d = conv2d(v, wg, pad=[1,1,1,1], groups=2)
  fuse %0, %y
  return %y, %z, %n, %d
}
";
        let m = gpu_lowered_matches_reference(g, Schedule::Default, "h200");
        let tiled: Vec<bool> = m
            .kernels
            .iter()
            .map(|k| match k.body.first() {
                Some(Stmt::Launch { body, .. }) => {
                    body.iter().any(|s| matches!(s, Stmt::Alloc { scope: Scope::Shared, .. }))
                }
                _ => panic!("{}: one launch", k.name),
            })
            .collect();
        assert_eq!(tiled, [true, true, true, false], "{}", ekb_ir::l1::print::print(&m));
    }

    #[test]
    fn transposed_convolutions_whose_kernel_is_the_stride_are_tiled_products() {
        // Kernel equal to the stride (two images, a bias, a fused relu); then one with padding,
        // which keeps one thread per output element.
        let g = "graph g(x: f32[2,6,5,7], v: f32[1,6,5,7]) -> (y: f32[2,3,10,21], z: f32[1,3,9,14]) {
  param w: f32[6,3,2,3] = kaiming_uniform
  param b: f32[3] = uniform(-1, 1)
  %0 = conv_transpose2d(x, w, b, stride=[2,3])
  %y = relu(%0)
  %z = conv_transpose2d(v, w, stride=[2,2], pad=[1,0,0,1])
  fuse %0, %y
  return %y, %z
}
";
        let m = gpu_lowered_matches_reference(g, Schedule::Default, "h200");
        let shared = |k: &ekb_ir::l1::Kernel| match k.body.first() {
            Some(Stmt::Launch { body, .. }) => {
                body.iter().any(|s| matches!(s, Stmt::Alloc { scope: Scope::Shared, .. }))
            }
            _ => panic!("{}: one launch", k.name),
        };
        assert_eq!(m.kernels.iter().map(shared).collect::<Vec<_>>(), [true, false]);
    }
}
