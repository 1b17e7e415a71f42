//! The loader on hand-written and deliberately broken objects: a valid hand-written kernel
//! loads, computes through its import and constant, and is mapped W^X; every kind of hostile
//! or out-of-ABI object is refused with an error that names the offending section, symbol or
//! relocation — never a crash.

mod common;

use ekb_rt::loader::{check, Arch, LoadError, LoadedObject};

const X86: &str = "x86_64-unknown-linux-gnu";
const A64: &str = "aarch64-unknown-linux-gnu";

/// `ekb_k_scale(args)`: `out[0] = expf(4 * in[0])`, through a constant in `.rodata.cst4`, a call
/// to a helper in another section, and the GOT slot of `expf`. Extra assembly is appended by
/// the tests.
fn scale_x86(extra: &str) -> Vec<u8> {
    common::assemble(
        &format!(
            r#"
    .text
    .globl ekb_k_scale
    .type ekb_k_scale,@function
    .p2align 4
ekb_k_scale:
    pushq %rbx
    movq (%rdi), %rax
    movq 8(%rdi), %rbx
    movss (%rax), %xmm0
    mulss .LC0(%rip), %xmm0
    call twice@PLT
    call *expf@GOTPCREL(%rip)
    movss %xmm0, (%rbx)
    popq %rbx
    ret
    .section .text.helpers,"ax",@progbits
twice:
    addss %xmm0, %xmm0
    ret
    .section .rodata.cst4,"aM",@progbits,4
    .p2align 2
.LC0:
    .long 0x40000000
{extra}
    .section .note.GNU-stack,"",@progbits
"#
        ),
        X86,
    )
}

fn load_err(bytes: &[u8]) -> LoadError {
    match LoadedObject::load(bytes) {
        Ok(_) => panic!("the object loaded"),
        Err(e) => e,
    }
}

/// Byte offset of the section header of `name`.
fn section_header(bytes: &[u8], name: &str) -> usize {
    use object::read::elf::{ElfFile64, FileHeader};
    use object::{LittleEndian, Object, ObjectSection};
    let f: ElfFile64<'_, LittleEndian> = ElfFile64::parse(bytes).unwrap();
    let index = f.sections().find(|s| s.name() == Ok(name)).unwrap().index().0;
    let e_shoff = f.elf_header().e_shoff(LittleEndian) as usize;
    e_shoff + 64 * index
}

fn u64_at(bytes: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap())
}

fn put_u64(bytes: &mut [u8], at: usize, v: u64) {
    bytes[at..at + 8].copy_from_slice(&v.to_le_bytes());
}

/// File offset of the first entry of relocation section `name`.
fn first_rela(bytes: &[u8], name: &str) -> usize {
    u64_at(bytes, section_header(bytes, name) + 24) as usize
}

#[cfg(target_arch = "x86_64")]
#[test]
fn a_hand_written_kernel_loads_runs_and_is_mapped_w_xor_x() {
    let obj = LoadedObject::load(&scale_x86("")).unwrap();
    assert_eq!(obj.kernels().collect::<Vec<_>>(), ["scale"]);
    let s = obj.summary();
    assert_eq!(s.imports, ["expf"]);
    assert_eq!(s.relocations, [("R_X86_64_GOTPCRELX", 1), ("R_X86_64_PC32", 1), ("R_X86_64_PLT32", 1)]);
    let k = obj.kernel("scale").unwrap();
    assert!(obj.entry("ekb_k_scale").is_some() && obj.kernel("missing").is_none());
    let (mut x, mut y) = (0.25f32, 0f32);
    let args = [&mut x as *mut f32 as *mut u8, &mut y as *mut f32 as *mut u8];
    // SAFETY: the kernel reads args[0][0] and writes args[1][0], both live f32s.
    unsafe { k(args.as_ptr()) };
    assert_eq!(y, libm::expf(1.0));

    // The code pages are read-execute, the constants and GOT read-only, nothing writable.
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
    let code = obj.code_range();
    let perms = |addr: usize| {
        maps.lines()
            .find(|l| {
                let (range, _) = l.split_once(' ').unwrap();
                let (a, b) = range.split_once('-').unwrap();
                (usize::from_str_radix(a, 16).unwrap()..usize::from_str_radix(b, 16).unwrap()).contains(&addr)
            })
            .map(|l| l.split_whitespace().nth(1).unwrap().to_string())
            .unwrap()
    };
    assert_eq!(perms(code.start), "r-xp");
    assert_eq!(perms(code.end), "r--p", "constants and GOT after the code");
    assert_eq!(s.image_bytes, s.code_bytes + ekb_rt::sys::page_size() as u64);
}

