//! Matrix products: `matmul` (batched, broadcast batch dims, optional transposes) and `linear`
//! (`x @ w^T + b`), both expressed as one GEMM description `y[l, m, n] = sum_k A[l, m, k] *
//! B[l, k, n] (+ bias[n])` over leading dims `l`.
//!
//! Layouts:
//! - naive: a serial loop per output element with a `local` scalar accumulator;
//! - default, `B` contiguous along `n` (plain `matmul`): the output in register tiles of a few
//!   rows by 64 or more columns, each a `local` accumulator updated in i-k-j order (`unroll`
//!   over the rows, `vectorize` over the columns), so the vector loop never reduces and the tile
//!   stays in registers across the whole `k` loop; threads over column tiles, so that one panel
//!   of `B` stays in cache while the row tiles stream past it;
//! - default, `B` contiguous along `k` (`transpose_b`, `linear`): tiles of 4x4 dot products
//!   sharing one vectorized `k` loop (a float reduction the spec lets a `vectorize` loop
//!   reassociate); threads over row tiles, or over column tiles where `B` outgrows the cache and
//!   `A` does not (each operand is read again for every tile of the other);
//! - default, f32 with `B` contiguous along a short `k` (at most 256) and at least 16 rows:
//!   threads over column panels of `B`, each copied transposed into a `local` panel that the
//!   `B`-contiguous register tiles then read (`packed`);
//! - default, a weight of parameters alone packed panel-major by a prepare step (prepack.rs):
//!   the same register tiles over its panels (`panels`).
//!
//! Where the threads take whole panels (copied or packed), a panel's tiles run the reduction in
//! blocks of `matmul.k_block` steps, all tiles one block before the next, their partial sums in
//! a `local` buffer between blocks (`k_blocks`): the panel's block stays in the nearest cache
//! while every row tile reads it.
//!
//! Row and column remainders get their own tile with literal sizes, so every index is
//! provably in bounds.
//!
//! i8 operands (integer `matmul` and `linear`) take the same layouts with an i32 accumulator: an
//! i8 load is already an i32, the products of two i8 fit easily, and i32 addition wraps and is
//! associative, so the vectorized reductions of the dot-product tiles give the exact sum, and
//! the bias (i32) is added once at the end, as for f32. Their dot-product tiles are 1x1 (see
//! `emit`).

use crate::elementwise::broadcast_index;
use crate::recipe::Knob;
use crate::sched::{outer, serial, simple_loop, tiles, Cx};
use ekb_ir::l1::build::{int, let_, loop_, var, zero, Buf, E};
use ekb_ir::l1::{LoopKind, Stmt};
use ekb_ir::{DType, TensorType};

/// `(rows, columns)` of the i-k-j register tile for `lanes` f32 lanes per vector. Columns
/// (`matmul.tile_cols`): at least 64 by default, so that the backend vectorizes the column loop
/// rather than unrolling it into scalars first (which would leave the `k` loop to be vectorized,
/// with gathers), and at least 4 vectors. Vector accumulators (`matmul.tile_vectors`): 16 by
/// default, half of a 32-register file (AVX-512, NEON), leaving room for the `B` vectors and the
/// broadcast `A` values. A dot-product tile is `matmul.dot_rows` x `matmul.dot_cols` (16 vector
/// reductions by default).
pub(crate) fn axpy_tile(cx: &Cx, lanes: usize) -> (usize, usize) {
    let cols = cx.knob(Knob::MatmulTileCols).max(4 * lanes);
    let rows = (cx.knob(Knob::MatmulTileVectors) / cols.div_ceil(lanes)).max(1);
    (rows, cols)
}

/// The most vector accumulators [`few_rows_tile`] gives one row's columns.
const FEW_ROWS_MAX_VECTORS: usize = 16;

