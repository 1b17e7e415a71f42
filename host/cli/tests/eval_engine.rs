//! `ekb eval --baseline engine:onnxruntime` with the real engine (installed by
//! `toolchains/setup.sh`): candidates timed against it with the engine recorded, the report
//! naming it, a task whose result onnxruntime gets wrong recorded as a baseline failure with the
//! candidate's correctness kept, and engines that cannot serve refused before anything runs.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn ekb(dir: &Path) -> Command {
    let rt = ekb_e2e::static_runtime("x86_64-unknown-linux-musl", Path::new(env!("CARGO_TARGET_TMPDIR")));
    let mut c = Command::new(env!("CARGO_BIN_EXE_ekb"));
    c.current_dir(dir).env("EKB_RT_X86_64", rt).env_remove("EKB_RT");
    c
}

/// A task folder with a small relu and the suite's f16 RMSNorm, whose f16 output onnxruntime
/// 1.32 rounds one f16 step away from the reference on seed 0 (one element of 458752).
fn task_folder(root: &Path) -> PathBuf {
    let dir = root.join("tasks/level1");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("t_relu.ekir"),
        "# task: level=1 family=activation domains=[mobile]\n\
         # provenance: model=test layer=relu module=torch.nn.ReLU source=tests\n\
         graph t_relu(x: f32[256,256]) -> (y: f32[256,256]) {\n  %0: f32[256,256] = relu(x)\n  return %0\n}\n",
    )
    .unwrap();
    let suite = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tasks/level1/rms_norm_f16_qwen2_05b.ekir");
    std::fs::copy(suite, dir.join("rms_norm_f16_qwen2_05b.ekir")).unwrap();
    root.join("tasks")
}

fn results(run: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(run.join("results.jsonl")).unwrap();
    text.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

#[test]
fn candidates_are_timed_against_onnxruntime_and_a_wrong_engine_is_a_baseline_failure() {
    let tmp = tempfile::tempdir().unwrap();
    let tasks = task_folder(tmp.path());
    let out = ekb(tmp.path())
        .args(["eval", "--dir", tasks.to_str().unwrap(), "--baseline", "engine:onnxruntime"])
        // Stability is not what this test is about (a busy machine), so no timing is unstable.
        .args(["--budget", "0.1", "--max-ci", "1e9", "--seeds", "0,1,2", "--threads", "1", "--plain"])
        .args(["--out", "run"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let run = tmp.path().join("run");
    let info: Value = serde_json::from_str(&std::fs::read_to_string(run.join("run.json")).unwrap()).unwrap();
    assert_eq!(info["baseline"], "engine:onnxruntime");
    let version = info["tools"]["onnxruntime"].as_str().unwrap();
    let rs = results(&run);
    assert_eq!(rs.len(), 2, "{rs:?}");
    let by_task = |t: &str| rs.iter().find(|r| r["instance"]["task"] == t).unwrap();

    let relu = by_task("t_relu");
    assert_eq!((relu["correct"].as_bool(), &relu["baseline_failure"]), (Some(true), &Value::Null), "{relu}");
    let t = &relu["timing"];
    let speedup = t["speedup"].as_f64().unwrap();
    assert!(speedup > 0.0 && t["ci_low"].as_f64().unwrap() <= speedup, "{t}");
    assert!(speedup <= t["ci_high"].as_f64().unwrap(), "{t}");
    let engine = &t["engine"];
    assert_eq!(
        (engine["engine"].as_str(), engine["threads"].as_u64()),
        (Some("onnxruntime"), Some(1)),
        "{t}"
    );
    assert_eq!(engine["version"].as_str(), Some(version), "{engine}");
    assert!(engine["clock"].as_str().unwrap().contains("perf_counter_ns"), "{engine}");
    assert!(
        t["clock"].as_str().unwrap().starts_with("CLOCK_"),
        "the candidate's clock is the runtime's: {t}"
    );
    // One attempt of 12 rounds (always stable at this --max-ci), a pair of medians each.
    assert_eq!((engine["rounds"].as_u64(), t["pairs"].as_array().unwrap().len()), (Some(12), 12), "{t}");
    assert!(t["baseline"]["median_ns"].as_f64().unwrap() > 0.0 && t["candidate"]["reps"].as_u64() >= Some(1));

    // onnxruntime is wrong on the f16 RMSNorm: no timing, the reason kept, the candidate still
    // checked on its three seeds.
    let rms = by_task("rms_norm_f16_qwen2_05b");
    assert_eq!((rms["compiled"].as_bool(), rms["correct"].as_bool()), (Some(true), Some(true)), "{rms}");
    assert_eq!(rms["timing"], Value::Null);
    let why = rms["baseline_failure"].as_str().unwrap();
    assert!(why.contains("onnxruntime") && why.contains("differ from the reference on seed 0"), "{why}");

    // The report names the baseline, counts the relu's speedup and flags the baseline failure.
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("baseline: speedup vs engine:onnxruntime (an inference engine"), "{stdout}");
    assert!(stdout.contains(&format!("onnxruntime {version}")), "the tools line names it: {stdout}");
    let speedups = stdout.lines().any(|l| {
        let w: Vec<&str> = l.split_whitespace().collect();
        w.len() > 3 && w[0] == "all" && w[1] == "1" && w[2] == "1"
    });
    assert!(speedups, "one instance of the pooled group has a speedup: {stdout}");
    assert!(
        stdout.contains("rms_norm_f16_qwen2_05b") && stdout.contains("differ from the reference"),
        "{stdout}"
    );
}

#[test]
fn engines_that_cannot_serve_the_run_are_refused_before_it_starts() {
    let tmp = tempfile::tempdir().unwrap();
    let tasks = task_folder(tmp.path());
    let refused = |args: &[&str]| {
        let out = ekb(tmp.path())
            .args(["eval", "t_relu", "--dir", tasks.to_str().unwrap(), "--plain", "--out", "never"])
            .args(args)
            .output()
            .unwrap();
        assert!(!out.status.success(), "{args:?} ran");
        assert!(!tmp.path().join("never").exists(), "{args:?} created the run");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let e = refused(&["--baseline", "engine:onnxruntme"]);
    assert!(e.contains("unknown engine `onnxruntme`") && e.contains("did you mean `onnxruntime`?"), "{e}");
    let e = refused(&["--baseline", "engine:torch"]);
    assert!(e.contains("cannot time the cpu instances: torch runs on a CUDA GPU"), "{e}");
    let e = refused(&["--baseline", "engine:onnxruntime", "--device", "ssh://nobody@board.invalid"]);
    assert!(e.contains("the engine runs on this machine only"), "{e}");
    let e = refused(&["--baseline", "engine:onnxruntime", "--backend", "cuda"]);
    assert!(e.contains("cannot time the cuda instances: onnxruntime runs on this machine's CPU"), "{e}");
    let e = refused(&["--baseline", "naiv"]);
    assert!(e.contains("unknown baseline `naiv`") && e.contains("did you mean `naive`?"), "{e}");
}
