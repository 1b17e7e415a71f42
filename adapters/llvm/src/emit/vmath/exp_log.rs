//! `exp` and `log` in f32.
//!
//! `exp(x)`: `x = n ln2 + r` with `n = round(x / ln2)` (by adding and subtracting 1.5 * 2^23,
//! which rounds to an integer in the default rounding mode) and `|r| <= ln2/2` (Cody and Waite:
//! `ln2` in two parts, the first with 9 significant bits so that `n * LN2_HI` is exact); then
//! `e^r = 1 + r + r^2 P(r)` and `2^n` applied as two
//! exact powers of two, `2^(n/2)` and `2^(n - n/2)`, so that a result below 2^-126 is rounded
//! once, as a subnormal. `x` is clamped
//! to `[-104, 89]` first, outside which the result is 0 or infinity anyway; NaN passes through.
//!
//! `exp_ftz(x)`: the same reduction and polynomial (evaluated by Horner's rule, every
//! coefficient doubled), scaled once by `2^(n-1)` built by one shift of the rounding sum's bits;
//! results below 2^-125 may be `+0` (softmax's exponentials, summed with a 1, lose nothing).
//! About 12 vector instructions against `exp`'s 20: the two-step scaling that gives gradual
//! underflow costs six integer instructions and a multiply.
//!
//! `log(x)`: `x = 2^e m` with `sqrt(1/2) <= m < sqrt(2)`, read from the bits (a subnormal is
//! scaled by 2^23 first); `log(m) = f - f^2/2 + f^3 Q(f)` with `f = m - 1` (exact), and
//! `e ln2` added in two parts. `log(0) = -inf`, `log(+inf) = +inf`, negative inputs give NaN.

use super::{coeffs, f, i, Fb, T, V};

/// `P(r)` of `e^r = 1 + r + r^2 P(r)`, `|r| <= ln2/2` (`fit.py`). `1 + (r + r^2 P)` rather
/// than Horner's rule over the whole polynomial, whose last two steps round twice each without
/// FMA (1.16 ulp on the x86-64 baseline, against 0.96).
const EXP_P: [f32; 5] = [0.49999988, 0.16666518, 0.04166965, 0.008368945, 0.0013745304];

/// `Q(f)` of `log(1+f) = f - f^2/2 + f^3 Q(f)`, `sqrt(1/2)-1 <= f < sqrt(2)-1` (`fit.py`).
const LOG_Q: [f32; 8] =
    [0.33333355, -0.25000852, 0.19999766, -0.16621315, 0.142281, -0.13203458, 0.12615187, -0.07353803];

/// `ln 2` as `LN2_HI + LN2_LO`, `LN2_HI` with 9 significant bits (0.693359375, `0x3f318000`).
const LN2_HI: f32 = 0.693_359_4;
const LN2_LO: f32 = -2.121_944_4e-4;
/// 1.5 * 2^23: adding it rounds any float below 2^22 in magnitude to an integer.
const ROUND_MAGIC: f32 = 12_582_912.0;
/// The bits of `sqrt(1/2)`, where `log`'s mantissa range starts.
const SQRT_HALF_BITS: i32 = 0x3f35_04f3;

/// `e^x` for every f32 `x`, NaN included.
pub(super) fn exp(b: &mut Fb, x: &V) -> V {
    let x = b.clamp(x, &f(-104.0), &f(89.0));
    let t = b.fma(&x, &f(std::f32::consts::LOG2_E), &f(ROUND_MAGIC));
    let n_f = b.fsub(&t, &f(ROUND_MAGIC));
    let t_bits = b.cast("bitcast", &t, T::I32);
    let n = b.sub(&t_bits, &i(ROUND_MAGIC.to_bits() as i32));
    let neg_n = b.fneg(&n_f);
    let r = b.fma(&neg_n, &f(LN2_HI), &x);
    let r = b.fma(&neg_n, &f(LN2_LO), &r);
    let p = b.horner(&coeffs(&EXP_P), &r);
    let r2 = b.fmul(&r, &r);
    let e = b.fma(&r2, &p, &r);
    let e = b.fadd(&e, &f(1.0));
    // e * 2^n in two exact steps, n = n1 + n2 (each in -75..=64; the second is the only
    // rounding). Multiplies rather than adding to the exponent bits: a NaN stays a NaN.
    let n1 = b.ashr(&n, &i(1));
    let n2 = b.sub(&n, &n1);
    let s1 = pow2(b, &n1);
    let s2 = pow2(b, &n2);
    let y = b.fmul(&e, &s1);
    b.fmul(&y, &s2)
}