/// [`axpy_tile`] for a product of `m` rows: where `m` is fewer than the tile's rows, its columns
/// take the accumulators the missing rows leave, up to [`FEW_ROWS_MAX_VECTORS`] vectors. One row
/// by the default 64 columns is 4 vector accumulators, a chain of multiply-adds too short to
/// keep the FMA units busy while the `B` stream arrives: `x[1, 1024] @ w[1024, 4096]` on a
/// 2-core AVX-512 VM took 1.20x less time with 128 columns and 1.27x with 256 (384, 24 vectors
/// that do not divide 4096, 0.71x).
pub(crate) fn few_rows_tile(cx: &Cx, m: usize) -> (usize, usize) {
    let lanes = cx.lanes();
    let (rows, cols) = axpy_tile(cx, lanes);
    if m >= rows {
        return (rows, cols);
    }
    let vectors = (cx.knob(Knob::MatmulTileVectors) / m.max(1)).min(FEW_ROWS_MAX_VECTORS);
    (m, cols.max(vectors * lanes))
}

pub(crate) type Load<'a> = Box<dyn Fn(&[E], E, E) -> E + 'a>;
pub(crate) type Store<'a> = Box<dyn Fn(&[E], E, E, E) -> Stmt + 'a>;

/// One GEMM: leading dims, the three extents, and how each operand is read.
pub(crate) struct Gemm<'a> {
    pub(crate) lead: Vec<usize>,
    pub(crate) m: usize,
    pub(crate) n: usize,
    pub(crate) k: usize,
    /// `A(l, m, k)`
    pub(crate) a: Load<'a>,
    /// `B(l, k, n)`
    pub(crate) b: Load<'a>,
    /// `bias(n)`
    pub(crate) bias: Option<Box<dyn Fn(E) -> E + 'a>>,
    /// `y(l, m, n) = v`
    pub(crate) y: Store<'a>,
    /// Whether `B(l, k, n)` and `B(l, k, n+1)` are adjacent in memory.
    pub(crate) b_rows_contiguous: bool,
    /// The accumulator's (and the result's) dtype: f32, or i32 for i8 operands.
    pub(crate) acc: DType,
}

/// `y = a @ b` with optional transposes of the last two dims of either operand.
pub fn matmul(cx: &mut Cx, ta: bool, tb: bool, a: &Buf, b: &Buf, y: &Buf) -> Vec<Stmt> {
    let r = y.rank();
    let (ra, rb) = (a.rank(), b.rank());
    let k = if ta { a.shape()[ra - 2] } else { a.shape()[ra - 1] };
    let g = Gemm {
        lead: y.shape()[..r - 2].to_vec(),
        m: y.shape()[r - 2],
        n: y.shape()[r - 1],
        k,
        a: Box::new(move |l, mi, ki| {
            let mut idx = broadcast_index(l, &a.shape()[..ra - 2]);
            idx.extend(if ta { [ki, mi] } else { [mi, ki] });
            a.load(&idx)
        }),
        b: Box::new(move |l, ki, ni| {
            let mut idx = broadcast_index(l, &b.shape()[..rb - 2]);
            idx.extend(if tb { [ni, ki] } else { [ki, ni] });
            b.load(&idx)
        }),
        bias: None,
        y: Box::new(move |l, mi, ni, v| y.store(&[l, &[mi, ni]].concat(), v)),
        b_rows_contiguous: !tb,
        acc: y.ty.dtype,
    };
    emit(cx, &g)
}

/// `y = x @ w^T (+ bias)`, `x: [..., IN]`, `w: [OUT, IN]`.
pub fn linear(cx: &mut Cx, x: &Buf, w: &Buf, bias: Option<&Buf>, y: &Buf) -> Vec<Stmt> {
    let b: Load = Box::new(move |_, ki, ni| w.load(&[ni, ki]));
    emit(cx, &linear_gemm(x, (w.shape()[0], w.shape()[1]), (b, false), bias, y))
}

