//! External-engine baselines on the host: an L0 graph exported to ONNX and timed in onnxruntime,
//! Apache TVM (untuned, or tuned with MetaSchedule) or MNN, reported in the runtime's own timing
//! form (`ekb_wire::protocol::Timing`), so reports can set "vs engine" next to a kernel's timings.
//!
//! Protocol, the same for every engine: the graph is exported with the seed's parameters, its
//! inputs are the seed's inputs; `warmup` untimed runs are followed by `samples` timed ones, each
//! one whole inference as the engine's Python API runs it (Python's `perf_counter_ns`, which
//! includes a few microseconds of call overhead; what each engine's run includes is its
//! `Timing::clock`). The engine's outputs are compared with the reference interpreter's: a
//! baseline that computes something else is reported as such (`outputs_match: false`), never
//! silently timed. The comparison's tolerance is part of the result: the evaluation tolerance,
//! except for MNN, whose Winograd convolution can differ from a direct one by about 1e-3 and is
//! compared at [`MNN_TOLERANCE`] (integers always compare exactly). Statistics as in the runtime:
//! median, min, mean, 10th and 90th percentiles (linear interpolation), cv (sample standard
//! deviation / mean) and rse (relative standard error of the median, `sqrt(pi/2) * sd / sqrt(n) /
//! median`, the large-sample value for a normal sample).
//!
//! TVM's MetaSchedule records are kept per target, graph and trial budget
//! (`ROOT/<target>/<graph key>/<trials>-trials/`, see [`graph_key`] and [`default_tune_root`]), so
//! a graph is tuned once per target and trial budget and the records are reused after that.

pub use crate::python::Server;
use crate::python::{
    bench, require, require_packages, BenchJob, Helper, TvmJob, MNN_PIP, TVM_PIP, TVM_TUNE_PIP,
};
use crate::{export_bytes, npy};
use ekb_ir::l0::{inputs, interp, print::print, Graph};
use ekb_ir::target::TargetProfile;
use ekb_ir::tensor::{compare, write_npy, Tensor, Tolerance};
use ekb_ir::types::DType;
use ekb_wire::protocol::{Stats, StopReason, Timing};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The pause before each side's turn when an engine is timed in alternation with other sides:
/// an engine's thread pool spins for a while after a run, and must be asleep when another side
/// is timed.
pub const QUIET: std::time::Duration = std::time::Duration::from_millis(50);

/// How to time a baseline.
#[derive(Debug, Clone, Copy)]
pub struct BaselineOptions {
    pub seed: u64,
    pub warmup: u32,
    pub samples: u32,
    /// Intra-op threads; 0 lets the engine choose.
    pub threads: u32,
}

/// The engine a baseline runs in.
#[derive(Debug, Clone, PartialEq)]
pub enum Engine {
    /// onnxruntime's CPU execution provider.
    Onnxruntime,
    /// Apache TVM through its Relax ONNX frontend, for this machine's CPU.
    Tvm(TvmOptions),
    /// MNN's CPU backend, after MNN's converter.
    Mnn,
}

/// An engine as the commands name it (`ekb bench --engines --engine`, `ekb eval --baseline
/// engine:NAME`).
#[derive(Debug, Clone, PartialEq)]
pub enum EngineName {
    Onnxruntime,
    Mnn,
    Tvm,
    /// TVM with MetaSchedule, this many trials (records cached and reused).
    TvmTuned(u32),
}

