//! 2-D convolution (NCHW, grouped, strided, dilated, padded, optional bias).
//!
//! Layouts:
//! - naive: per output element, a `local` scalar accumulator over `(ic, kh, kw)`, padded taps
//!   skipped by an `if` on the input coordinates;
//! - default: threads over `(n, output-channel block)` (and output rows when those are too few
//!   for the cores); per output row, register tiles of `conv.oc_block` channels by `conv.ow_tile` columns
//!   held in a `local` accumulator across the whole reduction: loops `ic`, `kh` (an `if` skips
//!   padded input rows, outside the vector loop), `kw`, then the vectorized column loop, whose
//!   input load is shared by the `unroll`ed channels of the block. Padding never costs a branch
//!   in the vector loop: interior tiles (every `kw` tap inside the image for every column) need
//!   no test at all, and the border tiles on either side unroll `kw`, each tap over its literal
//!   range of valid columns. Depthwise convolution (`groups == C`) is the same nest with blocks
//!   of one channel (a block never straddles two groups).
//! - default, padded rows (an ungrouped convolution whose input channels x taps reach
//!   `conv.copy_min_taps`, 1 by default, when the copy fits a quarter of the stack): threads over
//!   `(n, chunk of channel blocks, output row)`; each iteration first copies the input rows its
//!   output row reads into a `local` buffer, zero-padded on every side, then computes the row's
//!   tiles for each block of the chunk from it. Every tap of every column is then inside the
//!   copy, so the row is whole tiles of `conv.ow_tile` columns with no border tiles. A
//!   remainder of 4 or 8 columns (a narrower vector) is a tile of its own; any other remainder
//!   is a full tile overlapping its neighbour (each output element is still a full reduction
//!   stored once, so computing it twice changes nothing). Every column is then in a vector,
//!   where border and remainder columns were scalar. The copy's columns are split by phase
//!   modulo the stride, so a strided convolution's taps read consecutive elements (no gathers).
//! - default, padded planes (a grouped convolution, depthwise among them, whose zero-padded
//!   input planes of one group take at most `conv.plane_copy_bytes` and a quarter of the stack):
//!   threads over `(n, channel block)`; each iteration copies its group's input planes,
//!   zero-padded, into a `local` buffer once, then computes the output rows' tiles from it as
//!   the padded rows do, `conv.oh_block` rows per tile (a one-channel depthwise tile is otherwise
//!   a single chain of dependent FMAs; the rows' chains are independent and their taps, unrolled,
//!   load each input row they share once).
//!
//! - default, pointwise ([`pointwise`]): ungrouped 1x1 f32 convolutions without padding whose
//!   output rows are narrower than `conv.pointwise_max_ow` (a vector): a matrix product over
//!   flattened pixels, each panel of whole rows copied first; with at most a vector of
//!   pixels per image, dot products along the input channels over the pixels transposed.
//! - default, flattened planes ([`flat_planes`]): other ungrouped f32 convolutions whose
//!   output rows are narrower than `conv.flat_max_ow` (a vector), and strided ones whose row
//!   copy would not fit: a product over the zero-padded input planes flattened (split by
//!   stride phase), each tap a shift of the same vector of pixels.
//! - default, flattened depthwise planes ([`flat_depthwise`]): f32 convolutions of one input
//!   channel per group whose output rows are narrower than `conv.flat_max_ow`: each channel's
//!   zero-padded plane flattened, every tap a shift of the same vector of pixels.
//! - default, Winograd F(2x2, 3x3) ([`winograd`]): ungrouped 3x3 convolutions of stride 1, f32,
//!   even output sizes, at least `conv.winograd_min_channels` input and output channels.
//!
//! i8 input and weight (integer convolution) take the same layouts with an i32 accumulator of
//! the output's dtype: each i8 load is already an i32, products and wrapping sums are exact,
//! and an i32 bias initialises the accumulator as an f32 one does.

mod flat_depthwise;
mod flat_planes;
pub(crate) mod flat_transpose;
mod pointwise;
mod winograd;

