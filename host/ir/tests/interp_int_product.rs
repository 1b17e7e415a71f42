//! Integer products in the reference interpreter against hand-computed values: `matmul`,
//! `linear` and `conv2d` of i8 operands give exact i32 sums (past the i16 range, at both ends of
//! the i8 range, wrapping only beyond 2^31), and the type rules that keep i8 and f32 apart.

mod interp_util;
use ekb_ir::l0::check;
use ekb_ir::{Diagnostic, SourceFile};
use interp_util::*;

/// The first diagnostic of a graph that must not load.
fn load_error(text: &str) -> Diagnostic {
    check::load(&SourceFile::new("t.ekir", text)).expect_err("the graph must not load").remove(0)
}

/// A one-node graph over `inputs` returning `%0: out`.
fn graph(inputs: &str, expr: &str, out: &str) -> String {
    format!("graph g({inputs}) -> (y: {out}) {{\n  %0 = {expr}\n  return %0\n}}\n")
}

#[test]
fn a_long_dot_product_of_i8_extremes_is_exact() {
    // 4096 products of 127 * 127 = 16129 sum to 66,064,384: far past i16, exact in i32.
    let g = graph("a: i8[1,4096], b: i8[4096,1]", "matmul(a, b)", "i32[1,1]");
    let out = eval1(&g, &[("a", &[127.0; 4096]), ("b", &[127.0; 4096])]);
    assert_exact(&out, &[1, 1], &[66_064_384.0]);
    // -128 * -128 = 16384 (the largest product), and -128 * 127 = -16256 (the smallest).
    let g = graph("a: i8[2,4096], b: i8[4096,1]", "matmul(a, b)", "i32[2,1]");
    let a: Vec<f64> = [-128.0; 4096].into_iter().chain([127.0; 4096]).collect();
    let out = eval1(&g, &[("a", &a), ("b", &[-128.0; 4096])]);
    assert_exact(&out, &[2, 1], &[67_108_864.0, -66_584_576.0]);
}

#[test]
fn sums_wrap_in_twos_complement_only_past_i32() {
    // 131072 * 16384 = 2^31, one past i32::MAX: it wraps to i32::MIN; a bias of -1 brings the
    // exact sum back to i32::MAX, so the wrap applies to the whole sum, not to a partial one.
    let g = graph("x: i8[1,131072], w: i8[2,131072], b: i32[2]", "linear(x, w, b)", "i32[1,2]");
    let out = eval1(&g, &[("x", &[-128.0; 131072]), ("w", &[-128.0; 2 * 131072]), ("b", &[0.0, -1.0])]);
    assert_exact(&out, &[1, 2], &[-2_147_483_648.0, 2_147_483_647.0]);
}

#[test]
fn matmul_transposes_and_broadcasts_i8_batches() {
    // a^T with a = [[1, 2, 3], [4, 5, 6]], times b = [[1], [-1]] per batch of b (a broadcast).
    let g = graph("a: i8[2,3], b: i8[2,2,1]", "matmul(a, b, transpose_a=true)", "i32[2,3,1]");
    let out = eval1(&g, &[("a", &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]), ("b", &[1.0, -1.0, -2.0, 0.0])]);
    assert_exact(&out, &[2, 3, 1], &[-3.0, -3.0, -3.0, -2.0, -4.0, -6.0]);
    // a @ b^T: rows of a against rows of b.
    let g = graph("a: i8[1,2], b: i8[3,2]", "matmul(a, b, transpose_b=true)", "i32[1,3]");
    let out = eval1(&g, &[("a", &[-128.0, 127.0]), ("b", &[1.0, 1.0, -128.0, 0.0, 0.0, -128.0])]);
    assert_exact(&out, &[1, 3], &[-1.0, 16384.0, -16256.0]);
}

#[test]
fn linear_adds_an_i32_bias_per_output() {
    // x = [1, -2, 3]; w rows [1, 1, 1], [-128, 0, 127], [2, 2, 2]; b = [10, 0, -7].
    let g = graph("x: i8[3], w: i8[3,3], b: i32[3]", "linear(x, w, b)", "i32[3]");
    let w = [1.0, 1.0, 1.0, -128.0, 0.0, 127.0, 2.0, 2.0, 2.0];
    let out = eval1(&g, &[("x", &[1.0, -2.0, 3.0]), ("w", &w), ("b", &[10.0, 0.0, -7.0])]);
    assert_exact(&out, &[3], &[12.0, 253.0, -3.0]);
}

