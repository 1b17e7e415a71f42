//! Kernels that misbehave, each run through one `ekb-rt serve` session (the built binary, native
//! x86_64): every run is classified exactly — segfault, timeout, input write, out of bounds,
//! guard corruption, stack overflow, over-capacity and illegal allocations, a forbidden system
//! call, a trap — and the session then runs a correct payload correctly.

#![cfg(target_arch = "x86_64")]

mod common;

use common::Client;
use ekb_wire::payload::{AllocDecl, MemScope};
use ekb_wire::protocol::{FailureKind, MemoryFault, Request, Response, RunReport, TimingOverrides, Verdict};
use std::path::Path;

const N: u64 = 64;

/// A kernel `ekb_k_<name>(x: f32[N] in, y: f32[N] out)` whose body (LLVM IR after `entry:`)
/// sees `%x` and `%y`; `extra` is appended to the module.
fn kernel(name: &str, body: &str, extra: &str) -> Vec<u8> {
    let ir = format!(
        r#"
define void @ekb_k_{name}(ptr %args) nounwind {{
entry:
  %x = load ptr, ptr %args
  %yslot = getelementptr ptr, ptr %args, i64 1
  %y = load ptr, ptr %yslot
{body}
}}
{extra}
"#
    );
    common::compile_ir(&ir)
}

fn payload(name: &str, object: Vec<u8>) -> Vec<u8> {
    common::elementwise_payload(object, name, N, &[1, 2], |x| x)
}

/// Copies x to y; then runs `then` (which must end the function).
fn copy_then(then: &str) -> String {
    format!(
        r#"  call void @llvm.memcpy.p0.p0.i64(ptr align 64 %y, ptr align 64 %x, i64 {}, i1 false)
{then}"#,
        N * 4
    )
}

const MEMCPY: &str = "declare void @llvm.memcpy.p0.p0.i64(ptr, ptr, i64, i1)";

fn run(c: &mut Client, bytes: &[u8]) -> RunReport {
    let id = c.load(bytes);
    let timing = TimingOverrides {
        warmup: Some(0),
        min_samples: Some(2),
        max_samples: Some(4),
        budget_ms: Some(300),
        ..TimingOverrides::default()
    };
    let r = match c.call(&Request::Run { payload: id, seeds: None, timing, threads: Some(2) }) {
        Response::RunReport(r) => r,
        other => panic!("{other:?}"),
    };
    assert_eq!(c.call(&Request::Unload { payload: id }), Response::Unloaded { payload: id });
    r
}

fn failure(r: &RunReport) -> (FailureKind, String) {
    let f = r.failure.clone().unwrap_or_else(|| panic!("no failure: {:?}", r.log));
    (f.kind, f.evidence)
}

