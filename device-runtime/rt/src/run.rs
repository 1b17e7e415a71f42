//! Running payloads: correctness on every seed, then timing, counters and memory, in a kernel
//! process (`crate::isolate`, `crate::worker`) — alone ([`run_payload`]) or paired with a
//! baseline ([`run_paired`]), or held between timed turns ([`hold`]). The results are the protocol's reports, so offline report files
//! and a live session carry the same messages.
//!
//! One run, in order:
//! 1. the memory section and allocation legality (`crate::memory`); an illegal or
//!    over-capacity program runs no kernel;
//! 2. the buffers, in memory shared with the kernel process, with guards and fences, and the
//!    values of data parameters copied into them from the payload;
//! 3. the kernel process (threads, limits, filter), which answers `Ready`;
//! 4. per seed: the parent generates the seeded parameters (data parameters keep their
//!    values), the child runs the plan's prepare steps on them where it has some, then the
//!    parent generates the inputs (every side's parameters are bound and prepared before any
//!    side's inputs) and records the checksums of all inputs, parameters and prepared temps,
//!    the child poisons the outputs and runs the plan once, the parent checks the guards (guard
//!    corruption by buffer), the checksums (an input written despite the protection) and the
//!    outputs against the expected values — which only the parent can see;
//! 5. if every seed is correct: warm-up, samples in batches until the relative standard error
//!    of the median reaches the target, the samples reach the maximum, or the budget ends
//!    (`docs/runtime.md`), the inputs drawn again for another seed once on the way and the
//!    outputs checked after that batch ([`fresh`]); then the counted executions; then the outputs are compared once
//!    more (results that changed between runs are a `Parallel` failure) and guards and inputs
//!    are checked again;
//! 6. the child exits and is reaped (its maximum RSS).
//!
//! A child that dies or hangs becomes a classified failure ([`classify`]); the runtime lives on.
//!
//! What it must keep true: a failure of the candidate is reported, never turned into an error
//! of the request; errors of the request are for what the request itself gets wrong (a seed
//! index the payload lacks) or the host vanishing; nothing in a report looks measured that was
//! not (unavailable counters and isolation say why in the report).

use crate::buffers::{BufferError, Buffers, RegionLayout, Zone};
use crate::device::Device;
use crate::isolate::{self, Child, Death, Fault, Limits, EXIT_SYSCALL};
use crate::program::Program;
use crate::store::LoadedPayload;
use crate::worker::{self, Cmd, Reply, Setup};
#[cfg(feature = "gpu")]
use crate::worker::{GpuFault, Violation};
use crate::{counters, memory, seccomp, sys};
use ekb_wire::payload::{Backend, Role, TimingSettings};
use ekb_wire::protocol::{check_threads, check_timing, RequestError, MAX_SEED_INDICES};
use ekb_wire::protocol::{
    Counter, ErrorKind, Failure, FailureKind, LogLevel, LogLine, MemoryFault, PairSample, PairedReport,
    PairedSettings, RatioStats, RunReport, SeedCheck, StopReason, Timing, TimingOverrides, Verdict,
};
use ekb_wire::stats::{self, Rng};
use std::hash::{BuildHasher, RandomState};
use std::os::fd::RawFd;
use std::sync::Arc;
use std::time::{Duration, Instant};

mod fresh;
mod held;

pub use held::{hold, Held};

/// Address space the kernel process may use beyond its program's memory budget: the
/// runtime's own allocations while it runs.
const RUNTIME_HEADROOM: u64 = 256 << 20;
/// How long a side's warm-up lasts at least (nanoseconds, its executions together), when that
/// takes fewer executions than the settings' `warmup`: see [`warm_up_runs`].
const WARM_UP_NS: u64 = 20_000_000;
/// The limit of one execution of the plan when the options name none. It does not follow the
/// timing budget: the budget bounds how long sampling goes on, and a short one (a quick look,
/// `--budget-ms 500`) must not turn a correct program whose one execution takes longer (a slow
/// kernel, or any kernel under qemu-user) into a `Timeout`.
pub const DEFAULT_EXEC_LIMIT: Duration = Duration::from_secs(10);
/// Time allowed for the kernel process to start (threads, counters, filter).
const START_TIMEOUT: Duration = Duration::from_secs(30);
/// Target duration of one batch of samples between two messages.
const BATCH_NS: f64 = 10e6;
/// Target duration of one batch of a paired run that draws each batch's placement: shorter,
/// since the interval narrows with the number of placements more than with pairs in each.
const PLACED_BATCH_NS: f64 = 5e6;
/// A placed batch lasts at least this many times what drawing its placement took (large
/// buffers take a page fault per page), so that placing costs at most a fifth of the timing.
const PLACE_SHARE: f64 = 4.0;
/// Placements (batches, each on physical pages drawn again) a paired run of CPU programs
/// times before its pair may be stable: the interval resamples placements whole, and fewer
/// would say little about how much the placement moves the ratio.
pub const MIN_PLACEMENTS: usize = 6;
/// Target duration of the counted executions (a step-timed pass after them, for a plan of
/// several steps, takes as long). Counters and step times are diagnostics, not the reported
/// time, so a short pass does.
const COUNT_NS: f64 = 10e6;
/// The shortest a sample may last: a program faster than this is executed several times per
/// sample (`Timing::reps`, calibrated from the warm-up), so that the clock's resolution, the
/// cost of reading it and the scheduler's wake-ups do not dominate microsecond kernels.
pub const MIN_SAMPLE_NS: f64 = 200e3;
/// The most executions one sample takes.
const MAX_REPS: u32 = 10_000;
/// Speedups above this are flagged for review.
const SUSPICIOUS_SPEEDUP: f64 = 10.0;

/// How to run.
#[derive(Debug, Clone, PartialEq)]
pub struct RunOptions {
    /// Threads for parallel loops (0: one per allowed CPU, or per CPU in `cpus`).
    pub threads: usize,
    /// CPUs to pin the kernel threads to (empty: no pinning).
    pub cpus: Vec<usize>,
    pub layout: RegionLayout,
    /// Seed indices to run (`None`: every seed).
    pub seeds: Option<Vec<u32>>,
    /// Changes to the payload's timing settings.
    pub timing: TimingOverrides,
    /// Wall-clock limit of one execution of the plan (`None`: [`DEFAULT_EXEC_LIMIT`], whatever
    /// the timing budget).
    pub timeout: Option<Duration>,
    /// A descriptor to watch while kernels run: when it reports an error or hang-up (the
    /// host closed the stream the reports go to), the run is abandoned.
    pub host_fd: Option<RawFd>,
}

impl Default for RunOptions {
    fn default() -> RunOptions {
        RunOptions {
            threads: 0,
            cpus: Vec::new(),
            layout: RegionLayout::one_page(),
            seeds: None,
            timing: TimingOverrides::default(),
            timeout: None,
            host_fd: None,
        }
    }
}

impl RunOptions {
    /// The options against the protocol's request bounds (`docs/protocol.md`): threads,
    /// timing and the number of seed indices, whether they came in a request or from the
    /// command line.
    pub fn check(&self) -> Result<(), RunError> {
        let threads = u32::try_from(self.threads).unwrap_or(u32::MAX);
        let seeds = self.seeds.as_ref().map_or(Ok(()), |list| {
            if (1..=MAX_SEED_INDICES).contains(&list.len()) {
                Ok(())
            } else {
                Err(RequestError {
                    field: "seeds (entries)".into(),
                    value: list.len().to_string(),
                    legal: format!("in 1..={MAX_SEED_INDICES}"),
                })
            }
        });
        check_threads("threads", Some(threads))
            .and_then(|()| check_timing("timing", &self.timing))
            .and(seeds)
            .map_err(|e| RunError { kind: ErrorKind::InvalidRequest, message: e.to_string() })
    }
}

/// A request that cannot be served, as the protocol's error answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunError {
    pub kind: ErrorKind,
    pub message: String,
}

fn log(level: LogLevel, message: impl Into<String>) -> LogLine {
    LogLine { level, message: message.into() }
}

/// Things worth telling the host when a payload loads.
pub fn load_warnings(payload: &LoadedPayload, device: &Device) -> Vec<String> {
    let mut w = Vec::new();
    let (report, failure) = memory::check(payload.manifest(), payload.live_limits().as_ref());
    for a in &report.allocations {
        if let Verdict::Illegal { reason } | Verdict::OverCapacity { reason } = &a.verdict {
            w.push(format!("allocation `{}` will not run: {reason}", a.name));
        }
    }
    // An illegal launch is a failure of no allocation.
    if let Some(f) = failure.filter(|_| w.is_empty()) {
        w.push(format!("the program will not run: {}", f.evidence));
    }
    #[cfg(feature = "gpu")]
    if let Some(built) = payload.gpu() {
        let logs: Vec<&str> = built.build_logs.iter().map(|l| l.trim()).filter(|l| !l.is_empty()).collect();
        if !logs.is_empty() {
            w.push(format!(
                "built on {} `{}`; build log:\n{}",
                built.device.api,
                built.device.name,
                logs.join("\n")
            ));
        }
    }
    if let Some(e) = &device.emulation {
        w.push(format!("running under emulation ({e}): timings and counters mean nothing here"));
    }
    w
}

/// One payload's part of a run.
struct Side {
    payload: Arc<LoadedPayload>,
    report: RunReport,
    bufs: Option<Buffers>,
    seeds: Vec<usize>,
    settings: TimingSettings,
    /// Checksums of the inputs and parameters of the last seed run, taken right after
    /// generating them, and of its prepared temps, taken after the prepare steps computed them.
    sums: Vec<Option<u64>>,
    /// The seed index the parameters were last generated for: another side's parameters for
    /// that seed are copied from here.
    params: Option<usize>,
    /// The seed index the inputs were last generated for, while they still hold it (the run
    /// after it left them unchanged): another side's inputs for that seed are copied from here,
    /// and the outputs are checked against that seed's after timing.
    inputs: Option<usize>,
    /// How long the last checked execution took: it bounds the warm-up of a slow program.
    checked_ns: Option<u64>,
}

