//! The L1 interpreter: results of small programs computed by hand, the exact integer and float
//! semantics, poisoning, bounds and division errors with their messages, input checking, and
//! whole operators (a 64x64x64 matmul, a padded 3x3 convolution) against direct Rust loops.

use ekb_ir::l1::interp::{run, POISON_F32_BITS, POISON_I32};
use ekb_ir::l1::parse::parse;
use ekb_ir::l1::Module;
use ekb_ir::tensor::{BufData, Buffer};
use ekb_ir::types::{DType, TensorType};
use ekb_ir::{Diagnostic, SourceFile};
use std::collections::HashMap;

fn module(text: &str) -> Module {
    parse(&SourceFile::new("t.ekl1", text)).unwrap_or_else(|d| panic!("{d}"))
}

fn f32s(shape: &[usize], v: Vec<f32>) -> Buffer {
    Buffer { ty: TensorType::new(DType::F32, shape), data: BufData::F32(v) }
}

fn i32s(shape: &[usize], v: Vec<i32>) -> Buffer {
    Buffer { ty: TensorType::new(DType::I32, shape), data: BufData::I32(v) }
}

fn inputs(list: Vec<(&str, Buffer)>) -> HashMap<String, Buffer> {
    list.into_iter().map(|(n, b)| (n.to_string(), b)).collect()
}

fn out_f32(outs: &HashMap<String, Buffer>, name: &str) -> Vec<f32> {
    match &outs[name].data {
        BufData::F32(v) => v.clone(),
        other => panic!("{name} is not f32: {other:?}"),
    }
}

fn out_i32(outs: &HashMap<String, Buffer>, name: &str) -> Vec<i32> {
    match &outs[name].data {
        BufData::I32(v) => v.clone(),
        other => panic!("{name} is not i32: {other:?}"),
    }
}

fn run_err(text: &str, ins: Vec<(&str, Buffer)>) -> Diagnostic {
    let src = SourceFile::new("t.ekl1", text);
    let m = parse(&src).unwrap_or_else(|d| panic!("{d}"));
    src.locate(run(&m, &inputs(ins)).expect_err("expected a run-time error"))
}

const MATMUL_2X3: &str = "module mm {
  input a: f32[2,3]
  input b: f32[3,2]
  output c: f32[2,2]

  kernel mm(a: f32[2,3] in, b: f32[3,2] in, c: f32[2,2] out) {
    parallel i in 0..2 {
      vectorize j in 0..2 {
        c[i, j] = 0.0
        for k in 0..3 {
          c[i, j] = c[i, j] + a[i, k] * b[k, j]
        }
      }
    }
  }

  run mm(a, b, c)
}
";

#[test]
fn matmul_2x3_by_hand() {
    // [1 2 3; 4 5 6] x [7 8; 9 10; 11 12] = [58 64; 139 154]
    let m = module(MATMUL_2X3);
    let outs = run(
        &m,
        &inputs(vec![
            ("a", f32s(&[2, 3], vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0])),
            ("b", f32s(&[3, 2], vec![7.0, 8.0, 9.0, 10.0, 11.0, 12.0])),
        ]),
    )
    .unwrap();
    assert_eq!(outs.len(), 1);
    assert_eq!(out_f32(&outs, "c"), [58.0, 64.0, 139.0, 154.0]);
    assert_eq!(outs["c"].ty, TensorType::new(DType::F32, [2, 2]));
}

#[test]
fn reduction_with_a_local_accumulator_and_a_temp() {
    let text = "module rowsum {
  input x: f32[3,4]
  output y: f32[3]
  output z: f32[]
  buffer t: f32[3]

  kernel rows(x: f32[3,4] in, t: f32[3] out) {
    for i in 0..3 {
      alloc acc: f32[] local
      acc[] = 0.0
      for j in 0..4 {
        acc[] = acc[] + x[i, j]
      }
      t[i] = acc[]
    }
  }

  kernel finish(t: f32[3] in, y: f32[3] out, z: f32[] out) {
    alloc best: f32[1] local
    best[0] = -inf
    for i in 0..3 {
      y[i] = t[i] * 0.5
      best[0] = max(best[0], t[i])
    }
    z[] = best[0]
  }

  run rows(x, t)
  run finish(t, y, z)
}
";
    let x: Vec<f32> = (1..=12).map(|v| v as f32).collect();
    let outs = run(&module(text), &inputs(vec![("x", f32s(&[3, 4], x))])).unwrap();
    // Row sums 10, 26, 42; halved; the largest is 42.
    assert_eq!(out_f32(&outs, "y"), [5.0, 13.0, 21.0]);
    assert_eq!(out_f32(&outs, "z"), [42.0]);
    assert!(!outs.contains_key("t"), "temps are not returned");
}

