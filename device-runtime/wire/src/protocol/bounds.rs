//! The bounds of every field of every request (`docs/protocol.md`, request bounds), and
//! [`Request::check`], which a runtime applies to each decoded request before serving it.
//!
//! What it must keep true: every field a runtime acts on has a bound here, tight enough that a
//! request inside all of them is served in bounded time and memory (no field sizes an
//! allocation, a loop or a thread count without one); a request outside them is refused with a
//! [`RequestError`] naming the field, the value and the legal range, never served. Bounds that
//! depend on a loaded payload (a seed index below its seed count) are the runtime's to check.

use super::message::{PairedSettings, Request, TimingOverrides};
use alloc::format;
use alloc::string::{String, ToString};
use core::fmt;

/// The most worker threads a request may ask for (`threads`; 0 asks for one per allowed CPU).
pub const MAX_THREADS: u32 = 1024;
/// The most untimed warm-up executions (`timing.warmup`).
pub const MAX_WARMUP: u32 = 10_000;
/// The most timing samples, or pairs per attempt (`timing.max_samples`, `timing.min_samples`).
pub const MAX_SAMPLES: u32 = 100_000;
/// The longest sampling budget, per attempt (`timing.budget_ms`): one hour.
pub const MAX_BUDGET_MS: u64 = 3_600_000;
/// The largest target relative standard error (`timing.target_rse`).
pub const MAX_TARGET_RSE: f64 = 1.0;
/// The most seed indices a `Run` may list (`seeds`).
pub const MAX_SEED_INDICES: usize = 4096;
/// The most attempts at a stable pair (`settings.attempts`).
pub const MAX_ATTEMPTS: u32 = 10;
/// The most bootstrap resamples of the median ratio (`settings.bootstrap_resamples`).
pub const MAX_BOOTSTRAP_RESAMPLES: u32 = 10_000;
/// The longest `client` and `client_version` of a `Hello`, in bytes.
pub const MAX_CLIENT_NAME: usize = 256;

/// A request field outside its bounds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestError {
    /// The field, as `Request.field.subfield` (`Run.timing.max_samples`).
    pub field: String,
    /// The value received, as text.
    pub value: String,
    /// What would be legal (`1..=100000`).
    pub legal: String,
}

impl fmt::Display for RequestError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "`{}` is {}; it must be {} (docs/protocol.md, request bounds)",
            self.field, self.value, self.legal
        )
    }
}

impl core::error::Error for RequestError {}

fn refuse(field: &str, value: impl fmt::Display, legal: impl Into<String>) -> RequestError {
    RequestError { field: field.to_string(), value: format!("{value}"), legal: legal.into() }
}

/// `value` within `lo..=hi`.
fn within<T: PartialOrd + fmt::Display>(field: &str, value: T, lo: T, hi: T) -> Result<(), RequestError> {
    if value >= lo && value <= hi {
        Ok(())
    } else {
        Err(refuse(field, &value, format!("in {lo}..={hi}")))
    }
}

/// A finite `value` within `lo..=hi` (NaN is outside every range).
fn within_f64(field: &str, value: f64, lo: f64, hi: f64, legal: &str) -> Result<(), RequestError> {
    if value.is_finite() && value >= lo && value <= hi {
        Ok(())
    } else {
        Err(refuse(field, value, legal))
    }
}

/// Checks timing overrides (whatever `prefix` names them in messages, e.g. `Run.timing`). A
/// `min_samples` above the effective `max_samples` is legal: it is taken as `max_samples`.
pub fn check_timing(prefix: &str, t: &TimingOverrides) -> Result<(), RequestError> {
    let field = |name: &str| format!("{prefix}.{name}");
    if let Some(v) = t.warmup {
        within(&field("warmup"), v, 0, MAX_WARMUP)?;
    }
    if let Some(v) = t.min_samples {
        within(&field("min_samples"), v, 1, MAX_SAMPLES)?;
    }
    if let Some(v) = t.max_samples {
        within(&field("max_samples"), v, 1, MAX_SAMPLES)?;
    }
    if let Some(v) = t.target_rse {
        within_f64(
            &field("target_rse"),
            v,
            0.0,
            MAX_TARGET_RSE,
            &format!("a number in 0..={MAX_TARGET_RSE}"),
        )?;
    }
    if let Some(v) = t.budget_ms {
        within(&field("budget_ms"), v, 1, MAX_BUDGET_MS)?;
    }
    Ok(())
}

/// Checks a requested thread count.
pub fn check_threads(field: &str, threads: Option<u32>) -> Result<(), RequestError> {
    threads.map_or(Ok(()), |t| within(field, t, 0, MAX_THREADS))
}

fn check_paired(s: &PairedSettings) -> Result<(), RequestError> {
    check_timing("PairedRun.settings.timing", &s.timing)?;
    check_threads("PairedRun.settings.threads", s.threads)?;
    // A relative half-width: 0.02 is +-2%; above 1 every interval passes, and below 0 none does
    // (how a caller asks for a pair that can never be stable). Only NaN and infinities are refused.
    within_f64(
        "PairedRun.settings.max_ci",
        s.max_ci,
        f64::MIN,
        f64::MAX,
        "a finite number (the interval's relative half-width: 0.02 is +-2%)",
    )?;
    within("PairedRun.settings.attempts", s.attempts, 1, MAX_ATTEMPTS)?;
    within("PairedRun.settings.bootstrap_resamples", s.bootstrap_resamples, 1, MAX_BOOTSTRAP_RESAMPLES)?;
    if !(s.confidence > 0.0 && s.confidence < 1.0) {
        return Err(refuse(
            "PairedRun.settings.confidence",
            s.confidence,
            "a number strictly between 0 and 1",
        ));
    }
    Ok(())
}

impl Request {
    /// Every field against its bounds (`docs/protocol.md`, request bounds); the first field
    /// outside them.
    pub fn check(&self) -> Result<(), RequestError> {
        match self {
            Request::Hello { client, client_version, .. } => {
                within("Hello.client (bytes)", client.len(), 0, MAX_CLIENT_NAME)?;
                within("Hello.client_version (bytes)", client_version.len(), 0, MAX_CLIENT_NAME)
            }
            Request::Run { seeds, timing, threads, .. } => {
                if let Some(list) = seeds {
                    within("Run.seeds (entries)", list.len(), 1, MAX_SEED_INDICES)?;
                }
                check_timing("Run.timing", timing)?;
                check_threads("Run.threads", *threads)
            }
            Request::PairedRun { settings, .. } => check_paired(settings),
            Request::Hold { seeds, timing, threads, .. } => {
                if let Some(list) = seeds {
                    within("Hold.seeds (entries)", list.len(), 1, MAX_SEED_INDICES)?;
                }
                check_timing("Hold.timing", timing)?;
                check_threads("Hold.threads", *threads)
            }
            Request::Turn { budget_ms, .. } => within("Turn.budget_ms", *budget_ms, 1, MAX_BUDGET_MS),
            // A payload is checked when it is parsed; the others carry nothing to bound.
            Request::DeviceInfo
            | Request::Load { .. }
            | Request::Unload { .. }
            | Request::Release { .. }
            | Request::Shutdown => Ok(()),
        }
    }
}
