//! `ekb tree` on a tree built through the library as a loop would build it: the task's graph as
//! the root and schedule traces as L1 edits, each exported as a candidate folder sample,
//! evaluated by `ekb eval` on a real Level-1 task and its result recorded in its node; then
//! `show`, `path`, `diff` and `export` read it back, and their errors name what exists.

use ekb_eval::results::load_run;
use ekb_leka::tree::{Budgets, CandidateFile, Cost, EditKind, Level, NewNode, NodeId, RunSpec, Tree};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const TASK: &str = "add_resnet18_residual";

fn ekb(dir: &Path) -> Command {
    let rt = ekb_e2e::static_runtime("x86_64-unknown-linux-musl", Path::new(env!("CARGO_TARGET_TMPDIR")));
    let mut c = Command::new(env!("CARGO_BIN_EXE_ekb"));
    c.current_dir(dir).env("EKB_RT_X86_64", rt).env_remove("EKB_RT");
    c
}

fn tasks_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tasks")
}

fn ok(out: &Output) -> String {
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout.clone()).unwrap()
}

fn edit(parent: NodeId, trace: &str) -> NewNode {
    NewNode {
        parent: Some(parent),
        level: Level::L1,
        agent: "l1-offline".into(),
        edit_kind: EditKind::Trace,
        edit_text: trace.into(),
        files: vec![CandidateFile::new("candidate.trace", trace)],
        rationale: format!("try `{}`", trace.trim()),
        cost: Cost::default(),
    }
}

/// The run folder with its tree: root, a (parallel rows), b (an illegal step), c (a's trace
/// and vectorized columns), each evaluated; returns their ids.
fn build(root_dir: &Path) -> (PathBuf, [NodeId; 4]) {
    let run_dir = root_dir.join("agent-run");
    std::fs::create_dir_all(&run_dir).unwrap();
    let mut tree = Tree::open(&run_dir.join("tree.sqlite")).unwrap();
    let spec = RunSpec {
        id: "r1".into(),
        task: TASK.into(),
        backend: "cpu".into(),
        target: "host".into(),
        baseline: "naive".into(),
        budgets: Budgets { nodes: Some(8), ..Budgets::default() },
    };
    tree.begin_run(&spec).unwrap();
    let graph = std::fs::read_to_string(tasks_dir().join(format!("level1/{TASK}.ekir"))).unwrap();
    let root = tree
        .insert_node(
            "r1",
            &NewNode {
                parent: None,
                level: Level::Root,
                agent: "start".into(),
                edit_kind: EditKind::None,
                edit_text: String::new(),
                files: vec![CandidateFile::new("candidate.ekir", graph)],
                rationale: "the task's graph".into(),
                cost: Cost::default(),
            },
        )
        .unwrap();
    let a = tree.insert_node("r1", &edit(root, "parallel k0_add.i1\n")).unwrap();
    let b = tree.insert_node("r1", &edit(root, "vectorize k0_add.i1\n")).unwrap();
    let c = tree.insert_node("r1", &edit(a, "parallel k0_add.i1\nvectorize k0_add.i3\n")).unwrap();
    let ids = [root, a, b, c];

    // Evaluate the four as samples 0..3 of one candidate folder, as the loop would.
    let cands = root_dir.join("cands");
    for (sample, id) in ids.iter().enumerate() {
        tree.export(*id, &cands, sample as u32).unwrap();
    }
    let eval_out = root_dir.join("eval");
    let out = ekb(root_dir)
        .args(["eval", TASK, "--level", "1", "--backend", "cpu", "--samples", "4", "--budget", "0.2"])
        .args(["--max-ci", "1e9", "--plain", "--dir"])
        .arg(tasks_dir())
        .arg("--candidates")
        .arg(&cands)
        .arg("--out")
        .arg(&eval_out)
        .output()
        .unwrap();
    ok(&out);
    let run = load_run(&eval_out).unwrap();
    assert_eq!(run.results.len(), 4);
    for r in &run.results {
        tree.record_outcome(ids[r.sample as usize], &run.info.baseline, r).unwrap();
    }
    (run_dir, ids)
}

