//! The CUDA executor (feature `cuda`): an NVIDIA GPU through the CUDA driver API.
//!
//! `libcuda` and `libnvrtc` are loaded at run time (cudarc's dynamic loading); both are probed
//! before the first call into them, so a machine without them gets an
//! [`ErrorKind::Unavailable`] error, not a panic. CUDA C is compiled by NVRTC for the device's
//! own architecture (`--gpu-architecture=sm_XY` from its compute capability), on the device, to a
//! CUBIN the driver loads without compiling (a later process gets that CUBIN); PTX is handed to
//! the driver, which compiles it. Device 0 is used, with its primary context and one stream:
//! each step is launched between two events created with timing enabled. A kernel that opts in
//! to more than [`CUDA_STATIC_SHARED_BYTES`] of dynamic shared memory gets its function's
//! `CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES` raised to it before its first launch.
//! A [`Pass::Whole`] replays a CUDA graph of every step, captured on a stream of its own the
//! first time and kept with the executor (the steps' arguments never change); the work queued
//! on the default stream (copies, the poison) is waited for before the replay.
//! Buffers are plain device allocations of guard, data and guard; kernels receive the address
//! of the data.
//!
//! What it must keep true: nothing calls into a library the probe did not find; every device
//! allocation is freed when the executor drops; errors name the step that caused them when the
//! steps are synchronised one by one.

use crate::{
    guard_hits, padded, Api, Built, Code, DeviceInfo, ErrorKind, Execution, Executor, GpuError, GuardHit,
    KernelResources, Pass, Plan, CUDA_STATIC_SHARED_BYTES, GUARD_BYTES, GUARD_WORD,
};
use cudarc::driver::result::{self, DriverError};
use cudarc::driver::sys::{
    self, CUdevice_attribute, CUevent_flags, CUfunction_attribute_enum, CUgraphInstantiate_flags, CUresult,
    CUstreamCaptureMode,
};
use cudarc::driver::{
    CudaContext, CudaFunction, CudaGraph, CudaModule, CudaStream, LaunchConfig, PushKernelArg,
};
use cudarc::nvrtc::result::{self as nvrtc, NvrtcError};
use cudarc::nvrtc::{sys as nvrtc_sys, Ptx};
use std::ffi::{CStr, CString};
use std::sync::Arc;

/// The error kind of a CUDA driver error.
fn kind_of(e: &DriverError) -> ErrorKind {
    use CUresult::*;
    match e.0 {
        CUDA_ERROR_NO_DEVICE
        | CUDA_ERROR_NOT_INITIALIZED
        | CUDA_ERROR_INVALID_DEVICE
        | CUDA_ERROR_NOT_FOUND => ErrorKind::Unavailable,
        CUDA_ERROR_INVALID_PTX
        | CUDA_ERROR_INVALID_IMAGE
        | CUDA_ERROR_NO_BINARY_FOR_GPU
        | CUDA_ERROR_UNSUPPORTED_PTX_VERSION
        | CUDA_ERROR_JIT_COMPILER_NOT_FOUND => ErrorKind::Build,
        CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES | CUDA_ERROR_INVALID_VALUE => ErrorKind::IllegalLaunch,
        CUDA_ERROR_OUT_OF_MEMORY => ErrorKind::OutOfMemory,
        CUDA_ERROR_ILLEGAL_ADDRESS | CUDA_ERROR_MISALIGNED_ADDRESS | CUDA_ERROR_INVALID_ADDRESS_SPACE => {
            ErrorKind::MemoryFault
        }
        _ => ErrorKind::Driver,
    }
}

fn cu_err(what: &str, e: DriverError) -> GpuError {
    GpuError::new(kind_of(&e), format!("CUDA: {what} failed: {:?} ({e:?})", e.0))
}

/// Checks that the driver library can be loaded (and NVRTC, when `nvrtc`).
fn probe(nvrtc: bool) -> Result<(), GpuError> {
    // SAFETY: the probes only try to load the libraries.
    if !unsafe { sys::is_culib_present() } {
        return Err(GpuError::new(
            ErrorKind::Unavailable,
            "CUDA: the driver library (libcuda) cannot be loaded: run on a machine with an NVIDIA driver",
        ));
    }
    // SAFETY: as above.
    if nvrtc && !unsafe { cudarc::nvrtc::sys::is_culib_present() } {
        return Err(GpuError::new(
            ErrorKind::Unavailable,
            "CUDA: NVRTC (libnvrtc) cannot be loaded: install the CUDA toolkit's NVRTC, or put its directory on \
             LD_LIBRARY_PATH",
        ));
    }
    Ok(())
}

