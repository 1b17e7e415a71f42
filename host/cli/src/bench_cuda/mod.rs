//! `ekb bench --engines --backend cuda`: ekb's default CUDA pipeline next to PyTorch (eager and
//! `torch.compile`) on the CUDA instances of the selected tasks, by device time, in one run.
//!
//! Per instance, one at a time: the task's reference outputs on seed 0 are computed once; ekb's
//! side is the task's graph through the default compile pipeline for the CUDA target's GPU
//! (`--cuda-target`, `h200` by default), built into a payload of that one seed and loaded into
//! the GPU runtime (`ekb-rt` with `cuda`, found as `ekb eval` finds it); the torch sides are
//! the task's twin, loaded by the helper `bench_torch.py` from the task's exported I/O (the same
//! inputs, parameters, reference and tolerance as the twin check), in float32 on `cuda` with
//! TF32 off, eagerly and through `torch.compile`, each captured in a CUDA graph and checked
//! against the reference once before it is timed. Then `--rounds` rounds alternate between the
//! sides, in an order rotated each round: ekb's turn is one `Run` of its payload (the outputs
//! checked again on seed 0 at the task's tolerance, then about `--round-ms` of timed executions,
//! each sample one execution's device time by CUDA events, the mean of a batch when executions
//! are shorter than the runtime's minimum sample); a torch side's turn is about `--round-ms` of
//! graph replays, each between two CUDA events. A side's figure is the median of all its
//! samples.
//!
//! What must stay true: a wrong side is reported and never timed or counted (ekb wrong in a
//! later round loses its samples); a side that cannot take an instance is `n/a` on its row with
//! the reason and the run goes on; a side missing on this machine (torch not importable, no
//! CUDA device for the runtime) is n/a everywhere and makes the exit status non-zero; with
//! neither side able to run, the command stops at once with both reasons.

pub mod table;

use crate::tasks::{self as task_cli, Select};
use ekb_deploy::build::{reference_outputs, BuildOptions};
use ekb_deploy::transport::{self, Device, RemoteOptions};
use ekb_eval::evaluate::compile::build_baseline;
use ekb_eval::evaluate::device::{Answer, DeviceSession};
use ekb_eval::evaluate::engine::{HeldCandidate, Timed};
pub use ekb_eval::evaluate::torch::TorchSide;
use ekb_eval::evaluate::torch::{Helper, Loaded};
use ekb_eval::tasks::export::write_io;
use ekb_eval::tasks::{Backend, Task};
use ekb_ir::tensor::Tensor;
use ekb_ir::TargetProfile;
use ekb_lower::Schedule;
use ekb_wire::payload::TimingSettings;
use ekb_wire::protocol::PayloadId;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};
use table::{Report, Row, Side, EKB};

/// Rounds and time per side per round when `--rounds` and `--round-ms` are not given: what
/// fits about 100 instances in 8 minutes on an H200 machine, where each instance also pays its
/// fixed costs (the runtime's kernel process per round, NVRTC, `torch.compile`).
pub const DEFAULT_ROUNDS: usize = 3;
pub const DEFAULT_ROUND_MS: u64 = 50;

/// `--shard K/N`: the K-th of N interleaved shares of the selected instances (instance `i`,
/// counted from 0 in name order, belongs to share `i % N + 1`), so that a level can be measured
/// in several shorter runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    pub k: usize,
    pub n: usize,
}

impl Shard {
    pub fn parse(s: &str) -> Result<Shard, String> {
        let parsed =
            s.split_once('/').and_then(|(k, n)| Some((k.trim().parse().ok()?, n.trim().parse().ok()?)));
        match parsed {
            Some((k, n)) if n >= 1 && (1..=n).contains(&k) => Ok(Shard { k, n }),
            _ => Err(format!("`--shard {s}`: expected K/N with 1 <= K <= N, e.g. 1/2")),
        }
    }

