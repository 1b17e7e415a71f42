//! CUDA payloads through the runtime's CUDA build (feature `cuda`), on a machine with an NVIDIA
//! GPU, its driver and NVRTC; each test talks to a real `ekb-rt serve` child process over the
//! protocol:
//! - every operator of the corpus, with the default GPU lowering for the `h200` profile,
//!   compiled by NVRTC on the device and correct on every seed, timed by CUDA events, with each
//!   kernel's registers, local and shared bytes in the report (one line per graph is printed for
//!   the record in `docs/gpu.md`);
//! - 64 KiB of dynamic shared memory, above the static 48 KiB, with the opt-in;
//! - launches over the device's limits and the `jetson-orin` profile's, refused before they run,
//!   naming the limit; an out-of-bounds write (device guards), an access far outside every
//!   buffer (the driver's illegal address), a source NVRTC refuses (its log in the answer);
//! - a race on shared memory (a missing barrier), static shared memory over the profile's and
//!   the device's 48 KiB, and a barrier in a divergent branch (refused by the verifier).
//!
//! Built here with `cargo test -p ekb-rt --features cuda --test cuda --no-run` and carried to the
//! GPU machine with the runtime (`EKB_RT_GPU` names it there) and the corpus (`EKB_CORPUS_DIR`):
//! `docs/gpu.md` has the commands. Without a CUDA driver every test fails at once, saying why.

mod common;

use common::{gpu_graph_payload, gpu_kernel_payload, Client, HandKernel};
use ekb_e2e::{corpus_files, load_graph, SEEDS};
use ekb_ir::{SourceFile, TargetProfile};
use ekb_wire::payload::Backend;
use ekb_wire::protocol::{
    CounterKind, CounterReading, ErrorKind, FailureKind, MemoryFault, Request, Response, RunReport,
    TimingOverrides,
};
use std::path::PathBuf;

/// The runtime under test: `EKB_RT_GPU` where the test binary was carried to another machine,
/// else the one cargo built with it.
fn runtime() -> PathBuf {
    std::env::var_os("EKB_RT_GPU").map_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_ekb-rt")), PathBuf::from)
}

/// A session with the runtime, after checking that it sees a CUDA device: without one, the
/// test fails here with the runtime's reason.
fn serve() -> Client {
    let out = std::process::Command::new(runtime()).args(["info", "--json"]).output().unwrap_or_else(|e| {
        panic!("cannot run {} (set EKB_RT_GPU to the GPU runtime): {e}", runtime().display())
    });
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("`ekb-rt info --json`");
    let cuda = json["gpus"].as_array().into_iter().flatten().any(|g| g["backend"] == "Cuda");
    assert!(
        cuda,
        "these tests need an NVIDIA GPU with its driver (libcuda) and NVRTC (libnvrtc); the runtime found no CUDA \
         device: {}",
        json["gpu_notes"]
    );
    let mut c = Client::start(&runtime(), &["--timeout-ms", "20000"]);
    c.hello();
    c
}

fn quick() -> TimingOverrides {
    TimingOverrides {
        warmup: Some(1),
        min_samples: Some(3),
        max_samples: Some(10),
        ..TimingOverrides::default()
    }
}

fn load_run(c: &mut Client, bytes: Vec<u8>) -> RunReport {
    let id = match c.call(&Request::Load { payload: bytes }) {
        Response::Loaded { payload, .. } => payload,
        other => panic!("{other:?}"),
    };
    let r = match c.call(&Request::Run { payload: id, seeds: None, timing: quick(), threads: None }) {
        Response::RunReport(r) => r,
        other => panic!("{other:?}"),
    };
    c.call(&Request::Unload { payload: id });
    r
}

fn figure(r: &RunReport, name: &str) -> Option<u64> {
    r.counters
        .iter()
        .find(|c| matches!(c.kind, CounterKind::Gpu | CounterKind::Step) && c.name == name)
        .and_then(|c| match c.reading {
            CounterReading::Counted { total, .. } => Some(total),
            CounterReading::Unavailable { .. } => None,
        })
}

