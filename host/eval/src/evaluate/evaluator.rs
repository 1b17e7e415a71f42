//! One candidate at a time on open device sessions. An [`Evaluator`] holds a runtime session per
//! backend, the engine of an engine baseline, and the baseline of the instance it evaluated
//! last; [`Evaluator::candidate`] evaluates whichever candidate it is given. [`super::evaluate`]
//! runs it over a plan into a run directory; a queue worker (`ekb worker`) runs it over jobs,
//! one candidate each: both go through this one path.
//!
//! What must stay true: an instance's baseline is built (and loaded) once for consecutive
//! candidates of that instance, its build time counted with the first of them; a candidate of
//! another instance first unloads the previous baseline and ends its engine instance; every
//! result names the device that evaluated it ([`identity`](super::identity)); nothing here
//! writes a run directory.

use super::candidate::Candidates;
use super::device::DeviceSession;
use super::{
    backend_of, build_one, check_target, engine, identity, one, tools, Baseline, BuiltCandidate, Config,
    DeviceLink, Next, Observer, Prepared,
};
use crate::results::inflight::InFlight;
use crate::results::{BackendEnv, CandidateResult, Instance, Phases};
use crate::tasks::{Backend, Task};
use ekb_deploy::references::References;
use ekb_deploy::BuildOptions;
use ekb_ir::Diagnostic;
use ekb_wire::protocol::PayloadId;
use std::collections::BTreeMap;
use std::time::Instant;

/// Open device sessions, ready for candidates.
pub struct Evaluator {
    config: Config,
    sessions: BTreeMap<Backend, DeviceSession>,
    /// Each backend's device as the user named it.
    device_names: BTreeMap<Backend, String>,
    engine_host: Option<engine::EngineHost>,
    envs: BTreeMap<String, BackendEnv>,
    tools: BTreeMap<String, String>,
    current: Option<Current>,
    /// The next candidate, built while the one before it ran.
    ahead: Option<Ahead>,
}

/// The instance evaluated last and its prepared baseline.
struct Current {
    instance: Instance,
    backend: Backend,
    options: BuildOptions,
    baseline: Prepared,
    /// The baseline's build time, until the first candidate takes it.
    build: Phases,
    /// The baseline loaded in the session: its runtime generation and id.
    loaded: Option<(u64, PayloadId)>,
}

impl Evaluator {
    /// Checks `config` for `backends`, installs and starts the runtime on each backend's device
    /// in `devices`, and starts the baseline's engine, if any.
    pub fn open(
        config: Config,
        mut devices: BTreeMap<Backend, DeviceLink>,
        backends: &[Backend],
        observer: &mut dyn Observer,
    ) -> Result<Evaluator, Diagnostic> {
        config.candidates.check()?;
        if let Baseline::Candidates(dir) = &config.baseline {
            Candidates::Dir(dir.clone()).check()?;
        }
        for &b in backends {
            check_target(b, config.targets.get(&b))?;
            let Some(link) = devices.get(&b) else {
                return Err(Diagnostic::error(format!("no device is given for the {} instances", b.name())));
            };
            if let Baseline::Engine(e) = &config.baseline {
                e.check(b, &link.name)?;
            }
        }
        let serve_args = config.serve_args();
        let mut sessions = BTreeMap::new();
        let mut envs = BTreeMap::new();
        let mut device_names = BTreeMap::new();
        for &b in backends {
            let link = devices.remove(&b).expect("checked above");
            let mut session = DeviceSession::open(link.transport, serve_args.clone())?;
            for line in std::mem::take(&mut session.log) {
                observer.note(&line);
            }
            let env = super::backend_env(&mut session, b, config.target(b), link.name.clone())?;
            envs.insert(b.name().to_string(), env);
            device_names.insert(b, link.name);
            sessions.insert(b, session);
        }
        let engine_host = match &config.baseline {
            Baseline::Engine(e) => {
                // The engine takes the candidate's threads: `--threads`, else the device's cores.
                let cores = sessions.values().next().map_or(1, |s: &DeviceSession| s.hello().device.cores);
                let threads = config.paired.threads.unwrap_or(cores).max(1);
                let host = config.targets.get(&Backend::Cpu).ok_or_else(|| {
                    Diagnostic::error("an engine baseline needs the CPU's target profile (`--target host`)")
                })?;
                Some(engine::EngineHost::start(e, host, threads)?)
            }
            _ => None,
        };
        let mut tools = tools();
        if let Some(host) = &engine_host {
            let (name, version) = host.version().map_err(|e| {
                Diagnostic::error(format!("the baseline engine does not say its version: {e}"))
            })?;
            tools.insert(name, version);
        }
        Ok(Evaluator { config, sessions, device_names, engine_host, envs, tools, current: None, ahead: None })
    }

