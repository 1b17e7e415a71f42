//! The protocol between host and runtime: postcard messages in CRC-checked, length-prefixed
//! frames over any byte stream (a pipe, ssh, adb, a serial line), and the same frames in files
//! for air-gapped boards.
//!
//! A frame is `[u32 LE body length][u32 LE CRC-32 of the body][body]`; the body is one postcard
//! [`Request`] or [`Response`]. The first request of a session is [`Request::Hello`], which
//! agrees on a protocol version ([`negotiate`]); a mismatch is answered with a typed
//! [`Response::Error`], never a dropped connection.
//!
//! What this module must keep true:
//! - [`FrameDecoder`] never trusts a length it has not checked against its maximum, and never
//!   holds more than the declared length of the current frame (its buffer grows with the bytes
//!   that actually arrive). Every malformed input is a [`ProtocolError`], never a panic.
//! - Every field of every request has a documented bound ([`Request::check`]); a runtime
//!   refuses a request outside them with `Error { InvalidRequest }` before acting on it.
//! - The message enums are append-only: a variant is never removed, reordered or changed
//!   within a protocol version, and new variants go at the end. `Hello`, `HelloAck` and `Error`
//!   are frozen across all versions, so that any two peers can negotiate and refuse.
//! - A report written to a file is byte-for-byte the frame that would have been streamed.

mod bounds;
mod message;
mod report;

pub use bounds::{
    check_threads, check_timing, RequestError, MAX_ATTEMPTS, MAX_BOOTSTRAP_RESAMPLES, MAX_BUDGET_MS,
    MAX_CLIENT_NAME, MAX_SAMPLES, MAX_SEED_INDICES, MAX_TARGET_RSE, MAX_THREADS, MAX_WARMUP,
};
pub use message::{
    Availability, CounterSupport, CpuCluster, DeviceInfo, DeviceSummary, ErrorKind, GpuInfo, PairedSettings,
    PayloadId, Request, Response, TimingOverrides,
};
pub use report::{
    AllocationCheck, Counter, CounterKind, CounterReading, Failure, FailureKind, LogLevel, LogLine,
    MemoryFault, MemoryReport, OutputCheck, PairSample, PairedReport, RatioStats, RunReport, ScopeBytes,
    SeedCheck, Stats, StopReason, Timing, Verdict,
};

use crate::crc32;
use alloc::vec::Vec;
use core::fmt;
use serde::de::DeserializeOwned;
use serde::Serialize;

/// The protocol version this crate speaks best.
pub const PROTOCOL_VERSION: u32 = 3;
/// The oldest protocol version this crate still speaks.
pub const MIN_PROTOCOL_VERSION: u32 = 2;
/// Length of the frame header: body length and body CRC.
pub const FRAME_HEADER_LEN: usize = 8;
/// The largest frame body (1 GiB): room for large payloads in a `Load`.
pub const MAX_FRAME_LEN: u32 = 1 << 30;

/// Why bytes are not a valid frame or message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProtocolError {
    /// A frame declares (or a message would need) a body longer than the maximum.
    Oversized { len: u64, max: u32 },
    /// The body does not match the CRC in its frame header.
    CrcMismatch { len: u32, stored: u32, computed: u32 },
    /// The stream or file ended inside a frame.
    Truncated { needed: u64, got: u64 },
    /// The body is not a message of this protocol version.
    Decode { error: postcard::Error },
    /// The body holds a message followed by bytes that belong to none.
    TrailingBytes { unused: u64 },
    /// A message could not be serialised.
    Encode { error: postcard::Error },
}

impl ProtocolError {
    /// The kind of [`Response::Error`] that answers this error.
    pub fn error_kind(&self) -> ErrorKind {
        match self {
            ProtocolError::Oversized { .. }
            | ProtocolError::CrcMismatch { .. }
            | ProtocolError::Truncated { .. } => ErrorKind::BadFrame,
            ProtocolError::Decode { .. } | ProtocolError::TrailingBytes { .. } => ErrorKind::BadMessage,
            ProtocolError::Encode { .. } => ErrorKind::Internal,
        }
    }
}

