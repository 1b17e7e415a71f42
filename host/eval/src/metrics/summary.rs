//! Rates and spreads over groups of instance outcomes: Compile@k, Correct@k, Fast@p, the
//! speedup spread (geometric mean, median, min, max, with the count it is over), the peak
//! memory ratio and what the graph passes did (kernels and planned peak), for the pooled group and each backend, level, domain and backend × level.
//!
//! What must stay true: a rate's denominator is every planned instance of its group; the groups
//! of one kind partition the plan, so their counts sum to the pooled count; a spread is over the
//! instances that have a value, and says how many those are.

use super::outcome::InstanceOutcome;
use super::FAST_P;
use crate::results::{Instance, PassesRecord};
use serde::Serialize;
use std::cmp::Ordering;

/// How a group is chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum GroupKind {
    Pooled,
    Backend,
    Level,
    Domain,
    BackendLevel,
}

impl GroupKind {
    pub const ALL: [GroupKind; 5] =
        [GroupKind::Pooled, GroupKind::Backend, GroupKind::Level, GroupKind::Domain, GroupKind::BackendLevel];

    /// The name used in CSV and JSON.
    pub fn name(self) -> &'static str {
        match self {
            GroupKind::Pooled => "pooled",
            GroupKind::Backend => "backend",
            GroupKind::Level => "level",
            GroupKind::Domain => "domain",
            GroupKind::BackendLevel => "backend_level",
        }
    }

    /// The heading used in reports.
    pub fn title(self) -> &'static str {
        match self {
            GroupKind::Pooled => "Pooled",
            GroupKind::Backend => "By backend",
            GroupKind::Level => "By level",
            GroupKind::Domain => "By domain",
            GroupKind::BackendLevel => "By backend and level",
        }
    }
}

/// A set of instances: all of them, or those of one backend, level, domain, or backend and level.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct Group {
    pub kind: GroupKind,
    /// `all`, `cpu`, `L1`, `mobile`, `cpu L1`.
    pub label: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backend: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub level: Option<u8>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub domain: Option<String>,
}

impl Group {
    pub fn pooled() -> Group {
        Group { kind: GroupKind::Pooled, label: "all".into(), backend: None, level: None, domain: None }
    }

    pub fn backend(b: &str) -> Group {
        Group {
            kind: GroupKind::Backend,
            label: b.into(),
            backend: Some(b.into()),
            level: None,
            domain: None,
        }
    }

    pub fn level(l: u8) -> Group {
        Group { kind: GroupKind::Level, label: format!("L{l}"), backend: None, level: Some(l), domain: None }
    }

    pub fn domain(d: &str) -> Group {
        Group { kind: GroupKind::Domain, label: d.into(), backend: None, level: None, domain: Some(d.into()) }
    }

    pub fn backend_level(b: &str, l: u8) -> Group {
        Group {
            kind: GroupKind::BackendLevel,
            label: format!("{b} L{l}"),
            backend: Some(b.into()),
            level: Some(l),
            domain: None,
        }
    }

    /// Whether an instance belongs to this group.
    pub fn contains(&self, i: &Instance) -> bool {
        self.backend.as_ref().is_none_or(|b| *b == i.backend)
            && self.level.is_none_or(|l| l == i.level)
            && self.domain.as_ref().is_none_or(|d| *d == i.domain)
    }
}

/// A share of instances: `hits` of `of`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Rate {
    pub hits: usize,
    pub of: usize,
    /// `hits / of`; none for an empty group.
    pub share: Option<f64>,
}

impl Rate {
    pub fn new(hits: usize, of: usize) -> Rate {
        Rate { hits, of, share: (of > 0).then(|| hits as f64 / of as f64) }
    }
}

/// Fast@p: the share of instances with a counted speedup strictly above p.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct FastAt {
    pub p: f64,
    pub rate: Rate,
}

/// The spread of positive values (speedups): how many, and their geometric mean, median, min and
/// max (none when there are no values).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Spread {
    pub count: usize,
    pub geomean: Option<f64>,
    pub median: Option<f64>,
    pub min: Option<f64>,
    pub max: Option<f64>,
}

impl Spread {
    /// The spread of `values` (each finite and positive).
    pub fn of(values: &[f64]) -> Spread {
        let mut v = values.to_vec();
        v.sort_by(|a, b| a.partial_cmp(b).unwrap_or(Ordering::Equal));
        let n = v.len();
        let median = match n {
            0 => None,
            _ if n % 2 == 1 => Some(v[n / 2]),
            _ => Some((v[n / 2 - 1] + v[n / 2]) / 2.0),
        };
        Spread { count: n, geomean: geomean(&v), median, min: v.first().copied(), max: v.last().copied() }
    }
}

/// The geometric mean of positive values, through the mean of their logarithms.
pub fn geomean(values: &[f64]) -> Option<f64> {
    (!values.is_empty()).then(|| (values.iter().map(|v| v.ln()).sum::<f64>() / values.len() as f64).exp())
}

/// The peak-memory ratio (candidate / baseline) over the instances that have one.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct MemorySummary {
    pub count: usize,
    pub geomean_ratio: Option<f64>,
}

/// What the graph passes did over the instances that have a record
/// ([`super::OutcomeAtK::passes`]): the kernels without and with them, summed, and the geometric
/// mean of the planned peak with over without.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PassesSummary {
    pub count: usize,
    pub kernels_before: usize,
    pub kernels_after: usize,
    /// `kernels_after / kernels_before`; none without kernels.
    pub kernels_ratio: Option<f64>,
    /// Over the instances whose peaks are both above zero.
    pub geomean_peak_ratio: Option<f64>,
}

