//! Runs built in code for the tests of metrics and reports, with their expected values worked
//! out by hand in the comments beside them.

use crate::results::*;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// An instance; the domain is its backend's.
pub(crate) fn inst(task: &str, backend: &str, level: u8) -> Instance {
    let domain = match backend {
        "cpu" => "mobile",
        "cuda" => "robotics",
        _ => "aiot",
    };
    Instance {
        task: task.into(),
        backend: backend.into(),
        level,
        domain: domain.into(),
        family: "test".into(),
    }
}

/// A plan with a described environment.
pub(crate) fn info(samples: u32, instances: Vec<Instance>) -> RunInfo {
    let env = |target: &str, device: &str, runtime: &str, gpu: Option<&str>| BackendEnv {
        target: target.into(),
        device: device.into(),
        runtime: runtime.into(),
        runtime_version: "0.1.0".into(),
        arch: "aarch64".into(),
        cpu_model: "Cortex-A76".into(),
        cores: 8,
        memory_bytes: 8 << 30,
        gpu: gpu.map(String::from),
    };
    RunInfo {
        format: RESULTS_FORMAT,
        created: "2026-01-02T03:04:05Z".into(),
        ekb_version: "0.1.0".into(),
        command: vec!["ekb".into(), "eval".into(), "--out".into(), "runs/a".into()],
        candidates: "builtin:default".into(),
        baseline: "naive".into(),
        samples,
        seeds: vec![0, 1, 2],
        timing: TimingSettings {
            cold_cache: false,
            target_rse: 0.01,
            max_ci: 0.02,
            budget_s: 2.0,
            timeout_s: 20.0,
            threads: Some(4),
        },
        backends: BTreeMap::from([
            ("cpu".to_string(), env("rk3588", "ssh://board", "ekb-rt", None)),
            ("cuda".to_string(), env("jetson-orin", "ssh://jetson", "ekb-rt-gpu", Some("Orin"))),
            ("opencl".to_string(), env("rk3588", "ssh://board", "ekb-rt-gpu", Some("Mali-G610 r0p0"))),
        ]),
        tools: BTreeMap::from([("clang".to_string(), "19.1.7".to_string())]),
        instances,
    }
}

pub(crate) fn run(dir: &str, info: RunInfo, results: Vec<CandidateResult>) -> Run {
    Run { dir: PathBuf::from(dir), info, results, warnings: vec![] }
}

fn side(cv: f64) -> SideTiming {
    SideTiming { median_ns: 1000.0, min_ns: 900.0, cv, spread: cv, reps: 1, steps: Vec::new() }
}

fn timing(speedup: f64, stable: bool) -> PairedTiming {
    PairedTiming {
        speedup,
        ci_low: speedup * 0.99,
        ci_high: speedup * 1.01,
        confidence: 0.95,
        rse: 0.005,
        stable,
        attempts: 1,
        stop: "target_reached".into(),
        clock: "monotonic".into(),
        cold_cache: false,
        threads: 4,
        baseline: side(0.02),
        candidate: side(if stable { 0.02 } else { 0.3 }),
        pairs: vec![[1000, 500]],
        engine: None,
    }
}

/// A compiled, correct candidate timed at `speedup`, stable, baseline fine.
pub(crate) fn timed(i: &Instance, sample: u32, speedup: f64) -> CandidateResult {
    CandidateResult {
        instance: i.clone(),
        sample,
        candidate: CandidateText {
            origin: "builtin:default".into(),
            kind: "l1".into(),
            sha256: None,
            text: None,
        },
        compiled: true,
        correct: true,
        failure: None,
        timing: Some(timing(speedup, true)),
        baseline_failure: None,
        memory: None,
        passes: None,
        seconds: Phases::default(),
        finished: "2026-01-02T03:04:06Z".into(),
        device: None,
        median_ns: None,
    }
}

/// A candidate that failed with `class` (compiled unless the class is before compilation).
pub(crate) fn failed(i: &Instance, sample: u32, class: FailureClass) -> CandidateResult {
    let compiled =
        !matches!(class, FailureClass::NoCandidate | FailureClass::SyntaxApi | FailureClass::Compile);
    CandidateResult {
        compiled,
        correct: false,
        failure: Some(FailureRecord { class, detail: class.name().into(), evidence: "evidence".into() }),
        timing: None,
        ..timed(i, sample, 1.0)
    }
}

