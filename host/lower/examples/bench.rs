//! Throughput of the naive and default schedules on the two reference operators, compiled for
//! this machine by the LLVM adapter: `matmul` 512x512x512 and a 3x3 `conv2d` 64->64 channels on
//! 56x56 (stride 1, pad 1). Each result is checked against the L0 reference interpreter first.
//!
//! `cargo run --release -p ekb-lower --example bench -- [matmul|conv|all] [iters] [threads]`
//! (threads 0: every core). Prints the median and the best time of the timed runs, with their
//! GFLOP/s (2 flops per multiply-add); on a busy machine the best run is the steadier figure.

use ekb_ir::l0::check::load;
use ekb_ir::tensor::{compare, Tolerance};
use ekb_ir::{SourceFile, TargetProfile};
use ekb_llvm::HostModule;
use ekb_lower::{lower, Schedule};
use std::collections::HashMap;

const MATMUL: &str = "graph matmul(a: f32[512,512], b: f32[512,512]) -> (y: f32[512,512]) {
  %0: f32[512,512] = matmul(a, b)
  return %0
}";

const CONV: &str = "graph conv(x: f32[1,64,56,56]) -> (y: f32[1,64,56,56]) {
  param w: f32[64,64,3,3] = kaiming_uniform
  %0: f32[1,64,56,56] = conv2d(x, w, pad=[1,1,1,1])
  return %0
}";

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let which = args.first().map_or("all", String::as_str);
    let iters: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(30);
    let threads: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(0);
    let target = TargetProfile::load("host").expect("the host profile");
    let cases =
        [("matmul", MATMUL, 2.0 * 512f64.powi(3)), ("conv", CONV, 2.0 * 64.0 * 64.0 * 9.0 * 56.0 * 56.0)];
    for (name, text, flops) in cases {
        if which != "all" && which != name {
            continue;
        }
        if let Err(e) = bench(name, text, flops, &target, iters, threads) {
            eprintln!("{name}: {e}");
            std::process::exit(1);
        }
    }
}

fn bench(
    name: &str,
    text: &str,
    flops: f64,
    target: &TargetProfile,
    iters: usize,
    threads: usize,
) -> Result<(), String> {
    let g = load(&SourceFile::new(name, text)).map_err(|ds| ds[0].to_string())?;
    let inputs: HashMap<_, _> =
        ekb_ir::l0::inputs::generate(&g, 1).map_err(|d| d.to_string())?.into_iter().collect();
    let tensors = inputs.iter().map(|(n, b)| (n.clone(), b.to_tensor())).collect();
    let reference = ekb_ir::l0::interp::run(&g, &tensors).map_err(|d| d.to_string())?;
    for schedule in Schedule::ALL {
        let m = lower(&g, schedule, target).map_err(|d| d.to_string())?;
        let host = HostModule::build(&m, target, threads).map_err(|d| d.to_string())?;
        let out = host.run(&m, &inputs).map_err(|d| d.to_string())?;
        let y = out["y"].to_tensor();
        compare(&reference[0], &y, Tolerance::default_for(y.ty.dtype))
            .map_err(|mm| format!("{schedule} schedule: wrong result: {mm}"))?;
        let warmup = if schedule == Schedule::Naive { 1 } else { 3 };
        let iters = if schedule == Schedule::Naive { iters.min(3) } else { iters };
        let mut times = host.time(&m, &inputs, warmup, iters.max(1)).map_err(|d| d.to_string())?;
        times.sort();
        let (median, best) = (times[times.len() / 2].as_secs_f64(), times[0].as_secs_f64());
        println!(
            "{name:7} {:8} threads={} median {:9.3} ms {:7.2} GFLOP/s | best {:9.3} ms {:7.2} GFLOP/s",
            schedule.name(),
            host.threads(),
            median * 1e3,
            flops / median / 1e9,
            best * 1e3,
            flops / best / 1e9
        );
    }
    Ok(())
}
