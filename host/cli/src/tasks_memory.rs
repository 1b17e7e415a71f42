//! `ekb tasks memory`: the memory plan of every selected task, as its CPU payload would carry
//! it: each graph compiled through the graph passes and the default lowering for a target, then
//! its temps placed in one arena (`ekb_ir::l1::arena`). One row per task: the unplanned peak
//! (every temp apart, what the runtime reserved before the plan), the planned peak (the arena),
//! their ratio, the temps alone with and without the plan and their ratio, and the least arena
//! any placement needs; then the geometric mean of each ratio and how many rows are at most
//! [`TARGET_RATIO`].
//!
//! Both peaks add inputs, parameters, outputs and the largest kernel stack, exactly as the
//! runtime's memory report does, so the planned figure is what `ekb run` reports for the task's
//! payload on that target. Parameters are most of a model's peak and the plan changes only those
//! the prepare steps consume (weights packed into another layout: the arena takes their bytes
//! once the prepare steps ran), so the temps' ratio is the plan's own effect: the arena and the
//! prepared temps (which live apart) over every temp and consumed parameter apart.

use crate::tasks::{filter, load, select, status, Select};
use ekb_deploy::driver::{compile, CompileOptions, Program, Sources, Stage};
use ekb_eval::tasks::Task;
use ekb_ir::l1::arena;
use ekb_ir::TargetProfile;
use serde::Serialize;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct MemoryArgs {
    #[command(flatten)]
    select: Select,
    /// Target profile the graphs are lowered for (a name from `ekb targets` or a .toml path).
    #[arg(long, default_value = "host")]
    target: String,
}

/// One task's row.
/// The ratio a row is counted against in the summary line (planned at most 0.6 of unplanned).
const TARGET_RATIO: f64 = 0.6;

#[derive(Serialize)]
struct Row {
    name: String,
    level: u8,
    /// Buffers in the arena: temps and consumed parameters.
    temps: usize,
    unplanned_peak_bytes: u64,
    planned_peak_bytes: u64,
    /// Planned over unplanned.
    ratio: f64,
    /// Every temp apart (the prepared ones included), and every consumed parameter.
    unplanned_temps_bytes: u64,
    /// The arena and the prepared temps.
    planned_temps_bytes: u64,
    /// Planned over unplanned temps (1 without temps).
    temps_ratio: f64,
    arena_bytes: u64,
    /// The most temp bytes live at one step: no placement's arena is smaller.
    arena_bound_bytes: u64,
}

#[derive(Serialize)]
struct Table {
    target: String,
    rows: Vec<Row>,
    /// Tasks that did not compile, with the first error.
    errors: Vec<(String, String)>,
    /// Geometric mean of the rows' ratios (`None` without rows).
    geomean_ratio: Option<f64>,
    /// Geometric mean of the rows' temps ratios (`None` without rows).
    geomean_temps_ratio: Option<f64>,
}

fn row(t: &Task, target: &TargetProfile) -> Result<Row, String> {
    let options = CompileOptions { until: Stage::Lower, ..CompileOptions::default() };
    let sources = Sources { graph: Some(&t.source), module: None };
    let artifact = compile(Program::Graph(&t.graph), sources, target, &options)
        .map_err(|f| f.diagnostics.first().map_or_else(|| "compile failed".into(), |d| d.message.clone()))?;
    let f = arena::plan(&artifact.module);
    let planned_temps = f.arena_bytes.saturating_add(f.prepared_bytes);
    let unplanned_temps = f.temps_bytes.saturating_add(f.consumed_bytes);
    Ok(Row {
        name: t.name.clone(),
        level: t.meta.level,
        temps: f.offsets.len(),
        unplanned_peak_bytes: f.unplanned_bytes(),
        planned_peak_bytes: f.planned_bytes(),
        ratio: f.planned_bytes() as f64 / f.unplanned_bytes().max(1) as f64,
        unplanned_temps_bytes: unplanned_temps,
        planned_temps_bytes: planned_temps,
        temps_ratio: if unplanned_temps == 0 { 1.0 } else { planned_temps as f64 / unplanned_temps as f64 },
        arena_bytes: f.arena_bytes,
        arena_bound_bytes: f.arena_bound_bytes,
    })
}

pub fn run(dir: &Option<PathBuf>, a: &MemoryArgs, json: bool) -> Result<ExitCode, String> {
    let target = crate::source::target(&a.target)?;
    let f = filter(&a.select)?;
    let (suite, broken) = load(dir)?;
    let mut table = Table {
        target: target.name.clone(),
        rows: Vec::new(),
        errors: Vec::new(),
        geomean_ratio: None,
        geomean_temps_ratio: None,
    };
    for t in select(&f, &suite)? {
        match row(t, &target) {
            Ok(r) => table.rows.push(r),
            Err(e) => table.errors.push((t.name.clone(), e)),
        }
    }
    table.geomean_ratio = geomean(table.rows.iter().map(|r| r.ratio));
    table.geomean_temps_ratio = geomean(table.rows.iter().map(|r| r.temps_ratio));
    if json {
        println!("{}", serde_json::to_string_pretty(&table).expect("the table serialises"));
    } else {
        print!("{}", render(&table));
    }
    Ok(if table.errors.is_empty() { status(broken) } else { ExitCode::FAILURE })
}

fn geomean(ratios: impl ExactSizeIterator<Item = f64>) -> Option<f64> {
    let n = ratios.len();
    let logs: f64 = ratios.map(f64::ln).sum();
    (n > 0).then(|| (logs / n as f64).exp())
}

fn kib(bytes: u64) -> String {
    format!("{:.1}", bytes as f64 / 1024.0)
}

fn render(t: &Table) -> String {
    let width = t.rows.iter().map(|r| r.name.len()).max().unwrap_or(4).max(4);
    let mut out = format!(
        "{:<width$}  lvl  temps  {:>13}  {:>11}  {:>5}  {:>15}  {:>13}  {:>11}  {:>9}  {:>9}\n",
        "name",
        "unplanned KiB",
        "planned KiB",
        "ratio",
        "temps apart KiB",
        "temps plan KiB",
        "temps ratio",
        "arena KiB",
        "bound KiB"
    );
    for r in &t.rows {
        out += &format!(
            "{:<width$}  {:>3}  {:>5}  {:>13}  {:>11}  {:>5.2}  {:>15}  {:>13}  {:>11.2}  {:>9}  {:>9}\n",
            r.name,
            r.level,
            r.temps,
            kib(r.unplanned_peak_bytes),
            kib(r.planned_peak_bytes),
            r.ratio,
            kib(r.unplanned_temps_bytes),
            kib(r.planned_temps_bytes),
            r.temps_ratio,
            kib(r.arena_bytes),
            kib(r.arena_bound_bytes)
        );
    }
    for (name, e) in &t.errors {
        out += &format!("{name}: not compiled: {e}\n");
    }
    match (t.geomean_ratio, t.geomean_temps_ratio) {
        (Some(g), Some(gt)) => {
            let within = |ratio: fn(&Row) -> f64| t.rows.iter().filter(|r| ratio(r) <= TARGET_RATIO).count();
            out += &format!(
                "{} task(s) on {}: geomean planned/unplanned {g:.3} ({} at most {TARGET_RATIO}), temps {gt:.3} ({} at most {TARGET_RATIO})\n",
                t.rows.len(),
                t.target,
                within(|r| r.ratio),
                within(|r| r.temps_ratio)
            )
        }
        _ => out += &format!("no task compiled for {}\n", t.target),
    }
    out
}
