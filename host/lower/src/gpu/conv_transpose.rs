//! `conv_transpose2d` on a GPU by cells: ungrouped, undilated f32 transposed convolutions whose
//! kernel is not simply the stride (that case is a tiled product, [`super::conv`]).
//!
//! With stride `s` and top padding `p`, output row `oy = s*q + a` (phase `a < s` of cell row
//! `q`) takes the kernel rows `ky = (a + p) % s + j*s < KH` on input rows `q + (a + p) / s - j`:
//! every phase of a cell reads input rows at small fixed offsets from `q`, and likewise for
//! columns. One thread computes a cell of every phase (`sh * sw` outputs) for
//! `gpu.conv_transpose_oc` consecutive output channels and `gpu.conv_transpose_rows` cell rows
//! stacked vertically; the phases, taps and offsets are literals, so per input channel the
//! thread loads each weight it uses once (`let`s, the same address across the warp) and each
//! input position once (consecutive threads take consecutive cell columns, so those loads
//! coalesce), then adds every product into its accumulators. No thread diverges on the phase
//! of its output, and no tap is tried that does not exist; an input position outside the image
//! (or an output past the edge, for the last cells) is skipped under a guard on a `let`, which
//! is also what lets the verifier prove every index in bounds.
//!
//! Where the accumulators (`rows * sh * sw * oc`) would pass 32 registers the channels, then
//! the rows, are reduced; likewise while the grid has fewer threads than
//! `gpu.conv_transpose_min_threads` per compute unit (a cell's work is serial over the input
//! channels, so few cells leave a large GPU waiting on loads). A kernel of more than 32 phases
//! or 96 taps keeps the per-element form (one thread per output,
//! `crate::conv_transpose::output_element`), as do `gpu.conv_transpose_oc = 0` and cells too
//! few for that minimum even one channel and one row each.

use super::{Gpu, Grid1d};
use crate::conv::dims4;
use crate::conv_transpose::phase_taps;
use crate::recipe::Knob;
use ekb_ir::l0::ConvTranspose2dAttrs;
use ekb_ir::l1::build::{f, if_, int, ints, let_, loop_, var, Buf, Names, E};
use ekb_ir::l1::{LoopKind, Stmt};
use ekb_ir::{DType, TensorType};
use std::collections::{BTreeSet, HashMap};

/// Most accumulators per thread, and most weights a thread loads per input channel.
const MAX_ACC: usize = 32;
const MAX_WEIGHTS: usize = 96;

