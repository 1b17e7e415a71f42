//! The suite's quality rules, checked once per task by `ekb tasks validate`.
//!
//! For each task the reference interpreter runs on the three protocol seeds, and every output
//! must be usable as a correctness oracle (the exact criteria, with their thresholds, are in
//! [`Rules`] and `docs/tasks.md`):
//! - finite: no NaN or infinity;
//! - not near-zero: a kernel that writes zeros matches at most `max_constant_share` of the
//!   elements within the task's tolerance;
//! - not near-constant: neither does a kernel that writes any single constant (the best one,
//!   found exactly by a sweep over the sorted values);
//! - different across seeds: between any two seeds at least `min_seed_difference` of the
//!   elements differ by more than the tolerance, so hard-coding one seed's outputs fails;
//! - big enough to time: the task's roofline time on a nominal edge CPU is at least
//!   `min_edge_seconds`;
//! - lowerable: the `naive` CPU lowering verifies and compiles with clang-19 for this machine
//!   (the compile driver, `ekb_deploy::driver`) and, run in this process on seed 0, matches the
//!   reference within the task's tolerance (one seed: the lowering does not depend on the data,
//!   and the naive code of a whole model is slow).
//!
//! What it keeps true: every rule is a pure function of the outputs and the graph, reported as
//! a sentence naming the output, the seed and the measured share; nothing here panics on a
//! task that loaded.

use super::cost::{self, Cost};
use super::Task;
use ekb_deploy::driver::{self, BackendChoice, CompileOptions, Program, Sources, Stage};
use ekb_ir::l0;
use ekb_ir::tensor::{Tensor, Tolerance};
use ekb_lower::Schedule;
use serde::Serialize;
use std::time::Instant;

/// The seeds of the evaluation protocol.
pub const SEEDS: [u64; 3] = [0, 1, 2];

/// Thresholds of the rules.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Rules {
    /// Largest share of an output's elements that one constant (zero included) may match.
    pub max_constant_share: f64,
    /// Smallest share of elements that must differ between the outputs of two seeds.
    pub min_seed_difference: f64,
    /// Nominal edge CPU for the size rule: f32 operations per second ...
    pub edge_flops_per_s: f64,
    /// ... and DRAM bytes per second.
    pub edge_bytes_per_s: f64,
    /// Smallest roofline time on that CPU.
    pub min_edge_seconds: f64,
}

impl Default for Rules {
    fn default() -> Rules {
        Rules {
            max_constant_share: 0.75,
            min_seed_difference: 0.25,
            edge_flops_per_s: 100e9,
            edge_bytes_per_s: 10e9,
            min_edge_seconds: 1e-4,
        }
    }
}

/// What one output looked like on one seed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OutputStats {
    pub output: String,
    pub seed: u64,
    pub elements: usize,
    pub nonfinite: usize,
    /// Share of elements a zero output would match within tolerance.
    pub zero_share: f64,
    /// Share of elements the best constant output would match within tolerance.
    pub constant_share: f64,
}

/// The result of validating one task (without its twin, which [`super::twin`] checks).
#[derive(Debug, Clone, Serialize)]
pub struct TaskReport {
    pub name: String,
    pub ok: bool,
    /// One sentence per broken rule.
    pub problems: Vec<String>,
    pub cost: Cost,
    /// Roofline time on the nominal edge CPU of [`Rules`].
    pub edge_seconds: f64,
    /// Wall time of the three reference runs.
    pub interp_seconds: f64,
    pub outputs: Vec<OutputStats>,
    pub seed_differences: Vec<SeedDifference>,
}

/// How much one output changes between two seeds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SeedDifference {
    pub output: String,
    pub seeds: [u64; 2],
    /// Share of elements that differ by more than the tolerance.
    pub share: f64,
}

/// Whether `got` is within `tol` of the reference value `r` (the protocol's comparison).
fn close(r: f64, got: f64, tol: Tolerance) -> bool {
    (got - r).abs() <= tol.atol + tol.rtol * r.abs()
}

