//! Helpers of the schedule tests: load a program (an L0 graph lowered naively, or an L1
//! module), make seeded inputs for it, and compare two modules' outputs bit for bit on the L1
//! interpreter (or within the task tolerance, for schedules that reassociate float arithmetic,
//! when compiled by LLVM and run in-process, and when emitted as OpenCL C or CUDA C and run on
//! this machine's GPU: PoCL for OpenCL; CUDA only with feature `cuda` and an NVIDIA GPU).

#![allow(dead_code)]

use ekb_gpu_c::run::{Api, Gpu};
use ekb_gpu_c::{emit, Dialect};
use ekb_ir::l0::{check, inputs, Graph};
use ekb_ir::l1::{self, BufferRole, Module};
use ekb_ir::tensor::{compare, BufData, Buffer, Tolerance};
use ekb_ir::{DType, SourceFile, TargetProfile};
use std::collections::HashMap;

/// A program under test: the graph it came from (if any) and its L1 module.
pub struct Program {
    pub graph: Option<Graph>,
    pub module: Module,
}

/// An L0 graph (lowered under the naive schedule for the host) or an L1 module.
pub fn load(name: &str, text: &str) -> Result<Program, String> {
    let src = SourceFile::new(name, text);
    match ekb_ir::level(text) {
        Some("l0") => {
            let g = check::load(&src).map_err(|ds| ds[0].to_string())?;
            let host = TargetProfile::load("host").map_err(|e| e.to_string())?;
            let m = ekb_lower::lower(&g, ekb_lower::Schedule::Naive, &host).map_err(|d| d.to_string())?;
            Ok(Program { graph: Some(g), module: m })
        }
        Some("l1") => Ok(Program { graph: None, module: l1::parse::parse(&src).map_err(|d| d.to_string())? }),
        _ => Err(format!("{name}: neither a graph nor a module")),
    }
}

/// The inputs of seed `seed`: the graph's seeded inputs, or for a bare module small values from
/// a fixed generator (floats in [-2, 2], integers in [-8, 8]).
pub fn seeded(p: &Program, seed: u64) -> HashMap<String, Buffer> {
    if let Some(g) = &p.graph {
        return inputs::generate(g, seed).expect("seeded inputs").into_iter().collect();
    }
    let mut state = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    let mut next = move || {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (state >> 33) as u32
    };
    p.module
        .buffers
        .iter()
        .filter(|b| b.role == BufferRole::Input)
        .map(|b| {
            let n = b.ty.numel();
            let data = match b.ty.dtype {
                DType::F32 => BufData::F32((0..n).map(|_| (next() % 4001) as f32 / 1000.0 - 2.0).collect()),
                DType::I32 => BufData::I32((0..n).map(|_| (next() % 17) as i32 - 8).collect()),
                DType::I8 => BufData::I8((0..n).map(|_| ((next() % 17) as i32 - 8) as i8).collect()),
                DType::F16 => BufData::F16(
                    (0..n).map(|_| ekb_wire::f16::from_f32((next() % 9) as f32 / 4.0 - 1.0)).collect(),
                ),
            };
            (b.name.clone(), Buffer { ty: b.ty.clone(), data })
        })
        .collect()
}

/// Runs both modules on the L1 interpreter on seeds 0..3 and compares every output bit for bit.
pub fn same_on_interp(p: &Program, scheduled: &Module) -> Result<(), String> {
    for seed in 0..3 {
        let ins = seeded(p, seed);
        let want = l1::interp::run(&p.module, &ins).map_err(|d| format!("unscheduled: {d}"))?;
        let got = l1::interp::run(scheduled, &ins).map_err(|d| format!("scheduled: {d}"))?;
        for (name, w) in &want {
            let g = got.get(name).ok_or_else(|| format!("output `{name}` missing"))?;
            if w.as_bytes() != g.as_bytes() {
                return Err(format!("seed {seed}: output `{name}` differs from the unscheduled module's"));
            }
        }
    }
    Ok(())
}

/// Runs both modules on the L1 interpreter on seeds 0..3 and compares every output within the
/// dtype's tolerance (exact for the integer dtypes): for schedules that reassociate f32
/// arithmetic (`rfactor`).
pub fn close_on_interp(p: &Program, scheduled: &Module) -> Result<(), String> {
    for seed in 0..3 {
        let ins = seeded(p, seed);
        let want = l1::interp::run(&p.module, &ins).map_err(|d| format!("unscheduled: {d}"))?;
        let got = l1::interp::run(scheduled, &ins).map_err(|d| format!("scheduled: {d}"))?;
        for (name, w) in &want {
            let g = got.get(name).ok_or_else(|| format!("output `{name}` missing"))?;
            compare(&w.to_tensor(), &g.to_tensor(), Tolerance::default_for(w.ty.dtype))
                .map_err(|e| format!("seed {seed}: output `{name}`: {e}"))?;
        }
    }
    Ok(())
}