/// The GEMM of `y = linear(x, ., bias)`: the rows of `x` (every dim but the last; a rank-1 `x`
/// is one row) by `n` columns over `k`, the weight read by `b(k, n)`, whose consecutive `n`
/// are adjacent in memory where `contiguous` says so.
pub(crate) fn linear_gemm<'a>(
    x: &'a Buf,
    (n, k): (usize, usize),
    (b, contiguous): (Load<'a>, bool),
    bias: Option<&'a Buf>,
    y: &'a Buf,
) -> Gemm<'a> {
    let r = x.rank();
    let (lead, m) = if r >= 2 { (x.shape()[..r - 2].to_vec(), x.shape()[r - 2]) } else { (vec![], 1) };
    let row = move |l: &[E], mi: E, last: E| if r >= 2 { [l, &[mi, last]].concat() } else { vec![last] };
    Gemm {
        lead,
        m,
        n,
        k,
        a: Box::new(move |l, mi, ki| x.load(&row(l, mi, ki))),
        b,
        bias: bias.map(|b| Box::new(move |ni: E| b.load(&[ni])) as Box<dyn Fn(E) -> E>),
        y: Box::new(move |l, mi, ni, v| y.store(&row(l, mi, ni), v)),
        b_rows_contiguous: contiguous,
        acc: y.ty.dtype,
    }
}

/// The product `g` under the schedule: its loop nests, tiles and threads.
pub(crate) fn emit(cx: &mut Cx, g: &Gemm) -> Vec<Stmt> {
    if cx.naive() {
        naive(cx, g)
    } else if g.b_rows_contiguous {
        // Column tiles outside: one `K x cols` panel of `B` stays in cache while the row
        // blocks stream past it.
        grid(cx, g, few_rows_tile(cx, g.m), Outer::Cols, axpy_tile_body)
    } else if let Some(body) = packed(cx, g) {
        body
    } else if g.acc == DType::I32 {
        // One integer dot product per tile: its loop is then the pattern the backends turn into
        // widening multiply-adds (x86 `pmaddwd`, Arm `sdot`/`smlal`); sharing the `A` loads
        // across 4x4 tiles leaves them 32-bit multiplies (`pmulld`), slower than the naive loop.
        grid(cx, g, (1, 1), Outer::Rows, dot_tile_body)
    } else {
        // Each dot tile reads a few rows of `A` and of `B` whole, so one operand is read again
        // for every tile of the other: threads over row tiles (the usual case: `B`, the
        // weights, stays in cache across them), unless `B` outgrows the cache (the profile's
        // stack size, about half an L2) while `A` does not (a 1536x576 weight against 128
        // rows of activations: 4.87 ms by rows, 3.29 ms by columns, a SwiGLU MLP on a 2-core
        // AVX-512 VM; a 768x192 weight against 197 rows: 1.04 ms by rows, 1.51 by columns).
        let cache = cx.target.cpu.stack_bytes as usize;
        let bytes = |rows: usize| rows * g.k * g.acc.size_bytes();
        let outer = if bytes(g.n) > cache && bytes(g.m) <= cache { Outer::Cols } else { Outer::Rows };
        grid(cx, g, (cx.knob(Knob::MatmulDotRows), cx.knob(Knob::MatmulDotCols)), outer, dot_tile_body)
    }
}

/// Rows of `A` from which an f32 product with `B` contiguous along `k` copies panels of `B`.
pub(crate) const PACK_MIN_ROWS: usize = 16;
/// The longest `k` for which it does: a dot tile's horizontal sums weigh most on short
/// reductions, while the transposing copy (strided stores) grows with `k`. Measured on a 2-core
/// AVX-512 VM against the dot tiles: DeiT-Tiny's MLP (`k` = 192, then 768) 1.04 ms, 0.90 ms
/// with both products packed, 0.60 ms with the first only; a SwiGLU MLP (`k` = 576, 1536)
/// 3.3 ms, 4.4 ms packed.
const PACK_MAX_K: usize = 256;

