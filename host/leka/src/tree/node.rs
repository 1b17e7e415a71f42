//! The records of the candidate tree as the library hands them out: a run ([`RunSpec`],
//! [`RunRecord`]), a node to add ([`NewNode`]) and a stored node ([`Node`]) with its edit, its
//! cost and, once evaluated, its [`Outcome`].
//!
//! What must stay true: every enum's `name` is the text stored in the database and printed by
//! `ekb tree`, and `parse` reads exactly those names back.

use ekb_eval::results::FailureClass;
use serde::{Deserialize, Serialize};

/// A node's id: unique in its database, increasing in the order nodes were added.
pub type NodeId = i64;

/// The IR level whose agent made a node's edit; `root` is the starting program.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Level {
    Root,
    /// The graph: fusion groups, layouts, graph passes.
    L0,
    /// The loop program: schedule traces.
    L1,
    /// Backend kernel source.
    L2,
    /// The whole program, by an agent without levels (the flat arm).
    Flat,
}

impl Level {
    pub const ALL: [Level; 5] = [Level::Root, Level::L0, Level::L1, Level::L2, Level::Flat];

    pub fn name(self) -> &'static str {
        match self {
            Level::Root => "root",
            Level::L0 => "l0",
            Level::L1 => "l1",
            Level::L2 => "l2",
            Level::Flat => "flat",
        }
    }

    pub fn parse(text: &str) -> Option<Level> {
        Level::ALL.into_iter().find(|l| l.name() == text)
    }
}

/// What a node's edit is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EditKind {
    /// No edit: the root.
    None,
    /// L0 graph text.
    Graph,
    /// A schedule trace (`docs/schedules.md`).
    Trace,
    /// Backend kernel source.
    Kernel,
    /// A whole candidate (the flat arm's).
    Program,
}

impl EditKind {
    pub const ALL: [EditKind; 5] =
        [EditKind::None, EditKind::Graph, EditKind::Trace, EditKind::Kernel, EditKind::Program];

    pub fn name(self) -> &'static str {
        match self {
            EditKind::None => "none",
            EditKind::Graph => "graph",
            EditKind::Trace => "trace",
            EditKind::Kernel => "kernel",
            EditKind::Program => "program",
        }
    }

    pub fn parse(text: &str) -> Option<EditKind> {
        EditKind::ALL.into_iter().find(|k| k.name() == text)
    }
}

/// Where a node is in its life: added and being evaluated, or evaluated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum State {
    InFlight,
    Evaluated,
}

impl State {
    pub fn name(self) -> &'static str {
        match self {
            State::InFlight => "in_flight",
            State::Evaluated => "evaluated",
        }
    }

    pub fn parse(text: &str) -> Option<State> {
        [State::InFlight, State::Evaluated].into_iter().find(|s| s.name() == text)
    }
}

/// Where a run is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    Running,
    /// Its budget is spent or it converged.
    Finished,
    /// Stopped before that (by hand, or by an error).
    Stopped,
}

impl RunStatus {
    pub fn name(self) -> &'static str {
        match self {
            RunStatus::Running => "running",
            RunStatus::Finished => "finished",
            RunStatus::Stopped => "stopped",
        }
    }

    pub fn parse(text: &str) -> Option<RunStatus> {
        [RunStatus::Running, RunStatus::Finished, RunStatus::Stopped].into_iter().find(|s| s.name() == text)
    }
}

/// One file of a candidate folder sample, relative to the sample folder: `candidate.ekir`,
/// `candidate.trace`, `candidate.l2/kernels/k0_add.ll`, ...
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct CandidateFile {
    pub path: String,
    pub text: String,
}

impl CandidateFile {
    pub fn new(path: impl Into<String>, text: impl Into<String>) -> CandidateFile {
        CandidateFile { path: path.into(), text: text.into() }
    }
}

/// What a node cost to make (and, once evaluated, to measure).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Cost {
    pub tokens_in: u64,
    pub tokens_out: u64,
    pub llm_calls: u32,
    /// Wall-clock seconds: the agent's, plus the evaluation's (build and run) once recorded.
    pub wall_s: f64,
    /// Seconds on the device: the agent's (a profiling run), plus the evaluation's run.
    pub device_s: f64,
}

/// The limits a run works within; `None` is no limit.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Budgets {
    pub nodes: Option<u32>,
    pub llm_calls: Option<u32>,
    pub tokens: Option<u64>,
    pub wall_s: Option<f64>,
    pub device_s: Option<f64>,
}

/// A run as it is begun: one task instance optimised against one baseline on one target.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunSpec {
    /// Unique in the database.
    pub id: String,
    pub task: String,
    /// `cpu`, `cuda` or `opencl`: the candidate folder's `BACKEND`.
    pub backend: String,
    /// The target profile's name.
    pub target: String,
    /// What candidates are timed against (`naive`, `default`, ...).
    pub baseline: String,
    pub budgets: Budgets,
}

