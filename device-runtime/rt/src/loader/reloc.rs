//! The relocation types of the kernel ABI (`docs/abi.md`) and how each one patches its place.
//!
//! What it must keep true: only the types in [`Arch::relocations`] are ever applied, and each
//! computes its value in 64-bit arithmetic and checks that it fits the field before writing:
//! a PC-relative displacement or page offset that does not fit, or a low-12-bit offset that is
//! not a multiple of the access size, is a [`Overflow`] naming the relocation, never a silently
//! truncated instruction. Patching is a pure function of the place's bytes and the addresses,
//! so it is tested for both architectures on any machine.

use object::elf;

/// The two CPU architectures of the kernel ABI.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Arch {
    X86_64,
    Aarch64,
}

impl Arch {
    /// The architecture this runtime was built for.
    pub const fn host() -> Arch {
        #[cfg(target_arch = "x86_64")]
        {
            Arch::X86_64
        }
        #[cfg(target_arch = "aarch64")]
        {
            Arch::Aarch64
        }
    }

    pub const fn name(self) -> &'static str {
        match self {
            Arch::X86_64 => "x86_64",
            Arch::Aarch64 => "aarch64",
        }
    }

    /// The ELF `e_machine` of objects for this architecture.
    pub const fn machine(self) -> u16 {
        match self {
            Arch::X86_64 => elf::EM_X86_64,
            Arch::Aarch64 => elf::EM_AARCH64,
        }
    }

    pub fn of_machine(machine: u16) -> Option<Arch> {
        [Arch::X86_64, Arch::Aarch64].into_iter().find(|a| a.machine() == machine)
    }

    /// The relocation types the loader applies for this architecture: exactly the tables of
    /// `docs/abi.md`.
    pub const fn relocations(self) -> &'static [RelocType] {
        match self {
            Arch::X86_64 => X86_64,
            Arch::Aarch64 => AARCH64,
        }
    }

    /// The relocation type `code`, if the ABI allows it.
    pub fn relocation(self, code: u32) -> Option<RelocType> {
        self.relocations().iter().copied().find(|t| t.code == code)
    }
}

/// How a relocation's value is computed and stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    /// x86_64: a 32-bit signed PC-relative displacement, `X - P`.
    X86Pc32,
    /// aarch64: 32-bit PC-relative data, `X - P` in `[-2^31, 2^32)`.
    Prel32,
    /// aarch64 ADRP: `Page(X) - Page(P)` in `[-2^32, 2^32)`, bits 12..33 into immlo:immhi.
    AdrPage,
    /// aarch64 ADD immediate: `X & 0xfff` into imm12.
    AddLo12,
    /// aarch64 LDR/STR unsigned offset: `(X & 0xfff) >> shift` into imm12; the low `shift` bits
    /// of `X` must be zero.
    LdStLo12 { shift: u32 },
    /// aarch64 B/BL: `(X - P) >> 2` into imm26; `X - P` a multiple of 4 in `[-2^27, 2^27)`.
    Branch26,
}

/// A relocation type of kernel objects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RelocType {
    /// The ELF `r_type`.
    pub code: u32,
    pub name: &'static str,
    /// Whether it addresses the GOT slot of its symbol (`X = GOT(S) + A` on x86_64; on
    /// aarch64 `X = GOT(S)` and the addend must be 0) rather than the symbol (`X = S + A`).
    pub via_got: bool,
    pub field: Field,
}

const fn rel(code: u32, name: &'static str, via_got: bool, field: Field) -> RelocType {
    RelocType { code, name, via_got, field }
}

const X86_64: &[RelocType] = &[
    rel(elf::R_X86_64_PC32, "R_X86_64_PC32", false, Field::X86Pc32),
    rel(elf::R_X86_64_PLT32, "R_X86_64_PLT32", false, Field::X86Pc32),
    rel(elf::R_X86_64_GOTPCREL, "R_X86_64_GOTPCREL", true, Field::X86Pc32),
    rel(elf::R_X86_64_GOTPCRELX, "R_X86_64_GOTPCRELX", true, Field::X86Pc32),
    rel(elf::R_X86_64_REX_GOTPCRELX, "R_X86_64_REX_GOTPCRELX", true, Field::X86Pc32),
];

