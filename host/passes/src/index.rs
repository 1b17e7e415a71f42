//! A use-def index over a graph: where each value is defined, which nodes use it, whether it is
//! returned, and whether it depends only on parameters (no graph input reaches it).
//!
//! What it keeps true: the index describes the graph it was built from and nothing else; a pass
//! that changes the graph builds a new one. Users are node positions in node order, each node
//! listed once per value however many of its operands name it.

use ekb_ir::l0::{Graph, Node};
use std::collections::{HashMap, HashSet};

/// Where a value comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Def {
    /// The graph input at this position of `Graph::inputs`.
    Input(usize),
    /// The parameter at this position of `Graph::params`.
    Param(usize),
    /// The node at this position of `Graph::nodes`.
    Node(usize),
}

/// The use-def facts of one graph.
#[derive(Debug, Clone)]
pub struct Index {
    defs: HashMap<String, Def>,
    users: HashMap<String, Vec<usize>>,
    returned: HashSet<String>,
    param_only: HashSet<String>,
}

impl Index {
    /// Indexes `g`; names that are used but never defined are simply absent from `def`.
    pub fn new(g: &Graph) -> Index {
        let mut defs = HashMap::new();
        let mut param_only = HashSet::new();
        for (i, d) in g.inputs.iter().enumerate() {
            defs.insert(d.name.clone(), Def::Input(i));
        }
        for (i, d) in g.params.iter().enumerate() {
            defs.insert(d.name.clone(), Def::Param(i));
            param_only.insert(d.name.clone());
        }
        let mut users: HashMap<String, Vec<usize>> = HashMap::new();
        for (i, n) in g.nodes.iter().enumerate() {
            defs.insert(n.name.clone(), Def::Node(i));
            for a in &n.args {
                let list = users.entry(a.name.clone()).or_default();
                if list.last() != Some(&i) {
                    list.push(i);
                }
            }
            if n.args.iter().all(|a| param_only.contains(&a.name)) {
                param_only.insert(n.name.clone());
            }
        }
        let returned = g.outputs.iter().map(|o| o.value.name.clone()).collect();
        Index { defs, users, returned, param_only }
    }

    /// Where `name` is defined; `None` for a name the graph does not define.
    pub fn def(&self, name: &str) -> Option<Def> {
        self.defs.get(name).copied()
    }

    /// The node defining `name`, when a node does.
    pub fn node<'g>(&self, g: &'g Graph, name: &str) -> Option<&'g Node> {
        match self.def(name)? {
            Def::Node(i) => g.nodes.get(i),
            Def::Input(_) | Def::Param(_) => None,
        }
    }

    /// The positions of the nodes that use `name`, in node order.
    pub fn users(&self, name: &str) -> &[usize] {
        self.users.get(name).map_or(&[], Vec::as_slice)
    }

    /// Whether an output returns `name`.
    pub fn is_output(&self, name: &str) -> bool {
        self.returned.contains(name)
    }

    /// Whether exactly one node uses `name`, and no output returns it: the value can be rewritten
    /// together with its user without anyone else seeing the difference.
    pub fn single_use(&self, name: &str) -> bool {
        self.users(name).len() == 1 && !self.is_output(name)
    }

    /// Whether `name` depends only on parameters: a parameter, or a node all of whose operands
    /// depend only on parameters (a node without operands, `full` or `iota`, included).
    pub fn param_only(&self, name: &str) -> bool {
        self.param_only.contains(name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::graph;

    #[test]
    fn defs_users_outputs_and_parameter_only_values() {
        let g = graph(
            "graph t(x: f32[4]) -> (y: f32[4], z: f32[4]) {
               param w: f32[4] = ones
               %0 = mul(w, w)
               %1 = add(x, %0)
               %2 = relu(%1)
               return %2, %1
             }",
        );
        let ix = Index::new(&g);
        assert_eq!(ix.def("x"), Some(Def::Input(0)));
        assert_eq!(ix.def("w"), Some(Def::Param(0)));
        assert_eq!(ix.def("%1"), Some(Def::Node(1)));
        assert_eq!(ix.def("%9"), None);
        assert_eq!(ix.node(&g, "%2").map(|n| n.op.name()), Some("relu"));
        assert!(ix.node(&g, "x").is_none());
        // `mul(w, w)` is one user of `w`, listed once.
        assert_eq!(ix.users("w"), &[0]);
        assert_eq!(ix.users("%1"), &[2]);
        assert!(ix.users("%2").is_empty());
        assert!(ix.is_output("%2") && ix.is_output("%1") && !ix.is_output("%0"));
        assert!(ix.single_use("%0"));
        assert!(!ix.single_use("%1"), "returned as well as used");
        assert!(ix.param_only("w") && ix.param_only("%0"));
        assert!(!ix.param_only("x") && !ix.param_only("%1") && !ix.param_only("%2"));
    }
}
