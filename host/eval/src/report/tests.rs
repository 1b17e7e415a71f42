//! Report formats over the hand-made runs of [`crate::metrics::fixture`]: exact Markdown and
//! text for the small run (golden files beside this one; `EKB_BLESS=1` rewrites them after a
//! deliberate change, to be read before committing), the CSV's shape and values, the JSON's
//! values, and the HTML's structure (balanced tags, closed `<svg>`s, nothing external, the
//! numbers present).

use super::*;
use crate::metrics::fixture::*;
use crate::metrics::{compare, Comparison, Group};
use std::path::Path;

fn small() -> Comparison {
    compare(&[small_run()], None).unwrap()
}

fn sample() -> Comparison {
    compare(&[sample_run()], None).unwrap()
}

/// Compares `got` with the golden file `name`, or rewrites it under `EKB_BLESS=1`.
fn golden(name: &str, got: &str) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/report/golden").join(name);
    if std::env::var_os("EKB_BLESS").is_some_and(|v| v == "1") {
        std::fs::write(&path, got).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(got == want, "{name} changed (EKB_BLESS=1 rewrites it); got:\n{got}");
}

#[test]
fn markdown_of_the_small_run_is_exact() {
    // Hand values: relu/cpu 1.5x, conv/cpu memory failure (compiled), relu/cuda 0.8x.
    // Compile 3/3, Correct 2/3, Fast@0.8 1/3 (0.8 is not above 0.8), Fast@1.5 0/3;
    // geomean √(1.5 · 0.8) = 1.095 → 1.10x, median 1.15x.
    let md = render(&small(), Format::Markdown);
    assert!(
        md.contains("| all | 3 | 1 | 100.0% | 66.7% | 66.7% | 66.7% | 33.3% | 33.3% | 0.0% | 0.0% |"),
        "{md}"
    );
    assert!(md.contains("| all | 1 | 2 | 1.10x | 1.15x | 0.80x | 1.50x | 0 | - |"), "{md}");
    golden("small.md", &md);
}

#[test]
fn every_format_shows_what_the_graph_passes_did() {
    // relu/cpu 3 -> 2 kernels, 8 -> 4 KiB; relu/cuda 2 -> 2, 1 -> 1 KiB: 5 -> 4 (0.80x), peak
    // geomean √(0.5 · 1) = 0.71x.
    let c = small();
    let text = render(&c, Format::Text);
    assert!(
        text.contains("k = 1: kernels 5 -> 4 (0.80x); planned peak geomean 0.71x over 2 instance(s)"),
        "{text}"
    );
    let md = render(&c, Format::Markdown);
    assert!(md.contains("| relu | cpu | 1 | 3 | 2 | 8.0 | 4.0 | 0.50x |"), "{md}");
    assert!(md.contains("| all | 1 | 2 | 5 | 4 | 0.80x | 0.71x |"), "{md}");
    let json: serde_json::Value = serde_json::from_str(&render(&c, Format::Json)).unwrap();
    let run = &json["runs"][0];
    assert_eq!(run["outcomes"][0]["at"][0]["passes"]["before"]["kernels"], 3);
    assert_eq!(run["outcomes"][0]["at"][0]["passes"]["after"]["planned_peak_bytes"], 4096);
    assert!(run["outcomes"][1]["at"][0].get("passes").is_none(), "conv has no record");
    assert_eq!(run["groups"][0]["at"][0]["passes"]["kernels_after"], 4);
    assert!(render(&c, Format::Html).contains("Graph passes per instance"));
}

#[test]
fn text_of_the_small_run_is_exact() {
    let text = render(&small(), Format::Text);
    assert!(text.starts_with("EdgeKernelBench evaluation report\nbaseline: speedup vs naive"), "{text}");
    golden("small.txt", &text);
}

#[test]
fn every_format_names_the_baseline() {
    for f in Format::ALL {
        let out = render(&small(), f);
        let named = match f {
            Format::Csv => true, // one table of values; the baseline is in the JSON and the others
            Format::Json => out.contains("\"baseline\": \"naive\""),
            _ => out.contains("speedup vs naive"),
        };
        assert!(named, "{}", f.name());
    }
}

#[test]
fn csv_is_one_long_table_with_full_precision_values() {
    let csv = render(&small(), Format::Csv);
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines[0], "run,group_kind,group,metric,k,p,value,count");
    // 10 groups (all, cpu, cuda, L1, L2, mobile, robotics, cpu L1, cpu L2, cuda L1) × 1 k × 17
    // values, and 3 failure groups (all, cpu, cuda) × 10 rows.
    assert_eq!(lines.len(), 1 + 10 * 17 + 3 * 10);
    assert!(lines.iter().all(|l| l.split(',').count() == 8), "{csv}");
    for row in [
        "small,pooled,all,correct,1,,0.6666666666666666,3",
        "small,pooled,all,fast,1,0.8,0.3333333333333333,3",
        "small,pooled,all,speedup_geomean,1,,1.0954451150103321,2",
        "small,pooled,all,memory_ratio_geomean,1,,,0",
        "small,pooled,all,passes_kernels_before,1,,5,2",
        "small,pooled,all,passes_kernels_after,1,,4,2",
        "small,pooled,all,passes_kernels_ratio,1,,0.8,2",
        "small,backend,cuda,passes_peak_ratio_geomean,1,,1,1",
        "small,backend_level,cpu L2,correct,1,,0,1",
        "small,pooled,all,failure:memory,1,,1,1",
        "small,backend,cuda,failure:memory,1,,,0",
    ] {
        assert!(lines.contains(&row), "missing {row}\n{csv}");
    }
    let mut odd = small_run();
    odd.dir = "runs/a,\"b\"".into();
    let csv = render(&compare(&[odd], None).unwrap(), Format::Csv);
    assert!(csv.lines().nth(1).unwrap().starts_with("\"a,\"\"b\"\"\",pooled,all,compile,"), "{csv}");
}

