//! Winograd F(2x2, 3x3) for ungrouped 3x3 convolutions of stride 1 without dilation, f32, whose
//! output rows and columns are even and whose rows hold at least a vector of tiles: each 2x2 output tile is `A^T [(G g G^T) . (B^T d B)] A`
//! over the 4x4 input patch `d` at `(2ty - top, 2tx - left)`, so the sum over input channels
//! becomes 16 independent products (one per transformed position `xi`) of 2.25x fewer
//! multiplications than the direct sum.
//!
//! Layout (default schedule; `conv.winograd_min_channels` chooses it by channel counts):
//! threads over `(n, output-channel block, chunk of tile rows)`; each iteration
//! 1. transforms its block's weights, `U[xi, ic, o] = (G g G^T)[xi]` (no buffer outlives the
//!    kernel, so every iteration transforms the weights it reads, a small fraction of its work);
//! 2. per tile row, per input channel, copies the 4 input rows the row reads, zero-padded, each
//!    patch column its own contiguous run over the tiles (`rows[r, s, t]`: a transform's loads
//!    never overlap another tile's, which LLVM would turn into a recurrence it cannot
//!    vectorize), and transforms them, `V[xi, ic, t] = (B^T d B)[xi]`;
//! 3. multiplies, `M[xi] = U[xi]^T V[xi]`, through the matmul's register tiles
//!    (`matmul::axpy_tile_body`: output channels unrolled, tiles vectorized);
//! 4. transforms back, `y[.., 2ty + a, 2t + b] = (A^T M A)[a, b]` (+ bias).
//!
//! Tiles per row are padded to whole vectors: the padding tiles read zeros and are never
//! stored. The transforms' coefficients are 0, +-1 and +-1/2, so every output differs from the
//! direct sum by a few rounding errors of the transformed values; the tests here and
//! `tests/native.rs` check the outputs against the f64 reference at the f32 tolerance.

use super::{dims4, valid_range};
use crate::matmul::{axpy_tile_body, Gemm};
use crate::recipe::Knob;
use crate::sched::{outer, simple_loop, tiles, Cx};
use ekb_ir::l0::Conv2dAttrs;
use ekb_ir::l1::build::{f, if_, int, ints, let_, loop_, var, Buf, E};
use ekb_ir::l1::{LoopKind, Stmt};
use ekb_ir::{DType, TensorType};

/// `G` of F(2, 3): weights to the 4 transformed taps.
const G: [[f64; 3]; 4] = [[1.0, 0.0, 0.0], [0.5, 0.5, 0.5], [0.5, -0.5, 0.5], [0.0, 0.0, 1.0]];
/// `B^T`: an input patch of 4 to its transform.
const BT: [[f64; 4]; 4] =
    [[1.0, 0.0, -1.0, 0.0], [0.0, 1.0, 1.0, 0.0], [0.0, -1.0, 1.0, 0.0], [0.0, 1.0, 0.0, -1.0]];
/// `A^T`: the 4 transformed products to the 2 outputs.
const AT: [[f64; 4]; 2] = [[1.0, 1.0, 1.0, 0.0], [0.0, 1.0, -1.0, -1.0]];

/// Transformed positions per tile.
const XI: usize = 16;

/// Whether `y = conv2d(x, w)` takes Winograd under the default schedule.
pub(super) fn applies(cx: &Cx, a: &Conv2dAttrs, x: &Buf, w: &Buf, y: &Buf) -> bool {
    let [oc, ic, kh, kw] = dims4(w);
    let [_, _, oh, ow] = dims4(y);
    let min = cx.knob(Knob::ConvWinogradMinChannels);
    let shape = a.groups == 1 && [kh, kw] == [3, 3] && a.stride == [1, 1] && a.dilation == [1, 1];
    let f32s = [x.ty.dtype, w.ty.dtype, y.ty.dtype].iter().all(|&d| d == DType::F32);
    // The products run a vector over the tiles of a row: a row of fewer tiles than a vector's
    // lanes leaves them partly empty, and the weight transform is then a large share of the
    // work (measured: 8x8 and 10x10 outputs of 320-512 channels took 2-3x longer than the
    // direct sum).
    let wide = ow / 2 >= cx.lanes();
    shape
        && f32s
        && wide
        && oh % 2 == 0
        && ow % 2 == 0
        && ic >= min
        && oc >= min
        && block(cx, ic, oc, ow).is_some()
}

