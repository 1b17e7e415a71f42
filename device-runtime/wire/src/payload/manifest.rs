//! The payload manifest: everything a board needs to run a candidate besides the code, the
//! expected outputs and the parameter data (which are blobs): kernels and their parameters,
//! buffers and where their values come from, the launch plan, seeds, tolerance, timing settings
//! and memory limits.
//!
//! What it must keep true: the manifest is postcard, which is not self-describing, so any change
//! to these types (a field added, removed or reordered, a variant inserted) changes the byte
//! format and must come with a new [`super::FORMAT_VERSION`]; the manifests of older versions
//! keep a decoder of their own ([`decode`]) that converts them to the current types, so old
//! payloads still parse. [`Manifest::validate`] checks every index and every cross-reference, so
//! code holding a validated manifest may index with them directly.

use super::{BlobEntry, BlobKind, PayloadError};
use crate::init::Init;
use crate::seeded::{self, InitError, GENERATOR_VERSION};
use alloc::collections::{BTreeMap, BTreeSet};
use alloc::format;
use alloc::string::{String, ToString};
use alloc::vec::Vec;
use core::fmt;
use serde::{Deserialize, Serialize};

/// Element types of buffers: `f32` and `i32` are 4 bytes, `f16` (IEEE binary16) two, `i8` one
/// byte, stored little-endian in blobs.
///
/// `I8` (code 2) came after format version 3 without a new version: appending a variant leaves
/// the bytes of every earlier manifest unchanged (no earlier writer produced code 2), so every
/// version reads it; a reader built before it refuses such a manifest as undecodable. `F16`
/// (code 3) was appended the same way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum DType {
    F32,
    I32,
    I8,
    F16,
}

impl DType {
    pub const fn name(self) -> &'static str {
        match self {
            DType::F32 => "f32",
            DType::I32 => "i32",
            DType::I8 => "i8",
            DType::F16 => "f16",
        }
    }

    pub const fn size_bytes(self) -> u64 {
        match self {
            DType::F32 | DType::I32 => 4,
            DType::I8 => 1,
            DType::F16 => 2,
        }
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Which backend the kernels are for; decides which blob kinds may hold kernel code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Backend {
    /// Freestanding ELF relocatable objects compiled from LLVM IR (`docs/abi.md`).
    CpuLlvm,
    /// CUDA C source or PTX, compiled on the device.
    Cuda,
    /// OpenCL C source, built on the device.
    OpenCl,
}

impl Backend {
    pub const fn name(self) -> &'static str {
        match self {
            Backend::CpuLlvm => "cpu-llvm",
            Backend::Cuda => "cuda",
            Backend::OpenCl => "opencl",
        }
    }

    /// Whether a blob of `kind` may hold this backend's kernel code.
    pub const fn accepts_code(self, kind: BlobKind) -> bool {
        matches!(
            (self, kind),
            (Backend::CpuLlvm, BlobKind::ElfObject)
                | (Backend::Cuda, BlobKind::CudaSource | BlobKind::Ptx)
                | (Backend::OpenCl, BlobKind::OpenClSource)
        )
    }
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How a kernel uses one of its parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Access {
    In,
    Out,
    InOut,
}

impl Access {
    pub const fn name(self) -> &'static str {
        match self {
            Access::In => "in",
            Access::Out => "out",
            Access::InOut => "inout",
        }
    }

    pub const fn writes(self) -> bool {
        !matches!(self, Access::In)
    }
}

/// What a buffer is to the program as a whole.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Role {
    /// A graph input, generated from the seed; read-only while kernels run.
    Input,
    /// A weight, generated from the seed or copied from a data blob; read-only while kernels
    /// run.
    Param,
    /// A graph output, poisoned before each run and compared with the expected output.
    Output,
    /// An intermediate between kernels, allocated by the runtime.
    Temp,
}

impl Role {
    pub const fn name(self) -> &'static str {
        match self {
            Role::Input => "input",
            Role::Param => "param",
            Role::Output => "output",
            Role::Temp => "temp",
        }
    }

    /// Inputs and parameters are filled by the runtime (from the seed, or a parameter from its
    /// data blob) and never written by kernels.
    pub const fn is_generated(self) -> bool {
        matches!(self, Role::Input | Role::Param)
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Memory scopes of the IR: global memory (buffers), GPU shared / work-group memory, and
/// local / register / private memory (on CPUs, the stack).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum MemScope {
    Global,
    Shared,
    Local,
}

impl MemScope {
    pub const fn name(self) -> &'static str {
        match self {
            MemScope::Global => "global",
            MemScope::Shared => "shared",
            MemScope::Local => "local",
        }
    }
}

impl fmt::Display for MemScope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One kernel parameter: a buffer of this type, used this way.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ParamDecl {
    pub name: String,
    pub dtype: DType,
    pub shape: Vec<u64>,
    pub access: Access,
}

/// An allocation a kernel makes inside itself (an L1 `alloc`), declared so that the runtime can
/// report its legality against the board's limits.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AllocDecl {
    pub name: String,
    pub scope: MemScope,
    pub bytes: u64,
}

/// How a kernel is launched.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Launch {
    /// A CPU kernel: the runtime calls the entry point once; it parallelises itself through
    /// the runtime's parallel-launch entry.
    Cpu,
    /// A GPU kernel: grid and block dimensions (x, y, z; CUDA `gridDim` / `blockDim`, OpenCL
    /// local size `block` and global size `grid * block`), the dynamic shared memory passed at
    /// launch in bytes (0 unless the kernel opts in), and whether it opts in to shared memory
    /// above the static 48 KiB (CUDA only: the runtime raises the function's
    /// `CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES` to `shared_bytes` before launching).
    /// `shared_optin` since format version 3.
    Grid { grid: [u32; 3], block: [u32; 3], shared_bytes: u32, shared_optin: bool },
}

