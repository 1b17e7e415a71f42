//! Report files: what a runtime wrote offline (`ekb-rt run --out`) or what `ekb run` saved from
//! a live session — the same frames either way (`docs/protocol.md`, "Report files"): a
//! `HelloAck`, then one `RunReport`, `PairedReport` or `Error` per payload.
//!
//! What it must keep true: [`parse`] accepts exactly that shape and nothing else (a corrupt,
//! truncated or misordered file is a diagnostic naming the frame); [`encode`] of a parsed file
//! gives back its bytes; the table ([`render`]) and the JSON ([`to_json`]) show every seed,
//! every counter (with why it is unavailable), every allocation verdict and the failure, and
//! never present a missing measurement as a number.

use crate::build::human_bytes;
use crate::session::{response_name, Hello};
use ekb_ir::Diagnostic;
use ekb_wire::protocol::{
    decode_message, encode_frame, split_frames, AllocationCheck, Counter, CounterKind, CounterReading,
    ErrorKind, LogLevel, MemoryReport, PairedReport, Response, RunReport, StopReason, Timing, Verdict,
};
use serde::Serialize;
use std::fmt::Write as _;

/// One payload's outcome in a report file.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Entry {
    Run(Box<RunReport>),
    Paired(Box<PairedReport>),
    /// The payload could not be run at all (invalid, or its code did not load).
    Error {
        kind: ErrorKind,
        message: String,
    },
}

impl Entry {
    /// The entry as the response frame it was read from.
    pub fn to_response(&self) -> Response {
        match self {
            Entry::Run(r) => Response::RunReport((**r).clone()),
            Entry::Paired(p) => Response::PairedReport(p.clone()),
            Entry::Error { kind, message } => Response::Error { kind: *kind, message: message.clone() },
        }
    }

    /// Ran, every seed matched, nothing failed.
    pub fn is_correct(&self) -> bool {
        match self {
            Entry::Run(r) => r.is_correct(),
            Entry::Paired(p) => p.baseline.is_correct() && p.candidate.is_correct(),
            Entry::Error { .. } => false,
        }
    }
}

/// A decoded report file.
#[derive(Debug, Clone, PartialEq)]
pub struct ReportFile {
    pub hello: Hello,
    pub entries: Vec<Entry>,
}

impl ReportFile {
    pub fn all_correct(&self) -> bool {
        !self.entries.is_empty() && self.entries.iter().all(Entry::is_correct)
    }
}

/// Decodes a report file (`name` is used in messages).
pub fn parse(name: &str, bytes: &[u8]) -> Result<ReportFile, Diagnostic> {
    let bad = |what: String| {
        Diagnostic::error(format!("`{name}` is not a report file: {what}"))
            .with_expected("frames written by `ekb-rt run --out` or `ekb run --save-report`: a HelloAck, then one report per payload")
    };
    let bodies = split_frames(bytes).map_err(|e| bad(e.to_string()))?;
    let mut responses = Vec::with_capacity(bodies.len());
    for (i, body) in bodies.iter().enumerate() {
        let r: Response = decode_message(body).map_err(|e| bad(format!("frame {i}: {e}")))?;
        responses.push(r);
    }
    let mut it = responses.into_iter();
    let hello = match it.next() {
        Some(Response::HelloAck { version, runtime, runtime_version, device }) => {
            Hello { version, runtime, runtime_version, device }
        }
        Some(other) => return Err(bad(format!("frame 0 is {}, not HelloAck", response_name(&other)))),
        None => return Err(bad("the file is empty".into())),
    };
    let mut entries = Vec::new();
    for (i, r) in it.enumerate() {
        entries.push(match r {
            Response::RunReport(r) => Entry::Run(Box::new(r)),
            Response::PairedReport(p) => Entry::Paired(p),
            Response::Error { kind, message } => Entry::Error { kind, message },
            other => {
                return Err(bad(format!(
                    "frame {} is {}, not a RunReport, PairedReport or Error",
                    i + 1,
                    response_name(&other)
                )))
            }
        });
    }
    Ok(ReportFile { hello, entries })
}

