//! The inline math functions (`exp`, `exp_ftz`, `log`, `tanh`, `erf`, `pow`, `sin`, `cos`) against an f64
//! reference, in compiled kernels: every function over a sweep of the whole f32 range (one bit
//! pattern in 251, which visits every exponent and every residue of the low mantissa bits, plus
//! the edge cases: zeros, infinities, NaN, subnormals, the overflow and underflow thresholds), in a
//! `vectorize` loop and in a plain one, for the host CPU (with FMA) and the x86-64 baseline
//! (without), and for an aarch64 board (rk3588, NEON) under `qemu-aarch64` over a coarser sweep
//! (one bit pattern in 4099, and every 16th `pow` pair). The error, in units in the last place of the correctly rounded result, must stay
//! within `MathFn::max_ulp`; special values must be exactly C's (`exp_ftz` may give `+0` for
//! a result below 2^-125, and only there). The two loops must agree bit for bit: a result does
//! not depend on whether its loop vectorised.

mod common;
use common::cases::Bufs;
use common::driver::Toolchain;
use common::*;
use ekb_ir::l1::Module;
use ekb_ir::TargetProfile;
use ekb_llvm::{compile, emit, HostModule, MathFn};

/// Elements per kernel run.
const CHUNK: usize = 1 << 21;
/// Stride of the bit-pattern sweep: prime, so the low mantissa bits take every value.
/// `EKB_VMATH_STRIDE=1` makes the sweep exhaustive (all 2^32 patterns: minutes per function).
const STRIDE: u64 = 251;
/// Elements per run, sweep stride (prime too) and share of the `pow` pairs under qemu, which
/// is about a hundred times slower than the host.
const QEMU_CHUNK: usize = 1 << 18;
const QEMU_STRIDE: u64 = 4099;
const QEMU_POW_EVERY: usize = 16;

/// `EKB_VMATH_ONLY=exp,sin` checks only the functions named (with an exhaustive sweep, to
/// spend the minutes on one function).
fn selected(f: MathFn) -> bool {
    std::env::var("EKB_VMATH_ONLY").map_or(true, |only| only.split(',').any(|n| n.trim() == f.name()))
}

fn stride() -> u64 {
    std::env::var("EKB_VMATH_STRIDE").ok().and_then(|s| s.parse().ok()).filter(|&s| s > 0).unwrap_or(STRIDE)
}

/// The error of `got` against the exact `want`, in ulps of the f32 binade of `want`; infinite
/// when a special value (NaN, infinity, a zero's sign) differs from the correctly rounded one.
fn ulp_error(got: f32, want: f64) -> f64 {
    if want.is_nan() || got.is_nan() {
        return if want.is_nan() && got.is_nan() { 0.0 } else { f64::INFINITY };
    }
    let rounded = want as f32;
    if rounded.is_infinite() || got.is_infinite() || rounded == 0.0 {
        let same = got == rounded && got.is_sign_negative() == rounded.is_sign_negative();
        // A result that rounds to zero or infinity may come out as the neighbouring finite
        // value: that is still within an ulp (measured below), but a sign never differs.
        if same {
            return 0.0;
        }
        if got.is_infinite() || rounded.is_infinite() || got.is_sign_negative() != want.is_sign_negative() {
            return f64::INFINITY;
        }
    }
    let a = want.abs();
    let ulp = if a < f64::from(f32::MIN_POSITIVE) {
        2f64.powi(-149)
    } else {
        2f64.powi(a.log2().floor() as i32 - 23)
    };
    (f64::from(got) - want).abs() / ulp
}

/// Below this, `exp_ftz` may flush its result to `+0`.
const FLUSH_BELOW: f64 = f32::MIN_POSITIVE as f64 * 2.0;

/// `ulp_error` of `f`'s result: no error for `+0` where `f` may flush the exact `want` to it.
fn error_of(f: MathFn, got: f32, want: f64) -> f64 {
    if f == MathFn::ExpFtz && got.to_bits() == 0 && want < FLUSH_BELOW {
        0.0
    } else {
        ulp_error(got, want)
    }
}

fn reference(f: MathFn, x: f32, y: f32) -> f64 {
    let (x, y) = (f64::from(x), f64::from(y));
    match f {
        MathFn::Exp | MathFn::ExpFtz => x.exp(),
        MathFn::Log => x.ln(),
        MathFn::Tanh => x.tanh(),
        MathFn::Erf => libm::erf(x),
        MathFn::Pow => x.powf(y),
        MathFn::Sin => x.sin(),
        MathFn::Cos => x.cos(),
    }
}

