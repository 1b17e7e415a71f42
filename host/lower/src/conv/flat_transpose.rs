//! f32 transposed convolutions (ungrouped, undilated, at most 2x2 stride phases) whose phase
//! rows are narrower than `conv.flat_max_ow` (a vector by default), as products over one
//! flattened zero-padded input plane: DCGAN's 4x4 and 8x8 layers, whose phase rows of 4 and 8
//! outputs leave most lanes of the phase tiles (`crate::conv_transpose`) idle.
//!
//! With stride `s` and top padding `p`, output row `oy = s*q + a` (phase `a` of cell row `q`)
//! takes kernel rows `ky` on input rows `q + dy` for the phase's taps `(ky, dy)`
//! (`crate::conv_transpose::phase_taps`), and likewise for columns: every output phase is a
//! stride-1 convolution of the input over the grid of cells. With the input zero-padded by
//! `ty` rows and `tx` columns (the most negative offsets) and flattened with row pitch `Wp`, cell
//! `(q, r)` at column `q*Wp + r` reads tap `(dy, dx)` at `q*Wp + r + (dy + ty)*Wp + dx + tx`:
//! a shift, the same for every cell, so a vector runs over the cells of several rows at once (the
//! columns past each row's cells are computed and never stored), as in `super::flat_planes`.
//!
//! Layout: threads over `(n, chunk of output channels)`, as in `super::flat_planes`. Each
//! iteration keeps its results `res[phase, channels, Q]` in a `local` buffer and walks the input
//! channels in chunks whose padded planes fit a quarter of the stack: per chunk it copies the
//! plane into a `local` panel zeroed once, then per register tile (every phase, `mr` output
//! channels, up to `matmul.tile_cols` columns: `matmul.tile_vectors` vector accumulators in
//! all) loads the tile's partial sums, adds every channel and every phase's taps (phases, taps
//! and channels unrolled, columns vectorized) and stores them back. A tile takes every phase
//! because the taps of one input and output channel share a cache line of the weights (`[C,
//! OC, KH, KW]`): phase by phase, each line would be read once per phase (DCGAN's 8 MiB layer
//! four times). Last, each phase's cells are stored to their outputs `(s*q + a, s*r + b)`
//! (+ bias).
//!
//! What must stay true: every index is affine and provably in bounds (the panel holds the
//! largest tap offset past the last column, and no cell's tap wraps into the next row: `Wp`
//! covers the cells of a row plus the largest column offset).

use super::dims4;
use super::flat_planes::{copy_planes, zero_panel, Flat};
use crate::conv_transpose::phase_taps;
use crate::recipe::Knob;
use crate::sched::{outer, simple_loop, tiles, Cx};
use ekb_ir::l0::ConvTranspose2dAttrs;
use ekb_ir::l1::build::{f, if_, int, let_, var, Buf, E};
use ekb_ir::l1::{LoopKind, Stmt};
use ekb_ir::{DType, TensorType};

/// Most stride phases and kernel taps (each phase's taps are written out).
const MAX_PHASES: usize = 4;
const MAX_TAPS: usize = 64;

/// One output phase `(a, b)`: its taps `(ky, kx, panel offset)` and its cells.
struct Phase {
    a: usize,
    b: usize,
    taps: Vec<(usize, usize, usize)>,
    rows: usize,
    cols: usize,
}

/// The panel's geometry (a [`Flat`] of one stride-1 plane) and the phases.
struct Geometry {
    g: Flat,
    phases: Vec<Phase>,
}

