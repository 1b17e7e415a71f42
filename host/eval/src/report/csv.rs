//! One tidy long-format CSV table of every metric of every run:
//! `run,group_kind,group,metric,k,p,value,count`.
//!
//! Metrics: `compile`, `correct`, `fast` (with p) — value the share, count the instances it is
//! over; `speedup_geomean`, `speedup_median`, `speedup_min`, `speedup_max` — count the
//! instances with a speedup; `memory_ratio_geomean` — count the instances with a memory ratio;
//! `passes_kernels_before`, `passes_kernels_after`, `passes_kernels_ratio`,
//! `passes_peak_ratio_geomean` — count the instances with a graph-passes record;
//! `failure:CLASS` (group kinds `pooled` and `backend`, k the run's samples) — value the share of
//! failures, count the candidates.
//!
//! What must stay true: one header line, then one row per value, every row with 8 fields;
//! values in full precision (Rust's shortest round-trip form), an absent value empty; fields
//! quoted (RFC 4180) when they hold a comma, a quote or a line break.

use crate::metrics::Comparison;

const HEAD: &str = "run,group_kind,group,metric,k,p,value,count";

fn field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn num(v: Option<f64>) -> String {
    v.map_or_else(String::new, |v| v.to_string())
}

struct Row<'a> {
    run: &'a str,
    kind: &'a str,
    group: &'a str,
    metric: &'a str,
    k: u32,
    p: Option<f64>,
    value: Option<f64>,
    count: usize,
}

fn line(out: &mut String, r: Row) {
    let fields = [
        field(r.run),
        field(r.kind),
        field(r.group),
        field(r.metric),
        r.k.to_string(),
        num(r.p),
        num(r.value),
        r.count.to_string(),
    ];
    out.push_str(&fields.join(","));
    out.push('\n');
}

/// The CSV text.
pub fn render(c: &Comparison) -> String {
    let mut out = format!("{HEAD}\n");
    for r in &c.runs {
        let run = r.label.as_str();
        for g in &r.groups {
            let (kind, group) = (g.group.kind.name(), g.group.label.as_str());
            for a in &g.at {
                let k = a.k;
                let row = |metric, p, value, count| Row { run, kind, group, metric, k, p, value, count };
                line(&mut out, row("compile", None, a.compile.share, a.compile.of));
                line(&mut out, row("correct", None, a.correct.share, a.correct.of));
                for f in &a.fast {
                    line(&mut out, row("fast", Some(f.p), f.rate.share, f.rate.of));
                }
                let s = &a.speedup;
                line(&mut out, row("speedup_geomean", None, s.geomean, s.count));
                line(&mut out, row("speedup_median", None, s.median, s.count));
                line(&mut out, row("speedup_min", None, s.min, s.count));
                line(&mut out, row("speedup_max", None, s.max, s.count));
                line(&mut out, row("memory_ratio_geomean", None, a.memory.geomean_ratio, a.memory.count));
                let p = &a.passes;
                line(&mut out, row("passes_kernels_before", None, Some(p.kernels_before as f64), p.count));
                line(&mut out, row("passes_kernels_after", None, Some(p.kernels_after as f64), p.count));
                line(&mut out, row("passes_kernels_ratio", None, p.kernels_ratio, p.count));
                line(&mut out, row("passes_peak_ratio_geomean", None, p.geomean_peak_ratio, p.count));
            }
        }
        for f in &r.failures {
            for x in &f.rows {
                let metric = format!("failure:{}", x.class);
                line(
                    &mut out,
                    Row {
                        run,
                        kind: f.group.kind.name(),
                        group: &f.group.label,
                        metric: &metric,
                        k: r.env.samples,
                        p: None,
                        value: x.share,
                        count: x.count,
                    },
                );
            }
        }
    }
    out
}
