//! Transposes written in place (the GPU lowering): the kernels that write a `transpose`'s
//! operand write its result instead, each store permuted, and the transpose's copy kernel
//! leaves the plan.
//!
//! Where the readers of a transpose cannot read its operand through the permutation (a linear
//! layer reading an attention's merged heads would divide its innermost index;
//! `crate::read_in_place`), its operand's writers can often store the transposed layout
//! directly: the attention's second product stores `[b, h, s, d]` rows at `[b, s, h, d]`, and the
//! copy between it and the output projection goes. On the GPU that is a launch less per
//! attention. The CPU lowering does not take it: paired on a 2-core AVX-512 VM over the 20 CPU
//! instances it changed, geomean 1.00x (0.96x to 1.03x; the copy is cheap there and the product's
//! permuted stores cost about as much).
//!
//! What it must keep true: the same values in the same buffers after every step that reads
//! them. So a transpose moves only where: it is in no fusion group (its kernel is the copy
//! alone), not a prepare step, and keeps the last axis last (each writer's rows stay
//! contiguous); its result is a temp of its shape the graph does not return; its operand is a
//! temp of its shape, not returned, that only the copy reads besides its writers, written by
//! kernels that each run once, are no prepare step, and bind it only to parameters of its type
//! and not the result too.

use crate::rebind::{rebind, Map};
use ekb_ir::l0::{Graph, Op};
use ekb_ir::l1::{Access, BufferRole, Module};
use std::collections::{HashMap, HashSet};

/// Writes every eligible `transpose` of `g` in place. `buffer` gives the module buffer behind a
/// value, `kernel` the name of a node's kernel.
pub(crate) fn write_in_place(
    g: &Graph,
    mut m: Module,
    buffer: &dyn Fn(&str) -> String,
    kernel: &dyn Fn(&str) -> String,
) -> Module {
    let grouped: HashSet<&str> =
        g.groups.iter().flat_map(|f| f.nodes.iter().map(|v| v.name.as_str())).collect();
    let returned = |v: &str| g.outputs.iter().any(|o| o.value.name == v);
    for node in &g.nodes {
        let Op::Transpose { perm } = &node.op else { continue };
        let rank = perm.len();
        if rank == 0
            || perm[rank - 1] != rank - 1
            || grouped.contains(node.name.as_str())
            || returned(&node.name)
            || returned(&node.args[0].name)
        {
            continue;
        }
        let copy = kernel(&node.name);
        let runs: Vec<usize> =
            m.plan.iter().enumerate().filter(|(_, r)| r.kernel == copy).map(|(i, _)| i).collect();
        let [step] = runs[..] else { continue };
        let (operand, result) = (buffer(&node.args[0].name), buffer(&node.name));
        let (Some(x), Some(y), Some(x_ty), Some(y_ty)) = (
            m.buffer(&operand).cloned(),
            m.buffer(&result).cloned(),
            g.type_of(&node.args[0].name),
            node.ty.as_ref(),
        ) else {
            continue;
        };
        if m.plan[step].prepare
            || x.role != BufferRole::Temp
            || y.role != BufferRole::Temp
            || x.ty != *x_ty
            || y.ty.shape != y_ty.shape
            || x.ty.numel() == 0
            || !writers_movable(&m, &operand, &result, step)
        {
            continue;
        }
        // An index `j` of the operand lands at `i` of the result with `i[k] = j[perm[k]]`.
        let mut inverse = vec![0; rank];
        for (k, &p) in perm.iter().enumerate() {
            inverse[p] = k;
        }
        m.plan.remove(step);
        rebind(&mut m, &operand, &result, &y.ty, &Map::Permute(inverse), &y.ty.shape);
        m.buffers.retain(|b| b.name != operand);
        if !m.plan.iter().any(|r| r.kernel == copy) {
            m.kernels.retain(|k| k.name != copy);
        }
    }
    m
}

/// Whether every run but the copy (at `step`) that names `operand` writes it, runs once, is no
/// prepare step, binds it only at its own type and does not name `result`.
fn writers_movable(m: &Module, operand: &str, result: &str, step: usize) -> bool {
    let mut runs: HashMap<&str, usize> = HashMap::new();
    for r in &m.plan {
        *runs.entry(r.kernel.as_str()).or_default() += 1;
    }
    let ty = &m.buffer(operand).expect("checked by the caller").ty;
    m.plan.iter().enumerate().all(|(i, r)| {
        if i == step || !r.args.iter().any(|a| a.name == operand) {
            return true;
        }
        let Some(k) = m.kernel(&r.kernel) else { return false };
        let bound: Vec<_> = r.args.iter().zip(&k.params).filter(|(a, _)| a.name == operand).collect();
        !r.prepare
            && runs[r.kernel.as_str()] == 1
            && !r.args.iter().any(|a| a.name == result)
            && bound.iter().all(|(_, p)| p.ty == *ty)
            && bound.iter().any(|(_, p)| p.access != Access::In)
    })
}

#[cfg(test)]
mod tests {
    use crate::testing::{
        gpu_knobs_match_reference, gpu_lowered_matches_reference, lowered_matches_reference,
    };
    use crate::Schedule;
    use ekb_ir::l1::Module;

    /// An attention's context, its heads merged back for the output projection.
    const MERGE: &str = "graph merge(p: f32[1,2,3,3], v: f32[1,2,3,4], w: f32[5,8]) -> (y: f32[1,3,5]) {
  %c: f32[1,2,3,4] = matmul(p, v, transpose_a=false, transpose_b=false)
  %t: f32[1,3,2,4] = transpose(%c, perm=[0,2,1,3])
  %m: f32[1,3,8] = reshape(%t, shape=[1,3,8])
  %y: f32[1,3,5] = linear(%m, w)
  return %y
}";

    fn transposes(m: &Module) -> usize {
        m.plan.iter().filter(|r| r.kernel.contains("transpose")).count()
    }

    #[test]
    fn the_product_writes_the_merged_heads_and_the_copy_goes() {
        for target in ["pocl", "h200"] {
            let m = gpu_lowered_matches_reference(MERGE, Schedule::Default, target);
            assert_eq!(transposes(&m), 0, "{target}");
            assert!(m.buffer("t_c").is_none());
            let product = m.plan.iter().find(|r| r.kernel.contains("matmul")).expect("a product");
            assert!(product.args.iter().any(|a| a.name == "t_t"), "{product:?}");
            let m = gpu_knobs_match_reference(MERGE, &[("transpose.in_place", 0)], target);
            assert_eq!(transposes(&m), 1, "{target}");
            // An operand read by another kernel too keeps the copy.
            let shared = MERGE
                .replace("-> (y: f32[1,3,5])", "-> (y: f32[1,3,5], z: f32[1,2,3,4])")
                .replace("  return %y", "  %z: f32[1,2,3,4] = neg(%c)\n  return %y, %z");
            assert_eq!(transposes(&gpu_lowered_matches_reference(&shared, Schedule::Default, target)), 1);
        }
        // The CPU keeps the copy.
        assert_eq!(transposes(&lowered_matches_reference(MERGE, Schedule::Default, "host")), 1);
    }
}