#[test]
fn calls_between_sections_of_the_object_are_relocated() {
    let bytes = scale_x86("    .text\nhelper_call:\n    call local_fn@PLT\n    ret\n    .section .text.other,\"ax\",@progbits\nlocal_fn:\n    ret\n");
    let s = check(&bytes, Arch::X86_64).unwrap();
    assert!(s.relocations.contains(&("R_X86_64_PLT32", 2)), "{:?}", s.relocations);
}

#[test]
fn relocations_of_unmapped_sections_are_skipped() {
    // Debug information with an absolute relocation the ABI does not allow in mapped code.
    let bytes = scale_x86("    .section .debug_info,\"\",@progbits\n    .quad ekb_k_scale\n");
    let s = check(&bytes, Arch::X86_64).unwrap();
    assert_eq!(s.entries, ["ekb_k_scale"]);
}

#[test]
fn an_unknown_relocation_type_is_named() {
    let bytes = scale_x86("    .text\nhelper_abs:\n    movabsq $.LC0, %rax\n    ret\n");
    match check(&bytes, Arch::X86_64).unwrap_err() {
        LoadError::UnknownRelocation { section, name, r_type, .. } => {
            assert_eq!((section.as_str(), name.as_str(), r_type), (".text", "R_X86_64_64", 1));
        }
        e => panic!("{e}"),
    }
    let e = check(&bytes, Arch::X86_64).unwrap_err().to_string();
    assert!(e.contains("R_X86_64_64") && e.contains("may use only R_X86_64_PC32"), "{e}");
}

#[test]
fn an_undefined_symbol_outside_the_import_table_is_named() {
    let bytes = scale_x86("    .text\nhelper_printf:\n    call *printf@GOTPCREL(%rip)\n    ret\n");
    assert_eq!(
        check(&bytes, Arch::X86_64).unwrap_err(),
        LoadError::UnknownImport { symbol: "printf".into() }
    );
    assert!(load_err(&bytes).to_string().contains("`printf` is not in the runtime's import table"));
}

#[test]
fn an_import_called_without_the_got_is_refused() {
    let bytes = scale_x86("    .text\nhelper_memset:\n    call memset@PLT\n    ret\n");
    match check(&bytes, Arch::X86_64).unwrap_err() {
        LoadError::Relocation { name, problem, .. } => {
            assert_eq!(name, "R_X86_64_PLT32");
            assert!(problem.contains("`memset` is referenced directly, not through the GOT"), "{problem}");
        }
        e => panic!("{e}"),
    }
}

#[test]
fn forbidden_sections_and_symbols_are_named() {
    let cases: [(&str, &str, &str); 5] = [
        ("    .data\n    .long 1\n", ".data", "writable"),
        ("    .section .tbss,\"awT\",@nobits\n    .zero 4\n", ".tbss", "thread-local"),
        ("    .section .init_array,\"aw\"\n    .quad 0\n", ".init_array", "constructor"),
        ("    .section .rodata.big,\"a\"\n    .p2align 16\n    .long 1\n", ".rodata.big", "alignment 65536"),
        ("    .section .rodata.nb,\"a\",@nobits\n    .zero 8\n", ".rodata.nb", "type 0x8"),
    ];
    for (asm, want_section, want) in cases {
        match check(&scale_x86(asm), Arch::X86_64).unwrap_err() {
            LoadError::Section { section, problem } => {
                assert_eq!(section, want_section);
                assert!(problem.contains(want), "{section}: {problem}");
            }
            e => panic!("{asm}: {e}"),
        }
    }
    let exported = scale_x86("    .text\n    .globl helper\n    .type helper,@function\nhelper:\n    ret\n");
    match check(&exported, Arch::X86_64).unwrap_err() {
        LoadError::Symbol { symbol, problem } => {
            assert_eq!(symbol, "helper");
            assert!(problem.contains("kernel entry points"), "{problem}");
        }
        e => panic!("{e}"),
    }
    let data_entry = scale_x86("    .section .rodata.k,\"a\"\n    .globl ekb_k_data\n    .type ekb_k_data,@function\nekb_k_data:\n    .long 0\n");
    match check(&data_entry, Arch::X86_64).unwrap_err() {
        LoadError::Symbol { symbol, problem } => {
            assert_eq!(symbol, "ekb_k_data");
            assert!(problem.contains("not inside a code section"), "{problem}");
        }
        e => panic!("{e}"),
    }
}

