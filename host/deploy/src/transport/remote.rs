//! Remote devices: a board over OpenSSH (`ssh`, `scp`) or an Android device over `adb`. Both
//! follow one recipe ([`Remote`]), differing only in the commands that reach the device
//! ([`Access`]):
//!
//! - **install**: run `DIR/ekb-rt-<id> --version` on the device, where `<id>` is the first 16
//!   hex digits of the local runtime's SHA-256. A rebuilt runtime has a new id, so an outdated
//!   copy is never run; if the file is missing it is copied to `DIR/ekb-rt-<id>.part`, made
//!   executable and renamed into place (an interrupted copy never leaves a runnable partial
//!   file), and the version check runs again to prove the binary runs there.
//! - **serve**: `DIR/ekb-rt-<id> serve` with the protocol on the command's stdin and stdout.
//! - **offline**: payloads copied into a fresh `DIR/run-...` directory, `ekb-rt run ... --out
//!   DIR/run-.../report.ekr`, the report copied back, the directory removed.
//!
//! What it must keep true: every remote command line is built from quoted words
//! ([`shell_line`]), so paths with spaces or shell characters reach the device intact; the
//! commands are plain data ([`Cmd`]) that the tests assert exactly.

use super::{check_offline, staged_name, unique_name, Offline, Transport};
use crate::command::{shell_line, Cmd, Exec, Output};
use crate::runtime::Runtime;
use ekb_ir::Diagnostic;
use std::path::{Path, PathBuf};

/// Where the runtime lives over ssh, relative to the login directory.
pub const SSH_REMOTE_DIR: &str = ".cache/ekb";
/// Where the runtime lives on an Android device (the one place adb may write and execute).
pub const ADB_REMOTE_DIR: &str = "/data/local/tmp/ekb";

/// The commands that reach a device.
pub trait Access {
    /// The device in words.
    fn describe(&self) -> String;
    /// Runs a shell command line on the device.
    fn shell(&self, line: &str) -> Cmd;
    /// Runs a command line on the device with binary-safe stdin and stdout (no terminal).
    fn stream(&self, line: &str) -> Cmd;
    /// Copies a local file to the device.
    fn push(&self, local: &Path, remote: &str) -> Cmd;
    /// Copies a device file here.
    fn pull(&self, remote: &str, local: &Path) -> Cmd;
    /// When a command failed because the device could not be reached (rather than the
    /// command failing there), how to fix that.
    fn unreachable(&self, out: &Output) -> Option<String>;
}

/// OpenSSH: `ssh` for commands, `scp` for files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ssh {
    pub user: Option<String>,
    pub host: String,
    pub port: Option<u16>,
    /// Extra `-o` options for both ssh and scp.
    pub options: Vec<String>,
}

impl Ssh {
    fn destination(&self) -> String {
        match &self.user {
            Some(u) => format!("{u}@{}", self.host),
            None => self.host.clone(),
        }
    }

    /// `-o BatchMode=yes` (never prompt: a password prompt would hang a benchmark), then the
    /// user's options.
    fn options(&self) -> Vec<String> {
        let mut v = vec!["-o".to_string(), "BatchMode=yes".to_string()];
        for o in &self.options {
            v.extend(["-o".to_string(), o.clone()]);
        }
        v
    }

    fn ssh(&self, line: &str) -> Cmd {
        let mut c = Cmd::new("ssh");
        if let Some(p) = self.port {
            c = c.args(["-p".to_string(), p.to_string()]);
        }
        c.args(self.options()).arg(self.destination()).arg(line)
    }

    fn scp_remote(&self, path: &str) -> String {
        let host = if self.host.contains(':') { format!("[{}]", self.host) } else { self.host.clone() };
        match &self.user {
            Some(u) => format!("{u}@{host}:{path}"),
            None => format!("{host}:{path}"),
        }
    }

    fn scp(&self, from: String, to: String) -> Cmd {
        let mut c = Cmd::new("scp").arg("-q");
        if let Some(p) = self.port {
            c = c.args(["-P".to_string(), p.to_string()]);
        }
        c.args(self.options()).arg(from).arg(to)
    }
}

impl Access for Ssh {
    fn describe(&self) -> String {
        match self.port {
            Some(p) => format!("{}:{p} (ssh)", self.destination()),
            None => format!("{} (ssh)", self.destination()),
        }
    }

    fn shell(&self, line: &str) -> Cmd {
        self.ssh(line)
    }

    fn stream(&self, line: &str) -> Cmd {
        // Without a command-line terminal request ssh allocates no tty: the streams are raw.
        self.ssh(line)
    }

    fn push(&self, local: &Path, remote: &str) -> Cmd {
        self.scp(local.display().to_string(), self.scp_remote(remote))
    }

    fn pull(&self, remote: &str, local: &Path) -> Cmd {
        self.scp(self.scp_remote(remote), local.display().to_string())
    }

