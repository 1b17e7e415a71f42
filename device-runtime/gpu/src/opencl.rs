//! The OpenCL executor (feature `opencl`): PoCL on a workstation, libmali on a Mali board.
//!
//! `libOpenCL` is loaded through the ICD loader on first use (`OPENCL_DYLIB_PATH`,
//! `;`-separated, names libraries to try first, e.g. a board's `libmali.so`); the device is the
//! first one whose `PLATFORM: DEVICE` name contains [`DEVICE_ENV`] (case-insensitively), or the
//! first device of the first platform that has one when it is unset. Programs are built on the device with their
//! build log kept; one in-order queue with profiling enabled runs the steps, flushed every
//! [`FLUSH_EVERY`] kernels, and each kernel's time is `END - START` of its profiling event.
//! Buffers are allocated with `CL_MEM_ALLOC_HOST_PTR` (memory the host can map, which unified
//! memory devices share with the CPU without copies), each as one allocation of guard, data and
//! guard; kernels see the data through a sub-buffer, whose origin is a multiple of the device's
//! `CL_DEVICE_MEM_BASE_ADDR_ALIGN`.
//!
//! What it must keep true: nothing is enqueued before the plan was checked and every kernel
//! created; every kernel object is released before its program, every sub-buffer before its
//! buffer (field order); a failed build is an [`ErrorKind::Build`] with the log.

use crate::{
    guard_hits, padded, Api, Built, DeviceInfo, ErrorKind, Execution, Executor, GpuError, GuardHit,
    KernelResources, Pass, Plan, FLUSH_EVERY, GUARD_BYTES, GUARD_WORD,
};
use opencl3::command_queue::{CommandQueue, CL_QUEUE_PROFILING_ENABLE};
use opencl3::context::Context;
use opencl3::device::{Device, CL_DEVICE_TYPE_ALL};
use opencl3::error_codes::ClError;
use opencl3::event::Event;
use opencl3::kernel::Kernel;
use opencl3::memory::{Buffer, ClMem, CL_MEM_ALLOC_HOST_PTR, CL_MEM_READ_WRITE};
use opencl3::platform::get_platforms;
use opencl3::program::Program;
use opencl3::types::{cl_device_id, cl_mem, CL_BLOCKING};
use std::ptr;
use std::sync::Mutex;

/// The error kind of an OpenCL error code.
fn kind_of(e: &ClError) -> ErrorKind {
    match e.0 {
        // CL_DEVICE_NOT_FOUND, CL_DEVICE_NOT_AVAILABLE, CL_PLATFORM_NOT_FOUND_KHR, the loader.
        -1 | -2 | -1001 | -2000 => ErrorKind::Unavailable,
        // CL_BUILD_PROGRAM_FAILURE, CL_COMPILE_PROGRAM_FAILURE, CL_LINK_PROGRAM_FAILURE.
        -11 | -15 | -17 => ErrorKind::Build,
        // CL_OUT_OF_RESOURCES, CL_INVALID_WORK_GROUP_SIZE, CL_INVALID_WORK_ITEM_SIZE.
        -5 | -54 | -55 => ErrorKind::IllegalLaunch,
        // CL_MEM_OBJECT_ALLOCATION_FAILURE, CL_OUT_OF_HOST_MEMORY, CL_INVALID_BUFFER_SIZE.
        -4 | -6 | -61 => ErrorKind::OutOfMemory,
        _ => ErrorKind::Driver,
    }
}

fn cl_err(what: &str, e: ClError) -> GpuError {
    GpuError::new(kind_of(&e), format!("OpenCL: {what} failed: {e}"))
}

/// The environment variable that picks the OpenCL device where a system has several (a board
/// with its GPU driver and PoCL, a workstation with two GPUs): part of the device's
/// `PLATFORM: DEVICE` name, e.g. `Mali` or `Portable Computing Language`.
pub const DEVICE_ENV: &str = "EKB_OPENCL_DEVICE";

/// Every device of every platform, as (`PLATFORM: DEVICE`, id), in the ICD loader's order.
fn all_devices() -> Result<Vec<(String, cl_device_id)>, GpuError> {
    let platforms = get_platforms().map_err(|e| {
        let mut err = cl_err("listing platforms", e);
        err.kind = ErrorKind::Unavailable;
        err.message.push_str(
            " (install an OpenCL driver, e.g. Debian's pocl-opencl-icd and ocl-icd-libopencl1, or name the \
             driver library in OPENCL_DYLIB_PATH)",
        );
        err
    })?;
    let mut out = Vec::new();
    for p in platforms {
        let platform = p.name().unwrap_or_else(|_| "?".into());
        // A platform without devices answers CL_DEVICE_NOT_FOUND: it has none to offer.
        for id in p.get_devices(CL_DEVICE_TYPE_ALL).unwrap_or_default() {
            let name = Device::new(id).name().unwrap_or_else(|_| "?".into());
            out.push((format!("{platform}: {name}"), id));
        }
    }
    Ok(out)
}

