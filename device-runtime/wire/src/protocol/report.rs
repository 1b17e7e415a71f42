//! Run reports: what a board measured and found, exactly as the evaluation stores it.
//!
//! What it must keep true: a report holds the raw evidence (every timing sample, every
//! counter's total and how many runs it covers, every allocation's verdict) so the statistics
//! can be recomputed from it; nothing is summarised away. Unavailable measurements say so with
//! a reason, never as zero. The same versioning rule as the messages applies (append-only
//! enums; a field change is a new protocol version).

use super::message::PayloadId;
use crate::payload::{Backend, MemScope};
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;
use serde::{Deserialize, Serialize};

/// The result of running one payload (all its seeds, then timing).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunReport {
    pub payload: PayloadId,
    pub task: String,
    pub target: String,
    pub backend: Backend,
    /// Worker threads the kernels ran with.
    pub threads: u32,
    /// One entry per seed run, in order.
    pub seeds: Vec<SeedCheck>,
    /// Absent when the run failed before it could be timed.
    pub timing: Option<Timing>,
    pub counters: Vec<Counter>,
    pub memory: MemoryReport,
    /// The first failure, classified; `None` when every seed passed and timing completed.
    pub failure: Option<Failure>,
    /// The runtime's log for this run.
    pub log: Vec<LogLine>,
}

impl RunReport {
    /// Every seed ran, every output matched, and nothing failed.
    pub fn is_correct(&self) -> bool {
        self.failure.is_none() && !self.seeds.is_empty() && self.seeds.iter().all(SeedCheck::ok)
    }
}

/// The outputs of one seed compared with their expected values.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SeedCheck {
    /// The seed value (not its index).
    pub seed: u64,
    pub outputs: Vec<OutputCheck>,
}

impl SeedCheck {
    pub fn ok(&self) -> bool {
        self.outputs.iter().all(|o| o.ok)
    }
}

/// One output under one seed. Errors are over all elements; a NaN or infinity where the
/// expected value is finite counts as a mismatch with infinite error.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OutputCheck {
    pub buffer: String,
    pub ok: bool,
    /// `max |out - ref|`.
    pub max_abs_err: f64,
    /// `max |out - ref| / |ref|` over elements with `ref != 0`.
    pub max_rel_err: f64,
    /// Row-major index of the first element outside the tolerance.
    pub first_mismatch: Option<u64>,
    /// Number of elements outside the tolerance.
    pub mismatches: u64,
}

/// Why sampling stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum StopReason {
    /// The relative standard error reached the target.
    TargetReached,
    MaxSamples,
    /// The time budget ran out.
    Budget,
}

/// Timing of one payload: the raw samples and their statistics.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Timing {
    /// One sample per entry, in the order taken: the mean time of one whole program execution
    /// over the sample's `reps` executions, in nanoseconds.
    pub samples_ns: Vec<u64>,
    /// Executions per sample, each poisoned and timed alone: enough that a sample lasts at
    /// least the runtime's minimum sample time (calibrated from the warm-up; 1 for a program
    /// slower than that).
    pub reps: u32,
    pub warmup: u32,
    pub cold_cache: bool,
    /// The clock (`CLOCK_MONOTONIC_RAW`, `cuda-events`, `opencl-profiling`).
    pub clock: String,
    pub stop: StopReason,
    pub stats: Stats,
}

/// Statistics of samples in nanoseconds. Percentiles by linear interpolation between order
/// statistics; `cv` = sample standard deviation / mean; `rse` = relative standard error of the
/// median.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Stats {
    pub median_ns: f64,
    pub min_ns: f64,
    pub mean_ns: f64,
    pub p10_ns: f64,
    pub p90_ns: f64,
    pub cv: f64,
    pub rse: f64,
}

impl Stats {
    /// `z` of the normal 90th percentile: `p90 - p10` of a normal sample is `2 * Z90` sigmas.
    const Z90: f64 = 1.281_551_565_544_601;

    /// The robust spread that decides whether a timing is stable:
    /// `(p90 - p10) / (2 * 1.2816 * median)`, which equals `cv` for normal samples but ignores the
    /// top and bottom 10%. One preemption of a few milliseconds among hundreds of
    /// sub-millisecond samples drives `cv` far above any sensible limit while the median (what
    /// is reported) does not move; the spread only grows when the bulk of the samples does.
    /// 0 for a median that is not positive.
    pub fn spread(&self) -> f64 {
        if self.median_ns > 0.0 {
            (self.p90_ns - self.p10_ns) / (2.0 * Self::Z90 * self.median_ns)
        } else {
            0.0
        }
    }
}

/// Whether a counter is counted by the PMU or by the kernel, or is a figure of the GPU driver.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum CounterKind {
    Hardware,
    Software,
    /// A GPU kernel's figure from its driver, named `KERNEL: WHAT`: its device time over the
    /// counted runs (`KERNEL (step N): time (CLOCK)`), or a resource the driver reports for it
    /// (`KERNEL: CL_KERNEL_LOCAL_MEM_SIZE`, `KERNEL: CU_FUNC_ATTRIBUTE_NUM_REGS`, ...; `runs` 1).
    Gpu,
    /// One plan step's time summed over the counted runs (`KERNEL (step N): time (CLOCK, ns)`):
    /// a CPU program's steps timed by the CPU's clock in a pass of their own after the counted
    /// runs, a GPU program's launches by the driver's events.
    Step,
}