#[test]
fn integer_division_truncates_and_arithmetic_wraps() {
    let text =
        std::fs::read_to_string(format!("{}/tests/golden/l1/ints.ekl1", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let a = vec![-7, 7, -7, 7, i32::MIN, 5];
    let outs = run(&module(&text), &inputs(vec![("a", i32s(&[6], a))])).unwrap();
    // Divisors alternate 2, -2: -7/2 = -3, -7%2 = -1, 7/-2 = -3, 7%-2 = 1, MIN/2, 5/-2 = -2.
    assert_eq!(out_i32(&outs, "q"), [-3, -3, -3, -3, -1073741824, -2]);
    assert_eq!(out_i32(&outs, "r"), [-1, 1, -1, 1, 0, 1]);
    // Each step adds -|a| + 2^31 modulo 2^32 (abs(MIN) wraps to MIN, and MIN * -1 to MIN):
    // six times 2^31 vanish, leaving -33 + MIN, which wraps to 2^31 - 33 > 0.
    assert_eq!(out_i32(&outs, "s"), [2147483615]);
}

/// One kernel evaluating `exprs` (each an f32 or i32 expression) into `o` / `p`.
fn eval(f32_exprs: &[&str], i32_exprs: &[&str]) -> (Vec<f32>, Vec<i32>) {
    let (nf, ni) = (f32_exprs.len(), i32_exprs.len());
    let mut body = String::new();
    for (i, e) in f32_exprs.iter().enumerate() {
        body += &format!("    o[{i}] = {e}\n");
    }
    for (i, e) in i32_exprs.iter().enumerate() {
        body += &format!("    p[{i}] = {e}\n");
    }
    let text = format!(
        "module e {{\n  output o: f32[{nf}]\n  output p: i32[{ni}]\n\n  kernel k(o: f32[{nf}] out, p: i32[{ni}] out) {{\n{body}  }}\n\n  run k(o, p)\n}}\n"
    );
    let outs = run(&module(&text), &HashMap::new()).unwrap_or_else(|d| panic!("{d}"));
    (out_f32(&outs, "o"), out_i32(&outs, "p"))
}

#[test]
fn scalar_semantics() {
    let (f, i) = eval(
        &[
            "0.1 + 0.2",
            "rsqrt(4.0)",
            "erf(0.5)",
            "pow(2.0, 10.0)",
            "f32(16777217)",
            "max(nan, 1.0)",
            "select(nan < 1.0 || nan >= 1.0, 1.0, 2.0)",
            "floor(-2.5) + ceil(-2.5)",
            "f32(3 > 2) + f32(true && false)",
            "1.0 / 0.0",
        ],
        &[
            "-7 / 2",
            "-7 % 2",
            "7 % -2",
            "i32(-2.7)",
            "i32(3.0e10)",
            "i32(nan)",
            "2147483647 + 1",
            "-2147483648 / -1",
            "-2147483648 % -1",
            "abs(-2147483648)",
            "min(-3, 2) * max(-3, 2)",
            "i32(1 < 2) + i32(!(1 < 2))",
        ],
    );
    assert_eq!(f[0], 0.1f32 + 0.2f32);
    assert_eq!(f[0].to_bits(), 0x3e99999a, "f32 rounding, not f64");
    assert_eq!(f[1..5], [0.5, libm::erff(0.5), 1024.0, 16777216.0]);
    assert!(f[5].is_nan(), "max propagates a NaN operand: {}", f[5]);
    assert_eq!(f[6], 2.0, "comparisons with NaN are false");
    assert_eq!(f[7..10], [-5.0, 1.0, f32::INFINITY]);
    assert_eq!(i, [-3, -1, 1, -2, i32::MAX, 0, i32::MIN, i32::MIN, 0, i32::MIN, -6, 1]);
}

/// `exp_ftz` is `exp` with results below 2^-125 flushed to `+0` (the interpreter flushes every one
/// the semantics allows to).
#[test]
fn exp_ftz_is_exp_with_results_below_2_pow_125_flushed() {
    let (f, _) = eval(
        &[
            "exp_ftz(1.0)",
            "exp_ftz(-86.0)",
            "exp_ftz(-87.0)",
            "exp_ftz(-100.0)",
            "exp_ftz(100.0)",
            "exp_ftz(nan)",
        ],
        &[],
    );
    assert_eq!(f[..2], [1f32.exp(), (-86f32).exp()]);
    assert!((-86f32).exp() > 2.0 * f32::MIN_POSITIVE && (-87f32).exp() < 2.0 * f32::MIN_POSITIVE);
    assert_eq!(f[2].to_bits(), 0, "{:e} is below 2^-125: +0", (-87f32).exp());
    assert_eq!(f[3].to_bits(), 0);
    assert_eq!(f[4], f32::INFINITY);
    assert!(f[5].is_nan());
}

#[test]
fn unwritten_outputs_and_allocs_hold_the_poison_pattern() {
    let text = "module p {
  output y: f32[3]
  output n: i32[2]

  kernel k(y: f32[3] out, n: i32[2] out) {
    y[0] = 1.0
    for r in 0..2 {
      alloc t: i32[2] local
      if r == 0 {
        t[1] = 5
      }
      n[r] = t[1]
    }
  }

  run k(y, n)
}
";
    let outs = run(&module(text), &HashMap::new()).unwrap();
    let y = out_f32(&outs, "y");
    assert_eq!(y[0], 1.0);
    assert_eq!((y[1].to_bits(), y[2].to_bits()), (POISON_F32_BITS, POISON_F32_BITS));
    assert!(y[1].is_nan());
    // The alloc is poisoned again when its statement runs in the second iteration.
    assert_eq!(out_i32(&outs, "n"), [5, POISON_I32]);
    assert_eq!(POISON_I32, 0x7eadbeef);
}

const GATHER: &str = "module g {
  input x: f32[1,1,56,4]
  input off: i32[1]
  output y: f32[28,3]

  kernel k0(x: f32[1,1,56,4] in, off: i32[1] in, y: f32[28,3] out) {
    let h0 = off[0]
    for h in 0..28 {
      for kh in 0..3 {
        y[h, kh] = x[0, 0, h * 2 + kh - 1 + h0, 0]
      }
    }
  }

  run k0(x, off, y)
}
";