impl PassesSummary {
    pub fn of<'a>(records: impl IntoIterator<Item = &'a PassesRecord>) -> PassesSummary {
        let records: Vec<&PassesRecord> = records.into_iter().collect();
        let kernels_before = records.iter().map(|r| r.before.kernels).sum::<usize>();
        let kernels_after = records.iter().map(|r| r.after.kernels).sum::<usize>();
        let peaks: Vec<f64> = records
            .iter()
            .filter(|r| r.before.planned_peak_bytes > 0 && r.after.planned_peak_bytes > 0)
            .map(|r| r.after.planned_peak_bytes as f64 / r.before.planned_peak_bytes as f64)
            .collect();
        PassesSummary {
            count: records.len(),
            kernels_before,
            kernels_after,
            kernels_ratio: (kernels_before > 0).then(|| kernels_after as f64 / kernels_before as f64),
            geomean_peak_ratio: geomean(&peaks),
        }
    }
}

/// A group's metrics at one k.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AtK {
    pub k: u32,
    pub compile: Rate,
    pub correct: Rate,
    /// One per p of [`FAST_P`], in that order.
    pub fast: Vec<FastAt>,
    /// Over the instances with a counted speedup among their first k candidates.
    pub speedup: Spread,
    pub memory: MemorySummary,
    pub passes: PassesSummary,
}

impl AtK {
    /// Fast@p for one of the reported p.
    pub fn fast_at(&self, p: f64) -> Option<Rate> {
        self.fast.iter().find(|f| f.p == p).map(|f| f.rate)
    }
}

/// One group's metrics at every reported k.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GroupMetrics {
    pub group: Group,
    pub instances: usize,
    pub at: Vec<AtK>,
}

impl GroupMetrics {
    pub fn at_k(&self, k: u32) -> Option<&AtK> {
        self.at.iter().find(|a| a.k == k)
    }
}

/// Fast@p at k over some outcomes: instances whose best counted speedup within the first k
/// candidates is strictly above p, of all of them.
pub fn fast_rate<'a>(outcomes: impl IntoIterator<Item = &'a InstanceOutcome>, k: u32, p: f64) -> Rate {
    let (mut hits, mut of) = (0, 0);
    for o in outcomes {
        of += 1;
        if o.at_k(k).and_then(|a| a.best_speedup).is_some_and(|s| s > p) {
            hits += 1;
        }
    }
    Rate::new(hits, of)
}

fn at_k(outcomes: &[&InstanceOutcome], k: u32) -> AtK {
    let n = outcomes.len();
    let ats: Vec<_> = outcomes.iter().filter_map(|o| o.at_k(k)).collect();
    let speedups: Vec<f64> = ats.iter().filter_map(|a| a.best_speedup).collect();
    let ratios: Vec<f64> = ats.iter().filter_map(|a| a.memory_ratio).collect();
    AtK {
        k,
        compile: Rate::new(ats.iter().filter(|a| a.compiled).count(), n),
        correct: Rate::new(ats.iter().filter(|a| a.correct).count(), n),
        fast: FAST_P.iter().map(|&p| FastAt { p, rate: fast_rate(outcomes.iter().copied(), k, p) }).collect(),
        speedup: Spread::of(&speedups),
        memory: MemorySummary { count: ratios.len(), geomean_ratio: geomean(&ratios) },
        passes: PassesSummary::of(ats.iter().filter_map(|a| a.passes.as_ref())),
    }
}

/// The metrics of one group.
pub fn group_metrics(group: Group, outcomes: &[InstanceOutcome], ks: &[u32]) -> GroupMetrics {
    let members: Vec<&InstanceOutcome> = outcomes.iter().filter(|o| group.contains(&o.instance)).collect();
    GroupMetrics { instances: members.len(), at: ks.iter().map(|&k| at_k(&members, k)).collect(), group }
}

/// Known names first in the suite's order, then any other name alphabetically.
fn ordered(mut names: Vec<String>, known: &[&str]) -> Vec<String> {
    let rank = |n: &String| known.iter().position(|k| k == n).unwrap_or(known.len());
    names.sort_by(|a, b| rank(a).cmp(&rank(b)).then_with(|| a.cmp(b)));
    names.dedup();
    names
}

/// Every group of the plan, in report order: pooled, backends, levels, domains, backend × level.
pub fn plan_groups(instances: &[&Instance]) -> Vec<Group> {
    let backends = ordered(instances.iter().map(|i| i.backend.clone()).collect(), &["cpu", "cuda", "opencl"]);
    let domains =
        ordered(instances.iter().map(|i| i.domain.clone()).collect(), &["mobile", "robotics", "aiot"]);
    let mut levels: Vec<u8> = instances.iter().map(|i| i.level).collect();
    levels.sort_unstable();
    levels.dedup();
    let mut groups = vec![Group::pooled()];
    groups.extend(backends.iter().map(|b| Group::backend(b)));
    groups.extend(levels.iter().map(|&l| Group::level(l)));
    groups.extend(domains.iter().map(|d| Group::domain(d)));
    for b in &backends {
        for &l in &levels {
            if instances.iter().any(|i| i.backend == *b && i.level == l) {
                groups.push(Group::backend_level(b, l));
            }
        }
    }
    groups
}

/// The metrics of every group of the plan.
pub(crate) fn groups(outcomes: &[InstanceOutcome], ks: &[u32]) -> Vec<GroupMetrics> {
    let instances: Vec<&Instance> = outcomes.iter().map(|o| &o.instance).collect();
    plan_groups(&instances).into_iter().map(|g| group_metrics(g, outcomes, ks)).collect()
}
