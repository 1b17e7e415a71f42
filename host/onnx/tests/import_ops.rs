//! The importer on ONNX forms the exporter never writes (PyTorch's and other tools'): each model
//! below is built here, imported, run in the reference interpreter, and compared with onnxruntime
//! on the original model. Also the errors: unsupported operators (all listed at once), dynamic
//! shapes, corrupt protobufs, initializers of the wrong size, external data, old opsets.

use ekb_ir::l0::{interp, print::print};
use ekb_ir::tensor::{compare, write_npy, Tolerance};
use ekb_onnx::proto::{
    dtype, AttributeProto as A, Dimension, GraphProto, ModelProto, NodeProto, OperatorSetIdProto,
    StringStringEntryProto, TensorProto, TensorShapeProto, TypeProto, TypeTensor, ValueInfoProto,
};
use ekb_onnx::python::{require, run_ort, OrtJob};
use ekb_onnx::{import, npy, ImportOptions};

fn node(op: &str, ins: &[&str], out: &str, attrs: Vec<A>) -> NodeProto {
    NodeProto { name: format!("{op}_{out}"), ..NodeProto::new(op, ins, &[out], attrs) }
}

fn f32s(name: &str, dims: &[i64], v: &[f32]) -> TensorProto {
    TensorProto {
        name: name.into(),
        dims: dims.to_vec(),
        data_type: dtype::FLOAT,
        float_data: v.to_vec(),
        ..Default::default()
    }
}

/// An int64 tensor of any shape.
fn i64t(name: &str, dims: &[i64], v: &[i64]) -> TensorProto {
    TensorProto {
        name: name.into(),
        dims: dims.to_vec(),
        data_type: dtype::INT64,
        int64_data: v.to_vec(),
        ..Default::default()
    }
}

fn i64s(name: &str, v: &[i64]) -> TensorProto {
    TensorProto {
        name: name.into(),
        dims: vec![v.len() as i64],
        data_type: dtype::INT64,
        int64_data: v.to_vec(),
        ..Default::default()
    }
}

/// A deterministic f32 tensor in [-1, 1).
fn weights(name: &str, dims: &[i64]) -> TensorProto {
    let n: i64 = dims.iter().product();
    let v: Vec<f32> = (0..n).map(|i| ((i * 7919 % 1000) as f32 / 500.0) - 1.0).collect();
    f32s(name, dims, &v)
}

fn output(name: &str) -> ValueInfoProto {
    ValueInfoProto {
        name: name.into(),
        r#type: Some(TypeProto {
            tensor_type: Some(TypeTensor { elem_type: dtype::FLOAT, shape: None }),
            ..Default::default()
        }),
        doc_string: String::new(),
    }
}

fn model(
    opset: i64,
    inputs: &[(&str, &[usize])],
    inits: Vec<TensorProto>,
    nodes: Vec<NodeProto>,
    outs: &[&str],
) -> ModelProto {
    ModelProto {
        ir_version: match opset {
            21.. => 10,
            19.. => 9,
            _ => 8,
        },
        opset_import: vec![OperatorSetIdProto { domain: String::new(), version: opset }],
        graph: Some(GraphProto {
            node: nodes,
            name: "case".into(),
            initializer: inits,
            input: inputs.iter().map(|(n, d)| ValueInfoProto::tensor(n, dtype::FLOAT, d)).collect(),
            output: outs.iter().map(|o| output(o)).collect(),
            ..Default::default()
        }),
        ..Default::default()
    }
}

fn opts(name: &str) -> ImportOptions {
    ImportOptions { name: Some(name.into()), data_file: format!("{name}.bin"), ..Default::default() }
}

