//! The payload file: one self-contained file per candidate, memory-mapped on the board.
//!
//! Layout (all integers little-endian; `docs/protocol.md` has the tables):
//!
//! ```text
//! [header: 56 bytes][manifest: postcard][blob table: 20 bytes per blob][blobs, 64-byte aligned]
//! ```
//!
//! Blobs hold kernel code, expected outputs and (since format version 2) the values of
//! parameters that come from data rather than from the seeded generator.
//!
//! Compatibility is append-only: a new format version may add blob kinds and change the
//! manifest's types, and this crate keeps reading every version in [`SUPPORTED_VERSIONS`] (a
//! manifest of an earlier version is decoded by its own types and converted); a blob kind newer than
//! the file's version is unknown in that file.
//!
//! What this module must keep true:
//! - [`Payload::parse`] reads nothing it has not bounds-checked: every offset and length is
//!   checked with overflow-safe arithmetic against the file before it is used, counts are
//!   bounded by the file size (no allocation grows with a declared length), and every index in
//!   the manifest is checked ([`Manifest::validate`]). A hostile file yields a [`PayloadError`],
//!   never a panic.
//! - Blobs are never copied: [`PayloadView`] hands out slices of the caller's bytes.
//! - [`PayloadBuilder::finish`] only returns bytes that [`Payload::parse`] accepts.

mod manifest;

pub use manifest::{
    Access, AllocDecl, Arena, ArenaSlot, Backend, BufferDecl, DType, ExpectedOutput, GpuLimits, KernelDecl,
    Launch, LaunchStep, Manifest, MemScope, MemoryPlan, ParamDecl, Role, Source, TimingSettings, Tolerance,
    ARENA_ALIGN, MAX_REPEAT,
};

use crate::crc32;
use crate::seeded::InitError;
use alloc::borrow::Cow;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

/// The first four bytes of every payload.
pub const MAGIC: [u8; 4] = *b"EKBP";
/// The format version this crate writes. Version 2 added parameter data (the `param-data`
/// blob kind and [`Source`]); version 3 added GPU launches' shared-memory opt-in
/// (`Launch::Grid::shared_optin`) and the target's GPU limits ([`Manifest::gpu`]); version 4
/// added the temp arena ([`Manifest::arena`]); version 5, the plan's prepare steps
/// ([`Manifest::prepare_steps`]); version 6, the repeat count ([`Manifest::repeat`]).
pub const FORMAT_VERSION: u16 = 6;
/// The format versions this crate reads.
pub const SUPPORTED_VERSIONS: &[u16] = &[1, 2, 3, 4, 5, 6];
/// Length of the fixed header.
pub const HEADER_LEN: usize = 56;
/// Length of one blob table entry: offset u64, length u64, kind u32.
pub const BLOB_ENTRY_LEN: usize = 20;
/// Alignment of every blob's offset in the file (a cache line; enough for any element type
/// once the file is memory-mapped at a page boundary).
pub const BLOB_ALIGN: u64 = 64;

/// Byte offsets of the header fields.
mod at {
    pub const MAGIC: usize = 0;
    pub const VERSION: usize = 4;
    pub const FLAGS: usize = 6;
    pub const TOTAL_LEN: usize = 8;
    pub const MANIFEST_OFFSET: usize = 16;
    pub const MANIFEST_LEN: usize = 24;
    pub const TABLE_OFFSET: usize = 32;
    pub const TABLE_LEN: usize = 40;
    pub const BODY_CRC: usize = 48;
    pub const HEADER_CRC: usize = 52;
}

/// What a blob holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BlobKind {
    /// An ELF relocatable object with CPU kernels.
    ElfObject,
    /// CUDA C source.
    CudaSource,
    /// PTX assembly.
    Ptx,
    /// OpenCL C source.
    OpenClSource,
    /// The expected value of one output under one seed, little-endian elements.
    ExpectedOutput,
    /// The values of one parameter, little-endian elements in its dtype (format version 2).
    ParamData,
}

impl BlobKind {
    pub const ALL: [BlobKind; 6] = [
        BlobKind::ElfObject,
        BlobKind::CudaSource,
        BlobKind::Ptx,
        BlobKind::OpenClSource,
        BlobKind::ExpectedOutput,
        BlobKind::ParamData,
    ];

