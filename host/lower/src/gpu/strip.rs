//! Reductions and running sums along an axis that has elements after it, or too few rows to
//! fill the GPU, through blocks that split the axis between their threads.
//!
//! The tensor is viewed as `[outer, n, inner]`: `n` the reduced or scanned extent, `inner` the
//! elements after it. A block takes a strip of `lanes` consecutive inner positions (so a warp's
//! loads are coalesced) of one outer index, and its `lanes * chunks` threads split the axis into
//! `chunks` contiguous pieces, one per thread of a lane. Each thread combines its piece in
//! order; then, per lane, a shared-memory tree over the chunks' partial results (a reduction) or
//! an inclusive scan of them (a running sum: each thread then scans its piece again from the
//! total of the pieces before it, writing as it goes). With one chunk this is the one thread per
//! output of the generic binding; the chunks are doubled while the grid would leave the GPU
//! short of threads and each piece keeps at least [`MIN_PIECE`] elements.
//!
//! Results equal the CPU's up to the order of the additions (pieces, then a tree); integer sums
//! wrap identically in any order, and `max` and `min` are the same operations in any order.
//! Every barrier is reached by every thread of the block: guards only surround loads and stores.

use super::reduce::reducer;
use super::{barrier, launch, shared, unflatten, Gpu};
use ekb_ir::l0::ReduceKind;
use ekb_ir::l1::build::{f, if_, int, let_, loop_, select, var, zero, Buf, Names, E};
use ekb_ir::l1::{LoopKind, Stmt};
use ekb_ir::{DType, TensorType};

/// The fewest elements a thread's piece of the axis is cut down to.
const MIN_PIECE: usize = 8;

/// The threads of a GPU that a grid should reach before pieces stop shrinking: a full block on
/// every compute unit.
const FILL_PER_UNIT: usize = 1024;

/// A block's layout over `[outer, n, inner]`, and the names its statements use.
struct Strip {
    outer: usize,
    n: usize,
    inner: usize,
    lanes: usize,
    chunks: usize,
    /// Elements per piece: `ceil(n / chunks)`.
    piece: usize,
    /// The grid's index (outer index and strip of lanes, flattened) and the thread's.
    bx: String,
    tx: String,
    /// The thread's lane, chunk, outer index and inner position.
    lane: String,
    chunk: String,
    o: String,
    i: String,
    /// One partial result per thread, `part[chunk * lanes + lane]`.
    part: Buf,
}

impl Strip {
    /// The layout for `[outer, n, inner]`, or `None` where the axis stays whole (one chunk: the
    /// generic binding's one thread per output, in bigger blocks, does as well) or the block
    /// would be narrower than a warp.
    fn new(gpu: &Gpu, names: &mut Names, [outer, n, inner]: [usize; 3], dtype: DType) -> Option<Strip> {
        let lanes = if inner >= gpu.simd { gpu.simd } else { prev_pow2(inner) };
        let cap = 1024.min(gpu.max_threads);
        let blocks = outer * inner.div_ceil(lanes);
        let mut chunks = 1;
        while lanes * chunks * 2 <= cap
            && blocks * lanes * chunks < gpu.units * FILL_PER_UNIT
            && n / (chunks * 2) >= MIN_PIECE
        {
            chunks *= 2;
        }
        // Blocks narrower than a warp would leave most of each warp idle.
        if chunks == 1 || lanes * chunks < gpu.simd {
            return None;
        }
        let [bx, tx, lane, chunk, o, i] = ["bx", "tx", "lane", "chunk", "o", "i"].map(|v| names.fresh(v));
        let part = Buf::new(names.fresh("part"), TensorType::new(dtype, [lanes * chunks]));
        Some(Strip {
            outer,
            n,
            inner,
            lanes,
            chunks,
            piece: n.div_ceil(chunks),
            bx,
            tx,
            lane,
            chunk,
            o,
            i,
            part,
        })
    }

    /// The blocks of the grid.
    fn blocks(&self) -> usize {
        self.outer * self.inner.div_ceil(self.lanes)
    }

    /// The thread's coordinates, then the shared partials.
    fn prologue(&self) -> Vec<Stmt> {
        let strips = self.inner.div_ceil(self.lanes);
        vec![
            shared(&self.part),
            let_(&self.lane, var(&self.tx) % int(self.lanes)),
            let_(&self.chunk, var(&self.tx) / int(self.lanes)),
            let_(&self.o, var(&self.bx) / int(strips)),
            let_(&self.i, var(&self.bx) % int(strips) * int(self.lanes) + var(&self.lane)),
        ]
    }

    /// The slot of this thread's partial result, and of chunk `c`'s of the same lane.
    fn slot(&self) -> E {
        var(&self.tx)
    }

