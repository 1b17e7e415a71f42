//! The L0 operator table: every operator's text name, inputs, attributes (names, kinds, defaults,
//! in the fixed order the canonical form prints them), valid attribute ranges, and its shape and
//! type rule.
//!
//! This module holds what every operator shares: the spec types, the table ([`SPECS`], put
//! together from the families' tables) and its lookup, the resolution of a node's attributes
//! against its spec (kinds, defaults, "did you mean"), arity, the context of a type rule
//! ([`infer`] dispatches to the family's rule), and the shape helpers ([`check_numel`],
//! [`normalise_axis`], [`broadcast`]). Each operator family has one file with its specs, how its
//! operators are built from attributes and printed back, and its type rules: `elementwise.rs`,
//! `reduce.rs`, `norm.rs`, `matmul.rs`, `spatial.rs` and `movement.rs`.
//!
//! Invariants kept here:
//! - [`OP_NAMES`] lists every operator name once; [`SPECS`] has one entry per operator form
//!   (`max`/`min` have a binary and a reduction form, told apart by their inputs and attributes).
//! - [`Op::from_text`] accepts exactly the attribute values [`Op::attrs_for_print`] can print,
//!   so `from_text(name, attrs_for_print(op)) == op` for every valid op.
//! - [`infer`] never panics and never overflows: shapes are computed with checked arithmetic and
//!   no tensor may have more than [`MAX_NUMEL`] elements.

mod elementwise;
mod matmul;
mod movement;
mod norm;
mod reduce;
mod spatial;

pub use spatial::RESIZE_MAX;

use crate::diag::{did_you_mean, Diagnostic, Span};
use crate::l0::ast::{BinaryOp, CompareOp, Op, ReduceKind, UnaryOp};
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

const X: &[&str] = &["x"];
const AB: &[&str] = &["a", "b"];

/// The families' tables in the order of [`OP_NAMES`], the elementwise and movement ones in parts.
const TABLES: &[&[OpSpec]] = &[
    elementwise::ARITHMETIC,
    reduce::SPECS,
    norm::SPECS,
    matmul::SPECS,
    spatial::SPECS,
    movement::LAYOUT,
    elementwise::CAST_FULL_IOTA,
    movement::EXPAND_GATHER,
    elementwise::QUANTIZATION,
];

/// Every operator form, in the order of [`OP_NAMES`] (with the reduction forms of `max` and
/// `min` beside `sum` and `mean`): the families' tables one after another.
pub const SPECS: &[OpSpec] = &concat::<{ count(TABLES) }>(TABLES);

/// The number of entries of `tables`.
const fn count(tables: &[&[OpSpec]]) -> usize {
    let (mut n, mut i) = (0, 0);
    while i < tables.len() {
        n += tables[i].len();
        i += 1;
    }
    n
}

