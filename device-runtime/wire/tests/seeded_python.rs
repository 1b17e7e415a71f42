//! The specification check: `seeded_reference.py`, an independent Python implementation of
//! `docs/seeded-inputs.md`, must produce the same bits as the Rust generator for many keys,
//! shapes and parameters (including error cases). Under `--target aarch64-unknown-linux-gnu`
//! this compares the aarch64 generator (run by qemu) with the reference on the host.
//!
//! Skipped, with a message, where no `python3` is installed.

use ekb_wire::seeded::{fill_f32, fill_i32, tensor_key};
use ekb_wire::Init;
use std::io::Write;
use std::process::{Command, Stdio};

struct Case {
    task: &'static str,
    seed: u64,
    tensor: &'static str,
    float: bool,
    shape: Vec<usize>,
    init: Init,
}

fn cases() -> Vec<Case> {
    let f = |task, seed, tensor, shape: &[usize], init| Case {
        task,
        seed,
        tensor,
        float: true,
        shape: shape.to_vec(),
        init,
    };
    let i = |task, seed, tensor, shape: &[usize], init| Case {
        task,
        seed,
        tensor,
        float: false,
        shape: shape.to_vec(),
        init,
    };
    let mut v = vec![
        f("task", 0, "x", &[2, 3], Init::Uniform { lo: -1.0, hi: 1.0 }),
        f("conv_bn_relu", 1, "x", &[1, 3, 8, 8], Init::Uniform { lo: 0.1, hi: 0.7 }),
        f("conv_bn_relu", 2, "w", &[16, 3, 3, 3], Init::KaimingUniform),
        f("linear", u64::MAX, "w", &[10, 1000], Init::KaimingUniform),
        f("linear", 3, "w", &[5, 7, 11], Init::KaimingUniform),
        f("ln", 0, "gamma", &[33], Init::Normal { mean: 1.0, std: 0.02 }),
        f("ln", 9, "x", &[4, 50], Init::Normal { mean: -3.25, std: 7.5 }),
        f("big", 5, "x", &[300], Init::Uniform { lo: -3.0e38, hi: 3.0e38 }),
        f("tiny", 5, "x", &[64], Init::Uniform { lo: 1e-30, hi: 1.5e-30 }),
        f("c", 0, "k", &[4], Init::Const(0.1)),
        f("c", 0, "n", &[2], Init::Const(f64::NAN)),
        f("c", 0, "s", &[], Init::Const(-2.5)),
        i("gather", 0, "idx", &[200], Init::RandInt { lo: 0, hi: 1000 }),
        i("gather", 1, "idx", &[64], Init::RandInt { lo: i64::from(i32::MIN), hi: 1 << 31 }),
        i("gather", 2, "idx", &[64], Init::RandInt { lo: -7, hi: -6 }),
        i("gather", 3, "idx", &[64], Init::RandInt { lo: 0, hi: 3_000_000_000 - 2_147_483_648 }),
        i("c", 0, "i", &[3], Init::Const(-12.0)),
        // Errors: both implementations must refuse.
        f("e", 0, "a", &[2], Init::RandInt { lo: 0, hi: 3 }),
        f("e", 0, "b", &[2], Init::Uniform { lo: 1.0, hi: 1.0 }),
        f("e", 0, "c", &[8], Init::KaimingUniform),
        f("e", 0, "d", &[2], Init::Const(1e39)),
        f("e", 0, "e", &[2], Init::Normal { mean: 0.0, std: -1.0 }),
        i("e", 0, "f", &[2], Init::RandInt { lo: 5, hi: 5 }),
        i("e", 0, "g", &[2], Init::Const(0.5)),
        i("e", 0, "h", &[2], Init::Normal { mean: 0.0, std: 1.0 }),
    ];
    // Many keys: every seed from 0 to 49 for a few tensors, with unicode names.
    for seed in 0..50 {
        v.push(f("sweep", seed, "weight", &[3, 5], Init::KaimingUniform));
        v.push(f("sweep", seed, "x·y", &[7], Init::Normal { mean: 0.0, std: 1.0 }));
        v.push(i("sweep", seed, "i", &[9], Init::RandInt { lo: -100, hi: 12345 }));
    }
    v
}

fn hex64(x: f64) -> String {
    format!("{:016x}", x.to_bits())
}

fn line(c: &Case) -> String {
    let shape = if c.shape.is_empty() {
        "-".to_string()
    } else {
        c.shape.iter().map(|d| d.to_string()).collect::<Vec<_>>().join(",")
    };
    let init = match c.init {
        Init::Uniform { lo, hi } => format!("uniform {} {}", hex64(lo), hex64(hi)),
        Init::Normal { mean, std } => format!("normal {} {}", hex64(mean), hex64(std)),
        Init::KaimingUniform => "kaiming_uniform".to_string(),
        Init::Const(v) => format!("const {}", hex64(v)),
        Init::RandInt { lo, hi } => format!("randint {lo} {hi}"),
    };
    let dtype = if c.float { "f32" } else { "i32" };
    format!("{} {} {} {dtype} {shape} {init}", c.task, c.seed, c.tensor)
}

fn expected(c: &Case) -> String {
    let key = tensor_key(c.task, c.seed, c.tensor);
    let n: usize = c.shape.iter().product();
    let body = if c.float {
        let mut out = vec![0f32; n];
        fill_f32(&c.init, &c.shape, key, &mut out)
            .map(|()| out.iter().map(|x| format!("{:08x}", x.to_bits())).collect::<Vec<_>>())
    } else {
        let mut out = vec![0i32; n];
        fill_i32(&c.init, key, &mut out).map(|()| out.iter().map(|x| format!("{x:08x}")).collect())
    };
    match body {
        Ok(words) => format!("{key:016x} {}", words.join(" ")).trim_end().to_string(),
        Err(_) => format!("{key:016x} error"),
    }
}

#[test]
fn python_reference_gives_the_same_bits() {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/seeded_reference.py");
    let child = Command::new("python3")
        .arg(script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let mut child = match child {
        Ok(c) => c,
        Err(e) => {
            eprintln!("skipped: cannot run python3 ({e})");
            return;
        }
    };
    let cases = cases();
    let input: String = cases.iter().map(|c| line(c) + "\n").collect();
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "python failed: {}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    let got: Vec<&str> = text.lines().collect();
    assert_eq!(got.len(), cases.len(), "one line per case");
    for (c, g) in cases.iter().zip(got) {
        assert_eq!(g, expected(c), "case `{}`", line(c));
    }
}
