//! The task suite as its users meet it: task files with good and bad headers, the validation
//! rules on tasks made degenerate on purpose, filters and counts, reference I/O read back by
//! numpy, and every shipped task passing validation.

use ekb_eval::tasks::validate::{self, Options, Rules, TwinChecks};
use ekb_eval::tasks::{self, export, table, Backend, Domain, Filter, Task};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The shipped suite.
fn shipped() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tasks")
}

const TWIN_RELU: &str = "import torch\nimport torch.nn as nn\n\n\nclass Model(nn.Module):\n    def forward(self, x):\n        return torch.relu(x)\n\n\ndef get_inputs():\n    return [torch.empty(1, 64, 64, 64).uniform_(-1, 1)]\n\n\ndef get_init_inputs():\n    return []\n";

/// Writes `levelN/NAME.ekir` (and the twin, if given) under `root`; returns the .ekir path.
fn write_task(root: &Path, level: u8, name: &str, ekir: &str, twin: Option<&str>) -> PathBuf {
    let dir = root.join(format!("level{level}"));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(format!("{name}.ekir"));
    std::fs::write(&p, ekir).unwrap();
    if let Some(t) = twin {
        std::fs::write(dir.join(format!("{name}.py")), t).unwrap();
    }
    p
}

fn header(level: u8, family: &str, domains: &str) -> String {
    format!(
        "# task: level={level} family={family} domains=[{domains}]\n\
         # provenance: model=TestNet layer=block.0 module=torch.nn.ReLU source=tests\n"
    )
}

/// A canonical relu task on a 1x64x64x64 input (1 MiB in, 1 MiB out: above the size floor).
fn relu_task(name: &str, level: u8, family: &str, domains: &str, init: &str) -> String {
    format!(
        "{}graph {name}(x: f32[1,64,64,64]{init}) -> (y: f32[1,64,64,64]) {{\n  %0: f32[1,64,64,64] = relu(x)\n  return %0\n}}\n",
        header(level, family, domains)
    )
}

fn located(errs: &[ekb_ir::Diagnostic]) -> Vec<(String, usize, usize, String)> {
    errs.iter()
        .map(|d| {
            let l = d.location.clone().expect("every diagnostic is located");
            (l.file, l.line, l.column, d.message.clone())
        })
        .collect()
}

#[test]
fn a_good_task_loads_with_its_metadata_and_twin_path() {
    let dir = tempfile::tempdir().unwrap();
    let p = write_task(
        dir.path(),
        1,
        "relu_ok",
        &relu_task("relu_ok", 1, "activation", "aiot, mobile", ""),
        None,
    );
    let t = tasks::load_task(&p).unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(t.name, "relu_ok");
    assert_eq!(t.meta.domains, [Domain::Mobile, Domain::Aiot]);
    assert_eq!(t.meta.backends(), [Backend::Cpu, Backend::Opencl]);
    assert_eq!(t.meta.provenance.module, "torch.nn.ReLU");
    assert_eq!(t.twin, p.with_extension("py"));
    assert!(t.graph_text().starts_with("graph relu_ok("));
    assert_eq!(t.tolerance(ekb_ir::DType::F32).atol, 1e-4);
}

#[test]
fn a_stated_tolerance_applies_to_f32_and_to_f16_never_below_one_f16_step() {
    let dir = tempfile::tempdir().unwrap();
    let text = relu_task("relu_tol", 1, "activation", "mobile", "").replacen(
        "source=tests\n",
        "source=tests\n# tolerance: atol=1e-2 rtol=1e-5 reason=\"test\"\n",
        1,
    );
    let t = tasks::load_task(&write_task(dir.path(), 1, "relu_tol", &text, None))
        .unwrap_or_else(|e| panic!("{e:?}"));
    let tol = |d| {
        let t = t.tolerance(d);
        (t.atol, t.rtol)
    };
    assert_eq!(tol(ekb_ir::DType::F32), (1e-2, 1e-5));
    let f16 = ekb_ir::tensor::Tolerance::default_for(ekb_ir::DType::F16);
    assert_eq!(tol(ekb_ir::DType::F16), (1e-2, f16.rtol));
    assert_eq!(tol(ekb_ir::DType::I32), (0.0, 0.0));
}

