//! `ekb bench`: the main job on the built-in default — this machine's CPU, no board, no model.
//!
//! By default it is the evaluation protocol (`ekb eval`) with the built-in `default` schedule
//! as the candidate of every Level-1 CPU instance and the `naive` lowering as the baseline, run
//! on this machine through the device runtime, stored in a run directory and printed as the
//! report.
//!
//! `--workloads` is the compiler's own benchmark instead: for each built-in workload, compile
//! with the `naive` and `default` schedules through the driver (`ekb_deploy::driver`) for this
//! machine, load both into this process, check both against the f64 reference interpreter
//! (seed 0), then time them in one run in this process, alternating naive and default sample by
//! sample (the order of each pair drawn at random; a sample is the median of about 10 ms of runs
//! on buffers set up once), and report medians, the median of the
//! per-pair ratios, and GFLOP/s next to the machine's practical peak (numpy's BLAS sgemm,
//! measured in the same run). A second table gives the time to lower, emit and compile every
//! operator of the corpus in `tests/ops` (the driver's times of its lowering, adapter and
//! toolchain stages).
//!
//! `--engines` sets ekb's default schedule next to the inference engines on the anchor
//! workloads, or on the tasks a selection picks (`bench_engines.rs`); with `--backend cuda`,
//! ekb's default CUDA pipeline next to PyTorch on the GPU (`bench_cuda/`).
//! Figures are ratios and medians from one run: this is a benchmark, not a test.

use crate::bench_cuda;
use crate::bench_engines::{self, EngineBench, EngineName};
use crate::eval::{self, EvalArgs};
use crate::tasks::{self as task_cli, Select};
use ekb_deploy::driver::{self, Artifact, BackendChoice, CompileOptions, Program, Sources, Stage};
use ekb_eval::evaluate::candidate::Candidates;
use ekb_eval::evaluate::selfcheck;
use ekb_eval::tasks::Backend;
use ekb_ir::l0::{self, Graph};
use ekb_ir::tensor::{compare, Buffer, Tensor, Tolerance};
use ekb_ir::{SourceFile, TargetProfile};
use ekb_lower::Schedule;
use ekb_passes::Selection;
use serde::Serialize;
use std::collections::HashMap;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

include!(concat!(env!("OUT_DIR"), "/op_corpus.rs"));

