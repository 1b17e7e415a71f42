//! Measuring candidates on this machine's CPU: each compiled candidate is loaded into this
//! process (`ekb_deploy::driver::load_host`), its outputs on seed 0 are checked against the
//! reference interpreter's, and it is timed alternately with the best point so far, in rounds
//! whose order flips each round, so a change in the machine's speed during a tune (another
//! process, the clock) moves both sides alike and the ratio stays fair.
//!
//! What must stay true: a candidate whose outputs differ from the reference is never timed
//! (it cannot become the best); both sides of a comparison run on the same input buffers, set
//! up once per round, with the same threads.

use crate::db::Outcome;
use crate::Workload;
use ekb_deploy::driver::{self, Artifact};
use ekb_ir::l0;
use ekb_ir::l1::Module;
use ekb_ir::tensor::{compare, Buffer, Tensor};
use ekb_llvm::HostModule;
use std::collections::HashMap;
use std::time::Duration;

/// A workload's inputs and reference outputs, and how long each side is timed per round.
pub struct HostBench {
    inputs: HashMap<String, Buffer>,
    reference: Vec<Tensor>,
    outputs: Vec<(String, ekb_ir::tensor::Tolerance)>,
    threads: usize,
    pub rounds: usize,
    pub round: Duration,
}

/// A candidate loaded and found correct, with a first estimate of one run's time.
pub struct Loaded {
    module: Module,
    host: HostModule,
    per_run: Duration,
}

/// Why a candidate could not be timed.
pub struct Refused {
    pub outcome: Outcome,
    pub error: String,
}

impl HostBench {
    /// Generates the inputs (seed 0) and runs the reference interpreter once.
    pub fn new(w: &Workload, threads: usize, rounds: usize, round: Duration) -> Result<HostBench, String> {
        let g = &w.graph;
        let inputs: HashMap<String, Buffer> =
            l0::inputs::generate(g, 0).map_err(|d| d.to_string())?.into_iter().collect();
        let tensors: HashMap<String, Tensor> =
            inputs.iter().map(|(n, b)| (n.clone(), b.to_tensor())).collect();
        let reference = l0::interp::run(g, &tensors).map_err(|d| d.to_string())?;
        let outputs = g.outputs.iter().map(|o| o.name.clone()).zip(w.tolerances.iter().copied()).collect();
        Ok(HostBench { inputs, reference, outputs, threads, rounds: rounds.max(1), round })
    }

    /// Loads a compiled candidate and checks its outputs.
    pub fn load(&self, artifact: &Artifact) -> Result<Loaded, Refused> {
        let run = |e: String| Refused { outcome: Outcome::Run, error: e };
        let host = driver::load_host(artifact, self.threads).map_err(|d| run(d.to_string()))?;
        let module = artifact.module.clone();
        let out = host.run(&module, &self.inputs).map_err(|d| run(d.to_string()))?;
        for ((name, tol), r) in self.outputs.iter().zip(&self.reference) {
            if let Err(e) = compare(r, &out[name].to_tensor(), *tol) {
                return Err(Refused { outcome: Outcome::Incorrect, error: format!("output `{name}`: {e}") });
            }
        }
        let warm = host.time(&module, &self.inputs, 1, 3).map_err(|d| run(d.to_string()))?;
        let per_run = warm.iter().min().copied().unwrap_or_default();
        Ok(Loaded { module, host, per_run })
    }

    /// Median milliseconds of `a`, and of `b` when given, timed in alternating rounds.
    pub fn time(&self, a: &Loaded, b: Option<&Loaded>) -> Result<(f64, Option<f64>), String> {
        let mut sa = Vec::new();
        let mut sb = Vec::new();
        for round in 0..self.rounds {
            let sides: [Option<(&Loaded, &mut Vec<f64>)>; 2] = if round % 2 == 0 {
                [Some((a, &mut sa)), b.map(|b| (b, &mut sb))]
            } else {
                [b.map(|b| (b, &mut sb)), Some((a, &mut sa))]
            };
            for (side, samples) in sides.into_iter().flatten() {
                let runs =
                    (self.round.as_secs_f64() / side.per_run.as_secs_f64().max(1e-7)).clamp(3.0, 10_000.0);
                let t = side
                    .host
                    .time(&side.module, &self.inputs, 1, runs as usize)
                    .map_err(|d| d.to_string())?;
                samples.extend(t.into_iter().map(|d| d.as_secs_f64() * 1e3));
            }
        }
        Ok((median(&mut sa), b.map(|_| median(&mut sb))))
    }
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    if v.is_empty() {
        f64::NAN
    } else {
        v[v.len() / 2]
    }
}
