//! `ekb`, the one command users type.
//!
//! Subcommands map one-to-one to files in this folder (`check.rs`, `lower.rs`, ...). Every
//! subcommand that a program might read has `--json`. Errors on bad input are rendered
//! diagnostics (file, line, column, the offending text, what was expected, a hint) on stderr and
//! exit status 1; a usage error exits 2 (clap's convention). When stdout's reader goes away
//! (`ekb tasks list | head`) the process ends quietly with status 141, what a shell reports for a
//! program ended by a closed pipe: every print to stdout, in any subcommand, is covered here once.

mod agent;
mod baseline;
mod bench;
mod bench_cuda;
mod bench_engines;
mod build;
mod check;
mod collect;
mod deploy;
mod eval;
mod export_onnx;
mod files;
mod generate;
mod import_onnx;
mod inputs;
mod interp;
mod lava_run;
mod lower;
mod pack;
mod report;
mod run;
mod runtime;
mod source;
mod submit;
mod targets;
mod tasks;
mod tasks_memory;
mod tree;
mod tune;
mod tune_protocol;
mod worker;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "ekb",
    version,
    about = "EdgeKernelBench: lower one tensor IR to edge-board kernels and measure them",
    long_about = "EdgeKernelBench lowers one unified tensor IR (L0 graphs, L1 loop programs) into \
kernels for edge boards and evaluates them.\n\n\
Files: an L0 graph starts with `graph NAME(...)`, an L1 loop program with `module NAME {`. \
The IR reference is docs/ir.md (L0) and docs/ir-l1.md (L1).",
    after_help = "Examples:\n  \
ekb check model.ekir                      verify a graph (types, shapes, attributes)\n  \
ekb check model.ekir --target rk3588      also check memory legality on that board\n  \
ekb lower model.ekir --to l1              the default CPU loop program\n  \
ekb lower model.ekir --to llvm --target aarch64-qemu\n  \
ekb interp model.ekir --seed 1 --out io/  reference outputs as .npy files\n  \
ekb targets                               the target profiles\n  \
ekb bench                                 Level-1 CPU tasks: default schedule vs naive, here\n  \
ekb eval --candidates cands/ --out runs/r1   evaluate generated candidates\n  \
ekb tune model.ekir --trials 64            search the schedule's knobs, measured here\n  \
ekb agent matmul --nodes 16 --out runs/a1  optimise with the layered agent, every attempt kept\n  \
ekb tree runs/agent-1 show                an agent run's candidate tree, the answer marked\n  \
ekb build model.ekir --target rk3588 -o model.ekp   a self-contained payload for a board\n  \
ekb run model.ekir --target aarch64-qemu  build and run on the device runtime, print the report\n  \
ekb tasks list --level 1                  the benchmark's tasks\n  \
ekb import-onnx model.onnx -o model.ekir  an ONNX model as an L0 graph"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    Check(check::Args),
    Lower(lower::Args),
    Interp(interp::Args),
    Targets(targets::Args),
    Tasks(tasks::Args),
    Bench(bench::Args),
    Build(build::Args),
    Run(run::Args),
    Pack(pack::Args),
    Collect(collect::Args),
    Deploy(deploy::Args),
    ImportOnnx(import_onnx::Args),
    ExportOnnx(export_onnx::Args),
    Baseline(baseline::Args),
    Generate(generate::Args),
    Report(report::Args),
    Eval(eval::Args),
    Tune(tune::Args),
    Tree(tree::Args),
    Worker(worker::Args),
    Agent(agent::Args),
}

/// A shell's status for a program ended by SIGPIPE (128 + 13).
const CLOSED_PIPE_STATUS: i32 = 141;

/// Makes a print to a closed stdout end the process quietly. Rust ignores SIGPIPE, so `println!`
/// panics on EPIPE ("failed printing to stdout: Broken pipe"); this panic hook turns exactly that
/// panic into a quiet exit and leaves every other one to the default report. SIGPIPE itself stays
/// ignored: `ekb` writes to its children's stdin (the runtime, helpers) and must see one's death as
/// an error, not die of it.
fn end_quietly_when_stdout_closes() {
    let report = std::panic::take_hook();
    let closed = format!("failed printing to stdout: {}", std::io::Error::from_raw_os_error(libc::EPIPE));
    std::panic::set_hook(Box::new(move |info| {
        let message = info.payload().downcast_ref::<String>().map(String::as_str);
        if message == Some(closed.as_str()) {
            std::process::exit(CLOSED_PIPE_STATUS);
        }
        report(info)
    }));
}

fn main() -> ExitCode {
    end_quietly_when_stdout_closes();
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Check(a) => check::run(a),
        Command::Lower(a) => lower::run(a),
        Command::Interp(a) => interp::run(a),
        Command::Targets(a) => targets::run(a),
        Command::Tasks(a) => tasks::run(a),
        Command::Bench(a) => bench::run(a),
        Command::Build(a) => build::run(a),
        Command::Run(a) => run::run(a),
        Command::Pack(a) => pack::run(a),
        Command::Collect(a) => collect::run(a),
        Command::Deploy(a) => deploy::run(a),
        Command::ImportOnnx(a) => import_onnx::run(a),
        Command::ExportOnnx(a) => export_onnx::run(a),
        Command::Baseline(a) => baseline::run(a),
        Command::Generate(a) => generate::run(a),
        Command::Report(a) => report::run(a),
        Command::Eval(a) => eval::run(a),
        Command::Tune(a) => tune::run(a),
        Command::Tree(a) => tree::run(a),
        Command::Worker(a) => worker::run(a),
        Command::Agent(a) => agent::run(a),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprint!("{e}");
            if !e.ends_with('\n') {
                eprintln!();
            }
            ExitCode::FAILURE
        }
    }
}
