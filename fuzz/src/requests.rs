//! A hand-written generator of structurally valid protocol requests from fuzzer bytes: every
//! request encodes and decodes, and its numbers are drawn around the bounds of
//! `docs/protocol.md` (zero, one, small legal values, the maximum, one past it, the type's
//! maximum, and NaN and infinities for the floats), so both sides of every bound are reached
//! quickly.

use arbitrary::{Result, Unstructured};
use ekb_wire::protocol::{
    PairedSettings, PayloadId, Request, TimingOverrides, MAX_ATTEMPTS, MAX_BOOTSTRAP_RESAMPLES,
    MAX_BUDGET_MS, MAX_CLIENT_NAME, MAX_SAMPLES, MAX_SEED_INDICES, MAX_THREADS, MAX_WARMUP,
};

/// A u64 around the bound `max`.
fn around(u: &mut Unstructured<'_>, max: u64) -> Result<u64> {
    Ok(match u.int_in_range(0..=7u8)? {
        0 => 0,
        1 => 1,
        2 => u.int_in_range(0..=4)?,
        3 => max,
        4 => max.saturating_add(1),
        5 => u64::MAX,
        6 => u.int_in_range(0..=max)?,
        _ => u.arbitrary()?,
    })
}

fn around_u32(u: &mut Unstructured<'_>, max: u32) -> Result<u32> {
    around(u, u64::from(max)).map(|v| u32::try_from(v).unwrap_or(u32::MAX))
}

fn float(u: &mut Unstructured<'_>) -> Result<f64> {
    Ok(match u.int_in_range(0..=5u8)? {
        0 => f64::NAN,
        1 => f64::INFINITY,
        2 => -1.0,
        3 => 1.0,
        4 => f64::from(u.int_in_range(0..=1000u16)?) / 1000.0,
        _ => u.arbitrary()?,
    })
}

fn option<T>(
    u: &mut Unstructured<'_>,
    f: impl FnOnce(&mut Unstructured<'_>) -> Result<T>,
) -> Result<Option<T>> {
    if u.arbitrary()? {
        f(u).map(Some)
    } else {
        Ok(None)
    }
}

fn timing(u: &mut Unstructured<'_>) -> Result<TimingOverrides> {
    Ok(TimingOverrides {
        warmup: option(u, |u| around_u32(u, MAX_WARMUP))?,
        min_samples: option(u, |u| around_u32(u, MAX_SAMPLES))?,
        max_samples: option(u, |u| around_u32(u, MAX_SAMPLES))?,
        target_rse: option(u, float)?,
        budget_ms: option(u, |u| around(u, MAX_BUDGET_MS))?,
        cold_cache: u.arbitrary()?,
    })
}

fn text(u: &mut Unstructured<'_>) -> Result<String> {
    let len = around(u, MAX_CLIENT_NAME as u64)?.min(4 * MAX_CLIENT_NAME as u64) as usize;
    Ok("x".repeat(len))
}

/// One request, of any kind.
pub fn request(u: &mut Unstructured<'_>) -> Result<Request> {
    let id = |u: &mut Unstructured<'_>| -> Result<PayloadId> { Ok(PayloadId(around(u, 2)?)) };
    Ok(match u.int_in_range(0..=6u8)? {
        0 => Request::Hello {
            min_version: u.arbitrary()?,
            max_version: u.arbitrary()?,
            client: text(u)?,
            client_version: text(u)?,
        },
        1 => Request::DeviceInfo,
        2 => Request::Load { payload: u.arbitrary()? },
        3 => {
            let seeds = option(u, |u| {
                let n = around(u, MAX_SEED_INDICES as u64)?.min(2 * MAX_SEED_INDICES as u64) as usize;
                (0..n).map(|_| around_u32(u, 4)).collect::<Result<Vec<u32>>>()
            })?;
            Request::Run {
                payload: id(u)?,
                seeds,
                timing: timing(u)?,
                threads: option(u, |u| around_u32(u, MAX_THREADS))?,
            }
        }
        4 => Request::PairedRun {
            baseline: id(u)?,
            candidate: id(u)?,
            settings: PairedSettings {
                timing: timing(u)?,
                threads: option(u, |u| around_u32(u, MAX_THREADS))?,
                order_seed: u.arbitrary()?,
                max_ci: float(u)?,
                attempts: around_u32(u, MAX_ATTEMPTS)?,
                bootstrap_resamples: around_u32(u, MAX_BOOTSTRAP_RESAMPLES)?,
                confidence: float(u)?,
            },
        },
        5 => Request::Unload { payload: id(u)? },
        _ => Request::Shutdown,
    })
}
