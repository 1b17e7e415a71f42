//! The candidate in flight, on disk, and what a crash of the evaluator leaves of it.
//!
//! `in_flight.json` in the run directory names the candidate being evaluated and its stage
//! (`build`: parsing, checking, lowering, emitting and compiling it in this process; `run`: on
//! the device). It is written and synced before the candidate is built, rewritten when the
//! candidate goes to the device, and removed once its result is stored. A candidate built
//! ahead, on another thread while the one before it runs on a device ([`InFlight::mark_ahead`]),
//! has `in_flight_ahead.json` while that thread builds it, and the crash handler renames that
//! one instead when the crash is on the thread building ahead; the candidate's marker moves to
//! `in_flight.json` when its turn comes ([`InFlight::take_ahead`]). When the process
//! crashes meanwhile (SIGABRT, as a stack overflow or an abort ends it; SIGSEGV, SIGBUS, SIGILL,
//! SIGFPE), a signal handler renames it `crashed.json`, and the process then dies of its signal
//! as it would have. A resumed run records that candidate as failed ([`crashed_result`]) instead
//! of evaluating it again and dying again. A run stopped from outside (SIGKILL, Ctrl-C) leaves
//! `in_flight.json` as it was, and a resumed run evaluates that candidate again.
//!
//! What must stay true: the handler does only async-signal-safe work (one `rename` between paths
//! prepared before, chosen by the crashing thread's id, the previous disposition of the signal restored, the signal raised again
//! when it was sent rather than caused by a fault), so the process still dies of its signal,
//! after Rust's own report of a stack overflow; only the marker of a run open in this process is
//! ever renamed.

use super::record::{CandidateResult, CandidateText, FailureClass, FailureRecord, Instance, Phases};
use super::store::utc_now;
use ekb_ir::Diagnostic;
use serde::{Deserialize, Serialize};
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI32, AtomicPtr, Ordering};
use std::sync::OnceLock;

/// The marker of the candidate being evaluated.
pub const IN_FLIGHT_FILE: &str = "in_flight.json";
/// The marker of the candidate built ahead.
pub const AHEAD_FILE: &str = "in_flight_ahead.json";
/// The marker of the candidate the evaluator crashed on.
pub const CRASHED_FILE: &str = "crashed.json";

/// Where a candidate is in its evaluation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    /// Parsed, checked, lowered, emitted and compiled in the evaluator's process.
    Build,
    /// Loaded and run on the device.
    Run,
}

/// What the marker says.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Marker {
    pub instance: Instance,
    pub sample: u32,
    pub stage: Stage,
    /// The candidate's record, without its kind (not known before it is parsed).
    pub candidate: CandidateText,
    /// When the candidate started, UTC.
    pub started: String,
}

/// The marker file of an open run; the crash handler renames it while this lives.
#[derive(Debug)]
pub struct InFlight {
    path: PathBuf,
    ahead: PathBuf,
    /// The paths the handler renames between (the marker, the crash marker, the marker of the
    /// candidate built ahead), kept alive while they are published to it.
    c_paths: (CString, CString, CString),
}

static FROM: AtomicPtr<libc::c_char> = AtomicPtr::new(std::ptr::null_mut());
static TO: AtomicPtr<libc::c_char> = AtomicPtr::new(std::ptr::null_mut());
static AHEAD: AtomicPtr<libc::c_char> = AtomicPtr::new(std::ptr::null_mut());
/// The thread building a candidate ahead, while it does (0: none).
static AHEAD_TID: AtomicI32 = AtomicI32::new(0);
const SIGNALS: [libc::c_int; 5] = [libc::SIGABRT, libc::SIGSEGV, libc::SIGBUS, libc::SIGILL, libc::SIGFPE];
/// Each signal's disposition before the handler was installed.
static PREVIOUS: OnceLock<Vec<(libc::c_int, libc::sigaction)>> = OnceLock::new();

fn io_error(what: &str, path: &Path, e: std::io::Error) -> Diagnostic {
    Diagnostic::error(format!("cannot {what} `{}`: {e}", path.display()))
}

fn c_path(p: &Path) -> CString {
    CString::new(p.as_os_str().as_bytes()).unwrap_or_default()
}

impl InFlight {
    /// Opens the marker of the run in `dir` and arms the crash handler for it.
    pub fn open(dir: &Path) -> InFlight {
        install();
        let (path, ahead) = (dir.join(IN_FLIGHT_FILE), dir.join(AHEAD_FILE));
        let c_paths = (c_path(&path), c_path(&dir.join(CRASHED_FILE)), c_path(&ahead));
        FROM.store(c_paths.0.as_ptr().cast_mut(), Ordering::SeqCst);
        TO.store(c_paths.1.as_ptr().cast_mut(), Ordering::SeqCst);
        AHEAD.store(c_paths.2.as_ptr().cast_mut(), Ordering::SeqCst);
        InFlight { path, ahead, c_paths }
    }

    /// Writes `marker` and syncs it to disk.
    pub fn mark(&self, marker: &Marker) -> Result<(), Diagnostic> {
        write_marker(&self.path, marker)
    }

    /// Writes `marker` as the candidate built ahead, by the calling thread: until
    /// [`InFlight::ahead_built`], a crash on this thread is that candidate's.
    pub fn mark_ahead(&self, marker: &Marker) -> Result<(), Diagnostic> {
        // The thread first: a crash before the marker is written leaves no crash marker (the
        // rename finds nothing), and the resumed run builds this candidate again.
        // SAFETY: gettid has no preconditions.
        AHEAD_TID.store(unsafe { libc::gettid() }, Ordering::SeqCst);
        let written = write_marker(&self.ahead, marker);
        if written.is_err() {
            self.ahead_built();
        }
        written
    }

