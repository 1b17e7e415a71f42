//! `ekb worker`: one device's worker in a pool. Takes the jobs of its target profile from the
//! broker (`ekb eval --queue` publishes them), evaluates each on its device through the same
//! evaluator as `ekb eval` (`ekb_eval::evaluate::Evaluator`), posts the result, and only then
//! acknowledges the job; it runs until stopped.
//!
//! What must stay true: a job is evaluated with exactly the settings a local `ekb eval` would
//! use (`eval::plan` from the job's settings, the job's target profile, its task text and
//! candidate files), so a pooled run gives the outcomes of a local one; the runtime and the
//! evaluator stay open across consecutive jobs of the same settings and are reopened when they
//! change; a device that is gone stops the worker and leaves its job to another.

use crate::eval::{self, EvalArgs};
use ekb_eval::evaluate::candidate::Candidates;
use ekb_eval::evaluate::{Evaluator, Observer};
use ekb_eval::results::inflight::InFlight;
use ekb_eval::results::CandidateResult;
use ekb_eval::tasks::{self, Backend};
use ekb_ir::Diagnostic;
use ekb_lower::Schedule;
use ekb_queue::job::{CandidateSource, Job, JobBody};
use ekb_queue::reconnect::Reconnect;
use ekb_queue::worker::{serve, WorkerOptions};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// Evaluate jobs from a pool's broker on one device, until stopped.
#[derive(clap::Args)]
#[command(
    long_about = "Evaluate jobs from a pool's broker on one device, until stopped.\n\n\
`ekb eval --queue URL` turns each candidate into a job on the stream of its target profile \
(`ekb:jobs:PROFILE`, consumer group `workers`). Start one worker per board or GPU: each takes the \
jobs of its `--target` one at a time, evaluates them on its `--device` exactly as `ekb eval` \
would there (build, check on the run's seeds, paired timing), posts the result to the run's \
results stream, and only then acknowledges the job. While it works it sends a heartbeat; a \
worker that is killed or hangs goes silent, and after `--min-idle` seconds another worker takes \
its job (delivery is at least once; the submitter records each job once). A broker that goes \
away is waited for `--reconnect-s` seconds: the worker reconnects and goes on. Every result names \
the device (host, serial, profile, runtime, temperature and clock where readable).\n\n\
The broker is a Redis server (docs/scaleout.md): `redis-server --port 6379 --appendonly yes \
--appendfsync always`.",
    after_help = "Examples:\n  \
ekb worker --queue redis://broker:6379                          this machine's CPU, profile `host`\n  \
ekb worker --queue redis://broker:6379 --target rk3588 --device ssh://me@board1   a board over ssh\n  \
ekb worker --queue redis://broker:6379 --target pocl            the OpenCL jobs, on this machine's OpenCL device\n  \
ekb eval 'relu*' --queue redis://broker:6379 --out runs/pool    then submit from anywhere"
)]
pub struct Args {
    /// The broker, `redis://HOST:PORT`.
    #[arg(long, value_name = "URL")]
    pub queue: String,
    /// The target profile whose jobs it takes (the stream `ekb:jobs:TARGET`): `ekb eval`'s
    /// `--target` for CPU jobs, `--opencl-target` or `--cuda-target` for GPU jobs.
    #[arg(long, default_value = "host")]
    pub target: String,
    /// `local`, `qemu`, `ssh://[user@]host[:port]` or `adb[:serial]` [default: local for this
    /// machine's architecture, qemu for another].
    #[arg(long)]
    pub device: Option<String>,
    /// An ssh/scp option, as for `ssh -o` (repeatable).
    #[arg(long = "ssh-option", value_name = "KEY=VALUE")]
    pub ssh_options: Vec<String>,
    /// Its name in the consumer group, unique in the pool [default: HOSTNAME-PID].
    #[arg(long)]
    pub name: Option<String>,
    /// Seconds a worker may be silent (no heartbeat) before another takes its job.
    #[arg(long, default_value_t = 60.0)]
    pub min_idle: f64,
    /// A job delivered more often than this (every worker that took it was killed, hung or lost
    /// its device on it) is recorded as failed instead of being evaluated again.
    #[arg(long, default_value_t = 3)]
    pub max_deliveries: usize,
    /// Seconds a broker that went away (restarted, unreachable) is waited for before the worker
    /// stops: it reconnects with growing waits (0.1 s doubling to 5 s, each attempt said on
    /// stderr), joins its consumer group again and goes on; a job it held stays pending on the
    /// broker meanwhile (its result is posted once the broker is back).
    #[arg(long, default_value_t = 300.0, value_name = "S")]
    pub reconnect_s: f64,
    /// Simulation only: sleep this many milliseconds per job instead of evaluating it, and post
    /// a result marked `simulated` (failed); for measuring the queue, never for a real run.
    #[arg(long, hide = true, value_name = "MS")]
    pub simulate_ms: Option<u64>,
}