/// The edge cases, then every `step`-th f32 bit pattern, in chunks of `chunk`.
fn sweep(step: u64, chunk: usize) -> impl Iterator<Item = Vec<f32>> {
    let edges = vec![
        0.0,
        -0.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        -f32::NAN,
        f32::from_bits(0x7f80_0001), // signalling NaN
        f32::MIN_POSITIVE,
        f32::from_bits(1),
        -f32::from_bits(1),
        f32::from_bits(0x007f_ffff),
        f32::MAX,
        f32::MIN,
        1.0,
        -1.0,
        88.72283,
        88.72284,
        -87.33654,
        -103.27893,
        -103.97208,
        -104.0,
        89.0,
        // exp_ftz: where it starts flushing (-125.5 ln2), its clamp, the last exponent it builds.
        -86.99,
        -86.989_4,
        -86.643_4,
        -87.5,
        -88.0,
        89.07,
        89.5,
        89.8,
        0.625,
        0.62499994,
        -0.625,
        3.92,
        4.0,
        9.01,
        // sin and cos: both sides of the switch between the two reductions, a large argument.
        1_048_575.9,
        1_048_576.0,
        3.0e38,
        std::f32::consts::FRAC_PI_2,
        std::f32::consts::PI,
    ];
    let per_chunk = chunk as u64 * step;
    std::iter::once(edges).chain((0..(1u64 << 32)).step_by(per_chunk as usize).map(move |start| {
        (start..(start + per_chunk).min(1 << 32))
            .step_by(step as usize)
            .map(|b| f32::from_bits(b as u32))
            .collect()
    }))
}

/// `y[i] = f(a[i])` (or `pow(a[i], b[i])`) in a `vectorize` loop (kernel `vec`) and a `for`
/// loop (kernel `one`).
fn kernel_module(f: MathFn, n: usize) -> ekb_ir::l1::Module {
    let (args, call) = match f.arity() {
        2 => (format!("a: f32[{n}] in, b: f32[{n}] in"), format!("{}(a[i], b[i])", f.name())),
        _ => (format!("a: f32[{n}] in"), format!("{}(a[i])", f.name())),
    };
    let b_input = if f.arity() == 2 { format!("  input b: f32[{n}]\n") } else { String::new() };
    let b_arg = if f.arity() == 2 { "a, b" } else { "a" };
    module(&format!(
        "module m {{
  input a: f32[{n}]
{b_input}  output v: f32[{n}]
  output s: f32[{n}]

  kernel vec({args}, v: f32[{n}] out) {{
    vectorize i in 0..{n} {{
      v[i] = {call}
    }}
  }}

  kernel one({args}, s: f32[{n}] out) {{
    for i in 0..{n} {{
      s[i] = {call}
    }}
  }}

  run vec({b_arg}, v)
  run one({b_arg}, s)
}}"
    ))
}

struct Worst {
    ulp: f64,
    x: f32,
    y: f32,
    got: f32,
}

/// Where the kernels run: compiled for the host and run in this process, or compiled for an
/// aarch64 profile and run by the test driver under `qemu-aarch64`.
enum Runner {
    Host,
    Qemu(Toolchain),
}

impl Runner {
    /// Elements per kernel run.
    fn chunk(&self) -> usize {
        match self {
            Runner::Host => CHUNK,
            Runner::Qemu(_) => QEMU_CHUNK,
        }
    }

    /// Compiles `m` for `target`: a function running its plan on given inputs.
    fn load(&self, m: &Module, target: &TargetProfile) -> Box<dyn Fn(&Bufs) -> Bufs + '_> {
        match self {
            Runner::Host => {
                let hm = HostModule::build(m, target, 1).unwrap_or_else(|d| panic!("{}: {d}", m.name));
                let m = m.clone();
                Box::new(move |i: &Bufs| hm.run(&m, i).unwrap_or_else(|d| panic!("{}: {d}", m.name)))
            }
            Runner::Qemu(tc) => {
                let dir =
                    std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("ekb-vmath-{}", m.name));
                std::fs::create_dir_all(&dir).unwrap();
                let (obj, so) = (dir.join("k.o"), dir.join("k.so"));
                let ir = emit(m, target).unwrap();
                compile(&ir, target, &obj).unwrap_or_else(|d| panic!("{}: {d}", m.name));
                tc.link(&obj, &so);
                let driver = tc.driver(&dir);
                let m = m.clone();
                Box::new(move |i: &Bufs| {
                    tc.run_plan(&driver, &so, &m, i, 1)
                        .unwrap_or_else(|(st, err)| panic!("{}: driver {st}: {err}", m.name))
                })
            }
        }
    }
}

