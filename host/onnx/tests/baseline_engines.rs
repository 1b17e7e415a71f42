//! The TVM and MNN baselines end to end: a small graph (a 3x3 convolution with bias under
//! `relu6`, and a transposed matmul: two outputs, two `ekb`-domain local functions the engines
//! must see inlined) exported, run and timed in each engine, its outputs checked against the
//! reference interpreter; MetaSchedule records (of a one-matmul graph) written once and reused;
//! every engine kept loaded and timed on request (`baseline::serve`).
//!
//! These need Python with `apache-tvm` (and MetaSchedule's `xgboost`, `cloudpickle`, `psutil`,
//! `tornado`), `MNN`, `onnx` and `numpy`: `toolchains/setup.sh --baselines` installs them and CI
//! runs it. A missing package fails the test with the `pip` command, it never skips.

use ekb_ir::diag::SourceFile;
use ekb_ir::l0::{self, Graph};
use ekb_onnx::baseline::{
    graph_key, run, serve, Baseline, BaselineOptions, Engine, TuneOptions, TvmOptions, MNN_TOLERANCE,
};

const BLOCK: &str = "\
graph block(x: f32[1,16,14,14], k: f32[1,16,6,14]) -> (y: f32[1,16,14,14], s: f32[1,16,14,6]) {
  param w: f32[16,16,3,3] = kaiming_uniform
  param b: f32[16] = uniform(-0.1, 0.1)
  %0 = conv2d(x, w, b, stride=[1,1], pad=[1,1,1,1], dilation=[1,1], groups=1)
  %1 = relu6(%0)
  %2 = matmul(x, k, transpose_a=false, transpose_b=true)
  return %1, %2
}
";

/// One tuning task only: MetaSchedule's fixed cost (starting its builder and runner processes)
/// is most of a small tuning's time, and it is paid per task.
const MATMUL: &str = "\
graph mm(a: f32[16,32], b: f32[32,16]) -> (y: f32[16,16]) {
  %0 = matmul(a, b, transpose_a=false, transpose_b=false)
  return %0
}
";

fn graph(text: &str) -> Graph {
    l0::check::load(&SourceFile::new("test.ekir", text)).expect("the test graph checks")
}

const OPTS: BaselineOptions = BaselineOptions { seed: 1, warmup: 2, samples: 5, threads: 1 };

fn baseline(g: &Graph, engine: &Engine) -> Baseline {
    let work = tempfile::tempdir().unwrap();
    run(g, engine, OPTS, work.path()).unwrap_or_else(|e| panic!("{e}"))
}

/// What every engine's result must say: matched outputs, the samples asked for, sane statistics.
fn check_common(b: &Baseline, engine: &str, graph: &str) {
    assert!(b.outputs_match, "{engine}: {:?}", b.mismatches);
    assert_eq!((b.engine.as_str(), b.graph.as_str(), b.seed, b.threads), (engine, graph, 1, 1));
    assert_eq!((b.timing.samples_ns.len(), b.timing.warmup), (5, 2));
    let s = &b.timing.stats;
    assert!(s.min_ns > 0.0 && s.min_ns <= s.median_ns && s.median_ns <= s.p90_ns, "{s:?}");
    assert!(b.max_abs_error <= b.tolerance.atol + b.tolerance.rtol * 6.0, "{engine}: {}", b.max_abs_error);
}

fn tvm(tune: Option<TuneOptions>) -> Engine {
    let host = ekb_ir::target::TargetProfile::load("host").unwrap();
    Engine::Tvm(TvmOptions::for_profile(&host, tune).unwrap())
}

