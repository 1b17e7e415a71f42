//! The CUDA dialect compiles: every golden CUDA source and the CUDA lowering of every corpus
//! graph go through clang-19's CUDA front end to PTX for sm_90 (no GPU, no CUDA toolkit needed).
//! A small prelude stands in for the CUDA headers: the attribute macros and declarations of the
//! device functions the emitter calls, as NVRTC provides them built in.

use ekb_e2e::{corpus_files, load_graph};
use ekb_gpu_c::{emit, Dialect};
use ekb_ir::TargetProfile;
use ekb_lower::{lower_gpu, lower_gpu_with, Knobs, Schedule};
use std::path::Path;
use std::process::Command;

const PRELUDE: &str = r#"#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __shared__ __attribute__((shared))
#define __launch_bounds__(n) __attribute__((launch_bounds(n)))
#define __align__(n) __attribute__((aligned(n)))
#define __forceinline__ __attribute__((always_inline)) inline
#include <__clang_cuda_builtin_vars.h>
extern "C" __device__ void __syncthreads(void);
__device__ float expf(float); __device__ float logf(float); __device__ float sqrtf(float);
__device__ float rsqrtf(float); __device__ float tanhf(float); __device__ float erff(float);
__device__ float powf(float, float); __device__ float floorf(float); __device__ float ceilf(float);
__device__ float fabsf(float); __device__ float fminf(float, float); __device__ float fmaxf(float, float);
__device__ float sinf(float); __device__ float cosf(float); __device__ float rintf(float);
__device__ int abs(int); __device__ int min(int, int); __device__ int max(int, int);
__device__ int __float2int_rz(float); __device__ float __int_as_float(int);
struct __align__(8) float2 { float x, y; }; struct __align__(16) float4 { float x, y, z, w; };
struct __align__(8) int2 { int x, y; }; struct __align__(16) int4 { int x, y, z, w; };
__device__ float2 make_float2(float, float); __device__ float4 make_float4(float, float, float, float);
__device__ int2 make_int2(int, int); __device__ int4 make_int4(int, int, int, int);
"#;

/// Compiles CUDA source to PTX; the compiler's messages on failure.
fn compile(name: &str, source: &str, dir: &Path) -> Result<(), String> {
    let cu = dir.join(format!("{name}.cu"));
    let prelude = dir.join("prelude.cuh");
    std::fs::write(&prelude, PRELUDE).unwrap();
    std::fs::write(&cu, source).unwrap();
    let out = Command::new("clang-19")
        .args(["-x", "cuda", "--cuda-device-only", "--cuda-gpu-arch=sm_90", "-nocudainc", "-nocudalib"])
        .args(["-Werror", "-Wall", "-Wno-unused-variable", "-S", "-o"])
        .arg(dir.join(format!("{name}.ptx")))
        .arg("-include")
        .arg(&prelude)
        .arg(&cu)
        .output()
        .expect("clang-19 runs (toolchains/setup.sh installs it)");
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

#[test]
fn golden_and_lowered_cuda_sources_compile_to_ptx() {
    let dir = std::env::temp_dir().join(format!("ekb-cuda-syntax-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let mut compiled = 0;
    for entry in std::fs::read_dir(&golden).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "cu") {
            let stem = path.file_stem().unwrap().to_string_lossy().into_owned();
            compile(&stem, &std::fs::read_to_string(&path).unwrap(), &dir)
                .unwrap_or_else(|e| panic!("{stem}.cu:\n{e}"));
            compiled += 1;
        }
    }
    assert_eq!(compiled, 8);
    let t = TargetProfile::load("h200").unwrap();
    // The transposed convolution by cells needs more cells than a small graph has on an H200,
    // so it is also compiled with no minimum of threads.
    let mut any_size = Knobs::for_target(&t);
    any_size.set("gpu.conv_transpose_min_threads", 0).unwrap();
    for path in corpus_files() {
        let g = load_graph(&path);
        let m = lower_gpu(&g, Schedule::Default, &t).unwrap();
        let src = emit(&m, Dialect::Cuda, &t).unwrap();
        compile(&g.name, &src, &dir).unwrap_or_else(|e| panic!("{}:\n{e}\n{src}", g.name));
        if g.name == "conv_transpose2d" {
            let m = lower_gpu_with(&g, Schedule::Default, &any_size, &t).unwrap();
            let src = emit(&m, Dialect::Cuda, &t).unwrap();
            // One output channel and 2 cell rows of 2x2 phases per thread.
            assert!(src.contains("float acc[8];"), "{src}");
            compile("cells", &src, &dir).unwrap_or_else(|e| panic!("cells:\n{e}\n{src}"));
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}
