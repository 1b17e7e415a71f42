//! Metrics against tables worked out by hand from [`fixture::sample_run`] (its table is in its
//! doc comment).

use super::fixture::*;
use super::*;
use crate::results::FailureClass;

fn metrics() -> RunMetrics {
    run_metrics(&sample_run(), "sample", &[1, 2]).unwrap()
}

fn pooled(m: &RunMetrics, k: u32) -> &AtK {
    m.group(GroupKind::Pooled, "all").unwrap().at_k(k).unwrap()
}

fn hits(r: Rate) -> (usize, usize) {
    (r.hits, r.of)
}

/// Fast@p hits for every p of [`FAST_P`].
fn fast_hits(a: &AtK) -> Vec<usize> {
    FAST_P.iter().map(|&p| a.fast_at(p).unwrap().hits).collect()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-12
}

#[test]
fn pooled_rates_count_every_planned_instance_including_failures_and_missing_results() {
    let m = metrics();
    let k1 = pooled(&m, 1);
    // Compiled at k=1: A, B, C, F (D failed syntax, E has no result, G no candidate).
    assert_eq!(hits(k1.compile), (4, 7));
    // Correct at k=1: A, C, F.
    assert_eq!(hits(k1.correct), (3, 7));
    assert!(close(k1.correct.share.unwrap(), 3.0 / 7.0));
    // Counted speedups at k=1: A 2.0, C 1.0 (F's baseline failed).
    // p = 0, 0.5, 0.8: both; p = 1.0: only A (C equals p); p = 1.5: A; p = 2.0: none (A equals p).
    assert_eq!(fast_hits(k1), vec![2, 2, 2, 1, 1, 0]);
    assert!(k1.fast.iter().all(|f| f.rate.of == 7));
}

#[test]
fn a_correct_second_sample_counts_at_k2_but_not_at_k1() {
    let m = metrics();
    let k2 = pooled(&m, 2);
    assert_eq!(hits(k2.compile), (4, 7));
    // B becomes correct through its second sample.
    assert_eq!(hits(k2.correct), (4, 7));
    let b = m.outcomes.iter().find(|o| o.instance.task == "conv").unwrap();
    assert!(!b.at_k(1).unwrap().correct && b.at_k(1).unwrap().compiled);
    assert!(b.at_k(2).unwrap().correct);
    // At k=2 the best speedups are A 12.0 (sample 1), B 0.5, C 1.0; F's sample 1 is unstable.
    // p = 0: 3; p = 0.5: A, C (B equals p); p = 0.8: A, C; p = 1.0, 1.5, 2.0: A.
    assert_eq!(fast_hits(k2), vec![3, 2, 2, 1, 1, 1]);
    let a = m.outcomes.iter().find(|o| o.instance.task == "relu" && o.instance.backend == "cpu").unwrap();
    assert_eq!((a.at_k(1).unwrap().best_sample, a.at_k(2).unwrap().best_sample), (Some(0), Some(1)));
}

#[test]
fn speedup_spread_is_computed_by_hand() {
    let m = metrics();
    let k1 = pooled(&m, 1).speedup;
    // k=1: {2.0, 1.0}: geometric mean √2, median (1 + 2) / 2.
    assert_eq!(k1.count, 2);
    assert!(close(k1.geomean.unwrap(), std::f64::consts::SQRT_2));
    assert_eq!((k1.median, k1.min, k1.max), (Some(1.5), Some(1.0), Some(2.0)));
    // k=2: {12, 0.5, 1}: geometric mean ∛(12 · 0.5 · 1) = ∛6 = 1.8171205928321397.
    let k2 = pooled(&m, 2).speedup;
    assert_eq!(k2.count, 3);
    assert!(close(k2.geomean.unwrap(), 1.817_120_592_832_139_7), "{:?}", k2.geomean);
    assert_eq!((k2.median, k2.min, k2.max), (Some(1.0), Some(0.5), Some(12.0)));
}

#[test]
fn geometric_mean_of_three_values_and_median_of_an_even_count() {
    // 2 · 4 · 8 = 64, ∛64 = 4.
    assert!(close(summary::geomean(&[2.0, 4.0, 8.0]).unwrap(), 4.0));
    let s = Spread::of(&[3.0, 1.0, 4.0, 2.0]);
    assert_eq!((s.count, s.median, s.min, s.max), (4, Some(2.5), Some(1.0), Some(4.0)));
    let none = Spread::of(&[]);
    assert_eq!((none.count, none.geomean, none.median), (0, None, None));
}

