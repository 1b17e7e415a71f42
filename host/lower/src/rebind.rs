//! Rebinding a buffer's parameters to another buffer it is a slice or a transpose of: every
//! kernel parameter bound to one buffer is bound to the other instead, its type becomes the
//! other's, and each of its accesses is mapped: an offset added along some axes, or the axes
//! permuted. How a concat's operands are written into its result (`concat_in_place`) and how
//! the readers of a slice or a transpose read its operand (`read_in_place`).
//!
//! Shapes may differ by views on both ends: a parameter may see the rebound buffer through a
//! view (a ViT attention's `[1, 1, h, s, d]` query read as `[1, h, s, d]`), and the other buffer
//! may hold the operand as a view (a projection `[1, s, h * d]` whose `[1, s, h, d]` view is
//! transposed). Such views are taken where the two shapes differ by merging or splitting runs
//! of axes, each run one axis on at least one side ([`regroup`]): an index is carried across as
//! `b = i * d + j` (merged) or `i = b / d`, `j = b % d` (split), and the innermost axis of a run
//! is added last, so a vector loop's access keeps the form the GPU emitters write as one vector
//! (a base plus the loop variable).
//!
//! What it must keep true: a rebound access reaches exactly the element the removed buffer held
//! at that index, and nothing else changes.

use ekb_ir::l1::build::{int, E};
use ekb_ir::l1::visit::{mutate_expr, mutate_stmt, Mutator};
use ekb_ir::l1::{BinOp, Expr, ExprKind, Module, Stmt};
use ekb_ir::TensorType;

/// Where an index into the rebound buffer lands in the operand it is computed from.
#[derive(Debug, Clone)]
pub(crate) enum Map {
    /// Offsets added along axes (`(axis, offset)` pairs): a slice of the operand.
    Offsets(Vec<(usize, usize)>),
    /// Axis `k` of the rebound buffer is axis `perm[k]` of the operand: a transpose of it.
    Permute(Vec<usize>),
}

/// A run of axes of one shape and the run of the other shape holding the same elements (each
/// run's extents multiply to the same; one of the two has a single axis).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Run {
    pub from: Vec<usize>,
    pub to: Vec<usize>,
}

/// How shape `from` regroups into shape `to` (the same elements in row-major order): runs of
/// axes of extent other than 1, each a merge or a split; `None` where a run would need both
/// (`[6, 4]` as `[4, 6]`), or the element counts differ.
pub(crate) fn regroup(from: &[usize], to: &[usize]) -> Option<Vec<Run>> {
    if from.iter().product::<usize>() != to.iter().product::<usize>() {
        return None;
    }
    let live = |s: &[usize]| -> Vec<usize> { (0..s.len()).filter(|&i| s[i] != 1).collect() };
    let (f, t) = (live(from), live(to));
    let (mut i, mut j, mut runs) = (0, 0, Vec::new());
    while i < f.len() && j < t.len() {
        let mut run = Run { from: vec![f[i]], to: vec![t[j]] };
        let (mut pf, mut pt) = (from[f[i]], to[t[j]]);
        (i, j) = (i + 1, j + 1);
        while pf != pt {
            if pf < pt {
                run.from.push(f[i]);
                pf *= from[f[i]];
                i += 1;
            } else {
                run.to.push(t[j]);
                pt *= to[t[j]];
                j += 1;
            }
        }
        if run.from.len() > 1 && run.to.len() > 1 {
            return None;
        }
        runs.push(run);
    }
    Some(runs)
}

/// The index over `to` of the element at `index` over `from`, by `runs` (from [`regroup`]).
fn carry(index: Vec<Expr>, from: &[usize], to: &[usize], runs: &[Run]) -> Vec<Expr> {
    let mut out = vec![Expr::new(ExprKind::Int(0)); to.len()];
    let mut index: Vec<Option<Expr>> = index.into_iter().map(Some).collect();
    for run in runs {
        if let [t] = run.to[..] {
            // Merged: `((i0 * d1 + i1) * d2) + i2`, the innermost added last.
            let mut acc: Option<E> = None;
            for &a in &run.from {
                let e = E(index[a].take().expect("each axis in one run"));
                acc = Some(match acc {
                    None => e,
                    Some(base) => base * int(from[a]) + e,
                });
            }
            out[t] = acc.expect("a run has axes").0;
        } else {
            // Split: `i / (d1 * d2)`, `(i / d2) % d1`, `i % d2`.
            let e = index[run.from[0]].take().expect("each axis in one run");
            for (k, &t) in run.to.iter().enumerate() {
                let stride: usize = run.to[k + 1..].iter().map(|&a| to[a]).product();
                let mut v = E(e.clone());
                if stride != 1 {
                    v = v / int(stride);
                }
                if k != 0 {
                    v = v % int(to[t]);
                }
                out[t] = v.0;
            }
        }
    }
    out
}

