//! Transports: how `ekb` reaches a device's runtime. Every transport starts `ekb-rt serve` with
//! its stdin and stdout as the protocol's byte streams (a child process here, the same under
//! qemu-user, or the remote end of ssh or adb) and can also run payloads offline with `ekb-rt
//! run` and fetch the report file. `dir:PATH` runs nothing: it writes a bundle
//! ([`crate::bundle`]) for an air-gapped board.
//!
//! Devices are named as `local`, `qemu`, `ssh://[user@]host[:port]`, `adb[:serial]` or
//! `dir:PATH` ([`Device::parse`]).
//!
//! What it must keep true: a session always starts with the version handshake
//! ([`crate::session::Session::open`]); every payload gets exactly one entry in the resulting
//! report (its `RunReport`, or the runtime's error for it), in order, so a live run and an
//! offline run give report files of the same shape; a runtime that dies or misbehaves is a
//! diagnostic carrying the end of its stderr, never a hang.

mod local;
mod remote;

pub use local::{Local, Qemu};
pub use remote::{Access, Adb, Remote, Ssh, ADB_REMOTE_DIR, SSH_REMOTE_DIR};

use crate::command::{Cmd, Exec, Output, StderrTail};
use crate::report::{self, Entry, ReportFile};
use crate::runtime::Runtime;
use crate::session::{Session, SessionError};
use ekb_ir::Diagnostic;
use ekb_llvm::Arch;
use ekb_wire::protocol::TimingOverrides;
use std::path::{Path, PathBuf};

/// Where payloads run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Device {
    /// This machine: the runtime as a child process.
    Local,
    /// This machine, emulating the target's architecture with qemu-user.
    Qemu,
    /// A board reached with OpenSSH.
    Ssh { user: Option<String>, host: String, port: Option<u16> },
    /// An Android device reached with adb.
    Adb { serial: Option<String> },
    /// No device: write a bundle into this directory.
    Dir(PathBuf),
}

const FORMS: &str = "`local`, `qemu`, `ssh://[user@]host[:port]`, `adb[:serial]` or `dir:PATH`";

impl Device {
    /// Parses a device name.
    pub fn parse(s: &str) -> Result<Device, Diagnostic> {
        let bad = |why: String| Diagnostic::error(format!("bad device `{s}`: {why}")).with_expected(FORMS);
        match s {
            "local" => return Ok(Device::Local),
            "qemu" => return Ok(Device::Qemu),
            "adb" => return Ok(Device::Adb { serial: None }),
            _ => {}
        }
        if let Some(serial) = s.strip_prefix("adb:") {
            if serial.is_empty() || serial.starts_with('-') || serial.chars().any(char::is_whitespace) {
                return Err(bad("the serial is empty or malformed".into()));
            }
            return Ok(Device::Adb { serial: Some(serial.into()) });
        }
        if let Some(path) = s.strip_prefix("dir:") {
            if path.is_empty() {
                return Err(bad("the directory is empty".into()));
            }
            return Ok(Device::Dir(PathBuf::from(path)));
        }
        if let Some(rest) = s.strip_prefix("ssh://") {
            return parse_ssh(rest).map_err(bad);
        }
        let mut d = bad("unknown kind of device".into());
        if let Some(h) = ekb_ir::diag::did_you_mean(s, ["local", "qemu", "adb"]) {
            d = d.with_hint(h);
        } else if s.contains('@') {
            d = d.with_hint(format!("write `ssh://{s}`"));
        }
        Err(d)
    }

    /// The device used when none is named: this machine for its own architecture, qemu-user
    /// for another one.
    pub fn default_for(arch: Arch) -> Device {
        if Arch::host() == Some(arch) {
            Device::Local
        } else {
            Device::Qemu
        }
    }
}

