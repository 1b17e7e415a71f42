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
//! - [`Cmd::Prepare`]: run a range of a CPU program's prepare steps on the parameters the
//!   parent has just bound (see below), answer [`Reply::Prepared`];
//! - [`Cmd::Run`]: poison the program's outputs and temporaries, run the plan once, answer
//!   [`Reply::Ran`] with its time (the parent then checks outputs, guards and inputs);
//! - [`Cmd::Sample`]: for each program index in `order`, one sample: `reps` executions of
//!   the program, before each of them poison (a large buffer on every thread) and flush the
//!   caches if asked, each timed alone with `CLOCK_MONOTONIC` (the clock reads are the only
//!   code inside the timed span besides the plan); the sample is their mean; answer
//!   [`Reply::Samples`]. A `dry` sample does all of it but call the plan (the parent's
//!   measure of what a batch costs besides its executions);
//! - [`Cmd::Count`]: run the plan `runs` times with the counters enabled around each
//!   execution only, then `runs` times more with each step timed alone (counters off); answer
//!   [`Reply::Counted`];
//! - `Cmd::Readback` (GPU builds): nothing for a CPU program (its outputs are the shared
//!   buffers);
//! - [`Cmd::Exit`] (or the parent gone): `_exit(0)`.
//!
//! **Prepare steps** (a CPU program's first `Manifest::prepare_steps` plan steps, which compute
//! temps from the parameters alone) run once per binding of the parameters, untimed, outside
//! every execution: at the `Prepare`s the parent sends after it generated a seed's parameters,
//! before it generates that seed's inputs (one for all the steps, or one per range of them where
//! the parent binds a consumed parameter, one that only prepare steps read and that shares the
//! arena, just before the first step that reads it), and before a `Run`, `Sample` or `Count`
//! of a program no `Prepare` prepared yet. The range that starts at the first step makes the
//! prepared temps writable and poisons them; the one that ends at the last makes them
//! read-only again, so the execution steps see them as they see the parameters; the poison
//! before each execution passes them over.
//! Executions and samples time the plan's other steps only.
//!
//! **GPU programs** (features `opencl` and `cuda`) are built and allocated on the device here,
//! in setup, after the fork (the driver is initialised in this process, never in the
//! runtime's): the build logs and the device go into [`Reply::Ready`]'s notes. Their buffers
//! live on the device, with guards of their own (`ekb-gpu`); the shared buffers are the host's
//! copies. `Run` copies the inputs and parameters to the device, fills the device's outputs and
//! temporaries with the poison, runs the prepare steps and then an execution, waiting after each
//! kernel (so a driver error names it), copies the outputs back into the shared buffers and
//! reports the device guards a kernel overwrote and the inputs it changed (`Violation`, in
//! `Reply::GpuRan`); `Sample` fills the poison (not into the prepared temps, which hold what the
//! last `Run`'s prepare steps computed from the parameters it copied) and times each execution
//! by the driver's clock (first kernel's start to last kernel's end); `Count` sums each kernel's device time over the runs (`Reply::GpuCounted`); `Readback`
//! copies the outputs of the last execution back and checks guards and inputs again. A driver
//! error answers `Reply::GpuFailed`. (These messages exist in GPU builds only.) The system-call filter is not installed when a GPU program runs here:
//! drivers open device files, map memory, start threads and (PoCL) compile kernels while
//! kernels are enqueued; `Ready` says so, and every report's log with it.
//!
//! Every command comes with a tag the parent drew at random, and its answer carries it back
//! (the answers before the first command carry 0): a message a kernel writes to the reply pipe
//! itself (the filter allows `write` to it) cannot pass for an answer unless the kernel found
//! the tag in this process's memory.
//!
//! What it must keep true: no kernel runs before the filter is in place (where it can be);
//! nothing of the payload file is mapped here (the parent hid it before the body starts); the
//! process only writes to its reply pipe and reads its command pipe and counters (GPU programs:
//! and whatever its driver needs); it never returns into the runtime's serving code.

