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
    backend_of, build_one, check_target, engine, identity, one, tools, Baseline, Config, DeviceLink,
    Observer, Prepared,
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
        Ok(Evaluator { config, sessions, device_names, engine_host, envs, tools, current: None })
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
    pub fn candidate(
        &mut self,
        task: &Task,
        inst: &Instance,
        sample: u32,
        in_flight: &InFlight,
    ) -> Result<CandidateResult, Diagnostic> {
        let backend = backend_of(inst)?;
        if !self.sessions.contains_key(&backend) {
            return Err(Diagnostic::error(format!(
                "instance {} runs on {}, which this evaluator has no device for",
                inst.task, inst.backend
            )));
        }
        let candidate = if self.current.as_ref().is_none_or(|c| c.instance != *inst) {
            self.end_instance();
            let t0 = Instant::now();
            let config = &self.config;
            let options = config.build_options(task);
            let engine_host = self.engine_host.as_mut();
            let (baseline, candidate) = if matches!(config.baseline, Baseline::Engine(_)) {
                // An engine measures itself while it prepares (a TVM tune times its trials):
                // nothing runs beside it.
                let baseline = config.baseline.prepare(task, backend, config, &options, engine_host);
                (baseline, build_one(task, inst, backend, sample, config, &options, in_flight))
            } else {
                // The instance's reference outputs, its baseline and this candidate side by
                // side: both builds wait for the references only to pack their expected outputs.
                std::thread::scope(|s| {
                    s.spawn(|| options.references.as_ref().map(References::get));
                    let baseline = s.spawn(|| config.baseline.prepare(task, backend, config, &options, None));
                    let candidate = build_one(task, inst, backend, sample, config, &options, in_flight);
                    (baseline.join().unwrap_or_else(|p| std::panic::resume_unwind(p)), candidate)
                })
            };
            let candidate = candidate?;
            // The baseline's build counts what the candidate's own build did not cover, so the
            // two add up to the wall time of the instance's builds.
            let build = Phases {
                build: (t0.elapsed().as_secs_f64() - candidate.build_s).max(0.0),
                compiler: match &baseline {
                    Prepared::Payload(b) => b.as_ref().map_or(0.0, |b| b.compile.duration.as_secs_f64()),
                    Prepared::Engine(_) => 0.0,
                },
                ..Phases::default()
            };
            self.current =
                Some(Current { instance: inst.clone(), backend, options, baseline, build, loaded: None });
            candidate
        } else {
            let current = self.current.as_ref().expect("the instance's baseline");
            build_one(task, inst, backend, sample, &self.config, &current.options, in_flight)?
        };
        let current = self.current.as_mut().expect("prepared above");
        let session = self.sessions.get_mut(&backend).expect("checked above");
        let mut result = one(
            inst,
            sample,
            &self.config,
            candidate,
            (&mut current.baseline, self.engine_host.as_mut()),
            std::mem::take(&mut current.build),
            session,
            &mut current.loaded,
            in_flight,
        )?;
        let target = &self.config.target(backend).name;
        result.device = Some(identity::probe(&self.device_names[&backend], target, session.hello()));
        Ok(result)
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