/// CUDA device 0 with its primary context and a stream.
pub struct CuDevice {
    stream: Arc<CudaStream>,
    ctx: Arc<CudaContext>,
    pub info: DeviceInfo,
}

impl CuDevice {
    /// Device 0, after checking that the driver library can be loaded.
    pub fn open() -> Result<CuDevice, GpuError> {
        probe(false)?;
        let ctx = CudaContext::new(0).map_err(|e| cu_err("opening device 0", e))?;
        // One stream, used from one thread: the executor orders everything itself.
        // SAFETY: no CudaSlice of this context exists yet.
        unsafe { ctx.disable_event_tracking() };
        let attr = |a: CUdevice_attribute| {
            ctx.attribute(a).map(|v| v.max(0) as u64).map_err(|e| cu_err(&format!("reading {a:?}"), e))
        };
        use CUdevice_attribute::*;
        let (major, minor) =
            ctx.compute_capability().map_err(|e| cu_err("reading the compute capability", e))?;
        let mut driver = 0i32;
        // SAFETY: a plain out-parameter.
        unsafe { sys::cuDriverGetVersion(&mut driver) }
            .result()
            .map_err(|e| cu_err("cuDriverGetVersion", e))?;
        let total = ctx.total_mem().map_err(|e| cu_err("reading the memory size", e))? as u64;
        let info = DeviceInfo {
            api: Api::Cuda,
            name: ctx.name().map_err(|e| cu_err("reading the device name", e))?,
            version: format!("CUDA driver {}.{}", driver / 1000, driver % 1000 / 10),
            arch: format!("sm_{major}{minor}"),
            compute_units: attr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)? as u32,
            max_threads_per_block: attr(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)?,
            max_block_dims: [
                attr(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X)?,
                attr(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y)?,
                attr(CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z)?,
            ],
            max_grid_dims: Some([
                attr(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X)?,
                attr(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y)?,
                attr(CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z)?,
            ]),
            shared_bytes_per_block: attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK)?,
            shared_bytes_optin: Some(attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)?),
            registers_per_block: Some(attr(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK)?),
            global_mem_bytes: total,
            max_alloc_bytes: total,
            unified_memory: attr(CU_DEVICE_ATTRIBUTE_INTEGRATED)? != 0,
        };
        let stream = ctx.default_stream();
        Ok(CuDevice { stream, ctx, info })
    }

    /// Loads (compiling CUDA C first) program `index`; the CUBIN NVRTC made of CUDA C.
    fn load(&self, index: usize, code: &Code) -> Result<(Arc<CudaModule>, Option<Vec<u8>>), GpuError> {
        let nul = |text: &str| {
            if text.contains('\0') {
                Err(GpuError::new(ErrorKind::Build, format!("program {index} holds a NUL byte")))
            } else {
                Ok(())
            }
        };
        let (image, made) = match code {
            Code::CudaSource(src) => {
                nul(src)?;
                probe(true)?;
                let cubin = nvrtc_cubin(src, &self.info.arch).map_err(|e| match e {
                    Nvrtc::Failed(log) => GpuError {
                        kind: ErrorKind::Build,
                        message: format!(
                            "NVRTC compile of program {index} for {} (`{}`) failed",
                            self.info.arch, self.info.name
                        ),
                        log: Some(log),
                    },
                    Nvrtc::Error(what, e) => {
                        GpuError::new(ErrorKind::Driver, format!("NVRTC: {what}: {e:?}"))
                    }
                })?;
                (Ptx::from_binary(cubin.clone()), Some(cubin))
            }
            Code::Ptx(text) => {
                nul(text)?;
                (Ptx::from_src(text.clone()), None)
            }
            Code::Cubin(bytes) => (Ptx::from_binary(bytes.clone()), None),
            Code::OpenClSource(_) => {
                return Err(GpuError::new(ErrorKind::Driver, format!("program {index} is not CUDA")));
            }
        };
        let module =
            self.ctx.load_module(image).map_err(|e| cu_err(&format!("loading program {index}"), e))?;
        Ok((module, made))
    }
}

