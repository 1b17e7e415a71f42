//! ONNX's own node test cases (one operator node per model, with inputs and the outputs ONNX
//! expects) through the importer, the reference interpreter and the compiled CPU path, against
//! the committed table `conformance/table.md`.
//!
//! `conformance/node_cases.py` writes the cases from the `onnx` package; each one is imported
//! as the model is (its inputs stay graph inputs: an importer that folded one into a constant
//! would not test the operator, and is reported), run in the reference interpreter on the
//! case's inputs, then lowered with the default schedule, compiled with clang-19 through the
//! compile driver and run in this process. Each case is one row of the table:
//! - `pass`: the interpreter and the compiled kernels both give ONNX's outputs (dtypes, shapes,
//!   values within [`tolerance`]);
//! - `refused`: the importer (or a compile stage) refused the model; the reason is its
//!   diagnostic, shortened;
//! - `wrong`: an accepted model whose outputs differ from ONNX's, or that failed at run time.
//!
//! What it must keep true: the test fails on any `wrong` row and on any difference from the
//! committed table (a regression, or an improvement not recorded), printing the changed rows;
//! `EKB_BLESS=1` rewrites the table. A missing `onnx` package is a failure naming
//! `toolchains/setup.sh`, never a skip. Nothing is cached between runs.

use ekb_deploy::driver::{self, CompileOptions, Program, Sources};
use ekb_ir::l0::{inputs, interp, Graph};
use ekb_ir::tensor::{compare, Buffer, Tensor, Tolerance};
use ekb_ir::{DType, Diagnostic, TargetProfile};
use ekb_onnx::python::{python, require};
use ekb_onnx::{import, npy, ImportOptions};
use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// The committed table, relative to this crate.
const TABLE: &str = "tests/conformance/table.md";
/// The longest reason kept in the table (diagnostics are cut there).
const REASON_CHARS: usize = 160;

/// ONNX's backend tests' tolerance, `rtol 1e-3, atol 1e-7`, for f32 (the interpreter computes
/// in f64 and the kernels in f32, both within it on every case that passes); f16 results get
/// one f16 step (2^-10) relative; integers compare exactly.
fn tolerance(dtype: DType) -> Tolerance {
    match dtype {
        DType::F32 => Tolerance { atol: 1e-7, rtol: 1e-3 },
        DType::F16 => Tolerance { atol: 1e-7, rtol: 1.0 / 1024.0 },
        DType::I32 | DType::I8 => Tolerance { atol: 0.0, rtol: 0.0 },
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Status {
    Pass,
    Refused,
    Wrong,
}

impl Status {
    fn name(self) -> &'static str {
        match self {
            Status::Pass => "pass",
            Status::Refused => "refused",
            Status::Wrong => "wrong",
        }
    }
}

/// One case's outcome: its status and why.
type Outcome = (Status, String);

/// One case as `node_cases.py` lists it: the dtypes of the arrays written (`None`: not written).
#[derive(serde::Deserialize)]
struct Case {
    name: String,
    inputs: Vec<Option<String>>,
    outputs: Vec<Option<String>>,
}

#[derive(serde::Deserialize)]
struct Cases {
    onnx: String,
    cases: Vec<Case>,
}

#[test]
fn onnx_node_tests_match_the_committed_table() {
    require(&["numpy", "onnx"])
        .unwrap_or_else(|e| panic!("the ONNX node test cases need the `onnx` package: {e}"));
    let dir = tempfile::tempdir().expect("a temporary directory");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conformance/node_cases.py");
    let out = std::process::Command::new(python())
        .arg(&script)
        .arg(dir.path().join("cases"))
        .output()
        .unwrap_or_else(|e| panic!("cannot run `{}`: {e}", python()));
    assert!(
        out.status.success(),
        "{} failed ({}): {}",
        script.display(),
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let root = dir.path().join("cases");
    let listed: Cases = serde_json::from_slice(&std::fs::read(root.join("cases.json")).expect("cases.json"))
        .expect("cases.json parses");
    assert!(!listed.cases.is_empty(), "node_cases.py listed no cases");

    let target = TargetProfile::load("host").expect("the host profile");
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get());
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<Outcome>>> = Mutex::new(vec![None; listed.cases.len()]);
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(case) = listed.cases.get(i) else { break };
                let dir = root.join(&case.name);
                let outcome = std::panic::catch_unwind(|| run_case(case, &dir, &target))
                    .unwrap_or_else(|p| (Status::Wrong, format!("panicked: {}", panic_text(&p))));
                results.lock().unwrap()[i] = Some(outcome);
            });
        }
    });
    let rows: Vec<(String, Outcome)> = listed
        .cases
        .iter()
        .map(|c| c.name.clone())
        .zip(results.into_inner().unwrap().into_iter().map(|r| r.expect("every case ran")))
        .collect();

    let got = table(&listed.onnx, &rows);
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(TABLE);
    if std::env::var_os("EKB_BLESS").is_some_and(|v| v == "1") {
        std::fs::write(&path, &got).unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
    }
    let want = std::fs::read_to_string(&path).unwrap_or_default();
    let mut problems = Vec::new();
    let version = |t: &str| t.split("(`onnx` ").nth(1).and_then(|r| r.split(')').next()).map(str::to_string);
    if let Some(table_onnx) = version(&want).filter(|v| *v != listed.onnx) {
        problems.push(format!(
            "{TABLE} records the cases of onnx {table_onnx}, but `{}` has onnx {}, whose cases differ: \
             install onnx=={table_onnx} (as toolchains/setup.sh does), or bless the table for {}",
            python(),
            listed.onnx,
            listed.onnx
        ));
    }
    if got != want {
        problems.push(format!(
            "{TABLE} differs from this run (EKB_BLESS=1 rewrites it after a deliberate change):\n{}",
            row_diff(&want, &got)
        ));
    }
    let wrong: Vec<String> = rows
        .iter()
        .filter(|(_, (s, _))| *s == Status::Wrong)
        .map(|(name, (_, why))| format!("  {name}: {why}"))
        .collect();
    if !wrong.is_empty() {
        problems.push(format!(
            "{} cases give wrong answers (a model the importer accepts must compute ONNX's outputs, or be refused):\n{}",
            wrong.len(),
            wrong.join("\n")
        ));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}

