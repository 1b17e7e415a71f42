//! Runs an L1 module of GPU kernels through OpenCL on this machine (PoCL in CI, libmali on a
//! board): the host side of the OpenCL backend, used by the tests and the benchmarks.
//!
//! `libOpenCL` is loaded at run time through the ICD loader (`OPENCL_DYLIB_PATH`, `;`-separated,
//! names other libraries to try first, e.g. a board's `libmali.so`); a machine without OpenCL gets
//! a [`Diagnostic`], not a crash. A run: read the device's limits and check every launch against
//! them before anything is enqueued (an illegal work-group size or local memory size is a
//! legality finding naming the driver query), build the program (its build log is kept, and a
//! failed build is a diagnostic carrying the log), create one buffer per module buffer (inputs
//! copied in; temps and outputs filled with the interpreter's poison pattern, so an unwritten
//! element shows), enqueue the plan on a profiling queue (flushing every [`FLUSH_EVERY`]
//! enqueues), and read back the outputs, each kernel's time from its profiling event, and its
//! work-group size, local and private memory as the driver reports them.

use crate::emit::module_source;
use crate::{kernels, Dialect};
use ekb_ir::l1::gpu::{check_limits, GpuLimits, Limit};
use ekb_ir::l1::interp::{POISON_F32_BITS, POISON_I32};
use ekb_ir::l1::verify::verify;
use ekb_ir::l1::{BufferRole, Module};
use ekb_ir::target::GpuApi;
use ekb_ir::tensor::{BufData, Buffer};
use ekb_ir::Diagnostic;
use opencl3::command_queue::{CommandQueue, CL_QUEUE_PROFILING_ENABLE};
use opencl3::context::Context;
use opencl3::device::{get_all_devices, Device, CL_DEVICE_TYPE_ALL};
use opencl3::kernel::{ExecuteKernel, Kernel};
use opencl3::memory::{Buffer as ClBuffer, ClMem, CL_MEM_READ_WRITE};
use opencl3::program::Program;
use opencl3::types::{cl_mem, CL_BLOCKING};
use std::collections::HashMap;
use std::ptr;
use std::sync::Mutex;

/// Kernels enqueued between two flushes (Mali drivers fail with `CL_OUT_OF_HOST_MEMORY` when
/// too many wait unflushed).
pub const FLUSH_EVERY: usize = 8;

/// What the driver says about the device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceInfo {
    pub name: String,
    /// `CL_DEVICE_VERSION`.
    pub version: String,
    pub max_work_group_size: u64,
    pub max_work_item_sizes: Vec<u64>,
    pub local_mem_bytes: u64,
    pub global_mem_bytes: u64,
    pub max_alloc_bytes: u64,
}

impl DeviceInfo {
    /// The device's limits, each naming the query it came from.
    pub fn limits(&self) -> GpuLimits {
        let src = |q: &str| format!("from OpenCL device `{}` ({q})", self.name);
        let item = |axis: usize| {
            self.max_work_item_sizes.get(axis).map(|&v| Limit::new(v, src("CL_DEVICE_MAX_WORK_ITEM_SIZES")))
        };
        GpuLimits {
            api: GpuApi::Opencl,
            threads_per_block: Limit::new(self.max_work_group_size, src("CL_DEVICE_MAX_WORK_GROUP_SIZE")),
            block_dims: [item(0), item(1), item(2)],
            grid_dims: [None, None, None],
            shared_bytes_per_block: Limit::new(self.local_mem_bytes, src("CL_DEVICE_LOCAL_MEM_SIZE")),
            shared_bytes_optin: None,
            private_bytes_per_thread: None,
        }
    }
}

