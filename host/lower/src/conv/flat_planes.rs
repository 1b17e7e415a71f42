//! f32 convolutions (ungrouped, or of several input channels per group) whose output rows are
//! narrower than `conv.flat_max_ow` (a vector by default) as products over flattened
//! zero-padded planes. Stride 1 first: with the input
//! plane zero-padded and flattened with row pitch `Wp`, output `(oy, ox)` at column `q = oy *
//! Wp + ox` reads tap `(kh, kw)` at `q + kh*dh*Wp + kw*dw`: for every tap, consecutive columns
//! read consecutive elements, so a vector runs over the pixels of several rows at once (the
//! `Wp - OW` columns past each row's end are computed and never stored). Stride `s`: the padded
//! plane is split into `sh * sw` phase planes (`(a, b)` holds padded rows `a, a + sh, ...` and
//! columns `b, b + sw, ...`), and tap `(kh, kw)` reads phase `(kh*dh % sh, kw*dw % sw)` shifted
//! by `(kh*dh / sh) * Wp + kw*dw / sw`: again a shift of one vector of pixels. The direct
//! layout vectorizes along one output row, so a 7-wide row leaves 9 of 16 lanes idle in every
//! product, and it reads a block's weights once per output row; here each weight is read once
//! per tile of columns.
//!
//! The default also takes this layout for strided convolutions of any width whose input rows
//! do not fit the direct layout's row copy (`crate::conv`), which would otherwise read their
//! taps with gathers: the phase planes are copied in chunks of channels instead.
//!
//! Layout: threads over `(n, chunk of output channels)`, just enough chunks (whole register
//! tiles; grouped, within one group) to give every core `threads.per_core` iterations. Each iteration keeps its results
//! `res[channels, Q]` in a `local` buffer and walks the input channels in chunks whose phase
//! planes fit a quarter of the stack: per chunk it copies the planes into a `local` panel
//! zeroed once (the padding stays zero), then per register tile (`mr` output channels by up to
//! `matmul.tile_cols` columns, `matmul.tile_vectors` vector accumulators) loads the tile's
//! partial sums, adds every channel and tap of the chunk (channels unrolled, columns
//! vectorized), and stores them back. Last, the results are stored plane by plane (+ bias).
//! Stride 1 without padding needs no copy: the input's own plane, flattened, is the padded
//! plane (`Wp = W`), so the tiles read it in place through a `[N, C, H*W]` view of the input
//! (`Cx::view`), all channels in one chunk, and the results stop at the last stored column.
//! (MobileNetV2's 576 -> 96 1x1 convolution over 14x14, which copied its 450 KB input in every
//! parallel iteration: 160 -> 111 us on a 2-core AVX-512 VM.)
//!
//! What must stay true: each output sums its input channels in increasing order, taps in
//! row-major order within a channel, as the direct layout does; every index is affine and
//! provably in bounds (the panel holds the largest tap offset past the last column).

use super::{dims4, valid_range};
use crate::recipe::Knob;
use crate::sched::{outer, simple_loop, tiles, Cx};
use ekb_ir::l0::Conv2dAttrs;
use ekb_ir::l1::build::{f, if_, int, ints, let_, loop_, var, Buf, E};
use ekb_ir::l1::{LoopKind, Stmt};
use ekb_ir::{DType, TensorType};

/// Most phase planes (`sh * sw`) this layout copies.
const MAX_PHASES: usize = 4;

/// The geometry of one convolution in this layout (and in the depthwise one,
/// `super::flat_depthwise`, which copies one channel at a time).
pub(super) struct Flat {
    /// Input channels per group (all of them, ungrouped), and groups.
    pub(super) c: usize,
    pub(super) groups: usize,
    pub(super) oc: usize,
    pub(super) kh: usize,
    pub(super) kw: usize,
    pub(super) dh: usize,
    pub(super) dw: usize,
    pub(super) h: usize,
    pub(super) wd: usize,
    pub(super) oh: usize,
    pub(super) ow: usize,
    pub(super) sh: usize,
    pub(super) sw: usize,
    pub(super) pt: usize,
    pub(super) pl: usize,
    /// Row pitch of the flattened columns (of each phase plane), and rows of a phase plane.
    pub(super) wp: usize,
    pub(super) hq: usize,
    /// Result columns, `oh * wp` rounded up to whole vectors.
    pub(super) q: usize,
    /// Panel columns: `q` plus the largest tap offset.
    pub(super) pw: usize,
    /// Input channels per chunk (a divisor of `c`), output channels per iteration.
    pub(super) cc: usize,
    pub(super) ocs: usize,
    /// Register tile: output channels, and the columns of a full tile.
    pub(super) mr: usize,
    pub(super) nt: usize,
    /// Stride 1 without padding: the flattened plane is the input's own (row pitch `Wp = W`),
    /// read in place through a `[N, C, H*W]` view instead of a copy, and the results stop at
    /// the last stored column, `q = (OH - 1) * Wp + OW`, so no tap reads past the plane.
    pub(super) direct: bool,
}