/// Compiles the scheduled module for the host with LLVM, runs it in this process on seed 0, and
/// compares with the unscheduled module on the interpreter within the dtype's tolerance.
pub fn same_on_llvm(p: &Program, scheduled: &Module) -> Result<(), String> {
    let host = TargetProfile::load("host").map_err(|e| e.to_string())?;
    let lib = ekb_llvm::HostModule::build(scheduled, &host, 2).map_err(|d| d.to_string())?;
    let got = lib.run(scheduled, &seeded(p, 0)).map_err(|d| d.to_string())?;
    close_to_interp(p, 0, &got, "LLVM")
}

/// Compares the scheduled module's `got` outputs of seed `seed` with the unscheduled module's on
/// the interpreter, within the dtype's tolerance (exact for the integer dtypes).
fn close_to_interp(p: &Program, seed: u64, got: &HashMap<String, Buffer>, on: &str) -> Result<(), String> {
    let want = l1::interp::run(&p.module, &seeded(p, seed)).map_err(|d| format!("unscheduled: {d}"))?;
    for (name, w) in &want {
        let g = got.get(name).ok_or_else(|| format!("seed {seed}: output `{name}` missing on {on}"))?;
        compare(&w.to_tensor(), &g.to_tensor(), Tolerance::default_for(w.ty.dtype))
            .map_err(|e| format!("seed {seed}: output `{name}` on {on}: {e}"))?;
    }
    Ok(())
}

/// The source of the scheduled module in `dialect` for target profile `target` (which the module
/// must verify against: every kernel one legal `launch`).
fn gpu_source(scheduled: &Module, dialect: Dialect, target: &str) -> Result<String, String> {
    let t = TargetProfile::load(target).map_err(|e| e.to_string())?;
    emit(scheduled, dialect, &t).map_err(|d| format!("{} emission for `{target}`: {d}", dialect.name()))
}

/// Runs `source` (the scheduled module's kernels) on `gpu` on seeds 0..3 and compares with the
/// unscheduled module on the interpreter.
fn close_on_gpu(p: &Program, scheduled: &Module, gpu: &Gpu, source: &str) -> Result<(), String> {
    let on = &gpu.info.name;
    for seed in 0..3 {
        let report = gpu
            .run_source(scheduled, source, &seeded(p, seed))
            .map_err(|d| format!("seed {seed} on {on}: {d}\n--- source\n{source}"))?;
        close_to_interp(p, seed, &report.outputs, on)?;
    }
    Ok(())
}

/// Emits the scheduled module as OpenCL C for the `pocl` profile, runs it on this machine's
/// OpenCL device (PoCL in CI; no device is a failure) on seeds 0..3, and compares with
/// the unscheduled module on the interpreter within the dtype's tolerance.
pub fn same_on_opencl(p: &Program, scheduled: &Module) -> Result<(), String> {
    let source = gpu_source(scheduled, Dialect::OpenCl, "pocl")?;
    let gpu = Gpu::open(Api::OpenCl).map_err(|d| d.to_string())?;
    close_on_gpu(p, scheduled, &gpu, &source)
}

/// What became of a `cuda` run.
pub enum CudaRun {
    /// Emitted, run on the CUDA device, and compared.
    Ran,
    /// Emitted for the `h200` profile without error, but not run, for the reason given.
    NotRun(String),
}

/// Emits the scheduled module as CUDA C for the `h200` profile (an error fails, with or without
/// a GPU). With feature `cuda` and a CUDA device, runs it on seeds 0..3 and compares with the
/// unscheduled module on the interpreter within the dtype's tolerance; otherwise says why it
/// did not run (built without the feature, or no CUDA device: the runner's diagnostic).
pub fn same_on_cuda(p: &Program, scheduled: &Module) -> Result<CudaRun, String> {
    let source = gpu_source(scheduled, Dialect::Cuda, "h200")?;
    #[cfg(feature = "cuda")]
    {
        match Gpu::open(Api::Cuda) {
            Ok(gpu) => close_on_gpu(p, scheduled, &gpu, &source).map(|()| CudaRun::Ran),
            // The runner's way of saying there is no driver or device (as ekb-gpu-c's CUDA tests take it).
            Err(d) if d.message.starts_with("CUDA: ") => {
                Ok(CudaRun::NotRun(format!("no CUDA device ({})", d.message)))
            }
            Err(d) => Err(d.to_string()),
        }
    }
    #[cfg(not(feature = "cuda"))]
    {
        let _ = (p, source);
        Ok(CudaRun::NotRun("built without feature `cuda`".into()))
    }
}
