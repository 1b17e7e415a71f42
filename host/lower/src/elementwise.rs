//! Elementwise operators: unary activations, binary arithmetic and comparisons with numpy
//! broadcasting, `where`, `cast`, `full`, `iota`, and the i8 conversions `quantize_linear` and
//! `dequantize_linear`.
//!
//! i8 elements load as i32 and are stored from i32 keeping the low 8 bits (L1's rule), so every
//! narrowing that L0 defines as saturating (`cast` from f32, `quantize_linear`) clamps explicitly
//! with `min`/`max` before the store; a narrowing that wraps (`cast` from i32) is the plain store.
//!
//! Each output element is computed from the formula of the L0 spec, written once here and
//! shared by both schedules (they differ only in the loop layout, see `sched::elementwise`).
//! Broadcasting maps an output index to an input index by aligning trailing dims; an input
//! dim of extent 1 is indexed at 0.

use crate::sched::{elementwise, Cx};
use ekb_ir::l0::{BinaryOp, CompareOp, UnaryOp};
use ekb_ir::l1::build::{f, int, ints, let_, select, var, Buf, E};
use ekb_ir::l1::Stmt;
use ekb_ir::DType;

/// `y = op(x)` elementwise.
pub fn unary(cx: &mut Cx, op: UnaryOp, x: &Buf, y: &Buf) -> Vec<Stmt> {
    elementwise(cx, y.shape(), unary_cost(op), |cx, idx| {
        let v = cx.fresh("v");
        vec![let_(&v, x.load(idx)), y.store(idx, unary_expr(op, var(&v), y.ty.dtype))]
    })
}

/// Rough scalar operations per element, for the threading threshold: transcendental
/// functions cost about ten simple ones.
fn unary_cost(op: UnaryOp) -> usize {
    match op {
        UnaryOp::Relu | UnaryOp::Relu6 | UnaryOp::Abs | UnaryOp::Neg | UnaryOp::Clip { .. } => 1,
        UnaryOp::LeakyRelu { .. } | UnaryOp::HardSwish | UnaryOp::HardSigmoid => 2,
        _ => 10,
    }
}

/// The formula of a unary operator applied to `v` (a variable), as in the L0 spec.
fn unary_expr(op: UnaryOp, v: E, dtype: DType) -> E {
    let float = dtype == DType::F32;
    match op {
        UnaryOp::Relu if float => v.max(f(0.0)),
        UnaryOp::Relu => v.max(int(0)),
        UnaryOp::Relu6 => v.max(f(0.0)).min(f(6.0)),
        UnaryOp::LeakyRelu { alpha } => select(v.clone().ge(f(0.0)), v.clone(), f(alpha) * v),
        UnaryOp::Gelu { tanh: false } => {
            f(0.5) * v.clone() * (f(1.0) + (v / f(std::f64::consts::SQRT_2)).erf())
        }
        UnaryOp::Gelu { tanh: true } => {
            let inner = v.clone() + f(0.044715) * v.clone() * v.clone() * v.clone();
            let k = (2.0 / std::f64::consts::PI).sqrt();
            f(0.5) * v * (f(1.0) + (f(k) * inner).tanh())
        }
        UnaryOp::Silu => v.clone() * sigmoid(v),
        UnaryOp::Sigmoid => sigmoid(v),
        UnaryOp::Tanh => v.tanh(),
        UnaryOp::HardSwish => v.clone() * relu6(v + f(3.0)) / f(6.0),
        UnaryOp::HardSigmoid => relu6(v + f(3.0)) / f(6.0),
        UnaryOp::Softplus { beta, threshold } => {
            let bx = f(beta) * v.clone();
            select(bx.clone().gt(f(threshold)), v, (f(1.0) + bx.exp()).log() / f(beta))
        }
        UnaryOp::Elu { alpha } => select(v.clone().gt(f(0.0)), v.clone(), f(alpha) * (v.exp() - f(1.0))),
        UnaryOp::Exp => v.exp(),
        UnaryOp::Log => v.log(),
        UnaryOp::Sqrt => v.sqrt(),
        UnaryOp::Rsqrt => v.rsqrt(),
        UnaryOp::Abs => v.abs(),
        UnaryOp::Neg => -v,
        UnaryOp::Sin => v.sin(),
        UnaryOp::Cos => v.cos(),
        UnaryOp::Clip { min, max } if float => {
            let lo = if min == f64::NEG_INFINITY { v } else { v.max(f(min)) };
            if max == f64::INFINITY {
                lo
            } else {
                lo.min(f(max))
            }
        }
        UnaryOp::Clip { min, max } => {
            // Integer bounds: the smallest integer >= min and the largest <= max; a bound
            // beyond the i32 range cannot bind.
            let lo_b = min.ceil();
            let hi_b = max.floor();
            let mut e = v;
            if lo_b > f64::from(i32::MIN) {
                e = e.max(ints(lo_b as i64));
            }
            if hi_b < f64::from(i32::MAX) {
                e = e.min(ints(hi_b as i64));
            }
            e
        }
    }
}

