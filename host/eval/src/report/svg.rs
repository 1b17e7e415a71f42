//! Inline SVG plots written by hand: line plots (the Fast@p curve), bar plots (grouped or
//! stacked) and a histogram on a log axis. Each returns one `<svg>` element for an HTML page.
//!
//! What must stay true: every element opened is closed; text is escaped; coordinates are
//! finite (values outside an axis are clamped onto it); no script, no external reference; every
//! plot has a `<title>` naming what it shows; colours come from fixed palettes, so the same
//! series has the same colour in every plot of a report; a legend sits under the plot, wrapped
//! into as many rows as it needs, and the plot grows (taller, and wider for one very long name)
//! so that every legend entry is shown whole inside its `viewBox`.

use super::table::escape;
use std::fmt::Write;

/// Series colours (Tableau 10).
pub const PALETTE: [&str; 10] = [
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f",
    "#bab0ac",
];

/// The colour of the i-th series.
pub fn color(i: usize) -> &'static str {
    PALETTE[i % PALETTE.len()]
}

/// The drawing area of a plot: outer size and margins, in pixels.
#[derive(Debug, Clone, Copy)]
struct Frame {
    w: f64,
    h: f64,
    left: f64,
    right: f64,
    top: f64,
    bottom: f64,
}

/// Width of the plot, before a legend entry too long for it widens it.
const PLOT_W: f64 = 680.0;
/// Height of the plot, before the legend's rows are added under it.
const PLOT_H: f64 = 320.0;
/// Room under the plot area for tick labels and the axis title.
const AXIS_ROOM: f64 = 48.0;
/// Height of a legend row.
const LEGEND_ROW: f64 = 18.0;
/// An upper bound of the width of one character of legend text (11px sans-serif: about 6 px
/// on average, 10 for the widest capitals), so an entry laid out with it is never cut.
pub const LEGEND_CHAR_W: f64 = 7.5;
/// A legend entry's swatch and the gap after it, before its name.
const SWATCH: f64 = 18.0;
/// The gap between legend entries on a row.
const ENTRY_GAP: f64 = 16.0;

/// Where legend entries go: `(x, row)` each, the rows needed, and the width the plot needs.
struct LegendLayout {
    at: Vec<(f64, usize)>,
    rows: usize,
    width: f64,
}

impl LegendLayout {
    /// Lays entries out left to right under a plot whose area starts at `left`, wrapping to a
    /// new row when an entry would pass the right edge.
    fn new(names: &[&str], left: f64, right: f64) -> LegendLayout {
        let entry = |n: &str| SWATCH + n.chars().count() as f64 * LEGEND_CHAR_W;
        let widest = names.iter().map(|n| entry(n)).fold(0.0, f64::max);
        let width = PLOT_W.max(left + widest + right);
        let (mut at, mut x, mut row) = (Vec::new(), left, 0);
        for n in names {
            if x > left && x + entry(n) > width - right {
                (x, row) = (left, row + 1);
            }
            at.push((x, row));
            x += entry(n) + ENTRY_GAP;
        }
        LegendLayout { rows: if names.is_empty() { 0 } else { row + 1 }, at, width }
    }
}

impl Frame {
    /// The frame of a plot with the given legend entries under it.
    fn standard(legend: &[&str]) -> (Frame, LegendLayout) {
        let (left, right) = (58.0, 20.0);
        let layout = LegendLayout::new(legend, left, right);
        let legend_h = layout.rows as f64 * LEGEND_ROW;
        let frame = Frame {
            w: layout.width,
            h: PLOT_H + legend_h,
            left,
            right,
            top: 44.0,
            bottom: AXIS_ROOM + legend_h,
        };
        (frame, layout)
    }
    fn x0(&self) -> f64 {
        self.left
    }
    fn x1(&self) -> f64 {
        self.w - self.right
    }
    fn y0(&self) -> f64 {
        self.h - self.bottom
    }
    fn y1(&self) -> f64 {
        self.top
    }
    /// Maps `v` in `[lo, hi]` to the horizontal pixel, clamped to the area.
    fn px(&self, v: f64, lo: f64, hi: f64) -> f64 {
        let t = if hi > lo { ((v - lo) / (hi - lo)).clamp(0.0, 1.0) } else { 0.0 };
        self.x0() + t * (self.x1() - self.x0())
    }
    /// Maps `v` in `[0, hi]` to the vertical pixel, clamped to the area.
    fn py(&self, v: f64, hi: f64) -> f64 {
        let t = if hi > 0.0 && v.is_finite() { (v / hi).clamp(0.0, 1.0) } else { 0.0 };
        self.y0() - t * (self.y0() - self.y1())
    }
}

