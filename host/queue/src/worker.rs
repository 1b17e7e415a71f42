//! A worker: takes the jobs of one target profile from the broker, one at a time, has them
//! evaluated (by `ekb worker`, the same evaluation path as `ekb eval`; by the simulation, a
//! sleep), posts each result to the run that asked, and only then acknowledges the job.
//!
//! What must stay true: delivery is at least once: a job is acknowledged only after its result is
//! on the results stream (the broker syncs every write to its append-only file before it
//! answers); while a job is evaluated a heartbeat resets its idle time, so only a worker that
//! stopped (killed, hung, its machine gone) lets its job be claimed by another after the min-idle
//! time; before waiting for new jobs a worker claims such abandoned ones, and one delivered more
//! than `max_deliveries` times is recorded as failed instead (it kills its workers); an evaluation that
//! cannot go on (the device is gone) leaves its job pending and stops the worker, so another
//! worker takes the job. A broker that goes away is waited for (`reconnect`): the worker
//! reconnects, its consumer group made again, and goes on where it was (a result it holds is
//! posted then); what it was delivered and did not acknowledge stays pending on the broker.

use crate::broker::{jobs_stream, Broker};
use crate::job::{Job, Outcome};
use crate::reconnect::Reconnect;
use ekb_eval::results::{utc_now, CandidateResult, CandidateText, FailureClass, FailureRecord, Phases};
use ekb_ir::Diagnostic;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

/// How a worker takes jobs.
#[derive(Debug, Clone)]
pub struct WorkerOptions {
    /// The broker, `redis://HOST:PORT`.
    pub url: String,
    /// The target profile whose jobs it takes.
    pub profile: String,
    /// Its name in the consumer group (unique in the pool).
    pub consumer: String,
    /// How long a job's owner may be silent before another worker claims it; the heartbeat
    /// comes three times as often.
    pub min_idle: Duration,
    /// How long one wait for a new job lasts before abandoned jobs are looked for again.
    pub block: Duration,
    /// A job delivered more often than this (every worker that took it died or hung on it) is
    /// recorded as failed instead of being evaluated again.
    pub max_deliveries: usize,
    /// How long a lost broker is waited for before the worker stops.
    pub reconnect: Reconnect,
}

/// Serves jobs until `stop` is set (checked between jobs and between waits), evaluating each
/// with `evaluate`; `log` hears a line per job. Returns how many jobs it completed.
pub fn serve(
    options: &WorkerOptions,
    stop: &AtomicBool,
    evaluate: &mut dyn FnMut(&Job) -> Result<CandidateResult, Diagnostic>,
    log: &mut dyn FnMut(&str),
) -> Result<usize, Diagnostic> {
    let mut broker = Broker::open(&options.url, options.reconnect.clone())?;
    if broker.syncs_every_write() == Some(false) {
        log(&format!(
            "warning: the broker at {} does not sync every write (run it with `--appendonly yes --appendfsync always`): \
             results acknowledged before a broker crash may be lost",
            options.url
        ));
    }
    let stream = jobs_stream(&options.profile);
    broker.ensure_group(&stream)?;
    let me = options.consumer.as_str();
    let mut completed = 0;
    while !stop.load(Ordering::Relaxed) {
        let (delivery, reclaimed) = match broker.reclaim(&stream, me, options.min_idle)? {
            Some(d) => {
                log(&format!("claimed job entry {} abandoned by another worker", d.id));
                (d, true)
            }
            None => match broker.next_job(&stream, me, options.block)? {
                Some(d) => (d, false),
                None => continue,
            },
        };
        let job = match delivery.job {
            Ok(job) => job,
            Err(u) => {
                log(&format!("job entry {} is unreadable and is dropped: {}", delivery.id, u.why));
                if let (Some(key), Some(reply)) = (u.key, u.reply) {
                    broker.post(&reply, &key, &Outcome::Unreadable(u.why))?;
                }
                broker.ack(&stream, &delivery.id)?;
                continue;
            }
        };
        let deliveries = match reclaimed {
            true => broker.pending_entry(&stream, &delivery.id)?.map_or(0, |(_, n)| n),
            false => 1,
        };
        if deliveries > options.max_deliveries {
            log(&format!(
                "job {} was delivered {deliveries} times and never finished: recorded as failed",
                &job.key[..12]
            ));
            let result = abandoned(&job, deliveries, options.max_deliveries);
            broker.post(&job.reply, &job.key, &Outcome::Evaluated(Box::new(result)))?;
            broker.ack(&stream, &delivery.id)?;
            continue;
        }
        let b = &job.body;
        log(&format!(
            "job {} : {} on {} sample {}",
            &job.key[..12],
            b.instance.task,
            b.instance.backend,
            b.sample
        ));
        let beat = Heartbeat::start(&options.url, &stream, me, &delivery.id, options.min_idle / 3);
        let result = evaluate(&job);
        beat.stop();
        broker.post(&job.reply, &job.key, &Outcome::Evaluated(Box::new(result?)))?;
        broker.ack(&stream, &delivery.id)?;
        completed += 1;
    }
    Ok(completed)
}

