//! The reference interpreter's reductions, argmax, softmax and normalisations against
//! hand-computed values.

mod interp_util;
use interp_util::*;

const NAN: f64 = f64::NAN;

fn unary_graph(input: &str, expr: &str, out: &str) -> String {
    format!("graph g(x: {input}) -> (y: {out}) {{\n  %0 = {expr}\n  return %0\n}}\n")
}

/// `[[1,2,3],[4,5,6]]`.
const M23: [f64; 6] = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];

#[test]
fn sum_over_each_axis() {
    let run = |expr: &str, out: &str| eval1(&unary_graph("f32[2,3]", expr, out), &[("x", &M23)]);
    assert_close(&run("sum(x, axes=[0])", "f32[3]"), &[3], &[5.0, 7.0, 9.0]);
    assert_close(&run("sum(x, axes=[1])", "f32[2]"), &[2], &[6.0, 15.0]);
    // Negative axis counts from the end; keepdims keeps a 1.
    assert_close(&run("sum(x, axes=[-1], keepdims=true)", "f32[2,1]"), &[2, 1], &[6.0, 15.0]);
    assert_close(&run("sum(x, axes=[-2], keepdims=true)", "f32[1,3]"), &[1, 3], &[5.0, 7.0, 9.0]);
    // All axes: a scalar, or [1,1] with keepdims.
    assert_close(&run("sum(x, axes=[0,1])", "f32[]"), &[], &[21.0]);
    assert_close(&run("sum(x, axes=[1,-2], keepdims=true)", "f32[1,1]"), &[1, 1], &[21.0]);
}

#[test]
fn sum_over_two_of_three_axes() {
    // x[i,j,k] = 12i + 4j + k; summing over i in 0..2 and k in 0..4 gives
    // 4*(0+12) + 8*4j + 2*(0+1+2+3) = 60 + 32j.
    let x = iota(24);
    let g = unary_graph("f32[2,3,4]", "sum(x, axes=[0,2])", "f32[3]");
    assert_close(&eval1(&g, &[("x", &x)]), &[3], &[60.0, 92.0, 124.0]);
    let g = unary_graph("f32[2,3,4]", "sum(x, axes=[2,0], keepdims=true)", "f32[1,3,1]");
    assert_close(&eval1(&g, &[("x", &x)]), &[1, 3, 1], &[60.0, 92.0, 124.0]);
    // Over the middle axis: out[i,k] = 3*(12i + k) + 4*(0+1+2) = 36i + 3k + 12.
    let g = unary_graph("f32[2,3,4]", "sum(x, axes=[1])", "f32[2,4]");
    assert_close(&eval1(&g, &[("x", &x)]), &[2, 4], &[12.0, 15.0, 18.0, 21.0, 48.0, 51.0, 54.0, 57.0]);
}

#[test]
fn mean_max_min() {
    let run = |expr: &str, out: &str| eval1(&unary_graph("f32[2,3]", expr, out), &[("x", &M23)]);
    assert_close(&run("mean(x, axes=[1])", "f32[2]"), &[2], &[2.0, 5.0]);
    assert_close(&run("mean(x, axes=[0], keepdims=true)", "f32[1,3]"), &[1, 3], &[2.5, 3.5, 4.5]);
    assert_close(&run("mean(x, axes=[0,1])", "f32[]"), &[], &[3.5]);
    assert_close(&run("max(x, axes=[0])", "f32[3]"), &[3], &[4.0, 5.0, 6.0]);
    assert_close(&run("min(x, axes=[-1])", "f32[2]"), &[2], &[1.0, 4.0]);
    // Unsorted values, so the first or last element is not simply the answer.
    let g = unary_graph("f32[5]", "max(x, axes=[0])", "f32[]");
    assert_close(&eval1(&g, &[("x", &[3.0, -1.0, 9.0, 2.0, 9.0])]), &[], &[9.0]);
    let g = unary_graph("f32[5]", "min(x, axes=[0])", "f32[]");
    assert_close(&eval1(&g, &[("x", &[3.0, -1.0, 9.0, -7.0, 9.0])]), &[], &[-7.0]);
    // NaN propagates through max (PyTorch's amax).
    let g = unary_graph("f32[3]", "max(x, axes=[0])", "f32[]");
    assert_close(&eval1(&g, &[("x", &[1.0, NAN, 3.0])]), &[], &[NAN]);
}

