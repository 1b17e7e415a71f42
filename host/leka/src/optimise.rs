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
//! the sums over its nodes, so a resumed run goes on from what it spent) or when no agent has
//! anything left to propose. Its answer is never measured worse than the start.
//!
//! What must stay true: safe to kill at any moment. Nodes are added before they are evaluated
//! and a resumed run evaluates those it left in flight (their batch's evaluation resumes where
//! it stopped) before it proposes anything new.

use crate::agents::{contract, Context, Edit, LevelAgent, Proposal};
use crate::evaluator::{Batch, Evaluator};
use crate::layers::Layers;
use crate::profile::{profile, Report};
use crate::tree::{
    Budgets, CandidateFile, Cost, EditKind, Level, NewNode, Node, NodeId, RunSpec, RunStatus, Tree,
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
    /// The best verified node, else the root.
    pub best: Node,
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

fn spent(nodes: &[Node]) -> Spent {
    let mut s = Spent { nodes: nodes.len() as u32, ..Spent::default() };
    for n in nodes {
        s.cost.tokens_in += n.cost.tokens_in;
        s.cost.tokens_out += n.cost.tokens_out;
        s.cost.llm_calls += n.cost.llm_calls;
        s.cost.wall_s += n.cost.wall_s;
        s.cost.device_s += n.cost.device_s;
    }
    s
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

/// The run's answer so far, and the node the next round expands: the verified node with the
/// highest speedup among those whose interval lies above the start (its lower bound at least
/// the root's measured speedup, verified or not; 1.0 when the root has none), else the root.
/// So a verified edit measured slower than an unstable start, or within the noise of the
/// start, is never the answer.
fn answer(tree: &Tree, run: &str, root: &Node) -> Result<Node, Diagnostic> {
    let start = root.outcome.as_ref().and_then(|o| o.speedup).unwrap_or(1.0);
    let above =
        |n: &&Node| n.outcome.as_ref().is_some_and(|o| o.verified && o.ci_low.is_some_and(|lo| lo >= start));
    let best =
        tree.nodes(run)?.into_iter().filter(|n| n.id != root.id).filter(|n| above(&n)).max_by(|a, b| {
            let s = |n: &Node| n.verified_speedup().unwrap_or(0.0);
            s(a).total_cmp(&s(b)).then(b.id.cmp(&a.id))
        });
    Ok(best.unwrap_or_else(|| root.clone()))
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
        let (over, nodes_left) = budget_left(&spec.budgets, &spent(&tree.nodes(run)?));
        if let Some(why) = over {
            break (RunStatus::Finished, why);
        }
        let expand = answer(tree, run, &root)?;
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
    tree.set_run_status(run, status)?;
    let best = answer(tree, run, &root)?;
    Ok(Summary { root, best, nodes: tree.nodes(run)?.len(), status, why })
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
    let batch = Batch { name, task, instance: instance.clone(), candidates: files };
    let results = evaluator.evaluate(&batch)?;
    for (&id, r) in ids.iter().zip(&results) {
        tree.record_outcome(id, baseline, r)?;
        progress.node(&tree.node(id)?);
    }
    Ok(())
}