/// One plan step as it ran.
#[derive(Debug, Clone, PartialEq)]
pub struct KernelRun {
    pub kernel: String,
    /// Global and local work sizes (x, y, z).
    pub global: [usize; 3],
    pub local: [usize; 3],
    /// Device time from the profiling event (`END - START`), in nanoseconds.
    pub time_ns: u64,
    /// `CL_KERNEL_WORK_GROUP_SIZE`: the most work-items per group this kernel allows.
    pub work_group_size: u64,
    /// `CL_KERNEL_LOCAL_MEM_SIZE`.
    pub local_mem_bytes: u64,
    /// `CL_KERNEL_PRIVATE_MEM_SIZE`.
    pub private_mem_bytes: u64,
}

/// The outcome of a run.
#[derive(Debug, Clone)]
pub struct Report {
    pub device: DeviceInfo,
    /// The program's build log (often empty when the build succeeds).
    pub build_log: String,
    pub steps: Vec<KernelRun>,
    /// The module's `output` buffers by name.
    pub outputs: HashMap<String, Buffer>,
}

/// An OpenCL device with its context and profiling queue.
pub struct Gpu {
    device: Device,
    context: Context,
    queue: CommandQueue,
    pub info: DeviceInfo,
}

fn cl_err(what: &str, e: impl std::fmt::Display) -> Diagnostic {
    Diagnostic::error(format!("OpenCL: {what} failed: {e}"))
}

impl Gpu {
    /// The first OpenCL device of the system.
    pub fn open() -> Result<Gpu, Diagnostic> {
        // Drivers may initialise their platform lazily and not thread-safely (PoCL can report no
        // devices to a second thread asking at the same time): one discovery at a time.
        static DISCOVERY: Mutex<()> = Mutex::new(());
        let _one = DISCOVERY.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let ids = get_all_devices(CL_DEVICE_TYPE_ALL).map_err(|e| {
            cl_err("listing devices", e).with_hint(
                "install an OpenCL driver (Debian: pocl-opencl-icd and ocl-icd-libopencl1), or name the library \
                 in OPENCL_DYLIB_PATH",
            )
        })?;
        let Some(&id) = ids.first() else {
            return Err(Diagnostic::error("OpenCL: no device found")
                .with_hint("install an OpenCL driver (PoCL for the CPU)"));
        };
        let device = Device::new(id);
        let q = |what: &str, e: opencl3::error_codes::ClError| cl_err(what, e);
        let info = DeviceInfo {
            name: device.name().map_err(|e| q("CL_DEVICE_NAME", e))?,
            version: device.version().map_err(|e| q("CL_DEVICE_VERSION", e))?,
            max_work_group_size: device
                .max_work_group_size()
                .map_err(|e| q("CL_DEVICE_MAX_WORK_GROUP_SIZE", e))? as u64,
            max_work_item_sizes: device
                .max_work_item_sizes()
                .map_err(|e| q("CL_DEVICE_MAX_WORK_ITEM_SIZES", e))?
                .into_iter()
                .map(|v| v as u64)
                .collect(),
            local_mem_bytes: device.local_mem_size().map_err(|e| q("CL_DEVICE_LOCAL_MEM_SIZE", e))?,
            global_mem_bytes: device.global_mem_size().map_err(|e| q("CL_DEVICE_GLOBAL_MEM_SIZE", e))?,
            max_alloc_bytes: device.max_mem_alloc_size().map_err(|e| q("CL_DEVICE_MAX_MEM_ALLOC_SIZE", e))?,
        };
        let context = Context::from_device(&device).map_err(|e| q("creating a context", e))?;
        // SAFETY: the device belongs to the context just created from it.
        let queue =
            unsafe { CommandQueue::create_with_properties(&context, id, CL_QUEUE_PROFILING_ENABLE, 0) }
                .map_err(|e| q("creating a profiling queue", e))?;
        Ok(Gpu { device, context, queue, info })
    }

    /// The findings of the module's launches against this device's limits (empty when legal).
    pub fn legality(&self, m: &Module) -> Vec<Diagnostic> {
        check_limits(m, &self.info.limits())
    }

