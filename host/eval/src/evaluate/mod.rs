//! The evaluation protocol (`docs/evaluation.md`) over a set of instances: for every instance
//! the baseline is built once; every candidate is built (compiles?), loaded next to the
//! baseline in one runtime session, checked on every seed (correct?) and timed against the
//! baseline in alternating pairs (how fast?); the result goes to the run directory before the
//! next candidate starts.
//!
//! Every candidate goes through one [`Evaluator`] (`evaluator.rs`), which `ekb worker` runs too,
//! one job at a time: a pooled run and a local one evaluate the same way.
//!
//! Each backend has its target profile and its device session: CPU instances run on the static
//! runtime, GPU instances (`cuda`, `opencl`) on the GPU runtime, built for the target's GPU and
//! timed against the naive or default GPU schedule.
//!
//! What must stay true: results are appended as they finish and a resumed run skips exactly the
//! (task, backend, sample) keys already stored, so an interrupted run loses at most the
//! candidate in flight and never evaluates one twice; no candidate stops the run: a panic while
//! building one is its `compile` failure, and one the evaluator's process crashed on
//! (`results::inflight`) is recorded as failed when the run resumes, never evaluated again; a
//! resumed run must have been planned with the same candidates, baseline, samples, seeds and
//! instances, or it is refused; nothing is built while something is being timed (on the local
//! device the build would disturb the timing).

pub mod candidate;
pub mod compile;
pub mod device;
pub mod engine;
pub mod evaluator;
pub mod identity;
pub mod outcome;
pub mod passes;
pub mod references;
pub mod selfcheck;
pub mod torch;

use crate::results::inflight::{crashed_result, take_crashed, InFlight, Marker, Stage};
use crate::results::{
    utc_now, BackendEnv, CandidateResult, CandidateText, FailureClass, FailureRecord, Instance, MemoryRecord,
    Phases, ResultKey, Run, RunDir, RunInfo, TimingSettings, RESULTS_FORMAT,
};
use crate::tasks::{Backend, Task};
use candidate::{Candidates, Found};
use device::{Answer, DeviceSession};
use ekb_deploy::references::References;
use ekb_deploy::{BuildOptions, Built};
use ekb_ir::target::GpuApi;
use ekb_ir::{Diagnostic, TargetProfile};
use ekb_lower::Schedule;
use ekb_wire::protocol::{PairedSettings, PayloadId, TimingOverrides};
use engine::HeldCandidate;
pub use evaluator::Evaluator;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::Instant;

/// How to evaluate.
#[derive(Clone)]
pub struct Config {
    pub candidates: Candidates,
    /// What every candidate is timed against.
    pub baseline: Baseline,
    /// Candidates per instance.
    pub samples: u32,
    pub seeds: Vec<u64>,
    /// The timing settings written into every payload.
    pub timing: ekb_wire::payload::TimingSettings,
    /// How pairs are sampled and judged.
    pub paired: PairedSettings,
    /// The target profile of each backend the instances use (a GPU backend's profile has a GPU
    /// of that API).
    pub targets: BTreeMap<Backend, TargetProfile>,
    /// The limit of one execution of either side on the device; longer is a timeout.
    pub exec_timeout: std::time::Duration,
    /// Where the device's runtime pins its kernel threads: `ekb-rt serve` options (`--cpus
    /// LIST`, `--big-cores`), empty for no pinning.
    pub pinning: Vec<String>,
    /// The command line, for the record.
    pub command: Vec<String>,
}

impl Config {
    /// Build options for the payloads of one task, compared at the task's tolerance, whose
    /// reference outputs on the seeds are computed once in this process ([`references`]: every
    /// payload of the instance, and every later batch of it, shares them), when a build first
    /// asks for them or a caller starts them ([`Evaluator`] does, beside the builds; nothing is
    /// timed meanwhile). If the interpreter fails, each build computes them again and reports
    /// the failure located in the task's file.
    fn build_options(&self, task: &Task) -> BuildOptions {
        let (graph, seeds) = (task.graph.clone(), self.seeds.clone());
        BuildOptions {
            schedule: Schedule::Default,
            seeds: self.seeds.clone(),
            timing: self.timing,
            references: Some(References::pending(move || references::on_seeds(&graph, &seeds))),
            tolerance: task.meta.payload_tolerance(),
        }
    }