/// The target profile's GPU limits, written by the host from the profile the code was built
/// for (format version 3). The runtime checks every launch and kernel allocation against them
/// and against the live device's limits: whichever is smaller decides, and a finding names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct GpuLimits {
    /// Threads (work-items) per block (work-group).
    pub max_threads_per_block: u32,
    /// Static shared (OpenCL local) memory per block.
    pub shared_bytes_per_block: u64,
    /// Shared memory per block with the explicit opt-in (CUDA dynamic shared memory).
    pub shared_bytes_optin: Option<u64>,
    /// Private (local) memory per thread, where the profile says.
    pub private_bytes_per_thread: Option<u64>,
    /// The largest single buffer the driver allocates, where the profile says.
    pub max_buffer_bytes: Option<u64>,
}

/// One kernel: its name, the symbol of its entry point inside the code blob, and its
/// parameters in call order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelDecl {
    pub name: String,
    pub symbol: String,
    /// Index of the blob holding the code (an ELF object may hold several kernels).
    pub blob: u32,
    pub params: Vec<ParamDecl>,
    pub launch: Launch,
    pub allocs: Vec<AllocDecl>,
}

/// Where the values of an input or parameter come from.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum Source {
    /// The seeded generator with this initialiser, keyed by (task, seed, buffer name): new
    /// values for every seed.
    Seeded(Init),
    /// The elements stored in blob `blob` (kind [`BlobKind::ParamData`], `numel × element size` bytes,
    /// little-endian in the buffer's dtype), the same for every seed; parameters only. `crc32`
    /// is the CRC-32 of the blob's bytes (the checksum its source file declared), checked when
    /// the payload is parsed. Since format version 2.
    Data { blob: u32, crc32: u32 },
}

/// One buffer of the program. Inputs and parameters carry the source of their values;
/// outputs and temporaries carry none.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BufferDecl {
    pub name: String,
    pub dtype: DType,
    pub shape: Vec<u64>,
    pub role: Role,
    pub source: Option<Source>,
}

impl BufferDecl {
    /// Number of elements (1 for a scalar), or `None` if it overflows u64. Validated manifests
    /// have no overflowing shapes.
    pub fn numel(&self) -> Option<u64> {
        numel(&self.shape)
    }

    /// Size in bytes, or `None` if it overflows u64.
    pub fn size_bytes(&self) -> Option<u64> {
        self.numel()?.checked_mul(self.dtype.size_bytes())
    }

    /// The seeded initialiser, for a buffer generated from the seed.
    pub fn seeded(&self) -> Option<&Init> {
        match &self.source {
            Some(Source::Seeded(init)) => Some(init),
            _ => None,
        }
    }

    /// The data blob's index, for a parameter whose values are stored in the payload.
    pub fn data_blob(&self) -> Option<u32> {
        match self.source {
            Some(Source::Data { blob, .. }) => Some(blob),
            _ => None,
        }
    }
}

/// One step of the launch plan: run `kernel` with these buffers as its arguments, in order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LaunchStep {
    pub kernel: u32,
    pub args: Vec<u32>,
}

/// Where the expected value of one output under one seed lives: a blob of kind
/// [`BlobKind::ExpectedOutput`] holding the elements little-endian, `numel × element size` bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExpectedOutput {
    /// Index into [`Manifest::seeds`].
    pub seed: u32,
    /// Index into [`Manifest::buffers`]; the buffer is an output.
    pub buffer: u32,
    pub blob: u32,
}

/// The correctness bound for float outputs: `|out - ref| <= atol + rtol * |ref|` elementwise,
/// f16 outputs at a relative bound of at least [`Tolerance::F16_MIN_RTOL`]. Integer outputs must match exactly.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Tolerance {
    pub atol: f64,
    pub rtol: f64,
}

impl Tolerance {
    /// The smallest relative bound an f16 output is compared at: one f16 step is at most 2^-10
    /// of the value, so a result one rounding away from the reference (an f32 computed in
    /// another order, then rounded to f16) passes.
    pub const F16_MIN_RTOL: f64 = 1e-3;

    /// The bound an output of `dtype` is compared at when the payload's tolerance is `self`:
    /// integers exactly, f32 at `self`, f16 at `self` with `rtol` at least
    /// [`Tolerance::F16_MIN_RTOL`].
    pub fn for_dtype(self, dtype: DType) -> Tolerance {
        match dtype {
            DType::I32 | DType::I8 => Tolerance { atol: 0.0, rtol: 0.0 },
            DType::F32 => self,
            DType::F16 => Tolerance { atol: self.atol, rtol: self.rtol.max(Self::F16_MIN_RTOL) },
        }
    }
}

/// How a run is timed.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TimingSettings {
    /// Untimed runs before sampling.
    pub warmup: u32,
    pub min_samples: u32,
    pub max_samples: u32,
    /// Stop once the relative standard error of the median falls below this (e.g. 0.01).
    pub target_rse: f64,
    /// Stop sampling after this much wall time, in milliseconds.
    pub budget_ms: u64,
    /// Flush the caches between samples.
    pub cold_cache: bool,
}

impl TimingSettings {
    /// The evaluation protocol's defaults: 3 warm-up runs, 10 to 1000 samples, 1% relative
    /// standard error, a 10 s budget, warm caches.
    pub const DEFAULT: TimingSettings = TimingSettings {
        warmup: 3,
        min_samples: 10,
        max_samples: 1000,
        target_rse: 0.01,
        budget_ms: 10_000,
        cold_cache: false,
    };
}

/// Memory figures from the host's plan and the target profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemoryPlan {
    /// The peak bytes of buffers and kernel allocations the host planned.
    pub peak_bytes: u64,
    /// The profile's stack budget for a kernel's local allocations.
    pub stack_limit_bytes: u64,
    /// The profile's memory budget for the whole program.
    pub memory_limit_bytes: u64,
}

/// Alignment of every offset in the temp arena: the kernel ABI's buffer alignment.
pub const ARENA_ALIGN: u64 = 64;

/// Temporaries placed at offsets of one allocation (format version 4; CPU payloads only), so
/// that temps never live at the same plan step share bytes. A temp is live from the first plan
/// step naming it to the last one, both included; [`Manifest::validate`] checks that two temps
/// whose bytes intersect are never live at once. Temps without a slot, and every other buffer,
/// get an allocation of their own.
///
/// The arena may also place a parameter that only prepare steps read
/// ([`Manifest::consumed_params`]): it is live during those steps alone, so execution temps
/// reuse its bytes, and the runtime writes its values again before each run of the prepare
/// steps (a payload with such a slot is refused by runtimes older than the rule).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Arena {
    /// The arena's size in bytes.
    pub bytes: u64,
    pub slots: Vec<ArenaSlot>,
}

