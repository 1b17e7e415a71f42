//! One L1 module built once on a device and executed many times: the benchmark's runner.
//!
//! [`Loaded::new`] checks the module's launches against the device's live limits, emits it in
//! the device's dialect for the target profile (which verifies it), builds the plan with
//! `ekb_gpu_c::run::plan` (the kernels, launches, buffers and steps `ekb_gpu_c::run` runs) and
//! opens it with `ekb_gpu`; the program is built once and the buffers allocated once. [`Loaded::time`] runs
//! the whole plan repeatedly and keeps each execution's span by the driver's clock (OpenCL
//! profiling events, CUDA events); [`Loaded::host_wall`] times one launch and its synchronisation
//! by the host's clock.
//!
//! What it must keep true: outputs are filled with the interpreter's poison before the first
//! execution, so an element no execution writes shows up in the checks; every failure (no
//! device, a build, a driver error, a kernel writing into a guard) is an `Err` with the
//! driver's words, never a panic.

use ekb_gpu::{Code, Executor, Pass};
use ekb_gpu_c::run::{Api, Gpu};
use ekb_gpu_c::{emit, Dialect};
use ekb_ir::l1::interp::{POISON_F32_BITS, POISON_I32};
use ekb_ir::l1::{BufferRole, Module};
use ekb_ir::{DType, TargetProfile};
use std::time::{Duration, Instant};

/// How many times to run a measurement.
#[derive(Debug, Clone, Copy)]
pub struct Reps {
    /// Untimed executions first (the driver's first launch, caches, clocks).
    pub warmup: usize,
    /// Timed executions continue until at least this many ran ...
    pub min_runs: usize,
    /// ... and at least this much host time went by,
    pub min_time: Duration,
    /// unless this much time went by and at least `floor_runs` ran (slow kernels),
    pub max_time: Duration,
    pub floor_runs: usize,
    /// and never more than this many.
    pub max_runs: usize,
}

impl Reps {
    pub fn full() -> Reps {
        Reps {
            warmup: 2,
            min_runs: 20,
            min_time: Duration::from_secs(1),
            max_time: Duration::from_secs(10),
            floor_runs: 3,
            max_runs: 5000,
        }
    }

    pub fn quick() -> Reps {
        Reps {
            warmup: 1,
            min_runs: 5,
            min_time: Duration::from_millis(200),
            max_time: Duration::from_secs(2),
            floor_runs: 2,
            max_runs: 1000,
        }
    }

    fn done(&self, runs: usize, elapsed: Duration) -> bool {
        runs >= self.max_runs
            || (runs >= self.min_runs && elapsed >= self.min_time)
            || (runs >= self.floor_runs && elapsed >= self.max_time)
    }
}

/// Times of repeated executions, in nanoseconds.
#[derive(Debug, Clone)]
pub struct Timing {
    pub runs: usize,
    pub median_ns: f64,
}

impl Timing {
    fn of(mut ns: Vec<f64>) -> Timing {
        ns.sort_by(f64::total_cmp);
        let n = ns.len();
        let median_ns = if n % 2 == 1 { ns[n / 2] } else { (ns[n / 2 - 1] + ns[n / 2]) / 2.0 };
        Timing { runs: n, median_ns }
    }

    pub fn median_s(&self) -> f64 {
        self.median_ns * 1e-9
    }
}

/// A module's plan, built and allocated on the device.
pub struct Loaded {
    exec: Box<dyn Executor>,
    module: Module,
    /// The kernels the plan runs per execution.
    pub steps: usize,
}

