//! What a person must review before citing a run: counted speedups above
//! [`FLAG_SPEEDUP`](super::FLAG_SPEEDUP), timings that never became stable, and instances whose
//! baseline could not be run or timed.
//!
//! What must stay true: every evaluated candidate (the first `samples` of each planned instance)
//! that qualifies is listed, in plan order and then by sample; nothing is listed twice in one
//! list.

use super::outcome::{counted, Slots};
use super::FLAG_SPEEDUP;
use crate::results::FailureClass;
use serde::Serialize;

/// Everything flagged in a run.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct Flags {
    /// Counted speedups above [`FLAG_SPEEDUP`](super::FLAG_SPEEDUP).
    pub high_speedups: Vec<SpeedupFlag>,
    /// Candidates classified `unstable_timing`, or whose timing is marked not stable.
    pub unstable: Vec<UnstableFlag>,
    /// Candidates whose baseline failed.
    pub baseline_failures: Vec<BaselineFlag>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SpeedupFlag {
    pub task: String,
    pub backend: String,
    pub sample: u32,
    pub speedup: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UnstableFlag {
    pub task: String,
    pub backend: String,
    pub sample: u32,
    /// The recorded median ratio, if the pair was timed at all.
    pub speedup: Option<f64>,
    pub baseline_cv: Option<f64>,
    pub candidate_cv: Option<f64>,
    /// Whether the speedup counts anyway (an unclassified unstable timing; also a warning).
    pub counted: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BaselineFlag {
    pub task: String,
    pub backend: String,
    pub sample: u32,
    pub reason: String,
}

/// The flags of the evaluated candidates.
pub(crate) fn flags(slots: &[Slots]) -> Flags {
    let mut f = Flags::default();
    for s in slots {
        let (task, backend) = (&s.instance.task, &s.instance.backend);
        for (sample, r) in s.samples.iter().enumerate() {
            let Some(r) = r else { continue };
            let sample = sample as u32;
            if let Some(speedup) = counted(r).filter(|v| *v > FLAG_SPEEDUP) {
                f.high_speedups.push(SpeedupFlag {
                    task: task.clone(),
                    backend: backend.clone(),
                    sample,
                    speedup,
                });
            }
            let class_unstable = r.failure.as_ref().is_some_and(|x| x.class == FailureClass::UnstableTiming);
            if class_unstable || r.timing.as_ref().is_some_and(|t| !t.stable) {
                f.unstable.push(UnstableFlag {
                    task: task.clone(),
                    backend: backend.clone(),
                    sample,
                    speedup: r.timing.as_ref().map(|t| t.speedup),
                    baseline_cv: r.timing.as_ref().map(|t| t.baseline.cv),
                    candidate_cv: r.timing.as_ref().map(|t| t.candidate.cv),
                    counted: counted(r).is_some(),
                });
            }
            if let Some(reason) = &r.baseline_failure {
                f.baseline_failures.push(BaselineFlag {
                    task: task.clone(),
                    backend: backend.clone(),
                    sample,
                    reason: reason.clone(),
                });
            }
        }
    }
    f
}
