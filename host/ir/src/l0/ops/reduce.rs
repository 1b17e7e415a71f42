//! Reductions and the other operators along axes: `sum`, `mean`, `max` and `min` (their reduction
//! forms), `argmax`, `softmax`, `log_softmax` and `cumsum`: their specs, how they are built from
//! attributes and printed back, and their type rules.
//!
//! What it keeps true (besides the parent module's rules):
//! - every axis is checked against the input's rank (a negative one counts from the end), and a
//!   reduction lists at least one axis, none twice;
//! - `max`, `min` and `argmax` refuse an axis of size 0 (there is no extremum of nothing);
//! - `mean`, `softmax` and `log_softmax` are f32 only, the others f32 or i32; `argmax` gives i32.

use super::{
    a, spec, AttrDefault as D, AttrKind as K, AttrSpec, AttrValue, OpSpec, Resolved, Rule, F, FI, X,
};
use crate::diag::Diagnostic;
use crate::l0::ast::{Op, ReduceKind};
use crate::types::{DType, TensorType};

/// The reductions, `argmax`, `softmax`, `log_softmax` and `cumsum`.
pub(super) const SPECS: &[OpSpec] = &[
    reduction("sum"),
    reduction("mean"),
    reduction("max"),
    reduction("min"),
    spec("argmax", X, &[a("axis", K::Int, D::Required), a("keepdims", K::Bool, D::Bool(false))]),
    spec("softmax", X, &[a("axis", K::Int, D::Int(-1))]),
    spec("log_softmax", X, &[a("axis", K::Int, D::Int(-1))]),
    spec(
        "cumsum",
        X,
        &[
            a("axis", K::Int, D::Required),
            a("exclusive", K::Bool, D::Bool(false)),
            a("reverse", K::Bool, D::Bool(false)),
        ],
    ),
];

/// The reduction form of `name`, over `axes`.
const fn reduction(name: &'static str) -> OpSpec {
    OpSpec { name, inputs: X, attrs: REDUCE_ATTRS, is_reduction: true }
}

const REDUCE_ATTRS: &[AttrSpec] = &[a("axes", K::Ints, D::Required), a("keepdims", K::Bool, D::Bool(false))];

/// Builds the reduction or axis operator `spec` names from its resolved attributes, checking
/// value ranges; `None`: `spec` is of another family.
pub(super) fn build(spec: &'static OpSpec, r: &Resolved) -> Result<Option<Op>, Diagnostic> {
    let op = match spec.name {
        "sum" | "mean" | "max" | "min" if spec.is_reduction => {
            let kind = match spec.name {
                "sum" => ReduceKind::Sum,
                "mean" => ReduceKind::Mean,
                "max" => ReduceKind::Max,
                _ => ReduceKind::Min,
            };
            let (axes, span) = r.ints("axes").unwrap_or_default();
            if axes.is_empty() {
                return Err(r.err("axes", span, "must list at least one axis"));
            }
            Op::Reduce { kind, axes, keepdims: r.bool("keepdims") }
        }
        "argmax" => Op::ArgMax { axis: r.int("axis"), keepdims: r.bool("keepdims") },
        "softmax" => Op::Softmax { axis: r.int("axis"), log: false },
        "log_softmax" => Op::Softmax { axis: r.int("axis"), log: true },
        "cumsum" => {
            Op::CumSum { axis: r.int("axis"), exclusive: r.bool("exclusive"), reverse: r.bool("reverse") }
        }
        _ => return Ok(None),
    };
    Ok(Some(op))
}

/// The attributes of a reduction or axis operator, for [`Op::attrs_for_print`].
pub(super) fn attrs(op: &Op) -> Vec<(&'static str, AttrValue)> {
    use AttrValue as V;
    match op {
        Op::Reduce { axes, keepdims, .. } => {
            vec![("axes", V::Ints(axes.clone())), ("keepdims", V::Bool(*keepdims))]
        }
        Op::ArgMax { axis, keepdims } => vec![("axis", V::Int(*axis)), ("keepdims", V::Bool(*keepdims))],
        Op::Softmax { axis, .. } => vec![("axis", V::Int(*axis))],
        Op::CumSum { axis, exclusive, reverse } => {
            vec![("axis", V::Int(*axis)), ("exclusive", V::Bool(*exclusive)), ("reverse", V::Bool(*reverse))]
        }
        other => unreachable!("`{}` is not a reduction or axis operator", other.name()),
    }
}

/// The result type of a reduction or axis operator (see [`super::infer`]).
pub(super) fn infer(op: &Op, rule: &Rule) -> Result<TensorType, Diagnostic> {
    let inputs = rule.inputs;
    let out = match op {
        Op::Reduce { kind, axes, keepdims } => {
            rule.want(0, if *kind == ReduceKind::Mean { F } else { FI })?;
            let x = inputs[0];
            let mut seen = vec![false; x.rank()];
            for &ax in axes {
                let a = rule.axis(ax, x.rank(), "axis")?;
                if seen[a] {
                    return Err(rule.err(format!("axis {ax} is listed twice in `axes` (it is axis {a})")));
                }
                if x.shape[a] == 0 && matches!(kind, ReduceKind::Max | ReduceKind::Min) {
                    return Err(
                        rule.err(format!("axis {ax} has size 0, so there is no {}imum", rule.spec.name))
                    );
                }
                seen[a] = true;
            }
            let shape = x
                .shape
                .iter()
                .zip(&seen)
                .filter_map(|(&d, &s)| match (s, keepdims) {
                    (false, _) => Some(d),
                    (true, true) => Some(1),
                    (true, false) => None,
                })
                .collect::<Vec<_>>();
            TensorType::new(x.dtype, shape)
        }
        Op::ArgMax { axis: ax, keepdims } => {
            rule.want(0, FI)?;
            let x = inputs[0];
            let a = rule.axis(*ax, x.rank(), "axis")?;
            if x.shape[a] == 0 {
                return Err(rule.err(format!("axis {ax} has size 0, so there is no maximum")));
            }
            let mut shape = x.shape.clone();
            if *keepdims {
                shape[a] = 1;
            } else {
                shape.remove(a);
            }
            TensorType::new(DType::I32, shape)
        }
        Op::Softmax { axis: ax, .. } => {
            rule.want(0, F)?;
            rule.axis(*ax, inputs[0].rank(), "axis")?;
            inputs[0].clone()
        }
        Op::CumSum { axis: ax, .. } => {
            rule.want(0, FI)?;
            rule.axis(*ax, inputs[0].rank(), "axis")?;
            inputs[0].clone()
        }
        other => unreachable!("`{}` is not a reduction or axis operator", other.name()),
    };
    Ok(out)
}