/// An OpenCL device with its context and profiling queue.
pub struct ClDevice {
    queue: CommandQueue,
    context: Context,
    device: Device,
    pub info: DeviceInfo,
    /// `CL_DEVICE_MEM_BASE_ADDR_ALIGN`, in bytes.
    base_align: u64,
}

impl ClDevice {
    /// The device [`DEVICE_ENV`] names, else the first OpenCL device of the system.
    pub fn open() -> Result<ClDevice, GpuError> {
        let selector = std::env::var(DEVICE_ENV).ok().filter(|s| !s.is_empty());
        ClDevice::open_matching(selector.as_deref())
    }

    /// The first device whose `PLATFORM: DEVICE` name contains `selector` (case-insensitively),
    /// or the first device of all with `None`; no match is an [`ErrorKind::Unavailable`] that
    /// lists the devices there are.
    pub fn open_matching(selector: Option<&str>) -> Result<ClDevice, GpuError> {
        // Drivers may initialise their platforms lazily and not thread-safely (PoCL can report
        // no devices to a second thread asking at the same time): one discovery at a time.
        static DISCOVERY: Mutex<()> = Mutex::new(());
        let _one = DISCOVERY.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let devices = all_devices()?;
        if devices.is_empty() {
            return Err(GpuError::new(ErrorKind::Unavailable, "OpenCL: no device found"));
        }
        let chosen = match selector {
            None => devices.first(),
            Some(sel) => {
                let want = sel.to_lowercase();
                devices.iter().find(|(name, _)| name.to_lowercase().contains(&want))
            }
        };
        let Some(&(_, id)) = chosen else {
            let names: Vec<String> = devices.iter().map(|(n, _)| format!("`{n}`")).collect();
            return Err(GpuError::new(
                ErrorKind::Unavailable,
                format!(
                    "OpenCL: no device matches {DEVICE_ENV}=`{}`; the devices are {}",
                    selector.unwrap_or_default(),
                    names.join(", ")
                ),
            ));
        };
        let device = Device::new(id);
        let q = |what: &str, e: ClError| cl_err(&format!("reading {what}"), e);
        let version = device.version().map_err(|e| q("CL_DEVICE_VERSION", e))?;
        let driver = device.driver_version().map_err(|e| q("CL_DRIVER_VERSION", e))?;
        let sizes: Vec<u64> = device
            .max_work_item_sizes()
            .map_err(|e| q("CL_DEVICE_MAX_WORK_ITEM_SIZES", e))?
            .into_iter()
            .map(|v| v as u64)
            .collect();
        let dim = |a: usize| sizes.get(a).copied().unwrap_or(1);
        let info = DeviceInfo {
            api: Api::OpenCl,
            name: device.name().map_err(|e| q("CL_DEVICE_NAME", e))?,
            version: format!("{version} (driver {driver})"),
            arch: device.opencl_c_version().map_err(|e| q("CL_DEVICE_OPENCL_C_VERSION", e))?,
            compute_units: device.max_compute_units().map_err(|e| q("CL_DEVICE_MAX_COMPUTE_UNITS", e))?,
            max_threads_per_block: device
                .max_work_group_size()
                .map_err(|e| q("CL_DEVICE_MAX_WORK_GROUP_SIZE", e))?
                as u64,
            max_block_dims: [dim(0), dim(1), dim(2)],
            max_grid_dims: None,
            shared_bytes_per_block: device.local_mem_size().map_err(|e| q("CL_DEVICE_LOCAL_MEM_SIZE", e))?,
            shared_bytes_optin: None,
            registers_per_block: None,
            global_mem_bytes: device.global_mem_size().map_err(|e| q("CL_DEVICE_GLOBAL_MEM_SIZE", e))?,
            max_alloc_bytes: device.max_mem_alloc_size().map_err(|e| q("CL_DEVICE_MAX_MEM_ALLOC_SIZE", e))?,
            // Deprecated since OpenCL 2.0 but still answered; a driver that refuses says no.
            unified_memory: device.host_unified_memory().unwrap_or(false),
        };
        let base_align =
            u64::from(device.mem_base_addr_align().map_err(|e| q("CL_DEVICE_MEM_BASE_ADDR_ALIGN", e))?) / 8;
        let context = Context::from_device(&device).map_err(|e| cl_err("creating a context", e))?;
        // SAFETY: the device belongs to the context just created from it.
        let queue =
            unsafe { CommandQueue::create_with_properties(&context, id, CL_QUEUE_PROFILING_ENABLE, 0) }
                .map_err(|e| cl_err("creating a profiling queue", e))?;
        Ok(ClDevice { queue, context, device, info, base_align: base_align.max(4) })
    }

