mod support;
use support::*;
#[test]
fn dump() {
    for (i, c) in [("x: f32[1,3,9,9], w: f32[4,3,3,3], b: f32[4]", "conv2d(x, w, b, stride=[2,2], pad=[1,1,1,1])"), ("a: f32[7,9], b: f32[9,37]", "matmul(a, b)"), ("x: f32[2,5,600]", "softmax(x, axis=1)"), ("x: f32[2,3,9,9]", "avg_pool2d(x, kernel=[3,3], stride=[2,2], pad=[1,1,1,1], count_include_pad=false)"), ("x: f32[3,4,5]", "pad(x, pads=[0,1,2,1,0,2], mode=reflect)")] {
        let m = default_module(&op(i, c));
        println!("{}", ekb_ir::l1::print::print(&m));
    }
}
