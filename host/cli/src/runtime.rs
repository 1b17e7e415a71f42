//! The device runtime for the commands that start one (`ekb eval`, `ekb bench`). When this
//! `ekb` was built in a workspace checkout that is still there, and no `EKB_RT*` variable names
//! a runtime, the workspace's runtime is brought up to date with cargo first (a no-op when it
//! is), so a fresh clone works with the README's first command and a changed runtime source is
//! never run stale. Otherwise it is found where `ekb_deploy::find_runtime` looks.

use ekb_deploy::runtime::{build_command, env_var, musl_triple, EKB_RT};
use ekb_deploy::Runtime;
use ekb_llvm::Arch;
use std::path::Path;
use std::process::{Command, Stdio};

/// The runtime for `arch`, brought up to date in the workspace `ekb` comes from, if any.
pub fn find_or_build(arch: Arch) -> Result<Runtime, String> {
    let named = [EKB_RT, env_var(arch)].iter().any(|v| std::env::var_os(v).is_some_and(|x| !x.is_empty()));
    let workspace =
        Path::new(env!("CARGO_MANIFEST_DIR")).ancestors().nth(2).filter(|r| r.join("Cargo.toml").is_file());
    if let (false, Some(root)) = (named, workspace) {
        let out = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
            .args(["build", "--release", "-p", "ekb-rt", "--target", musl_triple(arch)])
            .current_dir(root)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .status();
        match out {
            Ok(s) if s.success() => {}
            Ok(s) => return Err(format!("error: `{}` failed ({s})", build_command(arch))),
            Err(e) => return Err(format!("error: cannot run cargo to build the device runtime: {e}")),
        }
    }
    ekb_deploy::find_runtime(arch).map_err(|d| d.to_string())
}
