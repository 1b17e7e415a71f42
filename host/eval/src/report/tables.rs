//! The tables every human-readable report shows, built once from a [`Comparison`]: rates and
//! speedups per grouping, the failure taxonomy per run, the flagged candidates; plus the
//! one-line texts (baseline, environment) around them.
//!
//! What must stay true: numbers are printed from the metrics, never recomputed; a rate prints as
//! a percentage with one decimal, a speedup with two decimals and `x`; an absent value prints as
//! `-`; with several runs every row names its run, and rows of one group sit together.

use super::table::{Align, Table};
use crate::metrics::{Comparison, Failures, GroupKind, PassesSummary, Rate, RunMetrics, FLAG_SPEEDUP};
use crate::results::BackendEnv;

/// A share as a percentage, one decimal.
pub fn pct(r: &Rate) -> String {
    r.share.map_or_else(|| "-".into(), |s| format!("{:.1}%", s * 100.0))
}

/// A speedup, two decimals and `x`.
pub fn times(v: Option<f64>) -> String {
    v.map_or_else(|| "-".into(), |v| format!("{v:.2}x"))
}

/// A plain ratio, two decimals.
pub fn ratio(v: Option<f64>) -> String {
    v.map_or_else(|| "-".into(), |v| format!("{v:.2}"))
}

/// `Fast@p` with p to one decimal, as the paper writes it.
pub fn fast_name(p: f64) -> String {
    format!("Fast@{p:.1}")
}

/// What a baseline name means.
pub fn baseline_meaning(name: &str) -> Option<&'static str> {
    match name {
        "naive" => {
            Some("the naive lowering: one serial loop nest per operator; on a GPU one thread per output")
        }
        "default" => {
            Some("the default schedule: threads, vectorization and tiling; on a GPU shared-memory tiles")
        }
        n if n.starts_with("candidates:") => Some("sample 0 of another candidate folder"),
        n if n.starts_with("engine:") => Some(
            "an inference engine on the machine that ran ekb, timed by its own clock in its own process, in rounds alternating with the candidate",
        ),
        _ => None,
    }
}

/// `speedup vs NAME (what it is)`: how every report names its baseline.
pub fn baseline_phrase(name: &str) -> String {
    match baseline_meaning(name) {
        Some(m) => format!("speedup vs {name} ({m})"),
        None => format!("speedup vs {name}"),
    }
}

/// The baseline line of a report: one phrase when every run shares a baseline, else each run's.
pub fn baseline_line(c: &Comparison) -> String {
    match c.baselines().as_slice() {
        [one] => format!("baseline: {}", baseline_phrase(one)),
        _ => {
            let per: Vec<String> =
                c.runs.iter().map(|r| format!("{}: {}", r.label, baseline_phrase(&r.env.baseline))).collect();
            format!("baselines differ between runs; {}", per.join("; "))
        }
    }
}

/// How the numbers are counted, in one sentence for the top of a report.
pub const COUNTING: &str = "Every share is over all planned instances (failures and missing results count); a \
speedup counts only for a correct candidate with stable timing and a working baseline; Fast@p needs a speedup \
strictly above p.";

fn gib(bytes: u64) -> String {
    format!("{:.1} GiB", bytes as f64 / (1u64 << 30) as f64)
}

/// One backend's device, in a line (with its GPU for a GPU backend).
pub fn backend_line(name: &str, b: &BackendEnv) -> String {
    let gpu = b.gpu.as_ref().map_or(String::new(), |g| format!(", GPU {g}"));
    format!(
        "{name}: target {} on {}, {} {}, {} {}, {} cores, {}{gpu}",
        b.target,
        b.device,
        b.runtime,
        b.runtime_version,
        b.arch,
        b.cpu_model,
        b.cores,
        gib(b.memory_bytes)
    )
}

