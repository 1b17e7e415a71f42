//! NaN, infinities and signed zeros through every operator that lowers to L1's f32 `max`/`min`
//! (`relu`, `relu6`, `hardsigmoid`, `clip`, elementwise `max`/`min`, `max`/`min` reductions
//! along the last axis and across rows, softmax's max pass, `max_pool2d`) and through
//! `quantize_linear`'s saturation: the L1 interpreter, the compiled CPU code (clang-19, on this
//! machine) and the OpenCL kernels (the system's driver, PoCL in CI) agree with the L0 reference
//! interpreter, which propagates NaN as PyTorch and onnxruntime do, under both schedules.
//! The CUDA kernels' text is checked here; they run with feature `cuda` on a machine with an
//! NVIDIA GPU.
//!
//! Written against a compiled `max` that returned the other operand of a NaN (`llvm.maxnum`,
//! C's `fmaxf`): `relu(nan)` was 0 and a NaN vanished in a max reduction.
//!
//! The rows are 256 long, so the CPU's float max/min reductions run on lane partials (at least
//! two tiles of `4 * lanes` up to AVX-512) and a NaN in the last element falls in the last,
//! short tile.

use ekb_e2e::check_outputs;
use ekb_gpu_c::run::{Api, Gpu};
use ekb_gpu_c::{emit, Dialect};
use ekb_ir::l0::{self, Graph};
use ekb_ir::l1::interp;
use ekb_ir::tensor::{BufData, Buffer, Tensor};
use ekb_ir::types::{DType, TensorType};
use ekb_ir::{SourceFile, TargetProfile};
use ekb_llvm::HostModule;
use ekb_lower::{lower, lower_gpu, Schedule};
use std::collections::HashMap;

const GRAPH: &str = "graph nan_rules(x: f32[4,256], y: f32[4,256], p: f32[1,2,8,8]) -> (relu: f32[4,256], relu6: f32[4,256], hsig: f32[4,256], clip: f32[4,256], mx: f32[4,256], mn: f32[4,256], rmax: f32[4], rmin: f32[4], cmax: f32[256], cmin: f32[256], sm: f32[4,256], q: i8[4,256], pool: f32[1,2,4,4]) {
  %relu = relu(x)
  %relu6 = relu6(x)
  %hsig = hardsigmoid(x)
  %clip = clip(x, min=-1.0, max=2.0)
  %mx = max(x, y)
  %mn = min(x, y)
  %rmax = max(x, axes=[1])
  %rmin = min(x, axes=[1])
  %cmax = max(x, axes=[0])
  %cmin = min(x, axes=[0])
  %sm = softmax(x, axis=-1)
  %q = quantize_linear(x, scale=0.5)
  %pool = max_pool2d(p, kernel=[2,2])
  return %relu, %relu6, %hsig, %clip, %mx, %mn, %rmax, %rmin, %cmax, %cmin, %sm, %q, %pool
}
";

fn graph() -> Graph {
    l0::check::load(&SourceFile::new("nan_rules", GRAPH)).unwrap_or_else(|ds| panic!("{}", ds[0]))
}

fn f32s(shape: &[usize], data: Vec<f32>) -> Buffer {
    Buffer { ty: TensorType::new(DType::F32, shape.to_vec()), data: BufData::F32(data) }
}

/// Ordinary values in [-4, 4) with the special ones placed where each path meets them: row 0
/// holds infinities and both zeros but no NaN, row 1 a NaN near its start, row 2 a NaN as its
/// last element, row 3 a NaN among `-inf`s. `y` has NaNs where `x` has none, and both where
/// both do; the pool input a NaN in one window and infinities in others.
fn inputs() -> HashMap<String, Buffer> {
    let ordinary = |i: usize, k: usize| ((i * 37 + k * 11) % 64) as f32 / 8.0 - 4.0;
    let mut x: Vec<f32> = (0..4 * 256).map(|i| ordinary(i, 1)).collect();
    let mut y: Vec<f32> = (0..4 * 256).map(|i| ordinary(i, 5)).collect();
    (x[5], x[9], x[11], x[12]) = (f32::INFINITY, f32::NEG_INFINITY, -0.0, 0.0);
    (y[11], y[12]) = (0.0, -0.0);
    x[256 + 3] = f32::NAN;
    x[2 * 256 + 255] = f32::NAN;
    for v in &mut x[3 * 256..] {
        *v = f32::NEG_INFINITY;
    }
    x[3 * 256 + 130] = f32::NAN;
    (y[7], y[256 + 3], y[2 * 256 + 100]) = (f32::NAN, f32::NAN, -f32::NAN);
    let mut p: Vec<f32> = (0..2 * 64).map(|i| ordinary(i, 3)).collect();
    (p[0], p[19], p[64 + 9], p[64 + 54]) = (f32::NAN, f32::INFINITY, f32::NEG_INFINITY, -0.0);
    HashMap::from([
        ("x".to_string(), f32s(&[4, 256], x)),
        ("y".to_string(), f32s(&[4, 256], y)),
        ("p".to_string(), f32s(&[1, 2, 8, 8], p)),
    ])
}

/// The L0 reference outputs, in the graph's output order.
fn reference(g: &Graph, inputs: &HashMap<String, Buffer>) -> Vec<Tensor> {
    let tensors = inputs.iter().map(|(n, b)| (n.clone(), b.to_tensor())).collect();
    l0::interp::run(g, &tensors).unwrap_or_else(|d| panic!("{d}"))
}

