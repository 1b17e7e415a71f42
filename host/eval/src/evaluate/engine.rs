//! Engine baselines (`--baseline engine:NAME`, `docs/evaluation.md`): every candidate timed
//! against an inference engine on this machine instead of a payload in the runtime. The CPU
//! engines (onnxruntime, MNN, TVM) are `ekb_onnx::baseline`'s serving helpers, the task's graph
//! exported to ONNX; PyTorch (`torch`, `torch-compile`) is the task's twin in the torch helper
//! ([`super::torch`]) on the CUDA device.
//!
//! Protocol: the engine is started once per instance and its outputs on the run's first seed
//! checked against the reference interpreter (at the engine's baseline tolerance); one that
//! cannot start or is wrong is the instance's baseline failure. A correct candidate is then timed
//! in rounds: in each, one turn of the candidate (a `Run` of its payload in the runtime on the
//! first seed, its samples by the runtime's clock) and one of the engine (runs by the engine
//! process's own clock), the order rotated every round, a pause before each turn. Each round
//! gives the ratio engine median / candidate median; the speedup is the median of the round
//! ratios with their bootstrap interval (`ekb_wire::stats`, as the runtime's paired mode), stable
//! when its half-width is within `max_ci` of it; an unstable one gets as many rounds again, up
//! to the run's attempts, judged over all of its rounds.
//!
//! What must stay true: an engine that is wrong is never timed; the sides are timed in
//! separate processes by different clocks, and the record says which; the engine runs on this
//! machine, so only a local device is accepted.

use super::device::{Answer, DeviceSession};
use super::outcome;
use super::torch::{Helper, TorchSide};
use crate::results::{EngineTiming, FailureClass, FailureRecord, PairedTiming, SideTiming};
use crate::tasks::export::write_io;
use crate::tasks::{Backend, Task};
use ekb_ir::{Diagnostic, TargetProfile};
use ekb_onnx::baseline::{self as bl, BaselineOptions, EngineName, Server, QUIET};
use ekb_wire::protocol::{FailureKind, PairedSettings, PayloadId, RunReport, Timing, TimingOverrides};
use std::time::Duration;

/// An engine a candidate is timed against.
#[derive(Debug, Clone, PartialEq)]
pub enum Engine {
    /// A CPU engine of `ekb_onnx::baseline`.
    Cpu(EngineName),
    /// The task's PyTorch twin on the CUDA device.
    Torch(TorchSide),
}

/// Rounds per attempt.
pub const ROUNDS: usize = 12;
/// The shortest turn of a side.
const MIN_TURN: Duration = Duration::from_millis(5);

impl Engine {
    /// The engine named after `engine:` (`onnxruntime`, `tvm-tuned:64`, `torch`, ...).
    pub fn parse(name: &str) -> Result<Engine, Diagnostic> {
        if let Ok(side) = TorchSide::parse(name) {
            return Ok(Engine::Torch(side));
        }
        if let Ok(e) = EngineName::parse(name) {
            return Ok(Engine::Cpu(e));
        }
        let known = EngineName::SPELLINGS.into_iter().chain(["torch", "torch-compile"]);
        let mut d = Diagnostic::error(format!("unknown engine `{name}` in `--baseline engine:{name}`"))
            .with_expected(
                "onnxruntime, mnn, tvm or tvm-tuned:TRIALS (TRIALS >= 1) for CPU instances; torch or torch-compile for CUDA instances",
            );
        d.hint = ekb_ir::diag::did_you_mean(name, known);
        Err(d)
    }

    /// The name `parse` reads back.
    pub fn name(&self) -> String {
        match self {
            Engine::Cpu(e) => e.name(),
            Engine::Torch(s) => s.label().into(),
        }
    }

    /// The backend whose instances this engine can be compared with.
    pub fn backend(&self) -> Backend {
        match self {
            Engine::Cpu(_) => Backend::Cpu,
            Engine::Torch(_) => Backend::Cuda,
        }
    }

