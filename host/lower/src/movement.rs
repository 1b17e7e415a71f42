//! Data movement: `reshape`, `transpose`, `concat`, `slice`, `pad`, `expand`, `gather`, and the
//! plain copy used for outputs that no node writes. No arithmetic on values; only index mapping.
//!
//! Every index these produce is in bounds by interval reasoning: flat offsets are unravelled
//! with `/` and `%` by each dim's extent, slices start at a clamped literal, and the reflected or
//! edge-replicated source indices of `pad` are clamped into the source dim (a no-op on the
//! values the formulas produce, there so the bound is evident). Under the default schedule
//! `pad` splits the last dim into left border, interior and right border ranges with literal
//! bounds, so the interior copy is a branch-free vector loop; `reshape` (a returned one: any other
//! is a view, `crate::plan`) copies blocks that stay contiguous in both shapes; `transpose` walks square tiles when the contiguous dim moves.
//! `gather` reads its index from the indices buffer, wraps a negative one and clamps the result
//! into the axis: an index the reference rejects (out of range) then reads some element of the
//! axis instead of memory outside the buffer.

use crate::elementwise::broadcast_index;
use crate::recipe::Knob;
use crate::reduce::norm_axis;
use crate::sched::{elementwise, outer, simple_loop, Cx};
use ekb_ir::l0::PadMode;
use ekb_ir::l1::build::{f, int, ints, let_, loop_, select, var, Buf, E};
use ekb_ir::l1::{LoopKind, Stmt};
use ekb_ir::types::strides;

/// `y = x` (same shape).
pub fn copy(cx: &mut Cx, x: &Buf, y: &Buf) -> Vec<Stmt> {
    elementwise(cx, y.shape(), 1, |_, idx| vec![y.store(idx, x.load(idx))])
}

/// Per-dim indices of the flat row-major offset `flat` into `shape`.
fn unravel(flat: E, shape: &[usize]) -> Vec<E> {
    let st = strides(shape);
    let first_live = shape.iter().position(|&n| n > 1);
    shape
        .iter()
        .enumerate()
        .map(|(d, &n)| {
            if n == 1 {
                int(0)
            } else if Some(d) == first_live {
                flat.clone() / int(st[d])
            } else {
                flat.clone() / int(st[d]) % int(n)
            }
        })
        .collect()
}

/// `y = reshape(x)`: the same row-major element order.
pub fn reshape(cx: &mut Cx, x: &Buf, y: &Buf) -> Vec<Stmt> {
    if cx.naive() {
        // Flat offset of the output index, unravelled into the input's shape.
        let st = strides(y.shape());
        return elementwise(cx, y.shape(), 1, |cx, idx| {
            let flat = cx.fresh("flat");
            let offset = idx.iter().zip(&st).fold(int(0), |acc, (i, &s)| acc + i.clone() * int(s));
            vec![let_(&flat, offset), y.store(idx, x.load(&unravel(var(&flat), x.shape())))]
        });
    }
    // Blocks of `l` consecutive elements (l divides both last dims) stay contiguous in both
    // tensors: one loop over blocks, a vector loop within a block.
    let last = |b: &Buf| b.shape().last().copied().unwrap_or(1);
    let l = gcd(last(x), last(y)).max(1);
    let blocks = y.ty.numel() / l;
    let threads = cx.wants_threads(y.ty.numel());
    let (q, j) = (cx.fresh("q"), cx.fresh("j"));
    let at = |b: &Buf| {
        let mut shape = b.shape().to_vec();
        match shape.last_mut() {
            Some(n) => {
                *n /= l;
                let mut idx = unravel(var(&q), &shape);
                let lastq = idx.pop().expect("rank >= 1");
                idx.push(lastq * int(l) + var(&j));
                idx
            }
            None => vec![],
        }
    };
    let kind = if threads { LoopKind::Parallel } else { LoopKind::Serial };
    let inner = simple_loop(cx.inner_kind(l), &j, l, vec![y.store(&at(y), x.load(&at(x)))]);
    vec![simple_loop(kind, &q, blocks, vec![inner])]
}

