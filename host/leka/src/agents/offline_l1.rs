//! The offline L1 policy: tuner moves and trace steps, answering the profiling agent's findings.
//!
//! - Knob moves: from the node's recipe, the neighbouring points of the tuner's search space
//!   (`ekb_tune::space`: each knob the graph's lowering reads, one step up or down its list of
//!   values; two steps once every neighbour was tried), the node's trace kept; and [`JUMPS`]
//!   points of that space drawn at random, which move several knobs at once, far along their
//!   lists, where neighbour moves would take several rounds (the draws seeded by the task, the
//!   node's recipe and how many edits were tried, so a resumed run draws the same).
//! - Trace steps, for each kernel a finding names: `serial` gets `parallel` on its outermost
//!   serial loop (or on the fusion of its two outermost loops, when the first alone is narrower
//!   than the cores); `scalar` gets its innermost serial loops split by the vector width and
//!   vectorized; `scheduled-hot` gets its short innermost serial loops unrolled. Appended to the
//!   node's trace; a step the primitives refuse is never proposed.
//! - On a GPU, `gpu-hot` gets the moves of `super::gpu_moves`: the kernel taken back from the
//!   GPU lowering and bound by the trace with 64, 128 or 256 threads per block (as one grid, or
//!   rows on blocks), and inputs its blocks' threads share staged with `cache_read .. shared`.
//!
//! All are ranked by the tuner's roofline prior on the loop program each one gives.
//!
//! What must stay true: deterministic (no randomness, so a resumed run proposes what the first
//! would have); never an edit the run already tried, nor one whose program is the node's own.

use super::{Context, Edit, LevelAgent, Proposal};
use crate::layers::Layers;
use crate::profile::Report;
use crate::tree::{Cost, Level};
use ekb_eval::tasks::Backend;
use ekb_ir::l1::{ExprKind, LoopKind, Module, Stmt};
use ekb_ir::TargetProfile;
use ekb_ir::{Diagnostic, SourceFile};
use ekb_tune::features::{loop_features, roofline};
use ekb_tune::search::Rng;
use ekb_tune::space::{Point, Space};
use std::time::Instant;

/// Random points of the tuner's space considered with the neighbours of each proposal round.
pub const JUMPS: usize = 4;

/// The tuner's knob moves, as an L1 agent.
#[derive(Debug, Default)]
pub struct OfflineL1;

impl LevelAgent for OfflineL1 {
    fn level(&self) -> Level {
        Level::L1
    }

    fn name(&self) -> String {
        "l1-offline".into()
    }

