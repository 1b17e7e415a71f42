//! Weights packed once, by `prepare` steps (docs/ir-l1.md): a product whose weight depends on
//! parameters alone reads it in the order its register tiles want, written by a kernel of its
//! own that runs when the parameters are bound, before the first execution, as inference
//! engines pack weights when they load a model. The default schedule only; the naive one (the
//! baseline) computes everything in every execution.
//!
//! - `linear(x, w)`: `w[n, k]` transposed in panels of `P` rows, `[ceil(n / P), k, P]` (`P`
//!   the register tile's columns), so the product takes the matmul's register tiles (`B`
//!   contiguous along `n`: rows of `x` broadcast, columns of the weight in vectors) instead of
//!   dot products with their horizontal sums, each tile's panel one contiguous run;
//! - an ungrouped convolution over few pixels (`conv2d`, any kernel, stride, padding and
//!   dilation): `w[oc, c, kh, kw]` viewed as `[oc, c*kh*kw]` in blocks of `B` output channels,
//!   `[ceil(oc / B), c*kh*kw, B]` (block-major: a block's weights are one contiguous run, the
//!   whole weight one stream), and the product runs with the output channels in the vectors and
//!   the pixels broadcast (`y^T[p, oc] = sum_k patch[p, k] w^T[k, oc]`, the patch element of
//!   pixel `p` and tap `k` read from the image's zero-padded planes, copied once per execution,
//!   or from the input itself for a 1x1 unpadded convolution), where pixels along the vectors
//!   would leave most lanes idle: per block, a register tile of as many pixels as the
//!   accumulators allow, the results stored across the channel planes. A 1x1 product is bound
//!   by reading the weight (each weight is used for a few pixels): six 1024 -> 1024
//!   convolutions over 3x2 pixels on one core of a 2-core AVX-512 VM took 1.5-1.8 ms as dot
//!   products, 2.7 ms over the weight packed `[c, oc]` (a block's rows 4 KB apart), 0.94 ms
//!   packed by blocks with one tile of all 6 pixels, and 0.86-0.91 ms in onnxruntime. A 3x3
//!   one over a few pixels does the work of the flattened padded planes, whose vectors of
//!   pixels are partly padding columns and idle lanes (a 4x4 output is 24 flattened positions
//!   of a 6-wide padded row, in two 16-lane vectors), in 0.55x to 0.8x of their time up to
//!   14x14 outputs (recipe.rs, `conv.pack_taps_max_pixels`).
//!
//! The last block, where `B` does not divide the channels, computes whole vectors over zeros
//! (the packing writes them past `oc`) and stores only its channels; its tiles take as many
//! more pixels as it has fewer vectors (an 80-channel layer's block of 16 took 6 pixels a tile,
//! 6 of the 24 accumulators: 1x1 80 -> 184 over 14x14, packed, 64 -> 35 us on a 2-core
//! AVX-512 VM).
//!
//! What must stay true: the packed weight holds the weight's elements (a transposition) and
//! zeros in the last block's slots past `oc`, which only that block's discarded lanes read; and each output sums its products in the
//! order of its reduction (increasing `k`; for a convolution `(c, ky, kx)`, the weight's order).

use crate::matmul::{self, Load, PACK_MIN_ROWS};
use crate::recipe::Knob;
use crate::sched::{outer, simple_loop, tiles, Cx};
use crate::Knobs;
use ekb_ir::l0::{Conv2dAttrs, Node, Op};
use ekb_ir::l1::build::{f, if_, int, ints, let_, select, var, Buf, E};
use ekb_ir::l1::{LoopKind, Stmt};
use ekb_ir::target::TargetProfile;
use ekb_ir::{DType, TensorType};

/// How a node's weight (its second operand) is packed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Packing {
    /// In panels of `panel` columns of the product; the weight is `[k, n]` where `k_first`
    /// (a `matmul` without `transpose_b`), else `[n, k]` (`linear`).
    Linear { panel: usize, k_first: bool },
    /// In blocks of `block` output channels, a convolution's weight of `kernel` taps.
    Channels { block: usize, kernel: [usize; 2] },
}

