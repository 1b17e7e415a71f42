//! The conformance corpus of the CPU adapter: small L1 modules that together use every
//! statement kind, loop kind, intrinsic, cast and operator, each with inputs and the expected
//! outputs computed here by hand (plain Rust following the L1 semantics). Every backend test
//! (host runs, object checks, aarch64 runs under qemu) goes over this one list.

use super::*;
use ekb_ir::l1::minmax::{max_f32, min_f32};
use ekb_ir::tensor::{compare, Buffer, Tolerance};
use std::collections::HashMap;

pub type Bufs = HashMap<String, Buffer>;

pub struct Case {
    pub name: &'static str,
    pub text: &'static str,
    pub inputs: fn() -> Bufs,
    pub expect: fn(&Bufs) -> Bufs,
}

/// Checks every expected output under the evaluation tolerance (integers exactly; a NaN
/// reference needs a NaN). f16 outputs must match bit for bit (any NaN for a NaN).
pub fn check(case: &str, expected: &Bufs, got: &Bufs) {
    for (name, want) in expected {
        let have = got.get(name).unwrap_or_else(|| panic!("{case}: output `{name}` missing"));
        if let (BufData::F16(w), BufData::F16(h)) = (&want.data, &have.data) {
            let nan = |b: u16| b & 0x7fff > 0x7c00;
            let bad = w.iter().zip(h).position(|(&w, &h)| w != h && !(nan(w) && nan(h)));
            assert!(bad.is_none() && w.len() == h.len(), "{case}: output `{name}` differs at {bad:?}");
            continue;
        }
        if let Err(m) = compare(&want.to_tensor(), &have.to_tensor(), Tolerance::default_for(want.ty.dtype)) {
            panic!("{case}: output `{name}`: {m}\n expected {:?}\n      got {:?}", want.data, have.data);
        }
    }
}

/// Deterministic values in `[-1, 1]` that are multiples of 1/64: sums and products of a few
/// thousand of them are exact in f32, whatever the order.
pub fn sixty_fourths(seed: u64, n: usize) -> Vec<f32> {
    let mut s = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    (0..n)
        .map(|_| {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((s >> 33) % 129) as f32 / 64.0 - 1.0
        })
        .collect()
}

pub fn all() -> Vec<Case> {
    vec![
        Case { name: "relu_add", text: RELU_ADD, inputs: relu_add_inputs, expect: relu_add_expect },
        Case {
            name: "intrinsics_f32",
            text: INTRINSICS_F32,
            inputs: intrinsics_inputs,
            expect: intrinsics_expect,
        },
        Case {
            name: "intrinsics_i32",
            text: INTRINSICS_I32,
            inputs: int_intr_inputs,
            expect: int_intr_expect,
        },
        Case { name: "div_rem", text: DIV_REM, inputs: div_rem_inputs, expect: div_rem_expect },
        Case { name: "casts", text: CASTS, inputs: casts_inputs, expect: casts_expect },
        Case { name: "select_logic", text: SELECT_LOGIC, inputs: select_inputs, expect: select_expect },
        Case { name: "accumulate", text: ACCUMULATE, inputs: accumulate_inputs, expect: accumulate_expect },
        Case { name: "parallel", text: PARALLEL, inputs: parallel_inputs, expect: parallel_expect },
        Case { name: "reduce", text: REDUCE, inputs: reduce_inputs, expect: reduce_expect },
        Case { name: "edges", text: EDGES, inputs: edges_inputs, expect: edges_expect },
        Case { name: "copies", text: COPIES, inputs: copies_inputs, expect: copies_expect },
        Case { name: "big_local", text: BIG_LOCAL, inputs: big_local_inputs, expect: big_local_expect },
        Case { name: "trig", text: TRIG, inputs: trig_inputs, expect: trig_expect },
        Case { name: "int8", text: INT8, inputs: int8_inputs, expect: int8_expect },
        Case { name: "half", text: HALF, inputs: half_inputs, expect: half_expect },
        Case { name: "views", text: VIEWS, inputs: views_inputs, expect: views_expect },
    ]
}

// ---- views: a buffer passed under another shape of its element count, twice in one run ----

pub const VIEWS: &str = "module views {
  input x: f32[2,6]
  output y: f32[3,4]
  output z: f32[12]
  buffer t: f32[12]

  kernel flat(a: f32[12] in, b: f32[12] out) {
    vectorize i in 0..12 {
      b[i] = a[i] * 2.0
    }
  }

  kernel both(a: f32[3,4] in, f: f32[2,2,3] in, y: f32[3,4] out) {
    for r in 0..3 {
      vectorize c in 0..4 {
        let q = r * 4 + c
        y[r, c] = a[r, c] + f[q / 6, q % 6 / 3, q % 3]
      }
    }
  }

  kernel copy(a: f32[3,4] in, z: f32[3,4] out) {
    for r in 0..3 {
      for c in 0..4 {
        z[r, c] = a[r, c]
      }
    }
  }

  run flat(x, t)
  run both(t, t, y)
  run copy(x, z)
}
";

fn views_inputs() -> Bufs {
    inputs(vec![("x", f32s(&[2, 6], sixty_fourths(9, 12)))])
}

fn views_expect(i: &Bufs) -> Bufs {
    let x = as_f32(get(i, "x"));
    let t: Vec<f32> = x.iter().map(|v| v * 2.0).collect();
    // `f` reads the same elements as `a`: row-major order is the buffer's whatever the shape.
    let y: Vec<f32> = t.iter().map(|v| v + v).collect();
    out(vec![("y", f32s(&[3, 4], y)), ("z", f32s(&[12], x.to_vec()))])
}

