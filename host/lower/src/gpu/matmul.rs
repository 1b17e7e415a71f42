//! Matrix products on a GPU: `matmul` (with broadcast batch dims and either operand transposed)
//! and `linear` (`x @ w^T + b`): register tiles, or 16x16 tiles where the output is too small
//! for them, or dot products where it has few rows.
//!
//! Register tiles (a register-blocked SGEMM): each block computes a `gpu.matmul_block_rows` x
//! `gpu.matmul_block_cols` (64x64 by default, [`crate::Knobs`]) tile of the output, each thread
//! a `gpu.matmul_thread_rows` x `gpu.matmul_thread_cols` (8x4) part of it, consecutive rows and
//! columns, accumulated in a `local` array (128 threads of 32 accumulators). Along `k`, stages of
//! `gpu.matmul_k_tile` (16) are staged in shared memory, both tiles `k`-major (`a` transposed:
//! `sa[kk][row]`), so that at each `k` a thread reads its rows of `a` and its columns of `b` as
//! contiguous fragments into `local` arrays and adds their outer product; an f32 fragment is read
//! 4 (or 2) elements per `vectorize` loop, one vector load from shared memory each (shared
//! memory's load instructions, not its bandwidth, bound the step otherwise). Every other loop
//! inside a stage is `unroll` with literal bounds: once unrolled, every index into a `local`
//! array is a constant, so the GPU compiler keeps them in registers.
//!
//! All threads load each stage together, each `block_rows * k_tile / threads` elements of `a`
//! and `block_cols * k_tile / threads` of `b` (the stage is made shallower where either is over
//! 16), strided by the thread count, consecutive threads at consecutive addresses of the
//! operand: along `k` where `k` is its contiguous dimension (`a`, `linear`'s `w`, `b`
//! transposed), and then the shared tile has 4 columns of padding (rows stay 16-byte aligned) so
//! that the transposing stores spread over the banks. Where the tiles divide the matrices (f32,
//! no guards), a thread takes runs of 4 consecutive elements instead, one float4 load each, and
//! a tile whose rows are the operand's contiguous dimension is stored as float4s too. Stages are
//! double-buffered: a thread loads
//! the next stage from global memory into registers, multiplies the current one out of shared
//! memory, then stores the registers into the other buffer, one barrier per stage. Outside the
//! matrices the tiles hold zeros and the output stores are guarded, each guard emitted only on a
//! dimension the tiles do not divide.
//!
//! The block tile is fitted to the output (a side is halved while its half still covers the
//! output), then halved, its longer side first, while the grid has fewer blocks than
//! `gpu.matmul_min_blocks` (the GPU's compute units); every halving keeps a SIMD group of threads
//! per block. A grid still short of those blocks (a small output, whose 16x16 tiles make more
//! and smaller blocks) or a tiling over the target's threads or shared memory per block takes
//! the 16x16 tiles. A matmul or linear of at most `gpu.matmul_few_rows` rows (on by default for
//! GPUs of 64 compute units or more) whose grid would hold fewer than 256 threads per compute
//! unit takes 2x2 thread tiles instead, where they give its blocks more threads: the
//! projections of a transformer layer over a few dozen tokens would otherwise run as one-warp
//! blocks of long serial `k`, or as 16x16 tiles. Where such a grid still holds fewer than 256
//! threads per compute unit, its blocks are made of several groups of those threads (up to
//! `gpu.matmul_split_k`, a power of two dividing the stages): group `g` multiplies out its own
//! share of the stages through its own double-buffered tiles, then the groups after the first
//! hand their sums to it through shared memory, and it adds them in group order and stores.
//!
//! 16x16 tiles: each block computes a `gpu.matmul_tile` x `gpu.matmul_tile` (16x16) tile of the
//! output, one element per thread. Along `k`, tiles of both operands are staged in shared memory
//! (zero outside the matrices), a barrier, a tile-step product from shared memory, another
//! barrier before the tiles are overwritten. The `b` tile has a padding column so that a warp
//! reading down a column of it hits distinct banks.
//!
//! In both, each thread adds its products in increasing `k`, the order of the CPU schedules.
//!
//! i8 operands (integer products) are staged as i8 tiles (a quarter of the f32 tiles' shared
//! memory): a load widens each element to i32 and the store back keeps exactly that byte, the
//! padding is 0, and each thread holds its fragments and accumulates in i32, the result's dtype
//! (wrapping sums are exact in any order).
//!
//! Dot products, for outputs of at most `gpu.dot_max_rows` (4) rows per batch (matrix-vector products,
//! a decoding step's projections), where a tile would leave most of its threads idle: one block
//! per output element, each thread summing a strided share of `k`, then a shared-memory tree
//! over the block's partial sums (as the row reductions do); consecutive threads read
//! consecutive elements of a row of `w` (`linear`, or `matmul` with `b` transposed). Where `b`'s
//! columns are contiguous instead, those outputs are column reductions over `k`
//! (`super::strip`), whose threads read consecutive columns.

use super::reduce::Block;
use super::{barrier, launch, shared, unflatten, Gpu};
use crate::elementwise::broadcast_index;
use crate::recipe::Knob;
use crate::sched::simple_loop;
use ekb_ir::l0::ReduceKind;
use ekb_ir::l1::build::{if_, int, let_, loop_, var, zero, Buf, Names, E};
use ekb_ir::l1::{LoopKind, Stmt};
use ekb_ir::{DType, TensorType};

/// An operand element given the batch index and the two matrix indices.
pub(super) type At<'a> = &'a dyn Fn(&[E], E, E) -> E;
/// The store of an output element given the batch index, row, column and value.
pub(super) type Store<'a> = &'a dyn Fn(&[E], E, E, E) -> Stmt;

/// Where the operands and the result of one product live.
pub(super) struct Product<'a> {
    pub m: usize,
    pub n: usize,
    pub k: usize,
    /// Independent products (the grid's z dimension).
    pub batch: usize,
    /// `a[.., row, k]` given the batch index, the row and `k`.
    pub a_at: At<'a>,
    /// `b[.., k, col]` given the batch index, `k` and the column.
    pub b_at: At<'a>,
    /// Whether `k` is the contiguous dimension of `a` in memory (else its rows are), and of `b`
    /// (else its columns are).
    pub a_along_k: bool,
    pub b_along_k: bool,
    /// The statement storing an output element.
    pub store: Store<'a>,
    /// The batch dims, unflattened from the grid's z index.
    pub batch_shape: &'a [usize],
    /// The operands' dtype (the shared tiles') and the result's (the accumulator's): f32 and
    /// f32, or i8 and i32.
    pub operands: DType,
    pub result: DType,
    /// Whether `gpu.matmul_few_rows` applies: matmul and linear (measured there), not the
    /// convolutions' products.
    pub few_rows: bool,
}

/// CUDA's limit on the grid's y and z extents, the smallest of the targets.
const GRID_YZ_MAX: usize = 65535;

/// Register tiles, 16x16 tiles or dot products, by the output's size.
pub(super) fn product(gpu: &Gpu, names: Names, p: &Product) -> Option<Vec<Stmt>> {
    // Dot products up to `gpu.dot_max_rows` rows: at 4 rows a 16x16 tile already leaves three
    // quarters of its threads idle.
    if p.m <= gpu.knobs.get(Knob::GpuDotMaxRows) {
        if p.b_along_k {
            dot(gpu, names, p)
        } else {
            columns(gpu, names, p)
        }
    } else if let Some(t) = Tiling::for_product(gpu, p) {
        Some(registers(names, p, t))
    } else {
        tiled(gpu, names, p)
    }
}

/// Threads a block of register tiles should have for products of few rows (8 warps).
const FEW_ROWS_THREADS: usize = 256;

