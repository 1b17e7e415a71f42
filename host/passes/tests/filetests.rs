//! File tests of the graph passes (`tests/files/*.test`), in the format of the schedule
//! primitives' file tests (`ekb_ir::filetest`). A file holds, in order:
//!
//! - the input graph, whose leading comments say `# passes: LIST` (what `--passes` takes:
//!   `default`, `none` or pass names, run as one pipeline);
//! - one expectation: `--- output` (the printed graph after the pipeline, exactly) or `--- check`
//!   (`CHECK:`, `CHECK-NEXT:` and `CHECK-NOT:` lines matched against that text).
//!
//! Every result must also check, load again from its printed text to the same text, and compute
//! what the input computes (the reference interpreter on seeds 1 and 2).
//!
//! `EKB_BLESS=1 cargo test -p ekb-passes --test filetests` rewrites `--- output` sections with
//! what the code now produces (review the diff before committing it).

use ekb_ir::filetest;
use ekb_ir::l0::check::{check, load};
use ekb_ir::l0::print::print;
use ekb_ir::SourceFile;
use ekb_passes::{agrees, Selection};
use std::path::Path;

/// Runs one file; `Ok(Some(text))` when blessing should rewrite its expectation.
fn run(path: &Path) -> Result<Option<String>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let [(_, input), (kind, expected)] = filetest::sections(&text)
        .try_into()
        .map_err(|_| "expected the input graph and one of `--- output`, `--- check`".to_string())?;
    let passes = filetest::setting(&input, "passes");
    if passes.is_empty() {
        return Err("the input names no passes: add a comment `# passes: LIST`".into());
    }
    let selection = Selection::parse(&passes.join(",")).map_err(|d| d.to_string())?;
    // Named relative to the crate, so messages do not depend on where the checkout is.
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let name = path.strip_prefix(root).unwrap_or(path).display().to_string();
    let g = load(&SourceFile::new(name.as_str(), input)).map_err(|ds| ds[0].to_string())?;
    let out = ekb_passes::run(&g, &selection, None).map_err(|d| format!("the pipeline failed: {d}"))?;
    let printed = print(&out);
    check(&mut out.clone()).map_err(|ds| format!("the result does not check: {}\n{printed}", ds[0]))?;
    let again = load(&SourceFile::new("the printed result", printed.as_str()))
        .map_err(|ds| format!("the printed result does not load: {}\n{printed}", ds[0]))?;
    if print(&again) != printed {
        return Err(format!("the printed result loads to another graph:\n{printed}"));
    }
    for seed in [1, 2] {
        agrees(&g, &out, seed).map_err(|e| format!("seed {seed}: {e}\n{printed}"))?;
    }
    match kind.as_str() {
        "output" => filetest::expect_text(&expected, &printed),
        "check" => filetest::check(&expected, &printed)
            .map(|_| None)
            .map_err(|e| format!("{e}\n--- output\n{printed}")),
        other => Err(format!("unexpected section `{other}`: `output` or `check`")),
    }
}

#[test]
fn pass_file_tests() {
    filetest::run_dir(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/files"), run);
}
