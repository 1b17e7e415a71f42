//! `compute_at t at K.v`: the loop nest that produces the `local` buffer `t` moves to the top of
//! the body of loop `v`, a later nest of the same kernel that reads `t`, and computes only the
//! region of `t` that one iteration of `v` reads (see `stage`): loops `t_d` over the box's
//! dimensions, storing the producer's formula at each element (guarded where the box leaves
//! `t`). Overlapping regions compute an element again, from the same inputs, so to the same
//! value. Within one kernel: a producer in another kernel of the plan is a temp, which
//! `compute_inline` recomputes at each read instead.
//!
//! Legal when: `t` is an allocation of `v`'s kernel, stored by one statement only, which sits
//! in a block around `v`, before the nest holding `v`, and is a plain nest storing each element
//! of `t` once from a formula that does not read `t` (as `compute_inline` requires of its
//! producers); `t` is read nowhere but inside `v`, and nothing between the producer and the end
//! of the nest holding `v` writes a buffer the producer reads (a later computation must see the
//! same inputs); `v` is not a `vectorize` loop and is outside any `launch`; the region is a box
//! of literal extents of at most 16 KiB; and every `parallel` loop around `v`, and `v` itself,
//! still provably keeps its iterations on distinct elements of `t` (regions that iterations
//! share would be written by both).

use super::compute_inline::plain_nest;
use super::stage;
use super::{locate, parts};
use crate::handle::Path;
use crate::trace::LoopRef;
use ekb_ir::l1::analysis::access::accesses;
use ekb_ir::l1::build::{Buf, Names};
use ekb_ir::l1::visit::{defined_names, for_each_stmt, for_each_subexpr, substitute};
use ekb_ir::l1::{Expr, ExprKind, Module, Stmt};
use ekb_ir::{Diagnostic, TensorType};
use std::collections::HashMap;

pub fn apply(m: &mut Module, buf: &str, at: &LoopRef) -> Result<(), Diagnostic> {
    let (k, path) = locate(m, at)?;
    let kname = k.name.clone();
    if path.enclosing(&k.body).iter().any(|s| matches!(s, Stmt::Launch { .. })) {
        return Err(Diagnostic::error(format!("loop `{}` of kernel {kname} is inside a `launch`", at.var))
            .with_hint("move producers before the loops are bound to GPU threads"));
    }
    let ty = stage::buffer_type(k, &path, buf)?;
    stage::not_vectorized(k, &path)?;
    if k.params.iter().any(|p| p.name == buf) {
        return Err(Diagnostic::error(format!(
            "`{buf}` is a parameter of kernel {kname}: `compute_at` moves a producer within a kernel"
        ))
        .with_hint(format!("recompute a temp of the plan where it is read with `compute_inline {buf}`")));
    }
    // The producer: a statement of a block around `v`, before the statement leading to `v`.
    let levels: Vec<Path> = (0..=path.outer.len())
        .map(|l| match path.outer.get(l) {
            Some(&(i, _)) => Path { outer: path.outer[..l].to_vec(), index: i },
            None => path.clone(),
        })
        .collect();
    let found = levels.iter().find_map(|lv| {
        let block = lv.block(&k.body);
        (0..lv.index).find(|&j| stage::stores(&block[j..=j], buf)).map(|j| (lv.clone(), j))
    });
    let Some((level, j)) = found else {
        return Err(Diagnostic::error(format!(
            "no loop nest before the one holding loop `{}` (kernel {kname}) produces `{buf}`",
            at.var
        ))
        .with_hint("name a loop of a nest that reads a buffer an earlier nest of the same block writes"));
    };
    let block = level.block(&k.body);
    let producer = &block[j];
    let writers = accesses(&k.body).iter().filter(|a| a.buf == buf && a.write).count();
    let Some((vars, value)) = plain_nest(std::slice::from_ref(producer), buf, &ty.shape)
        .filter(|_| writers == 1 && matches!(producer, Stmt::Loop { .. }))
    else {
        return Err(Diagnostic::error(format!(
            "`{buf}` is not produced by one plain loop nest storing `{buf}[i0, ..]` once per element (kernel {kname})"
        ))
        .with_hint("move a producer that is a nest of full loops over `t` with one store, as `cache_read` writes it"));
    };
    let reads_inside = accesses(parts(path.get(&k.body)).body).iter().filter(|a| a.buf == buf).count();
    let reads_all = accesses(&k.body).iter().filter(|a| a.buf == buf && !a.write).count();
    if reads_all != reads_inside {
        return Err(Diagnostic::error(format!(
            "`{buf}` is read outside loop `{}` of kernel {kname}, which would then not find it computed",
            at.var
        ))
        .with_hint("compute a buffer at a loop that holds every read of it"));
    }
    let mut inputs: Vec<&str> = Vec::new();
    for_each_subexpr(&value, |e| {
        if let ExprKind::Load { buf, .. } = &e.kind {
            inputs.push(&buf.name);
        }
    });
    if let Some(b) = inputs.into_iter().find(|b| stage::stores(&block[j + 1..=level.index], b)) {
        return Err(Diagnostic::error(format!(
            "`{b}`, which the producer of `{buf}` reads, is written after it, before the last read of `{buf}` (kernel {kname})"
        ))
        .with_hint("move a producer whose inputs stay unchanged until its consumer is done"));
    }
    let region = stage::region(k, &path, buf, false, None)?;
    stage::check_size(&region, buf, ty.dtype.size_bytes(), false, &kname)?;
    // The producer's own names are free once it goes.
    let (all, own) = (defined_names(k), names_in(producer));
    let mut names = Names::default();
    for n in
        all.iter().filter(|n| all.iter().filter(|m| m == n).count() > own.iter().filter(|m| m == n).count())
    {
        names.reserve(n);
    }
    let env = stage::env_at(k, &path);
    let out = Buf::new(buf, TensorType::new(ty.dtype, ty.shape.clone()));
    let vars_c = stage::loop_names(&region, &mut names, buf);
    let compute = stage::nest(&region, &vars_c, &env, &ty.shape, |c| {
        let index = region.element(c);
        let map: HashMap<String, Expr> = vars
            .iter()
            .zip(&index)
            .filter_map(|(v, i)| v.as_ref().map(|v| (v.clone(), i.0.clone())))
            .collect();
        out.store(&index, ekb_ir::l1::build::E(substitute(value.clone(), &map)))
    });
    let lp = path.block_mut(&mut k.body);
    let Stmt::Loop { body, .. } = &mut lp[path.index] else { unreachable!("a loop") };
    body.insert(0, compute);
    level.block_mut(&mut k.body).remove(j);
    // The loop now sits one place earlier in the producer's block.
    let mut moved = path.clone();
    match moved.outer.get_mut(level.outer.len()) {
        Some(entry) => entry.0 -= 1,
        None => moved.index -= 1,
    }
    stage::check_parallel(k, &moved, buf, &format!("computing `{buf}` at loop `{}`", at.var))
}

/// The loop variables and `let`s a statement defines, with repeats.
fn names_in(s: &Stmt) -> Vec<String> {
    let mut out = Vec::new();
    for_each_stmt(std::slice::from_ref(s), &mut |s| match s {
        Stmt::Loop { var: n, .. } | Stmt::Let { name: n, .. } | Stmt::Alloc { name: n, .. } => {
            out.push(n.clone())
        }
        _ => {}
    });
    out
}
