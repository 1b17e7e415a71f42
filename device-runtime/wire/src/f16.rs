//! IEEE 754 binary16 (`f16`) as a storage format: exact conversions between its bits and f32.
//!
//! What it keeps true, on every machine and without a hardware `f16` type:
//! - [`to_f32`] is exact: every f16 (subnormals, infinities, -0) is an f32; a NaN stays a NaN
//!   with its sign and its payload in the top mantissa bits, quiet bit set.
//! - [`from_f32`] rounds to nearest, ties to even (IEEE `roundTiesToEven`): results above the
//!   largest finite f16 (65504) round to infinity from 65520 on; values below half the smallest
//!   subnormal (2^-25) round to a signed zero; a NaN gives a quiet NaN keeping the sign and the
//!   top 9 payload bits (`0x7e00` for the canonical f32 NaN).
//!
//! These are the conversions of the lowered code (LLVM `fpext`/`fptrunc`, OpenCL
//! `vload_half`/`vstore_half`, PTX `cvt.f32.f16`/`cvt.rn.f16.f32`), so host and board agree bit
//! for bit.

/// The f32 value of the f16 with bits `h`, exactly.
pub fn to_f32(h: u16) -> f32 {
    let sign = u32::from(h & 0x8000) << 16;
    let exp = u32::from(h >> 10) & 0x1f;
    let man = u32::from(h & 0x3ff);
    let bits = match exp {
        0 if man == 0 => sign,
        // A subnormal: man * 2^-24, exact in f32 (at most 10 significant bits).
        0 => return sign_of(h) * (man as f32) * f32::from_bits(0x3380_0000),
        0x1f if man == 0 => sign | 0x7f80_0000,
        0x1f => sign | 0x7fc0_0000 | (man << 13),
        _ => sign | ((exp + 127 - 15) << 23) | (man << 13),
    };
    f32::from_bits(bits)
}

fn sign_of(h: u16) -> f32 {
    if h & 0x8000 != 0 {
        -1.0
    } else {
        1.0
    }
}

/// The bits of the f16 nearest to `x`, ties to even; overflow gives infinity.
pub fn from_f32(x: f32) -> u16 {
    let bits = x.to_bits();
    let sign = ((bits >> 16) & 0x8000) as u16;
    let exp = ((bits >> 23) & 0xff) as i32;
    let man = bits & 0x7f_ffff;
    if exp == 0xff {
        return if man == 0 { sign | 0x7c00 } else { sign | 0x7e00 | (man >> 13) as u16 };
    }
    // The unbiased exponent; f32 subnormals (exp 0) are far below the f16 range and round to 0.
    let e = exp - 127;
    if e > 15 {
        return sign | 0x7c00;
    }
    if e >= -14 {
        // Normal range: keep 10 of the 23 mantissa bits, round the other 13 to nearest even.
        // A carry out of the mantissa bumps the exponent, and from exponent 30 gives infinity.
        let h = (((e + 15) as u32) << 10) | (man >> 13);
        return sign | round(h, man & 0x1fff, 13) as u16;
    }
    if e < -25 || exp == 0 {
        return sign;
    }
    // Subnormal result: the significand with its implicit bit, shifted right by 14 - e - 1.
    let sig = man | 0x80_0000;
    let shift = (-e - 14 + 13) as u32;
    let h = sig >> shift;
    sign | round(h, sig & ((1 << shift) - 1), shift) as u16
}

/// `h` plus the rounding of the `dropped` low bits (`n` of them): up above half, and at exactly
/// half when `h` is odd.
fn round(h: u32, dropped: u32, n: u32) -> u32 {
    let half = 1 << (n - 1);
    if dropped > half || (dropped == half && h & 1 == 1) {
        h + 1
    } else {
        h
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edge_values_convert_exactly_both_ways() {
        // (f32 value, f16 bits), each exact both ways.
        let cases: [(f32, u16); 12] = [
            (0.0, 0x0000),
            (-0.0, 0x8000),
            (1.0, 0x3c00),
            (-2.0, 0xc000),
            (65504.0, 0x7bff),
            (6.103_515_6e-5, 0x0400), // 2^-14, the smallest normal
            (5.960_464_5e-8, 0x0001), // 2^-24, the smallest subnormal
            (-6.097_555e-5, 0x83ff),  // the largest subnormal, negative
            (0.333_251_95, 0x3555),   // 1365/4096
            (f32::INFINITY, 0x7c00),
            (f32::NEG_INFINITY, 0xfc00),
            (1.0009766, 0x3c01),
        ];
        for (x, h) in cases {
            assert_eq!(from_f32(x), h, "{x}");
            assert_eq!(to_f32(h).to_bits(), x.to_bits(), "{h:#06x}");
        }
    }

    #[test]
    fn rounding_is_to_nearest_even_with_overflow_to_infinity() {
        // Between 1 and 1+2^-10: half way goes to the even 1, just above goes up.
        assert_eq!(from_f32(1.0 + 2f32.powi(-11)), 0x3c00);
        assert_eq!(from_f32(1.0 + 2f32.powi(-11) + 2f32.powi(-20)), 0x3c01);
        // Half way between 1+2^-10 (odd) and 1+2^-9 goes up to the even one.
        assert_eq!(from_f32(1.0 + 3.0 * 2f32.powi(-11)), 0x3c02);
        // 65519.996 stays at 65504; 65520 is the tie with 65536 (even exponent step): infinity.
        assert_eq!(from_f32(65519.0), 0x7bff);
        assert_eq!(from_f32(65520.0), 0x7c00);
        assert_eq!(from_f32(-65520.0), 0xfc00);
        assert_eq!(from_f32(1e10), 0x7c00);
        // The largest subnormal rounds up into the smallest normal.
        assert_eq!(from_f32(6.102e-5), 0x0400);
        assert_eq!(from_f32(6.1e-5), 0x03ff, "below the midpoint 6.1005e-5");
        // 2^-25 is the tie between 0 and the smallest subnormal: even 0; above it, 1.
        assert_eq!(from_f32(2f32.powi(-25)), 0x0000);
        assert_eq!(from_f32(2f32.powi(-25) * 1.5), 0x0001);
        assert_eq!(from_f32(-2f32.powi(-26)), 0x8000);
        // 3 * 2^-25 is the tie between subnormals 1 and 2: even 2.
        assert_eq!(from_f32(3.0 * 2f32.powi(-25)), 0x0002);
        assert_eq!(from_f32(f32::from_bits(1)), 0x0000, "an f32 subnormal");
        // 0.1 -> 0x2e66 (0.0999755859375), as numpy's float16(0.1).
        assert_eq!(from_f32(0.1), 0x2e66);
        assert_eq!(to_f32(0x2e66), 0.099_975_586);
    }

    #[test]
    fn nan_stays_nan() {
        assert_eq!(from_f32(f32::NAN), 0x7e00);
        assert_eq!(from_f32(-f32::NAN), 0xfe00);
        assert!(to_f32(0x7c01).is_nan() && to_f32(0xfe00).is_nan());
        assert_eq!(from_f32(to_f32(0x7d23)), 0x7f23, "payload kept, quiet bit set");
    }

    #[test]
    fn every_f16_round_trips_through_f32() {
        for h in 0..=u16::MAX {
            let x = to_f32(h);
            if x.is_nan() {
                assert_eq!(from_f32(x), h | 0x0200, "{h:#06x}");
            } else {
                assert_eq!(from_f32(x), h, "{h:#06x}");
            }
        }
    }
}
