//! Interval arithmetic on i32 values: the bound analysis of the verifier and of the schedule
//! primitives.
//!
//! An [`Interval`] is a closed range held in i64, so arithmetic on its ends cannot overflow; a
//! result that could leave the i32 range is unknown (`None`), because the i32 operation would
//! wrap. [`eval`] computes the interval of a load-free i32 expression from the intervals of its
//! variables: literals, `+ - *`, `/` and `%` by divisors whose sign is known, `min`, `max`,
//! `abs`, `select` (the union of both arms), `i32(...)` of an i32 or a bool. Intervals
//! over-approximate: an expression that uses a variable twice (`i - i`) gets a wider interval
//! than its true range.

use crate::l1::ast::{BinOp, Expr, ExprKind, Intrinsic, Ty, UnOp};

/// A closed interval of i32 values; `lo > hi` is empty.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Interval {
    pub lo: i64,
    pub hi: i64,
}

pub const I32_MIN: i64 = i32::MIN as i64;
pub const I32_MAX: i64 = i32::MAX as i64;

impl Interval {
    pub fn new(lo: i64, hi: i64) -> Interval {
        Interval { lo, hi }
    }

    pub fn point(v: i64) -> Interval {
        Interval { lo: v, hi: v }
    }

    /// Everything an i32 can hold: what a narrowing starts from when nothing is known.
    pub const FULL: Interval = Interval { lo: I32_MIN, hi: I32_MAX };

    /// `None` when the result could wrap: then nothing is known.
    pub fn fit(self) -> Option<Interval> {
        (self.lo >= I32_MIN && self.hi <= I32_MAX && self.lo <= self.hi).then_some(self)
    }

    /// Both ends known (not an end of the i32 range left open by a one-sided narrowing).
    pub fn bounded(self) -> bool {
        self.lo > I32_MIN && self.hi < I32_MAX
    }

    pub fn union(self, o: Interval) -> Interval {
        Interval::new(self.lo.min(o.lo), self.hi.max(o.hi))
    }

    /// The intersection; `lo > hi` means empty.
    pub fn meet(self, o: Interval) -> Interval {
        Interval::new(self.lo.max(o.lo), self.hi.min(o.hi))
    }

    pub fn is_empty(self) -> bool {
        self.lo > self.hi
    }

    /// Whether every value of `self` lies in `o`.
    pub fn within(self, o: Interval) -> bool {
        self.lo >= o.lo && self.hi <= o.hi
    }

    fn corners(self, o: Interval, f: impl Fn(i64, i64) -> i64) -> Interval {
        let c = [f(self.lo, o.lo), f(self.lo, o.hi), f(self.hi, o.lo), f(self.hi, o.hi)];
        Interval::new(*c.iter().min().unwrap_or(&0), *c.iter().max().unwrap_or(&0))
    }

    /// The interval of `a op b` for an arithmetic operator on i32 (before the wrap check of
    /// [`Interval::fit`]); `None` for comparisons and logic, and for a divisor that may be 0.
    pub fn arith(op: BinOp, a: Interval, b: Interval) -> Option<Interval> {
        match op {
            BinOp::Add => Some(Interval::new(a.lo + b.lo, a.hi + b.hi)),
            BinOp::Sub => Some(Interval::new(a.lo - b.hi, a.hi - b.lo)),
            BinOp::Mul => Some(a.corners(b, |x, y| x * y)),
            BinOp::Div => div(a, b),
            BinOp::Rem => rem(a, b),
            _ => None,
        }
    }

    /// The interval of an integer intrinsic (`min`, `max`, `abs`) of arguments with these
    /// intervals; `None` for the float-only intrinsics.
    pub fn call(func: Intrinsic, args: &[Interval]) -> Option<Interval> {
        match (func, args) {
            (Intrinsic::Min, [a, b]) => Some(Interval::new(a.lo.min(b.lo), a.hi.min(b.hi))),
            (Intrinsic::Max, [a, b]) => Some(Interval::new(a.lo.max(b.lo), a.hi.max(b.hi))),
            (Intrinsic::Abs, [a]) if a.lo >= 0 => Some(*a),
            (Intrinsic::Abs, [a]) if a.hi <= 0 => Some(Interval::new(-a.hi, -a.lo)),
            (Intrinsic::Abs, [a]) => Some(Interval::new(0, (-a.lo).max(a.hi))),
            _ => None,
        }
    }
}

