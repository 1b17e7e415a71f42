//! `ekb tune --queue URL`: the tuner's candidates measured by a pool of workers (`ekb worker`)
//! instead of in this process. Each batch of a workload is a candidate folder (sample `i` is the
//! batch's `i`-th loop program) sent through the same submission as `ekb eval --queue`
//! ([`crate::submit::evaluate_into`]), into a run directory in a work folder, with the default
//! schedule as the baseline: a worker checks each candidate on the seeds and times it paired
//! with the default on its device, and the tuner records the ratio.
//!
//! What must stay true: a candidate is given a time only when the protocol found it correct and
//! timed it against a baseline that ran; otherwise its record says how it failed (compile,
//! incorrect or run) with the protocol's evidence.

use crate::submit::{evaluate_into, Pool};
use crate::worker::Notes;
use ekb_eval::evaluate::candidate::Candidates;
use ekb_eval::evaluate::{self, Config};
use ekb_eval::results::{load_run, CandidateResult, FailureClass, Instance};
use ekb_eval::tasks::{Backend, Task};
use ekb_tune::remote::{Answer, Paired, Remote};
use ekb_tune::{Outcome, Workload};
use std::path::PathBuf;

/// The seeds every candidate of a pooled tune is checked on (seed 0 is the one a tune here
/// checks on).
pub const SEEDS: &str = "0,1,2";

/// The measurements of one workload's candidates on a pool.
pub struct PoolBench<'a> {
    pool: &'a Pool,
    /// The evaluation's settings: the default schedule as the baseline, the tune's timing.
    config: Config,
    task: &'a Task,
    instance: Instance,
    /// Where the batches' candidate folders and run directories are written.
    work: PathBuf,
    batches: usize,
}

impl<'a> PoolBench<'a> {
    /// Measures `task`'s candidates on `pool` with `config`, its batches written under `work`.
    pub fn new(
        pool: &'a Pool,
        config: Config,
        task: &'a Task,
        work: PathBuf,
    ) -> Result<PoolBench<'a>, String> {
        let instance = evaluate::instances(&[task], &[Backend::Cpu])
            .into_iter()
            .next()
            .ok_or_else(|| format!("error: task `{}` has no CPU instance to tune", task.name))?;
        Ok(PoolBench { pool, config, task, instance, work, batches: 0 })
    }
}

impl Remote for PoolBench<'_> {
    fn device(&self) -> String {
        format!(
            "ekb workers of {} (a pool), ekb {}",
            self.config.targets[&Backend::Cpu].name,
            env!("CARGO_PKG_VERSION")
        )
    }

    fn measure(&mut self, _: &Workload, programs: &[String]) -> Result<Vec<Answer>, String> {
        self.batches += 1;
        let root = self.work.join(&self.task.name).join(format!("batch-{}", self.batches));
        let candidates = root.join("candidates");
        for (i, text) in programs.iter().enumerate() {
            let sample = candidates.join(&self.task.name).join("cpu").join(format!("sample-{i}"));
            std::fs::create_dir_all(&sample)
                .map_err(|e| format!("error: cannot create `{}`: {e}", sample.display()))?;
            crate::files::write(&sample.join("candidate.ekir"), text.as_bytes())?;
        }
        let mut config = self.config.clone();
        config.candidates = Candidates::Dir(candidates);
        config.samples = programs.len() as u32;
        let run_dir = root.join("run");
        evaluate_into(
            self.pool,
            &config,
            &[self.task],
            vec![self.instance.clone()],
            &run_dir,
            false,
            &mut Notes,
        )?;
        let mut results = load_run(&run_dir).map_err(|d| d.to_string())?.results;
        results.sort_by_key(|r| r.sample);
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
