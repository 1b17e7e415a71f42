//! Shape and type inference per operator family, against hand-computed shapes.

use ekb_ir::l0::ops::infer;
use ekb_ir::l0::parse::parse;
use ekb_ir::l0::print::print;
use ekb_ir::l0::Op;
use ekb_ir::Span;
use ekb_ir::{DType, SourceFile, TensorType};

/// Infers the type of `node` (an op call such as `relu(x)`) over the declared `inputs`
/// (`x: f32[2,3], w: f32[3]`); `Err` holds the diagnostic's message.
fn infer_node(inputs: &str, node: &str) -> Result<TensorType, String> {
    let text = format!("graph t({inputs}) -> (o: f32[1]) {{\n  %0 = {node}\n  return %0\n}}\n");
    let g = parse(&SourceFile::new("t.ekir", text)).map_err(|d| d.message.clone())?;
    let n = &g.nodes[0];
    let types: Vec<&TensorType> =
        n.args.iter().map(|a| g.type_of(&a.name).expect("declared input")).collect();
    infer(&n.op, &types, n.op_span).map_err(|d| d.message.clone())
}

#[track_caller]
fn shape(inputs: &str, node: &str) -> Vec<usize> {
    match infer_node(inputs, node) {
        Ok(t) => t.shape,
        Err(e) => panic!("{node}: {e}"),
    }
}

#[track_caller]
fn error(inputs: &str, node: &str) -> String {
    match infer_node(inputs, node) {
        Ok(t) => panic!("{node}: expected an error, inferred {t}"),
        Err(e) => e,
    }
}

#[test]
fn conv2d_output_sizes() {
    // (224 + 3 + 3 - 7) / 2 + 1 = 112
    assert_eq!(
        shape("x: f32[1,3,224,224], w: f32[64,3,7,7]", "conv2d(x, w, stride=[2,2], pad=[3,3,3,3])"),
        [1, 64, 112, 112]
    );
    // dilation 2, kernel 3: effective 5; (56 + 4 - 5) / 1 + 1 = 56
    assert_eq!(
        shape("x: f32[2,8,56,56], w: f32[8,8,3,3]", "conv2d(x, w, pad=[2,2,2,2], dilation=[2,2])"),
        [2, 8, 56, 56]
    );
    // H: (10 + 0 + 1 - 4) / 3 + 1 = 3;  W: dilation 3, kernel 3: effective 7; (10 + 2 + 0 - 7) / 3 + 1 = 2
    assert_eq!(
        shape(
            "x: f32[1,2,10,10], w: f32[5,2,4,3]",
            "conv2d(x, w, stride=[3,3], pad=[0,2,1,0], dilation=[1,3])"
        ),
        [1, 5, 3, 2]
    );
    // Depthwise: groups = channels, w.shape[1] = 1; no padding: 8 - 3 + 1 = 6
    assert_eq!(
        shape("x: f32[1,6,8,8], w: f32[6,1,3,3], b: f32[6]", "conv2d(x, w, b, groups=6)"),
        [1, 6, 6, 6]
    );
    // Grouped with a channel multiplier: 4 channels, 2 groups -> w.shape[1] = 2, 6 outputs
    assert_eq!(shape("x: f32[1,4,5,5], w: f32[6,2,1,1]", "conv2d(x, w, groups=2)"), [1, 6, 5, 5]);
    // 1x1 kernel with stride 2 on an odd size: (7 - 1) / 2 + 1 = 4
    assert_eq!(shape("x: f32[1,1,7,7], w: f32[1,1,1,1]", "conv2d(x, w, stride=[2,2])"), [1, 1, 4, 4]);
}

#[test]
fn conv2d_errors() {
    assert_eq!(
        error("x: f32[1,4,5,5], w: f32[6,2,1,1]", "conv2d(x, w, groups=3)"),
        "conv2d: input has 4 channels but weight expects 6 (= w.shape[1] * groups)"
    );
    assert_eq!(
        error("x: f32[1,4,5,5], w: f32[5,2,1,1]", "conv2d(x, w, groups=2)"),
        "conv2d: output channels 5 (w.shape[0]) are not divisible by groups=2"
    );
    assert_eq!(
        error("x: f32[1,1,4,4], w: f32[1,1,3,3]", "conv2d(x, w, dilation=[2,1])"),
        "conv2d: the kernel height 3 (dilation 2) does not fit the padded input height 4"
    );
    assert_eq!(
        error("x: f32[1,1,4,4], w: f32[1,1,3,3], b: f32[2]", "conv2d(x, w, b)"),
        "conv2d: b has shape [2], expected [1]"
    );
    assert_eq!(
        error("x: f32[1,4,4], w: f32[1,1,3,3]", "conv2d(x, w)"),
        "conv2d: `x` has rank 3, expected 4 ([N,C,H,W])"
    );
}

