//! The L1 interpreter: runs a module's plan on f32/i32/i8/f16 buffers with every access bounds-checked.
//!
//! It is the ground truth for lowering bugs, so its semantics are exactly those of
//! `docs/ir-l1.md`: IEEE f32 arithmetic rounded to nearest (each operation rounds once; no fused
//! multiply-add); intrinsics through Rust's `f32` methods (`exp`, `ln`, `sqrt`, `tanh`, `powf`,
//! `abs`, `floor`, `ceil`), `rsqrt(x)` as `1.0 / x.sqrt()`, `exp_ftz(x)` as `exp(x)` with
//! results below 2^-125 flushed to `+0` (every one the semantics allows), `libm::erff` for `erf`, and f32
//! `min`/`max` from [`super::minmax`] (a NaN operand gives NaN); i32 `+ - *` and negation wrap,
//! `/` and `%` truncate toward zero (`i32::MIN / -1` wraps to `i32::MIN`, `i32::MIN % -1` is 0),
//! and division by zero is an error; casts as the AST says (f32 to i32 truncates and saturates,
//! NaN gives 0); `round` rounds half to even
//! (`f32::round_ties_even`). An i8 element loads sign-extended to i32, and a store into an i8
//! buffer keeps the low 8 bits of its i32 value (two's complement wrap); an f16 element loads as
//! its exact f32 value, and a store into an f16 buffer rounds the f32 to nearest even
//! (`ekb_wire::f16`). `&&`, `||` and `select` evaluate both
//! sides. Loops of every kind (`parallel`, `vectorize`, `unroll`) run serially in order, so a
//! run is deterministic. A GPU `launch` runs its blocks one after another (linear order, x
//! fastest); inside a block, the body is cut at its barriers into segments, and each segment runs
//! for every thread in turn (linear order, x fastest) before the next segment starts; loops and
//! `if`s around barriers are uniform (the verifier checks it), so the block runs their control
//! flow once (evaluated in every thread, and a run whose threads disagree stops with an error).
//! Shared allocations are poisoned when a block starts; each thread has its own variables and
//! local allocations.
//!
//! Before the plan runs, temps and outputs are poisoned, and every `alloc` is poisoned each time
//! its statement runs: f32 elements hold the NaN with bits [`POISON_F32_BITS`], i32 elements hold
//! [`POISON_I32`] (`0x7eadbeef`), i8 elements [`POISON_I8`] (`0xef`, its low byte), f16 elements
//! the NaN [`POISON_F16_BITS`] (`0x7ead`). A program that reads what it never wrote shows the pattern
//! instead of plausible numbers.
//!
//! What this interpreter must keep true: it runs only modules that verify (it refuses the others
//! with the verifier's first error); it never reads or writes out of bounds, reporting instead
//! the kernel, the buffer, the dimension, the index expression, its value and the size, with the
//! values of the loop variables and `let`s in scope; it never panics. For speed, each kernel is
//! compiled once into a tree of typed nodes whose variables and buffers are slot numbers, so the
//! inner loop does no name lookups and no allocation.

use super::ast::*;
use super::minmax::{max_f32, min_f32};
use super::print::print_expr;
use super::verify::verify;
use super::visit::any_stmt;
use crate::diag::{Diagnostic, Span};
use crate::tensor::{BufData, Buffer};
use crate::types::{DType, TensorType};
use ekb_wire::f16;
use std::collections::HashMap;

/// Bits of the NaN that fills unwritten f32 elements (a quiet NaN with payload `0xdead`).
pub const POISON_F32_BITS: u32 = 0x7fc0_dead;
/// The value that fills unwritten i32 elements.
pub const POISON_I32: i32 = 0x7ead_beef;
/// The value that fills unwritten i8 elements: the low byte of [`POISON_I32`] (`0xef`, -17).
pub const POISON_I8: i8 = POISON_I32 as i8;
/// The bits that fill unwritten f16 elements: a quiet NaN, the high half of [`POISON_I32`].
pub const POISON_F16_BITS: u16 = 0x7ead;
/// The interpreter refuses modules whose buffers together exceed this many bytes.
pub const MAX_BYTES: u64 = 4 << 30;

/// Runs the plan on `inputs` (every `input` buffer by name; extra entries are ignored) and returns
/// the `output` buffers by name.
pub fn run(m: &Module, inputs: &HashMap<String, Buffer>) -> Result<HashMap<String, Buffer>, Diagnostic> {
    if let Some(first) = verify(m, None).into_iter().find(Diagnostic::is_error) {
        return Err(first.with_note(format!("module {} does not verify, so it cannot run", m.name)));
    }
    let total = m.buffers.iter().fold(0u64, |a, b| a.saturating_add(super::memory::type_bytes(&b.ty)));
    if total > MAX_BYTES {
        return Err(Diagnostic::error(format!(
            "module {} holds {total} bytes of buffers, more than the interpreter's limit of {MAX_BYTES}",
            m.name
        )));
    }
    let mut store: Vec<BufData> = Vec::with_capacity(m.buffers.len());
    for b in &m.buffers {
        store.push(match b.role {
            BufferRole::Input => input_data(m, b, inputs)?,
            BufferRole::Output | BufferRole::Temp => poisoned(b.ty.dtype, b.ty.numel()),
        });
    }
    let mut compiled: HashMap<&str, CKernel> = HashMap::new();
    for k in &m.kernels {
        compiled.insert(&k.name, Compiler::new(k).kernel()?);
    }
    for (step, r) in m.plan.iter().enumerate() {
        let ck = compiled
            .get(r.kernel.as_str())
            .ok_or_else(|| internal(format!("kernel {} is missing", r.kernel)))?;
        let mut frame = ck.frame();
        // Move the argument buffers into the frame (a second read-only use of one buffer gets a
        // copy), and back afterwards.
        let mut moved: Vec<(usize, DType, u32)> = Vec::new();
        for (a, &(dtype, slot)) in r.args.iter().zip(&ck.params) {
            let b = m
                .buffers
                .iter()
                .position(|b| b.name == a.name)
                .ok_or_else(|| internal(format!("buffer {}", a.name)))?;
            let data = match moved.iter().find(|(mb, _, _)| *mb == b) {
                Some(&(_, d, s)) => match d {
                    DType::F32 => BufData::F32(frame.fb[s as usize].clone()),
                    DType::I32 => BufData::I32(frame.ib[s as usize].clone()),
                    DType::I8 => BufData::I8(frame.qb[s as usize].clone()),
                    DType::F16 => BufData::F16(frame.hb[s as usize].clone()),
                },
                None => {
                    moved.push((b, dtype, slot));
                    std::mem::replace(&mut store[b], BufData::F32(Vec::new()))
                }
            };
            match data {
                BufData::F32(v) => frame.fb[slot as usize] = v,
                BufData::I32(v) => frame.ib[slot as usize] = v,
                BufData::I8(v) => frame.qb[slot as usize] = v,
                BufData::F16(v) => frame.hb[slot as usize] = v,
            }
        }
        if let Err(trap) = exec_block(&ck.body, &mut frame) {
            return Err(ck.report(trap, &frame, step));
        }
        for (b, dtype, slot) in moved {
            store[b] = match dtype {
                DType::F32 => BufData::F32(std::mem::take(&mut frame.fb[slot as usize])),
                DType::I32 => BufData::I32(std::mem::take(&mut frame.ib[slot as usize])),
                DType::I8 => BufData::I8(std::mem::take(&mut frame.qb[slot as usize])),
                DType::F16 => BufData::F16(std::mem::take(&mut frame.hb[slot as usize])),
            };
        }
    }
    let mut out = HashMap::new();
    for (b, data) in m.buffers.iter().zip(store) {
        if b.role == BufferRole::Output {
            out.insert(b.name.clone(), Buffer { ty: b.ty.clone(), data });
        }
    }
    Ok(out)
}

