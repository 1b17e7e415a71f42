//! The delivery guarantees against a real `redis-server` on loopback (started here; a missing
//! one fails these tests with the command that installs it): a silent worker's job is claimed by
//! another after the min-idle time and a heartbeat prevents that; a job every taker died on is
//! recorded as failed after `max_deliveries`, not evaluated again; a submission records every
//! job's result once, drops duplicates and strangers, and keeps at most `depth` jobs out.
//! A worker and a submitter wait for a broker that was killed and restarted, and the run ends with
//! every job recorded once.

use ekb_eval::results::CandidateResult;
use ekb_ir::{Diagnostic, TargetProfile};
use ekb_queue::broker::{jobs_stream, Broker};
use ekb_queue::job::{Job, Outcome};
use ekb_queue::reconnect::Reconnect;
use ekb_queue::server::LocalBroker;
use ekb_queue::simulate;
use ekb_queue::submit::{submit, Recorder};
use ekb_queue::worker::{serve, WorkerOptions};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

fn broker() -> LocalBroker {
    LocalBroker::start("always")
        .unwrap_or_else(|d| panic!("these tests need redis-server on this machine:\n{d}"))
}

fn profile() -> TargetProfile {
    TargetProfile::load("host").unwrap()
}

#[test]
fn a_silent_workers_job_is_claimed_after_min_idle_and_a_heartbeat_keeps_it() {
    let server = broker();
    let stream = jobs_stream("host");
    let (mut a, mut b) = (Broker::connect(&server.url()).unwrap(), Broker::connect(&server.url()).unwrap());
    assert_eq!(a.syncs_every_write(), Some(true));
    let lax = LocalBroker::start("everysec").unwrap();
    assert_eq!(Broker::connect(&lax.url()).unwrap().syncs_every_write(), Some(false));
    a.ensure_group(&stream).unwrap();
    let job = simulate::jobs("ekb:results:t", &profile(), 1).remove(0);
    a.publish("host", &job).unwrap();
    let taken = a.next_job(&stream, "a", Duration::from_millis(100)).unwrap().expect("a job for a");
    assert_eq!(taken.job.as_ref().ok().map(|j| &j.key), Some(&job.key));
    let min_idle = Duration::from_millis(300);
    assert!(b.reclaim(&stream, "b", min_idle).unwrap().is_none(), "a has just taken it");
    // a is alive: its heartbeats keep the entry from b for longer than min-idle.
    for _ in 0..6 {
        std::thread::sleep(Duration::from_millis(100));
        a.heartbeat(&stream, "a", &taken.id).unwrap();
        assert!(b.reclaim(&stream, "b", min_idle).unwrap().is_none(), "a heartbeat keeps the job with a");
    }
    assert_eq!(
        a.pending_entry(&stream, &taken.id).unwrap(),
        Some(("a".to_string(), 1)),
        "heartbeats are not deliveries"
    );
    // a goes silent: after min-idle, b claims the same entry and job.
    std::thread::sleep(min_idle + Duration::from_millis(50));
    let claimed = b.reclaim(&stream, "b", min_idle).unwrap().expect("redelivered to b");
    assert_eq!(claimed.id, taken.id);
    assert_eq!(claimed.job.as_ref().ok().map(|j| &j.key), Some(&job.key));
    assert_eq!(a.pending_entry(&stream, &taken.id).unwrap(), Some(("b".to_string(), 2)));
    b.ack(&stream, &claimed.id).unwrap();
    assert_eq!(a.pending_entry(&stream, &taken.id).unwrap(), None, "acknowledged");
    assert!(b.reclaim(&stream, "b", Duration::ZERO).unwrap().is_none(), "nothing left to claim");
}

/// Keeps what it is given, in order.
#[derive(Default)]
struct Kept {
    results: Vec<CandidateResult>,
}

impl Recorder for Kept {
    fn record(&mut self, result: &CandidateResult) -> Result<(), Diagnostic> {
        self.results.push(result.clone());
        Ok(())
    }
    fn note(&mut self, _: &str) {}
}

