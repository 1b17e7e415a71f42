//! What clang makes of the emitted hints: `vectorize` reductions vectorise (the compile log
//! says so), also when they call the inline math functions, a hint LLVM 19 cannot honour is
//! reported in the log, and multiply-adds are fused only inside `vectorize` loops (checked in
//! the generated assembly).

mod common;
use common::*;
use ekb_ir::TargetProfile;
use ekb_llvm::{assembly, compile, emit};

fn reduction(body: &str) -> String {
    format!(
        "module red {{
  input x: f32[1000]
  input y: f32[1000]
  output r: f32[2]
  output c: i32[1]
  kernel k(x: f32[1000] in, y: f32[1000] in, r: f32[2] out, c: i32[1] out) {{
    alloc acc: f32[2] local
    alloc n: i32[1] local
    acc[0] = 0.0
    acc[1] = -inf
    n[0] = 0
    vectorize i in 0..1000 {{
      {body}
    }}
    r[0] = acc[0]
    r[1] = acc[1]
    c[0] = n[0]
  }}
  run k(x, y, r, c)
}}
"
    )
}

fn compile_log(text: &str, target: &TargetProfile) -> String {
    clang();
    let dir = tempfile::tempdir().unwrap();
    let ir = emit(&module(text), target).unwrap();
    compile(&ir, target, &dir.path().join("k.o")).unwrap_or_else(|d| panic!("{d}")).stderr
}

#[test]
fn sum_dot_and_count_reductions_vectorise() {
    let text = reduction("acc[0] = acc[0] + x[i] * y[i]\n      n[0] = n[0] + i32(x[i] > 0.0)");
    for profile in ["host", "rk3588"] {
        let target = TargetProfile::load(profile).unwrap();
        let log = compile_log(&text, &target);
        assert!(log.contains("vectorized loop (vectorization width: "), "{profile}:\n{log}");
        assert!(!log.contains("loop not vectorized"), "{profile}:\n{log}");
    }
}

/// L1's f32 `max`/`min` are `llvm.maximum`/`llvm.minimum`, which propagate NaN, so LLVM 19
/// vectorises their reductions without `nnan` (a reduction through `llvm.maxnum`, L1's `max`
/// before, it left scalar, with `loop not vectorized` in the compile log).
#[test]
fn float_max_and_min_reductions_vectorise() {
    for body in ["acc[1] = max(acc[1], x[i])", "acc[1] = min(acc[1], x[i])"] {
        for profile in ["host", "rk3588"] {
            let target = TargetProfile::load(profile).unwrap();
            let log = compile_log(&reduction(body), &target);
            assert!(log.contains("vectorized loop (vectorization width: "), "{profile} `{body}`:\n{log}");
            assert!(!log.contains("loop not vectorized"), "{profile} `{body}`:\n{log}");
        }
    }
}

/// The inline math functions vectorise (a library call would not), on both architectures,
/// and leave no call to the C library's version behind.
#[test]
fn loops_calling_the_inline_math_functions_vectorise() {
    for body in [
        "acc[0] = acc[0] + exp(x[i])",
        "acc[0] = acc[0] + exp_ftz(x[i])",
        "acc[0] = acc[0] + log(x[i])",
        "acc[0] = acc[0] + tanh(x[i])",
        "acc[0] = acc[0] + erf(x[i])",
        "acc[0] = acc[0] + pow(x[i], y[i])",
        "acc[0] = acc[0] + sin(x[i])",
        "acc[0] = acc[0] + cos(x[i])",
    ] {
        for profile in ["host", "rk3588"] {
            let target = TargetProfile::load(profile).unwrap();
            let text = reduction(body);
            let log = compile_log(&text, &target);
            assert!(log.contains("vectorized loop (vectorization width: "), "{profile} `{body}`:\n{log}");
            assert!(!log.contains("loop not vectorized"), "{profile} `{body}`:\n{log}");
            let asm = asm_of(&text, &target);
            for libm in ["expf", "logf", "tanhf", "erff", "powf", "sinf", "cosf"] {
                assert!(!asm.contains(libm), "{profile} `{body}` calls {libm}");
            }
        }
    }
}

/// Assembly of `text` for `target`, with the adapter's own code generation options.
fn asm_of(text: &str, target: &TargetProfile) -> String {
    assembly(&emit(&module(text), target).unwrap(), target).unwrap_or_else(|d| panic!("{d}"))
}

const MULADD: &str = "module muladd {
  input x: f32[256]
  input y: f32[256]
  output z: f32[256]
  output d: f32[1]
  kernel plain(x: f32[256] in, y: f32[256] in, z: f32[256] out) {
    for i in 0..256 {
      z[i] = x[i] * y[i] + 1.0
    }
  }
  kernel dot(x: f32[256] in, y: f32[256] in, d: f32[1] out) {
    alloc acc: f32[1] local
    acc[0] = 0.0
    vectorize i in 0..256 {
      acc[0] = acc[0] + x[i] * y[i]
    }
    d[0] = acc[0]
  }
  run plain(x, y, z)
  run dot(x, y, d)
}
";

/// The body of the assembly function `name` (up to the next `.size` directive).
fn asm_function<'a>(asm: &'a str, name: &str) -> &'a str {
    let start = asm.find(&format!("\n{name}:")).unwrap_or_else(|| panic!("no {name} in:\n{asm}"));
    let end = start + asm[start..].find(".size").unwrap();
    &asm[start..end]
}

#[test]
fn multiply_adds_fuse_only_inside_vectorize() {
    clang();
    // (profile, the fused multiply-add mnemonic; both CPUs have FMA)
    for (profile, fma) in [("host", "vfmadd"), ("rk3588", "fmla")] {
        let target = TargetProfile::load(profile).unwrap();
        if profile == "host" && !std::is_x86_feature_detected!("fma") {
            continue;
        }
        let asm = asm_of(MULADD, &target);
        let plain = asm_function(&asm, "ekb_k_plain");
        let dot = asm_function(&asm, "ekb_k_dot");
        assert!(!plain.contains(fma), "{profile}: `for` loop fused a multiply-add:\n{plain}");
        assert!(dot.contains(fma), "{profile}: `vectorize` reduction did not fuse:\n{dot}");
    }
}

/// A quotient of loop invariants multiplying each element stays outside the `vectorize` loop:
/// with `reassoc` on the product LLVM rewrote `x * (a / b)` as `(x * a) / b`, one division per
/// vector (a batch norm's `gamma / sqrt(var + eps)` in a convolution's epilogue).
#[test]
fn a_quotient_of_invariants_is_not_divided_per_element() {
    clang();
    let text = "module scale {
  input x: f32[1024]
  input g: f32[1]
  input v: f32[1]
  output y: f32[1024]
  kernel k(x: f32[1024] in, g: f32[1] in, v: f32[1] in, y: f32[1024] out) {
    vectorize i in 0..1024 {
      y[i] = x[i] * (g[0] / sqrt(v[0] + 0.001)) + 1.0
    }
  }
  run k(x, g, v, y)
}
";
    for (profile, vector_div) in [("host", "divps"), ("rk3588", "fdiv\tv")] {
        let target = TargetProfile::load(profile).unwrap();
        let asm = asm_of(text, &target);
        let k = asm_function(&asm, "ekb_k_k");
        assert!(!k.contains(vector_div), "{profile}: a division per vector:\n{k}");
    }
}