#[test]
fn out_of_bounds_at_run_time_names_everything() {
    // The index depends on a loaded value, so only the run can see it leave the buffer.
    let x = f32s(&[1, 1, 56, 4], (0..224).map(|v| v as f32).collect());
    let d = run_err(GATHER, vec![("x", x.clone()), ("off", i32s(&[1], vec![1]))]);
    assert_eq!(
        d.message,
        "index 56 out of bounds for dim 2 of `x` (size 56) in kernel k0: `h * 2 + kh - 1 + h0`"
    );
    assert_eq!(d.notes, ["at h0 = 1, h = 27, kh = 2", "in step 0 of the plan (run k0)"]);
    let loc = d.location.clone().unwrap();
    assert_eq!((loc.line, loc.column), (10, 28));
    // Rendered as docs/ir-l1.md shows it.
    let rendered = "error: index 56 out of bounds for dim 2 of `x` (size 56) in kernel k0: `h * 2 + kh - 1 + h0`\n  \
                    --> t.ekl1:10:28\n   |\n10 |         y[h, kh] = x[0, 0, h * 2 + kh - 1 + h0, 0]\n   |                            \
                    ^^^^^^^^^^^^^^^^^^^\n  = note: at h0 = 1, h = 27, kh = 2\n  = note: in step 0 of the plan (run k0)\n";
    assert_eq!(d.to_string(), rendered);
    let d = run_err(GATHER, vec![("x", x.clone()), ("off", i32s(&[1], vec![0]))]);
    assert_eq!(
        d.message,
        "index -1 out of bounds for dim 2 of `x` (size 56) in kernel k0: `h * 2 + kh - 1 + h0`"
    );
    assert_eq!(d.notes[0], "at h0 = 0, h = 0, kh = 0");
}

