//! conv2d (stride, padding, dilation, groups, depthwise, bias) and the 2-D pools (padding,
//! count_include_pad both ways) lowered under both schedules match the L0 reference.

mod support;
use ekb_ir::TargetProfile;
use ekb_lower::{Knob, Knobs, Schedule};
use support::*;

#[test]
fn conv2d_basic_padding_and_bias() {
    check_op("x: f32[1,3,8,8], w: f32[4,3,3,3]", "conv2d(x, w)");
    check_op("x: f32[1,3,8,8], w: f32[4,3,3,3], b: f32[4]", "conv2d(x, w, b, pad=[1,1,1,1])");
    check_op("x: f32[2,3,8,9], w: f32[4,3,3,3]", "conv2d(x, w, pad=[0,1,2,0])");
    check_op("x: f32[1,3,6,6], w: f32[5,3,1,1], b: f32[5]", "conv2d(x, w, b)");
    check_op("x: f32[1,2,5,5], w: f32[2,2,5,5]", "conv2d(x, w, pad=[2,2,2,2])");
}

#[test]
fn conv2d_stride_and_dilation() {
    check_op("x: f32[1,3,9,9], w: f32[4,3,3,3]", "conv2d(x, w, stride=[2,2], pad=[1,1,1,1])");
    check_op("x: f32[1,3,10,9], w: f32[4,3,3,3]", "conv2d(x, w, stride=[2,3], pad=[1,0,1,2])");
    check_op("x: f32[1,3,9,9], w: f32[4,3,3,3]", "conv2d(x, w, dilation=[2,2], pad=[2,2,2,2])");
    check_op(
        "x: f32[1,2,11,11], w: f32[2,2,3,2]",
        "conv2d(x, w, stride=[2,2], dilation=[2,3], pad=[1,2,0,1])",
    );
}

#[test]
fn conv2d_groups_and_depthwise() {
    check_op("x: f32[1,4,7,7], w: f32[6,2,3,3], b: f32[6]", "conv2d(x, w, b, pad=[1,1,1,1], groups=2)");
    check_op("x: f32[2,4,9,9], w: f32[4,1,3,3]", "conv2d(x, w, pad=[1,1,1,1], groups=4)");
    check_op("x: f32[1,4,9,9], w: f32[8,1,3,3], b: f32[8]", "conv2d(x, w, b, stride=[2,2], groups=4)");
}

#[test]
fn conv2d_threads_and_row_tiles() {
    check_op("x: f32[1,8,20,20], w: f32[16,8,3,3], b: f32[16]", "conv2d(x, w, b, pad=[1,1,1,1])");
    // Several interior column tiles and a remainder per row.
    check_op("x: f32[1,1,70,70], w: f32[2,1,3,3]", "conv2d(x, w, pad=[1,1,1,1])");
    // Border regions wider than one column tile on both sides of the interior.
    check_op("x: f32[1,2,5,60], w: f32[3,2,1,3]", "conv2d(x, w, dilation=[1,20], pad=[0,20,0,20])");
    // No interior at all: every tile is a border tile.
    check_op("x: f32[1,1,4,4], w: f32[1,1,3,3]", "conv2d(x, w, dilation=[2,2], pad=[2,2,2,2])");
}

#[test]
fn max_pool2d_with_and_without_padding() {
    check_op("x: f32[1,2,8,8]", "max_pool2d(x, kernel=[2,2])");
    check_op("x: f32[2,3,9,9]", "max_pool2d(x, kernel=[3,3], stride=[2,2], pad=[1,1,1,1])");
    check_op("x: f32[1,2,7,8]", "max_pool2d(x, kernel=[3,2], stride=[1,2], pad=[1,0,0,1])");
    check_op("x: f32[1,1,5,5] = uniform(-5, -1)", "max_pool2d(x, kernel=[3,3], stride=[1,1], pad=[1,1,1,1])");
    check_op("x: f32[1,32,56,56]", "max_pool2d(x, kernel=[3,3], stride=[2,2], pad=[1,1,1,1])");
}

