//! Dependences between the iterations of a band of loops: for every pair of accesses to the
//! same buffer inside the band, at least one a store, which band loops the pair may connect
//! (two different iterations of such a loop may touch the same element).
//!
//! The test is exact-index matching, generalising "each bound variable indexes a fixed
//! dimension": after inlining the body's load-free `let`s, a band loop `v` is proven to leave a
//! pair on distinct elements when, in some dimension, both accesses use the same index `E` and
//! `E` determines `v`:
//! - `E` is affine in `v` alone (`c*v + K`, `c != 0`, where `K` uses no variable defined in the
//!   band), or
//! - the dimensions holding the same index in both accesses include digits of `v` that cover its
//!   range: `v % b0`, `v / b0 % b1`, ..., `v / (b0*...*bk)` (what `fuse` and the flattened parallel
//!   loops produce), with `v >= 0`, or
//! - `E` is `c*v + R` where the values of `R` span fewer than `|c|` (`vo*F + vi` with `vi` in
//!   `0..F`, what a split makes), from the ranges of the band loops and of the loops inside the
//!   body.
//!
//! A loop proven this way is the same in both accesses, so it counts as fixed when the other
//! loops are tried (once `vo` is pinned by `vo*F + vi`, so is `vi`).
//!
//! Anything else (different indices, indices through loads, indices mixing two band variables)
//! counts as a possible dependence carried by that loop. Buffers allocated inside the band are
//! private to an iteration and carry nothing. What this module must keep true: it never
//! misses a dependence; a loop it reports as not carrying one really does not.

use super::access::accesses;
use super::interval::{eval, Interval, I32_MAX};
use crate::l1::ast::{BinOp, Expr, ExprKind, Stmt};
use crate::l1::print::print_expr;
use crate::l1::visit::{for_each_stmt, substitute, uses_var};
use std::collections::{HashMap, HashSet};

/// A loop of the band: its variable and the interval of its values (when known).
#[derive(Debug, Clone, PartialEq)]
pub struct BandLoop {
    pub var: String,
    pub range: Option<Interval>,
}

/// A possible dependence between two accesses to `buf` inside the band.
#[derive(Debug, Clone, PartialEq)]
pub struct Dependence {
    pub buf: String,
    /// The two accesses, as text (`y[i, j] = ..` is written `store y[i, j]`).
    pub first: String,
    pub second: String,
    /// The band loops two different iterations of which may touch the same element, outermost
    /// first.
    pub carried_by: Vec<String>,
    /// Both accesses use the same indices, and none of them mentions a band variable: every
    /// iteration touches the same element (an accumulation, when one side is a load).
    pub same_element: bool,
}

/// The dependences inside `body`, the statements within the outermost loop of `band` (the
/// other band loops nested in it). Pairs every band loop provably leaves on distinct elements
/// are not listed.
pub fn dependences(body: &[Stmt], band: &[BandLoop]) -> Vec<Dependence> {
    let lets = inlinable_lets(body);
    let mut varying: HashSet<String> = band.iter().map(|b| b.var.clone()).collect();
    let mut private = HashSet::new();
    for_each_stmt(body, &mut |s| match s {
        Stmt::Loop { var, .. } => {
            varying.insert(var.clone());
        }
        Stmt::Let { name, .. } => {
            varying.insert(name.clone());
        }
        Stmt::Alloc { name, .. } => {
            private.insert(name.clone());
        }
        _ => {}
    });
    let ranges = loop_ranges(body, band);
    let all = accesses(body);
    let acc: Vec<(usize, Vec<Expr>)> = all
        .iter()
        .enumerate()
        .filter(|(_, a)| !private.contains(a.buf))
        .map(|(i, a)| (i, a.index.iter().map(|e| substitute(e.clone(), &lets)).collect()))
        .collect();
    let text = |i: usize, idx: &[Expr]| {
        let a = &all[i];
        let idx: Vec<String> = idx.iter().map(print_expr).collect();
        format!("{}{}[{}]", if a.write { "store " } else { "" }, a.buf, idx.join(", "))
    };
    let mut out = Vec::new();
    for (x, (i, ix)) in acc.iter().enumerate() {
        for (j, jx) in &acc[x..] {
            let (a, b) = (&all[*i], &all[*j]);
            if a.buf != b.buf || !(a.write || b.write) || ix.len() != jx.len() {
                continue;
            }
            // Equal as text: spans differ between two accesses written in the source.
            let same: Vec<&Expr> =
                ix.iter().zip(jx).filter(|(p, q)| print_expr(p) == print_expr(q)).map(|(p, _)| p).collect();
            let carried_by = carriers(&same, band, &varying, &ranges);
            if carried_by.is_empty() {
                continue;
            }
            let same_element =
                same.len() == ix.len() && !ix.iter().any(|e| band.iter().any(|l| uses_var(e, &l.var)));
            out.push(Dependence {
                buf: a.buf.to_string(),
                first: text(*i, ix),
                second: text(*j, jx),
                carried_by,
                same_element,
            });
        }
    }
    out
}

