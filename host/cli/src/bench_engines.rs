//! `ekb bench --engines`: ekb's default schedule next to the best inference engines on this
//! machine, side by side in one run.
//!
//! For each workload (the five anchors below, or `--only`), ekb's kernels are compiled for this
//! CPU and loaded into this process, and each engine (onnxruntime, MNN, TVM untuned, TVM tuned
//! with MetaSchedule) is started once and kept loaded (`ekb_onnx::baseline::serve`); every
//! side's outputs are checked against the reference interpreter first. Then `--rounds` rounds
//! alternate between the sides, in an order rotated each round, each side timing runs for about
//! `--round-ms` per round, after a pause of 50 ms in which the other sides' thread pools stop
//! spinning. A side's figure is the median of all its samples; the table gives
//! each side's median, the best engine's over ekb's (above 1: ekb is faster), and the geomean of
//! that ratio. A side whose outputs differ from the reference is shown and never counted as the
//! best. Timing: ekb's whole plan around `Instant` in this process; each engine's one inference
//! around `perf_counter_ns` in its Python process (a few microseconds of call overhead); both
//! warm, on the same inputs (seed 0), with the same thread count.

use crate::bench::{compile, load, median};
use ekb_deploy::driver::{self, Stage};
use ekb_ir::l0::{self, Graph};
use ekb_ir::tensor::{compare, Buffer, Tensor, Tolerance};
use ekb_ir::TargetProfile;
use ekb_lower::Schedule;
use ekb_onnx::baseline::{self as bl, BaselineOptions, Server, TuneOptions, TvmOptions};
use serde::Serialize;
use std::collections::HashMap;
use std::process::ExitCode;
use std::time::Duration;

/// The anchor workloads: the shapes the engines are compared on (`docs/evaluation.md`).
pub const ANCHORS: &[(&str, &str)] = &[
    (
        "matmul_512",
        "graph matmul_512(a: f32[512,512], b: f32[512,512]) -> (c: f32[512,512]) {\n  %0 = matmul(a, b)\n  return %0\n}\n",
    ),
    (
        "conv3x3_64x56x56",
        "graph conv3x3_64x56x56(x: f32[1,64,56,56]) -> (y: f32[1,64,56,56]) {\n  \
         param w: f32[64,64,3,3] = kaiming_uniform\n  \
         %0 = conv2d(x, w, stride=[1,1], pad=[1,1,1,1], dilation=[1,1], groups=1)\n  return %0\n}\n",
    ),
    (
        "depthwise3x3_128x56x56",
        "graph depthwise3x3_128x56x56(x: f32[1,128,56,56]) -> (y: f32[1,128,56,56]) {\n  \
         param w: f32[128,1,3,3] = kaiming_uniform\n  \
         %0 = conv2d(x, w, stride=[1,1], pad=[1,1,1,1], dilation=[1,1], groups=128)\n  return %0\n}\n",
    ),
    (
        "softmax_512x2048",
        "graph softmax_512x2048(x: f32[512,2048]) -> (y: f32[512,2048]) {\n  %0 = softmax(x, axis=-1)\n  return %0\n}\n",
    ),
    (
        "layer_norm_512x768",
        "graph layer_norm_512x768(x: f32[512,768]) -> (y: f32[512,768]) {\n  \
         param w: f32[768] = uniform(0.5, 1.5)\n  param b: f32[768] = uniform(-0.1, 0.1)\n  \
         %0 = layer_norm(x, w, b, eps=1e-5)\n  return %0\n}\n",
    ),
];

/// The pause before each side's turn (see `bench_one`).
const QUIET: Duration = Duration::from_millis(50);

/// An engine of the comparison, as `--engine` names it.
#[derive(Debug, Clone, PartialEq)]
pub enum EngineName {
    Onnxruntime,
    Mnn,
    Tvm,
    /// TVM with MetaSchedule, this many trials (records cached and reused).
    TvmTuned(u32),
}

impl EngineName {
    /// `onnxruntime`, `mnn`, `tvm` or `tvm-tuned:N`.
    pub fn parse(s: &str) -> Result<EngineName, String> {
        match s.trim() {
            "onnxruntime" | "ort" => Ok(EngineName::Onnxruntime),
            "mnn" => Ok(EngineName::Mnn),
            "tvm" => Ok(EngineName::Tvm),
            other => match other.strip_prefix("tvm-tuned:").map(str::parse::<u32>) {
                Some(Ok(n)) if n > 0 => Ok(EngineName::TvmTuned(n)),
                _ => Err(format!(
                    "`--engine {other}`: expected onnxruntime, mnn, tvm or tvm-tuned:TRIALS (TRIALS >= 1)"
                )),
            },
        }
    }

