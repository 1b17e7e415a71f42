//! Elementwise operators: the unary activations and functions, binary arithmetic and the
//! comparisons (numpy broadcasting), `where`, `cast`, `full`, `iota`, and the i8 conversions
//! `quantize_linear` and `dequantize_linear`: their specs, how they are built from attributes and
//! printed back, and their type rules.
//!
//! What it keeps true (besides the parent module's rules):
//! - arithmetic is on f32, or also on i32 where it is exact on integers (`relu`, `abs`, `neg`,
//!   `clip` with integral bounds, the binary operators but `pow`, the comparisons); i8 and f16 are
//!   storage types, reached through `cast`, `where`, `full` and the quantize pair;
//! - nothing converts implicitly: the operands of a binary operator or a comparison, and the
//!   branches of `where`, have one dtype; comparisons give i32 1 or 0, and `where` takes an i32
//!   condition;
//! - the `value` of a `full` of an integer dtype is an integer in its range; `iota` is f32 or i32;
//! - a quantization scale is a positive normal f32 and a zero point an i8.

use super::{
    a, broadcast, int_in, ints, shape_str, spec, AttrDefault as D, AttrKind as K, AttrSpec, AttrValue,
    OpSpec, Resolved, Rule, AB, F, FI, X,
};
use crate::diag::Diagnostic;
use crate::l0::ast::{BinaryOp, CompareOp, Op, UnaryOp};
use crate::types::{fmt_float, DType, TensorType};

/// The unary and binary operators, the comparisons and `where`.
pub(super) const ARITHMETIC: &[OpSpec] = &[
    spec("relu", X, &[]),
    spec("relu6", X, &[]),
    spec("leaky_relu", X, &[a("alpha", K::Float, D::Float(0.01))]),
    spec("gelu", X, &[a("approximate", K::Choice(&["none", "tanh"]), D::Ident("none"))]),
    spec("silu", X, &[]),
    spec("sigmoid", X, &[]),
    spec("tanh", X, &[]),
    spec("hardswish", X, &[]),
    spec("hardsigmoid", X, &[]),
    spec("softplus", X, &[a("beta", K::Float, D::Float(1.0)), a("threshold", K::Float, D::Float(20.0))]),
    spec("elu", X, &[a("alpha", K::Float, D::Float(1.0))]),
    spec("exp", X, &[]),
    spec("log", X, &[]),
    spec("sqrt", X, &[]),
    spec("rsqrt", X, &[]),
    spec("sin", X, &[]),
    spec("cos", X, &[]),
    spec("abs", X, &[]),
    spec("neg", X, &[]),
    spec(
        "clip",
        X,
        &[a("min", K::Float, D::Float(f64::NEG_INFINITY)), a("max", K::Float, D::Float(f64::INFINITY))],
    ),
    spec("add", AB, &[]),
    spec("sub", AB, &[]),
    spec("mul", AB, &[]),
    spec("div", AB, &[]),
    spec("max", AB, &[]),
    spec("min", AB, &[]),
    spec("pow", AB, &[]),
    spec("less", AB, &[]),
    spec("less_equal", AB, &[]),
    spec("greater", AB, &[]),
    spec("greater_equal", AB, &[]),
    spec("equal", AB, &[]),
    spec("where", &["cond", "a", "b"], &[]),
];

/// `cast`, `full` and `iota`.
pub(super) const CAST_FULL_IOTA: &[OpSpec] = &[
    spec("cast", X, &[a("dtype", K::DType, D::Required)]),
    spec(
        "full",
        &[],
        &[
            a("shape", K::Ints, D::Required),
            a("value", K::Float, D::Required),
            a("dtype", K::DType, D::Ident("f32")),
        ],
    ),
    spec(
        "iota",
        &[],
        &[
            a("shape", K::Ints, D::Required),
            a("axis", K::Int, D::Required),
            a("dtype", K::DType, D::Ident("i32")),
        ],
    ),
];

