//! Transposed 2-D convolution (NCHW, weight `[C, OC/groups, KH, KW]`, grouped, strided,
//! dilated, padded, output padding, optional bias), computed in its gather form: each output
//! element sums the taps whose input position `ih = (oh + top - kh*dh) / sh` is a whole number
//! inside the input (and likewise for columns).
//!
//! Layouts: naive, a serial loop per output dim and a `local` scalar accumulator over `(c, kh,
//! kw)`; default, the same per-element body with threads over `(n, oc, oh)` and the columns in a
//! serial loop. Every input index is guarded (`t >= 0`, `t % s == 0`, then `t / s < size`), which
//! is also what lets the verifier's interval analysis prove it in bounds.

use crate::conv::dims4;
use crate::sched::{outer, serial, Cx};
use ekb_ir::l0::ConvTranspose2dAttrs;
use ekb_ir::l1::build::{f, if_, int, ints, let_, var, Buf, E};
use ekb_ir::l1::Stmt;
use ekb_ir::{DType, TensorType};

/// `y = conv_transpose2d(x, w, bias)`.
pub fn conv_transpose2d(
    cx: &mut Cx,
    a: &ConvTranspose2dAttrs,
    x: &Buf,
    w: &Buf,
    bias: Option<&Buf>,
    y: &Buf,
) -> Vec<Stmt> {
    let [n, oc, oh, ow] = dims4(y);
    let nest = if cx.naive() {
        serial(cx, &[n, oc, oh, ow], "i")
    } else {
        let threads =
            cx.wants_threads(2 * y.ty.numel() * x.shape()[1] / a.groups * w.shape()[2] * w.shape()[3]);
        let mut nest = outer(cx, &[n, oc, oh], threads, "i");
        nest.extend(serial(cx, &[ow], "w"));
        nest
    };
    let idx = <[E; 4]>::try_from(nest.idx.clone()).expect("rank 4");
    let body = element(cx, a, [x, w, y], bias, idx);
    nest.wrap(body)
}

/// The statements computing `y[ni, oi, hi, wi]`.
fn element(
    cx: &mut Cx,
    a: &ConvTranspose2dAttrs,
    [x, w, y]: [&Buf; 3],
    bias: Option<&Buf>,
    idx: [E; 4],
) -> Vec<Stmt> {
    let [_, c, h, wd] = dims4(x);
    let [_, ocg, kh, kw] = dims4(w);
    let cg = c / a.groups;
    let [ni, oi, hi, wi] = idx.clone();
    let acc = Buf::new(cx.fresh("acc"), TensorType::new(DType::F32, [1]));
    let (g, o) = (cx.fresh("g"), cx.fresh("o"));
    let red = serial(cx, &[cg, kh, kw], "r");
    let [ci, khi, kwi] = <[E; 3]>::try_from(red.idx.clone()).expect("rank 3");
    let (th, ih, tw, iw) = (cx.fresh("th"), cx.fresh("ih"), cx.fresh("tw"), cx.fresh("iw"));
    let ch = var(&g) * int(cg) + ci.clone();
    let update = acc.store(
        &[int(0)],
        acc.load(&[int(0)])
            + x.load(&[ni, ch.clone(), var(&ih), var(&iw)])
                * w.load(&[ch, var(&o), khi.clone(), kwi.clone()]),
    );
    // `let i = t / s; if i < size { inner }` under `if t >= 0 && t % s == 0`.
    let axis = |t: &str, i: &str, s: usize, size: usize, inner: Vec<Stmt>| {
        if_(
            var(t).ge(int(0)).and((var(t) % int(s)).eq(int(0))),
            vec![let_(i, var(t) / int(s)), if_(var(i).lt(int(size)), inner, vec![])],
            vec![],
        )
    };
    let cols = vec![
        let_(&tw, wi + ints(a.pad[1] as i64) - kwi * int(a.dilation[1])),
        axis(&tw, &iw, a.stride[1], wd, vec![update]),
    ];
    let tap = vec![
        let_(&th, hi + ints(a.pad[0] as i64) - khi * int(a.dilation[0])),
        axis(&th, &ih, a.stride[0], h, cols),
    ];
    let init = match bias {
        Some(b) => b.load(std::slice::from_ref(&oi)),
        None => f(0.0),
    };
    [
        vec![
            let_(&g, oi.clone() / int(ocg)),
            let_(&o, oi % int(ocg)),
            acc.alloc(),
            acc.store(&[int(0)], init),
        ],
        red.wrap(tap),
        vec![y.store(&idx, acc.load(&[int(0)]))],
    ]
    .concat()
}

#[cfg(test)]
mod tests {
    use crate::testing::lowered_matches_reference;
    use crate::Schedule;
    use ekb_ir::l1::print::print;

    #[test]
    fn threaded_transposed_convolution_matches_the_reference() {
        // Enough work for threads; stride 2 with output padding, dilation and groups.
        let g = "graph g(x: f32[1,8,12,10]) -> (y: f32[1,6,25,23]) {
  param w: f32[8,3,3,3] = kaiming_uniform
  param b: f32[6] = uniform(-1, 1)
  %0 = conv_transpose2d(x, w, b, stride=[2,2], pad=[1,0,0,1], output_padding=[1,1], dilation=[1,2], groups=2)
  return %0
}
";
        for schedule in Schedule::ALL {
            let m = lowered_matches_reference(g, schedule, "rk3588");
            assert_eq!(print(&m).contains("parallel "), schedule == Schedule::Default);
        }
    }
}
