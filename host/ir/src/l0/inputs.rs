//! A graph's inputs and parameters, generated from a seed.
//!
//! Every declared tensor is filled by the shared seeded generator (`ekb_wire::seeded`) with the
//! key `tensor_key(graph name, seed, tensor name)`, so the host's reference run and the board's
//! run see the same bits without any data travelling. What it must keep true: the order (inputs,
//! then parameters, each in declaration order) and the key are part of the benchmark contract;
//! the data of one tensor depends only on (graph name, seed, its name, its type, its init), never
//! on the other declarations.
//!
//! A data parameter (`= file(...)`) is the exception: its values are the file's, whatever the
//! seed. [`load_data`] reads them (little-endian, `numel * element size` bytes from the offset) and verifies
//! the CRC-32 of those bytes before anything uses them; [`generate`] refuses a data parameter
//! whose values were never loaded rather than inventing them.

use crate::diag::Diagnostic;
use crate::l0::ast::{Graph, ParamData, TensorDecl};
use crate::tensor::{BufData, Buffer, Tensor};
use crate::types::DType;
use ekb_wire::seeded::{fill_f16, fill_f32, fill_i32, fill_i8, tensor_key, InitError};
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

/// The inputs, then the parameters, in declaration order, each as the device holds it.
/// An initialiser that does not fit its tensor is a diagnostic at the declaration.
pub fn generate(g: &Graph, seed: u64) -> Result<Vec<(String, Buffer)>, Diagnostic> {
    g.inputs.iter().chain(&g.params).map(|d| Ok((d.name.clone(), generate_one(g, d, seed)?))).collect()
}

/// The same data widened to f64 reference values, by name, as the interpreter consumes it.
pub fn generate_tensors(g: &Graph, seed: u64) -> Result<HashMap<String, Tensor>, Diagnostic> {
    Ok(generate(g, seed)?.into_iter().map(|(name, buf)| (name, buf.to_tensor())).collect())
}

/// Reads and verifies the values of every data parameter of `g`, resolving file names relative
/// to `dir`. Every problem is reported (missing or short file, checksum mismatch), each at its
/// parameter's declaration; nothing is stored unless the parameter's bytes are verified.
pub fn load_data(g: &mut Graph, dir: &Path) -> Result<(), Vec<Diagnostic>> {
    let mut files: HashMap<String, Result<Vec<u8>, String>> = HashMap::new();
    let mut errs = Vec::new();
    for d in &mut g.params {
        let Some(data) = &d.data else { continue };
        let path = dir.join(&data.file);
        let bytes =
            files.entry(data.file.clone()).or_insert_with(|| std::fs::read(&path).map_err(|e| e.to_string()));
        match bytes {
            Ok(bytes) => match decode(d, data, bytes, &path) {
                Ok(values) => d.data.as_mut().expect("checked above").values = Some(Arc::new(values)),
                Err(e) => errs.push(e),
            },
            Err(e) => errs.push(
                Diagnostic::error(format!(
                    "parameter `{}`: cannot read its data file `{}`: {e}",
                    d.name,
                    path.display()
                ))
                .at(d.span)
                .with_hint("keep the `.bin` file next to the `.ekir` file that names it"),
            ),
        }
    }
    if errs.is_empty() {
        Ok(())
    } else {
        Err(errs)
    }
}