fn get<'a>(b: &'a Bufs, n: &str) -> &'a Buffer {
    &b[n]
}

fn out(list: Vec<(&str, Buffer)>) -> Bufs {
    inputs(list)
}

// ---- relu_add: the example of the L1 spec (parallel + vectorize, for + alloc + if chains) ----

pub const RELU_ADD: &str = "module relu_add {
  input x: f32[4,8]
  input w: f32[8]
  output y: f32[4,8]
  buffer t0: f32[4,8]

  kernel k0(x: f32[4,8] in, t0: f32[4,8] out) {
    parallel i in 0..4 {
      vectorize j in 0..8 {
        t0[i, j] = max(x[i, j], 0.0)
      }
    }
  }

  kernel k1(t0: f32[4,8] in, w: f32[8] in, y: f32[4,8] out) {
    for i in 0..4 {
      alloc acc: f32[1] local
      acc[0] = 0.0
      for j in 0..8 {
        let v = t0[i, j] + w[j]
        if v > 0.0 && j % 2 == 0 {
          acc[0] = acc[0] + v
        } else if j < 4 {
          acc[0] = acc[0] - 1.0
        } else {
          acc[0] = acc[0] * 0.5
        }
        y[i, j] = select(v > 1.0, acc[0], f32(j))
      }
    }
  }

  run k0(x, t0)
  run k1(t0, w, y)
}
";

fn relu_add_inputs() -> Bufs {
    let x: Vec<f32> = sixty_fourths(1, 32).iter().map(|v| v * 2.0).collect();
    inputs(vec![("x", f32s(&[4, 8], x)), ("w", f32s(&[8], sixty_fourths(2, 8)))])
}

fn relu_add_expect(i: &Bufs) -> Bufs {
    let (x, w) = (as_f32(get(i, "x")), as_f32(get(i, "w")));
    let mut y = vec![0.0f32; 32];
    for r in 0..4 {
        let mut acc = 0.0f32;
        for j in 0..8 {
            let v = x[r * 8 + j].max(0.0) + w[j];
            if v > 0.0 && j % 2 == 0 {
                acc += v;
            } else if j < 4 {
                acc -= 1.0;
            } else {
                acc *= 0.5;
            }
            y[r * 8 + j] = if v > 1.0 { acc } else { j as f32 };
        }
    }
    out(vec![("y", f32s(&[4, 8], y))])
}

// ---- intrinsics_f32: every f32 intrinsic, serial and vectorised, NaN and infinities ----

pub const INTRINSICS_F32: &str = "module intrinsics_f32 {
  input x: f32[16]
  output y: f32[17,16]
  output yv: f32[17,16]

  kernel scalar(x: f32[16] in, y: f32[17,16] out) {
    for i in 0..16 {
      let a = x[i]
      y[0, i] = exp(a)
      y[1, i] = log(a)
      y[2, i] = sqrt(a)
      y[3, i] = rsqrt(a)
      y[4, i] = tanh(a)
      y[5, i] = erf(a)
      y[6, i] = pow(abs(a), 1.5)
      y[7, i] = pow(2.0, a)
      y[8, i] = pow(10.0, a)
      y[9, i] = pow(2.0, f32(i - 8))
      y[10, i] = abs(a)
      y[11, i] = min(a, 0.5)
      y[12, i] = max(a, -0.5)
      y[13, i] = floor(a)
      y[14, i] = ceil(a)
      y[15, i] = min(a, nan)
      y[16, i] = max(nan, a)
    }
  }

  kernel vector(x: f32[16] in, y: f32[17,16] out) {
    vectorize i in 0..16 {
      let a = x[i]
      y[0, i] = exp(a)
      y[1, i] = log(a)
      y[2, i] = sqrt(a)
      y[3, i] = rsqrt(a)
      y[4, i] = tanh(a)
      y[5, i] = erf(a)
      y[6, i] = pow(abs(a), 1.5)
      y[7, i] = pow(2.0, a)
      y[8, i] = pow(10.0, a)
      y[9, i] = pow(2.0, f32(i - 8))
      y[10, i] = abs(a)
      y[11, i] = min(a, 0.5)
      y[12, i] = max(a, -0.5)
      y[13, i] = floor(a)
      y[14, i] = ceil(a)
      y[15, i] = min(a, nan)
      y[16, i] = max(nan, a)
    }
  }

  run scalar(x, y)
  run vector(x, yv)
}
";

fn intrinsics_inputs() -> Bufs {
    let x = vec![-3.5, -2.0, -1.0, -0.5, -0.0, 0.0, 0.25, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 7.25, 20.0, f32::NAN];
    inputs(vec![("x", f32s(&[16], x))])
}

fn intrinsics_expect(i: &Bufs) -> Bufs {
    let x = as_f32(get(i, "x"));
    let mut y = vec![0.0f32; 17 * 16];
    for (i, &a) in x.iter().enumerate() {
        let rows = [
            a.exp(),
            a.ln(),
            a.sqrt(),
            1.0 / a.sqrt(),
            a.tanh(),
            libm::erff(a),
            a.abs().powf(1.5),
            2f32.powf(a),
            10f32.powf(a),
            2f32.powf(i as f32 - 8.0),
            a.abs(),
            min_f32(a, 0.5),
            max_f32(a, -0.5),
            a.floor(),
            a.ceil(),
            min_f32(a, f32::NAN),
            max_f32(f32::NAN, a),
        ];
        for (r, v) in rows.into_iter().enumerate() {
            y[r * 16 + i] = v;
        }
    }
    out(vec![("y", f32s(&[17, 16], y.clone())), ("yv", f32s(&[17, 16], y))])
}

