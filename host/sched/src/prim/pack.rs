//! `pack b at K.v -> bp layout L`: the region of buffer `b` that loop `v` reads is copied,
//! right before `v`, into a new `local` allocation `bp` laid out as `L` says, and every read of
//! `b` inside `v` reads `bp` instead. `L` lists the dimensions of `bp` in terms of those of `b`,
//! by position: `d` is dimension `d` of `b`; `d/F` and `d%F` are its tiles of `F` elements and
//! the position inside a tile. `layout 1, 0` transposes a matrix; `layout 0/4, 1, 0%4` turns
//! `b[k, n]` into panels `bp[k / 4, n, k % 4]`, so that a matmul reads four consecutive `k` of
//! one column next to each other.
//!
//! The region is a box: per dimension, the range of the indices of the reads (the interval
//! analysis over the loops, launch variables and `let`s around them, cut to the buffer's
//! extent; `if` conditions do not narrow it). It does not follow the loops around `v`: packed
//! at an inner loop, the box covers what every iteration of the outer loops reads, and is
//! copied again on each. Reads become `bp[L(e0 - lo0, e1 - lo1, ..)]`, `lo` the box's corner.
//!
//! Legal when `b` is a parameter or an allocation of the kernel visible at `v` that `v` reads
//! and never writes (so a copy made before it stays current), with at least one dimension;
//! no `parallel` loop or launch around `v` writes `b` (the box may cover what other threads
//! write, and a barrier inside `v` may order such a write before a read); the box of every
//! dimension has a known range; `L` places each dimension of `b` exactly once (`d`, or both
//! `d/F` and `d%F` with one `F`); and `F` divides the box's extent in that dimension. Limits:
//! the copy is `local` (each thread its own, on the stack: a target's stack limit bounds it),
//! made by one thread, never staged cooperatively in `shared` memory; loads are copied exactly
//! (an f16 or i8 element stores back the value it loaded).

use super::{buffer_type, check_new_name, locate, parts, scope_env};
use crate::handle::quoted;
use crate::trace::{LayoutDim, LoopRef};
use ekb_ir::diag::did_you_mean;
use ekb_ir::l1::analysis::access::{accesses, regions};
use ekb_ir::l1::build::{int, ints, wrap, Buf, Header, Names, E};
use ekb_ir::l1::visit::{any_stmt, defined_names, mutate_expr, Mutator};
use ekb_ir::l1::{Expr, ExprKind, LoopKind, Module, Stmt};
use ekb_ir::{Diagnostic, Span, TensorType};

