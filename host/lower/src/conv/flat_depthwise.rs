//! Depthwise f32 convolutions (one input channel per group, any number of output channels per
//! group) whose output rows are narrower than `conv.flat_max_ow` (a vector by default), over
//! the flattened zero-padded planes of [`super::flat_planes`]: each tap of an output channel
//! is one shift of the same vector of pixels of its input plane, so a 7-wide row no longer
//! leaves most lanes of every product idle (EfficientNet's and MobileNet's late 5x5 and 3x3
//! depthwise convolutions over 7x7 and 14x14 planes).
//!
//! Layout: threads over `(n, input channel)`. Each iteration zeroes a `local` panel of the
//! channel's phase planes, copies the plane in (the padding stays zero), then for each of its
//! group's output channels computes the flattened results `res[Q]` in tiles of up to
//! `matmul.tile_cols` columns (whole vectors; the accumulators in registers across the taps,
//! each weight loaded once per tile) and stores them (+ bias; the `Wp - OW` columns past each
//! row's end are computed and dropped).
//!
//! What must stay true: each output sums its taps in row-major order, as the direct layout
//! does; every index is affine and provably in bounds (the panel holds the largest tap offset
//! past the last column).

use super::dims4;
use super::flat_planes::{copy_planes, f32_phases, zero_panel, Flat};
use crate::recipe::Knob;
use crate::sched::{outer, simple_loop, tiles, Cx};
use ekb_ir::l0::Conv2dAttrs;
use ekb_ir::l1::build::{f, int, let_, var, Buf, E};
use ekb_ir::l1::{LoopKind, Stmt};
use ekb_ir::{DType, TensorType};

/// Whether `y = conv2d(x, w)` takes this layout: grouped with one input channel per group,
/// f32, at most four phase planes, rows narrower than `conv.flat_max_ow`, and a panel and its
/// results within a quarter of the stack.
pub(super) fn applies(cx: &Cx, a: &Conv2dAttrs, x: &Buf, w: &Buf, y: &Buf) -> bool {
    if a.groups == 1 || dims4(w)[1] != 1 || !f32_phases(a, x, w, y) {
        return false;
    }
    if dims4(y)[3] >= cx.knob(Knob::ConvFlatMaxOw) {
        return false;
    }
    let g = Flat::planes(cx, a, x, w, y);
    (g.sh * g.sw * g.pw + g.q) * 4 <= (cx.target.cpu.stack_bytes / 4) as usize
}

/// `y = conv2d(x, w, bias)` where [`applies`] holds.
pub(super) fn conv2d(
    cx: &mut Cx,
    a: &Conv2dAttrs,
    x: &Buf,
    w: &Buf,
    bias: Option<&Buf>,
    y: &Buf,
) -> Vec<Stmt> {
    let g = Flat::planes(cx, a, x, w, y);
    let n = dims4(x)[0];
    let ocg = g.oc / a.groups;
    let threads = cx.wants_threads(2 * n * g.oc * g.oh * g.ow * g.kh * g.kw);
    let nest = outer(cx, &[n, a.groups], threads, "i");
    let (ni, gi) = (nest.idx[0].clone(), nest.idx[1].clone());
    let panel = Buf::new(cx.fresh("panel"), TensorType::new(DType::F32, [1, g.sh * g.sw, g.pw]));
    let res = Buf::new(cx.fresh("res"), TensorType::new(DType::F32, [g.q]));
    let (r, m) = (cx.fresh("r"), cx.fresh("m"));
    let mut per_output = vec![let_(&m, gi.clone() * int(ocg) + var(&r))];
    per_output.extend(tiles(cx, g.q, g.nt, LoopKind::Serial, "u", |cx, j0, nt| {
        column_tile(cx, &g, (w, &panel, &res), &var(&m), (j0, nt))
    }));
    // The output plane (+ bias), [`Flat::store_plane`].
    per_output.push(g.store_plane(cx, |oy, ox, q| {
        let mut value = res.load(&[q]);
        if let Some(b) = bias {
            value = value + b.load(&[var(&m)]);
        }
        y.store(&[ni.clone(), var(&m), oy, ox], value)
    }));
    let body = vec![
        panel.alloc(),
        zero_panel(cx, &g, &panel),
        copy_planes(cx, &g, x, &panel, (&ni, &gi)),
        res.alloc(),
        simple_loop(LoopKind::Serial, &r, ocg, per_output),
    ];
    nest.wrap(body)
}