/// Runs `f` on chunks of pairs `(x[i], y[i])` (at most `runner.chunk()` each) and returns the
/// worst error and the number of pairs, checking that both loops agree.
fn measure(
    runner: &Runner,
    target: &TargetProfile,
    f: MathFn,
    chunks: impl Iterator<Item = (Vec<f32>, Vec<f32>)>,
) -> (Worst, usize) {
    let n = runner.chunk();
    let mut m = kernel_module(f, n);
    m.name = format!("{}_{}", f.name(), target.name.replace('-', "_"));
    let run = runner.load(&m, target);
    let mut worst = Worst { ulp: 0.0, x: 0.0, y: 0.0, got: 0.0 };
    let mut count = 0;
    for (cx, cy) in chunks {
        count += cx.len();
        let pad = |c: &[f32]| {
            let mut v = c.to_vec();
            v.resize(n, 1.0);
            v
        };
        let mut list = vec![("a", f32s(&[n], pad(&cx)))];
        if f.arity() == 2 {
            list.push(("b", f32s(&[n], pad(&cy))));
        }
        let out = run(&inputs(list));
        let (v, s) = (as_f32(&out["v"]), as_f32(&out["s"]));
        for k in 0..cx.len() {
            assert!(
                v[k].to_bits() == s[k].to_bits() || (v[k].is_nan() && s[k].is_nan()),
                "{} on {}: {}({:e}, {:e}) is {:e} vectorised, {:e} not",
                f.name(),
                target.name,
                f.name(),
                cx[k],
                cy[k],
                v[k],
                s[k]
            );
            let e = error_of(f, v[k], reference(f, cx[k], cy[k]));
            if e > worst.ulp {
                worst = Worst { ulp: e, x: cx[k], y: cy[k], got: v[k] };
            }
        }
    }
    (worst, count)
}

fn check(
    runner: &Runner,
    target: &TargetProfile,
    f: MathFn,
    chunks: impl Iterator<Item = (Vec<f32>, Vec<f32>)>,
) {
    let (w, count) = measure(runner, target, f, chunks);
    let want = reference(f, w.x, w.y);
    eprintln!(
        "{} on {}: {count} inputs, worst {:.3} ulp at ({:e}, {:e}): {:e}, exact {:e}",
        f.name(),
        target.name,
        w.ulp,
        w.x,
        w.y,
        w.got,
        want
    );
    assert!(
        w.ulp <= f.max_ulp(),
        "{} on {}: {:.3} ulp at ({:e}, {:e}): got {:e}, exact {:e} (bound {} ulp)",
        f.name(),
        target.name,
        w.ulp,
        w.x,
        w.y,
        w.got,
        want,
        f.max_ulp()
    );
}

/// The pairs `pow` is checked on: a sweep of `x` (both signs) against exponents of every kind
/// (integers odd and even, halves, small and large reals, a sweep of bit patterns, the special
/// values), and `x` next to 1 against large exponents, where `y log2 x` must be exact to many
/// bits.
fn pow_pairs() -> (Vec<f32>, Vec<f32>) {
    let xs: Vec<f32> = (0..(1u64 << 32))
        .step_by(1 << 20)
        .map(|b| f32::from_bits((b as u32) ^ 0x0001_2345))
        .chain([0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 0.5, -0.5, f32::INFINITY, f32::NEG_INFINITY, f32::NAN])
        .chain([f32::from_bits(1), -f32::from_bits(1), f32::MAX, f32::MIN_POSITIVE])
        .collect();
    let mut ys: Vec<f32> = (-16..=16).map(|k| k as f32).collect();
    ys.extend((-16..=16).map(|k| k as f32 + 0.5));
    ys.extend((0..(1u64 << 32)).step_by(1 << 23).map(|b| f32::from_bits(b as u32)));
    let mut seed = 0x9e37_79b9u32;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 17;
        seed ^= seed << 5;
        seed as f32 / u32::MAX as f32
    };
    for _ in 0..256 {
        ys.push((next() - 0.5) * 60.0);
    }
    ys.extend([
        0.0,
        -0.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        16_777_215.0,
        16_777_216.0,
        1e30,
        -1e30,
    ]);
    let (mut px, mut py) = (Vec::new(), Vec::new());
    for &x in &xs {
        for &y in &ys {
            px.push(x);
            py.push(y);
        }
    }
    for k in 1..=512u32 {
        let near = [f32::from_bits(1.0f32.to_bits() + k), f32::from_bits(1.0f32.to_bits() - k)];
        for x in near {
            for _ in 0..32 {
                // Exponents up to about 87 / log(x): results across the whole f32 range.
                let y = (next() - 0.5) * 2.0 * 87.0 / (f64::from(x).ln().abs() as f32);
                px.push(x);
                py.push(y);
            }
        }
    }
    (px, py)
}

