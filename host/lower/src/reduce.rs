//! Reductions along axes: `sum`, `mean`, `max`, `min`, `argmax`, and the row-wise
//! `softmax` / `log_softmax` (max pass, sum-of-exp pass, output pass: numerically stable).
//!
//! Layouts. Naive: a serial loop over the kept dims, a `local` accumulator `acc: f32[1]`, serial
//! loops over the reduced dims. Default, when the last (contiguous) axis is reduced: threads
//! over the kept dims and the innermost reduction loop vectorized (the spec allows
//! reassociating a float reduction in a `vectorize` loop); reduced axes that run to the end
//! are read as one run through a view (a global average pool sums whole planes, not rows),
//! except where the operand must keep its shape ([`crate::sched::Cx::can_view`]). When the
//! last axis is kept: threads over the other kept dims, and a tile of the last dim accumulated
//! in a `local` vector, the tile loop vectorized inside the serial reduction loops, so lanes
//! never reduce across each other.
//!
//! A float `max` or `min` along the contiguous axis runs on `4 * lanes` partial results, each
//! lane of a `local` buffer reducing every `4 * lanes`-th element, folded into the accumulator
//! at the end ([`lane_partials`]): four independent vector chains and a halving fold, which
//! LLVM 19 vectorises whatever it makes of a reduction chain (it would not widen one of
//! `llvm.maxnum`, L1's `max` before it propagated NaN). L1's `max` and `min` propagate NaN and
//! are associative and commutative (up to the sign of a zero result, which L1 leaves open), so
//! the partials give the serial loop's result, NaN included.

use crate::recipe::Knob;
use crate::sched::{outer, serial, tiles, Cx, Nest};
use ekb_ir::l0::ReduceKind;
use ekb_ir::l1::build::{f, int, ints, isnan, let_, select, var, Buf, E};
use ekb_ir::l1::{LoopKind, Stmt};
use ekb_ir::{DType, TensorType};

/// A normalised axis: negative values count from the end.
pub fn norm_axis(a: i64, rank: usize) -> usize {
    if a < 0 {
        (a + rank as i64) as usize
    } else {
        a as usize
    }
}

/// Which dims of an input are reduced.
struct Axes {
    red: Vec<bool>,
}

impl Axes {
    fn new(rank: usize, axes: impl IntoIterator<Item = usize>) -> Axes {
        let mut red = vec![false; rank];
        for a in axes {
            red[a] = true;
        }
        Axes { red }
    }

    /// Extents of the kept dims, in order.
    fn kept(&self, shape: &[usize]) -> Vec<usize> {
        shape.iter().zip(&self.red).filter(|(_, &r)| !r).map(|(&n, _)| n).collect()
    }

    /// Extents of the reduced dims, in order.
    fn reduced(&self, shape: &[usize]) -> Vec<usize> {
        shape.iter().zip(&self.red).filter(|(_, &r)| r).map(|(&n, _)| n).collect()
    }

    /// The full input index from kept and reduced indices.
    fn merge(&self, kept: &[E], red: &[E]) -> Vec<E> {
        let (mut k, mut r) = (kept.iter(), red.iter());
        self.red
            .iter()
            .map(|&is_red| if is_red { r.next() } else { k.next() }.expect("index count").clone())
            .collect()
    }

    /// The output index from kept indices: reduced dims become 0 with `keepdims`, else vanish.
    fn out_index(&self, kept: &[E], keepdims: bool) -> Vec<E> {
        if keepdims {
            let zeros = vec![int(0); self.red.len()];
            self.merge(kept, &zeros)
        } else {
            kept.to_vec()
        }
    }

    /// Whether the last dim is reduced (then the innermost reduction loop is contiguous).
    fn last_reduced(&self) -> bool {
        self.red.last().copied().unwrap_or(true)
    }
}

