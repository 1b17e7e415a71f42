//! L2 and native candidates as users make them (`docs/l2.md`): `ekb lower --to l2` writes the
//! folder, a kernel's source is edited, and `ekb eval` compiles, checks and times it; a source
//! that does not compile is a `compile` failure naming the candidate's file and line, a wrong
//! one a `correctness` failure; a native answer (`ekb generate --mode native`) is evaluated as a
//! plan of one kernel. On the CPU (clang-19) and on OpenCL (PoCL).

mod l2;

use l2::{c_sample, ekb, evidence, lowered_sample, native_sample, ok, results, task};
use std::path::Path;

#[test]
fn cpu_l2_folders_and_a_native_c_answer_are_compiled_checked_and_timed() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    task(root);
    // 0: the max of the loop as `maxnum` (the same for every input but NaN, which seeds never are).
    lowered_sample(root, "cpu", 0, &[], "ll", |t| t.replace("@llvm.maximum.f32", "@llvm.maxnum.f32"));
    // 1: an instruction using a value that does not exist, on line 22.
    lowered_sample(root, "cpu", 1, &[], "ll", |t| {
        let mut lines: Vec<&str> = t.lines().collect();
        lines.insert(21, "  %bogus = add i32 %nothing, 1");
        lines.join("\n") + "\n"
    });
    // 2: max(x, 1) instead of max(x, 0).
    lowered_sample(root, "cpu", 2, &[], "ll", |t| t.replace("float 0x0000000000000000)", "float 1.0)"));
    // 3: a native C answer.
    native_sample(
        root,
        "cpu",
        3,
        "candidate.c",
        "#include <stdint.h>\nstatic float relu(float v) { return v > 0.0f ? v : 0.0f; }\n\
         void ekb_k_t_relu(void *const *args) {\n  const float *x = args[0];\n  float *y = args[1];\n  \
         for (int32_t i = 0; i < 128 * 128; i++) y[i] = relu(x[i]);\n}\n",
    );
    // 4: the kernel in C instead of LLVM IR, in a folder of its own.
    c_sample(
        root,
        4,
        "void ekb_k_k0_relu(void *const *args) {\n  const float *x = args[0];\n  float *y = args[1];\n  \
         for (int i = 0; i < 128 * 128; i++) y[i] = x[i] > 0.0f ? x[i] : 0.0f;\n}\n",
    );

    let o = ok(ekb(root)
        .args(["eval", "t_relu", "--samples", "5", "--budget", "0.3", "--max-ci", "1e9", "--plain"])
        .args(["--dir", "tasks", "--candidates", "cands", "--out", "run"])
        .output()
        .unwrap());
    let r = results(&root.join("run"));
    assert_eq!(r.len(), 5);
    let kinds: Vec<&str> = r.iter().map(|r| r["candidate"]["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["l2", "l2", "l2", "native", "l2"]);
    for s in [0, 3, 4] {
        assert!(r[s]["correct"].as_bool().unwrap(), "{}", r[s]);
        assert!(r[s]["timing"]["speedup"].as_f64().is_some(), "{}", r[s]);
    }
    assert_eq!(r[1]["failure"]["class"], "compile", "{}", r[1]);
    let e = evidence(&r[1]);
    assert!(e.contains("t_relu/cpu/sample-1/candidate.l2/kernels/k0_relu.ll:22:"), "{e}");
    assert!(e.contains("undefined value '%nothing'"), "{e}");
    assert_eq!(r[2]["failure"]["class"], "correctness", "{}", r[2]);
    assert!(r[2]["compiled"].as_bool().unwrap());
    // The candidate text is the folder's files.
    let text = r[0]["candidate"]["text"].as_str().unwrap();
    assert!(text.contains("# file: kernels/k0_relu.ll") && text.contains("# file: module.ekir"), "{text}");
    // The report counts the candidates by kind.
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("l2 4") && stdout.contains("native 1"), "{stdout}");
}

#[test]
fn opencl_l2_folders_and_a_native_answer_run_on_pocl() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    task(root);
    let gpu = ["--target", "pocl", "--backend", "gpu"];
    // 0: `fmax` of OpenCL C instead of the preamble's NaN-propagating max.
    lowered_sample(root, "opencl", 0, &gpu, "cl", |t| t.replace("ekb_fmax(v, 0.0f)", "fmax(v, 0.0f)"));
    // 1: a statement that does not compile, on line 11.
    lowered_sample(root, "opencl", 1, &gpu, "cl", |t| t.replace("  y[i0", "  undeclared = 1;\n  y[i0"));
    // 2: a native answer, its launch geometry on its first line.
    native_sample(
        root,
        "opencl",
        2,
        "candidate.cl",
        "// launch: grid=[128] block=[128]\n\
         __kernel void t_relu(__global const float *x, __global float *y) {\n  \
         int i = get_group_id(0) * 128 + get_local_id(0);\n  y[i] = fmax(x[i], 0.0f);\n}\n",
    );
    let gpu_rt = ekb_e2e::opencl_runtime(Path::new(env!("CARGO_TARGET_TMPDIR")));
    let o = ok(ekb(root)
        .env("EKB_RT_GPU", &gpu_rt)
        .args(["eval", "t_relu", "--backend", "opencl", "--samples", "3", "--budget", "0.2"])
        .args(["--max-ci", "1e9", "--plain", "--dir", "tasks", "--candidates", "cands", "--out", "run"])
        .output()
        .unwrap());
    let r = results(&root.join("run"));
    assert_eq!(r.len(), 3, "{}", String::from_utf8_lossy(&o.stdout));
    assert!(r[0]["correct"].as_bool().unwrap() && r[0]["timing"]["speedup"].as_f64().is_some(), "{}", r[0]);
    assert_eq!(r[0]["candidate"]["kind"], "l2");
    assert_eq!(r[1]["failure"]["class"], "compile", "{}", r[1]);
    let e = evidence(&r[1]);
    assert!(e.contains("t_relu/opencl/sample-1/candidate.l2/kernels/k0_relu.cl:11:"), "{e}");
    assert_eq!(r[2]["candidate"]["kind"], "native");
    assert!(r[2]["correct"].as_bool().unwrap(), "{}", r[2]);
}
