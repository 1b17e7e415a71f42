//! Evaluation results: the stored form of a run ([`record`]) and the run directory that holds it
//! ([`store`]). Metrics and reports read runs through [`load_run`]; `ekb eval` writes them
//! through [`RunDir`].

pub mod record;
pub mod store;

pub use record::*;
pub use store::{load_run, utc_now, utc_timestamp, Run, RunDir, RESULTS_FILE, RUN_FILE};