fn geometry(cx: &Cx, a: &ConvTranspose2dAttrs, x: &Buf, w: &Buf, y: &Buf) -> Option<Geometry> {
    let f32s = [x.ty.dtype, w.ty.dtype, y.ty.dtype].iter().all(|&d| d == DType::F32);
    let [sh, sw] = a.stride;
    if !f32s || a.groups != 1 || a.dilation != [1, 1] || sh * sw > MAX_PHASES {
        return None;
    }
    let [n, c, h, wd] = dims4(x);
    let [_, oc, kh, kw] = dims4(w);
    let [_, _, oh, ow] = dims4(y);
    if kh * kw > MAX_TAPS {
        return None;
    }
    let (row_taps, col_taps) = (phase_taps(sh, a.pad[0], kh), phase_taps(sw, a.pad[1], kw));
    let offsets = |taps: &[Vec<(usize, i64)>]| {
        let d = taps.iter().flatten().map(|t| t.1);
        (d.clone().min().unwrap_or(0).min(0).unsigned_abs() as usize, d.max().unwrap_or(0).max(0) as usize)
    };
    let ((ty, dy_max), (tx, dx_max)) = (offsets(&row_taps), offsets(&col_taps));
    let (ch, cw) = (oh.div_ceil(sh), ow.div_ceil(sw));
    let wp = tx + wd.max(cw + dx_max);
    let hq = ty + h.max(ch + dy_max);
    let lanes = cx.lanes();
    let q = (ch * wp).next_multiple_of(lanes);
    let offset = |dy: i64, dx: i64| (dy + ty as i64) as usize * wp + (dx + tx as i64) as usize;
    let phases: Vec<Phase> = (0..sh.min(oh))
        .flat_map(|pa| (0..sw.min(ow)).map(move |pb| (pa, pb)))
        .map(|(pa, pb)| Phase {
            a: pa,
            b: pb,
            taps: row_taps[pa]
                .iter()
                .flat_map(|&(ky, dy)| col_taps[pb].iter().map(move |&(kx, dx)| (ky, kx, offset(dy, dx))))
                .collect(),
            rows: (oh - pa).div_ceil(sh),
            cols: (ow - pb).div_ceil(sw),
        })
        .collect();
    let reach = phases.iter().flat_map(|p| p.taps.iter().map(|t| t.2)).max().unwrap_or(0);
    let pw = (q + reach).max(hq * wp);
    let quarter = (cx.target.cpu.stack_bytes / 4) as usize;
    let cc = (1..=c).rev().find(|&d| c.is_multiple_of(d) && d * pw * 4 <= quarter)?;
    let nt = cx.knob(Knob::MatmulTileCols).max(lanes).next_multiple_of(lanes).min(q);
    // Every phase in each tile, so that a tile reads all taps of a weight's cache line at once.
    let mr = (cx.knob(Knob::MatmulTileVectors) / (nt / lanes) / phases.len()).clamp(1, oc);
    // Chunks of whole tiles whose results fit a quarter of the stack: the fewest that give the
    // cores enough iterations, else the most.
    let whole = oc / mr;
    let want = if cx.wants_threads(work(n, oc, oh, ow, c, kh * kw / (sh * sw))) {
        (cx.cores() * cx.per_core()).div_ceil(n)
    } else {
        1
    };
    let fitting: Vec<usize> = (1..=whole)
        .filter(|&d| whole.is_multiple_of(d) && (whole / d * mr + oc % mr) * phases.len() * q * 4 <= quarter)
        .collect();
    let chunks = fitting.iter().copied().find(|&d| d >= want).or(fitting.last().copied())?;
    let ocs = whole / chunks * mr;
    let g = Flat {
        c,
        groups: 1,
        oc,
        kh,
        kw,
        dh: 1,
        dw: 1,
        h,
        wd,
        oh: ch,
        ow: cw,
        sh: 1,
        sw: 1,
        pt: ty,
        pl: tx,
        wp,
        hq,
        q,
        pw,
        cc,
        ocs,
        mr,
        nt,
        direct: false,
    };
    Some(Geometry { g, phases })
}

/// Multiply-adds (times two) of a transposed convolution of `taps` taps per output on average.
fn work(n: usize, oc: usize, oh: usize, ow: usize, c: usize, taps: usize) -> usize {
    2 * n * oc * oh * ow * c * taps.max(1)
}

/// Whether `y = conv_transpose2d(x, w)` takes this layout: phase rows narrower than
/// `conv.flat_max_ow` and planes and results that fit the stack.
pub(crate) fn applies(cx: &Cx, a: &ConvTranspose2dAttrs, x: &Buf, w: &Buf, y: &Buf) -> bool {
    dims4(y)[3].div_ceil(a.stride[1]) < cx.knob(Knob::ConvFlatMaxOw) && geometry(cx, a, x, w, y).is_some()
}