fn sigmoid(v: E) -> E {
    f(1.0) / (f(1.0) + (-v).exp())
}

fn relu6(v: E) -> E {
    v.max(f(0.0)).min(f(6.0))
}

/// `y = a op b` with numpy broadcasting.
pub fn binary(cx: &mut Cx, op: BinaryOp, a: &Buf, b: &Buf, y: &Buf) -> Vec<Stmt> {
    let cost = if op == BinaryOp::Pow { 10 } else { 1 };
    elementwise(cx, y.shape(), cost, |_, idx| {
        let l = a.load(&broadcast_index(idx, a.shape()));
        let r = b.load(&broadcast_index(idx, b.shape()));
        let value = match op {
            BinaryOp::Add => l + r,
            BinaryOp::Sub => l - r,
            BinaryOp::Mul => l * r,
            BinaryOp::Div => l / r,
            BinaryOp::Max => l.max(r),
            BinaryOp::Min => l.min(r),
            BinaryOp::Pow => l.pow(r),
        };
        vec![y.store(idx, value)]
    })
}

/// `y = i32(a OP b)` with numpy broadcasting: 1 where the comparison holds, else 0.
pub fn compare(cx: &mut Cx, op: CompareOp, a: &Buf, b: &Buf, y: &Buf) -> Vec<Stmt> {
    elementwise(cx, y.shape(), 1, |_, idx| {
        let l = a.load(&broadcast_index(idx, a.shape()));
        let r = b.load(&broadcast_index(idx, b.shape()));
        let holds = match op {
            CompareOp::Less => l.lt(r),
            CompareOp::LessEqual => l.le(r),
            CompareOp::Greater => l.gt(r),
            CompareOp::GreaterEqual => l.ge(r),
            CompareOp::Equal => l.eq(r),
        };
        vec![y.store(idx, holds.cast_i32())]
    })
}

/// `y = where(cond, a, b)`: three-way broadcasting; both arms are in-bounds loads, so `select`
/// (which evaluates both) is safe.
pub fn where_(cx: &mut Cx, cond: &Buf, a: &Buf, b: &Buf, y: &Buf) -> Vec<Stmt> {
    elementwise(cx, y.shape(), 1, |_, idx| {
        let c = cond.load(&broadcast_index(idx, cond.shape())).ne(int(0));
        let l = a.load(&broadcast_index(idx, a.shape()));
        let r = b.load(&broadcast_index(idx, b.shape()));
        vec![y.store(idx, select(c, l, r))]
    })
}

/// The index into an operand of shape `shape` broadcast to an output indexed by `idx`:
/// trailing dims aligned, extent-1 dims indexed at 0.
pub fn broadcast_index(idx: &[E], shape: &[usize]) -> Vec<E> {
    let off = idx.len() - shape.len();
    shape.iter().enumerate().map(|(d, &n)| if n == 1 { int(0) } else { idx[off + d].clone() }).collect()
}

/// `y = cast(x)`: float to int truncates toward zero (saturating, NaN to 0), as L1's `i32(e)`;
/// to i8 from a float that is clamped to `[-128, 127]`; i32 to i8 keeps the low 8 bits (the
/// store). An f16 element loads as its f32 value, and a store into f16 rounds the f32 to nearest
/// even, so f16 casts are those of f32 (an i32 goes through f32, exact up to 2^24, beyond which
/// both roundings give infinity).
pub fn cast(cx: &mut Cx, x: &Buf, y: &Buf) -> Vec<Stmt> {
    elementwise(cx, y.shape(), 1, |_, idx| {
        let v = x.load(idx);
        let value = match (x.ty.dtype, y.ty.dtype) {
            (DType::F32 | DType::F16, DType::I32) => v.cast_i32(),
            (DType::F32 | DType::F16, DType::I8) => v.cast_i32().max(ints(-128)).min(ints(127)),
            (DType::I32 | DType::I8, DType::F32 | DType::F16) => v.cast_f32(),
            _ => v,
        };
        vec![y.store(idx, value)]
    })
}

