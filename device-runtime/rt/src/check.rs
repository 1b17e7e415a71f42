//! Comparing a program's outputs with the expected values the host computed.
//!
//! The rule is the evaluation protocol's: a float element passes when
//! `|out - ref| <= atol + rtol * |ref|`; NaN or infinity where the reference is finite fails; a
//! NaN reference matches only NaN and an infinite reference only the same infinity; integers
//! must be equal. Errors are taken over all elements: `max_abs_err = max |out - ref|` (infinite
//! for a non-finite output where the reference is finite), `max_rel_err` the same divided by
//! `|ref|` over elements whose reference is non-zero.
//!
//! What it must keep true: the expected bytes are only read here, after the kernels ran, and
//! never handed to kernel code (the isolation layer keeps them out of the kernel process
//! entirely).

use ekb_wire::f16;
use ekb_wire::payload::{le_f16s, le_f32s, le_i32s, le_i8s, DType, Tolerance};
use ekb_wire::protocol::OutputCheck;

/// Compares `got` (native-endian elements as the kernel wrote them) with `expected`
/// (little-endian elements, as stored in the payload) for buffer `buffer`. A large buffer is
/// compared in ranges on the machine's threads, their figures merged (the same figures).
pub fn compare(buffer: &str, dtype: DType, got: &[u8], expected: &[u8], tol: Tolerance) -> OutputCheck {
    let tol = tol.for_dtype(dtype);
    let mut c = OutputCheck {
        buffer: buffer.to_string(),
        ok: true,
        max_abs_err: 0.0,
        max_rel_err: 0.0,
        first_mismatch: None,
        mismatches: 0,
    };
    let size = dtype.size_bytes() as usize;
    let n = got.len().min(expected.len()) / size;
    let threads = std::thread::available_parallelism().map_or(1, usize::from).min(n / THREADED_MIN);
    if threads > 1 {
        let per = n.div_ceil(threads).next_multiple_of(CHUNK);
        let parts: Vec<OutputCheck> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..n)
                .step_by(per)
                .map(|first| {
                    let (at, end) = (first * size, (first + per).min(n) * size);
                    let (g, e) = (&got[at..end], &expected[at..end]);
                    let mut part = OutputCheck { buffer: String::new(), ..c.clone() };
                    s.spawn(move || {
                        compare_elements(&mut part, dtype, first, g, e, tol);
                        part
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().expect("a comparison thread panicked")).collect()
        });
        for p in parts {
            c.ok &= p.ok;
            c.max_abs_err = c.max_abs_err.max(p.max_abs_err);
            c.max_rel_err = c.max_rel_err.max(p.max_rel_err);
            c.mismatches += p.mismatches;
            c.first_mismatch = c.first_mismatch.or(p.first_mismatch);
        }
    } else {
        compare_elements(&mut c, dtype, 0, got, expected, tol);
    }
    if got.len() != expected.len() {
        // A validated payload never gets here; a short buffer must not pass by omission.
        c.ok = false;
        c.first_mismatch.get_or_insert((got.len().min(expected.len()) / dtype.size_bytes() as usize) as u64);
    }
    c
}

/// Elements below which a buffer is compared on one thread.
const THREADED_MIN: usize = 1 << 20;

/// Notes elements `first..` of a buffer (`got` native, `expected` little-endian, as many
/// elements each) into `c`.
fn compare_elements(
    c: &mut OutputCheck,
    dtype: DType,
    first: usize,
    got: &[u8],
    expected: &[u8],
    tol: Tolerance,
) {
    match dtype {
        DType::F32 => {
            // Whole chunks where every element is finite and passes take the fast form (no
            // branch per element); any other chunk is noted element by element, so the figures
            // are the same either way.
            let chunks = expected.chunks_exact(4 * CHUNK).zip(got.chunks_exact(4 * CHUNK));
            let (mut done, mut abs, mut rel) = (0, 0f64, 0f64);
            for (e, g) in chunks {
                match passing_chunk(e, g, tol) {
                    Some((a, r)) => (abs, rel) = (abs.max(a), rel.max(r)),
                    None => note_f32s(c, first + done, e, g, tol),
                }
                done += CHUNK;
            }
            let at = 4 * done;
            note_f32s(c, first + done, &expected[at.min(expected.len())..], &got[at.min(got.len())..], tol);
            c.max_abs_err = c.max_abs_err.max(abs);
            c.max_rel_err = c.max_rel_err.max(rel);
        }
        DType::I32 => {
            let got = got.chunks_exact(4).map(|b| i32::from_ne_bytes([b[0], b[1], b[2], b[3]]));
            for (i, (r, g)) in le_i32s(expected).zip(got).enumerate() {
                note(c, first + i, f64::from(r), f64::from(g), r == g);
            }
        }
        DType::I8 => {
            for (i, (r, &g)) in le_i8s(expected).zip(got).enumerate() {
                let g = g as i8;
                note(c, first + i, f64::from(r), f64::from(g), r == g);
            }
        }
        DType::F16 => {
            // Compared as their exact f32 values, under the same rule as f32 (with a relative
            // bound of at least one f16 step).
            let got = got.chunks_exact(2).map(|b| f16::to_f32(u16::from_ne_bytes([b[0], b[1]])));
            for (i, (r, g)) in le_f16s(expected).map(f16::to_f32).zip(got).enumerate() {
                let (r, g) = (f64::from(r), f64::from(g));
                note(c, first + i, r, g, float_passes(r, g, tol));
            }
        }
    }
}

