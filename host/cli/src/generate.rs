//! `ekb generate`: candidates from a model for a set of instances (task, backend).
//!
//! For every selected instance and every sample it builds the prompt (`ekb_agent::prompt`), asks
//! the provider (behind the response cache unless `--no-cache`), extracts the candidate and
//! stores, under `OUT/TASK/BACKEND/sample-N/`: `prompt.json` (the request), `answer.txt` (the raw
//! answer), `candidate.ekir` (`.c`, `.cu`, `.cl` in native mode, `.trace` in trace mode; absent
//! when nothing usable was found) and `meta.json` (provider, model, parameters, token usage, cache hit, extraction
//! outcome or the provider's error). Up to `--jobs` requests are in flight at once. A provider
//! error on one sample, or an answer holding no candidate, is printed (the sample and what was
//! missing), recorded, and the run goes on; so is an instance whose prompt cannot be made (in
//! trace mode, a graph that does not lower); the exit status is 1 when any of these happened.

use crate::files;
use ekb_agent::{
    build_prompt, extract, Cached, CandidateKind, CommandProvider, Mode, OpenAi, OpenAiConfig, Provider,
    Replay, Request,
};
use ekb_eval::tasks::{self, Backend, Filter};
use ekb_ir::target::TargetProfile;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Candidates from a model (OpenAI-compatible API, a command, or a replay file).
#[derive(clap::Args)]
#[command(after_help = "Examples:\n  \
ekb generate 'relu*' --provider openai --base-url http://127.0.0.1:8000/v1 --model qwen --out cands/\n  \
ekb generate conv --provider openai --base-url https://api.openai.com/v1 --api-key-env OPENAI_API_KEY \\\n      \
--model gpt-4o --samples 5 --backend cpu --out cands/\n  \
ekb generate add --provider command --command 'my-agent --quiet' --out cands/\n  \
ekb generate relu_resnet18_stem --mode trace --backend cpu --provider command --command my-agent --out cands/\n  \
ekb generate add --provider replay --replay answers.jsonl --out cands/")]
pub struct Args {
    /// Task name pattern: a glob with `*`/`?`, otherwise a substring (default: every task).
    pattern: Option<String>,
    #[command(flatten)]
    llm: ProviderArgs,
    /// Seconds one request (or command run) may take.
    #[arg(long, default_value_t = 300)]
    timeout: u64,
    /// Only this backend (cpu, cuda, opencl); default: every backend of each task.
    #[arg(long)]
    backend: Option<String>,
    /// Only this level (1, 2 or 3).
    #[arg(long)]
    level: Option<u8>,
    /// unified (answer in the IR), native (answer in the backend's source) or trace (a schedule
    /// trace over the task's naive lowering, docs/schedules.md).
    #[arg(long, default_value = "unified")]
    mode: String,
    /// Candidates per instance (for Compile@k and Correct@k); sample i uses seed SEED+i.
    #[arg(long, default_value_t = 1)]
    samples: u32,
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Sampling temperature (default: 0 for one sample, 0.8 for several).
    #[arg(long)]
    temperature: Option<f64>,
    #[arg(long, default_value_t = 4096)]
    max_tokens: u32,
    /// Target profiles whose limits the prompts give, per backend.
    #[arg(long, default_value = "host")]
    cpu_target: String,
    #[arg(long, default_value = "jetson-orin")]
    cuda_target: String,
    #[arg(long, default_value = "pocl")]
    opencl_target: String,
    /// The response cache folder (default: OUT/.cache).
    #[arg(long)]
    cache: Option<PathBuf>,
    /// Send every request, even one answered before.
    #[arg(long)]
    no_cache: bool,
    /// The task folder (default: the nearest `tasks/` with a `level1/` folder, from here up).
    #[arg(long)]
    dir: Option<PathBuf>,
    /// Where candidates go.
    #[arg(long)]
    out: PathBuf,
    /// Requests in flight at once.
    #[arg(long, default_value_t = 4)]
    jobs: usize,
}

/// Where a model's answers come from: shared by `ekb generate` and `ekb agent`.
#[derive(clap::Args)]
pub struct ProviderArgs {
    /// Where answers come from: openai, command or replay.
    #[arg(long)]
    pub provider: Option<String>,
    /// openai: the API base URL (`.../v1`).
    #[arg(long)]
    pub base_url: Option<String>,
    /// openai: the environment variable holding the API key (none: no Authorization header).
    #[arg(long)]
    pub api_key_env: Option<String>,
    /// The model name sent with each request (and part of the cache key).
    #[arg(long, default_value = "default")]
    pub model: String,
    /// command: the program and its arguments, split at whitespace.
    #[arg(long)]
    pub command: Option<String>,
    /// replay: the JSON-lines file of recorded answers.
    #[arg(long)]
    pub replay: Option<PathBuf>,
}

