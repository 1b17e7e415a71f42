//! Reads in place: the kernels that read a `slice` or a `transpose` read the operand instead,
//! and the copy kernel leaves the plan.
//!
//! A slice of unit steps is a window of its operand (`y[.., i, ..] = x[.., start + i, ..]` on
//! each sliced axis), a transpose a permutation of its axes (`y[i] = x[j]`, `j[perm[k]] = i[k]`).
//! Their readers can read `x` there (every parameter bound to `y`'s buffer is bound to `x`'s,
//! typed as `x`, each access mapped: `crate::rebind`), so the copy is a pass that nothing needs:
//! the query, key and value of a ViT attention sliced from one transposed projection, the heads
//! of a projection transposed for a product, a ghost module's and a C2f block's halves,
//! ShuffleNet's channel split. Nodes are taken last to first, so a slice of a transpose is read
//! from the transpose's operand: the slice's readers are rebound to the transpose's buffer first,
//! then, as its readers, to its operand.
//!
//! What it must keep true: every reader sees the values it saw. `x` is written before the copy
//! runs and never again (a value is written by its own node's kernels; liveness is computed from
//! the final plan, so `x` now lives until the last reader). So a node moves only where: it is in
//! no fusion group (its kernel is the copy alone), not a prepare step; a slice of unit steps, or
//! a transpose that keeps the last axis last (its readers' innermost loops still walk contiguous
//! elements) that no product or convolution reads (their kernels tile for contiguous rows, and
//! lost more to the permuted reads than the copy cost); its result a temp no other value shares, of its shape, that the graph does not
//! return; its operand's buffer holds the operand as itself or as a view that merges or splits
//! axes (`crate::rebind::regroup`: a projection `[1, s, h * d]` whose `[1, s, h, d]` view is
//! transposed); and each reader is a kernel run once, not a prepare step, that binds the result
//! only to parameters of its type or of such a view of it (the query of a ViT attention,
//! `[1, 1, h, s, d]` sliced, read as `[1, h, s, d]`), and only reads it and the operand (a
//! buffer may be passed twice to one step where no use writes it: the query and key of one
//! projection read by one product).

use crate::rebind::{rebind, regroup, Map};
use crate::reduce::norm_axis;
use ekb_ir::l0::{Graph, Node, Op};
use ekb_ir::l1::{Access, BufferRole, Module};
use std::collections::{HashMap, HashSet};

/// Which operators [`read_in_place`] may take.
pub(crate) struct Moves {
    pub slices: bool,
    pub transposes: bool,
}

/// Reads every eligible `slice` and `transpose` of `g` in place, last to first. `buffer` gives
/// the module buffer behind a value, `kernel` the name of a node's kernel.
pub(crate) fn read_in_place(
    g: &Graph,
    mut m: Module,
    moves: &Moves,
    buffer: &dyn Fn(&str) -> String,
    kernel: &dyn Fn(&str) -> String,
) -> Module {
    let grouped: HashSet<&str> =
        g.groups.iter().flat_map(|f| f.nodes.iter().map(|v| v.name.as_str())).collect();
    for node in g.nodes.iter().rev() {
        if !matches!(node.op, Op::Slice { .. } | Op::Transpose { .. })
            || grouped.contains(node.name.as_str())
            || g.outputs.iter().any(|o| o.value.name == node.name)
        {
            continue;
        }
        let source = buffer(&node.args[0].name);
        let Some(source_ty) = m.buffer(&source).map(|b| b.ty.clone()) else { continue };
        let copy = kernel(&node.name);
        let runs: Vec<usize> =
            m.plan.iter().enumerate().filter(|(_, r)| r.kernel == copy).map(|(i, _)| i).collect();
        let [step] = runs[..] else { continue };
        let result = buffer(&node.name);
        let (Some(ty), Some(x_ty), Some(y_ty)) =
            (m.buffer(&result).map(|b| b.ty.clone()), g.type_of(&node.args[0].name), node.ty.as_ref())
        else {
            continue;
        };
        if m.plan[step].prepare
            || ty.shape != y_ty.shape
            || ty.numel() == 0
            || regroup(&x_ty.shape, &source_ty.shape).is_none()
            || source == result
            || !m.buffer(&result).is_some_and(|b| b.role == BufferRole::Temp)
            || !readers_movable(&m, &result, &source, step)
        {
            continue;
        }
        if matches!(node.op, Op::Transpose { .. }) && read_by_products(g, &node.name) {
            continue;
        }
        let Some(map) = map_of(node, &x_ty.shape, moves) else { continue };
        m.plan.remove(step);
        rebind(&mut m, &result, &source, &source_ty, &map, &x_ty.shape);
        m.buffers.retain(|b| b.name != result);
        if !m.plan.iter().any(|r| r.kernel == copy) {
            m.kernels.retain(|k| k.name != copy);
        }
    }
    m
}

