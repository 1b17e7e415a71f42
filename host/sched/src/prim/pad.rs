//! `pad K.buf by P`: the innermost dimension of the allocation `buf` of kernel K grows by `P`
//! elements (`alloc tile: f32[32,32] shared` becomes `f32[32,33]`), so its rows start `P`
//! elements further apart: a column of a shared tile then falls on different memory banks, or
//! rows start aligned. Only the declaration changes; every index stays, and no access reaches
//! the new elements.
//!
//! Legal for an `alloc` (`local` or `shared`) with at least one dimension when the interval
//! analysis proves every index of its innermost dimension below the old extent (over the ranges
//! of the loops, launch variables and `let`s around each access; `if` conditions do not narrow
//! it here), and the padded allocation holds at most 2^31-1 elements. Module buffers keep their
//! layout: the other kernels and the caller see it. The allocation grows by `P` elements per
//! row, which the verifier checks against a target's stack and shared-memory limits when given
//! one.

use super::scope_env;
use crate::handle::{self, quoted, Path};
use crate::trace::BufRef;
use ekb_ir::diag::did_you_mean;
use ekb_ir::l1::analysis::access::{accesses, regions};
use ekb_ir::l1::analysis::interval::Interval;
use ekb_ir::l1::print::print_expr;
use ekb_ir::l1::{Kernel, Module, Stmt};
use ekb_ir::Diagnostic;

pub fn apply(m: &mut Module, r: &BufRef, by: u32) -> Result<(), Diagnostic> {
    let ki = handle::kernel_index(m, &r.kernel)?;
    let k = &mut m.kernels[ki];
    let path = find_alloc(k, r)?;
    let Stmt::Alloc { ty, .. } = path.get(&k.body) else { unreachable!("the path leads to an alloc") };
    let Some(&old) = ty.shape.last() else {
        return Err(Diagnostic::error(format!(
            "`{}` ({ty}) of kernel {} has no dimension to pad",
            r.buf, k.name
        ))
        .with_hint("pad an allocation with at least one dimension"));
    };
    let last = ty.shape.len() - 1;
    let rows: usize = ty.shape[..last].iter().product();
    let padded = old + by as usize;
    if rows.checked_mul(padded).is_none_or(|n| n > i32::MAX as usize) {
        return Err(Diagnostic::error(format!(
            "`{}` ({ty}) of kernel {} padded by {by} would hold more than {} elements",
            r.buf,
            k.name,
            i32::MAX
        )));
    }
    // Every index of the innermost dimension stays below the old extent.
    check_indices(k, &path, &r.buf, (last, old), false, "pad")?;
    let block = path.block_mut(&mut k.body);
    if let Stmt::Alloc { ty, .. } = &mut block[path.index] {
        ty.shape[last] = padded;
    }
    Ok(())
}

/// Refuses unless every index of dimension `dim` of the allocation at `path` (named `buf`) is
/// provably below `extent`, and, with `nonnegative`, at least 0: over the intervals of the
/// loops, launch variables and `let`s around each access, in the rest of the allocation's
/// block. `verb`: what the step does to the allocation, for the hint.
pub(super) fn check_indices(
    k: &Kernel,
    path: &Path,
    buf: &str,
    (dim, extent): (usize, usize),
    nonnegative: bool,
    verb: &str,
) -> Result<(), Diagnostic> {
    let env = scope_env(&k.body, path);
    let look = |v: &str| env.iter().rev().find(|(n, _)| n == v).map(|(_, iv)| *iv);
    let rest = &path.block(&k.body)[path.index + 1..];
    // The union of the indices (`None`: unknown; `Some(None)`: no access).
    let reach: Option<Option<Interval>> = regions(rest, &look)
        .iter()
        .filter(|g| g.buf == buf)
        .map(|g| g.dims[dim])
        .try_fold(None, |acc: Option<Interval>, iv| {
            let iv = iv?;
            Some(Some(acc.map_or(iv, |a| a.union(iv))))
        });
    let why = match reach {
        None => "their range is unknown".to_string(),
        Some(Some(iv)) if iv.hi >= extent as i64 => format!("they may reach {}", iv.hi),
        Some(Some(iv)) if nonnegative && iv.lo < 0 => format!("they may go down to {}", iv.lo),
        Some(_) => return Ok(()),
    };
    let mut idx: Vec<String> = accesses(rest)
        .iter()
        .filter(|a| a.buf == buf)
        .map(|a| format!("`{}`", print_expr(&a.index[dim])))
        .collect();
    idx.dedup();
    let within = if nonnegative { format!("within 0..{extent}") } else { format!("below {extent}") };
    Err(Diagnostic::error(format!(
        "the indices of dimension {dim} of `{buf}` in kernel {} ({}) are not provably {within}: {why}",
        k.name,
        idx.join(", ")
    ))
    .with_hint(format!(
        "{verb} an allocation indexed by loop or launch variables of literal bounds (conditions do not count here)"
    )))
}

/// The allocation a handle names, in kernel `k`.
pub(super) fn find_alloc(k: &Kernel, r: &BufRef) -> Result<Path, Diagnostic> {
    let all: Vec<(&str, Path)> = handle::statements(&k.body)
        .into_iter()
        .filter_map(|(s, p)| match s {
            Stmt::Alloc { name, .. } => Some((name.as_str(), p)),
            _ => None,
        })
        .collect();
    let same: Vec<&Path> = all.iter().filter(|(n, _)| *n == r.buf).map(|(_, p)| p).collect();
    match (same.len(), r.nth) {
        (1, None | Some(1)) => Ok(same[0].clone()),
        (0, _) if k.params.iter().any(|p| p.name == r.buf) => Err(Diagnostic::error(format!(
            "`{}` is a parameter of kernel {}, not an allocation: a module buffer keeps its layout (other kernels and the caller see it)",
            r.buf, k.name
        ))
        .with_hint("name a buffer the kernel allocates (`alloc t: f32[..] local` or `shared`)")),
        (0, _) => {
            let names: Vec<&str> = all.iter().map(|(n, _)| *n).collect();
            let mut d = Diagnostic::error(format!("kernel {} has no allocation `{}`", k.name, r.buf))
                .with_expected(if names.is_empty() {
                    format!("kernel {} allocates nothing", k.name)
                } else {
                    format!("one of its allocations: {}", quoted(names.iter().copied()))
                });
            d.hint = did_you_mean(&r.buf, names);
            Err(d)
        }
        (n, None) => Err(Diagnostic::error(format!("kernel {} has {n} allocations named `{}`", k.name, r.buf))
            .with_hint(format!("say which: `{}.{}@1` .. `{}.{}@{n}`, in program order", k.name, r.buf, k.name, r.buf))),
        (n, Some(i)) if i as usize <= n => Ok(same[i as usize - 1].clone()),
        (n, Some(i)) => Err(Diagnostic::error(format!(
            "kernel {} has {n} allocation{} named `{}`, not {i}",
            k.name,
            if n == 1 { "" } else { "s" },
            r.buf
        ))
        .with_expected(format!("`@1` .. `@{n}`"))),
    }
}
