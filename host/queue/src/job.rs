//! A job: one candidate of one instance, everything a worker needs to evaluate it without the
//! submitter's files (the task's text, the candidate's files, the settings, the target
//! profile), and its content address.
//!
//! What must stay true: the key is the SHA-256 of the job's content ([`JobBody`]) and of nothing
//! else (not the run it answers, not when it was made), so the same candidate evaluated the same
//! way has the same key wherever it is submitted from, and any change to what is evaluated or how
//! changes it; the serialised body is deterministic (fields in declaration order, maps sorted).

use ekb_eval::results::{CandidateResult, Instance};
use ekb_ir::TargetProfile;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;

/// A job as it travels on the jobs stream.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Job {
    /// The content address: [`JobBody::key`].
    pub key: String,
    /// The results stream of the run that wants it.
    pub reply: String,
    pub body: JobBody,
}

impl Job {
    /// The job of `body`, answered on `reply`.
    pub fn new(reply: &str, body: JobBody) -> Job {
        Job { key: body.key(), reply: reply.into(), body }
    }
}

/// What is evaluated, and how.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobBody {
    pub instance: Instance,
    /// The candidate's index among the instance's samples (it also seeds the pair order).
    pub sample: u32,
    /// The task file's text (`NAME.ekir`: header and graph).
    pub task: String,
    pub candidate: CandidateSource,
    pub settings: Settings,
    /// The target profile the candidate is built for.
    pub profile: TargetProfile,
    /// The baseline program's files where the baseline is a candidate (`candidates:DIR`: sample
    /// 0 of the instance in DIR, by path relative to DIR, as text, as [`CandidateSource::Files`]
    /// holds a candidate's); `None` for the other baselines.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline_files: Option<BTreeMap<String, String>>,
}

impl JobBody {
    /// SHA-256 of the serialised body, lowercase hex.
    pub fn key(&self) -> String {
        let bytes = serde_json::to_vec(self).expect("a job body serialises");
        Sha256::digest(&bytes).iter().map(|b| format!("{b:02x}")).collect()
    }
}

/// Where the candidate comes from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CandidateSource {
    /// The task's graph lowered with this built-in schedule (`default`).
    Builtin(String),
    /// The files of the sample's folder, by their path in the candidates folder
    /// (`TASK/BACKEND/sample-N/candidate.ekir`, its `meta.json`, ...), as text.
    Files(BTreeMap<String, String>),
}

/// The settings of `ekb eval` that change what a candidate's evaluation gives.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Settings {
    /// As `--baseline` names it (`naive`, `default`, `engine:NAME`, or `candidates:DIR` with the
    /// program in [`JobBody::baseline_files`]).
    pub baseline: String,
    pub seeds: Vec<u64>,
    pub budget_s: f64,
    pub timeout_s: f64,
    pub target_rse: f64,
    pub max_ci: f64,
    pub cold: bool,
    pub threads: Option<u32>,
    /// `--cpus LIST`.
    pub cpus: Option<String>,
    pub big_cores: bool,
}

/// A worker's answer to a job, on the run's results stream.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The candidate was evaluated (whatever became of it: a failing candidate is a result).
    Evaluated(Box<CandidateResult>),
    /// The worker could not read the job (another version of `ekb`?): why.
    Unreadable(String),
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body() -> JobBody {
        JobBody {
            instance: Instance {
                task: "relu_x".into(),
                backend: "cpu".into(),
                level: 1,
                domain: "mobile".into(),
                family: "activation".into(),
            },
            sample: 0,
            task: "# header\ngraph relu_x() {}\n".into(),
            candidate: CandidateSource::Files(BTreeMap::from([(
                "relu_x/cpu/sample-0/candidate.ekir".to_string(),
                "graph relu_x() {}\n".to_string(),
            )])),
            settings: Settings {
                baseline: "naive".into(),
                seeds: vec![1, 2, 3],
                budget_s: 0.2,
                timeout_s: 20.0,
                target_rse: 0.01,
                max_ci: 0.02,
                cold: false,
                threads: None,
                cpus: None,
                big_cores: false,
            },
            profile: TargetProfile::load("host").expect("the host profile"),
            baseline_files: None,
        }
    }

    #[test]
    fn the_key_is_the_content_and_only_the_content() {
        let b = body();
        let key = b.key();
        assert_eq!(key.len(), 64);
        assert!(key.chars().all(|c| c.is_ascii_hexdigit()));
        // The same content answered to another run: the same key.
        assert_eq!(Job::new("ekb:results:a", b.clone()).key, Job::new("ekb:results:b", b.clone()).key);
        assert_eq!(body().key(), key, "deterministic");
        // Every part of what is evaluated changes it.
        let mut changed: Vec<JobBody> = Vec::new();
        let mut c = b.clone();
        c.sample = 1;
        changed.push(c);
        let mut c = b.clone();
        c.task.push(' ');
        changed.push(c);
        let mut c = b.clone();
        if let CandidateSource::Files(f) = &mut c.candidate {
            f.values_mut().for_each(|t| t.push('\n'));
        }
        changed.push(c);
        let mut c = b.clone();
        c.candidate = CandidateSource::Builtin("default".into());
        changed.push(c);
        let mut c = b.clone();
        c.settings.seeds[2] = 4;
        changed.push(c);
        let mut c = b.clone();
        c.settings.budget_s = 0.3;
        changed.push(c);
        let mut c = b.clone();
        c.settings.baseline = "default".into();
        changed.push(c);
        let mut c = b.clone();
        c.profile.cpu.vector_bits *= 2;
        changed.push(c);
        let mut c = b.clone();
        c.settings.baseline = "candidates:against".into();
        c.baseline_files = Some(BTreeMap::from([(
            "relu_x/cpu/sample-0/candidate.ekir".to_string(),
            "graph relu_x() {}\n".to_string(),
        )]));
        changed.push(c);
        let mut c = b.clone();
        c.instance.backend = "opencl".into();
        changed.push(c);
        let mut keys: Vec<String> = changed.iter().map(JobBody::key).collect();
        assert!(!keys.contains(&key));
        keys.sort();
        keys.dedup();
        assert_eq!(keys.len(), changed.len(), "every change gives its own key");
    }

    #[test]
    fn a_job_round_trips_through_json() {
        let job = Job::new("ekb:results:r", body());
        let text = serde_json::to_string(&job).unwrap();
        assert_eq!(serde_json::from_str::<Job>(&text).unwrap(), job);
    }
}