/// Why NVRTC made no CUBIN: the program does not compile (its log), or a call failed.
enum Nvrtc {
    Failed(String),
    Error(&'static str, NvrtcError),
}

/// The CUBIN NVRTC makes of CUDA C `src` for `arch` (a real architecture, `sm_XY`, so the
/// image is SASS the driver loads without a JIT compile of PTX).
fn nvrtc_cubin(src: &str, arch: &str) -> Result<Vec<u8>, Nvrtc> {
    let text = CString::new(src).map_err(|_| Nvrtc::Failed("the source holds a NUL byte".into()))?;
    let prog = nvrtc::create_program(&text, None).map_err(|e| Nvrtc::Error("creating the program", e))?;
    // SAFETY: `prog` was created above and is destroyed once, at the end, whatever happened.
    let made = unsafe {
        match nvrtc::compile_program(prog, &[format!("--gpu-architecture={arch}")]) {
            Err(_) => Err(Nvrtc::Failed(match nvrtc::get_program_log(prog) {
                Ok(log) => CStr::from_ptr(log.as_ptr()).to_string_lossy().into_owned(),
                Err(e) => format!("(no log: {e:?})"),
            })),
            Ok(()) => {
                let mut size = 0usize;
                nvrtc_sys::nvrtcGetCUBINSize(prog, &mut size)
                    .result()
                    .map_err(|e| Nvrtc::Error("reading the CUBIN's size", e))
                    .and_then(|()| {
                        let mut image = vec![0u8; size];
                        nvrtc_sys::nvrtcGetCUBIN(prog, image.as_mut_ptr().cast())
                            .result()
                            .map_err(|e| Nvrtc::Error("reading the CUBIN", e))
                            .map(|()| image)
                    })
            }
        }
    };
    // SAFETY: as above; nothing uses `prog` after this.
    let _ = unsafe { nvrtc::destroy_program(prog) };
    made
}

fn resources(func: &CudaFunction, symbol: &str) -> Result<KernelResources, GpuError> {
    let attr = |a: CUfunction_attribute_enum| {
        func.get_attribute(a)
            .map(|v| v.max(0) as u64)
            .map_err(|e| cu_err(&format!("reading {a:?} of `{symbol}`"), e))
    };
    use CUfunction_attribute_enum::*;
    Ok(KernelResources::Cuda {
        registers: attr(CU_FUNC_ATTRIBUTE_NUM_REGS)?,
        local_bytes: attr(CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES)?,
        shared_bytes: attr(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)?,
        max_threads_per_block: attr(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)?,
    })
}

/// The plan's programs loaded and every kernel's function, with its resources.
fn build_all(dev: &CuDevice, plan: &Plan) -> Result<(Vec<CudaFunction>, Built), GpuError> {
    let (mut modules, mut build_logs, mut cubins) = (Vec::new(), Vec::new(), Vec::new());
    for (i, code) in plan.programs.iter().enumerate() {
        let (m, made) = dev.load(i, code)?;
        modules.push(m);
        // NVRTC's log of a successful compile is not kept: nothing to report.
        build_logs.push(String::new());
        cubins.push(made);
    }
    let mut funcs = Vec::new();
    let mut kernels = Vec::new();
    for k in &plan.kernels {
        let f = modules[k.program]
            .load_function(&k.symbol)
            .map_err(|e| cu_err(&format!("finding kernel `{}`", k.symbol), e))?;
        kernels.push(resources(&f, &k.symbol)?);
        funcs.push(f);
    }
    Ok((funcs, Built { device: dev.info.clone(), build_logs, kernels, cubins }))
}

/// Builds `plan`'s programs on device 0 and reads its kernels' resources.
pub fn compile(plan: &Plan) -> Result<Built, GpuError> {
    let dev = CuDevice::open()?;
    Ok(build_all(&dev, plan)?.1)
}

/// One device allocation, freed on drop.
struct DeviceAlloc {
    ptr: sys::CUdeviceptr,
}

impl Drop for DeviceAlloc {
    fn drop(&mut self) {
        // SAFETY: allocated by `malloc_sync` and freed once; a failure here (a context broken by
        // a faulting kernel) leaves nothing to recover.
        let _ = unsafe { result::free_sync(self.ptr) };
    }
}

/// A plan built and allocated on a CUDA device.
pub struct CuExecutor {
    /// Per step: its kernel's function, launch configuration, symbol and argument addresses.
    steps: Vec<(CudaFunction, LaunchConfig, String, Vec<u64>)>,
    /// The first `prepare` steps are the plan's prepare steps (never in the graph).
    prepare: usize,
    allocs: Vec<DeviceAlloc>,
    sizes: Vec<u64>,
    built: Built,
    /// The graph of every step that [`Pass::Whole`] replays, once captured, and its stream.
    graph: Option<(Arc<CudaStream>, CudaGraph)>,
    dev: CuDevice,
}

impl CuExecutor {
    /// Opens device 0, builds the plan's programs, allocates its buffers with their guards set,
    /// and prepares every step's launch (raising the dynamic shared memory limit of kernels
    /// that opt in).
    pub fn new(plan: &Plan) -> Result<CuExecutor, GpuError> {
        let dev = CuDevice::open()?;
        let (funcs, built) = build_all(&dev, plan)?;
        for (k, f) in plan.kernels.iter().zip(&funcs) {
            let dynamic = u64::from(k.dynamic_shared_bytes);
            if k.shared_optin && dynamic > CUDA_STATIC_SHARED_BYTES {
                f.set_attribute(
                    CUfunction_attribute_enum::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                    i32::try_from(dynamic).unwrap_or(i32::MAX),
                )
                .map_err(|e| {
                    cu_err(&format!("opting kernel `{}` in to {dynamic} bytes of shared memory", k.symbol), e)
                })?;
            }
        }
        let (mut allocs, mut sizes) = (Vec::new(), Vec::new());
        for (i, &bytes) in plan.buffers.iter().enumerate() {
            let (size, total) = padded(bytes, GUARD_BYTES);
            let what = format!("allocating buffer {i} ({bytes} bytes)");
            let total = usize::try_from(total)
                .map_err(|_| GpuError::new(ErrorKind::OutOfMemory, format!("{what}: too large")))?;
            // SAFETY: a plain allocation in the current context, freed by `DeviceAlloc`.
            let ptr = unsafe { result::malloc_sync(total) }.map_err(|e| cu_err(&what, e))?;
            let alloc = DeviceAlloc { ptr };
            // SAFETY: the whole allocation, in words.
            unsafe { sys::cuMemsetD32_v2(ptr, GUARD_WORD, total / 4) }
                .result()
                .map_err(|e| cu_err(&format!("setting the guards of buffer {i}"), e))?;
            allocs.push(alloc);
            sizes.push(size);
        }
        let steps = plan
            .steps
            .iter()
            .map(|s| {
                let k = &plan.kernels[s.kernel];
                let cfg = LaunchConfig {
                    grid_dim: (k.grid[0], k.grid[1], k.grid[2]),
                    block_dim: (k.block[0], k.block[1], k.block[2]),
                    shared_mem_bytes: if k.shared_optin { k.dynamic_shared_bytes } else { 0 },
                };
                let args = s.args.iter().map(|&b| allocs[b].ptr + GUARD_BYTES).collect();
                (funcs[s.kernel].clone(), cfg, k.symbol.clone(), args)
            })
            .collect();
        Ok(CuExecutor { steps, prepare: plan.prepare_steps, allocs, sizes, built, graph: None, dev })
    }