/// The register tiling of one product (see the module header).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Tiling {
    /// Output rows and columns per block.
    bm: usize,
    bn: usize,
    /// Output rows and columns per thread.
    tm: usize,
    tn: usize,
    /// `k` per shared-memory stage.
    bk: usize,
    /// Groups of threads per block that split the stages between them (1: none), each with
    /// its own shared tiles; their sums meet in shared memory.
    splits: usize,
}

/// The most elements of an operand a thread loads per stage (the stage is made shallower).
const MAX_LOADS: usize = 16;

/// Padding columns of a shared tile whose loads run along `k` (4: its rows stay 16-byte
/// aligned, for the fragments' vector loads).
fn padding(along_k: bool) -> usize {
    if along_k {
        4
    } else {
        0
    }
}

impl Tiling {
    /// The register tiling of `p`: the knobs' ([`Tiling::choose`]), or, for a product of at
    /// most `gpu.matmul_few_rows` rows whose grid would hold fewer than [`FEW_ROWS_THREADS`]
    /// threads per compute unit (or that would take the 16x16 tiles), the same with 2x2 thread
    /// tiles where they give its blocks more threads: a block tile fitted to few rows and
    /// halved towards the compute units is a warp or two of 8x4 thread tiles, each thread a
    /// long serial `k`, and the SMs sit mostly idle.
    fn for_product(gpu: &Gpu, p: &Product) -> Option<Tiling> {
        let knob = |k| gpu.knobs.get(k);
        let chosen =
            Tiling::choose(gpu, p, knob(Knob::GpuMatmulThreadRows), knob(Knob::GpuMatmulThreadCols), false);
        let short = |t: &Tiling| t.blocks(p) * t.threads() < gpu.units * FEW_ROWS_THREADS;
        let few_rows = p.few_rows && p.m <= knob(Knob::GpuMatmulFewRows);
        let few = few_rows && chosen.as_ref().is_none_or(short);
        // A grid short of `gpu.matmul_min_blocks` is kept where its split blocks hold at least
        // the threads of the 16x16 tiles it replaces (each of those a serial `k`).
        let tile = knob(Knob::GpuMatmulTile);
        let tiled_threads = p.batch * p.m.div_ceil(tile) * p.n.div_ceil(tile) * tile * tile;
        let filled = |t: &Tiling| {
            let s = t.split(gpu, p);
            t.blocks(p) >= knob(Knob::GpuMatmulMinBlocks)
                || s.blocks(p) * s.threads() * s.splits >= tiled_threads
        };
        let tiling = match few.then(|| Tiling::choose(gpu, p, 2, 2, true)).flatten().filter(filled) {
            Some(small) if chosen.is_none_or(|t| small.threads() > t.threads()) => Some(small),
            _ => chosen,
        };
        tiling.map(|t| if few_rows { t.split(gpu, p) } else { t })
    }

    /// `self` with its stages split between groups of threads (`gpu.matmul_split_k` at most, a
    /// power of two), doubled while the grid holds fewer than [`FEW_ROWS_THREADS`] threads per
    /// compute unit, each group keeps two stages or more of an equal share, and the block fits
    /// the target: a short grid's threads each run a long serial `k` otherwise (a transformer
    /// layer's projections over a few dozen tokens, whose time grew with `k`, not the output).
    fn split(self, gpu: &Gpu, p: &Product) -> Tiling {
        let stages = p.k.div_ceil(self.bk);
        let mut t = self;
        loop {
            let next = Tiling { splits: t.splits * 2, ..t };
            let ok = next.splits <= gpu.knobs.get(Knob::GpuMatmulSplitK)
                && t.blocks(p) * t.threads() * t.splits < gpu.units * FEW_ROWS_THREADS
                && stages.is_multiple_of(next.splits)
                && stages / next.splits >= 2
                && next.threads() * next.splits <= gpu.max_threads
                && next.shared_bytes(p) <= gpu.shared_bytes;
            if !ok {
                return t;
            }
            t = next;
        }
    }

    /// The tiling of `p` with `tm` x `tn` thread tiles, its block tile fitted to the output,
    /// then halved towards `gpu.matmul_min_blocks` blocks; `None` where the tiling is over the
    /// target's limits or, unless `short_ok`, the grid stays short of those blocks (a small
    /// output, whose 16x16 tiles are more blocks). Products of few rows pass `short_ok`: their
    /// blocks are then split along `k` ([`Tiling::split`]), which 16x16 tiles are not (a
    /// projection of 8 rows to 896 columns over 4864 had 56 blocks of 16x16, each a serial
    /// `k` of 304 stages).
    fn choose(gpu: &Gpu, p: &Product, tm: usize, tn: usize, short_ok: bool) -> Option<Tiling> {
        let knob = |k| gpu.knobs.get(k);
        // Block tiles are whole numbers of thread tiles.
        let whole = |b: usize, t: usize| (b / t).max(1) * t;
        let mut t = Tiling {
            bm: whole(knob(Knob::GpuMatmulBlockRows), tm),
            bn: whole(knob(Knob::GpuMatmulBlockCols), tn),
            tm,
            tn,
            bk: knob(Knob::GpuMatmulKTile),
            splits: 1,
        };
        // The tiling with the rows (or columns) of its block tile halved, where the block keeps
        // a SIMD group of threads.
        let halved = |t: &Tiling, rows: bool| {
            let h = if rows {
                Tiling { bm: whole(t.bm / 2, tm), ..*t }
            } else {
                Tiling { bn: whole(t.bn / 2, tn), ..*t }
            };
            (h != *t && h.threads() >= gpu.simd).then_some(h)
        };
        // No larger than the output: a side is halved while its half still covers the output.
        while let Some(h) = halved(&t, true).filter(|h| h.bm >= p.m) {
            t = h;
        }
        while let Some(h) = halved(&t, false).filter(|h| h.bn >= p.n) {
            t = h;
        }
        let blocks = |t: &Tiling| t.blocks(p);
        let min_blocks = knob(Knob::GpuMatmulMinBlocks);
        while blocks(&t) < min_blocks {
            let longer_rows = t.bm >= t.bn;
            match halved(&t, longer_rows).or_else(|| halved(&t, !longer_rows)) {
                Some(h) => t = h,
                None => break,
            }
        }
        // Each thread's loads of a stage are unrolled: a block of few threads takes shallower
        // stages rather than long kernels (slow for PoCL to compile).
        while t.bk > 1 && t.bm.max(t.bn) * t.bk > MAX_LOADS * t.threads() {
            t.bk /= 2;
        }
        let fits = (short_ok || blocks(&t) >= min_blocks)
            && t.threads() <= gpu.max_threads
            && t.shared_bytes(p) <= gpu.shared_bytes
            && p.m.div_ceil(t.bm) <= GRID_YZ_MAX
            && p.batch <= GRID_YZ_MAX;
        fits.then_some(t)
    }

    /// Threads of one group (the block has `splits` of them).
    fn threads(&self) -> usize {
        (self.bm / self.tm) * (self.bn / self.tn)
    }

    fn blocks(&self, p: &Product) -> usize {
        p.m.div_ceil(self.bm) * p.n.div_ceil(self.bn) * p.batch
    }

    /// Both double-buffered shared tiles of every group, and the sums the groups after the
    /// first hand to it.
    fn shared_bytes(&self, p: &Product) -> u64 {
        let cols = self.bm + padding(p.a_along_k) + self.bn + padding(p.b_along_k);
        let tiles = 2 * self.splits * self.bk * cols * p.operands.size_bytes();
        let sums = (self.splits - 1) * self.threads() * self.tm * self.tn * p.result.size_bytes();
        (tiles + sums) as u64
    }
}