/// A run's plan and environment, one line each.
pub fn env_lines(r: &RunMetrics) -> Vec<String> {
    let e = &r.env;
    let t = &e.timing;
    let seeds: Vec<String> = e.seeds.iter().map(u64::to_string).collect();
    let mut lines = vec![
        format!("baseline: {}", baseline_phrase(&e.baseline)),
        format!(
            "candidates {}; {} instances x {} sample(s); seeds {}; created {} by ekb {}",
            e.candidates,
            e.instances,
            e.samples,
            seeds.join(", "),
            e.created,
            e.ekb_version
        ),
        format!("command: {}", e.command.join(" ")),
        format!(
            "candidate kinds: {}",
            e.kinds.iter().map(|(k, n)| format!("{k} {n}")).collect::<Vec<_>>().join(", ")
        ),
        format!(
            "timing: {} cache, target RSE {:.1}%, ratio interval within +-{:.1}%, budget {} s per pair{}, {}",
            if t.cold_cache { "cold (flushed between samples)" } else { "warm" },
            t.target_rse * 100.0,
            t.max_ci * 100.0,
            t.budget_s,
            if t.timeout_s > 0.0 {
                format!(", timeout {} s per execution", t.timeout_s)
            } else {
                String::new()
            },
            t.threads.map_or_else(|| "threads as the runtime chooses".into(), |n| format!("{n} thread(s)"))
        ),
    ];
    lines.extend(e.backends.iter().map(|(n, b)| backend_line(n, b)));
    if !e.tools.is_empty() {
        let tools: Vec<String> = e.tools.iter().map(|(n, v)| format!("{n} {v}")).collect();
        lines.push(format!("tools: {}", tools.join(", ")));
    }
    lines
}

/// The group labels of a kind over all runs, first run's order first.
fn labels_of(c: &Comparison, kind: GroupKind) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for r in &c.runs {
        for g in r.groups_of(kind) {
            if !out.contains(&g.group.label) {
                out.push(g.group.label.clone());
            }
        }
    }
    out
}

/// Calls `row` for each (group label, k, run) of a kind that has metrics, in table order.
fn each_row(
    c: &Comparison,
    kind: GroupKind,
    mut row: impl FnMut(&RunMetrics, &str, usize, &crate::metrics::AtK),
) {
    for label in labels_of(c, kind) {
        for k in c.ks() {
            for r in &c.runs {
                if let Some(g) = r.group(kind, &label) {
                    if let Some(a) = g.at_k(k) {
                        row(r, &label, g.instances, a);
                    }
                }
            }
        }
    }
}

fn with_run(c: &Comparison, head: &[&str]) -> Vec<String> {
    let mut h: Vec<String> = head.iter().map(|s| s.to_string()).collect();
    if c.runs.len() > 1 {
        h.insert(0, "run".into());
    }
    h
}

fn table(title: String, head: Vec<String>, left: usize) -> Table {
    let refs: Vec<&str> = head.iter().map(String::as_str).collect();
    Table::new(title, &refs, left)
}

/// Compile@k, Correct@k and Fast@p for every group of a kind.
pub fn rates_table(c: &Comparison, kind: GroupKind) -> Table {
    let multi = c.runs.len() > 1;
    let mut head = with_run(c, &["group", "instances", "k", "Compile@k", "Correct@k"]);
    let ps = c.runs.first().map(|r| r.ps.clone()).unwrap_or_default();
    head.extend(ps.iter().map(|&p| fast_name(p)));
    let mut t = table(
        format!("{}: Compile@k, Correct@k, Fast@p at k (share of all instances)", kind.title()),
        head,
        if multi { 2 } else { 1 },
    );
    each_row(c, kind, |r, label, n, a| {
        let mut row =
            vec![label.to_string(), n.to_string(), a.k.to_string(), pct(&a.compile), pct(&a.correct)];
        row.extend(a.fast.iter().map(|f| pct(&f.rate)));
        if multi {
            row.insert(0, r.label.clone());
        }
        t.push(row);
    });
    t
}

