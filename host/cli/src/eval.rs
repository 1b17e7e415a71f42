//! `ekb eval`: the evaluation protocol over candidates (generated ones in a folder, or the
//! built-in default schedule) on a device, stored in a run directory as each candidate
//! finishes; `--resume` continues an interrupted run. `ekb bench` is this command with the
//! built-in defaults.
//!
//! The work is done by `ekb_eval::evaluate`; this file chooses the instances, the device and the
//! settings, shows progress, and prints the summary of the finished run.

use crate::files;
use crate::tasks::{self as task_cli, Select};
use ekb_deploy::transport::{self, Device, RemoteOptions};
use ekb_eval::evaluate::candidate::Candidates;
use ekb_eval::evaluate::{self, Baseline, Config, Observer};
use ekb_eval::metrics;
use ekb_eval::report::{self, Format};
use ekb_eval::results::{utc_now, CandidateResult, Run};
use ekb_eval::tasks::{Backend, Filter};
use ekb_ir::TargetProfile;
use ekb_lower::Schedule;
use ekb_wire::payload::TimingSettings;
use ekb_wire::protocol::{PairedSettings, MAX_BUDGET_MS, MAX_TARGET_RSE, MAX_THREADS};
use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

/// Evaluate candidates: compile, check on 3 seeds, time against a baseline, store the results.
#[derive(clap::Args)]
#[command(after_help = "Examples:\n  \
ekb eval --candidates cands/ --out runs/gpt4o           generated candidates vs the naive lowering\n  \
ekb eval --candidates cands/ --out runs/gpt4o --resume  continue an interrupted run\n  \
ekb eval conv --level 1 --baseline default --out runs/conv   the built-in default vs itself\n  \
ekb eval --candidates cands/ --samples 5 --budget 2 --out runs/k5\n  \
ekb eval --level 1 --backend opencl --out runs/cl      the OpenCL instances on this machine's OpenCL device\n  \
ekb eval --backend cuda --cuda-target jetson-orin --device ssh://orin --out runs/orin\n  \
ekb eval --level 1 --baseline engine:onnxruntime --out runs/ort   the built-in default vs onnxruntime\n  \
ekb eval 'relu*' --queue redis://broker:6379 --out runs/pool   on the workers of a pool (`ekb worker`)\n  \
ekb report runs/gpt4o                                   the metric tables of a run")]
pub struct Args {
    #[command(flatten)]
    pub select: Select,
    #[command(flatten)]
    pub eval: EvalArgs,
    /// The folder `ekb generate` wrote; without it the built-in `default` schedule is the
    /// candidate of every instance.
    #[arg(long)]
    pub candidates: Option<PathBuf>,
    /// Candidates per instance to evaluate (sample-0 .. sample-K-1).
    #[arg(long, default_value_t = 1)]
    pub samples: u32,
    /// The run directory [default: runs/eval-TIMESTAMP].
    #[arg(long)]
    pub out: Option<PathBuf>,
    #[command(flatten)]
    pub pool: crate::submit::QueueArgs,
}

