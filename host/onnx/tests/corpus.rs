//! The operator corpus (`tests/ops/*.ekir` at the repository root, one small graph per
//! operator and attribute variant) through ONNX:
//! - L0 -> ONNX -> L0 gives the same graph: the same canonical text, except that parameters come
//!   back as data parameters holding exactly the values the seeded generator gave them;
//! - onnxruntime, an independent implementation of the ONNX operators, agrees with the reference
//!   interpreter on every exported graph, on the three evaluation seeds. This needs Python with
//!   `onnxruntime` and `numpy` (`toolchains/setup.sh` installs them).

use ekb_e2e::{check_outputs, corpus_files, load_graph, SEEDS};
use ekb_ir::l0::{self, inputs, print::print};
use ekb_ir::tensor::write_npy;
use ekb_onnx::python::{require, run_ort, OrtJob};
use ekb_onnx::{export_bytes, import, npy, ImportOptions};
use std::collections::HashMap;

#[test]
fn every_corpus_graph_comes_back_the_same() {
    let mut failures = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    let files = corpus_files();
    assert!(files.len() > 40, "the corpus has {} graphs", files.len());
    for f in &files {
        let g = load_graph(f);
        seen.extend(g.nodes.iter().map(|n| n.op.name()));
        let bytes = export_bytes(&g, 5).unwrap_or_else(|d| panic!("{}: {d}", g.name));
        let opts = ImportOptions {
            name: Some(g.name.clone()),
            data_file: format!("{}.bin", g.name),
            ..Default::default()
        };
        let im = match import(&bytes, &opts) {
            Ok(im) => im,
            Err(d) => {
                failures.push(format!("{}: import failed: {d}", g.name));
                continue;
            }
        };
        let mut back = im.graph.clone();
        let seeded = inputs::generate(&g, 5).unwrap();
        if back.params.len() != g.params.len() {
            failures.push(format!(
                "{}: {} params came back, {} went out",
                g.name,
                back.params.len(),
                g.params.len()
            ));
            continue;
        }
        for (b, o) in back.params.iter_mut().zip(&g.params) {
            let values = b.data.as_ref().and_then(|d| d.values.clone()).expect("imported params carry data");
            let want = &seeded.iter().find(|(n, _)| *n == o.name).expect("seeded param").1.data;
            if (b.name.as_str(), &b.ty, &*values) != (o.name.as_str(), &o.ty, want) {
                failures.push(format!("{}: param `{}` differs", g.name, o.name));
            }
            b.init = o.init;
            b.data = o.data.clone();
        }
        let (want, got) = (print(&g), print(&back));
        if want != got {
            failures.push(format!("{}:\n--- exported\n{want}--- imported\n{got}", g.name));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} graphs differ:\n{}",
        failures.len(),
        files.len(),
        failures.join("\n")
    );
    let missing: Vec<&str> = l0::ops::OP_NAMES.iter().copied().filter(|op| !seen.contains(op)).collect();
    assert!(missing.is_empty(), "operators no corpus graph exercises: {missing:?}");
}

#[test]
fn onnxruntime_matches_the_interpreter_on_every_corpus_graph() {
    require(&["onnxruntime", "numpy"]).unwrap_or_else(|e| panic!("{e}"));
    let dir = tempfile::tempdir().unwrap();
    let mut jobs = Vec::new();
    let mut cases = Vec::new();
    for f in corpus_files() {
        let g = load_graph(&f);
        for seed in SEEDS {
            let case = dir.path().join(format!("{}-{seed}", g.name));
            std::fs::create_dir_all(&case).unwrap();
            let model = case.join("model.onnx");
            std::fs::write(&model, export_bytes(&g, seed).unwrap()).unwrap();
            for (name, buf) in inputs::generate(&g, seed).unwrap() {
                if g.inputs.iter().any(|d| d.name == name) {
                    write_npy(&case.join(format!("input.{name}.npy")), &buf).unwrap();
                }
            }
            jobs.push(OrtJob { model, inputs: case.clone(), outputs: case.clone() });
            cases.push((g.clone(), seed, case));
        }
    }
    run_ort(&jobs).unwrap_or_else(|e| panic!("{e}"));
    let mut failures = Vec::new();
    for (g, seed, case) in &cases {
        let want = l0::interp::run_seeded(g, *seed).unwrap_or_else(|d| panic!("{}: {d}", g.name));
        let got: HashMap<String, _> = g
            .outputs
            .iter()
            .map(|o| (o.name.clone(), npy::read(&case.join(format!("output.{}.npy", o.name))).unwrap()))
            .collect();
        for p in check_outputs(g, &want, &got) {
            failures.push(format!("{} seed {seed}: {p}", g.name));
        }
    }
    assert!(failures.is_empty(), "{} mismatches:\n{}", failures.len(), failures.join("\n"));
    assert!(cases.len() >= 3 * 60, "{} cases", cases.len());
}
