//! The runtime's loader and the CPU adapter agree on the kernel ABI: the same import table and
//! relocation tables, and on every corpus object compiled for the shipped profiles the loader
//! accepts exactly what the adapter's `check_object` accepts, seeing the same kernels, imports
//! and relocation types.

mod common;

use ekb_ir::TargetProfile;
use ekb_lower::Schedule;
use ekb_rt::loader::{check, Arch, IMPORTS};

fn arch(a: ekb_llvm::Arch) -> Arch {
    match a {
        ekb_llvm::Arch::X86_64 => Arch::X86_64,
        ekb_llvm::Arch::Aarch64 => Arch::Aarch64,
    }
}

#[test]
fn import_and_relocation_tables_match_the_adapter() {
    assert_eq!(IMPORTS, ekb_llvm::IMPORTS);
    for a in [ekb_llvm::Arch::X86_64, ekb_llvm::Arch::Aarch64] {
        let ours: Vec<(u32, &str, bool)> =
            arch(a).relocations().iter().map(|t| (t.code, t.name, t.via_got)).collect();
        let theirs: Vec<(u32, &str, bool)> =
            a.relocations().iter().map(|t| (t.code, t.name, t.via_got)).collect();
        assert_eq!(ours, theirs, "{}", a.name());
    }
}

#[test]
fn poison_patterns_match_the_l1_interpreter() {
    assert_eq!(ekb_rt::buffers::POISON_F32_BITS, ekb_ir::l1::interp::POISON_F32_BITS);
    assert_eq!(ekb_rt::buffers::POISON_I32, ekb_ir::l1::interp::POISON_I32);
    assert_eq!(ekb_rt::buffers::POISON_I8, ekb_ir::l1::interp::POISON_I8);
}

#[test]
fn the_loader_sees_corpus_objects_as_the_adapter_does() {
    let dir = common::work_dir("abi-agreement");
    let mut problems = Vec::new();
    for profile in ["host", "rk3588", "jetson-orin"] {
        let target = TargetProfile::load(profile).unwrap();
        let a = arch(ekb_llvm::Arch::of_triple(&target.cpu.triple).unwrap());
        for path in ekb_e2e::corpus_files() {
            let g = ekb_e2e::load_graph(&path);
            let (m, obj) = common::compile_graph(&g, Schedule::Default, &target, &dir);
            let what = format!("{} ({profile})", g.name);
            let info =
                ekb_llvm::check_object(&obj, &target.cpu.triple).unwrap_or_else(|d| panic!("{what}: {d}"));
            match check(&obj, a) {
                Err(e) => problems.push(format!("{what}: {e}")),
                Ok(s) => {
                    let entries: Vec<String> =
                        m.kernels.iter().map(|k| ekb_llvm::kernel_symbol(&k.name)).collect();
                    let mut sorted = s.entries.clone();
                    sorted.sort();
                    let mut want = entries.clone();
                    want.sort();
                    let relocs: Vec<String> = s.relocations.iter().map(|r| r.0.to_string()).collect();
                    let mut imports: Vec<String> = s.imports.iter().map(|i| i.to_string()).collect();
                    imports.sort();
                    if sorted != want || imports != info.imports || relocs != info.relocations {
                        problems.push(format!(
                            "{what}: loader {:?} {imports:?} {relocs:?}, adapter {:?} {:?} {:?}",
                            s.entries, info.kernels, info.imports, info.relocations
                        ));
                    }
                }
            }
        }
    }
    assert!(problems.is_empty(), "{} problems:\n{}", problems.len(), problems.join("\n"));
}
