//! Where candidates come from: the built-in schedules (`builtin:default`), or the folder
//! `ekb generate` wrote (`DIR/TASK/BACKEND/sample-N/candidate.ekir` beside its `meta.json`);
//! a sample may instead hold `candidate.trace`, a schedule trace over the task's naive lowering
//! (`docs/schedules.md`), an L2 folder `candidate.l2/` (`docs/l2.md`), or a native answer
//! `candidate.c`, `candidate.cu` or `candidate.cl` (`ekb generate --mode native`).
//!
//! What must stay true: a sample that has no candidate file is still a sample (it counts as
//! failed, class `no_candidate`, with the reason `meta.json` gives); a candidate file is read
//! exactly as it is, and its text and SHA-256 go into the result (for an L2 folder, the text is
//! every file of it in order, each after a `# file: NAME` line).

use crate::results::CandidateText;
use ekb_ir::Diagnostic;
use ekb_lower::Schedule;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// The candidates of a run.
#[derive(Debug, Clone, PartialEq)]
pub enum Candidates {
    /// The task's own graph lowered with this schedule.
    Builtin(Schedule),
    /// A folder of generated candidates.
    Dir(PathBuf),
}

impl Candidates {
    /// `builtin:default`, or the folder.
    pub fn describe(&self) -> String {
        match self {
            Candidates::Builtin(s) => format!("builtin:{}", s.name()),
            Candidates::Dir(d) => d.display().to_string(),
        }
    }

    /// Refuses a candidate folder that does not exist.
    pub fn check(&self) -> Result<(), Diagnostic> {
        let Candidates::Dir(dir) = self else { return Ok(()) };
        if !dir.is_dir() {
            return Err(Diagnostic::error(format!("candidate folder `{}` does not exist", dir.display()))
                .with_hint("write one with `ekb generate ... --out DIR`"));
        }
        Ok(())
    }
}

/// One sample's candidate, as found.
#[derive(Debug, Clone, PartialEq)]
pub enum Found {
    /// IR text (an L0 graph or an L1 module), a schedule trace or a native answer (by the
    /// extension of its origin), and where it came from.
    Text { text: String, origin: String },
    /// An L2 folder: where it is, its name in diagnostics, and its files as one text.
    L2 { dir: PathBuf, origin: String, text: String },
    /// A sample without usable IR text, and why.
    Missing { origin: String, reason: String },
}

impl Found {
    /// The record of this candidate (the text kind is filled in by the caller once parsed).
    pub fn record(&self, kind: &str) -> CandidateText {
        match self {
            Found::Text { text, origin } | Found::L2 { text, origin, .. } => CandidateText {
                origin: origin.clone(),
                kind: kind.into(),
                sha256: Some(sha256_hex(text)),
                text: Some(text.clone()),
            },
            Found::Missing { origin, .. } => {
                CandidateText { origin: origin.clone(), kind: "none".into(), sha256: None, text: None }
            }
        }
    }
}

/// The files of folder `dir` as one text, in path order, each after a `# file: NAME` line
/// (`NAME` relative to `dir`); unreadable files are listed without text.
fn folder_text(dir: &Path) -> String {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        for path in entries.filter_map(|e| e.ok().map(|e| e.path())) {
            if path.is_dir() {
                walk(&path, out);
            } else {
                out.push(path);
            }
        }
    }
    let mut files = Vec::new();
    walk(dir, &mut files);
    files.sort();
    let mut text = String::new();
    for f in files {
        let name = f.strip_prefix(dir).unwrap_or(&f).display().to_string();
        text.push_str(&format!("# file: {name}\n"));
        text.push_str(&std::fs::read_to_string(&f).unwrap_or_default());
        if !text.ends_with('\n') {
            text.push('\n');
        }
    }
    text
}

