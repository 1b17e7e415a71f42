//! `tanh` and `erf` in f32: an odd polynomial near zero, and beyond it a form through `exp`
//! whose result is 1 minus something small, with the sign of `x`.
//!
//! `tanh(x)`: `x + x^3 P(x^2)` for `|x| < 0.625`; else `1 - 2 / (e^(2|x|) + 1)`, `|x|` clamped
//! to 10 (the f32 result is 1 from 9.01 on).
//!
//! `erf(x)`: `x + x R(x^2)` for `|x| < 1`; else `1 - e^(Q(|x| - 1))`, `Q` fitted to
//! `log(erfc)` on `[1, 4]`, `|x|` clamped to 4 (the f32 result is 1 from 3.92 on).
//!
//! Both arms are computed and one is selected per element; NaN takes the second arm, whose
//! `exp` returns it.

use super::exp_log::exp;
use super::{coeffs, f, i, Fb, T, V};
use crate::emit::Callee;

/// `P(u)` of `tanh(x) = x + x^3 P(x^2)`, `|x| < 0.625` (`fit.py`).
const TANH_P: [f32; 6] = [-0.3333333, 0.13333221, -0.053948194, 0.021707078, -0.00819073, 0.0021535691];
const TANH_SMALL: f32 = 0.625;

/// `R(u)` of `erf(x) = x + x R(x^2)`, `|x| < 1` (`fit.py`).
const ERF_R: [f32; 7] =
    [0.12837917, -0.37612626, 0.112835824, -0.026853643, 0.0051879627, -0.0008006793, 7.842288e-05];
/// `Q(t)` of `erf(x) = 1 - e^(Q(x - 1))`, `1 <= x <= 4` (`fit.py`).
const ERF_Q: [f32; 11] = [
    -1.8496056,
    -2.6389644,
    -0.84315914,
    -0.041186146,
    0.008619684,
    0.0010818541,
    -0.0037378166,
    0.003158859,
    -0.001483515,
    0.0003738981,
    -3.9066897e-05,
];

/// `|t|` with the sign of `x` (`t` is not negative).
fn with_sign_of(b: &mut Fb, t: &V, x: &V) -> V {
    let xb = b.cast("bitcast", x, T::I32);
    let sign = b.and(&xb, &i(i32::MIN));
    let tb = b.cast("bitcast", t, T::I32);
    let r = b.or(&tb, &sign);
    b.cast("bitcast", &r, T::F32)
}

pub(super) fn tanh(b: &mut Fb, x: &V) -> V {
    // Both arms on |x| (the polynomial's `x + ..` would turn -0 into +0), the sign put back last.
    let a = b.call1(Callee::Fabs, x);
    let a2 = b.fmul(&a, &a);
    let p = b.horner(&coeffs(&TANH_P), &a2);
    let a3 = b.fmul(&a2, &a);
    let small = b.fma(&a3, &p, &a);
    let big = b.fcmp("ogt", &a, &f(10.0));
    let ac = b.select(&big, &f(10.0), &a);
    let twice = b.fadd(&ac, &ac);
    let e = exp(b, &twice);
    let e1 = b.fadd(&e, &f(1.0));
    let q = b.fdiv(&f(2.0), &e1);
    let large = b.fsub(&f(1.0), &q);
    let near = b.fcmp("olt", &a, &f(TANH_SMALL));
    let t = b.select(&near, &small, &large);
    with_sign_of(b, &t, x)
}

pub(super) fn erf(b: &mut Fb, x: &V) -> V {
    let a = b.call1(Callee::Fabs, x);
    let x2 = b.fmul(x, x);
    let r = b.horner(&coeffs(&ERF_R), &x2);
    let small = b.fma(x, &r, x);
    let big = b.fcmp("ogt", &a, &f(4.0));
    let ac = b.select(&big, &f(4.0), &a);
    let t = b.fsub(&ac, &f(1.0));
    let q = b.horner(&coeffs(&ERF_Q), &t);
    let e = exp(b, &q);
    let one_minus = b.fsub(&f(1.0), &e);
    let large = with_sign_of(b, &one_minus, x);
    let near = b.fcmp("olt", &a, &f(1.0));
    b.select(&near, &small, &large)
}