/// The entries of `tables` one after another (`N` of them).
const fn concat<const N: usize>(tables: &[&[OpSpec]]) -> [OpSpec; N] {
    let mut out = [tables[0][0]; N];
    let (mut n, mut i) = (0, 0);
    while i < tables.len() {
        let mut j = 0;
        while j < tables[i].len() {
            out[n] = tables[i][j];
            n += 1;
            j += 1;
        }
        i += 1;
    }
    out
}

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
        match family(self) {
            Family::Elementwise => elementwise::attrs(self),
            Family::Reduce => reduce::attrs(self),
            Family::Norm => norm::attrs(self),
            Family::MatMul => matmul::attrs(self),
            Family::Spatial => spatial::attrs(self),
            Family::Movement => movement::attrs(self),
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

/// An operator family: the file with its specs, its builder, its attributes and its type rules.
enum Family {
    Elementwise,
    Reduce,
    Norm,
    MatMul,
    Spatial,
    Movement,
}

/// The family `op` is of.
fn family(op: &Op) -> Family {
    match op {
        Op::Unary(_)
        | Op::Binary(_)
        | Op::Compare(_)
        | Op::Where
        | Op::Cast { .. }
        | Op::Full { .. }
        | Op::Iota { .. }
        | Op::QuantizeLinear { .. }
        | Op::DequantizeLinear { .. } => Family::Elementwise,
        Op::Reduce { .. } | Op::ArgMax { .. } | Op::Softmax { .. } | Op::CumSum { .. } => Family::Reduce,
        Op::LayerNorm { .. } | Op::RmsNorm { .. } | Op::BatchNorm { .. } | Op::GroupNorm { .. } => {
            Family::Norm
        }
        Op::MatMul { .. } | Op::Linear => Family::MatMul,
        Op::Conv2d(_)
        | Op::ConvTranspose2d(_)
        | Op::MaxPool2d(_)
        | Op::AvgPool2d { .. }
        | Op::GlobalAvgPool2d
        | Op::Resize { .. } => Family::Spatial,
        Op::Reshape { .. }
        | Op::Transpose { .. }
        | Op::Concat { .. }
        | Op::Slice { .. }
        | Op::Pad { .. }
        | Op::Expand { .. }
        | Op::Gather { .. } => Family::Movement,
    }
}

/// A list of sizes as an attribute value.
fn ints(v: &[usize]) -> AttrValue {
    AttrValue::Ints(v.iter().map(|&x| x as i64).collect())
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

/// A family's builder: the operator `spec` names, built from its resolved attributes with their
/// value ranges checked; `None` when `spec` is of another family.
type Builder = fn(&'static OpSpec, &Resolved) -> Result<Option<Op>, Diagnostic>;

const BUILDERS: [Builder; 6] =
    [elementwise::build, reduce::build, norm::build, matmul::build, spatial::build, movement::build];

/// Builds the `Op` from resolved attributes, checking value ranges.
fn build(spec: &'static OpSpec, r: &Resolved) -> Result<Op, Diagnostic> {
    for build in BUILDERS {
        if let Some(op) = build(spec, r)? {
            return Ok(op);
        }
    }
    unreachable!("operator `{}` has a spec but no builder", spec.name)
}

/// The dtypes of an f32 operand, and of an operand that may also be i32.
const F: &[DType] = &[DType::F32];
const FI: &[DType] = &[DType::F32, DType::I32];

/// What a type rule reads: the operator's spec (its input names, for messages), the input types
/// and where to point (the operator name).
struct Rule<'a> {
    spec: &'static OpSpec,
    inputs: &'a [&'a TensorType],
    span: Span,
}

impl Rule<'_> {
    /// `NAME: msg`, at the operator.
    fn err(&self, msg: String) -> Diagnostic {
        Diagnostic::error(format!("{}: {msg}", self.spec.name)).at(self.span)
    }

    /// Input `i` has one of the `allowed` dtypes.
    fn want(&self, i: usize, allowed: &[DType]) -> Result<(), Diagnostic> {
        let t = self.inputs[i];
        if allowed.contains(&t.dtype) {
            return Ok(());
        }
        let names: Vec<&str> = allowed.iter().map(|d| d.name()).collect();
        let d = self
            .err(format!(
                "input `{}` has dtype {}, expected {}",
                self.spec.input_name(i),
                t.dtype,
                names.join(" or ")
            ))
            .with_expected(names.join(" or "));
        if t.dtype == DType::F16 && allowed.contains(&DType::F32) {
            // f16 is a storage type: arithmetic is written on f32 values.
            return Err(d.with_hint(format!(
                "f16 is a storage type: `cast` `{}` to f32 first (`cast(x, dtype=f32)`), and the result back to f16",
                self.spec.input_name(i)
            )));
        }
        Err(d)
    }

    /// `axis` of a tensor of rank `rank` counted from the front (`what` names it in messages).
    fn axis(&self, axis: i64, rank: usize, what: &str) -> Result<usize, Diagnostic> {
        normalise_axis(axis, rank).ok_or_else(|| {
            self.err(format!("{what} {axis} is out of range for rank {rank}")).with_expected(axis_range(rank))
        })
    }

    /// The dtype of a product (`matmul`, `linear`, `conv2d`): f32 operands give f32; i8 operands
    /// give their exact i32 sums (zero points 0, as ONNX `MatMulInteger`/`ConvInteger` without
    /// them), and then a bias, if any, is i32 too.
    fn product(&self) -> Result<DType, Diagnostic> {
        let (x, w) = (self.inputs[0].dtype, self.inputs[1].dtype);
        let (xn, wn) = (self.spec.input_name(0), self.spec.input_name(1));
        let out = match (x, w) {
            (DType::F32, DType::F32) => DType::F32,
            (DType::I8, DType::I8) => DType::I32,
            _ if x == w => {
                return Err(self
                    .err(format!("inputs `{xn}` and `{wn}` have dtype {x}, expected f32 or i8"))
                    .with_expected("f32 operands, or i8 operands (whose product is i32)")
                    .with_hint("cast i32 values to f32, or narrow quantized values to i8"))
            }
            _ => {
                return Err(self
                    .err(format!(
                        "inputs `{xn}` ({x}) and `{wn}` ({w}) have different dtypes; both must be f32, or both i8"
                    ))
                    .with_hint(
                        "dequantize the i8 operand (`dequantize_linear` or `cast`), or quantize the f32 one \
                         (`quantize_linear`)",
                    ))
            }
        };
        if let Some(b) = self.inputs.get(2) {
            if b.dtype != out {
                return Err(self
                    .err(format!(
                        "the bias `{}` has dtype {}, expected {out} ({x} operands accumulate in {out})",
                        self.spec.input_name(2),
                        b.dtype
                    ))
                    .with_expected(out.name()));
            }
        }
        Ok(out)
    }
}

/// The result type of `op` applied to inputs of these types, or one diagnostic naming the first
/// violated rule. `span` is where to point (the operator name).
pub fn infer(op: &Op, inputs: &[&TensorType], span: Span) -> Result<TensorType, Diagnostic> {
    let spec = op.spec();
    check_arity(spec, inputs.len(), span)?;
    let rule = Rule { spec, inputs, span };
    let out = match family(op) {
        Family::Elementwise => elementwise::infer(op, &rule),
        Family::Reduce => reduce::infer(op, &rule),
        Family::Norm => norm::infer(op, &rule),
        Family::MatMul => matmul::infer(op, &rule),
        Family::Spatial => spatial::infer(op, &rule),
        Family::Movement => movement::infer(op, &rule),
    }?;
    check_numel(&out.shape)
        .map_err(|n| rule.err(format!("the result {} would have {n}", shape_str(&out.shape))))?;
    Ok(out)
}

/// Whether `v` is an integer within `(min, max)` inclusive.
fn int_in(v: f64, (min, max): (i64, i64)) -> bool {
    v.fract() == 0.0 && v >= min as f64 && v <= max as f64
}

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
    use crate::l0::ast::{Conv2dAttrs, ConvTranspose2dAttrs, ResizeMode};

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