#[test]
fn tvm_untuned_matches_the_interpreter() {
    let b = baseline(&graph(BLOCK), &tvm(None));
    check_common(&b, "tvm", "block");
    assert!(b.engine_version.starts_with("0.27"), "{}", b.engine_version);
    assert_eq!(b.tuning, None);
    assert_eq!((b.tolerance.atol, b.tolerance.rtol), (1e-4, 1e-4));
    // `native` is resolved to the CPU LLVM detects, and the thread count is the target's cores.
    let target = &b.providers[0];
    assert!(target.contains("\"kind\":\"llvm\"") && target.contains("\"num-cores\":1"), "{target}");
    assert!(!target.contains("native"), "{target}");
}

#[test]
fn mnn_matches_the_interpreter_at_its_stated_tolerance() {
    let b = baseline(&graph(BLOCK), &Engine::Mnn);
    check_common(&b, "mnn", "block");
    assert_eq!(b.providers, ["CPU", "precision=normal"]);
    assert_eq!((b.tolerance.atol, b.tolerance.rtol), (MNN_TOLERANCE.atol, MNN_TOLERANCE.rtol));
    assert!(b.tolerance.note.contains("Winograd"), "{}", b.tolerance.note);
}

#[test]
fn tvm_tuning_records_are_written_once_then_reused() {
    let root = tempfile::tempdir().unwrap();
    let engine = tvm(Some(TuneOptions { trials: 2, root: root.path().to_path_buf() }));
    let mm = graph(MATMUL);
    let first = baseline(&mm, &engine);
    check_common(&first, "tvm", "mm");
    let t = first.tuning.as_ref().expect("a tuned baseline reports its tuning");
    assert_eq!((t.trials, t.reused), (2, false));
    // ROOT/<target>/<graph key>/<trials>-trials/, with the records and the marker.
    assert_eq!(t.dir.parent().and_then(|p| p.parent()).and_then(|p| p.parent()), Some(root.path()));
    assert_eq!(t.dir.file_name().unwrap().to_str().unwrap(), "2-trials");
    assert_eq!(t.dir.parent().unwrap().file_name().unwrap().to_str().unwrap(), graph_key(&mm));
    let records = std::fs::read_to_string(t.dir.join("database_tuning_record.json")).unwrap();
    assert!(records.lines().count() >= 1, "MetaSchedule wrote no record");
    let marker: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(t.dir.join("ekb-tuning.json")).unwrap()).unwrap();
    assert_eq!(marker["trials"], 2);

    // What a killed tuning leaves (no process has that id: Linux ids stay below 2^22) is removed.
    let abandoned = t.dir.with_file_name("2-trials.tuning-999999999");
    std::fs::create_dir(&abandoned).unwrap();
    let second = baseline(&mm, &engine);
    assert!(!abandoned.exists(), "the abandoned tuning folder is still there");
    check_common(&second, "tvm", "mm");
    let again = second.tuning.as_ref().unwrap();
    assert_eq!((again.trials, again.reused, &again.dir), (2, true, &t.dir));
    assert!(
        again.seconds < t.seconds,
        "reusing ({} s) is faster than tuning ({} s)",
        again.seconds,
        t.seconds
    );
    assert_eq!(std::fs::read_to_string(t.dir.join("database_tuning_record.json")).unwrap(), records);
}

/// A serving engine answers timing requests with as many runs as asked, stays correct (its
/// one-shot result is checked as `run`'s), and ends when dropped.
#[test]
fn every_engine_serves_timing_requests() {
    let mm = graph(MATMUL);
    for engine in [Engine::Onnxruntime, Engine::Mnn, tvm(None)] {
        let work = tempfile::tempdir().unwrap();
        let (b, mut server) = serve(&mm, &engine, OPTS, work.path()).unwrap_or_else(|e| panic!("{e}"));
        check_common(&b, &b.engine.clone(), "mm");
        for n in [1, 7] {
            let t = server.time(n).unwrap_or_else(|e| panic!("{}: {e}", b.engine));
            assert_eq!(t.len(), n as usize, "{}", b.engine);
            assert!(t.iter().all(|&ns| ns > 0), "{}: {t:?}", b.engine);
        }
        drop(server);
    }
}
