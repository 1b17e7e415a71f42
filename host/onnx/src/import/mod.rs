//! ONNX -> L0: a model (opset 13 or newer, static shapes) becomes a checked L0 graph whose
//! parameters carry the model's initializers as data, plus the bytes of the sidecar data file.
//!
//! How: initializers and `Constant` outputs are constants; shape arithmetic on constants
//! (`Shape`, `Gather`, `Concat`, `Unsqueeze`, integer `Add`/`Mul`/..., `Cast`) is folded at import
//! time, so `Reshape`, `Slice`, `Pad`, `Clip` and reductions see constant shapes, bounds and
//! axes. A constant used as data becomes a data parameter (an initializer) or a `full` node (a
//! `Constant` whose elements are all equal). Every other node becomes one L0 node, or a few (a
//! `Gemm` with `alpha`/`beta`, `Flatten` as `reshape`). ONNX booleans are L0's i32 1 or 0: a
//! comparison becomes the L0 comparison (named after the `Cast` to INT32 that follows it, the
//! exporter's form), and a `Cast` to BOOL is read only where every use is the condition of a
//! `Where` (which takes any nonzero i32 as true). The GELU of PyTorch's opset-13..19
//! export (`x * 0.5 * (1 + erf(x / sqrt(2)))`) is recognised as one `gelu`. Nodes of the
//! model-local domain `ekb` (written by the exporter for operators opset 17 lacks) are read
//! back as the L0 operator they name.
//!
//! What it must keep true:
//! - all or nothing: every unsupported operator or attribute anywhere in the model is reported,
//!   in one diagnostic with one line per node (name and op type), and no graph is returned;
//! - every shape is static: a symbolic dimension must be given with `--input-shape`, otherwise
//!   the error names the input and the dimension;
//! - an attribute the importer does not interpret is never ignored: it is reported;
//! - a malformed model (not protobuf, an initializer whose data does not match its dims,
//!   external data) is a precise error, never a panic;
//! - the result passes `l0::check`, and the exporter's models come back as the graph they were
//!   exported from (see `export.rs`).

use crate::consts::{decode, Const, Data};
use crate::export::{EKB_DOMAIN, INIT_KEY};
use crate::proto::{attr_type, dtype, AttributeProto, ModelProto, NodeProto, ValueInfoProto};
use ekb_ir::diag::{Diagnostic, Span};
use ekb_ir::l0::ast::{
    BinaryOp, CompareOp, Conv2dAttrs, ConvTranspose2dAttrs, Graph, Node, Op, OutputDecl, PadMode, ParamData,
    Pool2dAttrs, ReduceKind, ResizeMode, TensorDecl, UnaryOp, ValueRef,
};
use ekb_ir::l0::ops::{broadcast, infer, normalise_axis};
use ekb_ir::tensor::BufData;
use ekb_ir::types::{DType, TensorType};
use prost::Message;
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

/// The oldest default-domain opset the importer reads.
pub const MIN_OPSET: i64 = 13;

/// How to import.
#[derive(Debug, Clone, Default)]
pub struct ImportOptions {
    /// The graph's name (it keys the seeded inputs); `None`: the ONNX graph's name.
    pub name: Option<String>,
    /// Full static shapes for inputs whose declared shape has symbolic or unknown dimensions.
    pub input_shapes: Vec<(String, Vec<usize>)>,
    /// The name of the sidecar data file, as the `.ekir` file will name it (relative to it).
    pub data_file: String,
}

/// An imported model: the checked graph (data parameters loaded) and the sidecar file's bytes.
#[derive(Debug, Clone)]
pub struct Imported {
    pub graph: Graph,
    pub data: Vec<u8>,
}

/// Decodes and imports a serialised ONNX model.
pub fn import(bytes: &[u8], opts: &ImportOptions) -> Result<Imported, Diagnostic> {
    let model = ModelProto::decode(bytes).map_err(|e| {
        Diagnostic::error(format!("not a valid ONNX model: the protobuf does not decode ({e})"))
            .with_expected("an ONNX ModelProto (`.onnx` file)")
    })?;
    import_model(&model, opts)
}

/// Imports a decoded model.
pub fn import_model(model: &ModelProto, opts: &ImportOptions) -> Result<Imported, Diagnostic> {
    let opset = model
        .opset_import
        .iter()
        .find(|o| o.domain.is_empty() || o.domain == "ai.onnx")
        .map(|o| o.version)
        .ok_or_else(|| Diagnostic::error("the model imports no default-domain opset (`ai.onnx`)"))?;
    if opset < MIN_OPSET {
        return Err(Diagnostic::error(format!(
            "the model uses opset {opset}; the importer reads opset {MIN_OPSET} and newer"
        ))
        .with_hint("convert it first: `onnx.version_converter.convert_version(model, 17)` in Python"));
    }
    let graph = model.graph.as_ref().ok_or_else(|| Diagnostic::error("the model has no graph"))?;
    if !graph.sparse_initializer.is_empty() {
        return Err(Diagnostic::error("the model has sparse initializers, which the importer does not read"));
    }
    let name =
        opts.name.clone().unwrap_or_else(|| ident(if graph.name.is_empty() { "model" } else { &graph.name }));
    if !is_ident(&name) {
        return Err(Diagnostic::error(format!("`{name}` is not a valid graph name"))
            .with_expected("an identifier: letters, digits and `_`, not starting with a digit"));
    }
    let meta: HashMap<&str, &str> =
        model.metadata_props.iter().map(|e| (e.key.as_str(), e.value.as_str())).collect();
    let mut im = Importer::new(opts, graph.node.as_slice(), opset);

    // Initializers, then the true inputs (those that are not initializers).
    let mut errors = Vec::new();
    for t in &graph.initializer {
        match decode(t, &format!("initializer `{}`", t.name)) {
            Ok(c) => {
                im.vals.insert(t.name.clone(), Val::C { c: Rc::new(c), onnx: t.name.clone(), init: true });
            }
            Err(e) => errors.push(e),
        }
    }
    for vi in &graph.input {
        if graph.initializer.iter().any(|t| t.name == vi.name) {
            continue;
        }
        match im.input(vi, &meta) {
            Ok(()) => {}
            Err(e) => errors.push(e),
        }
    }
    if !errors.is_empty() {
        // Without every input's type the nodes cannot be converted, but their operators and
        // attributes can still be checked, so that one report lists everything missing.
        for (i, n) in graph.node.iter().enumerate() {
            if let Err(why) = check_attrs(n) {
                errors.push(format!("{}: {why}", node_label(i, n)));
            }
        }
        return Err(list_error("the model cannot be imported", errors));
    }
    im.find_patterns(&graph.output);
    for (i, n) in graph.node.iter().enumerate() {
        im.node(i, n, &graph.output);
    }
    let outputs = im.outputs(&graph.output);
    if !im.problems.is_empty() {
        let n = im.problems.len();
        return Err(list_error(
            &format!(
                "{n} node{} of the model use{} operators or attributes that L0 does not support; nothing was imported",
                if n == 1 { "" } else { "s" },
                if n == 1 { "s" } else { "" }
            ),
            std::mem::take(&mut im.problems),
        ));
    }
    let mut g = Graph {
        name,
        inputs: im.inputs,
        params: im.params,
        nodes: im.nodes,
        outputs: outputs?,
        span: Span::NONE,
    };
    ekb_ir::l0::check::check(&mut g).map_err(|ds| {
        list_error(
            "internal error: the imported graph does not check",
            ds.into_iter().map(|d| d.message.clone()).collect(),
        )
    })?;
    Ok(Imported { graph: g, data: im.data })
}

/// One diagnostic with a line per problem.
fn list_error(title: &str, lines: Vec<String>) -> Diagnostic {
    lines.into_iter().fold(Diagnostic::error(title), |d, l| d.with_note(l))
}

/// An ONNX tensor as the importer sees it.
#[derive(Debug, Clone)]
enum Val {
    /// An L0 value (input, parameter or node result).
    T { name: String, ty: TensorType },
    /// A constant, with its ONNX name; `init`: it is an initializer (becomes a data parameter).
    C { c: Rc<Const>, onnx: String, init: bool },
    /// Produced by a node that could not be imported (already reported).
    Bad,
}

/// A node's outcome: its outputs, or a description of what is not supported.
type Res = Result<Vec<Val>, String>;

/// A recognised multi-node pattern, replacing its last node.
#[derive(Debug, Clone)]
enum Pattern {
    /// `x * 0.5 * (1 + erf(x / sqrt(2)))` computed from `x`.
    GeluErf { x: String },
}

struct Importer<'a> {
    opts: &'a ImportOptions,
    /// The model's default-domain opset (some operators changed meaning between versions).
    opset: i64,
    nodes_in: &'a [NodeProto],
    vals: HashMap<String, Val>,
    /// Every L0 name taken (inputs, parameters, outputs, `%` node names).
    used: HashSet<String>,
    inputs: Vec<TensorDecl>,
    params: Vec<TensorDecl>,
    nodes: Vec<Node>,
    types: HashMap<String, TensorType>,
    data: Vec<u8>,
    /// Constants already turned into an L0 value, by (ONNX name, dtype).
    materialised: HashMap<(String, DType), (String, TensorType)>,
    problems: Vec<String>,
    /// For each ONNX tensor, the indices of the nodes that read it.
    consumers: HashMap<String, Vec<usize>>,
    /// Nodes folded into a pattern (skipped), and the pattern each last node stands for.
    skip: HashSet<usize>,
    patterns: HashMap<usize, Pattern>,
}

