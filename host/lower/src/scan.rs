//! Running sums along one axis: `cumsum` (inclusive or exclusive, forwards or reversed).
//!
//! Layouts. Naive: a serial loop over every other dim, a `local` accumulator, and the scan along
//! the axis, each element stored as the accumulator passes it (before adding it when
//! `exclusive`). Default: threads over the dims before the axis; the first element of the axis
//! (the last with `reverse`) is written, then each next one from its predecessor in the output,
//! `y[k] = y[k-1] + x[k]` (`+ x[k-1]` when exclusive), with the dims after the axis in a vector
//! loop: lanes never depend on each other. Both add the elements in the same order, so they give
//! the same bits.

use crate::norm::row_nest;
use crate::reduce::norm_axis;
use crate::sched::{outer, serial, Cx};
use ekb_ir::l1::build::{f, int, let_, loop_, var, Buf, E};
use ekb_ir::l1::{LoopKind, Stmt};
use ekb_ir::{DType, TensorType};

/// `y = cumsum(x, axis, exclusive, reverse)`.
pub fn cumsum(cx: &mut Cx, axis: i64, exclusive: bool, reverse: bool, x: &Buf, y: &Buf) -> Vec<Stmt> {
    let shape = x.shape().to_vec();
    let a = norm_axis(axis, shape.len());
    let n = shape[a];
    let zero = if x.ty.dtype == DType::F32 { f(0.0) } else { int(0) };
    // The position along the axis of scan step `k`.
    let pos = |k: E| if reverse { int(n - 1) - k } else { k };
    if cx.naive() {
        let others: Vec<usize> = shape.iter().enumerate().filter(|&(d, _)| d != a).map(|(_, &e)| e).collect();
        let nest = serial(cx, &others, "i");
        let acc = Buf::new(cx.fresh("acc"), TensorType::new(x.ty.dtype, [1]));
        let (k, j) = (cx.fresh("k"), cx.fresh("j"));
        let mut at = nest.idx.clone();
        at.insert(a, var(&j));
        let add = acc.store(&[int(0)], acc.load(&[int(0)]) + x.load(&at));
        let store = y.store(&at, acc.load(&[int(0)]));
        let step = if exclusive {
            vec![let_(&j, pos(var(&k))), store, add]
        } else {
            vec![let_(&j, pos(var(&k))), add, store]
        };
        let body =
            vec![acc.alloc(), acc.store(&[int(0)], zero), loop_(LoopKind::Serial, &k, int(0), int(n), step)];
        return nest.wrap(body);
    }
    let threads = cx.wants_threads(x.ty.numel());
    let nest = outer(cx, &shape[..a], threads, "i");
    let pre = nest.idx.clone();
    let post = &shape[a + 1..];
    let at = |k: E, rest: &[E]| [pre.clone(), vec![k], rest.to_vec()].concat();
    let first = row_nest(cx, post, "r");
    let head = if exclusive { zero } else { x.load(&at(pos(int(0)), &first.idx)) };
    let store = y.store(&at(pos(int(0)), &first.idx), head);
    let mut body = first.wrap(vec![store]);
    if n > 1 {
        let (k, j, jp) = (cx.fresh("k"), cx.fresh("j"), cx.fresh("jp"));
        let row = row_nest(cx, post, "r");
        let added = if exclusive { &jp } else { &j };
        let value = y.load(&at(var(&jp), &row.idx)) + x.load(&at(var(added), &row.idx));
        let prev = if reverse { int(n) - var(&k) } else { var(&k) - int(1) };
        let mut step = vec![let_(&j, pos(var(&k))), let_(&jp, prev)];
        let store = y.store(&at(var(&j), &row.idx), value);
        step.extend(row.wrap(vec![store]));
        body.push(loop_(LoopKind::Serial, &k, int(1), int(n), step));
    }
    nest.wrap(body)
}

#[cfg(test)]
mod tests {
    use crate::testing::lowered_matches_reference;
    use crate::Schedule;
    use ekb_ir::l1::print::print;

    #[test]
    fn threaded_scans_match_the_reference_in_every_direction() {
        // 4 * 128 * 160 elements: enough work for threads over the leading dim under the default
        // schedule, with the dims after the axis in vector loops.
        let g = "graph g(x: f32[4,128,160], i: i32[4,128,160] = randint(-1000, 1000)) -> (a: f32[4,128,160], b: f32[4,128,160], c: i32[4,128,160]) {
  %a = cumsum(x, axis=1)
  %b = cumsum(x, axis=1, exclusive=true, reverse=true)
  %c = cumsum(i, axis=-1, exclusive=true)
  return %a, %b, %c
}
";
        let m = lowered_matches_reference(g, Schedule::Default, "rk3588");
        let text = print(&m);
        assert_eq!(text.matches("parallel ").count(), 3, "{text}");
        assert!(text.contains("vectorize"), "{text}");
        let m = lowered_matches_reference(g, Schedule::Naive, "rk3588");
        assert!(!print(&m).contains("parallel "));
    }
}
