//! Transposed 2-D convolution (NCHW, weight `[C, OC/groups, KH, KW]`, grouped, strided,
//! dilated, padded, output padding, optional bias), computed in its gather form: each output
//! element sums the taps whose input position `ih = (oh + top - kh*dh) / sh` is a whole number
//! inside the input (and likewise for columns).
//!
//! Layouts: naive, a serial loop per output dim and a `local` scalar accumulator over `(c, kh,
//! kw)`, every tap tried and guarded (`t >= 0`, `t % s == 0`, then `t / s < size`).
//!
//! Default, ungrouped f32 without dilation (when its row copy fits a quarter of the stack):
//! register tiles by stride phase. Threads over `(n, output-channel block, oh)`; an output row
//! `oh` takes the kernel rows `kh = t % sh + th*sh` on input rows `t / sh - th` (`t = oh + top`),
//! so each iteration first copies those `ceil(KH / sh)` input rows of every channel,
//! zero-padded (a kernel row past `KH` or an input row outside the image is zeros), then, per
//! column phase `rx` (a literal: `sw` copies of the code), covers the outputs `ow = rx + sw*i`
//! with tiles of `conv.oc_block` channels by `conv.ow_tile` consecutive `i`: the tap columns of
//! the phase are literals too, each an input column `i + (rx + left) / sw - tw` contiguous in
//! `i`, so the tile's vector loop is a contiguous load shared by the unrolled channels, as in
//! the direct convolution (`crate::conv`); only the stores are strided (`sw` apart).
//!
//! Default otherwise: threads over `(n, oc, oh)` and the columns in a serial loop; without
//! dilation its taps are
//! visited by stride phase: with `t = oh + top`, only `kh = t % s + j*s` lands on a whole input
//! row, `ih = t / s - j`, so `ceil(KH / s)` rows are tried instead of `KH` (a 4x4 kernel of
//! stride 4 has one tap per output in each direction, not 16 to test), with the channel sum
//! innermost and unguarded. Either way the guards are what let the verifier's interval analysis
//! prove every index in bounds.

use crate::conv::{block_channels, dims4, flat_transpose};
use crate::recipe::Knob;
use crate::sched::{outer, serial, simple_loop, tiles, Cx, Nest};
use ekb_ir::l0::ConvTranspose2dAttrs;
use ekb_ir::l1::build::{f, if_, int, ints, let_, loop_, var, zero, Buf, E};
use ekb_ir::l1::{LoopKind, Stmt};
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
    if !cx.naive() {
        if flat_transpose::applies(cx, a, x, w, y) {
            return flat_transpose::conv_transpose2d(cx, a, x, w, bias, y);
        }
        if let Some(body) = phase_tiles(cx, a, [x, w, y], bias) {
            return body;
        }
    }
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

/// The taps of one axis by phase: for phase `a < s`, each `(k, d)` with kernel position `k`
/// and input offset `d` from the cell (`i = q + d`).
pub(crate) fn phase_taps(s: usize, pad: usize, kernel: usize) -> Vec<Vec<(usize, i64)>> {
    (0..s)
        .map(|a| {
            let (first, base) = ((a + pad) % s, ((a + pad) / s) as i64);
            (0..kernel.saturating_sub(first).div_ceil(s)).map(|j| (first + j * s, base - j as i64)).collect()
        })
        .collect()
}

/// One column phase of [`phase_tiles`]: the phase `rx`, its first kernel column `kw0 = (rx +
/// left) % sw` and taps `kw0 + tw*sw < KW`, the input column of its output 0 for tap 0 `bx =
/// (rx + left) / sw`, and its outputs `ceil((OW - rx) / sw)`.
struct ColumnPhase {
    rx: usize,
    kw0: usize,
    taps: usize,
    bx: usize,
    outputs: usize,
}