/// The element count of the reduced axes when they are two or more that run to the end
/// (every axis after the first reduced one is reduced, and more than the last one has extent
/// above 1): one contiguous run of the input.
fn trailing_run(ax: &Axes, shape: &[usize]) -> Option<usize> {
    let first = ax.red.iter().position(|&r| r)?;
    let last = *shape.last()?;
    let run: usize = shape[first..].iter().product();
    (ax.red[first..].iter().all(|&r| r) && run > last).then_some(run)
}

/// A nest over reduction extents, serial except the innermost, which is vectorized under the
/// default schedule (it runs over the contiguous last dim).
fn reduction_nest(cx: &mut Cx, extents: &[usize], base: &str) -> Nest {
    let Some((&last, init)) = extents.split_last() else { return Nest::default() };
    let mut nest = serial(cx, init, base);
    if last == 1 {
        nest.idx.push(int(0));
    } else {
        let v = cx.fresh(&format!("{base}{}", extents.len() - 1));
        let kind = cx.inner_kind(last);
        let e = nest.push(kind, &v, int(0), int(last));
        nest.idx.push(e);
    }
    nest
}

/// A fresh one-element local accumulator.
fn scalar_acc(cx: &mut Cx, base: &str, dtype: DType) -> Buf {
    Buf::new(cx.fresh(base), TensorType::new(dtype, [1]))
}

/// The identity of a reduction and its combining step.
fn reducer(kind: ReduceKind, dtype: DType) -> (E, fn(E, E) -> E) {
    let float = dtype == DType::F32;
    match kind {
        ReduceKind::Sum | ReduceKind::Mean => (if float { f(0.0) } else { int(0) }, |a, b| a + b),
        ReduceKind::Max => (if float { f(f64::NEG_INFINITY) } else { ints(i32::MIN.into()) }, E::max),
        ReduceKind::Min => (if float { f(f64::INFINITY) } else { ints(i32::MAX.into()) }, E::min),
    }
}

/// Whether `kind` on `dtype` reduces through [`lane_partials`] (a float `max` or `min` under
/// the default schedule).
fn partial_lanes_apply(cx: &Cx, kind: ReduceKind, dtype: DType) -> bool {
    !cx.naive() && dtype == DType::F32 && matches!(kind, ReduceKind::Max | ReduceKind::Min)
}

/// `acc[0] = combine(acc[0], at(k))` for `k` in `0..n`, `at(k)` loading element `k` of a
/// contiguous run: `4 * lanes` partial results start at `init`, lane `j` of a vector loop takes
/// the elements `j`, `j + 4 lanes`, .. (the last tile shorter), then the partials are folded in
/// halves (`part[j] = combine(part[j], part[j + w])` for `w` = p/2, p/4, .., 1) and the last one
/// into `acc[0]`. Runs shorter than two tiles get the plain loop.
pub(crate) fn lane_partials(
    cx: &mut Cx,
    n: usize,
    init: E,
    combine: fn(E, E) -> E,
    acc: &Buf,
    at: &dyn Fn(E) -> E,
) -> Vec<Stmt> {
    let p = 4 * cx.lanes();
    if n < 2 * p {
        let k = cx.fresh("k");
        let step = acc.store1(int(0), combine(acc.load1(int(0)), at(var(&k))));
        return vec![crate::sched::simple_loop(cx.inner_kind(n), &k, n, vec![step])];
    }
    let part = Buf::new(cx.fresh("part"), TensorType::new(DType::F32, [p]));
    let (j0, j2) = (cx.fresh("j"), cx.fresh("j"));
    let mut out = vec![part.alloc(), lanes(cx, &j0, p, vec![part.store1(var(&j0), init)])];
    out.extend(tiles(cx, n, p, LoopKind::Serial, "kt", |cx, base, len| {
        let j = cx.fresh("j");
        let step = part.store1(var(&j), combine(part.load1(var(&j)), at(base + var(&j))));
        vec![lanes(cx, &j, len, vec![step])]
    }));
    // Halving steps fold the partials in pairs (vector loops while they are wide), so the fold
    // is log2(p) short steps rather than a chain of p dependent ones.
    let mut w = p;
    while w > 1 && w.is_multiple_of(2) {
        w /= 2;
        let j = cx.fresh("j");
        let pair = part.store1(var(&j), combine(part.load1(var(&j)), part.load1(var(&j) + int(w))));
        out.push(lanes(cx, &j, w, vec![pair]));
    }
    let fold = acc.store1(int(0), combine(acc.load1(int(0)), part.load1(var(&j2))));
    out.push(crate::sched::simple_loop(LoopKind::Serial, &j2, w, vec![fold]));
    out
}