    /// The kind's code in the blob table.
    pub const fn code(self) -> u32 {
        match self {
            BlobKind::ElfObject => 1,
            BlobKind::CudaSource => 2,
            BlobKind::Ptx => 3,
            BlobKind::OpenClSource => 4,
            BlobKind::ExpectedOutput => 5,
            BlobKind::ParamData => 6,
        }
    }

    /// The kind with this code in the newest format version.
    pub fn from_code(code: u32) -> Option<BlobKind> {
        BlobKind::ALL.into_iter().find(|k| k.code() == code)
    }

    /// The format version that introduced the kind; files of older versions do not know it.
    pub const fn since_version(self) -> u16 {
        match self {
            BlobKind::ParamData => 2,
            _ => 1,
        }
    }

    pub const fn name(self) -> &'static str {
        match self {
            BlobKind::ElfObject => "elf-object",
            BlobKind::CudaSource => "cuda-source",
            BlobKind::Ptx => "ptx",
            BlobKind::OpenClSource => "opencl-source",
            BlobKind::ExpectedOutput => "expected-output",
            BlobKind::ParamData => "param-data",
        }
    }
}

impl fmt::Display for BlobKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A region of the file that errors can name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    /// The whole file, as long as its header declares.
    Payload,
    Header,
    Manifest,
    BlobTable,
    Blob(u32),
}

impl fmt::Display for Part {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Part::Payload => f.write_str("the payload"),
            Part::Header => f.write_str("the header"),
            Part::Manifest => f.write_str("the manifest"),
            Part::BlobTable => f.write_str("the blob table"),
            Part::Blob(i) => write!(f, "blob {i}"),
        }
    }
}

/// Why bytes are not a valid payload. Each variant names what was wrong, where, and the limit.
#[derive(Debug, Clone, PartialEq)]
pub enum PayloadError {
    /// The file ends before `part` does.
    Truncated {
        part: Part,
        needed: u64,
        got: u64,
    },
    BadMagic {
        found: [u8; 4],
    },
    UnsupportedVersion {
        found: u16,
        supported: &'static [u16],
    },
    /// Flags this version does not define are set.
    UnknownFlags {
        flags: u16,
    },
    HeaderChecksum {
        stored: u32,
        computed: u32,
    },
    BodyChecksum {
        stored: u32,
        computed: u32,
    },
    /// The file is longer than the header's total length.
    TrailingBytes {
        declared: u64,
        actual: u64,
    },
    /// `offset + len` does not fit in u64.
    Overflow {
        part: Part,
        offset: u64,
        len: u64,
    },
    /// The region lies (partly) outside `[HEADER_LEN, limit)`.
    OutOfRange {
        part: Part,
        offset: u64,
        len: u64,
        limit: u64,
    },
    Overlap {
        first: Part,
        second: Part,
    },
    Misaligned {
        part: Part,
        offset: u64,
        align: u64,
    },
    /// The blob table's length is not a multiple of [`BLOB_ENTRY_LEN`].
    BlobTableLength {
        len: u64,
    },
    UnknownBlobKind {
        blob: u32,
        code: u32,
    },
    /// The manifest is not a postcard [`Manifest`] of this format version.
    Manifest {
        error: postcard::Error,
    },
    /// The manifest region is longer than the manifest it holds.
    ManifestTrailing {
        unused: u64,
    },
    /// The payload was made with another seeded generator than this one.
    GeneratorVersion {
        found: u32,
        supported: u32,
    },
    IndexOutOfRange {
        field: String,
        index: u64,
        len: u64,
    },
    ArityMismatch {
        field: String,
        kernel: String,
        params: u64,
        args: u64,
    },
    TypeMismatch {
        field: String,
        expected: String,
        found: String,
    },
    /// A plan step passes one buffer to two parameters and the kernel writes one of them (the
    /// kernel ABI promises kernels that written buffers do not overlap others).
    Aliased {
        field: String,
        buffer: String,
        first: String,
    },
    /// A plan step passes an input or parameter to a parameter the kernel writes.
    WritesReadOnly {
        field: String,
        buffer: String,
        role: Role,
        access: Access,
    },
    WrongBlobKind {
        field: String,
        blob: u32,
        found: BlobKind,
        expected: &'static str,
    },
    SizeMismatch {
        field: String,
        expected: u64,
        found: u64,
    },
    Duplicate {
        field: String,
        name: String,
    },
    Missing {
        field: String,
        what: String,
    },
    BadValue {
        field: String,
        value: String,
        rule: &'static str,
    },
    /// An input's or parameter's initialiser that the seeded generator refuses.
    Init {
        field: String,
        error: InitError,
    },
    /// A parameter's data blob does not have the checksum its source declares.
    DataChecksum {
        field: String,
        buffer: String,
        declared: u32,
        computed: u32,
    },
}

