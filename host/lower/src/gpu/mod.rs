//! The GPU lowering: L0 graph -> L1 module of GPU kernels (each a single `launch`), with two
//! schedules: `default` (all four steps below) and `naive` (step 2 only for `group_norm`, every
//! other kernel through step 3: one thread per output element or row, no shared memory), the
//! baseline GPU candidates are timed against.
//!
//! The pipeline, in order:
//! 1. lower the graph with the naive schedule (`crate::lower`): it checks the graph, places
//!    every value in a module buffer, and gives one kernel per node (then copy kernels) whose
//!    outer loops run over independent output elements;
//! 2. per node, an operator-specific GPU kernel where there is one ([`reduce`]: sum, mean, max
//!    and min over trailing axes, and softmax / log_softmax over the last axis, through a
//!    shared-memory tree reduction, one block per output row; [`strip`]: reductions over middle
//!    axes and `cumsum`, whose axis the threads of a block split between them where one thread
//!    per output would leave the GPU short of threads; [`matmul`]: matmul and linear
//!    (f32, or i8 operands with i32 sums) with register tiles over double-buffered stages in
//!    shared memory (16x16 tiles for small outputs), or, for outputs of at most 4 rows per
//!    batch, one block per output element summing through a tree; [`conv`]: ungrouped conv2d
//!    as the same tiled product, its patches loaded straight from the input, and
//!    `conv_transpose2d` as one when its kernel is its stride; [`conv_transpose`]: other
//!    ungrouped transposed convolutions, one thread per cell of stride phases for a block of
//!    output channels; [`norm`]:
//!    layer_norm, rms_norm and group_norm, one block per normalised row or group; the naive
//!    schedule keeps only group_norm, one thread per group of an image, whose channel index
//!    the binding of step 3 could not prove disjoint);
//! 3. every other kernel through [`bind`]: the naive loop nest's outer loops (those whose
//!    iterations touch disjoint elements of every written buffer, which `bind` checks) become a
//!    1-D grid, one thread per iteration; a kernel of several such nests becomes one kernel per
//!    nest, run in order;
//!    (2b, default schedule: the members of each fusion group wait unbound for step 3 until
//!    `crate::fusion` has folded the group into one kernel, bound then unless its anchor had
//!    an operator-specific kernel of step 2, whose stores take the group's epilogue);
//!    (3b, default schedule: the kernels of nodes computed from parameters alone become
//!    `prepare` steps at the front of the plan, as on the CPU; groups all of whose values are
//!    such nodes are left out before step 1, their members prepared one by one);
//!    (3c, default schedule: concatenations and slices in place, as on the CPU: the kernels
//!    writing a concat's operands store into its result, and its kernels, one per operand, go:
//!    `crate::concat_in_place`; the kernels reading a slice or a transpose that keeps the last
//!    axis read its operand, or the kernels writing its operand write its result, and its copy
//!    goes: `crate::read_in_place`, `crate::write_in_place`);
//! 4. verify the module against the target (a lowering bug is an error here, not wrong numbers).
//!
//! Grouped and depthwise conv2d (direct), grouped or dilated conv_transpose2d (by stride phase
//! under the default schedule), pooling, batch_norm, argmax, movement, gather, resize,
//! casts, comparisons and elementwise operators all take step 3: one thread per output element
//! (per output row for softmax over other axes; per scanned row for a cumsum whose rows are
//! enough to fill the GPU).

mod bind;
mod conv;
mod conv_transpose;
mod matmul;
mod norm;
mod reduce;
mod strip;

use crate::reduce::norm_axis;
use crate::{plan, Knobs, Schedule};
use ekb_ir::l0::{Graph, Node, Op, ReduceKind};
use ekb_ir::l1::build::{if_, int, let_, var, Buf, Names, E};
use ekb_ir::l1::verify::verify_code;
use ekb_ir::l1::{Kernel, LaunchDim, Module, Run, Stmt};
use ekb_ir::{Diagnostic, Span, TargetProfile};
use std::collections::{HashMap, HashSet};

/// What GPU lowering reads from the target.
pub(crate) struct Gpu {
    /// Most threads per block.
    pub max_threads: usize,
    /// Threads that run in lockstep: block sizes are multiples of it where possible.
    pub simd: usize,
    /// Compute units (CUDA streaming multiprocessors), each running one block or more at once.
    pub units: usize,
    /// Static shared memory per block, in bytes.
    pub shared_bytes: u64,
    /// The recipe's knobs (the `gpu.*` ones).
    pub knobs: Knobs,
}

