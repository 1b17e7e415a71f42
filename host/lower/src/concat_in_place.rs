//! Concatenation in place: the kernels that write a `concat`'s operands write their slices of
//! its result instead, and the concat's copy kernel leaves the plan.
//!
//! SqueezeNet's fire modules concatenate two convolutions' outputs; a copy of each, every
//! execution, is a pass over both that nothing needs: the convolutions can store at their
//! channel offset in the concatenated buffer. For a `concat` along axis `a`, operand `k` of the
//! operands `x_0 .. x_n` is the slice of the result at offset `o_k` (the sum of the extents of
//! `x_0 .. x_{k-1}` along `a`): every kernel parameter bound to `x_k`'s buffer is bound to the
//! result's buffer instead, its type becomes the result's, and each of its accesses adds `o_k`
//! to its index along `a`. Readers of `x_k` other than the concat read the slice the same way.
//!
//! What it must keep true: the same values in the same buffers after every step that reads
//! them. So an operand is moved only where its buffer is a temp no other value shares, named by
//! no `prepare` step (a prepared temp keeps its values across executions, the result does not),
//! its buffer has the slice's shape (not a view of a buffer of another shape) and is bound only
//! to parameters of that type (a view of another shape would need its index arithmetic redone),
//! in kernels that each run once and name neither the result nor another operand of the concat
//! (two parameters bound to one written buffer); an operand given twice keeps its copy. A
//! result that the graph returns keeps it too: written by the two convolutions of SqueezeNet's
//! first fire module, its 55x55 output took their time from 250 to 420 us on a 2-core AVX-512
//! VM, the same code (the 13x13 fire modules' outputs gained). The 1x1 convolution alone took
//! 83 us into its own temp, 133 into its half of a 128-channel temp, 215 into the output: where
//! its rows land relative to the rows it reads decides, which suggests 4K aliasing between loads
//! and stores (no PMU here to confirm); the Level-3 graphs, whose concats are temps, gained.
//! Either every operand of a concat moves or none does. The result's buffer is live from the first operand's writer on (a temp
//! is live from the first step naming it), so nothing else is placed over a slice written early.

use crate::rebind::{rebind, Map};
use ekb_ir::l0::{Graph, Op};
use ekb_ir::l1::{BufferRole, Module};
use ekb_ir::TensorType;
use std::collections::HashMap;

/// Moves the operands of every eligible `concat` of `g` into its result. `buffer` gives the
/// module buffer behind a value, `kernel` the name of a node's kernel: the concat's runs are
/// those of that kernel and of the kernels the GPU lowering split it into (`NAME_0`, `NAME_1`,
/// ...: one per operand).
pub(crate) fn concat_in_place(
    g: &Graph,
    mut m: Module,
    buffer: &dyn Fn(&str) -> String,
    kernel: &dyn Fn(&str) -> String,
) -> Module {
    for node in &g.nodes {
        let Op::Concat { axis } = node.op else { continue };
        let concat = kernel(&node.name);
        let of_concat = |k: &str| {
            k == concat
                || k.strip_prefix(concat.as_str())
                    .and_then(|rest| rest.strip_prefix('_'))
                    .is_some_and(|j| !j.is_empty() && j.bytes().all(|b| b.is_ascii_digit()))
        };
        let steps: Vec<usize> =
            m.plan.iter().enumerate().filter(|(_, r)| of_concat(&r.kernel)).map(|(i, _)| i).collect();
        if steps.is_empty() {
            continue;
        }
        let result = buffer(&node.name);
        let Some(result_ty) = m.buffer(&result).map(|b| b.ty.clone()) else { continue };
        let rank = result_ty.shape.len() as i64;
        let axis = if axis < 0 { axis + rank } else { axis } as usize;
        let operands: Vec<String> = node.args.iter().map(|a| buffer(&a.name)).collect();
        let mut moves = Vec::new();
        let mut offset = 0;
        for operand in &operands {
            let Some(ty) = m.buffer(operand).map(|b| b.ty.clone()) else { break };
            // The operand's buffer is its slice's shape (not a view of another shape's buffer).
            let slice = ty.shape.len() == result_ty.shape.len()
                && (0..ty.shape.len()).all(|d| d == axis || ty.shape[d] == result_ty.shape[d]);
            if !slice
                || !movable(&m, operand, &ty, &result, &steps)
                || operands.iter().filter(|o| *o == operand).count() > 1
            {
                break;
            }
            moves.push((operand.clone(), offset));
            offset += ty.shape[axis];
        }
        // A kernel naming two operands would read one slice of the result and write another
        // through two parameters bound to one buffer, which the plan forbids.
        let shared = m.plan.iter().enumerate().any(|(i, r)| {
            !steps.contains(&i)
                && operands.iter().filter(|o| r.args.iter().any(|a| a.name == **o)).count() > 1
        });
        if moves.len() != operands.len()
            || shared
            || !m.buffer(&result).is_some_and(|b| b.role == BufferRole::Temp)
        {
            continue;
        }
        for (operand, offset) in moves {
            rebind(
                &mut m,
                &operand,
                &result,
                &result_ty,
                &Map::Offsets(vec![(axis, offset)]),
                &result_ty.shape,
            );
            m.buffers.retain(|b| b.name != operand);
        }
        for &step in steps.iter().rev() {
            m.plan.remove(step);
        }
        m.kernels.retain(|k| !of_concat(&k.name) || m.plan.iter().any(|r| r.kernel == k.name));
    }
    m
}

