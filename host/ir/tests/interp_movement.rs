//! The reference interpreter's data movement (reshape, transpose, concat, slice, pad) against
//! hand-written results.

mod interp_util;
use interp_util::*;

fn unary_graph(input: &str, expr: &str, out: &str) -> String {
    format!("graph g(x: {input}) -> (y: {out}) {{\n  %0 = {expr}\n  return %0\n}}\n")
}

#[test]
fn reshape_resolves_minus_one_and_keeps_order() {
    let x = iota(6);
    for (expr, out, shape) in [
        ("reshape(x, shape=[3,-1])", "f32[3,2]", &[3, 2][..]),
        ("reshape(x, shape=[-1])", "f32[6]", &[6][..]),
        ("reshape(x, shape=[1,-1,3])", "f32[1,2,3]", &[1, 2, 3][..]),
        ("reshape(x, shape=[6,1])", "f32[6,1]", &[6, 1][..]),
    ] {
        assert_exact(&eval1(&unary_graph("f32[2,3]", expr, out), &[("x", &x)]), shape, &x);
    }
    // i32 data is moved as is.
    let g = unary_graph("i32[4]", "reshape(x, shape=[2,2])", "i32[2,2]");
    assert_exact(&eval1(&g, &[("x", &[4.0, -3.0, 2.0, 1.0])]), &[2, 2], &[4.0, -3.0, 2.0, 1.0]);
}

#[test]
fn transpose_2d_and_3d() {
    // [[0,1,2],[3,4,5]]^T.
    let g = unary_graph("f32[2,3]", "transpose(x, perm=[1,0])", "f32[3,2]");
    assert_exact(&eval1(&g, &[("x", &iota(6))]), &[3, 2], &[0.0, 3.0, 1.0, 4.0, 2.0, 5.0]);

    // perm [2,0,1]: out[k,i,j] = x[i,j,k] = 12i + 4j + k.
    let g = unary_graph("f32[2,3,4]", "transpose(x, perm=[2,0,1])", "f32[4,2,3]");
    #[rustfmt::skip]
    let want = [
        0.0, 4.0, 8.0, 12.0, 16.0, 20.0,
        1.0, 5.0, 9.0, 13.0, 17.0, 21.0,
        2.0, 6.0, 10.0, 14.0, 18.0, 22.0,
        3.0, 7.0, 11.0, 15.0, 19.0, 23.0,
    ];
    assert_exact(&eval1(&g, &[("x", &iota(24))]), &[4, 2, 3], &want);

    // perm [1,0,2] swaps the leading axes and keeps rows of 4 together:
    // out[j,i,:] = x[i,j,:].
    let g = unary_graph("f32[2,3,4]", "transpose(x, perm=[1,0,2])", "f32[3,2,4]");
    let out = eval1(&g, &[("x", &iota(24))]);
    let rows = [0, 3, 1, 4, 2, 5]; // (j, i) in order -> the row 3i + j of x
    let want: Vec<f64> = rows.iter().flat_map(|r| (0..4).map(move |k| (r * 4 + k) as f64)).collect();
    assert_exact(&out, &[3, 2, 4], &want);
}

#[test]
fn concat_on_each_axis() {
    // [[1],[2]] ++ [[3,4],[5,6]] on axis 1.
    let g =
        "graph g(a: f32[2,1], b: f32[2,2]) -> (y: f32[2,3]) {\n  %0 = concat(a, b, axis=1)\n  return %0\n}\n";
    let out = eval1(g, &[("a", &[1.0, 2.0]), ("b", &[3.0, 4.0, 5.0, 6.0])]);
    assert_exact(&out, &[2, 3], &[1.0, 3.0, 4.0, 2.0, 5.0, 6.0]);
    // The same with a negative axis.
    let g = "graph g(a: f32[2,1], b: f32[2,2]) -> (y: f32[2,3]) {\n  %0 = concat(a, b, axis=-1)\n  return %0\n}\n";
    let out = eval1(g, &[("a", &[1.0, 2.0]), ("b", &[3.0, 4.0, 5.0, 6.0])]);
    assert_exact(&out, &[2, 3], &[1.0, 3.0, 4.0, 2.0, 5.0, 6.0]);
    // Axis 0 with three i32 inputs.
    let g = "graph g(a: i32[1,2], b: i32[2,2], c: i32[1,2]) -> (y: i32[4,2]) {
  %0 = concat(a, b, c, axis=0)
  return %0
}
";
    let out = eval1(g, &[("a", &[1.0, 2.0]), ("b", &[3.0, 4.0, 5.0, 6.0]), ("c", &[7.0, 8.0])]);
    assert_exact(&out, &[4, 2], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]);
    // The middle axis of rank 3: out[i] = a[i] rows then b[i] rows.
    let g = "graph g(a: f32[2,1,2], b: f32[2,2,2]) -> (y: f32[2,3,2]) {\n  %0 = concat(a, b, axis=1)\n  return %0\n}\n";
    let out =
        eval1(g, &[("a", &[1.0, 2.0, 3.0, 4.0]), ("b", &[10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0])]);
    assert_exact(&out, &[2, 3, 2], &[1.0, 2.0, 10.0, 11.0, 12.0, 13.0, 3.0, 4.0, 14.0, 15.0, 16.0, 17.0]);
}

