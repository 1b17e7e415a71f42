//! Instance subsets of the suite: lists of `TASK BACKEND` lines in `tasks/`, and the rule that
//! chooses the agent subset (`tasks/agent-subset.txt`, the instances the agent arms are compared
//! on, docs/agent.md).
//!
//! The rule: [`AGENT_QUOTA`] instances per backend and level (12 of Level 1, 8 of Level 2, 3 of
//! Level 3: 23 per backend, 69 in all). Within a backend and level the tasks are grouped by
//! family (families in name order, tasks in name order within each), and the groups are taken
//! round-robin (each family's first task, then each family's second, ...) until the quota is
//! met, so the subset spreads over the operator families before it repeats one.
//!
//! What must stay true: the rule is a function of the suite alone (no randomness, no clock),
//! and the file in `tasks/` is exactly what it gives (a test compares them).

use super::{Backend, Suite, Task};
use ekb_ir::{Diagnostic, SourceFile, Span};
use std::collections::BTreeMap;
use std::path::Path;

/// Instances per (level, count), the same for every backend.
pub const AGENT_QUOTA: [(u8, usize); 3] = [(1, 12), (2, 8), (3, 3)];

/// The agent subset's file in the task folder.
pub const AGENT_SUBSET_FILE: &str = "agent-subset.txt";

/// One instance: a task and the backend it runs on.
pub type InstanceName = (String, Backend);

/// The agent subset of `suite` (see the module's comment), by backend, level, then name.
pub fn agent_subset(suite: &Suite) -> Vec<InstanceName> {
    let mut out = Vec::new();
    for backend in Backend::ALL {
        for (level, quota) in AGENT_QUOTA {
            let mut families: BTreeMap<&str, Vec<&Task>> = BTreeMap::new();
            for t in
                suite.tasks.iter().filter(|t| t.meta.level == level && t.meta.backends().contains(&backend))
            {
                families.entry(t.meta.family.as_str()).or_default().push(t);
            }
            for tasks in families.values_mut() {
                tasks.sort_by(|a, b| a.name.cmp(&b.name));
            }
            let mut picked: Vec<&str> = Vec::new();
            for round in 0.. {
                let before = picked.len();
                for tasks in families.values() {
                    if picked.len() < quota {
                        if let Some(t) = tasks.get(round) {
                            picked.push(&t.name);
                        }
                    }
                }
                if picked.len() == quota || picked.len() == before {
                    break;
                }
            }
            picked.sort_unstable();
            out.extend(picked.into_iter().map(|n| (n.to_string(), backend)));
        }
    }
    out
}

/// A subset as its file's text: a comment saying where it comes from, then `TASK BACKEND` lines.
pub fn render(instances: &[InstanceName], about: &str) -> String {
    let mut s = String::new();
    for line in about.lines() {
        s.push_str(&format!("# {line}\n"));
    }
    for (task, backend) in instances {
        s.push_str(&format!("{task} {}\n", backend.name()));
    }
    s
}

/// Reads a subset file: `TASK BACKEND` lines; `#` comments and blank lines are ignored.
pub fn read(file: &Path) -> Result<Vec<InstanceName>, Vec<Diagnostic>> {
    let text = std::fs::read_to_string(file).map_err(|e| {
        vec![Diagnostic::error(format!("cannot read the subset `{}`: {e}", file.display()))
            .with_hint(format!("the agent subset is `tasks/{AGENT_SUBSET_FILE}`"))]
    })?;
    let src = SourceFile::new(file.display().to_string(), text.clone());
    let mut out = Vec::new();
    let mut errors = Vec::new();
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let span = Span::new(offset, offset + line.trim_end().len());
        offset += line.len();
        let body = line.split('#').next().unwrap_or("").trim();
        if body.is_empty() {
            continue;
        }
        let words: Vec<&str> = body.split_whitespace().collect();
        match (words.as_slice(), words.get(1).and_then(|b| Backend::ALL.into_iter().find(|x| x.name() == *b)))
        {
            ([task, _], Some(b)) => out.push((task.to_string(), b)),
            _ => errors.push(
                src.locate(
                    Diagnostic::error("a subset line is a task and a backend")
                        .at(span)
                        .with_expected("`TASK cpu`, `TASK cuda` or `TASK opencl`"),
                ),
            ),
        }
    }
    if errors.is_empty() {
        Ok(out)
    } else {
        Err(errors)
    }
}

/// The instances of `list` that `suite` does not have, one diagnostic each.
pub fn missing(list: &[InstanceName], suite: &Suite) -> Vec<Diagnostic> {
    list.iter()
        .filter_map(|(task, backend)| match suite.get(task) {
            Err(d) => Some(d),
            Ok(t) if !t.meta.backends().contains(backend) => {
                Some(Diagnostic::error(format!("task `{task}` has no {} instance", backend.name())))
            }
            Ok(_) => None,
        })
        .collect()
}
