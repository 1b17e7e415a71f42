//! `decompose_reduction K.r`: the reduction over loop `r` is split from its initialisation and
//! its final store, so that `r` can then be reordered with the loops around it (tiled). Two
//! rewrites, in order:
//!
//! 1. A scalar accumulator becomes the output element. When the store just before `r` sets a
//!    one-element `local` allocation of the same block (`alloc acc: f32[1] local; acc[0] = 0.0`)
//!    and the store just after it writes it to one element (`y[I] = f(acc[0])`) of a buffer of
//!    the same dtype, every access of `acc` becomes an access of `y[I]` and the allocation goes:
//!    `y[I] = 0.0; for r { y[I] = y[I] + .. }; y[I] = f(y[I])` (the last store is dropped when
//!    `f` is the identity). The same values are stored in the same order, so this is exact.
//! 2. The loops around `r` are distributed: the loops enclosing `r`, up to the first statement
//!    that is not a loop or whose body holds more than `let`s and the nest, are copied around
//!    each of the init store, `r`, and the store after `r` (if any): three nests, in that order,
//!    where there was one. The nest around `r` keeps the loops' names; the others' loops are named
//!    `v_init` and `v_epi`.
//!
//! Legal when: `r` is outside any `launch`; its block holds only `let`s, the init store just
//! before `r`, `r`, and at most one store after it (once the accumulator is gone); the
//! accumulator is read and written nowhere else, is indexed by literal zeros, and the output
//! element's indices read no memory and the output is not otherwise touched while it
//! accumulates; the copied loops' bounds read no memory and their `let`s read nothing the nests
//! write; and no two accesses (`analysis::deps` over the copied loops) may touch one element
//! from different iterations, so that running all the inits, then all the updates, then all
//! the final stores keeps every element's order of accesses.

use super::{locate, loop_env, loop_range, parts, range_in};
use crate::handle::{children, quoted, Path};
use crate::trace::LoopRef;
use ekb_ir::l1::analysis::deps::{dependences, BandLoop};
use ekb_ir::l1::build::{loop_, Names, E};
use ekb_ir::l1::print::print_expr;
use ekb_ir::l1::visit::{
    any_stmt, defined_names, for_each_expr, for_each_stmt, for_each_subexpr, has_load, mutate_expr,
    mutate_stmt, names_used, Mutator,
};
use ekb_ir::l1::{Expr, ExprKind, Kernel, Module, Name, Scope, Stmt};
use ekb_ir::{DType, Diagnostic};

