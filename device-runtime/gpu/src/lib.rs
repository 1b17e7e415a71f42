//! `ekb-gpu`: a plan of GPU kernels run on a device, the one implementation behind the board
//! runtime's GPU executors (`ekb-rt`, features `opencl` and `cuda`) and the host-side runners of
//! the GPU adapter (`ekb-gpu-c`).
//!
//! A [`Plan`] is what both callers have in common: program sources ([`Code`]: OpenCL C, CUDA C or
//! PTX), kernels (entry symbol, program, launch geometry), buffers (sizes in bytes) and steps
//! (a kernel and the buffers bound to its parameters, in order; `docs/gpu.md` has the ABI).
//! [`open`] loads the driver, takes the first device, builds every program (OpenCL on the
//! device; CUDA C with NVRTC for the device's architecture), reads each kernel's resources from
//! the driver and allocates the buffers; the [`Executor`] it returns writes, fills and reads
//! buffers and runs the steps in order on one in-order queue or stream, timing each kernel with
//! the driver's clock (OpenCL profiling events, CUDA events). [`compile`] builds and reports
//! without allocating, [`device`] only describes the device.
//!
//! Every buffer is allocated with [`GUARD_BYTES`] of guard before and after its data, filled
//! with [`GUARD_WORD`] (a NaN as f32, so a kernel that reads a guard poisons its result);
//! [`Executor::check_guards`] reports every guard word a kernel overwrote.
//!
//! What it must keep true: the driver libraries are only loaded by [`open`], [`compile`] and
//! [`device`] (a process that never calls them never initialises a driver, so a runtime can
//! fork first); a missing library, driver or device is a [`GpuError`] of kind
//! [`ErrorKind::Unavailable`], never a panic; a failed build carries the driver's log; kernels
//! only ever receive the data regions of the executor's own buffers.

#[cfg(feature = "cuda")]
pub mod cuda;
#[cfg(feature = "opencl")]
pub mod opencl;

use serde::{Deserialize, Serialize};
use std::fmt;

/// Bytes of guard before and after every buffer's data (a multiple of every base-address
/// alignment OpenCL devices ask for in practice; a larger alignment enlarges it).
pub const GUARD_BYTES: u64 = 4096;
/// The word guards hold: `0x7fa5a5a5`, a quiet NaN as f32.
pub const GUARD_WORD: u32 = 0x7fa5_a5a5;
/// Kernels enqueued between two flushes of an OpenCL queue (Mali drivers fail with
/// `CL_OUT_OF_HOST_MEMORY` when too many wait unflushed).
pub const FLUSH_EVERY: usize = 8;
/// Static shared memory per block every CUDA device allows without the opt-in.
pub const CUDA_STATIC_SHARED_BYTES: u64 = 48 * 1024;
/// Alignment of CUDA's dynamic shared memory as the emitter lays it out (`docs/gpu.md`).
pub const DYNAMIC_SHARED_ALIGN: u64 = 16;

/// The GPU programming interfaces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Api {
    OpenCl,
    Cuda,
}

impl Api {
    pub const fn name(self) -> &'static str {
        match self {
            Api::OpenCl => "OpenCL",
            Api::Cuda => "CUDA",
        }
    }

    /// The clock kernel times come from, as reports name it.
    pub const fn clock(self) -> &'static str {
        match self {
            Api::OpenCl => "opencl-profiling",
            Api::Cuda => "cuda-events",
        }
    }

    /// The cargo feature that builds this interface in.
    pub const fn feature(self) -> &'static str {
        match self {
            Api::OpenCl => "opencl",
            Api::Cuda => "cuda",
        }
    }

    /// Whether this build can drive the interface.
    pub const fn compiled_in(self) -> bool {
        match self {
            Api::OpenCl => cfg!(feature = "opencl"),
            Api::Cuda => cfg!(feature = "cuda"),
        }
    }
}