    /// The arguments of `ekb-rt serve` on the device: the execution limit and the pinning.
    fn serve_args(&self) -> Vec<String> {
        let mut args = vec!["--timeout-ms".to_string(), self.exec_timeout.as_millis().max(1).to_string()];
        args.extend(self.pinning.iter().cloned());
        args
    }

    /// The profile of `backend`; [`evaluate`] checks before it starts that every planned
    /// backend has one.
    fn target(&self, backend: Backend) -> &TargetProfile {
        &self.targets[&backend]
    }

    fn timing_record(&self) -> TimingSettings {
        TimingSettings {
            cold_cache: self.timing.cold_cache,
            target_rse: self.timing.target_rse,
            max_ci: self.paired.max_ci,
            budget_s: self.timing.budget_ms as f64 / 1000.0,
            timeout_s: self.exec_timeout.as_secs_f64(),
            threads: self.paired.threads,
        }
    }
}

/// What every candidate is timed against.
#[derive(Debug, Clone, PartialEq)]
pub enum Baseline {
    /// The task's own graph lowered with this schedule.
    Schedule(Schedule),
    /// Another folder's candidates (sample 0 of each instance), e.g. another model's: a
    /// speedup above 1 means faster than them.
    Candidates(std::path::PathBuf),
    /// An inference engine on this machine, timed in its own process ([`engine`]).
    Engine(engine::Engine),
}

impl Baseline {
    /// `naive`, `default`, `candidates:DIR` or `engine:NAME`.
    pub fn parse(s: &str) -> Result<Baseline, Diagnostic> {
        if let Some(dir) = s.strip_prefix("candidates:") {
            return Ok(Baseline::Candidates(std::path::PathBuf::from(dir)));
        }
        if let Some(name) = s.strip_prefix("engine:") {
            return engine::Engine::parse(name).map(Baseline::Engine);
        }
        Schedule::ALL.into_iter().find(|k| k.name() == s).map(Baseline::Schedule).ok_or_else(|| {
            let mut d = Diagnostic::error(format!("unknown baseline `{s}`")).with_expected(
                "naive, default, candidates:DIR or engine:NAME (engine:onnxruntime, engine:torch, ...)",
            );
            d.hint = ekb_ir::diag::did_you_mean(s, ["naive", "default"]);
            d
        })
    }

    /// `naive`, `default`, `candidates:DIR` or `engine:NAME`: what [`Baseline::parse`] reads.
    pub fn describe(&self) -> String {
        match self {
            Baseline::Schedule(s) => s.name().into(),
            Baseline::Candidates(d) => format!("candidates:{}", d.display()),
            Baseline::Engine(e) => format!("engine:{}", e.name()),
        }
    }

    /// Prepares the baseline of `task` on `backend`: its payload built, or the engine started
    /// on it; an error is what to record as the baseline's failure.
    fn prepare(
        &self,
        task: &Task,
        backend: Backend,
        config: &Config,
        options: &BuildOptions,
        engine_host: Option<&mut engine::EngineHost>,
    ) -> Prepared {
        let render = |ds: Vec<Diagnostic>| ds.iter().map(|d| d.to_string()).collect::<Vec<_>>().join("\n");
        let target = config.target(backend);
        Prepared::Payload(match self {
            Baseline::Schedule(s) => {
                compile::build_baseline(task, *s, backend, target, options).map_err(render)
            }
            Baseline::Candidates(dir) => {
                let found = candidate::find_in_dir(dir, &task.name, backend.name(), 0);
                compile::build_candidate(task, &found, backend, target, options)
                    .map(|c| c.built)
                    .map_err(|(_, f)| format!("the baseline candidate failed ({}): {}", f.detail, f.evidence))
            }
            Baseline::Engine(_) => {
                let host = engine_host.expect("an engine host for an engine baseline");
                let seed = config.seeds[0];
                let reference = match options.references.as_ref().and_then(References::get) {
                    Some(r) => Ok(r[0].clone()),
                    None => ekb_deploy::build::reference_outputs(&task.graph, seed)
                        .map_err(|d| format!("the reference interpreter failed on seed {seed}: {d}")),
                };
                return Prepared::Engine(reference.and_then(|r| host.instance(task, seed, &r)));
            }
        })
    }
}

