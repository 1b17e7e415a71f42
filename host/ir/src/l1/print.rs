//! The canonical L1 text of a [`Module`].
//!
//! Layout: two-space indentation; `input`/`output`/`buffer` lines in the order of the module;
//! a blank line before each kernel and before the run list; one statement and one `run` per
//! line; `else if` when an `else` block holds exactly one `if`. Expressions carry the fewest
//! parentheses the precedence needs (binary operators associate to the left, so the right
//! operand of an operator of equal binding is parenthesised; comparisons do not chain, so a
//! comparison inside a comparison is too), and a negation or negative literal right of a binary
//! `-` is parenthesised for legibility (`a - (-3)`, but `a * -3`).
//!
//! What this printer must keep true: `parse(print(m))` equals `m` up to spans, for every module
//! the parser can produce, and `print(parse(print(m))) == print(m)` for every module. Literals
//! print so that they read back bit-exactly: f32 by the shortest representation that reads back
//! (`{:?}` of the f32, with `.0` added to integral values), a negated literal node (which the
//! parser would fold) as `-(3)`.

use super::ast::*;
use super::parse::prec;
use std::fmt::Write;

/// The canonical text of a module, ending with a new line.
pub fn print(m: &Module) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "module {} {{", m.name);
    let mut first = true;
    for b in &m.buffers {
        let role = match b.role {
            BufferRole::Input => "input",
            BufferRole::Output => "output",
            BufferRole::Temp => "buffer",
        };
        let _ = writeln!(out, "  {role} {}: {}", b.name, b.ty);
        first = false;
    }
    for k in &m.kernels {
        if !first {
            out.push('\n');
        }
        first = false;
        let params: Vec<String> = k
            .params
            .iter()
            .map(|p| {
                let access = match p.access {
                    Access::In => "in",
                    Access::Out => "out",
                    Access::InOut => "inout",
                };
                format!("{}: {} {access}", p.name, p.ty)
            })
            .collect();
        let _ = writeln!(out, "  kernel {}({}) {{", k.name, params.join(", "));
        block(&mut out, &k.body, 1);
        out.push_str("  }\n");
    }
    if !m.plan.is_empty() && !first {
        out.push('\n');
    }
    for r in &m.plan {
        let args: Vec<&str> = r.args.iter().map(|a| a.name.as_str()).collect();
        let step = if r.prepare { "prepare" } else { "run" };
        let _ = writeln!(out, "  {step} {}({})", r.kernel, args.join(", "));
    }
    out.push_str("}\n");
    out
}

/// The statements of a block, each on its own line(s), one level deeper than `depth`.
fn block(out: &mut String, body: &[Stmt], depth: usize) {
    for s in body {
        stmt(out, s, depth + 1);
    }
}

fn indent(out: &mut String, depth: usize) {
    for _ in 0..depth {
        out.push_str("  ");
    }
}

fn stmt(out: &mut String, s: &Stmt, depth: usize) {
    indent(out, depth);
    match s {
        Stmt::Loop { var, kind, lo, hi, body, .. } => {
            let kw = match kind {
                LoopKind::Serial => "for",
                LoopKind::Parallel => "parallel",
                LoopKind::Vectorize => "vectorize",
                LoopKind::Unroll => "unroll",
            };
            let _ = writeln!(out, "{kw} {var} in {}..{} {{", print_expr(lo), print_expr(hi));
            block(out, body, depth);
            indent(out, depth);
            out.push_str("}\n");
        }
        Stmt::If { .. } => {
            if_chain(out, s, depth);
            out.push('\n');
        }
        Stmt::Let { name, value, .. } => {
            let _ = writeln!(out, "let {name} = {}", print_expr(value));
        }
        Stmt::Store { buf, index, value, .. } => {
            let _ = writeln!(out, "{}[{}] = {}", buf.name, exprs(index), print_expr(value));
        }
        Stmt::Alloc { name, ty, scope, .. } => {
            let _ = writeln!(out, "alloc {name}: {ty} {}", scope.name());
        }
        Stmt::Launch { grid, block: threads, shared_optin, body, .. } => {
            let optin = if *shared_optin { " shared_optin" } else { "" };
            let _ = writeln!(out, "launch grid({}) block({}){optin} {{", dims(grid), dims(threads));
            block(out, body, depth);
            indent(out, depth);
            out.push_str("}\n");
        }
        Stmt::Barrier { .. } => out.push_str("barrier\n"),
    }
}