/// Imports, interprets, compiles and runs one case.
fn run_case(case: &Case, dir: &Path, target: &TargetProfile) -> Outcome {
    let model = std::fs::read(dir.join("model.onnx")).expect("model.onnx");
    let opts = ImportOptions {
        name: Some(ekb_onnx::import::ident(&case.name)),
        data_file: "conformance.bin".into(),
        ..ImportOptions::default()
    };
    let g = match import(&model, &opts) {
        Ok(imported) => imported.graph,
        Err(d) => return (Status::Refused, short(&d)),
    };
    match check(case, dir, &g, target) {
        Ok(()) => (Status::Pass, String::new()),
        Err(outcome) => outcome,
    }
}

/// The interpreter's and the compiled kernels' outputs against ONNX's.
fn check(case: &Case, dir: &Path, g: &Graph, target: &TargetProfile) -> Result<(), Outcome> {
    // Reasons name a case's files by the case, not by this run's temporary folder.
    let wrong = |why: String| (Status::Wrong, why.replace(&dir.display().to_string(), &case.name));
    // Every graph input must reach the operator as an L0 input, in the model's order.
    if g.inputs.len() != case.inputs.len() {
        return Err(wrong(format!(
            "the model has {} graph inputs but the imported graph {}: an input was folded into a constant",
            case.inputs.len(),
            g.inputs.len()
        )));
    }
    let mut feed: HashMap<String, Buffer> = HashMap::new();
    for (j, decl) in g.inputs.iter().enumerate() {
        let b = npy::read(&dir.join(format!("input_{j}.npy")))
            .map_err(|e| wrong(format!("input {j} (`{}`) cannot be fed: {e}", decl.name)))?;
        if b.ty != decl.ty {
            return Err(wrong(format!(
                "input {j} is {} but the graph declares `{}: {}`",
                b.ty, decl.name, decl.ty
            )));
        }
        feed.insert(decl.name.clone(), b);
    }
    // Data parameters (the model's initializers) keep their values whatever the seed.
    for (name, b) in inputs::generate(g, 0).map_err(|d| wrong(short(&d)))? {
        feed.entry(name).or_insert(b);
    }
    if g.outputs.len() != case.outputs.len() {
        return Err(wrong(format!(
            "the imported graph has {} outputs, ONNX's model {}: an output was dropped",
            g.outputs.len(),
            case.outputs.len()
        )));
    }
    let mut expected = Vec::new();
    for (j, (o, dt)) in g.outputs.iter().zip(&case.outputs).enumerate() {
        let what = |e: String| wrong(format!("output `{}`: ONNX's expected value {e}", o.name));
        let dt = dt.as_deref().ok_or_else(|| what("is not a tensor".into()))?;
        let b = npy::read(&dir.join(format!("output_{j}.npy"))).map_err(|e| what(format!("({dt}): {e}")))?;
        if b.ty != o.ty {
            return Err(what(format!("is {} ({dt}) but the graph computes {}", b.ty, o.ty)));
        }
        expected.push(b.to_tensor());
    }

    let tensors: HashMap<String, Tensor> = feed.iter().map(|(n, b)| (n.clone(), b.to_tensor())).collect();
    let reference = interp::run(g, &tensors).map_err(|d| wrong(format!("interpreter: {}", short(&d))))?;
    for ((o, want), got) in g.outputs.iter().zip(&expected).zip(&reference) {
        compare_output("interpreter", &o.name, want, got)?;
    }

    let artifact = driver::compile(Program::Graph(g), Sources::default(), target, &CompileOptions::default())
        .map_err(|f| {
            let first = f.diagnostics.first().map_or_else(|| "no diagnostic".to_string(), short);
            (Status::Refused, format!("compile ({}): {first}", f.stage.name()))
        })?;
    let host = driver::load_host(&artifact, 1).map_err(|d| wrong(format!("load: {}", short(&d))))?;
    let got = host.run(&artifact.module, &feed).map_err(|d| wrong(format!("compiled run: {}", short(&d))))?;
    for (o, want) in g.outputs.iter().zip(&expected) {
        let b = got.get(&o.name).ok_or_else(|| wrong(format!("compiled: output `{}` missing", o.name)))?;
        compare_output("compiled", &o.name, want, &b.to_tensor())?;
    }
    Ok(())
}