#[test]
fn every_corpus_operator_compiles_on_the_device_and_runs_correctly() {
    let target = TargetProfile::load("h200").unwrap();
    let mut c = serve();
    let Response::DeviceInfo(info) = c.call(&Request::DeviceInfo) else { panic!() };
    let gpu = info.gpus.iter().find(|g| g.backend == Backend::Cuda).unwrap();
    println!("device: {} ({} SMs, {} bytes)", gpu.name, gpu.compute_units, gpu.memory_bytes);
    let mut failures = Vec::new();
    let mut graphs = 0;
    for path in corpus_files() {
        let g = load_graph(&path);
        let (m, bytes) = gpu_graph_payload(&g, &target);
        let r = load_run(&mut c, bytes);
        if !r.is_correct() {
            failures.push(format!("{}: {:?}", g.name, r.failure));
            continue;
        }
        let t = r.timing.as_ref().unwrap();
        assert_eq!(t.clock, "cuda-events");
        assert_eq!(r.seeds.len(), SEEDS.len());
        let kernel = |q: &str| m.kernels.iter().filter_map(|k| figure(&r, &format!("{}: {q}", k.name))).max();
        let regs = kernel("CU_FUNC_ATTRIBUTE_NUM_REGS").expect("registers of every kernel");
        let shared = kernel("CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES").unwrap_or(0);
        let local = kernel("CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES").unwrap_or(0);
        println!(
            "ok {:<24} kernels {:>2}  median {:>9.4} ms  max regs {regs:>3}  max static shared {shared:>5} B  max local {local:>3} B",
            g.name,
            m.kernels.len(),
            t.stats.median_ns / 1e6
        );
        graphs += 1;
    }
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
    println!("{graphs} corpus graphs correct on {} seeds each", SEEDS.len());
}

/// The golden `big_shared` module (64 KiB of shared memory with `shared_optin`), in CUDA C.
fn big_shared() -> String {
    let text = include_str!("../../../adapters/c/tests/golden/big_shared.ekl1");
    let m = ekb_ir::l1::parse::parse(&SourceFile::new("big_shared.ekl1", text)).unwrap();
    ekb_gpu_c::emit(&m, ekb_gpu_c::Dialect::Cuda, &TargetProfile::load("h200").unwrap()).unwrap()
}

#[test]
fn dynamic_shared_memory_above_48_kib_runs_with_the_opt_in() {
    let mut c = serve();
    let source = big_shared();
    let k = HandKernel {
        backend: Backend::Cuda,
        name: "stage",
        source: &source,
        grid: [1, 1, 1],
        block: [1024, 1, 1],
        shared: 65536,
        optin: true,
    };
    let reverse = |x: &[f32]| x.iter().rev().copied().collect::<Vec<f32>>();
    let h200 = TargetProfile::load("h200").unwrap();
    let bytes = gpu_kernel_payload(&k, &h200, (&[16384], &[16384]), &SEEDS, reverse, |_| {});
    let r = load_run(&mut c, bytes);
    assert!(r.is_correct(), "{:?}", r.failure);
    println!(
        "big_shared: 65536 bytes of dynamic shared memory, median {:.4} ms",
        r.timing.unwrap().stats.median_ns / 1e6
    );
    // Over the Orin profile's opt-in limit (163 KiB) it is refused, naming it.
    let orin = TargetProfile::load("jetson-orin").unwrap();
    let k = HandKernel { shared: 200 << 10, ..k };
    let bytes = gpu_kernel_payload(&k, &orin, (&[16384], &[16384]), &[0], reverse, |_| {});
    let f = load_run(&mut c, bytes).failure.unwrap();
    assert_eq!(f.kind, FailureKind::Memory(MemoryFault::IllegalAllocation));
    assert!(
        f.evidence.contains("from target profile `jetson-orin` (gpu.shared_bytes_per_block_optin)"),
        "{}",
        f.evidence
    );
}

const COPY: &str =
    "extern \"C\" __global__ void copy(const float* __restrict__ x, float* __restrict__ y) {\n  \
                    const int i = blockIdx.x * blockDim.x + threadIdx.x;\n  y[i] = x[i];\n}\n";

fn kernel(name: &'static str, source: &'static str, block: u32) -> HandKernel<'static> {
    HandKernel {
        backend: Backend::Cuda,
        name,
        source,
        grid: [1, 1, 1],
        block: [block, 1, 1],
        shared: 0,
        optin: false,
    }
}

