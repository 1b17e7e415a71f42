//! `bind K.v blockIdx.x` (`.y`, `.z`, or `threadIdx.x`, `.y`, `.z`): the iterations of loop `v`
//! become the blocks of a GPU launch (`blockIdx`: a dimension of its `grid(..)`) or the threads
//! of each block (`threadIdx`: a dimension of its `block(..)`), and `let v = lo + bx` at the top
//! of the launch body recovers the loop variable from the launch variable.
//!
//! The first bind of a CPU kernel makes its body one `launch`, with a dimension of extent 1 on
//! the other side (`launch grid(bx in 0..n) block(tx in 0..1)`); each later bind fills such an
//! unused dimension of extent 1 or adds the next one (x, then y, then z). Launch variables are
//! `bx`, `by`, `bz` and `tx`, `ty`, `tz` (with a number appended when the kernel uses the name).
//!
//! Legal when: the loop is the kernel's outermost statement (the launch's, once there is one),
//! its block holding only `let`s besides, so the bound loops are the outer perfect nest of the
//! kernel; its bounds are literals and it runs at least once; no two of its iterations may touch
//! one element that either writes (`analysis::deps` over the block with the band `[v]`, as for
//! `parallel`; a launch already there is race-free, as L1 requires, so its threads stay
//! independent); it holds no `parallel` loop (a launch has no CPU threads) and no `barrier`; and
//! the launch stays within CUDA's limits, which every GPU target of the project accepts: 1024
//! threads per block, block extents 1024, 1024, 64 and grid extents 2^31-1, 65535, 65535 along
//! x, y, z (the verifier checks a target's own limits when given one).
//!
//! The chunk loop `vo` of `split K.v by F -> vo, vi` is tested through `v`: its chunks of
//! distinct values of `v` are disjoint, which the dependence test cannot see through
//! `vo * F + vi`; so `split .. by 256 -> c, t`, then `c` on blocks and `t` on threads, binds a
//! loop too long for one block.
//!
//! A module runs on a GPU once all its kernels are launches; until then the L1 interpreter runs
//! it as it is (the LLVM backend does not run launches).

use super::{const_bounds, locate, parts};
use crate::trace::{Axis, LoopRef};
use ekb_ir::l1::analysis::deps::{dependences, BandLoop, Dependence};
use ekb_ir::l1::analysis::interval::Interval;
use ekb_ir::l1::build::{ints, let_, loop_, var, Names};
use ekb_ir::l1::gpu::{CUDA_MAX_BLOCK_DIMS, CUDA_MAX_GRID_DIMS};
use ekb_ir::l1::visit::{any_stmt, defined_names, for_each_expr, names_used};
use ekb_ir::l1::{BinOp, Expr, ExprKind, LaunchDim, LoopKind, Module, Stmt};
use ekb_ir::{Diagnostic, Span};

/// Threads per block: CUDA's limit on every compute capability, and the smallest limit of the
/// project's GPU targets (`gpu.max_threads_per_block`: 1024 on rk3588, Orin and H200).
const MAX_THREADS_PER_BLOCK: u64 = 1024;

