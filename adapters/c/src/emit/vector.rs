//! Vector types for `vectorize` loops in GPU kernels: a loop `vectorize v in 0..W` (W 2 or 4)
//! whose iterations touch W consecutive, aligned elements of global or shared buffers is written
//! with one vector load per such buffer read (`float4`, `int2`, ...: CUDA through a pointer cast,
//! OpenCL through `vloadW`), the body once per lane with `v` a constant and each of those reads a
//! component, and one vector store per global or shared buffer written (`make_float4` /
//! `vstoreW`). Local (per-thread) arrays are registers: the lanes read and write them element by
//! element. GPUs move 8 or 16 bytes per thread in one access that way instead of W, and a
//! register tile's fragments come out of shared memory in a quarter of the instructions.
//!
//! A loop qualifies when, and only when (anything else is written as a plain `for`, which means
//! the same):
//! - `lo` is 0 and `hi` is the literal 2 or 4;
//! - its body is `let`s and stores only (no loops, branches, allocations or barriers);
//! - every store and every read that uses `v` is either of a local array (any index), or of a
//!   kernel parameter (global memory) or a shared array, of f32 or i32, whose last index is `v`
//!   or `BASE + v` and whose other indices do not use `v`, where the last dimension's extent and
//!   BASE are multiples of W (so the first element's offset is a multiple of W; BASE is a
//!   literal, a product with such a literal, a sum of such terms, or a `let` bound to one).
//!   Buffers are allocated aligned to at least 16 bytes by every runner, and shared arrays are
//!   declared so;
//! - at least one access is a vector access;
//! - each buffer is stored at most once, and a buffer that is stored is not read.
//!
//! What must stay true: the vector form computes exactly what the plain loop does, lane by lane,
//! in the same order of evaluation within each lane (lanes are independent by the conditions
//! above: no lane reads what another writes).

use super::{Binding, CExpr, KernelCx, ATOM, R};
use ekb_ir::l1::print::print_expr;
use ekb_ir::l1::{BinOp, Expr, ExprKind, Name, Scope, Stmt, Ty};
use ekb_ir::DType;

/// A vector access: the buffer, its index (with the loop variable), and the C name of the vector
/// a read was loaded into.
struct Access<'b> {
    buf: &'b Name,
    index: &'b [Expr],
    key: String,
}

/// How a vectorised loop reaches one buffer access that uses its variable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reach {
    /// W consecutive aligned elements of global or shared memory: one vector access.
    Vector,
    /// An element of a local array: lane by lane.
    Lane,
}

/// One lane of a vectorised loop being written: its component and the vector-loaded reads
/// (access key, the vector's C name, the element type).
pub(super) struct Lane {
    component: &'static str,
    loaded: Vec<(String, String, Ty)>,
}

/// The components of a vector of up to 4 lanes, in both dialects.
const LANES: [&str; 4] = ["x", "y", "z", "w"];

impl<'a> KernelCx<'a> {
    /// Writes `vectorize var in lo..hi { body }` with vector accesses when it qualifies (see the
    /// module header) and says whether it did; when it did not, nothing was written.
    pub(super) fn vector_loop(&mut self, var: &str, lo: &Expr, hi: &Expr, body: &[Stmt]) -> R<bool> {
        let width = match (&lo.kind, &hi.kind) {
            (ExprKind::Int(0), ExprKind::Int(w @ (2 | 4))) => *w as u32,
            _ => return Ok(false),
        };
        let Some((reads, writes)) = self.vector_accesses(var, width, body)? else { return Ok(false) };
        self.line(&format!("{{ // vectorize {var} in 0..{width}: {width}-wide loads and stores"));
        self.depth += 1;
        self.scopes.push(vec![(var.to_string(), Binding::Var { ty: Ty::I32, c: "0".into() })]);
        let mut loaded = Vec::new();
        for r in &reads {
            let (ty, first) = self.first_element(r)?;
            let v = self.fresh(&format!("{}_v", r.buf.name));
            let load = self.d.vector_load(ty, width, &first, true);
            self.line(&format!("const {} {v} = {load};", self.d.vector_ty(ty, width)));
            loaded.push((r.key.clone(), v, ty));
        }
        let mut stored: Vec<Vec<String>> = vec![Vec::new(); writes.len()];
        for (lane, component) in LANES.iter().enumerate().take(width as usize) {
            self.scopes.push(vec![(var.to_string(), Binding::Var { ty: Ty::I32, c: lane.to_string() })]);
            self.lane = Some(Lane { component, loaded: loaded.clone() });
            for s in body {
                match s {
                    Stmt::Let { name, value, .. } => {
                        let v = self.expr(value)?;
                        let c = self.fresh(&format!("{name}_{lane}"));
                        self.line(&format!("const {} {c} = {};", self.d.ty(v.ty), v.text));
                        self.values.insert(c.clone(), value.clone());
                        self.bind(name, Binding::Var { ty: v.ty, c });
                    }
                    Stmt::Store { buf, .. } if self.local_array(buf) => self.stmt(s, None)?,
                    Stmt::Store { buf, value, .. } => {
                        let v = self.expr(value)?;
                        let c = self.fresh(&format!("{}_{lane}", buf.name));
                        self.line(&format!("const {} {c} = {};", self.d.ty(v.ty), v.text));
                        let at = writes.iter().position(|w| w.buf.name == buf.name).expect("collected");
                        stored[at].push(c);
                    }
                    _ => unreachable!("the body was checked to hold lets and stores only"),
                }
            }
            self.lane = None;
            self.scopes.pop();
        }
        for (w, lanes) in writes.iter().zip(&stored) {
            let (ty, first) = self.first_element(w)?;
            self.line(&self.d.vector_store(ty, &first, lanes));
        }
        self.scopes.pop();
        self.depth -= 1;
        self.line("}");
        Ok(true)
    }