/// The speedup spread and the peak memory ratio for every group of a kind.
pub fn speedup_table(c: &Comparison, kind: GroupKind) -> Table {
    let multi = c.runs.len() > 1;
    let same_baseline = c.baselines().len() <= 1;
    let mut head = with_run(
        c,
        &["group", "k", "with speedup", "geomean", "median", "min", "max", "with memory", "memory ratio"],
    );
    if !same_baseline {
        head.insert(1, "vs".into());
    }
    let vs = if same_baseline {
        c.baselines().first().map_or_else(String::new, |b| format!(" vs {b}"))
    } else {
        String::new()
    };
    let mut t = table(
        format!(
            "{}: speedup{vs} (best of the first k; geometric mean over instances with one) and peak memory ratio (candidate / baseline)",
            kind.title()
        ),
        head,
        (if multi { 2 } else { 1 }) + usize::from(!same_baseline),
    );
    each_row(c, kind, |r, label, _, a| {
        let s = &a.speedup;
        let mut row = vec![
            label.to_string(),
            a.k.to_string(),
            s.count.to_string(),
            times(s.geomean),
            times(s.median),
            times(s.min),
            times(s.max),
            a.memory.count.to_string(),
            ratio(a.memory.geomean_ratio),
        ];
        if !same_baseline {
            row.insert(0, r.env.baseline.clone());
        }
        if multi {
            row.insert(0, r.label.clone());
        }
        t.push(row);
    });
    t
}

/// The graph passes' totals in a phrase: `kernels 412 -> 287 (0.70x); planned peak geomean
/// 0.83x over 40 instance(s)`.
pub fn passes_phrase(p: &PassesSummary) -> String {
    format!(
        "kernels {} -> {} ({}); planned peak geomean {} over {} instance(s)",
        p.kernels_before,
        p.kernels_after,
        times(p.kernels_ratio),
        times(p.geomean_peak_ratio),
        p.count
    )
}

/// Each run's pooled graph-passes totals at its largest k, one line per run.
pub fn passes_lines(c: &Comparison) -> Vec<String> {
    c.runs
        .iter()
        .filter_map(|r| {
            let a = r.group(GroupKind::Pooled, "all")?.at.last()?;
            let run = if c.runs.len() > 1 { format!("{}: ", r.label) } else { String::new() };
            Some(format!("{run}k = {}: {}", a.k, passes_phrase(&a.passes)))
        })
        .collect()
}

/// Bytes in KiB, one decimal.
fn kib(bytes: u64) -> String {
    format!("{:.1}", bytes as f64 / 1024.0)
}

/// What the graph passes did, for every group of every kind: kernels without and with them
/// (summed) and the planned peak ratio (geometric mean).
pub fn passes_table(c: &Comparison) -> Table {
    let multi = c.runs.len() > 1;
    let head = with_run(
        c,
        &["group", "k", "with passes", "kernels before", "kernels after", "kernels ratio", "peak ratio"],
    );
    let mut t = table(
        "Graph passes by group: kernels without -> with the passes (summed) and planned peak with / without (geometric mean)"
            .into(),
        head,
        if multi { 2 } else { 1 },
    );
    for kind in GroupKind::ALL {
        each_row(c, kind, |r, label, _, a| {
            let p = &a.passes;
            let mut row = vec![
                label.to_string(),
                a.k.to_string(),
                p.count.to_string(),
                p.kernels_before.to_string(),
                p.kernels_after.to_string(),
                times(p.kernels_ratio),
                times(p.geomean_peak_ratio),
            ];
            if multi {
                row.insert(0, r.label.clone());
            }
            t.push(row);
        });
    }
    t
}

/// What the graph passes did to each instance's candidate that counts at the run's largest k.
pub fn passes_instances_table(c: &Comparison) -> Table {
    let multi = c.runs.len() > 1;
    let head = with_run(
        c,
        &[
            "task",
            "backend",
            "k",
            "kernels before",
            "kernels after",
            "peak KiB before",
            "peak KiB after",
            "peak ratio",
        ],
    );
    let mut t = table(
        "Graph passes per instance: the candidate that counts, compiled without and with the passes".into(),
        head,
        if multi { 3 } else { 2 },
    );
    for r in &c.runs {
        for o in &r.outcomes {
            let Some(a) = o.at.last() else { continue };
            let Some(p) = a.passes else { continue };
            let (b, f) = (p.before.planned_peak_bytes, p.after.planned_peak_bytes);
            let mut row = vec![
                o.instance.task.clone(),
                o.instance.backend.clone(),
                a.k.to_string(),
                p.before.kernels.to_string(),
                p.after.kernels.to_string(),
                kib(b),
                kib(f),
                times((b > 0 && f > 0).then(|| f as f64 / b as f64)),
            ];
            if multi {
                row.insert(0, r.label.clone());
            }
            t.push(row);
        }
    }
    t
}

