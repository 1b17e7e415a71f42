//! ONNX's elementwise operators as L0's: activations and functions (`Relu` ... `Clip`,
//! `HardSigmoid` and `Reciprocal` written with L0 arithmetic), arithmetic (`Add` ... `Pow`, and
//! `Max`/`Min`/`Sum` of any number of inputs), comparisons, `Where`, `Cast`, `QuantizeLinear`
//! and `DequantizeLinear`, and the exporter's `ekb` functions of the family.
//!
//! What it keeps true (besides the parent module's rules):
//! - integer arithmetic, comparisons and `Where` on constants are folded (shape arithmetic), and
//!   a `Cast` of a constant is folded as L0's `cast` computes it; integer results are ONNX's in
//!   the operands' type (wrapped around), and no fold's result exceeds the size limit;
//! - ONNX booleans are i32 1 or 0: a comparison is named after the `Cast` to INT32 that follows
//!   it, and a `Cast` to BOOL is read only as the condition of `Where`;
//! - quantization is per tensor and int8: a constant scalar scale and zero point.

use super::{short, unsupported_reason, Attrs, Importer, OpTable, Res, Val};
use crate::consts::{numel_within_limit, wrap, Const, Data};
use crate::export::EKB_DOMAIN;
use crate::proto::{dtype, NodeProto, ValueInfoProto};
use ekb_ir::l0::ast::{BinaryOp, CompareOp, Op, UnaryOp};
use ekb_ir::l0::ops::broadcast;
use ekb_ir::types::{DType, TensorType};
use std::rc::Rc;

/// The ONNX operators read here.
pub(super) const OPS: OpTable = &[
    ("Relu", &[]),
    ("Sigmoid", &[]),
    ("Tanh", &[]),
    ("Exp", &[]),
    ("Log", &[]),
    ("Sqrt", &[]),
    ("Abs", &[]),
    ("Neg", &[]),
    ("Sin", &[]),
    ("Cos", &[]),
    ("HardSwish", &[]),
    ("Softplus", &[]),
    ("LeakyRelu", &["alpha"]),
    ("Elu", &["alpha"]),
    ("Gelu", &["approximate"]),
    ("HardSigmoid", &["alpha", "beta"]),
    ("Reciprocal", &[]),
    ("Clip", &[]),
    ("Add", &[]),
    ("Sub", &[]),
    ("Mul", &[]),
    ("Div", &[]),
    ("Pow", &[]),
    ("Max", &[]),
    ("Min", &[]),
    ("Sum", &[]),
    ("Less", &[]),
    ("LessOrEqual", &[]),
    ("Greater", &[]),
    ("GreaterOrEqual", &[]),
    ("Equal", &[]),
    ("Where", &[]),
    ("Cast", &["to", "saturate"]),
    ("QuantizeLinear", &["axis", "saturate"]),
    ("DequantizeLinear", &["axis"]),
];

/// The exporter's `ekb`-domain functions read here.
pub(super) const EKB_OPS: OpTable = &[
    ("relu6", &[]),
    ("gelu", &[]),
    ("gelu_tanh", &[]),
    ("silu", &[]),
    ("rsqrt", &[]),
    ("softplus", &["beta", "threshold"]),
    ("iota", &["shape", "axis", "to"]),
];

