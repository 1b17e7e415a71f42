//! `ekb bench --engines`: ekb's default schedule next to the best inference engines on this
//! machine, side by side in one run.
//!
//! The workloads are the five anchors below, or the CPU instances of the tasks a selection picks
//! (each task's graph as shipped), narrowed by `--only`. One workload at a time, ekb's kernels
//! are compiled for this CPU and loaded into this process, and each engine (onnxruntime, MNN,
//! TVM untuned, TVM tuned with MetaSchedule) is started and kept loaded
//! (`ekb_onnx::baseline::serve`); every side's outputs are checked against the reference
//! interpreter first (ekb's at the task's tolerances, an engine's at its baseline's). A side
//! that cannot take the workload (an export the engine refuses, a compile failure) is shown as
//! unavailable on that row with the reason, and the run goes on. Then `--rounds` rounds
//! alternate between the sides, in an order rotated each round, each side timing runs for about
//! `--round-ms` per round, after a pause of 50 ms in which the other sides' thread pools stop
//! spinning. A side's figure is the median of all its samples; the table gives
//! each side's median, the best engine's over ekb's (above 1: ekb is faster), and the geomean of
//! that ratio. With `--without-passes` a second ekb side, `ekb-nopass`, is the same schedule
//! compiled with the graph passes off (`--passes none`), timed in the same alternation and never
//! counted as an engine; each row then has `passes_gain`, its median over ekb's (above 1: the
//! passes make ekb faster), and the report its geomean. A side whose outputs differ from the
//! reference is shown and never counted as the best. Timing: ekb's whole plan around `Instant` in this process; each engine's one inference
//! around `perf_counter_ns` in its Python process (a few microseconds of call overhead); both
//! warm, on the same inputs (seed 0), with the same thread count. Every side of a workload is
//! dropped (engine processes ended, kernels unloaded) before the next one starts, so a run over
//! hundreds of tasks holds one workload's sides at a time.

use crate::bench::{compile, load, median};
use ekb_deploy::driver::{self, Stage};
use ekb_eval::metrics::summary::geomean;
use ekb_ir::l0;
use ekb_ir::tensor::{compare, Buffer, Tensor};
use ekb_ir::TargetProfile;
use ekb_lower::Schedule;
pub use ekb_onnx::baseline::EngineName;
use ekb_onnx::baseline::{self as bl, BaselineOptions, Server, QUIET};
use ekb_passes::Selection;
use ekb_tune::Workload;
use serde::Serialize;
use std::collections::HashMap;
use std::process::ExitCode;
use std::time::Duration;

