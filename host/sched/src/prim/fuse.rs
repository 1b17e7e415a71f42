//! `fuse K.a, b -> f`: loop `b`, the only loop in the body of `a`, merges with `a` into one
//! loop `f` over `0..na*nb`, with `let a = lo_a + f / nb` and `let b = lo_b + f % nb` at the
//! top of the body (the iterations run in the same order, so it is always legal).
//!
//! Both loops need literal bounds (the fused extent must be known, and fit i32), and the body of
//! `a` must be `let`s and `b` (the `let`s move into the fused body, after `a` and `b`). The
//! fused loop keeps the kind both had, or is `for` when they differ.

use super::{check_new_name, const_bounds, locate, parts};
use crate::trace::LoopRef;
use ekb_ir::l1::build::{int, let_, var};
use ekb_ir::l1::{LoopKind, Module, Stmt};
use ekb_ir::Diagnostic;

pub fn apply(m: &mut Module, outer: &LoopRef, inner: &LoopRef, fused: &str) -> Result<(), Diagnostic> {
    if outer.kernel != inner.kernel {
        return Err(Diagnostic::error(format!(
            "fuse names loops of two kernels, {} and {}",
            outer.kernel, inner.kernel
        ))
        .with_hint("fuse a loop with the loop directly inside it"));
    }
    let (k, path) = locate(m, outer)?;
    check_new_name(k, fused)?;
    let kname = k.name.clone();
    let a = parts(path.get(&k.body));
    let (lets, rest): (Vec<&Stmt>, Vec<&Stmt>) = a.body.iter().partition(|s| matches!(s, Stmt::Let { .. }));
    let b = match rest.as_slice() {
        [s @ Stmt::Loop { var, .. }] if *var == inner.var => parts(s),
        _ => {
            return Err(Diagnostic::error(format!(
            "loop `{}` is not the only statement in the body of loop `{}` (kernel {kname}), besides `let`s",
            inner.var, a.var
        ))
            .with_hint("fuse a loop with the one loop directly inside it"))
        }
    };
    let (Some((la, ha)), Some((lb, hb))) = (const_bounds(a.lo, a.hi), const_bounds(b.lo, b.hi)) else {
        return Err(Diagnostic::error(format!(
            "loops `{}` and `{}` of kernel {kname} need literal bounds to fuse",
            a.var, b.var
        ))
        .with_hint("fuse loops with constant extents (the fused extent is their product)"));
    };
    let (na, nb) = ((i64::from(ha) - i64::from(la)).max(0), (i64::from(hb) - i64::from(lb)).max(0));
    let total = na * nb;
    if total > i64::from(i32::MAX) {
        return Err(Diagnostic::error(format!(
            "the fused extent {na} x {nb} of kernel {kname} does not fit i32"
        )));
    }
    if nb == 0 {
        return Err(Diagnostic::error(format!("loop `{}` of kernel {kname} is empty", b.var))
            .with_hint("fuse loops that run at least once"));
    }
    if la < 0 || lb < 0 {
        return Err(Diagnostic::error(format!(
            "loops `{}` and `{}` of kernel {kname} start below 0",
            a.var, b.var
        ))
        .with_hint("fuse loops whose bounds are non-negative literals"));
    }
    let kind = if a.kind == b.kind { a.kind } else { LoopKind::Serial };
    let nb = nb as usize;
    let mut body = vec![
        let_(a.var, int(la as usize) + var(fused) / int(nb)),
        let_(b.var, int(lb as usize) + var(fused) % int(nb)),
    ];
    body.extend(lets.into_iter().cloned());
    body.extend(b.body.iter().cloned());
    let new = ekb_ir::l1::build::loop_(kind, fused, int(0), int(total as usize), body);
    let block = path.block_mut(&mut k.body);
    block[path.index] = new;
    Ok(())
}