pub fn apply(
    m: &mut Module,
    buffer: &str,
    r: &LoopRef,
    packed: &str,
    layout: &[LayoutDim],
) -> Result<(), Diagnostic> {
    let (k, path) = locate(m, r)?;
    check_new_name(k, packed)?;
    let kname = k.name.clone();
    let v_stmt = path.get(&k.body);
    let all = accesses(std::slice::from_ref(v_stmt));
    let Some(ty) = buffer_type(k, &path, buffer).cloned() else {
        let inside =
            any_stmt(parts(v_stmt).body, |s| matches!(s, Stmt::Alloc { name, .. } if name == buffer));
        let read: Vec<&str> = {
            let mut v: Vec<&str> = all.iter().filter(|a| !a.write).map(|a| a.buf).collect();
            v.sort_unstable();
            v.dedup();
            v
        };
        let mut d = Diagnostic::error(if inside {
            format!("`{buffer}` is allocated inside loop `{}` of kernel {kname}: no copy of it can precede the loop", r.var)
        } else {
            format!("kernel {kname} has no buffer `{buffer}` at loop `{}`", r.var)
        })
        .with_expected(format!("a buffer the loop reads: {}", quoted(read.iter().copied())));
        d.hint = did_you_mean(buffer, read);
        return Err(d);
    };
    if !all.iter().any(|a| a.buf == buffer) {
        return Err(Diagnostic::error(format!(
            "loop `{}` of kernel {kname} does not read `{buffer}`",
            r.var
        ))
        .with_hint("pack a buffer at a loop that reads it"));
    }
    if all.iter().any(|a| a.buf == buffer && a.write) {
        return Err(Diagnostic::error(format!(
            "loop `{}` of kernel {kname} writes `{buffer}`: a copy made before the loop would go stale",
            r.var
        ))
        .with_hint("pack a buffer the loop only reads (an input, or a tile written before it)"));
    }
    // Where other threads run, they may write what the box covers (before or after a barrier of
    // `v`): the buffer must be one no thread writes there.
    for s in path.enclosing(&k.body) {
        let (threads, body) = match s {
            Stmt::Loop { var, kind: LoopKind::Parallel, body, .. } => {
                (format!("parallel loop `{var}`"), body)
            }
            Stmt::Launch { body, .. } => ("the launch".to_string(), body),
            _ => continue,
        };
        if accesses(body).iter().any(|a| a.buf == buffer && a.write) {
            return Err(Diagnostic::error(format!(
                "`{buffer}` is written inside {threads} of kernel {kname}, around loop `{}`: the copy would read \
                 elements other threads write",
                r.var
            ))
            .with_hint("pack a buffer that the threads around the loop only read"));
        }
    }
    let rank = ty.rank();
    if rank == 0 {
        return Err(Diagnostic::error(format!("`{buffer}` ({ty}) has no dimension to lay out"))
            .with_hint("pack a buffer with at least one dimension"));
    }
    check_layout(layout, buffer, &ty, packed)?;
    // The box of `b` the loop reads.
    let env = scope_env(&k.body, &path);
    let look = |v: &str| env.iter().rev().find(|(n, _)| n == v).map(|(_, iv)| *iv);
    let region = regions(std::slice::from_ref(v_stmt), &look)
        .into_iter()
        .find(|g| g.buf == buffer && !g.write)
        .expect("the loop reads the buffer");
    let mut corner = Vec::new();
    let mut extent = Vec::new();
    for (d, (iv, &size)) in region.dims.iter().zip(&ty.shape).enumerate() {
        let Some(iv) = iv else {
            return Err(Diagnostic::error(format!(
                "the reads of `{buffer}` in loop `{}` of kernel {kname} span an unknown range of dimension {d}",
                r.var
            ))
            .with_hint("pack a buffer whose indices are loop or launch variables (and sums of them) with literal bounds"));
        };
        if iv.lo >= size as i64 || iv.hi < 0 {
            return Err(Diagnostic::error(format!(
                "the reads of `{buffer}` in loop `{}` of kernel {kname} range over [{}, {}] in dimension {d}, outside its extent {size}",
                r.var, iv.lo, iv.hi
            ))
            .with_hint("pack a buffer at a loop whose reads of it can happen"));
        }
        let (lo, hi) = (iv.lo.max(0), iv.hi.min(size as i64 - 1));
        corner.push(lo);
        extent.push((hi - lo + 1) as usize);
    }
    for l in layout {
        if let LayoutDim::Tile(d, f) = *l {
            if !extent[d].is_multiple_of(f as usize) {
                return Err(Diagnostic::error(format!(
                    "dimension {d} of the region of `{buffer}` read in loop `{}` of kernel {kname} holds {} elements \
                     (from {}), not a multiple of the tile size {f}",
                    r.var, extent[d], corner[d]
                ))
                .with_hint(format!("choose a tile size that divides {}", extent[d])));
            }
        }
    }
    // The copy: `bp[L(p)] = b[corner + p]` over the box, then the loop reading `bp`.
    let shape: Vec<usize> = layout
        .iter()
        .map(|l| match *l {
            LayoutDim::Dim(d) => extent[d],
            LayoutDim::Tile(d, f) => extent[d] / f as usize,
            LayoutDim::InTile(_, f) => f as usize,
        })
        .collect();
    let src = Buf::new(buffer, ty.clone());
    let dst = Buf::new(packed, TensorType::new(ty.dtype, shape));
    let mut names = Names::default();
    for n in defined_names(k) {
        names.reserve(&n);
    }
    names.reserve(packed);
    let vars: Vec<String> = (0..rank).map(|d| names.fresh(&format!("{packed}_{d}"))).collect();
    let headers =
        vars.iter().zip(&extent).map(|(v, &n)| Header::new(LoopKind::Serial, v, int(0), int(n))).collect();
    let p: Vec<E> = vars.iter().map(|v| ekb_ir::l1::build::var(v)).collect();
    let at: Vec<E> = p.iter().zip(&corner).map(|(p, &c)| ints(c) + p.clone()).collect();
    let copy = wrap(headers, Vec::new(), vec![dst.store(&place(layout, &p), src.load(&at))]);
    let mut read = Reread { buffer, dst: &dst, corner: &corner, layout };
    let block = path.block_mut(&mut k.body);
    let v_stmt = block[path.index].clone();
    let mut new = vec![Stmt::Alloc {
        name: packed.to_string(),
        ty: dst.ty.clone(),
        scope: ekb_ir::l1::Scope::Local,
        span: Span::NONE,
    }];
    new.extend(copy);
    new.extend(read.stmt(v_stmt));
    block.splice(path.index..=path.index, new);
    Ok(())
}