fn internal(what: String) -> Diagnostic {
    Diagnostic::error(format!("internal error in the L1 interpreter: {what}"))
}

fn poisoned(dtype: DType, n: usize) -> BufData {
    match dtype {
        DType::F32 => BufData::F32(vec![f32::from_bits(POISON_F32_BITS); n]),
        DType::I32 => BufData::I32(vec![POISON_I32; n]),
        DType::I8 => BufData::I8(vec![POISON_I8; n]),
        DType::F16 => BufData::F16(vec![POISON_F16_BITS; n]),
    }
}

fn input_data(m: &Module, b: &BufferDecl, inputs: &HashMap<String, Buffer>) -> Result<BufData, Diagnostic> {
    let Some(given) = inputs.get(&b.name) else {
        let mut names: Vec<&str> = inputs.keys().map(String::as_str).collect();
        names.sort_unstable();
        let mut d = Diagnostic::error(format!("missing input `{}` ({})", b.name, b.ty)).with_note(format!(
            "inputs given: {}",
            if names.is_empty() { "none".into() } else { names.join(", ") }
        ));
        // A misspelt name is one the module does not declare.
        let unclaimed = names.iter().copied().filter(|n| m.buffer(n).is_none());
        d.hint = crate::diag::did_you_mean(&b.name, unclaimed);
        return Err(d);
    };
    if given.ty != b.ty {
        return Err(Diagnostic::error(format!(
            "input `{}` is {} but the module declares it {}",
            b.name, given.ty, b.ty
        )));
    }
    let (len, dtype) = match &given.data {
        BufData::F32(v) => (v.len(), DType::F32),
        BufData::I32(v) => (v.len(), DType::I32),
        BufData::I8(v) => (v.len(), DType::I8),
        BufData::F16(v) => (v.len(), DType::F16),
    };
    if dtype != b.ty.dtype || len != b.ty.numel() {
        return Err(Diagnostic::error(format!(
            "input `{}` holds {len} {dtype} elements but its type {} needs {} {} elements",
            b.name,
            b.ty,
            b.ty.numel(),
            b.ty.dtype
        )));
    }
    Ok(given.data.clone())
}

// ---------------------------------------------------------------------------------------------
// The compiled form

/// An execution error: the access or division site, and for an access the dimension and value.
#[derive(Debug, Clone, Copy)]
struct Trap {
    site: u32,
    dim: u32,
    value: i32,
}

/// The dimension field of a division trap.
const DIV_TRAP: u32 = u32::MAX;
/// The dimension field of a trap for control flow around a barrier that differs between the
/// threads of a block.
const DIVERGE_TRAP: u32 = u32::MAX - 1;

type R<T> = Result<T, Trap>;

/// One index of an access: its expression, the dimension's size and stride.
struct Index {
    e: IE,
    size: i32,
    stride: usize,
}

/// A bounds-checked element access of buffer slot `buf`.
struct Access {
    buf: u32,
    idx: Box<[Index]>,
    site: u32,
}

#[derive(Clone, Copy)]
enum Arith {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
}

#[derive(Clone, Copy)]
enum Cmp {
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
}

#[derive(Clone, Copy)]
enum MinMax {
    Min,
    Max,
}

/// i32 expressions.
enum IE {
    Const(i32),
    Var(u32),
    Load(Box<Access>),
    /// A load from an i8 buffer, sign-extended.
    LoadQ(Box<Access>),
    Neg(Box<IE>),
    Bin(Arith, Box<IE>, Box<IE>, u32),
    Select(Box<BE>, Box<IE>, Box<IE>),
    FromF(Box<FE>),
    FromB(Box<BE>),
    Abs(Box<IE>),
    MinMax(MinMax, Box<IE>, Box<IE>),
}

/// f32 expressions.
enum FE {
    Const(f32),
    Var(u32),
    Load(Box<Access>),
    /// A load from an f16 buffer: its exact f32 value.
    LoadH(Box<Access>),
    Neg(Box<FE>),
    Bin(Arith, Box<FE>, Box<FE>),
    Select(Box<BE>, Box<FE>, Box<FE>),
    FromI(Box<IE>),
    FromB(Box<BE>),
    Call(Intrinsic, Box<FE>),
    Call2(Intrinsic, Box<FE>, Box<FE>),
}

/// bool expressions.
enum BE {
    Const(bool),
    Var(u32),
    CmpI(Cmp, Box<IE>, Box<IE>),
    CmpF(Cmp, Box<FE>, Box<FE>),
    And(Box<BE>, Box<BE>),
    Or(Box<BE>, Box<BE>),
    Not(Box<BE>),
    Select(Box<BE>, Box<BE>, Box<BE>),
}

