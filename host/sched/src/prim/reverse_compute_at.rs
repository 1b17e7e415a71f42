//! `reverse_compute_at t at K.v`: the loop nest that consumes `t`, a later nest of the same
//! kernel reading what the nest holding loop `v` produces, moves to the end of the body of `v`
//! and computes, in each iteration, the elements whose `t` that iteration has just written (the
//! mirror of `compute_at`, TVM's `reverse_compute_at`): an elementwise epilogue (an activation
//! after a tile of a matmul) runs on each tile while it is fresh. The consumer is a plain nest
//! storing `y[i0, ..] = f(..)` once per element (as `compute_inline` requires of its producers)
//! that reads `t` only at the element it stores (`t` and `y` of one shape). With the box of `t`
//! that one iteration of `v` touches (see `stage`; the loops around `v` inside the producer's
//! nest fix its offset), the new loops `y_d` go over the box and store `f` at each of its
//! elements.
//!
//! Why it is sound: the band is the loops from the producer's outermost loop down to `v`. (a)
//! The boxes of distinct band iterations do not overlap (the dependence analysis, over the band,
//! proves the new store of `y` touches distinct elements in distinct iterations), they lie inside
//! `t`, and their sizes add up to the elements of `t`; so they tile it, and each element of `y`
//! is computed exactly once. (b) Every store of `t` in the producer's nest is in `v`'s body, and
//! an iteration stores `t` only inside its own box; so when an iteration of `v` ends, the
//! elements of its box hold their final values. (c) Nothing in the producer's nest, or between
//! it and the consumer, touches `y` or writes what the consumer reads besides `t`; so the
//! consumer sees the same inputs earlier, and its stores are not seen early by anyone.
//!
//! Legal when, besides (a) to (c): `t` is visible at `v`, read by a later statement of a block
//! around `v` (the consumer; the outermost such block is taken); the path from the producer's
//! outermost loop down to `v` is loops only, with literal bounds; the consumer's formula uses
//! only its own loop variables, and the buffers it touches are visible at `v`; `v` is not a
//! `vectorize` loop and is outside any `launch`; and every `parallel` loop around `v`, and `v`
//! itself, still provably keeps its iterations on distinct elements of `y`.

use super::compute_inline::plain_nest;
use super::{const_bounds, locate, parts, stage};
use crate::handle::Path;
use crate::trace::LoopRef;
use ekb_ir::l1::analysis::access::accesses;
use ekb_ir::l1::analysis::deps::{dependences, BandLoop};
use ekb_ir::l1::analysis::interval::Interval;
use ekb_ir::l1::build::{Buf, Names, E};
use ekb_ir::l1::print::print_expr;
use ekb_ir::l1::visit::{defined_names, for_each_subexpr, substitute};
use ekb_ir::l1::{Expr, ExprKind, Module, Stmt};
use ekb_ir::{Diagnostic, TensorType};
use std::collections::HashMap;

