//! `ekb agent`: LEKA over the selected task instances. Each instance is one run of the
//! candidate tree (`RUN/tree.sqlite`): the level agents (offline policies, or a model for the
//! levels `--llm-levels` names) edit the best node so far, the profiling agent routes, every
//! attempt is evaluated with `ekb eval`'s protocol and kept. The best verified node of each
//! instance is written as `RUN/TASK/BACKEND/sample-0/`, so `RUN` is a candidate folder that `ekb
//! eval --candidates RUN` reads; `ekb tree RUN` shows the attempts.
//!
//! The work is done by `ekb_leka::optimise`; this file chooses the instances, the agents, the
//! budgets and the device, and prints progress and the summary.

use crate::eval::{default_out, plan, EvalArgs};
use crate::generate::{provider, ProviderArgs};
use crate::tasks::{self as task_cli, Select};
use ekb_eval::evaluate::candidate::Candidates;
use ekb_eval::results::{load_run, RunDir, RESULTS_FILE, RUN_FILE};
use ekb_eval::tasks::Backend;
use ekb_ir::Diagnostic;
use ekb_leka::agents::llm::LlmAgent;
use ekb_leka::agents::offline_l0::OfflineL0;
use ekb_leka::agents::offline_l1::OfflineL1;
use ekb_leka::agents::offline_l2::OfflineL2;
use ekb_leka::agents::LevelAgent;
use ekb_leka::evaluator::{Elsewhere, Protocol, Where};
use ekb_leka::flat::{optimise_flat, FlatAgent};
use ekb_leka::optimise::{optimise, Goal, Progress, Summary};
use ekb_leka::tree::{Budgets, Level, Node, RunSpec, Tree, Verdict, TREE_FILE};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

/// Optimise task instances with LEKA, the layered agent: every attempt kept in a candidate tree.
#[derive(clap::Args)]
#[command(
    long_about = "Optimise task instances with LEKA, the layered agent (docs/agent.md).\n\n\
One agent per IR level edits the best program so far, each only its own layer: L0 the graph and \
its graph passes, L1 the schedule (the default schedule's knobs and a schedule trace), L2 kernel \
sources. A profiling agent reads each node's per-kernel times and routes its findings to the \
level that owns them. Every attempt is evaluated with the protocol of `ekb eval` (compile, \
correctness on the run's seeds, paired timing against the baseline) and kept in the candidate \
tree RUN/tree.sqlite; the best verified node of each instance is written to \
RUN/TASK/BACKEND/sample-0/. Without `--provider`, the offline policies decide (graph-pass choices, \
the tuner's knob moves); with it, a model decides for the levels `--llm-levels` names.\n\n\
With `--queue URL`, each batch of attempts is sent as jobs to a pool of workers (`ekb worker`, \
docs/scaleout.md) instead of this machine's device; the tree, the batches' run directories and \
`--resume` are those of a local run.",
    after_help = "Examples:\n  \
ekb agent gemv_mobilenetv2_classifier --nodes 12 --out runs/agent   offline policies, 12 attempts\n  \
ekb agent --level 1 --family matmul --baseline default --wall 600 --out runs/agent\n  \
ekb agent relu --provider openai --base-url http://localhost:8000/v1 --model m --llm-levels l1 --out runs/llm\n  \
ekb agent gemv_mobilenetv2_classifier --nodes 24 --out runs/agent --resume   go on after a kill\n  \
ekb agent relu --mode flat --provider command --command ./my-agent --nodes 12 --out runs/flat   the flat arm\n  \
ekb agent relu --level 1 --queue redis://broker:6379 --out runs/pool   attempts measured by `ekb worker`s\n  \
ekb tree runs/agent show                     every attempt, the best marked\n  \
ekb eval --candidates runs/agent --baseline default   measure the answers again"
)]
pub struct Args {
    #[command(flatten)]
    select: Select,
    #[command(flatten)]
    eval: EvalArgs,
    #[command(flatten)]
    llm: ProviderArgs,
    #[command(flatten)]
    pool: crate::submit::QueueArgs,
    /// `layered` (LEKA: one agent per level, contracts, the profiling agent) or `flat` (one
    /// model rewriting the whole program with the same evaluator and budgets: the baseline arm;
    /// needs `--provider`).
    #[arg(long, default_value = "layered", value_parser = ["layered", "flat"])]
    mode: String,
    /// The levels a model decides for, with `--provider` (comma-separated: l0, l1, l2); the
    /// other levels keep their offline policy (L2 has none).
    #[arg(long, value_delimiter = ',', default_value = "l0,l1,l2")]
    llm_levels: Vec<String>,
    #[arg(long, default_value_t = 0.8)]
    temperature: f64,
    #[arg(long, default_value_t = 4096)]
    max_tokens: u32,
    /// Seconds one model request (or command run) may take.
    #[arg(long, default_value_t = 300)]
    llm_timeout: u64,
    /// Attempts per instance, the root included.
    #[arg(long, default_value_t = 16)]
    nodes: u32,
    /// Model requests per instance.
    #[arg(long)]
    llm_calls: Option<u32>,
    /// Model tokens (prompt and answer) per instance.
    #[arg(long)]
    tokens: Option<u64>,
    /// Wall seconds per instance (agents and evaluation).
    #[arg(long)]
    wall: Option<f64>,
    /// Device seconds per instance (evaluation runs).
    #[arg(long)]
    device_s: Option<f64>,
    /// Edits proposed and evaluated together per round.
    #[arg(long, default_value_t = 4)]
    batch: usize,
    /// The run folder [default: runs/agent-TIMESTAMP].
    #[arg(long)]
    out: Option<PathBuf>,
}