    /// Builds `source` for this device; the build log comes back either way.
    fn build(&self, index: usize, source: &str) -> Result<(Program, String), GpuError> {
        let mut program = Program::create_from_source(&self.context, source)
            .map_err(|e| cl_err(&format!("creating program {index}"), e))?;
        let built = program.build(&[self.device.id()], "");
        let log = program.get_build_log(self.device.id()).unwrap_or_default();
        match built {
            Ok(()) => Ok((program, log)),
            Err(e) => Err(GpuError {
                kind: ErrorKind::Build,
                message: format!("OpenCL build of program {index} failed on `{}`: {e}", self.info.name),
                log: Some(log),
            }),
        }
    }

    fn resources(&self, kernel: &Kernel, symbol: &str) -> Result<KernelResources, GpuError> {
        let id = self.device.id();
        let q = |what: &str, e: ClError| cl_err(&format!("reading {what} of kernel `{symbol}`"), e);
        Ok(KernelResources::OpenCl {
            work_group_size: kernel.get_work_group_size(id).map_err(|e| q("CL_KERNEL_WORK_GROUP_SIZE", e))?
                as u64,
            local_mem_bytes: kernel.get_local_mem_size(id).map_err(|e| q("CL_KERNEL_LOCAL_MEM_SIZE", e))?,
            private_mem_bytes: kernel
                .get_private_mem_size(id)
                .map_err(|e| q("CL_KERNEL_PRIVATE_MEM_SIZE", e))?,
        })
    }
}

/// The programs of `plan` built, with one kernel object per kernel of the plan.
fn build_all(dev: &ClDevice, plan: &Plan) -> Result<(Vec<Program>, Built), GpuError> {
    let mut programs = Vec::new();
    let mut build_logs = Vec::new();
    for (i, code) in plan.programs.iter().enumerate() {
        let crate::Code::OpenClSource(source) = code else {
            return Err(GpuError::new(ErrorKind::Driver, format!("program {i} is not OpenCL C")));
        };
        let (p, log) = dev.build(i, source)?;
        programs.push(p);
        build_logs.push(log);
    }
    let mut kernels = Vec::new();
    for k in &plan.kernels {
        let kernel = Kernel::create(&programs[k.program], &k.symbol)
            .map_err(|e| cl_err(&format!("creating kernel `{}`", k.symbol), e))?;
        kernels.push(dev.resources(&kernel, &k.symbol)?);
    }
    let cubins = vec![None; programs.len()];
    Ok((programs, Built { device: dev.info.clone(), build_logs, kernels, cubins }))
}

/// Builds `plan`'s programs on the chosen device and reads its kernels' resources.
pub fn compile(plan: &Plan) -> Result<Built, GpuError> {
    let dev = ClDevice::open()?;
    Ok(build_all(&dev, plan)?.1)
}

/// One step, ready to enqueue: its kernel object with the arguments set, and its sizes.
struct ClStep {
    kernel: Kernel,
    symbol: String,
    global: [usize; 3],
    local: [usize; 3],
}

/// A plan built and allocated on an OpenCL device.
pub struct ClExecutor {
    // Field order is drop order: kernels before programs, sub-buffers before buffers, all
    // before the queue and context.
    steps: Vec<ClStep>,
    /// The first `prepare` steps are the plan's prepare steps.
    prepare: usize,
    /// Held for the kernels' sake (drivers keep a program alive for its kernels anyway).
    _programs: Vec<Program>,
    /// The data region of each buffer, as kernels see it.
    data: Vec<Buffer<u8>>,
    /// Each buffer's whole allocation: guard, data, guard.
    whole: Vec<Buffer<u8>>,
    /// Each buffer's data size (rounded up to whole words).
    sizes: Vec<u64>,
    guard: u64,
    built: Built,
    dev: ClDevice,
}

