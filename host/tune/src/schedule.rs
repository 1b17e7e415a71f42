//! How a budget of trials is shared between the workloads of one tune: a budget per workload
//! (each tuned in turn to its count), or one total that a task scheduler spends where the
//! total latency gains most. Each workload first gets one batch; after that, the next batch
//! goes to the workload whose best time fell the most in milliseconds over its last batch, plus
//! a small exploration term that shrinks with the trials it has had (so a workload whose last
//! batch found nothing still gets another one now and then).
//!
//! What must stay true: no workload gets more trials than its budget (per-workload) and the
//! total never exceeds the total budget; a workload whose space has no new program left is not
//! scheduled again.

use crate::db::Db;
use crate::tuner::{Event, Tuner};

/// How many trials a tune may measure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Budget {
    /// Each workload up to this many trials.
    PerWorkload(usize),
    /// This many trials in all, shared by the scheduler.
    Total(usize),
}

/// The scheduler's estimate of what the next batch of a workload gains: the fall of its best
/// time over its last batch, plus the exploration term.
fn gain(before: Option<f64>, now: Option<f64>, trials: usize) -> f64 {
    let Some(now) = now else { return f64::INFINITY };
    let fell = before.map_or(0.0, |b| (b - now).max(0.0));
    fell + 0.05 * now / (1.0 + trials as f64).sqrt()
}

/// Runs `tuners` within `budget`, appending every record to `db`.
pub fn run(
    tuners: &mut [Tuner<'_>],
    db: &mut Db,
    budget: Budget,
    batch: usize,
    progress: &mut dyn FnMut(&Event),
) -> Result<(), String> {
    match budget {
        Budget::PerWorkload(n) => {
            for t in tuners.iter_mut() {
                let left = n.saturating_sub(t.trials());
                t.step(db, left, n, progress)?;
            }
        }
        Budget::Total(n) => {
            let batch = batch.max(1);
            let mut used = 0;
            let mut before: Vec<Option<f64>> = vec![None; tuners.len()];
            let mut done = vec![false; tuners.len()];
            loop {
                // A workload not measured yet gains infinitely: the first round goes to each.
                let next = (0..tuners.len()).filter(|&i| !done[i]).max_by(|&a, &b| {
                    let (ta, tb) = (&tuners[a], &tuners[b]);
                    gain(before[a], ta.best_ms(), ta.trials()).total_cmp(&gain(
                        before[b],
                        tb.best_ms(),
                        tb.trials(),
                    ))
                });
                let Some(i) = next.filter(|_| used < n) else { break };
                before[i] = tuners[i].best_ms();
                let got = tuners[i].step(db, batch.min(n - used), n, progress)?;
                used += got;
                // A workload with no correct point after its batch has nothing to improve on.
                done[i] = got == 0 || tuners[i].summary().exhausted || tuners[i].best_ms().is_none();
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::gain;

    #[test]
    fn the_workload_whose_best_fell_most_gains_most() {
        // 10 ms -> 8 ms beats 1 ms -> 0.5 ms: total latency is what counts.
        assert!(gain(Some(10.0), Some(8.0), 16) > gain(Some(1.0), Some(0.5), 16));
        // Nothing measured yet: first.
        assert_eq!(gain(None, None, 0), f64::INFINITY);
        // No progress: the exploration term only, shrinking with trials.
        assert!(gain(Some(4.0), Some(4.0), 4) > gain(Some(4.0), Some(4.0), 64));
    }
}
