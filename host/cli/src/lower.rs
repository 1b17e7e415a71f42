//! `ekb lower`: an IR file through the compile driver (`ekb_deploy::driver`), stopping where
//! asked: the L1 loop program, the adapter's LLVM IR or GPU source, the object file, or an
//! editable L2 folder (`ekb_deploy::l2`: the module and one source file per kernel); with
//! `--dump-stages`, every stage's output on the way. `--passes` chooses the L0 graph passes run
//! before the lowering (`ekb_passes`), `--dump-passes` shows the graph after each.
//!
//! The loop program is verified against the target before anything is emitted, so a program
//! that breaks a board's limits is reported here rather than on the board; what the command
//! prints is what `ekb build` would put in a payload.

use crate::files;
use crate::source::{self, Program};
use ekb_deploy::driver::{self, BackendChoice, CompileOptions, Dump, Sources, Stage, TraceInput};
use ekb_ir::{l1, Diagnostic};
use ekb_lower::Knobs;
use ekb_wire::payload::Backend;
use std::path::PathBuf;
use std::process::ExitCode;

/// Lower an IR file for a target and print (or write) the result.
#[derive(clap::Args)]
#[command(after_help = "Examples:\n  \
ekb lower conv.ekir                             L1 loop program, default schedule, host\n  \
ekb lower conv.ekir --schedule naive            one plain loop nest per operator\n  \
ekb lower conv.ekir --to llvm --target rk3588   LLVM IR for the RK3588's Cortex-A76\n  \
ekb lower conv.ekir --to obj -o conv.o          an ELF object of the kernels\n  \
ekb lower conv.ekir --to asm --target rk3588    its aarch64 instructions, to read\n  \
ekb lower conv.ekir --to c --target pocl        the GPU lowering as OpenCL C\n  \
ekb lower conv.ekir --to l2 -o conv.l2          an L2 folder: module.ekir + kernels/NAME.ll\n  \
ekb lower conv.ekir --dump-stages               every stage's output on stderr\n  \
ekb lower conv.ekir --passes none               lower the graph as written, without graph passes\n  \
ekb lower conv.ekir --passes cse,dce --dump-passes   two passes, each one's graph on stderr\n  \
ekb lower conv.ekir --trace conv.trace          the naive lowering rewritten by a schedule trace\n  \
ekb lower conv.ekir --to trace > conv.recipe    the default schedule's recipe (its knobs) for it\n  \
ekb lower conv.ekir --knob conv.ow_tile=8       the default schedule with one knob changed\n  \
ekb lower conv.ekir --to obj -o conv.o --dump-stages=dump/   ... as files in dump/")]
pub struct Args {
    /// The `.ekir` file (L0 graph or L1 module).
    file: PathBuf,
    /// Target profile: a name from `ekb targets` or a path to a .toml profile.
    #[arg(long, default_value = "host")]
    target: String,
    /// What to produce.
    #[arg(long, value_enum, default_value_t = To::L1)]
    to: To,
    /// How to lower an L0 graph to loops (ignored for L1 input) [default: naive with
    /// `--trace`, else default].
    #[arg(long)]
    schedule: Option<String>,
    /// A schedule trace (`docs/schedules.md`) to replay on the loop program: the naive
    /// lowering's, for an L0 graph. A refused step is reported with its line and the reason.
    #[arg(long, value_name = "FILE")]
    trace: Option<PathBuf>,
    /// A recipe file (`set KNOB = VALUE` lines, as `--to trace` prints) for the default
    /// schedule's knobs.
    #[arg(long, value_name = "FILE")]
    recipe: Option<PathBuf>,
    /// Set one knob of the default schedule, after `--recipe` (repeatable): `NAME=VALUE`.
    #[arg(long, value_name = "NAME=VALUE")]
    knob: Vec<String>,
    /// `cpu`, `gpu` (the target's OpenCL or CUDA GPU) or `auto` (as `ekb build` picks)
    /// [default: gpu for `--to c`, else cpu].
    #[arg(long)]
    backend: Option<String>,
    /// Write here instead of standard output (required for `--to obj`, and for `--to l2`: the
    /// folder).
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// Show each stage's output as it is made: on stderr, each after a header line
    /// `== STAGE: WHAT ==`, or with a directory (`--dump-stages=DIR`) as one file per stage
    /// (`1-graph-passes.ekir`, `2-lower.l1.ekir`, ..., `7-toolchain.o`).
    #[arg(long, value_name = "DIR")]
    dump_stages: Option<Option<PathBuf>>,
    /// The L0 graph passes run before the lowering: `default` (patchify, pixel_transpose, trim, bn_fold,
    /// fold, cse, dce to a fixed point, then fuse), `none` (the graph as written), or a comma-separated list of pass names
    /// (patchify, pixel_transpose, phase_split, trim, bn_fold, fold, cse, dce, fuse; docs/passes.md).
    #[arg(long, value_name = "LIST", default_value = "default")]
    passes: String,
    /// Print every graph pass run on stderr: `== graph-passes: after `PASS`, round N ==` and
    /// the graph, or `== graph-passes: `PASS`, round N: no change ==`.
    #[arg(long)]
    dump_passes: bool,
}

