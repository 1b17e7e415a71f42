//! A node's program as three layers, one per IR level, and the candidate they make.
//!
//! - **L0, the graph**: the graph text and the graph passes it is compiled with (`default`, or a
//!   list such as `fold,cse,dce`: fusion decisions are the graph's `fuse` groups and the passes).
//! - **L1, the schedule**: the default schedule's knobs (a recipe of `set` lines) and a schedule
//!   trace replayed on the loop program the graph lowers to with them. On a GPU, the schedule
//!   may also take kernels back from the GPU lowering (`rebind`): those start as the naive loop
//!   nests of the CPU lowering, and the trace binds them to a launch itself (`bind`), with the
//!   block sizes and shared-memory stages it chooses.
//! - **L2, kernel sources**: kernels of that loop program given as backend source.
//!
//! Each level's agent edits only its layer; the candidate is derived from all three
//! ([`Layers::materialize`]): the graph alone when the other layers are the defaults (an L0
//! candidate), else the loop program the layers compile to (an L1 candidate), else an L2 folder
//! whose module is that program. A node stores its layers as files under `layers/` beside its
//! candidate, so a later edit of an earlier level replays the later layers on the new program
//! ([`Layers::carry`]).
//!
//! What must stay true: materializing is deterministic (the same layers give byte-identical
//! files, which is how the loop recognises a candidate it has already measured); a layer at its
//! default writes no file.

use crate::tree::CandidateFile;
use ekb_deploy::driver::{self, CompileOptions, Program, Sources, Stage, TraceInput};
use ekb_deploy::l2::{KernelLang, KERNELS_DIR, MODULE_FILE};
use ekb_eval::evaluate::compile::trace_options;
use ekb_eval::tasks::{Backend, Task};
use ekb_ir::l1::Module;
use ekb_ir::{Diagnostic, SourceFile, TargetProfile};
use ekb_lower::{Knobs, Schedule};
use std::collections::BTreeMap;

/// Where a node's layers are kept among its files.
pub const LAYERS_DIR: &str = "layers";
pub const GRAPH_FILE: &str = "layers/graph.ekir";
const PASSES_FILE: &str = "layers/passes";
const RECIPE_FILE: &str = "layers/schedule.recipe";
const TRACE_FILE: &str = "layers/schedule.trace";
const REBIND_FILE: &str = "layers/schedule.rebind";

/// The graph passes of the default pipeline, as [`Layers::passes`] names them.
pub const DEFAULT_PASSES: &str = "default";

/// One kernel given as backend source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelFile {
    pub lang: KernelLang,
    pub text: String,
}

/// A node's program, by level.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layers {
    /// L0: the graph's text.
    pub graph: String,
    /// L0: the graph passes (`default`, `none` or a comma-separated list).
    pub passes: String,
    /// L1: `set NAME = VALUE` lines over the target's knobs; empty for the target's recipe.
    pub recipe: String,
    /// L1: a schedule trace over the program the graph lowers to; empty for none.
    pub trace: String,
    /// L1, on a GPU: the kernels the trace binds itself, which start as their naive loop nest
    /// instead of the GPU lowering's launch; empty for none.
    pub rebind: Vec<String>,
    /// L2: kernel name -> its source.
    pub kernels: BTreeMap<String, KernelFile>,
}

/// The candidate of some layers, and the loop program it is.
#[derive(Debug, Clone)]
pub struct Materialized {
    /// The candidate's files (what `ekb eval` reads from a sample folder) and the layers'.
    pub files: Vec<CandidateFile>,
    /// The loop program the graph and schedule layers compile to.
    pub module: Module,
}

impl Layers {
    /// A task's own program: its graph, every other layer at its default.
    pub fn of_task(task: &Task) -> Layers {
        Layers {
            graph: task.source.text.clone(),
            passes: DEFAULT_PASSES.into(),
            recipe: String::new(),
            trace: String::new(),
            rebind: Vec::new(),
            kernels: BTreeMap::new(),
        }
    }

