//! The offline L1 policy's trace steps for a hot GPU kernel (the `gpu-hot` finding): its launch
//! chosen by the trace instead of the GPU lowering, and operands its blocks share staged in
//! shared memory.
//!
//! - **Binding.** A kernel the GPU lowering launched is taken back as its naive loop nest
//!   (`Layers::rebind`) and bound by the trace: of its outer perfect nest (or that nest less
//!   its innermost loop), the innermost loop on a block's threads, whole when it fits one block
//!   or split by `T` for `T` in 64, 128 and 256, and the loops around it (with the split's
//!   chunks) on the grid's axes, x, y, z in nest order (the two outermost fused when there
//!   would be four).
//! - **Staging.** In a kernel the trace binds, `cache_read B at K.v -> B_s shared` for an input
//!   `B` read in a serial loop `v` of the launch (split by 16 first when longer and a multiple,
//!   so one stage covers 16 of its iterations), kept when each staged element is read by at
//!   least two of the block's threads on average (a reused operand, not one thread's own).
//!   Each binding is also offered with each stage that applies on it, so that a stage is tried
//!   even when the binding alone would not be expanded.
//!
//! Every move is lowered before it is offered: a step a primitive refuses (a loop whose
//! iterations are not independent, a box without literal extents, a barrier under a thread's
//! guard) is never proposed.
//!
//! What must stay true: deterministic, in a fixed order; only moves whose layers lower.

use crate::layers::Layers;
use crate::profile::Report;
use crate::tree::Level;
use ekb_eval::tasks::Backend;
use ekb_ir::l1::{Expr, ExprKind, Kernel, LoopKind, Module, Scope, Stmt};
use ekb_ir::TargetProfile;

/// Threads per block the bindings try.
const THREADS: [i64; 3] = [64, 128, 256];
/// Iterations of a reduction loop one shared-memory stage covers.
const STAGE: i64 = 16;
/// Most threads of one block (CUDA's limit, which every GPU target of the project accepts).
const MAX_BLOCK: i64 = 1024;

/// The moves for the `gpu-hot` findings of `report` on the program of `layers`: each the layers
/// it gives and a line saying what it does.
pub(super) fn gpu_moves(
    report: &Report,
    layers: &Layers,
    backend: Backend,
    target: &TargetProfile,
) -> Vec<(Layers, String)> {
    let mut out = Vec::new();
    let Ok(naive) = layers.naive(target) else { return out };
    for f in report.for_level(Level::L1).filter(|f| f.kind == "gpu-hot") {
        let Some(name) = f.kernel.as_deref() else { continue };
        if layers.rebind.iter().any(|k| k == name) {
            if let Ok(m) = layers.lower(backend, target) {
                out.extend(stages(layers, &m, name, backend, target));
            }
            continue;
        }
        let Some(kernel) = naive.kernels.iter().find(|k| k.name == name) else { continue };
        let mut rebind = layers.rebind.clone();
        rebind.push(name.to_string());
        for (steps, what) in bindings(kernel) {
            let bound = Layers {
                rebind: rebind.clone(),
                trace: format!("{}{steps}", layers.trace),
                ..layers.clone()
            };
            let Ok(m) = bound.lower(backend, target) else { continue };
            let staged = stages(&bound, &m, name, backend, target);
            out.push((bound, what.clone()));
            out.extend(staged.into_iter().map(|(l, w)| (l, format!("{what}; {w}"))));
        }
    }
    out
}

/// The literal extent of a loop.
fn extent(lo: &Expr, hi: &Expr) -> Option<i64> {
    match (&lo.kind, &hi.kind) {
        (ExprKind::Int(a), ExprKind::Int(b)) => Some(i64::from(*b) - i64::from(*a)),
        _ => None,
    }
}

/// The kernel's outer perfect nest of serial loops with literal bounds, outermost first: each
/// loop the only statement of its block but for `let`s.
fn perfect_nest(body: &[Stmt]) -> Vec<(String, i64)> {
    let mut out = Vec::new();
    let mut block = body;
    loop {
        let mut others = block.iter().filter(|s| !matches!(s, Stmt::Let { .. }));
        match (others.next(), others.next()) {
            (Some(Stmt::Loop { var, kind: LoopKind::Serial, lo, hi, body, .. }), None) => {
                let Some(n) = extent(lo, hi).filter(|&n| n > 0) else { break };
                out.push((var.clone(), n));
                block = body;
            }
            _ => break,
        }
    }
    out
}

/// Grid limits along x, y and z (CUDA's, which every GPU target of the project accepts).
const MAX_GRID: [i64; 3] = [i32::MAX as i64, 65535, 65535];

