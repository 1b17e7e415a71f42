//! Binds the outer loops of a naive kernel to a 1-D GPU grid: one thread per iteration.
//!
//! A naive kernel's body is a nest of serial loops `for v in 0..n` around the computation of one
//! output element (or row). The outermost perfectly nested loops whose iterations touch disjoint
//! elements are flattened: `launch grid(bx in 0..G) block(tx in 0..B) { let gid = bx * B + tx;
//! if gid < N { let v0 = gid / .. ; ..; body } }`, the loop variables recovered row-major so that
//! neighbouring threads handle neighbouring elements (coalesced accesses).
//!
//! Disjointness, the property that makes the threads independent, is checked, not assumed: for
//! every buffer the kernel writes, every access to it (load or store) must index some fixed
//! dimension with exactly each bound variable, so two iterations that differ in any bound
//! variable touch different elements. Reads of `in` buffers and of the body's own allocations
//! never conflict. When a prefix fails the check, a shorter one is bound (at worst none: one
//! thread runs the whole body, which is correct and slow).

use super::{launch, unflatten, Gpu};
use crate::build::{int, let_, var, Names};
use ekb_ir::l1::{Access, Expr, ExprKind, Kernel, LoopKind, Stmt};

/// The GPU kernel bodies for a naive kernel: one per top-level loop nest when the body is a
/// sequence of nests (they run in order, as separate launches), else one.
pub fn bind(gpu: &Gpu, k: &Kernel) -> Vec<Vec<Stmt>> {
    let written: Vec<&str> =
        k.params.iter().filter(|p| p.access != Access::In).map(|p| p.name.as_str()).collect();
    let all_nests = k.body.len() > 1 && k.body.iter().all(|s| !nest(std::slice::from_ref(s)).0.is_empty());
    let parts: Vec<&[Stmt]> =
        if all_nests { k.body.iter().map(std::slice::from_ref).collect() } else { vec![k.body.as_slice()] };
    parts
        .into_iter()
        .map(|body| {
            let mut names = Names::default();
            for n in names_in(k) {
                names.reserve(&n);
            }
            one(gpu, &mut names, &written, body)
        })
        .collect()
}

/// One launch over the longest disjoint prefix of the nest `body`.
fn one(gpu: &Gpu, names: &mut Names, written: &[&str], body: &[Stmt]) -> Vec<Stmt> {
    let (mut loops, _) = nest(body);
    while !loops.is_empty() && !disjoint(inner(body, loops.len()), &loops, written) {
        loops.pop();
    }
    let inner_body = inner(body, loops.len()).to_vec();
    let (bx, tx) = (names.fresh("bx"), names.fresh("tx"));
    if loops.is_empty() {
        return vec![launch(&[(&bx, 1)], &[(&tx, 1)], inner_body)];
    }
    let extents: Vec<usize> = loops.iter().map(|(_, n)| *n).collect();
    let total: usize = extents.iter().product();
    let block = gpu.block_1d(total);
    let gid = names.fresh("gid");
    let mut guarded: Vec<Stmt> =
        loops.iter().zip(unflatten(&var(&gid), &extents)).map(|((v, _), e)| let_(v, e)).collect();
    guarded.extend(inner_body);
    let mut stmts = vec![let_(&gid, var(&bx) * int(block) + var(&tx))];
    if total.is_multiple_of(block) {
        stmts.extend(guarded);
    } else {
        stmts.push(crate::build::if_(var(&gid).lt(int(total)), guarded, Vec::new()));
    }
    vec![launch(&[(&bx, total.div_ceil(block))], &[(&tx, block)], stmts)]
}

/// The outermost perfectly nested serial loops `for v in 0..n` (each loop's body is exactly the
/// next loop), as `(variable, extent)`, outermost first; and the innermost body.
fn nest(body: &[Stmt]) -> (Vec<(String, usize)>, &[Stmt]) {
    let mut loops = Vec::new();
    let mut cur = body;
    while let [Stmt::Loop { var, kind: LoopKind::Serial, lo, hi, body, .. }] = cur {
        let (ExprKind::Int(0), ExprKind::Int(n)) = (&lo.kind, &hi.kind) else { break };
        if *n < 1 {
            break;
        }
        loops.push((var.clone(), *n as usize));
        cur = body;
    }
    (loops, cur)
}

