//! The kernel process: a forked child that runs a payload's kernels, and the parent's side of
//! it (commands, a watchdog, the classification of its death).
//!
//! [`spawn`] forks. The child, before it runs anything of the payload:
//! - asks to be killed with its parent (`PR_SET_PDEATHSIG`), gives up core dumps, and points
//!   stdin and stdout at `/dev/null` (they carry the protocol);
//! - unmaps every mapping it was told to hide (the payload files: the expected outputs live in
//!   them) — the expected outputs are then mapped nowhere in the kernel process;
//! - installs the fault handler (`SIGSEGV`, `SIGBUS`, `SIGILL`, `SIGFPE`, `SIGSYS`, on an
//!   alternate stack) that records the signal, the faulting address, the program counter and
//!   the stack pointer in a page shared with the parent, then lets the signal kill the process
//!   (for `SIGSYS`, the system call's number, then exits with [`EXIT_SYSCALL`]).
//!
//! Then it runs the body it was given (`crate::worker`), which starts its threads, sets the
//! resource limits ([`set_limits`]) and installs the system-call filter (`crate::seccomp`)
//! before the first kernel call, and answers commands on a pipe.
//!
//! The parent sends a command and waits for the answer with a deadline ([`Child::request`]):
//! past it, or when the host's stream breaks, it kills the child with `SIGKILL`. A child that
//! dies is reaped with `wait4` (its maximum RSS comes from there) and its death is classified
//! ([`Death::failure`]) with the fault record as evidence.
//!
//! The system calls go through `nix`'s checked wrappers; `wait4` (for the child's resource
//! usage, which `nix` does not return) and `_exit` (async-signal-safe, never returning) are
//! called directly.
//!
//! What it must keep true: the runtime survives anything the child does; the child never
//! returns into the parent's code (it ends with `_exit`); every child is reaped; nothing the
//! child writes reaches the protocol stream; the fault handler is async-signal-safe (it only
//! stores to the shared page and calls `_exit`).

use crate::device::Device;
use crate::sys::{self, Mapping};
use ekb_wire::protocol::Availability;
use nix::fcntl::OFlag;
use nix::poll::{PollFd, PollFlags, PollTimeout};
use nix::sys::resource::{setrlimit, Resource};
use nix::sys::signal::{self, SaFlags, SigAction, SigHandler, SigSet, Signal};
use nix::sys::stat::Mode;
use nix::unistd::{ForkResult, Pid};
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, IntoRawFd, OwnedFd, RawFd};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicPtr, AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// Exit status of a kernel process killed by the system-call filter (128 + `SIGSYS`).
pub const EXIT_SYSCALL: i32 = 128 + libc::SIGSYS;
/// Exit status of a kernel process whose runtime code failed (a panic, a broken pipe).
pub const EXIT_INTERNAL: i32 = 101;
/// Largest message on the internal pipes.
const MAX_MESSAGE: u32 = 64 << 20;

/// What the fault handler records (in a page shared with the parent).
#[repr(C)]
#[derive(Debug, Default)]
struct FaultPage {
    /// 0: nothing yet; 1: being written; 2: complete.
    state: AtomicU32,
    signo: i32,
    code: i32,
    syscall: i32,
    addr: u64,
    pc: u64,
    sp: u64,
    /// x86_64: the page-fault error code (bit 1: a write); 0 elsewhere.
    err: u64,
}

/// A recorded fault, as the parent reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fault {
    pub signo: i32,
    pub code: i32,
    /// The system call's number, for `SIGSYS`.
    pub syscall: i32,
    pub addr: usize,
    pub pc: usize,
    pub sp: usize,
    /// Whether the access was a write, where the CPU says.
    pub write: Option<bool>,
}

static FAULT: AtomicPtr<FaultPage> = AtomicPtr::new(std::ptr::null_mut());

#[cfg(target_arch = "x86_64")]
fn registers(uc: *const libc::c_void) -> (u64, u64, u64) {
    // SAFETY: the kernel passes a valid ucontext_t to an SA_SIGINFO handler.
    let g = unsafe { &(*uc.cast::<libc::ucontext_t>()).uc_mcontext.gregs };
    (g[libc::REG_RIP as usize] as u64, g[libc::REG_RSP as usize] as u64, g[libc::REG_ERR as usize] as u64)
}