/// `y = conv_transpose2d(x, w[, bias])` by cells (see the module header); `None`, with no name
/// taken from `names`, where the attributes or sizes leave it to the per-element form.
pub fn cells(
    gpu: &Gpu,
    names: &mut Names,
    a: &ConvTranspose2dAttrs,
    x: &Buf,
    w: &Buf,
    bias: Option<&Buf>,
    y: &Buf,
) -> Option<Vec<Stmt>> {
    let f32s = [x.ty.dtype, w.ty.dtype, y.ty.dtype].iter().all(|&d| d == DType::F32);
    let wanted = gpu.knobs.get(Knob::GpuConvTransposeOc);
    if wanted == 0 || a.groups != 1 || a.dilation != [1, 1] || !f32s {
        return None;
    }
    let [n, c, h, wd] = dims4(x);
    let [_, oc, kh, kw] = dims4(w);
    let [_, _, oh, ow] = dims4(y);
    let [sh, sw] = a.stride;
    let phases = sh * sw;
    if phases > MAX_ACC || kh * kw > MAX_WEIGHTS {
        return None;
    }
    // Channels per thread: the largest divisor of `oc` within the knob and the caps; then rows.
    let mut r = wanted.min(oc);
    while r > 1 && (oc % r != 0 || phases * r > MAX_ACC || kh * kw * r > MAX_WEIGHTS) {
        r -= 1;
    }
    let (ch, cw) = (oh.div_ceil(sh), ow.div_ceil(sw));
    let mut rows = gpu.knobs.get(Knob::GpuConvTransposeRows).min(ch);
    while rows > 1 && rows * phases * r > MAX_ACC {
        rows /= 2;
    }
    // Fewer channels, then rows, per thread while the cells leave the GPU short of threads; a
    // thread per output where even single cells would.
    let min_threads = gpu.units * gpu.knobs.get(Knob::GpuConvTransposeMinThreads);
    let threads = |r: usize, rows: usize| n * (oc / r) * ch.div_ceil(rows) * cw;
    while threads(r, rows) < min_threads && r > 1 {
        r = (1..r).rev().find(|d| oc % d == 0).unwrap_or(1);
    }
    while threads(r, rows) < min_threads && rows > 1 {
        rows /= 2;
    }
    if threads(r, rows) < min_threads {
        return None;
    }
    let (row_taps, col_taps) = (phase_taps(sh, a.pad[0], kh), phase_taps(sw, a.pad[1], kw));
    let grid = Grid1d::new(gpu, names, &[n, oc / r, ch.div_ceil(rows), cw]);
    let [ni, ob, gy, qx] = <[E; 4]>::try_from(grid.idx.clone()).ok()?;
    let (oc0, q0, ci) = (names.fresh("oc0"), names.fresh("q0"), names.fresh("ci"));
    let last_q0 = (ch.div_ceil(rows) - 1) * rows;
    let acc = Buf::new(names.fresh("acc"), TensorType::new(DType::F32, [rows, sh, sw, r]));
    let mut body = vec![let_(&oc0, ob * int(r)), let_(&q0, gy * int(rows)), acc.alloc()];
    let each_acc = |f: &mut dyn FnMut(usize, usize, usize, usize)| {
        for k in 0..rows {
            for ay in 0..sh {
                for bx in 0..sw {
                    for o in 0..r {
                        f(k, ay, bx, o);
                    }
                }
            }
        }
    };
    each_acc(&mut |k, ay, bx, o| {
        let start = bias.map_or(f(0.0), |b| b.load1(var(&oc0) + int(o)));
        body.push(acc.store(&[int(k), int(ay), int(bx), int(o)], start));
    });

    // The input rows `q0 + ro` and columns `qx + d` the cells read, each a `let` and, where it
    // can leave the image, a guard.
    let row_offsets: BTreeSet<i64> =
        (0..rows).flat_map(|k| row_taps.iter().flatten().map(move |&(_, d)| k as i64 + d)).collect();
    let col_offsets: BTreeSet<i64> = col_taps.iter().flatten().map(|&(_, d)| d).collect();
    let mut position = |name: &str, base: &E, off: i64, last: usize, size: usize| {
        let v = names.fresh(name);
        body.push(let_(&v, base.clone() + ints(off)));
        let low = (off < 0).then(|| var(&v).ge(int(0)));
        let high = (last as i64 + off >= size as i64).then(|| var(&v).lt(int(size)));
        (off, v, low.into_iter().chain(high).reduce(E::and))
    };
    let in_rows: Vec<(i64, String, Option<E>)> =
        row_offsets.iter().map(|&ro| position("iy", &var(&q0), ro, last_q0, h)).collect();
    let in_cols: Vec<(i64, String, Option<E>)> =
        col_offsets.iter().map(|&d| position("ix", &qx, d, cw - 1, wd)).collect();

    // Per input channel: the weights as `let`s, then each input position once.
    let mut wlets = HashMap::new();
    let mut per_channel = Vec::new();
    for o in 0..r {
        for ky in 0..kh {
            for kx in 0..kw {
                let v = names.fresh(&format!("w{o}_{ky}_{kx}"));
                per_channel.push(let_(&v, w.load(&[var(&ci), var(&oc0) + int(o), int(ky), int(kx)])));
                wlets.insert((o, ky, kx), v);
            }
        }
    }
    for (ro, iy, row_guard) in &in_rows {
        for (d, ix, col_guard) in &in_cols {
            let xv = names.fresh("xv");
            let mut updates = vec![let_(&xv, x.load(&[ni.clone(), var(&ci), var(iy), var(ix)]))];
            for k in 0..rows {
                for (ay, taps_y) in row_taps.iter().enumerate() {
                    for &(ky, dy) in taps_y.iter().filter(|t| k as i64 + t.1 == *ro) {
                        for (bx, taps_x) in col_taps.iter().enumerate() {
                            for &(kx, _) in taps_x.iter().filter(|t| t.1 == *d) {
                                debug_assert_eq!(k as i64 + dy, *ro);
                                for o in 0..r {
                                    let at = [int(k), int(ay), int(bx), int(o)];
                                    let prod = var(&wlets[&(o, ky, kx)]) * var(&xv);
                                    updates.push(acc.store(&at, acc.load(&at) + prod));
                                }
                            }
                        }
                    }
                }
            }
            if updates.len() == 1 {
                continue;
            }
            let guard = [row_guard, col_guard].into_iter().flatten().cloned().reduce(E::and);
            per_channel.extend(match guard {
                Some(g) => vec![if_(g, updates, vec![])],
                None => updates,
            });
        }
    }
    body.push(loop_(LoopKind::Serial, &ci, int(0), int(c), per_channel));

    // The stores, at output rows `oy` and columns `ox` bound by `let`s; an output past the
    // edge (of the last cells) is skipped.
    let mut out_pos = |name: &str, at: E, last: usize, size: usize| {
        let v = names.fresh(name);
        body.push(let_(&v, at));
        (v.clone(), (last >= size).then(|| var(&v).lt(int(size))))
    };
    let oys: Vec<Vec<(String, Option<E>)>> = (0..rows)
        .map(|k| {
            (0..sh)
                .map(|ay| out_pos("oy", (var(&q0) + int(k)) * int(sh) + int(ay), (last_q0 + k) * sh + ay, oh))
                .collect()
        })
        .collect();
    let oxs: Vec<(String, Option<E>)> =
        (0..sw).map(|bx| out_pos("ox", qx.clone() * int(sw) + int(bx), (cw - 1) * sw + bx, ow)).collect();
    let mut stores = Vec::new();
    each_acc(&mut |k, ay, bx, o| {
        let ((oy, row_guard), (ox, col_guard)) = (&oys[k][ay], &oxs[bx]);
        let value = acc.load(&[int(k), int(ay), int(bx), int(o)]);
        let store = y.store(&[ni.clone(), var(&oc0) + int(o), var(oy), var(ox)], value);
        stores.push(match [row_guard, col_guard].into_iter().flatten().cloned().reduce(E::and) {
            Some(g) => if_(g, vec![store], vec![]),
            None => store,
        });
    });
    body.extend(stores);
    Some(vec![grid.launch(body)])
}

