//! Runs the conformance corpus outside this process, as a board would: objects compiled for the
//! aarch64 profiles (aarch64-qemu, rk3588, jetson-orin) are linked with the aarch64 GNU
//! toolchain and run by a small C driver under `qemu-aarch64`; the host's object runs under the
//! same driver natively. Also checks that integer division by zero traps in compiled code.

mod common;
use common::cases::{all, check};
use common::driver::Toolchain;
use common::*;
use ekb_ir::TargetProfile;
use ekb_llvm::{compile, emit, Arch};
use std::os::unix::process::ExitStatusExt;

fn work_dir(name: &str) -> std::path::PathBuf {
    let d = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("ekb-llvm-{name}"));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn run_corpus(tc: &Toolchain, profile: &str) {
    let target = TargetProfile::load(profile).unwrap();
    assert_eq!(Arch::of_triple(&target.cpu.triple), Some(tc.arch), "profile `{profile}`");
    let dir = work_dir(profile);
    let driver = tc.driver(&dir);
    for case in all() {
        let m = module(case.text);
        let (obj, so) = (dir.join(format!("{}.o", case.name)), dir.join(format!("{}.so", case.name)));
        let ir = emit(&m, &target).unwrap();
        compile(&ir, &target, &obj).unwrap_or_else(|d| panic!("{profile}/{}: {d}", case.name));
        tc.link(&obj, &so);
        let inputs = (case.inputs)();
        let expected = (case.expect)(&inputs);
        for chunks in [1, 3] {
            let got = tc
                .run_plan(&driver, &so, &m, &inputs, chunks)
                .unwrap_or_else(|(st, err)| panic!("{profile}/{}: driver {st}: {err}", case.name));
            check(&format!("{profile}/{}", case.name), &expected, &got);
        }
    }
}

#[test]
fn corpus_runs_on_aarch64_under_qemu_for_every_aarch64_profile() {
    clang();
    let tc = Toolchain::aarch64();
    for profile in ["aarch64-qemu", "rk3588", "jetson-orin"] {
        run_corpus(&tc, profile);
    }
}

#[test]
fn corpus_runs_in_a_separate_host_process() {
    run_corpus(&Toolchain::host(), "host");
}

const DIV_ZERO: &str = "module div_zero {
  input a: i32[4]
  input b: i32[4]
  output q: i32[4]
  kernel k(a: i32[4] in, b: i32[4] in, q: i32[4] out) {
    for i in 0..4 {
      q[i] = a[i] / b[i]
    }
  }
  run k(a, b, q)
}
";

#[test]
fn integer_division_by_zero_traps_on_both_architectures() {
    clang();
    // (toolchain, profile, the signal its trap instruction raises: ud2 / brk)
    for (tc, profile, signal) in [(Toolchain::host(), "host", 4), (Toolchain::aarch64(), "aarch64-qemu", 5)] {
        let target = TargetProfile::load(profile).unwrap();
        let dir = work_dir(&format!("trap-{profile}"));
        let driver = tc.driver(&dir);
        let m = module(DIV_ZERO);
        let (obj, so) = (dir.join("div_zero.o"), dir.join("div_zero.so"));
        compile(&emit(&m, &target).unwrap(), &target, &obj).unwrap();
        tc.link(&obj, &so);
        let ok = inputs(vec![("a", i32s(&[4], vec![7, -7, 9, 1])), ("b", i32s(&[4], vec![2, 2, -3, -1]))]);
        let got = tc.run_plan(&driver, &so, &m, &ok, 1).unwrap();
        assert_eq!(as_i32(&got["q"]), [3, -3, -3, -1]);
        let zero = inputs(vec![("a", i32s(&[4], vec![7, -7, 9, 1])), ("b", i32s(&[4], vec![2, 0, -3, -1]))]);
        let (status, _) = tc.run_plan(&driver, &so, &m, &zero, 1).expect_err("division by zero must trap");
        assert_eq!(status.signal(), Some(signal), "{profile}: {status}");
    }
}
