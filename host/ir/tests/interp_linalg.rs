//! The reference interpreter's matmul, linear, conv2d and pooling against hand-computed values,
//! with the border cases: padding, stride, dilation, groups, transposes, batch broadcasting.

mod interp_util;
use interp_util::*;

fn graph2(op: &str, a: &str, b: &str, out: &str) -> String {
    format!("graph g(a: {a}, b: {b}) -> (y: {out}) {{\n  %0 = {op}\n  return %0\n}}\n")
}

/// `[[1,2,3],[4,5,6]] @ [[7,8],[9,10],[11,12]] = [[58,64],[139,154]]`.
const A23: [f64; 6] = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
const B32: [f64; 6] = [7.0, 8.0, 9.0, 10.0, 11.0, 12.0];
const AB: [f64; 4] = [58.0, 64.0, 139.0, 154.0];

#[test]
fn matmul_plain_and_transposed() {
    let g = graph2("matmul(a, b)", "f32[2,3]", "f32[3,2]", "f32[2,2]");
    assert_close(&eval1(&g, &[("a", &A23), ("b", &B32)]), &[2, 2], &AB);
    // The same product with a stored transposed ([3,2] = a^T) and/or b stored transposed.
    let (at, bt) = ([1.0, 4.0, 2.0, 5.0, 3.0, 6.0], [7.0, 9.0, 11.0, 8.0, 10.0, 12.0]);
    let g = graph2("matmul(a, b, transpose_a=true)", "f32[3,2]", "f32[3,2]", "f32[2,2]");
    assert_close(&eval1(&g, &[("a", &at), ("b", &B32)]), &[2, 2], &AB);
    let g = graph2("matmul(a, b, transpose_b=true)", "f32[2,3]", "f32[2,3]", "f32[2,2]");
    assert_close(&eval1(&g, &[("a", &A23), ("b", &bt)]), &[2, 2], &AB);
    let g = graph2("matmul(a, b, transpose_a=true, transpose_b=true)", "f32[3,2]", "f32[2,3]", "f32[2,2]");
    assert_close(&eval1(&g, &[("a", &at), ("b", &bt)]), &[2, 2], &AB);
    // Non-square output: [3,2] @ [2,3] = b32 @ a23.
    let g = graph2("matmul(a, b)", "f32[3,2]", "f32[2,3]", "f32[3,3]");
    #[rustfmt::skip]
    let want = [
        7.0 + 32.0, 14.0 + 40.0, 21.0 + 48.0,
        9.0 + 40.0, 18.0 + 50.0, 27.0 + 60.0,
        11.0 + 48.0, 22.0 + 60.0, 33.0 + 72.0,
    ];
    assert_close(&eval1(&g, &[("a", &B32), ("b", &A23)]), &[3, 3], &want);
}