/// `y = quantize_linear(x)`: `v = round(x / S) + Z` in f32, then
/// `i32(select(v >= -128.0, min(v, 127.0), -128.0))`, the saturation written out. NaN fails the
/// comparison and gives -128, as L0 says; `max(v, -128.0)` would pass it on (L1's `max`
/// propagates NaN) and `i32(nan)` is 0.
pub fn quantize(cx: &mut Cx, scale: f64, zero_point: i64, x: &Buf, y: &Buf) -> Vec<Stmt> {
    elementwise(cx, y.shape(), 4, |cx, idx| {
        let v = cx.fresh("v");
        let mut e = (x.load(idx) / f(scale)).round();
        if zero_point != 0 {
            e = e + f(zero_point as f64);
        }
        let saturated = select(var(&v).ge(f(-128.0)), var(&v).min(f(127.0)), f(-128.0));
        vec![let_(&v, e), y.store(idx, saturated.cast_i32())]
    })
}

/// `y = dequantize_linear(q)`: `f32(q - Z) * S` (the difference is exact in i32).
pub fn dequantize(cx: &mut Cx, scale: f64, zero_point: i64, q: &Buf, y: &Buf) -> Vec<Stmt> {
    elementwise(cx, y.shape(), 2, |_, idx| {
        let mut v = q.load(idx);
        if zero_point != 0 {
            v = v - ints(zero_point);
        }
        vec![y.store(idx, v.cast_f32() * f(scale))]
    })
}

/// `y = full(value)`.
pub fn full(cx: &mut Cx, value: f64, y: &Buf) -> Vec<Stmt> {
    let v = match y.ty.dtype {
        // An f16 store rounds the f32 literal, as the interpreter rounds the value.
        DType::F32 | DType::F16 => f(value),
        // The checker admits only integral values in range for i32 and i8; `as` saturates
        // anything else.
        DType::I32 => ints(i64::from(value as i32)),
        DType::I8 => ints(i64::from(value as i8)),
    };
    elementwise(cx, y.shape(), 1, |_, idx| vec![y.store(idx, v.clone())])
}

/// `y = iota(axis)`: every element holds its index along `axis` (an extent-1 axis gives 0).
pub fn iota(cx: &mut Cx, axis: usize, y: &Buf) -> Vec<Stmt> {
    elementwise(cx, y.shape(), 1, |_, idx| {
        let k = idx[axis].clone();
        let value = if y.ty.dtype == DType::F32 { k.cast_f32() } else { k };
        vec![y.store(idx, value)]
    })
}

#[cfg(test)]
mod tests {
    use crate::testing::lowered_matches_reference;
    use crate::Schedule;
    use ekb_ir::l1::print::print;

    #[test]
    fn i8_conversions_clamp_explicitly_and_match_the_reference() {
        // Inputs twice the i8 range (uniform(-1, 1) over a scale of 1/256) saturate at both ends.
        let g = "graph g(x: f32[3,40], k: i32[3,40] = randint(-300, 300)) -> (q: i8[3,40], d: f32[3,40], c: i8[3,40], w: i8[3,40]) {
  %q = quantize_linear(x, scale=0.00390625, zero_point=-3)
  %d = dequantize_linear(%q, scale=0.00390625, zero_point=-3)
  %c = cast(x, dtype=i8)
  %w = cast(k, dtype=i8)
  return %q, %d, %c, %w
}
";
        for schedule in Schedule::ALL {
            let text = print(&lowered_matches_reference(g, schedule, "host"));
            assert!(
                text.contains("let v = round(x[i0, i1] / 0.00390625) + -3.0\n")
                    && text.contains("i32(select(v >= -128.0, min(v, 127.0), -128.0))"),
                "{schedule}:\n{text}"
            );
            assert!(text.contains("f32(q[i0, i1] + 3) * 0.00390625"), "{schedule}:\n{text}");
            // i32 to i8 is the plain store, which keeps the low byte.
            assert!(text.contains("w[i0, i1] = k[i0, i1]\n"), "{schedule}:\n{text}");
            assert!(text.contains("min(max(i32(x[i0, i1]), -128), 127)"), "{schedule}:\n{text}");
        }
    }
}