/// An instance's baseline, ready for its candidates (one at a time, so its size does not matter).
#[allow(clippy::large_enum_variant)]
enum Prepared {
    /// A payload for the runtime, or why there is none.
    Payload(Result<Built, String>),
    /// An engine loaded with the instance, or why it cannot time it.
    Engine(Result<engine::Loaded, String>),
}

/// The device one backend's candidates run on.
pub struct DeviceLink {
    pub transport: Box<dyn ekb_deploy::Transport>,
    /// The device as the user named it (`local`, `qemu`, `ssh://...`).
    pub name: String,
}

/// Hears about progress.
pub trait Observer {
    /// The run starts: `total` candidates planned, `done` of them already stored.
    fn started(&mut self, total: usize, done: usize);
    /// Something worth a line (installation, a restarted runtime).
    fn note(&mut self, line: &str);
    /// One more candidate is stored.
    fn finished(&mut self, result: &CandidateResult);
}

/// The instances of `tasks` on `backends`, in task order.
pub fn instances(tasks: &[&Task], backends: &[Backend]) -> Vec<Instance> {
    let mut out = Vec::new();
    for t in tasks {
        for b in t.meta.backends().into_iter().filter(|b| backends.contains(b)) {
            let domain = t.meta.domains.iter().find(|d| d.backend() == b).map_or("", |d| d.name());
            out.push(Instance {
                task: t.name.clone(),
                backend: b.name().into(),
                level: t.meta.level,
                domain: domain.into(),
                family: t.meta.family.clone(),
            });
        }
    }
    out
}

/// The backend an instance names.
fn backend_of(inst: &Instance) -> Result<Backend, Diagnostic> {
    Backend::ALL.into_iter().find(|b| b.name() == inst.backend).ok_or_else(|| {
        Diagnostic::error(format!("instance {} names an unknown backend `{}`", inst.task, inst.backend))
            .with_expected("cpu, cuda or opencl")
    })
}

/// Evaluates every planned candidate not yet in `out` (created, or continued with `resume`),
/// each backend's on its device in `devices` (one for every backend the instances use).
pub fn evaluate(
    tasks: &[&Task],
    planned: Vec<Instance>,
    config: &Config,
    devices: BTreeMap<Backend, DeviceLink>,
    out: &Path,
    resume: bool,
    observer: &mut dyn Observer,
) -> Result<Run, Diagnostic> {
    let mut used = Vec::new();
    for inst in &planned {
        let b = backend_of(inst)?;
        if !used.contains(&b) {
            used.push(b);
        }
    }
    let mut evaluator = Evaluator::open(config.clone(), devices, &used, observer)?;
    let info = run_info(config, evaluator.envs().clone(), evaluator.tools().clone(), planned);
    let (mut dir, mut done) = open_run(out, &info, resume)?;
    let mut crashed = None;
    if let Some(marker) = take_crashed(dir.dir())? {
        let result = crashed_result(marker);
        if !done.contains(&result.key()) {
            dir.append(&result)?;
            done.insert(result.key());
            crashed = Some(result);
        }
    }
    let total = info.instances.len() * config.samples as usize;
    observer.started(total, done.len());
    if let Some(r) = crashed {
        observer.note(&format!(
            "{} on {} sample {}: the evaluator crashed on it when the run was last going; recorded as failed ({})",
            r.instance.task,
            r.instance.backend,
            r.sample,
            r.failure.as_ref().map_or("", |f| f.detail.as_str())
        ));
    }
    let in_flight = InFlight::open(dir.dir());
    let by_name: BTreeMap<&str, &Task> = tasks.iter().map(|t| (t.name.as_str(), *t)).collect();
    for inst in &info.instances {
        let todo: Vec<u32> = (0..config.samples)
            .filter(|s| !done.contains(&(inst.task.clone(), inst.backend.clone(), *s)))
            .collect();
        if todo.is_empty() {
            continue;
        }
        let task = by_name.get(inst.task.as_str()).ok_or_else(|| {
            Diagnostic::error(format!("the run plans task `{}`, which is not in the task folder", inst.task))
        })?;
        for sample in todo {
            let next = next_candidate(&info.instances, &by_name, &done, config.samples, inst, sample);
            let result = evaluator.candidate(task, inst, sample, &in_flight, next)?;
            dir.append(&result)?;
            in_flight.clear()?;
            observer.finished(&result);
        }
    }
    evaluator.close();
    crate::results::load_run(dir.dir())
}

