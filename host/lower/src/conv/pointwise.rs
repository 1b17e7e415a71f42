//! Pointwise (1x1, ungrouped, unpadded) f32 convolutions whose output rows are narrower than
//! `conv.pointwise_max_ow` (a vector by default) as matrix products over flattened pixels:
//! `y[n, oc, p] = sum_c w[oc, c] * x[n, c, p]`. The direct layout vectorizes along an output
//! row, so a 7-wide row of a 16-lane vector leaves 9 lanes idle on every product; here a
//! vector runs over the pixels of several rows at once.
//!
//! Layout: threads over `(n, panel, chunk of output channels)`; a panel is as many whole output
//! rows as fit `matmul.tile_cols` columns (at least one). A panel's input pixels, `[C, rows *
//! OW]` (strided where the convolution is) and zero columns up to a whole number of vectors
//! (see [`padded_width`]), are copied into a `local` buffer: once per panel, by all threads
//! before the products, when a panel has several chunks and every panel's copy fits a quarter
//! of the stack; else by each iteration. Then, per tile of output channels, the matmul's
//! register tile runs over it (`matmul::axpy_tile_body`: channels unrolled, pixels vectorized)
//! into a `local` result, stored over the panel's pixels (+ bias): its rows are consecutive in
//! the output. There are just enough chunks to give every core `threads.per_core` iterations.
//!
//! With at most a vector of pixels per image, the product runs as dot products along the
//! input channels instead ([`by_dots`]).
//!
//! What must stay true: each output is the sum over input channels (in increasing order in
//! the product over pixels; the dot products add them lane by lane, then across the lanes),
//! every copy fits a quarter of the stack, and a copy shared by the threads is complete before
//! any product reads it (it is made by a `parallel` loop of its own, which ends first).

use super::dims4;
use crate::matmul::{axpy_tile, axpy_tile_body, dot_tile_body, Gemm};
use crate::recipe::Knob;
use crate::sched::{outer, simple_loop, tiles, Cx};
use ekb_ir::l0::Conv2dAttrs;
use ekb_ir::l1::build::{f, if_, int, loop_, var, Buf, E};
use ekb_ir::l1::{LoopKind, Stmt};
use ekb_ir::{DType, TensorType};

/// Output rows per panel: as many as fit a register tile's columns, at most all of them.
fn panel_rows(cx: &Cx, oh: usize, ow: usize) -> usize {
    (axpy_tile(cx, cx.lanes()).1 / ow).clamp(1, oh)
}

/// A panel's columns: its pixels, then zero columns up to a whole vector where more than one
/// pixel is left over (the products' remainder columns are scalar code: one costs about what
/// a vector does, more cost more).
fn padded_width(cx: &Cx, pixels: usize) -> usize {
    if pixels % cx.lanes() > 1 {
        pixels.next_multiple_of(cx.lanes())
    } else {
        pixels
    }
}

/// Whether `y = conv2d(x, w)` takes this layout under the default schedule.
pub(super) fn applies(cx: &Cx, a: &Conv2dAttrs, x: &Buf, w: &Buf, y: &Buf) -> bool {
    let [_, c, kh, kw] = dims4(w);
    let [_, _, oh, ow] = dims4(y);
    let f32s = [x.ty.dtype, w.ty.dtype, y.ty.dtype].iter().all(|&d| d == DType::F32);
    let shape = a.groups == 1 && [kh, kw] == [1, 1] && a.pad == [0; 4];
    let panel = if few_pixels(cx, oh, ow) {
        (oh * ow * c * 4) as u64
    } else {
        (c * padded_width(cx, panel_rows(cx, oh, ow) * ow) * 4) as u64
    };
    shape && f32s && ow < cx.knob(Knob::ConvPointwiseMaxOw) && panel <= cx.target.cpu.stack_bytes / 4
}