#[test]
fn pooling_output_sizes() {
    // The stride defaults to the kernel: (10 - 3) / 3 + 1 = 3, and the printer writes it out.
    assert_eq!(shape("x: f32[1,2,10,10]", "max_pool2d(x, kernel=[3,3])"), [1, 2, 3, 3]);
    let g = parse(&SourceFile::new(
        "t.ekir",
        "graph t(x: f32[1,2,10,10]) -> (y: f32[1,2,3,3]) {\n  %0 = max_pool2d(x, kernel=[3,3])\n  return %0\n}\n",
    ))
    .unwrap();
    assert!(print(&g).contains("max_pool2d(x, kernel=[3,3], stride=[3,3], pad=[0,0,0,0])"));
    // (7 + 1 + 1 - 3) / 2 + 1 = 4
    assert_eq!(
        shape("x: f32[2,3,7,7]", "max_pool2d(x, kernel=[3,3], stride=[2,2], pad=[1,1,1,1])"),
        [2, 3, 4, 4]
    );
    // H: (6 + 1 + 0 - 2) / 1 + 1 = 6; W: (9 - 4) / 2 + 1 = 3
    assert_eq!(
        shape(
            "x: f32[1,1,6,9]",
            "avg_pool2d(x, kernel=[2,4], stride=[1,2], pad=[1,0,0,0], count_include_pad=false)"
        ),
        [1, 1, 6, 3]
    );
    assert_eq!(shape("x: f32[3,5,7,2]", "global_avg_pool2d(x)"), [3, 5, 1, 1]);
    assert_eq!(
        error("x: f32[1,1,4,4]", "avg_pool2d(x, kernel=[2,3], pad=[0,2,0,0])"),
        "avg_pool2d: pad left 2 is more than half the kernel width 3"
    );
    assert_eq!(
        error("x: f32[1,1,2,2]", "max_pool2d(x, kernel=[3,3])"),
        "max_pool2d: the kernel height 3 is larger than the padded input height 2"
    );
}

#[test]
fn broadcasting() {
    assert_eq!(shape("a: f32[5,1,3], b: f32[4,1]", "add(a, b)"), [5, 4, 3]);
    assert_eq!(shape("a: f32[], b: f32[2]", "mul(a, b)"), [2]);
    assert_eq!(shape("a: f32[1], b: f32[0]", "sub(a, b)"), [0]);
    assert_eq!(shape("a: i32[2,1,1,7], b: i32[3,1]", "max(a, b)"), [2, 1, 3, 7]);
    assert_eq!(
        error("a: f32[2,3], b: f32[3,2]", "div(a, b)"),
        "div: shapes [2,3] and [3,2] cannot be broadcast: dimension 2 from the end is 2 vs 3"
    );
    assert_eq!(error("a: i32[2], b: i32[2]", "pow(a, b)"), "pow: input `a` has dtype i32, expected f32");
}

#[test]
fn matmul_batch_broadcast_and_transposes() {
    assert_eq!(shape("a: f32[2,1,3,4], b: f32[5,4,6]", "matmul(a, b)"), [2, 5, 3, 6]);
    assert_eq!(shape("a: f32[4,3], b: f32[4,5]", "matmul(a, b, transpose_a=true)"), [3, 5]);
    assert_eq!(shape("a: f32[7,2], b: f32[5,7]", "matmul(a, b, transpose_a=true, transpose_b=true)"), [2, 5]);
    assert_eq!(
        error("a: f32[2,3,4], b: f32[3,4,5]", "matmul(a, b)"),
        "matmul: batch dimensions cannot be broadcast: dimension 1 from the end is 2 vs 3"
    );
    assert_eq!(
        error("a: f32[4], b: f32[4,5]", "matmul(a, b)"),
        "matmul: `a` has rank 1, expected at least 2"
    );
    assert_eq!(shape("x: f32[2,7,5], w: f32[8,5], b: f32[8]", "linear(x, w, b)"), [2, 7, 8]);
    assert_eq!(shape("x: f32[5], w: f32[3,5]", "linear(x, w)"), [3]);
    assert_eq!(
        error("x: f32[2,4], w: f32[8,5]", "linear(x, w)"),
        "linear: x has 4 input features but w has shape [8,5] (expected [out, 4])"
    );
}

