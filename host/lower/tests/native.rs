//! The default schedule compiled for this machine by the LLVM adapter and run natively (with
//! real threads and SIMD, which the L1 interpreter only simulates serially) matches the L0
//! reference on the operators with hand-tiled layouts.

mod support;
use ekb_ir::tensor::{compare, Tolerance};
use ekb_ir::TargetProfile;
use ekb_llvm::HostModule;
use ekb_lower::{lower, Schedule};
use std::collections::HashMap;
use support::op;

fn check_native(inputs: &str, call: &str) {
    let g = op(inputs, call);
    let target = TargetProfile::load("host").expect("shipped profile");
    let m = lower(&g, Schedule::Default, &target).expect("lowers");
    let host = HostModule::build(&m, &target, 0).unwrap_or_else(|d| panic!("{call}: {d}"));
    let data: HashMap<_, _> = ekb_ir::l0::inputs::generate(&g, 3).expect("inputs").into_iter().collect();
    let tensors = data.iter().map(|(n, b)| (n.clone(), b.to_tensor())).collect();
    let reference = ekb_ir::l0::interp::run(&g, &tensors).expect("reference");
    let got = host.run(&m, &data).unwrap_or_else(|d| panic!("{call}: {d}"));
    let y = got["y"].to_tensor();
    if let Err(mm) = compare(&reference[0], &y, Tolerance::default_for(y.ty.dtype)) {
        panic!("{call} on {inputs}: {mm}\n{}", ekb_ir::l1::print::print(&m));
    }
}

#[test]
fn matmul_and_linear_tiles() {
    check_native("a: f32[67,70], b: f32[70,150]", "matmul(a, b)");
    check_native("a: f32[2,33,64], b: f32[64,300]", "matmul(a, b)");
    check_native("a: f32[64,96], b: f32[80,96]", "matmul(a, b, transpose_b=true)");
    check_native("x: f32[66,128], w: f32[98,128], b: f32[98]", "linear(x, w, b)");
    check_native("x: f32[1,256], w: f32[514,256], b: f32[514]", "linear(x, w, b)");
    // A weight larger than the profile's stack: threads over column tiles, a remainder of 2.
    check_native("x: f32[2,21,256], w: f32[1030,256], b: f32[1030]", "linear(x, w, b)");
}

#[test]
fn convolution_tiles() {
    check_native("x: f32[1,16,30,30], w: f32[16,16,3,3], b: f32[16]", "conv2d(x, w, b, pad=[1,1,1,1])");
    // Winograd F(2x2, 3x3) (16 channels or more, even output, a vector of tiles per row):
    // padded, and unevenly padded with two images, 40 output channels (blocks of 20) and rows of
    // 17 tiles.
    check_native("x: f32[1,16,30,40], w: f32[16,16,3,3], b: f32[16]", "conv2d(x, w, b, pad=[1,1,1,1])");
    check_native("x: f32[2,24,20,34], w: f32[40,24,3,3], b: f32[40]", "conv2d(x, w, b, pad=[1,0,1,2])");
    check_native(
        "x: f32[2,8,31,29], w: f32[12,4,3,3]",
        "conv2d(x, w, stride=[2,2], pad=[1,0,1,2], groups=2)",
    );
    check_native("x: f32[1,32,28,28], w: f32[32,1,3,3]", "conv2d(x, w, pad=[1,1,1,1], groups=32)");
    check_native("x: f32[1,2,5,60], w: f32[3,2,1,3]", "conv2d(x, w, dilation=[1,20], pad=[0,20,0,20])");
}

#[test]
fn transposed_convolution_tiles_by_phase() {
    // DCGAN's kernel 4 of stride 2 with padding, a one-tap kernel 2 of stride 2 with a bias, and
    // an FSRCNN-like 9x9 of stride 3 with padding and output padding.
    check_native(
        "x: f32[2,32,8,8], w: f32[32,16,4,4]",
        "conv_transpose2d(x, w, stride=[2,2], pad=[1,1,1,1])",
    );
    check_native(
        "x: f32[1,24,7,9], w: f32[24,20,2,2], b: f32[20]",
        "conv_transpose2d(x, w, b, stride=[2,2])",
    );
    check_native(
        "x: f32[1,16,6,7], w: f32[16,1,9,9]",
        "conv_transpose2d(x, w, stride=[3,3], pad=[4,4,4,4], output_padding=[2,2])",
    );
}