#[test]
fn in_range_gather_reads_the_right_elements() {
    let text = GATHER.replace("0..28", "0..27");
    let x = f32s(&[1, 1, 56, 4], (0..224).map(|v| v as f32).collect());
    let outs = run(&module(&text), &inputs(vec![("x", x), ("off", i32s(&[1], vec![1]))])).unwrap();
    let y = out_f32(&outs, "y");
    // y[h, kh] = x[0, 0, 2h + kh, 0] = 4 * (2h + kh); rows 27 are never written.
    assert_eq!(y[0..3], [0.0, 4.0, 8.0]);
    assert_eq!(y[26 * 3 + 2], 4.0 * 54.0);
    assert!(y[27 * 3].is_nan());
}

#[test]
fn division_by_zero_at_run_time() {
    let text = "module d {
  input n: i32[2]
  output q: i32[2]

  kernel k(n: i32[2] in, q: i32[2] out) {
    for i in 0..2 {
      q[i] = 10 / n[i]
    }
  }

  run k(n, q)
}
";
    let d = run_err(text, vec![("n", i32s(&[2], vec![5, 0]))]);
    assert_eq!(d.message, "integer division by zero in kernel k: `10 / n[i]`");
    assert_eq!(d.notes[0], "at i = 1");
    assert_eq!(d.location.clone().unwrap().line, 7);
}

#[test]
fn inputs_are_checked_by_name_type_and_length() {
    let m = module(MATMUL_2X3);
    let a = f32s(&[2, 3], vec![0.0; 6]);
    let d = run(&m, &inputs(vec![("a", a.clone()), ("bb", f32s(&[3, 2], vec![0.0; 6]))])).unwrap_err();
    assert_eq!(d.message, "missing input `b` (f32[3,2])");
    assert_eq!(d.hint.as_deref(), Some("did you mean `bb`?"));
    let d = run(&m, &inputs(vec![("a", a.clone()), ("b", f32s(&[2, 3], vec![0.0; 6]))])).unwrap_err();
    assert_eq!(d.message, "input `b` is f32[2,3] but the module declares it f32[3,2]");
    let d = run(&m, &inputs(vec![("a", a.clone()), ("b", f32s(&[3, 2], vec![0.0; 5]))])).unwrap_err();
    assert_eq!(d.message, "input `b` holds 5 f32 elements but its type f32[3,2] needs 6 f32 elements");
    let wrong = Buffer { ty: TensorType::new(DType::F32, [3, 2]), data: BufData::I32(vec![0; 6]) };
    let d = run(&m, &inputs(vec![("a", a), ("b", wrong)])).unwrap_err();
    assert!(d.message.contains("holds 6 i32 elements"), "{d}");
}

#[test]
fn modules_that_do_not_verify_do_not_run() {
    let d = run_err(&MATMUL_2X3.replace("a[i, k] * b[k, j]", "a[i, k] * b[k, j + 1]"), vec![]);
    assert_eq!(d.message, "index `j + 1` of `b` (dim 1, size 2) ranges over [1, 2] in kernel mm");
    assert!(d.notes.iter().any(|n| n == "module mm does not verify, so it cannot run"));
}