#[test]
fn illegal_launches_and_bad_candidates_are_classified() {
    let mut c = serve();
    let h200 = TargetProfile::load("h200").unwrap();
    let same = |x: &[f32]| x.to_vec();
    // 2048 threads per block: over the device's 1024, named from its driver (the profile's
    // limits are lifted).
    let lift = |m: &mut ekb_wire::payload::Manifest| m.gpu = None;
    let bytes = gpu_kernel_payload(&kernel("copy", COPY, 2048), &h200, (&[2048], &[2048]), &[0], same, lift);
    let f = load_run(&mut c, bytes).failure.unwrap();
    assert_eq!(f.kind, FailureKind::Memory(MemoryFault::IllegalAllocation));
    assert!(
        f.evidence
            .contains("2048 threads per block (block 2048x1x1), over the limit of 1024 from CUDA device"),
        "{}",
        f.evidence
    );
    println!("illegal launch: {}", f.evidence);
    // The copy itself is correct.
    let bytes = gpu_kernel_payload(&kernel("copy", COPY, 256), &h200, (&[256], &[256]), &SEEDS, same, |_| {});
    let r = load_run(&mut c, bytes);
    assert!(r.is_correct(), "{:?}", r.failure);
    assert!(figure(&r, "copy: CU_FUNC_ATTRIBUTE_NUM_REGS").is_some_and(|regs| regs > 0));

    // One element past the end of `y`: the device guard.
    let src = "extern \"C\" __global__ void oob(const float* __restrict__ x, float* __restrict__ y) {\n  \
               const int i = threadIdx.x;\n  y[i + 1] = x[i];\n}\n";
    let f = load_run(
        &mut c,
        gpu_kernel_payload(&kernel("oob", src, 256), &h200, (&[256], &[256]), &SEEDS, same, |_| {}),
    )
    .failure
    .unwrap();
    assert_eq!(f.kind, FailureKind::Memory(MemoryFault::GuardCorruption { buffer: "y".into() }), "{f:?}");

    // Far outside every buffer: the driver reports an illegal address.
    let src = "extern \"C\" __global__ void far(const float* __restrict__ x, float* __restrict__ y) {\n  \
               const long i = threadIdx.x;\n  y[i + (1L << 40)] = x[i];\n}\n";
    let f = load_run(
        &mut c,
        gpu_kernel_payload(&kernel("far", src, 256), &h200, (&[256], &[256]), &SEEDS, same, |_| {}),
    )
    .failure
    .unwrap();
    assert_eq!(f.kind, FailureKind::Memory(MemoryFault::OutOfBounds), "{f:?}");
    println!("far write: {}", f.evidence);

    // A source NVRTC refuses: the load fails with its log.
    let src =
        "extern \"C\" __global__ void broken(const float* x, float* y) {\n  y[0] = undefined_value;\n}\n";
    let bytes = gpu_kernel_payload(&kernel("broken", src, 32), &h200, (&[32], &[32]), &[0], same, |_| {});
    match c.call(&Request::Load { payload: bytes }) {
        Response::Error { kind: ErrorKind::LoadFailed, message } => {
            assert!(message.starts_with("NVRTC compile of program 0"), "{message}");
            assert!(message.contains("undefined_value"), "{message}");
        }
        other => panic!("{other:?}"),
    }
    // The session goes on.
    let bytes = gpu_kernel_payload(&kernel("copy", COPY, 256), &h200, (&[256], &[256]), &[0], same, |_| {});
    assert!(load_run(&mut c, bytes).is_correct());
}

/// A row sum whose second warp publishes its partial sums late and without a barrier: it first
/// marks its slots with NaN, spins for about 100 microseconds, then writes them; thread 0 waits
/// about 10 microseconds and reads all 64 slots. Without `__syncthreads()` it reads the marks.
const RACY_ROWSUM: &str =
    "extern \"C\" __global__ void __launch_bounds__(64) rowsum(const float* __restrict__ x, \
                           float* __restrict__ y) {\n  \
    __shared__ float part[64];\n  const int tx = threadIdx.x;\n  float acc = 0.0f;\n  \
    for (int k = tx; k < 100; k += 64) { acc += x[blockIdx.x * 100 + k]; }\n  \
    if (tx >= 32) {\n    part[tx] = __int_as_float(0x7fc00000);\n    \
    const long long t0 = clock64();\n    while (clock64() - t0 < 200000) {}\n  }\n  \
    part[tx] = acc;\n  \
    if (tx == 0) {\n    const long long t0 = clock64();\n    while (clock64() - t0 < 20000) {}\n    \
    float s = 0.0f;\n    for (int i = 0; i < 64; ++i) { s += part[i]; }\n    y[blockIdx.x] = s;\n  }\n}\n";