impl Flat {
    /// The planes of one channel: every field but the chunking (`cc` 1, one output channel
    /// per tile and per iteration), with tiles of up to `matmul.tile_cols` columns (whole
    /// vectors).
    pub(super) fn planes(cx: &Cx, a: &Conv2dAttrs, x: &Buf, w: &Buf, y: &Buf) -> Flat {
        let [_, _, h, wd] = dims4(x);
        let [oc, c, kh, kw] = dims4(w);
        let [_, _, oh, ow] = dims4(y);
        let [dh, dw] = a.dilation;
        let (pt, pl) = (a.pad[0], a.pad[1]);
        let lanes = cx.lanes();
        let [sh, sw] = a.stride;
        // The largest tap offsets within a phase plane, in rows and columns.
        let (rows_off, cols_off) = (dh * (kh - 1) / sh, dw * (kw - 1) / sw);
        let wp = ow + cols_off;
        let q = (oh * wp).next_multiple_of(lanes);
        let pw = q + rows_off * wp + cols_off;
        let nt = cx.knob(Knob::MatmulTileCols).max(lanes).next_multiple_of(lanes).min(q);
        let hq = oh + rows_off;
        let groups = a.groups;
        Flat {
            c,
            groups,
            oc,
            kh,
            kw,
            dh,
            dw,
            h,
            wd,
            oh,
            ow,
            sh,
            sw,
            pt,
            pl,
            wp,
            hq,
            q,
            pw,
            cc: 1,
            ocs: 1,
            mr: 1,
            nt,
            direct: false,
        }
    }

    /// The loops storing one output plane from its results: `store(oy, ox, q)` stores pixel
    /// `(oy, ox)`, whose result is column `q = oy * Wp + ox`. Results without padding columns
    /// (`Wp = OW`) are as consecutive as the plane's pixels in `y`: one vector loop over the
    /// plane stores them, `q = p`, so the epilogue fused into the store runs on whole vectors
    /// (a 112 -> 672 1x1 convolution over 14x14 with batch norm and SiLU, whose rows of 14 ran
    /// the exponentials on 4 lanes: 488 -> 330 us on one thread of a 2-core AVX-512 VM). Of
    /// padded results, rows of at least half a vector are stored row by row, each row a vector
    /// loop; narrower rows are one loop over the plane's pixels, reading the results at `p /
    /// OW * Wp + p % OW`: a gather, which on 14-wide rows took a third longer than the rows (a
    /// 576-channel 3x3 depthwise convolution over 14x14, 65 against 48 us on a 2-core AVX-512
    /// VM), and on 7-wide rows a quarter less.
    pub(super) fn store_plane(&self, cx: &mut Cx, store: impl Fn(E, E, E) -> Stmt) -> Stmt {
        let pixels = self.oh * self.ow;
        if self.wp == self.ow {
            let p = cx.fresh("p");
            let (oy, ox) = (var(&p) / int(self.ow), var(&p) % int(self.ow));
            return simple_loop(cx.inner_kind(pixels), &p, pixels, vec![store(oy, ox, var(&p))]);
        }
        if 2 * self.ow >= cx.lanes() {
            let (oy, ox) = (cx.fresh("oy"), cx.fresh("ox"));
            let q = var(&oy) * int(self.wp) + var(&ox);
            let row = simple_loop(cx.inner_kind(self.ow), &ox, self.ow, vec![store(var(&oy), var(&ox), q)]);
            return simple_loop(LoopKind::Serial, &oy, self.oh, vec![row]);
        }
        let p = cx.fresh("p");
        let (oy, ox) = (var(&p) / int(self.ow), var(&p) % int(self.ow));
        let q = oy.clone() * int(self.wp) + ox.clone();
        simple_loop(cx.inner_kind(pixels), &p, pixels, vec![store(oy, ox, q)])
    }