/// Share of `values` a kernel writing zeros would match.
pub fn zero_share(values: &[f64], tol: Tolerance) -> f64 {
    share(values.iter().filter(|&&v| v.is_finite() && close(v, 0.0, tol)).count(), values.len())
}

/// The largest share of `values` that a single constant matches within `tol` (the reference
/// being each value). Element `v` is matched by `c` when `c` lies in
/// `[v - t(v), v + t(v)]`, `t(v) = atol + rtol·|v|`; both ends grow with `v` (rtol < 1), so the
/// values one constant matches are a contiguous run of the sorted values, and a run `i..=j`
/// has a common point when `v_j - t(v_j) <= v_i + t(v_i)`. A two-pointer sweep finds the longest.
pub fn best_constant_share(values: &[f64], tol: Tolerance) -> f64 {
    let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    v.sort_by(f64::total_cmp);
    let t = |x: f64| tol.atol + tol.rtol * x.abs();
    let (mut best, mut j) = (0, 0);
    for i in 0..v.len() {
        j = j.max(i);
        while j + 1 < v.len() && v[j + 1] - t(v[j + 1]) <= v[i] + t(v[i]) {
            j += 1;
        }
        best = best.max(j + 1 - i);
    }
    share(best, values.len())
}

/// Share of elements where `b` differs from the reference `a` by more than `tol`.
pub fn difference_share(a: &[f64], b: &[f64], tol: Tolerance) -> f64 {
    share(a.iter().zip(b).filter(|(&x, &y)| !close(x, y, tol)).count(), a.len())
}

fn share(count: usize, total: usize) -> f64 {
    if total == 0 {
        0.0
    } else {
        count as f64 / total as f64
    }
}

/// The reference outputs of a task on one seed.
pub fn reference(task: &Task, seed: u64) -> Result<Vec<Tensor>, ekb_ir::Diagnostic> {
    l0::interp::run_seeded(&task.graph, seed).map_err(|d| task.source.locate(d))
}

/// Applies the output rules to reference runs (`(seed, outputs)` in graph output order);
/// returns the statistics, the seed differences and the problems found.
pub fn check_outputs(
    task: &Task,
    runs: &[(u64, Vec<Tensor>)],
    rules: &Rules,
) -> (Vec<OutputStats>, Vec<SeedDifference>, Vec<String>) {
    let mut stats = Vec::new();
    let mut diffs = Vec::new();
    let mut problems = Vec::new();
    let pct = |x: f64| format!("{:.1}%", 100.0 * x);
    for (k, o) in task.graph.outputs.iter().enumerate() {
        let tol = task.tolerance(o.ty.dtype);
        for (seed, outs) in runs {
            let data = &outs[k].data;
            let s = OutputStats {
                output: o.name.clone(),
                seed: *seed,
                elements: data.len(),
                nonfinite: data.iter().filter(|x| !x.is_finite()).count(),
                zero_share: zero_share(data, tol),
                constant_share: best_constant_share(data, tol),
            };
            if s.nonfinite > 0 {
                problems.push(format!(
                    "output `{}` (seed {seed}): {} of {} elements are NaN or infinite",
                    o.name, s.nonfinite, s.elements
                ));
            } else if s.zero_share > rules.max_constant_share {
                problems.push(format!(
                    "output `{}` (seed {seed}) is near-zero: an all-zero output matches {} of its elements (at most {} allowed)",
                    o.name,
                    pct(s.zero_share),
                    pct(rules.max_constant_share)
                ));
            } else if s.constant_share > rules.max_constant_share {
                problems.push(format!(
                    "output `{}` (seed {seed}) is near-constant: one constant matches {} of its elements (at most {} allowed)",
                    o.name,
                    pct(s.constant_share),
                    pct(rules.max_constant_share)
                ));
            }
            stats.push(s);
        }
        for (i, (sa, a)) in runs.iter().enumerate() {
            for (sb, b) in &runs[i + 1..] {
                let d = difference_share(&a[k].data, &b[k].data, tol);
                if d < rules.min_seed_difference {
                    problems.push(format!(
                        "output `{}` hardly depends on the seed: seeds {sa} and {sb} differ in only {} of its elements (at least {} required)",
                        o.name,
                        pct(d),
                        pct(rules.min_seed_difference)
                    ));
                }
                diffs.push(SeedDifference { output: o.name.clone(), seeds: [*sa, *sb], share: d });
            }
        }
    }
    (stats, diffs, problems)
}

