//! `ekb tune`: the offline tuner (`ekb_tune`) from the command line. It picks the workloads (a
//! graph file, the anchor workloads of `ekb bench --engines`, or tasks of the suite), opens the
//! tuning database, runs the search within the budget with a progress line, and prints a table
//! of each workload's default and tuned times; `--export DIR` writes the tuned programs as a
//! candidate folder for `ekb eval --candidates DIR`. With `--queue URL` the candidates are
//! measured by a pool of workers instead of in this process (`tune_pool.rs`).

use crate::files;
use crate::submit::QueueArgs;
use crate::tasks::{self as task_cli, Select};
use crate::tune_pool::PoolBench;
use ekb_deploy::driver::{self, BackendChoice, CompileOptions, Program, Sources, Stage};
use ekb_eval::evaluate::candidate::Candidates;
use ekb_ir::l1::print::print as print_l1;
use ekb_ir::TargetProfile;
use ekb_lower::Schedule;
use ekb_tune::remote::Remote;
use ekb_tune::schedule::{self, Budget};
use ekb_tune::space::Space;
use ekb_tune::{Db, Event, Outcome, TuneOptions, Tuner, Workload};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// Search the default schedule's knobs of each workload for the fastest correct point, measured
/// on this machine: an evolutionary search guided by a cost model (gradient-boosted trees over
/// loop-nest features) fitted online, every candidate timed paired with the best so far and
/// recorded in the tuning database (docs/tuning.md).
#[derive(clap::Args)]
#[command(
    long_about = "Search the default schedule's knobs of each workload for the fastest correct point: an \
evolutionary search guided by a cost model (gradient-boosted trees over loop-nest features) fitted \
online, every candidate recorded in the tuning database (docs/tuning.md).\n\n\
Here, each candidate is loaded into this process, checked on seed 0 and timed paired with the best \
so far. With `--queue URL`, each batch is sent as jobs to a pool of workers (`ekb worker --target \
TARGET`, docs/scaleout.md), which evaluate every candidate as `ekb eval` does (seeds 0, 1 and 2, \
paired timing against the default schedule on their device); the database then holds each \
candidate's ratio to the default times the default's time, under one device name for the pool. \
The workloads are then tasks of the suite, and TARGET can be a board's profile.",
    after_help = "Examples:\n  \
ekb tune model.ekir --trials 64                 one graph, 64 trials, database tuning/host.jsonl\n  \
ekb tune --anchors --trials 64                  the five anchor workloads of ekb bench --engines\n  \
ekb tune --anchors conv --trials 256 --resume   continue a tune to 256 trials\n  \
ekb tune matmul --level 1 --total-trials 200    Level-1 CPU tasks, 200 trials shared\n  \
ekb tune --anchors --export tuned/              the best programs as candidates for ekb eval\n  \
ekb bench --engines --db tuning/host.jsonl      the tuned anchors next to the engines\n  \
ekb tune matmul --level 1 --target rk3588 --queue redis://broker:6379   measured by the rk3588 workers\n\
The database is JSON lines, one record per measured candidate; a killed tune loses at most the \
candidate in flight, and --resume continues it."
)]
pub struct Args {
    #[command(flatten)]
    select: Select,
    /// The task folder (default: the nearest `tasks/` with a `level1/` folder, from here up).
    #[arg(long)]
    dir: Option<PathBuf>,
    #[command(flatten)]
    pool: QueueArgs,
    /// The workloads are the anchor workloads of `ekb bench --engines` whose name contains the
    /// pattern (all without one), not tasks.
    #[arg(long)]
    anchors: bool,
    /// Trials per workload (the default schedule counts as one).
    #[arg(long, default_value_t = 64)]
    trials: usize,
    /// Trials in all, shared between the workloads by the task scheduler (instead of --trials
    /// each).
    #[arg(long)]
    total_trials: Option<usize>,
    /// Target profile: one of this machine (cpu = "native"), as candidates are measured here;
    /// with `--queue`, any profile (its workers measure them).
    #[arg(long, default_value = "host")]
    target: String,
    /// The tuning database [default: tuning/TARGET.jsonl].
    #[arg(long)]
    db: Option<PathBuf>,
    /// Count this machine's records of each workload in the database as trials done.
    #[arg(long)]
    resume: bool,
    /// Candidates measured between two fits of the cost model.
    #[arg(long, default_value_t = 8)]
    batch: usize,
    /// Threads of the kernels' parallel loops (0: this machine's cores).
    #[arg(long, default_value_t = 0)]
    threads: usize,
    /// Rounds of each paired comparison with the best so far.
    #[arg(long, default_value_t = 4)]
    rounds: usize,
    /// Milliseconds each side is timed per round.
    #[arg(long, default_value_t = 40)]
    round_ms: u64,
    /// Seed of the search.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Do not tune: write the best record of each workload as a candidate folder
    /// (DIR/WORKLOAD/cpu/sample-0/candidate.ekir, the tuned loop program, and its recipe).
    #[arg(long)]
    export: Option<PathBuf>,
}

