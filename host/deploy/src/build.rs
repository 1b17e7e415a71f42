//! Payload building: an L0 graph (lowered with a schedule) or an L1 module (with the graph it
//! implements) becomes one self-contained payload file for a target profile, for its CPU
//! (`cpu-llvm`: an ELF object) or its GPU (`opencl` or `cuda`: the kernels' source, built on the
//! device).
//!
//! Two steps, usable apart: the compile driver (`crate::driver::compile`: lowering for the CPU
//! or the GPU, verification against the target, the buffers tied to the graph, LLVM IR and
//! clang-19 or OpenCL C / CUDA C) makes the code; [`assemble`] packs a loop program and its code
//! into a payload (a module of GPU kernels gets GPU launches, its shared and local allocations,
//! and the profile's GPU limits): the values of the graph's data parameters (read from the files
//! their `file(...)` names, relative to the graph's `.ekir` file, when not loaded yet, and
//! checked against their CRC-32), the expected outputs of every seed from the f64 reference
//! interpreter on the inputs of `ekb_ir::l0::inputs::generate`, the manifest, all written with
//! `PayloadBuilder` (which re-parses what it wrote). [`package`] packs a driver's artifact;
//! [`build`] is the two in a row.
//!
//! What it must keep true:
//! - The board fills every input and parameter from the payload alone, with the values the
//!   reference interpreter saw here: a seeded one carries the graph's initialiser and the task
//!   is the graph's name, so `ekb_wire::seeded` on the board yields exactly the bits `generate`
//!   gave the reference; a data parameter carries its values as a `param-data` blob (the same
//!   for every seed) with the checksum its `file(...)` declares.
//! - Expected outputs are the reference values rounded to the output's dtype (f32 to nearest,
//!   i32 by `as`), in the order of the manifest's `expected` list (seed, then output buffer).
//! - Every module buffer is tied to the graph by name and type: inputs to graph inputs or
//!   parameters, outputs to graph outputs, and every graph output is produced. A mismatch is a
//!   diagnostic, never a payload that fails on the board.

use crate::driver::{compile, Artifact, BackendChoice, CompileOptions, Program, Sources};
use crate::references::References;
use ekb_ir::l0::{self, Graph, TensorDecl};
use ekb_ir::l1::gpu::LaunchShape;
use ekb_ir::l1::{self, memory, BufferRole, Module};
use ekb_ir::target::GpuApi;
use ekb_ir::tensor::{BufData, Tensor};
use ekb_ir::{Diagnostic, TargetProfile};
use ekb_llvm::CompileLog;
use ekb_lower::Schedule;
use ekb_wire::payload::{
    f16s_to_le, f32s_to_le, i32s_to_le, i8s_to_le, Access, AllocDecl, Backend, BlobKind, BufferDecl, DType,
    ExpectedOutput, GpuLimits, KernelDecl, Launch, LaunchStep, Manifest, MemScope, MemoryPlan, ParamDecl,
    Payload, PayloadBuilder, PayloadError, Role, Source, TimingSettings, Tolerance,
};
use serde::Serialize;
use std::borrow::Cow;
use std::fmt;

/// The seeds a payload checks when none are given (the evaluation protocol checks three).
pub const DEFAULT_SEEDS: [u64; 3] = [0, 1, 2];

/// The tolerance a payload is built with by default: the evaluation protocol's f32 default.
/// Integer outputs are always compared exactly (the manifest's rule), whatever the tolerance.
pub const TOLERANCE: Tolerance = Tolerance { atol: 1e-4, rtol: 1e-4 };

/// What the payload's `producer` field says.
pub fn producer() -> String {
    format!("ekb {}", env!("CARGO_PKG_VERSION"))
}

/// How to build.
#[derive(Debug, Clone, PartialEq)]
pub struct BuildOptions {
    /// How an L0 graph is lowered (ignored for an L1 module).
    pub schedule: Schedule,
    /// The seeds the board checks, in order; at least one.
    pub seeds: Vec<u64>,
    pub timing: TimingSettings,
    /// The reference outputs of the graph on `seeds`, in that order, when the caller has them
    /// or computes them for many payloads of one task (an evaluation: given, or pending on
    /// another thread while the payloads compile); `None`: computed here with the reference
    /// interpreter.
    pub references: Option<References>,
    /// The bound the board compares f32 outputs at (f16 ones at no less than one f16 step,
    /// integers exactly): a task's own tolerance, else [`TOLERANCE`].
    pub tolerance: Tolerance,
}

