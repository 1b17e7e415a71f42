//! The reference interpreter's comparison, selection and indexing operators: `less` and the other
//! comparisons, `where`, `iota`, `expand`, `gather` and `cumsum`.
//!
//! What it keeps true (besides the parent module's rules):
//! - comparisons are exact on the f64 values (a NaN compares false, even with itself) and give
//!   i32 1 or 0; `where` takes `a` exactly where the condition is nonzero;
//! - `gather` wraps a negative index once (ONNX), and any index still outside the axis is a
//!   diagnostic naming the index, its position among the indices and the axis size;
//! - `cumsum` adds in order along the axis (from the end with `reverse`), wrapping i32 sums at
//!   every step as a board does.

use super::{broadcast_shapes, broadcast_strides, fail, norm_axis, offset, split_at_axis, wrap_i32, Indices};
use crate::diag::Diagnostic;
use crate::l0::ast::{CompareOp, Node};
use crate::tensor::Tensor;
use crate::types::{DType, TensorType};

/// `a OP b` with numpy broadcasting: i32 1 where it holds, 0 elsewhere.
pub(super) fn compare(node: &Node, op: CompareOp, a: &Tensor, b: &Tensor) -> Result<Tensor, Diagnostic> {
    if a.ty.dtype != b.ty.dtype {
        return Err(fail(node, format!("operands must have one dtype, got `{}` and `{}`", a.ty, b.ty)));
    }
    let shape = broadcast_shapes(&a.ty.shape, &b.ty.shape)
        .ok_or_else(|| fail(node, format!("shapes `{}` and `{}` do not broadcast", a.ty, b.ty)))?;
    let (sa, sb) = (broadcast_strides(&a.ty.shape, &shape), broadcast_strides(&b.ty.shape, &shape));
    let mut data = Vec::with_capacity(shape.iter().product());
    let mut it = Indices::new(&shape);
    while let Some(idx) = it.next() {
        let (x, y) = (a.data[offset(idx, &sa)], b.data[offset(idx, &sb)]);
        let holds = match op {
            CompareOp::Less => x < y,
            CompareOp::LessEqual => x <= y,
            CompareOp::Greater => x > y,
            CompareOp::GreaterEqual => x >= y,
            CompareOp::Equal => x == y,
        };
        data.push(f64::from(u8::from(holds)));
    }
    Ok(Tensor { ty: TensorType::new(DType::I32, shape), data })
}

/// `a` where `cond` is nonzero, else `b`; the three shapes broadcast together.
pub(super) fn where_(node: &Node, cond: &Tensor, a: &Tensor, b: &Tensor) -> Result<Tensor, Diagnostic> {
    if cond.ty.dtype != DType::I32 {
        return Err(fail(node, format!("the condition must be i32, got `{}`", cond.ty)));
    }
    if a.ty.dtype != b.ty.dtype {
        return Err(fail(node, format!("`a` and `b` must have one dtype, got `{}` and `{}`", a.ty, b.ty)));
    }
    let shape = broadcast_shapes(&cond.ty.shape, &a.ty.shape)
        .and_then(|s| broadcast_shapes(&s, &b.ty.shape))
        .ok_or_else(|| {
            fail(node, format!("shapes `{}`, `{}` and `{}` do not broadcast", cond.ty, a.ty, b.ty))
        })?;
    let strides = [cond, a, b].map(|t| broadcast_strides(&t.ty.shape, &shape));
    let mut data = Vec::with_capacity(shape.iter().product());
    let mut it = Indices::new(&shape);
    while let Some(idx) = it.next() {
        let pick =
            if cond.data[offset(idx, &strides[0])] != 0.0 { (a, &strides[1]) } else { (b, &strides[2]) };
        data.push(pick.0.data[offset(idx, pick.1)]);
    }
    Ok(Tensor { ty: TensorType::new(a.ty.dtype, shape), data })
}

/// Every element of `ty` holds its index along `axis`.
pub(super) fn iota(node: &Node, ty: &TensorType, axis: i64) -> Result<Tensor, Diagnostic> {
    let a = norm_axis(node, axis, ty.rank())?;
    let (outer, n, inner) = split_at_axis(&ty.shape, a);
    let mut data = Vec::with_capacity(ty.numel());
    for _ in 0..outer {
        for k in 0..n {
            data.extend(std::iter::repeat_n(k as f64, inner));
        }
    }
    Ok(Tensor { ty: ty.clone(), data })
}