pub fn run(args: Args) -> Result<ExitCode, String> {
    if !(args.min_idle > 0.0 && args.min_idle.is_finite()) {
        return Err(format!("error: `--min-idle {}` must be a positive number of seconds", args.min_idle));
    }
    let target = crate::source::target(&args.target)?;
    let consumer = args.name.clone().unwrap_or_else(|| format!("{}-{}", host_name(), std::process::id()));
    let options = WorkerOptions {
        url: args.queue.clone(),
        profile: target.name.clone(),
        consumer: consumer.clone(),
        min_idle: Duration::from_secs_f64(args.min_idle),
        block: Duration::from_secs_f64((args.min_idle / 2.0).clamp(0.05, 5.0)),
        max_deliveries: args.max_deliveries.max(1),
        reconnect: Reconnect {
            patience: crate::submit::patience(args.reconnect_s)?,
            prefix: format!("worker {consumer}: "),
        },
    };
    eprintln!("worker {consumer}: jobs of `{}` from {}", target.name, args.queue);
    let stop = AtomicBool::new(false);
    let mut log = |line: &str| eprintln!("worker {consumer}: {line}");
    let done = match args.simulate_ms {
        Some(ms) => {
            let latency = Duration::from_millis(ms);
            serve(&options, &stop, &mut |job| ekb_queue::simulate::evaluate(job, latency), &mut log)
        }
        None => {
            let work = tempfile::tempdir().map_err(|e| format!("error: cannot create a work folder: {e}"))?;
            let mut jobs = JobRunner {
                args: &args,
                in_flight: InFlight::open(work.path()),
                work: work.path(),
                open: None,
            };
            let served = serve(&options, &stop, &mut |job| jobs.evaluate(job), &mut log);
            if let Some((_, evaluator)) = jobs.open.take() {
                evaluator.close();
            }
            served
        }
    }
    .map_err(|d| d.to_string())?;
    eprintln!("worker {consumer}: stopped after {done} job(s)");
    Ok(ExitCode::SUCCESS)
}

/// This machine's host name.
fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map_or_else(|_| "worker".into(), |h| h.trim().to_string())
}

/// Evaluates jobs on this worker's device.
struct JobRunner<'a> {
    args: &'a Args,
    /// The worker's folder: the task and candidate files of the job at hand, the in-flight marker.
    work: &'a Path,
    in_flight: InFlight,
    /// The evaluator of the last job's settings, and those settings.
    open: Option<(String, Evaluator)>,
}