#[cfg(target_arch = "aarch64")]
fn registers(uc: *const libc::c_void) -> (u64, u64, u64) {
    // SAFETY: the kernel passes a valid ucontext_t to an SA_SIGINFO handler.
    let m = unsafe { &(*uc.cast::<libc::ucontext_t>()).uc_mcontext };
    (m.pc, m.sp, 0)
}

extern "C" fn on_fault(sig: libc::c_int, info: *mut libc::siginfo_t, uc: *mut libc::c_void) {
    let page = FAULT.load(Ordering::Acquire);
    if !page.is_null() && !info.is_null() {
        // SAFETY: the page is the live shared mapping set up before the handler was installed.
        let p = unsafe { &mut *page };
        if p.state.compare_exchange(0, 1, Ordering::AcqRel, Ordering::Acquire).is_ok() {
            // SAFETY: a valid siginfo_t from the kernel. For SIGSYS the union holds
            // (call address: pointer at 16, syscall: int at 24, arch: u32 at 28).
            unsafe {
                p.signo = sig;
                p.code = (*info).si_code;
                p.addr = (*info).si_addr() as u64;
                if sig == libc::SIGSYS {
                    p.syscall = *info.cast::<u8>().add(24).cast::<i32>();
                }
            }
            let (pc, sp, err) = registers(uc);
            p.pc = pc;
            p.sp = sp;
            p.err = err;
            p.state.store(2, Ordering::Release);
        }
    }
    if sig == libc::SIGSYS {
        // SAFETY: _exit is async-signal-safe and never returns.
        unsafe { libc::_exit(EXIT_SYSCALL) };
    }
    // Returning re-runs the faulting instruction under the default action (SA_RESETHAND):
    // the process dies of the signal, which the parent sees in the wait status.
}

fn install_fault_handlers() -> io::Result<()> {
    let flags = SaFlags::SA_SIGINFO | SaFlags::SA_ONSTACK | SaFlags::SA_RESETHAND;
    let action = SigAction::new(SigHandler::SigAction(on_fault), flags, SigSet::empty());
    for sig in [Signal::SIGSEGV, Signal::SIGBUS, Signal::SIGILL, Signal::SIGFPE, Signal::SIGSYS] {
        // SAFETY: the handler is async-signal-safe (module notes) and has the SA_SIGINFO
        // signature.
        unsafe { signal::sigaction(sig, &action) }?;
    }
    Ok(())
}

/// What the child is given.
pub struct ChildIo {
    /// Commands from the parent.
    pub commands: OwnedFd,
    /// Answers to the parent.
    pub replies: OwnedFd,
}

/// Resource limits of the kernel process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Address space the process may add to what it has mapped when the limits are set.
    pub address_space_headroom: u64,
    /// CPU seconds (all threads together) before `SIGXCPU`.
    pub cpu_seconds: u64,
}

/// Sets `RLIMIT_AS` (the current address space plus the headroom) and `RLIMIT_CPU`; returns
/// what was set, in words, or why it could not be.
pub fn set_limits(limits: &Limits) -> Result<String, String> {
    let current = std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        .map(|pages| pages * sys::page_size() as u64)
        .ok_or("cannot read /proc/self/statm")?;
    let as_limit = current.saturating_add(limits.address_space_headroom);
    setrlimit(Resource::RLIMIT_AS, as_limit, as_limit).map_err(|e| format!("RLIMIT_AS: {e}"))?;
    setrlimit(Resource::RLIMIT_CPU, limits.cpu_seconds, limits.cpu_seconds.saturating_add(1))
        .map_err(|e| format!("RLIMIT_CPU: {e}"))?;
    Ok(format!(
        "address space limited to {as_limit} bytes ({current} mapped + {} headroom), CPU time to {} s",
        limits.address_space_headroom, limits.cpu_seconds
    ))
}

