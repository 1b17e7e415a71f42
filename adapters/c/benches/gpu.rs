//! The GPU benchmark: what the default and the naive GPU lowering reach on each GPU interface
//! present, against the device's practical peak measured in the same run.
//!
//! For every interface compiled in (OpenCL by default; CUDA with `--features cuda`) whose
//! driver finds a device, it times
//! - `matmul(a, b)` of two f32[1024,1024], lowered by `ekb_lower::lower_gpu` with the default
//!   schedule (register tiles over stages in shared memory) and the naive one (one thread per
//!   output element);
//! - the depthwise 3x3 convolution of MobileNetV2's `features.3` (144 channels at 56x56, stride
//!   1, padding 1), both schedules;
//! - the launch overhead: a kernel of one thread writing one element, by the device's clock per
//!   launch and by the host's clock per launch and synchronise;
//!
//! each as the median of repeated executions by the driver's clock (OpenCL profiling events,
//! CUDA events, as `ekb_gpu` reports them), with GFLOP/s, the minimum bytes moved (inputs read
//! once, outputs written once) and GB/s, and the fraction of the roofline: the time bound
//! `max(flops / peak_flops, bytes / peak_bw)` over the measured time, where the peaks come from
//! two L1 microkernels run the same way (an FMA-throughput kernel and a streaming copy). On CUDA
//! the vendor library is timed too (PyTorch: cuBLAS without TF32, cuDNN), when `python3` has a
//! torch that sees the GPU; otherwise the table says why there is no vendor reference. Every
//! timed output is checked on the host (the matmul at 512 sampled elements against f64 dot
//! products, the convolution and the copy entirely, the FMA kernel at 256 sampled threads); a
//! wrong result is printed instead of its time, and the exit status is then 1.
//!
//! Running it:
//!
//! ```sh
//! cargo bench -p ekb-gpu-c --bench gpu                         # OpenCL (PoCL here)
//! cargo bench -p ekb-gpu-c --features cuda --bench gpu         # OpenCL and CUDA
//! cargo bench -p ekb-gpu-c --features cuda --bench gpu -- --quick cuda
//! cargo bench -p ekb-gpu-c --features cuda --bench gpu --no-run   # prints the executable's path
//! ```
//!
//! Arguments (after `--`, or given to the executable directly): `--quick` (fewer repetitions:
//! 1 warm-up, then at least 5 runs and 0.2 s, at most 2 s; the default is 2 warm-ups, then at
//! least 20 runs and 1 s, or at least 3 runs once 10 s went by), `opencl` and/or `cuda` (only
//! these interfaces; default: every one compiled in), `-h`/`--help`. cargo's own `--bench` is
//! ignored; an interface asked for by name that is skipped makes the exit status 1. The
//! executable needs no source tree and no cargo: target profiles are built in
//! (`pocl` for OpenCL, `h200` for CUDA) and the PyTorch script is compiled in and piped to
//! `python3 -`. OpenCL honours `OPENCL_DYLIB_PATH`; CUDA loads `libcuda` and `libnvrtc` (cudarc
//! asks for names up to `libnvrtc.so.12`: with a newer toolkit, put a `libnvrtc.so` link to it
//! on `LD_LIBRARY_PATH`, as docs/gpu.md shows).
//!
//! What it must keep true: an interface that is not compiled in or has no device is reported
//! as skipped with the reason; a failure of one measurement is printed in its row and does not
//! stop the others; no number is printed for a result that was not checked, nor for a vendor
//! library that did not run.

#[path = "gpu/cases.rs"]
mod cases;
#[path = "gpu/device.rs"]
mod device;
#[path = "gpu/vendor.rs"]
mod vendor;

use cases::*;
use device::{Loaded, Reps, Timing};
use ekb_gpu_c::run::{Api, Gpu};
use ekb_ir::TargetProfile;
use ekb_lower::{lower_gpu, Schedule};
use std::process::ExitCode;

const USAGE: &str = "usage: gpu [--quick] [opencl|cuda]...
  --quick   fewer repetitions (1 warm-up, >= 5 runs and 0.2 s, at most 2 s)
  opencl    benchmark OpenCL (default: every interface compiled in)
  cuda      benchmark CUDA";

struct Options {
    quick: bool,
    /// Empty: every interface.
    apis: Vec<Api>,
}