/// `y = sum|mean|max|min(x, axes, keepdims)`.
pub fn reduce(cx: &mut Cx, kind: ReduceKind, axes: &[i64], keepdims: bool, x: &Buf, y: &Buf) -> Vec<Stmt> {
    let shape = x.shape().to_vec();
    let ax = Axes::new(shape.len(), axes.iter().map(|&a| norm_axis(a, shape.len())));
    let count: usize = ax.reduced(&shape).iter().product();
    let (init, combine) = reducer(kind, x.ty.dtype);
    let finish = |acc: E| if kind == ReduceKind::Mean { acc / f(count as f64) } else { acc };
    let threads = cx.wants_threads(x.ty.numel());
    if cx.naive() || ax.last_reduced() {
        let kept = ax.kept(&shape);
        let nest = outer(cx, &kept, threads, "i");
        // Reduced axes that run contiguously to the end are read as one run of their product
        // (a view of `x`), so the vector loop spans whole planes, not rows of the last axis:
        // a global average pool over 56x56 planes had 56 rows of 56, each ending in a
        // horizontal sum (and 7x7 planes rows of 7). The reads are those of the nest over the
        // axes, in the same order.
        let (xr, axr) = match trailing_run(&ax, &shape) {
            Some(run) if !cx.naive() && cx.can_view(x) => {
                let flat = [kept.clone(), vec![run]].concat();
                (cx.view(x, &flat), Axes::new(flat.len(), [kept.len()]))
            }
            _ => (x.clone(), Axes { red: ax.red.clone() }),
        };
        let acc = scalar_acc(cx, "acc", x.ty.dtype);
        let reduced = axr.reduced(xr.shape());
        let mut body = vec![acc.alloc(), acc.store(&[int(0)], init.clone())];
        if partial_lanes_apply(cx, kind, x.ty.dtype) && reduced.last().is_some_and(|&n| n > 1) {
            let (&last, init_dims) = reduced.split_last().expect("a reduced dim");
            let red = serial(cx, init_dims, "r");
            let row = |k: E| xr.load(&axr.merge(&nest.idx, &[red.idx.clone(), vec![k]].concat()));
            let inner = lane_partials(cx, last, init, combine, &acc, &row);
            body.extend(red.wrap(inner));
        } else {
            let red = reduction_nest(cx, &reduced, "r");
            let xi = axr.merge(&nest.idx, &red.idx);
            let step = acc.store(&[int(0)], combine(acc.load(&[int(0)]), xr.load(&xi)));
            body.extend(red.wrap(vec![step]));
        }
        body.push(y.store(&ax.out_index(&nest.idx, keepdims), finish(acc.load(&[int(0)]))));
        return nest.wrap(body);
    }
    // Last axis kept: vectorize over tiles of it, reducing the other axes serially outside.
    let kept = ax.kept(&shape);
    let (&w, kept_outer) = kept.split_last().expect("the last axis is kept");
    let nest = outer(cx, kept_outer, threads, "i");
    // Elements of the last dim kept in one `local` tile (`reduce.row_tile`).
    let row_tile = cx.knob(Knob::ReduceRowTile);
    let tile = if w <= 2 * row_tile { w } else { row_tile };
    let outer_idx = nest.idx.clone();
    let body = tiles(cx, w, tile, LoopKind::Serial, "jt", |cx, base, len| {
        let acc = Buf::new(cx.fresh("acc"), TensorType::new(x.ty.dtype, [len]));
        let red = serial(cx, &ax.reduced(&shape), "r");
        let (j0, j1, j2) = (cx.fresh("j"), cx.fresh("j"), cx.fresh("j"));
        let kept_at = |j: &str| [outer_idx.clone(), vec![base.clone() + var(j)]].concat();
        let step = acc
            .store(&[var(&j1)], combine(acc.load(&[var(&j1)]), x.load(&ax.merge(&kept_at(&j1), &red.idx))));
        let out = y.store(&ax.out_index(&kept_at(&j2), keepdims), finish(acc.load(&[var(&j2)])));
        let mut block = vec![acc.alloc(), lanes(cx, &j0, len, vec![acc.store(&[var(&j0)], init.clone())])];
        block.extend(red.wrap(vec![lanes(cx, &j1, len, vec![step])]));
        block.push(lanes(cx, &j2, len, vec![out]));
        block
    });
    nest.wrap(body)
}