#[test]
fn golden_relu_add_matches_a_direct_computation() {
    let text =
        std::fs::read_to_string(format!("{}/tests/golden/l1/relu_add.ekl1", env!("CARGO_MANIFEST_DIR")))
            .unwrap();
    let x: Vec<f32> = (0..32).map(|v| (v as f32 - 12.0) * 0.37).collect();
    let w: Vec<f32> = (0..8).map(|v| 0.5 - v as f32 * 0.21).collect();
    let outs =
        run(&module(&text), &inputs(vec![("x", f32s(&[4, 8], x.clone())), ("w", f32s(&[8], w.clone()))]))
            .unwrap();
    let mut want = vec![0.0f32; 32];
    for i in 0..4 {
        let mut acc = 0.0f32;
        for j in 0..8 {
            let v = x[i * 8 + j].max(0.0) + w[j];
            if v > 0.0 && j % 2 == 0 {
                acc += v;
            } else if j < 4 {
                acc -= 1.0;
            } else {
                acc *= 0.5;
            }
            want[i * 8 + j] = if v > 1.0 { acc } else { j as f32 };
        }
    }
    assert_eq!(out_f32(&outs, "y"), want);
}

fn lcg(seed: &mut u64) -> f32 {
    *seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    ((*seed >> 40) as f32 / (1u64 << 24) as f32) - 0.5
}

#[test]
fn matmul_64_cubed_matches_direct_loops() {
    let n = 64;
    let text = format!(
        "module mm64 {{\n  input a: f32[{n},{n}]\n  input b: f32[{n},{n}]\n  output c: f32[{n},{n}]\n\n  \
         kernel mm(a: f32[{n},{n}] in, b: f32[{n},{n}] in, c: f32[{n},{n}] out) {{\n    \
         parallel i in 0..{n} {{\n      alloc acc: f32[{n}] local\n      vectorize j in 0..{n} {{\n        acc[j] = 0.0\n      }}\n      \
         for k in 0..{n} {{\n        let aik = a[i, k]\n        vectorize j in 0..{n} {{\n          acc[j] = acc[j] + aik * b[k, j]\n        }}\n      }}\n      \
         for j in 0..{n} {{\n        c[i, j] = acc[j]\n      }}\n    }}\n  }}\n\n  run mm(a, b, c)\n}}\n"
    );
    let mut seed = 7;
    let a: Vec<f32> = (0..n * n).map(|_| lcg(&mut seed)).collect();
    let b: Vec<f32> = (0..n * n).map(|_| lcg(&mut seed)).collect();
    let start = std::time::Instant::now();
    let outs =
        run(&module(&text), &inputs(vec![("a", f32s(&[n, n], a.clone())), ("b", f32s(&[n, n], b.clone()))]))
            .unwrap();
    eprintln!("64^3 matmul interpreted in {:?}", start.elapsed());
    let mut want = vec![0.0f32; n * n];
    for i in 0..n {
        for k in 0..n {
            for j in 0..n {
                want[i * n + j] += a[i * n + k] * b[k * n + j];
            }
        }
    }
    // Same order of f32 operations: bit-identical.
    assert_eq!(out_f32(&outs, "c"), want);
}

#[test]
fn padded_conv_golden_matches_direct_loops() {
    let text =
        std::fs::read_to_string(format!("{}/tests/golden/l1/conv_pad.ekl1", env!("CARGO_MANIFEST_DIR")))
            .unwrap();
    let mut seed = 11;
    let x: Vec<f32> = (0..4 * 64).map(|_| lcg(&mut seed)).collect();
    let w: Vec<f32> = (0..8 * 4 * 9).map(|_| lcg(&mut seed)).collect();
    let b: Vec<f32> = (0..8).map(|_| lcg(&mut seed)).collect();
    let outs = run(
        &module(&text),
        &inputs(vec![
            ("x", f32s(&[1, 4, 8, 8], x.clone())),
            ("w", f32s(&[8, 4, 3, 3], w.clone())),
            ("b", f32s(&[8], b.clone())),
        ]),
    )
    .unwrap();
    let mut want = vec![0.0f32; 8 * 64];
    for oc in 0..8 {
        for oh in 0..8i32 {
            for ow in 0..8i32 {
                let mut acc = b[oc];
                for ic in 0..4 {
                    for kh in 0..3 {
                        let ih = oh + kh - 1;
                        for kw in 0..3 {
                            let iw = ow + kw - 1;
                            if (0..8).contains(&ih) && (0..8).contains(&iw) {
                                acc += x[ic * 64 + (ih * 8 + iw) as usize]
                                    * w[((oc * 4 + ic) * 3 + kh as usize) * 3 + kw as usize];
                            }
                        }
                    }
                }
                want[oc * 64 + (oh * 8 + ow) as usize] = acc.max(0.0);
            }
        }
    }
    assert_eq!(out_f32(&outs, "y"), want);
}

