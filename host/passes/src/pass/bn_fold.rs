//! A batch norm of parameters becomes a scale and a shift per channel, computed once.
//!
//! `batch_norm(x, g, b, m, v)` computes, per channel `o` (axis 1), `(x[o] - m[o]) * s[o] + b[o]`
//! with `s = g / sqrt(v + eps)`: that is `x[o] * s[o] + t[o]` with `t = b - m * s`. Both `s` and
//! `t` are batch norms themselves, of ones and of zeros:
//!
//! ```text
//! %one = full([1, C], 1.0)
//! %zero = full([1, C], 0.0)
//! %s = batch_norm(%one, g, %zero', %zero', v)    g / sqrt(v + eps)   (%zero' = full([C], 0.0))
//! %t = batch_norm(%zero, g, b, m, v)             b - m * s
//! %y = add(mul(x, reshape(%s, [1, C, 1, ...])), reshape(%t, [1, C, 1, ...]))
//! ```
//!
//! Where the batch norm's operands depend on parameters alone (and its input does not: a batch
//! norm of parameters alone is computed once as it is), `%s` and `%t` do too: the
//! lowering computes them once, in prepare steps, and every execution runs a product and a sum
//! per element (one FMA, fused into the producer's epilogue as the batch norm was) where it ran
//! a subtraction, a division by a square root, a product and a sum, with the square root per
//! element where the channels are the vector lanes (the packed 1x1 convolutions over few
//! pixels). The weights stay as they are: folding the scale into a convolution's weight would
//! keep a second copy of every weight the lowering packs.
//!
//! What it keeps true: each output is the same function of the input, rounded differently (the
//! scale is one rounded factor instead of a division), as between any two lowerings; f32 only.

use crate::index::Index;
use crate::rewrite::Rewrite;
use ekb_ir::l0::{BinaryOp, Graph, Op};
use ekb_ir::{DType, Diagnostic, TensorType};

pub fn run(g: &Graph) -> Result<Option<Graph>, Diagnostic> {
    let ix = Index::new(g);
    let mut rw = Rewrite::new(g);
    for (i, n) in g.nodes.iter().enumerate() {
        let Op::BatchNorm { eps } = n.op else { continue };
        let Some(xt) = g.type_of(&n.args[0].name) else { continue };
        // A batch norm of parameters alone (the scale and shift below among them) is computed
        // once as it is.
        let of_parameters = n.args[1..].iter().all(|a| ix.param_only(&a.name));
        if xt.dtype != DType::F32 || xt.shape.len() < 2 || !of_parameters || ix.param_only(&n.args[0].name) {
            continue;
        }
        let c = xt.shape[1];
        let full = |shape: Vec<usize>, value: f64| Op::Full { ty: TensorType::new(DType::F32, shape), value };
        // The scale and shift go first, so that they precede the batch norm input's producer,
        // whose kernel takes the product and sum in its epilogue (`fuse`).
        let span = n.span;
        let [g_, b, m, v] = [1, 2, 3, 4].map(|j| n.args[j].name.as_str());
        let one = rw.insert_before(0, "bn_one", full(vec![1, c], 1.0), &[], span)?;
        let zero = rw.insert_before(0, "bn_zero", full(vec![1, c], 0.0), &[], span)?;
        let zeros = rw.insert_before(0, "bn_zero", full(vec![c], 0.0), &[], span)?;
        let scale =
            rw.insert_before(0, "bn_scale", Op::BatchNorm { eps }, &[&one, g_, &zeros, &zeros, v], span)?;
        let shift = rw.insert_before(0, "bn_shift", Op::BatchNorm { eps }, &[&zero, g_, b, m, v], span)?;
        let mut per_channel = vec![1; xt.shape.len()];
        per_channel[1] = c;
        let reshape = Op::Reshape { shape: per_channel.iter().map(|&d| d as i64).collect() };
        let scale = rw.insert_before(0, "bn_scale", reshape.clone(), &[&scale], span)?;
        let shift = rw.insert_before(0, "bn_shift", reshape, &[&shift], span)?;
        let scaled =
            rw.insert_before(i, "bn_scaled", Op::Binary(BinaryOp::Mul), &[&n.args[0].name, &scale], span)?;
        rw.set(i, Op::Binary(BinaryOp::Add), &[&scaled, &shift])?;
    }
    rw.finish()
}

#[cfg(test)]
mod tests {
    use crate::testing::{expect_unchanged, rewrite};

    const CONV_BN: &str = "graph t(x: f32[1,4,5,5]) -> (y: f32[1,6,5,5]) {
       param w: f32[6,2,3,3] = kaiming_uniform
       param g: f32[6] = uniform(0.5, 1.5)
       param b: f32[6] = uniform(-0.5, 0.5)
       param m: f32[6] = uniform(-0.5, 0.5)
       param v: f32[6] = uniform(0.5, 1.5)
       %c = conv2d(x, w, pad=[1,1,1,1], groups=2)
       %n = batch_norm(%c, g, b, m, v, eps=0.001)
       %r = relu(%n)
       return %r
     }";

    #[test]
    fn a_batch_norm_of_parameters_becomes_a_scale_and_a_shift_per_channel() {
        let out = rewrite(super::run, CONV_BN);
        for line in [
            "%bn_one: f32[1,6] = full(shape=[1,6], value=1.0, dtype=f32)",
            "%bn_zero: f32[1,6] = full(shape=[1,6], value=0.0, dtype=f32)",
            "%bn_zero_2: f32[6] = full(shape=[6], value=0.0, dtype=f32)",
            "%bn_scale: f32[1,6] = batch_norm(%bn_one, g, %bn_zero_2, %bn_zero_2, v, eps=0.001)",
            "%bn_shift: f32[1,6] = batch_norm(%bn_zero, g, b, m, v, eps=0.001)",
            "%bn_scale_2: f32[1,6,1,1] = reshape(%bn_scale, shape=[1,6,1,1])",
            "%bn_scaled: f32[1,6,5,5] = mul(%c, %bn_scale_2)",
            "%n: f32[1,6,5,5] = add(%bn_scaled, %bn_shift_2)",
        ] {
            assert!(out.contains(line), "{line}\n{out}");
        }
        assert!(out.contains("%c: f32[1,6,5,5] = conv2d(x, w,"), "the weight stays: {out}");
        // The scale and shift are batch norms of parameters alone: a fixed point.
        expect_unchanged(super::run, &out);
    }

    #[test]
    fn a_batch_norm_over_tokens_has_its_channels_on_axis_1() {
        let out = rewrite(
            super::run,
            "graph t(x: f32[2,3,7]) -> (y: f32[2,3,7]) {
               param g: f32[3] = uniform(0.5, 1.5)
               param v: f32[3] = uniform(0.5, 1.5)
               %n = batch_norm(x, g, g, g, v, eps=0.00001)
               return %n
             }",
        );
        assert!(out.contains("reshape(%bn_scale, shape=[1,3,1])"), "{out}");
    }

    #[test]
    fn an_operand_of_the_graph_inputs_is_unchanged() {
        let input_mean = CONV_BN
            .replace("graph t(x: f32[1,4,5,5])", "graph t(x: f32[1,4,5,5], m: f32[6])")
            .replace("       param m: f32[6] = uniform(-0.5, 0.5)\n", "");
        expect_unchanged(super::run, &input_mean);
    }
}
