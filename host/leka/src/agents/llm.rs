//! A level agent backed by a language model (any `ekb_agent::Provider`: an OpenAI-compatible
//! server, a command, a replay file). Its prompt carries the level's contract, the node's layer
//! (the graph; the knobs, trace and loop program; or the hottest kernel's source), the
//! profiling agent's report and what the run already tried at this level with each outcome.
//!
//! Reading the answer: the first fenced block decides the edit. A graph (```` ```ekir ```` with
//! `graph NAME(`) is a graph edit, a ```` ```trace ```` block a schedule edit (its `set` lines
//! the knobs, the rest the trace), a block in a kernel language a kernel edit (the kernel named
//! by a first line `// kernel: NAME`, else the kernel the prompt asked for). Whether the edit is
//! this level's to make is the contract's call, not this module's.
//!
//! What must stay true: one request per proposal; a provider failure is a proposal without an
//! edit (its reason the rationale), never an error that stops the run.

use super::{Context, Edit, LevelAgent, Proposal};
use crate::tree::{Cost, Level};
use ekb_agent::extract::{extract, CandidateKind};
use ekb_agent::prompt::Mode;
use ekb_agent::{Message, Provider, Request};
use ekb_eval::tasks::Backend;
use ekb_ir::Diagnostic;
use std::fmt::Write as _;
use std::sync::Arc;
use std::time::Instant;

/// A language model as the agent of one level.
pub struct LlmAgent {
    pub level: Level,
    pub provider: Arc<dyn Provider>,
    pub model: String,
    pub temperature: f64,
    pub max_tokens: u32,
    /// Requests made so far: each proposal's seed, so samples differ.
    pub calls: u64,
}

impl LevelAgent for LlmAgent {
    fn level(&self) -> Level {
        self.level
    }

    fn name(&self) -> String {
        format!("{}-llm:{}", self.level.name(), self.model)
    }

    fn propose(&mut self, ctx: &Context<'_>) -> Result<Vec<Proposal>, Diagnostic> {
        let mut out = Vec::new();
        let kernel = super::hottest_kernel(ctx).unwrap_or_default();
        for _ in 0..ctx.want {
            let t0 = Instant::now();
            let req = Request {
                model: self.model.clone(),
                messages: vec![
                    Message::system(system_text(self.level, ctx.backend)),
                    Message::user(user_text(self.level, ctx, &kernel)?),
                ],
                temperature: self.temperature,
                max_tokens: self.max_tokens,
                seed: Some(self.calls),
            };
            self.calls += 1;
            let answer = self.provider.complete(&req);
            let mut cost = Cost { llm_calls: 1, wall_s: t0.elapsed().as_secs_f64(), ..Cost::default() };
            let proposal = match answer {
                Err(e) => Proposal { edit: None, rationale: format!("the model gave no answer: {e}"), cost },
                Ok(r) => {
                    cost.tokens_in = r.usage.prompt_tokens;
                    cost.tokens_out = r.usage.completion_tokens;
                    match read_edit(&r.text, ctx, &kernel) {
                        Ok(edit) => Proposal { edit: Some(edit), rationale: prose(&r.text), cost },
                        Err(why) => Proposal { edit: None, rationale: why, cost },
                    }
                }
            };
            out.push(proposal);
        }
        Ok(out)
    }
}

/// The level's contract and answer format.
fn system_text(level: Level, backend: Backend) -> String {
    let (role, answer) = match level {
        // The root and the flat arm's level have no agent of this kind; they read as the graph's.
        Level::L0 | Level::Root | Level::Flat => (
            "the graph agent: you may change the graph's operators, its fusion groups (`fuse %a, %b` lines after the last node) and nothing else; the graph's signature (inputs, parameters with their initialisers, outputs) must stay exactly as it is",
            "one fenced block ```ekir holding the whole new graph",
        ),
        Level::L1 => (
            "the loop agent: you may change the default schedule's knobs (`set NAME = VALUE` lines) and write a schedule trace over the loop program shown (split, reorder, fuse, parallel, vectorize, unroll, compute_inline, cache_read, cache_write, ...); you may not change the graph or write a loop program by hand",
            "one fenced block ```trace holding the `set` lines (if any) and then the trace steps, one per line",
        ),
        Level::L2 => (
            "the backend agent: you may rewrite the source of one kernel of the loop program, keeping its name, parameters and (on a GPU) its launch geometry; the buffers and the plan stay as they are",
            match backend {
                Backend::Cpu => "one fenced block ```c (or ```llvm) whose first line is `// kernel: NAME`, holding the whole kernel",
                Backend::Cuda => "one fenced block ```cuda whose first line is `// kernel: NAME`, holding the whole kernel function",
                Backend::Opencl => "one fenced block ```opencl whose first line is `// kernel: NAME`, holding the whole kernel function",
            },
        ),
    };
    format!(
        "You are {role}. An edit that breaks this contract is refused without being run. Every \
         edit is compiled, checked against the reference on random inputs and timed against the \
         baseline; only correct, faster edits are kept.\n\nAnswer with {answer}, after at most a \
         few sentences saying why the edit should be faster."
    )
}