#[test]
fn slice_negatives_and_clamping() {
    let x = "x: f32[10,4]";
    let s = |starts: i64, ends: i64, steps: i64| {
        shape(x, &format!("slice(x, axes=[0], starts=[{starts}], ends=[{ends}], steps=[{steps}])"))[0]
    };
    assert_eq!(s(-3, 9223372036854775807, 1), 3); // 7..10
    assert_eq!(s(-100, 2, 1), 2); // clamped to 0..2
    assert_eq!(s(5, 2, 1), 0); // empty
    assert_eq!(s(0, 10, 3), 4); // 0, 3, 6, 9
    assert_eq!(s(-1, -100, 1), 0); // 9..0: empty
    assert_eq!(s(2, -2, 2), 3); // 2..8: 2, 4, 6
    assert_eq!(s(0, 100, 9223372036854775807), 1);
    assert_eq!(
        shape(x, "slice(x, axes=[-1,0], starts=[1,0], ends=[3,1])"),
        [1, 2],
        "steps default to 1 and negative axes count from the end"
    );
    assert_eq!(
        error(x, "slice(x, axes=[1,-1], starts=[0,0], ends=[1,1])"),
        "slice: axis -1 is listed twice in `axes` (it is axis 1)"
    );
    assert_eq!(
        error(x, "slice(x, axes=[2], starts=[0], ends=[1])"),
        "slice: axis 2 is out of range for rank 2"
    );
}

#[test]
fn reshape_transpose_concat_pad_cast_full() {
    let x = "x: f32[2,3,4]";
    assert_eq!(shape(x, "reshape(x, shape=[-1])"), [24]);
    assert_eq!(shape(x, "reshape(x, shape=[3,-1,2])"), [3, 4, 2]);
    assert_eq!(shape(x, "reshape(x, shape=[1,24,1])"), [1, 24, 1]);
    assert_eq!(
        error(x, "reshape(x, shape=[-1,5])"),
        "reshape: cannot reshape [2,3,4] (24 elements) to [-1,5]"
    );
    assert_eq!(shape(x, "transpose(x, perm=[1,2,0])"), [3, 4, 2]);
    assert_eq!(error(x, "transpose(x, perm=[1,0])"), "transpose: `perm` has 2 entries but x has rank 3");
    assert_eq!(
        error(x, "transpose(x, perm=[0,1,3])"),
        "transpose: `perm` entry 3 is out of range for rank 3"
    );
    assert_eq!(shape("a: f32[2,3,4], b: f32[2,5,4]", "concat(a, b, a, axis=-2)"), [2, 11, 4]);
    assert_eq!(
        error("a: f32[2,3,4], b: f32[2,5,3]", "concat(a, b, axis=1)"),
        "concat: input 1 has shape [2,5,3] but input 0 has [2,3,4]; all dims except axis 1 must be equal"
    );
    assert_eq!(
        error("a: f32[2], b: i32[2]", "concat(a, b, axis=0)"),
        "concat: input 1 has dtype i32 but input 0 has f32"
    );
    // ONNX order: begins for every axis, then ends.
    assert_eq!(shape(x, "pad(x, pads=[1,0,2,0,3,4])"), [3, 6, 10]);
    assert_eq!(shape(x, "pad(x, pads=[0,2,3,0,2,3], mode=reflect)"), [2, 7, 10]);
    assert_eq!(
        error(x, "pad(x, pads=[0,0,0,0,0,4], mode=reflect)"),
        "pad: reflect padding of axis 2 (0 before, 4 after) must be less than its size 4"
    );
    assert_eq!(
        error(x, "pad(x, pads=[1,1,1,1])"),
        "pad: `pads` has 4 entries, expected 6 (all begins, then all ends, for rank 3)"
    );
    assert_eq!(
        error("k: i32[3]", "pad(k, pads=[1,1], value=0.5)"),
        "pad: `value` = 0.5 is not an i32, but the input is i32"
    );
    assert_eq!(infer_node(x, "cast(x, dtype=i32)").unwrap(), TensorType::new(DType::I32, [2, 3, 4]));
    assert_eq!(infer_node("", "full(shape=[3,1], value=-2)").unwrap(), TensorType::new(DType::F32, [3, 1]));
    assert_eq!(
        error("", "full(shape=[2], value=0.5, dtype=i32)"),
        "full: `value` = 0.5 is not an i32, but `dtype` is i32"
    );
}