/// The body's `let`s of load-free values, each defined once, with earlier ones substituted.
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
            if count[name.as_str()] == 1 && !crate::l1::visit::has_load(value) {
                let v = substitute(value.clone(), &lets);
                lets.insert(name.clone(), v);
            }
        }
    });
    lets
}

/// The values of the band loops and of the loops of `body` whose bounds are known from them (a
/// variable several loops define takes the union of their ranges).
fn loop_ranges(body: &[Stmt], band: &[BandLoop]) -> HashMap<String, Interval> {
    let mut ranges: HashMap<String, Interval> =
        band.iter().filter_map(|l| Some((l.var.clone(), l.range?))).collect();
    let mut seen: HashSet<String> = HashSet::new();
    let mut unknown: HashSet<String> = HashSet::new();
    for_each_stmt(body, &mut |s| {
        if let Stmt::Loop { var, lo, hi, .. } = s {
            let look = |v: &str| ranges.get(v).copied();
            let iv = eval(lo, &look).zip(eval(hi, &look)).map(|(l, h)| Interval::new(l.lo, h.hi - 1));
            let iv = iv.filter(|i| !i.is_empty());
            let first = seen.insert(var.clone());
            match (iv, first) {
                (Some(i), true) => {
                    ranges.insert(var.clone(), i);
                }
                (Some(i), false) if !unknown.contains(var) => {
                    let u = ranges.get(var).map_or(i, |r| r.union(i));
                    ranges.insert(var.clone(), u);
                }
                _ => {
                    unknown.insert(var.clone());
                    ranges.remove(var);
                }
            }
        }
    });
    ranges
}

/// The band loops the indices `same` (held by both accesses) leave free: those not pinned. A
/// pinned loop has one value in both accesses, so it is fixed when the next loops are tried.
fn carriers(
    same: &[&Expr],
    band: &[BandLoop],
    varying: &HashSet<String>,
    ranges: &HashMap<String, Interval>,
) -> Vec<String> {
    let mut free: Vec<&BandLoop> = band.iter().collect();
    let mut varying = varying.clone();
    while let Some(i) = free.iter().position(|l| pins(same, l, &varying, ranges)) {
        varying.remove(&free.remove(i).var);
    }
    free.into_iter().map(|l| l.var.clone()).collect()
}

/// Whether the indices `same` (held by both accesses) determine the band variable `l`.
fn pins(same: &[&Expr], l: &BandLoop, varying: &HashSet<String>, ranges: &HashMap<String, Interval>) -> bool {
    let fixed = |e: &Expr| !varying.iter().any(|v| uses_var(e, v));
    if same.iter().any(|e| affine_in(e, &l.var, &fixed) || radix(e, l, &fixed, ranges)) {
        return true;
    }
    // Digits `(v / a) % b`: sorted by `a`, they must chain from 1 and reach past the range.
    let Some(range) = l.range.filter(|r| r.lo >= 0) else { return false };
    let mut digits: Vec<(i64, Option<i64>)> = same.iter().filter_map(|e| digit(e, &l.var)).collect();
    digits.sort();
    let mut covered = 1i64;
    for (a, b) in digits {
        if a != covered {
            continue;
        }
        match b {
            None => return true,
            Some(b) => covered = covered.saturating_mul(b),
        }
        if covered > range.hi {
            return true;
        }
    }
    false
}