    fn propose(&mut self, ctx: &Context<'_>) -> Result<Vec<Proposal>, Diagnostic> {
        let t0 = Instant::now();
        let Ok(graph) = ekb_ir::l0::check::load(&SourceFile::new("graph.ekir", ctx.layers.graph.clone()))
        else {
            return Ok(Vec::new());
        };
        let space = Space::new(&graph, ctx.target, ctx.backend != Backend::Cpu);
        let current = space.point_of(&ctx.layers.recipe).unwrap_or_else(|_| space.default_point());
        let tried: Vec<&str> = ctx.tried.iter().map(|n| n.edit.text.as_str()).collect();
        let own = ekb_ir::l1::print::print(ctx.module);
        // Each candidate edit: its layers, a line saying what moved, its estimate.
        let mut scored: Vec<(Layers, String, f64)> = Vec::new();
        let mut consider = |layers: Layers, what: String| {
            let text = Edit::Schedule {
                recipe: layers.recipe.clone(),
                rebind: layers.rebind.clone(),
                trace: layers.trace.clone(),
            }
            .text();
            if tried.contains(&text.as_str()) || scored.iter().any(|(l, ..)| l == &layers) {
                return false;
            }
            let Ok(m) = layers.lower(ctx.backend, ctx.target) else { return false };
            if ekb_ir::l1::print::print(&m) == own {
                return false;
            }
            let estimate = roofline(&loop_features(&m, ctx.target), ctx.target);
            scored.push((layers, what, estimate));
            true
        };
        for (trace, what) in trace_steps(ctx.report, ctx.module, ctx.target, ctx.backend != Backend::Cpu) {
            consider(Layers { trace: format!("{}{trace}", ctx.layers.trace), ..ctx.layers.clone() }, what);
        }
        if ctx.backend != Backend::Cpu {
            for (layers, what) in super::gpu_moves::gpu_moves(ctx.report, ctx.layers, ctx.backend, ctx.target)
            {
                consider(layers, what);
            }
        }
        for step in 1..=2 {
            let mut any = false;
            for (p, what) in neighbours(&space, &current, step) {
                let layers = Layers { recipe: space.recipe(&p), ..ctx.layers.clone() };
                any |= consider(layers, format!("tuner move {what}"));
            }
            if any {
                break;
            }
        }
        let seed = ekb_wire::seeded::tensor_key(&ctx.task.name, ctx.tried.len() as u64, &ctx.layers.recipe);
        let mut rng = Rng::new(seed);
        for _ in 0..JUMPS {
            let p = space.random(&mut rng);
            let moved = differing(&space, &current, &p);
            if !moved.is_empty() {
                let layers = Layers { recipe: space.recipe(&p), ..ctx.layers.clone() };
                consider(layers, format!("tuner jump {}", moved.join(", ")));
            }
        }
        scored.sort_by(|a, b| a.2.total_cmp(&b.2));
        let now = roofline(&loop_features(ctx.module, ctx.target), ctx.target);
        let routed: Vec<String> = ctx.report.for_level(Level::L1).map(|f| f.evidence.clone()).collect();
        let why = if routed.is_empty() { "no L1 finding; exploring".to_string() } else { routed.join("; ") };
        let count = scored.len().min(ctx.want);
        let wall = t0.elapsed().as_secs_f64() / count.max(1) as f64;
        Ok(scored
            .into_iter()
            .take(count)
            .map(|(layers, what, estimate)| Proposal {
                edit: Some(Edit::Schedule {
                    recipe: layers.recipe,
                    rebind: layers.rebind,
                    trace: layers.trace,
                }),
                rationale: format!(
                    "{what}; the roofline prior estimates {:.2}x the node's work ({why})",
                    estimate / now.max(f64::MIN_POSITIVE)
                ),
                cost: Cost { wall_s: wall, ..Cost::default() },
            })
            .collect())
    }
}

