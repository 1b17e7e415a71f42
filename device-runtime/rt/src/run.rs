//! Running a payload for correctness, in this process: load the code, allocate the buffers,
//! and for every seed generate the inputs, poison the outputs, run the plan on the thread pool
//! and compare the outputs. The result is the protocol's [`RunReport`] (or, for a payload that
//! cannot be run here at all, the protocol's error answer), so offline report files and a live
//! session carry the same messages.
//!
//! What it must keep true: a failure of the candidate (code that does not load, wrong outputs)
//! is reported, never turned into a runtime error; the report says what this build did not do
//! (timing, isolation, counters, allocation legality) in its log rather than leaving fields
//! that look measured. Kernels run on a thread with [`Program::kernel_stack_bytes`] of stack
//! plus room for the runtime's own frames.

use crate::buffers::{BufferError, RegionLayout};
use crate::pool::{Pool, PoolConfig};
use crate::program::{Program, ProgramError};
use ekb_wire::payload::{MemScope, PayloadView};
use ekb_wire::protocol::{
    ErrorKind, Failure, FailureKind, LogLevel, LogLine, MemoryFault, MemoryReport, PayloadId, RunReport,
    ScopeBytes, SeedCheck,
};

/// Stack for the runtime's own frames on the thread that calls kernels.
const RUNTIME_STACK: usize = 256 << 10;

/// How to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunOptions {
    /// Threads for parallel loops (0: one per allowed CPU, or per CPU in `cpus`).
    pub threads: usize,
    /// CPUs to pin the kernel threads to (empty: no pinning).
    pub cpus: Vec<usize>,
    pub layout: RegionLayout,
}

impl Default for RunOptions {
    fn default() -> RunOptions {
        RunOptions { threads: 0, cpus: Vec::new(), layout: RegionLayout::one_page() }
    }
}

/// A payload this runtime cannot run at all, as the protocol's error answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunError {
    pub kind: ErrorKind,
    pub message: String,
}

impl From<ProgramError> for RunError {
    fn from(e: ProgramError) -> RunError {
        let kind = match e {
            ProgramError::Backend(_) => ErrorKind::Unsupported,
            ProgramError::Load { .. } | ProgramError::MissingEntry { .. } => ErrorKind::LoadFailed,
        };
        RunError { kind, message: e.to_string() }
    }
}

fn log(level: LogLevel, message: impl Into<String>) -> LogLine {
    LogLine { level, message: message.into() }
}

/// The maximum resident set size of this process, in bytes.
fn max_rss_bytes() -> Option<u64> {
    // SAFETY: rusage is plain data filled by getrusage.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: a valid, writable rusage for the calling process.
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) } != 0 {
        return None;
    }
    u64::try_from(u.ru_maxrss).ok().map(|kb| kb * 1024)
}