// ---- intrinsics_i32: abs/min/max on i32, with the extremes ----

pub const INTRINSICS_I32: &str = "module intrinsics_i32 {
  input a: i32[8]
  input b: i32[8]
  output y: i32[3,8]

  kernel k(a: i32[8] in, b: i32[8] in, y: i32[3,8] out) {
    vectorize i in 0..8 {
      y[0, i] = abs(a[i])
      y[1, i] = min(a[i], b[i])
      y[2, i] = max(a[i], b[i])
    }
  }

  run k(a, b, y)
}
";

fn int_intr_inputs() -> Bufs {
    inputs(vec![
        ("a", i32s(&[8], vec![i32::MIN, -7, -1, 0, 1, 7, i32::MAX, -100])),
        ("b", i32s(&[8], vec![0, 3, -1, 5, -5, 7, i32::MIN, 100])),
    ])
}

fn int_intr_expect(i: &Bufs) -> Bufs {
    let (a, b) = (as_i32(get(i, "a")), as_i32(get(i, "b")));
    let mut y: Vec<i32> = a.iter().map(|v| v.wrapping_abs()).collect();
    y.extend(a.iter().zip(b).map(|(p, q)| *p.min(q)));
    y.extend(a.iter().zip(b).map(|(p, q)| *p.max(q)));
    out(vec![("y", i32s(&[3, 8], y))])
}

// ---- div_rem: truncating division of negatives, i32::MIN / -1, wrapping arithmetic ----

pub const DIV_REM: &str = "module div_rem {
  input a: i32[10]
  input b: i32[10]
  output q: i32[10]
  output r: i32[10]
  output c: i32[4,10]

  kernel k(a: i32[10] in, b: i32[10] in, q: i32[10] out, r: i32[10] out, c: i32[4,10] out) {
    for i in 0..10 {
      q[i] = a[i] / b[i]
      r[i] = a[i] % b[i]
      c[0, i] = a[i] / 3
      c[1, i] = a[i] % -4
      c[2, i] = a[i] / -1
      c[3, i] = a[i] * 65537 + 7 - a[i]
    }
  }

  run k(a, b, q, r, c)
}
";

fn div_rem_inputs() -> Bufs {
    inputs(vec![
        ("a", i32s(&[10], vec![7, -7, 7, -7, i32::MIN, i32::MIN, i32::MAX, 0, 5, -1])),
        ("b", i32s(&[10], vec![2, 2, -2, -2, -1, 1, -1, 3, 7, i32::MIN])),
    ])
}

fn div_rem_expect(i: &Bufs) -> Bufs {
    let (a, b) = (as_i32(get(i, "a")), as_i32(get(i, "b")));
    let q = a.iter().zip(b).map(|(x, y)| x.wrapping_div(*y)).collect();
    let r = a.iter().zip(b).map(|(x, y)| x.wrapping_rem(*y)).collect();
    let mut c: Vec<i32> = a.iter().map(|x| x / 3).collect();
    c.extend(a.iter().map(|x| x % -4));
    c.extend(a.iter().map(|x| x.wrapping_div(-1)));
    c.extend(a.iter().map(|x| x.wrapping_mul(65537).wrapping_add(7).wrapping_sub(*x)));
    out(vec![("q", i32s(&[10], q)), ("r", i32s(&[10], r)), ("c", i32s(&[4, 10], c))])
}

// ---- casts: saturating f32 -> i32 with NaN -> 0, i32 -> f32 rounding, bool -> i32/f32 ----

pub const CASTS: &str = "module casts {
  input x: f32[12]
  input n: i32[6]
  output xi: i32[12]
  output xv: i32[12]
  output nf: f32[6]
  output flags: i32[2,12]
  output flagsf: f32[12]

  kernel k(x: f32[12] in, n: i32[6] in, xi: i32[12] out, xv: i32[12] out, nf: f32[6] out, flags: i32[2,12] out, flagsf: f32[12] out) {
    for i in 0..12 {
      xi[i] = i32(x[i])
      flags[0, i] = i32(x[i] > 0.0)
      flags[1, i] = i32(x[i] != x[i])
      flagsf[i] = f32(x[i] < 1.0 || x[i] >= 3.0)
    }
    vectorize i in 0..12 {
      xv[i] = i32(x[i])
    }
    vectorize j in 0..6 {
      nf[j] = f32(n[j])
    }
  }

  run k(x, n, xi, xv, nf, flags, flagsf)
}
";

fn casts_inputs() -> Bufs {
    let x = vec![
        f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        3e9,
        -3e9,
        2.5,
        -2.5,
        0.99,
        -0.99,
        2147483520.0,
        -2147483648.0,
        1e-30,
    ];
    inputs(vec![
        ("x", f32s(&[12], x)),
        ("n", i32s(&[6], vec![16777217, -16777217, i32::MIN, i32::MAX, 0, -5])),
    ])
}

