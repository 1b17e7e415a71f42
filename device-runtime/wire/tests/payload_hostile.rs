//! Hostile and corrupt payloads: each must give its exact typed error, never a panic or a read
//! out of bounds. Files are made by editing a valid payload and re-sealing its checksums (so
//! the check under test, not the checksum, is what rejects them), or by assembling a
//! manifest the builder would refuse.

mod payload_common;

use ekb_wire::crc32;
use ekb_wire::payload::*;
use ekb_wire::seeded::InitError;
use ekb_wire::Init;
use payload_common::*;

fn err(bytes: &[u8]) -> PayloadError {
    Payload::parse(bytes).unwrap_err()
}

/// The sample with one header u64 field replaced, re-sealed.
fn with_header_u64(at: usize, v: u64) -> Vec<u8> {
    let mut b = sample_payload();
    set_u64(&mut b, at, v);
    reseal(&mut b);
    b
}

/// The sample with blob table entry `i` replaced, re-sealed.
fn with_entry(i: usize, offset: u64, len: u64, code: u32) -> Vec<u8> {
    let mut b = sample_payload();
    let e = entry_at(&b, i);
    set_u64(&mut b, e, offset);
    set_u64(&mut b, e + 8, len);
    b[e + 16..e + 20].copy_from_slice(&code.to_le_bytes());
    reseal(&mut b);
    b
}

fn manifest_err(edit: impl FnOnce(&mut Manifest)) -> PayloadError {
    let mut m = sample_manifest();
    edit(&mut m);
    err(&with_manifest(&m))
}

#[test]
fn truncated_header() {
    let b = sample_payload();
    assert_eq!(err(&b[..30]), PayloadError::Truncated { part: Part::Header, needed: 56, got: 30 });
    assert_eq!(err(&b[..0]), PayloadError::Truncated { part: Part::Header, needed: 56, got: 0 });
    // Shorter than the magic: nothing to compare, still truncated.
    assert_eq!(err(b"EK"), PayloadError::Truncated { part: Part::Header, needed: 56, got: 2 });
    assert_eq!(err(&b[..30]).to_string(), "truncated payload: the header needs 56 bytes, the file has 30");
}

#[test]
fn truncated_body() {
    let b = sample_payload();
    let total = b.len() as u64;
    assert_eq!(err(&b[..100]), PayloadError::Truncated { part: Part::Payload, needed: total, got: 100 });
}

#[test]
fn bad_magic() {
    let mut b = sample_payload();
    b[..4].copy_from_slice(b"\x7fELF");
    assert_eq!(err(&b), PayloadError::BadMagic { found: *b"\x7fELF" });
    assert!(err(&b).to_string().contains("payloads start with `EKBP`"));
    // A short file that is not a payload says so rather than "truncated".
    assert_eq!(err(b"hello"), PayloadError::BadMagic { found: *b"hell" });
}

#[test]
fn wrong_version() {
    let mut b = sample_payload();
    b[VERSION..VERSION + 2].copy_from_slice(&7u16.to_le_bytes());
    reseal(&mut b);
    assert_eq!(err(&b), PayloadError::UnsupportedVersion { found: 7, supported: &[1, 2, 3, 4, 5, 6] });
    assert_eq!(
        err(&b).to_string(),
        "payload format version 7 is not supported (this build reads [1, 2, 3, 4, 5, 6])"
    );
}

#[test]
fn header_checksum_mismatch() {
    let mut b = sample_payload();
    let stored = u32::from_le_bytes(b[HEADER_CRC..HEADER_CRC + 4].try_into().unwrap());
    b[MANIFEST_LEN] ^= 1;
    let computed = crc32(&b[..HEADER_CRC]);
    assert_ne!(stored, computed);
    assert_eq!(err(&b), PayloadError::HeaderChecksum { stored, computed });
}

#[test]
fn body_checksum_mismatch() {
    let mut b = sample_payload();
    let stored = u32::from_le_bytes(b[BODY_CRC..BODY_CRC + 4].try_into().unwrap());
    let last = b.len() - 1;
    b[last] ^= 0x40;
    let computed = crc32(&b[56..]);
    assert_eq!(err(&b), PayloadError::BodyChecksum { stored, computed });
    assert!(err(&b).to_string().starts_with("body checksum mismatch"));
}

#[test]
fn unknown_flags() {
    let mut b = sample_payload();
    b[FLAGS] = 0x04;
    reseal(&mut b);
    assert_eq!(err(&b), PayloadError::UnknownFlags { flags: 4 });
}

#[test]
fn trailing_bytes() {
    let mut b = sample_payload();
    let declared = b.len() as u64;
    b.extend_from_slice(&[0; 3]);
    assert_eq!(err(&b), PayloadError::TrailingBytes { declared, actual: declared + 3 });
}

