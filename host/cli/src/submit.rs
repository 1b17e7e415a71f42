//! `--queue URL`: candidates as jobs for a pool of workers (`ekb worker`), instead of evaluating
//! them here. [`evaluate_into`] sends the candidates of a run and records what comes back into
//! a run directory that is the same as a local run's: `run.json` written first,
//! `results.jsonl` one line per candidate as its result comes back, a resumed run continuing it;
//! `queue.json` names the run's results stream on the broker. `ekb eval --queue` is that and the
//! report; `ekb agent --queue` and `ekb tune --queue` send each batch through it.
//!
//! What must stay true: the plan (instances, seeds, settings) is made exactly as a local run
//! makes it (`eval::plan`) and the job settings are those of its configuration, so a pooled run
//! and a local one of the same command evaluate the same candidates the same way; each job carries what a worker on another machine needs (the
//! task's text, the sample folder's files, the target profile), so workers need no shared files.

use crate::eval::{self, EvalArgs, Progress};
use crate::tasks as task_cli;
use ekb_eval::evaluate::candidate::Candidates;
use ekb_eval::evaluate::{self, Baseline, Config, Observer};
use ekb_eval::results::{BackendEnv, CandidateResult, Instance, RunDir};
use ekb_eval::tasks::{Backend, Filter, Task};
use ekb_ir::Diagnostic;
use ekb_queue::broker::Broker;
use ekb_queue::job::{CandidateSource, Job, JobBody, Settings};
use ekb_queue::reconnect::Reconnect;
use ekb_queue::submit::{results_stream_of, submit, Recorder, Tally};
use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

/// `--queue`, `--queue-depth` and `--reconnect-s`: shared by `ekb eval`, `ekb tune` and `ekb
/// agent`.
#[derive(clap::Args, Clone)]
pub struct QueueArgs {
    /// Send the candidates as jobs to a pool of workers through this broker
    /// (`redis://HOST:PORT`) instead of evaluating them on this machine's device: each
    /// candidate becomes a job on the stream of its target profile (`ekb:jobs:PROFILE`), any
    /// `ekb worker --queue URL --target PROFILE` takes it and evaluates it on its device exactly
    /// as `ekb eval` would there, and its result comes back here, recorded once.
    /// docs/scaleout.md says how to start a broker and workers.
    #[arg(long, value_name = "URL")]
    pub queue: Option<String>,
    /// With `--queue`: the most jobs out at once (published and not yet answered); more are
    /// published as results come back.
    #[arg(long, default_value_t = 32, value_name = "N", requires = "queue")]
    pub queue_depth: usize,
    /// With `--queue`: seconds a broker that went away (restarted, unreachable) is waited for,
    /// reconnecting with growing waits (0.1 s doubling to 5 s, each attempt said on stderr),
    /// before the command gives up; the jobs out meanwhile are kept by the broker.
    #[arg(long, default_value_t = 300.0, value_name = "S", requires = "queue")]
    pub reconnect_s: f64,
}

impl QueueArgs {
    /// The pool `--queue` names, if any.
    pub fn pool(&self) -> Result<Option<Pool>, String> {
        let Some(url) = &self.queue else { return Ok(None) };
        let reconnect = Reconnect { patience: patience(self.reconnect_s)?, prefix: String::new() };
        Ok(Some(Pool { url: url.clone(), depth: self.queue_depth.max(1), reconnect }))
    }
}

/// `--reconnect-s S` as a duration: a number of seconds, 0 or more.
pub fn patience(seconds: f64) -> Result<Duration, String> {
    if !(seconds >= 0.0 && seconds.is_finite()) {
        return Err(format!(
            "error: `--reconnect-s {seconds}` must be a number of seconds, 0 or more (0: give up at once)"
        ));
    }
    Ok(Duration::from_secs_f64(seconds))
}

/// Where `--queue` sends the jobs, how many may be out at once, and how long a lost broker is
/// waited for.
#[derive(Clone)]
pub struct Pool {
    pub url: String,
    pub depth: usize,
    pub reconnect: Reconnect,
}

impl Pool {
    /// A connection to the broker, with a warning when it does not sync every write.
    pub fn connect(&self) -> Result<Broker, String> {
        let mut broker = Broker::open(&self.url, self.reconnect.clone()).map_err(|d| d.to_string())?;
        if broker.syncs_every_write() == Some(false) {
            eprintln!(
                "warning: the broker at {} does not sync every write (run it with `--appendonly yes --appendfsync always`): \
                 a broker crash may lose jobs and results; resume the run then",
                self.url
            );
        }
        Ok(broker)
    }
}

