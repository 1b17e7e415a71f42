//! Measuring candidates elsewhere (`ekb tune --queue`: a pool of workers, each running the
//! evaluation protocol of `ekb eval` on its device): a batch of the workload's candidates, each
//! sent as its loop program and timed paired with the workload's default schedule on the device
//! that takes it.
//!
//! What must stay true: one answer per program, in order; a time is only ever given for a
//! candidate whose outputs matched the reference (on the protocol's seeds); the ratio to the
//! default is paired on one device, so the tune's scale (that ratio times one fixed time of the
//! default) holds across the devices of a pool.

use crate::db::Outcome;
use crate::Workload;

/// A candidate timed against the default schedule.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Paired {
    /// The candidate's time over the default schedule's (the inverse of the protocol's speedup).
    pub ratio: f64,
    /// The default schedule's median time on that device, milliseconds.
    pub default_ms: f64,
}

/// One candidate's answer: its paired time, or how it failed and why.
pub type Answer = Result<Paired, (Outcome, String)>;

/// Where candidates are measured when not in this process.
pub trait Remote {
    /// The name a record measured there carries as its device (the same for every run on the
    /// same pool, so a resumed tune finds its records).
    fn device(&self) -> String;

    /// Measures `programs` (printed loop programs of `w`), one answer per program in order:
    /// its paired time, or why it has none. `Err` only for what must stop the tune.
    fn measure(&mut self, w: &Workload, programs: &[String]) -> Result<Vec<Answer>, String>;
}