/// Models in the forms other exporters write, with the L0 operator each must become.
fn cases() -> Vec<(&'static str, ModelProto, &'static str)> {
    let x4: &[(&str, &[usize])] = &[("x", &[1, 3, 7, 9])];
    vec![
        (
            "gemm_scaled",
            model(
                17,
                &[("x", &[3, 4])],
                vec![weights("w", &[5, 4]), weights("c", &[3, 5])],
                vec![node(
                    "Gemm",
                    &["x", "w", "c"],
                    "y",
                    vec![A::float("alpha", 0.5), A::float("beta", 2.0), A::int("transB", 1)],
                )],
                &["y"],
            ),
            "matmul(x, w, transpose_a=false, transpose_b=true)",
        ),
        (
            "gemm_trans_a",
            model(
                17,
                &[("x", &[4, 3])],
                vec![weights("w", &[4, 5])],
                vec![node("Gemm", &["w", "x"], "y", vec![A::int("transA", 1)])],
                &["y"],
            ),
            "transpose_a=true",
        ),
        (
            "conv_same_upper",
            model(
                17,
                x4,
                vec![weights("w", &[4, 3, 3, 2])],
                vec![node(
                    "Conv",
                    &["x", "w"],
                    "y",
                    vec![A::string("auto_pad", "SAME_UPPER"), A::ints("strides", vec![2, 2])],
                )],
                &["y"],
            ),
            "pad=[1,0,1,1]",
        ),
        (
            "conv_same_lower_grouped",
            model(
                17,
                x4,
                vec![weights("w", &[6, 1, 3, 2])],
                vec![node(
                    "Conv",
                    &["x", "w"],
                    "y",
                    vec![
                        A::string("auto_pad", "SAME_LOWER"),
                        A::ints("strides", vec![1, 2]),
                        A::int("group", 3),
                    ],
                )],
                &["y"],
            ),
            "pad=[1,1,1,0], dilation=[1,1], groups=3",
        ),
        (
            "pool_ceil_and_avg",
            model(
                17,
                x4,
                vec![],
                vec![
                    node(
                        "MaxPool",
                        &["x"],
                        "m",
                        vec![
                            A::ints("kernel_shape", vec![2, 2]),
                            A::ints("strides", vec![2, 2]),
                            A::int("ceil_mode", 1),
                        ],
                    ),
                    node(
                        "AveragePool",
                        &["m"],
                        "y",
                        vec![A::ints("kernel_shape", vec![3, 3]), A::ints("pads", vec![1, 1, 1, 1])],
                    ),
                ],
                &["y"],
            ),
            "count_include_pad=false",
        ),
        (
            "flatten_squeeze_unsqueeze",
            model(
                13,
                x4,
                vec![i64s("ax", &[0, 3])],
                vec![
                    node("Flatten", &["x"], "f", vec![A::int("axis", 2)]),
                    node("Unsqueeze", &["f", "ax"], "u", vec![]),
                    node("Squeeze", &["u"], "y", vec![]),
                ],
                &["y"],
            ),
            "reshape(%u, shape=[3,63])",
        ),
        (
            // ONNX counts a negative Flatten axis from the end of the input's dims: -1 on
            // [2,3,4,5] flattens to [24,5] (it once gave [120,1]).
            "flatten_negative_axis",
            model(
                13,
                &[("x", &[2, 3, 4, 5])],
                vec![],
                vec![node("Flatten", &["x"], "y", vec![A::int("axis", -1)])],
                &["y"],
            ),
            "reshape(x, shape=[24,5])",
        ),
        (
            // Negative axes of every operator that takes one, each counted from the end as
            // ONNX defines it for that operator.
            "negative_axes",
            model(
                13,
                x4,
                vec![
                    i64t("last", &[], &[-1]),
                    i64s("minus3", &[-3]),
                    i64s("one", &[1]),
                    i64s("five", &[5]),
                    i64s("minus1", &[-1]),
                    i64s("idx", &[2, 0]),
                    weights("g", &[4, 2]),
                ],
                vec![
                    node("Softmax", &["x"], "s", vec![A::int("axis", -2)]),
                    node("CumSum", &["s", "last"], "c", vec![]),
                    node("ReduceSum", &["c", "minus3"], "r", vec![]),
                    node("Slice", &["r", "one", "five", "minus1"], "sl", vec![]),
                    node("Squeeze", &["sl", "minus3"], "q", vec![]),
                    node("Gather", &["q", "idx"], "ga", vec![A::int("axis", -2)]),
                    node("Unsqueeze", &["ga", "minus1"], "u", vec![]),
                    node("Concat", &["u", "u"], "cc", vec![A::int("axis", -1)]),
                    node("LayerNormalization", &["cc", "g"], "ln", vec![A::int("axis", -2)]),
                    node("Flatten", &["ln"], "y", vec![A::int("axis", -3)]),
                ],
                &["y"],
            ),
            "reshape(%ln, shape=[1,16])",
        ),
        (
            "shape_arithmetic",
            model(
                13,
                x4,
                vec![i64s("zero", &[0]), i64s("minus1", &[-1])],
                vec![
                    node("Shape", &["x"], "s", vec![]),
                    node("Gather", &["s", "zero"], "n", vec![A::int("axis", 0)]),
                    node("Concat", &["n", "minus1"], "shape", vec![A::int("axis", 0)]),
                    node("Reshape", &["x", "shape"], "y", vec![]),
                ],
                &["y"],
            ),
            "reshape(x, shape=[1,-1])",
        ),
        (
            "reshape_zero_copies",
            model(
                13,
                x4,
                vec![i64s("shape", &[0, 0, -1])],
                vec![node("Reshape", &["x", "shape"], "y", vec![])],
                &["y"],
            ),
            "shape=[1,3,-1]",
        ),
        (
            "slice_to_the_end",
            model(
                13,
                x4,
                vec![
                    i64s("s", &[1, -5]),
                    i64s("e", &[i64::MAX, 100]),
                    i64s("a", &[1, 3]),
                    i64s("st", &[1, 2]),
                ],
                vec![node("Slice", &["x", "s", "e", "a", "st"], "y", vec![])],
                &["y"],
            ),
            "ends=[9223372036854775807,100]",
        ),
        (
            "pad_with_axes",
            model(
                18,
                x4,
                vec![i64s("p", &[1, 2, 0, 3]), i64s("a", &[2, 3]), f32s("v", &[], &[0.5])],
                vec![node("Pad", &["x", "p", "v", "a"], "y", vec![])],
                &["y"],
            ),
            "pads=[0,0,1,2,0,0,0,3]",
        ),
        (
            "reduce_forms",
            model(
                13,
                x4,
                vec![i64s("ax", &[1, -1])],
                vec![
                    node("ReduceSum", &["x", "ax"], "s", vec![A::int("keepdims", 0)]),
                    node("ReduceMax", &["s"], "y", vec![A::int("keepdims", 1)]),
                ],
                &["y"],
            ),
            "max(%s, axes=[0,1], keepdims=true)",
        ),
        (
            "elementwise_forms",
            model(
                17,
                &[("x", &[2, 5])],
                vec![f32s("two", &[], &[2.0])],
                vec![
                    node("HardSigmoid", &["x"], "h", vec![A::float("alpha", 0.25)]),
                    node("Reciprocal", &["h"], "r", vec![]),
                    node("Softplus", &["x"], "sp", vec![]),
                    node("Constant", &[], "c", vec![A::float("value_float", 1.5)]),
                    node("Sum", &["r", "sp", "c"], "s", vec![]),
                    node("Max", &["s", "x", "two"], "y", vec![]),
                ],
                &["y"],
            ),
            "softplus(x, beta=1.0, threshold=20.0)",
        ),
        (
            "erf_gelu",
            model(
                13,
                &[("x", &[2, 6])],
                vec![
                    f32s("sq2", &[], &[std::f32::consts::SQRT_2]),
                    f32s("one", &[], &[1.0]),
                    f32s("half", &[], &[0.5]),
                ],
                vec![
                    node("Mul", &["x", "half"], "hx", vec![]),
                    node("Div", &["x", "sq2"], "d", vec![]),
                    node("Erf", &["d"], "e", vec![]),
                    node("Add", &["one", "e"], "a", vec![]),
                    node("Mul", &["hx", "a"], "y", vec![]),
                ],
                &["y"],
            ),
            "gelu(x, approximate=none)",
        ),
        (
            "matmul_vector_and_cast",
            model(
                13,
                &[("x", &[4, 3])],
                vec![weights("v", &[3])],
                vec![
                    node("MatMul", &["x", "v"], "m", vec![]),
                    node("Cast", &["m"], "i", vec![A::int("to", i64::from(dtype::INT32))]),
                    node("Cast", &["i"], "y", vec![A::int("to", i64::from(dtype::FLOAT))]),
                ],
                &["y"],
            ),
            "cast(%i, dtype=f32)",
        ),
        (
            "gelu_opset20",
            model(
                20,
                &[("x", &[3, 7])],
                vec![],
                vec![node("Gelu", &["x"], "y", vec![A::string("approximate", "tanh")])],
                &["y"],
            ),
            "gelu(x, approximate=tanh)",
        ),
        (
            "layer_norm_without_bias",
            model(
                17,
                &[("x", &[2, 3, 4])],
                vec![weights("g", &[3, 4])],
                vec![node(
                    "LayerNormalization",
                    &["x", "g"],
                    "y",
                    vec![A::int("axis", 1), A::float("epsilon", 1e-3)],
                )],
                &["y"],
            ),
            "layer_norm(x, g, %y_bias, eps=0.001)",
        ),
        (
            // PyTorch's masked fill: a boolean mask straight into Where, and a comparison cast
            // to float.
            "compare_where",
            model(
                17,
                &[("x", &[3, 4])],
                vec![f32s("zero", &[], &[0.0]), f32s("fill", &[], &[-1.0]), f32s("half", &[4], &[0.5, -0.5, 0.25, 0.0])],
                vec![
                    node("Less", &["x", "zero"], "m", vec![]),
                    node("Where", &["m", "fill", "x"], "w", vec![]),
                    node("GreaterOrEqual", &["x", "half"], "g", vec![]),
                    node("Cast", &["g"], "gf", vec![A::int("to", i64::from(dtype::FLOAT))]),
                    node("Equal", &["w", "fill"], "e", vec![]),
                    node("Where", &["e", "gf", "w"], "y", vec![]),
                ],
                &["y"],
            ),
            "%m: i32[3,4] = less(x, zero)",
        ),
        (
            // A cast to BOOL used only as a condition: the i32 passes through (nonzero is true).
            "bool_condition",
            model(
                17,
                &[("x", &[2, 5])],
                vec![f32s("three", &[], &[3.0])],
                vec![
                    node("Mul", &["x", "three"], "x3", vec![]),
                    node("Cast", &["x3"], "i", vec![A::int("to", i64::from(dtype::INT32))]),
                    node("Cast", &["i"], "b", vec![A::int("to", i64::from(dtype::BOOL))]),
                    node("Where", &["b", "x", "three"], "y", vec![]),
                ],
                &["y"],
            ),
            "where(%i, x, three)",
        ),
        (
            "sin_cos_range_expand",
            model(
                17,
                &[("x", &[3, 5])],
                vec![f32s("start", &[], &[0.5]), f32s("limit", &[], &[3.0]), f32s("delta", &[], &[0.5]), i64s("shape", &[3, 1])],
                vec![
                    node("Range", &["start", "limit", "delta"], "r", vec![]),
                    node("Expand", &["r", "shape"], "e", vec![]),
                    node("Sin", &["x"], "s", vec![]),
                    node("Cos", &["x"], "c", vec![]),
                    node("Mul", &["s", "e"], "se", vec![]),
                    node("Add", &["se", "c"], "y", vec![]),
                ],
                &["y"],
            ),
            "expand(r, shape=[3,5])",
        ),
        (
            // nn.Embedding (a float table, int64 ids) and a gather of a computed tensor.
            "gather_forms",
            model(
                13,
                &[("x", &[4, 3])],
                vec![weights("table", &[6, 4]), i64t("ids", &[2, 1], &[1, -2]), i64s("cols", &[2, -3, 1])],
                vec![
                    node("Gather", &["table", "ids"], "emb", vec![]),
                    node("Gather", &["x", "cols"], "picked", vec![A::int("axis", 1)]),
                    node("MatMul", &["emb", "picked"], "y", vec![]),
                ],
                &["y"],
            ),
            "gather(table, ids, axis=0)",
        ),
        (
            "cumsum_exclusive_reverse",
            model(
                14,
                &[("x", &[3, 6])],
                vec![i64t("axis", &[], &[-1])],
                vec![node("CumSum", &["x", "axis"], "y", vec![A::int("exclusive", 1), A::int("reverse", 1)])],
                &["y"],
            ),
            "cumsum(x, axis=-1, exclusive=true, reverse=true)",
        ),
        (
            // Opset 18 gives scale and bias per group: repeated per channel at import.
            "group_norm_opset18",
            model(
                18,
                &[("x", &[2, 4, 3, 3])],
                vec![f32s("gs", &[2], &[0.5, 2.0]), f32s("gb", &[2], &[0.25, -1.0])],
                vec![node("GroupNormalization", &["x", "gs", "gb"], "y", vec![A::int("num_groups", 2), A::float("epsilon", 1e-3)])],
                &["y"],
            ),
            "group_norm(x, gs_per_channel, gb_per_channel, groups=2, eps=0.001)",
        ),
        (
            "group_norm_opset21",
            model(
                21,
                &[("x", &[2, 6, 5])],
                vec![weights("cs", &[6]), weights("cb", &[6])],
                vec![node("GroupNormalization", &["x", "cs", "cb"], "y", vec![A::int("num_groups", 3)])],
                &["y"],
            ),
            "group_norm(x, cs, cb, groups=3, eps=1e-5)",
        ),
        (
            "conv_transpose",
            model(
                17,
                &[("x", &[1, 4, 3, 4])],
                vec![weights("w", &[4, 2, 3, 2]), weights("b", &[4])],
                vec![node(
                    "ConvTranspose",
                    &["x", "w", "b"],
                    "y",
                    vec![
                        A::ints("strides", vec![2, 2]),
                        A::ints("pads", vec![1, 0, 0, 1]),
                        A::ints("output_padding", vec![1, 0]),
                        A::ints("dilations", vec![1, 2]),
                        A::int("group", 2),
                    ],
                )],
                &["y"],
            ),
            "conv_transpose2d(x, w, b, stride=[2,2], pad=[1,0,0,1], output_padding=[1,0], dilation=[1,2], groups=2)",
        ),
        (
            // PyTorch's bilinear export: scales and `pytorch_half_pixel`.
            "resize_pytorch_bilinear",
            model(
                13,
                x4,
                vec![f32s("scales", &[4], &[1.0, 1.0, 2.0, 3.0])],
                vec![node(
                    "Resize",
                    &["x", "", "scales"],
                    "y",
                    vec![A::string("mode", "linear"), A::string("coordinate_transformation_mode", "pytorch_half_pixel")],
                )],
                &["y"],
            ),
            "resize(x, size=[14,27], mode=bilinear, align_corners=false)",
        ),
        (
            "resize_sizes_align_corners",
            model(
                18,
                x4,
                vec![i64s("sizes", &[4, 5])],
                vec![node(
                    "Resize",
                    &["x", "", "", "sizes"],
                    "y",
                    vec![
                        A::string("mode", "linear"),
                        A::string("coordinate_transformation_mode", "align_corners"),
                        A::ints("axes", vec![2, 3]),
                    ],
                )],
                &["y"],
            ),
            "resize(x, size=[4,5], mode=bilinear, align_corners=true)",
        ),
        (
            "resize_nearest_floor",
            model(
                13,
                x4,
                vec![f32s("scales", &[4], &[1.0, 1.0, 2.0, 1.0])],
                vec![node(
                    "Resize",
                    &["x", "", "scales"],
                    "y",
                    vec![
                        A::string("mode", "nearest"),
                        A::string("coordinate_transformation_mode", "asymmetric"),
                        A::string("nearest_mode", "floor"),
                    ],
                )],
                &["y"],
            ),
            "resize(x, size=[14,9], mode=nearest, align_corners=false)",
        ),
        (
            // A 1-D left operand (numpy's promotion), zero points given as int8 zeros.
            "matmul_integer_zero_points",
            model(
                17,
                &[("x", &[4])],
                vec![f32s("s", &[], &[0.01]), bytes("z", &[], &[0]), bytes("w", &[4, 3], &int8s(12))],
                vec![
                    node("QuantizeLinear", &["x", "s", "z"], "q", vec![]),
                    node("MatMulInteger", &["q", "w", "z", "z"], "m", vec![]),
                    node("Cast", &["m"], "y", vec![A::int("to", i64::from(dtype::FLOAT))]),
                ],
                &["y"],
            ),
            "matmul(%m_a2, w, transpose_a=false, transpose_b=false)",
        ),
        (
            "conv_integer_strided",
            model(
                17,
                x4,
                vec![f32s("s", &[], &[0.01]), bytes("z", &[], &[0]), bytes("w", &[4, 3, 3, 2], &int8s(72))],
                vec![
                    node("QuantizeLinear", &["x", "s", "z"], "q", vec![]),
                    node("ConvInteger", &["q", "w"], "c", vec![A::ints("strides", vec![2, 1])]),
                    node("Cast", &["c"], "y", vec![A::int("to", i64::from(dtype::FLOAT))]),
                ],
                &["y"],
            ),
            "conv2d(%q, w, stride=[2,1], pad=[0,0,0,0], dilation=[1,1], groups=1)",
        ),
    ]
}

