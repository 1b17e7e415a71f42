//! Every corpus graph, lowered with both schedules, through LLVM IR and clang-19: on this
//! machine the compiled kernels reproduce the reference outputs on every seed; for the aarch64
//! boards the same programs compile to aarch64 objects that reference nothing outside the kernel
//! ABI's import table.

use ekb_e2e::{check_outputs, corpus_files, load_graph, reference, SEEDS};
use ekb_ir::TargetProfile;
use ekb_llvm::{check_object, compile, emit, HostModule};
use ekb_lower::{lower, Schedule};

#[test]
fn compiled_kernels_match_the_reference_on_this_machine() {
    let target = TargetProfile::load("host").unwrap();
    let mut failures = Vec::new();
    let mut runs = 0;
    for path in corpus_files() {
        let g = load_graph(&path);
        for schedule in Schedule::ALL {
            let m = lower(&g, schedule, &target).unwrap_or_else(|d| panic!("{} ({schedule}): {d}", g.name));
            let host = match HostModule::build(&m, &target, 2) {
                Ok(h) => h,
                Err(d) => {
                    failures.push(format!("{} ({schedule}): {d}", g.name));
                    continue;
                }
            };
            for seed in SEEDS {
                let (inputs, expected) = reference(&g, seed);
                let got = host.run(&m, &inputs).unwrap_or_else(|d| panic!("{} ({schedule}): {d}", g.name));
                runs += 1;
                failures.extend(
                    check_outputs(&g, &expected, &got)
                        .into_iter()
                        .map(|p| format!("{} ({schedule}, seed {seed}): {p}", g.name)),
                );
            }
        }
    }
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
    assert_eq!(runs, corpus_files().len() * Schedule::ALL.len() * SEEDS.len());
}

#[test]
fn the_same_programs_compile_for_the_aarch64_boards() {
    let dir = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    for board in ["aarch64-qemu", "rk3588", "jetson-orin"] {
        let target = TargetProfile::load(board).unwrap();
        for path in corpus_files() {
            let g = load_graph(&path);
            for schedule in Schedule::ALL {
                let what = format!("{} ({schedule}, {board})", g.name);
                let m = lower(&g, schedule, &target).unwrap_or_else(|d| panic!("{what}: {d}"));
                let obj = dir.path().join(format!("{}-{schedule}-{board}.o", g.name));
                let checked = emit(&m, &target)
                    .and_then(|ir| compile(&ir, &target, &obj))
                    .and_then(|_| check_object(&std::fs::read(&obj).unwrap(), &target.cpu.triple));
                match checked {
                    Err(d) => failures.push(format!("{what}: {d}")),
                    Ok(info) => {
                        for k in &m.kernels {
                            if !info.kernels.contains(&k.name) {
                                failures.push(format!("{what}: kernel `{}` missing from the object", k.name));
                            }
                        }
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
}
