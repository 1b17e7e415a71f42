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
//!   external data) is a precise error, never a panic; no constant, decoded or folded, exceeds
//!   L0's tensor size limit (checked before it is allocated, `consts::numel_within_limit`), and
//!   folded integers are what ONNX computes, in their ONNX type (`consts::wrap`);
//! - every declared graph output is imported, or named in the error: operators are read with
//!   their first output only, and another output that is used is reported;
//! - the result passes `ekb check` as it will be written: every L0 node is checked as the parser
//!   checks it when it is made (so a refusal names the ONNX node), and the printed graph is
//!   parsed and checked before it is returned; the exporter's models come back as the graph they
//!   were exported from (see `export.rs`).
//!
//! This module is the driver: the graph walk (initializers, inputs and their value info, the
//! nodes in order, the outputs), the shared context (`Importer`: values, names, constants
//! turned into parameters or `full` nodes), the tables of supported operators and attributes, and
//! the nodes resolved at import time (constants, shape queries, pass-throughs). The operators of
//! each L0 family are read in the family's file: `elementwise.rs`, `reduce.rs`, `norm.rs`,
//! `matmul.rs`, `spatial.rs` and `movement.rs`, each with its table of ONNX operators.

mod elementwise;
mod matmul;
mod movement;
mod norm;
mod reduce;
mod spatial;

use crate::consts::{decode, numel_within_limit, Const, Data};
use crate::export::{EKB_DOMAIN, INIT_KEY};
use crate::proto::{attr_type, dtype, AttributeProto, ModelProto, NodeProto, ValueInfoProto};
use ekb_ir::diag::{Diagnostic, Span};
use ekb_ir::l0::ast::{Graph, Node, Op, OutputDecl, ParamData, TensorDecl, UnaryOp, ValueRef};
use ekb_ir::l0::ops::{infer, normalise_axis, Attr, MAX_NUMEL};
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
    /// The name of the sidecar data file, as the `.ekir` file will name it (relative to it);
    /// empty: `NAME.bin` after the graph's name (a data parameter names a file).
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
    if graph.output.is_empty() {
        return Err(Diagnostic::error("the model's graph declares no outputs; nothing would be computed")
            .with_expected("at least one graph output (an L0 graph returns one or more values)"));
    }
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
    let opts = &ImportOptions {
        data_file: if opts.data_file.is_empty() { format!("{name}.bin") } else { opts.data_file.clone() },
        ..opts.clone()
    };
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
        groups: Vec::new(),
        span: Span::NONE,
    };
    check_as_written(&mut g, &im.origin)?;
    Ok(Imported { graph: g, data: im.data })
}