pub fn apply(m: &mut Module, r: &LoopRef) -> Result<(), Diagnostic> {
    let (k, path) = locate(m, r)?;
    let kname = k.name.clone();
    let enclosing = path.enclosing(&k.body);
    if enclosing.iter().any(|s| matches!(s, Stmt::Launch { .. })) {
        return Err(Diagnostic::error(format!("loop `{}` of kernel {kname} is inside a `launch`", r.var))
            .with_hint("decompose reductions before the loops are bound to GPU threads"));
    }
    let mut block = path.block(&k.body).to_vec();
    let Some(Stmt::Store { buf, .. }) = path.index.checked_sub(1).map(|i| &block[i]) else {
        return Err(Diagnostic::error(format!(
            "the statement before loop `{}` of kernel {kname} is not a store initialising the reduction",
            r.var
        ))
        .with_hint("name the reduction loop whose accumulator is set just before it (`acc[0] = 0.0`, `y[i, j] = 0.0`)"));
    };
    let acc = buf.name.clone();
    let folded = block.iter().any(
        |s| matches!(s, Stmt::Alloc { name, ty, scope: Scope::Local, .. } if *name == acc && ty.numel() == 1),
    );
    if folded {
        fold(k, &mut block, path.index, &acc, &r.var)?;
    } else if !updates(parts(&block[path.index]).body, &block[path.index - 1]) {
        return Err(Diagnostic::error(format!(
            "loop `{}` of kernel {kname} does not update `{acc}` at the element its init stores",
            r.var
        ))
        .with_hint("name the loop that accumulates into the element stored just before it"));
    }
    // The loops to distribute: the innermost enclosing ones, each body `let`s and the next.
    let mut start = enclosing.len();
    if matches!(enclosing.last(), Some(Stmt::Loop { .. })) {
        start -= 1;
        while start > 0 && perfect(enclosing[start - 1]) {
            start -= 1;
        }
    }
    let chain = &enclosing[start..];
    if chain.is_empty() {
        if !folded {
            return Err(Diagnostic::error(format!(
                "the init of `{acc}` is already outside every loop around loop `{}` of kernel {kname}",
                r.var
            ))
            .with_hint("nothing to decompose: reorder or tile the loops of the reduction directly"));
        }
        *path.block_mut(&mut k.body) = block;
        return Ok(());
    }
    // The block: `let`s, the init, the loop, and at most one store after it.
    let split = block.iter().position(|s| !matches!(s, Stmt::Let { .. })).unwrap_or(block.len());
    let (lets, rest) = block.split_at(split);
    if !matches!(
        rest,
        [Stmt::Store { .. }, Stmt::Loop { .. }] | [Stmt::Store { .. }, Stmt::Loop { .. }, Stmt::Store { .. }]
    ) {
        return Err(Diagnostic::error(format!(
            "the block of loop `{}` of kernel {kname} holds more than `let`s, the init store, the loop and one store after it",
            r.var
        ))
        .with_hint(
            "decompose a reduction of the form `acc[0] = init; for r { .. }; y[..] = acc[0]` (as the naive lowering writes it)",
        ));
    }
    // Every copy recomputes the loops' bounds and `let`s: they must read nothing the nests write.
    if let Some(l) = chain.iter().map(|s| parts(s)).find(|l| has_load(l.lo) || has_load(l.hi)) {
        return Err(Diagnostic::error(format!(
            "the bounds of loop `{}` of kernel {kname} read memory",
            l.var
        ))
        .with_hint(
            "decompose a reduction whose loops have bounds computed from variables and literals only",
        ));
    }
    let all_lets = chain[..chain.len() - 1].iter().flat_map(|l| lets_of(l)).chain(lets.iter().cloned());
    for s in all_lets {
        let Stmt::Let { name, value, .. } = &s else { unreachable!("lets") };
        if let Some(b) = names_used(rest).1.into_iter().find(|b| stores(rest, b) && reads(value, b)) {
            return Err(Diagnostic::error(format!(
                "`let {name}` around loop `{}` of kernel {kname} reads `{b}`, which the reduction writes",
                r.var
            ))
            .with_hint("decompose a reduction whose surrounding `let`s read only what it does not write"));
        }
    }
    // Distributing the loops runs all the inits, then all the updates, then all the final
    // stores: legal when no element is touched by two iterations of the loops.
    let whole = nest(chain, block.clone());
    let top = Path { outer: path.outer[..start].to_vec(), index: path.outer[start].0 };
    let mut env = loop_env(&k.body, &top);
    let mut band = Vec::new();
    for (d, s) in chain.iter().enumerate() {
        let lp = parts(s);
        let range = if d == 0 { loop_range(&k.body, &top) } else { range_in(&env, lp.lo, lp.hi) };
        if let (Some(iv), true) = (range, d > 0) {
            env.push((lp.var.to_string(), iv));
        }
        band.push(BandLoop { var: lp.var.to_string(), range });
    }
    if let Some(d) = dependences(parts(&whole).body, &band).first() {
        return Err(Diagnostic::error(format!(
            "the init and the update of `{}` cannot get loop nests of their own in kernel {kname}: `{}` and `{}` may \
             touch the same element from different iterations of loop{} {}",
            d.buf,
            d.first,
            d.second,
            if d.carried_by.len() == 1 { "" } else { "s" },
            quoted(d.carried_by.iter().map(String::as_str))
        ))
        .with_hint("decompose a reduction whose enclosing loops each index a dimension of the element it accumulates"));
    }
    let mut names = Names::default();
    defined_names(k).iter().for_each(|n| names.reserve(n));
    let mut part = |s: &Stmt, suffix: Option<&str>| -> Stmt {
        let mut body = lets.to_vec();
        body.push(s.clone());
        let built = nest(chain, body);
        let Some(sfx) = suffix else { return built };
        let renames: Vec<(String, String)> = chain
            .iter()
            .map(|l| {
                let v = parts(l).var;
                (v.to_string(), names.fresh(&format!("{v}_{sfx}")))
            })
            .collect();
        Rename(&renames).stmt(built).pop().expect("one loop")
    };
    let mut out = vec![part(&rest[0], Some("init")), part(&rest[1], None)];
    if let Some(epi) = rest.get(2) {
        out.push(part(epi, Some("epi")));
    }
    top.block_mut(&mut k.body).splice(top.index..=top.index, out);
    Ok(())
}