/// One temp in the arena: buffer `buffer` (an index into `buffers`, a temp) starts `offset`
/// bytes in (a multiple of [`ARENA_ALIGN`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArenaSlot {
    pub buffer: u32,
    pub offset: u64,
}

/// The manifest of a payload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// The seeded generator's version the inputs must be generated with
    /// ([`crate::seeded::GENERATOR_VERSION`]); a board with another one refuses the payload.
    pub generator_version: u32,
    /// What wrote the payload (e.g. `ekb 0.1.0`), for the record.
    pub producer: String,
    /// The task name; with the seed and the buffer name it keys the seeded generator.
    pub task: String,
    /// The target profile the code was compiled for.
    pub target: String,
    pub backend: Backend,
    pub kernels: Vec<KernelDecl>,
    pub buffers: Vec<BufferDecl>,
    /// The kernels to run, in order: the first [`Manifest::prepare_steps`] once per binding of
    /// the parameters, the rest for one execution of the program.
    pub plan: Vec<LaunchStep>,
    /// How many of the plan's first steps are prepare steps (format version 5; in GPU payloads
    /// too, which runtimes before GPU prepare steps refuse). They compute from the parameters alone (e.g. pack a weight matrix into another
    /// layout) and run once per binding of the parameters (each seed's values), before the
    /// first execution; they are not part of an execution (not timed, not repeated). The temps
    /// they write ([`Manifest::prepared`]) keep their values across executions and are only
    /// read by the execution steps. 0: every step is an execution step.
    pub prepare_steps: u32,
    pub seeds: Vec<u64>,
    pub tolerance: Tolerance,
    /// One entry per (seed, output), sorted by seed index then buffer index.
    pub expected: Vec<ExpectedOutput>,
    pub timing: TimingSettings,
    pub memory: MemoryPlan,
    /// The target profile's GPU limits (GPU backends; `None` for CPU payloads and for GPU
    /// payloads of format versions before 3). Since format version 3.
    pub gpu: Option<GpuLimits>,
    /// Where temps live, when the host planned them (CPU payloads); `None`: every buffer apart.
    /// Since format version 4.
    pub arena: Option<Arena>,
    /// How many executions one timed sample takes (1 for every program `ekb build` writes):
    /// each execution after the poison, as a single one, the sample their times summed. A
    /// payload with 2 does exactly twice the work of the same payload with 1, each execution
    /// from the same state, which the measurement's known-effect check times against it (`ekb
    /// bench --self-check`). Since format version 6.
    pub repeat: u32,
}

/// The largest [`Manifest::repeat`] a payload may ask for.
pub const MAX_REPEAT: u32 = 64;

/// Decodes the manifest of a payload of format `version` (one of
/// [`super::SUPPORTED_VERSIONS`]) from the start of `bytes`, as the current types; returns it
/// with the bytes that follow it.
pub(super) fn decode(version: u16, bytes: &[u8]) -> Result<(Manifest, &[u8]), postcard::Error> {
    match version {
        1 => postcard::take_from_bytes::<v1::Manifest>(bytes).map(|(m, rest)| (m.into(), rest)),
        2 => postcard::take_from_bytes::<v2::Manifest>(bytes).map(|(m, rest)| (m.into(), rest)),
        3 => postcard::take_from_bytes::<v3::Manifest>(bytes).map(|(m, rest)| (m.into(), rest)),
        4 => postcard::take_from_bytes::<v4::Manifest>(bytes).map(|(m, rest)| (m.into(), rest)),
        5 => postcard::take_from_bytes::<v5::Manifest>(bytes).map(|(m, rest)| (m.into(), rest)),
        _ => postcard::take_from_bytes::<Manifest>(bytes),
    }
}

/// The manifest of format version 5: today's without the repeat count.
mod v5 {
    use super::*;

    #[derive(Deserialize)]
    pub struct Manifest {
        generator_version: u32,
        producer: String,
        task: String,
        target: String,
        backend: Backend,
        kernels: Vec<KernelDecl>,
        buffers: Vec<BufferDecl>,
        plan: Vec<LaunchStep>,
        prepare_steps: u32,
        seeds: Vec<u64>,
        tolerance: Tolerance,
        expected: Vec<ExpectedOutput>,
        timing: TimingSettings,
        memory: MemoryPlan,
        gpu: Option<GpuLimits>,
        arena: Option<Arena>,
    }

    impl From<Manifest> for super::Manifest {
        fn from(m: Manifest) -> super::Manifest {
            super::Manifest {
                generator_version: m.generator_version,
                producer: m.producer,
                task: m.task,
                target: m.target,
                backend: m.backend,
                kernels: m.kernels,
                buffers: m.buffers,
                plan: m.plan,
                prepare_steps: m.prepare_steps,
                seeds: m.seeds,
                tolerance: m.tolerance,
                expected: m.expected,
                timing: m.timing,
                memory: m.memory,
                gpu: m.gpu,
                arena: m.arena,
                repeat: 1,
            }
        }
    }
}

/// The manifest of format version 4: version 5's without prepare steps.
mod v4 {
    use super::*;

    #[derive(Deserialize)]
    pub struct Manifest {
        generator_version: u32,
        producer: String,
        task: String,
        target: String,
        backend: Backend,
        kernels: Vec<KernelDecl>,
        buffers: Vec<BufferDecl>,
        plan: Vec<LaunchStep>,
        seeds: Vec<u64>,
        tolerance: Tolerance,
        expected: Vec<ExpectedOutput>,
        timing: TimingSettings,
        memory: MemoryPlan,
        gpu: Option<GpuLimits>,
        arena: Option<Arena>,
    }