pub fn apply(m: &mut Module, r: &LoopRef, axis: Axis) -> Result<(), Diagnostic> {
    let (k, path) = locate(m, r)?;
    let kname = k.name.clone();
    let launched = matches!(k.body.as_slice(), [Stmt::Launch { .. }]);
    let top = if launched { vec![(0, 0)] } else { Vec::new() };
    if path.outer != top {
        let enclosing = path.enclosing(&k.body);
        let loop_var = |s: &&Stmt| match s {
            Stmt::Loop { var, .. } => Some(var.clone()),
            _ => None,
        };
        let around = match enclosing.iter().rev().find_map(loop_var) {
            Some(w) => format!("inside loop `{w}`"),
            None => "inside an `if`".to_string(),
        };
        let hint = match enclosing.iter().find_map(loop_var) {
            Some(w) => {
                format!("bind the loops around it first, from the outermost (`{kname}.{w}`)")
            }
            None => "bind loops that no `if` guards".to_string(),
        };
        return Err(Diagnostic::error(format!(
            "loop `{}` of kernel {kname} is {around}: only the outer perfect nest of a kernel binds to a launch",
            r.var
        ))
        .with_hint(hint));
    }
    let block = path.block(&k.body);
    let where_ = if launched { "the launch of kernel" } else { "kernel" };
    if let Some((_, s)) =
        block.iter().enumerate().find(|(i, s)| *i != path.index && !matches!(s, Stmt::Let { .. }))
    {
        return Err(Diagnostic::error(format!(
            "the body of {where_} {kname} holds {} beside loop `{}`, not only `let`s",
            describe(s),
            r.var
        ))
        .with_hint("only a loop alone in its block (but for `let`s) binds: what stands beside it would run once per new block or thread"));
    }
    let lp = parts(&block[path.index]);
    let Some((lo, hi)) = const_bounds(lp.lo, lp.hi) else {
        return Err(Diagnostic::error(format!(
            "loop `{}` of kernel {kname} needs literal bounds to bind (a launch's extents are fixed)",
            r.var
        ))
        .with_hint("bind loops with constant bounds"));
    };
    let n = i64::from(hi) - i64::from(lo);
    if n < 1 {
        return Err(Diagnostic::error(format!("loop `{}` of kernel {kname} runs no iteration", r.var))
            .with_hint("a launch dimension has at least one block or thread: bind loops that run"));
    }
    let inner_parallel = |s: &Stmt| matches!(s, Stmt::Loop { kind: LoopKind::Parallel, .. });
    if any_stmt(lp.body, inner_parallel) {
        return Err(Diagnostic::error(format!(
            "loop `{}` of kernel {kname} holds a parallel loop, and a launch runs no CPU threads",
            r.var
        ))
        .with_hint("bind the parallel loop to a launch dimension too, instead of running it on threads"));
    }
    if any_stmt(lp.body, |s| matches!(s, Stmt::Barrier { .. })) {
        return Err(Diagnostic::error(format!("loop `{}` of kernel {kname} holds a `barrier`", r.var))
            .with_hint("bind loops whose iterations do not synchronise the block's threads"));
    }
    // The launch as it is (none yet on a CPU kernel), and where the loop goes.
    let (mut grid, mut threads, optin, span, body) = match k.body.as_slice() {
        [Stmt::Launch { grid, block, shared_optin, span, body }] => {
            (grid.clone(), block.clone(), *shared_optin, *span, body.as_slice())
        }
        _ => (Vec::new(), Vec::new(), false, Span::NONE, k.body.as_slice()),
    };
    let used = names_used(body).0;
    let dims = if axis.thread { &mut threads } else { &mut grid };
    let next = Axis { dim: dims.len().min(2), ..axis };
    if axis.dim > dims.len() {
        return Err(Diagnostic::error(format!(
            "`{axis}` of kernel {kname} comes after `{next}`, which is not bound yet"
        ))
        .with_hint(format!("a launch's dimensions go x, then y, then z: bind `{r}` to `{next}`")));
    }
    let free = |d: &LaunchDim| d.extent == 1 && !used.contains(&d.var);
    if let Some(d) = dims.get(axis.dim).filter(|d| !free(d)) {
        let hint = if dims.len() < 3 {
            format!("bind `{r}` to `{next}`")
        } else {
            "the launch has three dimensions on that side already: bind to the other side".into()
        };
        return Err(Diagnostic::error(format!(
            "`{axis}` of kernel {kname} is bound already (`{} in 0..{}`)",
            d.var, d.extent
        ))
        .with_hint(hint));
    }
    let limit = if axis.thread { CUDA_MAX_BLOCK_DIMS } else { CUDA_MAX_GRID_DIMS }[axis.dim];
    let others: u64 = threads
        .iter()
        .enumerate()
        .filter(|(i, _)| !axis.thread || *i != axis.dim)
        .map(|(_, d)| u64::from(d.extent))
        .product();
    let per_block = if axis.thread { others * n as u64 } else { others };
    if n as u64 > limit || per_block > MAX_THREADS_PER_BLOCK {
        let what = if n as u64 > limit {
            format!("an extent of {n}, over the limit of {limit} on `{axis}`")
        } else {
            format!("{per_block} threads per block, over the limit of {MAX_THREADS_PER_BLOCK}")
        };
        return Err(Diagnostic::error(format!(
            "binding loop `{}` of kernel {kname} to `{axis}` would give {what} (CUDA's limit, which every GPU target of the project accepts)",
            r.var
        ))
        .with_hint(format!(
            "split it first (`split {r} by 256 -> o, i`), then bind `o` to a `blockIdx` and `i` to a `threadIdx` axis"
        )));
    }
    // No two iterations of the loop may touch one element that either writes. (The threads of a
    // launch already there do not, as L1 requires of every launch.)
    if let Some(d) = independence(block, path.index).first() {
        return Err(Diagnostic::error(format!(
            "iterations of loop `{}` of kernel {kname} may touch the same element of `{}`: `{}` and `{}`",
            r.var, d.buf, d.first, d.second
        ))
        .with_hint(
            "bind loops whose iterations write distinct elements (the output loops), not a reduction loop",
        ));
    }
    // The new launch.
    let mut names = Names::default();
    for n in defined_names(k) {
        names.reserve(&n);
    }
    let base = |thread: bool, dim: usize| ["bx", "by", "bz", "tx", "ty", "tz"][usize::from(thread) * 3 + dim];
    let dims = if axis.thread { &mut threads } else { &mut grid };
    let extent = u32::try_from(n).expect("within the limits checked above");
    let dim_var = match dims.get_mut(axis.dim) {
        Some(d) => {
            d.extent = extent;
            d.var.clone()
        }
        None => {
            let v = names.fresh(base(axis.thread, axis.dim));
            dims.push(LaunchDim::new(&v, extent));
            v
        }
    };
    for (side, thread) in [(&mut grid, false), (&mut threads, true)] {
        if side.is_empty() {
            side.push(LaunchDim::new(names.fresh(base(thread, 0)), 1));
        }
    }
    let block = path.block(&k.body);
    let mut new_body: Vec<Stmt> =
        block.iter().enumerate().filter(|(i, _)| *i != path.index).map(|(_, s)| s.clone()).collect();
    new_body.push(let_(lp.var, ints(lo.into()) + var(&dim_var)));
    new_body.extend(lp.body.iter().cloned());
    k.body = vec![Stmt::Launch { grid, block: threads, shared_optin: optin, body: new_body, span }];
    Ok(())
}