#[test]
fn pools_whose_windows_tile_the_input_combine_their_taps_without_an_accumulator() {
    // Rows of 30 and 29 outputs: pieces of whole vectors, then halves, then one element.
    check_op("x: f32[1,3,6,60]", "avg_pool2d(x, kernel=[2,2], stride=[2,2])");
    check_op("x: f32[1,2,9,87]", "max_pool2d(x, kernel=[3,3], stride=[3,3])");
    fn allocs(body: &[ekb_ir::l1::Stmt]) -> usize {
        use ekb_ir::l1::Stmt;
        body.iter()
            .map(|s| match s {
                Stmt::Alloc { .. } => 1,
                Stmt::Loop { body, .. } => allocs(body),
                Stmt::If { then_body, else_body, .. } => allocs(then_body) + allocs(else_body),
                _ => 0,
            })
            .sum()
    }
    // A row of 2 * lanes - 2 outputs is lanes, lanes / 2, ..., 2 wide: log2(lanes) loops.
    let lanes = TargetProfile::load("host").expect("shipped profile").cpu_f32_lanes() as usize;
    let ow = 2 * lanes - 2;
    let m = default_module(&op(
        &format!("x: f32[1,2,4,{}]", 2 * ow),
        "avg_pool2d(x, kernel=[2,2], stride=[2,2])",
    ));
    assert_eq!(allocs(&m.kernels[0].body), 0, "no accumulator row");
    let vectors = loop_kinds(&m).iter().filter(|k| **k == ekb_ir::l1::LoopKind::Vectorize).count();
    assert_eq!(vectors, lanes.trailing_zeros() as usize);
    // Overlapping or padded windows keep the accumulator row.
    for call in [
        "max_pool2d(x, kernel=[3,3], stride=[2,2])",
        "avg_pool2d(x, kernel=[2,2], stride=[2,2], pad=[1,1,1,1])",
    ] {
        let m = default_module(&op("x: f32[1,2,9,9]", call));
        assert_eq!(allocs(&m.kernels[0].body), 1, "{call}");
    }
}

#[test]
fn avg_pool2d_counting_padding_both_ways() {
    for cip in [true, false] {
        check_op("x: f32[1,2,8,8]", &format!("avg_pool2d(x, kernel=[2,2], count_include_pad={cip})"));
        check_op(
            "x: f32[2,3,9,9]",
            &format!("avg_pool2d(x, kernel=[3,3], stride=[2,2], pad=[1,1,1,1], count_include_pad={cip})"),
        );
        check_op(
            "x: f32[1,2,7,8]",
            &format!("avg_pool2d(x, kernel=[3,2], stride=[1,2], pad=[1,0,0,1], count_include_pad={cip})"),
        );
        check_op(
            "x: f32[1,32,56,56]",
            &format!("avg_pool2d(x, kernel=[3,3], stride=[1,1], pad=[1,1,1,1], count_include_pad={cip})"),
        );
    }
}

#[test]
fn integer_conv2d_accumulates_in_i32() {
    check_op(
        "x: i8[1,4,9,9], w: i8[6,2,3,3], b: i32[6] = randint(-1000, 1000)",
        "conv2d(x, w, b, stride=[2,2], pad=[1,1,1,1], groups=2)",
    );
    check_op("x: i8[2,4,9,9], w: i8[4,1,3,3]", "conv2d(x, w, pad=[1,1,1,1], groups=4)");
    check_op("x: i8[1,2,5,60], w: i8[3,2,1,3]", "conv2d(x, w, dilation=[1,20], pad=[0,20,0,20])");
    check_op("x: i8[1,8,20,20], w: i8[16,8,3,3]", "conv2d(x, w, pad=[1,1,1,1])");
}

