//! matmul (transposes, batch broadcast, remainders of the register tiles) and linear (with and
//! without bias, rank 1 to 3 inputs) lowered under both schedules match the L0 reference.

mod support;
use support::*;

#[test]
fn matmul_with_each_transpose() {
    check_op("a: f32[3,4], b: f32[4,5]", "matmul(a, b)");
    check_op("a: f32[4,3], b: f32[4,5]", "matmul(a, b, transpose_a=true)");
    check_op("a: f32[3,4], b: f32[5,4]", "matmul(a, b, transpose_b=true)");
    check_op("a: f32[4,3], b: f32[5,4]", "matmul(a, b, transpose_a=true, transpose_b=true)");
}

#[test]
fn matmul_tile_remainders() {
    // M = 7 (one block of 4 rows and a remainder of 3), N = 37 (full column tiles and a
    // remainder on every vector width), K = 9.
    check_op("a: f32[7,9], b: f32[9,37]", "matmul(a, b)");
    check_op("a: f32[9,7], b: f32[9,37]", "matmul(a, b, transpose_a=true)");
    check_op("a: f32[1,9], b: f32[9,1]", "matmul(a, b)");
    check_op("a: f32[2,9], b: f32[9,3]", "matmul(a, b)");
}

#[test]
fn matmul_batched_and_broadcast() {
    check_op("a: f32[2,3,4], b: f32[2,4,5]", "matmul(a, b)");
    check_op("a: f32[2,3,4], b: f32[4,5]", "matmul(a, b)");
    check_op("a: f32[3,4], b: f32[2,4,5]", "matmul(a, b)");
    check_op("a: f32[2,1,3,4], b: f32[3,4,5]", "matmul(a, b)");
    check_op("a: f32[2,1,3,4], b: f32[3,5,4]", "matmul(a, b, transpose_b=true)");
}

#[test]
fn matmul_large_enough_for_threads() {
    // Few column tiles: threads over row tiles.
    check_op("a: f32[64,96], b: f32[96,80]", "matmul(a, b)");
    // Many column tiles: threads over them, with row and column remainders.
    check_op("a: f32[33,64], b: f32[64,650]", "matmul(a, b)");
    check_op("a: f32[2,9,64], b: f32[64,300]", "matmul(a, b)");
    check_op("a: f32[64,96], b: f32[80,96]", "matmul(a, b, transpose_b=true)");
}

#[test]
fn products_of_few_rows_give_their_columns_the_accumulators_the_rows_leave() {
    // One row takes tiles of up to 16 vectors, two rows half the accumulators each, three a
    // third (on AVX-512's 16 lanes and 24 accumulators: 256, 192 and 128 columns); 600 columns
    // leave a remainder each time, and every case matches the reference.
    let target = ekb_ir::TargetProfile::load("host").expect("shipped profile");
    let lanes = target.cpu_f32_lanes() as usize;
    let vectors = ekb_lower::Knobs::for_target(&target).get(ekb_lower::Knob::MatmulTileVectors);
    let tile_cols = 64.max(4 * lanes);
    let tile_rows = (vectors / tile_cols.div_ceil(lanes)).max(1);
    for m in [1, 2, 3] {
        let inputs = format!("a: f32[{m},64], b: f32[64,600]");
        check_op(&inputs, "matmul(a, b)");
        if m >= tile_rows {
            continue; // The tile's own rows: nothing to widen (x86 below AVX-512).
        }
        let cols = tile_cols.max((vectors / m).min(16) * lanes);
        let g = op(&inputs, "matmul(a, b)");
        let module = ekb_lower::lower(&g, ekb_lower::Schedule::Default, &target).expect("lowers");
        let text = ekb_ir::l1::print::print(&module);
        assert!(text.contains(&format!("alloc acc: f32[{m},{cols}] local")), "{m} rows:\n{text}");
    }
}

#[test]
fn linear_with_and_without_bias() {
    check_op("x: f32[3,6], w: f32[5,6], b: f32[5]", "linear(x, w, b)");
    check_op("x: f32[3,6], w: f32[5,6]", "linear(x, w)");
    check_op("x: f32[2,3,6], w: f32[5,6], b: f32[5]", "linear(x, w, b)");
    check_op("x: f32[6], w: f32[5,6], b: f32[5]", "linear(x, w, b)");
    // Threads over row tiles, and (a single row) over column tiles.
    check_op("x: f32[66,128], w: f32[98,128], b: f32[98]", "linear(x, w, b)");
    check_op("x: f32[1,256], w: f32[514,256], b: f32[514]", "linear(x, w, b)");
}

