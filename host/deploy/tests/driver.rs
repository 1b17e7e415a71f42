//! The compile driver (`ekb_deploy::driver`): the stages run in their order and each one's
//! dump is what the next stage received; `until` stops where asked; a failing stage stops the
//! pipeline with its located diagnostics (a verifier error never reaches the adapter); GPU
//! programs end at the adapter with their source as the code; and an artifact packed into a
//! payload and measured on the runtime here is correct.

mod common;

use ekb_deploy::build::{self, BuildOptions};
use ekb_deploy::driver::{self, BackendChoice, CompileOptions, Dump, Program, Sources, Stage};
use ekb_deploy::transport::{self, Device, Mode, RemoteOptions, RunSettings};
use ekb_e2e::{corpus_files, load_graph};
use ekb_ir::l0::Graph;
use ekb_ir::{l1, SourceFile, TargetProfile};
use ekb_llvm::Arch;
use ekb_wire::payload::Backend;
use ekb_wire::protocol::TimingOverrides;
use std::path::Path;

fn graph(name: &str) -> Graph {
    load_graph(&corpus_files().into_iter().find(|p| p.ends_with(format!("{name}.ekir"))).unwrap())
}

fn host() -> TargetProfile {
    TargetProfile::load("host").unwrap()
}

/// The files of a dump directory, sorted.
fn files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    names.sort();
    names
}

/// A module whose 512 KiB local allocation is over the 256 KiB stack of the aarch64 boards,
/// and the graph whose task it implements.
fn over_the_stack() -> (SourceFile, SourceFile) {
    let graph = SourceFile::new(
        "big.ekir",
        "graph big(x: f32[4]) -> (y: f32[4]) {\n  %0 = relu(x)\n  return %0\n}\n",
    );
    let module = SourceFile::new(
        "big.l1.ekir",
        "module big {\n  output y: f32[4]\n\n  kernel k(y: f32[4] out) {\n    alloc t: f32[131072] local\n    \
         for i in 0..4 {\n      t[i] = 1.0\n      y[i] = t[i]\n    }\n  }\n\n  run k(y)\n}\n",
    );
    (graph, module)
}

#[test]
fn every_stage_runs_in_order_and_dumps_what_the_next_one_reads() {
    let g = graph("softmax");
    let dir = tempfile::tempdir().unwrap();
    let options = CompileOptions { dump: Dump::Dir(dir.path().to_path_buf()), ..CompileOptions::default() };
    let a = driver::compile(Program::Graph(&g), Sources::default(), &host(), &options).unwrap();
    let ran: Vec<Stage> = a.times.iter().map(|(s, _)| *s).collect();
    // Every stage but the schedule, which runs only with a trace.
    let all: Vec<Stage> = Stage::ALL.into_iter().filter(|s| *s != Stage::Schedule).collect();
    assert_eq!(ran, all);
    assert_eq!(
        files(dir.path()),
        [
            "1-graph-passes.ekir",
            "2-lower.l1.ekir",
            "4-verify.txt",
            "5-bind.txt",
            "6-adapter.ll",
            "7-toolchain.o"
        ]
    );
    let read = |name: &str| std::fs::read(dir.path().join(name)).unwrap();
    // The default passes find nothing to rewrite here: the graph goes to the lowering as written.
    assert_eq!(read("1-graph-passes.ekir"), ekb_ir::l0::print::print(&g).into_bytes());
    // The lowered program reads back as the module the later stages compiled.
    let lowered = String::from_utf8(read("2-lower.l1.ekir")).unwrap();
    let parsed = l1::parse::parse(&SourceFile::new("2-lower.l1.ekir", lowered.as_str())).unwrap();
    assert_eq!(l1::print::print(&parsed), l1::print::print(&a.module));
    assert_eq!(read("4-verify.txt"), b"no findings\n");
    let bound = String::from_utf8(read("5-bind.txt")).unwrap();
    assert_eq!(bound, "x: input f32[3,9,21]\na: output f32[3,9,21]\nb: output f32[3,9,21]\n");
    assert_eq!(read("6-adapter.ll"), a.source.clone().unwrap().into_bytes());
    let code = a.code.as_ref().unwrap();
    assert_eq!(read("7-toolchain.o"), code.bytes);
    assert_eq!(&code.bytes[..4], b"\x7fELF");
    assert_eq!((a.backend, a.schedule), (Backend::CpuLlvm, Some(ekb_lower::Schedule::Default)));
    assert!(code.log.command[0].contains("clang"), "{:?}", code.log.command);
}

