//! Payloads that should work: a two-kernel payload built, parsed and read back field by field,
//! the same with its weight stored as parameter data, a payload of format version 1 read by
//! today's reader, the byte layout pinned against `docs/protocol.md`, and the builder refusing
//! manifests the board would refuse.

mod payload_common;

use ekb_wire::crc32;
use ekb_wire::payload::*;
use payload_common::*;

#[test]
fn a_two_kernel_payload_round_trips() {
    let bytes = sample_payload();
    let view = Payload::parse(&bytes).unwrap();
    assert_eq!(view.manifest(), &sample_manifest());
    assert_eq!(view.blob_count(), 4);

    for (i, (code, data)) in sample_blobs().iter().enumerate() {
        let blob = view.blob(i as u32).unwrap();
        assert_eq!(blob.kind.code(), *code);
        assert_eq!(blob.data, &data[..]);
        // Zero-copy: the slice points into the file, at a 64-byte aligned offset.
        let offset = blob.data.as_ptr() as usize - bytes.as_ptr() as usize;
        assert_eq!(offset % 64, 0, "blob {i} at {offset}");
    }
    assert_eq!(view.blob(4), None);

    assert_eq!(view.kernel_code(0).unwrap().data, &elf(0xaa, 100)[..]);
    assert_eq!(view.kernel_code(1).unwrap().data, &elf(0xbb, 37)[..]);
    assert_eq!(view.kernel_code(2), None);

    for s in 0..2u32 {
        let got: Vec<f32> = le_f32s(view.expected_output(s, 3).unwrap()).collect();
        assert_eq!(got, expected(s as usize));
    }
    // Not an output, or no such seed.
    assert_eq!(view.expected_output(0, 2), None);
    assert_eq!(view.expected_output(2, 3), None);
}

#[test]
fn the_builder_writes_exactly_the_documented_layout() {
    let manifest = postcard::to_allocvec(&sample_manifest()).unwrap();
    assert_eq!(sample_payload(), assemble(&manifest, &sample_blobs()));
}

#[test]
fn golden_header_bytes() {
    let bytes = sample_payload();
    let m = postcard::to_allocvec(&sample_manifest()).unwrap().len() as u64;
    let table = 56 + m;
    // Blobs: 100 bytes at the first multiple of 64 after the table, 37 bytes at the next
    // multiple after that, then 32 and 32.
    let b0 = (table + 80).div_ceil(64) * 64;
    let b1 = (b0 + 100).div_ceil(64) * 64;
    let b2 = (b1 + 37).div_ceil(64) * 64;
    let b3 = (b2 + 32).div_ceil(64) * 64;
    let total = b3 + 32;
    assert_eq!(bytes.len() as u64, total);

    let mut want = Vec::new();
    want.extend_from_slice(b"EKBP"); // magic
    want.extend_from_slice(&[6, 0]); // format version 6
    want.extend_from_slice(&[0, 0]); // flags
    for v in [total, 56, m, table, 80] {
        want.extend_from_slice(&v.to_le_bytes());
    }
    want.extend_from_slice(&crc32(&bytes[56..]).to_le_bytes());
    want.extend_from_slice(&crc32(&want).to_le_bytes());
    assert_eq!(want.len(), HEADER_LEN);
    assert_eq!(&bytes[..56], &want[..]);

    // The blob table: (offset, length, kind) per blob.
    let mut table_bytes = Vec::new();
    for (off, len, kind) in [(b0, 100u64, 1u32), (b1, 37, 1), (b2, 32, 5), (b3, 32, 5)] {
        table_bytes.extend_from_slice(&off.to_le_bytes());
        table_bytes.extend_from_slice(&len.to_le_bytes());
        table_bytes.extend_from_slice(&kind.to_le_bytes());
    }
    assert_eq!(&bytes[table as usize..table as usize + 80], &table_bytes[..]);

    let header = *Payload::parse(&bytes).unwrap().header();
    assert_eq!(header.to_bytes()[..], want[..]);
    assert_eq!(header.manifest, Region { offset: 56, len: m });
    assert_eq!(header.blob_table, Region { offset: table, len: 80 });
}

#[test]
fn crc32_is_the_ieee_polynomial() {
    assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
    assert_eq!(crc32(b""), 0);
}

