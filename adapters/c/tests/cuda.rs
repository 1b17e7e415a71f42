//! CUDA execution (feature `cuda`, on a machine with an NVIDIA GPU, the driver and NVRTC): the
//! default GPU lowering of every corpus graph compiled by NVRTC for the device and run, matched
//! against the L0 reference; dynamic shared memory with the opt-in; illegal launches reported
//! before launch; and a machine without CUDA gets a diagnostic, not a panic.
//!
//! Prints one line per graph (kernels, total kernel time, the largest register count) for the
//! record in `docs/gpu.md`.
#![cfg(feature = "cuda")]

use ekb_e2e::{check_outputs, corpus_files, load_graph, reference, SEEDS};
use ekb_gpu_c::run::{Api, Gpu, KernelResources};
use ekb_ir::l1::parse::parse;
use ekb_ir::tensor::{BufData, Buffer};
use ekb_ir::types::{DType, TensorType};
use ekb_ir::{SourceFile, TargetProfile};
use ekb_lower::{lower_gpu, Schedule};
use std::collections::HashMap;

/// The device, or `None` (with the reason printed) where there is no CUDA: these tests then
/// check only that the absence is a diagnostic.
fn gpu() -> Option<Gpu> {
    match Gpu::open(Api::Cuda) {
        Ok(g) => Some(g),
        Err(d) => {
            assert!(d.message.starts_with("CUDA: "), "{d}");
            eprintln!("no CUDA here: {d}");
            None
        }
    }
}

#[test]
fn every_corpus_graph_runs_on_the_cuda_device_and_matches() {
    let Some(gpu) = gpu() else { return };
    let t = TargetProfile::load("h200").unwrap();
    println!("device: {} ({}), {} bytes", gpu.info.name, gpu.info.arch, gpu.info.global_mem_bytes);
    let mut graphs = 0;
    for path in corpus_files() {
        let g = load_graph(&path);
        let m = lower_gpu(&g, Schedule::Default, &t).unwrap_or_else(|d| panic!("{}: {d}", g.name));
        for seed in SEEDS {
            let (inputs, want) = reference(&g, seed);
            let report = gpu.run(&m, &inputs).unwrap_or_else(|d| panic!("{} seed {seed}: {d}", g.name));
            let problems = check_outputs(&g, &want, &report.outputs);
            assert!(problems.is_empty(), "{} seed {seed}: {problems:?}", g.name);
            if seed == 0 {
                let ms = report.steps.iter().map(|s| s.time_ns).sum::<u64>() as f64 / 1e6;
                let figure = |which: usize| {
                    report.steps.iter().map(|s| s.resources.attributes()[which].1).max().unwrap_or(0)
                };
                // CU_FUNC_ATTRIBUTE_NUM_REGS, _LOCAL_SIZE_BYTES, _SHARED_SIZE_BYTES.
                let (regs, local, shared) = (figure(0), figure(1), figure(2));
                assert!(report.steps.iter().all(|s| matches!(s.resources, KernelResources::Cuda { .. })));
                println!(
                    "ok {:<20} kernels {:>2}  time {:>8.4} ms  max regs {:>3}  max static shared {:>5} B  max local {:>3} B",
                    g.name,
                    report.steps.len(),
                    ms,
                    regs,
                    shared,
                    local
                );
            }
        }
        graphs += 1;
    }
    println!("{graphs} corpus graphs matched the reference on {} seeds each", SEEDS.len());
}

#[test]
fn dynamic_shared_memory_above_48_kib_runs_with_the_opt_in() {
    let Some(gpu) = gpu() else { return };
    // Built into the binary, so that a test binary carried to a GPU machine needs no source tree.
    let text = include_str!("golden/big_shared.ekl1");
    let m = parse(&SourceFile::new("big_shared.ekl1", text)).unwrap();
    let x: Vec<f32> = (0..16384).map(|i| i as f32).collect();
    let inputs = HashMap::from([(
        "x".to_string(),
        Buffer { ty: TensorType::new(DType::F32, [16384]), data: BufData::F32(x.clone()) },
    )]);
    let report = gpu.run(&m, &inputs).unwrap_or_else(|d| panic!("{d}"));
    let BufData::F32(y) = &report.outputs["y"].data else { panic!() };
    // y is x reversed.
    assert!(y.iter().enumerate().all(|(i, v)| *v == x[16383 - i]));
    assert_eq!(report.steps[0].dynamic_shared_bytes, 65536);
    println!(
        "big_shared: 65536 bytes of dynamic shared memory, {:.4} ms",
        report.steps[0].time_ns as f64 / 1e6
    );
}

#[test]
fn illegal_launches_are_found_before_launch() {
    let Some(gpu) = gpu() else { return };
    let text = "module wide {\n  input x: f32[1]\n  output y: f32[1]\n\n  kernel k(x: f32[1] in, y: f32[1] out) {\n    launch grid(bx in 0..1) block(tx in 0..2048) {\n      if tx == 0 {\n        y[0] = x[0]\n      }\n    }\n  }\n\n  run k(x, y)\n}\n";
    let m = parse(&SourceFile::new("wide", text)).unwrap();
    let inputs = HashMap::from([(
        "x".to_string(),
        Buffer { ty: TensorType::new(DType::F32, [1]), data: BufData::F32(vec![1.0]) },
    )]);
    let d = gpu.run(&m, &inputs).unwrap_err();
    assert!(d.message.contains("2048 threads per block"), "{d}");
    assert!(d.message.contains("(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)"), "{d}");
    println!("illegal launch: {}", d.message);
}

#[test]
fn vector_loads_and_stores_compute_what_the_plain_loops_do() {
    let Some(gpu) = gpu() else { return };
    let text = include_str!("golden/vector.ekl1");
    let m = parse(&SourceFile::new("vector.ekl1", text)).unwrap();
    let f32s = |data: Vec<f32>, shape: &[usize]| Buffer {
        ty: TensorType::new(DType::F32, shape.to_vec()),
        data: BufData::F32(data),
    };
    let x: Vec<f32> = (0..64 * 256).map(|i| ((i * 37) % 101) as f32 / 50.0 - 1.0).collect();
    let b: Vec<f32> = (0..256).map(|i| ((i * 11) % 7) as f32 / 7.0 - 0.5).collect();
    let inputs = HashMap::from([("x".to_string(), f32s(x, &[64, 256])), ("b".to_string(), f32s(b, &[256]))]);
    let report = gpu.run(&m, &inputs).unwrap_or_else(|d| panic!("{d}"));
    let want = ekb_ir::l1::interp::run(&m, &inputs).unwrap();
    for name in ["y", "z", "w", "f"] {
        assert_eq!(report.outputs[name].data, want[name].data, "{name}");
    }
    let times: Vec<String> =
        report.steps.iter().map(|s| format!("{:.4} ms", s.time_ns as f64 / 1e6)).collect();
    println!("vector: bias_relu, signs (float4/int4), strided (plain) and fragments (float4 from shared) correct; {}", times.join(", "));
}
