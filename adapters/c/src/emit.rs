//! The one tree walk: an L1 GPU kernel -> C source, spelled through a [`Dialect`].
//!
//! Each kernel becomes one GPU function with its parameters in order as pointers to the
//! buffers' first elements (`in` ones `const`), the launch variables read from the block and
//! thread indices, shared allocations as block-shared arrays (or, with `shared_optin` in CUDA,
//! slices of the dynamic shared memory), local ones as per-thread arrays, and the statements in
//! order. Multi-dimensional indices are flattened row-major (`t[i, j]` of `f32[4,8]` is
//! `t[i * 8 + j]`).
//!
//! What this walk must keep true: the C means what the L1 means. A loop's upper bound is
//! evaluated once (hoisted into a `const` when it loads from memory, which the body might
//! write); every C name is the L1 name unless that name is reserved in one of the dialects (then
//! it gets `_` appended until it is free); operators are parenthesised by C's precedence;
//! literals are exact (shortest f32 that reads back, `INT_MIN` spelled as `(-2147483647 - 1)`).
//! Anything the verifier should have rejected is an error here, never a panic. A `vectorize`
//! loop over aligned consecutive elements is written with vector types ([`vector`]). f16
//! elements are read and written only through the dialect's conversions (exact widening, stores
//! rounded to nearest even); f16 allocations are refused.

mod vector;

use crate::dialect::{Dialect, RESERVED};
use ekb_ir::diag::{Diagnostic, Span};
use ekb_ir::l1::gpu::LaunchShape;
use ekb_ir::l1::print::{fmt_f32, print_expr};
use ekb_ir::l1::visit::{defined_names, has_load};
use ekb_ir::l1::*;
use ekb_ir::types::{strides, TensorType};
use ekb_ir::DType;
use std::collections::{HashMap, HashSet};
use std::fmt::Write;

type R<T> = Result<T, Diagnostic>;

/// Byte alignment of each shared allocation inside CUDA's dynamic shared memory.
pub const DYNAMIC_SHARED_ALIGN: u64 = 16;

/// The source of every kernel of `m` (all GPU kernels) in dialect `d`, preamble first; the
/// kernels of `replaced` are not emitted: their hand-written text comes last instead, each after
/// a `#line 1 "NAME"` so the GPU compiler's messages name that text's own file and lines. With
/// any replaced kernel the preamble is the whole of it (what hand-written code may call).
pub fn module_source(m: &Module, d: Dialect, replaced: &[HandWritten<'_>]) -> R<String> {
    let mut kernels = Vec::new();
    let (mut inf_nan, mut min_max) = (!replaced.is_empty(), !replaced.is_empty());
    for k in m.kernels.iter().filter(|k| !replaced.iter().any(|r| r.kernel == k.name)) {
        let mut cx = KernelCx::new(d, k);
        kernels.push(cx.kernel()?);
        inf_nan |= cx.uses_inf_nan;
        min_max |= cx.uses_float_min_max;
    }
    for r in replaced {
        let Some(k) = m.kernels.iter().find(|k| k.name == r.kernel) else {
            return Err(Diagnostic::error(format!(
                "`{}` replaces kernel `{}`, which module {} does not have",
                r.name, r.kernel, m.name
            )));
        };
        if LaunchShape::of(k).is_none() {
            return Err(Diagnostic::error(format!(
                "kernel {} is not a GPU kernel: its body is not exactly one `launch`",
                k.name
            ))
            .at(k.span)
            .with_note(format!("its source `{}` needs the launch geometry of a `launch`", r.name)));
        }
        let name = r.name.replace('\\', "/").replace('"', "'");
        kernels.push(format!("#line 1 \"{name}\"\n{}", r.text));
    }
    let half = m.buffers.iter().any(|b| b.ty.dtype == DType::F16);
    let mut out = format!(
        "// Kernels of L1 module `{}` in {}; kernel ABI: docs/gpu.md in the EdgeKernelBench sources.\n",
        m.name,
        d.name()
    );
    out.push_str(d.preamble(inf_nan));
    if half {
        out.push_str(d.half_preamble());
    }
    if min_max {
        out.push_str(d.min_max_preamble());
    }
    for k in kernels {
        out.push('\n');
        out.push_str(&k);
    }
    Ok(out)
}

/// The function of kernel `k` of `m` in dialect `d`, without the preamble: what an L2 kernel
/// file starts from.
pub fn kernel_source(m: &Module, d: Dialect, k: &str) -> R<String> {
    let kernel = m
        .kernels
        .iter()
        .find(|x| x.name == k)
        .ok_or_else(|| Diagnostic::error(format!("module {} has no kernel `{k}`", m.name)))?;
    KernelCx::new(d, kernel).kernel()
}

/// The hand-written source of one kernel, replacing the emitted one.
#[derive(Debug, Clone, Copy)]
pub struct HandWritten<'a> {
    pub kernel: &'a str,
    /// The file name the GPU compiler's messages give (`#line`).
    pub name: &'a str,
    pub text: &'a str,
}

