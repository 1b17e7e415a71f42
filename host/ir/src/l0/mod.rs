//! L0, the graph level: operators on whole tensors.
//!
//! `parse` reads the text form, `check` infers every node's type and verifies the graph,
//! `print` writes the canonical text, `fusion` states the rules of fusion groups, `interp` evaluates in f64 (the correctness oracle), and
//! `inputs` generates a graph's inputs and parameters from a seed.

pub mod ast;
pub mod check;
pub mod fusion;
pub mod inputs;
pub mod interp;
pub mod ops;
pub mod parse;
pub mod print;
#[cfg(test)]
mod testing;

pub use ast::*;
