//! The live-session driver of `run_payloads` against a scripted peer: a shell process that
//! plays back response frames (encoded here with `ekb-wire`) and records every request frame
//! it receives. It proves the order of the conversation (Hello, then Load, Run, Unload per
//! payload, then Shutdown), that a payload the runtime refuses becomes an error entry while
//! the session goes on, and the fallback to offline runs for a runtime without `serve`.

use ekb_deploy::command::{Cmd, Exec, System};
use ekb_deploy::report::Entry;
use ekb_deploy::transport::{run_payloads, Mode, Offline, RunSettings, Transport};
use ekb_ir::Diagnostic;
use ekb_wire::payload::{Backend, MemScope};
use ekb_wire::protocol::{
    decode_message, encode_frame, split_frames, DeviceSummary, ErrorKind, MemoryReport, OutputCheck,
    PayloadId, Request, Response, RunReport, ScopeBytes, SeedCheck, TimingOverrides,
};
use std::path::{Path, PathBuf};

/// A transport whose `serve` is a shell command line, and whose offline run is recorded.
struct Scripted {
    serve: String,
    offline_calls: usize,
    offline_report: Vec<u8>,
}

impl Transport for Scripted {
    fn describe(&self) -> String {
        "the scripted peer".into()
    }

    fn install(&mut self, _: &mut dyn Exec) -> Result<Vec<String>, Diagnostic> {
        Ok(vec![])
    }

    fn serve_cmd(&self) -> Cmd {
        Cmd::new("sh").arg("-c").arg(&self.serve)
    }

    fn run_offline(&mut self, _: &mut dyn Exec, _: &[PathBuf], _: &[String]) -> Result<Offline, Diagnostic> {
        self.offline_calls += 1;
        Ok(Offline { output: Default::default(), report: self.offline_report.clone() })
    }
}

fn hello() -> Response {
    Response::HelloAck {
        version: ekb_wire::protocol::PROTOCOL_VERSION,
        runtime: "ekb-rt".into(),
        runtime_version: "0.1.0".into(),
        device: DeviceSummary {
            arch: "x86_64".into(),
            cpu_model: "scripted".into(),
            cores: 1,
            memory_bytes: 1,
        },
    }
}

fn report(id: u64) -> RunReport {
    RunReport {
        payload: PayloadId(id),
        task: "t".into(),
        target: "host".into(),
        backend: Backend::CpuLlvm,
        threads: 1,
        seeds: vec![SeedCheck {
            seed: 0,
            outputs: vec![OutputCheck {
                buffer: "y".into(),
                ok: true,
                max_abs_err: 0.0,
                max_rel_err: 0.0,
                first_mismatch: None,
                mismatches: 0,
            }],
        }],
        timing: None,
        counters: vec![],
        memory: MemoryReport {
            by_scope: vec![ScopeBytes { scope: MemScope::Global, bytes: 64 }],
            peak_bytes: 64,
            max_rss_bytes: None,
            allocations: vec![],
        },
        failure: None,
        log: vec![],
    }
}

fn frames(responses: &[Response]) -> Vec<u8> {
    responses.iter().flat_map(|r| encode_frame(r).unwrap()).collect()
}

fn payload_files(dir: &Path) -> Vec<PathBuf> {
    ["a.ekp", "b.ekp"]
        .iter()
        .map(|n| {
            let p = dir.join(n);
            std::fs::write(&p, n.as_bytes()).unwrap();
            p
        })
        .collect()
}

