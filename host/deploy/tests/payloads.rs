//! Payload building for every graph of the operator corpus, for this machine (`host`) and for
//! `aarch64-qemu`: the payload parses back, its expected outputs are the reference
//! interpreter's outputs rounded to the output dtype, and the inputs a board regenerates from
//! the manifest alone (task name, buffer names, initialisers, seeds) are bit-identical to the
//! inputs the reference ran on. Plus the build errors a user meets. (Parameters with data:
//! `param_data.rs`.)

use ekb_deploy::build::{self, BuildOptions};
use ekb_deploy::driver::{Program, Sources};
use ekb_deploy::references::References;
use ekb_e2e::{corpus_files, load_graph};
use ekb_ir::l0::Graph;
use ekb_ir::tensor::{BufData, Buffer};
use ekb_ir::{SourceFile, TargetProfile};
use ekb_llvm::Arch;
use ekb_lower::Schedule;
use ekb_wire::payload::{
    le_f16s, le_f32s, le_i32s, le_i8s, Access, BlobKind, DType, Launch, Manifest, MemScope, Payload,
    PayloadView, Role, Source,
};
use ekb_wire::seeded::{fill_f16, fill_f32, fill_i32, fill_i8, tensor_key};

/// The inputs and parameters a board fills for seed index `s`, from the payload only: the
/// seeded ones generated from the manifest, the others copied from their data blobs.
fn board_inputs(view: &PayloadView<'_>, s: usize) -> Vec<(String, Vec<u32>)> {
    let m = view.manifest();
    m.buffers
        .iter()
        .enumerate()
        .filter(|(_, b)| b.role.is_generated())
        .map(|(i, b)| {
            let Some(&init) = b.seeded() else {
                let data = view.param_data(i as u32).expect("a data parameter's blob");
                return (b.name.clone(), le_i32s(data).map(|x| x as u32).collect());
            };
            let key = tensor_key(&m.task, m.seeds[s], &b.name);
            let shape: Vec<usize> = b.shape.iter().map(|&d| d as usize).collect();
            let n = b.numel().unwrap() as usize;
            let bits = match b.dtype {
                DType::F32 => {
                    let mut v = vec![0f32; n];
                    fill_f32(&init, &shape, key, &mut v).unwrap();
                    v.into_iter().map(f32::to_bits).collect()
                }
                DType::I32 => {
                    let mut v = vec![0i32; n];
                    fill_i32(&init, key, &mut v).unwrap();
                    v.into_iter().map(|x| x as u32).collect()
                }
                DType::I8 => {
                    let mut v = vec![0i8; n];
                    fill_i8(&init, key, &mut v).unwrap();
                    v.into_iter().map(|x| u32::from(x as u8)).collect()
                }
                DType::F16 => {
                    let mut v = vec![0u16; n];
                    fill_f16(&init, &shape, key, &mut v).unwrap();
                    v.into_iter().map(u32::from).collect()
                }
            };
            (b.name.clone(), bits)
        })
        .collect()
}

fn bits(b: &Buffer) -> Vec<u32> {
    match &b.data {
        BufData::F32(v) => v.iter().map(|x| x.to_bits()).collect(),
        BufData::I32(v) => v.iter().map(|&x| x as u32).collect(),
        BufData::I8(v) => v.iter().map(|&x| u32::from(x as u8)).collect(),
        BufData::F16(v) => v.iter().map(|&x| u32::from(x)).collect(),
    }
}

