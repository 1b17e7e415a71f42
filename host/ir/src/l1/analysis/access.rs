//! The loads and stores of a body, and the region of each buffer it touches.
//!
//! [`accesses`] lists every load and store in program order (a store after the loads of its
//! indices and value). [`regions`] gives, per buffer and direction (read or write), the box of
//! elements the body may touch: per dimension the union of the index intervals, with loop
//! variables ranging over their bounds and `let`s over their values' intervals (`if`
//! conditions are not used to narrow: a region over-approximates). A dimension whose index
//! interval is unknown is `None`.

use super::interval::{eval, Interval};
use crate::l1::ast::{Expr, ExprKind, Stmt};
use crate::l1::visit::{walk_expr, walk_stmt, Visitor};

/// One load or store.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BufAccess<'a> {
    pub buf: &'a str,
    pub index: &'a [Expr],
    pub write: bool,
}

/// Every load and store of `body`, in program order.
pub fn accesses(body: &[Stmt]) -> Vec<BufAccess<'_>> {
    struct Collect<'a>(Vec<BufAccess<'a>>);
    impl<'a> Visitor<'a> for Collect<'a> {
        fn stmt(&mut self, s: &'a Stmt) {
            walk_stmt(self, s);
            if let Stmt::Store { buf, index, .. } = s {
                self.0.push(BufAccess { buf: &buf.name, index, write: true });
            }
        }
        fn expr(&mut self, e: &'a Expr) {
            walk_expr(self, e);
            if let ExprKind::Load { buf, index } = &e.kind {
                self.0.push(BufAccess { buf: &buf.name, index, write: false });
            }
        }
    }
    let mut c = Collect(Vec::new());
    c.block(body);
    c.0
}

/// The elements of one buffer a body reads or writes.
#[derive(Debug, Clone, PartialEq)]
pub struct Region {
    pub buf: String,
    pub write: bool,
    /// Per dimension, the interval of indices (`None`: unknown).
    pub dims: Vec<Option<Interval>>,
}

/// The regions `body` reads and writes, one per buffer and direction, in order of first
/// access. `env` gives the intervals of the variables defined outside `body`.
pub fn regions(body: &[Stmt], env: &impl Fn(&str) -> Option<Interval>) -> Vec<Region> {
    struct Walk<'e, F> {
        env: &'e F,
        scope: Vec<(String, Option<Interval>)>,
        out: Vec<Region>,
    }
    impl<F: Fn(&str) -> Option<Interval>> Walk<'_, F> {
        fn interval(&self, e: &Expr) -> Option<Interval> {
            let look = |v: &str| match self.scope.iter().rev().find(|(n, _)| n == v) {
                Some((_, iv)) => *iv,
                None => (self.env)(v),
            };
            eval(e, &look)
        }
        fn record(&mut self, buf: &str, index: &[Expr], write: bool) {
            let dims: Vec<Option<Interval>> = index.iter().map(|i| self.interval(i)).collect();
            match self.out.iter_mut().find(|r| r.buf == buf && r.write == write) {
                Some(r) => {
                    for (d, n) in r.dims.iter_mut().zip(dims) {
                        *d = d.zip(n).map(|(a, b)| a.union(b));
                    }
                }
                None => self.out.push(Region { buf: buf.to_string(), write, dims }),
            }
        }
    }
    impl<'a, F: Fn(&str) -> Option<Interval>> Visitor<'a> for Walk<'_, F> {
        fn block(&mut self, body: &'a [Stmt]) {
            let depth = self.scope.len();
            crate::l1::visit::walk_block(self, body);
            self.scope.truncate(depth);
        }
        fn stmt(&mut self, s: &'a Stmt) {
            match s {
                Stmt::Loop { var, lo, hi, body, .. } => {
                    self.expr(lo);
                    self.expr(hi);
                    let iv =
                        self.interval(lo).zip(self.interval(hi)).map(|(l, h)| Interval::new(l.lo, h.hi - 1));
                    self.scope.push((var.clone(), iv.filter(|i| !i.is_empty())));
                    self.block(body);
                    self.scope.pop();
                }
                Stmt::Let { name, value, .. } => {
                    self.expr(value);
                    let iv = self.interval(value);
                    self.scope.push((name.clone(), iv));
                }
                Stmt::Store { buf, index, .. } => {
                    walk_stmt(self, s);
                    self.record(&buf.name, index, true);
                }
                _ => walk_stmt(self, s),
            }
        }
        fn expr(&mut self, e: &'a Expr) {
            if let ExprKind::Load { buf, index } = &e.kind {
                self.record(&buf.name, index, false);
            }
            walk_expr(self, e);
        }
    }
    let mut w = Walk { env, scope: Vec::new(), out: Vec::new() };
    w.block(body);
    w.out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::l1::build::{int, let_, loop_, var, Buf};
    use crate::l1::LoopKind;
    use crate::types::{DType, TensorType};

    #[test]
    fn regions_cover_the_loop_ranges() {
        let x = Buf::new("x", TensorType::new(DType::F32, [8, 8]));
        let y = Buf::new("y", TensorType::new(DType::F32, [4]));
        let body = vec![loop_(
            LoopKind::Serial,
            "j",
            int(0),
            int(4),
            vec![let_("a", var("j") * int(2)), y.store1(var("j"), x.load(&[var("i"), var("a") + int(1)]))],
        )];
        let env = |v: &str| (v == "i").then_some(Interval::new(2, 3));
        let r = regions(&body, &env);
        assert_eq!(r.len(), 2);
        assert_eq!((r[0].buf.as_str(), r[0].write), ("x", false));
        assert_eq!(r[0].dims, [Some(Interval::new(2, 3)), Some(Interval::new(1, 7))]);
        assert_eq!((r[1].buf.as_str(), r[1].write), ("y", true));
        assert_eq!(r[1].dims, [Some(Interval::new(0, 3))]);
        let acc = accesses(&body);
        assert_eq!(acc.iter().map(|a| (a.buf, a.write)).collect::<Vec<_>>(), [("x", false), ("y", true)]);
    }
}
