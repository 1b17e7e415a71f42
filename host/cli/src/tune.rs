//! `ekb tune`: the offline tuner (`ekb_tune`) from the command line. It picks the workloads (a
//! graph file, the anchor workloads of `ekb bench --engines`, or tasks of the suite), opens the
//! tuning database, runs the search within the budget with a progress line, and prints a table
//! of each workload's default and tuned times; `--export DIR` writes the tuned programs as a
//! candidate folder for `ekb eval --candidates DIR`. CPU candidates are measured in this
//! process; a GPU backend's, and with `--protocol`, `--device` or `--queue URL` the CPU's too,
//! by the evaluation protocol on a device runtime or a pool of workers (`tune_protocol.rs`).

use crate::files;
use crate::submit::QueueArgs;
use crate::tasks::{self as task_cli, Select};
use crate::tune_protocol::{ProtocolBench, Shared};
use ekb_deploy::driver::{self, BackendChoice, CompileOptions, Program, Sources, Stage};
use ekb_eval::evaluate::candidate::Candidates;
use ekb_eval::tasks::{Backend, Task};
use ekb_ir::l1::print::print as print_l1;
use ekb_ir::Diagnostic;
use ekb_ir::TargetProfile;
use ekb_leka::evaluator::{Elsewhere, Protocol, Where};
use ekb_lower::Schedule;
use ekb_tune::remote::Remote;
use ekb_tune::schedule::{self, Budget};
use ekb_tune::space::Space;
use ekb_tune::{Db, Event, Outcome, TuneOptions, Tuner, Workload};
use std::cell::RefCell;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::rc::Rc;
use std::time::{Duration, Instant};

/// Search the default schedule's knobs of each workload for the fastest correct point, measured
/// on the real device: an evolutionary search guided by a cost model (gradient-boosted trees
/// over loop-nest features) fitted online, every candidate timed paired with the best so far (or
/// the default) and recorded in the tuning database (docs/tuning.md).
#[derive(clap::Args)]
#[command(
    long_about = "Search the default schedule's knobs of each workload for the fastest correct point: an \
evolutionary search guided by a cost model (gradient-boosted trees over loop-nest features) fitted \
online, every candidate recorded in the tuning database (docs/tuning.md).\n\n\
CPU candidates are loaded into this process, checked on seed 0 and timed paired with the best so \
far. Through the evaluation protocol instead, every candidate is evaluated as `ekb eval` does \
(seeds 0, 1 and 2 in a kernel process of the device runtime, timed paired with the default \
schedule on the device) and the database holds its ratio to the default times the default's \
time: always for a GPU backend (`--backend cuda|opencl`: the GPU runtime here), and on the CPU \
with `--protocol` (this machine's runtime), `--device D` (a board, any transport of `ekb eval`) or \
`--queue URL` (a pool of workers, `ekb worker --target TARGET`, docs/scaleout.md). The workloads \
are then tasks of the suite, and TARGET can be a board's profile.",
    after_help = "Examples:\n  \
ekb tune model.ekir --trials 64                 one graph, 64 trials, database tuning/host.jsonl\n  \
ekb tune --anchors --trials 64                  the five anchor workloads of ekb bench --engines\n  \
ekb tune --anchors conv --trials 256 --resume   continue a tune to 256 trials\n  \
ekb tune matmul --level 1 --total-trials 200    Level-1 CPU tasks, 200 trials shared\n  \
ekb tune --anchors --export tuned/              the best programs as candidates for ekb eval\n  \
ekb tune --level 1 --export tuned/ --confirm    ... each kept only where the protocol finds it faster\n  \
ekb bench --engines --db tuning/host.jsonl      the tuned anchors next to the engines\n  \
ekb tune matmul --level 1 --target rk3588 --queue redis://broker:6379   measured by the rk3588 workers\n  \
ekb tune linear --level 1 --backend cuda --trials 32    CUDA kernels' knobs, on this machine's GPU\n  \
ekb tune linear --level 1 --backend cuda --export tuned/   then: ekb eval --backend cuda --candidates tuned/\n\
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
    /// Target profile of the backend [default: `host` for the CPU, `h200` for cuda, `pocl` for
    /// opencl]: on the CPU, one of this machine (cpu = "native") unless a device or the pool's
    /// workers measure the candidates.
    #[arg(long)]
    target: Option<String>,
    /// Measure CPU candidates by the evaluation protocol on this machine's runtime (a kernel
    /// process, seeds 0, 1 and 2, paired with the default), as `ekb eval` would, instead of in
    /// this process.
    #[arg(long)]
    protocol: bool,
    /// The device the protocol measures on (`local`, `qemu`, `ssh://[user@]host[:port]`,
    /// `adb[:serial]`, as for `ekb eval`); implies `--protocol`.
    #[arg(long)]
    device: Option<String>,
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
    /// (DIR/WORKLOAD/BACKEND/sample-0/candidate.ekir, the tuned loop program, and its recipe).
    #[arg(long)]
    export: Option<PathBuf>,
    /// With --export, on tasks of the suite: evaluate each tuned program that differs from the
    /// default against the default by the evaluation protocol (as `ekb eval` would, on this
    /// machine's runtime or `--device`), and write it only where the paired ratio's 95% interval
    /// lies above 1; elsewhere the default's program is written (never slower than the default
    /// by the protocol's own measurement).
    #[arg(long, requires = "export")]
    confirm: bool,
}