/// C's binding strengths: 1 `||`, 2 `&&`, 3 `== !=`, 4 `< <= > >=`, 5 `+ -`, 6 `* / %`, 7 unary
/// operators and casts, 8 atoms.
const ATOM: u8 = 8;
const UNARY: u8 = 7;

fn c_prec(op: BinOp) -> u8 {
    match op {
        BinOp::Or => 1,
        BinOp::And => 2,
        BinOp::Eq | BinOp::Ne => 3,
        BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => 4,
        BinOp::Add | BinOp::Sub => 5,
        BinOp::Mul | BinOp::Div | BinOp::Rem => 6,
    }
}

/// An emitted expression: its text, binding strength and type.
struct CExpr {
    text: String,
    level: u8,
    ty: Ty,
}

impl CExpr {
    fn new(text: String, level: u8, ty: Ty) -> CExpr {
        CExpr { text, level, ty }
    }

    /// The text, parenthesised unless it binds at least as tightly as `level`.
    fn at(&self, level: u8) -> String {
        if self.level >= level {
            self.text.clone()
        } else {
            format!("({})", self.text)
        }
    }
}

#[derive(Clone)]
enum Binding {
    Var { ty: Ty, c: String },
    Buf { ty: TensorType, c: String },
}

struct KernelCx<'a> {
    d: Dialect,
    k: &'a Kernel,
    scopes: Vec<Vec<(String, Binding)>>,
    /// Every name the kernel's C text uses or may use.
    taken: HashSet<String>,
    out: String,
    depth: usize,
    uses_inf_nan: bool,
    /// Whether an f32 `min` or `max` is called (then the preamble defines them).
    uses_float_min_max: bool,
    /// The L1 value of each `let`, by its C name (what [`vector`] proves alignment from).
    values: HashMap<String, Expr>,
    /// Inside one lane of a vectorised loop: what its reads become.
    lane: Option<vector::Lane>,
    /// The scope of each allocation, by its C name (shared arrays are 16-byte aligned, local
    /// ones are registers: what [`vector`] may load as vectors or access lane by lane).
    allocs: HashMap<String, Scope>,
}

impl<'a> KernelCx<'a> {
    fn new(d: Dialect, k: &'a Kernel) -> Self {
        let mut taken: HashSet<String> = RESERVED.iter().map(|s| s.to_string()).collect();
        taken.insert(k.name.clone());
        taken.extend(defined_names(k));
        KernelCx {
            d,
            k,
            scopes: vec![Vec::new()],
            taken,
            out: String::new(),
            depth: 1,
            uses_inf_nan: false,
            uses_float_min_max: false,
            values: HashMap::new(),
            lane: None,
            allocs: HashMap::new(),
        }
    }

    fn err(&self, span: Span, msg: impl Into<String>) -> Diagnostic {
        let d = Diagnostic::error(format!("{} (kernel {})", msg.into(), self.k.name));
        if span.is_none() {
            d
        } else {
            d.at(span)
        }
    }

    /// The C name of an L1 name: itself unless reserved in a dialect or starting with `__`.
    fn c_name(&mut self, l1: &str) -> String {
        if !RESERVED.contains(&l1) && !l1.starts_with("__") {
            return l1.to_string();
        }
        self.fresh(l1)
    }