    /// Whether the instance at `index` of the selection is in this share.
    pub fn keeps(self, index: usize) -> bool {
        index % self.n + 1 == self.k
    }
}

/// How the comparison runs.
pub struct CudaBench {
    pub select: Select,
    pub dir: Option<PathBuf>,
    /// Only instances whose task name contains this.
    pub only: Option<String>,
    pub shard: Option<Shard>,
    /// The torch sides, in column order (none: ekb alone).
    pub sides: Vec<TorchSide>,
    pub rounds: usize,
    pub round: Duration,
    /// The CUDA target profile ekb compiles for.
    pub target: String,
    /// The longest one execution of ekb's plan may take.
    pub exec_timeout: Duration,
    pub json: bool,
}

/// ekb's device: the GPU runtime serving on this machine, and its CUDA GPU's name.
struct Gpu {
    session: DeviceSession,
    name: String,
}

/// Starts the GPU runtime and checks that it sees a CUDA device.
fn open_gpu(target: &TargetProfile, exec_timeout: Duration) -> Result<Gpu, String> {
    let arch = crate::source::arch(target)?;
    let runtime = crate::runtime::find_or_build(arch, true)?;
    let link =
        transport::connect(&Device::Local, &runtime, &RemoteOptions::default()).map_err(|d| d.to_string())?;
    let serve = vec!["--timeout-ms".to_string(), exec_timeout.as_millis().max(1).to_string()];
    let mut session = DeviceSession::open(link, serve).map_err(|d| d.to_string())?;
    let info = match session.device_info() {
        Answer::Ok(i) => i,
        Answer::Refused { message, .. } => {
            return Err(format!("the GPU runtime refused DeviceInfo: {message}"))
        }
        Answer::Lost(l) => return Err(format!("the GPU runtime stopped: {}", l.0)),
        Answer::Down(d) => return Err(d.to_string()),
    };
    let cuda = info.gpus.iter().find(|g| g.backend == ekb_wire::payload::Backend::Cuda);
    match cuda {
        Some(g) => Ok(Gpu { name: g.name.clone(), session }),
        None => {
            let seen: Vec<String> =
                info.gpus.iter().map(|g| format!("{} ({})", g.name, g.backend.name())).collect();
            Err(format!(
                "the GPU runtime `{}` sees no CUDA device (GPUs: {}); it needs libcuda and NVRTC (libnvrtc) on LD_LIBRARY_PATH, docs/gpu.md \"Testing\"",
                runtime.path.display(),
                if seen.is_empty() { "none".to_string() } else { seen.join(", ") }
            ))
        }
    }
}

