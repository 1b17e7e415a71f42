//! Constant folding and algebraic identities.
//!
//! Constants are the nodes without operands (`full`, `iota`) and the parameters that carry real
//! data (`TensorDecl::data`, loaded). A node all of whose operands are constants is evaluated
//! at compile time by the L0 reference interpreter, and replaced by a `full` node when the
//! result is one repeated value (every result of one element, a reduction of a data parameter, an
//! elementwise operator or a data movement of `full` operands). A result with differing values is
//! left alone: L0 has no constant tensor other than `full`, `iota` and a data parameter, and a
//! new data parameter would change the graph's signature (its parameters and their sidecar file
//! are what the payload carries and the reference reads), so those nodes still run as kernels.
//! Evaluation is bounded: operands of `full` nodes are evaluated on one element, other operands
//! only up to [`EVAL_LIMIT`] elements, and a node the interpreter refuses (an i32 division by
//! zero) is kept for the run time to report.
//!
//! Identities, each only where the result has the type of the value it is replaced by:
//! `x*1`, `1*x`, `x/1`, `x+0`, `0+x`, `x-0` give `x` (the constant a `full`); a `reshape`,
//! `expand` or `transpose` that changes nothing, and a `cast` to the dtype `x` has, give `x`; a
//! `reshape` of a `reshape` reads the inner operand; a `transpose` of a `transpose` is one
//! `transpose` (or `x`); a `transpose` ending a chain of `reshape`s and `transpose`s that leaves
//! the elements of the chain's start in their order is a `reshape` of that start (a transpose to
//! NCHW undone by a reshape and a transpose back to tokens; chains of at most [`ORDER_LIMIT`]
//! elements, followed back at most [`CHAIN_LIMIT`] nodes). `x+0` turns `-0.0` into `0.0`, which
//! every comparison takes as equal.

use crate::index::{Def, Index};
use crate::rewrite::Rewrite;
use ekb_ir::l0::{interp, BinaryOp, Graph, Node, Op, OutputDecl, TensorDecl, ValueRef};
use ekb_ir::tensor::{Buffer, Tensor};
use ekb_ir::{Diagnostic, Span, TensorType};
use std::collections::HashMap;

/// The most elements of an operand (other than a `full`) evaluated at compile time.
pub const EVAL_LIMIT: usize = 1 << 16;

/// The most elements of a chain of data movements whose order [`in_order`] follows.
pub const ORDER_LIMIT: usize = 1 << 22;

/// The most nodes of such a chain.
pub const CHAIN_LIMIT: usize = 8;

pub fn run(g: &Graph) -> Result<Option<Graph>, Diagnostic> {
    let ix = Index::new(g);
    let mut rw = Rewrite::new(g);
    // The nodes this run turned into a `full`, with their value: later nodes see them as splats.
    let mut folded: HashMap<&str, f64> = HashMap::new();
    for (i, n) in g.nodes.iter().enumerate() {
        if n.args.is_empty() {
            continue;
        }
        let splat = |name: &str| {
            folded.get(name).copied().or_else(|| match ix.node(g, name).map(|d| &d.op) {
                Some(Op::Full { ty, value }) => Some(as_dtype(ty, *value)),
                _ => None,
            })
        };
        if let Some(x) = identity(g, n, &splat) {
            rw.replace_uses(&n.name, &x)?;
            rw.remove(i);
        } else if let Some((op, args)) = combined(&ix, g, n).or_else(|| in_order(&ix, g, n)) {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            rw.set(i, op, &args)?;
        } else if let Some(value) = evaluate(g, &ix, n, &splat) {
            let ty = n.ty.clone().expect("a checked graph");
            rw.set(i, Op::Full { ty, value }, &[])?;
            folded.insert(&n.name, value);
        }
    }
    rw.finish()
}

/// The value the node `n` equals by an identity, if any; `splat` is the one value of a
/// constant operand whose elements are all equal.
fn identity(g: &Graph, n: &Node, splat: &dyn Fn(&str) -> Option<f64>) -> Option<String> {
    let ty = n.ty.as_ref()?;
    let same_type = |name: &str| g.type_of(name) == Some(ty);
    let arg = |k: usize| n.args[k].name.as_str();
    let x = match &n.op {
        Op::Binary(op) => {
            let (a, b) = (arg(0), arg(1));
            match op {
                BinaryOp::Mul if splat(b) == Some(1.0) => a,
                BinaryOp::Mul if splat(a) == Some(1.0) => b,
                BinaryOp::Div if splat(b) == Some(1.0) => a,
                BinaryOp::Add if splat(b) == Some(0.0) => a,
                BinaryOp::Add if splat(a) == Some(0.0) => b,
                BinaryOp::Sub if splat(b) == Some(0.0) => a,
                _ => return None,
            }
        }
        Op::Reshape { .. } | Op::Expand { .. } | Op::Cast { .. } | Op::Transpose { .. } => arg(0),
        _ => return None,
    };
    let no_op = match &n.op {
        Op::Transpose { perm } => perm.iter().enumerate().all(|(i, &p)| i == p),
        _ => true,
    };
    (no_op && same_type(x)).then(|| x.to_string())
}