impl Side {
    /// The side of `payload`; its seeded inputs and parameters share `twin`'s regions where
    /// both declare them alike ([`Buffers::allocate_beside`]: same task, same seeds, bound in
    /// lockstep by [`check_sides`] and the switch of inputs during timing).
    fn new(
        payload: &Arc<LoadedPayload>,
        options: &RunOptions,
        timing: &TimingOverrides,
        twin: Option<&Side>,
    ) -> Result<Side, RunError> {
        let m = payload.manifest();
        let seeds: Vec<usize> = match &options.seeds {
            None => (0..m.seeds.len()).collect(),
            Some(list) => {
                if let Some(bad) = list.iter().find(|&&s| s as usize >= m.seeds.len()) {
                    return Err(RunError {
                        kind: ErrorKind::Unsupported,
                        message: format!("seed index {bad}: {} has {} seed(s)", payload.id(), m.seeds.len()),
                    });
                }
                let mut seen = vec![false; m.seeds.len()];
                for &s in list {
                    if std::mem::replace(&mut seen[s as usize], true) {
                        return Err(RunError {
                            kind: ErrorKind::InvalidRequest,
                            message: format!(
                                "seed index {s} is listed twice: each seed index may appear once"
                            ),
                        });
                    }
                }
                list.iter().map(|&s| s as usize).collect()
            }
        };
        let (memory, failure) = memory::check(m, payload.live_limits().as_ref());
        let mut report = RunReport {
            payload: payload.id(),
            task: m.task.clone(),
            target: m.target.clone(),
            backend: m.backend,
            threads: 0,
            seeds: Vec::new(),
            timing: None,
            counters: Vec::new(),
            memory,
            failure,
            log: Vec::new(),
        };
        for (blob, obj) in payload.program().objects() {
            let s = obj.summary();
            let relocs: Vec<String> = s.relocations.iter().map(|(n, c)| format!("{n} x{c}")).collect();
            report.log.push(log(
                LogLevel::Info,
                format!(
                    "blob {blob}: {} kernel(s), {} bytes of code, imports [{}], relocations [{}]",
                    s.entries.len(),
                    s.code_bytes,
                    s.imports.join(", "),
                    relocs.join(", ")
                ),
            ));
        }
        let role_bytes = |role: Role| -> u64 {
            m.buffers.iter().filter(|b| b.role == role).map(|b| b.size_bytes().unwrap_or(0)).sum()
        };
        report.log.push(log(
            LogLevel::Info,
            format!(
                "memory: inputs {} bytes, params {} bytes, outputs {} bytes, temps {} bytes{}; peak {} bytes \
                 (the host planned {})",
                role_bytes(Role::Input),
                role_bytes(Role::Param),
                role_bytes(Role::Output),
                role_bytes(Role::Temp),
                m.arena
                    .as_ref()
                    .map(|a| format!(" ({} of them in an arena of {} bytes)", a.slots.len(), a.bytes))
                    .unwrap_or_default(),
                report.memory.peak_bytes,
                m.memory.peak_bytes
            ),
        ));
        let data: Vec<u64> = m
            .buffers
            .iter()
            .filter(|b| b.data_blob().is_some())
            .map(|b| b.size_bytes().unwrap_or(0))
            .collect();
        if !data.is_empty() {
            report.log.push(log(
                LogLevel::Info,
                format!(
                    "{} param(s) take their values from the payload's data ({} bytes), the same for every seed",
                    data.len(),
                    data.iter().sum::<u64>()
                ),
            ));
        }
        if m.prepare_steps > 0 {
            let prepared = m.prepared();
            let names: Vec<&str> =
                m.prepare_plan().iter().map(|s| m.kernels[s.kernel as usize].name.as_str()).collect();
            let temps = m.buffers.iter().zip(&prepared).filter(|(_, &p)| p).map(|(b, _)| b);
            let bytes: u64 = temps.clone().map(|b| b.size_bytes().unwrap_or(0)).sum();
            report.log.push(log(
                LogLevel::Info,
                format!(
                    "plan: {} prepare step(s) ({}) compute {} temp(s) ({bytes} bytes) from the parameters once \
                     per seed, untimed; an execution is the other {} step(s)",
                    names.len(),
                    names.join(", "),
                    temps.count(),
                    m.execution_plan().len()
                ),
            ));
        }
        let settings = timing.apply(&options.timing.apply(&m.timing));
        let mut side = Side {
            payload: Arc::clone(payload),
            report,
            bufs: None,
            seeds,
            settings,
            sums: Vec::new(),
            params: None,
            inputs: None,
            checked_ns: None,
        };
        if side.report.failure.is_none() {
            let twin = twin.and_then(|t| Some((t.bufs.as_ref()?, &*t.payload)));
            let allocated = match twin {
                Some(twin) => side.payload.allocate_beside(options.layout, twin),
                None => side.payload.allocate(options.layout),
            };
            match allocated {
                Ok(b) => side.bufs = Some(b),
                Err(e) => {
                    let kind = match &e {
                        BufferError::Allocate { buffer, error, .. } => {
                            if let Some(a) =
                                side.report.memory.allocations.iter_mut().find(|a| &a.name == buffer)
                            {
                                a.verdict = Verdict::OverCapacity {
                                    reason: format!("the system refused it: {error}"),
                                };
                            }
                            FailureKind::Memory(MemoryFault::Capacity)
                        }
                        BufferError::Init { .. } | BufferError::Data { .. } => FailureKind::RuntimeError,
                    };
                    side.report.failure = Some(Failure { kind, evidence: e.to_string() });
                }
            }
        }
        Ok(side)
    }

    fn program(&self) -> &Program {
        self.payload.program()
    }

    /// The clock the side's samples come from: `CLOCK_MONOTONIC` around a CPU program's
    /// execution, the driver's clock for a GPU program's kernels.
    fn clock(&self) -> &'static str {
        match self.payload.manifest().backend {
            Backend::CpuLlvm => "CLOCK_MONOTONIC",
            Backend::OpenCl => "opencl-profiling",
            Backend::Cuda => "cuda-events",
        }
    }

    fn fail(&mut self, f: Failure) {
        self.report.failure.get_or_insert(f);
    }

    fn ok(&self) -> bool {
        self.report.failure.is_none()
    }
}

/// The kernel process with what it said when it started.
struct Proc {
    child: Child,
    /// Where each request's tag comes from: a keyed hash (keys drawn from the system's
    /// randomness) of the request's number. The kernel process echoes the tag with its answer;
    /// an answer without it was written by something else there (a kernel).
    tags: RandomState,
    requests: u64,
    /// `/proc/<pid>/task/<tid>` of the kernel process's thread that serves commands.
    server: String,
    /// Timed sample batches sent so far (`Proc::sample`; warm-ups not counted).
    batches: u64,
    exec_limit: Duration,
    any_counter: bool,
    counter_errors: Vec<Option<String>>,
}

/// Why a run had to stop: a failure to report, or the host gone.
enum Stop {
    Failed(Failure),
    HostGone,
}

fn exec_limit(options: &RunOptions) -> Duration {
    options.timeout.unwrap_or(DEFAULT_EXEC_LIMIT)
}

/// Starts the kernel process for `sides` (program index = position). On success every side's
/// log says how it is isolated.
fn start(
    sides: &mut [Side],
    options: &RunOptions,
    hidden: &[(usize, usize)],
    attempts: u32,
) -> Result<Proc, Stop> {
    let device = Device::probe();
    let settings = sides[0].settings;
    let limit = exec_limit(options);
    let threads_for_cpu =
        if options.threads == 0 { device.cores.max(1) as u64 } else { options.threads as u64 };
    let headroom: u64 = sides
        .iter()
        .map(|s| {
            let m = s.payload.manifest();
            m.memory.memory_limit_bytes.saturating_sub(s.bufs.as_ref().map_or(0, Buffers::data_bytes))
        })
        .fold(RUNTIME_HEADROOM, u64::saturating_add);
    let flush = if settings.cold_cache { worker::flush_bytes() } else { 0 };
    let runs: u64 = sides.iter().map(|s| s.seeds.len() as u64 + 4).sum();
    let wall =
        limit.as_secs().saturating_mul(runs) + (settings.budget_ms / 1000 + 1) * u64::from(attempts.max(1));
    let limits = Limits {
        address_space_headroom: headroom.saturating_add(flush as u64),
        cpu_seconds: threads_for_cpu.saturating_mul(wall).saturating_add(10),
    };
    let programs: Vec<(&Program, &Buffers)> =
        sides.iter().map(|s| (s.program(), s.bufs.as_ref().expect("allocated buffers"))).collect();
    let setup = Setup {
        programs,
        threads: options.threads,
        cpus: options.cpus.clone(),
        limits,
        emulation: device.emulation.clone(),
        flush_bytes: flush,
    };
    let spawned = isolate::spawn(hidden, options.host_fd, |io| worker::main(io, setup));
    let mut child = spawned.map_err(|e| {
        Stop::Failed(Failure {
            kind: FailureKind::RuntimeError,
            evidence: format!("cannot fork the kernel process: {e}"),
        })
    })?;
    let reply = child.receive(START_TIMEOUT).map_err(|d| to_stop(d, &[], START_TIMEOUT))?;
    match postcard::from_bytes::<(u64, Reply)>(&reply).map(|(_, r)| r) {
        Ok(Reply::Ready { seccomp, counters, limits, threads, flush_bytes, server, notes }) => {
            for (s, notes) in sides.iter_mut().zip(notes) {
                // A GPU program's kernels run on the device, not on the runtime's threads.
                s.report.threads = if s.program().is_gpu() { 0 } else { threads };
                let l = &mut s.report.log;
                l.push(log(LogLevel::Info, format!("kernel process {}: {threads} thread(s)", child.pid())));
                l.extend(notes.into_iter().map(|n| log(LogLevel::Info, n)));
                match &seccomp {
                    None => l.push(log(
                        LogLevel::Info,
                        "isolation: kernels run in a separate process under a system-call filter (seccomp)",
                    )),
                    Some(reason) => l.push(log(
                        LogLevel::Warn,
                        format!("{reason}: kernels run in a separate process without a system-call filter"),
                    )),
                }
                match &limits {
                    Ok(text) => l.push(log(LogLevel::Info, format!("limits: {text}"))),
                    Err(e) => l.push(log(LogLevel::Warn, format!("limits could not be set: {e}"))),
                }
                if flush_bytes > 0 {
                    l.push(log(
                        LogLevel::Info,
                        format!("cold cache: {flush_bytes} bytes written before each sample"),
                    ));
                }
                if let Some(e) = &device.emulation {
                    l.push(log(
                        LogLevel::Warn,
                        format!("emulated ({e}): timings and counters mean nothing here"),
                    ));
                }
            }
            Ok(Proc {
                server: format!("/proc/{}/task/{server}", child.pid()),
                child,
                tags: RandomState::new(),
                requests: 0,
                batches: 0,
                exec_limit: limit,
                any_counter: counters.iter().any(Option::is_none),
                counter_errors: counters,
            })
        }
        Ok(Reply::Failed { message }) => Err(Stop::Failed(Failure {
            kind: FailureKind::RuntimeError,
            evidence: format!("the kernel process could not start: {message}"),
        })),
        Ok(other) => Err(Stop::Failed(garbled(format!("{other:?}")))),
        Err(e) => Err(Stop::Failed(garbled(e.to_string()))),
    }
}

