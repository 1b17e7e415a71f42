//! The offline L1 policy: tuner moves. From the node's recipe it proposes the neighbouring
//! points of the tuner's search space (`ekb_tune::space`: each knob the graph's lowering reads,
//! one step up or down its list of values; two steps once every neighbour was tried), ranked by
//! the tuner's roofline prior on the loop program each point lowers to, the node's trace kept.
//!
//! What must stay true: deterministic (no randomness, so a resumed run proposes what the first
//! would have); never a point the run already tried, nor one whose program is the node's own.

use super::{Context, Edit, LevelAgent, Proposal};
use crate::layers::Layers;
use crate::tree::{Cost, Level};
use ekb_eval::tasks::Backend;
use ekb_ir::{Diagnostic, SourceFile};
use ekb_tune::features::{loop_features, roofline};
use ekb_tune::space::{Point, Space};
use std::time::Instant;

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
        let mut tried: Vec<Point> =
            ctx.tried.iter().filter_map(|n| space.point_of(&recipe_of(&n.edit.text)).ok()).collect();
        tried.push(current.clone());
        let own = ekb_ir::l1::print::print(ctx.module);
        let mut scored = Vec::new();
        for step in 1..=2 {
            for (p, what) in neighbours(&space, &current, step) {
                if tried.contains(&p) || scored.iter().any(|(q, ..): &(Point, _, _)| q == &p) {
                    continue;
                }
                let layers = Layers { recipe: space.recipe(&p), ..ctx.layers.clone() };
                let Ok(m) = layers.lower(ctx.backend, ctx.target) else { continue };
                if ekb_ir::l1::print::print(&m) == own {
                    continue;
                }
                let estimate = roofline(&loop_features(&m, ctx.target), ctx.target);
                scored.push((p, what, estimate));
            }
            if !scored.is_empty() {
                break;
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
            .map(|(p, what, estimate)| Proposal {
                edit: Some(Edit::Schedule { recipe: space.recipe(&p), trace: ctx.layers.trace.clone() }),
                rationale: format!(
                    "tuner move {what}; the roofline prior estimates {:.2}x the node's work ({why})",
                    estimate / now.max(f64::MIN_POSITIVE)
                ),
                cost: Cost { wall_s: wall, ..Cost::default() },
            })
            .collect())
    }
}

/// The recipe part of an L1 edit's text: its `set` lines.
fn recipe_of(edit: &str) -> String {
    edit.lines().filter(|l| l.trim_start().starts_with("set ")).map(|l| format!("{l}\n")).collect()
}

/// The points `step` places away from `p` along one knob's values, each with a line saying
/// which knob moved (`threads.per_core 4 -> 8`).
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
