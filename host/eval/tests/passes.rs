//! What the graph passes did to a candidate, as the evaluator records it: the kernels and the
//! planned peak of the candidate as compiled, beside those of the same program compiled without
//! the passes. No device: the records come from the build step.

use ekb_eval::evaluate::candidate::Found;
use ekb_eval::evaluate::compile::{baseline_passes, build_baseline, build_candidate};
use ekb_eval::results::PassesRecord;
use ekb_eval::tasks::{load_task, Backend, Task};
use ekb_ir::TargetProfile;
use ekb_lower::Schedule;

/// A task whose graph computes `relu(x)` twice (one for CSE) and an `exp` nobody reads (one for
/// DCE).
const REPEATED: &str = "graph repeated(x: f32[64,64]) -> (y: f32[64,64]) {
  %0: f32[64,64] = relu(x)
  %1: f32[64,64] = relu(x)
  %2: f32[64,64] = exp(x)
  %3: f32[64,64] = add(%0, %1)
  return %3
}
";

fn task(dir: &std::path::Path, name: &str, graph: &str) -> Task {
    let path = dir.join(format!("{name}.ekir"));
    let header = "# task: level=1 family=activation domains=[mobile]\n\
                  # provenance: model=test layer=relu module=torch.nn.ReLU source=tests\n";
    std::fs::write(&path, format!("{header}{graph}")).unwrap();
    load_task(&path).unwrap_or_else(|ds| panic!("{}", ds[0]))
}

fn options() -> ekb_deploy::BuildOptions {
    ekb_deploy::BuildOptions { seeds: vec![0], ..ekb_deploy::BuildOptions::default() }
}

/// The record is consistent: after is the program as built (the kernels an execution runs), and
/// the passes never add kernels.
fn check(record: &PassesRecord, built: &ekb_deploy::Built) {
    let executed = built.module.plan.iter().filter(|r| !r.prepare).count();
    assert_eq!(record.after.kernels, executed, "{record:?}");
    assert!(record.after.kernels <= record.before.kernels, "{record:?}");
    assert!(record.after.planned_peak_bytes > 0 && record.before.planned_peak_bytes > 0, "{record:?}");
}

#[test]
fn the_passes_remove_the_repeated_and_the_dead_kernels_of_a_candidate_and_of_the_builtin_schedule() {
    let tmp = tempfile::tempdir().unwrap();
    let target = TargetProfile::load("host").unwrap();
    let t = task(tmp.path(), "repeated", REPEATED);

    // An L0 candidate: the task's graph as written.
    let found = Found::Text { text: REPEATED.into(), origin: "repeated/cpu/sample-0/candidate.ekir".into() };
    let c = build_candidate(&t, &found, Backend::Cpu, &target, &options())
        .unwrap_or_else(|(_, f)| panic!("{f:?}"));
    let record = c.passes.expect("an L0 candidate has a record");
    check(&record, &c.built);
    assert!(record.after.kernels < record.before.kernels, "cse and dce remove kernels: {record:?}");
    assert!(record.after.planned_peak_bytes <= record.before.planned_peak_bytes, "{record:?}");

    // The builtin schedule of the same task: the same figures.
    let built = build_baseline(&t, Schedule::Default, Backend::Cpu, &target, &options()).unwrap();
    let builtin = baseline_passes(&t, Schedule::Default, Backend::Cpu, &target, &built).unwrap();
    check(&builtin, &built);
    assert_eq!(builtin, record);

    // A graph the passes leave alone: the same size both ways.
    let plain = task(
        tmp.path(),
        "plain",
        "graph plain(x: f32[64,64]) -> (y: f32[64,64]) {\n  %0: f32[64,64] = relu(x)\n  return %0\n}\n",
    );
    let built = build_baseline(&plain, Schedule::Default, Backend::Cpu, &target, &options()).unwrap();
    let same = baseline_passes(&plain, Schedule::Default, Backend::Cpu, &target, &built).unwrap();
    check(&same, &built);
    assert_eq!(same.before, same.after);
}

#[test]
fn an_l1_candidate_has_no_record() {
    let tmp = tempfile::tempdir().unwrap();
    let target = TargetProfile::load("host").unwrap();
    let t = task(
        tmp.path(),
        "plain",
        "graph plain(x: f32[4]) -> (y: f32[4]) {\n  %0: f32[4] = relu(x)\n  return %0\n}\n",
    );
    let l1 = "module plain {\n  input x: f32[4]\n  output y: f32[4]\n\n  kernel k(x: f32[4] in, y: f32[4] out) {\n    \
              for i in 0..4 {\n      y[i] = max(x[i], 0.0)\n    }\n  }\n\n  run k(x, y)\n}\n";
    let found = Found::Text { text: l1.into(), origin: "plain/cpu/sample-0/candidate.ekir".into() };
    let c = build_candidate(&t, &found, Backend::Cpu, &target, &options())
        .unwrap_or_else(|(_, f)| panic!("{f:?}"));
    assert_eq!((c.kind, c.passes), ("l1", None));
}
