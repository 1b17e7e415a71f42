//! What `cache_read`, `cache_write`, `compute_at` and `reverse_compute_at` share: the region of
//! a buffer that one iteration of a loop touches, as a box with literal extents at an offset the
//! iteration fixes, and the loops that visit it.
//!
//! The region refines `analysis::access::regions`, which bounds the elements over every
//! iteration: here each index (its load-free `let`s inlined) is split into a sum of terms, those
//! that use only variables fixed during an iteration of the loop (the loop's own, the loops
//! around it, launch variables) and those that use only variables that vary inside it (the
//! loops and `let`s of its body; for a `shared` region also the block's thread variables, since
//! the block's threads share one copy). Along each dimension every access must have the same
//! fixed part `O`; the varying parts, from the ranges of the inner loops, give `lo..=hi`. The
//! element `O + lo + c` of the buffer is element `c` of the region, `c` in `0..hi - lo + 1`, and
//! an access `O + e` becomes `e - lo` in the region.

use super::{loop_env, parts, Path};
use crate::handle::quoted;
use ekb_ir::l1::analysis::access::accesses;
use ekb_ir::l1::analysis::deps::{dependences, BandLoop};
use ekb_ir::l1::analysis::interval::{eval, Interval};
use ekb_ir::l1::build::{if_, int, ints, let_, loop_, var, Names, E};
use ekb_ir::l1::print::print_expr;
use ekb_ir::l1::visit::{for_each_stmt, has_load, mutate_expr, mutate_stmt, substitute, Mutator};
use ekb_ir::l1::{BinOp, Expr, ExprKind, Kernel, LaunchDim, LoopKind, Name, Stmt, UnOp};
use ekb_ir::{Diagnostic, TensorType};
use std::collections::{HashMap, HashSet};

/// The most bytes a staged region may hold in `local` memory: a thread's share of the stack,
/// and what fits an L1 data cache next to the rest of the loop's data.
pub const MAX_LOCAL_BYTES: usize = 16 * 1024;
/// The most bytes of a `shared` region: CUDA's static shared memory per block.
pub const MAX_SHARED_BYTES: usize = 48 * 1024;

/// One dimension of a region: buffer index `outer + lo + c` for `c` in `0..extent`.
struct Dim {
    /// The fixed terms, each with whether it is subtracted.
    outer: Vec<(Expr, bool)>,
    lo: i64,
    extent: usize,
}

/// The region of a buffer one iteration of a loop touches.
pub struct Region {
    dims: Vec<Dim>,
    /// The load-free `let`s of the kernel, inlined into indices before they are split.
    lets: HashMap<String, Expr>,
    /// The variables that vary inside an iteration.
    inner: HashSet<String>,
}

