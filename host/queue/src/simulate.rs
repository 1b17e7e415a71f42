//! The simulation of a pool: jobs that name no real task, evaluated by a sleep of a fixed
//! device latency instead of a build and a run, to measure what the broker and the protocol
//! cost and how throughput grows with workers (`ekb-queue-sim`, docs/scaleout.md). Nothing
//! here evaluates anything: every result says it was simulated and counts as failed.
//!
//! What must stay true: a simulated result can never pass for a measurement (its candidate kind
//! is `simulated`, it is not compiled, and its failure says why).

use crate::job::{CandidateSource, Job, JobBody, Settings};
use ekb_eval::results::{
    utc_now, CandidateResult, CandidateText, FailureClass, FailureRecord, Instance, Phases,
};
use ekb_ir::{Diagnostic, TargetProfile};
use std::time::Duration;

/// `count` synthetic jobs (tasks `sim-0`, `sim-1`, ...) for `profile`, answered on `reply`.
pub fn jobs(reply: &str, profile: &TargetProfile, count: usize) -> Vec<Job> {
    (0..count)
        .map(|i| {
            let body = JobBody {
                instance: Instance {
                    task: format!("sim-{i}"),
                    backend: "cpu".into(),
                    level: 1,
                    domain: "mobile".into(),
                    family: "simulated".into(),
                },
                sample: 0,
                task: String::new(),
                candidate: CandidateSource::Builtin("default".into()),
                settings: Settings {
                    baseline: "naive".into(),
                    seeds: vec![1, 2, 3],
                    budget_s: 0.0,
                    timeout_s: 0.0,
                    target_rse: 0.0,
                    max_ci: 0.0,
                    cold: false,
                    threads: None,
                    cpus: None,
                    big_cores: false,
                },
                profile: profile.clone(),
                baseline_files: None,
            };
            Job::new(reply, body)
        })
        .collect()
}

/// "Evaluates" `job` by sleeping `latency`: a result marked as simulated.
pub fn evaluate(job: &Job, latency: Duration) -> Result<CandidateResult, Diagnostic> {
    std::thread::sleep(latency);
    Ok(CandidateResult {
        instance: job.body.instance.clone(),
        sample: job.body.sample,
        candidate: CandidateText {
            origin: "simulated".into(),
            kind: "simulated".into(),
            sha256: None,
            text: None,
        },
        compiled: false,
        correct: false,
        failure: Some(FailureRecord {
            class: FailureClass::Runtime,
            detail: "simulated".into(),
            evidence: format!("a simulated worker slept {} ms instead of evaluating", latency.as_millis()),
        }),
        timing: None,
        baseline_failure: None,
        memory: None,
        passes: None,
        seconds: Phases { run: latency.as_secs_f64(), ..Phases::default() },
        finished: utc_now(),
        device: None,
        median_ns: None,
    })
}
