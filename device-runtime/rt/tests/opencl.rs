//! OpenCL payloads through the runtime's OpenCL build (feature `opencl`; PoCL in CI), each test
//! talking to a real `ekb-rt serve` child process over the protocol, as a host does:
//! - every operator of the corpus, with the default GPU lowering, correct on every seed, timed by
//!   profiling events, with each kernel's device time and driver resources in the report;
//! - launches and shared memory over the `rk3588` profile's limits, and over the device's own,
//!   refused before anything runs, naming the limit;
//! - bad candidates, each classified: an out-of-bounds write (device guards), an out-of-bounds
//!   read (the guards' NaN in the output; PoCL does not fault), a race on shared memory, a
//!   program that does not build (the build log in the answer), a kernel that never ends (the
//!   watchdog), and a barrier in a divergent branch (refused by the verifier on the host, so it
//!   never reaches the board);
//! - the device description and a paired run.

mod common;

use common::{gpu_graph_payload, gpu_kernel_payload, Client, HandKernel};
use ekb_deploy::driver::{self, CompileOptions, Program, Sources, Stage};
use ekb_e2e::{corpus_files, load_graph, SEEDS};
use ekb_ir::{SourceFile, TargetProfile};
use ekb_wire::payload::Backend;
use ekb_wire::protocol::{
    CounterKind, CounterReading, ErrorKind, FailureKind, MemoryFault, PairedSettings, PayloadId, Request,
    Response, RunReport, TimingOverrides,
};
use std::path::Path;

fn serve(args: &[&str]) -> Client {
    let mut c = Client::start(Path::new(env!("CARGO_BIN_EXE_ekb-rt")), args);
    c.hello();
    c
}

/// Two to three samples: correctness is what most of these tests check.
fn quick() -> TimingOverrides {
    TimingOverrides {
        warmup: Some(1),
        min_samples: Some(2),
        max_samples: Some(3),
        ..TimingOverrides::default()
    }
}

fn run(c: &mut Client, id: PayloadId) -> RunReport {
    match c.call(&Request::Run { payload: id, seeds: None, timing: quick(), threads: None }) {
        Response::RunReport(r) => r,
        other => panic!("{other:?}"),
    }
}

fn pocl() -> TargetProfile {
    TargetProfile::load("pocl").unwrap()
}

fn logged(r: &RunReport, text: &str) -> bool {
    r.log.iter().any(|l| l.message.contains(text))
}

#[test]
fn every_corpus_operator_runs_correctly_with_profiling_times_and_kernel_resources() {
    let target = pocl();
    let mut c = serve(&[]);
    let mut failures = Vec::new();
    let (mut graphs, mut kernels) = (0, 0);
    for path in corpus_files() {
        let g = load_graph(&path);
        let (m, bytes) = gpu_graph_payload(&g, &target);
        let id = match c.call(&Request::Load { payload: bytes }) {
            Response::Loaded { payload, .. } => payload,
            other => {
                failures.push(format!("{}: {other:?}", g.name));
                continue;
            }
        };
        let r = run(&mut c, id);
        if !r.is_correct() {
            failures.push(format!("{}: {:?} {:?}", g.name, r.failure, r.seeds));
            continue;
        }
        assert_eq!(r.backend, Backend::OpenCl);
        assert_eq!(r.seeds.len(), SEEDS.len(), "{}", g.name);
        let t = r.timing.as_ref().unwrap();
        assert_eq!(t.clock, "opencl-profiling", "{}", g.name);
        assert!(!t.samples_ns.is_empty() && t.samples_ns.iter().all(|&ns| ns > 0), "{}: {t:?}", g.name);
        // Every execution step's device time (the prepare steps are not an execution's), and
        // every kernel's figures from the driver.
        let gpu: Vec<_> =
            r.counters.iter().filter(|c| matches!(c.kind, CounterKind::Gpu | CounterKind::Step)).collect();
        for (s, run) in m.plan.iter().filter(|r| !r.prepare).enumerate() {
            let name = format!("{} (step {s}): time (opencl-profiling, ns)", run.kernel);
            let time =
                gpu.iter().find(|c| c.name == name).unwrap_or_else(|| panic!("{}: no `{name}`", g.name));
            assert!(
                matches!(time.reading, CounterReading::Counted { total, runs, .. } if total > 0 && runs > 0)
            );
        }
        for k in &m.kernels {
            let threads: u64 =
                ekb_ir::l1::gpu::LaunchShape::of(k).unwrap().block.iter().map(|&b| u64::from(b)).product();
            for query in
                ["CL_KERNEL_WORK_GROUP_SIZE", "CL_KERNEL_LOCAL_MEM_SIZE", "CL_KERNEL_PRIVATE_MEM_SIZE"]
            {
                let name = format!("{}: {query}", k.name);
                let c =
                    gpu.iter().find(|c| c.name == name).unwrap_or_else(|| panic!("{}: no `{name}`", g.name));
                if let (CounterReading::Counted { total, .. }, "CL_KERNEL_WORK_GROUP_SIZE") =
                    (&c.reading, query)
                {
                    assert!(*total >= threads, "{}: {c:?} for {threads} threads", g.name);
                }
            }
            kernels += 1;
        }
        // The CPU's counters say why they have nothing to say.
        let cycles = r.counters.iter().find(|c| c.name == "cycles").unwrap();
        assert!(
            matches!(&cycles.reading, CounterReading::Unavailable { reason } if reason.contains("ran on the GPU")),
            "{cycles:?}"
        );
        assert!(logged(&r, "program 0 built on the device"), "{:?}", r.log);
        assert!(logged(&r, "cannot run under the system-call filter"), "{:?}", r.log);
        assert_eq!(c.call(&Request::Unload { payload: id }), Response::Unloaded { payload: id });
        graphs += 1;
    }
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
    assert_eq!(graphs, corpus_files().len());
    assert!(kernels >= graphs, "{kernels} kernels");
    println!("{graphs} corpus graphs, {kernels} kernels: correct on {} seeds each", SEEDS.len());
}

