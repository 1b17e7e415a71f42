//! From a candidate to a payload, with every failure on the way classified: the first step of
//! the evaluation protocol ("compiles").
//!
//! - An L0 candidate must declare exactly the task's signature (inputs, parameters with their
//!   initialisers, outputs); it is lowered with the default schedule of its backend (the CPU's,
//!   or the GPU lowering's for `cuda` and `opencl`). An L1 candidate is verified against the
//!   target and bound to the task's graph by buffer names and types; its kernels must be of its
//!   backend (GPU kernels, each one `launch`, for a GPU instance; loop kernels for the CPU).
//! - An L2 candidate (`docs/l2.md`) is an L1 module checked as above, some of whose kernels are
//!   given as backend source; a native answer is an L2 candidate whose plan is one kernel over
//!   all of the task's buffers (`ekb_deploy::l2::native`). A source that does not compile is
//!   `compile`, with the compiler's messages naming the candidate's file and line (a GPU's
//!   compiler runs in the runtime's loader, whose build log comes back the same way).
//! - Either way the payload's expected outputs come from the TASK's graph, never from the
//!   candidate, so a candidate cannot define its own reference.
//!
//! Either way the candidate goes once through the compile driver (`ekb_deploy::driver`), and
//! the stage that stopped it gives the class: text that does not parse, check or verify, or that
//! does not implement the task's interface, is `syntax_api`; an allocation over a limit of the
//! target or an index the verifier proves out of bounds is `memory`; a failure to lower, emit or
//! compile is `compile`.

use super::candidate::Found;
use super::passes;
use crate::results::{FailureClass, FailureRecord, PassesRecord};
use crate::tasks::{Backend, Task};
use ekb_deploy::build::{self, build_for};
use ekb_deploy::driver::{self, BackendChoice, CompileOptions, Failure, Program, Sources, Stage, TraceInput};
use ekb_deploy::{l2, BuildOptions, Built};
use ekb_ir::l0::{self, Graph};
use ekb_ir::l1::{self, Module};
use ekb_ir::{Diagnostic, SourceFile, TargetProfile};
use ekb_lower::Schedule;

/// A candidate built into a payload.
#[derive(Debug)]
pub struct Compiled {
    pub built: Built,
    /// `l0`, `l1`, `trace`, `l2` or `native`.
    pub kind: &'static str,
    /// What the graph passes did to it (`None` for an L1 module, or a graph that does not
    /// compile without the passes).
    pub passes: Option<PassesRecord>,
}

fn failure(class: FailureClass, detail: &str, diags: &[Diagnostic]) -> FailureRecord {
    let evidence = diags.iter().map(|d| d.to_string()).collect::<Vec<_>>().join("\n");
    FailureRecord { class, detail: detail.into(), evidence }
}

/// The processor of `target` that `backend`'s payloads are built for.
fn choice(backend: Backend) -> BackendChoice {
    match backend {
        Backend::Cpu => BackendChoice::Cpu,
        Backend::Cuda | Backend::Opencl => BackendChoice::Gpu,
    }
}

/// Builds the baseline of a task on `backend`: its own graph with `schedule` (the CPU's, or
/// the GPU lowering's).
pub fn build_baseline(
    task: &Task,
    schedule: Schedule,
    backend: Backend,
    target: &TargetProfile,
    options: &BuildOptions,
) -> Result<Built, Vec<Diagnostic>> {
    let options = BuildOptions { schedule, ..options.clone() };
    let sources = Sources { graph: Some(&task.source), module: None };
    build_for(Program::Graph(&task.graph), sources, target, &options, choice(backend))
}

/// What the graph passes did to a task's own graph built with `schedule` on `backend` (as
/// [`build_baseline`] builds it) into `built`.
pub fn baseline_passes(
    task: &Task,
    schedule: Schedule,
    backend: Backend,
    target: &TargetProfile,
    built: &Built,
) -> Option<PassesRecord> {
    let options = CompileOptions { schedule, backend: choice(backend), ..CompileOptions::default() };
    let sources = Sources { graph: Some(&task.source), module: None };
    passes::record(Program::Graph(&task.graph), sources, target, &options, &built.module)
}