impl Options {
    fn parse(args: impl Iterator<Item = String>) -> Result<Options, String> {
        let mut o = Options { quick: false, apis: Vec::new() };
        for a in args {
            match a.as_str() {
                "--bench" => {}
                "--quick" => o.quick = true,
                "opencl" => o.apis.push(Api::OpenCl),
                "cuda" => o.apis.push(Api::Cuda),
                "-h" | "--help" => return Err(String::new()),
                other => return Err(format!("unknown argument `{other}`")),
            }
        }
        Ok(o)
    }
}

/// Measured or failed: one row's outcome.
type Outcome = Result<Timing, String>;

/// A failure that is a wrong result, not a driver or build error.
const WRONG: &str = "WRONG RESULT";

/// Builds `m`, writes `inputs`, times the plan, then checks `output` with `check`.
fn measure(
    gpu: &Gpu,
    target: &TargetProfile,
    m: Result<ekb_ir::l1::Module, String>,
    inputs: &[(&str, &[f32])],
    output: &str,
    reps: Reps,
    check: impl FnOnce(&[f32]) -> Result<(), String>,
) -> Result<(Timing, usize), String> {
    let mut l = Loaded::new(gpu, m?, target)?;
    for (name, data) in inputs {
        l.write(name, data)?;
    }
    let t = l.time(reps)?;
    check(&l.read(output)?).map_err(|e| format!("{WRONG}: {e}"))?;
    Ok((t, l.steps))
}

/// One line of the table.
struct Row {
    workload: &'static str,
    schedule: String,
    kernels: Option<usize>,
    outcome: Outcome,
    flops: f64,
    bytes: f64,
    /// The vendor library's median for the same workload, ms.
    vendor_ms: Option<f64>,
}

/// The practical peak, from the microkernels.
struct Roof {
    gflops: Option<f64>,
    gbs: Option<f64>,
}

impl Roof {
    /// The roofline's lower bound on the time, seconds.
    fn bound_s(&self, flops: f64, bytes: f64) -> Option<f64> {
        Some((flops / (self.gflops? * 1e9)).max(bytes / (self.gbs? * 1e9)))
    }
}

/// At least four significant digits (all the integer digits of large values).
fn sig(v: f64) -> String {
    let digits = if v > 0.0 { (3 - v.log10().floor() as i32).clamp(0, 9) as usize } else { 3 };
    format!("{v:.digits$}")
}

fn print_table(rows: &[Row], roof: &Roof, vendor: bool) {
    let mut head = format!(
        "{:<32} {:<8} {:>4} {:>6} {:>11} {:>9} {:>8} {:>9} {:>10} {:>7}",
        "workload",
        "schedule",
        "kern",
        "runs",
        "median ms",
        "GFLOP/s",
        "min MB",
        "GB/s",
        "bound ms",
        "of roof"
    );
    if vendor {
        head.push_str(&format!(" {:>9}", "of torch"));
    }
    println!("{head}");
    println!("{}", "-".repeat(head.len()));
    for r in rows {
        let kernels = r.kernels.map_or("-".to_string(), |k| k.to_string());
        let prefix = format!("{:<32} {:<8} {:>4}", r.workload, r.schedule, kernels);
        match &r.outcome {
            Err(e) => println!("{prefix} FAILED: {e}"),
            Ok(t) => {
                let s = t.median_s();
                let bound = roof.bound_s(r.flops, r.bytes);
                let mut line = format!(
                    "{prefix} {:>6} {:>11} {:>9} {:>8.2} {:>9} {:>10} {:>7}",
                    t.runs,
                    sig(s * 1e3),
                    sig(r.flops / s * 1e-9),
                    r.bytes * 1e-6,
                    sig(r.bytes / s * 1e-9),
                    bound.map_or("n/a".to_string(), |b| sig(b * 1e3)),
                    bound.map_or("n/a".to_string(), |b| format!("{:.1}%", b / s * 100.0)),
                );
                if vendor {
                    let of = r.vendor_ms.map_or("-".to_string(), |v| format!("{:.1}%", v * 1e-3 / s * 100.0));
                    line.push_str(&format!(" {of:>9}"));
                }
                println!("{line}");
            }
        }
    }
}