impl Packing {
    /// The packing `node` takes under the default schedule when its weight depends on
    /// parameters alone, if any: f32 products with enough rows (a single row reads the weight
    /// once either way) as `matmul.pack_linear` says (by default where a row has more outputs
    /// than inputs), or ungrouped f32 convolutions over at most `conv.pack_max_pixels` pixels
    /// (1x1 unpadded) or `conv.pack_taps_max_pixels` (any other, whose zero-padded input planes
    /// must fit a quarter of the stack). (By
    /// default a layer narrowing its rows, `k > n`, keeps its dot products: long dots
    /// amortize their horizontal sums, and the register tiles over few column tiles re-read
    /// the whole weight per row tile: TinyBERT's 1200 -> 312 layer, 280 us as dot products,
    /// 530 us packed, where its 312 -> 1200 layer went from 600 to 330 us, on a 2-core AVX-512
    /// VM.)
    pub(crate) fn of(
        node: &Node,
        ins: &[Buf],
        y: &Buf,
        knobs: &Knobs,
        target: &TargetProfile,
    ) -> Option<Packing> {
        let lanes = target.cpu_f32_lanes() as usize;
        let f32s = ins.iter().chain([y]).all(|b| b.ty.dtype == DType::F32);
        match &node.op {
            Op::Linear | Op::MatMul { transpose_a: false, .. } if ins[1].rank() == 2 => {
                let x = &ins[0].ty;
                let rows: usize = x.shape[..x.rank().saturating_sub(1)].iter().product();
                let k_first = matches!(node.op, Op::MatMul { transpose_b: false, .. });
                let [n, k] = if k_first { [1, 0] } else { [0, 1] }.map(|d| ins[1].shape()[d]);
                // Without packing, a weight `[k, n]` takes the same register tiles over its
                // rows `4n` bytes apart (matmul.rs).
                let pack = match knobs.get(Knob::MatmulPackLinear) {
                    0 => false,
                    1 => n > k || k_first,
                    _ => true,
                };
                // The register tile's columns (`matmul::axpy_tile`).
                let panel = knobs.get(Knob::MatmulTileCols).max(4 * lanes).min(n);
                (f32s && rows >= PACK_MIN_ROWS && pack).then_some(Packing::Linear { panel, k_first })
            }
            Op::Conv2d(a) => {
                let w = ins[1].shape();
                let kernel = [w[2], w[3]];
                let planes = padded_planes(a, kernel, &ins[0], y).map(|t| t.size_bytes() as u64);
                let fits = planes.is_none_or(|bytes| bytes <= target.cpu.stack_bytes / 4);
                let [oh, ow] = [y.shape()[2], y.shape()[3]];
                let most =
                    if planes.is_none() { Knob::ConvPackMaxPixels } else { Knob::ConvPackTapsMaxPixels };
                let few = oh * ow <= knobs.get(most);
                // A 1x1 one of a long reduction whose rows waste the other layouts' lanes.
                let deep = planes.is_none()
                    && a.stride == [1, 1]
                    && ow % lanes != 0
                    && w[1] >= 6 * lanes
                    && oh * ow <= knobs.get(Knob::ConvPackDeepMaxPixels);
                // Up to four vectors of output channels a block, fewer where the layer has fewer.
                let block = (4 * lanes).min(w[0].next_multiple_of(lanes));
                (f32s && a.groups == 1 && fits && (few || deep))
                    .then_some(Packing::Channels { block, kernel })
            }
            _ => None,
        }
    }

    /// Rows of the weight (`n` or `oc`) per panel or block.
    fn block(self) -> usize {
        match self {
            Packing::Linear { panel, .. } => panel,
            Packing::Channels { block, .. } => block,
        }
    }

    /// The weight's `[o, c]` extents: output columns (or channels) and the reduction.
    fn extents(self, w: &TensorType) -> [usize; 2] {
        match self {
            Packing::Linear { k_first: true, .. } => [w.shape[1], w.shape[0]],
            Packing::Linear { .. } => [w.shape[0], w.shape[1]],
            Packing::Channels { .. } => [w.shape[0], w.shape[1..].iter().product()],
        }
    }

    /// The packed weight's type: `[ceil(o / B), c, B]` for the weight's `o` outputs and `c`
    /// reduction (`linear`'s `[n, k]`, `matmul`'s `[k, n]`, a convolution's `[oc, c*kh*kw]`).
    pub(crate) fn packed_type(self, w: &TensorType) -> TensorType {
        let ([o, c], b) = (self.extents(w), self.block());
        TensorType::new(w.dtype, [o.div_ceil(b), c, b])
    }

