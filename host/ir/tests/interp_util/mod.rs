//! Helpers shared by the interpreter tests: load a graph from text, feed its inputs by name
//! (typed from the graph's own declarations) and compare outputs with hand-computed values.

// Each test binary uses only some of these helpers.
#![allow(dead_code)]

use ekb_ir::l0::{check, interp, Graph};
use ekb_ir::tensor::Tensor;
use ekb_ir::{Diagnostic, SourceFile};
use std::collections::HashMap;

/// Loads and checks a graph; a diagnostic fails the test with its rendering.
pub fn load(text: &str) -> Graph {
    let src = SourceFile::new("t.ekir", text);
    check::load(&src).unwrap_or_else(|ds| {
        let text: Vec<String> = ds.iter().map(|d| d.to_string()).collect();
        panic!("the test graph does not load:\n{}", text.join("\n"))
    })
}

/// The input map for `g`: each named tensor gets the type its declaration gives.
pub fn feed(g: &Graph, inputs: &[(&str, &[f64])]) -> HashMap<String, Tensor> {
    inputs
        .iter()
        .map(|&(name, data)| {
            let decl = g.decl(name).unwrap_or_else(|| panic!("the graph has no input `{name}`"));
            (name.to_string(), Tensor { ty: decl.ty.clone(), data: data.to_vec() })
        })
        .collect()
}

/// Runs the graph of `text`; the diagnostic, if any, carries its line and column.
pub fn try_eval(text: &str, inputs: &[(&str, &[f64])]) -> Result<Vec<Tensor>, Diagnostic> {
    let g = load(text);
    interp::run(&g, &feed(&g, inputs)).map_err(|d| SourceFile::new("t.ekir", text).locate(d))
}

/// The only output of a one-output graph.
pub fn eval1(text: &str, inputs: &[(&str, &[f64])]) -> Tensor {
    let mut outs = try_eval(text, inputs).unwrap_or_else(|d| panic!("interpreter error:\n{d}"));
    assert_eq!(outs.len(), 1, "expected one output");
    outs.pop().unwrap()
}

/// `expr` (which names its input `x`) applied to a 1-D tensor of `dtype`; the output has the
/// same type.
pub fn elementwise(expr: &str, dtype: &str, xs: &[f64]) -> Tensor {
    let n = xs.len();
    let text = format!("graph g(x: {dtype}[{n}]) -> (y: {dtype}[{n}]) {{\n  %0 = {expr}\n  return %0\n}}\n");
    eval1(&text, &[("x", xs)])
}

/// Equal shape, and every element equal to the expected one within 1e-12 relative (NaN matches
/// NaN, infinities match exactly).
pub fn assert_close(got: &Tensor, shape: &[usize], want: &[f64]) {
    assert_eq!(got.ty.shape, shape, "shape");
    assert_eq!(got.data.len(), want.len(), "element count: got {:?}", got.data);
    for (i, (&g, &w)) in got.data.iter().zip(want).enumerate() {
        let ok = if w.is_nan() {
            g.is_nan()
        } else if w.is_infinite() {
            g == w
        } else {
            (g - w).abs() <= 1e-12 * (1.0 + w.abs())
        };
        assert!(ok, "element {i}: got {g}, expected {w}\n got: {:?}\nwant: {want:?}", got.data);
    }
}

/// Exact equality, for integer results and pure data movement.
pub fn assert_exact(got: &Tensor, shape: &[usize], want: &[f64]) {
    assert_eq!(got.ty.shape, shape, "shape");
    assert_eq!(got.data, want);
}

/// `0, 1, ..., n-1` as f64.
pub fn iota(n: usize) -> Vec<f64> {
    (0..n).map(|i| i as f64).collect()
}