/// The anchor workloads: the shapes the engines are compared on (`docs/evaluation.md`).
const ANCHORS: &[(&str, &str)] = &[
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

/// The anchors whose name contains `only` (all without it), as workloads.
pub fn anchors(only: Option<&str>) -> Result<Vec<Workload>, String> {
    let mut out = Vec::new();
    for (name, text) in ANCHORS.iter().filter(|(n, _)| only.is_none_or(|o| n.contains(o))) {
        let (src, g) = load(name, text)?;
        out.push(Workload::new(*name, src, g));
    }
    if out.is_empty() {
        let names: Vec<_> = ANCHORS.iter().map(|(n, _)| *n).collect();
        return Err(format!(
            "error: no anchor workload matches `{}`; they are: {}",
            only.unwrap_or_default(),
            names.join(", ")
        ));
    }
    Ok(out)
}

/// How the comparison runs.
pub struct EngineBench {
    /// The workloads, in the order they are run.
    pub workloads: Vec<Workload>,
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
    /// Also time ekb with its graph passes off (the side `ekb-nopass`).
    pub without_passes: bool,
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
    /// Geomean of the best engine's median over ekb's, over the workloads that have one.
    geomean_best_over_ekb: Option<f64>,
    /// How many workloads that geomean is over.
    geomean_workloads: usize,
    /// With `--without-passes`: the geomean of the rows' `passes_gain`, and how many rows have
    /// one.
    #[serde(skip_serializing_if = "Option::is_none")]
    geomean_passes_gain: Option<f64>,
    passes_gain_workloads: usize,
}

#[derive(Serialize)]
struct Row {
    workload: String,
    /// ekb first, `ekb-nopass` next with `--without-passes`, then the engines in `--engine`
    /// order: the same sides on every row.
    sides: Vec<Side>,
    /// The fastest correct engine and its median over ekb's (above 1: ekb is faster); none
    /// when ekb is wrong or unavailable, or no engine is correct.
    best_engine: Option<String>,
    best_over_ekb: Option<f64>,
    /// With `--without-passes`: ekb-nopass's median over ekb's (above 1: the graph passes make
    /// ekb faster), when both are correct.
    #[serde(skip_serializing_if = "Option::is_none")]
    passes_gain: Option<f64>,
}

#[derive(Serialize)]
struct Side {
    name: String,
    /// Why this side has no figures on this workload (the engine could not take the graph,
    /// ekb could not compile it, a run failed); then `correct` is false.
    unavailable: Option<String>,
    version: Option<String>,
    correct: bool,
    mismatch: Option<String>,
    median_ms: Option<f64>,
    /// The lowest and highest of the per-round medians.
    round_min_ms: Option<f64>,
    round_max_ms: Option<f64>,
    samples: usize,
}

impl Side {
    fn started(name: String, version: String, mismatch: Option<String>) -> Side {
        Side {
            name,
            unavailable: None,
            version: Some(version),
            correct: mismatch.is_none(),
            mismatch,
            median_ms: None,
            round_min_ms: None,
            round_max_ms: None,
            samples: 0,
        }
    }

    fn unavailable(name: String, why: String) -> Side {
        Side {
            name,
            unavailable: Some(why),
            version: None,
            correct: false,
            mismatch: None,
            median_ms: None,
            round_min_ms: None,
            round_max_ms: None,
            samples: 0,
        }
    }

    /// The median, for a side that ran and is correct.
    fn correct_median(&self) -> Option<f64> {
        self.median_ms.filter(|_| self.correct)
    }
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
        /// The model and inputs stay where the engine loaded them from while it serves.
        _work: tempfile::TempDir,
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
            Runner::Engine { server, per_run, .. } => {
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
            return Err(format!("error: no tuning database `{}` (write one with `ekb tune`)", path.display()))
        }
        Some(path) => Some(ekb_tune::Db::open(path, &target).map_err(|e| format!("error: {e}"))?),
        None => None,
    };
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
            opts.workloads.len(),
            target.name,
            engines.len(),
            opts.rounds,
            opts.round.as_millis()
        );
    }
    let mut rows = Vec::new();
    let total = opts.workloads.len();
    for (i, w) in opts.workloads.iter().enumerate() {
        // Progress on stderr under --json too: a level has hundreds of tasks.
        eprint!("[{}/{total}] {}: ", i + 1, w.name);
        let tuned = db.as_ref().and_then(|db| crate::tune::best_knobs(db, &w.graph, &target));
        if db.is_some() {
            eprint!(
                "{}, ",
                if tuned.is_some() { "the tuned recipe" } else { "no record in the database: the default" }
            );
        }
        let row = bench_one(w, (&target, &tuned.unwrap_or(knobs)), &engines, &opts, threads);
        eprintln!("{}", summary(&row));
        rows.push(row);
    }
    let all_correct = rows.iter().all(|r| r.sides[0].correct);
    let report = Report {
        threads,
        rounds: opts.rounds,
        round_ms: opts.round.as_secs_f64() * 1e3,
        unavailable,
        ..summarise(rows)
    };
    if opts.json {
        println!("{}", serde_json::to_string_pretty(&report).expect("the report serialises"));
    } else {
        print_table(&report);
    }
    Ok(if all_correct { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

/// The report of `rows` with their geomeans (best engine over ekb, the passes' gain), the
/// run's settings left empty.
fn summarise(rows: Vec<Row>) -> Report {
    let ratios: Vec<f64> = rows.iter().filter_map(|r| r.best_over_ekb).collect();
    let gains: Vec<f64> = rows.iter().filter_map(|r| r.passes_gain).collect();
    Report {
        threads: 0,
        rounds: 0,
        round_ms: 0.0,
        unavailable: Vec::new(),
        workloads: rows,
        geomean_best_over_ekb: geomean(&ratios),
        geomean_workloads: ratios.len(),
        geomean_passes_gain: geomean(&gains),
        passes_gain_workloads: gains.len(),
    }
}

/// One workload: every side started (or marked unavailable), timed in alternation, then
/// dropped with the row's figures kept.
fn bench_one(
    w: &Workload,
    (target, knobs): (&TargetProfile, &ekb_lower::Knobs),
    engines: &[(EngineName, bl::Engine)],
    opts: &EngineBench,
    threads: usize,
) -> Row {
    let mut sides = Vec::new();
    let mut runners: Vec<Option<Runner>> = Vec::new();
    let ekb_sides = ekb_sides(opts.without_passes);
    let checked = reference(w);
    for (label, passes) in ekb_sides {
        let started = checked.as_ref().map_err(Clone::clone).and_then(|(inputs, reference)| {
            start_ekb(w, (inputs, reference), target, (knobs, passes.clone()), threads)
        });
        match started {
            Ok((mismatch, runner)) => {
                let version = env!("CARGO_PKG_VERSION").to_string();
                sides.push(Side::started(label.to_string(), version, mismatch));
                runners.push(Some(runner));
            }
            Err(e) => {
                sides.push(Side::unavailable(label.to_string(), e));
                runners.push(None);
            }
        }
    }
    for (label, engine) in engines {
        match start_engine(w, engine, threads) {
            Ok((b, runner)) => {
                sides.push(Side::started(label.label(), b.engine_version, b.mismatches.first().cloned()));
                runners.push(Some(runner));
            }
            Err(e) => {
                sides.push(Side::unavailable(label.label(), e));
                runners.push(None);
            }
        }
    }
    // Per side, per round, the samples.
    let mut rounds: Vec<Vec<Vec<f64>>> = vec![Vec::new(); runners.len()];
    for round in 0..opts.rounds {
        for k in 0..runners.len() {
            let i = (k + round) % runners.len();
            let Some(runner) = runners[i].as_mut() else { continue };
            // A pause first: engines' thread pools spin for a while after a run, and must be
            // asleep when the next side is timed.
            std::thread::sleep(QUIET);
            match runner.round(opts.round) {
                Ok(got) => rounds[i].push(got),
                Err(e) => {
                    sides[i] = Side::unavailable(sides[i].name.clone(), format!("a timed run failed: {e}"));
                    runners[i] = None;
                    rounds[i].clear();
                }
            }
        }
    }
    drop(runners);
    row(w.name.clone(), sides, ekb_sides.len(), &rounds)
}

/// ekb's sides, first on every row: `ekb` with the default graph passes, and with
/// `without_passes` also `ekb-nopass`, the same schedule with none.
fn ekb_sides(without_passes: bool) -> &'static [(&'static str, Selection)] {
    const BOTH: &[(&str, Selection)] = &[("ekb", Selection::Default), ("ekb-nopass", Selection::None)];
    if without_passes {
        BOTH
    } else {
        &BOTH[..1]
    }
}