/// The bytes of a report file.
pub fn encode(file: &ReportFile) -> Vec<u8> {
    let mut out = Vec::new();
    for r in std::iter::once(file.hello.to_response()).chain(file.entries.iter().map(Entry::to_response)) {
        // Reports are far below the frame limit; an encoding failure is a bug.
        out.extend(encode_frame(&r).expect("a report frame encodes"));
    }
    out
}

/// A report file as JSON: the runtime, the device and every entry with all its evidence.
pub fn to_json(name: &str, file: &ReportFile) -> serde_json::Value {
    serde_json::json!({
        "file": name,
        "protocol_version": file.hello.version,
        "runtime": file.hello.runtime,
        "runtime_version": file.hello.runtime_version,
        "device": {
            "arch": file.hello.device.arch,
            "cpu_model": file.hello.device.cpu_model,
            "cores": file.hello.device.cores,
            "memory_bytes": file.hello.device.memory_bytes,
        },
        "all_correct": file.all_correct(),
        "entries": file.entries,
    })
}

fn ns(v: f64) -> String {
    if v >= 1e9 {
        format!("{:.3} s", v / 1e9)
    } else if v >= 1e6 {
        format!("{:.3} ms", v / 1e6)
    } else if v >= 1e3 {
        format!("{:.2} us", v / 1e3)
    } else {
        format!("{v:.0} ns")
    }
}

fn stop(s: StopReason) -> &'static str {
    match s {
        StopReason::TargetReached => "target error reached",
        StopReason::MaxSamples => "sample limit",
        StopReason::Budget => "time budget spent",
    }
}

/// The report file as a table for a terminal.
pub fn render(name: &str, file: &ReportFile) -> String {
    let mut s = String::new();
    let d = &file.hello.device;
    let _ = writeln!(
        s,
        "{name}: {} {} (protocol {}) on {} {}, {} cores, {}",
        file.hello.runtime,
        file.hello.runtime_version,
        file.hello.version,
        d.arch,
        if d.cpu_model.is_empty() { "(unknown CPU)" } else { &d.cpu_model },
        d.cores,
        human_bytes(d.memory_bytes)
    );
    if file.entries.is_empty() {
        s.push_str("  no payload results\n");
    }
    for (i, e) in file.entries.iter().enumerate() {
        match e {
            Entry::Run(r) => render_run(&mut s, &format!("[{i}]"), r),
            Entry::Paired(p) => {
                let _ = writeln!(
                    s,
                    "[{i}] paired run: {} attempt(s), {} pairs, stopped: {}",
                    p.attempts,
                    p.pairs.len(),
                    stop(p.stop)
                );
                match &p.ratio {
                    Some(r) => {
                        let _ = writeln!(
                            s,
                            "  speedup {:.3}x (baseline / candidate), {:.0}% CI [{:.3}, {:.3}], rse {:.2}%{}",
                            r.median,
                            r.confidence * 100.0,
                            r.ci_low,
                            r.ci_high,
                            r.rse * 100.0,
                            if p.stable { "" } else { ", UNSTABLE" }
                        );
                        if r.median > 10.0 {
                            s.push_str("  flagged for review: a speedup above 10x\n");
                        }
                    }
                    None => s.push_str("  no speedup: a side failed\n"),
                }
                render_run(&mut s, "  baseline", &p.baseline);
                render_run(&mut s, "  candidate", &p.candidate);
            }
            Entry::Error { kind, message } => {
                let _ = writeln!(s, "[{i}] NOT RUN ({kind}): {message}");
            }
        }
    }
    s
}