#[test]
fn integer_matmul_and_linear_accumulate_in_i32() {
    // i8 operands, i32 accumulators, in the register tiles of both layouts with remainders.
    check_op("a: i8[7,300], b: i8[300,37]", "matmul(a, b)");
    check_op("a: i8[9,7], b: i8[37,9]", "matmul(a, b, transpose_a=true, transpose_b=true)");
    check_op("a: i8[2,1,3,40], b: i8[3,5,40]", "matmul(a, b, transpose_b=true)");
    check_op("x: i8[2,3,70], w: i8[5,70], b: i32[5] = randint(-100000, 100000)", "linear(x, w, b)");
    check_op("x: i8[66,128], w: i8[98,128]", "linear(x, w)");
    // Every product is -128 * -128, so the sum 2^31 wraps to i32::MIN; the bias -1 brings the
    // sum back to i32::MAX: both schedules wrap as the reference does, whatever the order.
    let extreme = "x: i8[3,131072] = randint(-128, -127), w: i8[2,131072] = randint(-128, -127), \
                   b: i32[2] = randint(-1, 0)";
    check_op(extreme, "linear(x, w, b)");
}

#[test]
fn integer_dot_products_are_one_per_tile() {
    // The local accumulators of the default schedule's dot-product tiles: the knobs' for floats
    // (4x4, 4x2 on x86 below AVX-512), 1x1 for integers (whose single dot product per loop the
    // backends turn into widening multiply-adds).
    fn accumulators(m: &ekb_ir::l1::Module) -> Vec<(ekb_ir::DType, Vec<usize>)> {
        fn walk(body: &[ekb_ir::l1::Stmt], out: &mut Vec<(ekb_ir::DType, Vec<usize>)>) {
            for s in body {
                match s {
                    ekb_ir::l1::Stmt::Alloc { ty, .. } => out.push((ty.dtype, ty.shape.clone())),
                    ekb_ir::l1::Stmt::Loop { body, .. } => walk(body, out),
                    ekb_ir::l1::Stmt::If { then_body, else_body, .. } => {
                        walk(then_body, out);
                        walk(else_body, out);
                    }
                    _ => {}
                }
            }
        }
        let mut out = Vec::new();
        m.kernels.iter().for_each(|k| walk(&k.body, &mut out));
        out.dedup();
        out
    }
    let float = default_module(&op("x: f32[8,256], w: f32[64,256]", "linear(x, w)"));
    let knobs = ekb_lower::Knobs::for_target(&ekb_ir::TargetProfile::load("host").expect("shipped profile"));
    let tile = vec![knobs.get(ekb_lower::Knob::MatmulDotRows), knobs.get(ekb_lower::Knob::MatmulDotCols)];
    assert_eq!(accumulators(&float), [(ekb_ir::DType::F32, tile)]);
    let int = default_module(&op("x: i8[8,256], w: i8[64,256]", "linear(x, w)"));
    assert_eq!(accumulators(&int), [(ekb_ir::DType::I32, vec![1, 1])]);
}

#[test]
fn linear_copies_panels_of_short_weights_for_enough_rows() {
    // 66 rows of k = 128: a transposed panel per 64 columns (98 = one panel and 34); 2 rows, or
    // k = 300, keep the dot-product tiles. Each matches the reference under every target.
    let cases = [
        ("x: f32[66,128], w: f32[98,128], b: f32[98]", true),
        ("x: f32[2,128], w: f32[98,128], b: f32[98]", false),
        ("x: f32[66,300], w: f32[98,300], b: f32[98]", false),
    ];
    for (inputs, panels) in cases {
        let g = op(inputs, "linear(x, w, b)");
        check_graph(&g);
        let target = ekb_ir::TargetProfile::load("host").expect("shipped profile");
        let m = ekb_lower::lower(&g, ekb_lower::Schedule::Default, &target).expect("lowers");
        let text = ekb_ir::l1::print::print(&m);
        assert_eq!(text.contains("alloc panel"), panels, "{inputs}:\n{text}");
    }
}

/// Asserts that `text` declares `name` as `n` columns packed in panels over `k`: `[ceil(n / P),
/// k, P]` for some panel width `P`.
fn panel_major(text: &str, name: &str, n: usize, k: usize) {
    let decl = format!("buffer {name}: f32[");
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with(&decl))
        .unwrap_or_else(|| panic!("no {name}:\n{text}"));
    let dims: Vec<usize> =
        line.split(['[', ']']).nth(1).unwrap().split(',').map(|d| d.trim().parse().unwrap()).collect();
    assert!(dims.len() == 3 && dims[1] == k && dims[2] <= n && dims[0] == n.div_ceil(dims[2]), "{line}");
}