/// A workload's row from its sides (`ekb_sides` of ekb's, `ekb` first, then the engines) and
/// their samples per round: each side's median of all its samples and range of round medians,
/// the fastest correct engine over ekb, and ekb-nopass over ekb, when ekb is correct.
fn row(workload: String, mut sides: Vec<Side>, ekb_sides: usize, rounds: &[Vec<Vec<f64>>]) -> Row {
    for (s, r) in sides.iter_mut().zip(rounds).filter(|(_, r)| !r.is_empty()) {
        let all: Vec<f64> = r.concat();
        s.median_ms = Some(median(&all));
        s.round_min_ms = r.iter().map(|x| median(x)).reduce(f64::min);
        s.round_max_ms = r.iter().map(|x| median(x)).reduce(f64::max);
        s.samples = all.len();
    }
    let ekb = sides[0].correct_median();
    let best = sides[ekb_sides..]
        .iter()
        .filter_map(|s| s.correct_median().map(|m| (s, m)))
        .min_by(|a, b| a.1.total_cmp(&b.1));
    let best_over_ekb = best.zip(ekb).map(|((_, b), e)| b / e);
    let passes_gain = sides[1..ekb_sides].first().and_then(Side::correct_median).zip(ekb).map(|(n, e)| n / e);
    Row { workload, best_engine: best.map(|(s, _)| s.name.clone()), best_over_ekb, passes_gain, sides }
}

