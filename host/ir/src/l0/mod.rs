//! L0, the graph level: operators on whole tensors.

pub mod ast;

pub use ast::*;