/// The benchmark on this machine: the built-in default schedule vs the naive lowering over the
/// Level-1 CPU tasks (or, with `--workloads`, the compiler's own workloads next to the peak).
#[derive(clap::Args)]
#[command(after_help = "Examples:\n  \
ekb bench                          every Level-1 CPU task: default schedule vs naive, the report\n  \
ekb bench conv --budget 1          only tasks whose name contains `conv`, 1 s of timing each\n  \
ekb bench --out runs/b1 --resume   continue an interrupted benchmark\n  \
ekb bench --workloads              matmul/conv/... workloads next to numpy's sgemm peak\n  \
ekb bench --self-check             the measurement against itself: A/A and a known 2x effect\n  \
ekb bench --engines                the anchor workloads next to onnxruntime, MNN and TVM\n  \
ekb bench --engines --engine onnxruntime,tvm-tuned:64 --only softmax\n  \
ekb bench --engines --engine onnxruntime --level 2 --rounds 3 --round-ms 150   Level-2 tasks\n  \
ekb bench --engines --engine onnxruntime --without-passes   ekb with and without its graph passes\n  \
ekb bench --engines --db tuning/host.jsonl   the tuned anchors (ekb tune --anchors first)\n  \
ekb bench --engines --backend cuda --level 2   the Level-2 CUDA instances next to torch and torch.compile\n  \
ekb bench --workloads --quick --only matmul_512 --json\n\
Engines are Python packages installed on demand: toolchains/setup.sh --baselines")]
pub struct Args {
    #[command(flatten)]
    select: Select,
    #[command(flatten)]
    eval: EvalArgs,
    /// The run directory [default: runs/bench-TIMESTAMP].
    #[arg(long)]
    out: Option<PathBuf>,
    /// The compiler's workloads instead of the task suite.
    #[arg(long, conflicts_with_all = ["self_check", "engines"])]
    workloads: bool,
    /// The anchor workloads (matmul, conv2d, depthwise, softmax, layer_norm), or the CPU
    /// instances of the tasks PATTERN and the task filters select, next to the inference
    /// engines installed here, in one run, alternating between the sides.
    #[arg(long, conflicts_with = "self_check")]
    engines: bool,
    /// --engines: the engines, comma-separated: onnxruntime, mnn, tvm, tvm-tuned:TRIALS
    /// (MetaSchedule; the first tuning of a workload takes minutes, its records are reused)
    /// [default: onnxruntime,mnn,tvm, those installed]; with `--backend cuda`: torch,
    /// torch-compile [default: both].
    #[arg(long, requires = "engines", value_delimiter = ',', value_name = "LIST")]
    engine: Vec<String>,
    /// --engines: rounds of alternation [default: 5; 3 with `--backend cuda`].
    #[arg(long, requires = "engines")]
    rounds: Option<usize>,
    /// --engines: the timing of each side in each round, in milliseconds.
    #[arg(long, requires = "engines")]
    round_ms: Option<u64>,
    /// --engines: set a knob of ekb's default schedule (repeatable): `NAME=VALUE`, as `ekb
    /// lower --knob` takes it.
    #[arg(long, requires = "engines", value_name = "NAME=VALUE")]
    knob: Vec<String>,
    /// --engines: ekb's side of each workload uses the best record of this tuning database
    /// (`ekb tune`, `ekb tune --anchors`), over the default's knobs and `--knob`s; workloads it
    /// has no record of keep the default.
    #[arg(long, requires = "engines", value_name = "FILE")]
    db: Option<PathBuf>,
    /// --engines --backend cuda: only the K-th of N interleaved shares of the selected
    /// instances (`1/2`, `2/2`), to measure a level in several shorter runs.
    #[arg(long, requires = "engines", value_name = "K/N")]
    shard: Option<String>,
    /// --engines: also time ekb's default schedule compiled with the graph passes off (the
    /// side `ekb-nopass`); each row gets `passes_gain`, that side's median over ekb's (above 1:
    /// the passes make ekb faster), and the report its geomean.
    #[arg(long, requires = "engines")]
    without_passes: bool,
    /// Check the measurement itself on every selected instance: the default candidate timed
    /// against itself (the ratio's interval must contain 1) and against itself run twice, two
    /// executions a sample (the ratio must be 0.50 within 2%); prints each and the share that
    /// passes.
    #[arg(long)]
    self_check: bool,
    /// --workloads: about 0.5 s per workload instead of 3 s.
    #[arg(long, requires = "workloads")]
    quick: bool,
    /// --workloads, --engines: only the workloads (anchors or selected tasks) whose name
    /// contains this text.
    #[arg(long)]
    only: Option<String>,
    /// --workloads: skip the per-operator lowering table.
    #[arg(long, requires = "workloads")]
    no_lowering_table: bool,
    /// --workloads, --engines: print one JSON object instead of tables.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> Result<ExitCode, String> {
    if args.workloads {
        return run_workloads(args);
    }
    if args.engines && args.select.backend.as_deref().is_some_and(|b| b != "cpu") {
        return run_engines_gpu(args);
    }
    if args.engines {
        if args.shard.is_some() {
            return Err("error: `--shard` applies to `--engines --backend cuda`".into());
        }
        let explicit = !args.engine.is_empty();
        let names: Vec<&str> = if explicit {
            args.engine.iter().map(String::as_str).collect()
        } else {
            vec!["onnxruntime", "mnn", "tvm"]
        };
        let engines = names
            .into_iter()
            .map(EngineName::parse)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| format!("error: {e}"))?;
        let (rounds, round_ms) = (args.rounds.unwrap_or(5), args.round_ms.unwrap_or(300));
        if rounds == 0 || round_ms == 0 {
            return Err("error: `--rounds` and `--round-ms` must be at least 1".into());
        }
        let workloads = if args.select.given() {
            let mut tasks = task_cli::cpu_workloads(&args.select, &args.eval.dir)?;
            tasks.retain(|w| args.only.as_deref().is_none_or(|o| w.name.contains(o)));
            if tasks.is_empty() {
                return Err("error: no CPU task matches the selection and `--only`\n  = hint: `ekb tasks list` with the same filters lists the tasks".into());
            }
            tasks
        } else {
            bench_engines::anchors(args.only.as_deref())?
        };
        return bench_engines::run(EngineBench {
            workloads,
            engines,
            explicit,
            rounds,
            round: Duration::from_millis(round_ms),
            threads: args.eval.threads.map_or(0, |t| t as usize),
            target: args.eval.target.clone(),
            knobs: args.knob.clone(),
            db: args.db.clone(),
            without_passes: args.without_passes,
            json: args.json,
        });
    }
    if args.only.is_some() || args.json {
        return Err("error: `--only` and `--json` apply to `--workloads` and `--engines`".into());
    }
    let out = args.out.clone().unwrap_or_else(|| eval::default_out("bench"));
    let mut filter = task_cli::filter(&args.select)?;
    filter.level = filter.level.or(Some(1));
    if filter.backend.is_some_and(|b| b != Backend::Cpu) {
        return Err(
            "error: `ekb bench` runs the CPU instances on this machine\n  = hint: drop `--backend`".into()
        );
    }
    if args.self_check {
        return run_self_check(&args, filter);
    }
    eval::evaluate_selection(&args.eval, filter, Candidates::Builtin(Schedule::Default), 1, &out)
}

