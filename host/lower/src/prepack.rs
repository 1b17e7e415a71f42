//! Weights packed once, by `prepare` steps (docs/ir-l1.md): a product whose weight depends on
//! parameters alone reads it in the order its register tiles want, written by a kernel of its
//! own that runs when the parameters are bound, before the first execution, as inference
//! engines pack weights when they load a model. The default schedule only; the naive one (the
//! baseline) computes everything in every execution.
//!
//! - `linear(x, w)`: `w[n, k]` transposed to `[k, n]`, so the product takes the matmul's
//!   register tiles (`B` contiguous along `n`: rows of `x` broadcast, columns of the weight in
//!   vectors) instead of dot products with their horizontal sums;
//! - a pointwise convolution over few pixels (`conv2d` 1x1, ungrouped, unpadded): `w[oc, c, 1,
//!   1]` as `[c, oc]`, and the product runs with the output channels in the vectors and the
//!   pixels broadcast (`y^T[p, oc] = sum_c x^T[p, c] * w^T[c, oc]`), where pixels along the
//!   vectors would leave most lanes idle; the results are stored across the channel planes.
//!
//! What must stay true: the packed weight holds the weight's elements (a transposition), and
//! each output sums its products in the order the unpacked kernel does (increasing `k`, or
//! input channel).

use crate::matmul::{self, Gemm, Load, PACK_MIN_ROWS};
use crate::recipe::Knob;
use crate::sched::{simple_loop, Cx};
use crate::Knobs;
use ekb_ir::l0::{Node, Op};
use ekb_ir::l1::build::{int, var, Buf, E};
use ekb_ir::l1::{LoopKind, Stmt};
use ekb_ir::{DType, TensorType};

/// How a node's weight (its second operand) is packed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Packing {
    Linear,
    Pointwise,
}

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
    pub(crate) fn of(node: &Node, ins: &[Buf], y: &Buf, knobs: &Knobs) -> Option<Packing> {
        let f32s = ins.iter().chain([y]).all(|b| b.ty.dtype == DType::F32);
        match &node.op {
            Op::Linear => {
                let x = &ins[0].ty;
                let rows: usize = x.shape[..x.rank().saturating_sub(1)].iter().product();
                let [n, k] = [ins[1].shape()[0], ins[1].shape()[1]];
                let pack = match knobs.get(Knob::MatmulPackLinear) {
                    0 => false,
                    1 => n > k,
                    _ => true,
                };
                (f32s && rows >= PACK_MIN_ROWS && pack).then_some(Packing::Linear)
            }
            Op::Conv2d(a) => {
                let w = ins[1].shape();
                let [oh, ow] = [y.shape()[2], y.shape()[3]];
                let pointwise = a.groups == 1 && w[2..] == [1, 1] && a.pad == [0; 4];
                let few = oh * ow <= knobs.get(Knob::ConvPackMaxPixels);
                (f32s && pointwise && few).then_some(Packing::Pointwise)
            }
            _ => None,
        }
    }

    /// The packed weight's type: the weight's `[n, k]` (or `[oc, c, 1, 1]`) as `[k, n]`.
    pub(crate) fn packed_type(self, w: &TensorType) -> TensorType {
        TensorType::new(w.dtype, [w.shape[1], w.shape[0]])
    }

    /// The prepare kernel's body: `wt[k, n] = w[n, k]` (`w[n, k, 0, 0]` for a convolution).
    pub(crate) fn pack(self, cx: &mut Cx, w: &Buf, wt: &Buf) -> Vec<Stmt> {
        match self {
            Packing::Linear => crate::movement::transpose(cx, &[1, 0], w, wt),
            Packing::Pointwise => {
                let [k, n] = [wt.shape()[0], wt.shape()[1]];
                let (kv, nv) = (cx.fresh("k"), cx.fresh("n"));
                let store = wt.store(&[var(&kv), var(&nv)], w.load(&[var(&nv), var(&kv), int(0), int(0)]));
                let inner = simple_loop(cx.inner_kind(n), &nv, n, vec![store]);
                vec![simple_loop(LoopKind::Parallel, &kv, k, vec![inner])]
            }
        }
    }

    /// The node's kernel body reading the packed weight `ins[1]`.
    pub(crate) fn lower(self, cx: &mut Cx, node: &Node, ins: &[Buf], y: &Buf) -> Vec<Stmt> {
        let (x, wt, bias) = (&ins[0], &ins[1], ins.get(2));
        let g = match (self, &node.op) {
            (Packing::Linear, _) => {
                let b: Load = Box::new(move |_, ki, ni| wt.load(&[ki, ni]));
                matmul::linear_gemm(x, (wt.shape()[1], wt.shape()[0]), (b, true), bias, y)
            }
            (Packing::Pointwise, Op::Conv2d(a)) => {
                let [sh, sw] = a.stride;
                let [n, _, oh, ow] = <[usize; 4]>::try_from(y.shape()).expect("rank 4");
                Gemm {
                    lead: vec![n],
                    m: oh * ow,
                    n: wt.shape()[1],
                    k: wt.shape()[0],
                    a: Box::new(move |l, p, c| {
                        x.load(&[l[0].clone(), c, p.clone() / int(ow) * int(sh), p % int(ow) * int(sw)])
                    }),
                    b: Box::new(move |_, c, o| wt.load(&[c, o])),
                    bias: bias.map(|b| Box::new(move |o: E| b.load(&[o])) as Box<dyn Fn(E) -> E>),
                    y: Box::new(move |l, p, o, v| {
                        y.store(&[l[0].clone(), o, p.clone() / int(ow), p % int(ow)], v)
                    }),
                    b_rows_contiguous: true,
                    acc: DType::F32,
                }
            }
            (Packing::Pointwise, op) => unreachable!("a pointwise packing of {}", op.name()),
        };
        matmul::emit(cx, &g)
    }
}