/// An SVG element under construction.
struct Svg {
    out: String,
}

impl Svg {
    fn new(f: &Frame, title: &str) -> Svg {
        let mut out = String::new();
        let _ = write!(
            out,
            "<svg viewBox=\"0 0 {w} {h}\" width=\"{w}\" height=\"{h}\" role=\"img\" aria-label=\"{t}\">\n<title>{t}</title>\n",
            w = f.w,
            h = f.h,
            t = escape(title)
        );
        let _ =
            writeln!(out, "<text x=\"{:.1}\" y=\"18\" class=\"plot-title\">{}</text>", f.x0(), escape(title));
        Svg { out }
    }

    fn line(&mut self, (x1, y1): (f64, f64), (x2, y2): (f64, f64), class: &str) {
        let _ = writeln!(
            self.out,
            "<line x1=\"{x1:.1}\" y1=\"{y1:.1}\" x2=\"{x2:.1}\" y2=\"{y2:.1}\" class=\"{class}\"/>"
        );
    }

    fn rect(&mut self, x: f64, y: f64, w: f64, h: f64, fill: &str, tip: &str) {
        let _ = writeln!(
            self.out,
            "<rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"{fill}\"><title>{}</title></rect>",
            w.max(0.0),
            h.max(0.0),
            escape(tip)
        );
    }

    fn text(&mut self, x: f64, y: f64, anchor: &str, class: &str, s: &str) {
        let _ = writeln!(
            self.out,
            "<text x=\"{x:.1}\" y=\"{y:.1}\" text-anchor=\"{anchor}\" class=\"{class}\">{}</text>",
            escape(s)
        );
    }

    fn polyline(&mut self, points: &[(f64, f64)], stroke: &str, dashed: bool, tip: &str) {
        let pts: Vec<String> = points.iter().map(|(x, y)| format!("{x:.1},{y:.1}")).collect();
        let _ = writeln!(
            self.out,
            "<polyline points=\"{}\" fill=\"none\" stroke=\"{stroke}\" stroke-width=\"2\"{}><title>{}</title></polyline>",
            pts.join(" "),
            if dashed { " stroke-dasharray=\"6 4\"" } else { "" },
            escape(tip)
        );
    }

    /// Horizontal grid lines and labels of the value axis, and the axis title.
    fn y_axis(&mut self, f: &Frame, ticks: &[(f64, String)], hi: f64, label: &str) {
        for (v, t) in ticks {
            let y = f.py(*v, hi);
            self.line((f.x0(), y), (f.x1(), y), "grid");
            self.text(f.x0() - 6.0, y + 4.0, "end", "tick", t);
        }
        let (x, y) = (14.0, (f.y0() + f.y1()) / 2.0);
        let _ = writeln!(
            self.out,
            "<text x=\"{x:.1}\" y=\"{y:.1}\" text-anchor=\"middle\" transform=\"rotate(-90 {x:.1} {y:.1})\" class=\"axis-label\">{}</text>",
            escape(label)
        );
        self.line((f.x0(), f.y0()), (f.x1(), f.y0()), "axis");
        self.line((f.x0(), f.y0()), (f.x0(), f.y1()), "axis");
    }

    fn x_label(&mut self, f: &Frame, label: &str) {
        self.text((f.x0() + f.x1()) / 2.0, f.y0() + AXIS_ROOM - 8.0, "middle", "axis-label", label);
    }

    /// Colour swatches and names under the plot, where `layout` put them.
    fn legend(&mut self, f: &Frame, layout: &LegendLayout, items: &[(String, String)]) {
        for ((name, fill), &(x, row)) in items.iter().zip(&layout.at) {
            let y = f.y0() + AXIS_ROOM + 2.0 + LEGEND_ROW * row as f64;
            let _ = writeln!(
                self.out,
                "<rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"12\" height=\"12\" fill=\"{fill}\"/>"
            );
            self.text(x + 18.0, y + 10.0, "start", "legend", name);
        }
    }

