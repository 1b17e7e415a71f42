//! The compile driver: the one place that lists, in order, the stages that turn a program into
//! code for a target ([`compile`]), and the calls a search loop makes around it: [`compile`] a
//! program, pack the [`Artifact`] into a payload (`crate::build::package`), [`measure`] the
//! payload on a device (or [`load_host`] it into this process).
//!
//! The stages ([`Stage`]), in order:
//! 1. **graph passes**: L0 -> L0 rewrites (`ekb_passes`; [`CompileOptions::passes`] says which);
//! 2. **lower**: L0 -> L1 with a schedule, with the CPU lowering (`ekb_lower::lower`) or the GPU
//!    lowering (`ekb_lower::lower_gpu`) by backend ([`backend_for`]);
//! 3. **schedule**: a schedule trace ([`CompileOptions::trace`], `ekb_sched`) replayed on the
//!    loop program, when one is given: L1 -> L1 rewrites, each checked for legality;
//! 4. **verify**: the loop program against the target (`ekb_ir::l1::verify`);
//! 5. **bind**: the module's buffers tied to the task's graph by name and type;
//! 6. **adapter**: LLVM IR text (`ekb_llvm::emit`), or OpenCL C / CUDA C (`ekb_gpu_c::emit`);
//!    kernels given as source ([`CompileOptions::kernel_sources`], L2: `crate::l2`) are not
//!    emitted, their source is used instead;
//! 7. **toolchain**: clang-19 -> ELF object for the target's triple (CPU code only: a GPU's
//!    driver compiles its source on the device); hand-written CPU kernels are compiled one by
//!    one and linked with the emitted ones into one object, checked like any other.
//!
//! What it must keep true:
//! - Every caller that turns IR into code goes through [`compile`] (`ekb lower`; `ekb build`,
//!   `run` and `pack` through `crate::build`; the evaluator and `ekb bench`; the suite's naive
//!   check), so a stage added here is added for all of them.
//! - Nothing after a failed stage runs (a verifier error never reaches an adapter), and the
//!   failure names its stage.
//! - Diagnostics are located in [`Sources`]: graph problems in the graph's file, loop-program
//!   problems in the module's.
//! - A dump ([`Dump`]) shows each stage's output as the next stage receives it, and the graph
//!   after each graph pass that changed it.

use crate::command::System;
use crate::transport::{self, Mode, RunOutcome, RunSettings, Transport};
use ekb_gpu_c::Dialect;
use ekb_ir::l0::{self, Graph};
use ekb_ir::l1::gpu::LaunchShape;
use ekb_ir::l1::{self, Module};
use ekb_ir::target::GpuApi;
use ekb_ir::{Diagnostic, SourceFile, TargetProfile};
use ekb_llvm::{CompileLog, HostModule};
use ekb_lower::{Knobs, Schedule};
use ekb_passes::manager::PassDump;
use ekb_wire::payload::{Backend, BufferDecl, Payload};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// What to compile.
#[derive(Debug, Clone, Copy)]
pub enum Program<'a> {
    /// An L0 graph, which is also its own task: lowered with [`CompileOptions::schedule`].
    Graph(&'a Graph),
    /// An L1 module and the L0 graph whose task it implements (inputs, initialisers, reference).
    Module { module: &'a Module, graph: &'a Graph },
    /// An L1 module on its own (`ekb lower` of an L1 file): compiled without the bind stage; a
    /// payload needs the graph of its task ([`Program::Module`]).
    Unbound(&'a Module),
}

impl Program<'_> {
    /// The task: the graph that defines inputs and reference outputs; `None` for an unbound
    /// module.
    pub fn graph(&self) -> Option<&Graph> {
        match self {
            Program::Graph(g) | Program::Module { graph: g, .. } => Some(g),
            Program::Unbound(_) => None,
        }
    }
}

/// The source files the program came from, so diagnostics point into the right one (graph
/// problems into the graph's file, loop-program problems into the module's).
#[derive(Debug, Clone, Copy, Default)]
pub struct Sources<'a> {
    pub graph: Option<&'a SourceFile>,
    pub module: Option<&'a SourceFile>,
}