#[test]
fn matmul_batch_broadcasting() {
    // a0 = [[1,2],[3,4]], a1 = [[0,1],[1,0]]; b = [[5,6],[7,8]] is shared by both.
    let a = [1.0, 2.0, 3.0, 4.0, 0.0, 1.0, 1.0, 0.0];
    let b = [5.0, 6.0, 7.0, 8.0];
    let want = [19.0, 22.0, 43.0, 50.0, 7.0, 8.0, 5.0, 6.0];
    let g = graph2("matmul(a, b)", "f32[2,2,2]", "f32[2,2]", "f32[2,2,2]");
    assert_close(&eval1(&g, &[("a", &a), ("b", &b)]), &[2, 2, 2], &want);
    // The same with b stored transposed.
    let g = graph2("matmul(a, b, transpose_b=true)", "f32[2,2,2]", "f32[2,2]", "f32[2,2,2]");
    assert_close(&eval1(&g, &[("a", &a), ("b", &[5.0, 7.0, 6.0, 8.0])]), &[2, 2, 2], &want);

    // The batch on the right: [2,3] @ [2,3,2]; b1 = [[1,0],[0,1],[1,1]].
    let b = [7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 1.0, 0.0, 0.0, 1.0, 1.0, 1.0];
    let g = graph2("matmul(a, b)", "f32[2,3]", "f32[2,3,2]", "f32[2,2,2]");
    assert_close(
        &eval1(&g, &[("a", &A23), ("b", &b)]),
        &[2, 2, 2],
        &[58.0, 64.0, 139.0, 154.0, 4.0, 5.0, 10.0, 11.0],
    );

    // [2,1,2,2] @ [3,2,2] -> [2,3,2,2]: out[i][j] = a_i @ b_j with b0 = I, b1 = [[5,6],[7,8]],
    // b2 = 2I.
    let b = [1.0, 0.0, 0.0, 1.0, 5.0, 6.0, 7.0, 8.0, 2.0, 0.0, 0.0, 2.0];
    let g = graph2("matmul(a, b)", "f32[2,1,2,2]", "f32[3,2,2]", "f32[2,3,2,2]");
    #[rustfmt::skip]
    let want = [
        1.0, 2.0, 3.0, 4.0,  19.0, 22.0, 43.0, 50.0,  2.0, 4.0, 6.0, 8.0,
        0.0, 1.0, 1.0, 0.0,  7.0, 8.0, 5.0, 6.0,      0.0, 2.0, 2.0, 0.0,
    ];
    assert_close(&eval1(&g, &[("a", &a), ("b", &b)]), &[2, 3, 2, 2], &want);
}

#[test]
fn linear_with_and_without_bias() {
    // x @ w^T with w = [[1,0,-1],[2,1,0]]: rows [1,2,3] -> [-2,4], [4,5,6] -> [-2,13].
    let w = [1.0, 0.0, -1.0, 2.0, 1.0, 0.0];
    let g = "graph g(x: f32[2,3], w: f32[2,3]) -> (y: f32[2,2]) {\n  %0 = linear(x, w)\n  return %0\n}\n";
    assert_close(&eval1(g, &[("x", &A23), ("w", &w)]), &[2, 2], &[-2.0, 4.0, -2.0, 13.0]);
    let g = "graph g(x: f32[2,1,3], w: f32[2,3], b: f32[2]) -> (y: f32[2,1,2]) {
  %0 = linear(x, w, b)
  return %0
}
";
    let out = eval1(g, &[("x", &A23), ("w", &w), ("b", &[10.0, 20.0])]);
    assert_close(&out, &[2, 1, 2], &[8.0, 24.0, 8.0, 33.0]);
    // A vector input.
    let g = "graph g(x: f32[3], w: f32[2,3]) -> (y: f32[2]) {\n  %0 = linear(x, w)\n  return %0\n}\n";
    assert_close(&eval1(g, &[("x", &[1.0, 2.0, 3.0]), ("w", &w)]), &[2], &[-2.0, 4.0]);
}

fn conv_graph(x: &str, w: &str, out: &str, attrs: &str, bias: Option<&str>) -> String {
    let (bdecl, barg) = match bias {
        Some(t) => (format!(", b: {t}"), ", b"),
        None => (String::new(), ""),
    };
    format!(
        "graph g(x: {x}, w: {w}{bdecl}) -> (y: {out}) {{\n  %0 = conv2d(x, w{barg}{attrs})\n  return %0\n}}\n"
    )
}

/// `[[1,2,3],[4,5,6],[7,8,9]]`.
fn x33() -> Vec<f64> {
    (1..=9).map(f64::from).collect()
}

/// `x[i][j] = 4i + j + 1` on 4x4.
fn x44() -> Vec<f64> {
    (1..=16).map(f64::from).collect()
}