impl ClExecutor {
    /// Opens the first device, builds the plan's programs, allocates its buffers with their
    /// guards set, and binds every step's arguments.
    pub fn new(plan: &Plan) -> Result<ClExecutor, GpuError> {
        let dev = ClDevice::open()?;
        let (programs, built) = build_all(&dev, plan)?;
        let guard = GUARD_BYTES.next_multiple_of(dev.base_align);
        let (mut whole, mut data, mut sizes) = (Vec::new(), Vec::new(), Vec::new());
        for (i, &bytes) in plan.buffers.iter().enumerate() {
            let (size, total) = padded(bytes, guard);
            let what = format!("allocating buffer {i} ({bytes} bytes)");
            let too_big = |v: u64| {
                usize::try_from(v)
                    .map_err(|_| GpuError::new(ErrorKind::OutOfMemory, format!("{what}: too large")))
            };
            // SAFETY: no host pointer is passed.
            let mut b = unsafe {
                Buffer::<u8>::create(
                    &dev.context,
                    CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR,
                    too_big(total)?,
                    ptr::null_mut(),
                )
            }
            .map_err(|e| cl_err(&what, e))?;
            // SAFETY: the pattern is one word; the range is the whole buffer.
            unsafe {
                dev.queue.enqueue_fill_buffer(&mut b, &GUARD_WORD.to_ne_bytes(), 0, too_big(total)?, &[])
            }
            .map_err(|e| cl_err(&format!("setting the guards of buffer {i}"), e))?;
            // SAFETY: the region lies inside the buffer and starts at a multiple of the
            // device's base address alignment.
            let sub = unsafe { b.create_sub_buffer(CL_MEM_READ_WRITE, too_big(guard)?, too_big(size)?) }
                .map_err(|e| cl_err(&format!("creating the data view of buffer {i}"), e))?;
            whole.push(b);
            data.push(sub);
            sizes.push(size);
        }
        let mut steps = Vec::new();
        for (s, step) in plan.steps.iter().enumerate() {
            let k = &plan.kernels[step.kernel];
            let kernel = Kernel::create(&programs[k.program], &k.symbol)
                .map_err(|e| cl_err(&format!("creating kernel `{}` for step {s}", k.symbol), e))?;
            for (a, &b) in step.args.iter().enumerate() {
                let mem: cl_mem = data[b].get();
                // SAFETY: every parameter of an emitted kernel is a global pointer, set to a
                // buffer object of this context.
                unsafe { kernel.set_arg(a as u32, &mem) }
                    .map_err(|e| cl_err(&format!("setting argument {a} of step {s} (`{}`)", k.symbol), e))?;
            }
            let local = k.block.map(|b| b as usize);
            let global = [0, 1, 2].map(|a| k.grid[a] as usize * local[a]);
            steps.push(ClStep { kernel, symbol: k.symbol.clone(), global, local });
        }
        dev.queue.finish().map_err(|e| cl_err("setting the guards", e))?;
        let prepare = plan.prepare_steps;
        Ok(ClExecutor { steps, prepare, _programs: programs, data, whole, sizes, guard, built, dev })
    }

    fn span(&self, buffer: usize, len: usize) -> usize {
        len.min(self.sizes[buffer] as usize)
    }
}

impl Executor for ClExecutor {
    fn built(&self) -> &Built {
        &self.built
    }

    fn write(&mut self, buffer: usize, bytes: &[u8]) -> Result<(), GpuError> {
        let n = self.span(buffer, bytes.len());
        if n == 0 {
            return Ok(());
        }
        // SAFETY: `n` bytes from the start of the data view, which holds at least `n`.
        unsafe {
            self.dev.queue.enqueue_write_buffer(&mut self.data[buffer], CL_BLOCKING, 0, &bytes[..n], &[])
        }
        .map(|_| ())
        .map_err(|e| cl_err(&format!("writing buffer {buffer}"), e))
    }

    fn read(&mut self, buffer: usize, out: &mut [u8]) -> Result<(), GpuError> {
        let n = self.span(buffer, out.len());
        if n == 0 {
            return Ok(());
        }
        // SAFETY: as in `write`.
        unsafe { self.dev.queue.enqueue_read_buffer(&self.data[buffer], CL_BLOCKING, 0, &mut out[..n], &[]) }
            .map(|_| ())
            .map_err(|e| cl_err(&format!("reading buffer {buffer}"), e))
    }