/// An f32 product whose `B` is contiguous along a short `k` (`linear`, `transpose_b`) and whose
/// rows are enough to amortize a copy: threads over column panels of `B`; each iteration copies
/// its panel transposed, `[k, cols]`, into a `local` buffer, then covers every row with the
/// `B`-contiguous register tiles reading the copy. `None` where it does not apply or the panel
/// does not fit a quarter of the stack.
fn packed(cx: &mut Cx, g: &Gemm) -> Option<Vec<Stmt>> {
    if g.acc != DType::F32 || g.b_rows_contiguous || g.m < PACK_MIN_ROWS || g.k > PACK_MAX_K {
        return None;
    }
    let cols = axpy_tile(cx, cx.lanes()).1.min(g.n);
    if (g.k * cols * g.acc.size_bytes()) as u64 > cx.target.cpu.stack_bytes / 4 {
        return None;
    }
    Some(panels(cx, g, cols, Panels::Copied))
}

/// Where [`panels`] reads each column panel of `B`.
pub(crate) enum Panels<'a> {
    /// Copied by each iteration, transposed, into a `local` panel `[k, width]`.
    Copied,
    /// Packed once, panel-major, `[ceil(n / cols), k, cols]` (prepack.rs): each panel one
    /// contiguous run. (In a `[k, n]` layout a panel's rows lie `4n` bytes apart, for `n` a
    /// power of two in the same few cache sets: a 32 x 768 x 4096 `linear` took 6.0 ms over
    /// it, 2.4 ms with 4000 columns, on a 2-core AVX2 EPYC.)
    Packed(&'a Buf),
}