impl<'a> Importer<'a> {
    fn new(opts: &'a ImportOptions, nodes_in: &'a [NodeProto], opset: i64) -> Importer<'a> {
        let mut consumers: HashMap<String, Vec<usize>> = HashMap::new();
        for (i, n) in nodes_in.iter().enumerate() {
            for inp in n.input.iter().filter(|s| !s.is_empty()) {
                consumers.entry(inp.clone()).or_default().push(i);
            }
        }
        Importer {
            opts,
            opset,
            nodes_in,
            vals: HashMap::new(),
            used: HashSet::new(),
            inputs: Vec::new(),
            params: Vec::new(),
            nodes: Vec::new(),
            types: HashMap::new(),
            data: Vec::new(),
            materialised: HashMap::new(),
            problems: Vec::new(),
            consumers,
            skip: HashSet::new(),
            patterns: HashMap::new(),
        }
    }

    /// A fresh L0 name from an ONNX one: an identifier, or a `%` name for node results.
    fn fresh(&mut self, onnx: &str, node: bool) -> String {
        let base = match (node, onnx.strip_prefix('%')) {
            (true, Some(rest)) if !rest.is_empty() && rest.bytes().all(is_ident_byte) => onnx.to_string(),
            (true, _) => format!(
                "%{}",
                onnx.bytes().map(|b| if is_ident_byte(b) { b as char } else { '_' }).collect::<String>()
            ),
            (false, _) => ident(onnx),
        };
        let mut name = base.clone();
        let mut k = 2;
        while self.used.contains(&name) {
            name = format!("{base}_{k}");
            k += 1;
        }
        self.used.insert(name.clone());
        name
    }

    /// A graph input: f32 or i32 with a static shape (symbolic dims from `--input-shape`).
    fn input(&mut self, vi: &ValueInfoProto, meta: &HashMap<&str, &str>) -> Result<(), String> {
        let tt = vi.r#type.as_ref().and_then(|t| t.tensor_type.as_ref()).ok_or_else(|| {
            format!("input `{}` is not a tensor (sequences, maps and optionals are not supported)", vi.name)
        })?;
        let dt = match tt.elem_type {
            dtype::FLOAT => DType::F32,
            dtype::INT32 => DType::I32,
            dtype::INT8 => DType::I8,
            dtype::FLOAT16 => DType::F16,
            other => {
                return Err(format!(
                    "input `{}` has element type {}; L0 inputs are FLOAT (f32), INT32 (i32), INT8 (i8) or FLOAT16 (f16)",
                    vi.name,
                    dtype::name(other)
                ))
            }
        };
        let given = self.opts.input_shapes.iter().find(|(n, _)| *n == vi.name).map(|(_, s)| s.clone());
        let dims = tt.shape.as_ref().map(|s| s.dim.as_slice());
        let shape = match (dims, given) {
            (_, Some(g)) => {
                if let Some(dims) = dims {
                    if dims.len() != g.len() {
                        return Err(format!(
                            "`--input-shape {}=...` gives {} dimensions but the model's input has rank {}",
                            vi.name,
                            g.len(),
                            dims.len()
                        ));
                    }
                    for (i, (d, &s)) in dims.iter().zip(&g).enumerate() {
                        if let Some(v) = d.dim_value.filter(|&v| v > 0) {
                            if v as usize != s {
                                return Err(format!(
                                    "`--input-shape` gives {s} for dimension {i} of input `{}`, but the model fixes it to {v}",
                                    vi.name
                                ));
                            }
                        }
                    }
                }
                g
            }
            (None, None) => {
                return Err(format!(
                    "input `{}` has no shape; give one with `--input-shape {}=D0,D1,...`",
                    vi.name, vi.name
                ))
            }
            (Some(dims), None) => {
                let mut shape = Vec::with_capacity(dims.len());
                for (i, d) in dims.iter().enumerate() {
                    match (d.dim_value, &d.dim_param) {
                        (Some(v), _) if v >= 0 => shape.push(v as usize),
                        (_, Some(p)) if !p.is_empty() => {
                            return Err(format!(
                                "input `{}` has a symbolic dimension `{p}` (dimension {i}); static shapes are required: give its size with `--input-shape {}={}`",
                                vi.name,
                                vi.name,
                                example_shape(dims)
                            ))
                        }
                        _ => {
                            return Err(format!(
                                "input `{}` has an unknown dimension {i}; static shapes are required: give its size with `--input-shape {}={}`",
                                vi.name,
                                vi.name,
                                example_shape(dims)
                            ))
                        }
                    }
                }
                shape
            }
        };
        let ty = TensorType::new(dt, shape);
        let name = self.fresh(&vi.name, false);
        let init = match meta.get(format!("{INIT_KEY}{}", vi.name).as_str()) {
            Some(text) => ekb_ir::l0::parse::parse_init(text)
                .map_err(|d| format!("metadata `{INIT_KEY}{}` = `{text}`: {}", vi.name, d.message))?,
            None => dt.default_init(),
        };
        self.types.insert(name.clone(), ty.clone());
        self.vals.insert(vi.name.clone(), Val::T { name: name.clone(), ty: ty.clone() });
        self.inputs.push(TensorDecl::seeded(name, ty, init, Span::NONE));
        Ok(())
    }

    /// The model's outputs as L0 output declarations.
    fn outputs(&mut self, outs: &[ValueInfoProto]) -> Result<Vec<OutputDecl>, Diagnostic> {
        let mut decls = Vec::new();
        for vi in outs {
            let v = self.vals.get(&vi.name).cloned();
            let (value, ty) = match v {
                Some(Val::T { name, ty }) => (name, ty),
                Some(c @ Val::C { .. }) => match self.tensor(&c, None) {
                    Ok(t) => t,
                    Err(e) => {
                        self.problems.push(format!("output `{}`: {e}", vi.name));
                        continue;
                    }
                },
                Some(Val::Bad) => continue,
                None => {
                    self.problems.push(format!("output `{}` is not produced by any node", vi.name));
                    continue;
                }
            };
            let name = self.fresh(&vi.name, false);
            decls.push(OutputDecl {
                name,
                ty,
                value: ValueRef { name: value, span: Span::NONE },
                span: Span::NONE,
            });
        }
        Ok(decls)
    }

    /// The L0 value for an ONNX value, turning a constant into a data parameter or a `full`
    /// node; `want` converts a constant to that dtype.
    fn tensor(&mut self, v: &Val, want: Option<DType>) -> Result<(String, TensorType), String> {
        let (c, onnx, init) = match v {
            Val::T { name, ty } => return Ok((name.clone(), ty.clone())),
            Val::Bad => return Err("input from a node that was not imported".into()),
            Val::C { c, onnx, init } => (c, onnx, *init),
        };
        let dt = want.unwrap_or(c.l0_dtype());
        let key = (onnx.clone(), dt);
        if let Some(t) = self.materialised.get(&key) {
            return Ok(t.clone());
        }
        let buf = match dt {
            DType::F32 => BufData::F32(c.as_f64().iter().map(|&x| x as f32).collect()),
            DType::I32 => match &c.data {
                Data::Int(_) => c.to_buf().map_err(|e| format!("constant `{onnx}`: {e}"))?,
                Data::F32(_) => {
                    let ints = c.as_ints().ok_or_else(|| format!("constant `{onnx}` is not integral"))?;
                    Const::ints(c.dims.clone(), ints)
                        .to_buf()
                        .map_err(|e| format!("constant `{onnx}`: {e}"))?
                }
            },
            DType::I8 => c.to_i8_buf().map_err(|e| format!("constant `{onnx}`: {e}"))?,
            DType::F16 => {
                BufData::F16(c.as_f64().iter().map(|&x| ekb_wire::f16::from_f32(x as f32)).collect())
            }
        };
        let ty = TensorType::new(dt, c.dims.clone());
        let out = if init || !c.is_uniform() || c.numel() == 0 {
            let name = self.fresh(onnx, false);
            // Align each tensor to 64 bytes in the sidecar file.
            self.data.resize(self.data.len().div_ceil(64) * 64, 0);
            let offset = self.data.len() as u64;
            self.data.extend(ekb_ir::l0::ast::le_bytes(&buf));
            let pd = ParamData::with_values(self.opts.data_file.clone(), offset, buf);
            self.params.push(TensorDecl::with_data(name.clone(), ty.clone(), pd, Span::NONE));
            self.types.insert(name.clone(), ty.clone());
            (name, ty)
        } else {
            let value = c.as_f64()[0];
            let Val::T { name, ty } = self.emit(onnx, Op::Full { ty: ty.clone(), value }, vec![])? else {
                unreachable!("emit gives a tensor")
            };
            (name, ty)
        };
        self.materialised.insert(key, out.clone());
        Ok(out)
    }

    /// Appends one L0 node (its type inferred); `hint` names it.
    fn emit(&mut self, hint: &str, op: Op, args: Vec<String>) -> Result<Val, String> {
        let types: Vec<TensorType> = args.iter().map(|a| self.types[a].clone()).collect();
        let refs: Vec<&TensorType> = types.iter().collect();
        let ty = infer(&op, &refs, Span::NONE).map_err(|d| d.message.clone())?;
        let name = self.fresh(hint, true);
        self.types.insert(name.clone(), ty.clone());
        self.nodes.push(Node {
            name: name.clone(),
            op,
            args: args.into_iter().map(|name| ValueRef { name, span: Span::NONE }).collect(),
            ty: Some(ty.clone()),
            span: Span::NONE,
            op_span: Span::NONE,
        });
        Ok(Val::T { name, ty })
    }

    /// Finds the GELU pattern; its inner nodes are skipped and its last node replaced.
    fn find_patterns(&mut self, outputs: &[ValueInfoProto]) {
        let consts: HashMap<&str, f64> = self
            .nodes_in
            .iter()
            .filter(|n| n.op_type == "Constant" && n.output.len() == 1)
            .filter_map(|n| {
                let a = n.attribute.first()?;
                let v = match a.name.as_str() {
                    "value_float" => f64::from(a.f?),
                    "value" => decode(a.t.as_ref()?, "").ok()?.scalar()?,
                    _ => return None,
                };
                Some((n.output[0].as_str(), v))
            })
            .chain(self.vals.iter().filter_map(|(k, v)| match v {
                Val::C { c, .. } => Some((k.as_str(), c.scalar()?)),
                _ => None,
            }))
            .collect();
        let is_out = |t: &str| outputs.iter().any(|o| o.name == t);
        let near =
            |name: &str, want: f64| consts.get(name).is_some_and(|&v| (v - want).abs() <= 1e-6 * want.abs());
        let producer: HashMap<&str, usize> = self
            .nodes_in
            .iter()
            .enumerate()
            .flat_map(|(i, n)| n.output.iter().map(move |o| (o.as_str(), i)))
            .collect();
        // The only consumer of `t`, if `t` is not a graph output.
        let sole = |t: &str| -> Option<usize> {
            match self.consumers.get(t).map(|c| c.as_slice()) {
                Some([only]) if !is_out(t) => Some(*only),
                _ => None,
            }
        };
        let other = |n: &NodeProto, this: &str| -> Option<String> {
            match n.input.as_slice() {
                [a, b] if a == this => Some(b.clone()),
                [a, b] if b == this => Some(a.clone()),
                _ => None,
            }
        };
        let mut found = Vec::new();
        for (ei, e) in self.nodes_in.iter().enumerate() {
            if e.op_type != "Erf" || e.input.len() != 1 {
                continue;
            }
            // x / sqrt(2) or x * (1 / sqrt(2)).
            let Some(&pi) = producer.get(e.input[0].as_str()) else { continue };
            let p = &self.nodes_in[pi];
            let x = match (p.op_type.as_str(), p.input.as_slice()) {
                ("Div", [x, c]) if near(c, std::f64::consts::SQRT_2) => x.clone(),
                ("Mul", [x, c]) | ("Mul", [c, x]) if near(c, std::f64::consts::FRAC_1_SQRT_2) => x.clone(),
                _ => continue,
            };
            if sole(&p.output[0]) != Some(ei) {
                continue;
            }
            // 1 + erf(...)
            let Some(ai) = sole(&e.output[0]) else { continue };
            let a = &self.nodes_in[ai];
            if a.op_type != "Add" || !other(a, &e.output[0]).is_some_and(|o| near(&o, 1.0)) {
                continue;
            }
            // Then multiplications by x and 0.5 (in either order, or by a node computing x * 0.5).
            let mut inner = vec![pi, ei, ai];
            let mut cur = a.output[0].clone();
            let (mut have_x, mut have_half) = (false, false);
            let mut last = None;
            for _ in 0..2 {
                let Some(mi) = sole(&cur) else { break };
                let m = &self.nodes_in[mi];
                let Some(o) = other(m, &cur).filter(|_| m.op_type == "Mul") else { break };
                if o == x && !have_x {
                    have_x = true;
                } else if near(&o, 0.5) && !have_half {
                    have_half = true;
                } else if let Some(&hi) = producer.get(o.as_str()) {
                    let h = &self.nodes_in[hi];
                    let half_x = h.op_type == "Mul"
                        && other(h, &x).is_some_and(|c| near(&c, 0.5))
                        && sole(&h.output[0]) == Some(mi);
                    if !half_x || have_x || have_half {
                        break;
                    }
                    have_x = true;
                    have_half = true;
                    inner.push(hi);
                } else {
                    break;
                }
                last = Some(mi);
                if have_x && have_half {
                    break;
                }
                inner.push(mi);
                cur = m.output[0].clone();
            }
            if let (Some(li), true, true) = (last, have_x, have_half) {
                found.push((li, x, inner));
            }
        }
        for (last, x, inner) in found {
            self.skip.extend(inner);
            self.patterns.insert(last, Pattern::GeluErf { x });
        }
    }

    /// Imports one node, recording its outputs or its problem.
    fn node(&mut self, i: usize, n: &NodeProto, graph_outputs: &[ValueInfoProto]) {
        if self.skip.contains(&i) {
            return;
        }
        let label = node_label(i, n);
        let ins: Vec<Val> = n
            .input
            .iter()
            .map(|s| if s.is_empty() { Val::Bad } else { self.vals.get(s).cloned().unwrap_or(Val::Bad) })
            .collect();
        let pattern = self.patterns.get(&i).cloned();
        let missing = n
            .input
            .iter()
            .find(|s| !s.is_empty() && !self.vals.contains_key(s.as_str()))
            .filter(|_| pattern.is_none());
        let outcome = if let Some(m) = missing {
            Err(format!("input `{m}` is not defined before this node"))
        } else if let Some(Pattern::GeluErf { x }) = pattern {
            match self.vals.get(&x).cloned().unwrap_or(Val::Bad) {
                Val::Bad => Ok(vec![Val::Bad]),
                xv => self.unary_val(&xv, UnaryOp::Gelu { tanh: false }, &n.output[0]).map(|v| vec![v]),
            }
        } else if let Err(why) = check_attrs(n) {
            Err(why)
        } else if n.input.iter().zip(&ins).any(|(s, v)| !s.is_empty() && matches!(v, Val::Bad)) {
            // An input failed earlier: already reported; the outputs fail too.
            Ok(vec![Val::Bad; n.output.len()])
        } else {
            self.convert(n, &ins, graph_outputs)
        };
        match outcome {
            Ok(vals) => {
                for (o, v) in n.output.iter().zip(vals) {
                    if !o.is_empty() {
                        self.vals.insert(o.clone(), v);
                    }
                }
            }
            Err(why) => {
                self.problems.push(format!("{label}: {why}"));
                for o in &n.output {
                    self.vals.insert(o.clone(), Val::Bad);
                }
            }
        }
    }

    fn unary_val(&mut self, x: &Val, op: UnaryOp, out: &str) -> Result<Val, String> {
        let (x, _) = self.tensor(x, None)?;
        self.emit(out, Op::Unary(op), vec![x])
    }

    /// The L0 form of one node.
    fn convert(&mut self, n: &NodeProto, ins: &[Val], graph_outputs: &[ValueInfoProto]) -> Res {
        let out = n.output.first().cloned().unwrap_or_default();
        let a = Attrs(n);
        let ekb = n.domain == EKB_DOMAIN;
        // Extra outputs (BatchNormalization's statistics, MaxPool's indices, ...) must be unused.
        for extra in n.output.iter().skip(1).filter(|o| !o.is_empty()) {
            let used = self.consumers.contains_key(extra) || graph_outputs.iter().any(|g| &g.name == extra);
            if used && n.op_type != "Dropout" {
                return Err(format!(
                    "output `{extra}` is used; only the first output of `{}` is supported",
                    n.op_type
                ));
            }
        }
        let x = ins.first().cloned().unwrap_or(Val::Bad);
        let one = |v: Val| Ok(vec![v]);
        let unary = |s: &mut Self, op: UnaryOp| -> Res { one(s.unary_val(&x, op, &out)?) };
        match (ekb, n.op_type.as_str()) {
            (false, "Relu") => unary(self, UnaryOp::Relu),
            (false, "Sigmoid") => unary(self, UnaryOp::Sigmoid),
            (false, "Tanh") => unary(self, UnaryOp::Tanh),
            (false, "Exp") => unary(self, UnaryOp::Exp),
            (false, "Log") => unary(self, UnaryOp::Log),
            (false, "Sqrt") => unary(self, UnaryOp::Sqrt),
            (false, "Abs") => unary(self, UnaryOp::Abs),
            (false, "Neg") => unary(self, UnaryOp::Neg),
            (false, "Sin") => unary(self, UnaryOp::Sin),
            (false, "Cos") => unary(self, UnaryOp::Cos),
            (false, "Less" | "LessOrEqual" | "Greater" | "GreaterOrEqual" | "Equal") => {
                let op = match n.op_type.as_str() {
                    "Less" => CompareOp::Less,
                    "LessOrEqual" => CompareOp::LessEqual,
                    "Greater" => CompareOp::Greater,
                    "GreaterOrEqual" => CompareOp::GreaterEqual,
                    _ => CompareOp::Equal,
                };
                let name = self.named_by_cast(&out);
                one(self.compare(op, &ins[0], &ins[1], &name)?)
            }
            (false, "Where") => one(self.where_(&ins[0], &ins[1], &ins[2], &out)?),
            (false, "Expand") => {
                let target = self.const_ints(&ins[1], "shape")?;
                let target = target
                    .iter()
                    .map(|&d| usize::try_from(d).map_err(|_| format!("`shape` entry {d} is negative")))
                    .collect::<Result<Vec<_>, _>>()?;
                let shape = broadcast(&self.dims(&x), &target)?;
                if let Val::C { c, .. } = &x {
                    if c.is_uniform() && c.numel() > 0 {
                        // A constant fill stays a constant (a `full` of the result where used).
                        let numel = shape.iter().product();
                        let data = match &c.data {
                            Data::F32(v) => Data::F32(vec![v[0]; numel]),
                            Data::Int(v) => Data::Int(vec![v[0]; numel]),
                        };
                        let c = Const { onnx_type: c.onnx_type, dims: shape, data };
                        return one(Val::C { c: Rc::new(c), onnx: out.clone(), init: false });
                    }
                }
                let (xn, _) = self.tensor(&x, None)?;
                one(self.emit(&out, Op::Expand { shape }, vec![xn])?)
            }
            (false, "CumSum") => {
                let axis = match self.const_ints(&ins[1], "axis")?.as_slice() {
                    [a] => *a,
                    other => return Err(format!("`axis` must be one integer, found {other:?}")),
                };
                let (xn, _) = self.tensor(&x, None)?;
                let op = Op::CumSum {
                    axis,
                    exclusive: a.int("exclusive", 0)? != 0,
                    reverse: a.int("reverse", 0)? != 0,
                };
                one(self.emit(&out, op, vec![xn])?)
            }
            (false, "GroupNormalization") => self.group_norm(n, ins, &out).map(|v| vec![v]),
            (false, "ConvTranspose") => self.conv_transpose(n, ins, &out).map(|v| vec![v]),
            (false, "Resize") => self.resize(n, ins, &out).map(|v| vec![v]),
            (false, "Range") => {
                let [Val::C { c: start, .. }, Val::C { c: limit, .. }, Val::C { c: delta, .. }] = ins else {
                    return Err(
                        "`Range` of computed bounds is not supported; only constant bounds are folded".into(),
                    );
                };
                let (Some(s0), Some(l), Some(d)) = (start.scalar(), limit.scalar(), delta.scalar()) else {
                    return Err("`start`, `limit` and `delta` must be scalars".into());
                };
                if d == 0.0 {
                    return Err("`delta` is 0".into());
                }
                let count = ((l - s0) / d).ceil().max(0.0) as usize;
                let values = (0..count).map(|i| s0 + i as f64 * d);
                let data = match start.data {
                    Data::F32(_) => Data::F32(values.map(|v| v as f32).collect()),
                    Data::Int(_) => Data::Int(values.map(|v| v as i64).collect()),
                };
                let c = Const { onnx_type: start.onnx_type, dims: vec![count], data };
                one(Val::C { c: Rc::new(c), onnx: out.clone(), init: false })
            }
            (false, "HardSwish") => unary(self, UnaryOp::HardSwish),
            (false, "Softplus") => unary(self, UnaryOp::Softplus { beta: 1.0, threshold: 20.0 }),
            (false, "LeakyRelu") => {
                let alpha = a.float("alpha", 0.01)?;
                unary(self, UnaryOp::LeakyRelu { alpha })
            }
            (false, "Elu") => {
                let alpha = a.float("alpha", 1.0)?;
                unary(self, UnaryOp::Elu { alpha })
            }
            (false, "Gelu") => {
                let tanh = match a.string("approximate", "none")?.as_str() {
                    "none" => false,
                    "tanh" => true,
                    other => return Err(format!("attribute `approximate`=\"{other}\" is not supported")),
                };
                unary(self, UnaryOp::Gelu { tanh })
            }
            (false, "HardSigmoid") => {
                let (alpha, beta) = (a.float("alpha", 0.2)?, a.float("beta", 0.5)?);
                if (alpha - 1.0 / 6.0).abs() < 1e-7 && beta == 0.5 {
                    return one(self.unary_val(&x, UnaryOp::HardSigmoid, &out)?);
                }
                // max(0, min(1, alpha * x + beta))
                let (xn, _) = self.tensor(&x, None)?;
                let al = self.scalar(alpha, DType::F32, &format!("{out}_alpha"))?;
                let be = self.scalar(beta, DType::F32, &format!("{out}_beta"))?;
                let Val::T { name: m, .. } =
                    self.emit(&format!("{out}_scaled"), Op::Binary(BinaryOp::Mul), vec![xn, al])?
                else {
                    unreachable!()
                };
                let Val::T { name: s, .. } =
                    self.emit(&format!("{out}_shifted"), Op::Binary(BinaryOp::Add), vec![m, be])?
                else {
                    unreachable!()
                };
                one(self.emit(&out, Op::Unary(UnaryOp::Clip { min: 0.0, max: 1.0 }), vec![s])?)
            }
            (false, "Reciprocal") => {
                let (xn, ty) = self.tensor(&x, None)?;
                let one_ = self.scalar(1.0, ty.dtype, &format!("{out}_one"))?;
                one(self.emit(&out, Op::Binary(BinaryOp::Div), vec![one_, xn])?)
            }
            (false, "Clip") => {
                let bound = |i: usize, what: &str, dflt: f64| -> Result<f64, String> {
                    match ins.get(i) {
                        None => Ok(dflt),
                        Some(_) if n.input[i].is_empty() => Ok(dflt),
                        Some(Val::C { c, .. }) => {
                            c.scalar().map(short).ok_or_else(|| format!("`{what}` must be a scalar"))
                        }
                        Some(_) => Err(format!("`{what}` must be a constant")),
                    }
                };
                let (min, max) = (bound(1, "min", f64::NEG_INFINITY)?, bound(2, "max", f64::INFINITY)?);
                one(self.unary_val(&x, UnaryOp::Clip { min, max }, &out)?)
            }
            (false, "Add" | "Sub" | "Mul" | "Div" | "Pow") => {
                let op = match n.op_type.as_str() {
                    "Add" => BinaryOp::Add,
                    "Sub" => BinaryOp::Sub,
                    "Mul" => BinaryOp::Mul,
                    "Div" => BinaryOp::Div,
                    _ => BinaryOp::Pow,
                };
                one(self.binary(op, &ins[0], &ins[1], &out)?)
            }
            (false, "Max" | "Min" | "Sum") => {
                let op = match n.op_type.as_str() {
                    "Max" => BinaryOp::Max,
                    "Min" => BinaryOp::Min,
                    _ => BinaryOp::Add,
                };
                let mut acc = ins[0].clone();
                for (k, v) in ins.iter().enumerate().skip(1) {
                    let hint = if k + 1 == ins.len() { out.clone() } else { format!("{out}_{k}") };
                    acc = self.binary(op, &acc, v, &hint)?;
                }
                one(acc)
            }
            (false, "MatMul") => self.matmul(&ins[0], &ins[1], Some(DType::F32), &out).map(|v| vec![v]),
            (false, "MatMulInteger" | "ConvInteger") if ins.len() < 2 => {
                Err(format!("{} input(s); `{}` takes at least 2", ins.len(), n.op_type))
            }
            (false, "MatMulInteger") => {
                self.no_zero_points(n, ins, &["a_zero_point", "b_zero_point"])?;
                self.int8_operands(&ins[..2], &["A", "B"])?;
                one(self.matmul(&ins[0], &ins[1], None, &out)?)
            }
            (false, "Gemm") => self.gemm(n, ins, &out).map(|v| vec![v]),
            (false, "Conv") => {
                self.conv(n, &ins[..ins.len().min(3)], Some(DType::F32), &out).map(|v| vec![v])
            }
            (false, "ConvInteger") => {
                self.no_zero_points(n, ins, &["x_zero_point", "w_zero_point"])?;
                self.int8_operands(&ins[..2], &["x", "w"])?;
                one(self.conv(n, &ins[..2], None, &out)?)
            }
            (false, "MaxPool" | "AveragePool") => self.pool(n, &x, &out).map(|v| vec![v]),
            (false, "GlobalAveragePool") => {
                let (xn, _) = self.tensor(&x, None)?;
                one(self.emit(&out, Op::GlobalAvgPool2d, vec![xn])?)
            }
            (false, "GlobalMaxPool") => {
                let (xn, _) = self.tensor(&x, None)?;
                one(self.emit(
                    &out,
                    Op::Reduce { kind: ReduceKind::Max, axes: vec![2, 3], keepdims: true },
                    vec![xn],
                )?)
            }
            (false, "BatchNormalization") => {
                if a.int("training_mode", 0)? != 0 {
                    return Err("`training_mode`=1 is not supported (inference only)".into());
                }
                let eps = a.float("epsilon", 1e-5)?;
                let mut args = Vec::new();
                for v in ins.iter().take(5) {
                    args.push(self.tensor(v, Some(DType::F32))?.0);
                }
                one(self.emit(&out, Op::BatchNorm { eps }, args)?)
            }
            (false, "LayerNormalization") => {
                let (xn, xt) = self.tensor(&x, None)?;
                let axis = norm_axis(a.int("axis", -1)?, xt.rank()).ok_or("`axis` is out of range")?;
                let eps = a.float("epsilon", 1e-5)?;
                let (w, wt) = self.tensor(&ins[1], Some(DType::F32))?;
                if wt.shape != xt.shape[axis..] {
                    return Err(format!(
                        "the scale has shape {:?}; L0 needs the normalised dims {:?} exactly",
                        wt.shape,
                        &xt.shape[axis..]
                    ));
                }
                let b = match ins.get(2) {
                    Some(v) if !n.input[2].is_empty() => self.tensor(v, Some(DType::F32))?.0,
                    _ => {
                        let Val::T { name, .. } = self.emit(
                            &format!("{out}_bias"),
                            Op::Full { ty: TensorType::new(DType::F32, wt.shape.clone()), value: 0.0 },
                            vec![],
                        )?
                        else {
                            unreachable!()
                        };
                        name
                    }
                };
                one(self.emit(&out, Op::LayerNorm { eps }, vec![xn, w, b])?)
            }
            (false, "Softmax" | "LogSoftmax") => {
                let axis = a.int("axis", -1)?;
                let (xn, _) = self.tensor(&x, None)?;
                one(self.emit(&out, Op::Softmax { axis, log: n.op_type == "LogSoftmax" }, vec![xn])?)
            }
            (false, "ReduceMean" | "ReduceSum" | "ReduceMax" | "ReduceMin") => self.reduce(n, ins, &out),
            (false, "ArgMax") => {
                if a.int("select_last_index", 0)? != 0 {
                    return Err("`select_last_index`=1 is not supported (L0 takes the first maximum)".into());
                }
                let (xn, _) = self.tensor(&x, None)?;
                let op = Op::ArgMax { axis: a.int("axis", 0)?, keepdims: a.int("keepdims", 1)? != 0 };
                let name = self.named_by_cast(&out);
                one(self.emit(&name, op, vec![xn])?)
            }
            (false, "Cast") => {
                let to = a.int("to", 0)? as i32;
                if to == dtype::BOOL {
                    return self.cast_to_bool(&x, &out, graph_outputs).map(|v| vec![v]);
                }
                let dt = match to {
                    dtype::FLOAT => DType::F32,
                    dtype::INT32 | dtype::INT64 => DType::I32,
                    dtype::INT8 => DType::I8,
                    dtype::FLOAT16 => DType::F16,
                    other => {
                        return Err(format!(
                            "a cast to {} is not supported (L0 has f32, i32, i8 and f16)",
                            dtype::name(other)
                        ))
                    }
                };
                match &x {
                    Val::C { c, .. } => {
                        // Folded as L0's `cast` computes it: floats truncate (saturating to i8),
                        // integers narrowed to i8 keep their low 8 bits.
                        let data = match (dt, &c.data) {
                            (DType::F32, _) => Data::F32(c.as_f64().iter().map(|&v| v as f32).collect()),
                            (DType::I32, Data::Int(v)) => Data::Int(v.clone()),
                            (DType::I32, Data::F32(v)) => {
                                Data::Int(v.iter().map(|&v| v.trunc() as i64).collect())
                            }
                            (DType::I8, Data::Int(v)) => {
                                Data::Int(v.iter().map(|&v| i64::from(v as i8)).collect())
                            }
                            (DType::I8, Data::F32(v)) => {
                                Data::Int(v.iter().map(|&v| i64::from(v as i8)).collect())
                            }
                            (DType::F16, _) => Data::F32(
                                c.as_f64()
                                    .iter()
                                    .map(|&v| ekb_wire::f16::to_f32(ekb_wire::f16::from_f32(v as f32)))
                                    .collect(),
                            ),
                        };
                        one(Val::C {
                            c: Rc::new(Const { onnx_type: to, dims: c.dims.clone(), data }),
                            onnx: out.clone(),
                            init: false,
                        })
                    }
                    Val::T { ty, .. } if ty.dtype == dt => one(x.clone()),
                    _ => {
                        let (xn, _) = self.tensor(&x, None)?;
                        one(self.emit(&out, Op::Cast { dtype: dt }, vec![xn])?)
                    }
                }
            }
            (false, "Identity") => one(x),
            (false, "QuantizeLinear" | "DequantizeLinear") => one(self.quantize(n, ins, &out)?),
            (false, "Dropout") => {
                if let Some(Val::C { c, .. }) = ins.get(2) {
                    if c.scalar().is_some_and(|v| v != 0.0) {
                        return Err("`training_mode` is true; only inference is supported".into());
                    }
                } else if ins.len() > 2 && !n.input[2].is_empty() {
                    return Err("`training_mode` must be a constant".into());
                }
                if n.output.len() > 1 && !n.output[1].is_empty() && self.consumers.contains_key(&n.output[1])
                {
                    return Err("the mask output is used; only inference is supported".into());
                }
                Ok(vec![x.clone(), Val::Bad])
            }
            (false, "Constant") => {
                let attr = n.attribute.first().ok_or("no value attribute")?;
                if n.attribute.len() != 1 {
                    return Err("more than one value attribute".into());
                }
                let c = match attr.name.as_str() {
                    "value" => decode(
                        attr.t.as_ref().ok_or("`value` holds no tensor")?,
                        &format!("constant `{out}`"),
                    )?,
                    "value_float" => Const {
                        onnx_type: dtype::FLOAT,
                        dims: vec![],
                        data: Data::F32(vec![attr.f.unwrap_or(0.0)]),
                    },
                    "value_floats" => Const {
                        onnx_type: dtype::FLOAT,
                        dims: vec![attr.floats.len()],
                        data: Data::F32(attr.floats.clone()),
                    },
                    "value_int" => Const {
                        onnx_type: dtype::INT64,
                        dims: vec![],
                        data: Data::Int(vec![attr.i.unwrap_or(0)]),
                    },
                    "value_ints" => Const::ints(vec![attr.ints.len()], attr.ints.clone()),
                    other => return Err(format!("attribute `{other}` is not supported")),
                };
                one(Val::C { c: Rc::new(c), onnx: out.clone(), init: false })
            }
            (false, "ConstantOfShape") => {
                let shape = self.const_ints(&x, "shape")?;
                let dims = shape
                    .iter()
                    .map(|&d| usize::try_from(d).map_err(|_| format!("negative dimension {d}")))
                    .collect::<Result<Vec<_>, _>>()?;
                let value = match a.get("value") {
                    Some(at) => decode(at.t.as_ref().ok_or("`value` holds no tensor")?, "`value`")?,
                    None => Const { onnx_type: dtype::FLOAT, dims: vec![1], data: Data::F32(vec![0.0]) },
                };
                let v = value.scalar().ok_or("`value` must have one element")?;
                let numel: usize = dims.iter().product();
                let data = match value.data {
                    Data::F32(_) => Data::F32(vec![v as f32; numel]),
                    Data::Int(_) => Data::Int(vec![v as i64; numel]),
                };
                one(Val::C {
                    c: Rc::new(Const { onnx_type: value.onnx_type, dims, data }),
                    onnx: out.clone(),
                    init: false,
                })
            }
            (false, "Shape") => {
                let dims = match &x {
                    Val::T { ty, .. } => ty.shape.clone(),
                    Val::C { c, .. } => c.dims.clone(),
                    Val::Bad => unreachable!("checked above"),
                };
                let r = dims.len() as i64;
                let clamp = |v: i64| (if v < 0 { v + r } else { v }).clamp(0, r) as usize;
                let (s, e) = (clamp(a.int("start", 0)?), clamp(a.int("end", r)?));
                let v: Vec<i64> = dims[s..e.max(s)].iter().map(|&d| d as i64).collect();
                one(Val::C { c: Rc::new(Const::ints(vec![v.len()], v)), onnx: out.clone(), init: false })
            }
            (false, "Size") => {
                let n = match &x {
                    Val::T { ty, .. } => ty.numel(),
                    Val::C { c, .. } => c.numel(),
                    Val::Bad => unreachable!("checked above"),
                };
                one(Val::C {
                    c: Rc::new(Const::ints(vec![], vec![n as i64])),
                    onnx: out.clone(),
                    init: false,
                })
            }
            (false, "Gather") => {
                let axis = a.int("axis", 0)?;
                if let (Val::C { c: data, .. }, Some(Val::C { c: idx, .. })) = (&x, ins.get(1)) {
                    if matches!(data.data, Data::Int(_)) {
                        // Shape arithmetic: folded.
                        return one(Val::C {
                            c: Rc::new(gather(data, idx, axis)?),
                            onnx: out.clone(),
                            init: false,
                        });
                    }
                }
                let (xn, _) = self.tensor(&x, None)?;
                let (idx, _) = self.tensor(&ins[1], Some(DType::I32))?;
                one(self.emit(&out, Op::Gather { axis }, vec![xn, idx])?)
            }
            (false, "Reshape") => {
                let shape = self.const_ints(&ins[1], "shape")?;
                let dims = match &x {
                    Val::T { ty, .. } => ty.shape.clone(),
                    Val::C { c, .. } => c.dims.clone(),
                    Val::Bad => unreachable!("checked above"),
                };
                let allowzero = a.int("allowzero", 0)? != 0;
                let mut target = Vec::with_capacity(shape.len());
                for (i, &d) in shape.iter().enumerate() {
                    target.push(match d {
                        0 if !allowzero => *dims.get(i).ok_or("a 0 in `shape` past the input's rank")? as i64,
                        0 => return Err("`allowzero`=1 with a 0 in `shape` is not supported".into()),
                        -1 => -1,
                        d if d > 0 => d,
                        d => return Err(format!("`shape` entry {d} is invalid")),
                    });
                }
                self.reshape(&x, target, &out).map(|v| vec![v])
            }
            (false, "Flatten") => {
                let dims = self.dims(&x);
                let axis = norm_axis(a.int("axis", 1)?, dims.len() + 1).ok_or("`axis` is out of range")?;
                let outer: usize = dims[..axis].iter().product();
                let inner: usize = dims[axis..].iter().product();
                self.reshape(&x, vec![outer as i64, inner as i64], &out).map(|v| vec![v])
            }
            (false, "Squeeze" | "Unsqueeze") => {
                let axes = match (ins.get(1), a.get("axes")) {
                    (Some(v), _) if !n.input[1].is_empty() => Some(self.const_ints(v, "axes")?),
                    (_, Some(at)) => Some(at.ints.clone()),
                    _ => None,
                };
                let dims = self.dims(&x);
                let target: Vec<usize> = if n.op_type == "Squeeze" {
                    let drop: Vec<usize> = match axes {
                        Some(ax) => ax
                            .iter()
                            .map(|&v| norm_axis(v, dims.len()).ok_or(format!("axis {v} is out of range")))
                            .collect::<Result<_, _>>()?,
                        None => (0..dims.len()).filter(|&i| dims[i] == 1).collect(),
                    };
                    if let Some(&bad) = drop.iter().find(|&&i| dims[i] != 1) {
                        return Err(format!("cannot squeeze axis {bad} of size {}", dims[bad]));
                    }
                    dims.iter().enumerate().filter(|(i, _)| !drop.contains(i)).map(|(_, &d)| d).collect()
                } else {
                    let ax = axes.ok_or("`axes` is required")?;
                    let r = dims.len() + ax.len();
                    let mut ins_at: Vec<usize> = ax
                        .iter()
                        .map(|&v| norm_axis(v, r).ok_or(format!("axis {v} is out of range")))
                        .collect::<Result<_, _>>()?;
                    ins_at.sort_unstable();
                    let mut it = dims.iter();
                    (0..r).map(|i| if ins_at.contains(&i) { 1 } else { *it.next().unwrap_or(&1) }).collect()
                };
                self.reshape(&x, target.iter().map(|&d| d as i64).collect(), &out).map(|v| vec![v])
            }
            (false, "Transpose") => {
                let r = self.dims(&x).len();
                let perm: Vec<usize> = match a.get("perm") {
                    Some(at) => at
                        .ints
                        .iter()
                        .map(|&p| usize::try_from(p).map_err(|_| format!("`perm` entry {p} is invalid")))
                        .collect::<Result<_, _>>()?,
                    None => (0..r).rev().collect(),
                };
                let (xn, _) = self.tensor(&x, None)?;
                one(self.emit(&out, Op::Transpose { perm }, vec![xn])?)
            }
            (false, "Concat") => {
                let axis = a.int("axis", 0)?;
                if ins.iter().all(|v| matches!(v, Val::C { c, .. } if matches!(c.data, Data::Int(_)))) {
                    let cs: Vec<Rc<Const>> = ins
                        .iter()
                        .map(|v| match v {
                            Val::C { c, .. } => c.clone(),
                            _ => unreachable!(),
                        })
                        .collect();
                    return one(Val::C { c: Rc::new(concat(&cs, axis)?), onnx: out.clone(), init: false });
                }
                let dt = ins.iter().find_map(|v| match v {
                    Val::T { ty, .. } => Some(ty.dtype),
                    _ => None,
                });
                let mut args = Vec::new();
                for v in ins {
                    args.push(self.tensor(v, dt)?.0);
                }
                one(self.emit(&out, Op::Concat { axis }, args)?)
            }
            (false, "Slice") => {
                let starts = self.const_ints(&ins[1], "starts")?;
                let ends = self.const_ints(&ins[2], "ends")?;
                let axes = match ins.get(3) {
                    Some(v) if !n.input[3].is_empty() => self.const_ints(v, "axes")?,
                    _ => (0..starts.len() as i64).collect(),
                };
                let steps = match ins.get(4) {
                    Some(v) if !n.input[4].is_empty() => self.const_ints(v, "steps")?,
                    _ => vec![1; starts.len()],
                };
                if let Some(s) = steps.iter().find(|&&s| s < 1) {
                    return Err(format!("step {s} is not supported (L0 slices with steps >= 1)"));
                }
                if let Val::C { c, .. } = &x {
                    if c.dims.len() == 1 {
                        if let Data::Int(v) = &c.data {
                            let d = v.len() as i64;
                            let cl =
                                |x: i64| (if x < 0 { x.saturating_add(d) } else { x }).clamp(0, d) as usize;
                            let (s, e) = (cl(starts[0]), cl(ends[0]));
                            let sl: Vec<i64> =
                                (s..e.max(s)).step_by(steps[0] as usize).map(|i| v[i]).collect();
                            return one(Val::C {
                                c: Rc::new(Const::ints(vec![sl.len()], sl)),
                                onnx: out.clone(),
                                init: false,
                            });
                        }
                    }
                }
                let (xn, _) = self.tensor(&x, None)?;
                one(self.emit(&out, Op::Slice { axes, starts, ends, steps }, vec![xn])?)
            }
            (false, "Pad") => {
                let (xn, xt) = self.tensor(&x, None)?;
                let r = xt.rank();
                let raw = self.const_ints(&ins[1], "pads")?;
                let axes: Vec<usize> = match ins.get(3) {
                    Some(v) if !n.input[3].is_empty() => self
                        .const_ints(v, "axes")?
                        .iter()
                        .map(|&ax| norm_axis(ax, r).ok_or(format!("axis {ax} is out of range")))
                        .collect::<Result<_, _>>()?,
                    _ => (0..r).collect(),
                };
                if raw.len() != 2 * axes.len() {
                    return Err(format!("`pads` has {} entries for {} axes", raw.len(), axes.len()));
                }
                let mut pads = vec![0usize; 2 * r];
                for (k, &ax) in axes.iter().enumerate() {
                    for (side, &p) in [raw[k], raw[axes.len() + k]].iter().enumerate() {
                        pads[side * r + ax] =
                            usize::try_from(p).map_err(|_| format!("negative pad {p} is not supported"))?;
                    }
                }
                let mode = match a.string("mode", "constant")?.as_str() {
                    "constant" => {
                        let v = match ins.get(2) {
                            Some(Val::C { c, .. }) if !n.input[2].is_empty() => {
                                c.scalar().map(short).ok_or("`constant_value` must be a scalar")?
                            }
                            Some(_) if !n.input[2].is_empty() => {
                                return Err("`constant_value` must be a constant".into())
                            }
                            _ => 0.0,
                        };
                        PadMode::Constant(v)
                    }
                    "reflect" => PadMode::Reflect,
                    "edge" => PadMode::Edge,
                    other => return Err(format!("`mode`=\"{other}\" is not supported")),
                };
                one(self.emit(&out, Op::Pad { pads, mode }, vec![xn])?)
            }
            (true, "relu6") => unary(self, UnaryOp::Relu6),
            (true, "iota") => {
                let shape = a
                    .ints("shape", &[])?
                    .iter()
                    .map(|&d| usize::try_from(d).map_err(|_| format!("`shape` entry {d} is negative")))
                    .collect::<Result<Vec<_>, _>>()?;
                let dt = match a.int("to", i64::from(dtype::INT32))? as i32 {
                    dtype::FLOAT => DType::F32,
                    dtype::INT32 => DType::I32,
                    other => return Err(format!("`to` = {} is not f32 or i32", dtype::name(other))),
                };
                let op = Op::Iota { ty: TensorType::new(dt, shape), axis: a.int("axis", 0)? };
                one(self.emit(&out, op, vec![])?)
            }
            (true, "group_norm") => {
                let groups =
                    usize::try_from(a.int("groups", 1)?).map_err(|_| "`groups` must be >= 1".to_string())?;
                let eps = a.float("eps", 1e-5)?;
                let mut args = Vec::new();
                for v in ins.iter().take(3) {
                    args.push(self.tensor(v, Some(DType::F32))?.0);
                }
                one(self.emit(&out, Op::GroupNorm { groups, eps }, args)?)
            }
            (true, "gelu") => unary(self, UnaryOp::Gelu { tanh: false }),
            (true, "gelu_tanh") => unary(self, UnaryOp::Gelu { tanh: true }),
            (true, "silu") => unary(self, UnaryOp::Silu),
            (true, "rsqrt") => unary(self, UnaryOp::Rsqrt),
            (true, "softplus") => {
                let (beta, threshold) = (a.float("beta", 1.0)?, a.float("threshold", 20.0)?);
                unary(self, UnaryOp::Softplus { beta, threshold })
            }
            (true, "rms_norm") => {
                let eps = a.float("eps", 1e-6)?;
                let (xn, _) = self.tensor(&x, None)?;
                let (w, _) = self.tensor(&ins[1], Some(DType::F32))?;
                one(self.emit(&out, Op::RmsNorm { eps }, vec![xn, w])?)
            }
            (true, "matmul" | "matmul_integer") => {
                let want = (n.op_type == "matmul").then_some(DType::F32);
                let (an, _) = self.tensor(&ins[0], want)?;
                let (bn, _) = self.tensor(&ins[1], want)?;
                let op = Op::MatMul {
                    transpose_a: a.int("transpose_a", 0)? != 0,
                    transpose_b: a.int("transpose_b", 0)? != 0,
                };
                one(self.emit(&out, op, vec![an, bn])?)
            }
            (true, "linear" | "linear_nobias") => {
                let mut args = Vec::new();
                for v in ins {
                    args.push(self.tensor(v, Some(DType::F32))?.0);
                }
                one(self.emit(&out, Op::Linear, args)?)
            }
            (true, "linear_integer" | "linear_integer_nobias") => {
                let mut args = Vec::new();
                for (v, want) in ins.iter().zip([DType::I8, DType::I8, DType::I32]) {
                    args.push(self.tensor(v, Some(want))?.0);
                }
                one(self.emit(&out, Op::Linear, args)?)
            }
            (true, "conv2d_integer") => one(self.conv(n, ins, None, &out)?),
            _ => Err(unsupported_reason(n)),
        }
    }

    /// The L0 name for the result of the node writing `out`: the output of the `Cast` that is
    /// its only consumer, if so (the exporter's form of comparisons and `ArgMax`), else `out`.
    fn named_by_cast(&self, out: &str) -> String {
        match self.consumers.get(out).map(|c| c.as_slice()) {
            Some([ci]) if self.nodes_in[*ci].op_type == "Cast" => self.nodes_in[*ci].output[0].clone(),
            _ => out.to_string(),
        }
    }

    /// A comparison: folded on integer constants, else an L0 comparison (i32 1 or 0).
    /// `QuantizeLinear` / `DequantizeLinear`, per tensor: a constant scalar f32 scale and an
    /// optional constant scalar int8 zero point (QuantizeLinear needs it: without one, or with
    /// a uint8 one, its result is uint8, which L0 does not have).
    fn quantize(&mut self, n: &NodeProto, ins: &[Val], out: &str) -> Result<Val, String> {
        let quantize = n.op_type == "QuantizeLinear";
        let scale = match ins.get(1) {
            Some(Val::C { c, .. }) if matches!(c.data, Data::F32(_)) => c.scalar().ok_or_else(|| {
                format!("`scale` has {} values; only per-tensor (scalar) scales are supported", c.numel())
            })?,
            _ => return Err("`scale` must be a constant f32 scalar".into()),
        };
        let zero_point = match ins.get(2) {
            Some(Val::C { c, .. }) if c.onnx_type == dtype::INT8 => c.scalar().ok_or_else(|| {
                format!(
                    "`zero_point` has {} values; only per-tensor (scalar) zero points are supported",
                    c.numel()
                )
            })? as i64,
            Some(Val::C { c, .. }) => {
                return Err(format!(
                    "`zero_point` is {}; only int8 quantization is supported (L0 has i8, not uint8)",
                    dtype::name(c.onnx_type)
                ))
            }
            Some(Val::Bad) | None if !quantize => 0,
            Some(Val::Bad) | None => {
                return Err(
                    "without `zero_point` the result is uint8; only int8 quantization is supported".into()
                )
            }
            Some(Val::T { .. }) => return Err("`zero_point` must be a constant".into()),
        };
        let scale = short(scale);
        let (xn, _) = self.tensor(&ins[0], Some(if quantize { DType::F32 } else { DType::I8 }))?;
        let op = if quantize {
            Op::QuantizeLinear { scale, zero_point }
        } else {
            Op::DequantizeLinear { scale, zero_point }
        };
        self.emit(out, op, vec![xn])
    }

    fn compare(&mut self, op: CompareOp, l: &Val, r: &Val, out: &str) -> Result<Val, String> {
        if let (Val::C { c: a, .. }, Val::C { c: b, .. }) = (l, r) {
            let (x, y) = (a.as_f64(), b.as_f64());
            let (dims, v) = fold_broadcast(&[a, b], |i| {
                let (p, q) = (x[i[0]], y[i[1]]);
                let holds = match op {
                    CompareOp::Less => p < q,
                    CompareOp::LessEqual => p <= q,
                    CompareOp::Greater => p > q,
                    CompareOp::GreaterEqual => p >= q,
                    CompareOp::Equal => p == q,
                };
                f64::from(u8::from(holds))
            })?;
            let c = Const {
                onnx_type: dtype::BOOL,
                dims,
                data: Data::Int(v.iter().map(|&b| b as i64).collect()),
            };
            return Ok(Val::C { c: Rc::new(c), onnx: out.to_string(), init: false });
        }
        let dt = match (l, r) {
            (Val::T { ty, .. }, _) | (_, Val::T { ty, .. }) => Some(ty.dtype),
            _ => None,
        };
        let (a, at) = self.tensor(l, dt)?;
        let (b, bt) = self.tensor(r, dt)?;
        if at.dtype != bt.dtype {
            return Err(format!("operands of dtype {} and {} (L0 needs one dtype)", at.dtype, bt.dtype));
        }
        self.emit(out, Op::Compare(op), vec![a, b])
    }

    /// `Where`: folded when every input is a constant, else an L0 `where` (the condition an i32
    /// that is nonzero where the ONNX boolean is true).
    fn where_(&mut self, cond: &Val, l: &Val, r: &Val, out: &str) -> Result<Val, String> {
        if let (Val::C { c, .. }, Val::C { c: a, .. }, Val::C { c: b, .. }) = (cond, l, r) {
            let (m, x, y) = (c.as_f64(), a.as_f64(), b.as_f64());
            let (dims, v) = fold_broadcast(&[c, a, b], |i| if m[i[0]] != 0.0 { x[i[1]] } else { y[i[2]] })?;
            let (onnx_type, data) = match (&a.data, &b.data) {
                (Data::Int(_), Data::Int(_)) => {
                    (a.onnx_type, Data::Int(v.iter().map(|&e| e as i64).collect()))
                }
                _ => (dtype::FLOAT, Data::F32(v.iter().map(|&e| e as f32).collect())),
            };
            let c = Const { onnx_type, dims, data };
            return Ok(Val::C { c: Rc::new(c), onnx: out.to_string(), init: false });
        }
        let (c, _) = self.tensor(cond, Some(DType::I32))?;
        let dt = match (l, r) {
            (Val::T { ty, .. }, _) | (_, Val::T { ty, .. }) => Some(ty.dtype),
            _ => None,
        };
        let (a, at) = self.tensor(l, dt)?;
        let (b, bt) = self.tensor(r, dt)?;
        if at.dtype != bt.dtype {
            return Err(format!(
                "`X` and `Y` have dtypes {} and {} (L0 needs one dtype)",
                at.dtype, bt.dtype
            ));
        }
        self.emit(out, Op::Where, vec![c, a, b])
    }

    /// A `Cast` to BOOL: L0 has no booleans, so it is read only where every use of the result
    /// is the condition of a `Where`, which treats any nonzero i32 as true: the i32 value passes
    /// through unchanged (a constant becomes 1 or 0).
    fn cast_to_bool(&mut self, x: &Val, out: &str, graph_outputs: &[ValueInfoProto]) -> Result<Val, String> {
        let uses = self.consumers.get(out).map(|c| c.as_slice()).unwrap_or(&[]);
        let all_conditions = !uses.is_empty()
            && uses.iter().all(|&u| {
                let n = &self.nodes_in[u];
                n.op_type == "Where"
                    && n.input.iter().position(|i| i == out) == Some(0)
                    && n.input.iter().filter(|i| *i == out).count() == 1
            });
        if !all_conditions || graph_outputs.iter().any(|g| g.name == out) {
            return Err(
                "a cast to BOOL is supported only as the condition of `Where` (L0 has no booleans: comparisons give i32 1 or 0)"
                    .into(),
            );
        }
        match x {
            Val::C { c, .. } => {
                let v = c.as_f64().iter().map(|&v| i64::from(v != 0.0)).collect();
                let c = Const { onnx_type: dtype::BOOL, dims: c.dims.clone(), data: Data::Int(v) };
                Ok(Val::C { c: Rc::new(c), onnx: out.to_string(), init: false })
            }
            Val::T { ty, .. } if ty.dtype == DType::I32 => Ok(x.clone()),
            Val::T { ty, .. } => Err(format!(
                "a cast of a {} tensor to BOOL is not supported (compare it with `Equal` or `Greater` instead)",
                ty.dtype
            )),
            Val::Bad => Ok(Val::Bad),
        }
    }

    /// The shape of a value.
    fn dims(&self, v: &Val) -> Vec<usize> {
        match v {
            Val::T { ty, .. } => ty.shape.clone(),
            Val::C { c, .. } => c.dims.clone(),
            Val::Bad => Vec::new(),
        }
    }

    /// The integer values of a constant input.
    fn const_ints(&self, v: &Val, what: &str) -> Result<Vec<i64>, String> {
        match v {
            Val::C { c, .. } => c.as_ints().ok_or_else(|| format!("`{what}` must be integers")),
            _ => Err(format!(
                "`{what}` must be a constant (computed at import time), but it is computed by the graph"
            )),
        }
    }

    /// A scalar `full` node.
    fn scalar(&mut self, v: f64, dt: DType, hint: &str) -> Result<String, String> {
        match self.emit(hint, Op::Full { ty: TensorType::new(dt, Vec::<usize>::new()), value: v }, vec![])? {
            Val::T { name, .. } => Ok(name),
            _ => unreachable!("emit gives a tensor"),
        }
    }

    /// A reshape of a tensor, or of a constant (folded).
    fn reshape(&mut self, x: &Val, target: Vec<i64>, out: &str) -> Result<Val, String> {
        if let Val::C { c, .. } = x {
            let n = c.numel();
            let known: i64 = target.iter().filter(|&&d| d != -1).product();
            let dims: Vec<usize> = target
                .iter()
                .map(|&d| if d == -1 { n / (known.max(1) as usize) } else { d as usize })
                .collect();
            if dims.iter().product::<usize>() != n {
                return Err(format!("cannot reshape {:?} to {target:?}", c.dims));
            }
            return Ok(Val::C {
                c: Rc::new(Const { dims, ..(**c).clone() }),
                onnx: out.to_string(),
                init: false,
            });
        }
        let (xn, _) = self.tensor(x, None)?;
        self.emit(out, Op::Reshape { shape: target }, vec![xn])
    }

    /// An elementwise binary node; integer constants on both sides are folded.
    fn binary(&mut self, op: BinaryOp, l: &Val, r: &Val, out: &str) -> Result<Val, String> {
        if let (Val::C { c: a, .. }, Val::C { c: b, .. }) = (l, r) {
            if let (Data::Int(x), Data::Int(y)) = (&a.data, &b.data) {
                if op != BinaryOp::Pow {
                    return fold_int(op, a, x, b, y).map(|c| Val::C {
                        c: Rc::new(c),
                        onnx: out.to_string(),
                        init: false,
                    });
                }
            }
        }
        let dt = match (l, r) {
            (Val::T { ty, .. }, _) | (_, Val::T { ty, .. }) => Some(ty.dtype),
            _ => None,
        };
        let (a, at) = self.tensor(l, dt)?;
        let (b, bt) = self.tensor(r, dt)?;
        if at.dtype != bt.dtype {
            return Err(format!("operands of dtype {} and {} (L0 needs one dtype)", at.dtype, bt.dtype));
        }
        self.emit(out, Op::Binary(op), vec![a, b])
    }

    /// `MatMul` (constants as `want`) or `MatMulInteger` (`want` None: i8 operands as they are),
    /// with 1-D operands promoted and demoted as numpy does.
    fn matmul(&mut self, l: &Val, r: &Val, want: Option<DType>, out: &str) -> Result<Val, String> {
        let (mut a, at) = self.tensor(l, want)?;
        let (mut b, bt) = self.tensor(r, want)?;
        let (a1, b1) = (at.rank() == 1, bt.rank() == 1);
        if a1 {
            a = tname(self.emit(
                &format!("{out}_a2"),
                Op::Reshape { shape: vec![1, at.shape[0] as i64] },
                vec![a],
            )?);
        }
        if b1 {
            b = tname(self.emit(
                &format!("{out}_b2"),
                Op::Reshape { shape: vec![bt.shape[0] as i64, 1] },
                vec![b],
            )?);
        }
        let op = Op::MatMul { transpose_a: false, transpose_b: false };
        if !a1 && !b1 {
            return self.emit(out, op, vec![a, b]);
        }
        let Val::T { name: m, ty } = self.emit(&format!("{out}_2d"), op, vec![a, b])? else { unreachable!() };
        let mut shape: Vec<i64> = ty.shape.iter().map(|&d| d as i64).collect();
        let r = shape.len();
        if b1 {
            shape.remove(r - 1);
        }
        if a1 {
            shape.remove(r - 2);
        }
        self.emit(out, Op::Reshape { shape }, vec![m])
    }

    /// `Gemm`: `linear` when it is one (PyTorch's `nn.Linear`), else `matmul` with scaling and
    /// the bias added.
    fn gemm(&mut self, n: &NodeProto, ins: &[Val], out: &str) -> Result<Val, String> {
        let a = Attrs(n);
        let (alpha, beta) = (a.float("alpha", 1.0)?, a.float("beta", 1.0)?);
        let (ta, tb) = (a.int("transA", 0)? != 0, a.int("transB", 0)? != 0);
        let has_c = ins.len() > 2 && !n.input[2].is_empty();
        let (x, xt) = self.tensor(&ins[0], Some(DType::F32))?;
        let (w, wt) = self.tensor(&ins[1], Some(DType::F32))?;
        if xt.rank() != 2 || wt.rank() != 2 {
            return Err("Gemm operands must have rank 2".into());
        }
        let c = if has_c { Some(self.tensor(&ins[2], Some(DType::F32))?) } else { None };
        let c_is_bias = c.as_ref().is_none_or(|(_, t)| t.shape == [wt.shape[0]]);
        if !ta && tb && alpha == 1.0 && beta == 1.0 && c_is_bias {
            let mut args = vec![x, w];
            args.extend(c.map(|(c, _)| c));
            return self.emit(out, Op::Linear, args);
        }
        let mm = Op::MatMul { transpose_a: ta, transpose_b: tb };
        let scaled = alpha != 1.0;
        let first = if scaled || c.is_some() { format!("{out}_mm") } else { out.to_string() };
        let mut acc = self.emit(&first, mm, vec![x, w])?;
        if scaled {
            let k = self.scalar(alpha, DType::F32, &format!("{out}_alpha"))?;
            let hint = if c.is_some() { format!("{out}_scaled") } else { out.to_string() };
            let m = tname(acc);
            acc = self.emit(&hint, Op::Binary(BinaryOp::Mul), vec![m, k])?;
        }
        if let Some((c, _)) = c {
            let c = if beta != 1.0 {
                let k = self.scalar(beta, DType::F32, &format!("{out}_beta"))?;
                tname(self.emit(&format!("{out}_c_scaled"), Op::Binary(BinaryOp::Mul), vec![c, k])?)
            } else {
                c
            };
            let m = tname(acc);
            acc = self.emit(out, Op::Binary(BinaryOp::Add), vec![m, c])?;
        }
        Ok(acc)
    }

    /// Padding `[top, left, bottom, right]` from `pads` or `auto_pad`.
    fn spatial_pads(
        a: &Attrs,
        input: &[usize],
        kernel: &[usize],
        stride: &[usize],
        dilation: &[usize],
    ) -> Result<[usize; 4], String> {
        match a.string("auto_pad", "NOTSET")?.as_str() {
            "NOTSET" => {
                let p = a.ints("pads", &[0, 0, 0, 0])?;
                if p.len() != 4 {
                    return Err(format!("`pads` has {} entries, expected 4", p.len()));
                }
                let mut out = [0usize; 4];
                for (o, &v) in out.iter_mut().zip(&p) {
                    *o = usize::try_from(v).map_err(|_| format!("negative pad {v} is not supported"))?;
                }
                Ok(out)
            }
            "VALID" => Ok([0; 4]),
            mode @ ("SAME_UPPER" | "SAME_LOWER") => {
                let mut out = [0usize; 4];
                for i in 0..2 {
                    let o = input[i].div_ceil(stride[i]);
                    let eff = (kernel[i] - 1) * dilation[i] + 1;
                    let total = ((o - 1) * stride[i] + eff).saturating_sub(input[i]);
                    let small = total / 2;
                    let (begin, end) =
                        if mode == "SAME_UPPER" { (small, total - small) } else { (total - small, small) };
                    out[i] = begin;
                    out[i + 2] = end;
                }
                Ok(out)
            }
            other => Err(format!("`auto_pad`=\"{other}\" is not supported")),
        }
    }

    /// `Conv` (`want` f32) or an integer convolution (`want` None: i8 input and weight as they
    /// are, an i32 bias); `ins` are the input, the weight and the bias if there is one.
    fn conv(&mut self, n: &NodeProto, ins: &[Val], want: Option<DType>, out: &str) -> Result<Val, String> {
        let a = Attrs(n);
        let (x, xt) = self.tensor(&ins[0], want)?;
        if xt.rank() != 4 {
            return Err(format!(
                "a {}-D convolution is not supported (L0 has conv2d on NCHW)",
                xt.rank().saturating_sub(2)
            ));
        }
        let (w, wt) = self.tensor(&ins[1], want)?;
        if wt.rank() != 4 {
            return Err(format!("the weight has rank {}, expected 4", wt.rank()));
        }
        if let Some(k) = a.get("kernel_shape") {
            if k.ints.iter().map(|&v| v as usize).ne(wt.shape[2..].iter().copied()) {
                return Err(format!(
                    "`kernel_shape` {:?} does not match the weight's {:?}",
                    k.ints,
                    &wt.shape[2..]
                ));
            }
        }
        let stride = pair(&a.ints("strides", &[1, 1])?, "strides")?;
        let dilation = pair(&a.ints("dilations", &[1, 1])?, "dilations")?;
        let pad = Self::spatial_pads(&a, &xt.shape[2..], &wt.shape[2..], &stride, &dilation)?;
        let groups = usize::try_from(a.int("group", 1)?).map_err(|_| "`group` must be >= 1".to_string())?;
        let mut args = vec![x, w];
        if ins.len() > 2 && !n.input[2].is_empty() {
            args.push(self.tensor(&ins[2], Some(want.unwrap_or(DType::I32)))?.0);
        }
        self.emit(out, Op::Conv2d(Conv2dAttrs { stride, pad, dilation, groups }), args)
    }

    /// Refuses zero points other than absent or constant zeros (L0's integer products have none).
    fn no_zero_points(&self, n: &NodeProto, ins: &[Val], names: &[&str; 2]) -> Result<(), String> {
        for (i, name) in names.iter().enumerate().map(|(i, s)| (i + 2, s)) {
            match ins.get(i) {
                None => {}
                Some(_) if n.input[i].is_empty() => {}
                Some(Val::C { c, .. }) => match c.as_ints() {
                    Some(v) if v.iter().all(|&z| z == 0) => {}
                    _ => {
                        return Err(format!(
                            "`{name}` is not zero; only zero points of 0 are supported (a nonzero \
                             one is the i8 product corrected by row and column sums: docs/ir.md)"
                        ))
                    }
                },
                Some(_) => return Err(format!("`{name}` must be a constant zero")),
            }
        }
        Ok(())
    }

    /// Checks that the two operands of an integer product are int8 (L0 has no uint8).
    fn int8_operands(&self, ins: &[Val], names: &[&str; 2]) -> Result<(), String> {
        for (v, name) in ins.iter().zip(names) {
            let onnx = match v {
                Val::T { ty, .. } if ty.dtype == DType::I8 => continue,
                Val::C { c, .. } if c.onnx_type == dtype::INT8 => continue,
                Val::T { ty, .. } => ty.dtype.name(),
                Val::C { c, .. } => dtype::name(c.onnx_type),
                Val::Bad => "unknown",
            };
            return Err(format!(
                "`{name}` is {onnx}; only int8 operands are supported (L0 has i8, not uint8)"
            ));
        }
        Ok(())
    }

    fn pool(&mut self, n: &NodeProto, x: &Val, out: &str) -> Result<Val, String> {
        let a = Attrs(n);
        let max = n.op_type == "MaxPool";
        let (xn, xt) = self.tensor(x, Some(DType::F32))?;
        if xt.rank() != 4 {
            return Err(format!(
                "{}-D pooling is not supported (L0 pools NCHW in 2-D)",
                xt.rank().saturating_sub(2)
            ));
        }
        let kernel = pair(&a.ints("kernel_shape", &[])?, "kernel_shape")?;
        let stride = pair(&a.ints("strides", &[1, 1])?, "strides")?;
        if a.ints("dilations", &[1, 1])? != [1, 1] {
            return Err("`dilations` other than [1,1] are not supported".into());
        }
        if a.int("storage_order", 0)? != 0 {
            return Err("`storage_order`=1 is not supported".into());
        }
        let mut pad = Self::spatial_pads(&a, &xt.shape[2..], &kernel, &stride, &[1, 1])?;
        if a.int("ceil_mode", 0)? != 0 {
            for i in 0..2 {
                let padded = xt.shape[2 + i] + pad[i] + pad[i + 2];
                let span = padded.checked_sub(kernel[i]).ok_or("the kernel is larger than the input")?;
                let floor = span / stride[i] + 1;
                let mut ceil = span.div_ceil(stride[i]) + 1;
                // The last window must start inside the input or its leading padding.
                if (ceil - 1) * stride[i] >= xt.shape[2 + i] + pad[i] {
                    ceil -= 1;
                }
                if ceil != floor {
                    if !max {
                        return Err(format!(
                            "`ceil_mode`=1 changes the output size here ({ceil} instead of {floor}); not supported for AveragePool"
                        ));
                    }
                    // Extra end padding reproduces the last, partial window (padding never wins).
                    pad[i + 2] += (ceil - 1) * stride[i] + kernel[i] - padded;
                }
            }
        }
        let pool = Pool2dAttrs { kernel, stride, pad };
        let op = if max {
            Op::MaxPool2d(pool)
        } else {
            Op::AvgPool2d { pool, count_include_pad: a.int("count_include_pad", 0)? != 0 }
        };
        self.emit(out, op, vec![xn])
    }

    fn reduce(&mut self, n: &NodeProto, ins: &[Val], out: &str) -> Res {
        let a = Attrs(n);
        let kind = match n.op_type.as_str() {
            "ReduceMean" => ReduceKind::Mean,
            "ReduceSum" => ReduceKind::Sum,
            "ReduceMax" => ReduceKind::Max,
            _ => ReduceKind::Min,
        };
        let axes = match (ins.get(1), a.get("axes")) {
            (Some(v), _) if !n.input[1].is_empty() => self.const_ints(v, "axes")?,
            (_, Some(at)) => at.ints.clone(),
            _ => Vec::new(),
        };
        let keepdims = a.int("keepdims", 1)? != 0;
        let (xn, xt) = self.tensor(&ins[0], None)?;
        let axes = if axes.is_empty() {
            if a.int("noop_with_empty_axes", 0)? != 0 || xt.rank() == 0 {
                return Ok(vec![ins[0].clone()]);
            }
            (0..xt.rank() as i64).collect()
        } else {
            axes
        };
        Ok(vec![self.emit(out, Op::Reduce { kind, axes, keepdims }, vec![xn])?])
    }

    /// `GroupNormalization` (opset 18+). Opset 21 gives per-channel scale and bias, as L0 does;
    /// opsets 18 to 20 give one per group, which must then be constants (repeated per channel).
    fn group_norm(&mut self, n: &NodeProto, ins: &[Val], out: &str) -> Result<Val, String> {
        let a = Attrs(n);
        let groups = a.int("num_groups", 0)?;
        let groups = usize::try_from(groups).ok().filter(|&g| g >= 1).ok_or("`num_groups` must be >= 1")?;
        let eps = a.float("epsilon", 1e-5)?;
        let (xn, xt) = self.tensor(&ins[0], Some(DType::F32))?;
        let c = *xt.shape.get(1).ok_or("the input needs a channel axis (rank >= 2)")?;
        let mut params = Vec::new();
        for (v, what) in [(&ins[1], "scale"), (&ins[2], "bias")] {
            let v = match v {
                Val::C { c: k, onnx, init } if self.opset < 21 && k.dims == [groups] && c % groups == 0 => {
                    let per: Vec<f32> = (0..c).map(|ch| k.as_f64()[ch / (c / groups)] as f32).collect();
                    let k = Const { onnx_type: dtype::FLOAT, dims: vec![c], data: Data::F32(per) };
                    Val::C { c: Rc::new(k), onnx: format!("{onnx}_per_channel"), init: *init }
                }
                Val::T { .. } if self.opset < 21 => {
                    return Err(format!(
                        "opset {} gives `{what}` per group; a computed one is not supported (a constant is repeated per channel)",
                        self.opset
                    ))
                }
                other => other.clone(),
            };
            params.push(self.tensor(&v, Some(DType::F32))?.0);
        }
        let mut args = vec![xn];
        args.extend(params);
        self.emit(out, Op::GroupNorm { groups, eps }, args)
    }

    /// `ConvTranspose` on NCHW (explicit pads or `VALID`; `output_shape` is not read).
    fn conv_transpose(&mut self, n: &NodeProto, ins: &[Val], out: &str) -> Result<Val, String> {
        let a = Attrs(n);
        let (x, xt) = self.tensor(&ins[0], Some(DType::F32))?;
        if xt.rank() != 4 {
            return Err(format!(
                "a {}-D transposed convolution is not supported (L0 has conv_transpose2d on NCHW)",
                xt.rank().saturating_sub(2)
            ));
        }
        let (w, wt) = self.tensor(&ins[1], Some(DType::F32))?;
        if wt.rank() != 4 {
            return Err(format!("the weight has rank {}, expected 4", wt.rank()));
        }
        if let Some(k) = a.get("kernel_shape") {
            if k.ints.iter().map(|&v| v as usize).ne(wt.shape[2..].iter().copied()) {
                return Err(format!(
                    "`kernel_shape` {:?} does not match the weight's {:?}",
                    k.ints,
                    &wt.shape[2..]
                ));
            }
        }
        if a.get("output_shape").is_some() {
            return Err("`output_shape` is not supported (give `pads` and `output_padding`)".into());
        }
        let stride = pair(&a.ints("strides", &[1, 1])?, "strides")?;
        let dilation = pair(&a.ints("dilations", &[1, 1])?, "dilations")?;
        let pad = match a.string("auto_pad", "NOTSET")?.as_str() {
            "NOTSET" | "VALID" => Self::spatial_pads(&a, &xt.shape[2..], &wt.shape[2..], &stride, &dilation)?,
            other => return Err(format!("`auto_pad`=\"{other}\" is not supported for ConvTranspose")),
        };
        let op = a.ints("output_padding", &[0, 0])?;
        let output_padding = match op.as_slice() {
            [h, w] if *h >= 0 && *w >= 0 => [*h as usize, *w as usize],
            _ => return Err(format!("`output_padding` must be two integers >= 0, found {op:?}")),
        };
        for i in 0..2 {
            if output_padding[i] >= stride[i].max(dilation[i]) {
                return Err(format!(
                    "`output_padding` {output_padding:?} must be smaller than the stride or the dilation of its axis"
                ));
            }
        }
        let groups =
            usize::try_from(a.int("group", 1)?).ok().filter(|&g| g >= 1).ok_or("`group` must be >= 1")?;
        let mut args = vec![x, w];
        if ins.len() > 2 && !n.input[2].is_empty() {
            args.push(self.tensor(&ins[2], Some(DType::F32))?.0);
        }
        let attrs = ConvTranspose2dAttrs { stride, pad, output_padding, dilation, groups };
        self.emit(out, Op::ConvTranspose2d(attrs), args)
    }

    /// `Resize` of NCHW over H and W, in the forms that are PyTorch's `interpolate`: `nearest`
    /// with `asymmetric` coordinates and `floor` rounding, and `linear` with `half_pixel`,
    /// `pytorch_half_pixel` (output sizes above 1) or `align_corners` coordinates.
    fn resize(&mut self, n: &NodeProto, ins: &[Val], out: &str) -> Result<Val, String> {
        let a = Attrs(n);
        let (xn, xt) = self.tensor(&ins[0], Some(DType::F32))?;
        if xt.rank() != 4 {
            return Err(format!("resizing a rank-{} tensor is not supported (L0 resizes NCHW)", xt.rank()));
        }
        let axes = a.ints("axes", &[0, 1, 2, 3])?;
        let axes: Vec<usize> = axes.iter().filter_map(|&v| norm_axis(v, 4)).collect();
        if axes != [0, 1, 2, 3] && axes != [2, 3] {
            return Err("`axes` other than all four or [2,3] are not supported".into());
        }
        if a.int("antialias", 0)? != 0 {
            return Err("`antialias`=1 is not supported".into());
        }
        if a.int("exclude_outside", 0)? != 0 {
            return Err("`exclude_outside`=1 is not supported".into());
        }
        if a.string("keep_aspect_ratio_policy", "stretch")? != "stretch" {
            return Err("`keep_aspect_ratio_policy` other than \"stretch\" is not supported".into());
        }
        let given = |i: usize| ins.get(i).filter(|_| n.input.get(i).is_some_and(|s| !s.is_empty()));
        let full = |v: Vec<f64>| -> Vec<f64> {
            if axes.len() == 2 {
                vec![1.0, 1.0, v[0], v[1]]
            } else {
                v
            }
        };
        let size: Vec<usize> = match (given(2), given(3)) {
            (_, Some(v)) => {
                let sizes = self.const_ints(v, "sizes")?;
                if sizes.len() != axes.len() {
                    return Err(format!("`sizes` has {} entries for {} axes", sizes.len(), axes.len()));
                }
                let sizes = if axes.len() == 2 {
                    vec![xt.shape[0] as i64, xt.shape[1] as i64, sizes[0], sizes[1]]
                } else {
                    sizes
                };
                sizes
                    .iter()
                    .map(|&d| usize::try_from(d).map_err(|_| format!("size {d} is negative")))
                    .collect::<Result<_, _>>()?
            }
            (Some(Val::C { c, .. }), None) => {
                let scales = full(c.as_f64());
                if scales.len() != 4 {
                    return Err(format!("`scales` has {} entries, expected 4", scales.len()));
                }
                let mut size = Vec::new();
                for (d, &sc) in xt.shape.iter().zip(&scales) {
                    let o = *d as f64 * sc;
                    if o.fract() != 0.0 || o < 0.0 {
                        return Err(format!(
                            "the scale {sc} gives {d} * {sc} = {o}, not a whole size; L0 resizes to whole sizes (give `sizes`)"
                        ));
                    }
                    size.push(o as usize);
                }
                size
            }
            (Some(_), None) => return Err("`scales` must be a constant".into()),
            (None, None) => return Err("neither `scales` nor `sizes` is given".into()),
        };
        if size[..2] != xt.shape[..2] {
            return Err(format!(
                "resizing the batch or channel axes ({:?} to {:?}) is not supported",
                &xt.shape[..2],
                &size[..2]
            ));
        }
        let ctm = a.string("coordinate_transformation_mode", "half_pixel")?;
        let (mode, align_corners) = match (a.string("mode", "nearest")?.as_str(), ctm.as_str()) {
            ("nearest", "asymmetric") => {
                let rounding = a.string("nearest_mode", "round_prefer_floor")?;
                if rounding != "floor" {
                    return Err(format!(
                        "`nearest_mode`=\"{rounding}\" is not supported (L0's nearest is PyTorch's: `asymmetric` coordinates, `floor`)"
                    ));
                }
                (ResizeMode::Nearest, false)
            }
            ("nearest", other) => {
                return Err(format!(
                    "`mode`=\"nearest\" with `coordinate_transformation_mode`=\"{other}\" is not supported (L0's nearest is PyTorch's: `asymmetric` coordinates, `floor`)"
                ))
            }
            ("linear", "half_pixel") => (ResizeMode::Bilinear, false),
            ("linear", "pytorch_half_pixel") if size[2] > 1 && size[3] > 1 => (ResizeMode::Bilinear, false),
            ("linear", "align_corners") => (ResizeMode::Bilinear, true),
            ("linear", other) => {
                return Err(format!(
                    "`mode`=\"linear\" with `coordinate_transformation_mode`=\"{other}\" is not supported here (L0 reads `half_pixel`, `pytorch_half_pixel` to sizes above 1, and `align_corners`)"
                ))
            }
            (other, _) => return Err(format!("`mode`=\"{other}\" is not supported (L0 has nearest and bilinear)")),
        };
        let op = Op::Resize { size: [size[2], size[3]], mode, align_corners };
        self.emit(out, op, vec![xn])
    }
}

