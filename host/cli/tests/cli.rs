//! The `ekb` binary as users run it: exit statuses, diagnostics on stderr, JSON on stdout, and
//! the files it writes.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn ekb(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ekb")).args(args).output().expect("ekb runs")
}

fn corpus(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/ops").join(name).display().to_string()
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn check_accepts_a_valid_graph() {
    let o = ekb(&["check", &corpus("conv2d.ekir")]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).starts_with("ok: "), "{}", stdout(&o));
}

#[test]
fn check_reports_a_misspelt_operator_with_location_and_hint() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(
        dir.path(),
        "bad.ekir",
        "graph bad(x: f32[1,3,8,8]) -> (y: f32[1,3,8,8]) {\n  %0 = Relu(x)\n  return %0\n}\n",
    );
    let o = ekb(&["check", &f]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(err.contains("bad.ekir:2:8"), "{err}");
    assert!(err.contains("did you mean `relu`?"), "{err}");
    assert!(err.contains("%0 = Relu(x)"), "{err}");
}

#[test]
fn check_json_gives_diagnostics_to_programs() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(
        dir.path(),
        "shape.ekir",
        "graph shape(a: f32[2,3], b: f32[4,3]) -> (y: f32[2,3]) {\n  %0 = add(a, b)\n  return %0\n}\n",
    );
    let o = ekb(&["check", &f, "--json"]);
    assert_eq!(o.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON on stdout");
    assert_eq!(v["ok"], false);
    assert_eq!(v["level"], "l0");
    let d = &v["diagnostics"][0];
    assert_eq!(d["severity"], "error");
    assert_eq!(d["location"]["line"], 2);
    assert!(d["message"].as_str().unwrap().contains("cannot be broadcast"), "{d}");
}

#[test]
fn check_rejects_non_utf8_and_files_of_no_known_level() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("bin.ekir");
    std::fs::write(&p, b"graph g(\xff)").unwrap();
    let o = ekb(&["check", &p.display().to_string()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("not valid UTF-8"), "{}", stderr(&o));

    let f = write(dir.path(), "what.ekir", "kernel k() {}\n");
    let o = ekb(&["check", &f]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("cannot tell the IR level"), "{}", stderr(&o));
}