    /// The thread building ahead is done with it: crashes are the current candidate's again.
    pub fn ahead_built(&self) {
        AHEAD_TID.store(0, Ordering::SeqCst);
    }

    /// The candidate built ahead is the current one now: its `marker` goes to the main slot.
    pub fn take_ahead(&self, marker: &Marker) -> Result<(), Diagnostic> {
        self.mark(marker)?;
        self.clear_ahead()
    }

    /// Removes the marker of a candidate built ahead that will not be evaluated next.
    pub fn clear_ahead(&self) -> Result<(), Diagnostic> {
        remove_marker(&self.ahead)
    }

    /// Removes the marker once the candidate's result is stored.
    pub fn clear(&self) -> Result<(), Diagnostic> {
        remove_marker(&self.path)
    }
}

fn write_marker(path: &Path, marker: &Marker) -> Result<(), Diagnostic> {
    let text = serde_json::to_string(marker).expect("markers serialise");
    let mut f = std::fs::File::create(path).map_err(|e| io_error("create", path, e))?;
    std::io::Write::write_all(&mut f, text.as_bytes()).map_err(|e| io_error("write", path, e))?;
    f.sync_all().map_err(|e| io_error("sync", path, e))
}

fn remove_marker(path: &Path) -> Result<(), Diagnostic> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(io_error("remove", path, e)),
        _ => Ok(()),
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        // Disarm only if the handler still points at this run's paths.
        let _ = FROM.compare_exchange(
            self.c_paths.0.as_ptr().cast_mut(),
            std::ptr::null_mut(),
            Ordering::SeqCst,
            Ordering::SeqCst,
        );
        let _ = TO.compare_exchange(
            self.c_paths.1.as_ptr().cast_mut(),
            std::ptr::null_mut(),
            Ordering::SeqCst,
            Ordering::SeqCst,
        );
        let _ = AHEAD.compare_exchange(
            self.c_paths.2.as_ptr().cast_mut(),
            std::ptr::null_mut(),
            Ordering::SeqCst,
            Ordering::SeqCst,
        );
    }
}

/// The candidate a crash left in `dir`, if any; the marker is removed once it is read (the
/// caller stores the result before anything else).
pub fn take_crashed(dir: &Path) -> Result<Option<Marker>, Diagnostic> {
    let path = dir.join(CRASHED_FILE);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io_error("read", &path, e)),
    };
    let marker: Marker = serde_json::from_str(&text).map_err(|e| {
        Diagnostic::error(format!("`{}` does not name a candidate: {e}", path.display())).with_hint(
            "it names the candidate the evaluator crashed on; delete it to evaluate that candidate again",
        )
    })?;
    std::fs::remove_file(&path).map_err(|e| io_error("remove", &path, e))?;
    Ok(Some(marker))
}

/// The result of the candidate the evaluator crashed on.
pub fn crashed_result(m: Marker) -> CandidateResult {
    let (class, detail, doing) = match m.stage {
        Stage::Build => (
            FailureClass::Compile,
            "compile: the evaluator crashed building it",
            "building it (parsing, checking, lowering, emitting or compiling it)",
        ),
        Stage::Run => {
            (FailureClass::Runtime, "runtime error: the evaluator crashed running it", "running it")
        }
    };
    let evidence = format!(
        "the evaluator process died of a signal while {doing}, started {}; the resumed run records the \
         candidate as failed instead of evaluating it again",
        m.started
    );
    CandidateResult {
        instance: m.instance,
        sample: m.sample,
        candidate: m.candidate,
        compiled: m.stage == Stage::Run,
        correct: false,
        failure: Some(FailureRecord { class, detail: detail.into(), evidence }),
        timing: None,
        baseline_failure: None,
        memory: None,
        passes: None,
        seconds: Phases::default(),
        finished: utc_now(),
        device: None,
        median_ns: None,
    }
}

/// Installs the crash handler once per process.
fn install() {
    PREVIOUS.get_or_init(|| {
        SIGNALS
            .iter()
            .map(|&sig| {
                // SAFETY: plain sigaction calls with zeroed, then filled, structures; the handler
                // runs on the alternate signal stack Rust gives its threads (a stack overflow
                // leaves no room on the thread's own).
                unsafe {
                    let mut new: libc::sigaction = std::mem::zeroed();
                    let handler: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) =
                        on_crash;
                    new.sa_sigaction = handler as usize;
                    new.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
                    libc::sigemptyset(&mut new.sa_mask);
                    let mut old: libc::sigaction = std::mem::zeroed();
                    libc::sigaction(sig, &new, &mut old);
                    (sig, old)
                }
            })
            .collect()
    });
}

extern "C" fn on_crash(sig: libc::c_int, info: *mut libc::siginfo_t, _: *mut libc::c_void) {
    // SAFETY: gettid, rename, sigaction and raise are async-signal-safe; the paths are
    // NUL-terminated strings kept alive by the open `InFlight`; `info` is the kernel's.
    unsafe {
        let ahead = AHEAD_TID.load(Ordering::SeqCst);
        let from = if ahead != 0 && ahead == libc::gettid() { &AHEAD } else { &FROM };
        let (from, to) = (from.load(Ordering::SeqCst), TO.load(Ordering::SeqCst));
        if !from.is_null() && !to.is_null() {
            libc::rename(from, to);
        }
        if let Some((_, old)) = PREVIOUS.get().and_then(|p| p.iter().find(|(s, _)| *s == sig)) {
            libc::sigaction(sig, old, std::ptr::null_mut());
        }
        // A fault happens again when the handler returns, now to the previous handler; a
        // signal that was sent (`abort`, `kill`) must be raised again.
        if info.is_null() || (*info).si_code <= 0 {
            libc::raise(sig);
        }
    }
}