/// The binding traces of a naive kernel (see the module's comment), each with what it does.
///
/// The threads of a block come from the innermost loop of the nest, whole or split by `T`;
/// the loops around it (and the chunks of a split) are the grid, one axis each. The dependence
/// test of `bind` reads through one `split` or one `fuse` but not through both or through a
/// fuse of a fused loop, so no loop is fused but the two outermost, when the grid would have
/// four axes.
fn bindings(k: &Kernel) -> Vec<(String, String)> {
    let name = &k.name;
    let full = perfect_nest(&k.body);
    let mut out = Vec::new();
    let nests = [Some(full.as_slice()), full.len().checked_sub(1).filter(|&n| n > 0).map(|n| &full[..n])];
    for nest in nests.into_iter().flatten() {
        let Some(((inner, n), outer)) = nest.split_last() else { continue };
        let mut choices: Vec<(Option<i64>, String)> = Vec::new();
        if *n <= MAX_BLOCK && !outer.is_empty() {
            choices.push((None, format!("the {n} iterations of `{inner}` on a block's threads")));
        }
        for t in THREADS.into_iter().filter(|t| n > t) {
            choices.push((Some(t), format!("`{inner}` in blocks of {t} threads")));
        }
        for (threads, what) in choices {
            let mut steps = String::new();
            let mut grid: Vec<(String, i64)> = outer.to_vec();
            let thread = match threads {
                Some(t) => {
                    steps.push_str(&format!("split {name}.{inner} by {t} -> {inner}_b, {inner}_t\n"));
                    grid.push((format!("{inner}_b"), (n + t - 1) / t));
                    format!("{inner}_t")
                }
                None => inner.clone(),
            };
            if grid.len() == 4 {
                let (a, b) = (grid.remove(0), grid.remove(0));
                let f = format!("{}_{}", a.0, b.0);
                steps.push_str(&format!("fuse {name}.{}, {} -> {f}\n", a.0, b.0));
                grid.insert(0, (f, a.1 * b.1));
            }
            if grid.len() > 3 || grid.iter().zip(MAX_GRID).any(|((_, e), max)| *e > max) {
                continue;
            }
            for ((v, _), axis) in grid.iter().zip(["x", "y", "z"]) {
                steps.push_str(&format!("bind {name}.{v} blockIdx.{axis}\n"));
            }
            steps.push_str(&format!("bind {name}.{thread} threadIdx.x\n"));
            let blocks: i64 = grid.iter().map(|(_, e)| e).product();
            out.push((steps, format!("`{name}` bound by the trace: {what}, {blocks} blocks")));
        }
    }
    out
}

/// The stages of inputs a bound kernel's blocks share (see the module's comment), on the layers
/// `layers` whose program is `m`.
fn stages(
    layers: &Layers,
    m: &Module,
    name: &str,
    backend: Backend,
    target: &TargetProfile,
) -> Vec<(Layers, String)> {
    let Some(k) = m.kernels.iter().find(|k| k.name == name) else { return Vec::new() };
    let [Stmt::Launch { block, body, .. }] = k.body.as_slice() else { return Vec::new() };
    let threads: f64 = block.iter().map(|d| f64::from(d.extent)).product();
    let inputs: Vec<&str> = k
        .params
        .iter()
        .map(|p| p.name.as_str())
        .filter(|p| {
            !ekb_ir::l1::visit::any_stmt(&k.body, |s| matches!(s, Stmt::Store { buf, .. } if buf.name == *p))
        })
        .collect();
    let mut out = Vec::new();
    for (v, n, loop_body) in serial_loops(body) {
        for b in inputs.iter().filter(|b| loads(loop_body, b) > 0.0) {
            let (split, at) = if n > STAGE && n % STAGE == 0 {
                (format!("split {name}.{v} by {STAGE} -> {v}_s, {v}_i\n"), format!("{v}_s"))
            } else {
                (String::new(), v.to_string())
            };
            let staged = format!("{b}_s");
            let steps = format!("{split}cache_read {b} at {name}.{at} -> {staged} shared\n");
            let next = Layers { trace: format!("{}{steps}", layers.trace), ..layers.clone() };
            let Ok(m2) = next.lower(backend, target) else { continue };
            let Some(reuse) = reuse(&m2, name, &at, &staged, threads) else { continue };
            if reuse >= 2.0 {
                out.push((
                    next,
                    format!("`{b}` staged in shared memory at `{name}.{at}`, each element read by {reuse:.0} threads"),
                ));
            }
        }
    }
    out
}