/// Tiles per row, padded to whole vectors (a power of two for rows narrower than half a
/// vector).
fn padded_tiles(cx: &Cx, ow: usize) -> usize {
    let (tw, lanes) = (ow / 2, cx.lanes());
    if tw * 2 > lanes {
        tw.next_multiple_of(lanes)
    } else {
        tw.next_power_of_two()
    }
}

/// The bytes of `local` memory an iteration holds for a block of `ocb` output channels.
fn local_bytes(ic: usize, ocb: usize, twp: usize) -> usize {
    let rows = 4 * 4 * twp;
    4 * (XI * ic * ocb + XI * ic * twp + XI * ocb * twp + rows)
}

/// Output channels per iteration: the largest divisor of `oc` up to 32 whose buffers fit half
/// the stack (each iteration transforms the inputs once for its block: the larger the block,
/// the fewer times).
fn block(cx: &Cx, ic: usize, oc: usize, ow: usize) -> Option<usize> {
    let twp = padded_tiles(cx, ow);
    let limit = cx.target.cpu.stack_bytes / 2;
    (1..=oc.min(32)).rev().find(|&b| oc.is_multiple_of(b) && local_bytes(ic, b, twp) as u64 <= limit)
}

/// `sum coef * term`, skipping zero coefficients and multiplying only by those other than +-1.
fn combine(terms: impl IntoIterator<Item = (f64, E)>) -> E {
    let mut sum: Option<E> = None;
    for (c, e) in terms {
        if c == 0.0 {
            continue;
        }
        let scaled = if c.abs() == 1.0 { e } else { f(c.abs()) * e };
        sum = Some(match (sum, c < 0.0) {
            (None, false) => scaled,
            (None, true) => -scaled,
            (Some(s), false) => s + scaled,
            (Some(s), true) => s - scaled,
        });
    }
    sum.expect("every transform row has a nonzero coefficient")
}

/// `L X L^T` for a patch `X` given element-wise, in two passes: `T = L X` bound to `let`s
/// (named from `base`), then each `(T L^T)[i][j]`. Returns the `let`s and the `R * R` results.
fn sandwich<const R: usize, const C: usize>(
    cx: &mut Cx,
    base: &str,
    l: &[[f64; C]; R],
    x: impl Fn(usize, usize) -> E,
) -> (Vec<Stmt>, Vec<E>) {
    let mut lets = Vec::with_capacity(R * C);
    let mut t = Vec::with_capacity(R * C);
    for li in l {
        for c in 0..C {
            let name = cx.fresh(base);
            lets.push(let_(&name, combine((0..C).map(|r| (li[r], x(r, c))))));
            t.push(var(&name));
        }
    }
    let out = (0..R).flat_map(|i| l.iter().map(move |lj| (i, lj)));
    let out = out.map(|(i, lj)| combine((0..C).map(|c| (lj[c], t[i * C + c].clone())))).collect();
    (lets, out)
}

/// Fills `rows[r, s, t]` with `x[n, c, 2ty - top + r, 2t + s - left]`, zero outside the image:
/// each patch column its own contiguous run over the tiles (no load of the transform reads
/// what another iteration's load read).
fn copy_rows(
    cx: &mut Cx,
    a: &Conv2dAttrs,
    (x, rows): (&Buf, &Buf),
    (n, c, ty): (E, E, E),
    (h, wd): (usize, usize),
) -> Vec<Stmt> {
    let twp = rows.shape()[2];
    let (r, ih) = (cx.fresh("r"), cx.fresh("ih"));
    let mut inside = Vec::new();
    let mut outside = Vec::new();
    let zeros = |cx: &mut Cx, s: usize, lo: usize, hi: usize| -> Vec<Stmt> {
        let q = cx.fresh("q");
        let at = [var(&r), int(s), var(&q)];
        (lo < hi)
            .then(|| loop_(cx.inner_kind(hi - lo), &q, int(lo), int(hi), vec![rows.store(&at, f(0.0))]))
            .into_iter()
            .collect()
    };
    for s in 0..4 {
        let offset = s as i64 - a.pad[1] as i64;
        let (lo, hi) = valid_range(twp, 2, offset, wd);
        let q = cx.fresh("q");
        let copy = loop_(
            cx.inner_kind(hi - lo),
            &q,
            int(lo),
            int(hi),
            vec![rows.store(
                &[var(&r), int(s), var(&q)],
                x.load(&[n.clone(), c.clone(), var(&ih), var(&q) * int(2) + ints(offset)]),
            )],
        );
        let copy = if lo < hi { vec![copy] } else { vec![] };
        inside.extend([zeros(cx, s, 0, lo), copy, zeros(cx, s, hi, twp)].concat());
        outside.extend(zeros(cx, s, 0, twp));
    }
    vec![simple_loop(
        LoopKind::Serial,
        &r,
        4,
        vec![
            let_(&ih, ty * int(2) - ints(a.pad[0] as i64) + var(&r)),
            if_(var(&ih).in_range(int(0), int(h)), inside, outside),
        ],
    )]
}

