//! Helpers of the unit tests of this level: load a graph from text (or get its first located
//! diagnostic), and run it in the interpreter on inputs given by name.

use crate::diag::{Diagnostic, SourceFile};
use crate::l0::{check, interp};
use crate::tensor::Tensor;
use std::collections::HashMap;

/// The first diagnostic of a graph that must not load, located in `t.ekir`.
pub fn load_error(text: &str) -> Diagnostic {
    match check::load(&SourceFile::new("t.ekir", text)) {
        Ok(g) => panic!("expected an error, but the graph loaded: {g:?}"),
        Err(ds) => ds.into_iter().next().expect("at least one diagnostic"),
    }
}

/// Asserts the message, line and column of the first diagnostic; returns it.
#[track_caller]
pub fn expect_error(text: &str, message: &str, line: usize, column: usize) -> Diagnostic {
    let d = load_error(text);
    assert_eq!(d.message, message, "\n{d}");
    let loc = d.location.as_ref().expect("located");
    assert_eq!((loc.line, loc.column), (line, column), "\n{d}");
    d
}

/// Runs the graph of `text` on the inputs (each typed by its declaration); errors are located.
pub fn try_eval(text: &str, inputs: &[(&str, &[f64])]) -> Result<Vec<Tensor>, Diagnostic> {
    let src = SourceFile::new("t.ekir", text);
    let g = check::load(&src).unwrap_or_else(|ds| panic!("the test graph does not load:\n{}", ds[0]));
    let feed: HashMap<String, Tensor> = inputs
        .iter()
        .map(|&(name, data)| {
            let ty = g.decl(name).unwrap_or_else(|| panic!("no input `{name}`")).ty.clone();
            (name.to_string(), Tensor { ty, data: data.to_vec() })
        })
        .collect();
    interp::run(&g, &feed).map_err(|d| src.locate(d))
}

/// The outputs of a graph that must run.
pub fn eval(text: &str, inputs: &[(&str, &[f64])]) -> Vec<Tensor> {
    try_eval(text, inputs).unwrap_or_else(|d| panic!("interpreter error:\n{d}"))
}

/// Shape and values within 1e-12 relative.
#[track_caller]
pub fn assert_close(got: &Tensor, shape: &[usize], want: &[f64]) {
    assert_eq!(got.ty.shape, shape, "shape");
    assert_eq!(got.data.len(), want.len(), "element count: {:?}", got.data);
    for (i, (&g, &w)) in got.data.iter().zip(want).enumerate() {
        assert!((g - w).abs() <= 1e-12 * (1.0 + w.abs()), "element {i}: got {g}, want {w}\n{:?}", got.data);
    }
}

/// Shape and exact values.
#[track_caller]
pub fn assert_exact(got: &Tensor, shape: &[usize], want: &[f64]) {
    assert_eq!(got.ty.shape, shape, "shape");
    assert_eq!(got.data, want);
}
