//! The candidate tree through its library API, on a database file: runs and nodes written,
//! reopened and read back; the queries on a small hand-built tree; the refusals, each naming
//! what exists.

use ekb_eval::results::CandidateResult;
use ekb_leka::tree::{
    Budgets, CandidateFile, Cost, EditKind, Level, NewNode, NodeId, RunSpec, RunStatus, State, Tree, Verdict,
};
use serde_json::json;
use std::path::Path;

fn spec(id: &str) -> RunSpec {
    RunSpec {
        id: id.into(),
        task: "t_relu".into(),
        backend: "cpu".into(),
        target: "host".into(),
        baseline: "naive".into(),
        budgets: Budgets { nodes: Some(20), llm_calls: Some(10), ..Budgets::default() },
    }
}

fn root(text: &str) -> NewNode {
    NewNode {
        parent: None,
        level: Level::Root,
        agent: "start".into(),
        edit_kind: EditKind::None,
        edit_text: String::new(),
        files: vec![CandidateFile::new("candidate.ekir", text)],
        rationale: "the task's graph".into(),
        cost: Cost::default(),
    }
}

fn trace(parent: NodeId, text: &str) -> NewNode {
    NewNode {
        parent: Some(parent),
        level: Level::L1,
        agent: "l1-offline".into(),
        edit_kind: EditKind::Trace,
        edit_text: text.into(),
        files: vec![CandidateFile::new("candidate.trace", text)],
        rationale: format!("try `{}`", text.trim()),
        cost: Cost { tokens_in: 100, tokens_out: 20, llm_calls: 1, wall_s: 2.0, device_s: 0.0 },
    }
}

/// An evaluation record: correct with this speedup (stable or not), or failed with this class.
fn result(speedup: Option<(f64, bool)>, failure: Option<&str>) -> CandidateResult {
    let timing = speedup.map(|(s, stable)| {
        let side = json!({"median_ns": 1000.0, "min_ns": 900.0, "cv": 0.01,
            "steps": [{"kernel": "k0_relu", "ns": 800.0}]});
        json!({"speedup": s, "ci_low": s * 0.95, "ci_high": s * 1.05, "confidence": 0.95, "rse": 0.01,
            "stable": stable, "attempts": 1, "stop": "target_reached", "clock": "monotonic",
            "cold_cache": false, "threads": 2, "baseline": side, "candidate": side, "pairs": [[1000, 500]]})
    });
    let failure =
        failure.map(|c| json!({"class": c, "detail": format!("{c}: detail"), "evidence": "line 1: boom"}));
    let correct = failure.is_none() || failure.as_ref().is_some_and(|f| f["class"] == "unstable_timing");
    serde_json::from_value(json!({
        "instance": {"task": "t_relu", "backend": "cpu", "level": 1, "domain": "mobile", "family": "activation"},
        "sample": 0,
        "candidate": {"origin": "t_relu/cpu/sample-0/candidate.trace", "kind": "l1", "sha256": null, "text": null},
        "compiled": failure.as_ref().is_none_or(|f| f["class"] != "compile"),
        "correct": correct,
        "failure": failure,
        "timing": timing,
        "baseline_failure": null,
        "memory": {"candidate_peak_bytes": 65536, "baseline_peak_bytes": 65536},
        "seconds": {"build": 0.5, "run": 1.5},
        "finished": "2026-01-01T00:00:00Z"
    }))
    .unwrap()
}

const GRAPH: &str = "graph t_relu(x: f32[64]) -> (y: f32[64]) {\n  %0: f32[64] = relu(x)\n  return %0\n}\n";

/// root(1.0 stable) -> a: 2.0 stable, b: compile failure, c: 2.0 stable (a tie, later);
/// a -> d: 3.0 unstable, e: in flight; d -> f: 4.0 stable (an L2 edit).
struct Built {
    root: NodeId,
    a: NodeId,
    b: NodeId,
    c: NodeId,
    d: NodeId,
    e: NodeId,
    f: NodeId,
}