impl JobRunner<'_> {
    fn evaluate(&mut self, job: &Job) -> Result<CandidateResult, Diagnostic> {
        let b = &job.body;
        let task = self.task(b)?;
        let candidates = self.candidates(&b.candidate)?;
        let baseline = match &b.baseline_files {
            Some(files) => Some(self.write_files("baseline", files)?),
            None => None,
        };
        let backend = Backend::ALL.into_iter().find(|x| x.name() == b.instance.backend).ok_or_else(|| {
            Diagnostic::error(format!("job {} names an unknown backend `{}`", job.key, b.instance.backend))
        })?;
        let setup = (&b.settings, &b.profile, candidates.describe(), backend.name(), &b.baseline_files);
        let setup = serde_json::to_string(&setup).expect("settings serialise");
        if self.open.as_ref().is_none_or(|(s, _)| *s != setup) {
            if let Some((_, old)) = self.open.take() {
                old.close();
            }
            self.open = Some((setup, self.open_evaluator(b, candidates, baseline, backend)?));
        }
        let (_, evaluator) = self.open.as_mut().expect("opened above");
        let result = evaluator.candidate(&task, &b.instance, b.sample, &self.in_flight, None)?;
        self.in_flight.clear()?;
        Ok(result)
    }

    /// The job's task, loaded from its text as `ekb eval` loads it from the task folder.
    fn task(&self, b: &JobBody) -> Result<tasks::Task, Diagnostic> {
        let folder = self.work.join("tasks").join(format!("level{}", b.instance.level));
        std::fs::create_dir_all(&folder)
            .map_err(|e| Diagnostic::error(format!("cannot create `{}`: {e}", folder.display())))?;
        let path = folder.join(format!("{}.ekir", b.instance.task));
        std::fs::write(&path, &b.task)
            .map_err(|e| Diagnostic::error(format!("cannot write `{}`: {e}", path.display())))?;
        tasks::load_task(&path).map_err(|ds| {
            Diagnostic::error(format!(
                "the task `{}` of a job does not load here: {}",
                b.instance.task,
                ds.iter().map(|d| d.to_string()).collect::<Vec<_>>().join("\n")
            ))
            .with_hint("run workers built from the same ekb as the submitter")
        })
    }

    /// The job's candidates: a built-in schedule, or its files written into the work folder.
    fn candidates(&self, source: &CandidateSource) -> Result<Candidates, Diagnostic> {
        match source {
            CandidateSource::Builtin(name) => {
                Schedule::ALL.into_iter().find(|s| s.name() == name).map(Candidates::Builtin).ok_or_else(
                    || Diagnostic::error(format!("a job names an unknown built-in schedule `{name}`")),
                )
            }
            CandidateSource::Files(files) => Ok(Candidates::Dir(self.write_files("candidates", files)?)),
        }
    }

    /// `files` (by path relative to the folder) written into the work folder's `name`, emptied
    /// first: a candidates folder.
    fn write_files(&self, name: &str, files: &BTreeMap<String, String>) -> Result<PathBuf, Diagnostic> {
        let root: PathBuf = self.work.join(name);
        let io = |e: std::io::Error| Diagnostic::error(format!("cannot write `{}`: {e}", root.display()));
        if root.exists() {
            std::fs::remove_dir_all(&root).map_err(io)?;
        }
        std::fs::create_dir_all(&root).map_err(io)?;
        for (rel, text) in files {
            let path = root.join(rel);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).map_err(io)?;
            }
            std::fs::write(&path, text).map_err(io)?;
        }
        Ok(root)
    }

    /// An evaluator for job `b`'s settings on this worker's device; a candidate baseline is the
    /// job's files, written into `baseline`.
    fn open_evaluator(
        &self,
        b: &JobBody,
        candidates: Candidates,
        baseline: Option<PathBuf>,
        backend: Backend,
    ) -> Result<Evaluator, Diagnostic> {
        let s = &b.settings;
        let e = EvalArgs {
            baseline: baseline.map_or_else(|| s.baseline.clone(), |d| format!("candidates:{}", d.display())),
            target: self.args.target.clone(),
            cuda_target: self.args.target.clone(),
            opencl_target: self.args.target.clone(),
            device: self.args.device.clone(),
            ssh_options: self.args.ssh_options.clone(),
            budget: s.budget_s,
            timeout: s.timeout_s,
            target_rse: s.target_rse,
            max_ci: s.max_ci,
            cold: s.cold,
            threads: s.threads,
            cpus: s.cpus.clone(),
            big_cores: s.big_cores,
            dir: None,
            resume: false,
            seeds: s.seeds.clone(),
            plain: true,
        };
        let command = std::env::args().collect();
        let mut plan = eval::plan(&e, candidates, 1, command, self.work).map_err(Diagnostic::error)?;
        plan.config.targets.insert(backend, b.profile.clone());
        let links = plan.links(&[backend]).map_err(Diagnostic::error)?;
        Evaluator::open(plan.config, links, &[backend], &mut Notes)
    }
}

/// The evaluator's notes (installing the runtime, a restarted runtime) on stderr.
pub(crate) struct Notes;

impl Observer for Notes {
    fn started(&mut self, _: usize, _: usize) {}
    fn note(&mut self, line: &str) {
        eprintln!("{line}");
    }
    fn finished(&mut self, _: &CandidateResult) {}
}