/// The product over column panels of `B`, `cols` wide (the last one narrower): each panel
/// times every row tile through the `B`-contiguous register tiles. Threads over the panels;
/// over the row tiles instead (each then walking every panel) where a packed `B` has too few
/// panels for the cores and more row tiles.
pub(crate) fn panels(cx: &mut Cx, g: &Gemm, cols: usize, source: Panels) -> Vec<Stmt> {
    let rows = axpy_tile(cx, cx.lanes()).0.min(g.m);
    let lead: usize = g.lead.iter().product();
    let threads = cx.wants_threads(2 * lead * g.m * g.n * g.k);
    let (full, rem) = (g.n / cols, g.n % cols);
    let widths = [(full, cols), (usize::from(rem > 0), rem)];
    let (count, row_tiles) = (lead * g.n.div_ceil(cols), lead * (g.m / rows));
    let by_rows = matches!(source, Panels::Packed(_))
        && threads
        && count < cx.cores() * cx.per_core()
        && row_tiles > count;
    let mut out = Vec::new();
    if by_rows {
        let Panels::Packed(wt) = source else { unreachable!("rows outside only over packed panels") };
        for (count, mr) in [(g.m / rows, rows), (usize::from(!g.m.is_multiple_of(rows)), g.m % rows)] {
            if count == 0 {
                continue;
            }
            let dims = if mr == rows { [g.lead.clone(), vec![count]].concat() } else { g.lead.clone() };
            let nest = outer(cx, &dims, threads, "i");
            let l = &nest.idx[..g.lead.len()];
            let m0 =
                if mr == rows { nest.idx[g.lead.len()].clone() * int(rows) } else { int(g.m / rows * rows) };
            let mut body = Vec::new();
            for (panels, width) in widths {
                if panels == 0 {
                    continue;
                }
                let pv = cx.fresh("p");
                let pi = if width == cols { var(&pv) } else { int(full) };
                let n0 = pi.clone() * int(cols);
                let b: Load = Box::new(move |_, ki, ni| wt.load(&[pi.clone(), ki, ni]));
                let tile =
                    axpy_tile_body(cx, &panel_view(g, b, n0, width), l, (m0.clone(), mr), (int(0), width));
                body.extend(if width == cols {
                    vec![simple_loop(LoopKind::Serial, &pv, panels, tile)]
                } else {
                    tile
                });
            }
            out.extend(nest.wrap(body));
        }
        return out;
    }
    for (panels, width) in widths {
        if panels == 0 {
            continue;
        }
        let dims = if width == cols { [g.lead.clone(), vec![panels]].concat() } else { g.lead.clone() };
        let nest = outer(cx, &dims, threads, "i");
        let l = &nest.idx[..g.lead.len()];
        let pi = if width == cols { nest.idx[g.lead.len()].clone() } else { int(full) };
        let n0 = pi.clone() * int(cols);
        let (setup, b): (Vec<Stmt>, Load) = match source {
            Panels::Copied => {
                let panel = Buf::new(cx.fresh("panel"), TensorType::new(g.acc, [g.k, width]));
                let (j, kv) = (cx.fresh("j"), cx.fresh("k"));
                let copy = simple_loop(
                    LoopKind::Serial,
                    &j,
                    width,
                    vec![simple_loop(
                        cx.inner_kind(g.k),
                        &kv,
                        g.k,
                        vec![panel.store(&[var(&kv), var(&j)], (g.b)(l, var(&kv), n0.clone() + var(&j)))],
                    )],
                );
                let setup = vec![panel.alloc(), copy];
                (setup, Box::new(move |_, ki, ni| panel.load(&[ki, ni])))
            }
            Panels::Packed(wt) => (vec![], Box::new(move |_, ki, ni| wt.load(&[pi.clone(), ki, ni]))),
        };
        let v = panel_view(g, b, n0, width);
        let kb = cx.knob(Knob::MatmulKBlock);
        let sums = TensorType::new(g.acc, [g.m, width]);
        let products = if kb > 0 && g.k > kb && sums.size_bytes() as u64 <= cx.target.cpu.stack_bytes / 4 {
            let sums = Buf::new(cx.fresh("sums"), sums);
            k_blocks(cx, &v, l, (rows, width), (kb, sums))
        } else {
            tiles(cx, g.m, rows, LoopKind::Serial, "t", |cx, m0, mr| {
                axpy_tile_body(cx, &v, l, (m0, mr), (int(0), width))
            })
        };
        out.extend(nest.wrap([setup, products].concat()));
    }
    out
}

/// The register tiles of one panel (`g`, `width` columns) over the reduction in blocks of `kb`:
/// per block, every tile of `rows` rows, so the block's slice of the panel (`kb * width`
/// elements) is read from the nearest cache by all of them, where a tile over the whole
/// reduction streams the whole panel past it once per tile. Each tile's partial sums wait in
/// `sums[m, width]` between blocks; the last block stores the results. Each output still adds
/// its products in increasing `k`.
fn k_blocks(
    cx: &mut Cx,
    g: &Gemm,
    l: &[E],
    (rows, width): (usize, usize),
    (kb, sums): (usize, Buf),
) -> Vec<Stmt> {
    let blocks = g.k.div_ceil(kb);
    let last = g.k - (blocks - 1) * kb;
    let block = |cx: &mut Cx, k0: E, kn: usize, first: bool, final_block: bool| {
        tiles(cx, g.m, rows, LoopKind::Serial, "t", |cx, m0, mr| {
            axpy_tile_block(cx, g, l, (m0, mr), width, (k0.clone(), kn), (&sums, first, final_block))
        })
    };
    let mut out = vec![sums.alloc()];
    out.extend(block(cx, int(0), kb, true, false));
    if blocks > 2 {
        let b = cx.fresh("kb");
        let middle = block(cx, var(&b) * int(kb), kb, false, false);
        out.push(loop_(LoopKind::Serial, &b, int(1), int(blocks - 1), middle));
    }
    out.extend(block(cx, int((blocks - 1) * kb), last, false, true));
    out
}