use crate::buffers::{fill_pattern, Buffers};
use crate::counters::{CounterSet, Raw, NAMES};
use crate::isolate::{self, ChildIo, Limits, EXIT_INTERNAL};
use crate::pool::{self, Pool, PoolConfig, STACK_RESERVE};
use crate::program::{Bound, Program};
use crate::seccomp;
use crate::sys::{self, AltStack, Mapping};
use serde::{Deserialize, Serialize};
use std::os::fd::AsRawFd;

/// Stack for the runtime's own frames on the thread that calls kernels.
pub const RUNTIME_STACK: usize = 256 << 10;

/// A command from the parent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Cmd {
    /// The prepare steps `from..to` (indices among them) of `program` (a CPU program), on the
    /// parameters the parent has just bound in its buffers: the parent sends consecutive ranges
    /// from the first step to the last, or one range of all of them.
    Prepare {
        program: u8,
        from: u32,
        to: u32,
    },
    Run {
        program: u8,
    },
    /// One sample per entry of `order` (a program index); a sample of program `p` is the mean
    /// of `reps[p]` runs (1 where `reps` has no entry), a run the sum of the program's
    /// `Manifest::repeat` executions, each poisoned and timed alone.
    /// `dry` (CPU programs): everything but the executions themselves (the flushes, the poison
    /// and the clock reads), so that the parent can time what a batch costs besides them.
    Sample {
        order: Vec<u8>,
        cold: bool,
        reps: Vec<u32>,
        dry: bool,
    },
    /// New physical pages for the buffers of each CPU program listed
    /// ([`Buffers::place_again`]), so that the next batch times another placement; answered
    /// with [`Reply::Placed`].
    Place {
        programs: Vec<u8>,
    },
    Count {
        program: u8,
        runs: u32,
    },
    /// A GPU program's outputs back to the shared buffers, and its checks.
    #[cfg(feature = "gpu")]
    Readback {
        program: u8,
    },
    Exit,
}

/// What a GPU program did to memory it may not write, found after it ran.
#[cfg(feature = "gpu")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Violation {
    /// Guard words around buffer `buffer` on the device changed: the first at `offset` bytes
    /// from the start of its data (negative: before it), `bytes` in all.
    Guard { buffer: u32, offset: i64, bytes: u64 },
    /// The device's copy of read-only buffer `buffer` changed, first at byte `offset`.
    InputWrite { buffer: u32, offset: u64 },
}

/// How a GPU driver failed while running a program.
#[cfg(feature = "gpu")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum GpuFault {
    /// The driver refused a launch (threads, shared memory, registers).
    IllegalLaunch,
    /// An allocation failed for lack of memory.
    OutOfMemory,
    /// A kernel accessed memory it may not (CUDA's illegal or misaligned address).
    MemoryFault,
    /// Anything else the driver reported.
    Driver,
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
        /// The id of the thread that serves the commands (and runs the kernels), whose waits
        /// for a CPU the parent reads from `/proc` around the batches it cross-checks.
        server: i32,
        /// Per program: lines for its report's log (a GPU program's device and build logs).
        notes: Vec<Vec<String>>,
    },
    Prepared,
    /// The programs of a `Place`: whether any of their pages were given up for new ones (not
    /// where the system refuses, as qemu-user may, or the buffers are over
    /// [`PLACEMENT_MAX_BYTES`]), and how long it took.
    Placed {
        released: bool,
        ns: u64,
    },
    Ran {
        ns: u64,
    },
    Samples {
        ns: Vec<u64>,
    },
    /// The counters over the runs, and each step's time summed over as many runs again, timed
    /// with the counters off.
    Counted {
        raw: Vec<Raw>,
        step_ns: Vec<u64>,
    },
    /// A GPU program's `Run`: its time, and what it did to memory it may not write.
    #[cfg(feature = "gpu")]
    GpuRan {
        ns: u64,
        violations: Vec<Violation>,
    },
    /// A GPU program's `Count`: each step's device time summed over the runs, nanoseconds.
    #[cfg(feature = "gpu")]
    GpuCounted {
        step_ns: Vec<u64>,
    },
    #[cfg(feature = "gpu")]
    ReadBack {
        violations: Vec<Violation>,
    },
    /// A GPU driver failed while running a program.
    #[cfg(feature = "gpu")]
    GpuFailed {
        fault: GpuFault,
        message: String,
    },
    /// Setup failed.
    Failed {
        message: String,
    },
}