/// The result of a job that every worker taking it stopped on (killed, hung, its device lost),
/// as a local run records a candidate the evaluator crashed on: failed, not evaluated again.
fn abandoned(job: &Job, deliveries: usize, max: usize) -> CandidateResult {
    let b = &job.body;
    CandidateResult {
        instance: b.instance.clone(),
        sample: b.sample,
        candidate: CandidateText { origin: "job".into(), kind: "none".into(), sha256: None, text: None },
        compiled: false,
        correct: false,
        failure: Some(FailureRecord {
            class: FailureClass::Runtime,
            detail: "runtime error: every worker that took it stopped".into(),
            evidence: format!(
                "job {} was delivered {deliveries} times (at most {max}) and no worker finished it: each was \
                 killed, hung or lost its device while evaluating it",
                job.key
            ),
        }),
        timing: None,
        baseline_failure: None,
        memory: None,
        passes: None,
        seconds: Phases::default(),
        finished: utc_now(),
        device: None,
        median_ns: None,
    }
}

/// A thread that keeps one pending entry's idle time low while its job is evaluated.
struct Heartbeat {
    stop: mpsc::Sender<()>,
    thread: JoinHandle<()>,
}

impl Heartbeat {
    /// Resets entry `id`'s idle time every `period` from its own connection, as long as
    /// `consumer` still owns it (an entry another worker claimed meanwhile is left to it). A
    /// broker it cannot reach is tried again at the next beat, with one warning per outage.
    fn start(url: &str, stream: &str, consumer: &str, id: &str, period: Duration) -> Heartbeat {
        let (stop, stopped) = mpsc::channel::<()>();
        let (url, stream, consumer, id) =
            (url.to_string(), stream.to_string(), consumer.to_string(), id.to_string());
        let thread = std::thread::spawn(move || {
            let mut broker: Option<Broker> = None;
            let mut warned = false;
            while let Err(mpsc::RecvTimeoutError::Timeout) = stopped.recv_timeout(period) {
                let beat = |b: &mut Broker| -> Result<bool, Diagnostic> {
                    match b.pending_entry(&stream, &id)? {
                        Some((owner, _)) if owner == consumer => {
                            b.heartbeat(&stream, &consumer, &id).map(|()| true)
                        }
                        // Claimed by another worker, or acknowledged: nothing left to keep alive.
                        _ => Ok(false),
                    }
                };
                let done = match &mut broker {
                    Some(b) => beat(b),
                    None => Broker::connect(&url).and_then(|mut b| {
                        let r = beat(&mut b);
                        broker = Some(b);
                        r
                    }),
                };
                match done {
                    Ok(true) => warned = false,
                    Ok(false) => return,
                    Err(e) => {
                        broker = None;
                        if !std::mem::replace(&mut warned, true) {
                            eprintln!("warning: the heartbeat of job entry {id} failed (tried again at each beat): {e}");
                        }
                    }
                }
            }
        });
        Heartbeat { stop, thread }
    }

    fn stop(self) {
        let _ = self.stop.send(());
        let _ = self.thread.join();
    }
}