impl Default for BuildOptions {
    fn default() -> BuildOptions {
        BuildOptions {
            schedule: Schedule::Default,
            seeds: DEFAULT_SEEDS.to_vec(),
            timing: TimingSettings::DEFAULT,
            references: None,
            tolerance: TOLERANCE,
        }
    }
}

/// A payload packed by [`assemble`], with its figures.
#[derive(Debug, Clone)]
pub struct Assembled {
    /// The payload file's bytes (already checked by `Payload::parse`).
    pub payload: Vec<u8>,
    /// The figures; `schedule` is `None` (the assembler does not know how the module was made).
    pub summary: BuildSummary,
}

/// A built payload and what went into it.
#[derive(Debug, Clone)]
pub struct Built {
    /// The payload file's bytes (already checked by `Payload::parse`).
    pub payload: Vec<u8>,
    /// The loop program that was compiled.
    pub module: Module,
    /// The verifier's warnings (located).
    pub warnings: Vec<Diagnostic>,
    /// What clang did (for GPU code, the emitter: the device compiles).
    pub compile: CompileLog,
    pub summary: BuildSummary,
}

/// The figures `ekb build` prints (and writes as JSON).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BuildSummary {
    pub task: String,
    pub target: String,
    /// `cpu-llvm`, `opencl` or `cuda`.
    pub backend: String,
    /// The schedule an L0 graph was lowered with; `None` for an L1 module.
    pub schedule: Option<String>,
    pub kernels: usize,
    pub plan_steps: usize,
    pub payload_bytes: u64,
    pub code_bytes: u64,
    /// Bytes of parameter data carried in the payload (parameters declared with `file(...)`).
    pub param_data_bytes: u64,
    /// How many parameters carry their data in the payload.
    pub data_params: usize,
    pub seeds: Vec<u64>,
    /// The bytes the runtime reserves (`ekb_ir::l1::arena::Footprint`): inputs, outputs, the
    /// temps (in one arena on a CPU, apart on a GPU) and the largest kernel stack.
    pub peak_bytes: u64,
    /// The same with every temp apart (what a CPU runtime reserved before the memory plan).
    pub unplanned_peak_bytes: u64,
    pub memory_limit_bytes: u64,
    /// The largest stack peak of one kernel thread, bytes.
    pub stack_peak_bytes: u64,
    pub stack_limit_bytes: u64,
}

impl fmt::Display for BuildSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let schedule = self.schedule.as_ref().map_or(String::new(), |s| format!(", {s} schedule"));
        let data = if self.data_params == 0 {
            String::new()
        } else {
            format!(
                ", data of {} parameter{} {}",
                self.data_params,
                plural(self.data_params),
                human_bytes(self.param_data_bytes)
            )
        };
        let unplanned = if self.unplanned_peak_bytes > self.peak_bytes {
            format!(" ({} with every temp apart)", human_bytes(self.unplanned_peak_bytes))
        } else {
            String::new()
        };
        let backend = if self.backend == Backend::CpuLlvm.name() {
            String::new()
        } else {
            format!(" ({})", self.backend)
        };
        write!(
            f,
            "{} for {}{backend}{schedule}: {} kernel{}, {} plan step{}, {} (code {}{data}), {} seed{}, peak memory {}{unplanned} of {}",
            self.task,
            self.target,
            self.kernels,
            plural(self.kernels),
            self.plan_steps,
            plural(self.plan_steps),
            human_bytes(self.payload_bytes),
            human_bytes(self.code_bytes),
            self.seeds.len(),
            plural(self.seeds.len()),
            human_bytes(self.peak_bytes),
            human_bytes(self.memory_limit_bytes),
        )
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// `512 B`, `12.3 KiB`, `4.0 GiB`.
pub fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = n as f64;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{n} B")
    } else {
        format!("{v:.1} {}", UNITS[unit])
    }
}

/// Builds a payload for `target`: the driver's [`compile`], then [`package`]. Errors (and the
/// warnings before them) are located in `sources`; nothing is written anywhere but a temporary
/// object file.
pub fn build(
    program: Program<'_>,
    sources: Sources<'_>,
    target: &TargetProfile,
    options: &BuildOptions,
) -> Result<Built, Vec<Diagnostic>> {
    build_for(program, sources, target, options, BackendChoice::Auto)
}

