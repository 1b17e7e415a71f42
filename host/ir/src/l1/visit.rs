//! Walks over L1 code: a [`Visitor`] (read-only) and a [`Mutator`] (rebuilding), whose default
//! methods visit every child, so a pass overrides only the nodes it cares about; and the small
//! queries built on them that the verifier, the lowering, the schedule primitives and the
//! backends share (names a kernel defines, whether a body holds some statement, whether an
//! expression loads, variable substitution).
//!
//! What this module must keep true: the default walks visit children in program order (loop
//! bounds before the body, a condition before its branches, indices before the stored value),
//! and a [`Mutator`] that overrides nothing returns its input unchanged.

use super::ast::*;
use std::collections::{BTreeSet, HashMap};

/// A read-only walk over code that lives for `'a` (so a visitor may keep references into it).
/// `stmt` and `expr` default to visiting the children; `block` to visiting each statement in
/// order (override it to see scopes: a block's `let`s and allocations end with it).
pub trait Visitor<'a> {
    fn block(&mut self, body: &'a [Stmt]) {
        walk_block(self, body)
    }
    fn stmt(&mut self, s: &'a Stmt) {
        walk_stmt(self, s)
    }
    fn expr(&mut self, e: &'a Expr) {
        walk_expr(self, e)
    }
}

/// Visits each statement of `body` in order.
pub fn walk_block<'a, V: Visitor<'a> + ?Sized>(v: &mut V, body: &'a [Stmt]) {
    for s in body {
        v.stmt(s);
    }
}

/// Visits the expressions and nested blocks of `s`.
pub fn walk_stmt<'a, V: Visitor<'a> + ?Sized>(v: &mut V, s: &'a Stmt) {
    match s {
        Stmt::Loop { lo, hi, body, .. } => {
            v.expr(lo);
            v.expr(hi);
            v.block(body);
        }
        Stmt::If { cond, then_body, else_body, .. } => {
            v.expr(cond);
            v.block(then_body);
            v.block(else_body);
        }
        Stmt::Let { value, .. } => v.expr(value),
        Stmt::Store { index, value, .. } => {
            index.iter().for_each(|i| v.expr(i));
            v.expr(value);
        }
        Stmt::Launch { body, .. } => v.block(body),
        Stmt::Alloc { .. } | Stmt::Barrier { .. } => {}
    }
}

/// Visits the operands of `e`.
pub fn walk_expr<'a, V: Visitor<'a> + ?Sized>(v: &mut V, e: &'a Expr) {
    match &e.kind {
        ExprKind::Int(_) | ExprKind::Float(_) | ExprKind::Bool(_) | ExprKind::Var(_) => {}
        ExprKind::Load { index, .. } => index.iter().for_each(|i| v.expr(i)),
        ExprKind::Unary { arg, .. } | ExprKind::Cast { arg, .. } => v.expr(arg),
        ExprKind::Binary { lhs, rhs, .. } => {
            v.expr(lhs);
            v.expr(rhs);
        }
        ExprKind::Select { cond, then_val, else_val } => {
            v.expr(cond);
            v.expr(then_val);
            v.expr(else_val);
        }
        ExprKind::Call { args, .. } => args.iter().for_each(|a| v.expr(a)),
    }
}

/// A rebuilding walk. `stmt` returns the statements that replace `s` (none deletes it, several
/// splice them in); the defaults rebuild each node from its rewritten children.
pub trait Mutator {
    fn block(&mut self, body: Vec<Stmt>) -> Vec<Stmt> {
        mutate_block(self, body)
    }
    fn stmt(&mut self, s: Stmt) -> Vec<Stmt> {
        vec![mutate_stmt(self, s)]
    }
    fn expr(&mut self, e: Expr) -> Expr {
        mutate_expr(self, e)
    }
}

/// Rewrites each statement of `body` in order, splicing the replacements.
pub fn mutate_block<M: Mutator + ?Sized>(m: &mut M, body: Vec<Stmt>) -> Vec<Stmt> {
    body.into_iter().flat_map(|s| m.stmt(s)).collect()
}

