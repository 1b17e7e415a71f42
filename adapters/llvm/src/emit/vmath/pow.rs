//! `pow(x, y)` for f32, computed as `2^(y log2|x|)` in f64 and rounded once to f32.
//!
//! In f64 the product `y log2|x|` carries about 40 bits more than the f32 result needs, so no
//! extended-precision tricks are required and the series need no fitted coefficients:
//! `log|x| = e ln2 + 2 atanh(s)` with `|x| = 2^e m`, `sqrt(1/2) <= m < sqrt(2)`,
//! `s = (m-1)/(m+1)` (`|s| < 0.172`, eight terms of the atanh series), and `2^t = 2^n e^(f ln2)`
//! with `n = round(t)`, `|f| <= 1/2` (thirteen Taylor terms). `t` is clamped to `[-200, 200]`,
//! past the f32 range both ways, so the final rounding gives infinity, zero or a subnormal as
//! the exact result would.
//!
//! The sign and the special cases follow C's `powf`: a negative `x` with an odd integer `y`
//! negates the result, with a non-integer `y` gives NaN; `pow(x, 0) = pow(1, y) = 1` (even for
//! NaN), `pow(-1, ±inf) = 1`; zeros and infinities of `x` follow from `log2 0 = -inf` and
//! `log2 inf = inf`.

use super::{d, f, i, l, Fb, T, V};
use crate::emit::Callee;

/// The bits of `sqrt(1/2)` in f64.
const SQRT_HALF_BITS: i64 = 0x3fe6_a09e_667f_3bcd;
/// 1.5 * 2^52: adding it rounds a double below 2^51 in magnitude to an integer.
const ROUND_MAGIC: f64 = 6_755_399_441_055_744.0;
/// Terms of the atanh series `1 + s^2/3 + s^4/5 + ..`: up to `s^14`, whose next term is below
/// 2^-53 for `|s| < 0.172`.
const ATANH_TERMS: i32 = 8;
/// Taylor terms of `e^g`, `|g| <= ln2/2`: up to `g^12`.
const EXP_TERMS: i32 = 13;

pub(super) fn pow(b: &mut Fb, x: &V, y: &V) -> V {
    let xd = b.cast("fpext", x, T::F64);
    let yd = b.cast("fpext", y, T::F64);
    let log2 = log2_abs(b, &xd);
    let t = b.fmul(&yd, &log2);
    let t = b.clamp(&t, &d(-200.0), &d(200.0));
    let magnitude = exp2(b, &t);
    let r = b.cast("fptrunc", &magnitude, T::F32);

    // The sign: negative x (or -0) and an odd integer y.
    let fy = b.call1(Callee::Floor, y);
    let y_int = b.fcmp("oeq", y, &fy);
    let ay = b.call1(Callee::Fabs, y);
    let exact = b.fcmp("olt", &ay, &f(16_777_216.0));
    let ys = b.select(&exact, y, &f(0.0));
    let yi = b.cast("fptosi", &ys, T::I32);
    let low = b.and(&yi, &i(1));
    let odd_bit = b.icmp("ne", &low, &i(0));
    let odd = b.and(&y_int, &odd_bit);
    let xb = b.cast("bitcast", x, T::I32);
    let x_sign = b.icmp("slt", &xb, &i(0));
    let negate = b.and(&x_sign, &odd);
    let neg_r = b.fneg(&r);
    let r = b.select(&negate, &neg_r, &r);

    // A finite negative x and a non-integer y: NaN.
    let x_neg = b.fcmp("olt", x, &f(0.0));
    let x_finite = b.fcmp("one", x, &f(f32::NEG_INFINITY));
    let not_int = b.xor(&y_int, &V::new("true", T::I1));
    let neg_finite = b.and(&x_neg, &x_finite);
    let domain = b.and(&neg_finite, &not_int);
    let r = b.select(&domain, &f(f32::NAN), &r);

    let any_nan = b.fcmp("uno", x, y);
    let quiet = b.fadd(x, y);
    let r = b.select(&any_nan, &quiet, &r);

    // The cases that give 1 whatever the other operand is.
    let y_zero = b.fcmp("oeq", y, &f(0.0));
    let x_one = b.fcmp("oeq", x, &f(1.0));
    let ax = b.call1(Callee::Fabs, x);
    let ax_one = b.fcmp("oeq", &ax, &f(1.0));
    let y_inf = b.fcmp("oeq", &ay, &f(f32::INFINITY));
    let minus_one_inf = b.and(&ax_one, &y_inf);
    let one = b.or(&y_zero, &x_one);
    let one = b.or(&one, &minus_one_inf);
    b.select(&one, &f(1.0), &r)
}

/// `log2 |x|` of an f64 holding an f32 (so never a subnormal double): `-inf` at 0, `inf` at inf.
fn log2_abs(b: &mut Fb, x: &V) -> V {
    let bits = b.cast("bitcast", x, T::I64);
    let bits = b.and(&bits, &l(i64::MAX));
    let u = b.sub(&bits, &l(SQRT_HALF_BITS));
    let e = b.ashr(&u, &l(52));
    let m_bits = b.and(&u, &l(0x000f_ffff_ffff_ffff));
    let m_bits = b.add(&m_bits, &l(SQRT_HALF_BITS));
    let m = b.cast("bitcast", &m_bits, T::F64);
    let num = b.fsub(&m, &d(1.0));
    let den = b.fadd(&m, &d(1.0));
    let s = b.fdiv(&num, &den);
    let s2 = b.fmul(&s, &s);
    let terms: Vec<V> = (0..ATANH_TERMS).map(|k| d(1.0 / f64::from(2 * k + 1))).collect();
    let series = b.horner(&terms, &s2);
    let two_s = b.fadd(&s, &s);
    let ln_m = b.fmul(&two_s, &series);
    let ef = b.cast("sitofp", &e, T::F64);
    let r = b.fma(&ln_m, &d(std::f64::consts::LOG2_E), &ef);
    let zero = b.icmp("eq", &bits, &l(0));
    let r = b.select(&zero, &d(f64::NEG_INFINITY), &r);
    let inf = b.icmp("eq", &bits, &l(0x7ff0_0000_0000_0000));
    b.select(&inf, &d(f64::INFINITY), &r)
}

/// `2^t` for `-200 <= t <= 200` (or NaN).
fn exp2(b: &mut Fb, t: &V) -> V {
    let rounded = b.fadd(t, &d(ROUND_MAGIC));
    let n_f = b.fsub(&rounded, &d(ROUND_MAGIC));
    let rb = b.cast("bitcast", &rounded, T::I64);
    let n = b.sub(&rb, &l(ROUND_MAGIC.to_bits() as i64));
    let fr = b.fsub(t, &n_f);
    let g = b.fmul(&fr, &d(std::f64::consts::LN_2));
    let mut fact = 1.0;
    let terms: Vec<V> = (0..EXP_TERMS)
        .map(|k| {
            if k > 0 {
                fact *= f64::from(k);
            }
            d(1.0 / fact)
        })
        .collect();
    let e = b.horner(&terms, &g);
    let biased = b.add(&n, &l(1023));
    let sb = b.shl(&biased, &l(52));
    let scale = b.cast("bitcast", &sb, T::F64);
    b.fmul(&e, &scale)
}