/// Takes element `i` (reference `r`, output `g`, as f64) into the figures of `c`.
fn note(c: &mut OutputCheck, i: usize, r: f64, g: f64, pass: bool) {
    let abs = if r == g || (r.is_nan() && g.is_nan()) {
        0.0
    } else if r.is_finite() && g.is_finite() {
        (g - r).abs()
    } else {
        f64::INFINITY
    };
    c.max_abs_err = c.max_abs_err.max(abs);
    if r != 0.0 && r.is_finite() {
        c.max_rel_err = c.max_rel_err.max(abs / r.abs());
    }
    if !pass {
        c.ok = false;
        c.mismatches += 1;
        c.first_mismatch.get_or_insert(i as u64);
    }
}

/// Elements per chunk of the f32 fast form.
const CHUNK: usize = 64;

/// `max |g - r|` and `max |g - r| / |r|` (over non-zero `r`) of a chunk of f32 elements (`e`
/// little-endian, `g` native) in which every reference is finite and every element passes;
/// `None` when any is not (then the chunk is noted element by element).
fn passing_chunk(e: &[u8], g: &[u8], tol: Tolerance) -> Option<(f64, f64)> {
    let (mut r, mut o) = ([0f64; CHUNK], [0f64; CHUNK]);
    for i in 0..CHUNK {
        r[i] = f64::from(f32::from_le_bytes([e[4 * i], e[4 * i + 1], e[4 * i + 2], e[4 * i + 3]]));
        o[i] = f64::from(f32::from_ne_bytes([g[4 * i], g[4 * i + 1], g[4 * i + 2], g[4 * i + 3]]));
    }
    let (mut all, mut abs, mut rel) = (true, 0f64, 0f64);
    for i in 0..CHUNK {
        let d = (o[i] - r[i]).abs();
        // False for a NaN on either side and for an infinite reference (`|r| <= MAX`), and
        // for an infinite output where the reference is finite (`d` is then infinite).
        all &= r[i].abs() <= f64::MAX && d <= tol.atol + tol.rtol * r[i].abs();
        abs = if d > abs { d } else { abs };
        let q = if r[i] != 0.0 { d / r[i].abs() } else { 0.0 };
        rel = if q > rel { q } else { rel };
    }
    all.then_some((abs, rel))
}

/// Notes each f32 element of `e` (little-endian) against `g` (native) into `c`, the first at
/// index `first`.
fn note_f32s(c: &mut OutputCheck, first: usize, e: &[u8], g: &[u8], tol: Tolerance) {
    let got = g.chunks_exact(4).map(|b| f32::from_ne_bytes([b[0], b[1], b[2], b[3]]));
    for (i, (r, g)) in le_f32s(e).zip(got).enumerate() {
        let (r, g) = (f64::from(r), f64::from(g));
        note(c, first + i, r, g, float_passes(r, g, tol));
    }
}