/// `e` is `c*v + K` with `c != 0` and `K` fixed over the band (no band variable, no variable
/// defined in the band).
fn affine_in(e: &Expr, v: &str, fixed: &impl Fn(&Expr) -> bool) -> bool {
    match &e.kind {
        ExprKind::Var(x) => x == v,
        ExprKind::Unary { op: crate::l1::ast::UnOp::Neg, arg } => affine_in(arg, v, fixed),
        ExprKind::Binary { op: BinOp::Add | BinOp::Sub, lhs, rhs } => {
            (affine_in(lhs, v, fixed) && fixed(rhs)) || (fixed(lhs) && affine_in(rhs, v, fixed))
        }
        ExprKind::Binary { op: BinOp::Mul, lhs, rhs } => {
            let nonzero = |x: &Expr| matches!(x.kind, ExprKind::Int(c) if c != 0);
            (affine_in(lhs, v, fixed) && nonzero(rhs)) || (nonzero(lhs) && affine_in(rhs, v, fixed))
        }
        _ => false,
    }
}

/// `e` is `c*v + R` (`c` a literal, the terms of `R` free of `v`) where the varying terms of `R`
/// span fewer than `|c|` values: two values of `v` give indices at least `|c|` apart, which `R`
/// cannot make up.
fn radix(e: &Expr, l: &BandLoop, fixed: &impl Fn(&Expr) -> bool, ranges: &HashMap<String, Interval>) -> bool {
    let mut all = Vec::new();
    terms(e, &mut all);
    let (with_v, rest): (Vec<&Expr>, Vec<&Expr>) = all.into_iter().partition(|t| uses_var(t, &l.var));
    let [t] = with_v.as_slice() else { return false };
    let c = match &t.kind {
        ExprKind::Var(_) => 1,
        ExprKind::Binary { op: BinOp::Mul, lhs, rhs } => match (&lhs.kind, &rhs.kind) {
            (ExprKind::Var(x), ExprKind::Int(c)) | (ExprKind::Int(c), ExprKind::Var(x)) if *x == l.var => {
                i64::from(*c)
            }
            _ => return false,
        },
        _ => return false,
    };
    let look = |v: &str| ranges.get(v).copied();
    // `c*v` must span less than half the i32 range, so that no two of its values wrap together.
    match eval(t, &look) {
        Some(iv) if c != 0 && iv.hi - iv.lo <= I32_MAX => {}
        _ => return false,
    }
    let mut span = 0i64;
    for r in rest.into_iter().filter(|r| !fixed(r)) {
        let Some(iv) = eval(r, &look) else { return false };
        span += iv.hi - iv.lo;
    }
    span < c.abs()
}

/// The terms of a sum (`a + b - c` gives `a`, `b`, `c`; signs do not change a term's span).
fn terms<'a>(e: &'a Expr, out: &mut Vec<&'a Expr>) {
    match &e.kind {
        ExprKind::Binary { op: BinOp::Add | BinOp::Sub, lhs, rhs } => {
            terms(lhs, out);
            terms(rhs, out);
        }
        ExprKind::Unary { op: crate::l1::ast::UnOp::Neg, arg } => terms(arg, out),
        _ => out.push(e),
    }
}

