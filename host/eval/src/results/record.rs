//! The records of an evaluation run as they are stored: `run.json` ([`RunInfo`]: what was
//! evaluated, where, with what) and one line of `results.jsonl` per evaluated candidate
//! ([`CandidateResult`]).
//!
//! What must stay true: a run directory alone is enough to recompute every metric (the planned
//! instances, every candidate's text and outcome, the raw timing samples, the devices and tool
//! versions); fields are only ever added, with serde defaults, so older runs stay readable.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The version of this record format, written into `run.json`.
pub const RESULTS_FORMAT: u32 = 1;

/// `run.json`: the run's plan and its environment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunInfo {
    pub format: u32,
    /// When the run was created, `YYYY-MM-DDTHH:MM:SSZ`.
    pub created: String,
    pub ekb_version: String,
    /// The command line that created the run.
    pub command: Vec<String>,
    /// Where candidates come from: `builtin:default` (the built-in default schedule) or the
    /// folder `ekb generate` wrote.
    pub candidates: String,
    /// What every candidate is timed against: `naive`, `default`, ...
    pub baseline: String,
    /// Candidates per instance that the run evaluates (the largest k of Compile@k).
    pub samples: u32,
    /// The seeds every candidate's correctness is checked on.
    pub seeds: Vec<u64>,
    /// Timing settings, as given to the runtime.
    pub timing: TimingSettings,
    /// Per backend (`cpu`, `cuda`, `opencl`): the target profile and the device.
    pub backends: BTreeMap<String, BackendEnv>,
    /// Tool names and versions (`clang`, `ekb-rt`, ...).
    pub tools: BTreeMap<String, String>,
    /// Every instance the run means to evaluate, in order; an instance without results counts
    /// as failed in every metric.
    pub instances: Vec<Instance>,
}

/// The timing settings of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TimingSettings {
    /// Samples are taken with caches flushed between them (cold) or not (warm).
    pub cold_cache: bool,
    /// Target relative standard error of the median ratio.
    pub target_rse: f64,
    /// A pair whose median ratio's interval is wider than +- this fraction of the median is
    /// unstable (0 in runs stored before the rule judged the ratio rather than each side).
    #[serde(default)]
    pub max_ci: f64,
    /// Time budget per pair, seconds.
    pub budget_s: f64,
    /// The limit of one execution, seconds; longer is a timeout.
    #[serde(default)]
    pub timeout_s: f64,
    pub threads: Option<u32>,
}

/// Where one backend's candidates run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BackendEnv {
    /// The target profile's name.
    pub target: String,
    /// The device as the transport names it (`local`, `qemu`, `ssh://…`).
    pub device: String,
    pub runtime: String,
    pub runtime_version: String,
    pub arch: String,
    pub cpu_model: String,
    pub cores: u32,
    pub memory_bytes: u64,
    /// The GPU a GPU backend's candidates ran on, as its driver names it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu: Option<String>,
}

/// One (task, backend) pair of the suite.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Instance {
    pub task: String,
    /// `cpu`, `cuda` or `opencl`.
    pub backend: String,
    pub level: u8,
    /// The domain of this backend: `mobile`, `robotics` or `aiot`.
    pub domain: String,
    pub family: String,
}

/// What identifies a result in a run: (task, backend, sample).
pub type ResultKey = (String, String, u32);

/// One line of `results.jsonl`: one candidate of one instance, evaluated.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CandidateResult {
    pub instance: Instance,
    /// The candidate's index among the instance's samples (0-based).
    pub sample: u32,
    pub candidate: CandidateText,
    /// Parsed, verified, lowered, compiled and loaded by the runtime.
    pub compiled: bool,
    /// Every output matched the reference on every seed.
    pub correct: bool,
    /// Why the candidate failed, when it did. A correct candidate whose timing never became
    /// stable carries [`FailureClass::UnstableTiming`]: correct, but not counted as fast.
    pub failure: Option<FailureRecord>,
    /// The paired timing against the baseline; absent when either side could not be timed.
    pub timing: Option<PairedTiming>,
    /// Why the baseline could not be run or timed on this instance (then the candidate has no
    /// speedup, whatever it did).
    pub baseline_failure: Option<String>,
    pub memory: Option<MemoryRecord>,
    /// What the graph passes did to the candidate: its kernels and planned peak as compiled and
    /// without the passes; absent for a candidate compiled from an L1 module (no graph to pass
    /// over), one that did not compile, and runs stored before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub passes: Option<PassesRecord>,
    /// Wall-clock seconds spent on each phase.
    pub seconds: Phases,
    /// When the result was written, `YYYY-MM-DDTHH:MM:SSZ`.
    pub finished: String,
    /// The device that evaluated it: in a run spread over a pool of devices (`ekb worker`),
    /// what splits the results per board; absent in runs stored before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<DeviceIdentity>,
    /// The candidate's median time alone on its device, nanoseconds, where it was timed
    /// without a baseline beside it (a board farm's job, read back by `ekb collect --lava
    /// --into`); absent for a paired timing (`timing`) and in runs stored before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub median_ns: Option<f64>,
}