fn garbled(what: String) -> Failure {
    Failure {
        kind: FailureKind::RuntimeError,
        evidence: format!("the kernel process answered out of turn: {what}"),
    }
}

impl Proc {
    fn request(
        &mut self,
        cmd: &Cmd,
        timeout: Duration,
        programs: &[(&Program, &Buffers)],
    ) -> Result<Reply, Stop> {
        self.requests += 1;
        let tag = self.tags.hash_one(self.requests) | 1;
        let body = postcard::to_allocvec(&(tag, cmd)).map_err(|e| Stop::Failed(garbled(e.to_string())))?;
        let reply = self.child.request(&body, timeout).map_err(|d| to_stop(d, programs, timeout))?;
        let reply = match postcard::from_bytes::<(u64, Reply)>(&reply) {
            Ok((answered, _)) if answered != tag => {
                self.child.kill();
                return Err(Stop::Failed(Failure {
                    kind: FailureKind::RuntimeError,
                    evidence: format!(
                        "forged answer: a message on the kernel process's reply pipe carried the tag {answered:#x} \
                         where the request's was {tag:#x} (a kernel wrote to the runtime's reply pipe)"
                    ),
                }));
            }
            other => other.map(|(_, r)| r),
        };
        match reply {
            #[cfg(feature = "gpu")]
            Ok(Reply::GpuFailed { fault, message }) => Err(Stop::Failed(gpu_failure(fault, message))),
            Ok(r) => Ok(r),
            Err(e) => Err(Stop::Failed(garbled(e.to_string()))),
        }
    }
}

impl Proc {
    /// Sends a `Cmd::Sample` and returns its samples, cross-checked with this process's own
    /// clock. The samples are measured inside the kernel process, whose memory and registers a
    /// kernel can write (the start time of its execution, kept in a register or on the stack
    /// while it runs), so:
    ///
    /// - the executions they claim (each sample times its `reps`) must fit in the wall time
    ///   this process saw around the request: every timed span lies inside it on one monotonic
    ///   clock; the slack of [`CLOCK_SLACK`] is for GPU drivers' clocks;
    /// - for CPU programs, in the first timed batch of the process (after the warm-up) and in a
    ///   quarter of the later ones drawn at random, they must not fall short ([`falls_short`])
    ///   of what that wall time leaves for the executions: the batch is sent `dry` first (the
    ///   flushes, poison and clock reads, no executions), and what its wall time leaves of the
    ///   batch's is the executions' time by this process's clock (each wall time less what the
    ///   scheduler kept both processes from running, [`Proc::ready_batch`]). Short samples are measured
    ///   again, a dry twin and its batch, up to [`SHORT_ATTEMPTS`] times in all (a busy machine
    ///   can slow one and not the other); the first batch's samples are the ones kept, and
    ///   short every time, the run fails.
    ///
    /// A violation is a `RuntimeError` whose evidence gives the figures.
    fn sample(
        &mut self,
        cmd: &Cmd,
        timeout: Duration,
        programs: &[(&Program, &Buffers)],
    ) -> Result<Vec<u64>, Stop> {
        let Cmd::Sample { order, cold, reps, .. } = cmd else {
            unreachable!("only samples are cross-checked")
        };
        // Warm-ups (no `reps` calibrated yet) are too short to tell.
        let timed = !reps.is_empty() && !order.is_empty();
        let cpu = order.iter().all(|&p| programs.get(usize::from(p)).is_some_and(|(prog, _)| !prog.is_gpu()));
        let drawn = timed && (self.batches == 0 || self.tags.hash_one((u64::MAX, self.requests)) % 4 == 0);
        self.batches += u64::from(timed);
        if !(cpu && drawn) {
            return Ok(self.timed_batch(cmd, timeout, programs)?.0);
        }
        // The dry twin goes first, so that the outputs after the batch are its last execution's.
        let dry = Cmd::Sample { order: order.clone(), cold: *cold, reps: reps.clone(), dry: true };
        let mut kept = None;
        for attempt in 1..=SHORT_ATTEMPTS {
            let (_, _, without) = self.ready_batch(&dry, timeout, programs)?;
            let (ns, claimed, wall) = self.ready_batch(cmd, timeout, programs)?;
            let ns = kept.get_or_insert(ns);
            if !falls_short(claimed, wall, without) {
                return Ok(std::mem::take(ns));
            }
            if attempt == SHORT_ATTEMPTS {
                return Err(Stop::Failed(Failure {
                    kind: FailureKind::RuntimeError,
                    evidence: format!(
                        "forged timing: the kernel process reported {} sample(s) of {claimed:.0} ns of executions \
                         in all, but the runtime's own clock saw {wall:.0} ns pass around them and {without:.0} ns \
                         around the same batch without its executions (waits for a CPU taken off both), which \
                         leaves {:.0} ns for them (short in \
                         {SHORT_ATTEMPTS} batches of {SHORT_ATTEMPTS}: a kernel moved the runtime's clock readings)",
                        order.len(),
                        wall - without
                    ),
                }));
            }
        }
        unreachable!("the last attempt returns")
    }

    /// [`Proc::timed_batch`], with its wall time less the time in it that the two threads of
    /// the exchange (this one, the kernel process's serving thread) spent waiting for a CPU
    /// while no thread of the kernel process ran: preemption on a busy machine lands in one
    /// batch and not in its twin, and what it adds is time in which nothing of the batch ran,
    /// which no sample could have claimed. The figures come from `/proc`, read just outside the
    /// wall clock's readings (the raw wall time where the system does not report them); the
    /// two waits less everything the kernel process ran meanwhile is what is taken off, so that
    /// time its threads ran (a kernel's included, or this thread waiting while the kernel
    /// process ran) is never taken off, and what is left is never less than what the busiest
    /// thread of the kernel process ran ([`ready_ns`]).
    ///
    /// A wait is counted when the thread gets its CPU, so one that began before the batch
    /// would be counted in it: the serving thread is first let reach its wait for the next
    /// command (a few yields of this thread at most, [`SETTLE_YIELDS`]).
    fn ready_batch(
        &mut self,
        cmd: &Cmd,
        timeout: Duration,
        programs: &[(&Program, &Buffers)],
    ) -> Result<(Vec<u64>, f64, f64), Stop> {
        let (stat, schedstat) = (format!("{}/stat", self.server), format!("{}/schedstat", self.server));
        for _ in 0..SETTLE_YIELDS {
            if sys::thread_runnable(&stat) != Some(true) {
                break;
            }
            std::thread::yield_now();
        }
        let pid = self.child.pid();
        let read = || {
            let waits = sys::schedstat("/proc/thread-self/schedstat")?.1 + sys::schedstat(&schedstat)?.1;
            Some(Sched { waits, cpu: sys::thread_cpu_ns(pid)? })
        };
        let before = read();
        let (ns, claimed, wall) = self.timed_batch(cmd, timeout, programs)?;
        let ready = before.zip(read()).map_or(wall, |(b, a)| ready_ns(wall as u64, &b, &a) as f64);
        Ok((ns, claimed, ready))
    }

    /// One `Cmd::Sample`: its samples, the executions they claim in all and the wall time this
    /// process saw around it (nanoseconds), checked against [`CLOCK_SLACK`].
    fn timed_batch(
        &mut self,
        cmd: &Cmd,
        timeout: Duration,
        programs: &[(&Program, &Buffers)],
    ) -> Result<(Vec<u64>, f64, f64), Stop> {
        let Cmd::Sample { order, reps, .. } = cmd else { unreachable!("only samples are cross-checked") };
        let started = Instant::now();
        let reply = self.request(cmd, timeout, programs)?;
        let wall = started.elapsed().as_nanos() as f64;
        let Reply::Samples { ns } = reply else { return Err(Stop::Failed(garbled(format!("{reply:?}")))) };
        let claimed: f64 = order
            .iter()
            .zip(&ns)
            .map(|(&p, &t)| t as f64 * f64::from(reps.get(p as usize).copied().unwrap_or(1).max(1)))
            .sum();
        if claimed > wall * CLOCK_SLACK {
            return Err(Stop::Failed(Failure {
                kind: FailureKind::RuntimeError,
                evidence: format!(
                    "forged timing: the kernel process reported {} sample(s) of {:.0} ns of executions in all, but \
                     the runtime's own clock saw {:.0} ns pass around them (a kernel wrote the runtime's \
                     clock readings)",
                    ns.len(),
                    claimed,
                    wall
                ),
            }));
        }
        Ok((ns, claimed, wall))
    }
}

/// The scheduler's figures around a cross-checked batch, in nanoseconds: what this thread and
/// the kernel process's serving thread have waited for a CPU, summed, and what each thread of
/// the kernel process has run, by thread id.
#[derive(Debug, Clone)]
struct Sched {
    waits: u64,
    cpu: Vec<(u32, u64)>,
}

/// What [`Proc::ready_batch`] keeps of a batch's `wall` time between two [`Sched`] readings:
/// the wall time less the waits added beyond everything the kernel process ran meanwhile, and
/// never less than what its busiest thread ran (the two waits may overlap, and one that began
/// before the batch is counted in it).
fn ready_ns(wall: u64, before: &Sched, after: &Sched) -> u64 {
    let ran =
        |tid: u32, now: u64| now.saturating_sub(before.cpu.iter().find(|t| t.0 == tid).map_or(0, |t| t.1));
    let (total, busiest) = after.cpu.iter().fold((0u64, 0u64), |(total, busiest), &(tid, now)| {
        let r = ran(tid, now);
        (total + r, busiest.max(r))
    });
    let idle = after.waits.saturating_sub(before.waits).saturating_sub(total);
    wall.saturating_sub(idle).max(busiest)
}