fn parse_ssh(rest: &str) -> Result<Device, String> {
    let (user, hostport) = match rest.rsplit_once('@') {
        Some((u, h)) => (Some(u), h),
        None => (None, rest),
    };
    if user.is_some_and(|u| u.is_empty() || u.starts_with('-') || u.contains([':', '/', ' '])) {
        return Err("the user name is empty or malformed".into());
    }
    // `[v6::addr]:port`, `host:port`, or `host`.
    let (host, port) = if let Some(v6) = hostport.strip_prefix('[') {
        let (h, after) = v6.split_once(']').ok_or("an IPv6 address needs its closing `]`")?;
        match after {
            "" => (h, None),
            p => (h, Some(p.strip_prefix(':').ok_or("expected `:PORT` after the address")?)),
        }
    } else {
        match hostport.split_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (hostport, None),
        }
    };
    if host.is_empty() || host.starts_with('-') || host.contains(['/', ' ', '@']) {
        return Err("the host name is empty or malformed".into());
    }
    let port = match port {
        None => None,
        Some(p) => {
            Some(p.parse::<u16>().ok().filter(|&p| p > 0).ok_or(format!("`{p}` is not a port number"))?)
        }
    };
    Ok(Device::Ssh { user: user.map(Into::into), host: host.into(), port })
}

impl std::fmt::Display for Device {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Device::Local => f.write_str("local"),
            Device::Qemu => f.write_str("qemu"),
            Device::Ssh { user, host, port } => {
                f.write_str("ssh://")?;
                if let Some(u) = user {
                    write!(f, "{u}@")?;
                }
                if host.contains(':') {
                    write!(f, "[{host}]")?;
                } else {
                    f.write_str(host)?;
                }
                if let Some(p) = port {
                    write!(f, ":{p}")?;
                }
                Ok(())
            }
            Device::Adb { serial: None } => f.write_str("adb"),
            Device::Adb { serial: Some(s) } => write!(f, "adb:{s}"),
            Device::Dir(p) => write!(f, "dir:{}", p.display()),
        }
    }
}

/// Options of the remote transports.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RemoteOptions {
    /// `-o` options for ssh and scp (`IdentityFile=...`, `UserKnownHostsFile=...`).
    pub ssh_options: Vec<String>,
    /// Where the runtime and staged payloads live on the device (relative paths are relative
    /// to the login directory over ssh); `None`: the transport's default.
    pub remote_dir: Option<String>,
}

/// What a transport does with a device.
pub trait Transport {
    /// The device in words, for messages.
    fn describe(&self) -> String;
    /// Makes the runtime ready on the device, copying it when missing or outdated. Returns
    /// what it did, one line per step, for the log.
    fn install(&mut self, exec: &mut dyn Exec) -> Result<Vec<String>, Diagnostic>;
    /// The command that starts `ekb-rt serve` on the device.
    fn serve_cmd(&self) -> Cmd;
    /// Runs payload files with `ekb-rt run PAYLOAD... --out REPORT ARGS...` and returns what
    /// the runtime printed and the report file's bytes.
    fn run_offline(
        &mut self,
        exec: &mut dyn Exec,
        payloads: &[PathBuf],
        args: &[String],
    ) -> Result<Offline, Diagnostic>;
}

/// An offline run's results.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Offline {
    pub output: Output,
    pub report: Vec<u8>,
}

/// `ekb-rt run` exits 0 when every payload was correct and 1 when the report was written but a
/// payload failed; anything else means no report.
fn check_offline(describe: &str, cmd: &Cmd, out: &Output) -> Result<(), Diagnostic> {
    if matches!(out.status, Some(0 | 1)) {
        return Ok(());
    }
    Err(Diagnostic::error(format!("`ekb-rt run` failed on {describe}: {}", out.failure()))
        .with_note(format!("command: {cmd}")))
}

