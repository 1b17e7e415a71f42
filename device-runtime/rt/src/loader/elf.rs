//! Reading a kernel object: ELF parsing, validation against the kernel ABI, and the layout of
//! its image (code, constants, GOT) — everything up to, but not including, memory mapping.
//!
//! What it must keep true: nothing from the file is trusted. Headers, section and symbol tables
//! are read through the `object` crate's bounds-checked readers; every section's alignment and
//! size, every symbol's section and value, and every relocation's symbol index and place
//! (`r_offset + 4 <= section size`) are checked here before [`Layout::link`] writes a byte, and
//! all layout arithmetic is overflow-checked. The rules are those of `docs/abi.md` (the same as
//! the CPU adapter's `check_object`): a relocatable ELF64 little-endian object for this
//! machine; allocated sections only read-only data or code, none writable, thread-local or
//! constructors; undefined symbols only from the import table, referenced only through GOT
//! relocations; exported symbols only `ekb_k_*` functions; relocation types only those of the
//! ABI's table. Relocation sections that patch unallocated sections (debug information) are
//! skipped: nothing of theirs is mapped.

use super::error::LoadError;
use super::imports;
use super::reloc::{self, Arch, RelocType, FIELD_BYTES};
use object::elf;
use object::read::elf::{FileHeader, Rela, SectionHeader, Sym};
use object::{LittleEndian as LE, SectionIndex, SymbolIndex};
use std::collections::HashMap;

type Elf = elf::FileHeader64<LE>;

/// Prefix of every exported kernel entry point.
pub const KERNEL_PREFIX: &str = "ekb_k_";

/// The largest image (code, constants and GOT) the loader maps: far below the ±2 GiB reach of
/// the small code model, so no in-object displacement can overflow for size reasons alone.
pub const MAX_IMAGE_BYTES: u64 = 256 << 20;

/// A symbol or GOT slot's target: an offset in the image, or an import's index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Target {
    Image(u64),
    Import(usize),
}

/// An allocated section, placed in the image.
#[derive(Debug, Clone)]
pub struct Placed<'a> {
    pub name: String,
    pub data: &'a [u8],
    /// Offset of the section in the image.
    pub offset: u64,
    pub exec: bool,
}

/// A relocation, checked and resolved to image offsets.
#[derive(Debug, Clone)]
pub struct Reloc {
    /// Index into [`Layout::sections`] of the section it patches.
    pub section: usize,
    /// Offset of the place within that section (for messages).
    pub offset: u64,
    pub ty: RelocType,
    pub target: Target,
    pub addend: i64,
    /// The GOT slot, for GOT relocations.
    pub got: Option<usize>,
    pub symbol: String,
}

/// The image of a validated object: where everything goes and what to patch.
#[derive(Debug, Clone)]
pub struct Layout<'a> {
    pub arch: Arch,
    pub sections: Vec<Placed<'a>>,
    /// Bytes `[0, code_len)` of the image are code (a whole number of pages).
    pub code_len: u64,
    pub got_offset: u64,
    /// The target of GOT slot `i`, which lives at `got_offset + 8 i`.
    pub got: Vec<Target>,
    /// Length of the image (a whole number of pages).
    pub len: u64,
    pub relocs: Vec<Reloc>,
    /// Kernel entry symbols (`ekb_k_*`) and their offsets in the image, in symbol-table order.
    pub kernels: Vec<(String, u64)>,
    /// Indices into [`imports::IMPORTS`] of the imports the object references, sorted.
    pub imports: Vec<usize>,
}

fn malformed(what: impl Into<String>) -> LoadError {
    LoadError::Malformed { what: what.into() }
}

