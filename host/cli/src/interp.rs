//! `ekb interp`: run a program in a reference interpreter on seeded inputs, or on the user's own
//! (`--inputs DIR`, see `inputs.rs`).
//!
//! An L0 graph runs in the f64 reference interpreter (the correctness oracle). An L1 module runs
//! in the bounds-checked L1 interpreter on the inputs of the graph named by `--graph`, and its
//! outputs are compared with the graph's reference outputs. `--out DIR` writes every input,
//! parameter and output as a `.npy` file (`input.NAME.npy`, `param.NAME.npy`,
//! `output.NAME.npy`; reference outputs rounded to their dtype).

use crate::files;
use crate::source::{self, Program};
use ekb_ir::tensor::{compare, npy_bytes, Buffer, Tensor, Tolerance};
use ekb_ir::{l0, l1};
use serde::Serialize;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Run a graph (f64 reference) or a loop program (L1 interpreter) on seeded inputs or your own.
#[derive(clap::Args)]
#[command(after_help = "Examples:\n  \
ekb interp conv.ekir --seed 1\n  \
ekb interp conv.ekir --seed 1 --out io/        numpy: np.load('io/output.y.npy')\n  \
ekb interp model.ekir --inputs data/           on data/x.npy for input x (dtype and shape checked)\n  \
ekb interp conv.l1.ekir --graph conv.ekir      check a hand-written loop program")]
pub struct Args {
    /// The `.ekir` file (L0 graph or L1 module).
    file: PathBuf,
    /// Seed of the generated inputs and parameters.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// The graph's inputs from .npy files in this folder (`NAME.npy` or `input.NAME.npy`, the
    /// input's dtype and shape) instead of the seed; parameters still come from the seed.
    #[arg(long)]
    inputs: Option<PathBuf>,
    /// For an L1 module: the L0 graph that defines its inputs, parameters and reference outputs.
    #[arg(long)]
    graph: Option<PathBuf>,
    /// Write inputs, parameters and outputs as .npy files into this directory.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

#[derive(Serialize)]
struct Summary {
    name: String,
    r#type: String,
    min: f64,
    max: f64,
    mean: f64,
    first: Vec<f64>,
    /// For L1 runs: whether the output matches the graph's reference within tolerance.
    #[serde(skip_serializing_if = "Option::is_none")]
    matches_reference: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    mismatch: Option<String>,
}

fn summarise(name: &str, t: &Tensor) -> Summary {
    let (mut min, mut max, mut sum) = (f64::INFINITY, f64::NEG_INFINITY, 0.0);
    for &x in &t.data {
        min = min.min(x);
        max = max.max(x);
        sum += x;
    }
    Summary {
        name: name.to_string(),
        r#type: t.ty.to_string(),
        min,
        max,
        mean: sum / t.data.len().max(1) as f64,
        first: t.data.iter().take(8).copied().collect(),
        matches_reference: None,
        mismatch: None,
    }
}

pub fn run(args: Args) -> Result<ExitCode, String> {
    let (_, program) = source::load(&args.file).map_err(|d| source::render(&d))?;
    let (graph, module) = match program {
        Program::Graph(g) => (g, None),
        Program::Module(m) => {
            let path = args
                .graph
                .as_ref()
                .ok_or("error: an L1 module takes its inputs from an L0 graph: pass `--graph TASK.ekir`")?;
            match source::load(path).map_err(|d| source::render(&d))? {
                (_, Program::Graph(g)) => (g, Some(m)),
                (_, Program::Module(_)) => {
                    return Err(format!(
                        "error: `{}` is an L1 module; `--graph` needs an L0 graph",
                        path.display()
                    ))
                }
            }
        }
    };
    let mut inputs = l0::inputs::generate(&graph, args.seed).map_err(|d| d.to_string())?;
    if let Some(dir) = &args.inputs {
        // Generated inputs come first, in the graph's order, as `read` returns them.
        for (slot, given) in inputs.iter_mut().zip(crate::inputs::read(&graph, dir)?) {
            *slot = given;
        }
    }
    let tensors: HashMap<String, Tensor> = inputs.iter().map(|(n, b)| (n.clone(), b.to_tensor())).collect();
    let reference = l0::interp::run(&graph, &tensors).map_err(|d| d.to_string())?;
    let mut summaries = Vec::new();
    let mut all_match = true;
    let out_buffers: Vec<(String, Buffer)> = match &module {
        None => {
            for (o, t) in graph.outputs.iter().zip(&reference) {
                summaries.push(summarise(&o.name, t));
            }
            graph.outputs.iter().zip(&reference).map(|(o, t)| (o.name.clone(), t.to_buffer())).collect()
        }
        Some(m) => {
            let diags = l1::verify::verify(m, None);
            if diags.iter().any(|d| d.is_error()) {
                return Err(source::render(&diags));
            }
            let bufs: HashMap<String, Buffer> = inputs.iter().cloned().collect();
            let mut outs = l1::interp::run(m, &bufs).map_err(|d| d.to_string())?;
            let mut ordered = Vec::new();
            for (o, r) in graph.outputs.iter().zip(&reference) {
                let b = outs.remove(&o.name).ok_or_else(|| {
                    format!("error: module `{}` has no output `{}` (the graph's output)", m.name, o.name)
                })?;
                let got = b.to_tensor();
                let mut s = summarise(&o.name, &got);
                let verdict = compare(r, &got, Tolerance::default_for(o.ty.dtype));
                s.matches_reference = Some(verdict.is_ok());
                s.mismatch = verdict.err().map(|m| m.to_string());
                all_match &= s.matches_reference == Some(true);
                summaries.push(s);
                ordered.push((o.name.clone(), b));
            }
            ordered
        }
    };
    if let Some(dir) = &args.out {
        write_all(dir, &graph, &inputs, &out_buffers)?;
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&summaries).expect("summaries serialise"));
    } else {
        for s in &summaries {
            let first: Vec<String> = s.first.iter().map(|x| format!("{x:.6}")).collect();
            println!(
                "{} {}  min {:.6}  max {:.6}  mean {:.6}  first [{}]",
                s.name,
                s.r#type,
                s.min,
                s.max,
                s.mean,
                first.join(", ")
            );
            match (&s.matches_reference, &s.mismatch) {
                (Some(true), _) => match &args.inputs {
                    Some(dir) => println!("  matches the graph's reference (inputs from {})", dir.display()),
                    None => println!("  matches the graph's reference (seed {})", args.seed),
                },
                (Some(false), Some(m)) => println!("  DIFFERS from the graph's reference: {m}"),
                _ => {}
            }
        }
    }
    Ok(if all_match { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

fn write_all(
    dir: &Path,
    g: &l0::Graph,
    inputs: &[(String, Buffer)],
    outputs: &[(String, Buffer)],
) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("error: cannot create `{}`: {e}", dir.display()))?;
    let is_param = |n: &str| g.params.iter().any(|p| p.name == n);
    let arrays: Vec<_> = inputs
        .iter()
        .map(|(n, b)| (if is_param(n) { "param" } else { "input" }, n, b))
        .chain(outputs.iter().map(|(n, b)| ("output", n, b)))
        .map(|(kind, name, buf)| (dir.join(format!("{kind}.{name}.npy")), npy_bytes(buf)))
        .collect();
    files::write_set(&arrays.iter().map(|(p, b)| (p.as_path(), b.as_slice())).collect::<Vec<_>>())
}
