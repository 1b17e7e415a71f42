//! The figures of `ekb bench --engines --backend cuda`: a row per instance (each side's median
//! device time, or why it has none), each torch side's time over ekb's, their geomeans, and the
//! table and JSON they are printed as.
//!
//! What must stay true: a ratio exists only where ekb and that side both ran and are correct
//! (a wrong side is shown, never counted); each geomean is over exactly the rows that have its
//! ratio, and says how many that is.

use crate::bench::median;
use ekb_eval::metrics::summary::geomean;
use serde::Serialize;

/// ekb's side, first on every row.
pub const EKB: &str = "ekb";

#[derive(Debug, Serialize)]
pub struct Side {
    pub name: String,
    /// Why this side has no figures on this row (ekb's compile or load failed, the twin or
    /// torch.compile failed, the side is missing on this machine, a timed run failed).
    pub unavailable: Option<String>,
    pub correct: bool,
    /// How the outputs differ from the reference (then the side is not timed).
    pub mismatch: Option<String>,
    /// The median device time of one execution, over every sample of every round.
    pub median_ms: Option<f64>,
    /// The lowest and highest of the per-round medians.
    pub round_min_ms: Option<f64>,
    pub round_max_ms: Option<f64>,
    pub samples: usize,
    /// Seconds spent getting the side ready (ekb: compile, build and load; torch: loading the
    /// twin, `torch.compile`, warm-up and capture).
    pub setup_s: f64,
    /// A torch side's median over ekb's (above 1: ekb is faster); none for ekb, or when either
    /// is wrong or has no figure.
    pub over_ekb: Option<f64>,
}

impl Side {
    /// A side that started; `mismatch` says whether its outputs were right.
    pub fn started(name: &str, mismatch: Option<String>, setup_s: f64) -> Side {
        Side {
            name: name.into(),
            unavailable: None,
            correct: mismatch.is_none(),
            mismatch,
            median_ms: None,
            round_min_ms: None,
            round_max_ms: None,
            samples: 0,
            setup_s,
            over_ekb: None,
        }
    }

    pub fn unavailable(name: &str, why: String) -> Side {
        Side { correct: false, ..Side::started(name, None, 0.0) }.with_reason(why)
    }

    fn with_reason(mut self, why: String) -> Side {
        self.unavailable = Some(why);
        self
    }

    /// The side as unavailable from now on (a timed run failed), its samples dropped.
    pub fn fail(&mut self, why: String) {
        let setup_s = self.setup_s;
        *self = Side { setup_s, ..Side::unavailable(&self.name, why) };
    }

    /// The median, for a side that ran and is correct.
    fn correct_median(&self) -> Option<f64> {
        self.median_ms.filter(|_| self.correct && self.unavailable.is_none())
    }
}

#[derive(Debug, Serialize)]
pub struct Row {
    pub instance: String,
    /// ekb first, then the torch sides in `--engine` order: the same sides on every row.
    pub sides: Vec<Side>,
}

/// A row from its sides (ekb first) and each side's samples per round, in milliseconds: each
/// correct side's median and range of round medians, and each torch side's ratio over ekb.
pub fn row(instance: String, mut sides: Vec<Side>, rounds: &[Vec<Vec<f64>>]) -> Row {
    for (s, r) in sides.iter_mut().zip(rounds) {
        let all: Vec<f64> = r.concat();
        if all.is_empty() || !s.correct || s.unavailable.is_some() {
            continue;
        }
        s.median_ms = Some(median(&all));
        s.round_min_ms = r.iter().filter(|x| !x.is_empty()).map(|x| median(x)).reduce(f64::min);
        s.round_max_ms = r.iter().filter(|x| !x.is_empty()).map(|x| median(x)).reduce(f64::max);
        s.samples = all.len();
    }
    let ekb = sides.first().and_then(Side::correct_median);
    for s in sides.iter_mut().skip(1) {
        s.over_ekb = s.correct_median().zip(ekb).map(|(t, e)| t / e);
    }
    Row { instance, sides }
}

/// One torch side's geomean of its time over ekb's.
#[derive(Debug, Serialize, PartialEq)]
pub struct Geomean {
    pub side: String,
    pub geomean_over_ekb: Option<f64>,
    /// How many rows it is over (those with the ratio), and how many rows ekb was faster on.
    pub rows: usize,
    pub ekb_faster: usize,
}