impl fmt::Display for PayloadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use PayloadError as E;
        match self {
            E::Truncated { part, needed, got } => {
                write!(f, "truncated payload: {part} needs {needed} bytes, the file has {got}")
            }
            E::BadMagic { found } => {
                write!(f, "not a payload: the file starts with {found:02x?}, payloads start with `EKBP`")
            }
            E::UnsupportedVersion { found, supported } => {
                write!(f, "payload format version {found} is not supported (this build reads {supported:?})")
            }
            E::UnknownFlags { flags } => {
                write!(f, "the header sets flags {flags:#06x}, which format version {FORMAT_VERSION} does not define")
            }
            E::HeaderChecksum { stored, computed } => write!(
                f,
                "header checksum mismatch: stored {stored:#010x}, computed {computed:#010x} (the header is corrupt)"
            ),
            E::BodyChecksum { stored, computed } => write!(
                f,
                "body checksum mismatch: stored {stored:#010x}, computed {computed:#010x} \
                 (the payload is corrupt or was cut and padded)"
            ),
            E::TrailingBytes { declared, actual } => {
                write!(f, "the header says the payload is {declared} bytes but the file has {actual}")
            }
            E::Overflow { part, offset, len } => {
                write!(f, "{part}: offset {offset} + length {len} overflows a 64-bit integer")
            }
            E::OutOfRange { part, offset, len, limit } => write!(
                f,
                "{part} at offset {offset}, length {len}, is outside the body [{HEADER_LEN}, {limit})"
            ),
            E::Overlap { first, second } => write!(f, "{first} and {second} overlap"),
            E::Misaligned { part, offset, align } => {
                write!(f, "{part} at offset {offset} is not aligned to {align} bytes")
            }
            E::BlobTableLength { len } => write!(
                f,
                "the blob table is {len} bytes, not a multiple of the entry length {BLOB_ENTRY_LEN}"
            ),
            E::UnknownBlobKind { blob, code } => write!(f, "blob {blob} has unknown kind code {code}"),
            E::Manifest { error } => write!(f, "the manifest does not decode: {error}"),
            E::ManifestTrailing { unused } => {
                write!(f, "the manifest region has {unused} bytes after the manifest")
            }
            E::GeneratorVersion { found, supported } => write!(
                f,
                "the payload needs seeded generator version {found}, this build has version {supported}"
            ),
            E::IndexOutOfRange { field, index, len } => {
                write!(f, "{field} = {index} is out of range (there are {len})")
            }
            E::ArityMismatch { field, kernel, params, args } => {
                write!(f, "{field}: kernel `{kernel}` takes {params} arguments, the plan passes {args}")
            }
            E::TypeMismatch { field, expected, found } => {
                write!(f, "{field}: expected {expected}, found {found}")
            }
            E::WritesReadOnly { field, buffer, role, access } => write!(
                f,
                "{field}: {role} `{buffer}` is read-only but is passed as an `{}` parameter",
                access.name()
            ),
            E::Aliased { field, buffer, first } => write!(
                f,
                "{field}: buffer `{buffer}` is already passed as {first}, and one of the two is written"
            ),
            E::WrongBlobKind { field, blob, found, expected } => {
                write!(f, "{field}: blob {blob} is {found}, expected {expected}")
            }
            E::SizeMismatch { field, expected, found } => {
                write!(f, "{field}: {found} bytes, expected {expected}")
            }
            E::Duplicate { field, name } => write!(f, "{field}: duplicate {name}"),
            E::Missing { field, what } => write!(f, "{field}: missing {what}"),
            E::BadValue { field, value, rule } => write!(f, "{field} = {value}: must be {rule}"),
            E::Init { field, error } => write!(f, "{field}: {error}"),
            E::DataChecksum { field, buffer, declared, computed } => write!(
                f,
                "{field}: the data of param `{buffer}` has checksum {computed:#010x}, its source declares \
                 {declared:#010x}"
            ),
        }
    }
}

