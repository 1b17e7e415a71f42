//! The L2 form (`ekb_deploy::l2`, `docs/l2.md`) through the compile driver without a device:
//! the folder written for each backend reads back; a CUDA kernel's source replaces the emitted
//! function under a `#line` naming its file (the CUDA text is checked here; a GPU runs it
//! elsewhere); a CPU source that defines another kernel's entry, or a source in the wrong
//! language, or for a kernel the module lacks, is refused with its file named.

use ekb_deploy::driver::{self, BackendChoice, CompileOptions, Program, Sources, Stage};
use ekb_deploy::l2;
use ekb_ir::l0::Graph;
use ekb_ir::l1::Module;
use ekb_ir::{SourceFile, TargetProfile};
use ekb_wire::payload::Backend;

const GRAPH: &str =
    "graph t_relu(x: f32[64,64]) -> (y: f32[64,64]) {\n  %0 = relu(x)\n  %1 = exp(%0)\n  return %1\n}\n";

fn graph() -> Graph {
    ekb_ir::l0::check::load(&SourceFile::new("t_relu.ekir", GRAPH)).unwrap()
}

/// The task's graph lowered for `target` on `choice`, with the graph passes off (two kernels).
fn lowered(g: &Graph, target: &TargetProfile, choice: BackendChoice) -> Module {
    let options = CompileOptions {
        backend: choice,
        until: Stage::Verify,
        passes: ekb_passes::Selection::parse("none").unwrap(),
        ..CompileOptions::default()
    };
    driver::compile(Program::Graph(g), Sources::default(), target, &options).unwrap().module
}

fn compile(
    g: &Graph,
    candidate: &l2::L2,
    target: &TargetProfile,
    choice: BackendChoice,
) -> Result<driver::Artifact, driver::Failure> {
    let options = CompileOptions {
        backend: choice,
        kernel_sources: candidate.kernels.clone(),
        ..CompileOptions::default()
    };
    let sources = Sources { graph: None, module: Some(&candidate.module_source) };
    driver::compile(Program::Module { module: &candidate.module, graph: g }, sources, target, &options)
}

fn rendered(f: &driver::Failure) -> String {
    f.diagnostics.iter().map(|d| d.to_string()).collect::<Vec<_>>().join("\n")
}

#[test]
fn a_cuda_kernel_source_replaces_the_emitted_function_under_its_file_name() {
    let g = graph();
    let h200 = TargetProfile::load("h200").unwrap();
    let module = lowered(&g, &h200, BackendChoice::Gpu);
    assert_eq!(module.kernels.len(), 2, "{}", ekb_ir::l1::print::print(&module));
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("cand.l2");
    let files = l2::write(&dir, &module, Backend::Cuda, &h200).unwrap();
    assert_eq!(files.len(), 3);
    let first = &module.kernels[0].name;
    let path = dir.join(format!("kernels/{first}.cu"));
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("extern \"C\" __global__ void __launch_bounds__("), "{text}");
    // Keep one kernel's source, edited; the other is emitted from its L1 body.
    std::fs::write(&path, text.replace("0.0f)", "0.0f) /* edited */")).unwrap();
    let second = &module.kernels[1].name;
    std::fs::remove_file(dir.join(format!("kernels/{second}.cu"))).unwrap();
    let candidate = l2::read(&dir, "cand.l2").unwrap();
    assert_eq!(candidate.kernels.len(), 1);
    let artifact = compile(&g, &candidate, &h200, BackendChoice::Gpu).unwrap();
    let cuda = artifact.source.unwrap();
    let line = format!("#line 1 \"cand.l2/kernels/{first}.cu\"\n");
    assert!(cuda.contains(&line) && cuda.contains("/* edited */"), "{cuda}");
    assert_eq!(cuda.matches(&format!("void __launch_bounds__(256) {first}(")).count(), 1, "{cuda}");
    assert!(cuda.contains(&format!(") {second}(")), "{cuda}");
    // The whole preamble is in scope for hand-written code.
    assert!(cuda.contains("ekb_fmax") && cuda.contains("#define INFINITY"), "{cuda}");

    // OpenCL C in a CUDA candidate: refused at the adapter, naming the file.
    std::fs::rename(&path, dir.join(format!("kernels/{first}.cl"))).unwrap();
    let candidate = l2::read(&dir, "cand.l2").unwrap();
    let f = compile(&g, &candidate, &h200, BackendChoice::Gpu).unwrap_err();
    assert_eq!(f.stage, Stage::Adapter);
    let e = rendered(&f);
    assert!(e.contains(&format!("cand.l2/kernels/{first}.cl")) && e.contains("`.cu`"), "{e}");
}

#[test]
fn cpu_kernel_sources_must_be_of_a_kernel_and_define_exactly_its_entry() {
    let g = graph();
    let host = TargetProfile::load("host").unwrap();
    let module = lowered(&g, &host, BackendChoice::Cpu);
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("cand.l2");
    l2::write(&dir, &module, Backend::CpuLlvm, &host).unwrap();
    let (a, b) = (&module.kernels[0].name, &module.kernels[1].name);
    // Unchanged, both sources compile and link into one object with both entries.
    let candidate = l2::read(&dir, "cand.l2").unwrap();
    let code = compile(&g, &candidate, &host, BackendChoice::Cpu).unwrap().code.unwrap();
    let info = ekb_llvm::check_object(&code.bytes, &host.cpu.triple).unwrap();
    assert_eq!(info.kernels.len(), 2, "{info:?}");

    // Kernel a's file holding kernel b's entry.
    let b_text = std::fs::read_to_string(dir.join(format!("kernels/{b}.ll"))).unwrap();
    std::fs::write(dir.join(format!("kernels/{a}.ll")), &b_text).unwrap();
    let candidate = l2::read(&dir, "cand.l2").unwrap();
    let f = compile(&g, &candidate, &host, BackendChoice::Cpu).unwrap_err();
    assert_eq!(f.stage, Stage::Toolchain);
    let e = rendered(&f);
    assert!(
        e.contains(&format!("`cand.l2/kernels/{a}.ll` must define exactly the entry of kernel `{a}`")),
        "{e}"
    );

    // A source for a kernel the module does not have.
    std::fs::write(dir.join("kernels/k9_nothing.c"), "").unwrap();
    let e = l2::read(&dir, "cand.l2").unwrap_err();
    assert!(
        e[0].to_string().contains("`cand.l2/kernels/k9_nothing.c` is the source of kernel `k9_nothing`"),
        "{e:?}"
    );
}
