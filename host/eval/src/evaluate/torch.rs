//! The PyTorch engine of `ekb bench --engines --backend cuda` and of `ekb eval --baseline
//! engine:torch`: `bench_torch.py` (with the `check_twins.py` it imports, both compiled into
//! `ekb` and written to a temporary folder) started once under `$EKB_PYTHON` or `python3`, kept running with torch and its CUDA context
//! loaded, and asked over its line protocol (the script's docstring) to load a task's export,
//! time a side's CUDA graph and drop the task.
//!
//! What must stay true: every reply is read as the helper's marked line (library output on
//! stdout is skipped); a helper that dies or answers out of protocol is an error carrying the
//! end of its stderr, never a hang on a closed pipe or a panic.

use crate::tasks::twin::{BENCH_SCRIPT, CHECK_SCRIPT};
use serde::Deserialize;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::{Arc, Mutex};

/// The prefix of every reply line (`REPLY` in `bench_torch.py`).
const REPLY: &str = "ekb-reply ";

/// A torch side as `--engine` names it, and as the helper does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TorchSide {
    /// The twin run eagerly.
    Eager,
    /// The twin through `torch.compile` (default mode).
    Compile,
}

impl TorchSide {
    /// `torch` or `torch-compile`.
    pub fn parse(s: &str) -> Result<TorchSide, String> {
        match s.trim() {
            "torch" => Ok(TorchSide::Eager),
            "torch-compile" => Ok(TorchSide::Compile),
            other => Err(format!(
                "`--engine {other}`: with `--backend cuda` the engines are torch (eager) and torch-compile (torch.compile, default mode)"
            )),
        }
    }

    /// The column name.
    pub fn label(self) -> &'static str {
        match self {
            TorchSide::Eager => "torch",
            TorchSide::Compile => "torch-compile",
        }
    }

    /// The helper's name for it.
    fn wire(self) -> &'static str {
        match self {
            TorchSide::Eager => "eager",
            TorchSide::Compile => "compile",
        }
    }
}

/// What the helper said when it started.
#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct Ready {
    pub ready: bool,
    #[serde(default)]
    pub reason: Option<String>,
    #[serde(default)]
    pub torch: Option<String>,
    #[serde(default)]
    pub triton: Option<String>,
    #[serde(default)]
    pub device: Option<String>,
}

/// One side after `load`.
#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct Loaded {
    pub side: String,
    pub unavailable: Option<String>,
    pub mismatch: Option<String>,
    /// The median of a few replays, for sizing a round.
    pub per_run_ns: Option<f64>,
    pub setup_s: f64,
}

/// The running helper.
pub struct Helper {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    stderr: Arc<Mutex<String>>,
    /// The scripts stay where the helper imports them from while it runs.
    _scripts: tempfile::TempDir,
    pub ready: Ready,
}