/// Columns `j0..j0+nt` of output channel `m`: every tap added into vector accumulators, then
/// stored into `res`.
fn column_tile(
    cx: &mut Cx,
    g: &Flat,
    (w, panel, res): (&Buf, &Buf, &Buf),
    m: &E,
    (j0, nt): (E, usize),
) -> Vec<Stmt> {
    let acc = Buf::new(cx.fresh("acc"), TensorType::new(DType::F32, [nt]));
    let (ja, jb, jc) = (cx.fresh("j"), cx.fresh("j"), cx.fresh("j"));
    let (kh, kw, av) = (cx.fresh("kh"), cx.fresh("kw"), cx.fresh("a"));
    let lanes = cx.inner_kind(nt);
    // Tap `(kh, kw)` reads phase `(kh*dh % sh, kw*dw % sw)`, shifted by `(kh*dh / sh, kw*dw /
    // sw)` (stride 1: phase 0, the taps' own offsets).
    let (ty, tx) = (var(&kh) * int(g.dh), var(&kw) * int(g.dw));
    let phase = ty.clone() % int(g.sh) * int(g.sw) + tx.clone() % int(g.sw);
    let shift = ty / int(g.sh) * int(g.wp) + tx / int(g.sw);
    let x_at = [int(0), phase, j0.clone() + var(&jb) + shift];
    let update = acc.store(&[var(&jb)], acc.load(&[var(&jb)]) + var(&av) * panel.load(&x_at));
    let taps = simple_loop(
        LoopKind::Serial,
        &kh,
        g.kh,
        vec![simple_loop(
            LoopKind::Serial,
            &kw,
            g.kw,
            vec![
                let_(&av, w.load(&[m.clone(), int(0), var(&kh), var(&kw)])),
                simple_loop(lanes, &jb, nt, vec![update]),
            ],
        )],
    );
    vec![
        acc.alloc(),
        simple_loop(lanes, &ja, nt, vec![acc.store(&[var(&ja)], f(0.0))]),
        taps,
        simple_loop(lanes, &jc, nt, vec![res.store(&[j0 + var(&jc)], acc.load(&[var(&jc)]))]),
    ]
}

#[cfg(test)]
mod tests {
    use crate::testing::knobs_match_reference;
    use ekb_ir::l1::print::print;

    #[test]
    fn depthwise_convolutions_over_flattened_planes_match_the_reference() {
        // Rows narrower than 16 columns (rk3588's vector is 4): two images, 5x5 with padding,
        // a bias and a fused relu; 3x3 of stride 2 (four phase planes) with uneven padding; a
        // depth multiplier of 2 with dilation; then a grouped convolution of three input
        // channels per group (the other flattened form) and a depthwise one of 20-wide rows,
        // which keeps the other layouts; last, rows of one column, narrower than half a vector,
        // stored as one loop over the plane's pixels (the others row by row).
        let g = "graph g(x: f32[2,6,7,7], u: f32[1,4,14,13], v: f32[1,4,9,20], c: f32[1,4,6,1]) \
                 -> (y: f32[2,6,7,7], s: f32[1,4,7,6], d: f32[1,8,12,11], e: f32[2,6,7,7], t: f32[1,4,9,20], \
                 o: f32[1,4,6,1]) {
  param w: f32[6,1,5,5] = kaiming_uniform
  param b: f32[6] = uniform(-1, 1)
  param w2: f32[4,1,3,3] = kaiming_uniform
  param w3: f32[8,1,3,3] = kaiming_uniform
  param w4: f32[6,3,3,3] = kaiming_uniform
  %0 = conv2d(x, w, b, pad=[2,2,2,2], groups=6)
  %y = relu(%0)
  %s = conv2d(u, w2, stride=[2,2], pad=[1,0,1,1], groups=4)
  %d = conv2d(u, w3, pad=[1,1,1,1], dilation=[2,2], groups=4)
  %e = conv2d(x, w4, pad=[1,1,1,1], groups=2)
  %t = conv2d(v, w2, pad=[1,1,1,1], groups=4)
  %o = conv2d(c, w2, pad=[1,1,1,1], groups=4)
  fuse %0, %y
  return %y, %s, %d, %e, %t, %o
}
";
        for tile_cols in [4, 8, 64] {
            let set = [("conv.flat_max_ow", 16), ("matmul.tile_cols", tile_cols), ("threads.min_work", 1)];
            let m = knobs_match_reference(g, &set, "rk3588");
            let has = |what: &str| -> Vec<bool> {
                m.kernels.iter().map(|k| format!("{:?}", k.body).contains(what)).collect()
            };
            // `e` takes the grouped form of the ungrouped planes (`flat_planes`).
            assert_eq!(has("name: \"panel\""), [true, true, true, true, false, true], "{}", print(&m));
            assert_eq!(has("var: \"oy\""), [true, true, true, true, false, false], "{}", print(&m));
        }
        // Off when the knob says so.
        let m = knobs_match_reference(g, &[("conv.flat_max_ow", 0)], "rk3588");
        assert!(!print(&m).contains("alloc panel"), "{}", print(&m));
    }
}