/// How an index into `node`'s result lands in its operand (of shape `source`, its graph type),
/// where `node` is a move `moves` allows.
fn map_of(node: &Node, source: &[usize], moves: &Moves) -> Option<Map> {
    let rank = source.len();
    match &node.op {
        Op::Slice { axes, starts, steps, .. } if moves.slices && steps.iter().all(|&s| s == 1) => {
            Some(Map::Offsets(
                axes.iter()
                    .zip(starts)
                    .map(|(&a, &s)| {
                        let n = source[norm_axis(a, rank)] as i64;
                        (norm_axis(a, rank), (if s < 0 { s + n } else { s }).clamp(0, n) as usize)
                    })
                    .collect(),
            ))
        }
        Op::Transpose { perm } if moves.transposes && rank > 0 => {
            (perm.len() == rank && perm[rank - 1] == rank - 1).then(|| Map::Permute(perm.clone()))
        }
        _ => None,
    }
}

/// Whether every run but the copy (at `step`) that names `result` can read `source` instead.
fn readers_movable(m: &Module, result: &str, source: &str, step: usize) -> bool {
    let mut runs: HashMap<&str, usize> = HashMap::new();
    for r in &m.plan {
        *runs.entry(r.kernel.as_str()).or_default() += 1;
    }
    let ty = &m.buffer(result).expect("checked by the caller").ty;
    m.plan.iter().enumerate().all(|(i, r)| {
        if i == step || !r.args.iter().any(|a| a.name == result) {
            return true;
        }
        let Some(k) = m.kernel(&r.kernel) else { return false };
        !r.prepare
            && runs[r.kernel.as_str()] == 1
            && r.args.iter().zip(&k.params).all(|(a, p)| {
                (a.name != result || p.ty.dtype == ty.dtype && splits_no_innermost(&p.ty.shape, &ty.shape))
                    && (a.name != result && a.name != source || p.access == Access::In)
            })
    })
}

/// Whether a product or a convolution reads `value` (directly or through reshapes): their
/// kernels tile and pack their operands for contiguous rows, and reading a transpose's operand
/// through the permutation cost them more than the copy (TinyBERT's heads 0.95x, Whisper's
/// encoder 0.97x, paired on a 2-core AVX-512 VM), where elementwise readers, slices and
/// pools gained (ShuffleNet 1.07x, NanoDet 1.07x).
fn read_by_products(g: &Graph, value: &str) -> bool {
    g.nodes.iter().filter(|n| n.args.iter().any(|a| a.name == value)).any(|n| match n.op {
        Op::Reshape { .. } => read_by_products(g, &n.name),
        Op::MatMul { .. } | Op::Linear | Op::Conv2d(_) | Op::ConvTranspose2d(_) => true,
        _ => false,
    })
}

/// Whether a view of shape `view` over shape `shape` regroups without splitting its innermost
/// axis: a split is a division and a remainder of the index, which in a reader's innermost loop
/// would make every access a gather (a linear reading merged attention heads through their
/// transpose's view: 0.64x-0.83x paired on the transformer blocks).
fn splits_no_innermost(view: &[usize], shape: &[usize]) -> bool {
    let Some(runs) = regroup(view, shape) else { return false };
    let innermost = view.iter().rposition(|&d| d != 1);
    runs.iter().all(|r| r.to.len() == 1 || innermost.is_none_or(|a| !r.from.contains(&a)))
}

#[cfg(test)]
mod tests {
    use crate::testing::{
        gpu_knobs_match_reference, gpu_lowered_matches_reference, knobs_match_reference,
        lowered_matches_reference,
    };
    use crate::Schedule;
    use ekb_ir::l1::Module;

