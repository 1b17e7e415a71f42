//! `ekb report`: metrics over stored evaluation runs (what `ekb eval --out DIR` wrote), as
//! terminal tables, Markdown, one long CSV table, JSON, or a self-contained HTML page.
//!
//! The work is done by `ekb_eval::metrics` and `ekb_eval::report`; this file reads the runs,
//! parses arguments and writes the report. A run that cannot be read is a rendered diagnostic
//! and exit status 1; what a run has that is odd (a torn last line, results outside its plan)
//! is in the report's warnings, and on stderr when the report goes to a file or is CSV.

use crate::files;
use ekb_eval::metrics;
use ekb_eval::report::{self, Format};
use ekb_eval::results::{load_run, Run};
use ekb_leka::tree::TREE_FILE;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;

/// Metrics and reports over evaluation runs: Compile@k, Correct@k, Fast@p, speedups, failures.
#[derive(clap::Args)]
#[command(after_help = "Examples:\n  \
ekb report runs/a                              tables on the terminal\n  \
ekb report runs/a runs/b --format markdown     two runs side by side, as Markdown\n  \
ekb report runs/a --format html --out a.html   one page, plots inline, nothing external (an agent run's\n  \
                                               candidate tree too)\n  \
ekb report runs/a --format csv --out a.csv     one long table: run, group, metric, k, p, value\n  \
ekb report runs/a --k 1 --k 3 --json           metrics at k = 1 and 3, as JSON\n  \
ekb report runs/pool --by-device               per board of a pooled run\n\
Every share is over all planned instances; a speedup counts only for a correct candidate with\n\
stable timing and a working baseline; Fast@p needs a speedup strictly above p.\n\
docs/evaluation.md defines each metric.")]
pub struct Args {
    /// Run directories, side by side in the order given.
    #[arg(required = true, value_name = "RUN")]
    runs: Vec<PathBuf>,
    /// text, markdown, csv, json or html.
    #[arg(long, default_value = "text")]
    format: String,
    /// Same as `--format json`.
    #[arg(long)]
    json: bool,
    /// Write the report to this file instead of standard output.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Report at this k (repeatable; default: 1 and each run's sample count). Must not exceed
    /// any run's samples.
    #[arg(long, value_name = "K")]
    k: Vec<u32>,
    /// Instead of the metrics, one line per device that evaluated candidates (a run spread over
    /// a pool of boards, `ekb eval --queue`): candidates, compiled, correct, counted speedups and
    /// their geometric mean.
    #[arg(long, conflicts_with_all = ["format", "json", "k"])]
    by_device: bool,
}

pub fn run(args: Args) -> Result<ExitCode, String> {
    let format =
        if args.json { Format::Json } else { Format::from_name(&args.format).map_err(|d| d.to_string())? };
    let runs = args
        .runs
        .iter()
        .map(|dir| load_run(dir))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|d| d.to_string())?;
    if args.by_device {
        let text = by_device(&runs);
        match &args.out {
            Some(out) => files::write(out, text.as_bytes())?,
            None => print!("{text}"),
        }
        return Ok(ExitCode::SUCCESS);
    }
    let ks = (!args.k.is_empty()).then_some(args.k.as_slice());
    let comparison = metrics::compare(&runs, ks).map_err(|d| d.to_string())?;
    let text = match format {
        Format::Html => {
            let trees = args
                .runs
                .iter()
                .filter(|dir| dir.join(TREE_FILE).exists())
                .enumerate()
                .map(|(n, dir)| crate::tree::html_section(dir, n))
                .collect::<Result<Vec<_>, _>>()?;
            report::html::render_with(&comparison, &trees)
        }
        _ => report::render(&comparison, format),
    };
    let Some(out) = &args.out else {
        print!("{text}");
        if format == Format::Csv {
            warn(&comparison);
        }
        return Ok(ExitCode::SUCCESS);
    };
    files::write(out, text.as_bytes())?;
    warn(&comparison);
    let flagged: usize = comparison.runs.iter().map(|r| r.flags.high_speedups.len()).sum();
    eprintln!(
        "wrote the {} report of {} run(s) ({}) to {}{}",
        format.name(),
        comparison.runs.len(),
        comparison.baselines().iter().map(|b| format!("speedup vs {b}")).collect::<Vec<_>>().join(", "),
        out.display(),
        if flagged > 0 {
            format!("; {flagged} speedup(s) over 10x flagged for review")
        } else {
            String::new()
        }
    );
    Ok(ExitCode::SUCCESS)
}

/// The runs' warnings on stderr, for reports that do not show them on the terminal.
fn warn(c: &metrics::Comparison) {
    for r in &c.runs {
        for w in &r.warnings {
            eprintln!("warning: {}: {w}", r.label);
        }
    }
}

/// One line per (run, device): the device's host, serial and profile, its candidates, how many
/// compiled and were correct, the counted speedups and their geometric mean.
fn by_device(runs: &[Run]) -> String {
    let mut out = format!(
        "{:<24} {:<20} {:<12} {:<12} {:>10} {:>8} {:>7} {:>7} {:>8}\n",
        "run", "host", "serial", "profile", "candidates", "compiled", "correct", "timed", "geomean"
    );
    for run in runs {
        let label =
            run.dir.file_name().map_or_else(|| run.dir.display().to_string(), |n| n.to_string_lossy().into());
        let mut groups: BTreeMap<(String, String, String), Vec<&ekb_eval::results::CandidateResult>> =
            BTreeMap::new();
        for r in &run.results {
            let key = r.device.as_ref().map_or_else(
                || ("unknown".to_string(), "unknown".to_string(), "unknown".to_string()),
                |d| (d.host.clone(), d.serial.clone(), d.profile.clone()),
            );
            groups.entry(key).or_default().push(r);
        }
        for ((host, serial, profile), results) in groups {
            let speedups: Vec<f64> = results.iter().filter_map(|r| r.counted_speedup()).collect();
            let geomean = if speedups.is_empty() {
                "-".to_string()
            } else {
                format!(
                    "{:.2}x",
                    (speedups.iter().map(|s| s.ln()).sum::<f64>() / speedups.len() as f64).exp()
                )
            };
            out.push_str(&format!(
                "{label:<24} {host:<20} {serial:<12} {profile:<12} {:>10} {:>8} {:>7} {:>7} {geomean:>8}\n",
                results.len(),
                results.iter().filter(|r| r.compiled).count(),
                results.iter().filter(|r| r.correct).count(),
                speedups.len(),
            ));
        }
    }
    out
}