#[test]
fn json_holds_every_metric_and_the_outcomes() {
    let v: serde_json::Value = serde_json::from_str(&render(&sample(), Format::Json)).unwrap();
    let run = &v["runs"][0];
    assert_eq!(run["label"], "sample");
    assert_eq!(run["ks"], serde_json::json!([1, 2]));
    let all_k2 = &run["groups"][0]["at"][1];
    assert_eq!((all_k2["k"].as_u64(), all_k2["correct"]["hits"].as_u64()), (Some(2), Some(4)));
    assert_eq!(all_k2["fast"][3]["p"].as_f64(), Some(1.0));
    assert_eq!(run["flags"]["high_speedups"][0]["speedup"].as_f64(), Some(12.0));
    assert_eq!(run["outcomes"].as_array().unwrap().len(), 7);
    assert_eq!(run["failures"][0]["missing"].as_u64(), Some(3));
}

/// Checks that tags balance: every opened element is closed in order (void elements and `/>`
/// aside), and returns the count of each element name.
pub(crate) fn balanced(html: &str) -> Result<std::collections::BTreeMap<String, usize>, String> {
    const VOID: [&str; 3] = ["meta", "br", "hr"];
    let mut stack: Vec<String> = Vec::new();
    let mut counts = std::collections::BTreeMap::new();
    let mut rest = html;
    while let Some(i) = rest.find('<') {
        let end = rest[i..].find('>').ok_or_else(|| format!("unclosed `<` at {}", &rest[i..]))? + i;
        let tag = &rest[i + 1..end];
        rest = &rest[end + 1..];
        if tag.starts_with('!') {
            continue;
        }
        if let Some(name) = tag.strip_prefix('/') {
            match stack.pop() {
                Some(open) if open == name => {}
                other => return Err(format!("`</{name}>` closes {other:?}")),
            }
            continue;
        }
        let name: String = tag.chars().take_while(|c| c.is_ascii_alphanumeric()).collect();
        if name.is_empty() {
            return Err(format!("a raw `<` before `{tag}`"));
        }
        *counts.entry(name.clone()).or_insert(0) += 1;
        if !tag.ends_with('/') && !VOID.contains(&name.as_str()) {
            if name == "style" {
                let close = rest.find("</style>").ok_or("unclosed <style>")?;
                rest = &rest[close + "</style>".len()..];
                continue;
            }
            stack.push(name);
        }
    }
    if stack.is_empty() {
        Ok(counts)
    } else {
        Err(format!("unclosed: {stack:?}"))
    }
}

/// What a self-contained page must not hold: URLs, scripts, fetched resources, links that
/// leave the page.
pub(crate) fn external_references(html: &str) -> Vec<&'static str> {
    let mut found: Vec<&'static str> =
        ["http:", "https:", "url(", "@import", "<script", "<link", "<img", "src=", "<iframe", "<object"]
            .into_iter()
            .filter(|p| html.contains(p))
            .collect();
    if html.split("href=\"").skip(1).any(|rest| !rest.starts_with('#')) {
        found.push("href to another page");
    }
    found
}

#[test]
fn html_is_balanced_self_contained_and_holds_the_numbers() {
    let html = render(&sample(), Format::Html);
    let counts = balanced(&html).unwrap();
    // Fast@p curve, one histogram (one run), failures, levels.
    assert_eq!(counts["svg"], 4);
    assert_eq!(html.matches("</svg>").count(), 4);
    assert_eq!(counts["figure"], 4);
    assert_eq!(external_references(&html), Vec::<&str>::new());
    assert!(html.contains("<p class=\"baseline\">baseline: speedup vs naive"));
    for number in ["57.1%", "42.9%", "14.3%", "1.41x", "1.82x", "12.00x", "2 (22.2%)"] {
        assert!(html.contains(number), "{number}");
    }
    // The flagged speedup's row is highlighted.
    assert!(html.contains(
        "<tr class=\"flag\"><td>relu</td><td>cpu</td><td class=\"num\">1</td><td class=\"num\">12.00x</td></tr>"
    ));
    assert!(html.contains("1 speedup(s) over 10x flagged for review"));
    // Every section of the text report is there, in order.
    let ids: Vec<usize> = sections(&sample())
        .iter()
        .map(|s| html.find(&format!("<section id=\"{}\">", s.id)).unwrap())
        .collect();
    assert!(ids.windows(2).all(|w| w[0] < w[1]));
}

