//! The requests the host sends and the responses the runtime returns, and the device
//! description.
//!
//! What it must keep true: the enums are append-only (new variants at the end, nothing removed,
//! reordered or changed within a protocol version); `Request::Hello`, `Response::HelloAck`,
//! `Response::Error` and the types they carry ([`DeviceSummary`], [`ErrorKind`]'s existing
//! variants) keep their encoding in every version, since peers decode them before they know
//! which version they share. Postcard is not self-describing: changing any other struct's
//! fields is a new protocol version.

use super::report::{CounterKind, PairedReport, RunReport};
use super::{MIN_PROTOCOL_VERSION, PROTOCOL_VERSION};
use crate::payload::Backend;
use alloc::boxed::Box;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;
use serde::{Deserialize, Serialize};

/// A payload loaded into a runtime session, as numbered by the runtime.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct PayloadId(pub u64);

impl fmt::Display for PayloadId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "payload #{}", self.0)
    }
}

/// Changes to a payload's timing settings for one run; `None` keeps the payload's value.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct TimingOverrides {
    pub warmup: Option<u32>,
    pub min_samples: Option<u32>,
    pub max_samples: Option<u32>,
    pub target_rse: Option<f64>,
    pub budget_ms: Option<u64>,
    pub cold_cache: Option<bool>,
}

impl TimingOverrides {
    /// `base` with these overrides applied.
    pub fn apply(&self, base: &crate::payload::TimingSettings) -> crate::payload::TimingSettings {
        crate::payload::TimingSettings {
            warmup: self.warmup.unwrap_or(base.warmup),
            min_samples: self.min_samples.unwrap_or(base.min_samples),
            max_samples: self.max_samples.unwrap_or(base.max_samples),
            target_rse: self.target_rse.unwrap_or(base.target_rse),
            budget_ms: self.budget_ms.unwrap_or(base.budget_ms),
            cold_cache: self.cold_cache.unwrap_or(base.cold_cache),
        }
    }
}

/// How a paired run samples and decides.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PairedSettings {
    /// Applied to both payloads' settings (warm-up, sample bounds, target relative standard
    /// error of the median ratio, budget, cold cache).
    pub timing: TimingOverrides,
    /// Worker threads for both sides; `None`: the runtime's default.
    pub threads: Option<u32>,
    /// Seeds the per-pair random order (A B or B A), so a session can be replayed.
    pub order_seed: u64,
    /// The pair is stable when half the width of the median ratio's interval (at
    /// `confidence`) is at most this fraction of the median (e.g. 0.02: within +-2%). Each
    /// side's spread is reported beside it, as a diagnostic (`docs/runtime.md`).
    pub max_ci: f64,
    /// How many times an unstable pair is measured before it is reported as unstable.
    pub attempts: u32,
    /// Bootstrap resamples for the confidence interval of the median ratio.
    pub bootstrap_resamples: u32,
    /// Confidence level of that interval (e.g. 0.95).
    pub confidence: f64,
}

impl PairedSettings {
    /// The evaluation protocol's defaults: the payloads' timing, stable within +-2%, two
    /// attempts, 1000 bootstrap resamples, a 95% interval.
    pub const DEFAULT: PairedSettings = PairedSettings {
        timing: TimingOverrides {
            warmup: None,
            min_samples: None,
            max_samples: None,
            target_rse: None,
            budget_ms: None,
            cold_cache: None,
        },
        threads: None,
        order_seed: 0,
        max_ci: 0.02,
        attempts: 2,
        bootstrap_resamples: 1000,
        confidence: 0.95,
    };
}

/// What the host asks. The first request of a session is `Hello`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Request {
    /// Opens the session: the client speaks protocol versions `min_version..=max_version`.
    /// Frozen in every version.
    Hello { min_version: u32, max_version: u32, client: String, client_version: String },
    /// Asks for the full device description.
    DeviceInfo,
    /// Loads a payload file (validated, code linked) for later runs.
    Load {
        #[serde(with = "bytes")]
        payload: Vec<u8>,
    },
    /// Runs a loaded payload: every seed (`seeds: None`) or the listed seed indices, checks the
    /// outputs, times it.
    Run { payload: PayloadId, seeds: Option<Vec<u32>>, timing: TimingOverrides, threads: Option<u32> },
    /// Times a candidate against a baseline, alternating them in one session.
    PairedRun { baseline: PayloadId, candidate: PayloadId, settings: PairedSettings },
    /// Forgets a loaded payload.
    Unload { payload: PayloadId },
    /// Ends the session; the runtime answers `Bye` and exits.
    Shutdown,
    /// Starts a kernel process for a loaded payload and checks its seeds (as `Run` does before
    /// timing), then keeps it for `Turn`s; answered with the `RunReport` so far (its failure,
    /// if any, means nothing is held). Since protocol version 3.
    Hold { payload: PayloadId, seeds: Option<Vec<u32>>, timing: TimingOverrides, threads: Option<u32> },
    /// Times the held payload for `budget_ms` (never stopping sooner); answered with a
    /// `RunReport` whose `timing` is this turn's and whose log holds the lines added since the
    /// last answer. A failure ends the hold. Since protocol version 3.
    Turn { payload: PayloadId, budget_ms: u64 },
    /// Compares the held payload's outputs once more, checks its guards and inputs and ends its
    /// kernel process; answered with the final `RunReport`. Since protocol version 3.
    Release { payload: PayloadId },
}