impl core::error::Error for PayloadError {}

/// A region of the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Region {
    pub offset: u64,
    pub len: u64,
}

impl Region {
    /// The end offset; checked by [`Payload::parse`] before any region is used.
    fn end(self, part: Part) -> Result<u64, PayloadError> {
        self.offset.checked_add(self.len).ok_or(PayloadError::Overflow {
            part,
            offset: self.offset,
            len: self.len,
        })
    }

    /// The region as an index range of a file of `limit` bytes, after checking that it lies in
    /// the body `[HEADER_LEN, limit)`.
    fn within(self, part: Part, limit: u64) -> Result<core::ops::Range<usize>, PayloadError> {
        let end = self.end(part)?;
        if self.offset < HEADER_LEN as u64 || end > limit {
            return Err(PayloadError::OutOfRange { part, offset: self.offset, len: self.len, limit });
        }
        // end <= limit = the length of a slice in memory: both fit in usize.
        Ok(self.offset as usize..end as usize)
    }

    fn overlaps(self, other: Region) -> bool {
        // Only called on regions checked by `within`: the sums do not overflow. Empty regions
        // overlap nothing.
        self.len > 0
            && other.len > 0
            && self.offset < other.offset + other.len
            && other.offset < self.offset + self.len
    }
}

/// The fixed header, decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    pub version: u16,
    pub flags: u16,
    /// Length of the whole file, header included.
    pub total_len: u64,
    pub manifest: Region,
    pub blob_table: Region,
    /// CRC-32 of bytes `[HEADER_LEN, total_len)`.
    pub body_crc: u32,
    /// CRC-32 of header bytes `[0, 52)`.
    pub header_crc: u32,
}

impl Header {
    /// The 56 header bytes.
    pub fn to_bytes(&self) -> [u8; HEADER_LEN] {
        let mut h = [0u8; HEADER_LEN];
        h[at::MAGIC..at::MAGIC + 4].copy_from_slice(&MAGIC);
        h[at::VERSION..at::VERSION + 2].copy_from_slice(&self.version.to_le_bytes());
        h[at::FLAGS..at::FLAGS + 2].copy_from_slice(&self.flags.to_le_bytes());
        for (at, v) in [
            (at::TOTAL_LEN, self.total_len),
            (at::MANIFEST_OFFSET, self.manifest.offset),
            (at::MANIFEST_LEN, self.manifest.len),
            (at::TABLE_OFFSET, self.blob_table.offset),
            (at::TABLE_LEN, self.blob_table.len),
        ] {
            h[at..at + 8].copy_from_slice(&v.to_le_bytes());
        }
        h[at::BODY_CRC..at::BODY_CRC + 4].copy_from_slice(&self.body_crc.to_le_bytes());
        h[at::HEADER_CRC..at::HEADER_CRC + 4].copy_from_slice(&self.header_crc.to_le_bytes());
        h
    }

    /// Decodes the fields of a header (no checks; `h` is [`HEADER_LEN`] bytes).
    fn read(h: &[u8; HEADER_LEN]) -> Header {
        let u16_at = |i: usize| u16::from_le_bytes([h[i], h[i + 1]]);
        let u32_at = |i: usize| u32::from_le_bytes([h[i], h[i + 1], h[i + 2], h[i + 3]]);
        let u64_at = |i: usize| {
            let mut b = [0u8; 8];
            b.copy_from_slice(&h[i..i + 8]);
            u64::from_le_bytes(b)
        };
        Header {
            version: u16_at(at::VERSION),
            flags: u16_at(at::FLAGS),
            total_len: u64_at(at::TOTAL_LEN),
            manifest: Region { offset: u64_at(at::MANIFEST_OFFSET), len: u64_at(at::MANIFEST_LEN) },
            blob_table: Region { offset: u64_at(at::TABLE_OFFSET), len: u64_at(at::TABLE_LEN) },
            body_crc: u32_at(at::BODY_CRC),
            header_crc: u32_at(at::HEADER_CRC),
        }
    }
}