#[test]
fn peak_memory_ratio_follows_the_candidate_that_counts() {
    let m = metrics();
    // k=1: A 1000/2000 = 0.5, C 3000/750 = 4 (B's sample 0 is incorrect: not counted); √(0.5·4) = √2.
    let k1 = pooled(&m, 1).memory;
    assert_eq!(k1.count, 2);
    assert!(close(k1.geomean_ratio.unwrap(), std::f64::consts::SQRT_2));
    // k=2: A's sample 1 (12×) 1.0, B's sample 1 0.5, C 4: ∛2.
    let k2 = pooled(&m, 2).memory;
    assert_eq!(k2.count, 3);
    assert!(close(k2.geomean_ratio.unwrap(), 2f64.cbrt()));
}

#[test]
fn graph_passes_follow_the_candidate_that_counts_else_the_first_with_a_record() {
    let m = metrics();
    // k=1: A's sample 0 (counted) 4 -> 2, peak 0.5; B has no counted or correct candidate: its
    // first record, sample 0, 5 -> 4, peak 0.5. 9 -> 6 kernels, geomean 0.5.
    let k1 = pooled(&m, 1).passes;
    assert_eq!((k1.count, k1.kernels_before, k1.kernels_after), (2, 9, 6));
    assert!(close(k1.kernels_ratio.unwrap(), 6.0 / 9.0));
    assert!(close(k1.geomean_peak_ratio.unwrap(), 0.5));
    // k=2: A's sample 1 (12×) 4 -> 3, peak 1; B's sample 1 counts but has no record: sample 0's.
    let k2 = pooled(&m, 2).passes;
    assert_eq!((k2.count, k2.kernels_before, k2.kernels_after), (2, 9, 7));
    assert!(close(k2.geomean_peak_ratio.unwrap(), 0.5f64.sqrt()));
    let a = m.outcomes[0].at_k(2).unwrap().passes.unwrap();
    assert_eq!((a.before.kernels, a.after.kernels), (4, 3));
    // No record anywhere: nothing to sum, no ratio.
    let none = PassesSummary::of([]);
    assert_eq!((none.count, none.kernels_ratio, none.geomean_peak_ratio), (0, None, None));
}

#[test]
fn groups_partition_the_plan_and_their_counts_sum_to_the_pooled_ones() {
    let m = metrics();
    let labels: Vec<&str> = m.groups.iter().map(|g| g.group.label.as_str()).collect();
    assert_eq!(
        labels,
        [
            "all",
            "cpu",
            "cuda",
            "opencl",
            "L1",
            "L2",
            "L3",
            "mobile",
            "robotics",
            "aiot",
            "cpu L1",
            "cpu L2",
            "cuda L1",
            "opencl L1",
            "opencl L3"
        ]
    );
    for kind in &GroupKind::ALL[1..] {
        for k in [1, 2] {
            let all = pooled(&m, k);
            let parts: Vec<&AtK> = m.groups_of(*kind).map(|g| g.at_k(k).unwrap()).collect();
            let sum = |f: &dyn Fn(&AtK) -> usize| parts.iter().map(|a| f(a)).sum::<usize>();
            assert_eq!(sum(&|a| a.compile.of), 7, "{kind:?}");
            assert_eq!(sum(&|a| a.compile.hits), all.compile.hits, "{kind:?} k={k}");
            assert_eq!(sum(&|a| a.correct.hits), all.correct.hits, "{kind:?} k={k}");
            assert_eq!(sum(&|a| a.speedup.count), all.speedup.count, "{kind:?} k={k}");
            assert_eq!(sum(&|a| a.memory.count), all.memory.count, "{kind:?} k={k}");
            assert_eq!(sum(&|a| a.passes.count), all.passes.count, "{kind:?} k={k}");
            assert_eq!(sum(&|a| a.passes.kernels_before), all.passes.kernels_before, "{kind:?} k={k}");
            assert_eq!(sum(&|a| a.passes.kernels_after), all.passes.kernels_after, "{kind:?} k={k}");
            for p in FAST_P {
                assert_eq!(sum(&|a| a.fast_at(p).unwrap().hits), all.fast_at(p).unwrap().hits);
            }
        }
    }
    let at1 = |kind, label| m.group(kind, label).unwrap().at_k(1).unwrap().clone();
    // cpu = A, B, G.
    let cpu = at1(GroupKind::Backend, "cpu");
    assert_eq!((hits(cpu.compile), hits(cpu.correct), cpu.fast_at(1.0).unwrap().hits), ((2, 3), (1, 3), 1));
    // cuda = C (1.0×), D.
    let cuda = at1(GroupKind::Backend, "cuda");
    assert_eq!(
        (hits(cuda.correct), cuda.fast_at(0.8).unwrap().hits, cuda.fast_at(1.0).unwrap().hits),
        ((1, 2), 1, 0)
    );
    // opencl = E, F: F is correct but its baseline failed, so nothing is fast.
    let opencl = at1(GroupKind::Backend, "opencl");
    assert_eq!((hits(opencl.correct), hits(opencl.fast_at(0.0).unwrap())), ((1, 2), (0, 2)));
    // L1 = A, C, D, F.
    let l1 = at1(GroupKind::Level, "L1");
    assert_eq!((hits(l1.compile), hits(l1.correct), l1.fast_at(0.0).unwrap().hits), ((3, 4), (3, 4), 2));
    assert_eq!(hits(at1(GroupKind::Level, "L3").compile), (0, 1));
    assert_eq!(at1(GroupKind::Domain, "robotics"), cuda);
    let cpu_l2 = m.group(GroupKind::BackendLevel, "cpu L2").unwrap();
    assert_eq!(
        (hits(cpu_l2.at_k(1).unwrap().correct), hits(cpu_l2.at_k(2).unwrap().correct)),
        ((0, 2), (1, 2))
    );
}