impl Gpu {
    /// Threads per block for a 1-D grid over `n` items: up to 256, a multiple of the SIMD width,
    /// no more than the items need.
    pub fn block_1d(&self, n: usize) -> usize {
        let want = n.div_ceil(self.simd).max(1) * self.simd;
        want.min(256).min(self.max_threads).max(1)
    }

    /// A power-of-two block size for a tree reduction over `n` items: up to 256.
    pub fn block_tree(&self, n: usize) -> usize {
        let cap = 256.min(self.max_threads);
        let mut b = 1;
        while b < n && b * 2 <= cap {
            b *= 2;
        }
        b
    }

    /// A power-of-two block size for `blocks` blocks that each cooperate on `n` items: the tree
    /// size of [`Gpu::block_tree`], or, when the blocks are too few to give every compute unit
    /// two, up to the block limit (at most 1024), so that long rows still get many threads.
    pub fn block_coop(&self, blocks: usize, n: usize) -> usize {
        let b = self.block_tree(n);
        if blocks >= 2 * self.units {
            return b;
        }
        let cap = 1024.min(self.max_threads);
        let mut b = b;
        while b < n && b * 2 <= cap {
            b *= 2;
        }
        b
    }
}

/// Lowers a checked L0 graph into GPU kernels for `target`, which must have a GPU, with
/// `schedule` (see the module header) and the target's default knobs.
pub fn lower_gpu(g: &Graph, schedule: Schedule, target: &TargetProfile) -> Result<Module, Diagnostic> {
    lower_gpu_with(g, schedule, &Knobs::for_target(target), target)
}