/// A stored run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    #[serde(flatten)]
    pub spec: RunSpec,
    pub status: RunStatus,
    /// `YYYY-MM-DDTHH:MM:SSZ`.
    pub created_at: String,
    pub updated_at: String,
}

/// A node to add: an edit of `parent`'s candidate by one level's agent (or the root).
#[derive(Debug, Clone, PartialEq)]
pub struct NewNode {
    /// `None` for the root (then `level` is [`Level::Root`] and `edit_kind` [`EditKind::None`]).
    pub parent: Option<NodeId>,
    pub level: Level,
    /// Who made it: `l1-offline`, `l1-llm:MODEL`, `profiler`, `start`, ...
    pub agent: String,
    pub edit_kind: EditKind,
    /// The edit as the agent wrote it (a trace, a graph, a kernel file).
    pub edit_text: String,
    /// The whole candidate after the edit: what `ekb eval` reads from a sample folder.
    pub files: Vec<CandidateFile>,
    /// Why the agent made it.
    pub rationale: String,
    pub cost: Cost,
}

/// A node's edit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Edit {
    pub kind: EditKind,
    pub text: String,
    /// Unified diff of the parent's candidate files to this node's (empty for the root).
    pub diff: String,
}

impl Edit {
    /// One short line: the kind, the lines added and removed, and the first line added (or,
    /// when none was, the first removed): `trace +2 -0: parallel k0_add.i1`.
    pub fn summary(&self) -> String {
        if self.kind == EditKind::None {
            return "start".into();
        }
        let body = self.diff.lines().filter(|l| !l.starts_with("+++") && !l.starts_with("---"));
        let (mut added, mut removed) = (Vec::new(), Vec::new());
        for line in body {
            match line.as_bytes().first() {
                Some(b'+') => added.push(line[1..].trim()),
                Some(b'-') => removed.push(line[1..].trim()),
                _ => {}
            }
        }
        let mut line = format!("{} +{} -{}", self.kind.name(), added.len(), removed.len());
        let first = added.iter().chain(&removed).find(|l| !l.is_empty());
        if let Some(first) = first {
            const WIDTH: usize = 48;
            let cut: String = first.chars().take(WIDTH).collect();
            let more = if first.chars().count() > WIDTH { "…" } else { "" };
            line.push_str(&format!(": {cut}{more}"));
        }
        line
    }
}

/// A classified failure with its evidence, as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Failure {
    pub class: FailureClass,
    pub detail: String,
    pub evidence: String,
}

/// A node's evaluation, in the columns the queries read (the whole evaluation record is kept
/// beside them: [`crate::tree::Tree::result`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Outcome {
    pub compiled: bool,
    pub correct: bool,
    pub failure: Option<Failure>,
    /// The paired median speedup over the baseline, when both sides were timed.
    pub speedup: Option<f64>,
    pub ci_low: Option<f64>,
    pub ci_high: Option<f64>,
    pub stable: Option<bool>,
    /// Correct, no failure, a successful baseline and a stable speedup: the speedup counts.
    pub verified: bool,
    pub baseline: String,
    /// The candidate's peak memory as the runtime measured it, bytes.
    pub peak_bytes: Option<u64>,
    /// The memory plan's peak of the candidate as compiled, bytes (graph candidates).
    pub planned_peak_bytes: Option<u64>,
}

impl Outcome {
    /// `1.42x verified`, `0.97x unstable`, `compile: clang`, ...
    pub fn describe(&self) -> String {
        let speedup = self.speedup.map(|s| format!("{s:.2}x"));
        match (&self.failure, speedup) {
            (Some(f), Some(s)) => format!("{s} {}", f.class.name()),
            (Some(f), None) => format!("{}: {}", f.class.name(), f.detail),
            (None, Some(s)) if self.verified => format!("{s} verified"),
            (None, Some(s)) => format!("{s} uncounted"),
            (None, None) if self.correct => "correct, untimed".into(),
            (None, None) => "failed".into(),
        }
    }
}

/// A stored node.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Node {
    pub id: NodeId,
    pub run: String,
    pub parent: Option<NodeId>,
    pub level: Level,
    pub agent: String,
    pub state: State,
    pub edit: Edit,
    pub rationale: String,
    pub cost: Cost,
    /// Present once evaluated.
    pub outcome: Option<Outcome>,
    pub created_at: String,
    pub evaluated_at: Option<String>,
    /// The batch that measured it (`None` in flight, and for a node recorded without a run:
    /// refused, not compiled, or a copy of an identical node's measurement).
    pub batch: Option<String>,
}

impl Node {
    /// The speedup that counts (verified nodes only).
    pub fn verified_speedup(&self) -> Option<f64> {
        self.outcome.as_ref().filter(|o| o.verified).and_then(|o| o.speedup)
    }