#[test]
fn manifest_offset_beyond_the_file() {
    let b = sample_payload();
    let limit = b.len() as u64;
    let len = get_u64(&b, MANIFEST_LEN);
    let bad = with_header_u64(MANIFEST_OFFSET, limit + 100);
    assert_eq!(err(&bad), PayloadError::OutOfRange { part: Part::Manifest, offset: limit + 100, len, limit });
    assert_eq!(
        err(&bad).to_string(),
        format!("the manifest at offset {}, length {len}, is outside the body [56, {limit})", limit + 100)
    );
    // Inside the header is out of range too.
    assert_eq!(
        err(&with_header_u64(MANIFEST_OFFSET, 8)),
        PayloadError::OutOfRange { part: Part::Manifest, offset: 8, len, limit }
    );
}

#[test]
fn huge_declared_lengths() {
    let b = sample_payload();
    let limit = b.len() as u64;
    // Each of these would be a huge allocation if trusted; the file's length bounds them.
    assert_eq!(
        err(&with_header_u64(MANIFEST_LEN, 1 << 60)),
        PayloadError::OutOfRange { part: Part::Manifest, offset: 56, len: 1 << 60, limit }
    );
    let table = get_u64(&b, TABLE_OFFSET);
    assert_eq!(
        err(&with_header_u64(TABLE_LEN, u64::MAX - 100)),
        PayloadError::Overflow { part: Part::BlobTable, offset: table, len: u64::MAX - 100 }
    );
    assert_eq!(
        err(&with_header_u64(TOTAL_LEN, u64::MAX)),
        PayloadError::Truncated { part: Part::Payload, needed: u64::MAX, got: limit }
    );
    let (off, _) = blob0(&b);
    assert_eq!(
        err(&with_entry(0, off, 1 << 40, 1)),
        PayloadError::OutOfRange { part: Part::Blob(0), offset: off, len: 1 << 40, limit }
    );
}

fn blob0(b: &[u8]) -> (u64, u64) {
    let e = entry_at(b, 0);
    (get_u64(b, e), get_u64(b, e + 8))
}

#[test]
fn blob_range_overflowing_u64() {
    let bad = with_entry(0, u64::MAX - 10, 100, 1);
    assert_eq!(err(&bad), PayloadError::Overflow { part: Part::Blob(0), offset: u64::MAX - 10, len: 100 });
    assert_eq!(
        err(&bad).to_string(),
        format!("blob 0: offset {} + length 100 overflows a 64-bit integer", u64::MAX - 10)
    );
}

#[test]
fn overlapping_regions() {
    let b = sample_payload();
    let table = get_u64(&b, TABLE_OFFSET);
    // The blob table moved onto the manifest.
    assert_eq!(
        err(&with_header_u64(TABLE_OFFSET, 64)),
        PayloadError::Overlap { first: Part::Manifest, second: Part::BlobTable }
    );
    // A blob over the manifest, and over the table (both aligned offsets).
    assert_eq!(
        err(&with_entry(0, 64, 8, 1)),
        PayloadError::Overlap { first: Part::Manifest, second: Part::Blob(0) }
    );
    // The table is 80 bytes long, so a multiple of 64 lies inside it.
    let in_table = table.next_multiple_of(64);
    assert!(in_table < table + 80);
    assert_eq!(
        err(&with_entry(0, in_table, 8, 1)),
        PayloadError::Overlap { first: Part::BlobTable, second: Part::Blob(0) }
    );
    // Blob 1 over blob 0.
    let (off, _) = blob0(&b);
    assert_eq!(
        err(&with_entry(1, off, 37, 1)),
        PayloadError::Overlap { first: Part::Blob(0), second: Part::Blob(1) }
    );
}

#[test]
fn misaligned_blob() {
    let (off, len) = blob0(&sample_payload());
    assert_eq!(
        err(&with_entry(0, off + 4, len - 4, 1)),
        PayloadError::Misaligned { part: Part::Blob(0), offset: off + 4, align: 64 }
    );
}

#[test]
fn bad_blob_table() {
    let (off, len) = blob0(&sample_payload());
    assert_eq!(err(&with_entry(0, off, len, 9)), PayloadError::UnknownBlobKind { blob: 0, code: 9 });
    assert_eq!(err(&with_header_u64(TABLE_LEN, 79)), PayloadError::BlobTableLength { len: 79 });
}

#[test]
fn manifest_that_does_not_decode() {
    let mut b = sample_payload();
    // The manifest starts with the generator version (varint, byte 56) and the producer
    // string's length (varint, byte 57): make that length 2^32 - 1, far past the manifest.
    b[57..62].copy_from_slice(&[0xff, 0xff, 0xff, 0xff, 0x0f]);
    reseal(&mut b);
    assert_eq!(err(&b), PayloadError::Manifest { error: postcard::Error::DeserializeUnexpectedEnd });
    // One byte more in the manifest region than the manifest needs.
    let m = postcard::to_allocvec(&sample_manifest()).unwrap();
    let mut longer = m.clone();
    longer.push(0);
    assert_eq!(err(&assemble(&longer, &sample_blobs())), PayloadError::ManifestTrailing { unused: 1 });
}

