//! Helpers shared by the deployment tests: the static runtime binaries, built by cargo.

use ekb_llvm::Arch;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Builds the static release runtime for `arch` (a musl target) with cargo, in a target
/// directory of its own under cargo's test scratch space (the test's own build holds the
/// workspace's), and returns its path. Concurrent calls wait on cargo's lock.
pub fn static_runtime(arch: Arch) -> PathBuf {
    let triple = ekb_deploy::runtime::musl_triple(arch);
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).ancestors().nth(2).unwrap();
    let target_dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("ekb-rt-static");
    let out = Command::new(env!("CARGO"))
        .args(["build", "--release", "--offline", "-p", "ekb-rt", "--target", triple])
        .arg("--target-dir")
        .arg(&target_dir)
        .current_dir(workspace)
        .output()
        .unwrap();
    assert!(out.status.success(), "cargo build --target {triple}: {}", String::from_utf8_lossy(&out.stderr));
    target_dir.join(triple).join("release/ekb-rt")
}
