//! The tuner: an offline search for the fastest schedule of a graph on a target, measured on the
//! real machine.
//!
//! - [`space`]: the points of a graph's search space (the default schedule's knobs its lowering
//!   reads, with the values worth trying);
//! - [`features`]: what the cost model sees of a lowered point, and the roofline prior;
//! - [`model`]: gradient-boosted regression trees, fitted online to the measured times;
//! - [`search`]: the evolutionary search that proposes each batch;
//! - [`measure`]: candidates loaded into this process, checked, and timed paired with the best;
//! - [`remote`]: candidates measured elsewhere (a pool of workers), paired with the default;
//! - [`db`]: the tuning database (JSON lines, one record per measured candidate);
//! - [`tuner`]: one workload's tune; [`schedule`]: how a budget is shared between workloads.
//!
//! What must stay true: a tuned schedule is only ever a point the default lowering accepts
//! (the knobs are in range, the verifier passed) whose outputs matched the reference, and the
//! default is always among the candidates, so tuning never makes a workload slower than its
//! default as measured.

pub mod db;
pub mod features;
pub mod measure;
pub mod model;
pub mod remote;
pub mod schedule;
pub mod search;
pub mod space;
pub mod tuner;

use ekb_ir::l0::Graph;
use ekb_ir::tensor::Tolerance;
use ekb_ir::SourceFile;

pub use db::{Db, Outcome, Record};
pub use tuner::{Event, Summary, TuneOptions, Tuner};

/// A graph to tune, with the tolerance each of its outputs is checked with.
#[derive(Debug, Clone)]
pub struct Workload {
    pub name: String,
    pub source: SourceFile,
    pub graph: Graph,
    /// One per output of the graph, in order.
    pub tolerances: Vec<Tolerance>,
}

impl Workload {
    /// A workload checked with the default tolerance of each output's dtype.
    pub fn new(name: impl Into<String>, source: SourceFile, graph: Graph) -> Workload {
        let tolerances = graph.outputs.iter().map(|o| Tolerance::default_for(o.ty.dtype)).collect();
        Workload { name: name.into(), source, graph, tolerances }
    }
}
