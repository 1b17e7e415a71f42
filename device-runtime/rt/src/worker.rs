//! What the kernel process does: set itself up, enter the sandbox, then run the plan when the
//! parent says so and report times and counter readings.
//!
//! Setup, in order (all before the first kernel call): open the performance counters on
//! itself (inherited by the threads started next), start the thread pool and the thread that
//! calls kernels (each with an alternate signal stack), pin it, make every input and parameter
//! read-only in this process, map the cache-flush buffer, set the resource limits, install
//! the system-call filter (skipped, with the reason, where seccomp is unavailable), and
//! answer [`Reply::Ready`]. From then on the process only answers commands:
//!
//! - [`Cmd::Run`]: poison the program's outputs and temporaries, run the plan once, answer
//!   [`Reply::Ran`] with its time (the parent then checks outputs, guards and inputs);
//! - [`Cmd::Sample`]: for each program index in `order`, poison, flush the caches if asked,
//!   and time one execution with `CLOCK_MONOTONIC` (the clock reads are the only code inside
//!   the timed span besides the plan); answer [`Reply::Samples`];
//! - [`Cmd::Count`]: run the plan `runs` times with the counters enabled around each
//!   execution only; answer [`Reply::Counted`];
//! - [`Cmd::Exit`] (or the parent gone): `_exit(0)`.
//!
//! What it must keep true: no kernel runs before the filter is in place (where it can be);
//! nothing of the payload file is mapped here (the parent hid it before the body starts); the
//! process only writes to its reply pipe and reads its command pipe and counters; it never
//! returns into the runtime's serving code.

use crate::buffers::Buffers;
use crate::counters::{CounterSet, Raw, NAMES};
use crate::isolate::{self, ChildIo, Limits, EXIT_INTERNAL};
use crate::pool::{self, Pool, PoolConfig, STACK_RESERVE};
use crate::program::Program;
use crate::seccomp;
use crate::sys::{self, AltStack, Mapping};
use serde::{Deserialize, Serialize};
use std::os::fd::AsRawFd;

/// Stack for the runtime's own frames on the thread that calls kernels.
pub const RUNTIME_STACK: usize = 256 << 10;

/// A command from the parent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Cmd {
    Run { program: u8 },
    Sample { order: Vec<u8>, cold: bool },
    Count { program: u8, runs: u32 },
    Exit,
}

/// An answer from the kernel process.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Reply {
    Ready {
        /// `None`: the filter is installed; else why not.
        seccomp: Option<String>,
        /// Per counter (in `counters::NAMES` order): why it could not be opened.
        counters: Vec<Option<String>>,
        /// The resource limits set, or why they could not be.
        limits: Result<String, String>,
        threads: u32,
        flush_bytes: u64,
    },
    Ran {
        ns: u64,
    },
    Samples {
        ns: Vec<u64>,
    },
    Counted {
        raw: Vec<Raw>,
    },
    /// Setup failed.
    Failed {
        message: String,
    },
}

/// What the kernel process needs to know.
pub struct Setup<'a> {
    pub programs: Vec<(&'a Program, &'a Buffers)>,
    pub threads: usize,
    pub cpus: Vec<usize>,
    pub limits: Limits,
    /// `Some(evidence)` under emulation: no seccomp there.
    pub emulation: Option<String>,
    /// Bytes written between samples to flush the caches (0: no cold runs requested).
    pub flush_bytes: usize,
}

fn send(io: &ChildIo, reply: &Reply) -> bool {
    match postcard::to_allocvec(reply) {
        Ok(body) => isolate::write_message(io.replies.as_raw_fd(), &body).is_ok(),
        Err(_) => false,
    }
}

