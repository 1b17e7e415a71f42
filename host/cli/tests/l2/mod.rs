//! Helpers of the tests that evaluate L2 and native candidates (`docs/l2.md`) through `ekb
//! eval`: the task `t_relu`, candidate folders as users make them, the stored results.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

pub fn ekb(dir: &Path) -> Command {
    let rt = ekb_e2e::static_runtime("x86_64-unknown-linux-musl", Path::new(env!("CARGO_TARGET_TMPDIR")));
    let mut c = Command::new(env!("CARGO_BIN_EXE_ekb"));
    c.current_dir(dir).env("EKB_RT_X86_64", rt).env_remove("EKB_RT");
    c
}

pub fn ok(o: Output) -> Output {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    o
}

/// The task `t_relu` (x, y: f32[128,128]) in a task folder under `root`; its file.
pub fn task(root: &Path) -> PathBuf {
    let dir = root.join("tasks/level1");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("t_relu.ekir");
    std::fs::write(
        &file,
        "# task: level=1 family=activation domains=[mobile,aiot]\n\
         # provenance: model=test layer=relu module=torch.nn.ReLU source=tests\n\
         graph t_relu(x: f32[128,128]) -> (y: f32[128,128]) {\n  %0: f32[128,128] = relu(x)\n  return %0\n}\n",
    )
    .unwrap();
    file
}

/// Sample `s` of `t_relu` on `backend`, written by `ekb lower --to l2` with `lower_args`, its
/// kernel `k0_relu`'s source (extension `ext`) changed by `edit`.
pub fn lowered_sample(
    root: &Path,
    backend: &str,
    s: u32,
    lower_args: &[&str],
    ext: &str,
    edit: impl Fn(&str) -> String,
) {
    let dir = root.join(format!("cands/t_relu/{backend}/sample-{s}/candidate.l2"));
    ok(ekb(root)
        .args(["lower", "tasks/level1/t_relu.ekir", "--to", "l2", "-o"])
        .arg(&dir)
        .args(lower_args)
        .output()
        .unwrap());
    let kernel = dir.join(format!("kernels/k0_relu.{ext}"));
    let text = std::fs::read_to_string(&kernel).unwrap();
    let edited = edit(&text);
    assert_ne!(edited, text, "the edit changes the kernel");
    std::fs::write(&kernel, edited).unwrap();
}

/// A native answer as `ekb generate --mode native` stores it.
pub fn native_sample(root: &Path, backend: &str, s: u32, file: &str, text: &str) {
    let dir = root.join(format!("cands/t_relu/{backend}/sample-{s}"));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(file), text).unwrap();
}

/// Every stored result, by sample.
pub fn results(run: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(run.join("results.jsonl")).unwrap();
    let mut out: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    out.sort_by_key(|r| r["sample"].as_u64());
    out
}

pub fn evidence(r: &Value) -> &str {
    r["failure"]["evidence"].as_str().unwrap_or("")
}

/// Sample `s` of `t_relu` on the CPU: the folder `ekb lower --to l2` writes, its kernel
/// `k0_relu` given as the C source `c` instead of LLVM IR.
pub fn c_sample(root: &Path, s: u32, c: &str) {
    lowered_sample(root, "cpu", s, &[], "ll", |t| t.replace("@llvm.maximum.f32", "@llvm.maxnum.f32"));
    let kernels = root.join(format!("cands/t_relu/cpu/sample-{s}/candidate.l2/kernels"));
    std::fs::remove_file(kernels.join("k0_relu.ll")).unwrap();
    std::fs::write(kernels.join("k0_relu.c"), c).unwrap();
}
