//! A graph's inputs and parameters, generated from a seed.
//!
//! Every declared tensor is filled by the shared seeded generator (`ekb_wire::seeded`) with the
//! key `tensor_key(graph name, seed, tensor name)`, so the host's reference run and the board's
//! run see the same bits without any data travelling. What it must keep true: the order (inputs,
//! then parameters, each in declaration order) and the key are part of the benchmark contract;
//! the data of one tensor depends only on (graph name, seed, its name, its type, its init), never
//! on the other declarations.

use crate::diag::Diagnostic;
use crate::l0::ast::{Graph, TensorDecl};
use crate::tensor::{BufData, Buffer, Tensor};
use crate::types::DType;
use ekb_wire::seeded::{fill_f32, fill_i32, tensor_key, InitError};
use std::collections::HashMap;

/// The inputs, then the parameters, in declaration order, each as the device holds it.
/// An initialiser that does not fit its tensor is a diagnostic at the declaration.
pub fn generate(g: &Graph, seed: u64) -> Result<Vec<(String, Buffer)>, Diagnostic> {
    g.inputs.iter().chain(&g.params).map(|d| Ok((d.name.clone(), generate_one(g, d, seed)?))).collect()
}

/// The same data widened to f64 reference values, by name, as the interpreter consumes it.
pub fn generate_tensors(g: &Graph, seed: u64) -> Result<HashMap<String, Tensor>, Diagnostic> {
    Ok(generate(g, seed)?.into_iter().map(|(name, buf)| (name, buf.to_tensor())).collect())
}

/// One declared tensor.
fn generate_one(g: &Graph, d: &TensorDecl, seed: u64) -> Result<Buffer, Diagnostic> {
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
    };
    Ok(Buffer { ty: d.ty.clone(), data })
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
        InitError::WrongDType { .. } => diag
            .with_expected("an initialiser for i32: `randint(lo, hi)` or `const(v)` with an integer v")
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
        TensorDecl { name: name.into(), ty: TensorType::new(dtype, shape), init, span: Span::new(at, at + 1) }
    }

    fn graph(inputs: Vec<TensorDecl>, params: Vec<TensorDecl>) -> Graph {
        Graph { name: "mlp".into(), inputs, params, nodes: vec![], outputs: vec![], span: Span::NONE }
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
            BufData::I32(_) => panic!("expected f32 data"),
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
            BufData::F32(_) => panic!("idx must be i32"),
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
}