    impl From<Manifest> for super::Manifest {
        fn from(m: Manifest) -> super::Manifest {
            super::Manifest {
                generator_version: m.generator_version,
                producer: m.producer,
                task: m.task,
                target: m.target,
                backend: m.backend,
                kernels: m.kernels,
                buffers: m.buffers,
                plan: m.plan,
                prepare_steps: 0,
                seeds: m.seeds,
                tolerance: m.tolerance,
                expected: m.expected,
                timing: m.timing,
                memory: m.memory,
                gpu: m.gpu,
                arena: m.arena,
                repeat: 1,
            }
        }
    }
}

/// The manifest of format version 3: version 4's without the temp arena.
mod v3 {
    use super::*;

    #[derive(Deserialize)]
    pub struct Manifest {
        generator_version: u32,
        producer: String,
        task: String,
        target: String,
        backend: Backend,
        kernels: Vec<KernelDecl>,
        buffers: Vec<BufferDecl>,
        plan: Vec<LaunchStep>,
        seeds: Vec<u64>,
        tolerance: Tolerance,
        expected: Vec<ExpectedOutput>,
        timing: TimingSettings,
        memory: MemoryPlan,
        gpu: Option<GpuLimits>,
    }

    impl From<Manifest> for super::Manifest {
        fn from(m: Manifest) -> super::Manifest {
            super::Manifest {
                generator_version: m.generator_version,
                producer: m.producer,
                task: m.task,
                target: m.target,
                backend: m.backend,
                kernels: m.kernels,
                buffers: m.buffers,
                plan: m.plan,
                prepare_steps: 0,
                seeds: m.seeds,
                tolerance: m.tolerance,
                expected: m.expected,
                timing: m.timing,
                memory: m.memory,
                gpu: m.gpu,
                arena: None,
                repeat: 1,
            }
        }
    }
}

/// The manifest of format version 2: version 3's, except that a GPU launch had no opt-in flag
/// (`Launch::Grid { grid, block, shared_bytes }`) and there were no GPU limits.
mod v2 {
    use super::*;

    #[derive(Deserialize)]
    pub enum Launch {
        Cpu,
        Grid { grid: [u32; 3], block: [u32; 3], shared_bytes: u32 },
    }

    #[derive(Deserialize)]
    pub struct KernelDecl {
        name: String,
        symbol: String,
        blob: u32,
        params: Vec<ParamDecl>,
        launch: Launch,
        allocs: Vec<AllocDecl>,
    }

    impl From<KernelDecl> for super::KernelDecl {
        fn from(k: KernelDecl) -> super::KernelDecl {
            let launch = match k.launch {
                Launch::Cpu => super::Launch::Cpu,
                Launch::Grid { grid, block, shared_bytes } => {
                    super::Launch::Grid { grid, block, shared_bytes, shared_optin: false }
                }
            };
            super::KernelDecl {
                name: k.name,
                symbol: k.symbol,
                blob: k.blob,
                params: k.params,
                launch,
                allocs: k.allocs,
            }
        }
    }

    #[derive(Deserialize)]
    pub struct Manifest {
        generator_version: u32,
        producer: String,
        task: String,
        target: String,
        backend: Backend,
        kernels: Vec<KernelDecl>,
        buffers: Vec<BufferDecl>,
        plan: Vec<LaunchStep>,
        seeds: Vec<u64>,
        tolerance: Tolerance,
        expected: Vec<ExpectedOutput>,
        timing: TimingSettings,
        memory: MemoryPlan,
    }

    impl From<Manifest> for super::Manifest {
        fn from(m: Manifest) -> super::Manifest {
            super::Manifest {
                generator_version: m.generator_version,
                producer: m.producer,
                task: m.task,
                target: m.target,
                backend: m.backend,
                kernels: m.kernels.into_iter().map(Into::into).collect(),
                buffers: m.buffers,
                plan: m.plan,
                prepare_steps: 0,
                seeds: m.seeds,
                tolerance: m.tolerance,
                expected: m.expected,
                timing: m.timing,
                memory: m.memory,
                gpu: None,
                arena: None,
                repeat: 1,
            }
        }
    }
}

/// The manifest of format version 1: version 2's, except that a buffer's values could only
/// come from a seeded initialiser (`init: Option<Init>` where version 2 has `source`).
mod v1 {
    use super::*;

    #[derive(Deserialize)]
    pub struct BufferDecl {
        name: String,
        dtype: DType,
        shape: Vec<u64>,
        role: Role,
        init: Option<Init>,
    }

    #[derive(Deserialize)]
    pub struct Manifest {
        generator_version: u32,
        producer: String,
        task: String,
        target: String,
        backend: Backend,
        kernels: Vec<v2::KernelDecl>,
        buffers: Vec<BufferDecl>,
        plan: Vec<LaunchStep>,
        seeds: Vec<u64>,
        tolerance: Tolerance,
        expected: Vec<ExpectedOutput>,
        timing: TimingSettings,
        memory: MemoryPlan,
    }

    impl From<Manifest> for super::Manifest {
        fn from(m: Manifest) -> super::Manifest {
            let buffers = m
                .buffers
                .into_iter()
                .map(|b| super::BufferDecl {
                    name: b.name,
                    dtype: b.dtype,
                    shape: b.shape,
                    role: b.role,
                    source: b.init.map(Source::Seeded),
                })
                .collect();
            super::Manifest {
                generator_version: m.generator_version,
                producer: m.producer,
                task: m.task,
                target: m.target,
                backend: m.backend,
                kernels: m.kernels.into_iter().map(Into::into).collect(),
                buffers,
                plan: m.plan,
                prepare_steps: 0,
                seeds: m.seeds,
                tolerance: m.tolerance,
                expected: m.expected,
                timing: m.timing,
                memory: m.memory,
                gpu: None,
                arena: None,
                repeat: 1,
            }
        }
    }
}

/// Element count of a shape, `None` on u64 overflow.
pub(crate) fn numel(shape: &[u64]) -> Option<u64> {
    shape.iter().try_fold(1u64, |acc, &d| acc.checked_mul(d))
}

/// `f32[2,3]` style text of a dtype and shape, for errors.
fn type_text(dtype: DType, shape: &[u64]) -> String {
    let dims: Vec<String> = shape.iter().map(u64::to_string).collect();
    format!("{dtype}[{}]", dims.join(","))
}

