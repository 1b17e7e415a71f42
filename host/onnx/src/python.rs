//! Running the Python helpers of `python/` (embedded at build time, so an installed `ekb` needs
//! no source tree): onnxruntime on exported models, for tests and baselines; TVM and MNN for
//! baselines.
//!
//! The interpreter is `$EKB_PYTHON`, or `python3`. A missing module is an error that gives the
//! exact `pip` command installing it; nothing here installs anything. External engines are never
//! needed by the core. The engine helpers write their result to a file named in their job, not
//! to stdout, which the engines' own libraries print to.

use crate::baseline::Tuning;
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// `python/run_ort.py`.
pub const RUN_ORT: &str = include_str!("../python/run_ort.py");
/// `python/bench_ort.py`.
pub const BENCH_ORT: &str = include_str!("../python/bench_ort.py");
/// `python/bench_tvm.py`.
pub const BENCH_TVM: &str = include_str!("../python/bench_tvm.py");
/// `python/bench_mnn.py`.
pub const BENCH_MNN: &str = include_str!("../python/bench_mnn.py");

/// The pip requirements of TVM baselines: apache-tvm 0.27 with the apache-tvm-ffi it was built
/// against (0.1.15 crashes when MetaSchedule serialises IR).
pub const TVM_PIP: &[&str] = &["apache-tvm==0.27.0.post1", "apache-tvm-ffi==0.1.14.post0"];
/// What MetaSchedule tuning needs beyond TVM (its cost model and its local builder and runner).
pub const TVM_TUNE_PIP: &[(&str, &str)] = &[
    ("xgboost", "xgboost-cpu"),
    ("cloudpickle", "cloudpickle"),
    ("psutil", "psutil"),
    ("tornado", "tornado"),
];
/// The pip requirement of MNN baselines.
pub const MNN_PIP: &str = "MNN==3.6.1";

/// The Python interpreter used: `$EKB_PYTHON`, or `python3`.
pub fn python() -> String {
    std::env::var("EKB_PYTHON").ok().filter(|s| !s.is_empty()).unwrap_or_else(|| "python3".into())
}

/// Checks that `modules` import; otherwise an error naming the missing ones and the install
/// command (each module's pip package has the module's name).
pub fn require(modules: &[&str]) -> Result<(), String> {
    let pairs: Vec<(&str, &[&str])> = modules.iter().map(|m| (*m, std::slice::from_ref(m))).collect();
    require_packages(&pairs, "toolchains/setup.sh")
}

/// Checks that each module imports; otherwise an error naming the missing modules and the exact
/// `pip install` command for the packages that provide them (`(module, pip requirements)`), and
/// `setup` as the alternative.
pub fn require_packages(modules: &[(&str, &[&str])], setup: &str) -> Result<(), String> {
    // One interpreter tries every import (importing TVM alone takes a second or two).
    const PROBE: &str = "import importlib, sys\nfor m in sys.argv[1:]:\n    try:\n        importlib.import_module(m)\n    except Exception:\n        print(m)\n";
    let py = python();
    let names: Vec<String> = modules.iter().map(|(m, _)| m.to_string()).collect();
    let out = run_script(PROBE, &names, None)?;
    let failed: Vec<&str> = out.lines().map(str::trim).collect();
    let missing: Vec<&(&str, &[&str])> = modules.iter().filter(|(m, _)| failed.contains(m)).collect();
    if missing.is_empty() {
        return Ok(());
    }
    let mut pip: Vec<String> = Vec::new();
    for req in missing.iter().flat_map(|(_, reqs)| reqs.iter()) {
        let quoted = if req.contains(['=', '<', '>']) { format!("\"{req}\"") } else { req.to_string() };
        if !pip.contains(&quoted) {
            pip.push(quoted);
        }
    }
    Err(format!(
        "the Python module{} {} {} not available to `{py}`; install with `{py} -m pip install {}` (or run `{setup}`)",
        if missing.len() == 1 { "" } else { "s" },
        missing.iter().map(|(m, _)| format!("`{m}`")).collect::<Vec<_>>().join(", "),
        if missing.len() == 1 { "is" } else { "are" },
        pip.join(" ")
    ))
}

/// One model to run: inputs read from `inputs/input.NAME.npy`, outputs written to
/// `outputs/output.NAME.npy`.
#[derive(Debug, Clone, serde::Serialize)]
pub struct OrtJob {
    pub model: PathBuf,
    pub inputs: PathBuf,
    pub outputs: PathBuf,
}

/// Runs every job in one onnxruntime process; returns onnxruntime's version.
pub fn run_ort(jobs: &[OrtJob]) -> Result<String, String> {
    #[derive(Deserialize)]
    struct Done {
        onnxruntime: String,
    }
    let out = run_script(RUN_ORT, &[], Some(serde_json::to_string(jobs).expect("jobs serialise")))?;
    let done: Done =
        serde_json::from_str(out.trim()).map_err(|e| format!("run_ort.py printed `{out}`: {e}"))?;
    Ok(done.onnxruntime)
}

/// What a timing helper (`bench_ort.py`, `bench_tvm.py`, `bench_mnn.py`) measured.
#[derive(Debug, Clone, Deserialize)]
pub struct Bench {
    pub version: String,
    pub providers: Vec<String>,
    pub threads: u32,
    pub warmup: u32,
    pub samples_ns: Vec<u64>,
    /// TVM with MetaSchedule only.
    #[serde(default)]
    pub tuning: Option<Tuning>,
}