/// Everything for one interface; false when a result was wrong or a measurement failed.
fn bench(gpu: &Gpu, reps: Reps, quick: bool) -> bool {
    let api = gpu.info.api;
    let profile = match api {
        Api::OpenCl => "pocl",
        Api::Cuda => "h200",
    };
    let target = match TargetProfile::load(profile) {
        Ok(t) => t,
        Err(e) => {
            println!("{api}: FAILED: {e}");
            return false;
        }
    };
    let i = &gpu.info;
    println!(
        "\n== {api}: {} ({}; {}; {} compute units), kernels lowered for target profile `{profile}`, times by {}",
        i.name,
        i.version,
        i.arch,
        i.compute_units,
        api.clock()
    );
    let mut ok = true;
    let mut note = |r: &Result<(Timing, usize), String>| {
        if r.is_err() {
            ok = false;
        }
    };

    // The roofline.
    // 256 blocks per compute unit: many waves, so the tail of the last one does not count.
    let blocks = (i.compute_units.max(1) as usize) * 256;
    let p = FMA_P;
    let fma = measure(gpu, &target, fma_module(blocks), &[("p", &p[..])], "y", reps, check_fma);
    note(&fma);
    let copy_n: usize = match api {
        Api::OpenCl => 16 << 20,
        Api::Cuda => 64 << 20,
    };
    let x = random(copy_n, 5);
    let copy = measure(gpu, &target, copy_module(copy_n), &[("x", x.as_slice())], "y", reps, |y| {
        match y.iter().zip(&x).position(|(a, b)| a.to_bits() != b.to_bits()) {
            None => Ok(()),
            Some(k) => Err(format!("y[{k}] = {}, expected {}", y[k], x[k])),
        }
    });
    drop(x);
    note(&copy);
    let copy_bytes = (2 * copy_n * 4) as f64;
    let roof = Roof {
        gflops: fma.as_ref().ok().map(|(t, _)| fma_flops(blocks) / t.median_s() * 1e-9),
        gbs: copy.as_ref().ok().map(|(t, _)| copy_bytes / t.median_s() * 1e-9),
    };
    println!("roofline (L1 microkernels, this run):");
    match &fma {
        Ok((t, _)) => println!(
            "  FMA throughput: {:.1} GFLOP/s ({blocks} blocks of {BLOCK} threads, each thread {CHAINS} \
             independent chains of {STEPS} FMAs; median {:.4} ms of {} runs)",
            roof.gflops.unwrap_or(0.0),
            t.median_s() * 1e3,
            t.runs
        ),
        Err(e) => println!("  FMA throughput: FAILED: {e}"),
    }
    match &copy {
        Ok((t, _)) => println!(
            "  streaming copy: {:.1} GB/s ({} MiB read + {} MiB written; median {:.4} ms of {} runs)",
            roof.gbs.unwrap_or(0.0),
            (copy_n * 4) >> 20,
            (copy_n * 4) >> 20,
            t.median_s() * 1e3,
            t.runs
        ),
        Err(e) => println!("  streaming copy: FAILED: {e}"),
    }

    // The vendor reference first, so that its rows can be compared with ours.
    let vendor_reps = if quick { 20 } else { 100 };
    let vendor = match api {
        Api::Cuda => Some(vendor::torch(MATMUL_N, DW_C, DW_HW, vendor_reps)),
        Api::OpenCl => None,
    };

    // The workloads.
    let mut rows = Vec::new();
    let (mm_flops, mm_bytes) = matmul_work();
    let (dw_flops, dw_bytes) = dwconv_work();
    let n = MATMUL_N;
    let (a, b) = (random(n * n, 1), random(n * n, 2));
    let (cx, cw) = (random(DW_C * DW_HW * DW_HW, 3), random(DW_C * 9, 4));
    let vendor_ms =
        |which: fn(&vendor::Vendor) -> f64| vendor.as_ref().and_then(|v| v.as_ref().ok()).map(which);
    for schedule in [Schedule::Default, Schedule::Naive] {
        let lowered = |g: Result<ekb_ir::l0::Graph, String>| {
            g.and_then(|g| lower_gpu(&g, schedule, &target).map_err(|d| d.to_string()))
        };
        let mm = measure(
            gpu,
            &target,
            lowered(matmul_graph()),
            &[("a", a.as_slice()), ("b", b.as_slice())],
            "y",
            reps,
            |y| check_matmul(&a, &b, y),
        );
        note(&mm);
        rows.push(Row {
            workload: "matmul 1024x1024x1024 f32",
            schedule: schedule.name().to_string(),
            kernels: mm.as_ref().ok().map(|r| r.1),
            outcome: mm.map(|r| r.0),
            flops: mm_flops,
            bytes: mm_bytes,
            vendor_ms: vendor_ms(|v| v.matmul_ms),
        });
    }
    for schedule in [Schedule::Default, Schedule::Naive] {
        let lowered =
            dwconv_graph().and_then(|g| lower_gpu(&g, schedule, &target).map_err(|d| d.to_string()));
        let dw =
            measure(gpu, &target, lowered, &[("x", cx.as_slice()), ("w", cw.as_slice())], "y", reps, |y| {
                check_dwconv(&cx, &cw, y)
            });
        note(&dw);
        rows.push(Row {
            workload: "dwconv3x3 1x144x56x56 s1 p1",
            schedule: schedule.name().to_string(),
            kernels: dw.as_ref().ok().map(|r| r.1),
            outcome: dw.map(|r| r.0),
            flops: dw_flops,
            bytes: dw_bytes,
            vendor_ms: vendor_ms(|v| v.dwconv_ms),
        });
    }
    if let Some(Ok(v)) = &vendor {
        for (workload, ms, flops, bytes) in [
            ("matmul 1024x1024x1024 f32", v.matmul_ms, mm_flops, mm_bytes),
            ("dwconv3x3 1x144x56x56 s1 p1", v.dwconv_ms, dw_flops, dw_bytes),
        ] {
            rows.push(Row {
                workload,
                schedule: "torch".to_string(),
                kernels: None,
                outcome: Ok(Timing { runs: vendor_reps, median_ns: ms * 1e6 }),
                flops,
                bytes,
                vendor_ms: None,
            });
        }
    }
    println!();
    print_table(&rows, &roof, api == Api::Cuda);
    match &vendor {
        None => println!("vendor reference: none for {api} (the PyTorch reference runs on CUDA only)"),
        Some(Err(e)) => println!("vendor reference not available: {e}"),
        Some(Ok(v)) => println!(
            "vendor reference: {} on {} (CUDA events; max error against f64, relative to the largest \
             element: matmul {:.1e}, dwconv {:.1e})",
            v.version, v.device, v.matmul_rel_err, v.dwconv_rel_err
        ),
    }

    // The launch overhead.
    let launch = launch_module().and_then(|m| {
        let mut l = Loaded::new(gpu, m, &target)?;
        let device = l.time(reps)?;
        let host = l.host_wall(reps)?;
        match l.read("y")?[0] {
            1.0 => Ok((device, host)),
            other => Err(format!("{WRONG}: y[0] = {other}, expected 1")),
        }
    });
    match launch {
        Ok((device, host)) => println!(
            "launch overhead (one block of one thread writing one element): {:.2} us per launch by the device \
             clock (median of {}), {:.2} us per launch and synchronise by the host clock (median of {})",
            device.median_ns * 1e-3,
            device.runs,
            host.median_ns * 1e-3,
            host.runs
        ),
        Err(e) => {
            ok = false;
            println!("launch overhead: FAILED: {e}");
        }
    }
    ok
}