/// Checks the graph as `ekb check` will read it: its text is parsed and checked, then the graph
/// itself (which fills in its nodes' types). A problem is reported with the ONNX node its L0
/// node was made for (`origin`), and the line of the text.
fn check_as_written(g: &mut Graph, origin: &HashMap<String, String>) -> Result<(), Diagnostic> {
    let text = ekb_ir::l0::print::print(g);
    let src = ekb_ir::diag::SourceFile::new(format!("{}.ekir", g.name), text.clone());
    let parsed = ekb_ir::l0::parse::parse(&src).map_err(|d| vec![d]).and_then(|mut p| {
        ekb_ir::l0::check::check(&mut p)?;
        ekb_ir::l0::check::check(g)
    });
    let ds = match parsed {
        Ok(()) => return Ok(()),
        Err(ds) => ds,
    };
    let lines = ds
        .into_iter()
        .map(|d| {
            let Some(span) = d.span.filter(|s| !s.is_none()) else { return d.message.clone() };
            let (line, _) = src.line_col(span.start as usize);
            let code = text.lines().nth(line - 1).unwrap_or("").trim();
            // A node's line starts with its name: `%name: type = op(...)` or `%name = op(...)`.
            let node = code.split([':', ' ']).next().and_then(|name| origin.get(name));
            match node {
                Some(label) => format!("{label}: {} (line {line} of the graph: `{code}`)", d.message),
                None => format!("{} (line {line} of the graph: `{code}`)", d.message),
            }
        })
        .collect();
    Err(list_error("the imported graph does not check; nothing was imported", lines))
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
    /// Produced by a node that could not be imported, or one whose input could not be (already
    /// reported: no other value is ever `Bad`, so a `Bad` graph output needs no report of its own).
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
    /// The label of the ONNX node being read, and for each L0 node the label of the ONNX node
    /// it was made for (to name it in a diagnostic of the checker).
    reading: String,
    origin: HashMap<String, String>,
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
            reading: String::new(),
            origin: HashMap::new(),
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
            // A constant output becomes a parameter or a `full` node made for the output.
            self.reading = format!("output `{}`", vi.name);
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
        // A `full` holds a number: a NaN fill is a data parameter.
        let nan_fill = matches!(&c.data, Data::F32(v) if v.first().is_some_and(|x| x.is_nan()));
        let out = if init || !c.is_uniform() || c.numel() == 0 || nan_fill {
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

    /// Appends one L0 node (its type inferred); `hint` names it. The operator is checked as
    /// `ekb check` reads it back from text (its attributes' ranges, then its type rule), so a
    /// node the checker would refuse is refused here, as a problem of the ONNX node being read.
    fn emit(&mut self, hint: &str, op: Op, args: Vec<String>) -> Result<Val, String> {
        let attrs: Vec<Attr> = op
            .attrs_for_print()
            .into_iter()
            .map(|(name, value)| Attr {
                name: name.into(),
                value,
                name_span: Span::NONE,
                value_span: Span::NONE,
            })
            .collect();
        Op::from_text(op.name(), Span::NONE, args.len(), &attrs).map_err(|d| d.message.clone())?;
        let types: Vec<TensorType> = args.iter().map(|a| self.types[a].clone()).collect();
        let refs: Vec<&TensorType> = types.iter().collect();
        let ty = infer(&op, &refs, Span::NONE).map_err(|d| d.message.clone())?;
        let name = self.fresh(hint, true);
        self.origin.insert(name.clone(), self.reading.clone());
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
        self.reading = label.clone();
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
        } else if let Err(why) = check_attrs(n).and_then(|()| self.first_output_only(n, graph_outputs)) {
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

    /// Every operator is read with its first output only: the others (BatchNormalization's
    /// statistics, MaxPool's indices, Dropout's mask, ...) must be neither read by a node nor
    /// graph outputs, so that no declared output goes missing. Checked whatever the node's
    /// inputs, as its operator and attributes are.
    fn first_output_only(&self, n: &NodeProto, graph_outputs: &[ValueInfoProto]) -> Result<(), String> {
        for extra in n.output.iter().skip(1).filter(|o| !o.is_empty()) {
            let how = if graph_outputs.iter().any(|g| &g.name == extra) {
                "a graph output"
            } else if self.consumers.contains_key(extra) {
                "read by another node"
            } else {
                continue;
            };
            return Err(format!(
                "output `{extra}` is {how}; only the first output of `{}` is supported (the others must be unused)",
                n.op_type
            ));
        }
        Ok(())
    }

    fn unary_val(&mut self, x: &Val, op: UnaryOp, out: &str) -> Result<Val, String> {
        let (x, _) = self.tensor(x, None)?;
        self.emit(out, Op::Unary(op), vec![x])
    }

    /// The L0 form of one node.
    fn convert(&mut self, n: &NodeProto, ins: &[Val], graph_outputs: &[ValueInfoProto]) -> Res {
        let Some((family, _)) = lookup(n) else { return Err(unsupported_reason(n)) };
        match family {
            Family::ImportTime => self.convert_import_time(n, ins),
            Family::Elementwise => self.convert_elementwise(n, ins, graph_outputs),
            Family::Reduce => self.convert_reduce(n, ins),
            Family::Norm => self.convert_norm(n, ins),
            Family::MatMul => self.convert_matmul(n, ins),
            Family::Spatial => self.convert_spatial(n, ins),
            Family::Movement => self.convert_movement(n, ins),
        }
    }

    /// The nodes resolved at import time: constants, shape queries, and the nodes that pass
    /// their input through; none becomes an L0 node.
    fn convert_import_time(&mut self, n: &NodeProto, ins: &[Val]) -> Res {
        let out = n.output.first().cloned().unwrap_or_default();
        let a = Attrs(n);
        let x = ins.first().cloned().unwrap_or(Val::Bad);
        let one = |v: Val| Ok(vec![v]);
        match n.op_type.as_str() {
            "Range" => {
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
                let count = ((l - s0) / d).ceil().max(0.0);
                if !count.is_finite() || count > MAX_NUMEL as f64 {
                    return Err(format!(
                        "`Range({s0}, {l}, {d})` would have {count} elements, more than {MAX_NUMEL} (the limit of any constant)"
                    ));
                }
                let count = count as usize;
                let values = (0..count).map(|i| s0 + i as f64 * d);
                let data = match start.data {
                    Data::F32(_) => Data::F32(values.map(|v| v as f32).collect()),
                    Data::Int(_) => Data::Int(values.map(|v| v as i64).collect()),
                };
                let c = Const { onnx_type: start.onnx_type, dims: vec![count], data };
                one(Val::C { c: Rc::new(c), onnx: out.clone(), init: false })
            }
            "Identity" => one(x),
            "Dropout" => {
                if let Some(Val::C { c, .. }) = ins.get(2) {
                    if c.scalar().is_some_and(|v| v != 0.0) {
                        return Err("`training_mode` is true; only inference is supported".into());
                    }
                } else if ins.len() > 2 && !n.input[2].is_empty() {
                    return Err("`training_mode` must be a constant".into());
                }
                one(x)
            }
            "Constant" => {
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
            "ConstantOfShape" => {
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
                let numel = numel_within_limit(&dims)?;
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
            "Shape" => {
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
            "Size" => {
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

    /// Checks the operands of an integer product (`MatMulInteger`, `ConvInteger`): at least two,
    /// int8, and zero points (named `zero_points`) absent or constant zeros.
    fn integer_operands(
        &self,
        n: &NodeProto,
        ins: &[Val],
        zero_points: &[&str; 2],
        names: &[&str; 2],
    ) -> Result<(), String> {
        if ins.len() < 2 {
            return Err(format!("{} input(s); `{}` takes at least 2", ins.len(), n.op_type));
        }
        self.no_zero_points(n, ins, zero_points)?;
        self.int8_operands(&ins[..2], names)
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

    /// A float attribute, read as the shortest decimal that gives the same f32; it must be
    /// finite (no operator the importer reads takes a NaN or infinite attribute).
    fn float(&self, name: &str, dflt: f64) -> Result<f64, String> {
        match self.get(name) {
            Some(a) => {
                self.kind(a, attr_type::FLOAT, "a float")?;
                let v = short(f64::from(a.f.unwrap_or(0.0)));
                if !v.is_finite() {
                    return Err(format!("attribute `{name}` is {v}; a finite number is needed"));
                }
                Ok(v)
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

/// The families of the operators the importer reads: those resolved at import time (here), and
/// one per file as L0's operator families.
#[derive(Clone, Copy)]
enum Family {
    ImportTime,
    Elementwise,
    Reduce,
    Norm,
    MatMul,
    Spatial,
    Movement,
}

/// Operator types, each with the attributes the importer interprets (any other attribute is
/// reported, never ignored).
type OpTable = &'static [(&'static str, &'static [&'static str])];

/// Every family with the operators it reads: of the default domain, and of the `ekb` domain
/// (the exporter's functions).
const FAMILIES: [(Family, OpTable, OpTable); 7] = [
    (Family::ImportTime, IMPORT_TIME_OPS, &[]),
    (Family::Elementwise, elementwise::OPS, elementwise::EKB_OPS),
    (Family::Reduce, reduce::OPS, &[]),
    (Family::Norm, norm::OPS, norm::EKB_OPS),
    (Family::MatMul, matmul::OPS, matmul::EKB_OPS),
    (Family::Spatial, spatial::OPS, spatial::EKB_OPS),
    (Family::Movement, movement::OPS, &[]),
];

/// The operators resolved at import time.
const IMPORT_TIME_OPS: OpTable = &[
    ("Identity", &[]),
    ("Dropout", &["seed"]),
    ("Constant", &["value", "value_float", "value_floats", "value_int", "value_ints"]),
    ("ConstantOfShape", &["value"]),
    ("Shape", &["start", "end"]),
    ("Size", &[]),
    ("Range", &[]),
];

/// The family of this node's operator and the attributes the importer interprets for it;
/// `None`: not supported.
fn lookup(n: &NodeProto) -> Option<(Family, &'static [&'static str])> {
    let ekb = match n.domain.as_str() {
        "" | "ai.onnx" => false,
        EKB_DOMAIN => true,
        _ => return None,
    };
    FAMILIES.iter().find_map(|&(family, ops, ekb_ops)| {
        let table = if ekb { ekb_ops } else { ops };
        table.iter().find(|(op, _)| *op == n.op_type).map(|&(_, attrs)| (family, attrs))
    })
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
    let (_, known) = lookup(n).ok_or_else(|| unsupported_reason(n))?;
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A graph the importer's own checks let through but the parser refuses is reported with
    /// the ONNX node its L0 node was made for, and the line of the text.
    #[test]
    fn a_graph_the_parser_refuses_names_the_onnx_node() {
        let ty = TensorType::new(DType::F32, vec![4]);
        let at = |name: &str| ValueRef { name: name.into(), span: Span::NONE };
        let mut g = Graph {
            name: "g".into(),
            inputs: vec![TensorDecl::seeded("x", ty.clone(), DType::F32.default_init(), Span::NONE)],
            params: vec![],
            nodes: vec![Node {
                name: "%r".into(),
                op: Op::Reshape { shape: vec![-1, -1] },
                args: vec![at("x")],
                ty: None,
                span: Span::NONE,
                op_span: Span::NONE,
            }],
            outputs: vec![OutputDecl { name: "y".into(), ty, value: at("%r"), span: Span::NONE }],
            groups: vec![],
            span: Span::NONE,
        };
        let origin = HashMap::from([("%r".to_string(), "node `r` (Reshape)".to_string())]);
        let d = check_as_written(&mut g, &origin).unwrap_err();
        assert!(d.message.contains("the imported graph does not check"), "{}", d.message);
        assert_eq!(d.notes.len(), 1, "{:?}", d.notes);
        assert!(
            d.notes[0].starts_with("node `r` (Reshape): reshape: `shape` may contain at most one -1 (line 2 of the graph: `%r = reshape(x, shape=[-1,-1])`)"),
            "{:?}",
            d.notes
        );
    }
}
