//! Running the Python helpers of `python/` (embedded at build time, so an installed `ekb` needs
//! no source tree): onnxruntime on exported models, for tests and baselines.
//!
//! The interpreter is `$EKB_PYTHON`, or `python3`. A missing module is an error that says how to
//! install it; nothing here installs anything. External engines are never needed by the core.

use serde::Deserialize;
use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

/// `python/run_ort.py`.
pub const RUN_ORT: &str = include_str!("../python/run_ort.py");
/// `python/bench_ort.py`.
pub const BENCH_ORT: &str = include_str!("../python/bench_ort.py");

/// The Python interpreter used: `$EKB_PYTHON`, or `python3`.
pub fn python() -> String {
    std::env::var("EKB_PYTHON").ok().filter(|s| !s.is_empty()).unwrap_or_else(|| "python3".into())
}

/// Checks that `modules` import; otherwise an error naming the missing ones and the install
/// command.
pub fn require(modules: &[&str]) -> Result<(), String> {
    let py = python();
    let missing: Vec<&str> = modules
        .iter()
        .copied()
        .filter(|m| {
            !Command::new(&py)
                .args(["-c", &format!("import {m}")])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        })
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    Err(format!(
        "the Python module{} {} {} not available to `{py}`; install with `{py} -m pip install {}` (or run `toolchains/setup.sh`, whose optional Python section installs them)",
        if missing.len() == 1 { "" } else { "s" },
        missing.iter().map(|m| format!("`{m}`")).collect::<Vec<_>>().join(", "),
        if missing.len() == 1 { "is" } else { "are" },
        missing.join(" ")
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

/// What `bench_ort.py` measured.
#[derive(Debug, Clone, Deserialize)]
pub struct OrtBench {
    pub version: String,
    pub providers: Vec<String>,
    pub threads: u32,
    pub warmup: u32,
    pub samples_ns: Vec<u64>,
}

/// Times `model` on the inputs in `inputs`: `warmup` untimed runs, then `samples` timed ones
/// (`threads` = 0: onnxruntime's choice).
pub fn bench_ort(
    model: &std::path::Path,
    inputs: &std::path::Path,
    warmup: u32,
    samples: u32,
    threads: u32,
) -> Result<OrtBench, String> {
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

/// Runs a script with `python -c`, feeding `stdin`; its stdout, or its stderr as the error.
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
        return Err(format!(
            "`{py}` failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}
