//! Normalisations: `layer_norm`, `rms_norm`, `batch_norm` and `group_norm`: their specs, how they
//! are built from attributes and printed back, and their type rules.
//!
//! What it keeps true (besides the parent module's rules):
//! - `eps` is finite and at least 0, and `groups` at least 1;
//! - every input is f32, and each parameter has exactly the shape it is applied with: the
//!   trailing dims of x (`layer_norm`, `rms_norm`; a bias as the weight), or one value per channel,
//!   axis 1 (`batch_norm`, `group_norm`);
//! - the groups of `group_norm` divide the channels.

use super::{a, shape_str, spec, AttrDefault as D, AttrKind as K, AttrValue, OpSpec, Resolved, Rule, F};
use crate::diag::Diagnostic;
use crate::l0::ast::Op;
use crate::types::{fmt_float, TensorType};

/// The four normalisations.
pub(super) const SPECS: &[OpSpec] = &[
    spec("layer_norm", &["x", "weight", "bias"], &[a("eps", K::Float, D::Float(1e-5))]),
    spec("rms_norm", &["x", "weight"], &[a("eps", K::Float, D::Float(1e-6))]),
    spec("batch_norm", &["x", "gamma", "beta", "mean", "var"], &[a("eps", K::Float, D::Float(1e-5))]),
    spec(
        "group_norm",
        &["x", "scale", "bias"],
        &[a("groups", K::Int, D::Required), a("eps", K::Float, D::Float(1e-5))],
    ),
];

/// Builds the normalisation `spec` names from its resolved attributes, checking value ranges;
/// `None`: `spec` is of another family.
pub(super) fn build(spec: &'static OpSpec, r: &Resolved) -> Result<Option<Op>, Diagnostic> {
    let op = match spec.name {
        "layer_norm" | "rms_norm" | "batch_norm" | "group_norm" => {
            let (eps, span) = r.finite("eps")?;
            if eps < 0.0 {
                return Err(r.err("eps", span, format!("must be >= 0, found {}", fmt_float(eps))));
            }
            match spec.name {
                "layer_norm" => Op::LayerNorm { eps },
                "rms_norm" => Op::RmsNorm { eps },
                "batch_norm" => Op::BatchNorm { eps },
                _ => Op::GroupNorm { groups: r.groups()?, eps },
            }
        }
        _ => return Ok(None),
    };
    Ok(Some(op))
}

/// The attributes of a normalisation, for [`Op::attrs_for_print`].
pub(super) fn attrs(op: &Op) -> Vec<(&'static str, AttrValue)> {
    use AttrValue as V;
    match op {
        Op::LayerNorm { eps } | Op::RmsNorm { eps } | Op::BatchNorm { eps } => {
            vec![("eps", V::Float(*eps))]
        }
        Op::GroupNorm { groups, eps } => {
            vec![("groups", V::Int(*groups as i64)), ("eps", V::Float(*eps))]
        }
        other => unreachable!("`{}` is not a normalisation", other.name()),
    }
}

/// The result type of a normalisation (see [`super::infer`]).
pub(super) fn infer(op: &Op, rule: &Rule) -> Result<TensorType, Diagnostic> {
    let inputs = rule.inputs;
    let out = match op {
        Op::LayerNorm { .. } | Op::RmsNorm { .. } => {
            for i in 0..inputs.len() {
                rule.want(i, F)?;
            }
            let (x, w) = (inputs[0], inputs[1]);
            let k = w.rank();
            if k == 0 || k > x.rank() {
                return Err(rule.err(format!(
                    "weight has rank {k}, expected 1 to {} (the trailing dims of x to normalise over)",
                    x.rank()
                )));
            }
            let tail = &x.shape[x.rank() - k..];
            if w.shape != tail {
                return Err(rule.err(format!(
                    "weight has shape {} but the last {k} dims of x are {}",
                    shape_str(&w.shape),
                    shape_str(tail)
                )));
            }
            if let Some(b) = inputs.get(2) {
                if b.shape != w.shape {
                    return Err(rule.err(format!(
                        "bias has shape {} but weight has shape {}",
                        shape_str(&b.shape),
                        shape_str(&w.shape)
                    )));
                }
            }
            x.clone()
        }
        Op::BatchNorm { .. } => {
            for i in 0..inputs.len() {
                rule.want(i, F)?;
            }
            let x = inputs[0];
            if x.rank() < 2 {
                return Err(
                    rule.err(format!("x has rank {}, expected at least 2 (channels on axis 1)", x.rank()))
                );
            }
            for (i, p) in inputs.iter().enumerate().skip(1) {
                if p.shape != [x.shape[1]] {
                    return Err(rule.err(format!(
                        "`{}` has shape {} but x has {} channels, expected [{}]",
                        rule.spec.input_name(i),
                        shape_str(&p.shape),
                        x.shape[1],
                        x.shape[1]
                    )));
                }
            }
            x.clone()
        }
        Op::GroupNorm { groups, .. } => {
            for i in 0..inputs.len() {
                rule.want(i, F)?;
            }
            let x = inputs[0];
            if x.rank() < 2 {
                return Err(rule.err(format!(
                    "x has rank {}, expected at least 2 ([N,C,...], channels on axis 1)",
                    x.rank()
                )));
            }
            let c = x.shape[1];
            if !c.is_multiple_of(*groups) {
                return Err(rule
                    .err(format!("{c} channels cannot be split into groups={groups}"))
                    .with_expected("a number of groups that divides the channels (x.shape[1])"));
            }
            for (i, p) in inputs.iter().enumerate().skip(1) {
                if p.shape != [c] {
                    return Err(rule.err(format!(
                        "`{}` has shape {} but x has {c} channels, expected [{c}]",
                        rule.spec.input_name(i),
                        shape_str(&p.shape)
                    )));
                }
            }
            x.clone()
        }
        other => unreachable!("`{}` is not a normalisation", other.name()),
    };
    Ok(out)
}