/// `y = conv2d(x, w, bias)` where [`applies`] holds.
pub(super) fn conv2d(
    cx: &mut Cx,
    a: &Conv2dAttrs,
    x: &Buf,
    w: &Buf,
    bias: Option<&Buf>,
    y: &Buf,
) -> Vec<Stmt> {
    let [n, c, _, _] = dims4(x);
    let [_, oc, oh, ow] = dims4(y);
    if few_pixels(cx, oh, ow) {
        return by_dots(cx, a, x, w, bias, y);
    }
    let rows = panel_rows(cx, oh, ow);
    let (tile_rows, _) = axpy_tile(cx, cx.lanes());
    let tile_rows = tile_rows.min(oc);
    let threads = cx.wants_threads(2 * n * oc * oh * ow * c);
    let (full, rem) = (oh / rows, oh % rows);
    let mut out = Vec::new();
    for (panels, prows) in [(full, rows), (usize::from(rem > 0), rem)] {
        if panels == 0 {
            continue;
        }
        // Chunks of whole channel tiles (a divisor of them): enough iterations for the cores,
        // no more; the last chunk also takes the channels left over by the tiles.
        let (whole, left) = (oc / tile_rows, oc % tile_rows);
        let want = if threads { (cx.cores() * cx.per_core()).div_ceil(n * panels) } else { 1 };
        let chunks = (1..=whole).find(|&d| whole % d == 0 && d >= want).unwrap_or(whole.max(1));
        let per_chunk = whole / chunks * tile_rows;
        let width = padded_width(cx, prows * ow);
        let y0_of = |pi: &E| if prows == rows { pi.clone() * int(rows) } else { int(full * rows) };
        // The chunks of one panel read the same copy: with several, it is made once, by every
        // thread, before the products, where the copies of all panels fit the stack's quarter.
        let shared = chunks > 1 && n * panels * c * width * 4 <= cx.target.cpu.stack_bytes as usize / 4;
        let panel = Buf::new(
            cx.fresh("panel"),
            TensorType::new(DType::F32, [if shared { n * panels } else { 1 }, c, width]),
        );
        let slot_of = |ni: &E, pi: &E| if shared { ni.clone() * int(panels) + pi.clone() } else { int(0) };
        let site = |ni: &E, pi: &E| Panel {
            buf: &panel,
            slot: slot_of(ni, pi),
            n: ni.clone(),
            y0: y0_of(pi),
            rows: prows,
            ow,
        };
        if shared {
            let nest = outer(cx, &[n, panels, c], threads, "i");
            let body = site(&nest.idx[0], &nest.idx[1]).copy_channel(cx, x, nest.idx[2].clone(), a.stride);
            out.push(panel.alloc());
            out.extend(nest.wrap(body));
        }
        let nest = outer(cx, &[n, panels, chunks], threads, "i");
        let ci = nest.idx[2].clone();
        let site = site(&nest.idx[0], &nest.idx[1]);
        let mut body = Vec::new();
        if !shared {
            let k = cx.fresh("k");
            let copy = site.copy_channel(cx, x, var(&k), a.stride);
            body.extend([panel.alloc(), simple_loop(LoopKind::Serial, &k, c, copy)]);
        }
        let m_first = ci.clone() * int(per_chunk);
        body.extend(tiles(cx, per_chunk, tile_rows, LoopKind::Serial, "t", |cx, m0, mr| {
            channel_tile(cx, &site, (w, bias, y), (m_first.clone() + m0, mr))
        }));
        if left > 0 {
            let tail = channel_tile(cx, &site, (w, bias, y), (int(oc - left), left));
            if chunks > 1 {
                body.push(if_(ci.eq(int(chunks - 1)), tail, vec![]));
            } else {
                body.extend(tail);
            }
        }
        out.extend(nest.wrap(body));
    }
    out
}

/// Whether an image's output pixels are too few for the product over pixels: at most a
/// vector of them, each weight would be one broadcast load for one vector product. (With two
/// vectors, 24 pixels, the product over pixels was the faster: 89 against 109 us for a
/// 512x512 weight on a 2-core AVX-512 VM.)
fn few_pixels(cx: &Cx, oh: usize, ow: usize) -> bool {
    oh * ow <= cx.lanes()
}

