//! How deeply a kernel body nests, and the limit on it ([`MAX_NESTING`]).
//!
//! The walks over L1 code (the visitor and mutator, the verifier, the interpreter, the printer,
//! the LLVM and C emitters) recurse once per level of nesting, so the depth of the tree bounds
//! the stack they need. Levels are counted down from the kernel: a statement of the kernel's body
//! is at level 1, a statement inside a loop, `if` or `launch` one level below it, an expression
//! one level below its statement and an operand one level below its operator. A left-deep chain
//! `a + b + ... + z` of N terms therefore nests N levels (parentheses only group: they add none).
//!
//! What this module must keep true: the measures here are iterative (an explicit stack, never
//! recursion), so they measure a tree of any depth without overflowing the stack; the L1 parser
//! and the verifier refuse a kernel body deeper than [`MAX_NESTING`], so the recursive walks never
//! see one; and every walk stays within a 2 MiB thread stack at that depth (tested by walking a
//! body of exactly [`MAX_NESTING`] levels on such a thread).

use super::ast::*;
use crate::diag::Diagnostic;

/// The most levels a kernel body may nest, statements and expressions together. Deep enough
/// for any program written by hand or generated (the lowering's deepest over the task suite is
/// 17), shallow enough for every walk on a 2 MiB thread stack.
pub const MAX_NESTING: usize = 256;

/// The levels `e` spans: 1 for a literal or a variable, one more than its deepest operand
/// otherwise.
pub fn expr_levels(e: &Expr) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(e, 1)];
    while let Some((e, level)) = stack.pop() {
        deepest = deepest.max(level);
        for_each_operand(e, |o| stack.push((o, level + 1)));
    }
    deepest
}

/// The first statement of `body` (in program order) at which the body nests deeper than
/// `limit`, with the level its deepest part reaches.
pub fn first_too_deep(body: &[Stmt], limit: usize) -> Option<(&Stmt, usize)> {
    // Statements still to look at, with their levels, the next one on top.
    let mut stack: Vec<(&Stmt, usize)> = body.iter().rev().map(|s| (s, 1)).collect();
    while let Some((s, level)) = stack.pop() {
        let exprs = stmt_exprs(s).map(expr_levels).max().unwrap_or(0);
        if level > limit || level + exprs > limit {
            return Some((s, level + exprs));
        }
        for b in stmt_bodies(s).into_iter().rev() {
            stack.extend(b.iter().rev().map(|c| (c, level + 1)));
        }
    }
    None
}

/// The error for a statement of kernel `kernel` whose deepest part is at `levels`.
pub fn too_deep(kernel: &str, s: &Stmt, levels: usize) -> Diagnostic {
    Diagnostic::error(format!(
        "{} in kernel `{kernel}` nests {levels} levels deep; at most {MAX_NESTING} are allowed",
        describe(s)
    ))
    .at(stmt_span(s))
    .with_expected(format!("statements and expressions nested at most {MAX_NESTING} levels"))
    .with_hint(SPLIT_HINT)
}

/// How to bring a too deep expression within the limit.
pub const SPLIT_HINT: &str = "each operand of an operator is one level below it, so a chain `a + b + c + ...` of N \
                              terms nests N levels: split it into `let` bindings of partial results (`let s0 = a + \
                              b + ...`, then `s0 + ...`)";

/// What a statement is, for messages that cannot print it (it is too deep to print).
fn describe(s: &Stmt) -> String {
    match s {
        Stmt::Loop { var, .. } => format!("the loop over `{var}`"),
        Stmt::If { .. } => "an `if`".into(),
        Stmt::Let { name, .. } => format!("the `let {name}`"),
        Stmt::Store { buf, .. } => format!("the store into `{}`", buf.name),
        Stmt::Alloc { name, .. } => format!("the allocation `{name}`"),
        Stmt::Launch { .. } => "the `launch`".into(),
        Stmt::Barrier { .. } => "a `barrier`".into(),
    }
}

fn stmt_span(s: &Stmt) -> crate::diag::Span {
    match s {
        Stmt::Loop { span, .. }
        | Stmt::If { span, .. }
        | Stmt::Let { span, .. }
        | Stmt::Store { span, .. }
        | Stmt::Alloc { span, .. }
        | Stmt::Launch { span, .. }
        | Stmt::Barrier { span } => *span,
    }
}

/// The expressions a statement holds directly (not those of its nested blocks).
fn stmt_exprs(s: &Stmt) -> impl Iterator<Item = &Expr> {
    let (first, rest): (Option<&Expr>, &[Expr]) = match s {
        Stmt::Loop { lo, hi, .. } => (Some(lo), std::slice::from_ref(hi)),
        Stmt::If { cond, .. } => (Some(cond), &[]),
        Stmt::Let { value, .. } => (Some(value), &[]),
        Stmt::Store { index, value, .. } => (Some(value), index.as_slice()),
        Stmt::Alloc { .. } | Stmt::Launch { .. } | Stmt::Barrier { .. } => (None, &[]),
    };
    first.into_iter().chain(rest)
}

/// The blocks nested directly in a statement.
fn stmt_bodies(s: &Stmt) -> Vec<&[Stmt]> {
    match s {
        Stmt::Loop { body, .. } | Stmt::Launch { body, .. } => vec![body],
        Stmt::If { then_body, else_body, .. } => vec![then_body, else_body],
        Stmt::Let { .. } | Stmt::Store { .. } | Stmt::Alloc { .. } | Stmt::Barrier { .. } => vec![],
    }
}

/// Calls `f` on each direct operand of `e`.
fn for_each_operand<'a>(e: &'a Expr, mut f: impl FnMut(&'a Expr)) {
    match &e.kind {
        ExprKind::Int(_) | ExprKind::Float(_) | ExprKind::Bool(_) | ExprKind::Var(_) => {}
        ExprKind::Load { index: args, .. } | ExprKind::Call { args, .. } => args.iter().for_each(f),
        ExprKind::Unary { arg, .. } | ExprKind::Cast { arg, .. } => f(arg),
        ExprKind::Binary { lhs, rhs, .. } => {
            f(lhs);
            f(rhs);
        }
        ExprKind::Select { cond, then_val, else_val } => {
            f(cond);
            f(then_val);
            f(else_val);
        }
    }
}

/// The text of a module (`x: f32[1]` in, `y: f32[1]` out) whose kernel stores
/// `y[0] = max(v + v + ... + v, 0.0)`, a chain of `terms` terms with `let v = x[0]`, inside
/// `loops` nested loops, all inside a one-thread `launch` when `gpu`. Its body nests
/// `loops + terms + 2` levels (one more with the launch) and it computes `y[0] = terms * x[0]` for
/// a non-negative `x[0]`: the shape the tests of every walk run at exactly [`MAX_NESTING`] levels.
pub fn chain_module(loops: usize, terms: usize, gpu: bool) -> String {
    let mut body = String::new();
    if gpu {
        body.push_str("launch grid(bx in 0..1) block(tx in 0..1) {\n");
    }
    for l in 0..loops {
        body.push_str(&format!("for l{l} in 0..1 {{\n"));
    }
    let chain = vec!["v"; terms].join(" + ");
    body.push_str(&format!("let v = x[0]\ny[0] = max({chain}, 0.0)\n"));
    body.push_str(&"}\n".repeat(loops + usize::from(gpu)));
    format!(
        "module deep {{\n  input x: f32[1]\n  output y: f32[1]\n  kernel k(x: f32[1] in, y: f32[1] out) {{\n{body}  \
         }}\n  run k(x, y)\n}}\n"
    )
}
