//! Matrix products: `matmul` (batched, broadcast batch dims, optional transposes) and `linear`
//! (`x @ w^T + b`), both expressed as one GEMM description `y[l, m, n] = sum_k A[l, m, k] *
//! B[l, k, n] (+ bias[n])` over leading dims `l`.
//!
//! Layouts:
//! - naive: a serial loop per output element with a `local` scalar accumulator;
//! - default, `B` contiguous along `n` (plain `matmul`): threads over blocks of `MR` rows;
//!   per block and per tile of `NR` columns, a `local` accumulator `acc: f32[MR, NR]` updated in
//!   i-k-j order (`unroll` over the rows, `vectorize` over the columns), so the vector loop
//!   never reduces and the tile stays in registers across the whole `k` loop;
//! - default, `B` contiguous along `k` (`transpose_b`, `linear`): threads over rows, and per
//!   output a dot product whose `k` loop is vectorized (a float reduction the spec lets a
//!   `vectorize` loop reassociate).
//!
//! Row and column remainders get their own tile with literal sizes, so every index is
//! provably in bounds.

use crate::build::{f, int, let_, var, Buf, E};
use crate::elementwise::broadcast_index;
use crate::sched::{outer, serial, simple_loop, tiles, Cx};
use ekb_ir::l1::{LoopKind, Stmt};
use ekb_ir::{DType, TensorType};

/// Rows per register block of the i-k-j layout.
const MR: usize = 4;

/// Columns per register block of the i-k-j layout, in SIMD vectors.
const NR_VECTORS: usize = 2;

type Load<'a> = Box<dyn Fn(&[E], E, E) -> E + 'a>;

/// One GEMM: leading dims, the three extents, and how each operand is read.
struct Gemm<'a> {
    lead: Vec<usize>,
    m: usize,
    n: usize,
    k: usize,
    /// `A(l, m, k)`
    a: Load<'a>,
    /// `B(l, k, n)`
    b: Load<'a>,
    /// `bias(n)`
    bias: Option<Box<dyn Fn(E) -> E + 'a>>,
    /// `y(l, m, n) = v`
    y: Box<dyn Fn(&[E], E, E, E) -> Stmt + 'a>,
    /// Whether `B(l, k, n)` and `B(l, k, n+1)` are adjacent in memory.
    b_rows_contiguous: bool,
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
    };
    emit(cx, &g)
}

/// `y = x @ w^T (+ bias)`, `x: [..., IN]`, `w: [OUT, IN]`.
pub fn linear(cx: &mut Cx, x: &Buf, w: &Buf, bias: Option<&Buf>, y: &Buf) -> Vec<Stmt> {
    let r = x.rank();
    // Rows of x: every dim but the last; a rank-1 x is a single row.
    let (lead, m) = if r >= 2 { (x.shape()[..r - 2].to_vec(), x.shape()[r - 2]) } else { (vec![], 1) };
    let row = move |l: &[E], mi: E, last: E| if r >= 2 { [l, &[mi, last]].concat() } else { vec![last] };
    let g = Gemm {
        lead,
        m,
        n: w.shape()[0],
        k: w.shape()[1],
        a: Box::new(move |l, mi, ki| x.load(&row(l, mi, ki))),
        b: Box::new(move |_, ki, ni| w.load(&[ni, ki])),
        bias: bias.map(|b| Box::new(move |ni: E| b.load(&[ni])) as Box<dyn Fn(E) -> E>),
        y: Box::new(move |l, mi, ni, v| y.store(&row(l, mi, ni), v)),
        b_rows_contiguous: false,
    };
    emit(cx, &g)
}

fn emit(cx: &mut Cx, g: &Gemm) -> Vec<Stmt> {
    if cx.naive() {
        naive(cx, g)
    } else if g.b_rows_contiguous {
        blocked(cx, g)
    } else {
        dot(cx, g)
    }
}

/// `acc = 0; for k { acc += A * B }; y = acc (+ bias)` per output element.
fn naive(cx: &mut Cx, g: &Gemm) -> Vec<Stmt> {
    let dims = [g.lead.clone(), vec![g.m, g.n]].concat();
    let nest = serial(cx, &dims, "i");
    let (l, mn) = nest.idx.split_at(g.lead.len());
    let (mi, ni) = (mn[0].clone(), mn[1].clone());
    let acc = Buf::new(cx.fresh("acc"), TensorType::new(DType::F32, [1]));
    let kv = cx.fresh("k");
    let step = acc.store(&[int(0)], acc.load(&[int(0)]) + (g.a)(l, mi.clone(), var(&kv)) * (g.b)(l, var(&kv), ni.clone()));
    let mut value = acc.load(&[int(0)]);
    if let Some(bias) = &g.bias {
        value = value + bias(ni.clone());
    }
    let body = vec![
        acc.alloc(),
        acc.store(&[int(0)], f(0.0)),
        simple_loop(LoopKind::Serial, &kv, g.k, vec![step]),
        (g.y)(l, mi, ni, value),
    ];
    nest.wrap(body)
}