#[test]
fn bad_headers_and_files_give_diagnostics_naming_file_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let text = relu_task("relu_bad", 1, "activation", "mobile, robotcs", "")
        .replace("layer=block.0", "layer=block.0 modle=x");
    let p = write_task(dir.path(), 1, "relu_bad", &text, None);
    let errs = located(&tasks::load_task(&p).unwrap_err());
    let file = p.display().to_string();
    assert!(errs.contains(&(file.clone(), 1, 52, "unknown domain `robotcs`".into())), "{errs:?}");
    assert!(
        errs.iter().any(|(f, l, c, m)| f == &file && (*l, *c) == (2, 43) && m.contains("no field `modle`")),
        "{errs:?}"
    );

    // The graph is named after another file; the header's level is not the folder's.
    let p = write_task(
        dir.path(),
        2,
        "relu_named",
        &relu_task("relu_other", 1, "activation", "mobile", ""),
        None,
    );
    let errs = located(&tasks::load_task(&p).unwrap_err());
    assert!(
        errs.iter().any(|(_, l, c, m)| (*l, *c) == (3, 7) && m.contains("named `relu_other`")),
        "{errs:?}"
    );
    assert!(
        errs.iter()
            .any(|(_, l, _, m)| *l == 1 && m.contains("header says level 1 but the task is in `level2/`")),
        "{errs:?}"
    );

    // A graph that is not in canonical form (no type annotation) names the line and the fix.
    let text =
        relu_task("relu_loose", 1, "activation", "mobile", "").replace("%0: f32[1,64,64,64] =", "%0 =");
    let p = write_task(dir.path(), 1, "relu_loose", &text, None);
    let errs = tasks::load_task(&p).unwrap_err();
    assert_eq!(errs.len(), 1, "{errs:?}");
    let d = &errs[0];
    assert_eq!(d.location.as_ref().unwrap().line, 4);
    assert_eq!(d.expected.as_deref(), Some("`  %0: f32[1,64,64,64] = relu(x)`"));
    assert!(d.hint.as_deref().unwrap().contains("ekb tasks fmt"));
    // `formatted` repairs it, keeping the header.
    let fixed = tasks::formatted(&text, "relu_loose.ekir").unwrap();
    assert_eq!(fixed, relu_task("relu_loose", 1, "activation", "mobile", ""));

    // Graph errors come located too, together with header errors.
    let text = relu_task("relu_typo", 1, "activation", "mobile", "")
        .replace("level=1", "level=7")
        .replace("relu(x)", "rlu(x)");
    let p = write_task(dir.path(), 1, "relu_typo", &text, None);
    let errs = located(&tasks::load_task(&p).unwrap_err());
    assert!(errs.iter().any(|(_, l, _, m)| *l == 1 && m.contains("level `7`")), "{errs:?}");
    assert!(
        errs.iter().any(|(_, l, c, m)| (*l, *c) == (4, 25) && m.contains("unknown operator `rlu`")),
        "{errs:?}"
    );
}

fn options(twins: TwinChecks) -> Options {
    Options { rules: Rules::default(), jobs: 2, twins }
}

fn validate_one(path: &Path, twins: TwinChecks) -> validate::TaskReport {
    let t = tasks::load_task(path).unwrap_or_else(|e| panic!("{e:?}"));
    validate::validate_suite(&[&t], &options(twins), &|_, _, _| {}).tasks.remove(0)
}

#[test]
fn validate_rejects_near_zero_near_constant_seed_independent_and_tiny_tasks() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    // A healthy task passes, its twin included.
    let p = write_task(
        root,
        1,
        "relu_fine",
        &relu_task("relu_fine", 1, "activation", "mobile", ""),
        Some(TWIN_RELU),
    );
    let r = validate_one(&p, TwinChecks::Auto);
    assert!(r.ok, "{:?}", r.problems);
    assert_eq!(r.outputs.len(), 3, "one output on three seeds");
    assert!(
        r.outputs.iter().all(|s| (0.45..0.55).contains(&s.zero_share)),
        "relu zeroes about half: {:?}",
        r.outputs
    );

    // relu of negative inputs: all zeros.
    let p = write_task(
        root,
        1,
        "relu_zero",
        &relu_task("relu_zero", 1, "activation", "mobile", " = uniform(-2.0, -1.0)"),
        None,
    );
    let r = validate_one(&p, TwinChecks::Skip);
    assert!(!r.ok);
    assert!(
        r.problems.iter().any(|m| m.contains("output `y` (seed 0) is near-zero") && m.contains("100.0%")),
        "{:?}",
        r.problems
    );

    // relu6 of large inputs: every element is 6.
    let text = relu_task("relu6_flat", 1, "activation", "mobile", " = uniform(10.0, 20.0)")
        .replace("relu(x)", "relu6(x)");
    let p = write_task(root, 1, "relu6_flat", &text, None);
    let r = validate_one(&p, TwinChecks::Skip);
    assert!(
        r.problems.iter().any(|m| m.contains("is near-constant: one constant matches 100.0%")),
        "{:?}",
        r.problems
    );
    assert!(r.problems.iter().all(|m| !m.contains("near-zero")), "{:?}", r.problems);

    // An output that does not depend on the seed (a constant input).
    let p = write_task(
        root,
        1,
        "relu_seedless",
        &relu_task("relu_seedless", 1, "activation", "mobile", " = const(0.5)"),
        None,
    );
    let r = validate_one(&p, TwinChecks::Skip);
    assert!(
        r.problems
            .iter()
            .any(|m| m.contains("hardly depends on the seed: seeds 0 and 1 differ in only 0.0%")),
        "{:?}",
        r.problems
    );

    // Too small to time: 16 elements.
    let text = relu_task("relu_tiny", 1, "activation", "mobile", "").replace("1,64,64,64", "4,4");
    let p = write_task(root, 1, "relu_tiny", &text, None);
    let r = validate_one(&p, TwinChecks::Skip);
    assert!(
        r.problems.iter().any(|m| m.starts_with("too small to time: 16 FLOP and 128 bytes")),
        "{:?}",
        r.problems
    );
}

