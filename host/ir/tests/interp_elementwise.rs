//! The reference interpreter's elementwise operators (unary, binary with broadcasting, cast,
//! full) against hand-computed values. Transcendental values are the formula of the operator
//! (stated beside each) evaluated with Python's `math` module.

mod interp_util;
use interp_util::*;

const NAN: f64 = f64::NAN;
const INF: f64 = f64::INFINITY;

#[test]
fn relu_family_and_clip() {
    let xs = [-2.0, -0.5, 0.0, 1.5, 7.0];
    assert_close(&elementwise("relu(x)", "f32", &xs), &[5], &[0.0, 0.0, 0.0, 1.5, 7.0]);
    assert_close(&elementwise("relu6(x)", "f32", &xs), &[5], &[0.0, 0.0, 0.0, 1.5, 6.0]);
    assert_close(&elementwise("leaky_relu(x, alpha=0.1)", "f32", &xs), &[5], &[-0.2, -0.05, 0.0, 1.5, 7.0]);
    // Default alpha 0.01.
    assert_close(&elementwise("leaky_relu(x)", "f32", &[-3.0, 2.0]), &[2], &[-0.03, 2.0]);
    assert_close(&elementwise("clip(x, min=-1, max=2)", "f32", &xs), &[5], &[-1.0, -0.5, 0.0, 1.5, 2.0]);
    // Default bounds are infinite: the identity.
    assert_close(&elementwise("clip(x)", "f32", &xs), &[5], &xs);
    // NaN passes through relu and clip (PyTorch).
    assert_close(&elementwise("relu(x)", "f32", &[NAN]), &[1], &[NAN]);
    assert_close(&elementwise("clip(x, min=0, max=1)", "f32", &[NAN]), &[1], &[NAN]);
}

#[test]
fn gelu_both_forms() {
    let xs = [-1.0, 0.0, 1.0, 2.0];
    // 0.5 x (1 + erf(x / sqrt 2)), i.e. x * Phi(x).
    let erf_form = [-0.15865525393145707, 0.0, 0.8413447460685429, 1.9544997361036416];
    assert_close(&elementwise("gelu(x)", "f32", &xs), &[4], &erf_form);
    assert_close(&elementwise("gelu(x, approximate=none)", "f32", &xs), &[4], &erf_form);
    // 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
    let tanh_form = [-0.15880800939172324, 0.0, 0.8411919906082768, 1.954597694087775];
    assert_close(&elementwise("gelu(x, approximate=tanh)", "f32", &xs), &[4], &tanh_form);
}

#[test]
fn sigmoid_family() {
    // sigmoid(x) = 1 / (1 + exp(-x)).
    assert_close(
        &elementwise("sigmoid(x)", "f32", &[-1.0, 0.0, 2.0]),
        &[3],
        &[0.2689414213699951, 0.5, 0.8807970779778823],
    );
    // silu(x) = x * sigmoid(x).
    assert_close(
        &elementwise("silu(x)", "f32", &[-2.0, -0.5, 0.0, 1.5]),
        &[4],
        &[-0.2384058440442351, -0.1887703343990727, 0.0, 1.2263617142904655],
    );
    assert_close(
        &elementwise("tanh(x)", "f32", &[-1.0, 0.5]),
        &[2],
        &[-0.7615941559557649, 0.46211715726000974],
    );
    // hardswish(x) = x * relu6(x + 3) / 6: 0 below -3, x above 3, x(x+3)/6 between.
    assert_close(
        &elementwise("hardswish(x)", "f32", &[-4.0, -3.0, -1.0, 1.0, 3.0, 4.0]),
        &[6],
        &[0.0, 0.0, -1.0 / 3.0, 2.0 / 3.0, 3.0, 4.0],
    );
    // hardsigmoid(x) = relu6(x + 3) / 6.
    assert_close(
        &elementwise("hardsigmoid(x)", "f32", &[-4.0, -1.0, 0.0, 3.0, 5.0]),
        &[5],
        &[0.0, 1.0 / 3.0, 0.5, 1.0, 1.0],
    );
}

#[test]
fn softplus_and_elu() {
    // log(1 + exp(x)) below the threshold 20, x above it.
    assert_close(
        &elementwise("softplus(x)", "f32", &[-1.0, 0.0, 1.0, 25.0]),
        &[4],
        &[0.31326168751822286, std::f64::consts::LN_2, 1.3132616875182228, 25.0],
    );
    // beta=2, threshold=1: 2*0.25 = 0.5 <= 1 gives log(1 + exp(0.5)) / 2; 2*1 > 1 gives 1.
    assert_close(
        &elementwise("softplus(x, beta=2, threshold=1)", "f32", &[0.25, 1.0]),
        &[2],
        &[0.48703849209005334, 1.0],
    );
    // elu: x above 0, alpha * (exp(x) - 1) otherwise.
    assert_close(&elementwise("elu(x)", "f32", &[-1.0, 0.0, 2.0]), &[3], &[-0.6321205588285577, 0.0, 2.0]);
    assert_close(&elementwise("elu(x, alpha=0.5)", "f32", &[-2.0]), &[1], &[-0.43233235838169365]);
}

