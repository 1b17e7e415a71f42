//! The L0 graph: operators on whole tensors, in SSA form.
//!
//! A graph has named inputs (fed from seeds), named parameters (weights, initialised from seeds),
//! a list of nodes each producing one value, and named outputs. Input and parameter names are
//! plain identifiers (`x`, `w`); node results start with `%` (`%0`, `%h`). Every name is defined
//! once, before its uses. After `check` every node carries its inferred type.

use crate::diag::Span;
use crate::types::{DType, TensorType};
use ekb_wire::Init;

#[derive(Debug, Clone, PartialEq)]
pub struct Graph {
    pub name: String,
    pub inputs: Vec<TensorDecl>,
    pub params: Vec<TensorDecl>,
    pub nodes: Vec<Node>,
    /// Named results, in order, with their declared types.
    pub outputs: Vec<OutputDecl>,
    pub span: Span,
}

/// A graph input or a parameter: a name, a type and how its data is generated from a seed.
#[derive(Debug, Clone, PartialEq)]
pub struct TensorDecl {
    pub name: String,
    pub ty: TensorType,
    pub init: Init,
    pub span: Span,
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
/// `docs/ir.md`; shape rules live in `ops.rs`.
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
    /// (last two dims swapped) before multiplying.
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

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum PadMode {
    Constant(f64),
    Reflect,
    Edge,
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