/// A model to time in a helper that also writes the outputs of its last run: inputs from
/// `inputs/input.NAME.npy`, outputs to `outputs/output.NAME.npy`, the [`Bench`] to `result`.
#[derive(Debug, Clone, Serialize)]
pub struct BenchJob {
    pub model: PathBuf,
    pub inputs: PathBuf,
    pub outputs: PathBuf,
    pub result: PathBuf,
    pub warmup: u32,
    pub samples: u32,
    /// 0: the engine's choice.
    pub threads: u32,
}

/// A TVM job: the LLVM CPU (`native`: this machine's) and features, and the MetaSchedule trials
/// (0: untuned) with the records' root folder and the graph's key in it.
#[derive(Debug, Clone, Serialize)]
pub struct TvmJob {
    #[serde(flatten)]
    pub job: BenchJob,
    pub mcpu: String,
    pub mattr: Vec<String>,
    pub tune_trials: u32,
    pub tune_root: PathBuf,
    pub graph_key: String,
}

/// Compiles and times a model in TVM (`bench_tvm.py`).
pub fn bench_tvm(job: &TvmJob) -> Result<Bench, String> {
    bench_job(
        BENCH_TVM,
        "bench_tvm.py",
        &serde_json::to_string(job).expect("jobs serialise"),
        &job.job.result,
    )
}

/// Converts and times a model in MNN (`bench_mnn.py`).
pub fn bench_mnn(job: &BenchJob) -> Result<Bench, String> {
    bench_job(BENCH_MNN, "bench_mnn.py", &serde_json::to_string(job).expect("jobs serialise"), &job.result)
}

fn bench_job(script: &str, name: &str, job: &str, result: &Path) -> Result<Bench, String> {
    run_script(script, &[], Some(job.to_string()))?;
    let text = std::fs::read_to_string(result)
        .map_err(|e| format!("{name} wrote no result (`{}`: {e})", result.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{name} wrote `{text}`: {e}"))
}

/// Times `model` on the inputs in `inputs`: `warmup` untimed runs, then `samples` timed ones
/// (`threads` = 0: onnxruntime's choice).
pub fn bench_ort(
    model: &std::path::Path,
    inputs: &std::path::Path,
    warmup: u32,
    samples: u32,
    threads: u32,
) -> Result<Bench, String> {
    let args = [
        model.display().to_string(),
        inputs.display().to_string(),
        warmup.to_string(),
        samples.to_string(),
        threads.to_string(),
    ];
    let out = run_script(BENCH_ORT, &args, None)?;
    serde_json::from_str(out.trim()).map_err(|e| format!("bench_ort.py printed `{out}`: {e}"))
}

/// Runs a script with `python -c`, feeding `stdin`; its stdout, or its stderr (and the end of its
/// stdout, where engines print their own errors) as the error.
fn run_script(script: &str, args: &[String], stdin: Option<String>) -> Result<String, String> {
    let py = python();
    let mut child = Command::new(&py)
        .arg("-c")
        .arg(script)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run `{py}`: {e}"))?;
    let mut pipe = child.stdin.take().expect("stdin is piped");
    let input = stdin.unwrap_or_default();
    let writer = std::thread::spawn(move || pipe.write_all(input.as_bytes()));
    let out = child.wait_with_output().map_err(|e| format!("`{py}` failed: {e}"))?;
    let _ = writer.join();
    if !out.status.success() {
        let stdout = String::from_utf8_lossy(&out.stdout);
        let lines: Vec<&str> = stdout.trim().lines().collect();
        let tail = lines[lines.len().saturating_sub(10)..].join("\n");
        return Err(format!(
            "`{py}` failed ({}): {}{}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim(),
            if tail.is_empty() { String::new() } else { format!("\n(its output ended with:)\n{tail}") }
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_module_names_the_exact_pip_command() {
        let e = require_packages(
            &[
                ("json", &["json"]),
                ("ekb_no_such_module", &["ekb-no-such==1.2", "other"]),
                ("ekb_no_such_either", &["other"]),
            ],
            "setup --x",
        )
        .unwrap_err();
        let py = python();
        assert_eq!(
            e,
            format!(
                "the Python modules `ekb_no_such_module`, `ekb_no_such_either` are not available to `{py}`; install with `{py} -m pip install \"ekb-no-such==1.2\" other` (or run `setup --x`)"
            )
        );
        assert_eq!(require_packages(&[("json", &["json"]), ("os", &["os"])], "s"), Ok(()));
    }

    #[test]
    fn setup_installs_the_pins_ekb_names() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../toolchains/setup.sh");
        let setup = std::fs::read_to_string(path).unwrap();
        let pin = |req: &str| {
            let (dist, version) = req.split_once("==").unwrap();
            format!("(\"{dist}\", \"{version}\")")
        };
        for req in TVM_PIP.iter().chain([&MNN_PIP]) {
            assert!(setup.contains(&pin(req)), "setup.sh does not pin {req}");
        }
        for (module, dist) in TVM_TUNE_PIP {
            assert!(setup.contains(&format!("(\"{module}\", \"{dist}\")")), "setup.sh lacks {dist}");
        }
    }
}
