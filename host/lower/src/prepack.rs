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
//! - a pointwise convolution over few pixels (`conv2d` 1x1, ungrouped, unpadded): `w[oc, c, 1,
//!   1]` in blocks of `B` output channels, `[ceil(oc / B), c, B]` (block-major: a block's
//!   weights are one contiguous run, the whole weight one stream), and the product runs with
//!   the output channels in the vectors and the pixels broadcast (`y^T[p, oc] = sum_c
//!   x^T[p, c] w^T[c, oc]`), where pixels along the vectors would leave most lanes idle: per block, a
//!   register tile of as many pixels as the accumulators allow, the results stored across the
//!   channel planes. These products are bound by reading the weight (each weight is used for a
//!   few pixels): six 1024 -> 1024 convolutions over 3x2 pixels on one core of a 2-core AVX-512
//!   VM took 1.5-1.8 ms as dot products, 2.7 ms over the weight packed `[c, oc]` (a block's
//!   rows 4 KB apart), 0.94 ms packed by blocks with one tile of all 6 pixels, and 0.86-0.91 ms
//!   in onnxruntime.
//!
//! What must stay true: the packed weight holds the weight's elements (a transposition; the
//! last block's slots past `oc` are never read), and each output sums its products in the
//! order the unpacked kernel does (increasing `k`, or input channel).

use crate::matmul::{self, axpy_tile_body, Gemm, Load, PACK_MIN_ROWS};
use crate::recipe::Knob;
use crate::sched::{outer, simple_loop, tiles, Cx};
use crate::Knobs;
use ekb_ir::l0::{Node, Op};
use ekb_ir::l1::build::{int, var, Buf, E};
use ekb_ir::l1::{LoopKind, Stmt};
use ekb_ir::{DType, TensorType};

/// How a node's weight (its second operand) is packed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Packing {
    /// In panels of `panel` columns of the product; the weight is `[k, n]` where `k_first`
    /// (a `matmul` without `transpose_b`), else `[n, k]` (`linear`).
    Linear { panel: usize, k_first: bool },
    /// In blocks of `block` output channels.
    Pointwise { block: usize },
}

/// Vector accumulators of a pointwise product's register tile where the target has 32 vector
/// registers of 16 lanes (AVX-512): 6 pixels by 4 vectors, the rest for the weights' loads and
/// the broadcasts; elsewhere `matmul.tile_vectors`.
const WIDE_ACCUMULATORS: usize = 24;

impl Packing {
    /// The packing `node` takes under the default schedule when its weight depends on
    /// parameters alone, if any: f32 products with enough rows (a single row reads the weight
    /// once either way) as `matmul.pack_linear` says (by default where a row has more outputs
    /// than inputs), or pointwise convolutions over at most `conv.pack_max_pixels` pixels (none
    /// by default: see the knob's default). (By
    /// default a layer narrowing its rows, `k > n`, keeps its dot products: long dots
    /// amortize their horizontal sums, and the register tiles over few column tiles re-read
    /// the whole weight per row tile: TinyBERT's 1200 -> 312 layer, 280 us as dot products,
    /// 530 us packed, where its 312 -> 1200 layer went from 600 to 330 us, on a 2-core AVX-512
    /// VM.)
    /// `lanes` is the target's f32 vector width.
    pub(crate) fn of(node: &Node, ins: &[Buf], y: &Buf, knobs: &Knobs, lanes: usize) -> Option<Packing> {
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
                let [oh, ow] = [y.shape()[2], y.shape()[3]];
                let pointwise = a.groups == 1 && w[2..] == [1, 1] && a.pad == [0; 4];
                let few = oh * ow <= knobs.get(Knob::ConvPackMaxPixels);
                // Up to four vectors of output channels a block, fewer where the layer has fewer.
                let block = (4 * lanes).min(w[0].next_multiple_of(lanes));
                (f32s && pointwise && few).then_some(Packing::Pointwise { block })
            }
            _ => None,
        }
    }

    /// Rows of the weight (`n` or `oc`) per panel or block.
    fn block(self) -> usize {
        match self {
            Packing::Linear { panel, .. } => panel,
            Packing::Pointwise { block } => block,
        }
    }

    /// The weight's `[o, c]` extents: output columns (or channels) and the reduction.
    fn extents(self, w: &TensorType) -> [usize; 2] {
        match self {
            Packing::Linear { k_first: true, .. } => [w.shape[1], w.shape[0]],
            _ => [w.shape[0], w.shape[1]],
        }
    }

    /// The packed weight's type: `[ceil(o / B), c, B]` for the weight's `o` outputs and `c`
    /// reduction (`linear`'s `[n, k]`, `matmul`'s `[k, n]`, a convolution's `[oc, c, 1, 1]`).
    pub(crate) fn packed_type(self, w: &TensorType) -> TensorType {
        let ([o, c], b) = (self.extents(w), self.block());
        TensorType::new(w.dtype, [o.div_ceil(b), c, b])
    }

    /// The prepare kernel's body: `wt[o / B, c, o % B] = w[o, c]` (`w[c, o]` for `matmul`, a
    /// convolution's `w[o, c, 0, 0]`), along the weight's rows.
    pub(crate) fn pack(self, cx: &mut Cx, w: &Buf, wt: &Buf) -> Vec<Stmt> {
        let ([o, c], b) = (self.extents(&w.ty), self.block());
        let (ov, cv) = (cx.fresh("o"), cx.fresh("c"));
        let at = [var(&ov) / int(b), var(&cv), var(&ov) % int(b)];
        let (from, rows, cols) = match self {
            Packing::Linear { k_first: true, .. } => (vec![var(&cv), var(&ov)], (&cv, c), (&ov, o)),
            Packing::Linear { .. } => (vec![var(&ov), var(&cv)], (&ov, o), (&cv, c)),
            Packing::Pointwise { .. } => (vec![var(&ov), var(&cv), int(0), int(0)], (&ov, o), (&cv, c)),
        };
        let store = wt.store(&at, w.load(&from));
        let inner = simple_loop(cx.inner_kind(cols.1), cols.0, cols.1, vec![store]);
        vec![simple_loop(LoopKind::Parallel, rows.0, rows.1, vec![inner])]
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
            (Packing::Pointwise { block }, Op::Conv2d(a)) => pointwise(cx, a.stride, (x, wt, bias, y), block),
            (Packing::Pointwise { .. }, op) => unreachable!("a pointwise packing of {}", op.name()),
        }
    }
}