impl Sources<'_> {
    pub(crate) fn graph(&self, d: Diagnostic) -> Diagnostic {
        match self.graph {
            Some(s) => s.locate(d),
            None => d,
        }
    }

    /// Loop-program diagnostics: a lowered module has no file of its own, so they point at the
    /// graph's file (without a line: generated code carries no spans).
    pub(crate) fn module(&self, d: Diagnostic) -> Diagnostic {
        match self.module.or(self.graph) {
            Some(s) => s.locate(d),
            None => d,
        }
    }

    /// The directory of the graph's file, when the graph came from a file on disk: where the
    /// data files of its parameters are.
    pub(crate) fn graph_dir(&self) -> Option<&Path> {
        let path = Path::new(&self.graph?.name);
        path.is_file().then(|| path.parent().unwrap_or(Path::new("")))
    }
}

/// Which of a target's processors a program is built for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BackendChoice {
    /// An L1 module by its kernels (GPU launches or CPU loops); an L0 graph for the GPU of a
    /// profile whose CPU is the machine's own (`cpu = "native"`: a workstation or server around
    /// its GPU, as `pocl` and `h200`), else for the CPU (boards such as `rk3588` and
    /// `jetson-orin`, whose GPU is asked for with [`BackendChoice::Gpu`]).
    #[default]
    Auto,
    Cpu,
    Gpu,
}

impl BackendChoice {
    /// `auto`, `cpu` or `gpu`.
    pub fn from_name(name: &str) -> Result<BackendChoice, Diagnostic> {
        match name {
            "auto" => Ok(BackendChoice::Auto),
            "cpu" => Ok(BackendChoice::Cpu),
            "gpu" => Ok(BackendChoice::Gpu),
            other => Err(Diagnostic::error(format!("unknown backend `{other}`"))
                .with_expected("`auto`, `cpu` or `gpu`")),
        }
    }
}

/// The backend `program` is built with for `target`: `cpu-llvm`, or the GPU's `opencl` or
/// `cuda`; an error when the GPU is asked for and the target has none.
pub fn backend_for(
    program: Program<'_>,
    target: &TargetProfile,
    choice: BackendChoice,
) -> Result<Backend, Diagnostic> {
    let gpu = match choice {
        BackendChoice::Cpu => false,
        BackendChoice::Gpu => true,
        BackendChoice::Auto => match program {
            Program::Module { module, .. } | Program::Unbound(module) => {
                module.kernels.iter().any(|k| LaunchShape::of(k).is_some())
            }
            Program::Graph(_) => target.gpu.is_some() && target.cpu.cpu == "native",
        },
    };
    if !gpu {
        return Ok(Backend::CpuLlvm);
    }
    match target.gpu.as_ref().map(|g| g.api) {
        Some(GpuApi::Opencl) => Ok(Backend::OpenCl),
        Some(GpuApi::Cuda) => Ok(Backend::Cuda),
        None => Err(Diagnostic::error(format!("target `{}` has no GPU to build for", target.name))
            .with_hint(
                "choose a target with a GPU (`pocl`, `rk3588`, `jetson-orin`, `h200`), or build for the CPU",
            )),
    }
}

/// One stage of [`compile`], in pipeline order (`Ord` is that order).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Stage {
    /// L0 -> L0: the selected graph passes ([`CompileOptions::passes`]; L0 input only).
    GraphPasses,
    /// L0 -> L1: the CPU or GPU lowering of the schedule (L0 input only).
    Lower,
    /// L1 -> L1: the schedule trace, replayed step by step (only when one is given).
    Schedule,
    /// The loop program against the target: types, bounds, memory and GPU limits.
    Verify,
    /// The module's buffers tied to the task's graph by name and type (not for an unbound
    /// module).
    Bind,
    /// L1 -> LLVM IR text, or the kernels' OpenCL C / CUDA C.
    Adapter,
    /// LLVM IR -> ELF object with clang-19 (CPU code only).
    Toolchain,
}

impl Stage {
    pub const ALL: [Stage; 7] = [
        Stage::GraphPasses,
        Stage::Lower,
        Stage::Schedule,
        Stage::Verify,
        Stage::Bind,
        Stage::Adapter,
        Stage::Toolchain,
    ];

    /// `graph-passes`, `lower`, `schedule`, `verify`, `bind`, `adapter`, `toolchain`.
    pub fn name(self) -> &'static str {
        match self {
            Stage::GraphPasses => "graph-passes",
            Stage::Lower => "lower",
            Stage::Schedule => "schedule",
            Stage::Verify => "verify",
            Stage::Bind => "bind",
            Stage::Adapter => "adapter",
            Stage::Toolchain => "toolchain",
        }
    }
}