#[test]
fn reductions_softmax_argmax() {
    let x = "x: f32[2,3,4,5]";
    assert_eq!(shape(x, "sum(x, axes=[0,-1])"), [3, 4]);
    assert_eq!(shape(x, "max(x, axes=[-3], keepdims=true)"), [2, 1, 4, 5]);
    assert_eq!(shape(x, "mean(x, axes=[0,1,2,3])"), Vec::<usize>::new());
    assert_eq!(infer_node(x, "argmax(x, axis=-2)").unwrap(), TensorType::new(DType::I32, [2, 3, 5]));
    assert_eq!(
        infer_node("k: i32[6]", "argmax(k, axis=0, keepdims=true)").unwrap(),
        TensorType::new(DType::I32, [1])
    );
    assert_eq!(infer_node("k: i32[6,2]", "min(k, axes=[1])").unwrap(), TensorType::new(DType::I32, [6]));
    assert_eq!(error("k: i32[6]", "mean(k, axes=[0])"), "mean: input `x` has dtype i32, expected f32");
    assert_eq!(error(x, "softmax(x, axis=4)"), "softmax: axis 4 is out of range for rank 4");
    assert_eq!(error("s: f32[]", "log_softmax(s)"), "log_softmax: axis -1 is out of range for rank 0");
    assert_eq!(shape(x, "log_softmax(x, axis=-4)"), [2, 3, 4, 5]);
    // An empty axis has a sum (0) but no extreme value.
    assert_eq!(shape("e: f32[0,2]", "sum(e, axes=[0])"), [2]);
    assert_eq!(error("e: f32[0,2]", "min(e, axes=[0])"), "min: axis 0 has size 0, so there is no minimum");
    assert_eq!(
        error("e: f32[2,0]", "argmax(e, axis=1)"),
        "argmax: axis 1 has size 0, so there is no maximum"
    );
}

#[test]
fn norms() {
    let x = "x: f32[2,4,6], w: f32[4,6], b: f32[4,6], v: f32[6]";
    assert_eq!(shape(x, "layer_norm(x, w, b)"), [2, 4, 6]);
    assert_eq!(shape(x, "rms_norm(x, v)"), [2, 4, 6]);
    assert_eq!(error(x, "layer_norm(x, v, b)"), "layer_norm: bias has shape [4,6] but weight has shape [6]");
    assert_eq!(
        error("x: f32[2,4,6], w: f32[4]", "rms_norm(x, w)"),
        "rms_norm: weight has shape [4] but the last 1 dims of x are [6]"
    );
    let bn = "x: f32[2,3,5], g: f32[3], h: f32[4]";
    assert_eq!(shape(bn, "batch_norm(x, g, g, g, g, eps=0.001)"), [2, 3, 5]);
    assert_eq!(
        error(bn, "batch_norm(x, g, g, h, g)"),
        "batch_norm: `mean` has shape [4] but x has 3 channels, expected [3]"
    );
}

#[test]
fn unary_dtypes() {
    assert_eq!(infer_node("k: i32[3]", "relu(k)").unwrap(), TensorType::new(DType::I32, [3]));
    assert_eq!(
        infer_node("k: i32[3]", "clip(k, min=-2, max=inf)").unwrap(),
        TensorType::new(DType::I32, [3])
    );
    assert_eq!(error("k: i32[3]", "sigmoid(k)"), "sigmoid: input `x` has dtype i32, expected f32");
    assert_eq!(shape("s: f32[]", "gelu(s, approximate=tanh)"), Vec::<usize>::new());
}

#[test]
fn arity_is_checked_for_graphs_built_in_code() {
    let t = TensorType::new(DType::F32, [2, 3]);
    let d = infer(&Op::Linear, &[&t], Span::new(4, 10)).unwrap_err();
    assert_eq!(d.message, "`linear` takes 2 or 3 inputs (x, w[, b]), found 1");
    assert_eq!(d.span, Some(Span::new(4, 10)));
}
