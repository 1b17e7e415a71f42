//! The loop: one task instance optimised by the level agents, every attempt in the candidate
//! tree.
//!
//! Each round expands the run's answer so far ([`answer`]: a verified node measured above the
//! start, else the root); with the layered agents ([`optimise`]) the profiling agent
//! reports on it, its findings order the levels (strongest first, then the levels without a
//! finding), and the first level whose agent has something to propose gets a batch of edits.
//! Every edit goes through its level's contract (`agents::contract`), is materialized into a
//! candidate (`layers`), added to the tree in flight, and the batch is evaluated together; an
//! edit refused by the contract, or whose layers do not compile, is recorded as a failed node
//! without being run. A candidate identical to one already measured is recorded with that
//! measurement, not run again. Rollback is the choice of the node to expand: a worse child is
//! never expanded, so the next round starts from the best again. The flat arm (`crate::flat`)
//! plans its rounds its own way inside the same driver ([`drive`]).
//!
//! The run ends when a budget is spent (nodes, LLM calls, tokens, wall seconds, device seconds:
//! the sums over its nodes and confirmations, so a resumed run goes on from what it spent) or
//! when no agent has anything left to propose. Then its answer is confirmed ([`confirm`]):
//! measured again in a batch of its own, timed against the root rather than the baseline, and
//! kept only when that measurement still lies above the start; a rejected answer is never the
//! answer again, and the next one is confirmed in its place while the cost budgets allow (else
//! the root is the answer). So a speedup measured once, under a load that slowed the start's
//! batch, does not become the answer. Its answer is never measured worse than the start.
//!
//! What must stay true: safe to kill at any moment. Nodes and confirmations are added before
//! they are evaluated and a resumed run evaluates those it left in flight (their batch's
//! evaluation resumes where it stopped) before it proposes anything new. Every batch records
//! the machine's load when it started.

use crate::agents::{contract, Context, Edit, LevelAgent, Proposal};
use crate::evaluator::{Batch, Evaluator};
use crate::layers::Layers;
use crate::profile::{profile, Report};
use crate::tree::confirm::load_now;
use crate::tree::{
    BatchKind, Budgets, CandidateFile, Confirmation, Cost, EditKind, Level, NewNode, Node, NodeId, RunSpec,
    RunStatus, State, Tree, Verdict,
};
use ekb_eval::evaluate::instances;
use ekb_eval::results::{
    utc_now, CandidateResult, CandidateText, FailureClass, FailureRecord, Instance, Phases,
};
use ekb_eval::tasks::{Backend, Task};
use ekb_ir::{Diagnostic, TargetProfile};
use std::collections::BTreeMap;

/// Hears what the loop does.
pub trait Progress {
    /// A node was evaluated (or recorded as failed).
    fn node(&mut self, node: &Node);
    /// Something worth a line.
    fn note(&mut self, line: &str);
}

/// How a run ended.
#[derive(Debug, Clone)]
pub struct Summary {
    pub root: Node,
    /// The answer: a verified node measured above the start and confirmed, else the root.
    pub best: Node,
    /// The run's confirmations, oldest first: of the answer, and of those rejected before it.
    pub confirmations: Vec<Confirmation>,
    pub nodes: usize,
    pub status: RunStatus,
    /// Why it stopped.
    pub why: String,
}

/// What one instance is optimised with.
pub struct Goal<'a> {
    pub task: &'a Task,
    pub backend: Backend,
    pub target: &'a TargetProfile,
}

/// What the run's nodes have spent, summed.
#[derive(Debug, Default, Clone, Copy)]
struct Spent {
    nodes: u32,
    cost: Cost,
}

