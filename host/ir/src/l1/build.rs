//! A small typed builder for L1 code: expressions with overloaded operators, statement
//! constructors, and the operand buffers a kernel reads and writes.
//!
//! Lowering code reads like the loop nest it emits: `y.store(&[i, j], x.load(&[i, j]).max(f(0.0)))`.
//! Integer arithmetic on literals is folded (`i * 1` is `i`, `2 + 3` is `5`) so generated index
//! expressions stay short and the verifier's interval analysis sees constants where it can;
//! float arithmetic is never folded, so the emitted formulas are exactly the written ones.
//! Everything built here carries `Span::NONE` (generated IR has no source text).

use super::ast::{BinOp, Expr, ExprKind, Intrinsic, LoopKind, Name, Scope, Stmt, Ty, UnOp};
use crate::diag::Span;
use crate::types::TensorType;
use std::collections::HashSet;
use std::ops::{Add, Div, Mul, Neg, Not, Rem, Sub};

/// An L1 expression under construction.
#[derive(Debug, Clone, PartialEq)]
pub struct E(pub Expr);

/// An `i32` literal. Lowering only builds indices of tensors whose sizes were checked to fit
/// `i32`, so the conversion cannot fail for them.
pub fn int(v: usize) -> E {
    lit(i32::try_from(v).expect("index sizes are checked to fit i32 before lowering"))
}

/// An `i32` literal from a signed value (offsets such as `-pad`).
pub fn ints(v: i64) -> E {
    lit(i32::try_from(v).expect("offsets are checked to fit i32 before lowering"))
}

fn lit(v: i32) -> E {
    E(Expr::new(ExprKind::Int(v)))
}

/// An `f32` literal (rounded from the attribute's f64, as a device would hold it).
pub fn f(v: f64) -> E {
    E(Expr::new(ExprKind::Float(v as f32)))
}

/// The zero of an accumulator of `dtype`: `0.0` for f32, `0` for the integer dtypes.
pub fn zero(dtype: crate::types::DType) -> E {
    if dtype.is_float() {
        f(0.0)
    } else {
        lit(0)
    }
}

/// A loop variable or `let` binding.
pub fn var(name: &str) -> E {
    E(Expr::new(ExprKind::Var(name.to_string())))
}

/// `e != e`: true exactly when the float `e` is NaN.
pub fn isnan(e: E) -> E {
    E::bin(BinOp::Ne, e.clone(), e)
}

/// `select(c, a, b)`: both arms are evaluated, so neither may load out of bounds.
pub fn select(c: E, a: E, b: E) -> E {
    E(Expr::new(ExprKind::Select { cond: Box::new(c.0), then_val: Box::new(a.0), else_val: Box::new(b.0) }))
}

impl E {
    /// The literal value, if this is an `i32` literal.
    pub fn as_int(&self) -> Option<i32> {
        match self.0.kind {
            ExprKind::Int(v) => Some(v),
            _ => None,
        }
    }

    fn bin(op: BinOp, a: E, b: E) -> E {
        E(Expr::new(ExprKind::Binary { op, lhs: Box::new(a.0), rhs: Box::new(b.0) }))
    }

    fn call(func: Intrinsic, args: Vec<E>) -> E {
        E(Expr::new(ExprKind::Call { func, args: args.into_iter().map(|e| e.0).collect() }))
    }

    pub fn lt(self, o: E) -> E {
        E::bin(BinOp::Lt, self, o)
    }
    pub fn le(self, o: E) -> E {
        E::bin(BinOp::Le, self, o)
    }
    pub fn eq(self, o: E) -> E {
        E::bin(BinOp::Eq, self, o)
    }
    pub fn ne(self, o: E) -> E {
        E::bin(BinOp::Ne, self, o)
    }
    pub fn gt(self, o: E) -> E {
        E::bin(BinOp::Gt, self, o)
    }
    pub fn ge(self, o: E) -> E {
        E::bin(BinOp::Ge, self, o)
    }
    pub fn and(self, o: E) -> E {
        E::bin(BinOp::And, self, o)
    }
    pub fn or(self, o: E) -> E {
        E::bin(BinOp::Or, self, o)
    }