    fn label(&self) -> String {
        match self {
            EngineName::Onnxruntime => "onnxruntime".into(),
            EngineName::Mnn => "mnn".into(),
            EngineName::Tvm => "tvm".into(),
            EngineName::TvmTuned(n) => format!("tvm-ms{n}"),
        }
    }

    fn engine(&self, host: &TargetProfile) -> Result<bl::Engine, String> {
        Ok(match self {
            EngineName::Onnxruntime => bl::Engine::Onnxruntime,
            EngineName::Mnn => bl::Engine::Mnn,
            EngineName::Tvm => bl::Engine::Tvm(TvmOptions::for_profile(host, None)?),
            EngineName::TvmTuned(trials) => {
                let tune = TuneOptions { trials: *trials, root: bl::default_tune_root()? };
                bl::Engine::Tvm(TvmOptions::for_profile(host, Some(tune))?)
            }
        })
    }
}

/// How the comparison runs.
pub struct EngineBench {
    pub engines: Vec<EngineName>,
    /// Whether `engines` was asked for (then a missing engine is an error, not a note).
    pub explicit: bool,
    pub rounds: usize,
    pub round: Duration,
    /// 0: this machine's cores.
    pub threads: usize,
    /// The profile ekb compiles for (a profile of this machine; engines compile for `host`).
    pub target: String,
    /// `NAME=VALUE` knobs of ekb's default schedule, over the target's.
    pub knobs: Vec<String>,
    /// A tuning database whose best records replace the knobs of the workloads it knows.
    pub db: Option<std::path::PathBuf>,
    pub only: Option<String>,
    pub json: bool,
}

#[derive(Serialize)]
struct Report {
    threads: usize,
    rounds: usize,
    round_ms: f64,
    /// Engines left out, with the reason (not installed).
    unavailable: Vec<(String, String)>,
    workloads: Vec<Row>,
    /// Geomean over workloads of the best engine's median over ekb's.
    geomean_best_over_ekb: Option<f64>,
}

#[derive(Serialize)]
struct Row {
    workload: String,
    sides: Vec<Side>,
    /// The fastest correct engine and its median over ekb's (above 1: ekb is faster).
    best_engine: Option<String>,
    best_over_ekb: Option<f64>,
}

#[derive(Serialize)]
struct Side {
    name: String,
    version: String,
    correct: bool,
    mismatch: Option<String>,
    median_ms: f64,
    /// The lowest and highest of the per-round medians.
    round_min_ms: f64,
    round_max_ms: f64,
    samples: usize,
}

/// One side of a workload being timed.
enum Runner {
    Ekb {
        m: ekb_ir::l1::Module,
        host: ekb_llvm::HostModule,
        inputs: HashMap<String, Buffer>,
        per_run: Duration,
    },
    Engine {
        server: Server,
        per_run: Duration,
    },
}

impl Runner {
    /// Samples, in milliseconds, for about `budget` (at least 3).
    fn round(&mut self, budget: Duration) -> Result<Vec<f64>, String> {
        match self {
            // One call: its buffers are set up (and first touched, by a warm-up run) once, as an
            // engine's are, so no sample pays page faults.
            Runner::Ekb { m, host, inputs, per_run } => {
                let t =
                    host.time(m, inputs, 1, runs(budget, *per_run) as usize).map_err(|d| d.to_string())?;
                Ok(t.into_iter().map(|d| d.as_secs_f64() * 1e3).collect())
            }
            Runner::Engine { server, per_run } => {
                Ok(server.time(runs(budget, *per_run))?.into_iter().map(|ns| ns as f64 / 1e6).collect())
            }
        }
    }
}

/// Runs filling about `budget` at `per_run` each: at least 3, at most 10000.
fn runs(budget: Duration, per_run: Duration) -> u32 {
    (budget.as_secs_f64() / per_run.as_secs_f64().max(1e-7)).clamp(3.0, 10_000.0) as u32
}