#[test]
fn misbehaving_kernels_are_classified_and_the_runtime_keeps_serving() {
    let mut c = Client::start(Path::new(env!("CARGO_BIN_EXE_ekb-rt")), &["--timeout-ms", "1000"]);
    c.hello();

    // A store through a wild pointer.
    let wild = kernel("wild", "  store volatile i32 1, ptr inttoptr (i64 16 to ptr)\n  ret void", "");
    let (kind, ev) = failure(&run(&mut c, &payload("wild", wild)));
    assert_eq!(kind, FailureKind::Memory(MemoryFault::Segfault), "{ev}");
    assert!(ev.contains("write at 0x10, outside every buffer") && ev.contains("in `ekb_k_wild`+"), "{ev}");

    // A loop that never ends: killed by the watchdog after the session's one-second limit.
    let spin =
        kernel("spin", "  br label %loop\nloop:\n  store volatile float 1.0, ptr %y\n  br label %loop", "");
    let started = std::time::Instant::now();
    let (kind, ev) = failure(&run(&mut c, &payload("spin", spin)));
    assert_eq!(kind, FailureKind::Timeout, "{ev}");
    assert!(ev.contains("no answer within 1000 ms") && ev.contains("SIGKILL"), "{ev}");
    assert!(started.elapsed() < std::time::Duration::from_secs(10));

    // A write to the read-only input.
    let scribble = kernel("scribble", "  store float 0.0, ptr %x\n  ret void", "");
    let (kind, ev) = failure(&run(&mut c, &payload("scribble", scribble)));
    assert_eq!(kind, FailureKind::Memory(MemoryFault::InputWrite { buffer: "x".into() }), "{ev}");
    assert!(ev.contains("write to byte 0 of read-only input `x`"), "{ev}");

    // An input made writable with mprotect, then written: the parent sees the bytes change.
    let unprotect = kernel(
        "unprotect",
        &copy_then(
            r#"  %r = call i64 asm sideeffect "syscall", "={rax},{rax},{rdi},{rsi},{rdx},~{rcx},~{r11},~{memory}"(i64 10, ptr %x, i64 4096, i64 3)
  store volatile float 5.0, ptr %x
  ret void"#,
        ),
        MEMCPY,
    );
    let (kind, ev) = failure(&run(&mut c, &payload("unprotect", unprotect)));
    assert_eq!(kind, FailureKind::Memory(MemoryFault::InputWrite { buffer: "x".into() }), "{ev}");
    assert!(ev.contains("changed during the run"), "{ev}");

    // One element past the end of y: guard corruption, named; the outputs themselves are right.
    let over = kernel(
        "over",
        &copy_then(&format!(
            "  %past = getelementptr float, ptr %y, i64 {N}\n  store float 9.0, ptr %past\n  ret void"
        )),
        MEMCPY,
    );
    let r = run(&mut c, &payload("over", over));
    assert!(r.seeds[0].ok());
    let (kind, ev) = failure(&r);
    assert_eq!(kind, FailureKind::Memory(MemoryFault::GuardCorruption { buffer: "y".into() }), "{ev}");
    assert!(ev.contains("4 byte(s) around buffer `y`") && ev.contains(&format!("offset {}", N * 4)), "{ev}");

    // Two pages past the end of y: into its fence, out of bounds, named.
    let far = kernel(
        "far",
        &copy_then(
            "  %far = getelementptr i8, ptr %y, i64 8200\n  store volatile float 9.0, ptr %far\n  ret void",
        ),
        MEMCPY,
    );
    let (kind, ev) = failure(&run(&mut c, &payload("far", far)));
    assert_eq!(kind, FailureKind::Memory(MemoryFault::OutOfBounds), "{ev}");
    assert!(ev.contains(&format!("write {} bytes past the end of buffer `y`", 8200 - N * 4)), "{ev}");

    // Unbounded recursion: the stack runs into its guard page.
    let deep = kernel(
        "deep",
        "  call void @recurse(ptr %y, i64 0)\n  ret void",
        r#"
define internal void @recurse(ptr %y, i64 %d) noinline nounwind {
  %frame = alloca [64 x float], align 16
  store volatile float 1.0, ptr %frame
  %n = add i64 %d, 1
  call void @recurse(ptr %y, i64 %n)
  %v = load volatile float, ptr %frame
  store volatile float %v, ptr %y
  ret void
}"#,
    );
    let (kind, ev) = failure(&run(&mut c, &payload("deep", deep)));
    assert_eq!(kind, FailureKind::Memory(MemoryFault::Capacity), "{ev}");
    assert!(ev.contains("stack overflow") && ev.contains("below the stack pointer"), "{ev}");

    // Opening a file: stopped by the system-call filter.
    let open = kernel(
        "open",
        &copy_then(
            r#"  %fd = call i64 asm sideeffect "syscall", "={rax},{rax},{rdi},{rsi},{rdx},~{rcx},~{r11},~{memory}"(i64 257, i64 -100, ptr @path, i64 0)
  ret void"#,
        ),
        &format!("{MEMCPY}\n@path = private constant [12 x i8] c\"/etc/passwd\\00\""),
    );
    let (kind, ev) = failure(&run(&mut c, &payload("open", open)));
    assert_eq!(kind, FailureKind::Crash { signal: libc::SIGSYS }, "{ev}");
    assert!(ev.contains("system call `openat` (257) is not allowed") && ev.contains("ekb_k_open"), "{ev}");

    // A trap.
    let trap = kernel("trap", "  call void @llvm.trap()\n  unreachable", "declare void @llvm.trap()");
    let (kind, ev) = failure(&run(&mut c, &payload("trap", trap)));
    assert_eq!(kind, FailureKind::Crash { signal: libc::SIGILL }, "{ev}");
    assert!(ev.contains("illegal instruction"), "{ev}");

    // Buffers beyond the memory budget: over capacity, no kernel runs.
    let copy = || kernel("copy", &copy_then("  ret void"), MEMCPY);
    let big = common::elementwise_payload_with(
        copy(),
        "copy",
        N,
        &[1],
        |x| x,
        |m| {
            m.memory.memory_limit_bytes = 300;
        },
    );
    let r = run(&mut c, &big);
    let (kind, ev) = failure(&r);
    assert_eq!(kind, FailureKind::Memory(MemoryFault::Capacity), "{ev}");
    assert!(
        ev.starts_with("allocation `y` (256 bytes, global)") && ev.ends_with("no kernel was run"),
        "{ev}"
    );
    assert!(matches!(r.memory.allocations[1].verdict, Verdict::OverCapacity { .. }));
    assert!(r.seeds.is_empty() && r.timing.is_none());

    // A stack allocation over the stack budget: illegal.
    let greedy = common::elementwise_payload_with(
        copy(),
        "copy",
        N,
        &[1],
        |x| x,
        |m| {
            m.kernels[0].allocs =
                vec![AllocDecl { name: "tile".into(), scope: MemScope::Local, bytes: 8192 }];
        },
    );
    let r = run(&mut c, &greedy);
    let (kind, ev) = failure(&r);
    assert_eq!(kind, FailureKind::Memory(MemoryFault::IllegalAllocation), "{ev}");
    let tile = &r.memory.allocations[2];
    assert_eq!((tile.name.as_str(), tile.bytes, tile.limit_bytes), ("copy.tile", 8192, Some(4096)));
    assert!(matches!(&tile.verdict, Verdict::Illegal { reason } if reason.contains("stack budget of 4096")));

    // After all that, a correct kernel runs correctly in the same session.
    let r = run(&mut c, &payload("copy", copy()));
    assert!(r.is_correct(), "{:?}", r.failure);
    assert!(r.timing.is_some());
    assert_eq!(c.call(&Request::Shutdown), Response::Bye);
}