#[test]
fn indirect_functions_and_duplicate_entries_are_refused() {
    let ifunc = scale_x86(
        "    .text\n    .globl ekb_k_i\n    .type ekb_k_i,@gnu_indirect_function\nekb_k_i:\n    ret\n",
    );
    match check(&ifunc, Arch::X86_64).unwrap_err() {
        LoadError::Symbol { symbol, problem } => {
            assert_eq!(symbol, "ekb_k_i");
            assert!(problem.contains("STT_GNU_IFUNC"), "{problem}");
        }
        e => panic!("{e}"),
    }
    // Two kernels whose names have the same length; then the second one renamed, in the
    // string table, to the first.
    let two = scale_x86(
        "    .text\n    .globl ekb_k_scalf\n    .type ekb_k_scalf,@function\nekb_k_scalf:\n    ret\n",
    );
    assert_eq!(check(&two, Arch::X86_64).unwrap().entries, ["ekb_k_scale", "ekb_k_scalf"]);
    let mut bytes = two.clone();
    let at = bytes.windows(12).position(|w| w == b"ekb_k_scalf\0").unwrap();
    bytes[at..at + 11].copy_from_slice(b"ekb_k_scale");
    match check(&bytes, Arch::X86_64).unwrap_err() {
        LoadError::Symbol { symbol, problem } => {
            assert_eq!(
                (symbol.as_str(), problem.as_str()),
                ("ekb_k_scale", "kernel entry point defined twice")
            );
        }
        e => panic!("{e}"),
    }
}

#[test]
fn truncated_objects_are_errors_at_every_length() {
    let bytes = scale_x86("");
    for len in 0..bytes.len() {
        // Never a panic, never a success: the section table is at the end of the file.
        let e = check(&bytes[..len], Arch::X86_64).unwrap_err();
        assert!(matches!(e, LoadError::Malformed { .. }), "length {len}: {e}");
    }
    assert_eq!(
        check(&bytes[..3], Arch::X86_64).unwrap_err().to_string(),
        "the kernel object is not a valid ELF file: it starts with [7f, 45, 4c], not the ELF magic 7f 45 4c 46"
    );
    let e = check(&bytes[..40], Arch::X86_64).unwrap_err().to_string();
    assert!(e.contains("ELF header"), "{e}");
}

#[test]
fn section_offsets_and_sizes_out_of_range_are_refused() {
    let good = scale_x86("");
    for (field, value) in [(24, 0xffff_ff00u64), (32, 0x7fff_ffff_ffff), (24, u64::MAX)] {
        let mut bytes = good.clone();
        put_u64(&mut bytes, section_header(&good, ".text") + field, value);
        match check(&bytes, Arch::X86_64).unwrap_err() {
            LoadError::Malformed { what } => assert!(what.contains("section `.text`"), "{what}"),
            e => panic!("{e}"),
        }
    }
    // The section header table itself out of the file.
    let mut bytes = good.clone();
    put_u64(&mut bytes, 0x28, 0xffff_ffff);
    assert!(
        matches!(check(&bytes, Arch::X86_64).unwrap_err(), LoadError::Malformed { what } if what.contains("section table"))
    );
}

#[test]
fn relocation_places_and_symbol_indices_out_of_range_are_refused() {
    let good = scale_x86("");
    let at = first_rela(&good, ".rela.text");
    let mut bytes = good.clone();
    put_u64(&mut bytes, at, 0x10_0000);
    match check(&bytes, Arch::X86_64).unwrap_err() {
        LoadError::Relocation { section, offset, problem, .. } => {
            assert_eq!((section.as_str(), offset), (".text", 0x10_0000));
            assert!(problem.contains("outside the section"), "{problem}");
        }
        e => panic!("{e}"),
    }
    // An offset 2 bytes before the end: the 4-byte field would run past it.
    let text_size = u64_at(&good, section_header(&good, ".text") + 32);
    let mut bytes = good.clone();
    put_u64(&mut bytes, at, text_size - 2);
    assert!(matches!(check(&bytes, Arch::X86_64).unwrap_err(), LoadError::Relocation { .. }));
    let mut bytes = good.clone();
    let info = u64_at(&good, at + 8);
    put_u64(&mut bytes, at + 8, (9999u64 << 32) | (info & 0xffff_ffff));
    match check(&bytes, Arch::X86_64).unwrap_err() {
        LoadError::Relocation { problem, .. } => {
            assert!(problem.contains("symbol index 9999 is out of range"), "{problem}")
        }
        e => panic!("{e}"),
    }
}

