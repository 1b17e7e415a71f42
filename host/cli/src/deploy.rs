//! `ekb deploy`: put the device runtime on a device ahead of any run.
//!
//! Finds the static runtime for the target's architecture (the GPU runtime with `--gpu`), then
//! makes it ready on the device the way every `ekb run` does (over ssh or adb: copied when
//! missing or outdated, under a name that carries its content hash, then checked to start), and
//! says what it did. Useful before
//! a device goes offline-ish (a flaky link) or to check that a board is reachable at all.

use ekb_deploy::command::System;
use ekb_deploy::transport::{self, Device, RemoteOptions};
use std::process::ExitCode;

/// Install the device runtime on a device (`ekb run` does this too, when needed).
#[derive(clap::Args)]
#[command(after_help = "Examples:\n  \
ekb deploy --target rk3588 --device ssh://root@rk3588.lan\n  \
ekb deploy --target jetson-orin --device ssh://nvidia@orin:2222 --ssh-option IdentityFile=~/.ssh/orin\n  \
ekb deploy --target rk3588 --gpu --device ssh://root@rk3588.lan   the runtime with GPU executors\n  \
ekb deploy --target aarch64-qemu                 check the emulated runtime here")]
pub struct Args {
    /// Target profile: decides which runtime (x86_64 or aarch64) goes to the device.
    #[arg(long, default_value = "host")]
    target: String,
    /// `local`, `qemu`, `ssh://[user@]host[:port]` or `adb[:serial]` [default: local for this
    /// machine's architecture, qemu for another].
    #[arg(long)]
    device: Option<String>,
    /// An ssh/scp option, as for `ssh -o` (repeatable).
    #[arg(long = "ssh-option", value_name = "KEY=VALUE")]
    ssh_options: Vec<String>,
    /// Where the runtime is kept on the device [default: .cache/ekb over ssh,
    /// /data/local/tmp/ekb over adb].
    #[arg(long)]
    remote_dir: Option<String>,
    /// Install the GPU runtime (a glibc build that loads the device's OpenCL or CUDA driver,
    /// for GPU payloads) instead of the static one.
    #[arg(long)]
    gpu: bool,
}

pub fn run(args: Args) -> Result<ExitCode, String> {
    let target = crate::source::target(&args.target)?;
    let arch = crate::source::arch(&target)?;
    let device = match &args.device {
        Some(d) => Device::parse(d).map_err(|d| d.to_string())?,
        None => Device::default_for(arch),
    };
    if let Device::Dir(_) = device {
        return Err("error: `dir:` devices are bundles, not devices: use `ekb pack` to write one".into());
    }
    let runtime = crate::runtime::find_or_build(arch, args.gpu)?;
    let options = RemoteOptions { ssh_options: args.ssh_options, remote_dir: args.remote_dir };
    let mut transport = transport::connect(&device, &runtime, &options).map_err(|d| d.to_string())?;
    let steps = transport.install(&mut System).map_err(|d| d.to_string())?;
    println!(
        "{} {}runtime ({}, {} bytes, sha256 {}) ready on {}",
        arch.name(),
        if args.gpu { "GPU " } else { "" },
        runtime.found_by,
        runtime.size_bytes,
        &runtime.sha256[..16],
        transport.describe()
    );
    for s in steps {
        println!("  {s}");
    }
    Ok(ExitCode::SUCCESS)
}