#[test]
fn validate_reads_twins_statically_and_reports_mismatches() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let conv = format!(
        "{}graph conv_twin(x: f32[1,8,64,64]) -> (y: f32[1,32,64,64]) {{\n  param w: f32[32,8,3,3] = kaiming_uniform\n  \
         param b: f32[32] = uniform(-0.1, 0.1)\n  %0: f32[1,32,64,64] = conv2d(x, w, b, stride=[1,1], pad=[1,1,1,1], dilation=[1,1], groups=1)\n  \
         return %0\n}}\n",
        header(1, "conv", "mobile")
    );
    let twin = "import torch\nimport torch.nn as nn\n\nC = 8\n\n\nclass Model(nn.Module):\n    def __init__(self, cin, cout, bias):\n        super().__init__()\n        self.conv = nn.Conv2d(cin, cout, 3, padding=1, bias=bias)\n\n    def forward(self, x):\n        return self.conv(x)\n\n\ndef get_inputs():\n    return [torch.rand(1, C, 64, 64) * 2 - 1]\n\n\ndef get_init_inputs():\n    return [C, 32, True]\n";
    let p = write_task(root, 1, "conv_twin", &conv, Some(twin));
    let r = validate_one(&p, TwinChecks::Auto);
    assert!(r.ok, "{:?}", r.problems);

    // Wrong input shape, and a bias-free twin where the graph has a bias.
    let bad = twin
        .replace("* 2 - 1", "")
        .replace("rand(1, C, 64, 64)", "rand(1, C, 32, 64)")
        .replace("[C, 32, True]", "[C, 32, False]");
    std::fs::write(p.with_extension("py"), bad).unwrap();
    let r = validate_one(&p, TwinChecks::Auto);
    let py = p.with_extension("py").display().to_string();
    assert!(
        r.problems.iter().any(|m| m
            == &format!(
            "twin: {py}:17: input 1 is a [1,8,32,64] float tensor but the graph's `x` is `f32[1,8,64,64]`"
        )),
        "{:?}",
        r.problems
    );
    assert!(
        r.problems
            .iter()
            .any(|m| m.contains("state_dict has 1 entries (`conv.weight`) but the graph has 2 parameters")),
        "{:?}",
        r.problems
    );

    // Dtypes count: an int8 input where the graph has f32, and an int8 buffer (the model's own,
    // so the first entry) where the graph has an f32 parameter; an int64 buffer (a counter, as
    // `num_batches_tracked`) is not an entry.
    let int8 = twin
        .replace(
            "torch.rand(1, C, 64, 64) * 2 - 1",
            "torch.randint(-128, 128, (1, C, 64, 64), dtype=torch.int8)",
        )
        .replace(
            "self.conv = nn.Conv2d(cin, cout, 3, padding=1, bias=bias)",
            "self.conv = nn.Conv2d(cin, cout, 3, padding=1, bias=False)\n        \
             self.register_buffer(\"steps\", torch.zeros(1, dtype=torch.long))\n        \
             self.register_buffer(\"b\", torch.zeros(cout, dtype=torch.int8))",
        );
    std::fs::write(p.with_extension("py"), int8).unwrap();
    let r = validate_one(&p, TwinChecks::Auto);
    let want = [
        format!("twin: {py}:19: input 1 is a [1,8,64,64] int8 tensor but the graph's `x` is `f32[1,8,64,64]`"),
        format!("twin: {py}:12: state_dict entry 1 `b` is a [32] int8 tensor but graph parameter 1 `w` is `f32[32,8,3,3]`"),
    ];
    for w in &want {
        assert!(r.problems.contains(w), "{w}\n{:?}", r.problems);
    }

    // A construct the reader cannot follow is an error with its line, not a silent pass.
    std::fs::write(p.with_extension("py"), twin.replace("nn.Conv2d(", "nn.LazyConv2d(")).unwrap();
    let r = validate_one(&p, TwinChecks::Auto);
    assert!(
        r.problems
            .iter()
            .any(|m| m.contains(&format!("{py}:10: cannot tell the parameters of `nn.LazyConv2d`"))),
        "{:?}",
        r.problems
    );

    // A tensor made on the CPU in forward() would not follow the model to a GPU.
    std::fs::write(
        p.with_extension("py"),
        twin.replace("self.conv(x)", "self.conv(x) + torch.zeros(1, 32, 1, 1)"),
    )
    .unwrap();
    let r = validate_one(&p, TwinChecks::Auto);
    assert!(
        r.problems.iter().any(|m| m.starts_with(&format!(
            "twin: {py}:13: `torch.zeros(1, 32, 1, 1)` makes its tensor on the CPU whatever device the model runs on; \
             pass the device of an input, a parameter or a buffer (`device=x.device`)"
        ))),
        "{:?}",
        r.problems
    );

    // No twin at all.
    std::fs::remove_file(p.with_extension("py")).unwrap();
    let r = validate_one(&p, TwinChecks::Auto);
    assert!(r.problems.iter().any(|m| m.contains("no PyTorch program")), "{:?}", r.problems);
}