    /// Reads the layers back from a node's files; a node without a graph layer has the task's
    /// own graph (`task_graph`).
    pub fn from_files(files: &[CandidateFile], task_graph: &str) -> Layers {
        let get = |path: &str| files.iter().find(|f| f.path == path).map(|f| f.text.clone());
        let prefix = format!("{LAYERS_DIR}/{KERNELS_DIR}/");
        let kernels = files
            .iter()
            .filter_map(|f| {
                let file = f.path.strip_prefix(&prefix)?;
                let (name, ext) = file.rsplit_once('.')?;
                let lang = KernelLang::from_extension(ext)?;
                Some((name.to_string(), KernelFile { lang, text: f.text.clone() }))
            })
            .collect();
        Layers {
            graph: get(GRAPH_FILE).unwrap_or_else(|| task_graph.to_string()),
            passes: get(PASSES_FILE).map_or_else(|| DEFAULT_PASSES.into(), |p| p.trim().to_string()),
            recipe: get(RECIPE_FILE).unwrap_or_default(),
            trace: get(TRACE_FILE).unwrap_or_default(),
            rebind: get(REBIND_FILE)
                .map(|t| t.lines().map(str::trim).filter(|l| !l.is_empty()).map(String::from).collect())
                .unwrap_or_default(),
            kernels,
        }
    }

    /// The loop program of the graph and schedule layers for `backend` on `target`, verified:
    /// the graph through its passes, lowered with the default schedule and the recipe's knobs,
    /// the trace replayed on it. Diagnostics name the layer's file (`layers/...`).
    pub fn lower(&self, backend: Backend, target: &TargetProfile) -> Result<Module, Vec<Diagnostic>> {
        let graph_src = SourceFile::new(GRAPH_FILE, self.graph.clone());
        let graph = ekb_ir::l0::check::load(&graph_src)?;
        let passes = ekb_passes::Selection::parse(&self.passes).map_err(|d| vec![d])?;
        let knobs = if self.recipe.trim().is_empty() {
            None
        } else {
            let mut k = Knobs::for_target(target);
            k.parse(&SourceFile::new(RECIPE_FILE, self.recipe.clone())).map_err(|d| vec![d])?;
            Some(k)
        };
        let trace = if self.trace.trim().is_empty() {
            None
        } else {
            Some(TraceInput::parse(SourceFile::new(TRACE_FILE, self.trace.clone())).map_err(|d| vec![d])?)
        };
        let sources = Sources { graph: Some(&graph_src), module: None };
        if !self.rebind.is_empty() {
            return self.lower_rebound(&graph, sources, knobs, passes, trace, backend, target);
        }
        let options = CompileOptions {
            schedule: Schedule::Default,
            knobs,
            passes,
            until: Stage::Verify,
            ..trace_options(backend, trace)
        };
        driver::compile(Program::Graph(&graph), sources, target, &options)
            .map(|a| a.module)
            .map_err(|f| f.diagnostics)
    }

    /// The naive loop nests of the graph layer (through its passes): the CPU lowering with the
    /// naive schedule, what the kernels of [`Layers::rebind`] start from.
    pub fn naive(&self, target: &TargetProfile) -> Result<Module, Vec<Diagnostic>> {
        let graph_src = SourceFile::new(GRAPH_FILE, self.graph.clone());
        let graph = ekb_ir::l0::check::load(&graph_src)?;
        let passes = ekb_passes::Selection::parse(&self.passes).map_err(|d| vec![d])?;
        let options = CompileOptions { passes, until: Stage::Lower, ..trace_options(Backend::Cpu, None) };
        let sources = Sources { graph: Some(&graph_src), module: None };
        driver::compile(Program::Graph(&graph), sources, target, &options)
            .map(|a| a.module)
            .map_err(|f| f.diagnostics)
    }

