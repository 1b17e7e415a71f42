//! The reference interpreter's i8 operators against hand-computed values: `quantize_linear`
//! (round half to even, saturation at both ends, arithmetic in f32), `dequantize_linear`, and
//! `cast` to and from i8 (saturating from f32, wrapping from i32).

mod interp_util;
use ekb_ir::l0::check;
use ekb_ir::{Diagnostic, SourceFile};
use interp_util::*;

/// The first diagnostic of a graph that must not load.
fn load_error(text: &str) -> Diagnostic {
    check::load(&SourceFile::new("t.ekir", text)).expect_err("the graph must not load").remove(0)
}

fn unary_graph(input: &str, expr: &str, out: &str) -> String {
    format!("graph g(x: {input}) -> (y: {out}) {{\n  %0 = {expr}\n  return %0\n}}\n")
}

#[test]
fn quantize_rounds_half_to_even_and_saturates_at_both_ends() {
    let g = unary_graph("f32[15]", "quantize_linear(x, scale=1.0, zero_point=0)", "i8[15]");
    let (inf, nan) = (f64::INFINITY, f64::NAN);
    let x = [0.5, -0.5, 2.5, 1.5, -1.5, 127.4, 127.5, 128.0, -128.5, -129.0, 1e9, -1e9, nan, inf, -inf];
    let want =
        [0.0, 0.0, 2.0, 2.0, -2.0, 127.0, 127.0, 127.0, -128.0, -128.0, 127.0, -128.0, -128.0, 127.0, -128.0];
    assert_exact(&eval1(&g, &[("x", &x)]), &[15], &want);
}

#[test]
fn quantize_adds_the_zero_point_before_saturating() {
    let g = unary_graph("f32[5]", "quantize_linear(x, scale=0.5, zero_point=10)", "i8[5]");
    // 1.25 / 0.5 = 2.5 -> 2 (even) + 10; -64 -> -128 + 10; 60 -> 120 + 10 = 130 -> 127;
    // -74 -> -148 + 10 = -138 -> -128; 0.75 -> 1.5 -> 2 + 10.
    let out = eval1(&g, &[("x", &[1.25, -64.0, 60.0, -74.0, 0.75])]);
    assert_exact(&out, &[5], &[12.0, -118.0, 127.0, -128.0, 12.0]);
}

#[test]
fn quantize_divides_in_f32() {
    // In f32, 0.35 / 0.1 is exactly 3.5, which rounds to 4; in f64 the same two f32 values
    // divide to 3.4999999 and would round to 3. 0.25 / 0.1 is 2.5 -> 2, 0.45 / 0.1 is 4.5 -> 4.
    let g = unary_graph("f32[3]", "quantize_linear(x, scale=0.1, zero_point=0)", "i8[3]");
    let x: Vec<f64> = [0.35f32, 0.25, 0.45].iter().map(|&v| f64::from(v)).collect();
    assert_exact(&eval1(&g, &[("x", &x)]), &[3], &[4.0, 2.0, 4.0]);
}

#[test]
fn dequantize_subtracts_the_zero_point_and_scales() {
    let g = unary_graph("i8[4]", "dequantize_linear(x, scale=0.5, zero_point=-3)", "f32[4]");
    let out = eval1(&g, &[("x", &[-128.0, -1.0, 0.0, 127.0])]);
    assert_exact(&out, &[4], &[-62.5, 1.0, 1.5, 65.0]);
    // The product is rounded to f32 once: 3 * 0.1 is the f32 nearest to 0.3.
    let g = unary_graph("i8[1]", "dequantize_linear(x, scale=0.1)", "f32[1]");
    assert_exact(&eval1(&g, &[("x", &[3.0])]), &[1], &[f64::from(3.0f32 * 0.1f32)]);
}

#[test]
fn quantize_then_dequantize_is_within_half_a_step() {
    let text = "graph g(x: f32[6]) -> (y: f32[6]) {
  %q = quantize_linear(x, scale=0.25, zero_point=4)
  %d = dequantize_linear(%q, scale=0.25, zero_point=4)
  return %d
}
";
    // 33 is saturated: 33 / 0.25 + 4 = 136 -> 127 -> (127 - 4) * 0.25 = 30.75.
    let out = eval1(text, &[("x", &[0.1, -0.3, 1.0, -33.0, 33.0, 0.125])]);
    assert_exact(&out, &[6], &[0.0, -0.25, 1.0, -33.0, 30.75, 0.0]);
}