/// Which device evaluated a candidate, and its state when the result was written. A value that
/// cannot be read (no such file on the device, a remote device) is `unknown`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct DeviceIdentity {
    /// The machine's host name (`ssh://user@HOST` gives HOST, `adb:SERIAL` gives SERIAL).
    pub host: String,
    /// The board's serial number (device tree or DMI), or `unknown`.
    pub serial: String,
    /// The device as the transport names it (`local`, `qemu`, `ssh://...`).
    pub device: String,
    /// The target profile the candidate was built for.
    pub profile: String,
    /// The runtime and its version, as it greeted (`ekb-rt 0.1.0`).
    pub runtime: String,
    /// The hottest thermal zone, degrees Celsius, or `unknown`.
    pub temperature_c: String,
    /// The first CPU's current clock, MHz, or `unknown`.
    pub clock_mhz: String,
}

impl CandidateResult {
    /// The key that identifies this result in a run: resuming skips keys already present.
    pub fn key(&self) -> ResultKey {
        (self.instance.task.clone(), self.instance.backend.clone(), self.sample)
    }

    /// The speedup that counts for Fast@p and the geometric mean: only for a correct candidate
    /// with no failure (unstable timing included) and a successful baseline.
    pub fn counted_speedup(&self) -> Option<f64> {
        match (&self.timing, self.correct, &self.failure, &self.baseline_failure) {
            (Some(t), true, None, None) => Some(t.speedup),
            _ => None,
        }
    }
}

/// The candidate itself.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CandidateText {
    /// `builtin:default`, or the candidate file relative to the candidates folder.
    pub origin: String,
    /// `l0`, `l1`, `c`, `cuda`, `opencl`, or `none` when there was no candidate.
    pub kind: String,
    /// SHA-256 of the text, hex.
    pub sha256: Option<String>,
    pub text: Option<String>,
}

/// The failure taxonomy of the evaluation protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureClass {
    /// Generation produced no candidate (provider error, nothing extractable).
    NoCandidate,
    /// The candidate does not parse or does not verify against the IR (types, shapes, names,
    /// attributes, the task's signature).
    SyntaxApi,
    /// Lowering, the toolchain or the runtime's loader rejected it.
    Compile,
    /// Illegal allocation, capacity, out-of-bounds access, guard corruption, segfault.
    Memory,
    Correctness,
    /// Results changed between runs or thread counts, or a barrier was misused.
    Parallel,
    Timeout,
    UnstableTiming,
    /// Any other runtime failure (a crash by another signal, a launch failure).
    Runtime,
}

impl FailureClass {
    pub const ALL: [FailureClass; 9] = [
        FailureClass::NoCandidate,
        FailureClass::SyntaxApi,
        FailureClass::Compile,
        FailureClass::Memory,
        FailureClass::Correctness,
        FailureClass::Parallel,
        FailureClass::Timeout,
        FailureClass::UnstableTiming,
        FailureClass::Runtime,
    ];

    /// The name used in tables and JSON.
    pub fn name(self) -> &'static str {
        match self {
            FailureClass::NoCandidate => "no_candidate",
            FailureClass::SyntaxApi => "syntax_api",
            FailureClass::Compile => "compile",
            FailureClass::Memory => "memory",
            FailureClass::Correctness => "correctness",
            FailureClass::Parallel => "parallel",
            FailureClass::Timeout => "timeout",
            FailureClass::UnstableTiming => "unstable_timing",
            FailureClass::Runtime => "runtime",
        }
    }
}

