//! File tests of the schedule primitives (`tests/files/*.test`), in the style of LLVM lit and
//! Cranelift's filetests. A file holds, in order:
//!
//! - the input program (an L0 graph, lowered under the naive schedule for the host, or an L1
//!   module), whose leading comments may say `# run: interp, llvm` (the backends on which the
//!   scheduled module must compute what the input computes; `interp` bit for bit on 3 seeds);
//! - `--- trace`: the schedule trace to apply;
//! - one expectation: `--- output` (the scheduled module's exact text), `--- check` (`CHECK:`,
//!   `CHECK-NEXT:` and `CHECK-NOT:` lines matched against that text, FileCheck-style), or
//!   `--- error` (the refusal's exact diagnostic, located in the trace; the program must then be
//!   unchanged).
//!
//! `EKB_BLESS=1 cargo test -p ekb-sched --test filetests` rewrites `--- output` and `--- error`
//! sections with what the code now produces (review the diff before committing it).

mod support;

use ekb_ir::l1::print::print;
use ekb_ir::SourceFile;
use std::path::{Path, PathBuf};

struct FileTest {
    input: String,
    trace: String,
    kind: String,
    expected: String,
    runs: Vec<String>,
}

fn read(path: &Path) -> Result<FileTest, String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let mut sections: Vec<(String, String)> = vec![(String::new(), String::new())];
    for line in text.split_inclusive('\n') {
        if let Some(name) = line.strip_prefix("--- ") {
            sections.push((name.trim().to_string(), String::new()));
        } else {
            sections.last_mut().expect("one section").1.push_str(line);
        }
    }
    let [(_, input), (t, trace), (kind, expected)] = sections.as_slice() else {
        return Err(
            "expected the input, `--- trace`, and one of `--- output`, `--- check`, `--- error`".into()
        );
    };
    if t != "trace" || !["output", "check", "error"].contains(&kind.as_str()) {
        return Err(format!("unexpected sections `{t}` and `{kind}`"));
    }
    let runs = input
        .lines()
        .filter_map(|l| l.trim().strip_prefix("# run:"))
        .flat_map(|r| r.split(',').map(|s| s.trim().to_string()).collect::<Vec<_>>())
        .collect();
    Ok(FileTest {
        input: input.clone(),
        trace: trace.clone(),
        kind: kind.clone(),
        expected: expected.clone(),
        runs,
    })
}

/// FileCheck-style matching; `Err` says which directive failed.
fn check(directives: &str, out: &str) -> Result<(), String> {
    let lines: Vec<&str> = out.lines().collect();
    let mut at = 0; // the next line a `CHECK` may match
    let mut last: Option<usize> = None;
    let mut nots: Vec<&str> = Vec::new();
    for d in directives.lines().map(str::trim).filter(|l| !l.is_empty()) {
        if let Some(p) = d.strip_prefix("CHECK-NOT:") {
            nots.push(p.trim());
            continue;
        }
        let (next, pat) = if let Some(p) = d.strip_prefix("CHECK-NEXT:") {
            (true, p.trim())
        } else if let Some(p) = d.strip_prefix("CHECK:") {
            (false, p.trim())
        } else {
            return Err(format!("not a directive: `{d}`"));
        };
        let found = if next {
            let i = last.map_or(0, |l| l + 1);
            (i < lines.len() && lines[i].contains(pat)).then_some(i)
        } else {
            (at..lines.len()).find(|&i| lines[i].contains(pat))
        };
        let Some(i) = found else { return Err(format!("`{d}` did not match after line {at}")) };
        if let Some(n) = nots.iter().find(|n| lines[at..i].iter().any(|l| l.contains(*n))) {
            return Err(format!("`CHECK-NOT: {n}` matched before `{pat}`"));
        }
        nots.clear();
        last = Some(i);
        at = i + 1;
    }
    if let Some(n) = nots.iter().find(|n| lines[at..].iter().any(|l| l.contains(*n))) {
        return Err(format!("`CHECK-NOT: {n}` matched"));
    }
    Ok(())
}

/// Runs one file; `Ok(Some(text))` when blessing should rewrite its expectation.
fn run(path: &Path) -> Result<Option<String>, String> {
    let t = read(path)?;
    // Named relative to the crate, so expectations do not depend on where the checkout is.
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let name = path.strip_prefix(root).unwrap_or(path).display().to_string();
    let p = support::load(&name, &t.input)?;
    let trace_src = SourceFile::new(format!("{name} (trace)"), t.trace.clone());
    let trace = ekb_sched::parse(&trace_src).map_err(|d| format!("the trace does not parse: {d}"))?;
    let before = print(&p.module);
    let got = match ekb_sched::apply(&p.module, &trace) {
        Ok(m) => {
            for backend in &t.runs {
                match backend.as_str() {
                    "interp" => support::same_on_interp(&p, &m)?,
                    "llvm" => support::same_on_llvm(&p, &m)?,
                    other => return Err(format!("unknown backend `{other}` in `# run:`")),
                }
            }
            Ok(print(&m))
        }
        Err(d) => {
            if print(&p.module) != before {
                return Err("a refused trace changed the program".into());
            }
            Err(trace_src.locate(d).to_string())
        }
    };
    match (t.kind.as_str(), got) {
        ("check", Ok(out)) => {
            check(&t.expected, &out).map(|_| None).map_err(|e| format!("{e}\n--- output\n{out}"))
        }
        ("check" | "output", Err(e)) => Err(format!("the trace was refused: {e}")),
        ("error", Ok(out)) => Err(format!("the trace was applied, but a refusal was expected:\n{out}")),
        (_, Ok(out) | Err(out)) => {
            if out.trim_end() == t.expected.trim_end() {
                Ok(None)
            } else if std::env::var_os("EKB_BLESS").is_some() {
                Ok(Some(out))
            } else {
                Err(format!("expected\n{}\nfound\n{out}", t.expected))
            }
        }
    }
}

#[test]
fn schedule_file_tests() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/files");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("tests/files")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "test"))
        .collect();
    files.sort();
    assert!(!files.is_empty());
    let mut failures = Vec::new();
    for f in &files {
        match run(f) {
            Ok(None) => {}
            Ok(Some(new)) => {
                let text = std::fs::read_to_string(f).expect("read");
                let cut = text.rfind("\n--- ").expect("an expectation section");
                let head_end = text[cut + 1..].find('\n').map_or(text.len(), |i| cut + 1 + i + 1);
                std::fs::write(f, format!("{}{}\n", &text[..head_end], new.trim_end())).expect("bless");
                eprintln!("blessed {}", f.display());
            }
            Err(e) => failures.push(format!("{}: {e}", f.display())),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} file tests failed:\n\n{}",
        failures.len(),
        files.len(),
        failures.join("\n\n")
    );
}