pub fn run(opts: EngineBench) -> Result<ExitCode, String> {
    let host = TargetProfile::load("host").map_err(|e| format!("error: {e}"))?;
    let target = crate::source::target(&opts.target)?;
    let mut knobs = ekb_lower::Knobs::for_target(&target);
    crate::lower::set_knobs(&mut knobs, &opts.knobs)?;
    let db = match &opts.db {
        Some(path) if !path.is_file() => {
            return Err(format!(
                "error: no tuning database `{}` (write one with `ekb tune --anchors`)",
                path.display()
            ))
        }
        Some(path) => Some(ekb_tune::Db::open(path, &target).map_err(|e| format!("error: {e}"))?),
        None => None,
    };
    let selected: Vec<&(&str, &str)> =
        ANCHORS.iter().filter(|(n, _)| opts.only.as_deref().is_none_or(|o| n.contains(o))).collect();
    if selected.is_empty() {
        let names: Vec<_> = ANCHORS.iter().map(|(n, _)| *n).collect();
        return Err(format!("error: no workload matches `--only`; workloads: {}", names.join(", ")));
    }
    let threads = if opts.threads == 0 {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    } else {
        opts.threads
    };
    let mut engines = Vec::new();
    let mut unavailable = Vec::new();
    for name in &opts.engines {
        let engine = name.engine(&host).map_err(|e| format!("error: {e}"))?;
        match bl::require_engine(&engine) {
            Ok(()) => engines.push((name.clone(), engine)),
            Err(e) if !opts.explicit => unavailable.push((name.label(), e)),
            Err(e) => return Err(format!("error: {}: {e}", name.label())),
        }
    }
    if !opts.json {
        for (name, why) in &unavailable {
            eprintln!("{name}: left out: {why}");
        }
        eprintln!(
            "{} workload(s), ekb (target `{}`) and {} engine(s), {} rounds of about {} ms per side, {threads} thread(s)",
            selected.len(),
            target.name,
            engines.len(),
            opts.rounds,
            opts.round.as_millis()
        );
    }
    let mut rows = Vec::new();
    for (name, text) in selected {
        let (src, g) = load(name, text)?;
        let tuned = db.as_ref().and_then(|db| crate::tune::best_knobs(db, &g, &target));
        if db.is_some() && !opts.json {
            eprintln!(
                "{name}: {}",
                if tuned.is_some() { "the tuned recipe" } else { "no record in the database: the default" }
            );
        }
        let knobs = tuned.unwrap_or(knobs);
        rows.push(bench_one((&src, &g), (&target, &knobs), &engines, &opts, threads)?);
    }
    let ratios: Vec<f64> = rows.iter().filter_map(|r| r.best_over_ekb).collect();
    let geomean = (!ratios.is_empty() && ratios.len() == rows.len())
        .then(|| (ratios.iter().map(|r| r.ln()).sum::<f64>() / ratios.len() as f64).exp());
    let all_correct = rows.iter().all(|r| r.sides[0].correct);
    let report = Report {
        threads,
        rounds: opts.rounds,
        round_ms: opts.round.as_secs_f64() * 1e3,
        unavailable,
        workloads: rows,
        geomean_best_over_ekb: geomean,
    };
    if opts.json {
        println!("{}", serde_json::to_string_pretty(&report).expect("the report serialises"));
    } else {
        print_table(&report);
    }
    Ok(if all_correct { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

fn bench_one(
    (src, g): (&ekb_ir::SourceFile, &Graph),
    (target, knobs): (&TargetProfile, &ekb_lower::Knobs),
    engines: &[(EngineName, bl::Engine)],
    opts: &EngineBench,
    threads: usize,
) -> Result<Row, String> {
    let name = g.name.as_str();
    if !opts.json {
        eprintln!("{name}: compiling ekb, starting {} engine(s) ...", engines.len());
    }
    let mut sides = Vec::new();
    let mut runners = Vec::new();
    let (side, runner) = start_ekb(src, g, target, knobs, threads)?;
    sides.push(side);
    runners.push(runner);
    for (label, engine) in engines {
        let work =
            tempfile::tempdir().map_err(|e| format!("error: cannot make a temporary directory: {e}"))?;
        let bopts = BaselineOptions { seed: 0, warmup: 3, samples: 3, threads: threads as u32 };
        let (b, server) = bl::serve(g, engine, bopts, work.path())
            .map_err(|e| format!("{name}: {}: {e}", label.label()))?;
        let per_run = Duration::from_nanos(b.timing.stats.median_ns as u64);
        sides.push(Side {
            name: label.label(),
            version: b.engine_version.clone(),
            correct: b.outputs_match,
            mismatch: b.mismatches.first().cloned(),
            median_ms: 0.0,
            round_min_ms: 0.0,
            round_max_ms: 0.0,
            samples: 0,
        });
        // The model and inputs stay where the engine loaded them from while it serves.
        runners.push((Runner::Engine { server, per_run }, Some(work)));
    }
    let mut samples: Vec<Vec<f64>> = vec![Vec::new(); runners.len()];
    let mut round_medians: Vec<Vec<f64>> = vec![Vec::new(); runners.len()];
    for round in 0..opts.rounds {
        for k in 0..runners.len() {
            let i = (k + round) % runners.len();
            // A pause first: engines' thread pools spin for a while after a run, and must be
            // asleep when the next side is timed.
            std::thread::sleep(QUIET);
            let got =
                runners[i].0.round(opts.round).map_err(|e| format!("{name}: {}: {e}", sides[i].name))?;
            round_medians[i].push(median(&got));
            samples[i].extend(got);
        }
    }
    for (i, s) in sides.iter_mut().enumerate() {
        s.median_ms = median(&samples[i]);
        s.round_min_ms = round_medians[i].iter().copied().fold(f64::INFINITY, f64::min);
        s.round_max_ms = round_medians[i].iter().copied().fold(0.0, f64::max);
        s.samples = samples[i].len();
    }
    let best = sides[1..].iter().filter(|s| s.correct).min_by(|a, b| a.median_ms.total_cmp(&b.median_ms));
    let (best_engine, best_over_ekb) = match best {
        Some(b) if sides[0].correct => (Some(b.name.clone()), Some(b.median_ms / sides[0].median_ms)),
        Some(b) => (Some(b.name.clone()), None),
        None => (None, None),
    };
    Ok(Row { workload: name.to_string(), sides, best_engine, best_over_ekb })
}

/// ekb's side: the default schedule compiled for this CPU, loaded here, checked on seed 0.
fn start_ekb(
    src: &ekb_ir::SourceFile,
    g: &Graph,
    target: &TargetProfile,
    knobs: &ekb_lower::Knobs,
    threads: usize,
) -> Result<(Side, (Runner, Option<tempfile::TempDir>)), String> {
    let artifact = compile(src, g, Schedule::Default, Some(*knobs), Stage::Toolchain, target)?;
    let host = driver::load_host(&artifact, threads).map_err(|d| d.to_string())?;
    let inputs: HashMap<String, Buffer> =
        l0::inputs::generate(g, 0).map_err(|d| d.to_string())?.into_iter().collect();
    let tensors: HashMap<String, Tensor> = inputs.iter().map(|(n, b)| (n.clone(), b.to_tensor())).collect();
    let reference = l0::interp::run(g, &tensors).map_err(|d| d.to_string())?;
    let m = artifact.module;
    let out = host.run(&m, &inputs).map_err(|d| d.to_string())?;
    let mut mismatch = None;
    for (o, r) in g.outputs.iter().zip(&reference) {
        if let Err(e) = compare(r, &out[&o.name].to_tensor(), Tolerance::default_for(o.ty.dtype)) {
            mismatch = Some(format!("output `{}`: {e}", o.name));
        }
    }
    let warm = host.time(&m, &inputs, 3, 3).map_err(|d| d.to_string())?;
    let per_run = warm.iter().min().copied().unwrap_or_default();
    let side = Side {
        name: "ekb".into(),
        version: env!("CARGO_PKG_VERSION").into(),
        correct: mismatch.is_none(),
        mismatch,
        median_ms: 0.0,
        round_min_ms: 0.0,
        round_max_ms: 0.0,
        samples: 0,
    };
    Ok((side, (Runner::Ekb { m, host, inputs, per_run }, None)))
}

fn print_table(r: &Report) {
    let names: Vec<String> =
        r.workloads.first().map(|w| w.sides.iter().map(|s| s.name.clone()).collect()).unwrap_or_default();
    let width = r.workloads.iter().map(|w| w.workload.len()).max().unwrap_or(8).max(8);
    println!(
        "median ms over {} rounds ({} threads); best/ekb: the fastest correct engine's time over ekb's (above 1: ekb is faster)",
        r.rounds, r.threads
    );
    let mut head = format!("{:width$}", "workload");
    for n in &names {
        head.push_str(&format!("  {n:>12}"));
    }
    head.push_str(&format!("  {:>12}  {:>9}", "best engine", "best/ekb"));
    println!("{head}");
    for w in &r.workloads {
        let mut line = format!("{:width$}", w.workload);
        for s in &w.sides {
            let mark = if s.correct { ' ' } else { '!' };
            line.push_str(&format!("  {:>11.3}{mark}", s.median_ms));
        }
        line.push_str(&format!("  {:>12}", w.best_engine.as_deref().unwrap_or("-")));
        line.push_str(&w.best_over_ekb.map_or_else(|| format!("  {:>9}", "-"), |x| format!("  {x:>8.2}x")));
        println!("{line}");
    }
    for w in &r.workloads {
        for s in w.sides.iter().filter(|s| !s.correct) {
            println!(
                "! {} on {}: outputs differ from the reference: {}",
                s.name,
                w.workload,
                s.mismatch.as_deref().unwrap_or("?")
            );
        }
    }
    let versions: Vec<String> = r
        .workloads
        .first()
        .map(|w| w.sides.iter().map(|s| format!("{} {}", s.name, s.version)).collect())
        .unwrap_or_default();
    println!("versions: {}", versions.join(", "));
    match r.geomean_best_over_ekb {
        Some(g) => println!("geomean best/ekb: {g:.2}x over {} workload(s)", r.workloads.len()),
        None => println!("geomean best/ekb: - (a workload has no correct engine, or ekb is wrong)"),
    }
}
