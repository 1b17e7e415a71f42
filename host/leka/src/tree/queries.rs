//! What the loop and `ekb tree` ask of the tree: the best verified node, the run's answer, the
//! path from the root to a node, a node's children and siblings, the gain of each level along a path, and the
//! attempts of one level under a node.
//!
//! What must stay true: a node counts as verified only when its evaluation was correct, had no
//! failure, its baseline ran, and its speedup was stable (`Outcome::verified`); the factors of an
//! [`Attribution`] multiply to its `total`.

use super::node::{Level, Node, NodeId, Verdict};
use super::store::Tree;
use ekb_ir::Diagnostic;
use serde::Serialize;
use std::collections::BTreeMap;

/// One edit along a path and what it gained.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Step {
    pub node: NodeId,
    pub level: Level,
    /// The node's verified speedup over the baseline.
    pub speedup: Option<f64>,
    /// The ratio of this node's verified speedup to the last verified one before it on the
    /// path (the root counting as 1.0 when it is not verified itself); `None` for an edit that
    /// is not verified (its gain is folded into the next verified step).
    pub gain: Option<f64>,
    /// The edits before this one, since the last verified node, that were not verified: their
    /// gain is part of this step's.
    pub folded: Vec<NodeId>,
}

/// How much each level contributed to a node's speedup, along the path from the root.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Attribution {
    pub node: NodeId,
    /// The root's verified speedup over the baseline, or 1.0 when the root is not verified
    /// (the starting program is then taken to be as fast as the baseline).
    pub root_speedup: f64,
    /// The speedup of the last verified node of the path (the node itself when verified).
    pub final_speedup: f64,
    /// `final_speedup / root_speedup`: what the edits gained.
    pub total: f64,
    /// The steps, root excluded.
    pub steps: Vec<Step>,
    /// Per level with an edit on the path, the product of its steps' gains: the factors
    /// multiply to `total`. A level whose edits were all unverified (or folded into a later
    /// step of another level) has factor 1.0.
    pub per_level: BTreeMap<Level, f64>,
}

impl Tree {
    /// The run's best verified node: correct, stable, the highest speedup; of equal speedups,
    /// the earliest. `None` while no node is verified.
    pub fn best_verified(&self, run: &str) -> Result<Option<Node>, Diagnostic> {
        self.run(run)?;
        let best = self
            .select_nodes("WHERE run = ?1 AND verified = 1 ORDER BY speedup DESC, id ASC LIMIT 1", [run])?;
        Ok(best.into_iter().next())
    }

    /// The run's answer so far, and the node the loop's next round expands: the verified node
    /// with the highest speedup among those whose interval lies above the start (its lower bound
    /// at least the root's measured speedup, verified or not; 1.0 when the root has none), else
    /// the root; `None` before the root is added. So a verified edit measured slower than an
    /// unstable start, or within the noise of the start, is never the answer, and neither is a
    /// node whose confirmation was rejected. It differs from [`Tree::best_verified`] where the
    /// fastest measurement did not hold up.
    pub fn answer(&self, run: &str) -> Result<Option<Node>, Diagnostic> {
        let Some(root) = self.root(run)? else { return Ok(None) };
        let start = root.outcome.as_ref().and_then(|o| o.speedup).unwrap_or(1.0);
        let rejected: Vec<NodeId> = self
            .confirmations(run)?
            .into_iter()
            .filter(|c| c.verdict == Some(Verdict::Rejected))
            .map(|c| c.node)
            .collect();
        let above = |n: &Node| {
            n.outcome.as_ref().is_some_and(|o| o.verified && o.ci_low.is_some_and(|lo| lo >= start))
        };
        let best = self
            .nodes(run)?
            .into_iter()
            .filter(|n| n.id != root.id && !rejected.contains(&n.id) && above(n))
            .max_by(|a, b| {
                let s = |n: &Node| n.verified_speedup().unwrap_or(0.0);
                s(a).total_cmp(&s(b)).then(b.id.cmp(&a.id))
            });
        Ok(Some(best.unwrap_or(root)))
    }

    /// The nodes from the run's root to `id`, both included.
    pub fn path_to(&self, id: NodeId) -> Result<Vec<Node>, Diagnostic> {
        let mut path = vec![self.node(id)?];
        while let Some(parent) = path.last().and_then(|n| n.parent) {
            path.push(self.node(parent)?);
        }
        path.reverse();
        Ok(path)
    }

    /// The nodes whose parent is `id`, oldest first.
    pub fn children(&self, id: NodeId) -> Result<Vec<Node>, Diagnostic> {
        self.node(id)?;
        self.select_nodes("WHERE parent = ?1 ORDER BY id", [id])
    }

    /// The other children of `id`'s parent, oldest first (none for a root).
    pub fn siblings(&self, id: NodeId) -> Result<Vec<Node>, Diagnostic> {
        let node = self.node(id)?;
        let Some(parent) = node.parent else { return Ok(Vec::new()) };
        self.select_nodes("WHERE parent = ?1 AND id != ?2 ORDER BY id", [parent, id])
    }

