//! `ekb-rt serve` as the host sees it: the built binary as a child process, the protocol over
//! its stdin and stdout. Round trips (hello, device info, load, run, unload, shutdown) and hostile
//! input — requests before `Hello`, a version mismatch, garbage frames, corrupt payloads, the host
//! vanishing mid-frame and mid-run — each answered with the exact error, after which the session
//! goes on.

mod common;

use common::Client;
use ekb_wire::protocol::{
    encode_frame, Availability, CounterKind, CounterReading, ErrorKind, PayloadId, Request, Response,
    StopReason, TimingOverrides, Verdict,
};
use std::path::Path;
use std::time::{Duration, Instant};

const N: u64 = 64;

fn runtime() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_ekb-rt"))
}

/// `y[i] = 2 x[i]` over `n` elements, in hand-written LLVM IR.
pub fn double_ir(n: u64) -> String {
    format!(
        r#"
define void @ekb_k_double(ptr %args) nounwind {{
entry:
  %x = load ptr, ptr %args
  %yslot = getelementptr ptr, ptr %args, i64 1
  %y = load ptr, ptr %yslot
  br label %loop
loop:
  %i = phi i64 [0, %entry], [%next, %loop]
  %xi = getelementptr float, ptr %x, i64 %i
  %v = load float, ptr %xi
  %d = fmul float %v, 2.0
  %yi = getelementptr float, ptr %y, i64 %i
  store float %d, ptr %yi
  %next = add i64 %i, 1
  %done = icmp eq i64 %next, {n}
  br i1 %done, label %exit, label %loop
exit:
  ret void
}}
"#
    )
}

fn double_payload() -> Vec<u8> {
    common::elementwise_payload(common::compile_ir(&double_ir(N)), "double", N, &[1, 2, 3], |x| 2.0 * x)
}

fn quick() -> TimingOverrides {
    TimingOverrides {
        warmup: Some(1),
        min_samples: Some(5),
        max_samples: Some(20),
        ..TimingOverrides::default()
    }
}

fn expect_error(r: Response, kind: ErrorKind, text: &str) {
    match r {
        Response::Error { kind: k, message } => {
            assert_eq!(k, kind, "{message}");
            assert!(message.contains(text), "`{message}` lacks `{text}`");
        }
        other => panic!("expected an error {kind}, got {other:?}"),
    }
}

