//! The file-test format shared by the test runners of the workspace (`tests/files/*.test` of the
//! schedule primitives and of the graph passes), in the style of LLVM lit and Cranelift's
//! filetests.
//!
//! A file is a list of sections: the first is untitled (the input), each next one opens with a
//! line `--- NAME`. The input's comment lines may carry settings, `# KEY: a, b`. The last
//! section is the expectation: a text the result must equal (`EKB_BLESS=1` rewrites it with what
//! the code now produces), or `CHECK:`, `CHECK-NEXT:` and `CHECK-NOT:` lines matched against the
//! result, FileCheck-style. What it keeps true: blessing only ever rewrites the last section,
//! the header line `--- NAME` and everything before it stay byte for byte.

use std::path::{Path, PathBuf};

/// The sections of a file test, in order, as (name, text); the first is the input, named `""`.
pub fn sections(text: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = vec![(String::new(), String::new())];
    for line in text.split_inclusive('\n') {
        if let Some(name) = line.strip_prefix("--- ") {
            out.push((name.trim().to_string(), String::new()));
        } else {
            out.last_mut().expect("one section").1.push_str(line);
        }
    }
    out
}

/// The values of the comment lines `# KEY: a, b` of `input`, in order, each trimmed.
pub fn setting(input: &str, key: &str) -> Vec<String> {
    let prefix = format!("# {key}:");
    input
        .lines()
        .filter_map(|l| l.trim().strip_prefix(prefix.as_str()))
        .flat_map(|v| v.split(',').map(|s| s.trim().to_string()).collect::<Vec<_>>())
        .filter(|s| !s.is_empty())
        .collect()
}

/// FileCheck-style matching of `CHECK:`, `CHECK-NEXT:` and `CHECK-NOT:` lines against `out`
/// (each pattern is a substring of a line); `Err` says which directive failed.
pub fn check(directives: &str, out: &str) -> Result<(), String> {
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

/// Compares `got` with the `expected` text (trailing whitespace aside): `Ok(None)` when they are
/// equal, `Ok(Some(got))` when they differ and `EKB_BLESS` is set (the file is to be rewritten),
/// else `Err` with both.
pub fn expect_text(expected: &str, got: &str) -> Result<Option<String>, String> {
    if got.trim_end() == expected.trim_end() {
        Ok(None)
    } else if std::env::var_os("EKB_BLESS").is_some() {
        Ok(Some(got.to_string()))
    } else {
        Err(format!("expected\n{expected}\nfound\n{got}"))
    }
}

/// Runs `run` on every `*.test` file of `dir` in name order; a file whose run returns
/// `Ok(Some(text))` gets `text` as its last section (blessing). Panics listing every failure,
/// or when the folder holds no file test.
pub fn run_dir(dir: &Path, mut run: impl FnMut(&Path) -> Result<Option<String>, String>) {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("a folder entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "test"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no `*.test` file in {}", dir.display());
    let mut failures = Vec::new();
    for f in &files {
        match run(f) {
            Ok(None) => {}
            Ok(Some(new)) => {
                let text = std::fs::read_to_string(f).expect("read");
                std::fs::write(f, bless(&text, &new)).expect("bless");
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

/// `text` with its last section's body replaced by `new`.
fn bless(text: &str, new: &str) -> String {
    let cut = text.rfind("\n--- ").expect("an expectation section");
    let head_end = text[cut + 1..].find('\n').map_or(text.len(), |i| cut + 1 + i + 1);
    format!("{}{}\n", &text[..head_end], new.trim_end())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sections_settings_and_blessing() {
        let text = "# run: interp, llvm\n# passes: fold\ngraph g\n--- trace\nt0\n--- output\nold\n";
        let s = sections(text);
        let names: Vec<&str> = s.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["", "trace", "output"]);
        assert_eq!(s[0].1, "# run: interp, llvm\n# passes: fold\ngraph g\n");
        assert_eq!(setting(&s[0].1, "run"), ["interp", "llvm"]);
        assert_eq!(setting(&s[0].1, "passes"), ["fold"]);
        assert!(setting(&s[0].1, "seeds").is_empty());
        assert_eq!(
            bless(text, "new\ntext\n\n"),
            "# run: interp, llvm\n# passes: fold\ngraph g\n--- trace\nt0\n--- output\nnew\ntext\n"
        );
    }

    #[test]
    fn check_directives_match_in_order() {
        let out = "a 1\nb 2\nc 3\n";
        assert_eq!(check("CHECK: a\nCHECK-NEXT: b\nCHECK-NOT: x\nCHECK: c", out), Ok(()));
        assert_eq!(check("CHECK: b\nCHECK: a", out), Err("`CHECK: a` did not match after line 2".into()));
        assert_eq!(
            check("CHECK: a\nCHECK-NEXT: c", out),
            Err("`CHECK-NEXT: c` did not match after line 1".into())
        );
        assert_eq!(
            check("CHECK: a\nCHECK-NOT: b\nCHECK: c", out),
            Err("`CHECK-NOT: b` matched before `c`".into())
        );
        assert_eq!(check("CHECK-NOT: c", out), Err("`CHECK-NOT: c` matched".into()));
        assert_eq!(check("c 3", out), Err("not a directive: `c 3`".into()));
    }
}
