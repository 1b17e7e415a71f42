//! The L0 operator table: every operator's text name, inputs, attributes (names, kinds, defaults,
//! in the fixed order the canonical form prints them), valid attribute ranges, and its shape and
//! type rule.
//!
//! Invariants kept here:
//! - [`OP_NAMES`] lists every operator name once; [`SPECS`] has one entry per operator form
//!   (`max`/`min` have a binary and a reduction form, told apart by their inputs and attributes).
//! - [`Op::from_text`] accepts exactly the attribute values [`Op::attrs_for_print`] can print,
//!   so `from_text(name, attrs_for_print(op)) == op` for every valid op.
//! - [`infer`] never panics and never overflows: shapes are computed with checked arithmetic and
//!   no tensor may have more than [`MAX_NUMEL`] elements.

use crate::diag::{did_you_mean, Diagnostic, Span};
use crate::l0::ast::{
    BinaryOp, CompareOp, Conv2dAttrs, ConvTranspose2dAttrs, Op, PadMode, Pool2dAttrs, ReduceKind, ResizeMode,
    UnaryOp,
};
use crate::types::{fmt_float, DType, TensorType};
use std::fmt;

/// The largest element count of any tensor (so element indices fit in an `i32`).
pub const MAX_NUMEL: usize = i32::MAX as usize;

/// Every operator name, for "did you mean" hints.
pub const OP_NAMES: &[&str] = &[
    "relu",
    "relu6",
    "leaky_relu",
    "gelu",
    "silu",
    "sigmoid",
    "tanh",
    "hardswish",
    "hardsigmoid",
    "softplus",
    "elu",
    "exp",
    "log",
    "sqrt",
    "rsqrt",
    "sin",
    "cos",
    "abs",
    "neg",
    "clip",
    "add",
    "sub",
    "mul",
    "div",
    "max",
    "min",
    "pow",
    "less",
    "less_equal",
    "greater",
    "greater_equal",
    "equal",
    "where",
    "sum",
    "mean",
    "argmax",
    "softmax",
    "log_softmax",
    "cumsum",
    "layer_norm",
    "rms_norm",
    "batch_norm",
    "group_norm",
    "matmul",
    "linear",
    "conv2d",
    "conv_transpose2d",
    "max_pool2d",
    "avg_pool2d",
    "global_avg_pool2d",
    "resize",
    "reshape",
    "transpose",
    "concat",
    "slice",
    "pad",
    "cast",
    "full",
    "iota",
    "expand",
    "gather",
    "quantize_linear",
    "dequantize_linear",
];

/// An attribute value as written in the text form.
#[derive(Debug, Clone, PartialEq)]
pub enum AttrValue {
    Int(i64),
    /// A float literal, or `inf`, `-inf`, `nan`.
    Float(f64),
    Bool(bool),
    Ints(Vec<i64>),
    /// A bare name such as `tanh`, `reflect` or `f32`.
    Ident(String),
}

impl AttrValue {
    /// How the value reads in a diagnostic ("found integer `3`").
    pub fn describe(&self) -> String {
        match self {
            AttrValue::Int(i) => format!("integer `{i}`"),
            AttrValue::Float(x) => format!("number `{}`", fmt_float(*x)),
            AttrValue::Bool(b) => format!("`{b}`"),
            AttrValue::Ints(_) => format!("list `{self}`"),
            AttrValue::Ident(s) => format!("name `{s}`"),
        }
    }
}

impl fmt::Display for AttrValue {
    /// The canonical text: floats via [`fmt_float`], lists without spaces.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AttrValue::Int(i) => write!(f, "{i}"),
            AttrValue::Float(x) => f.write_str(&fmt_float(*x)),
            AttrValue::Bool(b) => write!(f, "{b}"),
            AttrValue::Ints(v) => {
                f.write_str("[")?;
                for (i, x) in v.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write!(f, "{x}")?;
                }
                f.write_str("]")
            }
            AttrValue::Ident(s) => f.write_str(s),
        }
    }
}

/// One `name=value` attribute of a node, with the spans of both parts.
#[derive(Debug, Clone, PartialEq)]
pub struct Attr {
    pub name: String,
    pub value: AttrValue,
    pub name_span: Span,
    pub value_span: Span,
}

/// What kind of value an attribute takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttrKind {
    Int,
    /// A number; integers are accepted.
    Float,
    Bool,
    Ints,
    /// One of a fixed set of names.
    Choice(&'static [&'static str]),
    DType,
}

impl AttrKind {
    pub fn describe(self) -> String {
        match self {
            AttrKind::Int => "an integer".into(),
            AttrKind::Float => "a number".into(),
            AttrKind::Bool => "`true` or `false`".into(),
            AttrKind::Ints => "a list of integers such as `[1,1]`".into(),
            AttrKind::Choice(c) => {
                format!("one of {}", c.iter().map(|s| format!("`{s}`")).collect::<Vec<_>>().join(", "))
            }
            AttrKind::DType => "a dtype (`f32`, `i32`, `i8` or `f16`)".into(),
        }
    }
}

/// The value an attribute has when it is not written.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum AttrDefault {
    /// The attribute must be given.
    Required,
    Int(i64),
    Float(f64),
    Bool(bool),
    Ints(&'static [i64]),
    Ident(&'static str),
    /// Computed from other attributes or the input (described in words).
    Derived(&'static str),
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AttrSpec {
    pub name: &'static str,
    pub kind: AttrKind,
    pub default: AttrDefault,
}

/// One operator form: its name, input names (`b?` optional, `xs...` one or more) and attributes
/// in canonical order.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OpSpec {
    pub name: &'static str,
    pub inputs: &'static [&'static str],
    pub attrs: &'static [AttrSpec],
    /// The reduction form of `max`/`min` (and `sum`/`mean`), as opposed to the binary form.
    pub is_reduction: bool,
}

impl OpSpec {
    /// The fewest and the most inputs (`None`: no upper bound).
    pub fn arity(&self) -> (usize, Option<usize>) {
        let required = self.inputs.iter().filter(|i| !i.ends_with('?')).count();
        if self.inputs.iter().any(|i| i.ends_with("...")) {
            (required, None)
        } else {
            (required, Some(self.inputs.len()))
        }
    }

    /// `(x, w[, b])`, for messages.
    pub fn signature(&self) -> String {
        let mut s = String::from("(");
        for (i, inp) in self.inputs.iter().enumerate() {
            match inp.strip_suffix('?') {
                Some(opt) => s.push_str(&format!("[, {opt}]")),
                None => {
                    if i > 0 {
                        s.push_str(", ");
                    }
                    s.push_str(inp);
                }
            }
        }
        s.push(')');
        s
    }

    /// The name of input `i`, for messages.
    fn input_name(&self, i: usize) -> &'static str {
        let raw = self.inputs.get(i).or(self.inputs.last()).copied().unwrap_or("x");
        raw.trim_end_matches('?').trim_end_matches("...")
    }
}

const fn a(name: &'static str, kind: AttrKind, default: AttrDefault) -> AttrSpec {
    AttrSpec { name, kind, default }
}

