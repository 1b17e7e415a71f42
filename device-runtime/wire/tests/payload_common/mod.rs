//! Shared by the payload tests: a sample two-kernel manifest (with a seeded weight, and a
//! variant whose weight is parameter data), an independent assembler that writes the byte
//! layout of `docs/protocol.md` without the crate's builder (so hostile files with any manifest
//! can be made, and the builder is checked against the document), header editing helpers that
//! re-seal the checksums, a GPU (OpenCL) variant, a variant with a prepare step, and payloads
//! written by format versions 1 to 4.

#![allow(dead_code)] // Each test file uses a different subset.

use ekb_wire::crc32;
use ekb_wire::payload::*;
use ekb_wire::seeded::GENERATOR_VERSION;
use ekb_wire::Init;

/// Header field offsets from `docs/protocol.md`.
pub const VERSION: usize = 4;
pub const FLAGS: usize = 6;
pub const TOTAL_LEN: usize = 8;
pub const MANIFEST_OFFSET: usize = 16;
pub const MANIFEST_LEN: usize = 24;
pub const TABLE_OFFSET: usize = 32;
pub const TABLE_LEN: usize = 40;
pub const BODY_CRC: usize = 48;
pub const HEADER_CRC: usize = 52;

/// Fake ELF objects (the parser does not look inside blobs).
pub fn elf(tag: u8, len: usize) -> Vec<u8> {
    let mut v = b"\x7fELF".to_vec();
    v.resize(len, tag);
    v
}

/// Expected output of `out` (f32[2,4]) under seed index `s`.
pub fn expected(s: usize) -> Vec<f32> {
    (0..8).map(|i| (s * 10 + i) as f32 * 0.5 - 1.0).collect()
}

fn param(name: &str, shape: &[u64], access: Access) -> ParamDecl {
    ParamDecl { name: name.into(), dtype: DType::F32, shape: shape.to_vec(), access }
}

fn buffer(name: &str, shape: &[u64], role: Role, init: Option<Init>) -> BufferDecl {
    BufferDecl {
        name: name.into(),
        dtype: DType::F32,
        shape: shape.to_vec(),
        role,
        source: init.map(Source::Seeded),
    }
}

/// `out = relu(x @ w)`: kernel 0 `matmul` (blob 0) writes `h`, kernel 1 `relu` (blob 1) reads
/// `h` and writes `out`; two seeds; expected outputs in blobs 2 and 3.
pub fn sample_manifest() -> Manifest {
    Manifest {
        generator_version: GENERATOR_VERSION,
        producer: "ekb 0.1.0".into(),
        task: "mlp".into(),
        target: "host".into(),
        backend: Backend::CpuLlvm,
        kernels: vec![
            KernelDecl {
                name: "matmul".into(),
                symbol: "ekb_k_matmul".into(),
                blob: 0,
                params: vec![
                    param("a", &[2, 3], Access::In),
                    param("b", &[3, 4], Access::In),
                    param("c", &[2, 4], Access::Out),
                ],
                launch: Launch::Cpu,
                allocs: vec![],
            },
            KernelDecl {
                name: "relu".into(),
                symbol: "ekb_k_relu".into(),
                blob: 1,
                params: vec![param("x", &[2, 4], Access::In), param("y", &[2, 4], Access::Out)],
                launch: Launch::Cpu,
                allocs: vec![AllocDecl { name: "acc".into(), scope: MemScope::Local, bytes: 32 }],
            },
        ],
        buffers: vec![
            buffer("x", &[2, 3], Role::Input, Some(Init::Uniform { lo: -1.0, hi: 1.0 })),
            buffer("w", &[3, 4], Role::Param, Some(Init::KaimingUniform)),
            buffer("h", &[2, 4], Role::Temp, None),
            buffer("out", &[2, 4], Role::Output, None),
        ],
        plan: vec![LaunchStep { kernel: 0, args: vec![0, 1, 2] }, LaunchStep { kernel: 1, args: vec![2, 3] }],
        prepare_steps: 0,
        seeds: vec![1, 2],
        tolerance: Tolerance { atol: 1e-4, rtol: 1e-4 },
        expected: vec![
            ExpectedOutput { seed: 0, buffer: 3, blob: 2 },
            ExpectedOutput { seed: 1, buffer: 3, blob: 3 },
        ],
        timing: TimingSettings::DEFAULT,
        memory: MemoryPlan { peak_bytes: 152, stack_limit_bytes: 8 << 20, memory_limit_bytes: 1 << 30 },
        gpu: None,
        arena: None,
        repeat: 1,
    }
}

