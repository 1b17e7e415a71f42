//! The aarch64 code of the anchor workloads, read rather than timed (timings under qemu mean
//! nothing): for the boards' profiles (`rk3588`: Cortex-A76, `jetson-orin`: Cortex-A78AE), the
//! default schedule's kernels for matmul, a 3x3 convolution, softmax, layer_norm and the
//! activations built on `exp`, `tanh` and `erf` multiply-add on NEON vectors (`fmla vN.4s`) and
//! call no C math function (the math functions are inline, `docs/abi.md`).

use ekb_ir::l0;
use ekb_ir::{SourceFile, TargetProfile};
use ekb_llvm::{assembly, emit};
use ekb_lower::{lower, Schedule};

const GRAPHS: &[(&str, &str)] = &[
    ("matmul", "graph matmul(a: f32[512,512], b: f32[512,512]) -> (c: f32[512,512]) {\n  %0 = matmul(a, b)\n  return %0\n}\n"),
    (
        "conv2d",
        "graph conv2d(x: f32[1,64,56,56]) -> (y: f32[1,64,56,56]) {\n  param w: f32[64,64,3,3] = kaiming_uniform\n  \
         %0 = conv2d(x, w, stride=[1,1], pad=[1,1,1,1], dilation=[1,1], groups=1)\n  return %0\n}\n",
    ),
    ("softmax", "graph softmax(x: f32[512,2048]) -> (y: f32[512,2048]) {\n  %0 = softmax(x, axis=-1)\n  return %0\n}\n"),
    (
        "layer_norm",
        "graph layer_norm(x: f32[512,768]) -> (y: f32[512,768]) {\n  param w: f32[768] = ones\n  \
         param b: f32[768] = zeros\n  %0 = layer_norm(x, w, b, eps=1e-5)\n  return %0\n}\n",
    ),
    ("gelu", "graph gelu(x: f32[256,1024]) -> (y: f32[256,1024]) {\n  %0 = gelu(x)\n  return %0\n}\n"),
    (
        "gelu_tanh",
        "graph gelu_tanh(x: f32[256,1024]) -> (y: f32[256,1024]) {\n  %0 = gelu(x, approximate=tanh)\n  return %0\n}\n",
    ),
    ("sigmoid", "graph sigmoid(x: f32[256,1024]) -> (y: f32[256,1024]) {\n  %0 = sigmoid(x)\n  return %0\n}\n"),
];

/// A NEON fused multiply-add on four f32 lanes: `fmla v1.4s, v2.4s, v3.4s` (or by element,
/// `v3.s[1]`).
fn has_vector_fma(asm: &str) -> bool {
    asm.lines().any(|l| {
        let l = l.trim_start();
        l.starts_with("fmla\tv") && l.contains(".4s")
    })
}

#[test]
fn board_kernels_use_neon_fma_and_no_library_math() {
    for profile in ["rk3588", "jetson-orin"] {
        let target = TargetProfile::load(profile).unwrap();
        for (name, text) in GRAPHS {
            let src = SourceFile::new(format!("{name}.ekir"), *text);
            let g = l0::check::load(&src).unwrap_or_else(|ds| panic!("{name}: {ds:?}"));
            let m = lower(&g, Schedule::Default, &target).unwrap_or_else(|d| panic!("{name}: {d}"));
            let asm = assembly(&emit(&m, &target).unwrap(), &target).unwrap_or_else(|d| panic!("{d}"));
            assert!(has_vector_fma(&asm), "{profile}/{name}: no `fmla vN.4s`:\n{asm}");
            for libm in ["expf", "logf", "tanhf", "erff", "powf"] {
                assert!(!asm.contains(libm), "{profile}/{name} calls {libm}");
            }
        }
    }
}

#[test]
fn the_fma_pattern_matches_only_vector_multiply_adds() {
    assert!(has_vector_fma("\tfmla\tv0.4s, v1.4s, v2.4s\n"));
    assert!(has_vector_fma("  fmla\tv4.4s, v5.4s, v6.s[1]\n"));
    assert!(!has_vector_fma("\tfmadd\ts0, s1, s2, s3\n\tfmla\tv0.2d, v1.2d, v2.2d\n"));
}