/// [`axpy_tile_body`] over the reduction's slice `k0..k0+kn` of a panel of `width` columns:
/// the accumulators start at zero (`first`) or from `sums`, and end in `sums` or, for the last
/// slice, in the results (bias and epilogue).
fn axpy_tile_block(
    cx: &mut Cx,
    g: &Gemm,
    l: &[E],
    (m0, mr): (E, usize),
    width: usize,
    (k0, kn): (E, usize),
    (sums, first, last): (&Buf, bool, bool),
) -> Vec<Stmt> {
    let acc = Buf::new(cx.fresh("acc"), TensorType::new(g.acc, [mr, width]));
    let (r0, r1, r2) = (cx.fresh("r"), cx.fresh("r"), cx.fresh("r"));
    let (j0, j1, j2) = (cx.fresh("j"), cx.fresh("j"), cx.fresh("j"));
    let (kv, av) = (cx.fresh("k"), cx.fresh("a"));
    let lanes = cx.inner_kind(width);
    let rows = |r: &str, body: Vec<Stmt>| simple_loop(LoopKind::Unroll, r, mr, body);
    let cols = |j: &str, body: Vec<Stmt>| simple_loop(lanes, j, width, body);
    let at = |r: &str, j: &str| [var(r), var(j)];
    let sum_at = |r: &str, j: &str| [m0.clone() + var(r), var(j)];
    let ki = k0 + var(&kv);
    let update =
        acc.store(&at(&r1, &j1), acc.load(&at(&r1, &j1)) + var(&av) * (g.b)(l, ki.clone(), var(&j1)));
    let start = if first { zero(g.acc) } else { sums.load(&sum_at(&r0, &j0)) };
    let end = if last {
        let mut value = acc.load(&at(&r2, &j2));
        if let Some(bias) = &g.bias {
            value = value + bias(var(&j2));
        }
        (g.y)(l, m0.clone() + var(&r2), var(&j2), value)
    } else {
        sums.store(&sum_at(&r2, &j2), acc.load(&at(&r2, &j2)))
    };
    vec![
        acc.alloc(),
        rows(&r0, vec![cols(&j0, vec![acc.store(&at(&r0, &j0), start)])]),
        simple_loop(
            LoopKind::Serial,
            &kv,
            kn,
            vec![rows(&r1, vec![let_(&av, (g.a)(l, m0.clone() + var(&r1), ki)), cols(&j1, vec![update])])],
        ),
        rows(&r2, vec![cols(&j2, vec![end])]),
    ]
}

/// `g` over one panel of its columns: `width` columns from `n0`, `B` read through `b`.
fn panel_view<'a>(g: &'a Gemm, b: Load<'a>, n0: E, width: usize) -> Gemm<'a> {
    let at = n0.clone();
    Gemm {
        lead: g.lead.clone(),
        m: g.m,
        n: width,
        k: g.k,
        a: Box::new(|l: &[E], mi, ki| (g.a)(l, mi, ki)),
        b,
        bias: g.bias.as_ref().map(|b| Box::new(move |ni: E| b(n0.clone() + ni)) as Box<dyn Fn(E) -> E>),
        y: Box::new(move |l: &[E], mi, ni, v| (g.y)(l, mi, at.clone() + ni, v)),
        b_rows_contiguous: true,
        acc: g.acc,
    }
}

