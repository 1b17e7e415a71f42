//! The PyTorch twin of each task (`NAME.py` beside `NAME.ekir`), checked two ways.
//!
//! - Statically, always: `python/twin_static.py` reads every twin with Python's `ast` (no torch
//!   needed) and reports the shapes and dtypes `get_inputs()` returns and the state_dict entries
//!   `Model(*get_init_inputs())` has (int64 counters such as `num_batches_tracked` left out), in
//!   order; they must equal the graph's inputs and parameters, in order, dtypes included: f32 ↔
//!   float32, f16 ↔ float16, i8 ↔ int8, i32 ↔ int32 (an i32 input may also be int64, PyTorch's
//!   index type). It also finds what would not follow the model to a GPU (tensors made on the
//!   CPU in `forward`, tensors kept outside parameters and buffers), each an error with its line.
//! - By running it, where torch is importable: `python/check_twins.py` loads a seed's exported
//!   I/O, runs the twin on the CPU in float64 and float32 with the same parameters and inputs,
//!   and compares with the reference outputs.
//!
//! `python/bench_torch.py` times the twins on a CUDA device for `ekb bench --engines --backend
//! cuda`, loading them through `check_twins.py`'s functions.
//!
//! The scripts are compiled into the binary, so the checks need no source tree; a missing
//! `python3` is an error that says so, never a silent pass.

use super::export::export_io;
use super::Task;
use ekb_ir::DType;
use serde::Deserialize;
use std::collections::HashMap;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

/// `python/twin_static.py`.
pub const STATIC_SCRIPT: &str = include_str!("../../python/twin_static.py");
/// `python/check_twins.py`.
pub const CHECK_SCRIPT: &str = include_str!("../../python/check_twins.py");
/// `python/bench_torch.py`: the twin timed on a CUDA device (`ekb bench --engines --backend
/// cuda`); it imports `check_twins.py` from its own folder.
pub const BENCH_SCRIPT: &str = include_str!("../../python/bench_torch.py");

#[derive(Debug, Deserialize)]
struct Located {
    line: usize,
    message: String,
}

#[derive(Debug, Deserialize)]
struct TwinInput {
    shape: Vec<usize>,
    dtype: String,
    line: usize,
}

#[derive(Debug, Deserialize)]
struct TwinParam {
    name: String,
    shape: Vec<usize>,
    dtype: String,
    line: usize,
}

/// The twin reader's dtype class of a graph dtype (see `twin_static.py`).
fn twin_dtype(d: DType) -> &'static str {
    match d {
        DType::F32 => "float",
        DType::F16 => "half",
        DType::I8 => "int8",
        DType::I32 => "int32",
    }
}

#[derive(Debug, Deserialize)]
struct Facts {
    errors: Vec<Located>,
    inputs: Vec<TwinInput>,
    params: Vec<TwinParam>,
}

/// Runs `python3 - ARGS` with `script` on stdin; `Err` only when python3 cannot run.
fn python(script: &str, args: &[&str]) -> Result<std::process::Output, String> {
    let mut child = Command::new("python3")
        .arg("-")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run python3 ({e}): the twin checks need python3 on PATH"))?;
    child.stdin.take().expect("stdin is piped").write_all(script.as_bytes()).map_err(|e| e.to_string())?;
    child.wait_with_output().map_err(|e| e.to_string())
}