#[test]
fn exp_log_sqrt_abs_neg() {
    assert_close(&elementwise("exp(x)", "f32", &[0.0, 1.0]), &[2], &[1.0, std::f64::consts::E]);
    assert_close(
        &elementwise("log(x)", "f32", &[1.0, std::f64::consts::E, 0.0, -1.0]),
        &[4],
        &[0.0, 1.0, -INF, NAN],
    );
    assert_close(&elementwise("sqrt(x)", "f32", &[4.0, 0.25, -1.0]), &[3], &[2.0, 0.5, NAN]);
    assert_close(&elementwise("rsqrt(x)", "f32", &[4.0, 0.25, 0.0]), &[3], &[0.5, 2.0, INF]);
    assert_close(&elementwise("abs(x)", "f32", &[-2.5, 3.0]), &[2], &[2.5, 3.0]);
    assert_close(&elementwise("neg(x)", "f32", &[-2.5, 3.0]), &[2], &[2.5, -3.0]);
}

#[test]
fn i32_unary_ops_wrap() {
    let min = f64::from(i32::MIN);
    assert_exact(&elementwise("relu(x)", "i32", &[-3.0, 0.0, 5.0]), &[3], &[0.0, 0.0, 5.0]);
    // abs and neg of i32::MIN overflow and wrap back to i32::MIN.
    assert_exact(&elementwise("abs(x)", "i32", &[-7.0, min]), &[2], &[7.0, min]);
    assert_exact(&elementwise("neg(x)", "i32", &[5.0, min]), &[2], &[-5.0, min]);
    assert_exact(&elementwise("clip(x, min=-1, max=3)", "i32", &[-5.0, 2.0, 9.0]), &[3], &[-1.0, 2.0, 3.0]);
    // A bound beyond the i32 range saturates to it (it does not wrap).
    let max = f64::from(i32::MAX);
    assert_exact(&elementwise("clip(x, min=3000000000)", "i32", &[0.0, -7.0]), &[2], &[max, max]);
}

#[test]
fn evaluation_stays_in_f64() {
    // 0.1 + 0.2 in f64 is 0.30000000000000004; a detour through f32 would give 0.30000001192...
    let g = "graph g(a: f32[1], b: f32[1]) -> (y: f32[1]) {\n  %0 = add(a, b)\n  return %0\n}\n";
    assert_eq!(eval1(g, &[("a", &[0.1]), ("b", &[0.2])]).data, [0.30000000000000004]);
}

fn binary_graph(op: &str, a: &str, b: &str, out: &str) -> String {
    format!("graph g(a: {a}, b: {b}) -> (y: {out}) {{\n  %0 = {op}(a, b)\n  return %0\n}}\n")
}

#[test]
fn binary_ops_on_equal_shapes() {
    let (a, b) = ([1.0, -2.0, 3.0, 8.0], [4.0, 5.0, -6.0, 0.5]);
    let run = |op: &str| eval1(&binary_graph(op, "f32[4]", "f32[4]", "f32[4]"), &[("a", &a), ("b", &b)]);
    assert_close(&run("add"), &[4], &[5.0, 3.0, -3.0, 8.5]);
    assert_close(&run("sub"), &[4], &[-3.0, -7.0, 9.0, 7.5]);
    assert_close(&run("mul"), &[4], &[4.0, -10.0, -18.0, 4.0]);
    assert_close(&run("div"), &[4], &[0.25, -0.4, -0.5, 16.0]);
    assert_close(&run("max"), &[4], &[4.0, 5.0, 3.0, 8.0]);
    assert_close(&run("min"), &[4], &[1.0, -2.0, -6.0, 0.5]);
}

