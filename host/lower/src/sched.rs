//! Loop-nest layouts shared by every operator family, and the per-kernel lowering context.
//!
//! The naive schedule is a serial loop per dimension. The default CPU schedule puts threads on
//! the outer loops and SIMD lanes on the innermost contiguous loop:
//! - **Threads** only when an operator does at least `threads.min_work` scalar operations
//!   ([`crate::Knobs`]; below that, the fork-join cost of a few microseconds is comparable to
//!   the work itself). The leading dimensions are flattened into one `parallel` loop until it
//!   has at least `threads.per_core` iterations per core (indices recovered with `/` and `%`), so a small first
//!   dimension (a batch of 1) still spreads over every core.
//! - **Lanes**: the innermost loop, over the last (contiguous) dimension, is `vectorize`d.
//!
//! Dimensions of extent 1 get no loop at all: their index is the literal 0. Every index these
//! helpers produce lies within its dimension by interval reasoning alone (`p / s % d` for a
//! flattened loop), which is what the verifier's bound analysis can confirm.

use crate::recipe::Knob;
use crate::{Knobs, Schedule};
use ekb_ir::l1::build::{int, let_, loop_, var, wrap, Buf, Header, Names, E};
use ekb_ir::l1::{LoopKind, Stmt};
use ekb_ir::{TargetProfile, TensorType};

/// What lowering one node sees: the schedule, the target, the kernel's name supply, and the
/// recipe's knobs.
pub struct Cx<'a> {
    pub schedule: Schedule,
    pub target: &'a TargetProfile,
    pub names: Names,
    pub knobs: Knobs,
    /// The node is a fusion group's member folded into another kernel under the default
    /// schedule: it gets the naive schedule's plain nests, which the folding needs, and the
    /// default schedule's arithmetic.
    pub folded: bool,
    /// Parameters the kernel reads under another shape than their operand's (see
    /// [`Cx::view`]), in the order they were asked for.
    pub views: Vec<View>,
    /// Operands never read through a view: a producer a fusion group folds into this kernel
    /// (`compute_inline` rewrites only reads under the operand's own shape), a slice or a
    /// transpose a later step may read from its operand.
    pub own_shape: Vec<String>,
}

/// A kernel parameter reading an operand's buffer under another shape of the same element
/// type and count (docs/ir-l1.md: a parameter may view the buffer a run passes it).
#[derive(Debug, Clone)]
pub struct View {
    /// The parameter's name, fresh in the kernel.
    pub name: String,
    /// The operand's parameter name: the run passes its buffer.
    pub of: String,
    pub ty: TensorType,
}

impl<'a> Cx<'a> {
    pub fn new(schedule: Schedule, target: &'a TargetProfile, names: Names, knobs: Knobs) -> Self {
        Cx { schedule, target, names, knobs, folded: false, views: Vec::new(), own_shape: Vec::new() }
    }

    /// Operand `b` read under `shape` (its element count): a parameter of its own, bound to
    /// the same buffer. An operand the body then never reads directly leaves the kernel's
    /// parameters.
    pub fn view(&mut self, b: &Buf, shape: &[usize]) -> Buf {
        let ty = TensorType::new(b.ty.dtype, shape.to_vec());
        assert_eq!(ty.numel(), b.ty.numel(), "a view of `{}` keeps its element count", b.name);
        let name = self.fresh(&format!("{}_view", b.name));
        self.views.push(View { name: name.clone(), of: b.name.clone(), ty: ty.clone() });
        Buf::new(name, ty)
    }

    /// Whether operand `b` may be read through a view ([`Cx::own_shape`]).
    pub fn can_view(&self, b: &Buf) -> bool {
        !self.own_shape.contains(&b.name)
    }

    pub fn naive(&self) -> bool {
        self.schedule == Schedule::Naive
    }

    /// Whether the arithmetic is the baseline's: the naive schedule's, not a folded member's.
    pub fn baseline_arithmetic(&self) -> bool {
        self.naive() && !self.folded
    }

    pub fn cores(&self) -> usize {
        self.target.cpu_cores() as usize
    }

    /// f32 lanes of one SIMD register.
    pub fn lanes(&self) -> usize {
        self.target.cpu_f32_lanes() as usize
    }

    /// The value of a knob of the default schedule.
    pub fn knob(&self, k: Knob) -> usize {
        self.knobs.get(k)
    }

    /// Parallel iterations wanted per core, so that uneven iteration costs still balance.
    pub fn per_core(&self) -> usize {
        self.knob(Knob::ThreadsPerCore)
    }