fn casts_expect(i: &Bufs) -> Bufs {
    let (x, n) = (as_f32(get(i, "x")), as_i32(get(i, "n")));
    // Rust's `as` is the L1 conversion: saturating, NaN -> 0, round to nearest.
    let xi: Vec<i32> = x.iter().map(|&v| v as i32).collect();
    let mut flags: Vec<i32> = x.iter().map(|&v| i32::from(v > 0.0)).collect();
    flags.extend(x.iter().map(|&v| i32::from(v.is_nan())));
    // Spelled as in the L1 text: for NaN both comparisons are false (`!contains` would be true).
    #[allow(clippy::manual_range_contains)]
    let flagsf = x.iter().map(|&v| if v < 1.0 || v >= 3.0 { 1.0 } else { 0.0 }).collect();
    out(vec![
        ("xi", i32s(&[12], xi.clone())),
        ("xv", i32s(&[12], xi)),
        ("nf", f32s(&[6], n.iter().map(|&v| v as f32).collect())),
        ("flags", i32s(&[2, 12], flags)),
        ("flagsf", f32s(&[12], flagsf)),
    ])
}

// ---- select_logic: select with loads in both arms, && || ! and NaN comparisons ----

pub const SELECT_LOGIC: &str = "module select_logic {
  input x: f32[8]
  input y: f32[8]
  output s: f32[8]
  output l: i32[4,8]

  kernel k(x: f32[8] in, y: f32[8] in, s: f32[8] out, l: i32[4,8] out) {
    for i in 0..8 {
      let p = x[i] < y[i]
      let q = x[i] == y[i]
      s[i] = select(p, x[i] * 2.0, select(q, 0.0, y[i] - x[i]))
      l[0, i] = i32(p && !q)
      l[1, i] = i32(p || q)
      l[2, i] = i32(!(x[i] >= y[i]))
      l[3, i] = select(i % 3 == 0 || i > 5, i * 10, -i)
    }
  }

  run k(x, y, s, l)
}
";

fn select_inputs() -> Bufs {
    inputs(vec![
        ("x", f32s(&[8], vec![1.0, 2.0, 3.0, f32::NAN, -1.0, 0.0, 5.0, -0.0])),
        ("y", f32s(&[8], vec![2.0, 2.0, 1.0, 1.0, f32::NAN, -0.0, 4.0, 0.0])),
    ])
}

fn select_expect(i: &Bufs) -> Bufs {
    let (x, y) = (as_f32(get(i, "x")), as_f32(get(i, "y")));
    let mut s = vec![0.0f32; 8];
    let mut l = vec![0i32; 32];
    for k in 0..8 {
        let (p, q) = (x[k] < y[k], x[k] == y[k]);
        s[k] = if p {
            x[k] * 2.0
        } else if q {
            0.0
        } else {
            y[k] - x[k]
        };
        l[k] = i32::from(p && !q);
        l[8 + k] = i32::from(p || q);
        #[allow(clippy::neg_cmp_op_on_partial_ord)] // As in the L1 text: true when either is NaN.
        let not_ge = !(x[k] >= y[k]);
        l[16 + k] = i32::from(not_ge);
        l[24 + k] = if k % 3 == 0 || k > 5 { k as i32 * 10 } else { -(k as i32) };
    }
    out(vec![("s", f32s(&[8], s)), ("l", i32s(&[4, 8], l))])
}

// ---- accumulate: local allocs as accumulators, lets, if, loads as loop bounds, unroll ----

pub const ACCUMULATE: &str = "module accumulate {
  input m: f32[6,10]
  input lens: i32[6]
  output rowsum: f32[6]
  output prefix: f32[6,10]
  output stats: f32[6,3]
  output squares: i32[40]

  kernel k(m: f32[6,10] in, lens: i32[6] in, rowsum: f32[6] out, prefix: f32[6,10] out, stats: f32[6,3] out) {
    for r in 0..6 {
      alloc acc: f32[3] local
      acc[0] = 0.0
      acc[1] = -inf
      acc[2] = 0.0
      let n = lens[r]
      for c in 0..n {
        acc[0] = acc[0] + m[r, c]
        prefix[r, c] = acc[0]
        if m[r, c] > acc[1] {
          acc[1] = m[r, c]
        }
      }
      for c in n..10 {
        prefix[r, c] = 0.0
      }
      unroll c in 0..4 {
        acc[2] = acc[2] + m[r, c] * m[r, c]
      }
      unroll c in 4..n {
        acc[2] = acc[2] - m[r, c]
      }
      rowsum[r] = acc[0]
      stats[r, 0] = acc[1]
      stats[r, 1] = acc[2]
      stats[r, 2] = f32(n)
    }
  }

  kernel sq(squares: i32[40] out) {
    unroll c in 0..40 {
      squares[c] = c * c - 3
    }
  }

  run k(m, lens, rowsum, prefix, stats)
  run sq(squares)
}
";

fn accumulate_inputs() -> Bufs {
    inputs(vec![("m", f32s(&[6, 10], sixty_fourths(3, 60))), ("lens", i32s(&[6], vec![10, 0, 3, 7, 4, 1]))])
}

fn accumulate_expect(i: &Bufs) -> Bufs {
    let (m, lens) = (as_f32(get(i, "m")), as_i32(get(i, "lens")));
    let (mut rowsum, mut prefix, mut stats) = (vec![0.0f32; 6], vec![0.0f32; 60], vec![0.0f32; 18]);
    for r in 0..6 {
        let n = lens[r] as usize;
        let (mut sum, mut max, mut sq) = (0.0f32, f32::NEG_INFINITY, 0.0f32);
        for c in 0..n {
            sum += m[r * 10 + c];
            prefix[r * 10 + c] = sum;
            if m[r * 10 + c] > max {
                max = m[r * 10 + c];
            }
        }
        for c in 0..4 {
            sq += m[r * 10 + c] * m[r * 10 + c];
        }
        for c in 4..n.max(4) {
            sq -= m[r * 10 + c];
        }
        rowsum[r] = sum;
        stats[r * 3..r * 3 + 3].copy_from_slice(&[max, sq, n as f32]);
    }
    out(vec![
        ("rowsum", f32s(&[6], rowsum)),
        ("prefix", f32s(&[6, 10], prefix)),
        ("stats", f32s(&[6, 3], stats)),
        ("squares", i32s(&[40], (0..40).map(|c| c * c - 3).collect())),
    ])
}