/// The serial loops with literal bounds anywhere in `body`: each variable, extent and body.
fn serial_loops(body: &[Stmt]) -> Vec<(&str, i64, &[Stmt])> {
    let mut out = Vec::new();
    ekb_ir::l1::visit::for_each_stmt(body, &mut |s| {
        if let Stmt::Loop { var, kind: LoopKind::Serial, lo, hi, body, .. } = s {
            if let Some(n) = extent(lo, hi) {
                out.push((var.as_str(), n, body.as_slice()));
            }
        }
    });
    out
}

/// Loads of `buf` in `body`, each weighted by the literal trip counts of the loops around it
/// in `body` (both branches of an `if` counted).
fn loads(body: &[Stmt], buf: &str) -> f64 {
    let in_expr = |e: &Expr| {
        let mut n = 0.0;
        ekb_ir::l1::visit::for_each_subexpr(e, |x| {
            if matches!(&x.kind, ExprKind::Load { buf: b, .. } if b.name == buf) {
                n += 1.0;
            }
        });
        n
    };
    body.iter()
        .map(|s| match s {
            Stmt::Loop { lo, hi, body, .. } => extent(lo, hi).unwrap_or(1) as f64 * loads(body, buf),
            Stmt::If { cond, then_body, else_body, .. } => {
                in_expr(cond) + loads(then_body, buf) + loads(else_body, buf)
            }
            Stmt::Let { value, .. } => in_expr(value),
            Stmt::Store { index, value, .. } => index.iter().map(in_expr).sum::<f64>() + in_expr(value),
            Stmt::Launch { body, .. } => loads(body, buf),
            Stmt::Alloc { .. } | Stmt::Barrier { .. } => 0.0,
        })
        .sum()
}

/// How many of a block's `threads` read each element of the shared stage `staged` in one
/// iteration of loop `at` of kernel `name` in `m`, on average.
fn reuse(m: &Module, name: &str, at: &str, staged: &str, threads: f64) -> Option<f64> {
    let k = m.kernels.iter().find(|k| k.name == name)?;
    let mut elements = None;
    let mut reads = None;
    ekb_ir::l1::visit::for_each_stmt(&k.body, &mut |s| match s {
        Stmt::Alloc { name, ty, scope: Scope::Shared, .. } if name == staged => {
            elements = Some(ty.numel() as f64)
        }
        Stmt::Loop { var, body, .. } if var == at => reads = Some(loads(body, staged)),
        _ => {}
    });
    Some(threads * reads? / elements?.max(1.0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ekb_ir::SourceFile;

    #[test]
    fn a_nest_binds_its_inner_loop_on_threads_and_the_rest_on_the_grid() {
        let src = SourceFile::new(
            "m.ekl1",
            "module m {\n  input x: f32[4,300]\n  output y: f32[4,300]\n  \
             kernel k0(x: f32[4,300] in, y: f32[4,300] out) {\n    for i in 0..4 {\n      for j in 0..300 {\n        y[i, j] = x[i, j] + x[i, 0]\n      }\n    }\n  }\n  \
             run k0(x, y)\n}\n",
        );
        let m = ekb_ir::l1::parse::parse(&src).unwrap();
        assert_eq!(perfect_nest(&m.kernels[0].body), [("i".to_string(), 4), ("j".to_string(), 300)]);
        let traces: Vec<String> = bindings(&m.kernels[0]).into_iter().map(|(t, _)| t).collect();
        // The whole nest: the 300 columns on a block's threads, or split by 64, 128, 256 with the
        // chunks on `blockIdx.y`; then the nest less `j`: `i` alone (4 iterations) fills no
        // block of 64.
        assert_eq!(traces.len(), 4, "{traces:#?}");
        assert_eq!(traces[0], "bind k0.i blockIdx.x\nbind k0.j threadIdx.x\n");
        assert_eq!(
            traces[1],
            "split k0.j by 64 -> j_b, j_t\nbind k0.i blockIdx.x\nbind k0.j_b blockIdx.y\nbind k0.j_t threadIdx.x\n"
        );
        for t in &traces {
            let trace = ekb_sched::parse(&SourceFile::new("t.trace", t.clone())).unwrap();
            ekb_sched::apply(&m, &trace).unwrap_or_else(|d| panic!("{t}: {d}"));
        }
        // Loads count once per thread of a launch, weighted by the loops around them.
        let rows = ekb_sched::parse(&SourceFile::new("t.trace", traces[0].clone())).unwrap();
        let bound = ekb_sched::apply(&m, &rows).unwrap();
        let [Stmt::Launch { body, .. }] = bound.kernels[0].body.as_slice() else { panic!("not launched") };
        assert_eq!(loads(body, "x"), 2.0);
        assert_eq!(loads(&m.kernels[0].body, "x"), 2.0 * 1200.0);
    }
}