/// The region of `buf` that the body of the loop at `path` of kernel `k` reads (and, with
/// `writes`, writes). `threads`: the block's thread variables, for a region the block shares.
pub fn region(
    k: &Kernel,
    path: &Path,
    buf: &str,
    writes: bool,
    threads: Option<&[LaunchDim]>,
) -> Result<Region, Diagnostic> {
    let lp = parts(path.get(&k.body));
    let lets = inlinable_lets(&k.body);
    let mut inner: HashSet<String> = HashSet::new();
    let mut ranges: HashMap<String, Interval> = HashMap::new();
    for d in threads.unwrap_or_default() {
        inner.insert(d.var.clone());
        ranges.insert(d.var.clone(), Interval::new(0, i64::from(d.extent) - 1));
    }
    for_each_stmt(lp.body, &mut |s| match s {
        Stmt::Loop { var, lo, hi, .. } => {
            inner.insert(var.clone());
            let look = |v: &str| ranges.get(v).copied();
            let iv = eval(&substitute(lo.clone(), &lets), &look)
                .zip(eval(&substitute(hi.clone(), &lets), &look))
                .map(|(l, h)| Interval::new(l.lo, h.hi - 1))
                .filter(|i| !i.is_empty());
            if let Some(iv) = iv {
                ranges.insert(var.clone(), iv);
            }
        }
        Stmt::Let { name, .. } | Stmt::Alloc { name, .. } => {
            inner.insert(name.clone());
        }
        _ => {}
    });
    let what = if writes { "touches" } else { "reads" };
    let here = |why: String| {
        Diagnostic::error(format!(
            "the region of `{buf}` that an iteration of loop `{}` (kernel {}) {what} is not a box of literal extent: {why}",
            lp.var, k.name
        ))
    };
    let all: Vec<_> =
        accesses(lp.body).into_iter().filter(|a| a.buf == buf && (writes || !a.write)).collect();
    if all.is_empty() {
        return Err(Diagnostic::error(format!(
            "loop `{}` of kernel {} never {what} `{buf}`",
            lp.var, k.name
        ))
        .with_hint("stage a buffer at a loop whose body accesses it"));
    }
    let look = |v: &str| ranges.get(v).copied();
    // Per dimension: the fixed terms, their text, and the range of the varying part.
    let mut dims: Vec<(Terms, String, Interval)> = Vec::new();
    for a in &all {
        for (d, e) in a.index.iter().enumerate() {
            let e = substitute(e.clone(), &lets);
            if has_load(&e) {
                return Err(here(format!("index `{}` reads memory", print_expr(&e))).with_hint(
                    "stage a buffer whose indices are computed from loop variables and literals",
                ));
            }
            let (outer, varying) = split(&e, &inner).map_err(|(a, b)| {
                here(format!(
                    "index `{}` combines `{a}`, fixed in an iteration, and `{b}`, which varies in it, in one term",
                    print_expr(&e)
                ))
                .with_hint("stage at a loop whose iterations fix whole terms of the index (an outer loop of a tile)")
            })?;
            let iv = eval(&sum(&varying).0, &look).ok_or_else(|| {
                here(format!("the range of `{}` is unknown", print_expr(&sum(&varying).0)))
                    .with_hint("stage at a loop whose inner loops have literal bounds")
            })?;
            let key = key(&outer);
            match dims.get_mut(d) {
                None => dims.push((outer, key, iv)),
                Some((_, k0, span)) => {
                    if *k0 != key {
                        return Err(here(format!(
                            "its accesses are at different offsets along dimension {d}: `{}` and `{}`",
                            print_expr(&sum(&dims[d].0).0),
                            print_expr(&sum(&outer).0)
                        ))
                        .with_hint("stage a buffer whose accesses in the loop differ by constants only"));
                    }
                    *span = span.union(iv);
                }
            }
        }
    }
    let dims = dims
        .into_iter()
        .map(|(outer, _, iv)| Dim { outer, lo: iv.lo, extent: (iv.hi - iv.lo + 1) as usize })
        .collect();
    Ok(Region { dims, lets, inner })
}

impl Region {
    pub fn shape(&self) -> Vec<usize> {
        self.dims.iter().map(|d| d.extent).collect()
    }

    /// An access's index in the region: its varying part less `lo`.
    fn restage(&self, index: &[Expr]) -> Vec<Expr> {
        index
            .iter()
            .zip(&self.dims)
            .map(|(e, d)| {
                let e = substitute(e.clone(), &self.lets);
                let (_, varying) = split(&e, &self.inner).expect("checked when the region was made");
                let (terms, c) = constants(&varying);
                (sum(&terms) + ints(c - d.lo)).0
            })
            .collect()
    }

    /// The interval of the buffer indices along each dimension over the whole box, given the
    /// intervals of the variables around the loop (`None`: unknown).
    pub fn span(&self, env: &[(String, Interval)]) -> Vec<Option<Interval>> {
        let look = |v: &str| env.iter().rev().find(|(n, _)| n == v).map(|(_, i)| *i);
        let at = |d: &Dim| {
            let o = eval(&sum(&d.outer).0, &look)?;
            Some(Interval::new(o.lo + d.lo, o.hi + d.lo + d.extent as i64 - 1))
        };
        self.dims.iter().map(at).collect()
    }

    /// The buffer index of element `c` of the region.
    pub fn element(&self, c: &[E]) -> Vec<E> {
        self.dims.iter().zip(c).map(|(d, c)| sum(&d.outer) + c.clone() + ints(d.lo)).collect()
    }
}

/// Fresh names for the loops over a region's dimensions, `base_d` for dimension `d`; none for a
/// dimension of extent 1, which needs no loop.
pub fn loop_names(region: &Region, names: &mut Names, base: &str) -> Vec<Option<String>> {
    let name = |(d, dim): (usize, &Dim)| (dim.extent > 1).then(|| names.fresh(&format!("{base}_{d}")));
    region.dims.iter().enumerate().map(name).collect()
}