/// How a request to the child ended without an answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Death {
    /// The deadline passed; the child was killed.
    Timeout { after: Duration },
    /// The child died by itself: its wait status and the fault it recorded.
    Died { status: i32, fault: Option<Fault> },
    /// The host's stream broke while waiting; the child was killed.
    HostGone,
    /// The child answered something unreadable.
    Garbled(String),
}

/// How a reaped child ended, with its maximum RSS.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reaped {
    pub status: i32,
    pub max_rss_bytes: Option<u64>,
}

/// The parent's handle on a kernel process.
pub struct Child {
    pid: Pid,
    commands: Option<OwnedFd>,
    replies: OwnedFd,
    fault: Mapping,
    reaped: Option<Reaped>,
    /// A descriptor whose breaking (the host closing its end) aborts the wait.
    host: Option<RawFd>,
}

/// Forks a kernel process that unmaps `hidden` (address, length) ranges and runs `body`.
/// `body` must end the process (it never returns into the parent's code).
pub fn spawn(
    hidden: &[(usize, usize)],
    host: Option<RawFd>,
    body: impl FnOnce(ChildIo) -> i32,
) -> io::Result<Child> {
    let (cmd_r, cmd_w) = sys::pipe()?;
    let (rep_r, rep_w) = sys::pipe()?;
    let fault = Mapping::shared(std::mem::size_of::<FaultPage>())?;
    let parent = nix::unistd::getpid();
    // SAFETY: fork; the child only runs the code below and ends with _exit.
    let pid = match unsafe { nix::unistd::fork() }? {
        ForkResult::Parent { child } => child,
        ForkResult::Child => {
            drop(cmd_w);
            drop(rep_r);
            let status =
                child_start(parent, hidden, &fault, ChildIo { commands: cmd_r, replies: rep_w }, body);
            // SAFETY: ends the child without running the parent's destructors or atexit handlers.
            unsafe { libc::_exit(status) };
        }
    };
    drop(cmd_r);
    drop(rep_w);
    Ok(Child { pid, commands: Some(cmd_w), replies: rep_r, fault, reaped: None, host })
}

fn child_start(
    parent: Pid,
    hidden: &[(usize, usize)],
    fault: &Mapping,
    io: ChildIo,
    body: impl FnOnce(ChildIo) -> i32,
) -> i32 {
    // Best effort each: a child that cannot do one of these still runs isolated by the rest.
    let _ = nix::sys::prctl::set_pdeathsig(Signal::SIGKILL);
    if nix::unistd::getppid() != parent {
        return EXIT_INTERNAL;
    }
    let _ = setrlimit(Resource::RLIMIT_CORE, 0, 0);
    match nix::fcntl::open(c"/dev/null", OFlag::O_RDWR, Mode::empty()) {
        Ok(null) => {
            let _ = nix::unistd::dup2_stdin(&null);
            let _ = nix::unistd::dup2_stdout(&null);
            if null.as_raw_fd() <= 2 {
                // It is a standard descriptor itself now: keep it open.
                let _ = null.into_raw_fd();
            }
        }
        Err(_) => {
            let _ = nix::unistd::close(0);
            let _ = nix::unistd::close(1);
        }
    }
    for &(addr, len) in hidden {
        if let Some(start) = NonNull::new(addr as *mut libc::c_void) {
            // SAFETY: the parent's payload mappings and held runs' buffers, which nothing in this
            // process uses.
            let _ = unsafe { nix::sys::mman::munmap(start, len) };
        }
    }
    FAULT.store(fault.as_ptr().cast(), Ordering::Release);
    if install_fault_handlers().is_err() {
        return EXIT_INTERNAL;
    }
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| body(io))) {
        Ok(status) => status,
        Err(_) => EXIT_INTERNAL,
    }
}

impl Child {
    pub fn pid(&self) -> libc::pid_t {
        self.pid.as_raw()
    }

    /// Sends `message` (a length-prefixed frame) and waits up to `timeout` for the answer.
    pub fn request(&mut self, message: &[u8], timeout: Duration) -> Result<Vec<u8>, Death> {
        let sent = match &self.commands {
            Some(fd) => write_message(fd.as_raw_fd(), message),
            None => Err(io::Error::from(io::ErrorKind::BrokenPipe)),
        };
        if sent.is_err() {
            // The child is gone: its death says why.
            return Err(self.died());
        }
        self.receive(timeout)
    }