/// One operand's part of a stage: its shared tile `[2, k_tile, rows + padding]` (two buffers,
/// `k`-major) and the registers a thread loads its share of the tile into.
struct Operand<'a> {
    /// Rows of the tile: output rows (`a`) or columns (`b`); the matrix's extent along them.
    rows: usize,
    extent: usize,
    along_k: bool,
    /// The element at a row of the matrix and a `k`.
    at: &'a dyn Fn(E, E) -> E,
    /// The tile's first row: `by * block_rows` or `bx * block_cols`.
    origin: E,
    tile: Buf,
    regs: Buf,
}

/// What the loads of every stage share: the block's thread index and thread count, `k`, the
/// stage's depth (`k_tile`) and the registers' zero.
struct Stage<'a> {
    tid: &'a str,
    threads: usize,
    k: usize,
    bk: usize,
    zero: E,
}

impl Operand<'_> {
    /// Elements of the tile per thread.
    fn per_thread(&self, s: &Stage) -> usize {
        (self.rows * s.bk).div_ceil(s.threads)
    }

    /// Elements of the operand's contiguous dimension a thread loads as one vector: 4 where
    /// every thread takes whole runs of 4 of the tile without guards (f32, the matrix and `k`
    /// divided by the tile, the threads by the runs per tile line), else 1.
    fn width(&self, s: &Stage, f32: bool) -> usize {
        let run = if self.along_k { s.bk } else { self.rows };
        let vectors = f32
            && self.extent.is_multiple_of(self.rows)
            && s.k.is_multiple_of(s.bk)
            && run.is_multiple_of(4)
            && self.per_thread(s).is_multiple_of(4)
            && (self.rows * s.bk).is_multiple_of(s.threads * 4)
            && s.threads.is_multiple_of(run / 4);
        if vectors {
            4
        } else {
            1
        }
    }

    /// A thread's vector `lo` of `width` consecutive elements along the contiguous dimension, the
    /// vectors of consecutive threads consecutive: its line of the tile (a row where `k` is
    /// contiguous, else a `k`) and its first element along that line (a multiple of `width`).
    fn vector(&self, s: &Stage, width: usize, lo: &str) -> (E, E) {
        let run = if self.along_k { s.bk } else { self.rows };
        let per_line = run / width;
        let tid = var(s.tid);
        let line = var(lo) * int(s.threads / per_line) + tid.clone() / int(per_line);
        (line, tid % int(per_line) * int(width))
    }

    /// The `lets` placing element `l` of the thread's share in the tile, that element's (row,
    /// `k`) in the tile, and, where the threads do not divide the tile, the condition that it
    /// is in the tile. Consecutive threads take consecutive elements along the operand's
    /// contiguous dimension.
    fn element(&self, names: &mut Names, s: &Stage, l: &str) -> (Vec<Stmt>, E, E, Option<E>) {
        let numel = self.rows * s.bk;
        let run = if self.along_k { s.bk } else { self.rows };
        let tid = var(s.tid);
        let (major, minor, lets, inside) = if numel.is_multiple_of(s.threads) && s.threads.is_multiple_of(run)
        {
            let major = var(l) * int(s.threads / run) + tid.clone() / int(run);
            (major, tid % int(run), Vec::new(), None)
        } else {
            let e = names.fresh("e");
            let lets = vec![let_(&e, var(l) * int(s.threads) + tid)];
            let inside = (!numel.is_multiple_of(s.threads)).then(|| var(&e).lt(int(numel)));
            (var(&e) / int(run), var(&e) % int(run), lets, inside)
        };
        let (row, kk) = if self.along_k { (major, minor) } else { (minor, major) };
        (lets, row, kk, inside)
    }

    /// Loads the thread's share of stage `stage` (an index of `k_tile`s) into its registers,
    /// zero outside the matrix; `width` elements per vector load where [`Operand::width`] allows.
    fn load(&self, names: &mut Names, s: &Stage, stage: E, width: usize) -> Stmt {
        if width > 1 {
            let (lo, v) = (names.fresh("l"), names.fresh("v"));
            let (line, first) = self.vector(s, width, &lo);
            // Indices written out, not `let`s, so that the load's last index is `BASE + v`.
            let (row, kg) = if self.along_k {
                (self.origin.clone() + line, stage * int(s.bk) + first + var(&v))
            } else {
                (self.origin.clone() + first + var(&v), stage * int(s.bk) + line)
            };
            let value = (self.at)(row, kg);
            let set = self.regs.store1(var(&lo) * int(width) + var(&v), value);
            let vector = simple_loop(LoopKind::Vectorize, &v, width, vec![set]);
            return simple_loop(LoopKind::Unroll, &lo, self.per_thread(s) / width, vec![vector]);
        }
        let l = names.fresh("l");
        let (mut body, row, kk, inside) = self.element(names, s, &l);
        let (r, kg) = (names.fresh("r"), names.fresh("kg"));
        let mut load = vec![let_(&r, self.origin.clone() + row), let_(&kg, stage * int(s.bk) + kk)];
        let mut guard = Vec::new();
        if !self.extent.is_multiple_of(self.rows) {
            guard.push(var(&r).lt(int(self.extent)));
        }
        if !s.k.is_multiple_of(s.bk) {
            guard.push(var(&kg).lt(int(s.k)));
        }
        let value = (self.at)(var(&r), var(&kg));
        let set = |v| self.regs.store1(var(&l), v);
        load.push(match guard.into_iter().reduce(E::and) {
            Some(c) => if_(c, vec![set(value)], vec![set(s.zero.clone())]),
            None => set(value),
        });
        body.extend(within(inside, load));
        simple_loop(LoopKind::Unroll, &l, self.per_thread(s), body)
    }

    /// Stores the thread's registers into buffer `buf` of the shared tile, as [`Operand::load`]
    /// placed them: one vector store per vector where the tile's rows are the contiguous
    /// dimension, else (`k` contiguous: the tile is transposed) element by element.
    fn stage(&self, names: &mut Names, s: &Stage, buf: E, width: usize) -> Stmt {
        if width > 1 {
            let (lo, v) = (names.fresh("l"), names.fresh("v"));
            let (line, first) = self.vector(s, width, &lo);
            let (row, kk) = if self.along_k { (line, first + var(&v)) } else { (first + var(&v), line) };
            let set = self.tile.store(&[buf, kk, row], self.regs.load1(var(&lo) * int(width) + var(&v)));
            let kind = if self.along_k { LoopKind::Unroll } else { LoopKind::Vectorize };
            let inner = simple_loop(kind, &v, width, vec![set]);
            return simple_loop(LoopKind::Unroll, &lo, self.per_thread(s) / width, vec![inner]);
        }
        let l = names.fresh("l");
        let (mut body, row, kk, inside) = self.element(names, s, &l);
        body.extend(within(inside, vec![self.tile.store(&[buf, kk, row], self.regs.load1(var(&l)))]));
        simple_loop(LoopKind::Unroll, &l, self.per_thread(s), body)
    }
}

/// `body`, under `if cond` where there is one.
fn within(cond: Option<E>, body: Vec<Stmt>) -> Vec<Stmt> {
    match cond {
        Some(c) => vec![if_(c, body, Vec::new())],
        None => body,
    }
}