#[test]
fn prepare_steps_run_once_per_seed_and_keep_their_results_across_executions() {
    // A rotary table from `iota` and a parameter: three prepare steps, then one kernel per
    // execution that reads the table. The samples poison every output and temp but the table,
    // so a table the prepare steps did not write, or that a sample overwrote, fails the check
    // that follows the samples.
    let g = ekb_ir::l0::check::load(&SourceFile::new(
        "rope.ekir",
        "graph rope(x: f32[64,32] = normal(0.0, 1.0)) -> (y: f32[64,32]) {
  param f: f32[32] = uniform(0.5, 1.5)
  %i = iota(shape=[64,32], axis=0, dtype=f32)
  %a = mul(%i, f)
  %c = cos(%a)
  %y = mul(x, %c)
  return %y
}",
    ))
    .unwrap_or_else(|d| panic!("{}", d[0]));
    let (m, bytes) = gpu_graph_payload(&g, &pocl());
    let prepare: Vec<bool> = m.plan.iter().map(|r| r.prepare).collect();
    assert_eq!(prepare, [true, true, true, false], "{}", ekb_ir::l1::print::print(&m));
    let mut c = serve(&[]);
    let id = match c.call(&Request::Load { payload: bytes }) {
        Response::Loaded { payload, .. } => payload,
        other => panic!("{other:?}"),
    };
    let r = run(&mut c, id);
    assert!(r.is_correct(), "{:?} {:?}", r.failure, r.seeds);
    assert_eq!(r.seeds.len(), SEEDS.len());
    assert!(logged(&r, "plan: 3 prepare step(s)"), "{:?}", r.log);
    // Only the execution's kernel is timed, as step 0.
    let steps: Vec<&str> =
        r.counters.iter().filter(|c| c.kind == CounterKind::Step).map(|c| c.name.as_str()).collect();
    assert_eq!(steps.len(), 1, "{steps:?}");
    assert!(steps[0].starts_with(&format!("{} (step 0): time", m.plan[3].kernel)), "{steps:?}");
}

/// A copy kernel on `block` threads per block (no `reqd_work_group_size`, so the driver takes
/// any size), over `n` elements.
const COPY: &str = "__kernel void copy(__global const float* restrict x, __global float* restrict y) {\n  \
                    const int i = get_global_id(0);\n  y[i] = x[i];\n}\n";

fn copy_kernel(block: u32, shared: u64) -> HandKernel<'static> {
    HandKernel {
        backend: Backend::OpenCl,
        name: "copy",
        source: COPY,
        grid: [1, 1, 1],
        block: [block, 1, 1],
        shared,
        optin: false,
    }
}

fn failure_of(c: &mut Client, bytes: Vec<u8>) -> (RunReport, Vec<String>) {
    let (id, warnings) = match c.call(&Request::Load { payload: bytes }) {
        Response::Loaded { payload, warnings, .. } => (payload, warnings),
        other => panic!("{other:?}"),
    };
    (run(c, id), warnings)
}

