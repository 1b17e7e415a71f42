//! `ekb run` for another architecture on a fresh checkout: with no runtime built for it and
//! none named by the environment, `ekb` builds the runtime with cargo (as `ekb eval` and
//! `ekb bench` do) and runs the payload on it, here the aarch64 runtime under qemu-user.

use std::path::Path;
use std::process::Command;

#[test]
fn run_builds_the_missing_aarch64_runtime_and_runs_on_it() {
    // A cargo target directory of its own, emptied first: no runtime is prebuilt there, and
    // `ekb` searches it first (`$CARGO_TARGET_DIR`).
    let target = Path::new(env!("CARGO_TARGET_TMPDIR")).join("fresh-runtime-build");
    let _ = std::fs::remove_dir_all(&target);
    let work = tempfile::tempdir().unwrap();
    let softmax = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/ops/softmax.ekir");
    let mut c = Command::new(env!("CARGO_BIN_EXE_ekb"));
    c.args(["run", softmax.to_str().unwrap(), "--target", "aarch64-qemu", "--json"])
        .current_dir(work.path())
        .env("CARGO_TARGET_DIR", &target);
    for v in
        ["EKB_RT", "EKB_RT_AARCH64", "EKB_RT_X86_64", "EKB_RT_GPU", "EKB_RT_GPU_AARCH64", "EKB_RT_GPU_X86_64"]
    {
        c.env_remove(v);
    }
    let out = c.output().expect("ekb runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}\n{}", String::from_utf8_lossy(&out.stdout));
    let built = target.join("aarch64-unknown-linux-musl/release/ekb-rt");
    assert!(built.is_file(), "no runtime at {}: {stderr}", built.display());
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["device"]["arch"], "aarch64", "{json}");
    assert_eq!(json["all_correct"], true, "{json}");
}