const AARCH64: &[RelocType] = &[
    rel(elf::R_AARCH64_PREL32, "R_AARCH64_PREL32", false, Field::Prel32),
    rel(elf::R_AARCH64_ADR_PREL_PG_HI21, "R_AARCH64_ADR_PREL_PG_HI21", false, Field::AdrPage),
    rel(elf::R_AARCH64_ADD_ABS_LO12_NC, "R_AARCH64_ADD_ABS_LO12_NC", false, Field::AddLo12),
    rel(elf::R_AARCH64_LDST8_ABS_LO12_NC, "R_AARCH64_LDST8_ABS_LO12_NC", false, Field::LdStLo12 { shift: 0 }),
    rel(
        elf::R_AARCH64_LDST16_ABS_LO12_NC,
        "R_AARCH64_LDST16_ABS_LO12_NC",
        false,
        Field::LdStLo12 { shift: 1 },
    ),
    rel(
        elf::R_AARCH64_LDST32_ABS_LO12_NC,
        "R_AARCH64_LDST32_ABS_LO12_NC",
        false,
        Field::LdStLo12 { shift: 2 },
    ),
    rel(
        elf::R_AARCH64_LDST64_ABS_LO12_NC,
        "R_AARCH64_LDST64_ABS_LO12_NC",
        false,
        Field::LdStLo12 { shift: 3 },
    ),
    rel(
        elf::R_AARCH64_LDST128_ABS_LO12_NC,
        "R_AARCH64_LDST128_ABS_LO12_NC",
        false,
        Field::LdStLo12 { shift: 4 },
    ),
    rel(elf::R_AARCH64_JUMP26, "R_AARCH64_JUMP26", false, Field::Branch26),
    rel(elf::R_AARCH64_CALL26, "R_AARCH64_CALL26", false, Field::Branch26),
    rel(elf::R_AARCH64_ADR_GOT_PAGE, "R_AARCH64_ADR_GOT_PAGE", true, Field::AdrPage),
    rel(elf::R_AARCH64_LD64_GOT_LO12_NC, "R_AARCH64_LD64_GOT_LO12_NC", true, Field::LdStLo12 { shift: 3 }),
];

/// Every relocation field is 4 bytes wide (a 32-bit displacement or one instruction).
pub const FIELD_BYTES: usize = 4;

/// A name for relocation type `code` of `arch` in error messages: the ABI's name, or the ELF
/// name of some types compilers commonly emit that the ABI excludes, or the number.
pub fn type_name(arch: Arch, code: u32) -> String {
    if let Some(t) = arch.relocation(code) {
        return t.name.to_string();
    }
    let known: &[(u32, &str)] = match arch {
        Arch::X86_64 => &[
            (elf::R_X86_64_64, "R_X86_64_64"),
            (elf::R_X86_64_32, "R_X86_64_32"),
            (elf::R_X86_64_32S, "R_X86_64_32S"),
            (elf::R_X86_64_GOT32, "R_X86_64_GOT32"),
            (elf::R_X86_64_GOTOFF64, "R_X86_64_GOTOFF64"),
            (elf::R_X86_64_GOTPC32, "R_X86_64_GOTPC32"),
            (elf::R_X86_64_TPOFF32, "R_X86_64_TPOFF32"),
            (elf::R_X86_64_GOTTPOFF, "R_X86_64_GOTTPOFF"),
            (elf::R_X86_64_TLSGD, "R_X86_64_TLSGD"),
            (elf::R_X86_64_PC64, "R_X86_64_PC64"),
        ],
        Arch::Aarch64 => &[
            (elf::R_AARCH64_ABS64, "R_AARCH64_ABS64"),
            (elf::R_AARCH64_ABS32, "R_AARCH64_ABS32"),
            (elf::R_AARCH64_PREL64, "R_AARCH64_PREL64"),
            (elf::R_AARCH64_ADR_PREL_LO21, "R_AARCH64_ADR_PREL_LO21"),
            (elf::R_AARCH64_CONDBR19, "R_AARCH64_CONDBR19"),
            (elf::R_AARCH64_LD_PREL_LO19, "R_AARCH64_LD_PREL_LO19"),
            (elf::R_AARCH64_MOVW_UABS_G0_NC, "R_AARCH64_MOVW_UABS_G0_NC"),
            (elf::R_AARCH64_TLSLE_ADD_TPREL_HI12, "R_AARCH64_TLSLE_ADD_TPREL_HI12"),
        ],
    };
    match known.iter().find(|(c, _)| *c == code) {
        Some((_, n)) => (*n).to_string(),
        None => format!("type {code}"),
    }
}

