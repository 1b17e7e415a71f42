//! `fuse`: groups each anchor with the elementwise nodes after it into one kernel (`fuse`
//! statements, `ekb_ir::l0::fusion`), by pattern kind: an anchor (a convolution, matmul,
//! reduction, pool, norm, transpose, slice or resize: the operators whose kernels store each
//! output element once, so an epilogue can join those stores), or an elementwise node, takes the
//! elementwise nodes (`Op::is_elementwise`, `batch_norm` among them) that read its values at
//! their own shape, as long as every member but the last is read only inside the group. With
//! each such reader come its elementwise operands that it alone reads (the other product of a
//! sum of products, such as a rotary embedding's `x * cos + rot * sin`). The group is the
//! longest such chain the group rules (`check_group`) accept, as the nodes stand or once every
//! member but the last is moved to just before the last (so that an epilogue may read a value
//! the graph computes after the anchor: a scale written after the product it scales, the up
//! projection a gated unit multiplies the gate's activation by). The move keeps every
//! dependence: members other than the last are read only by later members.
//!
//! A node computed from parameters alone (a `full`, an `iota`, `bn_fold`'s factors) anchors no
//! group: the default lowering computes it once, in a prepare step, where a group's kernel
//! would compute it again in every execution (a batch norm's scale `[1, C]` joined by a product
//! over one image's `[1, C]` features).
//!
//! Caps: at most [`MAX_MEMBERS`] members, and at most [`MAX_OPERANDS`] values from outside the
//! group read by its epilogue (each becomes a parameter of the fused kernel). Not anchors:
//! `softmax` (the CPU kernel reads its output back to normalise it), `concat` (the GPU lowering
//! splits it into one kernel per operand), and the other data-movement operators (`pad`,
//! `expand`, `gather`: not measured as anchors). A slice anchors: the rotate-half of a rotary
//! embedding negates one, which then costs no kernel of its own. Runs once, after the rewrites: the groups name nodes, which a
//! rewrite would rename.

use crate::index::{Def, Index};
use ekb_ir::l0::fusion::check_group;
use ekb_ir::l0::{FusionGroup, Graph, Node, Op, ValueRef};
use ekb_ir::{Diagnostic, Span};
use std::collections::HashSet;

/// The most members of one group.
pub const MAX_MEMBERS: usize = 8;
/// The most values from outside a group its epilogue reads (a batch norm's four parameters and
/// a residual, with one to spare).
pub const MAX_OPERANDS: usize = 6;

/// Whether the kernel of `op` can take an epilogue at its stores.
fn anchors(op: &Op) -> bool {
    op.is_elementwise()
        || matches!(
            op,
            Op::Conv2d(_)
                | Op::ConvTranspose2d(_)
                | Op::MatMul { .. }
                | Op::Linear
                | Op::MaxPool2d(_)
                | Op::AvgPool2d { .. }
                | Op::GlobalAvgPool2d
                | Op::Reduce { .. }
                | Op::LayerNorm { .. }
                | Op::RmsNorm { .. }
                | Op::GroupNorm { .. }
                | Op::Transpose { .. }
                | Op::Slice { .. }
                | Op::Resize { .. }
        )
}

/// The graph with fusion groups added for its ungrouped nodes (groups already written stay);
/// `None` when no group is added.
pub fn run(g: &Graph) -> Result<Option<Graph>, Diagnostic> {
    let mut out = g.clone();
    let mut taken: HashSet<String> =
        g.groups.iter().flat_map(|f| f.nodes.iter().map(|v| v.name.clone())).collect();
    let mut index = Index::new(&out);
    for anchor in &g.nodes {
        if taken.contains(&anchor.name) || !anchors(&anchor.op) || index.param_only(&anchor.name) {
            continue;
        }
        let Some(Def::Node(a)) = index.def(&anchor.name) else { continue };
        let Some(Grown { members, moved }) = grow(&out, a, &taken, &index) else { continue };
        let names: Vec<String> = members.iter().map(|&i| out.nodes[i].name.clone()).collect();
        if moved {
            out.nodes = moved_to_last(&out, &members);
            index = Index::new(&out);
        }
        let nodes = names.iter().map(|n| ValueRef { name: n.clone(), span: Span::NONE }).collect();
        taken.extend(names);
        out.groups.push(FusionGroup { nodes, span: Span::NONE });
    }
    Ok((out.groups.len() > g.groups.len()).then_some(out))
}