fn index(field: impl FnOnce() -> String, index: u32, len: usize) -> Result<usize, PayloadError> {
    let i = index as usize;
    if i < len {
        Ok(i)
    } else {
        Err(PayloadError::IndexOutOfRange { field: field(), index: u64::from(index), len: len as u64 })
    }
}

fn bad(field: String, value: String, rule: &'static str) -> PayloadError {
    PayloadError::BadValue { field, value, rule }
}

/// Checks an initialiser against its buffer with the seeded generator's own rules (so the two
/// cannot drift apart): a one-element fill for the parameters and the dtype, and the
/// `kaiming_uniform` bound for the shape.
fn check_init(init: &Init, dtype: DType, shape: &[u64]) -> Result<(), InitError> {
    match (dtype, init) {
        (DType::F32 | DType::F16, Init::KaimingUniform) => {
            // A dimension beyond usize makes the fan-in overflow, which is reported as such.
            let shape: Vec<usize> = shape.iter().map(|&d| usize::try_from(d).unwrap_or(usize::MAX)).collect();
            seeded::kaiming_bound(&shape).map(|_| ())
        }
        (DType::F32 | DType::F16, _) => seeded::fill_f32(init, &[1], 0, &mut [0.0]),
        (DType::I32, _) => seeded::fill_i32(init, 0, &mut [0]),
        (DType::I8, _) => seeded::fill_i8(init, 0, &mut [0]),
    }
}

fn unique_names<'m>(field: &str, names: impl Iterator<Item = &'m str>) -> Result<(), PayloadError> {
    let mut seen = BTreeSet::new();
    for (i, name) in names.enumerate() {
        if name.is_empty() {
            return Err(bad(format!("{field}[{i}].name"), String::new(), "names are not empty"));
        }
        if !seen.insert(name) {
            return Err(PayloadError::Duplicate { field: format!("{field}[{i}].name"), name: name.into() });
        }
    }
    Ok(())
}

impl Manifest {
    /// Checks every cross-reference and value of the manifest against itself and the blob
    /// table (`blobs`, as [`super::PayloadView::blob_entries`] gives it). The first
    /// problem found is returned.
    pub fn validate(&self, blobs: &[BlobEntry]) -> Result<(), PayloadError> {
        if self.generator_version != GENERATOR_VERSION {
            return Err(PayloadError::GeneratorVersion {
                found: self.generator_version,
                supported: GENERATOR_VERSION,
            });
        }
        self.validate_settings()?;
        self.validate_gpu()?;
        unique_names("kernels", self.kernels.iter().map(|k| k.name.as_str()))?;
        unique_names("buffers", self.buffers.iter().map(|b| b.name.as_str()))?;
        self.validate_kernels(blobs)?;
        self.validate_buffers(blobs)?;
        self.validate_plan()?;
        self.validate_prepare()?;
        self.validate_arena()?;
        self.validate_expected(blobs)
    }

    /// The first and last plan step naming each buffer (both included), by buffer index;
    /// `None` for a buffer no step names. Indices must be in range (checked by
    /// `validate_plan`).
    pub fn lifetimes(&self) -> Vec<Option<(usize, usize)>> {
        let mut live: Vec<Option<(usize, usize)>> = alloc::vec![None; self.buffers.len()];
        for (s, step) in self.plan.iter().enumerate() {
            for &a in &step.args {
                let slot = &mut live[a as usize];
                *slot = Some(slot.map_or((s, s), |(first, _)| (first, s)));
            }
        }
        live
    }

    /// The plan's prepare steps: its first [`Manifest::prepare_steps`] (at most the whole plan).
    pub fn prepare_plan(&self) -> &[LaunchStep] {
        &self.plan[..self.prepare_len()]
    }

    /// The steps of one execution: the plan after its prepare steps.
    pub fn execution_plan(&self) -> &[LaunchStep] {
        &self.plan[self.prepare_len()..]
    }

    /// The count of prepare steps, at most the plan's length.
    fn prepare_len(&self) -> usize {
        usize::try_from(self.prepare_steps).map_or(self.plan.len(), |n| n.min(self.plan.len()))
    }

    /// Per buffer index: whether a prepare step writes it (a prepared temp, in a validated
    /// manifest). Kernel and buffer indices out of range are passed over, so any manifest may
    /// ask.
    pub fn prepared(&self) -> Vec<bool> {
        let mut prepared = alloc::vec![false; self.buffers.len()];
        for step in self.prepare_plan() {
            let Some(kernel) = self.kernels.get(step.kernel as usize) else { continue };
            for (&arg, param) in step.args.iter().zip(&kernel.params) {
                if let (true, Some(p)) = (param.access.writes(), prepared.get_mut(arg as usize)) {
                    *p = true;
                }
            }
        }
        prepared
    }

    /// Per buffer index: whether it is a parameter that only prepare steps read (at least one
    /// names it, no execution step does): what the parameter holds is spent once those steps
    /// ran, so the arena may place it ([`Arena`]). Indices out of range are passed over.
    pub fn consumed_params(&self) -> Vec<bool> {
        let n = self.prepare_len();
        let mut named = alloc::vec![(false, false); self.buffers.len()];
        for (s, step) in self.plan.iter().enumerate() {
            for &a in &step.args {
                if let Some((by_prepare, by_execution)) = named.get_mut(a as usize) {
                    *(if s < n { by_prepare } else { by_execution }) = true;
                }
            }
        }
        self.buffers
            .iter()
            .zip(named)
            .map(|(b, (by_prepare, by_execution))| b.role == Role::Param && by_prepare && !by_execution)
            .collect()
    }

