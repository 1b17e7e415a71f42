//! The schedule primitives, one per file, and what they share: finding the kernel and loop a
//! step names, checking new names, and reading a loop's parts.
//!
//! Each primitive is `fn apply(m: &mut Module, ..) -> Result<(), Diagnostic>` and checks its
//! legality before it changes anything; a refusal says which loop, which dependence or bound
//! stands in the way, and what would be legal. (`crate::apply_step` works on a copy and
//! verifies the result, so even a late refusal leaves the caller's module unchanged.)

mod compute_inline;
mod fuse;
mod parallel;
mod reorder;
mod split;
mod unroll;
mod vectorize;

mod bind;
mod cache_read;
mod cache_write;
mod compute_at;
mod decompose_reduction;
mod pack;
mod pad;
mod reverse_compute_at;
mod reverse_compute_inline;
mod rfactor;
mod stage;
mod storage_align;

use crate::handle::{self, Path};
use crate::trace::{LoopRef, Prim};
use ekb_ir::l1::analysis::interval::{eval, Interval};
use ekb_ir::l1::visit::defined_names;
use ekb_ir::l1::{Expr, ExprKind, Kernel, LoopKind, Module, Stmt};
use ekb_ir::{Diagnostic, TensorType};

/// Applies one primitive to `m` in place.
pub fn apply(m: &mut Module, p: &Prim) -> Result<(), Diagnostic> {
    match p {
        Prim::Split { lp, factor, outer, inner } => split::apply(m, lp, *factor, outer, inner),
        Prim::Reorder { loops } => reorder::apply(m, loops),
        Prim::Fuse { outer, inner, fused } => fuse::apply(m, outer, inner, fused),
        Prim::Parallel { lp } => parallel::apply(m, lp),
        Prim::Vectorize { lp } => vectorize::apply(m, lp),
        Prim::Unroll { lp } => unroll::apply(m, lp),
        Prim::ComputeInline { buffer } => compute_inline::apply(m, buffer),
        Prim::Bind { lp, axis } => bind::apply(m, lp, *axis),
        Prim::Rfactor { lp, partials, combine } => rfactor::apply(m, lp, partials, combine),
        Prim::Pad { buf, by } => pad::apply(m, buf, *by),
        Prim::StorageAlign { buf, axis, factor, offset } => {
            storage_align::apply(m, buf, *axis, *factor, *offset)
        }
        Prim::Pack { buffer, lp, packed, layout } => pack::apply(m, buffer, lp, packed, layout),
        Prim::DecomposeReduction { lp } => decompose_reduction::apply(m, lp),
        Prim::CacheRead { buffer, at, cache, scope } => cache_read::apply(m, buffer, at, cache, *scope),
        Prim::CacheWrite { buffer, at, cache, scope } => cache_write::apply(m, buffer, at, cache, *scope),
        Prim::ComputeAt { buffer, at } => compute_at::apply(m, buffer, at),
        Prim::ReverseComputeInline { buffer } => reverse_compute_inline::apply(m, buffer),
        Prim::ReverseComputeAt { buffer, at } => reverse_compute_at::apply(m, buffer, at),
    }
}

/// The kernel and the path of the loop `r` names.
fn locate<'m>(m: &'m mut Module, r: &LoopRef) -> Result<(&'m mut Kernel, Path), Diagnostic> {
    let i = handle::kernel_index(m, &r.kernel)?;
    let k = &mut m.kernels[i];
    let path = handle::find(k, r)?;
    Ok((k, path))
}

/// The parts of a loop statement.
struct LoopParts<'a> {
    var: &'a str,
    kind: LoopKind,
    lo: &'a Expr,
    hi: &'a Expr,
    body: &'a [Stmt],
}

fn parts(s: &Stmt) -> LoopParts<'_> {
    match s {
        Stmt::Loop { var, kind, lo, hi, body, .. } => LoopParts { var, kind: *kind, lo, hi, body },
        _ => unreachable!("handles resolve to loops"),
    }
}

/// Both bounds as literals.
fn const_bounds(lo: &Expr, hi: &Expr) -> Option<(i32, i32)> {
    match (&lo.kind, &hi.kind) {
        (ExprKind::Int(l), ExprKind::Int(h)) => Some((*l, *h)),
        _ => None,
    }
}