/// `acc = 0; for k { acc += A * B }; y = acc (+ bias)` per output element.
fn naive(cx: &mut Cx, g: &Gemm) -> Vec<Stmt> {
    let dims = [g.lead.clone(), vec![g.m, g.n]].concat();
    let nest = serial(cx, &dims, "i");
    let (l, mn) = nest.idx.split_at(g.lead.len());
    let (mi, ni) = (mn[0].clone(), mn[1].clone());
    let acc = Buf::new(cx.fresh("acc"), TensorType::new(g.acc, [1]));
    let kv = cx.fresh("k");
    let step = acc.store(
        &[int(0)],
        acc.load(&[int(0)]) + (g.a)(l, mi.clone(), var(&kv)) * (g.b)(l, var(&kv), ni.clone()),
    );
    let mut value = acc.load(&[int(0)]);
    if let Some(bias) = &g.bias {
        value = value + bias(ni.clone());
    }
    let body = vec![
        acc.alloc(),
        acc.store(&[int(0)], zero(g.acc)),
        simple_loop(LoopKind::Serial, &kv, g.k, vec![step]),
        (g.y)(l, mi, ni, value),
    ];
    nest.wrap(body)
}

/// Which dimension of the tile grid is the outer (threaded) loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outer {
    Rows,
    Cols,
}

/// The body of one output tile: leading indices, `(first row, rows)`, `(first column, columns)`.
type TileBody = fn(&mut Cx, &Gemm, &[E], (E, usize), (E, usize)) -> Vec<Stmt>;

/// Covers the output with tiles of `(rows, cols)`: threads over the leading dims and the full
/// tiles of the outer dimension (`prefer`, unless the other one has more tiles and `prefer` too
/// few to keep every core busy); the inner dimension's tiles in a serial loop; remainders of
/// either dimension as tiles of literal size.
fn grid(cx: &mut Cx, g: &Gemm, (rows, cols): (usize, usize), prefer: Outer, body: TileBody) -> Vec<Stmt> {
    let lead: usize = g.lead.iter().product();
    let threads = cx.wants_threads(2 * lead * g.m * g.n * g.k);
    let (rows, cols) = (rows.min(g.m), cols.min(g.n));
    let (row_tiles, col_tiles) = (lead * (g.m / rows), lead * (g.n / cols));
    let enough = |t: usize| t >= cx.cores() * cx.per_core();
    let outer_dim = match prefer {
        Outer::Cols if threads && !enough(col_tiles) && row_tiles > col_tiles => Outer::Rows,
        Outer::Rows if threads && !enough(row_tiles) && col_tiles > row_tiles => Outer::Cols,
        p => p,
    };
    let ((on, ot), (inn, int_)) = match outer_dim {
        Outer::Rows => ((g.m, rows), (g.n, cols)),
        Outer::Cols => ((g.n, cols), (g.m, rows)),
    };
    let inner = |cx: &mut Cx, l: &[E], o0: E, olen: usize| {
        tiles(cx, inn, int_, LoopKind::Serial, "t", |cx, i0, ilen| match outer_dim {
            Outer::Rows => body(cx, g, l, (o0.clone(), olen), (i0, ilen)),
            Outer::Cols => body(cx, g, l, (i0, ilen), (o0.clone(), olen)),
        })
    };
    let mut out = Vec::new();
    let (full, rem) = (on / ot, on % ot);
    if full > 0 {
        let dims = [g.lead.clone(), vec![full]].concat();
        let nest = outer(cx, &dims, threads, "i");
        let (l, t) = nest.idx.split_at(g.lead.len());
        let b = inner(cx, l, t[0].clone() * int(ot), ot);
        out.extend(nest.wrap(b));
    }
    if rem > 0 {
        let nest = outer(cx, &g.lead, threads, "i");
        let b = inner(cx, &nest.idx, int(full * ot), rem);
        out.extend(nest.wrap(b));
    }
    out
}

