//! Helpers of the evaluation tests: a tiny task, the real static runtime on this machine, and an
//! observer that counts.

#![allow(dead_code)] // each test binary uses its own subset

use ekb_deploy::transport::{self, Device, RemoteOptions};
use ekb_deploy::Runtime;
use ekb_eval::evaluate::candidate::Candidates;
use ekb_eval::evaluate::{self, Baseline, Config, DeviceLink, Observer};
use ekb_eval::results::{CandidateResult, Run};
use ekb_eval::tasks::{load_task, Backend, Task};
use ekb_ir::TargetProfile;
use ekb_llvm::Arch;
use ekb_lower::Schedule;
use ekb_wire::payload::TimingSettings;
use ekb_wire::protocol::PairedSettings;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::OnceLock;

/// `relu_tiny`: a 64x64 ReLU, a complete task with its header.
pub fn tiny_task(dir: &Path) -> (Task, tempfile::TempDir) {
    let keep = tempfile::tempdir_in(dir).unwrap();
    let path = keep.path().join("relu_tiny.ekir");
    std::fs::write(
        &path,
        "# task: level=1 family=activation domains=[mobile]\n\
         # provenance: model=test layer=relu module=torch.nn.ReLU source=tests\n\
         graph relu_tiny(x: f32[64,64]) -> (y: f32[64,64]) {\n  %0: f32[64,64] = relu(x)\n  return %0\n}\n",
    )
    .unwrap();
    let task = load_task(&path).unwrap_or_else(|ds| panic!("{}", ds[0]));
    (task, keep)
}

/// The static runtime for this machine, built once per test binary.
pub fn runtime() -> Runtime {
    static PATH: OnceLock<std::path::PathBuf> = OnceLock::new();
    let arch = Arch::host().expect("tests run on x86_64 or aarch64");
    let path = PATH.get_or_init(|| {
        ekb_e2e::static_runtime(
            ekb_deploy::runtime::musl_triple(arch),
            Path::new(env!("CARGO_TARGET_TMPDIR")),
        )
    });
    Runtime::inspect(path, arch, "test build").unwrap()
}

/// Evaluation settings for tests: the host profile, short timing, and no limit on the timing's
/// coefficient of variation (a 64x64 task runs in a few hundred nanoseconds, where outliers on a
/// busy machine make any limit flaky; the stability rule has a test of its own).
pub fn config(candidates: Candidates, samples: u32) -> Config {
    Config {
        candidates,
        baseline: Baseline::Schedule(Schedule::Naive),
        samples,
        seeds: vec![0, 1, 2],
        timing: TimingSettings { budget_ms: 200, ..TimingSettings::DEFAULT },
        paired: PairedSettings { threads: Some(2), max_ci: 1e9, ..PairedSettings::DEFAULT },
        targets: BTreeMap::from([(Backend::Cpu, TargetProfile::load("host").unwrap())]),
        // Short, so the candidate that loops for hours costs a second.
        exec_timeout: std::time::Duration::from_secs(1),
        pinning: Vec::new(),
        command: vec!["test".into()],
    }
}

/// Counts what it hears.
#[derive(Default)]
pub struct Quiet {
    pub finished: usize,
    pub already_done: usize,
}

impl Observer for Quiet {
    fn started(&mut self, _total: usize, done: usize) {
        self.already_done = done;
    }
    fn note(&mut self, _line: &str) {}
    fn finished(&mut self, _r: &CandidateResult) {
        self.finished += 1;
    }
}

/// Evaluates the CPU instance of `task` on this machine.
pub fn try_evaluate_with(
    task: &Task,
    cfg: &Config,
    out: &Path,
    resume: bool,
    obs: &mut Quiet,
) -> Result<Run, String> {
    let rt = runtime();
    let link = DeviceLink {
        transport: transport::connect(&Device::Local, &rt, &RemoteOptions::default()).unwrap(),
        name: "local".into(),
    };
    let planned = evaluate::instances(&[task], &[Backend::Cpu]);
    let devices = BTreeMap::from([(Backend::Cpu, link)]);
    evaluate::evaluate(&[task], planned, cfg, devices, out, resume, obs).map_err(|d| d.to_string())
}

/// [`try_evaluate_with`] with an observer nobody reads.
pub fn try_evaluate(task: &Task, cfg: &Config, out: &Path, resume: bool) -> Result<Run, String> {
    try_evaluate_with(task, cfg, out, resume, &mut Quiet::default())
}

/// [`try_evaluate_with`], failing the test on an error.
pub fn evaluate_dir(task: &Task, cfg: &Config, out: &Path, resume: bool, obs: &mut Quiet) -> Run {
    try_evaluate_with(task, cfg, out, resume, obs).unwrap_or_else(|e| panic!("{e}"))
}

/// The result of `sample`.
pub fn result_of(run: &Run, sample: u32) -> &CandidateResult {
    run.results.iter().find(|r| r.sample == sample).unwrap_or_else(|| panic!("no result for sample {sample}"))
}