impl Helper {
    /// Starts the helper; `Err` when it cannot run or says it is not ready (torch missing, no
    /// CUDA device), with its reason.
    pub fn start() -> Result<Helper, String> {
        let scripts = tempfile::tempdir().map_err(|e| format!("cannot make a temporary directory: {e}"))?;
        for (name, text) in [("bench_torch.py", BENCH_SCRIPT), ("check_twins.py", CHECK_SCRIPT)] {
            std::fs::write(scripts.path().join(name), text)
                .map_err(|e| format!("cannot write `{name}` to a temporary directory: {e}"))?;
        }
        let py = ekb_onnx::python::python();
        let mut child = Command::new(&py)
            .arg(scripts.path().join("bench_torch.py"))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot run `{py}` ({e}): the torch sides need Python with PyTorch"))?;
        let stderr = Arc::new(Mutex::new(String::new()));
        let mut err = child.stderr.take().expect("stderr is piped");
        let sink = stderr.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n @ 1..) = err.read(&mut buf) {
                let mut kept = sink.lock().expect("stderr sink");
                kept.push_str(&String::from_utf8_lossy(&buf[..n]));
                // Only the end is ever shown: keep the last 64 KiB of a long run's warnings.
                if kept.len() > 128 << 10 {
                    let mut cut = kept.len() - (64 << 10);
                    while !kept.is_char_boundary(cut) {
                        cut += 1;
                    }
                    kept.drain(..cut);
                }
            }
        });
        let stdout = BufReader::new(child.stdout.take().expect("stdout is piped"));
        let placeholder = Ready { ready: false, reason: None, torch: None, triton: None, device: None };
        let mut h = Helper {
            stdin: child.stdin.take(),
            child,
            stdout,
            stderr,
            _scripts: scripts,
            ready: placeholder,
        };
        let ready: Ready = h.reply_as()?;
        if !ready.ready {
            return Err(ready.reason.unwrap_or_else(|| "the torch helper is not ready".into()));
        }
        h.ready = ready;
        Ok(h)
    }

    /// Loads an export (`ekb tasks export-io`'s folder) on `sides`: each side's state.
    pub fn load(&mut self, export: &Path, sides: &[TorchSide]) -> Result<Vec<Loaded>, String> {
        #[derive(Deserialize)]
        struct Sides {
            sides: Vec<Loaded>,
        }
        let job = serde_json::json!({
            "export": export.display().to_string(),
            "sides": sides.iter().map(|s| s.wire()).collect::<Vec<_>>(),
        });
        self.send(&format!("load {job}\n"))?;
        let got: Sides = self.reply_as()?;
        let names: Vec<&str> = got.sides.iter().map(|s| s.side.as_str()).collect();
        let asked: Vec<&str> = sides.iter().map(|s| s.wire()).collect();
        if names != asked {
            return Err(format!("the torch helper loaded the sides {names:?}, not {asked:?}"));
        }
        Ok(got.sides)
    }

    /// Times `n` replays of a loaded side: one device time per replay, in nanoseconds.
    pub fn time(&mut self, side: TorchSide, n: u32) -> Result<Vec<u64>, String> {
        #[derive(Deserialize)]
        struct Samples {
            samples_ns: Vec<u64>,
        }
        self.send(&format!("time {} {n}\n", side.wire()))?;
        let s: Samples = self.reply_as()?;
        if s.samples_ns.len() != n as usize {
            return Err(format!("the torch helper timed {} replays, not {n}", s.samples_ns.len()));
        }
        Ok(s.samples_ns)
    }

    /// Frees the loaded task.
    pub fn drop_task(&mut self) -> Result<(), String> {
        self.send("drop\n")?;
        let _: serde_json::Value = self.reply_as()?;
        Ok(())
    }

    fn send(&mut self, line: &str) -> Result<(), String> {
        let pipe = self.stdin.as_mut().expect("stdin stays open while the helper runs");
        let sent = pipe.write_all(line.as_bytes()).and_then(|()| pipe.flush());
        sent.map_err(|e| self.failed(&format!("cannot send a request ({e})")))
    }

    /// The next reply parsed as `T`; `{"error": ...}` is an error with the helper's words.
    fn reply_as<T: serde::de::DeserializeOwned>(&mut self) -> Result<T, String> {
        let json = self.reply()?;
        parse_reply(&json)
    }

    fn reply(&mut self) -> Result<String, String> {
        let mut line = String::new();
        loop {
            line.clear();
            match self.stdout.read_line(&mut line) {
                Ok(0) => return Err(self.failed("it ended")),
                Ok(_) => {
                    // A library may have left a line unfinished before the reply.
                    if let Some((_, json)) = line.split_once(REPLY) {
                        return Ok(json.trim().to_string());
                    }
                }
                Err(e) => return Err(self.failed(&e.to_string())),
            }
        }
    }

    /// An error naming the helper, what happened and the end of its stderr.
    fn failed(&mut self, what: &str) -> String {
        // Let the stderr thread catch up with a helper that just died.
        std::thread::sleep(std::time::Duration::from_millis(100));
        let status = self.child.try_wait().ok().flatten().map(|s| format!(" ({s})")).unwrap_or_default();
        let err = self.stderr.lock().expect("stderr sink").clone();
        let lines: Vec<&str> = err.trim().lines().collect();
        let tail = lines[lines.len().saturating_sub(10)..].join("\n");
        format!(
            "the torch helper stopped{status}: {what}{}",
            if tail.is_empty() { String::new() } else { format!("\n{tail}") }
        )
    }
}

