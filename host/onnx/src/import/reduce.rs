//! ONNX's reductions and operators along an axis as L0's: `ReduceMean`, `ReduceSum`,
//! `ReduceMax`, `ReduceMin`, `ArgMax`, `Softmax`, `LogSoftmax` and `CumSum`.
//!
//! What it keeps true (besides the parent module's rules):
//! - reduction axes come from the attribute (before opset 18) or a constant input; no axes
//!   reduce over every axis, or nothing with `noop_with_empty_axes`;
//! - `ArgMax` takes the first maximum (`select_last_index`=1 is refused) and is named after the
//!   `Cast` that follows it, as comparisons are.

use super::{unsupported_reason, Attrs, Importer, OpTable, Res, Val};
use crate::proto::NodeProto;
use ekb_ir::l0::ast::{Op, ReduceKind};

/// The ONNX operators read here.
pub(super) const OPS: OpTable = &[
    ("Softmax", &["axis"]),
    ("LogSoftmax", &["axis"]),
    ("ReduceMean", &["axes", "keepdims", "noop_with_empty_axes"]),
    ("ReduceSum", &["axes", "keepdims", "noop_with_empty_axes"]),
    ("ReduceMax", &["axes", "keepdims", "noop_with_empty_axes"]),
    ("ReduceMin", &["axes", "keepdims", "noop_with_empty_axes"]),
    ("ArgMax", &["axis", "keepdims", "select_last_index"]),
    ("CumSum", &["exclusive", "reverse"]),
];

impl Importer<'_> {
    /// The L0 form of a reduction or an operator along an axis.
    pub(super) fn convert_reduce(&mut self, n: &NodeProto, ins: &[Val]) -> Res {
        let out = n.output.first().cloned().unwrap_or_default();
        let a = Attrs(n);
        let x = ins.first().cloned().unwrap_or(Val::Bad);
        let one = |v: Val| Ok(vec![v]);
        match n.op_type.as_str() {
            "CumSum" => {
                let axis = match self.const_ints(&ins[1], "axis")?.as_slice() {
                    [a] => *a,
                    other => return Err(format!("`axis` must be one integer, found {other:?}")),
                };
                let (xn, _) = self.tensor(&x, None)?;
                let op = Op::CumSum {
                    axis,
                    exclusive: a.int("exclusive", 0)? != 0,
                    reverse: a.int("reverse", 0)? != 0,
                };
                one(self.emit(&out, op, vec![xn])?)
            }
            "Softmax" | "LogSoftmax" => {
                let axis = a.int("axis", -1)?;
                let (xn, _) = self.tensor(&x, None)?;
                one(self.emit(&out, Op::Softmax { axis, log: n.op_type == "LogSoftmax" }, vec![xn])?)
            }
            "ReduceMean" | "ReduceSum" | "ReduceMax" | "ReduceMin" => self.reduce(n, ins, &out),
            "ArgMax" => {
                if a.int("select_last_index", 0)? != 0 {
                    return Err("`select_last_index`=1 is not supported (L0 takes the first maximum)".into());
                }
                let (xn, _) = self.tensor(&x, None)?;
                let op = Op::ArgMax { axis: a.int("axis", 0)?, keepdims: a.int("keepdims", 1)? != 0 };
                let name = self.named_by_cast(&out);
                one(self.emit(&name, op, vec![xn])?)
            }
            _ => Err(unsupported_reason(n)),
        }
    }

    /// `ReduceMean`, `ReduceSum`, `ReduceMax` or `ReduceMin`.
    fn reduce(&mut self, n: &NodeProto, ins: &[Val], out: &str) -> Res {
        let a = Attrs(n);
        let kind = match n.op_type.as_str() {
            "ReduceMean" => ReduceKind::Mean,
            "ReduceSum" => ReduceKind::Sum,
            "ReduceMax" => ReduceKind::Max,
            _ => ReduceKind::Min,
        };
        let axes = match (ins.get(1), a.get("axes")) {
            (Some(v), _) if !n.input[1].is_empty() => self.const_ints(v, "axes")?,
            (_, Some(at)) => at.ints.clone(),
            _ => Vec::new(),
        };
        let keepdims = a.int("keepdims", 1)? != 0;
        let (xn, xt) = self.tensor(&ins[0], None)?;
        let axes = if axes.is_empty() {
            if a.int("noop_with_empty_axes", 0)? != 0 || xt.rank() == 0 {
                return Ok(vec![ins[0].clone()]);
            }
            (0..xt.rank() as i64).collect()
        } else {
            axes
        };
        Ok(vec![self.emit(out, Op::Reduce { kind, axes, keepdims }, vec![xn])?])
    }
}
