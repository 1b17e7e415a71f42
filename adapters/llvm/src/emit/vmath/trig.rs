//! `sin` and `cos` for f32, in f64 inside: an argument reduction exact over the whole f32 range,
//! then a Taylor polynomial of the reduced argument, rounded once to f32.
//!
//! Reduction: `x = n pi/2 + r`, `|r| <= pi/4` (a little more at rounding ties), and the
//! quadrant `n mod 4`. Two ways, both computed and one selected per element:
//!
//! - `|x| < 2^20` (Cody and Waite in f64): `n = round(x 2/pi)`, `r = x - n P1 - n P2` with `pi/2 =
//!   P1 + P2`, `P1` of 33 significant bits so that `n P1` and `x - n P1` are exact: 86 bits of
//!   `pi/2` against at most 20 of `n`.
//! - larger (Payne and Hanek, branch-free): `x = M 2^E` with `M` the 24-bit significand, and
//!   `x 2/pi mod 4 = M F mod 4` where `F` is the bits of `2/pi` from the one worth `2^1` in
//!   `2^E 2/pi` onwards (the bits before contribute multiples of 4). 84 of them are taken from
//!   [`TWO_OVER_PI`] with a funnel shift by the exponent, as three 28-bit integers whose products
//!   with `M` are exact in f64; their sum modulo 4 is taken one part at a time, so that no
//!   rounding happens before the cancellation near a multiple of `pi/2`.
//!
//! `sin r = r + r^3 S(r^2)` and `cos r = 1 - r^2/2 + r^4 C(r^2)`, Taylor series to `r^13` and
//! `r^14` (the next term below 2^-40 of the result for `|r| <= pi/4`); the quadrant picks the
//! function and the sign. Infinities and NaN give NaN.

use super::{d, i, l, Fb, T, V};
use crate::emit::Callee;

/// The fraction bits of `2/pi`, 64 per word, most significant first (bit 1 of the fraction,
/// worth 2^-1, is the top bit of the first word), to 256 bits.
const TWO_OVER_PI: [u64; 4] =
    [0xa2f9_836e_4e44_1529, 0xfc27_57d1_f534_ddc0, 0xdb62_9599_3c43_9041, 0xfe51_63ab_debb_c561];
/// `pi/2` as `P1 + P2`: `P1` its first 33 significant bits, `P2` the rest rounded to f64.
const PIO2_1: f64 = 1.570_796_326_734_125_6;
const PIO2_2: f64 = 6.077_100_506_506_192e-11;
/// Below this magnitude, the Cody-Waite reduction (`n` below 2^20).
const SMALL: f64 = 1_048_576.0;
/// 1.5 * 2^52: adding it rounds a double below 2^51 in magnitude to an integer.
const ROUND_MAGIC: f64 = 6_755_399_441_055_744.0;
/// Taylor terms: `sin` to `r^13`, `cos` to `r^14`.
const TERMS: i32 = 7;

/// `round(v)` for `|v| < 2^51`, as a double and as an integer.
fn round(b: &mut Fb, v: &V) -> (V, V) {
    let t = b.fadd(v, &d(ROUND_MAGIC));
    let n_f = b.fsub(&t, &d(ROUND_MAGIC));
    let tb = b.cast("bitcast", &t, T::I64);
    let n = b.sub(&tb, &l(ROUND_MAGIC.to_bits() as i64));
    (n_f, n)
}

/// `(r, n)` by Cody-Waite, for `|x| < 2^20`.
fn reduce_small(b: &mut Fb, xd: &V) -> (V, V) {
    let t = b.fmul(xd, &d(std::f64::consts::FRAC_2_PI));
    let (n_f, n) = round(b, &t);
    let neg = b.fneg(&n_f);
    let r = b.fma(&neg, &d(PIO2_1), xd);
    let r = b.fma(&neg, &d(PIO2_2), &r);
    (r, n)
}

