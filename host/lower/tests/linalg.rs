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
fn linear_with_and_without_bias() {
    check_op("x: f32[3,6], w: f32[5,6], b: f32[5]", "linear(x, w, b)");
    check_op("x: f32[3,6], w: f32[5,6]", "linear(x, w)");
    check_op("x: f32[2,3,6], w: f32[5,6], b: f32[5]", "linear(x, w, b)");
    check_op("x: f32[6], w: f32[5,6], b: f32[5]", "linear(x, w, b)");
    // Threads over row tiles, and (a single row) over column tiles.
    check_op("x: f32[66,128], w: f32[98,128], b: f32[98]", "linear(x, w, b)");
    check_op("x: f32[1,256], w: f32[514,256], b: f32[514]", "linear(x, w, b)");
}