/// Whether samples claiming `claimed` ns of executions fall short of a batch that took `wall`
/// ns, `without` ns of it without the executions: they claim less than a third of what is
/// left, beyond a slack of a tenth of `without` (the noise of the part measured twice) and
/// [`SHORT_SLACK_NS`] (waking up the kernel process and this one, twice). A third, because
/// preemption, or a slower period in one batch and not its twin, moves the difference by far
/// more than the clock would: over the Level-1 CPU instances on an idle 2-core VM, honest
/// batches claimed 0.99 of what was left in the median and 0.34 at the least (one batch in 968,
/// paused for 17 ms). Samples shortened to less than a third are what this catches.
fn falls_short(claimed: f64, wall: f64, without: f64) -> bool {
    claimed < (wall - without) / 3.0 - 0.1 * without - SHORT_SLACK_NS
}

/// How many times [`Proc::ready_batch`] yields, at most, for the kernel process's serving
/// thread to go back to waiting for a command.
const SETTLE_YIELDS: u32 = 100;

/// Batches (each with its dry twin) that must all fall short before a run fails for it.
const SHORT_ATTEMPTS: u32 = 3;

/// The part of [`falls_short`]'s slack that is not proportional to the batch.
const SHORT_SLACK_NS: f64 = 50_000.0;

/// How far the sum of the kernel process's samples may exceed the runtime's own wall clock
/// around them: a GPU driver's clock (the device's) may run a little apart from the host's.
const CLOCK_SLACK: f64 = 1.01;

/// The failure a GPU driver's error while running stands for.
#[cfg(feature = "gpu")]
fn gpu_failure(fault: GpuFault, message: String) -> Failure {
    let (kind, what) = match fault {
        GpuFault::IllegalLaunch => {
            (FailureKind::Memory(MemoryFault::IllegalAllocation), "the driver refused the launch")
        }
        GpuFault::OutOfMemory => (FailureKind::Memory(MemoryFault::Capacity), "the device ran out of memory"),
        GpuFault::MemoryFault => (
            FailureKind::Memory(MemoryFault::OutOfBounds),
            "a kernel accessed memory outside its buffers (the driver reports an illegal address)",
        ),
        GpuFault::Driver => (FailureKind::RuntimeError, "the GPU driver failed"),
    };
    Failure { kind, evidence: format!("{what}: {message}") }
}

/// The failure a GPU program's first violation stands for.
#[cfg(feature = "gpu")]
fn violation_failure(bufs: &Buffers, v: &Violation) -> Failure {
    match *v {
        Violation::Guard { buffer, offset, bytes } => {
            let i = buffer as usize;
            let name = bufs.name(i).to_string();
            let len = bufs.data(i).len() as i64;
            let place = if offset < 0 {
                format!("{} bytes before the start", -offset)
            } else {
                format!("{} bytes past the end", offset - len)
            };
            Failure {
                kind: FailureKind::Memory(MemoryFault::GuardCorruption { buffer: name.clone() }),
                evidence: format!(
                    "{bytes} byte(s) of the device guard around buffer `{name}` ({len} bytes) were overwritten, the \
                     first {place}: a kernel wrote out of bounds"
                ),
            }
        }
        Violation::InputWrite { buffer, offset } => {
            let i = buffer as usize;
            let name = bufs.name(i).to_string();
            Failure {
                kind: FailureKind::Memory(MemoryFault::InputWrite { buffer: name.clone() }),
                evidence: format!(
                    "the device's copy of read-only {} `{name}` changed during the run, first at byte {offset}",
                    bufs.role(i)
                ),
            }
        }
    }
}

fn to_stop(d: Death, programs: &[(&Program, &Buffers)], timeout: Duration) -> Stop {
    match d {
        Death::HostGone => Stop::HostGone,
        d => Stop::Failed(classify(&d, programs, timeout)),
    }
}

/// Where a program counter lies, in words.
fn describe_pc(pc: usize, programs: &[(&Program, &Buffers)]) -> String {
    for (p, _) in programs {
        for (blob, obj) in p.objects() {
            if let Some((sym, off)) = obj.symbolize(pc) {
                return format!("pc {pc:#x} in `{sym}`+{off:#x} (blob {blob})");
            }
        }
    }
    format!("pc {pc:#x} outside the kernels' code")
}

/// The failure a dead or hung kernel process stands for.
fn classify(death: &Death, programs: &[(&Program, &Buffers)], timeout: Duration) -> Failure {
    let f = |kind, evidence: String| Failure { kind, evidence };
    match death {
        Death::Timeout { after } => f(
            FailureKind::Timeout,
            format!(
                "no answer within {} ms (the limit of one execution): killed with SIGKILL",
                after.as_millis()
            ),
        ),
        Death::HostGone => f(FailureKind::RuntimeError, "the host's stream broke during the run".into()),
        Death::Garbled(what) => garbled(what.clone()),
        Death::Died { status, fault } => {
            let status = *status;
            if libc::WIFEXITED(status) {
                let code = libc::WEXITSTATUS(status);
                return match (code, fault) {
                    (EXIT_SYSCALL, Some(fl)) if fl.signo == libc::SIGSYS => {
                        let name = seccomp::syscall_name(libc::c_long::from(fl.syscall)).unwrap_or("?");
                        f(
                            FailureKind::Crash { signal: libc::SIGSYS },
                            format!(
                                "system call `{name}` ({}) is not allowed in the kernel process: stopped by the \
                                 system-call filter at {}",
                                fl.syscall,
                                describe_pc(fl.pc, programs)
                            ),
                        )
                    }
                    (code, _) => f(
                        FailureKind::RuntimeError,
                        format!("the kernel process exited with status {code} in the middle of a run"),
                    ),
                };
            }
            let sig = libc::WTERMSIG(status);
            let fault = fault.filter(|fl| fl.signo == sig);
            match sig {
                libc::SIGSEGV | libc::SIGBUS => memory_fault(sig, fault.as_ref(), programs),
                libc::SIGXCPU => f(
                    FailureKind::Timeout,
                    format!("the kernel process used up its CPU-time limit (SIGXCPU) within {} ms", timeout.as_millis()),
                ),
                libc::SIGKILL => f(
                    FailureKind::Memory(MemoryFault::Capacity),
                    "the kernel process was killed (SIGKILL) by the system, not by the watchdog: out of memory".into(),
                ),
                libc::SIGILL => f(
                    FailureKind::Crash { signal: sig },
                    format!(
                        "illegal instruction (a trap: unreachable code or llvm.trap) at {}",
                        fault.map_or("an unknown pc".into(), |fl| describe_pc(fl.pc, programs))
                    ),
                ),
                libc::SIGFPE => f(
                    FailureKind::Crash { signal: sig },
                    format!(
                        "arithmetic exception (integer division by zero or overflow) at {}",
                        fault.map_or("an unknown pc".into(), |fl| describe_pc(fl.pc, programs))
                    ),
                ),
                libc::SIGABRT => f(FailureKind::Crash { signal: sig }, "the kernel process aborted (SIGABRT)".into()),
                sig => f(FailureKind::Crash { signal: sig }, format!("the kernel process died of signal {sig}")),
            }
        }
    }
}

fn memory_fault(sig: i32, fault: Option<&Fault>, programs: &[(&Program, &Buffers)]) -> Failure {
    let name = if sig == libc::SIGBUS { "SIGBUS" } else { "SIGSEGV" };
    let Some(fl) = fault else {
        return Failure {
            kind: FailureKind::Memory(MemoryFault::Segfault),
            evidence: format!("{name} with no recorded address"),
        };
    };
    let access = match fl.write {
        Some(true) => "write",
        Some(false) => "read",
        None => "access",
    };
    let at = describe_pc(fl.pc, programs);
    for (_, bufs) in programs {
        if let Some((i, zone)) = bufs.locate(fl.addr) {
            let buffer = bufs.name(i).to_string();
            return match zone {
                Zone::Data { offset } if bufs.is_read_only(i) => Failure {
                    kind: FailureKind::Memory(MemoryFault::InputWrite { buffer: buffer.clone() }),
                    evidence: format!(
                        "{name}: write to byte {offset} of read-only {} `{buffer}` (address {:#x}) at {at}",
                        bufs.kind(i),
                        fl.addr
                    ),
                },
                Zone::Data { offset } => Failure {
                    kind: FailureKind::Memory(MemoryFault::Segfault),
                    evidence: format!(
                        "{name}: {access} of byte {offset} of buffer `{buffer}` faulted at {at}"
                    ),
                },
                Zone::Outside { offset } => {
                    let len = bufs.data(i).len() as i64;
                    let place = if offset < 0 {
                        format!("{} bytes before the start", -offset)
                    } else {
                        format!("{} bytes past the end", offset - len)
                    };
                    Failure {
                        kind: FailureKind::Memory(MemoryFault::OutOfBounds),
                        evidence: format!(
                            "{name}: {access} {place} of buffer `{buffer}` ({len} bytes), in its guard zone \
                             (address {:#x}) at {at}",
                            fl.addr
                        ),
                    }
                }
            };
        }
    }
    // A fault just below the stack pointer: the stack ran into its guard page.
    if fl.addr <= fl.sp.saturating_add(4096) && fl.sp.saturating_sub(fl.addr) <= 1 << 20 {
        return Failure {
            kind: FailureKind::Memory(MemoryFault::Capacity),
            evidence: format!(
                "{name}: stack overflow: {access} at {:#x}, {} bytes below the stack pointer, at {at}; the kernel \
                 used more stack than the profile's budget plus the ABI's reserve",
                fl.addr,
                fl.sp.saturating_sub(fl.addr)
            ),
        };
    }
    Failure {
        kind: FailureKind::Memory(MemoryFault::Segfault),
        evidence: format!("{name}: {access} at {:#x}, outside every buffer, at {at}", fl.addr),
    }
}

