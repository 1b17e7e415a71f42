//! L0 -> ONNX: a checked graph becomes an ONNX model (opset 17, IR version 8) that onnxruntime,
//! TensorRT and other engines load.
//!
//! Mapping (docs/onnx.md has the table): every L0 operator with an ONNX operator of the same
//! meaning maps to it, attributes written out in full (defaults included). Comparisons give ONNX
//! booleans, so each is followed by a `Cast` to INT32 (L0's 1 or 0), and a `where` condition is
//! cast to BOOL first. The operators opset 17 lacks (`relu6`, `gelu`, `silu`, `rsqrt`,
//! `rms_norm`, `softplus` with other than `beta=1`, `threshold=20`, `matmul` with a transposed
//! operand, `linear` of rank > 2 or of i8 operands, `conv2d` of i8 operands with a bias, `iota`,
//! `group_norm`) become nodes of the
//! model-local domain `ekb` whose bodies are ONNX functions of standard operators, so any engine
//! that inlines local functions runs them, and the importer reads them back as the one L0 operator
//! they came from. Products of i8 operands (`matmul`, `linear`, `conv2d` giving i32) use
//! `MatMulInteger` and `ConvInteger` without zero points (L0's integer products have none).
//!
//! What it must keep true:
//! - importing the export gives the same graph (same canonical text), except that parameters come
//!   back as data parameters holding the values written here;
//! - inputs keep their names and types; outputs keep their names (an `Identity` names each);
//!   node results keep their `%` names; parameters keep their names and become initializers
//!   (seeded ones generated with the seed given, data ones with their loaded values);
//! - inputs' initialisers and the graph name travel in `metadata_props` (`ekb.init.NAME`), so
//!   the imported graph generates the same inputs.

use crate::consts::{encode_buf, encode_i64};
use crate::proto::{
    attr_type, dtype, AttributeProto, FunctionProto, GraphProto, ModelProto, NodeProto, OperatorSetIdProto,
    StringStringEntryProto, TensorProto, ValueInfoProto,
};
use ekb_ir::diag::Diagnostic;
use ekb_ir::l0::ast::{BinaryOp, CompareOp, Graph, Node, Op, PadMode, ReduceKind, ResizeMode, UnaryOp};
use ekb_ir::l0::print::init_text;
use ekb_ir::types::DType;
use prost::Message;
use std::collections::BTreeSet;

/// The default-domain opset the exporter writes.
pub const OPSET: i64 = 17;
/// The ONNX IR version written (the one that goes with opset 17).
pub const IR_VERSION: i64 = 8;
/// The model-local domain of the L0 operators opset 17 lacks.
pub const EKB_DOMAIN: &str = "ekb";
/// Metadata key prefix for an input's initialiser (`ekb.init.x` = `randint(0, 10)`).
pub const INIT_KEY: &str = "ekb.init.";

/// The ONNX model of a checked graph; seeded parameters are generated with `seed`.
pub fn export(g: &Graph, seed: u64) -> Result<ModelProto, Diagnostic> {
    if let Some(n) = g.nodes.iter().find(|n| n.ty.is_none()) {
        return Err(Diagnostic::error(format!(
            "node `{}` has no type: check the graph before exporting it",
            n.name
        )));
    }
    let mut ex = Exporter { g, nodes: Vec::new(), inits: Vec::new(), functions: BTreeSet::new() };
    let generated = ekb_ir::l0::inputs::generate(g, seed)?;
    for (name, buf) in generated.iter().filter(|(n, _)| g.params.iter().any(|p| &p.name == n)) {
        ex.inits.push(encode_buf(name, &buf.ty.shape, &buf.data));
    }
    for n in &g.nodes {
        ex.node(n);
    }
    let mut outputs = Vec::new();
    for o in &g.outputs {
        ex.nodes.push(NodeProto::new("Identity", &[&o.value.name], &[&o.name], vec![]));
        outputs.push(ValueInfoProto::tensor(&o.name, elem(o.ty.dtype), &o.ty.shape));
    }
    let inputs =
        g.inputs.iter().map(|d| ValueInfoProto::tensor(&d.name, elem(d.ty.dtype), &d.ty.shape)).collect();
    let mut metadata_props: Vec<StringStringEntryProto> = g
        .inputs
        .iter()
        .filter(|d| d.init != d.ty.dtype.default_init())
        .map(|d| StringStringEntryProto { key: format!("{INIT_KEY}{}", d.name), value: init_text(&d.init) })
        .collect();
    metadata_props.push(StringStringEntryProto { key: "ekb.seed".into(), value: seed.to_string() });
    let mut opset_import = vec![OperatorSetIdProto { domain: String::new(), version: OPSET }];
    if !ex.functions.is_empty() {
        opset_import.push(OperatorSetIdProto { domain: EKB_DOMAIN.into(), version: 1 });
    }
    let functions = ex.functions.iter().copied().map(function).collect();
    Ok(ModelProto {
        ir_version: IR_VERSION,
        opset_import,
        producer_name: "ekb".into(),
        producer_version: env!("CARGO_PKG_VERSION").into(),
        graph: Some(GraphProto {
            node: ex.nodes,
            name: g.name.clone(),
            initializer: ex.inits,
            input: inputs,
            output: outputs,
            ..Default::default()
        }),
        metadata_props,
        functions,
        ..Default::default()
    })
}