/// The workloads `args` selects.
fn workloads(args: &Args) -> Result<Vec<Workload>, String> {
    let pattern = args.select.pattern.as_deref();
    if let Some(path) = pattern.map(Path::new).filter(|p| p.is_file() && !args.anchors) {
        let (src, program) = crate::source::load(path).map_err(|ds| crate::source::render(&ds))?;
        let crate::source::Program::Graph(g) = program else {
            return Err(format!(
                "error: `{}` is an L1 loop program; ekb tune searches the schedule of an L0 graph",
                path.display()
            ));
        };
        return Ok(vec![Workload::new(g.name.clone(), src, g)]);
    }
    if args.anchors {
        return crate::bench_engines::anchors(pattern);
    }
    let tasks = task_cli::cpu_workloads(&args.select, &args.dir)?;
    if tasks.is_empty() {
        return Err("error: no CPU task matches the selection (a graph file must exist; see --help)".into());
    }
    Ok(tasks)
}

pub fn run(args: Args) -> Result<ExitCode, String> {
    let target = crate::source::target(&args.target)?;
    let pool = args.pool.pool()?;
    if target.cpu.cpu != "native" && pool.is_none() {
        return Err(format!(
            "error: `ekb tune` measures candidates on this machine, and target `{}` is a board (cpu = \"{}\")\n  \
             = hint: tune with a profile of this machine, such as `host`, or have the board's workers measure them: \
             `--queue URL` (docs/scaleout.md)",
            target.name, target.cpu.cpu
        ));
    }
    let tasks = match &pool {
        Some(_) if args.anchors || args.select.pattern.as_deref().is_some_and(|p| Path::new(p).is_file()) => {
            return Err("error: with `--queue`, the workloads are tasks of the suite (a job carries its task file)\n  \
                 = hint: select tasks (`ekb tune PATTERN --level N --queue URL`), or tune a graph file or the anchors here"
                .into())
        }
        Some(_) => task_cli::cpu_tasks(&args.select, &args.dir)?,
        None => Vec::new(),
    };
    let list = match &pool {
        Some(_) if tasks.is_empty() => return Err("error: no CPU task matches the selection".into()),
        Some(_) => tasks.iter().map(task_cli::workload).collect(),
        None => workloads(&args)?,
    };
    let db_path =
        args.db.clone().unwrap_or_else(|| PathBuf::from("tuning").join(format!("{}.jsonl", target.name)));
    let mut db = Db::open(&db_path, &target).map_err(|e| format!("error: {e}"))?;
    for w in &db.warnings {
        eprintln!("warning: {w}");
    }
    if let Some(dir) = &args.export {
        return export(&list, &db, &target, dir);
    }
    let opts = TuneOptions {
        threads: args.threads,
        batch: args.batch.max(1),
        rounds: args.rounds.max(1),
        round: Duration::from_millis(args.round_ms.max(1)),
        resume: args.resume,
        seed: args.seed,
        ..TuneOptions::default()
    };
    let budget = match args.total_trials {
        Some(n) => Budget::Total(n),
        None => Budget::PerWorkload(args.trials),
    };
    let planned = match budget {
        Budget::Total(n) => n,
        Budget::PerWorkload(n) => n * list.len(),
    };
    // A pooled tune: its jobs' settings, and where its batches are written.
    let remote = match &pool {
        Some(p) => {
            let work = tempfile::tempdir().map_err(|e| format!("error: cannot create a work folder: {e}"))?;
            Some((p, pool_config(&args)?, work))
        }
        None => None,
    };
    eprintln!(
        "tuning {} workload(s) on `{}` ({}), {} trial(s) {}, database {}",
        list.len(),
        target.name,
        match &pool {
            Some(p) => format!("the workers of the pool at {}", p.url),
            None => ekb_tune::db::device_fingerprint(),
        },
        match budget {
            Budget::Total(n) | Budget::PerWorkload(n) => n,
        },
        if args.total_trials.is_some() { "in all" } else { "each" },
        db_path.display()
    );
    let mut tuners = Vec::new();
    for (i, w) in list.iter().enumerate() {
        let measure: Option<Box<dyn Remote + '_>> = match &remote {
            Some((p, config, work)) => {
                Some(Box::new(PoolBench::new(p, config.clone(), &tasks[i], work.path().to_path_buf())?))
            }
            None => None,
        };
        let t = Tuner::new(w, &target, &db, opts.clone(), measure)
            .map_err(|e| format!("error: {}: {e}", w.name))?;
        tuners.push(t);
    }
    let started = Instant::now();
    let mut shown = Progress { tty: std::io::stderr().is_terminal(), done: 0, planned, started };
    let result = schedule::run(&mut tuners, &mut db, budget, opts.batch, &mut |e| shown.event(e));
    if shown.tty {
        eprintln!();
    }
    result.map_err(|e| format!("error: {e}"))?;
    print_table(&tuners, started.elapsed(), pool.is_some());
    Ok(ExitCode::SUCCESS)
}