#[test]
fn blob_kinds_have_stable_codes() {
    let codes: Vec<(u32, &str)> = BlobKind::ALL.iter().map(|k| (k.code(), k.name())).collect();
    assert_eq!(
        codes,
        [
            (1, "elf-object"),
            (2, "cuda-source"),
            (3, "ptx"),
            (4, "opencl-source"),
            (5, "expected-output"),
            (6, "param-data")
        ]
    );
    assert_eq!(BlobKind::from_code(0), None);
    assert_eq!(BlobKind::from_code(7), None);
    let since: Vec<u16> = BlobKind::ALL.iter().map(|k| k.since_version()).collect();
    assert_eq!(since, [1, 1, 1, 1, 1, 2]);
}

#[test]
fn a_gpu_payload_takes_source_blobs_and_grid_launches() {
    let mut m = sample_manifest();
    m.backend = Backend::OpenCl;
    for k in &mut m.kernels {
        k.launch = Launch::Grid { grid: [2, 1, 1], block: [4, 1, 1], shared_bytes: 0, shared_optin: false };
    }
    let mut b = PayloadBuilder::new();
    b.add_blob(BlobKind::OpenClSource, &b"__kernel void matmul() {}"[..]);
    b.add_blob(BlobKind::OpenClSource, &b"__kernel void relu() {}"[..]);
    b.add_blob(BlobKind::ExpectedOutput, f32s_to_le(&expected(0)));
    b.add_blob(BlobKind::ExpectedOutput, f32s_to_le(&expected(1)));
    let bytes = b.finish(&m).unwrap();
    let view = Payload::parse(&bytes).unwrap();
    assert_eq!(view.kernel_code(1).unwrap().data, b"__kernel void relu() {}");

    // A CUDA payload whose kernels point at ELF objects.
    m.backend = Backend::Cuda;
    let e = Payload::parse(&with_manifest(&m)).unwrap_err();
    assert_eq!(
        e,
        PayloadError::WrongBlobKind {
            field: "kernels[0].blob".into(),
            blob: 0,
            found: BlobKind::ElfObject,
            expected: "cuda"
        }
    );
}

#[test]
fn the_builder_refuses_an_inconsistent_manifest() {
    let mut m = sample_manifest();
    m.plan[0].kernel = 7;
    let mut b = PayloadBuilder::new();
    for (code, data) in sample_blobs() {
        b.add_blob(BlobKind::from_code(code).unwrap(), data);
    }
    assert_eq!(
        b.finish(&m).unwrap_err(),
        PayloadError::IndexOutOfRange { field: "plan[0].kernel".into(), index: 7, len: 2 }
    );
}

#[test]
fn a_payload_without_blobs_has_no_table_padding() {
    // No kernel can reference a blob, so the manifest is invalid; the layout is still checked
    // by parsing it as far as the manifest.
    let bytes = assemble(&postcard::to_allocvec(&sample_manifest()).unwrap(), &[]);
    assert_eq!(get_u64(&bytes, TOTAL_LEN), bytes.len() as u64);
    assert_eq!(get_u64(&bytes, TABLE_LEN), 0);
    assert_eq!(
        Payload::parse(&bytes).unwrap_err(),
        PayloadError::IndexOutOfRange { field: "kernels[0].blob".into(), index: 0, len: 0 }
    );
}

#[test]
fn elements_convert_to_and_from_little_endian() {
    let xs = [1.5f32, -0.0, f32::INFINITY];
    let bytes = f32s_to_le(&xs);
    assert_eq!(&bytes[..4], &[0x00, 0x00, 0xc0, 0x3f]);
    assert_eq!(le_f32s(&bytes).map(f32::to_bits).collect::<Vec<_>>(), xs.map(f32::to_bits));
    let is = [-2i32, 7];
    assert_eq!(i32s_to_le(&is), [0xfe, 0xff, 0xff, 0xff, 7, 0, 0, 0]);
    assert_eq!(le_i32s(&i32s_to_le(&is)).collect::<Vec<_>>(), is);
}

