//! A schedule trace: the list of primitive applications that turns one L1 module into another,
//! as data (what a tuner mutates and stores, what an LLM writes) and as text.
//!
//! ```text
//! # tile the output columns of a matmul and put threads on the rows
//! split k0_matmul.j by 16 -> j_o, j_i
//! vectorize j_i
//! parallel i
//! ```
//!
//! One step per line (or separated by `;`), `#` to the end of the line is a comment. A loop is
//! named `KERNEL.VAR`, or `VAR` alone for a loop of the kernel the previous step named;
//! `KERNEL.VAR@N` is the N-th loop named `VAR` in program order, when a kernel reuses a name.
//! The grammar, step by step, is in `docs/schedules.md`. [`Trace::print`] writes the canonical
//! text (the kernel written where it changes), and parsing it gives the same trace.

use ekb_ir::l1::Scope;
use ekb_ir::Span;
use std::fmt;

/// A parsed trace.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Trace {
    pub steps: Vec<Step>,
}

/// One primitive application, with where it was written (`Span::NONE` when built in code).
/// Two steps are equal when they apply the same primitive, wherever they were written.
#[derive(Debug, Clone)]
pub struct Step {
    pub prim: Prim,
    pub span: Span,
}

impl PartialEq for Step {
    fn eq(&self, o: &Step) -> bool {
        self.prim == o.prim
    }
}

/// A loop of a kernel: `kernel.var`, the `nth` one of that name (1-based) when given.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct LoopRef {
    pub kernel: String,
    pub var: String,
    pub nth: Option<u32>,
}

/// The primitives. Each lives in its own file under `prim/`, with its legality check.
#[derive(Debug, Clone, PartialEq)]
pub enum Prim {
    /// `split K.v by F -> vo, vi`: `v` becomes `vo` (outer) and `vi` in `0..F` (inner).
    Split { lp: LoopRef, factor: u32, outer: String, inner: String },
    /// `reorder K.a, b, c`: the named loops of one perfect nest take the given order.
    Reorder { loops: Vec<LoopRef> },
    /// `fuse K.a, b -> f`: loop `b`, directly inside `a`, merges with it into `f`.
    Fuse { outer: LoopRef, inner: LoopRef, fused: String },
    /// `parallel K.v`: iterations on CPU threads.
    Parallel { lp: LoopRef },
    /// `vectorize K.v`: iterations as SIMD lanes.
    Vectorize { lp: LoopRef },
    /// `unroll K.v`: the body replicated by the backend.
    Unroll { lp: LoopRef },
    /// `compute_inline t`: the temp `t` is recomputed where it is read, and its kernel goes.
    ComputeInline { buffer: String },
    /// `bind K.v blockIdx.x`: the iterations of `v` become the blocks or threads of a launch.
    Bind { lp: LoopRef, axis: Axis },
    /// `rfactor K.v -> rf, c`: a reduction inside `v` keeps one partial result per iteration of
    /// `v` in `rf`, which loop `c` combines.
    Rfactor { lp: LoopRef, partials: String, combine: String },
    /// `pad K.buf by P`: the innermost dimension of the allocation `buf` grows by `P` elements.
    Pad { buf: BufRef, by: u32 },
    /// `storage_align K.buf axis A factor F offset O`: the stride of dimension `A` of the
    /// allocation `buf` grows to the next value with `stride % F == O`.
    StorageAlign { buf: BufRef, axis: u32, factor: u32, offset: u32 },
    /// `pack b at K.v -> bp layout 1, 0`: the region of `b` read inside `v` is copied, before
    /// `v`, into `bp` in the given layout, and `v` reads `bp`.
    Pack { buffer: String, lp: LoopRef, packed: String, layout: Vec<LayoutDim> },
    /// `decompose_reduction K.r`: the init and the final store of the reduction over `r` get
    /// loop nests of their own, the accumulator becoming the output element.
    DecomposeReduction { lp: LoopRef },
    /// `cache_read b at K.v -> c local|shared`: each iteration of `v` first copies the region of
    /// `b` it reads into a new allocation `c`, and reads that.
    CacheRead { buffer: String, at: LoopRef, cache: String, scope: Scope },
    /// `cache_write b at K.v -> c local|shared`: each iteration of `v` works on a copy `c` of the
    /// region of `b` it touches, copied back at its end.
    CacheWrite { buffer: String, at: LoopRef, cache: String, scope: Scope },
    /// `compute_at t at K.v`: the nest producing the `local` buffer `t` moves to the top of the
    /// body of `v`, computing only what each iteration reads.
    ComputeAt { buffer: String, at: LoopRef },
    /// `reverse_compute_at t at K.v`: the elementwise nest consuming `t`, after the nest holding
    /// `v`, moves to the end of the body of `v`, computing what each iteration has just written.
    ReverseComputeAt { buffer: String, at: LoopRef },
    /// `reverse_compute_inline t`: the elementwise reader of the temp `t` is folded into the
    /// producer's store, and its kernel goes.
    ReverseComputeInline { buffer: String },
}