/// `--engines --backend cuda`: ekb's default CUDA pipeline next to PyTorch on the CUDA
/// instances the selection picks (`bench_cuda`).
fn run_engines_gpu(args: Args) -> Result<ExitCode, String> {
    if args.select.backend.as_deref() != Some("cuda") {
        return Err("error: `ekb bench --engines` compares the cpu backend with the CPU engines and the cuda backend with PyTorch\n  = hint: `--backend cuda` or `--backend cpu`".into());
    }
    if !args.knob.is_empty() || args.db.is_some() || args.without_passes {
        return Err("error: `--knob`, `--db` and `--without-passes` apply to the CPU comparison, not to `--backend cuda`".into());
    }
    let sides = if args.engine.is_empty() {
        vec![bench_cuda::TorchSide::Eager, bench_cuda::TorchSide::Compile]
    } else {
        args.engine
            .iter()
            .map(|e| bench_cuda::TorchSide::parse(e))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| format!("error: {e}"))?
    };
    let rounds = args.rounds.unwrap_or(bench_cuda::DEFAULT_ROUNDS);
    let round_ms = args.round_ms.unwrap_or(bench_cuda::DEFAULT_ROUND_MS);
    if rounds == 0 || round_ms == 0 {
        return Err("error: `--rounds` and `--round-ms` must be at least 1".into());
    }
    let shard =
        args.shard.as_deref().map(bench_cuda::Shard::parse).transpose().map_err(|e| format!("error: {e}"))?;
    bench_cuda::run(bench_cuda::CudaBench {
        select: args.select,
        dir: args.eval.dir,
        only: args.only,
        shard,
        sides,
        rounds,
        round: Duration::from_millis(round_ms),
        target: args.eval.cuda_target,
        exec_timeout: Duration::from_secs_f64(args.eval.timeout.max(0.001)),
        json: args.json,
    })
}

