//! The L0 graph: operators on whole tensors, in SSA form.
//!
//! A graph has named inputs (fed from seeds), named parameters (weights, initialised from seeds),
//! a list of nodes each producing one value, and named outputs. Input and parameter names are
//! plain identifiers (`x`, `w`); node results start with `%` (`%0`, `%h`). Every name is defined
//! once, before its uses. After `check` every node carries its inferred type.
//!
//! A parameter may instead carry real values (`= file("m.bin", offset=0, crc32="…")`, e.g. the
//! weights of an imported model): its [`TensorDecl::data`] names the sidecar file, the byte
//! offset and the CRC-32 of its bytes, and holds the values once loaded. Such a declaration's
//! `init` is [`DATA_PARAM_INIT`], never used to generate it.

use crate::diag::Span;
use crate::tensor::BufData;
use crate::types::{DType, TensorType};
use ekb_wire::Init;
use std::fmt;
use std::sync::Arc;

#[derive(Debug, Clone, PartialEq)]
pub struct Graph {
    pub name: String,
    pub inputs: Vec<TensorDecl>,
    pub params: Vec<TensorDecl>,
    pub nodes: Vec<Node>,
    /// Named results, in order, with their declared types.
    pub outputs: Vec<OutputDecl>,
    /// Nodes the lowering puts in one kernel each (`fuse %a, %b`), in the order written; the
    /// rules are in [`crate::l0::fusion`].
    pub groups: Vec<FusionGroup>,
    pub span: Span,
}

/// `fuse %a, %b, %c`: nodes computed by one kernel. The members are listed in node order; the
/// last one's value is the group's result, the others are only read inside the group.
#[derive(Debug, Clone, PartialEq)]
pub struct FusionGroup {
    pub nodes: Vec<ValueRef>,
    /// The whole statement.
    pub span: Span,
}

/// A graph input or a parameter: a name, a type and how its data is generated from a seed, or,
/// for a parameter with `data`, where its real values are.
#[derive(Debug, Clone, PartialEq)]
pub struct TensorDecl {
    pub name: String,
    pub ty: TensorType,
    /// The seeded initialiser; [`DATA_PARAM_INIT`] (unused) when `data` is set.
    pub init: Init,
    pub span: Span,
    /// Real values from a sidecar file (parameters only); `None` for seeded tensors.
    pub data: Option<ParamData>,
}

/// The `init` of a parameter whose values come from a file: never used by the host (the
/// generator returns the file's values). It is the empty range `uniform(0, 0)`, which the seeded
/// generator rejects for every dtype, so a consumer that does not know about data parameters
/// fails loudly instead of running on made-up weights.
pub const DATA_PARAM_INIT: Init = Init::Uniform { lo: 0.0, hi: 0.0 };

/// Where a parameter's real values are: `file("NAME.bin", offset=N, crc32="xxxxxxxx")`.
///
/// The file holds the elements little-endian (f32, i32, i8 or f16, as the parameter's dtype),
/// row-major, `numel * element size` bytes from `offset`; `crc32` is the IEEE CRC-32 of exactly those bytes.
#[derive(Clone, PartialEq)]
pub struct ParamData {
    /// The sidecar file as written: relative to the directory of the `.ekir` file.
    pub file: String,
    pub offset: u64,
    pub crc32: u32,
    /// The values once loaded (`check::load` of a file on disk, `inputs::load_data`, or whoever
    /// built the graph in memory); `None` until then.
    pub values: Option<Arc<BufData>>,
}

impl ParamData {
    /// A reference to `values`, stored at `offset` of `file`, with the checksum of their bytes.
    pub fn with_values(file: impl Into<String>, offset: u64, values: BufData) -> ParamData {
        let crc32 = ekb_wire::crc32(&le_bytes(&values));
        ParamData { file: file.into(), offset, crc32, values: Some(Arc::new(values)) }
    }
}

impl fmt::Debug for ParamData {
    /// The reference and the element count, not the (possibly millions of) values.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let loaded = self.values.as_ref().map(|v| match &**v {
            BufData::F32(x) => x.len(),
            BufData::I32(x) => x.len(),
            BufData::I8(x) => x.len(),
            BufData::F16(x) => x.len(),
        });
        f.debug_struct("ParamData")
            .field("file", &self.file)
            .field("offset", &self.offset)
            .field("crc32", &format_args!("{:08x}", self.crc32))
            .field("loaded_elements", &loaded)
            .finish()
    }
}

