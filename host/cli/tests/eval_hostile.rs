//! Native code is hostile by default (`docs/runtime.md`, "Threat model: native kernels"): L2
//! kernels written to escape, cheat or outlive their run, each evaluated by `ekb eval` in one
//! run next to an honest kernel. Every hostile one must be a failure whose evidence names the
//! cause, never correct and never with a speedup; the honest one, evaluated after them by the
//! same runtime, must be correct; nothing may be written outside the kernel process.

mod l2;

use l2::{c_sample, ekb, evidence, native_sample, ok, results, task};
use serde_json::Value;
use std::path::Path;

/// `y = relu(x)` over the 128x128 elements, the body every honest-looking kernel computes.
const RELU: &str = "  const float *x = args[0];\n  float *y = args[1];\n  \
                    for (int i = 0; i < 128 * 128; i++) y[i] = x[i] > 0.0f ? x[i] : 0.0f;\n";

/// A raw x86_64 system call with up to three arguments.
const SYSCALL: &str = "static long sys3(long n, long a, long b, long c) {\n  long r;\n  \
                       __asm__ volatile(\"syscall\" : \"=a\"(r) : \"a\"(n), \"D\"(a), \"S\"(b), \"d\"(c) \
                       : \"rcx\", \"r11\", \"memory\");\n  return r;\n}\n";

/// A raw x86_64 system call with six arguments.
const SYSCALL6: &str =
    "static long sys6(long n, long a, long b, long c, long d, long e, long f) {\n  long r;\n  \
                        register long r10 __asm__(\"r10\") = d;\n  register long r8 __asm__(\"r8\") = e;\n  \
                        register long r9 __asm__(\"r9\") = f;\n  \
                        __asm__ volatile(\"syscall\" : \"=a\"(r) : \"a\"(n), \"D\"(a), \"S\"(b), \"d\"(c), \
                        \"r\"(r10), \"r\"(r8), \"r\"(r9) : \"rcx\", \"r11\", \"memory\");\n  return r;\n}\n";

/// The kernel `k0_relu` in C: `prelude` at file scope, then `body` inside the entry.
fn kernel(prelude: &str, body: &str) -> String {
    format!("{prelude}void ekb_k_k0_relu(void *const *args) {{\n{body}}}\n")
}

/// State kept between executions in memory the kernel maps itself, at an address it chooses
/// (`mmap` with MAP_FIXED_NOREPLACE: EEXIST once mapped): the relu computed for the first three
/// executions (the seeds checked one by one), then the last one's outputs replayed without
/// reading the inputs.
fn replaying_memo() -> String {
    kernel(
        SYSCALL6,
        &format!(
            "  float *m = (float *)0x5e0000000000L;\n  \
             sys6(9, (long)m, 4 * (128 * 128 + 16), 3, 0x100022, -1, 0);\n  \
             int *count = (int *)m;\n  float *memo = m + 16;\n  \
             if (++*count > 3) {{\n    float *y = args[1];\n    \
             for (int i = 0; i < 128 * 128; i++) y[i] = memo[i];\n    return;\n  }}\n\
             {RELU}  for (int i = 0; i < 128 * 128; i++) memo[i] = y[i];\n"
        ),
    )
}

/// An input written while samples run: from the fourth execution on (after the three seeds
/// checked one by one), `x` made writable and changed after the relu.
fn input_writer() -> String {
    kernel(
        SYSCALL6,
        &format!(
            "  int *count = (int *)0x5f0000000000L;\n  \
             sys6(9, (long)count, 4096, 3, 0x100022, -1, 0);\n\
             {RELU}  if (++*count > 3) {{\n    sys6(10, (long)x, 4096, 3, 0, 0, 0);\n    \
             ((float *)x)[0] += 1.0f;\n  }}\n"
        ),
    )
}

/// Sample `index` of the CPU instance: the honest relu, as a native answer.
fn honest_sample(root: &Path, index: u32) {
    native_sample(
        root,
        "cpu",
        index,
        "candidate.c",
        &format!("void ekb_k_t_relu(void *const *args) {{\n{RELU}}}\n"),
    );
}

