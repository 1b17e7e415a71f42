//! Fusion groups (`fuse %a, %b, %c`): which nodes the lowering computes in one kernel, and the
//! rules a group must keep so that it can.
//!
//! A group lists two or more nodes in node order. At most one member is not elementwise
//! (`Op::is_elementwise`: the pointwise operators, and `batch_norm`, pointwise in `x` with its
//! parameters broadcast per channel): the group's *anchor* (with none, the anchor is the last
//! member). The lowering recomputes every
//! member but the anchor and the last inside the kernel of the member that reads it
//! (`compute_inline`), and folds the last member into the anchor's kernel, at the anchor's final
//! stores (`reverse_compute_inline`). Hence the rules, each checked here:
//! - every member is a node, in at most one group, listed once and in node order;
//! - every member but the last is read only by later members of its group and is not returned
//!   (its value never exists outside the kernel), and holds f32 or i32 (a rounding store of f16
//!   or i8 cannot be skipped);
//! - a member after the anchor (the epilogue) reads the values of its group at its own shape
//!   (the anchor's kernel stores each element once, where the epilogue computes it), and its
//!   other operands are defined before the anchor (the fused kernel runs where the anchor was).
//!
//! Whether a group is *profitable* is not checked: that is the fuse pass's decision, or the
//! person's who wrote the group.

use crate::diag::Diagnostic;
use crate::l0::ast::{FusionGroup, Graph, Op};
use std::collections::{HashMap, HashSet};

impl Op {
    /// Whether every output element is a function of the operands' elements at the same
    /// (broadcast) index only: the operators a fusion group may hold besides its anchor.
    /// `batch_norm` is one: it reads `x` at the output's index and its per-channel parameters
    /// at that index's axis-1 coordinate (a broadcast of `[C]` along axis 1).
    pub fn is_elementwise(&self) -> bool {
        matches!(
            self,
            Op::Unary(_)
                | Op::Binary(_)
                | Op::Compare(_)
                | Op::Where
                | Op::Cast { .. }
                | Op::QuantizeLinear { .. }
                | Op::DequantizeLinear { .. }
                | Op::BatchNorm { .. }
        )
    }
}

impl FusionGroup {
    /// The position within the group of its anchor: the one member that is not elementwise,
    /// else the last member.
    pub fn anchor(&self, g: &Graph) -> usize {
        let node = |name: &str| g.nodes.iter().find(|n| n.name == name);
        self.nodes
            .iter()
            .position(|v| node(&v.name).is_some_and(|n| !n.op.is_elementwise()))
            .unwrap_or(self.nodes.len() - 1)
    }
}

/// Checks every fusion group of a checked graph (node types known); returns every error.
pub fn check_groups(g: &Graph) -> Vec<Diagnostic> {
    let index = node_index(g);
    let mut errs = Vec::new();
    // Node -> the first group listing it.
    let mut grouped: HashMap<&str, usize> = HashMap::new();
    for (k, f) in g.groups.iter().enumerate() {
        let before = errs.len();
        check_members(g, (k, f), &index, &mut grouped, &mut errs);
        if errs.len() == before {
            check_uses(g, f, &index, &mut errs);
        }
    }
    errs
}

/// Checks one group `f` of a checked graph as if it were the graph's only one (a pass trying
/// a group before adding it); returns every error.
pub fn check_group(g: &Graph, f: &FusionGroup) -> Vec<Diagnostic> {
    let index = node_index(g);
    let mut errs = Vec::new();
    check_members(g, (0, f), &index, &mut HashMap::new(), &mut errs);
    if errs.is_empty() {
        check_uses(g, f, &index, &mut errs);
    }
    errs
}

/// Node name -> position in the graph.
fn node_index(g: &Graph) -> HashMap<&str, usize> {
    g.nodes.iter().enumerate().map(|(i, n)| (n.name.as_str(), i)).collect()
}