/// One line per node on stderr.
struct Lines;

impl Progress for Lines {
    fn node(&mut self, n: &Node) {
        let why: String = n.rationale.chars().take(60).collect();
        eprintln!(
            "  node {:>3} {:<4} {:<14} {:<60} {}",
            n.id,
            n.level.name(),
            n.agent,
            why,
            n.describe_outcome()
        );
    }

    fn note(&mut self, line: &str) {
        eprintln!("{line}");
    }
}

/// The agents: a model for the levels it is given, the offline policies for the rest.
fn agents(a: &Args) -> Result<Vec<Box<dyn LevelAgent>>, String> {
    let mut levels = Vec::new();
    if a.llm.provider.is_some() {
        for name in &a.llm_levels {
            let level =
                Level::parse(name).filter(|l| ![Level::Root, Level::Flat].contains(l)).ok_or_else(|| {
                    format!(
                        "error: `--llm-levels` names `{name}`\n  = expected: l0, l1 or l2, comma-separated"
                    )
                })?;
            levels.push(level);
        }
    }
    let mut out: Vec<Box<dyn LevelAgent>> = Vec::new();
    if !levels.is_empty() {
        let prov: Arc<dyn ekb_agent::Provider> =
            Arc::from(provider(&a.llm, std::time::Duration::from_secs(a.llm_timeout))?);
        for &level in &levels {
            out.push(Box::new(LlmAgent {
                level,
                provider: prov.clone(),
                model: a.llm.model.clone(),
                temperature: a.temperature,
                max_tokens: a.max_tokens,
                calls: 0,
            }));
        }
    }
    if !levels.contains(&Level::L0) {
        out.push(Box::new(OfflineL0));
    }
    if !levels.contains(&Level::L1) {
        out.push(Box::new(OfflineL1));
    }
    if !levels.contains(&Level::L2) {
        out.push(Box::new(OfflineL2));
    }
    Ok(out)
}

/// Writes `out/run.json` and `out/results.jsonl`: an evaluation run whose candidates are the
/// answers (each instance's best node, as its batch measured it), so `ekb report RUN` gives the
/// agent's metrics. Its settings are those of the first instance's first batch; rewritten
/// whole after each instance.
fn write_answers(out: &Path, tree: &Tree, rows: &[(String, Summary)]) -> Result<(), String> {
    let mut results = Vec::new();
    for (_, s) in rows {
        let mut r = tree
            .result(s.best.id)
            .map_err(|d| d.to_string())?
            .ok_or_else(|| format!("error: node {} has no evaluation", s.best.id))?;
        r.sample = 0;
        results.push(r);
    }
    let first = out.join("evals").join(format!("n{}", rows[0].1.root.id)).join("run");
    let mut info = load_run(&first).map_err(|d| d.to_string())?.info;
    info.command = std::env::args().collect();
    info.candidates = out.display().to_string();
    info.samples = 1;
    info.instances = results.iter().map(|r| r.instance.clone()).collect();
    for file in [RUN_FILE, RESULTS_FILE] {
        let path = out.join(file);
        if path.exists() {
            std::fs::remove_file(&path)
                .map_err(|e| format!("error: cannot replace `{}`: {e}", path.display()))?;
        }
    }
    let mut dir = RunDir::create(out, &info).map_err(|d| d.to_string())?;
    for r in &results {
        dir.append(r).map_err(|d| d.to_string())?;
    }
    Ok(())
}