/// What run `run` spent: its nodes, and the evaluations of its confirmations.
fn spent(tree: &Tree, run: &str) -> Result<Spent, Diagnostic> {
    let nodes = tree.nodes(run)?;
    let mut s = Spent { nodes: nodes.len() as u32, ..Spent::default() };
    for n in &nodes {
        s.cost.tokens_in += n.cost.tokens_in;
        s.cost.tokens_out += n.cost.tokens_out;
        s.cost.llm_calls += n.cost.llm_calls;
        s.cost.wall_s += n.cost.wall_s;
        s.cost.device_s += n.cost.device_s;
    }
    for c in tree.confirmations(run)? {
        s.cost.wall_s += c.wall_s;
        s.cost.device_s += c.device_s;
    }
    Ok(s)
}

/// The first budget `s` has reached, said; and how many more nodes the node budget allows.
fn budget_left(b: &Budgets, s: &Spent) -> (Option<String>, Option<u32>) {
    let tokens = s.cost.tokens_in + s.cost.tokens_out;
    let over = [
        b.nodes.filter(|&n| s.nodes >= n).map(|n| format!("{n} nodes")),
        b.llm_calls.filter(|&n| s.cost.llm_calls >= n).map(|n| format!("{n} LLM calls")),
        b.tokens.filter(|&n| tokens >= n).map(|n| format!("{n} tokens")),
        b.wall_s.filter(|&n| s.cost.wall_s >= n).map(|n| format!("{n} wall seconds")),
        b.device_s.filter(|&n| s.cost.device_s >= n).map(|n| format!("{n} device seconds")),
    ]
    .into_iter()
    .flatten()
    .next();
    (over.map(|o| format!("the budget of {o} is spent")), b.nodes.map(|n| n.saturating_sub(s.nodes)))
}

/// A result for a candidate that was never run: its edit was refused or did not compile.
pub(crate) fn unrun(
    instance: &Instance,
    class: FailureClass,
    detail: &str,
    evidence: String,
) -> CandidateResult {
    CandidateResult {
        instance: instance.clone(),
        sample: 0,
        candidate: CandidateText { origin: "agent".into(), kind: "none".into(), sha256: None, text: None },
        compiled: false,
        correct: false,
        failure: Some(FailureRecord { class, detail: detail.into(), evidence }),
        timing: None,
        baseline_failure: None,
        memory: None,
        passes: None,
        seconds: Phases::default(),
        finished: utc_now(),
        device: None,
        median_ns: None,
    }
}

/// What identifies a program: the loop program its layers compile to and its kernel sources
/// (two nodes whose layers differ but give the same program are one candidate).
fn program_key(layers: &Layers, module: &ekb_ir::l1::Module) -> String {
    let mut key = ekb_ir::l1::print::print(module);
    for (name, k) in &layers.kernels {
        key.push_str(&format!("# kernel: {name}.{}\n{}", k.lang.extension(), k.text));
    }
    key
}

/// The tree's edit kind of a level.
fn edit_kind(level: Level) -> EditKind {
    match level {
        Level::Root => EditKind::None,
        Level::L0 => EditKind::Graph,
        Level::L1 => EditKind::Trace,
        Level::L2 => EditKind::Kernel,
        Level::Flat => EditKind::Program,
    }
}

/// A node to add, before its outcome: what to do with it once it is in the tree.
pub(crate) enum Pending {
    /// Evaluate this candidate.
    Run(Vec<CandidateFile>),
    /// Record this result (refused, not compiled, or a copy of an identical node's).
    Record(Box<CandidateResult>),
}

/// What to do with `node`'s candidate: run it, or, when node `same` has the same candidate and
/// was measured, record that measurement again (no seconds spent) and say so in the rationale.
pub(crate) fn pending_run(
    tree: &Tree,
    same: Option<NodeId>,
    node: &mut NewNode,
) -> Result<Pending, Diagnostic> {
    if let Some(same) = same {
        if let Some(mut r) = tree.result(same)? {
            r.seconds = Phases::default();
            node.rationale
                .push_str(&format!(" [the same candidate as node {same}: its measurement is reused]"));
            return Ok(Pending::Record(Box::new(r)));
        }
    }
    Ok(Pending::Run(node.files.clone()))
}

/// One round's nodes: who proposed them, and each node to add with what to do with it.
pub(crate) struct Round {
    pub agent: String,
    pub nodes: Vec<(NewNode, Pending)>,
}