/// Checks guards, and the read-only buffers whose checksums `sums` holds (inputs, parameters,
/// prepared temps), after a run (`when`: "during the run", ...); the first violation as a failure.
fn after_run(bufs: &Buffers, sums: &[Option<u64>], when: &str) -> Option<Failure> {
    if let Some(g) = bufs.check_guards().first() {
        return Some(Failure {
            kind: FailureKind::Memory(MemoryFault::GuardCorruption { buffer: g.buffer.clone() }),
            evidence: format!(
                "{} byte(s) around buffer `{}` were overwritten, the first at offset {} from its start",
                g.hit.bytes, g.buffer, g.hit.offset
            ),
        });
    }
    for (i, before) in sums.iter().enumerate() {
        if before.is_some_and(|sum| sum != bufs.data(i).checksum()) {
            let buffer = bufs.name(i).to_string();
            return Some(Failure {
                kind: FailureKind::Memory(MemoryFault::InputWrite { buffer: buffer.clone() }),
                evidence: format!(
                    "the bytes of read-only {} `{buffer}` changed {when} (the kernel process \
                     removed the protection)",
                    bufs.kind(i)
                ),
            });
        }
    }
    None
}

/// What one seed's run found: the outputs' check, the checksums of the inputs, parameters and
/// prepared temps that must hold from then on, a guard or input violation, and how long the
/// execution took (nanoseconds, by the kernel process's clock).
type SeedRun = (SeedCheck, Vec<Option<u64>>, Option<Failure>, u64);

/// Binds the parameters of seed `seed` in the buffers of side `p` (copied from a side that
/// holds the same ones for that seed, else drawn) and runs the program's prepare steps on them,
/// where it has some; returns the checksums that hold from then on: the parameters' but the
/// consumed ones', and the prepared temps' as the prepare steps left them. A consumed parameter
/// (one only prepare steps read, in the arena) is bound just before the first prepare step that
/// reads it (drawn, or copied from its blob), so that the prepare steps run in ranges, each
/// after the parameters it reads first; its bytes may have held another consumed parameter
/// until then. The arena is not protected: each range must leave the consumed parameters it
/// reads as they were, or the side fails as for a write to an input. Every side's parameters are bound and
/// prepared before any side's inputs for the seed ([`run_seed`]), so no prepare step runs while
/// the kernel process holds those inputs: it cannot compute from them, even by reading memory
/// it was not given.
fn bind_params(proc: &mut Proc, sides: &mut [Side], p: usize, seed: usize) -> Result<Vec<Option<u64>>, Stop> {
    let side = &sides[p];
    let bufs = side.bufs.as_ref().expect("allocated buffers");
    let m = side.payload.manifest();
    let value = m.seeds[seed];
    let donor = donor(&sides[..p], value, |d| d.params);
    bufs.generate_role_like(m, value, donor, Role::Param).map_err(runtime_error)?;
    bufs.fill_guards();
    let params: Vec<Option<u64>> = bufs
        .input_checksums()
        .into_iter()
        .enumerate()
        .map(|(i, sum)| sum.filter(|_| bufs.role(i) == Role::Param))
        .collect();
    if m.prepare_steps > 0 {
        let n = m.prepare_plan().len();
        let lives = m.lifetimes();
        let first = |i: usize| lives[i].map_or(0, |(first, _)| first);
        // Each range starts at the first step of a consumed parameter (or at step 0).
        let mut starts: Vec<usize> = (0..bufs.len()).filter(|&i| bufs.is_consumed(i)).map(first).collect();
        starts.push(0);
        starts.sort_unstable();
        starts.dedup();
        for (k, &from) in starts.iter().enumerate() {
            let to = starts.get(k + 1).copied().unwrap_or(n);
            bufs.bind_consumed(m, value, |i| first(i) == from, |b| side.payload.blob(b))
                .map_err(runtime_error)?;
            let read = |i: usize| lives[i].is_some_and(|(first, last)| first < to && last >= from);
            let sums: Vec<Option<u64>> = (0..bufs.len())
                .map(|i| (bufs.is_consumed(i) && read(i)).then(|| bufs.data(i).checksum()))
                .collect();
            let prepare = Cmd::Prepare { program: p as u8, from: from as u32, to: to as u32 };
            match proc.request(&prepare, proc.exec_limit, &programs(sides))? {
                Reply::Prepared => {}
                other => return Err(Stop::Failed(garbled(format!("{other:?}")))),
            }
            if let Some(f) = after_run(bufs, &sums, "during the prepare steps") {
                return Err(Stop::Failed(f));
            }
        }
    }
    let sums = params
        .into_iter()
        .zip(bufs.prepared_checksums())
        .map(|(param, prepared)| param.or(prepared))
        .collect();
    sides[p].params = Some(seed);
    Ok(sums)
}

/// A side of `earlier` whose buffers hold the values of seed `value`, by the seed index `held`
/// says it holds (its parameters' or its inputs'), with its manifest: a copy of its buffers
/// saves drawing them again.
fn donor(
    earlier: &[Side],
    value: u64,
    held: impl Fn(&Side) -> Option<usize>,
) -> Option<(&Buffers, &ekb_wire::payload::Manifest)> {
    earlier
        .iter()
        .find(|d| held(d).map(|i| d.payload.manifest().seeds[i]) == Some(value))
        .map(|d| (d.bufs.as_ref().expect("allocated buffers"), d.payload.manifest()))
}

fn runtime_error(e: BufferError) -> Stop {
    Stop::Failed(Failure { kind: FailureKind::RuntimeError, evidence: e.to_string() })
}

/// Runs seed `seed` of side `p`, whose parameters [`bind_params`] bound (`bound`: the checksums
/// it returned): binds the inputs (copied from a side that holds the same ones for that seed,
/// else drawn), runs the plan once and checks; or says why it stopped.
fn run_seed(
    proc: &mut Proc,
    sides: &[Side],
    p: usize,
    seed: usize,
    bound: Vec<Option<u64>>,
) -> Result<SeedRun, Stop> {
    let side = &sides[p];
    let bufs = side.bufs.as_ref().expect("allocated buffers");
    let m = side.payload.manifest();
    let value = m.seeds[seed];
    let donor = donor(&sides[..p], value, |d| d.inputs);
    bufs.generate_role_like(m, value, donor, Role::Input).map_err(runtime_error)?;
    let sums: Vec<Option<u64>> =
        bound.into_iter().zip(bufs.input_checksums()).map(|(bound, now)| bound.or(now)).collect();
    let programs = programs(sides);
    let (device, ns) = match proc.request(&Cmd::Run { program: p as u8 }, proc.exec_limit, &programs)? {
        Reply::Ran { ns } => (None, ns),
        #[cfg(feature = "gpu")]
        Reply::GpuRan { violations, ns } => (violations.first().map(|v| violation_failure(bufs, v)), ns),
        other => return Err(Stop::Failed(garbled(format!("{other:?}")))),
    };
    let violation = after_run(bufs, &sums, "during the run").or(device);
    Ok((side.program().check(seed, bufs, |s, b| side.payload.expected(s, b)), sums, violation, ns))
}

fn programs(sides: &[Side]) -> Vec<(&Program, &Buffers)> {
    sides.iter().map(|s| (s.program(), s.bufs.as_ref().expect("allocated buffers"))).collect()
}

/// The first output outside the tolerance, as a correctness failure.
fn first_mismatch(seeds: &[SeedCheck], kind: FailureKind, what: &str) -> Option<Failure> {
    seeds.iter().find_map(|s| {
        let o = s.outputs.iter().find(|o| !o.ok)?;
        Some(Failure {
            kind: kind.clone(),
            evidence: format!(
                "{what}seed {}: output `{}` has {} element(s) outside the tolerance, the first at index {} \
                 (max abs error {:e}, max rel error {:e})",
                s.seed,
                o.buffer,
                o.mismatches,
                o.first_mismatch.map_or("?".to_string(), |i| i.to_string()),
                o.max_abs_err,
                o.max_rel_err
            ),
        })
    })
}

/// Correctness of every side on its seeds, seed by seed (each seed's inputs drawn once and
/// copied to the other side, where they are the same tensors; every side's parameters bound
/// and prepared before any side's inputs); failures go into the sides' reports.
fn check_sides(proc: &mut Proc, sides: &mut [Side]) -> Result<(), Stop> {
    let rounds = sides.iter().map(|s| s.seeds.len()).max().unwrap_or(0);
    for i in 0..rounds {
        let mut bound = Vec::with_capacity(sides.len());
        for p in 0..sides.len() {
            let Some(&seed) = sides[p].seeds.get(i) else {
                bound.push(None);
                continue;
            };
            match bind_params(proc, sides, p, seed) {
                Ok(sums) => bound.push(Some((seed, sums))),
                Err(Stop::Failed(f)) => {
                    sides[p].fail(f);
                    return Ok(());
                }
                Err(Stop::HostGone) => return Err(Stop::HostGone),
            }
        }
        for (p, bound) in bound.into_iter().enumerate() {
            let Some((seed, params)) = bound else { continue };
            match run_seed(proc, sides, p, seed, params) {
                Ok((check, sums, violation, ns)) => {
                    sides[p].report.seeds.push(check);
                    sides[p].sums = sums;
                    sides[p].checked_ns = Some(ns);
                    if let Some(f) = violation {
                        sides[p].fail(f);
                        return Ok(());
                    }
                    sides[p].inputs = Some(seed);
                }
                Err(Stop::Failed(f)) => {
                    sides[p].fail(f);
                    // The kernel process may be dead: the other side cannot go on in it.
                    return Ok(());
                }
                Err(Stop::HostGone) => return Err(Stop::HostGone),
            }
        }
    }
    for side in sides.iter_mut() {
        if let Some(f) = first_mismatch(&side.report.seeds, FailureKind::Correctness, "") {
            side.fail(f);
        }
    }
    Ok(())
}

/// A GPU program's outputs of its last execution copied back from the device, with its device
/// guards and inputs checked (each side that is still correct).
#[cfg(feature = "gpu")]
fn read_back(proc: &mut Proc, sides: &mut [Side]) -> Result<(), Stop> {
    for p in 0..sides.len() {
        if !sides[p].program().is_gpu() || !sides[p].ok() {
            continue;
        }
        let programs = programs(sides);
        let device = match proc.request(&Cmd::Readback { program: p as u8 }, proc.exec_limit, &programs) {
            Ok(Reply::ReadBack { violations }) => {
                let bufs = sides[p].bufs.as_ref().expect("allocated buffers");
                violations.first().map(|v| violation_failure(bufs, v))
            }
            Ok(other) => Some(garbled(format!("{other:?}"))),
            Err(Stop::Failed(f)) => Some(f),
            Err(Stop::HostGone) => return Err(Stop::HostGone),
        };
        if let Some(f) = device {
            sides[p].fail(f);
        }
    }
    Ok(())
}