    /// `for t in 0..piece { let j = chunk * piece + t; if j < n && i < inner { body(j) } }`: the
    /// thread's piece of the axis, in order.
    fn piece(&self, names: &mut Names, body: impl FnOnce(E) -> Vec<Stmt>) -> Stmt {
        let (t, j) = (names.fresh("t"), names.fresh("j"));
        let mut cond = var(&j).lt(int(self.n));
        if !self.inner.is_multiple_of(self.lanes) {
            cond = cond.and(var(&self.i).lt(int(self.inner)));
        }
        let inner = vec![
            let_(&j, var(&self.chunk) * int(self.piece) + var(&t)),
            if_(cond, body(var(&j)), Vec::new()),
        ];
        loop_(LoopKind::Serial, &t, int(0), int(self.piece), inner)
    }

    /// Statements leaving in `part[lane]` (chunk 0's slot) the combination of every chunk's
    /// value of that lane, after `part[slot] = value` and a barrier.
    fn tree(&self, value: E, combine: fn(E, E) -> E) -> Vec<Stmt> {
        let mut out = vec![self.part.store1(self.slot(), value), barrier()];
        let mut half = self.chunks / 2;
        while half >= 1 {
            let other = self.slot() + int(half * self.lanes);
            let step =
                self.part.store1(self.slot(), combine(self.part.load1(self.slot()), self.part.load1(other)));
            out.push(if_(var(&self.tx).lt(int(half * self.lanes)), vec![step], Vec::new()));
            out.push(barrier());
            half /= 2;
        }
        out
    }

    /// `part` of the same lane `d` chunks back, or zero before chunk `d` (the index is clamped
    /// because both arms of a select are evaluated).
    fn earlier(&self, d: usize) -> E {
        let at = (self.slot() - int(d * self.lanes)).max(int(0));
        select(var(&self.tx).ge(int(d * self.lanes)), self.part.load1(at), zero(self.part.ty.dtype))
    }

    /// Statements leaving in `part[slot]` the sum of the values of chunks `0..=chunk` of the
    /// thread's lane (an inclusive scan over the chunks, doubling the distance each step), after
    /// `part[slot] = value`.
    fn scan(&self, names: &mut Names, value: E) -> Vec<Stmt> {
        let mut out = vec![self.part.store1(self.slot(), value), barrier()];
        let mut d = 1;
        while d < self.chunks {
            let add = names.fresh("add");
            out.push(let_(&add, self.earlier(d)));
            out.push(barrier());
            out.push(self.part.store1(self.slot(), self.part.load1(self.slot()) + var(&add)));
            out.push(barrier());
            d *= 2;
        }
        out
    }
}

/// The largest power of two not above `n` (at least 1).
fn prev_pow2(n: usize) -> usize {
    let mut p = 1;
    while p * 2 <= n {
        p *= 2;
    }
    p
}

/// `y = reduce(x)` over the axes `dims[1]` of `x`, viewed as `[dims[0], dims[1], dims[2]]`
/// (the dims before, the reduced ones, the dims after): `y`'s elements are the kept ones in
/// order, with or without the reduced dims as 1s. `None` where the axis stays whole.
pub fn reduce(
    gpu: &Gpu,
    mut names: Names,
    kind: ReduceKind,
    dims: [&[usize]; 3],
    x: &Buf,
    y: &Buf,
) -> Option<Vec<Stmt>> {
    let extents = dims.map(|d| d.iter().product::<usize>());
    let term = |o: E, j: E, i: E| {
        x.load(&[unflatten(&o, dims[0]), unflatten(&j, dims[1]), unflatten(&i, dims[2])].concat())
    };
    let n = extents[1];
    let store = |o: E, i: E, total: E| {
        let value = if kind == ReduceKind::Mean { total / f(n as f64) } else { total };
        y.store(&unflatten(&(o * int(extents[2]) + i), y.shape()), value)
    };
    reduce_terms(gpu, &mut names, kind, extents, x.ty.dtype, &term, &store)
}

/// The reduction by `kind`, in `dtype`, of `term(o, j, i)` over `j` in `0..n`, for every outer
/// index `o` and position `i` of `[outer, n, inner]`, each result given to `store(o, i, value)`.
/// `None` where the axis stays whole (and then no name is taken).
pub fn reduce_terms(
    gpu: &Gpu,
    names: &mut Names,
    kind: ReduceKind,
    extents: [usize; 3],
    dtype: DType,
    term: &dyn Fn(E, E, E) -> E,
    store: &dyn Fn(E, E, E) -> Stmt,
) -> Option<Vec<Stmt>> {
    let s = Strip::new(gpu, names, extents, dtype)?;
    let (init, combine) = reducer(kind, dtype);
    let acc = Buf::new(names.fresh("acc"), TensorType::new(dtype, [1]));
    let mut body = s.prologue();
    body.extend([acc.alloc(), acc.store1(int(0), init)]);
    body.push(s.piece(names, |j| {
        vec![acc.store1(int(0), combine(acc.load1(int(0)), term(var(&s.o), j, var(&s.i))))]
    }));
    body.extend(s.tree(acc.load1(int(0)), combine));
    let mut cond = var(&s.chunk).lt(int(1));
    if !extents[2].is_multiple_of(s.lanes) {
        cond = cond.and(var(&s.i).lt(int(extents[2])));
    }
    body.push(if_(cond, vec![store(var(&s.o), var(&s.i), s.part.load1(var(&s.lane)))], Vec::new()));
    Some(vec![launch(&[(&s.bx, s.blocks())], &[(&s.tx, s.lanes * s.chunks)], body)])
}

