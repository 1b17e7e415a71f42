//! The rewrite builder: a pass records what it changes (uses of a value redirected to another,
//! nodes inserted before a node, a node's operator and operands changed, nodes removed) against
//! the graph it read, and [`Rewrite::finish`] builds the new graph.
//!
//! What it keeps true:
//! - the graph's signature is untouched: inputs, parameters (with their initialisers or data)
//!   and output names and types stay as written (the bind stage and the payload's reference read
//!   the task's graph as it was written); only the values the outputs return may change;
//! - the result is in topological order: the nodes are placed in their recorded order except
//!   where an operand must move earlier, and a cycle is an error, not a graph;
//! - every node carries its inferred type (inserted and changed nodes are typed when recorded),
//!   a changed node and a redirected value keep their type, and inserted names are fresh;
//! - fusion groups whose members all remain and still keep the group rules are kept; any other
//!   group is dissolved (its members become nodes of their own again);
//! - spans are kept: a kept node keeps its own, an inserted node takes the span it is given (the
//!   node it was derived from), a redirected use keeps the span of the use.

use ekb_ir::l0::fusion::check_group;
use ekb_ir::l0::ops::infer;
use ekb_ir::l0::{FusionGroup, Graph, Node, Op, ValueRef};
use ekb_ir::{Diagnostic, Span, TensorType};
use std::collections::{HashMap, HashSet};

/// The changes one pass makes to one graph.
pub struct Rewrite<'g> {
    g: &'g Graph,
    /// Every value's type: the graph's and the inserted nodes'.
    types: HashMap<String, TensorType>,
    /// Nodes to place before the node at a position, in insertion order.
    inserted: HashMap<usize, Vec<Node>>,
    /// Nodes whose operator and operands changed, by position.
    changed: HashMap<usize, Node>,
    removed: HashSet<usize>,
    /// Uses of a value redirected to another value.
    redirect: HashMap<String, String>,
}

impl<'g> Rewrite<'g> {
    /// No changes yet to `g`, a checked graph.
    pub fn new(g: &'g Graph) -> Rewrite<'g> {
        let mut types: HashMap<String, TensorType> =
            g.inputs.iter().chain(&g.params).map(|d| (d.name.clone(), d.ty.clone())).collect();
        types.extend(g.nodes.iter().filter_map(|n| Some((n.name.clone(), n.ty.clone()?))));
        Rewrite {
            g,
            types,
            inserted: HashMap::new(),
            changed: HashMap::new(),
            removed: HashSet::new(),
            redirect: HashMap::new(),
        }
    }

    /// The graph being rewritten, as it was read.
    pub fn graph(&self) -> &'g Graph {
        self.g
    }

    /// The type of a value of the graph or of an inserted node.
    pub fn type_of(&self, name: &str) -> Option<&TensorType> {
        self.types.get(name)
    }

    /// Whether anything was recorded.
    pub fn is_empty(&self) -> bool {
        self.inserted.is_empty()
            && self.changed.is_empty()
            && self.removed.is_empty()
            && self.redirect.is_empty()
    }

    /// Inserts `op(args)` before the node at `at` under a fresh name built from `hint` (`%hint`,
    /// or `%hint_2`, ... when taken) and returns that name. The operands must be defined before
    /// that node (values of the graph or earlier insertions); the node is typed by the shape
    /// rules, and an operator they refuse is an error (a bug of the pass).
    pub fn insert_before(
        &mut self,
        at: usize,
        hint: &str,
        op: Op,
        args: &[&str],
        span: Span,
    ) -> Result<String, Diagnostic> {
        let name = self.fresh(hint);
        let ty = self.infer(&name, &op, args, span)?;
        let node = Node {
            name: name.clone(),
            op,
            args: refs(args, span),
            ty: Some(ty.clone()),
            span,
            op_span: span,
        };
        self.types.insert(name.clone(), ty);
        self.inserted.entry(at).or_default().push(node);
        Ok(name)
    }