/// An int8 (or, with `data_type`, uint8) tensor.
fn bytes(name: &str, dims: &[i64], v: &[i32]) -> TensorProto {
    TensorProto {
        name: name.into(),
        dims: dims.to_vec(),
        data_type: dtype::INT8,
        int32_data: v.to_vec(),
        ..Default::default()
    }
}

/// `n` deterministic int8 values covering both ends of the range.
fn int8s(n: i32) -> Vec<i32> {
    (0..n).map(|i| (i * 89 + 128) % 256 - 128).collect()
}

#[test]
fn other_exporters_forms_import_and_match_onnxruntime() {
    let cases = cases();
    let graphs = match_onnxruntime(cases.iter().map(|(name, m, _)| (*name, m.clone())).collect());
    for ((name, _, expect), g) in cases.iter().zip(graphs) {
        let text = print(&g);
        assert!(text.contains(expect), "{name}: expected `{expect}` in\n{text}");
    }
}

/// Imports each model, runs it in the reference interpreter on seed 0 and the original model in
/// onnxruntime on the same inputs, and checks that output `y` agrees (dtype, shape and values);
/// returns the imported graphs.
fn match_onnxruntime(models: Vec<(&str, ModelProto)>) -> Vec<ekb_ir::l0::Graph> {
    require(&["onnxruntime", "numpy"]).unwrap_or_else(|e| panic!("{e}"));
    let dir = tempfile::tempdir().unwrap();
    let mut jobs = Vec::new();
    let mut graphs = Vec::new();
    for (name, m) in models {
        let bytes = ekb_onnx::export::encode(&m);
        let g = import(&bytes, &opts(name)).unwrap_or_else(|d| panic!("{name}: {d}")).graph;
        let case = dir.path().join(name);
        std::fs::create_dir_all(&case).unwrap();
        std::fs::write(case.join("model.onnx"), &bytes).unwrap();
        for (n, b) in ekb_ir::l0::inputs::generate(&g, 0)
            .unwrap()
            .iter()
            .filter(|(n, _)| g.inputs.iter().any(|d| &d.name == n))
        {
            write_npy(&case.join(format!("input.{n}.npy")), b).unwrap();
        }
        jobs.push(OrtJob { model: case.join("model.onnx"), inputs: case.clone(), outputs: case.clone() });
        graphs.push((g, case));
    }
    run_ort(&jobs).unwrap_or_else(|e| panic!("{e}"));
    for (g, case) in &graphs {
        let want = interp::run_seeded(g, 0).unwrap_or_else(|d| panic!("{}: {d}", g.name));
        let got = npy::read(&case.join("output.y.npy")).unwrap();
        assert_eq!(got.ty, want[0].ty, "{}", g.name);
        compare(&want[0], &got.to_tensor(), Tolerance::default_for(got.ty.dtype))
            .unwrap_or_else(|m| panic!("{}: {m}", g.name));
    }
    graphs.into_iter().map(|(g, _)| g).collect()
}

