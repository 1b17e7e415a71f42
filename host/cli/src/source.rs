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
    let program = match ekb_ir::level_of(&src).map_err(|d| vec![d])? {
        "l1" => Program::Module(l1::parse::parse(&src).map_err(|d| vec![d])?),
        _ => Program::Graph(l0::check::load(&src)?),
    };
    Ok((src, program))
}

/// Renders diagnostics for the terminal, one after another.
pub fn render(diags: &[Diagnostic]) -> String {
    diags.iter().map(|d| d.to_string()).collect::<Vec<_>>().join("\n")
}

/// Loads a target profile, as a CLI error string on failure.
pub fn target(name: &str) -> Result<ekb_ir::TargetProfile, String> {
    ekb_ir::TargetProfile::load(name).map_err(|e| format!("error: {e}"))
}

/// The architecture of a target's CPU, which decides the runtime; a CLI error string for a
/// triple no runtime supports.
pub fn arch(target: &ekb_ir::TargetProfile) -> Result<ekb_llvm::Arch, String> {
    ekb_llvm::Arch::of_triple(&target.cpu.triple).ok_or_else(|| {
        format!(
            "error: target `{}` has triple `{}`, which no runtime supports",
            target.name, target.cpu.triple
        )
    })
}
