//! The counts table: tasks and instances by level × backend × domain, next to the complete
//! suite's targets, and tasks by family.
//!
//! An instance is a (task, backend) pair, and each domain has exactly one backend, so a level's
//! instances are the sum of its per-backend columns; the totals row is the sum of the level rows.

use super::{Backend, Task, INSTANCE_TARGET, LEVEL_TARGETS};
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write;

/// One row of the table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Row {
    /// `None` for the totals row.
    pub level: Option<u8>,
    pub tasks: usize,
    /// Tasks the complete suite has at this level (or in all).
    pub target_tasks: usize,
    /// Instances per backend, in [`Backend::ALL`] order (cpu, cuda, opencl).
    pub per_backend: [usize; 3],
    pub instances: usize,
}

/// The whole table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Counts {
    pub levels: Vec<Row>,
    pub total: Row,
    pub target_instances: usize,
    /// `(level, family) -> tasks`.
    pub families: BTreeMap<u8, BTreeMap<String, usize>>,
}

/// Counts the given tasks.
pub fn counts(tasks: &[&Task]) -> Counts {
    let mut levels: Vec<Row> = LEVEL_TARGETS
        .iter()
        .map(|&(l, target)| Row {
            level: Some(l),
            tasks: 0,
            target_tasks: target,
            per_backend: [0; 3],
            instances: 0,
        })
        .collect();
    let mut families: BTreeMap<u8, BTreeMap<String, usize>> = BTreeMap::new();
    for t in tasks {
        let Some(row) = levels.iter_mut().find(|r| r.level == Some(t.meta.level)) else { continue };
        row.tasks += 1;
        for b in t.meta.backends() {
            row.per_backend[Backend::ALL.iter().position(|x| *x == b).expect("a known backend")] += 1;
            row.instances += 1;
        }
        *families.entry(t.meta.level).or_default().entry(t.meta.family.clone()).or_default() += 1;
    }
    let mut total = Row {
        level: None,
        tasks: 0,
        target_tasks: LEVEL_TARGETS.iter().map(|(_, n)| n).sum(),
        per_backend: [0; 3],
        instances: 0,
    };
    for r in &levels {
        total.tasks += r.tasks;
        total.instances += r.instances;
        for (t, x) in total.per_backend.iter_mut().zip(r.per_backend) {
            *t += x;
        }
    }
    Counts { levels, total, target_instances: INSTANCE_TARGET, families }
}

/// The table as text.
pub fn render(c: &Counts) -> String {
    let mut s = String::new();
    let heads: Vec<String> =
        Backend::ALL.iter().map(|b| format!("{}/{}", b.name(), b.domain().name())).collect();
    let _ = writeln!(
        s,
        "{:<7} {:>12}  {:>12} {:>14} {:>12}  {:>15}",
        "level", "tasks/target", heads[0], heads[1], heads[2], "instances"
    );
    let row = |s: &mut String, label: String, r: &Row, target_instances: Option<usize>| {
        let inst = match target_instances {
            Some(t) => format!("{}/{t}", r.instances),
            None => r.instances.to_string(),
        };
        let _ = writeln!(
            s,
            "{label:<7} {:>12}  {:>12} {:>14} {:>12}  {inst:>15}",
            format!("{}/{}", r.tasks, r.target_tasks),
            r.per_backend[0],
            r.per_backend[1],
            r.per_backend[2]
        );
    };
    for r in &c.levels {
        row(&mut s, r.level.map_or(String::new(), |l| l.to_string()), r, None);
    }
    row(&mut s, "total".into(), &c.total, Some(c.target_instances));
    for (level, fams) in &c.families {
        let parts: Vec<String> = fams.iter().map(|(f, n)| format!("{f} {n}")).collect();
        let _ = writeln!(s, "level {level} families: {}", parts.join(", "));
    }
    s
}