/// Builds one candidate of `task` on `backend`, or says why it does not compile.
pub fn build_candidate(
    task: &Task,
    found: &Found,
    backend: Backend,
    target: &TargetProfile,
    options: &BuildOptions,
) -> Result<Compiled, (Option<&'static str>, FailureRecord)> {
    let (text, origin) = match found {
        Found::Text { text, origin } => (text, origin),
        Found::L2 { dir, origin, .. } => return build_l2_folder(task, dir, origin, backend, target, options),
        Found::Missing { reason, .. } => {
            return Err((
                None,
                FailureRecord {
                    class: FailureClass::NoCandidate,
                    detail: "no candidate".into(),
                    evidence: reason.clone(),
                },
            ))
        }
    };
    let src = SourceFile::new(origin.clone(), text.clone());
    if origin.ends_with(".trace") {
        return build_trace(task, src, backend, target, options);
    }
    let native = origin.rsplit_once('.').and_then(|(_, ext)| l2::KernelLang::from_extension(ext));
    if let Some(lang) = native {
        return build_native(task, src, lang, backend, target, options);
    }
    match ekb_ir::level_of(&src) {
        Ok("l0") => {
            let kind = Some("l0");
            let graph = l0::check::load(&src)
                .map_err(|ds| (kind, failure(FailureClass::SyntaxApi, "syntax/API: L0", &ds)))?;
            let mismatches = signature_mismatches(&task.graph, &graph);
            if !mismatches.is_empty() {
                let d = mismatches.into_iter().fold(
                    Diagnostic::error(format!(
                        "the candidate does not declare the signature of task `{}`",
                        task.name
                    )),
                    |d, m| d.with_note(m),
                );
                return Err((
                    kind,
                    failure(FailureClass::SyntaxApi, "syntax/API: signature", &[src.locate(d)]),
                ));
            }
            // Compiled as itself (its signature is the task's), packed for the task.
            let options_compile = CompileOptions { backend: choice(backend), ..CompileOptions::default() };
            let sources = Sources { graph: Some(&src), module: None };
            let artifact = driver::compile(Program::Graph(&graph), sources, target, &options_compile)
                .map_err(|f| (kind, compile_failure(f)))?;
            let passes =
                passes::record(Program::Graph(&graph), sources, target, &options_compile, &artifact.module);
            let sources = Sources { graph: Some(&task.source), module: Some(&src) };
            build::package(artifact, &task.graph, sources, target, options)
                .map(|built| Compiled { built, kind: "l0", passes })
                .map_err(|ds| (kind, late_failure(&ds)))
        }
        Ok(_) => {
            let kind = Some("l1");
            let module = l1::parse::parse(&src)
                .map_err(|d| (kind, failure(FailureClass::SyntaxApi, "syntax/API: L1", &[d])))?;
            let sources = Sources { graph: Some(&task.source), module: Some(&src) };
            build_module(task, &module, sources, &[], backend, target, options)
                .map(|built| Compiled { built, kind: "l1", passes: None })
                .map_err(|f| (kind, f))
        }
        Err(d) => Err((None, failure(FailureClass::SyntaxApi, "syntax/API: not IR", &[d]))),
    }
}

/// How a schedule trace candidate on `backend` is compiled: the graph through the default graph
/// passes, lowered with the naive schedule of the backend (the CPU's loop nests, or the GPU
/// lowering's `launch` kernels), then `trace` replayed on the loop program.
pub fn trace_options(backend: Backend, trace: Option<TraceInput>) -> CompileOptions {
    CompileOptions { schedule: Schedule::Naive, backend: choice(backend), trace, ..CompileOptions::default() }
}