/// A node's attributes, with typed getters that refuse the wrong kind.
struct Attrs<'a>(&'a NodeProto);

impl Attrs<'_> {
    fn get(&self, name: &str) -> Option<&AttributeProto> {
        self.0.attribute.iter().find(|a| a.name == name)
    }

    fn kind(&self, a: &AttributeProto, want: i32, what: &str) -> Result<(), String> {
        if a.r#type == want || a.r#type == 0 {
            Ok(())
        } else {
            Err(format!("attribute `{}` is not {what}", a.name))
        }
    }

    fn int(&self, name: &str, dflt: i64) -> Result<i64, String> {
        match self.get(name) {
            Some(a) => self.kind(a, attr_type::INT, "an integer").map(|_| a.i.unwrap_or(0)),
            None => Ok(dflt),
        }
    }

    /// A float attribute, read as the shortest decimal that gives the same f32.
    fn float(&self, name: &str, dflt: f64) -> Result<f64, String> {
        match self.get(name) {
            Some(a) => {
                self.kind(a, attr_type::FLOAT, "a float").map(|_| short(f64::from(a.f.unwrap_or(0.0))))
            }
            None => Ok(dflt),
        }
    }

    fn ints(&self, name: &str, dflt: &[i64]) -> Result<Vec<i64>, String> {
        match self.get(name) {
            Some(a) => self.kind(a, attr_type::INTS, "a list of integers").map(|_| a.ints.clone()),
            None => Ok(dflt.to_vec()),
        }
    }

    fn string(&self, name: &str, dflt: &str) -> Result<String, String> {
        match self.get(name) {
            Some(a) => {
                self.kind(a, attr_type::STRING, "a string")?;
                String::from_utf8(a.s.clone().unwrap_or_default())
                    .map_err(|_| format!("attribute `{name}` is not UTF-8"))
            }
            None => Ok(dflt.to_string()),
        }
    }
}

