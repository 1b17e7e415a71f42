//! `ekb export-onnx`: an L0 graph to an ONNX model (opset 17), for onnxruntime, TensorRT, MNN and
//! other engines. Seeded parameters are generated with `--seed`; data parameters keep their
//! values. Operators opset 17 lacks are model-local functions of the `ekb` domain.

use crate::files;
use crate::source::{self, Program};
use serde::Serialize;
use std::path::PathBuf;
use std::process::ExitCode;

/// Export an L0 graph as an ONNX model.
#[derive(clap::Args)]
#[command(after_help = "Examples:\n  \
ekb export-onnx conv.ekir -o conv.onnx\n  \
ekb export-onnx conv.ekir -o conv.onnx --seed 2     parameters as seed 2 generates them")]
pub struct Args {
    /// The L0 graph (`.ekir`).
    file: PathBuf,
    /// The model to write (`.onnx`).
    #[arg(short, long)]
    output: PathBuf,
    /// Seed of the generated parameters (data parameters are written as they are).
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

#[derive(Serialize)]
struct Summary {
    graph: String,
    onnx: String,
    opset: i64,
    nodes: usize,
    initializers: usize,
    ekb_functions: Vec<String>,
    bytes: usize,
}

pub fn run(args: Args) -> Result<ExitCode, String> {
    let (_, program) = source::load(&args.file).map_err(|d| source::render(&d))?;
    let Program::Graph(g) = program else {
        return Err(format!(
            "error: `{}` is an L1 module; export-onnx takes an L0 graph",
            args.file.display()
        ));
    };
    let model = ekb_onnx::export(&g, args.seed).map_err(|d| d.to_string())?;
    let bytes = ekb_onnx::export::encode(&model);
    files::write(&args.output, &bytes)?;
    let graph = model.graph.as_ref().expect("the exporter writes a graph");
    let summary = Summary {
        graph: g.name.clone(),
        onnx: args.output.display().to_string(),
        opset: ekb_onnx::export::OPSET,
        nodes: graph.node.len(),
        initializers: graph.initializer.len(),
        ekb_functions: model.functions.iter().map(|f| f.name.clone()).collect(),
        bytes: bytes.len(),
    };
    if args.json {
        println!("{}", serde_json::to_string_pretty(&summary).expect("summary serialises"));
    } else {
        println!(
            "exported graph `{}` to {} (opset {}, {} nodes, {} initializers, {} bytes)",
            summary.graph, summary.onnx, summary.opset, summary.nodes, summary.initializers, summary.bytes
        );
        if !summary.ekb_functions.is_empty() {
            println!("  ekb-domain functions: {}", summary.ekb_functions.join(", "));
        }
    }
    Ok(ExitCode::SUCCESS)
}