/// [`build`] for the processor `choice` picks (`crate::driver::backend_for`). A GPU build
/// lowers an L0 graph with the GPU lowering of [`BuildOptions::schedule`] and writes the
/// module's kernels in the GPU's dialect.
pub fn build_for(
    program: Program<'_>,
    sources: Sources<'_>,
    target: &TargetProfile,
    options: &BuildOptions,
    choice: BackendChoice,
) -> Result<Built, Vec<Diagnostic>> {
    check_seeds(options)?;
    let Some(graph) = program.graph() else {
        return Err(vec![Diagnostic::error("an L1 module tied to no task cannot be packed into a payload")
            .with_note("a payload takes its inputs and reference outputs from the L0 graph of its task")
            .with_note("this is a bug in the caller of ekb_deploy::build: pass `Program::Module`")]);
    };
    let options_compile =
        CompileOptions { schedule: options.schedule, backend: choice, ..CompileOptions::default() };
    let artifact = compile(program, sources, target, &options_compile).map_err(|f| f.diagnostics)?;
    package(artifact, graph, sources, target, options)
}

/// `payload` with each timed sample taking `times` executions (`Manifest::repeat`): the same
/// code, buffers, seeds and expected outputs, each execution after the poison as a single one,
/// so its time is `times` times the original's. The known-effect check of the measurement
/// (`ekb bench --self-check`) times it against the original.
pub fn repeat_executions(payload: &[u8], times: u32) -> Result<Vec<u8>, PayloadError> {
    let view = Payload::parse(payload)?;
    let mut out = PayloadBuilder::new();
    for blob in (0..view.blob_count() as u32).filter_map(|i| view.blob(i)) {
        out.add_blob(blob.kind, blob.data);
    }
    let manifest = Manifest { repeat: times, ..view.manifest().clone() };
    out.finish(&manifest)
}

/// Packs a compiled artifact into a payload for the task of `graph` ([`assemble`]), keeping
/// what went into it. The artifact must have been compiled through its code (the driver's
/// default `until`); `graph` may be another graph than the one compiled, of the same signature
/// (an L0 candidate is compiled as itself and packed for its task).
pub fn package(
    artifact: Artifact,
    graph: &Graph,
    sources: Sources<'_>,
    target: &TargetProfile,
    options: &BuildOptions,
) -> Result<Built, Vec<Diagnostic>> {
    let Artifact { module, warnings, code, schedule, .. } = artifact;
    let Some(code) = code else {
        return Err(vec![Diagnostic::error(format!(
            "module `{}` was not compiled to code, so it cannot be packed into a payload",
            module.name
        ))
        .with_note(
            "this is a bug in the caller of ekb_deploy::build::package: compile through every stage",
        )]);
    };
    let mut assembled = assemble(graph, &module, &code.bytes, target, options, sources)?;
    assembled.summary.schedule = schedule.map(|s| s.name().to_string());
    Ok(Built { payload: assembled.payload, module, warnings, compile: code.log, summary: assembled.summary })
}

fn check_seeds(options: &BuildOptions) -> Result<(), Vec<Diagnostic>> {
    if options.seeds.is_empty() {
        return Err(vec![Diagnostic::error("a payload needs at least one seed")
            .with_hint("pass `--seeds 0,1,2` (the default)")]);
    }
    Ok(())
}

