//! The transports of this machine: `local` runs the runtime as a child process, `qemu` runs
//! the runtime of another architecture under qemu-user (`qemu-aarch64`). Payload files are used
//! where they are; the offline report goes to a temporary directory and is read back.

use super::{check_offline, Offline, Transport};
use crate::command::{Cmd, Exec};
use crate::runtime::Runtime;
use ekb_ir::Diagnostic;
use std::path::PathBuf;

/// The runtime as a child process of `ekb`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Local {
    runtime: PathBuf,
}

impl Local {
    pub fn new(runtime: &Runtime) -> Local {
        Local { runtime: runtime.path.clone() }
    }
}

/// The runtime under qemu-user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Qemu {
    qemu: String,
    runtime: PathBuf,
}

impl Qemu {
    pub fn new(runtime: &Runtime) -> Qemu {
        Qemu { qemu: format!("qemu-{}", runtime.arch.name()), runtime: runtime.path.clone() }
    }
}

/// `ekb-rt run` of this machine's transports: the payloads in place, the report in a fresh
/// temporary directory.
fn offline(
    describe: &str,
    prefix: Cmd,
    exec: &mut dyn Exec,
    payloads: &[PathBuf],
    args: &[String],
) -> Result<Offline, Diagnostic> {
    let dir = tempfile::tempdir()
        .map_err(|e| Diagnostic::error(format!("cannot create a temporary directory: {e}")))?;
    let report = dir.path().join("report.ekr");
    let cmd = prefix
        .arg("run")
        .args(payloads.iter().map(|p| p.display().to_string()))
        .args(["--out".to_string(), report.display().to_string()])
        .args(args.iter().cloned());
    let output = exec.run(&cmd)?;
    check_offline(describe, &cmd, &output)?;
    let report = std::fs::read(&report).map_err(|e| {
        Diagnostic::error(format!("`ekb-rt run` on {describe} wrote no report: {e}"))
            .with_note(format!("command: {cmd}"))
    })?;
    Ok(Offline { output, report })
}

impl Transport for Local {
    fn describe(&self) -> String {
        "this machine".into()
    }

    fn install(&mut self, _: &mut dyn Exec) -> Result<Vec<String>, Diagnostic> {
        Ok(vec![format!("runtime: {}", self.runtime.display())])
    }

    fn serve_cmd(&self) -> Cmd {
        Cmd::new(self.runtime.display().to_string()).arg("serve")
    }

    fn run_offline(
        &mut self,
        exec: &mut dyn Exec,
        payloads: &[PathBuf],
        args: &[String],
    ) -> Result<Offline, Diagnostic> {
        offline(&self.describe(), Cmd::new(self.runtime.display().to_string()), exec, payloads, args)
    }
}

impl Transport for Qemu {
    fn describe(&self) -> String {
        format!("this machine under {}", self.qemu)
    }

    fn install(&mut self, _: &mut dyn Exec) -> Result<Vec<String>, Diagnostic> {
        Ok(vec![format!("runtime: {} under {}", self.runtime.display(), self.qemu)])
    }

    fn serve_cmd(&self) -> Cmd {
        Cmd::new(&self.qemu).arg(self.runtime.display().to_string()).arg("serve")
    }

    fn run_offline(
        &mut self,
        exec: &mut dyn Exec,
        payloads: &[PathBuf],
        args: &[String],
    ) -> Result<Offline, Diagnostic> {
        let prefix = Cmd::new(&self.qemu).arg(self.runtime.display().to_string());
        offline(&self.describe(), prefix, exec, payloads, args)
    }
}