/// Trace steps answering the findings of `report` on `module` (see the module's comment), each
/// with what it does.
fn trace_steps(report: &Report, module: &Module, target: &TargetProfile, gpu: bool) -> Vec<(String, String)> {
    let cores = i64::from(target.cpu_cores().max(1));
    let lanes = i64::from(target.cpu_f32_lanes().max(1));
    let mut out = Vec::new();
    for f in report.for_level(Level::L1).chain(report.for_level(Level::L2)) {
        let Some(k) = f.kernel.as_deref().and_then(|name| module.kernels.iter().find(|k| k.name == name))
        else {
            continue;
        };
        let name = &k.name;
        match f.kind {
            "serial" if !gpu => {
                if let Some((outer, extent, inner)) = outermost(&k.body) {
                    let step = match inner {
                        Some(inner) if extent < cores => {
                            format!("fuse {name}.{outer}, {inner} -> {outer}_{inner}\nparallel {name}.{outer}_{inner}\n")
                        }
                        _ => format!("parallel {name}.{outer}\n"),
                    };
                    out.push((step, format!("threads for the serial kernel `{name}`")));
                }
            }
            "scalar" if !gpu => {
                for (var, extent) in innermost(&k.body) {
                    if extent >= lanes && extent % lanes == 0 {
                        let step = format!(
                            "split {name}.{var} by {lanes} -> {var}_o, {var}_v\nvectorize {name}.{var}_v\n"
                        );
                        out.push((step, format!("{lanes} vector lanes on `{name}.{var}`")));
                    }
                }
            }
            "scheduled-hot" => {
                for (var, extent) in innermost(&k.body) {
                    if (2..=8).contains(&extent) {
                        out.push((
                            format!("unroll {name}.{var}\n"),
                            format!("unroll the short loop `{name}.{var}`"),
                        ));
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// The literal extent of a loop.
fn extent(lo: &ekb_ir::l1::Expr, hi: &ekb_ir::l1::Expr) -> Option<i64> {
    match (&lo.kind, &hi.kind) {
        (ExprKind::Int(a), ExprKind::Int(b)) => Some(i64::from(*b) - i64::from(*a)),
        _ => None,
    }
}

/// The kernel's first serial loop at the top of its body (past `let`s and allocations): its
/// variable, extent, and the variable of the loop that is its whole body, if one is.
fn outermost(body: &[Stmt]) -> Option<(String, i64, Option<String>)> {
    body.iter().find_map(|s| match s {
        Stmt::Loop { var, kind: LoopKind::Serial, lo, hi, body, .. } => {
            let inner = match body.as_slice() {
                [Stmt::Loop { var: v, kind: LoopKind::Serial, .. }] => Some(v.clone()),
                _ => None,
            };
            Some((var.clone(), extent(lo, hi)?, inner))
        }
        _ => None,
    })
}

/// The serial loops with literal bounds that hold no loop, with their extents.
fn innermost(body: &[Stmt]) -> Vec<(String, i64)> {
    let mut out = Vec::new();
    for s in body {
        match s {
            Stmt::Loop { var, kind, lo, hi, body, .. } => {
                let inner = innermost(body);
                let has_loop = body.iter().any(|s| matches!(s, Stmt::Loop { .. })) || !inner.is_empty();
                if !has_loop && *kind == LoopKind::Serial {
                    out.extend(extent(lo, hi).map(|e| (var.clone(), e)));
                }
                out.extend(inner);
            }
            Stmt::If { then_body, else_body, .. } => {
                out.extend(innermost(then_body));
                out.extend(innermost(else_body));
            }
            _ => {}
        }
    }
    out
}

/// The points `step` places away from `p` along one knob's values, each with a line saying
/// which knob moved (`threads.per_core 4 -> 8`).
/// The knobs where `q` differs from `p`, each as `NAME FROM -> TO`.
fn differing(space: &Space, p: &Point, q: &Point) -> Vec<String> {
    space
        .dims
        .iter()
        .zip(p.0.iter().zip(&q.0))
        .filter(|(_, (a, b))| a != b)
        .map(|(d, (a, b))| format!("{} {a} -> {b}", d.spec.name))
        .collect()
}

fn neighbours(space: &Space, p: &Point, step: usize) -> Vec<(Point, String)> {
    let mut out = Vec::new();
    for (i, d) in space.dims.iter().enumerate() {
        let Some(at) = d.values.iter().position(|&v| v == p.0[i]) else { continue };
        let mut moves = Vec::new();
        if at >= step {
            moves.push(at - step);
        }
        if at + step < d.values.len() {
            moves.push(at + step);
        }
        for to in moves {
            let mut q = p.clone();
            q.0[i] = d.values[to];
            out.push((q, format!("{} {} -> {}", d.spec.name, p.0[i], d.values[to])));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::profile;

    #[test]
    fn a_serial_scalar_kernel_gets_threads_and_lanes_the_primitives_accept() {
        let src = SourceFile::new(
            "m.ekl1",
            "module m {\n  input x: f32[256,256]\n  output y: f32[256,256]\n  \
             kernel k0(x: f32[256,256] in, y: f32[256,256] out) {\n    for i in 0..256 {\n      for j in 0..256 {\n        y[i, j] = x[i, j] * 2.0 + 1.0\n      }\n    }\n  }\n  \
             run k0(x, y)\n}\n",
        );
        let m = ekb_ir::l1::parse::parse(&src).unwrap();
        let host = TargetProfile::load("rk3588").unwrap();
        let report = profile(&m, None, &host, false);
        let steps = trace_steps(&report, &m, &host, false);
        let texts: Vec<&str> = steps.iter().map(|(t, _)| t.as_str()).collect();
        assert_eq!(texts, ["split k0.j by 4 -> j_o, j_v\nvectorize k0.j_v\n", "parallel k0.i\n"]);
        for (t, _) in &steps {
            let trace = ekb_sched::parse(&SourceFile::new("t.trace", t.clone())).unwrap();
            ekb_sched::apply(&m, &trace).unwrap();
        }
        // On a GPU, threads and lanes are the launch's business: nothing.
        assert!(trace_steps(&report, &m, &host, true).is_empty());
    }

    fn task(name: &str) -> ekb_eval::tasks::Task {
        let file =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../../tasks/level1/{name}.ekir"));
        ekb_eval::tasks::load_task(&file).expect("the task loads")
    }

    fn root() -> crate::tree::Node {
        crate::tree::Node {
            id: 1,
            run: "r".into(),
            parent: None,
            level: Level::Root,
            agent: "start".into(),
            state: crate::tree::State::Evaluated,
            edit: crate::tree::Edit {
                kind: crate::tree::EditKind::None,
                text: String::new(),
                diff: String::new(),
            },
            rationale: String::new(),
            cost: Cost::default(),
            outcome: None,
            created_at: String::new(),
            evaluated_at: None,
            batch: None,
        }
    }

    #[test]
    fn on_a_gpu_a_hot_kernel_gets_launch_bindings_and_shared_stages_the_primitives_accept() {
        let pocl = TargetProfile::load("pocl").unwrap();
        let node = root();
        // An elementwise kernel (no loop inside its launch: nothing to stage) and a matmul (its
        // reduction reads a row of `q` that every thread of a row's block shares).
        for (name, kernel, stages) in
            [("relu_resnet18_stem", "k0_relu", false), ("matmul_scores_deit_base", "k0_matmul", true)]
        {
            let t = task(name);
            let layers = Layers::of_task(&t);
            let module = layers.lower(Backend::Opencl, &pocl).unwrap();
            let report = profile(&module, None, &pocl, true);
            let ctx = Context {
                task: &t,
                backend: Backend::Opencl,
                target: &pocl,
                node: &node,
                layers: &layers,
                module: &module,
                report: &report,
                tried: &[],
                want: 64,
            };
            let proposals = OfflineL1.propose(&ctx).unwrap();
            let mut gpu = Vec::new();
            for p in &proposals {
                let Some(Edit::Schedule { recipe, rebind, trace }) = p.edit.clone() else { panic!("{p:?}") };
                if rebind.is_empty() {
                    continue;
                }
                assert_eq!(rebind, [kernel], "{name}");
                assert!(trace.contains(&format!("bind {kernel}.")), "{trace}");
                let next = Layers { recipe, rebind, trace: trace.clone(), ..layers.clone() };
                let m =
                    next.lower(Backend::Opencl, &pocl).unwrap_or_else(|d| panic!("{name}: {trace}: {d:?}"));
                assert!(
                    m.kernels.iter().all(|k| matches!(k.body.as_slice(), [Stmt::Launch { .. }])),
                    "{trace}"
                );
                gpu.push(trace);
            }
            assert!(gpu.len() >= 3, "{name}: {proposals:#?}");
            let staged = gpu.iter().filter(|t| t.contains(" shared\n")).count();
            assert_eq!(staged > 0, stages, "{name}: {gpu:#?}");
        }
    }

    #[test]
    fn knob_moves_include_jumps_drawn_the_same_way_again() {
        let host = TargetProfile::load("host").unwrap();
        let node = root();
        let t = task("gemv_gpt2_medium_decode_mlp_c_fc");
        let layers = Layers::of_task(&t);
        let module = layers.lower(Backend::Cpu, &host).unwrap();
        let report = profile(&module, None, &host, true);
        let ctx = Context {
            task: &t,
            backend: Backend::Cpu,
            target: &host,
            node: &node,
            layers: &layers,
            module: &module,
            report: &report,
            tried: &[],
            want: 64,
        };
        let first = OfflineL1.propose(&ctx).unwrap();
        let jumps: Vec<&Proposal> = first.iter().filter(|p| p.rationale.starts_with("tuner jump ")).collect();
        assert!(!jumps.is_empty() && jumps.len() <= JUMPS, "{first:#?}");
        // A jump is a point of the tuner's space, and a resumed run draws the same ones.
        for p in &jumps {
            let Some(Edit::Schedule { recipe, .. }) = &p.edit else { panic!("{p:?}") };
            assert!(recipe.starts_with("set "), "{recipe}");
        }
        let edits = |ps: &[Proposal]| ps.iter().map(|p| p.edit.clone()).collect::<Vec<_>>();
        assert_eq!(edits(&first), edits(&OfflineL1.propose(&ctx).unwrap()));
    }
}