#[test]
fn plan_index_out_of_range() {
    let e = manifest_err(|m| m.plan[1].args[1] = 9);
    assert_eq!(e, PayloadError::IndexOutOfRange { field: "plan[1].args[1]".into(), index: 9, len: 4 });
    assert_eq!(e.to_string(), "plan[1].args[1] = 9 is out of range (there are 4)");
    assert_eq!(
        manifest_err(|m| m.plan[0].kernel = 2),
        PayloadError::IndexOutOfRange { field: "plan[0].kernel".into(), index: 2, len: 2 }
    );
    assert_eq!(
        manifest_err(|m| m.kernels[1].blob = 4),
        PayloadError::IndexOutOfRange { field: "kernels[1].blob".into(), index: 4, len: 4 }
    );
}

#[test]
fn plan_arity_type_and_access() {
    assert_eq!(
        manifest_err(|m| m.plan[1].args.push(3)),
        PayloadError::ArityMismatch {
            field: "plan[1].args".into(),
            kernel: "relu".into(),
            params: 2,
            args: 3
        }
    );
    let e = manifest_err(|m| m.plan[0].args[0] = 1);
    assert_eq!(
        e,
        PayloadError::TypeMismatch {
            field: "plan[0].args[0]".into(),
            expected: "f32[2,3] (parameter `a` of `matmul`)".into(),
            found: "f32[3,4] (buffer `w`)".into(),
        }
    );
    // A parameter of another shape with the buffer's element count views it.
    let mut m = sample_manifest();
    m.kernels[0].params[0].shape = vec![3, 2];
    Payload::parse(&with_manifest(&m)).expect("a parameter viewing its buffer as f32[3,2]");
    let e = manifest_err(|m| {
        m.buffers[2].dtype = DType::I32;
    });
    assert_eq!(
        e,
        PayloadError::TypeMismatch {
            field: "plan[0].args[2]".into(),
            expected: "f32[2,4] (parameter `c` of `matmul`)".into(),
            found: "i32[2,4] (buffer `h`)".into(),
        }
    );
    // matmul updating its input x in place: a kernel may never write inputs or parameters.
    let e = manifest_err(|m| {
        m.buffers[0].shape = vec![2, 4];
        m.kernels[0].params[0].shape = vec![2, 4];
        m.kernels[0].params[0].access = Access::InOut;
    });
    assert_eq!(
        e,
        PayloadError::WritesReadOnly {
            field: "plan[0].args[0]".into(),
            buffer: "x".into(),
            role: Role::Input,
            access: Access::InOut,
        }
    );
    assert_eq!(
        e.to_string(),
        "plan[0].args[0]: input `x` is read-only but is passed as an `inout` parameter"
    );
    let e = manifest_err(|m| m.plan[1].args[1] = 0);
    assert_eq!(
        e,
        PayloadError::TypeMismatch {
            field: "plan[1].args[1]".into(),
            expected: "f32[2,4] (parameter `y` of `relu`)".into(),
            found: "f32[2,3] (buffer `x`)".into(),
        }
    );
    let e = manifest_err(|m| {
        m.buffers[2].role = Role::Param;
        m.buffers[2].source = Some(Source::Seeded(Init::Const(0.0)));
    });
    assert_eq!(
        e,
        PayloadError::WritesReadOnly {
            field: "plan[0].args[2]".into(),
            buffer: "h".into(),
            role: Role::Param,
            access: Access::Out,
        }
    );
    assert_eq!(e.to_string(), "plan[0].args[2]: param `h` is read-only but is passed as an `out` parameter");
}

#[test]
fn a_written_buffer_passed_twice() {
    let e = manifest_err(|m| m.plan[1].args = vec![2, 2]);
    assert_eq!(
        e,
        PayloadError::Aliased {
            field: "plan[1].args[1]".into(),
            buffer: "h".into(),
            first: "plan[1].args[0]".into()
        }
    );
    assert_eq!(
        e.to_string(),
        "plan[1].args[1]: buffer `h` is already passed as plan[1].args[0], and one of the two is written"
    );
    // Passing one buffer to two parameters that are only read is fine.
    let mut m = sample_manifest();
    m.kernels[1].params[1].access = Access::In;
    m.plan[1].args = vec![2, 2];
    assert!(Payload::parse(&with_manifest(&m)).is_ok());
}