    fn new(cx: &Cx, a: &Conv2dAttrs, x: &Buf, w: &Buf, y: &Buf) -> Option<Flat> {
        let g = Flat::planes(cx, a, x, w, y);
        let (n, c, oc, pw, q) = (dims4(x)[0], g.c, g.oc, g.pw, g.q);
        let (sh, sw, oh, ow, kh, kw) = (g.sh, g.sw, g.oh, g.ow, g.kh, g.kw);
        let lanes = cx.lanes();
        let quarter = (cx.target.cpu.stack_bytes / 4) as usize;
        let direct = [sh, sw] == [1, 1] && a.pad == [0; 4];
        let q = if direct { (oh - 1) * g.wp + ow } else { q };
        // The largest divisor of the channels whose padded phase planes fit (all of them read
        // in place).
        let cc = if direct {
            c
        } else {
            (1..=c).rev().find(|&d| c.is_multiple_of(d) && d * sh * sw * pw * 4 <= quarter)?
        };
        // Register tile: the columns of `planes`, and as many output channels as keep
        // `matmul.tile_vectors` vector accumulators.
        // Grouped, the tiles and an iteration's channels stay inside one group: the tile is
        // the largest divisor of the group's output channels up to that.
        let nt = g.nt;
        let ocg = oc / g.groups;
        let mut mr = (cx.knob(Knob::MatmulTileVectors) / (nt / lanes)).clamp(1, oc);
        if g.groups > 1 {
            mr = (1..=mr.min(ocg)).rev().find(|&d| ocg.is_multiple_of(d)).unwrap_or(1);
        }
        // Chunks of whole tiles (a divisor of them) whose results fit a quarter of the stack:
        // the fewest that give the cores enough iterations, else the most.
        let whole = oc / mr;
        let in_group = |ocs: usize| g.groups == 1 || ocg.is_multiple_of(ocs);
        let want = if cx.wants_threads(2 * n * oc * oh * ow * c * kh * kw) {
            (cx.cores() * cx.per_core()).div_ceil(n)
        } else {
            1
        };
        let fitting: Vec<usize> = (1..=whole)
            .filter(|&d| {
                whole.is_multiple_of(d)
                    && in_group(whole / d * mr)
                    && (whole / d * mr + oc % mr) * q * 4 <= quarter
            })
            .collect();
        let chunks = fitting.iter().copied().find(|&d| d >= want).or(fitting.last().copied())?;
        let ocs = whole / chunks * mr;
        Some(Flat { cc, ocs, mr, q, direct, ..g })
    }
}

/// Whether `y = conv2d(x, w)` takes this layout for its narrow rows (`conv.flat_max_ow`).
pub(super) fn applies(cx: &Cx, a: &Conv2dAttrs, x: &Buf, w: &Buf, y: &Buf) -> bool {
    dims4(y)[3] < cx.knob(Knob::ConvFlatMaxOw) && fits(cx, a, x, w, y)
}

/// Whether this layout can lower `y = conv2d(x, w)` at all: f32, ungrouped or of several
/// input channels per group (one is the depthwise form's, `super::flat_depthwise`), strides
/// up to 2x2 (each phase plane is a copy loop of its own: a 16x16 patch embedding of stride 16
/// would be 256 of them, whose taps read one phase each anyway), and buffers that fit the
/// stack.
pub(super) fn fits(cx: &Cx, a: &Conv2dAttrs, x: &Buf, w: &Buf, y: &Buf) -> bool {
    let shape = a.groups == 1 || dims4(w)[1] > 1;
    shape && f32_phases(a, x, w, y) && Flat::new(cx, a, x, w, y).is_some()
}

/// f32 operands and at most [`MAX_PHASES`] phase planes: what both flattened layouts need.
pub(super) fn f32_phases(a: &Conv2dAttrs, x: &Buf, w: &Buf, y: &Buf) -> bool {
    let f32s = [x.ty.dtype, w.ty.dtype, y.ty.dtype].iter().all(|&d| d == DType::F32);
    f32s && a.stride[0] * a.stride[1] <= MAX_PHASES
}