#[test]
fn filters_select_by_level_domain_backend_family_and_name_and_counts_add_up() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write_task(root, 1, "relu_a", &relu_task("relu_a", 1, "activation", "mobile, aiot", ""), None);
    write_task(root, 1, "relu_b", &relu_task("relu_b", 1, "act2", "robotics", ""), None);
    write_task(root, 2, "relu_c", &relu_task("relu_c", 2, "activation", "mobile, robotics, aiot", ""), None);
    write_task(root, 2, "broken", "graph broken(\n", None);
    let suite = tasks::load_suite(root).unwrap();
    assert_eq!(suite.tasks.len(), 3);
    assert_eq!(suite.errors.len(), 3, "the broken file has no header lines and no graph: {:?}", suite.errors);
    let names = |f: Filter| suite.select(&f).iter().map(|t| t.name.clone()).collect::<Vec<_>>();
    assert_eq!(names(Filter::default()), ["relu_a", "relu_b", "relu_c"]);
    assert_eq!(names(Filter { level: Some(2), ..Filter::default() }), ["relu_c"]);
    assert_eq!(names(Filter { domain: Some(Domain::Aiot), ..Filter::default() }), ["relu_a", "relu_c"]);
    assert_eq!(names(Filter { backend: Some(Backend::Cuda), ..Filter::default() }), ["relu_b", "relu_c"]);
    assert_eq!(
        names(Filter { family: Some("activation".into()), ..Filter::default() }),
        ["relu_a", "relu_c"]
    );
    assert_eq!(names(Filter { pattern: Some("*_b".into()), ..Filter::default() }), ["relu_b"]);
    assert_eq!(
        names(Filter { pattern: Some("elu_".into()), level: Some(1), ..Filter::default() }),
        ["relu_a", "relu_b"]
    );
    assert!(suite.get("relu_d").unwrap_err().hint.as_deref() == Some("did you mean `relu_a`?"));

    let all: Vec<&Task> = suite.tasks.iter().collect();
    let c = table::counts(&all);
    assert_eq!((c.levels[0].tasks, c.levels[0].per_backend, c.levels[0].instances), (2, [1, 1, 1], 3));
    assert_eq!((c.levels[1].tasks, c.levels[1].per_backend, c.levels[1].instances), (1, [1, 1, 1], 3));
    assert_eq!((c.total.tasks, c.total.per_backend, c.total.instances), (3, [2, 2, 2], 6));
    assert_eq!((c.total.target_tasks, c.target_instances), (331, 650));
    let text = table::render(&c);
    assert!(
        text.contains("total          3/331             2              2            2            6/650"),
        "{text}"
    );
    assert!(text.contains("level 1 families: act2 1, activation 1"), "{text}");
}

#[test]
fn exported_io_reads_back_in_numpy_and_matches_the_operator() {
    let suite = tasks::load_suite(&shipped()).unwrap();
    let t = suite.get("normalize_rgb_detection_input").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let m = export::export_io(t, 2, dir.path()).unwrap();
    assert_eq!(m.inputs.len(), 1);
    assert_eq!(
        m.params.iter().map(|p| p.file.as_str()).collect::<Vec<_>>(),
        ["param.mean.npy", "param.std.npy"]
    );
    assert_eq!((m.outputs[0].atol, m.outputs[0].rtol), (1e-4, 1e-4));
    // numpy reads every file with the manifest's dtype and shape, and y == (image - mean) / std.
    let script = r#"
import json, sys, numpy as np
d = sys.argv[1]
io = json.load(open(d + "/io.json"))
arrs = {}
for e in io["inputs"] + io["params"] + io["outputs"]:
    a = np.load(d + "/" + e["file"])
    assert list(a.shape) == e["shape"], (e, a.shape)
    assert a.dtype == {"f32": np.float32, "i32": np.int32}[e["dtype"]], (e, a.dtype)
    arrs[e["name"]] = a
want = (arrs["image"].astype(np.float64) - arrs["mean"]) / arrs["std"]
err = np.max(np.abs(want - arrs["y"]) / (1 + np.abs(want)))
assert err < 1e-6, err
assert io["seed"] == 2 and io["task"] == "normalize_rgb_detection_input"
print("ok", arrs["image"].shape, float(arrs["mean"].ravel()[0]))
"#;
    let out =
        Command::new("python3").args(["-c", script, &dir.path().display().to_string()]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.starts_with("ok (3, 480, 640) 0.4"), "{stdout}");
    // Another seed gives other data.
    let other = tempfile::tempdir().unwrap();
    export::export_io(t, 3, other.path()).unwrap();
    assert_ne!(
        std::fs::read(dir.path().join("input.image.npy")).unwrap(),
        std::fs::read(other.path().join("input.image.npy")).unwrap()
    );
}