/// `s` with its expressions and nested blocks rewritten.
pub fn mutate_stmt<M: Mutator + ?Sized>(m: &mut M, s: Stmt) -> Stmt {
    match s {
        Stmt::Loop { var, kind, lo, hi, body, span } => {
            let (lo, hi) = (m.expr(lo), m.expr(hi));
            Stmt::Loop { var, kind, lo, hi, body: m.block(body), span }
        }
        Stmt::If { cond, then_body, else_body, span } => {
            let cond = m.expr(cond);
            let then_body = m.block(then_body);
            Stmt::If { cond, then_body, else_body: m.block(else_body), span }
        }
        Stmt::Let { name, value, span } => Stmt::Let { name, value: m.expr(value), span },
        Stmt::Store { buf, index, value, span } => {
            let index = index.into_iter().map(|i| m.expr(i)).collect();
            Stmt::Store { buf, index, value: m.expr(value), span }
        }
        Stmt::Launch { grid, block, shared_optin, body, span } => {
            Stmt::Launch { grid, block, shared_optin, body: m.block(body), span }
        }
        s @ (Stmt::Alloc { .. } | Stmt::Barrier { .. }) => s,
    }
}

/// `e` with its operands rewritten.
pub fn mutate_expr<M: Mutator + ?Sized>(m: &mut M, e: Expr) -> Expr {
    let bx = |m: &mut M, e: Box<Expr>| Box::new(m.expr(*e));
    let kind = match e.kind {
        k @ (ExprKind::Int(_) | ExprKind::Float(_) | ExprKind::Bool(_) | ExprKind::Var(_)) => k,
        ExprKind::Load { buf, index } => {
            ExprKind::Load { buf, index: index.into_iter().map(|i| m.expr(i)).collect() }
        }
        ExprKind::Unary { op, arg } => ExprKind::Unary { op, arg: bx(m, arg) },
        ExprKind::Cast { to, arg } => ExprKind::Cast { to, arg: bx(m, arg) },
        ExprKind::Binary { op, lhs, rhs } => {
            let lhs = bx(m, lhs);
            ExprKind::Binary { op, lhs, rhs: bx(m, rhs) }
        }
        ExprKind::Select { cond, then_val, else_val } => {
            let cond = bx(m, cond);
            let then_val = bx(m, then_val);
            ExprKind::Select { cond, then_val, else_val: bx(m, else_val) }
        }
        ExprKind::Call { func, args } => {
            ExprKind::Call { func, args: args.into_iter().map(|a| m.expr(a)).collect() }
        }
    };
    Expr { kind, span: e.span }
}

// ---------------------------------------------------------------------------------------------
// Queries

/// Calls `f` on every statement of `body`, at any depth, in program order (a statement before
/// the statements nested in it).
pub fn for_each_stmt<'a>(body: &'a [Stmt], f: &mut impl FnMut(&'a Stmt)) {
    for s in body {
        f(s);
        match s {
            Stmt::Loop { body, .. } | Stmt::Launch { body, .. } => for_each_stmt(body, f),
            Stmt::If { then_body, else_body, .. } => {
                for_each_stmt(then_body, f);
                for_each_stmt(else_body, f);
            }
            Stmt::Let { .. } | Stmt::Store { .. } | Stmt::Alloc { .. } | Stmt::Barrier { .. } => {}
        }
    }
}

/// Whether some statement of `body`, at any depth, satisfies `pred`.
pub fn any_stmt(body: &[Stmt], pred: impl Fn(&Stmt) -> bool) -> bool {
    let mut found = false;
    for_each_stmt(body, &mut |s| found |= pred(s));
    found
}

/// Calls `f` on every expression of `body` and on every subexpression, in program order (an
/// expression before its operands).
pub fn for_each_expr<'a>(body: &'a [Stmt], f: impl FnMut(&'a Expr)) {
    struct Each<F>(F);
    impl<'a, F: FnMut(&'a Expr)> Visitor<'a> for Each<F> {
        fn expr(&mut self, e: &'a Expr) {
            (self.0)(e);
            walk_expr(self, e);
        }
    }
    Each(f).block(body);
}

/// Calls `f` on `e` and every subexpression of it, an expression before its operands.
pub fn for_each_subexpr<'a>(e: &'a Expr, f: impl FnMut(&'a Expr)) {
    struct Each<F>(F);
    impl<'a, F: FnMut(&'a Expr)> Visitor<'a> for Each<F> {
        fn expr(&mut self, e: &'a Expr) {
            (self.0)(e);
            walk_expr(self, e);
        }
    }
    Each(f).expr(e);
}

/// Whether `e` reads a buffer.
pub fn has_load(e: &Expr) -> bool {
    let mut found = false;
    for_each_subexpr(e, |x| found |= matches!(x.kind, ExprKind::Load { .. }));
    found
}

/// Whether `e` mentions the variable `name`.
pub fn uses_var(e: &Expr, name: &str) -> bool {
    let mut found = false;
    for_each_subexpr(e, |x| found |= matches!(&x.kind, ExprKind::Var(v) if v == name));
    found
}