/// A correct candidate whose timing never became stable (recorded ratio `speedup`).
pub(crate) fn unstable(i: &Instance, sample: u32, speedup: f64) -> CandidateResult {
    CandidateResult {
        failure: Some(FailureRecord {
            class: FailureClass::UnstableTiming,
            detail: "unstable_timing".into(),
            evidence: "candidate cv 0.3 > 0.1".into(),
        }),
        timing: Some(timing(speedup, false)),
        ..timed(i, sample, speedup)
    }
}

/// A correct candidate whose baseline failed.
pub(crate) fn baseline_failed(i: &Instance, sample: u32) -> CandidateResult {
    CandidateResult {
        timing: None,
        baseline_failure: Some("baseline: timeout after 60 s".into()),
        ..timed(i, sample, 1.0)
    }
}

pub(crate) fn with_memory(mut r: CandidateResult, candidate: u64, baseline: u64) -> CandidateResult {
    r.memory = Some(MemoryRecord { candidate_peak_bytes: candidate, baseline_peak_bytes: Some(baseline) });
    r
}

/// `r` with a graph-passes record: `(kernels, planned peak)` before and after the passes.
pub(crate) fn with_passes(
    mut r: CandidateResult,
    before: (usize, u64),
    after: (usize, u64),
) -> CandidateResult {
    let size = |(kernels, planned_peak_bytes)| ProgramSize { kernels, planned_peak_bytes };
    r.passes = Some(PassesRecord { before: size(before), after: size(after) });
    r
}

/// Seven instances, two samples each:
///
/// | instance        | sample 0                         | sample 1                      |
/// |-----------------|----------------------------------|-------------------------------|
/// | A relu cpu L1   | correct, 2.0×, mem 1000/2000     | correct, 12.0× (flagged), mem 1000/1000 |
/// | B conv cpu L2   | compiled, incorrect, mem 100/1000| correct, 0.5×, mem 500/1000   |
/// | C relu cuda L1  | correct, exactly 1.0×, mem 3000/750 | no result                  |
/// | D gemm cuda L1  | syntax/API                       | compile                       |
/// | E net opencl L3 | no result                        | no result                     |
/// | F add opencl L1 | correct, baseline failed         | correct, unstable (3.0×)      |
/// | G pool cpu L2   | no candidate                     | no candidate                  |
///
/// Graph passes (kernels, planned peak, before -> after): A sample 0 4, 4096 -> 2, 2048;
/// A sample 1 4, 4096 -> 3, 4096; B sample 0 5, 1000 -> 4, 500; no other record.
pub(crate) fn sample_run() -> Run {
    let [a, b, c, d, e, f, g] = [
        inst("relu", "cpu", 1),
        inst("conv", "cpu", 2),
        inst("relu", "cuda", 1),
        inst("gemm", "cuda", 1),
        inst("net", "opencl", 3),
        inst("add", "opencl", 1),
        inst("pool", "cpu", 2),
    ];
    let results = vec![
        with_passes(with_memory(timed(&a, 0, 2.0), 1000, 2000), (4, 4096), (2, 2048)),
        with_passes(with_memory(timed(&a, 1, 12.0), 1000, 1000), (4, 4096), (3, 4096)),
        with_passes(with_memory(failed(&b, 0, FailureClass::Correctness), 100, 1000), (5, 1000), (4, 500)),
        with_memory(timed(&b, 1, 0.5), 500, 1000),
        with_memory(timed(&c, 0, 1.0), 3000, 750),
        failed(&d, 0, FailureClass::SyntaxApi),
        failed(&d, 1, FailureClass::Compile),
        baseline_failed(&f, 0),
        unstable(&f, 1, 3.0),
        failed(&g, 0, FailureClass::NoCandidate),
        failed(&g, 1, FailureClass::NoCandidate),
    ];
    run("runs/sample", info(2, vec![a, b, c, d, e, f, g]), results)
}

/// Three instances, one sample each, for exact report texts:
/// relu on cpu (L1) correct at 1.5×, conv on cpu (L2) a memory failure, relu on cuda (L1)
/// correct at 0.8×; graph passes: relu on cpu 3 kernels, 8 KiB -> 2 kernels, 4 KiB, relu on cuda
/// 2 kernels, 1 KiB both ways.
pub(crate) fn small_run() -> Run {
    let [a, b, c] = [inst("relu", "cpu", 1), inst("conv", "cpu", 2), inst("relu", "cuda", 1)];
    let results = vec![
        with_passes(timed(&a, 0, 1.5), (3, 8192), (2, 4096)),
        failed(&b, 0, FailureClass::Memory),
        with_passes(timed(&c, 0, 0.8), (2, 1024), (2, 1024)),
    ];
    run("runs/small", info(1, vec![a, b, c]), results)
}