#[test]
fn show_path_diff_and_export_read_a_tree_evaluated_by_ekb_eval() {
    let tmp = tempfile::tempdir().unwrap();
    let (run_dir, [root, a, b, c]) = build(tmp.path());
    let tree = Tree::open_existing(&run_dir.join("tree.sqlite")).unwrap();
    for id in [root, a, c] {
        let o = tree.node(id).unwrap().outcome.unwrap();
        assert!(o.compiled && o.correct && o.verified, "node {id}: {o:?}");
    }
    let failed = tree.node(b).unwrap().outcome.unwrap();
    assert_eq!(failed.failure.as_ref().map(|f| f.class.name()), Some("syntax_api"), "{failed:?}");
    let best = tree.best_verified("r1").unwrap().unwrap();
    let answer = tree.answer("r1").unwrap().unwrap();

    // show: one line per node, indented by depth, the answer marked (and the fastest verified
    // node, where it is another).
    let text = ok(&ekb(tmp.path()).args(["tree", "agent-run", "show"]).output().unwrap());
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[0].starts_with(&format!(
            "run r1: {TASK} on cpu (target host), baseline naive, running; 4 node(s), answer node {}",
            answer.id
        )),
        "{text}"
    );
    assert!(lines[1].starts_with(&format!("  {root} [root] start: ")), "{text}");
    assert!(lines[2].starts_with(&format!("    {a} [l1] l1-offline: ")), "{text}");
    assert!(lines[3].starts_with(&format!("      {c} [l1] l1-offline: ")), "{text}");
    assert!(lines[3].contains("trace +1 -0: vectorize k0_add.i3"), "{text}");
    assert!(lines[4].starts_with(&format!("    {b} [l1] l1-offline: syntax_api: ")), "{text}");
    let marked = |m: &str| lines.iter().copied().filter(|l| l.ends_with(m)).collect::<Vec<&str>>();
    let answered = marked("<- answer");
    assert_eq!(answered.len(), 1, "{text}");
    assert!(answered[0].trim_start().starts_with(&format!("{} [", answer.id)), "{text}");
    let fastest = marked("<- fastest verified");
    assert_eq!(fastest.len(), usize::from(best.id != answer.id), "{text}");

    // show --json: every node with its outcome and depth, the answer and the fastest.
    let json: Value = serde_json::from_str(&ok(&ekb(tmp.path())
        .args(["tree", "agent-run", "show", "--json"])
        .output()
        .unwrap()))
    .unwrap();
    let r = &json["runs"][0];
    assert_eq!(
        (r["id"].as_str(), r["answer"].as_i64(), r["best"].as_i64()),
        (Some("r1"), Some(answer.id), Some(best.id))
    );
    let nodes = r["nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), 4);
    assert_eq!(nodes[2]["id"].as_i64(), Some(c));
    assert_eq!(nodes[2]["depth"].as_u64(), Some(2));
    assert_eq!(nodes[3]["outcome"]["failure"]["class"], "syntax_api");

    // path: the root to c, each edit's gain, the factors per level.
    let at = tree.attribution(c).unwrap();
    let text = ok(&ekb(tmp.path()).args(["tree", "agent-run", "path", &c.to_string()]).output().unwrap());
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 5, "{text}");
    assert!(lines[1].contains(&format!("{root} [root]")) && lines[1].ends_with("| the start"), "{text}");
    assert!(lines[3].ends_with(&format!("| gain x{:.2}", at.steps[1].gain.unwrap())), "{text}");
    assert_eq!(
        lines[4],
        format!(
            "per level: l1 x{:.2} = x{:.2} over the root ({:.2}x), {:.2}x over the baseline",
            at.per_level[&Level::L1],
            at.total,
            at.root_speedup,
            at.final_speedup
        )
    );
    let json: Value = serde_json::from_str(&ok(&ekb(tmp.path())
        .args(["tree", "agent-run/tree.sqlite", "path", &c.to_string(), "--json"])
        .output()
        .unwrap()))
    .unwrap();
    assert_eq!(json["nodes"].as_array().unwrap().len(), 3);
    // (serde_json reads a float back to within one unit in the last place)
    let total = json["attribution"]["total"].as_f64().unwrap();
    assert!((total - at.total).abs() <= 1e-12 * at.total, "{total} vs {}", at.total);

    // diff: a's candidate to c's.
    let text = ok(&ekb(tmp.path())
        .args(["tree", "agent-run", "diff", &a.to_string(), &c.to_string()])
        .output()
        .unwrap());
    assert_eq!(
        text,
        format!("--- {a}/candidate.trace\n+++ {c}/candidate.trace\n@@ -1 +1,2 @@\n parallel k0_add.i1\n+vectorize k0_add.i3\n")
    );

    // export: a node as a candidate folder sample; `ekb eval` read the traces above, `ekb check`
    // reads the root's graph here.
    let out = ok(&ekb(tmp.path())
        .args(["tree", "agent-run", "export", &root.to_string(), "--out", "again"])
        .output()
        .unwrap());
    let exported = tmp.path().join(format!("again/{TASK}/cpu/sample-0/candidate.ekir"));
    assert_eq!(out.trim(), format!("again/{TASK}/cpu/sample-0"));
    ok(&ekb(tmp.path()).arg("check").arg(&exported).output().unwrap());
    let again = ekb(tmp.path())
        .args(["tree", "agent-run", "export", &c.to_string(), "--out", "again"])
        .output()
        .unwrap();
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("already exists"));
}

#[test]
fn errors_name_the_node_or_run_and_what_exists() {
    let tmp = tempfile::tempdir().unwrap();
    let mut tree = Tree::open(&tmp.path().join("tree.sqlite")).unwrap();
    let spec = RunSpec {
        id: "r1".into(),
        task: TASK.into(),
        backend: "cpu".into(),
        target: "host".into(),
        baseline: "naive".into(),
        budgets: Budgets::default(),
    };
    tree.begin_run(&spec).unwrap();
    let root = NewNode {
        parent: None,
        level: Level::Root,
        agent: "start".into(),
        edit_kind: EditKind::None,
        edit_text: String::new(),
        files: vec![CandidateFile::new("candidate.ekir", "graph g() {}\n")],
        rationale: String::new(),
        cost: Cost::default(),
    };
    let id = tree.insert_node("r1", &root).unwrap();
    let fails = |args: &[&str]| {
        let out = ekb(tmp.path()).args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        String::from_utf8(out.stderr).unwrap()
    };
    let e = fails(&["tree", "tree.sqlite", "path", "42"]);
    assert!(e.contains("no node 42") && e.contains(&format!("1 node(s), ids {id} to {id}")), "{e}");
    let e = fails(&["tree", "tree.sqlite", "diff", &id.to_string(), "7"]);
    assert!(e.contains("no node 7"), "{e}");
    let e = fails(&["tree", "tree.sqlite", "show", "--run", "r9"]);
    assert!(e.contains("no run `r9`") && e.contains("its runs: `r1`"), "{e}");
    let e = fails(&["tree", "nowhere", "show"]);
    assert!(e.contains("no candidate tree at `nowhere`"), "{e}");
    // An in-flight root shows as such.
    let text = ok(&ekb(tmp.path()).args(["tree", ".", "show"]).output().unwrap());
    assert!(text.contains(&format!("  {id} [root] start: in flight; start")), "{text}");
    assert!(text.contains("no verified node yet"), "{text}");
}