    /// Changes the node at `at` to `op(args)`, keeping its name, span and type (a different
    /// type is an error: its users were checked against the old one).
    pub fn set(&mut self, at: usize, op: Op, args: &[&str]) -> Result<(), Diagnostic> {
        let old = &self.g.nodes[at];
        let ty = self.infer(&old.name, &op, args, old.span)?;
        if old.ty.as_ref() != Some(&ty) {
            return Err(bug(format!(
                "changing `{}` to `{}` would change its type to {ty}",
                old.name,
                op.name()
            ))
            .at(old.span));
        }
        let node = Node { op, args: refs(args, old.span), ..old.clone() };
        self.changed.insert(at, node);
        Ok(())
    }

    /// Redirects every use of `old` (node operands and returned values) to `new`, a value of the
    /// same type.
    pub fn replace_uses(&mut self, old: &str, new: &str) -> Result<(), Diagnostic> {
        if self.types.get(old) != self.types.get(new) || !self.types.contains_key(new) {
            return Err(bug(format!(
                "`{old}` ({}) cannot be replaced by `{new}` ({})",
                show(self.types.get(old)),
                show(self.types.get(new))
            )));
        }
        self.redirect.insert(old.to_string(), new.to_string());
        Ok(())
    }

    /// Removes the node at `at`; nothing may use it afterwards (redirect its uses first).
    pub fn remove(&mut self, at: usize) {
        self.removed.insert(at);
    }

    /// The new graph, or `None` when nothing was recorded. Errors (bugs of the pass, never of
    /// its input): a removed value still used, a redirection that loops, a cycle among nodes.
    pub fn finish(self) -> Result<Option<Graph>, Diagnostic> {
        if self.is_empty() {
            return Ok(None);
        }
        let resolve = |name: &str| -> Result<String, Diagnostic> {
            let mut cur = name;
            for _ in 0..=self.redirect.len() {
                match self.redirect.get(cur) {
                    Some(next) => cur = next,
                    None => return Ok(cur.to_string()),
                }
            }
            Err(bug(format!("the uses of `{name}` are redirected in a loop")))
        };
        let redirect_all = |refs: &mut [ValueRef]| -> Result<(), Diagnostic> {
            for r in refs {
                r.name = resolve(&r.name)?;
            }
            Ok(())
        };
        let mut nodes = Vec::with_capacity(self.g.nodes.len());
        for (i, n) in self.g.nodes.iter().enumerate() {
            for mut ins in self.inserted.get(&i).cloned().unwrap_or_default() {
                redirect_all(&mut ins.args)?;
                nodes.push(ins);
            }
            if self.removed.contains(&i) {
                continue;
            }
            let mut node = self.changed.get(&i).cloned().unwrap_or_else(|| n.clone());
            redirect_all(&mut node.args)?;
            nodes.push(node);
        }
        let mut g = Graph { nodes: Vec::new(), ..self.g.clone() };
        for o in &mut g.outputs {
            o.value.name = resolve(&o.value.name)?;
        }
        g.nodes = topological(nodes, &g)?;
        // A fusion group stays only while all its members do and it still keeps the group rules
        // (a removed member or a new reader outside the group dissolves it).
        let groups = std::mem::take(&mut g.groups);
        let kept: Vec<FusionGroup> = groups
            .into_iter()
            .filter(|f| {
                f.nodes.iter().all(|m| g.nodes.iter().any(|n| n.name == m.name))
                    && check_group(&g, f).is_empty()
            })
            .collect();
        g.groups = kept;
        Ok(Some(g))
    }

    /// `%hint`, or `%hint_2`, `%hint_3`, ...: a name no value of the graph or insertion has.
    fn fresh(&self, hint: &str) -> String {
        let base = format!("%{}", hint.trim_start_matches('%'));
        let mut name = base.clone();
        let mut i = 2;
        while self.types.contains_key(&name) {
            name = format!("{base}_{i}");
            i += 1;
        }
        name
    }