/// The name of a value `emit` returned.
fn tname(v: Val) -> String {
    match v {
        Val::T { name, .. } => name,
        _ => unreachable!("emit gives a tensor"),
    }
}

/// The operators the importer reads, each with the attributes it interprets (any other
/// attribute is reported, never ignored).
const OPS: &[(&str, &[&str])] = &[
    ("Relu", &[]),
    ("Sigmoid", &[]),
    ("Tanh", &[]),
    ("Exp", &[]),
    ("Log", &[]),
    ("Sqrt", &[]),
    ("Abs", &[]),
    ("Neg", &[]),
    ("Sin", &[]),
    ("Cos", &[]),
    ("HardSwish", &[]),
    ("Softplus", &[]),
    ("LeakyRelu", &["alpha"]),
    ("Elu", &["alpha"]),
    ("Gelu", &["approximate"]),
    ("HardSigmoid", &["alpha", "beta"]),
    ("Reciprocal", &[]),
    ("Clip", &[]),
    ("Add", &[]),
    ("Sub", &[]),
    ("Mul", &[]),
    ("Div", &[]),
    ("Pow", &[]),
    ("Max", &[]),
    ("Min", &[]),
    ("Sum", &[]),
    ("Less", &[]),
    ("LessOrEqual", &[]),
    ("Greater", &[]),
    ("GreaterOrEqual", &[]),
    ("Equal", &[]),
    ("Where", &[]),
    ("MatMul", &[]),
    ("MatMulInteger", &[]),
    ("Gemm", &["alpha", "beta", "transA", "transB"]),
    ("Conv", &["kernel_shape", "strides", "pads", "dilations", "group", "auto_pad"]),
    ("ConvInteger", &["kernel_shape", "strides", "pads", "dilations", "group", "auto_pad"]),
    (
        "ConvTranspose",
        &[
            "kernel_shape",
            "strides",
            "pads",
            "dilations",
            "group",
            "auto_pad",
            "output_padding",
            "output_shape",
        ],
    ),
    ("MaxPool", &["kernel_shape", "strides", "pads", "auto_pad", "ceil_mode", "dilations", "storage_order"]),
    (
        "AveragePool",
        &["kernel_shape", "strides", "pads", "auto_pad", "ceil_mode", "count_include_pad", "dilations"],
    ),
    ("GlobalAveragePool", &[]),
    ("GlobalMaxPool", &[]),
    ("BatchNormalization", &["epsilon", "momentum", "training_mode"]),
    ("LayerNormalization", &["axis", "epsilon", "stash_type"]),
    ("GroupNormalization", &["epsilon", "num_groups", "stash_type"]),
    ("Softmax", &["axis"]),
    ("LogSoftmax", &["axis"]),
    ("ReduceMean", &["axes", "keepdims", "noop_with_empty_axes"]),
    ("ReduceSum", &["axes", "keepdims", "noop_with_empty_axes"]),
    ("ReduceMax", &["axes", "keepdims", "noop_with_empty_axes"]),
    ("ReduceMin", &["axes", "keepdims", "noop_with_empty_axes"]),
    ("ArgMax", &["axis", "keepdims", "select_last_index"]),
    ("Cast", &["to", "saturate"]),
    ("QuantizeLinear", &["axis", "saturate"]),
    ("DequantizeLinear", &["axis"]),
    ("Identity", &[]),
    ("Dropout", &["seed"]),
    ("Constant", &["value", "value_float", "value_floats", "value_int", "value_ints"]),
    ("ConstantOfShape", &["value"]),
    ("Shape", &["start", "end"]),
    ("Size", &[]),
    ("Gather", &["axis"]),
    ("Reshape", &["allowzero"]),
    ("Flatten", &["axis"]),
    ("Squeeze", &["axes"]),
    ("Unsqueeze", &["axes"]),
    ("Transpose", &["perm"]),
    ("Concat", &["axis"]),
    ("Slice", &[]),
    ("Pad", &["mode"]),
    ("Expand", &[]),
    ("CumSum", &["exclusive", "reverse"]),
    ("Range", &[]),
    (
        "Resize",
        &[
            "mode",
            "coordinate_transformation_mode",
            "nearest_mode",
            "cubic_coeff_a",
            "exclude_outside",
            "extrapolation_value",
            "antialias",
            "axes",
            "keep_aspect_ratio_policy",
        ],
    ),
];