#[test]
fn conv_16_channels_16x16_runs_quickly_enough() {
    // 16 -> 16 channels, 16x16, 3x3, padding 1: 589824 multiply-adds through the interpreter.
    let text =
        std::fs::read_to_string(format!("{}/tests/golden/l1/conv_pad.ekl1", env!("CARGO_MANIFEST_DIR")))
            .unwrap()
            .replace("f32[1,4,8,8]", "f32[1,16,16,16]")
            .replace("f32[8,4,3,3]", "f32[16,16,3,3]")
            .replace("f32[8]", "f32[16]")
            .replace("f32[1,8,8,8]", "f32[1,16,16,16]")
            .replace("oc in 0..8", "oc in 0..16")
            .replace("0..8", "0..16")
            .replace("ic in 0..4", "ic in 0..16")
            .replace("< 8", "< 16");
    let x = f32s(&[1, 16, 16, 16], vec![1.0; 4096]);
    let w = f32s(&[16, 16, 3, 3], vec![0.5; 2304]);
    let b = f32s(&[16], vec![0.25; 16]);
    let start = std::time::Instant::now();
    let outs = run(&module(&text), &inputs(vec![("x", x), ("w", w), ("b", b)])).unwrap();
    eprintln!("16x16x16 conv interpreted in {:?}", start.elapsed());
    let y = out_f32(&outs, "y");
    // Interior points see 9 taps x 16 channels x 0.5 = 72, corners 4 x 16 x 0.5 = 32, edges 48.
    assert_eq!((y[16 + 1], y[0], y[1]), (72.25, 32.25, 48.25));
}

#[test]
fn i8_loads_sign_extend_stores_keep_the_low_byte_and_round_is_half_to_even() {
    let text = "module q {
  input x: i8[4]
  input f: f32[6]
  output y: i32[4]
  output z: i8[6]
  output r: f32[6]
  buffer t: i8[2]

  kernel widen(x: i8[4] in, y: i32[4] out) {
    for i in 0..4 {
      y[i] = x[i] * 2
    }
  }

  kernel narrow(f: f32[6] in, z: i8[6] out, r: f32[6] out) {
    for i in 0..6 {
      z[i] = i32(f[i])
      r[i] = round(f[i])
    }
  }

  kernel unwritten(t: i8[2] out) {
    for i in 0..1 {
      t[i] = 1
    }
  }

  run widen(x, y)
  run narrow(f, z, r)
  run unwritten(t)
}
";
    let src = SourceFile::new("t.ekl1", text);
    let m = parse(&src).unwrap_or_else(|d| panic!("{d}"));
    assert_eq!(ekb_ir::l1::print::print(&m), text);
    let x = Buffer { ty: TensorType::new(DType::I8, [4]), data: BufData::I8(vec![-128, -1, 0, 127]) };
    let f = Buffer {
        ty: TensorType::new(DType::F32, [6]),
        data: BufData::F32(vec![0.5, -0.5, 2.5, 200.0, -129.0, 1.5]),
    };
    let outs = run(&m, &inputs(vec![("x", x), ("f", f)])).unwrap();
    // Loads widen with the sign: -128 * 2 is -256, not 0 or 256.
    assert_eq!(out_i32(&outs, "y"), [-256, -2, 0, 254]);
    // Stores keep the low 8 bits: 200 is 0xc8 = -56, -129 is 0x7f = 127.
    assert_eq!(outs["z"].data, BufData::I8(vec![0, 0, 2, -56, 127, 1]));
    assert_eq!(out_f32(&outs, "r"), [0.0, -0.0, 2.0, 200.0, -129.0, 2.0]);
    assert!(out_f32(&outs, "r")[1].is_sign_negative(), "round(-0.5) is -0.0");
    assert_eq!(ekb_ir::l1::interp::POISON_I8, -17);
}