/// [`export`], serialised.
pub fn export_bytes(g: &Graph, seed: u64) -> Result<Vec<u8>, Diagnostic> {
    Ok(encode(&export(g, seed)?))
}

/// The bytes of a model (a `.onnx` file).
pub fn encode(m: &ModelProto) -> Vec<u8> {
    m.encode_to_vec()
}

fn elem(d: DType) -> i32 {
    match d {
        DType::F32 => dtype::FLOAT,
        DType::I32 => dtype::INT32,
        DType::I8 => dtype::INT8,
        DType::F16 => dtype::FLOAT16,
    }
}

/// A scalar of `dt` holding `v` (already in range and integral for the integer dtypes).
fn scalar_data(dt: DType, v: f64) -> ekb_ir::tensor::BufData {
    match dt {
        DType::F32 => ekb_ir::tensor::BufData::F32(vec![v as f32]),
        DType::I32 => ekb_ir::tensor::BufData::I32(vec![v as i32]),
        DType::I8 => ekb_ir::tensor::BufData::I8(vec![v as i8]),
        DType::F16 => ekb_ir::tensor::BufData::F16(vec![ekb_wire::f16::from_f32(v as f32)]),
    }
}

struct Exporter<'a> {
    g: &'a Graph,
    nodes: Vec<NodeProto>,
    inits: Vec<TensorProto>,
    /// The `ekb` functions used, by name.
    functions: BTreeSet<&'static str>,
}