#[test]
fn launches_and_shared_memory_over_the_limits_are_illegal_naming_the_limit() {
    let mut c = serve(&[]);
    let rk3588 = TargetProfile::load("rk3588").unwrap();
    let same = |x: &[f32]| x.to_vec();
    // 2048 threads per block: legal on PoCL (4096), over the Mali-G610 profile's 1024.
    let bytes = gpu_kernel_payload(&copy_kernel(2048, 0), &rk3588, (&[2048], &[2048]), &[0], same, |_| {});
    let (r, warnings) = failure_of(&mut c, bytes);
    let f = r.failure.unwrap();
    assert_eq!(f.kind, FailureKind::Memory(MemoryFault::IllegalAllocation));
    assert_eq!(
        f.evidence,
        "the launch of kernel `copy` has 2048 threads per block (block 2048x1x1), over the limit of 1024 from \
         target profile `rk3588` (gpu.max_threads_per_block); no kernel was run"
    );
    assert!(r.seeds.is_empty() && r.timing.is_none(), "nothing ran");
    assert!(
        warnings.iter().any(|w| w.contains("will not run") && w.contains("2048 threads per block")),
        "{warnings:?}"
    );
    // 40 KiB of shared memory: legal on PoCL (1 MiB), over the profile's 32 KiB.
    let bytes =
        gpu_kernel_payload(&copy_kernel(256, 40 << 10), &rk3588, (&[256], &[256]), &[0], same, |_| {});
    let (r, _) = failure_of(&mut c, bytes);
    let f = r.failure.unwrap();
    assert_eq!(f.kind, FailureKind::Memory(MemoryFault::IllegalAllocation));
    assert!(
        f.evidence.contains(
            "the `shared` allocations of kernel `copy` reach 40960 bytes per block with `s`, over the limit of \
             32768 bytes from target profile `rk3588` (gpu.shared_bytes_per_block)"
        ),
        "{}",
        f.evidence
    );
    // With limits beyond the device's (no profile), the device's own, from its driver, decide.
    let no_profile = |m: &mut ekb_wire::payload::Manifest| m.gpu = None;
    let bytes =
        gpu_kernel_payload(&copy_kernel(8192, 0), &pocl(), (&[8192], &[8192]), &[0], same, no_profile);
    let f = failure_of(&mut c, bytes).0.failure.unwrap();
    assert_eq!(f.kind, FailureKind::Memory(MemoryFault::IllegalAllocation));
    assert!(
        f.evidence.contains("8192 threads per block (block 8192x1x1), over the limit of"),
        "{}",
        f.evidence
    );
    assert!(f.evidence.contains("from OpenCL device `"), "{}", f.evidence);
    let bytes =
        gpu_kernel_payload(&copy_kernel(64, 1 << 24), &pocl(), (&[64], &[64]), &[0], same, no_profile);
    let f = failure_of(&mut c, bytes).0.failure.unwrap();
    assert_eq!(f.kind, FailureKind::Memory(MemoryFault::IllegalAllocation));
    assert!(f.evidence.contains("(CL_DEVICE_LOCAL_MEM_SIZE); no kernel was run"), "{}", f.evidence);
}