#[test]
fn every_unsupported_node_is_listed_and_nothing_is_imported() {
    let m = model(
        17,
        &[("x", &[1, 2, 4, 4])],
        vec![weights("w", &[2, 2, 1, 1, 1]), i64s("sizes", &[1, 2, 8, 8])],
        vec![
            node("Resize", &["x", "", "", "sizes"], "r", vec![]),
            node("Elu", &["r"], "a", vec![A::float("alpha", 0.5), A::float("gamma", 1.0)]),
            node("Erf", &["x"], "e", vec![]),
            node(
                "MaxPool",
                &["x"],
                "m",
                vec![A::ints("kernel_shape", vec![2, 2]), A::ints("dilations", vec![2, 2])],
            ),
            node("LeakyRelu", &["x"], "l", vec![A::float("alpha", 0.1), A::float("gamma", 2.0)]),
            node("Add", &["a", "e"], "y", vec![]),
        ],
        &["y", "m", "l"],
    );
    let d = import(&ekb_onnx::export::encode(&m), &opts("bad")).unwrap_err();
    assert!(
        d.message.contains("5 nodes of the model use operators or attributes that L0 does not support"),
        "{}",
        d.message
    );
    let notes = d.notes.join("\n");
    for want in [
        "node `Resize_r` (Resize): `mode`=\"nearest\" with `coordinate_transformation_mode`=\"half_pixel\" is not supported (L0's nearest is PyTorch's: `asymmetric` coordinates, `floor`)",
        "node `Erf_e` (Erf): operator not supported by L0 (Erf is read only as part of GELU",
        "node `MaxPool_m` (MaxPool): `dilations` other than [1,1] are not supported",
        "node `LeakyRelu_l` (LeakyRelu): attribute `gamma` is not supported",
        "node `Elu_a` (Elu): attribute `gamma` is not supported",
    ] {
        assert!(notes.contains(want), "missing `{want}` in\n{notes}");
    }
    // A node downstream of a failure is checked too (Elu); the final Add, whose only problem is
    // its failed inputs, is not reported again.
    assert_eq!(d.notes.len(), 5, "{notes}");
}

#[test]
fn symbolic_dimensions_need_input_shape() {
    let symbolic = |nodes: Vec<NodeProto>, out: &str| {
        let mut m = model(17, &[("x", &[1, 4])], vec![], nodes, &[out]);
        let input = &mut m.graph.as_mut().unwrap().input[0];
        input.r#type.as_mut().unwrap().tensor_type.as_mut().unwrap().shape = Some(TensorShapeProto {
            dim: vec![
                Dimension { dim_value: None, dim_param: Some("batch".into()) },
                Dimension { dim_value: Some(4), dim_param: None },
            ],
        });
        ekb_onnx::export::encode(&m)
    };
    let with_erf = symbolic(vec![node("Relu", &["x"], "r", vec![]), node("Erf", &["r"], "y", vec![])], "y");
    let d = import(&with_erf, &opts("dyn")).unwrap_err();
    assert!(d.notes[0].contains("input `x` has a symbolic dimension `batch` (dimension 0)"), "{:?}", d.notes);
    assert!(d.notes[0].contains("--input-shape x=N,4"), "{:?}", d.notes);
    // The same report lists the unsupported operators too.
    assert!(d.notes[1].starts_with("node `Erf_y` (Erf): operator not supported by L0"), "{:?}", d.notes);
    assert_eq!(d.notes.len(), 2);
    let mut o = opts("dyn");
    o.input_shapes = vec![("x".into(), vec![3, 4])];
    let d = import(&with_erf, &o).unwrap_err();
    assert!(d.notes.len() == 1 && d.notes[0].contains("(Erf)"), "the shape is resolved: {:?}", d.notes);
    let relu = symbolic(vec![node("Relu", &["x"], "y", vec![])], "y");
    assert_eq!(import(&relu, &o).unwrap().graph.inputs[0].ty.to_string(), "f32[3,4]");
    o.input_shapes = vec![("x".into(), vec![3, 5])];
    assert!(import(&relu, &o).unwrap_err().notes[0]
        .contains("gives 5 for dimension 1 of input `x`, but the model fixes it to 4"));
}