/// The transport for `device` (not `dir:`, which runs nothing) with runtime `runtime`.
pub fn connect(
    device: &Device,
    runtime: &Runtime,
    options: &RemoteOptions,
) -> Result<Box<dyn Transport>, Diagnostic> {
    Ok(match device {
        Device::Local => {
            if Arch::host() != Some(runtime.arch) {
                return Err(Diagnostic::error(format!(
                    "`local` runs the runtime on this machine, which cannot run {} code",
                    runtime.arch.name()
                ))
                .with_hint("use `--device qemu` to emulate it"));
            }
            Box::new(Local::new(runtime))
        }
        Device::Qemu => {
            if runtime.gpu {
                return Err(Diagnostic::error("qemu-user emulates a CPU, not a GPU: GPU payloads run on the machine or board with the GPU")
                    .with_hint("use `--device local`, `ssh://...` or `adb`"));
            }
            runtime.require_static("qemu-user")?;
            Box::new(Qemu::new(runtime))
        }
        Device::Ssh { user, host, port } => {
            runtime.require_static("a board")?;
            let dir = options.remote_dir.clone().unwrap_or_else(|| SSH_REMOTE_DIR.into());
            let access = Ssh {
                user: user.clone(),
                host: host.clone(),
                port: *port,
                options: options.ssh_options.clone(),
            };
            Box::new(Remote::new(access, runtime, dir))
        }
        Device::Adb { serial } => {
            runtime.require_static("an Android device")?;
            let dir = options.remote_dir.clone().unwrap_or_else(|| ADB_REMOTE_DIR.into());
            Box::new(Remote::new(Adb { serial: serial.clone() }, runtime, dir))
        }
        Device::Dir(p) => {
            return Err(Diagnostic::error(format!("`dir:{}` writes a bundle; it runs nothing", p.display()))
                .with_hint("use `ekb pack`, or `ekb run --device dir:PATH`, which packs"))
        }
    })
}

/// How to talk to the runtime.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// A live session (`ekb-rt serve`), falling back to offline runs when the runtime has no
    /// `serve` command.
    Auto,
    /// A live session only.
    Serve,
    /// `ekb-rt run` on the device and the report file copied back.
    Offline,
}

/// What to run, beyond the payloads' own settings.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RunSettings {
    /// Seed indices to run (`None`: all). Live sessions only.
    pub seeds: Option<Vec<u32>>,
    /// Timing changes. Live sessions only.
    pub timing: TimingOverrides,
    pub threads: Option<u32>,
}

impl RunSettings {
    fn is_session_only(&self) -> bool {
        self.seeds.is_some() || self.timing != TimingOverrides::default()
    }
}

/// The results of running payloads on a device.
#[derive(Debug, Clone, PartialEq)]
pub struct RunOutcome {
    /// The same shape a runtime writes offline: save it with [`report::encode`].
    pub report: ReportFile,
    /// Which way it ran: [`Mode::Serve`] or [`Mode::Offline`].
    pub mode: Mode,
    /// What happened on the way (installation, fallbacks), one line each.
    pub log: Vec<String>,
}

/// Runs payload files on the device behind `transport`.
pub fn run_payloads(
    transport: &mut dyn Transport,
    exec: &mut dyn Exec,
    payloads: &[PathBuf],
    settings: &RunSettings,
    mode: Mode,
) -> Result<RunOutcome, Diagnostic> {
    let mut log = transport.install(exec)?;
    if mode != Mode::Offline {
        match serve(transport, exec, payloads, settings) {
            Ok(report) => return Ok(RunOutcome { report, mode: Mode::Serve, log }),
            Err(ServeError::NoServe(stderr)) if mode == Mode::Auto => {
                log.push(format!(
                    "the runtime on {} has no `serve` command ({}); ran offline with `ekb-rt run`",
                    transport.describe(),
                    stderr.lines().find(|l| !l.trim().is_empty()).unwrap_or("").trim()
                ));
            }
            Err(ServeError::NoServe(stderr)) => {
                return Err(Diagnostic::error(format!(
                    "the runtime on {} has no `serve` command",
                    transport.describe()
                ))
                .with_note(stderr.trim().to_string())
                .with_hint("run offline (`--offline`), or rebuild the runtime"))
            }
            Err(ServeError::Failed(d)) => return Err(d),
        }
    }
    if settings.is_session_only() {
        log.push("offline runs use the payloads' own seeds and timing settings".into());
    }
    let mut args = Vec::new();
    if let Some(t) = settings.threads {
        args.extend(["--threads".to_string(), t.to_string()]);
    }
    let offline = transport.run_offline(exec, payloads, &args)?;
    let report = report::parse("the runtime's report", &offline.report)
        .map_err(|d| d.with_note(format!("from {}", transport.describe())))?;
    Ok(RunOutcome { report, mode: Mode::Offline, log })
}

