//! The L1 verifier: names, scopes, types, index bounds, the plan, and allocation legality.
//!
//! Checks, in order: first, alone, that no kernel body nests deeper than
//! [`MAX_NESTING`] levels (measured without recursion: the other checks recurse over the code, and
//! so do the interpreter and the emitters after them, so a module built in code deeper than that
//! is refused here and nothing else runs on it); module-level names (buffers and kernels unique, valid identifiers, buffers
//! addressable with i32 offsets); each kernel (parameters unique; scoping: only parameters and the
//! kernel's own allocations are visible, use before definition and shadowing are errors; typing
//! exactly as `docs/ir-l1.md` says, with no implicit conversion; stores: value type equals the
//! buffer's dtype, no writes to `in` parameters; one i32 index per dimension; no `parallel` inside
//! `parallel` or `vectorize`; integer division by a constant 0; index bounds by interval
//! analysis); GPU kernels (a kernel that launches is exactly one `launch`, no nested launch,
//! no `parallel` inside one, `shared` allocations directly in the launch body, barriers only in
//! a launch and never under thread-divergent control flow, decided by a uniformity analysis over
//! expressions); the plan (kernels exist, arity and argument types, inputs never written, no
//! aliasing of a written buffer, temps written before read, every output written); and, with a
//! target profile, stack allocations, GPU launch limits (`gpu::check_kernel`) and the memory
//! the runtime reserves against its limits: for a CPU module the planned footprint (`arena`:
//! inputs, outputs, the temp arena and the largest kernel stack), for a GPU module, whose
//! runtime allocates every buffer apart, the unplanned one.
//!
//! Interval analysis (the arithmetic is `analysis::interval`): each i32 expression gets an interval `[lo, hi]` when one is known: literals,
//! loop variables (`[lo.min, hi.max - 1]`), `let`s, `+ - *`, `/` and `%` (by divisors whose sign
//! is known), `min`, `max`, `abs`, `select` (the union of both arms), `i32(...)` of an i32 or a
//! bool. Inside `if c`, conditions `e CMP e'` (combined with `&&`; `||` and `!` in the `else`
//! branch) narrow `e` by the interval of `e'`, where `e` is a variable or any load-free
//! expression (matched by its text). Loads, float conversions and results that could wrap are
//! unknown, and unknown indices are left to the interpreter. A known index interval outside
//! `[0, size-1]` is an error. Intervals over-approximate: an expression that uses a variable twice
//! (`i - i`) gets a wider interval than its true range.
//!
//! What this verifier must keep true: it never panics; it reports every finding (one error does
//! not hide the others, but an ill-typed subexpression does not cascade); each message names the
//! kernel, buffer or variable it is about, so it reads well without a source location (generated
//! modules carry `Span::NONE`), and carries the span when there is one.

use super::analysis::interval::{Interval as Iv, I32_MAX, I32_MIN};
use super::analysis::uniform;
use super::arena;
use super::ast::*;
use super::gpu::{check_kernel, GpuLimits};
use super::memory::{kernel_stack, peak_memory, type_bytes};
use super::nesting::{first_too_deep, too_deep, MAX_NESTING};
use super::parse::{is_valid_name, KEYWORDS};
use super::print::print_expr;
use super::visit::{for_each_stmt, has_load};
use crate::diag::{did_you_mean, Diagnostic, Span};
use crate::target::TargetProfile;
use crate::types::TensorType;
use std::collections::{HashMap, HashSet};

/// Every finding: errors, then warnings, each in the order of the module text.
pub fn verify(m: &Module, target: Option<&TargetProfile>) -> Vec<Diagnostic> {
    findings(m, target, Budget::Checked)
}

/// Every finding of [`verify`] except the memory the module reserves against the target's
/// limits (its footprint and, on a GPU, the size of one buffer): those follow from the graph's
/// tensor sizes, not from how it was lowered, so a lowering checks its own output with this
/// one and leaves the budget to the verify stage, which reports it as the graph's problem.
pub fn verify_code(m: &Module, target: Option<&TargetProfile>) -> Vec<Diagnostic> {
    findings(m, target, Budget::Skipped)
}

/// Whether [`findings`] holds the module's memory to the target's limits.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Budget {
    Checked,
    Skipped,
}

fn findings(m: &Module, target: Option<&TargetProfile>, budget: Budget) -> Vec<Diagnostic> {
    let deep: Vec<Diagnostic> = m
        .kernels
        .iter()
        .filter_map(|k| first_too_deep(&k.body, MAX_NESTING).map(|(s, levels)| too_deep(&k.name, s, levels)))
        .collect();
    if !deep.is_empty() {
        return deep;
    }
    let mut diags = Vec::new();
    module_names(m, &mut diags);
    let mut seen = HashSet::new();
    for k in &m.kernels {
        // A duplicate kernel was reported; its body is checked once, under its first definition.
        if seen.insert(k.name.as_str()) {
            KernelChecker::new(m, k, &mut diags).check();
        }
    }
    plan(m, &mut diags);
    if let Some(t) = target {
        allocations(m, t, &mut diags);
        if budget == Budget::Checked {
            memory_budget(m, t, &mut diags);
        }
    }
    diags.sort_by_key(|d| !d.is_error());
    diags
}

/// Whether a module verifies with no errors (warnings allowed).
pub fn has_errors(diags: &[Diagnostic]) -> bool {
    diags.iter().any(Diagnostic::is_error)
}

fn module_names(m: &Module, diags: &mut Vec<Diagnostic>) {
    let mut bufs: HashMap<&str, &BufferDecl> = HashMap::new();
    for b in &m.buffers {
        if !is_valid_name(&b.name) {
            diags.push(bad_name(&b.name, "buffer", b.span));
        }
        if bufs.insert(&b.name, b).is_some() {
            diags.push(Diagnostic::error(format!("buffer `{}` is declared twice", b.name)).at(b.span));
        }
        check_type_size(&b.ty, &format!("buffer `{}`", b.name), b.span, diags);
    }
    let mut kernels = HashSet::new();
    for k in &m.kernels {
        if !is_valid_name(&k.name) {
            diags.push(bad_name(&k.name, "kernel", k.span));
        }
        if !kernels.insert(&k.name) {
            diags.push(Diagnostic::error(format!("kernel `{}` is defined twice", k.name)).at(k.span));
        }
    }
}

fn bad_name(name: &str, what: &str, span: Span) -> Diagnostic {
    let why = if KEYWORDS.contains(&name) { "is a keyword" } else { "is not an identifier" };
    Diagnostic::error(format!("{what} name `{name}` {why}"))
        .at(span)
        .with_expected("a name of letters, digits and `_`, not starting with a digit, and not a keyword")
}

