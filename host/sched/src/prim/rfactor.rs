//! `rfactor K.v -> rf, c`: a reduction into one element inside loop `v`, `acc[I] = acc[I] op e`
//! with `op` one of `+`, `*`, `min`, `max`, accumulates instead into one partial result per
//! iteration of `v`, `rf[v - lo]`, and a loop `c` combines the partial results into `acc[I]`:
//!
//! ```text
//! alloc rf: f32[F] local
//! for c in 0..F { rf[c] = -0.0 }               # the identity of `op`
//! S, each update now `rf[v - lo] = rf[v - lo] + e`
//! for c in 0..F { acc[I] = acc[I] + rf[c] }
//! ```
//!
//! `S` is the outermost loop around `v` (or `v` itself), other than a `parallel` one, in which
//! every access to `acc` is such an update inside `v`: after `split K.k by 4 -> ko, ki`,
//! `rfactor ki -> rf, c` keeps four partial sums across all of `ko`, whose iterations
//! `vectorize ki` can then run as lanes.
//!
//! Legal when `v` has literal bounds and runs; `acc` is allocated outside `v`, of dtype f32 or
//! i32 (a store into f16 or i8 rounds); in `v`, every access to `acc` is part of an update of one
//! element `acc[I]`, all with the same operator, `e` not reading `acc`, and `I` load-free and the
//! same in every iteration (it uses no variable defined in `S`). The identities are exact:
//! `-0.0` and `0` for `+`, `1.0` and `1` for `*`, `inf` and `-inf` for f32 `min` and `max` (which
//! propagate NaN, so NaN is no identity: `max(-inf, e)` is `e` for every `e`, NaN included),
//! `2147483647` and `-2147483648` for i32 `min` and `max`. i32 `+` and `*` wrap, so they
//! reassociate exactly, as do `min` and `max` (up to the sign of a zero result, which L1 leaves
//! open);
//! f32 `+` and `*` do not: the result may differ from the serial order's in the last bits
//! (`docs/schedules.md`, "Reassociation").

use super::{buffer_type, check_new_name, const_bounds, locate, parts};
use crate::handle::Path;
use crate::trace::LoopRef;
use ekb_ir::l1::analysis::access::accesses;
use ekb_ir::l1::build::{f, int, ints, loop_, var, Buf, E};
use ekb_ir::l1::print::print_expr;
use ekb_ir::l1::visit::{
    for_each_stmt, for_each_subexpr, has_load, mutate_expr, mutate_stmt, uses_var, Mutator,
};
use ekb_ir::l1::{BinOp, Expr, ExprKind, Intrinsic, LoopKind, Module, Stmt};
use ekb_ir::{DType, Diagnostic};

/// The associative updates rfactor recognises.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Add,
    Mul,
    Min,
    Max,
}

impl Op {
    /// The update of `target` by this operator, as text: `acc[0] = acc[0] + e`.
    fn form(self, target: &str) -> String {
        match self {
            Op::Add => format!("{target} = {target} + e"),
            Op::Mul => format!("{target} = {target} * e"),
            Op::Min => format!("{target} = min({target}, e)"),
            Op::Max => format!("{target} = max({target}, e)"),
        }
    }
}

/// An update `buf[I] = buf[I] op e` (or `e op buf[I]`, `min(buf[I], e)`, ..., `e` not reading
/// `buf`): the buffer, `I` and the operator.
fn update(s: &Stmt) -> Option<(&str, &[Expr], Op)> {
    let Stmt::Store { buf, index, value, .. } = s else { return None };
    let is_self = |e: &Expr| {
        matches!(&e.kind, ExprKind::Load { buf: l, index: i } if l.name == buf.name
            && i.iter().map(print_expr).eq(index.iter().map(print_expr)))
    };
    let (op, a, b) = match &value.kind {
        ExprKind::Binary { op: BinOp::Add, lhs, rhs } => (Op::Add, &**lhs, &**rhs),
        ExprKind::Binary { op: BinOp::Mul, lhs, rhs } => (Op::Mul, &**lhs, &**rhs),
        ExprKind::Call { func: Intrinsic::Min, args } if args.len() == 2 => (Op::Min, &args[0], &args[1]),
        ExprKind::Call { func: Intrinsic::Max, args } if args.len() == 2 => (Op::Max, &args[0], &args[1]),
        _ => return None,
    };
    let e = match (is_self(a), is_self(b)) {
        (true, _) => b,
        (false, true) => a,
        (false, false) => return None,
    };
    let mut reads = false;
    for_each_subexpr(e, |x| reads |= matches!(&x.kind, ExprKind::Load { buf: l, .. } if l.name == buf.name));
    (!reads).then_some((buf.name.as_str(), index.as_slice(), op))
}

