//! Statistical checks of the seeded generator: each initialiser has the distribution it
//! promises. The data is deterministic (fixed keys), so the bounds are set at about five
//! standard errors of the estimate: a generator with a wrong range, scale or bias fails them.

use ekb_wire::seeded::{fill_f32, fill_i32, kaiming_bound, tensor_key};
use ekb_wire::Init;

const N: usize = 100_000;

fn sample(init: Init, shape: &[usize], tensor: &str) -> Vec<f64> {
    let mut out = vec![0f32; shape.iter().product()];
    fill_f32(&init, shape, tensor_key("stats", 7, tensor), &mut out).unwrap();
    out.into_iter().map(f64::from).collect()
}

fn mean_var(xs: &[f64]) -> (f64, f64) {
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    let var = xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n;
    (mean, var)
}

fn min_max(xs: &[f64]) -> (f64, f64) {
    xs.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &x| (lo.min(x), hi.max(x)))
}

#[test]
fn uniform_has_the_mean_variance_and_range_of_its_interval() {
    let xs = sample(Init::Uniform { lo: -2.0, hi: 6.0 }, &[N], "u");
    let (mean, var) = mean_var(&xs);
    // Uniform on [-2, 6): mean 2, variance 8^2/12 = 5.333; standard errors 0.0073 and 0.015.
    assert!((mean - 2.0).abs() < 0.04, "mean {mean}");
    assert!((var - 64.0 / 12.0).abs() < 0.08, "variance {var}");
    let (lo, hi) = min_max(&xs);
    assert!(lo >= -2.0 && hi < 6.0, "range [{lo}, {hi}]");
    assert!(lo < -1.99 && hi > 5.99, "the interval is not covered: [{lo}, {hi}]");
}

#[test]
fn normal_has_its_mean_and_standard_deviation() {
    let xs = sample(Init::Normal { mean: 2.0, std: 3.0 }, &[N], "n");
    let (mean, var) = mean_var(&xs);
    // Standard errors: 3/sqrt(N) = 0.0095 for the mean, 9*sqrt(2/N) = 0.04 for the variance.
    assert!((mean - 2.0).abs() < 0.05, "mean {mean}");
    assert!((var - 9.0).abs() < 0.2, "variance {var}");
    // Irwin-Hall: never beyond six standard deviations.
    let (lo, hi) = min_max(&xs);
    assert!(lo > 2.0 - 18.0 && hi < 2.0 + 18.0, "range [{lo}, {hi}]");
    // About 68.3% within one standard deviation (standard error 0.0015).
    let within = xs.iter().filter(|&&x| (x - 2.0).abs() < 3.0).count() as f64 / N as f64;
    assert!((within - 0.6827).abs() < 0.008, "within one std: {within}");
}

#[test]
fn kaiming_uniform_is_bounded_by_one_over_sqrt_fan_in() {
    // fan_in = 8 * 3 * 3 = 72.
    let shape = [1400, 8, 3, 3];
    let b = kaiming_bound(&shape).unwrap();
    assert!((b - 1.0 / 72f64.sqrt()).abs() < 2f64.powi(-50), "bound {b}");
    let xs = sample(Init::KaimingUniform, &shape, "k");
    let (lo, hi) = min_max(&xs);
    assert!(lo >= -b && hi <= b, "range [{lo}, {hi}] vs bound {b}");
    assert!(lo < -0.999 * b && hi > 0.999 * b, "the interval is not covered");
    let (mean, var) = mean_var(&xs);
    assert!(mean.abs() < 0.002, "mean {mean}");
    assert!((var / (b * b / 3.0) - 1.0).abs() < 0.02, "variance {var}");
}

#[test]
fn kaiming_bound_is_just_below_one_over_sqrt_fan_in() {
    // The documented error: 0 <= 1/sqrt(fan_in) - b < 2^-51. `exact` itself carries up to one
    // rounding of its own (< 2^-53 for values <= 1), hence the slack.
    for fan_in in [1usize, 2, 3, 5, 9, 27, 72, 576, 1000, 4096, 4608, 1 << 20, 999_983, 1 << 40] {
        let b = kaiming_bound(&[1, fan_in]).unwrap();
        let exact = 1.0 / (fan_in as f64).sqrt();
        assert!(b - exact <= 2f64.powi(-53), "fan_in {fan_in}: {b} above {exact}");
        assert!(exact - b < 2f64.powi(-51) + 2f64.powi(-53), "fan_in {fan_in}: {b} vs {exact}");
    }
}

#[test]
fn randint_covers_its_range_evenly() {
    let mut out = vec![0i32; N];
    fill_i32(&Init::RandInt { lo: -3, hi: 5 }, tensor_key("stats", 7, "i"), &mut out).unwrap();
    let mut counts = [0usize; 8];
    for &x in &out {
        assert!((-3..5).contains(&x), "{x} outside [-3, 5)");
        counts[(x + 3) as usize] += 1;
    }
    // Each value expects N/8 = 12500 hits, standard deviation about 105.
    for (v, &c) in counts.iter().enumerate() {
        assert!(c.abs_diff(N / 8) < 525, "value {} drawn {c} times", v as i32 - 3);
    }
}

#[test]
fn different_seeds_and_names_give_different_data() {
    let init = Init::Uniform { lo: 0.0, hi: 1.0 };
    let gen = |seed, name| {
        let mut out = vec![0f32; 64];
        fill_f32(&init, &[64], tensor_key("t", seed, name), &mut out).unwrap();
        out
    };
    let a = gen(0, "x");
    assert_eq!(a, gen(0, "x"));
    for b in [gen(1, "x"), gen(0, "y")] {
        let same = a.iter().zip(&b).filter(|(p, q)| p == q).count();
        assert!(same < 4, "{same} of 64 elements coincide");
    }
}