/// The node as the level sees it, the report, and what was already tried.
fn user_text(level: Level, ctx: &Context<'_>, kernel: &str) -> Result<String, Diagnostic> {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "Task `{}` on the {} backend, target `{}`.\n",
        ctx.task.name,
        ctx.backend.name(),
        ctx.target.name
    );
    match level {
        Level::L0 | Level::Root | Level::Flat => {
            let _ = writeln!(
                s,
                "The graph (compiled with the graph passes `{}`):\n```ekir\n{}```\n",
                ctx.layers.passes, ctx.layers.graph
            );
        }
        Level::L1 => {
            let recipe =
                if ctx.layers.recipe.is_empty() { "(the target's defaults)\n" } else { &ctx.layers.recipe };
            let trace = if ctx.layers.trace.is_empty() { "(none)\n" } else { &ctx.layers.trace };
            if !ctx.layers.rebind.is_empty() {
                let _ = writeln!(
                    s,
                    "Kernels the trace binds itself (they start as their naive loop nests, not the GPU lowering's launch; a new trace must bind them too): {}\n",
                    ctx.layers.rebind.join(", ")
                );
            }
            let _ = writeln!(s, "The knobs now:\n{recipe}\nThe trace now:\n{trace}\nThe loop program they give, which a new trace rewrites:\n```ekir\n{}```\n", ekb_ir::l1::print::print(ctx.module));
        }
        Level::L2 => {
            let source = super::kernel_source(ctx, kernel)?;
            let _ = writeln!(s, "Kernel `{kernel}` now:\n```\n{source}```\n");
        }
    }
    let _ = writeln!(s, "The profiling agent's report:\n{}", ctx.report.render());
    if !ctx.tried.is_empty() {
        let _ = writeln!(s, "Already tried at this level (latest last):");
        for n in ctx.tried.iter().rev().take(8).rev() {
            let outcome = n.outcome.as_ref().map_or_else(|| "not evaluated".into(), |o| o.describe());
            let _ = writeln!(s, "- node {}: {} -> {outcome}", n.id, n.edit.summary());
        }
    }
    Ok(s)
}

/// The edit in an answer, or why there is none usable.
fn read_edit(answer: &str, ctx: &Context<'_>, kernel: &str) -> Result<Edit, String> {
    if let Ok(c) = extract(answer, Mode::Trace) {
        let (mut recipe, mut trace) = (String::new(), String::new());
        for line in c.text.lines() {
            let target = if line.trim_start().starts_with("set ") { &mut recipe } else { &mut trace };
            target.push_str(line);
            target.push('\n');
        }
        return Ok(Edit::Schedule { recipe, rebind: ctx.layers.rebind.clone(), trace });
    }
    if let Ok(c) = extract(answer, Mode::Unified) {
        return match c.kind {
            CandidateKind::L0 => Ok(Edit::Graph { text: c.text, passes: ctx.layers.passes.clone() }),
            _ => Err("the answer is a whole loop program; an agent edits its own layer (a graph, a trace, or one kernel's source)".into()),
        };
    }
    match extract(answer, Mode::Native) {
        Ok(c) => {
            let first = c.text.lines().next().unwrap_or("");
            let named = first
                .trim_start_matches(['/', ';', ' '])
                .strip_prefix("kernel:")
                .map(|n| n.trim().to_string());
            let ext = match ctx.backend {
                Backend::Cpu if c.text.contains("define ") => "ll",
                Backend::Cpu => "c",
                Backend::Cuda => "cu",
                Backend::Opencl => "cl",
            };
            Ok(Edit::Kernel {
                kernel: named.unwrap_or_else(|| kernel.to_string()),
                ext: ext.into(),
                text: c.text,
            })
        }
        Err(e) => Err(format!("nothing usable in the answer: {e}")),
    }
}

/// The answer's prose outside fenced blocks, shortened: the agent's stated rationale.
fn prose(answer: &str) -> String {
    let mut out = String::new();
    let mut fenced = false;
    for line in answer.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if !fenced && !line.trim().is_empty() {
            out.push_str(line.trim());
            out.push(' ');
        }
    }
    out.trim().chars().take(600).collect()
}