    fn unreachable(&self, out: &Output) -> Option<String> {
        // ssh exits with 255 when it fails itself (connection, host key, authentication).
        (out.status == Some(255)).then(|| {
            format!(
                "check that `ssh {}` logs in without a password prompt (a key in ~/.ssh, or \
                 `--ssh-option IdentityFile=KEY`) and that the host key is known",
                self.destination()
            )
        })
    }
}

/// Android Debug Bridge: `adb [-s SERIAL] shell -T` for commands (no terminal, so bytes pass
/// unchanged), `push` and `pull` for files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Adb {
    pub serial: Option<String>,
}

impl Adb {
    fn adb(&self) -> Cmd {
        match &self.serial {
            Some(s) => Cmd::new("adb").args(["-s", s.as_str()]),
            None => Cmd::new("adb"),
        }
    }
}

impl Access for Adb {
    fn describe(&self) -> String {
        match &self.serial {
            Some(s) => format!("Android device {s} (adb)"),
            None => "the Android device (adb)".into(),
        }
    }

    fn shell(&self, line: &str) -> Cmd {
        self.adb().args(["shell", "-T", line])
    }

    fn stream(&self, line: &str) -> Cmd {
        self.adb().args(["shell", "-T", line])
    }

    fn push(&self, local: &Path, remote: &str) -> Cmd {
        self.adb().arg("push").arg(local.display().to_string()).arg(remote)
    }

    fn pull(&self, remote: &str, local: &Path) -> Cmd {
        self.adb().arg("pull").arg(remote).arg(local.display().to_string())
    }

    fn unreachable(&self, out: &Output) -> Option<String> {
        // adb's own failures, as opposed to the device's shell: no device, several devices,
        // an unknown serial, an offline or unauthorised device.
        let own = ["no devices", "more than one device", "device offline", "unauthorized", "adb: error:"];
        let is_own = out.stderr.lines().any(|l| {
            let l = l.trim_start();
            (l.starts_with("error:") || l.starts_with("adb:"))
                && (own.iter().any(|o| l.contains(o)) || l.contains("not found"))
        });
        is_own.then(|| match &self.serial {
            Some(s) => format!("check that `adb devices` lists `{s}` as `device` (connected and authorised)"),
            None => {
                "check that `adb devices` lists exactly one device, or name it: `--device adb:SERIAL`".into()
            }
        })
    }
}

/// A device reached through `A`, with the runtime kept in `dir`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Remote<A> {
    access: A,
    /// The local runtime binary.
    local: PathBuf,
    version_of: String,
    dir: String,
    /// `dir/ekb-rt-<id>`.
    runtime: String,
}

impl<A: Access> Remote<A> {
    pub fn new(access: A, runtime: &Runtime, dir: String) -> Remote<A> {
        let dir = dir.trim_end_matches('/').to_string();
        let dir = if dir.is_empty() { "/".to_string() } else { dir };
        let remote = format!("{dir}/ekb-rt-{}", runtime.content_id());
        Remote {
            access,
            local: runtime.path.clone(),
            version_of: runtime.arch.name().into(),
            dir,
            runtime: remote,
        }
    }

    /// The runtime's path on the device.
    pub fn runtime_path(&self) -> &str {
        &self.runtime
    }

    /// The command that asks the device's copy of the runtime for its version.
    pub fn probe_cmd(&self) -> Cmd {
        self.access.shell(&shell_line(&[self.runtime.as_str(), "--version"]))
    }

    /// The commands that copy the runtime to the device, in order.
    pub fn copy_cmds(&self) -> Vec<Cmd> {
        let part = format!("{}.part", self.runtime);
        vec![
            self.access.shell(&shell_line(&["mkdir", "-p", self.dir.as_str()])),
            self.access.push(&self.local, &part),
            self.access.shell(&format!(
                "{} && {}",
                shell_line(&["chmod", "755", part.as_str()]),
                shell_line(&["mv", "-f", part.as_str(), self.runtime.as_str()])
            )),
        ]
    }

    /// The commands of an offline run: stage the payloads into `work`, run them, fetch the
    /// report to `local_report`, remove `work`. Returns the commands and the staged paths.
    pub fn offline_cmds(
        &self,
        work: &str,
        payloads: &[PathBuf],
        args: &[String],
        local_report: &Path,
    ) -> Vec<Cmd> {
        let report = format!("{work}/report.ekr");
        let mut cmds = vec![self.access.shell(&shell_line(&["mkdir", "-p", work]))];
        let mut run = vec![self.runtime.clone(), "run".into()];
        for (i, p) in payloads.iter().enumerate() {
            let remote = format!("{work}/{}", staged_name(i, p));
            cmds.push(self.access.push(p, &remote));
            run.push(remote);
        }
        run.extend(["--out".to_string(), report.clone()]);
        run.extend(args.iter().cloned());
        cmds.push(self.access.shell(&shell_line(&run)));
        cmds.push(self.access.pull(&report, local_report));
        cmds.push(self.access.shell(&shell_line(&["rm", "-rf", work])));
        cmds
    }

