//! `ekb eval` as users run it: an uninterrupted run, and a run killed (SIGKILL) after its first
//! stored result and continued with `--resume`, end with the same candidates and the same
//! outcomes, each stored exactly once.

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn ekb(dir: &Path) -> Command {
    let rt = ekb_e2e::static_runtime("x86_64-unknown-linux-musl", Path::new(env!("CARGO_TARGET_TMPDIR")));
    let mut c = Command::new(env!("CARGO_BIN_EXE_ekb"));
    c.current_dir(dir).env("EKB_RT_X86_64", rt).env_remove("EKB_RT");
    c
}

/// A task folder of four small tasks (two of them with a broken candidate-free twin: the
/// evaluation does not read twins).
fn task_folder(root: &Path) -> PathBuf {
    let dir = root.join("tasks/level1");
    std::fs::create_dir_all(&dir).unwrap();
    for (name, op) in [("t_relu", "relu"), ("t_sigmoid", "sigmoid"), ("t_tanh", "tanh"), ("t_exp", "exp")] {
        std::fs::write(
            dir.join(format!("{name}.ekir")),
            format!(
                "# task: level=1 family=activation domains=[mobile]\n\
                 # provenance: model=test layer={op} module=torch.nn.{op} source=tests\n\
                 graph {name}(x: f32[128,128]) -> (y: f32[128,128]) {{\n  %0: f32[128,128] = {op}(x)\n  return %0\n}}\n"
            ),
        )
        .unwrap();
    }
    root.join("tasks")
}

/// key -> (compiled, correct, failure class) of every stored result (a last line cut short by
/// the kill is not a result); panics on a duplicate.
fn outcomes(run: &Path) -> BTreeMap<String, (bool, bool, Value)> {
    let text = std::fs::read_to_string(run.join("results.jsonl")).unwrap();
    let mut out = BTreeMap::new();
    for line in text.split_inclusive('\n').filter(|l| l.ends_with('\n')) {
        let r: Value = serde_json::from_str(line).unwrap();
        let key = format!("{} {} {}", r["instance"]["task"], r["instance"]["backend"], r["sample"]);
        let v = (
            r["compiled"].as_bool().unwrap(),
            r["correct"].as_bool().unwrap(),
            r["failure"]["class"].clone(),
        );
        assert!(out.insert(key.clone(), v).is_none(), "{key} stored twice");
    }
    out
}

#[test]
fn a_killed_run_resumed_ends_like_an_uninterrupted_one() {
    let tmp = tempfile::tempdir().unwrap();
    let tasks = task_folder(tmp.path());
    let args = |out: &str| -> Vec<String> {
        // Timing stability is not what this test is about: on a busy machine it could differ
        // between the two runs, so no side is ever judged unstable here.
        let ci = "1e9";
        ["eval", "--dir", tasks.to_str().unwrap(), "--budget", "0.3", "--max-ci", ci, "--plain", "--out", out]
            .iter()
            .map(|s| s.to_string())
            .collect()
    };

    let full = ekb(tmp.path()).args(args("full")).output().unwrap();
    assert!(full.status.success(), "{}", String::from_utf8_lossy(&full.stderr));
    let expected = outcomes(&tmp.path().join("full"));
    assert_eq!(expected.len(), 4);
    assert!(expected.values().all(|(compiled, correct, _)| *compiled && *correct), "{expected:?}");
    // The report's pooled row: all 4 instances, Compile@1 and Correct@1 100%.
    let stdout = String::from_utf8_lossy(&full.stdout);
    let pooled = stdout.lines().any(|l| {
        let w: Vec<&str> = l.split_whitespace().collect();
        w.len() > 4 && w[..5] == ["all", "4", "1", "100.0%", "100.0%"]
    });
    assert!(pooled, "{stdout}");
    assert!(tmp.path().join("full/report.html").is_file());

    // Kill the second run as soon as its first result is on disk.
    let part = tmp.path().join("part");
    let mut child =
        ekb(tmp.path()).args(args("part")).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
    let start = Instant::now();
    loop {
        let lines = std::fs::read_to_string(part.join("results.jsonl")).map_or(0, |t| t.lines().count());
        if lines >= 1 {
            break;
        }
        assert!(start.elapsed() < Duration::from_secs(120), "no result after 2 minutes");
        assert!(child.try_wait().unwrap().is_none(), "the run ended before it could be killed");
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let stored = outcomes(&part).len();
    assert!((1..4).contains(&stored), "{stored} stored before the kill");

    // Without --resume the folder is refused; with it the run completes.
    let again = ekb(tmp.path()).args(args("part")).output().unwrap();
    assert!(!again.status.success());
    assert!(
        String::from_utf8_lossy(&again.stderr).contains("--resume"),
        "{}",
        String::from_utf8_lossy(&again.stderr)
    );
    let mut resume = args("part");
    resume.push("--resume".into());
    let resumed = ekb(tmp.path()).args(&resume).output().unwrap();
    let stderr = String::from_utf8_lossy(&resumed.stderr);
    assert!(resumed.status.success(), "{stderr}");
    assert!(stderr.contains(&format!("resuming: {stored} of 4 candidate(s) already stored")), "{stderr}");
    assert_eq!(outcomes(&part), expected);

    // The correctness seeds are drawn per run and recorded in run.json (a resumed run keeps
    // the ones it stored: it was refused otherwise); `--seeds` fixes them.
    let seeds = |run: &str| -> Vec<u64> {
        let info: Value =
            serde_json::from_str(&std::fs::read_to_string(tmp.path().join(run).join("run.json")).unwrap())
                .unwrap();
        info["seeds"].as_array().unwrap().iter().map(|s| s.as_u64().unwrap()).collect()
    };
    let (a, b) = (seeds("full"), seeds("part"));
    assert_eq!(a.len(), 3, "{a:?}");
    assert_ne!(a, b, "two runs drew the same seeds");
    let mut fixed = args("fixed");
    fixed.extend(["t_relu".to_string(), "--seeds".into(), "5,6,7".into()]);
    let out = ekb(tmp.path()).args(&fixed).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(seeds("fixed"), vec![5, 6, 7]);
    let mut twice = args("twice");
    twice.extend(["--seeds".to_string(), "5,5".into()]);
    let out = ekb(tmp.path()).args(&twice).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("lists a seed twice"));
}