/// The `ekb`-domain operators (the exporter's functions) and their attributes.
const EKB_OPS: &[(&str, &[&str])] = &[
    ("relu6", &[]),
    ("gelu", &[]),
    ("gelu_tanh", &[]),
    ("silu", &[]),
    ("rsqrt", &[]),
    ("softplus", &["beta", "threshold"]),
    ("rms_norm", &["eps", "axes"]),
    ("matmul", &["transpose_a", "transpose_b", "perm_a", "perm_b"]),
    ("linear", &[]),
    ("linear_nobias", &[]),
    ("matmul_integer", &["transpose_a", "transpose_b", "perm_a", "perm_b"]),
    ("linear_integer", &[]),
    ("linear_integer_nobias", &[]),
    ("conv2d_integer", &["kernel_shape", "strides", "pads", "dilations", "group"]),
    ("iota", &["shape", "axis", "to"]),
    ("group_norm", &["groups", "eps", "grouped_shape", "param_shape"]),
];

/// The attributes the importer interprets for this node's operator; `None`: not supported.
fn known_attrs(n: &NodeProto) -> Option<&'static [&'static str]> {
    let table = match n.domain.as_str() {
        "" | "ai.onnx" => OPS,
        EKB_DOMAIN => EKB_OPS,
        _ => return None,
    };
    table.iter().find(|(op, _)| *op == n.op_type).map(|(_, attrs)| *attrs)
}

