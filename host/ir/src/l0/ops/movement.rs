//! Data movement: `reshape`, `transpose`, `concat`, `slice`, `pad`, `expand` and `gather`: their
//! specs, how they are built from attributes and printed back, and their type rules.
//!
//! What it keeps true (besides the parent module's rules):
//! - the dtype passes through (any dtype; `gather`'s indices are i32);
//! - `reshape` keeps the element count (one dim at most is -1, inferred), `transpose` takes a
//!   permutation of the axes, `concat`'s inputs agree on every dim but the axis, `slice` steps
//!   are at least 1 and its bounds clamp into the axis (numpy's rule), and `expand` stretches
//!   dims of 1 only (numpy broadcasting);
//! - reflect padding is smaller than its axis, edge padding needs a non-empty axis, and a
//!   constant pad value of an integer tensor is an integer in its dtype's range.

use super::{
    a, broadcast, int_in, ints, shape_str, spec, AttrDefault as D, AttrKind as K, AttrValue, OpSpec,
    Resolved, Rule, X,
};
use crate::diag::Diagnostic;
use crate::l0::ast::{Op, PadMode};
use crate::types::{fmt_float, DType, TensorType};

/// `reshape`, `transpose`, `concat`, `slice` and `pad`.
pub(super) const LAYOUT: &[OpSpec] = &[
    spec("reshape", X, &[a("shape", K::Ints, D::Required)]),
    spec("transpose", X, &[a("perm", K::Ints, D::Required)]),
    spec("concat", &["xs..."], &[a("axis", K::Int, D::Required)]),
    spec(
        "slice",
        X,
        &[
            a("axes", K::Ints, D::Required),
            a("starts", K::Ints, D::Required),
            a("ends", K::Ints, D::Required),
            a("steps", K::Ints, D::Derived("1 for every axis")),
        ],
    ),
    spec(
        "pad",
        X,
        &[
            a("pads", K::Ints, D::Required),
            a("mode", K::Choice(&["constant", "reflect", "edge"]), D::Ident("constant")),
            a("value", K::Float, D::Float(0.0)),
        ],
    ),
];

/// `expand` and `gather`.
pub(super) const EXPAND_GATHER: &[OpSpec] = &[
    spec("expand", X, &[a("shape", K::Ints, D::Required)]),
    spec("gather", &["x", "indices"], &[a("axis", K::Int, D::Int(0))]),
];

/// Builds the movement operator `spec` names from its resolved attributes, checking value ranges;
/// `None`: `spec` is of another family.
pub(super) fn build(spec: &'static OpSpec, r: &Resolved) -> Result<Option<Op>, Diagnostic> {
    let op = match spec.name {
        "reshape" => {
            let (shape, span) = r.ints("shape").unwrap_or_default();
            for &d in &shape {
                if d != -1 {
                    r.size("shape", d, 1, span)
                        .map_err(|e| e.with_note("use -1 for one inferred dimension"))?;
                }
            }
            if shape.iter().filter(|&&d| d == -1).count() > 1 {
                return Err(r.err("shape", span, "may contain at most one -1"));
            }
            Op::Reshape { shape }
        }
        "transpose" => {
            let (perm, span) = r.ints("perm").unwrap_or_default();
            let mut out = Vec::with_capacity(perm.len());
            for (i, &p) in perm.iter().enumerate() {
                let p = r.size("perm", p, 0, span)?;
                if out.contains(&p) {
                    return Err(r.err(
                        "perm",
                        span,
                        format!("must be a permutation, but {p} appears twice (again at position {i})"),
                    ));
                }
                out.push(p);
            }
            Op::Transpose { perm: out }
        }
        "concat" => Op::Concat { axis: r.int("axis") },
        "slice" => {
            let (axes, span) = r.ints("axes").unwrap_or_default();
            let (starts, starts_span) = r.ints("starts").unwrap_or_default();
            let (ends, ends_span) = r.ints("ends").unwrap_or_default();
            let steps = match r.ints("steps") {
                Some((steps, steps_span)) => {
                    if steps.len() != axes.len() {
                        return Err(r.err(
                            "steps",
                            steps_span,
                            format!("has {} entries but `axes` has {}", steps.len(), axes.len()),
                        ));
                    }
                    if let Some(s) = steps.iter().find(|&&s| s < 1) {
                        return Err(r.err("steps", steps_span, format!("entries must be >= 1, found {s}")));
                    }
                    steps
                }
                None => vec![1; axes.len()],
            };
            if axes.is_empty() {
                return Err(r.err("axes", span, "must list at least one axis"));
            }
            for (what, v, s) in [("starts", &starts, starts_span), ("ends", &ends, ends_span)] {
                if v.len() != axes.len() {
                    return Err(r.err(
                        what,
                        s,
                        format!("has {} entries but `axes` has {}", v.len(), axes.len()),
                    ));
                }
            }
            Op::Slice { axes, starts, ends, steps }
        }
        "pad" => {
            let (pads, span) = r.ints("pads").unwrap_or_default();
            let pads = pads.iter().map(|&p| r.size("pads", p, 0, span)).collect::<Result<Vec<_>, _>>()?;
            let mode = match r.ident("mode").as_str() {
                "reflect" => PadMode::Reflect,
                "edge" => PadMode::Edge,
                _ => PadMode::Constant(r.float("value")?.0),
            };
            if !matches!(mode, PadMode::Constant(_)) && r.is_given("value") {
                let span = r.get("value").map_or(r.span, |v| v.1);
                return Err(r
                    .err("value", span, "applies only to `mode=constant`")
                    .with_hint("remove `value=...` or use `mode=constant`"));
            }
            Op::Pad { pads, mode }
        }
        "expand" => {
            let (shape, span) = r.ints("shape").unwrap_or_default();
            let shape = shape.iter().map(|&d| r.size("shape", d, 0, span)).collect::<Result<Vec<_>, _>>()?;
            Op::Expand { shape }
        }
        "gather" => Op::Gather { axis: r.int("axis") },
        _ => return Ok(None),
    };
    Ok(Some(op))
}

