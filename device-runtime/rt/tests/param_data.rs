//! Parameters whose values travel in the payload: a graph whose weights come from a data file
//! (`file(...)`), packed by the host's assembler, loaded by the runtime and run in a kernel
//! process on every seed. The runtime computes with the payload's values (change one and every
//! seed fails), the same values for every seed, and a kernel that writes such a parameter is
//! caught like one that writes an input.

mod common;

use ekb_rt::run::{run_payload, RunOptions};
use ekb_rt::store::LoadedPayload;
use ekb_wire::payload::{f32s_to_le, i32s_to_le, le_f32s, Payload, PayloadBuilder, Role, Source};
use ekb_wire::protocol::{FailureKind, MemoryFault, PayloadId, RunReport, TimingOverrides};

fn quick() -> RunOptions {
    RunOptions {
        threads: 2,
        timing: TimingOverrides {
            warmup: Some(0),
            min_samples: Some(1),
            max_samples: Some(2),
            ..TimingOverrides::default()
        },
        ..RunOptions::default()
    }
}

fn run(bytes: &[u8]) -> RunReport {
    let p = std::sync::Arc::new(LoadedPayload::from_bytes(PayloadId(0), bytes).unwrap());
    run_payload(&p, &[(p.mapping().addr(), p.mapping().len())], &quick()).unwrap()
}

/// The payload of `lin.ekir` (three data parameters) for this machine.
fn lin_payload(tag: &str) -> Vec<u8> {
    let (_, path) = common::data_payload("host", &common::work_dir(tag));
    std::fs::read(path).unwrap()
}

#[test]
fn a_payload_with_parameter_data_runs_correctly_on_every_seed() {
    let bytes = lin_payload("data-correct");
    let view = Payload::parse(&bytes).unwrap();
    let m = view.manifest();
    // The three parameters carry the file's values; the inputs are seeded.
    let (w, b, k) = common::data_values();
    let want = [("w", f32s_to_le(&w)), ("b", f32s_to_le(&b)), ("k", i32s_to_le(&k))];
    for (name, data) in &want {
        let i = m.buffers.iter().position(|x| x.name == *name).unwrap();
        assert_eq!(m.buffers[i].role, Role::Param);
        assert_eq!(view.param_data(i as u32), Some(&data[..]), "{name}");
    }
    for name in ["x", "n"] {
        let b = m.buffers.iter().find(|b| b.name == name).unwrap();
        assert!(matches!(b.source, Some(Source::Seeded(_))), "{name}: {:?}", b.source);
    }

    let r = run(&bytes);
    assert!(r.is_correct(), "{:?}\n{:?}", r.failure, r.log);
    assert_eq!(r.seeds.iter().map(|s| s.seed).collect::<Vec<_>>(), ekb_e2e::SEEDS);
    assert!(r.seeds.iter().all(|s| s.outputs.len() == 2 && s.ok()));
    let line = "3 param(s) take their values from the payload's data (160 bytes), the same for every seed";
    assert!(r.log.iter().any(|l| l.message == line), "{:?}", r.log);
}

#[test]
fn the_runtime_computes_with_the_payload_values() {
    // One weight changed in the payload (its checksum updated, so the payload is valid): the
    // kernels now compute another function, and every seed's `y` is wrong while `z`, which
    // does not use `w`, stays right.
    let bytes = lin_payload("data-changed");
    let view = Payload::parse(&bytes).unwrap();
    let mut manifest = view.manifest().clone();
    let w = manifest.buffers.iter().position(|b| b.name == "w").unwrap();
    let Some(Source::Data { blob, .. }) = manifest.buffers[w].source else { panic!("w is data") };
    let mut values: Vec<f32> = le_f32s(view.param_data(w as u32).unwrap()).collect();
    values[0] += 10.0;
    let data = f32s_to_le(&values);
    manifest.buffers[w].source = Some(Source::Data { blob, crc32: ekb_wire::crc32(&data) });
    let mut pb = PayloadBuilder::new();
    for i in 0..view.blob_count() as u32 {
        let b = view.blob(i).unwrap();
        pb.add_blob(b.kind, if i == blob { data.clone() } else { b.data.to_vec() });
    }
    let r = run(&pb.finish(&manifest).unwrap());
    assert_eq!(r.failure.as_ref().map(|f| &f.kind), Some(&FailureKind::Correctness), "{:?}", r.failure);
    for s in &r.seeds {
        let (y, z) = (&s.outputs[0], &s.outputs[1]);
        assert_eq!((y.buffer.as_str(), z.buffer.as_str()), ("y", "z"));
        assert!(!y.ok && z.ok, "seed {}: {s:?}", s.seed);
    }
}