#[cfg(test)]
mod tests {
    use crate::testing::gpu_knobs_match_reference;
    use crate::Schedule;
    use ekb_ir::l0::check;
    use ekb_ir::l1::print::print;
    use ekb_ir::l1::verify::verify;
    use ekb_ir::{SourceFile, TargetProfile};

    #[test]
    fn transposed_convolutions_by_cells_match_the_reference_for_every_block_of_channels_and_rows() {
        // Kernel 3 of stride 2 with padding and output padding, a bias and a fused relu (the
        // LinkNet decoder's shape, small); kernel 4 of stride 2 (every phase two taps a side),
        // two images; a 5x4 kernel of stride 3x2 with uneven padding; a 2x1 kernel smaller than
        // its 3x3 stride, so some phases have no tap and keep the bias alone; 3 output channels,
        // which no block of 2 or 4 divides.
        let g = "graph g(x: f32[1,6,4,5], u: f32[2,4,3,6], v: f32[1,4,5,6]) \
                 -> (y: f32[1,4,8,10], z: f32[2,2,6,12], s: f32[1,3,16,12], r: f32[1,3,16,17]) {
  param w: f32[6,4,3,3] = kaiming_uniform
  param b: f32[4] = uniform(-1, 1)
  param w4: f32[4,2,4,4] = kaiming_uniform
  param w5: f32[4,3,5,4] = kaiming_uniform
  param w1: f32[4,3,2,1] = kaiming_uniform
  param b3: f32[3] = uniform(-1, 1)
  %0 = conv_transpose2d(x, w, b, stride=[2,2], pad=[1,1,1,1], output_padding=[1,1])
  %y = relu(%0)
  %z = conv_transpose2d(u, w4, stride=[2,2], pad=[1,1,1,1])
  %s = conv_transpose2d(v, w5, b3, stride=[3,2], pad=[2,1,0,1], output_padding=[1,0])
  %r = conv_transpose2d(v, w1, b3, stride=[3,3], output_padding=[2,1])
  fuse %0, %y
  return %y, %z, %s, %r
}
";
        for oc in [1, 2, 4] {
            for rows in [1, 2, 4] {
                let set = [
                    ("gpu.conv_transpose_oc", oc),
                    ("gpu.conv_transpose_rows", rows),
                    ("gpu.conv_transpose_min_threads", 0),
                ];
                let m = gpu_knobs_match_reference(g, &set, "h200");
                let text = print(&m);
                // Every kernel keeps its accumulators `[rows, sh, sw, channels]` in registers,
                // the rows halved past 32 of them.
                let cells = text.lines().filter(|l| l.trim_start().starts_with("alloc acc")).count();
                assert_eq!(cells, 4, "{text}");
                let rows = if rows * 4 * oc > 32 { rows / 2 } else { rows };
                assert!(text.contains(&format!("f32[{rows},2,2,{oc}] local")), "{text}");
            }
        }
        // `gpu.conv_transpose_oc = 0`: one thread per output, its one accumulator.
        let text = print(&gpu_knobs_match_reference(g, &[("gpu.conv_transpose_oc", 0)], "h200"));
        let accs: Vec<&str> = text.lines().filter(|l| l.trim_start().starts_with("alloc acc")).collect();
        assert!(accs.len() == 4 && accs.iter().all(|l| l.ends_with("f32[1] local")), "{text}");
    }

    /// The accumulators of the default lowering of one transposed convolution for `target`.
    fn accumulators(graph: &str, target: &str) -> Vec<String> {
        let g = check::load(&SourceFile::new("t.ekir", graph)).unwrap_or_else(|ds| panic!("{}", ds[0]));
        let target = TargetProfile::load(target).unwrap();
        let m = crate::lower_gpu(&g, Schedule::Default, &target).unwrap_or_else(|d| panic!("{d}"));
        let errors: Vec<_> = verify(&m, Some(&target)).into_iter().filter(|d| d.is_error()).collect();
        assert!(errors.is_empty(), "{errors:?}");
        let text = print(&m);
        text.lines()
            .filter(|l| l.trim_start().starts_with("alloc acc"))
            .map(|l| l.trim().to_string())
            .collect()
    }

    #[test]
    fn cells_shrink_towards_the_threads_the_gpu_needs_else_one_thread_per_output() {
        // LinkNet's decoder: 128 channels of 16x32 cells, 65536 in all. On an H200 (132 SMs, at
        // least 256 threads each) one channel and one cell row per thread; on PoCL (2 compute
        // units) the default 2 channels and 2 rows.
        let linknet = "graph g(x: f32[1,128,16,32]) -> (y: f32[1,128,32,64]) {
  param w: f32[128,128,3,3] = kaiming_uniform
  %y = conv_transpose2d(x, w, stride=[2,2], pad=[1,1,1,1], output_padding=[1,1])
  return %y
}
";
        assert_eq!(accumulators(linknet, "h200"), ["alloc acc: f32[1,2,2,1] local"]);
        assert_eq!(accumulators(linknet, "pocl"), ["alloc acc: f32[2,2,2,2] local"]);
        // DCGAN's 4x4 layer: 64 channels of 16x16 cells, 16384, too few for an H200 even one
        // each: one thread per output there; PoCL keeps the cells.
        let dcgan = "graph g(x: f32[1,128,16,16]) -> (y: f32[1,64,32,32]) {
  param w: f32[128,64,4,4] = normal(0.0, 0.02)
  %y = conv_transpose2d(x, w, stride=[2,2], pad=[1,1,1,1])
  return %y
}
";
        assert_eq!(accumulators(dcgan, "h200"), ["alloc acc: f32[1] local"]);
        assert_eq!(accumulators(dcgan, "pocl"), ["alloc acc: f32[2,2,2,2] local"]);
    }
}
