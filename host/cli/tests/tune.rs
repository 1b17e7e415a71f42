//! `ekb tune` end to end on a small matmul: trials recorded one per line, a killed tune resumed
//! from its database without measuring a program twice, a database of one profile refused for
//! another, and the export read back as a candidate loop program. And through the evaluation
//! protocol: a Level-1 task's GPU kernels tuned on OpenCL (PoCL), their export evaluated by
//! `ekb eval`, and the CPU's candidates measured by this machine's runtime.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const GRAPH: &str = "graph mm(a: f32[48,96], b: f32[96,80]) -> (c: f32[48,80]) {\n  %0 = matmul(a, b)\n  %1 = relu(%0)\n  return %1\n}\n";

fn ekb(args: &[&str], dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ekb")).args(args).current_dir(dir).output().expect("ekb runs")
}

fn records(db: &Path) -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(db).unwrap();
    text.lines().skip(1).map(|l| serde_json::from_str(l).unwrap()).collect()
}

const FAST: [&str; 6] = ["--rounds", "1", "--round-ms", "2", "--batch", "3"];

#[test]
fn a_killed_tune_resumes_from_its_database() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("mm.ekir"), GRAPH).unwrap();
    // Started for many trials, killed after its third record.
    let mut child = Command::new(env!("CARGO_BIN_EXE_ekb"))
        .args(["tune", "mm.ekir", "--trials", "200", "--db", "t.jsonl"])
        .args(FAST)
        .current_dir(d)
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let mut seen = 0;
    while seen < 3 {
        let line = lines.next().expect("progress lines").unwrap();
        if line.starts_with('[') {
            seen += 1;
        }
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let before = records(&d.join("t.jsonl"));
    assert!(before.len() >= 3, "{before:?}");
    assert_eq!(before[0]["trial"], 1);
    // The default schedule is the first trial: its knobs, as `ekb lower --to trace` prints them
    // for this machine (the matmul tiles follow its vector registers).
    let trace = ekb(&["lower", "mm.ekir", "--to", "trace"], d);
    let default: Vec<&str> = std::str::from_utf8(&trace.stdout)
        .unwrap()
        .lines()
        .filter(|l| l.starts_with("set matmul."))
        .map(|l| l.split("  #").next().unwrap())
        .collect();
    assert!(default.len() >= 2, "{trace:?}");
    let first = before[0]["recipe"].as_str().unwrap();
    assert!(default.iter().all(|l| first.contains(l)), "{default:?} in {}", before[0]);

    let out = ekb(
        &["tune", "mm.ekir", "--trials", "8", "--resume", "--db", "t.jsonl"]
            .iter()
            .chain(&FAST)
            .copied()
            .collect::<Vec<_>>(),
        d,
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}\n{stdout}", String::from_utf8_lossy(&out.stderr));
    let after = records(&d.join("t.jsonl"));
    assert!(after.len() <= 8 && after.len() > before.len(), "{} then {} records", before.len(), after.len());
    let trials: Vec<u64> = after.iter().map(|r| r["trial"].as_u64().unwrap()).collect();
    assert_eq!(trials, (1..=after.len() as u64).collect::<Vec<_>>(), "trials continue their numbering");
    let mut programs: Vec<&str> = after.iter().map(|r| r["program_sha256"].as_str().unwrap()).collect();
    programs.sort_unstable();
    programs.dedup();
    assert_eq!(programs.len(), after.len(), "no program measured twice");
    assert!(after.iter().all(|r| r["outcome"] == "ok"), "{after:?}");
    assert!(stdout.contains("mm ") && stdout.contains("best recipe of mm"), "{stdout}");

    // Resuming a finished tune measures nothing.
    let again = ekb(
        &["tune", "mm.ekir", "--trials", "8", "--resume", "--db", "t.jsonl"]
            .iter()
            .chain(&FAST)
            .copied()
            .collect::<Vec<_>>(),
        d,
    );
    assert!(again.status.success());
    assert_eq!(records(&d.join("t.jsonl")).len(), after.len());

    // Another profile of this machine (its contents differ) is refused with the reason.
    let other = ekb(&["tune", "mm.ekir", "--target", "pocl", "--db", "t.jsonl"], d);
    let err = String::from_utf8_lossy(&other.stderr);
    assert!(!other.status.success());
    assert!(err.contains("holds records for target `host`") && err.contains("not for `pocl`"), "{err}");
    // A board is refused: candidates are measured here.
    let board = ekb(&["tune", "mm.ekir", "--target", "rk3588"], d);
    assert!(String::from_utf8_lossy(&board.stderr).contains("is a board"));

    // The export is the tuned loop program, which parses and checks for the target.
    let exp = ekb(&["tune", "mm.ekir", "--db", "t.jsonl", "--export", "cands"], d);
    assert!(exp.status.success(), "{}", String::from_utf8_lossy(&exp.stderr));
    let cand = d.join("cands/mm/cpu/sample-0/candidate.ekir");
    let check = ekb(&["check", cand.to_str().unwrap()], d);
    assert!(check.status.success(), "{}", String::from_utf8_lossy(&check.stderr));
    let recipe = std::fs::read_to_string(d.join("cands/mm/cpu/sample-0/tuned.recipe")).unwrap();
    assert!(recipe.starts_with("set "), "{recipe}");
}