#[test]
fn malformed_models_are_precise_errors() {
    let good = model(
        17,
        &[("x", &[2, 2])],
        vec![weights("w", &[2, 2])],
        vec![node("Add", &["x", "w"], "y", vec![])],
        &["y"],
    );
    let bytes = ekb_onnx::export::encode(&good);
    assert!(import(&bytes, &opts("ok")).is_ok());
    // Corrupt protobuf: truncated, and garbage.
    let d = import(&bytes[..bytes.len() - 7], &opts("t")).unwrap_err();
    assert!(d.message.contains("not a valid ONNX model: the protobuf does not decode"), "{}", d.message);
    assert!(import(b"\xff\xff\xff\xff not onnx", &opts("g")).is_err());
    // An initializer whose data does not match its dims.
    let mut m = good.clone();
    m.graph.as_mut().unwrap().initializer[0].float_data.pop();
    let d = import(&ekb_onnx::export::encode(&m), &opts("short")).unwrap_err();
    assert!(d.notes[0].contains("initializer `w` has 3 values but its dims [2, 2] need 4"), "{:?}", d.notes);
    let mut m = good.clone();
    let w = &mut m.graph.as_mut().unwrap().initializer[0];
    w.raw_data = vec![0; 12];
    w.float_data.clear();
    let d = import(&ekb_onnx::export::encode(&m), &opts("raw")).unwrap_err();
    assert!(
        d.notes[0].contains("initializer `w` has 12 bytes of raw data but its dims [2, 2] of FLOAT need 16"),
        "{:?}",
        d.notes
    );
    // External data.
    let mut m = good.clone();
    let w = &mut m.graph.as_mut().unwrap().initializer[0];
    w.data_location = 1;
    w.external_data = vec![StringStringEntryProto { key: "location".into(), value: "weights.bin".into() }];
    let d = import(&ekb_onnx::export::encode(&m), &opts("ext")).unwrap_err();
    assert!(
        d.notes[0]
            .contains("keeps its data in an external file (`weights.bin`); external data is not supported"),
        "{:?}",
        d.notes
    );
    // An opset older than 13.
    let mut m = good;
    m.opset_import[0].version = 11;
    let d = import(&ekb_onnx::export::encode(&m), &opts("old")).unwrap_err();
    assert!(d.message.contains("opset 11") && d.hint.as_deref().unwrap().contains("version_converter"));
}

#[test]
fn unsupported_forms_of_resize_conv_transpose_bool_and_group_norm_are_listed() {
    let x4: &[(&str, &[usize])] = &[("x", &[1, 4, 7, 6])];
    let resize = |out: &str, ins: &[&str], attrs: Vec<A>| node("Resize", ins, out, attrs);
    let m = model(
        18,
        x4,
        vec![
            f32s("s15", &[4], &[1.0, 1.0, 1.5, 1.0]),
            i64s("sizes", &[1, 4, 14, 12]),
            weights("w", &[4, 2, 3, 3]),
            f32s("gs", &[2], &[1.0, 2.0]),
            f32s("gb", &[2], &[0.0, 0.0]),
        ],
        vec![
            resize(
                "r1",
                &["x", "", "s15"],
                vec![
                    A::string("mode", "nearest"),
                    A::string("coordinate_transformation_mode", "asymmetric"),
                    A::string("nearest_mode", "floor"),
                ],
            ),
            resize(
                "r2",
                &["x", "", "", "sizes"],
                vec![A::string("mode", "linear"), A::string("coordinate_transformation_mode", "asymmetric")],
            ),
            resize("r3", &["x", "", "", "sizes"], vec![A::string("mode", "cubic")]),
            node("ConvTranspose", &["x", "w"], "t1", vec![A::ints("output_shape", vec![15, 13])]),
            node("ConvTranspose", &["x", "w"], "t2", vec![A::string("auto_pad", "SAME_UPPER")]),
            node(
                "ConvTranspose",
                &["x", "w"],
                "t3",
                vec![A::ints("strides", vec![2, 2]), A::ints("output_padding", vec![2, 0])],
            ),
            node("Cast", &["x"], "b1", vec![A::int("to", i64::from(dtype::BOOL))]),
            node("Where", &["b1", "x", "x"], "y", vec![]),
            node("Mul", &["gs", "gs"], "gs2", vec![]),
            node("GroupNormalization", &["x", "gs2", "gb"], "g", vec![A::int("num_groups", 2)]),
        ],
        &["y", "r1", "r2", "r3", "t1", "t2", "t3", "g"],
    );
    let d = import(&ekb_onnx::export::encode(&m), &opts("bad")).unwrap_err();
    let notes = d.notes.join("\n");
    for want in [
        "node `Resize_r1` (Resize): the scale 1.5 gives 7 * 1.5 = 10.5, not a whole size; L0 resizes to whole sizes (give `sizes`)",
        "node `Resize_r2` (Resize): `mode`=\"linear\" with `coordinate_transformation_mode`=\"asymmetric\" is not supported here",
        "node `Resize_r3` (Resize): `mode`=\"cubic\" is not supported (L0 has nearest and bilinear)",
        "node `ConvTranspose_t1` (ConvTranspose): `output_shape` is not supported (give `pads` and `output_padding`)",
        "node `ConvTranspose_t2` (ConvTranspose): `auto_pad`=\"SAME_UPPER\" is not supported for ConvTranspose",
        "node `ConvTranspose_t3` (ConvTranspose): `output_padding` [2, 0] must be smaller than the stride or the dilation of its axis",
        "node `Cast_b1` (Cast): a cast of a f32 tensor to BOOL is not supported (compare it with `Equal` or `Greater` instead)",
        "node `GroupNormalization_g` (GroupNormalization): opset 18 gives `scale` per group; a computed one is not supported",
    ] {
        assert!(notes.contains(want), "missing `{want}` in\n{notes}");
    }
    assert_eq!(d.notes.len(), 8, "{notes}");
    // A boolean that is not only a condition (here a graph output) cannot be held in L0.
    let m = model(
        17,
        &[("x", &[3])],
        vec![],
        vec![
            node("Cast", &["x"], "i", vec![A::int("to", i64::from(dtype::INT32))]),
            node("Cast", &["i"], "b", vec![A::int("to", i64::from(dtype::BOOL))]),
            node("Where", &["b", "x", "x"], "y", vec![]),
        ],
        &["y", "b"],
    );
    let d = import(&ekb_onnx::export::encode(&m), &opts("bad")).unwrap_err();
    assert!(
        d.notes[0]
            .contains("node `Cast_b` (Cast): a cast to BOOL is supported only as the condition of `Where`"),
        "{d}"
    );
}