#[test]
fn conv2d_with_negative_weights_and_a_bias() {
    // x = 1..9 as 3x3, w = [[-1, 2], [-3, 4]]: (0,0) is -1*1 + 2*2 - 3*4 + 4*5 = 11, then 13,
    // 17, 19; the bias -100 is added to each.
    let g = graph("x: i8[1,1,3,3], w: i8[1,1,2,2], b: i32[1]", "conv2d(x, w, b)", "i32[1,1,2,2]");
    let out = eval1(
        &g,
        &[
            ("x", &iota(9).iter().map(|v| v + 1.0).collect::<Vec<_>>()),
            ("w", &[-1.0, 2.0, -3.0, 4.0]),
            ("b", &[-100.0]),
        ],
    );
    assert_exact(&out, &[1, 1, 2, 2], &[-89.0, -87.0, -83.0, -81.0]);
}

#[test]
fn conv2d_groups_strides_and_padding_in_i8() {
    // Two groups of one channel, 1x1 kernels -128 and 127.
    let g = graph("x: i8[1,2,2,2], w: i8[2,1,1,1]", "conv2d(x, w, groups=2)", "i32[1,2,2,2]");
    let x = [-128.0, -128.0, 1.0, 2.0, 127.0, -128.0, 0.0, 1.0];
    let out = eval1(&g, &[("x", &x), ("w", &[-128.0, 127.0])]);
    assert_exact(&out, &[1, 2, 2, 2], &[16384.0, 16384.0, -128.0, -256.0, 16129.0, -16256.0, 0.0, 127.0]);
    // A 3x3 kernel of -1 with stride 2 over a padded 3x3 input of 1..9: the padding adds 0.
    // Window (0,0) covers x[0..2, 0..2] = 1+2+4+5; (0,1) covers columns 1..3: 2+3+5+6; (1,0)
    // rows 1..3: 4+5+7+8; (1,1): 5+6+8+9.
    let g =
        graph("x: i8[1,1,3,3], w: i8[1,1,3,3]", "conv2d(x, w, stride=[2,2], pad=[1,1,1,1])", "i32[1,1,2,2]");
    let x: Vec<f64> = iota(9).iter().map(|v| v + 1.0).collect();
    let out = eval1(&g, &[("x", &x), ("w", &[-1.0; 9])]);
    assert_exact(&out, &[1, 1, 2, 2], &[-12.0, -16.0, -24.0, -28.0]);
}

#[test]
fn mixed_and_unsupported_dtypes_are_diagnosed() {
    let at = |inputs: &str, expr: &str| load_error(&graph(inputs, expr, "i32[2,2]")).message.clone();
    assert_eq!(
        at("a: i8[2,2], b: f32[2,2]", "matmul(a, b)"),
        "matmul: inputs `a` (i8) and `b` (f32) have different dtypes; both must be f32, or both i8"
    );
    assert_eq!(
        at("x: f32[2,2], w: i8[2,2]", "linear(x, w)"),
        "linear: inputs `x` (f32) and `w` (i8) have different dtypes; both must be f32, or both i8"
    );
    assert_eq!(
        at("a: i32[2,2], b: i32[2,2]", "matmul(a, b)"),
        "matmul: inputs `a` and `b` have dtype i32, expected f32 or i8"
    );
    assert_eq!(
        at("x: i8[2,2], w: i8[2,2], b: f32[2]", "linear(x, w, b)"),
        "linear: the bias `b` has dtype f32, expected i32 (i8 operands accumulate in i32)"
    );
    assert_eq!(
        at("x: f32[1,1,2,2], w: f32[1,1,1,1], b: i32[1]", "conv2d(x, w, b)"),
        "conv2d: the bias `b` has dtype i32, expected f32 (f32 operands accumulate in f32)"
    );
    // The result type follows from the operands: an f32 annotation of an i8 product is wrong.
    let e = load_error(&graph("a: i8[2,2], b: i8[2,2]", "matmul(a, b)", "f32[2,2]"));
    assert!(e.message.contains("i32[2,2]") && e.message.contains("f32[2,2]"), "{e}");
}