/// Buffers must be addressable with i32 element offsets (indices are i32).
fn check_type_size(ty: &TensorType, what: &str, span: Span, diags: &mut Vec<Diagnostic>) {
    let numel = ty.shape.iter().try_fold(1u64, |a, &d| a.checked_mul(d as u64));
    if numel.is_none_or(|n| n > i32::MAX as u64) {
        diags.push(
            Diagnostic::error(format!("{what} of type {ty} has more than {} elements", i32::MAX))
                .at(span)
                .with_expected("at most 2^31-1 elements, so that element offsets fit in i32"),
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Kernels

#[derive(Debug, Clone)]
enum Entry {
    /// A loop variable or a `let`: its type (`None` for a `let` of an ill-typed value, whose uses
    /// are not reported again), its interval, and for a load-free `let` the text of its value (so
    /// that a narrowing of either is seen through the other).
    /// `div` says why the value may differ between the threads of a GPU block (`None`: the same
    /// for all of them).
    Var { ty: Option<Ty>, iv: Option<Iv>, def: Option<String>, what: &'static str, div: Option<String> },
    /// A parameter or an allocation.
    Buf { ty: TensorType, access: Option<Access> },
}

/// What a condition tells about a variable or an expression inside a branch.
#[derive(Debug, Clone)]
struct Fact {
    /// A variable name, or the text of a load-free expression.
    key: String,
    iv: Iv,
}

struct KernelChecker<'a> {
    m: &'a Module,
    k: &'a Kernel,
    diags: &'a mut Vec<Diagnostic>,
    scopes: Vec<Vec<(String, Entry)>>,
    facts: Vec<Fact>,
    /// Enclosing loops, outermost first: `(variable, kind)`.
    loops: Vec<(String, LoopKind)>,
    /// False inside code the intervals prove never runs (an empty loop, a branch whose
    /// condition cannot hold); bounds are not reported there.
    reachable: bool,
    /// Inside a `launch`: the number of enclosing loops and `if`s at the launch body's level.
    launch: Option<usize>,
    /// Enclosing loops and `if`s (inside or outside a launch).
    nesting: usize,
    /// Why the enclosing control flow may differ between the threads of a block, innermost
    /// last (a barrier there would deadlock or be undefined).
    divergent: Vec<String>,
}

/// The type of a checked expression (`None` after an error) and its interval when known.
type Typed = (Option<Ty>, Option<Iv>);

impl<'a> KernelChecker<'a> {
    fn new(m: &'a Module, k: &'a Kernel, diags: &'a mut Vec<Diagnostic>) -> Self {
        KernelChecker {
            m,
            k,
            diags,
            scopes: vec![Vec::new()],
            facts: Vec::new(),
            loops: Vec::new(),
            reachable: true,
            launch: None,
            nesting: 0,
            divergent: Vec::new(),
        }
    }

    fn err(&mut self, span: Span, msg: String) -> &mut Diagnostic {
        self.diags.push(Diagnostic::error(msg).at(span));
        self.diags.last_mut().expect("just pushed")
    }

    /// `(`expr` in kernel k)`: the context that makes a message self-contained.
    fn ctx(&self, e: &Expr) -> String {
        format!("(`{}` in kernel {})", print_expr(e), self.k.name)
    }

    fn check(mut self) {
        let k = self.k;
        if k.params.is_empty() {
            self.diags.push(
                Diagnostic::warning(format!("kernel {} has no parameters: it can have no effect", k.name))
                    .at(k.span),
            );
        }
        for p in &k.params {
            if !is_valid_name(&p.name) {
                self.diags.push(bad_name(&p.name, &format!("parameter of kernel {}", k.name), p.span));
            }
            if self.lookup(&p.name).is_some() {
                self.err(p.span, format!("parameter `{}` appears twice in kernel {}", p.name, k.name));
                continue;
            }
            check_type_size(
                &p.ty,
                &format!("parameter `{}` of kernel {}", p.name, k.name),
                p.span,
                self.diags,
            );
            self.bind(&p.name, Entry::Buf { ty: p.ty.clone(), access: Some(p.access) });
        }
        self.block(&k.body);
    }

    fn lookup(&self, name: &str) -> Option<&Entry> {
        self.scopes.iter().rev().flat_map(|s| s.iter().rev()).find(|(n, _)| n == name).map(|(_, e)| e)
    }

    fn bind(&mut self, name: &str, e: Entry) {
        self.scopes.last_mut().expect("a scope is open").push((name.to_string(), e));
    }

    /// Declares a name in the current block, reporting redefinition and shadowing.
    fn declare(&mut self, name: &str, span: Span, what: &str, e: Entry) {
        if !is_valid_name(name) {
            let d = bad_name(name, &format!("{what} in kernel {}", self.k.name), span);
            self.diags.push(d);
        }
        let here = self.scopes.last().is_some_and(|s| s.iter().any(|(n, _)| n == name));
        let kernel = self.k.name.clone();
        if here {
            self.err(span, format!("`{name}` is defined twice in the same block of kernel {kernel}")).hint =
                Some(format!("names are immutable: give the second {what} another name"));
        } else if self.lookup(name).is_some() {
            self.err(span, format!("{what} `{name}` shadows an outer `{name}` in kernel {kernel}")).hint =
                Some("L1 forbids shadowing: rename the inner one".into());
        }
        self.bind(name, e);
    }

    fn block(&mut self, body: &[Stmt]) {
        self.scopes.push(Vec::new());
        for s in body {
            self.stmt(s);
        }
        self.scopes.pop();
    }

    fn stmt(&mut self, s: &Stmt) {
        match s {
            Stmt::Loop { var, kind, lo, hi, body, span } => self.loop_stmt(var, *kind, lo, hi, body, *span),
            Stmt::If { cond, then_body, else_body, span } => {
                let (ty, _) = self.expr(cond);
                if let Some(t) = ty.filter(|&t| t != Ty::Bool) {
                    let msg =
                        format!("the condition of `if` must be bool, found {} {}", t.name(), self.ctx(cond));
                    self.err(cond.span.to(*span), msg).hint = Some("compare it, e.g. `x != 0`".into());
                }
                let div = self.launch.and_then(|_| self.divergence(cond));
                let pushed = div.is_some();
                if let Some(why) = div {
                    self.divergent.push(format!("the condition `{}` depends on {why}", print_expr(cond)));
                }
                self.nesting += 1;
                self.branch(cond, true, then_body);
                self.branch(cond, false, else_body);
                self.nesting -= 1;
                if pushed {
                    self.divergent.pop();
                }
            }
            Stmt::Let { name, value, span } => {
                let (ty, iv) = self.expr(value);
                let def = (!has_load(value)).then(|| print_expr(value));
                let div = self.divergence(value);
                let entry = Entry::Var { ty, iv, def, what: "let", div };
                self.declare(name, *span, "`let`", entry);
            }
            Stmt::Store { buf, index, value, span } => self.store(buf, index, value, *span),
            Stmt::Alloc { name, ty, scope, span } => {
                check_type_size(ty, &format!("alloc `{name}` in kernel {}", self.k.name), *span, self.diags);
                if *scope == Scope::Shared {
                    self.shared_alloc(name, *span);
                }
                self.declare(name, *span, "alloc", Entry::Buf { ty: ty.clone(), access: None });
            }
            Stmt::Launch { grid, block, body, span, .. } => self.launch_stmt(grid, block, body, *span),
            Stmt::Barrier { span } => self.barrier(*span),
        }
    }

    /// A `shared` alloc: only directly inside a launch (one copy per block, allocated when the
    /// block starts).
    fn shared_alloc(&mut self, name: &str, span: Span) {
        let kernel = self.k.name.clone();
        match self.launch {
            None => {
                self.err(span, format!("alloc `{name}` is `shared` outside a `launch` in kernel {kernel}")).hint =
                    Some("shared memory belongs to a GPU block: allocate it directly inside `launch`, or make it `local`".into());
            }
            Some(level) if level != self.nesting => {
                let msg = format!(
                    "shared alloc `{name}` is inside a loop or `if` of the launch in kernel {kernel}: shared allocs go \
                     directly in the launch body"
                );
                self.err(span, msg).hint =
                    Some("move it to the top of the launch body: it is allocated once per block".into());
            }
            Some(_) => {}
        }
    }

    fn launch_stmt(&mut self, grid: &[LaunchDim], block: &[LaunchDim], body: &[Stmt], span: Span) {
        let kernel = self.k.name.clone();
        if self.launch.is_some() {
            self.err(span, format!("nested `launch` in kernel {kernel}")).hint =
                Some("a kernel launches once: put the work in the outer launch's body".into());
            return;
        }
        if let Some((v, _)) = self.loops.iter().find(|(_, k)| *k == LoopKind::Parallel) {
            let msg = format!("`launch` inside parallel loop `{v}` in kernel {kernel}");
            self.err(span, msg).hint =
                Some("a GPU kernel is one `launch`: use grid dimensions instead of a parallel loop".into());
        } else if self.nesting > 0 || self.k.body.len() != 1 {
            let msg = format!("the `launch` of kernel {kernel} is not its whole body");
            self.err(span, msg).hint = Some(
                "a GPU kernel's body is exactly one `launch`: move the other statements inside it, or into another kernel"
                    .into(),
            );
        }
        self.scopes.push(Vec::new());
        for (dims, thread) in [(grid, false), (block, true)] {
            for d in dims {
                let div = thread.then(|| format!("thread variable `{}`", d.var));
                let iv = Some(Iv::new(0, i64::from(d.extent) - 1));
                let entry = Entry::Var { ty: Some(Ty::I32), iv, def: None, what: "launch variable", div };
                self.declare(&d.var, d.span, "launch variable", entry);
            }
        }
        self.launch = Some(self.nesting);
        self.block(body);
        self.launch = None;
        self.scopes.pop();
    }

    fn barrier(&mut self, span: Span) {
        let kernel = self.k.name.clone();
        if self.launch.is_none() {
            self.err(span, format!("`barrier` outside a `launch` in kernel {kernel}")).hint =
                Some("barriers synchronise the threads of a GPU block: they belong inside `launch`".into());
        } else if let Some(why) = self.divergent.last().cloned() {
            let msg = format!("`barrier` under thread-divergent control flow in kernel {kernel}: {why}");
            self.err(span, msg).hint = Some(
                "every thread of a block must reach the same barriers: move the barrier out of the branch or loop, \
                 and guard only the work"
                    .into(),
            );
        }
    }

    /// Why the value of `e` may differ between the threads of a block, or `None` when it is the
    /// same for all (constants, grid variables, uniform `let`s and loops, loads of `in`
    /// parameters at uniform indices: those are never written while a kernel runs).
    fn divergence(&self, e: &Expr) -> Option<String> {
        let var = |v: &str| match self.lookup(v) {
            Some(Entry::Var { div: Some(why), what, .. }) => {
                Some(if why.starts_with("thread variable") && *what == "launch variable" {
                    why.clone()
                } else {
                    format!("`{v}`, which depends on {why}")
                })
            }
            _ => None,
        };
        let read_only = |b: &str| matches!(self.lookup(b), Some(Entry::Buf { access: Some(Access::In), .. }));
        uniform::divergence(e, &var, &read_only)
    }

    fn loop_stmt(&mut self, var: &str, kind: LoopKind, lo: &Expr, hi: &Expr, body: &[Stmt], span: Span) {
        let (lt, liv) = self.expr(lo);
        let (ht, hiv) = self.expr(hi);
        for (t, e) in [(lt, lo), (ht, hi)] {
            if let Some(t) = t.filter(|&t| t != Ty::I32) {
                let msg =
                    format!("the bounds of loop `{var}` must be i32, found {} {}", t.name(), self.ctx(e));
                self.err(e.span, msg).hint = Some("convert with i32(...)".into());
            }
        }
        if kind == LoopKind::Parallel {
            let outer =
                self.loops.iter().rev().find(|(_, k)| matches!(k, LoopKind::Parallel | LoopKind::Vectorize));
            if let Some((outer_var, outer_kind)) = outer.cloned() {
                let (okw, hint) = if outer_kind == LoopKind::Parallel {
                    ("parallel", "only one level of loops runs on threads: make the inner loop `for`")
                } else {
                    ("vectorize", "a vectorized loop runs on one thread: move the parallel loop outside it")
                };
                let msg = format!(
                    "parallel loop `{var}` is nested inside {okw} loop `{outer_var}` in kernel {}",
                    self.k.name
                );
                self.err(span, msg).hint = Some(hint.into());
            }
        }
        if kind == LoopKind::Parallel && self.launch.is_some() {
            let msg = format!("parallel loop `{var}` inside the `launch` of kernel {}", self.k.name);
            self.err(span, msg).hint = Some(
                "GPU threads are the launch's block dimensions: make it `for`, or add a block dimension"
                    .into(),
            );
        }
        let iv = match (liv, hiv) {
            (Some(l), Some(h)) => Some(Iv::new(l.lo, h.hi - 1)),
            _ => None,
        };
        let div =
            if self.launch.is_some() { self.divergence(lo).or_else(|| self.divergence(hi)) } else { None };
        let was_reachable = self.reachable;
        if iv.is_some_and(Iv::is_empty) {
            self.reachable = false;
        }
        self.scopes.push(Vec::new());
        let entry = Entry::Var {
            ty: Some(Ty::I32),
            iv: iv.filter(|i| !i.is_empty()),
            def: None,
            what: "loop variable",
            div: div.clone(),
        };
        self.declare(var, span, "loop variable", entry);
        if let Some(why) = &div {
            self.divergent.push(format!("the bounds of loop `{var}` depend on {why}"));
        }
        self.loops.push((var.to_string(), kind));
        self.nesting += 1;
        self.block(body);
        self.nesting -= 1;
        self.loops.pop();
        if div.is_some() {
            self.divergent.pop();
        }
        self.scopes.pop();
        self.reachable = was_reachable;
    }

    /// Checks one branch of an `if` with what its condition (or its negation) tells.
    fn branch(&mut self, cond: &Expr, holds: bool, body: &[Stmt]) {
        let depth = self.facts.len();
        let was_reachable = self.reachable;
        let mut facts = Vec::new();
        self.narrow(cond, holds, &mut facts);
        for f in facts {
            let current = self.key_interval(&f.key).unwrap_or(Iv::FULL);
            let iv = current.meet(f.iv);
            if iv.is_empty() {
                self.reachable = false;
            }
            // A narrowed `let` narrows its defining expression too, and the other way round.
            let alias = match self.lookup(&f.key) {
                Some(Entry::Var { def: Some(d), .. }) => Some(d.clone()),
                _ => None,
            };
            if let Some(d) = alias {
                self.facts.push(Fact { key: d, iv });
            }
            self.facts.push(Fact { key: f.key, iv });
        }
        self.block(body);
        self.facts.truncate(depth);
        self.reachable = was_reachable;
    }

    /// The facts `cond == holds` implies.
    fn narrow(&mut self, cond: &Expr, holds: bool, out: &mut Vec<Fact>) {
        match &cond.kind {
            ExprKind::Binary { op: BinOp::And, lhs, rhs } if holds => {
                self.narrow(lhs, true, out);
                self.narrow(rhs, true, out);
            }
            ExprKind::Binary { op: BinOp::Or, lhs, rhs } if !holds => {
                self.narrow(lhs, false, out);
                self.narrow(rhs, false, out);
            }
            ExprKind::Unary { op: UnOp::Not, arg } => self.narrow(arg, !holds, out),
            ExprKind::Binary { op, lhs, rhs } if is_cmp(*op) => {
                let op = if holds { *op } else { negate(*op) };
                // `lhs op rhs` narrows lhs by rhs's interval, and rhs by lhs's (flipped).
                for (target, other, op) in [(lhs, rhs, op), (rhs, lhs, flip(op))] {
                    let Some(key) = narrowable(target) else { continue };
                    let Some(o) = self.interval_quiet(other) else { continue };
                    let iv = match op {
                        BinOp::Lt => Iv::new(I32_MIN, o.hi - 1),
                        BinOp::Le => Iv::new(I32_MIN, o.hi),
                        BinOp::Gt => Iv::new(o.lo + 1, I32_MAX),
                        BinOp::Ge => Iv::new(o.lo, I32_MAX),
                        BinOp::Eq => o,
                        _ => continue,
                    };
                    out.push(Fact { key, iv });
                }
            }
            _ => {}
        }
    }

    /// The interval of a variable or expression text from its binding and the facts in force
    /// (for a `let`, facts about the text of its value count too).
    fn key_interval(&self, key: &str) -> Option<Iv> {
        let (mut iv, def) = match self.lookup(key) {
            Some(Entry::Var { ty: Some(Ty::I32), iv, def, .. }) => (*iv, def.as_deref()),
            _ => (None, None),
        };
        for f in &self.facts {
            if f.key == key || def == Some(f.key.as_str()) {
                iv = Some(iv.map_or(f.iv, |i| i.meet(f.iv)));
            }
        }
        iv
    }

    /// The interval of an expression, without reporting anything (for conditions, which were
    /// checked already).
    fn interval_quiet(&mut self, e: &Expr) -> Option<Iv> {
        let n = self.diags.len();
        let (ty, iv) = self.expr(e);
        self.diags.truncate(n);
        iv.filter(|_| ty == Some(Ty::I32))
    }

    fn store(&mut self, buf: &Name, index: &[Expr], value: &Expr, span: Span) {
        let ty = self.buffer_of(buf, "writes");
        let kernel = self.k.name.clone();
        if let Some(Entry::Buf { access: Some(Access::In), .. }) = self.lookup(&buf.name) {
            let msg = format!("kernel {kernel} writes `{}`, which is an `in` parameter", buf.name);
            self.err(buf.span.to(span), msg).hint =
                Some(format!("declare `{}` as `out` or `inout` if the kernel produces it", buf.name));
        }
        match &ty {
            Some(ty) => self.indices(buf, ty, index),
            None => index.iter().for_each(|i| {
                self.expr(i);
            }),
        }
        let (vt, _) = self.expr(value);
        if let (Some(ty), Some(vt)) = (ty, vt) {
            if vt != Ty::of(ty.dtype) {
                let msg = format!(
                    "cannot store {} into `{}` ({ty}) in kernel {kernel}: convert with {}(...)",
                    vt.name(),
                    buf.name,
                    Ty::of(ty.dtype).name()
                );
                self.err(value.span.to(span), msg);
            }
        }
    }

    /// The type of a buffer named in a load or store, reporting an unknown name.
    fn buffer_of(&mut self, buf: &Name, verb: &str) -> Option<TensorType> {
        let kernel = self.k.name.clone();
        match self.lookup(&buf.name) {
            Some(Entry::Buf { ty, .. }) => Some(ty.clone()),
            Some(Entry::Var { what, .. }) => {
                let msg = format!("`{}` is a {what}, not a buffer, in kernel {kernel}", buf.name);
                self.err(buf.span, msg).hint =
                    Some(format!("kernel {kernel} {verb} buffers by name: `buf[i, ...]`"));
                None
            }
            None => {
                let hint = match self.m.buffer(&buf.name) {
                    Some(b) => Some(format!(
                        "`{}` is a module buffer, and kernels see only their parameters: add `{}: {} {}` to the \
                         parameters of {kernel} and pass it in the `run`",
                        b.name,
                        b.name,
                        b.ty,
                        if verb == "writes" { "out" } else { "in" }
                    )),
                    None => {
                        let names = self.visible(true);
                        did_you_mean(&buf.name, names.iter().map(String::as_str))
                    }
                };
                let msg = format!("undefined buffer `{}` in kernel {kernel}", buf.name);
                self.err(buf.span, msg).hint = hint;
                None
            }
        }
    }

    /// Names in scope: buffers or variables.
    fn visible(&self, buffers: bool) -> Vec<String> {
        self.scopes
            .iter()
            .flatten()
            .filter(|(_, e)| matches!(e, Entry::Buf { .. }) == buffers)
            .map(|(n, _)| n.clone())
            .collect()
    }

    /// Checks the index list of a load or store: count, types, and bounds.
    fn indices(&mut self, buf: &Name, ty: &TensorType, index: &[Expr]) {
        let kernel = self.k.name.clone();
        let ivs: Vec<Typed> = index.iter().map(|i| self.expr(i)).collect();
        if index.len() != ty.rank() {
            let dims: Vec<String> = (0..ty.rank()).map(|d| format!("i{d}")).collect();
            let msg = format!(
                "`{}` has {} dimension{} ({}) but is indexed with {} ind{} in kernel {kernel}",
                buf.name,
                ty.rank(),
                if ty.rank() == 1 { "" } else { "s" },
                ty,
                index.len(),
                if index.len() == 1 { "ex" } else { "ices" }
            );
            self.err(buf.span, msg).expected =
                Some(format!("one index per dimension: `{}[{}]`", buf.name, dims.join(", ")));
            return;
        }
        for (d, (e, (t, iv))) in index.iter().zip(ivs).enumerate() {
            if let Some(t) = t.filter(|&t| t != Ty::I32) {
                let msg =
                    format!("index {d} of `{}` must be i32, found {} {}", buf.name, t.name(), self.ctx(e));
                self.err(e.span, msg).hint = Some("convert with i32(...)".into());
                continue;
            }
            let size = ty.shape[d] as i64;
            if let Some(iv) = iv.filter(|iv| self.reachable && iv.bounded()) {
                if iv.lo < 0 || iv.hi > size - 1 {
                    let msg = format!(
                        "index `{}` of `{}` (dim {d}, size {size}) ranges over [{}, {}] in kernel {kernel}",
                        print_expr(e),
                        buf.name,
                        iv.lo,
                        iv.hi
                    );
                    self.err(e.span, msg).hint = Some(format!(
                        "keep it within [0, {}]: guard the access with `if`, or fix the loop bounds",
                        size - 1
                    ));
                }
            }
        }
    }

    /// Types an expression and computes its interval; reports ill-typed parts once.
    fn expr(&mut self, e: &Expr) -> Typed {
        let (ty, iv) = self.expr_inner(e);
        let iv = iv.and_then(Iv::fit);
        if ty != Some(Ty::I32) {
            return (ty, None);
        }
        // Facts about this very expression (from an enclosing `if`) narrow it further.
        if self.facts.is_empty() || matches!(e.kind, ExprKind::Int(_) | ExprKind::Var(_)) || has_load(e) {
            return (ty, iv);
        }
        let key = print_expr(e);
        let mut iv = iv;
        for f in &self.facts {
            if f.key == key {
                iv = Some(iv.map_or(f.iv, |i| i.meet(f.iv)));
            }
        }
        (ty, iv.filter(|i| !i.is_empty()))
    }

    fn expr_inner(&mut self, e: &Expr) -> Typed {
        let kernel = self.k.name.clone();
        match &e.kind {
            ExprKind::Int(v) => (Some(Ty::I32), Some(Iv::point(i64::from(*v)))),
            ExprKind::Float(_) => (Some(Ty::F32), None),
            ExprKind::Bool(_) => (Some(Ty::Bool), None),
            ExprKind::Var(name) => match self.lookup(name).cloned() {
                Some(Entry::Var { ty, .. }) => (ty, self.key_interval(name).filter(|i| !i.is_empty())),
                Some(Entry::Buf { ty, .. }) => {
                    let msg = format!("`{name}` is a buffer, not a variable, in kernel {kernel}");
                    let rank = ty.rank();
                    let idx = (0..rank).map(|d| format!("i{d}")).collect::<Vec<_>>().join(", ");
                    self.err(e.span, msg).hint = Some(format!("load an element: `{name}[{idx}]`"));
                    (None, None)
                }
                None => {
                    let names = self.visible(false);
                    let hint = did_you_mean(name, names.iter().map(String::as_str));
                    let msg = format!("undefined variable `{name}` in kernel {kernel}");
                    self.err(e.span, msg).hint = hint;
                    (None, None)
                }
            },
            ExprKind::Load { buf, index } => match self.buffer_of(buf, "reads") {
                Some(ty) => {
                    self.indices(buf, &ty, index);
                    (Some(Ty::of(ty.dtype)), None)
                }
                None => {
                    for i in index {
                        self.expr(i);
                    }
                    (None, None)
                }
            },
            ExprKind::Unary { op, arg } => {
                let (t, iv) = self.expr(arg);
                let Some(t) = t else { return (None, None) };
                match (op, t) {
                    (UnOp::Neg, Ty::F32) => (Some(t), None),
                    (UnOp::Neg, Ty::I32) => (Some(t), iv.map(|i| Iv::new(-i.hi, -i.lo))),
                    (UnOp::Not, Ty::Bool) => (Some(t), None),
                    (UnOp::Neg, Ty::Bool) => {
                        let msg = format!("cannot negate a bool {}", self.ctx(e));
                        self.err(e.span, msg).hint = Some("use `!` for logical not".into());
                        (None, None)
                    }
                    (UnOp::Not, _) => {
                        let msg = format!("`!` needs a bool operand, found {} {}", t.name(), self.ctx(e));
                        self.err(e.span, msg).hint = Some("compare instead, e.g. `x == 0`".into());
                        (None, None)
                    }
                }
            }
            ExprKind::Binary { op, lhs, rhs } => self.binary(e, *op, lhs, rhs),
            ExprKind::Select { cond, then_val, else_val } => {
                let (c, _) = self.expr(cond);
                let (a, aiv) = self.expr(then_val);
                let (b, biv) = self.expr(else_val);
                if let Some(c) = c.filter(|&c| c != Ty::Bool) {
                    let msg = format!("`select` needs a bool condition, found {} {}", c.name(), self.ctx(e));
                    self.err(cond.span, msg).hint = Some("compare it, e.g. `x != 0`".into());
                }
                match (a, b) {
                    (Some(a), Some(b)) if a != b => {
                        let msg = format!(
                            "the arms of `select` have different types, {} and {}: convert with {}(...) {}",
                            a.name(),
                            b.name(),
                            if a == Ty::Bool { b.name() } else { a.name() },
                            self.ctx(e)
                        );
                        self.err(e.span, msg);
                        (None, None)
                    }
                    (Some(a), Some(_)) => (Some(a), aiv.zip(biv).map(|(x, y)| x.union(y))),
                    _ => (None, None),
                }
            }
            ExprKind::Cast { to, arg } => {
                let (t, iv) = self.expr(arg);
                match (to, t) {
                    (Ty::Bool, _) => {
                        let msg = format!("cannot convert to bool {}", self.ctx(e));
                        self.err(e.span, msg).hint = Some("compare instead, e.g. `x != 0`".into());
                        (None, None)
                    }
                    (_, None) => (Some(*to), None),
                    (Ty::I32, Some(Ty::I32)) => (Some(Ty::I32), iv),
                    (Ty::I32, Some(Ty::Bool)) => (Some(Ty::I32), Some(Iv::new(0, 1))),
                    (to, Some(_)) => (Some(*to), None),
                }
            }
            ExprKind::Call { func, args } => self.call(e, *func, args),
        }
    }

    fn binary(&mut self, e: &Expr, op: BinOp, lhs: &Expr, rhs: &Expr) -> Typed {
        let (lt, liv) = self.expr(lhs);
        let (rt, riv) = self.expr(rhs);
        let (Some(lt), Some(rt)) = (lt, rt) else {
            let ty = if is_cmp(op) || matches!(op, BinOp::And | BinOp::Or) { Some(Ty::Bool) } else { None };
            return (ty, None);
        };
        let ctx = self.ctx(e);
        let verb = match op {
            BinOp::Add => "add",
            BinOp::Sub => "subtract",
            BinOp::Mul => "multiply",
            BinOp::Div => "divide",
            BinOp::Rem => "take the remainder of",
            BinOp::And | BinOp::Or => "combine",
            _ => "compare",
        };
        match op {
            BinOp::And | BinOp::Or => {
                if lt != Ty::Bool || rt != Ty::Bool {
                    let msg = format!(
                        "`{}` needs bool operands, found {} and {} {ctx}",
                        op.symbol(),
                        lt.name(),
                        rt.name()
                    );
                    self.err(e.span, msg).hint = Some("compare numbers first, e.g. `x != 0`".into());
                }
                (Some(Ty::Bool), None)
            }
            _ => {
                let result = if is_cmp(op) { Ty::Bool } else { lt };
                if lt != rt {
                    let fix = if lt == Ty::Bool || rt == Ty::Bool {
                        "convert with i32(...)".to_string()
                    } else {
                        "convert with f32(...)".to_string()
                    };
                    let msg = format!("cannot {verb} {} and {}: {fix} {ctx}", lt.name(), rt.name());
                    let d = self.err(e.span, msg);
                    if lt != Ty::Bool && rt != Ty::Bool {
                        d.hint = Some("or convert the f32 side with i32(...) for integer arithmetic".into());
                    }
                    return (if result == Ty::Bool { Some(Ty::Bool) } else { None }, None);
                }
                if lt == Ty::Bool {
                    let msg = if result == Ty::Bool {
                        format!("cannot compare bool values with `{}` {ctx}", op.symbol())
                    } else {
                        format!("cannot {verb} bool values: arithmetic needs f32 or i32 operands {ctx}")
                    };
                    self.err(e.span, msg).hint = Some("convert with i32(...)".into());
                    return (if result == Ty::Bool { Some(Ty::Bool) } else { None }, None);
                }
                if op == BinOp::Rem && lt == Ty::F32 {
                    let msg = format!("`%` needs i32 operands, found f32 {ctx}");
                    self.err(e.span, msg).hint = Some("for floats, write `a - b * floor(a / b)`".into());
                    return (None, None);
                }
                if matches!(op, BinOp::Div | BinOp::Rem) && lt == Ty::I32 && riv == Some(Iv::point(0)) {
                    let msg = format!("integer division by zero {ctx}");
                    self.err(e.span, msg);
                    return (Some(Ty::I32), None);
                }
                if result == Ty::Bool || lt == Ty::F32 {
                    return (Some(result), None);
                }
                let iv = liv.zip(riv).and_then(|(a, b)| Iv::arith(op, a, b));
                (Some(Ty::I32), iv)
            }
        }
    }

    fn call(&mut self, e: &Expr, func: Intrinsic, args: &[Expr]) -> Typed {
        let typed: Vec<Typed> = args.iter().map(|a| self.expr(a)).collect();
        let name = func.name();
        if args.len() != func.arity() {
            let n = func.arity();
            let msg = format!(
                "`{name}` takes {n} argument{}, found {} {}",
                if n == 1 { "" } else { "s" },
                args.len(),
                self.ctx(e)
            );
            self.err(e.span, msg);
            return (None, None);
        }
        let tys: Option<Vec<Ty>> = typed.iter().map(|t| t.0).collect();
        let Some(tys) = tys else { return (None, None) };
        let int_ok = matches!(func, Intrinsic::Abs | Intrinsic::Min | Intrinsic::Max);
        let t0 = tys[0];
        if tys.iter().any(|&t| t != t0) {
            let shown: Vec<&str> = tys.iter().map(|t| t.name()).collect();
            let msg = format!(
                "`{name}` needs arguments of one type, found {}: convert with f32(...) {}",
                shown.join(" and "),
                self.ctx(e)
            );
            self.err(e.span, msg);
            return (None, None);
        }
        match t0 {
            Ty::F32 => (Some(Ty::F32), None),
            Ty::I32 if int_ok => {
                let ivs: Option<Vec<Iv>> = typed.iter().map(|t| t.1).collect();
                let iv = ivs.and_then(|v| Iv::call(func, &v));
                (Some(Ty::I32), iv)
            }
            t => {
                let accepts = if int_ok { "f32 or i32" } else { "f32" };
                let fix = if t == Ty::I32 { ": convert with f32(...)" } else { "" };
                let msg = format!("`{name}` takes {accepts}, found {}{fix} {}", t.name(), self.ctx(e));
                self.err(e.span, msg);
                (None, None)
            }
        }
    }
}

fn is_cmp(op: BinOp) -> bool {
    matches!(op, BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge | BinOp::Eq | BinOp::Ne)
}

/// `!(a op b)` is `a negate(op) b` (on integers, where there is no NaN).
fn negate(op: BinOp) -> BinOp {
    match op {
        BinOp::Lt => BinOp::Ge,
        BinOp::Le => BinOp::Gt,
        BinOp::Gt => BinOp::Le,
        BinOp::Ge => BinOp::Lt,
        BinOp::Eq => BinOp::Ne,
        BinOp::Ne => BinOp::Eq,
        other => other,
    }
}

/// `a op b` is `b flip(op) a`.
fn flip(op: BinOp) -> BinOp {
    match op {
        BinOp::Lt => BinOp::Gt,
        BinOp::Le => BinOp::Ge,
        BinOp::Gt => BinOp::Lt,
        BinOp::Ge => BinOp::Le,
        other => other,
    }
}

/// The key under which a narrowing of `e` is recorded: a variable's name, or the text of a
/// load-free compound expression (loads can change between the test and the use).
fn narrowable(e: &Expr) -> Option<String> {
    match &e.kind {
        ExprKind::Var(v) => Some(v.clone()),
        ExprKind::Int(_) | ExprKind::Float(_) | ExprKind::Bool(_) => None,
        _ if has_load(e) => None,
        _ => Some(print_expr(e)),
    }
}

// ---------------------------------------------------------------------------------------------
// The plan

fn plan(m: &Module, diags: &mut Vec<Diagnostic>) {
    let mut written: HashSet<&str> = HashSet::new();
    let mut used: HashSet<&str> = HashSet::new();
    // Temps the prepare steps write: read-only to the executions after them.
    let mut prepared: HashMap<&str, usize> = HashMap::new();
    for (step, r) in m.plan.iter().enumerate() {
        if r.prepare && step > 0 && !m.plan[step - 1].prepare {
            diags.push(
                Diagnostic::error(format!("prepare step {step} (kernel {}) follows a `run` step", r.kernel))
                    .at(r.span)
                    .with_hint(
                        "the prepare steps come first in the plan: they run once, before the first execution",
                    ),
            );
        }
        let Some(k) = m.kernel(&r.kernel) else {
            let names = m.kernels.iter().map(|k| k.name.as_str());
            let mut d =
                Diagnostic::error(format!("run {step} names unknown kernel `{}`", r.kernel)).at(r.span);
            d.hint = did_you_mean(&r.kernel, names);
            diags.push(d);
            continue;
        };
        if r.args.len() != k.params.len() {
            let params: Vec<&str> = k.params.iter().map(|p| p.name.as_str()).collect();
            diags.push(
                Diagnostic::error(format!(
                    "run {step} passes {} argument{} to kernel {}, which has {} parameter{}",
                    r.args.len(),
                    if r.args.len() == 1 { "" } else { "s" },
                    k.name,
                    k.params.len(),
                    if k.params.len() == 1 { "" } else { "s" },
                ))
                .at(r.span)
                .with_expected(format!("run {}({})", k.name, params.join(", "))),
            );
        }
        // Reads happen before writes within a step: an `inout` temp must have been written by
        // an earlier step.
        let mut writes_here = Vec::new();
        for (a, p) in r.args.iter().zip(&k.params) {
            used.insert(&a.name);
            let Some(b) = m.buffer(&a.name) else {
                let names = m.buffers.iter().map(|b| b.name.as_str());
                let mut d = Diagnostic::error(format!(
                    "run {step} of kernel {} passes unknown buffer `{}` (parameter `{}`)",
                    k.name, a.name, p.name
                ))
                .at(a.span);
                d.hint = did_you_mean(&a.name, names);
                diags.push(d);
                continue;
            };
            // A parameter may view the buffer under another shape of its element count.
            if b.ty.dtype != p.ty.dtype || b.ty.numel() != p.ty.numel() {
                diags.push(
                    Diagnostic::error(format!(
                        "run {step} passes `{}` of type {} to parameter `{}` of kernel {}, of type {}",
                        a.name, b.ty, p.name, k.name, p.ty
                    ))
                    .at(a.span)
                    .with_expected(format!(
                        "a buffer of type {} (or another shape of {} {} elements)",
                        p.ty,
                        p.ty.numel(),
                        p.ty.dtype.name()
                    )),
                );
            }
            let writes = p.access != Access::In;
            if writes && b.role == BufferRole::Input {
                diags.push(
                    Diagnostic::error(format!(
                        "run {step} passes input `{}` to parameter `{}` of kernel {}, which is `{}`: inputs are \
                         never written",
                        a.name,
                        p.name,
                        k.name,
                        if p.access == Access::Out { "out" } else { "inout" }
                    ))
                    .at(a.span)
                    .with_hint("copy it into a temp `buffer` first"),
                );
            }
            if r.prepare && writes && b.role == BufferRole::Output {
                diags.push(
                    Diagnostic::error(format!(
                        "prepare step {step} (kernel {}) writes output `{}`: prepare steps write temps only",
                        k.name, a.name
                    ))
                    .at(a.span)
                    .with_hint("an output is computed by every execution: write it in a `run` step"),
                );
            }
            if let Some(&by) = prepared.get(a.name.as_str()).filter(|_| writes && !r.prepare) {
                diags.push(
                    Diagnostic::error(format!(
                        "run {step} (kernel {}) writes `{}`, which prepare step {by} computes: prepared temps are \
                         read-only to the executions",
                        k.name, a.name
                    ))
                    .at(a.span)
                    .with_hint("write the result into a temp of its own"),
                );
            }
            let reads = p.access != Access::Out;
            if r.prepare && reads && b.role != BufferRole::Input && !prepared.contains_key(a.name.as_str()) {
                let what = if b.role == BufferRole::Output { "output" } else { "temp" };
                diags.push(
                    Diagnostic::error(format!(
                        "prepare step {step} (kernel {}) reads {what} `{}`, which no earlier prepare step writes",
                        k.name, a.name
                    ))
                    .at(a.span)
                    .with_hint("a prepare step reads parameters and the temps of the prepare steps before it"),
                );
            } else if reads && b.role == BufferRole::Temp && !written.contains(a.name.as_str()) {
                diags.push(
                    Diagnostic::error(format!(
                        "run {step} of kernel {} reads temp `{}` (parameter `{}`) before any run writes it",
                        k.name, a.name, p.name
                    ))
                    .at(a.span)
                    .with_hint("run the kernel that produces it first"),
                );
            }
            if writes {
                writes_here.push(a.name.as_str());
                if r.prepare && b.role == BufferRole::Temp {
                    prepared.entry(a.name.as_str()).or_insert(step);
                }
            }
        }
        // Aliasing: a buffer passed twice where either use writes.
        for (i, (a, p)) in r.args.iter().zip(&k.params).enumerate() {
            for (b, q) in r.args.iter().zip(&k.params).skip(i + 1) {
                if a.name == b.name && (p.access != Access::In || q.access != Access::In) {
                    diags.push(
                        Diagnostic::error(format!(
                            "run {step} passes `{}` twice to kernel {} (parameters `{}` and `{}`) and one of them is \
                             written",
                            a.name, k.name, p.name, q.name
                        ))
                        .at(b.span)
                        .with_hint("parameters must not alias when written: pass distinct buffers"),
                    );
                }
            }
        }
        written.extend(writes_here);
    }
    for b in &m.buffers {
        if b.role == BufferRole::Output && !written.contains(b.name.as_str()) {
            diags.push(
                Diagnostic::error(format!("output `{}` is never written by the plan", b.name))
                    .at(b.span)
                    .with_hint("pass it to an `out` or `inout` parameter of some run"),
            );
        } else if b.role == BufferRole::Temp && !used.contains(b.name.as_str()) {
            diags.push(
                Diagnostic::warning(format!("buffer `{}` is never used by the plan", b.name)).at(b.span),
            );
        }
    }
    for k in &m.kernels {
        if !m.plan.iter().any(|r| r.kernel == k.name) {
            diags.push(Diagnostic::warning(format!("kernel {} is never run", k.name)).at(k.span));
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Allocation legality

fn allocations(m: &Module, t: &TargetProfile, diags: &mut Vec<Diagnostic>) {
    let stack_limit = t.cpu.stack_bytes;
    let source = |field: &str| format!("from target profile `{}` (cpu.{field})", t.name);
    let gpu_limits = GpuLimits::from_profile(t);
    for k in &m.kernels {
        if k.has_launch() {
            match &gpu_limits {
                Some(l) => diags.extend(check_kernel(k, l)),
                None => diags.push(
                    Diagnostic::error(format!("`launch` needs a GPU target; target `{}` has no GPU", t.name))
                        .at(k.span)
                        .with_hint(format!(
                            "kernel {} launches on a GPU: choose a target with a GPU",
                            k.name
                        )),
                ),
            }
            // GPU kernels do not run on the CPU stack.
            continue;
        }
        let mut over = false;
        for_each_stmt(&k.body, &mut |s| {
            let Stmt::Alloc { name, ty, span, .. } = s else { return };
            let bytes = type_bytes(ty);
            if bytes > stack_limit {
                over = true;
                diags.push(
                    Diagnostic::error(format!(
                        "alloc `{name}` ({ty}) in kernel {} needs {bytes} bytes of stack, over the limit of {stack_limit} \
                         bytes {}",
                        k.name,
                        source("stack_bytes")
                    ))
                    .at(*span)
                    .with_hint("tile the computation so the local buffer is smaller, or use a temp `buffer`"),
                );
            }
        });
        let stack = kernel_stack(k);
        if !over && stack.bytes > stack_limit {
            let parts: Vec<String> = stack.allocs.iter().map(|(n, b)| format!("`{n}` {b}")).collect();
            diags.push(
                Diagnostic::error(format!(
                    "the allocs live at once in kernel {} ({}) need {} bytes of stack, over the limit of {stack_limit} \
                     bytes {}",
                    k.name,
                    parts.join(", "),
                    stack.bytes,
                    source("stack_bytes")
                ))
                .at(k.span)
                .with_hint("end an allocation's block before the next one starts, or make them smaller"),
            );
        }
    }
}

/// The memory the runtime reserves for `m` against `t`'s limits, and on a GPU each buffer's size.
fn memory_budget(m: &Module, t: &TargetProfile, diags: &mut Vec<Diagnostic>) {
    let footprint = arena::plan(m);
    // A module that launches keeps its buffers in GPU memory, each allocated apart.
    let (budget, field, reserved) = match &t.gpu {
        Some(g) if m.has_launch() => (g.memory_bytes, "gpu.memory_bytes", footprint.unplanned_bytes()),
        _ => (t.cpu.memory_bytes, "cpu.memory_bytes", footprint.planned_bytes()),
    };
    if let Some(max) = t.gpu.as_ref().and_then(|g| g.max_buffer_bytes).filter(|_| m.has_launch()) {
        for b in &m.buffers {
            let bytes = type_bytes(&b.ty);
            if bytes > max {
                diags.push(
                    Diagnostic::error(format!(
                        "buffer `{}` ({}) needs {bytes} bytes, over the limit of {max} bytes for one buffer from \
                         target profile `{}` (gpu.max_buffer_bytes)",
                        b.name, b.ty, t.name
                    ))
                    .at(b.span),
                );
            }
        }
    }
    if reserved > budget {
        let f = &footprint;
        let parts = if m.has_launch() && t.gpu.is_some() {
            format!(
                "inputs {} + outputs {} + temps {} (each apart)",
                f.inputs_bytes.saturating_add(f.consumed_bytes),
                f.outputs_bytes,
                f.temps_bytes
            )
        } else {
            let prepared = if f.prepared_bytes > 0 {
                format!(" + prepared temps {}", f.prepared_bytes)
            } else {
                String::new()
            };
            let consumed = if f.consumed_bytes > 0 {
                format!(", with {} bytes of params the prepare steps consume", f.consumed_bytes)
            } else {
                String::new()
            };
            format!(
                "inputs {} + outputs {}{prepared} + temp arena {} (planned{consumed}; {} unplanned) + stack {}",
                f.inputs_bytes,
                f.outputs_bytes,
                f.arena_bytes,
                f.temps_bytes.saturating_add(f.consumed_bytes),
                f.stack_bytes
            )
        };
        diags.push(
            Diagnostic::error(format!(
                "module {} needs {reserved} bytes of memory ({parts}), over the limit of {budget} bytes from target \
                 profile `{}` ({field})",
                m.name, t.name
            ))
            .at(m.span)
            .with_note(format!("the live temps at the worst step: {}", peak_memory(m)))
            .with_hint("fewer or smaller temps live at once (fuse operators, reorder the plan), smaller tensors, or a target with more memory"),
        );
    }
}
