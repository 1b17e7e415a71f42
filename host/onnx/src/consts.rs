//! Constant tensors of an ONNX model (initializers, `Constant` nodes, folded shape arithmetic),
//! decoded from `TensorProto` and encoded back.
//!
//! What it must keep true: a decoded tensor has exactly `prod(dims)` elements, whatever field
//! the data came in (`raw_data` little-endian, or the typed fields), and a mismatch is an error
//! naming the tensor, never a truncated or padded tensor. Floats are kept as f32 (the only float
//! type L0 has); every integer type is widened to i64, and narrowing to i32 is checked.
//! Every constant, decoded or folded at import time, has at most L0's `MAX_NUMEL` elements:
//! [`numel_within_limit`] is asked before its values are allocated. An integer constant's values
//! are those its ONNX type can hold ([`wrap`] brings a folded result there, as ONNX's integer
//! arithmetic wraps around).

use crate::proto::{dtype, TensorProto};
use ekb_ir::l0::ops::check_numel;
use ekb_ir::tensor::BufData;
use ekb_ir::DType;

/// The element count of a constant of shape `dims`, if within L0's limit on any tensor
/// (`MAX_NUMEL`); otherwise why not. Every decoded or folded constant is sized with this before
/// its values are allocated, so no constant in a model, however built, can exhaust memory.
pub fn numel_within_limit(dims: &[usize]) -> Result<usize, String> {
    check_numel(dims).map_err(|why| format!("a constant of shape {dims:?} would have {why}"))
}

/// `v` as ONNX's integer type `onnx_type` stores it: two's complement wraparound for the
/// narrow types (int8 `100 + 100` is -56, uint8 `200 + 100` is 44), 0 or 1 for BOOL, unchanged
/// for INT64.
pub fn wrap(v: i64, onnx_type: i32) -> i64 {
    match onnx_type {
        dtype::INT8 => i64::from(v as i8),
        dtype::UINT8 => i64::from(v as u8),
        dtype::INT16 => i64::from(v as i16),
        dtype::UINT16 => i64::from(v as u16),
        dtype::INT32 => i64::from(v as i32),
        dtype::UINT32 => i64::from(v as u32),
        dtype::BOOL => i64::from(v != 0),
        _ => v,
    }
}

/// The values of a constant tensor.
#[derive(Debug, Clone, PartialEq)]
pub enum Data {
    F32(Vec<f32>),
    /// Any integer or boolean ONNX type, widened.
    Int(Vec<i64>),
}

/// A constant tensor: its ONNX element type (as stored), shape and values.
#[derive(Debug, Clone, PartialEq)]
pub struct Const {
    pub onnx_type: i32,
    pub dims: Vec<usize>,
    pub data: Data,
}

impl Const {
    pub fn ints(dims: Vec<usize>, v: Vec<i64>) -> Const {
        Const { onnx_type: dtype::INT64, dims, data: Data::Int(v) }
    }

    pub fn numel(&self) -> usize {
        match &self.data {
            Data::F32(v) => v.len(),
            Data::Int(v) => v.len(),
        }
    }

    /// The values as integers (floats only when integral).
    pub fn as_ints(&self) -> Option<Vec<i64>> {
        match &self.data {
            Data::Int(v) => Some(v.clone()),
            Data::F32(v) => v.iter().map(|&x| (x.fract() == 0.0).then_some(x as i64)).collect(),
        }
    }

    /// The values as f64.
    pub fn as_f64(&self) -> Vec<f64> {
        match &self.data {
            Data::F32(v) => v.iter().map(|&x| f64::from(x)).collect(),
            Data::Int(v) => v.iter().map(|&x| x as f64).collect(),
        }
    }

    /// The single value of a one-element tensor.
    pub fn scalar(&self) -> Option<f64> {
        (self.numel() == 1).then(|| self.as_f64()[0])
    }

