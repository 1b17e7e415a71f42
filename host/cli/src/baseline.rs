//! `ekb baseline`: time a graph in an external engine on this machine, for "vs engine" columns.
//!
//! The graph is exported to ONNX and run in onnxruntime, Apache TVM (untuned, or tuned with
//! MetaSchedule, its records cached per target and graph) or MNN, through their Python packages,
//! which this command never installs (`toolchains/setup.sh --baselines` does; a missing package
//! is an error giving the `pip` command). The engine's outputs are checked against the reference
//! interpreter first, at a tolerance the result states; the timing is stored in the runtime's
//! `Timing` form.

use crate::files;
use crate::source::{self, Program};
use ekb_ir::target::TargetProfile;
use ekb_onnx::baseline::{self as bl, Baseline, BaselineOptions, TuneOptions, TvmOptions};
use std::path::PathBuf;
use std::process::ExitCode;

/// Time a graph in an external inference engine on the host.
#[derive(clap::Args)]
#[command(after_help = "Examples:\n  \
ekb baseline resnet18.ekir --engine onnxruntime\n  \
ekb baseline conv.ekir --samples 200 --threads 1 --out conv.onnxruntime.json\n  \
ekb baseline conv.ekir --engine tvm                       untuned (TVM's default CPU pipeline)\n  \
ekb baseline conv.ekir --engine tvm --tune 64             MetaSchedule, 64 trials, records cached\n  \
ekb baseline conv.ekir --engine mnn --threads 1\n\
Engines are Python packages installed on demand: toolchains/setup.sh --baselines")]
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
    /// TVM: the target profile whose CPU to compile for (a profile of this machine's
    /// architecture; default `host`, i.e. `-mcpu=native`).
    #[arg(long, value_name = "PROFILE")]
    target: Option<String>,
    /// TVM: tune with MetaSchedule, this many trials in total; the records are kept and reused.
    #[arg(long, value_name = "TRIALS")]
    tune: Option<u32>,
    /// TVM: the root folder of the tuning records (default `~/.cache/ekb/tvm`); records of a
    /// graph go to `DIR/<target>/<graph>-<hash>/`.
    #[arg(long, value_name = "DIR", requires = "tune")]
    tune_dir: Option<PathBuf>,
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
    /// Apache TVM 0.27, Relax ONNX frontend, LLVM for this CPU (Python package `apache-tvm`).
    Tvm,
    /// MNN, CPU backend (Python package `MNN`).
    Mnn,
}

