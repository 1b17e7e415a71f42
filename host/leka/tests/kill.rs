//! A process writing nodes in a loop, killed (SIGKILL) at moments that vary, three times over:
//! after each kill the database passes SQLite's integrity check, every node holds all its
//! files with the text it was written with, every recorded outcome is whole, and the node left
//! in flight is the one a restarted writer finds and finishes.
//!
//! The writer is this same test binary, started again with `WRITER_ENV` naming the database: the
//! test then writes until it is killed instead of checking.

use ekb_eval::results::CandidateResult;
use ekb_leka::tree::{Budgets, CandidateFile, Cost, EditKind, Level, NewNode, NodeId, RunSpec, State, Tree};
use serde_json::json;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const WRITER_ENV: &str = "EKB_LEKA_KILL_TEST_DB";
const TEST_NAME: &str = "a_writer_killed_at_any_moment_leaves_every_committed_node_whole";
const RUN: &str = "k";
/// Files per node, and their size: a node's transaction takes a while, so kills land in it.
const FILES: usize = 24;
const FILE_BYTES: usize = 16 * 1024;
/// How long after the nodes it waits for each round kills the writer, microseconds.
const KILL_DELAYS_US: [u64; 8] = [0, 1_500, 4_000, 9_000, 14_000, 21_000, 29_000, 38_000];

/// The text of file `j` of the node whose edit says `n`: a first line of its own, then lines
/// every node shares (so the diff to the parent stays cheap and the time goes to writing).
fn file_text(n: u64, j: usize) -> String {
    let mut text = format!("node {n} file {j}\n");
    let mut k = 0;
    while text.len() < FILE_BYTES {
        text.push_str(&format!("shared line {k}\n"));
        k += 1;
    }
    text
}

/// The outcome recorded for the node whose edit says `n`: its speedup is `n`.
fn outcome(n: u64) -> CandidateResult {
    let side = json!({"median_ns": 1000.0, "min_ns": 900.0, "cv": 0.01});
    serde_json::from_value(json!({
        "instance": {"task": "t", "backend": "cpu", "level": 1, "domain": "mobile", "family": "f"},
        "sample": 0,
        "candidate": {"origin": "x", "kind": "l1", "sha256": null, "text": null},
        "compiled": true, "correct": true, "failure": null, "baseline_failure": null, "memory": null,
        "timing": {"speedup": n as f64, "ci_low": n as f64, "ci_high": n as f64, "confidence": 0.95,
            "rse": 0.0, "stable": true, "attempts": 1, "stop": "target_reached", "clock": "monotonic",
            "cold_cache": false, "threads": 1, "baseline": side, "candidate": side, "pairs": []},
        "seconds": {"build": 0.0, "run": 0.0},
        "finished": "2026-01-01T00:00:00Z"
    }))
    .unwrap()
}

/// The number a node's edit text carries.
fn number(edit: &str) -> u64 {
    edit.strip_prefix("edit ").and_then(|n| n.trim().parse().ok()).unwrap_or_else(|| panic!("edit `{edit}`"))
}

/// Writes nodes until killed: first finishes what an earlier writer left in flight (as a resumed
/// loop would), then adds a chain of edits, each evaluated after it was added.
fn write_until_killed(db: &Path) -> ! {
    let mut tree = Tree::open(db).unwrap();
    if tree.runs().unwrap().is_empty() {
        let spec = RunSpec {
            id: RUN.into(),
            task: "t".into(),
            backend: "cpu".into(),
            target: "host".into(),
            baseline: "naive".into(),
            budgets: Budgets::default(),
        };
        tree.begin_run(&spec).unwrap();
    }
    for node in tree.in_flight(RUN).unwrap() {
        let n = if node.parent.is_none() { 0 } else { number(&node.edit.text) };
        tree.record_outcome(node.id, "naive", &outcome(n)).unwrap();
    }
    let nodes = tree.nodes(RUN).unwrap();
    let mut parent: Option<NodeId> = nodes.last().map(|n| n.id);
    let mut n = nodes.last().map_or(0, |n| if n.parent.is_none() { 0 } else { number(&n.edit.text) });
    loop {
        let (level, kind) =
            if parent.is_none() { (Level::Root, EditKind::None) } else { (Level::L1, EditKind::Trace) };
        let edit = if parent.is_none() { String::new() } else { format!("edit {}", n + 1) };
        let m = if parent.is_none() { 0 } else { n + 1 };
        let files = (0..FILES)
            .map(|j| CandidateFile::new(format!("candidate.l2/kernels/k{j}.c"), file_text(m, j)))
            .collect();
        let node = NewNode {
            parent,
            level,
            agent: "writer".into(),
            edit_kind: kind,
            edit_text: edit,
            files,
            rationale: String::new(),
            cost: Cost::default(),
        };
        let id = tree.insert_node(RUN, &node).unwrap();
        tree.record_outcome(id, "naive", &outcome(m)).unwrap();
        parent = Some(id);
        n = m;
    }
}