/// One entry of the blob table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlobEntry {
    pub kind: BlobKind,
    pub region: Region,
}

/// A blob: its kind and its bytes, borrowed from the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Blob<'a> {
    pub kind: BlobKind,
    pub data: &'a [u8],
}

/// The payload format's entry point: [`Payload::parse`]. (An uninhabited type: a namespace.)
pub enum Payload {}

impl Payload {
    /// Validates `bytes` as a payload and returns a view of it. Checks, in order: magic,
    /// version, header checksum, flags, total length, body checksum, the manifest and blob
    /// table regions, every blob's range and kind (known to the file's version), the manifest's
    /// decoding (with the types of the file's version) and every index in it, and the checksum
    /// of every parameter's data. Nothing is copied but the (small) manifest.
    pub fn parse(bytes: &[u8]) -> Result<PayloadView<'_>, PayloadError> {
        let file_len = bytes.len() as u64;
        let truncated = |part, needed| PayloadError::Truncated { part, needed, got: file_len };
        if bytes.len() >= 4 && bytes[..4] != MAGIC {
            return Err(PayloadError::BadMagic { found: [bytes[0], bytes[1], bytes[2], bytes[3]] });
        }
        let Some(head) = bytes.first_chunk::<HEADER_LEN>() else {
            return Err(truncated(Part::Header, HEADER_LEN as u64));
        };
        let header = Header::read(head);
        if !SUPPORTED_VERSIONS.contains(&header.version) {
            return Err(PayloadError::UnsupportedVersion {
                found: header.version,
                supported: SUPPORTED_VERSIONS,
            });
        }
        let computed = crc32(&head[..at::HEADER_CRC]);
        if computed != header.header_crc {
            return Err(PayloadError::HeaderChecksum { stored: header.header_crc, computed });
        }
        if header.flags != 0 {
            return Err(PayloadError::UnknownFlags { flags: header.flags });
        }
        if header.total_len > file_len {
            return Err(truncated(Part::Payload, header.total_len));
        }
        if header.total_len < file_len {
            return Err(PayloadError::TrailingBytes { declared: header.total_len, actual: file_len });
        }
        let computed = crc32(&bytes[HEADER_LEN..]);
        if computed != header.body_crc {
            return Err(PayloadError::BodyChecksum { stored: header.body_crc, computed });
        }

        let manifest_range = header.manifest.within(Part::Manifest, file_len)?;
        let table_range = header.blob_table.within(Part::BlobTable, file_len)?;
        if header.manifest.overlaps(header.blob_table) {
            return Err(PayloadError::Overlap { first: Part::Manifest, second: Part::BlobTable });
        }
        if header.blob_table.len % BLOB_ENTRY_LEN as u64 != 0 {
            return Err(PayloadError::BlobTableLength { len: header.blob_table.len });
        }
        let blobs = read_blob_table(&bytes[table_range], &header, file_len)?;

        let manifest_bytes = &bytes[manifest_range];
        let (manifest, rest) = manifest::decode(header.version, manifest_bytes)
            .map_err(|error| PayloadError::Manifest { error })?;
        if !rest.is_empty() {
            return Err(PayloadError::ManifestTrailing { unused: rest.len() as u64 });
        }
        manifest.validate(&blobs)?;
        let view = PayloadView { bytes, header, manifest, blobs };
        view.check_param_data()?;
        Ok(view)
    }
}

