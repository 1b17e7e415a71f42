//! External commands as data: what a transport runs (`ssh`, `scp`, `adb`, `qemu-aarch64`,
//! the runtime itself) is a [`Cmd`] value first, so tests can assert the exact command lines
//! and drive a transport's decisions with recorded answers ([`Exec`]) instead of a device.
//!
//! What it must keep true: [`shell_quote`] makes any string one word for a POSIX shell (remote
//! commands travel through the device's shell), and [`Cmd`]'s `Display` is a line a person can
//! paste into a shell to do exactly what the transport did.

use ekb_ir::Diagnostic;
use std::fmt;
use std::io::Read;
use std::process::{Child, Command, Stdio};

/// A program and its arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cmd {
    pub program: String,
    pub args: Vec<String>,
}

impl Cmd {
    pub fn new(program: impl Into<String>) -> Cmd {
        Cmd { program: program.into(), args: Vec::new() }
    }

    pub fn arg(mut self, a: impl Into<String>) -> Cmd {
        self.args.push(a.into());
        self
    }

    pub fn args<S: Into<String>>(mut self, args: impl IntoIterator<Item = S>) -> Cmd {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    fn command(&self) -> Command {
        let mut c = Command::new(&self.program);
        c.args(&self.args);
        c
    }
}

impl fmt::Display for Cmd {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&shell_quote(&self.program))?;
        for a in &self.args {
            write!(f, " {}", shell_quote(a))?;
        }
        Ok(())
    }
}

/// `s` as one word for a POSIX shell: unchanged when it is made of safe characters, else in
/// single quotes (with `'` written as `'\''`).
pub fn shell_quote(s: &str) -> String {
    if !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || "-_=+.,/:@%".contains(c)) {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// Words joined into one shell command line, each quoted.
pub fn shell_line<S: AsRef<str>>(words: &[S]) -> String {
    words.iter().map(|w| shell_quote(w.as_ref())).collect::<Vec<_>>().join(" ")
}

/// What a finished command left behind.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Output {
    /// The exit status; `None` when a signal ended it.
    pub status: Option<i32>,
    pub stdout: Vec<u8>,
    pub stderr: String,
}

impl Output {
    pub fn success(&self) -> bool {
        self.status == Some(0)
    }

    pub fn stdout_text(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }

    /// A one-line account of a failure: the status and the last lines of stderr.
    pub fn failure(&self) -> String {
        let status =
            self.status.map_or("was killed by a signal".to_string(), |s| format!("exited with status {s}"));
        let tail: Vec<&str> = self.stderr.lines().filter(|l| !l.trim().is_empty()).collect();
        let tail = &tail[tail.len().saturating_sub(6)..];
        if tail.is_empty() {
            status
        } else {
            format!("{status}: {}", tail.join(" | "))
        }
    }
}

/// Runs commands. [`System`] runs them for real; tests record them and answer from a script.
pub trait Exec {
    /// Runs `cmd` to completion (stdin empty) and returns its status and output.
    fn run(&mut self, cmd: &Cmd) -> Result<Output, Diagnostic>;
    /// Starts `cmd` with piped stdin, stdout and stderr (a runtime serving the protocol).
    fn spawn(&mut self, cmd: &Cmd) -> Result<Child, Diagnostic>;
}

/// Runs commands as child processes of this one.
#[derive(Debug, Clone, Copy, Default)]
pub struct System;

fn not_started(cmd: &Cmd, e: std::io::Error) -> Diagnostic {
    let d =
        Diagnostic::error(format!("cannot run `{}`: {e}", cmd.program)).with_note(format!("command: {cmd}"));
    if e.kind() == std::io::ErrorKind::NotFound {
        d.with_hint(match cmd.program.as_str() {
            "ssh" | "scp" => "install the OpenSSH client (Debian: `apt-get install openssh-client`)",
            "adb" => "install the Android platform tools (Debian: `apt-get install adb`)",
            p if p.starts_with("qemu-") => "install qemu-user (Debian: `apt-get install qemu-user`)",
            _ => "check that the program exists and is executable",
        })
    } else {
        d
    }
}

impl Exec for System {
    fn run(&mut self, cmd: &Cmd) -> Result<Output, Diagnostic> {
        let out = cmd.command().stdin(Stdio::null()).output().map_err(|e| not_started(cmd, e))?;
        Ok(Output {
            status: out.status.code(),
            stdout: out.stdout,
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        })
    }

    fn spawn(&mut self, cmd: &Cmd) -> Result<Child, Diagnostic> {
        cmd.command()
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| not_started(cmd, e))
    }
}

/// Collects a child's stderr on a thread, so a chatty child never blocks on a full pipe.
#[derive(Debug)]
pub struct StderrTail {
    handle: Option<std::thread::JoinHandle<String>>,
}

impl StderrTail {
    pub fn start(stderr: Option<std::process::ChildStderr>) -> StderrTail {
        StderrTail {
            handle: stderr.map(|mut s| {
                std::thread::spawn(move || {
                    let mut buf = Vec::new();
                    // Whatever arrived before an error is still worth showing.
                    let _ = s.read_to_end(&mut buf);
                    String::from_utf8_lossy(&buf).into_owned()
                })
            }),
        }
    }

    /// Everything the child wrote to stderr (waits for it to close the pipe).
    pub fn finish(&mut self) -> String {
        self.handle.take().and_then(|h| h.join().ok()).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_keeps_safe_words_and_single_quotes_the_rest() {
        assert_eq!(shell_quote("ekb-rt"), "ekb-rt");
        assert_eq!(shell_quote(".cache/ekb/ekb-rt-0123"), ".cache/ekb/ekb-rt-0123");
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
        assert_eq!(shell_quote(""), "''");
        assert_eq!(shell_quote("$HOME"), "'$HOME'");
        assert_eq!(shell_line(&["rm", "-rf", "x y"]), "rm -rf 'x y'");
    }

    #[test]
    fn quoted_words_survive_a_real_shell() {
        let words = ["printf", "%s|", "a b", "it's", "$HOME", "*", "\"q\""];
        let out = System.run(&Cmd::new("sh").arg("-c").arg(shell_line(&words))).unwrap();
        assert!(out.success(), "{}", out.failure());
        assert_eq!(out.stdout_text(), "a b|it's|$HOME|*|\"q\"|");
    }

    #[test]
    fn a_missing_program_is_a_diagnostic_with_an_install_hint() {
        let cmd = Cmd::new("qemu-definitely-not-here").arg("x");
        let e = System.run(&cmd).unwrap_err();
        assert!(e.message.starts_with("cannot run `qemu-definitely-not-here`"), "{}", e.message);
        assert_eq!(e.hint.as_deref(), Some("install qemu-user (Debian: `apt-get install qemu-user`)"));
    }

    #[test]
    fn failures_summarise_status_and_the_end_of_stderr() {
        let out = System.run(&Cmd::new("sh").args(["-c", "echo one >&2; echo two >&2; exit 3"])).unwrap();
        assert_eq!(out.failure(), "exited with status 3: one | two");
    }
}