/// `quantize_linear` and `dequantize_linear`.
pub(super) const QUANTIZATION: &[OpSpec] =
    &[spec("quantize_linear", X, QUANT_ATTRS), spec("dequantize_linear", &["q"], QUANT_ATTRS)];

const QUANT_ATTRS: &[AttrSpec] = &[a("scale", K::Float, D::Required), a("zero_point", K::Int, D::Int(0))];

/// Builds the elementwise operator `spec` names from its resolved attributes, checking value
/// ranges; `None`: `spec` is of another family.
pub(super) fn build(spec: &'static OpSpec, r: &Resolved) -> Result<Option<Op>, Diagnostic> {
    let op = match spec.name {
        "relu" => Op::Unary(UnaryOp::Relu),
        "relu6" => Op::Unary(UnaryOp::Relu6),
        "leaky_relu" => Op::Unary(UnaryOp::LeakyRelu { alpha: r.finite("alpha")?.0 }),
        "gelu" => Op::Unary(UnaryOp::Gelu { tanh: r.ident("approximate") == "tanh" }),
        "silu" => Op::Unary(UnaryOp::Silu),
        "sigmoid" => Op::Unary(UnaryOp::Sigmoid),
        "tanh" => Op::Unary(UnaryOp::Tanh),
        "hardswish" => Op::Unary(UnaryOp::HardSwish),
        "hardsigmoid" => Op::Unary(UnaryOp::HardSigmoid),
        "softplus" => {
            let (beta, span) = r.finite("beta")?;
            if beta <= 0.0 {
                return Err(r.err("beta", span, format!("must be > 0, found {}", fmt_float(beta))));
            }
            Op::Unary(UnaryOp::Softplus { beta, threshold: r.finite("threshold")?.0 })
        }
        "elu" => Op::Unary(UnaryOp::Elu { alpha: r.finite("alpha")?.0 }),
        "exp" => Op::Unary(UnaryOp::Exp),
        "log" => Op::Unary(UnaryOp::Log),
        "sqrt" => Op::Unary(UnaryOp::Sqrt),
        "rsqrt" => Op::Unary(UnaryOp::Rsqrt),
        "sin" => Op::Unary(UnaryOp::Sin),
        "cos" => Op::Unary(UnaryOp::Cos),
        "abs" => Op::Unary(UnaryOp::Abs),
        "neg" => Op::Unary(UnaryOp::Neg),
        "clip" => {
            let (min, _) = r.float("min")?;
            let (max, span) = r.float("max")?;
            if min > max {
                return Err(r.err(
                    "max",
                    span,
                    format!("must be >= `min`, found min={} > max={}", fmt_float(min), fmt_float(max)),
                ));
            }
            Op::Unary(UnaryOp::Clip { min, max })
        }
        "add" => Op::Binary(BinaryOp::Add),
        "sub" => Op::Binary(BinaryOp::Sub),
        "mul" => Op::Binary(BinaryOp::Mul),
        "div" => Op::Binary(BinaryOp::Div),
        "max" if !spec.is_reduction => Op::Binary(BinaryOp::Max),
        "min" if !spec.is_reduction => Op::Binary(BinaryOp::Min),
        "pow" => Op::Binary(BinaryOp::Pow),
        "less" => Op::Compare(CompareOp::Less),
        "less_equal" => Op::Compare(CompareOp::LessEqual),
        "greater" => Op::Compare(CompareOp::Greater),
        "greater_equal" => Op::Compare(CompareOp::GreaterEqual),
        "equal" => Op::Compare(CompareOp::Equal),
        "where" => Op::Where,
        "cast" => Op::Cast { dtype: r.dtype("dtype") },
        "full" => {
            let (shape, span) = r.ints("shape").unwrap_or_default();
            let shape = shape.iter().map(|&d| r.size("shape", d, 0, span)).collect::<Result<Vec<_>, _>>()?;
            Op::Full { ty: TensorType::new(r.dtype("dtype"), shape), value: r.float("value")?.0 }
        }
        "iota" => {
            let (shape, span) = r.ints("shape").unwrap_or_default();
            let shape = shape.iter().map(|&d| r.size("shape", d, 0, span)).collect::<Result<Vec<_>, _>>()?;
            Op::Iota { ty: TensorType::new(r.dtype("dtype"), shape), axis: r.int("axis") }
        }
        "quantize_linear" | "dequantize_linear" => {
            let (scale, span) = r.finite("scale")?;
            // The scale is used as the nearest f32: it must be a positive normal f32 there.
            let s32 = scale as f32;
            if !(s32.is_normal() && s32 > 0.0) {
                return Err(r
                    .err("scale", span, format!("must be a positive normal f32, found {}", fmt_float(scale)))
                    .with_expected(format!(
                        "{} <= scale <= {} (the positive normal f32 range)",
                        fmt_float(f64::from(f32::MIN_POSITIVE)),
                        fmt_float(f64::from(f32::MAX))
                    )));
            }
            let zero_point = r.int("zero_point");
            if !(-128..=127).contains(&zero_point) {
                let span = r.get("zero_point").map_or(r.span, |g| g.1);
                return Err(r
                    .err("zero_point", span, format!("must be an i8, found {zero_point}"))
                    .with_expected("-128 <= zero_point <= 127"));
            }
            if spec.name == "quantize_linear" {
                Op::QuantizeLinear { scale, zero_point }
            } else {
                Op::DequantizeLinear { scale, zero_point }
            }
        }
        _ => return Ok(None),
    };
    Ok(Some(op))
}