/// `(r, n)` by Payne-Hanek, for `|x| >= 2^20` (any value for smaller ones: not selected).
fn reduce_large(b: &mut Fb, x: &V) -> (V, V) {
    let bits = b.cast("bitcast", x, T::I32);
    let biased = b.ashr(&bits, &i(23));
    let biased = b.and(&biased, &i(0xff));
    let mant = b.and(&bits, &i(0x007f_ffff));
    let m = b.or(&mant, &i(0x0080_0000));
    let m = b.cast("sitofp", &m, T::F64);
    // The window starts at fraction bit E - 1 (E = biased - 150), at index E + 62 of the words
    // [0, TWO_OVER_PI..] (a zero word first, for the bits before the point).
    let s = b.add(&biased, &i(62 - 150));
    let s = b.cast("sext", &s, T::I64);
    let j = b.ashr(&s, &l(6));
    let k = b.and(&s, &l(63));
    let word = |idx: usize| if idx == 0 { l(0) } else { l(TWO_OVER_PI[idx - 1] as i64) };
    let pick = |b: &mut Fb, off: usize| {
        // words[j + off] for j in 0..=2 (other values of j only for unselected lanes)
        let one = b.icmp("eq", &j, &l(1));
        let two = b.icmp("eq", &j, &l(2));
        let v = b.select(&one, &word(1 + off), &word(off));
        b.select(&two, &word(2 + off), &v)
    };
    let w0 = pick(b, 0);
    let w1 = pick(b, 1);
    let w2 = pick(b, 2);
    let hi = b.call(Callee::FshlI64, &[&w0, &w1, &k]);
    let lo = b.call(Callee::FshlI64, &[&w1, &w2, &k]);
    let mask = l((1 << 28) - 1);
    let c0 = b.lshr(&hi, &l(36));
    let c1 = b.lshr(&hi, &l(8));
    let c1 = b.and(&c1, &mask);
    let c2h = b.and(&hi, &l(0xff));
    let c2h = b.shl(&c2h, &l(20));
    let c2l = b.lshr(&lo, &l(44));
    let c2 = b.or(&c2h, &c2l);
    let part = |b: &mut Fb, c: &V, scale: i32| {
        let cf = b.cast("sitofp", c, T::F64);
        let p = b.fmul(&m, &cf);
        b.fmul(&p, &d(2f64.powi(scale)))
    };
    let p0 = part(b, &c0, -26);
    let p1 = part(b, &c1, -54);
    let p2 = part(b, &c2, -82);
    let (n0_f, n0) = round(b, &p0);
    let f0 = b.fsub(&p0, &n0_f);
    let t = b.fadd(&f0, &p1);
    let (n1_f, n1) = round(b, &t);
    let f1 = b.fsub(&t, &n1_f);
    let fr = b.fadd(&f1, &p2);
    let r = b.fmul(&fr, &d(std::f64::consts::FRAC_PI_2));
    let n = b.add(&n0, &n1);
    // The reduction is of |x|: a negative x has the negated r and n.
    let neg = b.icmp("slt", &bits, &i(0));
    let r_neg = b.fneg(&r);
    let r = b.select(&neg, &r_neg, &r);
    let n_neg = b.sub(&l(0), &n);
    let n = b.select(&neg, &n_neg, &n);
    (r, n)
}

/// `sin x` (`cos` false) or `cos x`.
pub(super) fn sin_cos(b: &mut Fb, x: &V, cos: bool) -> V {
    let xd = b.cast("fpext", x, T::F64);
    let (rs, ns) = reduce_small(b, &xd);
    let (rl, nl) = reduce_large(b, x);
    let ax = b.call1(Callee::FabsF64, &xd);
    let small = b.fcmp("olt", &ax, &d(SMALL));
    let r = b.select(&small, &rs, &rl);
    let n = b.select(&small, &ns, &nl);
    let r2 = b.fmul(&r, &r);
    let mut fact = 1.0;
    let (mut sin_c, mut cos_c) = (Vec::new(), Vec::new());
    for k in 1..=2 * TERMS + 1 {
        fact *= f64::from(k);
        let sign = if (k / 2) % 2 == 0 { 1.0 } else { -1.0 };
        if k % 2 == 1 && k >= 3 {
            sin_c.push(d(sign / fact));
        } else if k % 2 == 0 && k >= 4 {
            cos_c.push(d(sign / fact));
        }
    }
    let s = b.horner(&sin_c, &r2);
    let r3 = b.fmul(&r2, &r);
    let sin_r = b.fma(&r3, &s, &r);
    let c = b.horner(&cos_c, &r2);
    let r4 = b.fmul(&r2, &r2);
    let half = b.fmul(&r2, &d(-0.5));
    let cos_tail = b.fma(&r4, &c, &half);
    let cos_r = b.fadd(&cos_tail, &d(1.0));
    let q = if cos { b.add(&n, &l(1)) } else { n };
    let odd = b.and(&q, &l(1));
    let odd = b.icmp("ne", &odd, &l(0));
    let v = b.select(&odd, &cos_r, &sin_r);
    let high = b.and(&q, &l(2));
    let high = b.icmp("ne", &high, &l(0));
    let v_neg = b.fneg(&v);
    let v = b.select(&high, &v_neg, &v);
    let y = b.cast("fptrunc", &v, T::F32);
    // sin(-0) is -0 (the polynomial's `r + ..` gives +0).
    let y = if cos {
        y
    } else {
        let zero = b.fcmp("oeq", x, &super::f(0.0));
        b.select(&zero, x, &y)
    };
    // sin and cos of an infinity, and of NaN, are NaN.
    let finite = b.fcmp("olt", &ax, &d(f64::INFINITY));
    let nan = b.fsub(x, x);
    b.select(&finite, &y, &nan)
}
