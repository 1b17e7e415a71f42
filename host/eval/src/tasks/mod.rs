//! The benchmark task suite: one task per file pair under `tasks/levelN/`.
//!
//! A task is `NAME.ekir` (a header of structured comments, see [`meta`], then the canonical text
//! of a static L0 graph named `NAME`) and `NAME.py` (the PyTorch program it normalises). Loading
//! a task checks everything that can be checked from its `.ekir` alone: the header, the graph
//! (parse and check), that the graph is named after its file (the seeded data's key contains
//! the graph name), that the level in the header is the folder's, that the graph text is in
//! canonical form, and that every parameter is seeded (no data files).
//!
//! Submodules: [`meta`] (header), [`cost`] (FLOPs, bytes, peak memory), [`validate`] (the
//! suite's quality rules), [`twin`] (the PyTorch twin checks), [`export`] (reference I/O as
//! `.npy`), [`table`] (counts by level, backend and domain), [`subset`] (instance lists such as
//! the agent subset).

pub mod cost;
pub mod export;
pub mod meta;
pub mod subset;
pub mod table;
pub mod twin;
pub mod validate;

use ekb_ir::diag::did_you_mean;
use ekb_ir::l0::{self, Graph};
use ekb_ir::tensor::Tolerance;
use ekb_ir::{DType, Diagnostic, SourceFile, Span};
pub use meta::{Backend, Domain, Provenance, TaskMeta, TolSpec};
use std::path::{Path, PathBuf};

/// The levels of the suite and how many tasks each has when the suite is complete.
pub const LEVEL_TARGETS: [(u8, usize); 3] = [(1, 128), (2, 162), (3, 41)];
/// Instances (task, backend) of the complete suite.
pub const INSTANCE_TARGET: usize = 650;

/// One loaded task.
#[derive(Debug, Clone)]
pub struct Task {
    pub name: String,
    /// The `.ekir` file.
    pub path: PathBuf,
    /// The PyTorch twin beside it (`NAME.py`; it may be missing, which `validate` reports).
    pub twin: PathBuf,
    pub meta: TaskMeta,
    /// The checked graph.
    pub graph: Graph,
    /// The file's text.
    pub source: SourceFile,
}

impl Task {
    /// The comparison tolerance for an output of this dtype, as the board applies it: integers
    /// exact, f32 the task's bound or the protocol's default, f16 the same with a relative bound
    /// of at least one f16 step.
    pub fn tolerance(&self, dtype: DType) -> Tolerance {
        let t = self.meta.payload_tolerance().for_dtype(dtype.into());
        Tolerance { atol: t.atol, rtol: t.rtol }
    }

    /// The graph text without the header.
    pub fn graph_text(&self) -> &str {
        &self.source.text[self.meta.header_end..]
    }
}

/// Reads and checks one task file; every problem is a located diagnostic.
pub fn load_task(path: &Path) -> Result<Task, Vec<Diagnostic>> {
    let src = SourceFile::read(path).map_err(|d| vec![d])?;
    let meta = meta::parse_header(&src);
    let graph = l0::check::load(&src);
    let (meta, graph) = match (meta, graph) {
        (Ok(m), Ok(g)) => (m, g),
        (m, g) => return Err([m.err(), g.err()].into_iter().flatten().flatten().collect()),
    };
    let mut errs = Vec::new();
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let name_span = graph_name_span(&src, meta.header_end, &graph.name);
    if graph.name != stem {
        errs.push(
            Diagnostic::error(format!("the graph is named `{}` but its file is `{stem}.ekir`", graph.name))
                .at(name_span)
                .with_expected(format!("`graph {stem}(...)`: a task's graph is named after its file"))
                .with_note("the seeded inputs and parameters are keyed by the graph name"),
        );
    }
    let folder_level = path
        .parent()
        .and_then(|p| p.file_name())
        .and_then(|n| n.to_str())
        .and_then(|n| n.strip_prefix("level"))
        .and_then(|n| n.parse::<u8>().ok());
    if let Some(l) = folder_level.filter(|&l| l != meta.level) {
        let at = src.text.find("level=").map_or(Span::new(0, 1), |i| Span::new(i, i + 7));
        errs.push(
            Diagnostic::error(format!("the header says level {} but the task is in `level{l}/`", meta.level))
                .at(at)
                .with_expected(format!("`level={l}`, or move the task to `level{}/`", meta.level)),
        );
    }
    for p in graph.params.iter().filter(|p| p.data.is_some()) {
        errs.push(
            Diagnostic::error(format!("parameter `{}` takes its values from a file", p.name))
                .at(p.span)
                .with_expected("a seeded initialiser (`kaiming_uniform`, `uniform(lo, hi)`, ...)")
                .with_note("tasks are self-contained: inputs and weights are regenerated for every seed"),
        );
    }
    if let Some(d) = canonical_diff(&src, meta.header_end, &graph) {
        errs.push(d);
    }
    if !errs.is_empty() {
        return Err(errs.into_iter().map(|d| src.locate(d)).collect());
    }
    let twin = path.with_extension("py");
    Ok(Task { name: graph.name.clone(), path: path.to_path_buf(), twin, meta, graph, source: src })
}