impl fmt::Display for ProtocolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProtocolError::Oversized { len, max } => {
                write!(f, "frame length {len} exceeds the maximum of {max} bytes")
            }
            ProtocolError::CrcMismatch { len, stored, computed } => write!(
                f,
                "frame of {len} bytes fails its checksum: stored {stored:#010x}, computed {computed:#010x}"
            ),
            ProtocolError::Truncated { needed, got } => {
                write!(f, "the stream ended inside a frame: {got} of {needed} bytes")
            }
            ProtocolError::Decode { error } => {
                write!(f, "the frame holds no message of protocol version {PROTOCOL_VERSION}: {error}")
            }
            ProtocolError::TrailingBytes { unused } => {
                write!(f, "the frame has {unused} bytes after its message")
            }
            ProtocolError::Encode { error } => write!(f, "cannot encode the message: {error}"),
        }
    }
}

impl core::error::Error for ProtocolError {}

/// The highest version both sides speak, given the peer's range `min..=max`; `None` when the
/// ranges do not meet (answer with [`Response::unsupported_version`]).
pub fn negotiate(min: u32, max: u32) -> Option<u32> {
    let v = max.min(PROTOCOL_VERSION);
    (min <= max && v >= min && v >= MIN_PROTOCOL_VERSION).then_some(v)
}

/// One message as a frame: header and postcard body.
pub fn encode_frame<T: Serialize + ?Sized>(msg: &T) -> Result<Vec<u8>, ProtocolError> {
    let mut out = postcard::serialize_with_flavor(msg, FrameVec(alloc::vec![0u8; FRAME_HEADER_LEN]))
        .map_err(|error| ProtocolError::Encode { error })?;
    let len = out.len() - FRAME_HEADER_LEN;
    let len = u32::try_from(len)
        .ok()
        .filter(|&l| l <= MAX_FRAME_LEN)
        .ok_or(ProtocolError::Oversized { len: len as u64, max: MAX_FRAME_LEN })?;
    let crc = crc32(&out[FRAME_HEADER_LEN..]);
    out[..4].copy_from_slice(&len.to_le_bytes());
    out[4..8].copy_from_slice(&crc.to_le_bytes());
    Ok(out)
}

/// A postcard output that appends to a vector with room for the frame header in front, so a
/// large body (a `Load` of a big payload) is written with one copy of each byte string.
struct FrameVec(Vec<u8>);

impl postcard::ser_flavors::Flavor for FrameVec {
    type Output = Vec<u8>;

    fn try_push(&mut self, b: u8) -> postcard::Result<()> {
        self.0.push(b);
        Ok(())
    }

    fn try_extend(&mut self, b: &[u8]) -> postcard::Result<()> {
        self.0.extend_from_slice(b);
        Ok(())
    }

    fn finalize(self) -> postcard::Result<Vec<u8>> {
        Ok(self.0)
    }
}

/// The message in a frame body (as returned by [`FrameDecoder::decode`] or [`split_frames`]).
pub fn decode_message<T: DeserializeOwned>(body: &[u8]) -> Result<T, ProtocolError> {
    let (msg, rest) = postcard::take_from_bytes(body).map_err(|error| ProtocolError::Decode { error })?;
    if rest.is_empty() {
        Ok(msg)
    } else {
        Err(ProtocolError::TrailingBytes { unused: rest.len() as u64 })
    }
}

/// The frame bodies of a whole buffer (a report file), borrowed from it. The buffer must be a
/// sequence of complete frames.
pub fn split_frames(mut bytes: &[u8]) -> Result<Vec<&[u8]>, ProtocolError> {
    // Every frame takes at least its header, so the count is bounded by the buffer.
    let mut bodies = Vec::new();
    while !bytes.is_empty() {
        let Some((head, rest)) = bytes.split_first_chunk::<FRAME_HEADER_LEN>() else {
            return Err(ProtocolError::Truncated {
                needed: FRAME_HEADER_LEN as u64,
                got: bytes.len() as u64,
            });
        };
        let (len, stored) = read_frame_header(head);
        if len > MAX_FRAME_LEN {
            return Err(ProtocolError::Oversized { len: u64::from(len), max: MAX_FRAME_LEN });
        }
        if rest.len() < len as usize {
            return Err(ProtocolError::Truncated {
                needed: (FRAME_HEADER_LEN + len as usize) as u64,
                got: bytes.len() as u64,
            });
        }
        let (body, rest) = rest.split_at(len as usize);
        let computed = crc32(body);
        if computed != stored {
            return Err(ProtocolError::CrcMismatch { len, stored, computed });
        }
        bodies.push(body);
        bytes = rest;
    }
    Ok(bodies)
}

