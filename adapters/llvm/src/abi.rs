//! The kernel ABI shared by every loader of compiled CPU kernels (the host loader in this crate
//! and the device runtime's ELF loader): exported symbol names, the import table, and a checker
//! that reads an ELF relocatable object and rejects anything a freestanding loader cannot run.
//!
//! What this module must keep true: [`IMPORTS`] is the complete list of symbols an object may
//! leave undefined, and [`check_object`] accepts only objects made of read-only code and
//! constants (no writable or thread-local data, no constructors) whose relocation types are all
//! listed in `docs/abi.md`. Every object [`crate::compile`] produces has passed it.

use ekb_ir::Diagnostic;
use object::elf;
use object::{
    Object, ObjectSection, ObjectSymbol, RelocationFlags, RelocationTarget, SectionFlags, SymbolKind,
};
use std::collections::BTreeSet;

/// Prefix of every exported kernel entry point: kernel `k` is `ekb_k_k`.
pub const KERNEL_PREFIX: &str = "ekb_k_";

/// The parallel-launch entry point the runtime provides (first entry of [`IMPORTS`]).
pub const PARALLEL_FOR: &str = "ekb_parallel_for";

/// Every symbol a kernel object may reference without defining it. The runtime provides all of
/// them; `docs/abi.md` gives each one's C prototype and semantics. `memset`, `memcpy` and
/// `memmove` come from LLVM recognising fill and copy loops; `sqrtf` to `ceilf` are the library
/// forms of intrinsics a CPU may lack an instruction for (`floorf` on x86-64 without SSE4.1);
/// `exp2f` and `ldexpf` are never called by emitted code directly: LLVM rewrites `powf(2, x)` to
/// `exp2f(x)`, and `powf(2, f32(i))` to `ldexpf(1, i)`. `sinf` and `cosf` come last (added after
/// the others; positions never change).
pub const IMPORTS: &[&str] = &[
    PARALLEL_FOR,
    "memset",
    "memcpy",
    "memmove",
    "expf",
    "logf",
    "powf",
    "tanhf",
    "erff",
    "sqrtf",
    "fabsf",
    "floorf",
    "ceilf",
    "exp2f",
    "ldexpf",
    "sinf",
    "cosf",
];

/// The exported symbol of kernel `name`.
pub fn kernel_symbol(name: &str) -> String {
    format!("{KERNEL_PREFIX}{name}")
}

/// Whether `name` may name a kernel: a C identifier (`[A-Za-z_][A-Za-z0-9_]*`), so that its
/// symbol can be written in C and in LLVM IR without quoting.
pub fn is_valid_kernel_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The two CPU architectures the ABI is defined for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Arch {
    X86_64,
    Aarch64,
}

impl Arch {
    /// The architecture of an LLVM target triple, if the ABI covers it.
    pub fn of_triple(triple: &str) -> Option<Arch> {
        match triple.split('-').next()? {
            "x86_64" | "amd64" => Some(Arch::X86_64),
            "aarch64" | "arm64" => Some(Arch::Aarch64),
            _ => None,
        }
    }

    /// The architecture this program runs on, if the ABI covers it.
    pub fn host() -> Option<Arch> {
        Arch::of_triple(std::env::consts::ARCH)
    }

    pub fn name(self) -> &'static str {
        match self {
            Arch::X86_64 => "x86_64",
            Arch::Aarch64 => "aarch64",
        }
    }

    /// The relocation types a loader must support for this architecture.
    pub fn relocations(self) -> &'static [RelocType] {
        match self {
            Arch::X86_64 => X86_64_RELOCATIONS,
            Arch::Aarch64 => AARCH64_RELOCATIONS,
        }
    }
}

/// A relocation type of kernel objects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RelocType {
    /// The ELF `r_type`.
    pub code: u32,
    pub name: &'static str,
    /// Whether it addresses the symbol's GOT slot (the only way an import may be referenced).
    pub via_got: bool,
}

const fn rel(code: u32, name: &'static str, via_got: bool) -> RelocType {
    RelocType { code, name, via_got }
}

/// x86_64: PC-relative references to code and constants, GOT slots for imports, and calls
/// (`PLT32`) between functions of the object.
const X86_64_RELOCATIONS: &[RelocType] = &[
    rel(elf::R_X86_64_PC32, "R_X86_64_PC32", false),
    rel(elf::R_X86_64_PLT32, "R_X86_64_PLT32", false),
    rel(elf::R_X86_64_GOTPCREL, "R_X86_64_GOTPCREL", true),
    rel(elf::R_X86_64_GOTPCRELX, "R_X86_64_GOTPCRELX", true),
    rel(elf::R_X86_64_REX_GOTPCRELX, "R_X86_64_REX_GOTPCRELX", true),
];

