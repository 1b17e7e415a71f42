//! Payloads of graphs whose parameters take their values from a data file (`file(...)`): the
//! builder carries the values as `param-data` blobs with their checksums, computes the expected
//! outputs with them, reads unloaded data from beside the graph's file, and says exactly what is
//! wrong when a checksum does not match. The imported ONNX models (PyTorch exports of small
//! torchvision siblings, `host/onnx/tests/data`) go the way of `ekb run`: imported, written
//! with their sidecar files, read back, built, and run by the static runtime on this machine (a
//! live `local` session) and under qemu-user (aarch64), correct on every seed.

use ekb_deploy::build::{self, BuildOptions};
use ekb_deploy::driver::{self, CompileOptions, Program, Sources};
use ekb_deploy::runtime::Runtime;
use ekb_deploy::transport::{self, Device, Mode, RemoteOptions, RunSettings};
use ekb_ir::l0::{check, print::print, Graph};
use ekb_ir::tensor::BufData;
use ekb_ir::{SourceFile, TargetProfile};
use ekb_llvm::Arch;
use ekb_wire::payload::{f32s_to_le, i32s_to_le, BlobKind, Payload, Role, Source};
use ekb_wire::protocol::TimingOverrides;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// `w: f32[2,3]` and `k: i32[2]`, as stored in `lin.bin` (w at 0, k at 64).
fn values() -> (Vec<f32>, Vec<i32>) {
    (vec![0.5, -1.0, 2.0, 0.25, 1.5, -0.75], vec![7, -3])
}

/// The text of `lin.ekir`: `y = linear(x, w)`, `z = n + k`, with `w` and `k` from `lin.bin`.
fn lin_text() -> String {
    let (w, k) = values();
    let (wc, kc) = (ekb_wire::crc32(&f32s_to_le(&w)), ekb_wire::crc32(&i32s_to_le(&k)));
    format!(
        "graph lin(x: f32[4,3], n: i32[2]) -> (y: f32[4,2], z: i32[2]) {{
  param w: f32[2,3] = file(\"lin.bin\", offset=0, crc32=\"{wc:08x}\")
  param k: i32[2] = file(\"lin.bin\", offset=64, crc32=\"{kc:08x}\")
  %0 = linear(x, w)
  %1 = add(n, k)
  return %0, %1
}}
"
    )
}

/// Writes `lin.ekir` and `lin.bin` into `dir`; returns the graph's path.
fn write_lin(dir: &Path) -> PathBuf {
    let (w, k) = values();
    let mut bin = f32s_to_le(&w);
    bin.resize(64, 0);
    bin.extend_from_slice(&i32s_to_le(&k));
    std::fs::write(dir.join("lin.bin"), bin).unwrap();
    let path = dir.join("lin.ekir");
    std::fs::write(&path, lin_text()).unwrap();
    path
}

fn host() -> TargetProfile {
    TargetProfile::load("host").unwrap()
}

fn messages(ds: &[ekb_ir::Diagnostic]) -> Vec<String> {
    ds.iter().map(|d| d.to_string()).collect()
}

#[test]
fn a_graph_with_data_parameters_builds_into_a_payload_that_carries_them() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_lin(dir.path());
    let src = SourceFile::read(&path).unwrap();
    let g = check::load(&src).unwrap();
    let sources = Sources { graph: Some(&src), module: None };
    let built = build::build(Program::Graph(&g), sources, &host(), &BuildOptions::default()).unwrap();

    let view = Payload::parse(&built.payload).unwrap();
    let m = view.manifest();
    let (w, k) = values();
    let index = |name: &str| m.buffers.iter().position(|b| b.name == name).unwrap();
    // Each data parameter: its own blob holding the file's bytes, with the declared checksum.
    for (name, bytes, crc) in [
        ("w", f32s_to_le(&w), g.params[0].data.as_ref().unwrap().crc32),
        ("k", i32s_to_le(&k), g.params[1].data.as_ref().unwrap().crc32),
    ] {
        let b = &m.buffers[index(name)];
        assert_eq!(b.role, Role::Param);
        let Some(Source::Data { blob, crc32 }) = b.source else { panic!("{name}: {:?}", b.source) };
        assert_eq!(crc32, crc, "{name}");
        assert_eq!(view.blob(blob).unwrap().kind, BlobKind::ParamData);
        assert_eq!(view.param_data(index(name) as u32), Some(&bytes[..]), "{name}");
    }
    assert!(matches!(m.buffers[index("x")].source, Some(Source::Seeded(_))));
    // The expected outputs are the reference's with the file's values: z = n + k exactly.
    for (s, &seed) in build::DEFAULT_SEEDS.iter().enumerate() {
        let inputs = ekb_ir::l0::inputs::generate(&g, seed).unwrap();
        let BufData::I32(n) = &inputs.iter().find(|(name, _)| name == "n").unwrap().1.data else { panic!() };
        let z: Vec<i32> =
            ekb_wire::payload::le_i32s(view.expected_output(s as u32, index("z") as u32).unwrap()).collect();
        assert_eq!(z, [n[0] + 7, n[1] - 3], "seed {seed}");
        let reference = build::reference_outputs(&g, seed).unwrap();
        let y: Vec<f32> =
            ekb_wire::payload::le_f32s(view.expected_output(s as u32, index("y") as u32).unwrap()).collect();
        assert_eq!(y, reference[0].data.iter().map(|&v| v as f32).collect::<Vec<_>>());
    }
    // The figures count the data once (not per seed), and the summary line says so.
    let s = &built.summary;
    assert_eq!((s.data_params, s.param_data_bytes, s.payload_bytes), (2, 32, built.payload.len() as u64));
    let line = s.to_string();
    assert!(line.contains(", data of 2 parameters 32 B), 3 seeds,"), "{line}");
    let relu = "graph relu(x: f32[4]) -> (y: f32[4]) {\n  %0 = relu(x)\n  return %0\n}\n";
    let seeded = build::build(
        Program::Graph(&check::load(&SourceFile::new("relu.ekir", relu)).unwrap()),
        Sources::default(),
        &host(),
        &BuildOptions::default(),
    )
    .unwrap();
    assert!(!seeded.summary.to_string().contains("data of"), "{}", seeded.summary);
}