enum St {
    Loop {
        var: u32,
        lo: IE,
        hi: IE,
        body: Vec<St>,
    },
    If {
        cond: BE,
        then_body: Vec<St>,
        else_body: Vec<St>,
    },
    LetI(u32, IE),
    LetF(u32, FE),
    LetB(u32, BE),
    StoreI(Access, IE),
    StoreF(Access, FE),
    /// A store into an i8 buffer: the low 8 bits of the value.
    StoreQ(Access, IE),
    /// A store into an f16 buffer: the value rounded to nearest even.
    StoreH(Access, FE),
    AllocI(u32, usize),
    AllocQ(u32, usize),
    AllocH(u32, usize),
    AllocF(u32, usize),
    Launch(Box<CLaunch>),
}

/// A compiled `launch`: its variables' slots and extents, its shared allocations, and its body
/// cut at the barriers.
struct CLaunch {
    grid: Vec<(u32, i32)>,
    block: Vec<(u32, i32)>,
    /// Shared allocations: `(dtype, slot, elements)`, one copy per block.
    shared: Vec<(DType, u32, usize)>,
    /// Buffer slots every thread of a block sees (the kernel's parameters and the shared
    /// allocations): `(dtype, slot)`.
    common: Vec<(DType, u32)>,
    body: Vec<Sync>,
}

/// The body of a launch as the block runs it: barrier-free segments that each thread runs in
/// turn, and the uniform loops and `if`s around barriers, whose control flow the block runs once.
enum Sync {
    Seg(Vec<St>),
    Loop { var: u32, lo: IE, hi: IE, body: Vec<Sync>, site: u32 },
    If { cond: BE, then_body: Vec<Sync>, else_body: Vec<Sync>, site: u32 },
}

/// What an error at a site reports.
struct Site {
    /// The buffer accessed, or empty for a division.
    buffer: String,
    /// The text of each index expression, or of the division.
    texts: Vec<String>,
    sizes: Vec<usize>,
    /// The span of each index expression, or of the division.
    spans: Vec<Span>,
    /// i32 variables in scope: `(name, slot)`.
    vars: Vec<(String, u32)>,
}

struct CKernel {
    name: String,
    /// Per parameter: its dtype and buffer slot.
    params: Vec<(DType, u32)>,
    body: Vec<St>,
    slots: [u32; 7],
    sites: Vec<Site>,
}

/// A kernel invocation's storage: variables and buffers by slot.
struct Frame {
    iv: Vec<i32>,
    fv: Vec<f32>,
    bv: Vec<bool>,
    fb: Vec<Vec<f32>>,
    ib: Vec<Vec<i32>>,
    qb: Vec<Vec<i8>>,
    hb: Vec<Vec<u16>>,
}

impl CKernel {
    fn frame(&self) -> Frame {
        let [ni, nf, nb, nfb, nib, nqb, nhb] = self.slots.map(|n| n as usize);
        Frame {
            iv: vec![0; ni],
            fv: vec![0.0; nf],
            bv: vec![false; nb],
            fb: vec![Vec::new(); nfb],
            ib: vec![Vec::new(); nib],
            qb: vec![Vec::new(); nqb],
            hb: vec![Vec::new(); nhb],
        }
    }

    fn report(&self, t: Trap, f: &Frame, step: usize) -> Diagnostic {
        let Some(site) = self.sites.get(t.site as usize) else {
            return internal(format!("unknown site {}", t.site));
        };
        let which = if t.dim >= DIVERGE_TRAP { 0 } else { t.dim as usize };
        let mut d = if t.dim == DIV_TRAP {
            Diagnostic::error(format!(
                "integer division by zero in kernel {}: `{}`",
                self.name,
                site.texts.first().map_or("", String::as_str)
            ))
        } else if t.dim == DIVERGE_TRAP {
            Diagnostic::error(format!(
                "{} differs between the threads of a block in kernel {}, and a barrier is inside",
                site.texts.first().map_or("", String::as_str),
                self.name
            ))
            .with_hint("the control flow around a barrier must be the same for every thread of the block")
        } else {
            let dim = t.dim as usize;
            Diagnostic::error(format!(
                "index {} out of bounds for dim {dim} of `{}` (size {}) in kernel {}: `{}`",
                t.value,
                site.buffer,
                site.sizes.get(dim).copied().unwrap_or(0),
                self.name,
                site.texts.get(dim).map_or("", String::as_str)
            ))
        }
        .at(site.spans.get(which).copied().unwrap_or(Span::NONE));
        let vars: Vec<String> = site
            .vars
            .iter()
            .map(|(n, s)| format!("{n} = {}", f.iv.get(*s as usize).copied().unwrap_or(0)))
            .collect();
        if !vars.is_empty() {
            d = d.with_note(format!("at {}", vars.join(", ")));
        }
        d.with_note(format!("in step {step} of the plan (run {})", self.name))
    }
}

// ---------------------------------------------------------------------------------------------
// Compilation: names to slots, types to node kinds

#[derive(Clone)]
enum Binding {
    Var(Ty, u32),
    Buf(DType, u32, Vec<usize>),
}

struct Compiler<'a> {
    k: &'a Kernel,
    scope: Vec<(String, Binding)>,
    /// Next free slot: i32 vars, f32 vars, bool vars, f32 buffers, i32 buffers, i8 buffers,
    /// f16 buffers.
    slots: [u32; 7],
    sites: Vec<Site>,
    /// The parameters' `(dtype, slot)`.
    params: Vec<(DType, u32)>,
    /// Shared allocations of the launch being compiled.
    shared: Vec<(DType, u32, usize)>,
}

type C<T> = Result<T, Diagnostic>;

impl<'a> Compiler<'a> {
    fn new(k: &'a Kernel) -> Self {
        Compiler {
            k,
            scope: Vec::new(),
            slots: [0; 7],
            sites: Vec::new(),
            params: Vec::new(),
            shared: Vec::new(),
        }
    }

    fn slot(&mut self, which: usize) -> u32 {
        self.slots[which] += 1;
        self.slots[which] - 1
    }

    fn bind_var(&mut self, name: &str, ty: Ty) -> u32 {
        let s = self.slot(match ty {
            Ty::I32 => 0,
            Ty::F32 => 1,
            Ty::Bool => 2,
        });
        self.scope.push((name.to_string(), Binding::Var(ty, s)));
        s
    }