/// The register-tiled kernel (see the module header).
fn registers(mut names: Names, p: &Product, t: Tiling) -> Vec<Stmt> {
    let Tiling { bm, bn, tm, tn, bk, splits } = t;
    let threads = t.threads();
    let (gm, gn, stages) = (p.m.div_ceil(bm), p.n.div_ceil(bn), p.k.div_ceil(bk));
    // Stages per group of threads: group `grp` multiplies out stages `grp * share ..`.
    let share = stages / splits;
    // The thread's place: `grp` its group, `tid` its index in the group, `ty`, `tx` in the
    // group's grid of thread tiles; its tile's first row and column in the block's tile.
    let [bx, by, bz, lane, grp, tid, ty, tx, row0, col0] =
        ["bx", "by", "bz", "lane", "grp", "tid", "ty", "tx", "row0", "col0"].map(|n| names.fresh(n));
    let split = splits > 1;
    // A group's buffer `e` of its shared tiles, and its stage `e`.
    let buffer = |e: E| if split { var(&grp) * int(2) + e } else { e };
    let stage_of = |e: E| if split { var(&grp) * int(share) + e } else { e };
    let bidx = unflatten(&var(&bz), p.batch_shape);
    let local = |names: &mut Names, base: &str, dtype: DType, len: usize| {
        Buf::new(names.fresh(base), TensorType::new(dtype, [len]))
    };
    let (acc, fa, fb) = (
        local(&mut names, "acc", p.result, tm * tn),
        local(&mut names, "fa", p.result, tm),
        local(&mut names, "fb", p.result, tn),
    );
    let a_at = |r: E, kk: E| (p.a_at)(&bidx, r, kk);
    let b_at = |c: E, kk: E| (p.b_at)(&bidx, kk, c);
    let s = Stage { tid: &tid, threads, k: p.k, bk, zero: zero(p.result) };
    let f32 = p.operands == DType::F32;
    // An operand's shared tile (two buffers, `k`-major) and the registers of its loads.
    let mut bufs = |rows: usize, along_k: bool, base: &str| {
        let tile = TensorType::new(p.operands, [2 * splits, bk, rows + padding(along_k)]);
        let regs = (rows * bk).div_ceil(threads);
        (
            Buf::new(names.fresh(&format!("s{base}")), tile),
            local(&mut names, &format!("p{base}"), p.result, regs),
        )
    };
    let ((sa, pa), (sb, pb)) = (bufs(bm, p.a_along_k, "a"), bufs(bn, p.b_along_k, "b"));
    let ops = [
        Operand {
            rows: bm,
            extent: p.m,
            along_k: p.a_along_k,
            at: &a_at,
            origin: var(&by) * int(bm),
            tile: sa,
            regs: pa,
        },
        Operand {
            rows: bn,
            extent: p.n,
            along_k: p.b_along_k,
            at: &b_at,
            origin: var(&bx) * int(bn),
            tile: sb,
            regs: pb,
        },
    ];
    let mut body: Vec<Stmt> = ops.iter().map(|o| shared(&o.tile)).collect();
    body.extend([acc.alloc(), fa.alloc(), fb.alloc()]);
    body.extend(ops.iter().map(|o| o.regs.alloc()));
    if split {
        body.extend([let_(&grp, var(&lane) / int(threads)), let_(&tid, var(&lane) % int(threads))]);
    }
    body.extend([
        let_(&ty, var(&tid) / int(bn / tn)),
        let_(&tx, var(&tid) % int(bn / tn)),
        let_(&row0, var(&ty) * int(tm)),
        let_(&col0, var(&tx) * int(tn)),
    ]);
    let z = names.fresh("z");
    body.push(simple_loop(LoopKind::Unroll, &z, tm * tn, vec![acc.store1(var(&z), zero(p.result))]));
    // Stage 0 into buffer 0.
    let widths = ops.each_ref().map(|o| o.width(&s, f32));
    for (o, w) in ops.iter().zip(widths) {
        body.push(o.load(&mut names, &s, stage_of(int(0)), w));
    }
    for (o, w) in ops.iter().zip(widths) {
        body.push(o.stage(&mut names, &s, buffer(int(0)), w));
    }
    body.push(barrier());
    // Each stage: load the next one into registers, multiply this one out, store the next.
    let [st, cur, nt, nb, kk, fi, fj, i, j] =
        ["st", "cur", "nt", "nb", "kk", "fi", "fj", "i", "j"].map(|n| names.fresh(n));
    let mut step = vec![let_(&cur, buffer(var(&st) % int(2)))];
    if share > 1 {
        let loads =
            ops.iter().zip(widths).map(|(o, w)| o.load(&mut names, &s, stage_of(var(&nt)), w)).collect();
        step.extend([let_(&nt, var(&st) + int(1)), if_(var(&nt).lt(int(share)), loads, Vec::new())]);
    }
    let [fio, fjo] = ["fio", "fjo"].map(|n| names.fresh(n));
    // A thread's fragment of a stage row: 4 (or 2) consecutive elements per vector load from the
    // shared tile (`row0` and `col0` are multiples of the fragment, the tile's rows 16-byte
    // aligned), a quarter of the load instructions of scalar ones.
    // (i8 tiles, which no vector type of the emitters reads, keep scalar loads.)
    let vectors = f32;
    let fragment = |f: &Buf, o: &Operand, first: &str, (outer, v): (&str, &str), len: usize| {
        let width = [4, 2, 1].into_iter().find(|w| vectors && len.is_multiple_of(*w)).unwrap_or(1);
        let at = |e: E| o.tile.load(&[var(&cur), var(&kk), e]);
        if width == 1 {
            return simple_loop(LoopKind::Unroll, v, len, vec![f.store1(var(v), at(var(first) + var(v)))]);
        }
        // `first + outer * width + v`: the vector's base, then its lane.
        let base = var(first) + var(outer) * int(width);
        let load = f.store1(var(outer) * int(width) + var(v), at(base + var(v)));
        let vector = simple_loop(LoopKind::Vectorize, v, width, vec![load]);
        simple_loop(LoopKind::Unroll, outer, len / width, vec![vector])
    };
    let cell = var(&i) * int(tn) + var(&j);
    let fma = acc.store1(cell.clone(), acc.load1(cell) + fa.load1(var(&i)) * fb.load1(var(&j)));
    step.push(simple_loop(
        LoopKind::Unroll,
        &kk,
        bk,
        vec![
            fragment(&fa, &ops[0], &row0, (&fio, &fi), tm),
            fragment(&fb, &ops[1], &col0, (&fjo, &fj), tn),
            simple_loop(LoopKind::Unroll, &i, tm, vec![simple_loop(LoopKind::Unroll, &j, tn, vec![fma])]),
        ],
    ));
    if share > 1 {
        let mut stores = vec![let_(&nb, buffer(var(&nt) % int(2)))];
        stores.extend(ops.iter().zip(widths).map(|(o, w)| o.stage(&mut names, &s, var(&nb), w)));
        step.push(if_(var(&nt).lt(int(share)), stores, Vec::new()));
    }
    step.push(barrier());
    body.push(simple_loop(LoopKind::Serial, &st, share, step));
    // Split stages: every group after the first hands its sums over in shared memory, and the
    // first adds them to its own, group by group, and stores the outputs.
    let cells = tm * tn;
    let mut outputs = Vec::new();
    if split {
        let sums = Buf::new(names.fresh("sums"), TensorType::new(p.result, [(splits - 1) * threads * cells]));
        let [z, other] = ["z", "other"].map(|n| names.fresh(n));
        let slot = |g: E, z: &str| (g * int(threads) + var(&tid)) * int(cells) + var(z);
        body.insert(0, shared(&sums));
        let hand = simple_loop(
            LoopKind::Unroll,
            &z,
            cells,
            vec![sums.store1(slot(var(&grp) - int(1), &z), acc.load1(var(&z)))],
        );
        body.extend([if_(int(0).lt(var(&grp)), vec![hand], Vec::new()), barrier()]);
        let add = acc.store1(var(&z), acc.load1(var(&z)) + sums.load1(slot(var(&other), &z)));
        let each = simple_loop(LoopKind::Unroll, &z, cells, vec![add]);
        outputs.push(simple_loop(LoopKind::Serial, &other, splits - 1, vec![each]));
    }
    // The thread's outputs, guarded on the dimensions the tiles do not divide.
    let [oi, oj, row, col] = ["oi", "oj", "row", "col"].map(|n| names.fresh(n));
    let value = acc.load1(var(&oi) * int(tn) + var(&oj));
    let store = within(
        (!p.n.is_multiple_of(bn)).then(|| var(&col).lt(int(p.n))),
        vec![(p.store)(&bidx, var(&row), var(&col), value)],
    );
    let mut per_col = vec![let_(&col, var(&bx) * int(bn) + var(&col0) + var(&oj))];
    per_col.extend(store);
    let mut per_row = vec![let_(&row, var(&by) * int(bm) + var(&row0) + var(&oi))];
    per_row.extend(within(
        (!p.m.is_multiple_of(bm)).then(|| var(&row).lt(int(p.m))),
        vec![simple_loop(LoopKind::Unroll, &oj, tn, per_col)],
    ));
    outputs.push(simple_loop(LoopKind::Unroll, &oi, tm, per_row));
    if split {
        body.push(if_(var(&grp).lt(int(1)), outputs, Vec::new()));
    } else {
        body.extend(outputs);
    }
    let mut grid = vec![(bx.as_str(), gn), (by.as_str(), gm)];
    if p.batch > 1 {
        grid.push((bz.as_str(), p.batch));
    }
    let index = if split { &lane } else { &tid };
    vec![launch(&grid, &[(index, threads * splits)], body)]
}