fn lossy(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn align_up(x: u64, align: u64) -> Option<u64> {
    // `align` is a power of two.
    x.checked_add(align - 1).map(|v| v & !(align - 1))
}

/// What a symbol-table entry resolves to.
#[derive(Debug, Clone)]
enum Resolved {
    /// The null symbol, or a symbol with nothing a relocation may use (file names, absolute
    /// values, symbols of unmapped sections): the reason, for the error if one is used.
    Unusable(&'static str),
    Import(usize),
    /// Defined in mapped section `section` (an index into `Layout::sections`) at `value`.
    Defined {
        section: usize,
        value: u64,
    },
}

/// Parses and validates `bytes` as a kernel object for `arch` and lays out its image for
/// pages of `page` bytes.
pub fn parse(bytes: &[u8], arch: Arch, page: u64) -> Result<Layout<'_>, LoadError> {
    if bytes.len() < 4 || bytes[..4] != elf::ELFMAG {
        let start = &bytes[..bytes.len().min(4)];
        return Err(malformed(format!("it starts with {start:02x?}, not the ELF magic 7f 45 4c 46")));
    }
    if bytes.len() >= 6 && bytes[4] != elf::ELFCLASS64 {
        return Err(LoadError::NotSupported { what: "a 32-bit ELF file; kernels are ELF64".into() });
    }
    if bytes.len() >= 6 && bytes[5] != elf::ELFDATA2LSB {
        return Err(LoadError::NotSupported {
            what: "a big-endian ELF file; kernels are little-endian".into(),
        });
    }
    let header = Elf::parse(bytes).map_err(|e| malformed(format!("ELF header: {e}")))?;
    let endian = header.endian().map_err(|e| malformed(format!("ELF header: {e}")))?;
    let e_type = header.e_type(endian);
    if e_type != elf::ET_REL {
        let kind = match e_type {
            elf::ET_EXEC => "an executable (ET_EXEC)".to_string(),
            elf::ET_DYN => "a shared object (ET_DYN)".to_string(),
            t => format!("an ELF file of type {t}"),
        };
        return Err(LoadError::NotSupported { what: format!("{kind}, not a relocatable object (ET_REL)") });
    }
    let machine = header.e_machine(endian);
    if machine != arch.machine() {
        let found = match Arch::of_machine(machine) {
            Some(a) => a.name().to_string(),
            None => format!("machine {machine}"),
        };
        return Err(LoadError::WrongArch { found, expected: arch });
    }
    let table = header.sections(endian, bytes).map_err(|e| malformed(format!("section table: {e}")))?;

    // Section names and the mapped sections.
    let mut names = Vec::with_capacity(table.len());
    for (i, sh) in table.enumerate() {
        let name = table
            .section_name(endian, sh)
            .map_err(|e| malformed(format!("the name of section {}: {e}", i.0)))?;
        names.push(lossy(name));
    }
    let mut sections: Vec<Placed<'_>> = Vec::new();
    // ELF section index -> index into `sections`.
    let mut mapped: HashMap<usize, usize> = HashMap::new();
    let mut aligns = Vec::new();
    let mut symtabs = Vec::new();
    for (i, sh) in table.enumerate() {
        let name = &names[i.0];
        let flags = sh.sh_flags(endian);
        let sh_type = sh.sh_type(endian);
        let section_err = |problem: String| LoadError::Section { section: name.clone(), problem };
        if sh_type == elf::SHT_SYMTAB {
            symtabs.push(i);
        }
        let is_ctor = matches!(sh_type, elf::SHT_INIT_ARRAY | elf::SHT_FINI_ARRAY | elf::SHT_PREINIT_ARRAY)
            || matches!(
                name.as_str(),
                ".init_array" | ".fini_array" | ".preinit_array" | ".ctors" | ".dtors"
            );
        if is_ctor {
            return Err(section_err(
                "constructor or destructor sections are not allowed (nothing runs at load time)".into(),
            ));
        }
        if flags & u64::from(elf::SHF_ALLOC) == 0 {
            continue;
        }
        if flags & u64::from(elf::SHF_TLS) != 0 {
            return Err(section_err("thread-local sections are not allowed".into()));
        }
        if flags & u64::from(elf::SHF_WRITE) != 0 {
            return Err(section_err(
                "writable sections are not allowed (kernels have no writable globals)".into(),
            ));
        }
        if sh_type == elf::SHT_NOTE {
            // Allocated notes (e.g. `.note.gnu.property`) describe the object; nothing runs or
            // reads them, so they are not mapped.
            continue;
        }
        if sh_type != elf::SHT_PROGBITS {
            return Err(section_err(format!(
                "allocated section of type {sh_type:#x}; only code and read-only data (SHT_PROGBITS) are mapped"
            )));
        }
        let align = sh.sh_addralign(endian).max(1);
        if !align.is_power_of_two() || align > page {
            return Err(section_err(format!(
                "alignment {align} is not a power of two of at most the page size ({page})"
            )));
        }
        let data = sh.data(endian, bytes).map_err(|e| {
            malformed(format!(
                "section `{name}` (offset {:#x}, size {:#x}): {e}",
                sh.sh_offset(endian),
                sh.sh_size(endian)
            ))
        })?;
        let exec = flags & u64::from(elf::SHF_EXECINSTR) != 0;
        mapped.insert(i.0, sections.len());
        aligns.push(align);
        sections.push(Placed { name: name.clone(), data, offset: 0, exec });
    }
    if symtabs.len() > 1 {
        return Err(malformed(format!("{} symbol tables; a relocatable object has one", symtabs.len())));
    }

    // Layout: code, then (from the next page) constants, then the GOT.
    let too_large = |bytes: u64| LoadError::TooLarge { bytes, limit: MAX_IMAGE_BYTES };
    let mut at = 0u64;
    for pass_exec in [true, false] {
        if !pass_exec {
            at = align_up(at, page).ok_or_else(|| too_large(u64::MAX))?;
        }
        for (s, align) in sections.iter_mut().zip(&aligns) {
            if s.exec != pass_exec {
                continue;
            }
            s.offset = align_up(at, *align).ok_or_else(|| too_large(u64::MAX))?;
            at = s.offset.checked_add(s.data.len() as u64).ok_or_else(|| too_large(u64::MAX))?;
            if at > MAX_IMAGE_BYTES {
                return Err(too_large(at));
            }
        }
    }
    let code_len = sections
        .iter()
        .filter(|s| s.exec)
        .map(|s| s.offset + s.data.len() as u64)
        .max()
        .map_or(Some(0), |end| align_up(end, page))
        .ok_or_else(|| too_large(u64::MAX))?;
    let got_offset = align_up(at.max(code_len), 8).ok_or_else(|| too_large(u64::MAX))?;

    // Symbols.
    let symbols = match symtabs.first() {
        Some(&i) => {
            let sh = table.section(i).map_err(|e| malformed(format!("symbol table: {e}")))?;
            object::read::elf::SymbolTable::parse(endian, bytes, &table, i, sh)
                .map_err(|e| malformed(format!("symbol table: {e}")))?
        }
        None => Default::default(),
    };
    let mut resolved = Vec::with_capacity(symbols.len());
    let mut kernels = Vec::new();
    let mut used_imports = std::collections::BTreeSet::new();
    for (index, sym) in symbols.enumerate() {
        let raw_name = symbols
            .symbol_name(endian, sym)
            .map_err(|e| malformed(format!("the name of symbol {}: {e}", index.0)))?;
        let name = lossy(raw_name);
        let sym_err = |problem: &str| LoadError::Symbol { symbol: name.clone(), problem: problem.into() };
        let shndx = sym.st_shndx(endian);
        let global = sym.st_bind() != elf::STB_LOCAL;
        if index.0 == 0 {
            resolved.push(Resolved::Unusable("the null symbol"));
            continue;
        }
        if sym.st_type() == elf::STT_TLS {
            return Err(sym_err("thread-local symbols are not allowed"));
        }
        if sym.st_type() == elf::STT_GNU_IFUNC {
            return Err(sym_err(
                "indirect functions (STT_GNU_IFUNC) are not allowed (nothing runs at load time)",
            ));
        }
        if shndx == elf::SHN_COMMON {
            return Err(sym_err("common (writable) symbols are not allowed"));
        }
        if shndx == elf::SHN_UNDEF {
            if raw_name.is_empty() {
                resolved.push(Resolved::Unusable("an undefined symbol without a name"));
                continue;
            }
            let import = imports::index_of(raw_name)
                .ok_or_else(|| LoadError::UnknownImport { symbol: name.clone() })?;
            used_imports.insert(import);
            resolved.push(Resolved::Import(import));
            continue;
        }
        let in_section = if shndx >= elf::SHN_LORESERVE {
            if shndx != elf::SHN_ABS {
                return Err(sym_err("reserved or extended section indices are not supported"));
            }
            None
        } else {
            mapped.get(&usize::from(shndx)).copied()
        };
        let value = sym.st_value(endian);
        if let Some(s) = in_section {
            if value > sections[s].data.len() as u64 {
                return Err(sym_err(&format!(
                    "value {value:#x} lies outside its section `{}` ({} bytes)",
                    sections[s].name,
                    sections[s].data.len()
                )));
            }
        }
        if global {
            let is_entry = name.starts_with(KERNEL_PREFIX) && sym.st_type() == elf::STT_FUNC;
            match in_section {
                Some(s) if is_entry && sections[s].exec && value < sections[s].data.len() as u64 => {
                    if kernels.iter().any(|(k, _)| *k == name) {
                        return Err(sym_err("kernel entry point defined twice"));
                    }
                    kernels.push((name.clone(), sections[s].offset + value));
                }
                _ if is_entry => return Err(sym_err("kernel entry point is not inside a code section")),
                _ => {
                    return Err(sym_err(&format!(
                        "exported symbols must be kernel entry points (`{KERNEL_PREFIX}*` functions)"
                    )))
                }
            }
        }
        resolved.push(match in_section {
            Some(section) => Resolved::Defined { section, value },
            None if shndx == elf::SHN_ABS => Resolved::Unusable("an absolute symbol"),
            None => Resolved::Unusable("a symbol of a section that is not mapped"),
        });
    }

    // Relocations.
    let mut relocs = Vec::new();
    let mut got: Vec<Target> = Vec::new();
    let mut got_slots: HashMap<Target, usize> = HashMap::new();
    for (i, sh) in table.enumerate() {
        let sh_type = sh.sh_type(endian);
        if sh_type != elf::SHT_RELA && sh_type != elf::SHT_REL {
            continue;
        }
        let name = &names[i.0];
        let target_index = sh.sh_info(endian) as usize;
        let Some(&target) = mapped.get(&target_index) else {
            if target_index >= table.len() {
                return Err(malformed(format!(
                    "relocation section `{name}` patches section {target_index}, which does not exist"
                )));
            }
            // Patches a section that is not mapped (debug information): nothing to apply.
            continue;
        };
        if sh_type == elf::SHT_REL {
            return Err(LoadError::Section {
                section: name.clone(),
                problem: "relocations without addends (SHT_REL) are not supported; kernels use SHT_RELA"
                    .into(),
            });
        }
        if Some(&sh.link(endian)) != symtabs.first() {
            return Err(malformed(format!(
                "relocation section `{name}` does not use the object's symbol table"
            )));
        }
        let (entries, _) = sh
            .rela(endian, bytes)
            .map_err(|e| malformed(format!("relocation section `{name}`: {e}")))?
            .unwrap_or((&[], SectionIndex(0)));
        let patched = &sections[target];
        for r in entries {
            let offset = r.r_offset(endian);
            let code = r.r_type(endian, false);
            let ty = arch.relocation(code).ok_or_else(|| LoadError::UnknownRelocation {
                section: patched.name.clone(),
                offset,
                r_type: code,
                name: reloc::type_name(arch, code),
                arch,
            })?;
            let reloc_err = |problem: String| LoadError::Relocation {
                section: patched.name.clone(),
                offset,
                name: ty.name.to_string(),
                problem,
            };
            let fits =
                offset.checked_add(FIELD_BYTES as u64).is_some_and(|end| end <= patched.data.len() as u64);
            if !fits {
                return Err(reloc_err(format!(
                    "the place lies outside the section ({} bytes)",
                    patched.data.len()
                )));
            }
            let sym_index = r.r_sym(endian, false) as usize;
            let sym = symbols.symbol(SymbolIndex(sym_index)).map_err(|_| {
                reloc_err(format!("symbol index {sym_index} is out of range ({} symbols)", symbols.len()))
            })?;
            let symbol = lossy(symbols.symbol_name(endian, sym).unwrap_or(b"?"));
            let addend = r.r_addend(endian);
            let target_of = match resolved[sym_index] {
                Resolved::Unusable(why) => {
                    return Err(reloc_err(format!("its symbol `{symbol}` (index {sym_index}) is {why}")))
                }
                Resolved::Import(i) => {
                    if !ty.via_got {
                        return Err(reloc_err(format!(
                            "import `{symbol}` is referenced directly, not through the GOT"
                        )));
                    }
                    Target::Import(i)
                }
                Resolved::Defined { section, value } => Target::Image(sections[section].offset + value),
            };
            if ty.via_got && arch == Arch::Aarch64 && addend != 0 {
                return Err(reloc_err(format!("a GOT relocation with addend {addend} (the ABI has none)")));
            }
            let slot = if ty.via_got {
                Some(*got_slots.entry(target_of).or_insert_with(|| {
                    got.push(target_of);
                    got.len() - 1
                }))
            } else {
                None
            };
            relocs.push(Reloc { section: target, offset, ty, target: target_of, addend, got: slot, symbol });
        }
    }
    let end = (got.len() as u64).checked_mul(8).and_then(|n| n.checked_add(got_offset));
    let len = end.and_then(|e| align_up(e, page)).ok_or_else(|| too_large(u64::MAX))?;
    if len > MAX_IMAGE_BYTES {
        return Err(too_large(len));
    }
    Ok(Layout {
        arch,
        sections,
        code_len,
        got_offset,
        got,
        len,
        relocs,
        kernels,
        imports: used_imports.into_iter().collect(),
    })
}

impl Layout<'_> {
    /// Writes the image into `image` (at least [`Layout::len`] bytes, zeroed, to be mapped at
    /// address `base`): section contents, GOT slots (imports resolved by `import_address`),
    /// then every relocation.
    pub fn link(
        &self,
        image: &mut [u8],
        base: u64,
        import_address: impl Fn(usize) -> u64,
    ) -> Result<(), LoadError> {
        assert!(image.len() as u64 >= self.len, "the image is smaller than its layout");
        for s in &self.sections {
            // In bounds: the layout placed every section inside `len`.
            let at = s.offset as usize;
            image[at..at + s.data.len()].copy_from_slice(s.data);
        }
        let address = |t: Target| match t {
            Target::Image(off) => base.wrapping_add(off),
            Target::Import(i) => import_address(i),
        };
        for (i, &t) in self.got.iter().enumerate() {
            let at = self.got_offset as usize + 8 * i;
            image[at..at + 8].copy_from_slice(&address(t).to_le_bytes());
        }
        for r in &self.relocs {
            let section = &self.sections[r.section];
            let at = (section.offset + r.offset) as usize;
            let p = base.wrapping_add(section.offset + r.offset);
            let x = match r.got {
                // Slots exist for every GOT relocation (made in `parse`).
                Some(slot) => {
                    base.wrapping_add(self.got_offset + 8 * slot as u64).wrapping_add_signed(r.addend)
                }
                None => address(r.target).wrapping_add_signed(r.addend),
            };
            let place: &mut [u8; FIELD_BYTES] =
                (&mut image[at..at + FIELD_BYTES]).try_into().expect("a 4-byte slice");
            reloc::apply(r.ty.field, place, p, x).map_err(|o| LoadError::Overflow {
                section: section.name.clone(),
                offset: r.offset,
                name: r.ty.name.to_string(),
                symbol: r.symbol.clone(),
                value: o.value,
                rule: o.rule,
            })?;
        }
        Ok(())
    }
}