/// The dependences between iterations of the loop at `block[at]` (with the `let`s beside it):
/// the band `[v]`; or, when `v` is the chunk loop of a split (its body one loop `vi in 0..F`
/// whose body starts with `let x = lo + v * F + vi` and uses neither `v` nor `vi` after it), the
/// band `[x]` over the values `x` takes, since chunks of distinct values are disjoint (which the
/// test cannot see through `v * F + vi`).
fn independence(block: &[Stmt], at: usize) -> Vec<Dependence> {
    let lp = parts(&block[at]);
    let range = const_bounds(lp.lo, lp.hi).map(|(l, h)| Interval::new(l.into(), i64::from(h) - 1));
    let plain = || dependences(block, &[BandLoop { var: lp.var.to_string(), range }]);
    let [Stmt::Loop { var: vi, lo: ilo, hi: ihi, body: inner, .. }] = lp.body else { return plain() };
    let (Some(range), Some((0, f)), [Stmt::Let { name: x, value, .. }, rest @ ..]) =
        (range, const_bounds(ilo, ihi), inner.as_slice())
    else {
        return plain();
    };
    let is = |e: &Expr, name: &str| matches!(&e.kind, ExprKind::Var(n) if n == name);
    let chunk = |e: &Expr| {
        matches!(&e.kind, ExprKind::Binary { op: BinOp::Mul, lhs, rhs }
            if is(lhs, lp.var) && matches!(rhs.kind, ExprKind::Int(g) if g == f))
    };
    let base = match &value.kind {
        ExprKind::Binary { op: BinOp::Add, lhs, rhs } if is(rhs, vi) => match &lhs.kind {
            _ if chunk(lhs) => Some(0),
            ExprKind::Binary { op: BinOp::Add, lhs: l, rhs: c } if chunk(c) => match l.kind {
                ExprKind::Int(b) => Some(i64::from(b)),
                _ => None,
            },
            _ => None,
        },
        _ => None,
    };
    let mut uses_either = false;
    for_each_expr(rest, |e| uses_either |= is(e, lp.var) || is(e, vi));
    let Some(base) = base.filter(|_| !uses_either && f > 0) else { return plain() };
    let f = i64::from(f);
    // Within i32, `lo + v * F + vi` does not wrap, so distinct chunks hold distinct values.
    let Some(values) = Interval::new(base + range.lo * f, base + range.hi * f + f).fit() else {
        return plain();
    };
    let values = Interval::new(values.lo, values.hi - 1);
    let mut view: Vec<Stmt> =
        block.iter().enumerate().filter(|(i, _)| *i != at).map(|(_, s)| s.clone()).collect();
    view.push(loop_(LoopKind::Serial, x, ints(values.lo), ints(values.hi + 1), rest.to_vec()));
    dependences(&view, &[BandLoop { var: x.clone(), range: Some(values) }])
}

/// A statement as a diagnostic names it.
fn describe(s: &Stmt) -> String {
    match s {
        Stmt::Loop { var, .. } => format!("loop `{var}`"),
        Stmt::If { .. } => "an `if`".into(),
        Stmt::Let { name, .. } => format!("`let {name}`"),
        Stmt::Store { buf, .. } => format!("a store to `{}`", buf.name),
        Stmt::Alloc { name, .. } => format!("`alloc {name}`"),
        Stmt::Launch { .. } => "a `launch`".into(),
        Stmt::Barrier { .. } => "a `barrier`".into(),
    }
}