fn render_run(s: &mut String, label: &str, r: &RunReport) {
    let verdict = match (&r.failure, r.is_correct()) {
        (None, true) => "correct".to_string(),
        (Some(f), _) => format!("FAILED: {}", f.kind),
        (None, false) => "FAILED".to_string(),
    };
    let _ = writeln!(
        s,
        "{label} {} on {} ({}, {} thread{}): {verdict}",
        r.task,
        r.target,
        r.backend,
        r.threads,
        if r.threads == 1 { "" } else { "s" }
    );
    let pad = " ".repeat(label.len() - label.trim_start().len() + 2);
    if let Some(f) = &r.failure {
        let _ = writeln!(s, "{pad}evidence: {}", f.evidence);
    }
    if !r.seeds.is_empty() {
        let _ = writeln!(
            s,
            "{pad}{:<20} {:<12} {:<5} {:>12} {:>12} {:>10} {:>8}",
            "seed", "output", "ok", "max abs err", "max rel err", "mismatches", "first"
        );
        for seed in &r.seeds {
            for o in &seed.outputs {
                let _ = writeln!(
                    s,
                    "{pad}{:<20} {:<12} {:<5} {:>12.3e} {:>12.3e} {:>10} {:>8}",
                    seed.seed,
                    o.buffer,
                    if o.ok { "ok" } else { "NO" },
                    o.max_abs_err,
                    o.max_rel_err,
                    o.mismatches,
                    o.first_mismatch.map_or("-".to_string(), |i| i.to_string())
                );
            }
        }
    }
    match &r.timing {
        Some(t) => render_timing(s, &pad, t),
        None => {
            let _ = writeln!(s, "{pad}timing: not measured");
        }
    }
    render_counters(s, &pad, &r.counters);
    render_memory(s, &pad, &r.memory);
    for l in r.log.iter().filter(|l| l.level >= LogLevel::Warn) {
        let level = if l.level == LogLevel::Error { "error" } else { "warning" };
        let _ = writeln!(s, "{pad}{level}: {}", l.message);
    }
}

fn render_timing(s: &mut String, pad: &str, t: &Timing) {
    let st = &t.stats;
    let _ = writeln!(
        s,
        "{pad}timing: median {}  min {}  mean {}  p10 {}  p90 {}  cv {:.2}%  rse {:.2}%",
        ns(st.median_ns),
        ns(st.min_ns),
        ns(st.mean_ns),
        ns(st.p10_ns),
        ns(st.p90_ns),
        st.cv * 100.0,
        st.rse * 100.0
    );
    let _ = writeln!(
        s,
        "{pad}        {} samples after {} warm-up run(s), {} cache, clock {}, stopped: {}",
        t.samples_ns.len(),
        t.warmup,
        if t.cold_cache { "cold" } else { "warm" },
        t.clock,
        stop(t.stop)
    );
}

fn render_counters(s: &mut String, pad: &str, counters: &[Counter]) {
    if counters.is_empty() {
        let _ = writeln!(s, "{pad}counters: none reported");
        return;
    }
    let _ = writeln!(s, "{pad}counters:");
    for c in counters {
        let kind = match c.kind {
            CounterKind::Hardware => "hw",
            CounterKind::Software => "sw",
            CounterKind::Gpu => "gpu",
            CounterKind::Step => "step",
        };
        let value = match &c.reading {
            CounterReading::Counted { total, runs, scaled } => {
                let per = if *runs > 0 { *total as f64 / *runs as f64 } else { 0.0 };
                format!(
                    "{per:.0} per run ({total} over {runs} run(s){})",
                    if *scaled { ", scaled" } else { "" }
                )
            }
            CounterReading::Unavailable { reason } => format!("unavailable: {reason}"),
        };
        let _ = writeln!(s, "{pad}  {:<20} {kind}  {value}", c.name);
    }
}