    /// Whether an operator doing `work` scalar operations should run on several threads.
    pub fn wants_threads(&self, work: usize) -> bool {
        self.schedule == Schedule::Default && self.cores() > 1 && work >= self.knob(Knob::ThreadsMinWork)
    }

    /// A name unused so far in this kernel.
    pub fn fresh(&mut self, base: &str) -> String {
        self.names.fresh(base)
    }

    /// The loop kind for an innermost contiguous loop: `vectorize` under the default schedule
    /// (when there is more than one iteration), else `for`.
    pub fn inner_kind(&self, extent: usize) -> LoopKind {
        if self.schedule == Schedule::Default && extent > 1 {
            LoopKind::Vectorize
        } else {
            LoopKind::Serial
        }
    }
}

/// A loop nest under construction: headers outermost first, `let`s at the top of each loop
/// body, and the index expression of every dimension it iterates.
#[derive(Debug, Default)]
pub struct Nest {
    headers: Vec<Header>,
    prologues: Vec<Vec<Stmt>>,
    pub idx: Vec<E>,
}

impl Nest {
    /// Adds a loop inside the current innermost one and returns its variable.
    pub fn push(&mut self, kind: LoopKind, var_name: &str, lo: E, hi: E) -> E {
        self.headers.push(Header::new(kind, var_name, lo, hi));
        self.prologues.push(Vec::new());
        var(var_name)
    }

    /// Adds a statement (a `let`) at the top of the innermost loop so far.
    pub fn prologue(&mut self, s: Stmt) {
        self.prologues.last_mut().expect("a prologue needs an enclosing loop").push(s);
    }

    /// Appends another nest inside this one.
    pub fn extend(&mut self, inner: Nest) {
        self.headers.extend(inner.headers);
        self.prologues.extend(inner.prologues);
        self.idx.extend(inner.idx);
    }

    /// The statements: the loops around `body`.
    pub fn wrap(self, body: Vec<Stmt>) -> Vec<Stmt> {
        wrap(self.headers, self.prologues, body)
    }
}

/// Serial loops over `dims` (variables named `{base}{d}`); extent-1 dims get index 0.
pub fn serial(cx: &mut Cx, dims: &[usize], base: &str) -> Nest {
    serial_from(cx, dims, base, 0)
}

/// `serial` over dims numbered from `first` in the variable names.
fn serial_from(cx: &mut Cx, dims: &[usize], base: &str, first: usize) -> Nest {
    let mut nest = Nest::default();
    for (d, &n) in dims.iter().enumerate() {
        if n == 1 {
            nest.idx.push(int(0));
        } else {
            let v = cx.fresh(&format!("{base}{}", first + d));
            let e = nest.push(LoopKind::Serial, &v, int(0), int(n));
            nest.idx.push(e);
        }
    }
    nest
}

/// Loops over `dims`. With `threads`, the leading dims are flattened into one `parallel` loop
/// of at least `cores * threads.per_core` iterations where the dims allow it (fewer dims when the
/// first is already large enough); the rest are serial.
pub fn outer(cx: &mut Cx, dims: &[usize], threads: bool, base: &str) -> Nest {
    if !threads {
        return serial(cx, dims, base);
    }
    let want = cx.cores() * cx.per_core();
    // The shortest prefix reaching `want` iterations (all dims if none does).
    let mut k = 0;
    let mut prod = 1;
    while k < dims.len() && prod < want {
        prod *= dims[k];
        k += 1;
    }
    if prod <= 1 {
        return serial(cx, dims, base);
    }
    let mut nest = Nest::default();
    let live: Vec<usize> = (0..k).filter(|&d| dims[d] > 1).collect();
    if live.len() == 1 {
        let d = live[0];
        let v = cx.fresh(&format!("{base}{d}"));
        let e = nest.push(LoopKind::Parallel, &v, int(0), int(dims[d]));
        nest.idx = (0..k).map(|dd| if dd == d { e.clone() } else { int(0) }).collect();
    } else {
        let p = cx.fresh("p");
        let pv = nest.push(LoopKind::Parallel, &p, int(0), int(prod));
        let mut stride = prod;
        for (d, &n) in dims[..k].iter().enumerate() {
            if n == 1 {
                nest.idx.push(int(0));
                continue;
            }
            stride /= n;
            let v = cx.fresh(&format!("{base}{d}"));
            let mut e = pv.clone() / int(stride);
            if d != live[0] {
                e = e % int(n);
            }
            nest.prologue(let_(&v, e));
            nest.idx.push(var(&v));
        }
    }
    let rest = serial_from(cx, &dims[k..], base, k);
    nest.extend(rest);
    nest
}