/// `y = conv2d(x, w, bias)` where [`fits`] holds.
pub(super) fn conv2d(
    cx: &mut Cx,
    a: &Conv2dAttrs,
    x: &Buf,
    w: &Buf,
    bias: Option<&Buf>,
    y: &Buf,
) -> Vec<Stmt> {
    let g = Flat::new(cx, a, x, w, y).expect("checked by `fits`");
    let n = dims4(x)[0];
    let chunks = g.oc / g.mr / (g.ocs / g.mr);
    let threads = cx.wants_threads(2 * n * g.oc * g.oh * g.ow * g.c * g.kh * g.kw);
    let nest = outer(cx, &[n, chunks], threads, "i");
    let (ni, ci) = (nest.idx[0].clone(), nest.idx[1].clone());
    let res = Buf::new(cx.fresh("res"), TensorType::new(DType::F32, [g.ocs + g.oc % g.mr, g.q]));
    let planes = if g.direct {
        Planes::Input { x: cx.view(x, &[n, g.groups * g.c, g.h * g.wd]), n: ni.clone() }
    } else {
        Planes::Panel(Buf::new(cx.fresh("panel"), TensorType::new(DType::F32, [g.cc, g.sh * g.sw, g.pw])))
    };
    let (m_first, xbase, c0) = (cx.fresh("m0"), cx.fresh("xb"), cx.fresh("c0"));
    let (o, j) = (cx.fresh("o"), cx.fresh("j"));
    let mut body = vec![
        let_(&m_first, ci.clone() * int(g.ocs)),
        // The first input channel of the iteration's group (0 ungrouped).
        let_(&xbase, var(&m_first) / int(g.oc / g.groups) * int(g.c)),
        res.alloc(),
    ];
    // (The direct form's tiles start from zero.)
    if !g.direct {
        body.push(simple_loop(
            LoopKind::Serial,
            &o,
            res.shape()[0],
            vec![simple_loop(cx.inner_kind(g.q), &j, g.q, vec![res.store(&[var(&o), var(&j)], f(0.0))])],
        ));
    }
    if let Planes::Panel(panel) = &planes {
        body.extend([panel.alloc(), zero_panel(cx, &g, panel)]);
    }
    // The chunk's tiles; the last chunk also takes the channels the tiles leave over.
    let chunk = cx.fresh("cc");
    let mut per_chunk = vec![let_(&c0, var(&chunk) * int(g.cc))];
    if let Planes::Panel(panel) = &planes {
        per_chunk.push(copy_planes(cx, &g, x, panel, (&ni, &(var(&xbase) + var(&c0)))));
    }
    let site = Site {
        g: &g,
        w,
        res: &res,
        planes: &planes,
        m_first: &var(&m_first),
        xbase: &var(&xbase),
        c0: &var(&c0),
    };
    per_chunk.extend(tiles(cx, g.ocs, g.mr, LoopKind::Serial, "t", |cx, r0, mr| {
        channel_tile(cx, &site, (r0, mr))
    }));
    let left = g.oc % g.mr;
    if left > 0 {
        let tail = channel_tile(cx, &site, (int(g.ocs), left));
        per_chunk.push(if_(ci.clone().eq(int(chunks - 1)), tail, vec![]));
    }
    body.push(simple_loop(LoopKind::Serial, &chunk, g.c / g.cc, per_chunk));

    // The results, plane by plane (+ bias, [`Flat::store_plane`]); the leftover channels by
    // the last chunk.
    let store_rows = |cx: &mut Cx, r0: usize, count: usize| {
        let o = cx.fresh("o");
        let m = var(&m_first) + int(r0) + var(&o);
        let plane = g.store_plane(cx, |oy, ox, q| {
            let mut value = res.load(&[int(r0) + var(&o), q]);
            if let Some(b) = bias {
                value = value + b.load(std::slice::from_ref(&m));
            }
            y.store(&[ni.clone(), m.clone(), oy, ox], value)
        });
        simple_loop(LoopKind::Serial, &o, count, vec![plane])
    };
    body.push(store_rows(cx, 0, g.ocs));
    if left > 0 {
        let tail = store_rows(cx, g.ocs, left);
        body.push(if_(ci.eq(int(chunks - 1)), vec![tail], vec![]));
    }
    nest.wrap(body)
}

/// Zeros in every column of the panel; the copies then fill the same interior columns of each
/// chunk, so the padding stays zero.
pub(super) fn zero_panel(cx: &mut Cx, g: &Flat, panel: &Buf) -> Stmt {
    let (c, p, j) = (cx.fresh("c"), cx.fresh("p"), cx.fresh("j"));
    let zero = panel.store(&[var(&c), var(&p), var(&j)], f(0.0));
    let row = simple_loop(cx.inner_kind(g.pw), &j, g.pw, vec![zero]);
    simple_loop(LoopKind::Serial, &c, g.cc, vec![simple_loop(LoopKind::Serial, &p, g.sh * g.sw, vec![row])])
}