/// The loop program a schedule trace for `graph` on `backend` is replayed on: what
/// [`trace_options`] compiles, stopped after the lowering (a prompt shows it, so that a trace
/// names the loops and buffers the evaluator will find). The diagnostics of a graph that does
/// not lower are located in `source`.
pub fn trace_start(
    graph: &Graph,
    source: &SourceFile,
    backend: Backend,
    target: &TargetProfile,
) -> Result<Module, Vec<Diagnostic>> {
    let options = CompileOptions { until: Stage::Lower, ..trace_options(backend, None) };
    let sources = Sources { graph: Some(source), module: None };
    driver::compile(Program::Graph(graph), sources, target, &options)
        .map(|artifact| artifact.module)
        .map_err(|f| f.diagnostics)
}

/// A schedule trace candidate: the task's graph lowered with the naive schedule of `backend`,
/// the trace replayed on it (a step that does not parse or is refused is `syntax_api`, its
/// evidence naming the step, its line and the reason), then compiled and packed as any module.
fn build_trace(
    task: &Task,
    src: SourceFile,
    backend: Backend,
    target: &TargetProfile,
    options: &BuildOptions,
) -> Result<Compiled, (Option<&'static str>, FailureRecord)> {
    let kind = Some("trace");
    let input = TraceInput::parse(src)
        .map_err(|d| (kind, failure(FailureClass::SyntaxApi, "syntax/API: schedule trace", &[d])))?;
    let options_compile = trace_options(backend, Some(input));
    let sources = Sources { graph: Some(&task.source), module: None };
    let artifact = driver::compile(Program::Graph(&task.graph), sources, target, &options_compile)
        .map_err(|f| (kind, compile_failure(f)))?;
    let passes =
        passes::record(Program::Graph(&task.graph), sources, target, &options_compile, &artifact.module);
    build::package(artifact, &task.graph, sources, target, options)
        .map(|built| Compiled { built, kind: "trace", passes })
        .map_err(|ds| (kind, late_failure(&ds)))
}

/// An L2 folder: its module and kernel sources read (a folder that cannot be read as L2 is
/// `syntax_api`), then built as [`build_l2`].
fn build_l2_folder(
    task: &Task,
    dir: &std::path::Path,
    origin: &str,
    backend: Backend,
    target: &TargetProfile,
    options: &BuildOptions,
) -> Result<Compiled, (Option<&'static str>, FailureRecord)> {
    let kind = Some("l2");
    let candidate = l2::read(dir, origin)
        .map_err(|ds| (kind, failure(FailureClass::SyntaxApi, "syntax/API: L2 folder", &ds)))?;
    build_l2(task, &candidate, backend, target, options)
        .map(|built| Compiled { built, kind: "l2", passes: None })
        .map_err(|f| (kind, f))
}

/// A native answer in `lang`: it must be in a language of `backend`, and a GPU answer must
/// state its launch geometry (`syntax_api` otherwise); then built as [`build_l2`].
fn build_native(
    task: &Task,
    answer: SourceFile,
    lang: l2::KernelLang,
    backend: Backend,
    target: &TargetProfile,
    options: &BuildOptions,
) -> Result<Compiled, (Option<&'static str>, FailureRecord)> {
    let kind = Some("native");
    let wrong = l2::check_languages(
        &[l2::KernelSource { kernel: task.name.clone(), lang, source: answer.clone() }],
        payload_backend(backend),
    );
    if !wrong.is_empty() {
        return Err((kind, failure(FailureClass::SyntaxApi, "syntax/API: wrong backend", &wrong)));
    }
    let candidate = l2::native::candidate(&task.graph, answer, lang)
        .map_err(|d| (kind, failure(FailureClass::SyntaxApi, "syntax/API: native launch line", &[d])))?;
    build_l2(task, &candidate, backend, target, options)
        .map(|built| Compiled { built, kind: "native", passes: None })
        .map_err(|f| (kind, f))
}

/// An L2 candidate: its module checked and compiled as any L1 candidate's, its kernel sources
/// in the backend's language (else `syntax_api`) used instead of the emitted ones.
fn build_l2(
    task: &Task,
    candidate: &l2::L2,
    backend: Backend,
    target: &TargetProfile,
    options: &BuildOptions,
) -> Result<Built, FailureRecord> {
    let wrong = l2::check_languages(&candidate.kernels, payload_backend(backend));
    if !wrong.is_empty() {
        return Err(failure(FailureClass::SyntaxApi, "syntax/API: wrong backend", &wrong));
    }
    let sources = Sources { graph: Some(&task.source), module: Some(&candidate.module_source) };
    build_module(task, &candidate.module, sources, &candidate.kernels, backend, target, options)
}