#[test]
fn a_payload_with_parameter_data_round_trips() {
    let bytes = data_payload();
    let view = Payload::parse(&bytes).unwrap();
    assert_eq!(view.header().version, 6);
    assert_eq!(view.manifest(), &data_manifest());
    let w = &view.manifest().buffers[1];
    assert_eq!(w.data_blob(), Some(4));
    assert_eq!(w.seeded(), None);
    assert_eq!(view.manifest().buffers[0].seeded(), Some(&ekb_wire::Init::Uniform { lo: -1.0, hi: 1.0 }));

    // The values come back as stored, from a 64-byte aligned blob of the file.
    let data = view.param_data(1).unwrap();
    assert_eq!(le_f32s(data).collect::<Vec<_>>(), weights());
    assert_eq!((data.as_ptr() as usize - bytes.as_ptr() as usize) % 64, 0);
    assert_eq!(view.blob(4).unwrap().kind, BlobKind::ParamData);
    // Only data parameters have data.
    assert_eq!(view.param_data(0), None);
    assert_eq!(view.param_data(3), None);
    assert_eq!(view.param_data(9), None);

    // The file grows by the data: one more table entry, the 48 bytes at the next multiple of
    // 64 after the last expected output.
    let plain = sample_payload();
    let m = postcard::to_allocvec(&data_manifest()).unwrap();
    assert_eq!(bytes, assemble(&m, &data_blobs()));
    let last = get_u64(&bytes, entry_at(&bytes, 3)) + 32;
    assert_eq!(get_u64(&bytes, entry_at(&bytes, 4)), last.next_multiple_of(64));
    assert_eq!(bytes.len() as u64, last.next_multiple_of(64) + 48);
    assert!(bytes.len() > plain.len() + 48);
}

#[test]
fn an_i32_parameter_keeps_its_integers() {
    let mut m = data_manifest();
    let values = [7i32, -9, 0, i32::MAX, i32::MIN, 1, 2, 3, 4, 5, 6, 8];
    m.buffers[1].dtype = DType::I32;
    m.buffers[1].source = Some(Source::Data { blob: 4, crc32: ekb_wire::crc32(&i32s_to_le(&values)) });
    m.kernels[0].params[1].dtype = DType::I32;
    let mut blobs = sample_blobs();
    blobs.push((6, i32s_to_le(&values)));
    let bytes = build(&m, &blobs);
    let view = Payload::parse(&bytes).unwrap();
    assert_eq!(le_i32s(view.param_data(1).unwrap()).collect::<Vec<_>>(), values);
}

#[test]
fn version_1_payloads_still_parse() {
    let bytes = version_1_payload();
    assert_eq!(&bytes[4..6], &[1, 0], "the file is format version 1");
    let view = Payload::parse(&bytes).unwrap();
    assert_eq!(view.header().version, 1);
    // Its initialisers read as seeded sources: the same manifest as today's sample.
    assert_eq!(view.manifest(), &sample_manifest());
    for (i, (code, data)) in sample_blobs().iter().enumerate() {
        let blob = view.blob(i as u32).unwrap();
        assert_eq!((blob.kind.code(), blob.data), (*code, &data[..]));
    }
    // Rebuilt, it becomes a payload of the current version with the same content.
    let mut b = PayloadBuilder::new();
    for i in 0..view.blob_count() as u32 {
        let blob = view.blob(i).unwrap();
        b.add_blob(blob.kind, blob.data);
    }
    let again = b.finish(view.manifest()).unwrap();
    assert_eq!(again, sample_payload());
}

#[test]
fn version_3_payloads_still_parse() {
    let bytes = version_3_payload();
    assert_eq!(&bytes[4..6], &[3, 0], "the file is format version 3");
    let view = Payload::parse(&bytes).unwrap();
    assert_eq!(view.header().version, 3);
    // No arena: every buffer apart, otherwise today's sample.
    assert_eq!(view.manifest(), &sample_manifest());
    assert_eq!(view.manifest().arena, None);
}

#[test]
fn version_4_payloads_still_parse_without_prepare_steps() {
    let bytes = version_4_payload();
    assert_eq!(&bytes[4..6], &[4, 0], "the file is format version 4");
    let view = Payload::parse(&bytes).unwrap();
    assert_eq!(view.header().version, 4);
    // Its arena is kept, and every step is an execution step: otherwise today's sample.
    let arena = Arena { bytes: 64, slots: vec![ArenaSlot { buffer: 2, offset: 0 }] };
    assert_eq!(view.manifest(), &Manifest { arena: Some(arena), ..sample_manifest() });
    assert_eq!(view.manifest().prepare_steps, 0);
    assert!(view.manifest().prepare_plan().is_empty());
    assert_eq!(view.manifest().execution_plan(), &sample_manifest().plan[..]);
    assert_eq!(view.manifest().prepared(), [false; 4]);
}

