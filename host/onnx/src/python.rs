//! Running the Python helpers of `python/` (embedded at build time, so an installed `ekb` needs
//! no source tree): onnxruntime on exported models, for tests and baselines; TVM and MNN for
//! baselines.
//!
//! The interpreter is `$EKB_PYTHON`, or `python3`. A missing module is an error that gives the
//! exact `pip` command installing it; nothing here installs anything. External engines are never
//! needed by the core. The engine helpers write their result to a file named in their job, not
//! to stdout, which the engines' own libraries print to; a helper asked to serve ([`Server`])
//! then answers timing requests with lines marked as its replies.

use crate::baseline::Tuning;
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// `python/run_ort.py`.
pub const RUN_ORT: &str = include_str!("../python/run_ort.py");
/// `python/bench_ort.py`.
const BENCH_ORT: &str = include_str!("../python/bench_ort.py");
/// `python/bench_tvm.py`.
const BENCH_TVM: &str = include_str!("../python/bench_tvm.py");
/// `python/bench_mnn.py`.
const BENCH_MNN: &str = include_str!("../python/bench_mnn.py");

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

/// `python/serve.py`: the serving loop, prepended to every timing helper.
pub const SERVE: &str = include_str!("../python/serve.py");

/// The prefix of every reply line of a serving helper (`REPLY` in `serve.py`).
const REPLY: &str = "ekb-reply ";

/// The timing helpers, one per engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Helper {
    Ort,
    Tvm,
    Mnn,
}

impl Helper {
    fn name(self) -> &'static str {
        match self {
            Helper::Ort => "bench_ort.py",
            Helper::Tvm => "bench_tvm.py",
            Helper::Mnn => "bench_mnn.py",
        }
    }

    /// The script as it runs: `serve.py`, then the helper.
    fn script(self) -> String {
        let body = match self {
            Helper::Ort => BENCH_ORT,
            Helper::Tvm => BENCH_TVM,
            Helper::Mnn => BENCH_MNN,
        };
        format!("{SERVE}\n{body}")
    }
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
    /// Keep the engine loaded afterwards and time it on request ([`Server`]).
    pub serve: bool,
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

/// Runs a timing helper on `job` (its JSON; `job.serve` as in `result`'s job) and reads the
/// [`Bench`] it wrote to `result`. With `serve`, the helper stays up afterwards: the
/// [`Server`] times it on request.
pub fn bench(
    helper: Helper,
    job: &str,
    result: &Path,
    serve: bool,
) -> Result<(Bench, Option<Server>), String> {
    let read = || {
        let text = std::fs::read_to_string(result)
            .map_err(|e| format!("{} wrote no result (`{}`: {e})", helper.name(), result.display()))?;
        serde_json::from_str(&text).map_err(|e| format!("{} wrote `{text}`: {e}", helper.name()))
    };
    if !serve {
        run_script(&helper.script(), &[], Some(job.to_string()))?;
        return Ok((read()?, None));
    }
    let mut server = Server::start(helper, job)?;
    server.reply()?; // {"ready": true}
    Ok((read()?, Some(server)))
}

/// A timing helper serving requests (`serve.py`): its engine stays loaded and warm, and each
/// [`Server::time`] times a number of runs. Dropping it ends the helper.
pub struct Server {
    helper: Helper,
    child: std::process::Child,
    stdin: Option<std::process::ChildStdin>,
    stdout: std::io::BufReader<std::process::ChildStdout>,
    /// Everything the helper wrote to stderr so far (drained by a thread, for errors).
    stderr: std::sync::Arc<std::sync::Mutex<String>>,
}

impl Server {
    fn start(helper: Helper, job: &str) -> Result<Server, String> {
        let py = python();
        let mut child = Command::new(&py)
            .arg("-c")
            .arg(helper.script())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot run `{py}`: {e}"))?;
        let stderr = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        let mut err = child.stderr.take().expect("stderr is piped");
        let sink = stderr.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n @ 1..) = std::io::Read::read(&mut err, &mut buf) {
                sink.lock().expect("stderr sink").push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        });
        let stdout = std::io::BufReader::new(child.stdout.take().expect("stdout is piped"));
        let mut server = Server { helper, stdin: child.stdin.take(), child, stdout, stderr };
        server.send(&format!("{}\n", job.trim_end()))?;
        Ok(server)
    }

    fn send(&mut self, line: &str) -> Result<(), String> {
        let pipe = self.stdin.as_mut().expect("stdin stays open while serving");
        pipe.write_all(line.as_bytes()).and_then(|()| pipe.flush()).map_err(|e| self.failed(&e.to_string()))
    }

    /// The next reply line's JSON (other lines are the engine's own output).
    fn reply(&mut self) -> Result<String, String> {
        let mut line = String::new();
        loop {
            line.clear();
            match std::io::BufRead::read_line(&mut self.stdout, &mut line) {
                Ok(0) => return Err(self.failed("it ended")),
                Ok(_) => {
                    if let Some(json) = line.strip_prefix(REPLY) {
                        return Ok(json.trim().to_string());
                    }
                }
                Err(e) => return Err(self.failed(&e.to_string())),
            }
        }
    }

    /// An error naming the helper, what happened and the end of its stderr.
    fn failed(&mut self, what: &str) -> String {
        let status = self.child.try_wait().ok().flatten().map(|s| format!(" ({s})")).unwrap_or_default();
        let err = self.stderr.lock().expect("stderr sink").clone();
        let lines: Vec<&str> = err.trim().lines().collect();
        let tail = lines[lines.len().saturating_sub(10)..].join("\n");
        format!(
            "{} stopped serving{status}: {what}{}",
            self.helper.name(),
            if tail.is_empty() { String::new() } else { format!("\n{tail}") }
        )
    }

    /// Times `n` runs of the loaded model (no warm-up: the engine is warm); one duration in
    /// nanoseconds per run.
    pub fn time(&mut self, n: u32) -> Result<Vec<u64>, String> {
        #[derive(Deserialize)]
        struct Samples {
            samples_ns: Vec<u64>,
        }
        self.send(&format!("time {n}\n"))?;
        let json = self.reply()?;
        let s: Samples = serde_json::from_str(&json)
            .map_err(|e| format!("{} replied `{json}`: {e}", self.helper.name()))?;
        if s.samples_ns.len() != n as usize {
            return Err(format!("{} timed {} runs, not {n}", self.helper.name(), s.samples_ns.len()));
        }
        Ok(s.samples_ns)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        // End of input ends the helper; a helper stuck in its engine is killed.
        drop(self.stdin.take());
        for _ in 0..100 {
            if self.child.try_wait().ok().flatten().is_some() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs a script with `python -c`, feeding `stdin`; its stdout, or its stderr (and the end of its
/// stdout, where engines print their own errors) as the error.
pub(crate) fn run_script(script: &str, args: &[String], stdin: Option<String>) -> Result<String, String> {
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
