//! One LLVM function being written: its entry-block allocas, its instruction lines, the current
//! basic block, fresh local names, and the L1 names in scope (scalars and buffers).
//!
//! Local names are `%<hint>.<n>` with `n` unique in the function and `hint` reduced to
//! `[A-Za-z0-9_]`, so they never need quoting and never collide; block labels are
//! `<hint>.<n>.<part>`, which no value name matches. Allocas go to the entry block whatever the
//! statement that asked for them, so a loop never re-allocates.

use super::ModuleCx;
use ekb_ir::diag::{did_you_mean, Diagnostic, Span};
use ekb_ir::l1::Ty;
use ekb_ir::types::{DType, TensorType};
use std::collections::HashMap;

/// A typed SSA operand: a constant literal (`3`, `0x3FF0000000000000`, `true`) or a `%name`.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Val {
    pub repr: String,
    pub ty: Ty,
}

impl Val {
    pub fn new(repr: impl Into<String>, ty: Ty) -> Val {
        Val { repr: repr.into(), ty }
    }

    pub fn is_const(&self) -> bool {
        !self.repr.starts_with('%')
    }

    /// The value of an `i32` constant.
    pub fn const_i32(&self) -> Option<i32> {
        (self.ty == Ty::I32 && self.is_const()).then(|| self.repr.parse().ok()).flatten()
    }
}

/// A buffer visible in a function: a kernel parameter, a captured buffer, or a local alloc.
#[derive(Debug, Clone)]
pub(super) struct BufRef {
    pub ptr: String,
    pub ty: TensorType,
    pub writable: bool,
}

/// LLVM type of an L1 scalar type.
pub(super) fn llvm_ty(t: Ty) -> &'static str {
    match t {
        Ty::F32 => "float",
        Ty::I32 => "i32",
        Ty::Bool => "i1",
    }
}

/// LLVM type of a buffer element (in memory: an i8 element is an `i8`, which loads
/// sign-extended to the `i32` expressions use; an f16 element is an `i16` holding its bits,
/// converted to and from the `float` expressions use by `ekb_h2f`/`ekb_f2h`).
pub(super) fn elem_ty(d: DType) -> &'static str {
    match d {
        DType::I8 => "i8",
        DType::F16 => "i16",
        _ => llvm_ty(Ty::of(d)),
    }
}

/// The alignment of one buffer element, as loads and stores state it.
pub(super) fn elem_align(d: DType) -> usize {
    d.size_bytes()
}

/// The parameter declaration of a buffer pointer: distinct from every other buffer (`noalias`),
/// 64-byte aligned, and valid for its whole size, so LLVM vectorises without runtime checks.
pub(super) fn buffer_param(ty: &TensorType, writable: bool, reg: &str) -> String {
    let bytes = ty.size_bytes();
    let deref = if bytes > 0 { format!(" dereferenceable({bytes})") } else { String::new() };
    let ro = if writable { "" } else { " readonly" };
    format!("ptr noalias noundef nonnull align 64{deref}{ro} {reg}")
}

pub(super) struct FnCx<'m> {
    pub m: &'m mut ModuleCx,
    /// The L1 kernel this function belongs to (for names and diagnostics).
    pub kernel: String,
    allocas: Vec<String>,
    lines: Vec<String>,
    /// Label of the basic block instructions are appended to.
    pub block: String,
    next: u32,
    scalars: Vec<HashMap<String, Val>>,
    bufs: Vec<HashMap<String, BufRef>>,
    /// Inside a `vectorize` loop: float arithmetic carries `reassoc contract`.
    pub fast: bool,
    /// Inside an outlined `parallel` body: another `parallel` is refused.
    pub in_parallel: bool,
    trap: bool,
}

impl<'m> FnCx<'m> {
    pub fn new(m: &'m mut ModuleCx, kernel: &str, in_parallel: bool, fast: bool) -> FnCx<'m> {
        FnCx {
            m,
            kernel: kernel.to_string(),
            allocas: Vec::new(),
            lines: Vec::new(),
            block: "entry".into(),
            next: 0,
            scalars: vec![HashMap::new()],
            bufs: vec![HashMap::new()],
            fast,
            in_parallel,
            trap: false,
        }
    }

    /// A fresh local value name `%hint.n`.
    pub fn fresh(&mut self, hint: &str) -> String {
        format!("%{}", self.fresh_label(hint))
    }

    /// A fresh label stem `hint.n`; blocks are named `stem.part`.
    pub fn fresh_label(&mut self, hint: &str) -> String {
        let mut h: String =
            hint.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' }).collect();
        if !h.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
            h.insert(0, 'v');
        }
        self.next += 1;
        format!("{h}.{}", self.next)
    }