/// The loops `vars` over every element `c` of `region`, with `body(c)` inside, guarded by
/// `index(c) in 0..shape` along each dimension where `env` (the variables around the loops)
/// does not prove it.
pub fn nest(
    region: &Region,
    vars: &[Option<String>],
    env: &[(String, Interval)],
    shape: &[usize],
    body: impl Fn(&[E]) -> Stmt,
) -> Stmt {
    let c: Vec<E> = vars.iter().map(|v| v.as_deref().map_or(int(0), var)).collect();
    let mut env = env.to_vec();
    for (v, d) in vars.iter().zip(&region.dims) {
        if let Some(v) = v {
            env.push((v.clone(), Interval::new(0, d.extent as i64 - 1)));
        }
    }
    let mut stmt = guarded(&region.element(&c), shape, &env, body(&c));
    for (v, d) in vars.iter().zip(&region.dims).rev() {
        if let Some(v) = v {
            stmt = loop_(LoopKind::Serial, v, int(0), int(d.extent), vec![stmt]);
        }
    }
    stmt
}

/// `s` under `if` conditions keeping `index` within `shape`, along the dimensions where `env`
/// does not prove it.
pub fn guarded(index: &[E], shape: &[usize], env: &[(String, Interval)], s: Stmt) -> Stmt {
    let look = |v: &str| env.iter().rev().find(|(n, _)| n == v).map(|(_, i)| *i);
    let mut cond: Option<E> = None;
    for (e, &n) in index.iter().zip(shape) {
        let iv = eval(&e.0, &look);
        let mut add = |c: E| {
            cond = Some(match cond.take() {
                Some(p) => p.and(c),
                None => c,
            })
        };
        if iv.is_none_or(|i| i.lo < 0) {
            add(e.clone().ge(int(0)));
        }
        if iv.is_none_or(|i| i.hi >= n as i64) {
            add(e.clone().lt(int(n)));
        }
    }
    match cond {
        Some(c) => if_(c, vec![s], Vec::new()),
        None => s,
    }
}

/// The copy of `region` by every thread of `block` together: the elements flattened, thread
/// `t` (x fastest) taking `t`, `t + T`, .. for `T` threads.
pub fn shared_copy(
    region: &Region,
    names: &mut Names,
    base: &str,
    env: &[(String, Interval)],
    shape: &[usize],
    block: &[LaunchDim],
    store: impl Fn(&[E], &[E]) -> Stmt,
) -> Stmt {
    let dims = region.shape();
    let n: usize = dims.iter().product();
    let threads: usize = block.iter().map(|d| d.extent as usize).product();
    let mut t = int(0);
    let mut stride = 1;
    for d in block {
        t = t + var(&d.var) * int(stride);
        stride *= d.extent as usize;
    }
    let (f, e) = (names.fresh(&format!("{base}_f")), names.fresh(&format!("{base}_e")));
    let mut c = Vec::new();
    let mut inner = n;
    for (i, &extent) in dims.iter().enumerate() {
        inner /= extent;
        let digit = var(&e) / int(inner);
        c.push(match (i, extent) {
            (_, 1) => int(0),
            (0, _) => digit,
            _ => digit % int(extent),
        });
    }
    let mut env = env.to_vec();
    env.push((e.clone(), Interval::new(0, n as i64 - 1)));
    let copy = guarded(&region.element(&c), shape, &env, store(&c, &region.element(&c)));
    let mut body = vec![let_(&e, var(&f) * int(threads) + t)];
    if n.is_multiple_of(threads) {
        body.push(copy);
    } else {
        body.push(if_(var(&e).lt(int(n)), vec![copy], Vec::new()));
    }
    loop_(LoopKind::Serial, &f, int(0), int(n.div_ceil(threads)), body)
}

/// Staging at the loop at `path` adds loops to its body, so it must not be a `vectorize` loop
/// (whose body stays innermost).
pub fn not_vectorized(k: &Kernel, path: &Path) -> Result<(), Diagnostic> {
    let lp = parts(path.get(&k.body));
    if lp.kind == LoopKind::Vectorize {
        return Err(Diagnostic::error(format!("loop `{}` of kernel {} is vectorized", lp.var, k.name))
            .with_hint("stage at a loop around the vectorized one: its body must stay free of loops"));
    }
    Ok(())
}

/// The intervals of the variables at the top of the body of the loop at `path`: the loops
/// around it, the loop itself, and the launch variables.
pub fn env_at(k: &Kernel, path: &Path) -> Vec<(String, Interval)> {
    let mut env: Vec<(String, Interval)> = Vec::new();
    for s in path.enclosing(&k.body) {
        if let Stmt::Launch { grid, block, .. } = s {
            for d in grid.iter().chain(block) {
                env.push((d.var.clone(), Interval::new(0, i64::from(d.extent) - 1)));
            }
        }
    }
    env.extend(loop_env(&k.body, path));
    env
}