/// Each dimension of `b` placed exactly once, none beyond its rank.
fn check_layout(layout: &[LayoutDim], buffer: &str, ty: &TensorType, packed: &str) -> Result<(), Diagnostic> {
    let dim = |l: &LayoutDim| match *l {
        LayoutDim::Dim(d) | LayoutDim::Tile(d, _) | LayoutDim::InTile(d, _) => d,
    };
    let expected =
        "each dimension once, as `d` or as both `d/F` and `d%F` (`layout 1, 0` transposes a matrix)";
    if let Some(l) = layout.iter().find(|l| dim(l) >= ty.rank()) {
        return Err(Diagnostic::error(format!(
            "the layout of `{packed}` names dimension {}, but `{buffer}` ({ty}) has {}",
            dim(l),
            ty.rank()
        ))
        .with_expected(expected));
    }
    for d in 0..ty.rank() {
        let uses: Vec<&LayoutDim> = layout.iter().filter(|l| dim(l) == d).collect();
        let once = match uses.as_slice() {
            [LayoutDim::Dim(_)] => true,
            [LayoutDim::Tile(_, f), LayoutDim::InTile(_, g)]
            | [LayoutDim::InTile(_, g), LayoutDim::Tile(_, f)] => f == g,
            _ => false,
        };
        if !once {
            return Err(Diagnostic::error(format!(
                "the layout of `{packed}` does not place dimension {d} of `{buffer}` exactly once"
            ))
            .with_expected(expected));
        }
    }
    Ok(())
}

/// The index of the packed buffer for `rel`, the offsets into the box along each dimension of `b`.
fn place(layout: &[LayoutDim], rel: &[E]) -> Vec<E> {
    layout
        .iter()
        .map(|l| match *l {
            LayoutDim::Dim(d) => rel[d].clone(),
            LayoutDim::Tile(d, f) => rel[d].clone() / int(f as usize),
            LayoutDim::InTile(d, f) => rel[d].clone() % int(f as usize),
        })
        .collect()
}

/// Reads of `buffer` become reads of the packed copy.
struct Reread<'a> {
    buffer: &'a str,
    dst: &'a Buf,
    corner: &'a [i64],
    layout: &'a [LayoutDim],
}

impl Mutator for Reread<'_> {
    fn expr(&mut self, e: Expr) -> Expr {
        let e = mutate_expr(self, e);
        match e.kind {
            ExprKind::Load { buf, index } if buf.name == self.buffer => {
                let rel: Vec<E> = index.into_iter().zip(self.corner).map(|(i, &c)| E(i) - ints(c)).collect();
                self.dst.load(&place(self.layout, &rel)).0
            }
            kind => Expr { kind, span: e.span },
        }
    }
}
