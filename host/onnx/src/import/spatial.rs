//! ONNX's spatial operators as L0's: `Conv`, `ConvInteger`, `ConvTranspose`, `MaxPool`,
//! `AveragePool`, `GlobalAveragePool`, `GlobalMaxPool` (a `max` over H and W) and `Resize`, on
//! NCHW images, and the exporter's `ekb` function `conv2d_integer`.
//!
//! What it keeps true (besides the parent module's rules):
//! - only 2-D forms are read; `auto_pad` becomes explicit pads, and a `ceil_mode` that changes a
//!   max pool's size becomes extra end padding (refused for average pools);
//! - `Resize` is read only in the forms that are PyTorch's `interpolate` (L0's `nearest` and
//!   `bilinear`), to whole sizes over H and W.

use super::{norm_axis, unsupported_reason, Attrs, Importer, OpTable, Res, Val};
use crate::export::EKB_DOMAIN;
use crate::proto::NodeProto;
use ekb_ir::l0::ast::{Conv2dAttrs, ConvTranspose2dAttrs, Op, Pool2dAttrs, ReduceKind, ResizeMode};
use ekb_ir::types::DType;

/// The ONNX operators read here.
pub(super) const OPS: OpTable = &[
    ("Conv", &["kernel_shape", "strides", "pads", "dilations", "group", "auto_pad"]),
    ("ConvInteger", &["kernel_shape", "strides", "pads", "dilations", "group", "auto_pad"]),
    (
        "ConvTranspose",
        &[
            "kernel_shape",
            "strides",
            "pads",
            "dilations",
            "group",
            "auto_pad",
            "output_padding",
            "output_shape",
        ],
    ),
    ("MaxPool", &["kernel_shape", "strides", "pads", "auto_pad", "ceil_mode", "dilations", "storage_order"]),
    (
        "AveragePool",
        &["kernel_shape", "strides", "pads", "auto_pad", "ceil_mode", "count_include_pad", "dilations"],
    ),
    ("GlobalAveragePool", &[]),
    ("GlobalMaxPool", &[]),
    (
        "Resize",
        &[
            "mode",
            "coordinate_transformation_mode",
            "nearest_mode",
            "cubic_coeff_a",
            "exclude_outside",
            "extrapolation_value",
            "antialias",
            "axes",
            "keep_aspect_ratio_policy",
        ],
    ),
];

/// The exporter's `ekb`-domain functions read here.
pub(super) const EKB_OPS: OpTable =
    &[("conv2d_integer", &["kernel_shape", "strides", "pads", "dilations", "group"])];