/// The kernel process's main: returns its exit status.
pub fn main(io: ChildIo, setup: Setup<'_>) -> i32 {
    let mut counters = CounterSet::open(setup.emulation.as_deref());
    let stack = setup.programs.iter().map(|(p, _)| p.kernel_stack_bytes()).max().unwrap_or(0);
    // Workers get the same stack as the thread that calls kernels.
    let config = PoolConfig {
        threads: setup.threads,
        cpus: setup.cpus.clone(),
        stack_bytes: stack.max(STACK_RESERVE),
    };
    let pool = match pool::start(&config) {
        Ok(p) => p,
        Err(e) => {
            send(&io, &Reply::Failed { message: e.to_string() });
            return EXIT_INTERNAL;
        }
    };
    let driver = std::thread::Builder::new()
        .name("ekb-kernel-0".into())
        .stack_size(stack.saturating_add(RUNTIME_STACK))
        .spawn_scoped_free(|| -> i32 {
            let status = drive(&io, &setup, &pool, &mut counters);
            // End here, on the kernel thread: after the filter, tearing threads down would need
            // system calls it does not allow.
            // SAFETY: ends the process at once; nothing of it needs cleaning up.
            unsafe { libc::_exit(status) }
        });
    match driver {
        Ok(status) => status,
        Err(e) => {
            send(&io, &Reply::Failed { message: format!("cannot start the kernel thread: {e}") });
            EXIT_INTERNAL
        }
    }
}

/// Runs `f` on a new thread built by `self` and returns its result (the spawning thread
/// waits). A scoped spawn without the scope's bookkeeping, which would need to allocate.
trait SpawnWait {
    fn spawn_scoped_free<T: Send>(self, f: impl FnOnce() -> T + Send) -> std::io::Result<T>;
}

impl SpawnWait for std::thread::Builder {
    fn spawn_scoped_free<T: Send>(self, f: impl FnOnce() -> T + Send) -> std::io::Result<T> {
        std::thread::scope(|s| {
            let h = self.spawn_scoped(s, f)?;
            // The driver ends the process itself; join only returns if it panicked.
            h.join().map_err(|_| std::io::Error::other("the kernel thread panicked"))
        })
    }
}

