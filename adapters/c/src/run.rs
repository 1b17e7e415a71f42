//! Runs an L1 module of GPU kernels on this machine's GPU (features `opencl` and `cuda`): the
//! host side of the GPU backends, for the tests and the benchmarks. The execution itself is
//! `ekb-gpu`'s, the same code the board runtime runs.
//!
//! [`Gpu::open`] describes the first device of an interface (OpenCL through the ICD loader,
//! `OPENCL_DYLIB_PATH` honoured; CUDA device 0 through the driver, NVRTC for CUDA C), or says
//! why there is none. A run ([`Gpu::run`], or [`Gpu::run_source`] for an edited L2 source):
//! verify the module, check every launch against the device's live limits (an illegal work-group
//! size or shared memory size is a finding naming the driver query, and nothing is enqueued),
//! build the program on the device (a failed build is a diagnostic carrying the build or NVRTC
//! log), write the inputs, fill temporaries and outputs with the interpreter's poison pattern
//! (so an element never written shows), run the plan in order with each kernel timed by the
//! driver's clock, check the guards around every buffer, and read back the outputs with each
//! kernel's time and the resources the driver reports for it.
//!
//! What it must keep true: a machine without the driver gets a [`Diagnostic`], never a panic;
//! the kernels run are the ones the emitter writes for the module (or the given source), with
//! the launches `ekb_gpu_c::kernels` describes.

use crate::emit::module_source;
use crate::{kernels, Dialect, DYNAMIC_SHARED_ALIGN};
use ekb_gpu::{Code, Limit as DeviceLimit, Pass, Plan, Step};
use ekb_ir::l1::gpu::{check_limits, GpuLimits, Limit};
use ekb_ir::l1::interp::{POISON_F16_BITS, POISON_F32_BITS, POISON_I32, POISON_I8};
use ekb_ir::l1::verify::verify;
use ekb_ir::l1::{BufferRole, Module};
use ekb_ir::target::GpuApi;
use ekb_ir::tensor::{BufData, Buffer};
use ekb_ir::{DType, Diagnostic};
use std::collections::HashMap;

pub use ekb_gpu::{Api, DeviceInfo, KernelResources};

/// One plan step as it ran.
#[derive(Debug, Clone, PartialEq)]
pub struct StepRun {
    pub kernel: String,
    /// Blocks (work-groups) along x, y, z.
    pub grid: [u32; 3],
    /// Threads (work-items) per block along x, y, z.
    pub block: [u32; 3],
    /// Dynamic shared memory passed at launch (CUDA kernels that opt in).
    pub dynamic_shared_bytes: u32,
    /// The kernel's time by the driver's clock (OpenCL profiling event, CUDA events).
    pub time_ns: u64,
    /// What the driver reports about the kernel (work-group size and local/private memory, or
    /// registers and local/shared memory).
    pub resources: KernelResources,
}

/// The outcome of a run.
#[derive(Debug, Clone)]
pub struct Report {
    pub device: DeviceInfo,
    /// The build log (OpenCL; often empty when the build succeeds; empty for CUDA).
    pub build_log: String,
    pub steps: Vec<StepRun>,
    /// The module's `output` buffers by name.
    pub outputs: HashMap<String, Buffer>,
}

/// A GPU of this machine, as its driver describes it.
#[derive(Debug, Clone)]
pub struct Gpu {
    pub info: DeviceInfo,
}

impl Gpu {
    /// The first device of `api`, or why there is none.
    pub fn open(api: Api) -> Result<Gpu, Diagnostic> {
        ekb_gpu::device(api).map(|info| Gpu { info }).map_err(|e| {
            let hint = match api {
                Api::OpenCl => {
                    "install an OpenCL driver (Debian: pocl-opencl-icd and ocl-icd-libopencl1), or name \
                                the library in OPENCL_DYLIB_PATH"
                }
                Api::Cuda => "run on a machine with an NVIDIA driver and the CUDA toolkit's NVRTC",
            };
            Diagnostic::error(e.message).with_hint(hint)
        })
    }