/// A data movement of a data movement, rewritten to read the inner operand directly.
fn combined(ix: &Index, g: &Graph, n: &Node) -> Option<(Op, Vec<String>)> {
    let inner = ix.node(g, &n.args[0].name)?;
    match (&n.op, &inner.op) {
        (Op::Reshape { .. }, Op::Reshape { .. }) => {
            let shape = n.ty.as_ref()?.shape.iter().map(|&d| d as i64).collect();
            Some((Op::Reshape { shape }, vec![inner.args[0].name.clone()]))
        }
        (Op::Transpose { perm: outer }, Op::Transpose { perm: first }) => {
            let perm = outer.iter().map(|&p| first[p]).collect();
            Some((Op::Transpose { perm }, vec![inner.args[0].name.clone()]))
        }
        _ => None,
    }
}

/// A `transpose` at the end of a chain of `reshape`s and `transpose`s that leaves the elements of
/// the chain's start in their order, rewritten as a `reshape` of that start; the longest such
/// chain is taken. The order is followed on the element indices themselves.
fn in_order(ix: &Index, g: &Graph, n: &Node) -> Option<(Op, Vec<String>)> {
    let ty = n.ty.as_ref()?;
    if !matches!(n.op, Op::Transpose { .. }) || ty.numel() > ORDER_LIMIT {
        return None;
    }
    // The chain from `n` back, `n` first; `chain[k]`'s operand starts the chain `chain[..=k]`.
    let mut chain = vec![n];
    while chain.len() < CHAIN_LIMIT {
        match ix.node(g, &chain[chain.len() - 1].args[0].name) {
            Some(m) if matches!(m.op, Op::Reshape { .. } | Op::Transpose { .. }) => chain.push(m),
            _ => break,
        }
    }
    (1..chain.len()).rev().find_map(|k| {
        let start = &chain[k].args[0].name;
        let mut order: Vec<u32> = (0..ty.numel() as u32).collect();
        for m in chain[..=k].iter().rev() {
            if let Op::Transpose { perm } = &m.op {
                order = transposed(&order, &g.type_of(&m.args[0].name)?.shape, perm);
            }
        }
        let kept = order.iter().enumerate().all(|(i, &v)| i as u32 == v);
        let shape = ty.shape.iter().map(|&d| d as i64).collect();
        kept.then(|| (Op::Reshape { shape }, vec![start.clone()]))
    })
}

/// `order`, the elements of a tensor of `shape` in row-major order, transposed by `perm`.
fn transposed(order: &[u32], shape: &[usize], perm: &[usize]) -> Vec<u32> {
    let mut strides = vec![1usize; shape.len()];
    for d in (1..shape.len()).rev() {
        strides[d - 1] = strides[d] * shape[d];
    }
    let dims: Vec<usize> = perm.iter().map(|&p| shape[p]).collect();
    let steps: Vec<usize> = perm.iter().map(|&p| strides[p]).collect();
    let mut at = vec![0usize; dims.len()];
    let mut src = 0;
    let mut out = Vec::with_capacity(order.len());
    for _ in 0..order.len() {
        out.push(order[src]);
        for d in (0..dims.len()).rev() {
            at[d] += 1;
            src += steps[d];
            if at[d] < dims[d] {
                break;
            }
            src -= steps[d] * dims[d];
            at[d] = 0;
        }
    }
    out
}

