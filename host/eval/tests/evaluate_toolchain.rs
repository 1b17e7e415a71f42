//! A candidate the toolchain cannot compile is a `compile` failure with clang's own message as
//! evidence. Every candidate here verifies, so the failure is produced by the toolchain itself:
//! `EKB_CLANG` names a wrapper that runs the real clang-19 but fails, as a compiler crash would,
//! on IR that holds the kernel `refuse_me`. (This binary sets the variable for its whole
//! process, so it has this one test.)

mod common;

use common::{config, evaluate_dir, result_of, tiny_task, Quiet};
use ekb_eval::evaluate::candidate::Candidates;
use ekb_eval::results::FailureClass;
use std::os::unix::fs::PermissionsExt;

#[test]
fn a_toolchain_failure_is_a_compile_failure_with_the_compilers_message() {
    let tmp = tempfile::tempdir().unwrap();
    let clang = ekb_llvm::find_clang().unwrap();
    let wrapper = tmp.path().join("clang-wrapper");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\nfor a in \"$@\"; do\n  case \"$a\" in *.ll) if grep -q refuse_me \"$a\"; then\n    \
             echo 'fatal error: error in backend: cannot select instruction' >&2; exit 70; fi;; esac\ndone\n\
             exec '{}' \"$@\"\n",
            clang.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    // SAFETY: set before any thread of this test binary reads the environment.
    unsafe { std::env::set_var(ekb_llvm::CLANG_ENV, &wrapper) };

    let (task, _keep) = tiny_task(tmp.path());
    let cands = tmp.path().join("cands");
    for (i, kernel) in ["refuse_me", "fine"].iter().enumerate() {
        let dir = cands.join(format!("relu_tiny/cpu/sample-{i}"));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("candidate.ekir"),
            format!(
                "module relu_tiny {{\n  input x: f32[64,64]\n  output y: f32[64,64]\n\n  \
                 kernel {kernel}(x: f32[64,64] in, y: f32[64,64] out) {{\n    for i in 0..64 {{\n      \
                 for j in 0..64 {{\n        y[i, j] = max(x[i, j], 0.0)\n      }}\n    }}\n  }}\n\n  \
                 run {kernel}(x, y)\n}}\n"
            ),
        )
        .unwrap();
    }
    let run = evaluate_dir(
        &task,
        &config(Candidates::Dir(cands), 2),
        &tmp.path().join("run"),
        false,
        &mut Quiet::default(),
    );
    let refused = result_of(&run, 0);
    let f = refused.failure.as_ref().expect("the toolchain failed");
    assert_eq!(f.class, FailureClass::Compile, "{f:?}");
    assert!(f.evidence.contains("cannot select instruction"), "{}", f.evidence);
    assert!(!refused.compiled && !refused.correct);
    let fine = result_of(&run, 1);
    assert!(fine.compiled && fine.correct && fine.failure.is_none(), "{fine:?}");
}