/// Settings shared by `ekb eval` and `ekb bench`.
#[derive(clap::Args)]
pub struct EvalArgs {
    /// What candidates are timed against: `naive` or `default` (the task's own graph lowered
    /// with that schedule), `candidates:DIR` (sample 0 of another candidate folder, e.g.
    /// another model's), or `engine:NAME`, an inference engine on this machine
    /// (`engine:onnxruntime`, `engine:mnn`, `engine:tvm`, `engine:tvm-tuned:TRIALS` for CPU
    /// instances; `engine:torch`, `engine:torch-compile` for CUDA instances).
    #[arg(long, default_value = "naive")]
    pub baseline: String,
    /// The target profile of the CPU backend.
    #[arg(long, default_value = "host")]
    pub target: String,
    /// The target profile of the cuda backend (its GPU's limits; NVRTC compiles for the
    /// device's own architecture).
    #[arg(long, default_value = "h200")]
    pub cuda_target: String,
    /// The target profile of the opencl backend.
    #[arg(long, default_value = "pocl")]
    pub opencl_target: String,
    /// `local`, `qemu`, `ssh://[user@]host[:port]` or `adb[:serial]` [default: local for this
    /// machine's architecture, qemu for another].
    #[arg(long)]
    pub device: Option<String>,
    /// An ssh/scp option, as for `ssh -o` (repeatable).
    #[arg(long = "ssh-option", value_name = "KEY=VALUE")]
    pub ssh_options: Vec<String>,
    /// Seconds of timing per candidate (pairs stop earlier once the median ratio is within
    /// the target error).
    #[arg(long, default_value_t = 2.0)]
    pub budget: f64,
    /// Seconds one execution of either side may take before it is killed as a timeout.
    #[arg(long, default_value_t = 20.0)]
    pub timeout: f64,
    /// Stop a pair once the relative standard error of the median ratio is below this.
    #[arg(long, default_value_t = 0.01)]
    pub target_rse: f64,
    /// A pair is stable when half the width of the median ratio's 95% interval is at most this
    /// fraction of the median (0.02: within +-2%); one that stays wider after every attempt is
    /// reported as unstable (its speedup is kept but not counted).
    #[arg(long, default_value_t = 0.02)]
    pub max_ci: f64,
    /// Flush caches between samples (cold timing) instead of warm.
    #[arg(long)]
    pub cold: bool,
    /// Threads for parallel loops on the device [default: the runtime's].
    #[arg(long, value_parser = clap::value_parser!(u32).range(0..=i64::from(MAX_THREADS)))]
    pub threads: Option<u32>,
    /// Pin the device's kernel threads to these CPUs (`4-7`, `0,2`).
    #[arg(long, value_name = "LIST", conflicts_with = "big_cores")]
    pub cpus: Option<String>,
    /// Pin the device's kernel threads to its fastest cluster (a big.LITTLE board's big cores).
    #[arg(long)]
    pub big_cores: bool,
    /// The task folder (default: the nearest `tasks/` with a `level1/` folder, from here up).
    #[arg(long)]
    pub dir: Option<PathBuf>,
    /// Continue the run in `--out`, skipping candidates already stored (with the seeds it
    /// stored).
    #[arg(long)]
    pub resume: bool,
    /// The correctness seeds, to reproduce a run (`--seeds 17,4242,9`) [default: three drawn at
    /// random per run and recorded in its run.json, so no candidate can be fitted to known
    /// inputs].
    #[arg(long, value_delimiter = ',', value_name = "SEED,...")]
    pub seeds: Vec<u64>,
    /// One line per candidate only, no progress bar.
    #[arg(long)]
    pub plain: bool,
}

impl EvalArgs {
    /// The settings `flags` give (as on `ekb eval`'s command line), every other at its default:
    /// for a command that evaluates through the protocol without `ekb eval`'s flags of its own
    /// (`ekb tune --queue`).
    pub fn from_flags(flags: &[String]) -> Result<EvalArgs, String> {
        use clap::Parser;
        #[derive(clap::Parser)]
        struct Only {
            #[command(flatten)]
            eval: EvalArgs,
        }
        let argv = std::iter::once("ekb".to_string()).chain(flags.iter().cloned());
        Only::try_parse_from(argv).map(|o| o.eval).map_err(|e| format!("error: {e}"))
    }

    fn baseline(&self) -> Result<Baseline, String> {
        Baseline::parse(&self.baseline).map_err(|d| d.to_string())
    }
}

/// The settings, device and candidates of a run, ready to evaluate.
pub struct Plan {
    pub config: Config,
    /// The device as the user named it, or the default for the CPU target's architecture.
    pub device: Device,
    pub remote: RemoteOptions,
}

impl Plan {
    /// A link to the device for each of `backends`: the static runtime for the CPU, the GPU
    /// runtime for `cuda` and `opencl`, each for its target's architecture (built first in a
    /// workspace checkout).
    pub fn links(&self, backends: &[Backend]) -> Result<BTreeMap<Backend, evaluate::DeviceLink>, String> {
        backends.iter().map(|&b| Ok((b, self.connector()(b)?))).collect()
    }

    /// Opens a link to the device for one backend, each time it is called (what `ekb agent`
    /// does for every batch).
    pub fn connector(&self) -> impl FnMut(Backend) -> Result<evaluate::DeviceLink, String> {
        let (device, remote, targets) =
            (self.device.clone(), self.remote.clone(), self.config.targets.clone());
        // Each backend's runtime is found (or built) once.
        let mut runtimes = BTreeMap::new();
        move |b| {
            let runtime = match runtimes.get(&b) {
                Some(r) => r,
                None => {
                    let arch = crate::source::arch(&targets[&b])?;
                    let found = crate::runtime::find_or_build(arch, b != Backend::Cpu)?;
                    runtimes.entry(b).or_insert(found)
                }
            };
            let transport = transport::connect(&device, runtime, &remote).map_err(|d| d.to_string())?;
            Ok(evaluate::DeviceLink { transport, name: device.to_string() })
        }
    }
}