    fn infer(&self, name: &str, op: &Op, args: &[&str], span: Span) -> Result<TensorType, Diagnostic> {
        let types = args
            .iter()
            .map(|a| {
                self.types.get(*a).ok_or_else(|| bug(format!("`{name}` uses `{a}`, which is not defined")))
            })
            .collect::<Result<Vec<_>, _>>()?;
        infer(op, &types, span).map_err(|d| bug(format!("`{name} = {}(...)`: {}", op.name(), d.message)))
    }
}

/// Orders `nodes` so that every operand is defined before its use: each node in its given
/// position unless an operand defined later pulls that operand's node (and what it needs)
/// before it. Errors on a cycle or an operand nothing defines.
fn topological(nodes: Vec<Node>, g: &Graph) -> Result<Vec<Node>, Diagnostic> {
    let at: HashMap<&str, usize> = nodes.iter().enumerate().map(|(i, n)| (n.name.as_str(), i)).collect();
    let declared = |name: &str| g.inputs.iter().chain(&g.params).any(|d| d.name == name);
    for n in &nodes {
        if let Some(a) = n.args.iter().find(|a| !at.contains_key(a.name.as_str()) && !declared(&a.name)) {
            return Err(bug(format!("`{}` uses `{}`, which the rewrite removed", n.name, a.name)).at(n.span));
        }
    }
    for o in &g.outputs {
        if !at.contains_key(o.value.name.as_str()) && !declared(&o.value.name) {
            return Err(bug(format!(
                "output `{}` returns `{}`, which the rewrite removed",
                o.name, o.value.name
            )));
        }
    }
    // 0: not placed, 1: being placed (on the stack), 2: placed.
    let mut state = vec![0u8; nodes.len()];
    let mut order = Vec::with_capacity(nodes.len());
    for root in 0..nodes.len() {
        let mut stack = vec![(root, 0usize)];
        while let Some(&mut (i, ref mut next_arg)) = stack.last_mut() {
            if *next_arg == 0 {
                if state[i] == 2 {
                    stack.pop();
                    continue;
                }
                state[i] = 1;
            }
            let arg = nodes[i].args.get(*next_arg).and_then(|a| at.get(a.name.as_str()).copied());
            if *next_arg < nodes[i].args.len() {
                *next_arg += 1;
                if let Some(j) = arg {
                    match state[j] {
                        0 => stack.push((j, 0)),
                        1 => {
                            return Err(bug(format!("the rewrite made a cycle through `{}`", nodes[j].name)))
                        }
                        _ => {}
                    }
                }
                continue;
            }
            state[i] = 2;
            order.push(i);
            stack.pop();
        }
    }
    let mut slots: Vec<Option<Node>> = nodes.into_iter().map(Some).collect();
    Ok(order.into_iter().map(|i| slots[i].take().expect("each node placed once")).collect())
}

fn refs(args: &[&str], span: Span) -> Vec<ValueRef> {
    args.iter().map(|a| ValueRef { name: (*a).to_string(), span }).collect()
}

fn show(t: Option<&TensorType>) -> String {
    t.map_or_else(|| "not defined".into(), ToString::to_string)
}