    /// [`Layers::lower`] with kernels taken back from the GPU lowering: the GPU lowering with
    /// the knobs, each kernel of `rebind` replaced by its naive loop nest, the trace replayed,
    /// every such kernel then a launch, and the whole verified.
    #[allow(clippy::too_many_arguments)]
    fn lower_rebound(
        &self,
        graph: &ekb_ir::l0::Graph,
        sources: Sources<'_>,
        knobs: Option<Knobs>,
        passes: ekb_passes::Selection,
        trace: Option<TraceInput>,
        backend: Backend,
        target: &TargetProfile,
    ) -> Result<Module, Vec<Diagnostic>> {
        let rebind_error =
            |msg: String, hint: &str| vec![Diagnostic::error(msg).with_file(REBIND_FILE).with_hint(hint)];
        if backend == Backend::Cpu {
            return Err(rebind_error(
                format!(
                    "kernels are taken back from the GPU lowering ({}), but the backend is cpu",
                    self.rebind.join(", ")
                ),
                "the CPU lowering binds nothing: leave the file empty",
            ));
        }
        let options = CompileOptions {
            schedule: Schedule::Default,
            knobs,
            passes,
            until: Stage::Lower,
            ..trace_options(backend, None)
        };
        let mut module = driver::compile(Program::Graph(graph), sources, target, &options)
            .map(|a| a.module)
            .map_err(|f| f.diagnostics)?;
        let naive = self.naive(target)?;
        for name in &self.rebind {
            let from = naive.kernels.iter().find(|k| &k.name == name);
            match (from, module.kernels.iter_mut().find(|k| &k.name == name)) {
                (Some(n), Some(k)) if n.params == k.params => k.body = n.body.clone(),
                _ => {
                    let both: Vec<&str> = module
                        .kernels
                        .iter()
                        .filter(|k| naive.kernels.iter().any(|n| n.name == k.name && n.params == k.params))
                        .map(|k| k.name.as_str())
                        .collect();
                    return Err(rebind_error(
                        format!("kernel `{name}` is not a kernel of both the GPU lowering and the naive loop nests"),
                        &format!("name one of: {}", both.join(", ")),
                    ));
                }
            }
        }
        if let Some(t) = &trace {
            module = ekb_sched::apply(&module, &t.trace)
                .map_err(|d| vec![t.source.as_ref().map_or(d.clone(), |s| s.locate(d))])?;
        }
        let launched = |name: &String| {
            module
                .kernels
                .iter()
                .any(|k| &k.name == name && matches!(k.body.as_slice(), [ekb_ir::l1::Stmt::Launch { .. }]))
        };
        if let Some(name) = self.rebind.iter().find(|n| !launched(n)) {
            return Err(vec![Diagnostic::error(format!(
                "kernel `{name}` is taken back from the GPU lowering ({REBIND_FILE}) and the trace leaves it a loop nest"
            ))
            .with_file(TRACE_FILE)
            .with_hint(format!(
                "bind its outer loops in the trace, outermost first: `bind {name}.V blockIdx.x`, then a loop to `threadIdx.x`"
            ))]);
        }
        let verify = CompileOptions { until: Stage::Verify, ..trace_options(backend, None) };
        driver::compile(Program::Module { module: &module, graph }, sources, target, &verify)
            .map(|a| a.module)
            .map_err(|f| f.diagnostics)
    }

    /// True when only the graph differs from the defaults: the candidate is the graph itself.
    fn graph_only(&self) -> bool {
        self.passes == DEFAULT_PASSES
            && self.recipe.trim().is_empty()
            && self.trace.trim().is_empty()
            && self.rebind.is_empty()
            && self.kernels.is_empty()
    }