    /// An error unless this engine can be the baseline of `backend`'s instances on `device`.
    pub fn check(&self, backend: Backend, device: &str) -> Result<(), Diagnostic> {
        let name = self.name();
        if backend != self.backend() {
            let (runs_on, instead) = match self {
                Engine::Cpu(_) => ("this machine's CPU", "engine:torch or engine:torch-compile"),
                Engine::Torch(_) => ("a CUDA GPU", "engine:onnxruntime, engine:mnn or engine:tvm"),
            };
            let hint = match backend {
                Backend::Opencl => {
                    "no engine baseline exists for OpenCL instances; use naive or default".to_string()
                }
                _ => format!("for {} instances use {instead}", backend.name()),
            };
            return Err(Diagnostic::error(format!(
                "`--baseline engine:{name}` cannot time the {} instances: {name} runs on {runs_on}",
                backend.name()
            ))
            .with_hint(hint));
        }
        if device != "local" {
            return Err(Diagnostic::error(format!(
                "`--baseline engine:{name}` needs the candidates on this machine, not on `{device}`: the engine runs on this machine only, so the two sides would not share a device"
            ))
            .with_hint("run `ekb eval` on the device itself with `--device local`, or use a schedule baseline (naive, default) on a remote device"));
        }
        Ok(())
    }
}

/// The engine's side of a run: what is started once for the whole run.
pub enum EngineHost {
    /// A CPU engine: the engine as `ekb_onnx` runs it, and its thread count.
    Cpu { name: EngineName, engine: bl::Engine, threads: u32 },
    /// The torch helper, with torch and the CUDA context loaded.
    Torch { side: TorchSide, helper: Option<Helper> },
}

impl EngineHost {
    /// The engine's name and version, for the run's tools.
    pub fn version(&self) -> Result<(String, String), String> {
        match self {
            EngineHost::Cpu { name, engine, .. } => Ok((name.label(), bl::engine_version(engine)?)),
            EngineHost::Torch { helper, .. } => {
                let torch = helper.as_ref().and_then(|h| h.ready.torch.clone());
                Ok(("torch".into(), torch.ok_or("the torch helper did not say its version")?))
            }
        }
    }

    /// Checks that the engine is installed (the error says how to install it) and starts what
    /// lives for the whole run; `threads` are the candidate's.
    pub fn start(engine: &Engine, host: &TargetProfile, threads: u32) -> Result<EngineHost, Diagnostic> {
        let not_here = |why: String| {
            Diagnostic::error(format!("the baseline engine {} cannot run here: {why}", engine.name()))
        };
        match engine {
            Engine::Cpu(name) => {
                let e = name.engine(host).map_err(not_here)?;
                bl::require_engine(&e).map_err(|why| {
                    not_here(why).with_hint("`toolchains/setup.sh --baselines` installs every engine")
                })?;
                Ok(EngineHost::Cpu { name: name.clone(), engine: e, threads })
            }
            Engine::Torch(side) => {
                let helper = Helper::start().map_err(not_here)?;
                Ok(EngineHost::Torch { side: *side, helper: Some(helper) })
            }
        }
    }