/// `--self-check`: the A/A and known-effect checks of the measurement, a line per instance as
/// it finishes, then the share that passes.
fn run_self_check(args: &Args, mut filter: ekb_eval::tasks::Filter) -> Result<ExitCode, String> {
    filter.backend = Some(Backend::Cpu);
    let command: Vec<String> = std::env::args().collect();
    let candidates = Candidates::Builtin(Schedule::Default);
    let plan = eval::plan(&args.eval, candidates, 1, command, std::path::Path::new(""))?;
    let (suite, broken) = task_cli::load(&args.eval.dir)?;
    if broken {
        return Err("error: fix the task files above first".into());
    }
    let tasks = task_cli::select(&filter, &suite)?;
    if tasks.is_empty() {
        return Err("error: no instance matches the selection".into());
    }
    let link = plan.links(&[Backend::Cpu])?.remove(&Backend::Cpu).expect("a link per backend asked for");
    eprintln!(
        "self-check of the measurement: {} instance(s) on {}, seeds {:?}; each line: the default \
         candidate against itself (true ratio 1) and against itself run twice (true ratio 0.5)",
        tasks.len(),
        plan.device,
        plan.config.seeds
    );
    let started = Instant::now();
    let width = tasks.iter().map(|t| t.name.len()).max().unwrap_or(0);
    println!("{:width$}  {:>26}  {:>26}", "instance", "A/A ratio [95% interval]", "plan twice (want 0.50)");
    let show = |r: &Option<ekb_wire::protocol::RatioStats>, pass: bool| {
        r.as_ref().map_or_else(
            || format!("{:>26}", "-"),
            |r| {
                format!(
                    "{:>4} {:.3} [{:.3}, {:.3}]",
                    if pass { "ok" } else { "FAIL" },
                    r.median,
                    r.ci_low,
                    r.ci_high
                )
            },
        )
    };
    let checks = selfcheck::self_check(&tasks, &plan.config, link, &mut |c| {
        let mut line = format!(
            "{:width$}  {:>26}  {:>26}",
            c.task,
            show(&c.same, c.same_passes()),
            show(&c.twice, c.twice_passes())
        );
        if let Some(e) = &c.error {
            line.push_str(&format!("  ({})", e.lines().next().unwrap_or("")));
        }
        println!("{line}");
    })
    .map_err(|d| d.to_string())?;
    let n = checks.len();
    let share = |k: usize| 100.0 * k as f64 / n.max(1) as f64;
    let (same, twice, both) = (
        checks.iter().filter(|c| c.same_passes()).count(),
        checks.iter().filter(|c| c.twice_passes()).count(),
        checks.iter().filter(|c| c.passes()).count(),
    );
    println!(
        "self-check: {both} of {n} instances pass ({:.1}%): A/A {same} ({:.1}%), plan twice {twice} ({:.1}%); {:.0} s",
        share(both),
        share(same),
        share(twice),
        started.elapsed().as_secs_f64()
    );
    Ok(ExitCode::SUCCESS)
}

/// A built-in workload: an L0 graph and its floating-point operation count (multiply-adds
/// count two).
struct Workload {
    name: &'static str,
    text: &'static str,
    flops: f64,
}

const WORKLOADS: &[Workload] = &[
    Workload {
        name: "matmul_512",
        text: "graph matmul_512(a: f32[512,512], b: f32[512,512]) -> (c: f32[512,512]) {\n  \
               %0 = matmul(a, b)\n  return %0\n}\n",
        flops: 2.0 * 512.0 * 512.0 * 512.0,
    },
    Workload {
        name: "conv3x3_56x56x64",
        text: "graph conv3x3_56x56x64(x: f32[1,64,56,56]) -> (y: f32[1,64,56,56]) {\n  \
               param w: f32[64,64,3,3] = kaiming_uniform\n  \
               %0 = conv2d(x, w, stride=[1,1], pad=[1,1,1,1], dilation=[1,1], groups=1)\n  return %0\n}\n",
        flops: 2.0 * 64.0 * 56.0 * 56.0 * 64.0 * 9.0,
    },
    Workload {
        name: "depthwise3x3_112x112x32",
        text: "graph depthwise3x3_112x112x32(x: f32[1,32,112,112]) -> (y: f32[1,32,112,112]) {\n  \
               param w: f32[32,1,3,3] = kaiming_uniform\n  \
               %0 = conv2d(x, w, stride=[1,1], pad=[1,1,1,1], dilation=[1,1], groups=32)\n  return %0\n}\n",
        flops: 2.0 * 32.0 * 112.0 * 112.0 * 9.0,
    },
    Workload {
        name: "softmax_256x1000",
        text: "graph softmax_256x1000(x: f32[256,1000] = uniform(-5, 5)) -> (y: f32[256,1000]) {\n  \
               %0 = softmax(x, axis=-1)\n  return %0\n}\n",
        flops: 0.0,
    },
    Workload {
        name: "layer_norm_128x768",
        text: "graph layer_norm_128x768(x: f32[128,768]) -> (y: f32[128,768]) {\n  \
               param g: f32[768] = ones\n  param b: f32[768] = zeros\n  \
               %0 = layer_norm(x, g, b, eps=1e-5)\n  return %0\n}\n",
        flops: 0.0,
    },
    Workload {
        name: "gelu_1m",
        text: "graph gelu_1m(x: f32[1024,1024] = uniform(-4, 4)) -> (y: f32[1024,1024]) {\n  \
               %0 = gelu(x, approximate=tanh)\n  return %0\n}\n",
        flops: 0.0,
    },
];