/// The progress line's end: each side's median, and the best engine over ekb.
fn summary(r: &Row) -> String {
    let sides: Vec<String> = r
        .sides
        .iter()
        .map(|s| match (&s.unavailable, s.median_ms) {
            (Some(_), _) | (_, None) => format!("{} n/a", s.name),
            (None, Some(m)) => format!("{} {m:.3} ms{}", s.name, if s.correct { "" } else { " (wrong)" }),
        })
        .collect();
    let ratio = r.best_over_ekb.map_or_else(String::new, |x| format!("; best/ekb {x:.2}x"));
    let gain = r.passes_gain.map_or_else(String::new, |x| format!("; passes gain {x:.2}x"));
    format!("{}{ratio}{gain}", sides.join(", "))
}

/// A workload's inputs on seed 0 and the reference interpreter's outputs on them.
fn reference(w: &Workload) -> Result<(HashMap<String, Buffer>, Vec<Tensor>), String> {
    let inputs: HashMap<String, Buffer> =
        l0::inputs::generate(&w.graph, 0).map_err(|d| d.to_string())?.into_iter().collect();
    let tensors: HashMap<String, Tensor> = inputs.iter().map(|(n, b)| (n.clone(), b.to_tensor())).collect();
    let reference = l0::interp::run(&w.graph, &tensors).map_err(|d| d.to_string())?;
    Ok((inputs, reference))
}

/// An ekb side: the default schedule compiled for this CPU with the graph passes `passes`,
/// loaded here, checked against `reference` at the workload's tolerances (the mismatch, if
/// any).
fn start_ekb(
    w: &Workload,
    (inputs, reference): (&HashMap<String, Buffer>, &[Tensor]),
    target: &TargetProfile,
    (knobs, passes): (&ekb_lower::Knobs, Selection),
    threads: usize,
) -> Result<(Option<String>, Runner), String> {
    let g = &w.graph;
    let artifact =
        compile(&w.source, g, (Schedule::Default, Some(*knobs), passes), Stage::Toolchain, target)?;
    let host = driver::load_host(&artifact, threads).map_err(|d| d.to_string())?;
    let m = artifact.module;
    let out = host.run(&m, inputs).map_err(|d| d.to_string())?;
    let mut mismatch = None;
    for ((o, r), tol) in g.outputs.iter().zip(reference).zip(&w.tolerances) {
        if let Err(e) = compare(r, &out[&o.name].to_tensor(), *tol) {
            mismatch = Some(format!("output `{}`: {e}", o.name));
        }
    }
    let warm = host.time(&m, inputs, 3, 3).map_err(|d| d.to_string())?;
    let per_run = warm.iter().min().copied().unwrap_or_default();
    Ok((mismatch, Runner::Ekb { m, host, inputs: inputs.clone(), per_run }))
}

