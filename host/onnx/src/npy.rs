//! Reading `.npy` files (format versions 1 to 3): the outputs the Python helpers write.
//!
//! Accepts little-endian `<f4`, `<f2` (float16), `<i4` and `<i8` (numpy's default integer), and
//! `|i1` (int8), C order; `<i8` values must fit in i32. Anything else is an error naming the file, never a panic.

use ekb_ir::tensor::{BufData, Buffer};
use ekb_ir::types::{DType, TensorType};
use std::path::Path;

/// Reads one array.
pub fn read(path: &Path) -> Result<Buffer, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read `{}`: {e}", path.display()))?;
    parse(&bytes).map_err(|e| format!("`{}`: {e}", path.display()))
}

/// Parses the bytes of a `.npy` file.
pub fn parse(bytes: &[u8]) -> Result<Buffer, String> {
    if bytes.len() < 10 || &bytes[..6] != b"\x93NUMPY" {
        return Err("not a .npy file (bad magic)".into());
    }
    let (hlen, start) = match bytes[6] {
        1 => (usize::from(u16::from_le_bytes([bytes[8], bytes[9]])), 10),
        2 | 3 if bytes.len() >= 12 => {
            (u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize, 12)
        }
        v => return Err(format!("unsupported .npy version {v}")),
    };
    let header = bytes.get(start..start + hlen).ok_or("truncated header")?;
    let header = std::str::from_utf8(header).map_err(|_| "header is not text")?;
    let field = |key: &str| -> Result<&str, String> {
        let at = header.find(&format!("'{key}'")).ok_or(format!("header has no '{key}'"))?;
        Ok(header[at + key.len() + 2..].trim_start().trim_start_matches(':').trim_start())
    };
    let descr = field("descr")?;
    let descr = descr.get(1..4).ok_or("bad descr")?;
    if field("fortran_order")?.starts_with("True") {
        return Err("Fortran-order arrays are not supported".into());
    }
    let shape_text = field("shape")?;
    let close = shape_text.find(')').ok_or("bad shape")?;
    let shape = shape_text[1..close]
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| s.parse::<usize>().map_err(|_| format!("bad dimension `{s}`")))
        .collect::<Result<Vec<_>, _>>()?;
    let n: usize = shape.iter().product();
    let body = &bytes[start + hlen..];
    let (dtype, data) = match descr {
        "<f4" => {
            check_len(body, n * 4)?;
            (
                DType::F32,
                BufData::F32(
                    body.chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect(),
                ),
            )
        }
        "<i4" => {
            check_len(body, n * 4)?;
            (
                DType::I32,
                BufData::I32(
                    body.chunks_exact(4).map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect(),
                ),
            )
        }
        "<i8" => {
            check_len(body, n * 8)?;
            let v = body
                .chunks_exact(8)
                .map(|c| {
                    let x = i64::from_le_bytes(c.try_into().expect("8 bytes"));
                    i32::try_from(x).map_err(|_| format!("value {x} does not fit in i32"))
                })
                .collect::<Result<Vec<_>, _>>()?;
            (DType::I32, BufData::I32(v))
        }
        "<f2" => {
            check_len(body, n * 2)?;
            (
                DType::F16,
                BufData::F16(body.chunks_exact(2).map(|c| u16::from_le_bytes([c[0], c[1]])).collect()),
            )
        }
        "|i1" => {
            check_len(body, n)?;
            (DType::I8, BufData::I8(body.iter().map(|&b| b as i8).collect()))
        }
        other => return Err(format!("unsupported dtype `{other}` (expected <f4, <f2, <i4, <i8 or |i1)")),
    };
    Ok(Buffer { ty: TensorType::new(dtype, shape), data })
}

fn check_len(body: &[u8], want: usize) -> Result<(), String> {
    if body.len() == want {
        Ok(())
    } else {
        Err(format!("{} bytes of data, expected {want}", body.len()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_what_write_npy_writes() {
        let dir = std::env::temp_dir().join(format!("ekb-npy-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for buf in [
            Buffer {
                ty: TensorType::new(DType::F32, [2, 3]),
                data: BufData::F32(vec![1.5, -2.0, 0.0, 3.25, 4.0, -0.5]),
            },
            Buffer { ty: TensorType::new(DType::I32, Vec::<usize>::new()), data: BufData::I32(vec![-7]) },
            Buffer { ty: TensorType::new(DType::I32, [3]), data: BufData::I32(vec![1, 2, 3]) },
            Buffer { ty: TensorType::new(DType::I8, [2, 2]), data: BufData::I8(vec![-128, -1, 0, 127]) },
            // 1.0, -2.0, 65504, -0.0, a subnormal.
            Buffer {
                ty: TensorType::new(DType::F16, [5]),
                data: BufData::F16(vec![0x3c00, 0xc000, 0x7bff, 0x8000, 0x0001]),
            },
        ] {
            let p = dir.join("a.npy");
            ekb_ir::tensor::write_npy(&p, &buf).unwrap();
            assert_eq!(read(&p).unwrap(), buf);
        }
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn int64_is_narrowed_and_bad_files_are_errors() {
        let mut f = b"\x93NUMPY\x01\x00".to_vec();
        let h = "{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }\n";
        f.extend((h.len() as u16).to_le_bytes());
        f.extend(h.as_bytes());
        f.extend(5i64.to_le_bytes());
        f.extend((-3i64).to_le_bytes());
        assert_eq!(parse(&f).unwrap().data, BufData::I32(vec![5, -3]));
        f.truncate(f.len() - 1);
        assert!(parse(&f).unwrap_err().contains("15 bytes of data, expected 16"));
        assert!(parse(b"hello").unwrap_err().contains("magic"));
    }
}
