//! Statistics of timing samples and of paired ratios, as the evaluation protocol defines them
//! (`docs/runtime.md`, measurement).
//!
//! - Percentiles interpolate linearly between order statistics: the `q`-quantile of sorted
//!   `x[0..n]` is `x[h] + (h - floor h)(x[floor h + 1] - x[floor h])` with `h = q (n - 1)`
//!   (numpy's default). The median is the 0.5-quantile.
//! - `cv` is the sample standard deviation (divisor `n - 1`) over the mean.
//! - The spread that decides whether a timing is stable is `Stats::spread` (in the protocol
//!   crate, so the host computes the same number).
//! - `rse` is the relative standard error of the **median**, distribution-free: the ranks
//!   `j = floor(n/2 - z sqrt(n)/2)` and `k = ceil(n/2 + z sqrt(n)/2)` (1-based, clamped to
//!   `1..=n`) bracket the median with about 95% confidence (`z = 1.96`, the binomial order-
//!   statistic interval), so `se = (x_k - x_j) / (2z)` and `rse = se / median`. Timing
//!   samples are skewed (a long right tail of interruptions), where the normal-theory
//!   `1.2533 s / sqrt(n)` would overstate the error of the median; fewer than 2 samples have an
//!   infinite `rse`.
//! - The bootstrap interval of the median ratio resamples the pairs with replacement and takes
//!   the percentile interval of the resampled medians, with a seeded SplitMix64, so a report is
//!   reproducible from its seed.
//!
//! Here, in the contract crate, so that the runtime and the host (which pairs a candidate's
//! runtime samples with an external engine's, `docs/evaluation.md`) judge with the same numbers.
//!
//! What it must keep true: every function is pure, takes samples in any order and never
//! panics on empty input (empty statistics are NaN, an empty `rse` infinite).

use crate::protocol::Stats;
use crate::seeded::mix64;
use alloc::vec;
use alloc::vec::Vec;

/// `z` of a two-sided 95% normal interval.
const Z95: f64 = 1.959_963_984_540_054;

/// The `q`-quantile of sorted `x` by linear interpolation (NaN for empty `x`).
pub fn quantile(sorted: &[f64], q: f64) -> f64 {
    match sorted.len() {
        0 => f64::NAN,
        1 => sorted[0],
        n => {
            let h = q.clamp(0.0, 1.0) * (n - 1) as f64;
            let lo = libm::floor(h) as usize;
            let hi = (lo + 1).min(n - 1);
            sorted[lo] + (h - lo as f64) * (sorted[hi] - sorted[lo])
        }
    }
}

/// The relative standard error of the median of sorted `x` (see the module notes).
pub fn median_rse(sorted: &[f64]) -> f64 {
    let n = sorted.len();
    if n < 2 {
        return f64::INFINITY;
    }
    let half = Z95 * libm::sqrt(n as f64) / 2.0;
    let j = (libm::floor(n as f64 / 2.0 - half) as usize).clamp(1, n);
    let k = (libm::ceil(n as f64 / 2.0 + half) as usize).clamp(1, n);
    let median = quantile(sorted, 0.5);
    let se = (sorted[k - 1] - sorted[j - 1]) / (2.0 * Z95);
    if median == 0.0 {
        return if se == 0.0 { 0.0 } else { f64::INFINITY };
    }
    (se / median).abs()
}

fn sorted(values: impl Iterator<Item = f64>) -> Vec<f64> {
    let mut v: Vec<f64> = values.collect();
    v.sort_by(f64::total_cmp);
    v
}

/// Statistics of samples in nanoseconds.
pub fn summarize(samples_ns: &[u64]) -> Stats {
    let x = sorted(samples_ns.iter().map(|&s| s as f64));
    let n = x.len();
    let mean = if n == 0 { f64::NAN } else { x.iter().sum::<f64>() / n as f64 };
    let cv = if n < 2 {
        0.0
    } else {
        let var = x.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / (n - 1) as f64;
        if mean == 0.0 {
            0.0
        } else {
            libm::sqrt(var) / mean
        }
    };
    Stats {
        median_ns: quantile(&x, 0.5),
        min_ns: x.first().copied().unwrap_or(f64::NAN),
        mean_ns: mean,
        p10_ns: quantile(&x, 0.1),
        p90_ns: quantile(&x, 0.9),
        cv,
        rse: median_rse(&x),
    }
}

