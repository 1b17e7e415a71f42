//! ONNX's products as L0's: `MatMul` (1-D operands promoted and demoted as numpy does),
//! `MatMulInteger`, `Gemm` (a `linear`, or a `matmul` with its scaling and bias), and the
//! exporter's `ekb` functions `matmul`, `linear` and their integer forms.
//!
//! What it keeps true (besides the parent module's rules):
//! - integer products are int8 with zero points absent or constant zeros (L0's integer products
//!   have none), and accumulate in i32 as L0's do.

use super::{tname, unsupported_reason, Attrs, Importer, OpTable, Res, Val};
use crate::export::EKB_DOMAIN;
use crate::proto::NodeProto;
use ekb_ir::l0::ast::{BinaryOp, Op};
use ekb_ir::types::DType;

/// The ONNX operators read here.
pub(super) const OPS: OpTable =
    &[("MatMul", &[]), ("MatMulInteger", &[]), ("Gemm", &["alpha", "beta", "transA", "transB"])];

/// The exporter's `ekb`-domain functions read here.
pub(super) const EKB_OPS: OpTable = &[
    ("matmul", &["transpose_a", "transpose_b", "perm_a", "perm_b"]),
    ("linear", &[]),
    ("linear_nobias", &[]),
    ("matmul_integer", &["transpose_a", "transpose_b", "perm_a", "perm_b"]),
    ("linear_integer", &[]),
    ("linear_integer_nobias", &[]),
];

impl Importer<'_> {
    /// The L0 form of a product.
    pub(super) fn convert_matmul(&mut self, n: &NodeProto, ins: &[Val]) -> Res {
        let out = n.output.first().cloned().unwrap_or_default();
        let a = Attrs(n);
        let ekb = n.domain == EKB_DOMAIN;
        let one = |v: Val| Ok(vec![v]);
        match (ekb, n.op_type.as_str()) {
            (false, "MatMul") => self.matmul(&ins[0], &ins[1], Some(DType::F32), &out).map(|v| vec![v]),
            (false, "MatMulInteger") => {
                self.integer_operands(n, ins, &["a_zero_point", "b_zero_point"], &["A", "B"])?;
                one(self.matmul(&ins[0], &ins[1], None, &out)?)
            }
            (false, "Gemm") => self.gemm(n, ins, &out).map(|v| vec![v]),
            (true, "matmul" | "matmul_integer") => {
                let want = (n.op_type == "matmul").then_some(DType::F32);
                let (an, _) = self.tensor(&ins[0], want)?;
                let (bn, _) = self.tensor(&ins[1], want)?;
                let op = Op::MatMul {
                    transpose_a: a.int("transpose_a", 0)? != 0,
                    transpose_b: a.int("transpose_b", 0)? != 0,
                };
                one(self.emit(&out, op, vec![an, bn])?)
            }
            (true, "linear" | "linear_nobias") => {
                let mut args = Vec::new();
                for v in ins {
                    args.push(self.tensor(v, Some(DType::F32))?.0);
                }
                one(self.emit(&out, Op::Linear, args)?)
            }
            (true, "linear_integer" | "linear_integer_nobias") => {
                let mut args = Vec::new();
                for (v, want) in ins.iter().zip([DType::I8, DType::I8, DType::I32]) {
                    args.push(self.tensor(v, Some(want))?.0);
                }
                one(self.emit(&out, Op::Linear, args)?)
            }
            _ => Err(unsupported_reason(n)),
        }
    }

    /// `MatMul` (constants as `want`) or `MatMulInteger` (`want` None: i8 operands as they are),
    /// with 1-D operands promoted and demoted as numpy does.
    fn matmul(&mut self, l: &Val, r: &Val, want: Option<DType>, out: &str) -> Result<Val, String> {
        let (mut a, at) = self.tensor(l, want)?;
        let (mut b, bt) = self.tensor(r, want)?;
        let (a1, b1) = (at.rank() == 1, bt.rank() == 1);
        if a1 {
            a = tname(self.emit(
                &format!("{out}_a2"),
                Op::Reshape { shape: vec![1, at.shape[0] as i64] },
                vec![a],
            )?);
        }
        if b1 {
            b = tname(self.emit(
                &format!("{out}_b2"),
                Op::Reshape { shape: vec![bt.shape[0] as i64, 1] },
                vec![b],
            )?);
        }
        let op = Op::MatMul { transpose_a: false, transpose_b: false };
        if !a1 && !b1 {
            return self.emit(out, op, vec![a, b]);
        }
        let Val::T { name: m, ty } = self.emit(&format!("{out}_2d"), op, vec![a, b])? else { unreachable!() };
        let mut shape: Vec<i64> = ty.shape.iter().map(|&d| d as i64).collect();
        let r = shape.len();
        if b1 {
            shape.remove(r - 1);
        }
        if a1 {
            shape.remove(r - 2);
        }
        self.emit(out, Op::Reshape { shape }, vec![m])
    }

    /// `Gemm`: `linear` when it is one (PyTorch's `nn.Linear`), else `matmul` with scaling and
    /// the bias added.
    fn gemm(&mut self, n: &NodeProto, ins: &[Val], out: &str) -> Result<Val, String> {
        let a = Attrs(n);
        let (alpha, beta) = (a.float("alpha", 1.0)?, a.float("beta", 1.0)?);
        let (ta, tb) = (a.int("transA", 0)? != 0, a.int("transB", 0)? != 0);
        let has_c = ins.len() > 2 && !n.input[2].is_empty();
        let (x, xt) = self.tensor(&ins[0], Some(DType::F32))?;
        let (w, wt) = self.tensor(&ins[1], Some(DType::F32))?;
        if xt.rank() != 2 || wt.rank() != 2 {
            return Err("Gemm operands must have rank 2".into());
        }
        let c = if has_c { Some(self.tensor(&ins[2], Some(DType::F32))?) } else { None };
        let c_is_bias = c.as_ref().is_none_or(|(_, t)| t.shape == [wt.shape[0]]);
        if !ta && tb && alpha == 1.0 && beta == 1.0 && c_is_bias {
            let mut args = vec![x, w];
            args.extend(c.map(|(c, _)| c));
            return self.emit(out, Op::Linear, args);
        }
        let mm = Op::MatMul { transpose_a: ta, transpose_b: tb };
        let scaled = alpha != 1.0;
        let first = if scaled || c.is_some() { format!("{out}_mm") } else { out.to_string() };
        let mut acc = self.emit(&first, mm, vec![x, w])?;
        if scaled {
            let k = self.scalar(alpha, DType::F32, &format!("{out}_alpha"))?;
            let hint = if c.is_some() { format!("{out}_scaled") } else { out.to_string() };
            let m = tname(acc);
            acc = self.emit(&hint, Op::Binary(BinaryOp::Mul), vec![m, k])?;
        }
        if let Some((c, _)) = c {
            let c = if beta != 1.0 {
                let k = self.scalar(beta, DType::F32, &format!("{out}_beta"))?;
                tname(self.emit(&format!("{out}_c_scaled"), Op::Binary(BinaryOp::Mul), vec![c, k])?)
            } else {
                c
            };
            let m = tname(acc);
            acc = self.emit(out, Op::Binary(BinaryOp::Add), vec![m, c])?;
        }
        Ok(acc)
    }
}