    /// The settings it evaluates with.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Per backend: the target profile and the device, as a run records them.
    pub fn envs(&self) -> &BTreeMap<String, BackendEnv> {
        &self.envs
    }

    /// The versions of the tools it uses (the compiler, the baseline's engine).
    pub fn tools(&self) -> &BTreeMap<String, String> {
        &self.tools
    }

    /// Evaluates sample `sample` of `inst` (an instance of `task`), marking it in `in_flight`
    /// while it goes. `Err` only for what must stop the evaluation (the device is gone).
    ///
    /// With `next`, the candidate to evaluate after this one, and a device that is not this
    /// machine's CPU ([`Evaluator::builds_ahead`]), `next` is built on another thread while this
    /// one runs on the device (with its instance's references and baseline, for a new
    /// instance), and the next call takes that build.
    pub fn candidate(
        &mut self,
        task: &Task,
        inst: &Instance,
        sample: u32,
        in_flight: &InFlight,
        next: Option<Next<'_>>,
    ) -> Result<CandidateResult, Diagnostic> {
        let backend = backend_of(inst)?;
        if !self.sessions.contains_key(&backend) {
            return Err(Diagnostic::error(format!(
                "instance {} runs on {}, which this evaluator has no device for",
                inst.task, inst.backend
            )));
        }
        let candidate = match self.ahead.take() {
            Some(a) if a.instance == *inst && a.sample == sample => {
                if let Some(fresh) = a.fresh {
                    self.end_instance();
                    self.current = Some(Current {
                        instance: inst.clone(),
                        backend,
                        options: fresh.options,
                        baseline: fresh.baseline,
                        build: fresh.build,
                        loaded: None,
                    });
                }
                let candidate = a.built?;
                in_flight.take_ahead(&candidate.marker)?;
                // The share of its build the run did not wait for goes with the candidate.
                self.current.as_mut().expect("the instance's baseline").build.ahead = a.hidden;
                candidate
            }
            other => {
                if other.is_some() {
                    in_flight.clear_ahead()?;
                }
                if self.current.as_ref().is_none_or(|c| c.instance != *inst) {
                    self.end_instance();
                    let (fresh, candidate) = build_instance(
                        &self.config,
                        self.engine_host.as_mut(),
                        task,
                        inst,
                        sample,
                        in_flight,
                        false,
                    );
                    let candidate = candidate?;
                    self.current = Some(Current {
                        instance: inst.clone(),
                        backend,
                        options: fresh.options,
                        baseline: fresh.baseline,
                        build: fresh.build,
                        loaded: None,
                    });
                    candidate
                } else {
                    let current = self.current.as_ref().expect("the instance's baseline");
                    build_one(task, inst, backend, sample, &self.config, &current.options, in_flight, false)?
                }
            }
        };
        let ahead = next.filter(|n| self.builds_ahead(n.inst));
        let config = &self.config;
        let current = self.current.as_mut().expect("prepared above");
        let same = (current.instance.clone(), current.options.clone());
        let session = self.sessions.get_mut(&backend).expect("checked above");
        let engine_host = self.engine_host.as_mut();
        let (result, ahead) = std::thread::scope(|s| {
            let ahead = ahead.map(|n| {
                std::thread::Builder::new()
                    .name("build-ahead".into())
                    .spawn_scoped(s, move || build_ahead(config, &same, n, in_flight))
                    .expect("a thread to build ahead")
            });
            let result = one(
                inst,
                sample,
                config,
                candidate,
                (&mut current.baseline, engine_host),
                std::mem::take(&mut current.build),
                session,
                &mut current.loaded,
                in_flight,
            );
            let waited = Instant::now();
            let ahead = ahead.map(|h| {
                let mut a = h.join().unwrap_or_else(|p| std::panic::resume_unwind(p));
                a.hidden = (a.hidden - waited.elapsed().as_secs_f64()).max(0.0);
                a
            });
            (result, ahead)
        });
        self.ahead = ahead;
        let mut result = result?;
        let target = &self.config.target(backend).name;
        result.device = Some(identity::probe(&self.device_names[&backend], target, session.hello()));
        Ok(result)
    }