const fn spec(name: &'static str, inputs: &'static [&'static str], attrs: &'static [AttrSpec]) -> OpSpec {
    OpSpec { name, inputs, attrs, is_reduction: false }
}

const fn reduction(name: &'static str) -> OpSpec {
    OpSpec { name, inputs: X, attrs: REDUCE_ATTRS, is_reduction: true }
}

use AttrDefault as D;
use AttrKind as K;

const X: &[&str] = &["x"];
const AB: &[&str] = &["a", "b"];
const REDUCE_ATTRS: &[AttrSpec] = &[a("axes", K::Ints, D::Required), a("keepdims", K::Bool, D::Bool(false))];
const POOL_ATTRS: &[AttrSpec] = &[
    a("kernel", K::Ints, D::Required),
    a("stride", K::Ints, D::Derived("the kernel")),
    a("pad", K::Ints, D::Ints(&[0, 0, 0, 0])),
];

/// Every operator form, in the order of [`OP_NAMES`] (with the reduction forms of `max` and
/// `min` beside `sum` and `mean`).
pub const SPECS: &[OpSpec] = &[
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
    spec("layer_norm", &["x", "weight", "bias"], &[a("eps", K::Float, D::Float(1e-5))]),
    spec("rms_norm", &["x", "weight"], &[a("eps", K::Float, D::Float(1e-6))]),
    spec("batch_norm", &["x", "gamma", "beta", "mean", "var"], &[a("eps", K::Float, D::Float(1e-5))]),
    spec(
        "group_norm",
        &["x", "scale", "bias"],
        &[a("groups", K::Int, D::Required), a("eps", K::Float, D::Float(1e-5))],
    ),
    spec(
        "matmul",
        AB,
        &[a("transpose_a", K::Bool, D::Bool(false)), a("transpose_b", K::Bool, D::Bool(false))],
    ),
    spec("linear", &["x", "w", "b?"], &[]),
    spec(
        "conv2d",
        &["x", "w", "b?"],
        &[
            a("stride", K::Ints, D::Ints(&[1, 1])),
            a("pad", K::Ints, D::Ints(&[0, 0, 0, 0])),
            a("dilation", K::Ints, D::Ints(&[1, 1])),
            a("groups", K::Int, D::Int(1)),
        ],
    ),
    spec(
        "conv_transpose2d",
        &["x", "w", "b?"],
        &[
            a("stride", K::Ints, D::Ints(&[1, 1])),
            a("pad", K::Ints, D::Ints(&[0, 0, 0, 0])),
            a("output_padding", K::Ints, D::Ints(&[0, 0])),
            a("dilation", K::Ints, D::Ints(&[1, 1])),
            a("groups", K::Int, D::Int(1)),
        ],
    ),
    spec("max_pool2d", X, POOL_ATTRS),
    spec(
        "avg_pool2d",
        X,
        &[
            a("kernel", K::Ints, D::Required),
            a("stride", K::Ints, D::Derived("the kernel")),
            a("pad", K::Ints, D::Ints(&[0, 0, 0, 0])),
            a("count_include_pad", K::Bool, D::Bool(true)),
        ],
    ),
    spec("global_avg_pool2d", X, &[]),
    spec(
        "resize",
        X,
        &[
            a("size", K::Ints, D::Required),
            a("mode", K::Choice(&["nearest", "bilinear"]), D::Ident("nearest")),
            a("align_corners", K::Bool, D::Bool(false)),
        ],
    ),
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
    spec("expand", X, &[a("shape", K::Ints, D::Required)]),
    spec("gather", &["x", "indices"], &[a("axis", K::Int, D::Int(0))]),
    spec("quantize_linear", X, QUANT_ATTRS),
    spec("dequantize_linear", &["q"], QUANT_ATTRS),
];

const QUANT_ATTRS: &[AttrSpec] = &[a("scale", K::Float, D::Required), a("zero_point", K::Int, D::Int(0))];

/// The spec of an operator form by name; `reduction` picks the reduction form of `max`/`min`.
pub fn find_spec(name: &str, reduction: bool) -> Option<&'static OpSpec> {
    let mut forms = SPECS.iter().filter(|s| s.name == name);
    let first = forms.next()?;
    Some(forms.find(|s| s.is_reduction == reduction).unwrap_or(first))
}

impl Op {
    /// The operator's spec (name, inputs, attributes).
    pub fn spec(&self) -> &'static OpSpec {
        let (name, reduction) = match self {
            Op::Reduce { kind, .. } => (reduce_name(*kind), true),
            other => (other.name(), false),
        };
        find_spec(name, reduction).expect("every Op variant has a spec entry")
    }

    /// The text name of the operator.
    pub fn name(&self) -> &'static str {
        match self {
            Op::Unary(u) => match u {
                UnaryOp::Relu => "relu",
                UnaryOp::Relu6 => "relu6",
                UnaryOp::LeakyRelu { .. } => "leaky_relu",
                UnaryOp::Gelu { .. } => "gelu",
                UnaryOp::Silu => "silu",
                UnaryOp::Sigmoid => "sigmoid",
                UnaryOp::Tanh => "tanh",
                UnaryOp::HardSwish => "hardswish",
                UnaryOp::HardSigmoid => "hardsigmoid",
                UnaryOp::Softplus { .. } => "softplus",
                UnaryOp::Elu { .. } => "elu",
                UnaryOp::Exp => "exp",
                UnaryOp::Log => "log",
                UnaryOp::Sqrt => "sqrt",
                UnaryOp::Rsqrt => "rsqrt",
                UnaryOp::Abs => "abs",
                UnaryOp::Neg => "neg",
                UnaryOp::Clip { .. } => "clip",
                UnaryOp::Sin => "sin",
                UnaryOp::Cos => "cos",
            },
            Op::Binary(b) => match b {
                BinaryOp::Add => "add",
                BinaryOp::Sub => "sub",
                BinaryOp::Mul => "mul",
                BinaryOp::Div => "div",
                BinaryOp::Max => "max",
                BinaryOp::Min => "min",
                BinaryOp::Pow => "pow",
            },
            Op::Reduce { kind, .. } => reduce_name(*kind),
            Op::ArgMax { .. } => "argmax",
            Op::Softmax { log: false, .. } => "softmax",
            Op::Softmax { log: true, .. } => "log_softmax",
            Op::LayerNorm { .. } => "layer_norm",
            Op::RmsNorm { .. } => "rms_norm",
            Op::BatchNorm { .. } => "batch_norm",
            Op::MatMul { .. } => "matmul",
            Op::Linear => "linear",
            Op::Conv2d(_) => "conv2d",
            Op::MaxPool2d(_) => "max_pool2d",
            Op::AvgPool2d { .. } => "avg_pool2d",
            Op::GlobalAvgPool2d => "global_avg_pool2d",
            Op::Reshape { .. } => "reshape",
            Op::Transpose { .. } => "transpose",
            Op::Concat { .. } => "concat",
            Op::Slice { .. } => "slice",
            Op::Pad { .. } => "pad",
            Op::Cast { .. } => "cast",
            Op::Full { .. } => "full",
            Op::Compare(c) => match c {
                CompareOp::Less => "less",
                CompareOp::LessEqual => "less_equal",
                CompareOp::Greater => "greater",
                CompareOp::GreaterEqual => "greater_equal",
                CompareOp::Equal => "equal",
            },
            Op::Where => "where",
            Op::Iota { .. } => "iota",
            Op::Expand { .. } => "expand",
            Op::Gather { .. } => "gather",
            Op::CumSum { .. } => "cumsum",
            Op::GroupNorm { .. } => "group_norm",
            Op::ConvTranspose2d(_) => "conv_transpose2d",
            Op::Resize { .. } => "resize",
            Op::QuantizeLinear { .. } => "quantize_linear",
            Op::DequantizeLinear { .. } => "dequantize_linear",
        }
    }

    /// Every attribute with its value, in the canonical order, defaults included (`pad` prints
    /// `value` only in constant mode).
    pub fn attrs_for_print(&self) -> Vec<(&'static str, AttrValue)> {
        use AttrValue as V;
        let ints = |v: &[usize]| V::Ints(v.iter().map(|&x| x as i64).collect());
        match self {
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
            Op::Binary(_) | Op::Linear | Op::GlobalAvgPool2d | Op::Compare(_) | Op::Where => vec![],
            Op::Reduce { axes, keepdims, .. } => {
                vec![("axes", V::Ints(axes.clone())), ("keepdims", V::Bool(*keepdims))]
            }
            Op::ArgMax { axis, keepdims } => vec![("axis", V::Int(*axis)), ("keepdims", V::Bool(*keepdims))],
            Op::Softmax { axis, .. } => vec![("axis", V::Int(*axis))],
            Op::LayerNorm { eps } | Op::RmsNorm { eps } | Op::BatchNorm { eps } => {
                vec![("eps", V::Float(*eps))]
            }
            Op::MatMul { transpose_a, transpose_b } => {
                vec![("transpose_a", V::Bool(*transpose_a)), ("transpose_b", V::Bool(*transpose_b))]
            }
            Op::Conv2d(c) => vec![
                ("stride", ints(&c.stride)),
                ("pad", ints(&c.pad)),
                ("dilation", ints(&c.dilation)),
                ("groups", V::Int(c.groups as i64)),
            ],
            Op::MaxPool2d(p) => {
                vec![("kernel", ints(&p.kernel)), ("stride", ints(&p.stride)), ("pad", ints(&p.pad))]
            }
            Op::AvgPool2d { pool: p, count_include_pad } => vec![
                ("kernel", ints(&p.kernel)),
                ("stride", ints(&p.stride)),
                ("pad", ints(&p.pad)),
                ("count_include_pad", V::Bool(*count_include_pad)),
            ],
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
            Op::Expand { shape } => vec![("shape", ints(shape))],
            Op::Gather { axis } => vec![("axis", V::Int(*axis))],
            Op::CumSum { axis, exclusive, reverse } => vec![
                ("axis", V::Int(*axis)),
                ("exclusive", V::Bool(*exclusive)),
                ("reverse", V::Bool(*reverse)),
            ],
            Op::GroupNorm { groups, eps } => {
                vec![("groups", V::Int(*groups as i64)), ("eps", V::Float(*eps))]
            }
            Op::ConvTranspose2d(c) => vec![
                ("stride", ints(&c.stride)),
                ("pad", ints(&c.pad)),
                ("output_padding", ints(&c.output_padding)),
                ("dilation", ints(&c.dilation)),
                ("groups", V::Int(c.groups as i64)),
            ],
            Op::Resize { size, mode, align_corners } => vec![
                ("size", ints(size)),
                (
                    "mode",
                    V::Ident(
                        match mode {
                            ResizeMode::Nearest => "nearest",
                            ResizeMode::Bilinear => "bilinear",
                        }
                        .into(),
                    ),
                ),
                ("align_corners", V::Bool(*align_corners)),
            ],
            Op::QuantizeLinear { scale, zero_point } | Op::DequantizeLinear { scale, zero_point } => {
                vec![("scale", V::Float(*scale)), ("zero_point", V::Int(*zero_point))]
            }
        }
    }

    /// Builds an operator from its text name, its number of inputs and its attributes.
    ///
    /// Diagnoses unknown operators and attributes (with "did you mean"), duplicate attributes,
    /// values of the wrong kind, missing required attributes, out-of-range values, and a wrong
    /// number of inputs. `max`/`min` are the reduction form when given one input or any
    /// attribute, the binary form otherwise.
    pub fn from_text(name: &str, name_span: Span, n_inputs: usize, attrs: &[Attr]) -> Result<Op, Diagnostic> {
        let reduction = matches!(name, "max" | "min") && (n_inputs == 1 || !attrs.is_empty());
        let Some(spec) = find_spec(name, reduction) else {
            let mut d = Diagnostic::error(format!("unknown operator `{name}`"))
                .at(name_span)
                .with_expected("an L0 operator such as `conv2d`, `add` or `relu`");
            if let Some(h) = did_you_mean(name, OP_NAMES.iter().copied()) {
                d = d.with_hint(h);
            }
            return Err(d);
        };
        let r = Resolved::new(spec, name_span, attrs)?;
        let op = build(spec, &r)?;
        check_arity(spec, n_inputs, name_span)?;
        Ok(op)
    }
}