/// How a run proposes its rounds: the layered agents ([`optimise`]) or one agent with the
/// whole program (`crate::flat`).
pub(crate) trait Planner {
    /// At most `want` nodes editing `expand`, or why there is nothing left to propose.
    fn round(
        &mut self,
        tree: &Tree,
        root: &Node,
        expand: &Node,
        want: usize,
        instance: &Instance,
    ) -> Result<Result<Round, String>, Diagnostic>;
}

/// Optimises `inst` in `tree` under the run `spec` (begun, or resumed when it exists), with
/// `agents` proposing `batch` edits per round and `evaluator` measuring them.
pub fn optimise(
    tree: &mut Tree,
    spec: &RunSpec,
    inst: &Goal<'_>,
    agents: &mut [Box<dyn LevelAgent>],
    evaluator: &mut dyn Evaluator,
    batch: usize,
    progress: &mut dyn Progress,
) -> Result<Summary, Diagnostic> {
    let mut planner = Layered { agents, inst, known: BTreeMap::new(), keyed: Vec::new() };
    drive(tree, spec, inst, &mut planner, evaluator, batch, progress)
}

/// The loop around a planner: the run begun or resumed, the nodes left in flight evaluated,
/// the root added, then rounds until a budget is spent or the planner has nothing left.
pub(crate) fn drive(
    tree: &mut Tree,
    spec: &RunSpec,
    inst: &Goal<'_>,
    planner: &mut dyn Planner,
    evaluator: &mut dyn Evaluator,
    batch: usize,
    progress: &mut dyn Progress,
) -> Result<Summary, Diagnostic> {
    let instance = instances(&[inst.task], &[inst.backend]).into_iter().next().ok_or_else(|| {
        Diagnostic::error(format!("task `{}` has no {} instance", inst.task.name, inst.backend.name()))
    })?;
    let run = &spec.id;
    let baseline = evaluator.baseline();
    match tree.run(run) {
        Ok(existing) => {
            if existing.spec.task != spec.task || existing.spec.backend != spec.backend {
                return Err(Diagnostic::error(format!(
                    "run `{run}` in `{}` optimises {} on {}, not {} on {}",
                    tree.path().display(),
                    existing.spec.task,
                    existing.spec.backend,
                    spec.task,
                    spec.backend
                )));
            }
            tree.set_run_status(run, RunStatus::Running)?;
            progress.note(&format!("{run}: resumed with {} node(s)", tree.nodes(run)?.len()));
        }
        Err(_) => {
            tree.begin_run(spec)?;
        }
    }
    // Nodes a killed run left in flight: their batch is evaluated (resumed) first.
    let in_flight = tree.in_flight(run)?;
    if !in_flight.is_empty() {
        let files: Vec<Vec<CandidateFile>> =
            in_flight.iter().map(|n| tree.files(n.id)).collect::<Result<_, _>>()?;
        let ids: Vec<NodeId> = in_flight.iter().map(|n| n.id).collect();
        evaluate_batch(tree, inst.task, &instance, &baseline, &ids, files, evaluator, progress)?;
    }
    for c in tree.confirmations(run)?.into_iter().filter(|c| c.state == State::InFlight) {
        evaluate_confirmation(tree, inst.task, &instance, &c, evaluator, progress)?;
    }
    if tree.root(run)?.is_none() {
        let layers = Layers::of_task(inst.task);
        let m = layers.materialize(inst.backend, inst.target).map_err(|ds| {
            ds.into_iter().next().unwrap_or_else(|| Diagnostic::error("the task's graph does not lower"))
        })?;
        let root = NewNode {
            parent: None,
            level: Level::Root,
            agent: "start".into(),
            edit_kind: EditKind::None,
            edit_text: String::new(),
            files: m.files.clone(),
            rationale: "the task's graph with the default schedule".into(),
            cost: Cost::default(),
        };
        let id = tree.insert_node(run, &root)?;
        evaluate_batch(tree, inst.task, &instance, &baseline, &[id], vec![m.files], evaluator, progress)?;
    }
    let root = tree.root(run)?.expect("the root was added above");
    let (status, why) = loop {
        let (over, nodes_left) = budget_left(&spec.budgets, &spent(tree, run)?);
        if let Some(why) = over {
            break (RunStatus::Finished, why);
        }
        let expand = tree.answer(run)?.unwrap_or_else(|| root.clone());
        let want = nodes_left.map_or(batch, |n| (n as usize).min(batch)).max(1);
        let round = match planner.round(tree, &root, &expand, want, &instance)? {
            Ok(round) => round,
            Err(why) => break (RunStatus::Finished, why),
        };
        progress.note(&format!(
            "{run}: expanding node {} ({}); {} proposal(s) from {}",
            expand.id,
            expand.describe_outcome(),
            round.nodes.len(),
            round.agent
        ));
        let mut ids = Vec::new();
        let mut to_run = Vec::new();
        for (node, pending) in round.nodes {
            let id = tree.insert_node(run, &node)?;
            match pending {
                Pending::Run(f) => {
                    ids.push(id);
                    to_run.push(f);
                }
                Pending::Record(r) => {
                    tree.record_outcome(id, &baseline, &r)?;
                    progress.node(&tree.node(id)?);
                }
            }
        }
        if !ids.is_empty() {
            evaluate_batch(tree, inst.task, &instance, &baseline, &ids, to_run, evaluator, progress)?;
        }
    };
    let best = confirm(tree, spec, inst.task, &instance, &root, evaluator, progress)?;
    tree.set_run_status(run, status)?;
    let confirmations = tree.confirmations(run)?;
    Ok(Summary { root, best, confirmations, nodes: tree.nodes(run)?.len(), status, why })
}