/// Nothing to copy back: a CPU program's outputs are the shared buffers.
#[cfg(not(feature = "gpu"))]
fn read_back(_: &mut Proc, _: &mut [Side]) -> Result<(), Stop> {
    Ok(())
}

/// After timing: the outputs of the seed the inputs hold again, guards, inputs (a GPU program's
/// outputs copied back from the device first, with its device guards and inputs checked).
/// The candidate is judged first, and a baseline only when its candidate passed: the two
/// sides of a pair read one copy of their inputs ([`Buffers::allocate_beside`]), so a write to
/// one, by whichever side, shows in both, and the baseline is the pair's reference program.
fn recheck(proc: &mut Proc, sides: &mut [Side]) -> Result<(), Stop> {
    read_back(proc, sides)?;
    for side in sides.iter_mut().rev() {
        let Some(seed) = side.inputs else { continue };
        let bufs = side.bufs.as_ref().expect("allocated buffers");
        let check = side.program().check(seed, bufs, |s, b| side.payload.expected(s, b));
        let mismatch = first_mismatch(
            std::slice::from_ref(&check),
            FailureKind::Parallel,
            "after timing, the outputs no longer match (results changed between runs): ",
        );
        if let Some(f) = after_run(bufs, &side.sums, "during timing").or(mismatch) {
            side.fail(f);
            break;
        }
    }
    Ok(())
}

/// The guards and inputs of every side against what they held when bound, after executions
/// that were not checked one by one (samples), before anything draws them again: the first
/// violation with its side, the candidate judged first as in [`recheck`].
fn unchecked_writes(sides: &[Side]) -> Option<(usize, Failure)> {
    sides.iter().enumerate().rev().find_map(|(p, side)| {
        let bufs = side.bufs.as_ref()?;
        after_run(bufs, &side.sums, "while samples ran").map(|f| (p, f))
    })
}

/// Counted executions of program `p`: the perf counters of a CPU program; a GPU program's
/// per-kernel device times and driver figures (the CPU's counters do not see its kernels).
fn count(proc: &mut Proc, sides: &[Side], p: usize, median_ns: f64) -> Result<Vec<Counter>, Stop> {
    let runs = if median_ns > 0.0 { (COUNT_NS / median_ns).ceil().clamp(1.0, 100.0) as u32 } else { 1 };
    #[cfg(feature = "gpu")]
    if let Some(built) = sides[p].payload.gpu() {
        let timeout = proc.exec_limit.saturating_mul(runs);
        let step_ns = match proc.request(&Cmd::Count { program: p as u8, runs }, timeout, &programs(sides))? {
            Reply::GpuCounted { step_ns } => step_ns,
            other => return Err(Stop::Failed(garbled(format!("{other:?}")))),
        };
        let m = sides[p].payload.manifest();
        let reason =
            format!("the kernels ran on the GPU ({}): the CPU's counters do not see them", m.backend);
        let mut out: Vec<Counter> = counters::readings(&[], &vec![Some(reason); counters::NAMES.len()], 0);
        let kernels: Vec<String> = m.kernels.iter().map(|k| k.name.clone()).collect();
        out.extend(counters::step_times(
            &step_names(sides, p),
            &step_ns,
            u64::from(runs),
            built.device.api.clock(),
        ));
        out.extend(crate::gpu::resource_counters(&kernels, built));
        return Ok(out);
    }
    // At most twice the runs: the counted ones, then as many with each step timed alone.
    let timeout = proc.exec_limit.saturating_mul(runs.saturating_mul(2));
    let (raw, step_ns) =
        match proc.request(&Cmd::Count { program: p as u8, runs }, timeout, &programs(sides))? {
            Reply::Counted { raw, step_ns } => (raw, step_ns),
            other => return Err(Stop::Failed(garbled(format!("{other:?}")))),
        };
    let raw = if proc.any_counter { raw } else { Vec::new() };
    let mut out = counters::readings(&raw, &proc.counter_errors, u64::from(runs));
    out.extend(counters::step_times(&step_names(sides, p), &step_ns, u64::from(runs), sides[p].clock()));
    Ok(out)
}

/// The kernel each execution step of program `p` launches (the prepare steps are not part of
/// an execution, and are neither counted nor timed).
fn step_names(sides: &[Side], p: usize) -> Vec<String> {
    let m = sides[p].payload.manifest();
    m.execution_plan().iter().map(|s| m.kernels[s.kernel as usize].name.clone()).collect()
}

fn batch_size(done: usize, settings: &TimingSettings, median_ns: f64, left_ns: f64, batch_ns: f64) -> usize {
    let max = settings.max_samples as usize;
    let min = (settings.min_samples as usize).clamp(1, max);
    if done < min {
        return min - done;
    }
    let by_time = if median_ns > 0.0 { (batch_ns.min(left_ns) / median_ns).floor() as usize } else { 1 };
    by_time.clamp(1, max.saturating_sub(done).max(1))
}

fn stop_reason(n: usize, rse: f64, settings: &TimingSettings, started: Instant) -> Option<StopReason> {
    let max = settings.max_samples as usize;
    let min = (settings.min_samples as usize).clamp(1, max);
    if n >= min && rse <= settings.target_rse {
        Some(StopReason::TargetReached)
    } else if n >= max {
        Some(StopReason::MaxSamples)
    } else if n >= 1 && started.elapsed() >= Duration::from_millis(settings.budget_ms) {
        Some(StopReason::Budget)
    } else {
        None
    }
}

/// Runs `order` untimed (as far as the result goes) and returns the samples it took.
fn warm_up(proc: &mut Proc, sides: &[Side], order: Vec<u8>) -> Result<Vec<u64>, Stop> {
    if order.is_empty() {
        return Ok(Vec::new());
    }
    let cold = sides[0].settings.cold_cache;
    let timeout = proc.exec_limit.saturating_mul(order.len() as u32);
    proc.sample(&Cmd::Sample { order, cold, reps: Vec::new(), dry: false }, timeout, &programs(sides))
}

/// Executions per sample of each side, from the median of the side's samples in `order` (its
/// warm-up: `ns[i]` is a sample of side `order[i]`): enough that a sample lasts
/// [`MIN_SAMPLE_NS`], and, where sides take turns, enough that every side's sample lasts about
/// as long as the slowest side's single run.
///
/// Why the lengths are matched: the first execution of a sample follows the other side's
/// sample and pays for what it left in the caches and TLBs, a cost `c` charged once per sample.
/// A side whose sample is `n` runs of `t` carries `c / n` in each, so sides of unequal sample
/// lengths see that cost in unequal shares and their ratio is biased toward 1: on a 2-core VM
/// a 16 MB `expand` against itself run twice (one run a sample each side) measured 0.67
/// instead of 0.50, the first execution after the other side costing as much as one more.
/// With both samples equally long the cost is the same share of each, and the ratio holds.
fn calibrate(sides: usize, order: &[u8], ns: &[u64]) -> Vec<u32> {
    let medians: Vec<f64> = (0..sides)
        .map(|p| {
            let mine: Vec<u64> =
                order.iter().zip(ns).filter(|(&o, _)| o as usize == p).map(|(_, &t)| t).collect();
            stats::summarize(&mine).median_ns
        })
        .collect();
    let longest = medians.iter().copied().filter(|m| !m.is_nan()).fold(MIN_SAMPLE_NS, f64::max);
    medians
        .iter()
        .map(|&median| {
            if median.is_nan() {
                return 1;
            }
            let run = median.max(1.0);
            let enough = (MIN_SAMPLE_NS / run).ceil();
            let matched = (longest / run).round();
            enough.max(matched).clamp(1.0, f64::from(MAX_REPS)) as u32
        })
        .collect()
}

/// Executions of warm-up of a side whose last checked execution took `checked_ns`: as many as
/// last [`WARM_UP_NS`] together, at least one and at most `warmup`. The checked executions on
/// every seed came right before, so a program that runs for many milliseconds is warm after one
/// more.
fn warm_up_runs(warmup: u32, checked_ns: Option<u64>) -> u32 {
    let most = warmup.max(1);
    match checked_ns.filter(|&ns| ns > 0) {
        Some(ns) => WARM_UP_NS.div_ceil(ns).clamp(1, u64::from(most)) as u32,
        None => most,
    }
}

/// The warm-up of `sides` (each side [`warm_up_runs`] times, interleaved) and the executions
/// per sample it calibrates.
/// Cold timing keeps one execution per sample: every execution is preceded by its own cache
/// flush (twice the largest cache), so repeating a microsecond kernel to fill 200 us would
/// repeat the flush as often, and a sample of a cold execution is long enough to time anyway.
fn warm_up_and_calibrate(proc: &mut Proc, sides: &[Side]) -> Result<Vec<u32>, Stop> {
    let warmup = sides[0].settings.warmup;
    let runs: Vec<u32> = sides.iter().map(|s| warm_up_runs(warmup, s.checked_ns)).collect();
    let rounds = runs.iter().copied().max().unwrap_or(0);
    let runs = &runs;
    let order: Vec<u8> =
        (0..rounds).flat_map(|r| (0..sides.len() as u8).filter(move |&p| r < runs[usize::from(p)])).collect();
    let ns = warm_up(proc, sides, order.clone())?;
    if sides[0].settings.cold_cache {
        return Ok(vec![1; sides.len()]);
    }
    Ok(calibrate(sides.len(), &order, &ns))
}

/// Samples one side (program 0) until a stop rule holds, its inputs drawn again once on the
/// way (`fresh`).
fn sample_one(proc: &mut Proc, sides: &mut [Side]) -> Result<Timing, Stop> {
    let reps = warm_up_and_calibrate(proc, sides)?;
    let mut switch = fresh::Switch::draw(sides);
    let (samples, stop) = sample_batches(proc, sides, &reps, &mut switch)?;
    if let Some((_, f)) = switch.finish(proc, sides, &reps)? {
        return Err(Stop::Failed(f));
    }
    Ok(timing(samples, &sides[0].settings, stop, sides[0].clock(), reps[0]))
}

