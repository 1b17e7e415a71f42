//! `ekb eval --queue URL`: the run's candidates as jobs for a pool of workers (`ekb worker`),
//! instead of evaluating them here. The run directory is the same as a local run's: `run.json`
//! written first, `results.jsonl` one line per candidate as its result comes back, `--resume`
//! continuing it; `queue.json` names the run's results stream on the broker.
//!
//! What must stay true: the plan (instances, seeds, settings) is made exactly as a local run
//! makes it (`eval::plan`), so a pooled run and a local one of the same command evaluate the
//! same candidates the same way; each job carries what a worker on another machine needs (the
//! task's text, the sample folder's files, the target profile), so workers need no shared files.

use crate::eval::{self, EvalArgs, Progress};
use crate::tasks as task_cli;
use ekb_eval::evaluate::candidate::Candidates;
use ekb_eval::evaluate::{self, Baseline, Observer};
use ekb_eval::results::{BackendEnv, CandidateResult, RunDir};
use ekb_eval::tasks::{Backend, Filter};
use ekb_ir::Diagnostic;
use ekb_queue::broker::Broker;
use ekb_queue::job::{CandidateSource, Job, JobBody, Settings};
use ekb_queue::submit::{results_stream_of, submit, Recorder};
use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Where `--queue` sends the jobs, and how many may be out at once.
pub struct Pool<'a> {
    pub url: &'a str,
    pub depth: usize,
}

/// The job settings of `e`'s evaluation with the run's `seeds`.
pub fn settings(e: &EvalArgs, seeds: &[u64]) -> Settings {
    Settings {
        baseline: e.baseline.clone(),
        seeds: seeds.to_vec(),
        budget_s: e.budget,
        timeout_s: e.timeout,
        target_rse: e.target_rse,
        max_ci: e.max_ci,
        cold: e.cold,
        threads: e.threads,
        cpus: e.cpus.clone(),
        big_cores: e.big_cores,
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
    pool: Pool,
) -> Result<ExitCode, String> {
    if e.device.is_some() {
        return Err("error: `--device` names one device, and `--queue` sends the jobs to a pool\n  \
             = hint: name each worker's device when starting it: `ekb worker --queue URL --device D`"
            .into());
    }
    let command: Vec<String> = std::env::args().collect();
    let plan = eval::plan(e, candidates.clone(), samples, command, out)?;
    if let Baseline::Candidates(_) = plan.config.baseline {
        return Err(
            "error: `--baseline candidates:DIR` is not sent to workers; with `--queue` use `naive`, \
             `default` or `engine:NAME`"
                .into(),
        );
    }
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
    let profile = plan.config.targets[&backend].clone();
    let pool_env = BackendEnv {
        target: profile.name.clone(),
        device: format!("pool {}", pool.url),
        runtime: "ekb worker".into(),
        runtime_version: "each result's device".into(),
        arch: profile.cpu.triple.split('-').next().unwrap_or("").into(),
        cpu_model: "each result's device".into(),
        cores: 0,
        memory_bytes: 0,
        gpu: None,
    };
    let tools = BTreeMap::from([("ekb".to_string(), env!("CARGO_PKG_VERSION").to_string())]);
    let backends = BTreeMap::from([(backend.name().to_string(), pool_env)]);
    let info = evaluate::run_info(&plan.config, backends, tools, planned);
    let (dir, done) = evaluate::open_run(out, &info, e.resume).map_err(|d| d.to_string())?;
    let mut broker = Broker::connect(pool.url).map_err(|d| d.to_string())?;
    if broker.syncs_every_write() == Some(false) {
        eprintln!(
            "warning: the broker at {} does not sync every write (run it with `--appendonly yes --appendfsync always`): \
             a broker crash may lose jobs and results; resume the run then",
            pool.url
        );
    }
    let reply = results_stream_of(dir.dir(), pool.url).map_err(|d| d.to_string())?;
    let by_name: BTreeMap<&str, &ekb_eval::tasks::Task> =
        tasks.iter().map(|t| (t.name.as_str(), *t)).collect();
    let settings = settings(e, &plan.config.seeds);
    let mut jobs = Vec::new();
    for inst in &info.instances {
        let task = by_name[inst.task.as_str()];
        for sample in (0..samples).filter(|s| !done.contains(&(inst.task.clone(), inst.backend.clone(), *s)))
        {
            let candidate = match &candidates {
                Candidates::Builtin(s) => CandidateSource::Builtin(s.name().into()),
                Candidates::Dir(d) => {
                    CandidateSource::Files(sample_files(d, &inst.task, &inst.backend, sample)?)
                }
            };
            let body = JobBody {
                instance: inst.clone(),
                sample,
                task: task.source.text.clone(),
                candidate,
                settings: settings.clone(),
                profile: profile.clone(),
            };
            jobs.push(Job::new(&reply, body));
        }
    }
    let mut progress = Progress::new(!e.plain && std::io::stderr().is_terminal());
    eprintln!(
        "submitting {} job(s) of {} instance(s) x {} sample(s) to {} (stream ekb:jobs:{}, at most {} out), baseline {}, into {}",
        jobs.len(),
        info.instances.len(),
        samples,
        pool.url,
        profile.name,
        pool.depth,
        plan.config.baseline.describe(),
        out.display()
    );
    progress.started(info.instances.len() * samples as usize, done.len());
    let mut store = Store { dir, progress: &mut progress };
    let tally = submit(&mut broker, &reply, jobs, pool.depth, &mut store).map_err(|d| {
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

/// The run directory, recording results as they come back, with progress.
struct Store<'a> {
    dir: RunDir,
    progress: &'a mut Progress,
}

impl Recorder for Store<'_> {
    fn record(&mut self, result: &CandidateResult) -> Result<(), Diagnostic> {
        self.dir.append(result)?;
        self.progress.finished(result);
        Ok(())
    }

    fn note(&mut self, line: &str) {
        self.progress.note(line);
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
