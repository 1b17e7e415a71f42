//! `ekb-leka`: LEKA, the layered edge kernel agent: one agent per IR level (L0 graph, L1 loop
//! program, L2 kernel source) and a profiling agent, linked through a shared candidate tree.
//!
//! - [`tree`]: the candidate tree, a SQLite store of every attempt and its measurements, and the
//!   queries the loop and `ekb tree` ask of it.
//! - [`layers`]: a node's program as one layer per level, and the candidate they make.
//! - [`profile`]: the profiling agent: per-kernel report, findings routed to levels.
//! - [`agents`]: the level agents (offline policies and a language model) and their contracts.
//! - [`evaluator`]: the evaluation protocol on a batch of candidates.
//! - [`optimise`]: the loop: budgets, routing, rollback, resume.
//! - [`flat`]: the flat arm: one agent rewriting the whole program, for the comparison.

pub mod agents;
pub mod evaluator;
pub mod flat;
pub mod layers;
pub mod optimise;
pub mod profile;
pub mod tree;