#[test]
fn float_division_by_zero_and_nan_propagation() {
    let g = binary_graph("div", "f32[3]", "f32[3]", "f32[3]");
    assert_close(&eval1(&g, &[("a", &[1.0, -1.0, 0.0]), ("b", &[0.0; 3])]), &[3], &[INF, -INF, NAN]);
    // max/min propagate NaN from either side (PyTorch's maximum/minimum).
    let g = binary_graph("max", "f32[3]", "f32[3]", "f32[3]");
    assert_close(&eval1(&g, &[("a", &[1.0, NAN, 3.0]), ("b", &[2.0, 2.0, NAN])]), &[3], &[2.0, NAN, NAN]);
    let g = binary_graph("min", "f32[2]", "f32[2]", "f32[2]");
    assert_close(&eval1(&g, &[("a", &[NAN, 1.0]), ("b", &[2.0, NAN])]), &[2], &[NAN, NAN]);
}

#[test]
fn pow_follows_ieee() {
    let g = binary_graph("pow", "f32[5]", "f32[5]", "f32[5]");
    // 2^3, 9^0.5, (-2)^2, 0^0 = 1, and a negative base with a fractional exponent is NaN.
    let out = eval1(&g, &[("a", &[2.0, 9.0, -2.0, 0.0, -8.0]), ("b", &[3.0, 0.5, 2.0, 0.0, 1.0 / 3.0])]);
    assert_close(&out, &[5], &[8.0, 3.0, 4.0, 1.0, NAN]);
}

#[test]
fn broadcast_size_one_against_matrix() {
    // [1] stretches over [2,3].
    let g = binary_graph("add", "f32[1]", "f32[2,3]", "f32[2,3]");
    let out = eval1(&g, &[("a", &[10.0]), ("b", &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0])]);
    assert_close(&out, &[2, 3], &[11.0, 12.0, 13.0, 14.0, 15.0, 16.0]);
}

#[test]
fn broadcast_column_against_row() {
    // [3,1] * [1,4] -> [3,4], out[i,j] = a[i] * b[j].
    let g = binary_graph("mul", "f32[3,1]", "f32[1,4]", "f32[3,4]");
    let out = eval1(&g, &[("a", &[1.0, 2.0, 3.0]), ("b", &[10.0, 20.0, 30.0, 40.0])]);
    #[rustfmt::skip]
    let want = [
        10.0, 20.0, 30.0, 40.0,
        20.0, 40.0, 60.0, 80.0,
        30.0, 60.0, 90.0, 120.0,
    ];
    assert_close(&out, &[3, 4], &want);
}

#[test]
fn broadcast_extends_rank_on_the_left() {
    // [2,3] + [3]: the row is added to each row.
    let g = binary_graph("add", "f32[2,3]", "f32[3]", "f32[2,3]");
    let out = eval1(&g, &[("a", &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]), ("b", &[100.0, 200.0, 300.0])]);
    assert_close(&out, &[2, 3], &[101.0, 202.0, 303.0, 104.0, 205.0, 306.0]);

    // [2,1,3] - [4,1] -> [2,4,3], out[i,j,k] = a[i,k] - b[j]; the smaller operand on the right.
    let g = binary_graph("sub", "f32[2,1,3]", "f32[4,1]", "f32[2,4,3]");
    let out = eval1(&g, &[("a", &iota(6)), ("b", &[0.0, 10.0, 20.0, 30.0])]);
    #[rustfmt::skip]
    let want = [
        0.0, 1.0, 2.0,  -10.0, -9.0, -8.0,  -20.0, -19.0, -18.0,  -30.0, -29.0, -28.0,
        3.0, 4.0, 5.0,  -7.0, -6.0, -5.0,   -17.0, -16.0, -15.0,  -27.0, -26.0, -25.0,
    ];
    assert_close(&out, &[2, 4, 3], &want);
}

#[test]
fn i32_add_sub_mul_wrap() {
    let (max, min) = (f64::from(i32::MAX), f64::from(i32::MIN));
    let run = |op: &str, a: &[f64], b: &[f64]| {
        eval1(&binary_graph(op, "i32[3]", "i32[3]", "i32[3]"), &[("a", a), ("b", b)])
    };
    assert_exact(&run("add", &[max, 1.0, -5.0], &[1.0, 2.0, 3.0]), &[3], &[min, 3.0, -2.0]);
    assert_exact(&run("sub", &[min, 1.0, max], &[1.0, 2.0, -1.0]), &[3], &[max, -1.0, min]);
    // 65536^2 = 2^32 wraps to 0; 46341^2 = 2147488281 wraps to 2147488281 - 2^32 = -2147479015.
    assert_exact(
        &run("mul", &[65536.0, 46341.0, -3.0], &[65536.0, 46341.0, 4.0]),
        &[3],
        &[0.0, -2147479015.0, -12.0],
    );
}