#[test]
fn failure_taxonomy_by_hand() {
    let m = metrics();
    let all = &m.failures[0];
    assert_eq!(all.group.label, "all");
    // 7 instances × 2 samples; 11 results; passed A0 A1 B1 C0 F0; missing C1 E0 E1.
    assert_eq!((all.planned, all.evaluated, all.passed, all.failed, all.missing), (14, 11, 5, 6, 3));
    let count = |f: &Failures, c: &str| f.row(c).unwrap().count;
    assert_eq!(count(all, "no_candidate"), 2);
    assert_eq!(count(all, "syntax_api"), 1);
    assert_eq!(count(all, "compile"), 1);
    assert_eq!(count(all, "correctness"), 1);
    assert_eq!(count(all, "unstable_timing"), 1);
    assert_eq!(count(all, "memory"), 0);
    assert_eq!(count(all, "missing"), 3);
    assert!(all.row("unclassified").is_none());
    // Shares are of the 9 failures (6 failed + 3 missing).
    assert!(close(all.row("missing").unwrap().share.unwrap(), 3.0 / 9.0));
    assert!(close(all.rows.iter().map(|r| r.share.unwrap()).sum::<f64>(), 1.0));
    let names: Vec<&str> = all.rows.iter().map(|r| r.class.as_str()).collect();
    let mut expected: Vec<&str> = FailureClass::ALL.iter().map(|c| c.name()).collect();
    expected.push("missing");
    assert_eq!(names, expected);
    let by: Vec<(&str, usize, usize, usize, usize)> = m.failures[1..]
        .iter()
        .map(|f| (f.group.label.as_str(), f.planned, f.passed, f.failed, f.missing))
        .collect();
    assert_eq!(by, [("cpu", 6, 3, 3, 0), ("cuda", 4, 1, 2, 1), ("opencl", 4, 1, 1, 2)]);
}

#[test]
fn flags_list_high_speedups_unstable_timings_and_baseline_failures() {
    let m = metrics();
    let f = &m.flags;
    assert_eq!(
        f.high_speedups,
        [SpeedupFlag { task: "relu".into(), backend: "cpu".into(), sample: 1, speedup: 12.0 }]
    );
    assert_eq!(f.unstable.len(), 1);
    let u = &f.unstable[0];
    assert_eq!(
        (u.task.as_str(), u.backend.as_str(), u.sample, u.speedup, u.counted),
        ("add", "opencl", 1, Some(3.0), false)
    );
    assert_eq!(f.baseline_failures.len(), 1);
    assert_eq!((f.baseline_failures[0].task.as_str(), f.baseline_failures[0].sample), ("add", 0));
    // The unstable candidate is correct but not fast at k=2.
    let add = m.outcomes.iter().find(|o| o.instance.task == "add").unwrap();
    assert!(add.at_k(2).unwrap().correct && add.at_k(2).unwrap().best_speedup.is_none());
    assert!(m.warnings.is_empty(), "{:?}", m.warnings);
}