/// Checks one built payload against the graph it came from.
fn check_payload(g: &Graph, target: &TargetProfile, seeds: &[u64], bytes: &[u8]) {
    let what = format!("{} for {}", g.name, target.name);
    let view = Payload::parse(bytes).unwrap_or_else(|e| panic!("{what}: {e}"));
    let m = view.manifest();
    assert_eq!(m.task, g.name);
    assert_eq!(m.target, target.name);
    assert_eq!(m.seeds, seeds);
    assert_eq!((m.tolerance.atol, m.tolerance.rtol), (1e-4, 1e-4));
    assert_eq!(m.memory.stack_limit_bytes, target.cpu.stack_bytes);
    assert_eq!(m.memory.memory_limit_bytes, target.cpu.memory_bytes);
    assert!(m.memory.peak_bytes > 0, "{what}");
    assert_eq!(m.producer, format!("ekb {}", env!("CARGO_PKG_VERSION")));

    // One ELF object for the profile's architecture, and every kernel's entry named for it.
    let code = view.kernel_code(0).unwrap();
    assert_eq!(code.kind, BlobKind::ElfObject);
    let machine = u16::from_le_bytes([code.data[18], code.data[19]]);
    let want = match Arch::of_triple(&target.cpu.triple).unwrap() {
        Arch::X86_64 => 62,
        Arch::Aarch64 => 183,
    };
    assert_eq!(machine, want, "{what}: ELF machine");
    for k in &m.kernels {
        assert_eq!(k.symbol, format!("ekb_k_{}", k.name));
        assert_eq!(k.launch, Launch::Cpu);
        assert!(k.allocs.iter().all(|a| a.scope == MemScope::Local && a.bytes > 0));
        assert!(
            k.params.iter().any(|p| p.access != Access::In),
            "{what}: kernel `{}` writes nothing",
            k.name
        );
    }

    // Roles: graph inputs are inputs, parameters params, graph outputs outputs, in the graph's
    // own types, each seeded one with the graph's initialiser, each data parameter with the
    // checksum of its `file(...)`.
    for d in &g.inputs {
        if let Some(b) = m.buffers.iter().find(|b| b.name == d.name) {
            assert_eq!((b.role, b.source), (Role::Input, Some(Source::Seeded(d.init))), "{what}: {}", d.name);
        }
    }
    for d in &g.params {
        if let Some(b) = m.buffers.iter().find(|b| b.name == d.name) {
            assert_eq!(b.role, Role::Param, "{what}: {}", d.name);
            match (&d.data, b.source) {
                (None, source) => assert_eq!(source, Some(Source::Seeded(d.init)), "{what}: {}", d.name),
                (Some(data), Some(Source::Data { crc32, .. })) => {
                    assert_eq!(crc32, data.crc32, "{what}: {}", d.name)
                }
                (Some(_), source) => panic!("{what}: {}: {source:?}", d.name),
            }
        }
    }
    let outputs: Vec<_> = m.buffers.iter().enumerate().filter(|(_, b)| b.role == Role::Output).collect();
    assert_eq!(outputs.len(), g.outputs.len(), "{what}: every graph output is a payload output");

    for (s, &seed) in seeds.iter().enumerate() {
        // The board's inputs are the reference's inputs, bit for bit.
        let host = ekb_ir::l0::inputs::generate(g, seed).unwrap();
        for (name, board) in board_inputs(&view, s) {
            let (_, h) = host.iter().find(|(n, _)| *n == name).unwrap();
            assert!(bits(h) == board, "{what}: seed {seed}: input `{name}` differs from generate()");
        }
        // Expected outputs: the reference rounded to the output's dtype.
        let reference = build::reference_outputs(g, seed).unwrap();
        for &(b, decl) in &outputs {
            let o = g.outputs.iter().position(|o| o.name == decl.name).unwrap();
            let blob = view.expected_output(s as u32, b as u32).unwrap();
            let r = &reference[o].data;
            match decl.dtype {
                DType::F32 => {
                    let got: Vec<u32> = le_f32s(blob).map(f32::to_bits).collect();
                    let want: Vec<u32> = r.iter().map(|&v| (v as f32).to_bits()).collect();
                    assert!(
                        got == want,
                        "{what}: seed {seed}: expected `{}` is not the rounded reference",
                        decl.name
                    );
                }
                DType::I32 => {
                    let got: Vec<i32> = le_i32s(blob).collect();
                    let want: Vec<i32> = r.iter().map(|&v| v as i32).collect();
                    assert_eq!(got, want, "{what}: seed {seed}: expected `{}`", decl.name);
                }
                DType::I8 => {
                    // One byte per element.
                    assert_eq!(blob.len(), r.len(), "{what}: seed {seed}: `{}` has one byte each", decl.name);
                    let got: Vec<i8> = le_i8s(blob).collect();
                    let want: Vec<i8> = r.iter().map(|&v| v as i8).collect();
                    assert_eq!(got, want, "{what}: seed {seed}: expected `{}`", decl.name);
                }
                DType::F16 => {
                    // Two bytes per element; the reference holds exact f16 values.
                    let got: Vec<u16> = le_f16s(blob).collect();
                    let want: Vec<u16> = r.iter().map(|&v| ekb_wire::f16::from_f32(v as f32)).collect();
                    assert_eq!(got, want, "{what}: seed {seed}: expected `{}`", decl.name);
                    let exact = |&v: &f64| {
                        v.is_nan() || f64::from(ekb_wire::f16::to_f32(ekb_wire::f16::from_f32(v as f32))) == v
                    };
                    assert!(r.iter().all(exact), "{what}: the reference of `{}` is not f16", decl.name);
                }
            }
        }
    }
}