impl EngineName {
    /// The spellings [`EngineName::parse`] takes (`TRIALS` a number of at least 1).
    pub const SPELLINGS: [&'static str; 4] = ["onnxruntime", "mnn", "tvm", "tvm-tuned:TRIALS"];

    /// `onnxruntime` (or `ort`), `mnn`, `tvm` or `tvm-tuned:N`.
    pub fn parse(s: &str) -> Result<EngineName, String> {
        match s.trim() {
            "onnxruntime" | "ort" => Ok(EngineName::Onnxruntime),
            "mnn" => Ok(EngineName::Mnn),
            "tvm" => Ok(EngineName::Tvm),
            other => match other.strip_prefix("tvm-tuned:").map(str::parse::<u32>) {
                Some(Ok(n)) if n > 0 => Ok(EngineName::TvmTuned(n)),
                _ => Err(format!(
                    "`--engine {other}`: expected onnxruntime, mnn, tvm or tvm-tuned:TRIALS (TRIALS >= 1)"
                )),
            },
        }
    }

    /// The spelling [`EngineName::parse`] reads back (`tvm-tuned:64`).
    pub fn name(&self) -> String {
        match self {
            EngineName::TvmTuned(n) => format!("tvm-tuned:{n}"),
            other => other.label(),
        }
    }

    /// The column name of a table (`tvm-ms64` for MetaSchedule with 64 trials).
    pub fn label(&self) -> String {
        match self {
            EngineName::Onnxruntime => "onnxruntime".into(),
            EngineName::Mnn => "mnn".into(),
            EngineName::Tvm => "tvm".into(),
            EngineName::TvmTuned(n) => format!("tvm-ms{n}"),
        }
    }

    /// The engine, compiling for `host` (a profile of this machine) where it compiles.
    pub fn engine(&self, host: &TargetProfile) -> Result<Engine, String> {
        Ok(match self {
            EngineName::Onnxruntime => Engine::Onnxruntime,
            EngineName::Mnn => Engine::Mnn,
            EngineName::Tvm => Engine::Tvm(TvmOptions::for_profile(host, None)?),
            EngineName::TvmTuned(trials) => {
                let tune = TuneOptions { trials: *trials, root: default_tune_root()? };
                Engine::Tvm(TvmOptions::for_profile(host, Some(tune))?)
            }
        })
    }
}

/// TVM's target and tuning.
#[derive(Debug, Clone, PartialEq)]
pub struct TvmOptions {
    /// LLVM CPU name; `native` is this machine's.
    pub mcpu: String,
    /// LLVM features (`+neon`, ...).
    pub mattr: Vec<String>,
    /// MetaSchedule tuning; `None`: untuned.
    pub tune: Option<TuneOptions>,
}

/// MetaSchedule's budget and where its records are kept.
#[derive(Debug, Clone, PartialEq)]
pub struct TuneOptions {
    /// Trials in total over all tuning tasks (at least 1).
    pub trials: u32,
    /// Records go to `root/<target>/<graph key>/<trials>-trials/`.
    pub root: PathBuf,
}

impl TvmOptions {
    /// The CPU and features of a target profile. The baseline runs on this machine, so the
    /// profile must describe a CPU of this machine's architecture.
    pub fn for_profile(p: &TargetProfile, tune: Option<TuneOptions>) -> Result<TvmOptions, String> {
        let arch = p.cpu.triple.split('-').next().unwrap_or_default();
        if arch != std::env::consts::ARCH {
            return Err(format!(
                "target `{}` is {arch} but this machine is {}: a TVM baseline is compiled for and run on this machine; use the profile of this machine (`--target host`)",
                p.name,
                std::env::consts::ARCH
            ));
        }
        if tune.as_ref().is_some_and(|t| t.trials == 0) {
            return Err("`--tune` needs at least 1 trial".into());
        }
        Ok(TvmOptions { mcpu: p.cpu.cpu.clone(), mattr: p.cpu.features.clone(), tune })
    }
}

/// Where tuning records are kept unless told otherwise: `$XDG_CACHE_HOME/ekb/tvm`, or
/// `$HOME/.cache/ekb/tvm`.
pub fn default_tune_root() -> Result<PathBuf, String> {
    let var = |k: &str| std::env::var_os(k).map(PathBuf::from);
    tune_root_in(var("XDG_CACHE_HOME"), var("HOME")).ok_or(
        "neither XDG_CACHE_HOME nor HOME is set: give the tuning records' folder with `--tune-dir`".into(),
    )
}

/// [`default_tune_root`] for these values of `XDG_CACHE_HOME` and `HOME` (empty: unset).
fn tune_root_in(xdg_cache: Option<PathBuf>, home: Option<PathBuf>) -> Option<PathBuf> {
    let set = |p: Option<PathBuf>| p.filter(|p| !p.as_os_str().is_empty());
    let cache = set(xdg_cache).or_else(|| set(home).map(|h| h.join(".cache")))?;
    Some(cache.join("ekb").join("tvm"))
}

/// The key of a graph's tuning records: the graph's name and the FNV-1a 64-bit hash of its
/// canonical text, so any change to the graph (shapes, attributes, parameters) gets new records.
pub fn graph_key(g: &Graph) -> String {
    let hash = print(g)
        .bytes()
        .fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3));
    format!("{}-{hash:016x}", g.name)
}

