//! Hostile lengths must not turn into huge allocations: a counting allocator measures the peak
//! heap growth while small files that declare enormous counts are parsed. (One test in this
//! binary, so no other test allocates at the same time.)

mod counting_alloc;
mod payload_common;

use counting_alloc::peak_during;
use ekb_wire::payload::*;
use payload_common::*;

/// A LEB128 varint, as postcard writes lengths.
fn varint(mut v: u64, out: &mut Vec<u8>) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

#[test]
fn declared_counts_never_become_allocations() {
    const LIMIT: usize = 64 << 10;

    // A manifest whose kernel list claims 2^60 entries and then ends.
    let mut m = Vec::new();
    varint(ekb_wire::seeded::GENERATOR_VERSION.into(), &mut m);
    m.extend_from_slice(&[0, 0, 0, 0]); // producer, task, target: empty; backend: cpu-llvm
    varint(1 << 60, &mut m);
    m.extend_from_slice(&[3, b'k', b'0']); // the first kernel's name, then nothing
    let file = assemble(&m, &sample_blobs());
    let (r, peak) = peak_during(|| Payload::parse(&file).map(|_| ()));
    assert_eq!(r, Err(PayloadError::Manifest { error: postcard::Error::DeserializeUnexpectedEnd }));
    assert!(peak < LIMIT, "parsing a {}-byte file allocated {peak} bytes", file.len());

    // The same with a shape of 2^62 dimensions in an otherwise complete first kernel.
    let mut m2 = m[..m.len() - 3].to_vec();
    m2.extend_from_slice(&[1, b'k', 1, b's', 0]); // name, symbol, blob 0
    varint(1, &mut m2); // one param
    m2.extend_from_slice(&[1, b'p', 0]); // its name and dtype
    varint(1 << 62, &mut m2); // its shape's length
    m2.extend_from_slice(&[2, 3]);
    let file = assemble(&m2, &sample_blobs());
    let (r, peak) = peak_during(|| Payload::parse(&file).map(|_| ()));
    assert_eq!(r, Err(PayloadError::Manifest { error: postcard::Error::DeserializeUnexpectedEnd }));
    assert!(peak < LIMIT, "parsing a {}-byte file allocated {peak} bytes", file.len());

    // Header lengths far beyond the file.
    let mut big = sample_payload();
    set_u64(&mut big, TABLE_LEN, 1 << 50);
    reseal(&mut big);
    let (r, peak) = peak_during(|| Payload::parse(&big).map(|_| ()));
    assert!(matches!(r, Err(PayloadError::OutOfRange { part: Part::BlobTable, .. })), "{r:?}");
    assert!(peak < LIMIT, "allocated {peak} bytes");

    // A valid payload needs little beyond its manifest.
    let ok = sample_payload();
    let (r, peak) = peak_during(|| Payload::parse(&ok).map(|_| ()));
    assert_eq!(r, Ok(()));
    assert!(peak < LIMIT, "allocated {peak} bytes");
}