/// How many correctness seeds a run draws.
const SEEDS_PER_RUN: usize = 3;

/// The seeds of a run into `out`: `--seeds`, else those of the run being resumed, else three
/// drawn at random (distinct).
fn seeds(e: &EvalArgs, out: &Path) -> Result<Vec<u64>, String> {
    if !e.seeds.is_empty() {
        let mut sorted = e.seeds.clone();
        sorted.sort_unstable();
        if sorted.windows(2).any(|w| w[0] == w[1]) {
            return Err(format!("error: `--seeds` lists a seed twice: {:?}", e.seeds));
        }
        return Ok(e.seeds.clone());
    }
    if e.resume && out.join(ekb_eval::results::RUN_FILE).exists() {
        return Ok(ekb_eval::results::load_run(out).map_err(|d| d.to_string())?.info.seeds);
    }
    let mut drawn: Vec<u64> = Vec::new();
    while drawn.len() < SEEDS_PER_RUN {
        // Small enough to type back into `--seeds` or `ekb interp --seed`.
        let s = random_u64()? % 1_000_000_000;
        if !drawn.contains(&s) {
            drawn.push(s);
        }
    }
    Ok(drawn)
}

/// Eight bytes from the system's random source.
fn random_u64() -> Result<u64, String> {
    use std::io::Read;
    let mut b = [0u8; 8];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut b))
        .map_err(|e| format!("error: cannot draw the run's seeds from /dev/urandom: {e}\n  = hint: fix them with `--seeds A,B,C`"))?;
    Ok(u64::from_le_bytes(b))
}

pub fn plan(
    e: &EvalArgs,
    candidates: Candidates,
    samples: u32,
    command: Vec<String>,
    out: &Path,
) -> Result<Plan, String> {
    if !(e.budget > 0.0 && e.budget.is_finite()) {
        return Err(format!("error: `--budget {}` must be a positive number of seconds", e.budget));
    }
    let target: TargetProfile = crate::source::target(&e.target)?;
    let arch = crate::source::arch(&target)?;
    let device = match &e.device {
        Some(d) => Device::parse(d).map_err(|d| d.to_string())?,
        None => Device::default_for(arch),
    };
    let targets = BTreeMap::from([
        (Backend::Cpu, target),
        (Backend::Cuda, crate::source::target(&e.cuda_target)?),
        (Backend::Opencl, crate::source::target(&e.opencl_target)?),
    ]);
    let remote = RemoteOptions { ssh_options: e.ssh_options.clone(), remote_dir: None };
    let timing = TimingSettings {
        budget_ms: (e.budget * 1000.0).round() as u64,
        target_rse: e.target_rse,
        cold_cache: e.cold,
        ..TimingSettings::DEFAULT
    };
    // The protocol's request bounds (`docs/protocol.md`), refused here rather than by the device.
    let max_s = MAX_BUDGET_MS as f64 / 1000.0;
    if !(e.budget > 0.0 && e.budget <= max_s) {
        return Err(format!("error: `--budget {}` must be a number of seconds in (0, {max_s}]", e.budget));
    }
    if !(e.timeout > 0.0 && e.timeout <= max_s) {
        return Err(format!("error: `--timeout {}` must be a number of seconds in (0, {max_s}]", e.timeout));
    }
    if !(0.0..=MAX_TARGET_RSE).contains(&e.target_rse) {
        return Err(format!(
            "error: `--target-rse {}` must be a number in 0..={MAX_TARGET_RSE}",
            e.target_rse
        ));
    }
    if !(e.max_ci > 0.0 && e.max_ci.is_finite()) {
        return Err(format!(
            "error: `--max-ci {}` must be a positive number (the interval's relative half-width: 0.02 is +-2%)",
            e.max_ci
        ));
    }
    let paired = PairedSettings { threads: e.threads, max_ci: e.max_ci, ..PairedSettings::DEFAULT };
    let config = Config {
        candidates,
        baseline: e.baseline()?,
        samples,
        seeds: seeds(e, out)?,
        timing,
        paired,
        targets,
        exec_timeout: std::time::Duration::from_secs_f64(e.timeout),
        pinning: match (&e.cpus, e.big_cores) {
            (Some(list), _) => vec!["--cpus".into(), list.clone()],
            (None, true) => vec!["--big-cores".into()],
            (None, false) => Vec::new(),
        },
        command,
    };
    Ok(Plan { config, device, remote })
}

