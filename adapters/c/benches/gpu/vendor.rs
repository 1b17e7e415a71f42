//! The vendor reference on CUDA: PyTorch (cuBLAS for the matmul with TF32 disabled, cuDNN for
//! the depthwise convolution), timed with CUDA events by `vendor.py` in a `python3`
//! subprocess. The script is compiled into the benchmark and piped to `python3 -`, so the
//! executable needs no source tree next to it.
//!
//! What it must keep true: a machine without python3, torch or a CUDA device for torch gets
//! `Err` with the reason (python's own last words), never a number.

use std::io::Write;
use std::process::{Command, Stdio};

const SCRIPT: &str = include_str!("vendor.py");

/// What PyTorch measured.
#[derive(Debug, Clone)]
pub struct Vendor {
    /// torch, CUDA and cuDNN versions.
    pub version: String,
    pub device: String,
    pub matmul_ms: f64,
    /// Largest error against f64, relative to the largest |element|.
    pub matmul_rel_err: f64,
    pub dwconv_ms: f64,
    pub dwconv_rel_err: f64,
}

/// The last non-empty line of a process's error output.
fn last_words(stderr: &[u8]) -> String {
    let text = String::from_utf8_lossy(stderr);
    text.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("(no message)").trim().to_string()
}

/// Runs the script for the matmul of size `n` and the depthwise convolution of `c` channels at
/// `hw` x `hw`, `reps` timed runs each.
pub fn torch(n: usize, c: usize, hw: usize, reps: usize) -> Result<Vendor, String> {
    let probe = Command::new("python3")
        .args(["-c", "import torch; assert torch.cuda.is_available()"])
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("python3 cannot be started: {e}"))?;
    if !probe.status.success() {
        let why = last_words(&probe.stderr);
        return Err(if why.starts_with("AssertionError") {
            "torch.cuda.is_available() is False for python3's torch".to_string()
        } else {
            format!("`import torch` failed in python3: {why}")
        });
    }
    let mut child = Command::new("python3")
        .arg("-")
        .args([n, c, hw, reps].map(|v| v.to_string()))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("python3 cannot be started: {e}"))?;
    child
        .stdin
        .take()
        .ok_or("python3's stdin is not a pipe")?
        .write_all(SCRIPT.as_bytes())
        .map_err(|e| format!("writing the script to python3: {e}"))?;
    let out = child.wait_with_output().map_err(|e| format!("waiting for python3: {e}"))?;
    if !out.status.success() {
        return Err(format!("the PyTorch script failed ({}): {}", out.status, last_words(&out.stderr)));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let field = |key: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(key).and_then(|rest| rest.strip_prefix(' ')))
            .map(str::trim)
            .ok_or_else(|| format!("the PyTorch script printed no `{key}`: {text}"))
    };
    let number = |key: &str| {
        field(key)?.parse::<f64>().map_err(|e| format!("`{key}` of the PyTorch script is not a number: {e}"))
    };
    Ok(Vendor {
        version: field("version")?.to_string(),
        device: field("device")?.to_string(),
        matmul_ms: number("matmul_ms")?,
        matmul_rel_err: number("matmul_rel_err")?,
        dwconv_ms: number("dwconv_ms")?,
        dwconv_rel_err: number("dwconv_rel_err")?,
    })
}