#[test]
fn version_5_payloads_still_parse_with_one_execution_a_run() {
    let bytes = version_5_payload();
    assert_eq!(&bytes[4..6], &[5, 0], "the file is format version 5");
    let view = Payload::parse(&bytes).unwrap();
    assert_eq!(view.header().version, 5);
    assert_eq!(view.manifest(), &prepare_manifest());
    assert_eq!(view.manifest().repeat, 1);
}

#[test]
fn a_repeat_count_round_trips_and_is_bounded() {
    let m = Manifest { repeat: 2, ..sample_manifest() };
    assert_eq!(Payload::parse(&build(&m, &sample_blobs())).unwrap().manifest().repeat, 2);
    for repeat in [0, MAX_REPEAT + 1] {
        let m = Manifest { repeat, ..sample_manifest() };
        let err = PayloadBuilder::new().finish(&m).unwrap_err().to_string();
        assert!(err.contains("repeat") && err.contains("from 1 to 64"), "{err}");
    }
}

#[test]
fn a_payload_with_a_prepare_step_round_trips() {
    let m = prepare_manifest();
    let bytes = build(&m, &sample_blobs());
    assert_eq!(&bytes[4..6], &[6, 0], "written as format version 6");
    let view = Payload::parse(&bytes).unwrap();
    assert_eq!(view.manifest(), &m);
    let got = view.manifest();
    assert_eq!(got.prepare_steps, 1);
    // `pack` is the prepare step; `matmul` and `relu` are one execution.
    let kernels = |steps: &[LaunchStep]| -> Vec<&str> {
        steps.iter().map(|s| got.kernels[s.kernel as usize].name.as_str()).collect()
    };
    assert_eq!(kernels(got.prepare_plan()), ["pack"]);
    assert_eq!(kernels(got.execution_plan()), ["matmul", "relu"]);
    // Only `wp` is prepared: `h` is written by an execution step.
    assert_eq!(got.prepared(), [false, false, false, false, true]);
    // A temp of the execution steps may still live in the arena next to it.
    let mut m = prepare_manifest();
    m.arena = Some(Arena { bytes: 64, slots: vec![ArenaSlot { buffer: 2, offset: 0 }] });
    assert_eq!(Payload::parse(&build(&m, &sample_blobs())).unwrap().manifest(), &m);
}

#[test]
fn a_gpu_payload_carries_launches_shared_allocations_and_the_profile_limits() {
    let bytes = build(&gpu_manifest(), &gpu_blobs());
    let view = Payload::parse(&bytes).unwrap();
    assert_eq!(view.manifest(), &gpu_manifest());
    assert_eq!(view.kernel_code(0).unwrap().data, GPU_SOURCES[0].as_bytes());
    assert_eq!(view.kernel_code(1).unwrap().kind, BlobKind::OpenClSource);
    // A CUDA kernel may opt in to shared memory above the static limit.
    let mut m = gpu_manifest();
    m.backend = Backend::Cuda;
    m.kernels[0].launch =
        Launch::Grid { grid: [1; 3], block: [256, 1, 1], shared_bytes: 65536, shared_optin: true };
    m.gpu = Some(GpuLimits { shared_bytes_optin: Some(232448), ..m.gpu.unwrap() });
    let mut blobs = gpu_blobs();
    blobs[0].0 = BlobKind::CudaSource.code();
    blobs[1].0 = BlobKind::Ptx.code();
    let view_bytes = build(&m, &blobs);
    assert_eq!(Payload::parse(&view_bytes).unwrap().manifest(), &m);
}

#[test]
fn version_2_gpu_payloads_still_parse() {
    let bytes = version_2_gpu_payload();
    assert_eq!(&bytes[4..6], &[2, 0], "the file is format version 2");
    let view = Payload::parse(&bytes).unwrap();
    assert_eq!(view.header().version, 2);
    // Its launches read as not opting in, and it carries no GPU limits: otherwise today's sample.
    assert_eq!(view.manifest(), &Manifest { gpu: None, ..gpu_manifest() });
    for (i, (code, data)) in gpu_blobs().iter().enumerate() {
        let blob = view.blob(i as u32).unwrap();
        assert_eq!((blob.kind.code(), blob.data), (*code, &data[..]));
    }
}