/// `ekb eval` of the first `samples` candidates of `t_relu` (with `extra` arguments): its output
/// and the results, in sample order.
fn eval(root: &Path, samples: u32, extra: &[&str]) -> (std::process::Output, Vec<Value>) {
    let o = ok(ekb(root)
        .args(["eval", "t_relu", "--samples", &samples.to_string(), "--budget", "0.2", "--max-ci", "1e9"])
        .args(["--plain", "--dir", "tasks", "--candidates", "cands", "--out", "run"])
        .args(extra)
        .output()
        .unwrap());
    (o, results(&root.join("run")))
}

fn assert_failed(r: &Value, class: &str, cause: &str) {
    assert_eq!(r["failure"]["class"], class, "{r}");
    assert!(!r["correct"].as_bool().unwrap(), "{r}");
    assert!(r["timing"]["speedup"].is_null(), "a failed candidate has no speedup: {r}");
    assert!(evidence(r).contains(cause), "the evidence names `{cause}`: {r}");
}

#[test]
fn hostile_cpu_kernels_fail_with_evidence_and_the_runtime_survives_them() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    task(root);
    let escaped = root.join("escaped.txt");
    let path = escaped.to_str().unwrap();
    // (a) system calls: create a file outside the sandbox and write to it.
    c_sample(
        root,
        0,
        &kernel(
            SYSCALL,
            &format!(
                "  long fd = sys3(257, -100, (long)\"{path}\", 0101);\n  sys3(1, fd, (long)\"pwned\", 5);\n{RELU}"
            ),
        ),
    );
    // (f) work left running after the kernel returns: a thread (or a process) of its own.
    c_sample(root, 1, &kernel(SYSCALL, &format!("  sys3(56, 17, 0, 0);\n{RELU}")));
    // (b) state kept between executions: outputs memoised in a static buffer.
    c_sample(
        root,
        2,
        &kernel(
            "static float memo[128 * 128];\nstatic int filled;\n",
            "  float *y = args[1];\n  const float *x = args[0];\n  \
             if (!filled) { for (int i = 0; i < 128 * 128; i++) memo[i] = x[i] > 0.0f ? x[i] : 0.0f; filled = 1; }\n  \
             for (int i = 0; i < 128 * 128; i++) y[i] = memo[i];\n",
        ),
    );
    // (c) outputs hard-coded for the inputs of one seed, here the relu of a made-up input.
    c_sample(
        root,
        3,
        &kernel(
            "",
            "  float *y = args[1];\n  for (int i = 0; i < 128 * 128; i++) y[i] = (float)(i % 7) * 0.25f;\n",
        ),
    );
    // (g) reduced precision: the outputs rounded to bf16 (8 bits of mantissa) where f32 is required.
    c_sample(
        root,
        4,
        &kernel(
            "typedef unsigned int u32;\n",
            &format!(
                "{RELU}  for (int i = 0; i < 128 * 128; i++) {{\n    u32 b = __builtin_bit_cast(u32, y[i]);\n    \
                 y[i] = __builtin_bit_cast(float, (b + 0x8000u) & 0xffff0000u);\n  }}\n"
            ),
        ),
    );
    // (b) state kept between executions: outputs replayed from memory the kernel mapped.
    c_sample(root, 5, &replaying_memo());
    // (b) an input written while samples run. The two programs of the pair read one copy of
    // `x`, so the write shows in the baseline's too: the candidate is the one that fails, and
    // the baseline stands.
    c_sample(root, 6, &input_writer());
    // The honest kernel, evaluated last: the runtime survived everything before it.
    honest_sample(root, 7);
    let (o, r) = eval(root, 8, &[]);
    assert_eq!(r.len(), 8, "{}", String::from_utf8_lossy(&o.stdout));
    assert_failed(&r[0], "runtime", "`openat` (257)");
    assert!(!escaped.exists(), "the kernel process wrote {path}");
    assert_failed(&r[1], "runtime", "`clone` (56)");
    assert_failed(&r[2], "compile", "writable");
    assert_failed(&r[3], "correctness", "");
    assert_failed(&r[4], "correctness", "");
    assert_failed(&r[5], "correctness", "inputs drawn again during timing");
    assert_failed(&r[6], "memory", "read-only input `x` changed while samples ran");
    assert!(r[6]["baseline_failure"].is_null(), "{}", r[6]);
    assert!(r[7]["correct"].as_bool().unwrap(), "{}", r[7]);
    assert!(r[7]["timing"]["speedup"].as_f64().is_some(), "{}", r[7]);
}

