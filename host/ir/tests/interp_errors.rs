//! The reference interpreter's diagnostics: missing, unknown and mistyped inputs, i32 division
//! by zero, an unchecked graph, and a checked type that disagrees with what the operator computes.

mod interp_util;
use ekb_ir::l0::interp;
use ekb_ir::tensor::Tensor;
use ekb_ir::types::{DType, TensorType};
use interp_util::*;

const ADD: &str = "graph g(x: f32[2], y: f32[2]) -> (z: f32[2]) {
  %0 = add(x, y)
  return %0
}
";

#[test]
fn missing_input_is_named_with_its_type() {
    let d = try_eval(ADD, &[("x", &[1.0, 2.0])]).unwrap_err();
    assert!(d.message.contains("missing input `y`"), "{d}");
    assert_eq!(d.expected.as_deref(), Some("a tensor `y: f32[2]` among the inputs"));
    // The declaration of `y` is on line 1.
    assert_eq!(d.location.as_ref().map(|l| l.line), Some(1), "{d}");
}

#[test]
fn missing_parameter_is_named() {
    let g = load(
        "graph g(x: f32[2]) -> (z: f32[2]) {
  param w: f32[2] = ones
  %0 = mul(x, w)
  return %0
}
",
    );
    let d = interp::run(&g, &feed(&g, &[("x", &[1.0, 2.0])])).unwrap_err();
    assert!(d.message.contains("missing parameter `w`"), "{d}");
}

#[test]
fn mistyped_input_names_both_types() {
    let g = load(ADD);
    let mut inputs = feed(&g, &[("x", &[1.0, 2.0]), ("y", &[3.0, 4.0])]);
    inputs.insert("y".into(), Tensor { ty: TensorType::new(DType::F32, [3]), data: vec![0.0; 3] });
    let d = interp::run(&g, &inputs).unwrap_err();
    assert!(d.message.contains("`y` is given as `f32[3]` but the graph declares `f32[2]`"), "{d}");

    inputs.insert("y".into(), Tensor { ty: TensorType::new(DType::I32, [2]), data: vec![0.0; 2] });
    let d = interp::run(&g, &inputs).unwrap_err();
    assert!(d.message.contains("given as `i32[2]`"), "{d}");

    // The right type with the wrong number of values.
    inputs.insert("y".into(), Tensor { ty: TensorType::new(DType::F32, [2]), data: vec![0.0; 5] });
    let d = interp::run(&g, &inputs).unwrap_err();
    assert!(d.message.contains("holds 5 values"), "{d}");
}

#[test]
fn non_integral_i32_input_is_refused() {
    let g = "graph g(x: i32[2]) -> (y: i32[2]) {\n  %0 = neg(x)\n  return %0\n}\n";
    let d = try_eval(g, &[("x", &[1.0, 2.5])]).unwrap_err();
    assert!(d.message.contains("`x` is i32 but holds the value 2.5"), "{d}");
    let d = try_eval(g, &[("x", &[1.0, 3e9])]).unwrap_err();
    assert!(d.message.contains("holds the value 3000000000"), "{d}");
}

#[test]
fn unknown_input_gets_a_hint() {
    let g = load(ADD);
    let mut inputs = feed(&g, &[("x", &[1.0, 2.0]), ("y", &[3.0, 4.0])]);
    inputs.insert("yy".into(), Tensor { ty: TensorType::new(DType::F32, [2]), data: vec![0.0; 2] });
    let d = interp::run(&g, &inputs).unwrap_err();
    assert!(d.message.contains("unexpected input `yy`"), "{d}");
    assert_eq!(d.hint.as_deref(), Some("did you mean `y`?"));
    // A misspelt name shows up as the missing one, with the hint to the given name.
    let mut inputs = feed(&g, &[("x", &[1.0, 2.0])]);
    inputs.insert("Y".into(), Tensor { ty: TensorType::new(DType::F32, [2]), data: vec![0.0; 2] });
    let d = interp::run(&g, &inputs).unwrap_err();
    assert!(d.message.contains("missing input `y`"), "{d}");
    assert_eq!(d.hint.as_deref(), Some("did you mean `Y`?"));
}

#[test]
fn i32_division_by_zero_names_the_node_and_element() {
    let g = "graph g(a: i32[3], b: i32[3]) -> (y: i32[3]) {
  %0 = add(a, b)
  %q = div(a, b)
  return %q
}
";
    let d = try_eval(g, &[("a", &[1.0, 2.0, 3.0]), ("b", &[1.0, 0.0, 1.0])]).unwrap_err();
    assert!(d.message.contains("`%q` (div)"), "{d}");
    assert!(d.message.contains("i32 division by zero at output index [1]"), "{d}");
    assert_eq!(d.location.as_ref().map(|l| l.line), Some(3), "{d}");
    // No error when no divisor is zero.
    assert!(try_eval(g, &[("a", &[1.0, 2.0, 3.0]), ("b", &[1.0, 2.0, 1.0])]).is_ok());
}

#[test]
fn unchecked_graph_is_refused() {
    let mut g = load(ADD);
    g.nodes[0].ty = None;
    let inputs = feed(&g, &[("x", &[1.0, 2.0]), ("y", &[3.0, 4.0])]);
    let d = interp::run(&g, &inputs).unwrap_err();
    assert!(d.message.contains("must be checked"), "{d}");
}

#[test]
fn checked_type_disagreeing_with_the_operator_is_reported() {
    let mut g = load(ADD);
    g.nodes[0].ty = Some(TensorType::new(DType::F32, [3]));
    g.outputs[0].ty = TensorType::new(DType::F32, [3]);
    let inputs = feed(&g, &[("x", &[1.0, 2.0]), ("y", &[3.0, 4.0])]);
    let d = interp::run(&g, &inputs).unwrap_err();
    assert!(d.message.contains("the checked type is `f32[3]` but the operator computes `f32[2]`"), "{d}");
}

#[test]
fn graph_built_without_the_checker_gets_diagnostics_not_panics() {
    // An out-of-range axis that the checker would have refused.
    let mut g = load("graph g(x: f32[2,3]) -> (y: f32[2]) {\n  %0 = sum(x, axes=[1])\n  return %0\n}\n");
    if let ekb_ir::l0::Op::Reduce { axes, .. } = &mut g.nodes[0].op {
        axes[0] = 2;
    }
    let inputs = feed(&g, &[("x", &iota(6))]);
    let d = interp::run(&g, &inputs).unwrap_err();
    assert!(d.message.contains("axis 2 is out of range for rank 2"), "{d}");
    assert_eq!(d.expected.as_deref(), Some("an axis in -2..1"));
    // An input the operator cannot take.
    let mut g =
        load("graph g(x: f32[2]) -> (y: f32[2]) {\n  %0 = full(shape=[2], value=1)\n  return %0\n}\n");
    let x = ekb_ir::l0::ValueRef { name: "x".into(), span: ekb_ir::Span::NONE };
    g.nodes[0].args.push(x);
    let d = interp::run(&g, &feed(&g, &[("x", &[0.0, 0.0])])).unwrap_err();
    assert!(d.message.contains("takes 0 inputs, got 1"), "{d}");
}