    /// The device's limits, each naming the driver query it came from.
    pub fn limits(&self) -> GpuLimits {
        let i = &self.info;
        let limit = |value: u64, which: DeviceLimit| Limit::new(value, i.source(which));
        let cuda = i.api == Api::Cuda;
        GpuLimits {
            api: if cuda { GpuApi::Cuda } else { GpuApi::Opencl },
            threads_per_block: limit(i.max_threads_per_block, DeviceLimit::ThreadsPerBlock),
            block_dims: [0, 1, 2].map(|a| Some(limit(i.max_block_dims[a], DeviceLimit::BlockDim(a)))),
            grid_dims: [0, 1, 2].map(|a| i.max_grid_dims.map(|g| limit(g[a], DeviceLimit::GridDim(a)))),
            shared_bytes_per_block: limit(i.shared_bytes_per_block, DeviceLimit::SharedPerBlock),
            shared_bytes_optin: i.shared_bytes_optin.map(|v| limit(v, DeviceLimit::SharedOptin)),
            private_bytes_per_thread: None,
        }
    }

    /// The findings of the module's launches against this device's limits (empty when legal).
    pub fn legality(&self, m: &Module) -> Vec<Diagnostic> {
        check_limits(m, &self.limits())
    }

    /// Runs the plan of `m` on `inputs` (every `input` buffer by name), with the kernels the
    /// emitter writes for it in the device's dialect.
    pub fn run(&self, m: &Module, inputs: &HashMap<String, Buffer>) -> Result<Report, Diagnostic> {
        let dialect = if self.info.api == Api::Cuda { Dialect::Cuda } else { Dialect::OpenCl };
        self.run_source(m, &module_source(m, dialect, &[])?, inputs)
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
            let mut d = first.with_note("found before launch: nothing was enqueued");
            for more in illegal {
                d = d.with_note(format!("also: {}", more.message));
            }
            return Err(d);
        }
        let code = match self.info.api {
            Api::OpenCl => Code::OpenClSource(source.to_string()),
            Api::Cuda => Code::CudaSource(source.to_string()),
        };
        let plan = plan(m, code)?;
        let mut exec = ekb_gpu::open(&plan).map_err(|e| {
            let d = match e.kind {
                ekb_gpu::ErrorKind::Build => Diagnostic::error(match self.info.api {
                    Api::OpenCl => format!("OpenCL build of module {} failed: {}", m.name, e.message),
                    Api::Cuda => format!("NVRTC compile of module {} failed: {}", m.name, e.message),
                }),
                _ => Diagnostic::error(e.message.clone()),
            };
            let d = match &e.log {
                Some(log) => d.with_note(format!("build log:\n{}", log.trim_end())),
                None => d,
            };
            d.with_note(format!("device: {}", self.info.name))
        })?;
        let err = |e: ekb_gpu::GpuError| Diagnostic::error(e.message);
        for (i, b) in m.buffers.iter().enumerate() {
            match b.role {
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
                    exec.write(i, &ne_bytes(&given.data)).map_err(err)?;
                }
                BufferRole::Output | BufferRole::Temp => {
                    let poison = match b.ty.dtype {
                        DType::F32 => POISON_F32_BITS,
                        DType::I32 => POISON_I32 as u32,
                        DType::I8 => u32::from_ne_bytes([POISON_I8 as u8; 4]),
                        DType::F16 => {
                            let [a, b] = POISON_F16_BITS.to_ne_bytes();
                            u32::from_ne_bytes([a, b, a, b])
                        }
                    };
                    exec.fill(i, poison).map_err(err)?;
                }
            }
        }
        let prepared = exec.prepare().map_err(err)?;
        let ran = exec.execute(Pass::Checked).map_err(err)?;
        if let Some(hit) = exec.check_guards().map_err(err)?.first() {
            let b = &m.buffers[hit.buffer];
            let place = if hit.offset < 0 {
                format!("{} bytes before the start", -hit.offset)
            } else {
                format!("{} bytes past the end", hit.offset as u64 - b.ty.size_bytes() as u64)
            };
            return Err(Diagnostic::error(format!(
                "a kernel of module {} wrote {} byte(s) outside buffer `{}` ({}), the first {place}",
                m.name, hit.bytes, b.name, b.ty
            )));
        }
        let mut outputs = HashMap::new();
        for (i, b) in m.buffers.iter().enumerate().filter(|(_, b)| b.role == BufferRole::Output) {
            let mut bytes = vec![0u8; b.ty.size_bytes()];
            exec.read(i, &mut bytes).map_err(err)?;
            let data = match b.ty.dtype {
                DType::F32 => BufData::F32(
                    bytes.chunks_exact(4).map(|c| f32::from_ne_bytes([c[0], c[1], c[2], c[3]])).collect(),
                ),
                DType::I32 => BufData::I32(
                    bytes.chunks_exact(4).map(|c| i32::from_ne_bytes([c[0], c[1], c[2], c[3]])).collect(),
                ),
                DType::I8 => BufData::I8(bytes.iter().map(|&b| b as i8).collect()),
                DType::F16 => {
                    BufData::F16(bytes.chunks_exact(2).map(|c| u16::from_ne_bytes([c[0], c[1]])).collect())
                }
            };
            outputs.insert(b.name.clone(), Buffer { ty: b.ty.clone(), data });
        }
        let built = exec.built();
        let steps = plan
            .steps
            .iter()
            .zip(prepared.step_ns.iter().chain(&ran.step_ns))
            .map(|(s, &time_ns)| {
                let k = &plan.kernels[s.kernel];
                StepRun {
                    kernel: k.symbol.clone(),
                    grid: k.grid,
                    block: k.block,
                    dynamic_shared_bytes: k.dynamic_shared_bytes,
                    time_ns,
                    resources: built.kernels[s.kernel],
                }
            })
            .collect();
        Ok(Report { device: built.device.clone(), build_log: built.build_logs.concat(), steps, outputs })
    }
}