/// What the runtime answers: one response per request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Response {
    /// Answers `Hello`: the version both will speak from now on. Frozen in every version.
    HelloAck {
        version: u32,
        runtime: String,
        runtime_version: String,
        device: DeviceSummary,
    },
    DeviceInfo(DeviceInfo),
    /// The payload is loaded under `payload`; `kernels` are its kernel names; `warnings` are
    /// things the runtime noticed but accepted.
    Loaded {
        payload: PayloadId,
        kernels: Vec<String>,
        warnings: Vec<String>,
    },
    RunReport(RunReport),
    PairedReport(Box<PairedReport>),
    Unloaded {
        payload: PayloadId,
    },
    /// Answers `Shutdown`.
    Bye,
    /// The request could not be served; the session goes on. Frozen in every version.
    Error {
        kind: ErrorKind,
        message: String,
    },
}

impl Response {
    /// The answer to a `Hello` whose range does not meet this crate's.
    pub fn unsupported_version(min: u32, max: u32) -> Response {
        Response::Error {
            kind: ErrorKind::UnsupportedVersion,
            message: format!(
                "the client speaks protocol versions {min}..={max}, this runtime speaks \
                 {MIN_PROTOCOL_VERSION}..={PROTOCOL_VERSION}"
            ),
        }
    }
}

/// Why a request failed. Append-only; the existing variants are frozen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ErrorKind {
    /// A frame failed its checksum or declared an impossible length.
    BadFrame,
    /// A frame's body is not a request of the agreed version.
    BadMessage,
    /// No protocol version in common.
    UnsupportedVersion,
    /// A request other than `Hello` came before the version was agreed.
    NotNegotiated,
    /// No payload is loaded under that id.
    UnknownPayload,
    /// The payload file is invalid (the message carries the `PayloadError`).
    PayloadInvalid,
    /// The payload is valid but cannot be loaded here (unknown relocation, missing symbol).
    LoadFailed,
    /// The request needs something this runtime or device lacks (a GPU backend, a seed index
    /// the payload does not have).
    Unsupported,
    /// A fault of the runtime itself.
    Internal,
    /// A request field outside its bounds (`docs/protocol.md`, request bounds); the message
    /// names the field, the value and what would be legal.
    InvalidRequest,
}

impl ErrorKind {
    pub const fn name(self) -> &'static str {
        match self {
            ErrorKind::BadFrame => "bad-frame",
            ErrorKind::BadMessage => "bad-message",
            ErrorKind::UnsupportedVersion => "unsupported-version",
            ErrorKind::NotNegotiated => "not-negotiated",
            ErrorKind::UnknownPayload => "unknown-payload",
            ErrorKind::PayloadInvalid => "payload-invalid",
            ErrorKind::LoadFailed => "load-failed",
            ErrorKind::Unsupported => "unsupported",
            ErrorKind::Internal => "internal",
            ErrorKind::InvalidRequest => "invalid-request",
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The device in one line, sent with `HelloAck`. Frozen in every version.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceSummary {
    /// `x86_64` or `aarch64`.
    pub arch: String,
    pub cpu_model: String,
    pub cores: u32,
    pub memory_bytes: u64,
}

/// Whether something works here, and why not when it does not.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Availability {
    Available,
    Unavailable { reason: String },
}

impl Availability {
    pub fn is_available(&self) -> bool {
        matches!(self, Availability::Available)
    }
}

/// A group of identical cores (big or little cluster).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuCluster {
    /// The core's name as the system reports it (e.g. `Cortex-A76`), or empty if unknown.
    pub core: String,
    /// Logical CPU numbers.
    pub cpus: Vec<u32>,
    pub max_khz: Option<u64>,
}

/// Whether a performance counter can be read here.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CounterSupport {
    /// `cycles`, `instructions`, `cache-references`, `task-clock`, …
    pub name: String,
    pub kind: CounterKind,
    pub availability: Availability,
}

/// A GPU the runtime can drive.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GpuInfo {
    pub name: String,
    pub backend: Backend,
    pub memory_bytes: u64,
    pub compute_units: u32,
    /// Driver-reported limits and versions, as (name, value).
    pub attributes: Vec<(String, String)>,
}

/// The full device description.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceInfo {
    pub arch: String,
    pub cpu_model: String,
    pub cores: u32,
    pub clusters: Vec<CpuCluster>,
    pub memory_bytes: u64,
    pub page_size: u64,
    /// Operating system and kernel release.
    pub os: String,
    pub counters: Vec<CounterSupport>,
    /// Whether kernels can run under a system-call filter (seccomp).
    pub isolation: Availability,
    pub gpus: Vec<GpuInfo>,
}

/// Byte strings as postcard bytes (a length and the raw bytes) rather than a sequence of
/// numbers: a multi-megabyte payload encodes and decodes with one copy.
mod bytes {
    use alloc::vec::Vec;
    use core::fmt;
    use serde::de::{Error, Visitor};
    use serde::{Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &[u8], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bytes(v)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Vec<u8>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("bytes")
            }
            fn visit_bytes<E: Error>(self, v: &[u8]) -> Result<Vec<u8>, E> {
                Ok(v.to_vec())
            }
            fn visit_byte_buf<E: Error>(self, v: Vec<u8>) -> Result<Vec<u8>, E> {
                Ok(v)
            }
        }
        d.deserialize_byte_buf(V)
    }
}
