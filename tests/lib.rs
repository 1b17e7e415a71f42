//! Shared helpers of the end-to-end tests: the operator corpus in `tests/ops/` and comparison
//! of outputs against the reference interpreter.
//!
//! The corpus is one small L0 graph per operator (and attribute variant), each a complete task:
//! every backend and schedule must reproduce its reference outputs on every seed tested.
//!
//! Also here: [`static_runtime`], the static device runtime that tests start as a real child
//! process.

use ekb_ir::l0::{self, Graph};
use ekb_ir::tensor::{compare, Buffer, Tensor, Tolerance};
use ekb_ir::SourceFile;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The seeds every end-to-end comparison runs (the evaluation protocol checks three).
pub const SEEDS: [u64; 3] = [0, 1, 2];

/// `tests/ops/*.ekir`, sorted by name. `EKB_CORPUS_DIR` names another copy of the folder (a test
/// binary carried to another machine finds the corpus there).
pub fn corpus_files() -> Vec<PathBuf> {
    let dir = std::env::var_os("EKB_CORPUS_DIR")
        .map_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("ops"), PathBuf::from);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "ekir"))
        .collect();
    files.sort();
    files
}

/// Builds the static release runtime (`ekb-rt`) for the Rust target `triple` (a musl target)
/// with cargo, in a target directory of its own under `target_tmpdir` (a test passes its
/// `CARGO_TARGET_TMPDIR`; the test's own build holds the workspace's), and returns its path.
/// Concurrent calls wait on cargo's lock.
pub fn static_runtime(triple: &str, target_tmpdir: &Path) -> PathBuf {
    release_runtime(triple, &[], &target_tmpdir.join("ekb-rt-static"))
}

/// Builds the GPU runtime for this machine (`ekb-rt` with the `opencl` feature, a glibc binary)
/// as [`static_runtime`] does, and returns its path.
pub fn opencl_runtime(target_tmpdir: &Path) -> PathBuf {
    let triple = match std::env::consts::ARCH {
        "aarch64" => "aarch64-unknown-linux-gnu",
        _ => "x86_64-unknown-linux-gnu",
    };
    release_runtime(triple, &["--features", "opencl"], &target_tmpdir.join("ekb-rt-opencl"))
}

fn release_runtime(triple: &str, extra: &[&str], target_dir: &Path) -> PathBuf {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("tests/ is inside the workspace");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = std::process::Command::new(cargo)
        .args(["build", "--release", "--offline", "-p", "ekb-rt", "--target", triple])
        .args(extra)
        .arg("--target-dir")
        .arg(target_dir)
        .current_dir(workspace)
        .output()
        .unwrap_or_else(|e| panic!("cannot run cargo: {e}"));
    assert!(
        out.status.success(),
        "cargo build --target {triple} {extra:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    target_dir.join(triple).join("release/ekb-rt")
}

/// Loads and checks one corpus graph; a corpus file that does not check is a test failure.
pub fn load_graph(path: &Path) -> Graph {
    let src = SourceFile::read(path).unwrap_or_else(|d| panic!("{d}"));
    l0::check::load(&src)
        .unwrap_or_else(|ds| panic!("{}", ds.iter().map(|d| d.to_string()).collect::<String>()))
}

/// The seeded inputs of a graph (as device buffers) and its reference outputs.
pub fn reference(g: &Graph, seed: u64) -> (HashMap<String, Buffer>, Vec<Tensor>) {
    let inputs = l0::inputs::generate(g, seed).unwrap_or_else(|d| panic!("{}: {d}", g.name));
    let tensors: HashMap<String, Tensor> = inputs.iter().map(|(n, b)| (n.clone(), b.to_tensor())).collect();
    let outputs = l0::interp::run(g, &tensors).unwrap_or_else(|d| panic!("{}: {d}", g.name));
    (inputs.into_iter().collect(), outputs)
}

/// Compares produced outputs (by output name) with the reference at the default tolerance;
/// returns a description of every difference.
pub fn check_outputs(g: &Graph, reference: &[Tensor], got: &HashMap<String, Buffer>) -> Vec<String> {
    let mut problems = Vec::new();
    for (o, r) in g.outputs.iter().zip(reference) {
        match got.get(&o.name) {
            None => problems.push(format!("output `{}` missing", o.name)),
            Some(b) if b.ty != o.ty => {
                problems.push(format!("output `{}` has type {}, expected {}", o.name, b.ty, o.ty))
            }
            Some(b) => {
                if let Err(m) = compare(r, &b.to_tensor(), Tolerance::default_for(o.ty.dtype)) {
                    problems.push(format!("output `{}`: {m}", o.name));
                }
            }
        }
    }
    problems
}