    /// The prepare kernel's body: `wt[o / B, c, o % B] = w[o, c]` (`w[c, o]` for `matmul`, a
    /// convolution's `w[o, c / (kh*kw), c % (kh*kw) / kw, c % kw]`), along the weight's rows.
    pub(crate) fn pack(self, cx: &mut Cx, w: &Buf, wt: &Buf) -> Vec<Stmt> {
        let ([o, c], b) = (self.extents(&w.ty), self.block());
        let (ov, cv) = (cx.fresh("o"), cx.fresh("c"));
        let at = [var(&ov) / int(b), var(&cv), var(&ov) % int(b)];
        let (from, rows, cols) = match self {
            Packing::Linear { k_first: true, .. } => (vec![var(&cv), var(&ov)], (&cv, c), (&ov, o)),
            Packing::Linear { .. } => (vec![var(&ov), var(&cv)], (&ov, o), (&cv, c)),
            Packing::Channels { kernel: [kh, kw], .. } => {
                let tap = var(&cv) % int(kh * kw);
                let at = vec![var(&ov), var(&cv) / int(kh * kw), tap.clone() / int(kw), tap % int(kw)];
                (at, (&ov, o), (&cv, c))
            }
        };
        let inner = |value: E| simple_loop(cx.inner_kind(cols.1), cols.0, cols.1, vec![wt.store(&at, value)]);
        let mut body = vec![inner(w.load(&from))];
        let mut rows_extent = rows.1;
        if let Packing::Channels { .. } = self {
            // The last block's slots past `oc` are zeros: its tiles compute whole vectors.
            rows_extent = o.next_multiple_of(b);
            if rows_extent > o {
                body = vec![if_(var(&ov).lt(int(o)), body, vec![inner(f(0.0))])];
            }
        }
        vec![simple_loop(LoopKind::Parallel, rows.0, rows_extent, body)]
    }

    /// The node's kernel body reading the packed weight `ins[1]`.
    pub(crate) fn lower(self, cx: &mut Cx, node: &Node, ins: &[Buf], y: &Buf) -> Vec<Stmt> {
        let (x, wt, bias) = (&ins[0], &ins[1], ins.get(2));
        match (self, &node.op) {
            (Packing::Linear { panel, .. }, _) => {
                let [n, k] = [y.shape()[y.rank() - 1], wt.shape()[1]];
                let b: Load =
                    Box::new(move |_, ki, ni: E| wt.load(&[ni.clone() / int(panel), ki, ni % int(panel)]));
                let g = matmul::linear_gemm(x, (n, k), (b, true), bias, y);
                matmul::panels(cx, &g, panel, matmul::Panels::Packed(wt))
            }
            (Packing::Channels { block, kernel }, Op::Conv2d(a)) => {
                channels(cx, (a, kernel), (x, wt, bias, y), block)
            }
            (Packing::Channels { .. }, op) => unreachable!("a convolution's packing of {}", op.name()),
        }
    }
}

/// The zero-padded input planes a convolution over the packed weight reads, `[n, c, HP, WP]`
/// (the rows and columns its taps reach), or `None` for a 1x1 unpadded one, which reads its
/// input in place.
fn padded_planes(a: &Conv2dAttrs, [kh, kw]: [usize; 2], x: &Buf, y: &Buf) -> Option<TensorType> {
    if [kh, kw] == [1, 1] && a.pad == [0; 4] {
        return None;
    }
    let ([n, c], [oh, ow]) = ([x.shape()[0], x.shape()[1]], [y.shape()[2], y.shape()[3]]);
    let reach =
        |out: usize, stride: usize, k: usize, dilation: usize| (out - 1) * stride + (k - 1) * dilation + 1;
    let hp = reach(oh, a.stride[0], kh, a.dilation[0]);
    let wp = reach(ow, a.stride[1], kw, a.dilation[1]);
    Some(TensorType::new(DType::F32, [n, c, hp, wp]))
}