#[test]
fn a_race_on_shared_memory_and_too_much_shared_memory_are_classified() {
    let mut c = serve();
    let h200 = TargetProfile::load("h200").unwrap();
    let sums = |x: &[f32]| x.chunks(100).map(|row| row.iter().sum()).collect::<Vec<f32>>();
    // The race: the second warp's slots are read before it writes them.
    let k = HandKernel { grid: [8, 1, 1], shared: 256, ..kernel("rowsum", RACY_ROWSUM, 64) };
    let r = load_run(&mut c, gpu_kernel_payload(&k, &h200, (&[8, 100], &[8]), &SEEDS, sums, |_| {}));
    let f = r.failure.expect("the racy row sum fails");
    assert!(matches!(f.kind, FailureKind::Correctness | FailureKind::Parallel), "{f:?}");
    println!("race on shared memory: {:?}: {}", f.kind, f.evidence);
    // The same kernel with a barrier before the reads is correct.
    let fixed: &'static str =
        RACY_ROWSUM.replace("  part[tx] = acc;\n", "  part[tx] = acc;\n  __syncthreads();\n").leak();
    let k = HandKernel { source: fixed, ..k };
    let r = load_run(&mut c, gpu_kernel_payload(&k, &h200, (&[8, 100], &[8]), &SEEDS, sums, |_| {}));
    assert!(r.is_correct(), "{:?}", r.failure);

    // 64 KiB of static shared memory without the opt-in: over the profile's 48 KiB, and (the
    // profile's limits lifted) over the device's own static limit, named from its driver.
    let same = |x: &[f32]| x.to_vec();
    let big = HandKernel { shared: 64 << 10, ..kernel("copy", COPY, 256) };
    let f = load_run(&mut c, gpu_kernel_payload(&big, &h200, (&[256], &[256]), &[0], same, |_| {}))
        .failure
        .unwrap();
    assert_eq!(f.kind, FailureKind::Memory(MemoryFault::IllegalAllocation));
    assert!(f.evidence.contains("from target profile `h200` (gpu.shared_bytes_per_block)"), "{}", f.evidence);
    let lift = |m: &mut ekb_wire::payload::Manifest| m.gpu = None;
    let f = load_run(&mut c, gpu_kernel_payload(&big, &h200, (&[256], &[256]), &[0], same, lift))
        .failure
        .unwrap();
    assert_eq!(f.kind, FailureKind::Memory(MemoryFault::IllegalAllocation));
    assert!(f.evidence.contains("from CUDA device `"), "{}", f.evidence);
    println!("too much shared memory: {}", f.evidence);

    // A barrier in a divergent branch never reaches the device: the verifier refuses it for
    // the CUDA profile too.
    let text = "module m {\n  input x: f32[64]\n  output y: f32[1]\n\n  kernel k(x: f32[64] in, y: f32[1] out) {\n    \
         launch grid(bx in 0..1) block(tx in 0..64) {\n      alloc s: f32[64] shared\n      s[tx] = x[tx]\n      \
         if tx < 32 {\n        barrier\n      }\n      if tx == 0 {\n        y[0] = s[0] + s[63]\n      }\n    }\n  \
         }\n\n  run k(x, y)\n}\n";
    let m = ekb_ir::l1::parse::parse(&SourceFile::new("divergent.ekl1", text)).unwrap();
    let errors: Vec<String> = ekb_ir::l1::verify::verify(&m, Some(&h200))
        .into_iter()
        .filter(|d| d.is_error())
        .map(|d| d.message.clone())
        .collect();
    assert!(
        errors.iter().any(|e| e.starts_with("`barrier` under thread-divergent control flow in kernel k")),
        "{errors:?}"
    );
}