enum ServeError {
    /// The runtime exited without a handshake, saying it has no `serve` command.
    NoServe(String),
    Failed(Diagnostic),
}

fn serve(
    transport: &mut dyn Transport,
    exec: &mut dyn Exec,
    payloads: &[PathBuf],
    settings: &RunSettings,
) -> Result<ReportFile, ServeError> {
    let cmd = transport.serve_cmd();
    let mut child = exec.spawn(&cmd).map_err(ServeError::Failed)?;
    let mut stderr = StderrTail::start(child.stderr.take());
    let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
        let _ = child.kill();
        let _ = child.wait();
        return Err(ServeError::Failed(Diagnostic::error("the runtime's pipes were not set up")));
    };
    let describe = transport.describe();
    let failed = |e: SessionError, child: &mut std::process::Child, stderr: &mut StderrTail| {
        // Close our side so a runtime still waiting for input exits, then collect its stderr.
        let _ = child.kill();
        let status = child.wait().ok();
        let text = stderr.finish();
        let diag = Diagnostic::error(format!("session with the runtime on {describe}: {e}"))
            .with_note(format!("command: {cmd}"));
        let diag = match status.and_then(|s| s.code()) {
            Some(code) => diag.with_note(format!("the runtime exited with status {code}")),
            None => diag,
        };
        let tail: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        let diag = tail[tail.len().saturating_sub(8)..]
            .iter()
            .fold(diag, |d, l| d.with_note(format!("stderr: {l}")));
        (diag, text)
    };
    let mut session = match Session::open(stdout, stdin, "ekb", env!("CARGO_PKG_VERSION")) {
        Ok(s) => s,
        Err(e) => {
            let closed = matches!(e, SessionError::Closed { inside_frame: None, .. } | SessionError::Io(_));
            let (diag, text) = failed(e, &mut child, &mut stderr);
            if closed && text.contains("unknown command `serve`") {
                return Err(ServeError::NoServe(text));
            }
            return Err(ServeError::Failed(diag));
        }
    };
    let hello = session.hello().clone();
    let mut entries = Vec::new();
    for path in payloads {
        let bytes = match std::fs::read(path) {
            Ok(b) => b,
            Err(e) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(ServeError::Failed(Diagnostic::error(format!(
                    "cannot read payload `{}`: {e}",
                    path.display()
                ))));
            }
        };
        let entry = match session.load(bytes) {
            Err(SessionError::Refused { kind, message }) => Entry::Error { kind, message },
            Err(e) => return Err(ServeError::Failed(failed(e, &mut child, &mut stderr).0)),
            Ok(loaded) => {
                let run = session.run(loaded.id, settings.seeds.clone(), settings.timing, settings.threads);
                let entry = match run {
                    Ok(r) => Entry::Run(Box::new(r)),
                    Err(SessionError::Refused { kind, message }) => Entry::Error { kind, message },
                    Err(e) => return Err(ServeError::Failed(failed(e, &mut child, &mut stderr).0)),
                };
                if let Err(e) = session.unload(loaded.id) {
                    return Err(ServeError::Failed(failed(e, &mut child, &mut stderr).0));
                }
                entry
            }
        };
        entries.push(entry);
    }
    if let Err(e) = session.shutdown() {
        return Err(ServeError::Failed(failed(e, &mut child, &mut stderr).0));
    }
    let _ = child.wait();
    stderr.finish();
    Ok(ReportFile { hello, entries })
}