/// [`lower_gpu`] with the default schedule's templates reading `knobs`.
pub fn lower_gpu_with(
    g: &Graph,
    schedule: Schedule,
    knobs: &Knobs,
    target: &TargetProfile,
) -> Result<Module, Diagnostic> {
    let Some(profile) = &target.gpu else {
        return Err(Diagnostic::error(format!("target `{}` has no GPU to lower for", target.name))
            .with_hint(
                "choose a target with a GPU (`pocl`, `rk3588`, `jetson-orin`, `h200`), or use `lower`",
            ));
    };
    let gpu = Gpu {
        max_threads: profile.max_threads_per_block as usize,
        simd: profile.simd_width.max(1) as usize,
        units: profile.compute_units.max(1) as usize,
        shared_bytes: profile.shared_bytes_per_block,
        knobs: *knobs,
    };
    // Groups of values computed from parameters alone are left out: their members are
    // prepared one by one (below), where the group's kernel would run every execution.
    let lean;
    let g = match crate::lower::without_parameter_groups(g, schedule) {
        Some(without) => {
            lean = without;
            &lean
        }
        None => g,
    };
    // Step 1: buffers, checks, and one naive kernel per node (then the copies), in plan order.
    let naive = crate::lower::lower(g, Schedule::Naive, target)?;
    let storage = plan::assign(g)?;
    // The nodes computed from parameters alone (`full` and `iota` among them), whose kernels
    // are prepare steps under the default schedule: run once per binding of the parameters,
    // not in every execution (a GPU execution pays a launch for each kernel, however small).
    let prepared: HashSet<&str> = if schedule == Schedule::Default {
        crate::lower::prepared_nodes(g, &storage).1
    } else {
        HashSet::new()
    };
    // Their kernels, flagged once the groups are folded (the folding works on spans of the
    // plan as single executions; no group member is prepared).
    let mut prepare_kernels: HashSet<String> = HashSet::new();
    // Members of fusion groups (default schedule) wait for step 2b unbound: the folding needs
    // their plain nests.
    let fused = schedule == Schedule::Default && !g.groups.is_empty();
    let grouped: HashSet<&str> = if fused {
        g.groups.iter().flat_map(|f| f.nodes.iter().map(|v| v.name.as_str())).collect()
    } else {
        HashSet::new()
    };
    let mut kernels = Vec::new();
    let mut runs = Vec::new();
    let mut unbound: HashSet<String> = HashSet::new();
    // The node each kernel computes (views have none, copies are no node's).
    let node_of: HashMap<String, &Node> =
        g.nodes.iter().enumerate().map(|(i, n)| (crate::lower::kernel_name(i, n), n)).collect();
    for (k, run) in naive.kernels.iter().zip(&naive.plan) {
        // Step 2, else step 3 (now, or after step 2b for a group's members).
        let node = node_of.get(&k.name).copied();
        let special = node.filter(|node| schedule_uses_special(schedule, node)).and_then(|node| {
            let ins: Vec<Buf> = node
                .args
                .iter()
                .map(|a| Buf::new(storage.loc(&a.name), g.type_of(&a.name).expect("checked").clone()))
                .collect();
            let out = Buf::new(storage.loc(&node.name), node.ty.clone().expect("checked"));
            special(&gpu, schedule, target, node, &ins, &out, names_of(k))
        });
        let bodies = match special {
            Some(body) => vec![body],
            None if node.is_some_and(|n| grouped.contains(n.name.as_str())) => {
                unbound.insert(k.name.clone());
                vec![k.body.clone()]
            }
            None => bind::bind(&gpu, k),
        };
        let before = runs.len();
        push_bodies(&mut kernels, &mut runs, k, run, bodies);
        if node.is_some_and(|n| prepared.contains(n.name.as_str())) {
            prepare_kernels.extend(runs[before..].iter().map(|r| r.kernel.clone()));
        }
    }
    let mut m = Module { name: naive.name, buffers: naive.buffers, kernels, plan: runs, span: Span::NONE };
    // Step 2b: each fusion group folded into one kernel, which step 3 then binds (unless its
    // anchor had an operator-specific kernel).
    if fused {
        m = crate::fusion::fuse_groups(g, m, &|v| storage.loc(v).to_string(), &|n| {
            crate::lower::node_kernel(g, n)
        })?;
        let (old_kernels, old_runs) = (std::mem::take(&mut m.kernels), std::mem::take(&mut m.plan));
        for run in &old_runs {
            let k = old_kernels.iter().find(|k| k.name == run.kernel).expect("the plan names its kernels");
            let bodies = if unbound.contains(&k.name) { bind::bind(&gpu, k) } else { vec![k.body.clone()] };
            push_bodies(&mut m.kernels, &mut m.plan, k, run, bodies);
        }
    }
    // The prepare steps first: they read parameters and each other's results only, so moving
    // them ahead of the other steps keeps every dependence.
    for r in &mut m.plan {
        r.prepare = prepare_kernels.contains(&r.kernel);
    }
    let (mut plan, rest): (Vec<Run>, Vec<Run>) =
        std::mem::take(&mut m.plan).into_iter().partition(|r| r.prepare);
    plan.extend(rest);
    m.plan = plan;
    // Step 3c: concatenations and slices in place, as on the CPU (the writers of a concat's
    // operands store into their slices of its result, and the concat's kernels, one per
    // operand, go; the readers of a slice or a transpose read its operand).
    if schedule == Schedule::Default && knobs.get(crate::Knob::ConcatInPlace) == 1 {
        m = crate::concat_in_place::concat_in_place(
            g,
            m,
            &|v| storage.buffer(storage.loc(v)).to_string(),
            &|n| crate::lower::node_kernel(g, n),
        );
    }
    if schedule == Schedule::Default {
        let moves = crate::read_in_place::Moves {
            slices: knobs.get(crate::Knob::SliceInPlace) == 1,
            transposes: knobs.get(crate::Knob::TransposeInPlace) == 1,
        };
        m = crate::read_in_place::read_in_place(
            g,
            m,
            &moves,
            &|v| storage.buffer(storage.loc(v)).to_string(),
            &|n| crate::lower::node_kernel(g, n),
        );
    }
    if schedule == Schedule::Default && knobs.get(crate::Knob::TransposeInPlace) == 1 {
        m = crate::write_in_place::write_in_place(
            g,
            m,
            &|v| storage.buffer(storage.loc(v)).to_string(),
            &|n| crate::lower::node_kernel(g, n),
        );
    }
    // Step 4 (the memory budget is the verify stage's finding about the graph, not a bug here).
    if let Some(first) = verify_code(&m, Some(target)).into_iter().find(Diagnostic::is_error) {
        return Err(Diagnostic::error(format!(
            "internal error: GPU lowering of graph {} does not verify",
            g.name
        ))
        .with_note(first.to_string()));
    }
    Ok(m)
}