/// Rewrite 1, on a copy of the block: the accumulator `acc`, set by `block[at - 1]` and reduced
/// by loop `block[at]`, becomes the element the store `block[at + 1]` writes; its allocation
/// goes (so the loop moves up one place).
fn fold(k: &Kernel, block: &mut Vec<Stmt>, at: usize, acc: &str, rvar: &str) -> Result<(), Diagnostic> {
    let refuse = |why: String| {
        Err(Diagnostic::error(format!("the accumulator `{acc}` of loop `{rvar}` (kernel {}) {why}", k.name))
            .with_hint(
            "decompose a reduction of the form `acc[0] = init; for r { .. acc[0] .. }; y[..] = f(acc[0])`",
        ))
    };
    let Some(Stmt::Store { buf: out, index, value, .. }) = block.get(at + 1).cloned() else {
        let next = block.get(at + 1).map_or("nothing".into(), describe);
        return refuse(format!("is not stored to an element just after the loop ({next} follows it)"));
    };
    if out.name == acc || !reads(&value, acc) {
        return refuse(format!("is not what the store to `{}` after the loop writes", out.name));
    }
    if let Some(i) = (0..block.len()).find(|&i| {
        let alloc = matches!(&block[i], Stmt::Alloc { name, .. } if name == acc);
        !alloc && !(at - 1..=at + 1).contains(&i) && names_used(&block[i..=i]).1.contains(acc)
    }) {
        return refuse(format!("is also used by {} in its block", describe(&block[i])));
    }
    if let Stmt::Store { value, .. } = &block[at - 1] {
        if reads(value, acc) {
            return refuse("is read by its own init".into());
        }
    }
    if let Some(bad) = nonzero_index(&block[at - 1..=at + 1], acc) {
        return refuse(format!("is indexed by `{bad}`, not by literal zeros"));
    }
    let (acc_ty, out_ty) = (dtype_of(k, acc), dtype_of(k, &out.name));
    if acc_ty.is_none() || acc_ty != out_ty {
        return refuse(format!(
            "holds {}, `{}` {}: accumulating there would round differently",
            acc_ty.map_or("?", DType::name),
            out.name,
            out_ty.map_or("has no single dtype".to_string(), |d| format!("holds {}", d.name()))
        ));
    }
    if index.iter().any(has_load) {
        return refuse(format!("is stored to `{}` at indices that read memory", out.name));
    }
    if names_used(&block[at - 1..=at]).1.contains(&out.name) || reads(&value, &out.name) {
        return refuse(format!("accumulates while `{}` is also read or written", out.name));
    }
    let elem = Expr::new(ExprKind::Load { buf: out.clone(), index: index.clone() });
    let mut f = Fold { acc, out: &out, index: &index, elem: &elem };
    let epi = f.stmt(block[at + 1].clone()).pop().expect("one store");
    let identity = matches!(&epi, Stmt::Store { value, .. } if *value == elem);
    for s in &mut block[at - 1..=at] {
        *s = f.stmt(s.clone()).pop().expect("one statement");
    }
    if identity {
        block.remove(at + 1);
    } else {
        block[at + 1] = epi;
    }
    block.retain(|s| !matches!(s, Stmt::Alloc { name, .. } if name == acc));
    Ok(())
}

/// A statement, for a message.
fn describe(s: &Stmt) -> String {
    match s {
        Stmt::Let { name, value, .. } => format!("`let {name} = {}`", print_expr(value)),
        Stmt::Store { buf, .. } => format!("a store to `{}`", buf.name),
        Stmt::Loop { var, .. } => format!("loop `{var}`"),
        Stmt::If { .. } => "an `if`".into(),
        Stmt::Alloc { name, .. } => format!("`alloc {name}`"),
        Stmt::Launch { .. } | Stmt::Barrier { .. } => "a GPU statement".into(),
    }
}

/// The element type of a kernel's buffer: a parameter's, or its allocations' when they agree.
fn dtype_of(k: &Kernel, buf: &str) -> Option<DType> {
    if let Some(p) = k.params.iter().find(|p| p.name == buf) {
        return Some(p.ty.dtype);
    }
    let mut found: Vec<DType> = Vec::new();
    for_each_stmt(&k.body, &mut |s| {
        if let Stmt::Alloc { name, ty, .. } = s {
            if name == buf {
                found.push(ty.dtype);
            }
        }
    });
    found.first().copied().filter(|d| found.iter().all(|e| e == d))
}