#[test]
fn every_result_is_recorded_once_and_at_most_depth_jobs_are_out() {
    let server = broker();
    let url = server.url();
    let reply = "ekb:results:once";
    let jobs: Vec<Job> = simulate::jobs(reply, &profile(), 8);
    let mut submitter = Broker::connect(&url).unwrap();
    // An earlier submission of this run was answered for job 0, twice (a redelivered job), and a
    // stranger's answer is on the stream too.
    let answer = |job: &Job| Outcome::Evaluated(Box::new(simulate::evaluate(job, Duration::ZERO).unwrap()));
    submitter.post(reply, &jobs[0].key, &answer(&jobs[0])).unwrap();
    submitter.post(reply, &jobs[0].key, &answer(&jobs[0])).unwrap();
    submitter.post(reply, "0000", &answer(&jobs[1])).unwrap();

    let depth = 2;
    let stop = Arc::new(AtomicBool::new(false));
    let most_out = Arc::new(AtomicUsize::new(0));
    let worker = {
        let (stop, most_out, url) = (stop.clone(), most_out.clone(), url.clone());
        std::thread::spawn(move || {
            let options = WorkerOptions {
                url: url.clone(),
                profile: "host".into(),
                consumer: "w".into(),
                min_idle: Duration::from_secs(5),
                block: Duration::from_millis(100),
                max_deliveries: 3,
                reconnect: Reconnect::never(),
            };
            let mut probe = redis::Client::open(url.as_str()).unwrap().get_connection().unwrap();
            let mut seen = Vec::new();
            let mut evaluate = |job: &Job| {
                let out: usize = redis::cmd("XLEN").arg(jobs_stream("host")).query(&mut probe).unwrap();
                most_out.fetch_max(out, Ordering::Relaxed);
                seen.push(job.body.instance.task.clone());
                simulate::evaluate(job, Duration::from_millis(20))
            };
            serve(&options, &stop, &mut evaluate, &mut |_| {}).unwrap();
            seen
        })
    };
    let mut kept = Kept::default();
    let tally = submit(&mut submitter, reply, jobs.clone(), depth, &mut kept).unwrap();
    stop.store(true, Ordering::Relaxed);
    let seen = worker.join().unwrap();

    let mut tasks: Vec<String> = kept.results.iter().map(|r| r.instance.task.clone()).collect();
    assert_eq!(kept.results.len(), 8, "{tasks:?}");
    tasks.sort();
    tasks.dedup();
    assert_eq!(tasks.len(), 8, "each job recorded once");
    assert_eq!(tally.recorded, 8);
    assert_eq!(tally.dropped, 2, "the second answer to job 0 and the stranger's");
    assert!(
        !seen.contains(&"sim-0".to_string()),
        "job 0 was answered already and is not published: {seen:?}"
    );
    assert_eq!(seen.len(), 7, "{seen:?}");
    let most = most_out.load(Ordering::Relaxed);
    assert!((1..=depth).contains(&most), "at most {depth} jobs out at once, saw {most}");
}