#[test]
fn unloaded_data_is_read_from_beside_the_graph_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_lin(dir.path());
    let loaded = check::load(&SourceFile::read(&path).unwrap()).unwrap();
    // The same text under its path, checked without reading the data (as a graph built from a
    // string is): the builder reads `lin.bin` from the graph's directory.
    let text = std::fs::read_to_string(&path).unwrap();
    let unloaded = check::load(&SourceFile::new("inline", text.as_str())).unwrap();
    assert!(unloaded.params[0].data.as_ref().unwrap().values.is_none());
    let src = SourceFile::new(path.display().to_string(), text.as_str());
    let options = BuildOptions { seeds: vec![3], ..BuildOptions::default() };
    let compiled =
        driver::compile(Program::Graph(&loaded), Sources::default(), &host(), &CompileOptions::default())
            .unwrap();
    let object = &compiled.code.as_ref().unwrap().bytes;
    let a =
        build::assemble(&loaded, &compiled.module, object, &host(), &options, Sources::default()).unwrap();
    let sources = Sources { graph: Some(&src), module: None };
    let b = build::assemble(&unloaded, &compiled.module, object, &host(), &options, sources).unwrap();
    assert_eq!(a.payload, b.payload, "the same payload either way");

    // Without a file to start from there is nowhere to look.
    let e = build::assemble(&unloaded, &compiled.module, object, &host(), &options, Sources::default())
        .unwrap_err();
    let text = messages(&e);
    assert_eq!(text.len(), 2, "{text:?}");
    assert!(
        text[0].starts_with(
            "error: parameter `w` takes its values from `lin.bin`, which is not loaded, and the graph was not \
             read from a file, so there is no directory to find `lin.bin` in"
        ),
        "{}",
        text[0]
    );
}

#[test]
fn a_data_file_that_changed_is_a_diagnostic_naming_file_offset_and_checksums() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_lin(dir.path());
    let text = std::fs::read_to_string(&path).unwrap();
    let graph = check::load(&SourceFile::new("inline", text.as_str())).unwrap();
    let options = BuildOptions { seeds: vec![0], ..BuildOptions::default() };
    // k's second element changed in the file after the graph was written.
    let mut bin = std::fs::read(dir.path().join("lin.bin")).unwrap();
    bin[68] ^= 0x01;
    std::fs::write(dir.path().join("lin.bin"), &bin).unwrap();
    let declared = graph.params[1].data.as_ref().unwrap().crc32;
    let found = ekb_wire::crc32(&bin[64..72]);
    let src = SourceFile::new(path.display().to_string(), text.as_str());
    let sources = Sources { graph: Some(&src), module: None };
    let e = build::build(Program::Graph(&graph), sources, &host(), &options).unwrap_err();
    let text = messages(&e);
    assert_eq!(text.len(), 1, "{text:?}");
    let want = format!(
        "error: parameter `k`: checksum mismatch in `{}` (bytes 64..72): expected crc32 {declared:08x}, found \
         {found:08x}\n --> {}:3:9",
        dir.path().join("lin.bin").display(),
        path.display()
    );
    assert!(text[0].starts_with(&want), "{}\nwant {want}", text[0]);

    // Values held in memory that are not the ones the declaration's checksum names.
    let mut g = check::load(&SourceFile::read(&write_lin(dir.path())).unwrap()).unwrap();
    let data = g.params[0].data.as_mut().unwrap();
    let (mut w, _) = values();
    w[5] = 9.0;
    data.values = Some(Arc::new(BufData::F32(w.clone())));
    let (declared, found) = (data.crc32, ekb_wire::crc32(&f32s_to_le(&w)));
    let e = build::build(Program::Graph(&g), Sources::default(), &host(), &options).unwrap_err();
    let text = messages(&e);
    assert!(
        text[0].starts_with(&format!(
            "error: parameter `w`: checksum mismatch in the values of `lin.bin` at offset 0: expected crc32 \
             {declared:08x}, found {found:08x}"
        )),
        "{}",
        text[0]
    );
}