/// Decodes and checks the blob table: every kind known, every range inside the body, aligned,
/// in ascending order without overlap, and clear of the manifest and the table itself.
fn read_blob_table(table: &[u8], header: &Header, file_len: u64) -> Result<Vec<BlobEntry>, PayloadError> {
    // The count is bounded by the file: table.len() <= file_len.
    let mut blobs = Vec::with_capacity(table.len() / BLOB_ENTRY_LEN);
    // The previous blob's index and end.
    let mut prev: Option<(u32, u64)> = None;
    for (i, e) in table.chunks_exact(BLOB_ENTRY_LEN).enumerate() {
        // i < table.len() / 20 <= u32::MAX for any file below 80 GiB; beyond that the index
        // saturates in messages only.
        let index = u32::try_from(i).unwrap_or(u32::MAX);
        let part = Part::Blob(index);
        let word = |at: usize| {
            let mut b = [0u8; 8];
            b.copy_from_slice(&e[at..at + 8]);
            u64::from_le_bytes(b)
        };
        let region = Region { offset: word(0), len: word(8) };
        let code = u32::from_le_bytes([e[16], e[17], e[18], e[19]]);
        let kind = BlobKind::from_code(code)
            .filter(|k| k.since_version() <= header.version)
            .ok_or(PayloadError::UnknownBlobKind { blob: index, code })?;
        let end = region.within(part, file_len)?.end as u64;
        if region.offset % BLOB_ALIGN != 0 {
            return Err(PayloadError::Misaligned { part, offset: region.offset, align: BLOB_ALIGN });
        }
        for (other, r) in [(Part::Manifest, header.manifest), (Part::BlobTable, header.blob_table)] {
            if region.overlaps(r) {
                return Err(PayloadError::Overlap { first: other, second: part });
            }
        }
        if let Some((p, p_end)) = prev {
            if region.offset < p_end {
                return Err(PayloadError::Overlap { first: Part::Blob(p), second: part });
            }
        }
        prev = Some((index, end));
        blobs.push(BlobEntry { kind, region });
    }
    Ok(blobs)
}

/// A validated payload: the decoded header and manifest, and zero-copy access to the blobs.
#[derive(Debug, Clone)]
pub struct PayloadView<'a> {
    bytes: &'a [u8],
    header: Header,
    manifest: Manifest,
    blobs: Vec<BlobEntry>,
}

impl<'a> PayloadView<'a> {
    pub fn header(&self) -> &Header {
        &self.header
    }

    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }

    /// The whole file.
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    pub fn blob_count(&self) -> usize {
        self.blobs.len()
    }

    pub fn blob_entries(&self) -> &[BlobEntry] {
        &self.blobs
    }

    /// Blob `index`, borrowed from the file.
    pub fn blob(&self, index: u32) -> Option<Blob<'a>> {
        let e = self.blobs.get(index as usize)?;
        // Checked by `parse`: the region lies inside `bytes`.
        let start = e.region.offset as usize;
        Some(Blob { kind: e.kind, data: &self.bytes[start..start + e.region.len as usize] })
    }

    /// The values of buffer `buffer` when it is a parameter stored in the payload:
    /// `numel × element size` little-endian bytes in its dtype. `None` for every other buffer.
    pub fn param_data(&self, buffer: u32) -> Option<&'a [u8]> {
        let blob = self.manifest.buffers.get(buffer as usize)?.data_blob()?;
        self.blob(blob).map(|b| b.data)
    }

    /// Every parameter's data blob has the checksum its source declares (the manifest is
    /// validated: the blobs exist, of the parameter's size).
    fn check_param_data(&self) -> Result<(), PayloadError> {
        for (i, b) in self.manifest.buffers.iter().enumerate() {
            let Some(Source::Data { blob, crc32: declared }) = b.source else { continue };
            let data = self.blob(blob).map_or(&[][..], |b| b.data);
            let computed = crc32(data);
            if computed != declared {
                return Err(PayloadError::DataChecksum {
                    field: format!("buffers[{i}].source"),
                    buffer: b.name.clone(),
                    declared,
                    computed,
                });
            }
        }
        Ok(())
    }

    /// The code blob of kernel `kernel`.
    pub fn kernel_code(&self, kernel: usize) -> Option<Blob<'a>> {
        self.blob(self.manifest.kernels.get(kernel)?.blob)
    }

    /// The expected value of buffer `buffer` under `seeds[seed]`: `numel × element size`
    /// little-endian bytes (decode with [`le_f32s`], [`le_i32s`], [`le_i8s`] or [`le_f16s`]). `None` unless the buffer is an output.
    pub fn expected_output(&self, seed: u32, buffer: u32) -> Option<&'a [u8]> {
        let key = (seed, buffer);
        let e = self.manifest.expected.binary_search_by_key(&key, |e| (e.seed, e.buffer)).ok()?;
        self.blob(self.manifest.expected[e].blob).map(|b| b.data)
    }
}

/// The elements of a little-endian f32 blob (any alignment).
pub fn le_f32s(bytes: &[u8]) -> impl Iterator<Item = f32> + '_ {
    bytes.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
}

