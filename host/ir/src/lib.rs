//! `ekb-ir`: the unified IR of EdgeKernelBench.
//!
//! - [`l0`]: the graph level (operators on whole tensors): text form, shape inference,
//!   verifier, and the f64 reference interpreter (the correctness oracle).
//! - [`l1`]: the loop level (kernels of loop nests over buffers, and the plan that runs them):
//!   text form, verifier (types, bounds, scopes, allocation legality), peak memory, and a
//!   bounds-checked interpreter.
//! - [`target`]: target profiles (the limits the verifier checks against).
//! - [`diag`], [`lex`], [`types`], [`tensor`]: shared by both levels.
//! - [`filetest`]: the format of the workspace's file tests (`tests/files/*.test`).

pub mod diag;
pub mod filetest;
pub mod l0;
pub mod l1;
pub mod lex;
pub mod target;
pub mod tensor;
pub mod types;

pub use diag::{Diagnostic, SourceFile, Span};
pub use target::TargetProfile;
pub use types::{DType, TensorType};

/// The IR level a text is written at, `l0` (`graph NAME(...)`) or `l1` (`module NAME {`), from
/// its first keyword after a byte-order mark, comments and blank lines.
pub fn level(text: &str) -> Option<&'static str> {
    match first_keyword(text) {
        Some((_, "graph")) => Some("l0"),
        Some((_, "module")) => Some("l1"),
        _ => None,
    }
}

/// The level of a source text, or a diagnostic at its first token saying what was found, what
/// is legal, and the keyword it was closest to.
pub fn level_of(src: &SourceFile) -> Result<&'static str, Diagnostic> {
    if let Some(level) = level(&src.text) {
        return Ok(level);
    }
    let expected = "`graph NAME(...)` (an L0 graph) or `module NAME {` (an L1 loop program)";
    let Some((at, word)) = first_keyword(&src.text) else {
        return Err(src.locate(
            Diagnostic::error(
                "cannot tell the IR level of this file: it holds no IR, only blank lines and comments",
            )
            .with_expected(expected),
        ));
    };
    let mut d = Diagnostic::error(format!("cannot tell the IR level of this file: found `{word}`"))
        .at(Span::new(at, at + word.len()))
        .with_expected(expected);
    if let Some(hint) = diag::did_you_mean(word, ["graph", "module"]) {
        d = d.with_hint(hint);
    }
    Err(src.locate(d))
}

/// The first token of a text after a byte-order mark, comments (`#` to the end of the line) and
/// blank lines, with its byte offset: a word of letters, digits and `_`, or else the one
/// character there.
pub fn first_keyword(text: &str) -> Option<(usize, &str)> {
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let code = line.split('#').next().unwrap_or("");
        let body = code.trim_start_matches(|c: char| c.is_whitespace() || c == '\u{feff}');
        if let Some(first) = body.chars().next() {
            let at = offset + code.len() - body.len();
            let len = body.find(|c: char| !c.is_ascii_alphanumeric() && c != '_').unwrap_or(body.len());
            let len = if len == 0 { first.len_utf8() } else { len };
            return Some((at, &text[at..at + len]));
        }
        offset += line.len();
    }
    None
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_level_is_the_first_keyword_after_comments_and_blank_lines() {
        assert_eq!(super::level("# a comment\n\n  graph g(x: f32[1]) -> (y: f32[1]) {"), Some("l0"));
        assert_eq!(super::level("module m {\n}"), Some("l1"));
        assert_eq!(super::level("# only a comment\n"), None);
        assert_eq!(super::level("graphs g"), None);
        assert_eq!(super::first_keyword("# c\n\n module_x {"), Some((6, "module_x")));
        assert_eq!(super::first_keyword("\n  {graph"), Some((3, "{")));
    }
}