/// `y = conv2d(x, w, bias)`, 1x1, over the weight packed in blocks of `block` output channels
/// (`wt[ceil(oc / B), c, B]`): threads over images and blocks; per block, register tiles of
/// pixels (broadcast from `x`) by the block's channels (vectors of `wt`), as many pixels a tile
/// as the accumulators allow, the tiles balanced; each result stored into its channel's plane.
fn pointwise(
    cx: &mut Cx,
    [sh, sw]: [usize; 2],
    (x, wt, bias, y): (&Buf, &Buf, Option<&Buf>, &Buf),
    block: usize,
) -> Vec<Stmt> {
    let [n, oc, oh, ow] = <[usize; 4]>::try_from(y.shape()).expect("rank 4");
    let c = wt.shape()[1];
    let blocks = oc.div_ceil(block);
    let pixels = oh * ow;
    let lanes = cx.lanes();
    let budget = if lanes >= 16 { WIDE_ACCUMULATORS } else { cx.knob(Knob::MatmulTileVectors) };
    let per_pixel = block.div_ceil(lanes);
    let count = (pixels * per_pixel).div_ceil(budget.max(per_pixel));
    let rows = pixels.div_ceil(count);
    let threads = cx.wants_threads(2 * n * oc * pixels * c);
    let nest = outer(cx, &[n, blocks], threads, "i");
    let (ni, bi) = (nest.idx[0].clone(), nest.idx[1].clone());
    let o0 = bi.clone() * int(block);
    // The block's channels: `block`, the last one's fewer where `block` does not divide them.
    let per_block = |cx: &mut Cx, width: usize| {
        let (na, ny, bb, ob, oy) = (ni.clone(), ni.clone(), bi.clone(), o0.clone(), o0.clone());
        let g = Gemm {
            lead: vec![],
            m: pixels,
            n: width,
            k: c,
            a: Box::new(move |_, p, ci| {
                x.load(&[na.clone(), ci, p.clone() / int(ow) * int(sh), p % int(ow) * int(sw)])
            }),
            b: Box::new(move |_, ci, j| wt.load(&[bb.clone(), ci, j])),
            bias: bias.map(|b| Box::new(move |j: E| b.load(&[ob.clone() + j])) as Box<dyn Fn(E) -> E>),
            y: Box::new(move |_, p, j, v| {
                y.store(&[ny.clone(), oy.clone() + j, p.clone() / int(ow), p % int(ow)], v)
            }),
            b_rows_contiguous: true,
            acc: DType::F32,
        };
        tiles(cx, pixels, rows, LoopKind::Serial, "pt", |cx, p0, pr| {
            axpy_tile_body(cx, &g, &[], (p0, pr), (int(0), width))
        })
    };
    let left = oc - (blocks - 1) * block;
    let body = if left == block {
        per_block(cx, block)
    } else if blocks == 1 {
        per_block(cx, left)
    } else {
        let (full, last) = (per_block(cx, block), per_block(cx, left));
        vec![ekb_ir::l1::build::if_(bi.clone().lt(int(blocks - 1)), full, last)]
    };
    nest.wrap(body)
}
