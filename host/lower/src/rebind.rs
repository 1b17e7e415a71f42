//! Rebinding a buffer's parameters to a larger buffer it is a slice of: every kernel parameter
//! bound to one buffer is bound to another instead, its type becomes the other's, and each of its
//! accesses adds an offset along some axes. How a concat's operands are written into its result
//! (`concat_in_place`) and how a slice's readers read its source (`slice_in_place`).
//!
//! What it must keep true: an access `b[i0, .., ia, ..]` becomes `b[i0, .., o + ia, ..]` and
//! nothing else changes, so the rebound kernels touch exactly the elements of the slice. A
//! parameter that sees the buffer as a view differing from it only by axes of extent 1 (a
//! squeezed slice) has its index placed on the buffer's axes first (0 on the buffer's unit
//! axes). A moved access keeps the form the GPU emitters write as one vector (a base plus the
//! loop variable).

use ekb_ir::l1::build::{int, E};
use ekb_ir::l1::visit::{mutate_expr, mutate_stmt, Mutator};
use ekb_ir::l1::{BinOp, Expr, ExprKind, Module, Stmt};
use ekb_ir::TensorType;

/// Binds every parameter bound to `from` to `to` (of type `ty`), its accesses offset by
/// `offsets` (`(axis, offset)` pairs). Each such parameter is typed as `from`'s buffer or as a
/// view of it differing only by axes of extent 1 ([`same_but_unit_axes`]).
pub(crate) fn rebind(m: &mut Module, from: &str, to: &str, ty: &TensorType, offsets: &[(usize, usize)]) {
    let shape = m.buffer(from).expect("the buffer to rebind exists").ty.shape.clone();
    for r in &mut m.plan {
        let bound: Vec<usize> = (0..r.args.len()).filter(|&j| r.args[j].name == from).collect();
        if bound.is_empty() {
            continue;
        }
        let k = m.kernels.iter_mut().find(|k| k.name == r.kernel).expect("every run names a kernel");
        for j in bound {
            r.args[j].name = to.to_string();
            let p = &mut k.params[j];
            debug_assert!(same_but_unit_axes(&p.ty.shape, &shape), "a view of another shape");
            let view = std::mem::replace(&mut p.ty, ty.clone()).shape;
            let mut shift =
                Shift { buf: p.name.clone(), view, shape: shape.clone(), offsets: offsets.to_vec() };
            k.body = shift.block(std::mem::take(&mut k.body));
        }
    }
}

/// Whether shapes `a` and `b` are the same but for axes of extent 1.
pub(crate) fn same_but_unit_axes(a: &[usize], b: &[usize]) -> bool {
    a.iter().filter(|&&d| d != 1).eq(b.iter().filter(|&&d| d != 1))
}

/// Places the indices of every access to `buf` (of shape `view`) on the axes of `shape`, then
/// adds the offsets.
struct Shift {
    buf: String,
    view: Vec<usize>,
    shape: Vec<usize>,
    offsets: Vec<(usize, usize)>,
}

impl Shift {
    /// The index with each offset added along its axis: `o + i` for a variable `i` and
    /// `(b + o) + i` for `b + i`, so that a vector loop's access stays of the form the GPU
    /// emitters write as one vector (a base and the loop variable), else `e + o`.
    fn shifted(&self, index: Vec<Expr>) -> Vec<Expr> {
        let mut index = if self.view == self.shape {
            index
        } else {
            let mut kept = index.into_iter().zip(&self.view).filter(|(_, &d)| d != 1).map(|(e, _)| e);
            self.shape
                .iter()
                .map(|&d| if d == 1 { int(0).0 } else { kept.next().expect("the same axes but units") })
                .collect()
        };
        for &(axis, offset) in self.offsets.iter().filter(|(_, o)| *o != 0) {
            let at = std::mem::replace(&mut index[axis], Expr::new(ExprKind::Int(0)));
            let offset = int(offset);
            index[axis] = match at.kind {
                ExprKind::Var(_) => (offset + E(at)).0,
                ExprKind::Binary { op: BinOp::Add, lhs, rhs } if matches!(rhs.kind, ExprKind::Var(_)) => {
                    (E(*lhs) + offset + E(*rhs)).0
                }
                kind => (E(Expr { kind, span: at.span }) + offset).0,
            };
        }
        index
    }
}

impl Mutator for Shift {
    fn stmt(&mut self, s: Stmt) -> Vec<Stmt> {
        match mutate_stmt(self, s) {
            Stmt::Store { buf, index, value, span } if buf.name == self.buf => {
                vec![Stmt::Store { index: self.shifted(index), buf, value, span }]
            }
            s => vec![s],
        }
    }
    fn expr(&mut self, e: Expr) -> Expr {
        let e = mutate_expr(self, e);
        match e.kind {
            ExprKind::Load { buf, index } if buf.name == self.buf => {
                Expr { kind: ExprKind::Load { index: self.shifted(index), buf }, span: e.span }
            }
            kind => Expr { kind, span: e.span },
        }
    }
}
