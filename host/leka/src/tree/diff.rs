//! Unified diffs between two candidates (their files, by relative path).
//!
//! Files are compared path by path in path order; a file on one side only is diffed against
//! `/dev/null`. Headers name each side as `LABEL/PATH`, so a diff of nodes 3 and 7 reads
//! `--- 3/candidate.trace` / `+++ 7/candidate.trace`.
//!
//! What must stay true: identical candidates give the empty string, and every changed line
//! appears once with its `+` or `-`.

use super::node::CandidateFile;
use similar::TextDiff;
use std::collections::BTreeMap;

/// Lines of context around each change.
const CONTEXT: usize = 3;

/// The unified diff from `old` to `new`.
pub fn unified(old: &[CandidateFile], new: &[CandidateFile], old_label: &str, new_label: &str) -> String {
    let mut sides: BTreeMap<&str, (Option<&str>, Option<&str>)> = BTreeMap::new();
    for f in old {
        sides.entry(&f.path).or_default().0 = Some(&f.text);
    }
    for f in new {
        sides.entry(&f.path).or_default().1 = Some(&f.text);
    }
    let mut out = String::new();
    for (path, (a, b)) in sides {
        if a == b {
            continue;
        }
        let header = |label: &str, side: Option<&str>| match side {
            Some(_) => format!("{label}/{path}"),
            None => "/dev/null".to_string(),
        };
        let diff = TextDiff::from_lines(a.unwrap_or(""), b.unwrap_or(""));
        let text = diff
            .unified_diff()
            .context_radius(CONTEXT)
            .missing_newline_hint(true)
            .header(&header(old_label, a), &header(new_label, b))
            .to_string();
        out.push_str(&text);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(path: &str, text: &str) -> CandidateFile {
        CandidateFile::new(path, text)
    }

    #[test]
    fn changed_added_and_removed_files_are_each_diffed() {
        let old = [f("candidate.l2/kernels/k0.c", "a\nb\nc\n"), f("candidate.l2/module.ekir", "m\n")];
        let new = [f("candidate.l2/kernels/k0.c", "a\nB\nc\n"), f("candidate.l2/kernels/k1.c", "k1\n")];
        let d = unified(&old, &new, "3", "7");
        assert_eq!(
            d,
            "--- 3/candidate.l2/kernels/k0.c\n+++ 7/candidate.l2/kernels/k0.c\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n\
             --- /dev/null\n+++ 7/candidate.l2/kernels/k1.c\n@@ -0,0 +1 @@\n+k1\n\
             --- 3/candidate.l2/module.ekir\n+++ /dev/null\n@@ -1 +0,0 @@\n-m\n"
        );
    }

    #[test]
    fn identical_candidates_have_an_empty_diff() {
        let same = [f("candidate.trace", "parallel k0.i\n")];
        assert_eq!(unified(&same, &same, "1", "2"), "");
    }
}