#[test]
fn every_shipped_task_validates() {
    let suite = tasks::load_suite(&shipped()).unwrap();
    assert!(suite.errors.is_empty(), "{}", suite.errors.iter().map(|d| d.to_string()).collect::<String>());
    assert!(suite.tasks.len() >= 80, "{} tasks", suite.tasks.len());
    let all: Vec<&Task> = suite.tasks.iter().collect();
    let jobs = std::thread::available_parallelism().map_or(2, |n| n.get());
    let start = std::time::Instant::now();
    let report = validate::validate_suite(
        &all,
        &Options { rules: Rules::default(), jobs, twins: TwinChecks::Auto },
        &|_, _, _| {},
    );
    let failures: Vec<String> = report
        .tasks
        .iter()
        .filter(|r| !r.ok)
        .map(|r| format!("{}: {}", r.name, r.problems.join("; ")))
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert_eq!(report.twin_static, "ran");
    let interp: f64 = report.tasks.iter().map(|r| r.interp_seconds).sum();
    eprintln!(
        "{} tasks validated in {:.1} s ({:.1} s of reference runs on {jobs} threads); torch: {}",
        report.tasks.len(),
        start.elapsed().as_secs_f64(),
        interp,
        report.twin_torch
    );
    // The counts table covers every task once.
    let c = table::counts(&all);
    assert_eq!(c.total.tasks, suite.tasks.len());
    assert_eq!(c.total.instances, all.iter().map(|t| t.meta.domains.len()).sum::<usize>());
    assert_eq!(c.total.per_backend.iter().sum::<usize>(), c.total.instances);
}

/// The code block of `docs/tasks.md` that follows the line starting with `after`.
fn doc_block(md: &str, after: &str) -> String {
    let start = md.find(after).unwrap_or_else(|| panic!("docs/tasks.md has `{after}`"));
    let open = start + md[start..].find("```").expect("a code block follows");
    let body = open + md[open..].find('\n').expect("the fence line ends") + 1;
    let close = body + md[body..].find("```").expect("the code block is closed");
    md[body..close].to_string()
}

#[test]
fn docs_show_the_current_counts_and_a_shipped_task() {
    let md =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/tasks.md")).unwrap();
    let suite = tasks::load_suite(&shipped()).unwrap();
    let all: Vec<&Task> = suite.tasks.iter().collect();
    assert_eq!(
        doc_block(&md, "## In numbers"),
        table::render(&table::counts(&all)),
        "docs/tasks.md shows an out-of-date counts table: paste `ekb tasks` output"
    );
    let example = doc_block(&md, "## A task: two files");
    let name =
        example.lines().find_map(|l| l.strip_prefix("graph ")).and_then(|l| l.split('(').next()).unwrap();
    let t = suite.get(name).unwrap();
    assert_eq!(example, t.source.text, "the example in docs/tasks.md is the shipped `{name}`");
}

/// What the static twin reader says of one twin: its errors (line, message) and the
/// state_dict entries it reports (name, shape), in order.
type TwinReading = (Vec<(u64, String)>, Vec<(String, Vec<u64>)>);

/// Runs the static twin reader on the twin text `twin`.
fn read_twin(twin: &str) -> TwinReading {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("twin.py");
    std::fs::write(&p, twin).unwrap();
    let mut child = Command::new("python3")
        .arg("-")
        .arg(&p)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("python3 runs");
    child.stdin.take().unwrap().write_all(ekb_eval::tasks::twin::STATIC_SCRIPT.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "the twin reader failed: {out:?}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let errors = v["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["line"].as_u64().unwrap(), e["message"].as_str().unwrap().to_string()))
        .collect();
    let params = v["params"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let shape = p["shape"].as_array().unwrap().iter().map(|d| d.as_u64().unwrap()).collect();
            (p["name"].as_str().unwrap().to_string(), shape)
        })
        .collect();
    (errors, params)
}

/// `(name, shape)` pairs from a compact literal.
fn entries(list: &[(&str, &[u64])]) -> Vec<(String, Vec<u64>)> {
    list.iter().map(|(n, s)| (n.to_string(), s.to_vec())).collect()
}

/// A twin whose `Model.__init__` body is `init` (8-space indented lines) after `prelude`.
fn twin_with(prelude: &str, init_args: &str, init: &str, init_inputs: &str) -> String {
    format!(
        "import torch\nimport torch.nn as nn\nfrom collections import OrderedDict\n{prelude}\n\n\
         class Model(nn.Module):\n    def __init__(self{init_args}):\n        super().__init__()\n{init}\n\n    \
         def forward(self, x):\n        return x\n\n\ndef get_inputs():\n    return [torch.rand(1, 4)]\n\n\n\
         def get_init_inputs():\n    return [{init_inputs}]\n"
    )
}