    fn data(&self, buffer: usize) -> sys::CUdeviceptr {
        self.allocs[buffer].ptr + GUARD_BYTES
    }

    /// Every execution step launched on `stream`, back to back, without events.
    fn launch_all(&self, stream: &Arc<CudaStream>) -> Result<(), GpuError> {
        for (s, (func, cfg, symbol, args)) in self.steps.iter().enumerate().skip(self.prepare) {
            let mut b = stream.launch_builder(func);
            for a in args {
                b.arg(a);
            }
            // SAFETY: as in `execute`.
            unsafe { b.launch(*cfg) }
                .map_err(|e| cu_err(&format!("capturing step {s} (kernel `{symbol}`)"), e))?;
        }
        Ok(())
    }

    /// The steps as a graph, between two timing events on the graph's stream: capture it the
    /// first time, then replay it.
    fn replay(&mut self) -> Result<Execution, GpuError> {
        // The copies and the poison, queued on the default stream, finish first.
        self.dev.ctx.synchronize().map_err(|e| cu_err("waiting for the poison", e))?;
        if self.graph.is_none() {
            let stream = self.dev.ctx.new_stream().map_err(|e| cu_err("making the graph's stream", e))?;
            stream
                .begin_capture(CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)
                .map_err(|e| cu_err("starting the graph's capture", e))?;
            let launched = self.launch_all(&stream);
            let graph = stream.end_capture(CUgraphInstantiate_flags(0));
            launched?;
            let graph = graph
                .map_err(|e| cu_err("instantiating the graph", e))?
                .ok_or_else(|| GpuError::new(ErrorKind::Driver, "CUDA: the graph's capture holds nothing"))?;
            graph.upload().map_err(|e| cu_err("uploading the graph", e))?;
            self.graph = Some((stream, graph));
        }
        let (stream, graph) = self.graph.as_ref().expect("captured above");
        let timing = Some(CUevent_flags::CU_EVENT_DEFAULT);
        let start = stream.record_event(timing).map_err(|e| cu_err("recording the start", e))?;
        graph.launch().map_err(|e| cu_err("launching the graph", e))?;
        let end = stream.record_event(timing).map_err(|e| cu_err("recording the end", e))?;
        stream.synchronize().map_err(|e| cu_err("running the graph", e))?;
        let ms = start.elapsed_ms(&end).map_err(|e| cu_err("reading event times", e))?;
        Ok(Execution { step_ns: Vec::new(), span_ns: (f64::from(ms) * 1e6).round() as u64 })
    }
}

impl Executor for CuExecutor {
    fn built(&self) -> &Built {
        &self.built
    }