fn main() -> ExitCode {
    let opts = match Options::parse(std::env::args().skip(1)) {
        Ok(o) => o,
        Err(e) if e.is_empty() => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("{e}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let reps = if opts.quick { Reps::quick() } else { Reps::full() };
    println!(
        "GPU benchmark ({}): median of repeated executions by the driver's clock",
        if opts.quick { "quick: >= 5 runs and 0.2 s" } else { ">= 20 runs and 1 s, or >= 3 runs and 10 s" }
    );
    let mut ok = true;
    for api in [Api::OpenCl, Api::Cuda] {
        if !opts.apis.is_empty() && !opts.apis.contains(&api) {
            println!("{api}: skipped (not asked for)");
            continue;
        }
        if !api.compiled_in() {
            println!("{api}: skipped: not compiled in (cargo feature `{}`)", api.feature());
            ok &= opts.apis.is_empty();
            continue;
        }
        match Gpu::open(api) {
            Ok(gpu) => ok &= bench(&gpu, reps, opts.quick),
            Err(d) => {
                let why = d.message.strip_prefix(&format!("{api}: ")).unwrap_or(&d.message);
                println!("{api}: skipped: {why}");
                // Asked for by name: its absence is a failure.
                ok &= opts.apis.is_empty();
            }
        }
    }
    if ok {
        ExitCode::SUCCESS
    } else {
        println!("\nsome measurements FAILED (see above)");
        ExitCode::FAILURE
    }
}