/// The register-tiled layout by stride phase (see the module header), where it applies.
fn phase_tiles(
    cx: &mut Cx,
    a: &ConvTranspose2dAttrs,
    [x, w, y]: [&Buf; 3],
    bias: Option<&Buf>,
) -> Option<Vec<Stmt>> {
    let f32s = [x.ty.dtype, w.ty.dtype, y.ty.dtype].iter().all(|&d| d == DType::F32);
    if a.groups != 1 || a.dilation != [1, 1] || !f32s {
        return None;
    }
    let [n, c, h, wd] = dims4(x);
    let [_, oc, kh, kw] = dims4(w);
    let [_, _, oh, ow] = dims4(y);
    let [sh, sw] = a.stride;
    let (pt, pl) = (a.pad[0], a.pad[1]);
    let phases: Vec<ColumnPhase> = (0..sw.min(ow))
        .map(|rx| {
            let kw0 = (rx + pl) % sw;
            let taps = kw.saturating_sub(kw0).div_ceil(sw);
            ColumnPhase { rx, kw0, taps, bx: (rx + pl) / sw, outputs: (ow - rx).div_ceil(sw) }
        })
        .collect();
    // Copy column `q` holds input column `q - pad`: every tap's column `bx + i - tw` is inside.
    let rows_per = kh.div_ceil(sh);
    let pad = kw.div_ceil(sw) - 1;
    let width = phases.iter().map(|p| p.bx + p.outputs + pad).max()?;
    let copy_ty = TensorType::new(DType::F32, [c, rows_per, width]);
    if copy_ty.size_bytes() as u64 > cx.target.cpu.stack_bytes / 4 {
        return None;
    }
    let ocb = block_channels(cx, oc);
    let threads = cx.wants_threads(2 * y.ty.numel() * c * rows_per * kw.div_ceil(sw));
    let nest = outer(cx, &[n, oc / ocb, oh], threads, "i");
    let (ni, ob, ohi) = (nest.idx[0].clone(), nest.idx[1].clone(), nest.idx[2].clone());
    let (t, oc0) = (cx.fresh("t"), cx.fresh("oc0"));
    let rows = Buf::new(cx.fresh("rows"), copy_ty);

    // rows[ci, th, q] = x[n, ci, t / sh - th, q - pad] for kernel rows t % sh + th*sh < KH.
    let (ci, th, ih, khv) = (cx.fresh("ci"), cx.fresh("th"), cx.fresh("ih"), cx.fresh("kh"));
    let zeros = |cx: &mut Cx, lo: usize, hi: usize| -> Vec<Stmt> {
        let q = cx.fresh("q");
        let at = [var(&ci), var(&th), var(&q)];
        (lo < hi)
            .then(|| loop_(cx.inner_kind(hi - lo), &q, int(lo), int(hi), vec![rows.store(&at, f(0.0))]))
            .into_iter()
            .collect()
    };
    let (lo, hi) = (pad.min(width), (pad + wd).min(width));
    let q = cx.fresh("q");
    let copy = loop_(
        cx.inner_kind(hi - lo),
        &q,
        int(lo),
        int(hi),
        vec![rows.store(
            &[var(&ci), var(&th), var(&q)],
            x.load(&[ni.clone(), var(&ci), var(&ih), var(&q) - int(pad)]),
        )],
    );
    let inside = [zeros(cx, 0, lo), vec![copy], zeros(cx, hi, width)].concat();
    let outside = zeros(cx, 0, width);
    let taken = var(&khv).lt(int(kh)).and(var(&ih).in_range(int(0), int(h)));
    let fill = simple_loop(
        LoopKind::Serial,
        &ci,
        c,
        vec![simple_loop(
            LoopKind::Serial,
            &th,
            rows_per,
            vec![
                let_(&ih, var(&t) / int(sh) - var(&th)),
                let_(&khv, var(&t) % int(sh) + var(&th) * int(sh)),
                if_(taken, inside, outside),
            ],
        )],
    );

    let mut body =
        vec![let_(&t, ohi.clone() + ints(pt as i64)), let_(&oc0, ob * int(ocb)), rows.alloc(), fill];
    let tile_len = cx.knob(Knob::ConvOwTile);
    for p in &phases {
        let site =
            PhaseSite { n: &ni, oh: &ohi, t: &t, oc0: &oc0, ocb, rows: &rows, kh, sh, sw, c, rows_per, pad };
        let phase_tiles = tiles(cx, p.outputs, tile_len, LoopKind::Serial, "wt", |cx, b, len| {
            phase_tile(cx, &site, p, [w, y], bias, (b, len))
        });
        body.extend(phase_tiles);
    }
    Some(nest.wrap(body))
}

/// What the tiles of one output row of [`phase_tiles`] share.
struct PhaseSite<'a> {
    n: &'a E,
    oh: &'a E,
    /// `oh + top`, bound by a `let`.
    t: &'a str,
    oc0: &'a str,
    ocb: usize,
    rows: &'a Buf,
    kh: usize,
    sh: usize,
    sw: usize,
    c: usize,
    rows_per: usize,
    pad: usize,
}

