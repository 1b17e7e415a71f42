//! The L0 reference interpreter: evaluates a checked graph in f64. It is the correctness oracle
//! of every benchmark result, so it is written to be read: each operator is a plain loop over
//! its output elements, following the semantics written down in `docs/ir.md` (PyTorch's where
//! PyTorch has the operator).
//!
//! What it keeps true:
//! - f32 tensors are computed in f64 and never rounded to f32 between operators; i32 tensors hold
//!   integral f64 values, and i32 arithmetic is computed exactly (in i64) and then wrapped to 32
//!   bits (two's complement), as a board computes it. i8 tensors hold integral f64 values in
//!   `-128..=127`; `quantize_linear` and `dequantize_linear` compute in f32 exactly as the
//!   lowered code does (the input rounded to f32, one rounding per operation), so their i8 and
//!   f32 results match compiled code bit for bit. f16 tensors hold exact f16 values; a value
//!   written to one (`cast`, `full`, a `pad` value) is rounded to f32 and then to f16, as a
//!   board does, and the operators that accept f16 only move values. `matmul`, `linear` and `conv2d` of i8
//!   operands sum their products exactly (in f64, exact at these magnitudes) and wrap the sum,
//!   bias included, to i32: the compiled i32 accumulator's result, whatever its order.
//! - NaN propagates through max/min, clip, relu, pools and max/min reductions (as in PyTorch);
//!   argmax treats NaN as the largest value, so the first NaN wins (as in PyTorch).
//! - A value given for an i32 tensor as a float (the `value` of `full` or of a constant `pad`)
//!   converts as `cast` does: truncation toward zero, saturating, NaN to 0.
//! - Bad input is a [`Diagnostic`], never a panic: an unchecked graph, missing, unknown or
//!   mistyped inputs (naming the input and its declared type), i32 division by zero (naming the
//!   node and the element), and attributes or shapes the checker would have refused. After each
//!   node the computed type is compared with the one `check` inferred, so a disagreement between
//!   the shape rules and the interpreter is reported rather than silently believed.
//!
//! The comparison and indexing operators live in [`index`], the spatial ones added to the
//! convolution family (`group_norm`, `conv_transpose2d`, `resize`) in [`spatial`].

mod index;
mod spatial;

use crate::diag::{did_you_mean, Diagnostic};
use crate::l0::ast::{
    BinaryOp, Conv2dAttrs, Graph, Node, Op, PadMode, Pool2dAttrs, ReduceKind, UnaryOp, ValueRef,
};
use crate::l0::inputs;
use crate::tensor::Tensor;
use crate::types::{strides, DType, TensorType};
use ekb_wire::f16;
use std::collections::HashMap;

/// Evaluates `g` on `inputs`, which holds every graph input and every parameter by name, and
/// returns the outputs in declaration order.
pub fn run(g: &Graph, inputs: &HashMap<String, Tensor>) -> Result<Vec<Tensor>, Diagnostic> {
    if let Some(n) = g.nodes.iter().find(|n| n.ty.is_none()) {
        return Err(Diagnostic::error(format!(
            "node `{}` has no type: the graph must be checked before it is interpreted",
            n.name
        ))
        .at(n.span)
        .with_hint("run `l0::check::check` (or load the graph with `l0::check::load`) first"));
    }
    check_inputs(g, inputs)?;
    let mut values: HashMap<&str, Tensor> = HashMap::new();
    for node in &g.nodes {
        let args = node.args.iter().map(|a| lookup(a, inputs, &values)).collect::<Result<Vec<_>, _>>()?;
        let out = eval_node(node, &args)?;
        let want = node.ty.as_ref().expect("every node type was checked above");
        if &out.ty != want {
            return Err(fail(
                node,
                format!("the checked type is `{want}` but the operator computes `{}`", out.ty),
            )
            .with_note("the shape rules and the interpreter disagree; the graph cannot be trusted"));
        }
        values.insert(&node.name, out);
    }
    g.outputs
        .iter()
        .map(|o| {
            let t = lookup(&o.value, inputs, &values)?;
            if t.ty != o.ty {
                return Err(Diagnostic::error(format!(
                    "output `{}` is declared `{}` but `{}` has type `{}`",
                    o.name, o.ty, o.value.name, t.ty
                ))
                .at(o.span));
            }
            Ok(t.clone())
        })
        .collect()
}

/// Evaluates `g` on the inputs and parameters generated from `seed` (see [`inputs::generate`]):
/// f32 data as a board holds it, widened to f64.
pub fn run_seeded(g: &Graph, seed: u64) -> Result<Vec<Tensor>, Diagnostic> {
    run(g, &inputs::generate_tensors(g, seed)?)
}

/// Every declared input and parameter is present with its declared type and well-formed data,
/// and nothing else is given.
fn check_inputs(g: &Graph, inputs: &HashMap<String, Tensor>) -> Result<(), Diagnostic> {
    let decls = g.inputs.iter().map(|d| ("input", d)).chain(g.params.iter().map(|d| ("parameter", d)));
    for (kind, d) in decls {
        let Some(t) = inputs.get(&d.name) else {
            let mut diag = Diagnostic::error(format!("missing {kind} `{}`", d.name))
                .at(d.span)
                .with_expected(format!("a tensor `{}: {}` among the inputs", d.name, d.ty));
            let unknown = inputs.keys().filter(|k| g.decl(k).is_none()).map(String::as_str);
            if let Some(h) = did_you_mean(&d.name, unknown) {
                diag = diag.with_hint(h);
            }
            return Err(diag);
        };
        if t.ty != d.ty {
            return Err(Diagnostic::error(format!(
                "{kind} `{}` is given as `{}` but the graph declares `{}`",
                d.name, t.ty, d.ty
            ))
            .at(d.span)
            .with_expected(d.ty.to_string()));
        }
        if t.data.len() != t.ty.numel() {
            return Err(Diagnostic::error(format!(
                "{kind} `{}` holds {} values but its type `{}` has {} elements",
                d.name,
                t.data.len(),
                t.ty,
                t.ty.numel()
            ))
            .at(d.span));
        }
        if let Some((min, max)) = t.ty.dtype.int_range() {
            let range = min as f64..=max as f64;
            if let Some(v) = t.data.iter().find(|&&v| v.fract() != 0.0 || !range.contains(&v)) {
                return Err(Diagnostic::error(format!(
                    "{kind} `{}` is {} but holds the value {v}",
                    d.name, t.ty.dtype
                ))
                .at(d.span)
                .with_expected(format!("integral values in the {} range", t.ty.dtype)));
            }
        }
        if t.ty.dtype == DType::F16 {
            if let Some(v) = t.data.iter().find(|&&v| !v.is_nan() && to_dtype(DType::F16, v) != v) {
                return Err(Diagnostic::error(format!("{kind} `{}` is f16 but holds the value {v}", d.name))
                    .at(d.span)
                    .with_expected("values that are exactly f16 (round them to f16 first)"));
            }
        }
    }
    let mut unknown: Vec<&str> = inputs.keys().map(String::as_str).filter(|k| g.decl(k).is_none()).collect();
    unknown.sort_unstable();
    if let Some(name) = unknown.first() {
        let declared = g.inputs.iter().chain(&g.params).map(|d| d.name.as_str());
        let mut diag = Diagnostic::error(format!(
            "unexpected input `{name}`: graph `{}` has no input or parameter of that name",
            g.name
        ));
        if let Some(h) = did_you_mean(name, declared) {
            diag = diag.with_hint(h);
        }
        return Err(diag);
    }
    Ok(())
}

