//! Metrics over stored evaluation runs: Compile@k, Correct@k, Fast@p, speedup, peak-memory and
//! graph-passes summaries per group (pooled, backend, level, domain, backend × level), the failure taxonomy,
//! and the flags a reader must review (speedups over 10×, unstable timings, baseline failures).
//!
//! Everything here is a pure function of a [`Run`]: the plan (`run.info.instances`) fixes the
//! denominators, so a planned instance without results, or with fewer than k results, counts as
//! failing for every missing sample. An instance's samples are its results ordered by `sample`;
//! "the first k" are sample indices `0..k`.
//!
//! What must stay true: every share is over all planned instances of its group (failures and
//! missing results included); a speedup counts only through
//! [`CandidateResult::counted_speedup`] (correct, no failure, baseline timed) and only when it is
//! finite and positive; "faster than p" is strictly greater, so a speedup equal to p is not fast;
//! the sum of a count over the groups of one kind equals the pooled count.
//!
//! - [`outcome`]: each planned instance reduced to what it achieved within its first k samples.
//! - [`summary`]: rates and spreads over a group of outcomes.
//! - [`failures`]: the failure taxonomy.
//! - [`flags`]: what must be reviewed by a person.

pub mod failures;
pub mod flags;
pub mod outcome;
pub mod summary;

#[cfg(test)]
pub(crate) mod fixture;
#[cfg(test)]
mod tests;

pub use failures::{FailureRow, Failures};
pub use flags::{BaselineFlag, Flags, SpeedupFlag, UnstableFlag};
pub use outcome::{InstanceOutcome, OutcomeAtK};
pub use summary::{AtK, FastAt, Group, GroupKind, GroupMetrics, MemorySummary, PassesSummary, Rate, Spread};

use crate::results::{BackendEnv, Run, TimingSettings};
use ekb_ir::Diagnostic;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// The thresholds p of Fast@p that every report gives.
pub const FAST_P: [f64; 6] = [0.0, 0.5, 0.8, 1.0, 1.5, 2.0];

/// Counted speedups above this are listed for review.
pub const FLAG_SPEEDUP: f64 = 10.0;

/// What a run was: its plan and environment, without the instance list.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunEnv {
    pub created: String,
    pub ekb_version: String,
    pub command: Vec<String>,
    pub candidates: String,
    /// What every speedup is measured against (`naive`, `default`, ...).
    pub baseline: String,
    pub samples: u32,
    pub seeds: Vec<u64>,
    pub timing: TimingSettings,
    pub backends: BTreeMap<String, BackendEnv>,
    pub tools: BTreeMap<String, String>,
    /// Planned instances.
    pub instances: usize,
    /// How many stored candidates are of each kind (`l0`, `l1`, `trace`, `l2`, `native`, or
    /// `none` for one without usable text): unified and native runs of one model side by side.
    pub kinds: BTreeMap<String, usize>,
}

/// Every metric of one run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunMetrics {
    /// The run's name in reports: its directory's name, or its candidates' origin when several
    /// runs share a directory name.
    pub label: String,
    pub dir: String,
    pub env: RunEnv,
    /// The k of every `at` list, ascending.
    pub ks: Vec<u32>,
    /// The p of every Fast@p list ([`FAST_P`]).
    pub ps: Vec<f64>,
    /// Pooled first, then by backend, level, domain, backend × level.
    pub groups: Vec<GroupMetrics>,
    /// Pooled first, then by backend.
    pub failures: Vec<Failures>,
    pub flags: Flags,
    /// The run's own warnings (torn lines, duplicates) and what these metrics found odd.
    pub warnings: Vec<String>,
    /// Every planned instance, in plan order.
    pub outcomes: Vec<InstanceOutcome>,
}

impl RunMetrics {
    /// The metrics of one group, if the run has it.
    pub fn group(&self, kind: GroupKind, label: &str) -> Option<&GroupMetrics> {
        self.groups.iter().find(|g| g.group.kind == kind && g.group.label == label)
    }

    /// The groups of one kind, in report order.
    pub fn groups_of(&self, kind: GroupKind) -> impl Iterator<Item = &GroupMetrics> {
        self.groups.iter().filter(move |g| g.group.kind == kind)
    }

    /// The outcomes that belong to a group.
    pub fn outcomes_in<'a>(&'a self, group: &'a Group) -> impl Iterator<Item = &'a InstanceOutcome> {
        self.outcomes.iter().filter(move |o| group.contains(&o.instance))
    }
}

