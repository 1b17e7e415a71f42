//! `split K.v by F -> vo, vi`: loop `v in lo..hi` becomes `vo` over the chunks and `vi in 0..F`
//! inside it, with `let v = lo + vo * F + vi` at the top of the body (guarded by `if v < hi`
//! when `F` does not divide the extent), so the body is untouched.
//!
//! Legal for every loop whose bounds read no memory (they are evaluated again, in the outer
//! loop's bound and in the guard). Kinds: a `parallel` loop keeps its threads on `vo` (chunks
//! of independent iterations are independent); a `vectorize` or `unroll` loop keeps its kind on
//! `vi`; the other new loop is `for`.

use super::{check_new_name, const_bounds, locate, parts};
use crate::trace::LoopRef;
use ekb_ir::l1::build::{if_, int, let_, loop_, var, E};
use ekb_ir::l1::visit::has_load;
use ekb_ir::l1::{LoopKind, Module, Stmt};
use ekb_ir::Diagnostic;

pub fn apply(m: &mut Module, r: &LoopRef, factor: u32, outer: &str, inner: &str) -> Result<(), Diagnostic> {
    let (k, path) = locate(m, r)?;
    check_new_name(k, outer)?;
    check_new_name(k, inner)?;
    if outer == inner {
        return Err(Diagnostic::error(format!("the two new loops are both named `{outer}`"))
            .with_hint("give the outer and the inner loop different names"));
    }
    let block = path.block_mut(&mut k.body);
    let lp = parts(&block[path.index]);
    if has_load(lp.lo) || has_load(lp.hi) {
        return Err(Diagnostic::error(format!("the bounds of loop `{}` read memory", lp.var))
            .with_hint("split a loop whose bounds are computed from variables and literals only"));
    }
    let f = factor as usize;
    let (lo, hi) = (E(lp.lo.clone()), E(lp.hi.clone()));
    let (outer_kind, inner_kind) = match lp.kind {
        LoopKind::Parallel => (LoopKind::Parallel, LoopKind::Serial),
        LoopKind::Serial => (LoopKind::Serial, LoopKind::Serial),
        k @ (LoopKind::Vectorize | LoopKind::Unroll) => (LoopKind::Serial, k),
    };
    // The chunks, and whether the last one is partial.
    let (chunks, guarded) = match const_bounds(lp.lo, lp.hi) {
        Some((l, h)) => {
            let n = (i64::from(h) - i64::from(l)).max(0) as usize;
            (int(n.div_ceil(f)), !n.is_multiple_of(f))
        }
        None => ((hi.clone() - lo.clone() + int(f - 1)) / int(f), true),
    };
    let v = lp.var.to_string();
    let value = lo + var(outer) * int(f) + var(inner);
    let mut body = vec![let_(&v, value)];
    if guarded {
        body.push(if_(var(&v).lt(hi), lp.body.to_vec(), Vec::new()));
    } else {
        body.extend(lp.body.iter().cloned());
    }
    let inner_loop = loop_(inner_kind, inner, int(0), int(f), body);
    let new: Stmt = loop_(outer_kind, outer, int(0), chunks, vec![inner_loop]);
    block[path.index] = new;
    Ok(())
}