/// Every name a kernel defines, in program order: its parameters, then its loop and launch
/// variables, `let`s and allocations (so generated names can avoid them).
pub fn defined_names(k: &Kernel) -> Vec<String> {
    let mut out: Vec<String> = k.params.iter().map(|p| p.name.clone()).collect();
    for_each_stmt(&k.body, &mut |s| match s {
        Stmt::Loop { var, .. } => out.push(var.clone()),
        Stmt::Let { name, .. } | Stmt::Alloc { name, .. } => out.push(name.clone()),
        Stmt::Launch { grid, block, .. } => out.extend(grid.iter().chain(block).map(|d| d.var.clone())),
        Stmt::If { .. } | Stmt::Store { .. } | Stmt::Barrier { .. } => {}
    });
    out
}

/// The variables `body` reads and the buffers it loads or stores, each once, sorted.
pub fn names_used(body: &[Stmt]) -> (BTreeSet<String>, BTreeSet<String>) {
    let (mut vars, mut bufs) = (BTreeSet::new(), BTreeSet::new());
    for_each_stmt(body, &mut |s| {
        if let Stmt::Store { buf, .. } = s {
            bufs.insert(buf.name.clone());
        }
    });
    for_each_expr(body, |e| match &e.kind {
        ExprKind::Var(v) => {
            vars.insert(v.clone());
        }
        ExprKind::Load { buf, .. } => {
            bufs.insert(buf.name.clone());
        }
        _ => {}
    });
    (vars, bufs)
}

/// `e` with every variable named in `map` replaced by its expression (the replacements are not
/// rewritten again).
pub fn substitute(e: Expr, map: &HashMap<String, Expr>) -> Expr {
    struct Subst<'a>(&'a HashMap<String, Expr>);
    impl Mutator for Subst<'_> {
        fn expr(&mut self, e: Expr) -> Expr {
            match &e.kind {
                ExprKind::Var(v) => self.0.get(v).cloned().unwrap_or(e),
                _ => mutate_expr(self, e),
            }
        }
    }
    Subst(map).expr(e)
}

/// `body` with every variable named in `map` replaced, in every expression.
pub fn substitute_block(body: Vec<Stmt>, map: &HashMap<String, Expr>) -> Vec<Stmt> {
    struct Subst<'a>(&'a HashMap<String, Expr>);
    impl Mutator for Subst<'_> {
        fn expr(&mut self, e: Expr) -> Expr {
            substitute(e, self.0)
        }
    }
    Subst(map).block(body)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::l1::parse::parse;
    use crate::l1::print::print;

    const SRC: &str = "module m {
  input x: f32[4]
  output y: f32[4]
  kernel k(x: f32[4] in, y: f32[4] out) {
    for i in 0..4 {
      let a = x[i] * 2.0
      if i < 2 {
        y[i] = a
      } else {
        y[i] = exp(a)
      }
    }
  }
  run k(x, y)
}
";

    fn module() -> Module {
        parse(&crate::diag::SourceFile::new("m.ekir", SRC)).unwrap()
    }

    #[test]
    fn an_identity_mutator_returns_the_module_unchanged() {
        struct Id;
        impl Mutator for Id {}
        let m = module();
        let body = Id.block(m.kernels[0].body.clone());
        assert_eq!(body, m.kernels[0].body);
    }

    #[test]
    fn walks_visit_in_program_order() {
        let m = module();
        let mut seen = Vec::new();
        for_each_expr(&m.kernels[0].body, |e| {
            if let ExprKind::Var(v) = &e.kind {
                seen.push(v.clone());
            }
        });
        assert_eq!(seen, ["i", "i", "i", "a", "i", "a"]);
        assert_eq!(defined_names(&m.kernels[0]), ["x", "y", "i", "a"]);
        assert!(any_stmt(&m.kernels[0].body, |s| matches!(s, Stmt::If { .. })));
        assert!(!any_stmt(&m.kernels[0].body, |s| matches!(s, Stmt::Barrier { .. })));
    }

    #[test]
    fn substitution_replaces_variables_everywhere() {
        let mut m = module();
        let map = HashMap::from([("i".to_string(), Expr::new(ExprKind::Int(3)))]);
        let Stmt::Loop { body, .. } = m.kernels[0].body.remove(0) else { panic!() };
        m.kernels[0].body = substitute_block(body, &map);
        let text = print(&m);
        assert!(text.contains("let a = x[3] * 2.0"), "{text}");
        assert!(text.contains("if 3 < 2"), "{text}");
        assert!(!has_load(&Expr::new(ExprKind::Var("a".into()))));
    }
}
