//! The default GPU lowering on the operator corpus (`tests/ops/*.ekir`): every graph lowers to
//! GPU kernels that verify against every GPU profile, the L1 interpreter (which runs blocks,
//! threads and barriers) reproduces the L0 reference on every seed, both dialects emit, and the
//! operators with a dedicated schedule get it (shared-memory trees, tiled matmul).

use ekb_e2e::{check_outputs, corpus_files, load_graph, reference, SEEDS};
use ekb_gpu_c::{emit, kernels, Dialect};
use ekb_ir::l1::{interp, print::print, verify::verify, Stmt};
use ekb_ir::TargetProfile;
use ekb_lower::{lower_gpu, Schedule};

fn target(name: &str) -> TargetProfile {
    TargetProfile::load(name).unwrap()
}

#[test]
fn every_corpus_graph_lowers_for_every_gpu_profile_and_emits() {
    for path in corpus_files() {
        let g = load_graph(&path);
        for (t, dialect) in [
            ("pocl", Dialect::OpenCl),
            ("rk3588", Dialect::OpenCl),
            ("jetson-orin", Dialect::Cuda),
            ("h200", Dialect::Cuda),
        ] {
            let t = target(t);
            let m = lower_gpu(&g, Schedule::Default, &t).unwrap_or_else(|d| panic!("{}: {d}", g.name));
            let errs: Vec<String> =
                verify(&m, Some(&t)).into_iter().filter(|d| d.is_error()).map(|d| d.to_string()).collect();
            assert!(errs.is_empty(), "{} for {}: {errs:?}", g.name, t.name);
            emit(&m, dialect, &t).unwrap_or_else(|d| panic!("{} for {}: {d}", g.name, t.name));
            assert!(kernels(&m).is_ok());
        }
    }
}

#[test]
fn the_interpreter_reproduces_the_reference_for_every_corpus_graph_and_schedule() {
    let t = target("pocl");
    for path in corpus_files() {
        let g = load_graph(&path);
        for schedule in Schedule::ALL {
            let m = lower_gpu(&g, schedule, &t).unwrap_or_else(|d| panic!("{} {schedule}: {d}", g.name));
            for seed in SEEDS {
                let (inputs, want) = reference(&g, seed);
                let got = interp::run(&m, &inputs)
                    .unwrap_or_else(|d| panic!("{} {schedule} seed {seed}: {d}\n{}", g.name, print(&m)));
                let problems = check_outputs(&g, &want, &got);
                assert!(
                    problems.is_empty(),
                    "{} {schedule} seed {seed}: {problems:?}\n{}",
                    g.name,
                    print(&m)
                );
            }
        }
    }
}

#[test]
fn the_naive_schedule_uses_no_shared_memory_except_for_group_norm() {
    let t = target("pocl");
    for path in corpus_files() {
        let g = load_graph(&path);
        let naive = lower_gpu(&g, Schedule::Naive, &t).unwrap();
        let group_norm = g.nodes.iter().any(|n| matches!(n.op, ekb_ir::l0::Op::GroupNorm { .. }));
        let (barriers, shared) = shape_of(&naive);
        if !group_norm {
            assert_eq!((barriers, shared), (0, 0), "{}:\n{}", g.name, print(&naive));
        }
    }
    // The default schedule's matmul tiles are what the naive one leaves out.
    let mm = corpus_files().into_iter().find(|p| p.ends_with("matmul.ekir")).expect("a matmul graph");
    let g = load_graph(&mm);
    assert_eq!(shape_of(&lower_gpu(&g, Schedule::Naive, &t).unwrap()), (0, 0));
    assert!(shape_of(&lower_gpu(&g, Schedule::Default, &t).unwrap()).1 > 0);
}