impl fmt::Display for Api {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One program's code.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Code {
    /// OpenCL C, built on the device.
    OpenClSource(String),
    /// CUDA C, compiled by NVRTC for the device's architecture.
    CudaSource(String),
    /// PTX, loaded by the CUDA driver (which compiles it for the device).
    Ptx(String),
    /// A CUBIN for the device's exact architecture (what NVRTC made of CUDA C when the payload
    /// was loaded), loaded by the driver as it is: no compile at all.
    Cubin(Vec<u8>),
}

impl Code {
    pub fn api(&self) -> Api {
        match self {
            Code::OpenClSource(_) => Api::OpenCl,
            Code::CudaSource(_) | Code::Ptx(_) | Code::Cubin(_) => Api::Cuda,
        }
    }
}

/// A kernel as launched: its entry symbol in program `program`, the grid and block extents
/// (x, y, z), the dynamic shared memory passed at launch, and whether it opts in to shared
/// memory above [`CUDA_STATIC_SHARED_BYTES`] (CUDA: the function's
/// `CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES` is raised first).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KernelSpec {
    pub symbol: String,
    pub program: usize,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub dynamic_shared_bytes: u32,
    pub shared_optin: bool,
}

impl KernelSpec {
    pub fn threads_per_block(&self) -> u64 {
        self.block.iter().map(|&b| u64::from(b)).product()
    }
}

/// One step: run kernel `kernel` with these buffers as its arguments, in parameter order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Step {
    pub kernel: usize,
    pub args: Vec<usize>,
}

/// Everything needed to run a program of kernels.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Plan {
    pub programs: Vec<Code>,
    pub kernels: Vec<KernelSpec>,
    /// Size of each buffer in bytes (a buffer of 0 bytes still gets a valid allocation).
    pub buffers: Vec<u64>,
    pub steps: Vec<Step>,
    /// How many of the first steps are prepare steps: [`Executor::prepare`] runs them (once
    /// per binding of the parameters), [`Executor::execute`] the steps after them.
    pub prepare_steps: usize,
}

impl Plan {
    /// This plan with every CUDA C program replaced by the CUBIN `built` holds for it (a build
    /// of this plan on a device of the same architecture), so loading it compiles nothing.
    pub fn with_built(&self, built: &Built) -> Plan {
        let mut plan = self.clone();
        for (code, cubin) in plan.programs.iter_mut().zip(&built.cubins) {
            if let (Code::CudaSource(_), Some(cubin)) = (&*code, cubin) {
                *code = Code::Cubin(cubin.clone());
            }
        }
        plan
    }

    /// The interface the plan's programs are for; an error when there are none or they mix.
    pub fn api(&self) -> Result<Api, GpuError> {
        let mut apis = self.programs.iter().map(Code::api);
        let Some(first) = apis.next() else {
            return Err(GpuError::new(ErrorKind::Driver, "the plan has no program"));
        };
        if apis.any(|a| a != first) {
            return Err(GpuError::new(ErrorKind::Driver, "the plan mixes OpenCL and CUDA programs"));
        }
        Ok(first)
    }

    /// Checks that every index is in range, so the executors may index with them.
    fn check(&self) -> Result<(), GpuError> {
        let bad = |what: String| Err(GpuError::new(ErrorKind::Driver, what));
        for (i, k) in self.kernels.iter().enumerate() {
            if k.program >= self.programs.len() {
                return bad(format!("kernel {i} names program {} of {}", k.program, self.programs.len()));
            }
            if k.grid.contains(&0) || k.block.contains(&0) {
                return bad(format!("kernel `{}` has an empty grid or block", k.symbol));
            }
        }
        if self.prepare_steps > self.steps.len() {
            return bad(format!(
                "{} prepare steps in a plan of {} steps",
                self.prepare_steps,
                self.steps.len()
            ));
        }
        for (i, s) in self.steps.iter().enumerate() {
            if s.kernel >= self.kernels.len() {
                return bad(format!("step {i} names kernel {} of {}", s.kernel, self.kernels.len()));
            }
            if let Some(a) = s.args.iter().find(|&&a| a >= self.buffers.len()) {
                return bad(format!("step {i} names buffer {a} of {}", self.buffers.len()));
            }
        }
        Ok(())
    }
}