#[test]
fn bad_candidates_are_each_classified() {
    let target = pocl();
    let mut c = serve(&[]);
    let kernel = |name: &'static str, source: &'static str| HandKernel {
        backend: Backend::OpenCl,
        name,
        source,
        grid: [1, 1, 1],
        block: [256, 1, 1],
        shared: 0,
        optin: false,
    };
    let rotate = |x: &[f32]| (0..256).map(|i| x[(i + 8) % 256]).collect::<Vec<f32>>();

    // A write one element past the end of `y`: the device guard after it changed.
    let src = "__kernel void oob_write(__global const float* restrict x, __global float* restrict y) {\n  \
               const int i = get_global_id(0);\n  y[i + 1] = x[i];\n}\n";
    let bytes = gpu_kernel_payload(
        &kernel("oob_write", src),
        &target,
        (&[256], &[256]),
        &SEEDS,
        |x| x.to_vec(),
        |_| {},
    );
    let f = failure_of(&mut c, bytes).0.failure.unwrap();
    assert_eq!(f.kind, FailureKind::Memory(MemoryFault::GuardCorruption { buffer: "y".into() }));
    assert_eq!(
        f.evidence,
        "4 byte(s) of the device guard around buffer `y` (1024 bytes) were overwritten, the first 0 bytes past \
         the end: a kernel wrote out of bounds"
    );

    // A read past the end of `x` (the task rotates by 8): PoCL does not fault; the guard's NaN
    // lands in the last 8 outputs, a correctness failure that points at them.
    let src = "__kernel void oob_read(__global const float* restrict x, __global float* restrict y) {\n  \
               const int i = get_global_id(0);\n  y[i] = x[i + 8];\n}\n";
    let bytes =
        gpu_kernel_payload(&kernel("oob_read", src), &target, (&[256], &[256]), &SEEDS, rotate, |_| {});
    let r = failure_of(&mut c, bytes).0;
    assert_eq!(r.failure.as_ref().unwrap().kind, FailureKind::Correctness);
    let o = &r.seeds[0].outputs[0];
    assert_eq!((o.mismatches, o.first_mismatch), (8, Some(248)), "{o:?}");
    assert!(o.max_abs_err.is_infinite(), "NaN where the reference is finite: {o:?}");

    // The row-sum tree without its barriers: threads read shared memory others have not written.
    let tree = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../adapters/c/tests/golden/rowsum.cl"),
    )
    .unwrap();
    let racy: &'static str = tree.replace("barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);", "").leak();
    let k = HandKernel { grid: [8, 1, 1], block: [64, 1, 1], shared: 256, ..kernel("rowsum", racy) };
    let sums = |x: &[f32]| x.chunks(100).map(|row| row.iter().sum()).collect::<Vec<f32>>();
    let r = failure_of(&mut c, gpu_kernel_payload(&k, &target, (&[8, 100], &[8]), &SEEDS, sums, |_| {})).0;
    let kind = r.failure.unwrap().kind;
    assert!(matches!(kind, FailureKind::Correctness | FailureKind::Parallel), "{kind:?}");
    // With its barriers it is correct.
    let k = HandKernel { source: tree.clone().leak(), ..k };
    let r = failure_of(&mut c, gpu_kernel_payload(&k, &target, (&[8, 100], &[8]), &SEEDS, sums, |_| {})).0;
    assert!(r.is_correct(), "{:?}", r.failure);

    // A program that does not build: refused at load with the build log.
    let src = "__kernel void broken(__global const float* restrict x, __global float* restrict y) {\n  \
               y[0] = undefined_value;\n}\n";
    let bytes =
        gpu_kernel_payload(&kernel("broken", src), &target, (&[256], &[256]), &[0], |x| x.to_vec(), |_| {});
    match c.call(&Request::Load { payload: bytes }) {
        Response::Error { kind: ErrorKind::LoadFailed, message } => {
            assert!(message.starts_with("OpenCL build of program 0 failed"), "{message}");
            assert!(message.contains("build log:") && message.contains("undefined_value"), "{message}");
        }
        other => panic!("{other:?}"),
    }

    // A code blob that is not text.
    let bytes =
        gpu_kernel_payload(&kernel("copy", COPY), &target, (&[256], &[256]), &[0], |x| x.to_vec(), |_| {});
    let view = ekb_wire::payload::Payload::parse(&bytes).unwrap();
    let mut pb = ekb_wire::payload::PayloadBuilder::new();
    for i in 0..view.blob_count() as u32 {
        let b = view.blob(i).unwrap();
        pb.add_blob(b.kind, if i == 0 { vec![0xff, 0xfe, b'k'] } else { b.data.to_vec() });
    }
    match c.call(&Request::Load { payload: pb.finish(view.manifest()).unwrap() }) {
        Response::Error { kind: ErrorKind::LoadFailed, message } => {
            assert!(message.starts_with("blob 0 (opencl-source) is not UTF-8 text"), "{message}")
        }
        other => panic!("{other:?}"),
    }

    // A barrier in a divergent branch never reaches the board: the verifier refuses the module.
    let graph = SourceFile::new(
        "divergent.ekir",
        "graph divergent(x: f32[64]) -> (y: f32[1]) {\n  %0 = sum(x, axes=[0], keepdims=true)\n  return %0\n}\n",
    );
    let module = SourceFile::new(
        "divergent.ekl1",
        "module divergent {\n  input x: f32[64]\n  output y: f32[1]\n\n  kernel k(x: f32[64] in, y: f32[1] out) {\n    \
         launch grid(bx in 0..1) block(tx in 0..64) {\n      alloc s: f32[64] shared\n      s[tx] = x[tx]\n      \
         if tx < 32 {\n        barrier\n      }\n      if tx == 0 {\n        y[0] = s[0] + s[63]\n      }\n    }\n  \
         }\n\n  run k(x, y)\n}\n",
    );
    let g = ekb_ir::l0::check::load(&graph).unwrap();
    let m = ekb_ir::l1::parse::parse(&module).unwrap();
    let sources = Sources { graph: Some(&graph), module: Some(&module) };
    let program = Program::Module { module: &m, graph: &g };
    let failure = driver::compile(program, sources, &target, &CompileOptions::default()).unwrap_err();
    assert_eq!(failure.stage, Stage::Verify);
    let ds = failure.diagnostics;
    assert!(
        ds[0].message.starts_with("`barrier` under thread-divergent control flow in kernel k"),
        "{}",
        ds[0].message
    );
}