#[test]
fn onnx_names_become_identifiers_the_loop_program_can_carry() {
    use ekb_onnx::import::ident;
    assert_eq!(ident("input.1"), "input_1");
    assert_eq!(ident("1x"), "_1x");
    // Graph names become buffer names of the lowered program, where these are keywords.
    assert_eq!(ident("out"), "out_");
    assert_eq!(ident("output"), "output_");
    assert_eq!(ident("outs"), "outs");
}

/// A scalar int8 or uint8 constant.
fn byte_scalar(name: &str, data_type: i32, v: i32) -> TensorProto {
    TensorProto { name: name.into(), dims: vec![], data_type, int32_data: vec![v], ..Default::default() }
}

#[test]
fn quantize_linear_imports_per_tensor_int8_and_lists_the_other_forms() {
    let m = model(
        17,
        &[("x", &[2, 3])],
        vec![f32s("s", &[], &[0.1]), byte_scalar("z", dtype::INT8, -3)],
        vec![
            node("QuantizeLinear", &["x", "s", "z"], "q", vec![]),
            node("DequantizeLinear", &["q", "s"], "y", vec![]),
        ],
        &["y"],
    );
    let im = import(&ekb_onnx::export::encode(&m), &opts("q")).unwrap_or_else(|d| panic!("{d}"));
    let text = print(&im.graph);
    // The f32 scale reads back as its shortest decimal; a missing dequantize zero point is 0.
    assert!(text.contains("quantize_linear(x, scale=0.1, zero_point=-3)"), "{text}");
    assert!(text.contains("dequantize_linear(%q, scale=0.1, zero_point=0)"), "{text}");
    // Per-axis scales, uint8 zero points and a missing quantize zero point are listed.
    let m = model(
        17,
        &[("x", &[2, 3])],
        vec![f32s("s", &[], &[0.1]), f32s("s3", &[3], &[0.1, 0.2, 0.3]), byte_scalar("u", dtype::UINT8, 7)],
        vec![
            node("QuantizeLinear", &["x", "s3", "u"], "a", vec![A::int("axis", 1)]),
            node("QuantizeLinear", &["x", "s", "u"], "b", vec![]),
            node("QuantizeLinear", &["x", "s"], "c", vec![]),
        ],
        &["a", "b", "c"],
    );
    let d = import(&ekb_onnx::export::encode(&m), &opts("bad")).unwrap_err();
    let notes = d.notes.join("\n");
    for want in [
        "node `QuantizeLinear_a` (QuantizeLinear): `y_scale` has 3 values; only per-tensor (scalar) scales are supported",
        "node `QuantizeLinear_b` (QuantizeLinear): `zero_point` is UINT8; only int8 quantization is supported (L0 has i8, not uint8)",
        "node `QuantizeLinear_c` (QuantizeLinear): without `zero_point` the result is uint8; only int8 quantization is supported",
    ] {
        assert!(notes.contains(want), "missing `{want}` in\n{notes}");
    }
}

#[test]
fn integer_products_refuse_zero_points_and_uint8() {
    let u8w = TensorProto { data_type: dtype::UINT8, ..bytes("u", &[3, 2], &[1, 2, 3, 4, 5, 6]) };
    let m = model(
        17,
        &[("x", &[2, 3]), ("x4", &[1, 3, 4, 4])],
        vec![
            f32s("s", &[], &[0.1]),
            bytes("z", &[], &[0]),
            bytes("nz", &[], &[3]),
            bytes("w", &[3, 2], &int8s(6)),
            bytes("w4", &[2, 3, 1, 1], &int8s(6)),
            u8w,
        ],
        vec![
            node("QuantizeLinear", &["x", "s", "z"], "q", vec![]),
            node("QuantizeLinear", &["x4", "s", "z"], "q4", vec![]),
            node("MatMulInteger", &["q", "w", "z", "nz"], "a", vec![]),
            node("MatMulInteger", &["q", "u"], "b", vec![]),
            node("MatMulInteger", &["q", "w", "q"], "c", vec![]),
            node("ConvInteger", &["q4", "w4", "nz"], "d", vec![]),
        ],
        &["a", "b", "c", "d"],
    );
    let d = import(&ekb_onnx::export::encode(&m), &opts("bad")).unwrap_err();
    let notes = d.notes.join("\n");
    for want in [
        "node `MatMulInteger_a` (MatMulInteger): `b_zero_point` is not zero; only zero points of 0 are supported",
        "node `MatMulInteger_b` (MatMulInteger): `B` is UINT8; only int8 operands are supported (L0 has i8, not uint8)",
        "node `MatMulInteger_c` (MatMulInteger): `a_zero_point` must be a constant zero",
        "node `ConvInteger_d` (ConvInteger): `x_zero_point` is not zero; only zero points of 0 are supported",
    ] {
        assert!(notes.contains(want), "missing `{want}` in\n{notes}");
    }
}

#[test]
fn float16_inputs_initializers_and_casts_import_as_f16() {
    // An f16 initializer as its bits in int32_data: 1, 65504, 2^-24, -2.
    let h = TensorProto {
        name: "h".into(),
        dims: vec![4],
        data_type: dtype::FLOAT16,
        int32_data: vec![0x3c00, 0x7bff, 0x0001, 0xc000],
        ..Default::default()
    };
    let mut m = model(
        17,
        &[("x", &[4])],
        vec![h],
        vec![
            node("Cast", &["x"], "xh", vec![A::int("to", i64::from(dtype::FLOAT16))]),
            node("Concat", &["xh", "h", "k"], "y", vec![A::int("axis", 0)]),
            node("Cast", &["y"], "z", vec![A::int("to", i64::from(dtype::FLOAT))]),
        ],
        &["z"],
    );
    // A second input, of FLOAT16.
    m.graph.as_mut().unwrap().input.push(ValueInfoProto::tensor("k", dtype::FLOAT16, &[2]));
    let im = import(&ekb_onnx::export::encode(&m), &opts("half")).unwrap_or_else(|d| panic!("{d}"));
    let text = print(&im.graph);
    assert!(text.contains("k: f16[2]"), "{text}");
    assert!(text.contains("cast(x, dtype=f16)"), "{text}");
    assert!(text.contains("param h: f16[4]"), "{text}");
    assert!(text.contains("cast(%y, dtype=f32)"), "{text}");
    let p = im.graph.params.iter().find(|p| p.name == "h").expect("the f16 parameter");
    let values = p.data.as_ref().and_then(|d| d.values.as_deref()).expect("loaded values");
    assert_eq!(*values, ekb_ir::tensor::BufData::F16(vec![0x3c00, 0x7bff, 0x0001, 0xc000]));
    // The interpreter reads them exactly: z = [cast(x), 1, 65504, 2^-24, -2, k].
    let x: &[f64] = &[0.1, 65520.0, -0.0, 3.0];
    let inputs = std::collections::HashMap::from([
        (
            "x".to_string(),
            ekb_ir::tensor::Tensor { ty: ekb_ir::TensorType::new(ekb_ir::DType::F32, [4]), data: x.to_vec() },
        ),
        (
            "k".to_string(),
            ekb_ir::tensor::Tensor {
                ty: ekb_ir::TensorType::new(ekb_ir::DType::F16, [2]),
                data: vec![0.5, -1.5],
            },
        ),
    ]);
    let mut params = ekb_ir::l0::inputs::generate_tensors(&im.graph, 0).unwrap();
    params.retain(|k, _| k == "h");
    params.extend(inputs);
    let z = ekb_ir::l0::interp::run(&im.graph, &params).unwrap_or_else(|d| panic!("{d}"));
    let want = [0.0999755859375, f64::INFINITY, -0.0, 3.0, 1.0, 65504.0, 2f64.powi(-24), -2.0, 0.5, -1.5];
    assert_eq!(z[0].data, want);
}