/// The verified values of one data parameter from the bytes of its file.
fn decode(d: &TensorDecl, data: &ParamData, bytes: &[u8], path: &Path) -> Result<BufData, Diagnostic> {
    let n = d.ty.numel();
    let len = n.checked_mul(d.ty.dtype.size_bytes()).and_then(|l| u64::try_from(l).ok());
    let range = len.and_then(|l| Some((data.offset, data.offset.checked_add(l)?)));
    let Some((start, end)) = range.filter(|&(_, end)| end <= bytes.len() as u64) else {
        return Err(Diagnostic::error(format!(
            "parameter `{}`: data file `{}` is too short: `{}: {}` needs {} bytes from offset {}, but the file has {} bytes",
            d.name,
            path.display(),
            d.name,
            d.ty,
            n.saturating_mul(d.ty.dtype.size_bytes()),
            data.offset,
            bytes.len()
        ))
        .at(d.span)
        .with_hint("the file was truncated or belongs to another model; import the model again"));
    };
    let slice = &bytes[start as usize..end as usize];
    let actual = ekb_wire::crc32(slice);
    if actual != data.crc32 {
        return Err(Diagnostic::error(format!(
            "parameter `{}`: checksum mismatch in `{}` (bytes {start}..{end}): expected crc32 {:08x}, found {actual:08x}",
            d.name,
            path.display(),
            data.crc32
        ))
        .at(d.span)
        .with_hint("the data file changed after the `.ekir` was written; import the model again"));
    }
    let words = slice.chunks_exact(4).map(|c| [c[0], c[1], c[2], c[3]]);
    Ok(match d.ty.dtype {
        DType::F32 => BufData::F32(words.map(f32::from_le_bytes).collect()),
        DType::I32 => BufData::I32(words.map(i32::from_le_bytes).collect()),
        DType::I8 => BufData::I8(slice.iter().map(|&b| b as i8).collect()),
        DType::F16 => BufData::F16(slice.chunks_exact(2).map(|c| u16::from_le_bytes([c[0], c[1]])).collect()),
    })
}

/// One declared tensor.
fn generate_one(g: &Graph, d: &TensorDecl, seed: u64) -> Result<Buffer, Diagnostic> {
    if let Some(data) = &d.data {
        return data_values(d, data);
    }
    let key = tensor_key(&g.name, seed, &d.name);
    let n = d.ty.shape.iter().try_fold(1usize, |acc, &x| acc.checked_mul(x)).ok_or_else(|| {
        Diagnostic::error(format!("`{}` has too many elements to generate ({})", d.name, d.ty)).at(d.span)
    })?;
    let data = match d.ty.dtype {
        DType::F32 => {
            let mut v = alloc::<f32>(n, d)?;
            fill_f32(&d.init, &d.ty.shape, key, &mut v).map_err(|e| init_error(d, e))?;
            BufData::F32(v)
        }
        DType::I32 => {
            let mut v = alloc::<i32>(n, d)?;
            fill_i32(&d.init, key, &mut v).map_err(|e| init_error(d, e))?;
            BufData::I32(v)
        }
        DType::I8 => {
            let mut v = alloc::<i8>(n, d)?;
            fill_i8(&d.init, key, &mut v).map_err(|e| init_error(d, e))?;
            BufData::I8(v)
        }
        DType::F16 => {
            let mut v = alloc::<u16>(n, d)?;
            fill_f16(&d.init, &d.ty.shape, key, &mut v).map_err(|e| init_error(d, e))?;
            BufData::F16(v)
        }
    };
    Ok(Buffer { ty: d.ty.clone(), data })
}

/// The loaded values of a data parameter, checked against its type.
fn data_values(d: &TensorDecl, data: &ParamData) -> Result<Buffer, Diagnostic> {
    let Some(values) = &data.values else {
        return Err(Diagnostic::error(format!(
            "parameter `{}` takes its values from `{}`, which has not been loaded",
            d.name, data.file
        ))
        .at(d.span)
        .with_hint("read the graph from its file with `l0::check::load`, or call `l0::inputs::load_data`"));
    };
    let (dtype, len) = match &**values {
        BufData::F32(v) => (DType::F32, v.len()),
        BufData::I32(v) => (DType::I32, v.len()),
        BufData::I8(v) => (DType::I8, v.len()),
        BufData::F16(v) => (DType::F16, v.len()),
    };
    if dtype != d.ty.dtype || len != d.ty.numel() {
        return Err(Diagnostic::error(format!(
            "parameter `{}: {}` holds {len} {dtype} values",
            d.name, d.ty
        ))
        .at(d.span));
    }
    Ok(Buffer { ty: d.ty.clone(), data: (**values).clone() })
}

/// A zeroed vector of `n` elements, or a diagnostic when the memory is not there (a declared
/// shape can be far larger than the machine).
fn alloc<T: Default + Clone>(n: usize, d: &TensorDecl) -> Result<Vec<T>, Diagnostic> {
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|_| {
        Diagnostic::error(format!(
            "cannot allocate {} bytes for `{}: {}`",
            n.saturating_mul(std::mem::size_of::<T>()),
            d.name,
            d.ty
        ))
        .at(d.span)
    })?;
    v.resize(n, T::default());
    Ok(v)
}

