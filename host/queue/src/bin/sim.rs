//! `ekb-queue-sim`: the throughput of a simulated pool. Starts a private broker, then for each
//! worker count runs that many workers (threads, each with its own connections, taking jobs
//! exactly as `ekb worker` does) whose evaluation is a sleep of a fixed device latency, submits
//! synthetic jobs through the real submitter, and prints a Markdown table: jobs per second, and
//! the ratio to the ideal (workers / latency). Nothing is evaluated: it measures the queue.

use clap::Parser;
use ekb_ir::TargetProfile;
use ekb_queue::server::LocalBroker;
use ekb_queue::submit::{submit, Recorder};
use ekb_queue::worker::{serve, WorkerOptions};
use ekb_queue::{broker::Broker, simulate};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The throughput of a simulated pool of workers (a sleep in place of each evaluation).
#[derive(Parser)]
#[command(
    name = "ekb-queue-sim",
    after_help = "Example:\n  cargo run --release -p ekb-queue --bin ekb-queue-sim -- --workers 1,2,4,8 --jobs 200 --latency-ms 50\n  \
cargo run --release -p ekb-queue --bin ekb-queue-sim -- --workers 1,8,32 --latency-ms 0   the broker's limit"
)]
struct Args {
    /// The worker counts to measure, one row each.
    #[arg(long, value_delimiter = ',', default_value = "1,2,4,8")]
    workers: Vec<usize>,
    /// Jobs submitted per row.
    #[arg(long, default_value_t = 200)]
    jobs: usize,
    /// The simulated device latency of one job, milliseconds (0: the broker's own limit).
    #[arg(long, default_value_t = 50)]
    latency_ms: u64,
    /// Outstanding jobs allowed per worker (the submitter's depth is this times the workers).
    #[arg(long, default_value_t = 2)]
    depth_per_worker: usize,
    /// When the broker syncs its append-only file: `always` (what the delivery guarantees
    /// assume) or `everysec`.
    #[arg(long, default_value = "always")]
    appendfsync: String,
}

/// Counts what it is given.
struct Count(usize);

impl Recorder for Count {
    fn record(&mut self, _: &ekb_eval::results::CandidateResult) -> Result<(), ekb_ir::Diagnostic> {
        self.0 += 1;
        Ok(())
    }
    fn note(&mut self, line: &str) {
        eprintln!("{line}");
    }
}

fn main() -> ExitCode {
    let args = Args::parse();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{e}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: &Args) -> Result<(), ekb_ir::Diagnostic> {
    let server = LocalBroker::start(&args.appendfsync)?;
    let url = server.url();
    let profile = TargetProfile::load("host").map_err(ekb_ir::Diagnostic::error)?;
    let latency = Duration::from_millis(args.latency_ms);
    println!("| workers | jobs | latency (ms) | wall (s) | jobs/s | ideal jobs/s | of ideal |");
    println!("| --- | --- | --- | --- | --- | --- | --- |");
    for (row, &workers) in args.workers.iter().enumerate() {
        let profile_name = format!("sim-{row}");
        let mut p = profile.clone();
        p.name.clone_from(&profile_name);
        let reply = format!("ekb:results:sim-{row}");
        let jobs = simulate::jobs(&reply, &p, args.jobs);
        let stop = Arc::new(AtomicBool::new(false));
        let threads: Vec<_> = (0..workers)
            .map(|w| {
                let options = WorkerOptions {
                    url: url.clone(),
                    profile: profile_name.clone(),
                    consumer: format!("sim-worker-{w}"),
                    min_idle: Duration::from_secs(30),
                    block: Duration::from_millis(50),
                    max_deliveries: 3,
                    reconnect: ekb_queue::reconnect::Reconnect::never(),
                };
                let stop = stop.clone();
                std::thread::spawn(move || {
                    serve(&options, &stop, &mut |job| simulate::evaluate(job, latency), &mut |_| {})
                })
            })
            .collect();
        let mut broker = Broker::connect(&url)?;
        let start = Instant::now();
        let mut count = Count(0);
        submit(&mut broker, &reply, jobs, workers * args.depth_per_worker, &mut count)?;
        let wall = start.elapsed().as_secs_f64();
        stop.store(true, Ordering::Relaxed);
        for t in threads {
            t.join().expect("a worker thread")?;
        }
        let rate = count.0 as f64 / wall;
        let ideal = if args.latency_ms == 0 {
            f64::INFINITY
        } else {
            workers as f64 * 1000.0 / args.latency_ms as f64
        };
        let of_ideal = if ideal.is_finite() { format!("{:.2}", rate / ideal) } else { "-".into() };
        println!(
            "| {workers} | {} | {} | {wall:.2} | {rate:.1} | {} | {of_ideal} |",
            count.0,
            args.latency_ms,
            if ideal.is_finite() { format!("{ideal:.1}") } else { "-".into() }
        );
    }
    Ok(())
}
