//! What the runtime reported about a candidate, in the record's terms: correctness, the
//! failure class with its evidence, the paired timing, peak memory.
//!
//! What must stay true: a candidate is correct only when the runtime says every output of every
//! seed matched and nothing failed; the class follows the runtime's own classification
//! (`FailureKind`), and the evidence names the buffer, seed and error where there is one.

use crate::results::{FailureClass, FailureRecord, MemoryRecord, PairedTiming, SideTiming, StepTime};
use ekb_wire::protocol::{
    CounterKind, CounterReading, Failure, FailureKind, PairedReport, RunReport, StopReason,
};

/// The record's view of one candidate's paired run.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    pub correct: bool,
    pub failure: Option<FailureRecord>,
    pub timing: Option<PairedTiming>,
    pub baseline_failure: Option<String>,
    pub memory: MemoryRecord,
}

/// The class of a failure the runtime observed.
pub fn class_of(kind: &FailureKind) -> FailureClass {
    match kind {
        FailureKind::Memory(_) => FailureClass::Memory,
        FailureKind::Timeout => FailureClass::Timeout,
        FailureKind::Crash { .. } | FailureKind::RuntimeError => FailureClass::Runtime,
        FailureKind::Correctness => FailureClass::Correctness,
        FailureKind::Parallel => FailureClass::Parallel,
        FailureKind::UnstableTiming => FailureClass::UnstableTiming,
    }
}

/// The runtime's failure with the first mismatching output appended as evidence.
pub fn record_of(report: &RunReport, f: &Failure) -> FailureRecord {
    let mut evidence = f.evidence.clone();
    for s in &report.seeds {
        if let Some(o) = s.outputs.iter().find(|o| !o.ok) {
            let at = o.first_mismatch.map_or(String::new(), |i| format!(", first at element {i}"));
            evidence.push_str(&format!(
                "\nseed {}: output `{}` has {} mismatching element(s){at}; max abs error {:.3e}, max rel error {:.3e}",
                s.seed, o.buffer, o.mismatches, o.max_abs_err, o.max_rel_err
            ));
            break;
        }
    }
    FailureRecord { class: class_of(&f.kind), detail: f.kind.to_string(), evidence }
}

/// A run's failure, or the correctness failure its seeds show when the runtime named none.
fn failure_of(report: &RunReport) -> Option<FailureRecord> {
    if let Some(f) = &report.failure {
        return Some(record_of(report, f));
    }
    if report.is_correct() {
        return None;
    }
    let f = Failure {
        kind: FailureKind::Correctness,
        evidence: if report.seeds.is_empty() {
            "no seed was run".into()
        } else {
            "an output did not match".into()
        },
    };
    Some(record_of(report, &f))
}

fn stop_name(s: StopReason) -> &'static str {
    match s {
        StopReason::TargetReached => "target_reached",
        StopReason::MaxSamples => "max_samples",
        StopReason::Budget => "budget",
    }
}

/// Whether a run was correct (every seed matched, and nothing but the timing went wrong), and
/// its failure.
pub fn verdict(c: &RunReport) -> (bool, Option<FailureRecord>) {
    let correct = !c.seeds.is_empty()
        && c.seeds.iter().all(|s| s.ok())
        && c.failure.as_ref().is_none_or(|f| f.kind == FailureKind::UnstableTiming);
    (correct, failure_of(c))
}

/// Each plan step's mean time from a report's step counters (`KERNEL (step N): time (...)`).
fn step_times(rep: &RunReport) -> Vec<StepTime> {
    rep.counters
        .iter()
        .filter(|c| c.kind == CounterKind::Step)
        .filter_map(|c| match c.reading {
            CounterReading::Counted { total, runs, .. } if runs > 0 => Some(StepTime {
                kernel: c.name.split(" (step ").next().unwrap_or(&c.name).to_string(),
                ns: total as f64 / runs as f64,
            }),
            _ => None,
        })
        .collect()
}

/// Reads a paired report. An unstable pair is correct but carries `unstable_timing`.
pub fn from_paired(r: &PairedReport) -> Outcome {
    let baseline_failure = failure_of(&r.baseline).map(|f| format!("{}: {}", f.detail, f.evidence));
    let (correct, mut failure) = verdict(&r.candidate);
    let side = |rep: &RunReport| {
        rep.timing.as_ref().map(|t| SideTiming {
            median_ns: t.stats.median_ns,
            min_ns: t.stats.min_ns,
            cv: t.stats.cv,
            spread: t.stats.spread(),
            reps: t.reps,
            steps: step_times(rep),
        })
    };
    let timing = match (&r.ratio, side(&r.baseline), side(&r.candidate)) {
        (Some(ratio), Some(baseline), Some(candidate)) => {
            let clock = r.candidate.timing.as_ref().map_or(String::new(), |t| t.clock.clone());
            let cold_cache = r.candidate.timing.as_ref().is_some_and(|t| t.cold_cache);
            Some(PairedTiming {
                speedup: ratio.median,
                ci_low: ratio.ci_low,
                ci_high: ratio.ci_high,
                confidence: ratio.confidence,
                rse: ratio.rse,
                stable: r.stable,
                attempts: r.attempts,
                stop: stop_name(r.stop).into(),
                clock,
                cold_cache,
                threads: r.candidate.threads,
                baseline,
                candidate,
                pairs: r.pairs.iter().map(|p| [p.baseline_ns, p.candidate_ns]).collect(),
                engine: None,
            })
        }
        _ => None,
    };
    if correct && failure.is_none() {
        failure = timing.as_ref().filter(|t| !t.stable).map(unstable);
    }
    Outcome {
        correct,
        failure,
        timing,
        baseline_failure,
        memory: MemoryRecord {
            candidate_peak_bytes: r.candidate.memory.peak_bytes,
            baseline_peak_bytes: Some(r.baseline.memory.peak_bytes),
        },
    }
}

/// The failure of a correct candidate whose paired timing never became stable.
pub fn unstable(t: &PairedTiming) -> FailureRecord {
    FailureRecord {
        class: FailureClass::UnstableTiming,
        detail: "unstable timing".into(),
        evidence: format!(
            "the median ratio {:.4} has a {:.0}% interval [{:.4}, {:.4}] after {} attempt(s) \
             (timing spread {:.3} baseline, {:.3} candidate)",
            t.speedup,
            t.confidence * 100.0,
            t.ci_low,
            t.ci_high,
            t.attempts,
            t.baseline.spread,
            t.candidate.spread
        ),
    }
}