#[test]
fn expected_outputs_are_checked() {
    assert_eq!(
        manifest_err(|m| m.expected[1].blob = 1),
        PayloadError::WrongBlobKind {
            field: "expected[1].blob".into(),
            blob: 1,
            found: BlobKind::ElfObject,
            expected: "expected-output"
        }
    );
    // out is f32[2,4] = 32 bytes; as f32[2,5] it needs 40.
    assert_eq!(
        manifest_err(|m| {
            m.buffers[3].shape = vec![2, 5];
            m.kernels[1].params[1].shape = vec![2, 5];
        }),
        PayloadError::SizeMismatch { field: "expected[0].blob".into(), expected: 40, found: 32 }
    );
    assert_eq!(
        manifest_err(|m| {
            m.expected.pop();
        }),
        PayloadError::Missing { field: "expected".into(), what: "the expected `out` for seeds[1]".into() }
    );
    assert_eq!(
        manifest_err(|m| m.expected[1].seed = 0),
        PayloadError::Duplicate { field: "expected[1]".into(), name: "seeds[0] `out`".into() }
    );
    assert_eq!(
        manifest_err(|m| m.expected.push(ExpectedOutput { seed: 1, buffer: 3, blob: 3 })),
        PayloadError::Duplicate { field: "expected[2]".into(), name: "seeds[1] `out`".into() }
    );
    assert_eq!(
        manifest_err(|m| m.expected[0].buffer = 2),
        PayloadError::BadValue {
            field: "expected[0].buffer".into(),
            value: "`h` (temp)".into(),
            rule: "expected values are for outputs"
        }
    );
    assert_eq!(
        manifest_err(|m| m.expected[0].seed = 5),
        PayloadError::IndexOutOfRange { field: "expected[0].seed".into(), index: 5, len: 2 }
    );
    // Out of order: seed 1 listed first.
    assert_eq!(
        manifest_err(|m| m.expected.swap(0, 1)),
        PayloadError::Missing { field: "expected".into(), what: "the expected `out` for seeds[0]".into() }
    );
}

#[test]
fn buffers_and_settings_are_checked() {
    assert_eq!(
        manifest_err(|m| m.generator_version = 99),
        PayloadError::GeneratorVersion { found: 99, supported: ekb_wire::seeded::GENERATOR_VERSION }
    );
    assert_eq!(
        manifest_err(|m| m.buffers[3].name = "x".into()),
        PayloadError::Duplicate { field: "buffers[3].name".into(), name: "x".into() }
    );
    assert_eq!(
        manifest_err(|m| m.buffers[0].source = None),
        PayloadError::Missing {
            field: "buffers[0].source".into(),
            what: "the source of the values of input `x`".into()
        }
    );
    // Initialisers are checked by the seeded generator's own rules.
    let e = manifest_err(|m| m.buffers[1].source = Some(Source::Seeded(Init::RandInt { lo: 0, hi: 3 })));
    assert_eq!(
        e,
        PayloadError::Init {
            field: "buffers[1].source".into(),
            error: InitError::WrongDType { init: "randint", dtype: "f32" }
        }
    );
    assert_eq!(e.to_string(), "buffers[1].source: `randint` initialises integer (i32, i8) tensors, not f32");
    assert_eq!(
        manifest_err(|m| m.buffers[0].source = Some(Source::Seeded(Init::Uniform { lo: 2.0, hi: 1.0 }))),
        PayloadError::Init {
            field: "buffers[0].source".into(),
            error: InitError::BadUniform { lo: 2.0, hi: 1.0 }
        }
    );
    assert_eq!(
        manifest_err(|m| m.buffers[1].shape = vec![12]),
        PayloadError::Init { field: "buffers[1].source".into(), error: InitError::KaimingRank { rank: 1 } }
    );
    assert_eq!(
        manifest_err(|m| m.buffers[3].source = Some(Source::Seeded(Init::Const(1.0)))),
        PayloadError::BadValue {
            field: "buffers[3].source".into(),
            value: "Seeded(Const(1.0))".into(),
            rule: "only inputs and params have a source"
        }
    );
    assert_eq!(
        manifest_err(|m| m.buffers[2].shape = vec![u64::MAX, 2]),
        PayloadError::BadValue {
            field: "buffers[2].shape".into(),
            value: format!("[{}, 2]", u64::MAX),
            rule: "a size in bytes that fits in the address space"
        }
    );
    assert_eq!(
        manifest_err(|m| m.tolerance.rtol = f64::NAN),
        PayloadError::BadValue {
            field: "tolerance.rtol".into(),
            value: "NaN".into(),
            rule: "a finite number >= 0"
        }
    );
    assert_eq!(
        manifest_err(|m| m.timing.min_samples = 5000),
        PayloadError::BadValue {
            field: "timing.min_samples".into(),
            value: "5000".into(),
            rule: "at most timing.max_samples"
        }
    );
    assert_eq!(
        manifest_err(|m| m.seeds.clear()),
        PayloadError::Missing { field: "seeds".into(), what: "at least one seed".into() }
    );
    assert_eq!(
        manifest_err(|m| m.kernels[0].launch =
            Launch::Grid { grid: [1; 3], block: [1; 3], shared_bytes: 0, shared_optin: false }),
        PayloadError::BadValue {
            field: "kernels[0].launch".into(),
            value: "Grid { grid: [1, 1, 1], block: [1, 1, 1], shared_bytes: 0, shared_optin: false }".into(),
            rule: "cpu-llvm kernels use the Cpu launch"
        }
    );
}