    /// Waits up to `timeout` for the next message from the child.
    pub fn receive(&mut self, timeout: Duration) -> Result<Vec<u8>, Death> {
        let deadline = Instant::now() + timeout;
        let mut head = [0u8; 4];
        self.read_deadline(&mut head, deadline, timeout)?;
        let len = u32::from_le_bytes(head);
        if len > MAX_MESSAGE {
            self.kill();
            return Err(Death::Garbled(format!("a message of {len} bytes")));
        }
        let mut body = vec![0u8; len as usize];
        self.read_deadline(&mut body, deadline, timeout)?;
        Ok(body)
    }

    fn read_deadline(&mut self, buf: &mut [u8], deadline: Instant, timeout: Duration) -> Result<(), Death> {
        let mut at = 0;
        while at < buf.len() {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                self.kill();
                return Err(Death::Timeout { after: timeout });
            }
            // SAFETY: the host's descriptor stays open for the whole run (the caller owns it).
            let host = self.host.map(|h| unsafe { BorrowedFd::borrow_raw(h) });
            let mut fds = vec![PollFd::new(self.replies.as_fd(), PollFlags::POLLIN)];
            fds.extend(host.map(|h| PollFd::new(h, PollFlags::empty())));
            let ms = PollTimeout::from(left.as_millis().clamp(1, 1000) as u16);
            match nix::poll::poll(&mut fds, ms) {
                Ok(_) => {}
                Err(nix::errno::Errno::EINTR) => continue,
                Err(e) => {
                    self.kill();
                    return Err(Death::Garbled(format!("poll: {e}")));
                }
            }
            let broken = PollFlags::POLLERR | PollFlags::POLLHUP;
            if fds.get(1).and_then(PollFd::revents).is_some_and(|r| r.intersects(broken)) {
                self.kill();
                return Err(Death::HostGone);
            }
            if fds[0].revents().is_none_or(|r| r.is_empty()) {
                continue;
            }
            match nix::unistd::read(&self.replies, &mut buf[at..]) {
                Ok(0) => return Err(self.died()),
                Ok(n) => at += n,
                Err(nix::errno::Errno::EINTR) => {}
                Err(_) => return Err(self.died()),
            }
        }
        Ok(())
    }

    /// The child closed its pipe: reap it (killing it if it lingers) and say how it died.
    fn died(&mut self) -> Death {
        let reaped = self.reap(Some(Duration::from_secs(5)));
        Death::Died { status: reaped.status, fault: self.fault() }
    }

    /// Kills the child and reaps it.
    pub fn kill(&mut self) {
        if self.reaped.is_none() {
            // Our own, not yet reaped child: it exists (perhaps as a zombie) until reaped.
            let _ = signal::kill(self.pid, Signal::SIGKILL);
            self.reap(None);
        }
    }

    /// Waits for the child to end (at most `grace`, then kills it) and returns how it ended.
    pub fn reap(&mut self, grace: Option<Duration>) -> Reaped {
        if let Some(r) = self.reaped {
            return r;
        }
        self.commands = None;
        let deadline = grace.map(|g| Instant::now() + g);
        let mut status = 0;
        // SAFETY: rusage is plain data.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        loop {
            let flags = if deadline.is_some() { libc::WNOHANG } else { 0 };
            // SAFETY: waiting for our own child with valid out-pointers.
            let r = unsafe { libc::wait4(self.pid.as_raw(), &mut status, flags, &mut ru) };
            if r == self.pid.as_raw() {
                break;
            }
            if r < 0 && io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
                // Not our child any more (already reaped elsewhere): nothing to wait for.
                status = 0;
                break;
            }
            if deadline.is_some_and(|d| Instant::now() >= d) {
                let _ = signal::kill(self.pid, Signal::SIGKILL);
                return self.reap(None);
            }
            if r == 0 {
                std::thread::sleep(Duration::from_millis(1));
            }
        }
        let reaped = Reaped {
            status,
            max_rss_bytes: u64::try_from(ru.ru_maxrss).ok().filter(|&k| k > 0).map(|k| k * 1024),
        };
        self.reaped = Some(reaped);
        reaped
    }

    /// The fault the child recorded, if any.
    pub fn fault(&self) -> Option<Fault> {
        // SAFETY: the shared page holds a FaultPage (zeroed at creation); reads race only with
        // a child that is dead or stopped by now, and a torn record is ignored by `state`.
        let p = unsafe { &*self.fault.as_ptr().cast::<FaultPage>() };
        (p.state.load(Ordering::Acquire) == 2).then(|| Fault {
            signo: p.signo,
            code: p.code,
            syscall: p.syscall,
            addr: p.addr as usize,
            pc: p.pc as usize,
            sp: p.sp as usize,
            write: cfg!(target_arch = "x86_64").then_some(p.err & 2 != 0),
        })
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Writes one length-prefixed message to `fd`.
pub fn write_message(fd: RawFd, body: &[u8]) -> io::Result<()> {
    let mut frame = Vec::with_capacity(4 + body.len());
    frame.extend_from_slice(&(body.len() as u32).to_le_bytes());
    frame.extend_from_slice(body);
    sys::write_all(fd, &frame)
}

/// Reads one length-prefixed message from `fd` (blocking); `None` when the stream ended.
pub fn read_message(fd: RawFd) -> io::Result<Option<Vec<u8>>> {
    let mut head = [0u8; 4];
    if !sys::read_exact(fd, &mut head)? {
        return Ok(None);
    }
    let len = u32::from_le_bytes(head);
    if len > MAX_MESSAGE {
        return Err(io::Error::new(io::ErrorKind::InvalidData, format!("a message of {len} bytes")));
    }
    let mut body = vec![0u8; len as usize];
    if !sys::read_exact(fd, &mut body)? {
        return Ok(None);
    }
    Ok(Some(body))
}

/// Whether kernels can run under the system-call filter here: a throwaway child installs it.
pub fn availability(device: &Device) -> Availability {
    if device.emulation.is_some() {
        return Availability::Unavailable {
            reason: "isolation unavailable: seccomp not supported under qemu-user".into(),
        };
    }
    let probe = spawn(&[], None, |io| {
        let spec = crate::seccomp::FilterSpec { write_fds: vec![io.replies.as_raw_fd()], read_fds: vec![] };
        let status = match crate::seccomp::build(&spec).and_then(|p| crate::seccomp::install(&p)) {
            Ok(()) => 0,
            Err(e) => e.raw_os_error().unwrap_or(255),
        };
        let _ = write_message(io.replies.as_raw_fd(), &status.to_le_bytes());
        0
    });
    let answer = probe.map_err(|e| e.to_string()).and_then(|mut c| {
        let r = c.receive(Duration::from_secs(5)).map_err(|d| format!("{d:?}"));
        c.reap(Some(Duration::from_secs(1)));
        r
    });
    match answer.as_deref() {
        Ok([a, b, c, d]) => match i32::from_le_bytes([*a, *b, *c, *d]) {
            0 => Availability::Available,
            errno => Availability::Unavailable { reason: seccomp_reason(errno, device) },
        },
        Ok(other) => {
            Availability::Unavailable { reason: format!("the probe answered {} bytes", other.len()) }
        }
        Err(e) => Availability::Unavailable { reason: format!("the probe process failed: {e}") },
    }
}

/// Why the filter could not be installed, in words.
pub fn seccomp_reason(errno: i32, device: &Device) -> String {
    let e = io::Error::from_raw_os_error(errno);
    match (errno, &device.emulation) {
        (_, Some(_)) => format!("isolation unavailable: seccomp not supported under qemu-user ({e})"),
        (libc::EINVAL | libc::ENOSYS, None) => {
            format!("isolation unavailable: this kernel has no seccomp filter support ({e})")
        }
        _ => format!("isolation unavailable: the system-call filter could not be installed ({e})"),
    }
}