/// Counts of barriers and shared allocations in a module's kernels.
fn shape_of(m: &ekb_ir::l1::Module) -> (usize, usize) {
    fn walk(body: &[Stmt], barriers: &mut usize, shared: &mut usize) {
        for s in body {
            match s {
                Stmt::Barrier { .. } => *barriers += 1,
                Stmt::Alloc { scope: ekb_ir::l1::Scope::Shared, .. } => *shared += 1,
                Stmt::Loop { body, .. } | Stmt::Launch { body, .. } => walk(body, barriers, shared),
                Stmt::If { then_body, else_body, .. } => {
                    walk(then_body, barriers, shared);
                    walk(else_body, barriers, shared);
                }
                _ => {}
            }
        }
    }
    let (mut b, mut s) = (0, 0);
    for k in &m.kernels {
        walk(&k.body, &mut b, &mut s);
    }
    (b, s)
}

#[test]
fn dedicated_schedules_use_shared_memory_and_others_one_thread_per_element() {
    let t = target("pocl");
    let corpus = |stem: &str| {
        let path = corpus_files().into_iter().find(|p| p.file_stem().is_some_and(|s| s == stem)).unwrap();
        lower_gpu(&load_graph(&path), Schedule::Default, &t).unwrap()
    };
    // reduce_sum: sums over trailing axes use the tree (a 64-thread tree has 6 levels).
    let m = corpus("matmul");
    let (barriers, shared) = shape_of(&m);
    assert_eq!((barriers, shared), (2, 2), "{}", print(&m));
    // Register tiles: the 19x37 output's 64x64 block tile fitted to 32x64, then halved to 32x32
    // for a block per PoCL compute unit (2): 32 threads of 8x4 outputs.
    let k = &kernels(&m).unwrap()[0];
    assert_eq!((k.launch.grid, k.launch.block), ([2, 1, 1], [32, 1, 1]));
    // Each thread's fragments of a stage row come out of shared memory as vectors: 8 rows of
    // `a` in two, 4 columns of `b` in one.
    let src = emit(&m, Dialect::OpenCl, &t).unwrap();
    assert_eq!(src.matches("vload4(0, &sa[").count(), 1, "{src}");
    assert_eq!(src.matches("vload4(0, &sb[").count(), 1, "{src}");
    let m = corpus("softmax");
    let ks = kernels(&m).unwrap();
    // Softmax over the last axis: one block per row (3 * 9 rows) and a tree; over axis 1: one
    // thread per row of the naive nest.
    assert_eq!(ks[0].launch.grid, [27, 1, 1]);
    assert!(ks[0].launch.shared_bytes > 0);
    assert_eq!(ks[1].launch.shared_bytes, 0);
    assert_eq!(ks[1].launch.grid[0] * ks[1].launch.block[0], 64, "3 * 21 = 63 rows, one block of 64");
    // Elementwise: a 1-D grid over the output, no barriers.
    let m = corpus("relu");
    assert_eq!(shape_of(&m), (0, 0));
    // group_norm: one block per (image, group), 2 * 3 here, its 2 * 5 * 7 elements summed by
    // a tree of 128 threads; conv_transpose2d (stride 2): by cells of its 2x2 stride phases,
    // one output channel per thread (no block of 2 divides its 3) and 2 of its 16 cell rows per
    // thread: 3 * 8 * 24 threads, at least the 256 per compute unit that keep the cells.
    let ks = kernels(&corpus("group_norm")).unwrap();
    let threads = |k: &ekb_gpu_c::GpuKernel| k.launch.grid[0] * k.launch.block[0];
    assert_eq!((ks[0].launch.grid, ks[0].launch.block), ([6, 1, 1], [128, 1, 1]));
    assert!(ks[0].launch.shared_bytes > 0);
    let ks = kernels(&corpus("conv_transpose2d")).unwrap();
    assert!(threads(&ks[0]) >= 576 && ks[0].launch.grid[0] == 576_u32.div_ceil(ks[0].launch.block[0]));
    // Concat: one kernel per input, run in order.
    let m = corpus("concat");
    assert_eq!(m.kernels.len(), 3, "{}", print(&m));
    assert_eq!(m.plan.len(), 3);
}

#[test]
fn lowering_needs_a_gpu() {
    let path = corpus_files().into_iter().next().unwrap();
    let d = lower_gpu(&load_graph(&path), Schedule::Default, &target("host")).unwrap_err();
    assert_eq!(d.message, "target `host` has no GPU to lower for");
}