/// `y = conv2d(x, w, bias)` where [`applies`] holds (see the module header).
pub(super) fn conv2d(
    cx: &mut Cx,
    a: &Conv2dAttrs,
    x: &Buf,
    w: &Buf,
    bias: Option<&Buf>,
    y: &Buf,
) -> Vec<Stmt> {
    let [n, ic, h, wd] = dims4(x);
    let [oc, _, _, _] = dims4(w);
    let [_, _, oh, ow] = dims4(y);
    let ocb = block(cx, ic, oc, ow).expect("checked by `applies`");
    let (th, tw, twp) = (oh / 2, ow / 2, padded_tiles(cx, ow));
    // Threads over images, channel blocks and, where those are fewer than the cores, chunks of
    // tile rows (a divisor of the rows; each chunk transforms its block's weights again).
    let threads = cx.wants_threads(2 * y.ty.numel() * ic * 9);
    let want = if threads { cx.cores() } else { 1 };
    let have = n * (oc / ocb);
    let chunks = (1..=th).filter(|c| th.is_multiple_of(*c)).find(|c| have * c >= want).unwrap_or(th);
    let per = th / chunks;
    let nest = outer(cx, &[n, oc / ocb, chunks], threads, "i");
    let (ni, ob, chunk) = (nest.idx[0].clone(), nest.idx[1].clone(), nest.idx[2].clone());
    let oc0 = cx.fresh("oc0");
    let u = Buf::new(cx.fresh("u"), TensorType::new(DType::F32, [XI, ic, ocb]));
    let v = Buf::new(cx.fresh("v"), TensorType::new(DType::F32, [XI, ic, twp]));
    let m = Buf::new(cx.fresh("m"), TensorType::new(DType::F32, [XI, ocb, twp]));

    // 1. U[xi, c, o] = (G w[oc0 + o, c] G^T)[xi].
    let (o, c) = (cx.fresh("o"), cx.fresh("c"));
    let g = |r: usize, s: usize| w.load(&[var(&oc0) + var(&o), var(&c), int(r), int(s)]);
    let (lets, values) = sandwich(cx, "g", &G, g);
    let stores = values.into_iter().enumerate().map(|(xi, e)| u.store(&[int(xi), var(&c), var(&o)], e));
    let transform_weights = simple_loop(
        LoopKind::Serial,
        &c,
        ic,
        vec![simple_loop(cx.inner_kind(ocb), &o, ocb, lets.into_iter().chain(stores).collect())],
    );

    // 2. Per tile row and input channel: the patch columns `s` of the 4 input rows the row
    //    reads, zero-padded, `rows[r, s, t] = x[n, ci, 2ty - top + r, 2t + s - left]`, then V.
    let ty = cx.fresh("ty");
    let rows = Buf::new(cx.fresh("rows"), TensorType::new(DType::F32, [4, 4, twp]));
    let ci = cx.fresh("ci");
    let fill = copy_rows(cx, a, (x, &rows), (ni.clone(), var(&ci), var(&ty)), (h, wd));
    let t = cx.fresh("t");
    let patch = |r: usize, s: usize| rows.load(&[int(r), int(s), var(&t)]);
    let (lets, values) = sandwich(cx, "d", &BT, patch);
    let stores = values.into_iter().enumerate().map(|(xi, e)| v.store(&[int(xi), var(&ci), var(&t)], e));
    let inputs: Vec<Stmt> = lets.into_iter().chain(stores).collect();
    let transform_inputs = simple_loop(
        LoopKind::Serial,
        &ci,
        ic,
        [fill, vec![simple_loop(cx.inner_kind(twp), &t, twp, inputs)]].concat(),
    );

    // 3. M[xi] = U[xi]^T V[xi]: rows are output channels, columns tiles, k input channels.
    let (u_at, v_at, m_at) = (&u, &v, &m);
    let gemm = Gemm {
        lead: vec![XI],
        m: ocb,
        n: twp,
        k: ic,
        a: Box::new(move |l: &[E], mi, ki| u_at.load(&[l[0].clone(), ki, mi])),
        b: Box::new(move |l: &[E], ki, ni| v_at.load(&[l[0].clone(), ki, ni])),
        bias: None,
        y: Box::new(move |l: &[E], mi, ni, val| m_at.store(&[l[0].clone(), mi, ni], val)),
        b_rows_contiguous: true,
        acc: DType::F32,
    };
    let lanes = cx.lanes();
    let cols = twp.min(2 * lanes);
    // As many vector accumulators as the direct convolution's register tile holds.
    let accumulators = cx.knob(Knob::ConvOcBlock) * cx.knob(Knob::ConvOwTile).div_ceil(lanes);
    let tile_rows = (accumulators / cols.div_ceil(lanes)).clamp(1, ocb);
    let xi = cx.fresh("xi");
    let products = tiles(cx, ocb, tile_rows, LoopKind::Serial, "mt", |cx, m0, mr| {
        tiles(cx, twp, cols, LoopKind::Serial, "nt", |cx, n0, nt| {
            axpy_tile_body(cx, &gemm, &[var(&xi)], (m0.clone(), mr), (n0, nt))
        })
    });
    let multiply = simple_loop(LoopKind::Serial, &xi, XI, products);

    // 4. y[n, oc0 + o, 2ty + r, 2t + s] = (A^T M A)[r, s] (+ bias) for the real tiles.
    let (o2, t2) = (cx.fresh("o"), cx.fresh("t"));
    let mv = |r: usize, s: usize| m.load(&[int(r * 4 + s), var(&o2), var(&t2)]);
    let (lets, values) = sandwich(cx, "p", &AT, mv);
    let outputs: Vec<Stmt> = values
        .into_iter()
        .enumerate()
        .map(|(rs, e)| {
            let value = match bias {
                Some(b) => e + b.load(&[var(&oc0) + var(&o2)]),
                None => e,
            };
            let (r, s) = (rs / 2, rs % 2);
            let at =
                [ni.clone(), var(&oc0) + var(&o2), var(&ty) * int(2) + int(r), var(&t2) * int(2) + int(s)];
            y.store(&at, value)
        })
        .collect();
    let outputs = [lets, outputs].concat();
    let transform_back =
        simple_loop(LoopKind::Serial, &o2, ocb, vec![simple_loop(cx.inner_kind(tw), &t2, tw, outputs)]);

    let row = vec![transform_inputs, multiply, transform_back];
    let ty_first = chunk * int(per);
    let rows_loop = loop_(LoopKind::Serial, &ty, ty_first.clone(), ty_first + int(per), row);
    nest.wrap(vec![
        let_(&oc0, ob * int(ocb)),
        u.alloc(),
        v.alloc(),
        m.alloc(),
        rows.alloc(),
        transform_weights,
        rows_loop,
    ])
}

