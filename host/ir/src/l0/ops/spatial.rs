//! Spatial operators on NCHW images: `conv2d`, `conv_transpose2d`, `max_pool2d`, `avg_pool2d`,
//! `global_avg_pool2d` and `resize`: their specs, how they are built from attributes and printed
//! back, and their type rules.
//!
//! What it keeps true (besides the parent module's rules):
//! - strides, dilations, kernels, groups and sizes are at least 1 and pads at least 0; the
//!   `output_padding` of `conv_transpose2d` is smaller than its stride or its dilation;
//! - images and weights have rank 4, channels agree with the weight and the groups, and every
//!   output height and width is at least 1: a (dilated) kernel fits the padded input, a pool pads
//!   at most half its kernel, the pads of a transposed convolution leave some output;
//! - `conv2d` follows the product rule ([`Rule::product`]); the others are f32;
//! - the heights and widths `resize` reads and writes are at most [`RESIZE_MAX`], so that its
//!   exact source arithmetic fits in an i32.

use super::{
    a, ints, shape_str, spec, AttrDefault as D, AttrKind as K, AttrSpec, AttrValue, OpSpec, Resolved, Rule,
    F, X,
};
use crate::diag::Diagnostic;
use crate::l0::ast::{Conv2dAttrs, ConvTranspose2dAttrs, Op, Pool2dAttrs, ResizeMode};
use crate::types::{DType, TensorType};

/// The convolutions, the pools and `resize`.
pub(super) const SPECS: &[OpSpec] = &[
    spec(
        "conv2d",
        &["x", "w", "b?"],
        &[
            a("stride", K::Ints, D::Ints(&[1, 1])),
            a("pad", K::Ints, D::Ints(&[0, 0, 0, 0])),
            a("dilation", K::Ints, D::Ints(&[1, 1])),
            a("groups", K::Int, D::Int(1)),
        ],
    ),
    spec(
        "conv_transpose2d",
        &["x", "w", "b?"],
        &[
            a("stride", K::Ints, D::Ints(&[1, 1])),
            a("pad", K::Ints, D::Ints(&[0, 0, 0, 0])),
            a("output_padding", K::Ints, D::Ints(&[0, 0])),
            a("dilation", K::Ints, D::Ints(&[1, 1])),
            a("groups", K::Int, D::Int(1)),
        ],
    ),
    spec("max_pool2d", X, POOL_ATTRS),
    spec(
        "avg_pool2d",
        X,
        &[
            a("kernel", K::Ints, D::Required),
            a("stride", K::Ints, D::Derived("the kernel")),
            a("pad", K::Ints, D::Ints(&[0, 0, 0, 0])),
            a("count_include_pad", K::Bool, D::Bool(true)),
        ],
    ),
    spec("global_avg_pool2d", X, &[]),
    spec(
        "resize",
        X,
        &[
            a("size", K::Ints, D::Required),
            a("mode", K::Choice(&["nearest", "bilinear"]), D::Ident("nearest")),
            a("align_corners", K::Bool, D::Bool(false)),
        ],
    ),
];

const POOL_ATTRS: &[AttrSpec] = &[
    a("kernel", K::Ints, D::Required),
    a("stride", K::Ints, D::Derived("the kernel")),
    a("pad", K::Ints, D::Ints(&[0, 0, 0, 0])),
];

/// The largest height or width `resize` reads or writes: `2 * in * out + in` (its exact source
/// arithmetic) then fits in an i32.
pub const RESIZE_MAX: usize = 32767;

/// Builds the spatial operator `spec` names from its resolved attributes, checking value ranges;
/// `None`: `spec` is of another family.
pub(super) fn build(spec: &'static OpSpec, r: &Resolved) -> Result<Option<Op>, Diagnostic> {
    let op = match spec.name {
        "conv2d" => Op::Conv2d(Conv2dAttrs {
            stride: r.sizes("stride", 1)?.unwrap_or([1, 1]),
            pad: r.sizes("pad", 0)?.unwrap_or([0; 4]),
            dilation: r.sizes("dilation", 1)?.unwrap_or([1, 1]),
            groups: r.groups()?,
        }),
        "conv_transpose2d" => {
            let stride = r.sizes("stride", 1)?.unwrap_or([1, 1]);
            let dilation = r.sizes("dilation", 1)?.unwrap_or([1, 1]);
            let output_padding = r.sizes("output_padding", 0)?.unwrap_or([0, 0]);
            for (i, axis) in ["height", "width"].into_iter().enumerate() {
                if output_padding[i] >= stride[i].max(dilation[i]) {
                    let span = r.get("output_padding").map_or(r.span, |g| g.1);
                    return Err(r
                        .err(
                            "output_padding",
                            span,
                            format!(
                                "{} (the {axis}) must be smaller than the stride {} or the dilation {}",
                                output_padding[i], stride[i], dilation[i]
                            ),
                        )
                        .with_expected(format!(
                            "output_padding < max(stride, dilation) = {}",
                            stride[i].max(dilation[i])
                        )));
                }
            }
            Op::ConvTranspose2d(ConvTranspose2dAttrs {
                stride,
                pad: r.sizes("pad", 0)?.unwrap_or([0; 4]),
                output_padding,
                dilation,
                groups: r.groups()?,
            })
        }
        "max_pool2d" | "avg_pool2d" => {
            let kernel = r.sizes("kernel", 1)?.unwrap_or([1, 1]);
            let pool = Pool2dAttrs {
                kernel,
                stride: r.sizes("stride", 1)?.unwrap_or(kernel),
                pad: r.sizes("pad", 0)?.unwrap_or([0; 4]),
            };
            if spec.name == "max_pool2d" {
                Op::MaxPool2d(pool)
            } else {
                Op::AvgPool2d { pool, count_include_pad: r.bool("count_include_pad") }
            }
        }
        "global_avg_pool2d" => Op::GlobalAvgPool2d,
        "resize" => {
            let size = r.sizes("size", 1)?.unwrap_or([1, 1]);
            let mode = if r.ident("mode") == "bilinear" { ResizeMode::Bilinear } else { ResizeMode::Nearest };
            let align_corners = r.bool("align_corners");
            if align_corners && mode == ResizeMode::Nearest {
                let span = r.get("align_corners").map_or(r.span, |g| g.1);
                return Err(r
                    .err("align_corners", span, "applies only to `mode=bilinear`")
                    .with_hint("remove `align_corners=true` or use `mode=bilinear`"));
            }
            Op::Resize { size, mode, align_corners }
        }
        _ => return Ok(None),
    };
    Ok(Some(op))
}