#[test]
fn casts_to_i8_saturate_from_f32_and_wrap_from_i32() {
    let g = unary_graph("f32[7]", "cast(x, dtype=i8)", "i8[7]");
    let out = eval1(&g, &[("x", &[-200.7, -128.9, -1.9, 0.9, 127.9, 300.0, f64::NAN])]);
    assert_exact(&out, &[7], &[-128.0, -128.0, -1.0, 0.0, 127.0, 127.0, 0.0]);
    // ONNX `Cast` between integers keeps the low 8 bits: 200 = 0xc8 is -56, -129 is 127.
    let g = unary_graph("i32[5]", "cast(x, dtype=i8)", "i8[5]");
    let out = eval1(&g, &[("x", &[200.0, -129.0, 256.0, -1.0, 383.0])]);
    assert_exact(&out, &[5], &[-56.0, 127.0, 0.0, -1.0, 127.0]);
    // And back, exactly.
    for (to, out) in [("f32", "f32[3]"), ("i32", "i32[3]")] {
        let g = unary_graph("i8[3]", &format!("cast(x, dtype={to})"), out);
        assert_exact(&eval1(&g, &[("x", &[-128.0, 0.0, 127.0])]), &[3], &[-128.0, 0.0, 127.0]);
    }
}

#[test]
fn i8_data_moves_like_any_other() {
    let g = unary_graph("i8[2,2]", "pad(x, pads=[0,1,0,1], mode=constant, value=-128)", "i8[2,4]");
    let out = eval1(&g, &[("x", &[1.0, -2.0, 3.0, -4.0])]);
    assert_exact(&out, &[2, 4], &[-128.0, 1.0, -2.0, -128.0, -128.0, 3.0, -4.0, -128.0]);
}

#[test]
fn i8_rules_are_diagnosed() {
    let at = |expr: &str, input: &str| load_error(&unary_graph(input, expr, "i8[2]")).message.clone();
    assert_eq!(
        at("quantize_linear(x, scale=1.0)", "i32[2]"),
        "quantize_linear: input `x` has dtype i32, expected f32"
    );
    assert_eq!(
        at("dequantize_linear(x, scale=1.0)", "f32[2]"),
        "dequantize_linear: input `q` has dtype f32, expected i8"
    );
    assert_eq!(
        at("quantize_linear(x, scale=0.0)", "f32[2]"),
        "quantize_linear: `scale` must be a positive normal f32, found 0.0"
    );
    assert_eq!(
        at("quantize_linear(x, scale=1e-40)", "f32[2]"),
        "quantize_linear: `scale` must be a positive normal f32, found 1e-40"
    );
    assert_eq!(
        at("quantize_linear(x, scale=1.0, zero_point=128)", "f32[2]"),
        "quantize_linear: `zero_point` must be an i8, found 128"
    );
    assert_eq!(
        at("quantize_linear(x, zero_point=1)", "f32[2]"),
        "`quantize_linear` requires the attribute `scale` (a number)"
    );
    assert_eq!(
        at("pad(x, pads=[1,0], value=200)", "i8[1]"),
        "pad: `value` = 200.0 is not an i8, but the input is i8"
    );
    assert_eq!(at("add(x, x)", "i8[2]"), "add: input `a` has dtype i8, expected f32 or i32");
    let iota = "graph g() -> (y: i8[2]) {\n  %0 = iota(shape=[2], axis=0, dtype=i8)\n  return %0\n}\n";
    assert_eq!(load_error(iota).message, "iota: `dtype` must be f32 or i32 (indices do not fit in i8)");
    let full = "graph g() -> (y: i8[2]) {\n  %0 = full(shape=[2], value=-129, dtype=i8)\n  return %0\n}\n";
    assert_eq!(load_error(full).message, "full: `value` = -129.0 is not an i8, but `dtype` is i8");
}

#[test]
fn i8_inputs_must_hold_i8_values() {
    let g = unary_graph("i8[2]", "cast(x, dtype=i32)", "i32[2]");
    let e = try_eval(&g, &[("x", &[1.0, 128.0])]).unwrap_err();
    assert_eq!(e.message, "input `x` is i8 but holds the value 128");
}
