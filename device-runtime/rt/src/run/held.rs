//! Held runs: one payload's kernel process kept between timed turns (`Hold`, `Turn`, `Release`
//! in `docs/protocol.md`), for a comparison whose other side runs outside the runtime (an
//! inference engine) and must alternate with it in many short turns.
//!
//! `Hold` does what a run does up to its timing: the memory section, the buffers, the kernel
//! process, every seed checked, then the warm-up that calibrates the executions per sample.
//! Each `Turn` warms up again (the other side's turn ran in between) and samples for its
//! budget in batches, never stopping sooner; the guards and inputs are checked after every
//! turn. The hold is one run for the switch of inputs (`fresh`): the inputs are drawn again
//! once, before a batch drawn among the first ones of all its turns, and checked after it.
//! `Release` does the switch if no turn reached it, compares the outputs once more and checks
//! guards and inputs (as a run does after timing), and ends the process.
//!
//! What it must keep true: every turn of one hold times the same process, buffers and code; a
//! failure in any request ends the hold (the kernel process is reaped, the report says why) and
//! nothing is timed after it; each answer carries the log lines added since the previous one,
//! so a host that keeps every answer has the run's whole log once.

use super::{
    check_sides, finish, fresh, host_gone, recheck, sample_batches, start, timing, unchecked_writes, warm_up,
    warm_up_and_calibrate, warm_up_runs, RunError, RunOptions, Side, Stop,
};
use crate::store::LoadedPayload;
use ekb_wire::protocol::{RunReport, TimingOverrides, MAX_SAMPLES};
use std::sync::Arc;

/// A payload's kernel process between turns.
pub struct Held {
    proc: super::Proc,
    sides: Vec<Side>,
    /// Executions per sample, calibrated once.
    reps: Vec<u32>,
    switch: fresh::Switch,
    /// Log lines of the side's report already sent in an answer.
    sent: usize,
    turns: u32,
}

/// What a request on a hold answered: the report, and the hold when it goes on.
pub type Answer = (RunReport, Option<Held>);

/// Starts the kernel process of `payload` and checks its seeds; the hold when every seed is
/// correct, else the report says why and nothing is held.
pub fn hold(
    payload: &Arc<LoadedPayload>,
    hidden: &[(usize, usize)],
    options: &RunOptions,
) -> Result<Answer, RunError> {
    options.check()?;
    let mut sides = vec![Side::new(payload, options, &TimingOverrides::default(), None)?];
    if !sides[0].ok() {
        return Ok((sides.remove(0).report, None));
    }
    let mut proc = match start(&mut sides, options, hidden, 1) {
        Ok(p) => p,
        Err(Stop::Failed(f)) => {
            sides[0].fail(f);
            return Ok((sides.remove(0).report, None));
        }
        Err(Stop::HostGone) => return Err(host_gone()),
    };
    check_sides(&mut proc, &mut sides).map_err(|_| host_gone())?;
    let mut reps = vec![1];
    if sides[0].ok() {
        match warm_up_and_calibrate(&mut proc, &sides) {
            Ok(r) => reps = r,
            Err(Stop::Failed(f)) => sides[0].fail(f),
            Err(Stop::HostGone) => return Err(host_gone()),
        }
    }
    let switch = fresh::Switch::draw(&mut sides);
    let held = Held { proc, sides, reps, switch, sent: 0, turns: 0 };
    Ok(held.answer())
}

impl Held {
    /// The address ranges of the hold's buffers, which no other kernel process may map while
    /// the hold lasts (`hidden` of the next run's process).
    pub fn hidden(&self) -> Vec<(usize, usize)> {
        self.sides
            .iter()
            .filter_map(|s| s.bufs.as_ref())
            .flat_map(|b| b.spans())
            .map(|r| (r.start, r.len()))
            .collect()
    }

    /// One turn: a warm-up, then samples for `budget_ms` (the hold's warm-up and cache settings
    /// apply), the guards and inputs checked after it. The report's `timing` is this turn's.
    pub fn turn(mut self, budget_ms: u64) -> Result<Answer, RunError> {
        self.turns += 1;
        let side = &mut self.sides[0];
        // Sampling stops at the budget only: no relative error is below -1, and no budget
        // holds the most samples a request may ask for.
        side.settings.budget_ms = budget_ms;
        side.settings.target_rse = -1.0;
        side.settings.max_samples = MAX_SAMPLES;
        side.report.timing = None;
        let warm = vec![0; warm_up_runs(side.settings.warmup, side.checked_ns) as usize];
        let sampled = warm_up(&mut self.proc, &self.sides, warm)
            .and_then(|_| sample_batches(&mut self.proc, &mut self.sides, &self.reps, &mut self.switch));
        match sampled {
            Ok((samples, stop)) => {
                let side = &mut self.sides[0];
                side.report.timing = Some(timing(samples, &side.settings, stop, side.clock(), self.reps[0]));
            }
            Err(Stop::Failed(f)) => self.sides[0].fail(f),
            Err(Stop::HostGone) => return Err(host_gone()),
        }
        if let Some((_, f)) = unchecked_writes(&self.sides) {
            self.sides[0].fail(f);
        }
        Ok(self.answer())
    }

    /// Ends the hold: the outputs compared once more, guards and inputs checked, the process
    /// reaped. The report holds the seeds and the last turn's timing.
    pub fn release(mut self) -> Result<RunReport, RunError> {
        match self.switch.finish(&mut self.proc, &mut self.sides, &self.reps) {
            Ok(Some((_, f))) | Err(Stop::Failed(f)) => self.sides[0].fail(f),
            Ok(None) => recheck(&mut self.proc, &mut self.sides).map_err(|_| host_gone())?,
            Err(Stop::HostGone) => return Err(host_gone()),
        }
        let turns = self.turns;
        self.sides[0].report.log.push(super::log(
            ekb_wire::protocol::LogLevel::Info,
            format!("held: {turns} turn(s) in one kernel process"),
        ));
        Ok(self.end())
    }

    /// The report so far with the log lines not sent yet; the hold unless it failed (then
    /// the process is reaped).
    fn answer(mut self) -> Answer {
        if self.sides[0].ok() {
            let mut report = self.sides[0].report.clone();
            report.log.drain(..self.sent);
            self.sent = self.sides[0].report.log.len();
            (report, Some(self))
        } else {
            (self.end(), None)
        }
    }

    /// Reaps the process; the report with the log lines not sent yet.
    fn end(mut self) -> RunReport {
        finish(self.proc, &mut self.sides);
        let mut report = self.sides.remove(0).report;
        report.log.drain(..self.sent);
        report
    }
}