    /// A name free in this kernel: `base_`, `base__`, ...
    fn fresh(&mut self, base: &str) -> String {
        let mut name = format!("{base}_");
        while self.taken.contains(&name) {
            name.push('_');
        }
        self.taken.insert(name.clone());
        name
    }

    fn bind(&mut self, l1: &str, b: Binding) {
        self.scopes.last_mut().expect("a scope is open").push((l1.to_string(), b));
    }

    fn lookup(&self, name: &str, span: Span) -> R<&Binding> {
        self.scopes
            .iter()
            .rev()
            .flat_map(|s| s.iter().rev())
            .find(|(n, _)| n == name)
            .map(|(_, b)| b)
            .ok_or_else(|| self.err(span, format!("undefined name `{name}`")))
    }

    fn line(&mut self, text: &str) {
        for _ in 0..self.depth {
            self.out.push_str("  ");
        }
        self.out.push_str(text);
        self.out.push('\n');
    }

    fn kernel(&mut self) -> R<String> {
        let k = self.k;
        let Some(shape) = LaunchShape::of(k) else {
            return Err(self
                .err(
                    k.span,
                    format!("kernel {} is not a GPU kernel: its body is not exactly one `launch`", k.name),
                )
                .with_hint("GPU backends run kernels of the form `launch grid(..) block(..) { .. }`"));
        };
        let Some(Stmt::Launch { grid, block, shared_optin, body, span }) = k.launch() else {
            return Err(self.err(k.span, "no launch"));
        };
        if RESERVED.contains(&k.name.as_str()) || k.name.starts_with("__") {
            return Err(self
                .err(k.span, format!("kernel name `{}` is reserved in {}", k.name, self.d.name()))
                .with_hint("rename the kernel"));
        }
        let mut params = Vec::new();
        for p in &k.params {
            let c = self.c_name(&p.name);
            let constness = if p.access == Access::In { "const " } else { "" };
            params.push(format!(
                "{}{constness}{}* {} {c}",
                self.d.global_space(),
                self.d.elem(p.ty.dtype),
                self.d.restrict()
            ));
            self.bind(&p.name, Binding::Buf { ty: p.ty.clone(), c });
        }
        let mut head = String::new();
        let _ = writeln!(
            head,
            "// kernel {}: grid ({}, {}, {}), block ({}, {}, {}), {} bytes of shared memory{}",
            k.name,
            shape.grid[0],
            shape.grid[1],
            shape.grid[2],
            shape.block[0],
            shape.block[1],
            shape.block[2],
            shape.shared_bytes,
            if *shared_optin { " (dynamic, opt-in)" } else { "" }
        );
        let _ =
            writeln!(head, "{} {}({}) {{", self.d.kernel_qualifier(shape.block), k.name, params.join(", "));
        self.out = head;
        self.scopes.push(Vec::new());
        if *shared_optin {
            match self.d.dynamic_shared_decl() {
                Some(decl) => self.line(decl),
                None => {
                    return Err(self
                        .err(*span, format!("`shared_optin` has no meaning in {}", self.d.name()))
                        .with_hint("remove `shared_optin`"))
                }
            }
        }
        for (dims, thread) in [(grid, false), (block, true)] {
            for (axis, dim) in dims.iter().enumerate() {
                let c = self.c_name(&dim.var);
                let index = if thread { self.d.thread_index(axis) } else { self.d.block_index(axis) };
                self.line(&format!("const int {c} = {index};"));
                self.bind(&dim.var, Binding::Var { ty: Ty::I32, c });
            }
        }
        let mut offset = 0u64;
        for s in body {
            self.stmt(s, shared_optin.then_some(&mut offset))?;
        }
        self.scopes.pop();
        self.out.push_str("}\n");
        Ok(std::mem::take(&mut self.out))
    }

    fn block(&mut self, body: &[Stmt]) -> R<()> {
        self.scopes.push(Vec::new());
        self.depth += 1;
        for s in body {
            self.stmt(s, None)?;
        }
        self.depth -= 1;
        self.scopes.pop();
        Ok(())
    }

