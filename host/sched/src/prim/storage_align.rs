//! `storage_align K.buf axis A factor F offset O`: the stride of dimension `A` of the allocation
//! `buf` (how many elements apart `buf[.., i, ..]` and `buf[.., i + 1, ..]` lie) grows to the
//! smallest `S` not below it with `S % F == O` (TVM's `storage_align`): `alloc tile: f32[8,8]
//! shared` aligned on axis 0 with factor 8 and offset 1 becomes `f32[8,9]`, so that the elements
//! of a column fall on different memory banks; offset 0 starts every row on a multiple of `F`.
//! The dimensions inside `A` become one of extent `S`. For `A` the next-to-innermost dimension
//! that is the innermost growing by `S` less its extent (what `pad` does with a fixed amount),
//! every index unchanged; for an outer `A` the inner dimensions are flattened, and every index
//! into the buffer is rewritten: `t: f32[2,3,4]` on axis 0 with factor 8 and offset 0 becomes
//! `f32[2,16]`, and `t[i, j, l]` becomes `t[i, j * 4 + l]`. A stride that already satisfies the
//! condition is left as it is (the step changes nothing).
//!
//! Legal for an `alloc` (`local` or `shared`; a module buffer keeps its layout, which the other
//! kernels and the caller see) with `A` below its innermost dimension (whose stride is 1) and
//! `O < F`, when the interval analysis proves every index of the dimensions inside `A` below
//! their extents, and those of flattened dimensions at least 0 (an index outside its dimension
//! would land on another element of the flattened one instead of failing its bounds check);
//! `if` conditions do not narrow the indices here, as for `pad`. The aligned allocation must
//! hold at most 2^31-1 elements; its bytes are checked against a target's stack and
//! shared-memory limits by the verifier when given one.

use super::pad::{check_indices, find_alloc};
use crate::handle;
use crate::trace::BufRef;
use ekb_ir::l1::build::{int, E};
use ekb_ir::l1::visit::{mutate_expr, mutate_stmt, Mutator};
use ekb_ir::l1::{Expr, ExprKind, Module, Stmt};
use ekb_ir::Diagnostic;

pub fn apply(m: &mut Module, r: &BufRef, axis: u32, factor: u32, offset: u32) -> Result<(), Diagnostic> {
    let ki = handle::kernel_index(m, &r.kernel)?;
    let k = &mut m.kernels[ki];
    let path = find_alloc(k, r)?;
    let Stmt::Alloc { ty, .. } = path.get(&k.body) else { unreachable!("the path leads to an alloc") };
    let ty = ty.clone();
    let (axis, rank) = (axis as usize, ty.rank());
    if axis + 1 >= rank {
        let hint = if rank >= 2 {
            format!(
                "align the stride of a dimension in 0..{} (the innermost dimension's stride is 1)",
                rank - 1
            )
        } else {
            "align an allocation of at least two dimensions (`pad` grows a vector)".to_string()
        };
        return Err(Diagnostic::error(format!(
            "`{}` ({ty}) of kernel {} has no dimension {axis} with a stride to align",
            r.buf, k.name
        ))
        .with_hint(hint));
    }
    if offset >= factor {
        return Err(Diagnostic::error(format!(
            "offset {offset} is not below the factor {factor}: no stride leaves a remainder of {offset}"
        ))
        .with_expected(format!("an offset in 0..{factor}")));
    }
    let stride: usize = ty.shape[axis + 1..].iter().product();
    let (f, o) = (factor as usize, offset as usize);
    let aligned = stride + (o + f - stride % f) % f;
    if aligned == stride {
        return Ok(());
    }
    let outer: usize = ty.shape[..=axis].iter().product();
    if outer.checked_mul(aligned).is_none_or(|n| n > i32::MAX as usize) {
        return Err(Diagnostic::error(format!(
            "`{}` ({ty}) of kernel {} with a stride of {aligned} along dimension {axis} would hold more than {} elements",
            r.buf,
            k.name,
            i32::MAX
        ))
        .with_hint("align a smaller allocation, or with a smaller factor"));
    }
    let flatten = axis + 2 < rank;
    for d in axis + 1..rank {
        check_indices(k, &path, &r.buf, (d, ty.shape[d]), flatten, "align")?;
    }
    let block = path.block_mut(&mut k.body);
    if flatten {
        let strides = (axis + 1..rank).map(|d| ty.shape[d + 1..].iter().product()).collect();
        let rest = block.split_off(path.index + 1);
        block.extend(Flatten { buf: &r.buf, axis, strides }.block(rest));
    }
    if let Stmt::Alloc { ty, .. } = &mut block[path.index] {
        ty.shape.truncate(axis + 1);
        ty.shape.push(aligned);
    }
    Ok(())
}

/// Rewrites every index `[.., i_A, j, .., l]` of `buf` into `[.., i_A, j * s_j + .. + l]`, with
/// `strides` those of the dimensions inside `axis` in the dense layout.
struct Flatten<'a> {
    buf: &'a str,
    axis: usize,
    strides: Vec<usize>,
}

impl Flatten<'_> {
    fn index(&self, mut index: Vec<Expr>) -> Vec<Expr> {
        let inner = index.split_off(self.axis + 1);
        let flat = inner.into_iter().zip(&self.strides).map(|(e, &s)| E(e) * int(s)).reduce(|a, b| a + b);
        index.push(flat.expect("at least one dimension inside the axis").0);
        index
    }
}

impl Mutator for Flatten<'_> {
    fn stmt(&mut self, s: Stmt) -> Vec<Stmt> {
        match mutate_stmt(self, s) {
            Stmt::Store { buf, index, value, span } if buf.name == self.buf => {
                vec![Stmt::Store { buf, index: self.index(index), value, span }]
            }
            s => vec![s],
        }
    }
    fn expr(&mut self, e: Expr) -> Expr {
        match mutate_expr(self, e) {
            Expr { kind: ExprKind::Load { buf, index }, span } if buf.name == self.buf => {
                Expr { kind: ExprKind::Load { buf, index: self.index(index) }, span }
            }
            e => e,
        }
    }
}