impl std::fmt::Display for Stage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Where [`compile`] shows each stage's output.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Dump {
    #[default]
    None,
    /// On stderr, each after a header line `== STAGE: WHAT ==`.
    Stderr,
    /// As files in this directory (created if missing), one per stage that ran, named by the
    /// stage's number and name: `1-graph-passes.ekir`, `2-lower.l1.ekir`, `3-schedule.l1.ekir`
    /// (with a trace), `4-verify.txt`, `5-bind.txt`, `6-adapter.ll` (`.cl`, `.cu`),
    /// `7-toolchain.o`; the graph after each graph pass that changed it as
    /// `1-graph-passes.K-PASS.ekir` (K counting the pass runs from 1). Stage files of an earlier
    /// run are removed first, so the directory shows this run only.
    Dir(PathBuf),
}

/// A schedule trace to replay on the loop program, and the text it was read from (where its
/// diagnostics point; `None` for a trace made in code, such as a tuner's).
#[derive(Debug, Clone)]
pub struct TraceInput {
    pub trace: ekb_sched::Trace,
    pub source: Option<SourceFile>,
}

impl TraceInput {
    /// Reads a trace from its text.
    pub fn parse(source: SourceFile) -> Result<TraceInput, Diagnostic> {
        Ok(TraceInput { trace: ekb_sched::parse(&source)?, source: Some(source) })
    }
}

/// How to compile.
#[derive(Debug, Clone)]
pub struct CompileOptions {
    /// How an L0 graph is lowered (ignored for an L1 module).
    pub schedule: Schedule,
    /// The default schedule's knobs (`None`: the target's recipe, `Knobs::for_target`).
    pub knobs: Option<Knobs>,
    /// A schedule trace replayed on the loop program after the lowering (or on an L1 module as
    /// given).
    pub trace: Option<TraceInput>,
    pub backend: BackendChoice,
    /// The last stage to run ([`Stage::Toolchain`]: all). An artifact always holds a loop
    /// program, so the lowering of an L0 graph always runs.
    pub until: Stage,
    pub dump: Dump,
    /// The graph passes run on an L0 graph before the lowering (`ekb_passes`). Each keeps the
    /// graph's signature (inputs, parameters with their initialisers, outputs): the bind stage
    /// and the payload's reference read the task's graph as it was written.
    pub passes: ekb_passes::Selection,
    /// Print every graph pass run (its name, round, and the graph when it changed it) on
    /// stderr; a dump directory holds the graph after each pass that changed it instead.
    pub dump_passes: bool,
    /// L2: kernels of the module given as backend source, used instead of what the adapter
    /// would emit from their L1 body (`docs/l2.md`).
    pub kernel_sources: Vec<crate::l2::KernelSource>,
}

impl Default for CompileOptions {
    fn default() -> CompileOptions {
        CompileOptions {
            schedule: Schedule::Default,
            knobs: None,
            trace: None,
            backend: BackendChoice::Auto,
            until: Stage::Toolchain,
            dump: Dump::None,
            passes: ekb_passes::Selection::Default,
            dump_passes: false,
            kernel_sources: Vec::new(),
        }
    }
}

/// A program compiled for a target (up to [`CompileOptions::until`]), not yet packed into a
/// payload.
#[derive(Debug, Clone)]
pub struct Artifact {
    /// The loop program, as the stages after the lowering saw it.
    pub module: Module,
    /// What the code is for.
    pub backend: Backend,
    /// The schedule an L0 graph was lowered with; `None` for an L1 module.
    pub schedule: Option<Schedule>,
    /// The verifier's warnings (located).
    pub warnings: Vec<Diagnostic>,
    /// What the adapter wrote: LLVM IR text (`cpu-llvm`) or the kernels' OpenCL C / CUDA C;
    /// `None` when the driver stopped before the adapter.
    pub source: Option<String>,
    /// The code a payload carries; `None` when the driver stopped before it was made.
    pub code: Option<Code>,
    /// How long each stage that ran took, in order.
    pub times: Vec<(Stage, Duration)>,
}

impl Artifact {
    /// How long `stage` took; zero when it did not run.
    pub fn time(&self, stage: Stage) -> Duration {
        self.times.iter().find(|(s, _)| *s == stage).map_or(Duration::ZERO, |(_, t)| *t)
    }
}