#[test]
fn a_session_loads_runs_unloads_and_shuts_down() {
    let mut c = Client::start(runtime(), &[]);
    c.hello();
    let info = match c.call(&Request::DeviceInfo) {
        Response::DeviceInfo(i) => i,
        other => panic!("{other:?}"),
    };
    assert_eq!(info.isolation, Availability::Available, "native x86_64 has seccomp");
    assert_eq!(info.counters.len(), 9);
    let task_clock = info.counters.iter().find(|c| c.name == "task-clock").unwrap();
    assert_eq!(
        (task_clock.kind, &task_clock.availability),
        (CounterKind::Software, &Availability::Available)
    );

    let id = c.load(&double_payload());
    assert_eq!(id, PayloadId(0));
    let r = match c.call(&Request::Run { payload: id, seeds: None, timing: quick(), threads: Some(2) }) {
        Response::RunReport(r) => r,
        other => panic!("{other:?}"),
    };
    assert!(r.is_correct(), "{:?}\n{:?}", r.failure, r.log);
    assert_eq!((r.seeds.len(), r.threads, r.task.as_str()), (3, 2, "double"));
    let t = r.timing.as_ref().unwrap();
    assert!((5..=20).contains(&t.samples_ns.len()), "{}", t.samples_ns.len());
    assert!(t.stop == StopReason::TargetReached || t.samples_ns.len() == 20, "{:?}", t.stop);
    assert!(
        t.stats.min_ns > 0.0 && t.stats.min_ns <= t.stats.median_ns && t.stats.median_ns <= t.stats.p90_ns
    );
    assert_eq!((t.warmup, t.cold_cache, t.clock.as_str()), (1, false, "CLOCK_MONOTONIC"));
    // Counters: hardware ones say why they are missing on this VM; software ones count.
    let names: Vec<&str> = r.counters.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names[..2], ["cycles", "instructions"]);
    let tc = r.counters.iter().find(|c| c.name == "task-clock").unwrap();
    assert!(
        matches!(tc.reading, CounterReading::Counted { total, runs, .. } if total > 0 && runs >= 1),
        "{tc:?}"
    );
    for c in r.counters.iter().filter(|c| c.kind == CounterKind::Hardware) {
        if let CounterReading::Unavailable { reason } = &c.reading {
            assert!(reason.starts_with("not supported") || reason.starts_with("not permitted"), "{reason}");
        }
    }
    // Each plan step's time, by the CPU's clock, over as many runs as the counters had.
    let steps: Vec<_> = r.counters.iter().filter(|c| c.kind == CounterKind::Step).collect();
    assert_eq!(steps.len(), 1, "{:?}", r.counters);
    assert!(steps[0].name.ends_with(" (step 0): time (CLOCK_MONOTONIC, ns)"), "{}", steps[0].name);
    let CounterReading::Counted { total: step_total, runs: step_runs, .. } = steps[0].reading else {
        panic!("{:?}", steps[0])
    };
    let CounterReading::Counted { runs, .. } = tc.reading else { unreachable!() };
    assert!(step_total > 0 && step_runs == runs, "{:?} {:?}", steps[0], tc);
    // Memory: both buffers legal against the budget, the kernel process's RSS measured.
    let names: Vec<&str> = r.memory.allocations.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(names, ["x", "y"]);
    assert!(r
        .memory
        .allocations
        .iter()
        .all(|a| a.verdict == Verdict::Legal && a.limit_bytes == Some(1 << 20)));
    assert_eq!(r.memory.peak_bytes, 2 * 4 * N);
    assert!(r.memory.max_rss_bytes.unwrap() > 0);
    assert!(r.log.iter().any(|l| l.message.contains("under a system-call filter (seccomp)")), "{:?}", r.log);

    // A cold-cache run: the caches are flushed before every sample, and the report says so.
    let cold =
        TimingOverrides { cold_cache: Some(true), min_samples: Some(2), max_samples: Some(3), ..quick() };
    match c.call(&Request::Run { payload: id, seeds: Some(vec![0]), timing: cold, threads: Some(1) }) {
        Response::RunReport(r) => {
            assert!(r.is_correct(), "{:?}", r.failure);
            assert!(r.timing.as_ref().unwrap().cold_cache);
            assert!(r.log.iter().any(|l| l.message.starts_with("cold cache: ")), "{:?}", r.log);
        }
        other => panic!("{other:?}"),
    }
    // Only the listed seeds; a seed the payload lacks is the request's error.
    match c.call(&Request::Run { payload: id, seeds: Some(vec![2]), timing: quick(), threads: None }) {
        Response::RunReport(r) => assert_eq!(r.seeds.iter().map(|s| s.seed).collect::<Vec<_>>(), [3]),
        other => panic!("{other:?}"),
    }
    expect_error(
        c.call(&Request::Run { payload: id, seeds: Some(vec![3]), timing: quick(), threads: None }),
        ErrorKind::Unsupported,
        "seed index 3: payload #0 has 3 seed(s)",
    );
    assert_eq!(c.call(&Request::Unload { payload: id }), Response::Unloaded { payload: id });
    expect_error(
        c.call(&Request::Run { payload: id, seeds: None, timing: quick(), threads: None }),
        ErrorKind::UnknownPayload,
        "no payload is loaded under payload #0",
    );
    assert_eq!(c.call(&Request::Shutdown), Response::Bye);
    assert!(c.try_recv().is_none(), "nothing after Bye");
    assert!(c.wait().success());
}