/// "node `NAME` (OpType)", or "node `#3` (...)" for an unnamed node.
fn node_label(i: usize, n: &NodeProto) -> String {
    format!(
        "node `{}` ({}{})",
        if n.name.is_empty() { format!("#{i}") } else { n.name.clone() },
        if n.domain.is_empty() || n.domain == "ai.onnx" { String::new() } else { format!("{}.", n.domain) },
        n.op_type
    )
}

/// The operator is supported and every attribute is one the importer interprets.
fn check_attrs(n: &NodeProto) -> Result<(), String> {
    let known = known_attrs(n).ok_or_else(|| unsupported_reason(n))?;
    match n.attribute.iter().find(|a| !known.contains(&a.name.as_str())) {
        Some(a) => Err(format!("attribute `{}` is not supported", a.name)),
        None => Ok(()),
    }
}

fn unsupported_reason(n: &NodeProto) -> String {
    match (n.domain.as_str(), n.op_type.as_str()) {
        ("" | "ai.onnx", "Erf") => {
            "operator not supported by L0 (Erf is read only as part of GELU: x * 0.5 * (1 + erf(x / sqrt(2))))".into()
        }
        ("" | "ai.onnx", _) => "operator not supported by L0".into(),
        (d, _) => format!("operator of domain `{d}` not supported"),
    }
}