fn backend_of(s: &str) -> Result<Backend, String> {
    Backend::ALL
        .into_iter()
        .find(|b| b.name() == s)
        .ok_or_else(|| format!("error: unknown backend `{s}`\n  = expected: one of cpu, cuda, opencl"))
}

/// The provider `a` names; one request (or command run) may take `timeout`.
pub fn provider(a: &ProviderArgs, timeout: Duration) -> Result<Box<dyn Provider>, String> {
    let name = a.provider.as_deref().ok_or("error: `--provider` is required: openai, command or replay")?;
    let missing = |flag: &str| format!("error: `--provider {name}` needs `--{flag}`");
    Ok(match name {
        "openai" => {
            let base = a.base_url.clone().ok_or_else(|| missing("base-url"))?;
            let mut cfg = OpenAiConfig::new(base, a.api_key_env.clone());
            cfg.timeout = timeout;
            Box::new(OpenAi::new(cfg).map_err(|e| format!("error: {e}"))?)
        }
        "command" => {
            let line = a.command.as_deref().ok_or_else(|| missing("command"))?;
            let mut words = line.split_whitespace().map(String::from);
            let program = words.next().ok_or_else(|| missing("command"))?;
            Box::new(CommandProvider::new(program, words.collect(), timeout))
        }
        "replay" => {
            let file = a.replay.as_deref().ok_or_else(|| missing("replay"))?;
            Box::new(Replay::load(file).map_err(|e| format!("error: {e}"))?)
        }
        other => {
            return Err(format!(
                "error: unknown provider `{other}`\n  = expected: one of openai, command, replay"
            ))
        }
    })
}

/// The provider, behind the cache unless `--no-cache`.
enum Front {
    Cached(Cached<Box<dyn Provider>>),
    Plain(Box<dyn Provider>),
}

impl Front {
    fn get(&self) -> &dyn Provider {
        match self {
            Front::Cached(c) => c,
            Front::Plain(p) => p.as_ref(),
        }
    }

    fn hits(&self) -> usize {
        match self {
            Front::Cached(c) => c.hits(),
            Front::Plain(_) => 0,
        }
    }
}

pub fn run(a: Args) -> Result<ExitCode, String> {
    let mode = match a.mode.as_str() {
        "unified" => Mode::Unified,
        "native" => Mode::Native,
        "trace" => Mode::Trace,
        m => return Err(format!("error: unknown mode `{m}`\n  = expected: unified, native or trace")),
    };
    let only = a.backend.as_deref().map(backend_of).transpose()?;
    let root = match &a.dir {
        Some(d) => d.clone(),
        None => {
            let cwd = std::env::current_dir().map_err(|e| format!("error: no current directory: {e}"))?;
            tasks::find_root(&cwd).ok_or("error: no task folder found: no `tasks/level1/` here or in a parent folder\n  = hint: pass `--dir PATH/TO/tasks`")?
        }
    };
    let suite = tasks::load_suite(&root).map_err(|d| d.to_string())?;
    for d in &suite.errors {
        eprint!("{d}");
    }
    let filter = Filter { level: a.level, backend: only, pattern: a.pattern.clone(), ..Filter::default() };
    let selected = suite.select(&filter);
    if selected.is_empty() {
        return Err("error: no task matches the selection\n  = hint: `ekb tasks list` shows the tasks".into());
    }
    let profiles =
        [(Backend::Cpu, &a.cpu_target), (Backend::Cuda, &a.cuda_target), (Backend::Opencl, &a.opencl_target)]
            .into_iter()
            .map(|(b, n)| TargetProfile::load(n).map(|p| (b, p)).map_err(|e| format!("error: {e}")))
            .collect::<Result<Vec<_>, _>>()?;
    let front = match provider(&a.llm, Duration::from_secs(a.timeout))? {
        p if a.no_cache => Front::Plain(p),
        p => Front::Cached(Cached::new(p, a.cache.clone().unwrap_or_else(|| a.out.join(".cache")))),
    };
    let prov = front.get();
    let temperature = a.temperature.unwrap_or(if a.samples > 1 { 0.8 } else { 0.0 });
    let mut jobs = Vec::new();
    let mut unprompted = 0;
    for task in selected {
        for backend in task.meta.backends().into_iter().filter(|b| only.is_none_or(|o| o == *b)) {
            let profile = &profiles.iter().find(|(b, _)| *b == backend).expect("a profile per backend").1;
            let messages = match build_prompt(task, backend, profile, mode) {
                Ok(m) => m,
                Err(ds) => {
                    eprintln!(
                        "error: {} on {}: no prompt: the graph does not lower",
                        task.name,
                        backend.name()
                    );
                    ds.iter().for_each(|d| eprint!("{d}"));
                    unprompted += 1;
                    continue;
                }
            };
            for i in 0..a.samples {
                let req = Request {
                    model: a.llm.model.clone(),
                    messages: messages.clone(),
                    temperature,
                    max_tokens: a.max_tokens,
                    seed: Some(a.seed + u64::from(i)),
                };
                let dir = a.out.join(&task.name).join(backend.name()).join(format!("sample-{i}"));
                let meta = serde_json::json!({
                    "task": task.name, "backend": backend.name(), "level": task.meta.level,
                    "mode": mode.name(), "provider": prov.id(), "model": req.model, "seed": req.seed,
                    "temperature": temperature, "max_tokens": a.max_tokens, "target": profile.name,
                });
                jobs.push(Job {
                    req,
                    dir,
                    meta,
                    backend,
                    what: format!("{} on {} sample {i}", task.name, backend.name()),
                });
            }
        }
    }
    let next = AtomicUsize::new(0);
    let outcomes = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..a.jobs.max(1).min(jobs.len()) {
            scope.spawn(|| {
                while let Some(job) = jobs.get(next.fetch_add(1, Ordering::Relaxed)) {
                    let outcome = one(job, prov, mode);
                    outcomes.lock().expect("no worker panics").push(outcome);
                }
            });
        }
    });
    let outcomes = outcomes.into_inner().expect("no worker panics");
    if let Some(Err(e)) = outcomes.iter().find(|o| o.is_err()) {
        return Err(e.clone());
    }
    let count = |o: Outcome| outcomes.iter().filter(|x| x.as_ref().is_ok_and(|x| *x == o)).count();
    let (failed, empty) = (count(Outcome::ProviderError), count(Outcome::NoCandidate));
    let unprompted_note =
        if unprompted > 0 { format!(", {unprompted} instance(s) without a prompt") } else { String::new() };
    println!(
        "{} sample(s) in {}: {failed} provider error(s), {empty} without a candidate, {} from the cache{unprompted_note}",
        jobs.len(),
        a.out.display(),
        front.hits()
    );
    Ok(if failed + empty + unprompted > 0 { ExitCode::FAILURE } else { ExitCode::SUCCESS })
}