#[test]
fn slice_negative_clamped_and_stepped() {
    let x = iota(10);
    for (attrs, out, want) in [
        ("starts=[-3], ends=[10]", "f32[3]", &[7.0, 8.0, 9.0][..]),
        ("starts=[1], ends=[8], steps=[2]", "f32[4]", &[1.0, 3.0, 5.0, 7.0][..]),
        // Out-of-range bounds clamp to [0, 10].
        ("starts=[-100], ends=[100], steps=[3]", "f32[4]", &[0.0, 3.0, 6.0, 9.0][..]),
        ("starts=[-4], ends=[-1], steps=[2]", "f32[2]", &[6.0, 8.0][..]),
        ("starts=[2], ends=[3]", "f32[1]", &[2.0][..]),
    ] {
        let g = unary_graph("f32[10]", &format!("slice(x, axes=[0], {attrs})"), out);
        let got = eval1(&g, &[("x", &x)]);
        assert_exact(&got, &[want.len()], want);
    }
}

#[test]
fn slice_on_chosen_axes_of_a_matrix() {
    // x = [[0,1,2,3],[4,5,6,7],[8,9,10,11]].
    let x = iota(12);
    let g = unary_graph("f32[3,4]", "slice(x, axes=[-1], starts=[1], ends=[4], steps=[2])", "f32[3,2]");
    assert_exact(&eval1(&g, &[("x", &x)]), &[3, 2], &[1.0, 3.0, 5.0, 7.0, 9.0, 11.0]);
    // Rows 1..3 and columns 0, 3 (step 3), the axes listed in reverse order.
    let g =
        unary_graph("f32[3,4]", "slice(x, axes=[1,0], starts=[0,1], ends=[4,3], steps=[3,1])", "f32[2,2]");
    assert_exact(&eval1(&g, &[("x", &x)]), &[2, 2], &[4.0, 7.0, 8.0, 11.0]);
}

#[test]
fn pad_constant_reflect_edge_1d() {
    let x = [1.0, 2.0, 3.0];
    let run = |expr: &str, out: &str| eval1(&unary_graph("f32[3]", expr, out), &[("x", &x)]);
    assert_exact(
        &run("pad(x, pads=[2,1], mode=constant, value=9)", "f32[6]"),
        &[6],
        &[9.0, 9.0, 1.0, 2.0, 3.0, 9.0],
    );
    // Default: constant 0.
    assert_exact(&run("pad(x, pads=[1,0])", "f32[4]"), &[4], &[0.0, 1.0, 2.0, 3.0]);
    // Reflect mirrors without repeating the border, at both ends.
    assert_exact(
        &run("pad(x, pads=[2,2], mode=reflect)", "f32[7]"),
        &[7],
        &[3.0, 2.0, 1.0, 2.0, 3.0, 2.0, 1.0],
    );
    // Edge repeats the border element.
    assert_exact(
        &run("pad(x, pads=[2,3], mode=edge)", "f32[8]"),
        &[8],
        &[1.0, 1.0, 1.0, 2.0, 3.0, 3.0, 3.0, 3.0],
    );
}

#[test]
fn pad_2d_modes() {
    // x = [[1,2,3],[4,5,6]].
    let x = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
    // pads: begins [1,2], ends [1,2]. Rows map -1->1, 0, 1, 2->0; columns -2->2, -1->1, 0..2,
    // 3->1, 4->0.
    let g = unary_graph("f32[2,3]", "pad(x, pads=[1,2,1,2], mode=reflect)", "f32[4,7]");
    #[rustfmt::skip]
    let want = [
        6.0, 5.0, 4.0, 5.0, 6.0, 5.0, 4.0,
        3.0, 2.0, 1.0, 2.0, 3.0, 2.0, 1.0,
        6.0, 5.0, 4.0, 5.0, 6.0, 5.0, 4.0,
        3.0, 2.0, 1.0, 2.0, 3.0, 2.0, 1.0,
    ];
    assert_exact(&eval1(&g, &[("x", &x)]), &[4, 7], &want);
    // Edge: one row on top, one column on the right.
    let g = unary_graph("f32[2,3]", "pad(x, pads=[1,0,0,1], mode=edge)", "f32[3,4]");
    let want = [1.0, 2.0, 3.0, 3.0, 1.0, 2.0, 3.0, 3.0, 4.0, 5.0, 6.0, 6.0];
    assert_exact(&eval1(&g, &[("x", &x)]), &[3, 4], &want);
    // Constant on an i32 tensor, one column on the left.
    let g = unary_graph("i32[2,3]", "pad(x, pads=[0,1,0,0], value=-1)", "i32[2,4]");
    let want = [-1.0, 1.0, 2.0, 3.0, -1.0, 4.0, 5.0, 6.0];
    assert_exact(&eval1(&g, &[("x", &x)]), &[2, 4], &want);
}
