//! GPU payloads in the runtime (features `opencl` and `cuda`; `docs/gpu.md`): a payload's GPU
//! program as an `ekb-gpu` plan, the work a GPU driver does outside runs (building a payload's
//! programs when it is loaded, describing the GPUs), and the figures GPU runs add to reports.
//!
//! Drivers are initialised only in forked children ([`in_child`]), never in the serving
//! process: CUDA in particular does not survive a fork, and every run forks its kernel process
//! from the serving process. Loading a GPU payload therefore builds its programs in a child
//! ([`probe`]), one kept for the serving process's life so that its driver starts once — a
//! program that does not build is refused at `Load` with the build log, like a CPU object that
//! does not link — and the run's kernel process loads what it built (`crate::worker`).
//!
//! What it must keep true: the serving process never loads a GPU driver library; a child that
//! hangs is killed after its time limit and reaped; a build that fails is an error carrying the
//! driver's log.

use ekb_wire::protocol::GpuInfo;

#[cfg(feature = "gpu")]
pub use enabled::*;

/// The GPUs of this machine, for `DeviceInfo` and `ekb-rt info`, and why an interface this build
/// has found none.
#[cfg(not(feature = "gpu"))]
pub fn list() -> (Vec<GpuInfo>, Vec<String>) {
    (Vec::new(), vec![CPU_ONLY.into()])
}

#[cfg(not(feature = "gpu"))]
const CPU_ONLY: &str =
    "this is a CPU-only build of the runtime (GPU builds have the `opencl` and `cuda` features)";

/// The lines `ekb-rt info` shows about GPUs: none in a CPU-only build.
#[cfg(not(feature = "gpu"))]
pub fn describe(_: &[GpuInfo], _: &[String]) -> Vec<String> {
    vec![CPU_ONLY.into()]
}

#[cfg(feature = "gpu")]
mod enabled {
    use super::GpuInfo;
    use crate::isolate;
    use crate::memory::{LiveGpu, LiveLimit};
    use ekb_gpu::{Api, Built, Code, DeviceInfo, GpuError, KernelSpec, Limit, Plan, Step};
    use ekb_wire::payload::{Backend, BlobKind, Launch, Manifest};
    use ekb_wire::protocol::{Counter, CounterKind, CounterReading};
    use serde::de::DeserializeOwned;
    use serde::Serialize;
    use std::os::fd::AsRawFd;
    use std::sync::{Mutex, PoisonError};
    use std::time::Duration;

    /// How long building a payload's programs may take before the build is abandoned.
    pub const BUILD_TIMEOUT: Duration = Duration::from_secs(300);
    /// How long describing the GPUs may take.
    const LIST_TIMEOUT: Duration = Duration::from_secs(60);

    /// The interface of a GPU backend (`None` for `cpu-llvm`).
    pub fn api(backend: Backend) -> Option<Api> {
        match backend {
            Backend::CpuLlvm => None,
            Backend::OpenCl => Some(Api::OpenCl),
            Backend::Cuda => Some(Api::Cuda),
        }
    }

    /// The plan of a validated GPU manifest: one program per code blob (in first-use order),
    /// the kernels with their launches, the buffers' sizes and the steps. `blob(index)` returns
    /// a blob's kind and bytes; an error names a code blob that is not UTF-8 text.
    pub fn plan<'b>(
        m: &Manifest,
        blob: impl Fn(u32) -> Option<(BlobKind, &'b [u8])>,
    ) -> Result<Plan, String> {
        let mut blobs: Vec<u32> = Vec::new();
        let mut programs = Vec::new();
        let mut kernels = Vec::new();
        for k in &m.kernels {
            let program = match blobs.iter().position(|&b| b == k.blob) {
                Some(p) => p,
                None => {
                    // Validated: the blob exists and is code of the backend.
                    let (kind, bytes) = blob(k.blob).ok_or_else(|| format!("blob {} is missing", k.blob))?;
                    let text = String::from_utf8(bytes.to_vec())
                        .map_err(|e| format!("blob {} ({kind}) is not UTF-8 text: {e}", k.blob))?;
                    programs.push(match kind {
                        BlobKind::OpenClSource => Code::OpenClSource(text),
                        BlobKind::Ptx => Code::Ptx(text),
                        _ => Code::CudaSource(text),
                    });
                    blobs.push(k.blob);
                    blobs.len() - 1
                }
            };
            let Launch::Grid { grid, block, shared_bytes, shared_optin } = k.launch else {
                return Err(format!("kernel `{}` has no grid launch", k.name));
            };
            kernels.push(KernelSpec {
                symbol: k.symbol.clone(),
                program,
                grid,
                block,
                dynamic_shared_bytes: shared_bytes,
                shared_optin,
            });
        }
        Ok(Plan {
            programs,
            kernels,
            buffers: m.buffers.iter().map(|b| b.size_bytes().unwrap_or(0)).collect(),
            steps: m
                .plan
                .iter()
                .map(|s| Step {
                    kernel: s.kernel as usize,
                    args: s.args.iter().map(|&a| a as usize).collect(),
                })
                .collect(),
            prepare_steps: m.prepare_plan().len(),
        })
    }