/// The code of a payload.
#[derive(Debug, Clone)]
pub struct Code {
    /// An ELF relocatable object for the profile's triple (`cpu-llvm`), or the OpenCL C or
    /// CUDA C source (GPU backends).
    pub bytes: Vec<u8>,
    /// What clang did (for GPU code, the emitter: the device compiles).
    pub log: CompileLog,
}

/// Why [`compile`] stopped: the stage that failed and its diagnostics (located; a verifier
/// failure also carries the verifier's warnings).
#[derive(Debug, Clone)]
pub struct Failure {
    pub stage: Stage,
    pub diagnostics: Vec<Diagnostic>,
}

/// Compiles `program` for `target`: the stages of [`Stage`], in order, up to
/// `options.until`, each one's output dumped as `options.dump` says. Errors (and the warnings
/// before them) are located in `sources`; nothing is written anywhere but a temporary object
/// file and the dump.
pub fn compile(
    program: Program<'_>,
    sources: Sources<'_>,
    target: &TargetProfile,
    options: &CompileOptions,
) -> Result<Artifact, Failure> {
    let mut run = Run::new(&options.dump);
    // The backend decides the lowering, so it is chosen first; a GPU asked of a target without
    // one is a lowering failure.
    let backend =
        backend_for(program, target, options.backend).map_err(|d| failure(Stage::Lower, vec![d]))?;
    let gpu = backend != Backend::CpuLlvm;

    let (module, schedule) = match program {
        Program::Graph(g) => {
            // Graph passes before the lowering, which sees one node at a time: a rewrite across
            // nodes (fusion) has to happen on the graph.
            let mut passes_log = Vec::new();
            let graph = run.stage(Stage::GraphPasses, || {
                let logged = options.dump_passes || options.dump != Dump::None;
                let mut log = |d: &PassDump<'_>| passes_log.push(PassRun::of(d));
                let sink: Option<&mut dyn FnMut(&PassDump<'_>)> = if logged { Some(&mut log) } else { None };
                ekb_passes::run(g, &options.passes, sink).map_err(|d| vec![sources.graph(d)])
            })?;
            for (k, pass) in passes_log.iter().enumerate() {
                run.dump_pass(k + 1, pass, options.dump_passes)?;
            }
            let what = format!("L0 graph `{}`, passes: {}", graph.name, options.passes);
            run.dump(Stage::GraphPasses, &what, "ekir", l0::print::print(&graph).as_bytes())?;
            // The lowering of the backend: the GPU's puts every operator in `launch` kernels.
            let lower = if gpu { ekb_lower::lower_gpu_with } else { ekb_lower::lower_with };
            let knobs = options.knobs.unwrap_or_else(|| Knobs::for_target(target));
            let m = run.stage(Stage::Lower, || {
                lower(&graph, options.schedule, &knobs, target).map_err(|d| vec![sources.graph(d)])
            })?;
            let lowering = if gpu { "GPU lowering" } else { "CPU lowering" };
            let what = format!("L0 -> L1, {lowering}, {} schedule", options.schedule);
            run.dump(Stage::Lower, &what, "l1.ekir", l1::print::print(&m).as_bytes())?;
            (m, Some(options.schedule))
        }
        Program::Module { module, .. } | Program::Unbound(module) => (module.clone(), None),
    };
    // The schedule trace after the lowering made the module, before the verifier sees it: every
    // step is checked as it is applied, and the result must verify like any loop program.
    let module = match &options.trace {
        Some(t) if options.until >= Stage::Schedule => {
            let m = run.stage(Stage::Schedule, || {
                ekb_sched::apply(&module, &t.trace)
                    .map_err(|d| vec![t.source.as_ref().map_or(d.clone(), |s| s.locate(d))])
            })?;
            let what = format!(
                "{} step{} of the schedule trace",
                t.trace.steps.len(),
                if t.trace.steps.len() == 1 { "" } else { "s" }
            );
            run.dump(Stage::Schedule, &what, "l1.ekir", l1::print::print(&m).as_bytes())?;
            m
        }
        _ => module,
    };
    let mut artifact = Artifact {
        module,
        backend,
        schedule,
        warnings: Vec::new(),
        source: None,
        code: None,
        times: Vec::new(),
    };
    if options.until <= Stage::Lower {
        return Ok(run.finish(artifact));
    }

    // Verify before anything reads the module as correct: the binding below and the adapters
    // assume a well-typed plan within the target's limits.
    let module = &artifact.module;
    let diags = run.stage(Stage::Verify, || {
        Ok(l1::verify::verify(module, Some(target))
            .into_iter()
            .map(|d| sources.module(d))
            .collect::<Vec<_>>())
    })?;
    let what = format!("L1 module `{}` against target `{}`", module.name, target.name);
    run.dump(Stage::Verify, &what, "txt", findings(&diags).as_bytes())?;
    if l1::verify::has_errors(&diags) {
        return Err(failure(Stage::Verify, diags));
    }
    artifact.warnings = diags;
    if options.until == Stage::Verify {
        return Ok(run.finish(artifact));
    }

    // Bind before the adapter: a module that does not implement its task is not worth
    // compiling, and the payload's buffers are these.
    if let Some(graph) = program.graph() {
        let bound = run.stage(Stage::Bind, || {
            crate::build::bind_buffers(module, graph)
                .map_err(|ds| ds.into_iter().map(|d| sources.module(d)).collect())
        })?;
        let what = format!("buffers to graph `{}`", graph.name);
        run.dump(Stage::Bind, &what, "txt", bind_table(module, &bound).as_bytes())?;
    }
    if options.until == Stage::Bind {
        return Ok(run.finish(artifact));
    }

    // The adapter of the backend. GPU source is the payload's code as it is: the device's
    // driver compiles it, so a GPU program ends here. Hand-written kernels replace emitted ones.
    let hand = &options.kernel_sources;
    let wrong = crate::l2::check_languages(hand, backend);
    if !wrong.is_empty() {
        return Err(failure(Stage::Adapter, wrong));
    }
    if gpu {
        let dialect = if backend == Backend::Cuda { Dialect::Cuda } else { Dialect::OpenCl };
        let (source, log) = run.stage(Stage::Adapter, || {
            emit_gpu(module, dialect, target, hand).map_err(|d| vec![sources.module(d)])
        })?;
        let ext = if dialect == Dialect::Cuda { "cu" } else { "cl" };
        run.dump(Stage::Adapter, &format!("L1 -> {}", dialect.name()), ext, source.as_bytes())?;
        artifact.code = Some(Code { bytes: source.clone().into_bytes(), log });
        artifact.source = Some(source);
        return Ok(run.finish(artifact));
    }
    // The emitted kernels are those without a source (`None`: every kernel has one).
    let emitted = Module {
        kernels: module
            .kernels
            .iter()
            .filter(|k| !hand.iter().any(|h| h.kernel == k.name))
            .cloned()
            .collect(),
        ..module.clone()
    };
    let ir =
        run.stage(Stage::Adapter, || ekb_llvm::emit(&emitted, target).map_err(|d| vec![sources.module(d)]))?;
    run.dump(Stage::Adapter, &format!("L1 -> LLVM IR for {}", target.cpu.triple), "ll", ir.as_bytes())?;
    if options.until == Stage::Adapter {
        artifact.source = Some(ir);
        return Ok(run.finish(artifact));
    }

    // The toolchain last: clang checks the object against the kernel ABI as it writes it.
    let code = run.stage(Stage::Toolchain, || match hand.is_empty() {
        true => clang(&ir, &module.name, target),
        false => {
            let emitted_ir = (!emitted.kernels.is_empty()).then_some(ir.as_str());
            crate::l2::cpu_object(emitted_ir, hand, target)
        }
    })?;
    let what = format!("LLVM IR -> ELF object with clang-19, {} bytes", code.bytes.len());
    run.dump(Stage::Toolchain, &what, "o", &code.bytes)?;
    artifact.source = Some(ir);
    artifact.code = Some(code);
    Ok(run.finish(artifact))
}

/// One graph pass run, as the dump shows it.
struct PassRun {
    pass: &'static str,
    round: usize,
    /// The printed graph after the pass; `None` when the pass changed nothing.
    graph: Option<String>,
}

impl PassRun {
    fn of(d: &PassDump<'_>) -> PassRun {
        PassRun { pass: d.pass, round: d.round, graph: d.changed.then(|| l0::print::print(d.graph)) }
    }
}

/// The bind stage's result, one line per module buffer: its name, role and type.
fn bind_table(module: &Module, bound: &[BufferDecl]) -> String {
    // `bind_buffers` made one declaration per module buffer, in module order.
    bound
        .iter()
        .zip(&module.buffers)
        .map(|(b, decl)| format!("{}: {} {}\n", b.name, b.role.name(), decl.ty))
        .collect()
}

/// The kernels of `module` in `dialect`, those of `hand` as written, and what emitting them took
/// (the code's compile log: a GPU's driver compiles the source on the device).
fn emit_gpu(
    module: &Module,
    dialect: Dialect,
    target: &TargetProfile,
    hand: &[crate::l2::KernelSource],
) -> Result<(String, CompileLog), Diagnostic> {
    let started = Instant::now();
    let hand: Vec<ekb_gpu_c::HandWritten<'_>> = hand
        .iter()
        .map(|h| ekb_gpu_c::HandWritten { kernel: &h.kernel, name: &h.source.name, text: &h.source.text })
        .collect();
    let source = ekb_gpu_c::emit_with(module, dialect, target, &hand)?;
    let log = CompileLog {
        command: vec!["ekb_gpu_c::emit".into(), dialect.name().into(), target.name.clone()],
        duration: started.elapsed(),
        cached: false,
        stderr: String::new(),
    };
    Ok((source, log))
}

/// The ELF object clang-19 makes of LLVM IR `ir` for `target`.
fn clang(ir: &str, name: &str, target: &TargetProfile) -> Result<Code, Vec<Diagnostic>> {
    let dir = tempfile::tempdir()
        .map_err(|e| vec![Diagnostic::error(format!("cannot create a temporary directory: {e}"))])?;
    let path = dir.path().join(format!("{name}.o"));
    let log = ekb_llvm::compile(ir, target, &path).map_err(|d| vec![d])?;
    let bytes = std::fs::read(&path).map_err(|e| {
        vec![Diagnostic::error(format!("cannot read the compiled object `{}`: {e}", path.display()))]
    })?;
    Ok(Code { bytes, log })
}

/// The verifier's findings, rendered, or `no findings`.
fn findings(diags: &[Diagnostic]) -> String {
    if diags.is_empty() {
        return "no findings\n".into();
    }
    diags.iter().map(|d| format!("{d}\n")).collect()
}

fn failure(stage: Stage, diagnostics: Vec<Diagnostic>) -> Failure {
    Failure { stage, diagnostics }
}

/// The bookkeeping of one [`compile`]: the stages' times and the dump.
struct Run<'o> {
    dump: &'o Dump,
    times: Vec<(Stage, Duration)>,
    /// Whether the dump directory is ready (created, or cleared of an earlier run's files).
    dir_ready: bool,
}