    /// `lo <= self && self < hi`: the bounds test the verifier uses to refine intervals.
    pub fn in_range(self, lo: E, hi: E) -> E {
        self.clone().ge(lo).and(self.lt(hi))
    }

    /// `min(self, o)`; folded when both are `i32` literals.
    pub fn min(self, o: E) -> E {
        match (self.as_int(), o.as_int()) {
            (Some(a), Some(b)) => lit(a.min(b)),
            _ => E::call(Intrinsic::Min, vec![self, o]),
        }
    }
    /// `max(self, o)`; folded when both are `i32` literals.
    pub fn max(self, o: E) -> E {
        match (self.as_int(), o.as_int()) {
            (Some(a), Some(b)) => lit(a.max(b)),
            _ => E::call(Intrinsic::Max, vec![self, o]),
        }
    }
    /// Clamps an `i32` index into `[0, n-1]`.
    pub fn clamp_index(self, n: usize) -> E {
        self.max(int(0)).min(int(n - 1))
    }
    pub fn abs(self) -> E {
        E::call(Intrinsic::Abs, vec![self])
    }
    pub fn exp(self) -> E {
        E::call(Intrinsic::Exp, vec![self])
    }
    /// `exp_ftz(self)`: `exp` whose results below 2^-125 may be flushed to `+0`.
    pub fn exp_ftz(self) -> E {
        E::call(Intrinsic::ExpFtz, vec![self])
    }
    pub fn log(self) -> E {
        E::call(Intrinsic::Log, vec![self])
    }
    pub fn sqrt(self) -> E {
        E::call(Intrinsic::Sqrt, vec![self])
    }
    pub fn rsqrt(self) -> E {
        E::call(Intrinsic::Rsqrt, vec![self])
    }
    pub fn tanh(self) -> E {
        E::call(Intrinsic::Tanh, vec![self])
    }
    pub fn erf(self) -> E {
        E::call(Intrinsic::Erf, vec![self])
    }
    pub fn sin(self) -> E {
        E::call(Intrinsic::Sin, vec![self])
    }
    pub fn cos(self) -> E {
        E::call(Intrinsic::Cos, vec![self])
    }
    /// `round(self)`: to the nearest integer, ties to even.
    pub fn round(self) -> E {
        E::call(Intrinsic::Round, vec![self])
    }
    pub fn pow(self, o: E) -> E {
        E::call(Intrinsic::Pow, vec![self, o])
    }
    pub fn cast_f32(self) -> E {
        E(Expr::new(ExprKind::Cast { to: Ty::F32, arg: Box::new(self.0) }))
    }
    pub fn cast_i32(self) -> E {
        E(Expr::new(ExprKind::Cast { to: Ty::I32, arg: Box::new(self.0) }))
    }
}

impl Add for E {
    type Output = E;
    fn add(self, o: E) -> E {
        match (self.as_int(), o.as_int()) {
            (Some(a), Some(b)) => lit(a.wrapping_add(b)),
            (Some(0), _) => o,
            (_, Some(0)) => self,
            (_, Some(b)) if b < 0 && b != i32::MIN => E::bin(BinOp::Sub, self, lit(-b)),
            _ => E::bin(BinOp::Add, self, o),
        }
    }
}

impl Sub for E {
    type Output = E;
    fn sub(self, o: E) -> E {
        match (self.as_int(), o.as_int()) {
            (Some(a), Some(b)) => lit(a.wrapping_sub(b)),
            (_, Some(0)) => self,
            (_, Some(b)) if b < 0 && b != i32::MIN => E::bin(BinOp::Add, self, lit(-b)),
            _ => E::bin(BinOp::Sub, self, o),
        }
    }
}

