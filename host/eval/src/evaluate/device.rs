//! A live session with the runtime on a device for a whole evaluation: the runtime is
//! installed and started once (`ekb-rt serve`), payloads are loaded and paired runs requested
//! over the protocol.
//!
//! What must stay true: a runtime that dies mid-request (its own crash, not a candidate's: the
//! runtime isolates candidates in child processes) is reported as [`Lost`] with the tail of its
//! stderr, and the next request starts a fresh runtime, so one bad moment costs one candidate,
//! never the run; only a runtime that cannot be started again stops the run ([`Answer::Down`]).

use ekb_deploy::command::{Exec, StderrTail, System};
use ekb_deploy::session::{Hello, Session, SessionError};
use ekb_deploy::Transport;
use ekb_ir::Diagnostic;
use ekb_wire::protocol::{
    DeviceInfo, ErrorKind, PairedReport, PairedSettings, PayloadId, RunReport, TimingOverrides,
};
use std::process::{Child, ChildStdin, ChildStdout};

/// The runtime stopped answering; the evidence is in the message.
#[derive(Debug, Clone, PartialEq)]
pub struct Lost(pub String);

/// What became of a request to the runtime.
#[derive(Debug)]
pub enum Answer<T> {
    Ok(T),
    /// The runtime refused the request (it goes on).
    Refused {
        kind: ErrorKind,
        message: String,
    },
    Lost(Lost),
    /// No runtime could be started: the device is gone, and the run must stop.
    Down(Diagnostic),
}

struct Live {
    child: Child,
    stderr: StderrTail,
    session: Session<ChildStdout, ChildStdin>,
}

/// The runtime on one device, started on demand.
pub struct DeviceSession {
    transport: Box<dyn Transport>,
    /// Extra arguments of `ekb-rt serve`.
    serve_args: Vec<String>,
    live: Option<Live>,
    hello: Option<Hello>,
    /// How many runtimes this session has started.
    generation: u64,
    /// What installing and starting the runtime did, one line each.
    pub log: Vec<String>,
}

impl DeviceSession {
    /// Installs the runtime on the device and starts it as `ekb-rt serve SERVE_ARGS...`.
    pub fn open(
        mut transport: Box<dyn Transport>,
        serve_args: Vec<String>,
    ) -> Result<DeviceSession, Diagnostic> {
        let log = transport.install(&mut System)?;
        let mut s = DeviceSession { transport, serve_args, live: None, hello: None, generation: 0, log };
        s.start()?;
        Ok(s)
    }

    /// The device in words.
    pub fn describe(&self) -> String {
        self.transport.describe()
    }

    /// What the runtime said when it started.
    pub fn hello(&self) -> &Hello {
        self.hello.as_ref().expect("a session is opened before use")
    }

    fn start(&mut self) -> Result<(), Diagnostic> {
        let cmd = self.transport.serve_cmd().args(self.serve_args.iter().cloned());
        let mut child = System.spawn(&cmd)?;
        let mut stderr = StderrTail::start(child.stderr.take());
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(Diagnostic::error("the runtime's pipes were not set up"));
        };
        match Session::open(stdout, stdin, "ekb", env!("CARGO_PKG_VERSION")) {
            Ok(session) => {
                self.hello = Some(session.hello().clone());
                self.live = Some(Live { child, stderr, session });
                self.generation += 1;
                Ok(())
            }
            Err(e) => {
                let _ = child.kill();
                let _ = child.wait();
                let tail = stderr.finish();
                Err(Diagnostic::error(format!("cannot start the runtime on {}: {e}", self.describe()))
                    .with_note(format!("command: {cmd}"))
                    .with_note(last_lines(&tail, 8)))
            }
        }
    }

    /// Runs `f` on the live session (starting one if the last died); a broken connection ends
    /// that runtime and is returned as [`Lost`].
    fn with<T>(
        &mut self,
        f: impl FnOnce(&mut Session<ChildStdout, ChildStdin>) -> Result<T, SessionError>,
    ) -> Answer<T> {
        if self.live.is_none() {
            if let Err(d) = self.start() {
                return Answer::Down(d);
            }
        }
        let live = self.live.as_mut().expect("started above");
        match f(&mut live.session) {
            Ok(v) => Answer::Ok(v),
            Err(SessionError::Refused { kind, message }) => Answer::Refused { kind, message },
            Err(e) => {
                let mut live = self.live.take().expect("present");
                let _ = live.child.kill();
                let status = live.child.wait().ok().and_then(|s| s.code());
                let tail = live.stderr.finish();
                let status =
                    status.map_or(String::new(), |c| format!(" (the runtime exited with status {c})"));
                Answer::Lost(Lost(format!("{e}{status}\n{}", last_lines(&tail, 12))))
            }
        }
    }

    /// The device's full description (its GPUs with their limits).
    pub fn device_info(&mut self) -> Answer<DeviceInfo> {
        self.with(|s| s.device_info())
    }

    pub fn load(&mut self, payload: Vec<u8>) -> Answer<PayloadId> {
        self.with(|s| s.load(payload).map(|l| l.id))
    }

    /// Runs one payload on the listed seed indices with these timing settings and threads.
    pub fn run_with(
        &mut self,
        payload: PayloadId,
        seeds: Option<Vec<u32>>,
        timing: TimingOverrides,
        threads: Option<u32>,
    ) -> Answer<RunReport> {
        self.with(|s| s.run(payload, seeds, timing, threads))
    }

    /// Keeps a kernel process for `payload` after checking its seeds (`Hold`): the report, with
    /// a failure when nothing is held.
    pub fn hold(
        &mut self,
        payload: PayloadId,
        seeds: Option<Vec<u32>>,
        timing: TimingOverrides,
        threads: Option<u32>,
    ) -> Answer<RunReport> {
        self.with(|s| s.hold(payload, seeds, timing, threads))
    }

    /// One timed turn of a held payload (`Turn`).
    pub fn turn(&mut self, payload: PayloadId, budget_ms: u64) -> Answer<RunReport> {
        self.with(|s| s.turn(payload, budget_ms))
    }

    /// Ends a hold after its last checks (`Release`).
    pub fn release(&mut self, payload: PayloadId) -> Answer<RunReport> {
        self.with(|s| s.release(payload))
    }

    pub fn paired(
        &mut self,
        baseline: PayloadId,
        candidate: PayloadId,
        settings: PairedSettings,
    ) -> Answer<PairedReport> {
        self.with(|s| s.paired_run(baseline, candidate, settings))
    }

    /// Forgets a payload; a session that is gone has forgotten it already.
    pub fn unload(&mut self, payload: PayloadId) {
        if self.live.is_some() {
            let _ = self.with(|s| s.unload(payload));
        }
    }

    /// Which runtime is (or will next be) running: payload ids are only valid in the
    /// generation that loaded them, and a restart starts a new one.
    pub fn generation(&self) -> u64 {
        if self.live.is_some() {
            self.generation
        } else {
            self.generation + 1
        }
    }

    /// Ends the session politely.
    pub fn close(mut self) {
        if let Some(mut live) = self.live.take() {
            let _ = live.session.shutdown();
            let _ = live.child.wait();
            live.stderr.finish();
        }
    }
}

/// The last `n` non-empty lines of a text.
fn last_lines(text: &str, n: usize) -> String {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}