fn render_memory(s: &mut String, pad: &str, m: &MemoryReport) {
    let scopes: Vec<String> =
        m.by_scope.iter().map(|b| format!("{} {}", b.scope, human_bytes(b.bytes))).collect();
    let _ = writeln!(
        s,
        "{pad}memory: {}; planned peak {}; max RSS {}",
        if scopes.is_empty() { "no allocations reported".to_string() } else { scopes.join(", ") },
        human_bytes(m.peak_bytes),
        m.max_rss_bytes.map_or("unknown".to_string(), human_bytes)
    );
    if m.allocations.is_empty() {
        return;
    }
    let _ = writeln!(
        s,
        "{pad}legality: {:<16} {:>12} {:<7} {:>12}  verdict",
        "allocation", "bytes", "scope", "limit"
    );
    for AllocationCheck { name, bytes, scope, limit_bytes, verdict } in &m.allocations {
        let verdict = match verdict {
            Verdict::Legal => "legal".to_string(),
            Verdict::Illegal { reason } => format!("ILLEGAL: {reason}"),
            Verdict::OverCapacity { reason } => format!("OVER CAPACITY: {reason}"),
        };
        let _ = writeln!(
            s,
            "{pad}          {name:<16} {bytes:>12} {:<7} {:>12}  {verdict}",
            scope.name(),
            limit_bytes.map_or("-".to_string(), |l| l.to_string())
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ekb_wire::payload::{Backend, MemScope};
    use ekb_wire::protocol::{
        DeviceSummary, Failure, FailureKind, LogLine, OutputCheck, PayloadId, ScopeBytes, SeedCheck, Stats,
    };

    fn hello() -> Hello {
        Hello {
            version: ekb_wire::protocol::PROTOCOL_VERSION,
            runtime: "ekb-rt".into(),
            runtime_version: "0.1.0".into(),
            device: DeviceSummary {
                arch: "aarch64".into(),
                cpu_model: "Cortex-A76".into(),
                cores: 8,
                memory_bytes: 8 << 30,
            },
        }
    }

    fn run_report(ok: bool) -> RunReport {
        RunReport {
            payload: PayloadId(0),
            task: "matmul".into(),
            target: "rk3588".into(),
            backend: Backend::CpuLlvm,
            threads: 4,
            seeds: vec![SeedCheck {
                seed: 7,
                outputs: vec![OutputCheck {
                    buffer: "y".into(),
                    ok,
                    max_abs_err: if ok { 2.5e-7 } else { 0.5 },
                    max_rel_err: 1e-6,
                    first_mismatch: (!ok).then_some(3),
                    mismatches: u64::from(!ok),
                }],
            }],
            timing: Some(Timing {
                samples_ns: vec![1_000_000, 1_200_000, 1_100_000],
                reps: 1,
                warmup: 3,
                cold_cache: false,
                clock: "CLOCK_MONOTONIC_RAW".into(),
                stop: StopReason::MaxSamples,
                stats: Stats {
                    median_ns: 1.1e6,
                    min_ns: 1e6,
                    mean_ns: 1.1e6,
                    p10_ns: 1.02e6,
                    p90_ns: 1.18e6,
                    cv: 0.09,
                    rse: 0.04,
                },
            }),
            counters: vec![
                Counter {
                    name: "cycles".into(),
                    kind: CounterKind::Hardware,
                    reading: CounterReading::Counted { total: 3000, runs: 3, scaled: false },
                },
                Counter {
                    name: "cache-misses".into(),
                    kind: CounterKind::Hardware,
                    reading: CounterReading::Unavailable { reason: "perf_event_paranoid is 3".into() },
                },
            ],
            memory: MemoryReport {
                by_scope: vec![ScopeBytes { scope: MemScope::Global, bytes: 4096 }],
                peak_bytes: 4096,
                max_rss_bytes: None,
                allocations: vec![AllocationCheck {
                    name: "tile".into(),
                    bytes: 1 << 20,
                    scope: MemScope::Local,
                    limit_bytes: Some(256 << 10),
                    verdict: Verdict::Illegal { reason: "over the stack budget".into() },
                }],
            },
            failure: (!ok)
                .then(|| Failure { kind: FailureKind::Correctness, evidence: "seed 7: y differs".into() }),
            log: vec![
                LogLine { level: LogLevel::Warn, message: "no seccomp".into() },
                LogLine { level: LogLevel::Info, message: "quiet".into() },
            ],
        }
    }

    fn file() -> ReportFile {
        ReportFile {
            hello: hello(),
            entries: vec![
                Entry::Run(Box::new(run_report(true))),
                Entry::Run(Box::new(run_report(false))),
                Entry::Error { kind: ErrorKind::LoadFailed, message: "unknown relocation R_X".into() },
            ],
        }
    }

    #[test]
    fn files_round_trip_through_their_frames() {
        let f = file();
        let bytes = encode(&f);
        assert_eq!(parse("r.ekr", &bytes).unwrap(), f);
        assert!(!f.all_correct());
        assert!(f.entries[0].is_correct());
    }

    #[test]
    fn malformed_files_are_diagnostics_naming_the_frame() {
        let bytes = encode(&file());
        let e = parse("r.ekr", &bytes[..bytes.len() - 2]).unwrap_err();
        assert!(
            e.message.starts_with("`r.ekr` is not a report file: the stream ended inside a frame"),
            "{}",
            e.message
        );
        let e = parse("r.ekr", &[]).unwrap_err();
        assert_eq!(e.message, "`r.ekr` is not a report file: the file is empty");
        let bye_first = encode_frame(&Response::Bye).unwrap();
        assert_eq!(
            parse("r.ekr", &bye_first).unwrap_err().message,
            "`r.ekr` is not a report file: frame 0 is Bye, not HelloAck"
        );
        let mut two_hellos = encode_frame(&hello().to_response()).unwrap();
        two_hellos.extend(encode_frame(&hello().to_response()).unwrap());
        assert_eq!(
            parse("r.ekr", &two_hellos).unwrap_err().message,
            "`r.ekr` is not a report file: frame 1 is HelloAck, not a RunReport, PairedReport or Error"
        );
    }

    #[test]
    fn the_table_shows_seeds_timing_counters_memory_legality_and_failures() {
        let t = render("r.ekr", &file());
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines[0], "r.ekr: ekb-rt 0.1.0 (protocol 3) on aarch64 Cortex-A76, 8 cores, 8.0 GiB");
        assert_eq!(lines[1], "[0] matmul on rk3588 (cpu-llvm, 4 threads): correct");
        assert!(
            t.contains(
                "  7                    y            ok        2.500e-7     1.000e-6          0        -"
            ),
            "{t}"
        );
        assert!(t.contains("timing: median 1.100 ms  min 1.000 ms  mean 1.100 ms  p10 1.020 ms  p90 1.180 ms  cv 9.00%  rse 4.00%"), "{t}");
        assert!(t.contains("3 samples after 3 warm-up run(s), warm cache, clock CLOCK_MONOTONIC_RAW, stopped: sample limit"), "{t}");
        assert!(t.contains("cycles               hw  1000 per run (3000 over 3 run(s))"), "{t}");
        assert!(t.contains("cache-misses         hw  unavailable: perf_event_paranoid is 3"), "{t}");
        assert!(t.contains("memory: global 4.0 KiB; planned peak 4.0 KiB; max RSS unknown"), "{t}");
        assert!(
            t.contains("tile                  1048576 local         262144  ILLEGAL: over the stack budget"),
            "{t}"
        );
        assert!(t.contains("warning: no seccomp"), "{t}");
        assert!(!t.contains("quiet"), "info lines are not shown: {t}");
        assert!(t.contains("[1] matmul on rk3588 (cpu-llvm, 4 threads): FAILED: correctness\n  evidence: seed 7: y differs"), "{t}");
        assert!(
            t.contains(
                "  7                    y            NO        5.000e-1     1.000e-6          1        3"
            ),
            "{t}"
        );
        assert!(t.contains("[2] NOT RUN (load-failed): unknown relocation R_X"), "{t}");
    }

    #[test]
    fn json_keeps_every_field() {
        let j = to_json("r.ekr", &file());
        assert_eq!(j["device"]["cpu_model"], "Cortex-A76");
        assert_eq!(j["all_correct"], false);
        assert_eq!(j["entries"][0]["run"]["seeds"][0]["outputs"][0]["max_abs_err"], 2.5e-7);
        assert_eq!(j["entries"][0]["run"]["timing"]["samples_ns"][1], 1_200_000);
        assert_eq!(j["entries"][1]["run"]["failure"]["kind"], "Correctness");
        assert_eq!(
            j["entries"][0]["run"]["counters"][1]["reading"]["Unavailable"]["reason"],
            "perf_event_paranoid is 3"
        );
        assert_eq!(j["entries"][2]["error"]["kind"], "LoadFailed");
    }
}