/// `e` as a digit of `v`: `v % b` is `(1, Some(b))`, `v / a` is `(a, None)`, `v / a % b` is
/// `(a, Some(b))`, with positive literal `a` and `b` (nested divisions multiply).
fn digit(e: &Expr, v: &str) -> Option<(i64, Option<i64>)> {
    fn quotient(e: &Expr, v: &str) -> Option<i64> {
        match &e.kind {
            ExprKind::Var(x) if x == v => Some(1),
            ExprKind::Binary { op: BinOp::Div, lhs, rhs } => match rhs.kind {
                ExprKind::Int(d) if d > 0 => quotient(lhs, v)?.checked_mul(i64::from(d)),
                _ => None,
            },
            _ => None,
        }
    }
    match &e.kind {
        ExprKind::Binary { op: BinOp::Rem, lhs, rhs } => match rhs.kind {
            ExprKind::Int(b) if b > 0 => Some((quotient(lhs, v)?, Some(i64::from(b)))),
            _ => None,
        },
        _ => quotient(e, v).filter(|&a| a > 1).map(|a| (a, None)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diag::SourceFile;
    use crate::l1::parse::parse;

    /// The body of the outermost loop of the first kernel of `src`, and the band `vars`.
    fn deps(src: &str, vars: &[(&str, i64)]) -> Vec<Dependence> {
        let m = parse(&SourceFile::new("t.ekir", src)).unwrap();
        let Stmt::Loop { body, .. } = &m.kernels[0].body[0] else { panic!("no loop") };
        let band: Vec<BandLoop> = vars
            .iter()
            .map(|(v, n)| BandLoop { var: v.to_string(), range: Some(Interval::new(0, n - 1)) })
            .collect();
        // The outermost loop's own body; the band's first loop is that loop.
        dependences(body, &band)
    }

    fn module(body: &str) -> String {
        format!(
            "module m {{\n  input x: f32[8,4]\n  output y: f32[8,4]\n  output s: f32[8]\n  \
             kernel k(x: f32[8,4] in, y: f32[8,4] out, s: f32[8] out) {{\n{body}\n  }}\n  run k(x, y, s)\n}}\n"
        )
    }

    #[test]
    fn elementwise_loops_carry_nothing_and_reductions_carry_their_loop() {
        let m = module("for i in 0..8 { for j in 0..4 { y[i, j] = x[i, j] } }");
        assert!(deps(&m, &[("i", 8), ("j", 4)]).is_empty());
        let m = module("for i in 0..8 { s[i] = 0.0\n for j in 0..4 { s[i] = s[i] + x[i, j] } }");
        let d = deps(&m, &[("i", 8), ("j", 4)]);
        assert!(!d.is_empty());
        assert!(d.iter().all(|d| d.carried_by == ["j"]), "{d:?}");
        assert!(deps(&m, &[("i", 8)]).is_empty());
    }

    #[test]
    fn fused_digits_pin_the_fused_loop_and_shifted_reads_do_not() {
        let m = module("for f in 0..32 { let i = f / 4\n let j = f % 4\n y[i, j] = x[i, j] }");
        assert!(deps(&m, &[("f", 32)]).is_empty());
        // Only one digit: two iterations may write the same row element.
        let m = module("for f in 0..32 { let i = f / 4\n y[i, 0] = x[i, 0] }");
        assert_eq!(deps(&m, &[("f", 32)])[0].carried_by, ["f"]);
        // A scan reads what the previous iteration wrote.
        let m = module("for i in 1..8 { s[i] = s[i - 1] + x[i, 0] }");
        let d = deps(&m, &[("i", 8)]);
        assert!(d.iter().any(|d| d.first == "s[i - 1]" && d.second == "store s[i]"), "{d:?}");
    }

    #[test]
    fn split_digits_pin_both_loops_and_overlapping_windows_do_not() {
        // What `split` leaves: `o*4 + i` with `i` in 0..4 names each row once.
        let m = module("for o in 0..2 { for i in 0..4 { let r = o * 4 + i\n y[r, 0] = x[r, 0] } }");
        assert!(deps(&m, &[("o", 2), ("i", 4)]).is_empty());
        // The inner loop's range comes from its bounds when only the outer one is the band.
        assert!(deps(&m, &[("o", 2)]).is_empty());
        // Windows of 3 rows at a stride of 2 overlap.
        let m = module("for o in 0..3 { for i in 0..3 { y[o * 2 + i, 0] = x[0, 0] } }");
        assert_eq!(deps(&m, &[("o", 3), ("i", 3)])[0].carried_by, ["o", "i"]);
    }
}