/// Runs every seed of the payload (`id` is its number in this session or report file) and
/// checks the outputs.
pub fn run_payload(
    id: PayloadId,
    view: &PayloadView<'_>,
    options: &RunOptions,
) -> Result<RunReport, RunError> {
    let program = Program::load(view)?;
    let m = program.manifest();
    let mut report = RunReport {
        payload: id,
        task: m.task.clone(),
        target: m.target.clone(),
        backend: m.backend,
        threads: 0,
        seeds: Vec::new(),
        timing: None,
        counters: Vec::new(),
        memory: MemoryReport {
            by_scope: Vec::new(),
            peak_bytes: m.memory.peak_bytes,
            max_rss_bytes: None,
            allocations: Vec::new(),
        },
        failure: None,
        log: Vec::new(),
    };
    for (blob, obj) in program.objects() {
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
    report.log.push(log(
        LogLevel::Warn,
        "correctness only: kernels ran in the runtime's own process, without isolation, timing, \
         counters or allocation-legality checks",
    ));

    let stack = usize::try_from(m.memory.stack_limit_bytes).unwrap_or(usize::MAX);
    let pool =
        Pool::new(&PoolConfig { threads: options.threads, cpus: options.cpus.clone(), stack_bytes: stack })
            .map_err(|e| RunError { kind: ErrorKind::Internal, message: e.to_string() })?;
    report.threads = pool.threads() as u32;

    let bufs = match program.allocate(options.layout) {
        Ok(b) => b,
        Err(e) => {
            let kind = match e {
                BufferError::Allocate { .. } => FailureKind::Memory(MemoryFault::Capacity),
                BufferError::Init { .. } => FailureKind::RuntimeError,
            };
            report.failure = Some(Failure { kind, evidence: e.to_string() });
            return Ok(report);
        }
    };
    report.memory.by_scope.push(ScopeBytes { scope: MemScope::Global, bytes: bufs.data_bytes() });
    let local: u64 = m
        .kernels
        .iter()
        .flat_map(|k| &k.allocs)
        .filter(|a| a.scope == MemScope::Local)
        .map(|a| a.bytes)
        .sum();
    if local > 0 {
        report.memory.by_scope.push(ScopeBytes { scope: MemScope::Local, bytes: local });
    }

    let kernel_stack = program.kernel_stack_bytes().saturating_add(RUNTIME_STACK);
    let outcome = std::thread::scope(|s| {
        let run = || -> Result<Vec<SeedCheck>, Failure> {
            pool.pin_caller().map_err(|e| Failure {
                kind: FailureKind::RuntimeError,
                evidence: format!("cannot pin the kernel thread: {e}"),
            })?;
            let _active = pool.activate();
            let bound = program.bind(&bufs);
            let mut seeds = Vec::new();
            for i in 0..m.seeds.len() {
                program
                    .prepare(&bufs, i)
                    .map_err(|e| Failure { kind: FailureKind::RuntimeError, evidence: e.to_string() })?;
                // SAFETY: this build runs kernels in-process by design (see the module notes
                // and the report's log); no slice of `bufs` is live; this thread has the
                // kernel stack.
                unsafe { bound.execute() };
                seeds.push(program.check(view, i, &bufs));
            }
            Ok(seeds)
        };
        std::thread::Builder::new()
            .name("ekb-kernel-0".into())
            .stack_size(kernel_stack)
            .spawn_scoped(s, run)
            .map(|h| h.join())
    });
    match outcome {
        Ok(Ok(Ok(seeds))) => report.seeds = seeds,
        Ok(Ok(Err(failure))) => report.failure = Some(failure),
        // A panic in the runtime's own code on the kernel thread.
        Ok(Err(_)) => {
            return Err(RunError { kind: ErrorKind::Internal, message: "the kernel thread panicked".into() })
        }
        Err(e) => {
            return Err(RunError {
                kind: ErrorKind::Internal,
                message: format!("cannot start the kernel thread: {e}"),
            })
        }
    }
    let guards = bufs.check_guards();
    if let Some(g) = guards.first() {
        report.failure.get_or_insert(Failure {
            kind: FailureKind::Memory(MemoryFault::GuardCorruption { buffer: g.buffer.clone() }),
            evidence: format!(
                "{} byte(s) around buffer `{}` were overwritten, the first at offset {} from its start",
                g.hit.bytes, g.buffer, g.hit.offset
            ),
        });
    }
    if report.failure.is_none() {
        report.failure = first_mismatch(&report.seeds);
    }
    report.memory.max_rss_bytes = max_rss_bytes();
    Ok(report)
}

/// The first output outside the tolerance, as a correctness failure.
fn first_mismatch(seeds: &[SeedCheck]) -> Option<Failure> {
    seeds.iter().find_map(|s| {
        let o = s.outputs.iter().find(|o| !o.ok)?;
        Some(Failure {
            kind: FailureKind::Correctness,
            evidence: format!(
                "seed {}: output `{}` has {} element(s) outside the tolerance, the first at index {} \
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