    /// `in flight`, or the outcome's description.
    pub fn describe_outcome(&self) -> String {
        self.outcome.as_ref().map_or_else(|| "in flight".into(), Outcome::describe)
    }
}

/// What a batch of evaluations was for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BatchKind {
    /// New nodes of the search.
    Search,
    /// The run's answer measured again against its root.
    Confirm,
}

impl BatchKind {
    pub fn name(self) -> &'static str {
        match self {
            BatchKind::Search => "search",
            BatchKind::Confirm => "confirm",
        }
    }

    pub fn parse(text: &str) -> Option<BatchKind> {
        [BatchKind::Search, BatchKind::Confirm].into_iter().find(|k| k.name() == text)
    }
}

/// One batch of evaluations: candidates measured together in one device session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BatchRecord {
    /// Unique in the database; its evaluation run is `RUN/evals/NAME/`.
    pub name: String,
    pub run: String,
    pub kind: BatchKind,
    /// The load average of the machine running the loop when the batch started (the first
    /// three fields of `/proc/loadavg`: 1, 5 and 15 minutes), or `unknown`.
    pub load: String,
    pub started_at: String,
}

/// Whether a confirmation kept its node as the answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Confirmed,
    Rejected,
}

impl Verdict {
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Confirmed => "confirmed",
            Verdict::Rejected => "rejected",
        }
    }

    pub fn parse(text: &str) -> Option<Verdict> {
        [Verdict::Confirmed, Verdict::Rejected].into_iter().find(|v| v.name() == text)
    }
}

/// A run's answer measured again, in a batch of its own, timed against the run's root (the
/// start) rather than the run's baseline: its speedup is over the start.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Confirmation {
    pub id: i64,
    pub run: String,
    /// The node measured again.
    pub node: NodeId,
    /// The node it was timed against: the run's root.
    pub against: NodeId,
    pub batch: String,
    pub state: State,
    /// Once evaluated: confirmed when the measurement was correct, had no failure but an
    /// unstable timing, and an interval whose lower bound is at least 1.0 (the start's own
    /// speedup over itself): `tree::confirm::verdict`.
    pub verdict: Option<Verdict>,
    pub correct: Option<bool>,
    pub failure: Option<FailureClass>,
    pub speedup: Option<f64>,
    pub ci_low: Option<f64>,
    pub ci_high: Option<f64>,
    pub stable: Option<bool>,
    /// The evaluation's seconds: build and run, and run alone.
    pub wall_s: f64,
    pub device_s: f64,
    pub created_at: String,
    pub evaluated_at: Option<String>,
}

impl Confirmation {
    /// `confirmed: 1.31x [1.20, 1.45] over node 1`, `rejected: compile: ...`, `in flight`.
    pub fn describe(&self) -> String {
        let Some(verdict) = self.verdict else { return "in flight".into() };
        let measured = match (self.speedup, self.ci_low, self.ci_high) {
            (Some(s), Some(lo), Some(hi)) => {
                let unstable = if self.stable == Some(false) { ", unstable" } else { "" };
                format!("{s:.2}x [{lo:.2}, {hi:.2}]{unstable} over node {}", self.against)
            }
            _ => match self.failure {
                Some(c) => format!("{} (no speedup over node {})", c.name(), self.against),
                None => format!("untimed against node {}", self.against),
            },
        };
        format!("{}: {measured}", verdict.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_back() {
        for l in Level::ALL {
            assert_eq!(Level::parse(l.name()), Some(l));
        }
        for k in EditKind::ALL {
            assert_eq!(EditKind::parse(k.name()), Some(k));
        }
        for s in [State::InFlight, State::Evaluated] {
            assert_eq!(State::parse(s.name()), Some(s));
        }
        for s in [RunStatus::Running, RunStatus::Finished, RunStatus::Stopped] {
            assert_eq!(RunStatus::parse(s.name()), Some(s));
        }
        for k in [BatchKind::Search, BatchKind::Confirm] {
            assert_eq!(BatchKind::parse(k.name()), Some(k));
        }
        for v in [Verdict::Confirmed, Verdict::Rejected] {
            assert_eq!(Verdict::parse(v.name()), Some(v));
        }
        assert_eq!(Level::parse("L1"), None);
    }

    #[test]
    fn an_edit_summary_counts_lines_and_shows_the_first_change() {
        let edit = Edit {
            kind: EditKind::Trace,
            text: String::new(),
            diff: "--- 1/candidate.trace\n+++ 2/candidate.trace\n@@ -1 +1,2 @@\n-split k0.i by 4 -> a, b\n+parallel k0.i\n+vectorize k0.j\n"
                .into(),
        };
        assert_eq!(edit.summary(), "trace +2 -1: parallel k0.i");
        let root = Edit { kind: EditKind::None, text: String::new(), diff: String::new() };
        assert_eq!(root.summary(), "start");
    }
}
