//! Compiles the conformance corpus for every CPU profile and checks each object the way a
//! loader sees it: the profile's architecture, a relocatable ELF, one `ekb_k_*` symbol per
//! kernel, nothing mapped but code and constants, undefined symbols only from the import table,
//! and imports reached only through GOT slots (no direct branches to them).

mod common;
use common::cases::all;
use common::*;
use ekb_ir::TargetProfile;
use ekb_llvm::{check_object, compile, emit, Arch, IMPORTS};
use std::collections::BTreeSet;

#[test]
fn every_profile_gets_loadable_objects_that_import_only_the_table() {
    clang();
    let dir = tempfile::tempdir().unwrap();
    let mut targets: Vec<TargetProfile> =
        ["host", "aarch64-qemu", "rk3588", "jetson-orin"].map(|p| TargetProfile::load(p).unwrap()).into();
    targets.push(x86_64_baseline());
    for target in targets {
        let profile = target.name.as_str();
        let arch = Arch::of_triple(&target.cpu.triple).unwrap();
        let (mut imports, mut relocations) = (BTreeSet::new(), BTreeSet::new());
        for case in all() {
            let m = module(case.text);
            let obj = dir.path().join(format!("{profile}-{}.o", case.name));
            let log = compile(&emit(&m, &target).unwrap(), &target, &obj)
                .unwrap_or_else(|d| panic!("{profile}/{}: {d}", case.name));
            assert!(log.command.iter().any(|a| a == &format!("--target={}", target.cpu.triple)), "{log:?}");
            let info = check_object(&std::fs::read(&obj).unwrap(), &target.cpu.triple).unwrap();
            assert_eq!(info.arch, arch);
            let mut kernels: Vec<String> = m.kernels.iter().map(|k| k.name.clone()).collect();
            kernels.sort();
            assert_eq!(info.kernels, kernels, "{profile}/{}", case.name);
            for s in &info.sections {
                assert!(s == ".text" || s.starts_with(".rodata"), "{profile}/{}: section {s}", case.name);
            }
            imports.extend(info.imports);
            relocations.extend(info.relocations);
        }
        eprintln!("{profile}: imports {imports:?}\n{profile}: relocations {relocations:?}");
        assert!(imports.iter().all(|i| IMPORTS.contains(&i.as_str())));
        let mut needed = vec!["ekb_parallel_for", "memset", "memcpy", "memmove"];
        if profile == "x86-64-baseline" {
            needed.extend(["floorf", "ceilf"]);
        }
        for needed in needed {
            assert!(imports.contains(needed), "{profile}: the corpus calls {needed}: {imports:?}");
        }
        // The math functions are inline (`docs/abi.md`, Math functions).
        for inline in ["expf", "logf", "powf", "tanhf", "erff", "exp2f", "ldexpf", "sinf", "cosf"] {
            assert!(!imports.contains(inline), "{profile}: the corpus imports {inline}: {imports:?}");
        }
        for direct in ["R_X86_64_PLT32", "R_AARCH64_CALL26", "R_AARCH64_JUMP26"] {
            assert!(
                !relocations.contains(direct),
                "{profile}: emitted code calls an import directly: {relocations:?}"
            );
        }
    }
}

#[test]
fn objects_for_one_architecture_are_refused_for_another() {
    clang();
    let dir = tempfile::tempdir().unwrap();
    let target = TargetProfile::load("aarch64-qemu").unwrap();
    let obj = dir.path().join("a.o");
    let m = module(common::cases::RELU_ADD);
    compile(&emit(&m, &target).unwrap(), &target, &obj).unwrap();
    let bytes = std::fs::read(&obj).unwrap();
    let e = check_object(&bytes, "x86_64-unknown-linux-gnu").unwrap_err();
    assert!(e.message.contains("is for aarch64"), "{e}");
    let e = ekb_llvm::HostModule::load(&obj, &m, 1).err().expect("an aarch64 object cannot load here");
    assert!(e.message.contains("aarch64"), "{e}");
}