    /// Starts the engine on one instance and checks its outputs on `seed` against `reference`;
    /// the error is the instance's baseline failure.
    pub fn instance(
        &mut self,
        task: &Task,
        seed: u64,
        reference: &[ekb_ir::tensor::Tensor],
    ) -> Result<Loaded, String> {
        let work = tempfile::tempdir().map_err(|e| format!("cannot make a temporary directory: {e}"))?;
        match self {
            EngineHost::Cpu { name, engine, threads } => {
                let opts = BaselineOptions { seed, warmup: 3, samples: 3, threads: *threads };
                let (b, server) = bl::serve(&task.graph, engine, opts, work.path())
                    .map_err(|e| format!("{} cannot run the task: {e}", name.label()))?;
                if let Some(m) = b.mismatches.first() {
                    return Err(format!(
                        "{} {}'s outputs differ from the reference on seed {seed} (atol {:e}, rtol {:e}): {m}",
                        name.label(),
                        b.engine_version,
                        b.tolerance.atol,
                        b.tolerance.rtol
                    ));
                }
                Ok(Loaded {
                    record: EngineTiming {
                        engine: name.name(),
                        version: b.engine_version,
                        threads: b.threads,
                        clock: b.timing.clock,
                        rounds: 0,
                    },
                    per_run: Duration::from_nanos(b.timing.stats.median_ns as u64),
                    runner: Runner::Server(server),
                    _work: work,
                })
            }
            EngineHost::Torch { side, helper } => {
                let h = helper.as_mut().ok_or("the torch helper is not running")?;
                if !task.twin.is_file() {
                    return Err(format!("the task has no PyTorch twin `{}`", task.twin.display()));
                }
                write_io(task, seed, reference, work.path())?;
                let version = h.ready.torch.clone().unwrap_or_default();
                let loaded = match h.load(work.path(), &[*side]) {
                    Ok(l) => l,
                    Err(e) => {
                        // A helper that died is started again for the next instance.
                        *helper = Helper::start().ok();
                        return Err(e);
                    }
                };
                let l = &loaded[0];
                if let Some(why) = l.unavailable.as_ref().or(l.mismatch.as_ref()) {
                    return Err(format!("{}: {why}", side.label()));
                }
                Ok(Loaded {
                    record: EngineTiming {
                        engine: side.label().into(),
                        version,
                        threads: 0,
                        clock: "cuda-events around each replay of the twin's CUDA graph".into(),
                        rounds: 0,
                    },
                    per_run: Duration::from_nanos(l.per_run_ns.unwrap_or(0.0).max(0.0) as u64),
                    runner: Runner::Torch(*side),
                    _work: work,
                })
            }
        }
    }

    /// Frees what the instance loaded (the torch helper keeps running).
    pub fn end_instance(&mut self, loaded: Option<Loaded>) {
        drop(loaded);
        if let EngineHost::Torch { helper, .. } = self {
            if let Some(h) = helper.as_mut() {
                if h.drop_task().is_err() {
                    *helper = Helper::start().ok();
                }
            }
        }
    }

    /// One turn of the engine: runs filling about `budget`, each one's nanoseconds.
    fn turn(&mut self, loaded: &mut Loaded, budget: Duration) -> Result<Vec<u64>, String> {
        let n = (budget.as_secs_f64() / loaded.per_run.as_secs_f64().max(1e-7)).clamp(3.0, 10_000.0) as u32;
        match (&mut loaded.runner, self) {
            (Runner::Server(s), _) => s.time(n),
            (Runner::Torch(side), EngineHost::Torch { helper: Some(h), .. }) => h.time(*side, n),
            (Runner::Torch(_), _) => Err("the torch helper is not running".into()),
        }
    }
}

/// An engine loaded with one instance.
pub struct Loaded {
    /// The engine's record (rounds still 0).
    pub record: EngineTiming,
    per_run: Duration,
    runner: Runner,
    /// The model and inputs stay where the engine loaded them from while it serves.
    _work: tempfile::TempDir,
}

enum Runner {
    Server(Server),
    Torch(TorchSide),
}

/// Why a runtime turn gave no samples.
#[derive(Debug)]
pub enum Timed {
    /// The outputs differ from the reference (the runtime checks them in every run).
    Wrong(String),
    /// Another failure the runtime classified (memory, timeout, a crash), as the record has it.
    Failure(FailureRecord),
    /// The runtime did not serve the request.
    Failed(String),
}

impl Timed {
    /// What went wrong, in words.
    pub fn describe(&self) -> String {
        match self {
            Timed::Wrong(w) => format!("wrong outputs: {w}"),
            Timed::Failure(r) => format!("{}: {}", r.detail, r.evidence),
            Timed::Failed(f) => f.clone(),
        }
    }

    /// The candidate's failure record, its evidence saying where it happened.
    pub fn record(self, during: &str) -> FailureRecord {
        match self {
            Timed::Wrong(w) => FailureRecord {
                class: FailureClass::Correctness,
                detail: FailureKind::Correctness.to_string(),
                evidence: format!("in {during}: {w}"),
            },
            Timed::Failure(mut r) => {
                r.evidence = format!("in {during}: {}", r.evidence);
                r
            }
            Timed::Failed(f) => FailureRecord {
                class: FailureClass::Runtime,
                detail: "runtime error".into(),
                evidence: format!("in {during}: {f}"),
            },
        }
    }
}

