//! Normalisations on a GPU, one block per normalised row (`layer_norm`, `rms_norm`) or per
//! (image, group) (`group_norm`): the block's threads take strided shares of the row, and each
//! pass's sum is a shared-memory tree ([`Block`]). The passes are the CPU's: the mean, the biased
//! variance of `x - mean` (`rms_norm`: the mean of `x^2`), then every thread writes its share of
//! `(x - mean) * (1 / sqrt(var + eps)) * w + b`. Results equal the CPU's up to the order of the
//! additions.
//!
//! The naive GPU schedule keeps [`group_norm_per_thread`]: one thread per (image, group) running
//! the CPU's naive passes. The naive nest's channel index `group * C/G + c` is one the generic
//! binding cannot prove disjoint across groups; here disjointness holds by construction.

use super::reduce::Block;
use super::{barrier, launch, shared, unflatten, Gpu, Grid1d};
use crate::sched::Cx;
use crate::Schedule;
use ekb_ir::l1::build::{f, int, let_, var, Buf, Names, E};
use ekb_ir::l1::Stmt;
use ekb_ir::{DType, TargetProfile, TensorType};

/// One block's row: `n` elements, `at(k)` the index of element `k` in `x` and `y`,
/// `affine(k, normed)` the output value; `centred` for the mean's pass (not `rms_norm`).
struct Row<'a> {
    n: usize,
    centred: bool,
    eps: f64,
    x: &'a Buf,
    y: &'a Buf,
    at: &'a dyn Fn(E) -> Vec<E>,
    affine: &'a dyn Fn(E, E) -> E,
}

/// The passes over `row`: the statements after the block's `shared` allocation.
fn passes(b: &Block, names: &mut Names, row: &Row) -> Vec<Stmt> {
    let Row { n, centred, eps, x, y, at, affine } = *row;
    let acc = Buf::new(names.fresh("acc"), TensorType::new(DType::F32, [1]));
    let a0 = || acc.load1(int(0));
    let (mean, scale) = (names.fresh("mean"), names.fresh("scale"));
    let mut body = vec![acc.alloc(), acc.store1(int(0), f(0.0))];
    let centre = |v: E| if centred { v - var(&mean) } else { v };
    if centred {
        body.push(b.strided(names, n, |k| vec![acc.store1(int(0), a0() + x.load(&at(k)))]));
        body.extend(b.tree(a0(), |p, q| p + q));
        body.push(let_(&mean, b.part.load1(int(0)) / f(n as f64)));
        // Every thread has read the sum before `part` is reused.
        body.push(barrier());
        body.push(acc.store1(int(0), f(0.0)));
    }
    let d = names.fresh("d");
    body.push(b.strided(names, n, |k| {
        vec![let_(&d, centre(x.load(&at(k)))), acc.store1(int(0), a0() + var(&d) * var(&d))]
    }));
    body.extend(b.tree(a0(), |p, q| p + q));
    body.push(let_(&scale, f(1.0) / (b.part.load1(int(0)) / f(n as f64) + f(eps)).sqrt()));
    body.push(b.strided(names, n, |k| {
        let normed = centre(x.load(&at(k.clone()))) * var(&scale);
        vec![y.store(&at(k.clone()), affine(k, normed))]
    }));
    body
}

/// `layer_norm(x, w, b)` when `b` is given, else `rms_norm(x, w)`, over the trailing `w.rank`
/// dims: one block per row.
pub fn layer_norm(
    gpu: &Gpu,
    mut names: Names,
    eps: f64,
    x: &Buf,
    w: &Buf,
    bias: Option<&Buf>,
    y: &Buf,
) -> Vec<Stmt> {
    let shape = x.shape();
    let (lead, inner) = shape.split_at(shape.len() - w.rank());
    let (rows, n): (usize, usize) = (lead.iter().product(), inner.iter().product());
    let row = names.fresh("row");
    let b = Block::new(&mut names, gpu.block_coop(rows, n), DType::F32);
    let lead_idx = unflatten(&var(&row), lead);
    let at = |k: E| [lead_idx.clone(), unflatten(&k, inner)].concat();
    let affine = |k: E, normed: E| {
        let widx = unflatten(&k, inner);
        let scaled = normed * w.load(&widx);
        match bias {
            Some(bias) => scaled + bias.load(&widx),
            None => scaled,
        }
    };
    let mut body = vec![shared(&b.part)];
    let one = Row { n, centred: bias.is_some(), eps, x, y, at: &at, affine: &affine };
    body.extend(passes(&b, &mut names, &one));
    vec![launch(&[(&row, rows)], &[(&b.tx, b.size)], body)]
}