/// aarch64: ADRP with ADD/LDR/STR for code and constants, GOT pages for imports, and branches
/// between functions of the object.
const AARCH64_RELOCATIONS: &[RelocType] = &[
    rel(elf::R_AARCH64_PREL32, "R_AARCH64_PREL32", false),
    rel(elf::R_AARCH64_ADR_PREL_PG_HI21, "R_AARCH64_ADR_PREL_PG_HI21", false),
    rel(elf::R_AARCH64_ADD_ABS_LO12_NC, "R_AARCH64_ADD_ABS_LO12_NC", false),
    rel(elf::R_AARCH64_LDST8_ABS_LO12_NC, "R_AARCH64_LDST8_ABS_LO12_NC", false),
    rel(elf::R_AARCH64_LDST16_ABS_LO12_NC, "R_AARCH64_LDST16_ABS_LO12_NC", false),
    rel(elf::R_AARCH64_LDST32_ABS_LO12_NC, "R_AARCH64_LDST32_ABS_LO12_NC", false),
    rel(elf::R_AARCH64_LDST64_ABS_LO12_NC, "R_AARCH64_LDST64_ABS_LO12_NC", false),
    rel(elf::R_AARCH64_LDST128_ABS_LO12_NC, "R_AARCH64_LDST128_ABS_LO12_NC", false),
    rel(elf::R_AARCH64_JUMP26, "R_AARCH64_JUMP26", false),
    rel(elf::R_AARCH64_CALL26, "R_AARCH64_CALL26", false),
    rel(elf::R_AARCH64_ADR_GOT_PAGE, "R_AARCH64_ADR_GOT_PAGE", true),
    rel(elf::R_AARCH64_LD64_GOT_LO12_NC, "R_AARCH64_LD64_GOT_LO12_NC", true),
];

/// What a kernel object contains, as a loader sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectInfo {
    pub arch: Arch,
    /// Kernel names (exported `ekb_k_<name>` symbols, prefix removed), sorted.
    pub kernels: Vec<String>,
    /// Undefined symbols, sorted; all are in [`IMPORTS`].
    pub imports: Vec<String>,
    /// Names of the relocation types the object uses, sorted.
    pub relocations: Vec<String>,
    /// Names of the sections a loader must map (allocated, non-empty), in file order.
    pub sections: Vec<String>,
}