#[test]
fn payload_files_and_their_expected_outputs_are_not_mapped_in_the_kernel_process() {
    use ekb_rt::run::{run_payload, RunOptions};
    use ekb_rt::store::LoadedPayload;
    use ekb_wire::protocol::PayloadId;
    // Payload A is loaded first; a kernel of payload B reads A's expected output by address.
    let copy = kernel("copy", &copy_then("  ret void"), MEMCPY);
    let a = LoadedPayload::from_bytes(PayloadId(0), &payload("copy", copy)).unwrap();
    let target = a.expected(0, 1).unwrap().as_ptr() as usize;
    let peek = kernel(
        "peek",
        &format!("  %v = load volatile float, ptr inttoptr (i64 {target} to ptr)\n  store float %v, ptr %y\n  ret void"),
        "",
    );
    let b = std::sync::Arc::new(LoadedPayload::from_bytes(PayloadId(1), &payload("peek", peek)).unwrap());
    let hidden = [(a.mapping().addr(), a.mapping().len()), (b.mapping().addr(), b.mapping().len())];
    let options = RunOptions {
        timing: TimingOverrides {
            warmup: Some(0),
            max_samples: Some(1),
            min_samples: Some(1),
            ..Default::default()
        },
        ..RunOptions::default()
    };
    let r = run_payload(&b, &hidden, &options).unwrap();
    let (kind, ev) = failure(&r);
    assert_eq!(kind, FailureKind::Memory(MemoryFault::Segfault), "{ev}");
    assert!(ev.contains(&format!("read at {target:#x}, outside every buffer")), "{ev}");
}

/// Copies x to y, then spends `ms` milliseconds by `CLOCK_MONOTONIC` (read with the
/// `clock_gettime` system call, which the system-call filter allows) before returning.
fn copy_then_wait(ms: u64) -> String {
    let ns = ms * 1_000_000;
    copy_then(&format!(
        r#"  %ts = alloca [2 x i64], align 8
  %nsp = getelementptr i64, ptr %ts, i64 1
  %c0 = call i64 asm sideeffect "syscall", "={{rax}},{{rax}},{{rdi}},{{rsi}},~{{rcx}},~{{r11}},~{{memory}}"(i64 228, i64 1, ptr %ts)
  %s0 = load i64, ptr %ts
  %n0 = load i64, ptr %nsp
  %t0s = mul i64 %s0, 1000000000
  %t0 = add i64 %t0s, %n0
  br label %loop
loop:
  %c = call i64 asm sideeffect "syscall", "={{rax}},{{rax}},{{rdi}},{{rsi}},~{{rcx}},~{{r11}},~{{memory}}"(i64 228, i64 1, ptr %ts)
  %s = load i64, ptr %ts
  %n = load i64, ptr %nsp
  %ts1 = mul i64 %s, 1000000000
  %t = add i64 %ts1, %n
  %el = sub i64 %t, %t0
  %done = icmp sge i64 %el, {ns}
  br i1 %done, label %out, label %loop
out:
  ret void"#
    ))
}