#[test]
fn every_prefix_and_every_single_byte_flip_is_an_error() {
    let b = sample_payload();
    for n in 0..b.len() {
        assert!(Payload::parse(&b[..n]).is_err(), "prefix of {n} bytes parsed");
    }
    for i in 0..b.len() {
        let mut c = b.clone();
        c[i] ^= 0x01;
        assert!(Payload::parse(&c).is_err(), "flip at {i} parsed");
    }
}

/// The data sample with one blob table entry replaced, re-sealed.
fn data_with_entry(i: usize, offset: u64, len: u64, code: u32) -> Vec<u8> {
    let mut b = data_payload();
    let e = entry_at(&b, i);
    set_u64(&mut b, e, offset);
    set_u64(&mut b, e + 8, len);
    b[e + 16..e + 20].copy_from_slice(&code.to_le_bytes());
    reseal(&mut b);
    b
}

fn data_manifest_err(edit: impl FnOnce(&mut Manifest)) -> PayloadError {
    let mut m = data_manifest();
    edit(&mut m);
    err(&with_data_manifest(&m))
}

#[test]
fn parameter_data_blobs_are_checked() {
    let b = data_payload();
    let e = entry_at(&b, 4);
    let (off, len) = (get_u64(&b, e), get_u64(&b, e + 8));
    assert_eq!(len, 48);
    let limit = b.len() as u64;
    // The data blob's range: past the end of the file, overflowing, misaligned.
    assert_eq!(
        err(&data_with_entry(4, off, len + 4, 6)),
        PayloadError::OutOfRange { part: Part::Blob(4), offset: off, len: len + 4, limit }
    );
    assert_eq!(
        err(&data_with_entry(4, u64::MAX - 8, len, 6)),
        PayloadError::Overflow { part: Part::Blob(4), offset: u64::MAX - 8, len }
    );
    assert_eq!(
        err(&data_with_entry(4, off + 16, 32, 6)),
        PayloadError::Misaligned { part: Part::Blob(4), offset: off + 16, align: 64 }
    );
    // A shorter blob than the parameter needs (w is f32[3,4]: 48 bytes).
    assert_eq!(
        err(&data_with_entry(4, off, 44, 6)),
        PayloadError::SizeMismatch { field: "buffers[1].source".into(), expected: 48, found: 44 }
    );
    // The manifest pointing elsewhere: no such blob, a blob of another kind.
    assert_eq!(
        data_manifest_err(|m| m.buffers[1].source = Some(Source::Data { blob: 5, crc32: 0 })),
        PayloadError::IndexOutOfRange { field: "buffers[1].source".into(), index: 5, len: 5 }
    );
    assert_eq!(
        data_manifest_err(|m| m.buffers[1].source = Some(Source::Data { blob: 2, crc32: 0 })),
        PayloadError::WrongBlobKind {
            field: "buffers[1].source".into(),
            blob: 2,
            found: BlobKind::ExpectedOutput,
            expected: "param-data"
        }
    );
    // The shape and the blob disagree.
    assert_eq!(
        data_manifest_err(|m| {
            m.buffers[1].shape = vec![3, 5];
            m.kernels[0].params[1].shape = vec![3, 5];
        }),
        PayloadError::SizeMismatch { field: "buffers[1].source".into(), expected: 60, found: 48 }
    );
    // Only parameters take data: inputs are always seeded, outputs have no source.
    let e = data_manifest_err(|m| m.buffers[0].source = Some(Source::Data { blob: 4, crc32: 0 }));
    assert_eq!(
        e,
        PayloadError::BadValue {
            field: "buffers[0].source".into(),
            value: "Data { blob: 4, crc32: 0 }".into(),
            rule: "only params take their values from a data blob"
        }
    );
    assert!(matches!(
        data_manifest_err(|m| m.buffers[3].source = Some(Source::Data { blob: 4, crc32: 0 })),
        PayloadError::BadValue { rule: "only params take their values from a data blob", .. }
    ));
}

#[test]
fn parameter_data_must_match_its_checksum() {
    let declared = crc32(&f32s_to_le(&weights()));
    // The manifest declares another checksum than the blob's.
    let e = data_manifest_err(|m| m.buffers[1].source = Some(Source::Data { blob: 4, crc32: declared ^ 1 }));
    assert_eq!(
        e,
        PayloadError::DataChecksum {
            field: "buffers[1].source".into(),
            buffer: "w".into(),
            declared: declared ^ 1,
            computed: declared
        }
    );
    assert_eq!(
        e.to_string(),
        format!(
            "buffers[1].source: the data of param `w` has checksum {declared:#010x}, its source declares {:#010x}",
            declared ^ 1
        )
    );
    // One weight changed after the payload was written, with the file's checksums re-sealed:
    // only the data's own checksum notices.
    let mut b = data_payload();
    let off = get_u64(&b, entry_at(&b, 4)) as usize;
    b[off + 5] ^= 0x10;
    reseal(&mut b);
    let computed = crc32(&b[off..off + 48]);
    assert_eq!(
        err(&b),
        PayloadError::DataChecksum {
            field: "buffers[1].source".into(),
            buffer: "w".into(),
            declared,
            computed
        }
    );
}