/// The workloads `args` selects to tune in this process: a graph file, anchors or CPU tasks.
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

/// Where a tune's candidates are measured.
enum Measured {
    /// Loaded into this process.
    Here,
    /// By the evaluation protocol on this machine's device link (`local`, or `--device`).
    Device,
    /// By the evaluation protocol on a pool of workers.
    Pool(crate::submit::Pool),
}

pub fn run(args: Args) -> Result<ExitCode, String> {
    let backend = match task_cli::filter(&args.select)?.backend {
        Some(b) => b,
        None => Backend::Cpu,
    };
    let gpu = backend != Backend::Cpu;
    let target_name = args.target.clone().unwrap_or_else(|| {
        match backend {
            Backend::Cpu => "host",
            Backend::Cuda => "h200",
            Backend::Opencl => "pocl",
        }
        .to_string()
    });
    let target = crate::source::target(&target_name)?;
    let measured = match args.pool.pool()? {
        Some(_) if args.device.is_some() => {
            return Err(
                "error: `--device` names one device, and `--queue` sends the candidates to a pool\n  \
                 = hint: name each worker's device when starting it: `ekb worker --queue URL --device D`"
                    .into(),
            )
        }
        Some(p) => Measured::Pool(p),
        None if gpu || args.protocol || args.device.is_some() => Measured::Device,
        None => Measured::Here,
    };
    if matches!(measured, Measured::Here) && target.cpu.cpu != "native" {
        return Err(format!(
            "error: `ekb tune` measures CPU candidates in this process, and target `{}` is a board (cpu = \"{}\")\n  \
             = hint: tune with a profile of this machine, such as `host`, or measure them on the board: \
             `--device ssh://HOST` or a pool of its workers, `--queue URL` (docs/scaleout.md)",
            target.name, target.cpu.cpu
        ));
    }
    let tasks: Vec<Task> = match measured {
        Measured::Here => Vec::new(),
        _ if args.anchors || args.select.pattern.as_deref().is_some_and(|p| Path::new(p).is_file()) => {
            return Err(format!(
                "error: {}, the workloads are tasks of the suite (the protocol evaluates a task's instance)\n  \
                 = hint: select tasks (`ekb tune PATTERN --level N`), or tune a graph file or the anchors on this \
                 machine's CPU, in this process",
                match measured {
                    Measured::Pool(_) => "with `--queue`",
                    _ if gpu => "on a GPU backend",
                    _ => "with `--protocol` or `--device`",
                }
            ))
        }
        _ => {
            let tasks = task_cli::backend_tasks(&args.select, &args.dir)?.1;
            if tasks.is_empty() {
                return Err(format!("error: no task with a {} instance matches the selection", backend.name()));
            }
            tasks
        }
    };
    let list = match measured {
        Measured::Here => workloads(&args)?,
        _ => tasks.iter().map(task_cli::workload).collect(),
    };
    let db_path =
        args.db.clone().unwrap_or_else(|| PathBuf::from("tuning").join(format!("{}.jsonl", target.name)));
    let mut db = Db::open(&db_path, &target).map_err(|e| format!("error: {e}"))?;
    for w in &db.warnings {
        eprintln!("warning: {w}");
    }
    if let Some(dir) = &args.export {
        let work = tempfile::tempdir().map_err(|e| format!("error: cannot create a work folder: {e}"))?;
        let confirm = if args.confirm {
            if args.anchors || args.select.pattern.as_deref().is_some_and(|p| Path::new(p).is_file()) {
                return Err(
                    "error: `--confirm` evaluates tasks of the suite by the protocol; anchors and graph \
                            files are not tasks\n  = hint: export without `--confirm`"
                        .into(),
                );
            }
            let tasks = task_cli::backend_tasks(&args.select, &args.dir)?.1;
            let measured = if matches!(measured, Measured::Pool(_)) { measured } else { Measured::Device };
            let (shared, _) = protocol(&args, backend, &target, measured, work.path())?;
            Some(Confirm { shared, tasks })
        } else {
            None
        };
        return export(&list, &db, &target, backend, dir, confirm);
    }
    let opts = TuneOptions {
        threads: args.threads,
        batch: args.batch.max(1),
        rounds: args.rounds.max(1),
        round: Duration::from_millis(args.round_ms.max(1)),
        resume: args.resume,
        seed: args.seed,
        gpu,
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
    // A tune through the protocol: its evaluator, shared by the workloads, and the device name
    // its records carry.
    let work = tempfile::tempdir().map_err(|e| format!("error: cannot create a work folder: {e}"))?;
    let protocol = match &measured {
        Measured::Here => None,
        _ => Some(protocol(&args, backend, &target, measured, work.path())?),
    };
    eprintln!(
        "tuning {} workload(s) on `{}` ({}), {} trial(s) {}, database {}",
        list.len(),
        target.name,
        protocol.as_ref().map_or_else(ekb_tune::db::device_fingerprint, |(_, device)| device.clone()),
        match budget {
            Budget::Total(n) | Budget::PerWorkload(n) => n,
        },
        if args.total_trials.is_some() { "in all" } else { "each" },
        db_path.display()
    );
    let mut tuners = Vec::new();
    for (i, w) in list.iter().enumerate() {
        let measure: Option<Box<dyn Remote + '_>> = match &protocol {
            Some((p, device)) => {
                Some(Box::new(ProtocolBench::new(p.clone(), device.clone(), &tasks[i], backend)?))
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
    print_table(&tuners, started.elapsed(), protocol.as_ref().map(|(_, d)| d.as_str()), backend);
    Ok(ExitCode::SUCCESS)
}

/// The evaluator of a tune through the protocol (batches kept under `work`) and the device name
/// its records carry. Its settings: the default schedule as the baseline, the seeds
/// [`crate::tune_protocol::SEEDS`], the tune's timing (`--rounds` of `--round-ms` each side),
/// threads, the target and the device.
fn protocol(
    args: &Args,
    backend: Backend,
    target: &TargetProfile,
    measured: Measured,
    work: &Path,
) -> Result<(Rc<RefCell<Shared>>, String), String> {
    let budget_s = (2 * args.rounds.max(1)) as f64 * args.round_ms.max(1) as f64 / 1000.0;
    let target_flag = match backend {
        Backend::Cpu => "--target",
        Backend::Cuda => "--cuda-target",
        Backend::Opencl => "--opencl-target",
    };
    let mut flags: Vec<String> =
        vec!["--baseline".into(), "default".into(), target_flag.into(), target.name.clone()];
    flags.extend([
        "--seeds".into(),
        crate::tune_protocol::SEEDS.into(),
        "--budget".into(),
        budget_s.to_string(),
    ]);
    if args.threads > 0 {
        flags.extend(["--threads".into(), args.threads.to_string()]);
    }
    if let Some(d) = &args.device {
        flags.extend(["--device".into(), d.clone()]);
    }
    let e = crate::eval::EvalArgs::from_flags(&flags)?;
    let plan = crate::eval::plan(
        &e,
        Candidates::Builtin(Schedule::Default),
        1,
        std::env::args().collect(),
        Path::new("."),
    )?;
    let version = env!("CARGO_PKG_VERSION");
    let (run_on, device) = match measured {
        Measured::Pool(pool) => {
            let device = format!("ekb workers of {} (a pool), ekb {version}", target.name);
            let run: Elsewhere = Box::new(move |config, task, instance, run, notes| {
                crate::submit::evaluate_into(&pool, config, &[task], vec![instance.clone()], run, true, notes)
                    .map(|_| ())
                    .map_err(Diagnostic::error)
            });
            (Where::Elsewhere(run), device)
        }
        _ => {
            let on = format!("{} of `{}` by the evaluation protocol", backend.name(), target.name);
            let device = match args.device.as_deref() {
                None | Some("local") => format!("{}, {on}", ekb_tune::db::device_fingerprint()),
                Some(_) => format!("{}, {on}, ekb {version}", plan.device),
            };
            let mut connect = plan.connector();
            (Where::Device(Box::new(move |b| connect(b).map_err(Diagnostic::error))), device)
        }
    };
    let protocol = Protocol { config: plan.config, dir: work.to_path_buf(), run_on, notes: Vec::new() };
    Ok((Rc::new(RefCell::new(Shared::new(protocol))), device))
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

fn print_table(tuners: &[Tuner<'_>], wall: Duration, protocol: Option<&str>, backend: Backend) {
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
    let confirm = format!(
        "confirm with --export DIR, then ekb eval --backend {} --candidates DIR --baseline default",
        backend.name()
    );
    match protocol {
        Some(device) => println!(
            "times measured on {device} (ratio to the default schedule, times the default's first time); \
             {confirm}"
        ),
        None => println!(
            "times measured in this process; the evaluation protocol can differ on memory-bound kernels: {confirm}"
        ),
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
/// What `--confirm` evaluates the tuned programs with: the protocol's evaluator and the tasks.
struct Confirm {
    shared: Rc<RefCell<Shared>>,
    tasks: Vec<Task>,
}

/// The program of `w` under `knobs`, printed.
fn program(
    w: &Workload,
    target: &TargetProfile,
    gpu: bool,
    knobs: ekb_lower::Knobs,
) -> Result<String, String> {
    let options = CompileOptions {
        knobs: Some(knobs),
        backend: if gpu { BackendChoice::Gpu } else { BackendChoice::Cpu },
        until: Stage::Verify,
        ..CompileOptions::default()
    };
    let sources = Sources { graph: Some(&w.source), module: None };
    let a = driver::compile(Program::Graph(&w.graph), sources, target, &options)
        .map_err(|f| format!("error: {}: the {} stage failed", w.name, f.stage))?;
    Ok(print_l1(&a.module))
}

/// Whether `confirm` finds `text` faster than the default of `w`'s task: the paired ratio's 95%
/// interval above 1. Returns the verdict and what it says of the measurement.
fn confirmed(
    confirm: &Confirm,
    w: &Workload,
    backend: Backend,
    text: &str,
) -> Result<(bool, String), String> {
    let task = confirm
        .tasks
        .iter()
        .find(|t| t.name == w.name)
        .ok_or_else(|| format!("error: `{}` is not a task of the suite", w.name))?;
    let instance = ekb_eval::evaluate::instances(&[task], &[backend])
        .into_iter()
        .next()
        .ok_or_else(|| format!("error: task `{}` has no {} instance", w.name, backend.name()))?;
    let batch = ekb_leka::evaluator::Batch {
        name: format!("{}/{}/confirm", w.name, backend.name()),
        task,
        instance,
        candidates: vec![vec![ekb_leka::tree::CandidateFile::new("candidate.ekir", text.to_string())]],
        against: None,
    };
    let results = confirm.shared.borrow_mut().evaluate(&batch)?;
    let r = results.first().ok_or_else(|| format!("error: {}: the protocol returned no result", w.name))?;
    Ok(match (&r.timing, r.correct) {
        (Some(t), true) => {
            let said = format!("{:.2}x [{:.2}, {:.2}] over the default", t.speedup, t.ci_low, t.ci_high);
            (t.ci_low > 1.0, said)
        }
        _ => (false, r.failure.as_ref().map_or_else(|| "not timed".to_string(), |f| f.detail.clone())),
    })
}

fn export(
    list: &[Workload],
    db: &Db,
    target: &TargetProfile,
    backend: Backend,
    dir: &Path,
    confirm: Option<Confirm>,
) -> Result<ExitCode, String> {
    let (mut written, mut defaults) = (0, 0);
    for w in list {
        let sha = ekb_tune::tuner::graph_sha256(&w.graph);
        let Some(best) = db.best(&sha) else {
            eprintln!("{}: no correct record in the database; not exported", w.name);
            continue;
        };
        let gpu = backend != Backend::Cpu;
        let space = Space::new(&w.graph, target, gpu);
        let point = space.point_of(&best.recipe).map_err(|d| format!("error: {}: {d}", w.name))?;
        let mut text = program(w, target, gpu, space.knobs(&point))?;
        let mut recipe = best.recipe.clone();
        if let Some(c) = &confirm {
            let default = program(w, target, gpu, ekb_lower::Knobs::for_target(target))?;
            if text != default {
                let (faster, said) = confirmed(c, w, backend, &text)?;
                if faster {
                    eprintln!("{}: confirmed, {said}", w.name);
                } else {
                    eprintln!("{}: not confirmed ({said}); the default's program written", w.name);
                    text = default;
                    recipe = space.recipe(&space.default_point());
                    defaults += 1;
                }
            }
        }
        let sample = dir.join(&w.name).join(backend.name()).join("sample-0");
        std::fs::create_dir_all(&sample)
            .map_err(|e| format!("error: cannot create `{}`: {e}", sample.display()))?;
        files::write_set(&[
            (&sample.join("candidate.ekir"), text.as_bytes()),
            (&sample.join("tuned.recipe"), recipe.as_bytes()),
        ])?;
        written += 1;
    }
    let kept = if confirm.is_some() {
        format!(" ({defaults} of them the default, not confirmed faster)")
    } else {
        String::new()
    };
    eprintln!("{written} candidate(s) written to {}{kept}", dir.display());
    Ok(if written == list.len() { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

/// The knobs of a graph's best record in a tuning database, if it has one (for `ekb bench
/// --engines --db`).
pub fn best_knobs(db: &Db, g: &ekb_ir::l0::Graph, target: &TargetProfile) -> Option<ekb_lower::Knobs> {
    let best = db.best(&ekb_tune::tuner::graph_sha256(g))?;
    let space = Space::new(g, target, false);
    space.point_of(&best.recipe).ok().map(|p| space.knobs(&p))
}