/// The shortest decimal reading of an f32 value, as f64 (`1e-5f32` reads as `1e-5`).
fn short(x: f64) -> f64 {
    let f = x as f32;
    if f64::from(f) != x {
        return x;
    }
    format!("{f}").parse().unwrap_or(x)
}

fn is_ident_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

fn is_ident(s: &str) -> bool {
    s.bytes().next().is_some_and(|b| b.is_ascii_alphabetic() || b == b'_') && s.bytes().all(is_ident_byte)
}

/// An L0 identifier for an ONNX name: other characters become `_`; a leading digit gets `_`; a
/// keyword of the loop language (which graph names become) gets a trailing `_`.
pub fn ident(s: &str) -> String {
    let mut out: String = s.bytes().map(|b| if is_ident_byte(b) { b as char } else { '_' }).collect();
    if !out.bytes().next().is_some_and(|b| b.is_ascii_alphabetic() || b == b'_') {
        out.insert(0, '_');
    }
    if ekb_ir::l1::parse::KEYWORDS.contains(&out.as_str()) {
        out.push('_');
    }
    out
}

/// `1,3,224,224` with `N` for unknown dims, for a hint.
fn example_shape(dims: &[crate::proto::Dimension]) -> String {
    dims.iter()
        .map(|d| d.dim_value.filter(|&v| v > 0).map_or("N".to_string(), |v| v.to_string()))
        .collect::<Vec<_>>()
        .join(",")
}