/// Binds every parameter bound to `from` to `to` (of type `ty`), each access mapped: from the
/// parameter's view onto `from`'s shape, by `map` onto the operand's shape `operand`, then onto
/// `to`'s. Every such view and `operand` must [`regroup`] into the shape after it.
pub(crate) fn rebind(m: &mut Module, from: &str, to: &str, ty: &TensorType, map: &Map, operand: &[usize]) {
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
            let view = std::mem::replace(&mut p.ty, ty.clone()).shape;
            let mut shift = Shift {
                buf: p.name.clone(),
                view: (view.clone(), regroup(&view, &shape).expect("checked by the caller")),
                shape: shape.clone(),
                map: map.clone(),
                operand: (operand.to_vec(), regroup(operand, &ty.shape).expect("checked by the caller")),
                to: ty.shape.clone(),
            };
            k.body = shift.block(std::mem::take(&mut k.body));
        }
    }
}

/// Maps the index of every access to `buf`: from `view` onto `shape` (the rebound buffer's), by
/// `map` onto `operand`, then onto `to` (the buffer bound instead).
struct Shift {
    buf: String,
    view: (Vec<usize>, Vec<Run>),
    shape: Vec<usize>,
    map: Map,
    operand: (Vec<usize>, Vec<Run>),
    to: Vec<usize>,
}

impl Shift {
    fn shifted(&self, index: Vec<Expr>) -> Vec<Expr> {
        let index = if self.view.0 == self.shape {
            index
        } else {
            carry(index, &self.view.0, &self.shape, &self.view.1)
        };
        let index = match &self.map {
            Map::Offsets(offsets) => {
                let mut index = index;
                for &(axis, offset) in offsets.iter().filter(|(_, o)| *o != 0) {
                    let at = std::mem::replace(&mut index[axis], Expr::new(ExprKind::Int(0)));
                    let offset = int(offset);
                    // `o + i` for a variable, `(b + o) + i` for `b + i`: a base plus the loop
                    // variable stays that.
                    index[axis] = match at.kind {
                        ExprKind::Var(_) => (offset + E(at)).0,
                        ExprKind::Binary { op: BinOp::Add, lhs, rhs }
                            if matches!(rhs.kind, ExprKind::Var(_)) =>
                        {
                            (E(*lhs) + offset + E(*rhs)).0
                        }
                        kind => (E(Expr { kind, span: at.span }) + offset).0,
                    };
                }
                index
            }
            Map::Permute(perm) => {
                let mut out = vec![Expr::new(ExprKind::Int(0)); index.len()];
                for (k, e) in index.into_iter().enumerate() {
                    out[perm[k]] = e;
                }
                out
            }
        };
        if self.operand.0 == self.to {
            index
        } else {
            carry(index, &self.operand.0, &self.to, &self.operand.1)
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_regroup_by_merges_and_splits_only() {
        let run = |from: &[usize], to: &[usize]| Run { from: from.to_vec(), to: to.to_vec() };
        // A projection's heads: [1, 32, 1024] seen as [1, 32, 8, 128].
        assert_eq!(
            regroup(&[1, 32, 8, 128], &[1, 32, 1024]),
            Some(vec![run(&[1], &[1]), run(&[2, 3], &[2])])
        );
        assert_eq!(
            regroup(&[1, 32, 1024], &[1, 32, 8, 128]),
            Some(vec![run(&[1], &[1]), run(&[2], &[2, 3])])
        );
        // Unit axes anywhere.
        assert_eq!(regroup(&[1, 1, 6, 5], &[6, 1, 5]), Some(vec![run(&[2], &[0]), run(&[3], &[2])]));
        assert_eq!(regroup(&[6, 4], &[4, 6]), None);
        assert_eq!(regroup(&[6, 4], &[5, 5]), None);
    }
}