#[test]
fn a_short_timing_budget_does_not_shorten_the_limit_of_one_execution() {
    // A correct program whose one execution takes 1.2 s, timed with a 500 ms budget: the
    // budget ends the sampling, it does not make the execution a timeout.
    let mut c = Client::start(Path::new(env!("CARGO_BIN_EXE_ekb-rt")), &[]);
    c.hello();
    let slow = kernel("slow", &copy_then_wait(1200), MEMCPY);
    let id = c.load(&common::elementwise_payload(slow, "slow", N, &[1], |x| x));
    let timing = TimingOverrides {
        warmup: Some(0),
        min_samples: Some(1),
        max_samples: Some(1),
        budget_ms: Some(500),
        ..TimingOverrides::default()
    };
    let r = match c.call(&Request::Run { payload: id, seeds: None, timing, threads: Some(1) }) {
        Response::RunReport(r) => r,
        other => panic!("{other:?}"),
    };
    assert!(r.is_correct(), "{:?}\n{:?}", r.failure, r.log);
    let t = r.timing.expect("timed");
    assert_eq!(t.samples_ns.len(), 1);
    assert!(t.samples_ns[0] >= 1_200_000_000, "{:?}", t.samples_ns);
}

#[test]
fn an_answer_a_kernel_writes_to_the_reply_pipe_is_caught_as_forged() {
    // A `Samples` answer claiming 1 ns per execution, framed as the kernel process frames its
    // answers, under a tag the kernel made up (it would have to find the request's in the
    // process's memory).
    let body =
        postcard::to_allocvec(&(0x5eed_u64, ekb_rt::worker::Reply::Samples { ns: vec![1; 8] })).unwrap();
    let mut frame = (body.len() as u32).to_le_bytes().to_vec();
    frame.extend(body);
    let bytes: String = frame.iter().map(|b| format!("\\{b:02X}")).collect();
    let constant = format!("@msg = private constant [{} x i8] c\"{bytes}\"", frame.len());
    let mut c = Client::start(Path::new(env!("CARGO_BIN_EXE_ekb-rt")), &["--timeout-ms", "1000"]);
    c.hello();
    // The filter lets `write` reach the reply pipe only, so a kernel must find its descriptor: a
    // write to any other traps. Each descriptor tried in its own run; the session goes on.
    let mut forged = Vec::new();
    for fd in 0..12 {
        let name = format!("forge{fd}");
        let object = kernel(
            &name,
            &copy_then(&format!(
                r#"  %r = call i64 asm sideeffect "syscall", "={{rax}},{{rax}},{{rdi}},{{rsi}},{{rdx}},~{{rcx}},~{{r11}},~{{memory}}"(i64 1, i64 {fd}, ptr @msg, i64 {})
  ret void"#,
                frame.len()
            )),
            &format!("{MEMCPY}\n{constant}"),
        );
        let (kind, ev) = failure(&run(&mut c, &payload(&name, object)));
        if kind == FailureKind::RuntimeError {
            assert!(ev.contains("forged answer") && ev.contains("0x5eed"), "fd {fd}: {ev}");
            forged.push(fd);
        } else {
            assert_eq!(kind, FailureKind::Crash { signal: libc::SIGSYS }, "fd {fd}: {ev}");
            assert!(ev.contains("system call `write` (1) is not allowed"), "fd {fd}: {ev}");
        }
    }
    assert_eq!(forged.len(), 1, "exactly the reply pipe takes the write: {forged:?}");
    // And the runtime still serves an honest kernel.
    let honest = kernel("honest", &copy_then("  ret void"), MEMCPY);
    let r = run(&mut c, &payload("honest", honest));
    assert!(r.failure.is_none(), "{:?}", r.failure);
}
