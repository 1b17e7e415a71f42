//! Runs an L1 module of GPU kernels through CUDA: the emitted CUDA C compiled by NVRTC for the
//! device's architecture, run with the CUDA driver (feature `cuda`).
//!
//! `libcuda` and `libnvrtc` are loaded at run time (cudarc's dynamic loading); [`Gpu::open`]
//! probes for both first, so a machine without them gets a [`Diagnostic`], not a panic, and the
//! crate builds and tests everywhere else with no GPU. A run: read the device's limits and check
//! every launch against them before anything is launched, compile (a failed compile is a
//! diagnostic with NVRTC's log), load the module, copy inputs in (temps and outputs poisoned like
//! the interpreter's), and launch the plan in order on one stream, each kernel between two events
//! created with timing enabled; a launch with `shared_optin` raises the function's dynamic shared
//! memory limit first (`docs/gpu.md`). The report has each kernel's time and its registers,
//! local (spill) and static shared bytes as the driver reports them.

use crate::emit::module_source;
use crate::{kernels, Dialect, DYNAMIC_SHARED_ALIGN};
use cudarc::driver::sys::{CUdevice_attribute, CUevent_flags, CUfunction_attribute_enum};
use cudarc::driver::{CudaContext, CudaSlice, CudaStream, LaunchConfig, PushKernelArg};
use cudarc::nvrtc::{compile_ptx_with_opts, CompileError, CompileOptions};
use ekb_ir::l1::gpu::{check_limits, GpuLimits, Limit};
use ekb_ir::l1::interp::{POISON_F32_BITS, POISON_I32};
use ekb_ir::l1::verify::verify;
use ekb_ir::l1::{BufferRole, Module};
use ekb_ir::target::GpuApi;
use ekb_ir::tensor::{BufData, Buffer};
use ekb_ir::{DType, Diagnostic};
use std::collections::HashMap;
use std::sync::Arc;

/// Static shared memory per block every CUDA device allows without the opt-in.
pub const STATIC_SHARED_BYTES: u64 = 48 * 1024;

/// What the driver says about the device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceInfo {
    pub name: String,
    /// `sm_XY`, from the compute capability.
    pub arch: String,
    pub max_threads_per_block: u64,
    pub max_block_dims: [u64; 3],
    pub max_grid_dims: [u64; 3],
    pub shared_bytes_per_block: u64,
    pub shared_bytes_optin: u64,
    pub total_mem_bytes: u64,
}

impl DeviceInfo {
    /// The device's limits, each naming the attribute it came from.
    pub fn limits(&self) -> GpuLimits {
        let src = |a: &str| format!("from CUDA device `{}` ({a})", self.name);
        let axes = ["X", "Y", "Z"];
        let dims = |v: [u64; 3], what: &str| {
            [0, 1, 2].map(|i| {
                Some(Limit::new(v[i], src(&format!("CU_DEVICE_ATTRIBUTE_MAX_{what}_DIM_{}", axes[i]))))
            })
        };
        GpuLimits {
            api: GpuApi::Cuda,
            threads_per_block: Limit::new(
                self.max_threads_per_block,
                src("CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK"),
            ),
            block_dims: dims(self.max_block_dims, "BLOCK"),
            grid_dims: dims(self.max_grid_dims, "GRID"),
            shared_bytes_per_block: Limit::new(
                self.shared_bytes_per_block,
                src("CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK"),
            ),
            shared_bytes_optin: Some(Limit::new(
                self.shared_bytes_optin,
                src("CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN"),
            )),
            private_bytes_per_thread: None,
        }
    }
}

/// One plan step as it ran.
#[derive(Debug, Clone, PartialEq)]
pub struct KernelRun {
    pub kernel: String,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    /// Dynamic shared memory passed at launch.
    pub dynamic_shared_bytes: u32,
    /// Time between the events around the launch, in milliseconds.
    pub time_ms: f32,
    /// `CU_FUNC_ATTRIBUTE_NUM_REGS`.
    pub registers: i32,
    /// `CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES` (per thread).
    pub local_bytes: i32,
    /// `CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES` (static, per block).
    pub shared_bytes: i32,
}

/// The outcome of a run.
#[derive(Debug, Clone)]
pub struct Report {
    pub device: DeviceInfo,
    pub steps: Vec<KernelRun>,
    pub outputs: HashMap<String, Buffer>,
}

/// A CUDA device with its context and stream.
pub struct Gpu {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    pub info: DeviceInfo,
}

fn cu_err(what: &str, e: impl std::fmt::Debug) -> Diagnostic {
    Diagnostic::error(format!("CUDA: {what} failed: {e:?}"))
}