/// `y = cumsum(x, axis)` (inclusive, or `exclusive`; from the end with `reverse`). `None` where
/// the axis stays whole.
pub fn cumsum(
    gpu: &Gpu,
    mut names: Names,
    axis: usize,
    exclusive: bool,
    reverse: bool,
    x: &Buf,
    y: &Buf,
) -> Option<Vec<Stmt>> {
    let shape = x.shape();
    let (before, after) = (&shape[..axis], &shape[axis + 1..]);
    let n = shape[axis];
    let s = Strip::new(gpu, &mut names, [before.iter().product(), n, after.iter().product()], x.ty.dtype)?;
    let acc = Buf::new(names.fresh("acc"), TensorType::new(x.ty.dtype, [1]));
    let a0 = || acc.load1(int(0));
    // The element at scan step `j`.
    let at = |j: E| {
        let pos = if reverse { int(n - 1) - j } else { j };
        [unflatten(&var(&s.o), before), vec![pos], unflatten(&var(&s.i), after)].concat()
    };
    let mut body = s.prologue();
    body.extend([acc.alloc(), acc.store1(int(0), zero(x.ty.dtype))]);
    body.push(s.piece(&mut names, |j| vec![acc.store1(int(0), a0() + x.load(&at(j)))]));
    body.extend(s.scan(&mut names, a0()));
    // The sum of the pieces before this one, then this piece again, written as it goes.
    body.push(acc.store1(int(0), s.earlier(1)));
    body.push(s.piece(&mut names, |j| {
        let (add, put) = (acc.store1(int(0), a0() + x.load(&at(j.clone()))), y.store(&at(j), a0()));
        if exclusive {
            vec![put, add]
        } else {
            vec![add, put]
        }
    }));
    Some(vec![launch(&[(&s.bx, s.blocks())], &[(&s.tx, s.lanes * s.chunks)], body)])
}

#[cfg(test)]
mod tests {
    use crate::testing::gpu_lowered_matches_reference;
    use crate::Schedule;
    use ekb_ir::l1::{Module, Stmt};

    /// Each kernel's block size.
    fn blocks(m: &Module) -> Vec<u32> {
        m.kernels
            .iter()
            .map(|k| match k.body.first() {
                Some(Stmt::Launch { block, .. }) => block.iter().map(|d| d.extent).product(),
                _ => panic!("{}: one launch", k.name),
            })
            .collect()
    }

    #[test]
    fn scans_split_between_threads_match_the_reference_in_every_direction() {
        // Few long rows (one lane, chunks of a ragged last piece), and an axis with 5 elements
        // after it (4 lanes, the fifth position in a second strip, guarded).
        let g = "graph g(x: f32[3,1000], v: f32[2,300,5], i: i32[2,300,5] = randint(-1000, 1000)) \
                 -> (a: f32[3,1000], b: f32[3,1000], c: f32[2,300,5], d: i32[2,300,5]) {
  %a = cumsum(x, axis=-1)
  %b = cumsum(x, axis=1, exclusive=true, reverse=true)
  %c = cumsum(v, axis=1, reverse=true)
  %d = cumsum(i, axis=1, exclusive=true)
  return %a, %b, %c, %d
}
";
        let m = gpu_lowered_matches_reference(g, Schedule::Default, "pocl");
        let text = ekb_ir::l1::print::print(&m);
        assert!(text.contains("barrier"), "{text}");
        assert_eq!(blocks(&m), [64, 64, 128, 128]);
    }

    #[test]
    fn reductions_over_middle_axes_split_between_threads_match_the_reference() {
        let g = "graph g(x: f32[2,256,7], i: i32[3,64,2,40]) \
                 -> (s: f32[2,7], m: f32[2,1,7], x2: f32[2,7], n: i32[3,40]) {
  %s = sum(x, axes=[1])
  %m = mean(x, axes=[1], keepdims=true)
  %x2 = max(x, axes=[-2])
  %n = min(i, axes=[1, 2])
  return %s, %m, %x2, %n
}
";
        let m = gpu_lowered_matches_reference(g, Schedule::Default, "pocl");
        assert!(blocks(&m).iter().all(|&b| b >= 32), "{:?}", blocks(&m));
    }
}
