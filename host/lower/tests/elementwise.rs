//! Elementwise operators lowered under both schedules match the L0 reference: every unary
//! operator with its attributes (f32, and i32 where allowed), binary operators over several
//! broadcast patterns, cast and full.

mod support;
use support::*;

const X: &str = "x: f32[3,70] = uniform(-4, 4)";
const POS: &str = "x: f32[3,70] = uniform(0.1, 3)";

#[test]
fn unary_activations() {
    for call in [
        "relu(x)",
        "relu6(x)",
        "leaky_relu(x)",
        "leaky_relu(x, alpha=0.2)",
        "gelu(x)",
        "gelu(x, approximate=tanh)",
        "silu(x)",
        "sigmoid(x)",
        "tanh(x)",
        "hardswish(x)",
        "hardsigmoid(x)",
        "softplus(x)",
        "softplus(x, beta=2, threshold=1)",
        "elu(x)",
        "elu(x, alpha=0.5)",
        "exp(x)",
        "abs(x)",
        "neg(x)",
        "clip(x, min=-0.5, max=0.25)",
        "clip(x, min=0)",
        "clip(x, max=0.3)",
        "clip(x)",
    ] {
        check_op(X, call);
    }
}

#[test]
fn unary_on_positive_inputs() {
    for call in ["log(x)", "sqrt(x)", "rsqrt(x)"] {
        check_op(POS, call);
    }
}

#[test]
fn unary_i32() {
    for call in ["relu(x)", "abs(x)", "neg(x)", "clip(x, min=-3, max=4)", "clip(x, min=2)"] {
        check_op("x: i32[4,9] = randint(-10, 10)", call);
    }
}

#[test]
fn unary_of_scalar_and_large_tensors() {
    check_op("x: f32[]", "gelu(x)");
    // Large enough for threads (> 64K element operations) under the default schedule.
    check_op("x: f32[4,128,130]", "relu(x)");
    // A single long row: the default schedule splits it into parallel chunks.
    check_op("x: f32[1,70001]", "sigmoid(x)");
    check_op("x: f32[70001]", "neg(x)");
}

#[test]
fn binary_same_shape() {
    for op in ["add", "sub", "mul", "max", "min"] {
        check_op("a: f32[3,5], b: f32[3,5]", &format!("{op}(a, b)"));
    }
    check_op("a: f32[3,5], b: f32[3,5] = uniform(0.5, 2)", "div(a, b)");
    check_op("a: f32[3,5] = uniform(0.1, 2), b: f32[3,5]", "pow(a, b)");
}

#[test]
fn binary_broadcast_patterns() {
    for (a, b) in [
        ("f32[2,3,4]", "f32[4]"),
        ("f32[4]", "f32[2,3,4]"),
        ("f32[2,1,4]", "f32[3,1]"),
        ("f32[1]", "f32[2,3]"),
        ("f32[]", "f32[3]"),
        ("f32[5,1,1]", "f32[1,6,7]"),
        ("f32[64,1100]", "f32[1100]"),
    ] {
        check_op(&format!("a: {a}, b: {b} = uniform(0.5, 2)"), "sub(a, b)");
        check_op(&format!("a: {a}, b: {b} = uniform(0.5, 2)"), "div(a, b)");
    }
    check_op("a: f32[2,1,4] = uniform(0.1, 2), b: f32[3,1]", "pow(a, b)");
}

#[test]
fn binary_i32() {
    let inputs = "a: i32[3,4] = randint(-20, 20), b: i32[4] = randint(1, 6)";
    for op in ["add", "sub", "mul", "div", "max", "min"] {
        check_op(inputs, &format!("{op}(a, b)"));
    }
    // Division truncates toward zero for negative numerators and divisors too.
    check_op("a: i32[3,4] = randint(-20, 20), b: i32[3,1] = randint(-6, -1)", "div(a, b)");
}

#[test]
fn cast_both_ways_and_full() {
    check_op("x: f32[5,6] = uniform(-10, 10)", "cast(x, dtype=i32)");
    check_op("x: i32[5,6] = randint(-100, 100)", "cast(x, dtype=f32)");
    check_op("x: f32[5,6]", "cast(x, dtype=f32)");
    check_op("", "full(shape=[2,3], value=2.5, dtype=f32)");
    check_op("", "full(shape=[4], value=-7, dtype=i32)");
    check_op("", "full(shape=[], value=1.5)");
    check_op("", "full(shape=[300,300], value=0.25)");
}
