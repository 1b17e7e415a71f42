//! Tensor data on the host: reference values (`Tensor`, f64) and device-typed storage
//! (`Buffer`, f32/i32/i8/f16 exactly as a board holds them; f16 as its bits), comparison under the evaluation
//! tolerance, and `.npy` output that numpy reads.

use crate::types::{DType, TensorType};

/// Reference values: every element as f64, whatever the dtype (integers are exact).
#[derive(Debug, Clone, PartialEq)]
pub struct Tensor {
    pub ty: TensorType,
    pub data: Vec<f64>,
}

/// Storage in the element type a device uses.
#[derive(Debug, Clone, PartialEq)]
pub enum BufData {
    F32(Vec<f32>),
    I32(Vec<i32>),
    I8(Vec<i8>),
    /// IEEE binary16 elements as their bits (`ekb_wire::f16` converts).
    F16(Vec<u16>),
}

/// A typed buffer as a kernel sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct Buffer {
    pub ty: TensorType,
    pub data: BufData,
}

impl Buffer {
    /// A buffer of zeros.
    pub fn zeros(ty: &TensorType) -> Buffer {
        let n = ty.numel();
        let data = match ty.dtype {
            DType::F32 => BufData::F32(vec![0.0; n]),
            DType::I32 => BufData::I32(vec![0; n]),
            DType::I8 => BufData::I8(vec![0; n]),
            DType::F16 => BufData::F16(vec![0; n]),
        };
        Buffer { ty: ty.clone(), data }
    }

    /// Widens to reference values.
    pub fn to_tensor(&self) -> Tensor {
        let data = match &self.data {
            BufData::F32(v) => v.iter().map(|&x| f64::from(x)).collect(),
            BufData::I32(v) => v.iter().map(|&x| f64::from(x)).collect(),
            BufData::I8(v) => v.iter().map(|&x| f64::from(x)).collect(),
            BufData::F16(v) => v.iter().map(|&h| f64::from(ekb_wire::f16::to_f32(h))).collect(),
        };
        Tensor { ty: self.ty.clone(), data }
    }

    /// Raw little-endian-in-memory bytes (native order) of the elements.
    pub fn as_bytes(&self) -> &[u8] {
        match &self.data {
            BufData::F32(v) => bytes_of(v),
            BufData::I32(v) => bytes_of(v),
            BufData::I8(v) => bytes_of(v),
            BufData::F16(v) => bytes_of(v),
        }
    }

    pub fn as_bytes_mut(&mut self) -> &mut [u8] {
        match &mut self.data {
            BufData::F32(v) => bytes_of_mut(v),
            BufData::I32(v) => bytes_of_mut(v),
            BufData::I8(v) => bytes_of_mut(v),
            BufData::F16(v) => bytes_of_mut(v),
        }
    }
}

fn bytes_of<T: Copy>(v: &[T]) -> &[u8] {
    // SAFETY: f32, i32, i8 and u16 have no padding and any byte pattern of them may be viewed as bytes.
    unsafe { std::slice::from_raw_parts(v.as_ptr().cast::<u8>(), std::mem::size_of_val(v)) }
}

fn bytes_of_mut<T: Copy>(v: &mut [T]) -> &mut [u8] {
    // SAFETY: as above, and every byte pattern is a valid f32, i32, i8 or u16.
    unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr().cast::<u8>(), std::mem::size_of_val(v)) }
}

impl Tensor {
    /// Rounds to the device dtype (f32: nearest; f16: to the nearest f32, then to the nearest
    /// f16, as a device rounds an f32 result; i32, i8: the values are already integral and in
    /// range).
    pub fn to_buffer(&self) -> Buffer {
        let data = match self.ty.dtype {
            DType::F32 => BufData::F32(self.data.iter().map(|&x| x as f32).collect()),
            DType::I32 => BufData::I32(self.data.iter().map(|&x| x as i32).collect()),
            DType::I8 => BufData::I8(self.data.iter().map(|&x| x as i8).collect()),
            DType::F16 => {
                BufData::F16(self.data.iter().map(|&x| ekb_wire::f16::from_f32(x as f32)).collect())
            }
        };
        Buffer { ty: self.ty.clone(), data }
    }
}

/// The evaluation tolerance: `|got - ref| <= atol + rtol * |ref|`; integers compare exactly.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tolerance {
    pub atol: f64,
    pub rtol: f64,
}

impl Tolerance {
    /// The defaults of the evaluation protocol for a dtype.
    pub fn default_for(dtype: DType) -> Tolerance {
        match dtype {
            DType::F32 => Tolerance { atol: 1e-4, rtol: 1e-4 },
            DType::I32 | DType::I8 => Tolerance { atol: 0.0, rtol: 0.0 },
            // At least one f16 step relative, as a payload compares it on the board.
            DType::F16 => Tolerance { atol: 1e-4, rtol: ekb_wire::payload::Tolerance::F16_MIN_RTOL },
        }
    }
}

/// The first element outside tolerance, with how many were outside.
#[derive(Debug, Clone, PartialEq)]
pub struct Mismatch {
    pub index: Vec<usize>,
    pub expected: f64,
    pub got: f64,
    pub count: usize,
    pub total: usize,
    pub max_abs_err: f64,
}

impl std::fmt::Display for Mismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} of {} elements differ; first at {:?}: expected {}, got {} (max abs error {:e})",
            self.count, self.total, self.index, self.expected, self.got, self.max_abs_err
        )
    }
}