/// Every name a statement defines (a loop's variable and what its body defines).
fn defined_in(s: &Stmt) -> Vec<String> {
    let mut out = Vec::new();
    for_each_stmt(std::slice::from_ref(s), &mut |s| match s {
        Stmt::Loop { var: n, .. } | Stmt::Let { name: n, .. } | Stmt::Alloc { name: n, .. } => {
            out.push(n.clone())
        }
        _ => {}
    });
    out
}

/// How many loads and stores of `buf` the statement holds.
fn count(s: &Stmt, buf: &str) -> usize {
    accesses(std::slice::from_ref(s)).iter().filter(|a| a.buf == buf).count()
}

pub fn apply(m: &mut Module, r: &LoopRef, partials: &str, combine: &str) -> Result<(), Diagnostic> {
    let (k, path) = locate(m, r)?;
    check_new_name(k, partials)?;
    check_new_name(k, combine)?;
    if partials == combine {
        return Err(Diagnostic::error(format!(
            "the partial results and the combining loop are both named `{partials}`"
        ))
        .with_hint("give the buffer and the loop different names"));
    }
    let kname = k.name.clone();
    let v_stmt = path.get(&k.body);
    let lp = parts(v_stmt);
    let Some((lo, hi)) = const_bounds(lp.lo, lp.hi) else {
        return Err(Diagnostic::error(format!(
            "loop `{}` of kernel {kname} needs literal bounds: they size the partial results",
            r.var
        ))
        .with_hint(format!("split it first (`split {r} by 4 -> o, i`) and rfactor the inner loop")));
    };
    let n = i64::from(hi) - i64::from(lo);
    if n < 1 {
        return Err(Diagnostic::error(format!("loop `{}` of kernel {kname} runs no iteration", r.var))
            .with_hint("rfactor a loop that runs"));
    }
    // The updates in `v` of an element that stays the same across its iterations.
    let inside = defined_in(v_stmt);
    let invariant =
        |index: &[Expr]| index.iter().all(|e| !has_load(e) && !inside.iter().any(|d| uses_var(e, d)));
    let mut updates = Vec::new();
    for_each_stmt(lp.body, &mut |s| {
        updates.extend(update(s).filter(|(_, index, _)| invariant(index)));
    });
    let mut bufs: Vec<&str> = updates.iter().map(|(b, _, _)| *b).collect();
    bufs.sort_unstable();
    bufs.dedup();
    let acc = match bufs.as_slice() {
        [one] => *one,
        [] => {
            return Err(Diagnostic::error(format!(
                "loop `{}` of kernel {kname} accumulates into no single element: no update `acc[I] = acc[I] + e` \
                 (or `*`, `min`, `max`) with `I` the same in every iteration",
                r.var
            ))
            .with_hint("rfactor the loop of a reduction (of a `sum` or `max`, the `k` loop of a matmul)"))
        }
        several => {
            return Err(Diagnostic::error(format!(
                "loop `{}` of kernel {kname} accumulates into {}",
                r.var,
                crate::handle::quoted(several.iter().copied())
            ))
            .with_hint("rfactor a loop that holds one reduction"))
        }
    };
    let ours: Vec<&(&str, &[Expr], Op)> = updates.iter().filter(|(b, _, _)| *b == acc).collect();
    let (_, index, op) = *ours[0];
    let text = |i: &[Expr]| i.iter().map(print_expr).collect::<Vec<_>>().join(", ");
    if let Some((_, other, _)) = ours.iter().find(|(_, i, _)| text(i) != text(index)) {
        return Err(Diagnostic::error(format!(
            "loop `{}` of kernel {kname} accumulates into two elements of `{acc}`, `{acc}[{}]` and `{acc}[{}]`",
            r.var,
            text(index),
            text(other)
        ))
        .with_hint("rfactor a reduction into one element"));
    }
    if ours.iter().any(|(_, _, o)| *o != op) {
        return Err(Diagnostic::error(format!(
            "the updates of `{acc}` in loop `{}` of kernel {kname} mix operators, which do not reassociate together",
            r.var
        ))
        .with_hint("rfactor a reduction whose updates all add, all multiply, or all take the min or the max"));
    }
    // Each update loads `acc` once and stores it once: anything more reads a partial result.
    let accesses_in_v = count(v_stmt, acc);
    if accesses_in_v != 2 * ours.len() {
        return Err(Diagnostic::error(format!(
            "loop `{}` of kernel {kname} reads or writes `{acc}` besides its updates `{}`",
            r.var,
            op.form(&format!("{acc}[{}]", text(index)))
        ))
        .with_hint("rfactor a reduction whose running value nothing else reads"));
    }
    let Some(ty) = buffer_type(k, &path, acc).cloned() else {
        return Err(Diagnostic::error(format!(
            "`{acc}` is allocated inside loop `{}` of kernel {kname}: each iteration accumulates into its own",
            r.var
        ))
        .with_hint("rfactor a loop around the reduction, outside the accumulator's allocation"));
    };
    if !matches!(ty.dtype, DType::F32 | DType::I32) {
        return Err(Diagnostic::error(format!(
            "`{acc}` is {ty}: each store into it rounds, which partial results would skip"
        ))
        .with_hint("rfactor reductions into f32 or i32"));
    }
    // S: the outermost loop around `v` whose accesses to `acc` are these updates.
    let mut s_path = path.clone();
    while let Some(&(i, _)) = s_path.outer.last() {
        let parent = Path { outer: s_path.outer[..s_path.outer.len() - 1].to_vec(), index: i };
        let p = parent.get(&k.body);
        let Stmt::Loop { kind, body, .. } = p else { break };
        let allocs_acc = body.iter().any(|s| matches!(s, Stmt::Alloc { name, .. } if name == acc));
        let defines_index_var = defined_in(p).iter().any(|d| index.iter().any(|e| uses_var(e, d)));
        if *kind == LoopKind::Parallel || allocs_acc || defines_index_var || count(p, acc) != accesses_in_v {
            break;
        }
        s_path = parent;
    }
    // The partial results, their identity, the retargeted updates and the combining loop.
    let f_n = n as usize;
    let rf = Buf::new(partials, ekb_ir::TensorType::new(ty.dtype, [f_n]));
    let identity = match (op, ty.dtype) {
        (Op::Add, DType::F32) => f(-0.0),
        (Op::Mul, DType::F32) => f(1.0),
        (Op::Min, DType::F32) => f(f64::INFINITY),
        (Op::Max, DType::F32) => f(f64::NEG_INFINITY),
        (Op::Add, _) => int(0),
        (Op::Mul, _) => int(1),
        (Op::Min, _) => ints(i32::MAX.into()),
        (Op::Max, _) => ints(i32::MIN.into()),
    };
    let init = loop_(LoopKind::Serial, combine, int(0), int(f_n), vec![rf.store1(var(combine), identity)]);
    let accb = Buf::new(acc, ty);
    let at: Vec<E> = index.iter().cloned().map(E).collect();
    let (old, part) = (accb.load(&at), rf.load1(var(combine)));
    let folded = match op {
        Op::Add => old + part,
        Op::Mul => old * part,
        Op::Min => old.min(part),
        Op::Max => old.max(part),
    };
    let fold = loop_(LoopKind::Serial, combine, int(0), int(f_n), vec![accb.store(&at, folded)]);
    let slot = var(lp.var) - ints(lo.into());
    let acc = acc.to_string();
    let block = s_path.block_mut(&mut k.body);
    let s = block[s_path.index].clone();
    let retargeted = Retarget { acc: &acc, rf: &rf, slot: &slot }.stmt(s);
    let at = s_path.index;
    block.splice(at..=at, [rf.alloc(), init].into_iter().chain(retargeted).chain([fold]));
    Ok(())
}

/// Moves the updates of `acc` onto the partial result `rf[slot]`.
struct Retarget<'a> {
    acc: &'a str,
    rf: &'a Buf,
    slot: &'a E,
}

impl Mutator for Retarget<'_> {
    fn stmt(&mut self, s: Stmt) -> Vec<Stmt> {
        match s {
            Stmt::Store { buf, value, .. } if buf.name == self.acc => {
                let value = self.expr(value);
                vec![self.rf.store1(self.slot.clone(), E(value))]
            }
            s => vec![mutate_stmt(self, s)],
        }
    }

    fn expr(&mut self, e: Expr) -> Expr {
        match &e.kind {
            ExprKind::Load { buf, .. } if buf.name == self.acc => self.rf.load1(self.slot.clone()).0,
            _ => mutate_expr(self, e),
        }
    }
}