/// One counter over the timed samples.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Counter {
    pub name: String,
    pub kind: CounterKind,
    pub reading: CounterReading,
}

/// A counter's value, or why there is none.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum CounterReading {
    /// `total` over `runs` program executions; `scaled` when the kernel multiplexed the counter
    /// and the total is extrapolated from the time it was running.
    Counted {
        total: u64,
        runs: u64,
        scaled: bool,
    },
    Unavailable {
        reason: String,
    },
}

/// Bytes allocated in one memory scope.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScopeBytes {
    pub scope: MemScope,
    pub bytes: u64,
}

/// The legality verdict on one allocation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Verdict {
    Legal,
    /// The allocation is not allowed (wrong scope, over a per-scope limit).
    Illegal {
        reason: String,
    },
    /// Allowed, but the board's capacity ran out.
    OverCapacity {
        reason: String,
    },
}

/// One allocation and its verdict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AllocationCheck {
    pub name: String,
    pub bytes: u64,
    pub scope: MemScope,
    /// The limit it was checked against, if the scope has one.
    pub limit_bytes: Option<u64>,
    pub verdict: Verdict,
}

/// Memory of one run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemoryReport {
    pub by_scope: Vec<ScopeBytes>,
    /// The peak bytes of buffers and allocations live at once.
    pub peak_bytes: u64,
    /// The maximum resident set size of the process that ran the kernels, if known.
    pub max_rss_bytes: Option<u64>,
    pub allocations: Vec<AllocationCheck>,
}

/// The memory failures the taxonomy tells apart.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum MemoryFault {
    /// An allocation the target does not permit.
    IllegalAllocation,
    /// A legal allocation beyond the board's capacity (out of memory).
    Capacity,
    /// An access outside every buffer.
    OutOfBounds,
    /// A guard zone around this buffer was overwritten.
    GuardCorruption { buffer: String },
    /// A kernel wrote this read-only input or parameter.
    InputWrite { buffer: String },
    /// A segmentation fault the runtime could not attribute further.
    Segfault,
}

/// The failure classes of the evaluation's taxonomy that a board can observe.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum FailureKind {
    Memory(MemoryFault),
    /// The run exceeded its time limit and was killed.
    Timeout,
    /// The run died of a signal (other than a memory fault).
    Crash {
        signal: i32,
    },
    /// The runtime could not run the kernel (an initialiser error, a launch failure).
    RuntimeError,
    /// An output did not match its expected value.
    Correctness,
    /// Results changed between runs or thread counts.
    Parallel,
    /// The timing never became stable enough to report.
    UnstableTiming,
}

impl FailureKind {
    pub fn name(&self) -> &'static str {
        match self {
            FailureKind::Memory(MemoryFault::IllegalAllocation) => "memory: illegal allocation",
            FailureKind::Memory(MemoryFault::Capacity) => "memory: capacity",
            FailureKind::Memory(MemoryFault::OutOfBounds) => "memory: out of bounds",
            FailureKind::Memory(MemoryFault::GuardCorruption { .. }) => "memory: guard corruption",
            FailureKind::Memory(MemoryFault::InputWrite { .. }) => "memory: input write",
            FailureKind::Memory(MemoryFault::Segfault) => "memory: segfault",
            FailureKind::Timeout => "timeout",
            FailureKind::Crash { .. } => "crash",
            FailureKind::RuntimeError => "runtime error",
            FailureKind::Correctness => "correctness",
            FailureKind::Parallel => "parallel",
            FailureKind::UnstableTiming => "unstable timing",
        }
    }
}

impl fmt::Display for FailureKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())?;
        match self {
            FailureKind::Memory(
                MemoryFault::GuardCorruption { buffer } | MemoryFault::InputWrite { buffer },
            ) => {
                write!(f, " (`{buffer}`)")
            }
            FailureKind::Crash { signal } => write!(f, " (signal {signal})"),
            _ => Ok(()),
        }
    }
}

/// A classified failure with the evidence for it (the signal and faulting address, the
/// mismatching element, the limit that was hit).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Failure {
    pub kind: FailureKind,
    pub evidence: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum LogLevel {
    Debug,
    Info,
    Warn,
    Error,
}

/// One line of the runtime's log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LogLine {
    pub level: LogLevel,
    pub message: String,
}

/// One baseline/candidate pair of samples.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PairSample {
    pub baseline_ns: u64,
    pub candidate_ns: u64,
    /// Which ran first in this pair.
    pub baseline_first: bool,
}

/// The speedup (baseline time / candidate time) of a paired run.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RatioStats {
    /// Median over pairs of `baseline_ns / candidate_ns`.
    pub median: f64,
    /// Bootstrap confidence interval of the median at `confidence`.
    pub ci_low: f64,
    pub ci_high: f64,
    pub confidence: f64,
    /// Relative standard error of the median ratio.
    pub rse: f64,
}

/// The result of a paired run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairedReport {
    /// Each side's correctness, memory, counters and own timing.
    pub baseline: RunReport,
    pub candidate: RunReport,
    /// Every pair of every attempt, in order (each sample the mean of its side's `reps`
    /// executions).
    pub pairs: Vec<PairSample>,
    /// Absent when either side failed.
    pub ratio: Option<RatioStats>,
    /// The median ratio's interval was within `max_ci` of it.
    pub stable: bool,
    /// How many attempts the pairs took (more than 1 after an unstable attempt).
    pub attempts: u32,
    pub stop: StopReason,
}