/// The attributes of an elementwise operator, for [`Op::attrs_for_print`].
pub(super) fn attrs(op: &Op) -> Vec<(&'static str, AttrValue)> {
    use AttrValue as V;
    match op {
        Op::Unary(u) => match *u {
            UnaryOp::LeakyRelu { alpha } | UnaryOp::Elu { alpha } => vec![("alpha", V::Float(alpha))],
            UnaryOp::Gelu { tanh } => {
                vec![("approximate", V::Ident(if tanh { "tanh" } else { "none" }.into()))]
            }
            UnaryOp::Softplus { beta, threshold } => {
                vec![("beta", V::Float(beta)), ("threshold", V::Float(threshold))]
            }
            UnaryOp::Clip { min, max } => vec![("min", V::Float(min)), ("max", V::Float(max))],
            _ => vec![],
        },
        Op::Binary(_) | Op::Compare(_) | Op::Where => vec![],
        Op::Cast { dtype } => vec![("dtype", V::Ident(dtype.name().into()))],
        Op::Full { ty, value } => vec![
            ("shape", ints(&ty.shape)),
            ("value", V::Float(*value)),
            ("dtype", V::Ident(ty.dtype.name().into())),
        ],
        Op::Iota { ty, axis } => vec![
            ("shape", ints(&ty.shape)),
            ("axis", V::Int(*axis)),
            ("dtype", V::Ident(ty.dtype.name().into())),
        ],
        Op::QuantizeLinear { scale, zero_point } | Op::DequantizeLinear { scale, zero_point } => {
            vec![("scale", V::Float(*scale)), ("zero_point", V::Int(*zero_point))]
        }
        other => unreachable!("`{}` is not an elementwise operator", other.name()),
    }
}