#[test]
fn integer_products_in_simd_and_threads() {
    check_native("a: i8[67,700], b: i8[700,150]", "matmul(a, b)");
    check_native("a: i8[64,96], b: i8[80,96]", "matmul(a, b, transpose_b=true)");
    check_native("x: i8[66,128], w: i8[98,128], b: i32[98] = randint(-9999, 9999)", "linear(x, w, b)");
    check_native(
        "x: i8[2,8,31,29], w: i8[12,4,3,3], b: i32[12] = randint(-9999, 9999)",
        "conv2d(x, w, b, stride=[2,2], pad=[1,0,1,2], groups=2)",
    );
    check_native("x: i8[1,32,28,28], w: i8[32,1,3,3]", "conv2d(x, w, pad=[1,1,1,1], groups=32)");
    // 2^31 from 131072 products of -128 * -128 wraps to i32::MIN in vector registers too.
    check_native(
        "x: i8[4,131072] = randint(-128, -127), w: i8[3,131072] = randint(-128, -127)",
        "linear(x, w)",
    );
}

#[test]
fn pools_reductions_and_softmax() {
    check_native("x: f32[2,16,33,33]", "max_pool2d(x, kernel=[3,3], stride=[2,2], pad=[1,1,1,1])");
    check_native(
        "x: f32[2,16,33,33]",
        "avg_pool2d(x, kernel=[3,3], stride=[1,1], pad=[1,1,1,1], count_include_pad=false)",
    );
    check_native("x: f32[64,2000]", "sum(x, axes=[1])");
    check_native("x: f32[16,300,40]", "max(x, axes=[1])");
    check_native("x: f32[128,257]", "softmax(x)");
    check_native("x: f32[64,1000] = uniform(-150, 150)", "softmax(x)");
    check_native("x: f32[8,600,20]", "log_softmax(x, axis=1)");
    check_native("x: f32[256,300], w: f32[300], b: f32[300]", "layer_norm(x, w, b)");
    check_native("x: f32[1,70001]", "gelu(x)");
}

#[test]
fn packed_weights_compiled_and_timed() {
    // A linear layer and a pointwise convolution over few pixels (stride 3; its packing
    // asked by the knob) of parameter weights: their packing is a prepare step, which the
    // host runner runs once before the executions it times, and once before a run.
    let graphs = [
        "graph t(x: f32[2,33,64]) -> (y: f32[0]) {
  param w: f32[150,64] = kaiming_uniform
  param b: f32[150] = uniform(-1, 1)
  %0 = linear(x, w, b)
  return %0
}
",
        "graph t(x: f32[2,40,13,11]) -> (y: f32[0]) {
  param w: f32[70,40,1,1] = kaiming_uniform
  param b: f32[70] = uniform(-1, 1)
  %0 = conv2d(x, w, b, stride=[3,3])
  return %0
}
",
    ];
    for text in graphs {
        let g = support::graph(text);
        let target = TargetProfile::load("host").expect("shipped profile");
        let mut knobs = ekb_lower::Knobs::for_target(&target);
        knobs.set("conv.pack_max_pixels", 32).expect("a knob");
        let m = ekb_lower::lower_with(&g, Schedule::Default, &knobs, &target).expect("lowers");
        assert!(m.plan[0].prepare && !m.plan[1].prepare, "{}", ekb_ir::l1::print::print(&m));
        let host = HostModule::build(&m, &target, 0).unwrap_or_else(|d| panic!("{d}"));
        let data: HashMap<_, _> = ekb_ir::l0::inputs::generate(&g, 3).expect("inputs").into_iter().collect();
        let tensors = data.iter().map(|(n, b)| (n.clone(), b.to_tensor())).collect();
        let reference = ekb_ir::l0::interp::run(&g, &tensors).expect("reference");
        let y = host.run(&m, &data).unwrap_or_else(|d| panic!("{d}"))["y"].to_tensor();
        compare(&reference[0], &y, Tolerance::default_for(y.ty.dtype))
            .unwrap_or_else(|mm| panic!("{text}: {mm}"));
        assert_eq!(host.time(&m, &data, 1, 3).expect("times").len(), 3);
    }
}