/// A device limit, named so that findings can quote the driver query it came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    ThreadsPerBlock,
    /// The block extent along axis 0 (x), 1 (y) or 2 (z).
    BlockDim(usize),
    /// The grid extent along an axis (CUDA).
    GridDim(usize),
    SharedPerBlock,
    SharedOptin,
    MaxAlloc,
    GlobalMemory,
}

/// What the driver says about the device.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceInfo {
    pub api: Api,
    /// `CL_DEVICE_NAME` or the CUDA device name.
    pub name: String,
    /// `CL_DEVICE_VERSION` and the driver version, or the CUDA driver's version.
    pub version: String,
    /// `sm_XY` from the compute capability, or the OpenCL C version.
    pub arch: String,
    /// Compute units (OpenCL) or streaming multiprocessors (CUDA).
    pub compute_units: u32,
    pub max_threads_per_block: u64,
    pub max_block_dims: [u64; 3],
    /// CUDA only.
    pub max_grid_dims: Option<[u64; 3]>,
    /// Static shared (OpenCL local) memory per block.
    pub shared_bytes_per_block: u64,
    /// Shared memory per block with the opt-in (CUDA only).
    pub shared_bytes_optin: Option<u64>,
    /// 32-bit registers per block (CUDA only).
    pub registers_per_block: Option<u64>,
    pub global_mem_bytes: u64,
    /// The largest single allocation (`CL_DEVICE_MAX_MEM_ALLOC_SIZE`; CUDA: global memory).
    pub max_alloc_bytes: u64,
    /// Whether the device's memory is the host's (`CL_DEVICE_HOST_UNIFIED_MEMORY`,
    /// `CU_DEVICE_ATTRIBUTE_INTEGRATED`).
    pub unified_memory: bool,
}

impl DeviceInfo {
    /// The driver query a limit comes from (`CL_DEVICE_MAX_WORK_GROUP_SIZE`, ...).
    pub fn query(&self, limit: Limit) -> String {
        const AXES: [&str; 3] = ["X", "Y", "Z"];
        match (self.api, limit) {
            (Api::OpenCl, Limit::ThreadsPerBlock) => "CL_DEVICE_MAX_WORK_GROUP_SIZE".into(),
            (Api::OpenCl, Limit::BlockDim(_) | Limit::GridDim(_)) => "CL_DEVICE_MAX_WORK_ITEM_SIZES".into(),
            (Api::OpenCl, Limit::SharedPerBlock | Limit::SharedOptin) => "CL_DEVICE_LOCAL_MEM_SIZE".into(),
            (Api::OpenCl, Limit::MaxAlloc) => "CL_DEVICE_MAX_MEM_ALLOC_SIZE".into(),
            (Api::OpenCl, Limit::GlobalMemory) => "CL_DEVICE_GLOBAL_MEM_SIZE".into(),
            (Api::Cuda, Limit::ThreadsPerBlock) => "CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK".into(),
            (Api::Cuda, Limit::BlockDim(a)) => {
                format!("CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_{}", AXES[a.min(2)])
            }
            (Api::Cuda, Limit::GridDim(a)) => format!("CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_{}", AXES[a.min(2)]),
            (Api::Cuda, Limit::SharedPerBlock) => "CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK".into(),
            (Api::Cuda, Limit::SharedOptin) => "CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN".into(),
            (Api::Cuda, Limit::MaxAlloc | Limit::GlobalMemory) => "cuDeviceTotalMem".into(),
        }
    }

    /// `from OpenCL device `NAME` (QUERY)`: where a limit comes from, as findings say it.
    pub fn source(&self, limit: Limit) -> String {
        format!("from {} device `{}` ({})", self.api, self.name, self.query(limit))
    }