#[test]
fn weights_of_parameters_alone_are_packed_by_prepare_steps() {
    // `w` feeds two linear layers (packed once), `v` is scaled by a parameter first (the
    // product and its packing are both prepare steps), the first layer's epilogue is fused;
    // `u` has too few rows to pack (one row reads the weight once either way), and a layer
    // narrowing its rows keeps its dot products.
    let g = graph(
        "graph t(x: f32[2,9,24], x2: f32[18,24], r: f32[1,24]) -> (y: f32[0], z: f32[0], q: f32[0]) {
  param w: f32[40,24] = kaiming_uniform
  param b: f32[40] = uniform(-1, 1)
  param v: f32[56,40] = kaiming_uniform
  param s: f32[56,1] = uniform(0.5, 1.5)
  param u: f32[7,24] = kaiming_uniform
  %0 = linear(x, w, b)
  %1 = relu(%0)
  %2 = linear(x2, w)
  %sv = mul(v, s)
  %3 = linear(%1, %sv)
  %4 = linear(r, u)
  fuse %0, %1
  return %2, %3, %4
}
",
    );
    check_graph(&g);
    let m = default_module(&g);
    let steps: Vec<(bool, &str)> = m.plan.iter().map(|r| (r.prepare, r.kernel.as_str())).collect();
    let prepared: Vec<&str> = steps.iter().take_while(|(p, _)| *p).map(|(_, k)| *k).collect();
    assert_eq!(prepared, ["k0_linear_pack", "k3_mul", "k4_linear_pack"], "{steps:?}");
    assert!(steps[prepared.len()..].iter().all(|(p, _)| !p), "{steps:?}");
    let text = ekb_ir::l1::print::print(&m);
    // The packed weights are panel-major temps, `[ceil(n / P), k, P]`, read by the products;
    // `u` is read as it is.
    panel_major(&text, "w_packed", 40, 24);
    panel_major(&text, "t_sv_packed", 56, 40);
    assert!(!text.contains("u_packed"), "{text}");
    // A `matmul` with a 2-D weight `[k, n]` packs it the same way, from its rows; here its
    // panels are too few for the cores, so the threads take row tiles, each walking every panel.
    let kn = graph(
        "graph t(x: f32[2,128,64]) -> (y: f32[0]) {
  param m: f32[64,40] = kaiming_uniform
  %0 = matmul(x, m)
  return %0
}
",
    );
    let m = default_module(&kn);
    assert!(m.plan.first().is_some_and(|r| r.prepare && r.kernel == "k0_matmul_pack"), "{:?}", m.plan);
    let text = ekb_ir::l1::print::print(&m);
    panel_major(&text, "m_packed", 40, 64);
    assert!(text.contains("m_packed[p"), "row tiles outside, the panels inside:\n{text}");
    let narrowing = graph(
        "graph t(x: f32[18,40]) -> (y: f32[0]) {
  param w: f32[24,40] = kaiming_uniform
  %0 = linear(x, w)
  return %0
}
",
    );
    assert!(default_module(&narrowing).plan.iter().all(|r| !r.prepare));
    // The naive schedule (the baseline) runs every node in every execution.
    let naive = ekb_lower::lower(&g, ekb_lower::Schedule::Naive, &targets()[0]).expect("lowers");
    assert!(naive.plan.iter().all(|r| !r.prepare));
}

#[test]
fn packed_products_run_the_reduction_in_blocks() {
    // `matmul.k_block`: each panel's register tiles (20 rows: 6, 6, 6 and 2; 518 columns: 8
    // panels of 64, enough for the threads to take panels, and one of 6) run the reduction a
    // block at a time, partial sums kept between blocks
    // and the bias and fused relu applied after the last: k = 40 in blocks of 16 (16, one more
    // of 16 in the loop, then 8), k = 32 (two, no loop); both match the reference, and with the
    // knob at 0 the tiles run the whole reduction.
    let target = ekb_ir::TargetProfile::load("host").expect("shipped profile");
    for k in [40, 32] {
        let g = graph(&format!(
            "graph t(x: f32[1,20,{k}]) -> (y: f32[0]) {{
  param w: f32[518,{k}] = kaiming_uniform
  param b: f32[518] = uniform(-1, 1)
  %0 = linear(x, w, b)
  %1 = relu(%0)
  fuse %0, %1
  return %1
}}
"
        ));
        let mut knobs = ekb_lower::Knobs::for_target(&target);
        knobs.set("matmul.k_block", 16).expect("a knob");
        let m = run_case_with(&g, ekb_lower::Schedule::Default, &knobs, &target, 3)
            .unwrap_or_else(|e| panic!("{e}"));
        let text = ekb_ir::l1::print::print(&m);
        assert!(text.contains("alloc sums"), "k = {k}:\n{text}");
        assert_eq!(text.contains("for kb"), k == 40, "k = {k}:\n{text}");
        knobs.set("matmul.k_block", 0).expect("a knob");
        let m = run_case_with(&g, ekb_lower::Schedule::Default, &knobs, &target, 3)
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(!ekb_ir::l1::print::print(&m).contains("alloc sums"));
    }
}
