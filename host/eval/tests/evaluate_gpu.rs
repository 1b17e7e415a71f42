//! The evaluation protocol on a GPU backend end to end: `opencl` instances built for the `pocl`
//! profile (the default GPU lowering against the naive GPU schedule, and hand-made GPU
//! candidates, one per failure class the GPU adds), run by the runtime's OpenCL build as a child
//! process on this machine's OpenCL device (PoCL in CI), classified and stored.

mod common;

use common::{config, result_of, Quiet};
use ekb_deploy::transport::{self, Device, RemoteOptions};
use ekb_deploy::Runtime;
use ekb_eval::evaluate::candidate::Candidates;
use ekb_eval::evaluate::{self, DeviceLink};
use ekb_eval::results::{FailureClass, Run};
use ekb_eval::tasks::{load_task, Backend, Task};
use ekb_ir::TargetProfile;
use ekb_llvm::Arch;
use std::collections::BTreeMap;
use std::path::Path;

/// `mm_tiny`: a 64x48 by 48x32 matmul on the `aiot` domain (the opencl backend).
fn mm_task(dir: &Path) -> Task {
    let path = dir.join("mm_tiny.ekir");
    std::fs::write(
        &path,
        "# task: level=1 family=matmul domains=[aiot]\n\
         # provenance: model=test layer=mm module=torch.matmul source=tests\n\
         graph mm_tiny(a: f32[64,48], b: f32[48,32]) -> (y: f32[64,32]) {\n  \
         %0: f32[64,32] = matmul(a, b, transpose_a=false, transpose_b=false)\n  return %0\n}\n",
    )
    .unwrap();
    load_task(&path).unwrap_or_else(|ds| panic!("{}", ds[0]))
}

fn gpu_runtime() -> Runtime {
    let arch = Arch::host().expect("tests run on x86_64 or aarch64");
    let path = ekb_e2e::opencl_runtime(Path::new(env!("CARGO_TARGET_TMPDIR")));
    Runtime { gpu: true, ..Runtime::inspect(&path, arch, "test build").unwrap() }
}

/// Evaluates the opencl instance of `task` with the OpenCL runtime on this machine.
fn evaluate_opencl(task: &Task, candidates: Candidates, samples: u32, target: &str, out: &Path) -> Run {
    let mut cfg = config(candidates, samples);
    cfg.targets = BTreeMap::from([(Backend::Opencl, TargetProfile::load(target).unwrap())]);
    cfg.timing.budget_ms = 200;
    // PoCL compiles a kernel for its work-group size at its first launch, inside the first
    // execution: the register-tiled matmul took over the shared one second on a busy 2-core
    // machine.
    cfg.exec_timeout = std::time::Duration::from_secs(10);
    let transport = transport::connect(&Device::Local, &gpu_runtime(), &RemoteOptions::default()).unwrap();
    let devices = BTreeMap::from([(Backend::Opencl, DeviceLink { transport, name: "local".into() })]);
    let planned = evaluate::instances(&[task], &[Backend::Opencl]);
    assert_eq!(planned.len(), 1);
    evaluate::evaluate(&[task], planned, &cfg, devices, out, false, &mut Quiet::default())
        .unwrap_or_else(|d| panic!("{d}"))
}

/// A GPU module for `mm_tiny` whose one kernel is `launch` with `block` threads around `body`
/// (which sees `bx`, `tx` and `i`, the output row-major index, guarded below 2048).
fn gpu_module(block: u32, body: &str) -> String {
    let grid = 2048u32.div_ceil(block);
    format!(
        "module mm_tiny {{\n  input a: f32[64,48]\n  input b: f32[48,32]\n  output y: f32[64,32]\n\n  \
         kernel k(a: f32[64,48] in, b: f32[48,32] in, y: f32[64,32] out) {{\n    \
         launch grid(bx in 0..{grid}) block(tx in 0..{block}) {{\n      let i = bx * {block} + tx\n      \
         if i < 2048 {{\n{body}\n      }}\n    }}\n  }}\n\n  run k(a, b, y)\n}}\n"
    )
}

const DOT: &str = "        let r = i / 32\n        let c = i % 32\n        \
                   alloc acc: f32[1] local\n        acc[0] = 0.0\n        for k in 0..48 {\n          \
                   acc[0] = acc[0] + a[r, k] * b[k, c]\n        }\n";