/// `vectorize v in 0..n { body }` (or `for` when `n` is 1 or the schedule is naive).
fn lanes(cx: &Cx, v: &str, n: usize, body: Vec<Stmt>) -> Stmt {
    crate::sched::simple_loop(cx.inner_kind(n), v, n, body)
}

/// Whether `v` replaces the running maximum `best` of an argmax: strictly greater (so the first
/// of equal maxima wins), and NaN counts as the largest value (so the first NaN wins).
fn beats(v: E, best: E, dtype: DType) -> E {
    let greater = v.clone().gt(best.clone());
    match dtype {
        DType::F32 | DType::F16 => greater.or(isnan(v).and(!isnan(best))),
        DType::I32 | DType::I8 => greater,
    }
}

/// `y = argmax(x, axis, keepdims)`: the index of the first maximum.
pub fn argmax(cx: &mut Cx, axis: i64, keepdims: bool, x: &Buf, y: &Buf) -> Vec<Stmt> {
    let shape = x.shape().to_vec();
    let a = norm_axis(axis, shape.len());
    let ax = Axes::new(shape.len(), [a]);
    let n = shape[a];
    let threads = cx.wants_threads(x.ty.numel());
    if cx.naive() || ax.last_reduced() {
        let nest = outer(cx, &ax.kept(&shape), threads, "i");
        let best = scalar_acc(cx, "best", x.ty.dtype);
        let arg = scalar_acc(cx, "arg", DType::I32);
        let (k, v) = (cx.fresh("k"), cx.fresh("v"));
        let at = |e: E| x.load(&ax.merge(&nest.idx, &[e]));
        let scan = vec![
            let_(&v, at(var(&k))),
            ekb_ir::l1::build::if_(
                beats(var(&v), best.load(&[int(0)]), x.ty.dtype),
                vec![best.store(&[int(0)], var(&v)), arg.store(&[int(0)], var(&k))],
                vec![],
            ),
        ];
        let body = vec![
            best.alloc(),
            arg.alloc(),
            best.store(&[int(0)], at(int(0))),
            arg.store(&[int(0)], int(0)),
            ekb_ir::l1::build::loop_(LoopKind::Serial, &k, int(1), int(n), scan),
            y.store(&ax.out_index(&nest.idx, keepdims), arg.load(&[int(0)])),
        ];
        return nest.wrap(body);
    }
    // Axis before the last: lanes over a tile of the last dim, each tracking its own maximum.
    let kept = ax.kept(&shape);
    let (&w, kept_outer) = kept.split_last().expect("the last axis is kept");
    let nest = outer(cx, kept_outer, threads, "i");
    // Elements of the last dim kept in one `local` tile (`reduce.row_tile`).
    let row_tile = cx.knob(Knob::ReduceRowTile);
    let tile = if w <= 2 * row_tile { w } else { row_tile };
    let outer_idx = nest.idx.clone();
    let body = tiles(cx, w, tile, LoopKind::Serial, "jt", |cx, base, len| {
        let best = Buf::new(cx.fresh("best"), TensorType::new(x.ty.dtype, [len]));
        let arg = Buf::new(cx.fresh("arg"), TensorType::new(DType::I32, [len]));
        let (j0, j1, j2, k) = (cx.fresh("j"), cx.fresh("j"), cx.fresh("j"), cx.fresh("k"));
        let (v, better) = (cx.fresh("v"), cx.fresh("better"));
        let kept_at = |j: &str| [outer_idx.clone(), vec![base.clone() + var(j)]].concat();
        let step = vec![
            let_(&v, x.load(&ax.merge(&kept_at(&j1), &[var(&k)]))),
            let_(&better, beats(var(&v), best.load(&[var(&j1)]), x.ty.dtype)),
            arg.store(&[var(&j1)], select(var(&better), var(&k), arg.load(&[var(&j1)]))),
            best.store(&[var(&j1)], select(var(&better), var(&v), best.load(&[var(&j1)]))),
        ];
        vec![
            best.alloc(),
            arg.alloc(),
            lanes(
                cx,
                &j0,
                len,
                vec![
                    best.store(&[var(&j0)], x.load(&ax.merge(&kept_at(&j0), &[int(0)]))),
                    arg.store(&[var(&j0)], int(0)),
                ],
            ),
            ekb_ir::l1::build::loop_(LoopKind::Serial, &k, int(1), int(n), vec![lanes(cx, &j1, len, step)]),
            lanes(cx, &j2, len, vec![y.store(&ax.out_index(&kept_at(&j2), keepdims), arg.load(&[var(&j2)]))]),
        ]
    });
    nest.wrap(body)
}