// ---- parallel: captured lets (f32, i32, bool, constants), a captured local table, bounds
// from loads, allocs inside the parallel body, several and empty parallel loops ----

pub const PARALLEL: &str = "module par_captures {
  input x: f32[64,16]
  input cfg: i32[2]
  input scale: f32[1]
  output y: f32[64,16]
  output z: f32[64]
  output w: i32[40]

  kernel k(x: f32[64,16] in, cfg: i32[2] in, scale: f32[1] in, y: f32[64,16] out, z: f32[64] out, w: i32[40] out) {
    let s = scale[0]
    let lo = cfg[0]
    let hi = cfg[1]
    let shift = lo * 2
    let two = 2
    let positive = s > 0.0
    alloc table: f32[16] local
    for j in 0..16 {
      table[j] = f32(j) * s
    }
    for i in 0..64 {
      z[i] = -1.0
      for j in 0..16 {
        y[i, j] = 0.0
      }
    }
    parallel i in lo..hi {
      alloc acc: f32[1] local
      acc[0] = 0.0
      let t = f32(i + shift) * s
      vectorize j in 0..16 {
        y[i, j] = x[i, j] * t + table[j]
        acc[0] = acc[0] + x[i, j]
      }
      if positive {
        z[i] = acc[0] * f32(two)
      } else {
        z[i] = acc[0]
      }
    }
    parallel i in 0..40 {
      w[i] = i * i - lo
    }
    parallel i in hi..lo {
      w[0] = 999
    }
  }

  run k(x, cfg, scale, y, z, w)
}
";

fn parallel_inputs() -> Bufs {
    inputs(vec![
        ("x", f32s(&[64, 16], sixty_fourths(4, 1024))),
        ("cfg", i32s(&[2], vec![5, 50])),
        ("scale", f32s(&[1], vec![0.5])),
    ])
}

fn parallel_expect(i: &Bufs) -> Bufs {
    let (x, cfg, s) = (as_f32(get(i, "x")), as_i32(get(i, "cfg")), as_f32(get(i, "scale"))[0]);
    let (lo, hi) = (cfg[0] as usize, cfg[1] as usize);
    let (mut y, mut z) = (vec![0.0f32; 1024], vec![-1.0f32; 64]);
    for r in lo..hi {
        let t = (r + 2 * lo) as f32 * s;
        let mut acc = 0.0f32;
        for j in 0..16 {
            y[r * 16 + j] = x[r * 16 + j] * t + j as f32 * s;
            acc += x[r * 16 + j];
        }
        z[r] = if s > 0.0 { acc * 2.0 } else { acc };
    }
    let w = (0..40).map(|k: i32| k * k - cfg[0]).collect();
    out(vec![("y", f32s(&[64, 16], y)), ("z", f32s(&[64], z)), ("w", i32s(&[40], w))])
}

// ---- reduce: vectorised reductions (sum, dot, max, min, integer counts) ----

pub const REDUCE: &str = "module reduce {
  input x: f32[1000]
  input y: f32[1000]
  output r: f32[4]
  output ir: i32[2]

  kernel k(x: f32[1000] in, y: f32[1000] in, r: f32[4] out, ir: i32[2] out) {
    alloc acc: f32[4] local
    alloc iacc: i32[2] local
    acc[0] = 0.0
    acc[1] = 0.0
    acc[2] = -inf
    acc[3] = inf
    iacc[0] = 0
    iacc[1] = 0
    vectorize i in 0..1000 {
      acc[0] = acc[0] + x[i]
      acc[1] = acc[1] + x[i] * y[i]
      acc[2] = max(acc[2], x[i])
      acc[3] = min(acc[3], y[i])
      iacc[0] = iacc[0] + i32(x[i] > 0.0)
      iacc[1] = iacc[1] + i * 3
    }
    for j in 0..4 {
      r[j] = acc[j]
    }
    ir[0] = iacc[0]
    ir[1] = iacc[1]
  }

  run k(x, y, r, ir)
}
";

fn reduce_inputs() -> Bufs {
    inputs(vec![("x", f32s(&[1000], sixty_fourths(5, 1000))), ("y", f32s(&[1000], sixty_fourths(6, 1000)))])
}

fn reduce_expect(i: &Bufs) -> Bufs {
    let (x, y) = (as_f32(get(i, "x")), as_f32(get(i, "y")));
    // Exact in any order: the values are multiples of 1/64 (see `sixty_fourths`).
    let sum = x.iter().sum::<f32>();
    let dot = x.iter().zip(y).map(|(a, b)| a * b).sum::<f32>();
    let max = x.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let min = y.iter().copied().fold(f32::INFINITY, f32::min);
    let count = x.iter().filter(|&&v| v > 0.0).count() as i32;
    out(vec![
        ("r", f32s(&[4], vec![sum, dot, max, min])),
        ("ir", i32s(&[2], vec![count, 3 * 999 * 1000 / 2])),
    ])
}

// ---- edges: rank-0 buffers, empty and reversed ranges of every loop kind, inout, temps ----

