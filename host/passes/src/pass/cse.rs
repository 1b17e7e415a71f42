//! Common-subexpression elimination: a node with the same operator, the same attributes and the
//! same operands (in the same order) as an earlier node is replaced by that node. Every L0
//! operator is a pure function of its operands, so the two compute the same value.

use crate::rewrite::Rewrite;
use ekb_ir::l0::Graph;
use ekb_ir::Diagnostic;
use std::collections::HashMap;

pub fn run(g: &Graph) -> Result<Option<Graph>, Diagnostic> {
    let mut rw = Rewrite::new(g);
    // (operator with its attributes, operands after earlier replacements) -> the first node.
    let mut seen: HashMap<(String, Vec<String>), &str> = HashMap::new();
    let mut same_as: HashMap<&str, &str> = HashMap::new();
    for (i, n) in g.nodes.iter().enumerate() {
        let args =
            n.args.iter().map(|a| same_as.get(a.name.as_str()).copied().unwrap_or(&a.name).to_string());
        // The operator's `Debug` text holds its name and every attribute exactly (floats
        // round-trip, `0.0` and `-0.0` differ).
        let key = (format!("{:?}", n.op), args.collect());
        match seen.get(&key) {
            Some(&first) => {
                same_as.insert(&n.name, first);
                rw.replace_uses(&n.name, first)?;
                rw.remove(i);
            }
            None => {
                seen.insert(key, &n.name);
            }
        }
    }
    rw.finish()
}

#[cfg(test)]
mod tests {
    use crate::testing::{expect_unchanged, rewrite};

    #[test]
    fn repeated_nodes_are_computed_once() {
        let out = rewrite(
            super::run,
            "graph t(x: f32[4]) -> (y: f32[4], z: f32[4]) {
               %0 = relu(x)
               %1 = relu(x)
               %2 = exp(%0)
               %3 = exp(%1)
               %4 = add(%2, %3)
               return %4, %3
             }",
        );
        assert_eq!(
            out,
            "graph t(x: f32[4]) -> (y: f32[4], z: f32[4]) {\n  %0: f32[4] = relu(x)\n  \
             %2: f32[4] = exp(%0)\n  %4: f32[4] = add(%2, %2)\n  return %4, %2\n}\n"
        );
    }

    #[test]
    fn different_attributes_or_operand_order_are_kept_apart() {
        expect_unchanged(
            super::run,
            "graph t(x: f32[4], b: f32[4]) -> (y: f32[4], z: f32[4], u: f32[4], v: f32[4]) {
               %0 = leaky_relu(x, alpha=0.1)
               %1 = leaky_relu(x, alpha=0.2)
               %2 = sub(x, b)
               %3 = sub(b, x)
               return %0, %1, %2, %3
             }",
        );
    }
}
