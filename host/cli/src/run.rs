//! `ekb run`: run an IR file (built into a payload first, through the compile driver) or a
//! payload on a device (`ekb_deploy::measure`), and print its report: correctness per seed,
//! timing, counters, memory and legality.
//!
//! Devices: `local` (the runtime as a child process), `qemu` (the aarch64 runtime under
//! qemu-user; the default for aarch64 targets on an x86_64 machine), `ssh://[user@]host[:port]`,
//! `adb[:serial]`, and `dir:PATH`, which writes a bundle for an air-gapped board instead of
//! running. A GPU payload (OpenCL or CUDA) runs on the GPU build of the runtime. The runtime
//! comes from `crate::runtime`: in a workspace checkout it is built first, as for `ekb eval`.
//! `--inputs DIR` carries the user's arrays as the graph's inputs (see `inputs.rs`). Exit status
//! 0 when every seed was correct, 1 otherwise or on an error.

use crate::build::{build_file, is_payload, payload_name, BuildArgs};
use crate::files;
use ekb_deploy::report;
use ekb_deploy::transport::{self, Device, Mode, RemoteOptions, RunSettings};
use ekb_wire::payload::{Backend, Payload};
use ekb_wire::protocol::MAX_THREADS;
use std::path::PathBuf;
use std::process::ExitCode;

/// Run an IR file or a payload on a device and print the report.
#[derive(clap::Args)]
#[command(after_help = "Examples:\n  \
ekb run conv.ekir                                  build for this machine and run here\n  \
ekb run conv.ekir --target aarch64-qemu            the aarch64 runtime under qemu-user\n  \
ekb run conv.ekir --target pocl                    OpenCL through PoCL, on the GPU runtime\n  \
ekb run conv.ekp --device ssh://root@rk3588.lan    copy the runtime if needed, run over ssh\n  \
ekb run conv.ekp --device adb:R58M12ABC            the same over adb\n  \
ekb run conv.ekir --target rk3588 --device dir:bundle/   a bundle for an air-gapped board\n  \
ekb run conv.ekp --save-report conv.ekr --json")]
pub struct Args {
    /// An `.ekir` file (built first) or a payload file.
    file: PathBuf,
    #[command(flatten)]
    build: BuildArgs,
    /// `local`, `qemu`, `ssh://[user@]host[:port]`, `adb[:serial]` or `dir:PATH` [default:
    /// local for this machine's architecture, qemu for another].
    #[arg(long)]
    device: Option<String>,
    /// Threads for parallel loops on the device [default: the runtime's].
    #[arg(long, value_parser = clap::value_parser!(u32).range(0..=i64::from(MAX_THREADS)))]
    threads: Option<u32>,
    /// Run with `ekb-rt run` on the device and copy the report back, instead of a live session.
    #[arg(long)]
    offline: bool,
    /// Also write the report file (the frames `ekb collect` reads).
    #[arg(long)]
    save_report: Option<PathBuf>,
    /// An ssh/scp option, as for `ssh -o` (repeatable): `IdentityFile=~/.ssh/board`.
    #[arg(long = "ssh-option", value_name = "KEY=VALUE")]
    ssh_options: Vec<String>,
    /// Where the runtime is kept on the device [default: .cache/ekb over ssh,
    /// /data/local/tmp/ekb over adb].
    #[arg(long)]
    remote_dir: Option<String>,
    /// Replace an existing bundle (`--device dir:PATH`).
    #[arg(long)]
    force: bool,
    /// Print JSON instead of the table.
    #[arg(long)]
    json: bool,
}

fn err(d: ekb_ir::Diagnostic) -> String {
    d.to_string()
}

/// The payload to run: the file itself, or one built from IR.
fn payload(args: &Args) -> Result<(Vec<u8>, ekb_ir::TargetProfile), String> {
    if is_payload(&args.file) {
        let bytes = std::fs::read(&args.file)
            .map_err(|e| format!("error: cannot read `{}`: {e}", args.file.display()))?;
        let view = Payload::parse(&bytes)
            .map_err(|e| format!("error: `{}` is not a valid payload: {e}", args.file.display()))?;
        let built_for = view.manifest().target.clone();
        if let Some(t) = &args.build.target {
            if *t != built_for {
                return Err(format!(
                    "error: `{}` was built for target `{built_for}`, not `{t}`\n  = hint: rebuild it with `ekb build --target {t}`",
                    args.file.display()
                ));
            }
        }
        let target = crate::source::target(&built_for)?;
        return Ok((bytes, target));
    }
    let target = args.build.profile("host")?;
    let built = build_file(&args.file, &args.build, &target)?;
    eprintln!("built {}", built.summary);
    Ok((built.payload, target))
}

pub fn run(args: Args) -> Result<ExitCode, String> {
    let (bytes, target) = payload(&args)?;
    let arch = crate::source::arch(&target)?;
    let device = match &args.device {
        Some(d) => Device::parse(d).map_err(err)?,
        None => Device::default_for(arch),
    };
    // GPU payloads run on the GPU build of the runtime (glibc, with the drivers loaded at run
    // time); CPU payloads on the static one.
    let gpu = Payload::parse(&bytes).is_ok_and(|v| v.manifest().backend != Backend::CpuLlvm);
    let runtime = crate::runtime::find_or_build(arch, gpu)?;
    if let Device::Dir(dir) = &device {
        let payloads = vec![(payload_name(&args.file), bytes)];
        let written =
            ekb_deploy::bundle::write(dir, &target.name, &runtime, &payloads, args.force).map_err(err)?;
        println!(
            "wrote a bundle for {} to {} ({} files); on the board run `sh run.sh`, then `ekb collect {}/reports/*.ekr`",
            target.name,
            dir.display(),
            written.files.len(),
            dir.display()
        );
        return Ok(ExitCode::SUCCESS);
    }
    let options =
        RemoteOptions { ssh_options: args.ssh_options.clone(), remote_dir: args.remote_dir.clone() };
    let mut transport = transport::connect(&device, &runtime, &options).map_err(err)?;
    let settings = RunSettings {
        seeds: None,
        timing: if is_payload(&args.file) { args.build.timing_overrides() } else { Default::default() },
        threads: args.threads,
    };
    let mode = if args.offline { Mode::Offline } else { Mode::Auto };
    let outcome = ekb_deploy::measure(&bytes, transport.as_mut(), &settings, mode).map_err(err)?;
    for line in &outcome.log {
        eprintln!("{line}");
    }
    if let Some(out) = &args.save_report {
        files::write(out, &report::encode(&outcome.report))?;
    }
    let name = format!("{} on {device}", args.file.display());
    if args.json {
        let json = report::to_json(&name, &outcome.report);
        println!("{}", serde_json::to_string_pretty(&json).expect("reports serialise"));
    } else {
        print!("{}", report::render(&name, &outcome.report));
    }
    Ok(if outcome.report.all_correct() { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}