pub fn run(args: Args) -> Result<ExitCode, String> {
    let engine = engine(&args).map_err(|e| format!("error: {e}"))?;
    let (_, program) = source::load(&args.file).map_err(|d| source::render(&d))?;
    let Program::Graph(g) = program else {
        return Err(format!(
            "error: `{}` is an L1 module; a baseline needs an L0 graph",
            args.file.display()
        ));
    };
    if let bl::Engine::Tvm(TvmOptions { tune: Some(t), .. }) = &engine {
        // Check the packages before announcing a wait that would not happen.
        bl::require_engine(&engine).map_err(|e| format!("error: {e}"))?;
        eprintln!(
            "tvm: MetaSchedule with {} trials; records under `{}` (tuning takes minutes, reused records take seconds)",
            t.trials,
            t.root.display()
        );
    }
    let work = tempfile::tempdir().map_err(|e| format!("error: cannot make a temporary directory: {e}"))?;
    let opts = BaselineOptions {
        seed: args.seed,
        warmup: args.warmup,
        samples: args.samples,
        threads: args.threads,
    };
    let b = bl::run(&g, &engine, opts, work.path()).map_err(|e| format!("error: {e}"))?;
    let json = serde_json::to_string_pretty(&b).expect("the result serialises");
    if let Some(path) = &args.out {
        files::write(path, json.as_bytes())?;
    }
    if args.json {
        println!("{json}");
    } else {
        print!("{}", summary(&b));
    }
    Ok(if b.outputs_match { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

/// The engine and its options from the arguments; TVM-only options are refused elsewhere.
fn engine(args: &Args) -> Result<bl::Engine, String> {
    if args.engine != Engine::Tvm {
        for (given, flag) in [(args.target.is_some(), "--target"), (args.tune.is_some(), "--tune")] {
            if given {
                return Err(format!("`{flag}` applies to `--engine tvm` only"));
            }
        }
    }
    Ok(match args.engine {
        Engine::Onnxruntime => bl::Engine::Onnxruntime,
        Engine::Mnn => bl::Engine::Mnn,
        Engine::Tvm => {
            let profile = TargetProfile::load(args.target.as_deref().unwrap_or("host"))?;
            let tune = match args.tune {
                None => None,
                Some(trials) => Some(TuneOptions {
                    trials,
                    root: match &args.tune_dir {
                        Some(d) => d.clone(),
                        None => bl::default_tune_root()?,
                    },
                }),
            };
            bl::Engine::Tvm(TvmOptions::for_profile(&profile, tune)?)
        }
    })
}

/// The text report: the timing line, the tuning line (TVM), the comparison line.
fn summary(b: &Baseline) -> String {
    let s = &b.timing.stats;
    let mut out = format!(
        "{} {} on `{}` (threads: {}): median {:.3} ms, min {:.3} ms, p10-p90 {:.3}-{:.3} ms, cv {:.1}%, {} samples after {} warm-up\n",
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
    if b.engine == "tvm" {
        out += &format!("  target {}\n", b.providers.join(", "));
        out += &match &b.tuning {
            None => "  untuned (TVM's default CPU pipeline, no schedules)\n".to_string(),
            Some(t) => format!(
                "  tuned with MetaSchedule, {} trial{} ({} `{}`, {:.1} s)\n",
                t.trials,
                if t.trials == 1 { "" } else { "s" },
                if t.reused { "records reused from" } else { "records written to" },
                t.dir.display(),
                t.seconds
            ),
        };
    }
    let tol = format!(
        "atol {:e}, rtol {:e} ({}); largest difference {:.2e}",
        b.tolerance.atol, b.tolerance.rtol, b.tolerance.note, b.max_abs_error
    );
    if b.outputs_match {
        out += &format!("  outputs match the reference interpreter (seed {}) within {tol}\n", b.seed);
    } else {
        out += &format!(
            "  outputs DIFFER from the reference interpreter (seed {}) at {tol}: {}\n",
            b.seed,
            b.mismatches.join("; ")
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;
    use ekb_wire::protocol::{Stats, StopReason, Timing};

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: Args,
    }

    fn parse(argv: &[&str]) -> Result<Args, String> {
        Cli::try_parse_from([&["baseline", "g.ekir"], argv].concat())
            .map(|c| c.args)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn tvm_options_and_their_misuse() {
        let e = engine(&parse(&["--engine", "tvm", "--tune", "4", "--tune-dir", "/r"]).unwrap()).unwrap();
        let bl::Engine::Tvm(t) = e else { panic!("not TVM: {e:?}") };
        assert_eq!(t.tune, Some(TuneOptions { trials: 4, root: "/r".into() }));
        assert_eq!(t.mcpu, TargetProfile::load("host").unwrap().cpu.cpu);
        let untuned = engine(&parse(&["--engine", "tvm"]).unwrap()).unwrap();
        assert!(matches!(untuned, bl::Engine::Tvm(TvmOptions { tune: None, .. })));
        for (argv, want) in [
            (&["--engine", "mnn", "--tune", "3"][..], "`--tune` applies to `--engine tvm` only"),
            (&["--target", "host"][..], "`--target` applies to `--engine tvm` only"),
            (&["--engine", "tvm", "--target", "nosuch"][..], "unknown target `nosuch`"),
            (&["--engine", "tvm", "--tune", "0"][..], "`--tune` needs at least 1 trial"),
        ] {
            let e = engine(&parse(argv).unwrap()).unwrap_err();
            assert!(e.contains(want), "{argv:?}: {e}");
        }
        let e = parse(&["--engine", "tvm", "--tune-dir", "/r"]).err().unwrap();
        assert!(e.contains("--tune <TRIALS>"), "{e}");
    }

    #[test]
    fn the_summary_states_tuning_and_tolerance() {
        let stats = Stats {
            median_ns: 1.5e6,
            min_ns: 1e6,
            mean_ns: 1.6e6,
            p10_ns: 1.1e6,
            p90_ns: 2e6,
            cv: 0.25,
            rse: 0.01,
        };
        let mut b = Baseline {
            engine: "tvm".into(),
            engine_version: "0.27.0.post1".into(),
            graph: "g".into(),
            seed: 2,
            threads: 1,
            providers: vec!["{\"kind\":\"llvm\"}".into()],
            outputs_match: true,
            mismatches: vec![],
            tolerance: bl::ToleranceUsed { atol: 1e-3, rtol: 1e-3, note: "why".into() },
            max_abs_error: 2.5e-6,
            tuning: Some(bl::Tuning { trials: 1, dir: "/r/t/g".into(), reused: true, seconds: 0.4 }),
            timing: Timing {
                samples_ns: vec![1_500_000; 3],
                reps: 1,
                warmup: 2,
                cold_cache: false,
                clock: "c".into(),
                stop: StopReason::MaxSamples,
                stats,
            },
        };
        assert_eq!(
            summary(&b),
            "tvm 0.27.0.post1 on `g` (threads: 1): median 1.500 ms, min 1.000 ms, p10-p90 1.100-2.000 ms, cv 25.0%, 3 samples after 2 warm-up\n  \
             target {\"kind\":\"llvm\"}\n  \
             tuned with MetaSchedule, 1 trial (records reused from `/r/t/g`, 0.4 s)\n  \
             outputs match the reference interpreter (seed 2) within atol 1e-3, rtol 1e-3 (why); largest difference 2.50e-6\n"
        );
        b.outputs_match = false;
        b.mismatches = vec!["output `y`: 1 of 4 elements differ".into()];
        assert!(summary(&b).ends_with(
            "outputs DIFFER from the reference interpreter (seed 2) at atol 1e-3, rtol 1e-3 (why); largest difference 2.50e-6: output `y`: 1 of 4 elements differ\n"
        ));
    }
}
