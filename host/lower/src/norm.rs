//! Normalisations: `layer_norm` and `rms_norm` over the trailing dims of their weight's rank,
//! the inference form of `batch_norm` (per channel on axis 1), and `group_norm` (per group of
//! channels of one image, over those channels and every later axis).
//!
//! `layer_norm` is two-pass per row (mean, then biased variance of `x - mean`), then the output
//! pass; `rms_norm` one pass for `mean(x^2)`, then the output pass. Under the default schedule a
//! row along one axis sums on `4 * lanes` partial results (`reduce::lane_partials`). Both schedules compute the
//! same sums; the default one threads over rows, vectorizes the innermost pass loops, and
//! multiplies by a per-row `1 / sqrt(var + eps)` instead of dividing every element. `group_norm`
//! is the same three passes per (image, group), its channel index `group * C/G + c`.

use crate::sched::{elementwise, outer, serial, Cx, Nest};
use ekb_ir::l1::build::{f, int, let_, var, Buf, E};
use ekb_ir::l1::Stmt;
use ekb_ir::{DType, TensorType};

/// Serial loops over `extents`, the innermost one vectorized under the default schedule.
pub fn row_nest(cx: &mut Cx, extents: &[usize], base: &str) -> Nest {
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
    let mean = cx.fresh("mean");
    let scale = cx.fresh("scale");
    let centered = |t: &[E]| if b.is_some() { x.load(&at(t)) - var(&mean) } else { x.load(&at(t)) };
    // Under the default schedule a row along one axis sums on partial vectors
    // (`reduce::lane_partials`): a single accumulator would be one chain of dependent vector
    // additions, its latency, not the loads, setting the time of each pass.
    let partials = !cx.naive() && inner.len() == 1;
    let add = |s: E, v: E| s + v;
    let sum = |cx: &mut Cx, body: &mut Vec<Stmt>, term: &dyn Fn(&[E]) -> E| {
        if partials {
            body.extend(crate::reduce::lane_partials(cx, n, f(0.0), add, &acc, &|k| term(&[k])));
        } else {
            let pass = row_nest(cx, inner, "r");
            let step = acc.store(&[int(0)], a0() + term(&pass.idx));
            body.extend(pass.wrap(vec![step]));
        }
    };
    if b.is_some() {
        // The mean first; then the biased variance of the centred values.
        sum(cx, &mut body, &|t| x.load(&at(t)));
        body.push(let_(&mean, a0() / f(n as f64)));
        body.push(acc.store(&[int(0)], f(0.0)));
    }
    sum(cx, &mut body, &|t| centered(t) * centered(t));
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
/// with `c` the index on axis 1. The default schedule (a folded member too) multiplies by the channel's
/// `gamma[c] / sqrt(var[c] + eps)` instead: an expression of the channel alone, which the
/// compiler computes once per channel where the loop over a channel's elements is innermost (a
/// fused convolution's epilogue), so no element is divided.
pub fn batch_norm(
    cx: &mut Cx,
    eps: f64,
    x: &Buf,
    [gamma, beta, mean, var_]: [&Buf; 4],
    y: &Buf,
) -> Vec<Stmt> {
    let naive = cx.baseline_arithmetic();
    elementwise(cx, y.shape(), 4, |_, idx| {
        let c = [idx[1].clone()];
        let centered = x.load(idx) - mean.load(&c);
        let sd = (var_.load(&c) + f(eps)).sqrt();
        let value = if naive {
            centered / sd * gamma.load(&c) + beta.load(&c)
        } else {
            centered * (gamma.load(&c) / sd) + beta.load(&c)
        };
        vec![y.store(idx, value)]
    })
}

/// `group_norm(x, scale, bias, groups)`: the loops over images and groups (threads over both
/// under the default schedule) around [`group_body`].
pub fn group_norm(
    cx: &mut Cx,
    groups: usize,
    eps: f64,
    x: &Buf,
    scale: &Buf,
    bias: &Buf,
    y: &Buf,
) -> Vec<Stmt> {
    let threads = cx.wants_threads(3 * x.ty.numel());
    let nest = outer(cx, &[x.shape()[0], groups], threads, "i");
    let (n, g) = (nest.idx[0].clone(), nest.idx[1].clone());
    let body = group_body(cx, groups, eps, [x, scale, bias, y], n, g);
    nest.wrap(body)
}

/// One group `g` of image `n`: the mean, the biased variance of `x - mean` over the group's
/// `C/G` channels and all later axes, then `(x - mean) / sqrt(var + eps) * scale[c] + bias[c]`.
pub fn group_body(cx: &mut Cx, groups: usize, eps: f64, bufs: [&Buf; 4], n: E, g: E) -> Vec<Stmt> {
    let [x, scale, bias, y] = bufs;
    let cg = x.shape()[1] / groups;
    let extents = [&[cg][..], &x.shape()[2..]].concat();
    let count: usize = extents.iter().product();
    let c0 = cx.fresh("c0");
    // The index of x (and y) for an index into the group's extents.
    let at = |t: &[E]| [vec![n.clone(), var(&c0) + t[0].clone()], t[1..].to_vec()].concat();
    let acc = Buf::new(cx.fresh("acc"), TensorType::new(DType::F32, [1]));
    let a0 = || acc.load(&[int(0)]);
    let mut body = vec![let_(&c0, g * int(cg)), acc.alloc(), acc.store(&[int(0)], f(0.0))];
    let pass1 = row_nest(cx, &extents, "r");
    let step = acc.store(&[int(0)], a0() + x.load(&at(&pass1.idx)));
    body.extend(pass1.wrap(vec![step]));
    let mean = cx.fresh("mean");
    body.push(let_(&mean, a0() / f(count as f64)));
    body.push(acc.store(&[int(0)], f(0.0)));
    let pass2 = row_nest(cx, &extents, "r");
    let d = cx.fresh("d");
    let step =
        vec![let_(&d, x.load(&at(&pass2.idx)) - var(&mean)), acc.store(&[int(0)], a0() + var(&d) * var(&d))];
    body.extend(pass2.wrap(step));
    let var_eps = a0() / f(count as f64) + f(eps);
    let out = row_nest(cx, &extents, "r");
    let centered = x.load(&at(&out.idx)) - var(&mean);
    let normed = if cx.naive() {
        centered / var_eps.sqrt()
    } else {
        let scale_v = cx.fresh("scale");
        body.push(let_(&scale_v, f(1.0) / var_eps.sqrt()));
        centered * var(&scale_v)
    };
    let ch = [var(&c0) + out.idx[0].clone()];
    let store = y.store(&at(&out.idx), normed * scale.load(&ch) + bias.load(&ch));
    body.extend(out.wrap(vec![store]));
    body
}

#[cfg(test)]
mod tests {
    use crate::testing::lowered_matches_reference;
    use crate::Schedule;
    use ekb_ir::l1::print::print;

    #[test]
    fn threaded_group_norm_matches_the_reference() {
        let g = "graph g(x: f32[2,8,48,48]) -> (y: f32[2,8,48,48]) {
  param s: f32[8] = uniform(0.5, 1.5)
  param b: f32[8] = uniform(-1, 1)
  %0 = group_norm(x, s, b, groups=4)
  return %0
}
";
        for schedule in Schedule::ALL {
            let m = lowered_matches_reference(g, schedule, "rk3588");
            assert_eq!(print(&m).contains("parallel "), schedule == Schedule::Default);
        }
    }

    #[test]
    fn batch_norm_multiplies_by_the_channel_scale_also_folded_into_a_convolution() {
        // Alone, then folded into the convolution's stores: the default schedule multiplies by
        // `gamma / sqrt(var + eps)`; the naive one divides by the square root, as written.
        let g = "graph g(x: f32[1,3,6,6]) -> (y: f32[1,4,6,6], z: f32[1,4,6,6]) {
  param w: f32[4,3,3,3] = kaiming_uniform
  param ga: f32[4] = uniform(0.5, 1.5)
  param be: f32[4] = uniform(-0.5, 0.5)
  param mu: f32[4] = uniform(-0.5, 0.5)
  param va: f32[4] = uniform(0.5, 1.5)
  %c = conv2d(x, w, pad=[1,1,1,1])
  %y = batch_norm(%c, ga, be, mu, va, eps=0.001)
  %d = conv2d(x, w, pad=[1,1,1,1])
  %z = batch_norm(%d, ga, be, mu, va, eps=0.001)
  fuse %d, %z
  return %y, %z
}
";
        let scale = "* (ga[";
        let divided = ") / sqrt(va[";
        for schedule in Schedule::ALL {
            let text = print(&lowered_matches_reference(g, schedule, "rk3588"));
            let default = schedule == Schedule::Default;
            assert_eq!(text.matches(scale).count(), if default { 2 } else { 0 }, "{text}");
            assert_eq!(text.matches(divided).count(), if default { 0 } else { 2 }, "{text}");
        }
    }
}
