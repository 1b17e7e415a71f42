//! Every request and response survives encoding and decoding unchanged; the frozen messages
//! keep their bytes; version negotiation picks the highest common version; a report file is
//! the same bytes as the streamed frames.

use ekb_wire::crc32;
use ekb_wire::payload::{Backend, MemScope};
use ekb_wire::protocol::*;

fn summary() -> DeviceSummary {
    DeviceSummary { arch: "aarch64".into(), cpu_model: "Cortex-A76".into(), cores: 8, memory_bytes: 16 << 30 }
}

fn device_info() -> DeviceInfo {
    DeviceInfo {
        arch: "aarch64".into(),
        cpu_model: "Rockchip RK3588".into(),
        cores: 8,
        clusters: vec![
            CpuCluster { core: "Cortex-A55".into(), cpus: vec![0, 1, 2, 3], max_khz: Some(1_800_000) },
            CpuCluster { core: "Cortex-A76".into(), cpus: vec![4, 5, 6, 7], max_khz: None },
        ],
        memory_bytes: 16 << 30,
        page_size: 4096,
        os: "Linux 6.1.0".into(),
        counters: vec![
            CounterSupport {
                name: "cycles".into(),
                kind: CounterKind::Hardware,
                availability: Availability::Available,
            },
            CounterSupport {
                name: "cache-misses".into(),
                kind: CounterKind::Hardware,
                availability: Availability::Unavailable { reason: "perf_event_paranoid is 3".into() },
            },
        ],
        isolation: Availability::Unavailable { reason: "seccomp is not compiled into this kernel".into() },
        gpus: vec![GpuInfo {
            name: "Mali-G610".into(),
            backend: Backend::OpenCl,
            memory_bytes: 4 << 30,
            compute_units: 4,
            attributes: vec![("max_work_group_size".into(), "1024".into())],
        }],
    }
}

fn run_report(id: u64, failure: Option<Failure>) -> RunReport {
    RunReport {
        payload: PayloadId(id),
        task: "mlp".into(),
        target: "rk3588".into(),
        backend: Backend::CpuLlvm,
        threads: 4,
        seeds: vec![
            SeedCheck {
                seed: 1,
                outputs: vec![OutputCheck {
                    buffer: "out".into(),
                    ok: true,
                    max_abs_err: 1.5e-7,
                    max_rel_err: 3e-7,
                    first_mismatch: None,
                    mismatches: 0,
                }],
            },
            SeedCheck {
                seed: 2,
                outputs: vec![OutputCheck {
                    buffer: "out".into(),
                    ok: false,
                    max_abs_err: f64::INFINITY,
                    max_rel_err: f64::INFINITY,
                    first_mismatch: Some(17),
                    mismatches: 3,
                }],
            },
        ],
        timing: Some(Timing {
            samples_ns: vec![1200, 1100, 1150, 1300],
            reps: 1,
            warmup: 3,
            cold_cache: true,
            clock: "CLOCK_MONOTONIC_RAW".into(),
            stop: StopReason::Budget,
            stats: Stats {
                median_ns: 1175.0,
                min_ns: 1100.0,
                mean_ns: 1187.5,
                p10_ns: 1115.0,
                p90_ns: 1270.0,
                cv: 0.07,
                rse: 0.03,
            },
        }),
        counters: vec![
            Counter {
                name: "instructions".into(),
                kind: CounterKind::Hardware,
                reading: CounterReading::Counted { total: 123_456_789, runs: 4, scaled: true },
            },
            Counter {
                name: "page-faults".into(),
                kind: CounterKind::Software,
                reading: CounterReading::Unavailable { reason: "perf_event_open: EACCES".into() },
            },
        ],
        memory: MemoryReport {
            by_scope: vec![
                ScopeBytes { scope: MemScope::Global, bytes: 152 },
                ScopeBytes { scope: MemScope::Local, bytes: 32 },
            ],
            peak_bytes: 184,
            max_rss_bytes: Some(3 << 20),
            allocations: vec![
                AllocationCheck {
                    name: "acc".into(),
                    bytes: 32,
                    scope: MemScope::Local,
                    limit_bytes: Some(8 << 20),
                    verdict: Verdict::Legal,
                },
                AllocationCheck {
                    name: "tile".into(),
                    bytes: 64 << 10,
                    scope: MemScope::Shared,
                    limit_bytes: Some(48 << 10),
                    verdict: Verdict::Illegal { reason: "over 48 KiB of shared memory per block".into() },
                },
                AllocationCheck {
                    name: "h".into(),
                    bytes: 1 << 40,
                    scope: MemScope::Global,
                    limit_bytes: None,
                    verdict: Verdict::OverCapacity { reason: "the board has 16 GiB".into() },
                },
            ],
        },
        failure,
        log: vec![
            LogLine { level: LogLevel::Info, message: "loaded 2 kernels".into() },
            LogLine { level: LogLevel::Warn, message: "no big cores known".into() },
        ],
    }
}