    fn bind_buf(&mut self, name: &str, ty: &TensorType) -> u32 {
        let s = self.slot(match ty.dtype {
            DType::F32 => 3,
            DType::I32 => 4,
            DType::I8 => 5,
            DType::F16 => 6,
        });
        self.scope.push((name.to_string(), Binding::Buf(ty.dtype, s, ty.shape.clone())));
        s
    }

    fn lookup(&self, name: &str) -> C<&Binding> {
        self.scope
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, b)| b)
            .ok_or_else(|| internal(format!("`{name}` is undefined in kernel {}", self.k.name)))
    }

    fn kernel(mut self) -> C<CKernel> {
        let params: Vec<(DType, u32)> =
            self.k.params.iter().map(|p| (p.ty.dtype, self.bind_buf(&p.name, &p.ty))).collect();
        self.params.clone_from(&params);
        let body = self.block(&self.k.body)?;
        Ok(CKernel { name: self.k.name.clone(), params, body, slots: self.slots, sites: self.sites })
    }

    fn block(&mut self, body: &[Stmt]) -> C<Vec<St>> {
        let mark = self.scope.len();
        let out = body.iter().map(|s| self.stmt(s)).collect();
        self.scope.truncate(mark);
        out
    }

    fn stmt(&mut self, s: &Stmt) -> C<St> {
        Ok(match s {
            Stmt::Loop { var, lo, hi, body, .. } => {
                let (lo, hi) = (self.int(lo)?, self.int(hi)?);
                let mark = self.scope.len();
                let var = self.bind_var(var, Ty::I32);
                let body = self.block(body)?;
                self.scope.truncate(mark);
                St::Loop { var, lo, hi, body }
            }
            Stmt::If { cond, then_body, else_body, .. } => St::If {
                cond: self.boolean(cond)?,
                then_body: self.block(then_body)?,
                else_body: self.block(else_body)?,
            },
            Stmt::Let { name, value, .. } => match self.type_of(value)? {
                Ty::I32 => {
                    let v = self.int(value)?;
                    St::LetI(self.bind_var(name, Ty::I32), v)
                }
                Ty::F32 => {
                    let v = self.float(value)?;
                    St::LetF(self.bind_var(name, Ty::F32), v)
                }
                Ty::Bool => {
                    let v = self.boolean(value)?;
                    St::LetB(self.bind_var(name, Ty::Bool), v)
                }
            },
            Stmt::Store { buf, index, value, span } => {
                let (acc, dtype) = self.access(buf, index, *span)?;
                match dtype {
                    DType::F32 => St::StoreF(acc, self.float(value)?),
                    DType::I32 => St::StoreI(acc, self.int(value)?),
                    DType::I8 => St::StoreQ(acc, self.int(value)?),
                    DType::F16 => St::StoreH(acc, self.float(value)?),
                }
            }
            Stmt::Alloc { name, ty, .. } => {
                let bytes = super::memory::type_bytes(ty);
                if bytes > MAX_BYTES {
                    return Err(Diagnostic::error(format!(
                        "alloc `{name}` in kernel {} needs {bytes} bytes, more than the interpreter's limit",
                        self.k.name
                    )));
                }
                let slot = self.bind_buf(name, ty);
                match ty.dtype {
                    DType::F32 => St::AllocF(slot, ty.numel()),
                    DType::I32 => St::AllocI(slot, ty.numel()),
                    DType::I8 => St::AllocQ(slot, ty.numel()),
                    DType::F16 => St::AllocH(slot, ty.numel()),
                }
            }
            Stmt::Launch { grid, block, body, .. } => {
                let mark = self.scope.len();
                let grid = grid.iter().map(|d| (self.bind_var(&d.var, Ty::I32), d.extent as i32)).collect();
                let block = block.iter().map(|d| (self.bind_var(&d.var, Ty::I32), d.extent as i32)).collect();
                let first_shared = self.shared.len();
                let body = self.sync_block(body)?;
                let shared = self.shared.split_off(first_shared);
                self.scope.truncate(mark);
                let common =
                    self.params.iter().copied().chain(shared.iter().map(|&(d, slot, _)| (d, slot))).collect();
                St::Launch(Box::new(CLaunch { grid, block, shared, common, body }))
            }
            Stmt::Barrier { .. } => return Err(internal("a barrier outside the body of a launch".into())),
        })
    }

    /// A launch body (or a block of it around a barrier): barrier-free runs of statements become
    /// segments, barriers end them, and loops and `if`s that contain a barrier become uniform
    /// control flow around their own segments. Shared allocations are made when a block starts.
    fn sync_block(&mut self, body: &[Stmt]) -> C<Vec<Sync>> {
        let mark = self.scope.len();
        let mut out = Vec::new();
        let mut seg = Vec::new();
        for s in body {
            match s {
                Stmt::Barrier { .. } => out.push(Sync::Seg(std::mem::take(&mut seg))),
                Stmt::Alloc { name, ty, scope: Scope::Shared, .. } => {
                    let slot = self.bind_buf(name, ty);
                    self.shared.push((ty.dtype, slot, ty.numel()));
                }
                Stmt::Loop { var, lo, hi, body, span, .. } if any_stmt(body, is_barrier) => {
                    out.push(Sync::Seg(std::mem::take(&mut seg)));
                    let text = format!("the range `{}..{}` of loop `{var}`", print_expr(lo), print_expr(hi));
                    let site = self.site(String::new(), vec![text], Vec::new(), vec![*span]);
                    let (lo, hi) = (self.int(lo)?, self.int(hi)?);
                    let inner = self.scope.len();
                    let var = self.bind_var(var, Ty::I32);
                    let body = self.sync_block(body)?;
                    self.scope.truncate(inner);
                    out.push(Sync::Loop { var, lo, hi, body, site });
                }
                Stmt::If { cond, then_body, else_body, span }
                    if any_stmt(then_body, is_barrier) || any_stmt(else_body, is_barrier) =>
                {
                    out.push(Sync::Seg(std::mem::take(&mut seg)));
                    let text = format!("the condition `{}`", print_expr(cond));
                    let site = self.site(String::new(), vec![text], Vec::new(), vec![*span]);
                    let cond = self.boolean(cond)?;
                    let then_body = self.sync_block(then_body)?;
                    let else_body = self.sync_block(else_body)?;
                    out.push(Sync::If { cond, then_body, else_body, site });
                }
                s => seg.push(self.stmt(s)?),
            }
        }
        out.push(Sync::Seg(seg));
        out.retain(|s| !matches!(s, Sync::Seg(v) if v.is_empty()));
        self.scope.truncate(mark);
        Ok(out)
    }

    fn access(&mut self, buf: &Name, index: &[Expr], span: Span) -> C<(Access, DType)> {
        let Binding::Buf(dtype, slot, shape) = self.lookup(&buf.name)?.clone() else {
            return Err(internal(format!("`{}` is not a buffer", buf.name)));
        };
        let strides = crate::types::strides(&shape);
        let idx = index
            .iter()
            .zip(shape.iter().zip(strides))
            .map(|(e, (&size, stride))| Ok(Index { e: self.int(e)?, size: size as i32, stride }))
            .collect::<C<Box<[Index]>>>()?;
        let spans = index.iter().map(|e| if e.span.is_none() { span } else { e.span }).collect();
        let site = self.site(buf.name.clone(), index.iter().map(print_expr).collect(), shape, spans);
        Ok((Access { buf: slot, idx, site }, dtype))
    }

    fn site(&mut self, buffer: String, texts: Vec<String>, sizes: Vec<usize>, spans: Vec<Span>) -> u32 {
        let vars = self
            .scope
            .iter()
            .filter_map(|(n, b)| match b {
                Binding::Var(Ty::I32, s) => Some((n.clone(), *s)),
                _ => None,
            })
            .collect();
        self.sites.push(Site { buffer, texts, sizes, spans, vars });
        (self.sites.len() - 1) as u32
    }

    fn type_of(&self, e: &Expr) -> C<Ty> {
        Ok(match &e.kind {
            ExprKind::Int(_) => Ty::I32,
            ExprKind::Float(_) => Ty::F32,
            ExprKind::Bool(_) => Ty::Bool,
            ExprKind::Var(v) => match self.lookup(v)? {
                Binding::Var(t, _) => *t,
                Binding::Buf(..) => return Err(internal(format!("`{v}` is a buffer"))),
            },
            ExprKind::Load { buf, .. } => match self.lookup(&buf.name)? {
                Binding::Buf(d, _, _) => Ty::of(*d),
                Binding::Var(..) => return Err(internal(format!("`{}` is not a buffer", buf.name))),
            },
            ExprKind::Unary { op: UnOp::Not, .. } => Ty::Bool,
            ExprKind::Unary { arg, .. } => self.type_of(arg)?,
            ExprKind::Binary { op, lhs, .. } => match op {
                BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::Rem => self.type_of(lhs)?,
                _ => Ty::Bool,
            },
            ExprKind::Select { then_val, .. } => self.type_of(then_val)?,
            ExprKind::Cast { to, .. } => *to,
            ExprKind::Call { args, .. } => match args.first() {
                Some(a) => self.type_of(a)?,
                None => return Err(internal("a call without arguments".into())),
            },
        })
    }

    fn mismatch(&self, e: &Expr, want: &str) -> Diagnostic {
        internal(format!("`{}` is not {want} in kernel {}", print_expr(e), self.k.name))
    }

    fn int(&mut self, e: &Expr) -> C<IE> {
        let b = |x: C<IE>| x.map(Box::new);
        Ok(match &e.kind {
            ExprKind::Int(v) => IE::Const(*v),
            ExprKind::Var(v) => match self.lookup(v)? {
                Binding::Var(Ty::I32, s) => IE::Var(*s),
                _ => return Err(self.mismatch(e, "an i32")),
            },
            ExprKind::Load { buf, index } => match self.access(buf, index, e.span)? {
                (acc, DType::I32) => IE::Load(Box::new(acc)),
                (acc, DType::I8) => IE::LoadQ(Box::new(acc)),
                _ => return Err(self.mismatch(e, "an i32")),
            },
            ExprKind::Unary { op: UnOp::Neg, arg } => IE::Neg(b(self.int(arg))?),
            ExprKind::Binary { op, lhs, rhs } => {
                let op = arith(*op).ok_or_else(|| self.mismatch(e, "an i32"))?;
                let site = match op {
                    Arith::Div | Arith::Rem => {
                        self.site(String::new(), vec![print_expr(e)], Vec::new(), vec![e.span])
                    }
                    _ => 0,
                };
                IE::Bin(op, b(self.int(lhs))?, b(self.int(rhs))?, site)
            }
            ExprKind::Select { cond, then_val, else_val } => {
                IE::Select(Box::new(self.boolean(cond)?), b(self.int(then_val))?, b(self.int(else_val))?)
            }
            ExprKind::Cast { to: Ty::I32, arg } => match self.type_of(arg)? {
                Ty::I32 => self.int(arg)?,
                Ty::F32 => IE::FromF(Box::new(self.float(arg)?)),
                Ty::Bool => IE::FromB(Box::new(self.boolean(arg)?)),
            },
            ExprKind::Call { func: Intrinsic::Abs, args } if args.len() == 1 => {
                IE::Abs(b(self.int(&args[0]))?)
            }
            ExprKind::Call { func: f @ (Intrinsic::Min | Intrinsic::Max), args } if args.len() == 2 => {
                let mm = if *f == Intrinsic::Min { MinMax::Min } else { MinMax::Max };
                IE::MinMax(mm, b(self.int(&args[0]))?, b(self.int(&args[1]))?)
            }
            _ => return Err(self.mismatch(e, "an i32")),
        })
    }

    fn float(&mut self, e: &Expr) -> C<FE> {
        let b = |x: C<FE>| x.map(Box::new);
        Ok(match &e.kind {
            ExprKind::Float(x) => FE::Const(*x),
            ExprKind::Var(v) => match self.lookup(v)? {
                Binding::Var(Ty::F32, s) => FE::Var(*s),
                _ => return Err(self.mismatch(e, "an f32")),
            },
            ExprKind::Load { buf, index } => match self.access(buf, index, e.span)? {
                (acc, DType::F32) => FE::Load(Box::new(acc)),
                (acc, DType::F16) => FE::LoadH(Box::new(acc)),
                _ => return Err(self.mismatch(e, "an f32")),
            },
            ExprKind::Unary { op: UnOp::Neg, arg } => FE::Neg(b(self.float(arg))?),
            ExprKind::Binary { op, lhs, rhs } => {
                let op = arith(*op).ok_or_else(|| self.mismatch(e, "an f32"))?;
                FE::Bin(op, b(self.float(lhs))?, b(self.float(rhs))?)
            }
            ExprKind::Select { cond, then_val, else_val } => {
                FE::Select(Box::new(self.boolean(cond)?), b(self.float(then_val))?, b(self.float(else_val))?)
            }
            ExprKind::Cast { to: Ty::F32, arg } => match self.type_of(arg)? {
                Ty::F32 => self.float(arg)?,
                Ty::I32 => FE::FromI(Box::new(self.int(arg)?)),
                Ty::Bool => FE::FromB(Box::new(self.boolean(arg)?)),
            },
            ExprKind::Call { func, args } => match args.as_slice() {
                [a] => FE::Call(*func, b(self.float(a))?),
                [a, c] => FE::Call2(*func, b(self.float(a))?, b(self.float(c))?),
                _ => return Err(self.mismatch(e, "a call of one or two arguments")),
            },
            _ => return Err(self.mismatch(e, "an f32")),
        })
    }

    fn boolean(&mut self, e: &Expr) -> C<BE> {
        let b = |x: C<BE>| x.map(Box::new);
        Ok(match &e.kind {
            ExprKind::Bool(v) => BE::Const(*v),
            ExprKind::Var(v) => match self.lookup(v)? {
                Binding::Var(Ty::Bool, s) => BE::Var(*s),
                _ => return Err(self.mismatch(e, "a bool")),
            },
            ExprKind::Unary { op: UnOp::Not, arg } => BE::Not(b(self.boolean(arg))?),
            ExprKind::Binary { op: BinOp::And, lhs, rhs } => {
                BE::And(b(self.boolean(lhs))?, b(self.boolean(rhs))?)
            }
            ExprKind::Binary { op: BinOp::Or, lhs, rhs } => {
                BE::Or(b(self.boolean(lhs))?, b(self.boolean(rhs))?)
            }
            ExprKind::Binary { op, lhs, rhs } => {
                let cmp = match op {
                    BinOp::Lt => Cmp::Lt,
                    BinOp::Le => Cmp::Le,
                    BinOp::Gt => Cmp::Gt,
                    BinOp::Ge => Cmp::Ge,
                    BinOp::Eq => Cmp::Eq,
                    BinOp::Ne => Cmp::Ne,
                    _ => return Err(self.mismatch(e, "a bool")),
                };
                match self.type_of(lhs)? {
                    Ty::I32 => BE::CmpI(cmp, Box::new(self.int(lhs)?), Box::new(self.int(rhs)?)),
                    Ty::F32 => BE::CmpF(cmp, Box::new(self.float(lhs)?), Box::new(self.float(rhs)?)),
                    Ty::Bool => return Err(self.mismatch(e, "a comparison of numbers")),
                }
            }
            ExprKind::Select { cond, then_val, else_val } => {
                BE::Select(b(self.boolean(cond))?, b(self.boolean(then_val))?, b(self.boolean(else_val))?)
            }
            _ => return Err(self.mismatch(e, "a bool")),
        })
    }
}