/// `e^x` with results below 2^-125 flushed to +0 (`exp_ftz`), for every f32 `x`, NaN included:
/// one scaling, by a power of two read straight from the bits of the rounding sum.
///
/// `t = x log2(e) + (1.5 * 2^23 + 126)` rounds `x log2(e)` to the integer `n` (so `t`'s bits are
/// those of `1.5 * 2^23` plus `126 + n`, and `t << 23` puts `126 + n` in the exponent field:
/// the bits of `2^(n-1)`, with nothing else set since the low 9 bits of `1.5 * 2^23` are 0);
/// `2 e^r` comes from the polynomial with every coefficient doubled (exact), so `y = 2 e^r *
/// 2^(n-1)`. `x` is clamped to `[-87.5, 89.5]`, where `n` is `-126..=129`: `n = -126` gives the
/// exponent field 0, `2^(n-1) = +0` and `y = +0` (`x < -125.5 ln2`, results below 2^-125.5);
/// `n = 129` gives the field 255, `+inf`; `n = 128` lets the product round to infinity or not,
/// as IEEE multiplication does. NaN stays NaN (its bits shift to `+0`, and `NaN * 0` is NaN).
pub(super) fn exp_ftz(b: &mut Fb, x: &V) -> V {
    let x = b.clamp(x, &f(-87.5), &f(89.5));
    let magic = f(ROUND_MAGIC + 126.0);
    let t = b.fma(&x, &f(std::f32::consts::LOG2_E), &magic);
    let n_f = b.fsub(&t, &magic);
    let neg_n = b.fneg(&n_f);
    let r = b.fma(&neg_n, &f(LN2_HI), &x);
    let r = b.fma(&neg_n, &f(LN2_LO), &r);
    let twice: Vec<f32> = [1.0, 1.0].iter().chain(&EXP_P).map(|c| 2.0 * c).collect();
    let e2 = b.horner(&coeffs(&twice), &r);
    let t_bits = b.cast("bitcast", &t, T::I32);
    let s_bits = b.shl(&t_bits, &i(23));
    let s = b.cast("bitcast", &s_bits, T::F32);
    b.fmul(&e2, &s)
}

/// `2^n` for `-126 <= n <= 127`, from its bits.
fn pow2(b: &mut Fb, n: &V) -> V {
    let biased = b.add(n, &i(127));
    let bits = b.shl(&biased, &i(23));
    b.cast("bitcast", &bits, T::F32)
}

/// `ln x` for every f32 `x`.
pub(super) fn log(b: &mut Fb, x: &V) -> V {
    let bits = b.cast("bitcast", x, T::I32);
    let subnormal = b.icmp("ult", &bits, &i(0x0080_0000));
    let scaled = b.fmul(x, &f(8_388_608.0));
    let scaled_bits = b.cast("bitcast", &scaled, T::I32);
    let bits = b.select(&subnormal, &scaled_bits, &bits);
    let bias = b.select(&subnormal, &i(-23), &i(0));
    let u = b.sub(&bits, &i(SQRT_HALF_BITS));
    let e = b.ashr(&u, &i(23));
    let e = b.add(&e, &bias);
    let m_bits = b.and(&u, &i(0x007f_ffff));
    let m_bits = b.add(&m_bits, &i(SQRT_HALF_BITS));
    let m = b.cast("bitcast", &m_bits, T::F32);
    let fr = b.fsub(&m, &f(1.0));
    let q = b.horner(&coeffs(&LOG_Q), &fr);
    let f2 = b.fmul(&fr, &fr);
    let f3 = b.fmul(&f2, &fr);
    let half_f2 = b.fmul(&f2, &f(-0.5));
    let y = b.fma(&f3, &q, &half_f2);
    let y = b.fadd(&fr, &y);
    let ef = b.cast("sitofp", &e, T::F32);
    let y = b.fma(&ef, &f(LN2_LO), &y);
    let y = b.fma(&ef, &f(LN2_HI), &y);
    let zero = b.fcmp("oeq", x, &f(0.0));
    let y = b.select(&zero, &f(f32::NEG_INFINITY), &y);
    let inf = b.fcmp("oeq", x, &f(f32::INFINITY));
    let y = b.select(&inf, &f(f32::INFINITY), &y);
    let negative = b.fcmp("olt", x, &f(0.0));
    let y = b.select(&negative, &f(f32::NAN), &y);
    b.nan_through(x, &y)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_part_of_ln2_has_nine_significant_bits() {
        assert_eq!(LN2_HI.to_bits(), 0x3f31_8000);
        assert_eq!(LN2_HI.to_bits() & 0x3fff, 0, "n * LN2_HI must be exact for |n| <= 150");
        assert!((f64::from(LN2_HI) + f64::from(LN2_LO) - std::f64::consts::LN_2).abs() < 1e-11);
    }
}