/// How many answers the end of a run measures again at most: its answer, then, after a
/// rejection, the next ones.
const MAX_CONFIRMATIONS: usize = 3;

/// The run's final answer, confirmed: [`answer`] measured again in a batch of its own against
/// the root, kept when the confirmation's verdict is `confirmed` (`tree::confirm::verdict`: a
/// correct measurement whose interval over the start has a lower bound of at least 1.0), else
/// rejected, and then
/// the next answer confirmed, while the run's wall and device seconds budgets are not spent (the
/// node budget does not count: a confirmation is no node) and at most [`MAX_CONFIRMATIONS`] in
/// all; the first is measured even when they are spent. An answer confirmed before (a resumed
/// run) is kept without measuring it again. The root needs no confirmation.
fn confirm(
    tree: &mut Tree,
    spec: &RunSpec,
    task: &Task,
    instance: &Instance,
    root: &Node,
    evaluator: &mut dyn Evaluator,
    progress: &mut dyn Progress,
) -> Result<Node, Diagnostic> {
    let run = &spec.id;
    let cost_budgets = Budgets { nodes: None, ..spec.budgets };
    let mut measured = 0;
    loop {
        let ans = tree.answer(run)?.unwrap_or_else(|| root.clone());
        if ans.id == root.id {
            return Ok(ans);
        }
        let done = tree.confirmations(run)?;
        if done.iter().any(|c| c.node == ans.id && c.verdict == Some(Verdict::Confirmed)) {
            return Ok(ans);
        }
        let over = budget_left(&cost_budgets, &spent(tree, run)?).0;
        let stop = match over {
            Some(why) if measured > 0 => Some(why),
            _ if measured >= MAX_CONFIRMATIONS => {
                Some(format!("{MAX_CONFIRMATIONS} confirmations were measured"))
            }
            _ => None,
        };
        if let Some(why) = stop {
            progress.note(&format!(
                "{run}: node {} is left unconfirmed ({why}); the answer is the start",
                ans.id
            ));
            return Ok(root.clone());
        }
        progress.note(&format!(
            "{run}: confirming node {} ({}) against the start, node {}",
            ans.id,
            ans.describe_outcome(),
            root.id
        ));
        let id =
            tree.insert_confirmation(run, ans.id, root.id, &format!("confirm-n{}", ans.id), &load_now())?;
        let c = tree.confirmation(id)?;
        evaluate_confirmation(tree, task, instance, &c, evaluator, progress)?;
        measured += 1;
    }
}