fn read_frame_header(h: &[u8; FRAME_HEADER_LEN]) -> (u32, u32) {
    (u32::from_le_bytes([h[0], h[1], h[2], h[3]]), u32::from_le_bytes([h[4], h[5], h[6], h[7]]))
}

/// Splits a byte stream into frame bodies incrementally: feed whatever bytes arrive, in pieces
/// of any size, and take frames as they complete.
///
/// After a [`ProtocolError::CrcMismatch`] the decoder is at the next frame boundary and goes
/// on. After [`ProtocolError::Oversized`] the boundary is lost: the decoder has consumed the
/// bad header and takes the next bytes as a new frame header, so a receiver should answer with
/// an error and expect the peer to start again with a fresh frame.
#[derive(Debug)]
pub struct FrameDecoder {
    max_len: u32,
    head: [u8; FRAME_HEADER_LEN],
    head_filled: usize,
    /// The declared length and CRC of the frame being read, once its header is complete.
    current: Option<(u32, u32)>,
    body: Vec<u8>,
}

impl Default for FrameDecoder {
    fn default() -> FrameDecoder {
        FrameDecoder::new()
    }
}

impl FrameDecoder {
    /// A decoder accepting frames up to [`MAX_FRAME_LEN`].
    pub fn new() -> FrameDecoder {
        FrameDecoder::with_max_len(MAX_FRAME_LEN)
    }

    /// A decoder accepting frames up to `max_len` bytes (at most [`MAX_FRAME_LEN`]).
    pub fn with_max_len(max_len: u32) -> FrameDecoder {
        FrameDecoder {
            max_len: max_len.min(MAX_FRAME_LEN),
            head: [0; FRAME_HEADER_LEN],
            head_filled: 0,
            current: None,
            body: Vec::new(),
        }
    }

    pub fn max_len(&self) -> u32 {
        self.max_len
    }

    /// Consumes bytes from the front of `input` until a frame completes (returned) or `input`
    /// is empty (`Ok(None)`). Call again with the rest of `input` for further frames. Errors
    /// consume the offending frame (or, for an oversized length, its header).
    pub fn decode(&mut self, input: &mut &[u8]) -> Result<Option<Vec<u8>>, ProtocolError> {
        loop {
            let Some((len, stored)) = self.current else {
                let take = (FRAME_HEADER_LEN - self.head_filled).min(input.len());
                self.head[self.head_filled..self.head_filled + take].copy_from_slice(&input[..take]);
                self.head_filled += take;
                *input = &input[take..];
                if self.head_filled < FRAME_HEADER_LEN {
                    return Ok(None);
                }
                self.head_filled = 0;
                let (len, crc) = read_frame_header(&self.head);
                if len > self.max_len {
                    return Err(ProtocolError::Oversized { len: u64::from(len), max: self.max_len });
                }
                self.current = Some((len, crc));
                continue;
            };
            let len = len as usize;
            let take = (len - self.body.len()).min(input.len());
            let needed = self.body.len() + take;
            if needed > self.body.capacity() {
                // Grow geometrically, but never past the declared length.
                let target = needed.max(self.body.capacity().saturating_mul(2)).min(len);
                self.body.reserve_exact(target - self.body.len());
            }
            self.body.extend_from_slice(&input[..take]);
            *input = &input[take..];
            if self.body.len() < len {
                return Ok(None);
            }
            self.current = None;
            let body = core::mem::take(&mut self.body);
            let computed = crc32(&body);
            if computed != stored {
                return Err(ProtocolError::CrcMismatch { len: len as u32, stored, computed });
            }
            return Ok(Some(body));
        }
    }

    /// Bytes held of the frame being read (header and body).
    pub fn buffered(&self) -> usize {
        self.head_filled + self.body.len() + if self.current.is_some() { FRAME_HEADER_LEN } else { 0 }
    }

    /// Call when the stream ends: `Ok` at a frame boundary, [`ProtocolError::Truncated`] inside
    /// a frame (the peer vanished mid-message).
    pub fn finish(&self) -> Result<(), ProtocolError> {
        match self.current {
            None if self.head_filled == 0 => Ok(()),
            None => Err(ProtocolError::Truncated {
                needed: FRAME_HEADER_LEN as u64,
                got: self.head_filled as u64,
            }),
            Some((len, _)) => Err(ProtocolError::Truncated {
                needed: (FRAME_HEADER_LEN + len as usize) as u64,
                got: (FRAME_HEADER_LEN + self.body.len()) as u64,
            }),
        }
    }
}