/// `y = conv2d(x, w, bias)` over the weight packed in blocks of `block` output channels
/// (`wt[ceil(oc / B), c*kh*kw, B]`): the zero-padded input planes copied first, by every
/// thread, before the products (a 1x1 unpadded convolution reads `x` in place); then threads
/// over images and blocks (and pixel tiles, where those are too few); per block, register tiles of pixels (broadcast from the planes) by
/// the block's channels (vectors of `wt`), as many pixels a tile as the accumulators allow,
/// the tiles balanced; each result stored into its channel's plane. The reduction runs over
/// `k = (c, ky, kx)` in the weight's order.
fn channels(
    cx: &mut Cx,
    (a, kernel): (&Conv2dAttrs, [usize; 2]),
    (x, wt, bias, y): (&Buf, &Buf, Option<&Buf>, &Buf),
    block: usize,
) -> Vec<Stmt> {
    let [n, oc, oh, ow] = <[usize; 4]>::try_from(y.shape()).expect("rank 4");
    let [_, c, h, wd] = <[usize; 4]>::try_from(x.shape()).expect("rank 4");
    let k = wt.shape()[1];
    let blocks = oc.div_ceil(block);
    let pixels = oh * ow;
    let lanes = cx.lanes();
    // Vector accumulators of the register tile (24 on AVX-512: 6 pixels by 4 vectors, the rest
    // for the weights' loads and the broadcasts).
    let budget = cx.knob(Knob::MatmulTileVectors);
    let threads = cx.wants_threads(2 * n * oc * pixels * k);
    let mut out = Vec::new();
    let planes = padded_planes(a, kernel, x, y).map(|ty| Buf::new(cx.fresh("planes"), ty));
    if let Some(planes) = &planes {
        let [_, _, hp, wp] = <[usize; 4]>::try_from(planes.shape()).expect("rank 4");
        let nest = outer(cx, &[n, c], threads, "i");
        let (ni, ci) = (nest.idx[0].clone(), nest.idx[1].clone());
        let (r, q) = (cx.fresh("r"), cx.fresh("q"));
        let (ih, iw) = (var(&r) - ints(a.pad[0] as i64), var(&q) - ints(a.pad[1] as i64));
        let inside = ih.clone().in_range(int(0), int(h)).and(iw.clone().in_range(int(0), int(wd)));
        let value = x.load(&[ni.clone(), ci.clone(), ih.clamp_index(h), iw.clamp_index(wd)]);
        let store = planes.store(&[ni, ci, var(&r), var(&q)], select(inside, value, f(0.0)));
        let row = simple_loop(cx.inner_kind(wp), &q, wp, vec![store]);
        out.push(planes.alloc());
        out.extend(nest.wrap(vec![simple_loop(LoopKind::Serial, &r, hp, vec![row])]));
    }
    // The pixel tiles join the parallel nest where images and blocks are too few for the cores
    // (a 1152 -> 192 layer is three blocks: with two cores, one idle a third of the time).
    // The last block computes whole vectors (the packed weight's slots past `oc` are zeros) and
    // stores its `left` channels; narrower than the others, its tiles take more pixels, so
    // that every tile keeps about the accumulators of a full one (an 80-channel layer's second
    // block of 16 took 6 pixels a tile: 6 vector accumulators of 24).
    let left = oc - (blocks - 1) * block;
    let width = left.next_multiple_of(lanes).min(block);
    let rows_of = |width: usize| {
        let per_pixel = width.div_ceil(lanes);
        pixels.div_ceil((pixels * per_pixel).div_ceil(budget.max(per_pixel)))
    };
    let (rows, last_rows) = (rows_of(block), rows_of(width));
    let (ptiles, last_ptiles) = (pixels.div_ceil(rows), pixels.div_ceil(last_rows));
    let split = threads && n * blocks < cx.cores() * cx.per_core() && ptiles > 1;
    let items = (blocks - 1) * ptiles + last_ptiles;
    let dims = if split { vec![n, items] } else { vec![n, blocks] };
    let nest = outer(cx, &dims, threads, "i");
    let (ni, it) = (nest.idx[0].clone(), nest.idx[1].clone());
    let source = planes.as_ref().unwrap_or(x);
    let taps = Taps { planes: source, kernel, stride: a.stride, dilation: a.dilation };
    // Block `bi` (`width` channels computed, `stored` of them stored): every pixel tile of
    // `rows`, or, split, tile `ti` only.
    let per_block = |cx: &mut Cx, bi: E, (width, stored): (usize, usize), rows: usize, ti: Option<E>| {
        let b = Block { n: ni.clone(), index: bi, block, width, stored, wt, bias, y };
        let tile = |cx: &mut Cx, p0: E, pr: usize| taps.tile(cx, &b, (p0, pr), ow);
        let Some(ti) = ti else {
            return tiles(cx, pixels, rows, LoopKind::Serial, "pt", tile);
        };
        let tiles = pixels.div_ceil(rows);
        let full = tile(cx, ti.clone() * int(rows), rows);
        let last = pixels - (tiles - 1) * rows;
        if last == rows {
            return full;
        }
        let tail = tile(cx, int((tiles - 1) * rows), last);
        vec![if_(ti.lt(int(tiles - 1)), full, tail)]
    };
    let body = if !split {
        let last = per_block(cx, it.clone(), (width, left), last_rows, None);
        if blocks == 1 {
            last
        } else {
            let full = per_block(cx, it.clone(), (block, block), rows, None);
            vec![if_(it.lt(int(blocks - 1)), full, last)]
        }
    } else {
        // Items `0..(blocks - 1) * ptiles` are the full blocks' tiles, the rest the last block's.
        let first_last = (blocks - 1) * ptiles;
        let last =
            per_block(cx, int(blocks - 1), (width, left), last_rows, Some(it.clone() - int(first_last)));
        if blocks == 1 {
            last
        } else {
            let full =
                per_block(cx, it.clone() / int(ptiles), (block, block), rows, Some(it.clone() % int(ptiles)));
            vec![if_(it.lt(int(first_last)), full, last)]
        }
    };
    out.extend(nest.wrap(body));
    out
}