/// The candidate after sample `sample` of `inst` in the plan's order that the run has still to
/// evaluate, if any.
fn next_candidate<'a>(
    instances: &'a [Instance],
    by_name: &BTreeMap<&str, &'a Task>,
    done: &BTreeSet<ResultKey>,
    samples: u32,
    inst: &Instance,
    sample: u32,
) -> Option<Next<'a>> {
    let at = instances.iter().position(|i| i == inst)?;
    let (i, s) = instances[at..]
        .iter()
        .flat_map(|i| (0..samples).map(move |s| (i, s)))
        .skip_while(|&(i, s)| !(i == inst && s == sample))
        .skip(1)
        .find(|(i, s)| !done.contains(&(i.task.clone(), i.backend.clone(), *s)))?;
    Some(Next { task: by_name.get(i.task.as_str())?, inst: i, sample: s })
}

/// A candidate to build while the current one runs: `Evaluator::candidate`'s look ahead.
#[derive(Clone, Copy)]
pub struct Next<'a> {
    pub task: &'a Task,
    pub inst: &'a Instance,
    pub sample: u32,
}

/// What `run.json` records of a run of `planned` with `config` on the devices of `backends`.
pub fn run_info(
    config: &Config,
    backends: BTreeMap<String, BackendEnv>,
    tools: BTreeMap<String, String>,
    planned: Vec<Instance>,
) -> RunInfo {
    RunInfo {
        format: RESULTS_FORMAT,
        created: utc_now(),
        ekb_version: env!("CARGO_PKG_VERSION").into(),
        command: config.command.clone(),
        candidates: config.candidates.describe(),
        baseline: config.baseline.describe(),
        samples: config.samples,
        seeds: config.seeds.clone(),
        timing: config.timing_record(),
        backends,
        tools,
        instances: planned,
    }
}

/// The run directory `out` for `info`: created, or with `resume` an existing run continued
/// (refused unless it was planned the same), with the keys of the results it already holds.
pub fn open_run(
    out: &Path,
    info: &RunInfo,
    resume: bool,
) -> Result<(RunDir, BTreeSet<ResultKey>), Diagnostic> {
    if resume && out.join(crate::results::RUN_FILE).exists() {
        let (dir, run) = RunDir::resume(out)?;
        same_plan(&run.info, info, out)?;
        Ok((dir, run.done()))
    } else {
        Ok((RunDir::create(out, info)?, BTreeSet::new()))
    }
}

/// An error unless `target` can build `backend`'s instances: a profile, with a GPU of the
/// backend's API for a GPU backend.
fn check_target(backend: Backend, target: Option<&TargetProfile>) -> Result<(), Diagnostic> {
    let Some(target) = target else {
        return Err(Diagnostic::error(format!(
            "no target profile is given for the {} instances",
            backend.name()
        )));
    };
    let api = target.gpu.as_ref().map(|g| g.api);
    let fits = match backend {
        Backend::Cpu => true,
        Backend::Cuda => api == Some(GpuApi::Cuda),
        Backend::Opencl => api == Some(GpuApi::Opencl),
    };
    if fits {
        return Ok(());
    }
    Err(Diagnostic::error(format!(
        "target `{}` cannot build the {} instances: {}",
        target.name,
        backend.name(),
        match api {
            None => "it has no GPU",
            Some(GpuApi::Cuda) => "its GPU runs CUDA",
            Some(GpuApi::Opencl) => "its GPU runs OpenCL",
        }
    ))
    .with_hint(match backend {
        Backend::Cuda => "name a CUDA profile with `--cuda-target` (`h200`, `jetson-orin`)",
        _ => "name an OpenCL profile with `--opencl-target` (`pocl`, `rk3588`)",
    }))
}