/// The little-endian bytes of the elements, as a data file stores them.
pub fn le_bytes(data: &BufData) -> Vec<u8> {
    match data {
        BufData::F32(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        BufData::I32(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        BufData::I8(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        BufData::F16(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
    }
}

/// One declared result of the graph (`-> (y: f32[4])`) and the value returned for it.
#[derive(Debug, Clone, PartialEq)]
pub struct OutputDecl {
    pub name: String,
    pub ty: TensorType,
    /// The value named in `return`, in the same position.
    pub value: ValueRef,
    pub span: Span,
}

/// A use of a value by name (`x`, `%3`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValueRef {
    pub name: String,
    pub span: Span,
}

/// `%name[: type] = op(args, attr=value, ...)`.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    /// Including the leading `%`.
    pub name: String,
    pub op: Op,
    pub args: Vec<ValueRef>,
    /// The written annotation before `check`; the inferred type after.
    pub ty: Option<TensorType>,
    pub span: Span,
    /// Span of the operator name, for diagnostics about the operator.
    pub op_span: Span,
}

/// Every L0 operator with its attributes. The semantics of each are written down in
/// `docs/ir.md`; shape rules live in `ops/` (one file per operator family).
#[derive(Debug, Clone, PartialEq)]
pub enum Op {
    /// Elementwise, one input.
    Unary(UnaryOp),
    /// Elementwise, two inputs with numpy broadcasting.
    Binary(BinaryOp),
    /// `sum|mean|max|min(x, axes=[..], keepdims=false)`; empty `axes` is not allowed.
    Reduce { kind: ReduceKind, axes: Vec<i64>, keepdims: bool },
    /// Index (i32) of the first maximum along `axis`.
    ArgMax { axis: i64, keepdims: bool },
    /// `softmax` / `log_softmax` along `axis`.
    Softmax { axis: i64, log: bool },
    /// `layer_norm(x, weight, bias, eps)`: normalise over the trailing `weight.rank` dimensions.
    LayerNorm { eps: f64 },
    /// `rms_norm(x, weight, eps)`: `x / sqrt(mean(x^2) + eps) * weight` over trailing dims.
    RmsNorm { eps: f64 },
    /// `batch_norm(x, gamma, beta, mean, var, eps)`: inference form, channels on axis 1.
    BatchNorm { eps: f64 },
    /// `matmul(a, b)`: rank >= 2, batch dimensions broadcast; operands optionally transposed
    /// (last two dims swapped) before multiplying. Like `linear` and `conv2d`: f32 operands give
    /// f32; i8 operands give their exact i32 sums (zero points 0), with an i32 bias.
    MatMul { transpose_a: bool, transpose_b: bool },
    /// `linear(x, w[, b])`: `x @ w^T + b`, `w: [out, in]`.
    Linear,
    /// `conv2d(x, w[, b])`: NCHW input, `w: [OC, IC/groups, KH, KW]`.
    Conv2d(Conv2dAttrs),
    /// `max_pool2d(x)`: NCHW; padded positions never win.
    MaxPool2d(Pool2dAttrs),
    /// `avg_pool2d(x)`: NCHW.
    AvgPool2d { pool: Pool2dAttrs, count_include_pad: bool },
    /// `global_avg_pool2d(x)`: `[N,C,H,W] -> [N,C,1,1]`.
    GlobalAvgPool2d,
    /// Same elements, new shape; at most one `-1`, resolved from the element count.
    Reshape { shape: Vec<i64> },
    /// `transpose(x, perm=[..])`: output dim `i` is input dim `perm[i]`.
    Transpose { perm: Vec<usize> },
    /// Join along `axis`; all other dimensions equal.
    Concat { axis: i64 },
    /// Python-style slicing per listed axis: negative `starts`/`ends` count from the end,
    /// then clamp to `[0, dim]`; `steps` >= 1.
    Slice { axes: Vec<i64>, starts: Vec<i64>, ends: Vec<i64>, steps: Vec<i64> },
    /// `pads` in ONNX order: all begins, then all ends, one per dimension, each >= 0.
    Pad { pads: Vec<usize>, mode: PadMode },
    /// Convert element type (float to int truncates toward zero, saturating).
    Cast { dtype: DType },
    /// A constant tensor: `full(shape=[..], value=v, dtype=f32)`; no inputs.
    Full { ty: TensorType, value: f64 },
    /// `less|less_equal|greater|greater_equal|equal(a, b)`: numpy broadcasting; the result is
    /// i32 holding 1 (true) or 0 (false).
    Compare(CompareOp),
    /// `where(cond, a, b)`: `a` where the i32 `cond` is nonzero, else `b`; three-way broadcasting.
    Where,
    /// `iota(shape=[..], axis=k, dtype=i32)`: no inputs; each element is its index along `axis`.
    Iota { ty: TensorType, axis: i64 },
    /// `expand(x, shape=[..])`: x broadcast (numpy rules) to exactly `shape`.
    Expand { shape: Vec<usize> },
    /// `gather(x, indices, axis=k)`: ONNX `Gather`; i32 indices of any rank, negative ones
    /// counting from the end of `axis`.
    Gather { axis: i64 },
    /// `cumsum(x, axis=k, exclusive=false, reverse=false)`: running sums along `axis`.
    CumSum { axis: i64, exclusive: bool, reverse: bool },
    /// `group_norm(x, scale, bias, groups=G, eps=1e-5)`: channels on axis 1 in `groups` groups,
    /// each normalised over its channels and every later axis; per-channel scale and bias.
    GroupNorm { groups: usize, eps: f64 },
    /// `quantize_linear(x, scale=S, zero_point=Z)`: f32 -> i8, ONNX `QuantizeLinear` per tensor:
    /// `saturate(round_half_to_even(x / S) + Z)` computed in f32. `scale` is finite, > 0 and
    /// representable in f32 as a normal number; `zero_point` is within i8.
    QuantizeLinear { scale: f64, zero_point: i64 },
    /// `dequantize_linear(q, scale=S, zero_point=Z)`: i8 -> f32, ONNX `DequantizeLinear` per
    /// tensor: `(q - Z) * S`, the difference exact, one f32 rounding for the product.
    DequantizeLinear { scale: f64, zero_point: i64 },
    /// `conv_transpose2d(x, w[, b])`: NCHW input, `w: [IC, OC/groups, KH, KW]` (PyTorch's layout).
    ConvTranspose2d(ConvTranspose2dAttrs),
    /// `resize(x, size=[H,W], mode=nearest, align_corners=false)`: NCHW, PyTorch's `interpolate`.
    Resize { size: [usize; 2], mode: ResizeMode, align_corners: bool },
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum UnaryOp {
    Relu,
    Relu6,
    LeakyRelu {
        alpha: f64,
    },
    /// `approximate=none` (erf form) or `approximate=tanh`.
    Gelu {
        tanh: bool,
    },
    Silu,
    Sigmoid,
    Tanh,
    HardSwish,
    HardSigmoid,
    Softplus {
        beta: f64,
        threshold: f64,
    },
    Elu {
        alpha: f64,
    },
    Exp,
    Log,
    Sqrt,
    Rsqrt,
    Abs,
    Neg,
    Clip {
        min: f64,
        max: f64,
    },
    Sin,
    Cos,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BinaryOp {
    Add,
    Sub,
    Mul,
    Div,
    Max,
    Min,
    Pow,
}

/// The comparisons of `Op::Compare`, each `a OP b`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CompareOp {
    Less,
    LessEqual,
    Greater,
    GreaterEqual,
    Equal,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReduceKind {
    Sum,
    Mean,
    Max,
    Min,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conv2dAttrs {
    pub stride: [usize; 2],
    /// `[top, left, bottom, right]` (ONNX order).
    pub pad: [usize; 4],
    pub dilation: [usize; 2],
    pub groups: usize,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pool2dAttrs {
    pub kernel: [usize; 2],
    pub stride: [usize; 2],
    /// `[top, left, bottom, right]` (ONNX order).
    pub pad: [usize; 4],
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConvTranspose2dAttrs {
    pub stride: [usize; 2],
    /// `[top, left, bottom, right]` (ONNX order), removed from the full output.
    pub pad: [usize; 4],
    /// Extra rows and columns added at the bottom and right (less than the stride or the
    /// dilation of their axis, as PyTorch requires).
    pub output_padding: [usize; 2],
    pub dilation: [usize; 2],
    pub groups: usize,
}

/// How `resize` picks its source positions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ResizeMode {
    /// PyTorch's `nearest`: `src = floor(dst * in / out)`.
    Nearest,
    /// PyTorch's `bilinear`, half-pixel centres (or corners aligned).
    Bilinear,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum PadMode {
    Constant(f64),
    Reflect,
    Edge,
}

impl TensorDecl {
    /// A seeded input or parameter.
    pub fn seeded(name: impl Into<String>, ty: TensorType, init: Init, span: Span) -> TensorDecl {
        TensorDecl { name: name.into(), ty, init, span, data: None }
    }

    /// A parameter with real values.
    pub fn with_data(name: impl Into<String>, ty: TensorType, data: ParamData, span: Span) -> TensorDecl {
        TensorDecl { name: name.into(), ty, init: DATA_PARAM_INIT, span, data: Some(data) }
    }
}

impl Graph {
    /// The declaration of an input or parameter by name.
    pub fn decl(&self, name: &str) -> Option<&TensorDecl> {
        self.inputs.iter().chain(&self.params).find(|d| d.name == name)
    }

    /// The type of any value (input, parameter or node result); node types are known after
    /// `check` (or where annotated).
    pub fn type_of(&self, name: &str) -> Option<&TensorType> {
        if let Some(d) = self.decl(name) {
            return Some(&d.ty);
        }
        self.nodes.iter().find(|n| n.name == name).and_then(|n| n.ty.as_ref())
    }
}