    /// Every figure as (name, value), for device descriptions (`ekb-rt info`).
    pub fn attributes(&self) -> Vec<(String, String)> {
        let mut out = vec![
            ("version".to_string(), self.version.clone()),
            ("arch".to_string(), self.arch.clone()),
            (self.query(Limit::ThreadsPerBlock), self.max_threads_per_block.to_string()),
        ];
        match self.api {
            Api::OpenCl => {
                let dims: Vec<String> = self.max_block_dims.iter().map(u64::to_string).collect();
                out.push((self.query(Limit::BlockDim(0)), dims.join(" ")));
            }
            Api::Cuda => {
                for a in 0..3 {
                    out.push((self.query(Limit::BlockDim(a)), self.max_block_dims[a].to_string()));
                }
                if let Some(g) = self.max_grid_dims {
                    for (a, v) in g.iter().enumerate() {
                        out.push((self.query(Limit::GridDim(a)), v.to_string()));
                    }
                }
            }
        }
        out.push((self.query(Limit::SharedPerBlock), self.shared_bytes_per_block.to_string()));
        if let Some(v) = self.shared_bytes_optin {
            out.push((self.query(Limit::SharedOptin), v.to_string()));
        }
        if let Some(v) = self.registers_per_block {
            out.push(("CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK".into(), v.to_string()));
        }
        if self.api == Api::OpenCl {
            out.push((self.query(Limit::MaxAlloc), self.max_alloc_bytes.to_string()));
        }
        out.push(("unified memory".into(), self.unified_memory.to_string()));
        out
    }
}

/// What the driver says about one kernel once it is built.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum KernelResources {
    OpenCl {
        /// `CL_KERNEL_WORK_GROUP_SIZE`: the most work-items per group this kernel allows.
        work_group_size: u64,
        /// `CL_KERNEL_LOCAL_MEM_SIZE`.
        local_mem_bytes: u64,
        /// `CL_KERNEL_PRIVATE_MEM_SIZE` (per work-item).
        private_mem_bytes: u64,
    },
    Cuda {
        /// `CU_FUNC_ATTRIBUTE_NUM_REGS` (per thread).
        registers: u64,
        /// `CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES` (per thread: spills and local arrays).
        local_bytes: u64,
        /// `CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES` (static, per block).
        shared_bytes: u64,
        /// `CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK`: the most threads a block of this kernel
        /// may have (its registers limit it).
        max_threads_per_block: u64,
    },
}

impl KernelResources {
    /// The most threads per block the driver allows for this kernel, and the query it says so.
    pub fn max_threads(&self) -> (u64, &'static str) {
        match *self {
            KernelResources::OpenCl { work_group_size, .. } => (work_group_size, "CL_KERNEL_WORK_GROUP_SIZE"),
            KernelResources::Cuda { max_threads_per_block, .. } => {
                (max_threads_per_block, "CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK")
            }
        }
    }

    /// Every figure as (driver query, value).
    pub fn attributes(&self) -> Vec<(&'static str, u64)> {
        match *self {
            KernelResources::OpenCl { work_group_size, local_mem_bytes, private_mem_bytes } => vec![
                ("CL_KERNEL_WORK_GROUP_SIZE", work_group_size),
                ("CL_KERNEL_LOCAL_MEM_SIZE", local_mem_bytes),
                ("CL_KERNEL_PRIVATE_MEM_SIZE", private_mem_bytes),
            ],
            KernelResources::Cuda { registers, local_bytes, shared_bytes, max_threads_per_block } => vec![
                ("CU_FUNC_ATTRIBUTE_NUM_REGS", registers),
                ("CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES", local_bytes),
                ("CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES", shared_bytes),
                ("CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK", max_threads_per_block),
            ],
        }
    }
}