/// On a device that is not this machine's CPU (here qemu; a GPU, a board) each candidate is
/// built while the one before it runs, a new instance with its references and baseline; the
/// results are those of builds in turn, and the time line counts what ran beside the device.
/// On this machine's CPU nothing is built beside the timing.
#[test]
fn candidates_are_built_ahead_only_beside_a_device_elsewhere() {
    let tmp = tempfile::tempdir().unwrap();
    let tasks = task_folder(tmp.path());
    let aarch64 =
        ekb_e2e::static_runtime("aarch64-unknown-linux-musl", Path::new(env!("CARGO_TARGET_TMPDIR")));
    let run = |out: &str, extra: &[&str]| {
        let o = ekb(tmp.path())
            .env("EKB_RT_AARCH64", &aarch64)
            .args(["eval", "--dir", tasks.to_str().unwrap(), "--samples", "2", "--budget", "0.1"])
            .args(["--max-ci", "1e9", "--plain", "--out", out])
            .args(extra)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let text = std::fs::read_to_string(tmp.path().join(out).join("results.jsonl")).unwrap();
        let results: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        assert_eq!(results.len(), 8, "{text}");
        assert!(results.iter().all(|r| r["correct"].as_bool().unwrap()), "{text}");
        assert!(!tmp.path().join(out).join("in_flight_ahead.json").exists());
        (String::from_utf8_lossy(&o.stdout).into_owned(), results)
    };
    let (stdout, results) = run("qemu", &["--target", "aarch64-qemu", "--device", "qemu"]);
    let ahead: Vec<f64> = results.iter().map(|r| r["seconds"]["ahead"].as_f64().unwrap()).collect();
    // The first candidate waits for its build; the seven after it were built ahead, the new
    // instances' baselines with them (the build of each first sample counts its baseline's).
    assert_eq!(ahead[0], 0.0, "{ahead:?}");
    assert!(ahead[1..].iter().all(|&a| a > 0.0), "{ahead:?}");
    for r in &results {
        assert!(
            r["seconds"]["ahead"].as_f64().unwrap() <= r["seconds"]["build"].as_f64().unwrap() + 1e-6,
            "{r}"
        );
    }
    assert!(stdout.contains("of it beside the device"), "{stdout}");
    let (stdout, results) = run("local", &[]);
    assert!(results.iter().all(|r| r["seconds"]["ahead"] == 0.0), "{results:?}");
    assert!(!stdout.contains("beside the device"), "{stdout}");
}