fn build(tree: &mut Tree) -> Built {
    tree.begin_run(&spec("r1")).unwrap();
    let root = tree.insert_node("r1", &root(GRAPH)).unwrap();
    tree.record_outcome(root, "naive", &result(Some((1.0, true)), None)).unwrap();
    let child = |tree: &mut Tree, parent, text: &str, r: Option<CandidateResult>| {
        let id = tree.insert_node("r1", &trace(parent, text)).unwrap();
        if let Some(r) = r {
            tree.record_outcome(id, "naive", &r).unwrap();
        }
        id
    };
    let a = child(tree, root, "parallel k0_relu.i0\n", Some(result(Some((2.0, true)), None)));
    let b = child(tree, root, "vectorize k0_relu.i0\n", Some(result(None, Some("compile"))));
    let c = child(tree, root, "unroll k0_relu.i0\n", Some(result(Some((2.0, true)), None)));
    let d = child(tree, a, "parallel k0_relu.i0\nsplit k0_relu.i0 by 8 -> o, i\n", None);
    tree.record_outcome(d, "naive", &result(Some((3.0, false)), Some("unstable_timing"))).unwrap();
    let e = child(tree, a, "parallel k0_relu.i0\nunroll k0_relu.i0\n", None);
    let f = tree
        .insert_node(
            "r1",
            &NewNode {
                parent: Some(d),
                level: Level::L2,
                agent: "l2-llm:test-model".into(),
                edit_kind: EditKind::Kernel,
                edit_text: "void k0_relu() {}\n".into(),
                files: vec![
                    CandidateFile::new("candidate.l2/module.ekir", "module t_relu {}\n"),
                    CandidateFile::new("candidate.l2/kernels/k0_relu.c", "void k0_relu() {}\n"),
                ],
                rationale: "hand-written".into(),
                cost: Cost::default(),
            },
        )
        .unwrap();
    tree.record_outcome(f, "naive", &result(Some((4.0, true)), None)).unwrap();
    Built { root, a, b, c, d, e, f }
}

fn ids(nodes: &[ekb_leka::tree::Node]) -> Vec<NodeId> {
    nodes.iter().map(|n| n.id).collect()
}

#[test]
fn nodes_and_their_outcomes_read_back_after_reopening() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("tree.sqlite");
    let t = {
        let mut tree = Tree::open(&path).unwrap();
        build(&mut tree)
    };
    let tree = Tree::open_existing(&path).unwrap();
    assert_eq!(tree.runs().unwrap().len(), 1);
    let run = tree.run("r1").unwrap();
    assert_eq!((run.status, run.spec.budgets.nodes), (RunStatus::Running, Some(20)));

    let a = tree.node(t.a).unwrap();
    assert_eq!(
        (a.parent, a.level, a.state, a.edit.kind),
        (Some(t.root), Level::L1, State::Evaluated, EditKind::Trace)
    );
    let o = a.outcome.as_ref().unwrap();
    assert!(o.verified && o.correct && o.compiled && o.failure.is_none());
    assert_eq!(
        (o.speedup, o.stable, o.peak_bytes, o.baseline.as_str()),
        (Some(2.0), Some(true), Some(65536), "naive")
    );
    // The agent's cost plus the evaluation's seconds (build + run to wall, run to device).
    assert_eq!((a.cost.tokens_in, a.cost.llm_calls, a.cost.wall_s, a.cost.device_s), (100, 1, 4.0, 1.5));
    // The diff against the parent names both nodes: the root's graph went, the trace came.
    assert!(
        a.edit.diff.contains(&format!("--- /dev/null\n+++ {}/candidate.trace\n", t.a)),
        "{}",
        a.edit.diff
    );
    assert!(
        a.edit.diff.contains(&format!("--- {}/candidate.ekir\n+++ /dev/null\n", t.root)),
        "{}",
        a.edit.diff
    );
    assert_eq!(a.edit.summary(), "trace +1 -4: parallel k0_relu.i0");

    let b = tree.node(t.b).unwrap().outcome.unwrap();
    let fail = b.failure.unwrap();
    assert_eq!(
        (fail.class.name(), fail.evidence.as_str(), b.compiled, b.verified),
        ("compile", "line 1: boom", false, false)
    );
    let d = tree.node(t.d).unwrap().outcome.unwrap();
    assert_eq!((d.speedup, d.stable, d.verified), (Some(3.0), Some(false), false));

    // The whole record, per-kernel step times included.
    let r = tree.result(t.a).unwrap().unwrap();
    assert_eq!(r.timing.unwrap().candidate.steps[0].kernel, "k0_relu");
    assert_eq!(tree.result(t.e).unwrap(), None);

    let files = tree.files(t.f).unwrap();
    let paths: Vec<&str> = files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(paths, ["candidate.l2/kernels/k0_relu.c", "candidate.l2/module.ekir"]);
    assert_eq!(tree.check_integrity().unwrap(), Vec::<String>::new());
}

