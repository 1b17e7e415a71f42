//! The offline L0 policy: graph-pass choices. The graph stays as written; what it proposes is
//! the pipeline it is compiled with: the default one, the default one without `bn_fold` (batch
//! norms as written; the GPU's default already), the default one with strided transposed
//! convolutions split into stride phases (`phase_split`, off by default), without fusion
//! (`fold,cse,dce`), and without any pass (`none`), each only when it gives another loop
//! program than the node's.
//!
//! What must stay true: deterministic, and never a pipeline the run already tried on this graph.

use super::{Context, Edit, LevelAgent, Proposal};
use crate::layers::{Layers, DEFAULT_PASSES};
use crate::tree::{Cost, Level};
use ekb_ir::Diagnostic;
use std::time::Instant;

/// The pipelines tried, with why each might help.
const PIPELINES: [(&str, &str); 5] = [
    (DEFAULT_PASSES, "the default pipeline: folding, CSE, dead nodes, then fusion of each anchor with its elementwise consumers"),
    (
        "patchify,pixel_transpose,trim,fold,cse,dce,fuse",
        "the default pipeline without `bn_fold`: each batch norm computed from its four operands in its producer's epilogue, as written",
    ),
    (
        "patchify,pixel_transpose,phase_split,trim,fold,cse,dce,fuse",
        "the default pipeline with each strided transposed convolution split into one ordinary convolution per stride phase",
    ),
    ("fold,cse,dce", "no fusion: each operator its own kernel, so each gets its family's own schedule"),
    ("none", "the graph exactly as written"),
];

/// Graph-pass choices, as an L0 agent.
#[derive(Debug, Default)]
pub struct OfflineL0;

impl LevelAgent for OfflineL0 {
    fn level(&self) -> Level {
        Level::L0
    }

    fn name(&self) -> String {
        "l0-offline".into()
    }

    fn propose(&mut self, ctx: &Context<'_>) -> Result<Vec<Proposal>, Diagnostic> {
        let t0 = Instant::now();
        let own = ekb_ir::l1::print::print(ctx.module);
        let tried = |passes: &str| {
            ctx.tried.iter().any(|n| {
                let (p, g) = split_passes(&n.edit.text);
                p == passes && g == ctx.layers.graph
            })
        };
        let routed: Vec<String> = ctx.report.for_level(Level::L0).map(|f| f.evidence.clone()).collect();
        let why = if routed.is_empty() { "no L0 finding; exploring".to_string() } else { routed.join("; ") };
        let mut out = Vec::new();
        for (passes, what) in PIPELINES {
            if out.len() == ctx.want || passes == ctx.layers.passes || tried(passes) {
                continue;
            }
            let layers = Layers { passes: passes.into(), ..ctx.layers.clone() };
            match layers.lower(ctx.backend, ctx.target) {
                Ok(m) if ekb_ir::l1::print::print(&m) != own => {}
                _ => continue,
            }
            out.push(Proposal {
                edit: Some(Edit::Graph { text: ctx.layers.graph.clone(), passes: passes.into() }),
                rationale: format!("graph passes `{passes}`: {what} ({why})"),
                cost: Cost::default(),
            });
        }
        let wall = t0.elapsed().as_secs_f64() / out.len().max(1) as f64;
        for p in &mut out {
            p.cost.wall_s = wall;
        }
        Ok(out)
    }
}

/// An L0 edit's text split into its passes (`# passes: LIST` first line, else the default) and
/// its graph: the inverse of `Edit::text` for a graph.
pub fn split_passes(text: &str) -> (&str, &str) {
    match text.strip_prefix("# passes: ").and_then(|r| r.split_once('\n')) {
        Some((passes, graph)) => (passes.trim(), graph),
        None => (DEFAULT_PASSES, text),
    }
}