/// Few rows against a `b` whose columns are contiguous: per output row, a column reduction
/// over `k` (`super::strip`: a block's threads take a warp of consecutive columns, so their
/// loads of `b` coalesce, and split `k` between them), or the dot products where `k` stays whole.
fn columns(gpu: &Gpu, mut names: Names, p: &Product) -> Option<Vec<Stmt>> {
    let rows = [p.batch, p.m];
    let term = |o: E, kk: E, c: E| {
        let bo = unflatten(&o, &rows);
        let bidx = unflatten(&bo[0], p.batch_shape);
        (p.a_at)(&bidx, bo[1].clone(), kk.clone()) * (p.b_at)(&bidx, kk, c)
    };
    let store = |o: E, c: E, v: E| {
        let bo = unflatten(&o, &rows);
        (p.store)(&unflatten(&bo[0], p.batch_shape), bo[1].clone(), c, v)
    };
    let extents = [p.batch * p.m, p.k, p.n];
    match super::strip::reduce_terms(gpu, &mut names, ReduceKind::Sum, extents, p.result, &term, &store) {
        Some(body) => Some(body),
        None => dot(gpu, names, p),
    }
}

fn dot(gpu: &Gpu, mut names: Names, p: &Product) -> Option<Vec<Stmt>> {
    if p.m > GRID_YZ_MAX || p.batch > GRID_YZ_MAX {
        return None;
    }
    let [col, row, bz] = ["col", "row", "bz"].map(|n| names.fresh(n));
    let b = Block::new(&mut names, gpu.block_tree(p.k.min(gpu.knobs.get(Knob::GpuDotThreads))), p.result);
    let acc = Buf::new(names.fresh("acc"), TensorType::new(p.result, [1]));
    let bidx = unflatten(&var(&bz), p.batch_shape);
    let mut body = vec![shared(&b.part), acc.alloc(), acc.store1(int(0), zero(p.result))];
    body.push(b.strided(&mut names, p.k, |kk| {
        let prod = (p.a_at)(&bidx, var(&row), kk.clone()) * (p.b_at)(&bidx, kk, var(&col));
        vec![acc.store1(int(0), acc.load1(int(0)) + prod)]
    }));
    body.extend(b.tree(acc.load1(int(0)), |x, y| x + y));
    body.push(if_(
        var(&b.tx).lt(int(1)),
        vec![(p.store)(&bidx, var(&row), var(&col), b.part.load1(int(0)))],
        Vec::new(),
    ));
    let mut grid = vec![(col.as_str(), p.n), (row.as_str(), p.m)];
    if p.batch > 1 {
        grid.push((bz.as_str(), p.batch));
    }
    Some(vec![launch(&grid, &[(&b.tx, b.size)], body)])
}

fn tiled(gpu: &Gpu, mut names: Names, p: &Product) -> Option<Vec<Stmt>> {
    // The tile edge (`gpu.matmul_tile`): 16x16 = 256 threads per block by default.
    let tile = gpu.knobs.get(Knob::GpuMatmulTile);
    let (gm, gn) = (p.m.div_ceil(tile), p.n.div_ceil(tile));
    if tile * tile > gpu.max_threads || gm > GRID_YZ_MAX || p.batch > GRID_YZ_MAX {
        return None;
    }
    let [bx, by, bz, tx, ty] = ["bx", "by", "bz", "tx", "ty"].map(|n| names.fresh(n));
    let ta = Buf::new(names.fresh("ta"), TensorType::new(p.operands, [tile, tile]));
    let tb = Buf::new(names.fresh("tb"), TensorType::new(p.operands, [tile, tile + 1]));
    let acc = Buf::new(names.fresh("acc"), TensorType::new(p.result, [1]));
    let [row, col, t, ka, kb, kk] = ["row", "col", "t", "ka", "kb", "kk"].map(|n| names.fresh(n));
    let bidx = unflatten(&var(&bz), p.batch_shape);
    let (txv, tyv) = (var(&tx), var(&ty));
    let pad = zero(p.operands);
    let stage = vec![
        let_(&ka, var(&t) * int(tile) + txv.clone()),
        if_(
            var(&row).lt(int(p.m)).and(var(&ka).lt(int(p.k))),
            vec![ta.store(&[tyv.clone(), txv.clone()], (p.a_at)(&bidx, var(&row), var(&ka)))],
            vec![ta.store(&[tyv.clone(), txv.clone()], pad.clone())],
        ),
        let_(&kb, var(&t) * int(tile) + tyv.clone()),
        if_(
            var(&kb).lt(int(p.k)).and(var(&col).lt(int(p.n))),
            vec![tb.store(&[tyv.clone(), txv.clone()], (p.b_at)(&bidx, var(&kb), var(&col)))],
            vec![tb.store(&[tyv.clone(), txv.clone()], pad)],
        ),
        barrier(),
        loop_(
            LoopKind::Unroll,
            &kk,
            int(0),
            int(tile),
            vec![acc.store1(
                int(0),
                acc.load1(int(0)) + ta.load(&[tyv.clone(), var(&kk)]) * tb.load(&[var(&kk), txv.clone()]),
            )],
        ),
        barrier(),
    ];
    let body = vec![
        shared(&ta),
        shared(&tb),
        acc.alloc(),
        let_(&row, var(&by) * int(tile) + tyv.clone()),
        let_(&col, var(&bx) * int(tile) + txv.clone()),
        acc.store1(int(0), zero(p.result)),
        loop_(LoopKind::Serial, &t, int(0), int(p.k.div_ceil(tile)), stage),
        if_(
            var(&row).lt(int(p.m)).and(var(&col).lt(int(p.n))),
            vec![(p.store)(&bidx, var(&row), var(&col), acc.load1(int(0)))],
            Vec::new(),
        ),
    ];
    let mut grid = vec![(bx.as_str(), gn), (by.as_str(), gm)];
    if p.batch > 1 {
        grid.push((bz.as_str(), p.batch));
    }
    Some(vec![launch(&grid, &[(&tx, tile), (&ty, tile)], body)])
}