fn reduce_name(kind: ReduceKind) -> &'static str {
    match kind {
        ReduceKind::Sum => "sum",
        ReduceKind::Mean => "mean",
        ReduceKind::Max => "max",
        ReduceKind::Min => "min",
    }
}

/// Diagnoses a wrong number of inputs.
pub fn check_arity(spec: &OpSpec, n: usize, span: Span) -> Result<(), Diagnostic> {
    let (lo, hi) = spec.arity();
    if n >= lo && hi.is_none_or(|h| n <= h) {
        return Ok(());
    }
    let want = match hi {
        Some(0) => "no inputs".to_string(),
        None => format!("at least {lo} input{}", plural(lo)),
        Some(h) if h == lo => format!("{lo} input{}", plural(lo)),
        Some(h) => format!("{lo} or {h} inputs"),
    };
    let sig = if hi == Some(0) { String::new() } else { format!(" {}", spec.signature()) };
    let mut d = Diagnostic::error(format!("`{}` takes {want}{sig}, found {n}", spec.name))
        .at(span)
        .with_expected(want);
    if matches!(spec.name, "max" | "min") {
        d = d.with_note(format!(
            "`{0}(a, b)` is the elementwise maximum; `{0}(x, axes=[..])` is the reduction",
            spec.name
        ));
    }
    Err(d)
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// The attributes of one node matched against its spec: given values, or defaults.
struct Resolved<'a> {
    spec: &'static OpSpec,
    given: Vec<Option<&'a Attr>>,
    span: Span,
}

impl<'a> Resolved<'a> {
    fn new(spec: &'static OpSpec, span: Span, attrs: &'a [Attr]) -> Result<Resolved<'a>, Diagnostic> {
        let mut given: Vec<Option<&Attr>> = vec![None; spec.attrs.len()];
        for at in attrs {
            let Some(i) = spec.attrs.iter().position(|s| s.name == at.name) else {
                let names: Vec<&str> = spec.attrs.iter().map(|s| s.name).collect();
                let mut d = Diagnostic::error(format!("`{}` has no attribute `{}`", spec.name, at.name))
                    .at(at.name_span);
                if names.is_empty() {
                    d = d.with_note(format!("`{}` takes no attributes", spec.name));
                } else {
                    d = d.with_expected(format!(
                        "one of {}",
                        names.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ")
                    ));
                    if let Some(h) = did_you_mean(&at.name, names.iter().copied()) {
                        d = d.with_hint(h);
                    }
                }
                return Err(d);
            };
            if given[i].is_some() {
                return Err(Diagnostic::error(format!("attribute `{}` is given twice", at.name))
                    .at(at.name_span)
                    .with_expected("each attribute at most once"));
            }
            check_kind(spec, &spec.attrs[i], at)?;
            given[i] = Some(at);
        }
        for (s, g) in spec.attrs.iter().zip(&given) {
            if g.is_none() && s.default == AttrDefault::Required {
                return Err(Diagnostic::error(format!(
                    "`{}` requires the attribute `{}` ({})",
                    spec.name,
                    s.name,
                    s.kind.describe()
                ))
                .at(span)
                .with_expected(format!("`{}=...`", s.name)));
            }
        }
        Ok(Resolved { spec, given, span })
    }

    fn index(&self, name: &str) -> usize {
        self.spec.attrs.iter().position(|s| s.name == name).expect("attribute names come from the spec")
    }

    /// The value (given or default) and the span to blame; `None` for derived defaults.
    fn get(&self, name: &str) -> Option<(AttrValue, Span)> {
        let i = self.index(name);
        if let Some(at) = self.given[i] {
            return Some((at.value.clone(), at.value_span));
        }
        let v = match self.spec.attrs[i].default {
            AttrDefault::Int(x) => AttrValue::Int(x),
            AttrDefault::Float(x) => AttrValue::Float(x),
            AttrDefault::Bool(b) => AttrValue::Bool(b),
            AttrDefault::Ints(v) => AttrValue::Ints(v.to_vec()),
            AttrDefault::Ident(s) => AttrValue::Ident(s.into()),
            AttrDefault::Required | AttrDefault::Derived(_) => return None,
        };
        Some((v, self.span))
    }

    fn is_given(&self, name: &str) -> bool {
        self.given[self.index(name)].is_some()
    }

    fn err(&self, name: &str, span: Span, msg: impl fmt::Display) -> Diagnostic {
        Diagnostic::error(format!("{}: `{name}` {msg}", self.spec.name)).at(span)
    }

    fn int(&self, name: &str) -> i64 {
        match self.get(name) {
            Some((AttrValue::Int(i), _)) => i,
            _ => 0,
        }
    }

    fn float(&self, name: &str) -> Result<(f64, Span), Diagnostic> {
        let (v, span) = self.get(name).unwrap_or((AttrValue::Float(0.0), self.span));
        let x = match v {
            AttrValue::Int(i) => i as f64,
            AttrValue::Float(x) => x,
            _ => 0.0,
        };
        if x.is_nan() {
            return Err(self.err(name, span, "must be a number, found `nan`"));
        }
        Ok((x, span))
    }

    fn finite(&self, name: &str) -> Result<(f64, Span), Diagnostic> {
        let (x, span) = self.float(name)?;
        if !x.is_finite() {
            return Err(self.err(name, span, format!("must be finite, found `{}`", fmt_float(x))));
        }
        Ok((x, span))
    }

    fn bool(&self, name: &str) -> bool {
        matches!(self.get(name), Some((AttrValue::Bool(true), _)))
    }

    fn ident(&self, name: &str) -> String {
        match self.get(name) {
            Some((AttrValue::Ident(s), _)) => s,
            _ => String::new(),
        }
    }

    fn ints(&self, name: &str) -> Option<(Vec<i64>, Span)> {
        match self.get(name) {
            Some((AttrValue::Ints(v), span)) => Some((v, span)),
            _ => None,
        }
    }

    /// A list of exactly `n` sizes, each in `[min, MAX_NUMEL]`.
    fn sizes<const N: usize>(&self, name: &str, min: i64) -> Result<Option<[usize; N]>, Diagnostic> {
        let Some((v, span)) = self.ints(name) else { return Ok(None) };
        if v.len() != N {
            return Err(self.err(name, span, format!("must have {N} entries, found {}", v.len())));
        }
        let mut out = [0usize; N];
        for (o, &x) in out.iter_mut().zip(&v) {
            *o = self.size(name, x, min, span)?;
        }
        Ok(Some(out))
    }

    fn size(&self, name: &str, x: i64, min: i64, span: Span) -> Result<usize, Diagnostic> {
        if x < min {
            return Err(self.err(name, span, format!("entries must be >= {min}, found {x}")));
        }
        if x > MAX_NUMEL as i64 {
            return Err(self.err(name, span, format!("entries must be <= {MAX_NUMEL}, found {x}")));
        }
        Ok(x as usize)
    }

    /// The `groups` attribute: at least 1.
    fn groups(&self) -> Result<usize, Diagnostic> {
        let groups = self.int("groups");
        if groups < 1 || groups > MAX_NUMEL as i64 {
            let span = self.get("groups").map_or(self.span, |g| g.1);
            return Err(self.err("groups", span, format!("must be >= 1, found {groups}")));
        }
        Ok(groups as usize)
    }

    fn dtype(&self, name: &str) -> DType {
        DType::from_name(&self.ident(name)).unwrap_or(DType::F32)
    }
}