#[test]
fn a_session_loads_runs_and_unloads_each_payload_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let (responses, requests) = (dir.path().join("responses"), dir.path().join("requests"));
    std::fs::write(
        &responses,
        frames(&[
            hello(),
            Response::Loaded { payload: PayloadId(7), kernels: vec!["k".into()], warnings: vec![] },
            Response::RunReport(report(7)),
            Response::Unloaded { payload: PayloadId(7) },
            Response::Error { kind: ErrorKind::PayloadInvalid, message: "bad magic".into() },
            Response::Bye,
        ]),
    )
    .unwrap();
    let mut t = Scripted {
        serve: format!("cat '{}'; cat > '{}'", responses.display(), requests.display()),
        offline_calls: 0,
        offline_report: vec![],
    };
    let payloads = payload_files(dir.path());
    let settings = RunSettings {
        seeds: Some(vec![0]),
        timing: TimingOverrides { max_samples: Some(5), ..Default::default() },
        threads: Some(2),
    };
    let out = run_payloads(&mut t, &mut System, &payloads, &settings, Mode::Auto).unwrap();
    assert_eq!(out.mode, Mode::Serve);
    assert_eq!(out.report.hello.device.cpu_model, "scripted");
    assert_eq!(
        out.report.entries,
        vec![
            Entry::Run(Box::new(report(7))),
            Entry::Error { kind: ErrorKind::PayloadInvalid, message: "bad magic".into() }
        ]
    );
    let written = std::fs::read(&requests).unwrap();
    let sent: Vec<Request> =
        split_frames(&written).unwrap().into_iter().map(|b| decode_message(b).unwrap()).collect();
    assert!(matches!(&sent[0], Request::Hello { client, .. } if client == "ekb"), "{:?}", sent[0]);
    assert_eq!(
        sent[1..],
        [
            Request::Load { payload: b"a.ekp".to_vec() },
            Request::Run {
                payload: PayloadId(7),
                seeds: Some(vec![0]),
                timing: TimingOverrides { max_samples: Some(5), ..Default::default() },
                threads: Some(2)
            },
            Request::Unload { payload: PayloadId(7) },
            Request::Load { payload: b"b.ekp".to_vec() },
            Request::Shutdown,
        ]
    );
    assert_eq!(t.offline_calls, 0);
}

#[test]
fn a_runtime_without_serve_falls_back_to_offline_only_in_auto_mode() {
    let dir = tempfile::tempdir().unwrap();
    let payloads = payload_files(dir.path());
    let mut offline_report = frames(&[hello()]);
    offline_report.extend(frames(&[Response::RunReport(report(0))]));
    let mut t = Scripted {
        serve: "echo 'ekb-rt: unknown command `serve`' >&2; exit 2".into(),
        offline_calls: 0,
        offline_report,
    };
    let out = run_payloads(&mut t, &mut System, &payloads[..1], &RunSettings::default(), Mode::Auto).unwrap();
    assert_eq!((out.mode, t.offline_calls), (Mode::Offline, 1));
    assert_eq!(
        out.log,
        vec!["the runtime on the scripted peer has no `serve` command (ekb-rt: unknown command `serve`); ran offline with `ekb-rt run`"]
    );
    assert!(out.report.all_correct());

    let e =
        run_payloads(&mut t, &mut System, &payloads[..1], &RunSettings::default(), Mode::Serve).unwrap_err();
    assert_eq!(e.message, "the runtime on the scripted peer has no `serve` command");
    assert_eq!(t.offline_calls, 1);
}

#[test]
fn a_runtime_that_dies_mid_session_is_an_error_with_its_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let responses = dir.path().join("responses");
    let mut bytes = frames(&[hello()]);
    let loaded = frames(&[Response::Loaded { payload: PayloadId(1), kernels: vec![], warnings: vec![] }]);
    bytes.extend_from_slice(&loaded[..loaded.len() - 3]);
    std::fs::write(&responses, bytes).unwrap();
    // The peer dies after it has read the Hello and the first Load (so our writes never meet a
    // closed pipe), leaving the Loaded frame cut short.
    let hello_req = Request::Hello {
        min_version: ekb_wire::protocol::MIN_PROTOCOL_VERSION,
        max_version: ekb_wire::protocol::PROTOCOL_VERSION,
        client: "ekb".into(),
        client_version: env!("CARGO_PKG_VERSION").into(),
    };
    let read = encode_frame(&hello_req).unwrap().len()
        + encode_frame(&Request::Load { payload: b"a.ekp".to_vec() }).unwrap().len();
    let mut t = Scripted {
        serve: format!(
            "cat '{}'; dd bs=1 count={read} of=/dev/null 2>/dev/null; echo 'ekb-rt: out of memory' >&2; exit 3",
            responses.display()
        ),
        offline_calls: 0,
        offline_report: vec![],
    };
    let payloads = payload_files(dir.path());
    let e = run_payloads(&mut t, &mut System, &payloads, &RunSettings::default(), Mode::Auto).unwrap_err();
    assert!(
        e.message.starts_with(
            "session with the runtime on the scripted peer: the runtime closed the connection in the middle of Loaded"
        ),
        "{}",
        e.message
    );
    assert!(e.notes.contains(&"stderr: ekb-rt: out of memory".to_string()), "{:?}", e.notes);
    assert_eq!(t.offline_calls, 0);
}