/// MNN's comparison tolerance for f32 outputs: its Winograd convolution (3x3 and larger kernels)
/// can differ from a direct convolution by about 1e-3.
pub const MNN_TOLERANCE: Tolerance = Tolerance { atol: 1e-3, rtol: 1e-3 };

/// The tolerance the outputs were compared at (f32; i32 outputs compare exactly).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToleranceUsed {
    pub atol: f64,
    pub rtol: f64,
    /// Why this tolerance.
    pub note: String,
}

/// MetaSchedule tuning of a TVM baseline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Tuning {
    pub trials: u32,
    /// The folder of the records.
    pub dir: PathBuf,
    /// Whether the records were there already (no tuning this time).
    pub reused: bool,
    /// Tuning (when not reused) and applying the records, in seconds.
    pub seconds: f64,
}

/// One baseline measurement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Baseline {
    pub engine: String,
    pub engine_version: String,
    pub graph: String,
    pub seed: u64,
    pub threads: u32,
    /// onnxruntime: its execution providers; TVM: its target; MNN: backend and precision.
    pub providers: Vec<String>,
    /// Whether the engine's outputs match the reference interpreter's within `tolerance`.
    pub outputs_match: bool,
    /// One line per output that differs.
    pub mismatches: Vec<String>,
    /// The tolerance of the comparison.
    #[serde(default = "evaluation_tolerance")]
    pub tolerance: ToleranceUsed,
    /// The largest absolute difference from the reference over all f32 outputs.
    #[serde(default)]
    pub max_abs_error: f64,
    /// TVM with MetaSchedule only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tuning: Option<Tuning>,
    pub timing: Timing,
}

fn evaluation_tolerance() -> ToleranceUsed {
    let t = Tolerance::default_for(DType::F32);
    ToleranceUsed { atol: t.atol, rtol: t.rtol, note: "the evaluation tolerance".into() }
}

/// Checks that the engine's Python packages import (the error gives the `pip` command).
pub fn require_engine(engine: &Engine) -> Result<(), String> {
    const SETUP: &str = "toolchains/setup.sh --baselines";
    match engine {
        Engine::Onnxruntime => require(&["onnxruntime", "numpy"]),
        Engine::Tvm(t) => {
            let mut mods: Vec<(&str, &[&str])> =
                vec![("tvm", TVM_PIP), ("onnx", &["onnx"]), ("numpy", &["numpy"])];
            if t.tune.is_some() {
                mods.extend(TVM_TUNE_PIP.iter().map(|(m, p)| (*m, std::slice::from_ref(p))));
            }
            require_packages(&mods, SETUP)
        }
        Engine::Mnn => require_packages(
            &[("MNN", &[MNN_PIP]), ("_tools", &[MNN_PIP]), ("onnx", &["onnx"]), ("numpy", &["numpy"])],
            SETUP,
        ),
    }
}

/// The engine's version, as its Python package reports it (what a baseline's `engine_version`
/// holds), without starting the engine.
pub fn engine_version(engine: &Engine) -> Result<String, String> {
    let expr = match engine {
        Engine::Onnxruntime => "__import__('onnxruntime').__version__",
        Engine::Tvm(_) => "__import__('tvm').__version__",
        Engine::Mnn => "__import__('MNN').version()",
    };
    let out = crate::python::run_script(&format!("print({expr})"), &[], None)?;
    Ok(out.lines().last().unwrap_or_default().trim().to_string())
}