/// What the run records about `backend`'s device: the runtime's greeting, and for a GPU
/// backend the GPU the runtime found (a GPU runtime without one cannot run the instances).
fn backend_env(
    session: &mut DeviceSession,
    backend: Backend,
    target: &TargetProfile,
    device: String,
) -> Result<BackendEnv, Diagnostic> {
    let hello = session.hello().clone();
    let gpu = if backend == Backend::Cpu {
        None
    } else {
        let info = match session.device_info() {
            Answer::Ok(info) => info,
            Answer::Refused { message, .. } => {
                return Err(Diagnostic::error(format!(
                    "the runtime on {device} did not describe its device: {message}"
                )))
            }
            Answer::Lost(lost) => {
                return Err(Diagnostic::error(format!(
                    "the runtime on {device} stopped answering: {}",
                    lost.0
                )))
            }
            Answer::Down(d) => return Err(d),
        };
        let want = compile::payload_backend(backend);
        let gpu = info.gpus.iter().find(|g| g.backend == want).ok_or_else(|| {
            Diagnostic::error(format!(
                "the runtime on {device} ({}) finds no {} GPU, so it cannot run the {} instances",
                hello.runtime,
                backend.name(),
                backend.name()
            ))
            .with_hint("`ekb-rt info` on the device lists what it finds and why not")
        })?;
        Some(gpu.name.clone())
    };
    Ok(BackendEnv {
        target: target.name.clone(),
        device,
        runtime: hello.runtime.clone(),
        runtime_version: hello.runtime_version.clone(),
        arch: hello.device.arch.clone(),
        cpu_model: hello.device.cpu_model.clone(),
        cores: hello.device.cores,
        memory_bytes: hello.device.memory_bytes,
        gpu,
    })
}

/// A candidate built, or why it did not build, before it runs.
struct BuiltCandidate {
    marker: Marker,
    found: Found,
    built: Result<compile::Compiled, (Option<&'static str>, FailureRecord)>,
    /// Seconds its build took, and the compiler's share of them.
    build_s: f64,
    compiler_s: f64,
}

/// Builds sample `sample` of `inst` (marked in `in_flight` as building, in its slot for a
/// candidate built `ahead` of its turn). `Err` only for what must stop the run.
#[allow(clippy::too_many_arguments)]
fn build_one(
    task: &Task,
    inst: &Instance,
    backend: Backend,
    sample: u32,
    config: &Config,
    options: &BuildOptions,
    in_flight: &InFlight,
    ahead: bool,
) -> Result<BuiltCandidate, Diagnostic> {
    let t0 = Instant::now();
    let found_dir = match &config.candidates {
        Candidates::Builtin(_) => None,
        Candidates::Dir(dir) => Some(candidate::find_in_dir(dir, &inst.task, &inst.backend, sample)),
    };
    let marker = Marker {
        instance: inst.clone(),
        sample,
        stage: Stage::Build,
        candidate: found_dir.as_ref().map_or_else(
            || CandidateText {
                origin: config.candidates.describe(),
                kind: "none".into(),
                sha256: None,
                text: None,
            },
            |f| f.record("none"),
        ),
        started: utc_now(),
    };
    if ahead {
        in_flight.mark_ahead(&marker)?;
    } else {
        in_flight.mark(&marker)?;
    }
    let (found, built) = match (&config.candidates, found_dir) {
        (Candidates::Builtin(schedule), _) => {
            let target = config.target(backend);
            let built = compile::build_baseline(task, *schedule, backend, target, options);
            let text = built.as_ref().map_or(String::new(), |b| ekb_ir::l1::print::print(&b.module));
            let found = Found::Text { text, origin: config.candidates.describe() };
            let built = built.map(|b| {
                let passes = compile::baseline_passes(task, *schedule, backend, target, &b);
                compile::Compiled { built: b, kind: "l1", passes }
            });
            let built = built.map_err(|ds| {
                let class = FailureClass::Compile;
                let evidence = ds.iter().map(|d| d.to_string()).collect::<Vec<_>>().join("\n");
                (Some("l1"), FailureRecord { class, detail: "compile: builtin schedule".into(), evidence })
            });
            (found, built)
        }
        (Candidates::Dir(_), found) => {
            let found = found.expect("found above for a candidate folder");
            let target = config.target(backend);
            let built = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                compile::build_candidate(task, &found, backend, target, options)
            }))
            .unwrap_or_else(|panic| Err((None, panicked(panic.as_ref()))));
            (found, built)
        }
    };
    if ahead {
        in_flight.ahead_built();
    }
    let build_s = t0.elapsed().as_secs_f64();
    let compiler_s = built.as_ref().map_or(0.0, |c| c.built.compile.duration.as_secs_f64());
    Ok(BuiltCandidate { marker, found, built, build_s, compiler_s })
}