#[derive(Debug, Serialize)]
pub struct Report {
    pub target: String,
    /// The GPU, as the runtime and torch name it.
    pub device: String,
    pub torch: Option<String>,
    pub triton: Option<String>,
    pub rounds: usize,
    pub round_ms: f64,
    /// Sides missing on this machine, with the reason: n/a on every row.
    pub left_out: Vec<(String, String)>,
    pub rows: Vec<Row>,
    pub geomeans: Vec<Geomean>,
}

/// The geomean of each torch side (`names`, in order) over the rows that have its ratio.
pub fn geomeans(rows: &[Row], names: &[String]) -> Vec<Geomean> {
    names
        .iter()
        .map(|name| {
            let ratios: Vec<f64> = rows
                .iter()
                .filter_map(|r| r.sides.iter().find(|s| &s.name == name).and_then(|s| s.over_ekb))
                .collect();
            Geomean {
                side: name.clone(),
                geomean_over_ekb: geomean(&ratios),
                rows: ratios.len(),
                ekb_faster: ratios.iter().filter(|&&x| x > 1.0).count(),
            }
        })
        .collect()
}

/// The progress line's end: each side's median or `n/a`, and each ratio.
pub fn summary(r: &Row) -> String {
    let parts: Vec<String> = r
        .sides
        .iter()
        .map(|s| {
            let fig = match (&s.unavailable, s.median_ms) {
                (Some(_), _) => "n/a".to_string(),
                (None, _) if !s.correct => "wrong".to_string(),
                (None, None) => "n/a".to_string(),
                (None, Some(m)) => format!("{m:.4} ms"),
            };
            let ratio = s.over_ekb.map_or_else(String::new, |x| format!(" ({x:.2}x)"));
            format!("{} {fig}{ratio}", s.name)
        })
        .collect();
    parts.join(", ")
}

/// A side's cell: its median, `wrong` or `n/a`.
fn cell(s: &Side) -> String {
    match s.median_ms {
        Some(m) => format!("{m:.4}"),
        None if s.unavailable.is_none() && !s.correct => "wrong".into(),
        None => "n/a".into(),
    }
}

/// A ratio as a table cell, `-` for none.
fn ratio_cell(x: Option<f64>) -> String {
    x.map_or_else(|| "-".into(), |x| format!("{x:.2}x"))
}

/// The sides left out, those with one reason on one line: `NAME, NAME: {prefix}WHY`.
pub fn left_out_lines(left_out: &[(String, String)], prefix: &str) -> Vec<String> {
    let mut groups: Vec<(Vec<&str>, &str)> = Vec::new();
    for (name, why) in left_out {
        match groups.iter_mut().find(|(_, w)| *w == why.as_str()) {
            Some((names, _)) => names.push(name),
            None => groups.push((vec![name.as_str()], why.as_str())),
        }
    }
    groups.into_iter().map(|(names, why)| format!("{}: {prefix}{why}", names.join(", "))).collect()
}