#[test]
fn gpu_instances_run_on_the_gpu_runtime_and_a_wrong_profile_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("tasks/level1");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("t_gelu.ekir"),
        "# task: level=1 family=activation domains=[aiot,robotics]\n\
         # provenance: model=test layer=gelu module=torch.nn.GELU source=tests\n\
         graph t_gelu(x: f32[256,256]) -> (y: f32[256,256]) {\n  %0: f32[256,256] = gelu(x, approximate=none)\n  return %0\n}\n",
    )
    .unwrap();
    let gpu_rt = ekb_e2e::opencl_runtime(Path::new(env!("CARGO_TARGET_TMPDIR")));
    let tasks = tmp.path().join("tasks");
    let eval = |extra: &[&str]| {
        let mut c = ekb(tmp.path());
        c.env("EKB_RT_GPU", &gpu_rt).args(["eval", "--dir", tasks.to_str().unwrap(), "--budget", "0.2"]);
        c.args(["--max-ci", "1e9", "--plain"]).args(extra).output().unwrap()
    };
    let out = eval(&["--backend", "opencl", "--out", "cl"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("opencl on pocl"), "{stderr}");
    let got = outcomes(&tmp.path().join("cl"));
    assert_eq!(got.len(), 1);
    assert_eq!(got["\"t_gelu\" \"opencl\" 0"], (true, true, Value::Null), "{got:?}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("opencl: target pocl on local") && stdout.contains(", GPU "), "{stdout}");
    // A CUDA instance built for an OpenCL profile: refused before anything runs.
    let out = eval(&["--backend", "cuda", "--cuda-target", "pocl", "--out", "cu"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("target `pocl` cannot build the cuda instances: its GPU runs OpenCL"),
        "{stderr}"
    );
    assert!(!tmp.path().join("cu").exists(), "nothing is created for a refused plan");
}

/// A schedule trace written by hand for a Level-1 task is a candidate like any other: compiled
/// (the task's naive lowering rewritten by the trace), checked and timed; a trace with an
/// illegal step is a `syntax_api` failure whose evidence names the step, its line and why.
#[test]
fn a_hand_written_trace_is_evaluated_and_an_illegal_step_is_a_syntax_api_failure() {
    let tmp = tempfile::tempdir().unwrap();
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let cands = tmp.path().join("cands");
    let traces = [
        "# threads on channel-rows, lanes on columns\nfuse k0_add.i1, i2 -> f\nparallel f\nvectorize i3\n",
        "# vectorize a loop that is not innermost\nvectorize k0_add.i1\n",
    ];
    for (i, t) in traces.iter().enumerate() {
        let d = cands.join(format!("add_resnet18_residual/cpu/sample-{i}"));
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("candidate.trace"), t).unwrap();
    }
    let out = tmp.path().join("run");
    let o = ekb(tmp.path())
        .args(["eval", "add_resnet18_residual", "--level", "1", "--backend", "cpu", "--samples", "2"])
        .args(["--budget", "0.3", "--max-ci", "1e9", "--plain", "--dir"])
        .arg(repo.join("tasks"))
        .arg("--candidates")
        .arg(&cands)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = std::fs::read_to_string(out.join("results.jsonl")).unwrap();
    let results: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let sample = |s: u64| results.iter().find(|r| r["sample"] == s).expect("stored");
    let good = sample(0);
    assert_eq!(good["candidate"]["kind"], "trace", "{good}");
    assert!(good["compiled"].as_bool().unwrap() && good["correct"].as_bool().unwrap(), "{good}");
    assert!(good["timing"]["speedup"].as_f64().is_some(), "{good}");
    // The trace replayed on the lowering of the graph as written: the graph passes have nothing
    // to rewrite in one `add`, so the program is the same size both ways.
    let passes = &good["passes"];
    assert!(passes["after"]["kernels"].as_u64().unwrap() >= 1, "{good}");
    assert_eq!(passes["before"], passes["after"], "{good}");
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("kernels 1 -> 1"),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    let bad = sample(1);
    assert_eq!(bad["failure"]["class"], "syntax_api", "{bad}");
    let evidence = bad["failure"]["evidence"].as_str().unwrap();
    assert!(evidence.contains("step 1 (`vectorize k0_add.i1`) is refused"), "{evidence}");
    assert!(evidence.contains("not innermost") && evidence.contains(":2:1"), "{evidence}");
}

#[test]
fn the_self_check_times_each_instance_against_itself_and_itself_twice() {
    let tmp = tempfile::tempdir().unwrap();
    let tasks = task_folder(tmp.path());
    let o = ekb(tmp.path())
        .args(["bench", "--self-check", "t_*", "--budget", "0.3", "--dir", tasks.to_str().unwrap()])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // A line per instance, each with both ratios (whether they pass depends on the machine),
    // and the share that passes.
    for t in ["t_relu", "t_sigmoid", "t_tanh", "t_exp"] {
        let line = stdout.lines().find(|l| l.starts_with(t)).unwrap_or_else(|| panic!("{t}: {stdout}"));
        let ratios: Vec<f64> = line.split_whitespace().filter_map(|w| w.parse::<f64>().ok()).collect();
        assert_eq!(ratios.len(), 2, "{line}");
        assert!((0.8..1.25).contains(&ratios[0]), "A/A: {line}");
        assert!((0.4..0.625).contains(&ratios[1]), "plan twice: {line}");
    }
    assert!(stdout.contains("self-check: ") && stdout.contains(" of 4 instances pass ("), "{stdout}");
}

/// An L1 candidate for `t_relu` (x, y: f32[128,128]) whose store, inside the loops over `i` and
/// `j`, is `stmts`.
fn t_relu_l1(stmts: &str) -> String {
    format!(
        "module t_relu {{\n  input x: f32[128,128]\n  output y: f32[128,128]\n  \
         kernel k(x: f32[128,128] in, y: f32[128,128] out) {{\n    for i in 0..128 {{\n      \
         for j in 0..128 {{\n{stmts}\n      }}\n    }}\n  }}\n  run k(x, y)\n}}\n"
    )
}

/// Writes `texts` as samples 0, 1, ... of `t_relu` on the CPU in the folder `cands`.
fn write_candidates(cands: &Path, texts: &[String]) {
    for (i, text) in texts.iter().enumerate() {
        let d = cands.join(format!("t_relu/cpu/sample-{i}"));
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("candidate.ekir"), text).unwrap();
    }
}