/// What stopped a timed comparison: the engine (a baseline failure), or the candidate.
#[derive(Debug)]
pub enum Stopped {
    Engine(String),
    Candidate(FailureRecord),
}

/// A candidate's kernel process kept by the runtime between its timed turns (`Hold`): its
/// seeds checked once, then every turn times the same process, so that the rounds against an
/// engine differ only in when they ran, not in where the candidate's memory landed.
pub struct HeldCandidate {
    id: PayloadId,
}

impl HeldCandidate {
    /// What the hold of a candidate asks of the runtime: the warm-up of a turn (the checks are
    /// every seed of the payload).
    const TIMING: TimingOverrides = TimingOverrides {
        warmup: Some(3),
        min_samples: None,
        max_samples: None,
        target_rse: None,
        budget_ms: None,
        cold_cache: Some(false),
    };

    /// Starts the candidate's kernel process and checks every seed of its payload: the
    /// runtime's report of those checks, and the hold when they passed (a report with a failure
    /// holds nothing).
    pub fn start(
        session: &mut DeviceSession,
        id: PayloadId,
        threads: Option<u32>,
    ) -> Answer<(RunReport, Option<HeldCandidate>)> {
        match session.hold(id, None, Self::TIMING, threads) {
            Answer::Ok(report) => {
                let held = report.failure.is_none().then_some(HeldCandidate { id });
                Answer::Ok((report, held))
            }
            Answer::Refused { kind, message } => Answer::Refused { kind, message },
            Answer::Lost(l) => Answer::Lost(l),
            Answer::Down(d) => Answer::Down(d),
        }
    }

    /// As [`HeldCandidate::start`], the checks judged: the hold, or why there is none.
    pub fn hold(
        session: &mut DeviceSession,
        id: PayloadId,
        threads: Option<u32>,
    ) -> Result<HeldCandidate, Timed> {
        judge(session.hold(id, None, Self::TIMING, threads))?;
        Ok(HeldCandidate { id })
    }

    /// One timed turn of about `budget` (never stopping early): its timing. A failure ends
    /// the hold.
    pub fn turn(&mut self, session: &mut DeviceSession, budget: Duration) -> Result<Timing, Timed> {
        let report = judge(session.turn(self.id, budget.as_millis().max(1) as u64))?;
        match report.timing {
            Some(t) if !t.samples_ns.is_empty() => Ok(t),
            _ => Err(Timed::Failed("the turn returned no timing samples".into())),
        }
    }

    /// The last checks (outputs, guards, inputs) and the end of the kernel process.
    pub fn release(self, session: &mut DeviceSession) -> Result<(), Timed> {
        judge(session.release(self.id)).map(drop)
    }
}

/// A held run's answer as the candidate's verdict: the report, unless it failed.
fn judge(answer: Answer<RunReport>) -> Result<RunReport, Timed> {
    let report = match answer {
        Answer::Ok(r) => r,
        Answer::Refused { kind, message } => {
            return Err(Timed::Failed(format!("the runtime refused ({kind}): {message}")))
        }
        Answer::Lost(l) => return Err(Timed::Failed(format!("the runtime stopped: {}", l.0))),
        Answer::Down(d) => return Err(Timed::Failed(d.to_string())),
    };
    match &report.failure {
        Some(f) if f.kind == FailureKind::Correctness => Err(Timed::Wrong(f.evidence.clone())),
        Some(f) => Err(Timed::Failure(outcome::record_of(&report, f))),
        None if !report.seeds.iter().all(|s| s.ok()) || report.seeds.is_empty() => {
            Err(Timed::Wrong("the runtime checked no output".into()))
        }
        None => Ok(report),
    }
}

