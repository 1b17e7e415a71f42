//! The measurement's check of itself (`ekb bench --self-check`): on every instance the
//! built-in default candidate is timed by the paired protocol, exactly as `ekb eval` times a
//! candidate, against two programs whose true ratio is known:
//!
//! - **A/A**: the same payload, loaded a second time. The true ratio is 1, so the reported
//!   interval must contain 1.
//! - **Known effect**: the same payload with two executions a sample (`Manifest::repeat`), each
//!   after the poison as a single one, so that both start from the same state. The true ratio
//!   (baseline time / candidate time) is 0.5, so the median must be within 2% of 0.5.
//!
//! An instance passes when both hold. A stability verdict is not asked for: a check that only
//! counted stable pairs would hide the very failures it exists to find.
//!
//! What it must keep true: both checks go through the runtime's `PairedRun`, with the
//! settings of the run, so they test what an evaluation measures; nothing is retried.

use super::device::{Answer, DeviceSession};
use super::{compile, Config, DeviceLink};
use crate::tasks::{Backend, Task};
use ekb_deploy::build::repeat_executions;
use ekb_ir::Diagnostic;
use ekb_lower::Schedule;
use ekb_wire::protocol::{PairedSettings, PayloadId, RatioStats};

/// How far from 0.5 the known-effect ratio may be, as a fraction of 0.5.
pub const KNOWN_EFFECT_TOLERANCE: f64 = 0.02;

/// One instance's checks.
#[derive(Debug, Clone)]
pub struct Check {
    pub task: String,
    /// The default candidate against itself.
    pub same: Option<RatioStats>,
    /// The default candidate against itself run twice.
    pub twice: Option<RatioStats>,
    /// Why a check has no ratio (the build, the runtime or a side's failure).
    pub error: Option<String>,
}

impl Check {
    /// The A/A interval contains 1.
    pub fn same_passes(&self) -> bool {
        self.same.as_ref().is_some_and(|r| r.ci_low <= 1.0 && 1.0 <= r.ci_high)
    }

    /// The known-effect median is 0.5 within [`KNOWN_EFFECT_TOLERANCE`].
    pub fn twice_passes(&self) -> bool {
        self.twice.as_ref().is_some_and(|r| (r.median - 0.5).abs() <= 0.5 * KNOWN_EFFECT_TOLERANCE)
    }

    pub fn passes(&self) -> bool {
        self.same_passes() && self.twice_passes()
    }
}

/// Runs both checks on the CPU instance of every task, reporting each as it finishes.
pub fn self_check(
    tasks: &[&Task],
    config: &Config,
    link: DeviceLink,
    finished: &mut dyn FnMut(&Check),
) -> Result<Vec<Check>, Diagnostic> {
    let mut session = DeviceSession::open(link.transport, config.serve_args())?;
    let target = config.target(Backend::Cpu);
    let mut out = Vec::new();
    for task in tasks.iter().filter(|t| t.meta.backends().contains(&Backend::Cpu)) {
        let mut check = Check { task: task.name.clone(), same: None, twice: None, error: None };
        let options = config.build_options(task);
        match compile::build_baseline(task, Schedule::Default, Backend::Cpu, target, &options) {
            Err(ds) => {
                check.error = Some(ds.iter().map(|d| d.to_string()).collect::<Vec<_>>().join("\n"));
            }
            Ok(built) => {
                let twice = repeat_executions(&built.payload, 2).map_err(|e| {
                    Diagnostic::error(format!("cannot repeat the executions of {}'s payload: {e}", task.name))
                })?;
                let settings = PairedSettings { order_seed: 0, ..config.paired };
                let mut ids = Vec::new();
                for bytes in [built.payload.clone(), built.payload, twice] {
                    match session.load(bytes) {
                        Answer::Ok(id) => ids.push(id),
                        Answer::Refused { kind, message } => {
                            check.error =
                                Some(format!("the runtime refused the payload ({kind}): {message}"));
                        }
                        Answer::Lost(l) => {
                            check.error = Some(format!("the runtime stopped answering: {}", l.0))
                        }
                        Answer::Down(d) => return Err(d),
                    }
                }
                let generation = session.generation();
                if let [base, copy, twice] = ids[..] {
                    check.same = ratio(&mut session, base, copy, settings, &mut check.error)?;
                    // A runtime that stopped answering was restarted without the payloads.
                    if session.generation() == generation {
                        check.twice = ratio(&mut session, base, twice, settings, &mut check.error)?;
                    }
                }
                if session.generation() == generation {
                    for id in ids {
                        session.unload(id);
                    }
                }
            }
        }
        finished(&check);
        out.push(check);
    }
    session.close();
    Ok(out)
}

/// The paired ratio of `baseline` over `candidate`, or `None` with the reason in `error`.
fn ratio(
    session: &mut DeviceSession,
    baseline: PayloadId,
    candidate: PayloadId,
    settings: PairedSettings,
    error: &mut Option<String>,
) -> Result<Option<RatioStats>, Diagnostic> {
    match session.paired(baseline, candidate, settings) {
        Answer::Ok(report) => {
            if report.ratio.is_none() {
                let why = [&report.baseline, &report.candidate]
                    .iter()
                    .find_map(|s| s.failure.as_ref().map(|f| format!("{}: {}", f.kind, f.evidence)));
                error.get_or_insert(why.unwrap_or_else(|| "no ratio".into()));
            }
            Ok(report.ratio)
        }
        Answer::Refused { kind, message } => {
            error.get_or_insert(format!("the runtime refused the run ({kind}): {message}"));
            Ok(None)
        }
        Answer::Lost(l) => {
            error.get_or_insert(format!("the runtime stopped answering: {}", l.0));
            Ok(None)
        }
        Answer::Down(d) => Err(d),
    }
}