/// The default elementwise layout over `shape`, calling `body` with one index per dim:
/// threads over the leading dims (or, when those give too little parallel work, over chunks of
/// the last dim), and the last dim vectorized. The naive schedule is a serial nest. `work` is
/// the scalar operations per element, for the threading threshold.
pub fn elementwise(
    cx: &mut Cx,
    shape: &[usize],
    work: usize,
    body: impl FnOnce(&mut Cx, &[E]) -> Vec<Stmt>,
) -> Vec<Stmt> {
    let r = shape.len();
    if r == 0 {
        return body(cx, &[]);
    }
    if cx.naive() {
        let nest = serial(cx, shape, "i");
        let b = body(cx, &nest.idx);
        return nest.wrap(b);
    }
    let numel: usize = shape.iter().product();
    let threads = cx.wants_threads(numel * work);
    let (prefix, last) = (&shape[..r - 1], shape[r - 1]);
    let prefix_iters: usize = prefix.iter().product();
    let chunk = chunk_size(cx, last);
    if threads && prefix_iters < cx.cores() * cx.per_core() && last >= 2 * chunk {
        // Too few rows for the threads: split the last dim into parallel chunks.
        let mut nest = serial(cx, prefix, "i");
        let c = cx.fresh("c");
        let cv = nest.push(LoopKind::Parallel, &c, int(0), int(last.div_ceil(chunk)));
        let j = cx.fresh(&format!("i{}", r - 1));
        let lo = cv * int(chunk);
        let jv = nest.push(LoopKind::Vectorize, &j, lo.clone(), (lo + int(chunk)).min(int(last)));
        nest.idx.push(jv);
        let b = body(cx, &nest.idx);
        return nest.wrap(b);
    }
    let mut nest = outer(cx, prefix, threads, "i");
    if last == 1 {
        nest.idx.push(int(0));
    } else {
        let j = cx.fresh(&format!("i{}", r - 1));
        let kind = cx.inner_kind(last);
        let jv = nest.push(kind, &j, int(0), int(last));
        nest.idx.push(jv);
    }
    let b = body(cx, &nest.idx);
    nest.wrap(b)
}

/// Elements per parallel chunk when a single long dimension is split over the threads: about
/// `threads.per_core` chunks per core, rounded up to whole cache-line multiples of SIMD vectors.
fn chunk_size(cx: &Cx, n: usize) -> usize {
    let per = n.div_ceil(cx.cores() * cx.per_core());
    let unit = cx.lanes() * 4;
    per.div_ceil(unit).max(1) * unit
}

/// A loop `kind v in 0..n` around `body` (a convenience for fixed-extent inner loops).
pub fn simple_loop(kind: LoopKind, v: &str, n: usize, body: Vec<Stmt>) -> Stmt {
    loop_(kind, v, int(0), int(n), body)
}

/// Covers `0..n` with tiles of `t` elements: `body(base, len)` inside a loop `kind v in
/// 0..n/t` (with `base = v*t`, `len = t`) for the full tiles, then once more with a literal
/// base for the remainder. Each tile has a literal length, so a local buffer of that length
/// indexed by an in-tile index is provably in bounds, and so is `base + j` in `0..n`.
pub fn tiles(
    cx: &mut Cx,
    n: usize,
    t: usize,
    kind: LoopKind,
    base: &str,
    mut body: impl FnMut(&mut Cx, E, usize) -> Vec<Stmt>,
) -> Vec<Stmt> {
    if n <= t {
        return body(cx, int(0), n);
    }
    let (full, rem) = (n / t, n % t);
    let mut out = if full == 1 {
        body(cx, int(0), t)
    } else {
        let v = cx.fresh(base);
        let b = body(cx, var(&v) * int(t), t);
        vec![loop_(kind, &v, int(0), int(full), b)]
    };
    if rem > 0 {
        out.extend(body(cx, int(full * t), rem));
    }
    out
}

/// Covers `0..n` (`n >= t`) with tiles of exactly `t` elements: the full tiles as [`tiles`]
/// makes them, and the remainder as one more full tile ending at `n`, overlapping the one
/// before. Only for a body whose tile computes each element's final value on its own (a
/// reduction into a fresh accumulator, then one store), which computing twice does not change:
/// every tile then has the vector length of a full one.
pub fn overlapping_tiles(
    cx: &mut Cx,
    n: usize,
    t: usize,
    kind: LoopKind,
    base: &str,
    mut body: impl FnMut(&mut Cx, E, usize) -> Vec<Stmt>,
) -> Vec<Stmt> {
    assert!(n >= t && t > 0, "overlapping tiles need at least one full tile");
    let mut out = tiles(cx, n - n % t, t, kind, base, &mut body);
    if !n.is_multiple_of(t) {
        out.extend(body(cx, int(n - t), t));
    }
    out
}