fn tasks_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tasks")
}

fn succeeded(out: &Output) -> String {
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{}\n{stdout}", String::from_utf8_lossy(&out.stderr));
    stdout
}

#[test]
fn a_gpu_tune_measures_its_kernels_through_the_protocol_and_exports_them_for_ekb_eval() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let gpu_rt = ekb_e2e::opencl_runtime(Path::new(env!("CARGO_TARGET_TMPDIR")));
    let tasks = tasks_dir();
    let task = "gemv_mobilenetv2_classifier";
    let tune = |extra: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_ekb"))
            .env("EKB_RT_GPU", &gpu_rt)
            .args(["tune", task, "--level", "1", "--dir", tasks.to_str().unwrap(), "--backend", "opencl"])
            .args(["--db", "gpu.jsonl"])
            .args(extra)
            .current_dir(d)
            .output()
            .unwrap()
    };
    let stdout = succeeded(&tune(&["--trials", "4"].iter().chain(&FAST).copied().collect::<Vec<_>>()));
    assert!(stdout.contains("opencl of `pocl` by the evaluation protocol"), "{stdout}");
    let recs = records(&d.join("gpu.jsonl"));
    assert_eq!(recs.len(), 4, "{recs:?}");
    // The default first: the GPU kernels' knobs, timed against itself.
    let default = &recs[0];
    assert!(default["recipe"].as_str().unwrap().contains("set gpu.dot_threads = "), "{default}");
    assert!(!default["recipe"].as_str().unwrap().contains("set matmul."), "no CPU knob: {default}");
    assert_eq!(default["outcome"], "ok", "{default}");
    assert!((0.5..2.0).contains(&default["vs_best"].as_f64().unwrap()), "{default}");
    for r in &recs {
        assert!(
            r["device"].as_str().unwrap().ends_with("opencl of `pocl` by the evaluation protocol"),
            "{r}"
        );
        assert_eq!(r["outcome"], "ok", "every point of this space runs on PoCL: {r}");
    }

    // The export is the tuned GPU loop program, which `ekb eval` finds correct on the GPU.
    succeeded(&tune(&["--export", "cands"]));
    let cand = d.join(format!("cands/{task}/opencl/sample-0/candidate.ekir"));
    assert!(std::fs::read_to_string(&cand).unwrap().contains("launch grid("), "a GPU kernel");
    let eval = Command::new(env!("CARGO_BIN_EXE_ekb"))
        .env("EKB_RT_GPU", &gpu_rt)
        .args([
            "eval",
            task,
            "--dir",
            tasks.to_str().unwrap(),
            "--backend",
            "opencl",
            "--candidates",
            "cands",
        ])
        .args(["--baseline", "default", "--budget", "0.2", "--max-ci", "1e9", "--plain", "--out", "run"])
        .current_dir(d)
        .output()
        .unwrap();
    succeeded(&eval);
    let result: serde_json::Value = serde_json::from_str(
        std::fs::read_to_string(d.join("run/results.jsonl")).unwrap().lines().next().unwrap(),
    )
    .unwrap();
    assert_eq!(result["correct"], true, "{result}");
    assert!(result["timing"]["speedup"].as_f64().unwrap() > 0.0, "{result}");

    // A graph file is not a task the protocol can evaluate.
    std::fs::write(d.join("mm.ekir"), GRAPH).unwrap();
    let refused = ekb(&["tune", "mm.ekir", "--backend", "cuda"], d);
    assert!(!refused.status.success());
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(err.contains("on a GPU backend, the workloads are tasks of the suite"), "{err}");
}

