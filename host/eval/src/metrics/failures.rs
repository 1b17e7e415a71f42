//! The failure taxonomy: how the evaluated candidates (the first `samples` of each planned
//! instance) failed, pooled and by backend, with planned samples that have no result as their
//! own `missing` row.
//!
//! What must stay true: a candidate fails when it carries a failure record or is not correct; it
//! is counted once, under its record's class (`unclassified` when an incorrect candidate has no
//! record, which is also a warning); a share is of all failures, missing samples included, so
//! the shares of one group sum to 1; `passed + failed + missing = planned`.

use super::outcome::Slots;
use super::summary::{plan_groups, Group, GroupKind};
use crate::results::{FailureClass, Instance};
use serde::Serialize;

/// The row name of planned samples without a result.
pub const MISSING: &str = "missing";
/// The row name of incorrect candidates that carry no failure record.
pub const UNCLASSIFIED: &str = "unclassified";

/// One group's taxonomy.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Failures {
    pub group: Group,
    /// Instances × samples.
    pub planned: usize,
    /// Candidates with a result.
    pub evaluated: usize,
    /// Correct candidates without a failure record.
    pub passed: usize,
    /// Evaluated candidates that failed.
    pub failed: usize,
    /// Planned samples without a result.
    pub missing: usize,
    /// Every class of [`FailureClass::ALL`] in that order, then `unclassified` when any, then
    /// `missing`.
    pub rows: Vec<FailureRow>,
}

impl Failures {
    /// The row of one class (or `missing`, `unclassified`).
    pub fn row(&self, class: &str) -> Option<&FailureRow> {
        self.rows.iter().find(|r| r.class == class)
    }
}

/// One class's count and its share of the group's failures (missing included).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FailureRow {
    pub class: String,
    pub count: usize,
    pub share: Option<f64>,
}

/// The taxonomy pooled and for each backend.
pub(crate) fn taxonomy(slots: &[Slots], samples: u32, warnings: &mut Vec<String>) -> Vec<Failures> {
    for s in slots {
        for (i, r) in s.samples.iter().enumerate() {
            if let Some(r) = r.filter(|r| !r.correct && r.failure.is_none()) {
                warnings.push(format!(
                    "{} on {} sample {i}: not correct but no failure class; counted as {UNCLASSIFIED}",
                    r.instance.task, r.instance.backend
                ));
            }
        }
    }
    let instances: Vec<&Instance> = slots.iter().map(|s| s.instance).collect();
    plan_groups(&instances)
        .into_iter()
        .filter(|g| matches!(g.kind, GroupKind::Pooled | GroupKind::Backend))
        .map(|g| group_taxonomy(g, slots, samples))
        .collect()
}

fn group_taxonomy(group: Group, slots: &[Slots], samples: u32) -> Failures {
    let mut counts = [0usize; FailureClass::ALL.len()];
    let (mut planned, mut evaluated, mut passed, mut unclassified) = (0, 0, 0, 0);
    for s in slots.iter().filter(|s| group.contains(s.instance)) {
        planned += samples as usize;
        for r in s.samples.iter().flatten() {
            evaluated += 1;
            match &r.failure {
                Some(f) => {
                    counts[FailureClass::ALL.iter().position(|c| *c == f.class).expect("a known class")] += 1
                }
                None if r.correct => passed += 1,
                None => unclassified += 1,
            }
        }
    }
    let failed = evaluated - passed;
    let missing = planned - evaluated;
    let all = failed + missing;
    let row = |class: &str, count: usize| FailureRow {
        class: class.to_string(),
        count,
        share: (all > 0).then(|| count as f64 / all as f64),
    };
    let mut rows: Vec<FailureRow> =
        FailureClass::ALL.iter().zip(counts).map(|(c, n)| row(c.name(), n)).collect();
    if unclassified > 0 {
        rows.push(row(UNCLASSIFIED, unclassified));
    }
    rows.push(row(MISSING, missing));
    Failures { group, planned, evaluated, passed, failed, missing, rows }
}
