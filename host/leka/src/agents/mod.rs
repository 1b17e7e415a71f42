//! The level agents: one per IR level, each proposing edits of its own layer of a node's
//! program (`crate::layers`). Two kinds of decision makers stand behind one interface,
//! [`LevelAgent`]: offline policies (graph-pass choices, tuner moves, compiler options:
//! [`offline_l0`], [`offline_l1`], [`offline_l2`]) and a language model ([`llm`]).
//!
//! - [`contract`]: what each level may change and must keep, enforced by the loop on every
//!   proposal before anything is built.
//! - `gpu_moves`: the offline L1 policy's launch bindings and shared-memory stages for a hot
//!   GPU kernel.
//!
//! What must stay true: an agent only proposes; it never writes the tree or builds a candidate.
//! A proposal carries the edit as the agent wrote it, so the loop can refuse it and record why.

pub mod contract;
mod gpu_moves;
pub mod llm;
pub mod offline_l0;
pub mod offline_l1;
pub mod offline_l2;

use crate::layers::Layers;
use crate::profile::Report;
use crate::tree::{Cost, Level, Node};
use ekb_eval::tasks::{Backend, Task};
use ekb_ir::l1::Module;
use ekb_ir::{Diagnostic, TargetProfile};

/// An edit as an agent wrote it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Edit {
    /// A new graph (L0 text) and the graph passes it is compiled with.
    Graph { text: String, passes: String },
    /// The default schedule's knobs (`set` lines), the kernels taken back from the GPU lowering
    /// for the trace to bind (`Layers::rebind`), and a schedule trace over the program they
    /// lower to.
    Schedule { recipe: String, rebind: Vec<String>, trace: String },
    /// A kernel's source, in the backend's language (`ll`, `c`, `cu`, `cl`).
    Kernel { kernel: String, ext: String, text: String },
}

impl Edit {
    /// The level whose layer this edit writes.
    pub fn level(&self) -> Level {
        match self {
            Edit::Graph { .. } => Level::L0,
            Edit::Schedule { .. } => Level::L1,
            Edit::Kernel { .. } => Level::L2,
        }
    }

    /// The edit's text as the tree stores it.
    pub fn text(&self) -> String {
        match self {
            Edit::Graph { text, passes } if passes == crate::layers::DEFAULT_PASSES => text.clone(),
            Edit::Graph { text, passes } => format!("# passes: {passes}\n{text}"),
            Edit::Schedule { recipe, rebind, trace } => {
                let rebind: String = rebind.iter().map(|k| format!("# rebind: {k}\n")).collect();
                format!("{recipe}{rebind}{trace}")
            }
            Edit::Kernel { kernel, ext, text } => format!("# kernel: {kernel}.{ext}\n{text}"),
        }
    }
}

/// One proposed edit of a node.
#[derive(Debug, Clone, PartialEq)]
pub struct Proposal {
    /// `None` when the agent answered but nothing usable could be read from its answer (the
    /// reason is then the rationale).
    pub edit: Option<Edit>,
    pub rationale: String,
    pub cost: Cost,
}

/// What an agent sees of the node it edits.
pub struct Context<'a> {
    pub task: &'a Task,
    pub backend: Backend,
    pub target: &'a TargetProfile,
    /// The node to edit, its layers and the loop program they compile to.
    pub node: &'a Node,
    pub layers: &'a Layers,
    pub module: &'a Module,
    /// The profiling agent's report on the node.
    pub report: &'a Report,
    /// Every edit of this agent's level the run already tried, with its outcome, oldest first.
    pub tried: &'a [Node],
    /// How many proposals the loop wants at most.
    pub want: usize,
}

/// An agent of one level.
pub trait LevelAgent {
    /// The level whose layer it edits.
    fn level(&self) -> Level;

    /// Who it is, as the tree records it: `l1-offline`, `l1-llm:MODEL`, ...
    fn name(&self) -> String;

    /// Up to `ctx.want` edits of the node; none when it has nothing left to try. `Err` only for
    /// what must stop the run (an LLM call that exhausted its retries is a proposal without an
    /// edit, not an error).
    fn propose(&mut self, ctx: &Context<'_>) -> Result<Vec<Proposal>, Diagnostic>;
}

/// The kernel an L2 agent edits: the hottest one with an L2 finding, else the hottest.
fn hottest_kernel(ctx: &Context<'_>) -> Option<String> {
    ctx.report.for_level(Level::L2).find_map(|f| f.kernel.clone()).or_else(|| {
        ctx.report.kernels.iter().max_by(|a, b| a.share.total_cmp(&b.share)).map(|k| k.name.clone())
    })
}

/// A kernel's source in the node: its L2 file, else as the adapter emits it (what an L2 folder
/// starts from).
fn kernel_source(ctx: &Context<'_>, kernel: &str) -> Result<String, Diagnostic> {
    if let Some(k) = ctx.layers.kernels.get(kernel) {
        return Ok(k.text.clone());
    }
    let dir = tempfile::tempdir()
        .map_err(|e| Diagnostic::error(format!("cannot create a temporary folder: {e}")))?;
    let backend = ekb_eval::evaluate::compile::payload_backend(ctx.backend);
    let files = ekb_deploy::l2::write(dir.path(), ctx.module, backend, ctx.target)?;
    let file = files
        .iter()
        .find(|p| p.file_stem().is_some_and(|s| s == kernel))
        .ok_or_else(|| Diagnostic::error(format!("the program has no kernel `{kernel}`")))?;
    std::fs::read_to_string(file)
        .map_err(|e| Diagnostic::error(format!("cannot read `{}`: {e}", file.display())))
}
