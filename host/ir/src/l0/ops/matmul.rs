//! Products: `matmul` and `linear`: their specs, how they are built from attributes and printed
//! back, and their type rules.
//!
//! What it keeps true (besides the parent module's rules):
//! - f32 operands give f32 and i8 operands their exact i32 sums, and a bias has the result's
//!   dtype (the product rule, [`Rule::product`], which `conv2d` shares);
//! - the inner dimensions agree after the transposes, and the batch dimensions of `matmul`
//!   broadcast; `linear`'s weight is `[out, in]` and its bias `[out]`.

use super::{
    a, broadcast, shape_str, spec, AttrDefault as D, AttrKind as K, AttrValue, OpSpec, Resolved, Rule, AB,
};
use crate::diag::Diagnostic;
use crate::l0::ast::Op;
use crate::types::TensorType;

/// `matmul` and `linear`.
pub(super) const SPECS: &[OpSpec] = &[
    spec(
        "matmul",
        AB,
        &[a("transpose_a", K::Bool, D::Bool(false)), a("transpose_b", K::Bool, D::Bool(false))],
    ),
    spec("linear", &["x", "w", "b?"], &[]),
];

/// Builds the product `spec` names from its resolved attributes; `None`: `spec` is of another
/// family.
pub(super) fn build(spec: &'static OpSpec, r: &Resolved) -> Result<Option<Op>, Diagnostic> {
    let op = match spec.name {
        "matmul" => Op::MatMul { transpose_a: r.bool("transpose_a"), transpose_b: r.bool("transpose_b") },
        "linear" => Op::Linear,
        _ => return Ok(None),
    };
    Ok(Some(op))
}

/// The attributes of a product, for [`Op::attrs_for_print`].
pub(super) fn attrs(op: &Op) -> Vec<(&'static str, AttrValue)> {
    use AttrValue as V;
    match op {
        Op::MatMul { transpose_a, transpose_b } => {
            vec![("transpose_a", V::Bool(*transpose_a)), ("transpose_b", V::Bool(*transpose_b))]
        }
        Op::Linear => vec![],
        other => unreachable!("`{}` is not a product", other.name()),
    }
}

/// The result type of a product (see [`super::infer`]).
pub(super) fn infer(op: &Op, rule: &Rule) -> Result<TensorType, Diagnostic> {
    let inputs = rule.inputs;
    let out = match op {
        Op::MatMul { transpose_a, transpose_b } => {
            let dtype = rule.product()?;
            let (a, b) = (inputs[0], inputs[1]);
            for (n, t) in [("a", a), ("b", b)] {
                if t.rank() < 2 {
                    return Err(rule.err(format!("`{n}` has rank {}, expected at least 2", t.rank())));
                }
            }
            let last2 = |t: &TensorType, tr: bool| {
                let (r, c) = (t.shape[t.rank() - 2], t.shape[t.rank() - 1]);
                if tr {
                    (c, r)
                } else {
                    (r, c)
                }
            };
            let (m, k) = last2(a, *transpose_a);
            let (k2, n) = last2(b, *transpose_b);
            if k != k2 {
                return Err(rule.err(format!(
                    "inner dimensions differ: a is [..,{m},{k}] and b is [..,{k2},{n}] (after transposes)"
                )));
            }
            let mut shape = broadcast(&a.shape[..a.rank() - 2], &b.shape[..b.rank() - 2])
                .map_err(|m| rule.err(format!("batch dimensions {m}")))?;
            shape.extend([m, n]);
            TensorType::new(dtype, shape)
        }
        Op::Linear => {
            let dtype = rule.product()?;
            let (x, w) = (inputs[0], inputs[1]);
            if x.rank() < 1 {
                return Err(rule.err("x is a scalar, expected rank >= 1".into()));
            }
            if w.rank() != 2 {
                return Err(rule.err(format!("w has rank {}, expected 2 ([out, in])", w.rank())));
            }
            let inner = x.shape[x.rank() - 1];
            if w.shape[1] != inner {
                return Err(rule.err(format!(
                    "x has {inner} input features but w has shape {} (expected [out, {inner}])",
                    shape_str(&w.shape)
                )));
            }
            if let Some(b) = inputs.get(2) {
                if b.shape != [w.shape[0]] {
                    return Err(rule.err(format!(
                        "b has shape {}, expected [{}]",
                        shape_str(&b.shape),
                        w.shape[0]
                    )));
                }
            }
            let mut shape = x.shape.clone();
            *shape.last_mut().expect("rank >= 1") = w.shape[0];
            TensorType::new(dtype, shape)
        }
        other => unreachable!("`{}` is not a product", other.name()),
    };
    Ok(out)
}
