//! Normalisations: `layer_norm` and `rms_norm` over the trailing dims of their weight's rank,
//! and the inference form of `batch_norm` (per channel on axis 1).
//!
//! `layer_norm` is two-pass per row (mean, then biased variance of `x - mean`), then the output
//! pass; `rms_norm` one pass for `mean(x^2)`, then the output pass. Both schedules compute the
//! same sums; the default one threads over rows, vectorizes the innermost pass loops, and
//! multiplies by a per-row `1 / sqrt(var + eps)` instead of dividing every element.

use crate::build::{f, int, let_, var, Buf, E};
use crate::sched::{elementwise, outer, serial, Cx, Nest};
use ekb_ir::l1::Stmt;
use ekb_ir::{DType, TensorType};

/// Serial loops over `extents`, the innermost one vectorized under the default schedule.
fn row_nest(cx: &mut Cx, extents: &[usize], base: &str) -> Nest {
    let Some((&last, init)) = extents.split_last() else { return Nest::default() };
    let mut nest = serial(cx, init, base);
    if last == 1 {
        nest.idx.push(int(0));
    } else {
        let v = cx.fresh(&format!("{base}{}", extents.len() - 1));
        let kind = cx.inner_kind(last);
        let e = nest.push(kind, &v, int(0), int(last));
        nest.idx.push(e);
    }
    nest
}

/// `layer_norm(x, w, b)` when `b` is given, else `rms_norm(x, w)`: normalise over the trailing
/// `w.rank` dims.
pub fn layer_norm(cx: &mut Cx, eps: f64, x: &Buf, w: &Buf, b: Option<&Buf>, y: &Buf) -> Vec<Stmt> {
    let shape = x.shape().to_vec();
    let k = w.rank();
    let (rows, inner) = shape.split_at(shape.len() - k);
    let n: usize = inner.iter().product();
    let threads = cx.wants_threads(3 * x.ty.numel());
    let nest = outer(cx, rows, threads, "i");
    let row = nest.idx.clone();
    let at = |t: &[E]| [row.clone(), t.to_vec()].concat();
    let acc = Buf::new(cx.fresh("acc"), TensorType::new(DType::F32, [1]));
    let a0 = || acc.load(&[int(0)]);
    let mut body = vec![acc.alloc(), acc.store(&[int(0)], f(0.0))];
    let pass1 = row_nest(cx, inner, "r");
    let mean = cx.fresh("mean");
    let scale = cx.fresh("scale");
    let centered = |t: &[E]| if b.is_some() { x.load(&at(t)) - var(&mean) } else { x.load(&at(t)) };
    if b.is_some() {
        // Mean, then the biased variance of the centred values.
        let step = acc.store(&[int(0)], a0() + x.load(&at(&pass1.idx)));
        body.extend(pass1.wrap(vec![step]));
        body.push(let_(&mean, a0() / f(n as f64)));
        body.push(acc.store(&[int(0)], f(0.0)));
        let pass2 = row_nest(cx, inner, "r");
        let d = cx.fresh("d");
        let step = vec![let_(&d, centered(&pass2.idx)), acc.store(&[int(0)], a0() + var(&d) * var(&d))];
        body.extend(pass2.wrap(step));
    } else {
        let v = cx.fresh("v");
        let step = vec![let_(&v, x.load(&at(&pass1.idx))), acc.store(&[int(0)], a0() + var(&v) * var(&v))];
        body.extend(pass1.wrap(step));
    }
    let var_eps = a0() / f(n as f64) + f(eps);
    let out = row_nest(cx, inner, "r");
    let normed = if cx.naive() {
        centered(&out.idx) / var_eps.sqrt()
    } else {
        body.push(let_(&scale, f(1.0) / var_eps.sqrt()));
        centered(&out.idx) * var(&scale)
    };
    let mut value = normed * w.load(&out.idx);
    if let Some(b) = b {
        value = value + b.load(&out.idx);
    }
    let store = y.store(&at(&out.idx), value);
    body.extend(out.wrap(vec![store]));
    nest.wrap(body)
}

/// `batch_norm(x, gamma, beta, mean, var)`: `(x - mean[c]) / sqrt(var[c] + eps) * gamma[c] + beta[c]`
/// with `c` the index on axis 1.
pub fn batch_norm(
    cx: &mut Cx,
    eps: f64,
    x: &Buf,
    [gamma, beta, mean, var_]: [&Buf; 4],
    y: &Buf,
) -> Vec<Stmt> {
    elementwise(cx, y.shape(), 4, |_, idx| {
        let c = [idx[1].clone()];
        let value =
            (x.load(idx) - mean.load(&c)) / (var_.load(&c) + f(eps)).sqrt() * gamma.load(&c) + beta.load(&c);
        vec![y.store(idx, value)]
    })
}