#[test]
fn html_of_several_runs_has_a_histogram_each_and_escapes_labels() {
    let mut b = sample_run();
    b.dir = "runs/<b&c>".into();
    b.info.baseline = "default".into();
    let c = compare(&[sample_run(), b], None).unwrap();
    let html = render(&c, Format::Html);
    let counts = balanced(&html).unwrap();
    assert_eq!(counts["svg"], 5);
    assert!(html.contains("&lt;b&amp;c&gt;") && !html.contains("<b&c>"));
    assert!(html.contains("baselines differ between runs"));
    assert!(html.contains("speedup vs default (the default schedule"));
}

#[test]
fn the_fast_curve_steps_down_at_each_speedup_and_a_tie_is_not_fast() {
    let c = sample();
    let r = &c.runs[0];
    let cpu = Group::backend("cpu");
    let outs: Vec<_> = r.outcomes_in(&cpu).collect();
    // cpu at k=1: relu 2.0x, conv none, pool none: 1/3 up to p = 2, then 0.
    let third = 1.0 / 3.0;
    assert_eq!(html::fast_curve(&outs, 1, 3.0), [(0.0, third), (2.0, third), (2.0, 0.0), (3.0, 0.0)]);
    // At k=2 the 12x candidate lies beyond the plotted range: flat at 2/3 (relu, conv 0.5x) until
    // conv drops at 0.5.
    let two = 2.0 / 3.0;
    assert_eq!(html::fast_curve(&outs, 2, 3.0), [(0.0, two), (0.5, two), (0.5, third), (3.0, third)]);
}

#[test]
fn several_runs_share_each_table_with_a_run_column() {
    let mut b = small_run();
    b.dir = "runs/other".into();
    let text = render(&compare(&[small_run(), b], None).unwrap(), Format::Text);
    assert!(text.contains("run    group  instances  k  Compile@k"), "{text}");
    assert!(text.contains("small  all            3  1     100.0%"), "{text}");
    assert!(text.contains("other  all            3  1     100.0%"), "{text}");
    assert!(text.contains("Failures of small:") && text.contains("Failures of other:"));
}

#[test]
fn an_unknown_format_is_a_diagnostic_with_a_hint() {
    assert_eq!(Format::from_name("csv").unwrap(), Format::Csv);
    let e = Format::from_name("markdwn").unwrap_err();
    assert!(e.message.contains("unknown report format `markdwn`"));
    assert_eq!(e.hint.as_deref(), Some("did you mean `markdown`?"));
}

/// One legend entry of a plot: its text and where it starts (`x`, `y`).
type LegendEntry = (String, f64, f64);

/// The legend entries of each `<svg>` of a page, with the `viewBox`'s width and height.
fn legends(html: &str) -> Vec<(Vec<LegendEntry>, f64, f64)> {
    let attr = |tag: &str, name: &str| -> f64 {
        let at = tag.find(&format!(" {name}=\"")).unwrap() + name.len() + 3;
        tag[at..at + tag[at..].find('"').unwrap()].parse().unwrap()
    };
    html.split("<svg ")
        .skip(1)
        .map(|svg| {
            let view: Vec<f64> = svg[svg.find("viewBox=\"").unwrap() + 9..]
                .split('"')
                .next()
                .unwrap()
                .split(' ')
                .map(|v| v.parse().unwrap())
                .collect();
            let entries = svg.split("<text ").skip(1).filter(|t| t.contains("class=\"legend\"")).map(|t| {
                let name = &t[t.find('>').unwrap() + 1..t.find("</text>").unwrap()];
                let t = format!(" {t}");
                (name.to_string(), attr(&t, "x"), attr(&t, "y"))
            });
            (entries.collect(), view[2], view[3])
        })
        .collect()
}

// Legends sat in a fixed right margin: long run labels ran past the `viewBox` and were cut, so
// two entries that differ only at their end (`LABEL Correct@1`, `LABEL Fast@1.0`) read the same.
#[test]
fn every_legend_entry_is_distinct_and_inside_its_plot() {
    let mut a = sample_run();
    a.dir = "runs/qwen2.5-coder-32b-instruct-2026-12-01-unified".into();
    let mut b = sample_run();
    b.dir = "runs/qwen2.5-coder-32b-instruct-2026-12-01-native".into();
    let html = render(&compare(&[a, b], None).unwrap(), Format::Html);
    let plots = legends(&html);
    assert!(plots.iter().filter(|(entries, _, _)| entries.len() >= 4).count() >= 2, "{html}");
    for (entries, w, h) in plots {
        let names: std::collections::BTreeSet<&str> = entries.iter().map(|(n, _, _)| n.as_str()).collect();
        assert_eq!(names.len(), entries.len(), "distinct entries: {entries:?}");
        for (name, x, y) in &entries {
            let right = x + name.chars().count() as f64 * svg::LEGEND_CHAR_W;
            assert!(
                *x >= 0.0 && right <= w && *y <= h,
                "`{name}` at ({x}, {y}) to {right} outside 0 0 {w} {h}"
            );
        }
    }
}