#[test]
fn conv2d_valid_with_bias() {
    // w = [[1,2],[3,4]]: y[0,0] = 1 + 4 + 12 + 20 = 37, y[0,1] = 2 + 6 + 15 + 24 = 47,
    // y[1,0] = 4 + 10 + 21 + 32 = 67, y[1,1] = 5 + 12 + 24 + 36 = 77; then + 0.5.
    let g = conv_graph("f32[1,1,3,3]", "f32[1,1,2,2]", "f32[1,1,2,2]", "", Some("f32[1]"));
    let out = eval1(&g, &[("x", &x33()), ("w", &[1.0, 2.0, 3.0, 4.0]), ("b", &[0.5])]);
    assert_close(&out, &[1, 1, 2, 2], &[37.5, 47.5, 67.5, 77.5]);
}

#[test]
fn conv2d_padding_contributes_zero() {
    // A 3x3 box sum with pad 1: corners sum 4 elements, edges 6, the centre 9.
    let g = conv_graph("f32[1,1,3,3]", "f32[1,1,3,3]", "f32[1,1,3,3]", ", pad=[1,1,1,1]", None);
    let out = eval1(&g, &[("x", &x33()), ("w", &[1.0; 9])]);
    assert_close(&out, &[1, 1, 3, 3], &[12.0, 21.0, 16.0, 27.0, 45.0, 33.0, 24.0, 39.0, 28.0]);

    // Asymmetric: top 0, left 1, bottom 1, right 0 with a 2x2 box: y[oh,ow] sums rows oh, oh+1
    // and columns ow-1, ow of x (those inside).
    let g = conv_graph("f32[1,1,3,3]", "f32[1,1,2,2]", "f32[1,1,3,3]", ", pad=[0,1,1,0]", None);
    let out = eval1(&g, &[("x", &x33()), ("w", &[1.0; 4])]);
    assert_close(&out, &[1, 1, 3, 3], &[5.0, 12.0, 16.0, 11.0, 24.0, 28.0, 7.0, 15.0, 17.0]);
}

#[test]
fn conv2d_stride_and_stride_with_padding() {
    // 2x2 box, stride 2 on 4x4: the four 2x2 block sums.
    let g = conv_graph("f32[1,1,4,4]", "f32[1,1,2,2]", "f32[1,1,2,2]", ", stride=[2,2]", None);
    assert_close(&eval1(&g, &[("x", &x44()), ("w", &[1.0; 4])]), &[1, 1, 2, 2], &[14.0, 22.0, 46.0, 54.0]);

    // 3x3 box, stride 2, pad 1: OH = floor((4 + 2 - 3) / 2) + 1 = 2. Windows cover rows {0,1}
    // and {1,2,3}, the same for columns.
    let g = conv_graph("f32[1,1,4,4]", "f32[1,1,3,3]", "f32[1,1,2,2]", ", stride=[2,2], pad=[1,1,1,1]", None);
    assert_close(&eval1(&g, &[("x", &x44()), ("w", &[1.0; 9])]), &[1, 1, 2, 2], &[14.0, 30.0, 57.0, 99.0]);

    // Different strides per axis: stride [1,2], 1x1 kernel of weight 1 picks columns 0 and 2.
    let g = conv_graph("f32[1,1,2,4]", "f32[1,1,1,1]", "f32[1,1,2,2]", ", stride=[1,2]", None);
    let out = eval1(&g, &[("x", &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]), ("w", &[1.0])]);
    assert_close(&out, &[1, 1, 2, 2], &[1.0, 3.0, 5.0, 7.0]);
}

#[test]
fn conv2d_dilation() {
    // w = [[1,2],[3,4]] dilated by 2 spans 3x3: y = x[i,j] + 2x[i,j+2] + 3x[i+2,j] + 4x[i+2,j+2]
    // = 10 x[i,j] + 2*2 + 3*8 + 4*10 = 10 x[i,j] + 68 on x[i,j] = 4i + j + 1.
    let g = conv_graph("f32[1,1,4,4]", "f32[1,1,2,2]", "f32[1,1,2,2]", ", dilation=[2,2]", None);
    let out = eval1(&g, &[("x", &x44()), ("w", &[1.0, 2.0, 3.0, 4.0])]);
    assert_close(&out, &[1, 1, 2, 2], &[78.0, 88.0, 118.0, 128.0]);
}