/// `y = softmax(x, axis)` or `log_softmax`: per row along `axis`, `m = max`, `s = sum(exp(x - m))`,
/// then `exp(x - m) / s` or `x - m - log(s)`. The default schedule stores `exp(x - m)` into `y`
/// during the sum pass and scales it by `1 / s` afterwards (one `exp` per element, not two), and
/// computes it with `exp_ftz`: a term below 2^-125 next to the row maximum's 1 changes neither
/// the sum nor, beyond the tolerance's `atol`, an output.
pub fn softmax(cx: &mut Cx, axis: i64, log: bool, x: &Buf, y: &Buf) -> Vec<Stmt> {
    let shape = x.shape().to_vec();
    let a = norm_axis(axis, shape.len());
    let ax = Axes::new(shape.len(), [a]);
    let n = shape[a];
    let threads = cx.wants_threads(4 * x.ty.numel());
    if cx.naive() || ax.last_reduced() {
        // One row per iteration of the kept dims; scalar accumulators; the passes run along
        // the axis (vectorized when it is the contiguous last one).
        let nest = outer(cx, &ax.kept(&shape), threads, "i");
        let row = nest.idx.clone();
        let kind = cx.inner_kind(n);
        let at = |k: E, _| ax.merge(&row, &[k]);
        // The row's maximum need not propagate NaN (`select(v > m, v, m)` passes over one, one
        // `vmaxps` per vector where L1's `max` costs a NaN test and a blend too): a NaN element
        // makes its exponential, so the sum and every output of the row, NaN anyway.
        let row_max = |cx: &mut Cx, mx: &Buf| {
            let larger = |m: E, v: E| select(v.clone().gt(m.clone()), v, m);
            lane_partials(cx, n, f(f64::NEG_INFINITY), larger, mx, &|k| x.load(&at(k, int(0))))
        };
        let naive = cx.naive();
        let body = softmax_passes(cx, log, 1, &at, x, y, (!naive).then_some(&row_max), &|cx, body| {
            let k = cx.fresh("k");
            ekb_ir::l1::build::loop_(kind, &k, int(0), int(n), body(var(&k), int(0)))
        });
        return nest.wrap(body);
    }
    // Axis before the last: lanes over a tile of the last dim, one running max and sum each,
    // the passes running serially along the axis outside the vector loop.
    let kept = ax.kept(&shape);
    let (&w, kept_outer) = kept.split_last().expect("the last axis is kept");
    let nest = outer(cx, kept_outer, threads, "i");
    // Elements of the last dim kept in one `local` tile (`reduce.row_tile`).
    let row_tile = cx.knob(Knob::ReduceRowTile);
    let tile = if w <= 2 * row_tile { w } else { row_tile };
    let outer_idx = nest.idx.clone();
    let body = tiles(cx, w, tile, LoopKind::Serial, "jt", |cx, base, len| {
        let at = |k: E, j: E| ax.merge(&[outer_idx.clone(), vec![base.clone() + j]].concat(), &[k]);
        softmax_passes(cx, log, len, &at, x, y, None, &|cx, body| {
            let (k, j) = (cx.fresh("k"), cx.fresh("j"));
            let inner = lanes(cx, &j, len, body(var(&k), var(&j)));
            ekb_ir::l1::build::loop_(LoopKind::Serial, &k, int(0), int(n), vec![inner])
        })
    });
    nest.wrap(body)
}