fn drive(io: &ChildIo, setup: &Setup<'_>, pool: &Pool, counters: &mut CounterSet) -> i32 {
    let _alt = AltStack::install();
    if let Err(e) = pool.pin_caller() {
        send(io, &Reply::Failed { message: format!("cannot pin the kernel thread: {e}") });
        return EXIT_INTERNAL;
    }
    let _active = pool.activate();
    let bound: Vec<_> = setup.programs.iter().map(|(p, b)| p.bind(b)).collect();
    for (_, b) in &setup.programs {
        if let Err(e) = b.protect_generated(true) {
            send(io, &Reply::Failed { message: format!("cannot make the inputs read-only: {e}") });
            return EXIT_INTERNAL;
        }
    }
    let flush = match setup.flush_bytes {
        0 => None,
        n => match Mapping::anonymous(n) {
            Ok(m) => Some(m),
            Err(e) => {
                send(io, &Reply::Failed { message: format!("cannot map the cache-flush buffer: {e}") });
                return EXIT_INTERNAL;
            }
        },
    };
    let limits = isolate::set_limits(&setup.limits);
    let seccomp = match &setup.emulation {
        Some(_) => Some("isolation unavailable: seccomp not supported under qemu-user".to_string()),
        None => {
            let mut read_fds = counters.fds();
            read_fds.push(io.commands.as_raw_fd());
            let spec = seccomp::FilterSpec { write_fds: vec![io.replies.as_raw_fd()], read_fds };
            match seccomp::build(&spec).and_then(|p| seccomp::install(&p)) {
                Ok(()) => None,
                Err(e) => Some(format!(
                    "isolation unavailable: the system-call filter could not be installed ({e})"
                )),
            }
        }
    };
    let ready = Reply::Ready {
        seccomp,
        counters: counters.errors(),
        limits,
        threads: pool.threads() as u32,
        flush_bytes: flush.as_ref().map_or(0, |m| m.len() as u64),
    };
    if !send(io, &ready) {
        return EXIT_INTERNAL;
    }
    let mut flush_round = 0u8;
    let mut raw = [Raw::default(); NAMES.len()];
    loop {
        let cmd = match isolate::read_message(io.commands.as_raw_fd()) {
            Ok(Some(body)) => match postcard::from_bytes::<Cmd>(&body) {
                Ok(c) => c,
                Err(_) => return EXIT_INTERNAL,
            },
            // The parent is gone, or asked nothing more.
            _ => return 0,
        };
        let reply = match cmd {
            Cmd::Exit => return 0,
            Cmd::Run { program } => {
                let p = program as usize;
                setup.programs[p].1.poison(setup.programs[p].0.manifest());
                let t0 = sys::monotonic_ns();
                // SAFETY: this is the kernel process (module notes); no slice of the buffers is
                // live; this thread has the kernel stack.
                unsafe { bound[p].execute() };
                Reply::Ran { ns: sys::monotonic_ns() - t0 }
            }
            Cmd::Sample { order, cold } => {
                let mut ns = Vec::with_capacity(order.len());
                for &program in &order {
                    let p = program as usize;
                    setup.programs[p].1.poison(setup.programs[p].0.manifest());
                    if let (true, Some(f)) = (cold, &flush) {
                        flush_round = flush_round.wrapping_add(1);
                        // SAFETY: the flush buffer is this process's own read-write mapping.
                        unsafe { std::ptr::write_bytes(f.as_ptr(), flush_round, f.len()) };
                        std::hint::black_box(f.as_ptr());
                    }
                    let t0 = sys::monotonic_ns();
                    // SAFETY: as above.
                    unsafe { bound[p].execute() };
                    ns.push(sys::monotonic_ns() - t0);
                }
                Reply::Samples { ns }
            }
            Cmd::Count { program, runs } => {
                let p = program as usize;
                counters.reset();
                for _ in 0..runs {
                    setup.programs[p].1.poison(setup.programs[p].0.manifest());
                    counters.enable();
                    // SAFETY: as above.
                    unsafe { bound[p].execute() };
                    counters.disable();
                }
                counters.read(&mut raw);
                Reply::Counted { raw: raw.to_vec() }
            }
        };
        if !send(io, &reply) {
            return EXIT_INTERNAL;
        }
    }
}

/// Bytes to write between samples to flush the caches: twice the largest cache the system
/// reports (`/sys/devices/system/cpu/cpu0/cache/index*/size`), or 64 MiB if it reports none.
pub fn flush_bytes() -> usize {
    let mut largest = 0usize;
    for i in 0..8 {
        let path = format!("/sys/devices/system/cpu/cpu0/cache/index{i}/size");
        let Ok(text) = std::fs::read_to_string(path) else { continue };
        largest = largest.max(parse_cache_size(text.trim()).unwrap_or(0));
    }
    if largest == 0 {
        64 << 20
    } else {
        largest.saturating_mul(2)
    }
}

/// A cache size as sysfs writes it (`32K`, `1024K`, `32M`).
pub fn parse_cache_size(s: &str) -> Option<usize> {
    let (num, mult) = match s.as_bytes().last()? {
        b'K' => (&s[..s.len() - 1], 1 << 10),
        b'M' => (&s[..s.len() - 1], 1 << 20),
        b'G' => (&s[..s.len() - 1], 1 << 30),
        _ => (s, 1),
    };
    num.parse::<usize>().ok()?.checked_mul(mult)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_sizes_parse_as_sysfs_writes_them() {
        assert_eq!(parse_cache_size("32K"), Some(32 << 10));
        assert_eq!(parse_cache_size("36864K"), Some(36 << 20));
        assert_eq!(parse_cache_size("2M"), Some(2 << 20));
        assert_eq!(parse_cache_size("512"), Some(512));
        assert_eq!(parse_cache_size("K"), None);
        assert!(flush_bytes() >= 64 << 10);
    }
}