/// Runs a task's reference on every protocol seed and applies every rule but the twin's.
pub fn validate_task(task: &Task, rules: &Rules) -> TaskReport {
    let cost = cost::estimate(&task.graph);
    let edge_seconds = cost.roofline_seconds(rules.edge_flops_per_s, rules.edge_bytes_per_s);
    let mut report = TaskReport {
        name: task.name.clone(),
        ok: false,
        problems: Vec::new(),
        cost,
        edge_seconds,
        interp_seconds: 0.0,
        outputs: Vec::new(),
        seed_differences: Vec::new(),
    };
    if edge_seconds < rules.min_edge_seconds {
        report.problems.push(format!(
            "too small to time: {} FLOP and {} bytes take at least {:.1} µs on the nominal edge CPU \
             ({:.0} GFLOP/s, {:.0} GB/s); at least {:.0} µs required",
            cost.flops,
            cost.min_bytes,
            edge_seconds * 1e6,
            rules.edge_flops_per_s / 1e9,
            rules.edge_bytes_per_s / 1e9,
            rules.min_edge_seconds * 1e6
        ));
    }
    let start = Instant::now();
    let mut runs = Vec::new();
    for seed in SEEDS {
        match reference(task, seed) {
            Ok(outs) => runs.push((seed, outs)),
            Err(d) => {
                report.problems.push(format!("the reference interpreter failed on seed {seed}:\n{d}"));
                break;
            }
        }
    }
    report.interp_seconds = start.elapsed().as_secs_f64();
    if runs.len() == SEEDS.len() {
        let (stats, diffs, problems) = check_outputs(task, &runs, rules);
        report.outputs = stats;
        report.seed_differences = diffs;
        report.problems.extend(problems);
        report.problems.extend(check_naive(task, SEEDS[0], &runs[0].1));
    }
    report.ok = report.problems.is_empty();
    report
}

/// The naive CPU lowering of `task`, compiled for this machine and run in this process on
/// `seed`, against that seed's reference outputs; one sentence per problem.
pub fn check_naive(task: &Task, seed: u64, reference: &[Tensor]) -> Vec<String> {
    let naive = |what: &str, d: &[ekb_ir::Diagnostic]| {
        let d: Vec<String> = d.iter().map(|d| d.to_string()).collect();
        vec![format!("naive lowering: {what}:\n{}", d.join("\n"))]
    };
    let target = match ekb_ir::TargetProfile::load("host") {
        Ok(t) => t,
        Err(e) => return vec![format!("naive lowering: no `host` target profile: {e}")],
    };
    let options =
        CompileOptions { schedule: Schedule::Naive, backend: BackendChoice::Cpu, ..Default::default() };
    let sources = Sources { graph: Some(&task.source), module: None };
    let artifact = match driver::compile(Program::Graph(&task.graph), sources, &target, &options) {
        Ok(a) => a,
        Err(f) => {
            return match f.stage {
                Stage::GraphPasses | Stage::Lower | Stage::Schedule => {
                    naive("lowering failed", &f.diagnostics)
                }
                Stage::Verify => {
                    let errors: Vec<_> =
                        f.diagnostics.into_iter().filter(ekb_ir::Diagnostic::is_error).collect();
                    naive("the loop program does not verify", &errors)
                }
                Stage::Bind | Stage::Adapter | Stage::Toolchain => naive("compiling failed", &f.diagnostics),
            }
        }
    };
    let host = match driver::load_host(&artifact, 1) {
        Ok(h) => h,
        Err(d) => return naive("compiling failed", &[d]),
    };
    let module = artifact.module;
    let inputs = match l0::inputs::generate(&task.graph, seed) {
        Ok(i) => i.into_iter().collect(),
        Err(d) => return naive("no inputs", &[d]),
    };
    let outputs = match host.run(&module, &inputs) {
        Ok(o) => o,
        Err(d) => return naive("running failed", &[d]),
    };
    let mut problems = Vec::new();
    for (o, r) in task.graph.outputs.iter().zip(reference) {
        let Some(got) = outputs.get(&o.name) else {
            problems.push(format!("naive lowering: output `{}` was not produced", o.name));
            continue;
        };
        if let Err(m) = ekb_ir::tensor::compare(r, &got.to_tensor(), task.tolerance(o.ty.dtype)) {
            problems.push(format!(
                "naive lowering: output `{}` differs from the reference on seed {seed}: {m}",
                o.name
            ));
        }
    }
    problems
}