/// A pass of softmax: the loop over the axis (and the lanes, if any) around `body(k, lane)`.
type Pass<'a> = dyn Fn(&mut Cx, &dyn Fn(E, E) -> Vec<Stmt>) -> Stmt + 'a;

/// How a one-row softmax computes its maximum into `mx[0]` (which holds `-inf`), in place of
/// the plain max pass.
type RowMax<'a> = dyn Fn(&mut Cx, &Buf) -> Vec<Stmt> + 'a;

/// The passes of softmax over `lanes` independent rows at once: `at(k, lane)` indexes `x` and
/// `y`; the accumulators hold one value per lane. `row_max` replaces the max pass of a single
/// row.
#[allow(clippy::too_many_arguments)]
fn softmax_passes(
    cx: &mut Cx,
    log: bool,
    lanes_n: usize,
    at: &dyn Fn(E, E) -> Vec<E>,
    x: &Buf,
    y: &Buf,
    row_max: Option<&RowMax>,
    pass: &Pass,
) -> Vec<Stmt> {
    let mx = Buf::new(cx.fresh("mx"), TensorType::new(DType::F32, [lanes_n]));
    let sm = Buf::new(cx.fresh("sum"), TensorType::new(DType::F32, [lanes_n]));
    // Per-lane statements outside the passes: a vector loop over the lanes, or the single one.
    let per_lane = |cx: &mut Cx, body: &dyn Fn(E) -> Vec<Stmt>| -> Vec<Stmt> {
        if lanes_n == 1 {
            body(int(0))
        } else {
            let j = cx.fresh("j");
            vec![lanes(cx, &j, lanes_n, body(var(&j)))]
        }
    };
    let naive = cx.naive();
    let reuse = !naive && !log;
    let mut out = vec![mx.alloc(), sm.alloc()];
    out.extend(per_lane(cx, &|l| vec![mx.store1(l.clone(), f(f64::NEG_INFINITY)), sm.store1(l, f(0.0))]));
    match row_max {
        Some(row_max) => out.extend(row_max(cx, &mx)),
        None => {
            out.push(pass(cx, &|k, l| vec![mx.store1(l.clone(), mx.load1(l.clone()).max(x.load(&at(k, l))))]))
        }
    }
    let e = cx.fresh("e");
    out.push(pass(cx, &|k, l| {
        let shifted = x.load(&at(k.clone(), l.clone())) - mx.load1(l.clone());
        let mut b = vec![let_(&e, if naive { shifted.exp() } else { shifted.exp_ftz() })];
        if reuse {
            b.push(y.store(&at(k, l.clone()), var(&e)));
        }
        b.push(sm.store1(l.clone(), sm.load1(l) + var(&e)));
        b
    }));
    if reuse {
        // y holds exp(x - m): scale it by 1 / s.
        out.extend(per_lane(cx, &|l| vec![sm.store1(l.clone(), f(1.0) / sm.load1(l))]));
        out.push(pass(cx, &|k, l| {
            vec![y.store(&at(k.clone(), l.clone()), y.load(&at(k, l.clone())) * sm.load1(l))]
        }));
    } else {
        out.push(pass(cx, &|k, l| {
            let (v, m, s) = (x.load(&at(k.clone(), l.clone())), mx.load1(l.clone()), sm.load1(l.clone()));
            let value = if log { v - m - s.log() } else { (v - m).exp() / s };
            vec![y.store(&at(k, l), value)]
        }));
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::testing::lowered_matches_reference;
    use crate::Schedule;
    use ekb_ir::l1::print::print;

    /// A squeeze-and-excitation gate: the planes' mean, a gate, the input scaled by it.
    const SE: &str = "graph se(x: f32[1,4,6,5]) -> (y: f32[1,4,6,5]) {
  %p: f32[1,4,1,1] = global_avg_pool2d(x)
  %g: f32[1,4,1,1] = sigmoid(%p)
  %y: f32[1,4,6,5] = mul(%g, x)
  return %y
}";

    #[test]
    fn reduced_axes_running_to_the_end_are_read_as_one_run() {
        let m = lowered_matches_reference(SE, Schedule::Default, "host");
        let text = print(&m);
        assert!(text.contains("x_view: f32[1,4,30] in"), "{text}");
        assert!(text.contains("in 0..30 {"), "{text}");
        // Axes reduced but not all trailing keep their nest: `sum` over the first and last.
        let gap = "graph s(x: f32[3,4,5]) -> (y: f32[4]) {
  %y: f32[4] = sum(x, axes=[0,2], keepdims=false)
  return %y
}";
        let text = print(&lowered_matches_reference(gap, Schedule::Default, "host"));
        assert!(!text.contains("_view"), "{text}");
        // The naive schedule (the baseline) reads the rows.
        let text = print(&lowered_matches_reference(SE, Schedule::Naive, "host"));
        assert!(!text.contains("_view"), "{text}");
    }

    #[test]
    fn a_slice_or_a_producer_folded_into_the_kernel_is_read_under_its_own_shape() {
        // A slice, which the lowering reads from its operand: it stays a view-free read, and
        // the slice's copy goes.
        let sliced = "graph s(x: f32[1,8,6,5]) -> (y: f32[1,4,1,1]) {
  %h: f32[1,4,6,5] = slice(x, axes=[1], starts=[4], ends=[8], steps=[1])
  %y: f32[1,4,1,1] = mean(%h, axes=[2,3], keepdims=true)
  return %y
}";
        let m = lowered_matches_reference(sliced, Schedule::Default, "host");
        let text = print(&m);
        assert!(!text.contains("_view") && !text.contains("slice"), "{text}");
        // A producer folded into the reduction's kernel (`compute_inline` reads only under the
        // temp's own shape).
        let fused = "graph f(x: f32[1,4,6,5]) -> (y: f32[1,4,1,1]) {
  %r: f32[1,4,6,5] = relu(x)
  %y: f32[1,4,1,1] = mean(%r, axes=[2,3], keepdims=true)
  fuse %r, %y
  return %y
}";
        let m = lowered_matches_reference(fused, Schedule::Default, "host");
        assert_eq!(m.kernels.len(), 1, "{}", print(&m));
    }
}