/// The sample whose weight is first packed into a temp `wp` (f32[3,4], buffer 4) by a prepare
/// step (kernel 2 `pack`, blob 0), which `matmul` then reads in its place.
pub fn prepare_manifest() -> Manifest {
    let mut m = sample_manifest();
    m.kernels.push(KernelDecl {
        name: "pack".into(),
        symbol: "ekb_k_pack".into(),
        blob: 0,
        params: vec![param("w", &[3, 4], Access::In), param("p", &[3, 4], Access::Out)],
        launch: Launch::Cpu,
        allocs: vec![],
    });
    m.buffers.push(buffer("wp", &[3, 4], Role::Temp, None));
    m.plan.insert(0, LaunchStep { kernel: 2, args: vec![1, 4] });
    m.plan[1].args[1] = 4;
    m.prepare_steps = 1;
    m
}

/// The sample's blobs as (kind code, bytes): two objects of 100 and 37 bytes, two expected
/// outputs of 32 bytes.
pub fn sample_blobs() -> Vec<(u32, Vec<u8>)> {
    vec![
        (1, elf(0xaa, 100)),
        (1, elf(0xbb, 37)),
        (5, f32s_to_le(&expected(0))),
        (5, f32s_to_le(&expected(1))),
    ]
}

/// The sample, written by the crate's builder.
pub fn sample_payload() -> Vec<u8> {
    build(&sample_manifest(), &sample_blobs())
}

/// A payload written by the builder from this manifest and these blobs.
pub fn build(m: &Manifest, blobs: &[(u32, Vec<u8>)]) -> Vec<u8> {
    let mut b = PayloadBuilder::new();
    for (code, data) in blobs {
        b.add_blob(BlobKind::from_code(*code).unwrap(), data.clone());
    }
    b.finish(m).unwrap()
}

/// The values of the weight `w` (f32[3,4]) of the data sample.
pub fn weights() -> Vec<f32> {
    (0..12).map(|i| i as f32 * 0.25 - 1.5).collect()
}

/// The sample with its weight `w` stored as parameter data in blob 4 rather than seeded.
pub fn data_manifest() -> Manifest {
    let mut m = sample_manifest();
    m.buffers[1].source = Some(Source::Data { blob: 4, crc32: crc32(&f32s_to_le(&weights())) });
    m
}

/// The sample's blobs and the weight's data (kind code 6, 48 bytes).
pub fn data_blobs() -> Vec<(u32, Vec<u8>)> {
    let mut blobs = sample_blobs();
    blobs.push((6, f32s_to_le(&weights())));
    blobs
}

/// The data sample, written by the crate's builder.
pub fn data_payload() -> Vec<u8> {
    build(&data_manifest(), &data_blobs())
}

/// The OpenCL source blobs of the GPU sample.
pub const GPU_SOURCES: [&str; 2] = [
    "__kernel void matmul(__global const float* a, __global const float* b, __global float* c) { }\n",
    "__kernel void relu(__global const float* x, __global float* y) { }\n",
];

/// The data sample as an OpenCL program: kernel `matmul` (blob 0) on a grid of 2 blocks of 4
/// threads with a 64-byte shared tile, `relu` (blob 1) on one block of 8 threads, and the
/// `pocl` profile's GPU limits.
pub fn gpu_manifest() -> Manifest {
    let mut m = data_manifest();
    m.target = "pocl".into();
    m.backend = Backend::OpenCl;
    m.kernels[0].symbol = "matmul".into();
    m.kernels[0].launch =
        Launch::Grid { grid: [2, 1, 1], block: [4, 1, 1], shared_bytes: 0, shared_optin: false };
    m.kernels[0].allocs = vec![AllocDecl { name: "tile".into(), scope: MemScope::Shared, bytes: 64 }];
    m.kernels[1].symbol = "relu".into();
    m.kernels[1].launch =
        Launch::Grid { grid: [1, 1, 1], block: [8, 1, 1], shared_bytes: 0, shared_optin: false };
    m.gpu = Some(GpuLimits {
        max_threads_per_block: 4096,
        shared_bytes_per_block: 1 << 20,
        shared_bytes_optin: None,
        private_bytes_per_thread: None,
        max_buffer_bytes: Some(1 << 31),
    });
    m
}

/// The GPU sample's blobs: the two sources, the expected outputs, the weight's data.
pub fn gpu_blobs() -> Vec<(u32, Vec<u8>)> {
    let mut blobs = data_blobs();
    blobs[0] = (4, GPU_SOURCES[0].as_bytes().to_vec());
    blobs[1] = (4, GPU_SOURCES[1].as_bytes().to_vec());
    blobs
}