/// One register tile: `ocb` output channels by the outputs `rx + sw*(b + j)`, `j < len`, of
/// phase `p`, summed over every channel, kernel row and tap column of the phase.
fn phase_tile(
    cx: &mut Cx,
    s: &PhaseSite,
    p: &ColumnPhase,
    [w, y]: [&Buf; 2],
    bias: Option<&Buf>,
    (b, len): (E, usize),
) -> Vec<Stmt> {
    let acc = Buf::new(cx.fresh("acc"), TensorType::new(DType::F32, [s.ocb, len]));
    let (o0, j0, o1, j1, o2, j2) =
        (cx.fresh("o"), cx.fresh("j"), cx.fresh("o"), cx.fresh("j"), cx.fresh("o"), cx.fresh("j"));
    let (ci, th, tw, khv, xv) =
        (cx.fresh("ci"), cx.fresh("th"), cx.fresh("tw"), cx.fresh("kh"), cx.fresh("xv"));
    let lanes = cx.inner_kind(len);
    let init = |o: &str| match bias {
        Some(bb) => bb.load(&[var(s.oc0) + var(o)]),
        None => zero(DType::F32),
    };
    let column = b.clone() + var(&j1) + int(p.bx + s.pad) - var(&tw);
    let at = [var(&o1), var(&j1)];
    let wv = w.load(&[var(&ci), var(s.oc0) + var(&o1), var(&khv), var(&tw) * int(s.sw) + int(p.kw0)]);
    let update = acc.store(&at, acc.load(&at) + wv * var(&xv));
    let taps = simple_loop(
        LoopKind::Serial,
        &tw,
        p.taps,
        vec![simple_loop(
            lanes,
            &j1,
            len,
            vec![
                let_(&xv, s.rows.load(&[var(&ci), var(&th), column])),
                simple_loop(LoopKind::Unroll, &o1, s.ocb, vec![update]),
            ],
        )],
    );
    // Kernel rows past `KH` hold zeros in the copy but have no weights to read.
    let kernel_rows = vec![
        let_(&khv, var(s.t) % int(s.sh) + var(&th) * int(s.sh)),
        if_(var(&khv).lt(int(s.kh)), vec![taps], vec![]),
    ];
    let ox = int(p.rx) + (b + var(&j2)) * int(s.sw);
    let store =
        y.store(&[s.n.clone(), var(s.oc0) + var(&o2), s.oh.clone(), ox], acc.load(&[var(&o2), var(&j2)]));
    vec![
        acc.alloc(),
        simple_loop(
            LoopKind::Unroll,
            &o0,
            s.ocb,
            vec![simple_loop(lanes, &j0, len, vec![acc.store(&[var(&o0), var(&j0)], init(&o0))])],
        ),
        simple_loop(
            LoopKind::Serial,
            &ci,
            s.c,
            vec![simple_loop(LoopKind::Serial, &th, s.rows_per, kernel_rows)],
        ),
        simple_loop(LoopKind::Unroll, &o2, s.ocb, vec![simple_loop(lanes, &j2, len, vec![store])]),
    ]
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

    #[test]
    fn ungrouped_transposed_convolutions_take_register_tiles_by_phase() {
        // Kernel 4 of stride 2 with padding (two images, a bias), kernel 2 of stride 2 (one tap),
        // a 5x4 kernel of stride 3x2 whose phases have different output and tap counts, with
        // uneven padding and output padding, and a kernel smaller than its stride; then a
        // dilated one, which keeps the per-element form.
        let g = "graph g(x: f32[2,6,5,7], v: f32[1,6,5,7], u: f32[1,4,5,6]) \
                 -> (y: f32[2,5,10,14], z: f32[1,3,10,14], s: f32[1,3,16,12], r: f32[1,3,16,20], d: f32[1,3,13,17]) {
  param w: f32[6,5,4,4] = kaiming_uniform
  param b: f32[5] = uniform(-1, 1)
  param w2: f32[6,3,2,2] = kaiming_uniform
  param w5: f32[4,3,5,4] = kaiming_uniform
  param w1: f32[6,3,2,1] = kaiming_uniform
  param w3: f32[6,3,3,3] = kaiming_uniform
  %y = conv_transpose2d(x, w, b, stride=[2,2], pad=[1,1,1,1])
  %z = conv_transpose2d(v, w2, stride=[2,2])
  %s = conv_transpose2d(u, w5, stride=[3,2], pad=[2,1,0,1], output_padding=[1,0])
  %r = conv_transpose2d(v, w1, stride=[3,3], output_padding=[2,1])
  %d = conv_transpose2d(v, w3, stride=[2,2], dilation=[2,2])
  return %y, %z, %s, %r, %d
}
";
        let m = lowered_matches_reference(g, Schedule::Default, "rk3588");
        // The tiled form's row copy: a `local` buffer named `rows`.
        let tiled: Vec<bool> =
            m.kernels.iter().map(|k| format!("{:?}", k.body).contains("name: \"rows\"")).collect();
        assert_eq!(tiled, [true, true, true, true, false], "{}", print(&m));
    }
}