#[test]
fn i32_sum_wraps_and_max_is_exact() {
    let max = f64::from(i32::MAX);
    let g = unary_graph("i32[2]", "sum(x, axes=[0])", "i32[]");
    assert_exact(&eval1(&g, &[("x", &[max, 1.0])]), &[], &[f64::from(i32::MIN)]);
    // The running sum wraps and unwraps: (2^31 - 1) + 1 - 1 = 2^31 - 1.
    let g = unary_graph("i32[3]", "sum(x, axes=[0])", "i32[]");
    assert_exact(&eval1(&g, &[("x", &[max, 1.0, -1.0])]), &[], &[max]);
    let g = unary_graph("i32[2,2]", "max(x, axes=[1])", "i32[2]");
    assert_exact(&eval1(&g, &[("x", &[-5.0, -9.0, 4.0, 8.0])]), &[2], &[-5.0, 8.0]);
}

#[test]
fn argmax_takes_the_first_maximum() {
    // [[1,3,3,2],[5,-1,5,7]]: ties resolve to the first index.
    let x = [1.0, 3.0, 3.0, 2.0, 5.0, -1.0, 5.0, 7.0];
    let run = |expr: &str, out: &str| eval1(&unary_graph("f32[2,4]", expr, out), &[("x", &x)]);
    let out = run("argmax(x, axis=1)", "i32[2]");
    assert_exact(&out, &[2], &[1.0, 3.0]);
    assert_eq!(out.ty.dtype, ekb_ir::DType::I32);
    assert_exact(&run("argmax(x, axis=0)", "i32[4]"), &[4], &[1.0, 0.0, 1.0, 1.0]);
    assert_exact(&run("argmax(x, axis=-1, keepdims=true)", "i32[2,1]"), &[2, 1], &[1.0, 3.0]);
    // All equal: index 0.
    let g = unary_graph("f32[3]", "argmax(x, axis=0)", "i32[]");
    assert_exact(&eval1(&g, &[("x", &[2.0, 2.0, 2.0])]), &[], &[0.0]);
    // NaN counts as the maximum, and the first NaN wins (PyTorch).
    let g = unary_graph("f32[4]", "argmax(x, axis=0)", "i32[]");
    assert_exact(&eval1(&g, &[("x", &[1.0, NAN, 5.0, NAN])]), &[], &[1.0]);
    // i32 input, along the middle of three axes. The columns x[i,:,k] are
    // (0,0): [0,-2,4] -> 2; (0,1): [9,-3,5] -> 0; (1,0): [6,8,8] -> 1 (tie); (1,1): [7,-9,11] -> 2.
    let g = unary_graph("i32[2,3,2]", "argmax(x, axis=1)", "i32[2,2]");
    let x = [0.0, 9.0, -2.0, -3.0, 4.0, 5.0, 6.0, 7.0, 8.0, -9.0, 8.0, 11.0];
    assert_exact(&eval1(&g, &[("x", &x)]), &[2, 2], &[2.0, 0.0, 1.0, 2.0]);
}