fn every_failure() -> Vec<Failure> {
    let kinds = [
        FailureKind::Memory(MemoryFault::IllegalAllocation),
        FailureKind::Memory(MemoryFault::Capacity),
        FailureKind::Memory(MemoryFault::OutOfBounds),
        FailureKind::Memory(MemoryFault::GuardCorruption { buffer: "out".into() }),
        FailureKind::Memory(MemoryFault::InputWrite { buffer: "x".into() }),
        FailureKind::Memory(MemoryFault::Segfault),
        FailureKind::Timeout,
        FailureKind::Crash { signal: 6 },
        FailureKind::RuntimeError,
        FailureKind::Correctness,
        FailureKind::Parallel,
        FailureKind::UnstableTiming,
    ];
    kinds.into_iter().map(|kind| Failure { kind, evidence: "evidence".into() }).collect()
}

fn every_request() -> Vec<Request> {
    vec![
        Request::Hello {
            min_version: 1,
            max_version: 3,
            client: "ekb".into(),
            client_version: "0.1.0".into(),
        },
        Request::DeviceInfo,
        Request::Load { payload: (0..=255u8).cycle().take(10_000).collect() },
        Request::Run {
            payload: PayloadId(3),
            seeds: Some(vec![0, 2]),
            timing: TimingOverrides { warmup: Some(1), cold_cache: Some(true), ..TimingOverrides::default() },
            threads: Some(2),
        },
        Request::Run {
            payload: PayloadId(4),
            seeds: None,
            timing: TimingOverrides::default(),
            threads: None,
        },
        Request::PairedRun {
            baseline: PayloadId(1),
            candidate: PayloadId(2),
            settings: PairedSettings { order_seed: 42, ..PairedSettings::DEFAULT },
        },
        Request::Unload { payload: PayloadId(9) },
        Request::Shutdown,
        Request::Hold {
            payload: PayloadId(5),
            seeds: None,
            timing: TimingOverrides { warmup: Some(3), ..TimingOverrides::default() },
            threads: Some(2),
        },
        Request::Turn { payload: PayloadId(5), budget_ms: 40 },
        Request::Release { payload: PayloadId(5) },
    ]
}

fn every_response() -> Vec<Response> {
    let mut v = vec![
        Response::HelloAck {
            version: 1,
            runtime: "ekb-rt".into(),
            runtime_version: "0.1.0".into(),
            device: summary(),
        },
        Response::DeviceInfo(device_info()),
        Response::Loaded {
            payload: PayloadId(1),
            kernels: vec!["matmul".into(), "relu".into()],
            warnings: vec![],
        },
        Response::RunReport(run_report(1, None)),
        Response::PairedReport(Box::new(PairedReport {
            baseline: run_report(1, None),
            candidate: run_report(2, Some(every_failure()[7].clone())),
            pairs: vec![
                PairSample { baseline_ns: 2000, candidate_ns: 1000, baseline_first: true },
                PairSample { baseline_ns: 2100, candidate_ns: 990, baseline_first: false },
            ],
            ratio: Some(RatioStats { median: 2.03, ci_low: 1.9, ci_high: 2.2, confidence: 0.95, rse: 0.004 }),
            stable: false,
            attempts: 2,
            stop: StopReason::TargetReached,
        })),
        Response::Unloaded { payload: PayloadId(1) },
        Response::Bye,
        Response::Error { kind: ErrorKind::PayloadInvalid, message: "bad magic".into() },
    ];
    v.extend(every_failure().into_iter().map(|f| Response::RunReport(run_report(5, Some(f)))));
    v
}

