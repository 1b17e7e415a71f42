//! Helpers shared by the deployment tests: the static runtime binaries, built by cargo.

use ekb_llvm::Arch;
use std::path::{Path, PathBuf};

/// The static release runtime for `arch` (a musl target), built by cargo for the tests
/// (`ekb_e2e::static_runtime`).
pub fn static_runtime(arch: Arch) -> PathBuf {
    ekb_e2e::static_runtime(ekb_deploy::runtime::musl_triple(arch), Path::new(env!("CARGO_TARGET_TMPDIR")))
}