/// Times `g` in `engine`; `work` holds the model, the inputs and the engine's outputs.
pub fn run(g: &Graph, engine: &Engine, opts: BaselineOptions, work: &Path) -> Result<Baseline, String> {
    start(g, engine, opts, work, false).map(|(b, _)| b)
}

/// [`run`], then the engine kept loaded: the [`Server`] times the same model on request, so a
/// comparison can alternate between engines (and ekb) in one run without restarting any.
pub fn serve(
    g: &Graph,
    engine: &Engine,
    opts: BaselineOptions,
    work: &Path,
) -> Result<(Baseline, Server), String> {
    let (b, server) = start(g, engine, opts, work, true)?;
    Ok((b, server.expect("a serving helper")))
}

fn start(
    g: &Graph,
    engine: &Engine,
    opts: BaselineOptions,
    work: &Path,
    serve: bool,
) -> Result<(Baseline, Option<Server>), String> {
    require_engine(engine)?;
    if opts.samples == 0 {
        return Err("at least one sample is needed".into());
    }
    let model = work.join(format!("{}.onnx", g.name));
    std::fs::write(&model, export_bytes(g, opts.seed).map_err(|d| d.to_string())?)
        .map_err(|e| format!("cannot write `{}`: {e}", model.display()))?;
    let data = inputs::generate(g, opts.seed).map_err(|d| d.to_string())?;
    let tensors = data.iter().map(|(n, b)| (n.clone(), b.to_tensor())).collect();
    for (name, buf) in data.iter().filter(|(n, _)| g.inputs.iter().any(|d| &d.name == n)) {
        let p = work.join(format!("input.{name}.npy"));
        write_npy(&p, buf).map_err(|e| format!("cannot write `{}`: {e}", p.display()))?;
    }
    let reference = interp::run(g, &tensors).map_err(|d| d.to_string())?;
    let outputs = work.join("outputs");
    let result = work.join("result.json");
    let job = BenchJob {
        model: model.clone(),
        inputs: work.to_path_buf(),
        outputs: outputs.clone(),
        result: result.clone(),
        warmup: opts.warmup,
        samples: opts.samples,
        threads: opts.threads,
        serve,
    };
    fn json(v: &impl Serialize) -> String {
        serde_json::to_string(v).expect("jobs serialise")
    }
    let (name, helper, job, clock, tolerance) = match engine {
        Engine::Onnxruntime => (
            "onnxruntime",
            Helper::Ort,
            json(&job),
            "perf_counter_ns around session.run_with_iobinding (inputs and outputs bound once)",
            evaluation_tolerance(),
        ),
        Engine::Tvm(t) => (
            "tvm",
            Helper::Tvm,
            json(&TvmJob {
                job,
                mcpu: t.mcpu.clone(),
                mattr: t.mattr.clone(),
                tune_trials: t.tune.as_ref().map_or(0, |u| u.trials),
                tune_root: t.tune.as_ref().map(|u| u.root.clone()).unwrap_or_default(),
                graph_key: graph_key(g),
            }),
            "perf_counter_ns around vm[\"main\"](...) (inputs already TVM tensors, outputs left as TVM tensors)",
            evaluation_tolerance(),
        ),
        Engine::Mnn => (
            "mnn",
            Helper::Mnn,
            json(&job),
            "perf_counter_ns around copying the inputs in, runSession and copying the outputs out",
            ToleranceUsed {
                atol: MNN_TOLERANCE.atol,
                rtol: MNN_TOLERANCE.rtol,
                note: "MNN's Winograd convolution can differ from a direct one by about 1e-3: ten times the evaluation tolerance".into(),
            },
        ),
    };
    let (bench, server) = bench(helper, &job, &result, serve)?;
    let tol = Tolerance { atol: tolerance.atol, rtol: tolerance.rtol };
    let (mismatches, max_abs_error) = check_outputs(g, &reference, &outputs, tol)?;
    let baseline = Baseline {
        engine: name.into(),
        engine_version: bench.version,
        graph: g.name.clone(),
        seed: opts.seed,
        threads: bench.threads,
        providers: bench.providers,
        outputs_match: mismatches.is_empty(),
        mismatches,
        tolerance,
        max_abs_error,
        tuning: bench.tuning,
        timing: Timing {
            stats: stats(&bench.samples_ns),
            samples_ns: bench.samples_ns,
            reps: 1,
            warmup: bench.warmup,
            cold_cache: false,
            clock: clock.into(),
            stop: StopReason::MaxSamples,
        },
    };
    Ok((baseline, server))
}