/// The first index of `acc` in `stmts` that is not a literal 0.
fn nonzero_index(stmts: &[Stmt], acc: &str) -> Option<String> {
    let mut indices: Vec<&Expr> = Vec::new();
    for_each_stmt(stmts, &mut |s| {
        if let Stmt::Store { buf, index, .. } = s {
            if buf.name == acc {
                indices.extend(index);
            }
        }
    });
    for_each_expr(stmts, |e| {
        if let ExprKind::Load { buf, index } = &e.kind {
            if buf.name == acc {
                indices.extend(index);
            }
        }
    });
    indices.into_iter().find(|i| !matches!(i.kind, ExprKind::Int(0))).map(print_expr)
}

/// Replaces every access of the accumulator by the output element.
struct Fold<'a> {
    acc: &'a str,
    out: &'a Name,
    index: &'a [Expr],
    elem: &'a Expr,
}

impl Mutator for Fold<'_> {
    fn stmt(&mut self, s: Stmt) -> Vec<Stmt> {
        match mutate_stmt(self, s) {
            Stmt::Store { buf, value, span, .. } if buf.name == self.acc => {
                vec![Stmt::Store { buf: self.out.clone(), index: self.index.to_vec(), value, span }]
            }
            s => vec![s],
        }
    }
    fn expr(&mut self, e: Expr) -> Expr {
        match &e.kind {
            ExprKind::Load { buf, .. } if buf.name == self.acc => self.elem.clone(),
            _ => mutate_expr(self, e),
        }
    }
}

/// Renames loop variables: the loops' own and every use.
struct Rename<'a>(&'a [(String, String)]);

impl Mutator for Rename<'_> {
    fn stmt(&mut self, s: Stmt) -> Vec<Stmt> {
        match mutate_stmt(self, s) {
            Stmt::Loop { var, kind, lo, hi, body, span } => {
                let var = self.0.iter().find(|(a, _)| *a == var).map_or(var, |(_, b)| b.clone());
                vec![Stmt::Loop { var, kind, lo, hi, body, span }]
            }
            s => vec![s],
        }
    }
    fn expr(&mut self, e: Expr) -> Expr {
        match &e.kind {
            ExprKind::Var(v) => match self.0.iter().find(|(a, _)| a == v) {
                Some((_, b)) => Expr { kind: ExprKind::Var(b.clone()), span: e.span },
                None => e,
            },
            _ => mutate_expr(self, e),
        }
    }
}

/// The loops of `chain` (outermost first, with the `let`s of their bodies but the innermost's,
/// whose body `body` replaces) around `body`.
fn nest(chain: &[&Stmt], body: Vec<Stmt>) -> Stmt {
    let mut built = body;
    for (i, s) in chain.iter().enumerate().rev() {
        let lp = parts(s);
        let mut b = if i + 1 < chain.len() { lets_of(s) } else { Vec::new() };
        b.extend(built);
        built = vec![loop_(lp.kind, lp.var, E(lp.lo.clone()), E(lp.hi.clone()), b)];
    }
    built.pop().expect("a non-empty chain")
}

/// Whether the body of `red` stores to the element the store `init` writes.
fn updates(body: &[Stmt], init: &Stmt) -> bool {
    let Stmt::Store { buf, index, .. } = init else { return false };
    let text: Vec<String> = index.iter().map(print_expr).collect();
    any_stmt(
        body,
        |s| matches!(s, Stmt::Store { buf: b, index: i, .. } if b.name == buf.name && i.iter().map(print_expr).eq(text.iter().cloned())),
    )
}

/// A loop whose body is `let`s and one other statement.
fn perfect(s: &Stmt) -> bool {
    matches!(s, Stmt::Loop { .. })
        && children(s)[0].iter().filter(|s| !matches!(s, Stmt::Let { .. })).count() == 1
}

/// The `let`s of a loop's body.
fn lets_of(s: &Stmt) -> Vec<Stmt> {
    parts(s).body.iter().filter(|s| matches!(s, Stmt::Let { .. })).cloned().collect()
}

/// Whether `stmts` store into `buf`.
fn stores(stmts: &[Stmt], buf: &str) -> bool {
    any_stmt(stmts, |s| matches!(s, Stmt::Store { buf: b, .. } if b.name == buf))
}

/// Whether `e` loads `buf`.
fn reads(e: &Expr, buf: &str) -> bool {
    let mut found = false;
    for_each_subexpr(e, |x| found |= matches!(&x.kind, ExprKind::Load { buf: b, .. } if b.name == buf));
    found
}