/// Membership: nodes, at least two, each in one group, in node order, at most one anchor.
fn check_members<'g>(
    g: &'g Graph,
    (k, f): (usize, &'g FusionGroup),
    index: &HashMap<&str, usize>,
    grouped: &mut HashMap<&'g str, usize>,
    errs: &mut Vec<Diagnostic>,
) {
    if f.nodes.len() < 2 {
        errs.push(
            Diagnostic::error("a fusion group of one node")
                .at(f.span)
                .with_expected("two or more nodes, such as `fuse %0, %1`"),
        );
        return;
    }
    let mut last: Option<usize> = None;
    for v in &f.nodes {
        let Some(&i) = index.get(v.name.as_str()) else {
            let what = if g.decl(&v.name).is_some() { "an input or parameter" } else { "not defined" };
            errs.push(
                Diagnostic::error(format!("`{}` cannot be fused: it is {what}", v.name))
                    .at(v.span)
                    .with_expected("the names of nodes (`%name`)"),
            );
            continue;
        };
        if *grouped.entry(&v.name).or_insert(k) != k {
            errs.push(
                Diagnostic::error(format!("`{}` is in two fusion groups", v.name))
                    .at(v.span)
                    .with_expected("each node in at most one group"),
            );
            continue;
        }
        if let Some(p) = last.filter(|&p| p >= i) {
            let msg = if p == i {
                format!("`{}` is listed twice", v.name)
            } else {
                format!("`{}` is listed after `{}`, which comes later in the graph", v.name, g.nodes[p].name)
            };
            errs.push(
                Diagnostic::error(msg).at(v.span).with_expected("the members in node order, each once"),
            );
        }
        last = Some(i);
    }
    let anchors: Vec<&str> = f
        .nodes
        .iter()
        .filter(|v| index.get(v.name.as_str()).is_some_and(|&i| !g.nodes[i].op.is_elementwise()))
        .map(|v| v.name.as_str())
        .collect();
    if anchors.len() > 1 {
        errs.push(
            Diagnostic::error(format!(
                "a fusion group holds {} operators that are not elementwise ({})",
                anchors.len(),
                anchors.join(", ")
            ))
            .at(f.span)
            .with_expected("at most one anchor (a convolution, matmul, reduction, ...) per group")
            .with_hint("split the group: one anchor with the elementwise nodes around it"),
        );
    }
}

/// Uses: inner members read only inside the group, f32/i32, epilogue operands at the right
/// shape and defined before the anchor.
fn check_uses(g: &Graph, f: &FusionGroup, index: &HashMap<&str, usize>, errs: &mut Vec<Diagnostic>) {
    let members: HashSet<&str> = f.nodes.iter().map(|v| v.name.as_str()).collect();
    let last = &f.nodes[f.nodes.len() - 1];
    for v in &f.nodes[..f.nodes.len() - 1] {
        let node = &g.nodes[index[v.name.as_str()]];
        if let Some(user) = g
            .nodes
            .iter()
            .find(|n| !members.contains(n.name.as_str()) && n.args.iter().any(|a| a.name == v.name))
        {
            errs.push(
                Diagnostic::error(format!(
                    "`{}` is fused but `{}`, outside the group, reads it",
                    v.name, user.name
                ))
                .at(v.span)
                .with_expected(format!(
                    "members other than the last (`{}`) read only inside their group",
                    last.name
                )),
            );
        } else if g.outputs.iter().any(|o| o.value.name == v.name) {
            errs.push(
                Diagnostic::error(format!("`{}` is fused but returned", v.name))
                    .at(v.span)
                    .with_expected(format!("only the last member (`{}`) may be returned", last.name)),
            );
        }
        let ty = node.ty.as_ref().expect("the graph is checked");
        if !matches!(ty.dtype, crate::DType::F32 | crate::DType::I32) {
            errs.push(
                Diagnostic::error(format!("`{}: {ty}` is fused into a later member", v.name))
                    .at(v.span)
                    .with_expected("f32 or i32 values inside a group (an f16 or i8 store rounds)"),
            );
        }
    }
    let anchor = f.anchor(g);
    let anchor_at = index[f.nodes[anchor].name.as_str()];
    for v in &f.nodes[anchor + 1..] {
        let node = &g.nodes[index[v.name.as_str()]];
        let shape = &node.ty.as_ref().expect("the graph is checked").shape;
        for a in &node.args {
            if members.contains(a.name.as_str()) {
                let ty = g.type_of(&a.name).expect("the graph is checked");
                if &ty.shape != shape {
                    errs.push(
                        Diagnostic::error(format!(
                            "`{}` reads `{}: {ty}` of its group broadcast to {:?}",
                            node.name, a.name, shape
                        ))
                        .at(a.span)
                        .with_expected("members after the anchor read the group's values at their own shape"),
                    );
                }
            } else if index.get(a.name.as_str()).is_some_and(|&i| i > anchor_at) {
                errs.push(
                    Diagnostic::error(format!(
                        "`{}` reads `{}`, which is computed after the group's anchor `{}`",
                        node.name, a.name, f.nodes[anchor].name
                    ))
                    .at(a.span)
                    .with_expected("operands from outside the group defined before its anchor")
                    .with_hint(format!("move `{}` before `{}`", a.name, f.nodes[anchor].name)),
                );
            }
        }
    }
}