#[test]
fn convolutions_over_few_pixels_pack_their_weights() {
    // Parameter weights of 1x1 unpadded convolutions over at most 64 pixels
    // (`conv.pack_max_pixels`) and of other ungrouped ones over at most 196
    // (`conv.pack_taps_max_pixels`, by default): packed in blocks of output channels,
    // `[ceil(oc / B), c*kh*kw, B]`, by prepare steps (two images with a bias and a fused relu;
    // stride 2; a padded 1x1; a 3x3 with padding, a strided and dilated one); over 256 pixels,
    // not; with the knobs at 0, none. Every case matches the reference (`run_case_with`): 70
    // channels make two blocks of four vectors on AVX-512, the last one holding 6; 20 pixels
    // take several register tiles.
    let g = graph(
        "graph t(x: f32[2,24,5,4], u: f32[1,8,10,10], q: f32[1,8,6,5], big: f32[1,8,16,16]) -> (y: f32[0], z: f32[0], s: f32[0], d: f32[0], e: f32[0], f: f32[0], h: f32[0]) {
  param w: f32[70,24,1,1] = kaiming_uniform
  param b: f32[70] = uniform(-1, 1)
  param v: f32[20,8,1,1] = kaiming_uniform
  param p: f32[20,24,1,1] = kaiming_uniform
  param t: f32[18,8,3,3] = kaiming_uniform
  %0 = conv2d(x, w, b)
  %y = relu(%0)
  %z = conv2d(u, v, stride=[2,2])
  %s = conv2d(u, v)
  %d = conv2d(x, p, pad=[1,0,1,0])
  %e = conv2d(q, t, pad=[1,1,1,1])
  %f = conv2d(u, t, stride=[2,3], dilation=[2,1], pad=[1,2,0,1])
  %h = conv2d(big, t, pad=[1,1,1,1])
  fuse %0, %y
  return %y, %z, %s, %d, %e, %f, %h
}
",
    );
    let target = TargetProfile::load("host").expect("shipped profile");
    let lanes = target.cpu_f32_lanes() as usize;
    let m = run_case_with(&g, Schedule::Default, &Knobs::for_target(&target), &target, 7)
        .unwrap_or_else(|e| panic!("{e}"));
    let prepared: Vec<&str> = m.plan.iter().take_while(|r| r.prepare).map(|r| r.kernel.as_str()).collect();
    let text = ekb_ir::l1::print::print(&m);
    assert_eq!(prepared, ["k0_conv2d_pack", "k2_conv2d_pack", "k4_conv2d_pack", "k5_conv2d_pack"], "{text}");
    let block = |oc: usize| (4 * lanes).min(oc.next_multiple_of(lanes));
    for (name, oc, k) in [("w", 70, 24), ("v", 20, 8), ("p", 20, 24), ("t", 18, 72)] {
        let b = block(oc);
        let want = format!("buffer {name}_packed: f32[{},{k},{b}]", oc.div_ceil(b));
        assert!(text.contains(&want), "no `{want}` in:\n{text}");
    }
    let mut knobs = Knobs::for_target(&target);
    knobs.set("conv.pack_max_pixels", 0).expect("a knob");
    knobs.set("conv.pack_taps_max_pixels", 0).expect("a knob");
    let m = run_case_with(&g, Schedule::Default, &knobs, &target, 7).unwrap_or_else(|e| panic!("{e}"));
    assert!(m.plan.iter().all(|r| !r.prepare), "{}", ekb_ir::l1::print::print(&m));
}

#[test]
fn deep_pointwise_convolutions_pack_under_their_knob() {
    // `conv.pack_deep_max_pixels`: stride-1 1x1 unpadded convolutions of at least 6 vectors of
    // input channels whose rows are not a whole number of vectors pack over more pixels than
    // `conv.pack_max_pixels` (14x14 here, 2 images, 4 vectors and 6 more channels: the last
    // block is narrower, computed in whole vectors over the zeros of the packed weight, stored
    // 6 wide, with more pixels a tile); one input channel fewer, rows of two whole vectors and
    // stride 2 do not. Off by default.
    let target = TargetProfile::load("host").expect("shipped profile");
    let lanes = target.cpu_f32_lanes() as usize;
    let (c, oc, wide) = (6 * lanes, 4 * lanes + 6, 2 * lanes);
    let g = graph(&format!(
        "graph t(x: f32[2,{c},14,14], s: f32[1,{},14,14], r: f32[1,{c},9,{wide}], u: f32[1,{c},28,30]) -> (y: f32[0], z: f32[0], q: f32[0], d: f32[0]) {{
  param w: f32[{oc},{c},1,1] = kaiming_uniform
  param b: f32[{oc}] = uniform(-1, 1)
  param v: f32[{oc},{},1,1] = kaiming_uniform
  %0 = conv2d(x, w, b)
  %y = relu(%0)
  %z = conv2d(s, v)
  %q = conv2d(r, w)
  %d = conv2d(u, w, stride=[2,2])
  fuse %0, %y
  return %y, %z, %q, %d
}}
",
        c - 1,
        c - 1
    ));
    let mut knobs = Knobs::for_target(&target);
    assert_eq!(knobs.get(Knob::ConvPackDeepMaxPixels), 0);
    let m = run_case_with(&g, Schedule::Default, &knobs, &target, 5).unwrap_or_else(|e| panic!("{e}"));
    assert!(m.plan.iter().all(|r| !r.prepare), "{}", ekb_ir::l1::print::print(&m));
    knobs.set("conv.pack_deep_max_pixels", 784).expect("a knob");
    let m = run_case_with(&g, Schedule::Default, &knobs, &target, 5).unwrap_or_else(|e| panic!("{e}"));
    let prepared: Vec<&str> = m.plan.iter().take_while(|r| r.prepare).map(|r| r.kernel.as_str()).collect();
    let text = ekb_ir::l1::print::print(&m);
    assert_eq!(prepared, ["k0_conv2d_pack"], "{text}");
}
