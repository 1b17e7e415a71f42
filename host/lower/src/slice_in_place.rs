//! Slices in place: the kernels that read a `slice`'s result read its slice of the operand
//! instead, and the slice's copy kernel leaves the plan.
//!
//! A slice of unit steps is a window of its operand: `y[.., i, ..] = x[.., start + i, ..]` on
//! each sliced axis. Its readers can read `x` there (every parameter bound to `y`'s buffer is
//! bound to `x`'s, typed as `x`, each access offset by the starts: `crate::rebind`), so the copy
//! is a pass over the window that nothing needs: the query, key and value of a ViT attention
//! sliced from one transposed projection, ShuffleNet's channel split, a C2f block's halves.
//!
//! What it must keep true: every reader sees the values it saw. `x` is written before the slice
//! runs and never again (a value is written by its own node's kernels; liveness is computed from
//! the final plan, so `x` now lives until the last reader). So a slice moves only where: it is in
//! no fusion group (its kernel is the copy alone), not a prepare step, of unit steps, and its
//! result a temp no other value shares, of the slice's shape, that the graph does not return;
//! its operand's buffer has the operand's shape (not a view of another shape, whose axes the
//! starts do not index); and each reader is a kernel run once, not a prepare step, that binds
//! the result only to parameters of its type or of a view that only drops or adds axes of
//! extent 1 (the query of a ViT attention, `[1, 1, h, s, d]` sliced, read as `[1, h, s, d]`),
//! and only reads it and the operand (a buffer may be
//! passed twice to one step where no use writes it: the query and key of one projection read by
//! one product).

use crate::rebind::{rebind, same_but_unit_axes};
use crate::reduce::norm_axis;
use ekb_ir::l0::{Graph, Op};
use ekb_ir::l1::{Access, BufferRole, Module};
use std::collections::{HashMap, HashSet};

/// Reads every eligible `slice` of `g` in place. `buffer` gives the module buffer behind a
/// value, `kernel` the name of a node's kernel.
pub(crate) fn slice_in_place(
    g: &Graph,
    mut m: Module,
    buffer: &dyn Fn(&str) -> String,
    kernel: &dyn Fn(&str) -> String,
) -> Module {
    let grouped: HashSet<&str> =
        g.groups.iter().flat_map(|f| f.nodes.iter().map(|v| v.name.as_str())).collect();
    for node in &g.nodes {
        let Op::Slice { axes, starts, steps, .. } = &node.op else { continue };
        if grouped.contains(node.name.as_str()) || steps.iter().any(|&s| s != 1) {
            continue;
        }
        let copy = kernel(&node.name);
        let runs: Vec<usize> =
            m.plan.iter().enumerate().filter(|(_, r)| r.kernel == copy).map(|(i, _)| i).collect();
        let [step] = runs[..] else { continue };
        let (result, source) = (buffer(&node.name), buffer(&node.args[0].name));
        let (Some(ty), Some(source_ty), Some(x_ty), Some(y_ty)) = (
            m.buffer(&result).map(|b| b.ty.clone()),
            m.buffer(&source).map(|b| b.ty.clone()),
            g.type_of(&node.args[0].name),
            node.ty.as_ref(),
        ) else {
            continue;
        };
        if m.plan[step].prepare
            || ty.shape != y_ty.shape
            || ty.numel() == 0
            || source_ty.shape != x_ty.shape
            || source == result
            || g.outputs.iter().any(|o| o.value.name == node.name)
            || !m.buffer(&result).is_some_and(|b| b.role == BufferRole::Temp)
            || !readers_movable(&m, &result, &source, step)
        {
            continue;
        }
        let rank = source_ty.shape.len();
        let offsets: Vec<(usize, usize)> = axes
            .iter()
            .zip(starts)
            .map(|(&a, &s)| {
                let n = source_ty.shape[norm_axis(a, rank)] as i64;
                (norm_axis(a, rank), (if s < 0 { s + n } else { s }).clamp(0, n) as usize)
            })
            .collect();
        m.plan.remove(step);
        rebind(&mut m, &result, &source, &source_ty, &offsets);
        m.buffers.retain(|b| b.name != result);
        if !m.plan.iter().any(|r| r.kernel == copy) {
            m.kernels.retain(|k| k.name != copy);
        }
    }
    m
}

/// Whether every run but the slice's (at `step`) that names `result` can read `source` instead.
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
                (a.name != result || p.ty.dtype == ty.dtype && same_but_unit_axes(&p.ty.shape, &ty.shape))
                    && (a.name != result && a.name != source || p.access == Access::In)
            })
    })
}

#[cfg(test)]
mod tests {
    use crate::testing::{
        gpu_knobs_match_reference, gpu_lowered_matches_reference, lowered_matches_reference,
    };
    use crate::Schedule;
    use ekb_ir::l1::Module;

    /// A ViT attention's query and key sliced from one transposed projection and read by one
    /// product (the key through a view without its unit axis), and a window of two axes (a negative
    /// start) read by an elementwise chain.
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

    fn slices(m: &Module) -> Vec<&str> {
        m.plan.iter().map(|r| r.kernel.as_str()).filter(|k| k.contains("slice")).collect()
    }

    #[test]
    fn the_readers_of_a_slice_read_its_window_of_the_operand_and_the_copy_goes() {
        let m = lowered_matches_reference(ATTENTION, Schedule::Default, "host");
        assert!(slices(&m).is_empty(), "{:?}", slices(&m));
        assert!(["t_q", "t_k", "t_v"].iter().all(|b| m.buffer(b).is_none()));
        let text = ekb_ir::l1::print::print(&m);
        // The product binds the transposed projection twice, the key's accesses at offset 1.
        assert!(
            m.plan.iter().any(
                |r| r.kernel.contains("matmul") && r.args.iter().filter(|a| a.name == "t_t").count() == 2
            ),
            "{text}"
        );
        assert!(text.contains("[1 + "), "{text}");
        for target in ["pocl", "h200"] {
            let m = gpu_lowered_matches_reference(ATTENTION, Schedule::Default, target);
            assert!(slices(&m).is_empty(), "{target}: {:?}", slices(&m));
            let m = gpu_knobs_match_reference(ATTENTION, &[("slice.in_place", 0)], target);
            assert_eq!(slices(&m).len(), 3, "{target}");
        }
    }

    #[test]
    fn a_returned_slice_and_one_of_a_fusion_group_keep_their_copies() {
        let returned = ATTENTION
            .replace("(s: f32[1,4,2,2], y:", "(q: f32[1,4,2,5], s: f32[1,4,2,2], y:")
            .replace("return %s,", "return %q, %s,");
        let m = lowered_matches_reference(&returned, Schedule::Default, "host");
        assert_eq!(slices(&m), ["k1_slice"]);
        let grouped = ATTENTION.replace("  return", "  fuse %v, %w\n  return");
        let m = lowered_matches_reference(&grouped, Schedule::Default, "host");
        assert_eq!(slices(&m), ["k3_slice"]);
    }
}