impl Loaded {
    /// Builds `m` for `gpu` (emitted for `target`, whose GPU must speak the device's dialect).
    pub fn new(gpu: &Gpu, m: Module, target: &TargetProfile) -> Result<Loaded, String> {
        if let Some(first) = gpu.legality(&m).into_iter().next() {
            return Err(format!("module {} cannot launch on this device: {first}", m.name));
        }
        let (dialect, code): (Dialect, fn(String) -> Code) = match gpu.info.api {
            Api::OpenCl => (Dialect::OpenCl, Code::OpenClSource),
            Api::Cuda => (Dialect::Cuda, Code::CudaSource),
        };
        let source = emit(&m, dialect, target).map_err(|d| d.to_string())?;
        let plan = ekb_gpu_c::run::plan(&m, code(source)).map_err(|d| d.to_string())?;
        let mut exec = ekb_gpu::open(&plan).map_err(|e| e.to_string())?;
        for (i, b) in m.buffers.iter().enumerate().filter(|(_, b)| b.role != BufferRole::Input) {
            let poison = if b.ty.dtype == DType::F32 { POISON_F32_BITS } else { POISON_I32 as u32 };
            exec.fill(i, poison).map_err(|e| format!("filling `{}`: {e}", b.name))?;
        }
        Ok(Loaded { exec, steps: plan.steps.len() - plan.prepare_steps, module: m })
    }

    fn index(&self, name: &str) -> Result<usize, String> {
        self.module
            .buffers
            .iter()
            .position(|b| b.name == name)
            .ok_or_else(|| format!("module {} has no buffer `{name}`", self.module.name))
    }

    /// Writes an f32 buffer.
    pub fn write(&mut self, name: &str, data: &[f32]) -> Result<(), String> {
        let i = self.index(name)?;
        let want = self.module.buffers[i].ty.numel();
        if data.len() != want {
            return Err(format!("buffer `{name}` holds {want} elements, {} given", data.len()));
        }
        let bytes: Vec<u8> = data.iter().flat_map(|x| x.to_ne_bytes()).collect();
        self.exec.write(i, &bytes).map_err(|e| e.to_string())
    }

    /// Reads an f32 buffer back.
    pub fn read(&mut self, name: &str) -> Result<Vec<f32>, String> {
        let i = self.index(name)?;
        let mut bytes = vec![0u8; self.module.buffers[i].ty.numel() * 4];
        self.exec.read(i, &mut bytes).map_err(|e| e.to_string())?;
        Ok(bytes.chunks_exact(4).map(|c| f32::from_ne_bytes([c[0], c[1], c[2], c[3]])).collect())
    }

    /// Runs the prepare steps on the buffers as written, then the plan `reps` times (after the
    /// warm-up), each execution's kernels back to back, and returns the spans by the driver's
    /// clock; then checks the guards.
    pub fn time(&mut self, reps: Reps) -> Result<Timing, String> {
        self.exec.prepare().map_err(|e| e.to_string())?;
        for _ in 0..reps.warmup {
            self.exec.execute(Pass::Steps).map_err(|e| e.to_string())?;
        }
        let start = Instant::now();
        let mut ns = Vec::new();
        while !reps.done(ns.len(), start.elapsed()) {
            let e = self.exec.execute(Pass::Steps).map_err(|e| e.to_string())?;
            ns.push(e.span_ns as f64);
        }
        self.check_guards()?;
        Ok(Timing::of(ns))
    }

    /// Host wall-clock time of one execution that waits for its kernel (enqueue or launch,
    /// the driver's timing events, synchronise), repeated like [`Loaded::time`].
    pub fn host_wall(&mut self, reps: Reps) -> Result<Timing, String> {
        self.exec.prepare().map_err(|e| e.to_string())?;
        for _ in 0..reps.warmup {
            self.exec.execute(Pass::Checked).map_err(|e| e.to_string())?;
        }
        let start = Instant::now();
        let mut ns = Vec::new();
        while !reps.done(ns.len(), start.elapsed()) {
            let t = Instant::now();
            self.exec.execute(Pass::Checked).map_err(|e| e.to_string())?;
            ns.push(t.elapsed().as_nanos() as f64);
        }
        self.check_guards()?;
        Ok(Timing::of(ns))
    }

    fn check_guards(&mut self) -> Result<(), String> {
        match self.exec.check_guards().map_err(|e| e.to_string())?.first() {
            None => Ok(()),
            Some(hit) => Err(format!(
                "a kernel wrote {} byte(s) into the guard of buffer `{}` (offset {})",
                hit.bytes, self.module.buffers[hit.buffer].name, hit.offset
            )),
        }
    }
}