/// Compares values against a reference. NaN or infinity where the reference is finite fails;
/// a NaN reference matches only NaN.
pub fn compare(reference: &Tensor, got: &Tensor, tol: Tolerance) -> Result<(), Mismatch> {
    assert_eq!(reference.ty.shape, got.ty.shape, "compare: shapes differ");
    let mut first = None;
    let mut count = 0;
    let mut max_abs_err: f64 = 0.0;
    for (i, (&r, &g)) in reference.data.iter().zip(&got.data).enumerate() {
        let ok = if r.is_nan() {
            g.is_nan()
        } else if r.is_infinite() {
            g == r
        } else {
            g.is_finite() && (g - r).abs() <= tol.atol + tol.rtol * r.abs()
        };
        if !ok {
            count += 1;
            let e = (g - r).abs();
            if e.is_nan() || e > max_abs_err {
                max_abs_err = if e.is_nan() { f64::INFINITY } else { e };
            }
            first.get_or_insert(i);
        }
    }
    match first {
        None => Ok(()),
        Some(i) => Err(Mismatch {
            index: unravel(i, &reference.ty.shape),
            expected: reference.data[i],
            got: got.data[i],
            count,
            total: reference.data.len(),
            max_abs_err,
        }),
    }
}

/// Multi-dimensional index of a flat row-major offset.
pub fn unravel(mut flat: usize, shape: &[usize]) -> Vec<usize> {
    let mut idx = vec![0; shape.len()];
    for d in (0..shape.len()).rev() {
        if shape[d] > 0 {
            idx[d] = flat % shape[d];
            flat /= shape[d];
        }
    }
    idx
}

/// Writes a buffer as a version-1.0 `.npy` file; see [`npy_bytes`].
pub fn write_npy(path: &std::path::Path, buf: &Buffer) -> std::io::Result<()> {
    std::fs::write(path, npy_bytes(buf))
}

/// A buffer as the bytes of a version-1.0 `.npy` file (little-endian `<f4` / `<i4` / `<f2`, or
/// `|i1`; C order).
pub fn npy_bytes(buf: &Buffer) -> Vec<u8> {
    let descr = match buf.ty.dtype {
        DType::F32 => "<f4",
        DType::I32 => "<i4",
        DType::I8 => "|i1",
        DType::F16 => "<f2",
    };
    let shape = match buf.ty.shape.len() {
        0 => "()".to_string(),
        1 => format!("({},)", buf.ty.shape[0]),
        _ => format!("({})", buf.ty.shape.iter().map(|d| d.to_string()).collect::<Vec<_>>().join(", ")),
    };
    let mut header = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
    // Magic (6) + version (2) + header length (2) + header + '\n' is a multiple of 64.
    let unpadded = 10 + header.len() + 1;
    header.push_str(&" ".repeat((64 - unpadded % 64) % 64));
    header.push('\n');
    let mut out = Vec::with_capacity(10 + header.len() + buf.as_bytes().len());
    out.extend_from_slice(b"\x93NUMPY\x01\x00");
    out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    match &buf.data {
        BufData::F32(v) => v.iter().for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
        BufData::I32(v) => v.iter().for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
        BufData::I8(v) => v.iter().for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
        BufData::F16(v) => v.iter().for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(data: Vec<f64>) -> Tensor {
        Tensor { ty: TensorType::new(DType::F32, [data.len()]), data }
    }

    #[test]
    fn compare_uses_atol_plus_rtol_and_rejects_nan() {
        let tol = Tolerance::default_for(DType::F32);
        assert!(compare(&t(vec![1.0, 100.0]), &t(vec![1.00005, 100.0099]), tol).is_ok());
        let m = compare(&t(vec![1.0, 100.0]), &t(vec![1.0, 100.02]), tol).unwrap_err();
        assert_eq!((m.index.clone(), m.count), (vec![1], 1));
        assert!(compare(&t(vec![1.0]), &t(vec![f64::NAN]), tol).is_err());
        assert!(compare(&t(vec![1.0]), &t(vec![f64::INFINITY]), tol).is_err());
    }

    #[test]
    fn npy_header_is_aligned_and_data_follows() {
        let dir = std::env::temp_dir().join(format!("ekb-npy-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("a.npy");
        let b =
            Buffer { ty: TensorType::new(DType::I32, [2, 3]), data: BufData::I32(vec![1, 2, 3, 4, 5, 6]) };
        write_npy(&p, &b).unwrap();
        let bytes = std::fs::read(&p).unwrap();
        let hlen = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
        assert_eq!((10 + hlen) % 64, 0);
        let header = std::str::from_utf8(&bytes[10..10 + hlen]).unwrap();
        assert!(header.contains("'shape': (2, 3)") && header.contains("<i4"), "{header}");
        assert_eq!(&bytes[10 + hlen..10 + hlen + 4], &1i32.to_le_bytes());
        assert_eq!(bytes.len(), 10 + hlen + 24);
        let q = Buffer { ty: TensorType::new(DType::I8, [3]), data: BufData::I8(vec![-128, 0, 127]) };
        write_npy(&p, &q).unwrap();
        let bytes = std::fs::read(&p).unwrap();
        let hlen = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
        assert!(std::str::from_utf8(&bytes[10..10 + hlen]).unwrap().contains("'descr': '|i1'"));
        assert_eq!(&bytes[10 + hlen..], &[0x80, 0x00, 0x7f]);
        assert_eq!(q.as_bytes(), &[0x80, 0x00, 0x7f]);
        assert_eq!(q.to_tensor().data, vec![-128.0, 0.0, 127.0]);
        assert_eq!(q.to_tensor().to_buffer(), q);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