    /// The prepare steps: none in a GPU payload; fewer than the plan's steps; each reads only
    /// params and temps an earlier prepare step wrote, and writes only temps; no execution step
    /// writes a temp a prepare step wrote. So what they compute depends on the parameters alone
    /// (no work on the inputs escapes the timed executions), and it stays as they left it.
    /// Indices and arities must be valid (checked by `validate_plan`).
    fn validate_prepare(&self) -> Result<(), PayloadError> {
        let n = self.prepare_steps;
        if n == 0 {
            return Ok(());
        }
        if n as usize >= self.plan.len() {
            return Err(bad(
                "prepare_steps".into(),
                format!("{n} of a plan of {} step(s)", self.plan.len()),
                "fewer than the plan's steps (at least one step is an execution step)",
            ));
        }
        let what =
            |buf: &BufferDecl, access: Access| format!("`{}` ({}, {})", buf.name, buf.role, access.name());
        let mut prepared = alloc::vec![false; self.buffers.len()];
        for (s, step) in self.prepare_plan().iter().enumerate() {
            let params = &self.kernels[step.kernel as usize].params;
            for (a, (&arg, param)) in step.args.iter().zip(params).enumerate() {
                let buf = &self.buffers[arg as usize];
                if param.access != Access::Out && buf.role != Role::Param && !prepared[arg as usize] {
                    return Err(bad(
                        format!("plan[{s}].args[{a}]"),
                        what(buf, param.access),
                        "a prepare step reads only params and temps an earlier prepare step wrote",
                    ));
                }
                if param.access.writes() && buf.role != Role::Temp {
                    return Err(bad(
                        format!("plan[{s}].args[{a}]"),
                        what(buf, param.access),
                        "a prepare step writes only temps",
                    ));
                }
            }
            for (&arg, param) in step.args.iter().zip(params) {
                prepared[arg as usize] |= param.access.writes();
            }
        }
        for (s, step) in self.plan.iter().enumerate().skip(n as usize) {
            let params = &self.kernels[step.kernel as usize].params;
            for (a, (&arg, param)) in step.args.iter().zip(params).enumerate() {
                if param.access.writes() && prepared[arg as usize] {
                    return Err(bad(
                        format!("plan[{s}].args[{a}]"),
                        what(&self.buffers[arg as usize], param.access),
                        "execution steps only read the temps prepare steps wrote",
                    ));
                }
            }
        }
        Ok(())
    }

    /// The arena's slots: temps of this manifest, each once, aligned and inside the arena, and
    /// no two sharing bytes while both are live (a sweep over the plan's steps keeping the live
    /// slots ordered by offset, so the work grows as `n log n`, never `n²`).
    fn validate_arena(&self) -> Result<(), PayloadError> {
        let Some(arena) = &self.arena else { return Ok(()) };
        if self.backend != Backend::CpuLlvm {
            return Err(bad(
                "arena".into(),
                "a temp arena".into(),
                "absent for GPU payloads (their runtimes allocate every buffer apart)",
            ));
        }
        if usize::try_from(arena.bytes).is_err() {
            return Err(bad(
                "arena.bytes".into(),
                format!("{}", arena.bytes),
                "a size that fits in the address space",
            ));
        }
        let mut placed = BTreeSet::new();
        let prepared = self.prepared();
        let consumed = self.consumed_params();
        // (first step, slot index) to add, (last step, slot index) to drop after.
        let lives = self.lifetimes();
        let mut starts = Vec::new();
        for (i, slot) in arena.slots.iter().enumerate() {
            let field = || format!("arena.slots[{i}]");
            let b = index(|| format!("arena.slots[{i}].buffer"), slot.buffer, self.buffers.len())?;
            let buf = &self.buffers[b];
            if buf.role != Role::Temp && !consumed[b] {
                return Err(bad(
                    field(),
                    format!("`{}` ({})", buf.name, buf.role),
                    "only temps, and params that only prepare steps read, live in the arena",
                ));
            }
            if prepared[b] {
                return Err(bad(
                    field(),
                    format!("`{}` (written by a prepare step)", buf.name),
                    "prepared temps live apart (they keep their values across executions)",
                ));
            }
            if !placed.insert(b) {
                return Err(PayloadError::Duplicate { field: field(), name: buf.name.clone() });
            }
            if slot.offset % ARENA_ALIGN != 0 {
                return Err(bad(
                    format!("{}.offset", field()),
                    format!("{}", slot.offset),
                    "a multiple of 64",
                ));
            }
            // Validated buffers have a size.
            let size = buf.size_bytes().unwrap_or(u64::MAX);
            if slot.offset.checked_add(size).is_none_or(|end| end > arena.bytes) {
                return Err(bad(
                    field(),
                    format!("`{}` at bytes {}..+{size}", buf.name, slot.offset),
                    "inside the arena (offset + size <= arena.bytes)",
                ));
            }
            if let (Some((first, last)), true) = (lives[b], size > 0) {
                starts.push((first, last, i));
            }
        }
        starts.sort_unstable();
        // Live slots by (offset, slot index) -> end offset; ends by (last step, slot index).
        let mut live: BTreeMap<(u64, usize), u64> = BTreeMap::new();
        let mut ends: BTreeSet<(usize, usize)> = BTreeSet::new();
        for (first, last, i) in starts {
            while let Some(&(l, j)) = ends.first().filter(|(l, _)| *l < first) {
                ends.remove(&(l, j));
                live.remove(&(arena.slots[j].offset, j));
            }
            let slot = arena.slots[i];
            let end = slot.offset + self.buffers[slot.buffer as usize].size_bytes().unwrap_or(0);
            let before = live.range(..(slot.offset, i)).next_back().filter(|(_, &e)| e > slot.offset);
            let after = live.range((slot.offset, i)..).next().filter(|((o, _), _)| *o < end);
            if let Some(((_, j), _)) = before.or(after) {
                let other = &self.buffers[arena.slots[*j].buffer as usize];
                return Err(bad(
                    format!("arena.slots[{i}]"),
                    format!(
                        "`{}` shares bytes with `{}` (arena.slots[{j}]) while both are live at step {first}",
                        self.buffers[slot.buffer as usize].name, other.name
                    ),
                    "temps that share bytes are never live at the same plan step",
                ));
            }
            live.insert((slot.offset, i), end);
            ends.insert((last, i));
        }
        Ok(())
    }