/// Packs loop program `module`, compiled into kernel object `object`, into a payload for the
/// task of `graph`: the graph's data parameters (loaded from the files their `file(...)` names,
/// relative to the directory of `sources.graph`, unless already loaded; every checksum
/// verified), the expected outputs of `options.seeds` from the reference interpreter, the
/// manifest (`options.timing`; `options.schedule` is not used). `module` must implement the
/// graph's task (see the driver's bind stage); a mismatch is a diagnostic. A module of GPU kernels is packed
/// for the target's GPU: `object` is then its OpenCL C or CUDA C source (`ekb_gpu_c::emit`), its
/// kernels are launched on their grids, and the manifest carries the profile's GPU limits and
/// the GPU's memory as the budget.
pub fn assemble(
    graph: &Graph,
    module: &Module,
    object: &[u8],
    target: &TargetProfile,
    options: &BuildOptions,
    sources: Sources<'_>,
) -> Result<Assembled, Vec<Diagnostic>> {
    check_seeds(options)?;
    let bound = bind_buffers(module, graph)
        .map_err(|ds| ds.into_iter().map(|d| sources.module(d)).collect::<Vec<_>>())?;
    let graph = with_param_data(graph, &sources)?;
    let graph = graph.as_ref();

    let gpu =
        match target.gpu.as_ref().filter(|_| module.kernels.iter().any(|k| LaunchShape::of(k).is_some())) {
            Some(g) => Some(g),
            None if module.kernels.iter().any(|k| LaunchShape::of(k).is_some()) => {
                return Err(vec![sources.module(
                    Diagnostic::error(format!(
                        "module `{}` has GPU kernels, and target `{}` has no GPU",
                        module.name, target.name
                    ))
                    .with_hint("choose a target with a GPU (`pocl`, `rk3588`, `jetson-orin`, `h200`)"),
                )]);
            }
            None => None,
        };
    let (backend, kind) = match gpu.map(|g| g.api) {
        None => (Backend::CpuLlvm, BlobKind::ElfObject),
        Some(GpuApi::Opencl) => (Backend::OpenCl, BlobKind::OpenClSource),
        Some(GpuApi::Cuda) => (Backend::Cuda, BlobKind::CudaSource),
    };
    let mut pb = PayloadBuilder::new();
    let code_bytes = object.len() as u64;
    let code = pb.add_blob(kind, object);
    let kernels: Vec<KernelDecl> = module.kernels.iter().map(|k| kernel_decl(k, code, backend)).collect();

    // Buffers: a data parameter's values become a blob of their own.
    let mut buffers = Vec::with_capacity(bound.len());
    let (mut data_params, mut param_data_bytes) = (0, 0u64);
    let mut errs = Vec::new();
    for decl in bound {
        let tensor = decl.role.is_generated().then(|| tensor_decl(graph, &decl.name));
        let source = match tensor {
            None => None,
            Some(d) => match &d.data {
                None => Some(Source::Seeded(d.init)),
                Some(_) => match param_bytes(d) {
                    Ok((bytes, crc32)) => {
                        data_params += 1;
                        param_data_bytes += bytes.len() as u64;
                        Some(Source::Data { blob: pb.add_blob(BlobKind::ParamData, bytes), crc32 })
                    }
                    Err(e) => {
                        errs.push(sources.graph(e));
                        None
                    }
                },
            },
        };
        buffers.push(BufferDecl { source, ..decl });
    }
    if !errs.is_empty() {
        return Err(errs);
    }

    let index_of = |name: &str| {
        // `bind_buffers` made one declaration per module buffer, in module order, and the
        // verifier checked that every plan argument names one.
        buffers.iter().position(|b| b.name == name).expect("a verified plan names declared buffers") as u32
    };
    let plan: Vec<LaunchStep> = module
        .plan
        .iter()
        .map(|r| LaunchStep {
            kernel: module.kernels.iter().position(|k| k.name == r.kernel).expect("a verified plan step")
                as u32,
            args: r.args.iter().map(|a| index_of(&a.name)).collect(),
        })
        .collect();

    let mut expected = Vec::new();
    let references = options.references.as_ref().and_then(References::get);
    if let Some(r) = references.as_ref().filter(|r| r.len() != options.seeds.len()) {
        return Err(vec![Diagnostic::error(format!(
            "{} sets of reference outputs for {} seeds",
            r.len(),
            options.seeds.len()
        ))
        .with_note("this is a bug in the caller of ekb_deploy::assemble")]);
    }
    for (s, &seed) in options.seeds.iter().enumerate() {
        let computed;
        let outputs = match &references {
            Some(r) => &r[s],
            None => {
                computed = reference_outputs(graph, seed).map_err(|d| vec![sources.graph(d)])?;
                &computed
            }
        };
        for (b, decl) in buffers.iter().enumerate().filter(|(_, d)| d.role == Role::Output) {
            // `bind_buffers` checked that every module output is a graph output.
            let o = graph.outputs.iter().position(|o| o.name == decl.name).expect("a bound output");
            let blob = pb.add_blob(BlobKind::ExpectedOutput, expected_bytes(&outputs[o], decl.dtype));
            expected.push(ExpectedOutput { seed: s as u32, buffer: b as u32, blob });
        }
    }

    let footprint = l1::arena::plan(module);
    // A CPU program's temps share the arena; a GPU runtime allocates every buffer apart.
    let peak_bytes = if gpu.is_some() { footprint.unplanned_bytes() } else { footprint.planned_bytes() };
    let stack_peak = footprint.stack_bytes;
    // A GPU program's buffers live in the GPU's memory (the same DRAM on unified boards).
    let memory_limit = gpu.map_or(target.cpu.memory_bytes, |g| g.memory_bytes);
    let mut manifest = Manifest {
        generator_version: ekb_wire::seeded::GENERATOR_VERSION,
        producer: producer(),
        task: graph.name.clone(),
        target: target.name.clone(),
        backend,
        kernels,
        buffers,
        plan,
        prepare_steps: module.plan.iter().take_while(|r| r.prepare).count() as u32,
        seeds: options.seeds.clone(),
        tolerance: options.tolerance,
        expected,
        timing: options.timing,
        memory: MemoryPlan {
            peak_bytes,
            stack_limit_bytes: target.cpu.stack_bytes,
            memory_limit_bytes: memory_limit,
        },
        gpu: gpu.map(|g| GpuLimits {
            max_threads_per_block: g.max_threads_per_block,
            shared_bytes_per_block: g.shared_bytes_per_block,
            shared_bytes_optin: g.shared_bytes_per_block_optin,
            private_bytes_per_thread: g.private_bytes_per_thread,
            max_buffer_bytes: g.max_buffer_bytes,
        }),
        arena: None,
        repeat: 1,
    };
    manifest.arena = crate::arena::plan(&manifest);
    let payload = pb.finish(&manifest).map_err(|e| {
        vec![Diagnostic::error(format!("the payload for `{}` is inconsistent: {e}", graph.name))
            .with_note("this is a bug in ekb: the manifest was built from a verified module")]
    })?;
    let summary = BuildSummary {
        task: graph.name.clone(),
        target: target.name.clone(),
        backend: backend.name().into(),
        schedule: None,
        kernels: module.kernels.len(),
        plan_steps: module.plan.len(),
        payload_bytes: payload.len() as u64,
        code_bytes,
        param_data_bytes,
        data_params,
        seeds: options.seeds.clone(),
        peak_bytes,
        unplanned_peak_bytes: footprint.unplanned_bytes(),
        memory_limit_bytes: memory_limit,
        stack_peak_bytes: stack_peak,
        stack_limit_bytes: target.cpu.stack_bytes,
    };
    Ok(Assembled { payload, summary })
}

