//! L1, the loop level: kernels of explicit loop nests over buffers, and the plan that runs them.

pub mod ast;

pub use ast::*;