#[test]
fn a_kernel_that_never_ends_is_a_timeout() {
    let mut c = serve(&["--timeout-ms", "2000"]);
    let src = "__kernel void spin(__global const float* restrict x, __global float* restrict y) {\n  \
               y[0] = 0.0f;\n  for (;;) {\n    y[0] += 1.0f;\n    if (y[0] < 0.0f) break;\n  }\n}\n";
    let k = HandKernel {
        backend: Backend::OpenCl,
        name: "spin",
        source: src,
        grid: [1, 1, 1],
        block: [1, 1, 1],
        shared: 0,
        optin: false,
    };
    let bytes = gpu_kernel_payload(&k, &pocl(), (&[4], &[4]), &[0], |x| x.to_vec(), |_| {});
    let f = failure_of(&mut c, bytes).0.failure.unwrap();
    assert_eq!(f.kind, FailureKind::Timeout, "{f:?}");
    // The session goes on.
    let (_, bytes) = gpu_graph_payload(&load_graph(&corpus_files()[0]), &pocl());
    assert!(failure_of(&mut c, bytes).0.is_correct());
}

#[test]
fn the_gpu_is_described_and_paired_runs_compare_two_gpu_programs() {
    let mut c = serve(&[]);
    let Response::DeviceInfo(info) = c.call(&Request::DeviceInfo) else { panic!() };
    let gpu = info.gpus.first().expect("the OpenCL device");
    assert_eq!(gpu.backend, Backend::OpenCl);
    assert!(gpu.compute_units >= 1 && gpu.memory_bytes > 0, "{gpu:?}");
    for query in ["CL_DEVICE_MAX_WORK_GROUP_SIZE", "CL_DEVICE_LOCAL_MEM_SIZE", "CL_DEVICE_MAX_MEM_ALLOC_SIZE"]
    {
        assert!(
            gpu.attributes.iter().any(|(k, v)| k == query && v.parse::<u64>().is_ok()),
            "{query}: {gpu:?}"
        );
    }
    // `ekb-rt info` says the same.
    let out =
        std::process::Command::new(env!("CARGO_BIN_EXE_ekb-rt")).args(["info", "--json"]).output().unwrap();
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["gpus"][0]["name"], gpu.name.as_str());
    let text = std::process::Command::new(env!("CARGO_BIN_EXE_ekb-rt")).arg("info").output().unwrap();
    assert!(String::from_utf8_lossy(&text.stdout).contains(&format!("OpenCL `{}`", gpu.name)));

    let path = corpus_files().into_iter().find(|p| p.ends_with("softmax.ekir")).unwrap();
    let (_, bytes) = gpu_graph_payload(&load_graph(&path), &pocl());
    let a = c.load(&bytes);
    let b = c.load(&bytes);
    let settings = PairedSettings {
        timing: TimingOverrides { warmup: Some(1), min_samples: Some(5), max_samples: Some(20), ..quick() },
        ..PairedSettings::DEFAULT
    };
    let Response::PairedReport(p) = c.call(&Request::PairedRun { baseline: a, candidate: b, settings })
    else {
        panic!()
    };
    // Both correct; on a busy machine either side may still be flagged unstable.
    for side in [&p.baseline, &p.candidate] {
        assert!(side.seeds.len() == SEEDS.len() && side.seeds.iter().all(|s| s.ok()), "{p:?}");
        assert!(side.failure.as_ref().is_none_or(|f| f.kind == FailureKind::UnstableTiming), "{p:?}");
    }
    assert_eq!(p.candidate.timing.as_ref().unwrap().clock, "opencl-profiling");
    let ratio = p.ratio.expect("a ratio");
    assert!(ratio.median > 0.2 && ratio.median < 5.0, "a program against itself: {ratio:?}");
    assert!(p.pairs.len() >= 5);
}