#[test]
fn results_outside_the_plan_are_left_out_with_warnings_and_run_warnings_pass_through() {
    let a = inst("relu", "cpu", 1);
    let mut dup = timed(&a, 0, 5.0);
    dup.correct = false;
    let mut unclassified = timed(&a, 0, 1.0);
    unclassified.correct = false;
    unclassified.timing = None;
    let mut nan = timed(&inst("add", "cpu", 1), 0, f64::NAN);
    nan.sample = 0;
    let mut r = run(
        "runs/odd",
        info(1, vec![a.clone(), inst("add", "cpu", 1), inst("mul", "cpu", 1)]),
        vec![
            unclassified,
            dup,
            timed(&a, 1, 3.0),
            timed(&inst("other", "cpu", 1), 0, 3.0),
            nan,
            timed(&inst("mul", "cpu", 1), 0, 10.0),
        ],
    );
    r.warnings.push("results.jsonl: ignored an unfinished last line".into());
    let m = run_metrics(&r, "odd", &[1]).unwrap();
    let w = m.warnings.join("\n");
    assert!(w.contains("unfinished last line"), "{w}");
    assert!(w.contains("a second result for relu on cpu sample 0; the first one counts"), "{w}");
    assert!(w.contains("relu on cpu sample 1, past the run's 1 sample(s)"), "{w}");
    assert!(w.contains("other on cpu sample 0, which the plan does not list"), "{w}");
    assert!(w.contains("add on cpu sample 0: speedup NaN is not a positive number"), "{w}");
    assert!(w.contains("relu on cpu sample 0: not correct but no failure class"), "{w}");
    let all = pooled(&m, 1);
    // relu: incorrect (the first result counts); add: correct, NaN not counted; mul: 10× exactly.
    assert_eq!((hits(all.correct), all.speedup.count), ((2, 3), 1));
    assert_eq!(m.failures[0].row("unclassified").unwrap().count, 1);
    // A speedup of exactly 10 is not over 10.
    assert!(m.flags.high_speedups.is_empty());
}

#[test]
fn k_outside_the_samples_is_an_error() {
    let e = run_metrics(&sample_run(), "s", &[1, 3]).unwrap_err();
    assert!(e.message.contains("k = 3 is outside run `runs/sample`, which has 2 sample(s)"), "{e}");
    let e = run_metrics(&sample_run(), "s", &[0]).unwrap_err();
    assert!(e.message.contains("k = 0"), "{e}");
    assert_eq!(default_ks(1), [1]);
    assert_eq!(default_ks(5), [1, 5]);
}

#[test]
fn an_instance_without_any_result_fails_everything_and_equal_speedups_keep_the_first_sample() {
    let a = inst("relu", "cpu", 1);
    let r =
        run("r", info(3, vec![a.clone(), inst("add", "cpu", 1)]), vec![timed(&a, 1, 2.0), timed(&a, 2, 2.0)]);
    let m = run_metrics(&r, "r", &[1, 3]).unwrap();
    assert_eq!(m.outcomes[0].at_k(3).unwrap().best_sample, Some(1));
    assert_eq!(
        m.outcomes[0].at_k(1).unwrap(),
        &OutcomeAtK {
            k: 1,
            compiled: false,
            correct: false,
            best_speedup: None,
            best_sample: None,
            memory_ratio: None,
            passes: None
        }
    );
    assert_eq!(m.outcomes[1].evaluated, 0);
    assert_eq!(hits(pooled(&m, 3).correct), (1, 2));
    assert_eq!(m.failures[0].missing, 4);
}

#[test]
fn labels_fall_back_to_the_candidates_then_to_positions() {
    let mut a = sample_run();
    a.dir = "x/run".into();
    let mut b = sample_run();
    b.dir = "y/run".into();
    b.info.candidates = "cands/gpt".into();
    let mut c = sample_run();
    c.dir = "z/other".into();
    assert_eq!(labels(&[a.clone(), b.clone(), c.clone()]), ["builtin:default", "cands/gpt", "other"]);
    b.info.candidates = "builtin:default".into();
    assert_eq!(labels(&[a.clone(), b.clone()]), ["builtin:default #1", "builtin:default #2"]);
    let cmp = compare(&[a, c], None).unwrap();
    assert_eq!(cmp.runs.iter().map(|r| r.label.as_str()).collect::<Vec<_>>(), ["run", "other"]);
    assert_eq!(cmp.ks(), [1, 2]);
    assert_eq!(cmp.baselines(), ["naive"]);
}
