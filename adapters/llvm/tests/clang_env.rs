//! `EKB_CLANG` chooses the compiler; a wrong value is a clear error. (Alone in its test binary:
//! it changes the process environment.)

#[test]
fn ekb_clang_names_the_compiler_and_a_wrong_one_is_reported() {
    let real = ekb_llvm::find_clang().unwrap_or_else(|d| panic!("{d}"));
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no-such-clang");
    // SAFETY: the only test of this binary; no other thread reads the environment.
    unsafe { std::env::set_var(ekb_llvm::CLANG_ENV, &missing) };
    let e = ekb_llvm::find_clang().unwrap_err();
    assert!(e.message.contains("EKB_CLANG=") && e.message.contains("no-such-clang"), "{e}");
    assert!(e.hint.as_deref().unwrap_or("").contains("toolchains/setup.sh"), "{e}");
    let target = ekb_ir::TargetProfile::load("host").unwrap();
    let e = ekb_llvm::compile("", &target, &dir.path().join("x.o")).unwrap_err();
    assert!(e.message.contains("EKB_CLANG="), "compile reports it too: {e}");

    // SAFETY: as above.
    unsafe { std::env::set_var(ekb_llvm::CLANG_ENV, &real) };
    assert_eq!(ekb_llvm::find_clang().unwrap(), real);
}