impl Exporter<'_> {
    fn rank(&self, value: &str) -> usize {
        self.g.type_of(value).map_or(0, |t| t.rank())
    }

    fn dtype(&self, value: &str) -> DType {
        self.g.type_of(value).map_or(DType::F32, |t| t.dtype)
    }

    /// A constant input of node `out`: an initializer named `out/what`.
    fn const_i64(&mut self, out: &str, what: &str, v: &[i64]) -> String {
        let name = format!("{out}/{what}");
        self.inits.push(encode_i64(&name, v));
        name
    }

    /// A scalar initializer of `dt` named `out/what`.
    fn const_scalar(&mut self, out: &str, what: &str, dt: DType, v: f64) -> String {
        let name = format!("{out}/{what}");
        self.inits.push(encode_buf(&name, &[], &scalar_data(dt, v)));
        name
    }

    fn push(&mut self, op: &str, inputs: &[&str], out: &str, attrs: Vec<AttributeProto>) {
        self.nodes.push(NodeProto::new(op, inputs, &[out], attrs));
    }

    /// A node of the `ekb` domain, and its function definition.
    fn push_ekb(&mut self, f: &'static str, inputs: &[&str], out: &str, attrs: Vec<AttributeProto>) {
        self.functions.insert(f);
        let mut n = NodeProto::new(f, inputs, &[out], attrs);
        n.domain = EKB_DOMAIN.into();
        self.nodes.push(n);
    }

    fn node(&mut self, n: &Node) {
        let out = n.name.as_str();
        let args: Vec<&str> = n.args.iter().map(|a| a.name.as_str()).collect();
        let x = args.first().copied().unwrap_or("");
        use AttributeProto as A;
        match &n.op {
            Op::Unary(u) => match *u {
                UnaryOp::Relu => self.push("Relu", &args, out, vec![]),
                UnaryOp::Relu6 => self.push_ekb("relu6", &args, out, vec![]),
                UnaryOp::LeakyRelu { alpha } => {
                    self.push("LeakyRelu", &args, out, vec![A::float("alpha", alpha as f32)])
                }
                UnaryOp::Gelu { tanh: false } => self.push_ekb("gelu", &args, out, vec![]),
                UnaryOp::Gelu { tanh: true } => self.push_ekb("gelu_tanh", &args, out, vec![]),
                UnaryOp::Silu => self.push_ekb("silu", &args, out, vec![]),
                UnaryOp::Sigmoid => self.push("Sigmoid", &args, out, vec![]),
                UnaryOp::Tanh => self.push("Tanh", &args, out, vec![]),
                UnaryOp::HardSwish => self.push("HardSwish", &args, out, vec![]),
                UnaryOp::HardSigmoid => self.push(
                    "HardSigmoid",
                    &args,
                    out,
                    vec![A::float("alpha", 1.0 / 6.0), A::float("beta", 0.5)],
                ),
                UnaryOp::Softplus { beta, threshold } if beta == 1.0 && threshold == 20.0 => {
                    self.push("Softplus", &args, out, vec![])
                }
                UnaryOp::Softplus { beta, threshold } => self.push_ekb(
                    "softplus",
                    &args,
                    out,
                    vec![A::float("beta", beta as f32), A::float("threshold", threshold as f32)],
                ),
                UnaryOp::Elu { alpha } => self.push("Elu", &args, out, vec![A::float("alpha", alpha as f32)]),
                UnaryOp::Exp => self.push("Exp", &args, out, vec![]),
                UnaryOp::Log => self.push("Log", &args, out, vec![]),
                UnaryOp::Sqrt => self.push("Sqrt", &args, out, vec![]),
                UnaryOp::Rsqrt => self.push_ekb("rsqrt", &args, out, vec![]),
                UnaryOp::Abs => self.push("Abs", &args, out, vec![]),
                UnaryOp::Neg => self.push("Neg", &args, out, vec![]),
                UnaryOp::Sin => self.push("Sin", &args, out, vec![]),
                UnaryOp::Cos => self.push("Cos", &args, out, vec![]),
                UnaryOp::Clip { min, max } => {
                    let dt = self.dtype(x);
                    let lo = if min == f64::NEG_INFINITY {
                        String::new()
                    } else {
                        self.const_scalar(out, "min", dt, min)
                    };
                    let hi = if max == f64::INFINITY {
                        String::new()
                    } else {
                        self.const_scalar(out, "max", dt, max)
                    };
                    let mut inputs = vec![x, lo.as_str(), hi.as_str()];
                    while inputs.last().is_some_and(|s| s.is_empty()) {
                        inputs.pop();
                    }
                    self.push("Clip", &inputs, out, vec![])
                }
            },
            Op::Binary(b) => {
                let op = match b {
                    BinaryOp::Add => "Add",
                    BinaryOp::Sub => "Sub",
                    BinaryOp::Mul => "Mul",
                    BinaryOp::Div => "Div",
                    BinaryOp::Max => "Max",
                    BinaryOp::Min => "Min",
                    BinaryOp::Pow => "Pow",
                };
                self.push(op, &args, out, vec![])
            }
            Op::Reduce { kind, axes, keepdims } => {
                let keep = A::int("keepdims", i64::from(*keepdims));
                match kind {
                    ReduceKind::Sum => {
                        let axes = self.const_i64(out, "axes", axes);
                        self.push("ReduceSum", &[x, &axes], out, vec![keep])
                    }
                    ReduceKind::Mean | ReduceKind::Max | ReduceKind::Min => {
                        let op = match kind {
                            ReduceKind::Mean => "ReduceMean",
                            ReduceKind::Max => "ReduceMax",
                            _ => "ReduceMin",
                        };
                        self.push(op, &[x], out, vec![A::ints("axes", axes.clone()), keep])
                    }
                }
            }
            Op::ArgMax { axis, keepdims } => {
                let wide = format!("{out}/i64");
                let attrs = vec![
                    A::int("axis", *axis),
                    A::int("keepdims", i64::from(*keepdims)),
                    A::int("select_last_index", 0),
                ];
                self.push("ArgMax", &[x], &wide, attrs);
                self.push("Cast", &[&wide], out, vec![A::int("to", i64::from(dtype::INT32))])
            }
            Op::Softmax { axis, log } => {
                self.push(if *log { "LogSoftmax" } else { "Softmax" }, &[x], out, vec![A::int("axis", *axis)])
            }
            Op::LayerNorm { eps } => {
                let k = self.rank(args[1]) as i64;
                let attrs = vec![A::int("axis", -k), A::float("epsilon", *eps as f32)];
                self.push("LayerNormalization", &args, out, attrs)
            }
            Op::RmsNorm { eps } => {
                let k = self.rank(args[1]) as i64;
                let axes = (-k..0).collect();
                self.push_ekb(
                    "rms_norm",
                    &args,
                    out,
                    vec![A::float("eps", *eps as f32), A::ints("axes", axes)],
                )
            }
            Op::BatchNorm { eps } => {
                self.push("BatchNormalization", &args, out, vec![A::float("epsilon", *eps as f32)])
            }
            Op::MatMul { transpose_a: false, transpose_b: false } if self.dtype(x) == DType::I8 => {
                self.push("MatMulInteger", &args, out, vec![])
            }
            Op::MatMul { transpose_a: false, transpose_b: false } => self.push("MatMul", &args, out, vec![]),
            Op::MatMul { transpose_a, transpose_b } => {
                let perm = |r: usize, t: bool| {
                    let mut p: Vec<i64> = (0..r as i64).collect();
                    if t {
                        p.swap(r - 2, r - 1);
                    }
                    p
                };
                let attrs = vec![
                    A::int("transpose_a", i64::from(*transpose_a)),
                    A::int("transpose_b", i64::from(*transpose_b)),
                    A::ints("perm_a", perm(self.rank(args[0]), *transpose_a)),
                    A::ints("perm_b", perm(self.rank(args[1]), *transpose_b)),
                ];
                let f = if self.dtype(x) == DType::I8 { "matmul_integer" } else { "matmul" };
                self.push_ekb(f, &args, out, attrs)
            }
            // ONNX has no integer Gemm: i8 `linear` is MatMulInteger inside a function.
            Op::Linear if self.dtype(x) == DType::I8 && args.len() == 3 => {
                self.push_ekb("linear_integer", &args, out, vec![])
            }
            Op::Linear if self.dtype(x) == DType::I8 => {
                self.push_ekb("linear_integer_nobias", &args, out, vec![])
            }
            Op::Linear if self.rank(x) == 2 => self.push("Gemm", &args, out, vec![A::int("transB", 1)]),
            Op::Linear if args.len() == 3 => self.push_ekb("linear", &args, out, vec![]),
            Op::Linear => self.push_ekb("linear_nobias", &args, out, vec![]),
            Op::Conv2d(c) => {
                let w = self.g.type_of(args[1]).map(|t| t.shape.clone()).unwrap_or_default();
                let attrs = vec![
                    A::ints("kernel_shape", w.get(2..4).unwrap_or(&[]).iter().map(|&d| d as i64).collect()),
                    A::ints("strides", ints(&c.stride)),
                    A::ints("pads", ints(&c.pad)),
                    A::ints("dilations", ints(&c.dilation)),
                    A::int("group", c.groups as i64),
                ];
                // ConvInteger has no bias input: an i8 convolution with one is a function that
                // adds it.
                match (self.dtype(x), args.len()) {
                    (DType::I8, 2) => self.push("ConvInteger", &args, out, attrs),
                    (DType::I8, _) => self.push_ekb("conv2d_integer", &args, out, attrs),
                    _ => self.push("Conv", &args, out, attrs),
                }
            }
            Op::MaxPool2d(p) | Op::AvgPool2d { pool: p, .. } => {
                let mut attrs = vec![
                    A::ints("kernel_shape", ints(&p.kernel)),
                    A::ints("strides", ints(&p.stride)),
                    A::ints("pads", ints(&p.pad)),
                    A::int("ceil_mode", 0),
                ];
                let op = match &n.op {
                    Op::AvgPool2d { count_include_pad, .. } => {
                        attrs.push(A::int("count_include_pad", i64::from(*count_include_pad)));
                        "AveragePool"
                    }
                    _ => "MaxPool",
                };
                self.push(op, &[x], out, attrs)
            }
            Op::GlobalAvgPool2d => self.push("GlobalAveragePool", &[x], out, vec![]),
            Op::Reshape { shape } => {
                let s = self.const_i64(out, "shape", shape);
                self.push("Reshape", &[x, &s], out, vec![])
            }
            Op::Transpose { perm } => self.push(
                "Transpose",
                &[x],
                out,
                vec![A::ints("perm", perm.iter().map(|&p| p as i64).collect())],
            ),
            Op::Concat { axis } => self.push("Concat", &args, out, vec![A::int("axis", *axis)]),
            Op::Slice { axes, starts, ends, steps } => {
                let s = self.const_i64(out, "starts", starts);
                let e = self.const_i64(out, "ends", ends);
                let a = self.const_i64(out, "axes", axes);
                let st = self.const_i64(out, "steps", steps);
                self.push("Slice", &[x, &s, &e, &a, &st], out, vec![])
            }
            Op::Pad { pads, mode } => {
                let p = self.const_i64(out, "pads", &pads.iter().map(|&p| p as i64).collect::<Vec<_>>());
                let (mode, value) = match mode {
                    PadMode::Constant(v) => ("constant", Some(*v)),
                    PadMode::Reflect => ("reflect", None),
                    PadMode::Edge => ("edge", None),
                };
                let attrs = vec![A::string("mode", mode)];
                match value {
                    Some(v) => {
                        let c = self.const_scalar(out, "value", self.dtype(x), v);
                        self.push("Pad", &[x, &p, &c], out, attrs)
                    }
                    None => self.push("Pad", &[x, &p], out, attrs),
                }
            }
            Op::Cast { dtype } => self.push("Cast", &[x], out, vec![A::int("to", i64::from(elem(*dtype)))]),
            Op::QuantizeLinear { scale, zero_point } | Op::DequantizeLinear { scale, zero_point } => {
                // Per tensor: a scalar f32 scale and a scalar int8 zero point (whose type makes
                // QuantizeLinear's result int8).
                let s = self.const_scalar(out, "scale", DType::F32, *scale);
                let z = self.const_scalar(out, "zero_point", DType::I8, *zero_point as f64);
                let op = if matches!(n.op, Op::QuantizeLinear { .. }) {
                    "QuantizeLinear"
                } else {
                    "DequantizeLinear"
                };
                self.push(op, &[x, &s, &z], out, vec![])
            }
            Op::Full { ty, value } => {
                let s = self.const_i64(out, "shape", &ints(&ty.shape));
                let v = scalar_data(ty.dtype, *value);
                self.push("ConstantOfShape", &[&s], out, vec![A::tensor("value", encode_buf("", &[1], &v))])
            }
            Op::Compare(c) => {
                let op = match c {
                    CompareOp::Less => "Less",
                    CompareOp::LessEqual => "LessOrEqual",
                    CompareOp::Greater => "Greater",
                    CompareOp::GreaterEqual => "GreaterOrEqual",
                    CompareOp::Equal => "Equal",
                };
                let flag = format!("{out}/bool");
                self.push(op, &args, &flag, vec![]);
                self.push("Cast", &[&flag], out, vec![A::int("to", i64::from(dtype::INT32))])
            }
            Op::Where => {
                let cond = format!("{out}/cond");
                self.push("Cast", &[x], &cond, vec![A::int("to", i64::from(dtype::BOOL))]);
                self.push("Where", &[&cond, args[1], args[2]], out, vec![])
            }
            Op::Iota { ty, axis } => self.push_ekb(
                "iota",
                &[],
                out,
                vec![
                    A::ints("shape", ints(&ty.shape)),
                    A::int("axis", *axis),
                    A::int("to", i64::from(elem(ty.dtype))),
                ],
            ),
            Op::Expand { shape } => {
                let s = self.const_i64(out, "shape", &ints(shape));
                self.push("Expand", &[x, &s], out, vec![])
            }
            Op::Gather { axis } => self.push("Gather", &args, out, vec![A::int("axis", *axis)]),
            Op::CumSum { axis, exclusive, reverse } => {
                let a = self.const_scalar(out, "axis", DType::I32, *axis as f64);
                let attrs =
                    vec![A::int("exclusive", i64::from(*exclusive)), A::int("reverse", i64::from(*reverse))];
                self.push("CumSum", &[x, &a], out, attrs)
            }
            Op::GroupNorm { groups, eps } => {
                let shape = self.g.type_of(x).map(|t| t.shape.clone()).unwrap_or_default();
                let c = shape.get(1).copied().unwrap_or(0);
                let inner: usize = shape.iter().skip(2).product();
                let grouped = vec![shape[0] as i64, *groups as i64, (c / groups * inner) as i64];
                let mut per_channel = vec![c as i64];
                per_channel.resize(shape.len() - 1, 1);
                let attrs = vec![
                    A::int("groups", *groups as i64),
                    A::float("eps", *eps as f32),
                    A::ints("grouped_shape", grouped),
                    A::ints("param_shape", per_channel),
                ];
                self.push_ekb("group_norm", &args, out, attrs)
            }
            Op::ConvTranspose2d(c) => {
                let w = self.g.type_of(args[1]).map(|t| t.shape.clone()).unwrap_or_default();
                let attrs = vec![
                    A::ints("kernel_shape", w.get(2..4).unwrap_or(&[]).iter().map(|&d| d as i64).collect()),
                    A::ints("strides", ints(&c.stride)),
                    A::ints("pads", ints(&c.pad)),
                    A::ints("output_padding", ints(&c.output_padding)),
                    A::ints("dilations", ints(&c.dilation)),
                    A::int("group", c.groups as i64),
                ];
                self.push("ConvTranspose", &args, out, attrs)
            }
            Op::Resize { size, mode, align_corners } => {
                let shape = self.g.type_of(x).map(|t| t.shape.clone()).unwrap_or_default();
                let sizes = self.const_i64(out, "sizes", &ints(&[shape[0], shape[1], size[0], size[1]]));
                let attrs = match (mode, align_corners) {
                    (ResizeMode::Nearest, _) => vec![
                        A::string("mode", "nearest"),
                        A::string("coordinate_transformation_mode", "asymmetric"),
                        A::string("nearest_mode", "floor"),
                    ],
                    (ResizeMode::Bilinear, false) => vec![
                        A::string("mode", "linear"),
                        A::string("coordinate_transformation_mode", "half_pixel"),
                    ],
                    (ResizeMode::Bilinear, true) => vec![
                        A::string("mode", "linear"),
                        A::string("coordinate_transformation_mode", "align_corners"),
                    ],
                };
                self.push("Resize", &[x, "", "", &sizes], out, attrs)
            }
        }
    }
}