/// An engine's side: the graph exported, loaded by the engine, checked on seed 0.
fn start_engine(w: &Workload, engine: &bl::Engine, threads: usize) -> Result<(bl::Baseline, Runner), String> {
    let work = tempfile::tempdir().map_err(|e| format!("cannot make a temporary directory: {e}"))?;
    let opts = BaselineOptions { seed: 0, warmup: 3, samples: 3, threads: threads as u32 };
    let (b, server) = bl::serve(&w.graph, engine, opts, work.path())?;
    let per_run = Duration::from_nanos(b.timing.stats.median_ns as u64);
    Ok((b, Runner::Engine { server, per_run, _work: work }))
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
    let gains = names.get(1).is_some_and(|n| n == "ekb-nopass");
    if gains {
        head.push_str(&format!("  {:>9}", "passes"));
    }
    println!("{head}");
    for w in &r.workloads {
        let mut line = format!("{:width$}", w.workload);
        for s in &w.sides {
            match s.median_ms {
                Some(m) => line.push_str(&format!("  {m:>11.3}{}", if s.correct { ' ' } else { '!' })),
                None => line.push_str(&format!("  {:>11} ", "n/a")),
            }
        }
        line.push_str(&format!("  {:>12}", w.best_engine.as_deref().unwrap_or("-")));
        line.push_str(&ratio_cell(w.best_over_ekb));
        if gains {
            line.push_str(&ratio_cell(w.passes_gain));
        }
        println!("{line}");
    }
    for w in &r.workloads {
        for s in &w.sides {
            if let Some(why) = &s.unavailable {
                println!("n/a {} on {}: {}", s.name, w.workload, why.lines().next().unwrap_or("?"));
            } else if !s.correct {
                println!(
                    "! {} on {}: outputs differ from the reference: {}",
                    s.name,
                    w.workload,
                    s.mismatch.as_deref().unwrap_or("?")
                );
            }
        }
    }
    let versions: Vec<String> = names
        .iter()
        .enumerate()
        .map(|(i, n)| {
            let v = r.workloads.iter().find_map(|w| w.sides[i].version.as_deref());
            format!("{n} {}", v.unwrap_or("?"))
        })
        .collect();
    println!("versions: {}", versions.join(", "));
    match r.geomean_best_over_ekb {
        Some(g) => println!(
            "geomean best/ekb: {g:.2}x over {} of {} workload(s)",
            r.geomean_workloads,
            r.workloads.len()
        ),
        None => println!("geomean best/ekb: - (no workload has both a correct ekb and a correct engine)"),
    }
    if gains {
        println!("{}", passes_gain_line(r));
    }
}

/// The summary of the passes' gain: its geomean over the rows that have one.
fn passes_gain_line(r: &Report) -> String {
    match r.geomean_passes_gain {
        Some(g) => format!(
            "geomean passes gain (ekb-nopass/ekb, above 1: the graph passes make ekb faster): {g:.2}x over {} of {} workload(s)",
            r.passes_gain_workloads,
            r.workloads.len()
        ),
        None => "geomean passes gain: - (no workload has both ekb sides correct)".into(),
    }
}