pub fn run(args: Args) -> Result<ExitCode, String> {
    if args.samples == 0 {
        return Err("error: `--samples` must be at least 1".into());
    }
    let candidates = match &args.candidates {
        Some(d) => Candidates::Dir(d.clone()),
        None => Candidates::Builtin(Schedule::Default),
    };
    let out = args.out.clone().unwrap_or_else(|| default_out("eval"));
    let filter = task_cli::filter(&args.select)?;
    if let Some(pool) = args.pool.pool()? {
        return crate::submit::evaluate_on_pool(&args.eval, filter, candidates, args.samples, &out, &pool);
    }
    evaluate_selection(&args.eval, filter, candidates, args.samples, &out)
}

/// Evaluates the instances of the tasks `filter` selects on its backend (the CPU when it names
/// none) into `out`, then prints the report: what `ekb eval` and `ekb bench` share.
pub fn evaluate_selection(
    e: &EvalArgs,
    mut filter: Filter,
    candidates: Candidates,
    samples: u32,
    out: &Path,
) -> Result<ExitCode, String> {
    let command: Vec<String> = std::env::args().collect();
    let plan = plan(e, candidates, samples, command, out)?;
    let (suite, broken) = task_cli::load(&e.dir)?;
    if broken {
        return Err("error: fix the task files above first".into());
    }
    let backend = *filter.backend.get_or_insert(Backend::Cpu);
    // Before any runtime is found or built: an engine that cannot time these instances here.
    if let Baseline::Engine(engine) = &plan.config.baseline {
        engine.check(backend, &plan.device.to_string()).map_err(|d| d.to_string())?;
    }
    let tasks = task_cli::select(&filter, &suite)?;
    let planned = evaluate::instances(&tasks, &[backend]);
    if planned.is_empty() {
        return Err("error: no instance matches the selection".into());
    }
    let links = plan.links(&[backend])?;
    let run = execute(&tasks, planned, plan, links, out, e.resume, e.plain)?;
    print_report(&run)?;
    Ok(ExitCode::SUCCESS)
}

/// `runs/KIND-YYYYMMDD-HHMMSS`.
pub fn default_out(kind: &str) -> PathBuf {
    let stamp: String = utc_now().chars().filter(|c| c.is_ascii_digit()).collect();
    PathBuf::from("runs").join(format!("{kind}-{}-{}", &stamp[..8], &stamp[8..]))
}

/// Runs the evaluation with progress on stderr.
pub fn execute(
    tasks: &[&ekb_eval::tasks::Task],
    planned: Vec<ekb_eval::results::Instance>,
    plan: Plan,
    links: BTreeMap<Backend, evaluate::DeviceLink>,
    out: &std::path::Path,
    resume: bool,
    plain: bool,
) -> Result<Run, String> {
    let mut progress = Progress::new(!plain && std::io::stderr().is_terminal());
    let targets: Vec<String> =
        links.keys().map(|b| format!("{} on {}", b.name(), plan.config.targets[b].name)).collect();
    eprintln!(
        "evaluating {} instance(s) x {} sample(s) on {} ({}), baseline {}, into {}",
        planned.len(),
        plan.config.samples,
        plan.device,
        targets.join(", "),
        plan.config.baseline.describe(),
        out.display()
    );
    let run =
        evaluate::evaluate(tasks, planned, &plan.config, links, out, resume, &mut progress).map_err(|d| {
            let mut s = d.to_string();
            if out.join(ekb_eval::results::RUN_FILE).exists() {
                s.push_str(&format!(
                    "\nthe results so far are kept in {}; continue with the same command and `--resume`",
                    out.display()
                ));
            }
            s
        })?;
    progress.finish();
    for w in &run.warnings {
        eprintln!("warning: {w}");
    }
    Ok(run)
}

/// Progress: a line per candidate, and on a terminal a bar with the count and an estimate of
/// the time left.
pub struct Progress {
    bar: bool,
    total: usize,
    done: usize,
    start_done: usize,
    start: Instant,
}

impl Progress {
    pub fn new(bar: bool) -> Progress {
        Progress { bar, total: 0, done: 0, start_done: 0, start: Instant::now() }
    }

    fn clear(&self) {
        if self.bar {
            eprint!("\r\x1b[2K");
        }
    }