/// Refuses a region of `buf` (`bytes_per` bytes an element) larger than a `local` stage, or a
/// `shared` one, may hold.
pub fn check_size(
    region: &Region,
    buf: &str,
    bytes_per: usize,
    shared: bool,
    kname: &str,
) -> Result<(), Diagnostic> {
    let (limit, what) = if shared { (MAX_SHARED_BYTES, "shared") } else { (MAX_LOCAL_BYTES, "local") };
    let shape = region.shape();
    let bytes = shape.iter().product::<usize>().saturating_mul(bytes_per);
    if bytes > limit {
        let dims: Vec<String> = shape.iter().map(usize::to_string).collect();
        return Err(Diagnostic::error(format!(
            "the region of `{buf}` in kernel {kname} is [{}], {bytes} bytes, over the {limit} bytes a {what} stage may hold",
            dims.join(", ")
        ))
        .with_hint("stage at an inner loop, or split the loops first so that one iteration touches a smaller tile"));
    }
    Ok(())
}

/// Every access of `buf` in `body` becomes an access of `cache` at its index in `region`
/// (stores too, with `writes`).
pub fn redirect(body: Vec<Stmt>, buf: &str, cache: &str, region: &Region, writes: bool) -> Vec<Stmt> {
    struct Redirect<'a> {
        buf: &'a str,
        cache: &'a str,
        region: &'a Region,
        writes: bool,
    }
    impl Mutator for Redirect<'_> {
        fn stmt(&mut self, s: Stmt) -> Vec<Stmt> {
            match mutate_stmt(self, s) {
                Stmt::Store { buf, index, value, span } if self.writes && buf.name == self.buf => {
                    let name = Name { name: self.cache.to_string(), span: buf.span };
                    vec![Stmt::Store { buf: name, index: self.region.restage(&index), value, span }]
                }
                s => vec![s],
            }
        }
        fn expr(&mut self, e: Expr) -> Expr {
            match mutate_expr(self, e) {
                Expr { kind: ExprKind::Load { buf, index }, span } if buf.name == self.buf => {
                    let name = Name { name: self.cache.to_string(), span: buf.span };
                    Expr { kind: ExprKind::Load { buf: name, index: self.region.restage(&index) }, span }
                }
                e => e,
            }
        }
    }
    Redirect { buf, cache, region, writes }.block(body)
}

/// After a rewrite inside the loop at `path`, each `parallel` loop around it (and the loop
/// itself) must still keep its iterations on distinct elements of `buf`.
pub fn check_parallel(k: &Kernel, path: &Path, buf: &str, step: &str) -> Result<(), Diagnostic> {
    let enclosing = path.enclosing(&k.body);
    for (i, s) in enclosing.iter().copied().chain([path.get(&k.body)]).enumerate() {
        let Stmt::Loop { var, kind: LoopKind::Parallel, body, .. } = s else { continue };
        let at = if i < enclosing.len() {
            Path { outer: path.outer[..i].to_vec(), index: path.outer[i].0 }
        } else {
            path.clone()
        };
        let range = loop_env(&k.body, &at).into_iter().find(|(v, _)| v == var).map(|(_, r)| r);
        let band = [BandLoop { var: var.clone(), range }];
        if let Some(d) = dependences(body, &band).into_iter().find(|d| d.buf == buf) {
            return Err(Diagnostic::error(format!(
                "{step} would let iterations of parallel loop `{var}` (kernel {}) touch the same element of `{buf}`: `{}` and `{}`",
                k.name, d.first, d.second
            ))
            .with_hint(format!(
                "stage before the loop is made parallel (`parallel` checks the copies then), at a loop whose regions \
                 of `{buf}` do not overlap"
            )));
        }
    }
    Ok(())
}

/// The kernel's `let`s of load-free values, each defined once, with earlier ones substituted.
fn inlinable_lets(body: &[Stmt]) -> HashMap<String, Expr> {
    let mut count: HashMap<&str, usize> = HashMap::new();
    for_each_stmt(body, &mut |s| {
        if let Stmt::Let { name, .. } | Stmt::Loop { var: name, .. } | Stmt::Alloc { name, .. } = s {
            *count.entry(name).or_default() += 1;
        }
    });
    let mut lets = HashMap::new();
    for_each_stmt(body, &mut |s| {
        if let Stmt::Let { name, value, .. } = s {
            if count[name.as_str()] == 1 && !has_load(value) {
                let v = substitute(value.clone(), &lets);
                lets.insert(name.clone(), v);
            }
        }
    });
    lets
}