#[test]
fn the_queries_on_a_small_tree() {
    let tmp = tempfile::tempdir().unwrap();
    let mut tree = Tree::open(&tmp.path().join("tree.sqlite")).unwrap();
    let t = build(&mut tree);

    // The best: f (4.0); without f, a and c tie at 2.0 and the earlier, a, wins; d's 3.0 is
    // unstable and never counts.
    assert_eq!(tree.best_verified("r1").unwrap().map(|n| n.id), Some(t.f));
    // The answer is the fastest verified node measured above the start, until its confirmation
    // is rejected: then the next (a, the earlier of a tie), while f stays the fastest measured.
    assert_eq!(tree.answer("r1").unwrap().map(|n| n.id), Some(t.f));
    let confirm = tree.insert_confirmation("r1", t.f, t.root, "confirm-f", "0.10 0.10 0.10").unwrap();
    assert_eq!(
        tree.record_confirmation(confirm, &result(Some((0.9, true)), None)).unwrap(),
        Verdict::Rejected
    );
    assert_eq!(tree.answer("r1").unwrap().map(|n| n.id), Some(t.a));
    assert_eq!(tree.best_verified("r1").unwrap().map(|n| n.id), Some(t.f));
    assert_eq!(ids(&tree.path_to(t.f).unwrap()), [t.root, t.a, t.d, t.f]);
    assert_eq!(ids(&tree.children(t.root).unwrap()), [t.a, t.b, t.c]);
    assert_eq!(ids(&tree.siblings(t.b).unwrap()), [t.a, t.c]);
    assert_eq!(ids(&tree.siblings(t.root).unwrap()), Vec::<NodeId>::new());
    assert_eq!(ids(&tree.attempts(t.root, Level::L1).unwrap()), [t.a, t.b, t.c, t.d, t.e]);
    assert_eq!(ids(&tree.attempts(t.a, Level::L1).unwrap()), [t.d, t.e]);
    assert_eq!(ids(&tree.attempts(t.root, Level::L2).unwrap()), [t.f]);
    assert_eq!(ids(&tree.in_flight("r1").unwrap()), [t.e]);

    // root 1.0 -> a 2.0 (l1 x2) -> d unverified (folded) -> f 4.0 (l2 x2, d's l1 edit folded in).
    let at = tree.attribution(t.f).unwrap();
    assert_eq!((at.root_speedup, at.final_speedup, at.total), (1.0, 4.0, 4.0));
    assert_eq!(at.per_level.get(&Level::L1), Some(&2.0));
    assert_eq!(at.per_level.get(&Level::L2), Some(&2.0));
    assert_eq!(at.steps.last().unwrap().folded, [t.d]);

    let mut second = spec("r2");
    second.task = "t_tanh".into();
    tree.begin_run(&second).unwrap();
    let tie = tree.insert_node("r2", &root(GRAPH)).unwrap();
    let x = tree.insert_node("r2", &trace(tie, "parallel k0.i0\n")).unwrap();
    let y = tree.insert_node("r2", &trace(tie, "unroll k0.i0\n")).unwrap();
    tree.record_outcome(y, "naive", &result(Some((2.0, true)), None)).unwrap();
    tree.record_outcome(x, "naive", &result(Some((2.0, true)), None)).unwrap();
    assert_eq!(tree.best_verified("r2").unwrap().map(|n| n.id), Some(x), "a tie goes to the earlier node");
    tree.set_run_status("r2", RunStatus::Finished).unwrap();
    assert_eq!(tree.run("r2").unwrap().status, RunStatus::Finished);
    // The other run's queries are its own.
    assert_eq!(tree.best_verified("r1").unwrap().map(|n| n.id), Some(t.f));
}

#[test]
fn an_export_is_a_candidate_folder_sample() {
    let tmp = tempfile::tempdir().unwrap();
    let mut tree = Tree::open(&tmp.path().join("tree.sqlite")).unwrap();
    let t = build(&mut tree);
    let out = tmp.path().join("cands");
    let dir = tree.export(t.f, &out, 0).unwrap();
    assert_eq!(dir, out.join("t_relu/cpu/sample-0"));
    let read = |p: &str| std::fs::read_to_string(dir.join(p)).unwrap();
    assert_eq!(read("candidate.l2/kernels/k0_relu.c"), "void k0_relu() {}\n");
    assert_eq!(read("candidate.l2/module.ekir"), "module t_relu {}\n");
    let e = tree.export(t.a, &out, 0).unwrap_err().to_string();
    assert!(e.contains("already exists"), "{e}");
    tree.export(t.a, &out, 1).unwrap();
    assert_eq!(
        std::fs::read_to_string(out.join("t_relu/cpu/sample-1/candidate.trace")).unwrap(),
        "parallel k0_relu.i0\n"
    );
}