    /// Appends an instruction to the current block.
    pub fn emit(&mut self, inst: impl AsRef<str>) {
        self.lines.push(format!("  {}", inst.as_ref()));
    }

    /// Reserves a line to be filled by [`FnCx::fill`] (a phi whose incoming block is not known yet).
    pub fn reserve(&mut self) -> usize {
        self.lines.push(String::new());
        self.lines.len() - 1
    }

    pub fn fill(&mut self, slot: usize, inst: String) {
        self.lines[slot] = format!("  {inst}");
    }

    /// Starts a new basic block; the previous one must have ended with a terminator.
    pub fn start_block(&mut self, label: String) {
        self.lines.push(format!("{label}:"));
        self.block = label;
    }

    /// Adds an instruction to the entry block (allocas).
    pub fn entry_alloca(&mut self, inst: String) {
        self.allocas.push(format!("  {inst}"));
    }

    /// The label of the function's shared trap block (`llvm.trap`), created on first use.
    pub fn trap_label(&mut self) -> &'static str {
        self.trap = true;
        "trap"
    }

    pub fn push_scope(&mut self) {
        self.scalars.push(HashMap::new());
        self.bufs.push(HashMap::new());
    }

    pub fn pop_scope(&mut self) {
        self.scalars.pop();
        self.bufs.pop();
    }

    pub fn bind_scalar(&mut self, name: &str, v: Val) {
        self.scalars.last_mut().expect("a scope is open").insert(name.to_string(), v);
    }

    pub fn bind_buf(&mut self, name: &str, b: BufRef) {
        self.bufs.last_mut().expect("a scope is open").insert(name.to_string(), b);
    }

    pub fn scalar(&self, name: &str, span: Span) -> Result<Val, Diagnostic> {
        if let Some(v) = self.scalars.iter().rev().find_map(|s| s.get(name)) {
            return Ok(v.clone());
        }
        let mut d = self.err(span, format!("unknown variable `{name}`"));
        let known: Vec<&str> = self.scalars.iter().flat_map(|s| s.keys().map(String::as_str)).collect();
        if let Some(h) = did_you_mean(name, known) {
            d = d.with_hint(h);
        } else if self.find_buf(name).is_some() {
            d = d.with_hint(format!("`{name}` is a buffer: index it, e.g. `{name}[i]`"));
        }
        Err(d)
    }

    fn find_buf(&self, name: &str) -> Option<&BufRef> {
        self.bufs.iter().rev().find_map(|s| s.get(name))
    }

    pub fn buf(&self, name: &str, span: Span) -> Result<BufRef, Diagnostic> {
        if let Some(b) = self.find_buf(name) {
            return Ok(b.clone());
        }
        let mut d = self.err(span, format!("unknown buffer `{name}`"));
        let known: Vec<&str> = self.bufs.iter().flat_map(|s| s.keys().map(String::as_str)).collect();
        if let Some(h) = did_you_mean(name, known) {
            d = d.with_hint(h);
        }
        Err(d.with_note("a kernel sees only its parameters and its own allocs"))
    }

    /// The innermost binding of each scalar name in scope, sorted by name.
    pub fn visible_scalars(&self) -> Vec<(String, Val)> {
        let mut out: HashMap<&str, &Val> = HashMap::new();
        for s in &self.scalars {
            out.extend(s.iter().map(|(k, v)| (k.as_str(), v)));
        }
        let mut v: Vec<(String, Val)> = out.into_iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
        v.sort_by(|a, b| a.0.cmp(&b.0));
        v
    }

    /// The innermost binding of each buffer name in scope, sorted by name.
    pub fn visible_bufs(&self) -> Vec<(String, BufRef)> {
        let mut out: HashMap<&str, &BufRef> = HashMap::new();
        for s in &self.bufs {
            out.extend(s.iter().map(|(k, v)| (k.as_str(), v)));
        }
        let mut v: Vec<(String, BufRef)> = out.into_iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
        v.sort_by(|a, b| a.0.cmp(&b.0));
        v
    }

    /// An error at `span`, naming the kernel.
    pub fn err(&self, span: Span, msg: impl Into<String>) -> Diagnostic {
        Diagnostic::error(msg).at(span).with_note(format!("in kernel `{}`", self.kernel))
    }

    /// The function's text: `header {`, the entry block (allocas first), the body, `ret void`,
    /// the trap block if used, `}`.
    pub fn finish(mut self, header: &str) -> String {
        self.emit("ret void");
        let mut out = format!("{header} #0 {{\nentry:\n");
        for l in self.allocas.iter().chain(&self.lines) {
            out.push_str(l);
            out.push('\n');
        }
        if self.trap {
            self.m.use_trap();
            out.push_str("trap:\n  call void @llvm.trap()\n  unreachable\n");
        }
        out.push_str("}\n");
        out
    }
}
