//! 2-D convolution (NCHW, grouped, strided, dilated, padded, optional bias).
//!
//! Layouts:
//! - naive: per output element, a `local` scalar accumulator over `(ic, kh, kw)`, padded taps
//!   skipped by an `if` on the input coordinates;
//! - default: threads over `(n, oc)`; per output plane (in tiles of rows), a `local`
//!   accumulator `acc: f32[rows, OW]`; loops `ic`, `kh`, then the output row (one `if` per row
//!   skips rows whose input row is padding), then one vectorized `ow` loop per `kw`, emitted
//!   separately for each `kw` with the literal range of `ow` whose input column is inside the
//!   image. Padding therefore never costs a branch in the vector loop, and each input row is
//!   read contiguously (stride 1). Depthwise convolution (`groups == C`) is the same nest with
//!   one input channel per group.

use crate::build::{f, int, ints, let_, var, Buf, E};
use crate::sched::{outer, serial, simple_loop, tiles, Cx};
use ekb_ir::l0::Conv2dAttrs;
use ekb_ir::l1::{LoopKind, Stmt};
use ekb_ir::{DType, TensorType};

/// Floats of one thread's output tile (16 KiB: comfortably inside an L1 data cache).
const TILE_FLOATS: usize = 4096;

/// The output positions `o` in `0..out` whose input coordinate `o*stride + offset` lies in
/// `0..size`, as a half-open range (empty when none does).
pub fn valid_range(out: usize, stride: usize, offset: i64, size: usize) -> (usize, usize) {
    let s = stride as i64;
    // o*s + offset >= 0  <=>  o >= ceil(-offset / s)
    let lo = (-offset).div_euclid(s) + i64::from((-offset).rem_euclid(s) != 0);
    // o*s + offset <= size - 1  <=>  o <= floor((size - 1 - offset) / s)
    let hi = (size as i64 - 1 - offset).div_euclid(s) + 1;
    let lo = lo.clamp(0, out as i64) as usize;
    let hi = hi.clamp(0, out as i64) as usize;
    (lo, hi.max(lo))
}

