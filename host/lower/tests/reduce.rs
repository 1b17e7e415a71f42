//! Reductions, argmax, softmax and log_softmax lowered under both schedules match the L0
//! reference, over several axes (negative ones included), with and without keepdims, for the
//! layouts where the last axis is reduced and where it is kept (tiled when long).

mod support;
use support::*;

#[test]
fn every_reduction_over_axis_sets() {
    for op in ["sum", "mean", "max", "min"] {
        for (axes, keep) in [
            ("[1]", false),
            ("[-1]", false),
            ("[2]", true),
            ("[0,2]", false),
            ("[-3,-1]", true),
            ("[0,1,2]", false),
            ("[0,1,2]", true),
            ("[0]", false),
        ] {
            check_op("x: f32[3,4,5]", &format!("{op}(x, axes={axes}, keepdims={keep})"));
        }
    }
}

#[test]
fn reductions_of_i32() {
    for op in ["sum", "max", "min"] {
        check_op("x: i32[4,6] = randint(-50, 50)", &format!("{op}(x, axes=[0])"));
        check_op("x: i32[4,6] = randint(-50, 50)", &format!("{op}(x, axes=[1], keepdims=true)"));
    }
}

#[test]
fn reductions_over_long_and_large_rows() {
    // Last axis kept and longer than one tile: full tiles plus a remainder tile.
    check_op("x: f32[3,4,600]", "sum(x, axes=[1])");
    check_op("x: f32[3,4,600]", "max(x, axes=[0,1], keepdims=true)");
    // Enough work for threads, reducing the contiguous axis.
    check_op("x: f32[64,2000]", "mean(x, axes=[-1])");
    check_op("x: f32[2000,64]", "min(x, axes=[0])");
    check_op("x: f32[1,1,5]", "sum(x, axes=[2])");
}

#[test]
fn global_average_pool_is_a_mean_over_the_plane() {
    check_op("x: f32[2,3,5,7]", "global_avg_pool2d(x)");
    check_op("x: f32[1,64,28,28]", "global_avg_pool2d(x)");
}

#[test]
fn argmax_over_each_axis() {
    // Few distinct values, so ties are common: the first maximum must win.
    let x = "x: i32[4,5,6] = randint(0, 3)";
    for (axis, keep) in [(0, false), (1, true), (2, false), (-1, true), (-2, false)] {
        check_op(x, &format!("argmax(x, axis={axis}, keepdims={keep})"));
        check_op("x: f32[4,5,6]", &format!("argmax(x, axis={axis}, keepdims={keep})"));
    }
    check_op("x: f32[3,4,600]", "argmax(x, axis=1)");
    // NaN counts as the largest value: the first NaN wins (log of negative inputs makes some).
    for axis in [0, 1] {
        check_graph(&graph(&format!(
            "graph g(x: f32[6,7]) -> (y: f32[0]) {{\n  %0 = log(x)\n  %1 = argmax(%0, axis={axis})\n  return %1\n}}\n"
        )));
    }
    check_op("x: f32[7]", "argmax(x, axis=0)");
}

#[test]
fn softmax_and_log_softmax_over_each_axis() {
    for op in ["softmax", "log_softmax"] {
        for axis in [-1, 0, 1, 2] {
            check_op("x: f32[3,4,5] = uniform(-5, 5)", &format!("{op}(x, axis={axis})"));
        }
        check_op("x: f32[2,5,600]", &format!("{op}(x, axis=1)"));
        check_op("x: f32[128,257]", &format!("{op}(x)"));
        check_op("x: f32[9]", &format!("{op}(x, axis=0)"));
        // Rows spanning more than 125 ln2: the default schedule's `exp_ftz` flushes their
        // smallest terms to 0.
        check_op("x: f32[6,300] = uniform(-150, 150)", &format!("{op}(x)"));
        check_op("x: f32[5,40,3] = uniform(-150, 150)", &format!("{op}(x, axis=1)"));
        // NaN in a row (log of its negative inputs) makes the whole row NaN, whichever way the
        // maximum treats it; rows long enough for the lane partials, and short ones.
        for shape in ["f32[6,300]", "f32[6,7]"] {
            check_graph(&graph(&format!(
                "graph g(x: {shape}) -> (y: f32[0]) {{\n  %0 = log(x)\n  %1 = {op}(%0)\n  return %1\n}}\n"
            )));
        }
    }
}