/// Several runs side by side, in the order given.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    pub runs: Vec<RunMetrics>,
}

impl Comparison {
    /// Every k that some run reports, ascending.
    pub fn ks(&self) -> Vec<u32> {
        let set: BTreeSet<u32> = self.runs.iter().flat_map(|r| r.ks.iter().copied()).collect();
        set.into_iter().collect()
    }

    /// The baselines of the runs, each once, in order of first appearance.
    pub fn baselines(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for r in &self.runs {
            if !out.contains(&r.env.baseline.as_str()) {
                out.push(&r.env.baseline);
            }
        }
        out
    }
}

/// The k values a run reports by default: 1, and its sample count when that is larger.
pub fn default_ks(samples: u32) -> Vec<u32> {
    if samples > 1 {
        vec![1, samples]
    } else {
        vec![1]
    }
}

/// Computes every metric of `run` at each k of `ks` (each between 1 and the run's samples).
pub fn run_metrics(run: &Run, label: &str, ks: &[u32]) -> Result<RunMetrics, Diagnostic> {
    let info = &run.info;
    let name = run.dir.display().to_string();
    if info.samples == 0 {
        return Err(Diagnostic::error(format!("run `{name}` plans 0 samples per instance"))
            .with_expected("a run whose `samples` is at least 1"));
    }
    let mut ks: Vec<u32> = ks.to_vec();
    ks.sort_unstable();
    ks.dedup();
    if ks.is_empty() {
        return Err(Diagnostic::error("no k to report metrics at"));
    }
    if let Some(&k) = ks.iter().find(|&&k| k == 0 || k > info.samples) {
        return Err(Diagnostic::error(format!(
            "k = {k} is outside run `{name}`, which has {} sample(s) per instance",
            info.samples
        ))
        .with_expected(format!("k between 1 and {}", info.samples)));
    }
    let mut warnings = run.warnings.clone();
    let slots = outcome::slots(run, &mut warnings);
    let outcomes = outcome::outcomes(&slots, &ks);
    let groups = summary::groups(&outcomes, &ks);
    let failures = failures::taxonomy(&slots, info.samples, &mut warnings);
    let flags = flags::flags(&slots);
    Ok(RunMetrics {
        label: label.to_string(),
        dir: name,
        env: RunEnv {
            created: info.created.clone(),
            ekb_version: info.ekb_version.clone(),
            command: info.command.clone(),
            candidates: info.candidates.clone(),
            baseline: info.baseline.clone(),
            samples: info.samples,
            seeds: info.seeds.clone(),
            timing: info.timing.clone(),
            backends: info.backends.clone(),
            tools: info.tools.clone(),
            instances: info.instances.len(),
            kinds: run.results.iter().fold(BTreeMap::new(), |mut kinds, r| {
                *kinds.entry(r.candidate.kind.clone()).or_insert(0) += 1;
                kinds
            }),
        },
        ks,
        ps: FAST_P.to_vec(),
        groups,
        failures,
        flags,
        warnings,
        outcomes,
    })
}

/// The label of each run: its directory's last component; where two runs share one, their
/// candidates' origin instead; where that is shared too, the origin numbered by position.
pub fn labels(runs: &[Run]) -> Vec<String> {
    let dir_name = |r: &Run| {
        r.dir.file_name().map_or_else(|| r.dir.display().to_string(), |n| n.to_string_lossy().into_owned())
    };
    let names: Vec<String> = runs.iter().map(dir_name).collect();
    let clash = |list: &[String], i: usize| list.iter().filter(|n| **n == list[i]).count() > 1;
    let first: Vec<String> = (0..runs.len())
        .map(|i| if clash(&names, i) { runs[i].info.candidates.clone() } else { names[i].clone() })
        .collect();
    (0..runs.len())
        .map(|i| if clash(&first, i) { format!("{} #{}", first[i], i + 1) } else { first[i].clone() })
        .collect()
}

/// The metrics of several runs side by side. `ks`: the k values to report (each must be within
/// every run's samples); `None` gives each run its [`default_ks`].
pub fn compare(runs: &[Run], ks: Option<&[u32]>) -> Result<Comparison, Diagnostic> {
    let labels = labels(runs);
    let runs = runs
        .iter()
        .zip(&labels)
        .map(|(run, label)| match ks {
            Some(ks) => run_metrics(run, label, ks),
            None => run_metrics(run, label, &default_ks(run.info.samples)),
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Comparison { runs })
}
