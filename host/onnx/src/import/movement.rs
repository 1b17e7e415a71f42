//! ONNX's data movement as L0's: `Reshape`, `Flatten`, `Squeeze` and `Unsqueeze` (all as
//! `reshape`), `Transpose`, `Concat`, `Slice`, `Pad`, `Expand` and `Gather`.
//!
//! What it keeps true (besides the parent module's rules):
//! - shape arithmetic is folded: `Gather` and `Concat` of integer constants, a `Slice` of a 1-D
//!   one, a reshape of any constant and an `Expand` of a uniform one give constants, so that the
//!   shapes, bounds and axes other nodes read stay constant, each held to the size limit of any
//!   constant before it is allocated;
//! - negative axes count from the end as ONNX defines it per operator (Flatten's `axis` in
//!   `-r..=r` of the input's rank, Unsqueeze's of the output's);
//! - shapes, bounds, pads and axes read from inputs must be constants; `Slice` steps are at least
//!   1 and pads at least 0, as L0's.

use super::{norm_axis, short, unsupported_reason, Attrs, Importer, OpTable, Res, Val};
use crate::consts::{numel_within_limit, Const, Data};
use crate::proto::NodeProto;
use ekb_ir::l0::ast::{Op, PadMode};
use ekb_ir::l0::ops::broadcast;
use ekb_ir::types::DType;
use std::rc::Rc;

/// The ONNX operators read here.
pub(super) const OPS: OpTable = &[
    ("Gather", &["axis"]),
    ("Reshape", &["allowzero"]),
    ("Flatten", &["axis"]),
    ("Squeeze", &["axes"]),
    ("Unsqueeze", &["axes"]),
    ("Transpose", &["perm"]),
    ("Concat", &["axis"]),
    ("Slice", &[]),
    ("Pad", &["mode"]),
    ("Expand", &[]),
];