#[cfg(test)]
mod tests {
    use crate::testing::lowered_matches_reference;
    use crate::Schedule;
    use ekb_ir::l1::print::print;

    #[test]
    fn winograd_convolutions_match_the_reference() {
        // Padding on every side with a bias and a fused silu (which reads the convolution's
        // value twice: each of a tile's four stores binds its own `let`); no padding (the
        // output shrinks by 2), two images; uneven padding; then a row of fewer tiles than the
        // board's 4 lanes, which keeps the direct sum. (The weights are inputs: weights of
        // parameters alone over so few pixels are packed for another layout, prepack.rs.)
        let g = "graph g(x: f32[1,16,12,20], u: f32[2,16,10,10], v: f32[1,24,9,7], s: f32[1,16,4,6], \
                 w: f32[32,16,3,3], w1: f32[16,16,3,3], w2: f32[16,24,3,3]) \
                 -> (y: f32[1,32,12,20], z: f32[2,16,8,8], q: f32[1,16,10,8], d: f32[1,16,4,6]) {
  param b: f32[32] = uniform(-1, 1)
  %0 = conv2d(x, w, b, pad=[1,1,1,1])
  %y = silu(%0)
  %z = conv2d(u, w1)
  %q = conv2d(v, w2, pad=[2,1,1,2])
  %d = conv2d(s, w1, pad=[1,1,1,1])
  fuse %0, %y
  return %y, %z, %q, %d
}
";
        let m = lowered_matches_reference(g, Schedule::Default, "rk3588");
        let text = print(&m);
        // U, V and M of each of the three convolutions: `local` buffers `[16, .., ..]`.
        let transformed = text
            .lines()
            .map(str::trim)
            .filter(|l| l.starts_with("alloc ") && l.ends_with(" local"))
            .filter(|l| l.contains(": f32[16,") && l.matches(',').count() == 2)
            .count();
        assert_eq!(transformed, 9, "{text}");
    }
}