    /// Every edit of `level` in the subtree under `id` (not `id` itself), oldest first, with
    /// its outcome: what that level's agent already tried from here.
    pub fn attempts(&self, id: NodeId, level: Level) -> Result<Vec<Node>, Diagnostic> {
        self.node(id)?;
        let columns = super::store::NODE_COLUMNS;
        let sql = format!(
            "WITH RECURSIVE under(id) AS (SELECT id FROM nodes WHERE parent = ?1 \
             UNION ALL SELECT n.id FROM nodes n JOIN under u ON n.parent = u.id) \
             SELECT {columns} FROM nodes WHERE id IN (SELECT id FROM under) AND level = ?2 ORDER BY id"
        );
        let mut stmt = self.conn().prepare(&sql).map_err(|e| self.sql(e))?;
        let rows = stmt.query_map((id, level.name()), super::store::node_of_row).map_err(|e| self.sql(e))?;
        rows.collect::<Result<_, _>>().map_err(|e| self.sql(e))
    }

    /// The gain of each level along the path from the root to `id`.
    pub fn attribution(&self, id: NodeId) -> Result<Attribution, Diagnostic> {
        Ok(attribute(&self.path_to(id)?))
    }
}

/// The attribution of a root-first path.
fn attribute(path: &[Node]) -> Attribution {
    let root_speedup = path.first().and_then(Node::verified_speedup).unwrap_or(1.0);
    let mut last = root_speedup;
    let mut folded = Vec::new();
    let mut steps = Vec::new();
    let mut per_level = BTreeMap::new();
    for node in path.iter().skip(1) {
        let factor = per_level.entry(node.level).or_insert(1.0);
        let speedup = node.verified_speedup();
        let gain = speedup.map(|s| s / last);
        if let (Some(s), Some(g)) = (speedup, gain) {
            *factor *= g;
            last = s;
        }
        let step_folded = if gain.is_some() { std::mem::take(&mut folded) } else { Vec::new() };
        if gain.is_none() {
            folded.push(node.id);
        }
        steps.push(Step { node: node.id, level: node.level, speedup, gain, folded: step_folded });
    }
    Attribution {
        node: path.last().map_or(0, |n| n.id),
        root_speedup,
        final_speedup: last,
        total: last / root_speedup,
        steps,
        per_level,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tree::node::{Cost, Edit, EditKind, Outcome, State};

    fn node(id: NodeId, parent: Option<NodeId>, level: Level, verified_speedup: Option<f64>) -> Node {
        Node {
            id,
            run: "r".into(),
            parent,
            level,
            agent: "a".into(),
            state: State::Evaluated,
            edit: Edit { kind: EditKind::None, text: String::new(), diff: String::new() },
            rationale: String::new(),
            cost: Cost::default(),
            outcome: Some(Outcome {
                compiled: true,
                correct: true,
                failure: None,
                speedup: Some(verified_speedup.unwrap_or(9.0)),
                ci_low: None,
                ci_high: None,
                stable: Some(verified_speedup.is_some()),
                verified: verified_speedup.is_some(),
                baseline: "naive".into(),
                peak_bytes: None,
                planned_peak_bytes: None,
            }),
            created_at: String::new(),
            evaluated_at: None,
            batch: None,
        }
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn each_level_gets_the_product_of_its_steps_and_the_factors_multiply_to_the_total() {
        // root 1.25x, l0 -> 2.5x (x2), l1 -> 5x (x2), l1 -> 7.5x (x1.5), l2 -> 6x (x0.8).
        let path = [
            node(1, None, Level::Root, Some(1.25)),
            node(2, Some(1), Level::L0, Some(2.5)),
            node(3, Some(2), Level::L1, Some(5.0)),
            node(4, Some(3), Level::L1, Some(7.5)),
            node(5, Some(4), Level::L2, Some(6.0)),
        ];
        let a = attribute(&path);
        assert_eq!(a.node, 5);
        assert!(close(a.root_speedup, 1.25) && close(a.final_speedup, 6.0) && close(a.total, 4.8), "{a:?}");
        assert!(close(a.per_level[&Level::L0], 2.0));
        assert!(close(a.per_level[&Level::L1], 3.0));
        assert!(close(a.per_level[&Level::L2], 0.8));
        assert!(!a.per_level.contains_key(&Level::Root));
        assert!(close(a.per_level.values().product::<f64>(), a.total));
        let gains: Vec<Option<f64>> = a.steps.iter().map(|s| s.gain).collect();
        assert_eq!(gains.len(), 4);
        assert!(close(gains[2].unwrap(), 1.5));
    }

    #[test]
    fn an_unverified_edit_folds_into_the_next_verified_step_and_an_unverified_root_counts_as_one() {
        // root unverified (1.0), l0 unverified (its timed 9x does not count), l1 -> 3x.
        let path = [
            node(1, None, Level::Root, None),
            node(2, Some(1), Level::L0, None),
            node(3, Some(2), Level::L1, Some(3.0)),
            node(4, Some(3), Level::L2, None),
        ];
        let a = attribute(&path);
        assert!(close(a.root_speedup, 1.0) && close(a.total, 3.0), "{a:?}");
        assert!(close(a.per_level[&Level::L0], 1.0));
        assert!(close(a.per_level[&Level::L1], 3.0));
        assert!(close(a.per_level[&Level::L2], 1.0));
        assert_eq!(a.steps[0].gain, None);
        assert_eq!(a.steps[1].folded, vec![2]);
        assert_eq!(a.steps[2], Step { node: 4, level: Level::L2, speedup: None, gain: None, folded: vec![] });
        assert!(close(a.per_level.values().product::<f64>(), a.total));
    }
}