/// `y = group_norm(x, scale, bias)`: one block per (image, group), over the group's `C/G`
/// channels and every later axis.
pub fn group_norm(
    gpu: &Gpu,
    mut names: Names,
    groups: usize,
    eps: f64,
    [x, scale, bias]: [&Buf; 3],
    y: &Buf,
) -> Vec<Stmt> {
    let shape = x.shape();
    let cg = shape[1] / groups;
    let extents = [&[cg][..], &shape[2..]].concat();
    let (blocks, n) = (shape[0] * groups, extents.iter().product::<usize>());
    let grp = names.fresh("grp");
    let b = Block::new(&mut names, gpu.block_coop(blocks, n), DType::F32);
    let (img, c0) = (names.fresh("img"), names.fresh("c0"));
    let at = |k: E| {
        let t = unflatten(&k, &extents);
        [vec![var(&img), var(&c0) + t[0].clone()], t[1..].to_vec()].concat()
    };
    let affine = |k: E, normed: E| {
        let ch = [var(&c0) + unflatten(&k, &extents)[0].clone()];
        normed * scale.load(&ch) + bias.load(&ch)
    };
    let ig = unflatten(&var(&grp), &[shape[0], groups]);
    let mut body = vec![shared(&b.part), let_(&img, ig[0].clone()), let_(&c0, ig[1].clone() * int(cg))];
    let row = Row { n, centred: true, eps, x, y, at: &at, affine: &affine };
    body.extend(passes(&b, &mut names, &row));
    vec![launch(&[(&grp, blocks)], &[(&b.tx, b.size)], body)]
}

/// The naive schedule's `group_norm`: a 1-D grid with one thread per (image, group).
pub fn group_norm_per_thread(
    gpu: &Gpu,
    target: &TargetProfile,
    names: Names,
    groups: usize,
    eps: f64,
    [x, scale, bias]: [&Buf; 3],
    y: &Buf,
) -> Vec<Stmt> {
    let mut cx = Cx::new(Schedule::Naive, target, names, gpu.knobs);
    let grid = Grid1d::new(gpu, &mut cx.names, &[x.shape()[0], groups]);
    let (img, grp) = (grid.idx[0].clone(), grid.idx[1].clone());
    let body = crate::norm::group_body(&mut cx, groups, eps, [x, scale, bias, y], img, grp);
    vec![grid.launch(body)]
}

#[cfg(test)]
mod tests {
    use crate::testing::gpu_lowered_matches_reference;
    use crate::Schedule;
    use ekb_ir::l1::Stmt;

    #[test]
    fn normalisations_take_a_block_per_row_and_match_the_reference() {
        // A layer norm over two trailing dims, an RMS norm of few long rows, a group norm of
        // few large groups (their blocks grow past 256 threads).
        let g = "graph g(x: f32[6,5,24], r: f32[2,3000], v: f32[1,8,30,30]) -> (a: f32[6,5,24], b: f32[2,3000], c: f32[1,8,30,30]) {
  param w: f32[5,24] = uniform(0.5, 1.5)
  param bias: f32[5,24] = uniform(-1, 1)
  param wr: f32[3000] = uniform(0.5, 1.5)
  param s: f32[8] = uniform(0.5, 1.5)
  param sb: f32[8] = uniform(-1, 1)
  %a = layer_norm(x, w, bias, eps=1e-5)
  %b = rms_norm(r, wr, eps=1e-6)
  %c = group_norm(v, s, sb, groups=2)
  return %a, %b, %c
}
";
        for schedule in Schedule::ALL {
            let m = gpu_lowered_matches_reference(g, schedule, "h200");
            let grids: Vec<(u32, u32)> = m
                .kernels
                .iter()
                .map(|k| match k.body.first() {
                    Some(Stmt::Launch { grid, block, .. }) => (grid[0].extent, block[0].extent),
                    _ => panic!("{}: one launch", k.name),
                })
                .collect();
            if schedule == Schedule::Default {
                assert_eq!(grids, [(6, 128), (2, 1024), (2, 1024)]);
            } else {
                assert_eq!(grids.last(), Some(&(1, 32)), "naive group norm: a thread per group");
            }
        }
    }
}