/// A plan's programs as built: the device, each program's build log (in program order; often
/// empty when the build succeeds), each kernel's resources (in kernel order), and the CUBIN
/// that NVRTC made of each CUDA C program for the device's architecture (`None` for other
/// programs), so that a later process can load the same code without compiling it again
/// ([`Plan::with_built`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Built {
    pub device: DeviceInfo,
    pub build_logs: Vec<String>,
    pub kernels: Vec<KernelResources>,
    pub cubins: Vec<Option<Vec<u8>>>,
}

/// One execution of every step, as the driver's clock measured it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Execution {
    /// Each step's kernel time (end − start of its event), nanoseconds; empty after a
    /// [`Pass::Whole`] on CUDA.
    pub step_ns: Vec<u64>,
    /// From the start of the first kernel to the end of the last, nanoseconds (a CUDA graph's:
    /// from an event before its launch to one after it).
    pub span_ns: u64,
}

/// Guard words of one buffer that a kernel overwrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct GuardHit {
    pub buffer: usize,
    /// Byte offset of the first changed guard word from the start of the buffer's data
    /// (negative: before it; at or past the size: after it).
    pub offset: i64,
    /// Changed bytes (a multiple of 4).
    pub bytes: u64,
}

/// What went wrong, as the runtime's failure classes tell it apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ErrorKind {
    /// No driver library, no driver, or no device.
    Unavailable,
    /// A program did not build; the error carries the build or NVRTC log.
    Build,
    /// The driver refused a launch: too many threads per block, too much shared memory, too
    /// many resources.
    IllegalLaunch,
    /// An allocation failed for lack of memory.
    OutOfMemory,
    /// A kernel accessed memory it may not (CUDA's illegal or misaligned address).
    MemoryFault,
    /// Any other failure of the driver.
    Driver,
}

/// A failure of the driver or of the plan, with the driver's words.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GpuError {
    pub kind: ErrorKind,
    pub message: String,
    /// The build log (OpenCL) or NVRTC's log, for [`ErrorKind::Build`].
    pub log: Option<String>,
}

impl GpuError {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> GpuError {
        GpuError { kind, message: message.into(), log: None }
    }
}

impl fmt::Display for GpuError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)?;
        match &self.log {
            Some(log) if !log.trim().is_empty() => write!(f, "\nbuild log:\n{}", log.trim_end()),
            _ => Ok(()),
        }
    }
}

impl std::error::Error for GpuError {}

/// A plan, built and allocated on a device.
pub trait Executor {
    /// The device, the build logs and the kernels' resources.
    fn built(&self) -> &Built;
    /// Copies `bytes` into the data of buffer `buffer` (at most its size).
    fn write(&mut self, buffer: usize, bytes: &[u8]) -> Result<(), GpuError>;
    /// Copies the data of buffer `buffer` into `out` (at most its size).
    fn read(&mut self, buffer: usize, out: &mut [u8]) -> Result<(), GpuError>;
    /// Fills the data of buffer `buffer` with the 4-byte `word`.
    fn fill(&mut self, buffer: usize, word: u32) -> Result<(), GpuError>;
    /// The guard words of every buffer that no longer hold [`GUARD_WORD`] (they are set when
    /// the buffers are made; a hit is reported until the buffers are made again).
    fn check_guards(&mut self) -> Result<Vec<GuardHit>, GpuError>;
    /// Runs the prepare steps ([`Plan::prepare_steps`]) once, in order, waiting after each (as
    /// [`Pass::Checked`]): what they write keeps its values across executions until the next
    /// call. Each step's time in [`Execution::step_ns`].
    fn prepare(&mut self) -> Result<Execution, GpuError>;
    /// Runs every execution step (those after the prepare steps) once, in order, and waits for
    /// the last, as `how` says.
    fn execute(&mut self, how: Pass) -> Result<Execution, GpuError>;
}

