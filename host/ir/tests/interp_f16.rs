//! f16 as a storage dtype in the reference interpreter, against hand-computed values: `cast`
//! to f16 rounds to the nearest f16 (ties to even, overflow to infinity, subnormals, -0, NaN),
//! f16 widens exactly, f16 to integers truncates as f32 does; movement keeps the bits; arithmetic
//! on f16 is refused with a hint to cast; f16 inputs must hold f16 values.

mod interp_util;
use ekb_ir::l0::check;
use ekb_ir::{Diagnostic, SourceFile};
use interp_util::*;

fn load_error(text: &str) -> Diagnostic {
    check::load(&SourceFile::new("t.ekir", text)).expect_err("the graph must not load").remove(0)
}

fn unary_graph(input: &str, expr: &str, out: &str) -> String {
    format!("graph g(x: {input}) -> (y: {out}) {{\n  %0 = {expr}\n  return %0\n}}\n")
}

#[test]
fn cast_to_f16_rounds_to_nearest_even() {
    let g = unary_graph("f32[14]", "cast(x, dtype=f16)", "f16[14]");
    let (inf, nan) = (f64::INFINITY, f64::NAN);
    let p = |e: i32| 2f64.powi(e);
    let x = [
        1.0 + p(-11),       // the tie between 1 and 1 + 2^-10: even 1
        1.0 + 3.0 * p(-11), // the tie between 1 + 2^-10 and 1 + 2^-9: even 1 + 2^-9
        0.1,                // 0.0999755859375
        65504.0,            // the largest f16
        65519.0,            // below the tie with 2^16: 65504
        65520.0,            // the tie: infinity
        -1e6,               // -infinity
        p(-25),             // the tie between 0 and 2^-24: 0
        3.0 * p(-25),       // the tie between 2^-24 and 2^-23: 2^-23
        -p(-20) - p(-30),   // a subnormal: -16 * 2^-24
        -0.0,
        nan,
        inf,
        333.3, // 333.25 (steps of 0.25 between 256 and 512)
    ];
    let want = [
        1.0,
        1.0 + p(-9),
        0.0999755859375,
        65504.0,
        65504.0,
        inf,
        -inf,
        0.0,
        p(-23),
        -p(-20),
        -0.0,
        nan,
        inf,
        333.25,
    ];
    let mut y = eval1(&g, &[("x", &x)]);
    assert!(y.data[10].is_sign_negative(), "-0 keeps its sign");
    assert!(y.data[11].is_nan(), "NaN stays NaN");
    y.data[11] = 0.0;
    let mut want = want;
    want[11] = 0.0;
    assert_exact(&y, &[14], &want);
}

#[test]
fn cast_to_f16_rounds_an_f32_value() {
    // The reference rounds to f32 first, as a board holds an f32 result: 1 + 2^-11 + 2^-40 is
    // 1 + 2^-11 in f32, a tie that goes to 1, where direct rounding would give 1 + 2^-10.
    let g =
        "graph g(x: f32[1]) -> (y: f16[1]) {\n  %0 = mul(x, x)\n  %1 = cast(%0, dtype=f16)\n  return %1\n}\n";
    let x = (1.0 + 2f64.powi(-11) + 2f64.powi(-40)).sqrt();
    let y = eval1(g, &[("x", &[x])]);
    let x2 = x * x;
    assert_ne!(f64::from(x2 as f32), x2, "the product is not an f32");
    assert_exact(&y, &[1], &[1.0]);
}

#[test]
fn cast_from_f16_is_exact_and_truncates_to_integers() {
    let x = [0.0999755859375, -65504.0, 6.0e-8, 2.5, -2.75, 127.5, 300.0, -300.0];
    let g = unary_graph("f16[3]", "cast(x, dtype=f32)", "f32[3]");
    let sub = 2f64.powi(-24);
    assert_exact(
        &eval1(&g, &[("x", &[0.0999755859375, -65504.0, sub])]),
        &[3],
        &[0.0999755859375, -65504.0, sub],
    );
    let g = unary_graph("f16[5]", "cast(x, dtype=i32)", "i32[5]");
    assert_exact(&eval1(&g, &[("x", &x[3..])]), &[5], &[2.0, -2.0, 127.0, 300.0, -300.0]);
    let g = unary_graph("f16[5]", "cast(x, dtype=i8)", "i8[5]");
    assert_exact(&eval1(&g, &[("x", &x[3..])]), &[5], &[2.0, -2.0, 127.0, 127.0, -128.0]);
    // i32 to f16 through f32: 2049 is a tie between 2048 and 2050 (even 2048).
    let g = unary_graph("i32[4]", "cast(x, dtype=f16)", "f16[4]");
    assert_exact(
        &eval1(&g, &[("x", &[2049.0, 2051.0, 65519.0, 70000.0])]),
        &[4],
        &[2048.0, 2052.0, 65504.0, f64::INFINITY],
    );
}

#[test]
fn full_and_pad_values_round_to_f16() {
    let g = "graph g(x: f16[2]) -> (y: f16[3], z: f16[4]) {
  %y = full(shape=[3], value=65520, dtype=f16)
  %z = pad(x, pads=[1,1], mode=constant, value=0.1)
  return %y, %z
}
";
    let out = try_eval(g, &[("x", &[1.5, -2.0])]).unwrap();
    assert_exact(&out[0], &[3], &[f64::INFINITY; 3]);
    assert_exact(&out[1], &[4], &[0.0999755859375, 1.5, -2.0, 0.0999755859375]);
}

#[test]
fn f16_inputs_must_hold_f16_values() {
    let g = unary_graph("f16[2]", "cast(x, dtype=f32)", "f32[2]");
    let e = try_eval(&g, &[("x", &[1.0, 0.1])]).unwrap_err();
    assert!(e.message.contains("is f16 but holds the value 0.1"), "{e}");
}

#[test]
fn arithmetic_on_f16_is_refused_with_a_hint_to_cast() {
    let e = load_error(&unary_graph("f16[2]", "relu(x)", "f16[2]"));
    assert!(e.message.contains("has dtype f16, expected f32 or i32"), "{e}");
    let hint = e.hint.clone().unwrap_or_default();
    assert!(hint.contains("cast") && hint.contains("f32"), "{hint}");
    let e = load_error("graph g(a: f16[2], b: f16[2]) -> (y: f16[2]) {\n  %0 = add(a, b)\n  return %0\n}\n");
    assert!(e.message.contains("f16"), "{e}");
    let e =
        load_error("graph g() -> (y: f16[2]) {\n  %0 = iota(shape=[2], axis=0, dtype=f16)\n  return %0\n}\n");
    assert!(e.message.contains("indices do not fit in f16"), "{e}");
}
