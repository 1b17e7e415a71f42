//! A task's reference I/O on one seed, written as `.npy` files for people and other tools (the
//! PyTorch twin check reads them).
//!
//! Files in the output folder: `input.NAME.npy` and `param.NAME.npy` (the seeded data exactly as
//! a board holds it, f32 or i32), `output.NAME.npy` (the f64 reference rounded to the output's
//! dtype), and `io.json`, which lists them in graph order with dtypes, shapes and each output's
//! tolerance, and names the task's `.ekir` and twin `.py`.

use super::Task;
use ekb_ir::l0;
use ekb_ir::tensor::{write_npy, Buffer, Tensor};
use serde::Serialize;
use std::path::Path;

/// One file of the export.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct IoTensor {
    pub name: String,
    pub file: String,
    pub dtype: String,
    pub shape: Vec<usize>,
}

/// An output file with its comparison tolerance.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct IoOutput {
    #[serde(flatten)]
    pub tensor: IoTensor,
    pub atol: f64,
    pub rtol: f64,
}

/// `io.json`: what was exported, in graph order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct IoManifest {
    pub task: String,
    pub level: u8,
    pub seed: u64,
    /// The task's `.ekir` and PyTorch twin, as paths on the exporting machine.
    pub graph_file: String,
    pub twin_file: String,
    pub inputs: Vec<IoTensor>,
    pub params: Vec<IoTensor>,
    pub outputs: Vec<IoOutput>,
}

fn entry(kind: &str, name: &str, buf: &Buffer) -> IoTensor {
    IoTensor {
        name: name.to_string(),
        file: format!("{kind}.{name}.npy"),
        dtype: buf.ty.dtype.name().to_string(),
        shape: buf.ty.shape.clone(),
    }
}

/// Generates the seeded data, runs the reference, and writes every file into `out` (created
/// if needed). Errors are sentences naming the task or the file.
pub fn export_io(task: &Task, seed: u64, out: &Path) -> Result<IoManifest, String> {
    let outputs = ekb_deploy::build::reference_outputs(&task.graph, seed)
        .map_err(|d| task.source.locate(d).to_string())?;
    write_io(task, seed, &outputs, out)
}

/// [`export_io`] with the reference outputs on `seed` already computed (by
/// `ekb_deploy::build::reference_outputs`, which a payload build shares); the seeded data is
/// generated again (cheap next to the reference).
pub fn write_io(task: &Task, seed: u64, outputs: &[Tensor], out: &Path) -> Result<IoManifest, String> {
    let g = &task.graph;
    let data = l0::inputs::generate(g, seed).map_err(|d| task.source.locate(d).to_string())?;
    std::fs::create_dir_all(out).map_err(|e| format!("error: cannot create `{}`: {e}", out.display()))?;
    let mut m = IoManifest {
        task: task.name.clone(),
        level: task.meta.level,
        seed,
        graph_file: task.path.display().to_string(),
        twin_file: task.twin.display().to_string(),
        inputs: Vec::new(),
        params: Vec::new(),
        outputs: Vec::new(),
    };
    let write = |e: &IoTensor, buf: &Buffer| {
        let path = out.join(&e.file);
        write_npy(&path, buf).map_err(|err| format!("error: cannot write `{}`: {err}", path.display()))
    };
    for (name, buf) in &data {
        let is_param = g.params.iter().any(|p| &p.name == name);
        let e = entry(if is_param { "param" } else { "input" }, name, buf);
        write(&e, buf)?;
        if is_param {
            m.params.push(e);
        } else {
            m.inputs.push(e);
        }
    }
    for (o, t) in g.outputs.iter().zip(outputs) {
        let buf = t.to_buffer();
        let e = entry("output", &o.name, &buf);
        write(&e, &buf)?;
        let tol = task.tolerance(o.ty.dtype);
        m.outputs.push(IoOutput { tensor: e, atol: tol.atol, rtol: tol.rtol });
    }
    let json = serde_json::to_string_pretty(&m).expect("the manifest serialises");
    let path = out.join("io.json");
    std::fs::write(&path, json + "\n")
        .map_err(|e| format!("error: cannot write `{}`: {e}", path.display()))?;
    Ok(m)
}
