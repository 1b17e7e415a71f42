//! `ekb-rt`, the board runtime's command line.
//!
//! ```text
//! ekb-rt info [--json]
//! ekb-rt serve [OPTIONS]
//! ekb-rt run PAYLOAD... --out REPORT [OPTIONS]
//! ekb-rt --version | --help
//! ```
//!
//! (OPTIONS: threads and CPUs, timing overrides, the one-execution limit; see `USAGE`.)
//! `serve` speaks the protocol of `docs/protocol.md` on stdin and stdout until `Shutdown` or
//! the end of the input (exit status 0), or until the host vanishes mid-frame or stops reading
//! (exit status 1, with a line on stderr). `run` is the offline mode for air-gapped boards: it
//! runs each payload and writes the report file of `docs/protocol.md` (a `HelloAck` frame, then one `RunReport` — or `Error` for a
//! payload that cannot run here — per payload, in order). Exit status: 0 when every payload ran
//! and was correct, 1 when the report was written but some payload failed, 2 on a usage error
//! or when the report could not be written. The argument parser is hand-written to keep the
//! static binary small.

use ekb_rt::device::{format_cpu_list, Device};
use ekb_rt::run::{run_payload, RunOptions};
use ekb_rt::serve::{serve, ServeEnd, Session};
use ekb_rt::store::LoadedPayload;
use ekb_rt::{counters, isolate};
use ekb_wire::protocol::{
    encode_frame, Availability, DeviceInfo, ErrorKind, PayloadId, Response, MAX_BUDGET_MS, MAX_SAMPLES,
    MAX_TARGET_RSE, MAX_THREADS, MAX_WARMUP, PROTOCOL_VERSION,
};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

const USAGE: &str = "\
usage:
  ekb-rt info [--json]                 describe this device
  ekb-rt serve [OPTIONS]               speak the protocol on stdin/stdout
  ekb-rt run PAYLOAD... --out REPORT [OPTIONS]
                                       run payloads offline and write a report file
OPTIONS:
        [--threads N]                  threads for parallel loops (default: every allowed CPU)
        [--cpus LIST]                  pin kernel threads to these CPUs (e.g. 4-7 or 0,2)
        [--big-cores]                  pin to the fastest cluster when the CPU has several
        [--warmup N] [--min-samples N] [--max-samples N] [--target-rse X] [--budget-ms N]
        [--cold-cache | --warm-cache]  change the payloads' timing settings
        [--timeout-ms N]               limit of one execution (default: 10 s, whatever the budget)
  ekb-rt --version
";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("info") => info(&args[1..]),
        Some("run") => run(&args[1..]),
        Some("serve") => serve_command(&args[1..]),
        Some("--version" | "-V" | "version") => {
            println!(
                "ekb-rt {} ({}; {})",
                env!("CARGO_PKG_VERSION"),
                std::env::consts::ARCH,
                ekb_rt::BACKENDS_MARKER
            );
            Ok(ExitCode::SUCCESS)
        }
        Some("--help" | "-h" | "help") => {
            print!("{USAGE}");
            Ok(ExitCode::SUCCESS)
        }
        Some(other) => Err(format!("unknown command `{other}`")),
        None => Err("no command given".to_string()),
    };
    result.unwrap_or_else(|e| {
        eprintln!("ekb-rt: {e}\n{USAGE}");
        ExitCode::from(2)
    })
}

fn info(args: &[String]) -> Result<ExitCode, String> {
    let json = match args {
        [] => false,
        [a] if a == "--json" => true,
        [a, ..] => return Err(format!("`info` takes only --json, not `{a}`")),
    };
    let device = Device::probe();
    let mut info = device.to_info(counters::support(&device), isolate::availability(&device));
    let (gpus, gpu_notes) = ekb_rt::gpu::list();
    info.gpus = gpus;
    if json {
        #[derive(serde::Serialize)]
        struct Json<'a> {
            #[serde(flatten)]
            info: &'a DeviceInfo,
            emulation: Option<&'a str>,
            /// Why a GPU interface of this build found no device.
            gpu_notes: &'a [String],
        }
        let text = serde_json::to_string_pretty(&Json {
            info: &info,
            emulation: device.emulation.as_deref(),
            gpu_notes: &gpu_notes,
        })
        .map_err(|e| format!("cannot write JSON: {e}"))?;
        println!("{text}");
    } else {
        print!("{}", info_text(&device, &info, &gpu_notes));
    }
    Ok(ExitCode::SUCCESS)
}