    /// The candidate of these layers for `backend` on `target` (see the module's comment), or
    /// why they do not make one (a trace step refused, a kernel source for a kernel the program
    /// does not have).
    pub fn materialize(
        &self,
        backend: Backend,
        target: &TargetProfile,
    ) -> Result<Materialized, Vec<Diagnostic>> {
        let module = self.lower(backend, target)?;
        let mut files = Vec::new();
        if self.graph_only() {
            files.push(CandidateFile::new("candidate.ekir", self.graph.clone()));
        } else if self.kernels.is_empty() {
            files.push(CandidateFile::new("candidate.ekir", ekb_ir::l1::print::print(&module)));
        } else {
            let missing: Vec<Diagnostic> = self
                .kernels
                .keys()
                .filter(|name| !module.kernels.iter().any(|k| &k.name == *name))
                .map(|name| {
                    Diagnostic::error(format!(
                        "kernel `{name}` has a source but the program has no such kernel"
                    ))
                    .with_expected(format!(
                        "one of: {}",
                        module.kernels.iter().map(|k| k.name.as_str()).collect::<Vec<_>>().join(", ")
                    ))
                })
                .collect();
            if !missing.is_empty() {
                return Err(missing);
            }
            files.push(CandidateFile::new(
                format!("candidate.l2/{MODULE_FILE}"),
                ekb_ir::l1::print::print(&module),
            ));
            for (name, k) in &self.kernels {
                files.push(CandidateFile::new(
                    format!("candidate.l2/{KERNELS_DIR}/{name}.{}", k.lang.extension()),
                    k.text.clone(),
                ));
            }
        }
        files.extend(self.layer_files());
        files.sort();
        Ok(Materialized { files, module })
    }

    /// The files of the layers that are not at their default.
    pub fn layer_files(&self) -> Vec<CandidateFile> {
        let mut files = vec![CandidateFile::new(GRAPH_FILE, self.graph.clone())];
        if self.passes != DEFAULT_PASSES {
            files.push(CandidateFile::new(PASSES_FILE, format!("{}\n", self.passes)));
        }
        if !self.recipe.trim().is_empty() {
            files.push(CandidateFile::new(RECIPE_FILE, self.recipe.clone()));
        }
        if !self.trace.trim().is_empty() {
            files.push(CandidateFile::new(TRACE_FILE, self.trace.clone()));
        }
        if !self.rebind.is_empty() {
            files.push(CandidateFile::new(
                REBIND_FILE,
                self.rebind.iter().map(|k| format!("{k}\n")).collect::<String>(),
            ));
        }
        for (name, k) in &self.kernels {
            files.push(CandidateFile::new(
                format!("{LAYERS_DIR}/{KERNELS_DIR}/{name}.{}", k.lang.extension()),
                k.text.clone(),
            ));
        }
        files
    }

