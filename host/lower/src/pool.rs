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
//! range of `ow` whose input column is inside the image (the same scheme as `conv`). Windows
//! that tile the input (kernel = stride, no padding, at most [`DIRECT_MAX_TAPS`] taps) skip the
//! accumulator: per output row, vectorized loops over pieces of `ow` that each hold whole
//! vectors combine all the taps of each output element.

use crate::conv::{dims4, valid_range};
use crate::sched::{outer, serial, simple_loop, Cx};
use ekb_ir::l0::Pool2dAttrs;
use ekb_ir::l1::build::{f, int, ints, let_, var, Buf, E};
use ekb_ir::l1::{LoopKind, Stmt};
use ekb_ir::{DType, TensorType};

/// Windows that tile the input with at most this many taps are combined straight from the
/// input (no accumulator row).
const DIRECT_MAX_TAPS: usize = 9;

/// `0..n` as ranges that each hold whole vectors of `lanes`, then of each halved width the
/// rest still holds, and a last element alone: 28 on 16 lanes is 0..16, 16..24, 24..28.
fn vector_pieces(n: usize, lanes: usize) -> Vec<(usize, usize)> {
    let mut at = n / lanes.max(1) * lanes.max(1);
    let mut pieces = if at > 0 { vec![(0, at)] } else { Vec::new() };
    let mut width = lanes / 2;
    while at < n && width > 0 {
        if n - at >= width {
            pieces.push((at, at + width));
            at += width;
        }
        width /= 2;
    }
    if at < n {
        pieces.push((at, n));
    }
    pieces
}

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
    let lanes = cx.inner_kind(ow);
    if a.pad.iter().all(|&p| p == 0) && [kh, kw] == [sh, sw] && kh * kw <= DIRECT_MAX_TAPS {
        // Windows that tile the input without padding (2x2 stride 2): every output element
        // combines its taps straight from the input, no accumulator row. The row is cut into
        // pieces that each run whole vectors (28 on 16 lanes: 16, 8 and 4), since the
        // vectoriser would run the rest of one loop as scalar code.
        let mut body = Vec::new();
        for (from, to) in vector_pieces(ow, cx.lanes()) {
            let j = cx.fresh("j");
            let tap = |r: usize, c: usize| {
                x.load(&[ni.clone(), ci.clone(), ohv.clone() * int(sh) + int(r), var(&j) * int(sw) + int(c)])
            };
            let taps = (0..kh).flat_map(|r| (0..kw).map(move |c| (r, c)));
            let sum = taps.map(|(r, c)| tap(r, c)).reduce(combine).expect("a window has a tap");
            let value = if kind == Kind::Max { sum } else { sum / f((kh * kw) as f64) };
            let store = y.store(&[ni.clone(), ci.clone(), ohv.clone(), var(&j)], value);
            body.push(ekb_ir::l1::build::loop_(
                cx.inner_kind(to - from),
                &j,
                int(from),
                int(to),
                vec![store],
            ));
        }
        return nest.wrap(body);
    }
    let acc = Buf::new(cx.fresh("acc"), TensorType::new(DType::F32, [ow]));
    let (j0, j2, khv, ih) = (cx.fresh("j"), cx.fresh("j"), cx.fresh("kh"), cx.fresh("ih"));
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