/// A group found by [`grow`]: its members (node indices, ascending), and whether it is legal
/// only once every member but the last is moved to just before the last.
struct Grown {
    members: Vec<usize>,
    moved: bool,
}

/// The largest valid group anchored at node `a`: the elementwise readers of the group's values
/// are added in node order, each with its elementwise producers that nothing else reads (the
/// other product of a sum of products); the result is the longest such group that is legal as
/// the graph stands or once its members sit together before its last one.
///
/// The move is always possible: every member but the last is read only by later members, and
/// each reads values defined before it, hence before the last member. It lets an epilogue read
/// a value computed after the anchor (a scale defined after the product it scales, the second
/// projection of a gated unit).
fn grow(g: &Graph, a: usize, taken: &HashSet<String>, index: &Index) -> Option<Grown> {
    let mut members = vec![a];
    let mut best = None;
    while members.len() < MAX_MEMBERS {
        // The first reader, after the group's last member, of a value of the group.
        let next = members
            .iter()
            .flat_map(|&m| index.users(&g.nodes[m].name))
            .copied()
            .filter(|&u| u > *members.last().expect("non-empty"))
            .min();
        let Some(u) = next else { break };
        let node = &g.nodes[u];
        if taken.contains(&node.name) || !node.op.is_elementwise() {
            break;
        }
        let mut grown = members.clone();
        grown.extend(node.args.iter().filter_map(|arg| match index.def(&arg.name) {
            Some(Def::Node(p))
                if index.single_use(&arg.name)
                    && g.nodes[p].op.is_elementwise()
                    && !taken.contains(&arg.name)
                    && !index.param_only(&arg.name) =>
            {
                Some(p)
            }
            _ => None,
        }));
        grown.push(u);
        grown.sort_unstable();
        grown.dedup();
        if grown.len() > MAX_MEMBERS || !reads_at_own_shape(g, u, &grown) {
            break;
        }
        members = grown;
        if outside_operands(g, a, &members) > MAX_OPERANDS {
            break;
        }
        if legal(g, g, &members) {
            best = Some(Grown { members: members.clone(), moved: false });
        } else if legal(&Graph { nodes: moved_to_last(g, &members), ..g.clone() }, g, &members) {
            best = Some(Grown { members: members.clone(), moved: true });
        }
    }
    best
}

/// The nodes of `g` with every one of `members` (indices, ascending) but the last moved to just
/// before the last, in their order.
fn moved_to_last(g: &Graph, members: &[usize]) -> Vec<Node> {
    let (&last, inner) = members.split_last().expect("a group has members");
    let mut nodes = Vec::with_capacity(g.nodes.len());
    for (i, n) in g.nodes.iter().enumerate() {
        if i == last {
            nodes.extend(inner.iter().map(|&m| g.nodes[m].clone()));
        }
        if i == last || !inner.contains(&i) {
            nodes.push(n.clone());
        }
    }
    nodes
}

/// Whether node `u` reads the values of `members` only at its own shape (no broadcast, so no
/// recomputation and no reads of elements the anchor has not stored yet).
fn reads_at_own_shape(g: &Graph, u: usize, members: &[usize]) -> bool {
    let shape = &g.nodes[u].ty.as_ref().expect("checked").shape;
    g.nodes[u].args.iter().all(|arg| {
        !members.iter().any(|&m| g.nodes[m].name == arg.name)
            || g.type_of(&arg.name).is_some_and(|t| &t.shape == shape)
    })
}

/// The distinct values from outside the group that its members other than the anchor `a` read:
/// each is a parameter of the fused kernel.
fn outside_operands(g: &Graph, a: usize, members: &[usize]) -> usize {
    let names: HashSet<&str> = members.iter().map(|&m| g.nodes[m].name.as_str()).collect();
    let outside: HashSet<&str> = members
        .iter()
        .filter(|&&m| m != a)
        .flat_map(|&m| g.nodes[m].args.iter().map(|a| a.name.as_str()))
        .filter(|n| !names.contains(n))
        .collect();
    outside.len()
}