    fn write(&mut self, buffer: usize, bytes: &[u8]) -> Result<(), GpuError> {
        let n = bytes.len().min(self.sizes[buffer] as usize);
        self.dev.ctx.bind_to_thread().map_err(|e| cu_err("binding the context", e))?;
        // SAFETY: `n` bytes from the start of the buffer's data, which holds at least `n`.
        unsafe { result::memcpy_htod_sync(self.data(buffer), &bytes[..n]) }
            .map_err(|e| cu_err(&format!("writing buffer {buffer}"), e))
    }

    fn read(&mut self, buffer: usize, out: &mut [u8]) -> Result<(), GpuError> {
        let n = out.len().min(self.sizes[buffer] as usize);
        self.dev.ctx.bind_to_thread().map_err(|e| cu_err("binding the context", e))?;
        // SAFETY: as in `write`.
        unsafe { result::memcpy_dtoh_sync(&mut out[..n], self.data(buffer)) }
            .map_err(|e| cu_err(&format!("reading buffer {buffer}"), e))
    }

    fn fill(&mut self, buffer: usize, word: u32) -> Result<(), GpuError> {
        self.dev.ctx.bind_to_thread().map_err(|e| cu_err("binding the context", e))?;
        // SAFETY: the buffer's data, in words.
        unsafe { sys::cuMemsetD32_v2(self.data(buffer), word, (self.sizes[buffer] / 4) as usize) }
            .result()
            .map_err(|e| cu_err(&format!("filling buffer {buffer}"), e))
    }

    fn check_guards(&mut self) -> Result<Vec<GuardHit>, GpuError> {
        self.dev.ctx.bind_to_thread().map_err(|e| cu_err("binding the context", e))?;
        let words = (GUARD_BYTES / 4) as usize;
        let mut hits = Vec::new();
        for (i, a) in self.allocs.iter().enumerate() {
            let (mut before, mut after) = (vec![0u32; words], vec![0u32; words]);
            let what = format!("reading the guards of buffer {i}");
            // SAFETY: both guards lie inside the allocation (guard, data, guard).
            unsafe {
                result::memcpy_dtoh_sync(&mut before, a.ptr).map_err(|e| cu_err(&what, e))?;
                result::memcpy_dtoh_sync(&mut after, a.ptr + GUARD_BYTES + self.sizes[i])
                    .map_err(|e| cu_err(&what, e))?;
            }
            hits.extend(guard_hits(i, self.sizes[i], &before, &after));
        }
        Ok(hits)
    }