/// Every node whole; returns (nodes, the ids in flight).
fn check(db: &Path) -> (usize, Vec<NodeId>) {
    let tree = Tree::open_existing(db).unwrap();
    assert_eq!(tree.check_integrity().unwrap(), Vec::<String>::new());
    let nodes = tree.nodes(RUN).unwrap();
    for node in &nodes {
        let n = if node.parent.is_none() { 0 } else { number(&node.edit.text) };
        let files = tree.files(node.id).unwrap();
        assert_eq!(files.len(), FILES, "node {}", node.id);
        for f in &files {
            let j: usize =
                f.path.trim_start_matches("candidate.l2/kernels/k").trim_end_matches(".c").parse().unwrap();
            assert!(
                f.text == file_text(n, j),
                "node {} file {} is not the text it was written with",
                node.id,
                f.path
            );
        }
        if node.state == State::Evaluated {
            let o = node.outcome.as_ref().unwrap();
            assert_eq!(o.speedup, Some(n as f64), "node {}", node.id);
            let r = tree.result(node.id).unwrap().unwrap();
            assert_eq!(r.timing.unwrap().speedup, n as f64, "node {}", node.id);
        }
    }
    let in_flight: Vec<NodeId> = tree.in_flight(RUN).unwrap().iter().map(|n| n.id).collect();
    assert!(in_flight.len() <= 1, "in flight: {in_flight:?}");
    (nodes.len(), in_flight)
}

#[test]
fn a_writer_killed_at_any_moment_leaves_every_committed_node_whole() {
    if let Some(db) = std::env::var_os(WRITER_ENV) {
        write_until_killed(Path::new(&db));
    }
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("tree.sqlite");
    let mut before: (usize, Vec<NodeId>) = (0, Vec::new());
    for delay_us in KILL_DELAYS_US {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args(["--exact", TEST_NAME, "--nocapture", "--test-threads=1"])
            .env(WRITER_ENV, &db)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // Wait for a few more nodes, then a little more, varied per round: the kill lands
        // anywhere in a node's write or its outcome's.
        let start = Instant::now();
        loop {
            let count = if db.exists() {
                Tree::open_existing(&db).ok().and_then(|t| t.nodes(RUN).ok()).map_or(0, |n| n.len())
            } else {
                0
            };
            if count >= before.0 + 3 {
                break;
            }
            assert!(child.try_wait().unwrap().is_none(), "the writer ended before it was killed");
            assert!(start.elapsed() < Duration::from_secs(20), "the writer wrote {count} node(s) in 20 s");
            std::thread::sleep(Duration::from_millis(5));
        }
        std::thread::sleep(Duration::from_micros(delay_us));
        child.kill().unwrap();
        child.wait().unwrap();
        let after = check(&db);
        assert!(after.0 >= before.0 + 3);
        // What the previous writer left in flight, the next one found and finished.
        let tree = Tree::open_existing(&db).unwrap();
        for id in &before.1 {
            assert_eq!(tree.node(*id).unwrap().state, State::Evaluated, "node {id} left in flight");
        }
        before = after;
    }
}