/// The span of the graph's name after `graph ` in the file, for diagnostics.
fn graph_name_span(src: &SourceFile, header_end: usize, name: &str) -> Span {
    let body = &src.text[header_end..];
    match body.find("graph ").and_then(|g| body[g..].find(name).map(|n| g + n)) {
        Some(at) => Span::new(header_end + at, header_end + at + name.len().max(1)),
        None => Span::new(header_end, header_end + 1),
    }
}

/// `None` when the text after the header is exactly the graph's canonical form; otherwise a
/// diagnostic at the first line that differs, showing the canonical line.
fn canonical_diff(src: &SourceFile, header_end: usize, g: &Graph) -> Option<Diagnostic> {
    let want = l0::print::print(g);
    let have = &src.text[header_end..];
    if have == want {
        return None;
    }
    let mut offset = header_end;
    let mut have_lines = have.split_inclusive('\n');
    for want_line in want.split_inclusive('\n') {
        let got = have_lines.next();
        if got != Some(want_line) {
            let width = got.map_or(1, |l| l.trim_end_matches('\n').len().max(1));
            return Some(
                Diagnostic::error("the graph is not in canonical form")
                    .at(Span::new(offset, offset + width))
                    .with_expected(format!("`{}`", want_line.trim_end_matches('\n')))
                    .with_hint(
                        "`ekb tasks fmt NAME` rewrites the graph in canonical form, keeping the header",
                    ),
            );
        }
        offset += want_line.len();
    }
    Some(
        Diagnostic::error("text after the end of the graph")
            .at(Span::new(offset, src.text.len().max(offset + 1)))
            .with_expected("nothing after the closing `}` and its newline")
            .with_hint("`ekb tasks fmt NAME` rewrites the graph in canonical form, keeping the header"),
    )
}

/// The text a task file should have: its header in canonical form, then the canonical graph.
pub fn formatted(task_text: &str, name: &str) -> Result<String, Vec<Diagnostic>> {
    let src = SourceFile::new(name, task_text);
    let meta = meta::parse_header(&src);
    let graph = l0::check::load(&src);
    match (meta, graph) {
        (Ok(m), Ok(g)) => Ok(format!("{}{}", meta::print_header(&m), l0::print::print(&g))),
        (m, g) => Err([m.err(), g.err()].into_iter().flatten().flatten().collect()),
    }
}

/// The loaded suite: every task that loaded, and the diagnostics of those that did not.
#[derive(Debug)]
pub struct Suite {
    pub root: PathBuf,
    pub tasks: Vec<Task>,
    pub errors: Vec<Diagnostic>,
}

impl Suite {
    /// A task by exact name, or a diagnostic with the closest name as a hint.
    pub fn get(&self, name: &str) -> Result<&Task, Diagnostic> {
        self.tasks.iter().find(|t| t.name == name).ok_or_else(|| {
            let mut d = Diagnostic::error(format!("no task named `{name}` in `{}`", self.root.display()))
                .with_expected("a task name as `ekb tasks list` prints it");
            let containing: Vec<&str> =
                self.tasks.iter().map(|t| t.name.as_str()).filter(|n| n.contains(name)).take(5).collect();
            if let Some(h) = did_you_mean(name, self.tasks.iter().map(|t| t.name.as_str())) {
                d = d.with_hint(h);
            } else if !containing.is_empty() {
                d = d.with_hint(format!("tasks whose name contains it: {}", containing.join(", ")));
            }
            d
        })
    }

    /// The tasks a filter selects, in suite order (level, then name).
    pub fn select(&self, f: &Filter) -> Vec<&Task> {
        self.tasks.iter().filter(|t| f.matches(t)).collect()
    }
}

