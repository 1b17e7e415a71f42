//! The flat arm: one general coding agent with the whole program in its hands, the baseline the
//! layered agent is compared with at the same budget. It gets the one-shot prompt of `ekb
//! generate` (the task's graph, the target's limits), its best program so far and its last
//! attempts with their outcomes and evidence, and answers with a whole candidate: an L0 graph
//! or L1 module of the unified IR, or the backend's own source. No levels, no contracts, no
//! profiling agent; the same evaluator, tree, budgets and loop (`optimise::drive`).
//!
//! What must stay true: one request per proposal; an answer without a program is a node with
//! `no_candidate`, never an error; a candidate already measured is not run again.

use crate::evaluator::Evaluator;
use crate::optimise::{drive, pending_run, unrun, Goal, Pending, Planner, Progress, Round, Summary};
use crate::tree::{CandidateFile, Cost, EditKind, Level, NewNode, Node, RunSpec, Tree};
use ekb_agent::extract::{extract, CandidateKind};
use ekb_agent::prompt::{build_prompt, Mode};
use ekb_agent::{Message, Provider, Request};
use ekb_eval::results::{FailureClass, Instance};
use ekb_eval::tasks::Backend;
use ekb_ir::Diagnostic;
use std::fmt::Write as _;
use std::sync::Arc;
use std::time::Instant;

/// The model of the flat arm and how it is asked.
pub struct FlatAgent {
    pub provider: Arc<dyn Provider>,
    pub model: String,
    pub temperature: f64,
    pub max_tokens: u32,
}

/// Optimises `inst` with the flat agent: [`crate::optimise::optimise`]'s loop, one agent
/// rewriting the whole program.
pub fn optimise_flat(
    tree: &mut Tree,
    spec: &RunSpec,
    inst: &Goal<'_>,
    agent: &FlatAgent,
    evaluator: &mut dyn Evaluator,
    batch: usize,
    progress: &mut dyn Progress,
) -> Result<Summary, Diagnostic> {
    let mut planner = Flat { agent, inst, calls: 0 };
    drive(tree, spec, inst, &mut planner, evaluator, batch, progress)
}

struct Flat<'a, 'g> {
    agent: &'a FlatAgent,
    inst: &'a Goal<'g>,
    /// Requests made so far: each proposal's seed.
    calls: u64,
}

/// The candidate's own files (not the layers a root carries), as one text.
fn candidate_text(files: &[CandidateFile]) -> String {
    files
        .iter()
        .filter(|f| !f.path.starts_with(crate::layers::LAYERS_DIR))
        .map(|f| format!("// file: {}\n{}", f.path, f.text))
        .collect()
}

/// The evidence shown to the agent, cut to a length a prompt can carry.
fn shorten(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    text.chars().take(max).collect::<String>() + " ..."
}

impl Flat<'_, '_> {
    /// The one-shot prompt, its user message followed by the best program and the attempts.
    fn messages(&self, tree: &Tree, expand: &Node) -> Result<Vec<Message>, Diagnostic> {
        let inst = self.inst;
        let mut messages =
            build_prompt(inst.task, inst.backend, inst.target, Mode::Unified).map_err(|ds| {
                ds.into_iter()
                    .next()
                    .unwrap_or_else(|| Diagnostic::error("the task's prompt cannot be built"))
            })?;
        let mut s = String::new();
        let _ = writeln!(
            s,
            "\nYou may answer with any whole program: an L1 module or an L0 graph of the unified IR (```ekir), \
             or the backend's own source (```{}) computing the graph's outputs from its inputs and parameters.",
            match inst.backend {
                Backend::Cpu => "c",
                Backend::Cuda => "cuda",
                Backend::Opencl => "opencl",
            }
        );
        let _ = writeln!(
            s,
            "\nThe best program so far (node {}, {}):\n```\n{}```",
            expand.id,
            expand.describe_outcome(),
            candidate_text(&tree.files(expand.id)?)
        );
        let attempts: Vec<Node> =
            tree.nodes(&expand.run)?.into_iter().filter(|n| n.parent.is_some()).collect();
        if !attempts.is_empty() {
            let _ = writeln!(s, "\nYour attempts so far (latest last):");
            for n in attempts.iter().rev().take(6).rev() {
                let evidence = n
                    .outcome
                    .as_ref()
                    .and_then(|o| o.failure.as_ref())
                    .map_or_else(String::new, |f| format!(": {}", shorten(&f.evidence, 400)));
                let _ = writeln!(s, "- node {}: {}{evidence}", n.id, n.describe_outcome());
            }
        }
        if let Some(user) = messages.iter_mut().rfind(|m| m.role == ekb_agent::Role::User) {
            user.content.push_str(&s);
        }
        Ok(messages)
    }

