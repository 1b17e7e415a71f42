//! Evaluation results: the stored form of a run ([`record`]), the run directory that holds it
//! ([`store`]) and the marker of the candidate in flight that lets a resumed run classify a
//! candidate the evaluator crashed on ([`inflight`]). Metrics and reports read runs through [`load_run`]; `ekb eval` writes them
//! through [`RunDir`].

pub mod inflight;
pub mod record;
pub mod store;

pub use record::*;
pub use store::{load_run, utc_now, utc_timestamp, Run, RunDir, RESULTS_FILE, RUN_FILE};