/// Adds kernel `k`'s `bodies` and their runs (one kernel per body, `k_0`, `k_1`, ... when
/// there are several), run with `run`'s arguments.
fn push_bodies(
    kernels: &mut Vec<Kernel>,
    runs: &mut Vec<Run>,
    k: &Kernel,
    run: &Run,
    bodies: Vec<Vec<Stmt>>,
) {
    let split = bodies.len() > 1;
    for (j, body) in bodies.into_iter().enumerate() {
        let name = if split { format!("{}_{j}", k.name) } else { k.name.clone() };
        runs.push(Run {
            kernel: name.clone(),
            args: run.args.clone(),
            span: Span::NONE,
            prepare: run.prepare,
        });
        kernels.push(Kernel { name, params: k.params.clone(), body, span: Span::NONE });
    }
}

/// Whether `schedule` gives `node` its operator-specific kernel (step 2): the naive schedule only
/// where step 3 would serialise the whole operator on one thread (`group_norm`).
fn schedule_uses_special(schedule: Schedule, node: &Node) -> bool {
    match schedule {
        Schedule::Default => true,
        Schedule::Naive => matches!(node.op, Op::GroupNorm { .. }),
    }
}

/// An operator-specific GPU kernel body for `node`, where one exists for its attributes.
fn special(
    gpu: &Gpu,
    schedule: Schedule,
    target: &TargetProfile,
    node: &Node,
    ins: &[Buf],
    out: &Buf,
    names: Names,
) -> Option<Vec<Stmt>> {
    if out.ty.numel() == 0 || ins.iter().any(|b| b.ty.numel() == 0) {
        return None;
    }
    let rank = ins.first().map_or(0, |x| x.rank());
    let trailing = |axes: &[usize]| {
        let mut sorted = axes.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        !sorted.is_empty() && sorted.iter().enumerate().all(|(i, &a)| a == rank - sorted.len() + i)
    };
    match &node.op {
        Op::Reduce { kind, axes, .. } => {
            let mut axes: Vec<usize> = axes.iter().map(|&a| norm_axis(a, rank)).collect();
            if trailing(&axes) {
                return Some(reduce::rows(gpu, names, *kind, axes.len(), &ins[0], out));
            }
            // Consecutive axes with dims after them: split between a block's threads.
            axes.sort_unstable();
            axes.dedup();
            let (first, last) = (axes[0], axes[axes.len() - 1]);
            let shape = ins[0].shape();
            let dims = [&shape[..first], &shape[first..=last], &shape[last + 1..]];
            (last - first + 1 == axes.len())
                .then(|| strip::reduce(gpu, names, *kind, dims, &ins[0], out))
                .flatten()
        }
        Op::CumSum { axis, exclusive, reverse } => {
            strip::cumsum(gpu, names, norm_axis(*axis, rank), *exclusive, *reverse, &ins[0], out)
        }
        Op::GlobalAvgPool2d => Some(reduce::rows(gpu, names, ReduceKind::Mean, 2, &ins[0], out)),
        Op::Softmax { axis, log } => {
            (norm_axis(*axis, rank) == rank - 1).then(|| reduce::softmax(gpu, names, *log, &ins[0], out))
        }
        Op::MatMul { transpose_a, transpose_b } => {
            matmul::matmul(gpu, names, *transpose_a, *transpose_b, &ins[0], &ins[1], out)
        }
        Op::Linear => matmul::linear(gpu, names, &ins[0], &ins[1], ins.get(2), out),
        Op::LayerNorm { eps } => {
            Some(norm::layer_norm(gpu, names, *eps, &ins[0], &ins[1], Some(&ins[2]), out))
        }
        Op::RmsNorm { eps } => Some(norm::layer_norm(gpu, names, *eps, &ins[0], &ins[1], None, out)),
        Op::Conv2d(a) => conv::conv2d(gpu, names, a, &ins[0], &ins[1], ins.get(2), out),
        Op::ConvTranspose2d(a) if conv::one_tap(a, &ins[0], &ins[1]) => {
            conv::conv_transpose2d(gpu, names, a, &ins[0], &ins[1], ins.get(2), out)
        }
        Op::ConvTranspose2d(a) if schedule == Schedule::Default => {
            let mut names = names;
            if let Some(body) = conv_transpose::cells(gpu, &mut names, a, &ins[0], &ins[1], ins.get(2), out) {
                return Some(body);
            }
            let mut cx = crate::sched::Cx::new(schedule, target, names, gpu.knobs);
            let grid = Grid1d::new(gpu, &mut cx.names, out.shape());
            let idx = <[_; 4]>::try_from(grid.idx.clone()).ok()?;
            let body =
                crate::conv_transpose::output_element(&mut cx, a, [&ins[0], &ins[1], out], ins.get(2), idx);
            Some(vec![grid.launch(body)])
        }
        Op::GroupNorm { groups, eps } => {
            let ins = [&ins[0], &ins[1], &ins[2]];
            Some(match schedule {
                Schedule::Default => norm::group_norm(gpu, names, *groups, *eps, ins, out),
                Schedule::Naive => norm::group_norm_per_thread(gpu, target, names, *groups, *eps, ins, out),
            })
        }
        _ => None,
    }
}