/// Batches of samples of program 0 (`reps[0]` executions each) until a stop rule of its
/// settings holds, with the `switch` of inputs where it falls: the samples and why they stopped.
fn sample_batches(
    proc: &mut Proc,
    sides: &mut [Side],
    reps: &[u32],
    switch: &mut fresh::Switch,
) -> Result<(Vec<u64>, StopReason), Stop> {
    let settings = sides[0].settings;
    let started = Instant::now();
    let budget = Duration::from_millis(settings.budget_ms);
    let mut samples: Vec<u64> = Vec::new();
    loop {
        let s = stats::summarize(&samples);
        if let Some(r) = stop_reason(samples.len(), s.rse, &settings, started) {
            return Ok((samples, r));
        }
        let left = budget.saturating_sub(started.elapsed());
        let k = batch_size(
            samples.len(),
            &settings,
            s.median_ns * f64::from(reps[0]),
            left.as_nanos() as f64,
            BATCH_NS,
        );
        let timeout = left + proc.exec_limit.saturating_mul(reps[0]);
        let cmd =
            Cmd::Sample { order: vec![0; k], cold: settings.cold_cache, reps: reps.to_vec(), dry: false };
        if let Some((_, f)) = switch.before_batch(proc, sides)? {
            return Err(Stop::Failed(f));
        }
        samples.extend(proc.sample(&cmd, timeout, &programs(sides))?);
        if let Some((_, f)) = switch.after_batch(proc, sides)? {
            return Err(Stop::Failed(f));
        }
    }
}

fn timing(samples: Vec<u64>, settings: &TimingSettings, stop: StopReason, clock: &str, reps: u32) -> Timing {
    Timing {
        stats: stats::summarize(&samples),
        samples_ns: samples,
        reps,
        warmup: settings.warmup,
        cold_cache: settings.cold_cache,
        clock: clock.into(),
        stop,
    }
}

/// Ends the kernel process and records its RSS in every side.
fn finish(mut proc: Proc, sides: &mut [Side]) {
    let programs = programs(sides);
    let _ = proc.request(&Cmd::Exit, Duration::from_secs(1), &programs);
    let reaped = proc.child.reap(Some(Duration::from_secs(5)));
    for s in sides.iter_mut() {
        s.report.memory.max_rss_bytes = reaped.max_rss_bytes;
    }
}

fn host_gone() -> RunError {
    RunError { kind: ErrorKind::Internal, message: "the host's stream broke during the run".into() }
}

/// Runs every seed of the payload (or the listed ones), checks the outputs, and times it.
pub fn run_payload(
    payload: &Arc<LoadedPayload>,
    hidden: &[(usize, usize)],
    options: &RunOptions,
) -> Result<RunReport, RunError> {
    options.check()?;
    let mut sides = vec![Side::new(payload, options, &TimingOverrides::default(), None)?];
    if !sides[0].ok() {
        return Ok(sides.remove(0).report);
    }
    let mut proc = match start(&mut sides, options, hidden, 1) {
        Ok(p) => p,
        Err(Stop::Failed(f)) => {
            sides[0].fail(f);
            return Ok(sides.remove(0).report);
        }
        Err(Stop::HostGone) => return Err(host_gone()),
    };
    check_sides(&mut proc, &mut sides).map_err(|_| host_gone())?;
    if sides[0].ok() {
        match sample_one(&mut proc, &mut sides) {
            Ok(t) => {
                let median = t.stats.median_ns;
                sides[0].report.log.push(log(
                    LogLevel::Info,
                    format!(
                        "timing: {} sample(s) after {} warm-up run(s), {} cache, stopped: {:?} (median rse {:.4})",
                        t.samples_ns.len(),
                        t.warmup,
                        if t.cold_cache { "cold" } else { "warm" },
                        t.stop,
                        t.stats.rse
                    ),
                ));
                sides[0].report.timing = Some(t);
                match count(&mut proc, &sides, 0, median) {
                    Ok(c) => sides[0].report.counters = c,
                    Err(Stop::Failed(f)) => sides[0].fail(f),
                    Err(Stop::HostGone) => return Err(host_gone()),
                }
                if recheck(&mut proc, &mut sides).is_err() {
                    return Err(host_gone());
                }
            }
            Err(Stop::Failed(f)) => sides[0].fail(f),
            Err(Stop::HostGone) => return Err(host_gone()),
        }
    }
    finish(proc, &mut sides);
    Ok(sides.remove(0).report)
}

/// Times a candidate against a baseline in one kernel process, alternating them in pairs
/// whose order is drawn per pair (`docs/runtime.md`, paired mode).
pub fn run_paired(
    baseline: &Arc<LoadedPayload>,
    candidate: &Arc<LoadedPayload>,
    hidden: &[(usize, usize)],
    settings: &PairedSettings,
    options: &RunOptions,
) -> Result<PairedReport, RunError> {
    options.check()?;
    let mut options = options.clone();
    options.seeds = None;
    let first = Side::new(baseline, &options, &settings.timing, None)?;
    let second = Side::new(candidate, &options, &settings.timing, Some(&first))?;
    let mut sides = vec![first, second];
    // Both sides share the baseline's timing settings (overridden by the request).
    sides[1].settings = sides[0].settings;
    let mut paired = PairedReport {
        baseline: sides[0].report.clone(),
        candidate: sides[1].report.clone(),
        pairs: Vec::new(),
        ratio: None,
        stable: false,
        attempts: 0,
        stop: StopReason::MaxSamples,
    };
    if sides.iter().all(Side::ok) {
        match start(&mut sides, &options, hidden, settings.attempts) {
            Ok(mut proc) => {
                check_sides(&mut proc, &mut sides).map_err(|_| host_gone())?;
                if sides.iter().all(Side::ok) {
                    match pair(&mut proc, &mut sides, settings, &mut paired) {
                        Ok(()) => {
                            if recheck(&mut proc, &mut sides).is_err() {
                                return Err(host_gone());
                            }
                        }
                        Err(Stop::Failed(f)) => sides[1].fail(f),
                        Err(Stop::HostGone) => return Err(host_gone()),
                    }
                }
                finish(proc, &mut sides);
            }
            Err(Stop::Failed(f)) => {
                for s in sides.iter_mut() {
                    s.fail(f.clone());
                }
            }
            Err(Stop::HostGone) => return Err(host_gone()),
        }
    }
    // The ratio stands unless a side failed outright (an unstable side keeps it, flagged).
    let failed = |s: &Side| s.report.failure.as_ref().is_some_and(|f| f.kind != FailureKind::UnstableTiming);
    if sides.iter().any(failed) {
        paired.ratio = None;
    }
    let candidate = sides.pop().expect("two sides").report;
    let baseline = sides.pop().expect("two sides").report;
    paired.baseline = baseline;
    paired.candidate = candidate;
    Ok(paired)
}

/// Half the width of a ratio's interval, relative to its median (infinite when it says
/// nothing: no positive median).
fn relative_half_width(r: &RatioStats) -> f64 {
    if r.median > 0.0 && r.ci_high.is_finite() && r.ci_low.is_finite() {
        (r.ci_high - r.ci_low) / 2.0 / r.median
    } else {
        f64::INFINITY
    }
}

/// The median ratio of `pairs` with its bootstrap interval, resampling whole placements
/// (`placements[i]` is the placement of `pairs[i]`).
fn ratio_of(pairs: &[PairSample], placements: &[u32], settings: &PairedSettings) -> RatioStats {
    let ratios: Vec<f64> = pairs.iter().map(ratio).collect();
    let (median, rse, ci_low, ci_high) = stats::clustered_ratio_stats(
        &ratios,
        placements,
        settings.bootstrap_resamples,
        settings.confidence,
        settings.order_seed,
    );
    RatioStats { median, ci_low, ci_high, confidence: settings.confidence, rse }
}