/// Which twin checks `validate_suite` runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TwinChecks {
    /// None (the report says they were skipped).
    Skip,
    /// The static check always; the torch run where torch is importable.
    Auto,
}

/// Options of a suite validation.
#[derive(Debug, Clone)]
pub struct Options {
    pub rules: Rules,
    /// Tasks validated at once (each on its own thread).
    pub jobs: usize,
    pub twins: TwinChecks,
}

/// The result of validating a selection of tasks.
#[derive(Debug, Clone, Serialize)]
pub struct SuiteReport {
    pub ok: bool,
    pub rules: Rules,
    pub tasks: Vec<TaskReport>,
    /// What happened to the static twin check (`"ran"`, or why not).
    pub twin_static: String,
    /// What happened to the torch run (its summary line, or why it did not run).
    pub twin_torch: String,
}

/// Validates `tasks`: the static twin check first (one python3 process), then every task's
/// rules on `opts.jobs` threads, calling `progress(done, total, report)` as each finishes,
/// then, where torch is importable, the twins against seed 0's reference. A twin problem is a
/// problem of its task; a python3 that cannot run fails every task's twin check.
pub fn validate_suite(
    tasks: &[&Task],
    opts: &Options,
    progress: &(dyn Fn(usize, usize, &TaskReport) + Sync),
) -> SuiteReport {
    let (twin_problems, twin_static) = match opts.twins {
        TwinChecks::Skip => (vec![Vec::new(); tasks.len()], "skipped".to_string()),
        TwinChecks::Auto => match super::twin::static_check(tasks) {
            Ok(p) => (p, "ran".to_string()),
            Err(e) => (vec![vec![format!("twin: {e}")]; tasks.len()], format!("failed: {e}")),
        },
    };
    let next = std::sync::atomic::AtomicUsize::new(0);
    let done = std::sync::atomic::AtomicUsize::new(0);
    let slots: std::sync::Mutex<Vec<Option<TaskReport>>> = std::sync::Mutex::new(vec![None; tasks.len()]);
    std::thread::scope(|s| {
        for _ in 0..opts.jobs.clamp(1, tasks.len().max(1)) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if i >= tasks.len() {
                    break;
                }
                let mut r = validate_task(tasks[i], &opts.rules);
                r.problems.extend(twin_problems[i].iter().cloned());
                r.ok = r.problems.is_empty();
                let n = done.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
                progress(n, tasks.len(), &r);
                slots.lock().expect("no thread panicked holding the lock")[i] = Some(r);
            });
        }
    });
    let mut reports: Vec<TaskReport> = slots
        .into_inner()
        .expect("no thread panicked holding the lock")
        .into_iter()
        .map(|r| r.expect("every task was validated"))
        .collect();
    let twin_torch = match opts.twins {
        TwinChecks::Skip => "skipped".to_string(),
        TwinChecks::Auto => match super::twin::torch_version() {
            None => "skipped: python3 cannot import torch".to_string(),
            Some(_) => match tempfile::tempdir()
                .map_err(|e| e.to_string())
                .and_then(|d| super::twin::torch_check(tasks, SEEDS[0], d.path()))
            {
                Ok((problems, line)) => {
                    for r in &mut reports {
                        if let Some(ps) = problems.get(&r.name) {
                            r.problems.extend(ps.iter().cloned());
                            r.ok = false;
                        }
                    }
                    line
                }
                Err(e) => {
                    for r in &mut reports {
                        r.problems.push(format!("torch: the twin run failed: {e}"));
                        r.ok = false;
                    }
                    format!("failed: {e}")
                }
            },
        },
    };
    SuiteReport {
        ok: reports.iter().all(|r| r.ok),
        rules: opts.rules,
        tasks: reports,
        twin_static,
        twin_torch,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOL: Tolerance = Tolerance { atol: 1e-4, rtol: 1e-4 };

    #[test]
    fn the_naive_lowering_is_run_and_compared_with_the_reference() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("softmax_t.ekir");
        std::fs::write(
            &path,
            "# task: level=1 family=softmax domains=[mobile]\n# provenance: model=m layer=l module=m source=s\n\
             graph softmax_t(x: f32[8,33]) -> (y: f32[8,33]) {\n  %0: f32[8,33] = softmax(x, axis=-1)\n  return %0\n}\n",
        )
        .unwrap();
        let task = super::super::load_task(&path).unwrap();
        let good = reference(&task, 0).unwrap();
        assert_eq!(check_naive(&task, 0, &good), Vec::<String>::new());
        // Another seed's outputs stand in for a lowering that computes something else.
        let other = reference(&task, 1).unwrap();
        let problems = check_naive(&task, 0, &other);
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(
            problems[0].starts_with("naive lowering: output `y` differs from the reference on seed 0"),
            "{problems:?}"
        );
    }

    #[test]
    fn the_best_constant_is_found_exactly() {
        // 0.0, 0.00015 and 0.0002 are all within 1e-4 + 1e-4*|v| of c = 0.0001; 5.0 is not.
        assert_eq!(best_constant_share(&[0.0, 0.00015, 0.0002, 5.0], TOL), 0.75);
        // 0.0 and 0.00025 are 2.5e-4 apart: no constant is within about 1e-4 of both.
        assert_eq!(best_constant_share(&[0.0, 0.00025, 7.0, -7.0], TOL), 0.25);
        // rtol widens the window for large values: 1000 and 1000.2 share c = 1000.1.
        assert_eq!(best_constant_share(&[1000.0, 1000.2, 1.0, 2.0], TOL), 0.5);
        // Integers (exact tolerance): the most frequent value.
        let exact = Tolerance { atol: 0.0, rtol: 0.0 };
        assert_eq!(best_constant_share(&[3.0, 1.0, 3.0, 2.0, 3.0], exact), 0.6);
        // Non-finite values count in the total but are never matched.
        assert_eq!(best_constant_share(&[f64::NAN, 1.0], TOL), 0.5);
        assert_eq!(best_constant_share(&[], TOL), 0.0);
    }

    #[test]
    fn zero_share_and_seed_difference_follow_the_tolerance() {
        assert_eq!(zero_share(&[0.0, 5e-5, -1e-4, 0.5], TOL), 0.75);
        assert_eq!(difference_share(&[1.0, 2.0, 3.0, 4.0], &[1.0, 2.00001, 3.5, 0.0], TOL), 0.5);
    }

    #[test]
    fn default_rules_match_the_documented_thresholds() {
        let r = Rules::default();
        assert_eq!((r.max_constant_share, r.min_seed_difference, r.min_edge_seconds), (0.75, 0.25, 1e-4));
        // 10 MFLOP or 1 MB is the size floor on the nominal edge CPU.
        let c = Cost { flops: 10_000_000, min_bytes: 1000 };
        assert!((c.roofline_seconds(r.edge_flops_per_s, r.edge_bytes_per_s) - 1e-4).abs() < 1e-15);
    }
}