    /// Runs `f` in a forked child and returns what it answered; an error says why there is no
    /// answer (the child died, or took longer than `timeout` and was killed).
    pub fn in_child<T: Serialize + DeserializeOwned>(
        what: &str,
        timeout: Duration,
        f: impl FnOnce() -> T,
    ) -> Result<T, String> {
        let mut child = isolate::spawn(&[], None, |io| {
            let answer = postcard::to_allocvec(&f()).unwrap_or_default();
            match isolate::write_message(io.replies.as_raw_fd(), &answer) {
                Ok(()) => 0,
                Err(_) => isolate::EXIT_INTERNAL,
            }
        })
        .map_err(|e| format!("cannot fork the process that {what}: {e}"))?;
        let answer = child.receive(timeout);
        child.reap(Some(Duration::from_secs(5)));
        match answer {
            Ok(bytes) => postcard::from_bytes(&bytes)
                .map_err(|e| format!("the process that {what} answered garbage: {e}")),
            Err(isolate::Death::Timeout { after }) => {
                Err(format!("the process that {what} did not finish within {} s", after.as_secs()))
            }
            Err(d) => Err(format!("the process that {what} died: {d:?}")),
        }
    }

    /// The child that builds GPU programs for [`probe`], started at the first build and kept
    /// for the process's life (it dies with it): its drivers start once, not once per payload
    /// (CUDA's `cuInit` and context cost about 0.3 s a process on an H200 machine). One that
    /// died or hung is killed and replaced at the next build.
    static BUILDER: Mutex<Option<isolate::Child>> = Mutex::new(None);

    /// Builds `plan`'s programs on the device in the builder child (`ekb_gpu::compile`): the
    /// device, the build logs and the kernels' resources.
    pub fn probe(plan: &Plan) -> Result<Built, GpuError> {
        let api = plan.api()?;
        let driver = |e: String| GpuError::new(ekb_gpu::ErrorKind::Driver, format!("{api}: {e}"));
        let request = postcard::to_allocvec(plan).map_err(|e| driver(e.to_string()))?;
        let mut builder = BUILDER.lock().unwrap_or_else(PoisonError::into_inner);
        let child = match builder.as_mut() {
            Some(child) => child,
            None => builder.insert(
                isolate::spawn(&[], None, serve_builds)
                    .map_err(|e| driver(format!("cannot fork the process that builds GPU programs: {e}")))?,
            ),
        };
        let answer = child.request(&request, BUILD_TIMEOUT);
        let answer = match answer {
            Ok(bytes) => postcard::from_bytes::<Result<Built, GpuError>>(&bytes)
                .map_err(|e| format!("the process that builds GPU programs answered garbage: {e}")),
            Err(isolate::Death::Timeout { after }) => Err(format!(
                "the process that builds GPU programs did not finish within {} s",
                after.as_secs()
            )),
            Err(d) => Err(format!("the process that builds GPU programs died: {d:?}")),
        };
        answer.unwrap_or_else(|e| {
            // Killed (and reaped) on drop; the next build starts another.
            *builder = None;
            Err(driver(e))
        })
    }