/// The `ekb-gpu` plan of `m` with its kernels in `code` (one program): each kernel's launch as
/// [`kernels`] describes it (dynamic shared memory, rounded up to [`DYNAMIC_SHARED_ALIGN`], only
/// for kernels that opt in), one buffer per module buffer, one step per `run`.
pub fn plan(m: &Module, code: Code) -> Result<Plan, Diagnostic> {
    let launches = kernels(m)?;
    let buffer_index = |name: &str| m.buffers.iter().position(|b| b.name == name);
    let mut steps = Vec::new();
    for (i, run) in m.plan.iter().enumerate() {
        let kernel = launches
            .iter()
            .position(|k| k.name == run.kernel)
            .ok_or_else(|| Diagnostic::error(format!("run {i} names unknown kernel `{}`", run.kernel)))?;
        let args = run
            .args
            .iter()
            .map(|a| {
                buffer_index(&a.name).ok_or_else(|| Diagnostic::error(format!("unknown buffer `{}`", a.name)))
            })
            .collect::<Result<_, _>>()?;
        steps.push(Step { kernel, args });
    }
    Ok(Plan {
        programs: vec![code],
        kernels: launches
            .iter()
            .map(|k| ekb_gpu::KernelSpec {
                symbol: k.name.clone(),
                program: 0,
                grid: k.launch.grid,
                block: k.launch.block,
                dynamic_shared_bytes: if k.launch.shared_optin {
                    u32::try_from(k.launch.shared_bytes.next_multiple_of(DYNAMIC_SHARED_ALIGN))
                        .unwrap_or(u32::MAX)
                } else {
                    0
                },
                shared_optin: k.launch.shared_optin,
            })
            .collect(),
        buffers: m.buffers.iter().map(|b| b.ty.size_bytes() as u64).collect(),
        steps,
        prepare_steps: m.plan.iter().take_while(|r| r.prepare).count(),
    })
}

/// The elements as native-endian bytes (what device buffers hold).
fn ne_bytes(data: &BufData) -> Vec<u8> {
    match data {
        BufData::F32(v) => v.iter().flat_map(|x| x.to_ne_bytes()).collect(),
        BufData::I32(v) => v.iter().flat_map(|x| x.to_ne_bytes()).collect(),
        BufData::I8(v) => v.iter().map(|&x| x as u8).collect(),
        BufData::F16(v) => v.iter().flat_map(|x| x.to_ne_bytes()).collect(),
    }
}