/// The attributes of a spatial operator, for [`Op::attrs_for_print`].
pub(super) fn attrs(op: &Op) -> Vec<(&'static str, AttrValue)> {
    use AttrValue as V;
    match op {
        Op::Conv2d(c) => vec![
            ("stride", ints(&c.stride)),
            ("pad", ints(&c.pad)),
            ("dilation", ints(&c.dilation)),
            ("groups", V::Int(c.groups as i64)),
        ],
        Op::MaxPool2d(p) => {
            vec![("kernel", ints(&p.kernel)), ("stride", ints(&p.stride)), ("pad", ints(&p.pad))]
        }
        Op::AvgPool2d { pool: p, count_include_pad } => vec![
            ("kernel", ints(&p.kernel)),
            ("stride", ints(&p.stride)),
            ("pad", ints(&p.pad)),
            ("count_include_pad", V::Bool(*count_include_pad)),
        ],
        Op::GlobalAvgPool2d => vec![],
        Op::ConvTranspose2d(c) => vec![
            ("stride", ints(&c.stride)),
            ("pad", ints(&c.pad)),
            ("output_padding", ints(&c.output_padding)),
            ("dilation", ints(&c.dilation)),
            ("groups", V::Int(c.groups as i64)),
        ],
        Op::Resize { size, mode, align_corners } => vec![
            ("size", ints(size)),
            (
                "mode",
                V::Ident(
                    match mode {
                        ResizeMode::Nearest => "nearest",
                        ResizeMode::Bilinear => "bilinear",
                    }
                    .into(),
                ),
            ),
            ("align_corners", V::Bool(*align_corners)),
        ],
        other => unreachable!("`{}` is not a spatial operator", other.name()),
    }
}