    fn validate_settings(&self) -> Result<(), PayloadError> {
        let Tolerance { atol, rtol } = self.tolerance;
        for (name, v) in [("tolerance.atol", atol), ("tolerance.rtol", rtol)] {
            // Written so that NaN fails.
            if !(v >= 0.0 && v.is_finite()) {
                return Err(bad(name.into(), format!("{v}"), "a finite number >= 0"));
            }
        }
        let t = &self.timing;
        if t.max_samples == 0 {
            return Err(bad("timing.max_samples".into(), "0".into(), "at least 1"));
        }
        if t.min_samples > t.max_samples {
            return Err(bad(
                "timing.min_samples".into(),
                format!("{}", t.min_samples),
                "at most timing.max_samples",
            ));
        }
        if !(t.target_rse >= 0.0 && t.target_rse.is_finite()) {
            return Err(bad("timing.target_rse".into(), format!("{}", t.target_rse), "a finite number >= 0"));
        }
        if self.seeds.is_empty() {
            return Err(PayloadError::Missing { field: "seeds".into(), what: "at least one seed".into() });
        }
        if self.plan.is_empty() {
            return Err(PayloadError::Missing {
                field: "plan".into(),
                what: "at least one launch step".into(),
            });
        }
        if !(1..=MAX_REPEAT).contains(&self.repeat) {
            return Err(bad("repeat".into(), format!("{}", self.repeat), "from 1 to 64"));
        }
        Ok(())
    }

    fn validate_gpu(&self) -> Result<(), PayloadError> {
        match (&self.gpu, self.backend) {
            (None, _) => Ok(()),
            (Some(g), _) if g.max_threads_per_block == 0 => {
                Err(bad("gpu.max_threads_per_block".into(), "0".into(), "at least 1"))
            }
            (Some(_), Backend::CpuLlvm) => Err(bad(
                "gpu".into(),
                "a GPU limits section".into(),
                "absent for cpu-llvm payloads (only GPU backends carry GPU limits)",
            )),
            (Some(_), Backend::Cuda | Backend::OpenCl) => Ok(()),
        }
    }

    fn validate_kernels(&self, blobs: &[BlobEntry]) -> Result<(), PayloadError> {
        for (k, kernel) in self.kernels.iter().enumerate() {
            if kernel.symbol.is_empty() {
                return Err(bad(format!("kernels[{k}].symbol"), String::new(), "symbols are not empty"));
            }
            let b = index(|| format!("kernels[{k}].blob"), kernel.blob, blobs.len())?;
            if !self.backend.accepts_code(blobs[b].kind) {
                return Err(PayloadError::WrongBlobKind {
                    field: format!("kernels[{k}].blob"),
                    blob: kernel.blob,
                    found: blobs[b].kind,
                    expected: self.backend.name(),
                });
            }
            match (&kernel.launch, self.backend) {
                (Launch::Cpu, Backend::CpuLlvm) => {}
                (Launch::Grid { grid, block, shared_optin, .. }, Backend::Cuda | Backend::OpenCl) => {
                    if grid.contains(&0) || block.contains(&0) {
                        return Err(bad(
                            format!("kernels[{k}].launch"),
                            format!("grid {grid:?} block {block:?}"),
                            "every grid and block dimension is at least 1",
                        ));
                    }
                    if *shared_optin && self.backend != Backend::Cuda {
                        return Err(bad(
                            format!("kernels[{k}].launch.shared_optin"),
                            "true".into(),
                            "false outside CUDA (only CUDA opts in to shared memory above the static limit)",
                        ));
                    }
                }
                (launch, backend) => {
                    let rule = if backend == Backend::CpuLlvm {
                        "cpu-llvm kernels use the Cpu launch"
                    } else {
                        "GPU kernels use a Grid launch"
                    };
                    return Err(bad(format!("kernels[{k}].launch"), format!("{launch:?}"), rule));
                }
            }
            for (p, param) in kernel.params.iter().enumerate() {
                if numel(&param.shape).and_then(|n| n.checked_mul(param.dtype.size_bytes())).is_none() {
                    return Err(bad(
                        format!("kernels[{k}].params[{p}].shape"),
                        format!("{:?}", param.shape),
                        "a size in bytes that fits in u64",
                    ));
                }
            }
        }
        Ok(())
    }

    fn validate_buffers(&self, blobs: &[BlobEntry]) -> Result<(), PayloadError> {
        for (i, b) in self.buffers.iter().enumerate() {
            if b.size_bytes().is_none_or(|n| usize::try_from(n).is_err()) {
                return Err(bad(
                    format!("buffers[{i}].shape"),
                    format!("{:?}", b.shape),
                    "a size in bytes that fits in the address space",
                ));
            }
            let field = || format!("buffers[{i}].source");
            match (&b.source, b.role) {
                (Some(Source::Seeded(init)), Role::Input | Role::Param) => {
                    check_init(init, b.dtype, &b.shape)
                        .map_err(|error| PayloadError::Init { field: field(), error })?
                }
                (Some(Source::Data { blob, .. }), Role::Param) => {
                    let entry = &blobs[index(field, *blob, blobs.len())?];
                    if entry.kind != BlobKind::ParamData {
                        return Err(PayloadError::WrongBlobKind {
                            field: field(),
                            blob: *blob,
                            found: entry.kind,
                            expected: BlobKind::ParamData.name(),
                        });
                    }
                    // Checked above: the size exists.
                    let want = b.size_bytes().unwrap_or(u64::MAX);
                    if entry.region.len != want {
                        return Err(PayloadError::SizeMismatch {
                            field: field(),
                            expected: want,
                            found: entry.region.len,
                        });
                    }
                }
                (Some(source @ Source::Data { .. }), _) => {
                    return Err(bad(
                        field(),
                        format!("{source:?}"),
                        "only params take their values from a data blob",
                    ));
                }
                (None, Role::Input | Role::Param) => {
                    return Err(PayloadError::Missing {
                        field: field(),
                        what: format!("the source of the values of {} `{}`", b.role, b.name),
                    });
                }
                (None, Role::Output | Role::Temp) => {}
                (Some(source), Role::Output | Role::Temp) => {
                    return Err(bad(field(), format!("{source:?}"), "only inputs and params have a source"));
                }
            }
        }
        Ok(())
    }