/// How [`Executor::execute`] runs a plan's steps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pass {
    /// Waits after every step, so an error names the step that caused it (correctness runs).
    Checked,
    /// Back to back, each step between its own timing events: [`Execution::step_ns`] holds
    /// every step's time, and the span runs from the first step's start to the last's end.
    Steps,
    /// The plan as one unit, as a program runs it: on CUDA a graph of the steps, captured on
    /// first use and replayed, between two events (the span; no step times); on OpenCL as
    /// [`Pass::Steps`] (every step enqueued, the queue flushed as it goes).
    Whole,
}

/// Builds and allocates `plan` on the device of its interface (for OpenCL the one
/// `EKB_OPENCL_DEVICE` names, else the first).
pub fn open(plan: &Plan) -> Result<Box<dyn Executor>, GpuError> {
    plan.check()?;
    match plan.api()? {
        #[cfg(feature = "opencl")]
        Api::OpenCl => Ok(Box::new(opencl::ClExecutor::new(plan)?)),
        #[cfg(feature = "cuda")]
        Api::Cuda => Ok(Box::new(cuda::CuExecutor::new(plan)?)),
        #[allow(unreachable_patterns)]
        api => Err(not_built(api)),
    }
}

/// Builds `plan`'s programs and reads its kernels' resources, allocating nothing.
pub fn compile(plan: &Plan) -> Result<Built, GpuError> {
    plan.check()?;
    match plan.api()? {
        #[cfg(feature = "opencl")]
        Api::OpenCl => opencl::compile(plan),
        #[cfg(feature = "cuda")]
        Api::Cuda => cuda::compile(plan),
        #[allow(unreachable_patterns)]
        api => Err(not_built(api)),
    }
}

/// The device of `api` that `open` would use.
pub fn device(api: Api) -> Result<DeviceInfo, GpuError> {
    match api {
        #[cfg(feature = "opencl")]
        Api::OpenCl => opencl::ClDevice::open().map(|d| d.info),
        #[cfg(feature = "cuda")]
        Api::Cuda => cuda::CuDevice::open().map(|d| d.info),
        #[allow(unreachable_patterns)]
        api => Err(not_built(api)),
    }
}

fn not_built(api: Api) -> GpuError {
    GpuError::new(
        ErrorKind::Unavailable,
        format!("this build has no {api} support (cargo feature `{}`)", api.feature()),
    )
}

/// The guard hits of one buffer, given its guard words before and after the data.
pub(crate) fn guard_hits(buffer: usize, data_bytes: u64, before: &[u32], after: &[u32]) -> Vec<GuardHit> {
    let mut hits = Vec::new();
    let changed = |words: &[u32]| -> Option<(usize, usize)> {
        let first = words.iter().position(|&w| w != GUARD_WORD)?;
        Some((first, words.iter().filter(|&&w| w != GUARD_WORD).count()))
    };
    if let Some((first, n)) = changed(before) {
        let offset = first as i64 * 4 - (before.len() as i64 * 4);
        hits.push(GuardHit { buffer, offset, bytes: n as u64 * 4 });
    }
    if let Some((first, n)) = changed(after) {
        hits.push(GuardHit { buffer, offset: data_bytes as i64 + first as i64 * 4, bytes: n as u64 * 4 });
    }
    hits
}