fn info_text(device: &Device, info: &DeviceInfo, gpu_notes: &[String]) -> String {
    let mut s = String::new();
    let mut line = |k: &str, v: String| s.push_str(&format!("{k:<11} {v}\n"));
    line("arch", info.arch.clone());
    line("cpu", info.cpu_model.clone());
    line("cores", info.cores.to_string());
    for (i, c) in info.clusters.iter().enumerate() {
        let khz = c.max_khz.map_or("max frequency unknown".to_string(), |k| format!("{} MHz", k / 1000));
        let core = if c.core.is_empty() { "unknown core" } else { &c.core };
        line(
            if i == 0 { "clusters" } else { "" },
            format!("{core} x{}: cpus {}, {khz}", c.cpus.len(), format_cpu_list(&c.cpus)),
        );
    }
    line(
        "memory",
        format!("{:.1} GiB ({} bytes)", info.memory_bytes as f64 / (1u64 << 30) as f64, info.memory_bytes),
    );
    line("page size", format!("{} bytes", info.page_size));
    line("os", device.os.clone());
    line("emulation", device.emulation.clone().unwrap_or_else(|| "none detected".into()));
    for (i, c) in info.counters.iter().enumerate() {
        let kind = match c.kind {
            ekb_wire::protocol::CounterKind::Hardware => "hardware",
            ekb_wire::protocol::CounterKind::Software => "software",
            ekb_wire::protocol::CounterKind::Gpu => "gpu driver",
            ekb_wire::protocol::CounterKind::Step => "step time",
        };
        let state = match &c.availability {
            Availability::Available => "available".to_string(),
            Availability::Unavailable { reason } => reason.clone(),
        };
        line(if i == 0 { "counters" } else { "" }, format!("{} ({kind}): {state}", c.name));
    }
    line(
        "isolation",
        match &info.isolation {
            Availability::Available => "kernels run in a child process under a seccomp filter".to_string(),
            Availability::Unavailable { reason } => reason.clone(),
        },
    );
    for (i, l) in ekb_rt::gpu::describe(&info.gpus, gpu_notes).into_iter().enumerate() {
        line(if i == 0 { "gpus" } else { "" }, l);
    }
    s
}

/// Parsed arguments of `run`.
struct RunArgs {
    payloads: Vec<PathBuf>,
    out: PathBuf,
    options: RunOptions,
    big_cores: bool,
}

fn parse_run(args: &[String], command: &str) -> Result<RunArgs, String> {
    let mut payloads = Vec::new();
    let (mut out, mut options, mut big_cores) = (None, RunOptions::default(), false);
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = |flag: &str| it.next().cloned().ok_or_else(|| format!("`{flag}` needs a value"));
        match a.as_str() {
            "--out" | "-o" if command == "run" => out = Some(PathBuf::from(value(a)?)),
            "--threads" => {
                options.threads = bounded(a, &value(a)?, 0, MAX_THREADS)? as usize;
            }
            "--cpus" => {
                let v = value(a)?;
                let cpus = ekb_rt::device::parse_cpu_list(&v);
                if cpus.is_empty() {
                    return Err(format!("`--cpus {v}`: expected a CPU list such as 4-7 or 0,2"));
                }
                options.cpus = cpus.into_iter().map(|c| c as usize).collect();
            }
            "--big-cores" => big_cores = true,
            "--warmup" => options.timing.warmup = Some(bounded(a, &value(a)?, 0, MAX_WARMUP)?),
            "--min-samples" => options.timing.min_samples = Some(bounded(a, &value(a)?, 1, MAX_SAMPLES)?),
            "--max-samples" => options.timing.max_samples = Some(bounded(a, &value(a)?, 1, MAX_SAMPLES)?),
            "--budget-ms" => options.timing.budget_ms = Some(bounded(a, &value(a)?, 1, MAX_BUDGET_MS)?),
            "--target-rse" => options.timing.target_rse = Some(bounded(a, &value(a)?, 0.0, MAX_TARGET_RSE)?),
            "--cold-cache" => options.timing.cold_cache = Some(true),
            "--warm-cache" => options.timing.cold_cache = Some(false),
            "--timeout-ms" => {
                options.timeout =
                    Some(std::time::Duration::from_millis(bounded(a, &value(a)?, 1, MAX_BUDGET_MS)?))
            }
            flag if flag.starts_with('-') => return Err(format!("`{command}` has no option `{flag}`")),
            path if command == "run" => payloads.push(PathBuf::from(path)),
            other => return Err(format!("`{command}` takes no argument `{other}`")),
        }
    }
    if big_cores && !options.cpus.is_empty() {
        return Err("`--big-cores` and `--cpus` exclude each other".into());
    }
    if command != "run" {
        return Ok(RunArgs { payloads, out: PathBuf::new(), options, big_cores });
    }
    if payloads.is_empty() {
        return Err("`run` needs at least one payload".into());
    }
    let out = out.ok_or("`run` needs `--out REPORT`")?;
    Ok(RunArgs { payloads, out, options, big_cores })
}