impl Importer<'_> {
    /// The L0 form of a data-movement node.
    pub(super) fn convert_movement(&mut self, n: &NodeProto, ins: &[Val]) -> Res {
        let out = n.output.first().cloned().unwrap_or_default();
        let a = Attrs(n);
        let x = ins.first().cloned().unwrap_or(Val::Bad);
        let one = |v: Val| Ok(vec![v]);
        match n.op_type.as_str() {
            "Expand" => {
                let target = self.const_ints(&ins[1], "shape")?;
                let target = target
                    .iter()
                    .map(|&d| usize::try_from(d).map_err(|_| format!("`shape` entry {d} is negative")))
                    .collect::<Result<Vec<_>, _>>()?;
                let shape = broadcast(&self.dims(&x), &target)?;
                if let Val::C { c, .. } = &x {
                    if c.is_uniform() && c.numel() > 0 {
                        // A constant fill stays a constant (a `full` of the result where used).
                        let numel = numel_within_limit(&shape)?;
                        let data = match &c.data {
                            Data::F32(v) => Data::F32(vec![v[0]; numel]),
                            Data::Int(v) => Data::Int(vec![v[0]; numel]),
                        };
                        let c = Const { onnx_type: c.onnx_type, dims: shape, data };
                        return one(Val::C { c: Rc::new(c), onnx: out.clone(), init: false });
                    }
                }
                let (xn, _) = self.tensor(&x, None)?;
                one(self.emit(&out, Op::Expand { shape }, vec![xn])?)
            }
            "Gather" => {
                let axis = a.int("axis", 0)?;
                if let (Val::C { c: data, .. }, Some(Val::C { c: idx, .. })) = (&x, ins.get(1)) {
                    if matches!(data.data, Data::Int(_)) {
                        // Shape arithmetic: folded.
                        return one(Val::C {
                            c: Rc::new(gather(data, idx, axis)?),
                            onnx: out.clone(),
                            init: false,
                        });
                    }
                }
                let (xn, _) = self.tensor(&x, None)?;
                let (idx, _) = self.tensor(&ins[1], Some(DType::I32))?;
                one(self.emit(&out, Op::Gather { axis }, vec![xn, idx])?)
            }
            "Reshape" => {
                let shape = self.const_ints(&ins[1], "shape")?;
                let dims = match &x {
                    Val::T { ty, .. } => ty.shape.clone(),
                    Val::C { c, .. } => c.dims.clone(),
                    Val::Bad => unreachable!("checked above"),
                };
                if shape.iter().filter(|&&d| d == -1).count() > 1 {
                    return Err(format!(
                        "`shape` {shape:?} has more than one -1; at most one dimension can be inferred"
                    ));
                }
                let allowzero = a.int("allowzero", 0)? != 0;
                let mut target = Vec::with_capacity(shape.len());
                for (i, &d) in shape.iter().enumerate() {
                    target.push(match d {
                        0 if !allowzero => *dims.get(i).ok_or("a 0 in `shape` past the input's rank")? as i64,
                        0 => return Err("`allowzero`=1 with a 0 in `shape` is not supported".into()),
                        -1 => -1,
                        d if d > 0 => d,
                        d => return Err(format!("`shape` entry {d} is invalid")),
                    });
                }
                self.reshape(&x, target, &out).map(|v| vec![v])
            }
            "Flatten" => {
                // ONNX's axis is in [-r, r]; a negative one counts from the end of the r dims.
                let dims = self.dims(&x);
                let (axis, r) = (a.int("axis", 1)?, dims.len() as i64);
                let axis = match axis {
                    _ if !(-r..=r).contains(&axis) => {
                        return Err(format!(
                            "`axis` {axis} is out of range for rank {r} (ONNX's Flatten takes -{r}..={r})"
                        ))
                    }
                    _ if axis < 0 => (axis + r) as usize,
                    _ => axis as usize,
                };
                let outer: usize = dims[..axis].iter().product();
                let inner: usize = dims[axis..].iter().product();
                self.reshape(&x, vec![outer as i64, inner as i64], &out).map(|v| vec![v])
            }
            "Squeeze" | "Unsqueeze" => {
                let axes = match (ins.get(1), a.get("axes")) {
                    (Some(v), _) if !n.input[1].is_empty() => Some(self.const_ints(v, "axes")?),
                    (_, Some(at)) => Some(at.ints.clone()),
                    _ => None,
                };
                let dims = self.dims(&x);
                let target: Vec<usize> = if n.op_type == "Squeeze" {
                    let drop: Vec<usize> = match axes {
                        Some(ax) => ax
                            .iter()
                            .map(|&v| norm_axis(v, dims.len()).ok_or(format!("axis {v} is out of range")))
                            .collect::<Result<_, _>>()?,
                        None => (0..dims.len()).filter(|&i| dims[i] == 1).collect(),
                    };
                    if let Some(&bad) = drop.iter().find(|&&i| dims[i] != 1) {
                        return Err(format!("cannot squeeze axis {bad} of size {}", dims[bad]));
                    }
                    dims.iter().enumerate().filter(|(i, _)| !drop.contains(i)).map(|(_, &d)| d).collect()
                } else {
                    let ax = axes.ok_or("`axes` is required")?;
                    let r = dims.len() + ax.len();
                    let mut ins_at: Vec<usize> = ax
                        .iter()
                        .map(|&v| norm_axis(v, r).ok_or(format!("axis {v} is out of range")))
                        .collect::<Result<_, _>>()?;
                    ins_at.sort_unstable();
                    if let Some(w) = ins_at.windows(2).find(|w| w[0] == w[1]) {
                        return Err(format!("`axes` {ax:?} name output axis {} twice", w[0]));
                    }
                    let mut it = dims.iter();
                    (0..r).map(|i| if ins_at.contains(&i) { 1 } else { *it.next().unwrap_or(&1) }).collect()
                };
                self.reshape(&x, target.iter().map(|&d| d as i64).collect(), &out).map(|v| vec![v])
            }
            "Transpose" => {
                let r = self.dims(&x).len();
                let perm: Vec<usize> = match a.get("perm") {
                    Some(at) => at
                        .ints
                        .iter()
                        .map(|&p| usize::try_from(p).map_err(|_| format!("`perm` entry {p} is invalid")))
                        .collect::<Result<_, _>>()?,
                    None => (0..r).rev().collect(),
                };
                if perm.len() != r {
                    return Err(format!(
                        "`perm` {perm:?} has {} entries for an input of rank {r}",
                        perm.len()
                    ));
                }
                for (i, &p) in perm.iter().enumerate() {
                    if p >= r {
                        return Err(format!("`perm` {perm:?}: axis {p} is out of range for rank {r}"));
                    }
                    if perm[..i].contains(&p) {
                        return Err(format!(
                            "`perm` {perm:?} is not a permutation of 0..{r}: axis {p} appears twice"
                        ));
                    }
                }
                let (xn, _) = self.tensor(&x, None)?;
                one(self.emit(&out, Op::Transpose { perm }, vec![xn])?)
            }
            "Concat" => {
                let axis = a.int("axis", 0)?;
                if ins.iter().all(|v| matches!(v, Val::C { c, .. } if matches!(c.data, Data::Int(_)))) {
                    let cs: Vec<Rc<Const>> = ins
                        .iter()
                        .map(|v| match v {
                            Val::C { c, .. } => c.clone(),
                            _ => unreachable!(),
                        })
                        .collect();
                    return one(Val::C { c: Rc::new(concat(&cs, axis)?), onnx: out.clone(), init: false });
                }
                let dt = ins.iter().find_map(|v| match v {
                    Val::T { ty, .. } => Some(ty.dtype),
                    _ => None,
                });
                let mut args = Vec::new();
                for v in ins {
                    args.push(self.tensor(v, dt)?.0);
                }
                one(self.emit(&out, Op::Concat { axis }, args)?)
            }
            "Slice" => {
                let starts = self.const_ints(&ins[1], "starts")?;
                let ends = self.const_ints(&ins[2], "ends")?;
                let axes = match ins.get(3) {
                    Some(v) if !n.input[3].is_empty() => self.const_ints(v, "axes")?,
                    _ => (0..starts.len() as i64).collect(),
                };
                let steps = match ins.get(4) {
                    Some(v) if !n.input[4].is_empty() => self.const_ints(v, "steps")?,
                    _ => vec![1; starts.len()],
                };
                if let Some(s) = steps.iter().find(|&&s| s < 1) {
                    return Err(format!("step {s} is not supported (L0 slices with steps >= 1)"));
                }
                if let Val::C { c, .. } = &x {
                    if c.dims.len() == 1 {
                        if let Data::Int(v) = &c.data {
                            let d = v.len() as i64;
                            let cl =
                                |x: i64| (if x < 0 { x.saturating_add(d) } else { x }).clamp(0, d) as usize;
                            let (s, e) = (cl(starts[0]), cl(ends[0]));
                            let sl: Vec<i64> =
                                (s..e.max(s)).step_by(steps[0] as usize).map(|i| v[i]).collect();
                            let sliced =
                                Const { onnx_type: c.onnx_type, dims: vec![sl.len()], data: Data::Int(sl) };
                            return one(Val::C { c: Rc::new(sliced), onnx: out.clone(), init: false });
                        }
                    }
                }
                let (xn, _) = self.tensor(&x, None)?;
                one(self.emit(&out, Op::Slice { axes, starts, ends, steps }, vec![xn])?)
            }
            "Pad" => {
                let (xn, xt) = self.tensor(&x, None)?;
                let r = xt.rank();
                let raw = self.const_ints(&ins[1], "pads")?;
                let axes: Vec<usize> = match ins.get(3) {
                    Some(v) if !n.input[3].is_empty() => self
                        .const_ints(v, "axes")?
                        .iter()
                        .map(|&ax| norm_axis(ax, r).ok_or(format!("axis {ax} is out of range")))
                        .collect::<Result<_, _>>()?,
                    _ => (0..r).collect(),
                };
                if raw.len() != 2 * axes.len() {
                    return Err(format!("`pads` has {} entries for {} axes", raw.len(), axes.len()));
                }
                let mut pads = vec![0usize; 2 * r];
                for (k, &ax) in axes.iter().enumerate() {
                    for (side, &p) in [raw[k], raw[axes.len() + k]].iter().enumerate() {
                        pads[side * r + ax] =
                            usize::try_from(p).map_err(|_| format!("negative pad {p} is not supported"))?;
                    }
                }
                let mode = match a.string("mode", "constant")?.as_str() {
                    "constant" => {
                        let v = match ins.get(2) {
                            Some(Val::C { c, .. }) if !n.input[2].is_empty() => {
                                c.scalar().map(short).ok_or("`constant_value` must be a scalar")?
                            }
                            Some(_) if !n.input[2].is_empty() => {
                                return Err("`constant_value` must be a constant".into())
                            }
                            _ => 0.0,
                        };
                        PadMode::Constant(v)
                    }
                    "reflect" => PadMode::Reflect,
                    "edge" => PadMode::Edge,
                    other => return Err(format!("`mode`=\"{other}\" is not supported")),
                };
                one(self.emit(&out, Op::Pad { pads, mode }, vec![xn])?)
            }
            _ => Err(unsupported_reason(n)),
        }
    }

    /// A reshape of a tensor, or of a constant (folded).
    fn reshape(&mut self, x: &Val, target: Vec<i64>, out: &str) -> Result<Val, String> {
        if let Val::C { c, .. } = x {
            let n = c.numel();
            let cannot = || format!("cannot reshape {:?} to {target:?}", c.dims);
            let known: Vec<usize> = target.iter().filter(|&&d| d != -1).map(|&d| d as usize).collect();
            let known = numel_within_limit(&known).map_err(|_| cannot())?;
            let dims: Vec<usize> =
                target.iter().map(|&d| if d == -1 { n / known.max(1) } else { d as usize }).collect();
            if numel_within_limit(&dims) != Ok(n) {
                return Err(cannot());
            }
            return Ok(Val::C {
                c: Rc::new(Const { dims, ..(**c).clone() }),
                onnx: out.to_string(),
                init: false,
            });
        }
        let (xn, _) = self.tensor(x, None)?;
        self.emit(out, Op::Reshape { shape: target }, vec![xn])
    }
}

