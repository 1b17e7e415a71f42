//! The L1 loop program: kernels of explicit loop nests over buffers, and the plan that runs them.
//!
//! A module declares its buffers (inputs and parameters bound by name to the L0 graph's inputs
//! and parameters, outputs bound by name to the graph's outputs, and temporaries), its kernels,
//! and the plan: the order in which kernels run on which buffers. Inside a kernel, statements
//! are loops (serial, parallel, vectorize, unroll), `if`, `let` (immutable scalar bindings),
//! stores and local allocations. Expressions are typed `f32`, `i32` or `bool`; there are no
//! implicit conversions.
//!
//! GPU kernels: a kernel whose body is one `launch grid(..) block(..) { .. }` runs on a GPU, its
//! body once per thread of every block, with block-shared allocations (`alloc .. shared`),
//! per-thread ones (`alloc .. local`) and block-wide `barrier`s.

use crate::diag::Span;
use crate::types::{DType, TensorType};

#[derive(Debug, Clone, PartialEq)]
pub struct Module {
    pub name: String,
    pub buffers: Vec<BufferDecl>,
    pub kernels: Vec<Kernel>,
    pub plan: Vec<Run>,
    pub span: Span,
}

/// `input x: f32[..]`, `output y: f32[..]`, `buffer t0: f32[..]` at module level.
#[derive(Debug, Clone, PartialEq)]
pub struct BufferDecl {
    pub name: String,
    pub ty: TensorType,
    pub role: BufferRole,
    pub span: Span,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BufferRole {
    /// Graph input or parameter: filled before the plan runs, never written.
    Input,
    /// Graph output: read back after the plan runs.
    Output,
    /// Intermediate: lives from its first to its last use in the plan.
    Temp,
}

/// `kernel k(x: f32[..] in, y: f32[..] out) { ... }`
#[derive(Debug, Clone, PartialEq)]
pub struct Kernel {
    pub name: String,
    pub params: Vec<KernelParam>,
    pub body: Vec<Stmt>,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub struct KernelParam {
    pub name: String,
    pub ty: TensorType,
    pub access: Access,
    pub span: Span,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Access {
    In,
    Out,
    InOut,
}

/// `run k(x, w, t0)`: one step of the plan; arguments are module buffers, by position.
/// `prepare k(w, t0)`: a step that runs once, when the parameters are bound, before the first
/// execution, and not in the executions after it: it computes temps from parameters alone
/// (a weight packed into another layout). The prepare steps come first in the plan.
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    pub kernel: String,
    pub args: Vec<Name>,
    pub span: Span,
    pub prepare: bool,
}

/// A name with the span where it was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Name {
    pub name: String,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Stmt {
    /// `for|parallel|vectorize|unroll v in lo..hi { body }`; `v` is `i32`, `lo` inclusive,
    /// `hi` exclusive; the bounds are evaluated once, before the first iteration.
    Loop { var: String, kind: LoopKind, lo: Expr, hi: Expr, body: Vec<Stmt>, span: Span },
    /// `if cond { .. } else { .. }`
    If { cond: Expr, then_body: Vec<Stmt>, else_body: Vec<Stmt>, span: Span },
    /// `let v = expr`: immutable, visible to the rest of the enclosing block.
    Let { name: String, value: Expr, span: Span },
    /// `buf[i, j] = expr`
    Store { buf: Name, index: Vec<Expr>, value: Expr, span: Span },
    /// `alloc t: f32[8,8] local`: a kernel-private buffer, uninitialised, visible to the rest
    /// of the enclosing block.
    Alloc { name: String, ty: TensorType, scope: Scope, span: Span },
    /// `launch grid(bx in 0..GX, ..) block(tx in 0..BX, ..) { body }`: the body runs once per
    /// thread of every block; grid and block have 1 to 3 dimensions each (x, then y, then z).
    /// With `shared_optin`, the launch may use more shared memory per block than the static limit
    /// (CUDA's dynamic shared memory with the explicit opt-in).
    Launch { grid: Vec<LaunchDim>, block: Vec<LaunchDim>, shared_optin: bool, body: Vec<Stmt>, span: Span },
    /// `barrier`: every thread of the block waits until all have reached it; shared and global
    /// memory written before it is visible to every thread of the block after it.
    Barrier { span: Span },
}

/// One dimension of a launch: `tx in 0..256`. The variable ranges over `0..extent`.
#[derive(Debug, Clone, PartialEq)]
pub struct LaunchDim {
    pub var: String,
    /// At least 1 and at most `i32::MAX`.
    pub extent: u32,
    pub span: Span,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LoopKind {
    /// `for`: iterations in order.
    Serial,
    /// `parallel`: iterations may run on different CPU threads in any order; they must not
    /// write the same element or read an element another iteration writes.
    Parallel,
    /// `vectorize`: iterations may run as SIMD lanes; floating-point reductions across
    /// iterations may be reassociated.
    Vectorize,
    /// `unroll`: iterations in order, body replicated by the backend.
    Unroll,
}

/// Where an `alloc` lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scope {
    /// The running thread's own: its stack on a CPU, registers or private memory on a GPU.
    Local,
    /// One copy per GPU block, seen by all its threads (CUDA `__shared__`, OpenCL `__local`).
    Shared,
}

impl Scope {
    pub fn name(self) -> &'static str {
        match self {
            Scope::Local => "local",
            Scope::Shared => "shared",
        }
    }
}

/// Scalar types of L1 expressions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Ty {
    F32,
    I32,
    Bool,
}