pub const EDGES: &str = "module edges {
  input s: f32[]
  input k: i32[]
  output y: f32[4]
  output e: f32[]
  buffer t: f32[4]

  kernel init(s: f32[] in, t: f32[4] out) {
    for i in 0..4 {
      t[i] = s[] + f32(i)
    }
    for i in 3..1 {
      t[0] = 100.0
    }
    vectorize i in 2..2 {
      t[1] = 100.0
    }
    unroll i in 5..0 {
      t[2] = 100.0
    }
  }

  kernel twice(t: f32[4] inout, k: i32[] in) {
    parallel i in k[]..4 {
      t[i] = t[i] * 2.0
    }
  }

  kernel fin(t: f32[4] in, y: f32[4] out, e: f32[] out) {
    for i in 0..4 {
      y[i] = t[i]
    }
    e[] = t[0] + t[3]
  }

  run init(s, t)
  run twice(t, k)
  run fin(t, y, e)
}
";

fn edges_inputs() -> Bufs {
    inputs(vec![("s", f32s(&[], vec![1.5])), ("k", i32s(&[], vec![1]))])
}

fn edges_expect(i: &Bufs) -> Bufs {
    let (s, k) = (as_f32(get(i, "s"))[0], as_i32(get(i, "k"))[0] as usize);
    let t: Vec<f32> = (0..4).map(|j| (s + j as f32) * if j >= k { 2.0 } else { 1.0 }).collect();
    let e = t[0] + t[3];
    out(vec![("y", f32s(&[4], t)), ("e", f32s(&[], vec![e]))])
}

// ---- copies: fill and copy loops, which LLVM turns into memset, memcpy and memmove ----

pub const COPIES: &str = "module copies {
  input x: f32[4096]
  output y: f32[4096]
  output z: f32[4096]
  output c: i32[256]

  kernel k(x: f32[4096] in, y: f32[4096] out, z: f32[4096] out, c: i32[256] out) {
    for i in 0..4096 {
      y[i] = x[i]
    }
    for i in 0..4096 {
      z[i] = x[i]
    }
    for i in 1..4096 {
      z[i - 1] = z[i]
    }
    for i in 0..256 {
      c[i] = 0
    }
  }

  run k(x, y, z, c)
}
";

fn copies_inputs() -> Bufs {
    inputs(vec![("x", f32s(&[4096], sixty_fourths(7, 4096)))])
}

fn copies_expect(i: &Bufs) -> Bufs {
    let x = as_f32(get(i, "x"));
    let mut z = x[1..].to_vec();
    z.push(x[4095]);
    out(vec![("y", f32s(&[4096], x.to_vec())), ("z", f32s(&[4096], z)), ("c", i32s(&[256], vec![0; 256]))])
}

// ---- big_local: local allocs larger than a page (probed stack frames), in a kernel and in a
// parallel body ----

pub const BIG_LOCAL: &str = "module big_local {
  input x: f32[16384]
  output y: f32[16384]
  output z: f32[8,2048]

  kernel k(x: f32[16384] in, y: f32[16384] out, z: f32[8,2048] out) {
    alloc t: f32[16384] local
    for i in 0..16384 {
      t[16383 - i] = x[i] * 2.0
    }
    for i in 0..16384 {
      y[i] = t[i]
    }
    parallel r in 0..8 {
      alloc u: f32[2048] local
      for i in 0..2048 {
        u[i] = x[r * 2048 + 2047 - i]
      }
      for i in 0..2048 {
        z[r, i] = u[i] + f32(r)
      }
    }
  }

  run k(x, y, z)
}
";

fn big_local_inputs() -> Bufs {
    inputs(vec![("x", f32s(&[16384], sixty_fourths(8, 16384)))])
}

fn big_local_expect(i: &Bufs) -> Bufs {
    let x = as_f32(get(i, "x"));
    let y = (0..16384).map(|j| x[16383 - j] * 2.0).collect();
    let z = (0..16384).map(|j| x[(j / 2048) * 2048 + 2047 - j % 2048] + (j / 2048) as f32).collect();
    out(vec![("y", f32s(&[16384], y)), ("z", f32s(&[8, 2048], z))])
}

// ---- trig: sin and cos of one value, multiplied and divided, scalar and vectorized ----
// LLVM would fuse the pair into `sincosf` and fold the quotient into a tangent, functions outside
// the import table; the calls carry `nobuiltin`, so the object imports exactly `sinf` and `cosf`.

pub const TRIG: &str = "module trig {
  input x: f32[12]
  output y: f32[4,12]
  output yv: f32[4,12]

  kernel scalar(x: f32[12] in, y: f32[4,12] out) {
    for i in 0..12 {
      let s = sin(x[i])
      let c = cos(x[i])
      y[0, i] = s
      y[1, i] = c
      y[2, i] = s * c
      y[3, i] = s / c
    }
  }

  kernel vector(x: f32[12] in, yv: f32[4,12] out) {
    vectorize i in 0..12 {
      yv[0, i] = sin(x[i])
      yv[1, i] = cos(x[i])
      yv[2, i] = sin(x[i]) * cos(x[i])
      yv[3, i] = sin(x[i]) / cos(x[i])
    }
  }

  run scalar(x, y)
  run vector(x, yv)
}
";

fn trig_inputs() -> Bufs {
    let x = vec![-7.0, -3.0, -1.25, -0.5, 0.0, 0.125, 0.75, 1.0, 2.5, 3.25, 6.0, 12.5];
    inputs(vec![("x", f32s(&[12], x))])
}