    /// Whether every element is the same (or there are none).
    pub fn is_uniform(&self) -> bool {
        match &self.data {
            Data::F32(v) => v.windows(2).all(|w| w[0].to_bits() == w[1].to_bits()),
            Data::Int(v) => v.windows(2).all(|w| w[0] == w[1]),
        }
    }

    /// The L0 dtype a constant of this ONNX type keeps: f16 for FLOAT16, f32 for the other
    /// floats, i8 for INT8, i32 for the other integer types.
    pub fn l0_dtype(&self) -> DType {
        match (&self.data, self.onnx_type) {
            (Data::F32(_), dtype::FLOAT16) => DType::F16,
            (Data::F32(_), _) => DType::F32,
            (Data::Int(_), dtype::INT8) => DType::I8,
            (Data::Int(_), _) => DType::I32,
        }
    }

    /// The integer values as i8 storage, if every value fits.
    pub fn to_i8_buf(&self) -> Result<BufData, String> {
        let ints = self.as_ints().ok_or("the values are not integral")?;
        ints.iter()
            .map(|&x| i8::try_from(x).map_err(|_| format!("the value {x} does not fit in i8")))
            .collect::<Result<Vec<_>, _>>()
            .map(BufData::I8)
    }

    /// The values as L0 storage: f32 stays f32; integers become i32 if every value fits.
    pub fn to_buf(&self) -> Result<BufData, String> {
        match &self.data {
            Data::F32(v) => Ok(BufData::F32(v.clone())),
            Data::Int(v) => v
                .iter()
                .map(|&x| i32::try_from(x).map_err(|_| format!("the value {x} does not fit in i32")))
                .collect::<Result<Vec<_>, _>>()
                .map(BufData::I32),
        }
    }
}

/// Decodes an initializer or a `Constant` value. `what` names it in errors.
pub fn decode(t: &TensorProto, what: &str) -> Result<Const, String> {
    if t.data_location == 1 || !t.external_data.is_empty() {
        let file = t.external_data.iter().find(|e| e.key == "location").map(|e| e.value.as_str());
        return Err(format!(
            "{what} keeps its data in an external file{}; external data is not supported",
            file.map(|f| format!(" (`{f}`)")).unwrap_or_default()
        ));
    }
    let mut dims = Vec::with_capacity(t.dims.len());
    for &d in &t.dims {
        dims.push(usize::try_from(d).map_err(|_| format!("{what} has a negative dimension {d}"))?);
    }
    let n = numel_within_limit(&dims).map_err(|why| format!("{what} has too many elements: {why}"))?;
    let width = match t.data_type {
        dtype::FLOAT | dtype::INT32 | dtype::UINT32 => 4,
        dtype::INT64 | dtype::DOUBLE => 8,
        dtype::INT16 | dtype::UINT16 | dtype::FLOAT16 => 2,
        dtype::INT8 | dtype::UINT8 | dtype::BOOL => 1,
        other => return Err(format!("{what} has element type {}, which L0 cannot hold", dtype::name(other))),
    };
    let count_error = |got: usize| {
        format!(
            "{what} has {got} values but its dims {:?} need {n} ({} elements)",
            t.dims,
            dtype::name(t.data_type)
        )
    };
    let raw = &t.raw_data;
    if !raw.is_empty() || n == 0 {
        if raw.len() != n * width {
            return Err(format!(
                "{what} has {} bytes of raw data but its dims {:?} of {} need {}",
                raw.len(),
                t.dims,
                dtype::name(t.data_type),
                n * width
            ));
        }
        let data = match t.data_type {
            dtype::FLOAT => {
                Data::F32(raw.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect())
            }
            // Exact: every f16 is an f32.
            dtype::FLOAT16 => Data::F32(
                raw.chunks_exact(2)
                    .map(|c| ekb_wire::f16::to_f32(u16::from_le_bytes([c[0], c[1]])))
                    .collect(),
            ),
            dtype::DOUBLE => Data::F32(
                raw.chunks_exact(8)
                    .map(|c| f64::from_le_bytes(c.try_into().expect("8 bytes")) as f32)
                    .collect(),
            ),
            _ => Data::Int(raw.chunks_exact(width).map(|c| int_le(c, t.data_type)).collect()),
        };
        return Ok(Const { onnx_type: t.data_type, dims, data });
    }
    let data = match t.data_type {
        dtype::FLOAT => {
            if t.float_data.len() != n {
                return Err(count_error(t.float_data.len()));
            }
            Data::F32(t.float_data.clone())
        }
        dtype::DOUBLE => {
            if t.double_data.len() != n {
                return Err(count_error(t.double_data.len()));
            }
            Data::F32(t.double_data.iter().map(|&x| x as f32).collect())
        }
        dtype::INT64 => {
            if t.int64_data.len() != n {
                return Err(count_error(t.int64_data.len()));
            }
            Data::Int(t.int64_data.clone())
        }
        dtype::FLOAT16 => {
            // The bits of each element, in int32_data.
            if t.int32_data.len() != n {
                return Err(count_error(t.int32_data.len()));
            }
            Data::F32(t.int32_data.iter().map(|&x| ekb_wire::f16::to_f32(x as u16)).collect())
        }
        dtype::UINT32 => {
            if t.uint64_data.len() != n {
                return Err(count_error(t.uint64_data.len()));
            }
            Data::Int(t.uint64_data.iter().map(|&x| x as i64).collect())
        }
        _ => {
            // INT32, INT16, INT8, UINT16, UINT8, BOOL are all stored in int32_data.
            if t.int32_data.len() != n {
                return Err(count_error(t.int32_data.len()));
            }
            Data::Int(t.int32_data.iter().map(|&x| i64::from(x)).collect())
        }
    };
    Ok(Const { onnx_type: t.data_type, dims, data })
}