/// [`gpu_manifest`] without its GPU limits, as format version 2 wrote it (before GPU launches
/// had an opt-in flag and payloads carried the profile's GPU limits): kept as a file.
pub fn version_2_gpu_payload() -> Vec<u8> {
    std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/v2-gpu-sample.ekp")).unwrap()
}

/// [`sample_payload`] as format version 3 wrote it (before the temp arena), kept as a file.
pub fn version_3_payload() -> Vec<u8> {
    std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/v3-sample.ekp")).unwrap()
}

/// [`sample_payload`] with `h` in a temp arena (`{ bytes: 64, slots: [h at 0] }`), as format
/// version 4 wrote it (before prepare steps), kept as a file.
pub fn version_4_payload() -> Vec<u8> {
    std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/v4-sample.ekp")).unwrap()
}

/// [`prepare_manifest`]'s payload as format version 5 wrote it (before the repeat count), kept
/// as a file.
pub fn version_5_payload() -> Vec<u8> {
    std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/v5-sample.ekp")).unwrap()
}

/// [`sample_payload`] as format version 1 wrote it (before parameter data existed): kept as a
/// file, so that today's reader is checked against bytes of the old format.
pub fn version_1_payload() -> Vec<u8> {
    std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/v1-sample.ekp")).unwrap()
}

/// The layout of `docs/protocol.md`, written independently of the builder: header (the current
/// format version), manifest, blob table, then each blob at the next multiple of 64, no padding
/// after the last.
pub fn assemble(manifest: &[u8], blobs: &[(u32, Vec<u8>)]) -> Vec<u8> {
    assemble_version(FORMAT_VERSION, manifest, blobs)
}

/// [`assemble`] with this format version in the header.
pub fn assemble_version(version: u16, manifest: &[u8], blobs: &[(u32, Vec<u8>)]) -> Vec<u8> {
    let table_offset = 56 + manifest.len();
    let mut out = vec![0u8; 56];
    out.extend_from_slice(manifest);
    out.resize(table_offset + 20 * blobs.len(), 0);
    let mut pos = out.len();
    for (i, (code, data)) in blobs.iter().enumerate() {
        let offset = pos.div_ceil(64) * 64;
        let e = table_offset + 20 * i;
        out[e..e + 8].copy_from_slice(&(offset as u64).to_le_bytes());
        out[e + 8..e + 16].copy_from_slice(&(data.len() as u64).to_le_bytes());
        out[e + 16..e + 20].copy_from_slice(&code.to_le_bytes());
        pos = offset + data.len();
    }
    out.resize(pos, 0);
    for (i, (_, data)) in blobs.iter().enumerate() {
        let e = table_offset + 20 * i;
        let offset = u64::from_le_bytes(out[e..e + 8].try_into().unwrap()) as usize;
        out[offset..offset + data.len()].copy_from_slice(data);
    }
    out[0..4].copy_from_slice(b"EKBP");
    out[VERSION..VERSION + 2].copy_from_slice(&version.to_le_bytes());
    set_u64(&mut out, TOTAL_LEN, pos as u64);
    set_u64(&mut out, MANIFEST_OFFSET, 56);
    set_u64(&mut out, MANIFEST_LEN, manifest.len() as u64);
    set_u64(&mut out, TABLE_OFFSET, table_offset as u64);
    set_u64(&mut out, TABLE_LEN, 20 * blobs.len() as u64);
    reseal(&mut out);
    out
}

/// A payload with this manifest (valid or not) and the sample's blobs.
pub fn with_manifest(m: &Manifest) -> Vec<u8> {
    assemble(&postcard::to_allocvec(m).unwrap(), &sample_blobs())
}

/// A payload with this manifest (valid or not) and the data sample's blobs.
pub fn with_data_manifest(m: &Manifest) -> Vec<u8> {
    assemble(&postcard::to_allocvec(m).unwrap(), &data_blobs())
}

pub fn set_u64(bytes: &mut [u8], at: usize, v: u64) {
    bytes[at..at + 8].copy_from_slice(&v.to_le_bytes());
}

pub fn get_u64(bytes: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap())
}

/// Recomputes both checksums (body first: the header checksum covers it).
pub fn reseal(bytes: &mut [u8]) {
    let body = crc32(&bytes[56..]);
    bytes[BODY_CRC..BODY_CRC + 4].copy_from_slice(&body.to_le_bytes());
    let head = crc32(&bytes[..HEADER_CRC]);
    bytes[HEADER_CRC..HEADER_CRC + 4].copy_from_slice(&head.to_le_bytes());
}

/// The offset in the file of blob table entry `i`.
pub fn entry_at(bytes: &[u8], i: usize) -> usize {
    get_u64(bytes, TABLE_OFFSET) as usize + 20 * i
}