/// `x` broadcast to exactly `shape`.
pub(super) fn expand(node: &Node, shape: &[usize], x: &Tensor) -> Result<Tensor, Diagnostic> {
    if shape.len() < x.ty.rank() || broadcast_shapes(&x.ty.shape, shape).as_deref() != Some(shape) {
        return Err(fail(node, format!("`{}` cannot be expanded to {shape:?}", x.ty)));
    }
    let st = broadcast_strides(&x.ty.shape, shape);
    let mut data = Vec::with_capacity(shape.iter().product());
    let mut it = Indices::new(shape);
    while let Some(idx) = it.next() {
        data.push(x.data[offset(idx, &st)]);
    }
    Ok(Tensor { ty: TensorType::new(x.ty.dtype, shape), data })
}

/// ONNX `Gather`: `y[o.., j.., i..] = x[o.., idx[j..], i..]` along `axis`, a negative index
/// counting from the end.
pub(super) fn gather(node: &Node, axis: i64, x: &Tensor, indices: &Tensor) -> Result<Tensor, Diagnostic> {
    if indices.ty.dtype != DType::I32 {
        return Err(fail(node, format!("the indices must be i32, got `{}`", indices.ty)));
    }
    let a = norm_axis(node, axis, x.ty.rank())?;
    let (outer, n, inner) = split_at_axis(&x.ty.shape, a);
    // Every index resolved first, so an error names the first bad one in index order.
    let mut rows = Vec::with_capacity(indices.data.len());
    let mut it = Indices::new(&indices.ty.shape);
    let mut flat = 0;
    while let Some(pos) = it.next() {
        let i = indices.data[flat] as i64;
        let wrapped = if i < 0 { i + n as i64 } else { i };
        if !(0..n as i64).contains(&wrapped) {
            return Err(fail(
                node,
                format!(
                    "index {i} (at indices{pos:?}) is out of range for axis {a} of size {n} of `{}`",
                    x.ty
                ),
            )
            .with_expected(format!("indices in {}..{n} (negative ones count from the end)", -(n as i64))));
        }
        rows.push(wrapped as usize);
        flat += 1;
    }
    let mut data = Vec::with_capacity(outer * rows.len() * inner);
    for o in 0..outer {
        for &r in &rows {
            data.extend_from_slice(&x.data[(o * n + r) * inner..][..inner]);
        }
    }
    let shape = [&x.ty.shape[..a], &indices.ty.shape[..], &x.ty.shape[a + 1..]].concat();
    Ok(Tensor { ty: TensorType::new(x.ty.dtype, shape), data })
}

/// Running sums along `axis`: element `k` is the sum of elements `0..=k` (`0..k` when
/// `exclusive`), counted from the end of the axis when `reverse`.
pub(super) fn cumsum(
    node: &Node,
    axis: i64,
    exclusive: bool,
    reverse: bool,
    x: &Tensor,
) -> Result<Tensor, Diagnostic> {
    let a = norm_axis(node, axis, x.ty.rank())?;
    let (outer, n, inner) = split_at_axis(&x.ty.shape, a);
    let int = x.ty.dtype == DType::I32;
    let mut data = vec![0.0; x.data.len()];
    for o in 0..outer {
        for i in 0..inner {
            let mut acc = 0.0;
            for step in 0..n {
                let k = if reverse { n - 1 - step } else { step };
                let at = (o * n + k) * inner + i;
                let next = if int { wrap_i32(acc as i64 + x.data[at] as i64) } else { acc + x.data[at] };
                data[at] = if exclusive { acc } else { next };
                acc = next;
            }
        }
    }
    Ok(Tensor { ty: x.ty.clone(), data })
}

#[cfg(test)]
mod tests {
    use crate::l0::testing::{assert_exact, eval, try_eval};