/// The body inside the first `depth` loops of the nest.
fn inner(body: &[Stmt], depth: usize) -> &[Stmt] {
    let mut cur = body;
    for _ in 0..depth {
        if let [Stmt::Loop { body, .. }] = cur {
            cur = body;
        }
    }
    cur
}

/// Whether iterations of `loops` touch disjoint elements of every written buffer (see the
/// module header).
fn disjoint(body: &[Stmt], loops: &[(String, usize)], written: &[&str]) -> bool {
    let mut acc = Vec::new();
    accesses_in(body, &mut acc);
    written.iter().all(|&buf| {
        let mine: Vec<&[Expr]> = acc.iter().filter(|(b, _)| *b == buf).map(|(_, i)| *i).collect();
        let Some(first) = mine.first() else { return true };
        loops.iter().all(|(v, _)| {
            let is_v = |e: &Expr| matches!(&e.kind, ExprKind::Var(x) if x == v);
            let Some(pos) = first.iter().position(is_v) else { return false };
            mine.iter().all(|idx| idx.get(pos).is_some_and(is_v))
        })
    })
}

/// Every buffer access `(buffer, index)` in statements, loads and stores alike.
fn accesses_in<'a>(body: &'a [Stmt], out: &mut Vec<(&'a str, &'a [Expr])>) {
    for s in body {
        match s {
            Stmt::Loop { lo, hi, body, .. } => {
                expr_accesses(lo, out);
                expr_accesses(hi, out);
                accesses_in(body, out);
            }
            Stmt::If { cond, then_body, else_body, .. } => {
                expr_accesses(cond, out);
                accesses_in(then_body, out);
                accesses_in(else_body, out);
            }
            Stmt::Let { value, .. } => expr_accesses(value, out),
            Stmt::Store { buf, index, value, .. } => {
                out.push((&buf.name, index));
                index.iter().for_each(|e| expr_accesses(e, out));
                expr_accesses(value, out);
            }
            Stmt::Launch { body, .. } => accesses_in(body, out),
            Stmt::Alloc { .. } | Stmt::Barrier { .. } => {}
        }
    }
}

fn expr_accesses<'a>(e: &'a Expr, out: &mut Vec<(&'a str, &'a [Expr])>) {
    match &e.kind {
        ExprKind::Load { buf, index } => {
            out.push((&buf.name, index));
            index.iter().for_each(|i| expr_accesses(i, out));
        }
        ExprKind::Int(_) | ExprKind::Float(_) | ExprKind::Bool(_) | ExprKind::Var(_) => {}
        ExprKind::Unary { arg, .. } | ExprKind::Cast { arg, .. } => expr_accesses(arg, out),
        ExprKind::Binary { lhs, rhs, .. } => {
            expr_accesses(lhs, out);
            expr_accesses(rhs, out);
        }
        ExprKind::Select { cond, then_val, else_val } => {
            expr_accesses(cond, out);
            expr_accesses(then_val, out);
            expr_accesses(else_val, out);
        }
        ExprKind::Call { args, .. } => args.iter().for_each(|a| expr_accesses(a, out)),
    }
}

/// Every name a kernel defines (parameters, variables, allocations).
fn names_in(k: &Kernel) -> Vec<String> {
    fn walk(body: &[Stmt], out: &mut Vec<String>) {
        for s in body {
            match s {
                Stmt::Loop { var, body, .. } => {
                    out.push(var.clone());
                    walk(body, out);
                }
                Stmt::If { then_body, else_body, .. } => {
                    walk(then_body, out);
                    walk(else_body, out);
                }
                Stmt::Let { name, .. } | Stmt::Alloc { name, .. } => out.push(name.clone()),
                Stmt::Launch { grid, block, body, .. } => {
                    out.extend(grid.iter().chain(block).map(|d| d.var.clone()));
                    walk(body, out);
                }
                Stmt::Store { .. } | Stmt::Barrier { .. } => {}
            }
        }
    }
    let mut out: Vec<String> = k.params.iter().map(|p| p.name.clone()).collect();
    walk(&k.body, &mut out);
    out
}
