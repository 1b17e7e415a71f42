//! `ekb import-onnx`: an ONNX model to an L0 graph (`NAME.ekir`) and its weights in a sidecar
//! data file (`NAME.bin` beside it), named by the graph's data parameters with their checksums.
//!
//! All or nothing: if anything in the model is unsupported (operators, attributes, dynamic
//! shapes, malformed data), one error lists every problem and no file is written; the graph and
//! its weights are written together (`files.rs`), so a failure to write one leaves neither, and an
//! earlier pair of the same name stays as it was.

use crate::files;
use ekb_ir::l0::print::print;
use ekb_onnx::{import, ImportOptions};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Import an ONNX model as an L0 graph with its weights.
#[derive(clap::Args)]
#[command(after_help = "Examples:\n  \
ekb import-onnx resnet18.onnx -o resnet18.ekir                 writes resnet18.ekir and resnet18.bin\n  \
ekb import-onnx model.onnx -o m.ekir --input-shape x=1,3,224,224   fix a symbolic batch dimension\n  \
ekb interp resnet18.ekir --seed 0                              run it in the reference interpreter")]
pub struct Args {
    /// The `.onnx` model (opset 13 or newer).
    model: PathBuf,
    /// The graph to write (`NAME.ekir`); the weights go to `NAME.bin` beside it.
    #[arg(short, long)]
    output: PathBuf,
    /// The full static shape of an input whose dimensions are symbolic: `NAME=D0,D1,...`
    /// (repeat for several inputs).
    #[arg(long = "input-shape", value_name = "NAME=D0,D1,...")]
    input_shape: Vec<String>,
    /// The graph's name, which keys its seeded inputs (default: the output file's stem).
    #[arg(long)]
    name: Option<String>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

#[derive(Serialize)]
struct Summary {
    graph: String,
    ekir: String,
    data: Option<String>,
    nodes: usize,
    params: usize,
    param_bytes: usize,
    inputs: Vec<String>,
    outputs: Vec<String>,
}

pub fn run(args: Args) -> Result<ExitCode, String> {
    let bytes = std::fs::read(&args.model)
        .map_err(|e| format!("error: cannot read `{}`: {e}", args.model.display()))?;
    let stem = args.output.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    if stem.is_empty() {
        return Err(format!("error: `{}` has no file name", args.output.display()));
    }
    let opts = ImportOptions {
        name: Some(args.name.clone().unwrap_or_else(|| ekb_onnx::import::ident(&stem))),
        input_shapes: args.input_shape.iter().map(|s| parse_shape(s)).collect::<Result<_, _>>()?,
        data_file: format!("{stem}.bin"),
    };
    let model_name = args.model.display().to_string();
    let im = import(&bytes, &opts).map_err(|d| d.with_file(&model_name).to_string())?;
    let g = &im.graph;
    let data_path = args.output.with_file_name(&opts.data_file);
    let has_data = !g.params.is_empty();
    let text = print(g);
    // The weights first: the graph names them, so a graph is never in place before its data.
    let pair: &[(&Path, &[u8])] = &[(&data_path, &im.data), (&args.output, text.as_bytes())];
    files::write_set(if has_data { pair } else { &pair[1..] })?;
    let summary = Summary {
        graph: g.name.clone(),
        ekir: args.output.display().to_string(),
        data: has_data.then(|| data_path.display().to_string()),
        nodes: g.nodes.len(),
        params: g.params.len(),
        param_bytes: g.params.iter().map(|p| p.ty.size_bytes()).sum(),
        inputs: g.inputs.iter().map(|d| format!("{}: {}", d.name, d.ty)).collect(),
        outputs: g.outputs.iter().map(|o| format!("{}: {}", o.name, o.ty)).collect(),
    };
    if args.json {
        println!("{}", serde_json::to_string_pretty(&summary).expect("summary serialises"));
    } else {
        println!(
            "imported `{}` as graph `{}`: {} nodes, {} parameters ({} bytes)",
            model_name, summary.graph, summary.nodes, summary.params, summary.param_bytes
        );
        println!("  inputs:  {}", summary.inputs.join(", "));
        println!("  outputs: {}", summary.outputs.join(", "));
        match &summary.data {
            Some(d) => println!("  wrote {} and {d}", summary.ekir),
            None => println!("  wrote {}", summary.ekir),
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `NAME=D0,D1,...`.
fn parse_shape(s: &str) -> Result<(String, Vec<usize>), String> {
    let bad = || format!("error: `--input-shape {s}`: expected NAME=D0,D1,... such as `x=1,3,224,224`");
    let (name, dims) = s.split_once('=').ok_or_else(bad)?;
    let dims = dims
        .split(',')
        .map(|d| d.trim().parse::<usize>().map_err(|_| bad()))
        .collect::<Result<Vec<_>, _>>()?;
    if name.is_empty() {
        return Err(bad());
    }
    Ok((name.to_string(), dims))
}