#[test]
fn twin_reader_knows_conv1d_transposed_convs_embeddings_and_norms() {
    // Shapes as PyTorch documents them: Conv1d weight [out, in/groups, k]; ConvTranspose
    // weight [in, out/groups, k...]; Embedding [num, dim]; norms [C] or normalized_shape;
    // `num_batches_tracked` (an integer buffer) is not a floating-point entry.
    let init = "        self.emb = nn.Embedding(vocab, dim, padding_idx=0, max_norm=None)
        self.dw = nn.Conv1d(dim, dim, 5, 1, 2, 1, dim)
        self.pw = nn.Conv1d(in_channels=dim, out_channels=2 * dim, kernel_size=(1,), bias=False)
        self.up = nn.ConvTranspose2d(2 * dim, 16, (4, 2), stride=2, padding=1, output_padding=1, groups=4)
        self.up1 = nn.ConvTranspose1d(16, 8, 3, bias=False, dilation=2, padding_mode='zeros')
        self.gn = nn.GroupNorm(4, 16)
        self.gn_plain = nn.GroupNorm(2, 16, affine=False)
        self.ln = nn.LayerNorm((4, dim), elementwise_affine=True, bias=False)
        self.ln_off = nn.LayerNorm(dim, elementwise_affine=False)
        self.bn = nn.BatchNorm1d(dim)
        self.inorm = nn.InstanceNorm2d(16, affine=True)
        self.inorm_plain = nn.InstanceNorm2d(16)
        self.inorm_stats = nn.InstanceNorm1d(8, track_running_stats=True)";
    let (errors, params) = read_twin(&twin_with("", ", vocab, dim", init, "1000, 32"));
    assert_eq!(errors, []);
    assert_eq!(
        params,
        entries(&[
            ("emb.weight", &[1000, 32]),
            ("dw.weight", &[32, 1, 5]),
            ("dw.bias", &[32]),
            ("pw.weight", &[64, 32, 1]),
            ("up.weight", &[64, 4, 4, 2]),
            ("up.bias", &[16]),
            ("up1.weight", &[16, 8, 3]),
            ("gn.weight", &[16]),
            ("gn.bias", &[16]),
            ("ln.weight", &[4, 32]),
            ("bn.weight", &[32]),
            ("bn.bias", &[32]),
            ("bn.running_mean", &[32]),
            ("bn.running_var", &[32]),
            ("inorm.weight", &[16]),
            ("inorm.bias", &[16]),
            ("inorm_stats.running_mean", &[8]),
            ("inorm_stats.running_var", &[8]),
        ])
    );
}

#[test]
fn twin_reader_knows_attention_and_recurrent_modules() {
    // MultiheadAttention: packed in_proj when kdim == vdim == embed_dim, else q/k/v_proj_weight;
    // its own parameters come before its `out_proj` child. RNNs: per layer, per direction,
    // weight_ih, weight_hh, bias_ih, bias_hh, with 3 (GRU) or 4 (LSTM) gates.
    let init = "        self.attn = nn.MultiheadAttention(64, 4, batch_first=True)
        self.cross = nn.MultiheadAttention(64, 4, bias=False, add_bias_kv=True, kdim=32, vdim=16)
        self.gru = nn.GRU(40, 64, num_layers=2, batch_first=True)
        self.lstm = nn.LSTM(16, 8, bidirectional=True, bias=False)
        self.cell = nn.LSTMCell(4, 6)";
    let (errors, params) = read_twin(&twin_with("", "", init, ""));
    assert_eq!(errors, []);
    assert_eq!(
        params,
        entries(&[
            ("attn.in_proj_weight", &[192, 64]),
            ("attn.in_proj_bias", &[192]),
            ("attn.out_proj.weight", &[64, 64]),
            ("attn.out_proj.bias", &[64]),
            ("cross.q_proj_weight", &[64, 64]),
            ("cross.k_proj_weight", &[64, 32]),
            ("cross.v_proj_weight", &[64, 16]),
            ("cross.bias_k", &[1, 1, 64]),
            ("cross.bias_v", &[1, 1, 64]),
            ("cross.out_proj.weight", &[64, 64]),
            ("gru.weight_ih_l0", &[192, 40]),
            ("gru.weight_hh_l0", &[192, 64]),
            ("gru.bias_ih_l0", &[192]),
            ("gru.bias_hh_l0", &[192]),
            ("gru.weight_ih_l1", &[192, 64]),
            ("gru.weight_hh_l1", &[192, 64]),
            ("gru.bias_ih_l1", &[192]),
            ("gru.bias_hh_l1", &[192]),
            ("lstm.weight_ih_l0", &[32, 16]),
            ("lstm.weight_hh_l0", &[32, 8]),
            ("lstm.weight_ih_l0_reverse", &[32, 16]),
            ("lstm.weight_hh_l0_reverse", &[32, 8]),
            ("cell.weight_ih", &[24, 4]),
            ("cell.weight_hh", &[24, 6]),
            ("cell.bias_ih", &[24]),
            ("cell.bias_hh", &[24]),
        ])
    );
}