    /// Whether the candidates of `inst` are built ahead: its device is not this machine's CPU
    /// (a CUDA GPU, or a device reached through a transport), where builds beside the timing
    /// would take its cores; and the baseline is not an engine (which measures itself while it
    /// prepares).
    fn builds_ahead(&self, inst: &Instance) -> bool {
        let Ok(backend) = backend_of(inst) else { return false };
        !matches!(self.config.baseline, Baseline::Engine(_))
            && (backend == Backend::Cuda || self.device_names.get(&backend).is_some_and(|d| d != "local"))
    }

    /// Unloads the baseline of the instance evaluated last and ends its engine instance.
    fn end_instance(&mut self) {
        let Some(current) = self.current.take() else { return };
        if let (Some((generation, id)), Some(session)) =
            (current.loaded, self.sessions.get_mut(&current.backend))
        {
            if generation == session.generation() {
                session.unload(id);
            }
        }
        if let (Some(host), Prepared::Engine(l)) = (self.engine_host.as_mut(), current.baseline) {
            host.end_instance(l.ok());
        }
    }

    /// Ends the last instance and stops the runtimes.
    pub fn close(mut self) {
        self.end_instance();
        for session in std::mem::take(&mut self.sessions).into_values() {
            session.close();
        }
    }
}

/// An instance's options, baseline and the baseline's build time (what its build did beyond
/// its first candidate's).
struct Fresh {
    options: BuildOptions,
    baseline: Prepared,
    build: Phases,
}

/// A candidate built while the one before it ran on the device.
struct Ahead {
    instance: Instance,
    sample: u32,
    /// Its instance, when that is not the one before.
    fresh: Option<Fresh>,
    built: Result<BuiltCandidate, Diagnostic>,
    /// Seconds of its build (its instance's included) that the candidate before it did not
    /// wait for.
    hidden: f64,
}

/// Builds a new instance of `task` and its candidate `sample`: the reference outputs, the
/// baseline and the candidate side by side (the builds wait for the references only to pack
/// their expected outputs); an engine baseline alone first, as it measures itself while it
/// prepares (a TVM tune times its trials).
fn build_instance(
    config: &Config,
    engine_host: Option<&mut engine::EngineHost>,
    task: &Task,
    inst: &Instance,
    sample: u32,
    in_flight: &InFlight,
    ahead: bool,
) -> (Fresh, Result<BuiltCandidate, Diagnostic>) {
    let t0 = Instant::now();
    let options = config.build_options(task);
    let backend = backend_of(inst).expect("checked by the caller");
    let (baseline, candidate) = if matches!(config.baseline, Baseline::Engine(_)) {
        let baseline = config.baseline.prepare(task, backend, config, &options, engine_host);
        (baseline, build_one(task, inst, backend, sample, config, &options, in_flight, ahead))
    } else {
        std::thread::scope(|s| {
            s.spawn(|| options.references.as_ref().map(References::get));
            let baseline = s.spawn(|| config.baseline.prepare(task, backend, config, &options, None));
            let candidate = build_one(task, inst, backend, sample, config, &options, in_flight, ahead);
            (baseline.join().unwrap_or_else(|p| std::panic::resume_unwind(p)), candidate)
        })
    };
    // The baseline's build counts what the candidate's own build did not cover, so the two add
    // up to the wall time of the instance's builds.
    let build = Phases {
        build: (t0.elapsed().as_secs_f64() - candidate.as_ref().map_or(0.0, |c| c.build_s)).max(0.0),
        compiler: match &baseline {
            Prepared::Payload(b) => b.as_ref().map_or(0.0, |b| b.compile.duration.as_secs_f64()),
            Prepared::Engine(_) => 0.0,
        },
        ..Phases::default()
    };
    (Fresh { options, baseline, build }, candidate)
}

/// Builds `next` ahead of its turn (`same`: the current instance and its options, which a next
/// candidate of that instance reuses).
fn build_ahead(
    config: &Config,
    same: &(Instance, BuildOptions),
    next: Next<'_>,
    in_flight: &InFlight,
) -> Ahead {
    let (fresh, built) = match backend_of(next.inst) {
        Err(e) => (None, Err(e)),
        Ok(_) if *next.inst != same.0 => {
            let (fresh, built) =
                build_instance(config, None, next.task, next.inst, next.sample, in_flight, true);
            (Some(fresh), built)
        }
        Ok(backend) => {
            (None, build_one(next.task, next.inst, backend, next.sample, config, &same.1, in_flight, true))
        }
    };
    // The build time its result will count, all of it done beside the device so far.
    let hidden = fresh.as_ref().map_or(0.0, |f| f.build.build) + built.as_ref().map_or(0.0, |c| c.build_s);
    Ahead { instance: next.inst.clone(), sample: next.sample, fresh, built, hidden }
}