#[test]
fn the_inputs_reach_every_special_case_and_the_reference_propagates_nan() {
    let g = graph();
    let want = reference(&g, &inputs());
    let out = |name: &str| &want[g.outputs.iter().position(|o| o.name == name).unwrap()].data;
    // relu, clip and max/min of a NaN are NaN; a NaN row's max and min are NaN, wherever the NaN.
    assert!(out("relu")[256 + 3].is_nan() && out("clip")[256 + 3].is_nan() && out("hsig")[256 + 3].is_nan());
    assert!(out("mx")[7].is_nan() && out("mn")[256 + 3].is_nan());
    assert_eq!(out("rmax")[0], f64::INFINITY);
    assert_eq!(out("rmin")[0], f64::NEG_INFINITY);
    assert!(out("rmax")[1..].iter().all(|v| v.is_nan()) && out("rmin")[1..].iter().all(|v| v.is_nan()));
    assert!(out("cmax")[3].is_nan() && out("cmax")[255].is_nan() && !out("cmax")[4].is_nan());
    // NaN saturates low in quantize_linear; the NaN window of the pool is NaN, the others not.
    assert_eq!(out("q")[256 + 3], -128.0);
    let pool = out("pool");
    assert!(pool[0].is_nan() && pool[1..].iter().all(|v| !v.is_nan()), "{pool:?}");
}

#[test]
fn the_interpreter_and_compiled_cpu_code_agree_with_the_reference() {
    let (g, inputs) = (graph(), inputs());
    let want = reference(&g, &inputs);
    let t = TargetProfile::load("host").unwrap();
    for schedule in Schedule::ALL {
        let m = lower(&g, schedule, &t).unwrap_or_else(|d| panic!("{schedule}: {d}"));
        let got = interp::run(&m, &inputs).unwrap_or_else(|d| panic!("{schedule}: {d}"));
        let problems = check_outputs(&g, &want, &got);
        assert!(problems.is_empty(), "interpreter, {schedule} schedule: {problems:#?}");
        let host = HostModule::build(&m, &t, 2).unwrap_or_else(|d| panic!("{schedule}: {d}"));
        let got = host.run(&m, &inputs).unwrap_or_else(|d| panic!("{schedule}: {d}"));
        let problems = check_outputs(&g, &want, &got);
        assert!(problems.is_empty(), "compiled for the host, {schedule} schedule: {problems:#?}");
    }
}

#[test]
fn the_opencl_kernels_agree_with_the_reference() {
    let gpu = Gpu::open(Api::OpenCl).unwrap_or_else(|d| panic!("{d}"));
    let (g, inputs) = (graph(), inputs());
    let want = reference(&g, &inputs);
    let t = TargetProfile::load("pocl").unwrap();
    for schedule in Schedule::ALL {
        let m = lower_gpu(&g, schedule, &t).unwrap_or_else(|d| panic!("{schedule}: {d}"));
        let got = interp::run(&m, &inputs).unwrap_or_else(|d| panic!("{schedule}: {d}"));
        let problems = check_outputs(&g, &want, &got);
        assert!(problems.is_empty(), "interpreter of the GPU lowering, {schedule} schedule: {problems:#?}");
        let report = gpu.run(&m, &inputs).unwrap_or_else(|d| panic!("{schedule}: {d}"));
        let problems = check_outputs(&g, &want, &report.outputs);
        assert!(problems.is_empty(), "OpenCL on {}, {schedule} schedule: {problems:#?}", report.device.name);
    }
}

#[test]
fn the_cuda_kernels_call_the_nan_propagating_min_and_max() {
    let g = graph();
    let t = TargetProfile::load("h200").unwrap();
    let src = emit(&lower_gpu(&g, Schedule::Default, &t).unwrap(), Dialect::Cuda, &t).unwrap();
    // Defined once, before the kernels, with the NaN check ahead of fmaxf/fminf.
    for f in ["fmax", "fmin"] {
        let def = format!(
            "__device__ __forceinline__ float ekb_{f}(float a, float b) {{ return a != a || b != b ? a + b : {f}f(a, b); }}\n"
        );
        assert_eq!(src.matches(&def).count(), 1, "{def} in\n{src}");
        assert!(src.find(&def).unwrap() < src.find("__global__").unwrap(), "{src}");
        assert!(src.contains(&format!("ekb_{f}(")), "{src}");
    }
    // No f32 min or max anywhere else goes through fmaxf/fminf, which drop a NaN.
    let calls = src.matches("fmaxf(").count() + src.matches("fminf(").count();
    assert_eq!(calls, 2, "only the helpers call fmaxf/fminf:\n{src}");
    // Beyond their definitions, the kernels call both (relu, clip, max, the max reductions, ...).
    assert!(src.matches("ekb_fmax(").count() > 1 && src.matches("ekb_fmin(").count() > 1, "{src}");
}

#[cfg(feature = "cuda")]
#[test]
fn the_cuda_kernels_agree_with_the_reference() {
    let gpu = match Gpu::open(Api::Cuda) {
        Ok(gpu) => gpu,
        Err(d) => {
            assert!(d.message.starts_with("CUDA: "), "{d}");
            eprintln!("no CUDA here: {d}");
            return;
        }
    };
    let (g, inputs) = (graph(), inputs());
    let want = reference(&g, &inputs);
    let t = TargetProfile::load("h200").unwrap();
    for schedule in Schedule::ALL {
        let m = lower_gpu(&g, schedule, &t).unwrap_or_else(|d| panic!("{schedule}: {d}"));
        let report = gpu.run(&m, &inputs).unwrap_or_else(|d| panic!("{schedule}: {d}"));
        let problems = check_outputs(&g, &want, &report.outputs);
        assert!(problems.is_empty(), "CUDA on {}, {schedule} schedule: {problems:#?}", gpu.info.name);
    }
}