/// One output against ONNX's, at the tolerance of its dtype.
fn compare_output(path: &str, name: &str, want: &Tensor, got: &Tensor) -> Result<(), Outcome> {
    if want.ty != got.ty {
        return Err((Status::Wrong, format!("{path}: output `{name}` is {}, ONNX's is {}", got.ty, want.ty)));
    }
    compare(want, got, tolerance(want.ty.dtype))
        .map_err(|m| (Status::Wrong, format!("{path}: output `{name}`: {m}")))
}

/// A diagnostic on one line, cut to [`REASON_CHARS`]: its first note (the importer's list of
/// problems has one per node or input, under a title that only counts them), else its message.
fn short(d: &Diagnostic) -> String {
    let mut s = d.notes.first().unwrap_or(&d.message).clone();
    if d.notes.len() > 1 {
        s.push_str(&format!(" (+{} more)", d.notes.len() - 1));
    }
    let s = s.replace('\n', " ").replace('|', "/");
    match s.char_indices().nth(REASON_CHARS) {
        Some((at, _)) => format!("{}...", &s[..at]),
        None => s,
    }
}

fn panic_text(p: &Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<String>()
        .cloned()
        .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "a panic without a message".into())
}

/// The table's text: a header with the counts, then one row per case.
fn table(onnx: &str, rows: &[(String, Outcome)]) -> String {
    let count = |s: Status| rows.iter().filter(|(_, (r, _))| *r == s).count();
    let mut t = format!(
        "# ONNX node tests\n\n\
         ONNX's node test cases (`onnx` {onnx}) through `import-onnx`, the reference interpreter and \
         the compiled CPU path (`host/onnx/tests/conformance.rs` writes this table; `EKB_BLESS=1` \
         rewrites it; `docs/onnx.md` says how to read it).\n\n\
         {} cases: {} pass, {} refused, {} wrong.\n\n\
         | case | status | reason |\n| --- | --- | --- |\n",
        rows.len(),
        count(Status::Pass),
        count(Status::Refused),
        count(Status::Wrong)
    );
    for (name, (status, why)) in rows {
        t.push_str(&format!("| {name} | {} | {why} |\n", status.name()));
    }
    t
}

/// The rows of the committed table that this run changes, added or drops (and a changed
/// header), one line each.
fn row_diff(want: &str, got: &str) -> String {
    let rows = |t: &str| -> BTreeMap<String, String> {
        t.lines()
            .filter_map(|l| l.strip_prefix("| test_"))
            .map(|l| {
                let (name, rest) = l.split_once(" | ").unwrap_or((l, ""));
                (format!("test_{name}"), rest.trim_end_matches(" |").to_string())
            })
            .collect()
    };
    let (w, g) = (rows(want), rows(got));
    let mut out = Vec::new();
    let header = |t: &str| t.lines().filter(|l| !l.starts_with('|')).collect::<Vec<_>>().join("\n");
    if header(want) != header(got) {
        out.push(format!("  header was:\n{}\n  header now:\n{}", header(want), header(got)));
    }
    for (name, now) in &g {
        match w.get(name) {
            Some(was) if was == now => {}
            Some(was) => out.push(format!("  {name}: was `{was}`, now `{now}`")),
            None => out.push(format!("  {name}: new, `{now}`")),
        }
    }
    for name in w.keys().filter(|n| !g.contains_key(*n)) {
        out.push(format!("  {name}: in the table, not run"));
    }
    out.join("\n")
}