impl Ty {
    /// The type of an element of a buffer of dtype `d` in expressions: an i8 element loads
    /// sign-extended to an i32 and is stored from an i32 (keeping its low 8 bits); an f16
    /// element loads as its exact f32 value and is stored from an f32 (rounded to nearest even).
    pub fn of(d: DType) -> Ty {
        match d {
            DType::F32 | DType::F16 => Ty::F32,
            DType::I32 | DType::I8 => Ty::I32,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Ty::F32 => "f32",
            Ty::I32 => "i32",
            Ty::Bool => "bool",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ExprKind {
    /// An `i32` literal.
    Int(i32),
    /// An `f32` literal (written with `.` or an exponent, or `inf`/`nan`).
    Float(f32),
    Bool(bool),
    /// A loop variable or `let` binding.
    Var(String),
    /// `buf[i, j]`: one index per dimension, each `i32`.
    Load {
        buf: Name,
        index: Vec<Expr>,
    },
    Unary {
        op: UnOp,
        arg: Box<Expr>,
    },
    Binary {
        op: BinOp,
        lhs: Box<Expr>,
        rhs: Box<Expr>,
    },
    /// `select(cond, a, b)`: `a` if `cond` else `b`; both sides are evaluated.
    Select {
        cond: Box<Expr>,
        then_val: Box<Expr>,
        else_val: Box<Expr>,
    },
    /// `f32(e)`, `i32(e)`: explicit conversion (float to int truncates toward zero, saturating;
    /// NaN becomes 0). `bool` converts to 0/1.
    Cast {
        to: Ty,
        arg: Box<Expr>,
    },
    /// Math intrinsics: `exp(x)`, `max(a, b)`, ...
    Call {
        func: Intrinsic,
        args: Vec<Expr>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UnOp {
    /// `-x`
    Neg,
    /// `!b`
    Not,
}

/// Binary operators. `/` and `%` on `i32` truncate toward zero (C semantics); division by zero
/// is an error. `+ - *` on `i32` wrap. `&&` and `||` evaluate both sides.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
    And,
    Or,
}

impl BinOp {
    /// How the operator is written, in L1 and in C alike.
    pub fn symbol(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Rem => "%",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::And => "&&",
            BinOp::Or => "||",
        }
    }
}

/// Intrinsic functions. All take and return `f32` except `min`, `max` and `abs`, which also
/// work on `i32`. `round` rounds to the nearest integer, ties to even (IEEE `roundTiesToEven`,
/// C's `rintf` in the default rounding mode). `exp_ftz` is `exp`, except that a result below
/// 2^-125 may be `+0` (`docs/ir-l1.md`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Intrinsic {
    Exp,
    ExpFtz,
    Log,
    Sqrt,
    Rsqrt,
    Tanh,
    Erf,
    Pow,
    Abs,
    Min,
    Max,
    Floor,
    Ceil,
    Sin,
    Cos,
    Round,
}

impl Intrinsic {
    pub const ALL: [Intrinsic; 16] = [
        Intrinsic::Exp,
        Intrinsic::ExpFtz,
        Intrinsic::Log,
        Intrinsic::Sqrt,
        Intrinsic::Rsqrt,
        Intrinsic::Tanh,
        Intrinsic::Erf,
        Intrinsic::Pow,
        Intrinsic::Abs,
        Intrinsic::Min,
        Intrinsic::Max,
        Intrinsic::Floor,
        Intrinsic::Ceil,
        Intrinsic::Sin,
        Intrinsic::Cos,
        Intrinsic::Round,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Intrinsic::Exp => "exp",
            Intrinsic::ExpFtz => "exp_ftz",
            Intrinsic::Log => "log",
            Intrinsic::Sqrt => "sqrt",
            Intrinsic::Rsqrt => "rsqrt",
            Intrinsic::Tanh => "tanh",
            Intrinsic::Erf => "erf",
            Intrinsic::Pow => "pow",
            Intrinsic::Abs => "abs",
            Intrinsic::Min => "min",
            Intrinsic::Max => "max",
            Intrinsic::Floor => "floor",
            Intrinsic::Ceil => "ceil",
            Intrinsic::Sin => "sin",
            Intrinsic::Cos => "cos",
            Intrinsic::Round => "round",
        }
    }

    pub fn from_name(s: &str) -> Option<Intrinsic> {
        Intrinsic::ALL.into_iter().find(|i| i.name() == s)
    }

    pub fn arity(self) -> usize {
        match self {
            Intrinsic::Pow | Intrinsic::Min | Intrinsic::Max => 2,
            _ => 1,
        }
    }
}

impl Expr {
    pub fn new(kind: ExprKind) -> Expr {
        Expr { kind, span: Span::NONE }
    }
}

impl Name {
    pub fn new(name: impl Into<String>) -> Name {
        Name { name: name.into(), span: Span::NONE }
    }
}

impl Kernel {
    /// The launch of a GPU kernel (a kernel whose body is exactly one `launch`).
    pub fn launch(&self) -> Option<&Stmt> {
        match self.body.as_slice() {
            [s @ Stmt::Launch { .. }] => Some(s),
            _ => None,
        }
    }

    /// Whether any statement of the kernel is a `launch` (well-formed or not).
    pub fn has_launch(&self) -> bool {
        super::visit::any_stmt(&self.body, |s| matches!(s, Stmt::Launch { .. }))
    }
}

impl LaunchDim {
    pub fn new(var: impl Into<String>, extent: u32) -> LaunchDim {
        LaunchDim { var: var.into(), extent, span: Span::NONE }
    }
}

impl Module {
    /// Whether any kernel launches on a GPU.
    pub fn has_launch(&self) -> bool {
        self.kernels.iter().any(Kernel::has_launch)
    }

    pub fn buffer(&self, name: &str) -> Option<&BufferDecl> {
        self.buffers.iter().find(|b| b.name == name)
    }

    pub fn kernel(&self, name: &str) -> Option<&Kernel> {
        self.kernels.iter().find(|k| k.name == name)
    }
}