/// The timing of a correct, held candidate against a loaded engine: rounds of one turn each,
/// rotated, per the module's protocol; the hold is released after them. The per-side samples
/// come back in `timed_ns` (for the record of where the time went). `Err` when a turn failed:
/// which side stopped it and why.
pub fn time_against(
    session: &mut DeviceSession,
    mut held: HeldCandidate,
    (host, loaded): (&mut EngineHost, &mut Loaded),
    settings: &PairedSettings,
    budget: Duration,
    timed_ns: &mut f64,
) -> Result<PairedTiming, Stopped> {
    let rounds = rounds(session, &mut held, (host, loaded), settings, budget, timed_ns);
    // The hold ends in every case; its last checks judge the candidate only when the rounds ran.
    let released =
        held.release(session).map_err(|e| Stopped::Candidate(e.record("the checks after its turns")));
    let (rounds, reps, clock) = rounds?;
    released?;
    let ratio = round_ratio(&rounds, settings);
    let stable = relative_half_width(&ratio) <= settings.max_ci;
    let side = |k: usize, reps: u32| {
        let all: Vec<u64> = rounds.iter().flat_map(|r| r[k].iter().map(|&x| x as u64)).collect();
        let s = ekb_wire::stats::summarize(&all);
        SideTiming {
            median_ns: s.median_ns,
            min_ns: s.min_ns,
            cv: s.cv,
            spread: s.spread(),
            reps,
            steps: Vec::new(),
        }
    };
    let pairs = rounds.iter().map(|r| [median(&r[0]) as u64, median(&r[1]) as u64]).collect();
    Ok(PairedTiming {
        speedup: ratio.0,
        ci_low: ratio.2,
        ci_high: ratio.3,
        confidence: settings.confidence,
        rse: ratio.1,
        stable,
        attempts: (rounds.len() / ROUNDS) as u32,
        stop: "rounds".into(),
        clock,
        cold_cache: false,
        threads: settings.threads.unwrap_or(0),
        baseline: side(0, 1),
        candidate: side(1, reps),
        pairs,
        engine: Some(EngineTiming { rounds: rounds.len() as u32, ..loaded.record.clone() }),
    })
}

/// Rounds of [`ROUNDS`] until the ratio's interval is narrow enough or the attempts run out:
/// each round's samples of the engine (0) and the candidate (1), the candidate's executions per
/// sample and its clock.
type Rounds = (Vec<[Vec<f64>; 2]>, u32, String);

fn rounds(
    session: &mut DeviceSession,
    held: &mut HeldCandidate,
    (host, loaded): (&mut EngineHost, &mut Loaded),
    settings: &PairedSettings,
    budget: Duration,
    timed_ns: &mut f64,
) -> Result<Rounds, Stopped> {
    let turn = (budget / (2 * ROUNDS as u32)).max(MIN_TURN);
    let mut rounds: Vec<[Vec<f64>; 2]> = Vec::new();
    let (mut reps, mut clock) = (1, String::new());
    for attempt in 1..=settings.attempts.max(1) {
        for _ in 0..ROUNDS {
            let r = rounds.len() as u64 + settings.order_seed;
            let mut got: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
            for side in [r % 2, (r + 1) % 2] {
                if side == 0 {
                    let s = host
                        .turn(loaded, turn)
                        .map_err(|e| Stopped::Engine(format!("a timed run of the engine failed: {e}")))?;
                    *timed_ns += s.iter().sum::<u64>() as f64;
                    got[0] = s.into_iter().map(|ns| ns as f64).collect();
                } else {
                    // The engine's threads may spin for a while after its turn.
                    std::thread::sleep(QUIET);
                    let t =
                        held.turn(session, turn).map_err(|e| Stopped::Candidate(e.record("a timed turn")))?;
                    (reps, clock) = (t.reps.max(1), t.clock);
                    *timed_ns += t.samples_ns.iter().sum::<u64>() as f64 * f64::from(reps);
                    got[1] = t.samples_ns.into_iter().map(|ns| ns as f64).collect();
                }
            }
            rounds.push(got);
        }
        if relative_half_width(&round_ratio(&rounds, settings)) <= settings.max_ci
            || attempt >= settings.attempts
        {
            break;
        }
    }
    Ok((rounds, reps, clock))
}

/// The median of samples (NaN for none).
fn median(x: &[f64]) -> f64 {
    let mut v = x.to_vec();
    v.sort_by(f64::total_cmp);
    ekb_wire::stats::quantile(&v, 0.5)
}