/// The evaluation settings of a pooled tune's jobs: the default schedule as the baseline, the
/// seeds [`crate::tune_pool::SEEDS`], the tune's timing (`--rounds` of `--round-ms` each side)
/// and threads, and `--target`.
fn pool_config(args: &Args) -> Result<ekb_eval::evaluate::Config, String> {
    let budget_s = (2 * args.rounds.max(1)) as f64 * args.round_ms.max(1) as f64 / 1000.0;
    let mut flags: Vec<String> =
        vec!["--baseline".into(), "default".into(), "--target".into(), args.target.clone()];
    flags.extend(["--seeds".into(), crate::tune_pool::SEEDS.into(), "--budget".into(), budget_s.to_string()]);
    if args.threads > 0 {
        flags.extend(["--threads".into(), args.threads.to_string()]);
    }
    let e = crate::eval::EvalArgs::from_flags(&flags)?;
    let plan = crate::eval::plan(
        &e,
        Candidates::Builtin(Schedule::Default),
        1,
        std::env::args().collect(),
        Path::new("."),
    )?;
    Ok(plan.config)
}

/// The progress line: trials, the current workload's best so far, and the time left.
struct Progress {
    tty: bool,
    done: usize,
    planned: usize,
    started: Instant,
}

impl Progress {
    fn event(&mut self, e: &Event) {
        self.done += 1;
        let elapsed = self.started.elapsed().as_secs_f64();
        let left = elapsed / self.done as f64 * self.planned.saturating_sub(self.done) as f64;
        let ms = |t: Option<f64>| t.map_or_else(|| "-".to_string(), |t| format!("{t:.3} ms"));
        let what = match e.outcome {
            Outcome::Ok => ms(e.time_ms),
            Outcome::Compile => "refused by the compiler".into(),
            Outcome::Incorrect => "wrong outputs".into(),
            Outcome::Run => "failed to run".into(),
        };
        let speedup = match (e.default_ms, e.best_ms) {
            (Some(d), Some(b)) => format!(" ({:.2}x the default)", d / b),
            _ => String::new(),
        };
        let line = format!(
            "[{}/{}] {} trial {}: {what}; best {}{speedup}; about {:.0} s left",
            self.done,
            self.planned,
            e.workload,
            e.trial,
            ms(e.best_ms),
            left
        );
        if self.tty {
            eprint!("\r\x1b[2K{line}");
            let _ = std::io::stderr().flush();
        } else {
            eprintln!("{line}");
        }
    }
}