/// Compares the engine's outputs (`dir/output.NAME.npy`) with the reference: one line per
/// output that differs (f32 at `tol`, i32 exactly), and the largest f32 difference.
fn check_outputs(
    g: &Graph,
    reference: &[Tensor],
    dir: &Path,
    tol: Tolerance,
) -> Result<(Vec<String>, f64), String> {
    let mut mismatches = Vec::new();
    let mut max_abs_error: f64 = 0.0;
    for (o, r) in g.outputs.iter().zip(reference) {
        let got = npy::read(&dir.join(format!("output.{}.npy", o.name)))?;
        if got.ty != o.ty {
            mismatches.push(format!("output `{}` has type {}, expected {}", o.name, got.ty, o.ty));
            continue;
        }
        let got = got.to_tensor();
        if o.ty.dtype == DType::F32 {
            for (a, b) in r.data.iter().zip(&got.data) {
                let e = (a - b).abs();
                if e > max_abs_error || e.is_nan() {
                    max_abs_error = if e.is_nan() { f64::INFINITY } else { e };
                }
            }
        }
        let tol = if o.ty.dtype == DType::F32 { tol } else { Tolerance::default_for(o.ty.dtype) };
        if let Err(m) = compare(r, &got, tol) {
            mismatches.push(format!("output `{}`: {m}", o.name));
        }
    }
    Ok((mismatches, max_abs_error))
}

