//! External-engine baselines on the host: an L0 graph exported to ONNX and timed in
//! onnxruntime, reported in the runtime's own timing form (`ekb_wire::protocol::Timing`), so
//! reports can set "vs onnxruntime" next to a kernel's timings.
//!
//! Protocol: the graph is exported with the seed's parameters, its inputs are the seed's inputs;
//! onnxruntime's outputs are first compared with the reference interpreter (a baseline that
//! computes something else is reported as such), then `warmup` untimed runs are followed by
//! `samples` timed ones, each one whole `session.run` (Python's `perf_counter_ns`, which includes
//! the Python call overhead of a few microseconds). Statistics as in the runtime: median, min,
//! mean, 10th and 90th percentiles (linear interpolation), cv (sample standard deviation / mean)
//! and rse (relative standard error of the median, `sqrt(pi/2) * sd / sqrt(n) / median`, the
//! large-sample value for a normal sample).

use crate::python::{bench_ort, require, run_ort, OrtJob};
use crate::{export_bytes, npy};
use ekb_ir::l0::{inputs, interp, Graph};
use ekb_ir::tensor::{compare, write_npy, Tolerance};
use ekb_wire::protocol::{Stats, StopReason, Timing};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// How to time a baseline.
#[derive(Debug, Clone, Copy)]
pub struct BaselineOptions {
    pub seed: u64,
    pub warmup: u32,
    pub samples: u32,
    /// Intra-op threads; 0 lets the engine choose.
    pub threads: u32,
}

/// One baseline measurement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Baseline {
    pub engine: String,
    pub engine_version: String,
    pub graph: String,
    pub seed: u64,
    pub threads: u32,
    pub providers: Vec<String>,
    /// Whether the engine's outputs match the reference interpreter's (default tolerance).
    pub outputs_match: bool,
    /// One line per output that differs.
    pub mismatches: Vec<String>,
    pub timing: Timing,
}

/// Times `g` in onnxruntime; `work` holds the model and the inputs.
pub fn onnxruntime(g: &Graph, opts: BaselineOptions, work: &Path) -> Result<Baseline, String> {
    require(&["onnxruntime", "numpy"])?;
    if opts.samples == 0 {
        return Err("at least one sample is needed".into());
    }
    let model = work.join(format!("{}.onnx", g.name));
    std::fs::write(&model, export_bytes(g, opts.seed).map_err(|d| d.to_string())?)
        .map_err(|e| format!("cannot write `{}`: {e}", model.display()))?;
    let data = inputs::generate(g, opts.seed).map_err(|d| d.to_string())?;
    let tensors = data.iter().map(|(n, b)| (n.clone(), b.to_tensor())).collect();
    for (name, buf) in data.iter().filter(|(n, _)| g.inputs.iter().any(|d| &d.name == n)) {
        let p = work.join(format!("input.{name}.npy"));
        write_npy(&p, buf).map_err(|e| format!("cannot write `{}`: {e}", p.display()))?;
    }
    let reference = interp::run(g, &tensors).map_err(|d| d.to_string())?;
    run_ort(&[OrtJob { model: model.clone(), inputs: work.to_path_buf(), outputs: work.to_path_buf() }])?;
    let mut mismatches = Vec::new();
    for (o, r) in g.outputs.iter().zip(&reference) {
        let got = npy::read(&work.join(format!("output.{}.npy", o.name)))?;
        if got.ty != o.ty {
            mismatches.push(format!("output `{}` has type {}, expected {}", o.name, got.ty, o.ty));
        } else if let Err(m) = compare(r, &got.to_tensor(), Tolerance::default_for(o.ty.dtype)) {
            mismatches.push(format!("output `{}`: {m}", o.name));
        }
    }
    let b = bench_ort(&model, work, opts.warmup, opts.samples, opts.threads)?;
    Ok(Baseline {
        engine: "onnxruntime".into(),
        engine_version: b.version,
        graph: g.name.clone(),
        seed: opts.seed,
        threads: b.threads,
        providers: b.providers,
        outputs_match: mismatches.is_empty(),
        mismatches,
        timing: Timing {
            stats: stats(&b.samples_ns),
            samples_ns: b.samples_ns,
            warmup: b.warmup,
            cold_cache: false,
            clock: "perf_counter_ns around session.run".into(),
            stop: StopReason::MaxSamples,
        },
    })
}

/// Statistics of samples in nanoseconds (see the module header); all zero for no samples.
pub fn stats(samples: &[u64]) -> Stats {
    let mut v: Vec<f64> = samples.iter().map(|&s| s as f64).collect();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        return Stats {
            median_ns: 0.0,
            min_ns: 0.0,
            mean_ns: 0.0,
            p10_ns: 0.0,
            p90_ns: 0.0,
            cv: 0.0,
            rse: 0.0,
        };
    }
    let pct = |p: f64| {
        let x = p * (n - 1) as f64;
        let (lo, hi) = (x.floor() as usize, x.ceil() as usize);
        v[lo] + (v[hi] - v[lo]) * (x - lo as f64)
    };
    let mean = v.iter().sum::<f64>() / n as f64;
    let sd =
        if n > 1 { (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt() } else { 0.0 };
    let median = pct(0.5);
    Stats {
        median_ns: median,
        min_ns: v[0],
        mean_ns: mean,
        p10_ns: pct(0.1),
        p90_ns: pct(0.9),
        cv: if mean > 0.0 { sd / mean } else { 0.0 },
        rse: if median > 0.0 {
            (std::f64::consts::PI / 2.0).sqrt() * sd / (n as f64).sqrt() / median
        } else {
            0.0
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stats_by_hand() {
        // Sorted: 10 20 30 40 100; mean 40; sd = sqrt((900+400+100+0+3600)/4) = sqrt(1250).
        let s = stats(&[40, 10, 100, 30, 20]);
        assert_eq!((s.median_ns, s.min_ns, s.mean_ns), (30.0, 10.0, 40.0));
        assert!((s.p10_ns - 14.0).abs() < 1e-12, "0.1 * 4 = 0.4 of the way from 10 to 20: {}", s.p10_ns);
        assert!((s.p90_ns - 76.0).abs() < 1e-12, "3.6: 40 + 0.6 * 60: {}", s.p90_ns);
        let sd = 1250f64.sqrt();
        assert!((s.cv - sd / 40.0).abs() < 1e-12);
        assert!((s.rse - (std::f64::consts::PI / 2.0).sqrt() * sd / 5f64.sqrt() / 30.0).abs() < 1e-12);
        let one = stats(&[7]);
        assert_eq!((one.median_ns, one.p10_ns, one.p90_ns, one.cv, one.rse), (7.0, 7.0, 7.0, 0.0, 0.0));
    }
}