#[test]
fn conv2d_groups_and_batch() {
    // Channels [1,2,3,4] per image; groups=2: outputs 0,1 read channels 0,1 and outputs 2,3 read
    // channels 2,3, each with weights [1,1] or [1,-1]; bias 10 on output 3.
    let g = conv_graph("f32[2,4,1,1]", "f32[4,2,1,1]", "f32[2,4,1,1]", ", groups=2", Some("f32[4]"));
    let x = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0];
    let w = [1.0, 1.0, 1.0, -1.0, 1.0, 1.0, 1.0, -1.0];
    let out = eval1(&g, &[("x", &x), ("w", &w), ("b", &[0.0, 0.0, 0.0, 10.0])]);
    assert_close(&out, &[2, 4, 1, 1], &[3.0, -1.0, 7.0, 9.0, 11.0, -1.0, 15.0, 9.0]);
}

/// `conv2d`'s formula computed one output at a time, in its order of terms (bias, then input
/// channel, kernel row, kernel column), for the grid test below.
#[allow(clippy::too_many_arguments)]
fn conv_by_formula(
    x: &[f64],
    [n, c, h, wd]: [usize; 4],
    w: &[f64],
    [oc, kh, kw]: [usize; 3],
    b: &[f64],
    [sh, sw, dh, dw, top, left, groups]: [usize; 7],
    [oh, ow]: [usize; 2],
) -> Vec<f64> {
    let (icg, ocg) = (c / groups, oc / groups);
    let mut out = Vec::new();
    for nn in 0..n {
        for o in 0..oc {
            for y in 0..oh {
                for xo in 0..ow {
                    let mut acc = b[o];
                    for ic in 0..icg {
                        for r in 0..kh {
                            for s in 0..kw {
                                let (ih, iw) = (
                                    (y * sh + r * dh) as isize - top as isize,
                                    (xo * sw + s * dw) as isize - left as isize,
                                );
                                if ih < 0 || iw < 0 || ih >= h as isize || iw >= wd as isize {
                                    continue;
                                }
                                let ch = o / ocg * icg + ic;
                                acc += x[((nn * c + ch) * h + ih as usize) * wd + iw as usize]
                                    * w[((o * icg + ic) * kh + r) * kw + s];
                            }
                        }
                    }
                    out.push(acc);
                }
            }
        }
    }
    out
}

#[test]
fn conv2d_agrees_with_its_formula_bit_for_bit_over_strides_pads_dilations_and_groups() {
    // Inexact values with signs, so the sums round: equal bits mean the same terms added in the
    // same order.
    let val = |i: usize, k: usize| ((i * k + 7) % 13) as f64 * 0.37 - 2.1;
    for &(sh, sw, dh, dw, pad, groups, kh, kw) in &[
        (1, 1, 1, 1, [0, 0, 0, 0], 1, 3, 3),
        (2, 2, 1, 1, [1, 1, 1, 1], 1, 3, 3),
        (1, 2, 2, 1, [2, 0, 1, 3], 2, 3, 2),
        (3, 1, 1, 3, [0, 2, 2, 0], 4, 2, 3),
        (2, 3, 2, 2, [3, 3, 3, 3], 1, 1, 4),
        (1, 1, 1, 1, [5, 5, 5, 5], 2, 1, 1),
    ] {
        let (n, c, h, wd, oc) = (2, 4, 7, 9, 4);
        let [top, left, bottom, right] = pad;
        let oh = (h + top + bottom - (dh * (kh - 1) + 1)) / sh + 1;
        let ow = (wd + left + right - (dw * (kw - 1) + 1)) / sw + 1;
        let icg = c / groups;
        let x: Vec<f64> = (0..n * c * h * wd).map(|i| val(i, 5)).collect();
        let w: Vec<f64> = (0..oc * icg * kh * kw).map(|i| val(i, 3)).collect();
        let b: Vec<f64> = (0..oc).map(|i| val(i, 11)).collect();
        let attrs = format!(
            ", stride=[{sh},{sw}], dilation=[{dh},{dw}], pad=[{top},{left},{bottom},{right}], groups={groups}"
        );
        let g = conv_graph(
            &format!("f32[{n},{c},{h},{wd}]"),
            &format!("f32[{oc},{icg},{kh},{kw}]"),
            &format!("f32[{n},{oc},{oh},{ow}]"),
            &attrs,
            Some(&format!("f32[{oc}]")),
        );
        let got = eval1(&g, &[("x", &x), ("w", &w), ("b", &b)]);
        let want = conv_by_formula(
            &x,
            [n, c, h, wd],
            &w,
            [oc, kh, kw],
            &b,
            [sh, sw, dh, dw, top, left, groups],
            [oh, ow],
        );
        assert_eq!(got.ty.shape, vec![n, oc, oh, ow], "{attrs}");
        assert_eq!(got.data, want, "{attrs}");
    }
}