impl Mul for E {
    type Output = E;
    fn mul(self, o: E) -> E {
        match (self.as_int(), o.as_int()) {
            (Some(a), Some(b)) => lit(a.wrapping_mul(b)),
            (Some(0), _) | (_, Some(0)) => lit(0),
            (Some(1), _) => o,
            (_, Some(1)) => self,
            _ => E::bin(BinOp::Mul, self, o),
        }
    }
}

impl Div for E {
    type Output = E;
    fn div(self, o: E) -> E {
        match (self.as_int(), o.as_int()) {
            (Some(a), Some(b)) if b != 0 => lit(a.wrapping_div(b)),
            (_, Some(1)) => self,
            _ => E::bin(BinOp::Div, self, o),
        }
    }
}

impl Rem for E {
    type Output = E;
    fn rem(self, o: E) -> E {
        match (self.as_int(), o.as_int()) {
            (Some(a), Some(b)) if b != 0 => lit(a.wrapping_rem(b)),
            (_, Some(1)) => lit(0),
            _ => E::bin(BinOp::Rem, self, o),
        }
    }
}

impl Not for E {
    type Output = E;
    fn not(self) -> E {
        E(Expr::new(ExprKind::Unary { op: UnOp::Not, arg: Box::new(self.0) }))
    }
}

impl Neg for E {
    type Output = E;
    fn neg(self) -> E {
        E(Expr::new(ExprKind::Unary { op: UnOp::Neg, arg: Box::new(self.0) }))
    }
}

/// A buffer a kernel sees: a kernel parameter or a local allocation, with its type.
#[derive(Debug, Clone, PartialEq)]
pub struct Buf {
    pub name: String,
    pub ty: TensorType,
}

impl Buf {
    pub fn new(name: impl Into<String>, ty: TensorType) -> Buf {
        Buf { name: name.into(), ty }
    }

    pub fn shape(&self) -> &[usize] {
        &self.ty.shape
    }

    pub fn rank(&self) -> usize {
        self.ty.rank()
    }

    /// `buf[idx...]`
    pub fn load(&self, idx: &[E]) -> E {
        debug_assert_eq!(idx.len(), self.rank(), "load of {} with wrong index count", self.name);
        E(Expr::new(ExprKind::Load {
            buf: Name::new(self.name.clone()),
            index: idx.iter().map(|e| e.0.clone()).collect(),
        }))
    }

    /// `buf[idx...] = value`
    pub fn store(&self, idx: &[E], value: E) -> Stmt {
        debug_assert_eq!(idx.len(), self.rank(), "store to {} with wrong index count", self.name);
        Stmt::Store {
            buf: Name::new(self.name.clone()),
            index: idx.iter().map(|e| e.0.clone()).collect(),
            value: value.0,
            span: Span::NONE,
        }
    }

    /// `buf[i]` of a rank-1 buffer.
    pub fn load1(&self, i: E) -> E {
        self.load(&[i])
    }

    /// `buf[i] = value` of a rank-1 buffer.
    pub fn store1(&self, i: E, value: E) -> Stmt {
        self.store(&[i], value)
    }

    /// `alloc name: ty local`
    pub fn alloc(&self) -> Stmt {
        Stmt::Alloc { name: self.name.clone(), ty: self.ty.clone(), scope: Scope::Local, span: Span::NONE }
    }
}

/// `kind var in lo..hi { body }`
pub fn loop_(kind: LoopKind, var: &str, lo: E, hi: E, body: Vec<Stmt>) -> Stmt {
    Stmt::Loop { var: var.to_string(), kind, lo: lo.0, hi: hi.0, body, span: Span::NONE }
}

/// `let name = value`
pub fn let_(name: &str, value: E) -> Stmt {
    Stmt::Let { name: name.to_string(), value: value.0, span: Span::NONE }
}

/// `if cond { then_body } else { else_body }`
pub fn if_(cond: E, then_body: Vec<Stmt>, else_body: Vec<Stmt>) -> Stmt {
    Stmt::If { cond: cond.0, then_body, else_body, span: Span::NONE }
}

/// Fresh names for one kernel: every loop variable, `let` and local allocation gets a name
/// unused so far in the kernel, so no rule about shadowing ever matters.
#[derive(Debug, Default)]
pub struct Names {
    used: HashSet<String>,
}