fn count_share(count: usize, share: Option<f64>) -> String {
    match share {
        Some(s) if count > 0 => format!("{count} ({:.1}%)", s * 100.0),
        _ => count.to_string(),
    }
}

/// One run's failure taxonomy: a row per class, a column per group (pooled, then backends).
pub fn failures_table(r: &RunMetrics) -> Table {
    let groups: &[Failures] = &r.failures;
    let mut head = vec!["class".to_string()];
    head.extend(groups.iter().map(|f| f.group.label.clone()));
    let mut t = table(
        format!(
            "Failures of {}: first {} candidate(s) of each instance; share of all failures, missing samples included",
            r.label, r.env.samples
        ),
        head,
        1,
    );
    let classes: Vec<String> =
        groups.first().map(|f| f.rows.iter().map(|x| x.class.clone()).collect()).unwrap_or_default();
    for class in &classes {
        let mut row = vec![class.clone()];
        row.extend(
            groups.iter().map(|f| f.row(class).map_or_else(|| "0".into(), |x| count_share(x.count, x.share))),
        );
        t.push(row);
    }
    for (name, get) in [
        ("all failures", (|f: &Failures| f.failed + f.missing) as fn(&Failures) -> usize),
        ("passed", |f| f.passed),
        ("planned", |f| f.planned),
    ] {
        let mut row = vec![name.to_string()];
        row.extend(groups.iter().map(|f| get(f).to_string()));
        t.push(row);
    }
    t
}

/// Counted speedups above the flag threshold, every row marked.
pub fn high_speedup_table(c: &Comparison) -> Table {
    let mut t = table(
        format!("Speedups over {FLAG_SPEEDUP:.0}x: review before citing"),
        with_run(c, &["task", "backend", "sample", "speedup"]),
        2 + usize::from(c.runs.len() > 1),
    );
    for r in &c.runs {
        for f in &r.flags.high_speedups {
            let mut row =
                vec![f.task.clone(), f.backend.clone(), f.sample.to_string(), times(Some(f.speedup))];
            if c.runs.len() > 1 {
                row.insert(0, r.label.clone());
            }
            t.push_marked(row);
        }
    }
    t
}

/// Timings that never became stable.
pub fn unstable_table(c: &Comparison) -> Table {
    let mut t = table(
        "Unstable timings: correct, not counted as fast".into(),
        with_run(c, &["task", "backend", "sample", "ratio", "baseline CV", "candidate CV", "counted"]),
        2 + usize::from(c.runs.len() > 1),
    );
    let cv = |v: Option<f64>| v.map_or_else(|| "-".into(), |v| format!("{:.1}%", v * 100.0));
    for r in &c.runs {
        for f in &r.flags.unstable {
            let mut row = vec![
                f.task.clone(),
                f.backend.clone(),
                f.sample.to_string(),
                times(f.speedup),
                cv(f.baseline_cv),
                cv(f.candidate_cv),
                if f.counted { "yes".into() } else { "no".into() },
            ];
            if c.runs.len() > 1 {
                row.insert(0, r.label.clone());
            }
            t.push(row);
        }
    }
    t
}

/// Candidates whose baseline failed.
pub fn baseline_failure_table(c: &Comparison) -> Table {
    let mut t = table(
        "Baseline failures: these candidates have no speedup".into(),
        with_run(c, &["task", "backend", "sample", "reason"]),
        2 + usize::from(c.runs.len() > 1),
    );
    let last = t.align.len() - 1;
    t.align[last] = Align::Left;
    for r in &c.runs {
        for f in &r.flags.baseline_failures {
            let mut row = vec![f.task.clone(), f.backend.clone(), f.sample.to_string(), f.reason.clone()];
            if c.runs.len() > 1 {
                row.insert(0, r.label.clone());
            }
            t.push(row);
        }
    }
    t
}

/// Every warning, prefixed by its run's label when there are several runs.
pub fn warnings(c: &Comparison) -> Vec<String> {
    c.runs
        .iter()
        .flat_map(|r| {
            r.warnings
                .iter()
                .map(move |w| if c.runs.len() > 1 { format!("{}: {w}", r.label) } else { w.clone() })
        })
        .collect()
}