#[derive(Serialize)]
struct Report {
    threads: usize,
    peak: Option<Peak>,
    peak_unavailable: Option<String>,
    workloads: Vec<WorkloadResult>,
    lowering: Vec<LoweringTime>,
}

#[derive(Serialize)]
struct Peak {
    what: String,
    gflops: f64,
}

#[derive(Serialize)]
struct WorkloadResult {
    name: String,
    flops: f64,
    samples: usize,
    naive: SideResult,
    default: SideResult,
    /// Median over pairs of naive time / default time.
    speedup: f64,
}

#[derive(Serialize)]
struct SideResult {
    correct: bool,
    mismatch: Option<String>,
    median_ms: f64,
    cv: f64,
    gflops: Option<f64>,
    samples_ms: Vec<f64>,
}

#[derive(Serialize)]
struct LoweringTime {
    operator: String,
    lower_naive_us: f64,
    lower_default_us: f64,
    emit_us: f64,
    compile_ms: f64,
}

fn run_workloads(args: Args) -> Result<ExitCode, String> {
    let threads = args.eval.threads.map_or(0, |t| t as usize);
    let target = TargetProfile::load("host").map_err(|e| format!("error: {e}"))?;
    let budget = Duration::from_millis(if args.quick { 500 } else { 3000 });
    let selected: Vec<&Workload> =
        WORKLOADS.iter().filter(|w| args.only.as_deref().is_none_or(|o| w.name.contains(o))).collect();
    if selected.is_empty() {
        let names: Vec<_> = WORKLOADS.iter().map(|w| w.name).collect();
        return Err(format!(
            "error: no workload matches `--only {}`; workloads: {}",
            args.only.unwrap_or_default(),
            names.join(", ")
        ));
    }
    let (peak, peak_unavailable) = match measure_peak() {
        Ok(p) => (Some(p), None),
        Err(e) => (None, Some(e)),
    };
    if !args.json {
        match (&peak, &peak_unavailable) {
            (Some(p), _) => eprintln!("practical peak: {:.1} GFLOP/s ({})", p.gflops, p.what),
            (_, Some(e)) => eprintln!("practical peak not measured: {e}"),
            _ => {}
        }
    }
    let mut report =
        Report { threads: 0, peak, peak_unavailable, workloads: Vec::new(), lowering: Vec::new() };
    let mut all_correct = true;
    for w in selected {
        if !args.json {
            eprintln!("{}: compiling, checking, timing ...", w.name);
        }
        let r = bench_workload(w, &target, threads, budget, &mut report.threads)?;
        all_correct &= r.naive.correct && r.default.correct;
        report.workloads.push(r);
    }
    if !args.no_lowering_table {
        if !args.json {
            eprintln!("lowering the operator corpus ({} graphs) ...", OP_CORPUS.len());
        }
        report.lowering = lowering_table(&target)?;
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report).expect("report serialises"));
    } else {
        print_report(&report);
    }
    Ok(if all_correct { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

pub(crate) fn load(name: &str, text: &str) -> Result<(SourceFile, Graph), String> {
    let src = SourceFile::new(format!("{name}.ekir"), text);
    let g = l0::check::load(&src)
        .map_err(|ds| ds.iter().map(|d| d.to_string()).collect::<Vec<_>>().join("\n"))?;
    Ok((src, g))
}

/// Compiles a workload for this machine's CPU with `schedule` (and `knobs`, or the target's),
/// up to `until`.
pub(crate) fn compile(
    src: &SourceFile,
    g: &Graph,
    (schedule, knobs, passes): (Schedule, Option<ekb_lower::Knobs>, Selection),
    until: Stage,
    target: &TargetProfile,
) -> Result<Artifact, String> {
    let with_passes =
        if passes == Selection::Default { String::new() } else { format!(", graph passes {passes}") };
    let options = CompileOptions {
        schedule,
        knobs,
        backend: BackendChoice::Cpu,
        until,
        passes,
        ..CompileOptions::default()
    };
    let sources = Sources { graph: Some(src), module: None };
    driver::compile(Program::Graph(g), sources, target, &options).map_err(|f| {
        let diags: Vec<String> = f.diagnostics.iter().map(|d| d.to_string()).collect();
        format!("{} ({schedule}{with_passes}): the {} stage failed:\n{}", g.name, f.stage, diags.join("\n"))
    })
}

fn bench_workload(
    w: &Workload,
    target: &TargetProfile,
    threads: usize,
    budget: Duration,
    threads_used: &mut usize,
) -> Result<WorkloadResult, String> {
    let (src, g) = load(w.name, w.text)?;
    let inputs: HashMap<String, Buffer> =
        l0::inputs::generate(&g, 0).map_err(|d| d.to_string())?.into_iter().collect();
    let tensors: HashMap<String, Tensor> = inputs.iter().map(|(n, b)| (n.clone(), b.to_tensor())).collect();
    let reference = l0::interp::run(&g, &tensors).map_err(|d| d.to_string())?;

    let mut sides = Vec::new();
    for schedule in Schedule::ALL {
        let artifact = compile(&src, &g, (schedule, None, Selection::Default), Stage::Toolchain, target)?;
        let host = driver::load_host(&artifact, threads).map_err(|d| d.to_string())?;
        let m = artifact.module;
        *threads_used = host.threads();
        let out = host.run(&m, &inputs).map_err(|d| d.to_string())?;
        let mut mismatch = None;
        for (o, r) in g.outputs.iter().zip(&reference) {
            if let Err(e) = compare(r, &out[&o.name].to_tensor(), Tolerance::default_for(o.ty.dtype)) {
                mismatch = Some(format!("output `{}`: {e}", o.name));
            }
        }
        host.time(&m, &inputs, 1, 1).map_err(|d| d.to_string())?; // warm-up
        sides.push((m, host, mismatch));
    }

    // Paired samples: each pair times both schedules, in an order drawn at random. A sample is
    // the median of a batch of runs on buffers set up once (a warm-up run first), about 10 ms
    // of them: buffers made afresh for every run put their first use inside the timing.
    let batch: Vec<usize> = sides
        .iter()
        .map(|(m, host, _)| {
            let t = host.time(m, &inputs, 0, 1).map_err(|d| d.to_string())?[0];
            Ok((0.01 / t.as_secs_f64().max(1e-7)).clamp(1.0, 1000.0) as usize)
        })
        .collect::<Result<_, String>>()?;
    let mut rng = 0x9e37_79b9_7f4a_7c15u64 ^ w.name.len() as u64;
    let (mut naive, mut default) = (Vec::new(), Vec::new());
    let start = Instant::now();
    while naive.len() < 5 || (start.elapsed() < budget && naive.len() < 100) {
        rng = ekb_wire::seeded::mix64(rng);
        let order: [usize; 2] = if rng & 1 == 0 { [0, 1] } else { [1, 0] };
        for i in order {
            let (m, host, _) = &sides[i];
            let runs = host.time(m, &inputs, 1, batch[i]).map_err(|d| d.to_string())?;
            let ms: Vec<f64> = runs.iter().map(|d| d.as_secs_f64() * 1e3).collect();
            if i == 0 { &mut naive } else { &mut default }.push(median(&ms));
        }
    }
    let ratios: Vec<f64> = naive.iter().zip(&default).map(|(n, d)| n / d).collect();
    let side = |samples: Vec<f64>, mismatch: Option<String>| {
        let med = median(&samples);
        SideResult {
            correct: mismatch.is_none(),
            mismatch,
            median_ms: med,
            cv: cv(&samples),
            gflops: (w.flops > 0.0).then(|| w.flops / (med * 1e-3) / 1e9),
            samples_ms: samples,
        }
    };
    let mut mismatches = sides.into_iter().map(|(_, _, m)| m);
    Ok(WorkloadResult {
        name: w.name.to_string(),
        flops: w.flops,
        samples: naive.len(),
        naive: side(naive, mismatches.next().flatten()),
        default: side(default, mismatches.next().flatten()),
        speedup: median(&ratios),
    })
}

fn lowering_table(target: &TargetProfile) -> Result<Vec<LoweringTime>, String> {
    let mut rows = Vec::new();
    for (name, text) in OP_CORPUS {
        let (src, g) = load(name, text)?;
        let mut lower_us = [0.0; 2];
        for (i, s) in Schedule::ALL.into_iter().enumerate() {
            let mut times = Vec::new();
            for _ in 0..5 {
                let a = compile(&src, &g, (s, None, Selection::Default), Stage::Lower, target)?;
                times.push(a.time(Stage::Lower).as_secs_f64() * 1e6);
            }
            lower_us[i] = median(&times);
        }
        let a = compile(&src, &g, (Schedule::Default, None, Selection::Default), Stage::Toolchain, target)?;
        let code = a.code.as_ref().expect("compiled through the toolchain");
        rows.push(LoweringTime {
            operator: name.to_string(),
            lower_naive_us: lower_us[0],
            lower_default_us: lower_us[1],
            emit_us: a.time(Stage::Adapter).as_secs_f64() * 1e6,
            compile_ms: code.log.duration.as_secs_f64() * 1e3,
        });
    }
    Ok(rows)
}

/// The machine's practical peak: numpy's BLAS sgemm at 1024³ (best of several runs).
fn measure_peak() -> Result<Peak, String> {
    const SCRIPT: &str = r#"
import time, numpy as np
n = 1024
a = np.random.rand(n, n).astype(np.float32); b = np.random.rand(n, n).astype(np.float32)
a @ b
best = min((lambda t: (a @ b, time.perf_counter() - t)[1])(time.perf_counter()) for _ in range(10))
print(2 * n**3 / best / 1e9, np.__version__)
"#;
    let out = std::process::Command::new("python3")
        .args(["-c", SCRIPT])
        .output()
        .map_err(|e| format!("python3 could not be started ({e})"))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let last = err.lines().last().unwrap_or("").to_string();
        return Err(format!("numpy is not available ({last}); toolchains/setup.sh installs it"));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let mut parts = text.split_whitespace();
    let gflops = parts.next().and_then(|g| g.parse::<f64>().ok()).ok_or("unexpected output from numpy")?;
    let version = parts.next().unwrap_or("?");
    Ok(Peak { what: format!("numpy {version} sgemm 1024x1024x1024, all cores"), gflops })
}

pub(crate) fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    match s.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => s[n / 2],
        n => (s[n / 2 - 1] + s[n / 2]) / 2.0,
    }
}