fn lookup<'a>(
    r: &ValueRef,
    inputs: &'a HashMap<String, Tensor>,
    values: &'a HashMap<&str, Tensor>,
) -> Result<&'a Tensor, Diagnostic> {
    values.get(r.name.as_str()).or_else(|| inputs.get(&r.name)).ok_or_else(|| {
        Diagnostic::error(format!("`{}` is used before it is defined", r.name))
            .at(r.span)
            .with_note("every value must be an input, a parameter or an earlier node")
    })
}

/// A runtime or attribute error of one node.
fn fail(node: &Node, msg: impl std::fmt::Display) -> Diagnostic {
    Diagnostic::error(format!("in `{}` ({}): {msg}", node.name, node.op.name())).at(node.span)
}

fn eval_node(node: &Node, args: &[&Tensor]) -> Result<Tensor, Diagnostic> {
    let (min, max) = match &node.op {
        Op::Full { .. } | Op::Iota { .. } => (0, 0),
        Op::Binary(_) | Op::Compare(_) | Op::Gather { .. } | Op::MatMul { .. } | Op::RmsNorm { .. } => (2, 2),
        Op::LayerNorm { .. } | Op::GroupNorm { .. } | Op::Where => (3, 3),
        Op::BatchNorm { .. } => (5, 5),
        Op::Linear | Op::Conv2d(_) | Op::ConvTranspose2d(_) => (2, 3),
        Op::Concat { .. } => (1, usize::MAX),
        _ => (1, 1),
    };
    if args.len() < min || args.len() > max {
        let want = match (min, max) {
            (a, b) if a == b => format!("{a}"),
            (a, usize::MAX) => format!("at least {a}"),
            (a, b) => format!("{a} or {b}"),
        };
        return Err(fail(node, format!("the operator takes {want} inputs, got {}", args.len())));
    }
    match &node.op {
        Op::Unary(op) => unary(node, *op, args[0]),
        Op::Binary(op) => binary(node, *op, args[0], args[1]),
        Op::Reduce { kind, axes, keepdims } => reduce(node, *kind, axes, *keepdims, args[0]),
        Op::ArgMax { axis, keepdims } => argmax(node, *axis, *keepdims, args[0]),
        Op::Softmax { axis, log } => softmax(node, *axis, *log, args[0]),
        Op::LayerNorm { eps } => layer_norm(node, *eps, args[0], args[1], Some(args[2])),
        Op::RmsNorm { eps } => layer_norm(node, *eps, args[0], args[1], None),
        Op::BatchNorm { eps } => batch_norm(node, *eps, args),
        Op::MatMul { transpose_a, transpose_b } => matmul(node, *transpose_a, *transpose_b, args[0], args[1]),
        Op::Linear => linear(node, args[0], args[1], args.get(2).copied()),
        Op::Conv2d(attrs) => conv2d(node, attrs, args[0], args[1], args.get(2).copied()),
        Op::MaxPool2d(pool) => pool2d(node, pool, None, args[0]),
        Op::AvgPool2d { pool, count_include_pad } => pool2d(node, pool, Some(*count_include_pad), args[0]),
        Op::GlobalAvgPool2d => global_avg_pool2d(node, args[0]),
        Op::Reshape { shape } => reshape(node, shape, args[0]),
        Op::Transpose { perm } => transpose(node, perm, args[0]),
        Op::Concat { axis } => concat(node, *axis, args),
        Op::Slice { axes, starts, ends, steps } => slice(node, axes, starts, ends, steps, args[0]),
        Op::Pad { pads, mode } => pad(node, pads, *mode, args[0]),
        Op::Cast { dtype } => {
            // An integer narrowed to i8 keeps its low 8 bits (ONNX `Cast`); everything else
            // converts as a stored value does.
            let wrap = *dtype == DType::I8 && args[0].ty.dtype == DType::I32;
            Ok(Tensor {
                ty: TensorType::new(*dtype, args[0].ty.shape.clone()),
                data: args[0]
                    .data
                    .iter()
                    .map(|&v| if wrap { f64::from(v as i32 as i8) } else { to_dtype(*dtype, v) })
                    .collect(),
            })
        }
        Op::QuantizeLinear { scale, zero_point } => {
            want_dtype(node, args[0], DType::F32, "x")?;
            let data = args[0].data.iter().map(|&x| quantize(x, *scale, *zero_point)).collect();
            Ok(Tensor { ty: TensorType::new(DType::I8, args[0].ty.shape.clone()), data })
        }
        Op::DequantizeLinear { scale, zero_point } => {
            want_dtype(node, args[0], DType::I8, "q")?;
            let data = args[0].data.iter().map(|&q| dequantize(q, *scale, *zero_point)).collect();
            Ok(Tensor { ty: TensorType::new(DType::F32, args[0].ty.shape.clone()), data })
        }
        Op::Full { ty, value } => {
            Ok(Tensor { ty: ty.clone(), data: vec![to_dtype(ty.dtype, *value); ty.numel()] })
        }
        Op::Compare(op) => index::compare(node, *op, args[0], args[1]),
        Op::Where => index::where_(node, args[0], args[1], args[2]),
        Op::Iota { ty, axis } => index::iota(node, ty, *axis),
        Op::Expand { shape } => index::expand(node, shape, args[0]),
        Op::Gather { axis } => index::gather(node, *axis, args[0], args[1]),
        Op::CumSum { axis, exclusive, reverse } => index::cumsum(node, *axis, *exclusive, *reverse, args[0]),
        Op::GroupNorm { groups, eps } => spatial::group_norm(node, *groups, *eps, args[0], args[1], args[2]),
        Op::ConvTranspose2d(attrs) => {
            spatial::conv_transpose2d(node, attrs, args[0], args[1], args.get(2).copied())
        }
        Op::Resize { size, mode, align_corners } => {
            spatial::resize(node, *size, *mode, *align_corners, args[0])
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Shared helpers: indexing, broadcasting, axes, number conversions.

/// Walks every multi-index of a shape in row-major order (once for a scalar, never for a shape
/// with a zero dimension). A lending iterator: `while let Some(idx) = it.next() { .. }`.
struct Indices {
    shape: Vec<usize>,
    idx: Vec<usize>,
    started: bool,
    done: bool,
}

impl Indices {
    fn new(shape: &[usize]) -> Indices {
        Indices { shape: shape.to_vec(), idx: vec![0; shape.len()], started: false, done: shape.contains(&0) }
    }

    fn next(&mut self) -> Option<&[usize]> {
        if self.done {
            return None;
        }
        if self.started {
            // Odometer step: bump the last dimension, carrying into earlier ones.
            let mut d = self.shape.len();
            loop {
                if d == 0 {
                    self.done = true;
                    return None;
                }
                d -= 1;
                self.idx[d] += 1;
                if self.idx[d] < self.shape[d] {
                    break;
                }
                self.idx[d] = 0;
            }
        }
        self.started = true;
        Some(&self.idx)
    }
}

/// The flat offset of a multi-index under per-dimension strides.
fn offset(idx: &[usize], strides: &[usize]) -> usize {
    idx.iter().zip(strides).map(|(i, s)| i * s).sum()
}

/// numpy broadcasting: align trailing dimensions; equal sizes match and a size of 1 stretches.
fn broadcast_shapes(a: &[usize], b: &[usize]) -> Option<Vec<usize>> {
    let rank = a.len().max(b.len());
    let dim = |s: &[usize], d: usize| if d + s.len() < rank { 1 } else { s[d + s.len() - rank] };
    (0..rank)
        .map(|d| match (dim(a, d), dim(b, d)) {
            (x, y) if x == y || y == 1 => Some(x),
            (1, y) => Some(y),
            _ => None,
        })
        .collect()
}

/// Strides that read a row-major tensor of shape `from` at the indices of shape `to`, where
/// `from` broadcasts to `to`: dimensions align at the end, and a missing or size-1 dimension of
/// `from` gets stride 0. Also used the other way round by reductions, whose kept shape (reduced
/// dims set to 1) "broadcasts" to the input shape.
fn broadcast_strides(from: &[usize], to: &[usize]) -> Vec<usize> {
    let s = strides(from);
    let lead = to.len() - from.len();
    (0..to.len()).map(|d| if d < lead || from[d - lead] == 1 { 0 } else { s[d - lead] }).collect()
}

/// Resolves a possibly negative axis against a rank.
fn norm_axis(node: &Node, axis: i64, rank: usize) -> Result<usize, Diagnostic> {
    let r = rank as i64;
    if axis < -r || axis >= r {
        let range =
            if rank == 0 { "none (the input is a scalar)".to_string() } else { format!("{}..{}", -r, r - 1) };
        return Err(fail(node, format!("axis {axis} is out of range for rank {rank}"))
            .with_expected(format!("an axis in {range}")));
    }
    Ok(if axis < 0 { (axis + r) as usize } else { axis as usize })
}

/// Splits a shape around one axis into (elements before, the axis, elements after), so element
/// `(o, k, i)` lives at `(o * n + k) * inner + i`.
fn split_at_axis(shape: &[usize], axis: usize) -> (usize, usize, usize) {
    (shape[..axis].iter().product(), shape[axis], shape[axis + 1..].iter().product())
}

/// The shape after removing (or, with `keepdims`, setting to 1) the reduced axes.
fn reduced_shape(shape: &[usize], reduced: &[bool], keepdims: bool) -> Vec<usize> {
    let dims = shape.iter().zip(reduced);
    if keepdims {
        dims.map(|(&d, &r)| if r { 1 } else { d }).collect()
    } else {
        dims.filter(|(_, &r)| !r).map(|(&d, _)| d).collect()
    }
}

/// Wraps an exact integer result to i32 (two's complement).
fn wrap_i32(v: i64) -> f64 {
    f64::from(v as i32)
}

/// A value stored into a tensor of `dtype`: f32 keeps the f64 value (no rounding in the oracle);
/// i32 and i8 truncate toward zero, saturate and map NaN to 0 (Rust's `as`, which is `cast`'s
/// rule from f32); f16 rounds to the nearest f32 and then to the nearest f16, as a board rounds
/// the f32 it computed.
fn to_dtype(dtype: DType, v: f64) -> f64 {
    match dtype {
        DType::F32 => v,
        DType::F16 => f64::from(f16::to_f32(f16::from_f32(v as f32))),
        DType::I32 => f64::from(v as i32),
        DType::I8 => f64::from(v as i8),
    }
}

/// `quantize_linear` of one element, computed in f32 as a board computes it: the input rounded
/// to f32, divided by the f32 scale, rounded half to even, plus the zero point, saturated to
/// `[-128, 127]` (NaN gives -128, the lower bound, as the lowered `select(v >= -128.0, ..)`
/// does).
pub(crate) fn quantize(x: f64, scale: f64, zero_point: i64) -> f64 {
    let v = (x as f32 / scale as f32).round_ties_even() + zero_point as f32;
    if v.is_nan() {
        -128.0
    } else {
        f64::from(v.clamp(-128.0, 127.0))
    }
}

/// `dequantize_linear` of one element: `(q - Z) * S`, the difference exact, the product rounded
/// once to f32.
pub(crate) fn dequantize(q: f64, scale: f64, zero_point: i64) -> f64 {
    f64::from((q as i64 - zero_point) as f32 * scale as f32)
}

/// Maximum and minimum that propagate NaN (PyTorch's `maximum`/`minimum`, `amax`, pooling).
fn nan_max(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else {
        a.max(b)
    }
}

fn nan_min(a: f64, b: f64) -> f64 {
    if a.is_nan() || b.is_nan() {
        f64::NAN
    } else {
        a.min(b)
    }
}

/// `min(max(x, lo), hi)` with NaN passing through (PyTorch's `clamp`).
fn clamp(x: f64, lo: f64, hi: f64) -> f64 {
    if x < lo {
        lo
    } else if x > hi {
        hi
    } else {
        x
    }
}

fn want_dtype(node: &Node, t: &Tensor, dtype: DType, what: &str) -> Result<(), Diagnostic> {
    if t.ty.dtype != dtype {
        return Err(fail(node, format!("{what} must be {dtype}, found {}", t.ty.dtype)));
    }
    Ok(())
}

fn want_f32(node: &Node, t: &Tensor, what: &str) -> Result<(), Diagnostic> {
    if t.ty.dtype != DType::F32 {
        return Err(fail(node, format!("{what} must be f32, got `{}`", t.ty)));
    }
    Ok(())
}

fn want_shape(node: &Node, t: &Tensor, shape: &[usize], what: &str) -> Result<(), Diagnostic> {
    if t.ty.shape != shape {
        let want = TensorType::new(t.ty.dtype, shape);
        return Err(fail(node, format!("{what} must have shape `{want}`, got `{}`", t.ty)));
    }
    Ok(())
}

fn want_rank(node: &Node, t: &Tensor, rank: usize, what: &str) -> Result<(), Diagnostic> {
    if t.ty.rank() != rank {
        return Err(fail(node, format!("{what} must have rank {rank}, got `{}`", t.ty)));
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Elementwise.

fn unary(node: &Node, mut op: UnaryOp, x: &Tensor) -> Result<Tensor, Diagnostic> {
    let int = x.ty.dtype == DType::I32;
    if int {
        match op {
            UnaryOp::Relu | UnaryOp::Abs | UnaryOp::Neg => {}
            UnaryOp::Clip { min, max } => {
                // Integral (or infinite) bounds keep the result an integer; the checker's rule.
                if [min, max].iter().any(|b| b.is_finite() && b.fract() != 0.0) {
                    return Err(fail(node, format!("clip of i32 needs integral bounds, got [{min}, {max}]")));
                }
                // Bounds beyond the i32 range saturate to it.
                let (lo, hi) = (f64::from(i32::MIN), f64::from(i32::MAX));
                op = UnaryOp::Clip { min: min.clamp(lo, hi), max: max.clamp(lo, hi) };
            }
            _ => want_f32(node, x, "the input")?,
        }
    }
    let data = x.data.iter().map(|&v| {
        let y = unary_value(op, v);
        // Only `neg` and `abs` of i32::MIN overflow; they wrap back to i32::MIN.
        if int {
            wrap_i32(y as i64)
        } else {
            y
        }
    });
    Ok(Tensor { ty: x.ty.clone(), data: data.collect() })
}

/// One element of a unary operator (PyTorch's definitions).
fn unary_value(op: UnaryOp, x: f64) -> f64 {
    let relu6 = |v: f64| clamp(v, 0.0, 6.0);
    let sigmoid = |v: f64| 1.0 / (1.0 + (-v).exp());
    match op {
        UnaryOp::Relu => clamp(x, 0.0, f64::INFINITY),
        UnaryOp::Relu6 => relu6(x),
        UnaryOp::LeakyRelu { alpha } => {
            if x >= 0.0 {
                x
            } else {
                alpha * x
            }
        }
        UnaryOp::Gelu { tanh: false } => 0.5 * x * (1.0 + libm::erf(x / std::f64::consts::SQRT_2)),
        UnaryOp::Gelu { tanh: true } => {
            let k = (2.0 / std::f64::consts::PI).sqrt();
            0.5 * x * (1.0 + (k * (x + 0.044715 * x * x * x)).tanh())
        }
        UnaryOp::Silu => x * sigmoid(x),
        UnaryOp::Sigmoid => sigmoid(x),
        UnaryOp::Tanh => x.tanh(),
        UnaryOp::HardSwish => x * relu6(x + 3.0) / 6.0,
        UnaryOp::HardSigmoid => relu6(x + 3.0) / 6.0,
        UnaryOp::Softplus { beta, threshold } => {
            if beta * x > threshold {
                x
            } else {
                (beta * x).exp().ln_1p() / beta
            }
        }
        UnaryOp::Elu { alpha } => {
            if x > 0.0 {
                x
            } else {
                alpha * x.exp_m1()
            }
        }
        UnaryOp::Exp => x.exp(),
        UnaryOp::Log => x.ln(),
        UnaryOp::Sqrt => x.sqrt(),
        UnaryOp::Rsqrt => 1.0 / x.sqrt(),
        UnaryOp::Abs => x.abs(),
        UnaryOp::Neg => -x,
        UnaryOp::Clip { min, max } => clamp(x, min, max),
        UnaryOp::Sin => x.sin(),
        UnaryOp::Cos => x.cos(),
    }
}

fn binary(node: &Node, op: BinaryOp, a: &Tensor, b: &Tensor) -> Result<Tensor, Diagnostic> {
    if a.ty.dtype != b.ty.dtype {
        return Err(fail(node, format!("operands must have one dtype, got `{}` and `{}`", a.ty, b.ty)));
    }
    let int = a.ty.dtype == DType::I32;
    if int && op == BinaryOp::Pow {
        return Err(fail(node, "pow takes f32 operands, got i32"));
    }
    let shape = broadcast_shapes(&a.ty.shape, &b.ty.shape).ok_or_else(|| {
        fail(node, format!("shapes `{}` and `{}` do not broadcast", a.ty, b.ty))
            .with_note("dimensions align at the end; each pair must be equal or contain a 1")
    })?;
    let (sa, sb) = (broadcast_strides(&a.ty.shape, &shape), broadcast_strides(&b.ty.shape, &shape));
    let mut data = Vec::with_capacity(shape.iter().product());
    let mut it = Indices::new(&shape);
    while let Some(idx) = it.next() {
        let (x, y) = (a.data[offset(idx, &sa)], b.data[offset(idx, &sb)]);
        let v = if int {
            int_binary(op, x as i64, y as i64)
                .ok_or_else(|| fail(node, format!("i32 division by zero at output index {idx:?}")))?
        } else {
            float_binary(op, x, y)
        };
        data.push(v);
    }
    Ok(Tensor { ty: TensorType::new(a.ty.dtype, shape), data })
}

fn float_binary(op: BinaryOp, x: f64, y: f64) -> f64 {
    match op {
        BinaryOp::Add => x + y,
        BinaryOp::Sub => x - y,
        BinaryOp::Mul => x * y,
        BinaryOp::Div => x / y,
        BinaryOp::Max => nan_max(x, y),
        BinaryOp::Min => nan_min(x, y),
        BinaryOp::Pow => x.powf(y),
    }
}

/// Exact in i64, then wrapped; division truncates toward zero. `None` for division by zero (and
/// for `pow`, which has no i32 form).
fn int_binary(op: BinaryOp, x: i64, y: i64) -> Option<f64> {
    let v = match op {
        BinaryOp::Add => x + y,
        BinaryOp::Sub => x - y,
        BinaryOp::Mul => x * y,
        BinaryOp::Div => x.checked_div(y)?,
        BinaryOp::Max => x.max(y),
        BinaryOp::Min => x.min(y),
        BinaryOp::Pow => return None,
    };
    Some(wrap_i32(v))
}

// ---------------------------------------------------------------------------------------------
// Reductions and operators along one axis.

fn reduce(
    node: &Node,
    kind: ReduceKind,
    axes: &[i64],
    keepdims: bool,
    x: &Tensor,
) -> Result<Tensor, Diagnostic> {
    let int = x.ty.dtype == DType::I32;
    if kind == ReduceKind::Mean {
        want_f32(node, x, "the input of mean")?;
    }
    let rank = x.ty.rank();
    if axes.is_empty() {
        return Err(fail(node, "a reduction needs at least one axis").with_expected("axes=[..] non-empty"));
    }
    let mut reduced = vec![false; rank];
    for &a in axes {
        let a = norm_axis(node, a, rank)?;
        if std::mem::replace(&mut reduced[a], true) {
            return Err(fail(node, format!("axis {a} is reduced twice")));
        }
    }
    let count: usize = x.ty.shape.iter().zip(&reduced).filter(|(_, &r)| r).map(|(&d, _)| d).product();
    if count == 0 && matches!(kind, ReduceKind::Max | ReduceKind::Min) {
        return Err(fail(node, format!("max/min over an empty extent of `{}`", x.ty)));
    }
    let kept = reduced_shape(&x.ty.shape, &reduced, true);
    let init = match kind {
        ReduceKind::Sum | ReduceKind::Mean => 0.0,
        ReduceKind::Max => f64::NEG_INFINITY,
        ReduceKind::Min => f64::INFINITY,
    };
    let mut acc = vec![init; kept.iter().product()];
    // Each input element goes to the output element at its index with the reduced dims at 0.
    let to_out = broadcast_strides(&kept, &x.ty.shape);
    let mut it = Indices::new(&x.ty.shape);
    let mut flat = 0;
    while let Some(idx) = it.next() {
        let (a, v) = (&mut acc[offset(idx, &to_out)], x.data[flat]);
        *a = match kind {
            // Wrapping at every step keeps the running i32 sum exact in f64.
            ReduceKind::Sum if int => wrap_i32(*a as i64 + v as i64),
            ReduceKind::Sum | ReduceKind::Mean => *a + v,
            ReduceKind::Max => nan_max(*a, v),
            ReduceKind::Min => nan_min(*a, v),
        };
        flat += 1;
    }
    if kind == ReduceKind::Mean {
        acc.iter_mut().for_each(|a| *a /= count as f64);
    }
    Ok(Tensor { ty: TensorType::new(x.ty.dtype, reduced_shape(&x.ty.shape, &reduced, keepdims)), data: acc })
}

/// Index of the first maximum along `axis`; NaN counts as larger than any number (PyTorch).
fn argmax(node: &Node, axis: i64, keepdims: bool, x: &Tensor) -> Result<Tensor, Diagnostic> {
    let axis = norm_axis(node, axis, x.ty.rank())?;
    let (outer, n, inner) = split_at_axis(&x.ty.shape, axis);
    if n == 0 {
        return Err(fail(node, format!("argmax over an empty axis of `{}`", x.ty)));
    }
    let mut data = Vec::with_capacity(outer * inner);
    for o in 0..outer {
        for i in 0..inner {
            let at = |k: usize| x.data[(o * n + k) * inner + i];
            let mut best = 0;
            for k in 1..n {
                let (v, b) = (at(k), at(best));
                if (v.is_nan() && !b.is_nan()) || v > b {
                    best = k;
                }
            }
            data.push(best as f64);
        }
    }
    let mut reduced = vec![false; x.ty.rank()];
    reduced[axis] = true;
    Ok(Tensor { ty: TensorType::new(DType::I32, reduced_shape(&x.ty.shape, &reduced, keepdims)), data })
}

/// `exp(x - max) / sum(exp(x - max))` along `axis` (the max subtracted for stability); the log
/// form is `x - max - log(sum(exp(x - max)))`.
fn softmax(node: &Node, axis: i64, log: bool, x: &Tensor) -> Result<Tensor, Diagnostic> {
    want_f32(node, x, "the input")?;
    let axis = norm_axis(node, axis, x.ty.rank())?;
    let (outer, n, inner) = split_at_axis(&x.ty.shape, axis);
    let mut data = vec![0.0; x.data.len()];
    for o in 0..outer {
        for i in 0..inner {
            let at = |k: usize| (o * n + k) * inner + i;
            let m = (0..n).map(|k| x.data[at(k)]).fold(f64::NEG_INFINITY, nan_max);
            let sum: f64 = (0..n).map(|k| (x.data[at(k)] - m).exp()).sum();
            for k in 0..n {
                let z = x.data[at(k)] - m;
                data[at(k)] = if log { z - sum.ln() } else { z.exp() / sum };
            }
        }
    }
    Ok(Tensor { ty: x.ty.clone(), data })
}

// ---------------------------------------------------------------------------------------------
// Normalisations.

/// `layer_norm` (with `bias`) and `rms_norm` (without): both normalise over the trailing
/// `weight.rank` dimensions of `x`. layer_norm: `(x - mean) / sqrt(var + eps) * w + b` with the
/// biased variance; rms_norm: `x / sqrt(mean(x^2) + eps) * w`.
fn layer_norm(
    node: &Node,
    eps: f64,
    x: &Tensor,
    w: &Tensor,
    b: Option<&Tensor>,
) -> Result<Tensor, Diagnostic> {
    want_f32(node, x, "the input")?;
    want_f32(node, w, "the weight")?;
    let k = w.ty.rank();
    let r = x.ty.rank();
    if k > r || x.ty.shape[r - k..] != w.ty.shape[..] {
        return Err(fail(
            node,
            format!("the weight `{}` must have the shape of the trailing dims of the input `{}`", w.ty, x.ty),
        ));
    }
    if let Some(b) = b {
        want_f32(node, b, "the bias")?;
        want_shape(node, b, &w.ty.shape, "the bias")?;
    }
    let n = w.data.len();
    let mut data = Vec::with_capacity(x.data.len());
    if n > 0 {
        for row in x.data.chunks_exact(n) {
            let mean_of = |f: &dyn Fn(f64) -> f64| row.iter().map(|&v| f(v)).sum::<f64>() / n as f64;
            let (center, inv) = match b {
                Some(_) => {
                    let mean = mean_of(&|v| v);
                    let var = mean_of(&|v| (v - mean) * (v - mean));
                    (mean, 1.0 / (var + eps).sqrt())
                }
                None => (0.0, 1.0 / (mean_of(&|v| v * v) + eps).sqrt()),
            };
            for (j, v) in row.iter().enumerate() {
                let shift = b.map_or(0.0, |b| b.data[j]);
                data.push((v - center) * inv * w.data[j] + shift);
            }
        }
    }
    Ok(Tensor { ty: x.ty.clone(), data })
}

/// Inference batch norm over channels on axis 1: `(x - mean[c]) / sqrt(var[c] + eps) * gamma[c]
/// + beta[c]`.
fn batch_norm(node: &Node, eps: f64, args: &[&Tensor]) -> Result<Tensor, Diagnostic> {
    let x = args[0];
    want_f32(node, x, "the input")?;
    if x.ty.rank() < 2 {
        return Err(fail(
            node,
            format!("the input must have rank >= 2 (channels on axis 1), got `{}`", x.ty),
        ));
    }
    let c = x.ty.shape[1];
    for (t, what) in args[1..].iter().zip(["gamma", "beta", "mean", "var"]) {
        want_f32(node, t, what)?;
        want_shape(node, t, &[c], what)?;
    }
    let (gamma, beta, mean, var) = (&args[1].data, &args[2].data, &args[3].data, &args[4].data);
    let inner: usize = x.ty.shape[2..].iter().product();
    let data = x
        .data
        .iter()
        .enumerate()
        .map(|(flat, v)| {
            let ch = (flat / inner) % c;
            (v - mean[ch]) / (var[ch] + eps).sqrt() * gamma[ch] + beta[ch]
        })
        .collect();
    Ok(Tensor { ty: x.ty.clone(), data })
}

// ---------------------------------------------------------------------------------------------
// Matrix products and convolution.

/// The result dtype of a product of `x` and `w` (plus an optional bias): f32 for f32 operands,
/// i32 for i8 operands (whose bias must then be i32).
fn product_dtype(node: &Node, x: &Tensor, w: &Tensor, b: Option<&Tensor>) -> Result<DType, Diagnostic> {
    let out = match (x.ty.dtype, w.ty.dtype) {
        (DType::F32, DType::F32) => DType::F32,
        (DType::I8, DType::I8) => DType::I32,
        (a, c) => {
            return Err(fail(node, format!("the operands must be both f32 or both i8, got {a} and {c}")));
        }
    };
    if let Some(b) = b {
        want_dtype(node, b, out, "the bias")?;
    }
    Ok(out)
}

/// The stored value of a product's sum: f32 sums stay f64; i8 products summed exactly (every
/// partial sum of products of i8 is an integer well inside f64's exact range) and then, with
/// the bias, wrapped to i32 as the compiled accumulator wraps.
fn product_value(dtype: DType, sum: f64) -> f64 {
    match dtype {
        DType::F32 => sum,
        _ => wrap_i32(sum as i64),
    }
}

/// `a @ b` over the last two dims (each optionally transposed first), batch dims broadcast.
fn matmul(node: &Node, ta: bool, tb: bool, a: &Tensor, b: &Tensor) -> Result<Tensor, Diagnostic> {
    let dtype = product_dtype(node, a, b, None)?;
    let (ra, rb) = (a.ty.rank(), b.ty.rank());
    if ra < 2 || rb < 2 {
        return Err(fail(node, format!("operands must have rank >= 2, got `{}` and `{}`", a.ty, b.ty)));
    }
    let (a_rows, a_cols) = (a.ty.shape[ra - 2], a.ty.shape[ra - 1]);
    let (b_rows, b_cols) = (b.ty.shape[rb - 2], b.ty.shape[rb - 1]);
    let (m, k) = if ta { (a_cols, a_rows) } else { (a_rows, a_cols) };
    let (kb, n) = if tb { (b_cols, b_rows) } else { (b_rows, b_cols) };
    if k != kb {
        return Err(fail(
            node,
            format!(
                "inner dimensions differ: `{}` and `{}` give K = {k} and {kb} (after transposes)",
                a.ty, b.ty
            ),
        ));
    }
    let (batch_a, batch_b) = (&a.ty.shape[..ra - 2], &b.ty.shape[..rb - 2]);
    let batch = broadcast_shapes(batch_a, batch_b).ok_or_else(|| {
        fail(node, format!("batch dimensions of `{}` and `{}` do not broadcast", a.ty, b.ty))
    })?;
    let (sa, sb) = (broadcast_strides(batch_a, &batch), broadcast_strides(batch_b, &batch));
    // Element (i, p) of op(a) and (p, j) of op(b) within one matrix of the batch.
    let a_at = |i: usize, p: usize| if ta { p * m + i } else { i * k + p };
    let b_at = |p: usize, j: usize| if tb { j * k + p } else { p * n + j };
    let mut data = Vec::with_capacity(batch.iter().product::<usize>() * m * n);
    let mut it = Indices::new(&batch);
    while let Some(bidx) = it.next() {
        let (a0, b0) = (offset(bidx, &sa) * m * k, offset(bidx, &sb) * k * n);
        for i in 0..m {
            for j in 0..n {
                let sum = (0..k).map(|p| a.data[a0 + a_at(i, p)] * b.data[b0 + b_at(p, j)]).sum();
                data.push(product_value(dtype, sum));
            }
        }
    }
    let mut shape = batch;
    shape.extend([m, n]);
    Ok(Tensor { ty: TensorType::new(dtype, shape), data })
}

/// `y[.., o] = sum_i x[.., i] * w[o, i] + b[o]`.
fn linear(node: &Node, x: &Tensor, w: &Tensor, b: Option<&Tensor>) -> Result<Tensor, Diagnostic> {
    let dtype = product_dtype(node, x, w, b)?;
    want_rank(node, w, 2, "the weight [out, in]")?;
    let (out_f, in_f) = (w.ty.shape[0], w.ty.shape[1]);
    if x.ty.shape.last() != Some(&in_f) {
        return Err(fail(node, format!("the input `{}` must end in the weight's in-features {in_f}", x.ty)));
    }
    if let Some(b) = b {
        want_shape(node, b, &[out_f], "the bias")?;
    }
    let rows: usize = x.ty.shape[..x.ty.rank() - 1].iter().product();
    let mut data = Vec::with_capacity(rows * out_f);
    for r in 0..rows {
        for o in 0..out_f {
            let dot: f64 = (0..in_f).map(|i| x.data[r * in_f + i] * w.data[o * in_f + i]).sum();
            data.push(product_value(dtype, dot + b.map_or(0.0, |b| b.data[o])));
        }
    }
    let mut shape = x.ty.shape.clone();
    *shape.last_mut().expect("rank >= 1 was checked") = out_f;
    Ok(Tensor { ty: TensorType::new(dtype, shape), data })
}

/// Output extent of a sliding window (floor mode): `floor((size + pads - span) / stride) + 1`,
/// where `span` is the extent one window covers; `None` when the window does not fit once.
fn window_out(size: usize, pads: usize, span: usize, stride: usize) -> Option<usize> {
    (size + pads).checked_sub(span).map(|room| room / stride + 1)
}

/// NCHW convolution: `y[n, oc, oh, ow] = b[oc] + sum over ic, kh, kw of
/// x[n, g*C/G + ic, oh*sh - top + kh*dh, ow*sw - left + kw*dw] * w[oc, ic, kh, kw]`, where
/// `g = oc / (OC/G)` is the group of `oc` and positions outside `x` (the padding) contribute 0.
fn conv2d(
    node: &Node,
    a: &Conv2dAttrs,
    x: &Tensor,
    w: &Tensor,
    b: Option<&Tensor>,
) -> Result<Tensor, Diagnostic> {
    let dtype = product_dtype(node, x, w, b)?;
    want_rank(node, x, 4, "the input [N,C,H,W]")?;
    want_rank(node, w, 4, "the weight [OC,C/groups,KH,KW]")?;
    let [n, c, h, wd] = [x.ty.shape[0], x.ty.shape[1], x.ty.shape[2], x.ty.shape[3]];
    let [oc, icg, kh, kw] = [w.ty.shape[0], w.ty.shape[1], w.ty.shape[2], w.ty.shape[3]];
    let [sh, sw] = a.stride;
    let [dh, dw] = a.dilation;
    let [top, left, bottom, right] = a.pad;
    let groups = a.groups;
    if sh == 0 || sw == 0 || dh == 0 || dw == 0 || groups == 0 {
        return Err(fail(node, "stride, dilation and groups must be >= 1"));
    }
    if c % groups != 0 || oc % groups != 0 || icg * groups != c {
        return Err(fail(
            node,
            format!("with groups={groups}, the input `{}` and weight `{}` do not match", x.ty, w.ty),
        )
        .with_expected("C and OC divisible by groups, and weight dim 1 = C / groups"));
    }
    if let Some(b) = b {
        want_shape(node, b, &[oc], "the bias")?;
    }
    let oh = window_out(h, top + bottom, dh * kh.saturating_sub(1) + 1, sh);
    let ow = window_out(wd, left + right, dw * kw.saturating_sub(1) + 1, sw);
    let (Some(oh), Some(ow)) = (oh, ow) else {
        return Err(fail(node, "the (dilated) kernel is larger than the padded input"));
    };
    let ocg = oc / groups;
    // The planes x[nn, ch] (H*W values) and w[o, ic] (KH*KW values), row-major.
    let x_plane = |nn: usize, ch: usize| &x.data[(nn * c + ch) * h * wd..][..h * wd];
    let w_plane = |o: usize, ic: usize| &w.data[(o * icg + ic) * kh * kw..][..kh * kw];
    // For each kernel column, the output columns whose input column is inside `x` (a range
    // of `xo`) and the input column of the first of them.
    let columns: Vec<(usize, usize, usize)> = (0..kw)
        .map(|s| {
            let (off, room) = (s * dw, wd + left);
            let lo = left.saturating_sub(off).div_ceil(sw);
            let hi = if room > off { ((room - off - 1) / sw + 1).min(ow) } else { 0 };
            (lo, hi.max(lo), (lo * sw + off).saturating_sub(left))
        })
        .collect();
    // A row of outputs at a time: each output adds its terms in the order of the formula
    // (ic, then r, then s), the row's columns side by side.
    let mut data = vec![0.0; n * oc * oh * ow];
    for (row_index, row) in data.chunks_exact_mut(ow.max(1)).enumerate().take(n * oc * oh) {
        let (y, o, nn) = (row_index % oh, row_index / oh % oc, row_index / (oh * oc));
        let g = o / ocg;
        row.fill(b.map_or(0.0, |b| b.data[o]));
        for ic in 0..icg {
            let (xp, wp) = (x_plane(nn, g * icg + ic), w_plane(o, ic));
            for r in 0..kh {
                // Input row, or None inside the padding.
                let Some(ih) = (y * sh + r * dh).checked_sub(top).filter(|&i| i < h) else {
                    continue;
                };
                let x_row = &xp[ih * wd..][..wd];
                for (s, &(lo, hi, first)) in columns.iter().enumerate() {
                    let wv = wp[r * kw + s];
                    let outs = &mut row[lo..hi];
                    if sw == 1 {
                        for (acc, &xv) in outs.iter_mut().zip(&x_row[first..]) {
                            *acc += xv * wv;
                        }
                    } else {
                        for (acc, &xv) in outs.iter_mut().zip(x_row[first..].iter().step_by(sw)) {
                            *acc += xv * wv;
                        }
                    }
                }
            }
        }
        for v in row.iter_mut() {
            *v = product_value(dtype, *v);
        }
    }
    Ok(Tensor { ty: TensorType::new(dtype, [n, oc, oh, ow]), data })
}

// ---------------------------------------------------------------------------------------------
// Pooling.

/// `max_pool2d` (`count_include_pad` is None) and `avg_pool2d`. Windows cover
/// `[oh*sh - top, oh*sh - top + kh)`; positions in the padding never win a max and add 0 to an
/// average, whose divisor is `kh*kw` with `count_include_pad` and the in-bounds count without.
fn pool2d(
    node: &Node,
    p: &Pool2dAttrs,
    count_include_pad: Option<bool>,
    x: &Tensor,
) -> Result<Tensor, Diagnostic> {
    want_f32(node, x, "the input")?;
    want_rank(node, x, 4, "the input [N,C,H,W]")?;
    let [n, c, h, wd] = [x.ty.shape[0], x.ty.shape[1], x.ty.shape[2], x.ty.shape[3]];
    let [kh, kw] = p.kernel;
    let [sh, sw] = p.stride;
    let [top, left, bottom, right] = p.pad;
    if kh == 0 || kw == 0 || sh == 0 || sw == 0 {
        return Err(fail(node, "kernel and stride must be >= 1"));
    }
    if h == 0 || wd == 0 {
        return Err(fail(node, format!("cannot pool the empty input `{}`", x.ty)));
    }
    if top.max(bottom) > kh / 2 || left.max(right) > kw / 2 {
        return Err(fail(node, format!("padding {:?} exceeds half the kernel {:?}", p.pad, p.kernel))
            .with_expected("each pad <= kernel / 2 (so every window holds an input element)"));
    }
    let (Some(oh), Some(ow)) = (window_out(h, top + bottom, kh, sh), window_out(wd, left + right, kw, sw))
    else {
        return Err(fail(node, "the kernel is larger than the padded input"));
    };
    let mut data = Vec::with_capacity(n * c * oh * ow);
    for plane in x.data.chunks_exact(h * wd).take(n * c) {
        for y in 0..oh {
            for xo in 0..ow {
                let (mut max, mut sum, mut count) = (f64::NEG_INFINITY, 0.0, 0usize);
                for r in 0..kh {
                    let Some(ih) = (y * sh + r).checked_sub(top).filter(|&i| i < h) else { continue };
                    for s in 0..kw {
                        let Some(iw) = (xo * sw + s).checked_sub(left).filter(|&i| i < wd) else { continue };
                        let v = plane[ih * wd + iw];
                        max = nan_max(max, v);
                        sum += v;
                        count += 1;
                    }
                }
                data.push(match count_include_pad {
                    None => max,
                    Some(true) => sum / (kh * kw) as f64,
                    Some(false) => sum / count as f64,
                });
            }
        }
    }
    Ok(Tensor { ty: TensorType::new(DType::F32, [n, c, oh, ow]), data })
}

/// Mean over H and W: `[N,C,H,W] -> [N,C,1,1]`.
fn global_avg_pool2d(node: &Node, x: &Tensor) -> Result<Tensor, Diagnostic> {
    want_f32(node, x, "the input")?;
    want_rank(node, x, 4, "the input [N,C,H,W]")?;
    let [n, c, h, w] = [x.ty.shape[0], x.ty.shape[1], x.ty.shape[2], x.ty.shape[3]];
    let data: Vec<f64> = if h * w == 0 {
        vec![f64::NAN; n * c]
    } else {
        x.data.chunks_exact(h * w).map(|plane| plane.iter().sum::<f64>() / (h * w) as f64).collect()
    };
    Ok(Tensor { ty: TensorType::new(DType::F32, [n, c, 1, 1]), data })
}

// ---------------------------------------------------------------------------------------------
// Data movement.

/// Same elements in the same order under a new shape; one `-1` takes the remaining size.
fn reshape(node: &Node, shape: &[i64], x: &Tensor) -> Result<Tensor, Diagnostic> {
    let numel = x.data.len();
    let holes = shape.iter().filter(|&&d| d == -1).count();
    if holes > 1 || shape.iter().any(|&d| d < -1) {
        return Err(
            fail(node, format!("invalid shape {shape:?}")).with_expected("sizes >= 0 with at most one -1")
        );
    }
    let known = checked_product(shape.iter().filter(|&&d| d >= 0).map(|&d| d as usize));
    // A size that does not divide evenly fails the element-count check below.
    let hole = match known {
        Some(k) if holes == 1 && k > 0 => numel / k,
        _ => 0,
    };
    let resolved: Vec<usize> = shape.iter().map(|&d| if d == -1 { hole } else { d as usize }).collect();
    if checked_product(resolved.iter().copied()) != Some(numel) || (holes == 1 && known == Some(0)) {
        return Err(fail(node, format!("cannot reshape `{}` ({numel} elements) to {shape:?}", x.ty)));
    }
    Ok(Tensor { ty: TensorType::new(x.ty.dtype, resolved), data: x.data.clone() })
}

/// The product of sizes, or `None` on overflow.
fn checked_product(mut dims: impl Iterator<Item = usize>) -> Option<usize> {
    dims.try_fold(1usize, |a, d| a.checked_mul(d))
}

/// Output dimension `i` is input dimension `perm[i]`.
fn transpose(node: &Node, perm: &[usize], x: &Tensor) -> Result<Tensor, Diagnostic> {
    let rank = x.ty.rank();
    let mut sorted = perm.to_vec();
    sorted.sort_unstable();
    if sorted != (0..rank).collect::<Vec<_>>() {
        return Err(fail(
            node,
            format!("perm {perm:?} is not a permutation of the {rank} dims of `{}`", x.ty),
        ));
    }
    let in_strides = x.ty.strides();
    let shape: Vec<usize> = perm.iter().map(|&p| x.ty.shape[p]).collect();
    let read: Vec<usize> = perm.iter().map(|&p| in_strides[p]).collect();
    let mut data = Vec::with_capacity(x.data.len());
    let mut it = Indices::new(&shape);
    while let Some(idx) = it.next() {
        data.push(x.data[offset(idx, &read)]);
    }
    Ok(Tensor { ty: TensorType::new(x.ty.dtype, shape), data })
}

/// Joins along `axis`: for each position before the axis, the inputs' blocks one after another.
fn concat(node: &Node, axis: i64, xs: &[&Tensor]) -> Result<Tensor, Diagnostic> {
    let first = &xs[0].ty;
    let axis = norm_axis(node, axis, first.rank())?;
    for t in xs {
        let same_other_dims = t.ty.rank() == first.rank()
            && (0..first.rank()).all(|d| d == axis || t.ty.shape[d] == first.shape[d]);
        if t.ty.dtype != first.dtype || !same_other_dims {
            return Err(fail(node, format!("`{}` and `{first}` cannot be joined on axis {axis}", t.ty))
                .with_expected("one dtype, one rank, and equal sizes except on the axis"));
        }
    }
    let (outer, _, inner) = split_at_axis(&first.shape, axis);
    let mut shape = first.shape.clone();
    shape[axis] = xs.iter().map(|t| t.ty.shape[axis]).sum();
    let mut data = Vec::with_capacity(shape.iter().product());
    for o in 0..outer {
        for t in xs {
            let block = t.ty.shape[axis] * inner;
            data.extend_from_slice(&t.data[o * block..(o + 1) * block]);
        }
    }
    Ok(Tensor { ty: TensorType::new(first.dtype, shape), data })
}

/// Python-style slicing: per listed axis, negative start/end add the dim and then clamp to
/// `[0, dim]`; the axis keeps `max(0, ceil((end - start) / step))` elements `start + j*step`.
fn slice(
    node: &Node,
    axes: &[i64],
    starts: &[i64],
    ends: &[i64],
    steps: &[i64],
    x: &Tensor,
) -> Result<Tensor, Diagnostic> {
    if starts.len() != axes.len() || ends.len() != axes.len() || steps.len() != axes.len() {
        return Err(fail(node, "axes, starts, ends and steps must have equal lengths"));
    }
    let rank = x.ty.rank();
    let mut shape = x.ty.shape.clone();
    let mut begin = vec![0usize; rank];
    let mut step = vec![1usize; rank];
    let mut seen = vec![false; rank];
    for (((&a, &s), &e), &st) in axes.iter().zip(starts).zip(ends).zip(steps) {
        let a = norm_axis(node, a, rank)?;
        if std::mem::replace(&mut seen[a], true) {
            return Err(fail(node, format!("axis {a} is sliced twice")));
        }
        if st < 1 {
            return Err(fail(node, format!("step {st} on axis {a}")).with_expected("steps >= 1"));
        }
        let dim = x.ty.shape[a] as i64;
        let resolve = |v: i64| (if v < 0 { v.saturating_add(dim) } else { v }).clamp(0, dim);
        let (s, e) = (resolve(s), resolve(e));
        begin[a] = s as usize;
        step[a] = st as usize;
        shape[a] = if e > s { ((e - s - 1) / st + 1) as usize } else { 0 };
    }
    let in_strides = x.ty.strides();
    let mut data = Vec::with_capacity(shape.iter().product());
    let mut it = Indices::new(&shape);
    while let Some(idx) = it.next() {
        let at: usize = (0..rank).map(|d| (begin[d] + idx[d] * step[d]) * in_strides[d]).sum();
        data.push(x.data[at]);
    }
    Ok(Tensor { ty: TensorType::new(x.ty.dtype, shape), data })
}

/// `pads` = all begins then all ends. An output position maps back to `i = o - begin` per dim;
/// outside `[0, dim)` it reads `value` (constant), the mirror image without repeating the border
/// (reflect: `-i`, `2*(dim-1) - i`) or the nearest border element (edge).
fn pad(node: &Node, pads: &[usize], mode: PadMode, x: &Tensor) -> Result<Tensor, Diagnostic> {
    let rank = x.ty.rank();
    if pads.len() != 2 * rank {
        return Err(fail(node, format!("pads has {} values for rank {rank}", pads.len()))
            .with_expected(format!("{} values: all begins, then all ends", 2 * rank)));
    }
    let (before, after) = pads.split_at(rank);
    for (d, &dim) in x.ty.shape.iter().enumerate() {
        let most = before[d].max(after[d]);
        let bad = match mode {
            PadMode::Reflect => most >= dim && most > 0,
            PadMode::Edge => dim == 0 && most > 0,
            PadMode::Constant(_) => false,
        };
        if bad {
            return Err(fail(node, format!("cannot pad dim {d} of size {dim} by {most} in this mode"))
                .with_expected("reflect: pad < dim; edge: a non-empty dim"));
        }
    }
    let shape: Vec<usize> = (0..rank).map(|d| before[d] + x.ty.shape[d] + after[d]).collect();
    let in_strides = x.ty.strides();
    let mut data = Vec::with_capacity(shape.iter().product());
    let mut it = Indices::new(&shape);
    'out: while let Some(idx) = it.next() {
        let mut at = 0;
        for d in 0..rank {
            let dim = x.ty.shape[d] as i64;
            let i = idx[d] as i64 - before[d] as i64;
            let src = match mode {
                _ if (0..dim).contains(&i) => i,
                PadMode::Constant(value) => {
                    data.push(to_dtype(x.ty.dtype, value));
                    continue 'out;
                }
                PadMode::Reflect if i < 0 => -i,
                PadMode::Reflect => 2 * (dim - 1) - i,
                PadMode::Edge => i.clamp(0, dim - 1),
            };
            at += src as usize * in_strides[d];
        }
        data.push(x.data[at]);
    }
    Ok(Tensor { ty: TensorType::new(x.ty.dtype, shape), data })
}

#[cfg(test)]
mod tests {
    use crate::l0::testing::{assert_close, eval};

    #[test]
    fn sin_and_cos_are_the_f64_functions() {
        let g = "graph g(x: f32[4]) -> (s: f32[4], c: f32[4]) {\n  %s = sin(x)\n  %c = cos(x)\n  return %s, %c\n}\n";
        let (h, p) = (std::f64::consts::FRAC_PI_2, std::f64::consts::PI);
        let out = eval(g, &[("x", &[0.0, h, p, -h])]);
        assert_close(&out[0], &[4], &[0.0, 1.0, p.sin(), -1.0]);
        assert_close(&out[1], &[4], &[1.0, h.cos(), -1.0, h.cos()]);
    }
}