fn trig_expect(i: &Bufs) -> Bufs {
    let x = as_f32(get(i, "x"));
    let mut y = vec![0.0f32; 4 * 12];
    for (j, &a) in x.iter().enumerate() {
        for (r, v) in [a.sin(), a.cos(), a.sin() * a.cos(), a.sin() / a.cos()].into_iter().enumerate() {
            y[r * 12 + j] = v;
        }
    }
    out(vec![("y", f32s(&[4, 12], y.clone())), ("yv", f32s(&[4, 12], y))])
}

// ---- int8: i8 buffers (loads sign-extend, stores keep the low byte) and `round` (ties to even),
// scalar, vectorized and in a local i8 allocation; the quantize formula of the lowering ----

pub const INT8: &str = "module int8 {
  input q: i8[37]
  input x: f32[37]
  output w: i32[37]
  output n: i8[37]
  output r: f32[37]
  output s: i8[37]
  output c: i8[37]

  kernel vector(q: i8[37] in, x: f32[37] in, w: i32[37] out, n: i8[37] out, r: f32[37] out, s: i8[37] out) {
    vectorize i in 0..37 {
      w[i] = q[i] * 3
      n[i] = q[i] * 3
      r[i] = round(x[i])
      s[i] = i32(min(max(round(x[i] / 0.5) + 2.0, -128.0), 127.0))
    }
  }

  kernel scalar(q: i8[37] in, c: i8[37] out) {
    for i in 0..37 {
      alloc t: i8[2] local
      t[0] = q[i] + 200
      t[1] = -t[0]
      c[i] = t[1]
    }
  }

  run vector(q, x, w, n, r, s)
  run scalar(q, c)
}
";

fn int8_inputs() -> Bufs {
    // -128, 127 and 0 among them; x has ties of both parities, a NaN and a value beyond i32.
    let mut q: Vec<i8> = (0..37).map(|i| (i * 7 - 128) as i8).collect();
    (q[1], q[2], q[3]) = (127, 0, -1);
    let mut x: Vec<f32> = (0..37).map(|i| (i as f32 - 18.0) * 0.75).collect();
    x[35] = f32::NAN;
    x[36] = 3e9;
    inputs(vec![("q", i8s(&[37], q)), ("x", f32s(&[37], x))])
}

fn int8_expect(i: &Bufs) -> Bufs {
    let (q, x) = (as_i8(get(i, "q")), as_f32(get(i, "x")));
    let w: Vec<i32> = q.iter().map(|&v| i32::from(v) * 3).collect();
    let n = w.iter().map(|&v| v as i8).collect();
    let r = x.iter().map(|v| v.round_ties_even()).collect();
    let s = x
        .iter()
        .map(|v| {
            let t = (v / 0.5).round_ties_even() + 2.0;
            // min(max(NaN, -128.0), 127.0) is NaN in L1 (NaN propagates), and i32(NaN) is 0.
            if t.is_nan() {
                0
            } else {
                t.clamp(-128.0, 127.0) as i8
            }
        })
        .collect();
    let c = q.iter().map(|&v| (-(i32::from(v) + 200)) as i8).collect();
    out(vec![
        ("w", i32s(&[37], w)),
        ("n", i8s(&[37], n)),
        ("r", f32s(&[37], r)),
        ("s", i8s(&[37], s)),
        ("c", i8s(&[37], c)),
    ])
}

#[test]
fn int8_inputs_cover_the_i8_extremes_and_both_tie_parities() {
    let i = int8_inputs();
    let q = as_i8(get(&i, "q"));
    assert!(q.contains(&-128) && q.contains(&127) && q.contains(&0), "{q:?}");
    let x = as_f32(get(&i, "x"));
    assert!(x.contains(&1.5) && x.contains(&-1.5) && x.contains(&4.5), "{x:?}");
    let e = int8_expect(&i);
    // Hand-checked: round(1.5) = 2, round(-1.5) = -2, round(4.5) = 4; q = -128 gives 3 * -128 =
    // -384, stored as 0x80 = -128; 1.5 / 0.5 = 3 (no tie) + 2 = 5.
    let at = |v: f32| x.iter().position(|&y| y == v).unwrap();
    let r = as_f32(get(&e, "r"));
    assert_eq!((r[at(1.5)], r[at(-1.5)], r[at(4.5)]), (2.0, -2.0, 4.0));
    let qi = q.iter().position(|&v| v == -128).unwrap();
    assert_eq!(as_i8(get(&e, "n"))[qi], -128);
    assert_eq!(as_i8(get(&e, "s"))[at(1.5)], 5);
    // NaN passes through `max` and `min` (L1's NaN rule) and `i32(nan)` is 0; 3e9 saturates.
    assert_eq!((as_i8(get(&e, "s"))[35], as_i8(get(&e, "s"))[36]), (0, 127));
}

// ---- half: f16 buffers (loads widen exactly, stores round to nearest even), vectorized, scalar
// and through a local f16 allocation, against every f16 and every rounding boundary ----

/// The f16 value of bits `h`, computed by hand from the fields (independent of the conversion
/// under test): `(-1)^s * 2^(e-15) * 1.m` for normals, `(-1)^s * 2^-14 * 0.m` for subnormals.
fn half_value(h: u16) -> f64 {
    let (s, e, m) = (h >> 15, (h >> 10) & 0x1f, f64::from(h & 0x3ff));
    let mag = match e {
        0 => m * 2f64.powi(-24),
        0x1f if m == 0.0 => f64::INFINITY,
        0x1f => f64::NAN,
        _ => (1.0 + m / 1024.0) * 2f64.powi(i32::from(e) - 15),
    };
    if s == 1 {
        -mag
    } else {
        mag
    }
}