impl Importer<'_> {
    /// The L0 form of a spatial node.
    pub(super) fn convert_spatial(&mut self, n: &NodeProto, ins: &[Val]) -> Res {
        let out = n.output.first().cloned().unwrap_or_default();
        let ekb = n.domain == EKB_DOMAIN;
        let x = ins.first().cloned().unwrap_or(Val::Bad);
        let one = |v: Val| Ok(vec![v]);
        match (ekb, n.op_type.as_str()) {
            (false, "ConvTranspose") => self.conv_transpose(n, ins, &out).map(|v| vec![v]),
            (false, "Resize") => self.resize(n, ins, &out).map(|v| vec![v]),
            (false, "Conv") => {
                self.conv(n, &ins[..ins.len().min(3)], Some(DType::F32), &out).map(|v| vec![v])
            }
            (false, "ConvInteger") => {
                self.integer_operands(n, ins, &["x_zero_point", "w_zero_point"], &["x", "w"])?;
                one(self.conv(n, &ins[..2], None, &out)?)
            }
            (false, "MaxPool" | "AveragePool") => self.pool(n, &x, &out).map(|v| vec![v]),
            (false, "GlobalAveragePool") => {
                let (xn, _) = self.tensor(&x, None)?;
                one(self.emit(&out, Op::GlobalAvgPool2d, vec![xn])?)
            }
            (false, "GlobalMaxPool") => {
                let (xn, _) = self.tensor(&x, None)?;
                one(self.emit(
                    &out,
                    Op::Reduce { kind: ReduceKind::Max, axes: vec![2, 3], keepdims: true },
                    vec![xn],
                )?)
            }
            (true, "conv2d_integer") => one(self.conv(n, ins, None, &out)?),
            _ => Err(unsupported_reason(n)),
        }
    }

    /// Padding `[top, left, bottom, right]` from `pads` or `auto_pad`.
    fn spatial_pads(
        a: &Attrs,
        input: &[usize],
        kernel: &[usize],
        stride: &[usize],
        dilation: &[usize],
    ) -> Result<[usize; 4], String> {
        match a.string("auto_pad", "NOTSET")?.as_str() {
            "NOTSET" => {
                let p = a.ints("pads", &[0, 0, 0, 0])?;
                if p.len() != 4 {
                    return Err(format!("`pads` has {} entries, expected 4", p.len()));
                }
                let mut out = [0usize; 4];
                for (o, &v) in out.iter_mut().zip(&p) {
                    *o = usize::try_from(v).map_err(|_| format!("negative pad {v} is not supported"))?;
                }
                Ok(out)
            }
            "VALID" => Ok([0; 4]),
            mode @ ("SAME_UPPER" | "SAME_LOWER") => {
                let mut out = [0usize; 4];
                for i in 0..2 {
                    let o = input[i].div_ceil(stride[i]);
                    let eff = (kernel[i] - 1) * dilation[i] + 1;
                    let total = ((o - 1) * stride[i] + eff).saturating_sub(input[i]);
                    let small = total / 2;
                    let (begin, end) =
                        if mode == "SAME_UPPER" { (small, total - small) } else { (total - small, small) };
                    out[i] = begin;
                    out[i + 2] = end;
                }
                Ok(out)
            }
            other => Err(format!("`auto_pad`=\"{other}\" is not supported")),
        }
    }

    /// `Conv` (`want` f32) or an integer convolution (`want` None: i8 input and weight as they
    /// are, an i32 bias); `ins` are the input, the weight and the bias if there is one.
    fn conv(&mut self, n: &NodeProto, ins: &[Val], want: Option<DType>, out: &str) -> Result<Val, String> {
        let a = Attrs(n);
        let (x, xt) = self.tensor(&ins[0], want)?;
        if xt.rank() != 4 {
            return Err(format!(
                "a {}-D convolution is not supported (L0 has conv2d on NCHW)",
                xt.rank().saturating_sub(2)
            ));
        }
        let (w, wt) = self.tensor(&ins[1], want)?;
        if wt.rank() != 4 {
            return Err(format!("the weight has rank {}, expected 4", wt.rank()));
        }
        if let Some(k) = a.get("kernel_shape") {
            if k.ints.iter().map(|&v| v as usize).ne(wt.shape[2..].iter().copied()) {
                return Err(format!(
                    "`kernel_shape` {:?} does not match the weight's {:?}",
                    k.ints,
                    &wt.shape[2..]
                ));
            }
        }
        let stride = pair(&a.ints("strides", &[1, 1])?, "strides")?;
        let dilation = pair(&a.ints("dilations", &[1, 1])?, "dilations")?;
        let pad = Self::spatial_pads(&a, &xt.shape[2..], &wt.shape[2..], &stride, &dilation)?;
        let groups = usize::try_from(a.int("group", 1)?).map_err(|_| "`group` must be >= 1".to_string())?;
        let mut args = vec![x, w];
        if ins.len() > 2 && !n.input[2].is_empty() {
            args.push(self.tensor(&ins[2], Some(want.unwrap_or(DType::I32)))?.0);
        }
        self.emit(out, Op::Conv2d(Conv2dAttrs { stride, pad, dilation, groups }), args)
    }

    /// `MaxPool` or `AveragePool`.
    fn pool(&mut self, n: &NodeProto, x: &Val, out: &str) -> Result<Val, String> {
        let a = Attrs(n);
        let max = n.op_type == "MaxPool";
        let (xn, xt) = self.tensor(x, Some(DType::F32))?;
        if xt.rank() != 4 {
            return Err(format!(
                "{}-D pooling is not supported (L0 pools NCHW in 2-D)",
                xt.rank().saturating_sub(2)
            ));
        }
        let kernel = pair(&a.ints("kernel_shape", &[])?, "kernel_shape")?;
        let stride = pair(&a.ints("strides", &[1, 1])?, "strides")?;
        if a.ints("dilations", &[1, 1])? != [1, 1] {
            return Err("`dilations` other than [1,1] are not supported".into());
        }
        if a.int("storage_order", 0)? != 0 {
            return Err("`storage_order`=1 is not supported".into());
        }
        let mut pad = Self::spatial_pads(&a, &xt.shape[2..], &kernel, &stride, &[1, 1])?;
        if a.int("ceil_mode", 0)? != 0 {
            for i in 0..2 {
                let padded = xt.shape[2 + i] + pad[i] + pad[i + 2];
                let span = padded.checked_sub(kernel[i]).ok_or("the kernel is larger than the input")?;
                let floor = span / stride[i] + 1;
                let mut ceil = span.div_ceil(stride[i]) + 1;
                // The last window must start inside the input or its leading padding.
                if (ceil - 1) * stride[i] >= xt.shape[2 + i] + pad[i] {
                    ceil -= 1;
                }
                if ceil != floor {
                    if !max {
                        return Err(format!(
                            "`ceil_mode`=1 changes the output size here ({ceil} instead of {floor}); not supported for AveragePool"
                        ));
                    }
                    // Extra end padding reproduces the last, partial window (padding never wins).
                    pad[i + 2] += (ceil - 1) * stride[i] + kernel[i] - padded;
                }
            }
        }
        let pool = Pool2dAttrs { kernel, stride, pad };
        let op = if max {
            Op::MaxPool2d(pool)
        } else {
            Op::AvgPool2d { pool, count_include_pad: a.int("count_include_pad", 0)? != 0 }
        };
        self.emit(out, op, vec![xn])
    }

    /// `ConvTranspose` on NCHW (explicit pads or `VALID`; `output_shape` is not read).
    fn conv_transpose(&mut self, n: &NodeProto, ins: &[Val], out: &str) -> Result<Val, String> {
        let a = Attrs(n);
        let (x, xt) = self.tensor(&ins[0], Some(DType::F32))?;
        if xt.rank() != 4 {
            return Err(format!(
                "a {}-D transposed convolution is not supported (L0 has conv_transpose2d on NCHW)",
                xt.rank().saturating_sub(2)
            ));
        }
        let (w, wt) = self.tensor(&ins[1], Some(DType::F32))?;
        if wt.rank() != 4 {
            return Err(format!("the weight has rank {}, expected 4", wt.rank()));
        }
        if let Some(k) = a.get("kernel_shape") {
            if k.ints.iter().map(|&v| v as usize).ne(wt.shape[2..].iter().copied()) {
                return Err(format!(
                    "`kernel_shape` {:?} does not match the weight's {:?}",
                    k.ints,
                    &wt.shape[2..]
                ));
            }
        }
        if a.get("output_shape").is_some() {
            return Err("`output_shape` is not supported (give `pads` and `output_padding`)".into());
        }
        let stride = pair(&a.ints("strides", &[1, 1])?, "strides")?;
        let dilation = pair(&a.ints("dilations", &[1, 1])?, "dilations")?;
        let pad = match a.string("auto_pad", "NOTSET")?.as_str() {
            "NOTSET" | "VALID" => Self::spatial_pads(&a, &xt.shape[2..], &wt.shape[2..], &stride, &dilation)?,
            other => return Err(format!("`auto_pad`=\"{other}\" is not supported for ConvTranspose")),
        };
        let op = a.ints("output_padding", &[0, 0])?;
        let output_padding = match op.as_slice() {
            [h, w] if *h >= 0 && *w >= 0 => [*h as usize, *w as usize],
            _ => return Err(format!("`output_padding` must be two integers >= 0, found {op:?}")),
        };
        for i in 0..2 {
            if output_padding[i] >= stride[i].max(dilation[i]) {
                return Err(format!(
                    "`output_padding` {output_padding:?} must be smaller than the stride or the dilation of its axis"
                ));
            }
        }
        let groups =
            usize::try_from(a.int("group", 1)?).ok().filter(|&g| g >= 1).ok_or("`group` must be >= 1")?;
        let mut args = vec![x, w];
        if ins.len() > 2 && !n.input[2].is_empty() {
            args.push(self.tensor(&ins[2], Some(DType::F32))?.0);
        }
        let attrs = ConvTranspose2dAttrs { stride, pad, output_padding, dilation, groups };
        self.emit(out, Op::ConvTranspose2d(attrs), args)
    }

    /// `Resize` of NCHW over H and W, in the forms that are PyTorch's `interpolate`: `nearest`
    /// with `asymmetric` coordinates and `floor` rounding, and `linear` with `half_pixel`,
    /// `pytorch_half_pixel` (output sizes above 1) or `align_corners` coordinates.
    fn resize(&mut self, n: &NodeProto, ins: &[Val], out: &str) -> Result<Val, String> {
        let a = Attrs(n);
        let (xn, xt) = self.tensor(&ins[0], Some(DType::F32))?;
        if xt.rank() != 4 {
            return Err(format!("resizing a rank-{} tensor is not supported (L0 resizes NCHW)", xt.rank()));
        }
        let axes = a.ints("axes", &[0, 1, 2, 3])?;
        let axes: Vec<usize> = axes
            .iter()
            .map(|&v| norm_axis(v, 4).ok_or(format!("`axes` entry {v} is out of range for rank 4")))
            .collect::<Result<_, _>>()?;
        if axes != [0, 1, 2, 3] && axes != [2, 3] {
            return Err("`axes` other than all four or [2,3] are not supported".into());
        }
        if a.int("antialias", 0)? != 0 {
            return Err("`antialias`=1 is not supported".into());
        }
        if a.int("exclude_outside", 0)? != 0 {
            return Err("`exclude_outside`=1 is not supported".into());
        }
        if a.string("keep_aspect_ratio_policy", "stretch")? != "stretch" {
            return Err("`keep_aspect_ratio_policy` other than \"stretch\" is not supported".into());
        }
        let given = |i: usize| ins.get(i).filter(|_| n.input.get(i).is_some_and(|s| !s.is_empty()));
        let full = |v: Vec<f64>| -> Vec<f64> {
            if axes.len() == 2 {
                vec![1.0, 1.0, v[0], v[1]]
            } else {
                v
            }
        };
        let size: Vec<usize> = match (given(2), given(3)) {
            (_, Some(v)) => {
                let sizes = self.const_ints(v, "sizes")?;
                if sizes.len() != axes.len() {
                    return Err(format!("`sizes` has {} entries for {} axes", sizes.len(), axes.len()));
                }
                let sizes = if axes.len() == 2 {
                    vec![xt.shape[0] as i64, xt.shape[1] as i64, sizes[0], sizes[1]]
                } else {
                    sizes
                };
                sizes
                    .iter()
                    .map(|&d| usize::try_from(d).map_err(|_| format!("size {d} is negative")))
                    .collect::<Result<_, _>>()?
            }
            (Some(Val::C { c, .. }), None) => {
                let scales = full(c.as_f64());
                if scales.len() != 4 {
                    return Err(format!("`scales` has {} entries, expected 4", scales.len()));
                }
                let mut size = Vec::new();
                for (d, &sc) in xt.shape.iter().zip(&scales) {
                    let o = *d as f64 * sc;
                    if o.fract() != 0.0 || o < 0.0 {
                        return Err(format!(
                            "the scale {sc} gives {d} * {sc} = {o}, not a whole size; L0 resizes to whole sizes (give `sizes`)"
                        ));
                    }
                    size.push(o as usize);
                }
                size
            }
            (Some(_), None) => return Err("`scales` must be a constant".into()),
            (None, None) => return Err("neither `scales` nor `sizes` is given".into()),
        };
        if size[..2] != xt.shape[..2] {
            return Err(format!(
                "resizing the batch or channel axes ({:?} to {:?}) is not supported",
                &xt.shape[..2],
                &size[..2]
            ));
        }
        let ctm = a.string("coordinate_transformation_mode", "half_pixel")?;
        let (mode, align_corners) = match (a.string("mode", "nearest")?.as_str(), ctm.as_str()) {
            ("nearest", "asymmetric") => {
                let rounding = a.string("nearest_mode", "round_prefer_floor")?;
                if rounding != "floor" {
                    return Err(format!(
                        "`nearest_mode`=\"{rounding}\" is not supported (L0's nearest is PyTorch's: `asymmetric` coordinates, `floor`)"
                    ));
                }
                (ResizeMode::Nearest, false)
            }
            ("nearest", other) => {
                return Err(format!(
                    "`mode`=\"nearest\" with `coordinate_transformation_mode`=\"{other}\" is not supported (L0's nearest is PyTorch's: `asymmetric` coordinates, `floor`)"
                ))
            }
            ("linear", "half_pixel") => (ResizeMode::Bilinear, false),
            ("linear", "pytorch_half_pixel") if size[2] > 1 && size[3] > 1 => (ResizeMode::Bilinear, false),
            ("linear", "align_corners") => (ResizeMode::Bilinear, true),
            ("linear", other) => {
                return Err(format!(
                    "`mode`=\"linear\" with `coordinate_transformation_mode`=\"{other}\" is not supported here (L0 reads `half_pixel`, `pytorch_half_pixel` to sizes above 1, and `align_corners`)"
                ))
            }
            (other, _) => return Err(format!("`mode`=\"{other}\" is not supported (L0 has nearest and bilinear)")),
        };
        let op = Op::Resize { size: [size[2], size[3]], mode, align_corners };
        self.emit(out, op, vec![xn])
    }
}

fn pair(v: &[i64], what: &str) -> Result<[usize; 2], String> {
    match v {
        [a, b] if *a >= 1 && *b >= 1 => Ok([*a as usize, *b as usize]),
        _ => Err(format!("`{what}` must be two positive integers, found {v:?}")),
    }
}