    /// Runs the plan of `m` on `inputs` (every `input` buffer by name), with the kernels the
    /// emitter writes for it.
    pub fn run(&self, m: &Module, inputs: &HashMap<String, Buffer>) -> Result<Report, Diagnostic> {
        self.run_source(m, &module_source(m, Dialect::OpenCl)?, inputs)
    }

    /// Runs the plan of `m` with the kernels of `source` instead of the emitted ones (an L2
    /// candidate: it must define every kernel of `m` with the signature of `docs/gpu.md`).
    pub fn run_source(
        &self,
        m: &Module,
        source: &str,
        inputs: &HashMap<String, Buffer>,
    ) -> Result<Report, Diagnostic> {
        if let Some(first) = verify(m, None).into_iter().find(Diagnostic::is_error) {
            return Err(first.with_note(format!("module {} does not verify, so it cannot run", m.name)));
        }
        let mut illegal = self.legality(m).into_iter();
        if let Some(first) = illegal.next() {
            let more: Vec<String> = illegal.map(|d| d.message.clone()).collect();
            let mut d = first.with_note("found before launch: nothing was enqueued");
            for msg in more {
                d = d.with_note(format!("also: {msg}"));
            }
            return Err(d);
        }
        let launches = kernels(m)?;
        let mut program = Program::create_from_source(&self.context, source)
            .map_err(|e| cl_err("creating the program", e))?;
        let built = program.build(&[self.device.id()], "");
        let build_log = program.get_build_log(self.device.id()).unwrap_or_default();
        if let Err(e) = built {
            return Err(Diagnostic::error(format!("OpenCL build of module {} failed: {e}", m.name))
                .with_note(format!("build log:\n{}", build_log.trim_end()))
                .with_note(format!("device: {}", self.info.name)));
        }
        let mut bufs = HashMap::new();
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
                    ekb_ir::DType::F32 => BufData::F32(vec![f32::from_bits(POISON_F32_BITS); b.ty.numel()]),
                    ekb_ir::DType::I32 => BufData::I32(vec![POISON_I32; b.ty.numel()]),
                },
            };
            bufs.insert(b.name.clone(), self.upload(&b.name, &data)?);
        }
        let mut steps = Vec::new();
        let mut events = Vec::new();
        for (i, run) in m.plan.iter().enumerate() {
            let k = launches
                .iter()
                .find(|k| k.name == run.kernel)
                .ok_or_else(|| Diagnostic::error(format!("run {i} names unknown kernel `{}`", run.kernel)))?;
            let kernel = Kernel::create(&program, &k.name)
                .map_err(|e| cl_err(&format!("creating kernel {}", k.name), e))?;
            let id = self.device.id();
            let q = |what: &str, e: opencl3::error_codes::ClError| {
                cl_err(&format!("{what} of kernel {}", k.name), e)
            };
            let local = k.launch.block.map(|b| b as usize);
            let global = [0, 1, 2].map(|a| k.launch.grid[a] as usize * local[a]);
            let mut exec = ExecuteKernel::new(&kernel);
            for a in &run.args {
                let mem: cl_mem = bufs[&a.name].mem();
                // SAFETY: each argument is a buffer object of the kernel's parameter type, in
                // parameter order (the plan was verified).
                unsafe { exec.set_arg(&mem) };
            }
            exec.set_global_work_sizes(&global).set_local_work_sizes(&local);
            // SAFETY: the arguments are set, and the sizes are the ones the program requires.
            let event = unsafe { exec.enqueue_nd_range(&self.queue) }.map_err(|e| q("enqueueing", e))?;
            steps.push(KernelRun {
                kernel: k.name.clone(),
                global,
                local,
                time_ns: 0,
                work_group_size: kernel
                    .get_work_group_size(id)
                    .map_err(|e| q("CL_KERNEL_WORK_GROUP_SIZE", e))? as u64,
                local_mem_bytes: kernel
                    .get_local_mem_size(id)
                    .map_err(|e| q("CL_KERNEL_LOCAL_MEM_SIZE", e))?,
                private_mem_bytes: kernel
                    .get_private_mem_size(id)
                    .map_err(|e| q("CL_KERNEL_PRIVATE_MEM_SIZE", e))?,
            });
            events.push(event);
            if events.len() % FLUSH_EVERY == 0 {
                self.queue.flush().map_err(|e| cl_err("flushing the queue", e))?;
            }
        }
        self.queue.finish().map_err(|e| cl_err("running the plan", e))?;
        for (step, ev) in steps.iter_mut().zip(&events) {
            let start = ev.profiling_command_start().map_err(|e| cl_err("reading a profiling event", e))?;
            let end = ev.profiling_command_end().map_err(|e| cl_err("reading a profiling event", e))?;
            step.time_ns = end.saturating_sub(start);
        }
        let mut outputs = HashMap::new();
        for b in m.buffers.iter().filter(|b| b.role == BufferRole::Output) {
            outputs.insert(
                b.name.clone(),
                Buffer { ty: b.ty.clone(), data: self.download(&bufs[&b.name], b.ty.numel())? },
            );
        }
        Ok(Report { device: self.info.clone(), build_log, steps, outputs })
    }

    fn upload(&self, name: &str, data: &BufData) -> Result<DeviceBuf, Diagnostic> {
        let what = format!("creating buffer `{name}`");
        // Zero-element buffers get one element: OpenCL has no empty buffers.
        // SAFETY: no host pointer is passed; the write below copies exactly the buffer's size.
        unsafe {
            Ok(match data {
                BufData::F32(v) => {
                    let mut b = ClBuffer::<f32>::create(
                        &self.context,
                        CL_MEM_READ_WRITE,
                        v.len().max(1),
                        ptr::null_mut(),
                    )
                    .map_err(|e| cl_err(&what, e))?;
                    if !v.is_empty() {
                        self.queue
                            .enqueue_write_buffer(&mut b, CL_BLOCKING, 0, v, &[])
                            .map_err(|e| cl_err(&what, e))?;
                    }
                    DeviceBuf::F32(b)
                }
                BufData::I32(v) => {
                    let mut b = ClBuffer::<i32>::create(
                        &self.context,
                        CL_MEM_READ_WRITE,
                        v.len().max(1),
                        ptr::null_mut(),
                    )
                    .map_err(|e| cl_err(&what, e))?;
                    if !v.is_empty() {
                        self.queue
                            .enqueue_write_buffer(&mut b, CL_BLOCKING, 0, v, &[])
                            .map_err(|e| cl_err(&what, e))?;
                    }
                    DeviceBuf::I32(b)
                }
            })
        }
    }

    fn download(&self, b: &DeviceBuf, n: usize) -> Result<BufData, Diagnostic> {
        let e = |e| cl_err("reading an output", e);
        // SAFETY: the host slice holds `n` elements, at most the buffer's size.
        unsafe {
            Ok(match b {
                DeviceBuf::F32(b) => {
                    let mut v = vec![0f32; n];
                    if n > 0 {
                        self.queue.enqueue_read_buffer(b, CL_BLOCKING, 0, &mut v, &[]).map_err(e)?;
                    }
                    BufData::F32(v)
                }
                DeviceBuf::I32(b) => {
                    let mut v = vec![0i32; n];
                    if n > 0 {
                        self.queue.enqueue_read_buffer(b, CL_BLOCKING, 0, &mut v, &[]).map_err(e)?;
                    }
                    BufData::I32(v)
                }
            })
        }
    }
}

enum DeviceBuf {
    F32(ClBuffer<f32>),
    I32(ClBuffer<i32>),
}

impl DeviceBuf {
    fn mem(&self) -> cl_mem {
        match self {
            DeviceBuf::F32(b) => b.get(),
            DeviceBuf::I32(b) => b.get(),
        }
    }
}

/// Runs `m` on the system's first OpenCL device (see [`Gpu::run`]).
pub fn run(m: &Module, inputs: &HashMap<String, Buffer>) -> Result<Report, Diagnostic> {
    Gpu::open()?.run(m, inputs)
}