/// The bits of the f16 nearest to `x` by exhaustive comparison with the neighbours of the
/// truncated value (ties to the even bits; from 65520 on, infinity).
fn nearest_half(x: f32) -> u16 {
    if x.is_nan() {
        return 0x7e00 | ((x.to_bits() >> 16) as u16 & 0x8000) | ((x.to_bits() >> 13) as u16 & 0x1ff);
    }
    let x = f64::from(x);
    let sign = if x.is_sign_negative() { 0x8000u16 } else { 0 };
    let a = x.abs();
    if a >= 65520.0 {
        return sign | 0x7c00;
    }
    // The largest finite magnitude not above |x|, then the nearer of it and the next one.
    let below = (0..0x7c00u16).rev().find(|&h| half_value(h) <= a).unwrap_or(0);
    let (lo, hi) = (half_value(below), half_value(below + 1));
    let pick = if a - lo < hi - a || (a - lo == hi - a && below % 2 == 0) { below } else { below + 1 };
    sign | pick
}

pub const HALF: &str = "module half {
  input h: f16[2048]
  input x: f32[2048]
  output w: f32[2048]
  output y: f16[2048]
  output ys: f16[2048]

  kernel vector(h: f16[2048] in, x: f32[2048] in, w: f32[2048] out, y: f16[2048] out) {
    vectorize i in 0..2048 {
      w[i] = h[i]
      y[i] = x[i]
    }
  }

  kernel scalar(x: f32[2048] in, ys: f16[2048] out) {
    for i in 0..2048 {
      alloc t: f16[1] local
      t[0] = x[i]
      ys[i] = t[0]
    }
  }

  run vector(h, x, w, y)
  run scalar(x, ys)
}
";

fn half_inputs() -> Bufs {
    // h: every 32nd f16 bit pattern plus the edges (both zeros, subnormals, the largest finite,
    // infinities, NaNs). x: f16 values, the ties between neighbours and the f32 values next to
    // the ties, around 1, 2^-14 (the subnormal boundary), 2^-24, 65504 and 65520, and NaN.
    let mut h: Vec<u16> = (0..2048u32).map(|i| (i * 32) as u16).collect();
    h[..12].copy_from_slice(&[
        0x0000, 0x8000, 0x0001, 0x83ff, 0x0400, 0x7bff, 0xfbff, 0x7c00, 0xfc00, 0x7e00, 0xfd23, 0x3c01,
    ]);
    let mut x = Vec::with_capacity(2048);
    let bases: [u16; 8] = [0x3c00, 0x0400, 0x03fe, 0x0000, 0x7bfe, 0x3555, 0x5640, 0x0200];
    let mut k = 0u16;
    while x.len() < 2040 {
        let b = bases[usize::from(k) % bases.len()] + k / 8;
        let (lo, hi) = (half_value(b), half_value(b + 1));
        let tie = ((lo + hi) / 2.0) as f32;
        for v in [lo as f32, tie, f32::from_bits(tie.to_bits() + 1), f32::from_bits(tie.to_bits() - 1)] {
            x.push(v);
            x.push(-v);
        }
        k += 1;
    }
    x.truncate(2040);
    x.extend([65504.0, 65519.996, 65520.0, -65520.0, 1e30, f32::NAN, 2.9802322e-8, 2.9802326e-8]);
    inputs(vec![("h", f16s(&[2048], h)), ("x", f32s(&[2048], x))])
}

fn half_expect(i: &Bufs) -> Bufs {
    let BufData::F16(h) = &get(i, "h").data else { panic!("h is f16") };
    let x = as_f32(get(i, "x"));
    let w = h.iter().map(|&b| half_value(b) as f32).collect();
    let y: Vec<u16> = x.iter().map(|&v| nearest_half(v)).collect();
    out(vec![("w", f32s(&[2048], w)), ("y", f16s(&[2048], y.clone())), ("ys", f16s(&[2048], y))])
}

#[test]
fn half_reference_agrees_with_hand_values_and_the_wire_conversion() {
    assert_eq!(half_value(0x3c00), 1.0);
    assert_eq!(half_value(0x7bff), 65504.0);
    assert_eq!(half_value(0x0001), 2f64.powi(-24));
    assert_eq!(nearest_half(65519.996), 0x7bff);
    assert_eq!(nearest_half(65520.0), 0x7c00);
    assert_eq!(nearest_half(2.9802322e-8), 0x0000, "2^-25 is the tie between 0 and 2^-24");
    assert_eq!(nearest_half(2.9802326e-8), 0x0001);
    assert_eq!(nearest_half(1.0 + 2f32.powi(-11)), 0x3c00);
    assert_eq!(nearest_half(-0.1), 0xae66);
    // The host's conversion (rounding a tensor to an f16 buffer) agrees on every input.
    let i = half_inputs();
    let x = as_f32(get(&i, "x"));
    let t = ekb_ir::tensor::Tensor {
        ty: TensorType::new(DType::F16, [x.len()]),
        data: x.iter().map(|&v| f64::from(v)).collect(),
    };
    let BufData::F16(host) = t.to_buffer().data else { panic!("an f16 buffer") };
    for (&v, &h) in x.iter().zip(&host) {
        assert_eq!(nearest_half(v), h, "{v:e}");
    }
}
