//! Requests with fields outside their bounds (`docs/protocol.md`, request bounds) are answered
//! with `Error { InvalidRequest }` naming the field, and the session goes on: the runtime never
//! panics, aborts or hangs on a structurally valid request. The reported cases one by one, then
//! random structurally valid requests against an in-process session with a real payload loaded.

mod common;

use ekb_rt::run::RunOptions;
use ekb_rt::serve::Session;
use ekb_wire::protocol::{
    encode_frame, ErrorKind, PairedSettings, PayloadId, Request, Response, TimingOverrides, MAX_ATTEMPTS,
    MAX_BOOTSTRAP_RESAMPLES, MAX_BUDGET_MS, MAX_SAMPLES, MAX_SEED_INDICES, MAX_THREADS, MAX_WARMUP,
    PROTOCOL_VERSION,
};
use proptest::prelude::*;
use std::time::{Duration, Instant};

/// `y = x` over 16 floats: a kernel that runs in microseconds.
fn copy_payload() -> Vec<u8> {
    let ir = r#"
define void @ekb_k_copy(ptr %args) nounwind {
entry:
  %x = load ptr, ptr %args
  %yslot = getelementptr ptr, ptr %args, i64 1
  %y = load ptr, ptr %yslot
  call void @llvm.memcpy.p0.p0.i64(ptr align 64 %y, ptr align 64 %x, i64 64, i1 false)
  ret void
}
declare void @llvm.memcpy.p0.p0.i64(ptr, ptr, i64, i1)
"#;
    common::elementwise_payload(common::compile_ir(ir), "copy", 16, &[1, 2], |x| x)
}

fn call(s: &mut Session, r: &Request) -> Response {
    s.handle(&encode_frame(r).unwrap()[8..]).0
}

/// A session after `Hello`, with the copy payload loaded as payload #0.
fn session() -> Session {
    let mut s = Session::new(RunOptions::default());
    let hello = Request::Hello {
        min_version: PROTOCOL_VERSION,
        max_version: PROTOCOL_VERSION,
        client: "test".into(),
        client_version: "0".into(),
    };
    assert!(matches!(call(&mut s, &hello), Response::HelloAck { .. }));
    let loaded = call(&mut s, &Request::Load { payload: copy_payload() });
    assert!(matches!(loaded, Response::Loaded { payload: PayloadId(0), .. }), "{loaded:?}");
    s
}

fn quick() -> TimingOverrides {
    TimingOverrides {
        warmup: Some(0),
        min_samples: Some(1),
        max_samples: Some(3),
        budget_ms: Some(50),
        ..TimingOverrides::default()
    }
}

fn run(timing: TimingOverrides, seeds: Option<Vec<u32>>, threads: Option<u32>) -> Request {
    Request::Run { payload: PayloadId(0), seeds, timing, threads }
}

fn paired(settings: PairedSettings) -> Request {
    Request::PairedRun { baseline: PayloadId(0), candidate: PayloadId(0), settings }
}

/// The message of an `InvalidRequest` answer.
fn refused(r: Response) -> String {
    match r {
        Response::Error { kind: ErrorKind::InvalidRequest, message } => message,
        other => panic!("expected an InvalidRequest error, got {other:?}"),
    }
}