    /// One statement; `dynamic` is the running offset into dynamic shared memory when the
    /// launch opted in (shared allocations are only at the launch body's level).
    fn stmt(&mut self, s: &Stmt, dynamic: Option<&mut u64>) -> R<()> {
        match s {
            Stmt::Loop { var, kind, lo, hi, body, span } => {
                if *kind == LoopKind::Parallel {
                    return Err(self.err(*span, format!("parallel loop `{var}` inside a launch")));
                }
                if *kind == LoopKind::Vectorize && self.vector_loop(var, lo, hi, body)? {
                    return Ok(());
                }
                // A `vectorize` loop written as a plain loop is unrolled where its bounds are
                // literals, as its lanes would have been.
                let literal = matches!((&lo.kind, &hi.kind), (ExprKind::Int(_), ExprKind::Int(_)));
                let lo = self.expr(lo)?;
                let hi_e = self.expr(hi)?;
                let c = self.c_name(var);
                let end = if has_load(hi) {
                    let end = self.fresh(&format!("{var}_end"));
                    self.line(&format!("const int {end} = {};", hi_e.text));
                    end
                } else {
                    hi_e.at(5)
                };
                if *kind == LoopKind::Unroll || (*kind == LoopKind::Vectorize && literal) {
                    self.line("#pragma unroll");
                }
                self.line(&format!("for (int {c} = {}; {c} < {end}; ++{c}) {{", lo.text));
                self.scopes.push(vec![(var.clone(), Binding::Var { ty: Ty::I32, c })]);
                self.block(body)?;
                self.scopes.pop();
                self.line("}");
            }
            Stmt::If { .. } => self.if_chain(s)?,
            Stmt::Let { name, value, .. } => {
                let v = self.expr(value)?;
                let c = self.c_name(name);
                self.line(&format!("const {} {c} = {};", self.d.ty(v.ty), v.text));
                self.values.insert(c.clone(), value.clone());
                self.bind(name, Binding::Var { ty: v.ty, c });
            }
            Stmt::Store { buf, index, value, span } => {
                if self.is_half(buf)? {
                    let (c, offset) = self.offset(buf, index, *span)?;
                    let v = self.expr(value)?;
                    let line = match self.d {
                        // Rounded to nearest even, whatever the rounding mode.
                        Dialect::OpenCl => format!("vstore_half_rte({}, {offset}, {c});", v.text),
                        Dialect::Cuda => format!("{c}[{offset}] = ekb_f2h({});", v.text),
                    };
                    self.line(&line);
                    return Ok(());
                }
                let target = self.access(buf, index, *span)?;
                let v = self.expr(value)?;
                match self.lookup(&buf.name, buf.span)? {
                    // An i8 element keeps the low 8 bits of the int (every supported compiler
                    // converts modulo 2^8; lowered code clamps first where L0 saturates).
                    Binding::Buf { ty, .. } if ty.dtype == ekb_ir::DType::I8 => {
                        self.line(&format!("{target} = (signed char)({});", v.text))
                    }
                    _ => self.line(&format!("{target} = {};", v.text)),
                }
            }
            Stmt::Alloc { name, ty, scope, span } => {
                if ty.dtype == DType::F16 {
                    // OpenCL C without `cl_khr_fp16` has no arrays of `half`.
                    return Err(self
                        .err(*span, format!("alloc `{name}`: f16 allocations are not written as C"))
                        .with_hint(
                            "allocate f32 (f16 is a storage type of kernel parameters in the GPU dialects)",
                        ));
                }
                if *scope == Scope::Shared && self.depth != 1 {
                    return Err(
                        self.err(*span, format!("shared alloc `{name}` is not directly inside the launch"))
                    );
                }
                let c = self.c_name(name);
                let elem = self.d.elem(ty.dtype);
                let n = ty.numel().max(1);
                match (scope, dynamic) {
                    (Scope::Local, _) => self.line(&format!("{elem} {c}[{n}];")),
                    (Scope::Shared, None) => self.line(&self.d.shared_array(elem, &c, n)),
                    (Scope::Shared, Some(offset)) => {
                        let at = *offset;
                        *offset = (at + ekb_ir::l1::memory::type_bytes(ty)).div_ceil(DYNAMIC_SHARED_ALIGN)
                            * DYNAMIC_SHARED_ALIGN;
                        self.line(&format!("{elem}* {c} = ({elem}*)(ekb_smem + {at});"));
                    }
                }
                self.allocs.insert(c.clone(), *scope);
                self.bind(name, Binding::Buf { ty: ty.clone(), c });
            }
            Stmt::Barrier { .. } => self.line(self.d.barrier()),
            Stmt::Launch { span, .. } => return Err(self.err(*span, "nested `launch`")),
        }
        Ok(())
    }