/// One little-endian integer of an ONNX integer type.
fn int_le(c: &[u8], ty: i32) -> i64 {
    match ty {
        dtype::INT64 => i64::from_le_bytes(c.try_into().expect("8 bytes")),
        dtype::INT32 => i64::from(i32::from_le_bytes(c.try_into().expect("4 bytes"))),
        dtype::UINT32 => i64::from(u32::from_le_bytes(c.try_into().expect("4 bytes"))),
        dtype::INT16 => i64::from(i16::from_le_bytes(c.try_into().expect("2 bytes"))),
        dtype::UINT16 => i64::from(u16::from_le_bytes(c.try_into().expect("2 bytes"))),
        dtype::INT8 => i64::from(c[0] as i8),
        _ => i64::from(c[0]),
    }
}

/// An f32, i32, i8 or f16 tensor as an initializer (little-endian `raw_data`).
pub fn encode_buf(name: &str, dims: &[usize], data: &BufData) -> TensorProto {
    let (data_type, raw_data) = match data {
        BufData::F32(v) => (dtype::FLOAT, v.iter().flat_map(|x| x.to_le_bytes()).collect()),
        BufData::I32(v) => (dtype::INT32, v.iter().flat_map(|x| x.to_le_bytes()).collect()),
        BufData::I8(v) => (dtype::INT8, v.iter().map(|&x| x as u8).collect()),
        BufData::F16(v) => (dtype::FLOAT16, v.iter().flat_map(|x| x.to_le_bytes()).collect()),
    };
    TensorProto {
        name: name.into(),
        dims: dims.iter().map(|&d| d as i64).collect(),
        data_type,
        raw_data,
        ..Default::default()
    }
}

/// A 1-D int64 initializer (shapes, axes, pads, slice bounds).
pub fn encode_i64(name: &str, v: &[i64]) -> TensorProto {
    TensorProto {
        name: name.into(),
        dims: vec![v.len() as i64],
        data_type: dtype::INT64,
        raw_data: v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        ..Default::default()
    }
}