/// The one value every element of the node's result has, when its operands are constants.
fn evaluate(g: &Graph, ix: &Index, n: &Node, splat: &dyn Fn(&str) -> Option<f64>) -> Option<f64> {
    let ty = n.ty.as_ref()?;
    let splats: Option<Vec<(TensorType, f64)>> =
        n.args.iter().map(|a| Some((g.type_of(&a.name)?.clone(), splat(&a.name)?))).collect();
    let value = match splats {
        // Each element of an elementwise operator of splats is computed from equal elements:
        // one element computes them all.
        Some(splats) if elementwise(&n.op) => {
            let args =
                splats.into_iter().map(|(t, v)| Tensor { ty: TensorType::new(t.dtype, []), data: vec![v] });
            let out_ty = TensorType::new(ty.dtype, []);
            one_element(eval_node(&n.op, &out_ty, args.collect())?)?
        }
        // A data movement of equal splats moves one value around.
        Some(splats)
            if moves_data(&n.op) && splats.windows(2).all(|w| w[0].1.to_bits() == w[1].1.to_bits()) =>
        {
            splats.first()?.1
        }
        _ => {
            let args = n.args.iter().map(|a| constant(g, ix, &a.name)).collect::<Option<Vec<_>>>()?;
            let out = eval_node(&n.op, ty, args)?;
            let first = *out.data.first()?;
            out.data.iter().all(|v| v.to_bits() == first.to_bits()).then_some(first)?
        }
    };
    // `full` has no NaN (its `value` refuses it).
    (!value.is_nan()).then_some(value)
}

/// The operators whose result element depends only on the operand elements at its own position.
fn elementwise(op: &Op) -> bool {
    matches!(
        op,
        Op::Unary(_)
            | Op::Binary(_)
            | Op::Compare(_)
            | Op::Where
            | Op::Cast { .. }
            | Op::QuantizeLinear { .. }
            | Op::DequantizeLinear { .. }
    )
}

/// The operators whose every result element is one of the operands' elements.
fn moves_data(op: &Op) -> bool {
    matches!(
        op,
        Op::Reshape { .. } | Op::Transpose { .. } | Op::Expand { .. } | Op::Slice { .. } | Op::Concat { .. }
    )
}

fn one_element(t: Tensor) -> Option<f64> {
    t.data.first().copied()
}

/// The values of a constant operand within [`EVAL_LIMIT`] elements: a `full` or `iota` node, or
/// a parameter whose data is loaded.
fn constant(g: &Graph, ix: &Index, name: &str) -> Option<Tensor> {
    let ty = g.type_of(name)?;
    if ty.numel() > EVAL_LIMIT {
        return None;
    }
    match ix.def(name)? {
        Def::Node(i) => {
            let node = &g.nodes[i];
            let producer = matches!(node.op, Op::Full { .. } | Op::Iota { .. });
            producer.then(|| eval_node(&node.op, ty, Vec::new())).flatten()
        }
        Def::Param(i) => {
            let values = g.params[i].data.as_ref()?.values.as_ref()?;
            Some(Buffer { ty: ty.clone(), data: (**values).clone() }.to_tensor())
        }
        Def::Input(_) => None,
    }
}

/// `op` applied to `args` by the reference interpreter, through a graph of one node whose
/// inputs are the operands; `None` when the interpreter refuses it.
fn eval_node(op: &Op, ty: &TensorType, args: Vec<Tensor>) -> Option<Tensor> {
    let names: Vec<String> = (0..args.len()).map(|k| format!("a{k}")).collect();
    let refs = |name: &str| ValueRef { name: name.to_string(), span: Span::NONE };
    let inputs = names
        .iter()
        .zip(&args)
        .map(|(name, t)| TensorDecl::seeded(name, t.ty.clone(), t.ty.dtype.default_init(), Span::NONE))
        .collect();
    let node = Node {
        name: "%0".into(),
        op: op.clone(),
        args: names.iter().map(|n| refs(n)).collect(),
        ty: Some(ty.clone()),
        span: Span::NONE,
        op_span: Span::NONE,
    };
    let g = Graph {
        name: "fold".into(),
        inputs,
        params: Vec::new(),
        nodes: vec![node],
        outputs: vec![OutputDecl { name: "y".into(), ty: ty.clone(), value: refs("%0"), span: Span::NONE }],
        groups: Vec::new(),
        span: Span::NONE,
    };
    let feed: HashMap<String, Tensor> = names.into_iter().zip(args).collect();
    interp::run(&g, &feed).ok()?.into_iter().next()
}

/// A `full`'s value as its dtype holds it (an i32 `full` of 2.5 holds 2).
fn as_dtype(ty: &TensorType, value: f64) -> f64 {
    let t = eval_node(
        &Op::Full { ty: TensorType::new(ty.dtype, []), value },
        &TensorType::new(ty.dtype, []),
        Vec::new(),
    );
    t.and_then(one_element).unwrap_or(f64::NAN)
}