pub fn apply(m: &mut Module, buf: &str, at: &LoopRef) -> Result<(), Diagnostic> {
    let (k, path) = locate(m, at)?;
    let kname = k.name.clone();
    if path.enclosing(&k.body).iter().any(|s| matches!(s, Stmt::Launch { .. })) {
        return Err(Diagnostic::error(format!("loop `{}` of kernel {kname} is inside a `launch`", at.var))
            .with_hint("move consumers before the loops are bound to GPU threads"));
    }
    let ty = stage::buffer_type(k, &path, buf)?;
    stage::not_vectorized(k, &path)?;
    // The consumer: a later statement of a block around `v` that reads `t`, outermost first.
    let levels: Vec<Path> = (0..=path.outer.len())
        .map(|l| match path.outer.get(l) {
            Some(&(i, _)) => Path { outer: path.outer[..l].to_vec(), index: i },
            None => path.clone(),
        })
        .collect();
    let reads = |s: &Stmt| accesses(std::slice::from_ref(s)).iter().any(|a| a.buf == buf && !a.write);
    let found = levels.iter().find_map(|lv| {
        let block = lv.block(&k.body);
        (lv.index + 1..block.len()).find(|&j| reads(&block[j])).map(|j| (lv.clone(), j))
    });
    let Some((level, j)) = found else {
        return Err(Diagnostic::error(format!(
            "no loop nest after the one holding loop `{}` (kernel {kname}) reads `{buf}`",
            at.var
        ))
        .with_hint("name a loop of the nest that produces a buffer a later nest of the same block reads"));
    };
    let block = level.block(&k.body);
    let (root, consumer) = (&block[level.index], &block[j]);
    // The band: the loops from the producer's outermost one down to `v`.
    let mut band: Vec<(String, i32, i32)> = Vec::new();
    for s in path.enclosing(&k.body)[level.outer.len()..].iter().copied().chain([path.get(&k.body)]) {
        let bounds = match s {
            Stmt::Loop { lo, hi, .. } => const_bounds(lo, hi),
            _ => None,
        };
        let Some((lo, hi)) = bounds else {
            let what = match s {
                Stmt::Loop { var, .. } => format!("loop `{var}` has bounds that are not literals"),
                _ => "a statement other than a loop encloses it".to_string(),
            };
            return Err(Diagnostic::error(format!(
                "between the producer's outermost loop and loop `{}` (kernel {kname}), {what}: the iterations that \
                 compute the consumer cannot be counted",
                at.var
            ))
            .with_hint("move the consumer under a loop of a nest of plain loops with literal bounds"));
        };
        band.push((parts(s).var.to_string(), lo, hi));
    }
    // The consumer's output, formula and inputs.
    let mut outs: Vec<&str> =
        accesses(std::slice::from_ref(consumer)).iter().filter(|a| a.write).map(|a| a.buf).collect();
    outs.dedup();
    let plain = match outs.as_slice() {
        [y] => stage::buffer_type(k, &path, y).ok().filter(|yt| yt.shape == ty.shape && *y != buf).and_then(
            |yt| Some((y.to_string(), yt.clone(), plain_nest(std::slice::from_ref(consumer), y, &yt.shape)?)),
        ),
        _ => None,
    };
    let Some((y, yty, (vars, value))) = plain else {
        return Err(Diagnostic::error(format!(
            "the reader of `{buf}` after loop `{}` (kernel {kname}) is not a plain loop nest storing one buffer of \
             `{buf}`'s shape, `y[i0, ..]`, once per element",
            at.var
        ))
        .with_hint("move an elementwise consumer, as the naive lowering writes it, before scheduling it"));
    };
    let here: Vec<String> = vars.iter().map(|v| v.clone().unwrap_or_else(|| "0".into())).collect();
    let mut inputs: Vec<String> = Vec::new();
    let (mut elsewhere, mut free) = (None, None);
    for_each_subexpr(&value, |e| match &e.kind {
        ExprKind::Load { buf: b, index } => {
            if b.name == buf && index.iter().map(print_expr).ne(here.iter().cloned()) && elsewhere.is_none() {
                elsewhere = Some(print_expr(e));
            }
            if !inputs.contains(&b.name) {
                inputs.push(b.name.clone());
            }
        }
        ExprKind::Var(v) if !vars.iter().flatten().any(|w| w == v) && free.is_none() => {
            free = Some(v.clone())
        }
        _ => {}
    });
    if let Some(e) = elsewhere {
        return Err(Diagnostic::error(format!(
            "the consumer of `{buf}` (kernel {kname}) reads `{e}`, not only `{buf}` at the element it stores: another \
             iteration of loop `{}` may write that element",
            at.var
        ))
        .with_hint("move an elementwise consumer (a transpose or a stencil reads other elements)"));
    }
    if let Some(v) = free {
        return Err(Diagnostic::error(format!(
            "the consumer of `{buf}` (kernel {kname}) uses `{v}`, which is not one of its loop variables"
        ))
        .with_hint("move a consumer whose formula uses only its own loop variables and buffers"));
    }
    if let Some(b) = inputs.iter().find(|b| stage::buffer_type(k, &path, b).is_err()) {
        return Err(Diagnostic::error(format!(
            "the consumer of `{buf}` reads `{b}`, which loop `{}` of kernel {kname} does not see",
            at.var
        ))
        .with_hint("allocate the consumer's buffers before the producer's nest"));
    }
    // (b) and (c): who touches what in the producer's nest and up to the consumer.
    let between = &block[level.index + 1..j];
    let v_body = parts(path.get(&k.body)).body;
    let stores_of = |body: &[Stmt], b: &str| accesses(body).iter().filter(|a| a.buf == b && a.write).count();
    if stores_of(std::slice::from_ref(root), buf) != stores_of(v_body, buf) {
        return Err(Diagnostic::error(format!(
            "the producer's nest stores `{buf}` outside loop `{}` (kernel {kname}): its values are not final when an \
             iteration of `{}` ends",
            at.var, at.var
        ))
        .with_hint("move the consumer under a loop whose body holds every store of the buffer"));
    }
    let touches = |body: &[Stmt], b: &str| accesses(body).iter().any(|a| a.buf == b);
    let offender =
        [("the producer's nest", std::slice::from_ref(root)), ("a statement between the nests", between)]
            .into_iter()
            .find_map(|(what, body)| {
                if touches(body, &y) {
                    return Some(format!("{what} touches `{y}`, which the consumer writes"));
                }
                let written = inputs
                    .iter()
                    .find(|b| (**b != buf || what != "the producer's nest") && stage::stores(body, b));
                written.map(|b| format!("{what} writes `{b}`, which the consumer reads"))
            });
    if let Some(why) = offender {
        return Err(Diagnostic::error(format!(
            "{why} (kernel {kname}): moving the consumer under loop `{}` would change what it reads or what others see",
            at.var
        ))
        .with_hint("move a consumer whose inputs are final once the producer's loop has written them"));
    }
    // The consumer leaves first: its loops and `let`s then do not hide the producer's `let`s from
    // the region (which inlines those the kernel defines once). A later refusal drops this copy.
    level.block_mut(&mut k.body).remove(j);
    // (a): the box, inside `t`, and as many elements over the band as `t` has.
    let region = stage::region(k, &path, buf, true, None)?;
    let env = stage::env_at(k, &path);
    if let Some(d) = region
        .span(&env)
        .iter()
        .zip(&ty.shape)
        .position(|(iv, &n)| iv.is_none_or(|iv| iv.lo < 0 || iv.hi >= n as i64))
    {
        return Err(Diagnostic::error(format!(
            "the box of `{buf}` that an iteration of loop `{}` (kernel {kname}) touches may leave it along dimension {d}",
            at.var
        ))
        .with_hint("move the consumer under a loop whose tiles divide the buffer (split by a factor of its extent)"));
    }
    let iterations: i64 = band.iter().map(|(_, lo, hi)| i64::from((hi - lo).max(0))).product();
    let per: i64 = region.shape().iter().product::<usize>() as i64;
    if iterations * per != ty.numel() as i64 {
        let names: Vec<&str> = band.iter().map(|(v, _, _)| v.as_str()).collect();
        return Err(Diagnostic::error(format!(
            "the {iterations} iterations of loops `{}` (kernel {kname}) touch boxes of {per} elements of `{buf}` each, \
             {} in all, not the {} it has: the boxes do not tile it",
            names.join("`, `"),
            iterations * per,
            ty.numel()
        ))
        .with_hint("move the consumer under a loop of the producer whose iterations write disjoint tiles of the buffer"));
    }
    // The rewrite: the consumer's formula over the box, at the end of `v`'s body.
    let mut names = Names::default();
    defined_names(k).iter().for_each(|n| names.reserve(n));
    let out = Buf::new(&y, TensorType::new(yty.dtype, yty.shape.clone()));
    let vars_c = stage::loop_names(&region, &mut names, &y);
    let compute = stage::nest(&region, &vars_c, &env, &ty.shape, |c| {
        let index = region.element(c);
        let map: HashMap<String, Expr> = vars
            .iter()
            .zip(&index)
            .filter_map(|(v, i)| v.as_ref().map(|v| (v.clone(), i.0.clone())))
            .collect();
        out.store(&index, E(substitute(value.clone(), &map)))
    });
    let Stmt::Loop { body, .. } = &mut path.block_mut(&mut k.body)[path.index] else {
        unreachable!("a loop")
    };
    body.push(compute);
    let Stmt::Loop { body, .. } = &level.block(&k.body)[level.index] else { unreachable!("a loop") };
    let loops: Vec<BandLoop> = band
        .iter()
        .map(|(v, lo, hi)| BandLoop {
            var: v.clone(),
            range: Some(Interval::new((*lo).into(), i64::from(*hi) - 1)),
        })
        .collect();
    if let Some(d) = dependences(body, &loops).into_iter().find(|d| d.buf == y) {
        return Err(Diagnostic::error(format!(
            "the boxes of `{buf}` that iterations of loops `{}` (kernel {kname}) touch are not proven disjoint: \
             `{}` may store one element of `{y}` in two of them",
            d.carried_by.join("`, `"),
            d.first
        ))
        .with_hint("move the consumer under a loop whose iterations write disjoint tiles (the outer loop of a split)"));
    }
    stage::check_parallel(k, &path, &y, &format!("computing `{y}` at loop `{}`", at.var))
}