    /// The vector reads and the vector stores of a qualifying body, or `None` when it does not
    /// qualify.
    #[allow(clippy::type_complexity)]
    fn vector_accesses<'b>(
        &self,
        var: &str,
        width: u32,
        body: &'b [Stmt],
    ) -> R<Option<(Vec<Access<'b>>, Vec<Access<'b>>)>> {
        let mut reads: Vec<Access<'b>> = Vec::new();
        let mut writes: Vec<Access<'b>> = Vec::new();
        let mut stored: Vec<&'b str> = Vec::new();
        let mut lets = Vec::new();
        for s in body {
            let value = match s {
                Stmt::Let { name, value, .. } => {
                    lets.push(name.as_str());
                    value
                }
                Stmt::Store { buf, index, value, .. } => {
                    if stored.contains(&buf.name.as_str()) {
                        return Ok(None);
                    }
                    match self.reach(var, width, buf, index, &lets)? {
                        Some(Reach::Vector) => writes.push(Access { buf, index, key: key(buf, index) }),
                        Some(Reach::Lane) => {}
                        None => return Ok(None),
                    }
                    stored.push(&buf.name);
                    value
                }
                _ => return Ok(None),
            };
            let mut ok = true;
            for_each_load(value, &mut |buf, index| {
                if !ok || !index.iter().any(|e| mentions(e, var, &lets)) {
                    return;
                }
                match self.reach(var, width, buf, index, &lets) {
                    Ok(Some(Reach::Vector)) => {
                        let k = key(buf, index);
                        if !reads.iter().any(|r| r.key == k) {
                            reads.push(Access { buf, index, key: k });
                        }
                    }
                    Ok(Some(Reach::Lane)) => {}
                    _ => ok = false,
                }
            });
            if !ok {
                return Ok(None);
            }
        }
        let read_and_written = stored.iter().any(|w| body.iter().any(|s| stmt_reads(s, w)));
        let vectors = !reads.is_empty() || !writes.is_empty();
        Ok((!read_and_written && vectors).then_some((reads, writes)))
    }

    /// Whether `buf` is a local (per-thread) array.
    fn local_array(&self, buf: &Name) -> bool {
        matches!(self.lookup(&buf.name, buf.span), Ok(Binding::Buf { c, .. }) if self.allocs.get(c) == Some(&Scope::Local))
    }

    /// How the loop reaches `buf[index]`: lane by lane in a local array, as an aligned run of
    /// `width` elements along `var` in global or shared memory, or not at all (`None`).
    fn reach(&self, var: &str, width: u32, buf: &Name, index: &[Expr], lets: &[&str]) -> R<Option<Reach>> {
        let Binding::Buf { ty, c } = self.lookup(&buf.name, buf.span)? else { return Ok(None) };
        match self.allocs.get(c) {
            Some(Scope::Local) => return Ok(Some(Reach::Lane)),
            Some(Scope::Shared) => {}
            None if self.k.params.iter().any(|p| p.name == buf.name) => {}
            None => return Ok(None),
        }
        let (Some((last, outer)), Some(&extent)) = (index.split_last(), ty.shape.last()) else {
            return Ok(None);
        };
        if !matches!(ty.dtype, DType::F32 | DType::I32)
            || extent % width as usize != 0
            || outer.iter().any(|e| mentions(e, var, lets))
        {
            return Ok(None);
        }
        let is_var = |e: &Expr| matches!(&e.kind, ExprKind::Var(v) if v == var);
        let aligned = match &last.kind {
            ExprKind::Var(v) => v == var,
            ExprKind::Binary { op: BinOp::Add, lhs, rhs } => {
                let base = if is_var(lhs) {
                    rhs
                } else if is_var(rhs) {
                    lhs
                } else {
                    return Ok(None);
                };
                !mentions(base, var, lets) && self.multiple_of(base, width as i32)
            }
            _ => false,
        };
        Ok(aligned.then_some(Reach::Vector))
    }

    /// Whether `e` is provably a multiple of `w` for every value of its variables.
    fn multiple_of(&self, e: &Expr, w: i32) -> bool {
        match &e.kind {
            ExprKind::Int(c) => c % w == 0,
            ExprKind::Var(v) => match self.lookup(v, e.span) {
                Ok(Binding::Var { c, .. }) => {
                    self.values.get(c).is_some_and(|value| self.multiple_of(value, w))
                }
                _ => false,
            },
            ExprKind::Binary { op: BinOp::Mul, lhs, rhs } => {
                self.multiple_of(lhs, w) || self.multiple_of(rhs, w)
            }
            ExprKind::Binary { op: BinOp::Add | BinOp::Sub, lhs, rhs } => {
                self.multiple_of(lhs, w) && self.multiple_of(rhs, w)
            }
            _ => false,
        }
    }

    /// The element type and the C lvalue of an access's first element (the loop variable is
    /// bound to 0 by the caller).
    fn first_element(&mut self, a: &Access<'_>) -> R<(Ty, String)> {
        let Binding::Buf { ty, .. } = self.lookup(&a.buf.name, a.buf.span)? else {
            unreachable!("checked to be a global or shared buffer")
        };
        let ty = Ty::of(ty.dtype);
        let lane = self.lane.take();
        let first = self.access(a.buf, a.index, a.buf.span);
        self.lane = lane;
        Ok((ty, first?))
    }

    /// Inside a lane: the component of a vector-loaded read, if `buf[index]` is one.
    pub(super) fn lane_read(&self, buf: &Name, index: &[Expr]) -> Option<CExpr> {
        let lane = self.lane.as_ref()?;
        let k = key(buf, index);
        lane.loaded
            .iter()
            .find(|(key, _, _)| *key == k)
            .map(|(_, v, ty)| CExpr::new(format!("{v}.{}", lane.component), ATOM, *ty))
    }
}