use crate::recipe::Knob;
use crate::sched::{outer, overlapping_tiles, serial, simple_loop, tiles, Cx};
use ekb_ir::l0::Conv2dAttrs;
use ekb_ir::l1::build::{if_, int, ints, let_, loop_, var, zero, Buf, E};
use ekb_ir::l1::{LoopKind, Stmt};
use ekb_ir::TensorType;

/// The output positions `o` in `0..out` whose input coordinate `o*stride + offset` lies in
/// `0..size`, as a half-open range (empty when none does).
pub fn valid_range(out: usize, stride: usize, offset: i64, size: usize) -> (usize, usize) {
    let s = stride as i64;
    // o*s + offset >= 0  <=>  o >= ceil(-offset / s)
    let lo = (-offset).div_euclid(s) + i64::from((-offset).rem_euclid(s) != 0);
    // o*s + offset <= size - 1  <=>  o <= floor((size - 1 - offset) / s)
    let hi = (size as i64 - 1 - offset).div_euclid(s) + 1;
    let lo = lo.clamp(0, out as i64) as usize;
    let hi = hi.clamp(0, out as i64) as usize;
    (lo, hi.max(lo))
}

/// `y = conv2d(x, w, bias)`.
pub fn conv2d(cx: &mut Cx, a: &Conv2dAttrs, x: &Buf, w: &Buf, bias: Option<&Buf>, y: &Buf) -> Vec<Stmt> {
    let [_, _, h, wd] = dims4(x);
    let [oc, icg, kh, kw] = dims4(w);
    let ocg = oc / a.groups;
    let [sh, sw] = a.stride;
    let [dh, dw] = a.dilation;
    let (pt, pl) = (a.pad[0] as i64, a.pad[1] as i64);
    if cx.naive() {
        let nest = serial(cx, y.shape(), "i");
        let [ni, oi, hi, wi] = <[E; 4]>::try_from(nest.idx.clone()).expect("rank 4");
        let acc = Buf::new(cx.fresh("acc"), TensorType::new(y.ty.dtype, [1]));
        let red = serial(cx, &[icg, kh, kw], "r");
        let [ci, khi, kwi] = <[E; 3]>::try_from(red.idx.clone()).expect("rank 3");
        let (ih, iw) = (cx.fresh("ih"), cx.fresh("iw"));
        let tap = vec![
            let_(&ih, hi * int(sh) + khi.clone() * int(dh) - ints(pt)),
            let_(&iw, wi * int(sw) + kwi.clone() * int(dw) - ints(pl)),
            if_(
                var(&ih).in_range(int(0), int(h)).and(var(&iw).in_range(int(0), int(wd))),
                vec![acc.store(
                    &[int(0)],
                    acc.load(&[int(0)])
                        + x.load(&[
                            ni.clone(),
                            oi.clone() / int(ocg) * int(icg) + ci.clone(),
                            var(&ih),
                            var(&iw),
                        ]) * w.load(&[oi.clone(), ci, khi, kwi]),
                )],
                vec![],
            ),
        ];
        let mut value = acc.load(&[int(0)]);
        if let Some(b) = bias {
            value = value + b.load(std::slice::from_ref(&oi));
        }
        let body = [
            vec![acc.alloc(), acc.store(&[int(0)], zero(y.ty.dtype))],
            red.wrap(tap),
            vec![y.store(&nest.idx, value)],
        ]
        .concat();
        return nest.wrap(body);
    }
    if pointwise::applies(cx, a, x, w, y) {
        return pointwise::conv2d(cx, a, x, w, bias, y);
    }
    if flat_planes::applies(cx, a, x, w, y) {
        return flat_planes::conv2d(cx, a, x, w, bias, y);
    }
    if flat_depthwise::applies(cx, a, x, w, y) {
        return flat_depthwise::conv2d(cx, a, x, w, bias, y);
    }
    if winograd::applies(cx, a, x, w, y) {
        return winograd::conv2d(cx, a, x, w, bias, y);
    }
    let c = Conv { x, w, bias, y, icg, ocb: block_channels(cx, ocg), kh, kw, h, wd, sh, sw, dh, dw, pt, pl };
    let threads = cx.wants_threads(2 * y.ty.numel() * icg * kh * kw);
    let [n, oc, oh, ow] = dims4(y);
    let fits = |t: &TensorType| t.size_bytes() as u64 <= cx.target.cpu.stack_bytes / 4;
    let rows = copy_type(&c, kh, ow);
    if a.groups == 1 && icg * kh * kw >= cx.knob(Knob::ConvCopyMinTaps) && fits(&rows) {
        return padded_rows(cx, &c, rows, threads);
    }
    // Strided without the row copy, the direct layout's taps would be gathers: the flattened
    // planes copy the input by phase, a chunk of channels at a time.
    if a.stride != [1, 1] && flat_planes::fits(cx, a, x, w, y) {
        return flat_planes::conv2d(cx, a, x, w, bias, y);
    }
    let planes = copy_type(&c, copy_height(&c, oh), ow);
    let enough = !threads || n * (oc / c.ocb) >= cx.cores();
    if a.groups > 1 && planes.size_bytes() <= cx.knob(Knob::ConvPlaneCopyBytes) && fits(&planes) && enough {
        return padded_planes(cx, &c, ocg, planes, threads);
    }
    // Threads over images, channel blocks and, when those are too few for the cores, rows.
    let nest = outer(cx, &[n, oc / c.ocb, oh], threads, "i");
    let (ni, ob, ohi) = (nest.idx[0].clone(), nest.idx[1].clone(), nest.idx[2].clone());
    let (oc0, cbase) = (cx.fresh("oc0"), cx.fresh("cb"));
    // The block's first output channel, and its group's first input channel.
    let mut body = vec![let_(&oc0, ob * int(c.ocb)), let_(&cbase, var(&oc0) / int(ocg) * int(icg))];
    body.extend(row_tiles(cx, &c, &Site { n: ni, oc0: var(&oc0), cbase: var(&cbase), oh: ohi, rows: 1 }, ow));
    nest.wrap(body)
}