/// One sample to ask for.
struct Job {
    req: Request,
    dir: PathBuf,
    /// The metadata known before asking.
    meta: serde_json::Value,
    backend: Backend,
    /// `TASK on BACKEND sample I`, for messages.
    what: String,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Candidate,
    NoCandidate,
    ProviderError,
}

/// Asks for one sample and stores everything about it; `Err` only when the files cannot be
/// written.
fn one(job: &Job, prov: &dyn Provider, mode: Mode) -> Result<Outcome, String> {
    let dir = &job.dir;
    std::fs::create_dir_all(dir).map_err(|e| format!("error: cannot create {}: {e}", dir.display()))?;
    files::write(
        &dir.join("prompt.json"),
        &serde_json::to_vec_pretty(&job.req).expect("a request serialises"),
    )?;
    let mut meta = job.meta.clone();
    let t = Instant::now();
    let outcome = match prov.complete(&job.req) {
        Ok(resp) => {
            meta["seconds"] = t.elapsed().as_secs_f64().into();
            meta["usage"] = serde_json::to_value(resp.usage).expect("usage serialises");
            meta["cached"] = resp.cached.into();
            files::write(&dir.join("answer.txt"), resp.text.as_bytes())?;
            match extract(&resp.text, mode) {
                Ok(c) => {
                    let ext = match (c.kind, job.backend) {
                        (CandidateKind::L0 | CandidateKind::L1, _) => "ekir",
                        (CandidateKind::Native, Backend::Cpu) => "c",
                        (CandidateKind::Native, Backend::Cuda) => "cu",
                        (CandidateKind::Native, Backend::Opencl) => "cl",
                        (CandidateKind::Trace, _) => "trace",
                    };
                    files::write(&dir.join(format!("candidate.{ext}")), c.text.as_bytes())?;
                    meta["extracted"] = serde_json::json!({
                        "kind": format!("{:?}", c.kind), "parses": c.parses, "parse_error": c.parse_error,
                    });
                    Outcome::Candidate
                }
                Err(e) => {
                    eprintln!("error: {}: no candidate: {e}", job.what);
                    meta["extracted"] = serde_json::json!({ "error": e.to_string() });
                    Outcome::NoCandidate
                }
            }
        }
        Err(e) => {
            eprintln!("error: {}: {e}", job.what);
            meta["error"] = e.to_string().into();
            Outcome::ProviderError
        }
    };
    files::write(&dir.join("meta.json"), &serde_json::to_vec_pretty(&meta).expect("meta serialises"))?;
    Ok(outcome)
}