    /// Whether the probe found a working runtime (`Ok(true)`), found none (`Ok(false)`), or
    /// found a file that does not run.
    fn probe(&self, exec: &mut dyn Exec) -> Result<Result<bool, Output>, Diagnostic> {
        let cmd = self.probe_cmd();
        let out = exec.run(&cmd)?;
        if out.success() && out.stdout_text().starts_with("ekb-rt ") {
            return Ok(Ok(true));
        }
        if let Some(hint) = self.access.unreachable(&out) {
            return Err(self.cannot_reach(&cmd, &out, hint));
        }
        let missing = out.status == Some(127)
            || out.stderr.contains("not found")
            || out.stderr.contains("No such file")
            || out.stdout_text().contains("No such file");
        if missing {
            Ok(Ok(false))
        } else {
            Ok(Err(out))
        }
    }

    fn does_not_run(&self, out: &Output, after_copy: bool) -> Diagnostic {
        let what = if after_copy { "was copied but does not run" } else { "does not run" };
        Diagnostic::error(format!(
            "the runtime {} on {} {what}: {}",
            self.runtime,
            self.access.describe(),
            out.failure()
        ))
        .with_note(format!("command: {}", self.probe_cmd()))
        .with_hint(format!(
            "the copied runtime is the {} build: check that the device is {} Linux (`uname -m`)",
            self.version_of, self.version_of
        ))
    }

    fn cannot_reach(&self, cmd: &Cmd, out: &Output, hint: String) -> Diagnostic {
        Diagnostic::error(format!("cannot reach {}: {}", self.access.describe(), out.failure()))
            .with_note(format!("command: {cmd}"))
            .with_hint(hint)
    }

    fn run_checked(&self, exec: &mut dyn Exec, cmd: &Cmd) -> Result<Output, Diagnostic> {
        let out = exec.run(cmd)?;
        if out.success() {
            Ok(out)
        } else if let Some(hint) = self.access.unreachable(&out) {
            Err(self.cannot_reach(cmd, &out, hint))
        } else {
            Err(Diagnostic::error(format!(
                "a command on {} failed: {}",
                self.access.describe(),
                out.failure()
            ))
            .with_note(format!("command: {cmd}")))
        }
    }
}

impl<A: Access> Transport for Remote<A> {
    fn describe(&self) -> String {
        self.access.describe()
    }

    fn install(&mut self, exec: &mut dyn Exec) -> Result<Vec<String>, Diagnostic> {
        match self.probe(exec)? {
            Ok(true) => return Ok(vec![format!("runtime: {} (already on the device)", self.runtime)]),
            Ok(false) => {}
            Err(out) => return Err(self.does_not_run(&out, false)),
        }
        for cmd in self.copy_cmds() {
            self.run_checked(exec, &cmd)?;
        }
        match self.probe(exec)? {
            Ok(true) => Ok(vec![format!("runtime: copied {} to {}", self.local.display(), self.runtime)]),
            Ok(false) => Err(self.does_not_run(&Output { status: Some(127), ..Output::default() }, true)),
            Err(out) => Err(self.does_not_run(&out, true)),
        }
    }

    fn serve_cmd(&self) -> Cmd {
        self.access.stream(&shell_line(&[self.runtime.as_str(), "serve"]))
    }

    fn run_offline(
        &mut self,
        exec: &mut dyn Exec,
        payloads: &[PathBuf],
        args: &[String],
    ) -> Result<Offline, Diagnostic> {
        let local = tempfile::tempdir()
            .map_err(|e| Diagnostic::error(format!("cannot create a temporary directory: {e}")))?;
        let local_report = local.path().join("report.ekr");
        let work = format!("{}/{}", self.dir, unique_name("run"));
        let cmds = self.offline_cmds(&work, payloads, args, &local_report);
        // mkdir, pushes, run, pull, rm: the run may exit 1 (a payload failed); the rest must
        // succeed. The work directory is removed whatever happened after it was made.
        let (run_at, cleanup) = (cmds.len() - 3, cmds.len() - 1);
        let mut output = None;
        let mut result = Ok(());
        for (i, cmd) in cmds[..cleanup].iter().enumerate() {
            let step = if i == run_at {
                exec.run(cmd).and_then(|out| check_offline(&self.describe(), cmd, &out).map(|()| out))
            } else {
                self.run_checked(exec, cmd)
            };
            match step {
                Ok(out) if i == run_at => output = Some(out),
                Ok(_) => {}
                Err(d) => {
                    result = Err(d);
                    break;
                }
            }
        }
        let cleaned = self.run_checked(exec, &cmds[cleanup]);
        result?;
        cleaned?;
        let report = std::fs::read(&local_report).map_err(|e| {
            Diagnostic::error(format!("the report copied from {} cannot be read: {e}", self.describe()))
        })?;
        Ok(Offline { output: output.unwrap_or_default(), report })
    }
}
