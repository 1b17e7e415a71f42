//! Dead-node elimination: removes every node that no graph output depends on. Inputs and
//! parameters stay declared (they are the graph's signature) even when nothing reads them.

use crate::rewrite::Rewrite;
use ekb_ir::l0::Graph;
use ekb_ir::Diagnostic;
use std::collections::{HashMap, HashSet};

pub fn run(g: &Graph) -> Result<Option<Graph>, Diagnostic> {
    let at: HashMap<&str, usize> = g.nodes.iter().enumerate().map(|(i, n)| (n.name.as_str(), i)).collect();
    let mut live: HashSet<usize> = HashSet::new();
    let mut work: Vec<usize> =
        g.outputs.iter().filter_map(|o| at.get(o.value.name.as_str()).copied()).collect();
    while let Some(i) = work.pop() {
        if live.insert(i) {
            work.extend(g.nodes[i].args.iter().filter_map(|a| at.get(a.name.as_str()).copied()));
        }
    }
    let mut rw = Rewrite::new(g);
    for i in (0..g.nodes.len()).filter(|i| !live.contains(i)) {
        rw.remove(i);
    }
    rw.finish()
}

#[cfg(test)]
mod tests {
    use crate::testing::{expect_unchanged, rewrite};

    #[test]
    fn nodes_no_output_needs_are_removed() {
        let out = rewrite(
            super::run,
            "graph t(x: f32[4], unused: f32[2]) -> (y: f32[4]) {
               param w: f32[4] = ones
               %0 = relu(x)
               %1 = mul(%0, w)
               %2 = exp(%1)
               %3 = neg(unused)
               return %1
             }",
        );
        assert_eq!(
            out,
            "graph t(x: f32[4], unused: f32[2]) -> (y: f32[4]) {\n  param w: f32[4] = ones\n  \
             %0: f32[4] = relu(x)\n  %1: f32[4] = mul(%0, w)\n  return %1\n}\n"
        );
    }

    #[test]
    fn a_graph_whose_nodes_all_feed_an_output_is_unchanged() {
        expect_unchanged(
            super::run,
            "graph t(x: f32[4]) -> (y: f32[4], z: f32[4]) {
               %0 = relu(x)
               %1 = neg(%0)
               return %1, x
             }",
        );
    }
}
