//! Element types and tensor types, shared by every IR level.
//!
//! A tensor type is a dtype and a static shape (`f32[1,3,224,224]`; `f32[]` is a scalar).
//! Shapes are row-major (C order); every level and every backend agrees on that.

use serde::{Deserialize, Serialize};
use std::fmt;

/// Element types of tensors. Integer arithmetic is two's-complement and wraps on overflow.
///
/// `i8` is a storage type for quantized data (one byte, two's complement, -128..=127): it is
/// moved, cast, quantized and dequantized, and multiplied in integer matmul and convolution with
/// i32 accumulation, but has no arithmetic of its own.
///
/// `f16` (IEEE binary16, two bytes) is a storage type for floats: it is moved, selected by
/// `where` and cast; every other operator wants f32 (cast first). An f16 element reads as its
/// exact f32 value, and a value written to an f16 tensor is rounded to the nearest f16, ties to
/// even, overflowing to infinity (`ekb_wire::f16`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DType {
    F32,
    I32,
    I8,
    F16,
}

impl DType {
    pub const ALL: [DType; 4] = [DType::F32, DType::I32, DType::I8, DType::F16];

    pub fn name(self) -> &'static str {
        match self {
            DType::F32 => "f32",
            DType::I32 => "i32",
            DType::I8 => "i8",
            DType::F16 => "f16",
        }
    }

    pub fn from_name(s: &str) -> Option<DType> {
        DType::ALL.into_iter().find(|d| d.name() == s)
    }

    pub fn size_bytes(self) -> usize {
        match self {
            DType::F32 | DType::I32 => 4,
            DType::I8 => 1,
            DType::F16 => 2,
        }
    }

    /// The representable range of an integer dtype (`None` for f32 and f16).
    pub fn int_range(self) -> Option<(i64, i64)> {
        match self {
            DType::F32 | DType::F16 => None,
            DType::I32 => Some((i64::from(i32::MIN), i64::from(i32::MAX))),
            DType::I8 => Some((i64::from(i8::MIN), i64::from(i8::MAX))),
        }
    }

    /// The initialiser of a graph input declared without one: `uniform(-1, 1)` for f32,
    /// `randint(0, 16)` for i32, and the whole range `randint(-128, 128)` for i8; f16 as f32.
    pub fn default_init(self) -> ekb_wire::Init {
        match self {
            DType::F32 | DType::I32 | DType::F16 => ekb_wire::Init::default_for(self.is_float()),
            DType::I8 => ekb_wire::Init::RandInt { lo: -128, hi: 128 },
        }
    }

    /// Whether the dtype holds floats (f32, f16).
    pub fn is_float(self) -> bool {
        matches!(self, DType::F32 | DType::F16)
    }
}

/// The payload's name for the same element type.
impl From<DType> for ekb_wire::payload::DType {
    fn from(d: DType) -> Self {
        match d {
            DType::F32 => ekb_wire::payload::DType::F32,
            DType::I32 => ekb_wire::payload::DType::I32,
            DType::I8 => ekb_wire::payload::DType::I8,
            DType::F16 => ekb_wire::payload::DType::F16,
        }
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A dtype with a static row-major shape.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct TensorType {
    pub dtype: DType,
    pub shape: Vec<usize>,
}

impl TensorType {
    pub fn new(dtype: DType, shape: impl Into<Vec<usize>>) -> TensorType {
        TensorType { dtype, shape: shape.into() }
    }

    pub fn rank(&self) -> usize {
        self.shape.len()
    }

    /// Number of elements (1 for a scalar).
    pub fn numel(&self) -> usize {
        self.shape.iter().product()
    }

    pub fn size_bytes(&self) -> usize {
        self.numel() * self.dtype.size_bytes()
    }

    /// Row-major strides in elements.
    pub fn strides(&self) -> Vec<usize> {
        strides(&self.shape)
    }
}

/// Row-major strides in elements of a shape.
pub fn strides(shape: &[usize]) -> Vec<usize> {
    let mut s = vec![1; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        s[i] = s[i + 1] * shape[i + 1];
    }
    s
}

impl fmt::Display for TensorType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}[", self.dtype)?;
        for (i, d) in self.shape.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{d}")?;
        }
        f.write_str("]")
    }
}

/// Formats a float so that it reads back to the same value and always looks like a float
/// (`1.0`, `0.5`, `1e-5`, `inf`, `-inf`, `nan`). Shared by the L0 and L1 printers.
pub fn fmt_float(x: f64) -> String {
    if x.is_nan() {
        return "nan".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf".into() } else { "-inf".into() };
    }
    let s = format!("{x:?}");
    if s.contains('.') || s.contains('e') || s.contains("inf") {
        s
    } else {
        format!("{s}.0")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_and_strides() {
        let t = TensorType::new(DType::F32, [1, 3, 4]);
        assert_eq!(t.to_string(), "f32[1,3,4]");
        assert_eq!(t.strides(), vec![12, 4, 1]);
        assert_eq!(TensorType::new(DType::I32, []).to_string(), "i32[]");
        assert_eq!(TensorType::new(DType::I32, []).numel(), 1);
        let q = TensorType::new(DType::I8, [2, 3]);
        assert_eq!((q.to_string(), q.size_bytes()), ("i8[2,3]".to_string(), 6));
        assert_eq!(DType::from_name("i8"), Some(DType::I8));
        assert_eq!(DType::I8.int_range(), Some((-128, 127)));
    }

    #[test]
    fn floats_print_as_floats_and_read_back() {
        for x in [1.0, 0.5, 1e-5, -3.25, 1e20, f64::INFINITY] {
            let s = fmt_float(x);
            assert!(s.contains('.') || s.contains('e') || s.contains("inf"), "{s}");
            if x.is_finite() {
                assert_eq!(s.parse::<f64>().unwrap(), x);
            }
        }
        assert_eq!(fmt_float(1.0), "1.0");
    }
}
