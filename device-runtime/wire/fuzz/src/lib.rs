//! The bodies of the fuzz targets for `ekb-wire`, shared by the libFuzzer targets
//! (`fuzz_targets/`), and the seed inputs they start from (`src/bin/write_seeds.rs`).
//!
//! Each body must never panic on any bytes. Beyond "no panic" they check properties: a payload
//! that parses hands out every blob it declares, every expected output and every parameter's
//! data at its declared size (the data with its declared checksum), and rebuilds into a payload
//! with the same manifest and blobs; frames decoded incrementally in pieces of any size are the frames of the
//! whole buffer; a message that decodes re-encodes to bytes that decode to the same encoding.
//! A violated property panics, which the fuzzer reports as a crash.

use ekb_wire::crc32;
use ekb_wire::payload::{
    f32s_to_le, Access, AllocDecl, Backend, BlobKind, BufferDecl, DType, ExpectedOutput, GpuLimits,
    KernelDecl, Launch, LaunchStep, Manifest, MemScope, MemoryPlan, ParamDecl, Payload, PayloadBuilder, Role,
    Source, TimingSettings, Tolerance, HEADER_LEN,
};
use ekb_wire::protocol::{decode_message, encode_frame, split_frames, FrameDecoder, Request, Response};
use ekb_wire::Init;

/// Parses `data` as a payload as it is (checksums reject almost every mutation) and again with
/// its total length and both checksums re-sealed, so that mutations reach the region, blob
/// table and manifest checks. Returns whether either parse succeeded.
pub fn payload_parse(data: &[u8]) -> bool {
    let plain = check_payload(data);
    if data.len() < HEADER_LEN {
        return plain;
    }
    let mut sealed = data.to_vec();
    sealed[8..16].copy_from_slice(&(data.len() as u64).to_le_bytes());
    let body = crc32(&sealed[HEADER_LEN..]);
    sealed[48..52].copy_from_slice(&body.to_le_bytes());
    let head = crc32(&sealed[..52]);
    sealed[52..56].copy_from_slice(&head.to_le_bytes());
    check_payload(&sealed) || plain
}

fn check_payload(bytes: &[u8]) -> bool {
    let view = match Payload::parse(bytes) {
        Ok(v) => v,
        Err(e) => {
            let _ = e.to_string();
            return false;
        }
    };
    let m = view.manifest();
    let blobs: Vec<_> =
        (0..view.blob_count() as u32).map(|i| view.blob(i).expect("a declared blob")).collect();
    for k in 0..m.kernels.len() {
        let code = view.kernel_code(k).expect("a kernel's code blob");
        assert!(m.backend.accepts_code(code.kind));
    }
    for e in &m.expected {
        let data = view.expected_output(e.seed, e.buffer).expect("a declared expected output");
        assert_eq!(Some(data.len() as u64), m.buffers[e.buffer as usize].size_bytes());
    }
    for (i, b) in m.buffers.iter().enumerate() {
        let data = view.param_data(i as u32);
        match b.source {
            Some(Source::Data { crc32: declared, .. }) => {
                let data = data.expect("a data parameter's blob");
                assert_eq!(Some(data.len() as u64), b.size_bytes());
                assert_eq!(crc32(data), declared);
                assert_eq!(b.role, Role::Param);
            }
            _ => assert!(data.is_none()),
        }
    }
    // Rebuilt by the builder: the same manifest (compared as bytes: it may hold NaN) and blobs.
    let mut b = PayloadBuilder::new();
    for blob in &blobs {
        b.add_blob(blob.kind, blob.data);
    }
    let rebuilt = b.finish(m).expect("a parsed payload rebuilds");
    let again = Payload::parse(&rebuilt).expect("a rebuilt payload parses");
    let enc = |m: &Manifest| ekb_wire_postcard(m);
    assert_eq!(enc(again.manifest()), enc(m));
    for (i, blob) in blobs.iter().enumerate() {
        assert_eq!(again.blob(i as u32).as_ref(), Some(blob));
    }
    true
}

/// The manifest's encoding, through the protocol's framing (the only serialiser the crate
/// exposes): equal encodings mean equal manifests, NaN included.
fn ekb_wire_postcard(m: &Manifest) -> Vec<u8> {
    encode_frame(m).expect("a manifest encodes")
}