/// The job settings of `config`'s evaluation: what a worker's `eval::plan` makes the same
/// configuration from.
fn settings(config: &Config) -> Settings {
    let pin = |flag: &str| config.pinning.iter().position(|a| a == flag);
    Settings {
        baseline: config.baseline.describe(),
        seeds: config.seeds.clone(),
        budget_s: config.timing.budget_ms as f64 / 1000.0,
        timeout_s: config.exec_timeout.as_secs_f64(),
        target_rse: config.timing.target_rse,
        max_ci: config.paired.max_ci,
        cold: config.timing.cold_cache,
        threads: config.paired.threads,
        cpus: pin("--cpus").and_then(|i| config.pinning.get(i + 1).cloned()),
        big_cores: pin("--big-cores").is_some(),
    }
}

/// Refuses `--device` beside `--queue`: the workers name their devices.
pub fn no_device(e: &EvalArgs) -> Result<(), String> {
    match e.device {
        Some(_) => Err("error: `--device` names one device, and `--queue` sends the jobs to a pool\n  \
             = hint: name each worker's device when starting it: `ekb worker --queue URL --device D`"
            .into()),
        None => Ok(()),
    }
}

/// Submits the instances of the tasks `filter` selects as jobs to `pool`, records the results
/// into `out` as they come back, then prints the report: `ekb eval --queue`.
pub fn evaluate_on_pool(
    e: &EvalArgs,
    mut filter: Filter,
    candidates: Candidates,
    samples: u32,
    out: &Path,
    pool: &Pool,
) -> Result<ExitCode, String> {
    no_device(e)?;
    let command: Vec<String> = std::env::args().collect();
    let plan = eval::plan(e, candidates, samples, command, out)?;
    let (suite, broken) = task_cli::load(&e.dir)?;
    if broken {
        return Err("error: fix the task files above first".into());
    }
    let backend = *filter.backend.get_or_insert(Backend::Cpu);
    let tasks = suite.select(&filter);
    let planned = evaluate::instances(&tasks, &[backend]);
    if planned.is_empty() {
        return Err("error: no instance matches the selection".into());
    }
    let mut progress = Progress::new(!e.plain && std::io::stderr().is_terminal());
    let tally =
        evaluate_into(pool, &plan.config, &tasks, planned, out, e.resume, &mut progress).map_err(|d| {
            format!(
                "{d}\nthe results so far are kept in {}; continue with the same command and `--resume`",
                out.display()
            )
        })?;
    progress.finish();
    if tally.dropped > 0 {
        eprintln!("dropped {} answer(s) to jobs already recorded (a job delivered twice)", tally.dropped);
    }
    let run = ekb_eval::results::load_run(out).map_err(|d| d.to_string())?;
    for w in &run.warnings {
        eprintln!("warning: {w}");
    }
    eval::print_report(&run)?;
    Ok(ExitCode::SUCCESS)
}