#[test]
fn softmax_hand_computed() {
    // softmax([1,2,3]) = exp(x - 3) / sum(exp(x - 3)), sum = 1 + e^-1 + e^-2.
    let want = [0.09003057317038046, 0.24472847105479764, 0.6652409557748218];
    let g = unary_graph("f32[3]", "softmax(x)", "f32[3]");
    assert_close(&eval1(&g, &[("x", &[1.0, 2.0, 3.0])]), &[3], &want);
    // Subtracting the max keeps large inputs finite: the same result.
    assert_close(&eval1(&g, &[("x", &[1001.0, 1002.0, 1003.0])]), &[3], &want);
    // A -inf logit gets probability 0.
    let g = unary_graph("f32[2]", "softmax(x)", "f32[2]");
    assert_close(&eval1(&g, &[("x", &[0.0, f64::NEG_INFINITY])]), &[2], &[1.0, 0.0]);
    // log_softmax = x - 3 - log(1 + e^-1 + e^-2).
    let g = unary_graph("f32[3]", "log_softmax(x, axis=0)", "f32[3]");
    let want = [-2.4076059644443806, -1.4076059644443804, -0.4076059644443804];
    assert_close(&eval1(&g, &[("x", &[1.0, 2.0, 3.0])]), &[3], &want);
}

#[test]
fn softmax_rows_sum_to_one_along_the_chosen_axis() {
    let x = [0.5, -1.0, 2.0, 3.0, 0.0, -2.0];
    for (axis, rows, stride, len) in [(-1, [0, 3], 1, 3), (1, [0, 3], 1, 3), (0, [0, 1], 3, 2)] {
        let g = unary_graph("f32[2,3]", &format!("softmax(x, axis={axis})"), "f32[2,3]");
        let out = eval1(&g, &[("x", &x)]);
        for start in rows {
            let s: f64 = (0..len).map(|k| out.data[start + k * stride]).sum();
            assert!((s - 1.0).abs() < 1e-12, "axis {axis}: a row sums to {s}");
        }
        if axis == 0 {
            // Along axis 0 the column [0.5, 3.0] gives 1 / (1 + e^2.5) and e^2.5 / (1 + e^2.5).
            assert!((out.data[0] - 1.0 / (1.0 + 2.5f64.exp())).abs() < 1e-15);
        } else {
            // Along the row [0.5, -1, 2]: e^0.5 / (e^0.5 + e^-1 + e^2).
            let e = |v: f64| v.exp();
            assert!((out.data[0] - e(0.5) / (e(0.5) + e(-1.0) + e(2.0))).abs() < 1e-15);
        }
    }
}

#[test]
fn layer_norm_over_last_dim() {
    // [1,2,3,4]: mean 2.5, biased variance 1.25; with eps=0 the row becomes
    // [-1.5,-0.5,0.5,1.5] / sqrt(1.25); then * w + b.
    let g = "graph g(x: f32[1,4], w: f32[4], b: f32[4]) -> (y: f32[1,4]) {
  %0 = layer_norm(x, w, b, eps=0)
  return %0
}
";
    let out = eval1(g, &[("x", &[1.0, 2.0, 3.0, 4.0]), ("w", &[1.0; 4]), ("b", &[0.0; 4])]);
    let (a, c) = (1.3416407864998738, 0.4472135954999579); // 1.5 / sqrt(1.25), 0.5 / sqrt(1.25)
    assert_close(&out, &[1, 4], &[-a, -c, c, a]);
    let out = eval1(
        g,
        &[("x", &[1.0, 2.0, 3.0, 4.0]), ("w", &[2.0, 1.0, 1.0, -1.0]), ("b", &[0.0, 0.0, 1.0, 1.0])],
    );
    assert_close(&out, &[1, 4], &[-2.0 * a, -c, c + 1.0, 1.0 - a]);
}