/// Feeds `data` to a [`FrameDecoder`] in pieces whose sizes come from the first byte, decodes
/// each frame as a request and as a response, and compares with [`split_frames`] on the whole
/// buffer. Returns whether any frame held a message.
pub fn frame_decode(data: &[u8]) -> bool {
    let Some((&first, stream)) = data.split_first() else { return false };
    let piece = usize::from(first % 16) + 1;
    let mut dec = FrameDecoder::new();
    let mut frames = Vec::new();
    let mut errors = 0;
    for chunk in stream.chunks(piece) {
        let mut input = chunk;
        while !input.is_empty() {
            match dec.decode(&mut input) {
                Ok(Some(body)) => frames.push(body),
                Ok(None) => assert!(input.is_empty(), "Ok(None) with input left"),
                Err(e) => {
                    let _ = (e.to_string(), e.error_kind());
                    errors += 1;
                }
            }
        }
    }
    let end = dec.finish();
    // A buffer that is a clean sequence of frames decodes the same both ways.
    if let Ok(bodies) = split_frames(stream) {
        assert_eq!(errors, 0);
        assert!(end.is_ok());
        assert_eq!(bodies, frames.iter().map(Vec::as_slice).collect::<Vec<_>>());
    }
    // Frames from the stream, and the stream itself as a body (frame checksums stop almost
    // every mutation before the message decoder; this way the decoder sees them all).
    let mut any = false;
    for body in frames.iter().map(Vec::as_slice).chain([stream]) {
        any |= check_message::<Request>(body) | check_message::<Response>(body);
    }
    any
}

/// If `body` decodes as a `T`, its re-encoding decodes to the same encoding (compared as
/// bytes: reports may hold NaN). Returns whether it decoded.
fn check_message<T: serde::Serialize + serde::de::DeserializeOwned>(body: &[u8]) -> bool {
    let Ok(msg) = decode_message::<T>(body) else { return false };
    let enc = encode_frame(&msg).expect("a decoded message encodes");
    let again: T = decode_message(&enc[8..]).expect("a re-encoded message decodes");
    assert_eq!(encode_frame(&again).expect("encodes"), enc);
    true
}

/// A small valid payload: one kernel `relu` on an f32[4] input, one seed.
pub fn sample_payload() -> Vec<u8> {
    let t = |name: &str, access| ParamDecl { name: name.into(), dtype: DType::F32, shape: vec![4], access };
    let buf = |name: &str, role, init: Option<Init>| BufferDecl {
        name: name.into(),
        dtype: DType::F32,
        shape: vec![4],
        role,
        source: init.map(Source::Seeded),
    };
    let manifest = Manifest {
        generator_version: ekb_wire::seeded::GENERATOR_VERSION,
        producer: "fuzz".into(),
        task: "relu".into(),
        target: "host".into(),
        backend: Backend::CpuLlvm,
        kernels: vec![KernelDecl {
            name: "relu".into(),
            symbol: "ekb_k_relu".into(),
            blob: 0,
            params: vec![t("x", Access::In), t("y", Access::Out)],
            launch: Launch::Cpu,
            allocs: vec![],
        }],
        buffers: vec![
            buf("x", Role::Input, Some(Init::Uniform { lo: -1.0, hi: 1.0 })),
            buf("y", Role::Output, None),
        ],
        plan: vec![LaunchStep { kernel: 0, args: vec![0, 1] }],
        prepare_steps: 0,
        seeds: vec![7],
        tolerance: Tolerance { atol: 1e-4, rtol: 1e-4 },
        expected: vec![ExpectedOutput { seed: 0, buffer: 1, blob: 1 }],
        timing: TimingSettings::DEFAULT,
        memory: MemoryPlan { peak_bytes: 32, stack_limit_bytes: 1 << 20, memory_limit_bytes: 1 << 30 },
        gpu: None,
        arena: None,
        repeat: 1,
    };
    let mut b = PayloadBuilder::new();
    b.add_blob(BlobKind::ElfObject, &b"\x7fELF\x02\x01\x01"[..]);
    b.add_blob(BlobKind::ExpectedOutput, f32s_to_le(&[0.0, 0.5, 0.0, 1.0]));
    b.finish(&manifest).expect("the sample payload is valid")
}