impl<'o> Run<'o> {
    fn new(dump: &'o Dump) -> Run<'o> {
        Run { dump, times: Vec::new(), dir_ready: false }
    }

    /// Runs one stage, timed; its error is the failure of `stage`.
    fn stage<T>(
        &mut self,
        stage: Stage,
        f: impl FnOnce() -> Result<T, Vec<Diagnostic>>,
    ) -> Result<T, Failure> {
        let started = Instant::now();
        let out = f();
        self.times.push((stage, started.elapsed()));
        out.map_err(|ds| failure(stage, ds))
    }

    /// Shows what `stage` made: on stderr after a header naming the stage and `what` (binary
    /// output as the header alone), or as the stage's file in the dump directory (extension
    /// `ext`).
    fn dump(&mut self, stage: Stage, what: &str, ext: &str, output: &[u8]) -> Result<(), Failure> {
        match self.dump {
            Dump::None => Ok(()),
            Dump::Stderr => {
                let mut err = std::io::stderr().lock();
                let _ = writeln!(err, "== {stage}: {what} ==");
                if let Ok(text) = std::str::from_utf8(output) {
                    let _ = err.write_all(text.as_bytes());
                    if !text.ends_with('\n') {
                        let _ = writeln!(err);
                    }
                }
                Ok(())
            }
            Dump::Dir(dir) => {
                if !self.dir_ready {
                    clear_dump_dir(dir).map_err(|d| failure(stage, vec![d]))?;
                    self.dir_ready = true;
                }
                let path = dir.join(format!("{}.{ext}", dump_stem(stage)));
                std::fs::write(&path, output).map_err(|e| {
                    failure(stage, vec![Diagnostic::error(format!("cannot write `{}`: {e}", path.display()))])
                })
            }
        }
    }

    /// Shows the `k`-th graph pass run: as a file of a dump directory when the pass changed the
    /// graph, and on stderr when `to_stderr` asks for it (`--dump-passes`).
    fn dump_pass(&mut self, k: usize, pass: &PassRun, to_stderr: bool) -> Result<(), Failure> {
        let header = match pass.graph {
            Some(_) => format!("after `{}`, round {}", pass.pass, pass.round),
            None => format!("`{}`, round {}: no change", pass.pass, pass.round),
        };
        match self.dump {
            Dump::None | Dump::Stderr if !to_stderr => Ok(()),
            Dump::None | Dump::Stderr => {
                let mut err = std::io::stderr().lock();
                let _ = writeln!(err, "== {}: {header} ==", Stage::GraphPasses);
                let _ = err.write_all(pass.graph.as_deref().unwrap_or("").as_bytes());
                Ok(())
            }
            Dump::Dir(_) => match &pass.graph {
                Some(text) => {
                    let ext = format!("{k}-{}.ekir", pass.pass);
                    self.dump(Stage::GraphPasses, &header, &ext, text.as_bytes())
                }
                None => Ok(()),
            },
        }
    }

    fn finish(self, artifact: Artifact) -> Artifact {
        Artifact { times: self.times, ..artifact }
    }
}

/// `N-NAME`: a stage's file in a dump directory, numbered in pipeline order from 1.
fn dump_stem(stage: Stage) -> String {
    let n = Stage::ALL.iter().position(|s| *s == stage).expect("every stage is listed") + 1;
    format!("{n}-{stage}")
}

/// Creates the dump directory, or removes the stage files an earlier run left in it.
fn clear_dump_dir(dir: &Path) -> Result<(), Diagnostic> {
    let cannot =
        |what: &str, e: std::io::Error| Diagnostic::error(format!("cannot {what} `{}`: {e}", dir.display()));
    std::fs::create_dir_all(dir).map_err(|e| cannot("create the dump directory", e))?;
    let stems: Vec<String> = Stage::ALL.iter().map(|&s| format!("{}.", dump_stem(s))).collect();
    for entry in std::fs::read_dir(dir).map_err(|e| cannot("read the dump directory", e))? {
        let path = entry.map_err(|e| cannot("read the dump directory", e))?.path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if stems.iter().any(|s| name.starts_with(s.as_str())) {
            std::fs::remove_file(&path).map_err(|e| cannot("clear the dump directory", e))?;
        }
    }
    Ok(())
}

/// Runs one payload on the device behind `transport`, as `ekb run` does: the runtime installed
/// there first when it is missing or outdated, every seed checked, then timed with the
/// payload's timing settings changed by `settings`. The report says what happened, including a
/// payload the runtime refused; `Err` is for a device that could not be used.
pub fn measure(
    payload: &[u8],
    transport: &mut dyn Transport,
    settings: &RunSettings,
    mode: Mode,
) -> Result<RunOutcome, Diagnostic> {
    let view = Payload::parse(payload).map_err(|e| Diagnostic::error(format!("not a valid payload: {e}")))?;
    let dir = tempfile::tempdir()
        .map_err(|e| Diagnostic::error(format!("cannot create a temporary directory: {e}")))?;
    let path = dir.path().join(format!("{}.ekp", view.manifest().task));
    std::fs::write(&path, payload)
        .map_err(|e| Diagnostic::error(format!("cannot write `{}`: {e}", path.display())))?;
    transport::run_payloads(transport, &mut System, &[path], settings, mode)
}

/// Loads an artifact compiled for this machine's CPU into this process, with `threads`
/// threads for its `parallel` loops (0: the available cores): runs without the device runtime
/// (the workloads of `ekb bench`, the suite's naive check).
pub fn load_host(artifact: &Artifact, threads: usize) -> Result<HostModule, Diagnostic> {
    let code = match &artifact.code {
        Some(code) if artifact.backend == Backend::CpuLlvm => code,
        _ => {
            return Err(Diagnostic::error(format!(
                "module `{}` was not compiled to a CPU object, so it cannot be loaded here",
                artifact.module.name
            ))
            .with_note("compile with the CPU backend through the toolchain stage"))
        }
    };
    let dir = tempfile::tempdir()
        .map_err(|e| Diagnostic::error(format!("cannot create a temporary directory: {e}")))?;
    let path = dir.path().join(format!("{}.o", artifact.module.name));
    std::fs::write(&path, &code.bytes)
        .map_err(|e| Diagnostic::error(format!("cannot write `{}`: {e}", path.display())))?;
    HostModule::load(&path, &artifact.module, threads)
}