impl Importer<'_> {
    /// The L0 form of an elementwise node.
    pub(super) fn convert_elementwise(
        &mut self,
        n: &NodeProto,
        ins: &[Val],
        graph_outputs: &[ValueInfoProto],
    ) -> Res {
        let out = n.output.first().cloned().unwrap_or_default();
        let a = Attrs(n);
        let ekb = n.domain == EKB_DOMAIN;
        let x = ins.first().cloned().unwrap_or(Val::Bad);
        let one = |v: Val| Ok(vec![v]);
        let unary = |s: &mut Self, op: UnaryOp| -> Res { one(s.unary_val(&x, op, &out)?) };
        match (ekb, n.op_type.as_str()) {
            (false, "Relu") => unary(self, UnaryOp::Relu),
            (false, "Sigmoid") => unary(self, UnaryOp::Sigmoid),
            (false, "Tanh") => unary(self, UnaryOp::Tanh),
            (false, "Exp") => unary(self, UnaryOp::Exp),
            (false, "Log") => unary(self, UnaryOp::Log),
            (false, "Sqrt") => unary(self, UnaryOp::Sqrt),
            (false, "Abs") => unary(self, UnaryOp::Abs),
            (false, "Neg") => unary(self, UnaryOp::Neg),
            (false, "Sin") => unary(self, UnaryOp::Sin),
            (false, "Cos") => unary(self, UnaryOp::Cos),
            (false, "Less" | "LessOrEqual" | "Greater" | "GreaterOrEqual" | "Equal") => {
                let op = match n.op_type.as_str() {
                    "Less" => CompareOp::Less,
                    "LessOrEqual" => CompareOp::LessEqual,
                    "Greater" => CompareOp::Greater,
                    "GreaterOrEqual" => CompareOp::GreaterEqual,
                    _ => CompareOp::Equal,
                };
                let name = self.named_by_cast(&out);
                one(self.compare(op, &ins[0], &ins[1], &name)?)
            }
            (false, "Where") => one(self.where_(&ins[0], &ins[1], &ins[2], &out)?),
            (false, "HardSwish") => unary(self, UnaryOp::HardSwish),
            (false, "Softplus") => unary(self, UnaryOp::Softplus { beta: 1.0, threshold: 20.0 }),
            (false, "LeakyRelu") => {
                let alpha = a.float("alpha", 0.01)?;
                unary(self, UnaryOp::LeakyRelu { alpha })
            }
            (false, "Elu") => {
                let alpha = a.float("alpha", 1.0)?;
                unary(self, UnaryOp::Elu { alpha })
            }
            (false, "Gelu") => {
                let tanh = match a.string("approximate", "none")?.as_str() {
                    "none" => false,
                    "tanh" => true,
                    other => return Err(format!("attribute `approximate`=\"{other}\" is not supported")),
                };
                unary(self, UnaryOp::Gelu { tanh })
            }
            (false, "HardSigmoid") => {
                let (alpha, beta) = (a.float("alpha", 0.2)?, a.float("beta", 0.5)?);
                if (alpha - 1.0 / 6.0).abs() < 1e-7 && beta == 0.5 {
                    return one(self.unary_val(&x, UnaryOp::HardSigmoid, &out)?);
                }
                // max(0, min(1, alpha * x + beta))
                let (xn, _) = self.tensor(&x, None)?;
                let al = self.scalar(alpha, DType::F32, &format!("{out}_alpha"))?;
                let be = self.scalar(beta, DType::F32, &format!("{out}_beta"))?;
                let Val::T { name: m, .. } =
                    self.emit(&format!("{out}_scaled"), Op::Binary(BinaryOp::Mul), vec![xn, al])?
                else {
                    unreachable!()
                };
                let Val::T { name: s, .. } =
                    self.emit(&format!("{out}_shifted"), Op::Binary(BinaryOp::Add), vec![m, be])?
                else {
                    unreachable!()
                };
                one(self.emit(&out, Op::Unary(UnaryOp::Clip { min: 0.0, max: 1.0 }), vec![s])?)
            }
            (false, "Reciprocal") => {
                let (xn, ty) = self.tensor(&x, None)?;
                let one_ = self.scalar(1.0, ty.dtype, &format!("{out}_one"))?;
                one(self.emit(&out, Op::Binary(BinaryOp::Div), vec![one_, xn])?)
            }
            (false, "Clip") => {
                let bound = |i: usize, what: &str, dflt: f64| -> Result<f64, String> {
                    match ins.get(i) {
                        None => Ok(dflt),
                        Some(_) if n.input[i].is_empty() => Ok(dflt),
                        Some(Val::C { c, .. }) => {
                            c.scalar().map(short).ok_or_else(|| format!("`{what}` must be a scalar"))
                        }
                        Some(_) => Err(format!("`{what}` must be a constant")),
                    }
                };
                let (min, max) = (bound(1, "min", f64::NEG_INFINITY)?, bound(2, "max", f64::INFINITY)?);
                for (what, v) in [("min", min), ("max", max)] {
                    if v.is_nan() {
                        return Err(format!("`{what}` is NaN; a bound must be a number (absent: unbounded)"));
                    }
                }
                if min > max {
                    return Err(format!(
                        "`min` ({min}) is greater than `max` ({max}); L0's clip needs min <= max (with these bounds every element would be {max})"
                    ));
                }
                one(self.unary_val(&x, UnaryOp::Clip { min, max }, &out)?)
            }
            (false, "Add" | "Sub" | "Mul" | "Div" | "Pow") => {
                let op = match n.op_type.as_str() {
                    "Add" => BinaryOp::Add,
                    "Sub" => BinaryOp::Sub,
                    "Mul" => BinaryOp::Mul,
                    "Div" => BinaryOp::Div,
                    _ => BinaryOp::Pow,
                };
                one(self.binary(op, &ins[0], &ins[1], &out)?)
            }
            (false, "Max" | "Min" | "Sum") => {
                let op = match n.op_type.as_str() {
                    "Max" => BinaryOp::Max,
                    "Min" => BinaryOp::Min,
                    _ => BinaryOp::Add,
                };
                let mut acc = ins[0].clone();
                for (k, v) in ins.iter().enumerate().skip(1) {
                    let hint = if k + 1 == ins.len() { out.clone() } else { format!("{out}_{k}") };
                    acc = self.binary(op, &acc, v, &hint)?;
                }
                one(acc)
            }
            (false, "Cast") => {
                let to = a.int("to", 0)? as i32;
                if to == dtype::BOOL {
                    return self.cast_to_bool(&x, &out, graph_outputs).map(|v| vec![v]);
                }
                let dt = match to {
                    dtype::FLOAT => DType::F32,
                    dtype::INT32 | dtype::INT64 => DType::I32,
                    dtype::INT8 => DType::I8,
                    dtype::FLOAT16 => DType::F16,
                    other => {
                        return Err(format!(
                            "a cast to {} is not supported (L0 has f32, i32, i8 and f16)",
                            dtype::name(other)
                        ))
                    }
                };
                match &x {
                    Val::C { c, .. } => {
                        // Folded as L0's `cast` computes it: floats truncate (saturating to i8),
                        // integers narrowed keep their low bits (INT32, INT8), as ONNX's do.
                        let data = match (dt, &c.data) {
                            (DType::F32, _) => Data::F32(c.as_f64().iter().map(|&v| v as f32).collect()),
                            (DType::I32 | DType::I8, Data::Int(v)) => {
                                Data::Int(v.iter().map(|&v| wrap(v, to)).collect())
                            }
                            (DType::I32, Data::F32(v)) => {
                                Data::Int(v.iter().map(|&v| v.trunc() as i64).collect())
                            }
                            (DType::I8, Data::F32(v)) => {
                                Data::Int(v.iter().map(|&v| i64::from(v as i8)).collect())
                            }
                            (DType::F16, _) => Data::F32(
                                c.as_f64()
                                    .iter()
                                    .map(|&v| ekb_wire::f16::to_f32(ekb_wire::f16::from_f32(v as f32)))
                                    .collect(),
                            ),
                        };
                        one(Val::C {
                            c: Rc::new(Const { onnx_type: to, dims: c.dims.clone(), data }),
                            onnx: out.clone(),
                            init: false,
                        })
                    }
                    Val::T { ty, .. } if ty.dtype == dt => one(x.clone()),
                    _ => {
                        let (xn, _) = self.tensor(&x, None)?;
                        one(self.emit(&out, Op::Cast { dtype: dt }, vec![xn])?)
                    }
                }
            }
            (false, "QuantizeLinear" | "DequantizeLinear") => one(self.quantize(n, ins, &out)?),
            (true, "relu6") => unary(self, UnaryOp::Relu6),
            (true, "iota") => {
                let shape = a
                    .ints("shape", &[])?
                    .iter()
                    .map(|&d| usize::try_from(d).map_err(|_| format!("`shape` entry {d} is negative")))
                    .collect::<Result<Vec<_>, _>>()?;
                let dt = match a.int("to", i64::from(dtype::INT32))? as i32 {
                    dtype::FLOAT => DType::F32,
                    dtype::INT32 => DType::I32,
                    other => return Err(format!("`to` = {} is not f32 or i32", dtype::name(other))),
                };
                let op = Op::Iota { ty: TensorType::new(dt, shape), axis: a.int("axis", 0)? };
                one(self.emit(&out, op, vec![])?)
            }
            (true, "gelu") => unary(self, UnaryOp::Gelu { tanh: false }),
            (true, "gelu_tanh") => unary(self, UnaryOp::Gelu { tanh: true }),
            (true, "silu") => unary(self, UnaryOp::Silu),
            (true, "rsqrt") => unary(self, UnaryOp::Rsqrt),
            (true, "softplus") => {
                let (beta, threshold) = (a.float("beta", 1.0)?, a.float("threshold", 20.0)?);
                unary(self, UnaryOp::Softplus { beta, threshold })
            }
            _ => Err(unsupported_reason(n)),
        }
    }

    /// `QuantizeLinear` / `DequantizeLinear`, per tensor: a constant scalar f32 scale and an
    /// optional constant scalar int8 zero point (QuantizeLinear needs it: without one, or with
    /// a uint8 one, its result is uint8, which L0 does not have).
    fn quantize(&mut self, n: &NodeProto, ins: &[Val], out: &str) -> Result<Val, String> {
        let quantize = n.op_type == "QuantizeLinear";
        let scale_name = if quantize { "y_scale" } else { "x_scale" };
        let scale = match ins.get(1) {
            Some(Val::C { c, .. }) if matches!(c.data, Data::F32(_)) => c.scalar().ok_or_else(|| {
                format!(
                    "`{scale_name}` has {} values; only per-tensor (scalar) scales are supported",
                    c.numel()
                )
            })?,
            _ => return Err(format!("`{scale_name}` must be a constant f32 scalar")),
        };
        if !(scale as f32).is_normal() || scale < 0.0 {
            return Err(format!(
                "`{scale_name}` is {scale}; the scale must be a positive normal f32 ({:e} to {:e}): {} divides by it",
                f32::MIN_POSITIVE,
                f32::MAX,
                if quantize { "quantization" } else { "the matching quantization" }
            ));
        }
        let zero_point = match ins.get(2) {
            Some(Val::C { c, .. }) if c.onnx_type == dtype::INT8 => c.scalar().ok_or_else(|| {
                format!(
                    "`zero_point` has {} values; only per-tensor (scalar) zero points are supported",
                    c.numel()
                )
            })? as i64,
            Some(Val::C { c, .. }) => {
                return Err(format!(
                    "`zero_point` is {}; only int8 quantization is supported (L0 has i8, not uint8)",
                    dtype::name(c.onnx_type)
                ))
            }
            Some(Val::Bad) | None if !quantize => 0,
            Some(Val::Bad) | None => {
                return Err(
                    "without `zero_point` the result is uint8; only int8 quantization is supported".into()
                )
            }
            Some(Val::T { .. }) => return Err("`zero_point` must be a constant".into()),
        };
        let scale = short(scale);
        let (xn, _) = self.tensor(&ins[0], Some(if quantize { DType::F32 } else { DType::I8 }))?;
        let op = if quantize {
            Op::QuantizeLinear { scale, zero_point }
        } else {
            Op::DequantizeLinear { scale, zero_point }
        };
        self.emit(out, op, vec![xn])
    }

    /// A comparison: folded on constants, else an L0 comparison (i32 1 or 0).
    fn compare(&mut self, op: CompareOp, l: &Val, r: &Val, out: &str) -> Result<Val, String> {
        if let (Val::C { c: a, .. }, Val::C { c: b, .. }) = (l, r) {
            let (x, y) = (a.as_f64(), b.as_f64());
            let (dims, v) = fold_broadcast(&[a, b], |i| {
                let (p, q) = (x[i[0]], y[i[1]]);
                let holds = match op {
                    CompareOp::Less => p < q,
                    CompareOp::LessEqual => p <= q,
                    CompareOp::Greater => p > q,
                    CompareOp::GreaterEqual => p >= q,
                    CompareOp::Equal => p == q,
                };
                Ok(i64::from(holds))
            })?;
            let c = Const { onnx_type: dtype::BOOL, dims, data: Data::Int(v) };
            return Ok(Val::C { c: Rc::new(c), onnx: out.to_string(), init: false });
        }
        let dt = match (l, r) {
            (Val::T { ty, .. }, _) | (_, Val::T { ty, .. }) => Some(ty.dtype),
            _ => None,
        };
        let (a, at) = self.tensor(l, dt)?;
        let (b, bt) = self.tensor(r, dt)?;
        if at.dtype != bt.dtype {
            return Err(format!("operands of dtype {} and {} (L0 needs one dtype)", at.dtype, bt.dtype));
        }
        self.emit(out, Op::Compare(op), vec![a, b])
    }

    /// `Where`: folded when every input is a constant, else an L0 `where` (the condition an i32
    /// that is nonzero where the ONNX boolean is true).
    fn where_(&mut self, cond: &Val, l: &Val, r: &Val, out: &str) -> Result<Val, String> {
        if let (Val::C { c, .. }, Val::C { c: a, .. }, Val::C { c: b, .. }) = (cond, l, r) {
            let (m, x, y) = (c.as_f64(), a.as_f64(), b.as_f64());
            let (dims, v) =
                fold_broadcast(&[c, a, b], |i| Ok(if m[i[0]] != 0.0 { x[i[1]] } else { y[i[2]] }))?;
            let (onnx_type, data) = match (&a.data, &b.data) {
                (Data::Int(_), Data::Int(_)) => {
                    (a.onnx_type, Data::Int(v.iter().map(|&e| e as i64).collect()))
                }
                _ => (dtype::FLOAT, Data::F32(v.iter().map(|&e| e as f32).collect())),
            };
            let c = Const { onnx_type, dims, data };
            return Ok(Val::C { c: Rc::new(c), onnx: out.to_string(), init: false });
        }
        let (c, _) = self.tensor(cond, Some(DType::I32))?;
        let dt = match (l, r) {
            (Val::T { ty, .. }, _) | (_, Val::T { ty, .. }) => Some(ty.dtype),
            _ => None,
        };
        let (a, at) = self.tensor(l, dt)?;
        let (b, bt) = self.tensor(r, dt)?;
        if at.dtype != bt.dtype {
            return Err(format!(
                "`X` and `Y` have dtypes {} and {} (L0 needs one dtype)",
                at.dtype, bt.dtype
            ));
        }
        self.emit(out, Op::Where, vec![c, a, b])
    }

    /// A `Cast` to BOOL: L0 has no booleans, so it is read only where every use of the result
    /// is the condition of a `Where`, which treats any nonzero i32 as true: the i32 value passes
    /// through unchanged (a constant becomes 1 or 0).
    fn cast_to_bool(&mut self, x: &Val, out: &str, graph_outputs: &[ValueInfoProto]) -> Result<Val, String> {
        let uses = self.consumers.get(out).map(|c| c.as_slice()).unwrap_or(&[]);
        let all_conditions = !uses.is_empty()
            && uses.iter().all(|&u| {
                let n = &self.nodes_in[u];
                n.op_type == "Where"
                    && n.input.iter().position(|i| i == out) == Some(0)
                    && n.input.iter().filter(|i| *i == out).count() == 1
            });
        if !all_conditions || graph_outputs.iter().any(|g| g.name == out) {
            return Err(
                "a cast to BOOL is supported only as the condition of `Where` (L0 has no booleans: comparisons give i32 1 or 0)"
                    .into(),
            );
        }
        match x {
            Val::C { c, .. } => {
                let v = c.as_f64().iter().map(|&v| i64::from(v != 0.0)).collect();
                let c = Const { onnx_type: dtype::BOOL, dims: c.dims.clone(), data: Data::Int(v) };
                Ok(Val::C { c: Rc::new(c), onnx: out.to_string(), init: false })
            }
            Val::T { ty, .. } if ty.dtype == DType::I32 => Ok(x.clone()),
            Val::T { ty, .. } => Err(format!(
                "a cast of a {} tensor to BOOL is not supported (compare it with `Equal` or `Greater` instead)",
                ty.dtype
            )),
            Val::Bad => Ok(Val::Bad),
        }
    }

    /// An elementwise binary node; integer constants on both sides are folded.
    fn binary(&mut self, op: BinaryOp, l: &Val, r: &Val, out: &str) -> Result<Val, String> {
        if let (Val::C { c: a, .. }, Val::C { c: b, .. }) = (l, r) {
            if let (Data::Int(_), Data::Int(_)) = (&a.data, &b.data) {
                if op != BinaryOp::Pow {
                    return fold_int(op, a, b).map(|c| Val::C {
                        c: Rc::new(c),
                        onnx: out.to_string(),
                        init: false,
                    });
                }
            }
        }
        let dt = match (l, r) {
            (Val::T { ty, .. }, _) | (_, Val::T { ty, .. }) => Some(ty.dtype),
            _ => None,
        };
        let (a, at) = self.tensor(l, dt)?;
        let (b, bt) = self.tensor(r, dt)?;
        if at.dtype != bt.dtype {
            return Err(format!("operands of dtype {} and {} (L0 needs one dtype)", at.dtype, bt.dtype));
        }
        self.emit(out, Op::Binary(op), vec![a, b])
    }
}