/// Encodes, frames, decodes; NaN-free values compare exactly.
fn round_trip<T: serde::Serialize + serde::de::DeserializeOwned + PartialEq + std::fmt::Debug>(msg: &T) {
    let frame = encode_frame(msg).unwrap();
    let len = u32::from_le_bytes(frame[..4].try_into().unwrap()) as usize;
    assert_eq!(len, frame.len() - 8);
    assert_eq!(u32::from_le_bytes(frame[4..8].try_into().unwrap()), crc32(&frame[8..]));
    let mut dec = FrameDecoder::new();
    let mut input = &frame[..];
    let body = dec.decode(&mut input).unwrap().unwrap();
    assert!(input.is_empty());
    assert_eq!(&decode_message::<T>(&body).unwrap(), msg);
}

#[test]
fn every_request_round_trips() {
    for r in every_request() {
        round_trip(&r);
    }
}

#[test]
fn every_response_round_trips() {
    for r in every_response() {
        round_trip(&r);
    }
}

#[test]
fn payload_bytes_travel_raw() {
    // A Load carries the payload as one length and the raw bytes, not as 10 000 numbers.
    let Request::Load { payload } = &every_request()[2] else { unreachable!() };
    let frame = encode_frame(&every_request()[2]).unwrap();
    // Variant 2, a varint length of 10 000 (two bytes: 0x90 0x4e), the bytes.
    assert_eq!(&frame[8..11], &[2, 0x90, 0x4e]);
    assert_eq!(&frame[11..], &payload[..]);
}

#[test]
fn golden_hello_frame() {
    let frame = encode_frame(&Request::Hello {
        min_version: 1,
        max_version: 2,
        client: "ekb".into(),
        client_version: "0.1.0".into(),
    })
    .unwrap();
    // Body: variant 0, varints 1 and 2, length-prefixed "ekb" and "0.1.0".
    let body = [0, 1, 2, 3, b'e', b'k', b'b', 5, b'0', b'.', b'1', b'.', b'0'];
    let mut want = vec![13, 0, 0, 0];
    want.extend_from_slice(&crc32(&body).to_le_bytes());
    want.extend_from_slice(&body);
    assert_eq!(frame, want);
}

#[test]
fn frozen_variants_keep_their_indices() {
    let first = |r: &Response| encode_frame(r).unwrap()[8];
    assert_eq!(first(&every_response()[0]), 0, "HelloAck");
    assert_eq!(first(&Response::Error { kind: ErrorKind::BadFrame, message: String::new() }), 7, "Error");
    // Error kinds are append-only: their indices are their order.
    let kinds = [
        ErrorKind::BadFrame,
        ErrorKind::BadMessage,
        ErrorKind::UnsupportedVersion,
        ErrorKind::NotNegotiated,
        ErrorKind::UnknownPayload,
        ErrorKind::PayloadInvalid,
        ErrorKind::LoadFailed,
        ErrorKind::Unsupported,
        ErrorKind::Internal,
    ];
    for (i, kind) in kinds.into_iter().enumerate() {
        let frame = encode_frame(&Response::Error { kind, message: "m".into() }).unwrap();
        assert_eq!(&frame[8..], &[7, i as u8, 1, b'm'], "{kind}");
    }
}