    fn draw(&self) {
        if !self.bar {
            return;
        }
        let width = 30;
        let filled = (self.done * width).checked_div(self.total).unwrap_or(width);
        let fresh = self.done - self.start_done;
        let eta = if fresh > 0 {
            let per = self.start.elapsed().as_secs_f64() / fresh as f64;
            format!("  ~{} left", human_secs(per * (self.total - self.done) as f64))
        } else {
            String::new()
        };
        eprint!("\r[{}{}] {}/{}{eta}", "#".repeat(filled), ".".repeat(width - filled), self.done, self.total);
    }

    pub fn finish(&self) {
        self.clear();
    }
}

fn human_secs(s: f64) -> String {
    if s < 90.0 {
        format!("{s:.0} s")
    } else {
        format!("{:.0} min", s / 60.0)
    }
}

impl Observer for Progress {
    fn started(&mut self, total: usize, done: usize) {
        self.total = total;
        self.done = done;
        self.start_done = done;
        self.start = Instant::now();
        if done > 0 {
            eprintln!("resuming: {done} of {total} candidate(s) already stored");
        }
        self.draw();
    }

    fn note(&mut self, line: &str) {
        self.clear();
        eprintln!("{line}");
        self.draw();
    }

    fn finished(&mut self, r: &CandidateResult) {
        self.done += 1;
        self.clear();
        eprintln!("[{:>w$}/{}] {}", self.done, self.total, result_line(r), w = self.total.to_string().len());
        self.draw();
    }
}

/// One candidate in one line.
pub fn result_line(r: &CandidateResult) -> String {
    let what = format!("{} {} #{}", r.instance.task, r.instance.backend, r.sample);
    let first = |t: &str| t.lines().next().unwrap_or("").trim().to_string();
    let verdict = match (&r.failure, r.correct, &r.timing, &r.baseline_failure) {
        (Some(f), _, _, _) => format!("{} ({})", f.class.name(), first(&f.evidence)),
        (None, true, Some(t), None) => {
            format!("correct, {:.2}x [{:.2}, {:.2}]", t.speedup, t.ci_low, t.ci_high)
        }
        (None, true, _, Some(b)) => format!("correct, not timed: the baseline failed: {}", first(b)),
        (None, false, _, Some(b)) => format!("compiled, not run: the baseline failed: {}", first(b)),
        (None, _, _, None) => "correct, not timed".to_string(),
    };
    let kernels = r.passes.map_or(String::new(), |p| {
        format!(", kernels {} -> {} with the graph passes", p.before.kernels, p.after.kernels)
    });
    format!("{what}: {verdict}  (build {:.1} s, run {:.1} s{kernels})", r.seconds.build, r.seconds.run)
}

/// The report of a finished run on stdout (the terminal tables of `ekb report`), where the time
/// went, and the same report as HTML in the run directory.
pub fn print_report(run: &Run) -> Result<(), String> {
    let comparison = metrics::compare(std::slice::from_ref(run), None).map_err(|d| d.to_string())?;
    print!("{}", report::render(&comparison, Format::Text));
    println!("{}", time_line(&run.results));
    let html = run.dir.join("report.html");
    files::write(&html, report::render(&comparison, Format::Html).as_bytes())?;
    println!("results in {}; the HTML report is {}", run.dir.display(), html.display());
    Ok(())
}

/// Where the time of the stored candidates went, and the throughput with and without the
/// timed samples (what the timing budget buys). Builds are wall time; the compiler's time is
/// summed over its processes, which run side by side with the reference interpreter and each
/// other when an instance's baseline and first candidate are built together; builds done ahead,
/// beside the device phase of the candidate before, are said and not counted in the throughput.
pub fn time_line(results: &[CandidateResult]) -> String {
    let sum = |f: fn(&CandidateResult) -> f64| results.iter().map(f).sum::<f64>();
    let (build, compiler, ahead) =
        (sum(|r| r.seconds.build), sum(|r| r.seconds.compiler), sum(|r| r.seconds.ahead));
    let (device, timed) = (sum(|r| r.seconds.run), sum(|r| r.seconds.timed));
    let total = build - ahead + device;
    let per_min = |secs: f64| if secs > 0.0 { results.len() as f64 * 60.0 / secs } else { 0.0 };
    let beside = if ahead > 0.0 { format!(", {ahead:.1} s of it beside the device") } else { String::new() };
    format!(
        "time: build {build:.1} s (compiler processes {compiler:.1} s, beside the reference and each other{beside}), \
         device {device:.1} s (timed samples {timed:.1} s, loading and checking {:.1} s); {:.0} candidates/min, \
         {:.0}/min without the timed samples",
        device - timed,
        per_min(total),
        per_min(total - timed)
    )
}
