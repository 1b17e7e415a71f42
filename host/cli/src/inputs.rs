//! `--inputs DIR`: a graph's inputs from the user's own `.npy` files instead of the seeded
//! generator (`ekb interp`, `ekb run`, `ekb build`).
//!
//! Input `NAME` is read from `DIR/NAME.npy`, or else `DIR/input.NAME.npy` (what
//! `ekb interp --out` writes). Every input needs its file, and a file's dtype and shape must be
//! exactly the input's declared type; an error names the file, what the graph expects and what
//! the file holds. Parameters are untouched (seeded, or their data file's values).

use ekb_ir::l0::ast::{ParamData, TensorDecl, DATA_PARAM_INIT};
use ekb_ir::l0::Graph;
use ekb_ir::tensor::Buffer;
use std::path::{Path, PathBuf};

/// The values of every input of `g`, in declaration order, read and checked.
pub fn read(g: &Graph, dir: &Path) -> Result<Vec<(String, Buffer)>, String> {
    g.inputs.iter().map(|d| Ok((d.name.clone(), read_one(g, d, dir)?))).collect()
}

fn read_one(g: &Graph, d: &TensorDecl, dir: &Path) -> Result<Buffer, String> {
    let names = [format!("{}.npy", d.name), format!("input.{}.npy", d.name)];
    let path: PathBuf = names.iter().map(|n| dir.join(n)).find(|p| p.is_file()).ok_or_else(|| {
        format!(
            "error: no file for input `{}: {}` of graph `{}` in `{}`\n  = expected: `{}` or `{}`, a .npy array of that dtype and shape",
            d.name,
            d.ty,
            g.name,
            dir.display(),
            names[0],
            names[1]
        )
    })?;
    let buf = ekb_onnx::npy::read(&path).map_err(|e| format!("error: {e}"))?;
    if buf.ty != d.ty {
        return Err(format!(
            "error: `{}` holds {}, but input `{}` of graph `{}` is {}\n  = expected: a .npy array of dtype {} and shape {:?}",
            path.display(),
            buf.ty,
            d.name,
            g.name,
            d.ty,
            d.ty.dtype,
            d.ty.shape
        ));
    }
    Ok(buf)
}

/// `g` with its inputs turned into data parameters holding `values` (from [`read`]), so that a
/// payload carries them to the device the way it carries weights, and every seed runs on them.
pub fn as_data_params(g: &Graph, values: Vec<(String, Buffer)>) -> Graph {
    let mut fixed = g.clone();
    let inputs = std::mem::take(&mut fixed.inputs);
    let params = inputs.into_iter().zip(values).map(|(d, (name, buf))| {
        debug_assert_eq!(d.name, name, "values come in the inputs' order");
        TensorDecl {
            init: DATA_PARAM_INIT,
            data: Some(ParamData::with_values(format!("{name}.npy"), 0, buf.data)),
            ..d
        }
    });
    fixed.params = params.chain(fixed.params).collect();
    fixed
}