#[test]
fn requests_before_hello_and_version_mismatches_get_typed_errors() {
    let mut c = Client::start(runtime(), &[]);
    expect_error(c.call(&Request::DeviceInfo), ErrorKind::NotNegotiated, "`DeviceInfo` before `Hello`");
    expect_error(
        c.call(&Request::Load { payload: double_payload() }),
        ErrorKind::NotNegotiated,
        "`Load` before `Hello`",
    );
    let mismatch = Request::Hello {
        min_version: 5,
        max_version: 9,
        client: "future".into(),
        client_version: "9".into(),
    };
    expect_error(
        c.call(&mismatch),
        ErrorKind::UnsupportedVersion,
        "the client speaks protocol versions 5..=9, this runtime speaks 2..=3",
    );
    // Still not negotiated, still serving.
    expect_error(c.call(&Request::Shutdown), ErrorKind::NotNegotiated, "`Shutdown` before `Hello`");
    c.hello();
    assert_eq!(c.call(&Request::Shutdown), Response::Bye);
    assert!(c.wait().success());
}

#[test]
fn garbage_frames_are_answered_and_the_session_goes_on() {
    let mut c = Client::start(runtime(), &[]);
    // A frame whose checksum is wrong.
    let mut bad = encode_frame(&Request::DeviceInfo).unwrap();
    bad[4] ^= 1;
    c.send_raw(&bad);
    expect_error(c.recv(), ErrorKind::BadFrame, "fails its checksum");
    // A well-formed frame whose body is no request (variant 200).
    let body = [0xc8u8, 0x01];
    let mut frame = (body.len() as u32).to_le_bytes().to_vec();
    frame.extend(ekb_wire::crc32(&body).to_le_bytes());
    frame.extend(body);
    c.send_raw(&frame);
    expect_error(c.recv(), ErrorKind::BadMessage, "holds no message");
    // A request followed by stray bytes inside its frame.
    let mut body = postcard::to_allocvec(&Request::DeviceInfo).unwrap();
    body.push(7);
    let mut frame = (body.len() as u32).to_le_bytes().to_vec();
    frame.extend(ekb_wire::crc32(&body).to_le_bytes());
    frame.extend(body);
    c.send_raw(&frame);
    expect_error(c.recv(), ErrorKind::BadMessage, "1 bytes after its message");
    // An impossible length: the header is consumed, the next frame is read afresh.
    let mut huge = u32::MAX.to_le_bytes().to_vec();
    huge.extend([0u8; 4]);
    c.send_raw(&huge);
    expect_error(c.recv(), ErrorKind::BadFrame, "exceeds the maximum");
    c.hello();
    assert!(matches!(c.call(&Request::DeviceInfo), Response::DeviceInfo(_)));
    assert_eq!(c.call(&Request::Shutdown), Response::Bye);
}

