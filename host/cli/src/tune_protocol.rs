//! The tuner's candidates measured by the evaluation protocol of `ekb eval` instead of in this
//! process: what `ekb tune` does for a GPU backend, with `--protocol` or `--device` on the CPU,
//! and with `--queue URL` (a pool of workers, `ekb worker`). Each batch of a workload is one
//! batch of the agent's evaluator ([`ekb_leka::evaluator::Protocol`]): a candidate folder (sample
//! `i` is the batch's `i`-th loop program) evaluated into a run directory in a work folder, with
//! the default schedule as the baseline, on this machine's device link or on the pool. Each
//! candidate is checked on the seeds and timed paired with the default on the device, and the
//! tuner records the ratio.
//!
//! What must stay true: a candidate is given a time only when the protocol found it correct and
//! timed it against a baseline that ran; otherwise its record says how it failed (compile,
//! incorrect or run) with the protocol's evidence.

use ekb_eval::evaluate;
use ekb_eval::results::{CandidateResult, FailureClass, Instance};
use ekb_eval::tasks::{Backend, Task};
use ekb_leka::evaluator::{Batch, Evaluator, Protocol};
use ekb_leka::tree::CandidateFile;
use ekb_tune::remote::{Answer, Paired, Remote};
use ekb_tune::{Outcome, Workload};
use std::cell::RefCell;
use std::collections::HashSet;
use std::rc::Rc;

/// The seeds every candidate of a tune through the protocol is checked on (seed 0 is the one a
/// tune in this process checks on).
pub const SEEDS: &str = "0,1,2";

/// The evaluator the tune's workloads share (one device link per batch, the runtime found once),
/// and the notes it printed, each once.
pub struct Shared {
    protocol: Protocol,
    shown: HashSet<String>,
}

impl Shared {
    pub fn new(protocol: Protocol) -> Shared {
        Shared { protocol, shown: HashSet::new() }
    }

    /// The results of `batch`, its notes printed on stderr, each once.
    pub fn evaluate(&mut self, batch: &Batch<'_>) -> Result<Vec<CandidateResult>, String> {
        let results = self.protocol.evaluate(batch).map_err(|d| format!("error: {d}"))?;
        for line in self.protocol.notes.drain(..) {
            if self.shown.insert(line.clone()) {
                eprintln!("{line}");
            }
        }
        Ok(results)
    }
}

/// The measurements of one workload's candidates through the protocol.
pub struct ProtocolBench<'a> {
    shared: Rc<RefCell<Shared>>,
    /// The name its records carry as their device.
    device: String,
    task: &'a Task,
    instance: Instance,
    batches: usize,
}

impl<'a> ProtocolBench<'a> {
    /// Measures `task`'s candidates on `backend` with the shared evaluator; its records name `device`.
    pub fn new(
        shared: Rc<RefCell<Shared>>,
        device: String,
        task: &'a Task,
        backend: Backend,
    ) -> Result<ProtocolBench<'a>, String> {
        let instance = evaluate::instances(&[task], &[backend]).into_iter().next().ok_or_else(|| {
            format!("error: task `{}` has no {} instance to tune", task.name, backend.name())
        })?;
        Ok(ProtocolBench { shared, device, task, instance, batches: 0 })
    }
}

impl Remote for ProtocolBench<'_> {
    fn device(&self) -> String {
        self.device.clone()
    }

    fn measure(&mut self, _: &Workload, programs: &[String]) -> Result<Vec<Answer>, String> {
        self.batches += 1;
        let batch = Batch {
            name: format!("{}/{}/batch-{}", self.task.name, self.instance.backend, self.batches),
            task: self.task,
            instance: self.instance.clone(),
            candidates: programs
                .iter()
                .map(|text| vec![CandidateFile::new("candidate.ekir", text.clone())])
                .collect(),
            against: None,
        };
        let results = self.shared.borrow_mut().evaluate(&batch)?;
        Ok(results.iter().map(answer).collect())
    }
}

/// What the tuner records of a protocol result.
fn answer(r: &CandidateResult) -> Answer {
    let first = |t: &str| t.lines().next().unwrap_or("").trim().to_string();
    let unstable = r.failure.as_ref().is_some_and(|f| f.class == FailureClass::UnstableTiming);
    match (&r.failure, &r.timing, &r.baseline_failure) {
        // An unstable pair is still a measurement for the search (a tune here has no such rule).
        (_, Some(t), None) if r.correct && (r.failure.is_none() || unstable) => {
            Ok(Paired { ratio: 1.0 / t.speedup, default_ms: t.baseline.median_ns / 1e6 })
        }
        (Some(f), _, _) => {
            let outcome = match f.class {
                FailureClass::NoCandidate | FailureClass::SyntaxApi | FailureClass::Compile => {
                    Outcome::Compile
                }
                FailureClass::Correctness | FailureClass::Parallel => Outcome::Incorrect,
                _ => Outcome::Run,
            };
            Err((outcome, format!("{}: {}", f.detail, first(&f.evidence))))
        }
        (None, _, Some(b)) => {
            Err((Outcome::Run, format!("the default schedule, its baseline, failed: {}", first(b))))
        }
        (None, _, None) => Err((Outcome::Run, "not timed".into())),
    }
}
