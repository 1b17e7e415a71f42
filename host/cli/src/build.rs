//! `ekb build`: an IR file becomes a payload for a target board: compiled by the driver
//! (`ekb_deploy::driver`: lowered (L0), verified against the profile, compiled with clang-19 for
//! its CPU or written as OpenCL C / CUDA C for its GPU, `--backend`), the values of data
//! parameters (`file(...)`, read beside the graph's file and checked) carried along, expected
//! outputs from the reference interpreter.
//!
//! The options shared with `ekb run` and `ekb pack` ([`BuildArgs`]) and the step that builds one
//! file ([`build_file`]) live here too, so the three commands build identically.

use crate::files;
use crate::inputs;
use crate::source::{self, Program};
use ekb_deploy::build::{BuildOptions, Built, TOLERANCE};
use ekb_deploy::driver::{Program as Input, Sources};
use ekb_ir::{SourceFile, TargetProfile};
use ekb_wire::payload::{TimingSettings, Tolerance};
use ekb_wire::protocol::{TimingOverrides, MAX_BUDGET_MS, MAX_SAMPLES, MAX_TARGET_RSE, MAX_WARMUP};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Build a payload: one self-contained file a board runs (code, plan, seeds, parameter data,
/// expected outputs).
#[derive(clap::Args)]
#[command(after_help = "Examples:\n  \
ekb build conv.ekir --target rk3588 -o conv.ekp\n  \
ekb build conv.ekir --target pocl                 OpenCL C for the GPU (PoCL here)\n  \
ekb build conv.ekir --target rk3588 --backend gpu  the Mali GPU instead of the CPU\n  \
ekb build conv.ekir --target aarch64-qemu --schedule naive --seeds 0,1,2,3\n  \
ekb build conv.l1.ekir --graph conv.ekir --target host -o candidate.ekp")]
pub struct Args {
    /// The `.ekir` file (L0 graph or L1 module).
    file: PathBuf,
    #[command(flatten)]
    build: BuildArgs,
    /// The payload file to write (default: the input's name with `.ekp`, in this directory).
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// Print one JSON object instead of the summary line.
    #[arg(long)]
    json: bool,
}

/// How to build payloads (shared by `build`, `run` and `pack`).
#[derive(clap::Args, Clone)]
pub struct BuildArgs {
    /// Target profile: a name from `ekb targets` or a path to a .toml profile [default: host,
    /// or the payload's own target].
    #[arg(long)]
    pub target: Option<String>,
    /// How to lower an L0 graph to loops (ignored for L1 input).
    #[arg(long, default_value = "default")]
    schedule: String,
    /// `cpu`, `gpu` (the target's OpenCL or CUDA GPU) or `auto`: an L1 module by its kernels,
    /// an L0 graph for the GPU of a workstation or server profile (`pocl`, `h200`) and for the
    /// CPU of a board profile.
    #[arg(long, default_value = "auto")]
    backend: String,
    /// For an L1 module: the L0 graph whose task it implements (inputs, reference outputs).
    #[arg(long)]
    graph: Option<PathBuf>,
    /// For an L0 graph: its inputs from .npy files in this folder (`NAME.npy` or
    /// `input.NAME.npy`), carried in the payload like weights; every seed runs on them and the
    /// expected outputs are the reference interpreter's on them.
    #[arg(long)]
    inputs: Option<PathBuf>,
    /// Seeds the board checks, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "0,1,2")]
    seeds: Vec<u64>,
    /// Untimed runs before sampling.
    #[arg(long, value_parser = clap::value_parser!(u32).range(0..=i64::from(MAX_WARMUP)))]
    warmup: Option<u32>,
    /// Fewest timing samples.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=i64::from(MAX_SAMPLES)))]
    min_samples: Option<u32>,
    /// Most timing samples.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=i64::from(MAX_SAMPLES)))]
    max_samples: Option<u32>,
    /// Stop sampling once the relative standard error of the median is below this.
    #[arg(long, value_parser = target_rse)]
    target_rse: Option<f64>,
    /// Stop sampling after this many milliseconds (the limit of one execution does not follow it).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=MAX_BUDGET_MS))]
    budget_ms: Option<u64>,
    /// Flush caches between samples.
    #[arg(long)]
    cold_cache: bool,
}

/// `--target-rse`: a number in `0..=MAX_TARGET_RSE`, the protocol's bound.
fn target_rse(v: &str) -> Result<f64, String> {
    match v.parse::<f64>() {
        Ok(x) if (0.0..=MAX_TARGET_RSE).contains(&x) => Ok(x),
        _ => Err(format!("expected a number in 0..={MAX_TARGET_RSE}")),
    }
}

impl BuildArgs {
    /// The timing options given on the command line, as changes to a payload's settings.
    pub fn timing_overrides(&self) -> TimingOverrides {
        TimingOverrides {
            warmup: self.warmup,
            min_samples: self.min_samples,
            max_samples: self.max_samples,
            target_rse: self.target_rse,
            budget_ms: self.budget_ms,
            cold_cache: self.cold_cache.then_some(true),
        }
    }

    /// The target profile named by `--target`, else `fallback`.
    pub fn profile(&self, fallback: &str) -> Result<TargetProfile, String> {
        source::target(self.target.as_deref().unwrap_or(fallback))
    }

    fn options(&self) -> Result<BuildOptions, String> {
        let schedule = ekb_lower::Schedule::from_name(&self.schedule).map_err(|d| d.to_string())?;
        let timing = self.timing_overrides().apply(&TimingSettings::DEFAULT);
        Ok(BuildOptions { schedule, seeds: self.seeds.clone(), timing, ..BuildOptions::default() })
    }
}

/// Whether a file is a payload (by its magic bytes) rather than IR text.
pub fn is_payload(path: &Path) -> bool {
    let mut magic = [0u8; 4];
    std::fs::File::open(path).and_then(|mut f| std::io::Read::read_exact(&mut f, &mut magic)).is_ok()
        && magic == ekb_wire::payload::MAGIC
}

/// Builds one IR file for `target`; warnings go to stderr, errors come back rendered.
pub fn build_file(path: &Path, args: &BuildArgs, target: &TargetProfile) -> Result<Built, String> {
    let mut options = args.options()?;
    let (src, program) = source::load(path).map_err(|d| source::render(&d))?;
    let graph_file: Option<(SourceFile, ekb_ir::l0::Graph)>;
    let fixed: ekb_ir::l0::Graph;
    let (input, sources) = match &program {
        Program::Graph(g) => match &args.inputs {
            Some(dir) => {
                fixed = inputs::as_data_params(g, inputs::read(g, dir)?);
                (Input::Graph(&fixed), Sources { graph: Some(&src), module: None })
            }
            None => (Input::Graph(g), Sources { graph: Some(&src), module: None }),
        },
        Program::Module(_) if args.inputs.is_some() => {
            return Err(format!(
                "error: `--inputs` needs an L0 graph; `{}` is an L1 module, whose payload inputs are seeded\n  = hint: `ekb interp {} --graph TASK.ekir --inputs DIR` runs the module on them in the L1 interpreter",
                path.display(),
                path.display()
            ))
        }
        Program::Module(m) => {
            let gpath = args.graph.as_ref().ok_or_else(|| {
                format!(
                    "error: `{}` is an L1 module; it takes its inputs and reference from an L0 graph: \
                     pass `--graph TASK.ekir`",
                    path.display()
                )
            })?;
            graph_file = match source::load(gpath).map_err(|d| source::render(&d))? {
                (gsrc, Program::Graph(g)) => Some((gsrc, g)),
                (_, Program::Module(_)) => {
                    return Err(format!(
                        "error: `{}` is an L1 module; `--graph` needs an L0 graph",
                        gpath.display()
                    ))
                }
            };
            let (gsrc, g) = graph_file.as_ref().expect("just set");
            (Input::Module { module: m, graph: g }, Sources { graph: Some(gsrc), module: Some(&src) })
        }
    };
    options.tolerance = task_tolerance(sources.graph.expect("an L0 graph is always read"))?;
    let choice = ekb_deploy::BackendChoice::from_name(&args.backend).map_err(|d| source::render(&[d]))?;
    let built =
        ekb_deploy::build_for(input, sources, target, &options, choice).map_err(|d| source::render(&d))?;
    if !built.warnings.is_empty() {
        eprint!("{}", source::render(&built.warnings));
    }
    Ok(built)
}

/// The f32 tolerance a graph file asks for: a task file's `# tolerance:` line (a task's header
/// starts with one of its keys), else the protocol's default. A task header that does not parse
/// is an error, located in the file.
fn task_tolerance(src: &SourceFile) -> Result<Tolerance, String> {
    use ekb_eval::tasks::meta;
    let first = src.text.lines().next().unwrap_or("");
    if !meta::KEYS.iter().any(|k| first.starts_with(&format!("# {k}:"))) {
        return Ok(TOLERANCE);
    }
    Ok(meta::parse_header(src).map_err(|d| source::render(&d))?.payload_tolerance())
}

/// `NAME.ekp` for an input file `NAME.ekir`.
pub fn payload_name(path: &Path) -> String {
    let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or("payload");
    stem.strip_suffix(".l1").unwrap_or(stem).to_string()
}

pub fn run(args: Args) -> Result<ExitCode, String> {
    let target = args.build.profile("host")?;
    let built = build_file(&args.file, &args.build, &target)?;
    let out = args.output.unwrap_or_else(|| PathBuf::from(format!("{}.ekp", payload_name(&args.file))));
    files::write(&out, &built.payload)?;
    if args.json {
        let json = serde_json::json!({ "payload": out.display().to_string(), "summary": built.summary });
        println!("{}", serde_json::to_string_pretty(&json).expect("the summary serialises"));
    } else {
        println!("wrote {}: {}", out.display(), built.summary);
    }
    Ok(ExitCode::SUCCESS)
}