/// How one program runs here: a CPU program's bound plan, or a GPU program's executor.
enum Exec<'b> {
    Cpu(crate::program::Bound<'b>),
    #[cfg(feature = "gpu")]
    Gpu(Box<dyn ekb_gpu::Executor>),
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

/// Answers with `reply`, tagged with the tag of the command it answers (0 before the first).
fn send(io: &ChildIo, tag: u64, reply: &Reply) -> bool {
    match postcard::to_allocvec(&(tag, reply)) {
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
            send(&io, 0, &Reply::Failed { message: e.to_string() });
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
            send(&io, 0, &Reply::Failed { message: format!("cannot start the kernel thread: {e}") });
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
        send(io, 0, &Reply::Failed { message: format!("cannot pin the kernel thread: {e}") });
        return EXIT_INTERNAL;
    }
    let _active = pool.activate();
    let mut notes = Vec::new();
    let mut execs = Vec::new();
    for (p, b) in &setup.programs {
        match open(p, b) {
            Ok((exec, lines)) => {
                execs.push(exec);
                notes.push(lines);
            }
            Err(message) => {
                send(io, 0, &Reply::Failed { message });
                return EXIT_INTERNAL;
            }
        }
    }
    let gpu = setup.programs.iter().find(|(p, _)| p.is_gpu()).map(|(p, _)| p.manifest().backend);
    for (_, b) in &setup.programs {
        if let Err(e) = b.protect_generated(true) {
            send(io, 0, &Reply::Failed { message: format!("cannot make the inputs read-only: {e}") });
            return EXIT_INTERNAL;
        }
    }
    let flush = match setup.flush_bytes {
        0 => None,
        n => match Mapping::anonymous(n) {
            Ok(m) => Some(m),
            Err(e) => {
                send(io, 0, &Reply::Failed { message: format!("cannot map the cache-flush buffer: {e}") });
                return EXIT_INTERNAL;
            }
        },
    };
    let limits = isolate::set_limits(&setup.limits);
    let seccomp = match (&setup.emulation, gpu) {
        (Some(_), _) => Some("isolation unavailable: seccomp not supported under qemu-user".to_string()),
        (None, Some(backend)) => Some(format!(
            "isolation unavailable: the {backend} driver cannot run under the system-call filter (it opens device \
             files, maps memory, starts threads and compiles kernel code while kernels are enqueued)"
        )),
        (None, None) => {
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
        server: nix::unistd::gettid().as_raw(),
        notes,
    };
    if !send(io, 0, &ready) {
        return EXIT_INTERNAL;
    }
    let mut flush_round = 0u8;
    let mut raw = [Raw::default(); NAMES.len()];
    // Per program: whether its prepare steps ran for the parameters its buffers hold.
    let mut prepared = vec![false; execs.len()];
    loop {
        let (tag, cmd) = match isolate::read_message(io.commands.as_raw_fd()) {
            Ok(Some(body)) => match postcard::from_bytes::<(u64, Cmd)>(&body) {
                Ok(c) => c,
                Err(_) => return EXIT_INTERNAL,
            },
            // The parent is gone, or asked nothing more.
            _ => return 0,
        };
        // A program the command executes runs its prepare steps first unless they ran for the
        // parameters its buffers hold.
        let programs: &[u8] = match &cmd {
            Cmd::Run { program } | Cmd::Count { program, .. } => std::slice::from_ref(program),
            Cmd::Sample { order, .. } => order,
            _ => &[],
        };
        let failed = programs.iter().find_map(|&p| {
            let p = usize::from(p);
            let (prog, bufs) = setup.programs[p];
            match &execs[p] {
                Exec::Cpu(bound) if !prepared[p] => {
                    prepare(prog, bufs, bound, 0..bound.prepare_steps(), &mut prepared[p]).err()
                }
                Exec::Cpu(_) => None,
                #[cfg(feature = "gpu")]
                Exec::Gpu(_) => None,
            }
        });
        if let Some(reply) = failed {
            if !send(io, tag, &reply) {
                return EXIT_INTERNAL;
            }
            continue;
        }
        let reply = match cmd {
            Cmd::Exit => return 0,
            // The parameters were bound anew (all of them, or those the range reads first).
            Cmd::Prepare { program, from, to } => {
                let p = usize::from(program);
                let (prog, bufs) = setup.programs[p];
                match &execs[p] {
                    Exec::Cpu(bound) => {
                        prepared[p] = false;
                        prepare(prog, bufs, bound, from as usize..to as usize, &mut prepared[p])
                            .map_or_else(|failed| failed, |()| Reply::Prepared)
                    }
                    #[cfg(feature = "gpu")]
                    Exec::Gpu(_) => Reply::Prepared,
                }
            }
            Cmd::Run { program } => {
                let p = program as usize;
                let (prog, bufs) = setup.programs[p];
                match &mut execs[p] {
                    Exec::Cpu(bound) => {
                        poison(pool, prog, bufs);
                        let t0 = sys::monotonic_ns();
                        // SAFETY: this is the kernel process (module notes); no slice of the
                        // buffers is live; this thread has the kernel stack.
                        unsafe { bound.execute() };
                        Reply::Ran { ns: sys::monotonic_ns() - t0 }
                    }
                    #[cfg(feature = "gpu")]
                    Exec::Gpu(exec) => gpu::run(exec.as_mut(), prog, bufs),
                }
            }
            Cmd::Place { programs } => {
                let t0 = sys::monotonic_ns();
                match place_again(&setup.programs, &programs) {
                    Ok(released) => Reply::Placed { released, ns: sys::monotonic_ns() - t0 },
                    Err(message) => Reply::Failed { message },
                }
            }
            Cmd::Sample { order, cold, reps, dry } => {
                let timed: Result<Vec<u64>, Reply> = order
                    .iter()
                    .map(|&program| {
                        let p = program as usize;
                        let (prog, bufs) = setup.programs[p];
                        let n = reps.get(p).copied().unwrap_or(1).max(1);
                        let mut total = 0u64;
                        for _ in 0..n * prog.manifest().repeat.max(1) {
                            if let (true, Some(f)) = (cold, &flush) {
                                flush_round = flush_round.wrapping_add(1);
                                // SAFETY: the flush buffer is this process's own read-write
                                // mapping.
                                unsafe { std::ptr::write_bytes(f.as_ptr(), flush_round, f.len()) };
                                std::hint::black_box(f.as_ptr());
                            }
                            total += match &mut execs[p] {
                                Exec::Cpu(bound) => {
                                    poison(pool, prog, bufs);
                                    let t0 = sys::monotonic_ns();
                                    if !dry {
                                        // SAFETY: as above.
                                        unsafe { bound.execute() };
                                    }
                                    sys::monotonic_ns() - t0
                                }
                                #[cfg(feature = "gpu")]
                                Exec::Gpu(exec) => gpu::sample(exec.as_mut(), prog)?,
                            };
                        }
                        Ok(total / u64::from(n))
                    })
                    .collect();
                timed.map_or_else(|failed| failed, |ns| Reply::Samples { ns })
            }
            Cmd::Count { program, runs } => {
                let p = program as usize;
                let (prog, bufs) = setup.programs[p];
                match &mut execs[p] {
                    Exec::Cpu(bound) => {
                        counters.reset();
                        // A plan of one step is timed by its counted executions themselves; a
                        // longer plan by as many again, with each step timed alone.
                        let mut whole_ns = 0u64;
                        for _ in 0..runs {
                            poison(pool, prog, bufs);
                            counters.enable();
                            let t0 = sys::monotonic_ns();
                            // SAFETY: as above.
                            unsafe { bound.execute() };
                            whole_ns += sys::monotonic_ns() - t0;
                            counters.disable();
                        }
                        counters.read(&mut raw);
                        let step_ns = if bound.steps() == 1 {
                            vec![whole_ns]
                        } else {
                            let mut step_ns = vec![0u64; bound.steps()];
                            for _ in 0..runs {
                                poison(pool, prog, bufs);
                                // SAFETY: as above.
                                unsafe { bound.execute_timed(sys::monotonic_ns, &mut step_ns) };
                            }
                            step_ns
                        };
                        Reply::Counted { raw: raw.to_vec(), step_ns }
                    }
                    #[cfg(feature = "gpu")]
                    Exec::Gpu(exec) => gpu::count(exec.as_mut(), prog, runs),
                }
            }
            #[cfg(feature = "gpu")]
            Cmd::Readback { program } => {
                let p = program as usize;
                match &mut execs[p] {
                    Exec::Cpu(_) => Reply::ReadBack { violations: Vec::new() },
                    Exec::Gpu(exec) => {
                        let (prog, bufs) = setup.programs[p];
                        match gpu::readback(exec.as_mut(), prog, bufs) {
                            Ok(violations) => Reply::ReadBack { violations },
                            Err(e) => gpu::failed(e),
                        }
                    }
                }
            }
        };
        if !send(io, tag, &reply) {
            return EXIT_INTERNAL;
        }
    }
}

/// Runs the prepare steps `steps` of a CPU program (untimed): from the first step, the
/// prepared temps are made writable and poisoned before; up to the last, made read-only again
/// after, and `done` set (the prepare steps ran for the parameters its buffers hold). Nothing
/// for a plan without prepare steps. The error is the answer that says why the prepared temps
/// could not be protected.
fn prepare(
    prog: &Program,
    bufs: &Buffers,
    bound: &Bound<'_>,
    steps: std::ops::Range<usize>,
    done: &mut bool,
) -> Result<(), Reply> {
    let n = bound.prepare_steps();
    if n == 0 {
        *done = true;
        return Ok(());
    }
    let protect = |read_only: bool| {
        bufs.protect_prepared(read_only).map_err(|e| Reply::Failed {
            message: format!("cannot change the protection of the prepared temps: {e}"),
        })
    };
    if steps.start == 0 {
        protect(false)?;
        bufs.poison_prepared(prog.manifest());
    }
    // SAFETY: this is the kernel process (module notes); no slice of the buffers is live; this
    // thread has the kernel stack.
    unsafe { bound.prepare(steps.clone()) };
    if steps.end >= n {
        protect(true)?;
        *done = true;
    }
    Ok(())
}

/// Pages the scratch mapping of [`Buffers::place_again`] takes at most.
const PLACEMENT_SCRATCH_PAGES: u64 = 64;
/// A program whose buffers take more bytes keeps its placement: drawing it again costs a page
/// fault per page (and a copy of the kept values), and over that many pages which cache sets
/// they fall in averages out.
pub const PLACEMENT_MAX_BYTES: u64 = 8 << 20;

/// New physical pages for the buffers of each CPU program in `programs`, with a scratch size
/// drawn from the clock (so consecutive placements differ); whether any were given up.
fn place_again(programs: &[(&Program, &Buffers)], listed: &[u8]) -> Result<bool, String> {
    let mut released = false;
    for (i, &p) in listed.iter().enumerate() {
        let Some(&(prog, bufs)) = programs.get(usize::from(p)) else { continue };
        if listed[..i].contains(&p)
            || prog.is_gpu()
            || bufs.placed_bytes(prog.manifest()) > PLACEMENT_MAX_BYTES
        {
            continue;
        }
        let scratch = (sys::monotonic_ns() >> 6) % PLACEMENT_SCRATCH_PAGES + 1;
        released |= bufs
            .place_again(prog.manifest(), scratch as usize)
            .map_err(|e| format!("cannot place the buffers again: {e}"))?;
    }
    Ok(released)
}

/// Bytes from which the kernel process poisons a buffer on all its threads: a large output
/// is filled in a fraction of the time, and the threads are awake when the timed execution
/// starts, as they are between the kernels of one execution.
const PARALLEL_POISON_BYTES: usize = 256 << 10;

/// Poisons a CPU program's outputs and temporaries (large ones on every thread of the pool).
fn poison(pool: &Pool, prog: &Program, bufs: &Buffers) {
    bufs.poison_with(prog.manifest(), |d, word| {
        let parts = pool.threads();
        if d.len() < PARALLEL_POISON_BYTES || parts < 2 {
            return fill_pattern(d, word);
        }
        // A multiple of 4 bytes per part keeps the pattern's phase.
        let step = (d.len() / parts).next_multiple_of(64);
        let (at, len) = (d.as_mut_ptr() as usize, d.len());
        pool::for_each(pool, len.div_ceil(step), &|i| {
            let start = i * step;
            let end = (start + step).min(len);
            // SAFETY: the parts are disjoint ranges of `d`, which outlives the launch.
            let part = unsafe { std::slice::from_raw_parts_mut((at as *mut u8).add(start), end - start) };
            fill_pattern(part, word);
        });
    });
}

/// How program `p` runs in this process, and lines for its report's log: a CPU program's plan
/// bound to its buffers, or a GPU program built and allocated on the device.
fn open<'b>(p: &Program, bufs: &'b Buffers) -> Result<(Exec<'b>, Vec<String>), String> {
    #[cfg(feature = "gpu")]
    if let Some(plan) = p.gpu_plan() {
        return gpu::open(plan);
    }
    Ok((Exec::Cpu(p.bind(bufs)), Vec::new()))
}

/// The GPU side of the kernel process: copies between the shared buffers and the device,
/// poison, timed executions, and the checks after a run.
#[cfg(feature = "gpu")]
mod gpu {
    use super::{Exec, GpuFault, Reply, Violation};
    use crate::buffers::{Buffers, POISON_F16_BITS, POISON_F32_BITS, POISON_I32, POISON_I8};
    use crate::program::Program;
    use ekb_gpu::{ErrorKind, Executor, GpuError, Pass, Plan};
    use ekb_wire::payload::DType;

    /// Builds and allocates `plan` on the device.
    pub(super) fn open<'b>(plan: &Plan) -> Result<(Exec<'b>, Vec<String>), String> {
        let exec = ekb_gpu::open(plan).map_err(|e| e.to_string())?;
        let built = exec.built();
        let d = &built.device;
        let mut notes = vec![format!(
            "GPU: {} device `{}` ({}, {}), {} compute units; kernel times from {}",
            d.api,
            d.name,
            d.arch,
            d.version,
            d.compute_units,
            d.api.clock()
        )];
        for (i, log) in built.build_logs.iter().enumerate() {
            let log = log.trim();
            let what = match d.api {
                ekb_gpu::Api::OpenCl => format!("program {i} built on the device"),
                ekb_gpu::Api::Cuda => format!("program {i} compiled for {} and loaded", d.arch),
            };
            notes.push(if log.is_empty() { what } else { format!("{what}; build log:\n{log}") });
        }
        Ok((Exec::Gpu(exec), notes))
    }

    /// The reply for a driver error.
    pub(super) fn failed(e: GpuError) -> Reply {
        let fault = match e.kind {
            ErrorKind::IllegalLaunch => GpuFault::IllegalLaunch,
            ErrorKind::OutOfMemory => GpuFault::OutOfMemory,
            ErrorKind::MemoryFault => GpuFault::MemoryFault,
            ErrorKind::Unavailable | ErrorKind::Build | ErrorKind::Driver => GpuFault::Driver,
        };
        Reply::GpuFailed { fault, message: e.to_string() }
    }

    /// Fills the device's outputs and temporaries with the poison; with `keep_prepared`, not
    /// the temps the prepare steps wrote (they hold their values across executions).
    fn poison(exec: &mut dyn Executor, prog: &Program, keep_prepared: bool) -> Result<(), GpuError> {
        let prepared = prog.manifest().prepared();
        for (i, b) in prog.manifest().buffers.iter().enumerate() {
            let kept = b.role.is_generated() || (keep_prepared && prepared[i]);
            if !kept {
                let word = match b.dtype {
                    DType::F32 => POISON_F32_BITS,
                    DType::I32 => POISON_I32 as u32,
                    DType::I8 => u32::from_ne_bytes([POISON_I8 as u8; 4]),
                    DType::F16 => {
                        let [a, b] = POISON_F16_BITS.to_ne_bytes();
                        u32::from_ne_bytes([a, b, a, b])
                    }
                };
                exec.fill(i, word)?;
            }
        }
        Ok(())
    }

    /// A correctness run: inputs and parameters to the device, poison (the prepared temps
    /// too), the prepare steps, the execution (waiting after each kernel), outputs back, guards
    /// and inputs checked. The samples and counts that follow keep what the prepare steps
    /// wrote: they run on the parameters this run wrote.
    pub(super) fn run(exec: &mut dyn Executor, prog: &Program, bufs: &Buffers) -> Reply {
        let ran = (|| -> Result<(u64, Vec<Violation>), GpuError> {
            for (i, b) in prog.manifest().buffers.iter().enumerate() {
                if b.role.is_generated() {
                    exec.write(i, bufs.data(i).bytes())?;
                }
            }
            poison(exec, prog, false)?;
            exec.prepare()?;
            let t = exec.execute(Pass::Checked)?;
            Ok((t.span_ns, readback(exec, prog, bufs)?))
        })();
        match ran {
            Ok((ns, violations)) => Reply::GpuRan { ns, violations },
            Err(e) => failed(e),
        }
    }

    /// One timed execution: poison, then the plan; the driver's time of it.
    pub(super) fn sample(exec: &mut dyn Executor, prog: &Program) -> Result<u64, Reply> {
        poison(exec, prog, true).and_then(|()| exec.execute(Pass::Whole)).map(|t| t.span_ns).map_err(failed)
    }

    /// `runs` executions; each step's time summed.
    pub(super) fn count(exec: &mut dyn Executor, prog: &Program, runs: u32) -> Reply {
        let mut step_ns = Vec::new();
        for _ in 0..runs {
            match poison(exec, prog, true).and_then(|()| exec.execute(Pass::Steps)) {
                Ok(t) => {
                    step_ns.resize(t.step_ns.len(), 0u64);
                    for (sum, ns) in step_ns.iter_mut().zip(t.step_ns) {
                        *sum = sum.saturating_add(ns);
                    }
                }
                Err(e) => return failed(e),
            }
        }
        Reply::GpuCounted { step_ns }
    }

    /// The outputs of the last execution copied into the shared buffers; the device guards a
    /// kernel overwrote and the inputs it changed.
    pub(super) fn readback(
        exec: &mut dyn Executor,
        prog: &Program,
        bufs: &Buffers,
    ) -> Result<Vec<Violation>, GpuError> {
        let mut violations = Vec::new();
        for (i, b) in prog.manifest().buffers.iter().enumerate() {
            let region = bufs.data(i);
            if b.role.is_generated() {
                let mut now = vec![0u8; region.len()];
                exec.read(i, &mut now)?;
                if let Some(at) = now.iter().zip(region.bytes()).position(|(a, b)| a != b) {
                    violations.push(Violation::InputWrite { buffer: i as u32, offset: at as u64 });
                }
            } else if b.role == ekb_wire::payload::Role::Output {
                let mut out = vec![0u8; region.len()];
                exec.read(i, &mut out)?;
                region.with_bytes_mut(|d| d.copy_from_slice(&out));
            }
        }
        for h in exec.check_guards()? {
            violations.push(Violation::Guard { buffer: h.buffer as u32, offset: h.offset, bytes: h.bytes });
        }
        Ok(violations)
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