/// The identity of an access: the buffer and its printed index.
fn key(buf: &Name, index: &[Expr]) -> String {
    let idx: Vec<String> = index.iter().map(print_expr).collect();
    format!("{}[{}]", buf.name, idx.join(", "))
}

/// Whether `e` uses `var`, directly or through one of the body's `lets` (which may depend on it).
fn mentions(e: &Expr, var: &str, lets: &[&str]) -> bool {
    match &e.kind {
        ExprKind::Var(v) => v == var || lets.contains(&v.as_str()),
        ExprKind::Int(_) | ExprKind::Float(_) | ExprKind::Bool(_) => false,
        ExprKind::Load { index, .. } => index.iter().any(|i| mentions(i, var, lets)),
        ExprKind::Unary { arg, .. } | ExprKind::Cast { arg, .. } => mentions(arg, var, lets),
        ExprKind::Binary { lhs, rhs, .. } => mentions(lhs, var, lets) || mentions(rhs, var, lets),
        ExprKind::Select { cond, then_val, else_val } => {
            mentions(cond, var, lets) || mentions(then_val, var, lets) || mentions(else_val, var, lets)
        }
        ExprKind::Call { args, .. } => args.iter().any(|a| mentions(a, var, lets)),
    }
}

/// Calls `f` on every load in `e` (outermost first).
fn for_each_load<'b>(e: &'b Expr, f: &mut impl FnMut(&'b Name, &'b [Expr])) {
    match &e.kind {
        ExprKind::Load { buf, index } => {
            f(buf, index);
            index.iter().for_each(|i| for_each_load(i, f));
        }
        ExprKind::Int(_) | ExprKind::Float(_) | ExprKind::Bool(_) | ExprKind::Var(_) => {}
        ExprKind::Unary { arg, .. } | ExprKind::Cast { arg, .. } => for_each_load(arg, f),
        ExprKind::Binary { lhs, rhs, .. } => {
            for_each_load(lhs, f);
            for_each_load(rhs, f);
        }
        ExprKind::Select { cond, then_val, else_val } => {
            for_each_load(cond, f);
            for_each_load(then_val, f);
            for_each_load(else_val, f);
        }
        ExprKind::Call { args, .. } => args.iter().for_each(|a| for_each_load(a, f)),
    }
}

/// Whether a statement of the body reads buffer `name` anywhere.
fn stmt_reads(s: &Stmt, name: &str) -> bool {
    let mut found = false;
    let mut check = |e: &Expr| for_each_load(e, &mut |b, _| found |= b.name == name);
    match s {
        Stmt::Let { value, .. } => check(value),
        Stmt::Store { index, value, .. } => {
            index.iter().for_each(&mut check);
            check(value);
        }
        _ => {}
    }
    found
}
