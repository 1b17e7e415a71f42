//! Embeds the operator corpus (`tests/ops/*.ekir`, one small graph per operator) so that
//! `ekb bench` can time the lowering of every operator without the source tree at hand.

use std::fmt::Write;
use std::path::Path;

fn main() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/ops");
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("tests/ops exists")
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "ekir"))
        .collect();
    files.sort();
    let mut out = String::from(
        "/// `(file stem, text)` of every graph in `tests/ops`.\npub const OP_CORPUS: &[(&str, &str)] = &[\n",
    );
    for f in &files {
        let stem = f.file_stem().unwrap().to_string_lossy();
        let path = f.canonicalize().expect("corpus file");
        writeln!(out, "    ({stem:?}, include_str!({:?})),", path.display().to_string()).unwrap();
    }
    out.push_str("];\n");
    let dest = Path::new(&std::env::var("OUT_DIR").unwrap()).join("op_corpus.rs");
    std::fs::write(dest, out).expect("write op_corpus.rs");
}
