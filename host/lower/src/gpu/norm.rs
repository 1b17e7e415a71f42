//! `group_norm` on a GPU: a 1-D grid with one thread per (image, group), each running the CPU's
//! naive per-group passes (mean, biased variance, output) over its group. The naive nest's
//! channel index is `group * C/G + c`, which the generic binding cannot prove disjoint across
//! groups; here disjointness holds by construction, since each thread writes only its group.

use super::{launch, unflatten, Gpu};
use crate::sched::Cx;
use crate::Schedule;
use ekb_ir::l1::build::{int, let_, var, Buf, Names};
use ekb_ir::l1::Stmt;
use ekb_ir::TargetProfile;

/// The launch computing `y = group_norm(x, scale, bias)`.
pub fn group_norm(
    gpu: &Gpu,
    target: &TargetProfile,
    names: Names,
    groups: usize,
    eps: f64,
    [x, scale, bias]: [&Buf; 3],
    y: &Buf,
) -> Vec<Stmt> {
    let mut cx = Cx { schedule: Schedule::Naive, target, names, knobs: gpu.knobs };
    let total = x.shape()[0] * groups;
    let block = gpu.block_1d(total);
    let (bx, tx, gid) = (cx.fresh("bx"), cx.fresh("tx"), cx.fresh("gid"));
    let at = unflatten(&var(&gid), &[x.shape()[0], groups]);
    let body =
        crate::norm::group_body(&mut cx, groups, eps, [x, scale, bias, y], at[0].clone(), at[1].clone());
    let mut stmts = vec![let_(&gid, var(&bx) * int(block) + var(&tx))];
    if total.is_multiple_of(block) {
        stmts.extend(body);
    } else {
        stmts.push(ekb_ir::l1::build::if_(var(&gid).lt(int(total)), body, Vec::new()));
    }
    vec![launch(&[(&bx, total.div_ceil(block))], &[(&tx, block)], stmts)]
}