/// A 1-D integer tensor of ONNX type `data_type` (values in `int32_data`).
fn ints_of(name: &str, data_type: i32, v: &[i32]) -> TensorProto {
    TensorProto { data_type, ..bytes(name, &[v.len() as i64], v) }
}

/// A model computing `y` from constants only (an unused input `x`), `y` declared of type `ty`.
fn constant_model(inits: Vec<TensorProto>, nodes: Vec<NodeProto>, ty: i32, dims: &[usize]) -> ModelProto {
    let mut m = model(17, &[("x", &[1])], inits, nodes, &["y"]);
    m.graph.as_mut().unwrap().output = vec![ValueInfoProto::tensor("y", ty, dims)];
    m
}

// Integer arithmetic folded at import time once computed in i64 and retyped the result INT64:
// int8 100 + 100 gave 200, not ONNX's -56.
#[test]
fn folded_narrow_integers_wrap_in_their_type_as_onnxruntime_computes() {
    let to_i32 = |from: &str| node("Cast", &[from], "y", vec![A::int("to", i64::from(dtype::INT32))]);
    let graphs = match_onnxruntime(vec![
        (
            "fold_int8_add",
            constant_model(
                vec![ints_of("a", dtype::INT8, &[100, -128, 7]), ints_of("b", dtype::INT8, &[100, -1, 3])],
                vec![node("Add", &["a", "b"], "y", vec![])],
                dtype::INT8,
                &[3],
            ),
        ),
        (
            "fold_int8_mul_div",
            constant_model(
                vec![ints_of("a", dtype::INT8, &[100, -128, -7]), ints_of("b", dtype::INT8, &[3, -1, 2])],
                vec![node("Mul", &["a", "b"], "m", vec![]), node("Div", &["m", "b"], "y", vec![])],
                dtype::INT8,
                &[3],
            ),
        ),
        (
            "fold_uint8_add",
            constant_model(
                vec![ints_of("a", dtype::UINT8, &[200, 255, 1]), ints_of("b", dtype::UINT8, &[100, 1, 2])],
                vec![node("Add", &["a", "b"], "s", vec![]), to_i32("s")],
                dtype::INT32,
                &[3],
            ),
        ),
        (
            "fold_int16_sub",
            constant_model(
                vec![
                    ints_of("a", dtype::INT16, &[-32768, 32767, 5]),
                    ints_of("b", dtype::INT16, &[1, -1, 9]),
                ],
                vec![node("Sub", &["a", "b"], "s", vec![]), to_i32("s")],
                dtype::INT32,
                &[3],
            ),
        ),
        (
            "fold_int32_add_max",
            constant_model(
                vec![
                    ints_of("a", dtype::INT32, &[i32::MAX, i32::MIN, 4]),
                    ints_of("b", dtype::INT32, &[1, -1, 5]),
                ],
                vec![node("Add", &["a", "b"], "s", vec![]), node("Max", &["s", "b"], "y", vec![])],
                dtype::INT32,
                &[3],
            ),
        ),
    ]);
    // The int8 results stay int8 (an i8 output), not i32.
    assert_eq!(graphs[0].outputs[0].ty.to_string(), "i8[3]");
    assert_eq!(graphs[1].outputs[0].ty.to_string(), "i8[3]");
}

// Folds once allocated whatever their shape asked for: ConstantOfShape of [2^20,2^20,2^20] or
// Range(0, 2^40) aborted the importer on a failed allocation.
#[test]
fn every_fold_is_held_to_the_constant_size_limit() {
    let big = 1i64 << 16;
    let m = model(
        17,
        &[("x", &[1])],
        vec![
            i64s("huge_shape", &[1 << 20, 1 << 20, 1 << 20]),
            i64t("start", &[], &[0]),
            i64t("limit", &[], &[1 << 40]),
            i64t("delta", &[], &[1]),
            i64t("seven", &[], &[7]),
            i64s("square", &[big, big]),
            i64t("column", &[big, 1], &vec![1; big as usize]),
            i64t("row", &[1, big], &vec![2; big as usize]),
            i64t("table", &[2, big], &vec![3; 2 * big as usize]),
            i64t("zeros", &[big], &vec![0; big as usize]),
        ],
        vec![
            node("ConstantOfShape", &["huge_shape"], "a", vec![]),
            node("Range", &["start", "limit", "delta"], "b", vec![]),
            node("Expand", &["seven", "square"], "c", vec![]),
            node("Add", &["column", "row"], "d", vec![]),
            node("Gather", &["table", "zeros"], "e", vec![A::int("axis", 0)]),
            node("Less", &["column", "row"], "f", vec![]),
        ],
        &["a", "b", "c", "d", "e", "f"],
    );
    let d = import(&ekb_onnx::export::encode(&m), &opts("huge")).unwrap_err();
    let notes = d.notes.join("\n");
    for want in [
        "node `ConstantOfShape_a` (ConstantOfShape): a constant of shape [1048576, 1048576, 1048576] would have more than 2147483647 elements (the limit)",
        "node `Range_b` (Range): `Range(0, 1099511627776, 1)` would have 1099511627776 elements, more than 2147483647",
        "node `Expand_c` (Expand): a constant of shape [65536, 65536] would have more than 2147483647 elements",
        "node `Add_d` (Add): a constant of shape [65536, 65536] would have more than 2147483647 elements",
        "node `Gather_e` (Gather): a constant of shape [65536, 65536] would have more than 2147483647 elements",
        "node `Less_f` (Less): a constant of shape [65536, 65536] would have more than 2147483647 elements",
    ] {
        assert!(notes.contains(want), "missing `{want}` in\n{notes}");
    }
    assert_eq!(d.notes.len(), 6, "{notes}");
}