impl Names {
    /// Reserves names already taken (the kernel's parameters).
    pub fn reserve(&mut self, name: &str) {
        self.used.insert(name.to_string());
    }

    /// `base` if unused, else `base1`, `base2`, ..., skipping L1 keywords (`i32`, `f32`).
    pub fn fresh(&mut self, base: &str) -> String {
        let mut name = base.to_string();
        let mut i = 1;
        while self.used.contains(&name) || super::parse::KEYWORDS.contains(&name.as_str()) {
            name = format!("{base}{i}");
            i += 1;
        }
        self.used.insert(name.clone());
        name
    }
}

/// A loop header to be wrapped around a body later: loop nests are often built inside out.
#[derive(Debug, Clone)]
pub struct Header {
    pub kind: LoopKind,
    pub var: String,
    pub lo: E,
    pub hi: E,
}

impl Header {
    pub fn new(kind: LoopKind, var: &str, lo: E, hi: E) -> Header {
        Header { kind, var: var.to_string(), lo, hi }
    }
}

/// Wraps `body` in the loops `headers` (outermost first), with `prologue[d]` statements
/// placed at the start of the body of loop `d` (index recovery `let`s, for instance).
pub fn wrap(headers: Vec<Header>, mut prologues: Vec<Vec<Stmt>>, body: Vec<Stmt>) -> Vec<Stmt> {
    prologues.resize(headers.len(), Vec::new());
    let mut inner = body;
    for (h, mut pro) in headers.into_iter().zip(prologues).rev() {
        pro.extend(inner);
        inner = vec![loop_(h.kind, &h.var, h.lo, h.hi, pro)];
    }
    inner
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_literals_fold_and_floats_do_not() {
        assert_eq!(int(2) + int(3), int(5));
        assert_eq!(var("i") * int(1), var("i"));
        assert_eq!(var("i") * int(0), int(0));
        assert_eq!(var("i") + int(0), var("i"));
        assert_eq!(var("i") + ints(-2), var("i") - int(2));
        assert_eq!(int(7) / int(2), int(3));
        assert_eq!(ints(-7) % int(2), ints(-1));
        assert_eq!(int(4).min(int(9)), int(4));
        let g = f(1.0) * f(2.0);
        assert!(matches!(g.0.kind, ExprKind::Binary { op: BinOp::Mul, .. }));
    }

    #[test]
    fn fresh_names_never_repeat() {
        let mut n = Names::default();
        n.reserve("x");
        assert_eq!(n.fresh("x"), "x1");
        assert_eq!(n.fresh("i"), "i");
        assert_eq!(n.fresh("i"), "i1");
        assert_eq!(n.fresh("i"), "i2");
        // `i32` and `f32` are keywords of L1: the 32nd `i` is `i33`.
        for _ in 3..32 {
            n.fresh("i");
        }
        assert_eq!(n.fresh("i"), "i33");
        assert_eq!(n.fresh("f"), "f");
        n.reserve("f31");
        for k in 1..31 {
            assert_eq!(n.fresh("f"), format!("f{k}"));
        }
        assert_eq!(n.fresh("f"), "f33");
    }

    #[test]
    fn wrap_nests_outermost_first_with_prologues() {
        let y = Buf::new("y", TensorType::new(crate::types::DType::F32, [2, 3]));
        let s = wrap(
            vec![
                Header::new(LoopKind::Parallel, "i", int(0), int(2)),
                Header::new(LoopKind::Vectorize, "j", int(0), int(3)),
            ],
            vec![vec![let_("a", var("i") * int(3))]],
            vec![y.store(&[var("i"), var("j")], f(0.0))],
        );
        let Stmt::Loop { kind: LoopKind::Parallel, body, .. } = &s[0] else { panic!("{s:?}") };
        assert!(matches!(body[0], Stmt::Let { .. }));
        assert!(matches!(body[1], Stmt::Loop { kind: LoopKind::Vectorize, .. }));
    }
}