/// Evaluates the in-flight confirmation `c`: its node's candidate timed against its `against`
/// node's, in its own batch; records the verdict.
fn evaluate_confirmation(
    tree: &mut Tree,
    task: &Task,
    instance: &Instance,
    c: &Confirmation,
    evaluator: &mut dyn Evaluator,
    progress: &mut dyn Progress,
) -> Result<(), Diagnostic> {
    tree.begin_batch(&c.run, &c.batch, BatchKind::Confirm, &load_now(), &[])?;
    let batch = Batch {
        name: c.batch.clone(),
        task,
        instance: instance.clone(),
        candidates: vec![tree.files(c.node)?],
        against: Some(tree.files(c.against)?),
    };
    let result = evaluator.evaluate(&batch)?.into_iter().next().ok_or_else(|| {
        Diagnostic::error(format!("batch `{}`: the confirmation of node {} has no result", c.batch, c.node))
    })?;
    tree.record_confirmation(c.id, &result)?;
    progress.note(&format!("{}: node {} {}", c.run, c.node, tree.confirmation(c.id)?.describe()));
    Ok(())
}

/// The layered agents as a planner: the profiling agent's report on the node routes the round
/// to a level; each proposal goes through its contract and is materialized.
struct Layered<'a, 'g> {
    agents: &'a mut [Box<dyn LevelAgent>],
    inst: &'a Goal<'g>,
    /// The program of every evaluated node, and which nodes are in it.
    known: BTreeMap<String, NodeId>,
    keyed: Vec<NodeId>,
}

impl Planner for Layered<'_, '_> {
    fn round(
        &mut self,
        tree: &Tree,
        root: &Node,
        expand: &Node,
        want: usize,
        instance: &Instance,
    ) -> Result<Result<Round, String>, Diagnostic> {
        let inst = self.inst;
        let files = tree.files(expand.id)?;
        let layers = Layers::from_files(&files, &inst.task.source.text);
        let module = layers.lower(inst.backend, inst.target).map_err(|ds| {
            ds.into_iter().next().unwrap_or_else(|| Diagnostic::error("the node's layers do not lower"))
        })?;
        let result = tree.result(expand.id)?;
        let report = profile(&module, result.as_ref(), inst.target, inst.backend != Backend::Cpu);
        let Some((level, agent, proposals)) =
            ask(self.agents, &report, inst, expand, &layers, &module, tree, root.id, want)?
        else {
            return Ok(Err(format!("no agent has anything left to propose from node {}", expand.id)));
        };
        for n in tree.nodes(&expand.run)? {
            if n.outcome.is_none() || self.keyed.contains(&n.id) {
                continue;
            }
            self.keyed.push(n.id);
            let l = Layers::from_files(&tree.files(n.id)?, &inst.task.source.text);
            if let Ok(m) = l.lower(inst.backend, inst.target) {
                self.known.entry(program_key(&l, &m)).or_insert(n.id);
            }
        }
        let mut nodes = Vec::new();
        for p in proposals {
            let ctx = (expand, &layers, &module, files.as_slice());
            nodes.push(prepare(p, level, &agent, ctx, inst, instance, &self.known, tree)?);
        }
        Ok(Ok(Round { agent, nodes }))
    }
}

/// The proposals of the first level, in the report's order, whose agent has any.
#[allow(clippy::too_many_arguments)]
fn ask(
    agents: &mut [Box<dyn LevelAgent>],
    report: &Report,
    inst: &Goal<'_>,
    node: &Node,
    layers: &Layers,
    module: &ekb_ir::l1::Module,
    tree: &Tree,
    root: NodeId,
    want: usize,
) -> Result<Option<(Level, String, Vec<Proposal>)>, Diagnostic> {
    let mut order = report.levels();
    for l in [Level::L1, Level::L0, Level::L2] {
        if !order.contains(&l) {
            order.push(l);
        }
    }
    for level in order {
        let Some(agent) = agents.iter_mut().find(|a| a.level() == level) else { continue };
        let tried = tree.attempts(root, level)?;
        let ctx = Context {
            task: inst.task,
            backend: inst.backend,
            target: inst.target,
            node,
            layers,
            module,
            report,
            tried: &tried,
            want,
        };
        let proposals = agent.propose(&ctx)?;
        if !proposals.is_empty() {
            return Ok(Some((level, agent.name(), proposals)));
        }
    }
    Ok(None)
}

