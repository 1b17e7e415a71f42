//! The device runtime for every command that starts or ships one (`ekb eval`, `ekb bench`,
//! `ekb run`, `ekb pack`, `ekb deploy`): the static runtime, or the GPU runtime for GPU
//! instances. When this `ekb` was built in a workspace
//! checkout that is still there, and no `EKB_RT*` variable names that runtime, the workspace's
//! runtime is brought up to date with cargo first (a no-op when it is), so a fresh clone works
//! with the README's first command and a changed runtime source is never run stale. Otherwise
//! it is found where `ekb_deploy::find_runtime` (`find_gpu_runtime`) looks.

use ekb_deploy::runtime::{
    build_command, env_var, gnu_triple, gpu_build_command, gpu_env_var, musl_triple, EKB_RT, EKB_RT_GPU,
};
use ekb_deploy::Runtime;
use ekb_llvm::Arch;
use std::path::Path;
use std::process::{Command, Stdio};

/// The runtime for `arch` (the GPU runtime when `gpu`), brought up to date in the workspace
/// `ekb` comes from, if any.
pub fn find_or_build(arch: Arch, gpu: bool) -> Result<Runtime, String> {
    let (vars, triple, command) = if gpu {
        ([EKB_RT_GPU, gpu_env_var(arch)], gnu_triple(arch), gpu_build_command(arch))
    } else {
        ([EKB_RT, env_var(arch)], musl_triple(arch), build_command(arch))
    };
    let named = vars.iter().any(|v| std::env::var_os(v).is_some_and(|x| !x.is_empty()));
    let workspace =
        Path::new(env!("CARGO_MANIFEST_DIR")).ancestors().nth(2).filter(|r| r.join("Cargo.toml").is_file());
    if let (false, Some(root)) = (named, workspace) {
        let mut args = vec!["build", "--release", "-p", "ekb-rt", "--target", triple];
        if gpu {
            args.extend(["--features", "opencl,cuda"]);
        }
        let out = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
            .args(args)
            .current_dir(root)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .status();
        match out {
            Ok(s) if s.success() => {}
            Ok(s) => return Err(format!("error: `{command}` failed ({s})")),
            Err(e) => return Err(format!("error: cannot run cargo to build the device runtime: {e}")),
        }
    }
    if gpu { ekb_deploy::find_gpu_runtime(arch) } else { ekb_deploy::find_runtime(arch) }
        .map_err(|d| d.to_string())
}