/// For each phase `(a, b)` (a literal: `sh * sw` copies of the loop), `panel[c, a*sw + b, i*Wp +
/// j] = x[n, c0 + c, i*sh + a - top, j*sw + b - left]` over the `i`, `j` inside the image.
pub(super) fn copy_planes(cx: &mut Cx, g: &Flat, x: &Buf, panel: &Buf, (n, c0): (&E, &E)) -> Stmt {
    let c = cx.fresh("c");
    let mut phases = Vec::new();
    for a in 0..g.sh {
        for b in 0..g.sw {
            let (ilo, ihi) = valid_range(g.hq, g.sh, a as i64 - g.pt as i64, g.h);
            let (jlo, jhi) = valid_range(g.wp, g.sw, b as i64 - g.pl as i64, g.wd);
            if ilo == ihi || jlo == jhi {
                continue;
            }
            let (i, j) = (cx.fresh("i"), cx.fresh("j"));
            let iy = var(&i) * int(g.sh) + ints(a as i64 - g.pt as i64);
            let ix = var(&j) * int(g.sw) + ints(b as i64 - g.pl as i64);
            let store = panel.store(
                &[var(&c), int(a * g.sw + b), var(&i) * int(g.wp) + var(&j)],
                x.load(&[n.clone(), c0.clone() + var(&c), iy, ix]),
            );
            let cols = loop_(cx.inner_kind(jhi - jlo), &j, int(jlo), int(jhi), vec![store]);
            phases.push(loop_(LoopKind::Serial, &i, int(ilo), int(ihi), vec![cols]));
        }
    }
    simple_loop(LoopKind::Serial, &c, g.cc, phases)
}

/// Where the register tiles read the flattened planes.
enum Planes {
    /// The chunk's copy, `[cc, sh * sw, pw]`.
    Panel(Buf),
    /// The input itself, viewed as `[N, C, H*W]`, of image `n` (the direct form).
    Input { x: Buf, n: E },
}

/// What the register tiles of one iteration share.
struct Site<'a> {
    g: &'a Flat,
    w: &'a Buf,
    res: &'a Buf,
    planes: &'a Planes,
    /// The iteration's first output channel, its group's first input channel, and the
    /// chunk's first input channel within the group (the weights' channel).
    m_first: &'a E,
    xbase: &'a E,
    c0: &'a E,
}

impl Site<'_> {
    /// Column `j` of the planes of the chunk's channel `c`, phase `phase`.
    fn load(&self, c: E, phase: E, j: E) -> E {
        match self.planes {
            Planes::Panel(panel) => panel.load(&[c, phase, j]),
            Planes::Input { x, n } => x.load(&[n.clone(), self.xbase.clone() + self.c0.clone() + c, j]),
        }
    }
}