#[test]
fn the_graph_passes_rewrite_before_the_lowering_and_dump_each_change() {
    let src = SourceFile::new(
        "twice.ekir",
        "graph twice(x: f32[4]) -> (y: f32[4]) {\n  %0 = relu(x)\n  %1 = relu(x)\n  %2 = add(%0, %1)\n  \
         %3 = exp(x)\n  return %2\n}\n",
    );
    let g = ekb_ir::l0::check::load(&src).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let options = CompileOptions {
        dump: Dump::Dir(dir.path().to_path_buf()),
        until: Stage::Lower,
        ..CompileOptions::default()
    };
    let a = driver::compile(Program::Graph(&g), Sources::default(), &host(), &options).unwrap();
    let kernels: Vec<&str> = a.module.kernels.iter().map(|k| k.name.as_str()).collect();
    assert_eq!(kernels, ["k1_add"], "the repeated relu shared, the unused exp removed, relu fused into add");
    // Round 1: patchify, pixel_transpose, trim, bn_fold and fold (no change), cse, dce; round 2
    // changes nothing; then fuse (the 15th run).
    assert_eq!(
        files(dir.path()),
        [
            "1-graph-passes.15-fuse.ekir",
            "1-graph-passes.6-cse.ekir",
            "1-graph-passes.7-dce.ekir",
            "1-graph-passes.ekir",
            "2-lower.l1.ekir"
        ]
    );
    let after_cse = std::fs::read_to_string(dir.path().join("1-graph-passes.6-cse.ekir")).unwrap();
    assert!(after_cse.contains("add(%0, %0)") && after_cse.contains("exp(x)"), "{after_cse}");
    let last = std::fs::read_to_string(dir.path().join("1-graph-passes.ekir")).unwrap();
    assert!(last.contains("fuse %0, %2\n"), "{last}");
    assert_eq!(last, std::fs::read_to_string(dir.path().join("1-graph-passes.15-fuse.ekir")).unwrap());

    // Without passes the graph is lowered as written: one kernel per node.
    let options = CompileOptions {
        until: Stage::Lower,
        passes: ekb_passes::Selection::None,
        ..CompileOptions::default()
    };
    let a = driver::compile(Program::Graph(&g), Sources::default(), &host(), &options).unwrap();
    assert_eq!(a.module.kernels.len(), 4);
}

#[test]
fn until_stops_after_the_stage_asked_for() {
    let g = graph("relu");
    let upto = |until| {
        let options = CompileOptions { until, ..CompileOptions::default() };
        driver::compile(Program::Graph(&g), Sources::default(), &host(), &options).unwrap()
    };
    let a = upto(Stage::Lower);
    assert_eq!(a.times.iter().map(|(s, _)| *s).collect::<Vec<_>>(), [Stage::GraphPasses, Stage::Lower]);
    assert!(a.source.is_none() && a.code.is_none());
    let a = upto(Stage::Verify);
    assert_eq!(a.times.last().unwrap().0, Stage::Verify);
    assert!(a.source.is_none() && a.code.is_none());
    let a = upto(Stage::Adapter);
    assert!(a.source.unwrap().contains("define void @ekb_k_"));
    assert!(a.code.is_none());
    assert!(a.times.iter().all(|(s, _)| *s != Stage::Toolchain));
}