/// A unique name for a staging directory on a device.
fn unique_name(prefix: &str) -> String {
    let nanos =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    format!("{prefix}-{}-{nanos}", std::process::id())
}

/// The name a payload file gets on the device: its file name, made unique by its position.
fn staged_name(i: usize, path: &Path) -> String {
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("payload");
    let clean: String =
        stem.chars().map(|c| if c.is_ascii_alphanumeric() || "-_.".contains(c) { c } else { '_' }).collect();
    format!("{i:03}-{clean}.ekp")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_names_parse_and_print_back() {
        for (s, d) in [
            ("local", Device::Local),
            ("qemu", Device::Qemu),
            ("adb", Device::Adb { serial: None }),
            ("adb:R58M12ABC", Device::Adb { serial: Some("R58M12ABC".into()) }),
            ("adb:192.168.1.5:5555", Device::Adb { serial: Some("192.168.1.5:5555".into()) }),
            ("dir:out/bundle", Device::Dir("out/bundle".into())),
            ("ssh://board", Device::Ssh { user: None, host: "board".into(), port: None }),
            (
                "ssh://root@rk3588.lan:2222",
                Device::Ssh { user: Some("root".into()), host: "rk3588.lan".into(), port: Some(2222) },
            ),
            (
                "ssh://me@[::1]:22",
                Device::Ssh { user: Some("me".into()), host: "::1".into(), port: Some(22) },
            ),
            ("ssh://[fe80::1]", Device::Ssh { user: None, host: "fe80::1".into(), port: None }),
        ] {
            assert_eq!(Device::parse(s).unwrap(), d, "{s}");
            assert_eq!(d.to_string(), s);
        }
    }

    #[test]
    fn bad_device_names_say_what_was_expected() {
        for (s, msg) in [
            ("ssh://root@board:99999", "bad device `ssh://root@board:99999`: `99999` is not a port number"),
            ("ssh://root@board:0", "bad device `ssh://root@board:0`: `0` is not a port number"),
            ("ssh://@board", "bad device `ssh://@board`: the user name is empty or malformed"),
            (
                "ssh://-oProxyCommand=x",
                "bad device `ssh://-oProxyCommand=x`: the host name is empty or malformed",
            ),
            ("ssh://[::1", "bad device `ssh://[::1`: an IPv6 address needs its closing `]`"),
            ("adb:", "bad device `adb:`: the serial is empty or malformed"),
            ("dir:", "bad device `dir:`: the directory is empty"),
        ] {
            let e = Device::parse(s).unwrap_err();
            assert_eq!(e.message, msg);
            assert_eq!(e.expected.as_deref(), Some(FORMS));
        }
        assert_eq!(Device::parse("qemu2").unwrap_err().hint.as_deref(), Some("did you mean `qemu`?"));
        assert_eq!(
            Device::parse("root@board").unwrap_err().hint.as_deref(),
            Some("write `ssh://root@board`")
        );
    }

    #[test]
    fn the_default_device_emulates_only_a_foreign_architecture() {
        let host = Arch::host().unwrap();
        let other = if host == Arch::X86_64 { Arch::Aarch64 } else { Arch::X86_64 };
        assert_eq!(Device::default_for(host), Device::Local);
        assert_eq!(Device::default_for(other), Device::Qemu);
    }

    #[test]
    fn staged_names_are_unique_and_shell_safe() {
        assert_eq!(staged_name(0, Path::new("out/matmul.ekp")), "000-matmul.ekp");
        assert_eq!(staged_name(12, Path::new("a b/it's;x.ekp")), "012-it_s_x.ekp");
    }
}