/// The product of the few-pixel form as dot products along the input channels:
/// `y[n, m, p] = sum_c x^T[p, c] * w[m, c]`, both operands contiguous along `c`. Threads over
/// `(n, chunk of output channels)`; the image's pixels are copied transposed, `[P, C]`, into a
/// `local` buffer (once per image before the products, as the panels are, or by each
/// iteration), then each iteration covers its channels with the matmul's dot tiles
/// (`matmul.dot_rows` pixels by `matmul.dot_cols` channels), so the weights stream past as
/// vector loads, each used for every pixel of the tile.
fn by_dots(cx: &mut Cx, a: &Conv2dAttrs, x: &Buf, w: &Buf, bias: Option<&Buf>, y: &Buf) -> Vec<Stmt> {
    let [n, c, _, _] = dims4(x);
    let [_, oc, oh, ow] = dims4(y);
    let [sh, sw] = a.stride;
    let pixels = oh * ow;
    let threads = cx.wants_threads(2 * n * oc * pixels * c);
    // Chunks of channels (a divisor of them): enough iterations for the cores, no more (each
    // copies the pixels again).
    let want = if threads { (cx.cores() * cx.per_core()).div_ceil(n) } else { 1 };
    let chunks = (1..=oc).find(|&d| oc % d == 0 && d >= want).unwrap_or(oc);
    let per_chunk = oc / chunks;
    // Every chunk reads the image's transposed pixels: with several, they are copied once, by
    // every thread, before the products, where all images' copies fit the stack's quarter.
    let shared = chunks > 1 && n * pixels * c * 4 <= cx.target.cpu.stack_bytes as usize / 4;
    let xt = Buf::new(cx.fresh("xt"), TensorType::new(DType::F32, [if shared { n } else { 1 }, pixels, c]));
    let slot = |ni: &E| if shared { ni.clone() } else { int(0) };
    // Pixel `p` of image `ni`, its channels along the vector.
    let copy_pixel = |cx: &mut Cx, ni: &E, p: E| {
        let k = cx.fresh("k");
        let at = [ni.clone(), var(&k), p.clone() / int(ow) * int(sh), p.clone() % int(ow) * int(sw)];
        let store = xt.store(&[slot(ni), p, var(&k)], x.load(&at));
        simple_loop(cx.inner_kind(c), &k, c, vec![store])
    };
    let mut out = Vec::new();
    if shared {
        let nest = outer(cx, &[n, pixels], threads, "i");
        let copy = copy_pixel(cx, &nest.idx[0], nest.idx[1].clone());
        out.push(xt.alloc());
        out.extend(nest.wrap(vec![copy]));
    }
    let nest = outer(cx, &[n, chunks], threads, "i");
    let (ni, ci) = (nest.idx[0].clone(), nest.idx[1].clone());
    let mut body = Vec::new();
    if !shared {
        let p = cx.fresh("p");
        let copy = copy_pixel(cx, &ni, var(&p));
        body.extend([xt.alloc(), simple_loop(LoopKind::Serial, &p, pixels, vec![copy])]);
    }
    let yn = ni.clone();
    let g = Gemm {
        lead: vec![],
        m: pixels,
        n: oc,
        k: c,
        a: Box::new(|_: &[E], pi, ki| xt.load(&[slot(&ni), pi, ki])),
        b: Box::new(|_: &[E], ki, mi| w.load(&[mi, ki, int(0), int(0)])),
        bias: bias.map(|b| Box::new(move |mi: E| b.load(&[mi])) as Box<dyn Fn(E) -> E>),
        y: Box::new(move |_: &[E], pi: E, mi, v| {
            y.store(&[yn.clone(), mi, pi.clone() / int(ow), pi % int(ow)], v)
        }),
        b_rows_contiguous: false,
        acc: DType::F32,
    };
    let (dr, dc) = (cx.knob(Knob::MatmulDotRows), cx.knob(Knob::MatmulDotCols));
    let m_first = ci * int(per_chunk);
    body.extend(tiles(cx, pixels, dr, LoopKind::Serial, "pt", |cx, p0, pr| {
        tiles(cx, per_chunk, dc, LoopKind::Serial, "ct", |cx, m0, mc| {
            dot_tile_body(cx, &g, &[], (p0.clone(), pr), (m_first.clone() + m0, mc))
        })
    }));
    out.extend(nest.wrap(body));
    out
}