#[test]
fn corrupt_payloads_are_refused_and_the_session_goes_on() {
    let mut c = Client::start(runtime(), &[]);
    c.hello();
    let good = double_payload();
    let mut flipped = good.clone();
    let last = flipped.len() - 1;
    flipped[last] ^= 0x55;
    expect_error(
        c.call(&Request::Load { payload: flipped }),
        ErrorKind::PayloadInvalid,
        "body checksum mismatch",
    );
    expect_error(
        c.call(&Request::Load { payload: good[..good.len() / 2].to_vec() }),
        ErrorKind::PayloadInvalid,
        "truncated",
    );
    expect_error(
        c.call(&Request::Load { payload: b"not a payload at all".to_vec() }),
        ErrorKind::PayloadInvalid,
        "payloads start with `EKBP`",
    );
    // A payload whose object references a symbol outside the import table links nowhere.
    let object = common::assemble(
        r#"
    .text
    .globl ekb_k_double
    .type ekb_k_double,@function
ekb_k_double:
    jmp *fopen@GOTPCREL(%rip)
    .section .note.GNU-stack,"",@progbits
"#,
        "x86_64-unknown-linux-gnu",
    );
    let bytes = common::elementwise_payload(object, "double", N, &[1], |x| x);
    expect_error(c.call(&Request::Load { payload: bytes }), ErrorKind::LoadFailed, "`fopen`");
    // The ids of refused payloads are not used up.
    assert_eq!(c.load(&good), PayloadId(0));
    match c.call(&Request::Run { payload: PayloadId(0), seeds: None, timing: quick(), threads: Some(1) }) {
        Response::RunReport(r) => assert!(r.is_correct(), "{:?}", r.failure),
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_host_vanishing_mid_frame_ends_the_runtime_cleanly() {
    let mut c = Client::start(runtime(), &[]);
    c.hello();
    let frame = encode_frame(&Request::Load { payload: double_payload() }).unwrap();
    c.send_raw(&frame[..frame.len() / 2]);
    c.close_input();
    let status = c.wait();
    assert_eq!(status.code(), Some(1), "mid-frame end of input");
    assert!(c.try_recv().is_none(), "no response to half a frame");
    // At a frame boundary the end of input is a normal end.
    let mut c = Client::start(runtime(), &[]);
    c.hello();
    c.close_input();
    assert!(c.wait().success());
}

/// A report answered to a request, else a panic naming what came instead.
fn report(r: Response) -> ekb_wire::protocol::RunReport {
    match r {
        Response::RunReport(r) => r,
        other => panic!("expected a RunReport, got {other:?}"),
    }
}

#[test]
fn a_held_payload_is_timed_in_turns_by_one_kernel_process() {
    let mut c = Client::start(runtime(), &[]);
    c.hello();
    let id = c.load(&double_payload());
    let pid = c.child.id();
    let timing = TimingOverrides { warmup: Some(1), target_rse: Some(0.0), ..TimingOverrides::default() };
    let held = report(c.call(&Request::Hold { payload: id, seeds: None, timing, threads: Some(1) }));
    assert!(held.failure.is_none() && held.timing.is_none(), "{:?}", held.failure);
    assert_eq!(held.seeds.iter().map(|s| s.seed).collect::<Vec<_>>(), [1, 2, 3]);
    assert!(held.seeds.iter().all(|s| s.ok()));
    let kernel = children_of(pid);
    assert_eq!(kernel.len(), 1, "one kernel process while held");
    expect_error(
        c.call(&Request::Hold { payload: id, seeds: None, timing, threads: None }),
        ErrorKind::InvalidRequest,
        "payload #0 is held already",
    );
    let mut lines: Vec<String> = held.log.iter().map(|l| l.message.clone()).collect();
    for turn in 0..3 {
        let started = Instant::now();
        let r = report(c.call(&Request::Turn { payload: id, budget_ms: 30 }));
        assert!(r.failure.is_none(), "{:?}", r.failure);
        let t = r.timing.as_ref().unwrap();
        assert_eq!(t.stop, StopReason::Budget, "a turn spends its budget");
        assert!(t.samples_ns.len() > 3 && started.elapsed() >= Duration::from_millis(30));
        assert!(r.seeds.len() == 3 && r.seeds.iter().all(|s| s.ok()));
        // Each answer carries the log lines added since the previous one: the process's own
        // lines came with the hold, not again.
        assert!(!r.log.iter().any(|l| l.message.starts_with("kernel process ")), "turn {turn}: {:?}", r.log);
        assert_eq!(children_of(pid), kernel, "turn {turn} ran in the held process");
        lines.extend(r.log.iter().map(|l| l.message.clone()));
    }
    assert!(held.log.iter().any(|l| l.message.starts_with("kernel process ")), "{:?}", held.log);
    let end = report(c.call(&Request::Release { payload: id }));
    assert!(end.is_correct(), "{:?}", end.failure);
    assert!(end.log.iter().any(|l| l.message == "held: 3 turn(s) in one kernel process"), "{:?}", end.log);
    // The hold is one run for the switch of inputs: drawn again and checked once, in a turn.
    lines.extend(end.log.iter().map(|l| l.message.clone()));
    let switched = lines.iter().filter(|l| l.starts_with("timing: inputs drawn again for seed ")).count();
    assert_eq!(switched, 1, "{lines:#?}");
    assert!(end.memory.max_rss_bytes.unwrap() > 0);
    assert!(children_of(pid).is_empty(), "the kernel process ended with the hold");
    for request in [Request::Turn { payload: id, budget_ms: 5 }, Request::Release { payload: id }] {
        expect_error(
            c.call(&request),
            ErrorKind::InvalidRequest,
            "payload #0 is not held: send `Hold` first",
        );
    }
    expect_error(
        c.call(&Request::Turn { payload: PayloadId(9), budget_ms: 5 }),
        ErrorKind::UnknownPayload,
        "payload #9",
    );
    expect_error(
        c.call(&Request::Turn { payload: id, budget_ms: 0 }),
        ErrorKind::InvalidRequest,
        "`Turn.budget_ms` is 0",
    );

    // A payload that is wrong on its seeds is reported as such, and nothing is held.
    let wrong =
        common::elementwise_payload(common::compile_ir(&double_ir(N)), "double", N, &[1, 2], |x| 3.0 * x);
    let wrong = c.load(&wrong);
    let r = report(c.call(&Request::Hold { payload: wrong, seeds: None, timing, threads: Some(1) }));
    assert_eq!(
        r.failure.as_ref().map(|f| f.kind.clone()),
        Some(ekb_wire::protocol::FailureKind::Correctness)
    );
    assert!(children_of(pid).is_empty(), "a failed hold keeps no process");
    expect_error(
        c.call(&Request::Turn { payload: wrong, budget_ms: 5 }),
        ErrorKind::InvalidRequest,
        "is not held",
    );

    // Unloading a held payload ends its process.
    report(c.call(&Request::Hold { payload: id, seeds: Some(vec![0]), timing, threads: Some(1) }));
    assert_eq!(children_of(pid).len(), 1);
    assert_eq!(c.call(&Request::Unload { payload: id }), Response::Unloaded { payload: id });
    let started = Instant::now();
    while !children_of(pid).is_empty() {
        assert!(started.elapsed() < Duration::from_secs(5), "the held process outlived its payload");
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(c.call(&Request::Shutdown), Response::Bye);
    assert!(c.wait().success());
}

/// The processes whose parent is `pid`.
fn children_of(pid: u32) -> Vec<u32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(p) = e.file_name().to_string_lossy().parse::<u32>() else { continue };
        let Ok(status) = std::fs::read_to_string(format!("/proc/{p}/status")) else { continue };
        if status.lines().any(|l| l.split_whitespace().collect::<Vec<_>>() == ["PPid:", &pid.to_string()]) {
            out.push(p);
        }
    }
    out
}

#[test]
fn the_host_vanishing_mid_run_ends_the_runtime_and_its_kernel_process() {
    let forever = r#"
define void @ekb_k_spin(ptr %args) nounwind {
entry:
  %yslot = getelementptr ptr, ptr %args, i64 1
  %y = load ptr, ptr %yslot
  br label %loop
loop:
  store volatile float 1.0, ptr %y
  br label %loop
}
"#;
    let bytes = common::elementwise_payload(common::compile_ir(forever), "spin", 4, &[1], |x| x);
    let mut c = Client::start(runtime(), &[]);
    c.hello();
    let id = c.load(&bytes);
    let timing = TimingOverrides { budget_ms: Some(60_000), ..TimingOverrides::default() };
    c.send(&Request::Run { payload: id, seeds: None, timing, threads: Some(1) });
    let pid = c.child.id();
    let started = Instant::now();
    let kernel = loop {
        if let Some(&k) = children_of(pid).first() {
            break k;
        }
        assert!(started.elapsed() < Duration::from_secs(10), "no kernel process appeared");
        std::thread::sleep(Duration::from_millis(10));
    };
    std::thread::sleep(Duration::from_millis(200));
    c.close_output();
    c.close_input();
    let status = c.wait();
    assert!(started.elapsed() < Duration::from_secs(30), "the runtime waited for the 60 s limit");
    assert_eq!(status.code(), Some(1));
    // The kernel process was killed and reaped with it.
    let alive =
        std::fs::read_to_string(format!("/proc/{kernel}/status")).is_ok_and(|s| !s.contains("State:\tZ"));
    assert!(!alive, "kernel process {kernel} outlived the runtime");
}