fn is_barrier(s: &Stmt) -> bool {
    matches!(s, Stmt::Barrier { .. })
}

fn arith(op: BinOp) -> Option<Arith> {
    Some(match op {
        BinOp::Add => Arith::Add,
        BinOp::Sub => Arith::Sub,
        BinOp::Mul => Arith::Mul,
        BinOp::Div => Arith::Div,
        BinOp::Rem => Arith::Rem,
        _ => return None,
    })
}

// ---------------------------------------------------------------------------------------------
// Execution

fn exec_block(body: &[St], f: &mut Frame) -> R<()> {
    for s in body {
        exec(s, f)?;
    }
    Ok(())
}

fn exec(s: &St, f: &mut Frame) -> R<()> {
    match s {
        St::Loop { var, lo, hi, body } => {
            let (lo, hi) = (int(lo, f)?, int(hi, f)?);
            for v in lo..hi {
                f.iv[*var as usize] = v;
                exec_block(body, f)?;
            }
        }
        St::If { cond, then_body, else_body } => {
            if boolean(cond, f)? {
                exec_block(then_body, f)?;
            } else {
                exec_block(else_body, f)?;
            }
        }
        St::LetI(s, e) => f.iv[*s as usize] = int(e, f)?,
        St::LetF(s, e) => f.fv[*s as usize] = float(e, f)?,
        St::LetB(s, e) => f.bv[*s as usize] = boolean(e, f)?,
        St::StoreI(a, e) => {
            let off = offset(a, f)?;
            let v = int(e, f)?;
            f.ib[a.buf as usize][off] = v;
        }
        St::StoreQ(a, e) => {
            let off = offset(a, f)?;
            let v = int(e, f)?;
            f.qb[a.buf as usize][off] = v as i8;
        }
        St::StoreH(a, e) => {
            let off = offset(a, f)?;
            let v = float(e, f)?;
            f.hb[a.buf as usize][off] = f16::from_f32(v);
        }
        St::StoreF(a, e) => {
            let off = offset(a, f)?;
            let v = float(e, f)?;
            f.fb[a.buf as usize][off] = v;
        }
        St::AllocI(s, n) => {
            let b = &mut f.ib[*s as usize];
            b.clear();
            b.resize(*n, POISON_I32);
        }
        St::AllocQ(s, n) => {
            let b = &mut f.qb[*s as usize];
            b.clear();
            b.resize(*n, POISON_I8);
        }
        St::AllocH(s, n) => {
            let b = &mut f.hb[*s as usize];
            b.clear();
            b.resize(*n, POISON_F16_BITS);
        }
        St::AllocF(s, n) => {
            let b = &mut f.fb[*s as usize];
            b.clear();
            b.resize(*n, f32::from_bits(POISON_F32_BITS));
        }
        St::Launch(l) => exec_launch(l, f)?,
    }
    Ok(())
}

