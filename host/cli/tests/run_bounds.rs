//! `ekb run` and `ekb eval` refuse timing and thread values outside the protocol's request
//! bounds (`docs/protocol.md`) before they build or start anything, naming the legal range.

use std::process::Command;

fn ekb_run(extra: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_ekb"))
        .args(["run", "does-not-exist.ekir"])
        .args(extra)
        .output()
        .expect("ekb runs");
    assert!(!out.status.success(), "{extra:?} was accepted");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn out_of_bounds_run_options_are_refused_early() {
    let e = ekb_run(&["--max-samples", "0"]);
    assert!(e.contains("invalid value '0' for '--max-samples <MAX_SAMPLES>': 0 is not in 1..=100000"), "{e}");
    let e = ekb_run(&["--threads", "100000"]);
    assert!(e.contains("invalid value '100000' for '--threads <THREADS>': 100000 is not in 0..=1024"), "{e}");
    let e = ekb_run(&["--budget-ms", "0"]);
    assert!(e.contains("'--budget-ms <BUDGET_MS>': 0 is not in 1..=3600000"), "{e}");
    let e = ekb_run(&["--target-rse", "2"]);
    assert!(e.contains("expected a number in 0..=1"), "{e}");
}

#[test]
fn out_of_bounds_eval_options_are_refused_early() {
    let eval = |extra: &[&str]| {
        let dir = tempfile::tempdir().unwrap();
        let tasks = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tasks");
        let out = Command::new(env!("CARGO_BIN_EXE_ekb"))
            .args(["eval", "no-task-has-this-name", "--dir", tasks.to_str().unwrap(), "--out"])
            .arg(dir.path().join("out"))
            .args(extra)
            .output()
            .expect("ekb runs");
        assert!(!out.status.success(), "{extra:?} was accepted");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let e = eval(&["--threads", "100000"]);
    assert!(e.contains("100000 is not in 0..=1024"), "{e}");
    let e = eval(&["--budget", "5000"]);
    assert!(e.contains("`--budget 5000` must be a number of seconds in (0, 3600]"), "{e}");
    let e = eval(&["--timeout", "1e300"]);
    assert!(e.contains("must be a number of seconds in (0, 3600]"), "{e}");
    let e = eval(&["--target-rse", "2"]);
    assert!(e.contains("`--target-rse 2` must be a number in 0..=1"), "{e}");
    // A half-width above 1 (every interval passes) is legal; zero, negative or NaN is not.
    for bad in ["0", "-1", "NaN"] {
        let e = eval(&[&format!("--max-ci={bad}")]);
        assert!(e.contains(&format!("`--max-ci {bad}` must be a positive number")), "{e}");
    }
}