fn check_all(runner: &Runner, target: &TargetProfile) {
    clang();
    let (step, pow_every) = match runner {
        Runner::Host => (stride(), 1),
        Runner::Qemu(_) => (QEMU_STRIDE, QEMU_POW_EVERY),
    };
    for f in [MathFn::Exp, MathFn::ExpFtz, MathFn::Log, MathFn::Tanh, MathFn::Erf, MathFn::Sin, MathFn::Cos] {
        if !selected(f) {
            continue;
        }
        check(
            runner,
            target,
            f,
            sweep(step, runner.chunk()).map(|c| {
                let ones = vec![1.0; c.len()];
                (c, ones)
            }),
        );
    }
    if !selected(MathFn::Pow) {
        return;
    }
    let (px, py) = pow_pairs();
    let px: Vec<f32> = px.into_iter().step_by(pow_every).collect();
    let py: Vec<f32> = py.into_iter().step_by(pow_every).collect();
    let n = runner.chunk();
    let chunks = px.chunks(n).map(<[f32]>::to_vec).zip(py.chunks(n).map(<[f32]>::to_vec));
    check(runner, target, MathFn::Pow, chunks);
}

#[test]
fn math_functions_are_within_their_bounds_on_the_host_cpu() {
    check_all(&Runner::Host, &host());
}

#[test]
fn math_functions_are_within_their_bounds_on_the_x86_64_baseline() {
    check_all(&Runner::Host, &x86_64_baseline());
}

#[test]
fn math_functions_are_within_their_bounds_on_aarch64_under_qemu() {
    check_all(&Runner::Qemu(Toolchain::aarch64()), &TargetProfile::load("rk3588").unwrap());
}

#[test]
fn exp_ftz_may_flush_only_results_below_2_pow_125_and_only_to_plus_zero() {
    let bound = MathFn::ExpFtz.max_ulp();
    assert_eq!(error_of(MathFn::ExpFtz, 0.0, 2f64.powi(-126)), 0.0);
    assert_eq!(error_of(MathFn::ExpFtz, 0.0, 2f64.powi(-150)), 0.0);
    assert!(error_of(MathFn::ExpFtz, 0.0, 2f64.powi(-124)) > bound);
    assert!(error_of(MathFn::ExpFtz, -0.0, 2f64.powi(-126)) > bound);
    assert!(error_of(MathFn::Exp, 0.0, 2f64.powi(-126)) > bound);
    assert!(error_of(MathFn::ExpFtz, f32::from_bits(1), 2f64.powi(-126)) > bound);
}

#[test]
fn the_ulp_measure_counts_special_values_exactly() {
    assert_eq!(ulp_error(1.0, 1.0), 0.0);
    assert_eq!(ulp_error(f32::from_bits(0x3f80_0001), 1.0), 1.0);
    assert_eq!(ulp_error(f32::NAN, f64::NAN), 0.0);
    assert!(ulp_error(0.0, f64::NAN).is_infinite());
    assert!(ulp_error(-0.0, 0.0).is_infinite());
    assert!(ulp_error(f32::MAX, f64::INFINITY).is_infinite());
    assert_eq!(ulp_error(f32::from_bits(1), 2f64.powi(-149)), 0.0);
    assert_eq!(ulp_error(0.0, 2f64.powi(-150) * 0.9), 0.0);
}