/// A candidate whose expression once overflowed the evaluator's stack (a chain of 15,000 terms:
/// the process died, and died again on `--resume`), one that crashes on the device, and good
/// ones: the run finishes with each classified.
#[test]
fn a_too_deep_a_crashing_and_good_candidates_are_each_classified() {
    let tmp = tempfile::tempdir().unwrap();
    let tasks = task_folder(tmp.path());
    let cands = tmp.path().join("cands");
    let chain = vec!["v"; 15_000].join(" + ");
    write_candidates(
        &cands,
        &[
            t_relu_l1("        y[i, j] = max(x[i, j], 0.0)"),
            t_relu_l1(&format!("        let v = x[i, j]\n        y[i, j] = max({chain}, 0.0)")),
            t_relu_l1("        let d = i32(x[i, j] * 0.0)\n        y[i, j] = f32(64 / d)"),
            t_relu_l1("        y[i, j] = select(x[i, j] > 0.0, x[i, j], 0.0)"),
        ],
    );
    let out = tmp.path().join("run");
    let o = ekb(tmp.path())
        .args(["eval", "t_relu", "--samples", "4", "--budget", "0.3", "--max-ci", "1e9", "--plain", "--dir"])
        .arg(&tasks)
        .arg("--candidates")
        .arg(&cands)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let got = outcomes(&out);
    assert_eq!(got.len(), 4, "{got:?}");
    let key = |s: u32| format!("\"t_relu\" \"cpu\" {s}");
    for s in [0, 3] {
        assert_eq!(got[&key(s)], (true, true, Value::Null), "sample {s}");
    }
    assert_eq!(got[&key(1)], (false, false, Value::from("syntax_api")));
    assert_eq!(got[&key(2)], (true, false, Value::from("runtime")));
    let text = std::fs::read_to_string(out.join("results.jsonl")).unwrap();
    let deep: Value =
        serde_json::from_str(text.lines().find(|l| l.contains("\"sample\":1")).unwrap()).unwrap();
    let evidence = deep["failure"]["evidence"].as_str().unwrap();
    assert!(evidence.contains("nests more than 256 levels deep") && evidence.contains(":8:"), "{evidence}");
    assert!(!out.join("in_flight.json").exists(), "the marker is removed once every result is stored");
}