    /// The builder child's loop: a plan in, its build out, until the parent closes the pipe.
    fn serve_builds(io: isolate::ChildIo) -> i32 {
        loop {
            let plan = match isolate::read_message(io.commands.as_raw_fd()) {
                Ok(Some(bytes)) => postcard::from_bytes::<Plan>(&bytes),
                Ok(None) => return 0,
                Err(_) => return isolate::EXIT_INTERNAL,
            };
            let built = plan.map_err(|e| {
                GpuError::new(ekb_gpu::ErrorKind::Driver, format!("the build request was garbled: {e}"))
            });
            let answer =
                postcard::to_allocvec(&built.and_then(|plan| ekb_gpu::compile(&plan))).unwrap_or_default();
            if isolate::write_message(io.replies.as_raw_fd(), &answer).is_err() {
                return isolate::EXIT_INTERNAL;
            }
        }
    }

    /// The device's limits and each kernel's, as the memory check takes them.
    pub fn live_limits(built: &Built) -> LiveGpu {
        let d = &built.device;
        let l = |value: u64, which: Limit| LiveLimit { value, source: d.source(which) };
        LiveGpu {
            threads_per_block: l(d.max_threads_per_block, Limit::ThreadsPerBlock),
            block_dims: [0, 1, 2].map(|a| l(d.max_block_dims[a], Limit::BlockDim(a))),
            grid_dims: d.max_grid_dims.map(|g| [0, 1, 2].map(|a| l(g[a], Limit::GridDim(a)))),
            shared_per_block: l(d.shared_bytes_per_block, Limit::SharedPerBlock),
            shared_optin: d.shared_bytes_optin.map(|v| l(v, Limit::SharedOptin)),
            max_alloc: l(d.max_alloc_bytes, Limit::MaxAlloc),
            kernel_threads: built
                .kernels
                .iter()
                .map(|k| {
                    let (value, query) = k.max_threads();
                    LiveLimit { value, source: format!("from {} device `{}` ({query})", d.api, d.name) }
                })
                .collect(),
        }
    }

    /// The protocol's description of a device.
    pub fn gpu_info(d: &DeviceInfo) -> GpuInfo {
        GpuInfo {
            name: d.name.clone(),
            backend: match d.api {
                Api::OpenCl => Backend::OpenCl,
                Api::Cuda => Backend::Cuda,
            },
            memory_bytes: d.global_mem_bytes,
            compute_units: d.compute_units,
            attributes: d.attributes(),
        }
    }

    /// The GPUs of this machine (the first device of each interface this build has), described
    /// in a child process, and why an interface has none.
    pub fn list() -> (Vec<GpuInfo>, Vec<String>) {
        let apis: Vec<Api> = [Api::OpenCl, Api::Cuda].into_iter().filter(|a| a.compiled_in()).collect();
        let found = in_child("describes the GPUs", LIST_TIMEOUT, || {
            apis.iter().map(|&a| ekb_gpu::device(a).map_err(|e| e.message)).collect::<Vec<_>>()
        });
        match found {
            Ok(results) => {
                let (mut gpus, mut notes) = (Vec::new(), Vec::new());
                for r in results {
                    match r {
                        Ok(d) => gpus.push(gpu_info(&d)),
                        Err(e) => notes.push(e),
                    }
                }
                (gpus, notes)
            }
            Err(e) => (Vec::new(), vec![e]),
        }
    }

    /// The lines `ekb-rt info` shows about GPUs: each device with its figures, then why an
    /// interface found none.
    pub fn describe(gpus: &[GpuInfo], notes: &[String]) -> Vec<String> {
        let mut out = Vec::new();
        for g in gpus {
            let api = if g.backend == Backend::Cuda { "CUDA" } else { "OpenCL" };
            out.push(format!(
                "{api} `{}`: {} compute units, {:.1} GiB",
                g.name,
                g.compute_units,
                g.memory_bytes as f64 / (1u64 << 30) as f64
            ));
            out.extend(g.attributes.iter().map(|(k, v)| format!("  {k}: {v}")));
        }
        out.extend(notes.iter().map(|n| format!("none: {n}")));
        out
    }

    /// The static figures of every kernel of `built`, as counters (`KERNEL: QUERY`, runs 1).
    pub fn resource_counters(names: &[String], built: &Built) -> Vec<Counter> {
        let mut out = Vec::new();
        for (name, k) in names.iter().zip(&built.kernels) {
            for (query, value) in k.attributes() {
                out.push(Counter {
                    name: format!("{name}: {query}"),
                    kind: CounterKind::Gpu,
                    reading: CounterReading::Counted { total: value, runs: 1, scaled: false },
                });
            }
        }
        out
    }
}