/// A flag's value as a number in `lo..=hi` (the protocol's request bounds, so the command line
/// refuses what a session would).
fn bounded<T: std::str::FromStr + PartialOrd + std::fmt::Display>(
    flag: &str,
    v: &str,
    lo: T,
    hi: T,
) -> Result<T, String> {
    match v.parse::<T>() {
        Ok(n) if n >= lo && n <= hi => Ok(n),
        _ => Err(format!("`{flag} {v}`: expected a number in {lo}..={hi}")),
    }
}

fn serve_command(args: &[String]) -> Result<ExitCode, String> {
    let mut a = parse_run(args, "serve")?;
    if a.big_cores {
        a.options.cpus = Device::probe().big_cores();
    }
    // The watchdog abandons a run when the host stops reading the responses.
    a.options.host_fd = Some(1);
    let session = Session::new(a.options);
    let end = serve(std::io::stdin().lock(), std::io::stdout().lock(), session);
    match end {
        ServeEnd::Shutdown | ServeEnd::Closed => Ok(ExitCode::SUCCESS),
        ServeEnd::Truncated(e) => {
            eprintln!("ekb-rt serve: the host vanished mid-frame ({e}); exiting");
            Ok(ExitCode::from(1))
        }
        ServeEnd::HostGone(e) => {
            eprintln!("ekb-rt serve: the host is gone ({e}); exiting");
            Ok(ExitCode::from(1))
        }
    }
}

fn run(args: &[String]) -> Result<ExitCode, String> {
    let mut a = parse_run(args, "run")?;
    let device = Device::probe();
    if a.big_cores {
        a.options.cpus = device.big_cores();
    }
    let frame = |r: &Response| encode_frame(r).map_err(|e| format!("cannot encode a report frame: {e}"));
    let mut report = frame(&Response::HelloAck {
        version: PROTOCOL_VERSION,
        runtime: "ekb-rt".into(),
        runtime_version: env!("CARGO_PKG_VERSION").into(),
        device: device.summary(),
    })?;
    let mut all_ok = true;
    for (i, path) in a.payloads.iter().enumerate() {
        let id = PayloadId(i as u64);
        let (response, line) = run_one(id, path, &a.options);
        all_ok &= matches!(&response, Response::RunReport(r) if r.is_correct());
        println!("{}: {line}", path.display());
        // The timing's median on a line of its own, for scripts (a LAVA test case's measurement).
        if let Response::RunReport(r) = &response {
            if let (true, Some(t)) = (r.is_correct(), &r.timing) {
                println!("{}: median {:.0} ns", path.display(), t.stats.median_ns);
            }
        }
        report.extend(frame(&response)?);
    }
    let mut file =
        std::fs::File::create(&a.out).map_err(|e| format!("cannot create `{}`: {e}", a.out.display()))?;
    file.write_all(&report).map_err(|e| format!("cannot write `{}`: {e}", a.out.display()))?;
    Ok(if all_ok { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

/// Runs one payload file: the response for the report and a line for the terminal.
fn run_one(id: PayloadId, path: &std::path::Path, options: &RunOptions) -> (Response, String) {
    let error = |kind: ErrorKind, message: String| {
        let line = format!("error ({kind}): {message}");
        (Response::Error { kind, message }, line)
    };
    let payload = match LoadedPayload::from_file(id, path) {
        Ok(p) => std::sync::Arc::new(p),
        Err(e) => return error(e.kind, e.message),
    };
    let hidden = [(payload.mapping().addr(), payload.mapping().len())];
    match run_payload(&payload, &hidden, options) {
        Err(e) => error(e.kind, e.message),
        Ok(r) => {
            let line = match &r.failure {
                None => format!("correct ({} seeds, {} threads)", r.seeds.len(), r.threads),
                Some(f) => format!("FAILED {}: {}", f.kind, f.evidence),
            };
            (Response::RunReport(r), line)
        }
    }
}
