//! The submitting side: publishes a run's jobs to the jobs streams of their target profiles, at
//! most `depth` outstanding at a time (back-pressure), and reads the workers' results back from
//! the run's results stream, recording each job's result exactly once.
//!
//! What must stay true: a result is handed to the recorder only for a job this submission is
//! waiting for, and only the first time its key comes back (a job delivered twice, after a
//! worker was presumed dead, answers twice: the second answer is dropped); a result entry is
//! deleted from the stream only after the recorder returned (its result is stored), so a
//! submitter that dies meanwhile finds it again when the run is resumed; nothing is lost: the
//! call returns only when every job has its result.

use crate::broker::{results_stream, Answer, Broker};
use crate::job::{Job, Outcome};
use ekb_eval::results::CandidateResult;
use ekb_ir::Diagnostic;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, VecDeque};
use std::path::Path;
use std::time::{Duration, Instant};

/// Where the results go: the run's results store.
pub trait Recorder {
    /// Stores `result` (durably, before returning).
    fn record(&mut self, result: &CandidateResult) -> Result<(), Diagnostic>;
    /// Something worth a line (no result for a while, a duplicate dropped).
    fn note(&mut self, line: &str);
}

/// What a submission did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Tally {
    /// Results recorded (one per job).
    pub recorded: usize,
    /// Results dropped: a second answer to a job already recorded, or an answer to a job this
    /// submission does not wait for.
    pub dropped: usize,
}

/// How long without any result before the recorder hears that the submission is waiting.
const QUIET_NOTE: Duration = Duration::from_secs(30);

/// Publishes `jobs` (all answering on `reply`), at most `depth` outstanding, and records every
/// result with `recorder`; returns when each job has its result.
pub fn submit(
    broker: &mut Broker,
    reply: &str,
    jobs: Vec<Job>,
    depth: usize,
    recorder: &mut dyn Recorder,
) -> Result<Tally, Diagnostic> {
    let depth = depth.max(1);
    let mut queue: VecDeque<Job> = jobs.into();
    // Jobs whose result is awaited, by key, and whether they were published.
    let mut waiting: BTreeMap<String, bool> = queue.iter().map(|j| (j.key.clone(), false)).collect();
    let streams: Vec<String> = {
        let mut s: Vec<String> =
            queue.iter().map(|j| crate::broker::jobs_stream(&j.body.profile.name)).collect();
        s.sort();
        s.dedup();
        s
    };
    for s in &streams {
        broker.ensure_group(s)?;
    }
    let mut tally = Tally::default();
    let mut outstanding = 0usize;
    // The results stream is read from its start: answers to an earlier submission of this run
    // (resumed) are found there.
    let mut cursor = "0".to_string();
    let mut last_heard = Instant::now();
    // Until what the stream already holds is read, nothing is published.
    let mut caught_up = false;
    while !waiting.is_empty() {
        while caught_up && outstanding < depth {
            let Some(job) = queue.pop_front() else { break };
            // A job already answered (an earlier submission of this run was) is not published.
            let Some(published) = waiting.get_mut(&job.key) else { continue };
            *published = true;
            broker.publish(&job.body.profile.name, &job)?;
            outstanding += 1;
        }
        let wait = Duration::from_millis(if caught_up { 500 } else { 1 });
        let entries = broker.results(reply, &cursor, wait)?;
        caught_up |= entries.is_empty();
        if entries.is_empty() && last_heard.elapsed() > QUIET_NOTE {
            recorder.note(&format!(
                "no result for {} s: {} job(s) outstanding on {}; are workers running (`ekb worker --queue {} --target PROFILE`)?",
                QUIET_NOTE.as_secs(),
                outstanding,
                streams.join(", "),
                broker.url()
            ));
            last_heard = Instant::now();
        }
        for Answer { id, key, outcome } in entries {
            last_heard = Instant::now();
            cursor.clone_from(&id);
            let Some(published) = waiting.get(&key).copied() else {
                tally.dropped += 1;
                broker.drop_result(reply, &id)?;
                continue;
            };
            match outcome {
                Ok(Outcome::Evaluated(result)) => recorder.record(&result)?,
                Ok(Outcome::Unreadable(why)) => {
                    return Err(Diagnostic::error(format!("a worker could not read job {key}: {why}"))
                        .with_hint("run workers built from the same ekb as the submitter"))
                }
                Err(why) => {
                    return Err(Diagnostic::error(format!(
                        "result entry {id} of `{reply}` (job {key}) is unreadable: {why}"
                    ))
                    .with_hint("run workers built from the same ekb as the submitter"))
                }
            }
            waiting.remove(&key);
            if published {
                outstanding -= 1;
            }
            tally.recorded += 1;
            broker.drop_result(reply, &id)?;
        }
    }
    Ok(tally)
}

/// The file in a run directory that names its results stream.
pub const QUEUE_FILE: &str = "queue.json";

/// What `queue.json` holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct QueueRecord {
    /// The broker the run was submitted to.
    broker: String,
    /// The run's results stream.
    results: String,
}

/// The results stream of the run in `dir`: the one it recorded, or a new one (a random name),
/// recorded there so that a resumed run reads the answers to its earlier submission.
pub fn results_stream_of(dir: &Path, broker: &str) -> Result<String, Diagnostic> {
    let path = dir.join(QUEUE_FILE);
    if let Ok(text) = std::fs::read_to_string(&path) {
        let record: QueueRecord = serde_json::from_str(&text)
            .map_err(|e| Diagnostic::error(format!("`{}` is not a queue record: {e}", path.display())))?;
        return Ok(record.results);
    }
    let mut bytes = [0u8; 8];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut bytes))
        .map_err(|e| {
            Diagnostic::error(format!("cannot name the run's results stream from /dev/urandom: {e}"))
        })?;
    let name: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    let record = QueueRecord { broker: broker.into(), results: results_stream(&name) };
    let text = serde_json::to_string_pretty(&record).expect("a queue record serialises");
    std::fs::write(&path, format!("{text}\n"))
        .map_err(|e| Diagnostic::error(format!("cannot write `{}`: {e}", path.display())))?;
    Ok(record.results)
}