/// The result type of an elementwise operator (see [`super::infer`]).
pub(super) fn infer(op: &Op, rule: &Rule) -> Result<TensorType, Diagnostic> {
    let inputs = rule.inputs;
    let out = match op {
        Op::Unary(u) => {
            let int_ok = matches!(u, UnaryOp::Relu | UnaryOp::Abs | UnaryOp::Neg | UnaryOp::Clip { .. });
            rule.want(0, if int_ok { FI } else { F })?;
            if let (UnaryOp::Clip { min, max }, DType::I32) = (u, inputs[0].dtype) {
                for (what, v) in [("min", min), ("max", max)] {
                    if v.is_finite() && v.fract() != 0.0 {
                        return Err(rule.err(format!(
                            "`{what}` = {} is not an integer, but the input is i32",
                            fmt_float(*v)
                        )));
                    }
                }
            }
            inputs[0].clone()
        }
        Op::Binary(b) => {
            rule.want(0, if *b == BinaryOp::Pow { F } else { FI })?;
            if inputs[1].dtype != inputs[0].dtype {
                return Err(rule.err(format!(
                    "inputs have different dtypes ({} and {}); insert a `cast`",
                    inputs[0].dtype, inputs[1].dtype
                )));
            }
            let shape = broadcast(&inputs[0].shape, &inputs[1].shape).map_err(|m| {
                rule.err(format!(
                    "shapes {} and {} {m}",
                    shape_str(&inputs[0].shape),
                    shape_str(&inputs[1].shape)
                ))
            })?;
            TensorType::new(inputs[0].dtype, shape)
        }
        Op::Cast { dtype } => TensorType::new(*dtype, inputs[0].shape.clone()),
        Op::Full { ty, value } => {
            if let Some(range) = ty.dtype.int_range() {
                if !int_in(*value, range) {
                    return Err(rule.err(format!(
                        "`value` = {} is not an {1}, but `dtype` is {1}",
                        fmt_float(*value),
                        ty.dtype
                    )));
                }
            }
            ty.clone()
        }
        Op::Compare(_) => {
            rule.want(0, FI)?;
            if inputs[1].dtype != inputs[0].dtype {
                return Err(rule.err(format!(
                    "inputs have different dtypes ({} and {}); insert a `cast`",
                    inputs[0].dtype, inputs[1].dtype
                )));
            }
            let shape = broadcast(&inputs[0].shape, &inputs[1].shape).map_err(|m| {
                rule.err(format!(
                    "shapes {} and {} {m}",
                    shape_str(&inputs[0].shape),
                    shape_str(&inputs[1].shape)
                ))
            })?;
            TensorType::new(DType::I32, shape)
        }
        Op::Where => {
            rule.want(0, &[DType::I32])
                .map_err(|d| d.with_note("comparisons give i32 1 or 0; `cast` an f32 condition first"))?;
            let (c, a, b) = (inputs[0], inputs[1], inputs[2]);
            if a.dtype != b.dtype {
                return Err(rule.err(format!(
                    "`a` and `b` have different dtypes ({} and {}); insert a `cast`",
                    a.dtype, b.dtype
                )));
            }
            let shape = broadcast(&c.shape, &a.shape).and_then(|s| broadcast(&s, &b.shape)).map_err(|m| {
                rule.err(format!(
                    "shapes {}, {} and {} {m}",
                    shape_str(&c.shape),
                    shape_str(&a.shape),
                    shape_str(&b.shape)
                ))
            })?;
            TensorType::new(a.dtype, shape)
        }
        Op::Iota { ty, axis: ax } => {
            if matches!(ty.dtype, DType::I8 | DType::F16) {
                return Err(rule
                    .err(format!("`dtype` must be f32 or i32 (indices do not fit in {})", ty.dtype))
                    .with_hint(format!("make an i32 iota and `cast` it to {}", ty.dtype)));
            }
            rule.axis(*ax, ty.rank(), "axis")?;
            ty.clone()
        }
        Op::QuantizeLinear { .. } => {
            rule.want(0, F)?;
            TensorType::new(DType::I8, inputs[0].shape.clone())
        }
        Op::DequantizeLinear { .. } => {
            rule.want(0, &[DType::I8])?;
            TensorType::new(DType::F32, inputs[0].shape.clone())
        }
        other => unreachable!("`{}` is not an elementwise operator", other.name()),
    };
    Ok(out)
}