#[test]
fn i32_div_truncates_toward_zero() {
    let g = binary_graph("div", "i32[5]", "i32[5]", "i32[5]");
    let min = f64::from(i32::MIN);
    let out = eval1(&g, &[("a", &[7.0, -7.0, 7.0, -7.0, min]), ("b", &[2.0, 2.0, -2.0, -2.0, -1.0])]);
    // i32::MIN / -1 = 2^31 wraps back to i32::MIN.
    assert_exact(&out, &[5], &[3.0, -3.0, -3.0, 3.0, min]);
}

#[test]
fn i32_max_min_broadcast() {
    let g = binary_graph("max", "i32[2,2]", "i32[2]", "i32[2,2]");
    let out = eval1(&g, &[("a", &[1.0, 9.0, -4.0, 3.0]), ("b", &[2.0, 5.0])]);
    assert_exact(&out, &[2, 2], &[2.0, 9.0, 2.0, 5.0]);
    let g = binary_graph("min", "i32[2,2]", "i32[2]", "i32[2,2]");
    let out = eval1(&g, &[("a", &[1.0, 9.0, -4.0, 3.0]), ("b", &[2.0, 5.0])]);
    assert_exact(&out, &[2, 2], &[1.0, 5.0, -4.0, 3.0]);
}

#[test]
fn cast_truncates_saturates_and_zeroes_nan() {
    let g = "graph g(x: f32[8]) -> (y: i32[8]) {\n  %0 = cast(x, dtype=i32)\n  return %0\n}\n";
    let out = eval1(g, &[("x", &[2.7, -2.7, 3e9, -3e9, NAN, INF, -INF, -0.5])]);
    let (max, min) = (f64::from(i32::MAX), f64::from(i32::MIN));
    assert_exact(&out, &[8], &[2.0, -2.0, max, min, 0.0, max, min, 0.0]);
    assert_eq!(out.ty.dtype, ekb_ir::DType::I32);

    let g = "graph g(x: i32[2]) -> (y: f32[2]) {\n  %0 = cast(x, dtype=f32)\n  return %0\n}\n";
    let out = eval1(g, &[("x", &[5.0, -3.0])]);
    assert_exact(&out, &[2], &[5.0, -3.0]);
    assert_eq!(out.ty.dtype, ekb_ir::DType::F32);
}

#[test]
fn full_makes_constants() {
    let g = "graph g() -> (y: f32[2,2]) {\n  %0 = full(shape=[2,2], value=1.5)\n  return %0\n}\n";
    assert_exact(&eval1(g, &[]), &[2, 2], &[1.5; 4]);
    let g = "graph g() -> (y: i32[3]) {\n  %0 = full(shape=[3], value=-4, dtype=i32)\n  return %0\n}\n";
    let out = eval1(g, &[]);
    assert_exact(&out, &[3], &[-4.0; 3]);
    assert_eq!(out.ty.dtype, ekb_ir::DType::I32);
}

#[test]
fn nodes_chain_in_order() {
    // y = relu(x * w + b) with a constant from `full`; two outputs in declaration order.
    let g = "graph g(x: f32[3], w: f32[3]) -> (y: f32[3], z: f32[3]) {
  %b = full(shape=[3], value=-1)
  %0 = mul(x, w)
  %1 = add(%0, %b)
  %2 = relu(%1)
  return %2, %0
}
";
    let outs = try_eval(g, &[("x", &[1.0, 2.0, 3.0]), ("w", &[2.0, 0.25, -1.0])]).unwrap();
    assert_eq!(outs.len(), 2);
    assert_close(&outs[0], &[3], &[1.0, 0.0, 0.0]);
    assert_close(&outs[1], &[3], &[2.0, 0.5, -3.0]);
}

#[test]
fn run_seeded_feeds_the_generated_inputs_and_parameters() {
    let g = load(
        "graph g(x: f32[4]) -> (y: f32[4]) {
  param w: f32[4] = const(2)
  param b: f32[4] = ones
  %0 = mul(x, w)
  %1 = add(%0, b)
  return %1
}
",
    );
    let inputs = ekb_ir::l0::inputs::generate_tensors(&g, 42).unwrap();
    let x = &inputs["x"].data;
    // x comes from uniform(-1, 1): y = 2x + 1 lies in [-1, 3) and is not constant.
    let want: Vec<f64> = x.iter().map(|v| 2.0 * v + 1.0).collect();
    let out = ekb_ir::l0::interp::run_seeded(&g, 42).unwrap();
    assert_close(&out[0], &[4], &want);
    assert!(x.iter().all(|v| (-1.0..1.0).contains(v)) && x[0] != x[1], "{x:?}");
    // Another seed, other data.
    assert_ne!(ekb_ir::l0::interp::run_seeded(&g, 43).unwrap()[0].data, out[0].data);
}