/// Whether the nodes of `g` at `members` form a group the checker accepts in `graph` (`g`, or
/// `g` with its nodes moved).
fn legal(graph: &Graph, g: &Graph, members: &[usize]) -> bool {
    let nodes =
        members.iter().map(|&i| ValueRef { name: g.nodes[i].name.clone(), span: Span::NONE }).collect();
    check_group(graph, &FusionGroup { nodes, span: Span::NONE }).is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{expect_unchanged, rewrite};

    #[test]
    fn a_convolution_takes_its_batch_norm_and_activation() {
        let out = rewrite(
            run,
            "graph t(x: f32[1,3,8,8]) -> (y: f32[1,4,8,8]) {
               param w: f32[4,3,3,3] = kaiming_uniform
               param g: f32[4] = uniform(0.5, 1.5)
               param b: f32[4] = uniform(-0.5, 0.5)
               param m: f32[4] = uniform(-0.5, 0.5)
               param v: f32[4] = uniform(0.5, 1.5)
               %0 = conv2d(x, w, pad=[1,1,1,1])
               %1 = batch_norm(%0, g, b, m, v, eps=0.00001)
               %2 = relu(%1)
               return %2
             }",
        );
        assert!(out.contains("fuse %0, %1, %2\n"), "{out}");
    }

    #[test]
    fn a_convolution_takes_its_residual_add_and_activation_once() {
        let out = rewrite(
            run,
            "graph t(x: f32[1,3,8,8], r: f32[1,4,8,8]) -> (y: f32[1,4,8,8]) {
               param w: f32[4,3,3,3] = kaiming_uniform
               %0 = conv2d(x, w, pad=[1,1,1,1])
               %1 = add(%0, r)
               %2 = relu(%1)
               return %2
             }",
        );
        assert!(out.contains("fuse %0, %1, %2\n"), "{out}");
        // Running again finds every node grouped already.
        expect_unchanged(run, &out);
    }

    #[test]
    fn concat_anchors_nothing() {
        let out = rewrite(
            run,
            "graph t(x: f32[2,4], y: f32[2,4]) -> (z: f32[2,8]) {
               %0 = concat(x, y, axis=1)
               %1 = relu(%0)
               %2 = neg(%1)
               return %2
             }",
        );
        assert!(out.contains("fuse %1, %2\n") && !out.contains("fuse %0"), "{out}");
    }

    #[test]
    fn a_slice_takes_its_negation_and_a_value_of_parameters_alone_anchors_nothing() {
        // The rotate-half of a rotary embedding: the second half's slice takes its negation.
        // The table `%c` (of an `iota` and a parameter) would anchor its product with `%x1`,
        // computing the table again in every execution: it starts no group.
        let out = rewrite(
            run,
            "graph t(x: f32[4,8]) -> (y: f32[4,8]) {
               param f: f32[4] = uniform(0.5, 1.5)
               %i = iota(shape=[4,4], axis=0, dtype=f32)
               %c = mul(%i, f)
               %x1 = slice(x, axes=[1], starts=[0], ends=[4], steps=[1])
               %x2 = slice(x, axes=[1], starts=[4], ends=[8], steps=[1])
               %n = neg(%x2)
               %r = concat(%n, %x1, axis=1)
               %p = mul(%c, %x1)
               %y = add(%r, %r)
               return %y
             }",
        );
        assert!(out.contains("fuse %x2, %n\n"), "{out}");
        assert!(!out.contains("fuse %c") && !out.contains("fuse %i"), "{out}");
    }

    #[test]
    fn a_value_read_outside_the_group_ends_it_and_softmax_anchors_nothing() {
        let out = rewrite(
            run,
            "graph t(x: f32[4,8]) -> (y: f32[4,8], z: f32[4,8]) {
               %0 = exp(x)
               %1 = relu(%0)
               %2 = neg(%1)
               %3 = softmax(%2, axis=1)
               %4 = abs(%3)
               return %4, %1
             }",
        );
        // `%1` is returned, so the group ends there; `%2` alone is no group; softmax is no anchor.
        assert!(out.contains("fuse %0, %1\n") && !out.contains("%3,"), "{out}");
        assert_eq!(out.matches("fuse ").count(), 1, "{out}");
    }

    #[test]
    fn a_broadcast_read_of_a_group_value_is_not_joined() {
        expect_unchanged(
            run,
            "graph t(x: f32[8], y: f32[4,8]) -> (z: f32[4,8]) {
               %0 = exp(x)
               %1 = mul(%0, y)
               return %1
             }",
        );
    }

    #[test]
    fn groups_are_capped_and_written_groups_stay() {
        let mut text = String::from("graph t(x: f32[16]) -> (y: f32[16]) {\n");
        let mut last = "x".to_string();
        for i in 0..12 {
            text += &format!("  %{i} = neg({last})\n");
            last = format!("%{i}");
        }
        text += &format!("  return {last}\n}}\n");
        let out = rewrite(run, &text);
        let groups: Vec<&str> = out.lines().filter(|l| l.trim_start().starts_with("fuse ")).collect();
        assert_eq!(groups, ["  fuse %0, %1, %2, %3, %4, %5, %6, %7", "  fuse %8, %9, %10, %11"], "{out}");

        let written = text.replace("  return", "  fuse %10, %11\n  return");
        let out = rewrite(run, &written);
        assert!(out.contains("fuse %10, %11\n") && out.contains("fuse %8, %9\n"), "{out}");
        // A second run finds nothing more to group.
        expect_unchanged(run, &out);
    }

    #[test]
    fn too_many_outside_operands_end_the_group() {
        let mut text = String::from("graph t(x: f32[8]");
        for i in 0..8 {
            text += &format!(", a{i}: f32[8]");
        }
        text += ") -> (y: f32[8]) {\n  %0 = exp(x)\n";
        for i in 0..8 {
            text += &format!("  %{} = add(%{i}, a{i})\n", i + 1);
        }
        text += "  return %8\n}\n";
        let out = rewrite(run, &text);
        assert!(out.contains("fuse %0, %1, %2, %3, %4, %5, %6\n"), "{out}");
    }

    #[test]
    fn a_scale_defined_after_its_product_joins_the_epilogue_with_the_product_moved() {
        // Attention scores: the scale is written after the product it scales, so the group is
        // legal only once the product sits after it; the gate's product likewise reads the up
        // projection, computed after the gate's.
        let out = rewrite(
            run,
            "graph t(q: f32[4,8], k: f32[4,8], w: f32[8,8], v: f32[8,8]) -> (y: f32[4,4], z: f32[4,8]) {
               %s = matmul(q, k, transpose_b=true)
               %c = full(shape=[], value=0.5, dtype=f32)
               %m = mul(%s, %c)
               %g = matmul(q, w)
               %u = matmul(q, v)
               %a = sigmoid(%g)
               %z = mul(%a, %u)
               return %m, %z
             }",
        );
        assert!(out.contains("fuse %s, %m\n") && out.contains("fuse %g, %a, %z\n"), "{out}");
        let order: Vec<&str> = out.lines().filter_map(|l| l.trim().strip_prefix('%')).collect();
        let at = |v: &str| order.iter().position(|l| l.starts_with(&format!("{v}:"))).unwrap();
        assert!(at("c") < at("s") && at("s") + 1 == at("m"), "{out}");
        assert!(at("u") < at("g") && at("g") < at("a") && at("a") + 1 == at("z"), "{out}");
        expect_unchanged(run, &out);
    }

    #[test]
    fn the_other_product_of_a_sum_of_products_joins_as_a_prologue() {
        // A rotary embedding's `x * cos + rot * sin`: both products, read by the sum alone, are
        // computed inside its kernel.
        let out = rewrite(
            run,
            "graph t(x: f32[4,8], r: f32[4,8], c: f32[4,8], s: f32[4,8]) -> (y: f32[4,8]) {
               %a = mul(x, c)
               %b = mul(r, s)
               %y = add(%a, %b)
               return %y
             }",
        );
        assert!(out.contains("fuse %a, %b, %y\n"), "{out}");
        // A product read elsewhere too stays out.
        let out = rewrite(
            run,
            "graph t(x: f32[4,8], r: f32[4,8], c: f32[4,8], s: f32[4,8]) -> (y: f32[4,8], z: f32[4,8]) {
               %a = mul(x, c)
               %b = mul(r, s)
               %y = add(%a, %b)
               return %y, %b
             }",
        );
        assert!(out.contains("fuse %a, %y\n"), "{out}");
    }
}