#[test]
fn a_version_1_file_knows_no_parameter_data() {
    // Blob kind 6 came with version 2: in a version 1 file it is an unknown kind.
    let mut b = version_1_payload();
    let e = entry_at(&b, 3);
    b[e + 16..e + 20].copy_from_slice(&6u32.to_le_bytes());
    reseal(&mut b);
    assert_eq!(err(&b), PayloadError::UnknownBlobKind { blob: 3, code: 6 });
    // A version 2 manifest under a version 1 header is read with version 1's types: the first
    // buffer's source (`Some`, `Seeded` = 0, `Uniform` = 0, two f64) reads as an initialiser
    // `Uniform` one byte early, every later byte is shifted, and the next buffer's name is no
    // longer text.
    let v2 = postcard::to_allocvec(&sample_manifest()).unwrap();
    assert_eq!(
        err(&assemble_version(1, &v2, &sample_blobs())),
        PayloadError::Manifest { error: postcard::Error::DeserializeBadUtf8 }
    );
}

#[test]
fn gpu_limits_and_the_shared_memory_opt_in_are_checked() {
    let gpu = |m: &Manifest| {
        Payload::parse(&assemble(&postcard::to_allocvec(m).unwrap(), &gpu_blobs())).map(|_| ())
    };
    // The opt-in is CUDA's.
    let mut m = gpu_manifest();
    m.kernels[1].launch =
        Launch::Grid { grid: [1; 3], block: [8, 1, 1], shared_bytes: 65536, shared_optin: true };
    assert_eq!(
        gpu(&m).unwrap_err(),
        PayloadError::BadValue {
            field: "kernels[1].launch.shared_optin".into(),
            value: "true".into(),
            rule: "false outside CUDA (only CUDA opts in to shared memory above the static limit)",
        }
    );
    // GPU limits belong to GPU payloads, and allow at least one thread.
    let mut m = gpu_manifest();
    m.gpu.as_mut().unwrap().max_threads_per_block = 0;
    assert_eq!(
        gpu(&m).unwrap_err(),
        PayloadError::BadValue {
            field: "gpu.max_threads_per_block".into(),
            value: "0".into(),
            rule: "at least 1"
        }
    );
    let mut m = sample_manifest();
    m.gpu = gpu_manifest().gpu;
    let e = manifest_err(|x| *x = m.clone());
    assert_eq!(
        e,
        PayloadError::BadValue {
            field: "gpu".into(),
            value: "a GPU limits section".into(),
            rule: "absent for cpu-llvm payloads (only GPU backends carry GPU limits)",
        }
    );
}

/// The sample with a second temp `g` (f32[2,4], buffer 4) that a third step copies `h` into
/// and a fourth reads: `h` lives at steps 0-2, `g` at 2-3.
fn two_temps() -> Manifest {
    let mut m = sample_manifest();
    m.buffers.push(BufferDecl {
        name: "g".into(),
        dtype: DType::F32,
        shape: vec![2, 4],
        role: Role::Temp,
        source: None,
    });
    m.plan.push(LaunchStep { kernel: 1, args: vec![2, 4] });
    m.plan.push(LaunchStep { kernel: 1, args: vec![4, 3] });
    m
}

fn arena_err(slots: &[(u32, u64)], bytes: u64) -> PayloadError {
    let mut m = two_temps();
    m.arena = Some(Arena {
        bytes,
        slots: slots.iter().map(|&(buffer, offset)| ArenaSlot { buffer, offset }).collect(),
    });
    err(&with_manifest(&m))
}

