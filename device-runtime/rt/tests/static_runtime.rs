//! The static musl runtimes, built as they ship (`cargo build --release --target
//! <arch>-unknown-linux-musl`), run the operator corpus and a graph whose weights come from a
//! data file (parameter data in the payload) from payload files through the offline `ekb-rt
//! run` mode: the aarch64 binary under qemu-user on objects compiled for the `aarch64-qemu`
//! profile, the x86_64 binary natively on `host` objects. The report file holds
//! a `HelloAck` and one correct `RunReport` per payload, in order. Also: both binaries are
//! statically linked, and the command line's exit statuses and error frames.

mod common;

use ekb_wire::protocol::{decode_message, split_frames, CounterKind, CounterReading, ErrorKind, Response};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn run(cmd: &mut Command) -> Output {
    cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"))
}

/// The responses of a report file.
fn read_report(path: &Path) -> Vec<Response> {
    let bytes = std::fs::read(path).unwrap();
    split_frames(&bytes).unwrap().into_iter().map(|f| decode_message::<Response>(f).unwrap()).collect()
}

/// Runs `payloads` with the runtime (through `runner` when given) and checks the report: a
/// `HelloAck` for `arch`, then one correct report per payload, in order, whose loader logs
/// show that every relocation type in `relocations` was applied somewhere.
fn run_corpus(
    runtime: &Path,
    runner: Option<&str>,
    arch: &str,
    relocations: &[&str],
    payloads: &[(String, PathBuf)],
    dir: &Path,
) -> Vec<Response> {
    let report = dir.join("report.ekr");
    let mut cmd = match runner {
        Some(r) => {
            let mut c = Command::new(r);
            c.arg(runtime);
            c
        }
        None => Command::new(runtime),
    };
    cmd.arg("run").args(payloads.iter().map(|p| &p.1)).arg("--out").arg(&report).args([
        "--threads",
        "2",
        "--warmup",
        "0",
        "--min-samples",
        "1",
        "--max-samples",
        "2",
    ]);
    let out = run(&mut cmd);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}\n{stdout}\n{}", out.status, String::from_utf8_lossy(&out.stderr));
    let correct = stdout.lines().filter(|l| l.contains(": correct (") && l.ends_with(" seeds, 2 threads)"));
    assert_eq!(correct.count(), payloads.len(), "{stdout}");
    let responses = read_report(&report);
    assert_eq!(responses.len(), payloads.len() + 1);
    match &responses[0] {
        Response::HelloAck { runtime, device, .. } => {
            assert_eq!(runtime, "ekb-rt");
            assert_eq!(device.arch, arch);
        }
        other => panic!("the report starts with {other:?}"),
    }
    let mut failures = Vec::new();
    let mut logs = String::new();
    for (i, (r, (name, _))) in responses[1..].iter().zip(payloads).enumerate() {
        match r {
            Response::RunReport(r) => {
                logs.extend(r.log.iter().map(|l| l.message.clone() + "\n"));
                assert_eq!(r.payload.0, i as u64, "{name}: reports come in payload order");
                let seeds = if name.starts_with("hand-written") { 2 } else { 3 };
                assert_eq!(r.seeds.len(), seeds, "{name}");
                if !r.is_correct() {
                    failures.push(format!("{name}: {:?}", r.failure));
                }
            }
            other => failures.push(format!("{name}: {other:?}")),
        }
    }
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
    for r in relocations {
        let used = logs.contains(&format!("[{r} x")) || logs.contains(&format!(", {r} x"));
        assert!(used, "no payload used {r}:\n{logs}");
    }
    responses
}