/// `y = conv2d(x, w, bias)`.
pub fn conv2d(cx: &mut Cx, a: &Conv2dAttrs, x: &Buf, w: &Buf, bias: Option<&Buf>, y: &Buf) -> Vec<Stmt> {
    let [_, _, h, wd] = dims4(x);
    let [oc, icg, kh, kw] = dims4(w);
    let [_, _, oh, ow] = dims4(y);
    let ocg = oc / a.groups;
    let [sh, sw] = a.stride;
    let [dh, dw] = a.dilation;
    let (pt, pl) = (a.pad[0] as i64, a.pad[1] as i64);
    if cx.naive() {
        let nest = serial(cx, y.shape(), "i");
        let [ni, oi, hi, wi] = <[E; 4]>::try_from(nest.idx.clone()).expect("rank 4");
        let acc = Buf::new(cx.fresh("acc"), TensorType::new(DType::F32, [1]));
        let red = serial(cx, &[icg, kh, kw], "r");
        let [ci, khi, kwi] = <[E; 3]>::try_from(red.idx.clone()).expect("rank 3");
        let (ih, iw) = (cx.fresh("ih"), cx.fresh("iw"));
        let tap = vec![
            let_(&ih, hi * int(sh) + khi.clone() * int(dh) - ints(pt)),
            let_(&iw, wi * int(sw) + kwi.clone() * int(dw) - ints(pl)),
            crate::build::if_(
                var(&ih).in_range(int(0), int(h)).and(var(&iw).in_range(int(0), int(wd))),
                vec![acc.store(
                    &[int(0)],
                    acc.load(&[int(0)])
                        + x.load(&[ni.clone(), oi.clone() / int(ocg) * int(icg) + ci.clone(), var(&ih), var(&iw)])
                            * w.load(&[oi.clone(), ci, khi, kwi]),
                )],
                vec![],
            ),
        ];
        let mut value = acc.load(&[int(0)]);
        if let Some(b) = bias {
            value = value + b.load(&[oi.clone()]);
        }
        let body = [vec![acc.alloc(), acc.store(&[int(0)], f(0.0))], red.wrap(tap), vec![y.store(&nest.idx, value)]]
            .concat();
        return nest.wrap(body);
    }
    let threads = cx.wants_threads(2 * y.ty.numel() * icg * kh * kw);
    let nest = outer(cx, &y.shape()[..2], threads, "i");
    let (ni, oi) = (nest.idx[0].clone(), nest.idx[1].clone());
    let cbase = cx.fresh("cb");
    let rows_per_tile = (TILE_FLOATS / ow.max(1)).clamp(1, oh);
    let plane = tiles(cx, oh, rows_per_tile, LoopKind::Serial, "ht", |cx, oh0, rows| {
        let acc = Buf::new(cx.fresh("acc"), TensorType::new(DType::F32, [rows, ow]));
        let (r0, j0, r2, j2) = (cx.fresh("r"), cx.fresh("j"), cx.fresh("r"), cx.fresh("j"));
        let (ci, khv, r1, ih) = (cx.fresh("ci"), cx.fresh("kh"), cx.fresh("r"), cx.fresh("ih"));
        let lanes = cx.inner_kind(ow);
        let init = match bias {
            Some(b) => b.load(&[oi.clone()]),
            None => f(0.0),
        };
        // One `let` per kw for the weights of this (ic, kh), then one vector loop per kw.
        let wvs: Vec<String> = (0..kw).map(|_| cx.fresh("wv")).collect();
        let mut taps = Vec::new();
        for (k, wv) in wvs.iter().enumerate() {
            let off = (k * dw) as i64 - pl;
            let (lo, hi) = valid_range(ow, sw, off, wd);
            if lo < hi {
                let j = cx.fresh("j");
                let kind = cx.inner_kind(hi - lo);
                let iw = var(&j) * int(sw) + ints(off);
                let xv = x.load(&[ni.clone(), var(&cbase) + var(&ci), var(&ih), iw]);
                let upd = acc.store(&[var(&r1), var(&j)], acc.load(&[var(&r1), var(&j)]) + var(wv) * xv);
                taps.push(crate::build::loop_(kind, &j, int(lo), int(hi), vec![upd]));
            }
        }
        let row = vec![
            let_(&ih, (oh0.clone() + var(&r1)) * int(sh) + var(&khv) * int(dh) - ints(pt)),
            crate::build::if_(var(&ih).in_range(int(0), int(h)), taps, vec![]),
        ];
        let mut per_kh: Vec<Stmt> = wvs
            .iter()
            .enumerate()
            .map(|(k, wv)| let_(wv, w.load(&[oi.clone(), var(&ci), var(&khv), int(k)])))
            .collect();
        per_kh.push(simple_loop(LoopKind::Serial, &r1, rows, row));
        vec![
            acc.alloc(),
            simple_loop(LoopKind::Serial, &r0, rows, vec![simple_loop(lanes, &j0, ow, vec![acc.store(&[var(&r0), var(&j0)], init.clone())])]),
            simple_loop(LoopKind::Serial, &ci, icg, vec![simple_loop(LoopKind::Serial, &khv, kh, per_kh)]),
            simple_loop(
                LoopKind::Serial,
                &r2,
                rows,
                vec![simple_loop(
                    lanes,
                    &j2,
                    ow,
                    vec![y.store(&[ni.clone(), oi.clone(), oh0.clone() + var(&r2), var(&j2)], acc.load(&[var(&r2), var(&j2)]))],
                )],
            ),
        ]
    });
    let body = [vec![let_(&cbase, oi.clone() / int(ocg) * int(icg))], plane].concat();
    nest.wrap(body)
}

/// The four extents of an NCHW (or OIHW) tensor.
pub fn dims4(b: &Buf) -> [usize; 4] {
    <[usize; 4]>::try_from(b.shape()).expect("conv and pool operands have rank 4")
}

#[cfg(test)]
mod tests {
    use super::valid_range;

    #[test]
    fn valid_output_ranges_match_brute_force() {
        for out in 0..7 {
            for stride in 1..4 {
                for offset in -5..6 {
                    for size in 1..8 {
                        let ok: Vec<usize> = (0..out)
                            .filter(|&o| (0..size as i64).contains(&(o as i64 * stride as i64 + offset)))
                            .collect();
                        let (lo, hi) = valid_range(out, stride, offset, size);
                        let got: Vec<usize> = (lo..hi).collect();
                        assert_eq!(got, ok, "out {out} stride {stride} offset {offset} size {size}");
                    }
                }
            }
        }
    }
}