/// The graph's input or parameter of this name (`bind_buffers` found it).
fn tensor_decl<'g>(graph: &'g Graph, name: &str) -> &'g TensorDecl {
    graph.inputs.iter().chain(&graph.params).find(|d| d.name == name).expect("a bound input or parameter")
}

/// `graph` with the values of every data parameter loaded: itself when they all are, else a
/// copy with the missing ones read from the files their `file(...)` names, relative to the
/// directory of the graph's file, and verified (size and CRC-32; the diagnostics name the
/// parameter, the file, the bytes and both checksums).
fn with_param_data<'g>(graph: &'g Graph, sources: &Sources<'_>) -> Result<Cow<'g, Graph>, Vec<Diagnostic>> {
    let unloaded = |d: &&TensorDecl| d.data.as_ref().is_some_and(|data| data.values.is_none());
    if !graph.params.iter().any(|d| unloaded(&d)) {
        return Ok(Cow::Borrowed(graph));
    }
    let Some(dir) = sources.graph_dir() else {
        return Err(graph
            .params
            .iter()
            .filter(unloaded)
            .map(|d| {
                let file = &d.data.as_ref().expect("a data parameter").file;
                sources.graph(
                    Diagnostic::error(format!(
                        "parameter `{}` takes its values from `{file}`, which is not loaded, and the graph \
                         was not read from a file, so there is no directory to find `{file}` in",
                        d.name
                    ))
                    .at(d.span)
                    .with_hint("read the graph from its `.ekir` file, next to its data file"),
                )
            })
            .collect());
    };
    let mut loaded = graph.clone();
    l0::inputs::load_data(&mut loaded, dir)
        .map_err(|ds| ds.into_iter().map(|d| sources.graph(d)).collect::<Vec<_>>())?;
    Ok(Cow::Owned(loaded))
}

