//! The C-family emitter on representative kernels: golden CUDA C and OpenCL C sources (an
//! elementwise 1-D grid, a shared-memory reduction with barriers, a tiled matmul with shared
//! tiles, every expression form, dynamic shared memory), and its refusals.
//!
//! `tests/golden/NAME.ekl1` is emitted as `NAME.cu` (for the `h200` profile) and `NAME.cl` (for
//! `pocl`); `EKB_BLESS=1` rewrites the expected files after a deliberate change.

use ekb_gpu_c::{emit, kernels, Dialect};
use ekb_ir::l1::parse::parse;
use ekb_ir::l1::Module;
use ekb_ir::{SourceFile, TargetProfile};
use std::path::{Path, PathBuf};

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

fn load(stem: &str) -> Module {
    let path = golden_dir().join(format!("{stem}.ekl1"));
    let src = SourceFile::read(&path).unwrap_or_else(|d| panic!("{d}"));
    parse(&src).unwrap_or_else(|d| panic!("{}", src.locate(d)))
}

fn target(name: &str) -> TargetProfile {
    TargetProfile::load(name).unwrap()
}

/// Compares with (or, with `EKB_BLESS=1`, writes) the golden file.
fn check_golden(file: &str, got: &str) {
    let path = golden_dir().join(file);
    if std::env::var_os("EKB_BLESS").is_some() {
        std::fs::write(&path, got).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (EKB_BLESS=1 writes it)", path.display()));
    assert_eq!(got, want, "{file} changed (EKB_BLESS=1 rewrites it)");
}

#[test]
fn golden_sources_in_both_dialects() {
    for stem in ["relu", "rowsum", "matmul_tiled", "expressions", "int8", "vector", "half"] {
        let m = load(stem);
        check_golden(
            &format!("{stem}.cu"),
            &emit(&m, Dialect::Cuda, &target("h200")).unwrap_or_else(|d| panic!("{d}")),
        );
        check_golden(
            &format!("{stem}.cl"),
            &emit(&m, Dialect::OpenCl, &target("pocl")).unwrap_or_else(|d| panic!("{d}")),
        );
    }
    let m = load("big_shared");
    check_golden(
        "big_shared.cu",
        &emit(&m, Dialect::Cuda, &target("h200")).unwrap_or_else(|d| panic!("{d}")),
    );
}

#[test]
fn the_dialects_differ_only_in_their_spellings() {
    let m = load("rowsum");
    let cuda = emit(&m, Dialect::Cuda, &target("jetson-orin")).unwrap();
    let ocl = emit(&m, Dialect::OpenCl, &target("rk3588")).unwrap();
    assert!(cuda.contains("extern \"C\" __global__ void __launch_bounds__(64) rowsum(const float* __restrict__ x, float* __restrict__ y) {"), "{cuda}");
    assert!(ocl.contains(
        "__kernel __attribute__((reqd_work_group_size(64, 1, 1))) void rowsum(__global const float* restrict x, __global float* restrict y) {"
    ), "{ocl}");
    assert!(cuda.contains("  const int row = (int)blockIdx.x;\n  const int tx = (int)threadIdx.x;\n  __shared__ __align__(16) float part[64];\n"));
    assert!(ocl.contains("  const int row = (int)get_group_id(0);\n  const int tx = (int)get_local_id(0);\n  __local float part[64] __attribute__((aligned(16)));\n"));
    assert_eq!(cuda.matches("__syncthreads();").count(), 6);
    assert_eq!(ocl.matches("barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);").count(), 6);
    // Past the spellings, the two sources are the same text.
    let normalise = |s: &str| {
        s.replace("__syncthreads();", "BARRIER")
            .replace("barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);", "BARRIER")
            .replace("__shared__ __align__(16) float part[64];", "SHARED part;")
            .replace("__local float part[64] __attribute__((aligned(16)));", "SHARED part;")
            .replace("(int)blockIdx.x", "BX")
            .replace("(int)get_group_id(0)", "BX")
            .replace("(int)threadIdx.x", "TX")
            .replace("(int)get_local_id(0)", "TX")
            .lines()
            .skip(4)
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(normalise(&cuda), normalise(&ocl));
}

#[test]
fn math_spellings_follow_the_dialect() {
    let m = load("expressions");
    let cuda = emit(&m, Dialect::Cuda, &target("h200")).unwrap();
    let ocl = emit(&m, Dialect::OpenCl, &target("pocl")).unwrap();
    for f in [
        "expf(",
        "logf(",
        "fabsf(",
        "sqrtf(",
        "rsqrtf(",
        "tanhf(",
        "erff(",
        "powf(",
        "floorf(",
        "ceilf(",
        "ekb_fmin(",
        "ekb_fmax(",
        "sinf(int_) * cosf(int_)",
        "__float2int_rz(",
    ] {
        assert!(cuda.contains(f), "{f} in\n{cuda}");
    }
    for f in [
        " exp(",
        "log(fabs(",
        "rsqrt(",
        "tanh(",
        "erf(",
        "pow(",
        "floor(",
        "ceil(",
        "ekb_fmin(",
        "ekb_fmax(",
        "convert_int_sat(",
        "sin(int_) * cos(int_)",
        "(int)abs(n[",
    ] {
        assert!(ocl.contains(f), "{f} in\n{ocl}");
    }
    // The preamble holds what is used: CUDA spells INFINITY itself, OpenCL has it built in.
    assert!(cuda.contains("#define INFINITY __int_as_float(0x7f800000)"));
    assert!(!ocl.contains("#define"));
    let relu = emit(&load("relu"), Dialect::Cuda, &target("h200")).unwrap();
    assert!(!relu.contains("#define"), "no inf or nan: no preamble\n{relu}");
}

#[test]
fn reserved_names_are_renamed_and_memory_loop_bounds_are_read_once() {
    let cuda = emit(&load("expressions"), Dialect::Cuda, &target("h200")).unwrap();
    assert!(cuda.contains("const float int_ = x[tx];"), "{cuda}");
    assert!(cuda.contains("  const int k_end_ = n[0];\n  for (int k = 0; k < k_end_; ++k) {"), "{cuda}");
    assert!(cuda.contains("(-2147483647 - 1)"), "{cuda}");
}

#[test]
fn dynamic_shared_memory_is_carved_at_aligned_offsets() {
    let m = load("big_shared");
    let cuda = emit(&m, Dialect::Cuda, &target("h200")).unwrap();
    assert!(cuda.contains("extern __shared__ __align__(16) unsigned char ekb_smem[];"));
    assert!(cuda.contains("float* buf = (float*)(ekb_smem + 0);"));
    assert!(cuda.contains("float* tail = (float*)(ekb_smem + 32768);"));
    let k = &kernels(&m).unwrap()[0];
    assert!(k.launch.shared_optin);
    assert_eq!(k.launch.shared_bytes, 65536);
    // OpenCL has no opt-in: the verifier refuses it for an OpenCL target.
    let d = emit(&m, Dialect::OpenCl, &target("pocl")).unwrap_err();
    assert!(d.message.contains("says `shared_optin`, which only CUDA has"), "{d}");
}

#[test]
fn the_emitter_refuses_what_it_cannot_express() {
    let m = load("relu");
    let d = emit(&m, Dialect::Cuda, &target("host")).unwrap_err();
    assert_eq!(d.message, "target `host` has no GPU: CUDA C needs one");
    let d = emit(&m, Dialect::OpenCl, &target("jetson-orin")).unwrap_err();
    assert_eq!(d.message, "target `jetson-orin` runs CUDA C, not OpenCL C");
    // A CPU kernel.
    let cpu = parse(&SourceFile::new(
        "cpu",
        "module m {\n  input x: f32[4]\n  output y: f32[4]\n\n  kernel k(x: f32[4] in, y: f32[4] out) {\n    for i in 0..4 {\n      y[i] = x[i]\n    }\n  }\n\n  run k(x, y)\n}\n",
    ))
    .unwrap();
    let d = emit(&cpu, Dialect::OpenCl, &target("pocl")).unwrap_err();
    assert!(d.message.contains("kernel k is not a GPU kernel: its body is not exactly one `launch`"), "{d}");
    assert!(kernels(&cpu).is_err());
    // A module that does not verify for the target: too many threads for the Mali.
    let wide = parse(&SourceFile::new(
        "wide",
        std::fs::read_to_string(golden_dir().join("relu.ekl1"))
            .unwrap()
            .replace("0..4) block(tx in 0..256)", "0..1) block(tx in 0..2048)")
            .replace("bx * 256", "bx * 2048"),
    ))
    .unwrap();
    let d = emit(&wide, Dialect::OpenCl, &target("rk3588")).unwrap_err();
    assert!(d.message.contains("2048 threads per block"), "{d}");
    assert!(d.notes.iter().any(|n| n == "module relu does not verify for target `rk3588`"), "{d}");
    // An f16 allocation: OpenCL C has no arrays of `half` without `cl_khr_fp16`.
    let half = parse(&SourceFile::new(
        "half",
        std::fs::read_to_string(golden_dir().join("half.ekl1")).unwrap().replace(
            "        y[i] = x[i]\n",
            "        alloc t: f16[1] local\n        t[0] = x[i]\n        y[i] = t[0]\n",
        ),
    ))
    .unwrap();
    for (dialect, t) in [(Dialect::OpenCl, "pocl"), (Dialect::Cuda, "h200")] {
        let d = emit(&half, dialect, &target(t)).unwrap_err();
        assert_eq!(d.message, "alloc `t`: f16 allocations are not written as C (kernel narrow)");
        assert!(d.hint.as_deref().is_some_and(|h| h.starts_with("allocate f32")), "{d}");
    }
}

#[test]
fn kernels_describe_the_abi() {
    let m = load("matmul_tiled");
    let ks = kernels(&m).unwrap();
    assert_eq!(ks.len(), 1);
    let k = &ks[0];
    assert_eq!(k.name, "mm");
    let names: Vec<&str> = k.params.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["a", "b", "y"]);
    assert_eq!(k.launch.grid, [3, 3, 1]);
    assert_eq!(k.launch.block, [8, 8, 1]);
    assert_eq!(k.launch.shared_bytes, 544);
}

#[test]
fn the_cpu_adapter_refuses_gpu_kernels() {
    let d = ekb_llvm::emit(&load("relu"), &target("host")).unwrap_err();
    assert_eq!(d.message, "`launch` needs a GPU target; target `host` has no GPU");
    assert!(d.notes.iter().any(|n| n.contains("kernel relu launches on a GPU")), "{d}");
}

/// The emitter at the nesting limit of L1: a GPU kernel body of exactly `MAX_NESTING` levels, in
/// one expression or half in loops, emits in both dialects on a 2 MiB thread stack.
#[test]
fn a_body_at_the_nesting_limit_emits_on_a_small_stack() {
    use ekb_ir::l1::nesting::{chain_module, MAX_NESTING};
    for loops in [0, MAX_NESTING / 2] {
        let terms = MAX_NESTING - loops - 3;
        std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(move || {
                let src = SourceFile::new("deep.ekl1", chain_module(loops, terms, true));
                let m = parse(&src).unwrap_or_else(|d| panic!("{}", src.locate(d)));
                let cuda = emit(&m, Dialect::Cuda, &target("h200")).unwrap_or_else(|d| panic!("{d}"));
                // The kernel's own sums, after the preamble (whose NaN-propagating `ekb_fmax` adds).
                let kernel = cuda.split("__global__").nth(1).expect("a kernel");
                assert_eq!(kernel.matches(" + ").count(), terms - 1, "{loops} loops");
                emit(&m, Dialect::OpenCl, &target("pocl")).unwrap_or_else(|d| panic!("{d}"));
            })
            .unwrap()
            .join()
            .expect("the emitter stays within the stack");
    }
}