fn init_error(d: &TensorDecl, e: InitError) -> Diagnostic {
    let diag = Diagnostic::error(format!("cannot initialise `{}: {}`: {e}", d.name, d.ty)).at(d.span);
    match e {
        InitError::WrongDType { dtype: "f32", .. } => diag
            .with_expected("an initialiser for f32: `uniform(lo, hi)`, `normal(mean, std)`, `kaiming_uniform`, `const(v)`")
            .with_hint(format!("declare `{}` as i32, or use `uniform(lo, hi)`", d.name)),
        InitError::WrongDType { dtype, .. } => diag
            .with_expected(format!("an initialiser for {dtype}: `randint(lo, hi)` or `const(v)` with an integer v"))
            .with_hint(format!("declare `{}` as f32, or use `randint(lo, hi)`", d.name)),
        InitError::KaimingRank { .. } => diag.with_hint(
            "a bias takes its bound from its layer's weight: write `uniform(-b, b)` with b = 1/sqrt(fan_in)",
        ),
        _ => diag,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diag::Span;
    use crate::l0::ast::TensorDecl;
    use crate::types::TensorType;
    use ekb_wire::seeded::kaiming_bound;
    use ekb_wire::Init;

    fn decl(name: &str, dtype: DType, shape: &[usize], init: Init, at: usize) -> TensorDecl {
        TensorDecl::seeded(name, TensorType::new(dtype, shape), init, Span::new(at, at + 1))
    }

    fn graph(inputs: Vec<TensorDecl>, params: Vec<TensorDecl>) -> Graph {
        Graph {
            name: "mlp".into(),
            inputs,
            params,
            nodes: vec![],
            outputs: vec![],
            groups: vec![],
            span: Span::NONE,
        }
    }

    fn mlp() -> Graph {
        graph(
            vec![
                decl("x", DType::F32, &[4, 16], Init::default_for(true), 0),
                decl("idx", DType::I32, &[8], Init::RandInt { lo: 2, hi: 5 }, 10),
            ],
            vec![
                decl("w", DType::F32, &[32, 16], Init::KaimingUniform, 20),
                decl("g", DType::F32, &[32], Init::Const(1.0), 30),
                decl("n", DType::F32, &[64], Init::Normal { mean: 10.0, std: 0.5 }, 40),
            ],
        )
    }

    fn f32s(b: &Buffer) -> &[f32] {
        match &b.data {
            BufData::F32(v) => v,
            _ => panic!("expected f32 data"),
        }
    }

    #[test]
    fn inputs_come_before_params_in_declaration_order() {
        let names: Vec<String> = generate(&mlp(), 0).unwrap().into_iter().map(|(n, _)| n).collect();
        assert_eq!(names, ["x", "idx", "w", "g", "n"]);
    }

    #[test]
    fn the_same_seed_gives_the_same_data_and_another_seed_differs() {
        let g = mlp();
        let a = generate(&g, 3).unwrap();
        assert_eq!(a, generate(&g, 3).unwrap());
        let b = generate(&g, 4).unwrap();
        for ((name, x), (_, y)) in a.iter().zip(&b) {
            if name == "g" {
                assert_eq!(x, y, "a constant does not depend on the seed");
            } else {
                assert_ne!(x, y, "`{name}` did not change with the seed");
            }
        }
    }

    #[test]
    fn data_is_the_wire_generator_under_the_documented_key() {
        let g = mlp();
        let bufs = generate(&g, 9).unwrap();
        let mut want = vec![0f32; 32 * 16];
        fill_f32(&Init::KaimingUniform, &[32, 16], tensor_key("mlp", 9, "w"), &mut want).unwrap();
        assert_eq!(f32s(&bufs[2].1), want.as_slice());
        // One tensor's data does not depend on the other declarations.
        let alone = graph(vec![], vec![decl("w", DType::F32, &[32, 16], Init::KaimingUniform, 0)]);
        assert_eq!(generate(&alone, 9).unwrap()[0].1, bufs[2].1);
    }

    #[test]
    fn init_kinds_are_respected() {
        let bufs = generate(&mlp(), 1).unwrap();
        let x = f32s(&bufs[0].1);
        assert!(x.iter().all(|v| (-1.0..1.0).contains(v)), "default input init is uniform(-1, 1)");
        match &bufs[1].1.data {
            BufData::I32(v) => {
                assert!(v.iter().all(|i| (2..5).contains(i)), "{v:?}");
                assert!([2, 3, 4].iter().all(|k| v.contains(k)), "randint(2, 5) covers 2, 3, 4: {v:?}");
            }
            _ => panic!("idx must be i32"),
        }
        let b = kaiming_bound(&[32, 16]).unwrap() as f32;
        assert!((b - 0.25).abs() < 1e-7, "fan_in 16 gives 1/4");
        assert!(f32s(&bufs[2].1).iter().all(|v| v.abs() <= b));
        assert!(f32s(&bufs[3].1).iter().all(|&v| v == 1.0));
        let n = f32s(&bufs[4].1);
        let mean = n.iter().map(|&v| f64::from(v)).sum::<f64>() / n.len() as f64;
        assert!((mean - 10.0).abs() < 0.3 && n.iter().all(|&v| (7.0..13.0).contains(&v)), "{mean}");
    }

    #[test]
    fn i8_tensors_draw_like_i32_and_default_to_the_whole_range() {
        let q = decl("q", DType::I8, &[64], DType::I8.default_init(), 0);
        let k = decl("k", DType::I32, &[64], Init::RandInt { lo: -128, hi: 128 }, 5);
        let g = graph(vec![q, k], vec![decl("p", DType::I8, &[2], Init::RandInt { lo: -128, hi: -127 }, 9)]);
        let bufs = generate(&g, 7).unwrap();
        let (BufData::I8(q), BufData::I32(k)) = (&bufs[0].1.data, &bufs[1].1.data) else {
            panic!("dtypes: {bufs:?}")
        };
        // Same key construction, same draws: `q` equals an i32 `q` with the same range.
        let mut want = vec![0i32; 64];
        fill_i32(&Init::RandInt { lo: -128, hi: 128 }, tensor_key("mlp", 7, "q"), &mut want).unwrap();
        assert_eq!(q.iter().map(|&v| i32::from(v)).collect::<Vec<_>>(), want);
        assert!(q.iter().any(|&v| v < 0) && q.iter().any(|&v| v > 63), "the whole range is drawn: {q:?}");
        assert_ne!(q.iter().map(|&v| i32::from(v)).collect::<Vec<_>>(), *k, "another name, another stream");
        assert_eq!(bufs[2].1.data, BufData::I8(vec![-128, -128]));
        // An out-of-range bound is a diagnostic at the declaration.
        let bad = graph(vec![decl("q", DType::I8, &[2], Init::RandInt { lo: 0, hi: 200 }, 3)], vec![]);
        let e = generate(&bad, 0).unwrap_err();
        assert!(e.message.contains("needs lo < hi with every value in [lo, hi) an i8"), "{e}");
        assert_eq!(e.span.map(|s| s.start), Some(3));
    }

    #[test]
    fn tensors_are_the_buffers_widened() {
        let g = mlp();
        let bufs = generate(&g, 2).unwrap();
        let tensors = generate_tensors(&g, 2).unwrap();
        assert_eq!(tensors.len(), 5);
        for (name, buf) in &bufs {
            assert_eq!(tensors[name], buf.to_tensor());
        }
        assert_eq!(tensors["idx"].ty.dtype, DType::I32);
        assert!(tensors["idx"].data.iter().all(|v| v.fract() == 0.0));
    }

    #[test]
    fn an_init_that_does_not_fit_names_the_tensor() {
        let g = graph(vec![decl("ids", DType::F32, &[3], Init::RandInt { lo: 0, hi: 3 }, 7)], vec![]);
        let d = generate(&g, 0).unwrap_err();
        assert!(d.message.contains("`ids: f32[3]`") && d.message.contains("randint"), "{}", d.message);
        assert_eq!(d.span, Some(Span::new(7, 8)));
        assert!(d.hint.as_deref().unwrap().contains("i32"));

        let g = graph(vec![], vec![decl("b", DType::F32, &[8], Init::KaimingUniform, 3)]);
        let d = generate(&g, 0).unwrap_err();
        assert!(d.message.contains("`b: f32[8]`") && d.message.contains("rank 1"), "{}", d.message);

        let g = graph(vec![], vec![decl("k", DType::I32, &[2], Init::Normal { mean: 0.0, std: 1.0 }, 0)]);
        let d = generate_tensors(&g, 0).unwrap_err();
        assert!(d.message.contains("`k: i32[2]`") && d.expected.as_deref().unwrap().contains("randint"));

        let g = graph(vec![decl("r", DType::I32, &[2], Init::RandInt { lo: 4, hi: 4 }, 0)], vec![]);
        assert!(generate(&g, 0).unwrap_err().message.contains("lo < hi"));
    }

    #[test]
    fn an_impossible_shape_is_a_diagnostic_not_a_crash() {
        let g = graph(vec![decl("x", DType::F32, &[usize::MAX, 4], Init::Const(0.0), 0)], vec![]);
        assert!(generate(&g, 0).unwrap_err().message.contains("too many elements"));
        let g = graph(vec![decl("x", DType::F32, &[1 << 40, 1 << 20], Init::Const(0.0), 0)], vec![]);
        assert!(generate(&g, 0).unwrap_err().message.contains("cannot allocate"));
    }

    // ---- data parameters ----

    use crate::diag::SourceFile;
    use crate::l0::check::load;
    use crate::l0::parse::parse;
    use crate::l0::print::print;

    const DATA_GRAPH: &str = "graph lin(x: f32[1,3]) -> (y: f32[1,2]) {
  param w: f32[2,3] = file(\"lin.bin\", offset=0, crc32=\"CRC_W\")
  param k: i32[2] = file(\"lin.bin\", offset=24, crc32=\"CRC_K\")
  %0 = linear(x, w)
  return %0
}
";

    /// A fresh directory holding `lin.bin` (w then k, little-endian) and `lin.ekir` naming it with
    /// the given checksums (`None`: the right ones).
    fn data_dir(tag: &str, crcs: Option<(u32, u32)>, bin: Option<Vec<u8>>) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("ekb-ir-data-{}-{tag}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let w: Vec<u8> = [0.5f32, -1.0, 2.0, 0.25, 3.0, -4.5].iter().flat_map(|x| x.to_le_bytes()).collect();
        let k: Vec<u8> = [7i32, -9].iter().flat_map(|x| x.to_le_bytes()).collect();
        let (cw, ck) = crcs.unwrap_or((ekb_wire::crc32(&w), ekb_wire::crc32(&k)));
        let text = DATA_GRAPH.replace("CRC_W", &format!("{cw:08x}")).replace("CRC_K", &format!("{ck:08x}"));
        std::fs::write(dir.join("lin.ekir"), text).unwrap();
        std::fs::write(dir.join("lin.bin"), bin.unwrap_or([w, k].concat())).unwrap();
        dir
    }

    fn load_dir(dir: &std::path::Path) -> Result<Graph, Vec<Diagnostic>> {
        load(&SourceFile::read(&dir.join("lin.ekir")).unwrap())
    }

    #[test]
    fn data_params_print_and_parse_back() {
        let text = DATA_GRAPH.replace("CRC_W", "00ab12cd").replace("CRC_K", "0x1");
        let g = parse(&SourceFile::new("lin.ekir", text)).unwrap();
        let w = g.params[0].data.as_ref().unwrap();
        assert_eq!(
            (w.file.as_str(), w.offset, w.crc32, w.values.is_none()),
            ("lin.bin", 0, 0x00ab12cd, true)
        );
        assert_eq!(g.params[1].data.as_ref().unwrap().crc32, 1);
        let printed = print(&g);
        assert!(
            printed.contains("param w: f32[2,3] = file(\"lin.bin\", offset=0, crc32=\"00ab12cd\")"),
            "{printed}"
        );
        assert!(
            printed.contains("param k: i32[2] = file(\"lin.bin\", offset=24, crc32=\"00000001\")"),
            "{printed}"
        );
        let mut back = parse(&SourceFile::new("again", printed.clone())).unwrap();
        let mut orig = g.clone();
        crate::l0::parse::strip_spans(&mut back);
        crate::l0::parse::strip_spans(&mut orig);
        assert_eq!(back, orig);
        assert_eq!(print(&back), printed);
    }

    #[test]
    fn data_params_give_the_file_values_whatever_the_seed() {
        let dir = data_dir("ok", None, None);
        let g = load_dir(&dir).unwrap_or_else(|ds| panic!("{}", ds[0]));
        for seed in [0, 7] {
            let bufs = generate(&g, seed).unwrap();
            assert_eq!(bufs[1].1.data, BufData::F32(vec![0.5, -1.0, 2.0, 0.25, 3.0, -4.5]));
            assert_eq!(bufs[2].1.data, BufData::I32(vec![7, -9]));
        }
        // The seeded input still changes with the seed.
        assert_ne!(generate(&g, 0).unwrap()[0], generate(&g, 1).unwrap()[0]);
        let y = crate::l0::interp::run_seeded(&g, 3).unwrap();
        let x = &generate_tensors(&g, 3).unwrap()["x"].data;
        let want0 = 0.5 * x[0] - 1.0 * x[1] + 2.0 * x[2];
        assert!((y[0].data[0] - want0).abs() < 1e-12, "{} vs {want0}", y[0].data[0]);
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn a_wrong_checksum_names_file_param_and_both_sums() {
        let dir = data_dir("crc", Some((0xdeadbeef, 0)), None);
        let ds = load_dir(&dir).unwrap_err();
        assert_eq!(ds.len(), 2, "both parameters are reported");
        let m = &ds[0].message;
        assert!(
            m.contains("parameter `w`") && m.contains("lin.bin") && m.contains("expected crc32 deadbeef"),
            "{m}"
        );
        let w: Vec<u8> = [0.5f32, -1.0, 2.0, 0.25, 3.0, -4.5].iter().flat_map(|x| x.to_le_bytes()).collect();
        assert!(m.contains(&format!("found {:08x}", ekb_wire::crc32(&w))), "{m}");
        let loc = ds[0].location.as_ref().expect("located");
        assert_eq!((loc.line, loc.column), (2, 9));
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn a_short_or_missing_file_is_an_error() {
        let w: Vec<u8> = [0.5f32, -1.0, 2.0, 0.25, 3.0, -4.5].iter().flat_map(|x| x.to_le_bytes()).collect();
        let dir = data_dir("short", None, Some([w, vec![0; 6]].concat()));
        let ds = load_dir(&dir).unwrap_err();
        assert_eq!(ds.len(), 1, "w fits in 30 bytes but k does not: {ds:?}");
        assert!(ds[0].message.contains("parameter `k`"), "{}", ds[0].message);
        assert!(
            ds[0].message.contains("needs 8 bytes from offset 24, but the file has 30 bytes"),
            "{}",
            ds[0].message
        );
        std::fs::remove_file(dir.join("lin.bin")).unwrap();
        let ds = load_dir(&dir).unwrap_err();
        assert!(ds[0].message.contains("cannot read its data file") && ds[0].message.contains("lin.bin"));
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn unloaded_data_is_refused_and_inputs_cannot_be_files() {
        let text = DATA_GRAPH.replace("CRC_W", "1").replace("CRC_K", "2");
        let g = load(&SourceFile::new("not a file on disk", text)).unwrap();
        let d = generate(&g, 0).unwrap_err();
        assert!(
            d.message.contains("`w` takes its values from `lin.bin`, which has not been loaded"),
            "{}",
            d.message
        );
        let bad =
            "graph g(x: f32[2] = file(\"a.bin\", offset=0, crc32=\"1\")) -> (y: f32[2]) {\n  return x\n}\n";
        let d = parse(&SourceFile::new("g", bad)).unwrap_err();
        assert!(d.message.contains("input `x` cannot take its values from a file"), "{}", d.message);
        let bad = "graph g(x: f32[2]) -> (y: f32[2]) {\n  param w: f32[2] = file(\"a.bin\", offset=0)\n  return x\n}\n";
        let d = parse(&SourceFile::new("g", bad)).unwrap_err();
        assert!(d.message.contains("needs `crc32=`"), "{}", d.message);
        let bad = "graph g(x: f32[2]) -> (y: f32[2]) {\n  param w: f32[2] = file(\"a.bin\", offest=0, crc32=\"1\")\n  return x\n}\n";
        let d = parse(&SourceFile::new("g", bad)).unwrap_err();
        assert_eq!(d.hint.as_deref(), Some("did you mean `offset`?"));
    }
}