/// Threads over `MR`-row blocks; per block, `MR x NR` register tiles accumulated in i-k-j order.
fn blocked(cx: &mut Cx, g: &Gemm) -> Vec<Stmt> {
    let threads = cx.wants_threads(2 * g.lead.iter().product::<usize>() * g.m * g.n * g.k);
    let mr = MR.min(g.m);
    let nr = NR_VECTORS * cx.lanes();
    let mut out = Vec::new();
    let full = g.m / mr;
    if full > 0 {
        let dims = [g.lead.clone(), vec![full]].concat();
        let nest = outer(cx, &dims, threads, "i");
        let (l, mb) = nest.idx.split_at(g.lead.len());
        let m0 = mb[0].clone() * int(mr);
        let body = row_block(cx, g, l, m0, mr, nr);
        out.extend(nest.wrap(body));
    }
    let rem = g.m % mr;
    if rem > 0 {
        let nest = outer(cx, &g.lead, threads, "i");
        let body = row_block(cx, g, &nest.idx, int(full * mr), rem, nr);
        out.extend(nest.wrap(body));
    }
    out
}

/// `mr` rows starting at `m0`, all columns, in tiles of `nr`.
fn row_block(cx: &mut Cx, g: &Gemm, l: &[E], m0: E, mr: usize, nr: usize) -> Vec<Stmt> {
    tiles(cx, g.n, nr, LoopKind::Serial, "jt", |cx, n0, nt| {
        let acc = Buf::new(cx.fresh("acc"), TensorType::new(DType::F32, [mr, nt]));
        let (r0, r1, r2) = (cx.fresh("r"), cx.fresh("r"), cx.fresh("r"));
        let (j0, j1, j2) = (cx.fresh("j"), cx.fresh("j"), cx.fresh("j"));
        let (kv, av) = (cx.fresh("k"), cx.fresh("a"));
        let lanes = cx.inner_kind(nt);
        let rows = |r: &str, body: Vec<Stmt>| simple_loop(LoopKind::Unroll, r, mr, body);
        let cols = |j: &str, body: Vec<Stmt>| simple_loop(lanes, j, nt, body);
        let at = |r: &str, j: &str| [var(r), var(j)];
        let update = acc.store(
            &at(&r1, &j1),
            acc.load(&at(&r1, &j1)) + var(&av) * (g.b)(l, var(&kv), n0.clone() + var(&j1)),
        );
        let mut value = acc.load(&at(&r2, &j2));
        if let Some(bias) = &g.bias {
            value = value + bias(n0.clone() + var(&j2));
        }
        vec![
            acc.alloc(),
            rows(&r0, vec![cols(&j0, vec![acc.store(&at(&r0, &j0), f(0.0))])]),
            simple_loop(
                LoopKind::Serial,
                &kv,
                g.k,
                vec![rows(&r1, vec![let_(&av, (g.a)(l, m0.clone() + var(&r1), var(&kv))), cols(&j1, vec![update])])],
            ),
            rows(&r2, vec![cols(&j2, vec![(g.y)(l, m0.clone() + var(&r2), n0.clone() + var(&j2), value)])]),
        ]
    })
}

/// Threads over rows; per output, a dot product with the `k` loop vectorized.
fn dot(cx: &mut Cx, g: &Gemm) -> Vec<Stmt> {
    let threads = cx.wants_threads(2 * g.lead.iter().product::<usize>() * g.m * g.n * g.k);
    let dims = [g.lead.clone(), vec![g.m]].concat();
    let nest = outer(cx, &dims, threads, "i");
    let (l, mi) = nest.idx.split_at(g.lead.len());
    let mi = mi[0].clone();
    let acc = Buf::new(cx.fresh("acc"), TensorType::new(DType::F32, [1]));
    let (nv, kv) = (cx.fresh("n"), cx.fresh("k"));
    let step =
        acc.store(&[int(0)], acc.load(&[int(0)]) + (g.a)(l, mi.clone(), var(&kv)) * (g.b)(l, var(&kv), var(&nv)));
    let mut value = acc.load(&[int(0)]);
    if let Some(bias) = &g.bias {
        value = value + bias(var(&nv));
    }
    let kind = cx.inner_kind(g.k);
    let body = vec![
        acc.alloc(),
        simple_loop(
            LoopKind::Serial,
            &nv,
            g.n,
            vec![
                acc.store(&[int(0)], f(0.0)),
                simple_loop(kind, &kv, g.k, vec![step]),
                (g.y)(l, mi.clone(), var(&nv), value),
            ],
        ),
    ];
    nest.wrap(body)
}