#[test]
fn arena_slots_are_checked() {
    let bad = |e: PayloadError| match e {
        PayloadError::BadValue { field, value, rule } => (field, value, rule),
        e => panic!("{e:?}"),
    };
    // `h` and `g` are both live at step 2: they may not share bytes.
    let (field, value, rule) = bad(arena_err(&[(2, 0), (4, 0)], 32));
    assert_eq!(field, "arena.slots[1]");
    assert_eq!(value, "`g` shares bytes with `h` (arena.slots[0]) while both are live at step 2");
    assert_eq!(rule, "temps that share bytes are never live at the same plan step");
    // Side by side they may, and one byte of overlap is refused.
    let mut m = two_temps();
    m.arena = Some(Arena {
        bytes: 96,
        slots: vec![ArenaSlot { buffer: 2, offset: 0 }, ArenaSlot { buffer: 4, offset: 64 }],
    });
    assert_eq!(Payload::parse(&with_manifest(&m)).unwrap().manifest(), &m);
    assert_eq!(
        bad(arena_err(&[(4, 0), (2, 0)], 96)).0,
        "arena.slots[0]",
        "named: the one whose life starts later"
    );
    // Only temps (and params that only prepare steps read: none here), each once, aligned,
    // inside the arena.
    let only = "only temps, and params that only prepare steps read, live in the arena";
    assert_eq!(bad(arena_err(&[(3, 0)], 64)).2, only);
    assert_eq!(bad(arena_err(&[(1, 0)], 64)).2, only, "`w` is read by an execution step");
    assert!(matches!(arena_err(&[(2, 0), (2, 64)], 128), PayloadError::Duplicate { .. }));
    assert_eq!(bad(arena_err(&[(2, 32)], 64)).2, "a multiple of 64");
    assert_eq!(bad(arena_err(&[(2, 64)], 95)).2, "inside the arena (offset + size <= arena.bytes)");
    assert!(matches!(arena_err(&[(9, 0)], 64), PayloadError::IndexOutOfRange { .. }));
    // No arena for GPU payloads.
    let mut m = gpu_manifest();
    m.arena = Some(Arena { bytes: 0, slots: vec![] });
    let mut b = PayloadBuilder::new();
    for (code, data) in gpu_blobs() {
        b.add_blob(BlobKind::from_code(code).unwrap(), data);
    }
    assert!(matches!(b.finish(&m), Err(PayloadError::BadValue { field, .. }) if field == "arena"));
}

#[test]
fn temps_never_live_together_share_an_arena_slot() {
    // A third temp `k` after `g`: `h` (0-2) and `k` (4-5) never meet and share offset 0.
    let mut m = two_temps();
    m.buffers.push(BufferDecl {
        name: "k".into(),
        dtype: DType::F32,
        shape: vec![2, 4],
        role: Role::Temp,
        source: None,
    });
    m.plan.push(LaunchStep { kernel: 1, args: vec![4, 5] });
    m.plan.push(LaunchStep { kernel: 1, args: vec![5, 3] });
    assert_eq!(
        m.lifetimes(),
        [Some((0, 0)), Some((0, 0)), Some((0, 2)), Some((1, 5)), Some((2, 4)), Some((4, 5))]
    );
    m.arena = Some(Arena {
        bytes: 96,
        slots: vec![
            ArenaSlot { buffer: 2, offset: 0 },
            ArenaSlot { buffer: 4, offset: 64 },
            ArenaSlot { buffer: 5, offset: 0 },
        ],
    });
    assert_eq!(Payload::parse(&with_manifest(&m)).unwrap().manifest(), &m);
}

fn prepare_err(edit: impl FnOnce(&mut Manifest)) -> PayloadError {
    let mut m = prepare_manifest();
    edit(&mut m);
    err(&with_manifest(&m))
}

/// The `BadValue` parts of an error, or a panic naming it.
fn bad_value(e: PayloadError) -> (String, String, &'static str) {
    match e {
        PayloadError::BadValue { field, value, rule } => (field, value, rule),
        e => panic!("{e:?}"),
    }
}