/// The summary's confirmation cell: the answer's confirmation, and the answers rejected before
/// it (`rejected node 5 (0.37x [0.35, 0.39]); the start kept`); `-` when the start was the
/// answer without any.
fn confirmation_cell(s: &Summary) -> String {
    let mut parts: Vec<String> = s
        .confirmations
        .iter()
        .filter(|c| c.verdict == Some(Verdict::Rejected))
        .map(|c| format!("rejected node {} ({})", c.node, c.describe().trim_start_matches("rejected: ")))
        .collect();
    match s.confirmations.iter().find(|c| c.node == s.best.id && c.verdict == Some(Verdict::Confirmed)) {
        Some(c) => parts.push(c.describe()),
        None if !parts.is_empty() => parts.push("the start kept".into()),
        None => {}
    }
    if parts.is_empty() {
        "-".into()
    } else {
        parts.join("; ")
    }
}

pub fn run(a: Args) -> Result<ExitCode, String> {
    if a.batch == 0 || a.nodes == 0 {
        return Err("error: `--batch` and `--nodes` must be at least 1".into());
    }
    let out = a.out.clone().unwrap_or_else(|| default_out("agent"));
    let db = out.join(TREE_FILE);
    if db.exists() && !a.eval.resume {
        return Err(format!(
            "error: `{}` already holds an agent run\n  = hint: continue it with `--resume`, or choose another `--out`",
            out.display()
        ));
    }
    let mut agents = agents(&a)?;
    let flat = match a.mode.as_str() {
        "flat" => Some(FlatAgent {
            provider: Arc::from(provider(&a.llm, std::time::Duration::from_secs(a.llm_timeout)).map_err(
                |e| {
                    if a.llm.provider.is_none() {
                        "error: `--mode flat` needs a model: `--provider openai|command|replay`".to_string()
                    } else {
                        e
                    }
                },
            )?),
            model: a.llm.model.clone(),
            temperature: a.temperature,
            max_tokens: a.max_tokens,
        }),
        _ => None,
    };
    let mut filter = task_cli::filter(&a.select)?;
    let backend = *filter.backend.get_or_insert(Backend::Cpu);
    let (suite, broken) = task_cli::load(&a.eval.dir)?;
    if broken {
        return Err("error: fix the task files above first".into());
    }
    let tasks = task_cli::select(&filter, &suite)?;
    let tasks: Vec<_> = tasks.into_iter().filter(|t| t.meta.backends().contains(&backend)).collect();
    if tasks.is_empty() {
        return Err("error: no instance matches the selection".into());
    }
    let command: Vec<String> = std::env::args().collect();
    let placeholder = Candidates::Dir(out.clone());
    // The seeds: `--seeds`, else those of the run being resumed (its run.json), else drawn.
    let plan = plan(&a.eval, placeholder, 1, command, &out)?;
    let target = plan.config.targets[&backend].clone();
    std::fs::create_dir_all(&out).map_err(|e| format!("error: cannot create `{}`: {e}", out.display()))?;
    let mut tree = Tree::open(&db).map_err(|d| d.to_string())?;
    let budgets = Budgets {
        nodes: Some(a.nodes),
        llm_calls: a.llm_calls,
        tokens: a.tokens,
        wall_s: a.wall,
        device_s: a.device_s,
    };
    let (run_on, device) = match a.pool.pool()? {
        Some(pool) => {
            crate::submit::no_device(&a.eval)?;
            let device = format!("the pool at {}", pool.url);
            let run: Elsewhere = Box::new(move |config, task, instance, run, notes| {
                crate::submit::evaluate_into(&pool, config, &[task], vec![instance.clone()], run, true, notes)
                    .map(|_| ())
                    .map_err(Diagnostic::error)
            });
            (Where::Elsewhere(run), device)
        }
        None => {
            let mut connect = plan.connector();
            (Where::Device(Box::new(move |b| connect(b).map_err(Diagnostic::error))), plan.device.to_string())
        }
    };
    let mut evaluator = Protocol { config: plan.config, dir: out.join("evals"), run_on, notes: Vec::new() };
    eprintln!(
        "optimising {} instance(s) on {} ({}), baseline {}, {} attempt(s) each, into {}",
        tasks.len(),
        device,
        target.name,
        evaluator.config.baseline.describe(),
        a.nodes,
        out.display()
    );
    let mut rows = Vec::new();
    let mut shown: Vec<String> = Vec::new();
    for task in &tasks {
        let spec = RunSpec {
            id: format!("{}/{}", task.name, backend.name()),
            task: task.name.clone(),
            backend: backend.name().into(),
            target: target.name.clone(),
            baseline: evaluator.config.baseline.describe(),
            budgets,
        };
        eprintln!("{}:", spec.id);
        let goal = Goal { task, backend, target: &target };
        let summary = match &flat {
            Some(agent) => optimise_flat(&mut tree, &spec, &goal, agent, &mut evaluator, a.batch, &mut Lines),
            None => optimise(&mut tree, &spec, &goal, &mut agents, &mut evaluator, a.batch, &mut Lines),
        }
        .map_err(|d| {
            format!(
                "{d}\nthe attempts so far are kept in {}; continue with the same command and `--resume`",
                out.display()
            )
        })?;
        for line in evaluator.notes.drain(..) {
            if !shown.contains(&line) {
                eprintln!("  {line}");
                shown.push(line);
            }
        }
        let sample = out.join(&task.name).join(backend.name()).join("sample-0");
        if sample.exists() {
            std::fs::remove_dir_all(&sample)
                .map_err(|e| format!("error: cannot replace `{}`: {e}", sample.display()))?;
        }
        tree.export(summary.best.id, &out, 0).map_err(|d| d.to_string())?;
        eprintln!("  {}: {}", summary.status.name(), summary.why);
        rows.push((spec.id, summary));
        write_answers(&out, &tree, &rows)?;
    }
    println!("| instance | nodes | root | answer | answer node | confirmation | gain per level | stopped |");
    println!("| --- | --- | --- | --- | --- | --- | --- | --- |");
    for (id, s) in &rows {
        let a = tree.attribution(s.best.id).map_err(|d| d.to_string())?;
        let levels: Vec<String> = a
            .per_level
            .iter()
            .filter(|(l, _)| **l != Level::Root)
            .map(|(l, f)| format!("{} x{f:.2}", l.name()))
            .collect();
        println!(
            "| {id} | {} | {} | {} | {} ({} {}) | {} | {} | {} |",
            s.nodes,
            s.root.describe_outcome(),
            s.best.describe_outcome(),
            s.best.id,
            s.best.level.name(),
            s.best.agent,
            confirmation_cell(s),
            if levels.is_empty() { "-".to_string() } else { levels.join(", ") },
            s.why
        );
    }
    let totals: Vec<f64> = rows
        .iter()
        .map(|(_, s)| tree.attribution(s.best.id).map(|a| a.total))
        .collect::<Result<_, _>>()
        .map_err(|d| d.to_string())?;
    let geomean = (totals.iter().map(|t| t.ln()).sum::<f64>() / totals.len().max(1) as f64).exp();
    println!(
        "\n{} instance(s): the answers over the start, geomean x{geomean:.2}; {} improved (x1.02 or more), {} kept the start",
        totals.len(),
        totals.iter().filter(|&&t| t >= 1.02).count(),
        rows.iter().filter(|(_, s)| s.best.id == s.root.id).count()
    );
    println!(
        "\nthe answers: {} (a candidate folder, and a run `ekb report {}` reads); every attempt: `ekb tree {} show`",
        out.display(),
        out.display(),
        out.display()
    );
    Ok(ExitCode::SUCCESS)
}
