//! Transposed 2-D convolution (NCHW, weight `[C, OC/groups, KH, KW]`, grouped, strided,
//! dilated, padded, output padding, optional bias), computed in its gather form: each output
//! element sums the taps whose input position `ih = (oh + top - kh*dh) / sh` is a whole number
//! inside the input (and likewise for columns).
//!
//! Layouts: naive, a serial loop per output dim and a `local` scalar accumulator over `(c, kh,
//! kw)`, every tap tried and guarded (`t >= 0`, `t % s == 0`, then `t / s < size`). Default,
//! threads over `(n, oc, oh)` and the columns in a serial loop; without dilation its taps are
//! visited by stride phase: with `t = oh + top`, only `kh = t % s + j*s` lands on a whole input
//! row, `ih = t / s - j`, so `ceil(KH / s)` rows are tried instead of `KH` (a 4x4 kernel of
//! stride 4 has one tap per output in each direction, not 16 to test), with the channel sum
//! innermost and unguarded. Either way the guards are what let the verifier's interval analysis
//! prove every index in bounds.

use crate::conv::dims4;
use crate::sched::{outer, serial, Cx, Nest};
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
    let body = output_element(cx, a, [x, w, y], bias, idx);
    nest.wrap(body)
}

/// The statements computing `y[idx]`: every tap tried under the naive schedule or with
/// dilation, else by stride phase. The GPU lowering runs them on one thread per output element.
pub(crate) fn output_element(
    cx: &mut Cx,
    a: &ConvTranspose2dAttrs,
    bufs: [&Buf; 3],
    bias: Option<&Buf>,
    idx: [E; 4],
) -> Vec<Stmt> {
    if cx.naive() || a.dilation != [1, 1] {
        element(cx, a, bufs, bias, idx)
    } else {
        element_by_phase(cx, a, bufs, bias, idx)
    }
}

/// `g`, `o` (the group and the output channel in it) and the accumulator of `y[.., oi, ..]`
/// started at the bias, with the statements that make them.
fn start_acc(cx: &mut Cx, oi: &E, ocg: usize, bias: Option<&Buf>) -> (String, String, Buf, Vec<Stmt>) {
    let acc = Buf::new(cx.fresh("acc"), TensorType::new(DType::F32, [1]));
    let (g, o) = (cx.fresh("g"), cx.fresh("o"));
    let init = match bias {
        Some(b) => b.load(std::slice::from_ref(oi)),
        None => f(0.0),
    };
    let stmts = vec![
        let_(&g, oi.clone() / int(ocg)),
        let_(&o, oi.clone() % int(ocg)),
        acc.alloc(),
        acc.store(&[int(0)], init),
    ];
    (g, o, acc, stmts)
}

/// The statements computing `y[ni, oi, hi, wi]` without dilation, tap rows and columns by stride
/// phase (see the module header).
fn element_by_phase(
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
    let (g, o, acc, start) = start_acc(cx, &oi, ocg, bias);
    let rows = PhaseAxis::new(cx, hi, a.pad[0], a.stride[0], kh, h);
    let cols = PhaseAxis::new(cx, wi, a.pad[1], a.stride[1], kw, wd);
    let red = serial(cx, &[cg], "r");
    let ch = var(&g) * int(cg) + red.idx[0].clone();
    let update = acc.store(
        &[int(0)],
        acc.load(&[int(0)])
            + x.load(&[ni, ch.clone(), var(&rows.i), var(&cols.i)])
                * w.load(&[ch, var(&o), var(&rows.k), var(&cols.k)]),
    );
    [start, rows.wrap(cols.wrap(red.wrap(vec![update]))), vec![y.store(&idx, acc.load(&[int(0)]))]].concat()
}

/// One axis of [`element_by_phase`]: `t = out + pad`; tap `j` of `0..ceil(K / s)` is kernel
/// position `k = t % s + j*s` on input position `i = t / s - j`, taken when `k < K` and
/// `0 <= i < size`.
struct PhaseAxis {
    t: String,
    k: String,
    i: String,
    out: E,
    pad: usize,
    stride: usize,
    kernel: usize,
    size: usize,
    taps: Nest,
}

impl PhaseAxis {
    fn new(cx: &mut Cx, out: E, pad: usize, stride: usize, kernel: usize, size: usize) -> PhaseAxis {
        let (t, k, i) = (cx.fresh("t"), cx.fresh("k"), cx.fresh("i"));
        let taps = serial(cx, &[kernel.div_ceil(stride)], "j");
        PhaseAxis { t, k, i, out, pad, stride, kernel, size, taps }
    }

    /// The taps of this axis around `inner`.
    fn wrap(self, inner: Vec<Stmt>) -> Vec<Stmt> {
        let (s, j) = (int(self.stride), self.taps.idx[0].clone());
        let taken = var(&self.k)
            .lt(int(self.kernel))
            .and(var(&self.i).ge(int(0)))
            .and(var(&self.i).lt(int(self.size)));
        let tap = vec![
            let_(&self.k, var(&self.t) % s.clone() + j.clone() * s.clone()),
            let_(&self.i, var(&self.t) / s - j),
            if_(taken, inner, vec![]),
        ];
        [vec![let_(&self.t, self.out + ints(self.pad as i64))], self.taps.wrap(tap)].concat()
    }
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
    let (g, o, acc, start) = start_acc(cx, &oi, ocg, bias);
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
    [start, red.wrap(tap), vec![y.store(&idx, acc.load(&[int(0)]))]].concat()
}

#[cfg(test)]
mod tests {
    use crate::testing::{gpu_lowered_matches_reference, lowered_matches_reference};
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

    #[test]
    fn the_default_visits_only_the_taps_of_each_stride_phase_and_matches_the_reference() {
        // Kernel equal to the stride, larger than it with padding and output padding, smaller
        // than it, and grouped: every output position's phase meets 0, 1 or several taps. On
        // the CPU and the GPU (one thread per output element).
        for (shapes, attrs) in [
            (
                "x: f32[1,4,5,6]) -> (y: f32[1,3,20,24]) {\n  param w: f32[4,3,4,4]",
                "stride=[4,4], pad=[0,0,0,0], output_padding=[0,0], dilation=[1,1], groups=1",
            ),
            (
                "x: f32[1,4,5,6]) -> (y: f32[1,4,11,16]) {\n  param w: f32[4,2,5,7]",
                "stride=[3,3], pad=[4,4,4,4], output_padding=[2,2], dilation=[1,1], groups=2",
            ),
            (
                "x: f32[1,2,4,5]) -> (y: f32[1,3,13,10]) {\n  param w: f32[2,3,2,1]",
                "stride=[3,2], pad=[0,0,0,0], output_padding=[2,1], dilation=[1,1], groups=1",
            ),
        ] {
            let g = format!(
                "graph g({shapes} = kaiming_uniform\n  %0 = conv_transpose2d(x, w, {attrs})\n  return %0\n}}\n"
            );
            for lowered in [lowered_matches_reference, gpu_lowered_matches_reference] {
                let naive = print(&lowered(&g, Schedule::Naive, "h200"));
                let default = print(&lowered(&g, Schedule::Default, "h200"));
                assert!(naive.contains("% 4 == 0") || naive.contains("% 3 == 0"), "{naive}");
                assert!(!default.contains(" == 0 &&") && default.contains(" % "), "{default}");
            }
        }
    }
}