    fn finish(mut self) -> String {
        self.out.push_str("</svg>\n");
        self.out
    }
}

/// One line of a line plot.
#[derive(Debug, Clone, PartialEq)]
pub struct LineSeries {
    pub name: String,
    pub color: String,
    pub points: Vec<(f64, f64)>,
    pub dashed: bool,
}

/// A line plot over `[0, x_max] × [0, y_max]`.
#[derive(Debug, Clone, PartialEq)]
pub struct LinePlot {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub x_max: f64,
    pub y_max: f64,
    pub x_ticks: Vec<(f64, String)>,
    pub y_ticks: Vec<(f64, String)>,
    /// x positions to mark with a light vertical line.
    pub marks: Vec<f64>,
    pub series: Vec<LineSeries>,
}

pub fn line_plot(p: &LinePlot) -> String {
    let names: Vec<&str> = p.series.iter().map(|l| l.name.as_str()).collect();
    let (f, layout) = Frame::standard(&names);
    let mut s = Svg::new(&f, &p.title);
    s.y_axis(&f, &p.y_ticks, p.y_max, &p.y_label);
    for m in &p.marks {
        let x = f.px(*m, 0.0, p.x_max);
        s.line((x, f.y0()), (x, f.y1()), "mark");
    }
    for (v, t) in &p.x_ticks {
        let x = f.px(*v, 0.0, p.x_max);
        s.line((x, f.y0()), (x, f.y0() + 4.0), "axis");
        s.text(x, f.y0() + 17.0, "middle", "tick", t);
    }
    s.x_label(&f, &p.x_label);
    for l in &p.series {
        let pts: Vec<(f64, f64)> =
            l.points.iter().map(|(x, y)| (f.px(*x, 0.0, p.x_max), f.py(*y, p.y_max))).collect();
        s.polyline(&pts, &l.color, l.dashed, &l.name);
    }
    let items: Vec<(String, String)> = p.series.iter().map(|l| (l.name.clone(), l.color.clone())).collect();
    s.legend(&f, &layout, &items);
    s.finish()
}

/// One series of a bar plot: a value per category.
#[derive(Debug, Clone, PartialEq)]
pub struct BarSeries {
    pub name: String,
    pub color: String,
    pub values: Vec<f64>,
}

/// Bars per category, side by side (grouped) or on top of each other (stacked).
#[derive(Debug, Clone)]
pub struct BarPlot {
    pub title: String,
    pub y_label: String,
    /// Category labels; a `\n` starts a second line.
    pub categories: Vec<String>,
    pub series: Vec<BarSeries>,
    pub stacked: bool,
    pub y_max: f64,
    pub y_ticks: Vec<(f64, String)>,
    /// How a value prints on its bar (grouped) or a total above its stack (stacked).
    pub value_text: fn(f64) -> String,
}