#[test]
fn objects_of_another_kind_or_machine_are_refused() {
    let good = scale_x86("");
    let mut bytes = good.clone();
    bytes[4] = 1; // ELFCLASS32
    assert!(
        matches!(check(&bytes, Arch::X86_64).unwrap_err(), LoadError::NotSupported { what } if what.contains("32-bit"))
    );
    let mut bytes = good.clone();
    bytes[0x10] = 3; // ET_DYN
    assert!(
        matches!(check(&bytes, Arch::X86_64).unwrap_err(), LoadError::NotSupported { what } if what.contains("shared object"))
    );
    assert_eq!(
        check(&good, Arch::Aarch64).unwrap_err(),
        LoadError::WrongArch { found: "x86_64".into(), expected: Arch::Aarch64 }
    );
    let a64 = common::assemble(
        "    .text\n    .globl ekb_k_nop\n    .type ekb_k_nop,@function\nekb_k_nop:\n    ret\n",
        A64,
    );
    #[cfg(target_arch = "x86_64")]
    assert_eq!(load_err(&a64), LoadError::WrongArch { found: "aarch64".into(), expected: Arch::X86_64 });
    assert_eq!(check(&a64, Arch::Aarch64).unwrap().entries, ["ekb_k_nop"]);
}

#[test]
fn aarch64_relocations_are_range_checked() {
    // A 64-bit load from a constant 4 bytes into an 8-aligned section: the low 12 bits are not
    // a multiple of 8, so LDST64 cannot encode it.
    let asm = r#"
    .text
    .globl ekb_k_k
    .type ekb_k_k,@function
ekb_k_k:
    adrp x8, .LC0+4
    ldr x0, [x8, :lo12:.LC0+4]
    ret
    .section .rodata.cst16,"aM",@progbits,16
    .p2align 4
.LC0:
    .quad 1
    .quad 2
"#;
    match check(&common::assemble(asm, A64), Arch::Aarch64).unwrap_err() {
        LoadError::Overflow { name, value, section, .. } => {
            assert_eq!(
                (name.as_str(), value, section.as_str()),
                ("R_AARCH64_LDST64_ABS_LO12_NC", 4, ".text")
            );
        }
        e => panic!("{e}"),
    }
    // The aligned access, a branch between functions and a GOT load all link.
    let ok = r#"
    .text
    .globl ekb_k_k
    .type ekb_k_k,@function
ekb_k_k:
    adrp x8, .LC0+8
    ldr x0, [x8, :lo12:.LC0+8]
    adrp x9, :got:memcpy
    ldr x9, [x9, :got_lo12:memcpy]
    b helper
    .section .text.helpers,"ax",@progbits
helper:
    bl helper2
helper2:
    ret
    .section .rodata.cst16,"aM",@progbits,16
    .p2align 4
.LC0:
    .quad 1
    .quad 2
"#;
    let s = check(&common::assemble(ok, A64), Arch::Aarch64).unwrap();
    assert_eq!(s.imports, ["memcpy"]);
    let names: Vec<&str> = s.relocations.iter().map(|r| r.0).collect();
    assert_eq!(
        names,
        [
            "R_AARCH64_ADR_GOT_PAGE",
            "R_AARCH64_ADR_PREL_PG_HI21",
            "R_AARCH64_JUMP26",
            "R_AARCH64_LD64_GOT_LO12_NC",
            "R_AARCH64_LDST64_ABS_LO12_NC"
        ],
        "a branch into another section is relocated; one within a section is resolved by the assembler"
    );
}

#[test]
fn single_byte_corruptions_never_crash_the_loader() {
    // Every byte of a valid object (headers, tables, code, relocations) set to a few values:
    // the loader answers every variant with an object or an error, without panicking. The
    // loaded variants are never run.
    let good = scale_x86("");
    let mut outcomes = [0usize; 2];
    for i in 0..good.len() {
        for v in [0x00, 0xff, 0x80, good[i] ^ 0x01, good[i].wrapping_add(0x40)] {
            let mut bytes = good.clone();
            bytes[i] = v;
            let checked = check(&bytes, Arch::X86_64);
            #[cfg(target_arch = "x86_64")]
            assert_eq!(LoadedObject::load(&bytes).is_ok(), checked.is_ok(), "byte {i} = {v:#x}");
            outcomes[checked.is_ok() as usize] += 1;
        }
    }
    // Both outcomes occur: code bytes can change freely, table bytes cannot.
    assert!(outcomes[0] > 0 && outcomes[1] > 0, "{outcomes:?}");
}