/// A classified failure with its evidence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FailureRecord {
    pub class: FailureClass,
    /// The finer kind, e.g. `memory: illegal allocation`, `compile: clang`.
    pub detail: String,
    /// What proves it: the diagnostic, the compiler log, the signal, the legality finding, the
    /// first mismatch.
    pub evidence: String,
}

/// The paired timing of a candidate against the baseline, with every raw sample.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairedTiming {
    /// Median over pairs of baseline time / candidate time.
    pub speedup: f64,
    pub ci_low: f64,
    pub ci_high: f64,
    pub confidence: f64,
    /// Relative standard error of the median ratio.
    pub rse: f64,
    /// The median ratio's interval was within the run's `max_ci` of it.
    pub stable: bool,
    pub attempts: u32,
    /// Why sampling stopped: `target_reached`, `max_samples` or `budget`.
    pub stop: String,
    pub clock: String,
    pub cold_cache: bool,
    pub threads: u32,
    pub baseline: SideTiming,
    pub candidate: SideTiming,
    /// Every pair of every attempt: `[baseline_ns, candidate_ns]`, each the mean of its side's
    /// `reps` executions; against an engine, each round's two medians.
    pub pairs: Vec<[u64; 2]>,
    /// With an engine baseline (`--baseline engine:NAME`): the engine, and how it was timed
    /// (`clock` above is then the candidate's, the runtime's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine: Option<EngineTiming>,
}

/// The engine a candidate was timed against: the engine ran in a process of its own on the
/// machine that ran `ekb eval`, the candidate in the runtime's kernel process, each side timed by
/// its own clock, in rounds of one turn each.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EngineTiming {
    /// As `--baseline engine:NAME` names it (`onnxruntime`, `tvm-tuned:64`, `torch`).
    pub engine: String,
    /// The engine's version (torch's for the torch sides).
    pub version: String,
    /// The engine's intra-op threads (0: not a CPU engine).
    pub threads: u32,
    /// What the engine's samples time and by which clock (`perf_counter_ns around
    /// session.run ...`, CUDA events around a graph replay).
    pub clock: String,
    /// Rounds timed (each one turn of each side).
    pub rounds: u32,
}

/// One side's statistics within a paired timing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SideTiming {
    pub median_ns: f64,
    pub min_ns: f64,
    pub cv: f64,
    /// The robust spread (`Stats::spread` of the protocol), a diagnostic beside the ratio's
    /// interval that decides stability.
    #[serde(default)]
    pub spread: f64,
    /// Executions per sample (the samples are their means; 0 in runs stored before samples
    /// repeated the program).
    #[serde(default)]
    pub reps: u32,
    /// Each plan step's mean time, from the counted executions after the timing (empty in runs
    /// stored before steps were timed): where a program's time goes, for a profiler to read.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<StepTime>,
}

/// One plan step's time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepTime {
    /// The kernel the step launches.
    pub kernel: String,
    /// Mean nanoseconds per execution, by the side's clock.
    pub ns: f64,
}

/// Peak memory of each side, bytes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemoryRecord {
    pub candidate_peak_bytes: u64,
    pub baseline_peak_bytes: Option<u64>,
}

/// The graph passes' effect on one candidate: the program as compiled (after the default
/// passes) and the same program compiled with no pass (lowered and verified only).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PassesRecord {
    pub before: ProgramSize,
    pub after: ProgramSize,
}

/// The size of a compiled program.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProgramSize {
    /// Kernels of the loop program (a fusion group is one kernel).
    pub kernels: usize,
    /// The memory plan's peak (`ekb_ir::l1::arena::Footprint::planned_bytes`): inputs,
    /// parameters, outputs, the temps in one arena and the largest kernel stack, bytes.
    pub planned_peak_bytes: u64,
}

/// Seconds spent per phase of one candidate's evaluation (the baseline's build is counted
/// with the first sample of its instance that a run evaluates).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Phases {
    /// Parse, verify, lower, compile, assemble the payload (reference outputs included).
    pub build: f64,
    /// The part of `build` spent in the C compiler.
    #[serde(default)]
    pub compiler: f64,
    /// Load, run on every seed and time, on the device.
    pub run: f64,
    /// The part of `run` inside timed samples (both sides of every pair, every execution of each):
    /// what the timing budget buys; the rest of `run` is overhead.
    #[serde(default)]
    pub timed: f64,
    /// The part of `build` done while the candidate before it ran on the device (built ahead):
    /// the run's wall time did not wait for it.
    #[serde(default)]
    pub ahead: f64,
}