/// One `B`-contiguous tile (i-k-j order): rows `m0..m0+mr`, columns `n0..n0+nt`, accumulated over
/// all of `k` in a `local` tile that the backend keeps in registers: the rows are `unroll`ed and
/// the columns one vectorized loop, so every access to the tile has literal indices once
/// vectorized, and no lane reduces across another.
pub(crate) fn axpy_tile_body(
    cx: &mut Cx,
    g: &Gemm,
    l: &[E],
    (m0, mr): (E, usize),
    (n0, nt): (E, usize),
) -> Vec<Stmt> {
    let acc = Buf::new(cx.fresh("acc"), TensorType::new(g.acc, [mr, nt]));
    let (r0, r1, r2) = (cx.fresh("r"), cx.fresh("r"), cx.fresh("r"));
    let (j0, j1, j2) = (cx.fresh("j"), cx.fresh("j"), cx.fresh("j"));
    let (kv, av) = (cx.fresh("k"), cx.fresh("a"));
    let lanes = cx.inner_kind(nt);
    let rows = |r: &str, body: Vec<Stmt>| simple_loop(LoopKind::Unroll, r, mr, body);
    let cols = |j: &str, body: Vec<Stmt>| simple_loop(lanes, j, nt, body);
    let at = |r: &str, j: &str| [var(r), var(j)];
    let update = acc
        .store(&at(&r1, &j1), acc.load(&at(&r1, &j1)) + var(&av) * (g.b)(l, var(&kv), n0.clone() + var(&j1)));
    let mut value = acc.load(&at(&r2, &j2));
    if let Some(bias) = &g.bias {
        value = value + bias(n0.clone() + var(&j2));
    }
    vec![
        acc.alloc(),
        rows(&r0, vec![cols(&j0, vec![acc.store(&at(&r0, &j0), zero(g.acc))])]),
        simple_loop(
            LoopKind::Serial,
            &kv,
            g.k,
            vec![rows(
                &r1,
                vec![let_(&av, (g.a)(l, m0.clone() + var(&r1), var(&kv))), cols(&j1, vec![update])],
            )],
        ),
        rows(&r2, vec![cols(&j2, vec![(g.y)(l, m0.clone() + var(&r2), n0.clone() + var(&j2), value)])]),
    ]
}

/// One `B^T`-contiguous tile: `mr x nc` dot products sharing one vectorized `k` loop (each
/// element of `A` and `B` loaded once per tile), with `unroll`ed rows and columns inside, so the
/// backend turns the tile into `mr * nc` vector reductions held in registers.
pub(crate) fn dot_tile_body(
    cx: &mut Cx,
    g: &Gemm,
    l: &[E],
    (m0, mr): (E, usize),
    (n0, nc): (E, usize),
) -> Vec<Stmt> {
    let acc = Buf::new(cx.fresh("acc"), TensorType::new(g.acc, [mr, nc]));
    let (r0, r1, r2) = (cx.fresh("r"), cx.fresh("r"), cx.fresh("r"));
    let (c0, c1, c2) = (cx.fresh("c"), cx.fresh("c"), cx.fresh("c"));
    let kv = cx.fresh("k");
    let unroll = |v: &str, n: usize, body: Vec<Stmt>| simple_loop(LoopKind::Unroll, v, n, body);
    let at = |r: &str, c: &str| [var(r), var(c)];
    let a = (g.a)(l, m0.clone() + var(&r1), var(&kv));
    let b = (g.b)(l, var(&kv), n0.clone() + var(&c1));
    let update = acc.store(&at(&r1, &c1), acc.load(&at(&r1, &c1)) + a * b);
    let mut value = acc.load(&at(&r2, &c2));
    if let Some(bias) = &g.bias {
        value = value + bias(n0.clone() + var(&c2));
    }
    vec![
        acc.alloc(),
        unroll(&r0, mr, vec![unroll(&c0, nc, vec![acc.store(&at(&r0, &c0), zero(g.acc))])]),
        simple_loop(cx.inner_kind(g.k), &kv, g.k, vec![unroll(&r1, mr, vec![unroll(&c1, nc, vec![update])])]),
        unroll(
            &r2,
            mr,
            vec![unroll(&c2, nc, vec![(g.y)(l, m0.clone() + var(&r2), n0.clone() + var(&c2), value)])],
        ),
    ]
}