#[test]
fn with_protocol_the_cpu_candidates_are_measured_by_the_runtime() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let tasks = tasks_dir();
    let args = ["tune", "gemv_mobilenetv2_classifier", "--level", "1", "--dir", tasks.to_str().unwrap()];
    let extra = ["--protocol", "--trials", "3", "--db", "p.jsonl"];
    let all: Vec<&str> = args.iter().chain(&extra).chain(&FAST).copied().collect();
    let stdout = succeeded(&ekb(&all, d));
    assert!(stdout.contains("cpu of `host` by the evaluation protocol"), "{stdout}");
    let recs = records(&d.join("p.jsonl"));
    assert_eq!(recs.len(), 3, "{recs:?}");
    assert!(recs[0]["recipe"].as_str().unwrap().contains("set matmul.tile_cols = "), "{}", recs[0]);
    assert!(recs.iter().all(|r| r["outcome"] == "ok" && r["time_ms"].as_f64().unwrap() > 0.0), "{recs:?}");
    // A board's profile needs a device or a pool to measure on.
    let board = ekb(&["tune", "gemv_mobilenetv2_classifier", "--level", "1", "--target", "rk3588"], d);
    assert!(String::from_utf8_lossy(&board.stderr).contains("`--device ssh://HOST`"));
}

#[test]
fn a_confirmed_export_keeps_the_default_where_the_protocol_finds_the_tuned_program_no_faster() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let tasks = tasks_dir();
    let task =
        ["conv2d_3x3_resnet18_layer1", "--level", "1", "--dir", tasks.to_str().unwrap(), "--db", "c.jsonl"];
    let with = |extra: &[&str]| -> Vec<String> {
        ["tune"].iter().chain(&task).chain(extra).map(|s| s.to_string()).collect()
    };
    let run = |extra: &[&str]| ekb(&with(extra).iter().map(String::as_str).collect::<Vec<_>>(), d);
    succeeded(&run(&["--trials", "1"]));
    // A record claiming a far slower point (one output channel per tile, no Winograd) ten times
    // faster than the default: the best of the database, by its own numbers.
    let db = std::fs::read_to_string(d.join("c.jsonl")).unwrap();
    let mut fake = records(&d.join("c.jsonl")).remove(0);
    let recipe = fake["recipe"]
        .as_str()
        .unwrap()
        .replace("conv.oc_block = 16", "conv.oc_block = 1")
        .replace("conv.winograd_min_channels = 16", "conv.winograd_min_channels = 1048576");
    assert_ne!(recipe, fake["recipe"].as_str().unwrap(), "the default's recipe changed: {recipe}");
    fake["recipe"] = recipe.clone().into();
    fake["program_sha256"] = "slow".into();
    fake["time_ms"] = (fake["time_ms"].as_f64().unwrap() / 10.0).into();
    fake["trial"] = 2.into();
    std::fs::write(d.join("c.jsonl"), format!("{db}{fake}\n")).unwrap();
    let program = |folder: &str| {
        let s = d.join(folder).join("conv2d_3x3_resnet18_layer1/cpu/sample-0");
        (
            std::fs::read_to_string(s.join("candidate.ekir")).unwrap(),
            std::fs::read_to_string(s.join("tuned.recipe")).unwrap(),
        )
    };
    // Exported as it is, the slow point is written; confirmed by the protocol, the default is.
    succeeded(&run(&["--export", "plain"]));
    let (slow, slow_recipe) = program("plain");
    assert_eq!(slow_recipe, recipe);
    let out = run(&["--export", "confirmed", "--confirm"]);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("conv2d_3x3_resnet18_layer1: not confirmed ("), "{stderr}");
    assert!(stderr.contains("1 of them the default"), "{stderr}");
    let (kept, kept_recipe) = program("confirmed");
    assert_ne!(kept, slow);
    assert!(kept_recipe.contains("conv.winograd_min_channels = 16"), "{kept_recipe}");
    // Anchors are not tasks: nothing to confirm them with.
    let anchors = ekb(&["tune", "--anchors", "--export", "a", "--confirm"], d);
    assert!(String::from_utf8_lossy(&anchors.stderr).contains("`--confirm` evaluates tasks of the suite"));
}
