//! `resize` of NCHW images (PyTorch's `interpolate`, modes `nearest` and `bilinear`).
//!
//! Source positions are computed in exact integer arithmetic, as the spec defines them: nearest
//! reads row `oh * H / OH` (integer division is the floor); bilinear reads rows `m / (2*OH)` and
//! the next one (clamped to the last), weighted by `(m % (2*OH)) / (2*OH)`, where
//! `m = max((2*oh + 1) * H - OH, 0)` is `2*OH` times the half-pixel source `(oh + 0.5) * H / OH -
//! 0.5` clamped at 0 (with `align_corners`: `m = oh * (H - 1)` over `OH - 1`). The shape rule
//! bounds heights and widths so that `m` fits in an i32; every index is then in bounds by interval
//! reasoning. Both schedules use the elementwise layout over the output.

use crate::sched::{elementwise, Cx};
use ekb_ir::l0::ResizeMode;
use ekb_ir::l1::build::{f, int, let_, var, Buf, E};
use ekb_ir::l1::Stmt;

/// `y = resize(x, mode, align_corners)` (the size is `y`'s shape).
pub fn resize(cx: &mut Cx, mode: ResizeMode, align_corners: bool, x: &Buf, y: &Buf) -> Vec<Stmt> {
    let (h, w) = (x.shape()[2], x.shape()[3]);
    let (oh, ow) = (y.shape()[2], y.shape()[3]);
    elementwise(cx, y.shape(), 8, |cx, idx| {
        let (ni, ci) = (idx[0].clone(), idx[1].clone());
        if mode == ResizeMode::Nearest {
            let src = [ni, ci, idx[2].clone() * int(h) / int(oh), idx[3].clone() * int(w) / int(ow)];
            return vec![y.store(idx, x.load(&src))];
        }
        let mut lets = Vec::new();
        let rows = source(cx, &mut lets, idx[2].clone(), h, oh, align_corners);
        let cols = source(cx, &mut lets, idx[3].clone(), w, ow, align_corners);
        let at = |r: &E, c: &E| x.load(&[ni.clone(), ci.clone(), r.clone(), c.clone()]);
        let row = |r: &E| (f(1.0) - cols.2.clone()) * at(r, &cols.0) + cols.2.clone() * at(r, &cols.1);
        let value = (f(1.0) - rows.2.clone()) * row(&rows.0) + rows.2.clone() * row(&rows.1);
        lets.push(y.store(idx, value));
        lets
    })
}

/// The two source indices along one axis (`size` in, `out` out) of output index `dst`, and the
/// weight of the second, bound by `let`s appended to `lets`.
fn source(
    cx: &mut Cx,
    lets: &mut Vec<Stmt>,
    dst: E,
    size: usize,
    out: usize,
    align_corners: bool,
) -> (E, E, E) {
    let (m, den) = if align_corners {
        (dst * int(size - 1), out.saturating_sub(1).max(1))
    } else {
        ((int(2) * dst + int(1)) * int(size) - int(out), 2 * out)
    };
    let (mv, i0, i1, l) = (cx.fresh("m"), cx.fresh("s"), cx.fresh("s"), cx.fresh("l"));
    let m = if align_corners { m } else { m.max(int(0)) };
    lets.push(let_(&mv, m));
    lets.push(let_(&i0, var(&mv) / int(den)));
    lets.push(let_(&i1, (var(&i0) + int(1)).min(int(size - 1))));
    lets.push(let_(&l, (var(&mv) % int(den)).cast_f32() / f(den as f64)));
    (var(&i0), var(&i1), var(&l))
}