#[test]
fn conv2d_depthwise_with_padding() {
    // groups = channels = 2, pad 1, 2x2 kernels -> 3x3 outputs.
    // Channel 0 [[1,2],[3,4]] with w0 = [[1,0],[0,0]]: y[i,j] = x[i-1,j-1].
    // Channel 1 [[10,20],[30,40]] with w1 = [[0,0],[0,1]]: y[i,j] = x[i,j].
    let g = conv_graph("f32[1,2,2,2]", "f32[2,1,2,2]", "f32[1,2,3,3]", ", pad=[1,1,1,1], groups=2", None);
    let x = [1.0, 2.0, 3.0, 4.0, 10.0, 20.0, 30.0, 40.0];
    let w = [1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0];
    #[rustfmt::skip]
    let want = [
        0.0, 0.0, 0.0,  0.0, 1.0, 2.0,  0.0, 3.0, 4.0,
        10.0, 20.0, 0.0,  30.0, 40.0, 0.0,  0.0, 0.0, 0.0,
    ];
    assert_close(&eval1(&g, &[("x", &x), ("w", &w)]), &[1, 2, 3, 3], &want);
}

#[test]
fn conv2d_sums_over_input_channels() {
    // Two input channels, two output channels, 1x1 kernels: y[o] = sum_c w[o,c] x[c].
    let g = conv_graph("f32[1,2,1,2]", "f32[2,2,1,1]", "f32[1,2,1,2]", "", None);
    let out = eval1(&g, &[("x", &[1.0, 2.0, 10.0, 20.0]), ("w", &[1.0, 1.0, 2.0, -1.0])]);
    assert_close(&out, &[1, 2, 1, 2], &[11.0, 22.0, -8.0, -16.0]);
}

fn pool_graph(op: &str, input: &str, out: &str) -> String {
    format!("graph g(x: {input}) -> (y: {out}) {{\n  %0 = {op}\n  return %0\n}}\n")
}

#[test]
fn max_pool_plain_and_default_stride() {
    let g = pool_graph("max_pool2d(x, kernel=[2,2], stride=[2,2])", "f32[1,1,4,4]", "f32[1,1,2,2]");
    assert_close(&eval1(&g, &[("x", &x44())]), &[1, 1, 2, 2], &[6.0, 8.0, 14.0, 16.0]);
    // The stride defaults to the kernel.
    let g = pool_graph("max_pool2d(x, kernel=[2,2])", "f32[1,1,4,4]", "f32[1,1,2,2]");
    assert_close(&eval1(&g, &[("x", &x44())]), &[1, 1, 2, 2], &[6.0, 8.0, 14.0, 16.0]);
    // Overlapping windows: kernel 2, stride 1 on 3x3.
    let g = pool_graph("max_pool2d(x, kernel=[2,2], stride=[1,1])", "f32[1,1,3,3]", "f32[1,1,2,2]");
    assert_close(
        &eval1(&g, &[("x", &[9.0, 1.0, 2.0, 3.0, 4.0, 8.0, 5.0, 6.0, 7.0])]),
        &[1, 1, 2, 2],
        &[9.0, 8.0, 6.0, 8.0],
    );
}

