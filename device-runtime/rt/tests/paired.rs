//! Paired timing: a payload against itself gives a speedup near 1 with its stability and a
//! bootstrap interval; the naive lowering of a matmul against the default schedule gives a
//! speedup above 1; the per-pair order is drawn from the seed and both orders occur.

mod common;

use ekb_lower::Schedule;
use ekb_rt::run::{run_paired, RunOptions};
use ekb_rt::store::LoadedPayload;
use ekb_wire::protocol::{PairedReport, PairedSettings, PayloadId, TimingOverrides};

/// A 96x96x96 matmul payload lowered with `schedule` for this machine.
fn matmul(schedule: Schedule, dir: &std::path::Path) -> Vec<u8> {
    let src = dir.join("mm.ekir");
    std::fs::write(
        &src,
        "graph mm(a: f32[96,96], b: f32[96,96]) -> (y: f32[96,96]) {\n  %0 = matmul(a, b)\n  return %0\n}\n",
    )
    .unwrap();
    let g = ekb_e2e::load_graph(&src);
    let target = ekb_ir::TargetProfile::load("host").unwrap();
    let (m, obj) = common::compile_graph(&g, schedule, &target, dir);
    common::payload(&g, &m, &target, &obj)
}

fn paired(baseline: &[u8], candidate: &[u8], settings: PairedSettings) -> PairedReport {
    let b = std::sync::Arc::new(LoadedPayload::from_bytes(PayloadId(0), baseline).unwrap());
    let c = std::sync::Arc::new(LoadedPayload::from_bytes(PayloadId(1), candidate).unwrap());
    let hidden = [(b.mapping().addr(), b.mapping().len()), (c.mapping().addr(), c.mapping().len())];
    let options = RunOptions { threads: 1, ..RunOptions::default() };
    run_paired(&b, &c, &hidden, &settings, &options).unwrap()
}

fn settings(max_samples: u32) -> PairedSettings {
    PairedSettings {
        timing: TimingOverrides {
            warmup: Some(3),
            min_samples: Some(30),
            max_samples: Some(max_samples),
            target_rse: Some(0.01),
            budget_ms: Some(3_000),
            cold_cache: None,
        },
        order_seed: 7,
        ..PairedSettings::DEFAULT
    }
}

#[test]
fn a_payload_against_itself_is_a_ratio_near_one() {
    let dir = common::work_dir("paired-same");
    let bytes = matmul(Schedule::Default, &dir);
    let r = paired(&bytes, &bytes, settings(400));
    for side in [&r.baseline, &r.candidate] {
        assert_eq!(side.seeds.len(), 3);
        assert!(side.seeds.iter().all(|s| s.ok()), "{:?}", side.seeds);
    }
    let ratio = r.ratio.unwrap_or_else(|| panic!("{:?} {:?}", r.baseline.failure, r.candidate.failure));
    println!("same payload: {ratio:?}, stable {}, {} pairs, {:?}", r.stable, r.pairs.len(), r.stop);
    assert!((0.75..1.33).contains(&ratio.median), "{ratio:?}");
    assert!(ratio.ci_low <= ratio.median && ratio.median <= ratio.ci_high, "{ratio:?}");
    assert_eq!(ratio.confidence, 0.95);
    assert!(r.pairs.len() >= 30, "{}", r.pairs.len());
    let firsts = r.pairs.iter().filter(|p| p.baseline_first).count();
    assert!(firsts > 0 && firsts < r.pairs.len(), "both orders occur: {firsts} of {}", r.pairs.len());
    // Each side's timing holds exactly its half of the pairs, in order.
    let bt = r.baseline.timing.as_ref().unwrap();
    let ct = r.candidate.timing.as_ref().unwrap();
    assert_eq!(bt.samples_ns, r.pairs.iter().map(|p| p.baseline_ns).collect::<Vec<_>>());
    assert_eq!(ct.samples_ns, r.pairs.iter().map(|p| p.candidate_ns).collect::<Vec<_>>());
    // Every sample lasts at least the minimum sample time: a program that fast runs several
    // times per sample, and both sides are calibrated alike.
    assert!(bt.reps >= 1 && ct.reps >= 1, "{} {}", bt.reps, ct.reps);
    let shortest = bt.stats.min_ns * f64::from(bt.reps);
    assert!(
        bt.reps == 1 || shortest >= ekb_rt::run::MIN_SAMPLE_NS / 4.0,
        "{} x {}",
        bt.reps,
        bt.stats.min_ns
    );
    // Stability is decided from the median ratio's interval, within +-max_ci of the median, and
    // said in the log either way, never hidden.
    let half = (ratio.ci_high - ratio.ci_low) / 2.0 / ratio.median;
    assert_eq!(r.stable, half <= PairedSettings::DEFAULT.max_ci, "{ratio:?}");
    assert!((1..=2).contains(&r.attempts));
    assert!(r.candidate.log.iter().any(|l| l.message.contains("interval")), "{:?}", r.candidate.log);
    if !r.stable {
        let f = r.candidate.failure.as_ref().expect("an unstable pair fails the candidate's timing");
        assert!(f.evidence.contains("interval"), "{}", f.evidence);
    }
    // CPU programs: each batch a placement of its own, and a stable pair spans at least the
    // minimum of them, as its log says.
    let said = |l: &ekb_wire::protocol::LogLine| {
        let (before, _) = l.message.split_once(" placement(s)")?;
        before.rsplit(' ').next()?.parse::<usize>().ok()
    };
    let drawn = r.candidate.log.iter().rev().find_map(said).expect("the log gives the placements");
    assert!(drawn >= 1 && drawn <= r.pairs.len(), "{drawn} placement(s) of {} pairs", r.pairs.len());
    assert!(!r.stable || drawn >= ekb_rt::run::MIN_PLACEMENTS, "stable over {drawn} placement(s)");
}

#[test]
fn the_default_schedule_beats_the_naive_lowering() {
    let dir = common::work_dir("paired-naive");
    let naive = matmul(Schedule::Naive, &dir);
    let default = matmul(Schedule::Default, &dir);
    let r = paired(&naive, &default, settings(200));
    let ratio = r.ratio.unwrap_or_else(|| panic!("{:?} {:?}", r.baseline.failure, r.candidate.failure));
    println!("naive vs default: {ratio:?}, stable {}, {} pairs, {:?}", r.stable, r.pairs.len(), r.stop);
    assert!(ratio.median > 1.2, "naive / default = {ratio:?}");
    assert!(ratio.ci_low > 1.0, "{ratio:?}");
    // A speedup this large is flagged for review, not silently trusted.
    if ratio.median > 10.0 {
        assert!(r.candidate.log.iter().any(|l| l.message.contains("flagged for review")));
    }
    // An unstable side is flagged, and the ratio still reported.
    if !r.stable {
        assert!(r.attempts == 2);
        let kind = r.candidate.failure.as_ref().map(|f| f.kind.clone());
        assert_eq!(kind, Some(ekb_wire::protocol::FailureKind::UnstableTiming));
    }
    // The order sequence is reproducible from the seed.
    let again = paired(&naive, &default, PairedSettings { ..settings(200) });
    let n = r.pairs.len().min(again.pairs.len());
    let order = |p: &PairedReport| p.pairs[..n].iter().map(|p| p.baseline_first).collect::<Vec<_>>();
    if r.attempts == again.attempts {
        assert_eq!(order(&r), order(&again));
    }
}
