//! Why a kernel object cannot be loaded. Every variant names the offending thing (section,
//! symbol, relocation type, offset) so that the message alone tells the author of the kernel
//! what to change.

use super::reloc::Arch;
use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoadError {
    /// The bytes are not a well-formed ELF file: `what` says which structure is broken.
    Malformed { what: String },
    /// A well-formed ELF file of a kind the ABI excludes (32-bit, big-endian, not relocatable).
    NotSupported { what: String },
    /// An object for another machine.
    WrongArch { found: String, expected: Arch },
    /// A section the ABI forbids (writable, thread-local, constructors, too strictly aligned).
    Section { section: String, problem: String },
    /// An undefined symbol that is not in the runtime's import table.
    UnknownImport { symbol: String },
    /// A symbol the ABI forbids (thread-local, common, an export that is not a kernel entry).
    Symbol { symbol: String, problem: String },
    /// A relocation type outside the ABI's table for the architecture.
    UnknownRelocation { section: String, offset: u64, r_type: u32, name: String, arch: Arch },
    /// A relocation that cannot be applied as written (place out of bounds, bad symbol index,
    /// an import referenced without the GOT, a target outside the mapped sections).
    Relocation { section: String, offset: u64, name: String, problem: String },
    /// A relocation whose value does not fit its field.
    Overflow { section: String, offset: u64, name: String, symbol: String, value: i64, rule: &'static str },
    /// The mapped image would exceed the loader's limit.
    TooLarge { bytes: u64, limit: u64 },
    /// The operating system refused a mapping or protection change.
    System { op: &'static str, error: String },
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadError::Malformed { what } => write!(f, "the kernel object is not a valid ELF file: {what}"),
            LoadError::NotSupported { what } => write!(f, "the kernel object is {what}"),
            LoadError::WrongArch { found, expected } => write!(
                f,
                "the kernel object is for {found}, but this runtime runs {} kernels",
                expected.name()
            ),
            LoadError::Section { section, problem } => write!(f, "section `{section}`: {problem}"),
            LoadError::UnknownImport { symbol } => write!(
                f,
                "undefined symbol `{symbol}` is not in the runtime's import table ({})",
                super::IMPORTS.join(", ")
            ),
            LoadError::Symbol { symbol, problem } => write!(f, "symbol `{symbol}`: {problem}"),
            LoadError::UnknownRelocation { section, offset, name, r_type, arch } => write!(
                f,
                "relocation {name} (r_type {r_type}) at `{section}`+{offset:#x} is not supported: \
                 {} kernels may use only {}",
                arch.name(),
                arch.relocations().iter().map(|t| t.name).collect::<Vec<_>>().join(", ")
            ),
            LoadError::Relocation { section, offset, name, problem } => {
                write!(f, "relocation {name} at `{section}`+{offset:#x}: {problem}")
            }
            LoadError::Overflow { section, offset, name, symbol, value, rule } => write!(
                f,
                "relocation {name} at `{section}`+{offset:#x} against `{symbol}` does not fit: \
                 value {value:#x} is not {rule}"
            ),
            LoadError::TooLarge { bytes, limit } => {
                write!(f, "the kernel object's sections need {bytes} bytes, more than the limit of {limit}")
            }
            LoadError::System { op, error } => {
                write!(f, "cannot map the kernel object: {op} failed: {error}")
            }
        }
    }
}

impl std::error::Error for LoadError {}