/// Output channels per register tile (they share every input load): the largest divisor of
/// the channels per group up to `conv.oc_block` (by default as many as make 16 vector
/// accumulators of a 16-column tile: 16 on AVX-512, 4 on NEON; 6 of 2 vectors on AVX2, whose
/// 16 registers also hold the input row and a weight), all kept in registers across the
/// reduction, so a block never straddles two groups (depthwise: 1).
pub(crate) fn block_channels(cx: &Cx, ocg: usize) -> usize {
    (1..=cx.knob(Knob::ConvOcBlock).min(ocg)).rev().find(|&b| ocg.checked_rem(b) == Some(0)).unwrap_or(1)
}

/// A convolution's operands and geometry, for the default layout.
struct Conv<'a> {
    x: &'a Buf,
    w: &'a Buf,
    bias: Option<&'a Buf>,
    y: &'a Buf,
    /// Input channels per group, output channels per block.
    icg: usize,
    ocb: usize,
    kh: usize,
    kw: usize,
    h: usize,
    wd: usize,
    sh: usize,
    sw: usize,
    dh: usize,
    dw: usize,
    pt: i64,
    pl: i64,
}

/// Where a tile sits: image, first output channel of the block, first input channel of its
/// group, first output row, and the output rows it covers (more than one only over a padded
/// plane copy, which holds every row they read).
struct Site {
    n: E,
    oc0: E,
    cbase: E,
    oh: E,
    rows: usize,
}

/// One output row of a channel block: the interior columns (every `kw` tap inside the image)
/// in tiles of `conv.ow_tile`, and the border columns on either side in tiles whose `kw` taps each
/// get their literal valid range.
fn row_tiles(cx: &mut Cx, c: &Conv, s: &Site, ow: usize) -> Vec<Stmt> {
    let offset = |k: usize| (k * c.dw) as i64 - c.pl;
    let ranges: Vec<(usize, usize)> = (0..c.kw).map(|k| valid_range(ow, c.sw, offset(k), c.wd)).collect();
    let lo = ranges.iter().map(|r| r.0).max().unwrap_or(0);
    let hi = ranges.iter().map(|r| r.1).min().unwrap_or(ow);
    let mut out = Vec::new();
    let border = |cx: &mut Cx, from: usize, to: usize, out: &mut Vec<Stmt>| {
        let mut b = from;
        while b < to {
            let len = cx.knob(Knob::ConvOwTile).min(to - b);
            out.extend(tile(cx, c, s, int(b), len, Input::Border(b, &ranges)));
            b += len;
        }
    };
    if lo < hi {
        border(cx, 0, lo, &mut out);
        let ow_tile = row_tile(cx, hi - lo);
        let interior = tiles(cx, hi - lo, ow_tile, LoopKind::Serial, "wt", |cx, b, len| {
            tile(cx, c, s, int(lo) + b, len, Input::Interior)
        });
        out.extend(interior);
        border(cx, hi, ow, &mut out);
    } else {
        border(cx, 0, ow, &mut out);
    }
    out
}