impl Frame {
    /// A frame with the same slots, all empty: one thread's own storage.
    fn empty_like(&self) -> Frame {
        Frame {
            iv: vec![0; self.iv.len()],
            fv: vec![0.0; self.fv.len()],
            bv: vec![false; self.bv.len()],
            fb: vec![Vec::new(); self.fb.len()],
            ib: vec![Vec::new(); self.ib.len()],
            qb: vec![Vec::new(); self.qb.len()],
            hb: vec![Vec::new(); self.hb.len()],
        }
    }
}

/// Runs a launch: blocks one after another in linear order (x fastest), and inside a block, each
/// barrier-free segment of the body for every thread in turn (linear order, x fastest), so a
/// thread runs from one barrier to the next before the next thread starts. `f` holds the
/// parameters and the block's shared allocations; each thread has its own frame for its
/// variables and local allocations.
fn exec_launch(l: &CLaunch, f: &mut Frame) -> R<()> {
    let nthreads: usize = l.block.iter().map(|&(_, n)| n as usize).product();
    let nblocks: usize = l.grid.iter().map(|&(_, n)| n as usize).product();
    let mut threads: Vec<Frame> = (0..nthreads).map(|_| f.empty_like()).collect();
    for (t, fr) in threads.iter_mut().enumerate() {
        let mut rest = t;
        for &(slot, n) in &l.block {
            fr.iv[slot as usize] = (rest % n as usize) as i32;
            rest /= n as usize;
        }
    }
    for b in 0..nblocks {
        let mut rest = b;
        for &(slot, n) in &l.grid {
            let v = (rest % n as usize) as i32;
            rest /= n as usize;
            threads.iter_mut().for_each(|fr| fr.iv[slot as usize] = v);
        }
        for &(dtype, slot, n) in &l.shared {
            match dtype {
                DType::F32 => {
                    let b = &mut f.fb[slot as usize];
                    b.clear();
                    b.resize(n, f32::from_bits(POISON_F32_BITS));
                }
                DType::I32 => {
                    let b = &mut f.ib[slot as usize];
                    b.clear();
                    b.resize(n, POISON_I32);
                }
                DType::I8 => {
                    let b = &mut f.qb[slot as usize];
                    b.clear();
                    b.resize(n, POISON_I8);
                }
                DType::F16 => {
                    let b = &mut f.hb[slot as usize];
                    b.clear();
                    b.resize(n, POISON_F16_BITS);
                }
            }
        }
        run_sync(&l.body, l, f, &mut threads)?;
    }
    Ok(())
}