/// A proposal as a node to add, and what to do with it: its contract checked, its layers
/// materialized, a candidate already measured recognised. `parent` is the node it edits, its
/// layers, program and files.
#[allow(clippy::too_many_arguments)]
fn prepare(
    p: Proposal,
    level: Level,
    agent: &str,
    (parent, layers, module, parent_files): (&Node, &Layers, &ekb_ir::l1::Module, &[CandidateFile]),
    inst: &Goal<'_>,
    instance: &Instance,
    known: &BTreeMap<String, NodeId>,
    tree: &Tree,
) -> Result<(NewNode, Pending), Diagnostic> {
    let mut node = NewNode {
        parent: Some(parent.id),
        level,
        agent: agent.into(),
        edit_kind: edit_kind(level),
        edit_text: p.edit.as_ref().map_or_else(String::new, Edit::text),
        files: parent_files.to_vec(),
        rationale: p.rationale,
        cost: p.cost,
    };
    let Some(edit) = p.edit else {
        let r = unrun(
            instance,
            FailureClass::NoCandidate,
            "no edit in the agent's answer",
            node.rationale.clone(),
        );
        return Ok((node, Pending::Record(Box::new(r))));
    };
    let (next, notes) =
        match contract::apply(level, layers, module, &edit, inst.task, inst.backend, inst.target) {
            Ok(x) => x,
            Err(v) => {
                let r = unrun(instance, FailureClass::SyntaxApi, "contract: refused", v.0);
                return Ok((node, Pending::Record(Box::new(r))));
            }
        };
    if !notes.is_empty() {
        node.rationale.push_str(&format!(" [carried forward: {}]", notes.join("; ")));
    }
    match next.materialize(inst.backend, inst.target) {
        Err(ds) => {
            node.files = next.layer_files();
            let evidence = ds.iter().map(|d| d.to_string()).collect::<Vec<_>>().join("\n");
            let r =
                unrun(instance, FailureClass::SyntaxApi, "syntax/API: the layers do not compile", evidence);
            Ok((node, Pending::Record(Box::new(r))))
        }
        Ok(m) => {
            node.files = m.files;
            let same = known.get(&program_key(&next, &m.module)).copied();
            let pending = pending_run(tree, same, &mut node)?;
            Ok((node, pending))
        }
    }
}