/// One panel's copy of the input and where its pixels are: the channel tiles of the panel
/// read it.
struct Panel<'a> {
    /// `[slots, C, width]`: one slot per panel when the copies are made before the products,
    /// else one per parallel iteration.
    buf: &'a Buf,
    slot: E,
    n: E,
    /// The panel's first output row.
    y0: E,
    rows: usize,
    ow: usize,
}

impl Panel<'_> {
    fn width(&self) -> usize {
        self.buf.shape()[2]
    }

    fn load(&self, k: E, j: E) -> E {
        self.buf.load(&[self.slot.clone(), k, j])
    }

    fn store(&self, k: E, j: E, v: E) -> Stmt {
        self.buf.store(&[self.slot.clone(), k, j], v)
    }

    /// Copies input channel `k` of the panel's pixels (strided where the convolution is), then
    /// zeroes its padding columns.
    fn copy_channel(&self, cx: &mut Cx, x: &Buf, k: E, [sh, sw]: [usize; 2]) -> Vec<Stmt> {
        let (r, q) = (cx.fresh("r"), cx.fresh("q"));
        let row = (self.y0.clone() + var(&r)) * int(sh);
        let value = x.load(&[self.n.clone(), k.clone(), row, var(&q) * int(sw)]);
        let store = self.store(k.clone(), var(&r) * int(self.ow) + var(&q), value);
        let inner = simple_loop(cx.inner_kind(self.ow), &q, self.ow, vec![store]);
        let mut out = vec![simple_loop(LoopKind::Serial, &r, self.rows, vec![inner])];
        let pixels = self.rows * self.ow;
        if self.width() > pixels {
            let j = cx.fresh("j");
            let zero = self.store(k, var(&j), f(0.0));
            out.push(loop_(
                cx.inner_kind(self.width() - pixels),
                &j,
                int(pixels),
                int(self.width()),
                vec![zero],
            ));
        }
        out
    }
}

/// Output channels `m0..m0+mr` of one panel: the register tile into a `local` result, then its
/// rows stored (+ bias).
fn channel_tile(
    cx: &mut Cx,
    s: &Panel,
    (w, bias, y): (&Buf, Option<&Buf>, &Buf),
    (m0, mr): (E, usize),
) -> Vec<Stmt> {
    let width = s.width();
    let res = Buf::new(cx.fresh("res"), TensorType::new(DType::F32, [mr, width]));
    let at = m0.clone();
    let g = Gemm {
        lead: vec![],
        m: mr,
        n: width,
        k: s.buf.shape()[1],
        a: Box::new(move |_: &[E], mi, ki| w.load(&[at.clone() + mi, ki, int(0), int(0)])),
        b: Box::new(|_: &[E], ki, ni| s.load(ki, ni)),
        bias: None,
        y: Box::new(|_: &[E], mi, ni, v| res.store(&[mi, ni], v)),
        b_rows_contiguous: true,
        acc: DType::F32,
    };
    let mut body = vec![res.alloc()];
    body.extend(axpy_tile_body(cx, &g, &[], (int(0), mr), (int(0), width)));
    // The panel's rows are consecutive in `y`, so one loop over its pixels stores them: the
    // row and column of pixel `p` are `p / OW` and `p % OW`, which the compiler folds back
    // into `p` in the address, and the epilogue fused into this store runs on whole vectors
    // where a loop per row of 7 would leave most lanes idle.
    let (o, p) = (cx.fresh("o"), cx.fresh("p"));
    let mut value = res.load(&[var(&o), var(&p)]);
    if let Some(b) = bias {
        value = value + b.load(&[m0.clone() + var(&o)]);
    }
    let at = [s.n.clone(), m0 + var(&o), s.y0.clone() + var(&p) / int(s.ow), var(&p) % int(s.ow)];
    let store = y.store(&at, value);
    let pixels = s.rows * s.ow;
    body.push(simple_loop(
        LoopKind::Unroll,
        &o,
        mr,
        vec![simple_loop(cx.inner_kind(pixels), &p, pixels, vec![store])],
    ));
    body
}

