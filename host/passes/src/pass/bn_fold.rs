//! A batch norm after a convolution of parameters becomes the convolution's weight and bias.
//!
//! `batch_norm(conv2d(x, w[, c]), g, b, m, v)` computes, per output channel `o`,
//! `(conv(x, w)[o] + c[o] - m[o]) * s[o] + b[o]` with `s = g / sqrt(v + eps)`: a convolution
//! with the weight `w[o] * s[o]` and the bias `(c[o] - m[o]) * s[o] + b[o]`. Both are batch
//! norms themselves, over the weight seen as `[1, OC, C/groups*kh*kw]` (channels on axis 1) with
//! a zero mean and shift, and over the bias seen as `[1, OC]`:
//!
//! ```text
//! %z = full([OC], 0.0)
//! %wv = reshape(w, [1, OC, K])                  a view of the weight
//! %ws = batch_norm(%wv, g, %z, %z, v)           w * s
//! %w2 = reshape(%ws, [OC, C/groups, kh, kw])
//! %cv = reshape(c, [1, OC])                     (%z without a bias)
//! %cs = batch_norm(%cv, g, b, m, v)             (c - m) * s + b
//! %c2 = reshape(%cs, [OC])
//! %y = conv2d(x, %w2, %c2)
//! ```
//!
//! All of it depends on parameters alone, so the lowering computes it once, in prepare steps,
//! and every execution runs the convolution with a bias where it ran the batch norm's four
//! operands in its epilogue (a subtraction, a division by a square root, a product and a sum per
//! output, with the square root per element where the channels are the vector lanes). Taken
//! where the weight and the batch norm's operands depend on parameters alone (a graph input
//! would have to be folded every execution), the convolution's result is read by the batch norm
//! alone, and both are f32.
//!
//! What it keeps true: each output is the same function of the input; the rounding differs (the
//! product with `s` is applied to each weight instead of to each sum), as between any two
//! lowerings of a convolution.

use crate::index::Index;
use crate::rewrite::Rewrite;
use ekb_ir::l0::{Graph, Op};
use ekb_ir::{DType, Diagnostic, TensorType};

pub fn run(g: &Graph) -> Result<Option<Graph>, Diagnostic> {
    let ix = Index::new(g);
    let mut rw = Rewrite::new(g);
    for (i, n) in g.nodes.iter().enumerate() {
        let Op::BatchNorm { eps } = n.op else { continue };
        let Some(conv) = ix.node(g, &n.args[0].name) else { continue };
        let Op::Conv2d(_) = &conv.op else { continue };
        let Some(wt) = g.type_of(&conv.args[1].name) else { continue };
        let Some(yt) = g.type_of(&conv.name) else { continue };
        let params = conv.args[1..].iter().chain(&n.args[1..]).all(|a| ix.param_only(&a.name));
        if !params || !ix.single_use(&conv.name) || wt.dtype != DType::F32 || yt.dtype != DType::F32 {
            continue;
        }
        let (oc, k) = (wt.shape[0], wt.shape[1..].iter().product::<usize>());
        let reshape = |d: &[usize]| Op::Reshape { shape: d.iter().map(|&v| v as i64).collect() };
        let span = n.span;
        let [g_, b, m, v] = [1, 2, 3, 4].map(|j| n.args[j].name.as_str());
        let zero = Op::Full { ty: TensorType::new(DType::F32, vec![oc]), value: 0.0 };
        let z = rw.insert_before(i, "bn_zero", zero, &[], span)?;
        let wv = rw.insert_before(i, "bn_weight", reshape(&[1, oc, k]), &[&conv.args[1].name], span)?;
        let ws = rw.insert_before(i, "bn_weight", Op::BatchNorm { eps }, &[&wv, g_, &z, &z, v], span)?;
        let w2 = rw.insert_before(i, "bn_weight", reshape(&wt.shape), &[&ws], span)?;
        let c = conv.args.get(2).map_or(z.as_str(), |c| c.name.as_str());
        let cv = rw.insert_before(i, "bn_bias", reshape(&[1, oc]), &[c], span)?;
        let cs = rw.insert_before(i, "bn_bias", Op::BatchNorm { eps }, &[&cv, g_, b, m, v], span)?;
        let c2 = rw.insert_before(i, "bn_bias", reshape(&[oc]), &[&cs], span)?;
        rw.set(i, conv.op.clone(), &[&conv.args[0].name, &w2, &c2])?;
        let at = g.nodes.iter().position(|x| x.name == conv.name).expect("the convolution is a node");
        rw.remove(at);
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
    fn a_grouped_convolution_takes_its_batch_norm_into_its_weight_and_bias() {
        let out = rewrite(super::run, CONV_BN);
        for line in [
            "%bn_zero: f32[6] = full(shape=[6], value=0.0, dtype=f32)",
            "%bn_weight: f32[1,6,18] = reshape(w, shape=[1,6,18])",
            "%bn_weight_2: f32[1,6,18] = batch_norm(%bn_weight, g, %bn_zero, %bn_zero, v, eps=0.001)",
            "%bn_weight_3: f32[6,2,3,3] = reshape(%bn_weight_2, shape=[6,2,3,3])",
            "%bn_bias: f32[1,6] = reshape(%bn_zero, shape=[1,6])",
            "%bn_bias_2: f32[1,6] = batch_norm(%bn_bias, g, b, m, v, eps=0.001)",
            "%n: f32[1,6,5,5] = conv2d(x, %bn_weight_3, %bn_bias_3, stride=[1,1], pad=[1,1,1,1], dilation=[1,1], groups=2)",
        ] {
            assert!(out.contains(line), "{line}\n{out}");
        }
        assert!(!out.contains("%c:"), "{out}");
    }

    #[test]
    fn a_convolution_bias_is_folded_with_the_mean() {
        let out = rewrite(
            super::run,
            &CONV_BN
                .replace("param v:", "param cb: f32[6] = uniform(-1.0, 1.0)\n       param v:")
                .replace("conv2d(x, w,", "conv2d(x, w, cb,"),
        );
        assert!(out.contains("%bn_bias: f32[1,6] = reshape(cb, shape=[1,6])"), "{out}");
    }

    #[test]
    fn an_input_operand_a_shared_convolution_and_a_normalised_input_are_unchanged() {
        let input_mean = CONV_BN
            .replace("graph t(x: f32[1,4,5,5])", "graph t(x: f32[1,4,5,5], m: f32[6])")
            .replace("       param m: f32[6] = uniform(-0.5, 0.5)\n", "");
        let shared = CONV_BN.replace("%r = relu(%n)", "%r = add(%n, %c)");
        let plain = "graph t(x: f32[1,6,5,5]) -> (y: f32[1,6,5,5]) {
           param g: f32[6] = uniform(0.5, 1.5)
           param b: f32[6] = uniform(-0.5, 0.5)
           %n = batch_norm(x, g, b, g, b, eps=0.001)
           return %n
         }";
        for text in [input_mean.as_str(), shared.as_str(), plain] {
            expect_unchanged(super::run, text);
        }
    }
}
