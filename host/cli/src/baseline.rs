//! `ekb baseline`: time a graph in an external engine on this machine, for "vs engine" columns.
//!
//! The graph is exported to ONNX and run in onnxruntime (its Python package, which this command
//! never installs; `toolchains/setup.sh` does). The engine's outputs are checked against the
//! reference interpreter first; the timing is stored in the runtime's `Timing` form.

use crate::source::{self, Program};
use ekb_onnx::baseline::{onnxruntime, BaselineOptions};
use std::path::PathBuf;
use std::process::ExitCode;

/// Time a graph in an external inference engine on the host.
#[derive(clap::Args)]
#[command(after_help = "Examples:\n  \
ekb baseline resnet18.ekir --engine onnxruntime\n  \
ekb baseline conv.ekir --samples 200 --threads 1 --out conv.onnxruntime.json")]
pub struct Args {
    /// The L0 graph (`.ekir`).
    file: PathBuf,
    /// The engine.
    #[arg(long, value_enum, default_value_t = Engine::Onnxruntime)]
    engine: Engine,
    /// Seed of the inputs and generated parameters.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Untimed runs before sampling.
    #[arg(long, default_value_t = 10)]
    warmup: u32,
    /// Timed runs.
    #[arg(long, default_value_t = 50)]
    samples: u32,
    /// Intra-op threads (0: the engine's choice).
    #[arg(long, default_value_t = 0)]
    threads: u32,
    /// Also write the result (JSON) to this file.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Print the result as JSON instead of text.
    #[arg(long)]
    json: bool,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Engine {
    /// onnxruntime, CPU execution provider (Python package `onnxruntime`).
    Onnxruntime,
}

pub fn run(args: Args) -> Result<ExitCode, String> {
    let (_, program) = source::load(&args.file).map_err(|d| source::render(&d))?;
    let Program::Graph(g) = program else {
        return Err(format!(
            "error: `{}` is an L1 module; a baseline needs an L0 graph",
            args.file.display()
        ));
    };
    let work = tempfile::tempdir().map_err(|e| format!("error: cannot make a temporary directory: {e}"))?;
    let opts = BaselineOptions {
        seed: args.seed,
        warmup: args.warmup,
        samples: args.samples,
        threads: args.threads,
    };
    let b = match args.engine {
        Engine::Onnxruntime => onnxruntime(&g, opts, work.path()).map_err(|e| format!("error: {e}"))?,
    };
    let json = serde_json::to_string_pretty(&b).expect("the result serialises");
    if let Some(path) = &args.out {
        std::fs::write(path, &json).map_err(|e| format!("error: cannot write `{}`: {e}", path.display()))?;
    }
    if args.json {
        println!("{json}");
    } else {
        let s = &b.timing.stats;
        println!(
            "{} {} on `{}` (threads: {}): median {:.3} ms, min {:.3} ms, p10-p90 {:.3}-{:.3} ms, cv {:.1}%, {} samples after {} warm-up",
            b.engine,
            b.engine_version,
            b.graph,
            if b.threads == 0 { "engine default".to_string() } else { b.threads.to_string() },
            s.median_ns / 1e6,
            s.min_ns / 1e6,
            s.p10_ns / 1e6,
            s.p90_ns / 1e6,
            s.cv * 100.0,
            b.timing.samples_ns.len(),
            b.timing.warmup
        );
        if b.outputs_match {
            println!("  outputs match the reference interpreter (seed {})", b.seed);
        } else {
            println!("  outputs DIFFER from the reference interpreter: {}", b.mismatches.join("; "));
        }
    }
    Ok(if b.outputs_match { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}