/// Where a tile reads its input from.
#[derive(Clone, Copy)]
enum Input<'a> {
    /// The image: an interior tile (every tap of every column inside the image) loops over `kw`.
    Interior,
    /// The image: a border tile at literal column `b0` unrolls `kw` with each tap's valid
    /// columns (`ranges`, per tap).
    Border(usize, &'a [(usize, usize)]),
    /// A zero-padded copy ([`copy_type`]): of the `kh` rows an output row reads, or (`plane`)
    /// of every row of the image from row `-pt` on.
    Rows { buf: &'a Buf, plane: bool },
}

/// One register tile: `ocb` output channels by `len` columns of each of the site's `rows`
/// output rows starting at `b`, accumulated over every input channel and tap in a `local` tile,
/// reading `input`. Several rows (over a plane copy only) unroll the taps, so the rows' loads of
/// one input row are the same loads and the rows' accumulators are independent chains.
fn tile(cx: &mut Cx, c: &Conv, s: &Site, b: E, len: usize, input: Input) -> Vec<Stmt> {
    let rows = s.rows;
    assert!(
        rows == 1 || matches!(input, Input::Rows { plane: true, .. }),
        "several rows need the plane copy"
    );
    let acc = Buf::new(cx.fresh("acc"), TensorType::new(c.y.ty.dtype, [rows * c.ocb, len]));
    let (o0, j0, o2, j2) = (cx.fresh("o"), cx.fresh("j"), cx.fresh("o"), cx.fresh("j"));
    let (ci, khv, ih) = (cx.fresh("ci"), cx.fresh("kh"), cx.fresh("ih"));
    let (r0, r1, r2) = (cx.fresh("r"), cx.fresh("r"), cx.fresh("r"));
    let lanes = cx.inner_kind(len);
    // The accumulator row of output row `r` of the tile and channel `o` of the block.
    let at_row = |r: &str, o: &str| if rows == 1 { var(o) } else { var(r) * int(c.ocb) + var(o) };
    // Over the tile's rows (an unrolled loop when there are several).
    let per_row = |r: &str, body: Vec<Stmt>| {
        if rows == 1 {
            body
        } else {
            vec![simple_loop(LoopKind::Unroll, r, rows, body)]
        }
    };
    let init = |o: &str| match c.bias {
        Some(bb) => bb.load(&[s.oc0.clone() + var(o)]),
        None => zero(c.y.ty.dtype),
    };
    // acc[r, o, j] += w[oc0 + o, ci, kh, k] * x[n, cb + ci, (oh + r)*sh + kh*dh - pt, (b + j)*sw + k*dw - pl]
    // for the tile-relative columns `j` in `j_lo..j_hi`.
    let tap = |cx: &mut Cx, k: E, j_lo: usize, j_hi: usize| {
        let (j, xv, o) = (cx.fresh("j"), cx.fresh("xv"), cx.fresh("o"));
        let xload = match input {
            Input::Rows { buf, plane } => {
                let row = if plane {
                    let oh = if rows == 1 { s.oh.clone() } else { s.oh.clone() + var(&r1) };
                    oh * int(c.sh) + var(&khv) * int(c.dh)
                } else {
                    var(&khv)
                };
                // Column (b + j)*sw + k*dw of the padded row, in the copy's phase layout.
                let (phase, shift) = if c.sw == 1 {
                    (int(0), k.clone() * int(c.dw))
                } else {
                    (k.clone() * int(c.dw) % int(c.sw), k.clone() * int(c.dw) / int(c.sw))
                };
                buf.load(&[var(&ci), row, phase, b.clone() + var(&j) + shift])
            }
            _ => {
                let iw = (b.clone() + var(&j)) * int(c.sw) + k.clone() * int(c.dw) - ints(c.pl);
                c.x.load(&[s.n.clone(), s.cbase.clone() + var(&ci), var(&ih), iw])
            }
        };
        let at = [at_row(&r1, &o), var(&j)];
        let wv = c.w.load(&[s.oc0.clone() + var(&o), var(&ci), var(&khv), k]);
        let upd = acc.store(&at, acc.load(&at) + wv * var(&xv));
        loop_(
            cx.inner_kind(j_hi - j_lo),
            &j,
            int(j_lo),
            int(j_hi),
            per_row(&r1, vec![let_(&xv, xload), simple_loop(LoopKind::Unroll, &o, c.ocb, vec![upd])]),
        )
    };
    // Several rows unroll the taps, so that the loads their rows share are one load.
    let tap_kind = if rows == 1 { LoopKind::Serial } else { LoopKind::Unroll };
    let taps = match input {
        Input::Interior | Input::Rows { .. } => {
            let k = cx.fresh("kw");
            vec![simple_loop(tap_kind, &k, c.kw, vec![tap(cx, var(&k), 0, len)])]
        }
        Input::Border(b0, ranges) => {
            let mut v = Vec::new();
            for (k, &(lo, hi)) in ranges.iter().enumerate() {
                let (lo, hi) = (lo.max(b0), hi.min(b0 + len));
                if lo < hi {
                    v.push(tap(cx, int(k), lo - b0, hi - b0));
                }
            }
            v
        }
    };
    let row = match input {
        // The copy holds zeros for rows outside the image.
        Input::Rows { .. } => taps,
        _ => vec![
            let_(&ih, s.oh.clone() * int(c.sh) + var(&khv) * int(c.dh) - ints(c.pt)),
            if_(var(&ih).in_range(int(0), int(c.h)), taps, vec![]),
        ],
    };
    let oh = if rows == 1 { s.oh.clone() } else { s.oh.clone() + var(&r2) };
    let store = c.y.store(
        &[s.n.clone(), s.oc0.clone() + var(&o2), oh, b.clone() + var(&j2)],
        acc.load(&[at_row(&r2, &o2), var(&j2)]),
    );
    let fill = acc.store(&[at_row(&r0, &o0), var(&j0)], init(&o0));
    vec![
        acc.alloc(),
        simple_loop(
            LoopKind::Unroll,
            &o0,
            c.ocb,
            per_row(&r0, vec![simple_loop(lanes, &j0, len, vec![fill])]),
        ),
        simple_loop(LoopKind::Serial, &ci, c.icg, vec![simple_loop(tap_kind, &khv, c.kh, row)]),
        simple_loop(
            LoopKind::Unroll,
            &o2,
            c.ocb,
            per_row(&r2, vec![simple_loop(lanes, &j2, len, vec![store])]),
        ),
    ]
}

/// Columns of the padded row copy: every column the taps of an output row read, from input
/// column `-pl`.
fn copy_width(c: &Conv, ow: usize) -> usize {
    (ow - 1) * c.sw + (c.kw - 1) * c.dw + 1
}

/// The type of a padded copy of `rows` rows: `[icg, rows, sw, ceil(copy_width / sw)]`, its
/// columns split by phase (column `q` of the padded row at `[.., q % sw, q / sw]`), so that a
/// strided convolution's tap reads consecutive elements for consecutive output columns.
fn copy_type(c: &Conv, rows: usize, ow: usize) -> TensorType {
    TensorType::new(c.x.ty.dtype, [c.icg, rows, c.sw, copy_width(c, ow).div_ceil(c.sw)])
}

/// Fills `buf[ci, r, p, q]` (the layout of [`copy_type`]) with `x[n, cbase + ci, ih, q*sw + p - pl]`
/// for `ih = first + r*step`, zero where that is outside the image: the zero-padded copy the
/// padded layouts read.
fn copy_padded(
    cx: &mut Cx,
    c: &Conv,
    buf: &Buf,
    (n, cbase): (E, E),
    (first, step, rows): (E, usize, usize),
) -> Stmt {
    let per_phase = buf.shape()[3];
    let (ci, r, ih) = (cx.fresh("ci"), cx.fresh("r"), cx.fresh("ih"));
    let zeros = |cx: &mut Cx, p: usize, lo: usize, hi: usize| -> Vec<Stmt> {
        if lo >= hi {
            return vec![];
        }
        let q = cx.fresh("q");
        let at = [var(&ci), var(&r), int(p), var(&q)];
        vec![loop_(cx.inner_kind(hi - lo), &q, int(lo), int(hi), vec![buf.store(&at, zero(c.x.ty.dtype))])]
    };
    let mut inside = Vec::new();
    let mut outside = Vec::new();
    for p in 0..c.sw {
        let (lo, hi) = valid_range(per_phase, c.sw, p as i64 - c.pl, c.wd);
        let q = cx.fresh("q");
        let column = var(&q) * int(c.sw) + ints(p as i64 - c.pl);
        let copy = loop_(
            cx.inner_kind(hi - lo),
            &q,
            int(lo),
            int(hi),
            vec![buf.store(
                &[var(&ci), var(&r), int(p), var(&q)],
                c.x.load(&[n.clone(), cbase.clone() + var(&ci), var(&ih), column]),
            )],
        );
        inside.extend([zeros(cx, p, 0, lo), vec![copy], zeros(cx, p, hi, per_phase)].concat());
        outside.extend(zeros(cx, p, 0, per_phase));
    }
    simple_loop(
        LoopKind::Serial,
        &ci,
        c.icg,
        vec![simple_loop(
            LoopKind::Serial,
            &r,
            rows,
            vec![
                let_(&ih, first + var(&r) * int(step)),
                if_(var(&ih).in_range(int(0), int(c.h)), inside, outside),
            ],
        )],
    )
}

/// The tiles of one output row read from a padded copy: whole tiles of `conv.ow_tile` columns
/// (of the widest power of two up to the row's width, for a row narrower than a vector); a
/// remainder that is a narrower vector (8 or 4 columns) is its own tile, any other remainder a
/// full tile overlapping the one before.
fn padded_row(cx: &mut Cx, c: &Conv, site: &Site, ow: usize, input: Input) -> Vec<Stmt> {
    let t = row_tile(cx, ow);
    let body = |cx: &mut Cx, b: E, len: usize| tile(cx, c, site, b, len, input);
    let rem = ow % t;
    if rem == 0 || (rem >= 4 && rem.is_power_of_two()) {
        tiles(cx, ow, t, LoopKind::Serial, "wt", body)
    } else {
        overlapping_tiles(cx, ow, t, LoopKind::Serial, "wt", body)
    }
}

/// Columns per register tile over `width` output columns: `conv.ow_tile`, or for a narrower
/// row whole vectors of it (a 27-wide row under 32-column tiles: 16, not one vector and 11
/// scalar columns), or for a row narrower than a vector the widest power of two that fits
/// (8, 4 columns), not one tile of an odd width.
fn row_tile(cx: &Cx, width: usize) -> usize {
    let (t, lanes) = (cx.knob(Knob::ConvOwTile).min(width), cx.lanes());
    if t >= lanes {
        t - t % lanes
    } else if t > 4 && !t.is_power_of_two() {
        1 << t.ilog2()
    } else {
        t
    }
}

/// The padded-rows layout (see the module's comment) of an ungrouped convolution.
fn padded_rows(cx: &mut Cx, c: &Conv, rows_ty: TensorType, threads: bool) -> Vec<Stmt> {
    let [n, oc, oh, ow] = dims4(c.y);
    let blocks = oc / c.ocb;
    // Blocks per iteration: as many as leave the cores enough iterations, so each copy serves
    // as many blocks as it can.
    let want = if threads { cx.cores() * cx.per_core() } else { 1 };
    let per =
        (1..=blocks).rev().find(|&b| blocks.is_multiple_of(b) && n * (blocks / b) * oh >= want).unwrap_or(1);
    let nest = outer(cx, &[n, blocks / per, oh], threads, "i");
    let (ni, chunk, ohi) = (nest.idx[0].clone(), nest.idx[1].clone(), nest.idx[2].clone());
    let rows = Buf::new(cx.fresh("rows"), rows_ty);
    // rows[ci, r, q] = x[n, ci, oh*sh + r*dh - pt, q - pl].
    let first = ohi.clone() * int(c.sh) - ints(c.pt);
    let fill = copy_padded(cx, c, &rows, (ni.clone(), int(0)), (first, c.dh, c.kh));
    let (bi, oc0) = (cx.fresh("b"), cx.fresh("oc0"));
    let site = Site { n: ni, oc0: var(&oc0), cbase: int(0), oh: ohi, rows: 1 };
    let row = padded_row(cx, c, &site, ow, Input::Rows { buf: &rows, plane: false });
    let block = [vec![let_(&oc0, (chunk.clone() * int(per) + var(&bi)) * int(c.ocb))], row].concat();
    nest.wrap(vec![rows.alloc(), fill, simple_loop(LoopKind::Serial, &bi, per, block)])
}

/// Rows of the padded plane copy: every input row the taps of all output rows read, from input
/// row `-pt`.
fn copy_height(c: &Conv, oh: usize) -> usize {
    (oh - 1) * c.sh + (c.kh - 1) * c.dh + 1
}

/// The padded-planes layout (see the module's comment) of a grouped convolution.
fn padded_planes(cx: &mut Cx, c: &Conv, ocg: usize, planes_ty: TensorType, threads: bool) -> Vec<Stmt> {
    let [n, oc, oh, ow] = dims4(c.y);
    let nest = outer(cx, &[n, oc / c.ocb], threads, "i");
    let (ni, ob) = (nest.idx[0].clone(), nest.idx[1].clone());
    let (oc0, cbase) = (cx.fresh("oc0"), cx.fresh("cb"));
    let planes = Buf::new(cx.fresh("planes"), planes_ty);
    // planes[ci, r, q] = x[n, cb + ci, r - pt, q - pl].
    let fill = copy_padded(cx, c, &planes, (ni.clone(), var(&cbase)), (ints(-c.pt), 1, copy_height(c, oh)));
    let input = Input::Rows { buf: &planes, plane: true };
    let rows = plane_rows(cx, c, ow);
    let blocks = tiles(cx, oh, rows, LoopKind::Serial, "oh", |cx, first, rows| {
        let site = Site { n: ni.clone(), oc0: var(&oc0), cbase: var(&cbase), oh: first, rows };
        padded_row(cx, c, &site, ow, input)
    });
    let head = vec![
        let_(&oc0, ob * int(c.ocb)),
        let_(&cbase, var(&oc0) / int(ocg) * int(c.icg)),
        planes.alloc(),
        fill,
    ];
    nest.wrap([head, blocks].concat())
}

/// Output rows per register tile over a plane copy: `conv.oh_block`, as far as the tile's
/// accumulators (rows x channels x vectors of a `conv.ow_tile` tile) stay within 16 vectors.
fn plane_rows(cx: &Cx, c: &Conv, ow: usize) -> usize {
    let vectors = cx.knob(Knob::ConvOwTile).min(ow).div_ceil(cx.lanes()).max(1);
    cx.knob(Knob::ConvOhBlock).min(16 / (c.ocb * vectors)).max(1)
}

/// The four extents of an NCHW (or OIHW) tensor.
pub fn dims4(b: &Buf) -> [usize; 4] {
    <[usize; 4]>::try_from(b.shape()).expect("conv and pool operands have rank 4")
}

#[cfg(test)]
mod tests {
    use super::valid_range;
    use crate::testing::knobs_match_reference;
    use ekb_ir::l1::print::print;

    #[test]
    fn grouped_convolutions_over_plane_copies_tile_several_rows() {
        // Over the padded planes (rows wider than `conv.flat_max_ow`, here 0): a depthwise 3x3
        // of 7 rows (a block of 4, then of 3) with a bias and a fused relu, a strided one with
        // uneven padding, a dilated 5x5 with a depth multiplier of 2, and a grouped one of two
        // channels per block (at most 16 accumulators: fewer rows); integers too.
        let g = "graph g(x: f32[2,4,7,9], u: f32[1,4,11,10], q: i8[1,4,6,7]) \
                 -> (y: f32[2,4,7,9], s: f32[1,4,6,5], d: f32[1,8,7,6], e: f32[2,8,7,9], t: i32[1,4,6,7]) {
  param w: f32[4,1,3,3] = kaiming_uniform
  param b: f32[4] = uniform(-1, 1)
  param w3: f32[8,1,5,5] = kaiming_uniform
  param w4: f32[8,2,3,3] = kaiming_uniform
  param w5: i8[4,1,3,3] = randint(-8, 8)
  %0 = conv2d(x, w, b, pad=[1,1,1,1], groups=4)
  %y = relu(%0)
  %s = conv2d(u, w, stride=[2,2], pad=[1,0,1,1], groups=4)
  %d = conv2d(u, w3, pad=[2,2,2,2], dilation=[2,2], groups=4)
  %e = conv2d(x, w4, pad=[1,1,1,1], groups=2)
  %t = conv2d(q, w5, pad=[1,1,1,1], groups=4)
  fuse %0, %y
  return %y, %s, %d, %e, %t
}
";
        for rows in [1, 2, 4, 16] {
            let set = [
                ("conv.flat_max_ow", 0),
                ("conv.oh_block", rows),
                ("conv.oc_block", 2),
                ("threads.min_work", 1),
            ];
            let m = knobs_match_reference(g, &set, "rk3588");
            let text = print(&m);
            assert!(text.contains("alloc planes"), "{text}");
            // Each tile's accumulator holds its rows x channels x columns.
            let unrolled_taps = text.contains("unroll kh");
            assert_eq!(unrolled_taps, rows > 1, "{text}");
        }
    }

    #[test]
    fn rows_narrower_than_the_tile_take_whole_vectors() {
        // 11-wide rows under 16-column tiles on NEON (4 lanes): tiles of 8 columns, never one
        // of 11 (two vectors and 3 scalar columns) over the row copies, nor of 9 over the
        // unpadded interior between the border columns.
        let g = "graph g(x: f32[1,8,11,11]) -> (y: f32[1,8,11,11], z: f32[1,8,9,9]) {
  param w: f32[8,8,3,3] = kaiming_uniform
  %y = conv2d(x, w, pad=[1,1,1,1])
  %z = conv2d(x, w)
  return %y, %z
}
";
        for copies in [1, 1 << 20] {
            let set = [
                ("conv.flat_max_ow", 0),
                ("conv.ow_tile", 16),
                ("conv.copy_min_taps", copies),
                ("conv.pack_taps_max_pixels", 0),
            ];
            let text = print(&knobs_match_reference(g, &set, "rk3588"));
            // The register tiles' accumulators: `alloc acc: f32[CHANNELS,COLUMNS] local`.
            let extents: Vec<usize> = text
                .lines()
                .filter_map(|l| l.trim().strip_prefix("alloc acc"))
                .filter_map(|l| l.split(',').nth(1)?.split(']').next()?.parse().ok())
                .collect();
            // Border tiles (unpadded rows) are one column each, with each tap's literal range.
            let wide: Vec<usize> = extents.into_iter().filter(|&e| e > 1).collect();
            assert!(!wide.is_empty() && wide.iter().all(|e| e % 4 == 0), "{wide:?}\n{text}");
        }
    }

    #[test]
    fn valid_output_ranges_match_brute_force() {
        for out in 0..7 {
            for stride in 1..4 {
                for offset in -5..6 {
                    for size in 1..8 {
                        let ok: Vec<usize> = (0..out)
                            .filter(|&o| (0..size as i64).contains(&(o as i64 * stride as i64 + offset)))
                            .collect();
                        let (lo, hi) = valid_range(out, stride, offset, size);
                        let got: Vec<usize> = (lo..hi).collect();
                        assert_eq!(got, ok, "out {out} stride {stride} offset {offset} size {size}");
                    }
                }
            }
        }
    }
}