/// A launch axis: `blockIdx.x`, `.y`, `.z` (a dimension of the launch's `grid(..)`: one block
/// per iteration) or `threadIdx.x`, `.y`, `.z` (of its `block(..)`: one thread per iteration).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Axis {
    /// A thread of a block (`threadIdx`), rather than a block of the grid (`blockIdx`).
    pub thread: bool,
    /// 0, 1, 2 for x, y, z.
    pub dim: usize,
}

/// An allocation of a kernel: `kernel.buf`, the `nth` one of that name (1-based) when given.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct BufRef {
    pub kernel: String,
    pub buf: String,
    pub nth: Option<u32>,
}

/// One dimension of a packed buffer, in terms of the dimensions of the buffer it copies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LayoutDim {
    /// `d`: dimension `d`.
    Dim(usize),
    /// `d/F`: which tile of `F` consecutive elements of dimension `d`.
    Tile(usize, u32),
    /// `d%F`: the position inside that tile.
    InTile(usize, u32),
}

impl Prim {
    /// The primitive's name, as written in a trace.
    pub fn name(&self) -> &'static str {
        match self {
            Prim::Split { .. } => "split",
            Prim::Reorder { .. } => "reorder",
            Prim::Fuse { .. } => "fuse",
            Prim::Parallel { .. } => "parallel",
            Prim::Vectorize { .. } => "vectorize",
            Prim::Unroll { .. } => "unroll",
            Prim::ComputeInline { .. } => "compute_inline",
            Prim::Bind { .. } => "bind",
            Prim::Rfactor { .. } => "rfactor",
            Prim::Pad { .. } => "pad",
            Prim::StorageAlign { .. } => "storage_align",
            Prim::Pack { .. } => "pack",
            Prim::DecomposeReduction { .. } => "decompose_reduction",
            Prim::CacheRead { .. } => "cache_read",
            Prim::CacheWrite { .. } => "cache_write",
            Prim::ComputeAt { .. } => "compute_at",
            Prim::ReverseComputeInline { .. } => "reverse_compute_inline",
            Prim::ReverseComputeAt { .. } => "reverse_compute_at",
        }
    }

    /// The loops the step names, in order.
    pub fn loops(&self) -> Vec<&LoopRef> {
        match self {
            Prim::Split { lp, .. } | Prim::Parallel { lp } | Prim::Vectorize { lp } | Prim::Unroll { lp } => {
                vec![lp]
            }
            Prim::Reorder { loops } => loops.iter().collect(),
            Prim::Fuse { outer, inner, .. } => vec![outer, inner],
            Prim::Bind { lp, .. } | Prim::Rfactor { lp, .. } | Prim::Pack { lp, .. } => vec![lp],
            // A buffer is always written with its kernel, so it leaves the current kernel alone.
            Prim::Pad { .. } | Prim::StorageAlign { .. } => Vec::new(),
            Prim::ComputeInline { .. } | Prim::ReverseComputeInline { .. } => Vec::new(),
            Prim::DecomposeReduction { lp } => vec![lp],
            Prim::CacheRead { at, .. }
            | Prim::CacheWrite { at, .. }
            | Prim::ComputeAt { at, .. }
            | Prim::ReverseComputeAt { at, .. } => vec![at],
        }
    }
}

/// Every primitive name, for "did you mean" and for `--help`.
pub const PRIMITIVES: [&str; 18] = [
    "split",
    "reorder",
    "fuse",
    "parallel",
    "vectorize",
    "unroll",
    "compute_inline",
    "bind",
    "rfactor",
    "pad",
    "storage_align",
    "pack",
    "decompose_reduction",
    "cache_read",
    "cache_write",
    "compute_at",
    "reverse_compute_inline",
    "reverse_compute_at",
];

impl LoopRef {
    pub fn new(kernel: impl Into<String>, var: impl Into<String>) -> LoopRef {
        LoopRef { kernel: kernel.into(), var: var.into(), nth: None }
    }

    /// `var` or `var@n`, without the kernel.
    fn local(&self) -> String {
        match self.nth {
            Some(n) => format!("{}@{n}", self.var),
            None => self.var.clone(),
        }
    }
}