/// The stdout of a run that must succeed.
fn python_ok(script: &str, args: &[&str]) -> Result<String, String> {
    let out = python(script, args)?;
    if !out.status.success() {
        return Err(format!("python3 failed ({}): {}", out.status, String::from_utf8_lossy(&out.stderr)));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

fn shape_text(s: &[usize]) -> String {
    format!("[{}]", s.iter().map(|d| d.to_string()).collect::<Vec<_>>().join(","))
}

/// The static check of every task's twin: for each task (in order), the problems found.
/// `Err` only when python3 itself cannot run.
pub fn static_check(tasks: &[&Task]) -> Result<Vec<Vec<String>>, String> {
    let mut problems: Vec<Vec<String>> = vec![Vec::new(); tasks.len()];
    let present: Vec<usize> = (0..tasks.len()).filter(|&i| tasks[i].twin.is_file()).collect();
    for (i, t) in tasks.iter().enumerate() {
        if !t.twin.is_file() {
            problems[i].push(format!("twin: no PyTorch program `{}` beside the task", t.twin.display()));
        }
    }
    if present.is_empty() {
        return Ok(problems);
    }
    let paths: Vec<String> = present.iter().map(|&i| tasks[i].twin.display().to_string()).collect();
    let args: Vec<&str> = paths.iter().map(String::as_str).collect();
    let out = python_ok(STATIC_SCRIPT, &args)?;
    let lines: Vec<&str> = out.lines().collect();
    if lines.len() != present.len() {
        return Err(format!("the twin reader printed {} results for {} files", lines.len(), present.len()));
    }
    for (&i, line) in present.iter().zip(lines) {
        let facts: Facts = serde_json::from_str(line)
            .map_err(|e| format!("the twin reader printed bad JSON ({e}): {line}"))?;
        problems[i] = compare(tasks[i], &facts);
    }
    Ok(problems)
}

/// The differences between a graph and what its twin declares.
fn compare(t: &Task, f: &Facts) -> Vec<String> {
    let file = t.twin.display().to_string();
    let at = |line: usize| if line == 0 { file.clone() } else { format!("{file}:{line}") };
    let mut out: Vec<String> =
        f.errors.iter().map(|e| format!("twin: {}: {}", at(e.line), e.message)).collect();
    if !out.is_empty() {
        return out;
    }
    let g = &t.graph;
    if f.inputs.len() != g.inputs.len() {
        out.push(format!(
            "twin: {}: get_inputs() gives {} tensors but the graph has {} inputs ({})",
            at(0),
            f.inputs.len(),
            g.inputs.len(),
            g.inputs.iter().map(|d| format!("`{}: {}`", d.name, d.ty)).collect::<Vec<_>>().join(", ")
        ));
    }
    for (k, (ti, gi)) in f.inputs.iter().zip(&g.inputs).enumerate() {
        // Index inputs are int64 in PyTorch; the graph's i32 holds them.
        let dtype_ok =
            ti.dtype == twin_dtype(gi.ty.dtype) || (gi.ty.dtype == DType::I32 && ti.dtype == "int64");
        if ti.shape != gi.ty.shape || !dtype_ok {
            out.push(format!(
                "twin: {}: input {} is a {} {} tensor but the graph's `{}` is `{}`",
                at(ti.line),
                k + 1,
                shape_text(&ti.shape),
                ti.dtype,
                gi.name,
                gi.ty
            ));
        }
    }
    if f.params.len() != g.params.len() {
        let names: Vec<String> = f.params.iter().map(|p| format!("`{}`", p.name)).collect();
        out.push(format!(
            "twin: {}: the model's state_dict has {} entries ({}) but the graph has {} parameters",
            at(0),
            f.params.len(),
            names.join(", "),
            g.params.len()
        ));
    }
    for (k, (tp, gp)) in f.params.iter().zip(&g.params).enumerate() {
        if tp.shape != gp.ty.shape || tp.dtype != twin_dtype(gp.ty.dtype) {
            out.push(format!(
                "twin: {}: state_dict entry {} `{}` is a {} {} tensor but graph parameter {} `{}` is `{}`",
                at(tp.line),
                k + 1,
                tp.name,
                shape_text(&tp.shape),
                tp.dtype,
                k + 1,
                gp.name,
                gp.ty
            ));
        }
    }
    out
}

/// The torch version, when `python3` can import torch.
pub fn torch_version() -> Option<String> {
    let out = Command::new("python3")
        .args(["-c", "import torch; print(torch.__version__)"])
        .stderr(Stdio::null())
        .output()
        .ok()?;
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// Exports every task's I/O on `seed` under `dir` and runs `check_twins.py` over them; returns
/// the problems per task name (tasks that agree have none) and the script's summary line.
pub fn torch_check(
    tasks: &[&Task],
    seed: u64,
    dir: &Path,
) -> Result<(HashMap<String, Vec<String>>, String), String> {
    let io = dir.join("io");
    for t in tasks {
        export_io(t, seed, &io.join(format!("{}.seed{seed}", t.name)))?;
    }
    let summary = dir.join("summary.json");
    let root = io.display().to_string();
    let out_arg = summary.display().to_string();
    // The script exits 1 when a twin disagrees; its summary file says which.
    let out = python(CHECK_SCRIPT, &[&root, "--out", &out_arg])?;
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let text = std::fs::read_to_string(&summary).map_err(|e| {
        format!("the twin run left no summary ({e}): {}", String::from_utf8_lossy(&out.stderr))
    })?;
    let v: serde_json::Value = serde_json::from_str(&text).map_err(|e| format!("bad twin summary: {e}"))?;
    let mut problems: HashMap<String, Vec<String>> = HashMap::new();
    for r in v["results"].as_array().into_iter().flatten() {
        if r["ok"].as_bool() == Some(true) {
            continue;
        }
        let name = r["task"].as_str().unwrap_or("?").to_string();
        let mut ps: Vec<String> = r["problems"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|p| p.as_str())
            .map(|p| format!("torch: {p}"))
            .collect();
        for o in r["outputs"].as_array().into_iter().flatten().filter(|o| o["ok"].as_bool() != Some(true)) {
            ps.push(format!(
                "torch: output `{}` in {} disagrees with the reference: {} mismatches, max abs error {}",
                o["output"].as_str().unwrap_or("?"),
                o["dtype"].as_str().unwrap_or("?"),
                o["mismatches"],
                o["max_abs_err"]
            ));
        }
        problems.entry(name).or_default().extend(ps);
    }
    let line = stdout.lines().last().unwrap_or("").to_string();
    Ok((problems, line))
}