fn print_table(tuners: &[Tuner<'_>], wall: Duration, pooled: bool) {
    let width = tuners.iter().map(|t| t.summary().workload.len()).max().unwrap_or(8).max(8);
    println!(
        "{:width$}  {:>6}  {:>11}  {:>11}  {:>9}  {:>7}  {:>7}",
        "workload", "trials", "default ms", "tuned ms", "speedup", "failed", "wall s"
    );
    let mut ratios = Vec::new();
    for t in tuners {
        let s = t.summary();
        let failed: usize = s.measured.iter().filter(|(o, _)| **o != Outcome::Ok).map(|(_, n)| n).sum();
        let ms = |v: Option<f64>| v.map_or_else(|| format!("{:>11}", "-"), |v| format!("{v:>11.3}"));
        let speedup = match (s.default_ms, s.best_ms) {
            (Some(d), Some(b)) => {
                ratios.push(d / b);
                format!("{:>8.2}x", d / b)
            }
            _ => format!("{:>9}", "-"),
        };
        println!(
            "{:width$}  {:>6}  {}  {}  {speedup}  {failed:>7}  {:>7.1}{}",
            s.workload,
            s.trials,
            ms(s.default_ms),
            ms(s.best_ms),
            s.wall.as_secs_f64(),
            if s.exhausted { "  (space exhausted)" } else { "" }
        );
    }
    let illegal: usize = tuners.iter().map(|t| t.summary().illegal).sum();
    if !ratios.is_empty() {
        let g = (ratios.iter().map(|r| r.ln()).sum::<f64>() / ratios.len() as f64).exp();
        println!("geomean speedup over the default: {g:.2}x over {} workload(s)", ratios.len());
    }
    println!(
        "{illegal} bred point(s) refused while lowering (never measured); {:.1} s in all",
        wall.as_secs_f64()
    );
    if pooled {
        println!(
            "times measured by the pool's workers with the evaluation protocol (ratio to the default schedule, times \
             the default's first time); confirm with --export DIR, then ekb eval --candidates DIR --baseline default"
        );
    } else {
        println!(
            "times measured in this process; the evaluation protocol can differ on memory-bound kernels: \
             confirm with --export DIR, then ekb eval --candidates DIR --baseline default"
        );
    }
    for t in tuners {
        if let Some(r) = &t.summary().best_recipe {
            println!("best recipe of {}:\n{}", t.summary().workload, indent(r));
        }
    }
}

fn indent(text: &str) -> String {
    text.lines().map(|l| format!("  {l}\n")).collect()
}

/// Writes each workload's best record as a candidate: the loop program its recipe lowers to.
fn export(list: &[Workload], db: &Db, target: &TargetProfile, dir: &Path) -> Result<ExitCode, String> {
    let mut written = 0;
    for w in list {
        let sha = ekb_tune::tuner::graph_sha256(&w.graph);
        let Some(best) = db.best(&sha) else {
            eprintln!("{}: no correct record in the database; not exported", w.name);
            continue;
        };
        let space = Space::new(&w.graph, target, false);
        let point = space.point_of(&best.recipe).map_err(|d| format!("error: {}: {d}", w.name))?;
        let options = CompileOptions {
            knobs: Some(space.knobs(&point)),
            backend: BackendChoice::Cpu,
            until: Stage::Verify,
            ..CompileOptions::default()
        };
        let sources = Sources { graph: Some(&w.source), module: None };
        let a = driver::compile(Program::Graph(&w.graph), sources, target, &options)
            .map_err(|f| format!("error: {}: the {} stage failed", w.name, f.stage))?;
        let sample = dir.join(&w.name).join("cpu").join("sample-0");
        std::fs::create_dir_all(&sample)
            .map_err(|e| format!("error: cannot create `{}`: {e}", sample.display()))?;
        files::write_set(&[
            (&sample.join("candidate.ekir"), print_l1(&a.module).as_bytes()),
            (&sample.join("tuned.recipe"), best.recipe.as_bytes()),
        ])?;
        written += 1;
    }
    eprintln!("{written} candidate(s) written to {}", dir.display());
    Ok(if written == list.len() { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

/// The knobs of a graph's best record in a tuning database, if it has one (for `ekb bench
/// --engines --db`).
pub fn best_knobs(db: &Db, g: &ekb_ir::l0::Graph, target: &TargetProfile) -> Option<ekb_lower::Knobs> {
    let best = db.best(&ekb_tune::tuner::graph_sha256(g))?;
    let space = Space::new(g, target, false);
    space.point_of(&best.recipe).ok().map(|p| space.knobs(&p))
}
