//! L1, the loop level: kernels of explicit loop nests over buffers, and the plan that runs them.
//!
//! `ast` is the tree, `build` a typed builder for generated code, `visit` the walks (a visitor
//! and a mutator) and the queries built on them, `analysis` the facts passes rely on (index
//! intervals, the regions a loop reads and writes, dependences between iterations, uniformity
//! across GPU threads). `parse` reads the text form, `print` writes the canonical text, `verify` checks types,
//! scopes, bounds and allocation legality, `memory` computes the plan's peak memory, `arena`
//! places the temporaries in one arena by their lifetimes (the memory plan), and
//! `interp` runs a module with bounds-checked accesses (f32 `min`/`max` as `minmax` defines
//! them); `nesting` measures how deeply a kernel nests and holds the limit the parser and the
//! verifier enforce; `gpu` gives a GPU kernel's launch shape
//! and checks it against GPU limits.

pub mod analysis;
pub mod arena;
pub mod ast;
pub mod build;
pub mod gpu;
pub mod interp;
pub mod memory;
pub mod minmax;
pub mod nesting;
pub mod parse;
pub mod print;
pub mod verify;
pub mod visit;

pub use ast::*;