/// The evaluator's own process crashing while a candidate is in flight (here: SIGABRT, which is
/// how a stack overflow or an abort ends) leaves the candidate named in `crashed.json`; the
/// resumed run records it as failed, `compile` while it was being built and `runtime` while it
/// ran, instead of evaluating it again.
#[test]
fn a_candidate_the_evaluator_crashed_on_is_recorded_as_failed_on_resume() {
    let tmp = tempfile::tempdir().unwrap();
    let tasks = task_folder(tmp.path());
    let cands = tmp.path().join("cands");
    let good = t_relu_l1("        y[i, j] = max(x[i, j], 0.0)");
    // Takes seconds to build (a thousand statements of 100-term sums), so that the crash comes
    // while it is built.
    let chain = vec!["x[i, j]"; 100].join(" + ");
    let mut heavy: Vec<String> =
        (0..1000).map(|s| format!("        let v{s} = max({chain}, {s}.0)")).collect();
    heavy.push(format!(
        "        y[i, j] = {}",
        (0..1000).step_by(100).map(|s| format!("v{s}")).collect::<Vec<_>>().join(" + ")
    ));
    // Runs until the execution limit, so that the crash comes while it runs.
    let slow = t_relu_l1(
        "        alloc acc: f32[1] local\n        acc[0] = 0.0\n        for a in 0..2000000000 {\n          \
         acc[0] = acc[0] * 1.0000001 + x[i, j]\n        }\n        y[i, j] = acc[0]",
    );
    write_candidates(&cands, &[good.clone(), t_relu_l1(&heavy.join("\n")), slow, good]);
    let out = tmp.path().join("run");
    let args = |resume: bool| {
        let mut a: Vec<String> = ["eval", "t_relu", "--samples", "4", "--budget", "0.3", "--max-ci", "1e9"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        a.extend(["--plain", "--dir"].map(String::from));
        a.push(tasks.display().to_string());
        a.extend([
            "--candidates".into(),
            cands.display().to_string(),
            "--out".into(),
            out.display().to_string(),
        ]);
        if resume {
            a.push("--resume".into());
        }
        a
    };
    let marker = out.join("in_flight.json");
    // Runs the evaluation (resumed after the first time) and aborts it once `sample` is at `stage`.
    let abort_at = |sample: u32, stage: &str, resume: bool| {
        let mut child =
            ekb(tmp.path()).args(args(resume)).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
        let start = Instant::now();
        loop {
            let m = std::fs::read_to_string(&marker).unwrap_or_default();
            if m.contains(&format!("\"sample\":{sample},")) && m.contains(&format!("\"stage\":\"{stage}\"")) {
                break;
            }
            assert!(start.elapsed() < Duration::from_secs(120), "sample {sample} never reached {stage}: {m}");
            assert!(
                child.try_wait().unwrap().is_none(),
                "the run ended before sample {sample} reached {stage}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        let kill = Command::new("kill").args(["-ABRT", &child.id().to_string()]).status().unwrap();
        assert!(kill.success());
        assert!(!child.wait().unwrap().success());
        assert!(out.join("crashed.json").is_file() && !marker.exists(), "the handler renamed the marker");
    };
    abort_at(1, "build", false);
    assert_eq!(outcomes(&out).len(), 1);
    // The resumed run records sample 1 and goes on to sample 2, aborted in turn while it runs.
    abort_at(2, "run", true);
    assert_eq!(outcomes(&out).len(), 2);

    let resumed = ekb(tmp.path()).args(args(true)).output().unwrap();
    let stderr = String::from_utf8_lossy(&resumed.stderr);
    assert!(resumed.status.success(), "{stderr}");
    assert!(stderr.contains("t_relu on cpu sample 2: the evaluator crashed on it"), "{stderr}");
    let got = outcomes(&out);
    let key = |s: u32| format!("\"t_relu\" \"cpu\" {s}");
    assert_eq!(got[&key(0)], (true, true, Value::Null));
    assert_eq!(got[&key(1)], (false, false, Value::from("compile")));
    assert_eq!(got[&key(2)], (true, false, Value::from("runtime")));
    assert_eq!(got[&key(3)], (true, true, Value::Null));
    let text = std::fs::read_to_string(out.join("results.jsonl")).unwrap();
    let evidence = |s: u32| -> String {
        let r: Value =
            serde_json::from_str(text.lines().find(|l| l.contains(&format!("\"sample\":{s},"))).unwrap())
                .unwrap();
        r["failure"]["evidence"].as_str().unwrap().to_string()
    };
    assert!(evidence(1).contains("died of a signal while building it"), "{}", evidence(1));
    assert!(evidence(2).contains("died of a signal while running it"), "{}", evidence(2));
    assert!(!out.join("crashed.json").exists() && !marker.exists());
}

/// A crash on the thread that builds the next candidate while one runs (qemu here: builds go
/// ahead on a device elsewhere) is that candidate's: the resumed run records it as failed to
/// build, and evaluates the candidate that was running again.
#[test]
fn a_crash_while_building_ahead_is_the_built_candidates() {
    let tmp = tempfile::tempdir().unwrap();
    let tasks = task_folder(tmp.path());
    let cands = tmp.path().join("cands");
    let good = t_relu_l1("        y[i, j] = max(x[i, j], 0.0)");
    // Runs until the execution limit, long enough under qemu for the next build to start.
    let slow = t_relu_l1(
        "        alloc acc: f32[1] local\n        acc[0] = 0.0\n        for a in 0..2000000000 {\n          \
         acc[0] = acc[0] * 1.0000001 + x[i, j]\n        }\n        y[i, j] = acc[0]",
    );
    // Takes seconds to build (see above).
    let chain = vec!["x[i, j]"; 100].join(" + ");
    let mut heavy: Vec<String> =
        (0..1000).map(|s| format!("        let v{s} = max({chain}, {s}.0)")).collect();
    heavy.push(format!(
        "        y[i, j] = {}",
        (0..1000).step_by(100).map(|s| format!("v{s}")).collect::<Vec<_>>().join(" + ")
    ));
    write_candidates(&cands, &[slow, t_relu_l1(&heavy.join("\n")), good]);
    let aarch64 =
        ekb_e2e::static_runtime("aarch64-unknown-linux-musl", Path::new(env!("CARGO_TARGET_TMPDIR")));
    let out = tmp.path().join("run");
    let eval = |resume: bool| {
        let mut c = ekb(tmp.path());
        c.env("EKB_RT_AARCH64", &aarch64)
            .args([
                "eval",
                "t_relu",
                "--samples",
                "3",
                "--budget",
                "0.1",
                "--max-ci",
                "1e9",
                "--timeout",
                "5",
            ])
            .args(["--target", "aarch64-qemu", "--device", "qemu", "--plain", "--dir"])
            .arg(&tasks)
            .arg("--candidates")
            .arg(&cands)
            .arg("--out")
            .arg(&out);
        if resume {
            c.arg("--resume");
        }
        c
    };
    let mut child = eval(false).stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap();
    let ahead = out.join("in_flight_ahead.json");
    let start = Instant::now();
    let builder = loop {
        let m = std::fs::read_to_string(&ahead).unwrap_or_default();
        if m.contains("\"sample\":1,") {
            let tasks = std::fs::read_dir(format!("/proc/{}/task", child.id())).unwrap();
            let named = tasks.filter_map(|t| t.ok()).find(|t| {
                std::fs::read_to_string(t.path().join("comm")).is_ok_and(|c| c.trim() == "build-ahead")
            });
            if let Some(t) = named {
                break t.file_name().to_string_lossy().parse::<i32>().unwrap();
            }
        }
        assert!(start.elapsed() < Duration::from_secs(120), "sample 1 was never built ahead: {m}");
        assert!(child.try_wait().unwrap().is_none(), "the run ended before sample 1 was built ahead");
        std::thread::sleep(Duration::from_millis(10));
    };
    // SAFETY: a signal to one thread of the child, which is alive (not waited for yet).
    let sent = unsafe { libc::syscall(libc::SYS_tgkill, child.id() as i32, builder, libc::SIGABRT) };
    assert_eq!(sent, 0);
    assert!(!child.wait().unwrap().success());
    let crashed = std::fs::read_to_string(out.join("crashed.json")).unwrap();
    assert!(crashed.contains("\"sample\":1,") && crashed.contains("\"stage\":\"build\""), "{crashed}");
    let running = std::fs::read_to_string(out.join("in_flight.json")).unwrap();
    assert!(running.contains("\"sample\":0,"), "{running}");

    let resumed = eval(true).output().unwrap();
    let stderr = String::from_utf8_lossy(&resumed.stderr);
    assert!(resumed.status.success(), "{stderr}");
    assert!(stderr.contains("t_relu on cpu sample 1: the evaluator crashed on it"), "{stderr}");
    let got = outcomes(&out);
    let key = |s: u32| format!("\"t_relu\" \"cpu\" {s}");
    assert_eq!(got.len(), 3, "{got:?}");
    assert_eq!(got[&key(1)], (false, false, Value::from("compile")));
    // The running candidate was evaluated again: its own verdict, not the crash's.
    assert_ne!(got[&key(0)].2, Value::from("compile"));
    assert_eq!(got[&key(2)], (true, true, Value::Null));
    assert!(!out.join("crashed.json").exists() && !ahead.exists());
}