pub fn bar_plot(p: &BarPlot) -> String {
    let names: Vec<&str> = p.series.iter().map(|b| b.name.as_str()).collect();
    let (f, layout) = Frame::standard(&names);
    let mut s = Svg::new(&f, &p.title);
    s.y_axis(&f, &p.y_ticks, p.y_max, &p.y_label);
    let n = p.categories.len().max(1) as f64;
    let slot = (f.x1() - f.x0()) / n;
    let bars = if p.stacked { 1.0 } else { p.series.len().max(1) as f64 };
    let width = slot * 0.8 / bars;
    for (c, cat) in p.categories.iter().enumerate() {
        let left = f.x0() + slot * c as f64 + slot * 0.1;
        let mut base = 0.0;
        for (i, ser) in p.series.iter().enumerate() {
            let v = ser.values.get(c).copied().unwrap_or(0.0);
            let tip = format!("{}, {}: {}", cat.replace('\n', " "), ser.name, (p.value_text)(v));
            if p.stacked {
                if v > 0.0 {
                    let (top, bottom) = (f.py(base + v, p.y_max), f.py(base, p.y_max));
                    s.rect(left, top, width, bottom - top, &ser.color, &tip);
                }
                base += v;
            } else {
                let x = left + width * i as f64;
                let top = f.py(v, p.y_max);
                s.rect(x, top, width, f.y0() - top, &ser.color, &tip);
                s.text(x + width / 2.0, top - 3.0, "middle", "value", &(p.value_text)(v));
            }
        }
        if p.stacked {
            s.text(left + width / 2.0, f.py(base, p.y_max) - 3.0, "middle", "value", &(p.value_text)(base));
        }
        for (i, part) in cat.split('\n').enumerate() {
            s.text(f.x0() + slot * (c as f64 + 0.5), f.y0() + 15.0 + 12.0 * i as f64, "middle", "tick", part);
        }
    }
    if p.series.iter().all(|ser| ser.values.iter().all(|v| *v == 0.0)) {
        s.text((f.x0() + f.x1()) / 2.0, (f.y0() + f.y1()) / 2.0, "middle", "axis-label", "none");
    }
    let items: Vec<(String, String)> = p.series.iter().map(|b| (b.name.clone(), b.color.clone())).collect();
    s.legend(&f, &layout, &items);
    s.finish()
}

/// A histogram of positive values on a log2 axis: bins `[lo · 2^(i/per_octave), …)` from `lo`
/// to `hi`; values outside go into the first or last bin.
#[derive(Debug, Clone, PartialEq)]
pub struct Histogram {
    pub title: String,
    pub x_label: String,
    pub lo: f64,
    pub hi: f64,
    pub per_octave: u32,
    pub values: Vec<f64>,
    pub color: String,
    /// A value to mark with a vertical line (1 for the baseline).
    pub mark: Option<f64>,
}

impl Histogram {
    /// The count of each bin.
    pub fn counts(&self) -> Vec<usize> {
        let bins = self.bins();
        let mut counts = vec![0; bins];
        let (l0, step) = (self.lo.log2(), 1.0 / self.per_octave as f64);
        for v in self.values.iter().filter(|v| **v > 0.0 && v.is_finite()) {
            let i = ((v.log2() - l0) / step).floor();
            counts[(i.max(0.0) as usize).min(bins - 1)] += 1;
        }
        counts
    }

    fn bins(&self) -> usize {
        (((self.hi.log2() - self.lo.log2()) * self.per_octave as f64).round() as usize).max(1)
    }
}

/// `1/4x`, `1x`, `16x`: a power of two as a speedup label.
pub fn power_label(v: f64) -> String {
    if v >= 1.0 {
        format!("{}x", v.round())
    } else {
        format!("1/{}x", (1.0 / v).round())
    }
}

pub fn histogram(p: &Histogram) -> String {
    let (f, _) = Frame::standard(&[]);
    let counts = p.counts();
    let (y_max, ticks) = count_axis(counts.iter().copied().max().unwrap_or(0) as f64);
    let mut s = Svg::new(&f, &p.title);
    s.y_axis(&f, &ticks, y_max, "instances");
    let (l0, l1) = (p.lo.log2(), p.hi.log2());
    let step = 1.0 / p.per_octave as f64;
    for (i, &n) in counts.iter().enumerate() {
        let (a, b) = (l0 + step * i as f64, l0 + step * (i + 1) as f64);
        let (xa, xb) = (f.px(a, l0, l1), f.px(b, l0, l1));
        let y = f.py(n as f64, y_max);
        let tip = format!("{} to {}: {n}", fmt_speedup(a.exp2()), fmt_speedup(b.exp2()));
        s.rect(xa + 1.0, y, xb - xa - 2.0, f.y0() - y, &p.color, &tip);
        if n > 0 {
            s.text((xa + xb) / 2.0, y - 3.0, "middle", "value", &n.to_string());
        }
    }
    let mut e = l0.ceil();
    while e <= l1 + 1e-9 {
        let x = f.px(e, l0, l1);
        s.line((x, f.y0()), (x, f.y0() + 4.0), "axis");
        s.text(x, f.y0() + 17.0, "middle", "tick", &power_label(e.exp2()));
        e += 1.0;
    }
    if let Some(m) = p.mark {
        let x = f.px(m.log2(), l0, l1);
        s.line((x, f.y0()), (x, f.y1()), "baseline-mark");
    }
    s.x_label(&f, &p.x_label);
    s.finish()
}

