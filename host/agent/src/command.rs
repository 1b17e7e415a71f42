//! The command provider: a program gets the prompt on stdin and gives the answer on stdout. This
//! is how a command-line coding agent, or any local script, is used as a baseline.
//!
//! What must stay true: the program runs at most `timeout` (then it is killed and the run is a
//! [`ProviderError::Timeout`]); a non-zero exit is an error carrying the tail of its stderr; the
//! request's model, seed and temperature reach the program as `EKB_MODEL`, `EKB_SEED` and
//! `EKB_TEMPERATURE`.

use crate::provider::{tail, Provider, ProviderError, Request, Response, Usage};
use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

/// A program and its arguments.
#[derive(Debug, Clone)]
pub struct CommandProvider {
    pub program: String,
    pub args: Vec<String>,
    pub timeout: Duration,
}

impl CommandProvider {
    pub fn new(program: impl Into<String>, args: Vec<String>, timeout: Duration) -> CommandProvider {
        CommandProvider { program: program.into(), args, timeout }
    }
}

impl Provider for CommandProvider {
    fn id(&self) -> String {
        let mut s = format!("command:{}", self.program);
        for a in &self.args {
            s.push(' ');
            s.push_str(a);
        }
        s
    }

    fn complete(&self, req: &Request) -> Result<Response, ProviderError> {
        let mut child = Command::new(&self.program)
            .args(&self.args)
            .env("EKB_MODEL", &req.model)
            .env("EKB_SEED", req.seed.map(|s| s.to_string()).unwrap_or_default())
            .env("EKB_TEMPERATURE", req.temperature.to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| ProviderError::Io(format!("cannot start `{}`: {e}", self.program)))?;
        let prompt = req.plain_prompt();
        let mut stdin = child.stdin.take().expect("stdin is piped");
        // A program may exit without reading its input: a broken pipe is not an error here.
        let writer = thread::spawn(move || {
            let _ = stdin.write_all(prompt.as_bytes());
        });
        let mut out = child.stdout.take().expect("stdout is piped");
        let mut err = child.stderr.take().expect("stderr is piped");
        let out_reader = thread::spawn(move || {
            let mut v = Vec::new();
            let _ = out.read_to_end(&mut v);
            v
        });
        let err_reader = thread::spawn(move || {
            let mut v = Vec::new();
            let _ = err.read_to_end(&mut v);
            v
        });
        let start = Instant::now();
        let status = loop {
            match child.try_wait() {
                Ok(Some(s)) => break s,
                Ok(None) if start.elapsed() >= self.timeout => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(ProviderError::Timeout { secs: self.timeout.as_secs_f64() });
                }
                Ok(None) => thread::sleep(Duration::from_millis(5)),
                Err(e) => return Err(ProviderError::Io(format!("waiting for `{}`: {e}", self.program))),
            }
        };
        let _ = writer.join();
        let stdout = out_reader.join().unwrap_or_default();
        let stderr = err_reader.join().unwrap_or_default();
        if !status.success() {
            return Err(ProviderError::Command {
                status: status.to_string(),
                stderr_tail: tail(&String::from_utf8_lossy(&stderr), 2000),
            });
        }
        let text = String::from_utf8(stdout).map_err(|_| {
            ProviderError::Io(format!("`{}` wrote an answer that is not UTF-8", self.program))
        })?;
        Ok(Response { text, usage: Usage::default(), cached: false })
    }
}