/// A payload of one hand-written kernel `ekb_k_<task>(x: f32[4] in, w: f32[4] in, y: f32[4] out)`
/// with `w` stored in the payload and the expected `y = x + w` (two seeds).
fn add_payload(task: &str, body: &str) -> Vec<u8> {
    use ekb_wire::payload::{BlobKind, BufferDecl, DType, ExpectedOutput};
    let ir = format!(
        r#"
define void @ekb_k_{task}(ptr %args) nounwind {{
entry:
  %x = load ptr, ptr %args
  %wslot = getelementptr ptr, ptr %args, i64 1
  %w = load ptr, ptr %wslot
  %yslot = getelementptr ptr, ptr %args, i64 2
  %y = load ptr, ptr %yslot
{body}
}}
"#
    );
    let weights = [0.5f32, -1.0, 2.0, 0.25];
    let init = ekb_wire::Init::Uniform { lo: -1.0, hi: 1.0 };
    let mut pb = PayloadBuilder::new();
    let code = pb.add_blob(BlobKind::ElfObject, common::compile_ir(&ir));
    let data = pb.add_blob(BlobKind::ParamData, f32s_to_le(&weights));
    let seeds = [5u64, 6];
    let mut expected = Vec::new();
    for (s, &seed) in seeds.iter().enumerate() {
        let mut x = [0f32; 4];
        ekb_wire::seeded::fill_f32(&init, &[4], ekb_wire::seeded::tensor_key(task, seed, "x"), &mut x)
            .unwrap();
        let y: Vec<f32> = x.iter().zip(weights).map(|(a, b)| a + b).collect();
        let blob = pb.add_blob(BlobKind::ExpectedOutput, f32s_to_le(&y));
        expected.push(ExpectedOutput { seed: s as u32, buffer: 2, blob });
    }
    let buffer = |name: &str, role, source| BufferDecl {
        name: name.into(),
        dtype: DType::F32,
        shape: vec![4],
        role,
        source,
    };
    let buffers = vec![
        buffer("x", Role::Input, Some(Source::Seeded(init))),
        buffer(
            "w",
            Role::Param,
            Some(Source::Data { blob: data, crc32: ekb_wire::crc32(&f32s_to_le(&weights)) }),
        ),
        buffer("y", Role::Output, None),
    ];
    let manifest = common::one_kernel_manifest(task, code, buffers, &seeds, expected, 48);
    pb.finish(&manifest).unwrap()
}

/// `y[i] = x[i] + w[i]` for i < 4, then `extra` before returning.
fn add_body(extra: &str) -> String {
    let mut body = String::new();
    for i in 0..4 {
        body += &format!(
            "  %xp{i} = getelementptr float, ptr %x, i64 {i}\n  %xv{i} = load float, ptr %xp{i}\n  \
             %wp{i} = getelementptr float, ptr %w, i64 {i}\n  %wv{i} = load float, ptr %wp{i}\n  \
             %s{i} = fadd float %xv{i}, %wv{i}\n  %yp{i} = getelementptr float, ptr %y, i64 {i}\n  \
             store float %s{i}, ptr %yp{i}\n"
        );
    }
    body + extra + "  ret void"
}

