//! The shared candidate tree: every attempt of every level's agent on one task instance, with
//! its edit, its whole candidate, its evaluation and its cost, so branches can be compared and
//! rolled back (`docs/agent.md`).
//!
//! - [`node`]: the records (runs, nodes, edits, outcomes, costs).
//! - [`schema`]: the SQLite tables and their version.
//! - [`store`]: opening a tree, adding runs and nodes, recording evaluations, reading nodes back.
//! - [`confirm`]: batches with the machine's load, and confirmations of a run's answer.
//! - [`queries`]: the best verified node, paths, children and siblings, per-level gain
//!   attribution, attempts of a level under a node.
//! - [`diff`]: unified diffs between candidates.
//! - [`export`]: a node's candidate as a candidate folder sample.

pub mod confirm;
pub mod diff;
pub mod export;
pub mod node;
pub mod queries;
pub mod schema;
pub mod store;

pub use node::*;
pub use queries::{Attribution, Step};
pub use store::{Tree, TREE_FILE};