/// A reply's JSON as `T`, or the helper's `{"error": ...}` as an error.
fn parse_reply<T: serde::de::DeserializeOwned>(json: &str) -> Result<T, String> {
    #[derive(Deserialize)]
    struct Refused {
        error: String,
    }
    if let Ok(r) = serde_json::from_str::<Refused>(json) {
        return Err(format!("the torch helper refused: {}", r.error));
    }
    serde_json::from_str(json).map_err(|e| format!("the torch helper replied `{json}`: {e}"))
}

impl Drop for Helper {
    fn drop(&mut self) {
        // End of input ends the helper; one stuck in CUDA is killed.
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs the real helper script with `args` and `stdin` under the interpreter ekb uses.
    fn run_helper(args: &[&str], stdin: &str) -> (bool, String) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("bench_torch.py"), BENCH_SCRIPT).unwrap();
        std::fs::write(dir.path().join("check_twins.py"), CHECK_SCRIPT).unwrap();
        let mut child = Command::new(ekb_onnx::python::python())
            .arg(dir.path().join("bench_torch.py"))
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("python3 runs");
        child.stdin.take().unwrap().write_all(stdin.as_bytes()).unwrap();
        let out = child.wait_with_output().unwrap();
        (out.status.success(), String::from_utf8_lossy(&out.stdout).into_owned())
    }

    #[test]
    fn the_helpers_own_checks_of_its_protocol_pass() {
        let (ok, out) = run_helper(&["--self-test"], "");
        assert!(ok, "{out}");
        assert!(out.contains("bench_torch self-test: ") && !out.contains("failed"), "{out}");
    }

    #[test]
    fn the_helper_answers_its_first_line_in_the_protocol_ekb_reads() {
        // With torch the helper is ready (or sees no CUDA device); without it, it says why.
        // Either way the first reply parses as `Ready` and a not-ready helper exits 1.
        let (ok, out) = run_helper(&[], "drop\n");
        let first = out.lines().find_map(|l| l.strip_prefix(REPLY)).expect("a reply line");
        let ready: Ready = parse_reply(first).unwrap();
        assert_eq!(ok, ready.ready, "{out}");
        if !ready.ready {
            let why = ready.reason.unwrap();
            assert!(why.contains("torch"), "{why}");
            assert!(Helper::start().err().is_some_and(|e| e == why));
        }
    }

    #[test]
    fn replies_parse_and_refusals_are_errors() {
        let l: Vec<Loaded> = serde_json::from_str(
            r#"[{"side": "compile", "unavailable": "torch.compile failed: X", "mismatch": null, "per_run_ns": null, "setup_s": 2.5}]"#,
        )
        .unwrap();
        assert_eq!(l[0].unavailable.as_deref(), Some("torch.compile failed: X"));
        let e = parse_reply::<Ready>(r#"{"error": "time: side `eager` is not loaded"}"#).unwrap_err();
        assert_eq!(e, "the torch helper refused: time: side `eager` is not loaded");
        assert!(parse_reply::<Ready>("{").unwrap_err().contains("replied `{`"));
    }

    #[test]
    fn engine_names() {
        assert_eq!(TorchSide::parse("torch"), Ok(TorchSide::Eager));
        assert_eq!(TorchSide::parse(" torch-compile"), Ok(TorchSide::Compile));
        assert!(TorchSide::parse("onnxruntime").unwrap_err().contains("torch-compile"));
        assert_eq!(TorchSide::Compile.label(), "torch-compile");
    }
}