#[test]
fn data_parameters_are_read_only_for_kernels() {
    // The same kernel is correct on both seeds: `w` is the payload's on each.
    let r = run(&add_payload("add", &add_body("")));
    assert!(r.is_correct(), "{:?}\n{:?}", r.failure, r.log);
    assert_eq!(r.seeds.len(), 2);

    // A kernel writing the parameter faults on its read-only pages.
    let r = run(&add_payload("scribble", &add_body("  store float 0.0, ptr %w\n")));
    let f = r.failure.unwrap();
    assert_eq!(f.kind, FailureKind::Memory(MemoryFault::InputWrite { buffer: "w".into() }), "{}", f.evidence);
    assert!(f.evidence.contains("write to byte 0 of read-only param `w`"), "{}", f.evidence);
}

/// A payload of one hand-written kernel `ekb_k_<task>(w: T[n] in, y: T[n] out)` that copies its
/// data parameter to its output byte by byte, with `w`'s values `data` in the payload and the
/// same bytes expected in `y`.
fn copy_payload(task: &str, dtype: ekb_wire::payload::DType, data: &[u8]) -> Vec<u8> {
    use ekb_wire::payload::{BlobKind, BufferDecl, ExpectedOutput};
    let n = data.len() as u64 / dtype.size_bytes();
    let mut body = String::new();
    for i in 0..data.len() {
        body += &format!(
            "  %wp{i} = getelementptr i8, ptr %w, i64 {i}\n  %v{i} = load i8, ptr %wp{i}\n  \
             %yp{i} = getelementptr i8, ptr %y, i64 {i}\n  store i8 %v{i}, ptr %yp{i}\n"
        );
    }
    let ir = format!(
        "define void @ekb_k_{task}(ptr %args) nounwind {{\nentry:\n  %w = load ptr, ptr %args\n  \
         %yslot = getelementptr ptr, ptr %args, i64 1\n  %y = load ptr, ptr %yslot\n{body}  ret void\n}}\n"
    );
    let mut pb = PayloadBuilder::new();
    let code = pb.add_blob(BlobKind::ElfObject, common::compile_ir(&ir));
    let blob = pb.add_blob(BlobKind::ParamData, data.to_vec());
    let seeds = [1u64, 2];
    let expected = (0..seeds.len() as u32)
        .map(|seed| ExpectedOutput {
            seed,
            buffer: 1,
            blob: pb.add_blob(BlobKind::ExpectedOutput, data.to_vec()),
        })
        .collect();
    let buffer =
        |name: &str, role, source| BufferDecl { name: name.into(), dtype, shape: vec![n], role, source };
    let buffers = vec![
        buffer("w", Role::Param, Some(Source::Data { blob, crc32: ekb_wire::crc32(data) })),
        buffer("y", Role::Output, None),
    ];
    let manifest = common::one_kernel_manifest(task, code, buffers, &seeds, expected, 2 * data.len() as u64);
    pb.finish(&manifest).unwrap()
}

#[test]
fn i8_and_f16_parameter_data_arrive_to_the_last_byte() {
    // Buffers of one- and two-byte elements need not be a multiple of 4 bytes long: every
    // element of the payload's values must reach the kernel, the last ones included.
    use ekb_wire::payload::{f16s_to_le, i8s_to_le, DType};
    let f16 = |v: f32| ekb_wire::f16::from_f32(v);
    let cases = [
        ("i8x3", DType::I8, i8s_to_le(&[7, -3, 100])),
        ("i8x5", DType::I8, i8s_to_le(&[1, -2, 3, -4, 5])),
        ("f16x5", DType::F16, f16s_to_le(&[f16(0.5), f16(-1.0), f16(2.0), f16(-3.5), f16(4.25)])),
    ];
    for (task, dtype, data) in cases {
        let r = run(&copy_payload(task, dtype, &data));
        assert!(r.is_correct(), "{task}: {:?}\n{:?}", r.failure, r.seeds);
        assert_eq!(r.seeds.len(), 2, "{task}");
    }
}
