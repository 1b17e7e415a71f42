//! `unroll K.v`: the loop's body is replicated by the backend (fully for short constant trip
//! counts). Iterations still run in order, so it is legal for every loop outside a `launch`
//! that is not already `parallel` (its threads would be lost: say `unroll` on an inner loop).

use super::{locate, parts};
use crate::trace::LoopRef;
use ekb_ir::l1::{LoopKind, Module, Stmt};
use ekb_ir::Diagnostic;

pub fn apply(m: &mut Module, r: &LoopRef) -> Result<(), Diagnostic> {
    let (k, path) = locate(m, r)?;
    let block = path.block_mut(&mut k.body);
    if parts(&block[path.index]).kind == LoopKind::Parallel {
        return Err(Diagnostic::error(format!("loop `{}` of kernel {} runs on threads", r.var, k.name))
            .with_hint(format!("split it first (`split {r} by F -> o, i`) and unroll the inner loop")));
    }
    if let Stmt::Loop { kind, .. } = &mut block[path.index] {
        *kind = LoopKind::Unroll;
    }
    Ok(())
}