/// The device allocation of a buffer of `bytes`: guard, data (at least 4 bytes, rounded up to
/// whole words), guard.
pub(crate) fn padded(bytes: u64, guard: u64) -> (u64, u64) {
    let data = bytes.max(4).next_multiple_of(4);
    (data, guard + data + guard)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guard_hits_say_where_and_how_much() {
        let clean = vec![GUARD_WORD; 4];
        assert!(guard_hits(0, 16, &clean, &clean).is_empty());
        // The last word before the data and two words after it, the first at the end.
        let mut before = clean.clone();
        before[3] = 0;
        let mut after = clean.clone();
        after[0] = 1;
        after[2] = 2;
        assert_eq!(
            guard_hits(2, 16, &before, &after),
            [GuardHit { buffer: 2, offset: -4, bytes: 4 }, GuardHit { buffer: 2, offset: 16, bytes: 8 }]
        );
    }

    #[test]
    fn buffers_are_padded_to_words_with_a_guard_on_each_side() {
        assert_eq!(padded(0, 4096), (4, 8196));
        assert_eq!(padded(10, 4096), (12, 8204));
        assert_eq!(padded(64, 128), (64, 320));
    }

    #[test]
    fn a_built_plan_replaces_only_the_cuda_sources_that_were_built() {
        let plan = Plan {
            programs: vec![Code::CudaSource("a".into()), Code::Ptx("b".into()), Code::CudaSource("c".into())],
            kernels: Vec::new(),
            buffers: Vec::new(),
            steps: Vec::new(),
            prepare_steps: 0,
        };
        let info = DeviceInfo {
            api: Api::Cuda,
            name: "H".into(),
            version: String::new(),
            arch: "sm_90".into(),
            compute_units: 1,
            max_threads_per_block: 1024,
            max_block_dims: [1024, 1024, 64],
            max_grid_dims: None,
            shared_bytes_per_block: 49152,
            shared_bytes_optin: None,
            registers_per_block: None,
            global_mem_bytes: 1 << 30,
            max_alloc_bytes: 1 << 30,
            unified_memory: false,
        };
        let built = Built {
            device: info,
            build_logs: vec![String::new(); 3],
            kernels: Vec::new(),
            cubins: vec![Some(b"cubin of a".to_vec()), None, None],
        };
        let got = plan.with_built(&built).programs;
        let want = [Code::Cubin(b"cubin of a".to_vec()), Code::Ptx("b".into()), Code::CudaSource("c".into())];
        assert_eq!(got, want);
    }

    #[test]
    fn limits_name_their_queries() {
        let info = DeviceInfo {
            api: Api::Cuda,
            name: "H".into(),
            version: String::new(),
            arch: "sm_90".into(),
            compute_units: 132,
            max_threads_per_block: 1024,
            max_block_dims: [1024, 1024, 64],
            max_grid_dims: Some([2147483647, 65535, 65535]),
            shared_bytes_per_block: 49152,
            shared_bytes_optin: Some(232448),
            registers_per_block: Some(65536),
            global_mem_bytes: 1 << 30,
            max_alloc_bytes: 1 << 30,
            unified_memory: false,
        };
        assert_eq!(
            info.source(Limit::BlockDim(2)),
            "from CUDA device `H` (CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z)"
        );
        let attrs = info.attributes();
        assert!(attrs
            .contains(&("CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN".into(), "232448".into())));
        let cl = DeviceInfo { api: Api::OpenCl, ..info };
        assert_eq!(cl.query(Limit::SharedPerBlock), "CL_DEVICE_LOCAL_MEM_SIZE");
        assert_eq!(Api::OpenCl.clock(), "opencl-profiling");
    }

    #[test]
    fn plans_with_indices_out_of_range_are_refused() {
        let k = KernelSpec {
            symbol: "k".into(),
            program: 1,
            grid: [1; 3],
            block: [1; 3],
            dynamic_shared_bytes: 0,
            shared_optin: false,
        };
        let plan = Plan {
            programs: vec![Code::OpenClSource(String::new())],
            kernels: vec![k.clone()],
            buffers: vec![4],
            steps: vec![Step { kernel: 0, args: vec![0] }],
            prepare_steps: 0,
        };
        assert_eq!(plan.check().unwrap_err().message, "kernel 0 names program 1 of 1");
        let prepared =
            Plan { prepare_steps: 2, kernels: vec![KernelSpec { program: 0, ..k.clone() }], ..plan.clone() };
        assert_eq!(prepared.check().unwrap_err().message, "2 prepare steps in a plan of 1 steps");
        let mixed =
            Plan { programs: vec![Code::OpenClSource(String::new()), Code::Ptx(String::new())], ..plan };
        assert_eq!(mixed.api().unwrap_err().message, "the plan mixes OpenCL and CUDA programs");
    }
}