#[test]
fn twin_reader_follows_sequentials_module_lists_and_local_module_classes() {
    // PyTorch's state_dict order: the model's own parameters (`gamma`, registered last), its
    // own buffers (`mean`), then the children in registration order, containers' children
    // named "0", "1", ... (or by their keys), nested to any depth.
    let prelude = "WIDTHS = [8, 16, 32]


class ConvBN(nn.Module):
    def __init__(self, cin, cout, stride=1):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn = nn.BatchNorm2d(cout)
        self.act = nn.ReLU6(inplace=True)
";
    let init = "        self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1), nn.ReLU(),
                                  nn.Sequential(nn.Conv2d(8, 8, 1), nn.Sequential(nn.BatchNorm2d(8))))
        self.stages = nn.ModuleList([ConvBN(WIDTHS[i], WIDTHS[i + 1], stride=2) for i in range(len(WIDTHS) - 1)])
        self.heads = nn.ModuleList()
        for i in range(2):
            self.heads.append(nn.Linear(32, classes * (i + 1)))
        layers = []
        for w in WIDTHS[1:]:
            layers += [nn.Conv2d(w, w, 1, groups=w), nn.Identity()]
        self.tail = nn.Sequential(*layers)
        self.named = nn.Sequential(OrderedDict([(\"fc\", nn.Linear(32, 4)), (\"act\", nn.GELU())]))
        self.by_key = nn.ModuleDict({\"cls\": nn.Linear(4, classes, bias=False)})
        self.register_buffer(\"mean\", torch.zeros(1, 3, 1, 1))
        self.gamma = nn.Parameter(torch.ones(32))";
    let (errors, params) = read_twin(&twin_with(prelude, ", classes", init, "10"));
    assert_eq!(errors, []);
    assert_eq!(
        params,
        entries(&[
            ("gamma", &[32]),
            ("mean", &[1, 3, 1, 1]),
            ("stem.0.weight", &[8, 3, 3, 3]),
            ("stem.0.bias", &[8]),
            ("stem.2.0.weight", &[8, 8, 1, 1]),
            ("stem.2.0.bias", &[8]),
            ("stem.2.1.0.weight", &[8]),
            ("stem.2.1.0.bias", &[8]),
            ("stem.2.1.0.running_mean", &[8]),
            ("stem.2.1.0.running_var", &[8]),
            ("stages.0.conv.weight", &[16, 8, 3, 3]),
            ("stages.0.bn.weight", &[16]),
            ("stages.0.bn.bias", &[16]),
            ("stages.0.bn.running_mean", &[16]),
            ("stages.0.bn.running_var", &[16]),
            ("stages.1.conv.weight", &[32, 16, 3, 3]),
            ("stages.1.bn.weight", &[32]),
            ("stages.1.bn.bias", &[32]),
            ("stages.1.bn.running_mean", &[32]),
            ("stages.1.bn.running_var", &[32]),
            ("heads.0.weight", &[10, 32]),
            ("heads.0.bias", &[10]),
            ("heads.1.weight", &[20, 32]),
            ("heads.1.bias", &[20]),
            ("tail.0.weight", &[16, 1, 1, 1]),
            ("tail.0.bias", &[16]),
            ("tail.2.weight", &[32, 1, 1, 1]),
            ("tail.2.bias", &[32]),
            ("named.fc.weight", &[4, 32]),
            ("named.fc.bias", &[4]),
            ("by_key.cls.weight", &[10, 4]),
        ])
    );
}

#[test]
fn twin_reader_rejects_what_it_cannot_count_with_its_line() {
    // The init body starts on line 9 of the twin.
    let cases = [
        (
            "        self.n = 3\n        self.blocks = nn.ModuleList([nn.Linear(4, 4) for _ in range(x)])",
            10,
            "a list comprehension must run over a constant sequence, so that its length is known: \
             `x` is not a constant known here",
        ),
        (
            "        for c in self.sizes:\n            pass",
            9,
            "a `for` loop must run over a constant sequence: cannot evaluate `self.sizes` statically",
        ),
        (
            "        self.seq = nn.Sequential(nn.Linear(4, 4), 4)",
            9,
            "nn.Sequential: child `1` is not a module but 4",
        ),
        (
            "        self.seq = nn.Sequential(nn.Linear(4, 4), nn.LazyLinear(8))",
            9,
            "cannot tell the parameters of `nn.LazyLinear` statically",
        ),
        (
            "        self.c = nn.Conv1d(6, 8, 3, groups=4)",
            9,
            "nn.Conv1d: in_channels 6 is not divisible by groups 4",
        ),
        (
            "        self.c = nn.ConvTranspose1d(8, 8, (3, 3))",
            9,
            "nn.ConvTranspose1d: expected an int or a 1-tuple, found (3, 3)",
        ),
        ("        self.e = nn.Embedding(10, dim=4)", 9, "nn.Embedding: unknown argument `dim`"),
    ];
    for (init, line, message) in cases {
        let (errors, params) = read_twin(&twin_with("", "", init, ""));
        assert_eq!(errors, [(line, message.to_string())], "{init}");
        assert_eq!(params, [], "{init}");
    }
}

/// The recursive walks over L1 are safe because no kernel body nests deeper than
/// `MAX_NESTING`; the lowering must keep legitimate programs far from that limit, so that a
/// schedule primitive rewriting them stays within it too. Every shipped task, lowered with each
/// schedule for a CPU and a GPU, nests at most a quarter of it.
#[test]
fn every_shipped_task_lowers_far_within_the_nesting_limit() {
    use ekb_ir::l1::nesting::{first_too_deep, MAX_NESTING};
    use ekb_lower::Schedule;
    let suite = tasks::load_suite(&shipped()).unwrap();
    let cpu = ekb_ir::TargetProfile::load("host").unwrap();
    let gpu = ekb_ir::TargetProfile::load("h200").unwrap();
    let mut lowered = 0;
    for t in &suite.tasks {
        for schedule in [Schedule::Naive, Schedule::Default] {
            for m in
                [ekb_lower::lower(&t.graph, schedule, &cpu), ekb_lower::lower_gpu(&t.graph, schedule, &gpu)]
            {
                let m = m.unwrap_or_else(|d| panic!("{}: {d}", t.name));
                lowered += 1;
                for k in &m.kernels {
                    if let Some((_, levels)) = first_too_deep(&k.body, MAX_NESTING / 4) {
                        panic!("{} ({schedule:?}): kernel {} nests {levels} levels", t.name, k.name);
                    }
                }
            }
        }
    }
    assert_eq!(lowered, 4 * suite.tasks.len());
}

#[test]
fn twin_reader_flags_tensors_that_would_not_follow_the_model_to_another_device() {
    // `model.to("cuda")` moves parameters and buffers and the caller moves the inputs; a tensor
    // made without a device taken from them, or kept in a plain attribute or a global, stays on
    // the CPU, and `.numpy()`/`.cpu()` tie the computation to the CPU.
    let bad = "import numpy as np
import torch
import torch.nn as nn

SCALE = torch.tensor(2.0)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(4, 4, 1)
        self.register_buffer(\"mask\", torch.tril(torch.ones(4, 4, dtype=torch.bool)), persistent=False)
        self.offsets = torch.arange(4.0)

    def forward(self, x):
        n = x.shape[-1]
        idx = torch.arange(n, device=x.device)
        rows = torch.arange(n, dtype=torch.long).to(x.device).view(1, -1)
        grid = torch.arange(n, dtype=x.dtype)
        eye = torch.eye(n, device=\"cpu\")
        y = self.conv(x) + torch.zeros_like(x) + grid + eye + x.new_ones(n)
        y = y.masked_fill(self.mask, 0.0).to(torch.float32)
        w = torch.from_numpy(np.ones(n, dtype=np.float32))
        s = torch.tensor(0.5, device=x.device)
        return y.cpu() + w + rows + idx + s


def get_inputs():
    return [torch.rand(1, 4, 4, 4)]


def get_init_inputs():
    return []
";
    let (errors, params) = read_twin(bad);
    let found: Vec<(u64, &str)> = errors.iter().map(|(l, m)| (*l, m.split(';').next().unwrap())).collect();
    assert_eq!(
        found,
        [
            (5, "`torch.tensor(2.0)` makes a tensor outside the model, which `model.to(device)` leaves on the CPU"),
            (
                13,
                "`self.offsets = torch.arange(4.0)` keeps a tensor as a plain attribute, which \
                 `model.to(device)` leaves on the CPU"
            ),
            (19, "`torch.arange(n, dtype=x.dtype)` makes its tensor on the CPU whatever device the model runs on"),
            (20, "`torch.eye(n, device='cpu')` makes its tensor on one fixed device"),
            (23, "`torch.from_numpy(np.ones(n, dtype=np.float32))` makes a CPU tensor"),
            (24, "`torch.tensor(0.5, device=x.device)` copies host data to the device on every call"),
            (25, "`y.cpu()` ties the computation to one device (`.numpy()` only works on the CPU)"),
        ]
    );
    assert!(
        errors[1].1.ends_with(
            "register it: `self.register_buffer(\"offsets\", ..., persistent=False)` for a constant \
             (left out of the state_dict) or `nn.Parameter(...)` for a weight"
        ),
        "{}",
        errors[1].1
    );
    assert_eq!(params, []);

    // Written to follow the model: the global and the attribute become buffers (a
    // non-persistent one is not a state_dict entry), the tensors of forward() take x's device.
    let good = bad
        .replace("SCALE = torch.tensor(2.0)\n", "SCALE = 2.0\n")
        .replace("self.offsets = torch.arange(4.0)", "self.register_buffer(\"offsets\", torch.zeros(4))")
        .replace("dtype=x.dtype)", "dtype=x.dtype, device=x.device)")
        .replace("device=\"cpu\"", "device=x.device")
        .replace("torch.from_numpy(np.ones(n, dtype=np.float32))", "x.new_ones(n)")
        .replace("torch.tensor(0.5, device=x.device)", "torch.full((), 0.5, device=x.device)")
        .replace("y.cpu()", "y");
    let (errors, params) = read_twin(&good);
    assert_eq!(errors, []);
    assert_eq!(params, entries(&[("offsets", &[4]), ("conv.weight", &[4, 4, 1, 1]), ("conv.bias", &[4])]));
}