fn gcd(a: usize, b: usize) -> usize {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// `y = transpose(x, perm)`: output dim `i` is input dim `perm[i]`. When the input's contiguous
/// last dim moves, the default schedule walks the two dims involved in square tiles.
pub fn transpose(cx: &mut Cx, perm: &[usize], x: &Buf, y: &Buf) -> Vec<Stmt> {
    let read = |idx: &[E]| {
        let mut xi = vec![int(0); idx.len()];
        for (i, &p) in perm.iter().enumerate() {
            xi[p] = idx[i].clone();
        }
        x.load(&xi)
    };
    let r = y.rank();
    let moved = perm.iter().position(|&p| p + 1 == r).filter(|&p| p + 1 != r);
    let (Some(p), false) = (moved, cx.naive()) else {
        return elementwise(cx, y.shape(), 1, |_, idx| vec![y.store(idx, read(idx))]);
    };
    // Square tiles (`transpose.tile`): both the rows read and the rows written by one tile stay
    // in cache (32 x 32 f32 is 4 KiB).
    let t = cx.knob(Knob::TransposeTile);
    let (np, nl) = (y.shape()[p], y.shape()[r - 1]);
    // Threads over the other dims and both tile indices.
    let mut dims: Vec<usize> = (0..r - 1).filter(|&d| d != p).map(|d| y.shape()[d]).collect();
    dims.extend([np.div_ceil(t), nl.div_ceil(t)]);
    let mut nest = outer(cx, &dims, cx.wants_threads(y.ty.numel()), "i");
    let tl = nest.idx.pop().expect("tile index");
    let tp = nest.idx.pop().expect("tile index");
    let (a, b) = (cx.fresh("a"), cx.fresh("b"));
    let mut idx = nest.idx.clone();
    idx.insert(p, var(&a));
    idx.push(var(&b));
    let (a0, b0) = (tp * int(t), tl * int(t));
    let inner = loop_(
        cx.inner_kind(t.min(nl)),
        &b,
        b0.clone(),
        (b0 + int(t)).min(int(nl)),
        vec![y.store(&idx, read(&idx))],
    );
    let body = vec![loop_(LoopKind::Serial, &a, a0.clone(), (a0 + int(t)).min(int(np)), vec![inner])];
    nest.wrap(body)
}

/// `y = concat(xs, axis)`: one nest per input, writing at its offset along `axis`.
pub fn concat(cx: &mut Cx, axis: i64, xs: &[Buf], y: &Buf) -> Vec<Stmt> {
    let a = norm_axis(axis, y.rank());
    let mut out = Vec::new();
    let mut offset = 0;
    for x in xs {
        out.extend(elementwise(cx, x.shape(), 1, |_, idx| {
            let mut yi = idx.to_vec();
            yi[a] = yi[a].clone() + int(offset);
            vec![y.store(&yi, x.load(idx))]
        }));
        offset += x.shape()[a];
    }
    out
}

/// `y = slice(x, axes, starts, ends, steps)`: `y[.., i, ..] = x[.., start + i*step, ..]` on each
/// sliced axis, with `start` resolved as the spec says (negative counts from the end, then
/// clamped to `[0, dim]`).
/// The output extent (in `y`'s type) already encodes where each slice ends.
pub fn slice(cx: &mut Cx, axes: &[i64], starts: &[i64], steps: &[i64], x: &Buf, y: &Buf) -> Vec<Stmt> {
    let r = x.rank();
    let mut start = vec![0i64; r];
    let mut step = vec![1i64; r];
    for (i, &ax) in axes.iter().enumerate() {
        let d = norm_axis(ax, r);
        let n = x.shape()[d] as i64;
        let s = starts[i];
        start[d] = (if s < 0 { s + n } else { s }).clamp(0, n);
        step[d] = steps.get(i).copied().unwrap_or(1);
    }
    elementwise(cx, y.shape(), 1, |_, idx| {
        let xi: Vec<E> =
            idx.iter().enumerate().map(|(d, i)| ints(start[d]) + i.clone() * ints(step[d])).collect();
        vec![y.store(idx, x.load(&xi))]
    })
}

/// `y = expand(x)`: numpy broadcasting of `x` to `y`'s shape.
pub fn expand(cx: &mut Cx, x: &Buf, y: &Buf) -> Vec<Stmt> {
    elementwise(cx, y.shape(), 1, |_, idx| vec![y.store(idx, x.load(&broadcast_index(idx, x.shape())))])
}

/// `y = gather(x, indices, axis)`: `y[o.., j.., i..] = x[o.., indices[j..], i..]`, a negative
/// index counting from the end of the axis.
pub fn gather(cx: &mut Cx, axis: i64, x: &Buf, indices: &Buf, y: &Buf) -> Vec<Stmt> {
    let a = norm_axis(axis, x.rank());
    let (n, q) = (x.shape()[a], indices.rank());
    elementwise(cx, y.shape(), 2, |cx, idx| {
        if n == 0 {
            // Every index is out of range (the reference rejects the graph): write zeros.
            let zero = if y.ty.dtype.is_float() { f(0.0) } else { int(0) };
            return vec![y.store(idx, zero)];
        }
        let (i, k) = (cx.fresh("g"), cx.fresh("k"));
        let at = indices.load(&idx[a..a + q]);
        let wrapped = select(var(&i).lt(int(0)), var(&i) + int(n), var(&i));
        let src = [&idx[..a], &[var(&k)][..], &idx[a + q..]].concat();
        vec![let_(&i, at), let_(&k, wrapped.clamp_index(n)), y.store(idx, x.load(&src))]
    })
}

/// The source index along a dim of extent `n` for a padded position `s` (= output index minus
/// the begin pad) under reflect or edge mode; clamped so its bound is evident.
fn pad_source(mode: PadMode, s: E, n: usize) -> E {
    let m = int(n - 1);
    let src = match mode {
        PadMode::Reflect => m.clone() - (m - s.abs()).abs(),
        PadMode::Edge | PadMode::Constant(_) => s,
    };
    src.clamp_index(n)
}

/// Source indices of a padded position: per dim, `let s = ...` bindings (appended to `lets`),
/// the index to read, and for constant mode the in-image test of every padded dim.
struct PadSource {
    lets: Vec<Stmt>,
    src: Vec<E>,
    inside: Option<E>,
}

/// The source of output index `idx` (leading dims of `x` only, when `idx` is shorter).
fn pad_source_index(cx: &mut Cx, mode: PadMode, idx: &[E], pads: &[usize], x: &Buf) -> PadSource {
    let r = x.rank();
    let mut out = PadSource { lets: Vec::new(), src: Vec::new(), inside: None };
    for (d, (i, &n)) in idx.iter().zip(x.shape()).enumerate() {
        if pads[d] == 0 && pads[r + d] == 0 {
            out.src.push(i.clone());
            continue;
        }
        let s = cx.fresh(&format!("s{d}"));
        let shifted = i.clone() - int(pads[d]);
        if let PadMode::Constant(_) = mode {
            out.lets.push(let_(&s, shifted));
            let c = var(&s).in_range(int(0), int(n));
            out.inside = Some(match out.inside.take() {
                Some(prev) => prev.and(c),
                None => c,
            });
        } else {
            out.lets.push(let_(&s, pad_source(mode, shifted, n)));
        }
        out.src.push(var(&s));
    }
    out
}

/// `y = pad(x, pads, mode)`, `pads` = all begins then all ends.
pub fn pad(cx: &mut Cx, pads: &[usize], mode: PadMode, x: &Buf, y: &Buf) -> Vec<Stmt> {
    let r = x.rank();
    let fill = |v: f64| if y.ty.dtype.is_float() { f(v) } else { ints(i64::from(v as i32)) };
    if cx.naive() || r == 0 {
        return elementwise(cx, y.shape(), 1, |cx, idx| {
            let PadSource { mut lets, src, inside } = pad_source_index(cx, mode, idx, pads, x);
            let store = y.store(idx, x.load(&src));
            match (mode, inside) {
                (PadMode::Constant(v), Some(c)) => {
                    lets.push(ekb_ir::l1::build::if_(c, vec![store], vec![y.store(idx, fill(v))]));
                }
                _ => lets.push(store),
            }
            lets
        });
    }
    // Default: rows over the leading dims (their source indices bound once per row), the last
    // dim in three literal ranges.
    let threads = cx.wants_threads(y.ty.numel());
    let nest = outer(cx, &y.shape()[..r - 1], threads, "i");
    let (bl, w, ow) = (pads[r - 1], x.shape()[r - 1], y.shape()[r - 1]);
    let PadSource { lets: mut body, src: src_row, inside } = pad_source_index(cx, mode, &nest.idx, pads, x);
    let yrow = |j: E| [nest.idx.clone(), vec![j]].concat();
    let xrow = |j: E| [src_row.clone(), vec![j]].concat();
    let range = |cx: &mut Cx, lo: usize, hi: usize, value: &dyn Fn(E) -> E| -> Option<Stmt> {
        (lo < hi).then(|| {
            let j = cx.fresh("j");
            ekb_ir::l1::build::loop_(
                cx.inner_kind(hi - lo),
                &j,
                int(lo),
                int(hi),
                vec![y.store(&yrow(var(&j)), value(var(&j)))],
            )
        })
    };
    let border = |j: E| match mode {
        PadMode::Constant(v) => fill(v),
        _ => x.load(&xrow(pad_source(mode, j - int(bl), w))),
    };
    let row: Vec<Stmt> = [
        range(cx, 0, bl, &border),
        range(cx, bl, bl + w, &|j| x.load(&xrow(j - int(bl)))),
        range(cx, bl + w, ow, &border),
    ]
    .into_iter()
    .flatten()
    .collect();
    match (mode, inside) {
        (PadMode::Constant(v), Some(c)) => {
            let all = range(cx, 0, ow, &|_| fill(v)).into_iter().collect();
            body.push(ekb_ir::l1::build::if_(c, row, all));
        }
        _ => body.extend(row),
    }
    nest.wrap(body)
}

#[cfg(test)]
mod tests {
    use crate::{lower, Schedule};
    use ekb_ir::l1::interp;
    use ekb_ir::tensor::{BufData, Buffer};
    use ekb_ir::{DType, SourceFile, TargetProfile, TensorType};
    use std::collections::HashMap;

    #[test]
    fn gather_wraps_negative_indices_and_clamps_what_the_reference_rejects() {
        let g = "graph g(x: f32[4,2], ids: i32[5]) -> (y: f32[5,2]) {\n  %0 = gather(x, ids, axis=0)\n  return %0\n}\n";
        let g = ekb_ir::l0::check::load(&SourceFile::new("t.ekir", g)).unwrap();
        let x: Vec<f32> = (0..8).map(|v| v as f32).collect();
        // -1 is row 3; 7 and -9 are out of range (the reference's error), clamped to rows 3 and 0.
        let ids = vec![2, -1, 0, 7, -9];
        let inputs = HashMap::from([
            ("x".to_string(), Buffer { ty: TensorType::new(DType::F32, [4, 2]), data: BufData::F32(x) }),
            ("ids".to_string(), Buffer { ty: TensorType::new(DType::I32, [5]), data: BufData::I32(ids) }),
        ]);
        for schedule in Schedule::ALL {
            let m = lower(&g, schedule, &TargetProfile::load("host").unwrap()).unwrap();
            let out = interp::run(&m, &inputs).unwrap();
            assert_eq!(out["y"].data, BufData::F32(vec![4.0, 5.0, 6.0, 7.0, 0.0, 1.0, 6.0, 7.0, 0.0, 1.0]));
        }
    }
}