/// Output channels `r0..r0+mr` of the iteration (rows of `res`), every column tile: partial
/// sums in, the chunk's channels and taps added, partial sums out. The direct form has one
/// chunk: its tiles start from zero, so a last tile of one vector may end at the last column,
/// overlapping the one before, instead of leaving fewer columns than a vector to scalar code.
fn channel_tile(cx: &mut Cx, s: &Site, (r0, mr): (E, usize)) -> Vec<Stmt> {
    let g = s.g;
    let lanes = cx.lanes();
    let mut tile = |cx: &mut Cx, j0: E, nt: usize| {
        let acc = Buf::new(cx.fresh("acc"), TensorType::new(DType::F32, [mr, nt]));
        let (ra, ja, rb, jb, rc, jc) =
            (cx.fresh("r"), cx.fresh("j"), cx.fresh("r"), cx.fresh("j"), cx.fresh("r"), cx.fresh("j"));
        let (c, kh, kw, av) = (cx.fresh("c"), cx.fresh("kh"), cx.fresh("kw"), cx.fresh("a"));
        let lanes = cx.inner_kind(nt);
        let rows = |r: &str, body: Vec<Stmt>| simple_loop(LoopKind::Unroll, r, mr, body);
        let cols = |jv: &str, body: Vec<Stmt>| simple_loop(lanes, jv, nt, body);
        let res_at = |r: &str, jv: &str| [r0.clone() + var(r), j0.clone() + var(jv)];
        // Tap `(kh, kw)` reads phase `(kh*dh % sh, kw*dw % sw)`, shifted by `(kh*dh / sh,
        // kw*dw / sw)` (stride 1: phase 0, the taps' own offsets).
        let (ty, tx) = (var(&kh) * int(g.dh), var(&kw) * int(g.dw));
        let phase = ty.clone() % int(g.sh) * int(g.sw) + tx.clone() % int(g.sw);
        let shift = ty / int(g.sh) * int(g.wp) + tx / int(g.sw);
        let x_at = s.load(var(&c), phase, j0.clone() + var(&jb) + shift);
        let w_at = [s.m_first.clone() + r0.clone() + var(&rb), s.c0.clone() + var(&c), var(&kh), var(&kw)];
        let update = acc.store(&[var(&rb), var(&jb)], acc.load(&[var(&rb), var(&jb)]) + var(&av) * x_at);
        let taps = simple_loop(
            LoopKind::Serial,
            &kh,
            g.kh,
            vec![simple_loop(
                LoopKind::Serial,
                &kw,
                g.kw,
                vec![rows(&rb, vec![let_(&av, s.w.load(&w_at)), cols(&jb, vec![update])])],
            )],
        );
        let start = if g.direct { f(0.0) } else { s.res.load(&res_at(&ra, &ja)) };
        vec![
            acc.alloc(),
            rows(&ra, vec![cols(&ja, vec![acc.store(&[var(&ra), var(&ja)], start)])]),
            simple_loop(LoopKind::Serial, &c, g.cc, vec![taps]),
            rows(&rc, vec![cols(&jc, vec![s.res.store(&res_at(&rc, &jc), acc.load(&[var(&rc), var(&jc)]))])]),
        ]
    };
    let whole = if g.direct && g.q > lanes { g.q / lanes * lanes } else { g.q };
    let mut out = tiles(cx, whole, g.nt, LoopKind::Serial, "u", &mut tile);
    if whole < g.q {
        out.extend(tile(cx, int(g.q - lanes), lanes));
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::testing::knobs_match_reference;
    use ekb_ir::l1::print::print;

    #[test]
    fn convolutions_over_flattened_padded_planes_match_the_reference() {
        // Two images, 3x3 with padding, a bias and a fused relu, output channels no tile
        // divides; uneven padding with dilation and a 2x3 kernel; a 5x5 kernel whose planes
        // need several channel chunks on a small stack (rk3588's: 256 KiB); stride 2, and
        // strides 2x2 with dilation and uneven padding (phase planes); then a depthwise one
        // (its own form of these planes) and one of stride 3 (9 phase planes), which keeps the
        // other layouts; then grouped ones of four input channels per group, stride 1 and 2;
        // last, unpadded ones of stride 1, which read the input in place (the direct form): a
        // dilated 3x3 with a bias, a 1x1 of two images, and a grouped 3x3.
        // (Weights are inputs: parameter weights of a few pixels' 1x1 would be packed,
        // `crate::prepack`.)
        let g = "graph g(x: f32[2,12,5,6], u: f32[1,7,6,5], v: f32[1,300,7,7], w: f32[13,12,3,3], \
                 b: f32[13], w2: f32[6,7,2,3], w3: f32[9,300,5,5], w4: f32[6,7,3,3], w5: f32[7,1,3,3], \
                 wg: f32[6,4,3,3], w6: f32[13,12,1,1], b6: f32[6]) \
                 -> (y: f32[2,13,5,6], z: f32[1,6,6,5], s: f32[1,9,7,7], d: f32[1,6,2,2], \
                 e: f32[1,6,3,2], q: f32[1,7,6,5], t: f32[1,6,2,1], gr: f32[2,6,5,6], gs: f32[2,6,3,3], \
                 dd: f32[1,6,2,1], dp: f32[2,13,5,6], dg: f32[2,6,3,4]) {
  %0 = conv2d(x, w, b, pad=[1,1,1,1])
  %y = relu(%0)
  %z = conv2d(u, w2, pad=[1,2,1,2], dilation=[2,2])
  %s = conv2d(v, w3, pad=[2,2,2,2])
  %d = conv2d(u, w4, stride=[2,2])
  %e = conv2d(u, w2, stride=[2,2], pad=[0,2,1,1], dilation=[1,2])
  %q = conv2d(u, w5, pad=[1,1,1,1], groups=7)
  %t = conv2d(u, w4, stride=[3,3])
  %gr = conv2d(x, wg, pad=[1,1,1,1], groups=3)
  %gs = conv2d(x, wg, stride=[2,2], pad=[1,1,1,1], groups=3)
  %dd = conv2d(u, w4, b6, dilation=[2,2])
  %dp = conv2d(x, w6)
  %dg = conv2d(x, wg, groups=3)
  fuse %0, %y
  return %y, %z, %s, %d, %e, %q, %t, %gr, %gs, %dd, %dp, %dg
}
";
        for (tile_cols, per_core) in [(4, 1), (8, 4), (64, 16)] {
            let set = [
                ("conv.flat_max_ow", 8),
                ("matmul.tile_cols", tile_cols),
                ("threads.per_core", per_core),
                ("threads.min_work", 1),
            ];
            let m = knobs_match_reference(g, &set, "rk3588");
            let has = |name: &str| -> Vec<bool> {
                m.kernels
                    .iter()
                    .map(|k| format!("{:?}", k.body).contains(&format!("name: \"{name}")))
                    .collect()
            };
            // The depthwise `q` takes the depthwise form of these planes (`flat_depthwise`).
            let (t, f) = (true, false);
            assert_eq!(has("panel"), [t, t, t, t, t, t, f, t, t, f, f, f], "{}", print(&m));
            // The direct ones read a view of their input, and only it.
            assert_eq!(has("u_view"), [f, f, f, f, f, f, f, f, f, t, f, f], "{}", print(&m));
            assert_eq!(has("x_view"), [f, f, f, f, f, f, f, f, f, f, t, t], "{}", print(&m));
            for k in &m.kernels[9..] {
                assert_eq!(k.params.iter().filter(|p| matches!(p.name.as_str(), "u" | "x")).count(), 0);
            }
        }
        // A strided 1-D convolution of wide rows whose row copy (76.8 KB) passes a quarter of
        // rk3588's stack: flattened planes, two chunks of channels, whatever the knob.
        let wide = "graph g(x: f32[1,64,1,300], w: f32[16,64,1,3]) -> (y: f32[1,16,1,149]) {
  %0 = conv2d(x, w, stride=[1,2])
  return %0
}
";
        let m = knobs_match_reference(wide, &[("conv.flat_max_ow", 0)], "rk3588");
        assert!(print(&m).contains("alloc panel: f32[32,2,"), "{}", print(&m));
        // Only rows narrower than the knob: 5 columns or fewer (`z`, `d`, `e`, the depthwise `q`
        // and the strided grouped `gs`; the direct `dd` and `dg`), not `y`'s, `gr`'s and `dp`'s 6
        // or `s`'s 7.
        let m = knobs_match_reference(g, &[("conv.flat_max_ow", 6)], "rk3588");
        assert_eq!(print(&m).matches("alloc panel").count(), 5, "{}", print(&m));
        assert_eq!(print(&m).matches("_view: f32").count(), 2, "{}", print(&m));
    }

    #[test]
    fn results_without_padding_columns_are_stored_by_one_loop_over_the_plane() {
        // 6-wide rows on rk3588's 4 lanes: the direct 1x1 (its results' pitch is the row's
        // width) stores its 36 pixels in one vector loop reading the results in order; the
        // padded 3x3 (pitch 8) keeps a vector loop per row.
        let g = "graph g(x: f32[1,8,6,6], w: f32[5,8,1,1], w3: f32[5,8,3,3]) -> (d: f32[1,5,6,6], p: f32[1,5,6,6]) {
  %0 = conv2d(x, w)
  %d = sigmoid(%0)
  %p = conv2d(x, w3, pad=[1,1,1,1])
  fuse %0, %d
  return %d, %p
}
";
        let m = knobs_match_reference(g, &[("conv.flat_max_ow", 8)], "rk3588");
        let text = print(&m);
        let (direct, padded) = text.split_once("kernel k2_conv2d").expect("two kernels");
        assert!(direct.contains("x_view"), "{text}");
        let store =
            "vectorize p in 0..36 {\n        d[0, m0 + o1, p / 6, p % 6] = 1.0 / (1.0 + exp(-res[o1, p]))";
        assert!(direct.contains(store), "{text}");
        assert!(padded.contains("vectorize ox in 0..6 {") && padded.contains("oy * 8 + ox]"), "{text}");
    }
}