/// Evaluates one built candidate (`baseline_build`: the instance's baseline build, counted with
/// its first candidate). `Err` only for what must stop the run (the device is gone).
#[allow(clippy::too_many_arguments)]
fn one(
    inst: &Instance,
    sample: u32,
    config: &Config,
    candidate: BuiltCandidate,
    (baseline, engine_host): (&mut Prepared, Option<&mut engine::EngineHost>),
    baseline_build: Phases,
    session: &mut DeviceSession,
    loaded: &mut Option<(u64, PayloadId)>,
    in_flight: &InFlight,
) -> Result<CandidateResult, Diagnostic> {
    let BuiltCandidate { mut marker, found, built, build_s, compiler_s } = candidate;
    let first = baseline_build;
    let mut result = CandidateResult {
        instance: inst.clone(),
        sample,
        candidate: found.record("none"),
        compiled: false,
        correct: false,
        failure: None,
        timing: None,
        baseline_failure: None,
        memory: None,
        passes: None,
        seconds: Phases {
            build: build_s + first.build,
            compiler: compiler_s + first.compiler,
            ahead: first.ahead,
            ..Phases::default()
        },
        finished: String::new(),
        device: None,
        median_ns: None,
    };
    let compiled = match built {
        Ok(c) => c,
        Err((kind, failure)) => {
            result.candidate.kind = kind.unwrap_or("none").into();
            result.failure = Some(failure);
            result.finished = utc_now();
            return Ok(result);
        }
    };
    result.candidate.kind = compiled.kind.into();
    result.passes = compiled.passes;
    marker.stage = Stage::Run;
    in_flight.mark(&marker)?;
    let t1 = Instant::now();
    // The baseline, loaded once per instance and runtime generation; `Err` says why there is none.
    let baseline_id: Result<Against, String> = match baseline {
        Prepared::Engine(Err(e)) => Err(format!("the engine cannot time this instance: {e}")),
        Prepared::Engine(Ok(l)) => Ok(Against::Engine(l)),
        Prepared::Payload(b) => match (&*b, *loaded) {
            (Err(e), _) => Err(format!("the baseline does not build: {e}")),
            (Ok(_), Some((generation, id))) if generation == session.generation() => Ok(Against::Payload(id)),
            (Ok(b), _) => match session.load(b.payload.clone()) {
                Answer::Ok(id) => {
                    *loaded = Some((session.generation(), id));
                    Ok(Against::Payload(id))
                }
                Answer::Refused { kind, message } => {
                    Err(format!("the runtime refused the baseline ({kind}): {message}"))
                }
                Answer::Lost(lost) => {
                    Err(format!("the runtime stopped answering while loading it: {}", lost.0))
                }
                Answer::Down(d) => return Err(d),
            },
        },
    };
    let candidate_id = match session.load(compiled.built.payload) {
        Answer::Ok(id) => id,
        Answer::Refused { kind, message } => {
            result.failure = Some(FailureRecord {
                class: FailureClass::Compile,
                detail: "compile: the runtime's loader".into(),
                evidence: format!("{kind}: {message}"),
            });
            result.seconds.run = t1.elapsed().as_secs_f64();
            result.finished = utc_now();
            return Ok(result);
        }
        Answer::Lost(lost) => {
            result.failure = Some(lost_failure(&lost.0));
            result.seconds.run = t1.elapsed().as_secs_f64();
            result.finished = utc_now();
            return Ok(result);
        }
        Answer::Down(d) => return Err(d),
    };
    result.compiled = true;
    let refused = |kind, message: String| FailureRecord {
        class: FailureClass::Runtime,
        detail: "runtime error".into(),
        evidence: format!("the runtime refused the run ({kind}): {message}"),
    };
    match baseline_id {
        Ok(Against::Engine(l)) => {
            let host = engine_host.expect("an engine host for an engine baseline");
            // The hold checks every seed, as a run alone would, and keeps the kernel process
            // for the rounds against the engine.
            let held = match HeldCandidate::start(session, candidate_id, config.paired.threads) {
                Answer::Ok((report, held)) => {
                    (result.correct, result.failure) = outcome::verdict(&report);
                    result.memory = Some(MemoryRecord {
                        candidate_peak_bytes: report.memory.peak_bytes,
                        baseline_peak_bytes: None,
                    });
                    held
                }
                Answer::Refused { kind, message } => {
                    result.failure = Some(refused(kind, message));
                    None
                }
                Answer::Lost(lost) => {
                    result.failure = Some(lost_failure(&lost.0));
                    result.seconds.run = t1.elapsed().as_secs_f64();
                    result.finished = utc_now();
                    return Ok(result);
                }
                Answer::Down(d) => return Err(d),
            };
            if let Some(held) = held.filter(|_| result.correct && result.failure.is_none()) {
                let settings = PairedSettings { order_seed: u64::from(sample), ..config.paired };
                let budget = std::time::Duration::from_millis(config.timing.budget_ms);
                let mut timed_ns = 0.0;
                match engine::time_against(session, held, (host, l), &settings, budget, &mut timed_ns) {
                    Ok(t) => {
                        if !t.stable {
                            result.failure = Some(outcome::unstable(&t));
                        }
                        result.timing = Some(t);
                    }
                    Err(engine::Stopped::Engine(why)) => result.baseline_failure = Some(why),
                    Err(engine::Stopped::Candidate(failure)) => {
                        // As in a run: a candidate that failed after its seeds is not correct.
                        result.correct = false;
                        result.failure = Some(failure);
                    }
                }
                result.seconds.timed = timed_ns / 1e9;
            }
            session.unload(candidate_id);
        }
        Ok(Against::Payload(baseline_id)) => {
            let settings = PairedSettings { order_seed: u64::from(sample), ..config.paired };
            match session.paired(baseline_id, candidate_id, settings) {
                Answer::Ok(report) => {
                    let o = outcome::from_paired(&report);
                    result.correct = o.correct;
                    result.failure = o.failure;
                    result.timing = o.timing;
                    result.baseline_failure = o.baseline_failure;
                    result.memory = Some(o.memory);
                    let reps = |s: &ekb_wire::protocol::RunReport| {
                        s.timing.as_ref().map_or(1.0, |t| f64::from(t.reps.max(1)))
                    };
                    let (rb, rc) = (reps(&report.baseline), reps(&report.candidate));
                    result.seconds.timed = report
                        .pairs
                        .iter()
                        .map(|p| p.baseline_ns as f64 * rb + p.candidate_ns as f64 * rc)
                        .sum::<f64>()
                        / 1e9;
                    session.unload(candidate_id);
                }
                Answer::Refused { kind, message } => {
                    result.failure = Some(refused(kind, message));
                    session.unload(candidate_id);
                }
                Answer::Lost(lost) => result.failure = Some(lost_failure(&lost.0)),
                Answer::Down(d) => return Err(d),
            }
        }
        // Nothing to pair with: the candidate still runs alone, so its correctness is known.
        Err(why) => {
            result.baseline_failure = Some(why);
            if run_alone(session, candidate_id, config, TimingOverrides::default(), &mut result)? {
                session.unload(candidate_id);
            }
        }
    }
    result.seconds.run = t1.elapsed().as_secs_f64();
    result.finished = utc_now();
    Ok(result)
}