/// `y = conv_transpose2d(x, w, bias)` where [`applies`] holds.
pub(crate) fn conv_transpose2d(
    cx: &mut Cx,
    a: &ConvTranspose2dAttrs,
    x: &Buf,
    w: &Buf,
    bias: Option<&Buf>,
    y: &Buf,
) -> Vec<Stmt> {
    let Geometry { g, phases } = geometry(cx, a, x, w, y).expect("checked by `applies`");
    let [n, _, oh, ow] = dims4(y);
    let [sh, sw] = a.stride;
    let chunks = g.oc / g.mr / (g.ocs / g.mr);
    let threads = cx.wants_threads(work(n, g.oc, oh, ow, g.c, g.kh * g.kw / (sh * sw)));
    let nest = outer(cx, &[n, chunks], threads, "i");
    let (ni, ci) = (nest.idx[0].clone(), nest.idx[1].clone());
    let left = g.oc % g.mr;
    let res = Buf::new(cx.fresh("res"), TensorType::new(DType::F32, [phases.len(), g.ocs + left, g.q]));
    let panel = Buf::new(cx.fresh("panel"), TensorType::new(DType::F32, [g.cc, 1, g.pw]));
    let (m_first, c0) = (cx.fresh("m0"), cx.fresh("c0"));
    let (p, o, j) = (cx.fresh("p"), cx.fresh("o"), cx.fresh("j"));
    let zero_res =
        simple_loop(cx.inner_kind(g.q), &j, g.q, vec![res.store(&[var(&p), var(&o), var(&j)], f(0.0))]);
    let mut body = vec![
        let_(&m_first, ci.clone() * int(g.ocs)),
        res.alloc(),
        simple_loop(
            LoopKind::Serial,
            &p,
            phases.len(),
            vec![simple_loop(LoopKind::Serial, &o, g.ocs + left, vec![zero_res])],
        ),
        panel.alloc(),
        zero_panel(cx, &g, &panel),
    ];
    let chunk = cx.fresh("cc");
    let mut per_chunk = vec![let_(&c0, var(&chunk) * int(g.cc))];
    per_chunk.push(copy_planes(cx, &g, x, &panel, (&ni, &var(&c0))));
    let site =
        Site { g: &g, phases: &phases, w, res: &res, panel: &panel, m_first: &var(&m_first), c0: &var(&c0) };
    per_chunk.extend(tiles(cx, g.ocs, g.mr, LoopKind::Serial, "t", |cx, r0, mr| {
        channel_tile(cx, &site, (r0, mr))
    }));
    if left > 0 {
        let tail = channel_tile(cx, &site, (int(g.ocs), left));
        per_chunk.push(if_(ci.clone().eq(int(chunks - 1)), tail, vec![]));
    }
    body.push(simple_loop(LoopKind::Serial, &chunk, g.c / g.cc, per_chunk));

    // Each phase's cells to their outputs (+ bias); the leftover channels by the last chunk.
    // Cell `pix` of a phase of `cols` cells a row is `(pix / cols, pix % cols)`.
    let store_phase = |cx: &mut Cx, pi: usize, phase: &Phase, r0: usize, count: usize| {
        let (o, pix) = (cx.fresh("o"), cx.fresh("pix"));
        let (cq, cr) = (var(&pix) / int(phase.cols), var(&pix) % int(phase.cols));
        let m = var(&m_first) + int(r0) + var(&o);
        let mut value = res.load(&[int(pi), int(r0) + var(&o), cq.clone() * int(g.wp) + cr.clone()]);
        if let Some(b) = bias {
            value = value + b.load(std::slice::from_ref(&m));
        }
        let at = [ni.clone(), m, cq * int(sh) + int(phase.a), cr * int(sw) + int(phase.b)];
        let cells = phase.rows * phase.cols;
        simple_loop(
            LoopKind::Serial,
            &o,
            count,
            vec![simple_loop(cx.inner_kind(cells), &pix, cells, vec![y.store(&at, value)])],
        )
    };
    for (pi, phase) in phases.iter().enumerate() {
        body.push(store_phase(cx, pi, phase, 0, g.ocs));
        if left > 0 {
            let tail = store_phase(cx, pi, phase, g.ocs, left);
            body.push(if_(ci.clone().eq(int(chunks - 1)), vec![tail], vec![]));
        }
    }
    nest.wrap(body)
}

/// What the register tiles of an iteration share.
struct Site<'a> {
    g: &'a Flat,
    phases: &'a [Phase],
    w: &'a Buf,
    res: &'a Buf,
    panel: &'a Buf,
    /// The iteration's first output channel, and the chunk's first input channel.
    m_first: &'a E,
    c0: &'a E,
}

