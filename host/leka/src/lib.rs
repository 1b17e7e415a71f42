//! `ekb-leka`: LEKA, the layered edge kernel agent: one agent per IR level (L0 graph, L1 loop
//! program, L2 kernel source) and a profiling agent, linked through a shared candidate tree.
//!
//! - [`tree`]: the candidate tree, a SQLite store of every attempt and its measurements, and the
//!   queries the loop and `ekb tree` ask of it.

pub mod tree;