/// The names a kernel's parameters take (new names must differ).
fn names_of(k: &Kernel) -> Names {
    let mut names = Names::default();
    for p in &k.params {
        names.reserve(&p.name);
    }
    names
}

/// A 1-D grid of one thread per element of `extents` (row-major: neighbouring threads take
/// neighbouring elements, so their accesses coalesce), blocks of [`Gpu::block_1d`] threads.
struct Grid1d {
    bx: String,
    tx: String,
    gid: String,
    total: usize,
    block: usize,
    /// The element's index expressions, from `gid`.
    idx: Vec<E>,
}

impl Grid1d {
    fn new(gpu: &Gpu, names: &mut Names, extents: &[usize]) -> Grid1d {
        let (bx, tx, gid) = (names.fresh("bx"), names.fresh("tx"), names.fresh("gid"));
        let total = extents.iter().product();
        let idx = unflatten(&var(&gid), extents);
        Grid1d { bx, tx, gid, total, block: gpu.block_1d(total), idx }
    }

    /// `launch grid(bx) block(tx) { let gid = bx * B + tx; if gid < total { body } }` (no test
    /// when the blocks divide the elements).
    fn launch(self, body: Vec<Stmt>) -> Stmt {
        let mut stmts = vec![let_(&self.gid, var(&self.bx) * int(self.block) + var(&self.tx))];
        if self.total.is_multiple_of(self.block) {
            stmts.extend(body);
        } else {
            stmts.push(if_(var(&self.gid).lt(int(self.total)), body, Vec::new()));
        }
        launch(&[(&self.bx, self.total.div_ceil(self.block))], &[(&self.tx, self.block)], stmts)
    }
}

/// `launch grid(..) block(..) { body }`, dims as `(variable, extent)`.
fn launch(grid: &[(&str, usize)], block: &[(&str, usize)], body: Vec<Stmt>) -> Stmt {
    let dims = |ds: &[(&str, usize)]| {
        ds.iter()
            .map(|&(v, n)| LaunchDim::new(v, u32::try_from(n).expect("extents are checked to fit i32")))
            .collect()
    };
    Stmt::Launch { grid: dims(grid), block: dims(block), shared_optin: false, body, span: Span::NONE }
}

fn barrier() -> Stmt {
    Stmt::Barrier { span: Span::NONE }
}

/// `alloc name: ty shared`
fn shared(b: &Buf) -> Stmt {
    Stmt::Alloc { name: b.name.clone(), ty: b.ty.clone(), scope: ekb_ir::l1::Scope::Shared, span: Span::NONE }
}

/// Row-major index expressions of the dims `shape` for a flat index `flat` in `0..numel`:
/// `flat / stride % extent` (no `%` on the first dim, no `/` on the last).
fn unflatten(flat: &E, shape: &[usize]) -> Vec<E> {
    let mut stride: usize = shape.iter().product();
    shape
        .iter()
        .enumerate()
        .map(|(d, &n)| {
            if n == 1 {
                return int(0);
            }
            stride /= n;
            let e = flat.clone() / int(stride);
            if d == 0 {
                e
            } else {
                e % int(n)
            }
        })
        .collect()
}