/// A data parameter's values as its blob (little-endian elements) and their CRC-32, checked
/// against its type and against the checksum its `file(...)` declares.
fn param_bytes(d: &TensorDecl) -> Result<(Vec<u8>, u32), Diagnostic> {
    let data = d.data.as_ref().expect("a data parameter");
    let values = data.values.as_ref().expect("loaded by `with_param_data`");
    let (dtype, len) = match &**values {
        BufData::F32(v) => (ekb_ir::DType::F32, v.len()),
        BufData::I32(v) => (ekb_ir::DType::I32, v.len()),
        BufData::I8(v) => (ekb_ir::DType::I8, v.len()),
        BufData::F16(v) => (ekb_ir::DType::F16, v.len()),
    };
    if dtype != d.ty.dtype || len != d.ty.numel() {
        return Err(Diagnostic::error(format!(
            "parameter `{}: {}` holds {len} {dtype} values",
            d.name, d.ty
        ))
        .at(d.span));
    }
    let bytes = l0::le_bytes(values);
    let crc32 = ekb_wire::crc32(&bytes);
    if crc32 != data.crc32 {
        return Err(Diagnostic::error(format!(
            "parameter `{}`: checksum mismatch in the values of `{}` at offset {}: expected crc32 {:08x}, found {crc32:08x}",
            d.name, data.file, data.offset, data.crc32
        ))
        .at(d.span)
        .with_hint("the values changed after the `.ekir` was written; load the graph again from its file"));
    }
    Ok((bytes, crc32))
}

/// The reference outputs of `graph` under `seed`, in the graph's output order.
pub fn reference_outputs(graph: &Graph, seed: u64) -> Result<Vec<Tensor>, Diagnostic> {
    let inputs = l0::inputs::generate_tensors(graph, seed)?;
    l0::interp::run(graph, &inputs)
}

/// An expected-output blob: the reference rounded to the output's dtype, little-endian.
pub fn expected_bytes(reference: &Tensor, dtype: DType) -> Vec<u8> {
    match dtype {
        DType::F32 => f32s_to_le(&reference.data.iter().map(|&v| v as f32).collect::<Vec<_>>()),
        DType::I32 => i32s_to_le(&reference.data.iter().map(|&v| v as i32).collect::<Vec<_>>()),
        DType::I8 => i8s_to_le(&reference.data.iter().map(|&v| v as i8).collect::<Vec<_>>()),
        // An f16 reference holds exact f16 values: the rounding changes nothing.
        DType::F16 => {
            f16s_to_le(&reference.data.iter().map(|&v| ekb_wire::f16::from_f32(v as f32)).collect::<Vec<_>>())
        }
    }
}

fn shape(s: &[usize]) -> Vec<u64> {
    s.iter().map(|&d| d as u64).collect()
}

/// A kernel's declaration: its entry symbol, parameters, and the local allocations live
/// together at its stack peak (their sum is the peak the verifier limits, and every other
/// allocation of the kernel is at most that sum, so legality is decided by these). A GPU
/// kernel's symbol is its name (`docs/gpu.md`), its launch is its grid and block (a launch that
/// opts in passes its shared memory, rounded up to the emitter's alignment, as dynamic shared
/// memory), and it also declares its shared allocations (per block; its local ones are per
/// thread).
fn kernel_decl(k: &l1::Kernel, blob: u32, backend: Backend) -> KernelDecl {
    let params = k
        .params
        .iter()
        .map(|p| ParamDecl {
            name: p.name.clone(),
            dtype: p.ty.dtype.into(),
            shape: shape(&p.ty.shape),
            access: match p.access {
                l1::Access::In => Access::In,
                l1::Access::Out => Access::Out,
                l1::Access::InOut => Access::InOut,
            },
        })
        .collect();
    let local = memory::kernel_stack(k).allocs.into_iter().map(|(name, bytes)| AllocDecl {
        name,
        scope: MemScope::Local,
        bytes,
    });
    match LaunchShape::of(k).filter(|_| backend != Backend::CpuLlvm) {
        None => KernelDecl {
            name: k.name.clone(),
            symbol: ekb_llvm::kernel_symbol(&k.name),
            blob,
            params,
            launch: Launch::Cpu,
            allocs: local.collect(),
        },
        Some(shape) => {
            let dynamic = if shape.shared_optin {
                shape.shared_bytes.next_multiple_of(ekb_gpu_c::DYNAMIC_SHARED_ALIGN)
            } else {
                0
            };
            let shared = shape.shared_allocs.iter().map(|(name, bytes)| AllocDecl {
                name: name.clone(),
                scope: MemScope::Shared,
                bytes: *bytes,
            });
            KernelDecl {
                name: k.name.clone(),
                symbol: k.name.clone(),
                blob,
                params,
                launch: Launch::Grid {
                    grid: shape.grid,
                    block: shape.block,
                    shared_bytes: u32::try_from(dynamic).unwrap_or(u32::MAX),
                    shared_optin: shape.shared_optin,
                },
                allocs: shared.chain(local).collect(),
            }
        }
    }
}