#[test]
fn layer_norm_eps_and_two_trailing_dims() {
    // [0,2]: mean 1, variance 1; eps=3 gives 1/sqrt(4) = 0.5.
    let g = "graph g(x: f32[2], w: f32[2], b: f32[2]) -> (y: f32[2]) {
  %0 = layer_norm(x, w, b, eps=3)
  return %0
}
";
    assert_close(
        &eval1(g, &[("x", &[0.0, 2.0]), ("w", &[1.0, 1.0]), ("b", &[0.0, 0.0])]),
        &[2],
        &[-0.5, 0.5],
    );

    // Weight [2,2] normalises each [2,2] block: [1,3,1,3] (mean 2, var 1) -> [-1,1,-1,1] and
    // [0,0,4,4] (mean 2, var 4) -> [-1,-1,1,1]; then * [1,2,3,4] + [0,0,0,10].
    let g = "graph g(x: f32[2,2,2], w: f32[2,2], b: f32[2,2]) -> (y: f32[2,2,2]) {
  %0 = layer_norm(x, w, b, eps=0)
  return %0
}
";
    let x = [1.0, 3.0, 1.0, 3.0, 0.0, 0.0, 4.0, 4.0];
    let out = eval1(g, &[("x", &x), ("w", &[1.0, 2.0, 3.0, 4.0]), ("b", &[0.0, 0.0, 0.0, 10.0])]);
    assert_close(&out, &[2, 2, 2], &[-1.0, 2.0, -3.0, 14.0, -1.0, -2.0, 3.0, 14.0]);
}

#[test]
fn layer_norm_default_eps_is_1e_minus_5() {
    // [0,2]: variance 1, so the scale is 1/sqrt(1 + 1e-5).
    let g = "graph g(x: f32[2], w: f32[2], b: f32[2]) -> (y: f32[2]) {
  %0 = layer_norm(x, w, b)
  return %0
}
";
    let s = 1.0 / (1.0f64 + 1e-5).sqrt();
    assert_close(&eval1(g, &[("x", &[0.0, 2.0]), ("w", &[1.0, 1.0]), ("b", &[0.0, 0.0])]), &[2], &[-s, s]);
}

#[test]
fn rms_norm() {
    // [1,-1,3,-3]: mean of squares 5; eps=4 gives sqrt(9) = 3; then * [3,3,1,2].
    let g = "graph g(x: f32[2,4], w: f32[4]) -> (y: f32[2,4]) {
  %0 = rms_norm(x, w, eps=4)
  return %0
}
";
    // Second row [2,-2,2,-2]: mean of squares 4, sqrt(4 + 4) = 2 sqrt 2.
    let x = [1.0, -1.0, 3.0, -3.0, 2.0, -2.0, 2.0, -2.0];
    let r = 1.0 / 2.0f64.sqrt();
    let out = eval1(g, &[("x", &x), ("w", &[3.0, 3.0, 1.0, 2.0])]);
    assert_close(&out, &[2, 4], &[1.0, -1.0, 1.0, -2.0, 3.0 * r, -3.0 * r, r, -2.0 * r]);
}

#[test]
fn batch_norm_per_channel() {
    // Channel 0: (x - 1) / sqrt(4) * 2 + 0; channel 1: (x - 3) / sqrt(0.25) * 1 + 1.
    let g = "graph g(x: f32[1,2,1,2], gamma: f32[2], beta: f32[2], mean: f32[2], var: f32[2]) -> (y: f32[1,2,1,2]) {
  %0 = batch_norm(x, gamma, beta, mean, var, eps=0)
  return %0
}
";
    let params: [(&str, &[f64]); 4] =
        [("gamma", &[2.0, 1.0]), ("beta", &[0.0, 1.0]), ("mean", &[1.0, 3.0]), ("var", &[4.0, 0.25])];
    let mut inputs = vec![("x", &[1.0, 2.0, 3.0, 5.0][..])];
    inputs.extend(params);
    assert_close(&eval1(g, &inputs), &[1, 2, 1, 2], &[0.0, 1.0, 1.0, 5.0]);

    // Rank 2: channels are the columns.
    let g = "graph g(x: f32[2,2], gamma: f32[2], beta: f32[2], mean: f32[2], var: f32[2]) -> (y: f32[2,2]) {
  %0 = batch_norm(x, gamma, beta, mean, var, eps=0)
  return %0
}
";
    let mut inputs = vec![("x", &[1.0, 3.0, 2.0, 5.0][..])];
    inputs.extend(params);
    assert_close(&eval1(g, &inputs), &[2, 2], &[0.0, 1.0, 1.0, 5.0]);
}