/// Coefficient of variation (standard deviation / mean).
fn cv(v: &[f64]) -> f64 {
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0).max(1.0);
    var.sqrt() / mean
}

fn print_report(r: &Report) {
    let peak = r.peak.as_ref().map(|p| p.gflops);
    println!(
        "Workloads on this machine ({} threads for `parallel` loops), seed 0, paired samples",
        r.threads
    );
    println!(
        "{:<24} {:>7} {:>11} {:>11} {:>8} {:>9} {:>9} {:>8}  correct",
        "workload", "pairs", "naive ms", "default ms", "speedup", "naive GF", "def. GF", "% peak"
    );
    for w in &r.workloads {
        let gf = |s: &SideResult| s.gflops.map_or("-".to_string(), |g| format!("{g:.2}"));
        let pct = match (w.default.gflops, peak) {
            (Some(g), Some(p)) => format!("{:.1}", 100.0 * g / p),
            _ => "-".into(),
        };
        let ok = |s: &SideResult| if s.correct { "yes" } else { "NO" };
        println!(
            "{:<24} {:>7} {:>11.3} {:>11.3} {:>7.2}x {:>9} {:>9} {:>8}  naive {} / default {}",
            w.name,
            w.samples,
            w.naive.median_ms,
            w.default.median_ms,
            w.speedup,
            gf(&w.naive),
            gf(&w.default),
            pct,
            ok(&w.naive),
            ok(&w.default)
        );
        for s in [&w.naive, &w.default] {
            if let Some(m) = &s.mismatch {
                println!("    mismatch: {m}");
            }
        }
    }
    match (&r.peak, &r.peak_unavailable) {
        (Some(p), _) => println!("practical peak: {:.1} GFLOP/s ({})", p.gflops, p.what),
        (_, Some(e)) => println!("practical peak: not measured: {e}"),
        _ => {}
    }
    if r.lowering.is_empty() {
        return;
    }
    println!();
    println!("Lowering time per operator (tests/ops corpus; lowering: median of 5)");
    println!(
        "{:<22} {:>14} {:>16} {:>12} {:>14}",
        "operator", "L0->L1 naive", "L0->L1 default", "L1->LLVM", "clang -O3"
    );
    for l in &r.lowering {
        println!(
            "{:<22} {:>11.1} us {:>13.1} us {:>9.1} us {:>11.1} ms",
            l.operator, l.lower_naive_us, l.lower_default_us, l.emit_us, l.compile_ms
        );
    }
}
