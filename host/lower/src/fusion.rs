//! Fusion groups at L1: every `fuse` group of the graph becomes one kernel, by schedule
//! primitives on the lowered module (`ekb-sched`), so the fusion is as legal as they prove it.
//!
//! Per group (rules in `ekb_ir::l0::fusion`), in order: every member but the anchor and the last
//! is recomputed where it is read (`compute_inline` of its temp: prologue members into the
//! anchor or a later member, inner epilogue members into the last), then, when the anchor is not
//! the last member, the last member is folded into the anchor's final stores
//! (`reverse_compute_inline` of the anchor's temp). The lowering makes every member but the
//! anchor a plain nest (the naive schedule) first, as both primitives require.
//!
//! Each group's steps run on the sub-module of the plan steps from its first to its last
//! kernel (temps shared with the rest of the plan become its inputs or outputs), and the result
//! is spliced back: the cost is linear in the module, not quadratic. Must keep true: a group
//! either becomes one kernel computing what its kernels computed, or the lowering fails with a
//! diagnostic at its `fuse` statement naming the refused step.

use ekb_ir::l0::{FusionGroup, Graph};
use ekb_ir::l1::{BufferRole, Module};
use ekb_ir::{Diagnostic, Span};
use ekb_sched::{Prim, Step, Trace};
use std::collections::HashSet;

/// The names of the nodes that are not their group's anchor: the lowering gives them plain
/// nests.
pub(crate) fn folded_members(g: &Graph) -> HashSet<&str> {
    g.groups
        .iter()
        .flat_map(|f| {
            let anchor = f.anchor(g);
            f.nodes.iter().enumerate().filter(move |(i, _)| *i != anchor).map(|(_, v)| v.name.as_str())
        })
        .collect()
}

/// The schedule steps folding group `f` into one kernel, naming each member's temp by `loc`.
fn steps(g: &Graph, f: &FusionGroup, loc: &dyn Fn(&str) -> String) -> Vec<Prim> {
    let anchor = f.anchor(g);
    let last = f.nodes.len() - 1;
    let mut out: Vec<Prim> = (0..last)
        .filter(|&i| i != anchor)
        .map(|i| Prim::ComputeInline { buffer: loc(&f.nodes[i].name) })
        .collect();
    if anchor != last {
        out.push(Prim::ReverseComputeInline { buffer: loc(&f.nodes[anchor].name) });
    }
    out
}

/// Folds each group of `g` into one kernel of `m`. `loc` gives the module buffer of a value;
/// `kernel_of` the kernel that computes a node (before any folding).
pub(crate) fn fuse_groups(
    g: &Graph,
    mut m: Module,
    loc: &dyn Fn(&str) -> String,
    kernel_of: &dyn Fn(&str) -> String,
) -> Result<Module, Diagnostic> {
    for f in &g.groups {
        let kernels: HashSet<String> = f.nodes.iter().map(|v| kernel_of(&v.name)).collect();
        let runs: Vec<usize> =
            m.plan.iter().enumerate().filter(|(_, r)| kernels.contains(&r.kernel)).map(|(i, _)| i).collect();
        let (Some(&first), Some(&last)) = (runs.first(), runs.last()) else { continue };
        let trace = Trace {
            steps: steps(g, f, loc).into_iter().map(|prim| Step { prim, span: Span::NONE }).collect(),
        };
        let sub = ekb_sched::apply(&span(&m, first, last), &trace).map_err(|d| refused(g, f, d))?;
        m = splice(m, first, last, sub);
    }
    Ok(m)
}

/// `fusion group `fuse %a, %b` cannot be one kernel: ...`, at the `fuse` statement.
fn refused(g: &Graph, f: &FusionGroup, d: Diagnostic) -> Diagnostic {
    let members: Vec<&str> = f.nodes.iter().map(|v| v.name.as_str()).collect();
    let mut out = Diagnostic::error(format!(
        "fusion group `fuse {}` of graph {} cannot be lowered as one kernel: {}",
        members.join(", "),
        g.name,
        d.message
    ))
    .at(f.span)
    .with_hint(
        d.hint.clone().unwrap_or_else(|| "leave this node out of the group, or split the group".into()),
    );
    out.notes = d.notes.clone();
    out
}

/// The plan steps `first..=last` of `m` as a module of their own: their kernels, and the
/// buffers they name, a temp becoming an input (an output) where a step outside the span
/// writes (reads) it, and a graph output written before the span an input.
fn span(m: &Module, first: usize, last: usize) -> Module {
    let plan = m.plan[first..=last].to_vec();
    let named: HashSet<&str> = plan.iter().flat_map(|r| r.args.iter().map(|a| a.name.as_str())).collect();
    let used_outside: HashSet<&str> = m
        .plan
        .iter()
        .enumerate()
        .filter(|(i, _)| *i < first || *i > last)
        .flat_map(|(_, r)| r.args.iter().map(|a| a.name.as_str()))
        .collect();
    let buffers = m
        .buffers
        .iter()
        .filter(|b| named.contains(b.name.as_str()))
        .map(|b| {
            let mut b = b.clone();
            // Each buffer is written by one run of a lowering: one written before the span is
            // only read in it, an input there (a graph output too, as when a group reads a
            // value the graph also returns).
            let written_before = m.plan[..first].iter().any(|r| r.args.iter().any(|a| a.name == b.name));
            if b.role == BufferRole::Output && written_before {
                b.role = BufferRole::Input;
            } else if b.role == BufferRole::Temp && used_outside.contains(b.name.as_str()) {
                // Written before the span: an input; else written here and read later.
                b.role = if written_before { BufferRole::Input } else { BufferRole::Output };
            }
            b
        })
        .collect();
    let names: HashSet<&str> = plan.iter().map(|r| r.kernel.as_str()).collect();
    let kernels = m.kernels.iter().filter(|k| names.contains(k.name.as_str())).cloned().collect();
    Module { name: m.name.clone(), buffers, kernels, plan, span: Span::NONE }
}

/// `m` with its plan steps `first..=last` replaced by `sub`'s plan, their kernels by `sub`'s,
/// and the temps of the span that `sub` no longer has removed.
fn splice(mut m: Module, first: usize, last: usize, sub: Module) -> Module {
    let old: HashSet<String> = m.plan[first..=last].iter().map(|r| r.kernel.clone()).collect();
    let kept: HashSet<&str> = sub.buffers.iter().map(|b| b.name.as_str()).collect();
    let named: HashSet<String> =
        m.plan[first..=last].iter().flat_map(|r| r.args.iter().map(|a| a.name.clone())).collect();
    m.buffers.retain(|b| !named.contains(&b.name) || kept.contains(b.name.as_str()));
    m.plan.splice(first..=last, sub.plan);
    // The span's kernels go where the first of them was; each kernel runs once in a lowering.
    let at = m.kernels.iter().position(|k| old.contains(&k.name)).unwrap_or(m.kernels.len());
    m.kernels.retain(|k| !old.contains(&k.name));
    let at = at.min(m.kernels.len());
    m.kernels.splice(at..at, sub.kernels);
    m
}