#[test]
fn out_of_bounds_fields_are_refused_by_name_and_the_session_goes_on() {
    let mut s = session();
    let m = refused(call(&mut s, &run(TimingOverrides { max_samples: Some(0), ..quick() }, None, None)));
    assert_eq!(
        m,
        format!("`Run.timing.max_samples` is 0; it must be in 1..={MAX_SAMPLES} (docs/protocol.md, request bounds)")
    );
    let m = refused(call(&mut s, &run(quick(), None, Some(100_000))));
    assert!(m.starts_with("`Run.threads` is 100000; it must be in 0..=1024"), "{m}");
    let m = refused(call(&mut s, &run(quick(), Some(vec![0; 100_000]), None)));
    assert!(m.starts_with("`Run.seeds (entries)` is 100000"), "{m}");
    // Duplicates within the bound are refused too: each seed index runs once.
    let m = refused(call(&mut s, &run(quick(), Some(vec![0, 1, 0]), None)));
    assert_eq!(m, "seed index 0 is listed twice: each seed index may appear once");
    let base = PairedSettings { timing: quick(), ..PairedSettings::DEFAULT };
    let m = refused(call(&mut s, &paired(PairedSettings { bootstrap_resamples: u32::MAX, ..base })));
    assert!(m.starts_with("`PairedRun.settings.bootstrap_resamples` is 4294967295"), "{m}");
    let m = refused(call(&mut s, &paired(PairedSettings { attempts: u32::MAX, max_ci: 0.0, ..base })));
    assert!(m.starts_with("`PairedRun.settings.attempts` is 4294967295"), "{m}");
    let m = refused(call(&mut s, &paired(PairedSettings { confidence: f64::NAN, ..base })));
    assert!(m.starts_with("`PairedRun.settings.confidence` is NaN"), "{m}");
    // The session still runs the payload correctly, and pairs it.
    match call(&mut s, &run(quick(), None, Some(2))) {
        Response::RunReport(r) => assert!(r.is_correct(), "{:?}", r.failure),
        other => panic!("{other:?}"),
    }
    match call(&mut s, &paired(PairedSettings { attempts: 1, bootstrap_resamples: 20, ..base })) {
        Response::PairedReport(r) => {
            // Correct on every seed; a pair this short may well be unstable, and says so.
            let f = r.candidate.failure.as_ref().map(|f| &f.kind);
            assert!(f.is_none_or(|k| *k == ekb_wire::protocol::FailureKind::UnstableTiming), "{f:?}");
            assert!(
                r.candidate.seeds.len() == 2 && r.candidate.seeds.iter().all(|s| s.ok()),
                "{:?}",
                r.candidate
            );
        }
        other => panic!("{other:?}"),
    }
}

/// A u32 field: mostly small legal values, sometimes just outside `lo..=hi` or anywhere.
fn u32_around(lo: u32, small: u32, hi: u32) -> impl Strategy<Value = u32> {
    prop_oneof![
        4 => lo..=small,
        1 => Just(lo.saturating_sub(1)),
        1 => hi.saturating_add(1)..=u32::MAX,
        1 => Just(u32::MAX),
    ]
}

fn f64_any() -> impl Strategy<Value = f64> {
    prop_oneof![
        3 => 0.0..=1.0f64,
        1 => Just(f64::NAN),
        1 => Just(f64::INFINITY),
        1 => -1e9..0.0f64,
        1 => 1.0..1e9f64,
    ]
}

fn timing() -> impl Strategy<Value = TimingOverrides> {
    (
        proptest::option::of(u32_around(0, 2, MAX_WARMUP)),
        proptest::option::of(u32_around(1, 4, MAX_SAMPLES)),
        proptest::option::of(u32_around(1, 4, MAX_SAMPLES)),
        proptest::option::of(f64_any()),
        proptest::option::of(
            prop_oneof![3 => 1..=40u64, 1 => Just(0u64), 1 => (MAX_BUDGET_MS + 1)..=u64::MAX],
        ),
        proptest::option::of(any::<bool>()),
    )
        .prop_map(|(warmup, min_samples, max_samples, target_rse, budget_ms, cold_cache)| {
            TimingOverrides {
                warmup,
                min_samples,
                max_samples,
                target_rse,
                // Left out, the payload's 10 s budget would make every legal case slow.
                budget_ms: budget_ms.or(Some(20)),
                cold_cache,
            }
        })
}

fn threads() -> impl Strategy<Value = Option<u32>> {
    proptest::option::of(u32_around(0, 2, MAX_THREADS))
}

fn seeds() -> impl Strategy<Value = Option<Vec<u32>>> {
    proptest::option::of(prop_oneof![
        4 => proptest::collection::vec(0..3u32, 0..4),
        1 => (MAX_SEED_INDICES + 1..MAX_SEED_INDICES + 3).prop_map(|n| vec![0u32; n]),
    ])
}

