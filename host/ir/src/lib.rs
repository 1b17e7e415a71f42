//! `ekb-ir`: the unified IR of EdgeKernelBench.
//!
//! - [`l0`]: the graph level (operators on whole tensors): text form, shape inference,
//!   verifier, and the f64 reference interpreter (the correctness oracle).
//! - [`l1`]: the loop level (kernels of loop nests over buffers, and the plan that runs them):
//!   text form, verifier (types, bounds, scopes, allocation legality), peak memory, and a
//!   bounds-checked interpreter.
//! - [`target`]: target profiles (the limits the verifier checks against).
//! - [`diag`], [`lex`], [`types`], [`tensor`]: shared by both levels.

pub mod diag;
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
/// its first keyword after comments and blank lines.
pub fn level(text: &str) -> Option<&'static str> {
    match first_keyword(text) {
        Some("graph") => Some("l0"),
        Some("module") => Some("l1"),
        _ => None,
    }
}

/// The first word of a text after comments (`#` to the end of the line) and blank lines.
pub fn first_keyword(text: &str) -> Option<&str> {
    text.lines()
        .map(|l| l.split('#').next().unwrap_or("").trim())
        .find(|l| !l.is_empty())
        .and_then(|l| l.split(|c: char| !c.is_ascii_alphanumeric() && c != '_').next())
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_level_is_the_first_keyword_after_comments_and_blank_lines() {
        assert_eq!(super::level("# a comment\n\n  graph g(x: f32[1]) -> (y: f32[1]) {"), Some("l0"));
        assert_eq!(super::level("module m {\n}"), Some("l1"));
        assert_eq!(super::level("# only a comment\n"), None);
        assert_eq!(super::level("graphs g"), None);
        assert_eq!(super::first_keyword("# c\n\n module_x {"), Some("module_x"));
    }
}
