//! Row reductions on a GPU through shared memory: one block per output row, each thread
//! accumulating a strided part of the row, then a tree over the block's partial results in
//! shared memory, halving the active threads at each level with a barrier between levels.
//! `sum`, `mean`, `max`, `min` over trailing axes (the reduced elements of one output are then
//! contiguous), and `softmax` / `log_softmax` over the last axis (a max tree, a sum-of-exp tree,
//! then every thread writes its elements).
//!
//! Results equal the CPU's up to the order of the additions (the tree adds in pairs), which the
//! evaluation tolerance allows; `max` and `min` are the same operations in any order.

use super::{barrier, launch, shared, unflatten, Gpu};
use ekb_ir::l0::ReduceKind;
use ekb_ir::l1::build::{f, int, ints, let_, loop_, var, Buf, Names, E};
use ekb_ir::l1::{LoopKind, Stmt};
use ekb_ir::{DType, TensorType};

/// The identity of a reduction and its combining step (as the CPU schedules use).
pub(super) fn reducer(kind: ReduceKind, dtype: DType) -> (E, fn(E, E) -> E) {
    let float = dtype == DType::F32;
    match kind {
        ReduceKind::Sum | ReduceKind::Mean => (if float { f(0.0) } else { int(0) }, |a, b| a + b),
        ReduceKind::Max => (if float { f(f64::NEG_INFINITY) } else { ints(i32::MIN.into()) }, E::max),
        ReduceKind::Min => (if float { f(f64::INFINITY) } else { ints(i32::MAX.into()) }, E::min),
    }
}

/// The block's threads and its shared partials, for the tree.
pub(super) struct Block {
    pub tx: String,
    pub size: usize,
    pub part: Buf,
}

impl Block {
    /// A block of `size` threads (a power of two) whose partials are `dtype`.
    pub fn new(names: &mut Names, size: usize, dtype: DType) -> Block {
        let tx = names.fresh("tx");
        let part = Buf::new(names.fresh("part"), TensorType::new(dtype, [size]));
        Block { tx, size, part }
    }

    /// `part[tx] = value`, a barrier, then the tree levels: afterwards `part[0]` holds the
    /// combination of every thread's value, visible to all.
    pub fn tree(&self, value: E, combine: fn(E, E) -> E) -> Vec<Stmt> {
        let tx = var(&self.tx);
        let mut out = vec![self.part.store1(tx.clone(), value), barrier()];
        let mut half = self.size / 2;
        while half >= 1 {
            let step = self.part.store1(
                tx.clone(),
                combine(self.part.load1(tx.clone()), self.part.load1(tx.clone() + int(half))),
            );
            out.push(ekb_ir::l1::build::if_(tx.clone().lt(int(half)), vec![step], Vec::new()));
            out.push(barrier());
            half /= 2;
        }
        out
    }

    /// `for r in 0..ceil(n / size) { let k = r * size + tx; if k < n { body(k) } }`: the thread's
    /// strided share of a row of `n` elements.
    pub fn strided(&self, names: &mut Names, n: usize, body: impl FnOnce(E) -> Vec<Stmt>) -> Stmt {
        let (r, k) = (names.fresh("r"), names.fresh("k"));
        let inner = vec![
            let_(&k, var(&r) * int(self.size) + var(&self.tx)),
            ekb_ir::l1::build::if_(var(&k).lt(int(n)), body(var(&k)), Vec::new()),
        ];
        loop_(LoopKind::Serial, &r, int(0), int(n.div_ceil(self.size)), inner)
    }
}

/// A block over rows of `n` elements: its launch variables, tree buffer and per-thread
/// accumulator.
fn block(gpu: &Gpu, names: &mut Names, rows: usize, n: usize, dtype: DType) -> (String, Block, Buf) {
    let row = names.fresh("row");
    let b = Block::new(names, gpu.block_coop(rows, n), dtype);
    let acc = Buf::new(names.fresh("acc"), TensorType::new(dtype, [1]));
    (row, b, acc)
}

/// `y = reduce(x)` over the last `nred` axes of `x` (`y` has the kept dims, with or without the
/// reduced ones as 1s).
pub fn rows(gpu: &Gpu, mut names: Names, kind: ReduceKind, nred: usize, x: &Buf, y: &Buf) -> Vec<Stmt> {
    let shape = x.shape();
    let (kept, red) = shape.split_at(shape.len() - nred);
    let (rows, n): (usize, usize) = (kept.iter().product(), red.iter().product());
    let (row, b, acc) = block(gpu, &mut names, rows, n, x.ty.dtype);
    let (init, combine) = reducer(kind, x.ty.dtype);
    let kept_idx = unflatten(&var(&row), kept);
    let mut body = vec![shared(&b.part), acc.alloc(), acc.store1(int(0), init)];
    body.push(b.strided(&mut names, n, |k| {
        let idx = [kept_idx.clone(), unflatten(&k, red)].concat();
        vec![acc.store1(int(0), combine(acc.load1(int(0)), x.load(&idx)))]
    }));
    body.extend(b.tree(acc.load1(int(0)), combine));
    let total = b.part.load1(int(0));
    let value = if kind == ReduceKind::Mean { total / f(n as f64) } else { total };
    // `y` holds the kept dims, and the reduced ones as 1s with `keepdims`.
    let mut out_idx = kept_idx.clone();
    out_idx.resize(y.rank(), int(0));
    body.push(ekb_ir::l1::build::if_(var(&b.tx).lt(int(1)), vec![y.store(&out_idx, value)], Vec::new()));
    vec![launch(&[(&row, rows)], &[(&b.tx, b.size)], body)]
}

/// `y = softmax(x)` or `log_softmax` over the last axis.
pub fn softmax(gpu: &Gpu, mut names: Names, log: bool, x: &Buf, y: &Buf) -> Vec<Stmt> {
    let shape = x.shape();
    let (lead, n) = (&shape[..shape.len() - 1], shape[shape.len() - 1]);
    let rows: usize = lead.iter().product();
    let (row, b, acc) = block(gpu, &mut names, rows, n, DType::F32);
    let lead_idx = unflatten(&var(&row), lead);
    let at = |k: E| [lead_idx.clone(), vec![k]].concat();
    let (m, s) = (names.fresh("m"), names.fresh("s"));
    let mut body = vec![shared(&b.part), acc.alloc(), acc.store1(int(0), f(f64::NEG_INFINITY))];
    body.push(b.strided(&mut names, n, |k| vec![acc.store1(int(0), acc.load1(int(0)).max(x.load(&at(k))))]));
    body.extend(b.tree(acc.load1(int(0)), E::max));
    body.push(let_(&m, b.part.load1(int(0))));
    // Every thread has read the maximum before `part` is reused for the sums.
    body.push(barrier());
    body.push(acc.store1(int(0), f(0.0)));
    body.push(b.strided(&mut names, n, |k| {
        vec![acc.store1(int(0), acc.load1(int(0)) + (x.load(&at(k)) - var(&m)).exp())]
    }));
    body.extend(b.tree(acc.load1(int(0)), |p, q| p + q));
    body.push(let_(&s, b.part.load1(int(0))));
    body.push(b.strided(&mut names, n, |k| {
        let v = x.load(&at(k.clone())) - var(&m);
        let value = if log { v - var(&s).log() } else { v.exp() / var(&s) };
        vec![y.store(&at(k), value)]
    }));
    vec![launch(&[(&row, rows)], &[(&b.tx, b.size)], body)]
}
