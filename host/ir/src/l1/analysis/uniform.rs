//! Uniformity across the threads of a GPU block: whether an expression has the same value on
//! every thread, and if not, why (the verifier's barrier check and GPU lowering decisions).
//!
//! Uniform: literals, variables the caller says are uniform (grid variables, uniform `let`s
//! and loops), and loads of buffers never written while a kernel runs (`in` parameters) at
//! uniform indices. Anything else may differ between threads; the reason names the first
//! divergent part found, in operand order.

use crate::l1::ast::{Expr, ExprKind};

/// Why `e` may differ between the threads of a block, or `None` when it is the same for all.
/// `var` says why a variable may differ (`None`: uniform); `read_only` whether a buffer is
/// never written while the kernel runs.
pub fn divergence(
    e: &Expr,
    var: &impl Fn(&str) -> Option<String>,
    read_only: &impl Fn(&str) -> bool,
) -> Option<String> {
    let rec = |x: &Expr| divergence(x, var, read_only);
    match &e.kind {
        ExprKind::Int(_) | ExprKind::Float(_) | ExprKind::Bool(_) => None,
        ExprKind::Var(v) => var(v),
        ExprKind::Load { buf, index } => {
            if read_only(&buf.name) {
                index.iter().find_map(rec)
            } else {
                Some(format!("a load from `{}`, which the block's threads may write", buf.name))
            }
        }
        ExprKind::Unary { arg, .. } | ExprKind::Cast { arg, .. } => rec(arg),
        ExprKind::Binary { lhs, rhs, .. } => rec(lhs).or_else(|| rec(rhs)),
        ExprKind::Select { cond, then_val, else_val } => {
            rec(cond).or_else(|| rec(then_val)).or_else(|| rec(else_val))
        }
        ExprKind::Call { args, .. } => args.iter().find_map(rec),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::l1::build::{int, var, Buf};
    use crate::types::{DType, TensorType};

    #[test]
    fn thread_variables_and_writable_loads_diverge() {
        let why = |v: &str| (v == "tx").then(|| "thread variable `tx`".to_string());
        let ro = |b: &str| b == "x";
        let x = Buf::new("x", TensorType::new(DType::F32, [64]));
        let t = Buf::new("t", TensorType::new(DType::F32, [64]));
        assert_eq!(divergence(&(var("bx") * int(4)).0, &why, &ro), None);
        assert_eq!(divergence(&x.load1(var("bx")).0, &why, &ro), None);
        assert_eq!(divergence(&x.load1(var("tx")).0, &why, &ro).unwrap(), "thread variable `tx`");
        let d = divergence(&t.load1(var("bx")).0, &why, &ro).unwrap();
        assert!(d.contains("a load from `t`"), "{d}");
    }
}
