//! `reorder K.a, b, c`: the named loops of one perfect nest take the given order; loops of the
//! nest that are not named keep their places.
//!
//! The loops must form a chain from the outermost named one to the innermost: each loop's body
//! is `let`s and the next loop. The `let`s move to the top of the innermost body (they are
//! pure), so no loop bound may use one, and no loop may move outside a loop its bounds use.
//! Dependences decide the rest (`analysis::deps` over the whole chain): a pair of accesses that
//! two or more loops of the chain may connect fixes the relative order of those loops, because
//! swapping them would change the order in which the element is visited. Loops the pair leaves
//! on distinct elements move freely.

use super::{locate, loop_env, loop_range, parts, range_in};
use crate::handle::quoted;
use crate::trace::LoopRef;
use ekb_ir::l1::analysis::deps::{dependences, BandLoop};
use ekb_ir::l1::visit::uses_var;
use ekb_ir::l1::{Module, Stmt};
use ekb_ir::Diagnostic;

pub fn apply(m: &mut Module, loops: &[LoopRef]) -> Result<(), Diagnostic> {
    let kernel = &loops[0].kernel;
    if let Some(other) = loops.iter().find(|l| &l.kernel != kernel) {
        return Err(Diagnostic::error(format!(
            "reorder names loops of two kernels, {kernel} and {}",
            other.kernel
        ))
        .with_hint("reorder loops of one nest of one kernel"));
    }
    for (i, a) in loops.iter().enumerate() {
        if loops[i + 1..].iter().any(|b| b.var == a.var && b.nth == a.nth) {
            return Err(Diagnostic::error(format!("reorder names loop `{a}` twice")));
        }
    }
    // The outermost named loop: the one every other named loop is inside.
    let mut paths = Vec::new();
    for l in loops {
        let (k, p) = locate(m, l)?;
        paths.push((l.var.clone(), p, k.name.clone()));
    }
    let (k, _) = locate(m, &loops[0])?;
    let top = paths
        .iter()
        .find(|(_, p, _)| paths.iter().all(|(_, q, _)| q == p || q.inside(p)))
        .map(|(_, p, _)| p.clone())
        .ok_or_else(|| {
            Diagnostic::error(format!(
                "loops {} of kernel {} are not nested in one another",
                names(loops),
                k.name
            ))
            .with_hint("reorder loops of one nest: each named loop inside the outermost one")
        })?;
    let named: Vec<&str> = loops.iter().map(|l| l.var.as_str()).collect();
    // The chain from `top` down to the last named loop, and the `let`s along it.
    let mut chain: Vec<&Stmt> = vec![top.get(&k.body)];
    let mut lets: Vec<Stmt> = Vec::new();
    let mut found = 1;
    while found < named.len() {
        let cur = parts(chain.last().expect("non-empty"));
        let (ls, rest): (Vec<&Stmt>, Vec<&Stmt>) =
            cur.body.iter().partition(|s| matches!(s, Stmt::Let { .. }));
        let [next @ Stmt::Loop { .. }] = rest.as_slice() else {
            let missing: Vec<&str> =
                named.iter().copied().filter(|n| !chain.iter().any(|s| parts(s).var == *n)).collect();
            return Err(Diagnostic::error(format!(
                "loops {} of kernel {} are not a perfect nest: the body of loop `{}` holds more than `let`s and one loop, \
                 above loop{} {}",
                names(loops),
                k.name,
                cur.var,
                if missing.len() == 1 { "" } else { "s" },
                quoted(missing.into_iter())
            ))
            .with_hint("reorder loops whose bodies are exactly the next loop (split the other statements off first)"));
        };
        lets.extend(ls.into_iter().cloned());
        if named.contains(&parts(next).var) {
            found += 1;
        }
        chain.push(next);
    }
    // The new order: the named loops' places, filled in the order given.
    let places: Vec<usize> = (0..chain.len()).filter(|&i| named.contains(&parts(chain[i]).var)).collect();
    let mut order: Vec<usize> = (0..chain.len()).collect();
    for (slot, name) in places.iter().zip(&named) {
        order[*slot] = chain.iter().position(|s| parts(s).var == *name).expect("in the chain");
    }
    let var_of = |i: usize| parts(chain[i]).var;
    // Bounds: a loop may not move outside a loop (or a `let`) its bounds use.
    for (p, &i) in order.iter().enumerate() {
        let lp = parts(chain[i]);
        for e in [lp.lo, lp.hi] {
            let inner = order[p + 1..].iter().map(|&j| var_of(j).to_string());
            let let_names = lets.iter().filter_map(|s| match s {
                Stmt::Let { name, .. } => Some(name.clone()),
                _ => None,
            });
            if let Some(v) = inner.chain(let_names).find(|v| uses_var(e, v)) {
                return Err(Diagnostic::error(format!(
                    "the bounds of loop `{}` use `{v}`, which the new order puts inside it (kernel {})",
                    lp.var, k.name
                ))
                .with_hint(format!("keep `{}` inside the loop that defines `{v}`", lp.var)));
            }
        }
    }
    // Dependences over the whole chain.
    let mut env = loop_env(&k.body, &top);
    let mut band = Vec::new();
    for (d, s) in chain.iter().enumerate() {
        let lp = parts(s);
        let range = if d == 0 { loop_range(&k.body, &top) } else { range_in(&env, lp.lo, lp.hi) };
        if let (Some(r), true) = (range, d > 0) {
            env.push((lp.var.to_string(), r));
        }
        band.push(BandLoop { var: lp.var.to_string(), range });
    }
    let new_pos = |v: &str| order.iter().position(|&i| var_of(i) == v).expect("in the chain");
    for d in dependences(parts(chain[0]).body, &band) {
        for (x, a) in d.carried_by.iter().enumerate() {
            for b in &d.carried_by[x + 1..] {
                if new_pos(a) > new_pos(b) {
                    return Err(Diagnostic::error(format!(
                        "reorder would change the order in which loops `{a}` and `{b}` of kernel {} visit `{}`: `{}` and `{}` \
                         may touch the same element from different iterations of both",
                        k.name, d.buf, d.first, d.second
                    ))
                    .with_hint(format!("keep `{a}` outside `{b}`; the loops that index every element they write move freely")));
                }
            }
        }
    }
    // Rebuild: the loops in the new order around the chain's `let`s (defined before the
    // innermost loop, pure, so they may run later) and the innermost body.
    let mut inner_body: Vec<Stmt> = lets;
    inner_body.extend(parts(chain.last().expect("non-empty")).body.iter().cloned());
    let mut built = inner_body;
    for &i in order.iter().rev() {
        let Stmt::Loop { var, kind, lo, hi, span, .. } = chain[i] else { unreachable!("chain holds loops") };
        built = vec![Stmt::Loop {
            var: var.clone(),
            kind: *kind,
            lo: lo.clone(),
            hi: hi.clone(),
            body: built,
            span: *span,
        }];
    }
    let new = built.pop().expect("one loop");
    let block = top.block_mut(&mut k.body);
    block[top.index] = new;
    Ok(())
}

fn names(loops: &[LoopRef]) -> String {
    quoted(loops.iter().map(|l| l.var.as_str()))
}