#[test]
fn refusals_name_what_exists() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("tree.sqlite");
    let mut tree = Tree::open(&path).unwrap();
    let t = build(&mut tree);
    let err = |r: Result<NodeId, ekb_ir::Diagnostic>| r.unwrap_err().to_string();

    let e = tree.node(99).unwrap_err().to_string();
    assert!(e.contains("no node 99") && e.contains("7 node(s), ids 1 to 7"), "{e}");
    let e = err(tree.insert_node("r1", &root(GRAPH)));
    assert!(e.contains(&format!("already has its root, node {}", t.root)), "{e}");
    let e = err(tree.insert_node("nope", &root(GRAPH)));
    assert!(e.contains("no run `nope`") && e.contains("`r1`"), "{e}");
    let mut bad = trace(t.a, "x\n");
    bad.files = vec![CandidateFile::new("../escape", "x")];
    assert!(err(tree.insert_node("r1", &bad)).contains("not a plain relative path"));
    bad.files = vec![];
    assert!(err(tree.insert_node("r1", &bad)).contains("has no file"));
    let mut rootish = trace(t.a, "x\n");
    rootish.level = Level::Root;
    assert!(err(tree.insert_node("r1", &rootish)).contains("needs a level"));
    tree.begin_run(&spec("r2")).unwrap();
    let e = err(tree.insert_node("r2", &trace(t.a, "x\n")));
    assert!(e.contains(&format!("node {} belongs to run `r1`", t.a)), "{e}");
    let e = tree.record_outcome(t.a, "naive", &result(None, Some("compile"))).unwrap_err().to_string();
    assert!(e.contains(&format!("node {} is already evaluated (2.00x verified)", t.a)), "{e}");
    assert!(tree.begin_run(&spec("r1")).unwrap_err().to_string().contains("already exists"));
    // A failed write leaves nothing behind.
    assert_eq!(tree.check_integrity().unwrap(), Vec::<String>::new());
    assert_eq!(tree.nodes("r1").unwrap().len(), 7);
}

fn set_version(path: &Path, version: &str) {
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.execute("UPDATE meta SET value = ?1 WHERE key = 'schema_version'", [version]).unwrap();
}

#[test]
fn a_version_2_tree_is_upgraded_with_its_nodes_kept() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("tree.sqlite");
    let mut tree = Tree::open(&path).unwrap();
    build(&mut tree);
    drop(tree);
    // The tables of version 2: no batches, no confirmations, no `batch` column.
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute_batch("DROP TABLE confirmations; DROP TABLE batches; ALTER TABLE nodes DROP COLUMN batch;")
        .unwrap();
    drop(conn);
    set_version(&path, "2");
    let mut tree = Tree::open_existing(&path).unwrap();
    assert_eq!(tree.nodes("r1").unwrap().len(), 7);
    assert!(tree.nodes("r1").unwrap().iter().all(|n| n.batch.is_none()));
    tree.begin_batch("r1", "n2", ekb_leka::tree::BatchKind::Search, "0.50 0.40 0.30", &[2]).unwrap();
    assert_eq!(tree.node(2).unwrap().batch.as_deref(), Some("n2"));
    assert_eq!(tree.batches("r1").unwrap()[0].load, "0.50 0.40 0.30");
    assert_eq!(tree.check_integrity().unwrap(), Vec::<String>::new());
    drop(tree);
    let conn = rusqlite::Connection::open(&path).unwrap();
    let v: String =
        conn.query_row("SELECT value FROM meta WHERE key = 'schema_version'", [], |r| r.get(0)).unwrap();
    assert_eq!(v, "3");
}

#[test]
fn another_schema_version_or_another_database_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("tree.sqlite");
    drop(Tree::open(&path).unwrap());
    set_version(&path, "4");
    let e = Tree::open(&path).unwrap_err().to_string();
    assert!(e.contains("schema version 4, newer than version 3"), "{e}");
    set_version(&path, "1");
    let e = Tree::open_existing(&path).unwrap_err().to_string();
    assert!(e.contains("schema version 1; this ekb reads version 3 only"), "{e}");

    let other = tmp.path().join("other.sqlite");
    rusqlite::Connection::open(&other).unwrap().execute_batch("CREATE TABLE t (x INTEGER)").unwrap();
    let e = Tree::open(&other).unwrap_err().to_string();
    assert!(e.contains("is not a candidate tree") && e.contains("no `meta` table"), "{e}");
    let text = tmp.path().join("notes.txt");
    std::fs::write(&text, "not a database at all, just some text that is long enough").unwrap();
    assert!(Tree::open_existing(&text).is_err());
    let e = Tree::open_existing(&tmp.path().join("absent.sqlite")).unwrap_err().to_string();
    assert!(e.contains("no candidate tree at"), "{e}");
    assert!(!tmp.path().join("absent.sqlite").exists());
}