    /// A ViT attention's query and key sliced from one transposed projection and read by one
    /// product (the key through a view without its unit axis), and a window of two axes (a
    /// negative start) read by an elementwise chain.
    const ATTENTION: &str = "graph att(x: f32[4,3,2,5]) -> (s: f32[1,4,2,2], y: f32[2,4,2,3]) {
  %t: f32[3,4,2,5] = transpose(x, perm=[1,0,2,3])
  %q: f32[1,4,2,5] = slice(%t, axes=[0], starts=[0], ends=[1], steps=[1])
  %k: f32[1,4,2,5] = slice(%t, axes=[0], starts=[1], ends=[2], steps=[1])
  %v: f32[2,4,2,3] = slice(%t, axes=[0,3], starts=[1,-3], ends=[3,5], steps=[1,1])
  %kv: f32[4,2,5] = reshape(%k, shape=[4,2,5])
  %s: f32[1,4,2,2] = matmul(%q, %kv, transpose_a=false, transpose_b=true)
  %w: f32[2,4,2,3] = neg(%v)
  %y: f32[2,4,2,3] = mul(%w, %w)
  return %s, %y
}";

    /// The runs of copy kernels (slices and transposes) left in the plan.
    fn copies(m: &Module) -> Vec<&str> {
        m.plan
            .iter()
            .map(|r| r.kernel.as_str())
            .filter(|k| k.contains("slice") || k.contains("transpose"))
            .collect()
    }

    /// How many arguments of the product's run are `buf`.
    fn product_reads(m: &Module, buf: &str) -> usize {
        let run = m.plan.iter().find(|r| r.kernel.contains("matmul")).expect("a product");
        run.args.iter().filter(|a| a.name == buf).count()
    }

    #[test]
    fn the_readers_of_slices_and_transposes_read_the_operand_and_the_copies_go() {
        let m = lowered_matches_reference(ATTENTION, Schedule::Default, "host");
        assert!(copies(&m).is_empty(), "{:?}", copies(&m));
        assert!(["t_t", "t_q", "t_k", "t_v"].iter().all(|b| m.buffer(b).is_none()));
        // The product reads the input twice: the key at offset 1 along its second axis.
        let text = ekb_ir::l1::print::print(&m);
        assert_eq!(product_reads(&m, "x"), 2, "{text}");
        assert!(text.contains(", 1 + "), "{text}");
        // Without the transposes, the slices are read from the transposed copy.
        let m = knobs_match_reference(ATTENTION, &[("transpose.in_place", 0)], "host");
        assert_eq!(copies(&m), ["k0_transpose"]);
        assert_eq!(product_reads(&m, "t_t"), 2);
        for target in ["pocl", "h200"] {
            let m = gpu_lowered_matches_reference(ATTENTION, Schedule::Default, target);
            assert!(copies(&m).is_empty(), "{target}: {:?}", copies(&m));
            let m = gpu_knobs_match_reference(
                ATTENTION,
                &[("slice.in_place", 0), ("transpose.in_place", 0)],
                target,
            );
            assert_eq!(copies(&m).len(), 4, "{target}");
        }
    }

    #[test]
    fn returned_grouped_and_last_axis_moving_copies_stay() {
        let returned = ATTENTION
            .replace("(s: f32[1,4,2,2], y:", "(q: f32[1,4,2,5], s: f32[1,4,2,2], y:")
            .replace("return %s,", "return %q, %s,");
        let m = lowered_matches_reference(&returned, Schedule::Default, "host");
        assert_eq!(copies(&m), ["k1_slice"]);
        let grouped = ATTENTION.replace("  return", "  fuse %v, %w\n  return");
        let m = lowered_matches_reference(&grouped, Schedule::Default, "host");
        assert_eq!(copies(&m), ["k3_slice"]);
        // A transpose that moves the last axis keeps its copy (its readers would gather).
        let moving = "graph t(x: f32[4,6]) -> (y: f32[6,4]) {
  %t: f32[6,4] = transpose(x, perm=[1,0])
  %y: f32[6,4] = neg(%t)
  return %y
}";
        let m = lowered_matches_reference(moving, Schedule::Default, "host");
        assert_eq!(copies(&m), ["k0_transpose"]);
    }

    #[test]
    fn a_transpose_of_heads_split_from_a_projection_reads_the_projection() {
        // `[1, s, h * d]` viewed as `[1, s, h, d]` and transposed to `[1, h, s, d]`.
        let heads = "graph heads(x: f32[1,4,6]) -> (y: f32[1,2,4,3]) {
  %p: f32[1,4,6] = relu(x)
  %v: f32[1,4,2,3] = reshape(%p, shape=[1,4,2,3])
  %t: f32[1,2,4,3] = transpose(%v, perm=[0,2,1,3])
  %y: f32[1,2,4,3] = neg(%t)
  return %y
}";
        for (m, target) in [
            (lowered_matches_reference(heads, Schedule::Default, "host"), "host"),
            (gpu_lowered_matches_reference(heads, Schedule::Default, "pocl"), "pocl"),
        ] {
            assert!(copies(&m).is_empty(), "{target}: {:?}", copies(&m));
            // The reader's index, permuted, merged into the projection's last axis.
            let text = ekb_ir::l1::print::print(&m);
            assert!(text.contains("t_p["), "{target}: {text}");
        }
        // A reader whose view splits the transpose's innermost axis (heads merged back, as a
        // linear layer reads them) would divide its innermost index: the copy stays.
        let merged = heads.replace("-> (y: f32[1,2,4,3])", "-> (y: f32[8,3])").replace(
            "  %y: f32[1,2,4,3] = neg(%t)",
            "  %m: f32[8,3] = reshape(%t, shape=[8,3])\n  %y: f32[8,3] = neg(%m)",
        );
        let m = lowered_matches_reference(&merged, Schedule::Default, "host");
        assert!(copies(&m).is_empty(), "{:?}", copies(&m));
        let split = heads.replace("-> (y: f32[1,2,4,3])", "-> (y: f32[2,12])").replace(
            "  %y: f32[1,2,4,3] = neg(%t)",
            "  %m: f32[2,12] = reshape(%t, shape=[2,12])\n  %y: f32[2,12] = neg(%m)",
        );
        let m = lowered_matches_reference(&split, Schedule::Default, "host");
        assert_eq!(copies(&m), ["k2_transpose"]);
    }
}