enum DeviceBuf {
    F32(CudaSlice<f32>),
    I32(CudaSlice<i32>),
}

impl Gpu {
    /// Device 0, after checking that the driver and NVRTC libraries can be loaded.
    pub fn open() -> Result<Gpu, Diagnostic> {
        // SAFETY: the probes only try to load the libraries.
        if !unsafe { cudarc::driver::sys::is_culib_present() } {
            return Err(Diagnostic::error("CUDA: the driver library (libcuda) cannot be loaded")
                .with_hint("run on a machine with an NVIDIA driver"));
        }
        if !unsafe { cudarc::nvrtc::sys::is_culib_present() } {
            return Err(Diagnostic::error("CUDA: NVRTC (libnvrtc) cannot be loaded")
                .with_hint("install the CUDA toolkit's NVRTC, or put its directory on LD_LIBRARY_PATH"));
        }
        let ctx = CudaContext::new(0).map_err(|e| cu_err("opening device 0", e))?;
        let attr = |a: CUdevice_attribute| {
            ctx.attribute(a).map(|v| v as u64).map_err(|e| cu_err(&format!("reading {a:?}"), e))
        };
        use CUdevice_attribute::*;
        let (major, minor) =
            ctx.compute_capability().map_err(|e| cu_err("reading the compute capability", e))?;
        let info = DeviceInfo {
            name: ctx.name().map_err(|e| cu_err("reading the device name", e))?,
            arch: format!("sm_{major}{minor}"),
            max_threads_per_block: attr(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)?,
            max_block_dims: [
                attr(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X)?,
                attr(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y)?,
                attr(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z)?,
            ],
            max_grid_dims: [
                attr(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X)?,
                attr(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y)?,
                attr(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z)?,
            ],
            shared_bytes_per_block: attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK)?,
            shared_bytes_optin: attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)?,
            total_mem_bytes: ctx.total_mem().map_err(|e| cu_err("reading the memory size", e))? as u64,
        };
        let stream = ctx.default_stream();
        Ok(Gpu { ctx, stream, info })
    }

    /// The findings of the module's launches against this device's limits.
    pub fn legality(&self, m: &Module) -> Vec<Diagnostic> {
        check_limits(m, &self.info.limits())
    }

    /// Runs the plan of `m` on `inputs` with the kernels the emitter writes for it.
    pub fn run(&self, m: &Module, inputs: &HashMap<String, Buffer>) -> Result<Report, Diagnostic> {
        if let Some(first) = verify(m, None).into_iter().find(Diagnostic::is_error) {
            return Err(first.with_note(format!("module {} does not verify, so it cannot run", m.name)));
        }
        let mut illegal = self.legality(m).into_iter();
        if let Some(first) = illegal.next() {
            let mut d = first.with_note("found before launch: nothing was launched");
            for more in illegal {
                d = d.with_note(format!("also: {}", more.message));
            }
            return Err(d);
        }
        let launches = kernels(m)?;
        let source = module_source(m, Dialect::Cuda)?;
        let opts = CompileOptions {
            options: vec![format!("--gpu-architecture={}", self.info.arch)],
            ..Default::default()
        };
        let ptx = compile_ptx_with_opts(&source, opts).map_err(|e| match e {
            CompileError::CompileError { log, .. } => {
                Diagnostic::error(format!("NVRTC compile of module {} failed", m.name))
                    .with_note(format!("compile log:\n{}", log.to_string_lossy().trim_end()))
            }
            other => cu_err("NVRTC", other),
        })?;
        let module = self.ctx.load_module(ptx).map_err(|e| cu_err("loading the module", e))?;
        let mut bufs: HashMap<String, DeviceBuf> = HashMap::new();
        for b in &m.buffers {
            let data = match b.role {
                BufferRole::Input => {
                    let given = inputs
                        .get(&b.name)
                        .ok_or_else(|| Diagnostic::error(format!("missing input `{}` ({})", b.name, b.ty)))?;
                    if given.ty != b.ty {
                        return Err(Diagnostic::error(format!(
                            "input `{}` is {} but the module declares it {}",
                            b.name, given.ty, b.ty
                        )));
                    }
                    given.data.clone()
                }
                BufferRole::Output | BufferRole::Temp => match b.ty.dtype {
                    DType::F32 => BufData::F32(vec![f32::from_bits(POISON_F32_BITS); b.ty.numel().max(1)]),
                    DType::I32 => BufData::I32(vec![POISON_I32; b.ty.numel().max(1)]),
                },
            };
            let what = format!("copying buffer `{}` to the device", b.name);
            let dev = match data {
                BufData::F32(v) if v.is_empty() => {
                    DeviceBuf::F32(self.stream.clone_htod(&[0f32]).map_err(|e| cu_err(&what, e))?)
                }
                BufData::I32(v) if v.is_empty() => {
                    DeviceBuf::I32(self.stream.clone_htod(&[0i32]).map_err(|e| cu_err(&what, e))?)
                }
                BufData::F32(v) => DeviceBuf::F32(self.stream.clone_htod(&v).map_err(|e| cu_err(&what, e))?),
                BufData::I32(v) => DeviceBuf::I32(self.stream.clone_htod(&v).map_err(|e| cu_err(&what, e))?),
            };
            bufs.insert(b.name.clone(), dev);
        }
        let mut steps = Vec::new();
        let mut events = Vec::new();
        for (i, run) in m.plan.iter().enumerate() {
            let k = launches
                .iter()
                .find(|k| k.name == run.kernel)
                .ok_or_else(|| Diagnostic::error(format!("run {i} names unknown kernel `{}`", run.kernel)))?;
            let func = module
                .load_function(&k.name)
                .map_err(|e| cu_err(&format!("loading kernel {}", k.name), e))?;
            let dynamic = if k.launch.shared_optin {
                k.launch.shared_bytes.div_ceil(DYNAMIC_SHARED_ALIGN) * DYNAMIC_SHARED_ALIGN
            } else {
                0
            };
            if dynamic > STATIC_SHARED_BYTES {
                func.set_attribute(
                    CUfunction_attribute_enum::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                    dynamic as i32,
                )
                .map_err(|e| {
                    cu_err(&format!("opting kernel {} in to {dynamic} bytes of shared memory", k.name), e)
                })?;
            }
            let attr = |a: CUfunction_attribute_enum| {
                func.get_attribute(a).map_err(|e| cu_err(&format!("{a:?}"), e))
            };
            let (g, b) = (k.launch.grid, k.launch.block);
            let cfg = LaunchConfig {
                grid_dim: (g[0], g[1], g[2]),
                block_dim: (b[0], b[1], b[2]),
                shared_mem_bytes: dynamic as u32,
            };
            let mut builder = self.stream.launch_builder(&func);
            for a in &run.args {
                match &bufs[&a.name] {
                    DeviceBuf::F32(s) => builder.arg(s),
                    DeviceBuf::I32(s) => builder.arg(s),
                };
            }
            builder.record_kernel_launch(CUevent_flags::CU_EVENT_DEFAULT);
            // SAFETY: the arguments are the kernel's buffers in parameter order, of its types (the
            // plan was verified), and the configuration is the launch the kernel was written for.
            let ev = unsafe { builder.launch(cfg) }
                .map_err(|e| cu_err(&format!("launching kernel {}", k.name), e))?;
            events.push(ev);
            steps.push(KernelRun {
                kernel: k.name.clone(),
                grid: g,
                block: b,
                dynamic_shared_bytes: dynamic as u32,
                time_ms: 0.0,
                registers: attr(CUfunction_attribute_enum::CU_FUNC_ATTRIBUTE_NUM_REGS)?,
                local_bytes: attr(CUfunction_attribute_enum::CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES)?,
                shared_bytes: attr(CUfunction_attribute_enum::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)?,
            });
        }
        self.stream.synchronize().map_err(|e| cu_err("running the plan", e))?;
        for (step, ev) in steps.iter_mut().zip(&events) {
            if let Some((start, end)) = ev {
                step.time_ms = start.elapsed_ms(end).map_err(|e| cu_err("reading event times", e))?;
            }
        }
        let mut outputs = HashMap::new();
        for b in m.buffers.iter().filter(|b| b.role == BufferRole::Output) {
            let n = b.ty.numel();
            let what = format!("copying output `{}` back", b.name);
            let data = match &bufs[&b.name] {
                DeviceBuf::F32(s) => {
                    let mut v = self.stream.clone_dtoh(s).map_err(|e| cu_err(&what, e))?;
                    v.truncate(n);
                    BufData::F32(v)
                }
                DeviceBuf::I32(s) => {
                    let mut v = self.stream.clone_dtoh(s).map_err(|e| cu_err(&what, e))?;
                    v.truncate(n);
                    BufData::I32(v)
                }
            };
            outputs.insert(b.name.clone(), Buffer { ty: b.ty.clone(), data });
        }
        Ok(Report { device: self.info.clone(), steps, outputs })
    }
}