/// Diagnoses a value of the wrong kind (`stride=1` where a list is expected).
fn check_kind(spec: &OpSpec, s: &AttrSpec, at: &Attr) -> Result<(), Diagnostic> {
    let ok = match (&s.kind, &at.value) {
        (AttrKind::Int, AttrValue::Int(_))
        | (AttrKind::Float, AttrValue::Int(_) | AttrValue::Float(_))
        | (AttrKind::Bool, AttrValue::Bool(_))
        | (AttrKind::Ints, AttrValue::Ints(_)) => true,
        (AttrKind::Choice(c), AttrValue::Ident(v)) => c.contains(&v.as_str()),
        (AttrKind::DType, AttrValue::Ident(v)) => DType::from_name(v).is_some(),
        _ => false,
    };
    if ok {
        return Ok(());
    }
    let mut d = Diagnostic::error(format!(
        "{}: `{}` must be {}, found {}",
        spec.name,
        s.name,
        s.kind.describe(),
        at.value.describe()
    ))
    .at(at.value_span)
    .with_expected(s.kind.describe());
    if let AttrValue::Ident(v) = &at.value {
        let choices: &[&str] = match s.kind {
            AttrKind::Choice(c) => c,
            AttrKind::DType => &["f32", "i32", "i8", "f16"],
            _ => &[],
        };
        if let Some(h) = did_you_mean(v, choices.iter().copied()) {
            d = d.with_hint(h);
        }
    }
    if let (AttrKind::Ints, AttrValue::Int(i)) = (&s.kind, &at.value) {
        let n = match s.default {
            AttrDefault::Ints(v) => v.len(),
            _ if matches!(s.name, "kernel" | "size") => 2,
            _ => 1,
        };
        let list = vec![i.to_string(); n].join(",");
        d = d.with_hint(format!("write a list: `{}=[{list}]`", s.name));
    }
    Err(d)
}

/// Builds the `Op` from resolved attributes, checking value ranges.
fn build(spec: &'static OpSpec, r: &Resolved) -> Result<Op, Diagnostic> {
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
        "sum" | "mean" | "max" | "min" => {
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
        "matmul" => Op::MatMul { transpose_a: r.bool("transpose_a"), transpose_b: r.bool("transpose_b") },
        "linear" => Op::Linear,
        "conv2d" => Op::Conv2d(Conv2dAttrs {
            stride: r.sizes("stride", 1)?.unwrap_or([1, 1]),
            pad: r.sizes("pad", 0)?.unwrap_or([0; 4]),
            dilation: r.sizes("dilation", 1)?.unwrap_or([1, 1]),
            groups: r.groups()?,
        }),
        "conv_transpose2d" => {
            let stride = r.sizes("stride", 1)?.unwrap_or([1, 1]);
            let dilation = r.sizes("dilation", 1)?.unwrap_or([1, 1]);
            let output_padding = r.sizes("output_padding", 0)?.unwrap_or([0, 0]);
            for (i, axis) in ["height", "width"].into_iter().enumerate() {
                if output_padding[i] >= stride[i].max(dilation[i]) {
                    let span = r.get("output_padding").map_or(r.span, |g| g.1);
                    return Err(r
                        .err(
                            "output_padding",
                            span,
                            format!(
                                "{} (the {axis}) must be smaller than the stride {} or the dilation {}",
                                output_padding[i], stride[i], dilation[i]
                            ),
                        )
                        .with_expected(format!(
                            "output_padding < max(stride, dilation) = {}",
                            stride[i].max(dilation[i])
                        )));
                }
            }
            Op::ConvTranspose2d(ConvTranspose2dAttrs {
                stride,
                pad: r.sizes("pad", 0)?.unwrap_or([0; 4]),
                output_padding,
                dilation,
                groups: r.groups()?,
            })
        }
        "max_pool2d" | "avg_pool2d" => {
            let kernel = r.sizes("kernel", 1)?.unwrap_or([1, 1]);
            let pool = Pool2dAttrs {
                kernel,
                stride: r.sizes("stride", 1)?.unwrap_or(kernel),
                pad: r.sizes("pad", 0)?.unwrap_or([0; 4]),
            };
            if spec.name == "max_pool2d" {
                Op::MaxPool2d(pool)
            } else {
                Op::AvgPool2d { pool, count_include_pad: r.bool("count_include_pad") }
            }
        }
        "global_avg_pool2d" => Op::GlobalAvgPool2d,
        "resize" => {
            let size = r.sizes("size", 1)?.unwrap_or([1, 1]);
            let mode = if r.ident("mode") == "bilinear" { ResizeMode::Bilinear } else { ResizeMode::Nearest };
            let align_corners = r.bool("align_corners");
            if align_corners && mode == ResizeMode::Nearest {
                let span = r.get("align_corners").map_or(r.span, |g| g.1);
                return Err(r
                    .err("align_corners", span, "applies only to `mode=bilinear`")
                    .with_hint("remove `align_corners=true` or use `mode=bilinear`"));
            }
            Op::Resize { size, mode, align_corners }
        }
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
        "expand" => {
            let (shape, span) = r.ints("shape").unwrap_or_default();
            let shape = shape.iter().map(|&d| r.size("shape", d, 0, span)).collect::<Result<Vec<_>, _>>()?;
            Op::Expand { shape }
        }
        "gather" => Op::Gather { axis: r.int("axis") },
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
        other => unreachable!("operator `{other}` has a spec but no builder"),
    };
    Ok(op)
}