    fn validate_plan(&self) -> Result<(), PayloadError> {
        for (s, step) in self.plan.iter().enumerate() {
            let k = index(|| format!("plan[{s}].kernel"), step.kernel, self.kernels.len())?;
            let kernel = &self.kernels[k];
            if step.args.len() != kernel.params.len() {
                return Err(PayloadError::ArityMismatch {
                    field: format!("plan[{s}].args"),
                    kernel: kernel.name.clone(),
                    params: kernel.params.len() as u64,
                    args: step.args.len() as u64,
                });
            }
            // Buffer index -> (first argument position, whether any use so far writes it).
            let mut seen = BTreeMap::new();
            for (a, (&arg, param)) in step.args.iter().zip(&kernel.params).enumerate() {
                let field = || format!("plan[{s}].args[{a}]");
                let buf = &self.buffers[index(field, arg, self.buffers.len())?];
                // A parameter may view the buffer under another shape of its element count.
                let count = |shape: &[u64]| shape.iter().product::<u64>();
                if buf.dtype != param.dtype || count(&buf.shape) != count(&param.shape) {
                    return Err(PayloadError::TypeMismatch {
                        field: field(),
                        expected: format!(
                            "{} (parameter `{}` of `{}`)",
                            type_text(param.dtype, &param.shape),
                            param.name,
                            kernel.name
                        ),
                        found: format!("{} (buffer `{}`)", type_text(buf.dtype, &buf.shape), buf.name),
                    });
                }
                if param.access.writes() && buf.role.is_generated() {
                    return Err(PayloadError::WritesReadOnly {
                        field: field(),
                        buffer: buf.name.clone(),
                        role: buf.role,
                        access: param.access,
                    });
                }
                // The kernel ABI: a buffer passed twice in one step is only read.
                match seen.insert(arg, (a, param.access.writes())) {
                    Some((first, written)) if written || param.access.writes() => {
                        return Err(PayloadError::Aliased {
                            field: field(),
                            buffer: buf.name.clone(),
                            first: format!("plan[{s}].args[{first}]"),
                        });
                    }
                    _ => {}
                }
            }
        }
        Ok(())
    }

    fn validate_expected(&self, blobs: &[BlobEntry]) -> Result<(), PayloadError> {
        // The (seed, output) pairs in order; `expected` must list exactly these, in this order.
        let outputs: Vec<usize> =
            self.buffers.iter().enumerate().filter(|(_, b)| b.role == Role::Output).map(|(i, _)| i).collect();
        if outputs.is_empty() {
            return Err(PayloadError::Missing {
                field: "buffers".into(),
                what: "at least one output".into(),
            });
        }
        // Every entry names a seed in range and an output buffer.
        let check = |e: usize, entry: &ExpectedOutput| -> Result<(usize, usize), PayloadError> {
            let s = index(|| format!("expected[{e}].seed"), entry.seed, self.seeds.len())?;
            let b = index(|| format!("expected[{e}].buffer"), entry.buffer, self.buffers.len())?;
            if self.buffers[b].role != Role::Output {
                return Err(bad(
                    format!("expected[{e}].buffer"),
                    format!("`{}` ({})", self.buffers[b].name, self.buffers[b].role),
                    "expected values are for outputs",
                ));
            }
            Ok((s, b))
        };
        let duplicate = |e: usize, (s, b): (usize, usize)| PayloadError::Duplicate {
            field: format!("expected[{e}]"),
            name: format!("seeds[{s}] `{}`", self.buffers[b].name),
        };
        let mut entries = self.expected.iter().enumerate();
        for s in 0..self.seeds.len() {
            for &o in &outputs {
                let missing = || PayloadError::Missing {
                    field: "expected".into(),
                    what: format!("the expected `{}` for seeds[{s}]", self.buffers[o].name),
                };
                let Some((e, entry)) = entries.next() else { return Err(missing()) };
                let got = check(e, entry)?;
                if got < (s, o) {
                    return Err(duplicate(e, got));
                }
                if got > (s, o) {
                    return Err(missing());
                }
                let blob = &blobs[index(|| format!("expected[{e}].blob"), entry.blob, blobs.len())?];
                if blob.kind != BlobKind::ExpectedOutput {
                    return Err(PayloadError::WrongBlobKind {
                        field: format!("expected[{e}].blob"),
                        blob: entry.blob,
                        found: blob.kind,
                        expected: BlobKind::ExpectedOutput.name(),
                    });
                }
                // Buffers were validated first: the size exists.
                let want = self.buffers[o].size_bytes().unwrap_or(u64::MAX);
                if blob.region.len != want {
                    return Err(PayloadError::SizeMismatch {
                        field: format!("expected[{e}].blob"),
                        expected: want,
                        found: blob.region.len,
                    });
                }
            }
        }
        if let Some((e, entry)) = entries.next() {
            return Err(duplicate(e, check(e, entry)?));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dtype_codes_and_sizes_are_stable() {
        // The postcard code of each dtype is its position: appending I8, then F16, left the
        // earlier codes as they were, so older manifests decode unchanged.
        for (d, code, size) in
            [(DType::F32, 0u8, 4u64), (DType::I32, 1, 4), (DType::I8, 2, 1), (DType::F16, 3, 2)]
        {
            assert_eq!(postcard::to_allocvec(&d).unwrap(), [code], "{d}");
            assert_eq!(postcard::from_bytes::<DType>(&[code]).unwrap(), d);
            assert_eq!(d.size_bytes(), size, "{d}");
        }
        assert!(postcard::from_bytes::<DType>(&[4]).is_err(), "no fifth dtype");
        assert_eq!(DType::I8.name(), "i8");
        assert_eq!(DType::F16.name(), "f16");
    }

    #[test]
    fn i8_inits_are_checked_against_the_i8_range() {
        assert!(check_init(&Init::RandInt { lo: -128, hi: 128 }, DType::I8, &[4]).is_ok());
        assert_eq!(
            check_init(&Init::RandInt { lo: 0, hi: 200 }, DType::I8, &[4]),
            Err(InitError::BadRandInt { lo: 0, hi: 200, dtype: "i8" })
        );
        assert!(check_init(&Init::Uniform { lo: 0.0, hi: 1.0 }, DType::I8, &[4]).is_err());
    }
}