/// A value that does not fit its relocation's field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Overflow {
    /// The computed value (a displacement or an address).
    pub value: i64,
    /// What the field accepts.
    pub rule: &'static str,
}

fn page(x: u64) -> u64 {
    x & !0xfff
}

/// Patches the 4-byte `place` (at address `p`) for a relocation with field `field` whose
/// target is `x` (`S + A`, or the GOT slot's address for GOT relocations; see [`RelocType`]).
/// Instruction bits outside the immediate are kept.
pub fn apply(field: Field, place: &mut [u8; FIELD_BYTES], p: u64, x: u64) -> Result<(), Overflow> {
    let insn = u32::from_le_bytes(*place);
    let word = match field {
        Field::X86Pc32 => {
            let v = x.wrapping_sub(p) as i64;
            let v32 = i32::try_from(v)
                .map_err(|_| Overflow { value: v, rule: "a signed 32-bit displacement (±2 GiB)" })?;
            v32 as u32
        }
        Field::Prel32 => {
            let v = x.wrapping_sub(p) as i64;
            if !(-(1i64 << 31)..1i64 << 32).contains(&v) {
                return Err(Overflow { value: v, rule: "a 32-bit displacement in [-2^31, 2^32)" });
            }
            v as u32
        }
        Field::AdrPage => {
            let v = page(x).wrapping_sub(page(p)) as i64;
            if !(-(1i64 << 32)..1i64 << 32).contains(&v) {
                return Err(Overflow { value: v, rule: "a page displacement within ±4 GiB (ADRP imm21)" });
            }
            let imm = ((v >> 12) as u32) & 0x1f_ffff;
            let (immlo, immhi) = (imm & 0x3, imm >> 2);
            (insn & !((0x3 << 29) | (0x7_ffff << 5))) | (immlo << 29) | (immhi << 5)
        }
        Field::AddLo12 => (insn & !(0xfff << 10)) | (((x & 0xfff) as u32) << 10),
        Field::LdStLo12 { shift } => {
            let lo = (x & 0xfff) as u32;
            if lo & ((1 << shift) - 1) != 0 {
                return Err(Overflow {
                    value: lo as i64,
                    rule: "a low 12-bit offset that is a multiple of the access size",
                });
            }
            (insn & !(0xfff << 10)) | ((lo >> shift) << 10)
        }
        Field::Branch26 => {
            let v = x.wrapping_sub(p) as i64;
            if v % 4 != 0 || !(-(1i64 << 27)..1i64 << 27).contains(&v) {
                return Err(Overflow { value: v, rule: "a multiple of 4 within ±128 MiB (B/BL imm26)" });
            }
            (insn & !0x3ff_ffff) | (((v >> 2) as u32) & 0x3ff_ffff)
        }
    };
    *place = word.to_le_bytes();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn patch(field: Field, insn: u32, p: u64, x: u64) -> Result<u32, Overflow> {
        let mut b = insn.to_le_bytes();
        apply(field, &mut b, p, x)?;
        Ok(u32::from_le_bytes(b))
    }

    #[test]
    fn x86_displacements_are_signed_32_bit() {
        assert_eq!(patch(Field::X86Pc32, 0xdead_beef, 0x1000, 0x1010).unwrap(), 0x10);
        assert_eq!(patch(Field::X86Pc32, 0, 0x1010, 0x1000).unwrap(), (-16i32) as u32);
        let top = 0x1000 + i32::MAX as u64;
        assert_eq!(patch(Field::X86Pc32, 0, 0x1000, top).unwrap(), i32::MAX as u32);
        let e = patch(Field::X86Pc32, 0, 0x1000, top + 1).unwrap_err();
        assert_eq!(e.value, i32::MAX as i64 + 1);
        assert!(patch(Field::X86Pc32, 0, 0x1_0000_0000, 0x1000).is_err());
    }

    #[test]
    fn adrp_gets_the_page_delta_split_into_immlo_and_immhi() {
        // adrp x0, . ; 0x90000000 with Rd = 0.
        let adrp = 0x9000_0000;
        // Same page: imm 0.
        assert_eq!(patch(Field::AdrPage, adrp, 0x1234, 0x1ff0).unwrap(), adrp);
        // Five pages ahead: imm 5 -> immlo 1, immhi 1 (`adrp x0, #0x5000`: 0xb0000020).
        assert_eq!(patch(Field::AdrPage, adrp, 0x10_0004, 0x10_5008).unwrap(), 0xb000_0020);
        // One page back: imm -1 = 0x1fffff -> immlo 3, immhi 0x7ffff (`adrp x0, #-0x1000`).
        assert_eq!(patch(Field::AdrPage, adrp, 0x2000, 0x1fff).unwrap(), 0xf0ff_ffe0);
        // Keeps the destination register (x7).
        assert_eq!(patch(Field::AdrPage, adrp | 7, 0, 0x5000).unwrap(), 0xb000_0027);
        let e = patch(Field::AdrPage, adrp, 0, 1 << 32).unwrap_err();
        assert_eq!(e.value, 1 << 32);
    }

    #[test]
    fn low_12_bits_go_into_imm12_scaled_by_the_access_size() {
        // add x0, x0, #0 = 0x91000000.
        assert_eq!(patch(Field::AddLo12, 0x9100_0000, 0, 0x12_3abc).unwrap(), 0x9100_0000 | (0xabc << 10));
        // ldr q0, [x8] = 0x3dc00100; offset 0x7f0 / 16 = 0x7f.
        assert_eq!(
            patch(Field::LdStLo12 { shift: 4 }, 0x3dc0_0100, 0, 0x5_57f0).unwrap(),
            0x3dc0_0100 | (0x7f << 10)
        );
        // ldr x0, [x0] = 0xf9400000; a GOT slot at 0x...ff8 -> imm 0x1ff.
        assert_eq!(
            patch(Field::LdStLo12 { shift: 3 }, 0xf940_0000, 0, 0xaff8).unwrap(),
            0xf940_0000 | (0x1ff << 10)
        );
        // Old immediate bits are replaced, not or-ed.
        assert_eq!(patch(Field::AddLo12, 0x9100_0000 | (0xfff << 10), 0, 0x1).unwrap(), 0x9100_0400);
        let e = patch(Field::LdStLo12 { shift: 3 }, 0xf940_0000, 0, 0x1004).unwrap_err();
        assert_eq!(e.value, 4);
    }

    #[test]
    fn branches_reach_128_mib_in_words() {
        // bl . = 0x94000000
        assert_eq!(patch(Field::Branch26, 0x9400_0000, 0x1000, 0x1010).unwrap(), 0x9400_0004);
        assert_eq!(patch(Field::Branch26, 0x9400_0000, 0x1010, 0x1000).unwrap(), 0x97ff_fffc);
        assert!(patch(Field::Branch26, 0x9400_0000, 0, 1 << 27).is_err());
        assert!(patch(Field::Branch26, 0x9400_0000, 1 << 27, 0).is_ok());
        assert!(patch(Field::Branch26, 0x9400_0000, 0, 6).is_err(), "misaligned target");
    }

    #[test]
    fn prel32_accepts_signed_and_unsigned_32_bit() {
        assert_eq!(patch(Field::Prel32, 0, 0x10, 0x0).unwrap(), (-16i32) as u32);
        assert_eq!(patch(Field::Prel32, 0, 0, 0xffff_ffff).unwrap(), 0xffff_ffff);
        assert!(patch(Field::Prel32, 0, 0, 1 << 32).is_err());
        assert!(patch(Field::Prel32, 0, (1 << 31) + 1, 0).is_err());
    }

    #[test]
    fn tables_know_their_types_and_name_the_others() {
        assert_eq!(Arch::X86_64.relocation(42).unwrap().name, "R_X86_64_REX_GOTPCRELX");
        assert!(Arch::X86_64.relocation(elf::R_X86_64_64).is_none());
        assert_eq!(type_name(Arch::X86_64, elf::R_X86_64_64), "R_X86_64_64");
        assert_eq!(type_name(Arch::Aarch64, elf::R_AARCH64_ABS64), "R_AARCH64_ABS64");
        assert_eq!(type_name(Arch::Aarch64, 9999), "type 9999");
        assert_eq!(Arch::of_machine(elf::EM_AARCH64), Some(Arch::Aarch64));
        assert_eq!(Arch::of_machine(elf::EM_386), None);
    }
}