/// Reads an ELF relocatable object and checks it against the kernel ABI: architecture (that of
/// `triple`), relocatable, undefined symbols only from [`IMPORTS`], exported symbols only
/// `ekb_k_*`, no writable, thread-local or constructor sections, no common or TLS symbols, only
/// the relocation types of [`Arch::relocations`], and imports referenced only through GOT
/// relocations (so a loader never needs a stub to reach one). The error names every violation.
pub fn check_object(bytes: &[u8], triple: &str) -> Result<ObjectInfo, Diagnostic> {
    let want = Arch::of_triple(triple).ok_or_else(|| {
        Diagnostic::error(format!("target triple `{triple}` has no kernel ABI"))
            .with_expected("an x86_64 or aarch64 triple")
    })?;
    let file = object::File::parse(bytes)
        .map_err(|e| Diagnostic::error(format!("the kernel object is not a readable ELF file: {e}")))?;
    let arch = match file.architecture() {
        object::Architecture::X86_64 => Arch::X86_64,
        object::Architecture::Aarch64 => Arch::Aarch64,
        other => {
            return Err(Diagnostic::error(format!("the kernel object is for {other:?}, not {}", want.name())))
        }
    };
    if arch != want || file.format() != object::BinaryFormat::Elf {
        return Err(Diagnostic::error(format!(
            "the kernel object is for {}, but the target triple `{triple}` is {}",
            arch.name(),
            want.name()
        )));
    }
    if file.kind() != object::ObjectKind::Relocatable {
        return Err(Diagnostic::error(format!(
            "the kernel object is a {:?} file, not a relocatable object",
            file.kind()
        ))
        .with_hint("compile with `-c`; the loader links it itself"));
    }

    let mut problems = Vec::new();
    let mut kernels = Vec::new();
    let mut imports = BTreeSet::new();
    for sym in file.symbols() {
        let Ok(name) = sym.name() else { continue };
        if sym.kind() == SymbolKind::Tls {
            problems.push(format!("thread-local symbol `{name}`"));
        }
        if sym.is_common() {
            problems.push(format!("common (writable) symbol `{name}`"));
        } else if sym.is_undefined() {
            if name.is_empty() {
                continue;
            }
            if IMPORTS.contains(&name) {
                imports.insert(name.to_string());
            } else {
                problems.push(format!("undefined symbol `{name}` is not in the import table"));
            }
        } else if sym.is_global() {
            match name.strip_prefix(KERNEL_PREFIX) {
                Some(k) if sym.kind() == SymbolKind::Text => kernels.push(k.to_string()),
                _ => problems
                    .push(format!("exported symbol `{name}` is not a kernel entry (`{KERNEL_PREFIX}*`)")),
            }
        }
    }

    let mut relocations = BTreeSet::new();
    let mut sections = Vec::new();
    for sec in file.sections() {
        let name = sec.name().unwrap_or("?");
        let SectionFlags::Elf { sh_flags } = sec.flags() else { continue };
        let flags = sh_flags as u32;
        if matches!(name, ".init_array" | ".fini_array" | ".preinit_array" | ".ctors" | ".dtors") {
            problems.push(format!("constructor or destructor section `{name}`"));
        } else if flags & elf::SHF_TLS != 0 {
            problems.push(format!("thread-local section `{name}`"));
        } else if flags & elf::SHF_ALLOC != 0 && flags & elf::SHF_WRITE != 0 {
            problems.push(format!("writable section `{name}` (kernels may not have writable globals)"));
        } else if flags & elf::SHF_ALLOC != 0 && sec.size() > 0 {
            sections.push(name.to_string());
        }
        for (_, r) in sec.relocations() {
            let RelocationFlags::Elf { r_type } = r.flags() else { continue };
            let Some(t) = arch.relocations().iter().find(|t| t.code == r_type) else {
                problems.push(format!("relocation type {r_type} in `{name}` is not supported by loaders"));
                continue;
            };
            relocations.insert(t.name.to_string());
            let target = match r.target() {
                RelocationTarget::Symbol(i) => file.symbol_by_index(i).ok(),
                _ => None,
            };
            if let Some(sym) = target.filter(|s| s.is_undefined() && !t.via_got) {
                problems.push(format!(
                    "`{}` is referenced directly ({}), not through the GOT",
                    sym.name().unwrap_or("?"),
                    t.name
                ));
            }
        }
    }

    if !problems.is_empty() {
        let mut seen = BTreeSet::new();
        problems.retain(|p| seen.insert(p.clone()));
        let n = problems.len();
        let mut d = Diagnostic::error(format!(
            "the kernel object breaks the kernel ABI ({n} problem{})",
            if n == 1 { "" } else { "s" }
        ))
        .with_hint(
            "kernels are freestanding: no libc beyond the import table, no globals that are written, \
             and imports declared `nonlazybind` so that they are called through the GOT",
        );
        for p in problems {
            d = d.with_note(p);
        }
        d = d.with_note(format!("the import table: {}", IMPORTS.join(", ")));
        return Err(d);
    }
    kernels.sort();
    Ok(ObjectInfo {
        arch,
        kernels,
        imports: imports.into_iter().collect(),
        relocations: relocations.into_iter().collect(),
        sections,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_names_are_c_identifiers() {
        for ok in ["k0", "_x", "relu_add", "A9"] {
            assert!(is_valid_kernel_name(ok), "{ok}");
        }
        for bad in ["", "0k", "a.b", "a-b", "é", "a b"] {
            assert!(!is_valid_kernel_name(bad), "{bad}");
        }
        assert_eq!(kernel_symbol("k0"), "ekb_k_k0");
    }

    #[test]
    fn triples_map_to_architectures() {
        assert_eq!(Arch::of_triple("x86_64-unknown-linux-gnu"), Some(Arch::X86_64));
        assert_eq!(Arch::of_triple("aarch64-linux-gnu"), Some(Arch::Aarch64));
        assert_eq!(Arch::of_triple("riscv64-unknown-linux-gnu"), None);
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        let e = check_object(b"not an elf file", "x86_64-unknown-linux-gnu").unwrap_err();
        assert!(e.message.contains("not a readable ELF"), "{e}");
        let e = check_object(b"", "sparc-sun-solaris").unwrap_err();
        assert!(e.message.contains("no kernel ABI"), "{e}");
    }
}