/// A small valid payload with parameter data: one kernel `add` of an f32[4] input and an f32[4]
/// parameter stored in the payload, two seeds.
pub fn sample_data_payload() -> Vec<u8> {
    let t = |name: &str, access| ParamDecl { name: name.into(), dtype: DType::F32, shape: vec![4], access };
    let buf = |name: &str, role, source| BufferDecl {
        name: name.into(),
        dtype: DType::F32,
        shape: vec![4],
        role,
        source,
    };
    let bias = f32s_to_le(&[0.5, -0.25, 2.0, 0.0]);
    let mut b = PayloadBuilder::new();
    b.add_blob(BlobKind::ElfObject, &b"\x7fELF\x02\x01\x01"[..]);
    b.add_blob(BlobKind::ExpectedOutput, f32s_to_le(&[1.0, 0.5, 2.5, -1.0]));
    b.add_blob(BlobKind::ExpectedOutput, f32s_to_le(&[0.0, -0.5, 3.0, 0.75]));
    let data = b.add_blob(BlobKind::ParamData, bias.clone());
    let manifest = Manifest {
        generator_version: ekb_wire::seeded::GENERATOR_VERSION,
        producer: "fuzz".into(),
        task: "add".into(),
        target: "host".into(),
        backend: Backend::CpuLlvm,
        kernels: vec![KernelDecl {
            name: "add".into(),
            symbol: "ekb_k_add".into(),
            blob: 0,
            params: vec![t("x", Access::In), t("b", Access::In), t("y", Access::Out)],
            launch: Launch::Cpu,
            allocs: vec![],
        }],
        buffers: vec![
            buf("x", Role::Input, Some(Source::Seeded(Init::Uniform { lo: -1.0, hi: 1.0 }))),
            buf("b", Role::Param, Some(Source::Data { blob: data, crc32: crc32(&bias) })),
            buf("y", Role::Output, None),
        ],
        plan: vec![LaunchStep { kernel: 0, args: vec![0, 1, 2] }],
        prepare_steps: 0,
        seeds: vec![0, 1],
        tolerance: Tolerance { atol: 1e-4, rtol: 1e-4 },
        expected: vec![
            ExpectedOutput { seed: 0, buffer: 2, blob: 1 },
            ExpectedOutput { seed: 1, buffer: 2, blob: 2 },
        ],
        timing: TimingSettings::DEFAULT,
        memory: MemoryPlan { peak_bytes: 48, stack_limit_bytes: 1 << 20, memory_limit_bytes: 1 << 30 },
        gpu: None,
        arena: None,
        repeat: 1,
    };
    b.finish(&manifest).expect("the sample payload is valid")
}

/// A small valid GPU payload: [`sample_data_payload`] as one CUDA C kernel on a grid of one
/// block of 4 threads with a shared allocation opting in to dynamic shared memory, and the
/// profile's GPU limits.
pub fn sample_gpu_payload() -> Vec<u8> {
    let cpu = sample_data_payload();
    let view = Payload::parse(&cpu).expect("the sample payload is valid");
    let mut b = PayloadBuilder::new();
    b.add_blob(
        BlobKind::CudaSource,
        &b"extern \"C\" __global__ void add(const float* x, const float* b, float* y) {}"[..],
    );
    // The expected outputs and the parameter data, at the same indices.
    for i in 1..view.blob_count() as u32 {
        let blob = view.blob(i).expect("a declared blob");
        b.add_blob(blob.kind, blob.data);
    }
    let mut manifest = view.manifest().clone();
    manifest.backend = Backend::Cuda;
    manifest.target = "h200".into();
    manifest.kernels[0].symbol = "add".into();
    manifest.kernels[0].launch =
        Launch::Grid { grid: [1, 1, 1], block: [4, 1, 1], shared_bytes: 65536, shared_optin: true };
    manifest.kernels[0].allocs = vec![AllocDecl { name: "s".into(), scope: MemScope::Shared, bytes: 65536 }];
    manifest.gpu = Some(GpuLimits {
        max_threads_per_block: 1024,
        shared_bytes_per_block: 49152,
        shared_bytes_optin: Some(232448),
        private_bytes_per_thread: Some(524288),
        max_buffer_bytes: None,
    });
    b.finish(&manifest).expect("the GPU sample payload is valid")
}