fn fmt_speedup(v: f64) -> String {
    format!("{v:.2}x")
}

/// The smallest 1, 2 or 5 × 10^n at or above `v` (at least 1).
pub fn nice_ceiling(v: f64) -> f64 {
    let mag = 10f64.powf(v.max(1.0).log10().floor());
    [1.0, 2.0, 5.0, 10.0].iter().map(|m| m * mag).find(|c| *c >= v).unwrap_or(10.0 * mag)
}

/// A count axis reaching at least `top`: its end and its ticks, whole numbers about four
/// steps apart.
pub fn count_axis(top: f64) -> (f64, Vec<(f64, String)>) {
    let step = nice_ceiling(top / 4.0);
    let end = (step * (top / step).ceil()).max(step);
    let n = (end / step).round() as usize;
    (end, (0..=n).map(|i| (step * i as f64, format!("{:.0}", step * i as f64))).collect())
}

/// Ticks 0%, 25%, …, 100% for shares in [0, 1].
pub fn share_ticks() -> Vec<(f64, String)> {
    (0..=4).map(|i| (i as f64 / 4.0, format!("{}%", i * 25))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_bins_are_octave_fractions_and_clamp_the_ends() {
        let h = Histogram {
            title: "t".into(),
            x_label: "x".into(),
            lo: 0.25,
            hi: 4.0,
            per_octave: 1,
            values: vec![0.01, 0.3, 1.0, 1.99, 2.0, 100.0],
            color: color(0).into(),
            mark: Some(1.0),
        };
        // Bins [1/4, 1/2), [1/2, 1), [1, 2), [2, 4]: 0.01 and 0.3 in the first, 1 and 1.99 in the
        // third, 2 and 100 in the last.
        assert_eq!(h.counts(), [2, 0, 2, 2]);
        let svg = histogram(&h);
        assert_eq!(svg.matches("<rect").count(), 4);
        for label in ["1/4x", "1/2x", "1x", "2x", "4x"] {
            assert!(svg.contains(&format!(">{label}</text>")), "{label}: {svg}");
        }
    }

    #[test]
    fn nice_ceilings_and_count_axes() {
        assert_eq!(
            [nice_ceiling(0.2), nice_ceiling(3.0), nice_ceiling(7.0), nice_ceiling(11.0)],
            [1.0, 5.0, 10.0, 20.0]
        );
        let labels = |top: f64| {
            let (end, ticks) = count_axis(top);
            (end, ticks.into_iter().map(|t| t.1).collect::<Vec<_>>().join(" "))
        };
        assert_eq!(labels(0.0), (1.0, "0 1".to_string()));
        assert_eq!(labels(3.0), (3.0, "0 1 2 3".to_string()));
        assert_eq!(labels(650.0), (800.0, "0 200 400 600 800".to_string()));
        assert_eq!(power_label(0.125), "1/8x");
    }

    #[test]
    fn values_off_the_axis_are_clamped_and_text_is_escaped() {
        let p = LinePlot {
            title: "a < b & c".into(),
            x_label: "p".into(),
            y_label: "share".into(),
            x_max: 3.0,
            y_max: 1.0,
            x_ticks: vec![(0.0, "0".into())],
            y_ticks: share_ticks(),
            marks: vec![1.0],
            series: vec![LineSeries {
                name: "cpu".into(),
                color: color(0).into(),
                points: vec![(0.0, 2.0), (5.0, f64::NAN)],
                dashed: false,
            }],
        };
        let svg = line_plot(&p);
        assert!(svg.contains("<title>a &lt; b &amp; c</title>"));
        // x 5 clamps to the right edge (680 - 20 = 660), y 2 to the top (44), NaN to the bottom
        // (320 + one legend row of 18, less the 48 + 18 under the plot area: 272).
        assert!(svg.contains("points=\"58.0,44.0 660.0,272.0\""), "{svg}");
        assert!(!svg.contains("NaN") && !svg.contains("inf"));
    }
}