/// A seeded SplitMix64 stream.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        mix64(self.0)
    }

    /// Uniform in `0..n` (`n > 0`), by multiply-shift.
    pub fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next_u64()) * n as u128) >> 64) as usize
    }

    pub fn coin(&mut self) -> bool {
        self.next_u64() >> 63 == 1
    }
}

/// The median of `x` (as [`quantile`] at 0.5 of `x` sorted), reordering `x`: two selections in
/// linear time instead of a sort, since the bootstrap takes a median of every resample.
fn median_in_place(x: &mut [f64]) -> f64 {
    let n = x.len();
    if n == 0 {
        return f64::NAN;
    }
    let (_, &mut hi, _) = x.select_nth_unstable_by(n / 2, f64::total_cmp);
    if n % 2 == 1 {
        return hi;
    }
    // The lower middle is the largest of the elements the selection put before the upper one.
    let lo = x[..n / 2].iter().copied().fold(f64::NEG_INFINITY, f64::max);
    lo + 0.5 * (hi - lo)
}

/// Median, relative standard error and bootstrap percentile interval (at `confidence`, with
/// `resamples` resamples seeded by `seed`) of `ratios`.
pub fn ratio_stats(ratios: &[f64], resamples: u32, confidence: f64, seed: u64) -> (f64, f64, f64, f64) {
    let x = sorted(ratios.iter().copied());
    let median = quantile(&x, 0.5);
    let rse = median_rse(&x);
    if x.is_empty() || resamples == 0 {
        return (median, rse, median, median);
    }
    let mut rng = Rng::new(seed);
    let mut scratch = vec![0.0; x.len()];
    let mut medians = Vec::with_capacity(resamples as usize);
    for _ in 0..resamples {
        for s in scratch.iter_mut() {
            *s = x[rng.below(x.len())];
        }
        medians.push(median_in_place(&mut scratch));
    }
    medians.sort_by(f64::total_cmp);
    let tail = (1.0 - confidence.clamp(0.0, 1.0)) / 2.0;
    (median, rse, quantile(&medians, tail), quantile(&medians, 1.0 - tail))
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use std::vec::Vec;

    #[test]
    fn quantiles_interpolate_between_order_statistics() {
        let x = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(quantile(&x, 0.5), 2.5);
        assert_eq!(quantile(&x, 0.0), 1.0);
        assert_eq!(quantile(&x, 1.0), 4.0);
        // h = 0.1 * 3 = 0.3: 1 + 0.3 * 1.
        assert!((quantile(&x, 0.1) - 1.3).abs() < 1e-12);
        assert!((quantile(&x, 0.9) - 3.7).abs() < 1e-12);
        assert!(quantile(&[], 0.5).is_nan());
        assert_eq!(quantile(&[7.0], 0.9), 7.0);
    }

    #[test]
    fn summary_of_hand_computed_samples() {
        // Samples in any order: sorted 10, 20, 30, 40, 100.
        let s = summarize(&[40, 10, 100, 30, 20]);
        assert_eq!(s.median_ns, 30.0);
        assert_eq!(s.min_ns, 10.0);
        assert_eq!(s.mean_ns, 40.0);
        assert!((s.p10_ns - 14.0).abs() < 1e-9, "{}", s.p10_ns);
        assert!((s.p90_ns - 76.0).abs() < 1e-9, "{}", s.p90_ns);
        // Deviations -30 -20 -10 0 60: sum of squares 5000, / 4 = 1250.
        assert!((s.cv - libm::sqrt(1250.0) / 40.0).abs() < 1e-12);
        // n = 5: half-width 1.96 * sqrt(5) / 2 = 2.19; j = floor(0.31) -> 1, k = ceil(4.69) = 5.
        assert!((s.rse - (100.0 - 10.0) / (2.0 * Z95) / 30.0).abs() < 1e-12, "{}", s.rse);
    }

    #[test]
    fn the_spread_ignores_rare_outliers_that_dominate_the_cv() {
        // 200 samples around 1000 ns (990..1009), two preemptions of 2 ms.
        let mut x: Vec<u64> = (0..200).map(|i| 990 + i % 20).collect();
        x[50] = 2_000_000;
        x[150] = 2_000_000;
        let s = summarize(&x);
        assert!(s.cv > 5.0, "{}", s.cv);
        // The outliers replaced two 1000s. Sorted: 10 each of 990..999 (ranks 0..99), 8 of 1000,
        // 10 each of 1001..1009 (1008 at ranks 178..187), the outliers last. p10 is at h = 19.9:
        // 991 + 0.9 (992 - 991); p90 at h = 179.1: 1008.
        let (p10, p90) = (991.9, 1008.0);
        assert!((s.p10_ns - p10).abs() < 1e-9 && (s.p90_ns - p90).abs() < 1e-9, "{} {}", s.p10_ns, s.p90_ns);
        assert!((s.spread() - (p90 - p10) / (2.0 * 1.281_551_565_544_601 * s.median_ns)).abs() < 1e-12);
        assert!(s.spread() < 0.01, "{}", s.spread());
        // When the bulk itself is wide, so is the spread: 500..1499 has p10 599.9 (h = 99.9),
        // p90 1399.1 (h = 899.1) and median 999.5.
        let wide: Vec<u64> = (0..1000).map(|i| 500 + i).collect();
        assert!((summarize(&wide).spread() - 799.2 / (2.0 * 1.281_551_565_544_601 * 999.5)).abs() < 1e-9);
    }

    #[test]
    fn rse_shrinks_with_more_samples_and_vanishes_for_constant_ones() {
        assert_eq!(summarize(&[5; 50]).rse, 0.0);
        assert_eq!(summarize(&[5; 50]).cv, 0.0);
        assert_eq!(summarize(&[5]).rse, f64::INFINITY);
        let spread = |n: u64| (0..n).map(|i| 1000 + (i * 7919) % 100).collect::<Vec<_>>();
        let (small, large) = (summarize(&spread(20)).rse, summarize(&spread(2000)).rse);
        assert!(large < small / 4.0, "{small} {large}");
        assert!(summarize(&[]).median_ns.is_nan());
    }

    #[test]
    fn the_selected_median_is_the_interpolated_one() {
        let mut r = Rng::new(3);
        for n in 1..40 {
            let x: Vec<f64> = (0..n).map(|_| r.below(7) as f64).collect();
            let mut s = x.clone();
            s.sort_by(f64::total_cmp);
            let mut y = x.clone();
            assert_eq!(median_in_place(&mut y), quantile(&s, 0.5), "{x:?}");
        }
        assert!(median_in_place(&mut []).is_nan());
    }

    #[test]
    fn bootstrap_intervals_bracket_the_median_and_are_reproducible() {
        let ratios: Vec<f64> = (0..200).map(|i| 2.0 + ((i * 37) % 21) as f64 / 100.0 - 0.1).collect();
        let (m, rse, lo, hi) = ratio_stats(&ratios, 1000, 0.95, 42);
        assert!((m - 2.0).abs() < 0.011, "{m}");
        assert!(lo <= m && m <= hi && hi - lo < 0.05, "{lo} {m} {hi}");
        assert!(rse > 0.0 && rse < 0.01, "{rse}");
        assert_eq!(ratio_stats(&ratios, 1000, 0.95, 42), (m, rse, lo, hi));
        // Constant ratios: a degenerate interval.
        assert_eq!(ratio_stats(&[1.5; 10], 100, 0.95, 1), (1.5, 0.0, 1.5, 1.5));
    }

    #[test]
    fn the_rng_is_uniform_enough_for_coin_flips_and_indices() {
        let mut r = Rng::new(7);
        let heads = (0..10_000).filter(|_| r.coin()).count();
        assert!((4_800..5_200).contains(&heads), "{heads}");
        let mut seen = [0u32; 10];
        for _ in 0..10_000 {
            seen[r.below(10)] += 1;
        }
        assert!(seen.iter().all(|&c| (900..1_100).contains(&c)), "{seen:?}");
    }
}