pub fn run(opts: CudaBench) -> Result<ExitCode, String> {
    let mut filter = task_cli::filter(&opts.select)?;
    filter.backend = Some(Backend::Cuda);
    let (suite, broken) = task_cli::load(&opts.dir)?;
    if broken {
        return Err("error: fix the task files above first".into());
    }
    let tasks: Vec<&Task> = suite
        .select(&filter)
        .into_iter()
        .filter(|t| opts.only.as_deref().is_none_or(|o| t.name.contains(o)))
        .enumerate()
        .filter(|(i, _)| opts.shard.is_none_or(|s| s.keeps(*i)))
        .map(|(_, t)| t)
        .collect();
    if tasks.is_empty() {
        return Err("error: no CUDA instance matches the selection, `--only` and `--shard`\n  = hint: `ekb tasks list --backend cuda` with the same filters lists them".into());
    }
    let target = crate::source::target(&opts.target)?;
    let mut left_out = Vec::new();
    eprintln!("starting the GPU runtime and the torch helper ...");
    let mut gpu = open_gpu(&target, opts.exec_timeout)
        .map_err(|e| left_out.push((EKB.to_string(), e.trim().trim_start_matches("error: ").to_string())))
        .ok();
    let mut helper = None;
    if !opts.sides.is_empty() {
        match Helper::start() {
            Ok(h) => helper = Some(h),
            Err(e) => left_out.extend(opts.sides.iter().map(|s| (s.label().to_string(), e.clone()))),
        }
    }
    if gpu.is_none() && helper.is_none() {
        return Err(format!(
            "error: nothing can be measured here:\n{}",
            table::left_out_lines(&left_out, "").join("\n")
        ));
    }
    for line in table::left_out_lines(&left_out, "left out: ") {
        eprintln!("{line}");
    }
    let device = gpu
        .as_ref()
        .map(|g| g.name.clone())
        .or_else(|| helper.as_ref().and_then(|h| h.ready.device.clone()))
        .unwrap_or_default();
    let (torch_version, triton) =
        helper.as_ref().map_or((None, None), |h| (h.ready.torch.clone(), h.ready.triton.clone()));
    eprintln!(
        "{} CUDA instance(s) on {device}: ekb (target `{}`){}; {} rounds of about {} ms per side",
        tasks.len(),
        target.name,
        torch_version.as_ref().map_or(String::new(), |v| format!(", torch {v}")),
        opts.rounds,
        opts.round.as_millis()
    );
    let mut rows = Vec::new();
    for (i, task) in tasks.iter().enumerate() {
        eprint!("[{}/{}] {}: ", i + 1, tasks.len(), task.name);
        let row = bench_task(task, &target, (&mut gpu, &mut helper), &left_out, &opts);
        eprintln!("{}", table::summary(&row));
        rows.push(row);
    }
    let ekb_correct = rows.iter().all(|r| r.sides[0].correct);
    let names: Vec<String> = opts.sides.iter().map(|s| s.label().to_string()).collect();
    let geomeans = table::geomeans(&rows, &names);
    let report = Report {
        target: target.name.clone(),
        device,
        torch: torch_version,
        triton,
        rounds: opts.rounds,
        round_ms: opts.round.as_secs_f64() * 1e3,
        left_out,
        rows,
        geomeans,
    };
    if opts.json {
        println!("{}", serde_json::to_string_pretty(&report).expect("the report serialises"));
    } else {
        for line in table::table(&report) {
            println!("{line}");
        }
    }
    if let Some(g) = gpu {
        g.session.close();
    }
    Ok(if ekb_correct && report.left_out.is_empty() { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

/// One side being timed on an instance.
enum Runner {
    /// ekb's payload, held in one kernel process for every round.
    Ekb(HeldCandidate),
    /// A torch side and the length of one replay.
    Torch(TorchSide, Duration),
}

/// One instance: every side started (or n/a), timed in alternation, then dropped.
fn bench_task(
    task: &Task,
    target: &TargetProfile,
    (gpu, helper): (&mut Option<Gpu>, &mut Option<Helper>),
    left_out: &[(String, String)],
    opts: &CudaBench,
) -> Row {
    let missing =
        |name: &str| left_out.iter().find(|(n, _)| n == name).map(|(_, why)| format!("left out: {why}"));
    let reference = reference_outputs(&task.graph, 0).map_err(|d| {
        format!(
            "the reference interpreter failed on seed 0: {}",
            task.source.locate(d).to_string().trim_end()
        )
    });
    let mut sides = Vec::new();
    let mut runners: Vec<Option<Runner>> = Vec::new();
    let mut loaded_id = None;
    let ekb = match (gpu.as_mut(), &reference) {
        (None, _) => Err(missing(EKB).unwrap_or_default()),
        (_, Err(e)) => Err(e.clone()),
        (Some(g), Ok(r)) => start_ekb(task, target, r, g),
    };
    match ekb {
        Ok((id, setup)) => {
            loaded_id = Some(id);
            let g = gpu.as_mut().expect("ekb runs only with a GPU");
            match HeldCandidate::hold(&mut g.session, id, None) {
                Ok(held) => {
                    sides.push(Side::started(EKB, None, setup));
                    runners.push(Some(Runner::Ekb(held)));
                }
                Err(Timed::Wrong(why)) => {
                    sides.push(Side::started(EKB, Some(why), setup));
                    runners.push(None);
                }
                Err(other) => {
                    let mut side = Side::started(EKB, None, setup);
                    side.fail(format!("its checks failed: {}", other.describe()));
                    sides.push(side);
                    runners.push(None);
                }
            }
        }
        Err(why) => {
            sides.push(Side::unavailable(EKB, why));
            runners.push(None);
        }
    }
    let loaded = match (&reference, opts.sides.is_empty()) {
        (_, true) => Ok(Vec::new()),
        (Err(e), _) => Err(e.clone()),
        (Ok(r), _) => start_torch(task, r, helper, &opts.sides),
    };
    for (k, &side) in opts.sides.iter().enumerate() {
        let state = match &loaded {
            Err(_) if helper.is_none() && missing(side.label()).is_some() => {
                Err(missing(side.label()).unwrap_or_default())
            }
            Err(e) => Err(e.clone()),
            Ok(l) => Ok(l[k].clone()),
        };
        match state {
            Ok(Loaded { unavailable: Some(why), .. }) | Err(why) => {
                sides.push(Side::unavailable(side.label(), why));
                runners.push(None);
            }
            Ok(Loaded { mismatch, per_run_ns, setup_s, .. }) => {
                let per_run = Duration::from_nanos(per_run_ns.unwrap_or(0.0).max(0.0) as u64);
                // A wrong side is shown, never timed.
                runners.push(mismatch.is_none().then_some(Runner::Torch(side, per_run)));
                sides.push(Side::started(side.label(), mismatch, setup_s));
            }
        }
    }
    let mut rounds: Vec<Vec<Vec<f64>>> = vec![Vec::new(); runners.len()];
    for round in 0..opts.rounds {
        for k in 0..runners.len() {
            let i = (k + round) % runners.len();
            let Some(runner) = &mut runners[i] else { continue };
            let got = match runner {
                Runner::Ekb(held) => {
                    time_ekb(gpu.as_mut().expect("ekb runs only with a GPU"), held, opts.round)
                }
                Runner::Torch(side, per_run) => time_torch(helper, *side, *per_run, opts.round),
            };
            match got {
                Ok(samples) => rounds[i].push(samples),
                Err(Timed::Wrong(why)) => {
                    sides[i] = Side::started(&sides[i].name, Some(why), sides[i].setup_s);
                    runners[i] = None;
                    rounds[i].clear();
                }
                Err(other) => {
                    sides[i].fail(format!("a timed run failed: {}", other.describe()));
                    runners[i] = None;
                    rounds[i].clear();
                }
            }
        }
    }
    if let (Some(id), Some(g)) = (loaded_id, gpu.as_mut()) {
        if let Some(Some(Runner::Ekb(held))) = runners.into_iter().next() {
            match held.release(&mut g.session) {
                Ok(()) => {}
                Err(Timed::Wrong(why)) => {
                    sides[0] = Side::started(&sides[0].name, Some(why), sides[0].setup_s);
                    rounds[0].clear();
                }
                Err(other) => {
                    sides[0].fail(format!("the checks after its rounds failed: {}", other.describe()));
                    rounds[0].clear();
                }
            }
        }
        g.session.unload(id);
    }
    if let Some(h) = helper.as_mut() {
        if let Err(e) = h.drop_task() {
            eprint!("(the torch helper failed to drop the task: {e}; restarting it) ");
            *helper = Helper::start().ok();
        }
    }
    table::row(task.name.clone(), sides, &rounds)
}

/// ekb's side: the task's graph built with the default schedule for the CUDA target (seed 0,
/// `reference` as its expected outputs, the task's tolerance) and loaded; the payload and the
/// seconds it took.
fn start_ekb(
    task: &Task,
    target: &TargetProfile,
    reference: &[Tensor],
    gpu: &mut Gpu,
) -> Result<(PayloadId, f64), String> {
    let t0 = Instant::now();
    let options = BuildOptions {
        schedule: Schedule::Default,
        seeds: vec![0],
        timing: TimingSettings::DEFAULT,
        references: Some(ekb_deploy::references::References::given(vec![reference.to_vec()])),
        tolerance: task.meta.payload_tolerance(),
    };
    let built = build_baseline(task, Schedule::Default, Backend::Cuda, target, &options).map_err(|ds| {
        let first = ds.iter().find(|d| d.is_error()).or(ds.first()).map(|d| d.to_string());
        format!("compile failure: {}", first.unwrap_or_default().lines().next().unwrap_or("?"))
    })?;
    match gpu.session.load(built.payload) {
        Answer::Ok(id) => Ok((id, t0.elapsed().as_secs_f64())),
        Answer::Refused { kind, message } => {
            Err(format!("the GPU runtime refused the payload ({kind}): {message}"))
        }
        Answer::Lost(l) => Err(format!("the GPU runtime stopped while loading: {}", l.0)),
        Answer::Down(d) => Err(format!("the GPU runtime cannot be started again: {d}")),
    }
}

/// The torch sides of a task: its I/O on seed 0 exported (`reference` as the outputs) and
/// loaded by the helper.
fn start_torch(
    task: &Task,
    reference: &[Tensor],
    helper: &mut Option<Helper>,
    sides: &[TorchSide],
) -> Result<Vec<Loaded>, String> {
    let Some(h) = helper.as_mut() else {
        return Err("the torch helper is not running".into());
    };
    if !task.twin.is_file() {
        return Err(format!("the task has no PyTorch twin `{}`", task.twin.display()));
    }
    let dir = tempfile::tempdir().map_err(|e| format!("cannot make a temporary directory: {e}"))?;
    write_io(task, 0, reference, dir.path())?;
    let loaded = h.load(dir.path(), sides);
    if let Err(e) = &loaded {
        // A helper that died is started again for the next instance.
        eprint!("({e}; restarting the torch helper) ");
        *helper = Helper::start().ok();
    }
    loaded
}

/// One round of ekb: a turn of its held payload, timed for about `budget`; one sample per
/// execution's device time (a batch's mean for very short plans), in milliseconds.
fn time_ekb(gpu: &mut Gpu, held: &mut HeldCandidate, budget: Duration) -> Result<Vec<f64>, Timed> {
    let t = held.turn(&mut gpu.session, budget)?;
    Ok(t.samples_ns.iter().map(|&ns| ns as f64 / 1e6).collect())
}

/// One round of a torch side: replays filling about `budget` (at least 3, at most 10000).
fn time_torch(
    helper: &mut Option<Helper>,
    side: TorchSide,
    per_run: Duration,
    budget: Duration,
) -> Result<Vec<f64>, Timed> {
    let h = helper.as_mut().ok_or_else(|| Timed::Failed("the torch helper is not running".into()))?;
    let n = (budget.as_secs_f64() / per_run.as_secs_f64().max(1e-7)).clamp(3.0, 10_000.0) as u32;
    let samples = h.time(side, n).map_err(Timed::Failed)?;
    Ok(samples.into_iter().map(|ns| ns as f64 / 1e6).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_split_the_selection_into_interleaved_shares() {
        let s = Shard::parse("2/3").unwrap();
        assert_eq!(s, Shard { k: 2, n: 3 });
        let kept: Vec<usize> = (0..8).filter(|&i| s.keeps(i)).collect();
        assert_eq!(kept, [1, 4, 7]);
        // Every instance is in exactly one share.
        for i in 0..10 {
            assert_eq!((1..=3).filter(|&k| Shard { k, n: 3 }.keeps(i)).count(), 1);
        }
        assert!(Shard::parse("1/1").unwrap().keeps(5));
        for bad in ["0/2", "3/2", "1/0", "2", "a/b", ""] {
            assert!(Shard::parse(bad).unwrap_err().contains("K/N"), "{bad}");
        }
    }
}