#[cfg(test)]
mod tests {
    use crate::testing::knobs_match_reference;
    use ekb_ir::l1::print::print;
    use ekb_ir::l1::{LoopKind, Stmt};

    #[test]
    fn pointwise_convolutions_over_flattened_pixels_match_the_reference() {
        // Two images with a bias and a fused relu (output channels no tile divides); stride 2;
        // a panel per few rows with a remainder panel (11 rows of 6 with 8-column tiles); every
        // chunk count the cores can ask for; then a padded 1x1, which keeps the direct layout;
        // last, two with at most a vector of pixels (rk3588's vector is 4), which take the dot
        // products: two images with a bias, and stride 5x3.
        // (Weights are inputs: parameter weights over few pixels would be packed,
        // `crate::prepack`.)
        let g = "graph g(x: f32[2,12,5,3], u: f32[1,7,9,6], v: f32[1,10,11,6], q: f32[2,24,2,2], \
                 w: f32[13,12,1,1], b: f32[13], w2: f32[6,7,1,1], w3: f32[17,10,1,1], w4: f32[6,10,1,1], \
                 w5: f32[10,24,1,1], b5: f32[10]) \
                 -> (y: f32[2,13,5,3], z: f32[1,6,5,3], s: f32[1,17,11,6], d: f32[1,6,11,8], \
                 f: f32[2,10,2,2], h: f32[1,6,2,2]) {
  %0 = conv2d(x, w, b)
  %y = relu(%0)
  %z = conv2d(u, w2, stride=[2,2])
  %s = conv2d(v, w3)
  %d = conv2d(v, w4, pad=[0,1,0,1])
  %f = conv2d(q, w5, b5)
  %h = conv2d(u, w2, stride=[5,3])
  fuse %0, %y
  return %y, %z, %s, %d, %f, %h
}
";
        // On one thread a panel has one chunk: its iteration copies it.
        for (tile_cols, per_core, min_work) in [(8, 1, 1), (8, 4, 1), (64, 16, 1), (8, 4, 1 << 30)] {
            let set = [
                ("conv.pointwise_max_ow", 7),
                ("matmul.tile_cols", tile_cols),
                ("threads.per_core", per_core),
                ("threads.min_work", min_work),
            ];
            let m = knobs_match_reference(g, &set, "rk3588");
            let form = |name: &str| -> Vec<bool> {
                m.kernels
                    .iter()
                    .map(|k| format!("{:?}", k.body).contains(&format!("name: \"{name}\"")))
                    .collect()
            };
            assert_eq!(form("panel"), [true, true, true, false, false, false], "{}", print(&m));
            assert_eq!(form("xt"), [false, false, false, false, true, true], "{}", print(&m));
            // Copies made once before the products: an allocation of the kernel's own block,
            // followed by the parallel loops that write and read it.
            let before = |name: &str| -> Vec<bool> {
                m.kernels
                    .iter()
                    .map(|k| {
                        let at = k
                            .body
                            .iter()
                            .position(|s| matches!(s, Stmt::Alloc { name: n, .. } if n.starts_with(name)));
                        let parallel = |s: &Stmt| matches!(s, Stmt::Loop { kind: LoopKind::Parallel, .. });
                        at.is_some_and(|i| k.body[i..].iter().filter(|s| parallel(s)).count() >= 2)
                    })
                    .collect()
            };
            let threads = min_work == 1;
            // (Under 64 columns a tile covers 4 of `%z`'s six channels: one chunk and the rest.)
            let z = threads && tile_cols == 64;
            assert_eq!(before("panel"), [threads, z, threads, false, false, false], "{}", print(&m));
            assert_eq!(before("xt"), [false, false, false, false, threads, threads], "{}", print(&m));
        }
        // Rows as wide as the knob keep the other layouts (the direct one, without the
        // flattened planes).
        let m = knobs_match_reference(g, &[("conv.pointwise_max_ow", 2), ("conv.flat_max_ow", 0)], "rk3588");
        let text = print(&m);
        assert!(!text.contains("alloc panel") && !text.contains("alloc xt"), "{text}");
    }
}
