//! Each planned instance reduced to what it achieved within its first k samples: compiled,
//! correct, the best counted speedup (and which sample gave it), and the peak-memory ratio and
//! the graph passes' record of the candidate that counts.
//!
//! What must stay true: only planned instances appear, in plan order, each once; a result is
//! placed by its `sample` index, never by its position in the file; results outside the plan
//! (another instance, a sample index at or past the run's samples, a second result for the same
//! sample) are left out and named in a warning; a speedup that is not finite and positive never
//! counts.

use crate::results::{CandidateResult, FailureClass, Instance, PassesRecord, Run};
use serde::Serialize;
use std::collections::BTreeMap;

/// One planned instance and its results, indexed by sample (`None`: no result).
#[derive(Debug)]
pub(crate) struct Slots<'a> {
    pub instance: &'a Instance,
    pub samples: Vec<Option<&'a CandidateResult>>,
}

/// What one instance achieved.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct InstanceOutcome {
    pub instance: Instance,
    /// Samples with a result, of the run's planned samples.
    pub evaluated: u32,
    /// One entry per reported k, in the order of the run's `ks`.
    pub at: Vec<OutcomeAtK>,
}

impl InstanceOutcome {
    /// The outcome within the first `k` samples, if k is reported.
    pub fn at_k(&self, k: u32) -> Option<&OutcomeAtK> {
        self.at.iter().find(|a| a.k == k)
    }
}

/// An instance's outcome within its first k samples.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OutcomeAtK {
    pub k: u32,
    /// At least one of the first k candidates compiled.
    pub compiled: bool,
    /// At least one of the first k candidates was correct.
    pub correct: bool,
    /// The best counted speedup among the first k candidates.
    pub best_speedup: Option<f64>,
    /// The sample that gave `best_speedup` (the lowest index among equals).
    pub best_sample: Option<u32>,
    /// Candidate peak / baseline peak of the candidate that counts: the one with the best
    /// speedup, otherwise the first correct one; none when it has no memory record with both
    /// peaks above zero.
    pub memory_ratio: Option<f64>,
    /// What the graph passes did: the record of the candidate that counts, else of the first
    /// candidate that has one (compiled from a graph); none without such a candidate.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub passes: Option<PassesRecord>,
}

/// The speedup a result contributes: [`CandidateResult::counted_speedup`] when finite and
/// positive.
pub(crate) fn counted(r: &CandidateResult) -> Option<f64> {
    r.counted_speedup().filter(|s| s.is_finite() && *s > 0.0)
}

/// Places every result in its instance's slot; what does not fit the plan becomes a warning.
pub(crate) fn slots<'a>(run: &'a Run, warnings: &mut Vec<String>) -> Vec<Slots<'a>> {
    let samples = run.info.samples as usize;
    let mut index: BTreeMap<(&str, &str), usize> = BTreeMap::new();
    let mut out: Vec<Slots<'a>> = Vec::new();
    for inst in &run.info.instances {
        if index.contains_key(&(inst.task.as_str(), inst.backend.as_str())) {
            warnings.push(format!("the plan lists {} on {} twice; counted once", inst.task, inst.backend));
            continue;
        }
        index.insert((&inst.task, &inst.backend), out.len());
        out.push(Slots { instance: inst, samples: vec![None; samples] });
    }
    for r in &run.results {
        let (task, backend, sample) = (&r.instance.task, &r.instance.backend, r.sample);
        let Some(&i) = index.get(&(task.as_str(), backend.as_str())) else {
            warnings.push(format!(
                "a result for {task} on {backend} sample {sample}, which the plan does not list; left out"
            ));
            continue;
        };
        let Some(slot) = out[i].samples.get_mut(sample as usize) else {
            warnings.push(format!(
                "a result for {task} on {backend} sample {sample}, past the run's {samples} sample(s); left out"
            ));
            continue;
        };
        if slot.is_some() {
            warnings.push(format!(
                "a second result for {task} on {backend} sample {sample}; the first one counts"
            ));
            continue;
        }
        *slot = Some(r);
        if let Some(s) = r.counted_speedup().filter(|s| !(s.is_finite() && *s > 0.0)) {
            warnings.push(format!(
                "{task} on {backend} sample {sample}: speedup {s} is not a positive number; not counted"
            ));
        }
        let unstable_class = r.failure.as_ref().is_some_and(|f| f.class == FailureClass::UnstableTiming);
        if r.timing.as_ref().is_some_and(|t| !t.stable) && !unstable_class && counted(r).is_some() {
            warnings.push(format!(
                "{task} on {backend} sample {sample}: timing marked unstable but not classified as unstable_timing; its speedup counts as recorded"
            ));
        }
    }
    out
}

/// The outcome of every planned instance at each k.
pub(crate) fn outcomes(slots: &[Slots], ks: &[u32]) -> Vec<InstanceOutcome> {
    slots
        .iter()
        .map(|s| InstanceOutcome {
            instance: s.instance.clone(),
            evaluated: s.samples.iter().filter(|r| r.is_some()).count() as u32,
            at: ks.iter().map(|&k| at_k(s, k)).collect(),
        })
        .collect()
}

fn at_k(s: &Slots, k: u32) -> OutcomeAtK {
    let first: Vec<(u32, &CandidateResult)> =
        s.samples.iter().take(k as usize).enumerate().filter_map(|(i, r)| r.map(|r| (i as u32, r))).collect();
    let mut best: Option<(u32, f64)> = None;
    for &(i, r) in &first {
        if let Some(v) = counted(r) {
            if best.is_none_or(|(_, b)| v > b) {
                best = Some((i, v));
            }
        }
    }
    let chosen = match best {
        Some((i, _)) => first.iter().find(|(j, _)| *j == i).map(|(_, r)| *r),
        None => first.iter().find(|(_, r)| r.correct).map(|(_, r)| *r),
    };
    let memory_ratio = chosen.and_then(|r| r.memory.as_ref()).and_then(|m| match m.baseline_peak_bytes {
        Some(b) if b > 0 && m.candidate_peak_bytes > 0 => Some(m.candidate_peak_bytes as f64 / b as f64),
        _ => None,
    });
    let passes = chosen.and_then(|r| r.passes).or_else(|| first.iter().find_map(|(_, r)| r.passes));
    OutcomeAtK {
        k,
        compiled: first.iter().any(|(_, r)| r.compiled),
        correct: first.iter().any(|(_, r)| r.correct),
        best_speedup: best.map(|(_, v)| v),
        best_sample: best.map(|(i, _)| i),
        memory_ratio,
        passes,
    }
}