/// SHA-256 of a text, lowercase hex.
pub fn sha256_hex(text: &str) -> String {
    Sha256::digest(text.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

/// The candidate of `task` on `backend`, sample `sample`, in the folder `dir`.
pub fn find_in_dir(dir: &Path, task: &str, backend: &str, sample: u32) -> Found {
    let rel = PathBuf::from(task).join(backend).join(format!("sample-{sample}"));
    let sample_dir = dir.join(&rel);
    let ir = sample_dir.join("candidate.ekir");
    if let Ok(text) = std::fs::read_to_string(&ir) {
        return Found::Text { text, origin: rel.join("candidate.ekir").display().to_string() };
    }
    // A schedule trace: the task's naive lowering for its backend, rewritten step by step.
    if let Ok(text) = std::fs::read_to_string(sample_dir.join("candidate.trace")) {
        return Found::Text { text, origin: rel.join("candidate.trace").display().to_string() };
    }
    let l2 = sample_dir.join("candidate.l2");
    if l2.is_dir() {
        let origin = rel.join("candidate.l2").display().to_string();
        return Found::L2 { text: folder_text(&l2), dir: l2, origin };
    }
    // A native answer: compiled as an L2 candidate of one kernel over the graph's buffers.
    for ext in ["c", "cu", "cl"] {
        let file = format!("candidate.{ext}");
        if let Ok(text) = std::fs::read_to_string(sample_dir.join(&file)) {
            return Found::Text { text, origin: rel.join(file).display().to_string() };
        }
    }
    let origin = rel.display().to_string();
    let meta = std::fs::read_to_string(sample_dir.join("meta.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok());
    let reason = match meta {
        None if !sample_dir.is_dir() => "no sample folder: the candidate was never generated".to_string(),
        None => "no candidate file and no readable meta.json".to_string(),
        Some(m) => match (
            m.get("error").and_then(|e| e.as_str()),
            m["extracted"].get("error").and_then(|e| e.as_str()),
        ) {
            (Some(e), _) => format!("the provider failed: {e}"),
            (None, Some(e)) => format!("nothing usable in the answer: {e}"),
            (None, None) => "no candidate file".to_string(),
        },
    };
    Found::Missing { origin, reason }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn candidates_and_their_absence_are_found_with_a_reason() {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        let s0 = d.join("relu/cpu/sample-0");
        std::fs::create_dir_all(&s0).unwrap();
        std::fs::write(s0.join("candidate.ekir"), "graph relu() {}").unwrap();
        let s1 = d.join("relu/cpu/sample-1");
        std::fs::create_dir_all(&s1).unwrap();
        std::fs::write(s1.join("meta.json"), r#"{"extracted": {"error": "the answer is empty"}}"#).unwrap();
        let s2 = d.join("relu/cpu/sample-2");
        std::fs::create_dir_all(&s2).unwrap();
        std::fs::write(s2.join("meta.json"), r#"{"error": "HTTP 500"}"#).unwrap();
        let s3 = d.join("relu/cpu/sample-3");
        std::fs::create_dir_all(&s3).unwrap();
        std::fs::write(s3.join("candidate.c"), "void f() {}").unwrap();

        let found = find_in_dir(d, "relu", "cpu", 0);
        assert_eq!(
            found,
            Found::Text { text: "graph relu() {}".into(), origin: "relu/cpu/sample-0/candidate.ekir".into() }
        );
        let rec = found.record("l0");
        assert_eq!(rec.sha256.as_deref().map(str::len), Some(64));
        let reason = |s| match find_in_dir(d, "relu", "cpu", s) {
            Found::Missing { reason, .. } => reason,
            other => panic!("{other:?}"),
        };
        assert_eq!(reason(1), "nothing usable in the answer: the answer is empty");
        assert_eq!(reason(2), "the provider failed: HTTP 500");
        assert_eq!(
            find_in_dir(d, "relu", "cpu", 3),
            Found::Text { text: "void f() {}".into(), origin: "relu/cpu/sample-3/candidate.c".into() }
        );
        let s5 = d.join("relu/cpu/sample-5/candidate.l2/kernels");
        std::fs::create_dir_all(&s5).unwrap();
        std::fs::write(s5.join("../module.ekir"), "module relu {}\n").unwrap();
        std::fs::write(s5.join("k0.ll"), "; k0").unwrap();
        match find_in_dir(d, "relu", "cpu", 5) {
            Found::L2 { origin, text, .. } => {
                assert_eq!(origin, "relu/cpu/sample-5/candidate.l2");
                assert_eq!(text, "# file: kernels/k0.ll\n; k0\n# file: module.ekir\nmodule relu {}\n");
            }
            other => panic!("{other:?}"),
        }
        assert!(reason(4).contains("never generated"), "{}", reason(4));
    }

    #[test]
    fn sha256_of_a_known_text() {
        assert_eq!(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    }
}
