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

/// Samples shortened by moving the start time of each execution: the start is read before the
/// plan runs and kept, as the time or its negation, in a register the caller saves across the
/// call (`sys::monotonic_ns` in the runtime's kernel process), so the entry (assembly) computes
/// the relu eight times over, then reads the clock and sets every callee-saved register that
/// holds a time of the last second (or its negation) to now before it returns, and every such
/// word of the 2 KiB of stack above it (where a caller may have spilled it): each execution then
/// claims about the time of a clock read.
fn clock_mover() -> String {
    let fix = |r: &str| {
        format!(
            "  \"mov %rax, %rcx\\n  sub %{r}, %rcx\\n  cmp $1000000000, %rcx\\n  jae 1f\\n  mov %rax, %{r}\\n1:\\n\"\n  \
             \"mov %rax, %rcx\\n  add %{r}, %rcx\\n  cmp $1000000000, %rcx\\n  jae 2f\\n  mov %rax, %{r}\\n  neg %{r}\\n2:\\n\"\n"
        )
    };
    let fixes: String = ["rbx", "rbp", "r12", "r13", "r14", "r15"].iter().map(|r| fix(r)).collect();
    // The same for the 256 words from the stack pointer up.
    let stack = "  \"  mov %rsp, %rsi\\n  mov $256, %edx\\n3:\\n  mov (%rsi), %rdi\\n\"\n  \
                 \"  mov %rax, %rcx\\n  sub %rdi, %rcx\\n  cmp $1000000000, %rcx\\n  jae 4f\\n  mov %rax, (%rsi)\\n  jmp 5f\\n\"\n  \
                 \"4:\\n  mov %rax, %rcx\\n  add %rdi, %rcx\\n  cmp $1000000000, %rcx\\n  jae 5f\\n  mov %rax, %rcx\\n  neg %rcx\\n  mov %rcx, (%rsi)\\n\"\n  \
                 \"5:\\n  add $8, %rsi\\n  dec %edx\\n  jnz 3b\\n\"\n";
    format!(
        "{SYSCALL}__attribute__((used)) static void relu8(void *const *args) {{\n  \
         for (int r = 0; r < 8; r++) {{\n{RELU}  }}\n}}\n\
         __attribute__((used)) static long now_ns(void) {{\n  long t[2];\n  sys3(228, 1, (long)t, 0);\n  \
         return t[0] * 1000000000L + t[1];\n}}\n\
         __asm__(\".text\\n.globl ekb_k_k0_relu\\n.type ekb_k_k0_relu,@function\\nekb_k_k0_relu:\\n\"\n  \
         \"  sub $8, %rsp\\n  call relu8\\n  call now_ns\\n\"\n{fixes}{stack}  \"  add $8, %rsp\\n  ret\\n\");\n"
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
    // (d) samples shortened: the start time of each execution moved forward by the kernel.
    c_sample(root, 7, &clock_mover());
    // The honest kernel, evaluated last: the runtime survived everything before it.
    honest_sample(root, 8);
    let (o, r) = eval(root, 9, &[]);
    assert_eq!(r.len(), 9, "{}", String::from_utf8_lossy(&o.stdout));
    assert_failed(&r[0], "runtime", "`openat` (257)");
    assert!(!escaped.exists(), "the kernel process wrote {path}");
    assert_failed(&r[1], "runtime", "`clone` (56)");
    assert_failed(&r[2], "compile", "writable");
    assert_failed(&r[3], "correctness", "");
    assert_failed(&r[4], "correctness", "");
    assert_failed(&r[5], "correctness", "inputs drawn again during timing");
    assert_failed(&r[6], "memory", "read-only input `x` changed while samples ran");
    assert!(r[6]["baseline_failure"].is_null(), "{}", r[6]);
    // Correct with a speedup here means the kernel no longer finds the start time where the
    // runtime keeps it: `clock_mover` must follow the runtime's code.
    assert_failed(&r[7], "runtime", "around the same batch without its executions");
    assert!(r[8]["correct"].as_bool().unwrap(), "{}", r[8]);
    assert!(r[8]["timing"]["speedup"].as_f64().is_some(), "{}", r[8]);
}

/// Against an engine the candidate is held in one kernel process for all its turns
/// (`docs/runtime.md`, held runs): the hold is still one run for the switch of inputs, its
/// guards and inputs are checked after every turn, and its turns' batches are timed as a run's,
/// so the state-keeping and clock-moving kernels fail there too.
#[test]
fn hostile_cpu_kernels_fail_in_held_turns_against_an_engine() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    task(root);
    c_sample(root, 0, &replaying_memo());
    c_sample(root, 1, &input_writer());
    c_sample(root, 2, &clock_mover());
    honest_sample(root, 3);
    let (o, r) = eval(root, 4, &["--baseline", "engine:onnxruntime"]);
    assert_eq!(r.len(), 4, "{}", String::from_utf8_lossy(&o.stdout));
    assert_failed(&r[0], "correctness", "inputs drawn again during timing");
    assert_failed(&r[1], "memory", "read-only input `x` changed");
    assert_failed(&r[2], "runtime", "around the same batch without its executions");
    assert!(r[3]["correct"].as_bool().unwrap(), "{}", r[3]);
    assert!(r[3]["timing"]["speedup"].as_f64().is_some(), "{}", r[3]);
    assert_eq!(r[3]["timing"]["engine"]["engine"], "onnxruntime", "{}", r[3]);
}

/// A native OpenCL answer for `t_relu`: one work-item per element, `body` after `i` and `v`
/// (the input element) are set, `prelude` at file scope.
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