// Dropout's mask declared as a graph output was dropped from the imported graph without a word.
#[test]
fn a_declared_output_is_imported_or_named_in_the_error() {
    let with_mask = |outs: &[&str], extra: Vec<NodeProto>| {
        let mut nodes = vec![NodeProto {
            name: "drop".into(),
            ..NodeProto::new("Dropout", &["x"], &["d", "mask"], vec![])
        }];
        nodes.extend(extra);
        model(17, &[("x", &[2, 3])], vec![], nodes, outs)
    };
    let d = import(&ekb_onnx::export::encode(&with_mask(&["d", "mask"], vec![])), &opts("m")).unwrap_err();
    assert_eq!(
        d.notes,
        ["node `drop` (Dropout): output `mask` is a graph output; only the first output of `Dropout` is supported (the others must be unused)"]
    );
    let read = with_mask(&["d", "y"], vec![node("Cast", &["mask"], "y", vec![A::int("to", 1)])]);
    let d = import(&ekb_onnx::export::encode(&read), &opts("r")).unwrap_err();
    assert!(d.notes[0].contains("output `mask` is read by another node"), "{:?}", d.notes);
    // The same rule for every operator read with its first output only.
    let mut pool = model(
        17,
        &[("x", &[1, 1, 4, 4])],
        vec![],
        vec![NodeProto {
            name: "pool".into(),
            ..NodeProto::new("MaxPool", &["x"], &["p", "idx"], vec![A::ints("kernel_shape", vec![2, 2])])
        }],
        &["p", "idx"],
    );
    let d = import(&ekb_onnx::export::encode(&pool), &opts("p")).unwrap_err();
    assert!(d.notes[0].starts_with("node `pool` (MaxPool): output `idx` is a graph output"), "{:?}", d.notes);
    // Reported even when the node's input failed (it is a problem of the node itself).
    let mut after_failure = with_mask(&["d", "mask"], vec![]);
    let g = after_failure.graph.as_mut().unwrap();
    g.node.insert(0, node("Erf", &["x"], "e", vec![]));
    g.node[1].input[0] = "e".into();
    let d = import(&ekb_onnx::export::encode(&after_failure), &opts("f")).unwrap_err();
    assert_eq!(d.notes.len(), 2, "{:?}", d.notes);
    assert!(
        d.notes[1].starts_with("node `drop` (Dropout): output `mask` is a graph output"),
        "{:?}",
        d.notes
    );
    // Unused, the mask is no obstacle: one output, `d`.
    pool = with_mask(&["d"], vec![]);
    let g = import(&ekb_onnx::export::encode(&pool), &opts("ok")).unwrap().graph;
    assert_eq!(g.outputs.len(), 1);
}

// These imported into graphs that `ekb check` then refused (the parser's attribute checks ran
// only on text): each is now refused at import, naming the ONNX node.
#[test]
fn graphs_the_checker_would_refuse_are_refused_naming_the_node() {
    let f = |name: &str, v: f32| f32s(name, &[], &[v]);
    let m = model(
        17,
        &[("x", &[1, 2, 4, 4])],
        vec![
            f("three", 3.0),
            f("one", 1.0),
            f("nan", f32::NAN),
            f("zero", 0.0),
            bytes("zp", &[], &[0]),
            i64s("two_minus_ones", &[-1, -1]),
            i64s("pads", &[0, 0, 1, 1, 0, 0, 1, 1]),
            i64s("dup_axes", &[1, -5]),
            i64s("sizes", &[8, 8]),
        ],
        vec![
            node("Clip", &["x", "three", "one"], "clip", vec![]),
            node("Clip", &["x", "nan"], "clip_nan", vec![]),
            node("Reshape", &["x", "two_minus_ones"], "reshape", vec![]),
            node("Transpose", &["x"], "transpose", vec![A::ints("perm", vec![0, 0, 2, 3])]),
            node("QuantizeLinear", &["x", "zero", "zp"], "q0", vec![]),
            node("QuantizeLinear", &["x", "nan", "zp"], "qnan", vec![]),
            node("LeakyRelu", &["x"], "leaky", vec![A::float("alpha", f32::NAN)]),
            node("HardSigmoid", &["x"], "hsig", vec![A::float("beta", f32::INFINITY)]),
            node("Unsqueeze", &["x", "dup_axes"], "unsq", vec![]),
            node("Resize", &["x", "", "", "sizes"], "resize", vec![A::ints("axes", vec![2, 7])]),
            // No early check of the importer's own: the checker's rule, mapped to the node.
            node("Pad", &["x", "pads", "nan"], "pad", vec![]),
        ],
        &["clip", "clip_nan", "reshape", "transpose", "q0", "qnan", "leaky", "hsig", "unsq", "resize", "pad"],
    );
    let d = import(&ekb_onnx::export::encode(&m), &opts("bad")).unwrap_err();
    let notes = d.notes.join("\n");
    for want in [
        "node `Clip_clip` (Clip): `min` (3) is greater than `max` (1); L0's clip needs min <= max",
        "node `Clip_clip_nan` (Clip): `min` is NaN; a bound must be a number",
        "node `Reshape_reshape` (Reshape): `shape` [-1, -1] has more than one -1",
        "node `Transpose_transpose` (Transpose): `perm` [0, 0, 2, 3] is not a permutation of 0..4: axis 0 appears twice",
        "node `QuantizeLinear_q0` (QuantizeLinear): `y_scale` is 0; the scale must be a positive normal f32",
        "node `QuantizeLinear_qnan` (QuantizeLinear): `y_scale` is NaN; the scale must be a positive normal f32",
        "node `LeakyRelu_leaky` (LeakyRelu): attribute `alpha` is NaN; a finite number is needed",
        "node `HardSigmoid_hsig` (HardSigmoid): attribute `beta` is inf; a finite number is needed",
        "node `Unsqueeze_unsq` (Unsqueeze): `axes` [1, -5] name output axis 1 twice",
        "node `Resize_resize` (Resize): `axes` entry 7 is out of range for rank 4",
        "node `Pad_pad` (Pad): pad: `value` must be a number, found `nan`",
    ] {
        assert!(notes.contains(want), "missing `{want}` in\n{notes}");
    }
    assert_eq!(d.notes.len(), 11, "{notes}");
    // A constant NaN fill is not a `full` (which holds a number) but a data parameter.
    let nan_fill = model(
        17,
        &[("x", &[2])],
        vec![],
        vec![
            NodeProto {
                name: "c".into(),
                ..NodeProto::new(
                    "Constant",
                    &[],
                    &["nan"],
                    vec![A::tensor("value", f32s("", &[2], &[f32::NAN; 2]))],
                )
            },
            node("Add", &["x", "nan"], "y", vec![]),
        ],
        &["y"],
    );
    let g = import(&ekb_onnx::export::encode(&nan_fill), &opts("nan_fill")).unwrap().graph;
    assert_eq!(g.params.len(), 1, "{}", print(&g));
    // Without a data file's name, data parameters name `NAME.bin` (the parser refuses `file("")`).
    let add = model(
        17,
        &[("x", &[2])],
        vec![weights("w", &[2])],
        vec![node("Add", &["x", "w"], "y", vec![])],
        &["y"],
    );
    let no_file = ImportOptions { name: Some("g".into()), ..Default::default() };
    let g = import(&ekb_onnx::export::encode(&add), &no_file).unwrap().graph;
    assert_eq!(g.params[0].data.as_ref().unwrap().file, "g.bin");
    // A graph with no outputs (the parser refuses `-> ()`).
    let none = model(17, &[("x", &[2])], vec![], vec![node("Relu", &["x"], "r", vec![])], &[]);
    let d = import(&ekb_onnx::export::encode(&none), &opts("none")).unwrap_err();
    assert!(d.message.contains("the model's graph declares no outputs"), "{}", d.message);
}
