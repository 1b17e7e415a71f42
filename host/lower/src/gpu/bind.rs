//! Binds the outer loops of a naive kernel to a 1-D GPU grid: one thread per iteration.
//!
//! A naive kernel's body is a nest of serial loops `for v in 0..n` around the computation of one
//! output element (or row). The outermost perfectly nested loops whose iterations touch disjoint
//! elements are flattened: `launch grid(bx in 0..G) block(tx in 0..B) { let gid = bx * B + tx;
//! if gid < N { let v0 = gid / .. ; ..; body } }`, the loop variables recovered row-major so that
//! neighbouring threads handle neighbouring elements (coalesced accesses).
//!
//! Disjointness, the property that makes the threads independent, is checked, not assumed: the
//! dependence analysis must find no pair of accesses to a written buffer that two iterations of
//! a bound loop could share (each bound variable fixes some dimension of every such access).
//! Reads of `in` buffers and of the body's own allocations never conflict. When a prefix fails the check, a shorter one is bound (at worst none: one
//! thread runs the whole body, which is correct and slow).

use super::{launch, Gpu, Grid1d};
use ekb_ir::l1::analysis::deps::{dependences, BandLoop};
use ekb_ir::l1::analysis::interval::Interval;
use ekb_ir::l1::build::{let_, Names};
use ekb_ir::l1::visit::defined_names;
use ekb_ir::l1::{ExprKind, Kernel, LoopKind, Stmt};

/// The GPU kernel bodies for a naive kernel: one per top-level loop nest when the body is a
/// sequence of nests (they run in order, as separate launches), else one.
pub fn bind(gpu: &Gpu, k: &Kernel) -> Vec<Vec<Stmt>> {
    let all_nests = k.body.len() > 1 && k.body.iter().all(|s| !nest(std::slice::from_ref(s)).0.is_empty());
    let parts: Vec<&[Stmt]> =
        if all_nests { k.body.iter().map(std::slice::from_ref).collect() } else { vec![k.body.as_slice()] };
    parts
        .into_iter()
        .map(|body| {
            let mut names = Names::default();
            for n in defined_names(k) {
                names.reserve(&n);
            }
            one(gpu, &mut names, body)
        })
        .collect()
}

/// One launch over the longest disjoint prefix of the nest `body`.
fn one(gpu: &Gpu, names: &mut Names, body: &[Stmt]) -> Vec<Stmt> {
    let (mut loops, _) = nest(body);
    while !loops.is_empty() && !disjoint(inner(body, loops.len()), &loops) {
        loops.pop();
    }
    let inner_body = inner(body, loops.len()).to_vec();
    if loops.is_empty() {
        let (bx, tx) = (names.fresh("bx"), names.fresh("tx"));
        return vec![launch(&[(&bx, 1)], &[(&tx, 1)], inner_body)];
    }
    let extents: Vec<usize> = loops.iter().map(|(_, n)| *n).collect();
    let grid = Grid1d::new(gpu, names, &extents);
    let mut stmts: Vec<Stmt> = loops.iter().zip(&grid.idx).map(|((v, _), e)| let_(v, e.clone())).collect();
    stmts.extend(inner_body);
    vec![grid.launch(stmts)]
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

/// Whether iterations of `loops` touch disjoint elements of every written buffer: no pair of
/// accesses may connect two iterations of any bound loop (`ekb_ir::l1::analysis::deps`).
fn disjoint(body: &[Stmt], loops: &[(String, usize)]) -> bool {
    let band: Vec<BandLoop> = loops
        .iter()
        .map(|(v, n)| BandLoop { var: v.clone(), range: Some(Interval::new(0, *n as i64 - 1)) })
        .collect();
    dependences(body, &band).is_empty()
}