/// What a candidate is timed against, once loaded.
enum Against<'a> {
    Payload(PayloadId),
    Engine(&'a mut engine::Loaded),
}

/// Runs a loaded candidate alone on every seed with `timing`: its correctness, failure and
/// memory into `result`. `Ok(false)` when the runtime stopped answering (the candidate is gone
/// with it).
fn run_alone(
    session: &mut DeviceSession,
    candidate_id: PayloadId,
    config: &Config,
    timing: TimingOverrides,
    result: &mut CandidateResult,
) -> Result<bool, Diagnostic> {
    match session.run_with(candidate_id, None, timing, config.paired.threads) {
        Answer::Ok(report) => {
            (result.correct, result.failure) = outcome::verdict(&report);
            result.memory = Some(MemoryRecord {
                candidate_peak_bytes: report.memory.peak_bytes,
                baseline_peak_bytes: None,
            });
            Ok(true)
        }
        Answer::Refused { kind, message } => {
            result.failure = Some(FailureRecord {
                class: FailureClass::Runtime,
                detail: "runtime error".into(),
                evidence: format!("the runtime refused the run ({kind}): {message}"),
            });
            Ok(true)
        }
        Answer::Lost(lost) => {
            result.failure = Some(lost_failure(&lost.0));
            Ok(false)
        }
        Answer::Down(d) => Err(d),
    }
}