fn corpus_for(profile: &str) {
    let target = TargetProfile::load(profile).unwrap();
    let options = BuildOptions::default();
    let files = corpus_files();
    assert!(files.len() > 50, "the corpus has {} graphs", files.len());
    for path in files {
        let g = load_graph(&path);
        let built =
            build::build(Program::Graph(&g), Sources::default(), &target, &options).unwrap_or_else(|d| {
                panic!("{}: {}", g.name, d.iter().map(|d| d.to_string()).collect::<String>())
            });
        assert_eq!(built.summary.payload_bytes, built.payload.len() as u64);
        assert_eq!(built.summary.kernels, built.module.kernels.len());
        check_payload(&g, &target, &options.seeds, &built.payload);
    }
}

#[test]
fn every_corpus_graph_builds_for_this_machine() {
    corpus_for("host");
}

#[test]
fn every_corpus_graph_builds_for_aarch64_qemu() {
    corpus_for("aarch64-qemu");
}

fn graph(text: &str) -> (SourceFile, Graph) {
    let src = SourceFile::new("task.ekir", text);
    let g = ekb_ir::l0::check::load(&src).unwrap_or_else(|d| panic!("{d:?}"));
    (src, g)
}

const TASK: &str = "graph scale(x: f32[4]) -> (y: f32[4]) {\n  param w: f32[4] = const(2.0)\n  %0 = mul(x, w)\n  return %0\n}\n";

fn module_errors(module_text: &str) -> Vec<String> {
    let (gsrc, g) = graph(TASK);
    let msrc = SourceFile::new("cand.ekir", module_text);
    let m = ekb_ir::l1::parse::parse(&msrc).unwrap();
    let host = TargetProfile::load("host").unwrap();
    let sources = Sources { graph: Some(&gsrc), module: Some(&msrc) };
    let e = build::build(Program::Module { module: &m, graph: &g }, sources, &host, &BuildOptions::default())
        .unwrap_err();
    e.iter().map(|d| d.to_string()).collect()
}

