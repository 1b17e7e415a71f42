//! Fresh inputs during timing (threat (b) of `docs/runtime.md`, state kept between executions).
//!
//! Once per run, every side's inputs are drawn again for another of its seeds and checked by
//! one run, right before a batch of samples chosen at random among the first three (or after
//! the last batch, when timing stopped sooner); after that batch the outputs of its last timed
//! execution are compared with the new seed's expected values. A kernel that replays outputs it
//! kept from an earlier execution (in memory it mapped itself, on the stack, in the runtime's
//! heap) instead of computing them from its inputs fails there, as `Correctness`, with the seed
//! and the batch in the evidence.
//!
//! What it must keep true: the batch is drawn in the parent from its clock when timing starts,
//! after the kernel process forked, so nothing in that process can know it; the switch happens
//! exactly once per run with two seeds or more (a run of one seed has nothing to switch to and
//! says so in its log); the final check after timing (`recheck`) compares with the seed the
//! inputs hold then, not the last checked one.

use super::{
    bind_params, first_mismatch, log, programs, read_back, run_seed, unchecked_writes, Proc, Side, Stop,
};
use crate::worker::Cmd;
use ekb_wire::protocol::{Failure, FailureKind, LogLevel};
use ekb_wire::stats::Rng;
use std::time::{SystemTime, UNIX_EPOCH};

/// The batches the switch is drawn among.
const FIRST_BATCHES: usize = 3;

/// Where a run stands with its one switch of inputs.
pub(super) struct Switch {
    /// The batch before which the inputs change.
    at: usize,
    /// Batches sent so far.
    batch: usize,
    /// Whether the switch (and its check) is done, or has nothing to do.
    done: bool,
}

/// A side that failed at the switch or its check, with the failure (the caller records it:
/// a single program's timing fails as a whole, a paired run fails that side).
pub(super) type Failed = Option<(usize, Failure)>;

impl Switch {
    /// Draws the batch from the parent's clock.
    pub(super) fn draw(sides: &mut [Side]) -> Switch {
        let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64);
        let at = Rng::new(nanos).below(FIRST_BATCHES);
        let done = sides.iter().any(|s| s.seeds.len() < 2);
        if done {
            for s in sides.iter_mut() {
                s.report.log.push(log(
                    LogLevel::Warn,
                    "one seed only: the inputs were not changed during timing, so outputs kept between \
                     executions would go unnoticed",
                ));
            }
        }
        Switch { at, batch: 0, done }
    }

    /// Before a batch: the switch, when this is its batch.
    pub(super) fn before_batch(&mut self, proc: &mut Proc, sides: &mut [Side]) -> Result<Failed, Stop> {
        if self.done || self.batch != self.at {
            return Ok(None);
        }
        switch(proc, sides)
    }

    /// After a batch: the check of its outputs, when it followed the switch.
    pub(super) fn after_batch(&mut self, proc: &mut Proc, sides: &mut [Side]) -> Result<Failed, Stop> {
        let this = self.batch;
        self.batch += 1;
        if self.done || this != self.at {
            return Ok(None);
        }
        self.done = true;
        spot_check(proc, sides, this)
    }

    /// After the last batch: when timing stopped before the drawn batch, the switch now, one
    /// untimed sample of every side, and its check.
    pub(super) fn finish(
        &mut self,
        proc: &mut Proc,
        sides: &mut [Side],
        reps: &[u32],
    ) -> Result<Failed, Stop> {
        if self.done {
            return Ok(None);
        }
        self.at = self.batch;
        if let Some(f) = self.before_batch(proc, sides)? {
            return Ok(Some(f));
        }
        let order: Vec<u8> = (0..sides.len() as u8).collect();
        let timeout = proc.exec_limit.saturating_mul(reps.iter().sum::<u32>().max(1));
        let cmd = Cmd::Sample { order, cold: sides[0].settings.cold_cache, reps: reps.to_vec(), dry: false };
        proc.sample(&cmd, timeout, &programs(sides))?;
        self.after_batch(proc, sides)
    }
}

/// Every side's guards and inputs checked ([`unchecked_writes`]), then its inputs (and
/// parameters) drawn for the seed after the one they hold, checked by one run: every side's
/// parameters bound and prepared first, then every side's inputs and run (each side's run even
/// after another side failed, so that every side's buffers hold one seed's values and the
/// checksums that go with them). The first failure is returned.
fn switch(proc: &mut Proc, sides: &mut [Side]) -> Result<Failed, Stop> {
    // What the batches before wrote would be drawn over.
    if let Some(failed) = unchecked_writes(sides) {
        return Ok(Some(failed));
    }
    let next: Vec<usize> = sides
        .iter()
        .map(|side| {
            let at = side.inputs.and_then(|i| side.seeds.iter().position(|&s| s == i)).unwrap_or(0);
            side.seeds[(at + 1) % side.seeds.len()]
        })
        .collect();
    let mut bound = Vec::with_capacity(sides.len());
    for (p, &seed) in next.iter().enumerate() {
        bound.push(bind_params(proc, sides, p, seed)?);
    }
    let mut failed = None;
    for (p, (&seed, params)) in next.iter().zip(bound).enumerate() {
        let (check, sums, violation, _) = run_seed(proc, sides, p, seed, params)?;
        let what = "with the inputs drawn again during timing, ";
        let side = &mut sides[p];
        side.sums = sums;
        side.inputs = Some(seed);
        match violation
            .or_else(|| first_mismatch(std::slice::from_ref(&check), FailureKind::Correctness, what))
        {
            Some(f) => {
                failed.get_or_insert((p, f));
            }
            None => side.report.log.push(log(
                LogLevel::Info,
                format!("timing: inputs drawn again for seed {seed} and checked before a batch of samples"),
            )),
        }
    }
    Ok(failed)
}

/// The outputs of the last timed execution of batch `batch` against the seed the inputs hold.
fn spot_check(proc: &mut Proc, sides: &mut [Side], batch: usize) -> Result<Failed, Stop> {
    read_back(proc, sides)?;
    for (p, side) in sides.iter().enumerate() {
        if let Some(f) = side.report.failure.clone() {
            return Ok(Some((p, f)));
        }
        let Some(seed) = side.inputs else { continue };
        let bufs = side.bufs.as_ref().expect("allocated buffers");
        let check = side.program().check(seed, bufs, |s, b| side.payload.expected(s, b));
        let what = format!(
            "timed executions of batch {} (inputs of seed {seed}) gave other outputs than the reference: ",
            batch + 1
        );
        if let Some(f) = first_mismatch(std::slice::from_ref(&check), FailureKind::Correctness, &what) {
            return Ok(Some((p, f)));
        }
    }
    Ok(None)
}