fn run_sync(body: &[Sync], l: &CLaunch, f: &mut Frame, threads: &mut [Frame]) -> R<()> {
    for s in body {
        match s {
            Sync::Seg(stmts) => {
                for fr in threads.iter_mut() {
                    on_thread(l, f, fr, |fr| exec_block(stmts, fr))?;
                }
            }
            Sync::Loop { var, lo, hi, body, site } => {
                let (lo, hi) = uniform(l, f, threads, *site, |fr| Ok((int(lo, fr)?, int(hi, fr)?)))?;
                for v in lo..hi {
                    threads.iter_mut().for_each(|fr| fr.iv[*var as usize] = v);
                    run_sync(body, l, f, threads)?;
                }
            }
            Sync::If { cond, then_body, else_body, site } => {
                let c = uniform(l, f, threads, *site, |fr| boolean(cond, fr))?;
                run_sync(if c { then_body } else { else_body }, l, f, threads)?;
            }
        }
    }
    Ok(())
}

/// Runs `run` on one thread's frame with the block's common buffers moved in (and back out). On
/// an error, the thread's variables are copied to `master`, which the report reads.
fn on_thread<T>(
    l: &CLaunch,
    master: &mut Frame,
    fr: &mut Frame,
    run: impl FnOnce(&mut Frame) -> R<T>,
) -> R<T> {
    swap_common(l, master, fr);
    let r = run(fr);
    swap_common(l, master, fr);
    if r.is_err() {
        master.iv.clone_from(&fr.iv);
    }
    r
}

fn swap_common(l: &CLaunch, a: &mut Frame, b: &mut Frame) {
    for &(dtype, slot) in &l.common {
        let s = slot as usize;
        match dtype {
            DType::F32 => std::mem::swap(&mut a.fb[s], &mut b.fb[s]),
            DType::I32 => std::mem::swap(&mut a.ib[s], &mut b.ib[s]),
            DType::I8 => std::mem::swap(&mut a.qb[s], &mut b.qb[s]),
            DType::F16 => std::mem::swap(&mut a.hb[s], &mut b.hb[s]),
        }
    }
}

/// The value of control flow around a barrier, which must be the same in every thread of the
/// block: evaluated in each, and a divergence trap at `site` when two differ.
fn uniform<T: PartialEq>(
    l: &CLaunch,
    f: &mut Frame,
    threads: &mut [Frame],
    site: u32,
    eval: impl Fn(&Frame) -> R<T>,
) -> R<T> {
    let mut first: Option<T> = None;
    for fr in threads.iter_mut() {
        let v = on_thread(l, f, fr, |fr| eval(fr))?;
        match &first {
            None => first = Some(v),
            Some(v0) if *v0 != v => {
                f.iv.clone_from(&fr.iv);
                return Err(Trap { site, dim: DIVERGE_TRAP, value: 0 });
            }
            Some(_) => {}
        }
    }
    first.ok_or(Trap { site, dim: DIVERGE_TRAP, value: 0 })
}

/// The flat element offset of an access, every index checked against its dimension.
fn offset(a: &Access, f: &Frame) -> R<usize> {
    let mut off = 0;
    for (d, ix) in a.idx.iter().enumerate() {
        let v = int(&ix.e, f)?;
        if v < 0 || v >= ix.size {
            return Err(Trap { site: a.site, dim: d as u32, value: v });
        }
        off += v as usize * ix.stride;
    }
    Ok(off)
}

fn int(e: &IE, f: &Frame) -> R<i32> {
    Ok(match e {
        IE::Const(v) => *v,
        IE::Var(s) => f.iv[*s as usize],
        IE::Load(a) => f.ib[a.buf as usize][offset(a, f)?],
        IE::LoadQ(a) => i32::from(f.qb[a.buf as usize][offset(a, f)?]),
        IE::Neg(a) => int(a, f)?.wrapping_neg(),
        IE::Bin(op, a, b, site) => {
            let (x, y) = (int(a, f)?, int(b, f)?);
            match op {
                Arith::Add => x.wrapping_add(y),
                Arith::Sub => x.wrapping_sub(y),
                Arith::Mul => x.wrapping_mul(y),
                Arith::Div | Arith::Rem if y == 0 => {
                    return Err(Trap { site: *site, dim: DIV_TRAP, value: 0 })
                }
                Arith::Div => x.wrapping_div(y),
                Arith::Rem => x.wrapping_rem(y),
            }
        }
        IE::Select(c, a, b) => {
            let (c, a, b) = (boolean(c, f)?, int(a, f)?, int(b, f)?);
            if c {
                a
            } else {
                b
            }
        }
        // `as` truncates toward zero, saturates, and maps NaN to 0.
        IE::FromF(a) => float(a, f)? as i32,
        IE::FromB(a) => i32::from(boolean(a, f)?),
        IE::Abs(a) => int(a, f)?.wrapping_abs(),
        IE::MinMax(mm, a, b) => {
            let (x, y) = (int(a, f)?, int(b, f)?);
            match mm {
                MinMax::Min => x.min(y),
                MinMax::Max => x.max(y),
            }
        }
    })
}