fn paired_settings() -> impl Strategy<Value = PairedSettings> {
    (
        timing(),
        threads(),
        any::<u64>(),
        f64_any(),
        u32_around(1, 2, MAX_ATTEMPTS),
        u32_around(1, 50, MAX_BOOTSTRAP_RESAMPLES),
        f64_any(),
    )
        .prop_map(|(timing, threads, order_seed, max_ci, attempts, bootstrap_resamples, confidence)| {
            PairedSettings { timing, threads, order_seed, max_ci, attempts, bootstrap_resamples, confidence }
        })
}

fn id() -> impl Strategy<Value = PayloadId> {
    prop_oneof![4 => Just(PayloadId(0)), 1 => any::<u64>().prop_map(PayloadId)]
}

/// Structurally valid requests (every one decodes), legal or not. `Shutdown` and unloading the
/// payload are left out, since they end what the next cases need.
fn request() -> impl Strategy<Value = Request> {
    prop_oneof![
        1 => (any::<u32>(), any::<u32>(), ".{0,8}", proptest::collection::vec(any::<char>(), 0..300)).prop_map(
            |(min_version, max_version, client, v)| Request::Hello {
                min_version,
                max_version,
                client,
                client_version: v.into_iter().collect(),
            }
        ),
        1 => proptest::collection::vec(any::<u8>(), 0..64).prop_map(|payload| Request::Load { payload }),
        1 => (1u64..).prop_map(|n| Request::Unload { payload: PayloadId(n) }),
        6 => (id(), seeds(), timing(), threads())
            .prop_map(|(payload, seeds, timing, threads)| Request::Run { payload, seeds, timing, threads }),
        3 => (id(), id(), paired_settings())
            .prop_map(|(baseline, candidate, settings)| Request::PairedRun { baseline, candidate, settings }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn every_structurally_valid_request_is_answered_promptly(r in request()) {
        thread_local!(static SESSION: std::cell::RefCell<Option<Session>> = const { std::cell::RefCell::new(None) });
        SESSION.with(|cell| {
            let mut cell = cell.borrow_mut();
            let s = cell.get_or_insert_with(session);
            let started = Instant::now();
            let response = call(s, &r);
            // A legal request runs at most its budgets (40 ms per attempt, two attempts) plus
            // the executions and the process start; nothing legal takes longer than this.
            prop_assert!(started.elapsed() < Duration::from_secs(30), "{r:?} took {:?}", started.elapsed());
            match (r.check(), &response) {
                (Err(e), Response::Error { kind: ErrorKind::InvalidRequest, message }) => {
                    prop_assert_eq!(message, &e.to_string());
                }
                (Err(e), other) => prop_assert!(false, "{r:?} is out of bounds ({e}) but was answered {other:?}"),
                (Ok(()), Response::Error { kind: ErrorKind::InvalidRequest, message }) => {
                    // Only what depends on the payload: a seed index listed twice.
                    prop_assert!(message.contains("listed twice"), "{r:?}: {message}");
                }
                (Ok(()), _) => {}
            }
            // The session goes on: the payload still runs correctly.
            match call(s, &run(quick(), Some(vec![1]), Some(1))) {
                Response::RunReport(rep) => prop_assert!(rep.is_correct(), "after {r:?}: {:?}", rep.failure),
                other => prop_assert!(false, "after {r:?}: {other:?}"),
            }
            Ok(())
        })?;
    }
}

#[test]
fn the_command_line_refuses_out_of_bounds_values_with_the_legal_range() {
    let rt = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_ekb-rt")).args(args).output().unwrap();
        (out.status.success(), String::from_utf8_lossy(&out.stderr).into_owned())
    };
    let (ok, err) = rt(&["run", "p.ekp", "--out", "r.ekr", "--max-samples", "0"]);
    assert!(!ok && err.contains("`--max-samples 0`: expected a number in 1..=100000"), "{err}");
    let (ok, err) = rt(&["serve", "--threads", "100000"]);
    assert!(!ok && err.contains("`--threads 100000`: expected a number in 0..=1024"), "{err}");
    let (ok, err) = rt(&["run", "p.ekp", "--out", "r.ekr", "--target-rse", "NaN"]);
    assert!(!ok && err.contains("`--target-rse NaN`: expected a number in 0..=1"), "{err}");
}
