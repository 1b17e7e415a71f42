//! Reports over computed metrics ([`crate::metrics::Comparison`]): aligned terminal text,
//! Markdown, one tidy long-format CSV table, JSON, and a self-contained HTML page with inline SVG
//! plots.
//!
//! What must stay true: every report names its baseline (`speedup vs NAME`); text, Markdown and
//! HTML show the same sections and tables, in the same order, built once ([`sections`]); a report
//! prints the metrics as computed and recomputes nothing but the plots' curves; the HTML needs
//! nothing outside itself (no script, no external file, font or URL).
//!
//! - [`table`]: one table type, rendered as text, Markdown or HTML.
//! - [`tables`]: the tables and lines every report shows.
//! - [`csv`], [`html`] (with [`svg`] plots): the formats with their own layout.

pub mod csv;
pub mod html;
pub mod svg;
pub mod table;
pub mod tables;

#[cfg(test)]
mod browser_tests;
#[cfg(test)]
mod tests;

use crate::metrics::{Comparison, GroupKind};
use ekb_ir::diag::did_you_mean;
use ekb_ir::Diagnostic;
use table::Table;

/// A report format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Text,
    Markdown,
    Csv,
    Json,
    Html,
}

impl Format {
    pub const ALL: [Format; 5] = [Format::Text, Format::Markdown, Format::Csv, Format::Json, Format::Html];

    pub fn name(self) -> &'static str {
        match self {
            Format::Text => "text",
            Format::Markdown => "markdown",
            Format::Csv => "csv",
            Format::Json => "json",
            Format::Html => "html",
        }
    }

    /// Parses a format name; an unknown one gives a diagnostic listing the known ones.
    pub fn from_name(name: &str) -> Result<Format, Diagnostic> {
        if let Some(f) = Format::ALL.into_iter().find(|f| f.name() == name) {
            return Ok(f);
        }
        let names = Format::ALL.map(Format::name);
        let mut d = Diagnostic::error(format!("unknown report format `{name}`"))
            .with_expected(format!("one of {}", names.map(|n| format!("`{n}`")).join(", ")));
        if let Some(h) = did_you_mean(name, names) {
            d = d.with_hint(h);
        }
        Err(d)
    }
}

/// The report of `c` in `format`.
pub fn render(c: &Comparison, format: Format) -> String {
    match format {
        Format::Text => text(c),
        Format::Markdown => markdown(c),
        Format::Csv => csv::render(c),
        Format::Json => format!("{}\n", serde_json::to_string_pretty(c).expect("metrics serialise")),
        Format::Html => html::render(c),
    }
}

/// The title every report starts with.
pub const TITLE: &str = "EdgeKernelBench evaluation report";

/// A piece of a report section.
#[derive(Debug, Clone, PartialEq)]
pub enum Block {
    Para(String),
    List(Vec<String>),
    /// A table; an empty one renders as `TITLE: none`.
    Table(Table),
}

/// A titled part of a report.
#[derive(Debug, Clone, PartialEq)]
pub struct Section {
    pub title: String,
    /// An identifier for HTML anchors.
    pub id: String,
    pub blocks: Vec<Block>,
}

/// The sections every human-readable report shows, in order: runs and their environment, one
/// per grouping (pooled first), the graph passes, failures, flags, warnings.
pub fn sections(c: &Comparison) -> Vec<Section> {
    let mut out = Vec::new();
    let mut runs = Vec::new();
    for r in &c.runs {
        runs.push(Block::Para(format!("run {} ({})", r.label, r.dir)));
        runs.push(Block::List(tables::env_lines(r)));
    }
    out.push(Section { title: "Runs".into(), id: "runs".into(), blocks: runs });
    for kind in GroupKind::ALL {
        out.push(Section {
            title: kind.title().into(),
            id: kind.name().into(),
            blocks: vec![
                Block::Table(tables::rates_table(c, kind)),
                Block::Table(tables::speedup_table(c, kind)),
            ],
        });
    }
    out.push(Section {
        title: "Graph passes".into(),
        id: "passes".into(),
        blocks: vec![
            Block::Para(
                "Each candidate compiled from a graph is also lowered without the graph passes (no code \
                 generated): its kernels and the planned peak of its memory plan, without -> with the passes."
                    .into(),
            ),
            Block::List(tables::passes_lines(c)),
            Block::Table(tables::passes_table(c)),
            Block::Table(tables::passes_instances_table(c)),
        ],
    });
    out.push(Section {
        title: "Failures".into(),
        id: "failures".into(),
        blocks: c.runs.iter().map(|r| Block::Table(tables::failures_table(r))).collect(),
    });
    out.push(Section {
        title: "Flags".into(),
        id: "flags".into(),
        blocks: vec![
            Block::Table(tables::high_speedup_table(c)),
            Block::Table(tables::unstable_table(c)),
            Block::Table(tables::baseline_failure_table(c)),
        ],
    });
    let warnings = tables::warnings(c);
    out.push(Section {
        title: "Warnings".into(),
        id: "warnings".into(),
        blocks: vec![if warnings.is_empty() { Block::Para("none".into()) } else { Block::List(warnings) }],
    });
    out
}

/// `text` broken at spaces into lines of at most `width` characters (a longer word stays whole).
fn wrap(text: &str, width: usize) -> String {
    let mut out = String::new();
    let mut line = 0;
    for word in text.split(' ') {
        let n = word.chars().count();
        if line > 0 && line + 1 + n > width {
            out.push('\n');
            line = 0;
        } else if line > 0 {
            out.push(' ');
            line += 1;
        }
        out.push_str(word);
        line += n;
    }
    out
}

/// Aligned terminal text: sections underlined, blocks one blank line apart.
fn text(c: &Comparison) -> String {
    let mut s = format!("{TITLE}\n{}\n{}\n", tables::baseline_line(c), wrap(tables::COUNTING, 100));
    for sec in sections(c) {
        s.push_str(&format!("\n{}\n{}\n", sec.title, "=".repeat(sec.title.chars().count())));
        let blocks: Vec<String> = sec
            .blocks
            .iter()
            .map(|b| match b {
                Block::Para(p) => format!("{}\n", wrap(p, 100)),
                Block::List(items) => items.iter().map(|i| format!("  {i}\n")).collect(),
                Block::Table(t) if t.rows.is_empty() => format!("{}: none\n", t.title),
                Block::Table(t) => t.to_text(),
            })
            .collect();
        // A paragraph introduces the list after it; everything else stands apart.
        for (i, b) in blocks.iter().enumerate() {
            if i > 0 && !matches!(sec.blocks[i - 1], Block::Para(_)) {
                s.push('\n');
            }
            s.push_str(b);
        }
    }
    s
}

/// Markdown: `#` title, `##` sections, `###` tables.
fn markdown(c: &Comparison) -> String {
    let esc = |t: &str| t.replace('&', "&amp;").replace('<', "&lt;");
    let mut s = format!("# {TITLE}\n\n{}\n\n{}\n", esc(&tables::baseline_line(c)), tables::COUNTING);
    for sec in sections(c) {
        s.push_str(&format!("\n## {}\n", sec.title));
        for b in &sec.blocks {
            s.push('\n');
            match b {
                Block::Para(p) => s.push_str(&format!("{}\n", esc(p))),
                Block::List(items) => items.iter().for_each(|i| s.push_str(&format!("- {}\n", esc(i)))),
                Block::Table(t) if t.rows.is_empty() => {
                    s.push_str(&format!("### {}\n\nnone\n", esc(&t.title)))
                }
                Block::Table(t) => s.push_str(&t.to_markdown()),
            }
        }
    }
    s
}
