//! `ekb lower`: L0 -> L1 (with a schedule) -> LLVM IR -> object file, stopping where asked.
//!
//! The loop program is verified against the target before anything is emitted, so a program
//! that breaks a board's limits is reported here rather than on the board.

use crate::source::{self, Program};
use ekb_ir::l1;
use std::path::PathBuf;
use std::process::ExitCode;

/// Lower an IR file for a target and print (or write) the result.
#[derive(clap::Args)]
#[command(after_help = "Examples:\n  \
ekb lower conv.ekir                             L1 loop program, default schedule, host\n  \
ekb lower conv.ekir --schedule naive            one plain loop nest per operator\n  \
ekb lower conv.ekir --to llvm --target rk3588   LLVM IR for the RK3588's Cortex-A76\n  \
ekb lower conv.ekir --to obj -o conv.o          an ELF object of the kernels")]
pub struct Args {
    /// The `.ekir` file (L0 graph or L1 module).
    file: PathBuf,
    /// Target profile: a name from `ekb targets` or a path to a .toml profile.
    #[arg(long, default_value = "host")]
    target: String,
    /// What to produce.
    #[arg(long, value_enum, default_value_t = Stage::L1)]
    to: Stage,
    /// How to lower an L0 graph to loops (ignored for L1 input).
    #[arg(long, default_value = "default")]
    schedule: String,
    /// Write here instead of standard output (required for `--to obj`).
    #[arg(short, long)]
    output: Option<PathBuf>,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Stage {
    /// The L1 loop program (text).
    L1,
    /// LLVM IR (text).
    Llvm,
    /// An ELF relocatable object compiled by clang-19.
    Obj,
}

pub fn run(args: Args) -> Result<ExitCode, String> {
    let target = source::target(&args.target)?;
    let schedule = ekb_lower::Schedule::from_name(&args.schedule).map_err(|d| d.to_string())?;
    let (src, program) = source::load(&args.file).map_err(|d| source::render(&d))?;
    let module = match program {
        Program::Graph(g) => ekb_lower::lower(&g, schedule, &target).map_err(|d| d.to_string())?,
        Program::Module(m) => m,
    };
    let diags: Vec<_> =
        l1::verify::verify(&module, Some(&target)).into_iter().map(|d| src.locate(d)).collect();
    if !diags.is_empty() {
        eprint!("{}", source::render(&diags));
    }
    if diags.iter().any(|d| d.is_error()) {
        return Ok(ExitCode::FAILURE);
    }
    let text = match args.to {
        Stage::L1 => l1::print::print(&module),
        Stage::Llvm | Stage::Obj => ekb_llvm::emit(&module, &target).map_err(|d| d.to_string())?,
    };
    if args.to == Stage::Obj {
        let out = args.output.ok_or("error: `--to obj` needs `-o FILE`")?;
        let log = ekb_llvm::compile(&text, &target, &out).map_err(|d| d.to_string())?;
        eprintln!("wrote {} ({:.0} ms)", out.display(), log.duration.as_secs_f64() * 1e3);
        return Ok(ExitCode::SUCCESS);
    }
    match args.output {
        Some(p) => {
            std::fs::write(&p, text).map_err(|e| format!("error: cannot write `{}`: {e}", p.display()))?
        }
        None => print!("{text}"),
    }
    Ok(ExitCode::SUCCESS)
}