#[test]
fn i8_buffers_take_one_byte_and_poison_with_the_low_byte() {
    let text = "module p {
  input x: i8[3]
  output y: i8[3]

  kernel k(x: i8[3] in, y: i8[3] out) {
    for i in 0..2 {
      y[i] = x[i]
    }
  }

  run k(x, y)
}
";
    let m = parse(&SourceFile::new("t.ekl1", text)).unwrap();
    // 3 + 3 bytes: i8 elements are one byte each.
    assert_eq!(ekb_ir::l1::memory::peak_memory(&m).peak_bytes, 6);
    let x = Buffer { ty: TensorType::new(DType::I8, [3]), data: BufData::I8(vec![5, -6, 7]) };
    let outs = run(&m, &inputs(vec![("x", x)])).unwrap();
    assert_eq!(outs["y"].data, BufData::I8(vec![5, -6, -17]));
    // A store of an f32 into an i8 buffer is a type error naming the i32 conversion.
    let bad = text.replace("y[i] = x[i]", "y[i] = f32(x[i])");
    let ds = ekb_ir::l1::verify::verify(&parse(&SourceFile::new("t.ekl1", bad)).unwrap(), None);
    assert!(
        ds[0].message.starts_with("cannot store f32 into `y` (i8[3]) in kernel k: convert with i32(...)"),
        "{}",
        ds[0]
    );
}

#[test]
fn f16_elements_load_exactly_store_rounded_and_poison_as_a_nan() {
    let text = "module h {
  input x: f16[4]
  input f: f32[5]
  output y: f32[4]
  output z: f16[5]
  output u: f16[3]

  kernel widen(x: f16[4] in, y: f32[4] out) {
    for i in 0..4 {
      y[i] = x[i] * 2.0
    }
  }

  kernel narrow(f: f32[5] in, z: f16[5] out, u: f16[3] out) {
    for i in 0..5 {
      z[i] = f[i]
    }
    for i in 0..2 {
      u[i] = f[i] + 1.0
    }
  }

  run widen(x, y)
  run narrow(f, z, u)
}
";
    let m = parse(&SourceFile::new("t.ekl1", text)).unwrap_or_else(|d| panic!("{d}"));
    assert_eq!(ekb_ir::l1::print::print(&m), text);
    // 8 + 20 + 16 + 10 + 6 bytes: f16 elements are two bytes each.
    assert_eq!(ekb_ir::l1::memory::peak_memory(&m).peak_bytes, 60);
    // 0x3555 = 1365/4096, 0x7bff = 65504, 0x0001 = 2^-24, 0xfc00 = -inf.
    let x = Buffer {
        ty: TensorType::new(DType::F16, [4]),
        data: BufData::F16(vec![0x3555, 0x7bff, 0x0001, 0xfc00]),
    };
    // 1 + 2^-11 is a tie (to 1), 65520 overflows, 0.1 rounds to 0x2e66, 2^-25 ties to 0.
    let f = Buffer {
        ty: TensorType::new(DType::F32, [5]),
        data: BufData::F32(vec![1.0 + 2f32.powi(-11), 65520.0, 0.1, 2f32.powi(-25), -3.0]),
    };
    let outs = run(&m, &inputs(vec![("x", x), ("f", f)])).unwrap();
    assert_eq!(out_f32(&outs, "y"), [1365.0 / 2048.0, 131008.0, 2f32.powi(-23), f32::NEG_INFINITY]);
    assert_eq!(outs["z"].data, BufData::F16(vec![0x3c00, 0x7c00, 0x2e66, 0x0000, 0xc200]));
    // 1 + (1 + 2^-11) = 2 + 2^-11 in f32, less than half an f16 step (2^-10) above 2: 2 (0x4000);
    // 65521 -> infinity; the third element is never written: the poison NaN.
    assert_eq!(outs["u"].data, BufData::F16(vec![0x4000, 0x7c00, 0x7ead]));
    assert_eq!(ekb_ir::l1::interp::POISON_F16_BITS, 0x7ead);
}
