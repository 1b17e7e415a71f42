//! reshape, transpose, concat, slice and pad (all three modes) lowered under both schedules
//! match the L0 reference.

mod support;
use support::*;

#[test]
fn reshape_between_shapes() {
    for shape in ["[6,4]", "[4,6]", "[24]", "[2,12]", "[-1,3]", "[1,2,1,12]"] {
        check_op("x: f32[2,3,4]", &format!("reshape(x, shape={shape})"));
    }
    check_op("x: f32[6,5]", "reshape(x, shape=[5,6])");
    check_op("x: f32[1]", "reshape(x, shape=[])");
    check_op("x: f32[]", "reshape(x, shape=[1,1])");
    check_op("x: i32[3,8]", "reshape(x, shape=[2,12])");
    check_op("x: f32[64,1100]", "reshape(x, shape=[1100,64])");
}

#[test]
fn transpose_permutations() {
    check_op("x: f32[3,5]", "transpose(x, perm=[1,0])");
    check_op("x: f32[2,3,4]", "transpose(x, perm=[2,0,1])");
    check_op("x: f32[2,3,4]", "transpose(x, perm=[0,2,1])");
    check_op("x: i32[2,3,4,5]", "transpose(x, perm=[3,1,0,2])");
    check_op("x: f32[300,300]", "transpose(x, perm=[1,0])");
}

#[test]
fn concat_on_each_axis() {
    check_op("a: f32[2,3], b: f32[4,3], c: f32[1,3]", "concat(a, b, c, axis=0)");
    check_op("a: f32[2,3], b: f32[2,1], c: f32[2,5]", "concat(a, b, c, axis=1)");
    check_op("a: f32[2,3,4], b: f32[2,3,2]", "concat(a, b, axis=-1)");
    check_op("a: i32[2,3]", "concat(a, axis=0)");
}

#[test]
fn slice_with_steps_and_negatives() {
    check_op("x: f32[10,8]", "slice(x, axes=[0], starts=[-8], ends=[-1], steps=[2])");
    check_op("x: f32[10,8]", "slice(x, axes=[1,0], starts=[1,0], ends=[100,5], steps=[3,1])");
    check_op("x: f32[10,8]", "slice(x, axes=[-1], starts=[-100], ends=[3])");
    check_op("x: i32[4,5,6]", "slice(x, axes=[2,0], starts=[1,1], ends=[6,3], steps=[2,1])");
    // An empty slice: nothing to write.
    check_op("x: f32[10,8]", "slice(x, axes=[0], starts=[5], ends=[2])");
}

#[test]
fn pad_in_all_three_modes() {
    check_op("x: f32[3,4]", "pad(x, pads=[1,2,0,3], mode=constant, value=1.5)");
    check_op("x: f32[3,4]", "pad(x, pads=[1,2,0,3])");
    check_op("x: i32[3,4]", "pad(x, pads=[0,1,2,0], value=-3)");
    check_op("x: f32[4,5]", "pad(x, pads=[2,1,2,1], mode=reflect)");
    check_op("x: f32[3,4,5]", "pad(x, pads=[0,1,2,1,0,2], mode=reflect)");
    check_op("x: f32[3,4,5]", "pad(x, pads=[0,1,2,1,0,2], mode=edge)");
    check_op("x: f32[2,4]", "pad(x, pads=[3,0,4,5], mode=edge)");
    check_op("x: f32[6]", "pad(x, pads=[5,5], mode=reflect)");
    check_op("x: f32[2,3]", "pad(x, pads=[0,0,0,0], mode=reflect)");
    check_op("x: f32[4,64,200]", "pad(x, pads=[0,1,1,0,1,1], value=0.5)");
}