/// Evaluates samples `0..config.samples` of each of `instances` (of `tasks`, candidates from
/// `config.candidates`) on `pool` into the run directory `out`, created, or continued with
/// `resume` (only the samples without a result are sent): `run.json` first, one
/// `results.jsonl` line per result as it comes back, `observer` told as a local run tells it.
/// What `ekb eval --queue` does, and what `ekb agent` and `ekb tune` do with each batch.
pub fn evaluate_into(
    pool: &Pool,
    config: &Config,
    tasks: &[&Task],
    instances: Vec<Instance>,
    out: &Path,
    resume: bool,
    observer: &mut dyn Observer,
) -> Result<Tally, String> {
    let mut backends = BTreeMap::new();
    for inst in &instances {
        let backend = Backend::ALL.into_iter().find(|b| b.name() == inst.backend).ok_or_else(|| {
            format!("error: instance {} names an unknown backend `{}`", inst.task, inst.backend)
        })?;
        let profile = &config.targets[&backend];
        backends.entry(backend.name().to_string()).or_insert_with(|| BackendEnv {
            target: profile.name.clone(),
            device: format!("pool {}", pool.url),
            runtime: "ekb worker".into(),
            runtime_version: "each result's device".into(),
            arch: profile.cpu.triple.split('-').next().unwrap_or("").into(),
            cpu_model: "each result's device".into(),
            cores: 0,
            memory_bytes: 0,
            gpu: None,
        });
    }
    let tools = BTreeMap::from([("ekb".to_string(), env!("CARGO_PKG_VERSION").to_string())]);
    let info = evaluate::run_info(config, backends, tools, instances);
    let (dir, done) = evaluate::open_run(out, &info, resume).map_err(|d| d.to_string())?;
    let mut broker = pool.connect()?;
    let reply = results_stream_of(dir.dir(), &pool.url).map_err(|d| d.to_string())?;
    let by_name: BTreeMap<&str, &Task> = tasks.iter().map(|t| (t.name.as_str(), *t)).collect();
    let settings = settings(config);
    let mut jobs = Vec::new();
    let mut profiles: Vec<&str> = Vec::new();
    for inst in &info.instances {
        let task = by_name
            .get(inst.task.as_str())
            .ok_or_else(|| format!("error: instance {} has no task among those loaded", inst.task))?;
        let backend = Backend::ALL.into_iter().find(|b| b.name() == inst.backend).expect("checked above");
        let profile = &config.targets[&backend];
        if !profiles.contains(&profile.name.as_str()) {
            profiles.push(&profile.name);
        }
        let key = |s: u32| (inst.task.clone(), inst.backend.clone(), s);
        for sample in (0..config.samples).filter(|s| !done.contains(&key(*s))) {
            let candidate = match &config.candidates {
                Candidates::Builtin(s) => CandidateSource::Builtin(s.name().into()),
                Candidates::Dir(d) => {
                    CandidateSource::Files(sample_files(d, &inst.task, &inst.backend, sample)?)
                }
            };
            // A candidate baseline travels with the job: a worker has no access to `DIR`.
            let baseline_files = match &config.baseline {
                Baseline::Candidates(d) => Some(sample_files(d, &inst.task, &inst.backend, 0)?),
                _ => None,
            };
            let body = JobBody {
                instance: inst.clone(),
                sample,
                task: task.source.text.clone(),
                candidate,
                settings: settings.clone(),
                profile: profile.clone(),
                baseline_files,
            };
            jobs.push(Job::new(&reply, body));
        }
    }
    observer.note(&format!(
        "submitting {} job(s) of {} instance(s) x {} sample(s) to {} (stream {}, at most {} out), baseline {}, into {}",
        jobs.len(),
        info.instances.len(),
        config.samples,
        pool.url,
        profiles.iter().map(|p| format!("ekb:jobs:{p}")).collect::<Vec<_>>().join(", "),
        pool.depth,
        config.baseline.describe(),
        out.display()
    ));
    observer.started(info.instances.len() * config.samples as usize, done.len());
    let mut store = Store { dir, observer };
    submit(&mut broker, &reply, jobs, pool.depth, &mut store).map_err(|d| d.to_string())
}

/// The run directory, recording results as they come back, telling the observer.
struct Store<'a> {
    dir: RunDir,
    observer: &'a mut dyn Observer,
}

impl Recorder for Store<'_> {
    fn record(&mut self, result: &CandidateResult) -> Result<(), Diagnostic> {
        self.dir.append(result)?;
        self.observer.finished(result);
        Ok(())
    }

    fn note(&mut self, line: &str) {
        self.observer.note(line);
    }
}

/// The files of sample `sample` of `task` on `backend` in candidates folder `dir`, by their path
/// relative to `dir`, as text (none when the sample has no folder).
fn sample_files(
    dir: &Path,
    task: &str,
    backend: &str,
    sample: u32,
) -> Result<BTreeMap<String, String>, String> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
        for entry in std::fs::read_dir(dir)? {
            let path = entry?.path();
            if path.is_dir() {
                walk(&path, out)?;
            } else {
                out.push(path);
            }
        }
        Ok(())
    }
    let folder = dir.join(task).join(backend).join(format!("sample-{sample}"));
    let mut paths = Vec::new();
    if folder.is_dir() {
        walk(&folder, &mut paths).map_err(|e| format!("error: cannot read `{}`: {e}", folder.display()))?;
    }
    let mut files = BTreeMap::new();
    for p in paths {
        let bytes = std::fs::read(&p).map_err(|e| format!("error: cannot read `{}`: {e}", p.display()))?;
        let rel = p.strip_prefix(dir).unwrap_or(&p).display().to_string();
        files.insert(rel, String::from_utf8_lossy(&bytes).into_owned());
    }
    Ok(files)
}