#[test]
fn max_pool_padding_never_wins() {
    // x = -(4i + j + 1): all negative, so a padded 0 would win if it were counted.
    // kernel 2, stride 2, pad 1 -> 3x3; windows cover rows {0}, {1,2}, {3} (same for columns).
    let x: Vec<f64> = x44().iter().map(|v| -v).collect();
    let g = pool_graph(
        "max_pool2d(x, kernel=[2,2], stride=[2,2], pad=[1,1,1,1])",
        "f32[1,1,4,4]",
        "f32[1,1,3,3]",
    );
    let want = [-1.0, -2.0, -4.0, -5.0, -6.0, -8.0, -13.0, -14.0, -16.0];
    assert_close(&eval1(&g, &[("x", &x)]), &[1, 1, 3, 3], &want);
    // The same windows on the positive values.
    let want = [1.0, 3.0, 4.0, 9.0, 11.0, 12.0, 13.0, 15.0, 16.0];
    assert_close(&eval1(&g, &[("x", &x44())]), &[1, 1, 3, 3], &want);
}

#[test]
fn avg_pool_count_include_pad_both_ways() {
    // 3x3 windows, stride 1, pad 1 on [[1..3],[4..6],[7..9]]: the box sums are
    // [12,21,16,27,45,33,24,39,28].
    let g = pool_graph(
        "avg_pool2d(x, kernel=[3,3], stride=[1,1], pad=[1,1,1,1])",
        "f32[1,1,3,3]",
        "f32[1,1,3,3]",
    );
    let sums = [12.0, 21.0, 16.0, 27.0, 45.0, 33.0, 24.0, 39.0, 28.0];
    // Default count_include_pad=true: always divided by 9.
    let want: Vec<f64> = sums.iter().map(|s| s / 9.0).collect();
    assert_close(&eval1(&g, &[("x", &x33())]), &[1, 1, 3, 3], &want);
    // count_include_pad=false: corners divide by 4, edges by 6, the centre by 9.
    let g = pool_graph(
        "avg_pool2d(x, kernel=[3,3], stride=[1,1], pad=[1,1,1,1], count_include_pad=false)",
        "f32[1,1,3,3]",
        "f32[1,1,3,3]",
    );
    assert_close(&eval1(&g, &[("x", &x33())]), &[1, 1, 3, 3], &[3.0, 3.5, 4.0, 4.5, 5.0, 5.5, 6.0, 6.5, 7.0]);
}

#[test]
fn avg_pool_without_padding_and_over_channels() {
    let g = pool_graph("avg_pool2d(x, kernel=[2,2])", "f32[1,1,4,4]", "f32[1,1,2,2]");
    assert_close(&eval1(&g, &[("x", &x44())]), &[1, 1, 2, 2], &[3.5, 5.5, 11.5, 13.5]);
    // Two images of two channels: each plane pooled separately.
    let g = pool_graph("avg_pool2d(x, kernel=[1,2])", "f32[2,2,1,2]", "f32[2,2,1,1]");
    let x = [1.0, 2.0, 3.0, 5.0, 10.0, 20.0, -1.0, -2.0];
    assert_close(&eval1(&g, &[("x", &x)]), &[2, 2, 1, 1], &[1.5, 4.0, 15.0, -1.5]);
}

#[test]
fn global_avg_pool() {
    let g = pool_graph("global_avg_pool2d(x)", "f32[1,2,2,2]", "f32[1,2,1,1]");
    let out = eval1(&g, &[("x", &[1.0, 2.0, 3.0, 4.0, 10.0, 20.0, 30.0, 41.0])]);
    assert_close(&out, &[1, 2, 1, 1], &[2.5, 25.25]);
}