/// The attributes of a movement operator, for [`Op::attrs_for_print`].
pub(super) fn attrs(op: &Op) -> Vec<(&'static str, AttrValue)> {
    use AttrValue as V;
    match op {
        Op::Reshape { shape } => vec![("shape", V::Ints(shape.clone()))],
        Op::Transpose { perm } => vec![("perm", ints(perm))],
        Op::Concat { axis } => vec![("axis", V::Int(*axis))],
        Op::Slice { axes, starts, ends, steps } => vec![
            ("axes", V::Ints(axes.clone())),
            ("starts", V::Ints(starts.clone())),
            ("ends", V::Ints(ends.clone())),
            ("steps", V::Ints(steps.clone())),
        ],
        Op::Pad { pads, mode } => {
            let mut v = vec![("pads", ints(pads))];
            match mode {
                PadMode::Constant(value) => {
                    v.push(("mode", V::Ident("constant".into())));
                    v.push(("value", V::Float(*value)));
                }
                PadMode::Reflect => v.push(("mode", V::Ident("reflect".into()))),
                PadMode::Edge => v.push(("mode", V::Ident("edge".into()))),
            }
            v
        }
        Op::Expand { shape } => vec![("shape", ints(shape))],
        Op::Gather { axis } => vec![("axis", V::Int(*axis))],
        other => unreachable!("`{}` is not a movement operator", other.name()),
    }
}