impl fmt::Display for LoopRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.kernel, self.local())
    }
}

impl Axis {
    /// The axes as a trace writes them, `blockIdx.x` .. `threadIdx.z`.
    pub const NAMES: [&'static str; 6] =
        ["blockIdx.x", "blockIdx.y", "blockIdx.z", "threadIdx.x", "threadIdx.y", "threadIdx.z"];

    pub fn from_name(s: &str) -> Option<Axis> {
        let i = Axis::NAMES.iter().position(|n| *n == s)?;
        Some(Axis { thread: i >= 3, dim: i % 3 })
    }

    pub fn name(self) -> &'static str {
        Axis::NAMES[usize::from(self.thread) * 3 + self.dim]
    }
}

impl fmt::Display for Axis {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl fmt::Display for BufRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.kernel, self.buf)?;
        match self.nth {
            Some(n) => write!(f, "@{n}"),
            None => Ok(()),
        }
    }
}

impl fmt::Display for LayoutDim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LayoutDim::Dim(d) => write!(f, "{d}"),
            LayoutDim::Tile(d, t) => write!(f, "{d}/{t}"),
            LayoutDim::InTile(d, t) => write!(f, "{d}%{t}"),
        }
    }
}

impl Step {
    pub fn new(prim: Prim) -> Step {
        Step { prim, span: Span::NONE }
    }

    /// The step as text, every loop with its kernel (for diagnostics: self-contained).
    pub fn text(&self) -> String {
        print_step(&self.prim, None)
    }
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text())
    }
}

/// One step; loops of kernel `current` are written without it.
fn print_step(p: &Prim, current: Option<&str>) -> String {
    let mut cur = current.map(str::to_string);
    let mut lp = |l: &LoopRef| {
        let s = if cur.as_deref() == Some(l.kernel.as_str()) { l.local() } else { l.to_string() };
        cur = Some(l.kernel.clone());
        s
    };
    match p {
        Prim::Split { lp: l, factor, outer, inner } => {
            format!("split {} by {factor} -> {outer}, {inner}", lp(l))
        }
        Prim::Reorder { loops } => {
            let names: Vec<String> = loops.iter().map(&mut lp).collect();
            format!("reorder {}", names.join(", "))
        }
        Prim::Fuse { outer, inner, fused } => {
            let (a, b) = (lp(outer), lp(inner));
            format!("fuse {a}, {b} -> {fused}")
        }
        Prim::Parallel { lp: l } | Prim::Vectorize { lp: l } | Prim::Unroll { lp: l } => {
            format!("{} {}", p.name(), lp(l))
        }
        Prim::ComputeInline { buffer } => format!("compute_inline {buffer}"),
        Prim::Bind { lp: l, axis } => format!("bind {} {axis}", lp(l)),
        Prim::Rfactor { lp: l, partials, combine } => format!("rfactor {} -> {partials}, {combine}", lp(l)),
        Prim::Pad { buf, by } => format!("pad {buf} by {by}"),
        Prim::StorageAlign { buf, axis, factor, offset } => {
            format!("storage_align {buf} axis {axis} factor {factor} offset {offset}")
        }
        Prim::Pack { buffer, lp: l, packed, layout } => {
            let dims: Vec<String> = layout.iter().map(LayoutDim::to_string).collect();
            format!("pack {buffer} at {} -> {packed} layout {}", lp(l), dims.join(", "))
        }
        Prim::DecomposeReduction { lp: l } => format!("decompose_reduction {}", lp(l)),
        Prim::CacheRead { buffer, at, cache, scope } | Prim::CacheWrite { buffer, at, cache, scope } => {
            format!("{} {buffer} at {} -> {cache} {}", p.name(), lp(at), scope.name())
        }
        Prim::ComputeAt { buffer, at } | Prim::ReverseComputeAt { buffer, at } => {
            format!("{} {buffer} at {}", p.name(), lp(at))
        }
        Prim::ReverseComputeInline { buffer } => format!("reverse_compute_inline {buffer}"),
    }
}

impl Trace {
    /// The canonical text: one step per line, a loop's kernel written only where it differs
    /// from the kernel of the loop before it.
    pub fn print(&self) -> String {
        let mut out = String::new();
        let mut current: Option<String> = None;
        for s in &self.steps {
            out.push_str(&print_step(&s.prim, current.as_deref()));
            out.push('\n');
            if let Some(l) = s.prim.loops().last() {
                current = Some(l.kernel.clone());
            }
        }
        out
    }
}
