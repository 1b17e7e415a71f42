//! ONNX's normalisations as L0's: `BatchNormalization` (inference), `LayerNormalization`,
//! `GroupNormalization`, and the exporter's `ekb` functions `rms_norm` and `group_norm`.
//!
//! What it keeps true (besides the parent module's rules):
//! - only inference is read (`training_mode`=1 is refused);
//! - parameters have the shapes L0 applies them with: a layer norm's scale covers exactly the
//!   normalised dims (a missing bias is a `full` of zeros), and a group norm's per-group scale
//!   and bias (opsets 18 to 20) must be constants, repeated per channel.

use super::{norm_axis, unsupported_reason, Attrs, Importer, OpTable, Res, Val};
use crate::consts::{Const, Data};
use crate::export::EKB_DOMAIN;
use crate::proto::{dtype, NodeProto};
use ekb_ir::l0::ast::Op;
use ekb_ir::types::{DType, TensorType};
use std::rc::Rc;

/// The ONNX operators read here.
pub(super) const OPS: OpTable = &[
    ("BatchNormalization", &["epsilon", "momentum", "training_mode"]),
    ("LayerNormalization", &["axis", "epsilon", "stash_type"]),
    ("GroupNormalization", &["epsilon", "num_groups", "stash_type"]),
];

/// The exporter's `ekb`-domain functions read here.
pub(super) const EKB_OPS: OpTable =
    &[("rms_norm", &["eps", "axes"]), ("group_norm", &["groups", "eps", "grouped_shape", "param_shape"])];

impl Importer<'_> {
    /// The L0 form of a normalisation.
    pub(super) fn convert_norm(&mut self, n: &NodeProto, ins: &[Val]) -> Res {
        let out = n.output.first().cloned().unwrap_or_default();
        let a = Attrs(n);
        let ekb = n.domain == EKB_DOMAIN;
        let x = ins.first().cloned().unwrap_or(Val::Bad);
        let one = |v: Val| Ok(vec![v]);
        match (ekb, n.op_type.as_str()) {
            (false, "GroupNormalization") => self.group_norm(n, ins, &out).map(|v| vec![v]),
            (false, "BatchNormalization") => {
                if a.int("training_mode", 0)? != 0 {
                    return Err("`training_mode`=1 is not supported (inference only)".into());
                }
                let eps = a.float("epsilon", 1e-5)?;
                let mut args = Vec::new();
                for v in ins.iter().take(5) {
                    args.push(self.tensor(v, Some(DType::F32))?.0);
                }
                one(self.emit(&out, Op::BatchNorm { eps }, args)?)
            }
            (false, "LayerNormalization") => {
                let (xn, xt) = self.tensor(&x, None)?;
                let axis = norm_axis(a.int("axis", -1)?, xt.rank()).ok_or("`axis` is out of range")?;
                let eps = a.float("epsilon", 1e-5)?;
                let (w, wt) = self.tensor(&ins[1], Some(DType::F32))?;
                if wt.shape != xt.shape[axis..] {
                    return Err(format!(
                        "the scale has shape {:?}; L0 needs the normalised dims {:?} exactly",
                        wt.shape,
                        &xt.shape[axis..]
                    ));
                }
                let b = match ins.get(2) {
                    Some(v) if !n.input[2].is_empty() => self.tensor(v, Some(DType::F32))?.0,
                    _ => {
                        let Val::T { name, .. } = self.emit(
                            &format!("{out}_bias"),
                            Op::Full { ty: TensorType::new(DType::F32, wt.shape.clone()), value: 0.0 },
                            vec![],
                        )?
                        else {
                            unreachable!()
                        };
                        name
                    }
                };
                one(self.emit(&out, Op::LayerNorm { eps }, vec![xn, w, b])?)
            }
            (true, "group_norm") => {
                let groups =
                    usize::try_from(a.int("groups", 1)?).map_err(|_| "`groups` must be >= 1".to_string())?;
                let eps = a.float("eps", 1e-5)?;
                let mut args = Vec::new();
                for v in ins.iter().take(3) {
                    args.push(self.tensor(v, Some(DType::F32))?.0);
                }
                one(self.emit(&out, Op::GroupNorm { groups, eps }, args)?)
            }
            (true, "rms_norm") => {
                let eps = a.float("eps", 1e-6)?;
                let (xn, _) = self.tensor(&x, None)?;
                let (w, _) = self.tensor(&ins[1], Some(DType::F32))?;
                one(self.emit(&out, Op::RmsNorm { eps }, vec![xn, w])?)
            }
            _ => Err(unsupported_reason(n)),
        }
    }

    /// `GroupNormalization` (opset 18+). Opset 21 gives per-channel scale and bias, as L0 does;
    /// opsets 18 to 20 give one per group, which must then be constants (repeated per channel).
    fn group_norm(&mut self, n: &NodeProto, ins: &[Val], out: &str) -> Result<Val, String> {
        let a = Attrs(n);
        let groups = a.int("num_groups", 0)?;
        let groups = usize::try_from(groups).ok().filter(|&g| g >= 1).ok_or("`num_groups` must be >= 1")?;
        let eps = a.float("epsilon", 1e-5)?;
        let (xn, xt) = self.tensor(&ins[0], Some(DType::F32))?;
        let c = *xt.shape.get(1).ok_or("the input needs a channel axis (rank >= 2)")?;
        let mut params = Vec::new();
        for (v, what) in [(&ins[1], "scale"), (&ins[2], "bias")] {
            let v = match v {
                Val::C { c: k, onnx, init } if self.opset < 21 && k.dims == [groups] && c % groups == 0 => {
                    let per: Vec<f32> = (0..c).map(|ch| k.as_f64()[ch / (c / groups)] as f32).collect();
                    let k = Const { onnx_type: dtype::FLOAT, dims: vec![c], data: Data::F32(per) };
                    Val::C { c: Rc::new(k), onnx: format!("{onnx}_per_channel"), init: *init }
                }
                Val::T { .. } if self.opset < 21 => {
                    return Err(format!(
                        "opset {} gives `{what}` per group; a computed one is not supported (a constant is repeated per channel)",
                        self.opset
                    ))
                }
                other => other.clone(),
            };
            params.push(self.tensor(&v, Some(DType::F32))?.0);
        }
        let mut args = vec![xn];
        args.extend(params);
        self.emit(out, Op::GroupNorm { groups, eps }, args)
    }
}