    /// These layers after an edit of an earlier level changed the program: the later layers
    /// replayed where they still apply. The trace is dropped when it no longer replays on the
    /// new program (with the kernels it took back from the GPU lowering, which it bound), and a
    /// kernel source when its kernel is gone or the trace was dropped (its loop program changed
    /// under it). Returns the layers and a line per dropped part.
    pub fn carry(mut self, backend: Backend, target: &TargetProfile) -> (Layers, Vec<String>) {
        let mut notes = Vec::new();
        if !self.trace.trim().is_empty() || !self.rebind.is_empty() {
            if let Err(ds) = self.lower(backend, target) {
                let why = ds.first().map_or_else(String::new, |d| d.message.clone());
                notes.push(format!("the schedule trace no longer applies ({why}); dropped"));
                self.trace.clear();
                self.rebind.clear();
                if !self.kernels.is_empty() {
                    notes.push(
                        "the kernel sources were written for the dropped trace's program; dropped".into(),
                    );
                    self.kernels.clear();
                }
            }
        }
        if !self.kernels.is_empty() {
            match self.lower(backend, target) {
                Ok(m) => self.kernels.retain(|name, _| {
                    let keep = m.kernels.iter().any(|k| &k.name == name);
                    if !keep {
                        notes.push(format!("kernel `{name}` is gone from the program; its source dropped"));
                    }
                    keep
                }),
                Err(_) => {
                    notes.push("the program does not lower; the kernel sources dropped".into());
                    self.kernels.clear();
                }
            }
        }
        (self, notes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(name: &str) -> Task {
        let file =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../../tasks/level1/{name}.ekir"));
        ekb_eval::tasks::load_task(&file).expect("the task loads")
    }

    #[test]
    fn a_task_alone_is_its_graph_and_a_recipe_makes_an_l1_candidate() {
        let t = task("gemv_mobilenetv2_classifier");
        let host = TargetProfile::load("host").unwrap();
        let root = Layers::of_task(&t).materialize(Backend::Cpu, &host).unwrap();
        let names: Vec<&str> = root.files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(names, ["candidate.ekir", "layers/graph.ekir"]);
        assert!(root.files[0].text.starts_with(&t.source.text[..20]));
        let read = Layers::from_files(&root.files, &t.source.text);
        assert_eq!(read, Layers::of_task(&t));

        let tuned = Layers { recipe: "set threads.per_core = 1\n".into(), ..Layers::of_task(&t) };
        let m = tuned.materialize(Backend::Cpu, &host).unwrap();
        let cand = &m.files.iter().find(|f| f.path == "candidate.ekir").unwrap().text;
        assert!(cand.starts_with("module "), "{cand}");
        assert_eq!(Layers::from_files(&m.files, &t.source.text), tuned);
        // Deterministic: the same layers, the same files.
        assert_eq!(tuned.materialize(Backend::Cpu, &host).unwrap().files, m.files);
    }

    #[test]
    fn a_trace_that_does_not_apply_is_refused_and_dropped_when_carried() {
        let t = task("gemv_mobilenetv2_classifier");
        let host = TargetProfile::load("host").unwrap();
        let bad = Layers { trace: "unroll nosuch.i\n".into(), ..Layers::of_task(&t) };
        let ds = bad.materialize(Backend::Cpu, &host).unwrap_err();
        assert!(ds.iter().any(|d| d.to_string().contains("nosuch")), "{ds:?}");
        let (carried, notes) = bad.carry(Backend::Cpu, &host);
        assert!(carried.trace.is_empty());
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(carried.materialize(Backend::Cpu, &host).is_ok());
    }

    #[test]
    fn a_kernel_taken_back_from_the_gpu_lowering_is_bound_by_the_trace() {
        let t = task("relu_resnet18_stem");
        let pocl = TargetProfile::load("pocl").unwrap();
        let unbound = Layers { rebind: vec!["k0_relu".into()], ..Layers::of_task(&t) };
        let ds = unbound.lower(Backend::Opencl, &pocl).unwrap_err();
        assert!(ds[0].to_string().contains("the trace leaves it a loop nest"), "{ds:?}");
        let bound = Layers {
            trace: "bind k0_relu.i1 blockIdx.x\nbind k0_relu.i2 threadIdx.x\n".into(),
            ..unbound.clone()
        };
        let m = bound.materialize(Backend::Opencl, &pocl).unwrap();
        let launch = &m.module.kernels[0].body;
        assert!(
            matches!(launch.as_slice(), [ekb_ir::l1::Stmt::Launch { grid, block, .. }]
                if grid[0].extent == 64 && block[0].extent == 112),
            "{launch:?}"
        );
        assert!(m.files.iter().any(|f| f.path == REBIND_FILE && f.text == "k0_relu\n"));
        assert_eq!(Layers::from_files(&m.files, &t.source.text), bound);
        let wrong = Layers { rebind: vec!["nosuch".into()], ..bound.clone() };
        let ds = wrong.lower(Backend::Opencl, &pocl).unwrap_err();
        assert!(ds[0].to_string().contains("name one of: k0_relu"), "{ds:?}");
        assert!(bound.lower(Backend::Cpu, &TargetProfile::load("host").unwrap()).is_err());
        // A trace that no longer binds the kernel is dropped with it.
        let (carried, notes) = unbound.carry(Backend::Opencl, &pocl);
        assert!(carried.rebind.is_empty() && carried.trace.is_empty() && notes.len() == 1, "{notes:?}");
    }
}