/// Whether `operand` (of type `ty`) can become a slice of `result`, whose concat runs at plan
/// steps `concat`.
fn movable(m: &Module, operand: &str, ty: &TensorType, result: &str, concat: &[usize]) -> bool {
    if !m.buffer(operand).is_some_and(|b| b.role == BufferRole::Temp && b.ty.dtype == ty.dtype) {
        return false;
    }
    let mut runs: HashMap<&str, usize> = HashMap::new();
    for r in &m.plan {
        *runs.entry(r.kernel.as_str()).or_default() += 1;
    }
    m.plan.iter().enumerate().all(|(i, r)| {
        let named = r.args.iter().any(|a| a.name == operand);
        if !named || concat.contains(&i) {
            return true;
        }
        let Some(k) = m.kernel(&r.kernel) else { return false };
        !r.prepare
            && runs[r.kernel.as_str()] == 1
            && !r.args.iter().any(|a| a.name == result)
            && r.args.iter().zip(&k.params).all(|(a, p)| a.name != operand || p.ty == *ty)
    })
}

#[cfg(test)]
mod tests {
    use crate::testing::{
        gpu_knobs_match_reference, gpu_lowered_matches_reference, knobs_match_reference,
        lowered_matches_reference,
    };
    use crate::Schedule;
    use ekb_ir::l1::Module;