/// The static release runtime for `arch`, built by cargo for the tests.
fn static_runtime(arch: Arch) -> Runtime {
    let triple = ekb_deploy::runtime::musl_triple(arch);
    let path = ekb_e2e::static_runtime(triple, Path::new(env!("CARGO_TARGET_TMPDIR")));
    Runtime::inspect(&path, arch, "test").unwrap()
}

/// Imports `host/onnx/tests/data/NAME.onnx` as `ekb import-onnx` does, writes `NAME.ekir` and
/// `NAME.bin` into `dir`, and reads the graph back from its file (the data through the sidecar
/// file and its checksums).
fn import_model(name: &str, dir: &Path) -> (SourceFile, Graph) {
    let model = Path::new(env!("CARGO_MANIFEST_DIR")).join("../onnx/tests/data").join(format!("{name}.onnx"));
    let opts = ekb_onnx::ImportOptions {
        name: Some(name.into()),
        data_file: format!("{name}.bin"),
        ..Default::default()
    };
    let im =
        ekb_onnx::import(&std::fs::read(model).unwrap(), &opts).unwrap_or_else(|d| panic!("{name}: {d}"));
    std::fs::write(dir.join(format!("{name}.bin")), &im.data).unwrap();
    let path = dir.join(format!("{name}.ekir"));
    std::fs::write(&path, print(&im.graph)).unwrap();
    let src = SourceFile::read(&path).unwrap();
    let g = check::load(&src).unwrap_or_else(|ds| panic!("{}", messages(&ds).join("\n")));
    (src, g)
}

/// Builds `g` for `profile` and runs it on `device` with `runtime` as `ekb run` does
/// (`driver::measure`).
fn run_on(g: &Graph, src: &SourceFile, profile: &str, device: Device, runtime: &Runtime) {
    let target = TargetProfile::load(profile).unwrap();
    let sources = Sources { graph: Some(src), module: None };
    let built = build::build(Program::Graph(g), sources, &target, &BuildOptions::default())
        .unwrap_or_else(|ds| panic!("{}", messages(&ds).join("\n")));
    assert_eq!(built.summary.data_params, g.params.len());
    let data: u64 = g.params.iter().map(|p| p.ty.size_bytes() as u64).sum();
    assert_eq!(built.summary.param_data_bytes, data);
    assert!(built.summary.payload_bytes > data + built.summary.code_bytes);
    let mut t = transport::connect(&device, runtime, &RemoteOptions::default()).unwrap();
    let timing = TimingOverrides {
        warmup: Some(0),
        min_samples: Some(1),
        max_samples: Some(2),
        ..TimingOverrides::default()
    };
    let settings = RunSettings { seeds: None, timing, threads: Some(2) };
    let outcome = driver::measure(&built.payload, t.as_mut(), &settings, Mode::Auto).unwrap();
    assert_eq!(outcome.mode, Mode::Serve);
    let report = &outcome.report;
    let rendered = ekb_deploy::report::render(&g.name, report);
    assert!(report.all_correct(), "{}", rendered);
    let ekb_deploy::report::Entry::Run(r) = &report.entries[0] else { panic!("{rendered}") };
    assert_eq!(r.seeds.len(), 3);
    let line =
        format!("{} param(s) take their values from the payload's data ({data} bytes)", g.params.len());
    assert!(r.log.iter().any(|l| l.message.starts_with(&line)), "{rendered}");
}

#[cfg(target_arch = "x86_64")]
#[test]
fn imported_pytorch_models_run_correctly_on_the_runtime_here_and_under_qemu() {
    let dir = tempfile::tempdir().unwrap();
    let (native, arm) = (static_runtime(Arch::X86_64), static_runtime(Arch::Aarch64));
    for name in ["squeezenet1_1_half", "mobilenet_v2_w025", "resnet18_w16"] {
        let (src, g) = import_model(name, dir.path());
        assert!(g.params.len() > 20 && g.params.iter().all(|p| p.data.is_some()), "{name}");
        run_on(&g, &src, "host", Device::Local, &native);
        run_on(&g, &src, "aarch64-qemu", Device::Qemu, &arm);
    }
}