/// `y = matmul(a, b)` with numpy batch broadcasting, either operand transposed.
pub fn matmul(gpu: &Gpu, names: Names, ta: bool, tb: bool, a: &Buf, b: &Buf, y: &Buf) -> Option<Vec<Stmt>> {
    if a.rank() < 2 || b.rank() < 2 || a.ty.dtype != b.ty.dtype {
        return None;
    }
    let (ra, rb, ry) = (a.rank(), b.rank(), y.rank());
    let (m, n) = (y.shape()[ry - 2], y.shape()[ry - 1]);
    let k = if ta { a.shape()[ra - 2] } else { a.shape()[ra - 1] };
    let batch_shape = &y.shape()[..ry - 2];
    let a_at = |bi: &[E], r: E, kk: E| {
        let mut idx = broadcast_index(bi, &a.shape()[..ra - 2]);
        idx.extend(if ta { [kk, r] } else { [r, kk] });
        a.load(&idx)
    };
    let b_at = |bi: &[E], kk: E, c: E| {
        let mut idx = broadcast_index(bi, &b.shape()[..rb - 2]);
        idx.extend(if tb { [c, kk] } else { [kk, c] });
        b.load(&idx)
    };
    let store = |bi: &[E], r: E, c: E, v: E| y.store(&[bi.to_vec(), vec![r, c]].concat(), v);
    let p = Product {
        m,
        n,
        k,
        batch: batch_shape.iter().product(),
        a_at: &a_at,
        b_at: &b_at,
        a_along_k: !ta,
        b_along_k: tb,
        store: &store,
        batch_shape,
        operands: a.ty.dtype,
        result: y.ty.dtype,
        few_rows: true,
    };
    product(gpu, names, &p)
}

/// `y = linear(x, w[, bias])`: `y[.., o] = sum_i x[.., i] * w[o, i] + bias[o]`; the leading dims
/// of `x` flatten into the rows.
pub fn linear(gpu: &Gpu, names: Names, x: &Buf, w: &Buf, bias: Option<&Buf>, y: &Buf) -> Option<Vec<Stmt>> {
    if x.ty.dtype != w.ty.dtype || x.rank() < 1 {
        return None;
    }
    let lead = &x.shape()[..x.rank() - 1];
    let (m, k, n) = (lead.iter().product(), x.shape()[x.rank() - 1], w.shape()[0]);
    let a_at = |_: &[E], r: E, kk: E| x.load(&[unflatten(&r, lead), vec![kk]].concat());
    let b_at = |_: &[E], kk: E, c: E| w.load(&[c, kk]);
    let store = |_: &[E], r: E, c: E, v: E| {
        let value = match bias {
            Some(bias) => v + bias.load1(c.clone()),
            None => v,
        };
        y.store(&[unflatten(&r, lead), vec![c]].concat(), value)
    };
    let p = Product {
        m,
        n,
        k,
        batch: 1,
        a_at: &a_at,
        b_at: &b_at,
        a_along_k: true,
        b_along_k: true,
        store: &store,
        batch_shape: &[],
        operands: x.ty.dtype,
        result: y.ty.dtype,
        few_rows: true,
    };
    product(gpu, names, &p)
}

#[cfg(test)]
mod tests {
    use crate::{lower_gpu_with, Knobs, Schedule};
    use ekb_ir::l0::{check, inputs, interp, Graph};
    use ekb_ir::l1::{self, Kernel, LaunchDim, LoopKind, Module, Scope, Stmt};
    use ekb_ir::tensor::{compare, Tolerance};
    use ekb_ir::{DType, SourceFile, TargetProfile};

    /// `text` lowered for `target` with its default knobs changed by `set`.
    fn lowered(text: &str, target: &str, set: &[(&str, usize)]) -> (Graph, Module) {
        let g = check::load(&SourceFile::new("t.ekir", text)).unwrap_or_else(|d| panic!("{}", d[0]));
        let target = TargetProfile::load(target).unwrap();
        let mut knobs = Knobs::for_target(&target);
        for (name, value) in set {
            knobs.set(name, *value).unwrap();
        }
        let m = lower_gpu_with(&g, Schedule::Default, &knobs, &target).unwrap_or_else(|d| panic!("{d}"));
        (g, m)
    }

    /// Runs `m` in the L1 interpreter on `g`'s inputs for `seed` and compares every output with
    /// the L0 interpreter's.
    fn check_outputs(g: &Graph, m: &Module, seed: u64) {
        let bufs = inputs::generate(g, seed).unwrap();
        let tensors = bufs.iter().map(|(n, b)| (n.clone(), b.to_tensor())).collect();
        let want = interp::run(g, &tensors).unwrap();
        let got = l1::interp::run(m, &bufs.into_iter().collect()).unwrap_or_else(|d| panic!("{d}"));
        for (o, w) in g.outputs.iter().zip(&want) {
            let tol = Tolerance::default_for(o.ty.dtype);
            compare(w, &got[&o.name].to_tensor(), tol).unwrap_or_else(|e| panic!("output `{}`: {e}", o.name));
        }
    }

    /// An allocation: its scope, dtype and shape.
    type Alloc = (Scope, DType, Vec<usize>);

    /// The grid and block extents of a kernel's launch, and the allocations directly in its body.
    fn launch_of(k: &Kernel) -> (Vec<u32>, Vec<u32>, Vec<Alloc>) {
        let Some(Stmt::Launch { grid, block, body, .. }) = k.launch() else {
            panic!("{}: one launch", k.name)
        };
        let extents = |ds: &[LaunchDim]| ds.iter().map(|d| d.extent).collect();
        let allocs = body
            .iter()
            .filter_map(|s| match s {
                Stmt::Alloc { ty, scope, .. } => Some((*scope, ty.dtype, ty.shape.clone())),
                _ => None,
            })
            .collect();
        (extents(grid), extents(block), allocs)
    }

    /// The shared allocations of a kernel: (dtype, shape).
    fn shared_of(k: &Kernel) -> Vec<(DType, Vec<usize>)> {
        launch_of(k).2.into_iter().filter(|a| a.0 == Scope::Shared).map(|(_, d, s)| (d, s)).collect()
    }