/// A ratio as a table cell, `-` for none.
fn ratio_cell(x: Option<f64>) -> String {
    x.map_or_else(|| format!("  {:>9}", "-"), |x| format!("  {x:>8.2}x"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn started(name: &str, mismatch: Option<&str>) -> Side {
        Side::started(name.into(), "1".into(), mismatch.map(String::from))
    }

    #[test]
    fn the_best_engine_is_the_fastest_correct_one_that_ran() {
        let sides = vec![
            started("ekb", None),
            Side::unavailable("onnxruntime".into(), "the engine refused the model".into()),
            started("mnn", Some("output `y` differs")),
            started("tvm", None),
        ];
        let rounds = [vec![vec![2.0, 4.0], vec![3.0]], vec![], vec![vec![1.0]], vec![vec![5.0], vec![7.0]]];
        let r = row("w".into(), sides, 1, &rounds);
        assert_eq!((r.best_engine.as_deref(), r.best_over_ekb), (Some("tvm"), Some(2.0)));
        let ekb = &r.sides[0];
        assert_eq!(
            (ekb.median_ms, ekb.round_min_ms, ekb.round_max_ms, ekb.samples),
            (Some(3.0), Some(3.0), Some(3.0), 3)
        );
        let ort = &r.sides[1];
        assert!(ort.unavailable.is_some() && !ort.correct && ort.median_ms.is_none());
        assert_eq!(r.sides[3].round_min_ms, Some(5.0));
        assert!(
            summary(&r).contains("onnxruntime n/a, mnn 1.000 ms (wrong), tvm 6.000 ms"),
            "{}",
            summary(&r)
        );
    }

    #[test]
    fn a_row_without_a_correct_ekb_has_no_ratio() {
        let sides =
            vec![Side::unavailable("ekb".into(), "the toolchain stage failed".into()), started("tvm", None)];
        let r = row("w".into(), sides, 1, &[vec![], vec![vec![1.0]]]);
        assert_eq!((r.best_engine.as_deref(), r.best_over_ekb, r.passes_gain), (Some("tvm"), None, None));
    }

    #[test]
    fn the_passes_gain_is_the_nopass_side_over_ekb_and_never_the_best_engine() {
        let names: Vec<&str> = ekb_sides(true).iter().map(|(n, _)| *n).collect();
        assert_eq!(names, ["ekb", "ekb-nopass"]);
        assert_eq!(ekb_sides(false).len(), 1);
        // ekb 2 ms, ekb-nopass 3 ms (faster than the engine, never its best), onnxruntime 4 ms.
        let rounds = [vec![vec![2.0]], vec![vec![3.0]], vec![vec![4.0]]];
        let sides = vec![started("ekb", None), started("ekb-nopass", None), started("onnxruntime", None)];
        let r = row("w".into(), sides, 2, &rounds);
        assert_eq!(
            (r.best_engine.as_deref(), r.best_over_ekb, r.passes_gain),
            (Some("onnxruntime"), Some(2.0), Some(1.5))
        );
        assert!(summary(&r).ends_with("; best/ekb 2.00x; passes gain 1.50x"), "{}", summary(&r));
        // A wrong ekb-nopass, or a wrong ekb, has no gain.
        let sides =
            vec![started("ekb", None), started("ekb-nopass", Some("differs")), started("onnxruntime", None)];
        assert_eq!(row("w".into(), sides, 2, &rounds).passes_gain, None);
        let sides =
            vec![started("ekb", Some("differs")), started("ekb-nopass", None), started("onnxruntime", None)];
        assert_eq!(row("w".into(), sides, 2, &rounds).passes_gain, None);
    }

    #[test]
    fn the_report_gives_the_geomean_of_the_passes_gain_over_the_rows_that_have_one() {
        let rounds = |ekb: f64, nopass: f64| [vec![vec![ekb]], vec![vec![nopass]]];
        let both = || vec![started("ekb", None), started("ekb-nopass", None)];
        let rows = vec![
            row("a".into(), both(), 2, &rounds(1.0, 2.0)),
            row("b".into(), both(), 2, &rounds(4.0, 2.0)),
            row(
                "c".into(),
                vec![started("ekb", None), started("ekb-nopass", Some("differs"))],
                2,
                &rounds(1.0, 9.0),
            ),
        ];
        let report = summarise(rows);
        // √(2 · 0.5) = 1, over a and b; no engine, so no best/ekb.
        assert_eq!((report.geomean_best_over_ekb, report.geomean_workloads), (None, 0));
        assert_eq!(report.passes_gain_workloads, 2);
        assert!((report.geomean_passes_gain.unwrap() - 1.0).abs() < 1e-12);
        assert_eq!(
            passes_gain_line(&report),
            "geomean passes gain (ekb-nopass/ekb, above 1: the graph passes make ekb faster): 1.00x over 2 of 3 workload(s)"
        );
    }
}