#[test]
fn version_negotiation() {
    // This crate speaks versions 2 (which changed `Timing` and `PairedSettings`) and 3 (which
    // added `Hold`, `Turn` and `Release`).
    assert_eq!(negotiate(2, 3), Some(3));
    assert_eq!(negotiate(2, 2), Some(2), "a version 2 client is still served");
    // A newer client that still speaks 3, and an older one that reaches 2.
    assert_eq!(negotiate(2, 5), Some(3));
    assert_eq!(negotiate(1, 2), Some(2));
    // A client that only speaks other versions, or none at all.
    assert_eq!(negotiate(1, 1), None);
    assert_eq!(negotiate(4, 5), None);
    assert_eq!(negotiate(0, 0), None);
    assert_eq!(negotiate(3, 1), None);
    let Response::Error { kind, message } = Response::unsupported_version(4, 5) else { panic!() };
    assert_eq!(kind, ErrorKind::UnsupportedVersion);
    assert_eq!(message, "the client speaks protocol versions 4..=5, this runtime speaks 2..=3");
}

#[test]
fn requests_of_version_3_come_after_the_others() {
    // Appended: every earlier request keeps its index, so a version 2 peer still reads them.
    let index = |r: &Request| encode_frame(r).unwrap()[8];
    let all = every_request();
    let indices: Vec<u8> = all.iter().map(index).collect();
    assert_eq!(indices, [0, 1, 2, 3, 3, 4, 5, 6, 7, 8, 9]);
}

#[test]
fn a_report_file_is_the_streamed_frames() {
    let messages = [every_response()[0].clone(), every_response()[3].clone(), every_response()[4].clone()];
    let file: Vec<u8> = messages.iter().flat_map(|m| encode_frame(m).unwrap()).collect();
    let bodies = split_frames(&file).unwrap();
    assert_eq!(bodies.len(), 3);
    let from_file: Vec<Response> = bodies.iter().map(|b| decode_message(b).unwrap()).collect();
    assert_eq!(from_file, messages);

    // Streamed in 1000-byte reads: the same messages.
    let mut dec = FrameDecoder::new();
    let mut streamed = Vec::new();
    for chunk in file.chunks(1000) {
        let mut input = chunk;
        while let Some(body) = dec.decode(&mut input).unwrap() {
            streamed.push(decode_message::<Response>(&body).unwrap());
        }
    }
    dec.finish().unwrap();
    assert_eq!(streamed, messages);

    // A file cut short, or with a corrupt byte, says so.
    let n = file.len() - 5;
    let last_start = n + 5 - encode_frame(&messages[2]).unwrap().len();
    assert_eq!(
        split_frames(&file[..n]).unwrap_err(),
        ProtocolError::Truncated { needed: (file.len() - last_start) as u64, got: (n - last_start) as u64 }
    );
    assert_eq!(split_frames(&file[..3]).unwrap_err(), ProtocolError::Truncated { needed: 8, got: 3 });
    let mut bad = file.clone();
    bad[20] ^= 1;
    assert!(matches!(split_frames(&bad).unwrap_err(), ProtocolError::CrcMismatch { .. }));
}

#[test]
fn reports_summarise_their_outcome() {
    let ok = run_report(1, None);
    assert!(ok.seeds[0].ok());
    assert!(!ok.seeds[1].ok());
    assert!(!ok.is_correct());
    let mut all_ok = ok.clone();
    all_ok.seeds.truncate(1);
    assert!(all_ok.is_correct());
    let names: Vec<String> = every_failure().iter().map(|f| f.kind.to_string()).collect();
    assert_eq!(
        names,
        [
            "memory: illegal allocation",
            "memory: capacity",
            "memory: out of bounds",
            "memory: guard corruption (`out`)",
            "memory: input write (`x`)",
            "memory: segfault",
            "timeout",
            "crash (signal 6)",
            "runtime error",
            "correctness",
            "parallel",
            "unstable timing",
        ]
    );
}

#[test]
fn timing_overrides_apply_field_by_field() {
    let base = ekb_wire::payload::TimingSettings::DEFAULT;
    let o = TimingOverrides { max_samples: Some(50), target_rse: Some(0.05), ..TimingOverrides::default() };
    let t = o.apply(&base);
    assert_eq!((t.max_samples, t.target_rse), (50, 0.05));
    assert_eq!((t.warmup, t.min_samples, t.budget_ms, t.cold_cache), (3, 10, 10_000, false));
    assert_eq!(TimingOverrides::default().apply(&base), base);
}