/// Integer arithmetic on constants of one ONNX integer type, with numpy broadcasting; the result
/// is of that type, wrapped around as ONNX computes it (integer division truncates).
fn fold_int(op: BinaryOp, a: &Const, b: &Const) -> Result<Const, String> {
    if a.onnx_type != b.onnx_type {
        return Err(format!(
            "the operands are {} and {}; ONNX's arithmetic takes two operands of one type",
            dtype::name(a.onnx_type),
            dtype::name(b.onnx_type)
        ));
    }
    let ty = a.onnx_type;
    let (Data::Int(x), Data::Int(y)) = (&a.data, &b.data) else { unreachable!("integer constants") };
    let (dims, out) = fold_broadcast(&[a, b], |i| {
        let (p, q) = (x[i[0]], y[i[1]]);
        let v = match op {
            BinaryOp::Add => p.wrapping_add(q),
            BinaryOp::Sub => p.wrapping_sub(q),
            BinaryOp::Mul => p.wrapping_mul(q),
            BinaryOp::Div if q == 0 => return Err("division by zero in constant arithmetic".into()),
            BinaryOp::Div => p.wrapping_div(q),
            BinaryOp::Max => p.max(q),
            BinaryOp::Min => p.min(q),
            BinaryOp::Pow => unreachable!("pow is not folded"),
        };
        Ok(wrap(v, ty))
    })?;
    Ok(Const { onnx_type: ty, dims, data: Data::Int(out) })
}

/// An elementwise function of constants under numpy broadcasting: the result's dims and values;
/// `f` gets, for one result element, the flat index into each constant. The result's size is
/// checked against the limit of any constant before anything is allocated.
fn fold_broadcast<T>(
    cs: &[&Const],
    f: impl Fn(&[usize]) -> Result<T, String>,
) -> Result<(Vec<usize>, Vec<T>), String> {
    let dims = cs.iter().try_fold(Vec::new(), |acc, c| broadcast(&acc, &c.dims))?;
    let n = numel_within_limit(&dims)?;
    let mut out = Vec::with_capacity(n);
    let mut at = vec![0; cs.len()];
    for i in 0..n {
        let idx = ekb_ir::tensor::unravel(i, &dims);
        for (k, c) in cs.iter().enumerate() {
            let off = dims.len() - c.dims.len();
            at[k] = c
                .dims
                .iter()
                .enumerate()
                .fold(0, |flat, (j, &d)| flat * d + if d == 1 { 0 } else { idx[off + j] });
        }
        out.push(f(&at)?);
    }
    Ok((dims, out))
}