    /// The candidate in an answer: its file, or why there is none.
    fn candidate(&self, answer: &str) -> Result<CandidateFile, String> {
        if let Ok(c) = extract(answer, Mode::Unified) {
            if matches!(c.kind, CandidateKind::L0 | CandidateKind::L1) {
                return Ok(CandidateFile::new("candidate.ekir", c.text));
            }
        }
        match extract(answer, Mode::Native) {
            Ok(c) => {
                let ext = match self.inst.backend {
                    Backend::Cpu => "c",
                    Backend::Cuda => "cu",
                    Backend::Opencl => "cl",
                };
                Ok(CandidateFile::new(format!("candidate.{ext}"), c.text))
            }
            Err(e) => Err(format!("nothing usable in the answer: {e}")),
        }
    }
}

impl Planner for Flat<'_, '_> {
    fn round(
        &mut self,
        tree: &Tree,
        _root: &Node,
        expand: &Node,
        want: usize,
        instance: &Instance,
    ) -> Result<Result<Round, String>, Diagnostic> {
        let messages = self.messages(tree, expand)?;
        let measured: Vec<(String, i64)> = tree
            .nodes(&expand.run)?
            .iter()
            .filter(|n| n.outcome.is_some())
            .map(|n| Ok((candidate_text(&tree.files(n.id)?), n.id)))
            .collect::<Result<_, Diagnostic>>()?;
        let mut nodes = Vec::new();
        for _ in 0..want {
            let t0 = Instant::now();
            let req = Request {
                model: self.agent.model.clone(),
                messages: messages.clone(),
                temperature: self.agent.temperature,
                max_tokens: self.agent.max_tokens,
                seed: Some(self.calls),
            };
            self.calls += 1;
            let answer = self.agent.provider.complete(&req);
            let mut cost = Cost { llm_calls: 1, wall_s: t0.elapsed().as_secs_f64(), ..Cost::default() };
            let mut node = NewNode {
                parent: Some(expand.id),
                level: Level::Flat,
                agent: format!("flat-llm:{}", self.agent.model),
                edit_kind: EditKind::Program,
                edit_text: String::new(),
                files: tree.files(expand.id)?,
                rationale: String::new(),
                cost,
            };
            let file = match answer {
                Err(e) => Err(format!("the model gave no answer: {e}")),
                Ok(r) => {
                    cost.tokens_in = r.usage.prompt_tokens;
                    cost.tokens_out = r.usage.completion_tokens;
                    node.cost = cost;
                    node.rationale =
                        r.text.lines().filter(|l| !l.trim().is_empty()).take(3).collect::<Vec<_>>().join(" ");
                    self.candidate(&r.text)
                }
            };
            let pending = match file {
                Err(why) => {
                    node.rationale = why.clone();
                    Pending::Record(Box::new(unrun(
                        instance,
                        FailureClass::NoCandidate,
                        "no program in the answer",
                        why,
                    )))
                }
                Ok(file) => {
                    node.edit_text = file.text.clone();
                    node.files = vec![file];
                    let text = candidate_text(&node.files);
                    let same = measured.iter().find(|(t, _)| *t == text).map(|(_, id)| *id);
                    pending_run(tree, same, &mut node)?
                }
            };
            nodes.push((node, pending));
        }
        Ok(Ok(Round { agent: format!("flat-llm:{}", self.agent.model), nodes }))
    }
}