    fn fill(&mut self, buffer: usize, word: u32) -> Result<(), GpuError> {
        let size = self.sizes[buffer] as usize;
        // SAFETY: the whole data view, a multiple of the pattern's 4 bytes.
        unsafe {
            self.dev.queue.enqueue_fill_buffer(&mut self.data[buffer], &word.to_ne_bytes(), 0, size, &[])
        }
        .map_err(|e| cl_err(&format!("filling buffer {buffer}"), e))?;
        self.dev.queue.finish().map_err(|e| cl_err(&format!("filling buffer {buffer}"), e))
    }

    fn check_guards(&mut self) -> Result<Vec<GuardHit>, GpuError> {
        let words = (self.guard / 4) as usize;
        let mut hits = Vec::new();
        for (i, b) in self.whole.iter().enumerate() {
            let mut before = vec![0u8; words * 4];
            let mut after = vec![0u8; words * 4];
            let read = |offset: u64, out: &mut [u8]| {
                // SAFETY: both guards lie inside the allocation (guard, data, guard).
                unsafe { self.dev.queue.enqueue_read_buffer(b, CL_BLOCKING, offset as usize, out, &[]) }
                    .map_err(|e| cl_err(&format!("reading the guards of buffer {i}"), e))
            };
            read(0, &mut before)?;
            read(self.guard + self.sizes[i], &mut after)?;
            let as_words = |v: &[u8]| -> Vec<u32> {
                v.chunks_exact(4).map(|c| u32::from_ne_bytes([c[0], c[1], c[2], c[3]])).collect()
            };
            hits.extend(guard_hits(i, self.sizes[i], &as_words(&before), &as_words(&after)));
        }
        Ok(hits)
    }

    fn prepare(&mut self) -> Result<Execution, GpuError> {
        self.run_steps(0..self.prepare, true)
    }

    fn execute(&mut self, how: Pass) -> Result<Execution, GpuError> {
        self.run_steps(self.prepare..self.steps.len(), how == Pass::Checked)
    }
}

impl ClExecutor {
    /// The steps `range`, in order on the queue, each between its profiling events; with
    /// `sync_each`, waiting after every one.
    fn run_steps(&self, range: std::ops::Range<usize>, sync_each: bool) -> Result<Execution, GpuError> {
        let q = &self.dev.queue;
        let mut events: Vec<Event> = Vec::with_capacity(range.len());
        for s in range {
            let step = &self.steps[s];
            let what = |verb: &str| format!("{verb} step {s} (kernel `{}`)", step.symbol);
            // SAFETY: the arguments were set when the executor was made, to buffers it owns;
            // the sizes are the launch the kernel was written for.
            let ev = unsafe {
                q.enqueue_nd_range_kernel(
                    step.kernel.get(),
                    3,
                    ptr::null(),
                    step.global.as_ptr(),
                    step.local.as_ptr(),
                    &[],
                )
            }
            .map_err(|e| cl_err(&what("enqueueing"), e))?;
            events.push(ev);
            if sync_each {
                q.finish().map_err(|e| cl_err(&what("running"), e))?;
            } else if events.len() % FLUSH_EVERY == 0 {
                q.flush().map_err(|e| cl_err("flushing the queue", e))?;
            }
        }
        q.finish().map_err(|e| cl_err("running the steps", e))?;
        let mut step_ns = Vec::with_capacity(events.len());
        let (mut first, mut last) = (u64::MAX, 0u64);
        for ev in &events {
            let start = ev.profiling_command_start().map_err(|e| cl_err("reading a profiling event", e))?;
            let end = ev.profiling_command_end().map_err(|e| cl_err("reading a profiling event", e))?;
            step_ns.push(end.saturating_sub(start));
            first = first.min(start);
            last = last.max(end);
        }
        Ok(Execution { step_ns, span_ns: last.saturating_sub(first) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Needs an OpenCL driver (PoCL in CI).
    #[test]
    fn a_device_is_chosen_by_part_of_its_name() {
        let first = ClDevice::open_matching(None).expect("an OpenCL device (PoCL in CI)");
        // Part of the device's name, in another case, finds it again.
        let part = first.info.name.chars().take(3).collect::<String>().to_uppercase();
        let again = ClDevice::open_matching(Some(&part)).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(again.info.name, first.info.name);
        // A name no device has is refused, listing the devices there are.
        let e = ClDevice::open_matching(Some("no such device")).err().expect("nothing matches");
        assert_eq!(e.kind, ErrorKind::Unavailable);
        assert!(e
            .message
            .starts_with("OpenCL: no device matches EKB_OPENCL_DEVICE=`no such device`; the devices are `"));
        assert!(e.message.contains(&format!(": {}`", first.info.name)), "{}", e.message);
    }
}