/// The elements of a little-endian i32 blob (any alignment).
pub fn le_i32s(bytes: &[u8]) -> impl Iterator<Item = i32> + '_ {
    bytes.chunks_exact(4).map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]]))
}

/// The elements of an i8 blob, one byte each.
pub fn le_i8s(bytes: &[u8]) -> impl Iterator<Item = i8> + '_ {
    bytes.iter().map(|&b| b as i8)
}

/// The bits of the elements of a little-endian f16 blob (any alignment); `f16::to_f32` gives
/// their values.
pub fn le_f16s(bytes: &[u8]) -> impl Iterator<Item = u16> + '_ {
    bytes.chunks_exact(2).map(|c| u16::from_le_bytes([c[0], c[1]]))
}

/// Little-endian bytes of f16 elements (their bits), for expected-output and param-data blobs.
pub fn f16s_to_le(values: &[u16]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// Little-endian bytes of f32 elements, for expected-output and param-data blobs.
pub fn f32s_to_le(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// Little-endian bytes of i32 elements, for expected-output and param-data blobs.
pub fn i32s_to_le(values: &[i32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// The bytes of i8 elements (two's complement), for expected-output and param-data blobs.
pub fn i8s_to_le(values: &[i8]) -> Vec<u8> {
    values.iter().map(|&v| v as u8).collect()
}

/// Writes payloads: add the blobs (each returns its index for the manifest), then
/// [`PayloadBuilder::finish`] with the manifest that refers to them.
#[derive(Debug, Default)]
pub struct PayloadBuilder<'a> {
    blobs: Vec<(BlobKind, Cow<'a, [u8]>)>,
}

impl<'a> PayloadBuilder<'a> {
    pub fn new() -> PayloadBuilder<'a> {
        PayloadBuilder { blobs: Vec::new() }
    }

    /// Adds a blob (borrowed or owned) and returns its index.
    pub fn add_blob(&mut self, kind: BlobKind, data: impl Into<Cow<'a, [u8]>>) -> u32 {
        self.blobs.push((kind, data.into()));
        u32::try_from(self.blobs.len() - 1).expect("a payload holds at most 2^32 blobs")
    }

    /// Lays out header, manifest, blob table and blobs, computes the checksums, and checks the
    /// result with [`Payload::parse`] (so an inconsistent manifest is an error here, not on the
    /// board).
    pub fn finish(self, manifest: &Manifest) -> Result<Vec<u8>, PayloadError> {
        let manifest_bytes =
            postcard::to_allocvec(manifest).map_err(|error| PayloadError::Manifest { error })?;
        let align = |x: usize| x.next_multiple_of(BLOB_ALIGN as usize);
        // Everything is in memory already, so these sums fit in usize.
        let table_offset = HEADER_LEN + manifest_bytes.len();
        let table_len = self.blobs.len() * BLOB_ENTRY_LEN;
        let mut end = table_offset + table_len;
        let mut table = Vec::with_capacity(table_len);
        for (kind, data) in &self.blobs {
            let offset = align(end);
            table.extend_from_slice(&(offset as u64).to_le_bytes());
            table.extend_from_slice(&(data.len() as u64).to_le_bytes());
            table.extend_from_slice(&kind.code().to_le_bytes());
            end = offset + data.len();
        }
        let mut out = Vec::with_capacity(end);
        out.resize(HEADER_LEN, 0);
        out.extend_from_slice(&manifest_bytes);
        out.extend_from_slice(&table);
        for (_, data) in &self.blobs {
            out.resize(align(out.len()), 0);
            out.extend_from_slice(data);
        }
        let mut header = Header {
            version: FORMAT_VERSION,
            flags: 0,
            total_len: out.len() as u64,
            manifest: Region { offset: HEADER_LEN as u64, len: manifest_bytes.len() as u64 },
            blob_table: Region { offset: table_offset as u64, len: table_len as u64 },
            body_crc: crc32(&out[HEADER_LEN..]),
            header_crc: 0,
        };
        header.header_crc = crc32(&header.to_bytes()[..at::HEADER_CRC]);
        out[..HEADER_LEN].copy_from_slice(&header.to_bytes());
        Payload::parse(&out)?;
        Ok(out)
    }
}