/// The result type of `op` applied to inputs of these types, or one diagnostic naming the first
/// violated rule. `span` is where to point (the operator name).
pub fn infer(op: &Op, inputs: &[&TensorType], span: Span) -> Result<TensorType, Diagnostic> {
    let spec = op.spec();
    check_arity(spec, inputs.len(), span)?;
    let name = spec.name;
    let err = |msg: String| Diagnostic::error(format!("{name}: {msg}")).at(span);
    let want = |i: usize, allowed: &[DType]| -> Result<(), Diagnostic> {
        let t = inputs[i];
        if allowed.contains(&t.dtype) {
            return Ok(());
        }
        let names: Vec<&str> = allowed.iter().map(|d| d.name()).collect();
        let d = err(format!(
            "input `{}` has dtype {}, expected {}",
            spec.input_name(i),
            t.dtype,
            names.join(" or ")
        ))
        .with_expected(names.join(" or "));
        if t.dtype == DType::F16 && allowed.contains(&DType::F32) {
            // f16 is a storage type: arithmetic is written on f32 values.
            return Err(d.with_hint(format!(
                "f16 is a storage type: `cast` `{}` to f32 first (`cast(x, dtype=f32)`), and the result back to f16",
                spec.input_name(i)
            )));
        }
        Err(d)
    };
    let axis = |axis: i64, rank: usize, what: &str| -> Result<usize, Diagnostic> {
        normalise_axis(axis, rank).ok_or_else(|| {
            err(format!("{what} {axis} is out of range for rank {rank}")).with_expected(axis_range(rank))
        })
    };
    const F: &[DType] = &[DType::F32];
    const FI: &[DType] = &[DType::F32, DType::I32];
    // The dtype of a product (`matmul`, `linear`, `conv2d`): f32 operands give f32; i8 operands
    // give their exact i32 sums (zero points 0, as ONNX `MatMulInteger`/`ConvInteger` without
    // them), and then a bias, if any, is i32 too.
    let product = || -> Result<DType, Diagnostic> {
        let (x, w) = (inputs[0].dtype, inputs[1].dtype);
        let (xn, wn) = (spec.input_name(0), spec.input_name(1));
        let out = match (x, w) {
            (DType::F32, DType::F32) => DType::F32,
            (DType::I8, DType::I8) => DType::I32,
            _ if x == w => {
                return Err(err(format!("inputs `{xn}` and `{wn}` have dtype {x}, expected f32 or i8"))
                    .with_expected("f32 operands, or i8 operands (whose product is i32)")
                    .with_hint("cast i32 values to f32, or narrow quantized values to i8"))
            }
            _ => {
                return Err(err(format!(
                    "inputs `{xn}` ({x}) and `{wn}` ({w}) have different dtypes; both must be f32, or both i8"
                ))
                .with_hint(
                    "dequantize the i8 operand (`dequantize_linear` or `cast`), or quantize the f32 one \
                     (`quantize_linear`)",
                ))
            }
        };
        if let Some(b) = inputs.get(2) {
            if b.dtype != out {
                return Err(err(format!(
                    "the bias `{}` has dtype {}, expected {out} ({x} operands accumulate in {out})",
                    spec.input_name(2),
                    b.dtype
                ))
                .with_expected(out.name()));
            }
        }
        Ok(out)
    };

    let out = match op {
        Op::Unary(u) => {
            let int_ok = matches!(u, UnaryOp::Relu | UnaryOp::Abs | UnaryOp::Neg | UnaryOp::Clip { .. });
            want(0, if int_ok { FI } else { F })?;
            if let (UnaryOp::Clip { min, max }, DType::I32) = (u, inputs[0].dtype) {
                for (what, v) in [("min", min), ("max", max)] {
                    if v.is_finite() && v.fract() != 0.0 {
                        return Err(err(format!(
                            "`{what}` = {} is not an integer, but the input is i32",
                            fmt_float(*v)
                        )));
                    }
                }
            }
            inputs[0].clone()
        }
        Op::Binary(b) => {
            want(0, if *b == BinaryOp::Pow { F } else { FI })?;
            if inputs[1].dtype != inputs[0].dtype {
                return Err(err(format!(
                    "inputs have different dtypes ({} and {}); insert a `cast`",
                    inputs[0].dtype, inputs[1].dtype
                )));
            }
            let shape = broadcast(&inputs[0].shape, &inputs[1].shape).map_err(|m| {
                err(format!("shapes {} and {} {m}", shape_str(&inputs[0].shape), shape_str(&inputs[1].shape)))
            })?;
            TensorType::new(inputs[0].dtype, shape)
        }
        Op::Reduce { kind, axes, keepdims } => {
            want(0, if *kind == ReduceKind::Mean { F } else { FI })?;
            let x = inputs[0];
            let mut seen = vec![false; x.rank()];
            for &ax in axes {
                let a = axis(ax, x.rank(), "axis")?;
                if seen[a] {
                    return Err(err(format!("axis {ax} is listed twice in `axes` (it is axis {a})")));
                }
                if x.shape[a] == 0 && matches!(kind, ReduceKind::Max | ReduceKind::Min) {
                    return Err(err(format!("axis {ax} has size 0, so there is no {name}imum")));
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
            want(0, FI)?;
            let x = inputs[0];
            let a = axis(*ax, x.rank(), "axis")?;
            if x.shape[a] == 0 {
                return Err(err(format!("axis {ax} has size 0, so there is no maximum")));
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
            want(0, F)?;
            axis(*ax, inputs[0].rank(), "axis")?;
            inputs[0].clone()
        }
        Op::LayerNorm { .. } | Op::RmsNorm { .. } => {
            for i in 0..inputs.len() {
                want(i, F)?;
            }
            let (x, w) = (inputs[0], inputs[1]);
            let k = w.rank();
            if k == 0 || k > x.rank() {
                return Err(err(format!(
                    "weight has rank {k}, expected 1 to {} (the trailing dims of x to normalise over)",
                    x.rank()
                )));
            }
            let tail = &x.shape[x.rank() - k..];
            if w.shape != tail {
                return Err(err(format!(
                    "weight has shape {} but the last {k} dims of x are {}",
                    shape_str(&w.shape),
                    shape_str(tail)
                )));
            }
            if let Some(b) = inputs.get(2) {
                if b.shape != w.shape {
                    return Err(err(format!(
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
                want(i, F)?;
            }
            let x = inputs[0];
            if x.rank() < 2 {
                return Err(err(format!(
                    "x has rank {}, expected at least 2 (channels on axis 1)",
                    x.rank()
                )));
            }
            for (i, p) in inputs.iter().enumerate().skip(1) {
                if p.shape != [x.shape[1]] {
                    return Err(err(format!(
                        "`{}` has shape {} but x has {} channels, expected [{}]",
                        spec.input_name(i),
                        shape_str(&p.shape),
                        x.shape[1],
                        x.shape[1]
                    )));
                }
            }
            x.clone()
        }
        Op::MatMul { transpose_a, transpose_b } => {
            let dtype = product()?;
            let (a, b) = (inputs[0], inputs[1]);
            for (n, t) in [("a", a), ("b", b)] {
                if t.rank() < 2 {
                    return Err(err(format!("`{n}` has rank {}, expected at least 2", t.rank())));
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
                return Err(err(format!(
                    "inner dimensions differ: a is [..,{m},{k}] and b is [..,{k2},{n}] (after transposes)"
                )));
            }
            let mut shape = broadcast(&a.shape[..a.rank() - 2], &b.shape[..b.rank() - 2])
                .map_err(|m| err(format!("batch dimensions {m}")))?;
            shape.extend([m, n]);
            TensorType::new(dtype, shape)
        }
        Op::Linear => {
            let dtype = product()?;
            let (x, w) = (inputs[0], inputs[1]);
            if x.rank() < 1 {
                return Err(err("x is a scalar, expected rank >= 1".into()));
            }
            if w.rank() != 2 {
                return Err(err(format!("w has rank {}, expected 2 ([out, in])", w.rank())));
            }
            let inner = x.shape[x.rank() - 1];
            if w.shape[1] != inner {
                return Err(err(format!(
                    "x has {inner} input features but w has shape {} (expected [out, {inner}])",
                    shape_str(&w.shape)
                )));
            }
            if let Some(b) = inputs.get(2) {
                if b.shape != [w.shape[0]] {
                    return Err(err(format!(
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
        Op::Conv2d(c) => {
            let dtype = product()?;
            let (x, w) = (inputs[0], inputs[1]);
            for (n, t) in [("x", x), ("w", w)] {
                if t.rank() != 4 {
                    return Err(err(format!(
                        "`{n}` has rank {}, expected 4 ({})",
                        t.rank(),
                        if n == "x" { "[N,C,H,W]" } else { "[OC,C/groups,KH,KW]" }
                    )));
                }
            }
            let ch = x.shape[1];
            let expect_ch = w.shape[1].checked_mul(c.groups);
            if expect_ch != Some(ch) {
                return Err(err(format!(
                    "input has {ch} channels but weight expects {} (= w.shape[1] * groups)",
                    expect_ch.map_or("too many".to_string(), |e| e.to_string())
                )));
            }
            let oc = w.shape[0];
            if oc % c.groups != 0 {
                return Err(err(format!(
                    "output channels {oc} (w.shape[0]) are not divisible by groups={}",
                    c.groups
                )));
            }
            if let Some(b) = inputs.get(2) {
                if b.shape != [oc] {
                    return Err(err(format!("b has shape {}, expected [{oc}]", shape_str(&b.shape))));
                }
            }
            let mut out = vec![x.shape[0], oc];
            for (i, dim) in ["height", "width"].into_iter().enumerate() {
                let size = x.shape[2 + i];
                let k = w.shape[2 + i];
                let dil = c.dilation[i];
                let ek = k.checked_sub(1).and_then(|k1| k1.checked_mul(dil)).map(|e| e + 1);
                let padded = size + c.pad[i] + c.pad[i + 2];
                match ek {
                    Some(ek) if k > 0 && ek <= padded => out.push((padded - ek) / c.stride[i] + 1),
                    _ => {
                        return Err(err(format!(
                        "the kernel {dim} {k} (dilation {dil}) does not fit the padded input {dim} {padded}"
                    )))
                    }
                }
            }
            TensorType::new(dtype, out)
        }
        Op::MaxPool2d(p) | Op::AvgPool2d { pool: p, .. } => {
            want(0, F)?;
            let x = inputs[0];
            if x.rank() != 4 {
                return Err(err(format!("x has rank {}, expected 4 ([N,C,H,W])", x.rank())));
            }
            let mut out = vec![x.shape[0], x.shape[1]];
            for (i, dim) in ["height", "width"].into_iter().enumerate() {
                let k = p.kernel[i];
                for (side, pad) in [(["top", "left"][i], p.pad[i]), (["bottom", "right"][i], p.pad[i + 2])] {
                    if pad > k / 2 {
                        return Err(err(format!("pad {side} {pad} is more than half the kernel {dim} {k}"))
                            .with_expected(format!("pad <= {} (kernel / 2)", k / 2)));
                    }
                }
                let padded = x.shape[2 + i] + p.pad[i] + p.pad[i + 2];
                if k > padded {
                    return Err(err(format!(
                        "the kernel {dim} {k} is larger than the padded input {dim} {padded}"
                    )));
                }
                out.push((padded - k) / p.stride[i] + 1);
            }
            TensorType::new(DType::F32, out)
        }
        Op::GlobalAvgPool2d => {
            want(0, F)?;
            let x = inputs[0];
            if x.rank() != 4 {
                return Err(err(format!("x has rank {}, expected 4 ([N,C,H,W])", x.rank())));
            }
            TensorType::new(DType::F32, [x.shape[0], x.shape[1], 1, 1])
        }
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
                    return Err(err(format!(
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
                return Err(err(format!("`perm` has {} entries but x has rank {}", perm.len(), x.rank())));
            }
            if let Some(p) = perm.iter().find(|&&p| p >= x.rank()) {
                return Err(err(format!("`perm` entry {p} is out of range for rank {}", x.rank())));
            }
            TensorType::new(x.dtype, perm.iter().map(|&p| x.shape[p]).collect::<Vec<_>>())
        }
        Op::Concat { axis: ax } => {
            let first = inputs[0];
            let a = axis(*ax, first.rank(), "axis")?;
            let mut total = 0usize;
            for (i, t) in inputs.iter().enumerate() {
                if t.dtype != first.dtype {
                    return Err(err(format!(
                        "input {i} has dtype {} but input 0 has {}",
                        t.dtype, first.dtype
                    )));
                }
                let same_others = t.rank() == first.rank()
                    && t.shape.iter().zip(&first.shape).enumerate().all(|(j, (p, q))| j == a || p == q);
                if !same_others {
                    return Err(err(format!(
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
                let a = axis(ax, x.rank(), "axis")?;
                if seen[a] {
                    return Err(err(format!("axis {ax} is listed twice in `axes` (it is axis {a})")));
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
                return Err(err(format!(
                    "`pads` has {} entries, expected {} (all begins, then all ends, for rank {r})",
                    pads.len(),
                    2 * r
                )));
            }
            if let (PadMode::Constant(v), Some(range)) = (mode, x.dtype.int_range()) {
                if !int_in(*v, range) {
                    return Err(err(format!(
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
                        return Err(err(format!(
                        "reflect padding of axis {i} ({b} before, {e} after) must be less than its size {d}"
                    )))
                    }
                    PadMode::Edge if d == 0 && b + e > 0 => {
                        return Err(err(format!("edge padding of axis {i} needs a non-empty axis")))
                    }
                    _ => {}
                }
                shape.push(d + b + e);
            }
            TensorType::new(x.dtype, shape)
        }
        Op::Cast { dtype } => TensorType::new(*dtype, inputs[0].shape.clone()),
        Op::Full { ty, value } => {
            if let Some(range) = ty.dtype.int_range() {
                if !int_in(*value, range) {
                    return Err(err(format!(
                        "`value` = {} is not an {1}, but `dtype` is {1}",
                        fmt_float(*value),
                        ty.dtype
                    )));
                }
            }
            ty.clone()
        }
        Op::Compare(_) => {
            want(0, FI)?;
            if inputs[1].dtype != inputs[0].dtype {
                return Err(err(format!(
                    "inputs have different dtypes ({} and {}); insert a `cast`",
                    inputs[0].dtype, inputs[1].dtype
                )));
            }
            let shape = broadcast(&inputs[0].shape, &inputs[1].shape).map_err(|m| {
                err(format!("shapes {} and {} {m}", shape_str(&inputs[0].shape), shape_str(&inputs[1].shape)))
            })?;
            TensorType::new(DType::I32, shape)
        }
        Op::Where => {
            want(0, &[DType::I32])
                .map_err(|d| d.with_note("comparisons give i32 1 or 0; `cast` an f32 condition first"))?;
            let (c, a, b) = (inputs[0], inputs[1], inputs[2]);
            if a.dtype != b.dtype {
                return Err(err(format!(
                    "`a` and `b` have different dtypes ({} and {}); insert a `cast`",
                    a.dtype, b.dtype
                )));
            }
            let shape = broadcast(&c.shape, &a.shape).and_then(|s| broadcast(&s, &b.shape)).map_err(|m| {
                err(format!(
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
                return Err(err(format!("`dtype` must be f32 or i32 (indices do not fit in {})", ty.dtype))
                    .with_hint(format!("make an i32 iota and `cast` it to {}", ty.dtype)));
            }
            axis(*ax, ty.rank(), "axis")?;
            ty.clone()
        }
        Op::Expand { shape } => {
            let x = inputs[0];
            let fits = shape.len() >= x.rank() && broadcast(&x.shape, shape).is_ok_and(|b| b == *shape);
            if !fits {
                return Err(err(format!(
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
            want(1, &[DType::I32])?;
            let (x, idx) = (inputs[0], inputs[1]);
            let a = axis(*ax, x.rank(), "axis")?;
            let shape = [&x.shape[..a], &idx.shape[..], &x.shape[a + 1..]].concat();
            TensorType::new(x.dtype, shape)
        }
        Op::CumSum { axis: ax, .. } => {
            want(0, FI)?;
            axis(*ax, inputs[0].rank(), "axis")?;
            inputs[0].clone()
        }
        Op::GroupNorm { groups, .. } => {
            for i in 0..inputs.len() {
                want(i, F)?;
            }
            let x = inputs[0];
            if x.rank() < 2 {
                return Err(err(format!(
                    "x has rank {}, expected at least 2 ([N,C,...], channels on axis 1)",
                    x.rank()
                )));
            }
            let c = x.shape[1];
            if !c.is_multiple_of(*groups) {
                return Err(err(format!("{c} channels cannot be split into groups={groups}"))
                    .with_expected("a number of groups that divides the channels (x.shape[1])"));
            }
            for (i, p) in inputs.iter().enumerate().skip(1) {
                if p.shape != [c] {
                    return Err(err(format!(
                        "`{}` has shape {} but x has {c} channels, expected [{c}]",
                        spec.input_name(i),
                        shape_str(&p.shape)
                    )));
                }
            }
            x.clone()
        }
        Op::ConvTranspose2d(c) => {
            for i in 0..inputs.len() {
                want(i, F)?;
            }
            let (x, w) = (inputs[0], inputs[1]);
            for (n, t) in [("x", x), ("w", w)] {
                if t.rank() != 4 {
                    return Err(err(format!(
                        "`{n}` has rank {}, expected 4 ({})",
                        t.rank(),
                        if n == "x" { "[N,C,H,W]" } else { "[C,OC/groups,KH,KW]" }
                    )));
                }
            }
            let ch = x.shape[1];
            if w.shape[0] != ch {
                return Err(err(format!(
                    "input has {ch} channels but the weight has {} (w.shape[0])",
                    w.shape[0]
                )));
            }
            if ch % c.groups != 0 {
                return Err(err(format!("input channels {ch} are not divisible by groups={}", c.groups)));
            }
            let oc = w.shape[1]
                .checked_mul(c.groups)
                .ok_or_else(|| err("the output has too many channels".to_string()))?;
            if let Some(b) = inputs.get(2) {
                if b.shape != [oc] {
                    return Err(err(format!(
                        "b has shape {}, expected [{oc}] (w.shape[1] * groups)",
                        shape_str(&b.shape)
                    )));
                }
            }
            let mut out = vec![x.shape[0], oc];
            for (i, dim) in ["height", "width"].into_iter().enumerate() {
                let (size, k) = (x.shape[2 + i] as i128, w.shape[2 + i] as i128);
                if size == 0 || k == 0 {
                    return Err(err(format!("the input {dim} {size} and kernel {dim} {k} must be >= 1")));
                }
                let full = (size - 1) * c.stride[i] as i128
                    + c.dilation[i] as i128 * (k - 1)
                    + c.output_padding[i] as i128
                    + 1;
                let pads = (c.pad[i] + c.pad[i + 2]) as i128;
                if full <= pads {
                    return Err(err(format!(
                        "the output {dim} would be {} (the full {dim} {full} minus the pads {pads})",
                        full - pads
                    ))
                    .with_expected(format!("pads that leave an output {dim} >= 1")));
                }
                out.push(usize::try_from(full - pads).unwrap_or(usize::MAX));
            }
            TensorType::new(DType::F32, out)
        }
        Op::Resize { size, .. } => {
            want(0, F)?;
            let x = inputs[0];
            if x.rank() != 4 {
                return Err(err(format!("x has rank {}, expected 4 ([N,C,H,W])", x.rank())));
            }
            for (i, dim) in ["height", "width"].into_iter().enumerate() {
                let (from, to) = (x.shape[2 + i], size[i]);
                if from == 0 {
                    return Err(err(format!("cannot resize an input of {dim} 0")));
                }
                if from > RESIZE_MAX || to > RESIZE_MAX {
                    return Err(err(format!("a {dim} of {} is too large to resize", from.max(to)))
                        .with_expected(format!("input and output heights and widths <= {RESIZE_MAX}")));
                }
            }
            TensorType::new(DType::F32, [x.shape[0], x.shape[1], size[0], size[1]])
        }
        Op::QuantizeLinear { .. } => {
            want(0, F)?;
            TensorType::new(DType::I8, inputs[0].shape.clone())
        }
        Op::DequantizeLinear { .. } => {
            want(0, &[DType::I8])?;
            TensorType::new(DType::F32, inputs[0].shape.clone())
        }
    };
    check_numel(&out.shape)
        .map_err(|n| err(format!("the result {} would have {n}", shape_str(&out.shape))))?;
    Ok(out)
}

/// Whether `v` is an integer within `(min, max)` inclusive.
fn int_in(v: f64, (min, max): (i64, i64)) -> bool {
    v.fract() == 0.0 && v >= min as f64 && v <= max as f64
}

/// The largest height or width `resize` reads or writes: `2 * in * out + in` (its exact source
/// arithmetic) then fits in an i32.
pub const RESIZE_MAX: usize = 32767;

/// The element count of a shape if it and every dimension are at most [`MAX_NUMEL`];
/// otherwise a description of the count for the message.
pub fn check_numel(shape: &[usize]) -> Result<usize, String> {
    if let Some(d) = shape.iter().find(|&&d| d > MAX_NUMEL) {
        return Err(format!("a dimension of {d}, more than {MAX_NUMEL} (the limit)"));
    }
    shape
        .iter()
        .try_fold(1usize, |acc, &d| acc.checked_mul(d))
        .filter(|&n| n <= MAX_NUMEL)
        .ok_or_else(|| format!("more than {MAX_NUMEL} elements (the limit)"))
}

/// `axis` counted from the front (negative counts from the end), if in range.
pub fn normalise_axis(axis: i64, rank: usize) -> Option<usize> {
    let r = rank as i64;
    let a = if axis < 0 { axis + r } else { axis };
    (0..r).contains(&a).then_some(a as usize)
}

fn axis_range(rank: usize) -> String {
    if rank == 0 {
        "no axis (the input is a scalar)".into()
    } else {
        format!("an axis in {}..={}", -(rank as i64), rank as i64 - 1)
    }
}

/// Numpy broadcasting of two shapes (trailing dims aligned; a dim of 1 stretches).
pub fn broadcast(a: &[usize], b: &[usize]) -> Result<Vec<usize>, String> {
    let n = a.len().max(b.len());
    let mut out = vec![0; n];
    for i in 0..n {
        let da = if i < n - a.len() { 1 } else { a[i - (n - a.len())] };
        let db = if i < n - b.len() { 1 } else { b[i - (n - b.len())] };
        out[i] = match (da, db) {
            _ if da == db => da,
            (1, _) => db,
            (_, 1) => da,
            _ => {
                return Err(format!("cannot be broadcast: dimension {} from the end is {da} vs {db}", n - i))
            }
        };
    }
    Ok(out)
}

fn shape_str(s: &[usize]) -> String {
    format!("[{}]", s.iter().map(|d| d.to_string()).collect::<Vec<_>>().join(","))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn op_names_match_the_spec_table() {
        let mut from_specs: Vec<&str> = Vec::new();
        for s in SPECS {
            if !from_specs.contains(&s.name) {
                from_specs.push(s.name);
            }
        }
        assert_eq!(from_specs, OP_NAMES);
    }

    #[test]
    fn printed_attrs_follow_the_spec_order() {
        let sp = Span::NONE;
        for s in SPECS {
            let n = s.arity().0;
            let attrs: Vec<Attr> = s
                .attrs
                .iter()
                .filter(|a| a.default == AttrDefault::Required)
                .map(|a| Attr {
                    name: a.name.into(),
                    value: match (s.name, a.name) {
                        ("cast", _) | ("full", "dtype") => AttrValue::Ident("i32".into()),
                        ("resize", "size") => AttrValue::Ints(vec![4, 6]),
                        (_, "groups") => AttrValue::Int(2),
                        ("full", "value") => AttrValue::Float(2.0),
                        (_, "scale") => AttrValue::Float(0.25),
                        ("pad", _) => AttrValue::Ints(vec![1, 1]),
                        (_, "axis") => AttrValue::Int(0),
                        (_, "kernel") => AttrValue::Ints(vec![2, 2]),
                        _ => AttrValue::Ints(vec![1]),
                    },
                    name_span: sp,
                    value_span: sp,
                })
                .collect();
            let op = Op::from_text(s.name, sp, n, &attrs).unwrap_or_else(|d| panic!("{}: {d}", s.name));
            assert_eq!(op.name(), s.name);
            assert_eq!(op.spec(), s, "{}", s.name);
            let printed: Vec<&str> = op.attrs_for_print().iter().map(|p| p.0).collect();
            let names: Vec<&str> = s.attrs.iter().map(|a| a.name).collect();
            assert_eq!(printed, names, "{}", s.name);
            // Reading the printed attributes back gives the same operator.
            let back: Vec<Attr> = op
                .attrs_for_print()
                .into_iter()
                .map(|(k, v)| Attr { name: k.into(), value: v, name_span: sp, value_span: sp })
                .collect();
            assert_eq!(Op::from_text(s.name, sp, n, &back).unwrap(), op);
        }
    }

    use crate::l0::testing::{expect_error, load_error};

    /// A graph of inputs `x: f32[1,4,5,6]`, `w: f32[4,3,3,3]`, `i: i32[2,3]`, output `y`, and
    /// the node `expr` on line 2.
    fn node(expr: &str) -> String {
        format!("graph g(x: f32[1,4,5,6], w: f32[4,3,3,3], i: i32[2,3]) -> (y: f32[1]) {{\n  %0 = {expr}\n  return %0\n}}\n")
    }

    #[test]
    fn new_operator_and_attribute_typos_get_hints() {
        let d = expect_error(&node("cumsun(x, axis=1)"), "unknown operator `cumsun`", 2, 8);
        assert_eq!(d.hint.as_deref(), Some("did you mean `cumsum`?"));
        let d = expect_error(&node("cumsum(x, axes=1)"), "`cumsum` has no attribute `axes`", 2, 18);
        assert_eq!(d.hint.as_deref(), Some("did you mean `axis`?"));
        assert_eq!(d.expected.as_deref(), Some("one of `axis`, `exclusive`, `reverse`"));
        let d = expect_error(
            &node("conv_transpose2d(x, w, output_pading=[1,1])"),
            "`conv_transpose2d` has no attribute `output_pading`",
            2,
            31,
        );
        assert_eq!(d.hint.as_deref(), Some("did you mean `output_padding`?"));
        let d = expect_error(
            &node("resize(x, size=[2,2], mode=linear)"),
            "resize: `mode` must be one of `nearest`, `bilinear`, found name `linear`",
            2,
            35,
        );
        assert_eq!(d.hint.as_deref(), Some("did you mean `bilinear`?"));
        let d = expect_error(
            &node("resize(x, size=4)"),
            "resize: `size` must be a list of integers such as `[1,1]`, found integer `4`",
            2,
            23,
        );
        assert_eq!(d.hint.as_deref(), Some("write a list: `size=[4,4]`"));
        expect_error(&node("iota(shape=[2])"), "`iota` requires the attribute `axis` (an integer)", 2, 8);
        expect_error(
            &node("group_norm(x, w, w)"),
            "`group_norm` requires the attribute `groups` (an integer)",
            2,
            8,
        );
    }

    #[test]
    fn new_attribute_values_are_range_checked() {
        expect_error(
            &node("resize(x, size=[2,2], align_corners=true)"),
            "resize: `align_corners` applies only to `mode=bilinear`",
            2,
            44,
        );
        expect_error(&node("resize(x, size=[2,0])"), "resize: `size` entries must be >= 1, found 0", 2, 23);
        let d = expect_error(
            &node("conv_transpose2d(x, w, stride=[2,2], output_padding=[1,2])"),
            "conv_transpose2d: `output_padding` 2 (the width) must be smaller than the stride 2 or the dilation 1",
            2,
            60,
        );
        assert_eq!(d.expected.as_deref(), Some("output_padding < max(stride, dilation) = 2"));
        expect_error(
            &node("group_norm(x, w, w, groups=0)"),
            "group_norm: `groups` must be >= 1, found 0",
            2,
            35,
        );
        expect_error(
            &node("group_norm(x, w, w, groups=2, eps=-1)"),
            "group_norm: `eps` must be >= 0, found -1.0",
            2,
            42,
        );
        expect_error(
            &node("expand(x, shape=[-1,4])"),
            "expand: `shape` entries must be >= 0, found -1",
            2,
            24,
        );
        expect_error(&node("where(i, x)"), "`where` takes 3 inputs (cond, a, b), found 2", 2, 8);
        expect_error(&node("iota(x, shape=[2], axis=0)"), "`iota` takes no inputs, found 1", 2, 8);
    }

    #[test]
    fn new_shape_and_dtype_rules() {
        let cases = [
            ("less(x, i)", "less: inputs have different dtypes (f32 and i32); insert a `cast`"),
            ("equal(i, w)", "equal: inputs have different dtypes (i32 and f32); insert a `cast`"),
            ("greater(x, w)", "greater: shapes [1,4,5,6] and [4,3,3,3] cannot be broadcast: dimension 3 from the end is 4 vs 3"),
            ("where(x, x, x)", "where: input `cond` has dtype f32, expected i32"),
            ("where(i, x, i)", "where: `a` and `b` have different dtypes (f32 and i32); insert a `cast`"),
            ("where(i, x, w)", "where: shapes [2,3], [1,4,5,6] and [4,3,3,3] cannot be broadcast: dimension 2 from the end is 2 vs 5"),
            ("iota(shape=[2,3], axis=2)", "iota: axis 2 is out of range for rank 2"),
            ("expand(i, shape=[2,2])", "expand: x of shape [2,3] cannot be expanded to [2,2]"),
            ("expand(i, shape=[3])", "expand: x of shape [2,3] cannot be expanded to [3]"),
            ("gather(x, w, axis=0)", "gather: input `indices` has dtype f32, expected i32"),
            ("gather(x, i, axis=4)", "gather: axis 4 is out of range for rank 4"),
            ("cumsum(w, axis=-5)", "cumsum: axis -5 is out of range for rank 4"),
            ("group_norm(x, w, w, groups=3)", "group_norm: 4 channels cannot be split into groups=3"),
            ("group_norm(x, i, i, groups=2)", "group_norm: input `scale` has dtype i32, expected f32"),
            ("group_norm(w, x, x, groups=3)", "group_norm: `scale` has shape [1,4,5,6] but x has 3 channels, expected [3]"),
            ("conv_transpose2d(w, w)", "conv_transpose2d: input has 3 channels but the weight has 4 (w.shape[0])"),
            ("conv_transpose2d(x, w, groups=3)", "conv_transpose2d: input channels 4 are not divisible by groups=3"),
            ("conv_transpose2d(x, w, w)", "conv_transpose2d: b has shape [4,3,3,3], expected [3] (w.shape[1] * groups)"),
            ("conv_transpose2d(x, w, pad=[4,0,4,0])", "conv_transpose2d: the output height would be -1 (the full height 7 minus the pads 8)"),
            ("resize(i, size=[2,2])", "resize: input `x` has dtype i32, expected f32"),
            ("resize(w, size=[40000,2])", "resize: a height of 40000 is too large to resize"),
        ];
        for (expr, msg) in cases {
            expect_error(&node(expr), msg, 2, 8);
        }
        // The checker names the expected range of a bad axis.
        let d = load_error(&node("gather(x, i, axis=4)"));
        assert_eq!(d.expected.as_deref(), Some("an axis in -4..=3"));
    }

    #[test]
    fn new_operators_infer_their_types() {
        let sp = Span::NONE;
        let t = |d: DType, s: &[usize]| TensorType::new(d, s.to_vec());
        let f = |s: &[usize]| t(DType::F32, s);
        let i = |s: &[usize]| t(DType::I32, s);
        let ct = ConvTranspose2dAttrs {
            stride: [2, 3],
            pad: [1, 0, 0, 2],
            output_padding: [1, 2],
            dilation: [1, 2],
            groups: 2,
        };
        let cases: Vec<(Op, Vec<TensorType>, TensorType)> = vec![
            (Op::Compare(CompareOp::Less), vec![f(&[3, 1]), f(&[4])], i(&[3, 4])),
            (Op::Where, vec![i(&[2, 1, 1]), f(&[3, 1]), f(&[4])], f(&[2, 3, 4])),
            (Op::Iota { ty: f(&[2, 5]), axis: -1 }, vec![], f(&[2, 5])),
            (Op::Expand { shape: vec![2, 0, 3] }, vec![i(&[1, 3])], i(&[2, 0, 3])),
            (Op::Gather { axis: 1 }, vec![f(&[2, 5, 3]), i(&[4, 6])], f(&[2, 4, 6, 3])),
            (Op::Gather { axis: 0 }, vec![f(&[5]), i(&[])], f(&[])),
            (Op::CumSum { axis: 0, exclusive: true, reverse: false }, vec![i(&[7])], i(&[7])),
            (Op::GroupNorm { groups: 2, eps: 1e-5 }, vec![f(&[2, 4]), f(&[4]), f(&[4])], f(&[2, 4])),
            // i8 products are i32, batch dims broadcast and transposes apply as for f32.
            (
                Op::MatMul { transpose_a: true, transpose_b: false },
                vec![t(DType::I8, &[2, 1, 5, 3]), t(DType::I8, &[4, 5, 6])],
                i(&[2, 4, 3, 6]),
            ),
            (Op::Linear, vec![t(DType::I8, &[7, 5]), t(DType::I8, &[2, 5]), i(&[2])], i(&[7, 2])),
            (
                Op::Conv2d(Conv2dAttrs { stride: [2, 1], pad: [1, 0, 0, 0], dilation: [1, 1], groups: 2 }),
                vec![t(DType::I8, &[1, 4, 5, 5]), t(DType::I8, &[6, 2, 3, 3])],
                i(&[1, 6, 2, 3]),
            ),
            // Height (4-1)*2 - 1 + 1*(3-1) + 1 + 1 = 9; width (5-1)*3 - 2 + 2*(2-1) + 2 + 1 = 15.
            (Op::ConvTranspose2d(ct), vec![f(&[1, 4, 4, 5]), f(&[4, 3, 3, 2]), f(&[6])], f(&[1, 6, 9, 15])),
            (
                Op::Resize { size: [7, 1], mode: ResizeMode::Bilinear, align_corners: true },
                vec![f(&[2, 3, 4, 5])],
                f(&[2, 3, 7, 1]),
            ),
        ];
        for (op, ins, want) in cases {
            let refs: Vec<&TensorType> = ins.iter().collect();
            assert_eq!(infer(&op, &refs, sp).unwrap_or_else(|d| panic!("{op:?}: {d}")), want, "{op:?}");
        }
    }

    #[test]
    fn broadcasting_aligns_trailing_dims() {
        assert_eq!(broadcast(&[2, 1, 4], &[3, 1]).unwrap(), vec![2, 3, 4]);
        assert_eq!(broadcast(&[], &[5]).unwrap(), vec![5]);
        assert!(broadcast(&[2, 3], &[4]).unwrap_err().contains("3 vs 4"));
    }

    #[test]
    fn axes_normalise_from_the_end() {
        assert_eq!(normalise_axis(-1, 3), Some(2));
        assert_eq!(normalise_axis(-3, 3), Some(0));
        assert_eq!(normalise_axis(-4, 3), None);
        assert_eq!(normalise_axis(3, 3), None);
        assert_eq!(normalise_axis(i64::MIN, 3), None);
    }
}