    /// `if (c) { .. } else if (d) { .. } else { .. }`.
    fn if_chain(&mut self, s: &Stmt) -> R<()> {
        let Stmt::If { cond, then_body, else_body, .. } = s else { return Ok(()) };
        let c = self.expr(cond)?;
        self.line(&format!("if ({}) {{", c.text));
        self.block(then_body)?;
        let mut rest = else_body;
        loop {
            match rest.as_slice() {
                [] => {
                    self.line("}");
                    break;
                }
                [Stmt::If { cond, then_body, else_body, .. }] => {
                    let c = self.expr(cond)?;
                    self.line(&format!("}} else if ({}) {{", c.text));
                    self.block(then_body)?;
                    rest = else_body;
                }
                _ => {
                    self.line("} else {");
                    self.block(rest)?;
                    self.line("}");
                    break;
                }
            }
        }
        Ok(())
    }

    /// `c[flat offset]` of a buffer element.
    /// Whether `buf` is a buffer of f16 elements.
    fn is_half(&self, buf: &Name) -> R<bool> {
        Ok(matches!(self.lookup(&buf.name, buf.span)?, Binding::Buf { ty, .. } if ty.dtype == DType::F16))
    }

    fn access(&mut self, buf: &Name, index: &[Expr], span: Span) -> R<String> {
        let (c, offset) = self.offset(buf, index, span)?;
        Ok(format!("{c}[{offset}]"))
    }

    /// The C name of a buffer and the flat offset of an element, as C text.
    fn offset(&mut self, buf: &Name, index: &[Expr], span: Span) -> R<(String, String)> {
        let Binding::Buf { ty, c } = self.lookup(&buf.name, buf.span)?.clone() else {
            return Err(self.err(buf.span, format!("`{}` is not a buffer", buf.name)));
        };
        if index.len() != ty.rank() {
            return Err(self.err(
                span,
                format!("`{}` has {} dimensions, indexed with {}", buf.name, ty.rank(), index.len()),
            ));
        }
        let mut terms = Vec::new();
        for (e, stride) in index.iter().zip(strides(&ty.shape)) {
            if matches!(e.kind, ExprKind::Int(0)) {
                continue;
            }
            let v = self.expr(e)?;
            if v.ty != Ty::I32 {
                return Err(
                    self.err(e.span, format!("index `{}` of `{}` is not i32", print_expr(e), buf.name))
                );
            }
            terms.push(if stride == 1 { v.at(5) } else { format!("{} * {stride}", v.at(6)) });
        }
        let offset = if terms.is_empty() { "0".to_string() } else { terms.join(" + ") };
        Ok((c, offset))
    }