/// (median, rse, low, high) of the rounds' ratios engine median / candidate median.
fn round_ratio(rounds: &[[Vec<f64>; 2]], s: &PairedSettings) -> (f64, f64, f64, f64) {
    let ratios: Vec<f64> = rounds.iter().map(|r| median(&r[0]) / median(&r[1])).collect();
    ekb_wire::stats::ratio_stats(&ratios, s.bootstrap_resamples, s.confidence, s.order_seed)
}

/// Half the width of the interval over its median (infinite for no positive median).
fn relative_half_width(&(median, _, low, high): &(f64, f64, f64, f64)) -> f64 {
    if median > 0.0 && low.is_finite() && high.is_finite() {
        (high - low) / 2.0 / median
    } else {
        f64::INFINITY
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn engine_names_parse_and_read_back() {
        for name in ["onnxruntime", "mnn", "tvm", "tvm-tuned:64", "torch", "torch-compile"] {
            assert_eq!(Engine::parse(name).unwrap().name(), name);
        }
        assert_eq!(Engine::parse("torch").unwrap(), Engine::Torch(TorchSide::Eager));
        assert_eq!(Engine::parse("ort").unwrap(), Engine::Cpu(EngineName::Onnxruntime));
        let d = Engine::parse("onnxruntme").unwrap_err().to_string();
        assert!(
            d.contains("unknown engine `onnxruntme`") && d.contains("did you mean `onnxruntime`?"),
            "{d}"
        );
        let d = Engine::parse("torch-compiled").unwrap_err().to_string();
        assert!(d.contains("did you mean `torch-compile`?"), "{d}");
        let d = Engine::parse("tvm-tuned:0").unwrap_err().to_string();
        assert!(d.contains("TRIALS >= 1"), "{d}");
    }

    #[test]
    fn each_engine_takes_its_own_backend_on_this_machine_only() {
        let ort = Engine::Cpu(EngineName::Onnxruntime);
        let torch = Engine::Torch(TorchSide::Compile);
        assert!(ort.check(Backend::Cpu, "local").is_ok());
        assert!(torch.check(Backend::Cuda, "local").is_ok());
        let d = torch.check(Backend::Cpu, "local").unwrap_err().to_string();
        assert!(d.contains("cannot time the cpu instances: torch-compile runs on a CUDA GPU"), "{d}");
        assert!(d.contains("engine:onnxruntime"), "{d}");
        let d = ort.check(Backend::Cuda, "local").unwrap_err().to_string();
        assert!(d.contains("onnxruntime runs on this machine's CPU") && d.contains("engine:torch"), "{d}");
        let d = ort.check(Backend::Opencl, "local").unwrap_err().to_string();
        assert!(d.contains("no engine baseline exists for OpenCL"), "{d}");
        for remote in ["ssh://me@board", "qemu", "adb"] {
            for (e, b) in [(&ort, Backend::Cpu), (&torch, Backend::Cuda)] {
                let d = e.check(b, remote).unwrap_err().to_string();
                assert!(d.contains("the engine runs on this machine only") && d.contains(remote), "{d}");
            }
        }
    }

    #[test]
    fn the_speedup_is_the_median_round_ratio_and_its_interval_decides_stability() {
        // Engine medians 2, 4, 6 over candidate medians 1, 2, 3: every round's ratio is 2.
        let rounds: Vec<[Vec<f64>; 2]> =
            (1..=3).map(|k| [vec![2.0 * k as f64, 2.0 * k as f64], vec![k as f64, k as f64]]).collect();
        let s = PairedSettings::DEFAULT;
        let r = round_ratio(&rounds, &s);
        assert_eq!((r.0, r.2, r.3), (2.0, 2.0, 2.0));
        assert_eq!(relative_half_width(&r), 0.0);
        // Ratios 1, 2, 3: median 2, an interval reaching both ends.
        let spread: Vec<[Vec<f64>; 2]> = (1..=3).map(|k| [vec![k as f64], vec![1.0]]).collect();
        let r = round_ratio(&spread, &s);
        assert_eq!(r.0, 2.0);
        assert!(relative_half_width(&r) > s.max_ci, "{r:?}");
        assert_eq!(relative_half_width(&(0.0, 0.0, 0.0, 0.0)), f64::INFINITY);
    }
}