/// The taps of a convolution over packed weights, read from the image's zero-padded planes (a
/// 1x1 unpadded convolution: from the input itself).
struct Taps<'a> {
    planes: &'a Buf,
    kernel: [usize; 2],
    stride: [usize; 2],
    dilation: [usize; 2],
}

/// One block of output channels of image `n`: `width` computed (whole vectors: the packed
/// weight is zero past the last channel), the first `stored` of them stored (+ bias).
struct Block<'a> {
    n: E,
    index: E,
    block: usize,
    width: usize,
    stored: usize,
    wt: &'a Buf,
    bias: Option<&'a Buf>,
    y: &'a Buf,
}

impl Taps<'_> {
    /// The register tile of `mr` pixels from `p0` by the channels of `b`: the reduction as loops over input channels, kernel rows and kernel
    /// columns, in the packed weight's order `k = (c, ky, kx)`, with no division per step (a
    /// single `k` loop divides it back into its parts at every step); each tap's pixel
    /// broadcast, the block's weights in vectors.
    fn tile(&self, cx: &mut Cx, b: &Block, (p0, mr): (E, usize), ow: usize) -> Vec<Stmt> {
        let [_, c, _, _] = <[usize; 4]>::try_from(self.planes.shape()).expect("rank 4");
        let ([kh, kw], [sh, sw], [dh, dw]) = (self.kernel, self.stride, self.dilation);
        let acc = Buf::new(cx.fresh("acc"), TensorType::new(DType::F32, [mr, b.width]));
        let (r0, r1, r2) = (cx.fresh("r"), cx.fresh("r"), cx.fresh("r"));
        let (j0, j1, j2) = (cx.fresh("j"), cx.fresh("j"), cx.fresh("j"));
        let (cv, ky, kx, av) = (cx.fresh("c"), cx.fresh("ky"), cx.fresh("kx"), cx.fresh("a"));
        let lanes = cx.inner_kind(b.width);
        let rows = |r: &str, body: Vec<Stmt>| simple_loop(LoopKind::Unroll, r, mr, body);
        let cols = |j: &str, body: Vec<Stmt>| simple_loop(lanes, j, b.width, body);
        let at = |r: &str, j: &str| [var(r), var(j)];
        let p = p0.clone() + var(&r1);
        let tap = self.planes.load(&[
            b.n.clone(),
            var(&cv),
            p.clone() / int(ow) * int(sh) + var(&ky) * int(dh),
            p % int(ow) * int(sw) + var(&kx) * int(dw),
        ]);
        let ki = (var(&cv) * int(kh) + var(&ky)) * int(kw) + var(&kx);
        let weight = b.wt.load(&[b.index.clone(), ki, var(&j1)]);
        let update = acc.store(&at(&r1, &j1), acc.load(&at(&r1, &j1)) + var(&av) * weight);
        let o = b.index.clone() * int(b.block) + var(&j2);
        let mut value = acc.load(&at(&r2, &j2));
        if let Some(bias) = b.bias {
            value = value + bias.load(std::slice::from_ref(&o));
        }
        let p = p0 + var(&r2);
        let store = b.y.store(&[b.n.clone(), o, p.clone() / int(ow), p % int(ow)], value);
        let kernel = simple_loop(
            LoopKind::Serial,
            &ky,
            kh,
            vec![simple_loop(
                LoopKind::Serial,
                &kx,
                kw,
                vec![rows(&r1, vec![let_(&av, tap), cols(&j1, vec![update])])],
            )],
        );
        vec![
            acc.alloc(),
            rows(&r0, vec![cols(&j0, vec![acc.store(&at(&r0, &j0), f(0.0))])]),
            simple_loop(LoopKind::Serial, &cv, c, vec![kernel]),
            rows(&r2, vec![simple_loop(cx.inner_kind(b.stored), &j2, b.stored, vec![store])]),
        ]
    }
}
