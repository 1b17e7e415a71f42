//! The runtime's own costs (`cargo bench -p ekb-rt`): overhead per timing sample (an empty
//! kernel), timing noise (coefficient of variation of a ~1 ms kernel over 200 samples),
//! payload load time for a 100 MB payload, frame throughput over a pipe, and the stripped
//! static binary sizes for x86_64 and aarch64. Prints one line per figure.

#[path = "../tests/common/mod.rs"]
mod common;

use ekb_rt::run::{run_payload, RunOptions};
use ekb_rt::store::LoadedPayload;
use ekb_wire::protocol::{
    encode_frame, FrameDecoder, PayloadId, Request, Response, RunReport, TimingOverrides,
};
use std::io::{Read, Write};
use std::path::Path;
use std::time::Instant;

/// A kernel that copies `n` floats after `spin` iterations of a dependent multiply chain.
fn spin_ir(spin: u64) -> String {
    format!(
        r#"
define void @ekb_k_spin(ptr %args) nounwind {{
entry:
  %x = load ptr, ptr %args
  %yslot = getelementptr ptr, ptr %args, i64 1
  %y = load ptr, ptr %yslot
  %x0 = load float, ptr %x
  br label %loop
loop:
  %i = phi i64 [0, %entry], [%next, %loop]
  %a = phi float [%x0, %entry], [%b, %loop]
  %b = call float asm sideeffect "", "=x,0"(float %a)
  %next = add i64 %i, 1
  %done = icmp uge i64 %next, {spin}
  br i1 %done, label %exit, label %loop
exit:
  store float %x0, ptr %y
  ret void
}}
"#
    )
}

fn samples(bytes: &[u8], n: u32) -> RunReport {
    let p = std::sync::Arc::new(LoadedPayload::from_bytes(PayloadId(0), bytes).unwrap());
    let options = RunOptions {
        threads: 1,
        timing: TimingOverrides {
            warmup: Some(20),
            min_samples: Some(n),
            max_samples: Some(n),
            target_rse: Some(0.0),
            budget_ms: Some(60_000),
            cold_cache: Some(false),
        },
        ..RunOptions::default()
    };
    let r = run_payload(&p, &[(p.mapping().addr(), p.mapping().len())], &options).unwrap();
    assert!(r.is_correct(), "{:?}", r.failure);
    r
}

fn spin_payload(spin: u64) -> Vec<u8> {
    common::elementwise_payload(common::compile_ir(&spin_ir(spin)), "spin", 1, &[1], |x| x)
}

fn mb(bytes: usize) -> f64 {
    bytes as f64 / 1e6
}

fn main() {
    // 1. Overhead per sample: the empty kernel's samples are the clock reads and the call.
    let empty = spin_payload(1);
    let r = samples(&empty, 1000);
    let t = r.timing.unwrap();
    println!(
        "overhead per sample (empty kernel, 1000 samples): median {:.0} ns, min {:.0} ns, p90 {:.0} ns",
        t.stats.median_ns, t.stats.min_ns, t.stats.p90_ns
    );

    // 2. Timing noise: a kernel calibrated to about 1 ms, 200 samples.
    // Calibrate on the fastest of 20 samples (the undisturbed speed).
    let probe = samples(&spin_payload(1 << 20), 20).timing.unwrap().stats.min_ns;
    let spin = ((1u64 << 20) as f64 * 1e6 / probe).round() as u64;
    let t = samples(&spin_payload(spin), 200).timing.unwrap();
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "timing noise (~1 ms kernel, 200 samples): median {:.3} ms, cv {:.4}, (p90 - p10) / median {:.4}, \
         rse {:.5} (load average {})",
        t.stats.median_ns / 1e6,
        t.stats.cv,
        (t.stats.p90_ns - t.stats.p10_ns) / t.stats.median_ns,
        t.stats.rse,
        load.split_whitespace().take(3).collect::<Vec<_>>().join(" ")
    );

    // 3. Load time of a 100 MB payload: a copy kernel over 12.5M floats (50 MB of expected
    //    output per seed, two seeds).
    let n = 12_500_000u64;
    let copy = common::compile_ir(&format!(
        r#"
define void @ekb_k_copy(ptr %args) nounwind {{
  %x = load ptr, ptr %args
  %yslot = getelementptr ptr, ptr %args, i64 1
  %y = load ptr, ptr %yslot
  call void @llvm.memcpy.p0.p0.i64(ptr align 64 %y, ptr align 64 %x, i64 {}, i1 false)
  ret void
}}
declare void @llvm.memcpy.p0.p0.i64(ptr, ptr, i64, i1)
!llvm.module.flags = !{{!0}}
!0 = !{{i32 7, !"RtLibUseGOT", i32 1}}
"#,
        n * 4
    ));
    let big = common::elementwise_payload(copy, "copy", n, &[1, 2], |x| x);
    let started = Instant::now();
    let loaded = LoadedPayload::from_bytes(PayloadId(0), &big).unwrap();
    let lib = started.elapsed();
    drop(loaded);
    println!(
        "payload load ({:.1} MB, validate + copy + link, in-process): {:.1} ms ({:.0} MB/s)",
        mb(big.len()),
        lib.as_secs_f64() * 1e3,
        mb(big.len()) / lib.as_secs_f64()
    );
    let mut c = common::Client::start(Path::new(env!("CARGO_BIN_EXE_ekb-rt")), &[]);
    c.hello();
    let frame = encode_frame(&Request::Load { payload: big.clone() }).unwrap();
    let started = Instant::now();
    c.send_raw(&frame);
    let r = c.recv();
    let served = started.elapsed();
    assert!(matches!(r, Response::Loaded { .. }), "{r:?}");
    println!(
        "payload load through `ekb-rt serve` ({:.1} MB frame over a pipe, to `Loaded`): {:.1} ms",
        mb(frame.len()),
        served.as_secs_f64() * 1e3
    );
    drop(c);

    // 4. Frame throughput over a pipe: 1 MiB frames through an OS pipe into the decoder.
    let body = vec![0x5au8; 1 << 20];
    let one = encode_frame(&Request::Load { payload: body }).unwrap();
    let count = 256usize;
    let mut cmd = std::process::Command::new("cat")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = cmd.stdin.take().unwrap();
    let mut output = cmd.stdout.take().unwrap();
    let started = Instant::now();
    let writer = std::thread::spawn(move || {
        for _ in 0..count {
            input.write_all(&one).unwrap();
        }
    });
    let mut dec = FrameDecoder::new();
    let (mut frames, mut bytes) = (0usize, 0usize);
    let mut buf = vec![0u8; 1 << 16];
    while frames < count {
        let k = output.read(&mut buf).unwrap();
        assert!(k > 0);
        bytes += k;
        let mut rest = &buf[..k];
        while !rest.is_empty() {
            if dec.decode(&mut rest).unwrap().is_some() {
                frames += 1;
            }
        }
    }
    writer.join().unwrap();
    let took = started.elapsed();
    let _ = cmd.wait();
    println!(
        "frame throughput over a pipe ({count} frames of 1 MiB, checksummed): {:.0} MB/s ({:.1} frames/ms)",
        mb(bytes) / took.as_secs_f64(),
        count as f64 / took.as_secs_f64() / 1e3
    );

    // 5. Stripped static binaries.
    for target in ["x86_64-unknown-linux-musl", "aarch64-unknown-linux-musl"] {
        let bin = common::build_static_runtime(target);
        let len = std::fs::metadata(&bin).unwrap().len();
        println!("static binary {target}: {len} bytes ({:.2} MB), stripped", len as f64 / 1e6);
    }
}