/// The payload backend of an instance's backend.
pub fn payload_backend(backend: Backend) -> ekb_wire::payload::Backend {
    match backend {
        Backend::Cpu => ekb_wire::payload::Backend::CpuLlvm,
        Backend::Cuda => ekb_wire::payload::Backend::Cuda,
        Backend::Opencl => ekb_wire::payload::Backend::OpenCl,
    }
}

/// Compiles `module` as an implementation of the task on `backend` (its kernels must be of the
/// backend), the kernels of `kernel_sources` from that source (L2), and packs it into a payload.
fn build_module(
    task: &Task,
    module: &Module,
    sources: Sources<'_>,
    kernel_sources: &[l2::KernelSource],
    backend: Backend,
    target: &TargetProfile,
    options: &BuildOptions,
) -> Result<Built, FailureRecord> {
    let gpu = backend != Backend::Cpu;
    if let Some(k) = module.kernels.iter().find(|k| k.has_launch() != gpu) {
        let what = if gpu { "has no `launch`: it is a CPU kernel" } else { "is a GPU kernel (a `launch`)" };
        let d = Diagnostic::error(format!(
            "kernel `{}` {what}, and this instance runs on the {} backend",
            k.name,
            backend.name()
        ))
        .at(k.span)
        .with_hint(if gpu {
            "a GPU candidate's kernels are each one `launch grid(...) block(...) { ... }`"
        } else {
            "a CPU candidate's kernels are loop nests; `launch` is for the cuda and opencl backends"
        });
        let d = sources.module.map_or(d.clone(), |s| s.locate(d));
        return Err(failure(FailureClass::SyntaxApi, "syntax/API: wrong backend", &[d]));
    }
    let options_compile = CompileOptions {
        backend: choice(backend),
        kernel_sources: kernel_sources.to_vec(),
        ..CompileOptions::default()
    };
    let program = Program::Module { module, graph: &task.graph };
    let artifact = driver::compile(program, sources, target, &options_compile).map_err(compile_failure)?;
    build::package(artifact, &task.graph, sources, target, options).map_err(|ds| late_failure(&ds))
}

/// The class of a candidate the driver stopped: a lowering failure is `compile`, a verifier
/// failure [`verifier_class`] (its errors as the evidence), a later one [`late_failure`].
fn compile_failure(f: Failure) -> FailureRecord {
    match f.stage {
        Stage::GraphPasses | Stage::Lower => {
            failure(FailureClass::Compile, "compile: lowering", &f.diagnostics)
        }
        Stage::Schedule => failure(FailureClass::SyntaxApi, "syntax/API: schedule trace", &f.diagnostics),
        Stage::Verify => {
            let errors: Vec<Diagnostic> = f.diagnostics.into_iter().filter(Diagnostic::is_error).collect();
            let (class, detail) = verifier_class(&errors);
            failure(class, detail, &errors)
        }
        Stage::Bind | Stage::Adapter | Stage::Toolchain => late_failure(&f.diagnostics),
    }
}

/// The class of a verified module that did not become a payload: its interface to the task's
/// graph (buffer names and types), or the code generator and toolchain.
fn late_failure(ds: &[Diagnostic]) -> FailureRecord {
    if ds.iter().any(|d| d.message.contains("graph")) {
        failure(FailureClass::SyntaxApi, "syntax/API: interface", ds)
    } else {
        failure(FailureClass::Compile, "compile: toolchain", ds)
    }
}

/// The class of a module the verifier rejected: legality and proven out-of-bounds findings are
/// memory failures, anything else is a syntax/API failure.
fn verifier_class(errors: &[Diagnostic]) -> (FailureClass, &'static str) {
    if errors.iter().any(|d| d.message.contains("over the limit")) {
        (FailureClass::Memory, "memory: illegal allocation")
    } else if errors.iter().any(|d| d.message.contains(" ranges over [")) {
        (FailureClass::Memory, "memory: out of bounds")
    } else {
        (FailureClass::SyntaxApi, "syntax/API: L1 verifier")
    }
}

