//! Matrix products on a GPU: `matmul` (with broadcast batch dims and either operand transposed)
//! and `linear` (`x @ w^T + b`), tiled, or as dot products where the output has few rows.
//!
//! Tiled: each block computes a `gpu.matmul_tile` x `gpu.matmul_tile` (16x16 by default,
//! [`crate::Knobs`]) tile of the output, one element per thread. Along
//! `k`, tiles of both operands are staged in shared memory (zero outside the matrices), a barrier,
//! a tile-step product from shared memory, another barrier before the tiles are overwritten.
//! The `b` tile has a padding column so that a warp reading down a column of it hits distinct
//! banks. Each thread adds its products in increasing `k`, the order of the CPU schedules.
//!
//! i8 operands (integer products) are staged as i8 tiles (a quarter of the f32 tiles' shared
//! memory): a load widens each element to i32 and the store back keeps exactly that byte, the
//! padding is 0, and each thread accumulates in i32, the result's dtype (wrapping sums are
//! exact in any order).
//!
//! Dot products, for outputs of at most `gpu.dot_max_rows` (4) rows per batch (matrix-vector products,
//! a decoding step's projections), where a tile would leave most of its threads idle: one block
//! per output element, each thread summing a strided share of `k`, then a shared-memory tree
//! over the block's partial sums (as the row reductions do); consecutive threads read
//! consecutive elements of a row of `w` (`linear`, or `matmul` with `b` transposed).

use super::reduce::Block;
use super::{barrier, launch, shared, unflatten, Gpu};
use crate::elementwise::broadcast_index;
use crate::recipe::Knob;
use ekb_ir::l1::build::{int, let_, loop_, var, zero, Buf, Names, E};
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
    /// The statement storing an output element.
    pub store: Store<'a>,
    /// The batch dims, unflattened from the grid's z index.
    pub batch_shape: &'a [usize],
    /// The operands' dtype (the shared tiles') and the result's (the accumulator's): f32 and
    /// f32, or i8 and i32.
    pub operands: DType,
    pub result: DType,
}

/// CUDA's limit on the grid's y and z extents, the smallest of the targets.
const GRID_YZ_MAX: usize = 65535;