/// The task files of a suite root: `levelN/*.ekir` for every `levelN` folder, sorted by level
/// then name.
pub fn task_files(root: &Path) -> Result<Vec<PathBuf>, Diagnostic> {
    let entries = std::fs::read_dir(root).map_err(|e| {
        Diagnostic::error(format!("cannot read the task folder `{}`: {e}", root.display()))
            .with_hint("pass `--dir PATH/TO/tasks`")
    })?;
    let mut levels: Vec<(u8, PathBuf)> = entries
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let n = e.file_name().to_str()?.strip_prefix("level")?.parse::<u8>().ok()?;
            e.path().is_dir().then(|| (n, e.path()))
        })
        .collect();
    levels.sort();
    let mut files = Vec::new();
    for (_, dir) in levels {
        let mut fs: Vec<PathBuf> = std::fs::read_dir(&dir)
            .map_err(|e| Diagnostic::error(format!("cannot read `{}`: {e}", dir.display())))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "ekir"))
            .collect();
        fs.sort();
        files.extend(fs);
    }
    Ok(files)
}

/// Loads every task under `root`; duplicate names across levels are errors.
pub fn load_suite(root: &Path) -> Result<Suite, Diagnostic> {
    let mut suite = Suite { root: root.to_path_buf(), tasks: Vec::new(), errors: Vec::new() };
    for f in task_files(root)? {
        match load_task(&f) {
            Ok(t) => {
                if let Some(first) = suite.tasks.iter().find(|u| u.name == t.name) {
                    suite.errors.push(
                        Diagnostic::error(format!(
                            "task `{}` is defined twice: `{}` and `{}`",
                            t.name,
                            first.path.display(),
                            t.path.display()
                        ))
                        .with_file(&t.path.display().to_string()),
                    );
                } else {
                    suite.tasks.push(t);
                }
            }
            Err(ds) => suite.errors.extend(ds),
        }
    }
    Ok(suite)
}

/// The nearest `tasks` folder holding a `level1` folder, from `start` upwards.
pub fn find_root(start: &Path) -> Option<PathBuf> {
    start.ancestors().map(|a| a.join("tasks")).find(|t| t.join("level1").is_dir())
}

/// Which tasks a command applies to; every given criterion must hold.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    pub level: Option<u8>,
    pub domain: Option<Domain>,
    pub backend: Option<Backend>,
    pub family: Option<String>,
    /// A name pattern: with `*` or `?` a glob over the whole name, otherwise a substring.
    pub pattern: Option<String>,
    /// Only these instances (a subset file's): a task matches when it is listed with `backend`,
    /// or with any backend when no backend is given.
    pub instances: Option<Vec<subset::InstanceName>>,
}

impl Filter {
    pub fn matches(&self, t: &Task) -> bool {
        self.level.is_none_or(|l| t.meta.level == l)
            && self.domain.is_none_or(|d| t.meta.domains.contains(&d))
            && self.backend.is_none_or(|b| t.meta.backends().contains(&b))
            && self.family.as_ref().is_none_or(|f| &t.meta.family == f)
            && self.pattern.as_ref().is_none_or(|p| name_matches(p, &t.name))
            && self.instances.as_ref().is_none_or(|list| {
                list.iter().any(|(name, b)| name == &t.name && self.backend.is_none_or(|want| want == *b))
            })
    }
}

/// A glob (`*` any run, `?` one character) over the whole name when the pattern has a
/// wildcard; otherwise a substring test.
pub fn name_matches(pattern: &str, name: &str) -> bool {
    if !pattern.contains(['*', '?']) {
        return name.contains(pattern);
    }
    let (p, n): (Vec<char>, Vec<char>) = (pattern.chars().collect(), name.chars().collect());
    // Iterative glob with one backtrack point (the last `*`).
    let (mut i, mut j, mut star, mut mark) = (0, 0, None, 0);
    while j < n.len() {
        if i < p.len() && (p[i] == '?' || p[i] == n[j]) {
            i += 1;
            j += 1;
        } else if i < p.len() && p[i] == '*' {
            star = Some(i);
            mark = j;
            i += 1;
        } else if let Some(s) = star {
            i = s + 1;
            mark += 1;
            j = mark;
        } else {
            return false;
        }
    }
    p[i..].iter().all(|&c| c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn name_patterns_are_globs_or_substrings() {
        assert!(name_matches("conv", "conv2d_depthwise_mbv2"));
        assert!(name_matches("depthwise", "conv2d_depthwise_mbv2"));
        assert!(!name_matches("pool", "conv2d_depthwise_mbv2"));
        assert!(name_matches("conv2d_*", "conv2d_depthwise_mbv2"));
        assert!(!name_matches("*_resnet", "conv2d_depthwise_mbv2"));
        assert!(name_matches("*_mbv?", "conv2d_depthwise_mbv2"));
        assert!(name_matches("c*d*2", "conv2d_depthwise_mbv2"));
        assert!(!name_matches("c*d*3", "conv2d_depthwise_mbv2"));
        assert!(name_matches("*", ""));
    }
}
