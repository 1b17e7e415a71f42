//! `parallel K.v`: the loop's iterations run on CPU threads, in any order.
//!
//! Legal when no two iterations may touch the same element of a buffer one of them writes
//! (`analysis::deps` with the band `[v]`: every write indexes some dimension with `v`, or with
//! digits of it), outside any `launch`, and with no `parallel` or `vectorize` loop around it or
//! `parallel` loop inside it (one level of threads).

use super::{enclosing_kinds, locate, loop_range, parts};
use crate::trace::LoopRef;
use ekb_ir::l1::analysis::deps::{dependences, BandLoop};
use ekb_ir::l1::visit::any_stmt;
use ekb_ir::l1::{LoopKind, Module, Stmt};
use ekb_ir::Diagnostic;

pub fn apply(m: &mut Module, r: &LoopRef) -> Result<(), Diagnostic> {
    let (k, path) = locate(m, r)?;
    let kname = k.name.clone();
    if path.enclosing(&k.body).iter().any(|s| matches!(s, Stmt::Launch { .. })) {
        return Err(Diagnostic::error(format!("loop `{}` of kernel {kname} is inside a `launch`", r.var))
            .with_hint("GPU threads are the launch's block dimensions: bind loops to them instead"));
    }
    if let Some((v, kind)) = enclosing_kinds(&k.body, &path)
        .into_iter()
        .find(|(_, k)| matches!(k, LoopKind::Parallel | LoopKind::Vectorize))
    {
        let what = if kind == LoopKind::Parallel { "parallel" } else { "vectorize" };
        return Err(Diagnostic::error(format!(
            "loop `{}` of kernel {kname} is inside {what} loop `{v}`",
            r.var
        ))
        .with_hint(
            "one level of loops runs on threads, outside any vectorized loop: parallelize the outer loop",
        ));
    }
    let range = loop_range(&k.body, &path);
    let lp = parts(path.get(&k.body));
    if any_stmt(lp.body, |s| matches!(s, Stmt::Loop { kind: LoopKind::Parallel, .. })) {
        return Err(Diagnostic::error(format!("loop `{}` of kernel {kname} holds a parallel loop", r.var))
            .with_hint("one level of loops runs on threads: keep the inner one"));
    }
    let band = [BandLoop { var: lp.var.to_string(), range }];
    if let Some(d) = dependences(lp.body, &band).first() {
        return Err(Diagnostic::error(format!(
            "iterations of loop `{}` of kernel {kname} may touch the same element of `{}`: `{}` and `{}`",
            r.var, d.buf, d.first, d.second
        ))
        .with_hint(
            "parallelize a loop whose iterations write distinct elements (an outer output loop), not a reduction loop",
        ));
    }
    let block = path.block_mut(&mut k.body);
    if let Stmt::Loop { kind, .. } = &mut block[path.index] {
        *kind = LoopKind::Parallel;
    }
    Ok(())
}