// A byte-order mark before `graph` used to hide the keyword ("found ``", line 0); a misspelt
// first keyword was reported at line 0 with no suggestion.
#[test]
fn the_level_is_read_past_a_byte_order_mark_and_a_misspelt_keyword_is_located_with_a_hint() {
    let dir = tempfile::tempdir().unwrap();
    let graph = std::fs::read_to_string(corpus("conv2d.ekir")).unwrap();
    let bom = write(dir.path(), "bom.ekir", &format!("\u{feff}{graph}"));
    let o = ekb(&["check", &bom]);
    assert!(o.status.success(), "{}", stderr(&o));

    let f =
        write(dir.path(), "typo.ekir", "# a graph\n  gRaph g(x: f32[1]) -> (y: f32[1]) {\n  return x\n}\n");
    let o = ekb(&["check", &f]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(err.contains("found `gRaph`") && err.contains("typo.ekir:2:3"), "{err}");
    assert!(err.contains("did you mean `graph`?"), "{err}");
    assert!(err.contains("2 |   gRaph g(") && err.contains("^^^^^"), "{err}");
}

// A megabyte of garbage on one line used to give a diagnostic three times its size (the line,
// an underline as long, and the token in the message).
#[test]
fn a_huge_line_gives_a_short_diagnostic() {
    let dir = tempfile::tempdir().unwrap();
    let garbage = "x".repeat(1 << 20);
    for text in
        [garbage.clone(), format!("graph g(x: f32[1]) -> (y: f32[1]) {{\n  %0 = relu(x) {garbage}\n}}\n")]
    {
        let f = write(dir.path(), "huge.ekir", &text);
        let o = ekb(&["check", &f]);
        assert_eq!(o.status.code(), Some(1));
        let err = stderr(&o);
        assert!(err.len() < 2000, "{} bytes: {}", err.len(), &err[..2000.min(err.len())]);
        assert!(err.contains("huge.ekir:") && err.contains('…'), "{err}");
    }
}

#[test]
fn check_with_a_target_enforces_the_boards_stack_limit() {
    let dir = tempfile::tempdir().unwrap();
    // A local allocation of 512 KiB: over the 256 KiB stack budget of the aarch64 boards.
    let f = write(
        dir.path(),
        "big.ekir",
        "module big {\n  output y: f32[4]\n\n  kernel k(y: f32[4] out) {\n    alloc t: f32[131072] local\n    \
         for i in 0..4 {\n      t[i] = 1.0\n      y[i] = t[i]\n    }\n  }\n\n  run k(y)\n}\n",
    );
    let ok = ekb(&["check", &f]);
    assert!(ok.status.success(), "{}", stderr(&ok));
    let o = ekb(&["check", &f, "--target", "rk3588"]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(err.contains("524288") && err.contains("stack_bytes"), "{err}");
}

#[test]
fn unknown_targets_and_schedules_get_suggestions() {
    let o = ekb(&["lower", &corpus("relu.ekir"), "--target", "rk3858"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("did you mean `rk3588`?"), "{}", stderr(&o));
    let o = ekb(&["lower", &corpus("relu.ekir"), "--schedule", "defualt"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("did you mean `default`?"), "{}", stderr(&o));
}

#[test]
fn lower_prints_l1_that_reads_back_and_llvm_ir_for_aarch64() {
    let dir = tempfile::tempdir().unwrap();
    let o = ekb(&["lower", &corpus("softmax.ekir"), "--schedule", "naive"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let l1 = stdout(&o);
    assert!(l1.starts_with("module softmax {"), "{l1}");
    // The printed loop program is itself a valid input.
    let f = write(dir.path(), "softmax.l1.ekir", &l1);
    let o = ekb(&["check", &f]);
    assert!(o.status.success(), "{}", stderr(&o));

    let o = ekb(&["lower", &corpus("softmax.ekir"), "--to", "llvm", "--target", "aarch64-qemu"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let ir = stdout(&o);
    assert!(ir.contains("target triple = \"aarch64"), "{}", &ir[..ir.len().min(400)]);
    assert!(ir.contains("define void @ekb_k_"), "no kernel entry in the IR");
}

#[test]
fn lower_to_obj_writes_an_elf_object() {
    let dir = tempfile::tempdir().unwrap();
    let out: PathBuf = dir.path().join("k.o");
    let o = ekb(&["lower", &corpus("matmul.ekir"), "--to", "obj", "-o", &out.display().to_string()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(&std::fs::read(&out).unwrap()[..4], b"\x7fELF");
    let o = ekb(&["lower", &corpus("matmul.ekir"), "--to", "obj"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("-o FILE"), "{}", stderr(&o));
}

#[test]
fn lower_to_asm_prints_the_instructions_of_the_target() {
    let o = ekb(&["lower", &corpus("softmax.ekir"), "--to", "asm", "--target", "rk3588"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let asm = stdout(&o);
    assert!(asm.contains("ekb_k_") && asm.contains("fmla\tv"), "{}", &asm[..asm.len().min(600)]);
    assert!(!asm.contains("expf"), "softmax calls the library's expf");
    let o = ekb(&["lower", &corpus("softmax.ekir"), "--to", "asm", "--target", "pocl", "--backend", "gpu"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("`--to asm` is CPU code"), "{}", stderr(&o));
}

#[test]
fn lower_dump_stages_shows_every_stage_in_order_on_stderr() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("k.o").display().to_string();
    let o = ekb(&["lower", &corpus("softmax.ekir"), "--to", "obj", "-o", &out, "--dump-stages"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    let headers: Vec<&str> = err.lines().filter(|l| l.starts_with("== ")).collect();
    let stages: Vec<&str> = headers.iter().map(|h| h[3..].split(':').next().unwrap()).collect();
    assert_eq!(stages, ["graph-passes", "lower", "verify", "bind", "adapter", "toolchain"], "{err}");
    assert!(headers[1].contains("CPU lowering, default schedule"), "{}", headers[1]);
    assert!(err.contains("graph softmax(") && err.contains("module softmax {"), "{err}");
    assert!(err.contains("define void @ekb_k_"), "the LLVM IR");
    assert!(err.contains("wrote "), "{err}");
    // `--to l1` stops after the verifier.
    let o = ekb(&["lower", &corpus("relu.ekir"), "--dump-stages"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("== verify:") && !stderr(&o).contains("== adapter:"), "{}", stderr(&o));
    assert!(stdout(&o).starts_with("module relu {"), "{}", stdout(&o));
}

#[test]
fn lower_dump_stages_with_a_directory_writes_a_file_per_stage() {
    let dir = tempfile::tempdir().unwrap();
    let dump = dir.path().join("dump");
    let o =
        ekb(&["lower", &corpus("relu.ekir"), "--to", "llvm", "--dump-stages", &dump.display().to_string()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let mut files: Vec<String> =
        std::fs::read_dir(&dump).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    files.sort();
    assert_eq!(
        files,
        ["1-graph-passes.ekir", "2-lower.l1.ekir", "4-verify.txt", "5-bind.txt", "6-adapter.ll"]
    );
    assert_eq!(std::fs::read_to_string(dump.join("6-adapter.ll")).unwrap(), stdout(&o));
    // The lowered program is a valid input again.
    let o = ekb(&["check", &dump.join("2-lower.l1.ekir").display().to_string()]);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn lower_passes_choose_the_graph_passes_and_dump_passes_shows_each_run() {
    let dir = tempfile::tempdir().unwrap();
    let g = write(
        dir.path(),
        "twice.ekir",
        "graph twice(x: f32[4]) -> (y: f32[4]) {\n  %0 = relu(x)\n  %1 = relu(x)\n  %2 = add(%0, %1)\n  \
         %3 = exp(x)\n  return %2\n}\n",
    );
    let o = ekb(&["lower", &g, "--passes", "cse,dce", "--dump-passes"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    let headers: Vec<&str> = err.lines().filter(|l| l.starts_with("== ")).collect();
    assert_eq!(
        headers,
        [
            "== graph-passes: after `cse`, round 1 ==",
            "== graph-passes: after `dce`, round 1 ==",
            "== graph-passes: `cse`, round 2: no change ==",
            "== graph-passes: `dce`, round 2: no change ==",
        ],
        "{err}"
    );
    assert!(err.contains("add(%0, %0)") && !stdout(&o).contains("exp"), "{err}");
    assert_eq!(stdout(&o).matches("kernel ").count(), 2, "{}", stdout(&o));
    // Without passes every node is a kernel.
    let o = ekb(&["lower", &g, "--passes", "none"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o).matches("kernel ").count(), 4, "{}", stdout(&o));
    let o = ekb(&["lower", &g, "--passes", "cse,dcee"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("unknown graph pass `dcee`") && stderr(&o).contains("did you mean `dce`?"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn lower_replays_a_schedule_trace_on_the_naive_lowering() {
    let dir = tempfile::tempdir().unwrap();
    let t = write(dir.path(), "relu.trace", "split k0_relu.i2 by 4 -> c, l\nvectorize l\n");
    let o = ekb(&["lower", &corpus("relu.ekir"), "--trace", &t, "--dump-stages"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("vectorize l in 0..4 {"), "{}", stdout(&o));
    let err = stderr(&o);
    assert!(
        err.contains("naive schedule") && err.contains("== schedule: 2 steps of the schedule trace =="),
        "{err}"
    );
    // A refused step names itself, its line in the trace, and the reason; nothing is printed.
    let t = write(dir.path(), "bad.trace", "# not innermost\nvectorize k0_relu.i0\n");
    let o = ekb(&["lower", &corpus("relu.ekir"), "--trace", &t]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(
        err.contains("step 1 (`vectorize k0_relu.i0`) is refused") && err.contains("bad.trace:2:1"),
        "{err}"
    );
    assert!(stdout(&o).is_empty());
}

#[test]
fn lower_prints_the_recipe_and_takes_it_back_with_changed_knobs() {
    let dir = tempfile::tempdir().unwrap();
    let o = ekb(&["lower", &corpus("conv2d.ekir"), "--target", "rk3588", "--to", "trace"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let recipe = stdout(&o);
    // The example of docs/schedules.md is this very output (for a board: the host's values
    // follow this machine's vector width).
    let doc =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/schedules.md")).unwrap();
    assert!(doc.contains(&recipe), "docs/schedules.md does not show:\n{recipe}");
    let default = stdout(&ekb(&["lower", &corpus("conv2d.ekir"), "--target", "rk3588"]));
    // The recipe as printed gives the default; a changed knob, by file or flag, another nest.
    let same = write(dir.path(), "same.recipe", &recipe);
    assert_eq!(
        stdout(&ekb(&["lower", &corpus("conv2d.ekir"), "--target", "rk3588", "--recipe", &same])),
        default
    );
    // (This 11x13 output packs its weight, `conv.pack_taps_max_pixels`; at 0 it takes the row
    // tiles again.)
    let changed = write(
        dir.path(),
        "c.recipe",
        &recipe.replace("conv.pack_taps_max_pixels = 196", "conv.pack_taps_max_pixels = 0"),
    );
    let by_file =
        stdout(&ekb(&["lower", &corpus("conv2d.ekir"), "--target", "rk3588", "--recipe", &changed]));
    assert_ne!(by_file, default);
    assert_eq!(
        stdout(&ekb(&[
            "lower",
            &corpus("conv2d.ekir"),
            "--target",
            "rk3588",
            "--knob",
            "conv.pack_taps_max_pixels=0"
        ])),
        by_file
    );
    let o = ekb(&["lower", &corpus("conv2d.ekir"), "--target", "rk3588", "--knob", "conv.ow_tiles=8"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("did you mean `conv.ow_tile`?"), "{}", stderr(&o));
}

#[test]
fn lower_stops_at_a_verifier_error_before_the_adapter() {
    let dir = tempfile::tempdir().unwrap();
    let f = write(
        dir.path(),
        "big.l1.ekir",
        "module big {\n  output y: f32[4]\n\n  kernel k(y: f32[4] out) {\n    alloc t: f32[131072] local\n    \
         for i in 0..4 {\n      t[i] = 1.0\n      y[i] = t[i]\n    }\n  }\n\n  run k(y)\n}\n",
    );
    let o = ekb(&["lower", &f, "--target", "rk3588", "--to", "llvm", "--dump-stages"]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(err.contains("== verify:") && !err.contains("== adapter:"), "{err}");
    assert!(err.contains("stack_bytes") && err.contains("big.l1.ekir:5:"), "{err}");
    assert!(stdout(&o).is_empty(), "{}", stdout(&o));
}

#[test]
fn lower_to_c_writes_the_gpu_lowering_in_the_targets_dialect() {
    let o = ekb(&["lower", &corpus("relu.ekir"), "--to", "c", "--target", "pocl"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("__kernel"), "{}", stdout(&o));
    let o = ekb(&["lower", &corpus("relu.ekir"), "--to", "l1", "--target", "pocl", "--backend", "gpu"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("launch grid("), "{}", stdout(&o));
    // CPU code of a GPU build, GPU source of a CPU build, a GPU the target lacks.
    let o = ekb(&["lower", &corpus("relu.ekir"), "--to", "llvm", "--target", "pocl", "--backend", "gpu"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("use `--to c`"), "{}", stderr(&o));
    let o = ekb(&["lower", &corpus("relu.ekir"), "--to", "c", "--backend", "cpu"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("`--to c` is GPU source"), "{}", stderr(&o));
    let o = ekb(&["lower", &corpus("relu.ekir"), "--to", "c"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("target `host` has no GPU"), "{}", stderr(&o));
}

#[test]
fn interp_writes_npy_files_numpy_reads() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("io");
    let o = ekb(&["interp", &corpus("linear.ekir"), "--seed", "3", "--out", &out.display().to_string()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("y f32[3,5,10]"), "{}", stdout(&o));
    for f in ["input.x.npy", "param.w.npy", "param.b.npy", "output.y.npy", "output.z.npy"] {
        assert!(out.join(f).exists(), "{f} missing");
    }
    // numpy is part of the set-up (toolchains/setup.sh); recompute y = x @ w.T + b from the files.
    let script = format!(
        "import numpy as np\nd='{}'\nx=np.load(d+'/input.x.npy');w=np.load(d+'/param.w.npy');b=np.load(d+'/param.b.npy')\n\
         y=np.load(d+'/output.y.npy')\nassert y.shape==(3,5,10) and y.dtype==np.float32\n\
         assert np.allclose(x@w.T+b, y, atol=1e-5), abs(x@w.T+b-y).max()\nprint('numpy agrees')",
        out.display()
    );
    let py = Command::new("python3").args(["-c", &script]).output().expect("python3 runs");
    assert!(py.status.success(), "{}", String::from_utf8_lossy(&py.stderr));
}

#[test]
fn interp_runs_an_l1_module_against_its_graph() {
    let dir = tempfile::tempdir().unwrap();
    let graph = corpus("relu.ekir");
    let good = ekb(&["lower", &graph, "--schedule", "naive"]);
    let f = write(dir.path(), "relu.l1.ekir", &stdout(&good));
    let o = ekb(&["interp", &f, "--graph", &graph, "--seed", "1"]);
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    assert!(stdout(&o).contains("matches the graph's reference"), "{}", stdout(&o));

    // A wrong program: relu written as identity.
    let wrong = stdout(&good).replace("max(", "min(");
    assert_ne!(wrong, stdout(&good), "the naive relu uses max");
    let f = write(dir.path(), "wrong.l1.ekir", &wrong);
    let o = ekb(&["interp", &f, "--graph", &graph]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stdout(&o).contains("DIFFERS"), "{}", stdout(&o));

    let o = ekb(&["interp", &f]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("--graph"), "{}", stderr(&o));
}

/// A left-deep chain `v + v + ...` of 10,000 or 15,000 terms once overflowed the stack of the
/// reader's consumers (`lower --to llvm` at 10,000, `check` and `interp` at 15,000): every command
/// now stops at the parser's nesting limit with a located diagnostic.
#[test]
fn long_operator_chains_are_a_diagnostic_in_every_command() {
    let dir = tempfile::tempdir().unwrap();
    for terms in [10_000, 15_000] {
        let f = write(dir.path(), "deep.l1.ekir", &ekb_ir::l1::nesting::chain_module(0, terms, false));
        for args in [
            vec!["check", &f],
            vec!["interp", &f, "--graph", &corpus("relu.ekir")],
            vec!["lower", &f, "--to", "llvm"],
        ] {
            let o = ekb(&args);
            let err = stderr(&o);
            assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
            assert!(
                err.contains("nests more than 256 levels deep") && err.contains("deep.l1.ekir:6:"),
                "{args:?}: {err}"
            );
            assert!(err.contains("split it into `let` bindings"), "{args:?}: {err}");
        }
    }
}

#[test]
fn targets_lists_every_profile() {
    let o = ekb(&["targets"]);
    assert!(o.status.success());
    for name in ["host", "aarch64-qemu", "jetson-orin", "rk3588", "pocl", "h200"] {
        assert!(stdout(&o).lines().any(|l| l.starts_with(name)), "{name} missing");
    }
    let o = ekb(&["targets", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v.as_array().unwrap().len(), 6);
}

#[test]
fn bench_checks_and_times_a_workload() {
    let o =
        ekb(&["bench", "--workloads", "--quick", "--only", "layer_norm", "--no-lowering-table", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let w = &v["workloads"][0];
    assert_eq!(w["name"], "layer_norm_128x768");
    assert_eq!(w["naive"]["correct"], true);
    assert_eq!(w["default"]["correct"], true);
    assert!(w["samples"].as_u64().unwrap() >= 5);
    assert!(w["speedup"].as_f64().unwrap() > 0.0);
    let o = ekb(&["bench", "--workloads", "--only", "nothing-matches"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("matmul_512"), "{}", stderr(&o));
}

/// `--engines` with onnxruntime (installed by `toolchains/setup.sh`, as CI runs it): both sides
/// checked and timed in alternation, the ratio in the table and in the JSON.
#[test]
fn bench_engines_sets_ekb_next_to_an_engine() {
    let args = ["bench", "--engines", "--engine", "onnxruntime", "--only", "layer_norm", "--rounds", "2"];
    let o = ekb(&[&args[..], &["--round-ms", "30", "--threads", "1", "--json"]].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let w = &v["workloads"][0];
    assert_eq!(w["workload"], "layer_norm_512x768");
    let sides = w["sides"].as_array().unwrap();
    assert_eq!(sides.iter().map(|s| s["name"].as_str().unwrap()).collect::<Vec<_>>(), ["ekb", "onnxruntime"]);
    for s in sides {
        assert_eq!(s["correct"], true, "{s}");
        assert!(s["samples"].as_u64().unwrap() >= 6 && s["median_ms"].as_f64().unwrap() > 0.0, "{s}");
    }
    let ratio = w["best_over_ekb"].as_f64().unwrap();
    let want = sides[1]["median_ms"].as_f64().unwrap() / sides[0]["median_ms"].as_f64().unwrap();
    // The geomean of one ratio is the ratio, up to the rounding of exp(ln(x)).
    let geomean = v["geomean_best_over_ekb"].as_f64().unwrap();
    assert!((ratio - want).abs() < 1e-9 && (geomean - ratio).abs() < 1e-12 * ratio, "{v}");
    assert_eq!(v["threads"], 1);
    assert!(w.get("passes_gain").is_none() && v.get("geomean_passes_gain").is_none(), "{v}");

    // `--without-passes`: ekb without its graph passes as a second ekb side, never the best
    // engine; its median over ekb's is the row's passes gain.
    let o = ekb(&[&args[..], &["--round-ms", "30", "--threads", "1", "--without-passes", "--json"]].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let w = &v["workloads"][0];
    let sides = w["sides"].as_array().unwrap();
    let names: Vec<&str> = sides.iter().map(|s| s["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["ekb", "ekb-nopass", "onnxruntime"]);
    assert!(sides.iter().all(|s| s["correct"] == true), "{v}");
    assert_eq!(w["best_engine"], "onnxruntime");
    let gain = w["passes_gain"].as_f64().unwrap();
    let want = sides[1]["median_ms"].as_f64().unwrap() / sides[0]["median_ms"].as_f64().unwrap();
    assert!((gain - want).abs() < 1e-9 && v["geomean_passes_gain"].as_f64() == Some(gain), "{v}");
    assert_eq!(v["passes_gain_workloads"], 1);

    let o = ekb(&[&args[..2], &["--engine", "tensorflow"]].concat());
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("expected onnxruntime, mnn, tvm or tvm-tuned:TRIALS"), "{}", stderr(&o));
    let o = ekb(&["bench", "--only", "softmax"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("apply to `--workloads` and `--engines`"), "{}", stderr(&o));
}

/// `--engines` over task instances: a pattern and `--level` pick two small Level-2 tasks, each
/// a row with both sides correct, progress on stderr; a selection that leaves nothing, or a
/// backend other than the CPU, is refused before anything runs.
#[test]
fn bench_engines_takes_the_tasks_a_selection_picks() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tasks");
    let dir = dir.to_str().unwrap();
    let base =
        ["bench", "--engines", "--engine", "onnxruntime", "add_rmsnorm_*", "--level", "2", "--dir", dir];
    let o = ekb(&[&base[..], &["--rounds", "2", "--round-ms", "20", "--threads", "1"]].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    let table = stdout(&o);
    let head: Vec<&str> = table.lines().nth(1).unwrap().split_whitespace().collect();
    assert_eq!(head[..3], ["workload", "ekb", "onnxruntime"], "{table}");
    let rows: Vec<Vec<&str>> =
        table.lines().skip(2).take(2).map(|l| l.split_whitespace().collect()).collect();
    assert_eq!(
        rows.iter().map(|r| r[0]).collect::<Vec<_>>(),
        ["add_rmsnorm_llama32_1b", "add_rmsnorm_qwen2_05b"]
    );
    for r in &rows {
        // Both medians are numbers (no `!` for a wrong side, no `n/a`), and the row has a ratio.
        assert!(r[1].parse::<f64>().unwrap() > 0.0 && r[2].parse::<f64>().unwrap() > 0.0, "{table}");
        assert!(r[3] == "onnxruntime" && r[4].ends_with('x'), "{table}");
    }
    assert!(table.contains("over 2 of 2 workload(s)"), "{table}");
    let err = stderr(&o);
    assert!(
        err.contains("[1/2] add_rmsnorm_llama32_1b: ") && err.contains("[2/2] add_rmsnorm_qwen2_05b: "),
        "{err}"
    );

    let o = ekb(&[&base[..], &["--only", "nothing-matches"]].concat());
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("no CPU task matches the selection and `--only`"), "{}", stderr(&o));
    let o = ekb(&[&base[..], &["--backend", "opencl"]].concat());
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("hint: `--backend cuda` or `--backend cpu`"), "{}", stderr(&o));
}

/// `--engines --backend cuda`: engines other than torch's, a share that does not exist and the
/// CPU comparison's options are refused before anything runs; a GPU runtime that cannot be
/// found leaves ekb out with the reason and the exit status 1 (and with torch unable to run as
/// well, as on a machine without it, nothing is measured at all).
#[test]
fn bench_engines_on_cuda_refuses_what_it_cannot_measure() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tasks");
    let dir = dir.to_str().unwrap();
    let base =
        ["bench", "--engines", "--backend", "cuda", "add_rmsnorm_qwen2_05b", "--level", "2", "--dir", dir];
    for (extra, want) in [
        (&["--engine", "onnxruntime"][..], "the engines are torch (eager) and torch-compile"),
        (&["--shard", "3/2"], "expected K/N with 1 <= K <= N"),
        (&["--without-passes"], "apply to the CPU comparison"),
        (&["--rounds", "0"], "must be at least 1"),
    ] {
        let o = ekb(&[&base[..], extra].concat());
        assert_eq!(o.status.code(), Some(1), "{extra:?}");
        assert!(stderr(&o).contains(want), "{extra:?}: {}", stderr(&o));
    }
    let o = ekb(&["bench", "--engines", "--engine", "onnxruntime", "--shard", "1/2"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("`--shard` applies to `--engines --backend cuda`"), "{}", stderr(&o));
    let o = Command::new(env!("CARGO_BIN_EXE_ekb"))
        .args([&base[..], &["--rounds", "1", "--round-ms", "1"]].concat())
        .env("EKB_RT_GPU", "/nonexistent/ekb-rt-gpu")
        .output()
        .expect("ekb runs");
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(
        err.contains("ekb: ") && err.contains("cannot read the runtime `/nonexistent/ekb-rt-gpu`"),
        "{err}"
    );
}

#[test]
fn tasks_show_gives_the_bounds_outputs_are_compared_at() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tasks");
    let show = |name: &str| {
        let o = ekb(&["tasks", "show", name, "--dir", dir.to_str().unwrap()]);
        assert!(o.status.success(), "{}", stderr(&o));
        stdout(&o)
    };
    let f16 = show("silu_f16_llama32_1b_mlp");
    assert!(f16.contains("tolerance (f32): atol 1e-4, rtol 1e-4 (protocol default)\n"), "{f16}");
    assert!(
        f16.contains("tolerance (f16 outputs): atol 1e-4, rtol 1e-3 (at least one f16 step relative)\n"),
        "{f16}"
    );
    let own = show("rms_norm_f16_qwen2_05b");
    assert!(own.contains("tolerance (f16 outputs): atol 1e-4, rtol 3e-3"), "{own}");
    let f32 = show("relu_resnet18_stem");
    assert!(!f32.contains("f16 outputs"), "{f32}");
}

// A reader that goes away (`ekb tasks list | head`) used to make `ekb` panic with "failed
// printing to stdout: Broken pipe" and exit 101. Every command that prints ends quietly with the
// closed-pipe status instead. The pipe's read end is closed before `ekb` starts, so its first
// print meets the closed pipe whatever the timing.
#[test]
fn a_closed_stdout_ends_every_printing_command_quietly() {
    let tasks = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tasks").display().to_string();
    let conv = corpus("conv2d.ekir");
    let commands: [&[&str]; 5] = [
        &["tasks", "--dir", &tasks, "list"],
        &["tasks", "--dir", &tasks, "show", "relu6_mobilenetv2_expand"],
        &["interp", &conv, "--seed", "1", "--json"],
        &["targets"],
        &["check", &conv],
    ];
    for args in commands {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let o = Command::new(env!("CARGO_BIN_EXE_ekb")).args(args).stdout(writer).output().expect("ekb runs");
        assert_eq!(o.status.code(), Some(141), "ekb {args:?}: {}", stderr(&o));
        assert!(stderr(&o).is_empty(), "ekb {args:?} is quiet: {}", stderr(&o));
    }
}

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

// When the graph could not be written, `import-onnx` used to leave its weights file behind (the
// weights were written first, each file in place).
#[test]
fn import_onnx_writes_the_graph_and_its_weights_together_or_neither() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("m.onnx").display().to_string();
    let o = ekb(&["export-onnx", &corpus("conv2d.ekir"), "-o", &model]);
    assert!(o.status.success(), "{}", stderr(&o));

    let good = dir.path().join("good");
    std::fs::create_dir(&good).unwrap();
    let o = ekb(&["import-onnx", &model, "-o", &good.join("m.ekir").display().to_string()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(names(&good), ["m.bin", "m.ekir"], "the pair, and no temporary file");

    let blocked = dir.path().join("blocked");
    std::fs::create_dir_all(blocked.join("m.ekir")).unwrap();
    let o = ekb(&["import-onnx", &model, "-o", &blocked.join("m.ekir").display().to_string()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("m.ekir"), "{}", stderr(&o));
    assert_eq!(names(&blocked), ["m.ekir"], "no weights without their graph");
}

// `ekb interp` took seeds only. `--inputs DIR` runs the graph on the user's .npy arrays, checked
// against the inputs' declared dtypes and shapes.
#[test]
fn interp_runs_a_graph_on_the_users_npy_inputs_and_checks_them() {
    use ekb_ir::tensor::{write_npy, BufData, Buffer};
    use ekb_ir::{DType, TensorType};
    let dir = tempfile::tempdir().unwrap();
    let g = write(
        dir.path(),
        "g.ekir",
        "graph g(x: f32[2,3]) -> (y: f32[2,3]) {\n  %0 = relu(x)\n  return %0\n}\n",
    );
    let data = dir.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let x = Buffer {
        ty: TensorType::new(DType::F32, [2, 3]),
        data: BufData::F32(vec![-1.0, 2.0, -3.0, 4.0, 0.5, -0.5]),
    };
    write_npy(&data.join("x.npy"), &x).unwrap();
    let out = dir.path().join("out");
    let (data_s, out_s) = (data.display().to_string(), out.display().to_string());
    let o = ekb(&["interp", &g, "--inputs", &data_s, "--out", &out_s]);
    assert!(o.status.success(), "{}", stderr(&o));
    let y = ekb_onnx::npy::read(&out.join("output.y.npy")).unwrap();
    assert_eq!(y.data, BufData::F32(vec![0.0, 2.0, 0.0, 4.0, 0.5, 0.0]));
    assert_eq!(
        ekb_onnx::npy::read(&out.join("input.x.npy")).unwrap(),
        x,
        "the inputs written are the given ones"
    );

    // What `--out` wrote reads back as inputs (`input.NAME.npy`).
    let o = ekb(&["interp", &g, "--inputs", &out_s]);
    assert!(o.status.success(), "{}", stderr(&o));

    for (ty, found) in
        [(TensorType::new(DType::F32, [3, 2]), "f32[3,2]"), (TensorType::new(DType::I32, [2, 3]), "i32[2,3]")]
    {
        let n = ty.numel();
        let data = if ty.dtype == DType::I32 { BufData::I32(vec![1; n]) } else { BufData::F32(vec![1.0; n]) };
        write_npy(&dir.path().join("data/x.npy"), &Buffer { ty, data }).unwrap();
        let o = ekb(&["interp", &g, "--inputs", &data_s]);
        assert_eq!(o.status.code(), Some(1));
        let err = stderr(&o);
        assert!(err.contains("x.npy` holds") && err.contains(found) && err.contains("is f32[2,3]"), "{err}");
    }
    std::fs::remove_file(data.join("x.npy")).unwrap();
    let o = ekb(&["interp", &g, "--inputs", &data_s]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("no file for input `x: f32[2,3]`"), "{}", stderr(&o));
}

fn task(level: u8, name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(format!("../../tasks/level{level}/{name}.ekir"))
        .display()
        .to_string()
}

fn json_of(o: &Output) -> serde_json::Value {
    serde_json::from_str(&stdout(o)).unwrap_or_else(|e| panic!("{e}: {}", stdout(o)))
}

#[test]
fn check_reports_the_memory_plan_and_holds_the_budget_to_the_planned_peak() {
    let dir = tempfile::tempdir().unwrap();
    let graph = task(3, "resnet8_cifar10");
    let j = json_of(&ekb(&["check", &graph, "--target", "host", "--json"]));
    let m = &j["memory"];
    let field = |k: &str| m[k].as_u64().unwrap_or_else(|| panic!("{k} in {m}"));
    let (planned, unplanned) = (field("planned_peak_bytes"), field("unplanned_peak_bytes"));
    // The prepared temps (packed weights, where the prepare steps compute any) live apart
    // from the arena.
    let apart = field("prepared_bytes");
    assert_eq!(
        planned,
        field("inputs_bytes") + field("outputs_bytes") + apart + field("arena_bytes") + field("stack_bytes")
    );
    // Parameters only the prepare steps read live in the arena, apart when unplanned.
    let consumed = field("consumed_bytes");
    assert!(consumed > 0, "the packed convolutions' weights are read by prepare steps alone: {m}");
    assert_eq!(unplanned, planned - apart - field("arena_bytes") + field("temps_bytes") + consumed);
    assert!(planned < unplanned, "{m}");
    let o = ekb(&["check", &graph, "--target", "host"]);
    assert!(stdout(&o).contains(&format!("memory: planned {planned} bytes (")), "{}", stdout(&o));

    // A board whose memory holds the planned peak but not every temp apart accepts the graph;
    // one byte less is a diagnostic naming both figures.
    let host =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../toolchains/host.toml"))
            .unwrap();
    let board = |bytes: u64| {
        let text: String = host
            .lines()
            .map(|l| {
                if l.starts_with("memory_bytes") {
                    format!("memory_bytes = {bytes}")
                } else if l.starts_with("stack_bytes") {
                    // The stack budget may not exceed the memory; at 256 KiB the layouts that
                    // size their local buffers by it (Winograd, the padded copies) choose as
                    // they do for the host, so the graph lowers to the same program.
                    "stack_bytes = 262144".to_string()
                } else {
                    l.to_string()
                }
            })
            .collect::<Vec<_>>()
            .join("\n");
        write(dir.path(), &format!("board{bytes}.toml"), &text)
    };
    // The loop program is checked, and so is the graph, whose lowering is the same program.
    let o = ekb(&["lower", &graph, "--target", "host"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let module = write(dir.path(), "resnet8.l1.ekir", &stdout(&o));
    let o = ekb(&["check", &module, "--target", &board(planned)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let o = ekb(&["check", &module, "--target", &board(planned - 1)]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(
        err.contains(&format!("needs {planned} bytes of memory (inputs "))
            && err.contains(&format!(
                "(planned, with {consumed} bytes of params the prepare steps consume; {} unplanned)",
                field("temps_bytes") + consumed
            ))
            && err.contains(&format!("over the limit of {} bytes", planned - 1)),
        "{err}"
    );
    assert!(err.contains("fewer or smaller temps live at once"), "{err}");
    let o = ekb(&["check", &graph, "--target", &board(planned - 1)]);
    assert_eq!(o.status.code(), Some(1), "a diagnostic, not a crash: {}", stderr(&o));
    assert!(stderr(&o).contains(&format!("needs {planned} bytes of memory (inputs ")), "{}", stderr(&o));
}

#[test]
fn tasks_memory_tabulates_planned_and_unplanned_peaks() {
    let j = json_of(&ekb(&["tasks", "memory", "resnet8_cifar10", "--json"]));
    let rows = j["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 1, "{j}");
    let r = &rows[0];
    let (planned, unplanned) =
        (r["planned_peak_bytes"].as_u64().unwrap(), r["unplanned_peak_bytes"].as_u64().unwrap());
    assert!(planned < unplanned, "{r}");
    assert!(r["arena_bytes"].as_u64().unwrap() >= r["arena_bound_bytes"].as_u64().unwrap(), "{r}");
    let ratio = r["ratio"].as_f64().unwrap();
    assert!((ratio - planned as f64 / unplanned as f64).abs() < 1e-12);
    assert!(
        (j["geomean_ratio"].as_f64().unwrap() - ratio).abs() < 1e-12,
        "one row: the geomean is its ratio"
    );
    // The temps alone: the plan takes off the whole peak exactly what it takes off the temps.
    let (temps_planned, temps_apart) =
        (r["planned_temps_bytes"].as_u64().unwrap(), r["unplanned_temps_bytes"].as_u64().unwrap());
    assert_eq!(unplanned - planned, temps_apart - temps_planned, "{r}");
    let temps_ratio = r["temps_ratio"].as_f64().unwrap();
    assert!((temps_ratio - temps_planned as f64 / temps_apart as f64).abs() < 1e-12, "{r}");
    assert!(temps_ratio < ratio, "the parameters dilute the whole peak's ratio: {r}");
    let text = stdout(&ekb(&["tasks", "memory", "--level", "1", "relu"]));
    assert!(text.starts_with("name "), "{text}");
    assert!(text.contains(" task(s) on host: geomean planned/unplanned "), "{text}");
    assert!(text.contains(" at most 0.6), temps "), "{text}");
}

#[test]
fn the_agent_subset_file_is_what_its_rule_gives_and_selects_its_instances() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tasks");
    let o = ekb(&["tasks", "subset", "--dir", dir.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let file = dir.join("agent-subset.txt");
    assert_eq!(
        stdout(&o),
        std::fs::read_to_string(&file).unwrap(),
        "tasks/agent-subset.txt is stale: write it again with `ekb tasks subset > tasks/agent-subset.txt`"
    );
    let listed: Vec<String> = stdout(&o).lines().filter(|l| !l.starts_with('#')).map(String::from).collect();
    assert_eq!(listed.len(), 69);
    for backend in ["cpu", "cuda", "opencl"] {
        assert_eq!(listed.iter().filter(|l| l.ends_with(&format!(" {backend}"))).count(), 23, "{backend}");
        let o = ekb(&[
            "tasks",
            "list",
            "--json",
            "--subset",
            file.to_str().unwrap(),
            "--backend",
            backend,
            "--dir",
            dir.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        let tasks: Vec<serde_json::Value> = serde_json::from_str(&stdout(&o)).unwrap();
        assert_eq!(tasks.len(), 23, "{backend}");
    }
    // A line that is not `TASK BACKEND`, and a task the suite lacks, are refused with the place.
    let tmp = tempfile::tempdir().unwrap();
    let bad = write(tmp.path(), "bad.txt", "# mine\nrelu_resnet18_stem cpu\nrelu_resnet18_stem gpu\n");
    let o = ekb(&["tasks", "list", "--subset", &bad, "--dir", dir.to_str().unwrap()]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("bad.txt:3:1") && stderr(&o).contains("a subset line is a task and a backend"),
        "{}",
        stderr(&o)
    );
    let unknown = write(tmp.path(), "unknown.txt", "no_such_task cpu\n");
    let o = ekb(&["tasks", "list", "--subset", &unknown, "--dir", dir.to_str().unwrap()]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("no task named `no_such_task`"), "{}", stderr(&o));
}
