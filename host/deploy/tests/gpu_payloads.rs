//! GPU payloads: which processor a build targets (`BackendChoice`), and what a GPU payload
//! carries: the source in the GPU's dialect as one code blob, each kernel's launch, shared and
//! local allocations, the profile's GPU limits and the GPU's memory as the budget; a launch that
//! opts in to dynamic shared memory; and the errors a user meets.

use ekb_deploy::build::{self, BuildOptions};
use ekb_deploy::driver::{backend_for, BackendChoice, Program, Sources};
use ekb_e2e::{corpus_files, load_graph};
use ekb_ir::{SourceFile, TargetProfile};
use ekb_lower::Schedule;
use ekb_wire::payload::{Backend, BlobKind, GpuLimits, Launch, MemScope, Payload};

fn graph(name: &str) -> ekb_ir::l0::Graph {
    load_graph(&corpus_files().into_iter().find(|p| p.ends_with(format!("{name}.ekir"))).unwrap())
}

#[test]
fn the_backend_follows_the_choice_the_program_and_the_profile() {
    let g = graph("relu");
    let p = Program::Graph(&g);
    let t = |n: &str| TargetProfile::load(n).unwrap();
    // Workstation and server profiles around their GPU build graphs for the GPU; boards and
    // CPU profiles for the CPU unless asked.
    assert_eq!(backend_for(p, &t("pocl"), BackendChoice::Auto), Ok(Backend::OpenCl));
    assert_eq!(backend_for(p, &t("h200"), BackendChoice::Auto), Ok(Backend::Cuda));
    assert_eq!(backend_for(p, &t("rk3588"), BackendChoice::Auto), Ok(Backend::CpuLlvm));
    assert_eq!(backend_for(p, &t("rk3588"), BackendChoice::Gpu), Ok(Backend::OpenCl));
    assert_eq!(backend_for(p, &t("jetson-orin"), BackendChoice::Gpu), Ok(Backend::Cuda));
    assert_eq!(backend_for(p, &t("pocl"), BackendChoice::Cpu), Ok(Backend::CpuLlvm));
    let e = backend_for(p, &t("host"), BackendChoice::Gpu).unwrap_err();
    assert_eq!(e.message, "target `host` has no GPU to build for");
    assert_eq!(BackendChoice::from_name("gpu"), Ok(BackendChoice::Gpu));
    assert!(BackendChoice::from_name("npu").unwrap_err().message.contains("unknown backend `npu`"));
}

#[test]
fn a_gpu_payload_carries_the_source_the_launches_and_the_profile_limits() {
    let g = graph("softmax");
    let t = TargetProfile::load("rk3588").unwrap();
    let options = BuildOptions::default();
    let built =
        build::build_for(Program::Graph(&g), Sources::default(), &t, &options, BackendChoice::Gpu).unwrap();
    assert_eq!(built.summary.backend, "opencl");
    assert!(built
        .summary
        .to_string()
        .starts_with("softmax for rk3588 (opencl), default schedule: 2 kernels"));
    let view = Payload::parse(&built.payload).unwrap();
    let m = view.manifest();
    assert_eq!(m.backend, Backend::OpenCl);
    let code = view.kernel_code(0).unwrap();
    assert_eq!(code.kind, BlobKind::OpenClSource);
    let source = std::str::from_utf8(code.data).unwrap();
    let gpu = t.gpu.as_ref().unwrap();
    assert_eq!(
        m.gpu,
        Some(GpuLimits {
            max_threads_per_block: gpu.max_threads_per_block,
            shared_bytes_per_block: gpu.shared_bytes_per_block,
            shared_bytes_optin: None,
            private_bytes_per_thread: None,
            max_buffer_bytes: None,
        })
    );
    assert_eq!(m.memory.memory_limit_bytes, gpu.memory_bytes);
    for (k, l1) in m.kernels.iter().zip(&built.module.kernels) {
        // Every kernel is in the one source, under its L1 name, on the grid L1 declares.
        assert_eq!((k.blob, k.symbol.as_str()), (0, l1.name.as_str()));
        assert!(source.contains(&format!("void {}(", k.symbol)), "{source}");
        let shape = ekb_ir::l1::gpu::LaunchShape::of(l1).unwrap();
        assert_eq!(
            k.launch,
            Launch::Grid { grid: shape.grid, block: shape.block, shared_bytes: 0, shared_optin: false }
        );
        let shared: u64 = k.allocs.iter().filter(|a| a.scope == MemScope::Shared).map(|a| a.bytes).sum();
        assert_eq!(shared, shape.shared_bytes, "{}", k.name);
    }
    // The first kernel's row reduction stages in shared memory.
    assert!(m.kernels[0].allocs.iter().any(|a| a.scope == MemScope::Shared));
}