#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum To {
    /// The L1 loop program (text).
    L1,
    /// The default schedule's recipe for this graph: its knobs, as `set` lines.
    Trace,
    /// LLVM IR (text), for the CPU.
    Llvm,
    /// OpenCL C or CUDA C (text), for the target's GPU.
    C,
    /// An ELF relocatable object compiled by clang-19, for the CPU.
    Obj,
    /// The assembly of that object (clang-19 `-S`, the same options), for reading the
    /// instructions: aarch64 code under qemu is read, not timed.
    Asm,
    /// An L2 folder (docs/l2.md): the L1 module as `module.ekir` and each kernel's source in
    /// the backend's language as `kernels/NAME.ll` (CPU), `.cl` or `.cu` (GPU), to edit.
    L2,
}

impl To {
    /// The driver's last stage for this output.
    fn until(self) -> Stage {
        match self {
            To::L1 | To::Trace | To::L2 => Stage::Verify,
            To::Llvm | To::C => Stage::Adapter,
            To::Obj => Stage::Toolchain,
            To::Asm => Stage::Adapter,
        }
    }
}

pub fn run(args: Args) -> Result<ExitCode, String> {
    let target = source::target(&args.target)?;
    let default = if args.trace.is_some() { "naive" } else { "default" };
    let schedule = ekb_lower::Schedule::from_name(args.schedule.as_deref().unwrap_or(default))
        .map_err(|d| d.to_string())?;
    let trace = match &args.trace {
        Some(path) => {
            let src = ekb_ir::SourceFile::read(path).map_err(|d| source::render(&[d]))?;
            Some(TraceInput::parse(src).map_err(|d| source::render(&[d]))?)
        }
        None => None,
    };
    let backend = match &args.backend {
        Some(name) => BackendChoice::from_name(name).map_err(|d| d.to_string())?,
        None if args.to == To::C => BackendChoice::Gpu,
        None => BackendChoice::Cpu,
    };
    if args.to == To::Obj && args.output.is_none() {
        return Err("error: `--to obj` needs `-o FILE`".into());
    }
    if args.to == To::L2 && args.output.is_none() {
        return Err("error: `--to l2` needs `-o DIR`, the folder to write".into());
    }
    let passes = ekb_passes::Selection::parse(&args.passes)
        .map_err(|d| source::render(&[d.with_note("in `--passes`")]))?;
    let (src, program) = source::load(&args.file).map_err(|d| source::render(&d))?;
    let (input, sources) = match &program {
        Program::Graph(g) => (driver::Program::Graph(g), Sources { graph: Some(&src), module: None }),
        Program::Module(m) => (driver::Program::Unbound(m), Sources { graph: None, module: Some(&src) }),
    };
    let backend = driver::backend_for(input, &target, backend).map_err(|d| d.to_string())?;
    let knobs = knobs(&args, &target)?;
    check_output(args.to, backend).map_err(|d| d.to_string())?;
    let dump = match args.dump_stages {
        None => Dump::None,
        Some(None) => Dump::Stderr,
        Some(Some(dir)) => Dump::Dir(dir),
    };
    let choice = if backend == Backend::CpuLlvm { BackendChoice::Cpu } else { BackendChoice::Gpu };
    if args.to == To::Trace {
        let Program::Graph(g) = &program else {
            return Err("error: `--to trace` prints the recipe of an L0 graph; this is an L1 module".into());
        };
        print!("{}", recipe(g, &target, backend, &knobs));
        return Ok(ExitCode::SUCCESS);
    }
    let options = CompileOptions {
        schedule,
        knobs: Some(knobs),
        trace,
        backend: choice,
        until: args.to.until(),
        dump,
        passes,
        dump_passes: args.dump_passes,
        kernel_sources: Vec::new(),
    };
    let artifact =
        driver::compile(input, sources, &target, &options).map_err(|f| source::render(&f.diagnostics))?;
    if !artifact.warnings.is_empty() {
        eprint!("{}", source::render(&artifact.warnings));
    }
    let text = match args.to {
        To::L1 => l1::print::print(&artifact.module),
        To::Trace => unreachable!("printed above"),
        To::L2 => {
            let dir = args.output.expect("checked above");
            let files = ekb_deploy::l2::write(&dir, &artifact.module, backend, &target)
                .map_err(|d| source::render(&[d]))?;
            eprintln!("wrote {} ({} kernel sources)", dir.display(), files.len() - 1);
            return Ok(ExitCode::SUCCESS);
        }
        To::Llvm | To::C => artifact.source.expect("compiled through the adapter"),
        To::Asm => {
            let ir = artifact.source.expect("compiled through the adapter");
            ekb_llvm::assembly(&ir, &target).map_err(|d| source::render(&[d]))?
        }
        To::Obj => {
            let out = args.output.expect("checked above");
            let code = artifact.code.expect("compiled through the toolchain");
            files::write(&out, &code.bytes)?;
            eprintln!("wrote {} ({:.0} ms)", out.display(), code.log.duration.as_secs_f64() * 1e3);
            return Ok(ExitCode::SUCCESS);
        }
    };
    match args.output {
        Some(p) => files::write(&p, text.as_bytes())?,
        None => print!("{text}"),
    }
    Ok(ExitCode::SUCCESS)
}

