//! Reading IR files: which level a file is, and its diagnostics rendered for the terminal.

use ekb_ir::{l0, l1, Diagnostic, SourceFile};
use std::path::Path;

/// A parsed input file of either level.
pub enum Program {
    Graph(l0::Graph),
    Module(l1::Module),
}

/// Reads and parses a file, telling the level from its first keyword (`graph` or `module`).
/// L0 graphs are also checked (types inferred); L1 modules are only parsed (the caller verifies
/// against its target).
pub fn load(path: &Path) -> Result<(SourceFile, Program), Vec<Diagnostic>> {
    let src = SourceFile::read(path).map_err(|d| vec![d])?;
    let program = match level(&src.text) {
        Some("l1") => Program::Module(l1::parse::parse(&src).map_err(|d| vec![d])?),
        Some("l0") => Program::Graph(l0::check::load(&src)?),
        _ => {
            let found = first_keyword(&src.text).map_or("nothing".to_string(), |w| format!("`{w}`"));
            return Err(vec![src.locate(
                Diagnostic::error(format!("cannot tell the IR level of this file: found {found}"))
                    .with_expected("`graph NAME(...)` (an L0 graph) or `module NAME {` (an L1 loop program)"),
            )]);
        }
    };
    Ok((src, program))
}

/// The IR level a text is written at (`l0` or `l1`), from its first keyword.
pub fn level(text: &str) -> Option<&'static str> {
    match first_keyword(text) {
        Some("graph") => Some("l0"),
        Some("module") => Some("l1"),
        _ => None,
    }
}

fn first_keyword(text: &str) -> Option<&str> {
    text.lines()
        .map(|l| l.split('#').next().unwrap_or("").trim())
        .find(|l| !l.is_empty())
        .and_then(|l| l.split(|c: char| !c.is_ascii_alphanumeric() && c != '_').next())
}

/// Renders diagnostics for the terminal, one after another.
pub fn render(diags: &[Diagnostic]) -> String {
    diags.iter().map(|d| d.to_string()).collect::<Vec<_>>().join("\n")
}

/// Loads a target profile, as a CLI error string on failure.
pub fn target(name: &str) -> Result<ekb_ir::TargetProfile, String> {
    ekb_ir::TargetProfile::load(name).map_err(|e| format!("error: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_keyword_skips_comments_and_blank_lines() {
        assert_eq!(first_keyword("# a comment\n\n  graph g(x: f32[1]) -> (y: f32[1]) {"), Some("graph"));
        assert_eq!(first_keyword("module m {\n}"), Some("module"));
        assert_eq!(first_keyword("# only a comment\n"), None);
    }
}