/// A small valid payload with a prepare step: [`sample_data_payload`] whose parameter is first
/// negated into a temp `nb` by a kernel `neg`, once per binding of the parameters, and the
/// execution step `add` reads that temp.
pub fn sample_prepare_payload() -> Vec<u8> {
    let data = sample_data_payload();
    let view = Payload::parse(&data).expect("the sample payload is valid");
    let mut b = PayloadBuilder::new();
    for i in 0..view.blob_count() as u32 {
        let blob = view.blob(i).expect("a declared blob");
        b.add_blob(blob.kind, blob.data);
    }
    let mut manifest = view.manifest().clone();
    let t = |name: &str, access| ParamDecl { name: name.into(), dtype: DType::F32, shape: vec![4], access };
    manifest.kernels.push(KernelDecl {
        name: "neg".into(),
        symbol: "ekb_k_neg".into(),
        blob: 0,
        params: vec![t("w", Access::In), t("v", Access::Out)],
        launch: Launch::Cpu,
        allocs: vec![],
    });
    manifest.buffers.push(BufferDecl {
        name: "nb".into(),
        dtype: DType::F32,
        shape: vec![4],
        role: Role::Temp,
        source: None,
    });
    manifest.plan =
        vec![LaunchStep { kernel: 1, args: vec![1, 3] }, LaunchStep { kernel: 0, args: vec![0, 3, 2] }];
    manifest.prepare_steps = 1;
    b.finish(&manifest).expect("the prepare sample payload is valid")
}

/// A payload written by format version 1 (the wire crate's test file), so that the fuzzer
/// also mutates the older layout.
pub const VERSION_1_PAYLOAD: &[u8] = include_bytes!("../../tests/data/v1-sample.ekp");

/// An OpenCL payload written by format version 2 (the wire crate's test file).
pub const VERSION_2_GPU_PAYLOAD: &[u8] = include_bytes!("../../tests/data/v2-gpu-sample.ekp");

/// A payload written by format version 4 (the wire crate's test file: a temp arena, no prepare
/// steps).
pub const VERSION_4_PAYLOAD: &[u8] = include_bytes!("../../tests/data/v4-sample.ekp");

/// Seed streams: a session's requests and a report file's responses, as frames.
pub fn sample_streams() -> Vec<Vec<u8>> {
    let requests = [
        Request::Hello {
            min_version: 1,
            max_version: 1,
            client: "ekb".into(),
            client_version: "0.1.0".into(),
        },
        Request::DeviceInfo,
        Request::Load { payload: sample_payload() },
        Request::Shutdown,
    ];
    let responses = [
        Response::Error { kind: ekb_wire::protocol::ErrorKind::BadFrame, message: "bad".into() },
        Response::Bye,
    ];
    let session: Vec<u8> = requests.iter().flat_map(|r| encode_frame(r).expect("encodes")).collect();
    let report: Vec<u8> = responses.iter().flat_map(|r| encode_frame(r).expect("encodes")).collect();
    // The first byte picks the piece size.
    [session, report].into_iter().map(|s| [&[3u8][..], &s].concat()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_seeds_parse_and_pass_the_properties() {
        for seed in [
            sample_payload(),
            sample_data_payload(),
            sample_gpu_payload(),
            sample_prepare_payload(),
            VERSION_1_PAYLOAD.to_vec(),
            VERSION_2_GPU_PAYLOAD.to_vec(),
            VERSION_4_PAYLOAD.to_vec(),
        ] {
            assert!(payload_parse(&seed));
        }
        // A flipped data byte is caught (by the body checksum as given, by the data's own
        // checksum once re-sealed).
        let mut bad = sample_data_payload();
        let last = bad.len() - 1;
        bad[last] ^= 1;
        assert!(!payload_parse(&bad));
        for s in sample_streams() {
            assert!(frame_decode(&s));
        }
    }
}