/// The knobs of the default schedule: the target's, then `--recipe`, then each `--knob`.
fn knobs(args: &Args, target: &ekb_ir::TargetProfile) -> Result<Knobs, String> {
    let mut knobs = Knobs::for_target(target);
    if let Some(path) = &args.recipe {
        let src = ekb_ir::SourceFile::read(path).map_err(|d| source::render(&[d]))?;
        knobs.parse(&src).map_err(|d| source::render(&[d]))?;
    }
    set_knobs(&mut knobs, &args.knob)?;
    Ok(knobs)
}

/// Applies `--knob NAME=VALUE` arguments in order.
pub(crate) fn set_knobs(knobs: &mut Knobs, list: &[String]) -> Result<(), String> {
    for k in list {
        let (name, value) =
            k.split_once('=').ok_or_else(|| format!("error: `--knob {k}` is not NAME=VALUE"))?;
        let value: usize = value
            .trim()
            .parse()
            .map_err(|_| format!("error: `--knob {k}`: `{value}` is not a non-negative integer"))?;
        knobs.set(name.trim(), value).map_err(|d| source::render(&[d]))?;
    }
    Ok(())
}

/// The recipe text of graph `g` on `target`: a header, and the knobs its default lowering
/// reads. Every operator family is still a template over its knobs, so a recipe has no trace
/// steps yet.
fn recipe(g: &ekb_ir::l0::Graph, target: &ekb_ir::TargetProfile, backend: Backend, knobs: &Knobs) -> String {
    let gpu = backend != Backend::CpuLlvm;
    let families = ekb_lower::families_of(g, gpu);
    let mut out = format!(
        "# recipe: the default schedule of graph `{}` for target `{}` ({})\n\
         # the knobs its operator families read; `ekb lower --recipe FILE` takes this file back\n",
        g.name,
        target.name,
        backend.name()
    );
    out.push_str(&knobs.print(Some(&families)));
    out
}

/// Whether `backend` makes what `--to` asks for: LLVM IR and objects are CPU code, OpenCL C and
/// CUDA C GPU code.
fn check_output(to: To, backend: Backend) -> Result<(), Diagnostic> {
    let gpu = backend != Backend::CpuLlvm;
    match to {
        To::Llvm | To::Obj | To::Asm if gpu => Err(Diagnostic::error(format!(
            "`--to {}` is CPU code, and this program is built for the GPU ({})",
            match to {
                To::Llvm => "llvm",
                To::Obj => "obj",
                _ => "asm",
            },
            backend.name()
        ))
        .with_hint("use `--to c` for the GPU's source, or `--backend cpu`")),
        To::C if !gpu => {
            Err(Diagnostic::error("`--to c` is GPU source, and this program is built for the CPU").with_hint(
                "choose a target with a GPU (`pocl`, `rk3588`, `jetson-orin`, `h200`) and `--backend gpu`",
            ))
        }
        To::L1 | To::Trace | To::Llvm | To::Obj | To::Asm | To::C | To::L2 => Ok(()),
    }
}