    #[test]
    fn comparisons_broadcast_and_a_nan_compares_false() {
        let g = "graph g(a: f32[3], b: f32[2,1]) -> (lt: i32[2,3], le: i32[2,3], gt: i32[2,3], ge: i32[2,3], eq: i32[2,3]) {
  %lt = less(a, b)
  %le = less_equal(a, b)
  %gt = greater(a, b)
  %ge = greater_equal(a, b)
  %eq = equal(a, b)
  return %lt, %le, %gt, %ge, %eq
}
";
        // a = [1, 2, NaN] against the rows b = 2 and b = 1.
        let out = eval(g, &[("a", &[1.0, 2.0, f64::NAN]), ("b", &[2.0, 1.0])]);
        let want: [&[f64]; 5] = [
            &[1.0, 0.0, 0.0, 0.0, 0.0, 0.0],
            &[1.0, 1.0, 0.0, 1.0, 0.0, 0.0],
            &[0.0, 0.0, 0.0, 0.0, 1.0, 0.0],
            &[0.0, 1.0, 0.0, 1.0, 1.0, 0.0],
            &[0.0, 1.0, 0.0, 1.0, 0.0, 0.0],
        ];
        for (t, w) in out.iter().zip(want) {
            assert_eq!(t.ty.dtype, crate::types::DType::I32);
            assert_exact(t, &[2, 3], w);
        }
        let g = "graph g(i: i32[4], j: i32[]) -> (y: i32[4]) {\n  %0 = equal(i, j)\n  return %0\n}\n";
        assert_exact(
            &eval(g, &[("i", &[3.0, -3.0, 0.0, 3.0]), ("j", &[3.0])])[0],
            &[4],
            &[1.0, 0.0, 0.0, 1.0],
        );
    }

    #[test]
    fn where_takes_a_where_the_condition_is_nonzero_with_three_way_broadcasting() {
        let g = "graph g(c: i32[2,1], a: f32[3], b: f32[]) -> (y: f32[2,3]) {\n  %0 = where(c, a, b)\n  return %0\n}\n";
        let out = eval(g, &[("c", &[-3.0, 0.0]), ("a", &[1.0, 2.0, 3.0]), ("b", &[9.0])]);
        assert_exact(&out[0], &[2, 3], &[1.0, 2.0, 3.0, 9.0, 9.0, 9.0]);
        let g = "graph g(c: i32[3], a: i32[3], b: i32[2,1]) -> (y: i32[2,3]) {\n  %0 = where(c, a, b)\n  return %0\n}\n";
        let out = eval(g, &[("c", &[1.0, 0.0, 7.0]), ("a", &[1.0, 2.0, 3.0]), ("b", &[-1.0, -2.0])]);
        assert_exact(&out[0], &[2, 3], &[1.0, -1.0, 3.0, 1.0, -2.0, 3.0]);
    }

    #[test]
    fn iota_counts_along_its_axis() {
        let g = "graph g() -> (r: i32[2,3], c: f32[2,3], v: i32[0,2]) {
  %r = iota(shape=[2,3], axis=0)
  %c = iota(shape=[2,3], axis=-1, dtype=f32)
  %v = iota(shape=[0,2], axis=1)
  return %r, %c, %v
}
";
        let out = eval(g, &[]);
        assert_exact(&out[0], &[2, 3], &[0.0, 0.0, 0.0, 1.0, 1.0, 1.0]);
        assert_exact(&out[1], &[2, 3], &[0.0, 1.0, 2.0, 0.0, 1.0, 2.0]);
        assert_eq!(out[1].ty.dtype, crate::types::DType::F32);
        assert_exact(&out[2], &[0, 2], &[]);
    }

    #[test]
    fn expand_repeats_along_new_and_unit_dims() {
        let g =
            "graph g(x: f32[3,1]) -> (y: f32[2,3,2]) {\n  %0 = expand(x, shape=[2,3,2])\n  return %0\n}\n";
        let want = [1.0, 1.0, 2.0, 2.0, 3.0, 3.0, 1.0, 1.0, 2.0, 2.0, 3.0, 3.0];
        assert_exact(&eval(g, &[("x", &[1.0, 2.0, 3.0])])[0], &[2, 3, 2], &want);
    }

    /// `x: f32[3,4]` holding 0..12, gathered as the graph says.
    fn gather(
        expr: &str,
        idx: &str,
        out: &str,
        ids: &[f64],
    ) -> Result<Vec<crate::tensor::Tensor>, crate::Diagnostic> {
        let g =
            format!("graph g(x: f32[3,4], ids: {idx}) -> (y: {out}) {{\n  %0 = {expr}\n  return %0\n}}\n");
        let x: Vec<f64> = (0..12).map(f64::from).collect();
        try_eval(&g, &[("x", &x), ("ids", ids)])
    }

    #[test]
    fn gather_picks_rows_or_columns_and_wraps_negative_indices() {
        // Rows 0, 2, 2 (-1), 0 (-3): indices of rank 2 give an output of rank 3.
        let y = gather("gather(x, ids, axis=0)", "i32[2,2]", "f32[2,2,4]", &[0.0, -1.0, 2.0, -3.0]).unwrap();
        let want: Vec<f64> =
            [0, 2, 2, 0].iter().flat_map(|&r| (0..4).map(move |c| f64::from(r * 4 + c))).collect();
        assert_exact(&y[0], &[2, 2, 4], &want);
        // Columns 0 (-4) and 3 on the last axis.
        let y = gather("gather(x, ids, axis=-1)", "i32[2]", "f32[3,2]", &[-4.0, 3.0]).unwrap();
        assert_exact(&y[0], &[3, 2], &[0.0, 3.0, 4.0, 7.0, 8.0, 11.0]);
        // A scalar index removes the axis.
        let y = gather("gather(x, ids, axis=0)", "i32[]", "f32[4]", &[1.0]).unwrap();
        assert_exact(&y[0], &[4], &[4.0, 5.0, 6.0, 7.0]);
    }

    #[test]
    fn gather_out_of_range_is_an_error_naming_the_index() {
        for (bad, shown) in [(3.0, "index 3 (at indices[1])"), (-4.0, "index -4 (at indices[1])")] {
            let d = gather("gather(x, ids, axis=0)", "i32[2]", "f32[2,4]", &[0.0, bad]).unwrap_err();
            assert_eq!(
                d.message,
                format!("in `%0` (gather): {shown} is out of range for axis 0 of size 3 of `f32[3,4]`"),
                "{d}"
            );
            assert_eq!(d.expected.as_deref(), Some("indices in -3..3 (negative ones count from the end)"));
            assert_eq!(d.location.as_ref().map(|l| l.line), Some(2));
        }
    }

    #[test]
    fn cumsum_inclusive_exclusive_and_reversed() {
        let g = "graph g(x: f32[4]) -> (a: f32[4], b: f32[4], c: f32[4], d: f32[4]) {
  %a = cumsum(x, axis=0)
  %b = cumsum(x, axis=0, exclusive=true)
  %c = cumsum(x, axis=0, reverse=true)
  %d = cumsum(x, axis=-1, exclusive=true, reverse=true)
  return %a, %b, %c, %d
}
";
        let out = eval(g, &[("x", &[1.0, 2.0, 3.0, 4.0])]);
        assert_exact(&out[0], &[4], &[1.0, 3.0, 6.0, 10.0]);
        assert_exact(&out[1], &[4], &[0.0, 1.0, 3.0, 6.0]);
        assert_exact(&out[2], &[4], &[10.0, 9.0, 7.0, 4.0]);
        assert_exact(&out[3], &[4], &[9.0, 7.0, 4.0, 0.0]);
        // Along the first axis of a matrix, each column on its own.
        let g = "graph g(x: f32[2,2]) -> (y: f32[2,2]) {\n  %0 = cumsum(x, axis=0)\n  return %0\n}\n";
        assert_exact(&eval(g, &[("x", &[1.0, 2.0, 3.0, 4.0])])[0], &[2, 2], &[1.0, 2.0, 4.0, 6.0]);
        // i32 sums wrap as a board computes them.
        let g = "graph g(x: i32[3]) -> (y: i32[3]) {\n  %0 = cumsum(x, axis=0)\n  return %0\n}\n";
        let y = eval(g, &[("x", &[2147483647.0, 1.0, 1.0])]);
        assert_exact(&y[0], &[3], &[2147483647.0, -2147483648.0, -2147483647.0]);
    }
}
