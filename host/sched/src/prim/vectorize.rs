//! `vectorize K.v`: the loop's iterations may run as SIMD lanes (and float reductions across
//! them may be reassociated, as L1 defines).
//!
//! Legal for an innermost loop (no loop inside it; split first for a fixed width) outside a
//! `launch` whose iterations touch distinct elements of every written buffer, except an
//! accumulation into one element every iteration shares (a reduction, which the backend
//! vectorizes with partial sums).

use super::{locate, loop_range, parts};
use crate::trace::LoopRef;
use ekb_ir::l1::analysis::deps::{dependences, BandLoop};
use ekb_ir::l1::print::print_expr;
use ekb_ir::l1::visit::{any_stmt, for_each_expr, for_each_stmt, for_each_subexpr};
use ekb_ir::l1::{BinOp, Expr, ExprKind, Intrinsic, LoopKind, Module, Stmt};
use ekb_ir::Diagnostic;

pub fn apply(m: &mut Module, r: &LoopRef) -> Result<(), Diagnostic> {
    let (k, path) = locate(m, r)?;
    let kname = k.name.clone();
    let range = loop_range(&k.body, &path);
    let lp = parts(path.get(&k.body));
    if any_stmt(lp.body, |s| matches!(s, Stmt::Loop { .. })) {
        return Err(Diagnostic::error(format!("loop `{}` of kernel {kname} is not innermost", r.var)).with_hint(
            "vectorize the innermost loop; for a fixed vector width, split it (`split .. by 8 -> o, i`) and vectorize `i`",
        ));
    }
    if lp.kind == LoopKind::Parallel {
        return Err(Diagnostic::error(format!("loop `{}` of kernel {kname} runs on threads", r.var))
            .with_hint(format!("split it (`split {r} by 8 -> o, i`): threads on `o`, lanes on `i`")));
    }
    let band = [BandLoop { var: lp.var.to_string(), range }];
    let deps = dependences(lp.body, &band);
    if let Some(d) = deps.iter().find(|d| !d.same_element || !is_reduction(lp.body, &d.buf)) {
        return Err(Diagnostic::error(format!(
            "iterations of loop `{}` of kernel {kname} depend on each other through `{}`: `{}` and `{}`",
            r.var, d.buf, d.first, d.second
        ))
        .with_hint(
            "vectorize a loop whose iterations write distinct elements, or that accumulates into one",
        ));
    }
    let block = path.block_mut(&mut k.body);
    if let Stmt::Loop { kind, .. } = &mut block[path.index] {
        *kind = LoopKind::Vectorize;
    }
    Ok(())
}

/// Whether every access to `buf` in `body` is part of an update `buf[I] = buf[I] op e` (or
/// `min`/`max`) with `e` not reading `buf`: a reduction, whose partial results nothing else
/// reads (a running sum that is also stored elsewhere is a scan, and stays serial).
fn is_reduction(body: &[Stmt], buf: &str) -> bool {
    let reads = |e: &Expr| {
        let mut n = 0;
        for_each_subexpr(e, |x| {
            n += usize::from(matches!(&x.kind, ExprKind::Load { buf: b, .. } if b.name == buf))
        });
        n
    };
    let (mut loads, mut updates) = (0, 0);
    for_each_expr(body, |e| {
        loads += usize::from(matches!(&e.kind, ExprKind::Load { buf: b, .. } if b.name == buf))
    });
    let mut ok = true;
    for_each_stmt(body, &mut |s| {
        let Stmt::Store { buf: b, index, value, .. } = s else { return };
        if b.name != buf {
            return;
        }
        let is_self = |e: &Expr| {
            matches!(&e.kind, ExprKind::Load { buf: l, index: i } if l.name == buf
                && i.iter().map(print_expr).eq(index.iter().map(print_expr)))
        };
        let operands: Vec<&Expr> = match &value.kind {
            ExprKind::Binary { op: BinOp::Add | BinOp::Mul, lhs, rhs } => vec![lhs, rhs],
            ExprKind::Call { func: Intrinsic::Min | Intrinsic::Max, args } => args.iter().collect(),
            _ => Vec::new(),
        };
        match operands.as_slice() {
            [a, b] if is_self(a) && reads(b) == 0 || is_self(b) && reads(a) == 0 => updates += 1,
            _ => ok = false,
        }
    });
    ok && loads == updates
}
