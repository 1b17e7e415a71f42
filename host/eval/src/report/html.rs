//! The HTML report: one self-contained page (inline CSS, inline SVG, no script) with a headline
//! table, four plots — the Fast@p curve, the speedup distribution, the failure breakdown, Correct@1
//! and Fast@1.0 by level — then every section of the text report (environment, tables, failures,
//! flags with speedups over 10× highlighted, warnings).
//!
//! What must stay true: the page names its baseline at the top; it references nothing outside
//! itself (links are in-page anchors only); every plot is drawn from the metrics (the Fast@p
//! curve from the per-instance best speedups, through the same rule as Fast@p); every text is
//! escaped.

use super::svg::{self, BarPlot, BarSeries, Histogram, LinePlot, LineSeries};
use super::table::{escape, Table};
use super::{sections, tables, Block, TITLE};
use crate::metrics::summary::fast_rate;
use crate::metrics::{failures, Comparison, Group, GroupKind, InstanceOutcome, RunMetrics};
use crate::results::FailureClass;
use std::fmt::Write;

/// The largest p the Fast@p curve shows.
pub const CURVE_P_MAX: f64 = 3.0;

const STYLE: &str = "
body { font-family: system-ui, -apple-system, 'Segoe UI', Roboto, 'Helvetica Neue', Arial, sans-serif;
  color: #222; max-width: 1180px; margin: 24px auto; padding: 0 16px; line-height: 1.4; }
h1 { font-size: 24px; margin-bottom: 6px; }
h2 { font-size: 19px; border-bottom: 1px solid #ddd; padding-bottom: 4px; margin-top: 32px; }
nav a { margin-right: 12px; font-size: 13px; }
.baseline { font-size: 15px; font-weight: 600; background: #eef5ff; border-left: 4px solid #4e79a7;
  padding: 6px 10px; }
.note { font-size: 13px; color: #555; }
.alert { background: #fde2e1; border-left: 4px solid #e15759; padding: 6px 10px; font-weight: 600; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; margin: 4px 0 22px; font-size: 13px; }
h3 { font-size: 14px; margin: 14px 0 4px; }
th, td { padding: 3px 9px; border-bottom: 1px solid #e3e3e3; white-space: nowrap; }
th { background: #f3f4f6; text-align: left; }
.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.flag td { background: #fde2e1; color: #8a1c1c; font-weight: 600; }
ul { font-size: 13px; }
.plots { display: grid; grid-template-columns: repeat(auto-fit, minmax(540px, 1fr)); gap: 14px; }
figure { margin: 0; }
figcaption { font-size: 12px; color: #555; }
svg { max-width: 100%; height: auto; background: #fff; }
svg text { font-family: inherit; fill: #333; }
svg .plot-title { font-size: 13px; font-weight: 600; }
svg .tick, svg .legend { font-size: 11px; }
svg .axis-label { font-size: 12px; }
svg .value { font-size: 10px; fill: #444; }
svg .grid { stroke: #e8e8e8; }
svg .axis { stroke: #555; }
svg .mark { stroke: #bbb; stroke-dasharray: 2 3; }
svg .baseline-mark { stroke: #e15759; stroke-dasharray: 4 3; stroke-width: 1.5; }
";

/// A section a caller adds to the page: its anchor, its title, and its body as HTML (the caller
/// escapes what it writes).
pub struct Extra {
    pub id: String,
    pub title: String,
    pub body: String,
}

/// The page.
pub fn render(c: &Comparison) -> String {
    render_with(c, &[])
}

/// The page with `extra` sections after the report's own (`ekb report` adds an agent run's
/// candidate tree).
pub fn render_with(c: &Comparison, extra: &[Extra]) -> String {
    let mut s = String::new();
    let _ = write!(
        s,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>{TITLE}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n"
    );
    let _ = writeln!(s, "<h1>{TITLE}</h1>");
    let _ = writeln!(s, "<p class=\"baseline\">{}</p>", escape(&tables::baseline_line(c)));
    let _ = writeln!(s, "<p class=\"note\">{}</p>", escape(tables::COUNTING));
    let secs = sections(c);
    s.push_str("<nav><a href=\"#summary\">Summary</a><a href=\"#plots\">Plots</a>");
    for sec in &secs {
        let _ = write!(s, "<a href=\"#{}\">{}</a>", sec.id, escape(&sec.title));
    }
    for e in extra {
        let _ = write!(s, "<a href=\"#{}\">{}</a>", escape(&e.id), escape(&e.title));
    }
    s.push_str("</nav>\n");
    summary(&mut s, c);
    plots(&mut s, c);
    for sec in &secs {
        let _ = writeln!(s, "<section id=\"{}\">\n<h2>{}</h2>", sec.id, escape(&sec.title));
        for b in &sec.blocks {
            match b {
                Block::Para(p) => {
                    let _ = writeln!(s, "<p>{}</p>", escape(p));
                }
                Block::List(items) => {
                    s.push_str("<ul>\n");
                    for i in items {
                        let _ = writeln!(s, "<li>{}</li>", escape(i));
                    }
                    s.push_str("</ul>\n");
                }
                Block::Table(t) if t.rows.is_empty() => {
                    let _ = writeln!(s, "<p><strong>{}</strong>: none</p>", escape(&t.title));
                }
                Block::Table(t) => {
                    let _ = write!(s, "<div class=\"scroll\">\n{}</div>\n", t.to_html());
                }
            }
        }
        s.push_str("</section>\n");
    }
    for e in extra {
        let _ = writeln!(
            s,
            "<section id=\"{}\">\n<h2>{}</h2>\n{}</section>",
            escape(&e.id),
            escape(&e.title),
            e.body
        );
    }
    s.push_str("</body>\n</html>\n");
    s
}

/// The headline: each run's pooled numbers at k = 1, and an alert when speedups are flagged.
fn summary(s: &mut String, c: &Comparison) {
    let mut t = Table::new(
        "Pooled at k = 1",
        &[
            "run",
            "baseline",
            "instances",
            "Compile@1",
            "Correct@1",
            "Fast@1.0",
            "geomean speedup",
            "with speedup",
            "over 10x",
        ],
        2,
    );
    for r in &c.runs {
        let Some(a) = r.group(GroupKind::Pooled, "all").and_then(|g| g.at_k(1)) else { continue };
        let row = vec![
            r.label.clone(),
            r.env.baseline.clone(),
            r.env.instances.to_string(),
            tables::pct(&a.compile),
            tables::pct(&a.correct),
            a.fast_at(1.0).map_or_else(|| "-".into(), |f| tables::pct(&f)),
            tables::times(a.speedup.geomean),
            a.speedup.count.to_string(),
            r.flags.high_speedups.len().to_string(),
        ];
        if r.flags.high_speedups.is_empty() {
            t.push(row);
        } else {
            t.push_marked(row);
        }
    }
    let _ = write!(
        s,
        "<section id=\"summary\">\n<h2>Summary</h2>\n<div class=\"scroll\">\n{}</div>\n",
        t.to_html()
    );
    let flagged: usize = c.runs.iter().map(|r| r.flags.high_speedups.len()).sum();
    if flagged > 0 {
        let _ = writeln!(
            s,
            "<p class=\"alert\">{flagged} speedup(s) over 10x flagged for review: see <a href=\"#flags\">Flags</a>.</p>"
        );
    }
    s.push_str("</section>\n");
}

fn figure(s: &mut String, svg: String, caption: &str) {
    let _ = write!(s, "<figure>\n{svg}<figcaption>{}</figcaption>\n</figure>\n", escape(caption));
}

fn plots(s: &mut String, c: &Comparison) {
    s.push_str("<section id=\"plots\">\n<h2>Plots</h2>\n<div class=\"plots\">\n");
    let baseline = c.baselines().join(", ");
    figure(
        s,
        svg::line_plot(&fast_curve_plot(c)),
        &format!(
            "Fast@p at k = 1: the share of all instances with a speedup over {baseline} strictly above p, per backend (dashed: all backends)."
        ),
    );
    for (i, r) in c.runs.iter().enumerate() {
        figure(
            s,
            svg::histogram(&speedup_histogram(r, svg::color(i))),
            &format!(
                "{}: the best counted speedup of each instance at k = 1 vs {}, log axis ({} instances with one; the red line is the baseline).",
                r.label,
                r.env.baseline,
                r.outcomes.iter().filter(|o| o.at_k(1).is_some_and(|a| a.best_speedup.is_some())).count()
            ),
        );
    }
    figure(
        s,
        svg::bar_plot(&failure_plot(c)),
        "Failures of the evaluated candidates by backend, stacked by class (missing: planned samples without a result).",
    );
    figure(
        s,
        svg::bar_plot(&level_plot(c)),
        "Correct@1 and Fast@1.0 by level (share of all instances of the level).",
    );
    s.push_str("</div>\n</section>\n");
}

fn series_name(c: &Comparison, r: &RunMetrics, what: &str) -> String {
    if c.runs.len() > 1 {
        format!("{} {what}", r.label)
    } else {
        what.to_string()
    }
}

/// Fast@p at k over a group as a step curve on `[0, p_max]`: flat between speedup values,
/// dropping at each (a speedup equal to p is not fast).
pub fn fast_curve(outcomes: &[&InstanceOutcome], k: u32, p_max: f64) -> Vec<(f64, f64)> {
    let share = |p: f64| fast_rate(outcomes.iter().copied(), k, p).share.unwrap_or(0.0);
    let mut steps: Vec<f64> = outcomes
        .iter()
        .filter_map(|o| o.at_k(k).and_then(|a| a.best_speedup))
        .filter(|s| *s > 0.0 && *s < p_max)
        .collect();
    steps.sort_by(f64::total_cmp);
    steps.dedup();
    let mut points = vec![(0.0, share(0.0))];
    let mut level = share(0.0);
    for x in steps {
        points.push((x, level));
        level = share(x);
        points.push((x, level));
    }
    points.push((p_max, level));
    points
}

fn fast_curve_plot(c: &Comparison) -> LinePlot {
    let mut series = Vec::new();
    for r in &c.runs {
        let backends: Vec<&Group> = r.groups_of(GroupKind::Backend).map(|g| &g.group).collect();
        let mut groups: Vec<(&Group, bool)> = backends.iter().map(|g| (*g, false)).collect();
        if backends.len() > 1 {
            groups.extend(r.groups_of(GroupKind::Pooled).map(|g| (&g.group, true)));
        }
        for (g, dashed) in groups {
            let outs: Vec<&InstanceOutcome> = r.outcomes_in(g).collect();
            series.push(LineSeries {
                name: series_name(c, r, &g.label),
                color: svg::color(series.len()).into(),
                points: fast_curve(&outs, 1, CURVE_P_MAX),
                dashed,
            });
        }
    }
    LinePlot {
        title: "Fast@p at k = 1".into(),
        x_label: "p (speedup threshold)".into(),
        y_label: "share of instances".into(),
        x_max: CURVE_P_MAX,
        y_max: 1.0,
        x_ticks: (0..=6).map(|i| (i as f64 * 0.5, format!("{:.1}", i as f64 * 0.5))).collect(),
        y_ticks: svg::share_ticks(),
        marks: vec![1.0],
        series,
    }
}

fn speedup_histogram(r: &RunMetrics, color: &str) -> Histogram {
    Histogram {
        title: format!("Speedup distribution: {} (vs {})", r.label, r.env.baseline),
        x_label: format!("best speedup per instance at k = 1 (vs {}, log scale)", r.env.baseline),
        lo: 1.0 / 16.0,
        hi: 16.0,
        per_octave: 2,
        values: r.outcomes.iter().filter_map(|o| o.at_k(1).and_then(|a| a.best_speedup)).collect(),
        color: color.into(),
        mark: Some(1.0),
    }
}

/// The colour of a failure class (or `unclassified`, `missing`), the same in every report.
pub fn class_color(class: &str) -> &'static str {
    match FailureClass::ALL.iter().position(|c| c.name() == class) {
        Some(i) => svg::color(i),
        None if class == failures::MISSING => "#c9c9c9",
        None => "#333333",
    }
}

fn failure_plot(c: &Comparison) -> BarPlot {
    let mut categories = Vec::new();
    let mut columns = Vec::new();
    for r in &c.runs {
        for f in r.failures.iter().filter(|f| f.group.kind == GroupKind::Backend) {
            categories.push(if c.runs.len() > 1 {
                format!("{}\n{}", r.label, f.group.label)
            } else {
                f.group.label.clone()
            });
            columns.push(f);
        }
    }
    let mut classes: Vec<String> = Vec::new();
    for f in &columns {
        for row in &f.rows {
            if !classes.contains(&row.class) {
                classes.push(row.class.clone());
            }
        }
    }
    let series: Vec<BarSeries> = classes
        .iter()
        .filter(|class| columns.iter().any(|f| f.row(class).is_some_and(|x| x.count > 0)))
        .map(|class| BarSeries {
            name: class.clone(),
            color: class_color(class).into(),
            values: columns.iter().map(|f| f.row(class).map_or(0.0, |x| x.count as f64)).collect(),
        })
        .collect();
    let (y_max, y_ticks) =
        svg::count_axis(columns.iter().map(|f| (f.failed + f.missing) as f64).fold(0.0, f64::max));
    BarPlot {
        title: "Failure breakdown by backend".into(),
        y_label: "candidates".into(),
        categories,
        series,
        stacked: true,
        y_max,
        y_ticks,
        value_text: |v| format!("{v:.0}"),
    }
}

fn level_plot(c: &Comparison) -> BarPlot {
    let mut levels: Vec<String> = Vec::new();
    for r in &c.runs {
        for g in r.groups_of(GroupKind::Level) {
            if !levels.contains(&g.group.label) {
                levels.push(g.group.label.clone());
            }
        }
    }
    let mut series = Vec::new();
    for r in &c.runs {
        let value = |level: &str, correct: bool| {
            r.group(GroupKind::Level, level)
                .and_then(|g| g.at_k(1))
                .and_then(|a| if correct { a.correct.share } else { a.fast_at(1.0).and_then(|f| f.share) })
                .unwrap_or(0.0)
        };
        for (what, correct) in [("Correct@1", true), ("Fast@1.0", false)] {
            series.push(BarSeries {
                name: series_name(c, r, what),
                color: svg::color(series.len()).into(),
                values: levels.iter().map(|l| value(l, correct)).collect(),
            });
        }
    }
    BarPlot {
        title: "Correct@1 and Fast@1.0 by level".into(),
        y_label: "share of instances".into(),
        categories: levels,
        series,
        stacked: false,
        y_max: 1.0,
        y_ticks: svg::share_ticks(),
        value_text: |v| format!("{:.1}%", v * 100.0),
    }
}
