//! The object cache through `compile`: a second compile of the same IR is read from the cache
//! with clang's diagnostics, other IR or another target misses, a damaged entry is compiled
//! again, and `EKB_CACHE_DIR=off` bypasses it. (Alone in its test binary: it changes the
//! process environment.)

use ekb_ir::TargetProfile;
use ekb_llvm::cache::CACHE_ENV;

const IR: &str = r#"
define void @ekb_k_twice(ptr %args) nounwind {
entry:
  %x = load ptr, ptr %args
  %v = load float, ptr %x
  %w = fadd float %v, %v
  store float %w, ptr %x
  ret void
}
"#;

#[test]
fn a_compiled_object_is_read_back_from_the_cache_until_its_inputs_change() {
    let dir = tempfile::tempdir().unwrap();
    // SAFETY: the only test of this binary; no other thread reads the environment.
    unsafe { std::env::set_var(CACHE_ENV, dir.path()) };
    let host = TargetProfile::load("host").unwrap();
    let out = |name: &str| dir.path().join(name);

    let first = ekb_llvm::compile(IR, &host, &out("a.o")).unwrap_or_else(|d| panic!("{d}"));
    assert!(!first.cached);
    let second = ekb_llvm::compile(IR, &host, &out("b.o")).unwrap_or_else(|d| panic!("{d}"));
    assert!(second.cached, "the same IR, target and compiler: {second:?}");
    assert_eq!(second.stderr, first.stderr, "clang's diagnostics come with the object");
    let bytes = std::fs::read(out("a.o")).unwrap();
    assert_eq!(std::fs::read(out("b.o")).unwrap(), bytes);

    // Other IR, or the same IR for another CPU, is compiled.
    let other = ekb_llvm::compile(&IR.replace("fadd", "fmul"), &host, &out("c.o")).unwrap();
    assert!(!other.cached);
    let mut elsewhere = host.clone();
    elsewhere.cpu.cpu = "x86-64".into();
    elsewhere.cpu.features.clear();
    assert!(!ekb_llvm::compile(IR, &elsewhere, &out("d.o")).unwrap().cached);

    // A damaged entry fails the object check, so it is compiled again (and repaired).
    let objects = dir.path().join("objects");
    for entry in std::fs::read_dir(&objects).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "o") {
            std::fs::write(&path, b"not an object").unwrap();
        }
    }
    let again = ekb_llvm::compile(IR, &host, &out("e.o")).unwrap();
    assert!(!again.cached, "a damaged entry is a miss");
    assert_eq!(std::fs::read(out("e.o")).unwrap(), bytes);
    assert!(ekb_llvm::compile(IR, &host, &out("f.o")).unwrap().cached, "and the entry is whole again");

    // Off: every compile runs clang.
    // SAFETY: as above.
    unsafe { std::env::set_var(CACHE_ENV, "off") };
    assert!(!ekb_llvm::compile(IR, &host, &out("g.o")).unwrap().cached);
}