    /// A fire module: two convolutions of one input, concatenated, then a pooling.
    const FIRE: &str = "graph fire(x: f32[1,4,6,6]) -> (y: f32[1,10,3,3]) {
  param a: f32[4,4,1,1] = kaiming_uniform
  param b: f32[6,4,3,3] = kaiming_uniform
  %e1: f32[1,4,6,6] = conv2d(x, a, stride=[1,1], pad=[0,0,0,0], dilation=[1,1], groups=1)
  %e3: f32[1,6,6,6] = conv2d(x, b, stride=[1,1], pad=[1,1,1,1], dilation=[1,1], groups=1)
  %c: f32[1,10,6,6] = concat(%e1, %e3, axis=1)
  %y: f32[1,10,3,3] = max_pool2d(%c, kernel=[2,2], stride=[2,2], pad=[0,0,0,0])
  return %y
}";

    fn runs(m: &Module) -> Vec<String> {
        m.plan
            .iter()
            .map(|r| {
                format!(
                    "{}({})",
                    r.kernel,
                    r.args.iter().map(|a| a.name.as_str()).collect::<Vec<_>>().join(", ")
                )
            })
            .collect()
    }

    #[test]
    fn the_writers_of_a_concats_operands_write_its_result_and_the_copy_goes() {
        let m = lowered_matches_reference(FIRE, Schedule::Default, "host");
        let plan = runs(&m);
        assert!(plan.iter().all(|r| !r.contains("concat")), "{plan:?}");
        assert!(plan.iter().filter(|r| r.ends_with(", t_c)")).count() == 2, "{plan:?}");
        assert!(m.buffer("t_e1").is_none() && m.buffer("t_e3").is_none());
        // The second convolution stores at channel offset 4, in a parameter of the result's type.
        let text = ekb_ir::l1::print::print(&m);
        assert!(text.contains("t_e3: f32[1,10,6,6] out"), "{text}");
        assert!(text.lines().any(|l| l.contains("t_e3[0, 4 + ")), "{text}");
        // The knob keeps the copy.
        let m = knobs_match_reference(FIRE, &[("concat.in_place", 0)], "host");
        assert!(runs(&m).iter().any(|r| r.contains("concat")));
    }

    #[test]
    fn a_returned_concat_an_operand_read_by_a_sibling_and_a_repeated_operand_keep_the_copy() {
        let returned = FIRE.replace("-> (y: f32[1,10,3,3])", "-> (y: f32[1,10,6,6])").replace(
            "  %y: f32[1,10,3,3] = max_pool2d(%c, kernel=[2,2], stride=[2,2], pad=[0,0,0,0])\n  return %y",
            "  return %c",
        );
        // Ghost modules: the second operand is computed from the first.
        let sibling = "graph ghost(x: f32[1,4,6,6]) -> (y: f32[1,8,6,6]) {
  param a: f32[4,4,1,1] = kaiming_uniform
  param d: f32[4,1,3,3] = kaiming_uniform
  %p: f32[1,4,6,6] = conv2d(x, a, stride=[1,1], pad=[0,0,0,0], dilation=[1,1], groups=1)
  %q: f32[1,4,6,6] = conv2d(%p, d, stride=[1,1], pad=[1,1,1,1], dilation=[1,1], groups=4)
  %c: f32[1,8,6,6] = concat(%p, %q, axis=1)
  %y: f32[1,8,6,6] = relu(%c)
  return %y
}";
        let twice = FIRE
            .replace("concat(%e1, %e3, axis=1)", "concat(%e1, %e1, axis=1)")
            .replace("f32[1,10,", "f32[1,8,");
        for text in [returned.as_str(), sibling, twice.as_str()] {
            let m = lowered_matches_reference(text, Schedule::Default, "host");
            assert!(runs(&m).iter().any(|r| r.contains("concat")), "{text}\n{:?}", runs(&m));
        }
    }

    /// The rotate-half of a rotary embedding: a slice negated and a slice, concatenated.
    const ROTATE_HALF: &str = "graph rot(x: f32[2,3,8]) -> (y: f32[2,3,8]) {
  %x1: f32[2,3,4] = slice(x, axes=[2], starts=[0], ends=[4], steps=[1])
  %x2: f32[2,3,4] = slice(x, axes=[2], starts=[4], ends=[8], steps=[1])
  %n: f32[2,3,4] = neg(%x2)
  %r: f32[2,3,8] = concat(%n, %x1, axis=2)
  %y: f32[2,3,8] = mul(%r, x)
  return %y
}";

    #[test]
    fn on_the_gpu_the_concats_kernels_one_per_operand_go_too() {
        for target in ["pocl", "h200"] {
            let m = gpu_lowered_matches_reference(ROTATE_HALF, Schedule::Default, target);
            let plan = runs(&m);
            assert!(plan.iter().all(|r| !r.contains("concat")), "{plan:?}");
            assert_eq!(plan.iter().filter(|r| r.ends_with(", t_r)")).count(), 2, "{plan:?}");
            // The second operand's stores land at offset 4 along the last axis.
            let text = ekb_ir::l1::print::print(&m);
            assert!(text.lines().any(|l| l.contains("x1[") && l.contains("4 + ")), "{text}");
            let m = gpu_knobs_match_reference(ROTATE_HALF, &[("concat.in_place", 0)], target);
            assert_eq!(runs(&m).iter().filter(|r| r.contains("concat")).count(), 2, "{:?}", runs(&m));
        }
    }
}