#[test]
fn prepare_steps_are_checked() {
    let temp = |name: &str, role, source| BufferDecl {
        name: name.into(),
        dtype: DType::F32,
        shape: vec![3, 4],
        role,
        source,
    };
    // At least one execution step remains.
    for n in [3, 4, u32::MAX] {
        let (field, value, rule) = bad_value(prepare_err(|m| m.prepare_steps = n));
        assert_eq!(field, "prepare_steps");
        assert_eq!(value, format!("{n} of a plan of 3 step(s)"));
        assert_eq!(rule, "fewer than the plan's steps (at least one step is an execution step)");
    }
    let reads = "a prepare step reads only params and temps an earlier prepare step wrote";
    // An input (work on the inputs must stay in the timed executions).
    let e = prepare_err(|m| {
        let uniform = Init::Uniform { lo: -1.0, hi: 1.0 };
        m.buffers.push(temp("z", Role::Input, Some(Source::Seeded(uniform))));
        m.plan[0].args[0] = 5;
    });
    assert_eq!(bad_value(e), ("plan[0].args[0]".into(), "`z` (input, in)".into(), reads));
    // A temp no earlier prepare step wrote: never written, or written only later.
    let e = prepare_err(|m| {
        m.buffers.push(temp("wq", Role::Temp, None));
        m.plan[0].args[0] = 5;
    });
    assert_eq!(bad_value(e), ("plan[0].args[0]".into(), "`wq` (temp, in)".into(), reads));
    let e = prepare_err(|m| {
        m.buffers.push(temp("wq", Role::Temp, None));
        m.plan.insert(0, LaunchStep { kernel: 2, args: vec![4, 5] });
        m.prepare_steps = 2;
    });
    assert_eq!(bad_value(e), ("plan[0].args[0]".into(), "`wp` (temp, in)".into(), reads));
    // An `inout` parameter reads too.
    let e = prepare_err(|m| m.kernels[2].params[1].access = Access::InOut);
    assert_eq!(bad_value(e), ("plan[0].args[1]".into(), "`wp` (temp, inout)".into(), reads));
    // In order, a chain of prepare steps is fine.
    let mut m = prepare_manifest();
    m.buffers.push(temp("wq", Role::Temp, None));
    m.plan.insert(1, LaunchStep { kernel: 2, args: vec![4, 5] });
    m.plan[2].args[1] = 5;
    m.prepare_steps = 2;
    assert_eq!(
        Payload::parse(&with_manifest(&m)).unwrap().manifest().prepared(),
        [false, false, false, false, true, true]
    );
    // A second step updating `wp` in place (`inout`) after the first wrote it.
    m.kernels.push(KernelDecl { name: "update".into(), ..m.kernels[2].clone() });
    m.kernels[3].params[1].access = Access::InOut;
    m.plan[1] = LaunchStep { kernel: 3, args: vec![1, 4] };
    m.plan[2].args[1] = 4;
    assert_eq!(Payload::parse(&with_manifest(&m)).unwrap().manifest(), &m);
    // A prepare step writes temps only.
    let e = prepare_err(|m| {
        m.buffers.push(temp("o2", Role::Output, None));
        m.plan[0].args[1] = 5;
    });
    assert_eq!(
        bad_value(e),
        ("plan[0].args[1]".into(), "`o2` (output, out)".into(), "a prepare step writes only temps")
    );
    // An execution step never writes a prepared temp.
    let e = prepare_err(|m| m.plan.push(LaunchStep { kernel: 2, args: vec![1, 4] }));
    assert_eq!(
        bad_value(e),
        (
            "plan[3].args[1]".into(),
            "`wp` (temp, out)".into(),
            "execution steps only read the temps prepare steps wrote"
        )
    );
    // A prepared temp keeps its values across executions: it has no slot in the arena.
    let e =
        prepare_err(|m| m.arena = Some(Arena { bytes: 64, slots: vec![ArenaSlot { buffer: 4, offset: 0 }] }));
    assert_eq!(
        bad_value(e),
        (
            "arena.slots[0]".into(),
            "`wp` (written by a prepare step)".into(),
            "prepared temps live apart (they keep their values across executions)"
        )
    );
    // The weight only the prepare step reads is spent after it: the arena may place it, and
    // the execution's temp `h` may reuse its bytes (live at steps 1-2, `w` at step 0 only).
    let mut m = prepare_manifest();
    assert_eq!(m.consumed_params(), [false, true, false, false, false]);
    m.arena = Some(Arena {
        bytes: 64,
        slots: vec![ArenaSlot { buffer: 1, offset: 0 }, ArenaSlot { buffer: 2, offset: 0 }],
    });
    assert_eq!(Payload::parse(&with_manifest(&m)).unwrap().manifest(), &m);
    // Two such params live at one prepare step may not share bytes: a second prepare step
    // `matmul(w0, w) -> wq` keeps `w` live until step 1, where `w0` is read.
    let uniform = Some(Source::Seeded(Init::Uniform { lo: -1.0, hi: 1.0 }));
    m.buffers.push(BufferDecl { shape: vec![2, 3], ..temp("w0", Role::Param, uniform) });
    m.buffers.push(BufferDecl { shape: vec![2, 4], ..temp("wq", Role::Temp, None) });
    m.plan.insert(1, LaunchStep { kernel: 0, args: vec![5, 1, 6] });
    m.prepare_steps = 2;
    assert_eq!(m.consumed_params(), [false, true, false, false, false, true, false]);
    m.arena.as_mut().unwrap().slots.push(ArenaSlot { buffer: 5, offset: 0 });
    let (field, value, rule) = bad_value(err(&with_manifest(&m)));
    assert_eq!(field, "arena.slots[2]");
    assert_eq!(value, "`w0` shares bytes with `w` (arena.slots[0]) while both are live at step 1");
    assert_eq!(rule, "temps that share bytes are never live at the same plan step");
    // GPU payloads under the same rules: the matmul reads the input `x`.
    let mut m = gpu_manifest();
    m.prepare_steps = 1;
    let e = Payload::parse(&assemble(&postcard::to_allocvec(&m).unwrap(), &gpu_blobs())).unwrap_err();
    let (field, value, rule) = bad_value(e);
    assert_eq!(field, "plan[0].args[0]");
    assert!(value.starts_with("`x` (input"), "{value}");
    assert_eq!(rule, "a prepare step reads only params and temps an earlier prepare step wrote");
}