/// The table, the reasons of every n/a and wrong cell (a side left out on the whole run once,
/// not per row), and the geomeans, as lines.
pub fn table(r: &Report) -> Vec<String> {
    let names: Vec<&str> =
        r.rows.first().map(|w| w.sides.iter().map(|s| s.name.as_str()).collect()).unwrap_or_default();
    let width = r.rows.iter().map(|w| w.instance.len()).max().unwrap_or(8).max(8);
    let mut out = vec![format!(
        "device time per execution on {} (target `{}`), median ms over {} rounds of about {} ms per side; \
         SIDE/ekb: that side's time over ekb's (above 1: ekb is faster)",
        r.device, r.target, r.rounds, r.round_ms
    )];
    let mut head = format!("{:width$}", "instance");
    for n in &names {
        head.push_str(&format!("  {n:>13}"));
    }
    for n in names.iter().skip(1) {
        head.push_str(&format!("  {:>17}", format!("{n}/ekb")));
    }
    out.push(head);
    for w in &r.rows {
        let mut line = format!("{:width$}", w.instance);
        for s in &w.sides {
            line.push_str(&format!("  {:>13}", cell(s)));
        }
        for s in w.sides.iter().skip(1) {
            line.push_str(&format!("  {:>17}", ratio_cell(s.over_ekb)));
        }
        out.push(line);
    }
    for w in &r.rows {
        for s in &w.sides {
            let left_out = r.left_out.iter().any(|(n, _)| n == &s.name);
            if let (Some(why), false) = (&s.unavailable, left_out) {
                out.push(format!("n/a {} on {}: {}", s.name, w.instance, why.lines().next().unwrap_or("?")));
            } else if let Some(m) = &s.mismatch {
                let first = m.lines().next().unwrap_or("?");
                out.push(format!(
                    "wrong {} on {}: outputs differ from the reference: {first}",
                    s.name, w.instance
                ));
            }
        }
    }
    out.extend(left_out_lines(&r.left_out, "").into_iter().map(|l| format!("left out: {l}")));
    for g in &r.geomeans {
        out.push(match g.geomean_over_ekb {
            Some(x) => format!(
                "geomean {}/ekb: {x:.2}x over {} of {} instance(s) (ekb faster on {})",
                g.side,
                g.rows,
                r.rows.len(),
                g.ekb_faster
            ),
            None => format!(
                "geomean {}/ekb: - (no instance has both a correct ekb and a correct {})",
                g.side, g.side
            ),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(name: &str) -> Side {
        Side::started(name, None, 0.5)
    }

    #[test]
    fn ratios_are_over_ekb_and_only_for_correct_sides_with_figures() {
        let sides =
            vec![ok(EKB), ok("torch"), Side::started("torch-compile", Some("output `y`: 3 off".into()), 9.0)];
        // ekb 2 ms, torch 3 ms (rounds 2 and 4: median of all 3 samples is 3), the wrong side's
        // samples (none: it is not timed) give nothing.
        let r =
            row("t".into(), sides, &[vec![vec![2.0], vec![2.0]], vec![vec![2.0, 3.0], vec![4.0]], vec![]]);
        assert_eq!(r.sides[0].median_ms, Some(2.0));
        assert_eq!(r.sides[0].over_ekb, None);
        let torch = &r.sides[1];
        assert_eq!(
            (torch.median_ms, torch.round_min_ms, torch.round_max_ms, torch.samples),
            (Some(3.0), Some(2.5), Some(4.0), 3)
        );
        assert_eq!(torch.over_ekb, Some(1.5));
        let compile = &r.sides[2];
        assert_eq!((compile.correct, compile.median_ms, compile.over_ekb), (false, None, None));
        assert_eq!(summary(&r), "ekb 2.0000 ms, torch 3.0000 ms (1.50x), torch-compile wrong");
    }

    #[test]
    fn a_row_without_ekb_has_no_ratio_but_keeps_the_torch_figures() {
        let sides = vec![Side::unavailable(EKB, "compile: NVRTC refused the source".into()), ok("torch")];
        let r = row("t".into(), sides, &[vec![], vec![vec![1.0]]]);
        assert_eq!((r.sides[1].median_ms, r.sides[1].over_ekb), (Some(1.0), None));
        assert_eq!(summary(&r), "ekb n/a, torch 1.0000 ms");
    }

    #[test]
    fn a_wrong_ekb_drops_its_samples_and_every_ratio() {
        let sides = vec![
            Side::started(
                EKB,
                Some("seed 0: output `y` has 4 element(s) outside the tolerance\nat 0: 1 vs 2".into()),
                1.0,
            ),
            ok("torch"),
        ];
        let mut sides = sides;
        sides.push(Side::unavailable("torch-compile", "left out: cannot import torch".into()));
        let r = row("t".into(), sides, &[vec![vec![1.0]], vec![vec![2.0]], vec![]]);
        assert_eq!((r.sides[0].median_ms, r.sides[1].over_ekb), (None, None));
        let lines = table(&report(vec![r], vec![("torch-compile".into(), "cannot import torch".into())]));
        assert!(!lines.iter().any(|l| l.starts_with("n/a torch-compile")), "{lines:?}");
        assert!(
            lines[2].starts_with("t ") && lines[2].contains("wrong") && lines[2].ends_with("-"),
            "{}",
            lines[2]
        );
        assert!(lines.contains(
            &"wrong ekb on t: outputs differ from the reference: seed 0: output `y` has 4 element(s) outside the tolerance"
                .to_string()
        ));
        assert!(lines.contains(&"left out: torch-compile: cannot import torch".to_string()));
    }

    fn report(rows: Vec<Row>, left_out: Vec<(String, String)>) -> Report {
        Report {
            target: "h200".into(),
            device: "GPU".into(),
            torch: Some("2.11".into()),
            triton: None,
            rounds: 3,
            round_ms: 100.0,
            left_out,
            geomeans: Vec::new(),
            rows,
        }
    }

    #[test]
    fn a_failed_side_keeps_its_setup_time_and_loses_its_figures() {
        let mut s = Side::started("torch", None, 4.0);
        s.fail("a timed run failed: CUDA error".into());
        assert_eq!(
            (s.correct, s.setup_s, s.unavailable.as_deref()),
            (false, 4.0, Some("a timed run failed: CUDA error"))
        );
        let r = row("t".into(), vec![ok(EKB), s], &[vec![vec![1.0]], vec![vec![5.0]]]);
        assert_eq!((r.sides[1].median_ms, r.sides[1].over_ekb), (None, None));
    }

    #[test]
    fn geomeans_are_per_side_over_the_rows_with_a_ratio() {
        let names = vec!["torch".to_string(), "torch-compile".to_string()];
        let three = || vec![ok(EKB), ok("torch"), ok("torch-compile")];
        let rows = vec![
            // torch 4x, compile 0.5x
            row("a".into(), three(), &[vec![vec![1.0]], vec![vec![4.0]], vec![vec![0.5]]]),
            // torch 1/4x, compile n/a
            row(
                "b".into(),
                vec![ok(EKB), ok("torch"), Side::unavailable("torch-compile", "torch.compile failed".into())],
                &[vec![vec![2.0]], vec![vec![0.5]], vec![]],
            ),
            // ekb missing: no ratio at all
            row(
                "c".into(),
                vec![Side::unavailable(EKB, "no twin".into()), ok("torch"), ok("torch-compile")],
                &[vec![], vec![vec![1.0]], vec![vec![1.0]]],
            ),
        ];
        let g = geomeans(&rows, &names);
        assert_eq!((g[0].rows, g[0].ekb_faster), (2, 1));
        assert!((g[0].geomean_over_ekb.unwrap() - 1.0).abs() < 1e-12);
        assert_eq!((g[1].rows, g[1].ekb_faster, g[1].geomean_over_ekb), (1, 0, Some(0.5)));
        let lines = table(&Report { geomeans: g, ..report(rows, vec![]) });
        assert!(lines[1].starts_with("instance") && lines[1].contains("torch-compile/ekb"), "{}", lines[1]);
        assert!(lines[2].starts_with("a ") && lines[2].ends_with("4.00x              0.50x"), "{}", lines[2]);
        assert!(lines[3].contains("n/a") && lines[3].ends_with("0.25x                  -"), "{}", lines[3]);
        assert!(lines.contains(&"n/a torch-compile on b: torch.compile failed".to_string()));
        assert!(lines.contains(&"n/a ekb on c: no twin".to_string()));
        assert!(
            lines.contains(&"geomean torch/ekb: 1.00x over 2 of 3 instance(s) (ekb faster on 1)".to_string())
        );
        assert!(lines.contains(
            &"geomean torch-compile/ekb: 0.50x over 1 of 3 instance(s) (ekb faster on 0)".to_string()
        ));
    }

    #[test]
    fn sides_left_out_for_one_reason_share_a_line() {
        let left = [
            ("ekb".to_string(), "no CUDA device".to_string()),
            ("torch".to_string(), "cannot import torch".to_string()),
            ("torch-compile".to_string(), "cannot import torch".to_string()),
        ];
        assert_eq!(
            left_out_lines(&left, "left out: "),
            ["ekb: left out: no CUDA device", "torch, torch-compile: left out: cannot import torch"]
        );
    }

    #[test]
    fn a_side_with_no_ratio_anywhere_says_so() {
        let rows = vec![row("a".into(), vec![ok(EKB), ok("torch")], &[vec![], vec![vec![1.0]]])];
        let g = geomeans(&rows, &["torch".to_string()]);
        assert_eq!(g, vec![Geomean { side: "torch".into(), geomean_over_ekb: None, rows: 0, ekb_faster: 0 }]);
    }
}
