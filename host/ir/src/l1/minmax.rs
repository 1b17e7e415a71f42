//! L1's f32 `min` and `max`, the one definition every evaluator of L1 uses (the interpreter,
//! the expectations of the backend tests): NaN propagates, as in IEEE 754-2019
//! `minimum`/`maximum`, PyTorch's `minimum`/`maximum`/`clamp`/`amax` and onnxruntime's `Min`,
//! `Max`, `Relu`, `Clip` and `ReduceMax`, so `relu`, `clip`, `max`/`min` and max/min
//! reductions lowered to L1 agree with the L0 reference interpreter on NaN inputs.
//!
//! What these must keep true: a NaN operand gives a NaN (any payload); otherwise the larger
//! (smaller) operand. Of two zeros of opposite signs, `max` gives `+0.0` and `min` `-0.0`
//! (IEEE 754-2019's choice); L1 lets compiled code return either zero there
//! (`docs/ir-l1.md`, Exact semantics), so backends need not spend instructions on it.

/// `max(a, b)` on f32: NaN if either is NaN, else the larger, `+0.0` of `-0.0` and `+0.0`.
pub fn max_f32(a: f32, b: f32) -> f32 {
    if a.is_nan() || b.is_nan() {
        a + b
    } else if a == b {
        // Equal: the same value, or two zeros, of which the positive one is the maximum.
        if a.is_sign_positive() {
            a
        } else {
            b
        }
    } else if a > b {
        a
    } else {
        b
    }
}

/// `min(a, b)` on f32: NaN if either is NaN, else the smaller, `-0.0` of `-0.0` and `+0.0`.
pub fn min_f32(a: f32, b: f32) -> f32 {
    if a.is_nan() || b.is_nan() {
        a + b
    } else if a == b {
        if a.is_sign_negative() {
            a
        } else {
            b
        }
    } else if a < b {
        a
    } else {
        b
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nan_propagates_from_either_side() {
        for v in [0.0, -0.0, 1.5, -7.0, f32::INFINITY, f32::NEG_INFINITY] {
            assert!(max_f32(f32::NAN, v).is_nan() && max_f32(v, f32::NAN).is_nan(), "{v}");
            assert!(min_f32(f32::NAN, v).is_nan() && min_f32(v, f32::NAN).is_nan(), "{v}");
        }
        assert!(max_f32(f32::NAN, f32::NAN).is_nan() && min_f32(f32::NAN, f32::NAN).is_nan());
    }

    #[test]
    fn numbers_and_infinities_order_as_usual() {
        assert_eq!(max_f32(1.5, -7.0), 1.5);
        assert_eq!(max_f32(-7.0, 1.5), 1.5);
        assert_eq!(min_f32(1.5, -7.0), -7.0);
        assert_eq!(min_f32(-7.0, 1.5), -7.0);
        assert_eq!(max_f32(f32::NEG_INFINITY, -3.0e38), -3.0e38);
        assert_eq!(min_f32(f32::INFINITY, 3.0e38), 3.0e38);
        assert_eq!(max_f32(f32::INFINITY, 1.0), f32::INFINITY);
        assert_eq!(min_f32(f32::NEG_INFINITY, 1.0), f32::NEG_INFINITY);
    }

    #[test]
    fn zeros_of_opposite_signs_follow_ieee_754_2019() {
        for (a, b) in [(0.0f32, -0.0f32), (-0.0, 0.0)] {
            assert!(max_f32(a, b).is_sign_positive() && max_f32(a, b) == 0.0, "max({a}, {b})");
            assert!(min_f32(a, b).is_sign_negative() && min_f32(a, b) == 0.0, "min({a}, {b})");
        }
    }
}