/// `if c { .. } else if .. { .. } else { .. }` without the final new line; the caller has
/// written the indentation of the first line.
fn if_chain(out: &mut String, s: &Stmt, depth: usize) {
    let Stmt::If { cond, then_body, else_body, .. } = s else { return };
    let _ = writeln!(out, "if {} {{", print_expr(cond));
    block(out, then_body, depth);
    indent(out, depth);
    out.push('}');
    match else_body.as_slice() {
        [] => {}
        [nested @ Stmt::If { .. }] => {
            out.push_str(" else ");
            if_chain(out, nested, depth);
        }
        _ => {
            out.push_str(" else {\n");
            block(out, else_body, depth);
            indent(out, depth);
            out.push('}');
        }
    }
}

/// `bx in 0..4, by in 0..2`
fn dims(ds: &[LaunchDim]) -> String {
    ds.iter().map(|d| format!("{} in 0..{}", d.var, d.extent)).collect::<Vec<_>>().join(", ")
}

fn exprs(es: &[Expr]) -> String {
    es.iter().map(print_expr).collect::<Vec<_>>().join(", ")
}

/// The canonical text of an expression (as it appears in the module text).
pub fn print_expr(e: &Expr) -> String {
    let mut out = String::new();
    expr(&mut out, e);
    out
}

/// Binding strength of an expression's outermost construct: binary levels 0..=4 as in the
/// parser, 5 for unary operators and negative literals, 6 for everything atomic.
fn level(e: &Expr) -> u8 {
    match &e.kind {
        ExprKind::Binary { op, .. } => prec(*op),
        ExprKind::Unary { .. } => 5,
        ExprKind::Int(v) if *v < 0 => 5,
        ExprKind::Float(x) if x.is_sign_negative() && !x.is_nan() => 5,
        _ => 6,
    }
}

fn paren(out: &mut String, e: &Expr, needed: bool) {
    if needed {
        out.push('(');
        expr(out, e);
        out.push(')');
    } else {
        expr(out, e);
    }
}

fn expr(out: &mut String, e: &Expr) {
    match &e.kind {
        ExprKind::Int(v) => {
            let _ = write!(out, "{v}");
        }
        ExprKind::Float(x) => out.push_str(&fmt_f32(*x)),
        ExprKind::Bool(b) => {
            let _ = write!(out, "{b}");
        }
        ExprKind::Var(v) => out.push_str(v),
        ExprKind::Load { buf, index } => {
            let _ = write!(out, "{}[{}]", buf.name, exprs(index));
        }
        ExprKind::Unary { op, arg } => {
            out.push(match op {
                UnOp::Neg => '-',
                UnOp::Not => '!',
            });
            // A literal under `-` is parenthesised, or it would read back as a negative literal.
            let literal = matches!(arg.kind, ExprKind::Int(_) | ExprKind::Float(_));
            paren(out, arg, level(arg) < 6 || (*op == UnOp::Neg && literal));
        }
        ExprKind::Binary { op, lhs, rhs } => {
            let p = prec(*op);
            let cmp = p == 2;
            paren(out, lhs, level(lhs) < p || (cmp && level(lhs) == p));
            let _ = write!(out, " {} ", op.symbol());
            paren(out, rhs, level(rhs) <= p || (*op == BinOp::Sub && level(rhs) == 5));
        }
        ExprKind::Select { cond, then_val, else_val } => {
            let _ = write!(
                out,
                "select({}, {}, {})",
                print_expr(cond),
                print_expr(then_val),
                print_expr(else_val)
            );
        }
        ExprKind::Cast { to, arg } => {
            let _ = write!(out, "{}({})", to.name(), print_expr(arg));
        }
        ExprKind::Call { func, args } => {
            let _ = write!(out, "{}({})", func.name(), exprs(args));
        }
    }
}

/// An f32 literal that reads back to the same bits (NaN prints as `nan`, whatever its payload).
pub fn fmt_f32(x: f32) -> String {
    if x.is_nan() {
        return "nan".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf".into() } else { "-inf".into() };
    }
    let s = format!("{x:?}");
    if s.contains('.') || s.contains('e') {
        s
    } else {
        format!("{s}.0")
    }
}
