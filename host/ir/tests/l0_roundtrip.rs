//! Golden round-trip tests: every file under `tests/golden/l0/` is a canonical L0 graph that
//! must load (parse + check) and print back byte for byte; printing is a fixed point and
//! reparsing gives the same graph up to spans. `EKB_BLESS=1` rewrites the files with the
//! printer's output after a deliberate change of the canonical form.

use ekb_ir::l0::check::load;
use ekb_ir::l0::ops::SPECS;
use ekb_ir::l0::parse::{parse, strip_spans};
use ekb_ir::l0::print::print;
use ekb_ir::l0::Op;
use ekb_ir::SourceFile;
use std::path::PathBuf;

fn golden_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden/l0")
}

#[test]
fn golden_files_are_canonical_and_round_trip() {
    let bless = std::env::var_os("EKB_BLESS").is_some_and(|v| v == "1");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(golden_dir())
        .expect("golden directory")
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "ekir"))
        .collect();
    paths.sort();
    assert!(!paths.is_empty());
    let mut failures = Vec::new();
    for path in &paths {
        let src = SourceFile::read(path).expect("readable golden file");
        let g = match load(&src) {
            Ok(g) => g,
            Err(ds) => {
                failures.push(ds.iter().map(|d| d.to_string()).collect::<String>());
                continue;
            }
        };
        let printed = print(&g);
        if printed != src.text {
            if bless {
                std::fs::write(path, &printed).expect("write golden file");
            } else {
                failures.push(format!("{} is not canonical; printer gives:\n{printed}", path.display()));
                continue;
            }
        }
        // Reparsing the printed text gives the same graph, spans aside.
        let again = load(&SourceFile::new("again.ekir", printed.clone())).expect("printed text loads");
        assert_eq!(print(&again), printed, "{}", path.display());
        let (mut a, mut b) = (g.clone(), again);
        strip_spans(&mut a);
        strip_spans(&mut b);
        assert_eq!(a, b, "{}", path.display());
        // Before `check`, the parsed graph already carries every annotation.
        let parsed = parse(&SourceFile::new("p.ekir", printed.clone())).expect("parses");
        assert_eq!(print(&parsed), printed, "{}", path.display());
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn golden_files_cover_every_operator_form() {
    let mut seen: Vec<(&str, bool)> = Vec::new();
    for e in std::fs::read_dir(golden_dir()).expect("golden directory") {
        let src = SourceFile::read(&e.expect("entry").path()).expect("readable");
        for n in load(&src).expect("golden files load").nodes {
            let form = (n.op.name(), matches!(n.op, Op::Reduce { .. }));
            if !seen.contains(&form) {
                seen.push(form);
            }
        }
    }
    for s in SPECS {
        assert!(seen.contains(&(s.name, s.is_reduction)), "no golden file uses `{}`", s.name);
    }
}