/// Tiles or dot products, by the output's rows.
pub(super) fn product(gpu: &Gpu, names: Names, p: &Product) -> Option<Vec<Stmt>> {
    // Dot products up to `gpu.dot_max_rows` rows: at 4 rows a 16x16 tile already leaves three
    // quarters of its threads idle.
    if p.m <= gpu.knobs.get(Knob::GpuDotMaxRows) {
        dot(gpu, names, p)
    } else {
        tiled(gpu, names, p)
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
    body.push(ekb_ir::l1::build::if_(
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
        ekb_ir::l1::build::if_(
            var(&row).lt(int(p.m)).and(var(&ka).lt(int(p.k))),
            vec![ta.store(&[tyv.clone(), txv.clone()], (p.a_at)(&bidx, var(&row), var(&ka)))],
            vec![ta.store(&[tyv.clone(), txv.clone()], pad.clone())],
        ),
        let_(&kb, var(&t) * int(tile) + tyv.clone()),
        ekb_ir::l1::build::if_(
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
        ekb_ir::l1::build::if_(
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
        store: &store,
        batch_shape,
        operands: a.ty.dtype,
        result: y.ty.dtype,
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
        store: &store,
        batch_shape: &[],
        operands: x.ty.dtype,
        result: y.ty.dtype,
    };
    product(gpu, names, &p)
}

#[cfg(test)]
mod tests {
    use crate::{lower_gpu, Schedule};
    use ekb_ir::l0::{check, inputs, interp};
    use ekb_ir::l1::{self, Scope, Stmt};
    use ekb_ir::tensor::{compare, Tolerance};
    use ekb_ir::{DType, SourceFile, TargetProfile};

    #[test]
    fn integer_products_stage_i8_tiles_and_sum_in_i32() {
        let text = "graph g(a: i8[20,300], b: i8[37,300], x: i8[2,3,300], w: i8[37,300], \
                    c: i32[37] = randint(-9, 9)) -> (y: i32[20,37], z: i32[2,3,37]) {
  %y = matmul(a, b, transpose_a=false, transpose_b=true)
  %z = linear(x, w, c)
  return %y, %z
}
";
        let g = check::load(&SourceFile::new("t.ekir", text)).unwrap_or_else(|d| panic!("{}", d[0]));
        let target = TargetProfile::load("pocl").unwrap();
        let m = lower_gpu(&g, Schedule::Default, &target).unwrap_or_else(|d| panic!("{d}"));
        for k in &m.kernels {
            let Some(Stmt::Launch { body, .. }) = k.body.first() else { panic!("{}: one launch", k.name) };
            let allocs: Vec<(Scope, DType)> = body
                .iter()
                .filter_map(|s| match s {
                    Stmt::Alloc { ty, scope, .. } => Some((*scope, ty.dtype)),
                    _ => None,
                })
                .collect();
            let want =
                vec![(Scope::Shared, DType::I8), (Scope::Shared, DType::I8), (Scope::Local, DType::I32)];
            assert_eq!(allocs, want, "kernel {}", k.name);
        }
        let bufs = inputs::generate(&g, 1).unwrap();
        let tensors = bufs.iter().map(|(n, b)| (n.clone(), b.to_tensor())).collect();
        let want = interp::run(&g, &tensors).unwrap();
        let got = l1::interp::run(&m, &bufs.into_iter().collect()).unwrap_or_else(|d| panic!("{d}"));
        for (o, w) in g.outputs.iter().zip(&want) {
            compare(w, &got[&o.name].to_tensor(), Tolerance::default_for(DType::I32))
                .unwrap_or_else(|e| panic!("output `{}`: {e}", o.name));
        }
    }

    #[test]
    fn products_of_few_rows_are_dot_products_through_a_tree() {
        // Up to 4 rows per batch: a matrix-vector product (with a bias), a batched product of 3
        // rows against a transposed operand, an i8 one; then 5 rows, which are tiled.
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
        let g = check::load(&SourceFile::new("t.ekir", text)).unwrap_or_else(|d| panic!("{}", d[0]));
        let target = TargetProfile::load("pocl").unwrap();
        let m = lower_gpu(&g, Schedule::Default, &target).unwrap_or_else(|d| panic!("{d}"));
        let shared: Vec<Vec<(DType, Vec<usize>)>> = m
            .kernels
            .iter()
            .map(|k| {
                let Some(Stmt::Launch { body, .. }) = k.body.first() else {
                    panic!("{}: one launch", k.name)
                };
                body.iter()
                    .filter_map(|s| match s {
                        Stmt::Alloc { ty, scope: Scope::Shared, .. } => Some((ty.dtype, ty.shape.clone())),
                        _ => None,
                    })
                    .collect()
            })
            .collect();
        // The tree of partial sums is as wide as the threads: 128 (at most) for k = 300.
        let tree = |d| vec![(d, vec![128])];
        assert_eq!(shared[..3], [tree(DType::F32), tree(DType::F32), tree(DType::I32)]);
        assert_eq!(shared[3], vec![(DType::F32, vec![16, 16]), (DType::F32, vec![16, 17])], "5 rows: tiles");
        let bufs = inputs::generate(&g, 2).unwrap();
        let tensors = bufs.iter().map(|(n, b)| (n.clone(), b.to_tensor())).collect();
        let want = interp::run(&g, &tensors).unwrap();
        let got = l1::interp::run(&m, &bufs.into_iter().collect()).unwrap_or_else(|d| panic!("{d}"));
        for (o, w) in g.outputs.iter().zip(&want) {
            let tol = Tolerance::default_for(o.ty.dtype);
            compare(w, &got[&o.name].to_tensor(), tol).unwrap_or_else(|e| panic!("output `{}`: {e}", o.name));
        }
    }
}