/// The manifest's buffers, one per module buffer in module order, tied to the graph by name:
/// module inputs are graph inputs (role `Input`) or parameters (`Param`), outputs are graph
/// outputs, every graph output is a module output, and the types agree. The sources are left
/// out (`None`): [`assemble`] fills them in.
pub(crate) fn bind_buffers(m: &Module, g: &Graph) -> Result<Vec<BufferDecl>, Vec<Diagnostic>> {
    let mut diags = Vec::new();
    let mut out = Vec::new();
    let type_mismatch = |b: &l1::BufferDecl, what: &str, ty: &ekb_ir::TensorType| {
        Diagnostic::error(format!(
            "buffer `{}` is {}, but the graph's {what} `{}` is {ty}",
            b.name, b.ty, b.name
        ))
        .at(b.span)
        .with_hint(format!("declare `{}: {ty}`", b.name))
    };
    for b in &m.buffers {
        let role = match b.role {
            BufferRole::Input => {
                let input = g.inputs.iter().find(|d| d.name == b.name).map(|d| (Role::Input, d));
                match input.or_else(|| g.params.iter().find(|d| d.name == b.name).map(|d| (Role::Param, d))) {
                    Some((role, d)) => {
                        if d.ty != b.ty {
                            diags.push(type_mismatch(b, role.name(), &d.ty));
                        }
                        role
                    }
                    None => {
                        let names = g.inputs.iter().chain(&g.params).map(|d| d.name.as_str());
                        let mut d = Diagnostic::error(format!(
                            "input `{}` is not an input or parameter of graph `{}`",
                            b.name, g.name
                        ))
                        .at(b.span)
                        .with_expected(format!("one of: {}", list(names.clone())));
                        if let Some(h) = ekb_ir::diag::did_you_mean(&b.name, names) {
                            d = d.with_hint(h);
                        }
                        diags.push(d);
                        continue;
                    }
                }
            }
            BufferRole::Output => {
                match g.outputs.iter().find(|o| o.name == b.name) {
                    Some(o) if o.ty != b.ty => diags.push(type_mismatch(b, "output", &o.ty)),
                    Some(_) => {}
                    None => {
                        let names = g.outputs.iter().map(|o| o.name.as_str());
                        let mut d = Diagnostic::error(format!(
                            "output `{}` is not an output of graph `{}`",
                            b.name, g.name
                        ))
                        .at(b.span)
                        .with_expected(format!("one of: {}", list(names.clone())));
                        if let Some(h) = ekb_ir::diag::did_you_mean(&b.name, names) {
                            d = d.with_hint(h);
                        }
                        diags.push(d);
                    }
                }
                Role::Output
            }
            BufferRole::Temp => Role::Temp,
        };
        out.push(BufferDecl {
            name: b.name.clone(),
            dtype: b.ty.dtype.into(),
            shape: shape(&b.ty.shape),
            role,
            source: None,
        });
    }
    for o in &g.outputs {
        if !m.buffers.iter().any(|b| b.role == BufferRole::Output && b.name == o.name) {
            diags.push(
                Diagnostic::error(format!(
                    "module `{}` does not produce output `{}` of graph `{}`",
                    m.name, o.name, g.name
                ))
                .at(m.span)
                .with_hint(format!("declare `output {}: {}` and write it in the plan", o.name, o.ty)),
            );
        }
    }
    if diags.is_empty() {
        Ok(out)
    } else {
        Err(diags)
    }
}

fn list<'a>(names: impl Iterator<Item = &'a str>) -> String {
    let v: Vec<String> = names.map(|n| format!("`{n}`")).collect();
    if v.is_empty() {
        "(none)".into()
    } else {
        v.join(", ")
    }
}