/// How `cand` differs from `task` in what a caller sees: the name, inputs, parameters (with
/// their initialisers) and outputs, in order.
pub fn signature_mismatches(task: &Graph, cand: &Graph) -> Vec<String> {
    let mut out = Vec::new();
    if cand.name != task.name {
        out.push(format!("the graph is named `{}`, the task `{}`", cand.name, task.name));
    }
    let decls = |what: &str, a: &[l0::TensorDecl], b: &[l0::TensorDecl], out: &mut Vec<String>| {
        let show = |d: &[l0::TensorDecl]| {
            d.iter().map(|t| format!("{}: {}", t.name, t.ty)).collect::<Vec<_>>().join(", ")
        };
        if a.len() != b.len() || a.iter().zip(b).any(|(x, y)| x.name != y.name || x.ty != y.ty) {
            out.push(format!("{what}: the task has ({}), the candidate ({})", show(a), show(b)));
            return;
        }
        for (x, y) in a.iter().zip(b) {
            if x.init != y.init || x.data != y.data {
                out.push(format!("{what} `{}` is initialised differently from the task's", x.name));
            }
        }
    };
    decls("inputs", &task.inputs, &cand.inputs, &mut out);
    decls("parameters", &task.params, &cand.params, &mut out);
    let outs = |g: &Graph| g.outputs.iter().map(|o| format!("{}: {}", o.name, o.ty)).collect::<Vec<_>>();
    if outs(task) != outs(cand) {
        out.push(format!(
            "outputs: the task has ({}), the candidate ({})",
            outs(task).join(", "),
            outs(cand).join(", ")
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const GRAPH: &str = "\
graph g(a: f32[4,8], b: f32[8]) -> (y: f32[4,8]) {
  %0 = add(a, b)
  %1 = relu(%0)
  return %1
}
";

    /// The module a prompt shows is the one the evaluator replays a trace on: the trace applied
    /// to [`trace_start`] gives what the compile of a trace candidate schedules, on each backend.
    #[test]
    fn a_trace_replayed_on_its_start_is_what_the_candidate_compiles_to() {
        let src = SourceFile::new("g.ekir", GRAPH);
        let graph = l0::check::load(&src).unwrap();
        // On a GPU the naive kernels are `launch`es without loops: `unroll` finds no loop `tx`.
        let cases = [
            (Backend::Cpu, "host", "compute_inline t0\nvectorize k1_relu.i1\nparallel i0\n", true),
            (Backend::Opencl, "pocl", "unroll k0_add.tx\n", false),
        ];
        for (backend, target, text, legal) in cases {
            let target = TargetProfile::load(target).unwrap();
            let start = trace_start(&graph, &src, backend, &target).unwrap();
            assert_eq!(start.kernels.len(), 2, "one naive kernel per node");
            assert!(start.kernels.iter().all(|k| k.has_launch() == (backend != Backend::Cpu)));
            let input = TraceInput::parse(SourceFile::new("g.trace", text)).unwrap();
            let expected = ekb_sched::apply(&start, &input.trace);
            let options = CompileOptions { until: Stage::Schedule, ..trace_options(backend, Some(input)) };
            let sources = Sources { graph: Some(&src), module: None };
            let compiled = driver::compile(Program::Graph(&graph), sources, &target, &options);
            assert_eq!(expected.is_ok(), legal, "{text}");
            match (expected, compiled) {
                (Ok(m), Ok(a)) => assert_eq!(l1::print::print(&m), l1::print::print(&a.module)),
                (Err(d), Err(f)) => {
                    assert_eq!(f.stage, Stage::Schedule);
                    assert_eq!(f.diagnostics[0].message, d.message);
                }
                (e, c) => panic!("{:?} vs {:?}", e.map(|_| ()), c.map(|_| ()).map_err(|f| f.diagnostics)),
            }
        }
    }
}