/// The failure of a candidate whose build panicked (a bug of the evaluator that this candidate
/// reaches: the run goes on, and the message is the evidence).
fn panicked(payload: &(dyn std::any::Any + Send)) -> FailureRecord {
    let message = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".into());
    FailureRecord {
        class: FailureClass::Compile,
        detail: "compile: the evaluator panicked building it".into(),
        evidence: format!("the evaluator panicked while building this candidate: {message}"),
    }
}

/// A candidate during which the runtime itself stopped answering.
fn lost_failure(evidence: &str) -> FailureRecord {
    FailureRecord {
        class: FailureClass::Runtime,
        detail: "runtime error: the runtime stopped answering".into(),
        evidence: evidence.into(),
    }
}

/// A resumed run must be the same plan.
fn same_plan(stored: &RunInfo, now: &RunInfo, dir: &Path) -> Result<(), Diagnostic> {
    let mut diffs = Vec::new();
    let mut cmp = |what: &str, a: String, b: String| {
        if a != b {
            diffs.push(format!("{what}: stored {a}, now {b}"));
        }
    };
    cmp("candidates", stored.candidates.clone(), now.candidates.clone());
    cmp("baseline", stored.baseline.clone(), now.baseline.clone());
    cmp("samples", stored.samples.to_string(), now.samples.to_string());
    cmp("seeds", format!("{:?}", stored.seeds), format!("{:?}", now.seeds));
    cmp(
        "instances",
        format!("{} planned", stored.instances.len()),
        format!("{} planned", now.instances.len()),
    );
    if diffs.is_empty() && stored.instances != now.instances {
        diffs.push("instances: the same number, but different tasks or backends".into());
    }
    if diffs.is_empty() {
        return Ok(());
    }
    Err(diffs.into_iter().fold(
        Diagnostic::error(format!(
            "the run in `{}` was planned differently; it cannot be resumed",
            dir.display()
        ))
        .with_hint("resume with the options it was started with, or start a new run with another `--out`"),
        |d, n| d.with_note(n),
    ))
}

/// The versions of the tools a run used.
fn tools() -> BTreeMap<String, String> {
    let mut t = BTreeMap::from([("ekb".to_string(), env!("CARGO_PKG_VERSION").to_string())]);
    if let Ok(clang) = ekb_llvm::find_clang() {
        if let Ok(out) = std::process::Command::new(&clang).arg("--version").output() {
            let text = String::from_utf8_lossy(&out.stdout);
            if let Some(first) = text.lines().next() {
                t.insert("clang".into(), first.trim().into());
            }
        }
    }
    t
}