    fn expr(&mut self, e: &Expr) -> R<CExpr> {
        Ok(match &e.kind {
            ExprKind::Int(v) => {
                if *v == i32::MIN {
                    CExpr::new("(-2147483647 - 1)".into(), ATOM, Ty::I32)
                } else {
                    CExpr::new(v.to_string(), if *v < 0 { UNARY } else { ATOM }, Ty::I32)
                }
            }
            ExprKind::Float(x) => self.float_literal(*x),
            ExprKind::Bool(b) => CExpr::new(b.to_string(), ATOM, Ty::Bool),
            ExprKind::Var(v) => match self.lookup(v, e.span)? {
                Binding::Var { ty, c } => CExpr::new(c.clone(), ATOM, *ty),
                Binding::Buf { .. } => {
                    return Err(self.err(e.span, format!("`{v}` is a buffer, not a value")))
                }
            },
            ExprKind::Load { buf, index } => {
                if let Some(component) = self.lane_read(buf, index) {
                    return Ok(component);
                }
                if self.is_half(buf)? {
                    // Widened exactly to float.
                    let (c, offset) = self.offset(buf, index, e.span)?;
                    let text = match self.d {
                        Dialect::OpenCl => format!("vload_half({offset}, {c})"),
                        Dialect::Cuda => format!("ekb_h2f({c}[{offset}])"),
                    };
                    return Ok(CExpr::new(text, ATOM, Ty::F32));
                }
                let text = self.access(buf, index, e.span)?;
                let Binding::Buf { ty, .. } = self.lookup(&buf.name, buf.span)? else {
                    return Err(self.err(buf.span, format!("`{}` is not a buffer", buf.name)));
                };
                CExpr::new(text, ATOM, Ty::of(ty.dtype))
            }
            ExprKind::Unary { op, arg } => {
                let a = self.expr(arg)?;
                let negative_literal = matches!(arg.kind, ExprKind::Int(v) if v < 0)
                    || matches!(arg.kind, ExprKind::Float(x) if x.is_sign_negative() && !x.is_nan());
                let inner = if negative_literal { format!("({})", a.text) } else { a.at(UNARY) };
                let (sym, ty) = match op {
                    UnOp::Neg => ("-", a.ty),
                    UnOp::Not => ("!", Ty::Bool),
                };
                CExpr::new(format!("{sym}{inner}"), UNARY, ty)
            }
            ExprKind::Binary { op, lhs, rhs } => {
                let (l, r) = (self.expr(lhs)?, self.expr(rhs)?);
                let p = c_prec(*op);
                // `&&` inside `||` is parenthesised for the reader (C compilers warn otherwise).
                let lp = if *op == BinOp::Or && l.level == 2 { 3 } else { p };
                let rp = if *op == BinOp::Or && r.level == 2 { 3 } else { p + 1 };
                let ty = if matches!(op, BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::Rem) {
                    l.ty
                } else {
                    Ty::Bool
                };
                CExpr::new(format!("{} {} {}", l.at(lp), op.symbol(), r.at(rp)), p, ty)
            }
            ExprKind::Select { cond, then_val, else_val } => {
                let (c, a, b) = (self.expr(cond)?, self.expr(then_val)?, self.expr(else_val)?);
                CExpr::new(format!("({} ? {} : {})", c.text, a.text, b.text), ATOM, a.ty)
            }
            ExprKind::Cast { to, arg } => {
                let a = self.expr(arg)?;
                match (to, a.ty) {
                    (Ty::F32, Ty::F32) | (Ty::I32, Ty::I32) => a,
                    (Ty::I32, Ty::F32) => {
                        CExpr::new(format!("{}({})", self.d.float_to_int(), a.text), ATOM, Ty::I32)
                    }
                    (Ty::F32 | Ty::I32, Ty::I32 | Ty::Bool) => {
                        CExpr::new(format!("({}){}", self.d.ty(*to), a.at(UNARY)), UNARY, *to)
                    }
                    (Ty::Bool, _) => return Err(self.err(e.span, "a conversion to bool")),
                }
            }
            ExprKind::Call { func, args } => {
                let vals = args.iter().map(|a| self.expr(a)).collect::<R<Vec<_>>>()?;
                let ty = vals.first().map_or(Ty::F32, |v| v.ty);
                let texts: Vec<String> = vals.iter().map(|v| v.text.clone()).collect();
                self.uses_float_min_max |= ty == Ty::F32 && matches!(func, Intrinsic::Min | Intrinsic::Max);
                CExpr::new(format!("{}({})", self.d.math(*func, ty), texts.join(", ")), ATOM, ty)
            }
        })
    }

    fn float_literal(&mut self, x: f32) -> CExpr {
        if x.is_nan() || x.is_infinite() {
            self.uses_inf_nan = true;
        }
        if x.is_nan() {
            CExpr::new("NAN".into(), ATOM, Ty::F32)
        } else if x == f32::INFINITY {
            CExpr::new("INFINITY".into(), ATOM, Ty::F32)
        } else if x == f32::NEG_INFINITY {
            CExpr::new("-INFINITY".into(), UNARY, Ty::F32)
        } else {
            let level = if x.is_sign_negative() { UNARY } else { ATOM };
            CExpr::new(format!("{}f", fmt_f32(x)), level, Ty::F32)
        }
    }
}