#[test]
fn the_default_gpu_lowering_is_correct_and_timed_against_the_naive_gpu_schedule() {
    let tmp = tempfile::tempdir().unwrap();
    let task = mm_task(tmp.path());
    let run = evaluate_opencl(
        &task,
        Candidates::Builtin(ekb_lower::Schedule::Default),
        1,
        "pocl",
        &tmp.path().join("run"),
    );
    let env = &run.info.backends["opencl"];
    assert_eq!(env.target, "pocl");
    assert!(env.gpu.as_deref().is_some_and(|g| !g.is_empty()), "{env:?}");
    let r = result_of(&run, 0);
    assert_eq!(r.instance.backend, "opencl");
    assert!(r.compiled && r.correct && r.failure.is_none() && r.baseline_failure.is_none(), "{r:?}");
    // The candidate is the tiled kernel in shared memory; the baseline has none.
    let text = r.candidate.text.as_deref().unwrap();
    assert!(text.contains("launch grid(") && text.contains(" shared"), "{text}");
    let t = r.timing.as_ref().expect("timed against the naive GPU schedule");
    assert!(t.speedup > 0.0 && !t.pairs.is_empty(), "{t:?}");
}

#[test]
fn gpu_candidates_are_classified_end_to_end() {
    let tmp = tempfile::tempdir().unwrap();
    let task = mm_task(tmp.path());
    let cands = tmp.path().join("cands");
    let samples: Vec<String> = vec![
        // 0: a correct GPU module, one thread per output element.
        gpu_module(64, &format!("{DOT}        y[r, c] = acc[0]")),
        // 1: a correct L0 graph, lowered with the GPU lowering.
        "graph mm_tiny(a: f32[64,48], b: f32[48,32]) -> (y: f32[64,32]) {\n  %0 = matmul(a, b)\n  return %0\n}\n"
            .into(),
        // 2: wrong values (the sum misses its last term).
        gpu_module(64, &DOT.replace("0..48", "0..47").replace("}\n", "}\n        y[r, c] = acc[0]")),
        // 3: a CPU loop nest, for a GPU instance.
        "module mm_tiny {\n  input a: f32[64,48]\n  input b: f32[48,32]\n  output y: f32[64,32]\n\n  \
         kernel k(a: f32[64,48] in, b: f32[48,32] in, y: f32[64,32] out) {\n    for i in 0..64 {\n      \
         for j in 0..32 {\n        y[i, j] = a[i, 0]\n      }\n    }\n  }\n\n  run k(a, b, y)\n}\n"
            .into(),
        // 4: more threads per block than the rk3588's Mali allows (1024).
        gpu_module(2048, &format!("{DOT}        y[r, c] = acc[0]")),
        // 5: a store far outside `y` at an index only the data knows (the device's guards).
        gpu_module(64, &format!("{DOT}        y[r + i32(a[0, 0] * 0.0 + 100000.0), c] = acc[0]")),
    ];
    for (i, text) in samples.iter().enumerate() {
        let dir = cands.join(format!("mm_tiny/opencl/sample-{i}"));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("candidate.ekir"), text).unwrap();
    }
    // The rk3588 profile (OpenCL, 1024 threads per block), run on this machine's device.
    let run = evaluate_opencl(
        &task,
        Candidates::Dir(cands),
        samples.len() as u32,
        "rk3588",
        &tmp.path().join("run"),
    );
    assert_eq!(run.results.len(), samples.len(), "{:?}", run.warnings);
    let r = |s| result_of(&run, s);
    for s in [0, 1] {
        let x = r(s);
        assert!(x.compiled && x.correct && x.failure.is_none(), "sample {s}: {x:?}");
        assert!(x.timing.is_some(), "sample {s}: {x:?}");
    }
    assert_eq!(r(1).candidate.kind, "l0");
    let failure =
        |s: u32| r(s).failure.clone().unwrap_or_else(|| panic!("sample {s} should fail: {:?}", r(s)));
    assert_eq!(failure(2).class, FailureClass::Correctness, "{:?}", failure(2));
    assert!(failure(2).evidence.contains("output `y`"), "{:?}", failure(2));
    assert_eq!(failure(3).class, FailureClass::SyntaxApi);
    assert_eq!(failure(3).detail, "syntax/API: wrong backend");
    assert!(failure(3).evidence.contains("kernel `k` has no `launch`"), "{:?}", failure(3));
    assert_eq!(failure(4).class, FailureClass::Memory);
    assert_eq!(failure(4).detail, "memory: illegal allocation");
    assert!(failure(4).evidence.contains("2048 threads per block"), "{:?}", failure(4));
    assert!(!r(4).compiled);
    assert_eq!(failure(5).class, FailureClass::Memory, "{:?}", failure(5));
    assert!(r(5).compiled);
    for s in 2..samples.len() as u32 {
        assert!(r(s).timing.is_none(), "sample {s} failed and has no timing");
    }
}
