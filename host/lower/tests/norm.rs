//! layer_norm, rms_norm and batch_norm lowered under both schedules match the L0 reference.

mod support;
use support::*;

#[test]
fn layer_norm_over_one_and_two_trailing_dims() {
    check_op("x: f32[2,3,8], w: f32[8], b: f32[8]", "layer_norm(x, w, b)");
    check_op("x: f32[2,3,8] = uniform(2, 3), w: f32[3,8], b: f32[3,8]", "layer_norm(x, w, b, eps=0.001)");
    check_op("x: f32[8], w: f32[8], b: f32[8]", "layer_norm(x, w, b)");
    check_op("x: f32[256,300], w: f32[300], b: f32[300]", "layer_norm(x, w, b)");
}

#[test]
fn rms_norm_over_one_and_two_trailing_dims() {
    check_op("x: f32[2,3,8], w: f32[8]", "rms_norm(x, w)");
    check_op("x: f32[2,3,8], w: f32[3,8]", "rms_norm(x, w, eps=0.01)");
    check_op("x: f32[256,300], w: f32[300]", "rms_norm(x, w)");
}

#[test]
fn batch_norm_per_channel() {
    let params = "g: f32[3], b: f32[3], m: f32[3], v: f32[3] = uniform(0.5, 2)";
    check_op(&format!("x: f32[2,3,4,5], {params}"), "batch_norm(x, g, b, m, v)");
    check_op(&format!("x: f32[4,3], {params}"), "batch_norm(x, g, b, m, v, eps=0.1)");
    let params = "g: f32[16], b: f32[16], m: f32[16], v: f32[16] = uniform(0.5, 2)";
    check_op(&format!("x: f32[2,16,40,40], {params}"), "batch_norm(x, g, b, m, v)");
}