/// The result type of a movement operator (see [`super::infer`]).
pub(super) fn infer(op: &Op, rule: &Rule) -> Result<TensorType, Diagnostic> {
    let inputs = rule.inputs;
    let out = match op {
        Op::Reshape { shape } => {
            let x = inputs[0];
            let known: Option<usize> =
                shape.iter().filter(|&&d| d != -1).try_fold(1usize, |acc, &d| acc.checked_mul(d as usize));
            let n = x.numel();
            let mut out = Vec::with_capacity(shape.len());
            let has_hole = shape.contains(&-1);
            match known {
                Some(k) if has_hole && k > 0 && n.is_multiple_of(k) => {
                    out.extend(shape.iter().map(|&d| if d == -1 { n / k } else { d as usize }))
                }
                Some(k) if !has_hole && k == n => out.extend(shape.iter().map(|&d| d as usize)),
                _ => {
                    return Err(rule.err(format!(
                        "cannot reshape {} ({n} elements) to {}",
                        shape_str(&x.shape),
                        AttrValue::Ints(shape.clone())
                    )))
                }
            }
            TensorType::new(x.dtype, out)
        }
        Op::Transpose { perm } => {
            let x = inputs[0];
            if perm.len() != x.rank() {
                return Err(rule.err(format!(
                    "`perm` has {} entries but x has rank {}",
                    perm.len(),
                    x.rank()
                )));
            }
            if let Some(p) = perm.iter().find(|&&p| p >= x.rank()) {
                return Err(rule.err(format!("`perm` entry {p} is out of range for rank {}", x.rank())));
            }
            TensorType::new(x.dtype, perm.iter().map(|&p| x.shape[p]).collect::<Vec<_>>())
        }
        Op::Concat { axis: ax } => {
            let first = inputs[0];
            let a = rule.axis(*ax, first.rank(), "axis")?;
            let mut total = 0usize;
            for (i, t) in inputs.iter().enumerate() {
                if t.dtype != first.dtype {
                    return Err(
                        rule.err(format!("input {i} has dtype {} but input 0 has {}", t.dtype, first.dtype))
                    );
                }
                let same_others = t.rank() == first.rank()
                    && t.shape.iter().zip(&first.shape).enumerate().all(|(j, (p, q))| j == a || p == q);
                if !same_others {
                    return Err(rule.err(format!(
                        "input {i} has shape {} but input 0 has {}; all dims except axis {a} must be equal",
                        shape_str(&t.shape),
                        shape_str(&first.shape)
                    )));
                }
                total = total.saturating_add(t.shape[a]);
            }
            let mut shape = first.shape.clone();
            shape[a] = total;
            TensorType::new(first.dtype, shape)
        }
        Op::Slice { axes, starts, ends, steps } => {
            let x = inputs[0];
            let mut shape = x.shape.clone();
            let mut seen = vec![false; x.rank()];
            for (((&ax, &start), &end), &step) in axes.iter().zip(starts).zip(ends).zip(steps) {
                let a = rule.axis(ax, x.rank(), "axis")?;
                if seen[a] {
                    return Err(rule.err(format!("axis {ax} is listed twice in `axes` (it is axis {a})")));
                }
                seen[a] = true;
                let dim = x.shape[a] as i64;
                let clamp = |v: i64| if v < 0 { v.saturating_add(dim) } else { v }.clamp(0, dim);
                let (s, e) = (clamp(start), clamp(end));
                let len = (e - s).max(0);
                let step = step.max(1);
                shape[a] = (len / step + i64::from(len % step != 0)) as usize;
            }
            TensorType::new(x.dtype, shape)
        }
        Op::Pad { pads, mode } => {
            let x = inputs[0];
            let r = x.rank();
            if pads.len() != 2 * r {
                return Err(rule.err(format!(
                    "`pads` has {} entries, expected {} (all begins, then all ends, for rank {r})",
                    pads.len(),
                    2 * r
                )));
            }
            if let (PadMode::Constant(v), Some(range)) = (mode, x.dtype.int_range()) {
                if !int_in(*v, range) {
                    return Err(rule.err(format!(
                        "`value` = {} is not an {1}, but the input is {1}",
                        fmt_float(*v),
                        x.dtype
                    )));
                }
            }
            let mut shape = Vec::with_capacity(r);
            for (i, &d) in x.shape.iter().enumerate() {
                let (b, e) = (pads[i], pads[r + i]);
                match mode {
                    PadMode::Reflect if b >= d || e >= d => {
                        return Err(rule.err(format!(
                        "reflect padding of axis {i} ({b} before, {e} after) must be less than its size {d}"
                    )))
                    }
                    PadMode::Edge if d == 0 && b + e > 0 => {
                        return Err(rule.err(format!("edge padding of axis {i} needs a non-empty axis")))
                    }
                    _ => {}
                }
                shape.push(d + b + e);
            }
            TensorType::new(x.dtype, shape)
        }
        Op::Expand { shape } => {
            let x = inputs[0];
            let fits = shape.len() >= x.rank() && broadcast(&x.shape, shape).is_ok_and(|b| b == *shape);
            if !fits {
                return Err(rule
                    .err(format!(
                        "x of shape {} cannot be expanded to {}",
                        shape_str(&x.shape),
                        shape_str(shape)
                    ))
                    .with_expected(
                        "a shape of rank >= rank(x) whose trailing dims equal x's, or where x's are 1",
                    ));
            }
            TensorType::new(x.dtype, shape.clone())
        }
        Op::Gather { axis: ax } => {
            rule.want(1, &[DType::I32])?;
            let (x, idx) = (inputs[0], inputs[1]);
            let a = rule.axis(*ax, x.rank(), "axis")?;
            let shape = [&x.shape[..a], &idx.shape[..], &x.shape[a + 1..]].concat();
            TensorType::new(x.dtype, shape)
        }
        other => unreachable!("`{}` is not a movement operator", other.name()),
    };
    Ok(out)
}