#[test]
fn a_job_that_every_taker_died_on_is_recorded_as_failed_after_max_deliveries() {
    let server = broker();
    let stream = jobs_stream("host");
    let mut b = Broker::connect(&server.url()).unwrap();
    b.ensure_group(&stream).unwrap();
    let reply = "ekb:results:poison";
    let job = simulate::jobs(reply, &profile(), 1).remove(0);
    b.publish("host", &job).unwrap();
    // Two workers take it in turn and die on it (neither acknowledges).
    assert!(b.next_job(&stream, "dead-1", Duration::from_millis(100)).unwrap().is_some());
    std::thread::sleep(Duration::from_millis(60));
    assert!(b.reclaim(&stream, "dead-2", Duration::from_millis(50)).unwrap().is_some());
    std::thread::sleep(Duration::from_millis(60));
    // The third taker finds it delivered 3 times, over the limit of 2: failed, not evaluated.
    let stop = Arc::new(AtomicBool::new(false));
    let options = WorkerOptions {
        url: server.url(),
        profile: "host".into(),
        consumer: "w".into(),
        min_idle: Duration::from_millis(50),
        block: Duration::from_millis(50),
        max_deliveries: 2,
        reconnect: Reconnect::never(),
    };
    let worker = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let mut evaluate = |_: &Job| -> Result<CandidateResult, Diagnostic> { panic!("evaluated again") };
            serve(&options, &stop, &mut evaluate, &mut |_| {})
        })
    };
    let answers = b.results(reply, "0", Duration::from_secs(5)).unwrap();
    stop.store(true, Ordering::Relaxed);
    assert_eq!(worker.join().unwrap().unwrap(), 0, "no job completed by evaluation");
    assert_eq!(answers.len(), 1);
    assert_eq!(answers[0].key, job.key);
    let Ok(Outcome::Evaluated(result)) = &answers[0].outcome else { panic!("not a result") };
    let failure = result.failure.as_ref().expect("recorded as failed");
    assert_eq!(failure.class, ekb_eval::results::FailureClass::Runtime);
    assert!(failure.evidence.contains("delivered 3 times (at most 2)"), "{}", failure.evidence);
    assert!(b.reclaim(&stream, "x", Duration::ZERO).unwrap().is_none(), "acknowledged");
}

#[test]
fn a_broker_killed_and_restarted_mid_run_is_waited_for_and_every_job_is_recorded_once() {
    let mut server = broker();
    let url = server.url();
    let patience = |prefix: &str| Reconnect { patience: Duration::from_secs(20), prefix: prefix.into() };
    let reply = "ekb:results:restart";
    let jobs: Vec<Job> = simulate::jobs(reply, &profile(), 12);
    let mut submitter = Broker::open(&url, patience("submitter: ")).unwrap();
    // A command the broker refuses is an error at once, whatever the patience.
    let refused = std::time::Instant::now();
    assert!(submitter.pending_entry("ekb:jobs:none", "0-1").is_err(), "no such group");
    assert!(refused.elapsed() < Duration::from_secs(1));

    let stop = Arc::new(AtomicBool::new(false));
    let evaluated = Arc::new(AtomicUsize::new(0));
    let worker = {
        let (stop, evaluated, options) = (
            stop.clone(),
            evaluated.clone(),
            WorkerOptions {
                url: url.clone(),
                profile: "host".into(),
                consumer: "w".into(),
                min_idle: Duration::from_secs(2),
                block: Duration::from_millis(100),
                max_deliveries: 3,
                reconnect: patience("worker: "),
            },
        );
        std::thread::spawn(move || {
            let mut evaluate = |job: &Job| {
                evaluated.fetch_add(1, Ordering::Relaxed);
                simulate::evaluate(job, Duration::from_millis(100))
            };
            serve(&options, &stop, &mut evaluate, &mut |_| {})
        })
    };
    // The broker is killed (SIGKILL) once the first results are back, and comes back on the same
    // port with its append-only file a second later.
    let restarter = {
        let evaluated = evaluated.clone();
        std::thread::spawn(move || {
            while evaluated.load(Ordering::Relaxed) < 3 {
                std::thread::sleep(Duration::from_millis(10));
            }
            server.kill();
            assert!(Broker::connect(&url).is_err(), "no patience: an error at once");
            std::thread::sleep(Duration::from_secs(1));
            server.restart().unwrap();
            server
        })
    };
    let mut kept = Kept::default();
    let tally = submit(&mut submitter, reply, jobs.clone(), 4, &mut kept).unwrap();
    stop.store(true, Ordering::Relaxed);
    let _server = restarter.join().unwrap();
    let completed = worker.join().unwrap().expect("the worker rode out the restart");
    let mut tasks: Vec<String> = kept.results.iter().map(|r| r.instance.task.clone()).collect();
    tasks.sort();
    tasks.dedup();
    assert_eq!((kept.results.len(), tasks.len(), tally.recorded), (12, 12, 12), "each job recorded once");
    assert!(completed >= 12, "every job evaluated, some perhaps twice: {completed}");
}