    fn prepare(&mut self) -> Result<Execution, GpuError> {
        self.run_steps(0..self.prepare, true)
    }

    fn execute(&mut self, how: Pass) -> Result<Execution, GpuError> {
        if how == Pass::Whole {
            return self.replay();
        }
        self.run_steps(self.prepare..self.steps.len(), how == Pass::Checked)
    }
}

impl CuExecutor {
    /// The steps `range`, in order on the stream, each between its timing events; with
    /// `sync_each`, waiting after every one.
    fn run_steps(&self, range: std::ops::Range<usize>, sync_each: bool) -> Result<Execution, GpuError> {
        let stream = &self.dev.stream;
        let mut events = Vec::with_capacity(range.len());
        for s in range {
            let (func, cfg, symbol, args) = &self.steps[s];
            let what = |verb: &str| format!("{verb} step {s} (kernel `{symbol}`)");
            let mut b = stream.launch_builder(func);
            for a in args {
                b.arg(a);
            }
            b.record_kernel_launch(CUevent_flags::CU_EVENT_DEFAULT);
            // SAFETY: the arguments are device addresses of the executor's own buffers, one per
            // parameter, and the configuration is the launch the kernel was written for.
            let ev = unsafe { b.launch(*cfg) }.map_err(|e| cu_err(&what("launching"), e))?;
            events.push(ev.ok_or_else(|| GpuError::new(ErrorKind::Driver, what("timing")))?);
            if sync_each {
                stream.synchronize().map_err(|e| cu_err(&what("running"), e))?;
            }
        }
        stream.synchronize().map_err(|e| cu_err("running the steps", e))?;
        let mut step_ns = Vec::with_capacity(events.len());
        for (start, end) in &events {
            let ms = start.elapsed_ms(end).map_err(|e| cu_err("reading event times", e))?;
            step_ns.push((f64::from(ms) * 1e6).round() as u64);
        }
        let span_ns = match (events.first(), events.last()) {
            (Some((first, _)), Some((_, last))) => {
                let ms = first.elapsed_ms(last).map_err(|e| cu_err("reading event times", e))?;
                (f64::from(ms) * 1e6).round() as u64
            }
            _ => 0,
        };
        Ok(Execution { step_ns, span_ns })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{KernelSpec, Step};

    #[test]
    fn without_the_driver_the_device_is_unavailable_and_nothing_panics() {
        // SAFETY: only tries to load the library.
        let present = unsafe { sys::is_culib_present() };
        let plan = Plan {
            programs: vec![Code::CudaSource(
                "extern \"C\" __global__ void k(float* y) { y[0] = 1.0f; }".into(),
            )],
            kernels: vec![KernelSpec {
                symbol: "k".into(),
                program: 0,
                grid: [1; 3],
                block: [1; 3],
                dynamic_shared_bytes: 0,
                shared_optin: false,
            }],
            buffers: vec![4],
            steps: vec![Step { kernel: 0, args: vec![0] }],
            prepare_steps: 0,
        };
        match (present, CuDevice::open(), crate::compile(&plan)) {
            (false, Err(open), Err(build)) => {
                for e in [open, build] {
                    assert_eq!(e.kind, ErrorKind::Unavailable);
                    assert!(
                        e.message.starts_with("CUDA: the driver library (libcuda) cannot be loaded"),
                        "{e}"
                    );
                }
            }
            // On a machine with an NVIDIA GPU: the device and the kernel's registers.
            (true, Ok(dev), Ok(built)) => {
                assert!(dev.info.arch.starts_with("sm_"), "{:?}", dev.info);
                assert!(matches!(built.kernels[0], KernelResources::Cuda { registers, .. } if registers > 0));
            }
            (present, open, build) => {
                panic!("library present: {present}; {:?}; {build:?}", open.map(|d| d.info))
            }
        }
    }
}
