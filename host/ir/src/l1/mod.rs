//! L1, the loop level: kernels of explicit loop nests over buffers, and the plan that runs them.
//!
//! `parse` reads the text form, `print` writes the canonical text, `verify` checks types,
//! scopes, bounds and allocation legality, `memory` computes the plan's peak memory, and
//! `interp` runs a module with bounds-checked accesses; `gpu` gives a GPU kernel's launch shape
//! and checks it against GPU limits.

pub mod ast;
pub mod gpu;
pub mod interp;
pub mod memory;
pub mod parse;
pub mod print;
pub mod verify;

pub use ast::*;