#[test]
fn a_module_builds_against_its_graph_with_custom_seeds() {
    let (_, g) = graph(TASK);
    let text = "module scale {\n  input x: f32[4]\n  input w: f32[4]\n  output y: f32[4]\n\n  \
                kernel k(x: f32[4] in, w: f32[4] in, y: f32[4] out) {\n    for i in 0..4 {\n      \
                y[i] = x[i] * w[i]\n    }\n  }\n\n  run k(x, w, y)\n}\n";
    let m = ekb_ir::l1::parse::parse(&SourceFile::new("cand.ekir", text)).unwrap();
    let host = TargetProfile::load("host").unwrap();
    let options = BuildOptions { seeds: vec![5, 9], ..BuildOptions::default() };
    let built =
        build::build(Program::Module { module: &m, graph: &g }, Sources::default(), &host, &options).unwrap();
    assert_eq!(built.summary.schedule, None);
    assert_eq!(built.summary.seeds, vec![5, 9]);
    // x: 16 bytes, w: 16 bytes, y: 16 bytes.
    assert_eq!(built.summary.peak_bytes, 48);
    let view = Payload::parse(&built.payload).unwrap();
    let roles: Vec<(&str, Role)> =
        view.manifest().buffers.iter().map(|b| (b.name.as_str(), b.role)).collect();
    assert_eq!(roles, vec![("x", Role::Input), ("w", Role::Param), ("y", Role::Output)]);
    check_payload(&g, &host, &[5, 9], &built.payload);
    // y = x * 2 exactly: the expected output is twice the generated input.
    let x = board_inputs(&view, 1).remove(0).1;
    let y: Vec<f32> = le_f32s(view.expected_output(1, 2).unwrap()).collect();
    let twice: Vec<f32> = x.iter().map(|&b| f32::from_bits(b) * 2.0).collect();
    assert_eq!(y, twice);
}

#[test]
fn modules_that_do_not_match_their_graph_are_located_errors() {
    let errors = module_errors(
        "module scale {\n  input x: f32[4]\n  input v: f32[4]\n  output y: f32[2]\n\n  \
         kernel k(x: f32[4] in, v: f32[4] in, y: f32[2] out) {\n    for i in 0..2 {\n      \
         y[i] = x[i] * v[i]\n    }\n  }\n\n  run k(x, v, y)\n}\n",
    );
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert!(
        errors[0].starts_with(
            "error: input `v` is not an input or parameter of graph `scale`\n --> cand.ekir:3:3"
        ),
        "{}",
        errors[0]
    );
    assert!(errors[0].contains("expected: one of: `x`, `w`"), "{}", errors[0]);
    assert!(
        errors[1].starts_with(
            "error: buffer `y` is f32[2], but the graph's output `y` is f32[4]\n --> cand.ekir:4:3"
        ),
        "{}",
        errors[1]
    );
    assert!(errors[1].contains("hint: declare `y: f32[4]`"), "{}", errors[1]);

    let errors = module_errors(
        "module scale {\n  input x: f32[4]\n  output z: f32[4]\n\n  \
         kernel k(x: f32[4] in, z: f32[4] out) {\n    for i in 0..4 {\n      z[i] = x[i]\n    }\n  }\n\n  \
         run k(x, z)\n}\n",
    );
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert!(errors[0].starts_with("error: output `z` is not an output of graph `scale`"), "{}", errors[0]);
    assert!(
        errors[1].starts_with("error: module `scale` does not produce output `y` of graph `scale`"),
        "{}",
        errors[1]
    );
}

#[test]
fn verifier_errors_stop_the_build_before_compiling() {
    let errors = module_errors(
        "module scale {\n  input x: f32[4]\n  input w: f32[4]\n  output y: f32[4]\n\n  \
         kernel k(x: f32[4] in, w: f32[4] in, y: f32[4] out) {\n    for i in 0..5 {\n      \
         y[i] = x[i] * w[i]\n    }\n  }\n\n  run k(x, w, y)\n}\n",
    );
    assert_eq!(errors.len(), 3, "{errors:?}");
    for (e, (buf, col)) in errors.iter().zip([("y", 9), ("x", 16), ("w", 23)]) {
        let want = format!(
            "error: index `i` of `{buf}` (dim 0, size 4) ranges over [0, 4] in kernel k\n --> cand.ekir:8:{col}\n"
        );
        assert!(e.starts_with(&want), "{e}");
    }
}

#[test]
fn no_seeds_is_an_error() {
    let (_, g) = graph(TASK);
    let host = TargetProfile::load("host").unwrap();
    let options = BuildOptions { seeds: vec![], schedule: Schedule::Naive, ..BuildOptions::default() };
    let e = build::build(Program::Graph(&g), Sources::default(), &host, &options).unwrap_err();
    assert_eq!(e[0].message, "a payload needs at least one seed");
}