fn norm_axis(axis: i64, rank: usize) -> Option<usize> {
    normalise_axis(axis, rank)
}

fn pair(v: &[i64], what: &str) -> Result<[usize; 2], String> {
    match v {
        [a, b] if *a >= 1 && *b >= 1 => Ok([*a as usize, *b as usize]),
        _ => Err(format!("`{what}` must be two positive integers, found {v:?}")),
    }
}

/// Integer arithmetic on constants, with numpy broadcasting.
fn fold_int(op: BinaryOp, a: &Const, x: &[i64], b: &Const, y: &[i64]) -> Result<Const, String> {
    let dims = broadcast(&a.dims, &b.dims)?;
    let at = |c: &Const, v: &[i64], idx: &[usize]| -> i64 {
        let off = dims.len() - c.dims.len();
        let mut flat = 0;
        for (k, &d) in c.dims.iter().enumerate() {
            flat = flat * d + if d == 1 { 0 } else { idx[off + k] };
        }
        v[flat]
    };
    let n: usize = dims.iter().product();
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let idx = ekb_ir::tensor::unravel(i, &dims);
        let (p, q) = (at(a, x, &idx), at(b, y, &idx));
        out.push(match op {
            BinaryOp::Add => p.wrapping_add(q),
            BinaryOp::Sub => p.wrapping_sub(q),
            BinaryOp::Mul => p.wrapping_mul(q),
            BinaryOp::Div => p.checked_div(q).ok_or("division by zero in constant arithmetic")?,
            BinaryOp::Max => p.max(q),
            BinaryOp::Min => p.min(q),
            BinaryOp::Pow => unreachable!("pow is not folded"),
        });
    }
    Ok(Const::ints(dims, out))
}

/// An elementwise function of constants under numpy broadcasting: the result's dims and values;
/// `f` gets, for one result element, the flat index into each constant.
fn fold_broadcast(cs: &[&Const], f: impl Fn(&[usize]) -> f64) -> Result<(Vec<usize>, Vec<f64>), String> {
    let dims = cs.iter().try_fold(Vec::new(), |acc, c| broadcast(&acc, &c.dims))?;
    let n: usize = dims.iter().product();
    let mut out = Vec::with_capacity(n);
    let mut at = vec![0; cs.len()];
    for i in 0..n {
        let idx = ekb_ir::tensor::unravel(i, &dims);
        for (k, c) in cs.iter().enumerate() {
            let off = dims.len() - c.dims.len();
            at[k] = c
                .dims
                .iter()
                .enumerate()
                .fold(0, |flat, (j, &d)| flat * d + if d == 1 { 0 } else { idx[off + j] });
        }
        out.push(f(&at));
    }
    Ok((dims, out))
}

/// `Gather` on constants.
fn gather(data: &Const, idx: &Const, axis: i64) -> Result<Const, String> {
    let r = data.dims.len();
    let ax = norm_axis(axis, r).ok_or(format!("`axis` {axis} is out of range"))?;
    let d = data.dims[ax] as i64;
    let ids = idx.as_ints().ok_or("indices must be integers")?;
    let outer: usize = data.dims[..ax].iter().product();
    let inner: usize = data.dims[ax + 1..].iter().product();
    let vals = data.as_f64();
    let mut out = Vec::new();
    for o in 0..outer {
        for &i in &ids {
            let i = if i < 0 { i + d } else { i };
            if !(0..d).contains(&i) {
                return Err(format!("index {i} is out of range for a dimension of {d}"));
            }
            let base = (o * data.dims[ax] + i as usize) * inner;
            out.extend_from_slice(&vals[base..base + inner]);
        }
    }
    let dims = [&data.dims[..ax], &idx.dims[..], &data.dims[ax + 1..]].concat();
    let data_out = match data.data {
        Data::F32(_) => Data::F32(out.iter().map(|&v| v as f32).collect()),
        Data::Int(_) => Data::Int(out.iter().map(|&v| v as i64).collect()),
    };
    Ok(Const { onnx_type: data.onnx_type, dims, data: data_out })
}

/// `Concat` of integer constants.
fn concat(cs: &[Rc<Const>], axis: i64) -> Result<Const, String> {
    let first = &cs[0];
    let r = first.dims.len();
    let ax = norm_axis(axis, r).ok_or(format!("`axis` {axis} is out of range"))?;
    let outer: usize = first.dims[..ax].iter().product();
    let mut dims = first.dims.clone();
    dims[ax] = cs.iter().map(|c| c.dims.get(ax).copied().unwrap_or(0)).sum();
    let mut out = Vec::new();
    for o in 0..outer {
        for c in cs {
            if c.dims.len() != r {
                return Err("constants of different ranks".into());
            }
            let chunk: usize = c.dims[ax..].iter().product();
            let v = c.as_ints().ok_or("non-integer constant")?;
            out.extend_from_slice(&v[o * chunk..(o + 1) * chunk]);
        }
    }
    Ok(Const::ints(dims, out))
}