#[cfg(test)]
mod tests {
    use crate::testing::{expect_unchanged, rewrite};

    #[test]
    fn operators_of_constants_become_one_full() {
        let out = rewrite(
            super::run,
            "graph t(x: f32[2,3]) -> (y: f32[2,3], s: i32[]) {
               %0 = full(shape=[2,3], value=2.0)
               %1 = full(shape=[3], value=0.5)
               %2 = mul(%0, %1)
               %3 = exp(%2)
               %4 = add(x, %3)
               %5 = iota(shape=[4], axis=0, dtype=i32)
               %6 = sum(%5, axes=[0])
               return %4, %6
             }",
        );
        assert_eq!(
            out,
            "graph t(x: f32[2,3]) -> (y: f32[2,3], s: i32[]) {\n  \
             %0: f32[2,3] = full(shape=[2,3], value=2.0, dtype=f32)\n  \
             %1: f32[3] = full(shape=[3], value=0.5, dtype=f32)\n  \
             %2: f32[2,3] = full(shape=[2,3], value=1.0, dtype=f32)\n  \
             %3: f32[2,3] = full(shape=[2,3], value=2.718281828459045, dtype=f32)\n  \
             %4: f32[2,3] = add(x, %3)\n  \
             %5: i32[4] = iota(shape=[4], axis=0, dtype=i32)\n  \
             %6: i32[] = full(shape=[], value=6.0, dtype=i32)\n  \
             return %4, %6\n}\n"
        );
    }

    #[test]
    fn identities_return_the_operand() {
        let out = rewrite(
            super::run,
            "graph t(x: f32[2,3]) -> (y: f32[3,2], z: f32[6]) {
               %one = full(shape=[], value=1.0)
               %zero = full(shape=[3], value=0.0)
               %0 = mul(x, %one)
               %1 = add(%zero, %0)
               %2 = transpose(%1, perm=[1,0])
               %3 = transpose(%2, perm=[1,0])
               %4 = reshape(%3, shape=[3,2])
               %5 = reshape(%4, shape=[6])
               %6 = cast(%5, dtype=f32)
               return %2, %6
             }",
        );
        assert_eq!(
            out,
            "graph t(x: f32[2,3]) -> (y: f32[3,2], z: f32[6]) {\n  \
             %one: f32[] = full(shape=[], value=1.0, dtype=f32)\n  \
             %zero: f32[3] = full(shape=[3], value=0.0, dtype=f32)\n  \
             %2: f32[3,2] = transpose(x, perm=[1,0])\n  \
             %3: f32[2,3] = transpose(x, perm=[0,1])\n  \
             %4: f32[3,2] = reshape(%3, shape=[3,2])\n  \
             %5: f32[6] = reshape(%3, shape=[6])\n  \
             return %2, %5\n}\n"
        );
    }

    #[test]
    fn movements_that_keep_the_order_become_a_reshape() {
        // Tokens in NCHW and back: the transposes undo each other across the reshapes.
        let out = rewrite(
            super::run,
            "graph t(x: f32[2,6,5]) -> (y: f32[2,6,5], z: f32[2,5,6]) {
               %0 = reshape(x, shape=[2,2,3,5])
               %1 = transpose(%0, perm=[0,3,1,2])
               %2 = reshape(%1, shape=[2,5,6])
               %3 = transpose(%2, perm=[0,2,1])
               return %3, %2
             }",
        );
        assert!(out.contains("%3: f32[2,6,5] = reshape(x, shape=[2,6,5])"), "{out}");
        // A chain that moves the elements stays.
        expect_unchanged(
            super::run,
            "graph t(x: f32[2,6,5]) -> (y: f32[2,5,6]) {
               %0 = reshape(x, shape=[2,2,3,5])
               %1 = transpose(%0, perm=[0,3,2,1])
               %2 = reshape(%1, shape=[2,5,6])
               return %2
             }",
        );
    }

    #[test]
    fn varying_results_broadcasting_identities_and_refused_evaluations_stay() {
        expect_unchanged(
            super::run,
            "graph t(x: f32[3], n: i32[2]) -> (y: f32[2,3], z: i32[4], q: i32[2]) {
               %one = full(shape=[2,3], value=1.0)
               %0 = mul(x, %one)
               %1 = iota(shape=[4], axis=0, dtype=i32)
               %2 = add(%1, %1)
               %zero = full(shape=[2], value=0, dtype=i32)
               %3 = div(n, %zero)
               %4 = div(%zero, %zero)
               return %0, %2, %4
             }",
        );
    }
}