#[test]
fn a_cuda_launch_that_opts_in_passes_its_shared_memory_at_launch() {
    let module = SourceFile::new(
        "big.ekl1",
        "module big {\n  input x: f32[256]\n  output y: f32[256]\n\n  kernel k(x: f32[256] in, y: f32[256] out) {\n    \
         launch grid(bx in 0..1) block(tx in 0..256) shared_optin {\n      alloc s: f32[16385] shared\n      \
         s[tx] = x[tx]\n      barrier\n      y[tx] = s[255 - tx]\n    }\n  }\n\n  run k(x, y)\n}\n",
    );
    let graph_src = SourceFile::new(
        "big.ekir",
        "graph big(x: f32[256]) -> (y: f32[256]) {\n  %0 = relu(x)\n  return %0\n}\n",
    );
    let g = ekb_ir::l0::check::load(&graph_src).unwrap();
    let m = ekb_ir::l1::parse::parse(&module).unwrap();
    let t = TargetProfile::load("h200").unwrap();
    let sources = Sources { graph: Some(&graph_src), module: Some(&module) };
    let built =
        build::build(Program::Module { module: &m, graph: &g }, sources, &t, &BuildOptions::default())
            .unwrap();
    let view = Payload::parse(&built.payload).unwrap();
    let k = &view.manifest().kernels[0];
    assert_eq!(view.kernel_code(0).unwrap().kind, BlobKind::CudaSource);
    // 16385 floats = 65540 bytes, rounded up to 16 for the launch.
    assert_eq!(
        k.launch,
        Launch::Grid { grid: [1; 3], block: [256, 1, 1], shared_bytes: 65552, shared_optin: true }
    );
    assert_eq!(view.manifest().gpu.unwrap().shared_bytes_optin, Some(232448));
}

#[test]
fn gpu_builds_take_either_schedule_and_refuse_targets_without_a_gpu() {
    let g = graph("relu");
    let t = TargetProfile::load("pocl").unwrap();
    let options = BuildOptions { schedule: Schedule::Naive, ..BuildOptions::default() };
    let naive = build::build(Program::Graph(&g), Sources::default(), &t, &options).unwrap();
    assert_eq!(Payload::parse(&naive.payload).unwrap().manifest().backend, Backend::OpenCl);
    assert_eq!(naive.summary.schedule.as_deref(), Some("naive"));
    // The CPU build of the same profile takes it too.
    let cpu =
        build::build_for(Program::Graph(&g), Sources::default(), &t, &options, BackendChoice::Cpu).unwrap();
    assert_eq!(Payload::parse(&cpu.payload).unwrap().manifest().backend, Backend::CpuLlvm);
    // A module of GPU kernels for a target without a GPU.
    let gpu = build::build(Program::Graph(&g), Sources::default(), &t, &BuildOptions::default()).unwrap();
    let host = TargetProfile::load("host").unwrap();
    let ds = build::build(
        Program::Module { module: &gpu.module, graph: &g },
        Sources::default(),
        &host,
        &BuildOptions::default(),
    )
    .unwrap_err();
    assert_eq!(ds[0].message, "target `host` has no GPU to build for");
}

#[test]
fn a_bundle_of_gpu_payloads_needs_the_gpu_runtime() {
    let g = graph("relu");
    let t = TargetProfile::load("rk3588").unwrap();
    let options = BuildOptions::default();
    let gpu =
        build::build_for(Program::Graph(&g), Sources::default(), &t, &options, BackendChoice::Gpu).unwrap();
    let cpu =
        build::build_for(Program::Graph(&g), Sources::default(), &t, &options, BackendChoice::Cpu).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let exe = dir.path().join("ekb-rt");
    std::fs::write(&exe, b"not run here").unwrap();
    let runtime = |gpu: bool| ekb_deploy::Runtime {
        arch: ekb_llvm::Arch::Aarch64,
        path: exe.clone(),
        found_by: "test".into(),
        is_static: !gpu,
        gpu,
        backends: Vec::new(),
        size_bytes: 12,
        sha256: "00".repeat(32),
    };
    let payloads = vec![("relu_cpu".to_string(), cpu.payload), ("relu_gpu".to_string(), gpu.payload)];
    let d = ekb_deploy::bundle::write(&dir.path().join("b"), "rk3588", &runtime(false), &payloads, false)
        .unwrap_err();
    assert!(
        d.message.starts_with("payload `relu_gpu` runs on the GPU (opencl), and the runtime `"),
        "{}",
        d.message
    );
    assert!(d.hint.as_deref().unwrap().contains("--features opencl,cuda --target aarch64-unknown-linux-gnu"));
    assert!(!dir.path().join("b").exists(), "nothing is written for a refused bundle");
    // The GPU runtime takes both (its CPU executor runs the CPU payload).
    let w =
        ekb_deploy::bundle::write(&dir.path().join("b"), "rk3588", &runtime(true), &payloads, false).unwrap();
    assert!(w.files.contains(&"bin/ekb-rt-aarch64".to_string()), "{:?}", w.files);
    let readme = std::fs::read_to_string(dir.path().join("b/README.txt")).unwrap();
    assert!(readme.contains("GPU executors") && readme.contains("OPENCL_DYLIB_PATH"), "{readme}");
}