/// `Gather` on constants.
fn gather(data: &Const, idx: &Const, axis: i64) -> Result<Const, String> {
    let r = data.dims.len();
    let ax = norm_axis(axis, r).ok_or(format!("`axis` {axis} is out of range"))?;
    let d = data.dims[ax] as i64;
    let ids = idx.as_ints().ok_or("indices must be integers")?;
    let dims = [&data.dims[..ax], &idx.dims[..], &data.dims[ax + 1..]].concat();
    let mut out = Vec::with_capacity(numel_within_limit(&dims)?);
    let outer: usize = data.dims[..ax].iter().product();
    let inner: usize = data.dims[ax + 1..].iter().product();
    let vals = data.as_f64();
    for o in 0..outer {
        for &i in &ids {
            let i = if i < 0 { i + d } else { i };
            if !(0..d).contains(&i) {
                return Err(format!("index {i} is out of range for a dimension of {d}"));
            }
            let base = (o * data.dims[ax] + i as usize) * inner;
            out.extend_from_slice(&vals[base..base + inner]);
        }
    }
    let data_out = match data.data {
        Data::F32(_) => Data::F32(out.iter().map(|&v| v as f32).collect()),
        Data::Int(_) => Data::Int(out.iter().map(|&v| v as i64).collect()),
    };
    Ok(Const { onnx_type: data.onnx_type, dims, data: data_out })
}

/// `Concat` of integer constants.
fn concat(cs: &[Rc<Const>], axis: i64) -> Result<Const, String> {
    let first = &cs[0];
    let r = first.dims.len();
    let ax = norm_axis(axis, r).ok_or(format!("`axis` {axis} is out of range"))?;
    let outer: usize = first.dims[..ax].iter().product();
    let mut dims = first.dims.clone();
    dims[ax] = cs
        .iter()
        .try_fold(0usize, |n, c| n.checked_add(c.dims.get(ax).copied().unwrap_or(0)))
        .unwrap_or(usize::MAX);
    let mut out = Vec::with_capacity(numel_within_limit(&dims)?);
    for o in 0..outer {
        for c in cs {
            if c.dims.len() != r {
                return Err("constants of different ranks".into());
            }
            let chunk: usize = c.dims[ax..].iter().product();
            let v = c.as_ints().ok_or("non-integer constant")?;
            out.extend_from_slice(&v[o * chunk..(o + 1) * chunk]);
        }
    }
    Ok(Const { onnx_type: first.onnx_type, dims, data: Data::Int(out) })
}