/// The values of a loop variable with bounds `lo..hi`, given the intervals of the variables
/// around it (`None` when a bound is unknown or the loop is empty).
fn range_in(env: &[(String, Interval)], lo: &Expr, hi: &Expr) -> Option<Interval> {
    let look = |v: &str| env.iter().rev().find(|(n, _)| n == v).map(|(_, i)| *i);
    let iv = eval(lo, &look).zip(eval(hi, &look)).map(|(l, h)| Interval::new(l.lo, h.hi - 1));
    iv.filter(|i| !i.is_empty())
}

/// The intervals of the loop variables enclosing `path`, and of the loop at `path` if it is
/// one, outermost first (variables of unknown range are left out).
fn loop_env(body: &[Stmt], path: &Path) -> Vec<(String, Interval)> {
    let mut env: Vec<(String, Interval)> = Vec::new();
    for s in path.enclosing(body).into_iter().chain([path.get(body)]) {
        if let Stmt::Loop { var, lo, hi, .. } = s {
            if let Some(i) = range_in(&env, lo, hi) {
                env.push((var.clone(), i));
            }
        }
    }
    env
}

/// The values the variable of the loop at `path` takes, when its bounds are known.
fn loop_range(body: &[Stmt], path: &Path) -> Option<Interval> {
    let var = parts(path.get(body)).var;
    loop_env(body, path).into_iter().find(|(v, _)| v == var).map(|(_, i)| i)
}

/// A name the step introduces: an identifier, not yet defined in the kernel.
fn check_new_name(k: &Kernel, name: &str) -> Result<(), Diagnostic> {
    if defined_names(k).iter().any(|n| n == name) {
        return Err(Diagnostic::error(format!("`{name}` is already defined in kernel {}", k.name))
            .with_hint("choose a name the kernel does not use yet for the new loop"));
    }
    Ok(())
}

/// The kind of the loops enclosing a path (what `parallel` and `vectorize` may not sit in).
fn enclosing_kinds<'a>(body: &'a [Stmt], path: &Path) -> Vec<(&'a str, LoopKind)> {
    path.enclosing(body)
        .into_iter()
        .filter_map(|s| match s {
            Stmt::Loop { var, kind, .. } => Some((var.as_str(), *kind)),
            _ => None,
        })
        .collect()
}

/// The intervals of the variables in scope at `path`: the variables of the loops and launches
/// around it, and the `let`s before it in each enclosing block (those of unknown range left
/// out).
fn scope_env(body: &[Stmt], path: &Path) -> Vec<(String, Interval)> {
    let mut env: Vec<(String, Interval)> = Vec::new();
    let mut cur = body;
    let levels = path.outer.iter().map(|&(i, c)| (i, Some(c))).chain([(path.index, None)]);
    for (i, child) in levels {
        for s in &cur[..i] {
            if let Stmt::Let { name, value, .. } = s {
                let look = |v: &str| env.iter().rev().find(|(n, _)| n == v).map(|(_, iv)| *iv);
                if let Some(iv) = eval(value, &look) {
                    env.push((name.clone(), iv));
                }
            }
        }
        let Some(c) = child else { break };
        match &cur[i] {
            Stmt::Loop { var, lo, hi, .. } => {
                if let Some(iv) = range_in(&env, lo, hi) {
                    env.push((var.clone(), iv));
                }
            }
            Stmt::Launch { grid, block, .. } => {
                for d in grid.iter().chain(block) {
                    env.push((d.var.clone(), Interval::new(0, i64::from(d.extent) - 1)));
                }
            }
            _ => {}
        }
        cur = handle::children(&cur[i])[c];
    }
    env
}

/// The type of the buffer `name` as the statement at `path` sees it: a parameter of `k`, or an
/// allocation before it in an enclosing block.
fn buffer_type<'k>(k: &'k Kernel, path: &Path, name: &str) -> Option<&'k TensorType> {
    if let Some(p) = k.params.iter().find(|p| p.name == name) {
        return Some(&p.ty);
    }
    let mut cur = k.body.as_slice();
    let levels = path.outer.iter().map(|&(i, c)| (i, Some(c))).chain([(path.index, None)]);
    for (i, child) in levels {
        let alloc = cur[..i].iter().find_map(|s| match s {
            Stmt::Alloc { name: n, ty, .. } if n == name => Some(ty),
            _ => None,
        });
        if alloc.is_some() {
            return alloc;
        }
        cur = handle::children(&cur[i])[child?];
    }
    None
}