/// Statistics of samples in nanoseconds (see the module header); all zero for no samples.
pub fn stats(samples: &[u64]) -> Stats {
    let mut v: Vec<f64> = samples.iter().map(|&s| s as f64).collect();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        return Stats {
            median_ns: 0.0,
            min_ns: 0.0,
            mean_ns: 0.0,
            p10_ns: 0.0,
            p90_ns: 0.0,
            cv: 0.0,
            rse: 0.0,
        };
    }
    let pct = |p: f64| {
        let x = p * (n - 1) as f64;
        let (lo, hi) = (x.floor() as usize, x.ceil() as usize);
        v[lo] + (v[hi] - v[lo]) * (x - lo as f64)
    };
    let mean = v.iter().sum::<f64>() / n as f64;
    let sd =
        if n > 1 { (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt() } else { 0.0 };
    let median = pct(0.5);
    Stats {
        median_ns: median,
        min_ns: v[0],
        mean_ns: mean,
        p10_ns: pct(0.1),
        p90_ns: pct(0.9),
        cv: if mean > 0.0 { sd / mean } else { 0.0 },
        rse: if median > 0.0 {
            (std::f64::consts::PI / 2.0).sqrt() * sd / (n as f64).sqrt() / median
        } else {
            0.0
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ekb_ir::diag::SourceFile;
    use ekb_ir::types::TensorType;

    fn graph(text: &str) -> Graph {
        ekb_ir::l0::check::load(&SourceFile::new("t.ekir", text)).expect("the test graph checks")
    }

    const CONV: &str = "graph c(x: f32[1,2,4,4]) -> (y: f32[1,2,4,4]) {\n  param w: f32[2,2,3,3] = kaiming_uniform\n  %0: f32[1,2,4,4] = conv2d(x, w, stride=[1,1], pad=[1,1,1,1], dilation=[1,1], groups=1)\n  return %0\n}\n";

    #[test]
    fn graph_key_follows_the_canonical_text() {
        let k = graph_key(&graph(CONV));
        assert!(k.starts_with("c-") && k.len() == 2 + 16, "{k}");
        assert_eq!(k, graph_key(&graph(CONV)), "the same graph gets the same key");
        // Layout and comments do not change the canonical text, so not the key either.
        let spaced = format!("# a comment\n{}", CONV.replace("stride=[1,1]", "stride = [1, 1]"));
        assert_eq!(k, graph_key(&graph(&spaced)));
        // Any attribute does.
        let grouped = CONV.replace("groups=1", "groups=2").replace("w: f32[2,2,3,3]", "w: f32[2,1,3,3]");
        assert_ne!(k, graph_key(&graph(&grouped)));
        // FNV-1a 64 by hand on one byte: (offset ^ b'a') * prime.
        let one = (0xcbf2_9ce4_8422_2325u64 ^ 0x61).wrapping_mul(0x0100_0000_01b3);
        assert_eq!(one, 0xaf63_dc4c_8601_ec8c, "the published FNV-1a 64 value of \"a\"");
    }

    #[test]
    fn tune_root_prefers_xdg_then_home() {
        let p = |s: &str| Some(PathBuf::from(s));
        assert_eq!(tune_root_in(p("/c"), p("/h")), p("/c/ekb/tvm"));
        assert_eq!(tune_root_in(None, p("/h")), p("/h/.cache/ekb/tvm"));
        assert_eq!(tune_root_in(p(""), p("/h")), p("/h/.cache/ekb/tvm"), "an empty variable is unset");
        assert_eq!(tune_root_in(None, None), None);
    }

    #[test]
    fn tvm_options_come_from_a_profile_of_this_architecture() {
        let host = TargetProfile::load("host").unwrap();
        let board = TargetProfile::load("rk3588").unwrap();
        let (here, there) = if std::env::consts::ARCH == "x86_64" { (host, board) } else { (board, host) };
        let t = TvmOptions::for_profile(&here, None).unwrap();
        assert_eq!((t.mcpu.as_str(), &t.mattr), (here.cpu.cpu.as_str(), &here.cpu.features));
        let e = TvmOptions::for_profile(&there, None).unwrap_err();
        assert!(e.contains(&format!("target `{}` is", there.name)) && e.contains("--target host"), "{e}");
        let zero = TuneOptions { trials: 0, root: "r".into() };
        assert!(TvmOptions::for_profile(&here, Some(zero)).unwrap_err().contains("at least 1 trial"));
    }

    #[test]
    fn outputs_compare_at_the_given_tolerance() {
        let g = graph("graph o(x: f32[2]) -> (y: f32[2], i: i32[]) {\n  %0: f32[2] = relu(x)\n  %1: i32[] = argmax(x, axis=0, keepdims=false)\n  return %0, %1\n}\n");
        let dir = tempfile::tempdir().unwrap();
        let f32s = |v: Vec<f32>| ekb_ir::tensor::Buffer {
            ty: TensorType { dtype: DType::F32, shape: vec![2] },
            data: ekb_ir::tensor::BufData::F32(v),
        };
        let i32s = |v: i32| ekb_ir::tensor::Buffer {
            ty: TensorType { dtype: DType::I32, shape: vec![] },
            data: ekb_ir::tensor::BufData::I32(vec![v]),
        };
        let reference = vec![f32s(vec![1.0, 2.0]).to_tensor(), i32s(1).to_tensor()];
        write_npy(&dir.path().join("output.y.npy"), &f32s(vec![1.0005, 2.0])).unwrap();
        write_npy(&dir.path().join("output.i.npy"), &i32s(1)).unwrap();
        let evaluation = Tolerance::default_for(DType::F32);
        let (bad, err) = check_outputs(&g, &reference, dir.path(), evaluation).unwrap();
        assert_eq!(bad.len(), 1, "{bad:?}");
        assert!(bad[0].starts_with("output `y`: 1 of 2 elements differ; first at [0]"), "{}", bad[0]);
        assert!((err - 5e-4).abs() < 1e-7, "1.0005 as f32 is 1 + 5.0004e-4: {err}");
        let (ok, _) = check_outputs(&g, &reference, dir.path(), MNN_TOLERANCE).unwrap();
        assert!(ok.is_empty(), "5e-4 is within MNN's 1e-3 + 1e-3 * 1: {ok:?}");
        // Integers compare exactly whatever the f32 tolerance; a wrong type is named.
        write_npy(&dir.path().join("output.i.npy"), &i32s(0)).unwrap();
        let (bad, _) = check_outputs(&g, &reference, dir.path(), MNN_TOLERANCE).unwrap();
        assert!(bad.len() == 1 && bad[0].starts_with("output `i`: 1 of 1 elements differ"), "{bad:?}");
        write_npy(&dir.path().join("output.i.npy"), &f32s(vec![0.0, 1.0])).unwrap();
        let (bad, _) = check_outputs(&g, &reference, dir.path(), MNN_TOLERANCE).unwrap();
        assert_eq!(bad, ["output `i` has type f32[2], expected i32[]"]);
        std::fs::remove_file(dir.path().join("output.y.npy")).unwrap();
        assert!(
            check_outputs(&g, &reference, dir.path(), evaluation).is_err(),
            "a missing output is an error"
        );
    }

    #[test]
    fn engine_names_read_back_their_spelling() {
        for s in ["onnxruntime", "mnn", "tvm", "tvm-tuned:64"] {
            assert_eq!(EngineName::parse(s).unwrap().name(), s);
        }
        assert_eq!(EngineName::parse("ort"), Ok(EngineName::Onnxruntime));
        assert_eq!(EngineName::TvmTuned(8).label(), "tvm-ms8");
        for bad in ["tvm-tuned:0", "tvm-tuned:x", "torch"] {
            assert!(EngineName::parse(bad).unwrap_err().contains("tvm-tuned:TRIALS"), "{bad}");
        }
    }

    #[test]
    fn the_version_is_the_one_a_baseline_reports() {
        // onnxruntime is installed by `toolchains/setup.sh`.
        let g = graph("graph r(x: f32[4]) -> (y: f32[4]) {\n  %0: f32[4] = relu(x)\n  return %0\n}\n");
        let dir = tempfile::tempdir().unwrap();
        let opts = BaselineOptions { seed: 0, warmup: 1, samples: 1, threads: 1 };
        let b = run(&g, &Engine::Onnxruntime, opts, dir.path()).unwrap();
        assert_eq!(engine_version(&Engine::Onnxruntime).unwrap(), b.engine_version);
    }

    #[test]
    fn stats_by_hand() {
        // Sorted: 10 20 30 40 100; mean 40; sd = sqrt((900+400+100+0+3600)/4) = sqrt(1250).
        let s = stats(&[40, 10, 100, 30, 20]);
        assert_eq!((s.median_ns, s.min_ns, s.mean_ns), (30.0, 10.0, 40.0));
        assert!((s.p10_ns - 14.0).abs() < 1e-12, "0.1 * 4 = 0.4 of the way from 10 to 20: {}", s.p10_ns);
        assert!((s.p90_ns - 76.0).abs() < 1e-12, "3.6: 40 + 0.6 * 60: {}", s.p90_ns);
        let sd = 1250f64.sqrt();
        assert!((s.cv - sd / 40.0).abs() < 1e-12);
        assert!((s.rse - (std::f64::consts::PI / 2.0).sqrt() * sd / 5f64.sqrt() / 30.0).abs() < 1e-12);
        let one = stats(&[7]);
        assert_eq!((one.median_ns, one.p10_ns, one.p90_ns, one.cv, one.rse), (7.0, 7.0, 7.0, 0.0, 0.0));
    }
}
