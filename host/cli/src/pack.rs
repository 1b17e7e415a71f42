//! `ekb pack`: a bundle for an air-gapped board: the runtime for the target's architecture (the
//! static one; the GPU runtime when a payload runs on the GPU), the payloads (IR files are built first), a plain POSIX `run.sh` that runs them
//! with `ekb-rt run` and writes one report per payload, `SHA256SUMS`, and a README for the
//! person at the board. `ekb collect` reads the reports back. With `--lava URL`, also a LAVA test
//! job that runs the bundle on a board farm (`ekb_deploy::lava`).

use crate::build::{build_file, is_payload, payload_name, BuildArgs};
use ekb_deploy::lava;
use ekb_wire::payload::{Backend, Payload};
use serde::Serialize;
use std::path::PathBuf;
use std::process::ExitCode;

/// Write a bundle: runtime, payloads, run script and README, for a board without network.
#[derive(clap::Args)]
#[command(after_help = "Examples:\n  \
ekb pack tests/ops/*.ekir --target rk3588 -o rk3588-bundle\n  \
ekb pack conv.ekp matmul.ekp -o bundle          payloads built before (their target)\n  \
ekb pack tests/ops/*.ekir --target rk3588 --backend gpu -o mali   OpenCL payloads, with the GPU runtime\n  \
ekb pack tests/ops/*.ekir --target rk3588 -o b --lava https://files.lab/b.tar.gz   and a LAVA job for a board farm\n\n\
On the board: `sh run.sh` in the bundle; back here: `ekb collect bundle/reports/*.ekr`.")]
pub struct Args {
    /// `.ekir` files (built first) and payload files.
    #[arg(required = true)]
    files: Vec<PathBuf>,
    #[command(flatten)]
    build: BuildArgs,
    /// The bundle directory to write.
    #[arg(short, long)]
    output: PathBuf,
    /// Replace an existing bundle in that directory.
    #[arg(long)]
    force: bool,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
    /// Also write a LAVA test job for a board farm (`lava-job.yaml`, and `lava-cases.sh` in the
    /// bundle): the board downloads the bundle from URL (the bundle folder as a .tar.gz: `tar
    /// -C BUNDLE -czf bundle.tar.gz .`), runs `run.sh`, and reports one LAVA test case per
    /// payload (pass/fail, the median in ns); `ekb collect --lava` reads LAVA's results back.
    #[arg(long, value_name = "URL")]
    lava: Option<String>,
    /// The LAVA device type of the job [default: the target's name].
    #[arg(long, value_name = "TYPE", requires = "lava")]
    lava_device_type: Option<String>,
}

#[derive(Serialize)]
struct Summary {
    bundle: String,
    target: String,
    arch: &'static str,
    runtime: String,
    payloads: Vec<String>,
    files: Vec<String>,
    total_bytes: u64,
}

pub fn run(args: Args) -> Result<ExitCode, String> {
    // The target: `--target`, else the first payload's, else host.
    let first_payload_target = args.files.iter().filter(|f| is_payload(f)).find_map(|f| {
        let bytes = std::fs::read(f).ok()?;
        Payload::parse(&bytes).ok().map(|v| v.manifest().target.clone())
    });
    let target = match (&args.build.target, first_payload_target) {
        (Some(t), _) => crate::source::target(t)?,
        (None, Some(t)) => crate::source::target(&t)?,
        (None, None) => crate::source::target("host")?,
    };
    let arch = crate::source::arch(&target)?;
    let mut payloads = Vec::new();
    for f in &args.files {
        let bytes = if is_payload(f) {
            std::fs::read(f).map_err(|e| format!("error: cannot read `{}`: {e}", f.display()))?
        } else {
            let built = build_file(f, &args.build, &target)?;
            eprintln!("built {}", built.summary);
            built.payload
        };
        payloads.push((payload_name(f), bytes));
    }
    let gpu = payloads
        .iter()
        .any(|(_, b)| Payload::parse(b).is_ok_and(|v| v.manifest().backend != Backend::CpuLlvm));
    let runtime = crate::runtime::find_or_build(arch, gpu)?;
    let written = ekb_deploy::bundle::write(&args.output, &target.name, &runtime, &payloads, args.force)
        .map_err(|d| d.to_string())?;
    if let Some(url) = &args.lava {
        let device_type = args.lava_device_type.as_deref().unwrap_or(&target.name);
        let write = |name: &str, text: String| {
            let path = args.output.join(name);
            std::fs::write(&path, text).map_err(|e| format!("error: cannot write `{}`: {e}", path.display()))
        };
        write(lava::CASES_FILE, lava::CASES_SH.to_string())?;
        write(lava::JOB_FILE, lava::job(&target.name, device_type, url))?;
    }
    let summary = Summary {
        bundle: args.output.display().to_string(),
        target: target.name.clone(),
        arch: arch.name(),
        runtime: runtime.path.display().to_string(),
        payloads: payloads.iter().map(|(n, _)| n.clone()).collect(),
        files: written.files,
        total_bytes: written.total_bytes,
    };
    if args.json {
        println!("{}", serde_json::to_string_pretty(&summary).expect("the summary serialises"));
    } else {
        println!(
            "wrote {}: {} payload(s) for {} ({}), {}",
            summary.bundle,
            summary.payloads.len(),
            summary.target,
            summary.arch,
            ekb_deploy::build::human_bytes(summary.total_bytes)
        );
        println!("on the board: sh run.sh; then here: ekb collect {}/reports/*.ekr", summary.bundle);
        if let Some(url) = &args.lava {
            println!(
                "on a LAVA farm: serve the bundle as {url} (tar -C {0} -czf bundle.tar.gz .), lavacli jobs submit {0}/{1}; \
                 then ekb collect --lava RESULTS.json",
                summary.bundle,
                lava::JOB_FILE
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}