/// A payload whose aarch64 kernel is hand-written: `y[i] = x[i] + 1` for 4 elements, the 1.0
/// loaded from `.rodata.cst4` (LDST32; an unused 8-byte constant exercises LDST64), each
/// addition in a helper of another section reached with `bl` (CALL26), and the return through
/// a tail branch there (JUMP26).
fn inc_payload(dir: &Path) -> PathBuf {
    let object = common::assemble(
        r#"
    .text
    .globl ekb_k_inc
    .type ekb_k_inc,@function
ekb_k_inc:
    stp x29, x30, [sp, #-16]!
    mov x29, sp
    ldp x1, x2, [x0]
    adrp x3, .LC_ONE
    ldr s1, [x3, :lo12:.LC_ONE]
    adrp x5, .LC_ZERO
    ldr d2, [x5, :lo12:.LC_ZERO]
    fmov d3, d2
    mov x4, #0
1:  ldr s0, [x1, x4, lsl #2]
    bl add_one
    str s0, [x2, x4, lsl #2]
    add x4, x4, #1
    cmp x4, #4
    b.lt 1b
    ldp x29, x30, [sp], #16
    b finish
    .section .text.helpers,"ax",@progbits
add_one:
    fadd s0, s0, s1
    ret
finish:
    ret
    .section .rodata.cst4,"aM",@progbits,4
    .p2align 2
.LC_ONE:
    .word 0x3f800000
    .section .rodata.cst8,"aM",@progbits,8
    .p2align 3
.LC_ZERO:
    .quad 0
"#,
        "aarch64-unknown-linux-gnu",
    );
    let path = dir.join("inc.ekp");
    let payload = common::elementwise_payload(object, "inc", 4, &[3, 4], |x| x + 1.0);
    std::fs::write(&path, payload).unwrap();
    path
}

/// A payload whose x86-64 kernel is hand-written: `y[i] = fabsf(x[i])` for 4 elements, the
/// import's address loaded once from its GOT slot into a register (`movq fabsf@GOTPCREL(%rip)`,
/// REX_GOTPCRELX; emitted kernels call their imports through the GOT directly, GOTPCRELX) and
/// called through it.
fn abs_payload(dir: &Path) -> PathBuf {
    let object = common::assemble(
        r#"
    .text
    .globl ekb_k_abs
    .type ekb_k_abs,@function
ekb_k_abs:
    push %rbx
    push %r12
    push %r13
    push %r14
    sub $8, %rsp
    mov (%rdi), %r12
    mov 8(%rdi), %r13
    movq fabsf@GOTPCREL(%rip), %rbx
    xor %r14d, %r14d
1:  movss (%r12,%r14,4), %xmm0
    call *%rbx
    movss %xmm0, (%r13,%r14,4)
    inc %r14
    cmp $4, %r14
    jl 1b
    add $8, %rsp
    pop %r14
    pop %r13
    pop %r12
    pop %rbx
    ret
"#,
        "x86_64-unknown-linux-gnu",
    );
    let path = dir.join("abs.ekp");
    let payload = common::elementwise_payload(object, "abs", 4, &[3, 4], f32::abs);
    std::fs::write(&path, payload).unwrap();
    path
}

fn file_says(path: &Path) -> String {
    String::from_utf8_lossy(&run(Command::new("file").arg("-b").arg(path)).stdout).into_owned()
}

#[test]
fn the_aarch64_runtime_runs_the_corpus_under_qemu() {
    let runtime = common::build_static_runtime("aarch64-unknown-linux-musl");
    let kind = file_says(&runtime);
    assert!(kind.contains("ARM aarch64") && kind.contains("statically linked"), "{kind}");
    let dir = common::work_dir("corpus-qemu");
    let payloads = common::corpus_payloads("aarch64-qemu", &dir);
    let relocations = [
        "R_AARCH64_ADR_PREL_PG_HI21",
        "R_AARCH64_ADD_ABS_LO12_NC",
        "R_AARCH64_LDST64_ABS_LO12_NC",
        "R_AARCH64_LDST128_ABS_LO12_NC",
        "R_AARCH64_ADR_GOT_PAGE",
        "R_AARCH64_LD64_GOT_LO12_NC",
    ];
    let mut payloads = payloads;
    payloads.push(common::data_payload("aarch64-qemu", &dir));
    payloads.push(("hand-written inc".into(), inc_payload(&dir)));
    let relocations =
        [&relocations[..], &["R_AARCH64_CALL26", "R_AARCH64_JUMP26", "R_AARCH64_LDST32_ABS_LO12_NC"][..]]
            .concat();
    let responses = run_corpus(&runtime, Some("qemu-aarch64"), "aarch64", &relocations, &payloads, &dir);
    // Under qemu-user there is no system-call filter and no perf_event_open: every report says so.
    for r in &responses[1..] {
        let Response::RunReport(r) = r else { panic!("{r:?}") };
        assert!(
            r.log.iter().any(|l| l
                .message
                .starts_with("isolation unavailable: seccomp not supported under qemu-user")),
            "{:?}",
            r.log
        );
        let perf: Vec<_> = r.counters.iter().filter(|c| c.kind != CounterKind::Step).collect();
        assert_eq!(perf.len(), 9);
        for c in perf {
            match &c.reading {
                CounterReading::Unavailable { reason } => {
                    assert!(reason.contains("qemu-user does not emulate perf_event_open"), "{reason}")
                }
                other => panic!("{}: {other:?}", c.name),
            }
        }
    }
    // Under qemu-user, `info` says so.
    let json = run(Command::new("qemu-aarch64").arg(&runtime).args(["info", "--json"])).stdout;
    let v: serde_json::Value = serde_json::from_slice(&json).unwrap();
    assert_eq!(v["arch"], "aarch64");
    let emulation = v["emulation"].as_str().unwrap();
    assert!(emulation.starts_with("qemu-user (") && emulation.contains("qemu-aarch64"), "{emulation}");
    let reason = v["isolation"]["Unavailable"]["reason"].as_str().unwrap();
    assert!(reason.contains("seccomp not supported under qemu-user"), "{reason}");
    let cycles = &v["counters"][0];
    assert_eq!(cycles["name"], "cycles");
    let reason = cycles["availability"]["Unavailable"]["reason"].as_str().unwrap();
    assert!(reason.contains("qemu-user does not emulate perf_event_open"), "{reason}");
}

#[test]
fn the_x86_64_static_runtime_runs_the_corpus_and_reports_bad_payloads() {
    let runtime = common::build_static_runtime("x86_64-unknown-linux-musl");
    let kind = file_says(&runtime);
    assert!(kind.contains("x86-64") && kind.contains("statically linked"), "{kind}");
    let dir = common::work_dir("corpus-static-x86_64");
    let mut payloads = common::corpus_payloads("host", &dir);
    payloads.push(common::data_payload("host", &dir));
    payloads.push(("hand-written abs".into(), abs_payload(&dir)));
    let relocations = ["R_X86_64_PC32", "R_X86_64_GOTPCRELX", "R_X86_64_REX_GOTPCRELX"];
    let responses = run_corpus(&runtime, None, "x86_64", &relocations, &payloads, &dir);
    // Natively the static runtime isolates every run under the system-call filter.
    for r in &responses[1..] {
        let Response::RunReport(r) = r else { panic!("{r:?}") };
        assert!(
            r.log.iter().any(|l| l.message.contains("under a system-call filter (seccomp)")),
            "{:?}",
            r.log
        );
    }

    // A corrupt payload between two good ones: an error frame in its place, the others still
    // run, exit status 1.
    let good = &payloads[0].1;
    let mut bytes = std::fs::read(good).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0xff;
    let bad = dir.join("corrupt.ekp");
    std::fs::write(&bad, &bytes).unwrap();
    let report = dir.join("mixed.ekr");
    let out = run(Command::new(&runtime).arg("run").arg(good).arg(&bad).arg(good).arg("--out").arg(&report));
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stdout));
    let responses = read_report(&report);
    assert_eq!(responses.len(), 4);
    assert!(matches!(&responses[1], Response::RunReport(r) if r.is_correct()));
    match &responses[2] {
        Response::Error { kind, message } => {
            assert_eq!(*kind, ErrorKind::PayloadInvalid);
            assert!(message.contains("body checksum mismatch"), "{message}");
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(&responses[3], Response::RunReport(r) if r.is_correct() && r.payload.0 == 2));

    // Usage errors: exit status 2 and the usage text; no report is written.
    for args in
        [&["run", "--out"][..], &["run", good.to_str().unwrap()], &["frobnicate"], &["info", "--yaml"]]
    {
        let out = run(Command::new(&runtime).args(args));
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(String::from_utf8_lossy(&out.stderr).contains("usage:"), "{args:?}");
    }
    // `info` in both forms.
    let text = String::from_utf8(run(Command::new(&runtime).arg("info")).stdout).unwrap();
    assert!(text.starts_with("arch        x86_64\n") && text.contains("emulation   none detected"), "{text}");
    let json = run(Command::new(&runtime).args(["info", "--json"])).stdout;
    let v: serde_json::Value = serde_json::from_slice(&json).unwrap();
    assert_eq!(v["arch"], "x86_64");
    assert!(v["cores"].as_u64().unwrap() >= 1 && v["page_size"].as_u64().unwrap() >= 4096);
    assert!(v["emulation"].is_null());
    assert_eq!(v["isolation"], "Available", "native x86_64 runs kernels under seccomp");
}