fn float(e: &FE, f: &Frame) -> R<f32> {
    Ok(match e {
        FE::Const(v) => *v,
        FE::Var(s) => f.fv[*s as usize],
        FE::Load(a) => f.fb[a.buf as usize][offset(a, f)?],
        FE::LoadH(a) => f16::to_f32(f.hb[a.buf as usize][offset(a, f)?]),
        FE::Neg(a) => -float(a, f)?,
        FE::Bin(op, a, b) => {
            let (x, y) = (float(a, f)?, float(b, f)?);
            match op {
                Arith::Add => x + y,
                Arith::Sub => x - y,
                Arith::Mul => x * y,
                Arith::Div => x / y,
                Arith::Rem => x % y,
            }
        }
        FE::Select(c, a, b) => {
            let (c, a, b) = (boolean(c, f)?, float(a, f)?, float(b, f)?);
            if c {
                a
            } else {
                b
            }
        }
        FE::FromI(a) => int(a, f)? as f32,
        FE::FromB(a) => f32::from(u8::from(boolean(a, f)?)),
        FE::Call(func, a) => {
            let x = float(a, f)?;
            match func {
                Intrinsic::Exp => x.exp(),
                Intrinsic::ExpFtz => flush_below_2_pow_125(x.exp()),
                Intrinsic::Log => x.ln(),
                Intrinsic::Sqrt => x.sqrt(),
                Intrinsic::Rsqrt => 1.0 / x.sqrt(),
                Intrinsic::Tanh => x.tanh(),
                Intrinsic::Erf => libm::erff(x),
                Intrinsic::Abs => x.abs(),
                Intrinsic::Floor => x.floor(),
                Intrinsic::Ceil => x.ceil(),
                Intrinsic::Round => x.round_ties_even(),
                Intrinsic::Sin => x.sin(),
                Intrinsic::Cos => x.cos(),
                Intrinsic::Pow | Intrinsic::Min | Intrinsic::Max => f32::NAN,
            }
        }
        FE::Call2(func, a, b) => {
            let (x, y) = (float(a, f)?, float(b, f)?);
            match func {
                Intrinsic::Pow => x.powf(y),
                Intrinsic::Min => min_f32(x, y),
                Intrinsic::Max => max_f32(x, y),
                _ => f32::NAN,
            }
        }
    })
}

/// `exp_ftz`'s result from `exp`'s: `+0` below 2^-125, where compiled code may flush.
fn flush_below_2_pow_125(y: f32) -> f32 {
    if y < 2.0 * f32::MIN_POSITIVE {
        0.0
    } else {
        y
    }
}

fn boolean(e: &BE, f: &Frame) -> R<bool> {
    Ok(match e {
        BE::Const(v) => *v,
        BE::Var(s) => f.bv[*s as usize],
        BE::CmpI(op, a, b) => cmp(*op, int(a, f)?, int(b, f)?),
        BE::CmpF(op, a, b) => cmp(*op, float(a, f)?, float(b, f)?),
        BE::And(a, b) => {
            let (x, y) = (boolean(a, f)?, boolean(b, f)?);
            x && y
        }
        BE::Or(a, b) => {
            let (x, y) = (boolean(a, f)?, boolean(b, f)?);
            x || y
        }
        BE::Not(a) => !boolean(a, f)?,
        BE::Select(c, a, b) => {
            let (c, a, b) = (boolean(c, f)?, boolean(a, f)?, boolean(b, f)?);
            if c {
                a
            } else {
                b
            }
        }
    })
}

/// Comparisons; on f32 every comparison with NaN is false except `!=`.
fn cmp<T: PartialOrd>(op: Cmp, x: T, y: T) -> bool {
    match op {
        Cmp::Lt => x < y,
        Cmp::Le => x <= y,
        Cmp::Gt => x > y,
        Cmp::Ge => x >= y,
        Cmp::Eq => x == y,
        Cmp::Ne => x != y,
    }
}

#[cfg(test)]
mod tests {
    use super::run;
    use crate::diag::SourceFile;
    use crate::l1::{parse::parse, print::print, verify::verify};
    use crate::tensor::{BufData, Buffer};
    use crate::types::{DType, TensorType};
    use std::collections::HashMap;

    #[test]
    fn sin_and_cos_parse_print_verify_and_run() {
        let text = "module trig {
  input x: f32[3]
  output y: f32[3]

  kernel k(x: f32[3] in, y: f32[3] out) {
    for i in 0..3 {
      y[i] = sin(x[i]) * cos(x[i])
    }
  }

  run k(x, y)
}
";
        let m = parse(&SourceFile::new("t.ekl1", text)).unwrap();
        assert_eq!(print(&m), text);
        assert!(verify(&m, None).is_empty());
        let x = [0.0f32, 0.5, -2.0];
        let inputs = HashMap::from([(
            "x".to_string(),
            Buffer { ty: TensorType::new(DType::F32, [3]), data: BufData::F32(x.to_vec()) },
        )]);
        let out = run(&m, &inputs).unwrap();
        let BufData::F32(y) = &out["y"].data else { panic!("f32 output") };
        let want: Vec<f32> = x.iter().map(|v| v.sin() * v.cos()).collect();
        assert_eq!(y, &want);
        // Both take f32 only.
        let bad = text.replace("sin(x[i])", "sin(i)");
        let ds = verify(&parse(&SourceFile::new("t.ekl1", bad)).unwrap(), None);
        assert!(ds[0].message.starts_with("`sin` takes f32, found i32: convert with f32(...)"), "{}", ds[0]);
    }
}