#[test]
fn a_parameter_with_values_in_memory_travels_in_the_payload() {
    // A graph built in memory: its data parameter's values are loaded already, so no file is
    // read; the payload carries them and the expected output is computed with them.
    let (_, mut g) = graph(TASK);
    let w = &mut g.params[0];
    *w = ekb_ir::l0::TensorDecl::with_data(
        "w",
        w.ty.clone(),
        ekb_ir::l0::ParamData::with_values("w.bin", 0, BufData::F32(vec![2.0, -1.0, 0.5, 3.0])),
        w.span,
    );
    let host = TargetProfile::load("host").unwrap();
    let built =
        build::build(Program::Graph(&g), Sources::default(), &host, &BuildOptions::default()).unwrap();
    check_payload(&g, &host, &build::DEFAULT_SEEDS, &built.payload);
    assert_eq!((built.summary.data_params, built.summary.param_data_bytes), (1, 16));
    let view = Payload::parse(&built.payload).unwrap();
    let w = view.manifest().buffers.iter().position(|b| b.name == "w").unwrap() as u32;
    assert_eq!(le_f32s(view.param_data(w).unwrap()).collect::<Vec<_>>(), [2.0, -1.0, 0.5, 3.0]);
    // y = x * w, elementwise and exact.
    let y = view.manifest().buffers.iter().position(|b| b.name == "y").unwrap() as u32;
    for s in 0..3 {
        let x = board_inputs(&view, s).remove(0).1;
        let want: Vec<f32> =
            x.iter().zip([2.0, -1.0, 0.5, 3.0]).map(|(&b, w)| f32::from_bits(b) * w).collect();
        assert_eq!(le_f32s(view.expected_output(s as u32, y).unwrap()).collect::<Vec<_>>(), want);
    }
}

#[test]
fn reference_outputs_given_by_the_caller_are_the_ones_computed_here() {
    let (_, g) = graph(TASK);
    let host = TargetProfile::load("host").unwrap();
    let computed =
        build::build(Program::Graph(&g), Sources::default(), &host, &BuildOptions::default()).unwrap();
    let refs: Vec<_> =
        build::DEFAULT_SEEDS.iter().map(|&s| build::reference_outputs(&g, s).unwrap()).collect();
    let given = BuildOptions { references: Some(References::given(refs.clone())), ..BuildOptions::default() };
    let reused = build::build(Program::Graph(&g), Sources::default(), &host, &given).unwrap();
    assert_eq!(reused.payload, computed.payload);
    // One set per seed, or the caller made a mistake.
    let short =
        BuildOptions { references: Some(References::given(refs[..1].to_vec())), ..BuildOptions::default() };
    let e = build::build(Program::Graph(&g), Sources::default(), &host, &short).unwrap_err();
    assert_eq!(e[0].message, "1 sets of reference outputs for 3 seeds");
}

#[test]
fn a_repeated_payload_takes_two_executions_a_sample_and_changes_nothing_else() {
    let (_, g) = graph(TASK);
    let host = TargetProfile::load("host").unwrap();
    let built =
        build::build(Program::Graph(&g), Sources::default(), &host, &BuildOptions::default()).unwrap();
    let twice = build::repeat_executions(&built.payload, 2).unwrap();
    let (a, b) = (Payload::parse(&built.payload).unwrap(), Payload::parse(&twice).unwrap());
    assert_eq!((a.manifest().repeat, b.manifest().repeat), (1, 2));
    // Everything else is the same: plan, code, buffers, seeds, expected outputs.
    assert_eq!(&Manifest { repeat: 1, ..b.manifest().clone() }, a.manifest());
    assert_eq!(a.blob_count(), b.blob_count());
    for i in 0..a.blob_count() as u32 {
        assert_eq!(a.blob(i), b.blob(i));
    }
    check_payload(&g, &host, &build::DEFAULT_SEEDS, &twice);
}