#[test]
fn a_verifier_error_stops_before_the_adapter_with_its_located_diagnostic() {
    let (gsrc, msrc) = over_the_stack();
    let g = ekb_ir::l0::check::load(&gsrc).unwrap();
    let m = l1::parse::parse(&msrc).unwrap();
    let board = TargetProfile::load("rk3588").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let options = CompileOptions { dump: Dump::Dir(dir.path().to_path_buf()), ..CompileOptions::default() };
    let sources = Sources { graph: Some(&gsrc), module: Some(&msrc) };
    let program = Program::Module { module: &m, graph: &g };
    // A first run leaves every stage's file; the failing run below removes them.
    driver::compile(program, sources, &host(), &options).unwrap();
    assert!(files(dir.path()).contains(&"6-adapter.ll".to_string()));

    let f = driver::compile(program, sources, &board, &options).unwrap_err();
    assert_eq!(f.stage, Stage::Verify);
    let d = f.diagnostics.iter().find(|d| d.is_error()).unwrap();
    assert!(d.message.contains("524288") && d.message.contains("stack_bytes"), "{}", d.message);
    let at = d.location.as_ref().expect("located in the module's file");
    assert_eq!((at.file.as_str(), at.line), ("big.l1.ekir", 5));
    // An L1 module skips the graph passes and the lowering; nothing after the verifier ran.
    assert_eq!(files(dir.path()), ["4-verify.txt"]);
    let findings = std::fs::read_to_string(dir.path().join("4-verify.txt")).unwrap();
    assert!(findings.contains("stack_bytes") && findings.contains("big.l1.ekir:5"), "{findings}");
}

#[test]
fn a_gpu_program_ends_at_the_adapter_with_its_source_as_the_code() {
    let g = graph("relu");
    let pocl = TargetProfile::load("pocl").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let options = CompileOptions {
        backend: BackendChoice::Gpu,
        dump: Dump::Dir(dir.path().to_path_buf()),
        ..CompileOptions::default()
    };
    let a = driver::compile(Program::Graph(&g), Sources::default(), &pocl, &options).unwrap();
    assert_eq!(a.backend, Backend::OpenCl);
    assert!(a.module.kernels.iter().all(|k| k.has_launch()), "the GPU lowering");
    let source = a.source.clone().unwrap();
    assert!(source.contains("__kernel"), "{source}");
    assert_eq!(a.code.as_ref().unwrap().bytes, source.as_bytes());
    assert_eq!(a.times.last().unwrap().0, Stage::Adapter);
    assert_eq!(files(dir.path()).last().unwrap(), "6-adapter.cl");

    // A GPU asked of a target without one stops before the lowering.
    let f = driver::compile(Program::Graph(&g), Sources::default(), &host(), &options).unwrap_err();
    assert_eq!(f.stage, Stage::Lower);
    assert_eq!(f.diagnostics[0].message, "target `host` has no GPU to build for");
}

#[test]
fn an_unbound_module_compiles_without_the_bind_stage_but_packs_into_no_payload() {
    let g = graph("relu");
    let lowered = driver::compile(
        Program::Graph(&g),
        Sources::default(),
        &host(),
        &CompileOptions { until: Stage::Lower, ..CompileOptions::default() },
    )
    .unwrap();
    let m = lowered.module;
    let a = driver::compile(Program::Unbound(&m), Sources::default(), &host(), &CompileOptions::default())
        .unwrap();
    let ran: Vec<Stage> = a.times.iter().map(|(s, _)| *s).collect();
    assert_eq!(ran, [Stage::Verify, Stage::Adapter, Stage::Toolchain]);
    assert_eq!(a.schedule, None);
    let e = build::build(Program::Unbound(&m), Sources::default(), &host(), &BuildOptions::default())
        .unwrap_err();
    assert!(e[0].message.contains("tied to no task"), "{}", e[0].message);
}

#[test]
fn a_compiled_artifact_packed_and_measured_here_is_correct() {
    let g = graph("matmul");
    let a =
        driver::compile(Program::Graph(&g), Sources::default(), &host(), &CompileOptions::default()).unwrap();
    let built = build::package(a, &g, Sources::default(), &host(), &BuildOptions::default()).unwrap();
    assert_eq!(built.summary.schedule.as_deref(), Some("default"));
    let Some(arch) = Arch::host() else { return };
    let runtime = ekb_deploy::Runtime::inspect(&common::static_runtime(arch), arch, "test").unwrap();
    let mut t = transport::connect(&Device::Local, &runtime, &RemoteOptions::default()).unwrap();
    let timing =
        TimingOverrides { warmup: Some(0), min_samples: Some(1), max_samples: Some(2), ..Default::default() };
    let settings = RunSettings { seeds: None, timing, threads: Some(2) };
    let outcome = driver::measure(&built.payload, t.as_mut(), &settings, Mode::Auto).unwrap();
    assert_eq!(outcome.mode, Mode::Serve);
    assert!(outcome.report.all_correct(), "{}", ekb_deploy::report::render(&g.name, &outcome.report));
}