/// The pairing loop: after one warm-up that calibrates each side's executions per sample,
/// attempts until the median ratio's interval is within `max_ci` of it or the attempts run out.
/// An attempt stops once the ratio's relative standard error reaches the target and its
/// bootstrap interval is tight enough, or at the sample maximum, or when its budget is spent.
fn pair(
    proc: &mut Proc,
    sides: &mut [Side],
    settings: &PairedSettings,
    out: &mut PairedReport,
) -> Result<(), Stop> {
    let t = sides[0].settings;
    let reps = warm_up_and_calibrate(proc, sides)?;
    let mut switch = fresh::Switch::draw(sides);
    // CPU programs time each batch in a placement of its own (new physical pages for the
    // outputs and temporaries), and a pair is only stable over enough of them.
    let placed = sides.iter().all(|s| !s.payload.program().is_gpu());
    let min_placements = if placed { MIN_PLACEMENTS } else { 1 };
    let mut batches: u32 = 0;
    // What the last placement took: a batch lasts a multiple of it.
    let mut place_ns = 0.0;
    // Which side is placed first, from a stream of its own, so that the pairs' orders stay
    // the same for a seed however many batches the timing takes.
    let mut sides_rng = Rng::new(settings.order_seed ^ 0x5851_f42d_4c95_7f2d);
    let attempts = settings.attempts.max(1);
    // The pairs of every attempt: a later attempt adds to them (a fresh budget, not a fresh
    // start), since the interval narrows with every pair, and the median is robust to the
    // share of them a passing disturbance spoiled.
    let mut pairs: Vec<PairSample> = Vec::new();
    // The placement of each pair (its batch; 0 for every pair where nothing is placed).
    let mut placements: Vec<u32> = Vec::new();
    // The interval last computed, and at how many pairs (the bootstrap is only repeated once
    // the pairs have grown by a quarter).
    let mut interval: Option<(usize, RatioStats)> = None;
    for attempt in 1..=attempts {
        let mut rng =
            Rng::new(settings.order_seed ^ u64::from(attempt - 1).wrapping_mul(0x9e37_79b9_7f4a_7c15));
        let started = Instant::now();
        let budget = Duration::from_millis(t.budget_ms);
        // Each attempt may take up to `max_samples` more pairs.
        let t = TimingSettings { max_samples: t.max_samples.saturating_mul(attempt), ..t };
        let stop = loop {
            let ratios: Vec<f64> = pairs.iter().map(ratio).collect();
            let (median, rse, _, _) = stats::ratio_stats(&ratios, 0, settings.confidence, 0);
            match stop_reason(pairs.len(), rse, &t, started) {
                Some(StopReason::TargetReached) => {
                    let fresh = interval.as_ref().is_none_or(|(n, _)| pairs.len() >= n + n / 4);
                    if fresh {
                        interval = Some((pairs.len(), ratio_of(&pairs, &placements, settings)));
                    }
                    let enough = batches as usize >= min_placements;
                    if enough
                        && interval.as_ref().is_some_and(|(_, r)| relative_half_width(r) <= settings.max_ci)
                    {
                        break StopReason::TargetReached;
                    }
                    // The interval is still too wide: more pairs, unless another rule stops.
                    if pairs.len() >= t.max_samples as usize {
                        break StopReason::MaxSamples;
                    }
                    if started.elapsed() >= budget {
                        break StopReason::Budget;
                    }
                }
                Some(r) => break r,
                None => {}
            }
            // Wall time of one pair: each side's sample is `reps` executions.
            let per_pair = pairs
                .iter()
                .map(|p| {
                    p.baseline_ns as f64 * f64::from(reps[0]) + p.candidate_ns as f64 * f64::from(reps[1])
                })
                .sum::<f64>()
                / pairs.len().max(1) as f64;
            let left = budget.saturating_sub(started.elapsed());
            let k = batch_size(
                pairs.len(),
                &t,
                if median.is_nan() { 0.0 } else { per_pair },
                left.as_nanos() as f64,
                if placed { PLACED_BATCH_NS.max(PLACE_SHARE * place_ns) } else { BATCH_NS },
            );
            let mut order = Vec::with_capacity(2 * k);
            let mut firsts = Vec::with_capacity(k);
            for _ in 0..k {
                let baseline_first = rng.coin();
                firsts.push(baseline_first);
                order.extend(if baseline_first { [0u8, 1] } else { [1u8, 0] });
            }
            let timeout = left + proc.exec_limit.saturating_mul(reps[0] + reps[1]);
            if placed {
                // In a drawn order: what one side's placement leaves the next is not always
                // the same side's.
                let place = Cmd::Place { programs: if sides_rng.coin() { vec![0, 1] } else { vec![1, 0] } };
                match proc.request(&place, proc.exec_limit, &programs(sides))? {
                    Reply::Placed { ns, .. } => place_ns = ns as f64,
                    other => return Err(Stop::Failed(garbled(format!("{other:?}")))),
                }
            }
            let cmd = Cmd::Sample { order, cold: t.cold_cache, reps: reps.clone(), dry: false };
            if let Some((p, f)) = switch.before_batch(proc, sides)? {
                sides[p].fail(f);
                return Ok(());
            }
            let ns = proc.sample(&cmd, timeout, &programs(sides))?;
            if let Some((p, f)) = switch.after_batch(proc, sides)? {
                sides[p].fail(f);
                return Ok(());
            }
            for (pair_ns, &baseline_first) in ns.chunks_exact(2).zip(&firsts) {
                let (b, c) = if baseline_first { (pair_ns[0], pair_ns[1]) } else { (pair_ns[1], pair_ns[0]) };
                pairs.push(PairSample { baseline_ns: b, candidate_ns: c, baseline_first });
                placements.push(if placed { batches } else { 0 });
            }
            batches += 1;
        };
        let base: Vec<u64> = pairs.iter().map(|p| p.baseline_ns).collect();
        let cand: Vec<u64> = pairs.iter().map(|p| p.candidate_ns).collect();
        let (bt, ct) = (
            timing(base, &t, stop, sides[0].clock(), reps[0]),
            timing(cand, &t, stop, sides[1].clock(), reps[1]),
        );
        let (bs, cs) = (bt.stats.spread(), ct.stats.spread());
        let r = match &interval {
            Some((n, r)) if *n == pairs.len() => *r,
            _ => ratio_of(&pairs, &placements, settings),
        };
        let width = relative_half_width(&r);
        let stable = width <= settings.max_ci;
        let line = format!(
            "paired attempt {attempt} of {attempts}: {} pairs in {} placement(s), of {} and {} execution(s) per \
             sample, median ratio {:.4}, {:.0}% interval [{:.4}, {:.4}] (+-{:.2}% of the median, limit {:.2}%); \
             spread baseline {bs:.3}, candidate {cs:.3}",
            pairs.len(),
            if placed { batches } else { 1 },
            reps[0],
            reps[1],
            r.median,
            r.confidence * 100.0,
            r.ci_low,
            r.ci_high,
            width * 100.0,
            settings.max_ci * 100.0,
        );
        for side in sides.iter_mut() {
            side.report.log.push(log(if stable { LogLevel::Info } else { LogLevel::Warn }, line.clone()));
        }
        out.ratio = Some(r);
        out.pairs = pairs.clone();
        out.stable = stable;
        out.attempts = attempt;
        out.stop = stop;
        for (side, tm) in sides.iter_mut().zip([bt, ct]) {
            side.report.timing = Some(tm);
        }
        if stable {
            break;
        }
    }
    if let Some((p, f)) = switch.finish(proc, sides, &reps)? {
        sides[p].fail(f);
        return Ok(());
    }
    if let (false, Some(r)) = (out.stable, &out.ratio) {
        let spreads: Vec<f64> =
            sides.iter().map(|s| s.report.timing.as_ref().map_or(0.0, |t| t.stats.spread())).collect();
        sides[1].fail(Failure {
            kind: FailureKind::UnstableTiming,
            evidence: format!(
                "the median ratio {:.4} has a {:.0}% interval [{:.4}, {:.4}], +-{:.2}% of it, wider than +-{:.2}% \
                 after {} attempt(s) (timing spread, a robust coefficient of variation: baseline {:.3}, \
                 candidate {:.3})",
                r.median,
                r.confidence * 100.0,
                r.ci_low,
                r.ci_high,
                relative_half_width(r) * 100.0,
                settings.max_ci * 100.0,
                out.attempts,
                spreads[0],
                spreads[1]
            ),
        });
    }
    if let Some(r) = &out.ratio {
        if r.median > SUSPICIOUS_SPEEDUP {
            sides[1].report.log.push(log(
                LogLevel::Warn,
                format!("speedup {:.2} is above {SUSPICIOUS_SPEEDUP}: flagged for review", r.median),
            ));
        }
    }
    for p in 0..sides.len() {
        let median = sides[p].report.timing.as_ref().map_or(0.0, |t| t.stats.median_ns);
        sides[p].report.counters = count(proc, sides, p, median)?;
    }
    Ok(())
}

fn ratio(p: &PairSample) -> f64 {
    p.baseline_ns as f64 / p.candidate_ns.max(1) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slow_programs_warm_up_fewer_times() {
        // Fast programs (and those not checked yet) take the whole warm-up.
        assert_eq!(warm_up_runs(3, Some(10_000)), 3);
        assert_eq!(warm_up_runs(3, None), 3);
        // Two executions of 8 ms do not last 20 ms, two of 10 ms do.
        assert_eq!(warm_up_runs(3, Some(8_000_000)), 3);
        assert_eq!(warm_up_runs(3, Some(10_000_000)), 2);
        // One execution at least, whatever it costs or the settings say.
        assert_eq!(warm_up_runs(3, Some(500_000_000)), 1);
        assert_eq!(warm_up_runs(0, Some(1_000)), 1);
    }

    #[test]
    fn sides_take_samples_of_about_the_same_length() {
        let calibrated = |ns: &[u64]| calibrate(ns.len(), &(0..ns.len() as u8).collect::<Vec<_>>(), ns);
        // One side: enough runs to last the minimum sample, one run of a slow program.
        assert_eq!(calibrated(&[30_000]), vec![7]);
        assert_eq!(calibrated(&[900_000]), vec![1]);
        // A program against itself run twice: twice the runs of the shorter, so that both
        // samples hold two executions (one each had biased their ratio toward 1).
        assert_eq!(calibrated(&[334_000, 668_000]), vec![2, 1]);
        // Both below the minimum: each side on its own reaches it.
        assert_eq!(calibrated(&[50_000, 90_000]), vec![4, 3]);
        // Never shorter than the minimum, whichever length is nearest the longest side's.
        assert_eq!(calibrated(&[180_000, 260_000]), vec![2, 1]);
        assert_eq!(calibrated(&[1_000_000, 1_300_000]), vec![1, 1]);
        assert_eq!(calibrated(&[400_000, 1_300_000]), vec![3, 1]);
    }

    #[test]
    fn samples_fall_short_below_a_third_of_the_time_left_for_them() {
        // Honest batches from the Level-1 instances: the median, and the least seen (paused
        // outside the timed spans).
        assert!(!falls_short(3_549_920.0, 6_632_331.0, 3_162_012.0));
        assert!(!falls_short(9_746_625.0, 37_016_978.0, 8_096_433.0));
        // The clock-moving kernel of the hostile tests: 3.7 of 17.1 ms.
        assert!(falls_short(3_729_880.0, 30_249_215.0, 13_144_917.0));
        // A tenth of the part measured twice is slack: a batch mostly of flushes and poison
        // tells little about its executions.
        assert!(!falls_short(1_000_000.0, 104_000_000.0, 100_000_000.0));
        assert!(falls_short(1_000_000.0, 30_000_000.0, 10_000_000.0));
        // Short batches are below the fixed slack.
        assert!(!falls_short(0.0, 140_000.0, 0.0));
        assert!(falls_short(0.0, 160_000.0, 0.0));
    }

    #[test]
    fn only_waits_while_the_kernel_process_ran_nothing_are_taken_off_a_batch() {
        let at = |waits, server, worker| Sched { waits, cpu: vec![(10, server), (11, worker)] };
        // A batch of 1.2 ms in which both threads waited 900 us and the kernel process ran
        // 300 us: 600 us in which nothing of the batch ran.
        assert_eq!(ready_ns(1_200_000, &at(1_000, 5_000, 0), &at(901_000, 205_000, 100_000)), 600_000);
        // This thread waited while the kernel process ran (it preempted the sender): nothing.
        assert_eq!(ready_ns(400_000, &at(0, 0, 0), &at(330_000, 340_000, 0)), 400_000);
        // Waits counted beyond the batch (overlapping, or begun before it) never leave less
        // than the busiest thread ran.
        assert_eq!(ready_ns(500_000, &at(0, 0, 0), &at(2_000_000, 150_000, 250_000)), 250_000);
        // A thread started between the readings counts from zero; figures that went back count
        // nothing.
        let started = Sched { waits: 0, cpu: vec![(10, 0), (11, 0), (12, 70_000)] };
        assert_eq!(ready_ns(100_000, &at(0, 0, 0), &started), 100_000);
        assert_eq!(ready_ns(100_000, &at(500, 9, 9), &at(100, 0, 0)), 100_000);
    }
}