/// A native OpenCL answer for `t_relu`: one work-item per element, `body` after `i` and `v`
/// (the input element) are set, `prelude` at file scope.
/// Against an engine the candidate is held in one kernel process for all its turns
/// (`docs/runtime.md`, held runs): the hold is still one run for the switch of inputs, and its
/// guards and inputs are checked after every turn, so the state-keeping kernels fail there too.
#[test]
fn hostile_cpu_kernels_fail_in_held_turns_against_an_engine() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    task(root);
    c_sample(root, 0, &replaying_memo());
    c_sample(root, 1, &input_writer());
    honest_sample(root, 2);
    let (o, r) = eval(root, 3, &["--baseline", "engine:onnxruntime"]);
    assert_eq!(r.len(), 3, "{}", String::from_utf8_lossy(&o.stdout));
    eprintln!("R0 {}", r[0]);
    assert_failed(&r[0], "correctness", "inputs drawn again during timing");
    assert_failed(&r[1], "memory", "read-only input `x` changed");
    assert!(r[2]["correct"].as_bool().unwrap(), "{}", r[2]);
    assert!(r[2]["timing"]["speedup"].as_f64().is_some(), "{}", r[2]);
    assert_eq!(r[2]["timing"]["engine"]["engine"], "onnxruntime", "{}", r[2]);
}

fn opencl(prelude: &str, body: &str) -> String {
    format!(
        "// launch: grid=[128] block=[128]\n{prelude}__kernel void t_relu(__global const float *x, __global float *y) {{\n  \
         int i = get_group_id(0) * 128 + get_local_id(0);\n  float v = x[i];\n{body}}}\n"
    )
}

#[test]
fn hostile_opencl_kernels_fail_with_evidence_and_the_runtime_survives_them() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    task(root);
    let answers = [
        // State beyond its buffers: a write past the end of `y` (into the guard after it).
        opencl("", "  y[i] = fmax(v, 0.0f);\n  if (i == 0) y[128 * 128 + 7] = 1.0f;\n"),
        // (b) state kept between launches in program-scope variables, replayed from the fourth
        // launch on: OpenCL C 1.2, which the runtime builds for, allows them in the constant
        // address space only, so the build fails.
        opencl(
            "__global int launches;\n__global float memo[128 * 128];\n",
            "  if (launches > 3) { y[i] = memo[i]; return; }\n  memo[i] = fmax(v, 0.0f);\n  y[i] = memo[i];\n  \
             if (i == 0) launches++;\n",
        ),
        // (c) outputs hard-coded, whatever the inputs.
        opencl("", "  y[i] = (float)(i % 7) * 0.25f;\n"),
        // (g) reduced precision: the outputs rounded to bf16 (8 bits of mantissa).
        opencl("", "  y[i] = as_float((as_uint(fmax(v, 0.0f)) + 0x8000u) & 0xffff0000u);\n"),
    ];
    for (s, text) in answers.iter().enumerate() {
        native_sample(root, "opencl", s as u32, "candidate.cl", text);
    }
    // The honest answer, evaluated last: the runtime survived everything before it.
    native_sample(root, "opencl", 4, "candidate.cl", &opencl("", "  y[i] = fmax(v, 0.0f);\n"));
    let gpu_rt = ekb_e2e::opencl_runtime(Path::new(env!("CARGO_TARGET_TMPDIR")));
    let o = ok(ekb(root)
        .env("EKB_RT_GPU", &gpu_rt)
        .args(["eval", "t_relu", "--backend", "opencl", "--samples", "5", "--budget", "0.2"])
        .args(["--max-ci", "1e9", "--plain", "--dir", "tasks", "--candidates", "cands", "--out", "run"])
        .output()
        .unwrap());
    let r = results(&root.join("run"));
    assert_eq!(r.len(), 5, "{}", String::from_utf8_lossy(&o.stdout));
    assert_failed(&r[0], "memory", "guard");
    assert_failed(&r[1], "compile", "program scope variable");
    assert_failed(&r[2], "correctness", "");
    assert_failed(&r[3], "correctness", "");
    assert!(r[4]["correct"].as_bool().unwrap(), "{}", r[4]);
    assert!(r[4]["timing"]["speedup"].as_f64().is_some(), "{}", r[4]);
}
