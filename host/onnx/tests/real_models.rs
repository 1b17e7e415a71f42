//! Reduced-width siblings of torchvision MobileNetV2, ResNet-18 and SqueezeNet1.1 (random
//! weights, exported by PyTorch; `tests/data/README.md` has the command) import, and the
//! reference interpreter reproduces PyTorch's outputs on the seeded input (recorded in
//! `torch_outputs.json` on the machine with PyTorch) and onnxruntime's on this one.

use ekb_ir::l0::{check, interp, print::print, Graph};
use ekb_ir::tensor::{compare, write_npy, Tolerance};
use ekb_ir::SourceFile;
use ekb_onnx::python::{require, run_ort, OrtJob};
use ekb_onnx::{export_bytes, import, npy, ImportOptions};
use std::path::{Path, PathBuf};

const MODELS: [&str; 3] = ["mobilenet_v2_w025", "resnet18_w16", "squeezenet1_1_half"];

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(name)
}

fn opts(name: &str) -> ImportOptions {
    ImportOptions { name: Some(name.into()), data_file: format!("{name}.bin"), ..Default::default() }
}

/// Imports a model, writes `NAME.ekir` and `NAME.bin` into `dir`, and reads the graph back from
/// disk (so the data goes through the sidecar file and its checksums).
fn import_to(dir: &Path, name: &str) -> Graph {
    let bytes = std::fs::read(data(&format!("{name}.onnx"))).unwrap();
    let opts =
        ImportOptions { name: Some(name.into()), data_file: format!("{name}.bin"), ..Default::default() };
    let im = import(&bytes, &opts).unwrap_or_else(|d| panic!("{name}: {d}"));
    std::fs::write(dir.join(format!("{name}.bin")), &im.data).unwrap();
    let ekir = dir.join(format!("{name}.ekir"));
    std::fs::write(&ekir, print(&im.graph)).unwrap();
    let g = check::load(&SourceFile::read(&ekir).unwrap()).unwrap_or_else(|ds| panic!("{}", ds[0]));
    assert_eq!(print(&g), print(&im.graph));
    g
}

#[test]
fn the_interpreter_reproduces_pytorch_on_the_imported_models() {
    let torch: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(data("torch_outputs.json")).unwrap()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    for name in MODELS {
        let g = import_to(dir.path(), name);
        assert_eq!(g.inputs[0].ty.to_string(), "f32[1,3,66,66]");
        // Data parameters export as the same initializers: exporting and importing again gives
        // the same text, offsets and checksums included.
        let again = import(&export_bytes(&g, 0).unwrap(), &opts(name)).unwrap();
        assert_eq!(print(&again.graph), print(&g), "{name}");
        let y = &interp::run_seeded(&g, 0).unwrap()[0];
        let want: Vec<f64> =
            torch[name]["y"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
        assert_eq!(y.data.len(), want.len());
        let scale = want.iter().fold(0f64, |m, v| m.max(v.abs()));
        let diff = y.data.iter().zip(&want).fold(0f64, |m, (a, b)| m.max((a - b).abs()));
        assert!(diff <= 1e-4 * scale, "{name}: max difference {diff} for outputs of magnitude {scale}");
        let argmax = |v: &[f64]| (0..v.len()).max_by(|&i, &j| v[i].total_cmp(&v[j])).unwrap();
        assert_eq!(argmax(&y.data), argmax(&want), "{name}: the top class differs");
    }
}

#[test]
fn onnxruntime_agrees_on_the_original_models() {
    require(&["onnxruntime", "numpy"]).unwrap_or_else(|e| panic!("{e}"));
    let dir = tempfile::tempdir().unwrap();
    let mut jobs = Vec::new();
    let mut graphs = Vec::new();
    for name in MODELS {
        let g = import_to(dir.path(), name);
        let case = dir.path().join(name);
        std::fs::create_dir_all(&case).unwrap();
        let inputs = ekb_ir::l0::inputs::generate(&g, 1).unwrap();
        write_npy(&case.join("input.x.npy"), &inputs[0].1).unwrap();
        jobs.push(OrtJob {
            model: data(&format!("{name}.onnx")),
            inputs: case.clone(),
            outputs: case.clone(),
        });
        graphs.push((g, case));
    }
    run_ort(&jobs).unwrap_or_else(|e| panic!("{e}"));
    for (g, case) in graphs {
        let want = &interp::run_seeded(&g, 1).unwrap()[0];
        let got = npy::read(&case.join("output.y.npy")).unwrap().to_tensor();
        compare(want, &got, Tolerance { atol: 1e-5, rtol: 1e-4 })
            .unwrap_or_else(|m| panic!("{}: {m}", g.name));
    }
}