/// The result type of a spatial operator (see [`super::infer`]).
pub(super) fn infer(op: &Op, rule: &Rule) -> Result<TensorType, Diagnostic> {
    let inputs = rule.inputs;
    let out = match op {
        Op::Conv2d(c) => {
            let dtype = rule.product()?;
            let (x, w) = (inputs[0], inputs[1]);
            for (n, t) in [("x", x), ("w", w)] {
                if t.rank() != 4 {
                    return Err(rule.err(format!(
                        "`{n}` has rank {}, expected 4 ({})",
                        t.rank(),
                        if n == "x" { "[N,C,H,W]" } else { "[OC,C/groups,KH,KW]" }
                    )));
                }
            }
            let ch = x.shape[1];
            let expect_ch = w.shape[1].checked_mul(c.groups);
            if expect_ch != Some(ch) {
                return Err(rule.err(format!(
                    "input has {ch} channels but weight expects {} (= w.shape[1] * groups)",
                    expect_ch.map_or("too many".to_string(), |e| e.to_string())
                )));
            }
            let oc = w.shape[0];
            if oc % c.groups != 0 {
                return Err(rule.err(format!(
                    "output channels {oc} (w.shape[0]) are not divisible by groups={}",
                    c.groups
                )));
            }
            if let Some(b) = inputs.get(2) {
                if b.shape != [oc] {
                    return Err(rule.err(format!("b has shape {}, expected [{oc}]", shape_str(&b.shape))));
                }
            }
            let mut out = vec![x.shape[0], oc];
            for (i, dim) in ["height", "width"].into_iter().enumerate() {
                let size = x.shape[2 + i];
                let k = w.shape[2 + i];
                let dil = c.dilation[i];
                let ek = k.checked_sub(1).and_then(|k1| k1.checked_mul(dil)).map(|e| e + 1);
                let padded = size + c.pad[i] + c.pad[i + 2];
                match ek {
                    Some(ek) if k > 0 && ek <= padded => out.push((padded - ek) / c.stride[i] + 1),
                    _ => {
                        return Err(rule.err(format!(
                        "the kernel {dim} {k} (dilation {dil}) does not fit the padded input {dim} {padded}"
                    )))
                    }
                }
            }
            TensorType::new(dtype, out)
        }
        Op::MaxPool2d(p) | Op::AvgPool2d { pool: p, .. } => {
            rule.want(0, F)?;
            let x = inputs[0];
            if x.rank() != 4 {
                return Err(rule.err(format!("x has rank {}, expected 4 ([N,C,H,W])", x.rank())));
            }
            let mut out = vec![x.shape[0], x.shape[1]];
            for (i, dim) in ["height", "width"].into_iter().enumerate() {
                let k = p.kernel[i];
                for (side, pad) in [(["top", "left"][i], p.pad[i]), (["bottom", "right"][i], p.pad[i + 2])] {
                    if pad > k / 2 {
                        return Err(rule
                            .err(format!("pad {side} {pad} is more than half the kernel {dim} {k}"))
                            .with_expected(format!("pad <= {} (kernel / 2)", k / 2)));
                    }
                }
                let padded = x.shape[2 + i] + p.pad[i] + p.pad[i + 2];
                if k > padded {
                    return Err(rule.err(format!(
                        "the kernel {dim} {k} is larger than the padded input {dim} {padded}"
                    )));
                }
                out.push((padded - k) / p.stride[i] + 1);
            }
            TensorType::new(DType::F32, out)
        }
        Op::GlobalAvgPool2d => {
            rule.want(0, F)?;
            let x = inputs[0];
            if x.rank() != 4 {
                return Err(rule.err(format!("x has rank {}, expected 4 ([N,C,H,W])", x.rank())));
            }
            TensorType::new(DType::F32, [x.shape[0], x.shape[1], 1, 1])
        }
        Op::ConvTranspose2d(c) => {
            for i in 0..inputs.len() {
                rule.want(i, F)?;
            }
            let (x, w) = (inputs[0], inputs[1]);
            for (n, t) in [("x", x), ("w", w)] {
                if t.rank() != 4 {
                    return Err(rule.err(format!(
                        "`{n}` has rank {}, expected 4 ({})",
                        t.rank(),
                        if n == "x" { "[N,C,H,W]" } else { "[C,OC/groups,KH,KW]" }
                    )));
                }
            }
            let ch = x.shape[1];
            if w.shape[0] != ch {
                return Err(rule
                    .err(format!("input has {ch} channels but the weight has {} (w.shape[0])", w.shape[0])));
            }
            if ch % c.groups != 0 {
                return Err(rule.err(format!("input channels {ch} are not divisible by groups={}", c.groups)));
            }
            let oc = w.shape[1]
                .checked_mul(c.groups)
                .ok_or_else(|| rule.err("the output has too many channels".to_string()))?;
            if let Some(b) = inputs.get(2) {
                if b.shape != [oc] {
                    return Err(rule.err(format!(
                        "b has shape {}, expected [{oc}] (w.shape[1] * groups)",
                        shape_str(&b.shape)
                    )));
                }
            }
            let mut out = vec![x.shape[0], oc];
            for (i, dim) in ["height", "width"].into_iter().enumerate() {
                let (size, k) = (x.shape[2 + i] as i128, w.shape[2 + i] as i128);
                if size == 0 || k == 0 {
                    return Err(rule.err(format!("the input {dim} {size} and kernel {dim} {k} must be >= 1")));
                }
                let full = (size - 1) * c.stride[i] as i128
                    + c.dilation[i] as i128 * (k - 1)
                    + c.output_padding[i] as i128
                    + 1;
                let pads = (c.pad[i] + c.pad[i + 2]) as i128;
                if full <= pads {
                    return Err(rule
                        .err(format!(
                            "the output {dim} would be {} (the full {dim} {full} minus the pads {pads})",
                            full - pads
                        ))
                        .with_expected(format!("pads that leave an output {dim} >= 1")));
                }
                out.push(usize::try_from(full - pads).unwrap_or(usize::MAX));
            }
            TensorType::new(DType::F32, out)
        }
        Op::Resize { size, .. } => {
            rule.want(0, F)?;
            let x = inputs[0];
            if x.rank() != 4 {
                return Err(rule.err(format!("x has rank {}, expected 4 ([N,C,H,W])", x.rank())));
            }
            for (i, dim) in ["height", "width"].into_iter().enumerate() {
                let (from, to) = (x.shape[2 + i], size[i]);
                if from == 0 {
                    return Err(rule.err(format!("cannot resize an input of {dim} 0")));
                }
                if from > RESIZE_MAX || to > RESIZE_MAX {
                    return Err(rule
                        .err(format!("a {dim} of {} is too large to resize", from.max(to)))
                        .with_expected(format!("input and output heights and widths <= {RESIZE_MAX}")));
                }
            }
            TensorType::new(DType::F32, [x.shape[0], x.shape[1], size[0], size[1]])
        }
        other => unreachable!("`{}` is not a spatial operator", other.name()),
    };
    Ok(out)
}