/// The float rule: NaN matches NaN, infinity the same infinity, a finite reference a finite
/// value within `atol + rtol * |ref|`.
fn float_passes(r: f64, g: f64, tol: Tolerance) -> bool {
    if r.is_nan() {
        g.is_nan()
    } else if r.is_infinite() {
        g == r
    } else {
        g.is_finite() && (g - r).abs() <= tol.atol + tol.rtol * r.abs()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ekb_wire::payload::{f16s_to_le, f32s_to_le, i32s_to_le};

    const TOL: Tolerance = Tolerance { atol: 1e-4, rtol: 1e-4 };

    fn ne_f32(v: &[f32]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_ne_bytes()).collect()
    }

    #[test]
    fn floats_pass_within_atol_plus_rtol_times_ref() {
        // Bound at ref 100: 1e-4 + 1e-2 = 0.0101.
        let exp = f32s_to_le(&[100.0, 0.0, -2.0]);
        let c = compare("y", DType::F32, &ne_f32(&[100.01, 0.00005, -2.0]), &exp, TOL);
        assert!(c.ok, "{c:?}");
        assert_eq!(c.first_mismatch, None);
        assert!((c.max_abs_err - 0.01).abs() < 1e-5, "{}", c.max_abs_err);
        assert!((c.max_rel_err - 1e-4).abs() < 1e-7, "rel is over non-zero refs only: {}", c.max_rel_err);
        let c = compare("y", DType::F32, &ne_f32(&[100.02, 0.0, -2.0002]), &exp, TOL);
        assert!(!c.ok);
        assert_eq!((c.first_mismatch, c.mismatches), (Some(0), 1), "-2.0002 is within 1e-4 + 2e-4");
    }

    #[test]
    fn non_finite_outputs_fail_where_the_reference_is_finite() {
        let exp = f32s_to_le(&[1.0, 2.0, f32::NAN, f32::INFINITY, f32::NEG_INFINITY]);
        let got = ne_f32(&[1.0, f32::NAN, f32::NAN, f32::INFINITY, f32::INFINITY]);
        let c = compare("y", DType::F32, &got, &exp, TOL);
        assert_eq!((c.ok, c.first_mismatch, c.mismatches), (false, Some(1), 2));
        assert_eq!(c.max_abs_err, f64::INFINITY);
        // The poison pattern is a NaN: an output never written fails.
        let poison = f32::from_bits(crate::buffers::POISON_F32_BITS);
        assert!(!compare("y", DType::F32, &ne_f32(&[poison]), &f32s_to_le(&[0.0]), TOL).ok);
        // NaN matches NaN, infinity the same infinity.
        let c = compare(
            "y",
            DType::F32,
            &ne_f32(&[f32::NAN, f32::INFINITY]),
            &f32s_to_le(&[f32::NAN, f32::INFINITY]),
            TOL,
        );
        assert!(c.ok && c.max_abs_err == 0.0, "{c:?}");
    }

    #[test]
    fn whole_chunks_give_the_same_figures_as_element_by_element() {
        // 300 elements: four whole chunks and a tail; close values, exact ones, zeros, and in
        // turn a failure, a NaN, an infinite reference and an infinite output in some chunk.
        let reference: Vec<f32> =
            (0..300).map(|i| if i % 7 == 0 { 0.0 } else { (i as f32 - 150.0) * 0.37 }).collect();
        let near: Vec<f32> = reference.iter().enumerate().map(|(i, r)| r + (i % 5) as f32 * 1e-5).collect();
        let cases: [(usize, f32, f32); 5] = [
            (0, 0.0, 0.0),
            (70, 5.0, 5.5),
            (130, 1.0, f32::NAN),
            (200, f32::INFINITY, 3.0),
            (299, 2.0, f32::INFINITY),
        ];
        for (at, r, g) in cases {
            let (mut exp, mut got) = (reference.clone(), near.clone());
            if at > 0 {
                (exp[at], got[at]) = (r, g);
            }
            let (exp, got) = (f32s_to_le(&exp), ne_f32(&got));
            let mut want = OutputCheck {
                buffer: "y".into(),
                ok: true,
                max_abs_err: 0.0,
                max_rel_err: 0.0,
                first_mismatch: None,
                mismatches: 0,
            };
            note_f32s(&mut want, 0, &exp, &got, TOL);
            assert_eq!(compare("y", DType::F32, &got, &exp, TOL), want, "case at {at}");
            assert_eq!(want.ok, at == 0, "case at {at}");
        }
    }

    #[test]
    fn a_large_buffer_compared_in_ranges_gives_the_figures_of_one_pass() {
        let n = (1 << 21) + 100;
        let reference: Vec<f32> = (0..n).map(|i| (i % 1000) as f32 * 0.01 - 3.0).collect();
        let mut out: Vec<f32> = reference.iter().map(|r| r + 1e-6).collect();
        // Mismatches in the second half first, then in the first: the first index is the least.
        for (i, v) in [(n - 5, 7.0), (1 << 20, f32::NAN), (123_457, 0.5)] {
            out[i] = v;
        }
        let (exp, got) = (f32s_to_le(&reference), ne_f32(&out));
        let mut want = compare("y", DType::F32, &[], &[], TOL);
        compare_elements(&mut want, DType::F32, 0, &got, &exp, TOL);
        let c = compare("y", DType::F32, &got, &exp, TOL);
        assert_eq!(c, want);
        assert_eq!((c.ok, c.first_mismatch, c.mismatches), (false, Some(123_457), 3));
    }

    #[test]
    fn integers_must_be_exact() {
        let exp = i32s_to_le(&[5, -7, 1 << 30]);
        let got: Vec<u8> = [5i32, -7, (1 << 30) + 1].iter().flat_map(|x| x.to_ne_bytes()).collect();
        let c = compare("idx", DType::I32, &got, &exp, Tolerance { atol: 10.0, rtol: 10.0 });
        assert_eq!((c.ok, c.first_mismatch, c.mismatches), (false, Some(2), 1));
        assert_eq!(c.max_abs_err, 1.0);
        assert!(compare("idx", DType::I32, &got[..8], &exp[..8], TOL).ok);
    }

    #[test]
    fn i8_outputs_are_one_byte_each_and_exact() {
        let exp = ekb_wire::payload::i8s_to_le(&[-128, -1, 0, 127]);
        let got: Vec<u8> = [-128i8, -1, 1, 127].iter().map(|&x| x as u8).collect();
        let c = compare("q", DType::I8, &got, &exp, Tolerance { atol: 10.0, rtol: 10.0 });
        assert_eq!((c.ok, c.first_mismatch, c.mismatches), (false, Some(2), 1));
        assert_eq!(c.max_abs_err, 1.0);
        assert!(compare("q", DType::I8, &exp, &exp, TOL).ok);
        // A short buffer is counted in elements of one byte.
        let c = compare("q", DType::I8, &exp[..3], &exp, TOL);
        assert_eq!((c.ok, c.first_mismatch), (false, Some(3)));
        // The poison byte fails where the reference differs.
        let poison = [crate::buffers::POISON_I8 as u8];
        assert!(!compare("q", DType::I8, &poison, &ekb_wire::payload::i8s_to_le(&[0]), TOL).ok);
    }

    #[test]
    fn a_short_buffer_never_passes() {
        let c = compare("y", DType::F32, &ne_f32(&[1.0]), &f32s_to_le(&[1.0, 2.0]), TOL);
        assert_eq!((c.ok, c.first_mismatch), (false, Some(1)));
    }

    #[test]
    fn f16_outputs_compare_as_their_f32_values() {
        // 1.0, 65504, infinity, 0.0999755859375 (0x2e66).
        let exp = f16s_to_le(&[0x3c00, 0x7bff, 0x7c00, 0x2e66]);
        let ne = |v: &[u16]| v.iter().flat_map(|h| h.to_ne_bytes()).collect::<Vec<u8>>();
        // Under the payload's tolerance 1e-4, f16 outputs are compared at rtol 1e-3: one f16
        // step above 1 (2^-10) is within 1e-4 + 1e-3 * 1; the rest equal.
        let tol = TOL;
        let c = compare("y", DType::F16, &ne(&[0x3c01, 0x7bff, 0x7c00, 0x2e66]), &exp, tol);
        assert!(c.ok, "{c:?}");
        assert!((c.max_abs_err - 2f64.powi(-10)).abs() < 1e-12, "{}", c.max_abs_err);
        // Two steps (2^-9) are not; a looser payload tolerance widens f16 outputs too.
        let two_steps = ne(&[0x3c02, 0x7bff, 0x7c00, 0x2e66]);
        assert!(!compare("y", DType::F16, &two_steps, &exp, tol).ok);
        assert!(compare("y", DType::F16, &two_steps, &exp, Tolerance { atol: 3e-3, rtol: 0.0 }).ok);
        // 65504 for infinity fails, and so does the poison NaN.
        let c = compare(
            "y",
            DType::F16,
            &ne(&[0x3c00, 0x7bff, 0x7bff, crate::buffers::POISON_F16_BITS]),
            &exp,
            tol,
        );
        assert_eq!((c.ok, c.first_mismatch, c.mismatches), (false, Some(2), 2));
    }
}