/// C division (truncating) on interval bounds.
fn div(a: Interval, b: Interval) -> Option<Interval> {
    if b.lo > 0 || b.hi < 0 {
        // Truncating division is monotonic in each argument while the divisor keeps its sign.
        a.corners(b, |x, y| x / y).fit()
    } else {
        None
    }
}

/// C remainder (the sign of the dividend) on interval bounds.
fn rem(a: Interval, b: Interval) -> Option<Interval> {
    if b.lo <= 0 && b.hi >= 0 {
        return None;
    }
    // |a % b| < |b|, and the result has the sign of `a`.
    let m = b.lo.abs().max(b.hi.abs()) - 1;
    let exact_small = b.lo.abs().min(b.hi.abs());
    if a.lo > -exact_small && a.hi < exact_small {
        return Some(a);
    }
    let lo = if a.lo < 0 { a.lo.max(-m) } else { 0 };
    let hi = if a.hi > 0 { a.hi.min(m) } else { 0 };
    Some(Interval::new(lo, hi))
}

/// The interval of the i32 expression `e`, given the interval of each variable (`env`
/// answers `None` for a variable it knows nothing of). Loads, float conversions and results
/// that could wrap are unknown.
pub fn eval(e: &Expr, env: &impl Fn(&str) -> Option<Interval>) -> Option<Interval> {
    let iv = match &e.kind {
        ExprKind::Int(v) => Some(Interval::point(i64::from(*v))),
        ExprKind::Var(v) => env(v),
        ExprKind::Unary { op: UnOp::Neg, arg } => eval(arg, env).map(|i| Interval::new(-i.hi, -i.lo)),
        ExprKind::Binary { op, lhs, rhs } => Interval::arith(*op, eval(lhs, env)?, eval(rhs, env)?),
        ExprKind::Select { then_val, else_val, .. } => Some(eval(then_val, env)?.union(eval(else_val, env)?)),
        ExprKind::Cast { to: Ty::I32, arg } if is_bool(arg) => Some(Interval::new(0, 1)),
        ExprKind::Cast { to: Ty::I32, arg } => eval(arg, env),
        ExprKind::Call { func, args } => {
            let ivs = args.iter().map(|a| eval(a, env)).collect::<Option<Vec<_>>>()?;
            Interval::call(*func, &ivs)
        }
        ExprKind::Float(_)
        | ExprKind::Bool(_)
        | ExprKind::Load { .. }
        | ExprKind::Unary { op: UnOp::Not, .. }
        | ExprKind::Cast { .. } => None,
    };
    iv.and_then(Interval::fit)
}

/// Whether `e` is a bool by its form (a literal, a comparison, a logical operator).
fn is_bool(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Bool(_) | ExprKind::Unary { op: UnOp::Not, .. } => true,
        ExprKind::Binary { op, .. } => {
            !matches!(op, BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::Rem)
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::l1::build::{int, var};

    #[test]
    fn arithmetic_follows_c_semantics_and_unknowns_propagate() {
        let env = |v: &str| match v {
            "i" => Some(Interval::new(0, 15)),
            "j" => Some(Interval::new(-3, 3)),
            _ => None,
        };
        let iv = |e: crate::l1::build::E| eval(&e.0, &env);
        assert_eq!(iv(var("i") * int(4) + int(3)), Some(Interval::new(3, 63)));
        assert_eq!(iv(var("i") / int(4)), Some(Interval::new(0, 3)));
        assert_eq!(iv(var("i") % int(4)), Some(Interval::new(0, 3)));
        assert_eq!(iv(var("j") % int(2)), Some(Interval::new(-1, 1)));
        assert_eq!(iv(var("i").min(int(9))), Some(Interval::new(0, 9)));
        assert_eq!(iv(var("j").abs()), Some(Interval::new(0, 3)));
        // Division by something that may be zero, and unknown variables, are unknown.
        assert_eq!(iv(var("i") / var("j")), None);
        assert_eq!(iv(var("k") + int(1)), None);
        // A result that could wrap is unknown.
        assert_eq!(iv(var("i") * int(i32::MAX as usize)), None);
    }
}