    #[test]
    fn register_tiles_match_the_reference_on_ragged_shapes() {
        // m, n and k that the 64x64 tiles and 16-deep stages do not divide, each transpose, a
        // broadcast batch, and a linear with a bias over rank-3 rows.
        let text = "graph g(a: f32[70,45], b: f32[45,100], at: f32[45,70], bt: f32[100,45], \
                    p: f32[2,1,66,33], q: f32[3,33,65], x: f32[2,40,50], w: f32[72,50], c: f32[72]) \
                    -> (y: f32[70,100], ya: f32[70,100], yb: f32[70,100], yab: f32[70,100], \
                    z: f32[2,3,66,65], l: f32[2,40,72]) {
  %y = matmul(a, b, transpose_a=false, transpose_b=false)
  %ya = matmul(at, b, transpose_a=true, transpose_b=false)
  %yb = matmul(a, bt, transpose_a=false, transpose_b=true)
  %yab = matmul(at, bt, transpose_a=true, transpose_b=true)
  %z = matmul(p, q, transpose_a=false, transpose_b=false)
  %l = linear(x, w, c)
  return %y, %ya, %yb, %yab, %z, %l
}
";
        let (g, m) = lowered(text, "pocl", &[]);
        // A tile loaded along `k` has 4 padding columns.
        let tile = |along_k: bool| (DType::F32, vec![2, 16, if along_k { 68 } else { 64 }]);
        let want = [
            [tile(true), tile(false)],
            [tile(false), tile(false)],
            [tile(true), tile(true)],
            [tile(false), tile(true)],
            [tile(true), tile(false)],
            [tile(true), tile(true)],
        ];
        for (k, want) in m.kernels.iter().zip(want) {
            assert_eq!(shared_of(k), want, "kernel {}", k.name);
        }
        let (grid, block, _) = launch_of(&m.kernels[4]);
        assert_eq!((grid, block), (vec![2, 2, 6], vec![128]), "batch on the grid's z");
        check_outputs(&g, &m, 1);
    }

    #[test]
    fn integer_register_tiles_stage_i8_and_accumulate_in_i32() {
        let text = "graph g(a: i8[67,40], b: i8[40,70], x: i8[66,40], w: i8[65,40], \
                    c: i32[65] = randint(-9, 9)) -> (y: i32[67,70], z: i32[66,65]) {
  %y = matmul(a, b, transpose_a=false, transpose_b=false)
  %z = linear(x, w, c)
  return %y, %z
}
";
        let (g, m) = lowered(text, "pocl", &[]);
        for k in &m.kernels {
            let allocs = launch_of(k).2;
            assert!(allocs
                .iter()
                .all(|(s, d, _)| *d == if *s == Scope::Shared { DType::I8 } else { DType::I32 }));
            assert_eq!(allocs[0].2, vec![2, 16, 68], "kernel {}: register tiles", k.name);
        }
        check_outputs(&g, &m, 1);
    }

    #[test]
    fn register_tiles_are_correct_with_any_knobs_in_range() {
        // Thread tiles of one element, tiles the threads do not divide (a guard per element),
        // thread tiles that do not divide the block knobs, one thread, k stages of 1 and over k.
        let text = "graph g(a: f32[30,37], b: f32[41,37], x: f32[37,30]) -> (y: f32[30,41], z: f32[30,41]) {
  %y = matmul(a, b, transpose_a=false, transpose_b=true)
  %z = matmul(x, b, transpose_a=true, transpose_b=true)
  return %y, %z
}
";
        let cases: [[usize; 5]; 5] =
            [[8, 8, 1, 1, 1], [12, 20, 3, 5, 7], [7, 40, 2, 16, 5], [16, 16, 16, 16, 64], [24, 8, 4, 2, 3]];
        for [bm, bn, tm, tn, bk] in cases {
            let set = [
                ("gpu.matmul_block_rows", bm),
                ("gpu.matmul_block_cols", bn),
                ("gpu.matmul_thread_rows", tm),
                ("gpu.matmul_thread_cols", tn),
                ("gpu.matmul_k_tile", bk),
                ("gpu.matmul_min_blocks", 0),
            ];
            let (g, m) = lowered(text, "pocl", &set);
            for k in &m.kernels {
                // Two buffers of at most `bk` (fewer where the block has few threads).
                let stage = &shared_of(k)[0].1;
                assert!(
                    stage.len() == 3 && stage[0] == 2 && stage[1] <= bk,
                    "{bm}x{bn}/{tm}x{tn}/{bk}: {stage:?}"
                );
            }
            check_outputs(&g, &m, 2);
        }
    }

    #[test]
    fn a_1024_cube_is_register_tiled_without_guards() {
        let text = "graph g(a: f32[1024,1024], b: f32[1024,1024]) -> (y: f32[1024,1024]) {
  %y = matmul(a, b, transpose_a=false, transpose_b=false)
  return %y
}
";
        let (_, m) = lowered(text, "h200", &[]);
        let (grid, block, allocs) = launch_of(&m.kernels[0]);
        assert_eq!((grid, block), (vec![16, 16], vec![128]), "64x64 tiles of 8x4 per thread");
        let local = |n| (Scope::Local, DType::F32, vec![n]);
        let want = vec![
            (Scope::Shared, DType::F32, vec![2, 16, 68]),
            (Scope::Shared, DType::F32, vec![2, 16, 64]),
            local(32),
            local(8),
            local(4),
            local(8),
            local(8),
        ];
        assert_eq!(allocs, want);
        // One serial loop over the stages, everything inside a stage unrolled but the vector
        // loops: the fragments' loads from shared memory (`a`'s and `b`'s, per `k`), each
        // operand's share of a stage loaded from global memory as one float4 (before the loop
        // and inside it), and `b`'s stored to shared memory as one (twice; `a`'s tile is
        // transposed, stored element by element); and no `if` but the two around the next
        // stage's loads and stores.
        let (mut ifs, mut loops) = (0, Vec::new());
        l1::visit::for_each_stmt(&m.kernels[0].body, &mut |s| match s {
            Stmt::If { .. } => ifs += 1,
            Stmt::Loop { kind, .. } => loops.push(*kind),
            _ => {}
        });
        assert_eq!(ifs, 2);
        assert_eq!(loops.iter().filter(|k| **k == LoopKind::Serial).count(), 1);
        assert_eq!(loops.iter().filter(|k| **k == LoopKind::Vectorize).count(), 2 + 4 + 2);
        assert!(loops.iter().all(|k| matches!(k, LoopKind::Serial | LoopKind::Unroll | LoopKind::Vectorize)));
    }

    #[test]
    fn block_tiles_fit_the_output_and_halve_for_small_grids_and_small_outputs_take_16x16_tiles() {
        let launch = |text: &str| {
            let (_, m) = lowered(text, "h200", &[]);
            let (grid, block, _) = launch_of(&m.kernels[0]);
            (grid, block)
        };
        // 512x512: 64 blocks of 64x64 < 132 SMs, so 32x64 (128 blocks), then 32x32 (256 blocks,
        // a warp each).
        let square = "graph g(a: f32[512,64], b: f32[64,512]) -> (y: f32[512,512]) {
  %y = matmul(a, b, transpose_a=false, transpose_b=false)
  return %y
}
";
        assert_eq!(launch(square), (vec![16, 16], vec![32]));
        // 20 rows: with the knobs' 8x4 thread tiles no block tile both fits a warp and fills
        // the SMs, so 16x16 tiles; with 2x2 thread tiles (`gpu.matmul_few_rows`, on for the
        // H200's 132 SMs), register tiles of 16x32, 128 threads each, 256 blocks; those hold
        // under 256 threads per SM, so two groups of 128 threads split `k`'s 4 stages
        // (`gpu.matmul_split_k`).
        let flat = "graph g(x: f32[20,64], w: f32[4096,64]) -> (y: f32[20,4096]) {
  %y = linear(x, w)
  return %y
}
";
        let (g, m) = lowered(flat, "h200", &[("gpu.matmul_few_rows", 0)]);
        let (grid, block, _) = launch_of(&m.kernels[0]);
        assert_eq!((grid, block), (vec![256, 2], vec![16, 16]));
        check_outputs(&g, &m, 1);
        let (g, m) = lowered(flat, "h200", &[("gpu.matmul_split_k", 1)]);
        let (grid, block, _) = launch_of(&m.kernels[0]);
        assert_eq!((grid, block), (vec![128, 2], vec![128]));
        check_outputs(&g, &m, 1);
        let (g, m) = lowered(flat, "h200", &[("gpu.matmul_split_k", 8)]);
        let (grid, block, _) = launch_of(&m.kernels[0]);
        assert_eq!((grid, block), (vec![128, 2], vec![256]));
        check_outputs(&g, &m, 1);
        // 49x32 products: the 64-column block tile fitted to the 32 columns (its 64 rows do not
        // halve: 32 would not cover 49), 768 of them on the grid's z.
        let windows = "graph g(a: f32[256,3,49,49], v: f32[256,3,49,32]) -> (y: f32[256,3,49,32]) {
  %y = matmul(a, v, transpose_a=false, transpose_b=false)
  return %y
}
";
        assert_eq!(launch(windows), (vec![1, 1, 768], vec![64]));
    }

    #[test]
    fn groups_of_threads_split_the_stages_of_a_short_grid_and_add_their_sums() {
        // A projection of 24 tokens to 1200 columns: 2x2 thread tiles make a grid far under
        // 256 threads per SM, so the block's groups of threads split `k`'s stages, up to the
        // knob, while the grid stays under that, and only where they divide the stages (16 of
        // 16 rows of `k`, the last one ragged; not 13); each group has
        // its own double-buffered tiles, the groups after the first hand their sums over in
        // shared memory, and the outputs match the reference.
        let text = |k: usize| {
            format!(
                "graph g(x: f32[24,{k}], w: f32[1200,{k}], b: f32[1200]) -> (y: f32[24,1200]) {{
  %y = linear(x, w, b)
  return %y
}}
"
            )
        };
        let mut threads = Vec::new();
        for (k, most, want) in [(250, 8, 4), (250, 2, 2), (250, 1, 1), (200, 8, 1)] {
            let (g, m) = lowered(&text(k), "h200", &[("gpu.matmul_split_k", most)]);
            let (_, block, allocs) = launch_of(&m.kernels[0]);
            let shared = |rank: usize| -> Vec<usize> {
                allocs.iter().filter(|a| a.0 == Scope::Shared && a.2.len() == rank).map(|a| a.2[0]).collect()
            };
            // Two buffers per group of each operand's tile; a buffer of sums where groups meet.
            assert_eq!(shared(3), vec![2 * want; 2], "k {k}, most {most}: {allocs:?}");
            assert_eq!(shared(1).len(), usize::from(want > 1), "{allocs:?}");
            threads.push(block[0]);
            check_outputs(&g, &m, 2);
        }
        // The groups are whole copies of the block's threads; at 4 groups the grid holds 150
        // blocks of 256 threads, so not 8.
        assert_eq!(threads[0], 4 * threads[2]);
        assert_eq!(threads[1], 2 * threads[2]);
    }

    #[test]
    fn few_rows_short_of_the_compute_units_split_k_rather_than_take_16x16_tiles() {
        // 8 rows to 896 columns (a speculative decode's down projection, with a shorter `k`):
        // 2x2 thread tiles fill at most 56 blocks of one warp on the H200's 132 SMs, short of
        // `gpu.matmul_min_blocks`; split 8 ways along `k` they hold the threads the 16x16 tiles
        // would (56 blocks of 256), each with an eighth of the serial `k`.
        let text = |k: usize| {
            format!(
                "graph g(x: f32[8,{k}], w: f32[896,{k}]) -> (y: f32[8,896]) {{
  %y = linear(x, w)
  return %y
}}
"
            )
        };
        let (g, m) = lowered(&text(256), "h200", &[]);
        let (grid, block, _) = launch_of(&m.kernels[0]);
        assert_eq!((grid, block), (vec![56, 1], vec![256]));
        check_outputs(&g, &m, 1);
        // With `k` of 4 stages the groups split it only 2 ways, fewer threads than the 16x16
        // tiles: those stay.
        let (_, m) = lowered(&text(64), "h200", &[]);
        let (_, block, _) = launch_of(&m.kernels[0]);
        assert_eq!(block, vec![16, 16]);
    }

    #[test]
    fn blocks_of_few_threads_take_shallower_stages() {
        // 16x16 outputs on PoCL (SIMD width 8): 16x16 block tiles of 8 threads, whose stages of
        // 16 would be 32 loads of each operand per thread; 8 deep, 16 loads.
        let text = "graph g(q: f32[4,4,16,24], k: f32[4,4,16,24]) -> (y: f32[4,4,16,16]) {
  %y = matmul(q, k, transpose_a=false, transpose_b=true)
  return %y
}
";
        let (g, m) = lowered(text, "pocl", &[]);
        let (grid, block, _) = launch_of(&m.kernels[0]);
        assert_eq!((grid, block), (vec![1, 1, 16], vec![8]));
        assert_eq!(shared_of(&m.kernels[0]), vec![(DType::F32, vec![2, 8, 20]); 2]);
        check_outputs(&g, &m, 4);
    }

    #[test]
    fn register_tiles_take_a_fused_epilogue() {
        let text = "graph g(a: f32[70,45], b: f32[45,100], c: f32[100]) -> (y: f32[70,100]) {
  %0 = matmul(a, b, transpose_a=false, transpose_b=false)
  %1 = add(%0, c)
  %2 = relu(%1)
  fuse %0, %1, %2
  return %2
}
";
        let (g, m) = lowered(text, "pocl", &[]);
        assert_eq!(m.kernels.len(), 1, "{}", l1::print::print(&m));
        assert_eq!(shared_of(&m.kernels[0])[0].1, vec![2, 16, 68]);
        check_outputs(&g, &m, 3);
    }

    #[test]
    fn integer_16x16_tiles_stage_i8_tiles_and_sum_in_i32() {
        let text = "graph g(a: i8[20,300], b: i8[37,300], x: i8[2,3,300], w: i8[37,300], \
                    c: i32[37] = randint(-9, 9)) -> (y: i32[20,37], z: i32[2,3,37]) {
  %y = matmul(a, b, transpose_a=false, transpose_b=true)
  %z = linear(x, w, c)
  return %y, %z
}
";
        // A grid short of the blocks wanted takes the 16x16 tiles.
        let (g, m) = lowered(text, "pocl", &[("gpu.matmul_min_blocks", 1 << 16)]);
        for k in &m.kernels {
            let allocs: Vec<(Scope, DType)> = launch_of(k).2.into_iter().map(|(s, d, _)| (s, d)).collect();
            let want =
                vec![(Scope::Shared, DType::I8), (Scope::Shared, DType::I8), (Scope::Local, DType::I32)];
            assert_eq!(allocs, want, "kernel {}", k.name);
        }
        check_outputs(&g, &m, 1);
    }

    #[test]
    fn products_of_few_rows_are_dot_products_through_a_tree() {
        // Up to 4 rows per batch: a matrix-vector product (with a bias), a batched product of 3
        // rows against a `b` whose columns are contiguous (a column reduction: 8 columns of 21
        // per block, PoCL's SIMD width, `k` split in 16 pieces), an i8 one; then 5 rows, which
        // are tiled.
        let text = "graph g(x: f32[1,300], w: f32[37,300], c: f32[37], a: f32[2,3,300], b: f32[2,300,21], \
                    q: i8[1,1,300], v: i8[37,300], e: f32[5,40], u: f32[9,40]) \
                    -> (y: f32[1,37], z: f32[2,3,21], n: i32[1,1,37], t: f32[5,9]) {
  %y = linear(x, w, c)
  %z = matmul(a, b, transpose_a=false, transpose_b=false)
  %n = linear(q, v)
  %t = linear(e, u)
  return %y, %z, %n, %t
}
";
        let (g, m) = lowered(text, "pocl", &[]);
        let shared: Vec<Vec<(DType, Vec<usize>)>> = m.kernels.iter().map(shared_of).collect();
        // The tree of partial sums is as wide as the threads: 128 (at most) for k = 300.
        let tree = |d| vec![(d, vec![128])];
        assert_eq!(shared[..3], [tree(DType::F32), tree(DType::F32), tree(DType::I32)]);
        assert_eq!(shared[3], vec![(DType::F32, vec![16, 16]), (DType::F32, vec![16, 17])], "5 rows: tiles");
        let Some(Stmt::Launch { grid, block, .. }) = m.kernels[1].body.first() else { panic!("one launch") };
        let extents = |d: &[LaunchDim]| d.iter().map(|d| d.extent).collect::<Vec<_>>();
        assert_eq!((extents(grid), extents(block)), (vec![18], vec![128]), "2 * 3 rows, 3 strips each");
        check_outputs(&g, &m, 2);
    }
}