/// Evaluates the in-flight nodes `ids` (candidates `files`) as one batch and records each.
#[allow(clippy::too_many_arguments)]
fn evaluate_batch(
    tree: &mut Tree,
    task: &Task,
    instance: &Instance,
    baseline: &str,
    ids: &[NodeId],
    files: Vec<Vec<CandidateFile>>,
    evaluator: &mut dyn Evaluator,
    progress: &mut dyn Progress,
) -> Result<(), Diagnostic> {
    let name = match ids {
        [one] => format!("n{one}"),
        _ => format!("n{}-{}", ids[0], ids[ids.len() - 1]),
    };
    tree.begin_batch(&tree.node(ids[0])?.run, &name, BatchKind::Search, &load_now(), ids)?;
    let batch = Batch { name, task, instance: instance.clone(), candidates: files, against: None };
    let results = evaluator.evaluate(&batch)?;
    for (&id, r) in ids.iter().zip(&results) {
        tree.record_outcome(id, baseline, r)?;
        progress.node(&tree.node(id)?);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agents::offline_l1::OfflineL1;
    use crate::tree::Budgets;
    use serde_json::json;

    /// A result of `instance`: correct, timed with this speedup and an interval of +-5%, stable.
    fn timed(instance: &Instance, sample: usize, speedup: f64) -> CandidateResult {
        let side = json!({"median_ns": 1000.0, "min_ns": 900.0, "cv": 0.01, "steps": []});
        serde_json::from_value(json!({
            "instance": instance,
            "sample": sample,
            "candidate": {"origin": "test", "kind": "l1", "sha256": null, "text": null},
            "compiled": true,
            "correct": true,
            "failure": null,
            "timing": {"speedup": speedup, "ci_low": speedup * 0.95, "ci_high": speedup * 1.05,
                "confidence": 0.95, "rse": 0.01, "stable": true, "attempts": 1, "stop": "target_reached",
                "clock": "monotonic", "cold_cache": false, "threads": 1, "baseline": side, "candidate": side,
                "pairs": [[1000, 500]]},
            "baseline_failure": null,
            "memory": null,
            "seconds": {"build": 0.5, "run": 2.0},
            "finished": "2026-01-01T00:00:00Z"
        }))
        .unwrap()
    }

    /// Measures the root at 1.0x and every edit at 2.0x; a confirmation gets the next of
    /// `confirms` (the device is gone when there is none left).
    struct Scripted {
        confirms: Vec<f64>,
        /// Each batch: its name and whether it was timed against a program of the run.
        batches: Vec<(String, bool)>,
    }

    impl Evaluator for Scripted {
        fn evaluate(&mut self, batch: &Batch<'_>) -> Result<Vec<CandidateResult>, Diagnostic> {
            self.batches.push((batch.name.clone(), batch.against.is_some()));
            if batch.against.is_some() {
                if self.confirms.is_empty() {
                    return Err(Diagnostic::error("the device is gone"));
                }
                return Ok(vec![timed(&batch.instance, 0, self.confirms.remove(0))]);
            }
            let speedup = if batch.name == "n1" { 1.0 } else { 2.0 };
            Ok((0..batch.candidates.len()).map(|i| timed(&batch.instance, i, speedup)).collect())
        }

        fn baseline(&self) -> String {
            "naive".into()
        }
    }

    struct Quiet;

    impl Progress for Quiet {
        fn node(&mut self, _node: &Node) {}
        fn note(&mut self, _line: &str) {}
    }

    fn task() -> Task {
        let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../tasks/level1/gemv_mobilenetv2_classifier.ekir");
        ekb_eval::tasks::load_task(&file).expect("the task loads")
    }

    fn spec(nodes: u32) -> RunSpec {
        RunSpec {
            id: "r".into(),
            task: "gemv_mobilenetv2_classifier".into(),
            backend: "cpu".into(),
            target: "host".into(),
            baseline: "naive".into(),
            budgets: Budgets { nodes: Some(nodes), ..Budgets::default() },
        }
    }

    fn run(tree: &mut Tree, nodes: u32, ev: &mut Scripted) -> Result<Summary, Diagnostic> {
        let t = task();
        let host = TargetProfile::load("host").unwrap();
        let goal = Goal { task: &t, backend: Backend::Cpu, target: &host };
        let mut agents: Vec<Box<dyn LevelAgent>> = vec![Box::new(OfflineL1)];
        optimise(tree, &spec(nodes), &goal, &mut agents, ev, 2, &mut Quiet)
    }

    #[test]
    fn an_answer_measured_below_the_start_at_its_confirmation_falls_back_to_the_root() {
        let tmp = tempfile::tempdir().unwrap();
        let mut tree = Tree::open(&tmp.path().join("tree.sqlite")).unwrap();
        // Both edits measure 2.0x in the search; each confirmation measures 0.4x.
        let mut ev = Scripted { confirms: vec![0.4, 0.4], batches: Vec::new() };
        let s = run(&mut tree, 3, &mut ev).unwrap();
        assert_eq!(s.best.id, s.root.id, "{:?}", s.confirmations);
        // The answer (the earlier of the two 2.0x edits), then the next one, each rejected.
        let confirmed: Vec<(NodeId, Option<Verdict>)> =
            s.confirmations.iter().map(|c| (c.node, c.verdict)).collect();
        assert_eq!(confirmed, [(2, Some(Verdict::Rejected)), (3, Some(Verdict::Rejected))]);
        assert!(s.confirmations.iter().all(|c| c.against == s.root.id && c.speedup == Some(0.4)));
        assert_eq!(
            ev.batches,
            [
                ("n1".into(), false),
                ("n2-3".into(), false),
                ("confirm-n2".into(), true),
                ("confirm-n3".into(), true)
            ]
        );
        // Each batch is recorded with the load it started under; the confirmations count as
        // device seconds (2 s each, as the root's and the edits' evaluations).
        let batches = tree.batches("r").unwrap();
        let kinds: Vec<BatchKind> = batches.iter().map(|b| b.kind).collect();
        assert_eq!(kinds, [BatchKind::Search, BatchKind::Search, BatchKind::Confirm, BatchKind::Confirm]);
        assert!(batches.iter().all(|b| !b.load.is_empty()));
        assert_eq!(tree.node(2).unwrap().batch.as_deref(), Some("n2-3"));
        let device: f64 = spent(&tree, "r").unwrap().cost.device_s;
        assert!((device - 5.0 * 2.0).abs() < 1e-9, "{device}");
    }

    #[test]
    fn a_confirmation_needs_an_interval_above_the_start_not_a_narrow_one() {
        let inst = instances(&[&task()], &[Backend::Cpu]).remove(0);
        assert_eq!(crate::tree::confirm::verdict(&timed(&inst, 0, 1.1)), Verdict::Confirmed);
        // [0.95, 1.05]: maybe slower than the start.
        assert_eq!(crate::tree::confirm::verdict(&timed(&inst, 0, 1.0)), Verdict::Rejected);
        // Wide but above 1.0: still faster.
        let mut wide = timed(&inst, 0, 3.0);
        wide.timing.as_mut().unwrap().stable = false;
        wide.failure = Some(FailureRecord {
            class: FailureClass::UnstableTiming,
            detail: "unstable".into(),
            evidence: String::new(),
        });
        assert_eq!(crate::tree::confirm::verdict(&wide), Verdict::Confirmed);
        let mut wrong = timed(&inst, 0, 3.0);
        wrong.correct = false;
        assert_eq!(crate::tree::confirm::verdict(&wrong), Verdict::Rejected);
        let mut no_start = timed(&inst, 0, 3.0);
        no_start.baseline_failure = Some("the baseline candidate failed".into());
        assert_eq!(crate::tree::confirm::verdict(&no_start), Verdict::Rejected);
    }

    #[test]
    fn a_confirmed_answer_is_kept_and_one_left_in_flight_is_finished_on_resume() {
        let tmp = tempfile::tempdir().unwrap();
        let mut tree = Tree::open(&tmp.path().join("tree.sqlite")).unwrap();
        // The device goes away during the confirmation: the run stops with it in flight.
        let mut gone = Scripted { confirms: Vec::new(), batches: Vec::new() };
        assert!(run(&mut tree, 2, &mut gone).is_err());
        let left = tree.confirmations("r").unwrap();
        assert_eq!(left.len(), 1);
        assert_eq!((left[0].node, left[0].state), (2, State::InFlight));
        // Resumed: the confirmation is finished first (1.6x over the start),
        // and the answer kept without measuring it again.
        let mut back = Scripted { confirms: vec![1.6], batches: Vec::new() };
        let s = run(&mut tree, 2, &mut back).unwrap();
        assert_eq!(back.batches, [("confirm-n2".into(), true)]);
        assert_eq!(s.best.id, 2);
        assert_eq!(s.confirmations.len(), 1);
        assert_eq!(s.confirmations[0].verdict, Some(Verdict::Confirmed));
        assert_eq!(s.confirmations[0].describe(), "confirmed: 1.60x [1.52, 1.68] over node 1");
    }
}