/// Output channels `r0..r0+mr` of the iteration, every phase and column tile: partial sums in,
/// the chunk's channels and every phase's taps added, partial sums out.
fn channel_tile(cx: &mut Cx, s: &Site, (r0, mr): (E, usize)) -> Vec<Stmt> {
    let g = s.g;
    let np = s.phases.len();
    tiles(cx, g.q, g.nt, LoopKind::Serial, "u", |cx, j0, nt| {
        let acc = Buf::new(cx.fresh("acc"), TensorType::new(DType::F32, [np, mr, nt]));
        let (pa, ra, ja) = (cx.fresh("p"), cx.fresh("r"), cx.fresh("j"));
        let (pc, rc, jc, c) = (cx.fresh("p"), cx.fresh("r"), cx.fresh("j"), cx.fresh("c"));
        let lanes = cx.inner_kind(nt);
        let rows = |r: &str, body: Vec<Stmt>| simple_loop(LoopKind::Unroll, r, mr, body);
        let cols = |jv: &str, body: Vec<Stmt>| simple_loop(lanes, jv, nt, body);
        let each = |pv: &str, r: &str, jv: &str, body: Stmt| {
            simple_loop(LoopKind::Unroll, pv, np, vec![rows(r, vec![cols(jv, vec![body])])])
        };
        let res_at = |pv: &str, r: &str, jv: &str| [var(pv), r0.clone() + var(r), j0.clone() + var(jv)];
        let acc_at = |pv: &str, r: &str, jv: &str| [var(pv), var(r), var(jv)];
        let mut taps = Vec::new();
        for (pi, phase) in s.phases.iter().enumerate() {
            for &(ky, kx, off) in &phase.taps {
                let (rb, jb, av) = (cx.fresh("r"), cx.fresh("j"), cx.fresh("a"));
                let w_at =
                    [s.c0.clone() + var(&c), s.m_first.clone() + r0.clone() + var(&rb), int(ky), int(kx)];
                let x_at = [var(&c), int(0), j0.clone() + var(&jb) + int(off)];
                let at = [int(pi), var(&rb), var(&jb)];
                let update = acc.store(&at, acc.load(&at) + var(&av) * s.panel.load(&x_at));
                taps.push(rows(&rb, vec![let_(&av, s.w.load(&w_at)), cols(&jb, vec![update])]));
            }
        }
        vec![
            acc.alloc(),
            each(&pa, &ra, &ja, acc.store(&acc_at(&pa, &ra, &ja), s.res.load(&res_at(&pa, &ra, &ja)))),
            simple_loop(LoopKind::Serial, &c, g.cc, taps),
            each(&pc, &rc, &jc, s.res.store(&res_at(&pc, &rc, &jc), acc.load(&acc_at(&pc, &rc, &jc)))),
        ]
    })
}

#[cfg(test)]
mod tests {
    use crate::testing::knobs_match_reference;
    use ekb_ir::l1::print::print;

    #[test]
    fn narrow_transposed_convolutions_over_a_flattened_plane_match_the_reference() {
        // DCGAN's forms, small: a 4x4 kernel of stride 1 on a 1x1 input (a product), 4x4 of
        // stride 2 with padding and a bias and fused relu; then 3x3 of stride 2 with output
        // padding (phases of 2 and 1 taps a side, uneven phase rows), a 5x2 kernel of stride 2x1
        // with uneven padding, and 13 output channels no register tile divides; a chunked
        // panel on a small stack (rk3588's: 256 KiB) with 600 input channels.
        let g = "graph g(z: f32[1,10,1,1], x: f32[2,12,4,3], u: f32[1,600,3,3]) \
                 -> (a: f32[1,8,4,4], y: f32[2,13,8,6], s: f32[2,5,8,6], t: f32[2,7,9,3], v: f32[1,4,6,6]) {
  param w0: f32[10,8,4,4] = kaiming_uniform
  param w: f32[12,13,4,4] = kaiming_uniform
  param b: f32[13] = uniform(-1, 1)
  param w3: f32[12,5,3,3] = kaiming_uniform
  param w5: f32[12,7,5,2] = kaiming_uniform
  param wu: f32[600,4,4,4] = kaiming_uniform
  %a = conv_transpose2d(z, w0)
  %0 = conv_transpose2d(x, w, b, stride=[2,2], pad=[1,1,1,1])
  %y = relu(%0)
  %s = conv_transpose2d(x, w3, stride=[2,2], pad=[1,1,1,1], output_padding=[1,1])
  %t = conv_transpose2d(x, w5, stride=[2,1], pad=[2,0,1,1], output_padding=[1,0])
  %v = conv_transpose2d(u, wu, stride=[2,2], pad=[1,1,1,1])
  fuse %0, %y
  return %a, %y, %s, %t, %v
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
            let flat: Vec<bool> =
                m.kernels.iter().map(|k| format!("{:?}", k.body).contains("name: \"panel\"")).collect();
            assert_eq!(flat, [true; 5], "{}", print(&m));
            // The 600 channels' panel (600 x 28 floats) passes a quarter of the stack: chunks of
            // 300 channels.
            assert!(print(&m).contains("alloc panel: f32[300,1,28] local"), "{}", print(&m));
        }
        // `conv.flat_max_ow = 0`: the phase tiles, as for wide rows.
        let m = knobs_match_reference(g, &[("conv.flat_max_ow", 0)], "rk3588");
        assert!(
            m.kernels.iter().all(|k| !format!("{:?}", k.body).contains("name: \"panel\"")),
            "{}",
            print(&m)
        );
    }
}