fn ints(v: &[usize]) -> Vec<i64> {
    v.iter().map(|&x| x as i64).collect()
}

/// The body of one `ekb` function in standard opset-17 operators.
fn function(name: &str) -> FunctionProto {
    use AttributeProto as A;
    let mut body: Vec<NodeProto> = Vec::new();
    let mut node =
        |op: &str, i: &[&str], o: &str, a: Vec<AttributeProto>| body.push(NodeProto::new(op, i, &[o], a));
    let konst = |v: f32| vec![A::float("value_float", v)];
    let (inputs, attributes): (&[&str], &[&str]) = match name {
        "relu6" => {
            node("Constant", &[], "zero", konst(0.0));
            node("Constant", &[], "six", konst(6.0));
            node("Clip", &["x", "zero", "six"], "y", vec![]);
            (&["x"], &[])
        }
        "gelu" => {
            node("Constant", &[], "c", konst(std::f32::consts::FRAC_1_SQRT_2));
            node("Constant", &[], "half", konst(0.5));
            node("Constant", &[], "one", konst(1.0));
            node("Mul", &["x", "c"], "t", vec![]);
            node("Erf", &["t"], "e", vec![]);
            node("Add", &["e", "one"], "a", vec![]);
            node("Mul", &["x", "a"], "m", vec![]);
            node("Mul", &["m", "half"], "y", vec![]);
            (&["x"], &[])
        }
        "gelu_tanh" => {
            node("Constant", &[], "k", konst((2.0 / std::f64::consts::PI).sqrt() as f32));
            node("Constant", &[], "c", konst(0.044715));
            node("Constant", &[], "half", konst(0.5));
            node("Constant", &[], "one", konst(1.0));
            node("Mul", &["x", "x"], "x2", vec![]);
            node("Mul", &["x2", "x"], "x3", vec![]);
            node("Mul", &["x3", "c"], "cx3", vec![]);
            node("Add", &["x", "cx3"], "inner", vec![]);
            node("Mul", &["inner", "k"], "arg", vec![]);
            node("Tanh", &["arg"], "t", vec![]);
            node("Add", &["t", "one"], "a", vec![]);
            node("Mul", &["x", "half"], "hx", vec![]);
            node("Mul", &["hx", "a"], "y", vec![]);
            (&["x"], &[])
        }
        "silu" => {
            node("Sigmoid", &["x"], "s", vec![]);
            node("Mul", &["x", "s"], "y", vec![]);
            (&["x"], &[])
        }
        "softplus" => {
            node("Constant", &[], "beta", vec![A::reference("value_float", attr_type::FLOAT, "beta")]);
            node(
                "Constant",
                &[],
                "threshold",
                vec![A::reference("value_float", attr_type::FLOAT, "threshold")],
            );
            node("Mul", &["x", "beta"], "bx", vec![]);
            node("Softplus", &["bx"], "sp", vec![]);
            node("Div", &["sp", "beta"], "soft", vec![]);
            node("Greater", &["bx", "threshold"], "big", vec![]);
            node("Where", &["big", "x", "soft"], "y", vec![]);
            (&["x"], &["beta", "threshold"])
        }
        "rsqrt" => {
            node("Sqrt", &["x"], "s", vec![]);
            node("Reciprocal", &["s"], "y", vec![]);
            (&["x"], &[])
        }
        "rms_norm" => {
            node("Mul", &["x", "x"], "sq", vec![]);
            node(
                "ReduceMean",
                &["sq"],
                "ms",
                vec![A::reference("axes", attr_type::INTS, "axes"), A::int("keepdims", 1)],
            );
            node("Constant", &[], "eps", vec![A::reference("value_float", attr_type::FLOAT, "eps")]);
            node("Add", &["ms", "eps"], "a", vec![]);
            node("Sqrt", &["a"], "r", vec![]);
            node("Div", &["x", "r"], "n", vec![]);
            node("Mul", &["n", "weight"], "y", vec![]);
            (&["x", "weight"], &["eps", "axes"])
        }
        "matmul" => {
            node("Transpose", &["a"], "ta", vec![A::reference("perm", attr_type::INTS, "perm_a")]);
            node("Transpose", &["b"], "tb", vec![A::reference("perm", attr_type::INTS, "perm_b")]);
            node("MatMul", &["ta", "tb"], "y", vec![]);
            (&["a", "b"], &["transpose_a", "transpose_b", "perm_a", "perm_b"])
        }
        "matmul_integer" => {
            node("Transpose", &["a"], "ta", vec![A::reference("perm", attr_type::INTS, "perm_a")]);
            node("Transpose", &["b"], "tb", vec![A::reference("perm", attr_type::INTS, "perm_b")]);
            node("MatMulInteger", &["ta", "tb"], "y", vec![]);
            (&["a", "b"], &["transpose_a", "transpose_b", "perm_a", "perm_b"])
        }
        "linear_integer" => {
            node("Transpose", &["w"], "wt", vec![]);
            node("MatMulInteger", &["x", "wt"], "m", vec![]);
            node("Add", &["m", "b"], "y", vec![]);
            (&["x", "w", "b"], &[])
        }
        "linear_integer_nobias" => {
            node("Transpose", &["w"], "wt", vec![]);
            node("MatMulInteger", &["x", "wt"], "y", vec![]);
            (&["x", "w"], &[])
        }
        "conv2d_integer" => {
            let conv_attrs = ["kernel_shape", "strides", "pads", "dilations"]
                .map(|a| A::reference(a, attr_type::INTS, a))
                .into_iter()
                .chain([A::reference("group", attr_type::INT, "group")])
                .collect();
            node("ConvInteger", &["x", "w"], "c", conv_attrs);
            // The bias [OC] as [OC, 1, 1], broadcast over the output's rows and columns.
            node("Constant", &[], "bs", vec![A::ints("value_ints", vec![-1, 1, 1])]);
            node("Reshape", &["b", "bs"], "bc", vec![]);
            node("Add", &["c", "bc"], "y", vec![]);
            (&["x", "w", "b"], &["kernel_shape", "strides", "pads", "dilations", "group"])
        }
        "linear" => {
            node("Transpose", &["w"], "wt", vec![]);
            node("MatMul", &["x", "wt"], "m", vec![]);
            node("Add", &["m", "b"], "y", vec![]);
            (&["x", "w", "b"], &[])
        }
        "linear_nobias" => {
            node("Transpose", &["w"], "wt", vec![]);
            node("MatMul", &["x", "wt"], "y", vec![]);
            (&["x", "w"], &[])
        }
        "iota" => {
            // Ones of the shape, summed exclusively along the axis: each element's index.
            node("Constant", &[], "shape", vec![A::reference("value_ints", attr_type::INTS, "shape")]);
            let one = encode_buf("", &[1], &ekb_ir::tensor::BufData::I32(vec![1]));
            node("ConstantOfShape", &["shape"], "ones", vec![A::tensor("value", one)]);
            node("Constant", &[], "axis", vec![A::reference("value_int", attr_type::INT, "axis")]);
            node("CumSum", &["ones", "axis"], "index", vec![A::int("exclusive", 1)]);
            node("Cast", &["index"], "y", vec![A::reference("to", attr_type::INT, "to")]);
            (&[], &["shape", "axis", "to"])
        }
        "group_norm" => {
            // x as [N, G, C/G * inner]: mean and biased variance per group, then back to x's
            // shape and the per-channel affine (scale and bias as [C, 1, ..]).
            node("Constant", &[], "gs", vec![A::reference("value_ints", attr_type::INTS, "grouped_shape")]);
            node("Reshape", &["x", "gs"], "xg", vec![]);
            node("ReduceMean", &["xg"], "mean", vec![A::ints("axes", vec![2]), A::int("keepdims", 1)]);
            node("Sub", &["xg", "mean"], "d", vec![]);
            node("Mul", &["d", "d"], "d2", vec![]);
            node("ReduceMean", &["d2"], "var", vec![A::ints("axes", vec![2]), A::int("keepdims", 1)]);
            node("Constant", &[], "eps", vec![A::reference("value_float", attr_type::FLOAT, "eps")]);
            node("Add", &["var", "eps"], "ve", vec![]);
            node("Sqrt", &["ve"], "sd", vec![]);
            node("Div", &["d", "sd"], "ng", vec![]);
            node("Shape", &["x"], "xs", vec![]);
            node("Reshape", &["ng", "xs"], "n", vec![]);
            node("Constant", &[], "ps", vec![A::reference("value_ints", attr_type::INTS, "param_shape")]);
            node("Reshape", &["scale", "ps"], "sc", vec![]);
            node("Reshape", &["bias", "ps"], "bi", vec![]);
            node("Mul", &["n", "sc"], "m", vec![]);
            node("Add", &["m", "bi"], "y", vec![]);
            (&["x", "scale", "bias"], &["groups", "eps", "grouped_shape", "param_shape"])
        }
        other => unreachable!("no ekb function `{other}`"),
    };
    FunctionProto {
        name: name.into(),
        input: inputs.iter().map(|s| s.to_string()).collect(),
        output: vec!["y".into()],
        attribute: attributes.iter().map(|s| s.to_string()).collect(),
        node: body,
        doc_string: format!(
            "The L0 operator `{}`.",
            name.trim_end_matches("_nobias").trim_end_matches("_integer").replace("gelu_tanh", "gelu")
        ),
        opset_import: vec![OperatorSetIdProto { domain: String::new(), version: OPSET }],
        domain: EKB_DOMAIN.into(),
    }
}