/// An error of a pass's own making: the rewrite it asked for is not a valid graph.
fn bug(message: String) -> Diagnostic {
    Diagnostic::error(format!("graph rewrite: {message}"))
        .with_note("this is a bug of the graph pass, not of the input graph")
        .with_hint("compile with `--passes none` to skip the graph passes, and report the graph")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::graph;
    use ekb_ir::l0::print::print;
    use ekb_ir::l0::UnaryOp;

    const G: &str = "graph t(x: f32[4]) -> (y: f32[4]) {
      %0 = relu(x)
      %1 = neg(%0)
      %2 = exp(%1)
      return %2
    }";

    #[test]
    fn nothing_recorded_is_no_new_graph() {
        let g = graph(G);
        assert!(Rewrite::new(&g).finish().unwrap().is_none());
    }

    #[test]
    fn insert_redirect_and_remove_keep_order_types_and_spans() {
        let g = graph(G);
        let mut rw = Rewrite::new(&g);
        let span = g.nodes[1].span;
        let t = rw.insert_before(1, "0", Op::Unary(UnaryOp::Abs), &["%0"], span).unwrap();
        assert_eq!(t, "%0_2", "`%0` is taken");
        rw.replace_uses("%1", &t).unwrap();
        rw.remove(1);
        let out = rw.finish().unwrap().unwrap();
        assert_eq!(
            print(&out),
            "graph t(x: f32[4]) -> (y: f32[4]) {\n  %0: f32[4] = relu(x)\n  %0_2: f32[4] = abs(%0)\n  \
             %2: f32[4] = exp(%0_2)\n  return %2\n}\n"
        );
        assert_eq!(out.nodes[1].span, span);
        assert_eq!(out.nodes[2].span, g.nodes[2].span, "a kept node keeps its span");
    }

    #[test]
    fn an_operand_defined_later_moves_before_its_use() {
        let g = graph(G);
        let mut rw = Rewrite::new(&g);
        // `%1` reads a value inserted after it: that value's node moves before `%1`.
        let late = rw.insert_before(2, "late", Op::Unary(UnaryOp::Sqrt), &["x"], Span::NONE).unwrap();
        rw.set(1, Op::Unary(UnaryOp::Neg), &[&late]).unwrap();
        let out = rw.finish().unwrap().unwrap();
        let names: Vec<&str> = out.nodes.iter().map(|n| n.name.as_str()).collect();
        assert_eq!(names, ["%0", "%late", "%1", "%2"]);
        let mut checked = out.clone();
        ekb_ir::l0::check::check(&mut checked).unwrap();
    }

    #[test]
    fn a_group_stays_while_its_members_do_and_dissolves_when_one_goes() {
        let g = graph(&G.replace("return %2", "fuse %1, %2\n      return %2"));
        assert_eq!(g.groups.len(), 1);
        let mut rw = Rewrite::new(&g);
        rw.set(0, Op::Unary(UnaryOp::Abs), &["x"]).unwrap();
        assert_eq!(rw.finish().unwrap().unwrap().groups, g.groups, "an edit outside the group keeps it");
        let mut rw = Rewrite::new(&g);
        rw.replace_uses("%1", "%0").unwrap();
        rw.remove(1);
        let out = rw.finish().unwrap().unwrap();
        assert!(out.groups.is_empty(), "{}", print(&out));
        let mut checked = out.clone();
        ekb_ir::l0::check::check(&mut checked).unwrap();
    }

    #[test]
    fn bugs_of_a_pass_are_errors() {
        let g = graph(G);
        let mut rw = Rewrite::new(&g);
        rw.remove(0);
        let e = rw.finish().unwrap_err();
        assert!(e.message.contains("`%1` uses `%0`, which the rewrite removed"), "{e}");

        let mut rw = Rewrite::new(&g);
        let e = rw.set(
            0,
            Op::Reduce { kind: ekb_ir::l0::ReduceKind::Sum, axes: vec![0], keepdims: false },
            &["x"],
        );
        assert!(e.unwrap_err().message.contains("would change its type to f32[]"));

        let mut rw = Rewrite::new(&g);
        rw.set(0, Op::Unary(UnaryOp::Relu), &["%2"]).unwrap();
        assert!(rw.finish().unwrap_err().message.contains("cycle"));

        let mut rw = Rewrite::new(&g);
        rw.replace_uses("%1", "%2").unwrap();
        rw.replace_uses("%2", "%1").unwrap();
        assert!(rw.finish().unwrap_err().message.contains("redirected in a loop"));
    }
}
