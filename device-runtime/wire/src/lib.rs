//! `ekb-wire`: what the host and the board must agree on bit for bit.
//!
//! `no_std` so the device runtime can use it unchanged. Its parts:
//! - [`init`] and [`seeded`]: the tensor initialisers and the seeded generator that turns
//!   (task, seed, tensor) into bit-identical data on every machine. They need no allocator.
//! - [`f16`]: exact conversions between IEEE binary16 bits and f32 (round to nearest even).
//! - [`payload`]: the self-contained payload file (header, postcard manifest, blobs), its
//!   builder and its validating, zero-copy parser. Needs `alloc`.
//! - [`protocol`]: the versioned request/response protocol in CRC-checked, length-prefixed
//!   frames, used over byte streams and, as files, for air-gapped boards. Needs `alloc`.
//! - [`stats`]: the statistics of timing samples and paired ratios both sides judge with.
//!
//! The `std` feature (the runtime and the host enable it) lets the CRC pick its fastest form at
//! run time and draws large seeded tensors on the machine's threads; the bytes are the same.
//!
//! `docs/protocol.md` describes the payload and frame layouts byte for byte; the checksums are
//! the IEEE CRC-32 ([`crc32`]).
#![no_std]

#[cfg(feature = "std")]
extern crate std;

extern crate alloc;

pub mod f16;
pub mod init;
pub mod payload;
pub mod protocol;
pub mod seeded;
pub mod stats;

pub use init::Init;

/// The CRC-32 of payloads and frames: the IEEE 802.3 polynomial `0x04C11DB7` in its reflected
/// form `0xEDB88320`, initial value `0xFFFFFFFF`, final XOR `0xFFFFFFFF` (the CRC of zlib, PNG
/// and Ethernet; `crc32(b"123456789") == 0xCBF43926`).
pub fn crc32(bytes: &[u8]) -> u32 {
    crc32fast::hash(bytes)
}
