//! 2-D pooling (NCHW): `max_pool2d` and `avg_pool2d` with padding (`global_avg_pool2d` is a
//! mean reduction, see `reduce`).
//!
//! Padded positions never win a max (the accumulator starts at `-inf` and they are skipped;
//! every window holds at least one real element because `pad <= kernel / 2`). The average
//! divides by `kh * kw` with `count_include_pad`, else by the number of in-image taps.
//!
//! Layouts: naive, per output element a scalar accumulator and an `if` per tap. Default:
//! threads over `(n, c)`; per output row a `local` row accumulator `acc: f32[OW]`, a loop over
//! `kh` with one `if` for padded input rows, and per `kw` one vectorized loop over the literal
//! range of `ow` whose input column is inside the image (the same scheme as `conv`).

use crate::conv::{dims4, valid_range};
use crate::sched::{outer, serial, simple_loop, Cx};
use ekb_ir::l0::Pool2dAttrs;
use ekb_ir::l1::build::{f, int, ints, let_, var, Buf, E};
use ekb_ir::l1::{LoopKind, Stmt};
use ekb_ir::{DType, TensorType};

/// The two pooling reductions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Max,
    /// With `count_include_pad`.
    Avg(bool),
}

pub fn max_pool2d(cx: &mut Cx, a: &Pool2dAttrs, x: &Buf, y: &Buf) -> Vec<Stmt> {
    pool(cx, a, Kind::Max, x, y)
}

pub fn avg_pool2d(cx: &mut Cx, a: &Pool2dAttrs, count_include_pad: bool, x: &Buf, y: &Buf) -> Vec<Stmt> {
    pool(cx, a, Kind::Avg(count_include_pad), x, y)
}

fn pool(cx: &mut Cx, a: &Pool2dAttrs, kind: Kind, x: &Buf, y: &Buf) -> Vec<Stmt> {
    let [_, _, h, wd] = dims4(x);
    let [_, _, oh, ow] = dims4(y);
    let [kh, kw] = a.kernel;
    let [sh, sw] = a.stride;
    let (pt, pl) = (a.pad[0] as i64, a.pad[1] as i64);
    let init = if kind == Kind::Max { f(f64::NEG_INFINITY) } else { f(0.0) };
    let combine = |acc: E, v: E| if kind == Kind::Max { acc.max(v) } else { acc + v };
    // In-image taps of the window starting at `start` (may be negative) over `size`.
    let taps = |start: E, k: usize, size: usize| (start.clone() + int(k)).min(int(size)) - start.max(int(0));
    if cx.naive() {
        let nest = serial(cx, y.shape(), "i");
        let [ni, ci, hi, wi] = <[E; 4]>::try_from(nest.idx.clone()).expect("rank 4");
        let acc = Buf::new(cx.fresh("acc"), TensorType::new(DType::F32, [1]));
        let cnt = Buf::new(cx.fresh("cnt"), TensorType::new(DType::I32, [1]));
        let red = serial(cx, &[kh, kw], "r");
        let (ih, iw) = (cx.fresh("ih"), cx.fresh("iw"));
        let tap = vec![
            let_(&ih, hi * int(sh) + red.idx[0].clone() - ints(pt)),
            let_(&iw, wi * int(sw) + red.idx[1].clone() - ints(pl)),
            ekb_ir::l1::build::if_(
                var(&ih).in_range(int(0), int(h)).and(var(&iw).in_range(int(0), int(wd))),
                vec![
                    acc.store(&[int(0)], combine(acc.load(&[int(0)]), x.load(&[ni, ci, var(&ih), var(&iw)]))),
                    cnt.store(&[int(0)], cnt.load(&[int(0)]) + int(1)),
                ],
                vec![],
            ),
        ];
        let value = match kind {
            Kind::Max => acc.load(&[int(0)]),
            Kind::Avg(true) => acc.load(&[int(0)]) / f((kh * kw) as f64),
            Kind::Avg(false) => acc.load(&[int(0)]) / cnt.load(&[int(0)]).cast_f32(),
        };
        let body = [
            vec![acc.alloc(), cnt.alloc(), acc.store(&[int(0)], init), cnt.store(&[int(0)], int(0))],
            red.wrap(tap),
            vec![y.store(&nest.idx, value)],
        ]
        .concat();
        return nest.wrap(body);
    }
    let threads = cx.wants_threads(y.ty.numel() * kh * kw);
    let mut nest = outer(cx, &y.shape()[..2], threads, "i");
    let (ni, ci) = (nest.idx[0].clone(), nest.idx[1].clone());
    let hv = cx.fresh("oh");
    let ohv = nest.push(LoopKind::Serial, &hv, int(0), int(oh));
    let acc = Buf::new(cx.fresh("acc"), TensorType::new(DType::F32, [ow]));
    let (j0, j2, khv, ih) = (cx.fresh("j"), cx.fresh("j"), cx.fresh("kh"), cx.fresh("ih"));
    let lanes = cx.inner_kind(ow);
    let mut per_kw = Vec::new();
    for k in 0..kw {
        let off = k as i64 - pl;
        let (lo, hi) = valid_range(ow, sw, off, wd);
        if lo < hi {
            let j = cx.fresh("j");
            let xv = x.load(&[ni.clone(), ci.clone(), var(&ih), var(&j) * int(sw) + ints(off)]);
            let upd = acc.store(&[var(&j)], combine(acc.load(&[var(&j)]), xv));
            per_kw.push(ekb_ir::l1::build::loop_(cx.inner_kind(hi - lo), &j, int(lo), int(hi), vec![upd]));
        }
    }
    let h0 = ohv.clone() * int(sh) - ints(pt);
    let value = match kind {
        Kind::Max => acc.load(&[var(&j2)]),
        Kind::Avg(true) => acc.load(&[var(&j2)]) / f((kh * kw) as f64),
        Kind::Avg(false) => {
            let count = taps(h0.clone(), kh, h) * taps(var(&j2) * int(sw) - ints(pl), kw, wd);
            acc.load(&[var(&j2)]) / count.cast_f32()
        }
    };
    let body = vec![
        acc.alloc(),
        simple_loop(lanes, &j0, ow, vec![acc.store(&[var(&j0)], init)]),
        simple_loop(
            LoopKind::Serial,
            &khv,
            kh,
            vec![
                let_(&ih, h0 + var(&khv)),
                ekb_ir::l1::build::if_(var(&ih).in_range(int(0), int(h)), per_kw, vec![]),
            ],
        ),
        simple_loop(lanes, &j2, ow, vec![y.store(&[ni, ci, ohv, var(&j2)], value)]),
    ];
    nest.wrap(body)
}