/// The terms of `e` that use only fixed variables and those that use varying ones or none,
/// each with whether it is subtracted; `Err` names a fixed and a varying variable one term mixes.
type Terms = Vec<(Expr, bool)>;
fn split(e: &Expr, inner: &HashSet<String>) -> Result<(Terms, Terms), (String, String)> {
    let mut all = Vec::new();
    terms(e, false, &mut all);
    let (mut outer, mut varying) = (Vec::new(), Vec::new());
    for (t, neg) in all {
        let mut vars = Vec::new();
        ekb_ir::l1::visit::for_each_subexpr(&t, |x| {
            if let ExprKind::Var(v) = &x.kind {
                vars.push(v.clone());
            }
        });
        let fixed = vars.iter().find(|v| !inner.contains(*v));
        match (fixed, vars.iter().find(|v| inner.contains(*v))) {
            (Some(a), Some(b)) => return Err((a.clone(), b.clone())),
            (Some(_), None) => outer.push((t, neg)),
            (None, _) => varying.push((t, neg)),
        }
    }
    Ok((outer, varying))
}

/// The terms of a sum.
fn terms(e: &Expr, neg: bool, out: &mut Vec<(Expr, bool)>) {
    match &e.kind {
        ExprKind::Binary { op: BinOp::Add, lhs, rhs } => {
            terms(lhs, neg, out);
            terms(rhs, neg, out);
        }
        ExprKind::Binary { op: BinOp::Sub, lhs, rhs } => {
            terms(lhs, neg, out);
            terms(rhs, !neg, out);
        }
        ExprKind::Unary { op: UnOp::Neg, arg } => terms(arg, !neg, out),
        _ => out.push((e.clone(), neg)),
    }
}

/// The literal terms summed, and the others.
fn constants(ts: &[(Expr, bool)]) -> (Terms, i64) {
    let mut c = 0i64;
    let mut rest = Vec::new();
    for (t, neg) in ts {
        match t.kind {
            ExprKind::Int(v) => c += if *neg { -i64::from(v) } else { i64::from(v) },
            _ => rest.push((t.clone(), *neg)),
        }
    }
    (rest, c)
}

/// The sum of signed terms: the added ones first (`0` when there are none).
fn sum(ts: &[(Expr, bool)]) -> E {
    let (terms, c) = constants(ts);
    let mut out: Option<E> = None;
    for (t, _) in terms.iter().filter(|(_, neg)| !neg) {
        out = Some(match out.take() {
            Some(o) => o + E(t.clone()),
            None => E(t.clone()),
        });
    }
    for (t, _) in terms.iter().filter(|(_, neg)| *neg) {
        out = Some(match out.take() {
            Some(o) => o - E(t.clone()),
            None => -E(t.clone()),
        });
    }
    match out {
        Some(o) => o + ints(c),
        None => ints(c),
    }
}

/// A fixed part as text, the same for the same terms in any order.
fn key(ts: &[(Expr, bool)]) -> String {
    let mut parts: Vec<String> =
        ts.iter().map(|(t, neg)| format!("{}{}", if *neg { "-" } else { "+" }, print_expr(t))).collect();
    parts.sort();
    parts.join(" ")
}

/// Whether a store in `stmts` writes `buf`.
pub fn stores(stmts: &[Stmt], buf: &str) -> bool {
    ekb_ir::l1::visit::any_stmt(stmts, |s| matches!(s, Stmt::Store { buf: b, .. } if b.name == buf))
}

/// The type of the buffer `buf` as the body of the loop at `path` sees it: a parameter, or an
/// allocation in a block around the loop, before it.
pub fn buffer_type(k: &Kernel, path: &Path, buf: &str) -> Result<TensorType, Diagnostic> {
    let mut found = k.params.iter().find(|p| p.name == buf).map(|p| p.ty.clone());
    let mut visible: Vec<&str> = k.params.iter().map(|p| p.name.as_str()).collect();
    let mut block: &[Stmt] = &k.body;
    let levels = path.outer.iter().map(|&(i, c)| (i, Some(c))).chain([(path.index, None)]);
    for (i, c) in levels {
        for s in &block[..i] {
            if let Stmt::Alloc { name, ty, .. } = s {
                visible.push(name);
                if name == buf {
                    found = Some(ty.clone());
                }
            }
        }
        if let Some(c) = c {
            block = crate::handle::children(&block[i])[c];
        }
    }
    found.ok_or_else(|| {
        let mut d = Diagnostic::error(format!(
            "kernel {} has no buffer `{buf}` that loop `{}` sees",
            k.name,
            parts(path.get(&k.body)).var
        ))
        .with_expected(format!(
            "a parameter or an allocation around the loop: {}",
            quoted(visible.iter().copied())
        ));
        d.hint = ekb_ir::diag::did_you_mean(buf, visible.iter().copied());
        d
    })
}
