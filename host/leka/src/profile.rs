//! The profiling (hardware-sensing) agent: from a node's loop program and its evaluation (the
//! runtime's per-kernel step times, peak memory) it writes a bottleneck report, each finding
//! routed to the level that owns the decision, with its evidence.
//!
//! Routing rules (docs/agent.md, "Routing"):
//! - **L0** (graph: fusion, layout, rewrites): a plan of several kernels passing intermediates
//!   through memory (`buffer` temps between kernels), weighted by the time of the kernels that
//!   touch them.
//! - **L1** (loop program): on a CPU, a kernel of at least [`HOT`] of the time whose arithmetic
//!   is mostly outside vector loops, or whose work runs on fewer parallel iterations than
//!   cores; on a GPU, any kernel of at least [`HOT`] of the time (its launch and tiles);
//!   weighted by its share of the time.
//! - **L2** (kernel source): on a CPU, a kernel of at least [`HOT`] of the time that is already
//!   vector and parallel (what is left is register blocking and intrinsics); on a GPU, the same
//!   hot kernels at half their weight, after the schedule.
//!
//! What must stay true: a report is a function of the program and the evaluation alone (no
//! clock, no randomness), so a resumed loop routes as the first one did; shares come from the
//! measured step times when the evaluation has them and are estimated from the program's work
//! otherwise, and the report says which.

use crate::layers::{Layers, GRAPH_FILE};
use crate::tree::{Level, NodeId, Tree};
use ekb_eval::results::CandidateResult;
use ekb_eval::tasks::Backend;
use ekb_ir::l1::{BufferRole, Module};
use ekb_ir::Diagnostic;
use ekb_ir::TargetProfile;
use ekb_tune::features::kernel_work;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// The share of the time from which a kernel is hot enough to be worth a finding.
pub const HOT: f64 = 0.10;

/// One kernel's measurements and the counts of its loop program.
#[derive(Debug, Clone, PartialEq)]
pub struct KernelProfile {
    pub name: String,
    /// Runs of it in the plan.
    pub runs: usize,
    /// Measured nanoseconds over its runs, when the evaluation timed each step.
    pub ns: Option<f64>,
    /// Its share of the plan's time (measured, or estimated from the work).
    pub share: f64,
    /// Arithmetic operations, and bytes its buffer arguments hold (the traffic it cannot avoid).
    pub ops: f64,
    pub bytes: f64,
    /// The share of its operations inside vector loops, and the widest vector loop.
    pub vector_share: f64,
    pub vector_width: f64,
    /// Iterations of its outermost parallel loops (0: none).
    pub parallel: f64,
    /// Bytes of its `local` allocations.
    pub local_bytes: f64,
}

/// One bottleneck, routed to a level.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    pub level: Level,
    /// `intermediates`, `scalar`, `serial`, `gpu-hot`, `scheduled-hot`.
    pub kind: &'static str,
    pub kernel: Option<String>,
    /// The share of the time it concerns: what routing orders by.
    pub weight: f64,
    pub evidence: String,
}

/// What the profiling agent says about one node.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    pub kernels: Vec<KernelProfile>,
    /// Whether the shares are the runtime's step times (else the program's work).
    pub measured: bool,
    /// Kernel launches per execution (the plan's runs).
    pub launches: usize,
    /// Intermediate buffers the plan passes between kernels.
    pub intermediates: usize,
    pub peak_bytes: Option<u64>,
    /// Strongest first.
    pub findings: Vec<Finding>,
}

impl Report {
    /// The levels the findings route to, by total weight, strongest first.
    pub fn levels(&self) -> Vec<Level> {
        let mut weight: BTreeMap<Level, f64> = BTreeMap::new();
        for f in &self.findings {
            *weight.entry(f.level).or_default() += f.weight;
        }
        let mut levels: Vec<(Level, f64)> = weight.into_iter().collect();
        levels.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        levels.into_iter().map(|(l, _)| l).collect()
    }

    /// The findings routed to `level`.
    pub fn for_level(&self, level: Level) -> impl Iterator<Item = &Finding> {
        self.findings.iter().filter(move |f| f.level == level)
    }

    /// The report as text: a table of the kernels, then the findings, one line each (what a
    /// prompt and `ekb tree` show).
    pub fn render(&self) -> String {
        let mut s = String::new();
        let source =
            if self.measured { "measured step times" } else { "estimated from the loop program's work" };
        let _ = writeln!(
            s,
            "profile: {} kernel launch(es), {} intermediate buffer(s), shares {source}",
            self.launches, self.intermediates
        );
        if let Some(p) = self.peak_bytes {
            let _ = writeln!(s, "peak memory: {p} bytes");
        }
        let _ = writeln!(
            s,
            "kernel | runs | time | share | ops | bytes | GFLOP/s | GB/s | vector | parallel iters | local bytes"
        );
        for k in &self.kernels {
            let time = k.ns.map_or_else(|| "-".into(), |ns| format!("{:.1} us", ns / 1000.0));
            // Operations and bytes per nanosecond are GFLOP/s and GB/s.
            let rate = |x: f64| {
                k.ns.filter(|&ns| ns > 0.0).map_or_else(|| "-".into(), |ns| format!("{:.2}", x / ns))
            };
            let _ = writeln!(
                s,
                "{} | {} | {time} | {:.0}% | {:.3e} | {:.3e} | {} | {} | {:.0}% (width {}) | {} | {}",
                k.name,
                k.runs,
                k.share * 100.0,
                k.ops,
                k.bytes,
                rate(k.ops),
                rate(k.bytes),
                k.vector_share * 100.0,
                k.vector_width,
                k.parallel,
                k.local_bytes
            );
        }
        if self.findings.is_empty() {
            let _ = writeln!(s, "findings: none");
        }
        for f in &self.findings {
            let _ = writeln!(
                s,
                "finding -> {}: {} ({:.0}%): {}",
                f.level.name(),
                f.kind,
                f.weight * 100.0,
                f.evidence
            );
        }
        s
    }
}

/// The report on node `id` of `tree`, as the loop made it when it expanded the node: its layers
/// lowered for its run's backend and target, its stored evaluation. A node without layers (not
/// written by the loop) has no report.
pub fn of_node(tree: &Tree, id: NodeId) -> Result<Report, Diagnostic> {
    let node = tree.node(id)?;
    let run = tree.run(&node.run)?;
    let files = tree.files(id)?;
    if !files.iter().any(|f| f.path == GRAPH_FILE) {
        return Err(Diagnostic::error(format!(
            "node {id} has no layers (`{GRAPH_FILE}`): the agent loop did not write it"
        ))
        .with_hint("the profiling agent reports on nodes `ekb agent` made"));
    }
    let backend = Backend::ALL.into_iter().find(|b| b.name() == run.spec.backend).ok_or_else(|| {
        Diagnostic::error(format!("run `{}` names an unknown backend `{}`", run.spec.id, run.spec.backend))
    })?;
    let target = TargetProfile::load(&run.spec.target).map_err(Diagnostic::error)?;
    let layers = Layers::from_files(&files, "");
    let module = layers.lower(backend, &target).map_err(|ds| {
        ds.into_iter().next().unwrap_or_else(|| Diagnostic::error(format!("node {id}'s layers do not lower")))
    })?;
    Ok(profile(&module, tree.result(id)?.as_ref(), &target, backend != Backend::Cpu))
}

/// The report on `module` as evaluated in `result` (its candidate side's step times), on
/// `target`.
pub fn profile(
    module: &Module,
    result: Option<&CandidateResult>,
    target: &TargetProfile,
    gpu: bool,
) -> Report {
    let cores = target.cpu_cores().max(1) as f64;
    let mut measured_ns: BTreeMap<&str, f64> = BTreeMap::new();
    let steps = result.and_then(|r| r.timing.as_ref()).map(|t| t.candidate.steps.as_slice()).unwrap_or(&[]);
    for s in steps {
        *measured_ns.entry(s.kernel.as_str()).or_default() += s.ns;
    }
    let measured = !measured_ns.is_empty();
    let mut kernels: Vec<KernelProfile> = module
        .kernels
        .iter()
        .map(|k| {
            let w = kernel_work(k);
            let runs = module.plan.iter().filter(|r| r.kernel == k.name).count();
            let bytes = k.params.iter().map(|p| (p.ty.numel() * p.ty.dtype.size_bytes()) as f64).sum::<f64>();
            KernelProfile {
                name: k.name.clone(),
                runs,
                ns: measured_ns.get(k.name.as_str()).copied(),
                share: 0.0,
                ops: w.ops * runs as f64,
                bytes: bytes * runs as f64,
                vector_share: if w.ops > 0.0 { w.vector_ops / w.ops } else { 1.0 },
                vector_width: w.vector_width,
                parallel: w.parallel,
                local_bytes: w.local_bytes,
            }
        })
        .collect();
    // Shares: the measured time, else the work (operations plus bytes over four, a float each).
    let weight = |k: &KernelProfile| if measured { k.ns.unwrap_or(0.0) } else { k.ops + k.bytes / 4.0 };
    let total: f64 = kernels.iter().map(weight).sum();
    for k in &mut kernels {
        k.share = if total > 0.0 { weight(k) / total } else { 0.0 };
    }
    let temps: Vec<&str> =
        module.buffers.iter().filter(|b| b.role == BufferRole::Temp).map(|b| b.name.as_str()).collect();
    let mut findings = Vec::new();
    if module.plan.len() > 1 && !temps.is_empty() {
        let touching: Vec<&KernelProfile> = kernels
            .iter()
            .filter(|k| {
                module
                    .plan
                    .iter()
                    .any(|r| r.kernel == k.name && r.args.iter().any(|a| temps.contains(&a.name.as_str())))
            })
            .collect();
        let weight: f64 = touching.iter().map(|k| k.share).sum();
        findings.push(Finding {
            level: Level::L0,
            kind: "intermediates",
            kernel: None,
            weight,
            evidence: format!(
                "{} kernels pass {} intermediate buffer(s) ({}) through memory; the kernels touching them take {:.0}% of the time: fusing them (or choosing another layout) removes the round trips",
                module.plan.len(),
                temps.len(),
                temps.join(", "),
                weight * 100.0
            ),
        });
    }
    for k in kernels.iter().filter(|k| k.share >= HOT) {
        if gpu {
            // A GPU kernel's lanes are its threads: what the schedule owns is its launch and
            // tiling, and after that the kernel source.
            findings.push(Finding {
                level: Level::L1,
                kind: "gpu-hot",
                kernel: Some(k.name.clone()),
                weight: k.share,
                evidence: format!(
                    "kernel `{}` takes {:.0}% of the time: its launch geometry and tiles are the schedule's (knobs, bind, cache stages)",
                    k.name,
                    k.share * 100.0
                ),
            });
            findings.push(Finding {
                level: Level::L2,
                kind: "scheduled-hot",
                kernel: Some(k.name.clone()),
                weight: k.share / 2.0,
                evidence: format!(
                    "kernel `{}` takes {:.0}% of the time: vector loads and register tiles are the kernel source's",
                    k.name,
                    k.share * 100.0
                ),
            });
            continue;
        }
        let serial = k.parallel < cores && k.ops + k.bytes / 4.0 > 1e5;
        if k.vector_share < 0.5 && k.ops > 0.0 {
            findings.push(Finding {
                level: Level::L1,
                kind: "scalar",
                kernel: Some(k.name.clone()),
                weight: k.share,
                evidence: format!(
                    "kernel `{}` takes {:.0}% of the time and {:.0}% of its {:.3e} operations run in vector loops",
                    k.name,
                    k.share * 100.0,
                    k.vector_share * 100.0,
                    k.ops
                ),
            });
        }
        if serial {
            findings.push(Finding {
                level: Level::L1,
                kind: "serial",
                kernel: Some(k.name.clone()),
                weight: k.share,
                evidence: format!(
                    "kernel `{}` takes {:.0}% of the time on {} parallel iteration(s) for {} cores",
                    k.name,
                    k.share * 100.0,
                    k.parallel,
                    cores
                ),
            });
        }
        if !serial && k.vector_share >= 0.5 {
            findings.push(Finding {
                level: Level::L2,
                kind: "scheduled-hot",
                kernel: Some(k.name.clone()),
                weight: k.share,
                evidence: format!(
                    "kernel `{}` takes {:.0}% of the time although it is vector ({:.0}%, width {}) and parallel: register blocking and intrinsics are the kernel source's",
                    k.name,
                    k.share * 100.0,
                    k.vector_share * 100.0,
                    k.vector_width
                ),
            });
        }
    }
    findings.sort_by(|a, b| b.weight.total_cmp(&a.weight).then(a.level.cmp(&b.level)));
    Report {
        kernels,
        measured,
        launches: module.plan.len(),
        intermediates: temps.len(),
        peak_bytes: result.and_then(|r| r.memory.as_ref()).map(|m| m.candidate_peak_bytes),
        findings,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ekb_ir::SourceFile;

    fn module(text: &str) -> Module {
        ekb_ir::l1::parse::parse(&SourceFile::new("m.ekl1", text)).unwrap()
    }

    const TWO_KERNELS: &str = "module m {\n  input x: f32[256,256]\n  buffer t0: f32[256,256]\n  output y: f32[256,256]\n  \
        kernel k0(x: f32[256,256] in, t0: f32[256,256] out) {\n    for i in 0..256 {\n      for j in 0..256 {\n        t0[i, j] = x[i, j] + 1.0\n      }\n    }\n  }\n  \
        kernel k1(t0: f32[256,256] in, y: f32[256,256] out) {\n    parallel i in 0..256 {\n      vectorize j in 0..256 {\n        y[i, j] = t0[i, j] * 2.0\n      }\n    }\n  }\n  \
        run k0(x, t0)\n  run k1(t0, y)\n}\n";

    #[test]
    fn intermediates_go_to_l0_and_a_scalar_serial_kernel_to_l1() {
        let host = TargetProfile::load("host").unwrap();
        let r = profile(&module(TWO_KERNELS), None, &host, false);
        assert!(!r.measured);
        assert_eq!(r.launches, 2);
        assert_eq!(r.intermediates, 1);
        let kinds: Vec<(&str, Level)> = r.findings.iter().map(|f| (f.kind, f.level)).collect();
        assert!(kinds.contains(&("intermediates", Level::L0)), "{kinds:?}");
        assert!(kinds.contains(&("scalar", Level::L1)), "{kinds:?}");
        assert!(kinds.contains(&("serial", Level::L1)), "{kinds:?}");
        // k1 is vector and parallel: what is left of it is the kernel source's.
        assert!(
            r.findings.iter().any(|f| f.level == Level::L2 && f.kernel.as_deref() == Some("k1")),
            "{kinds:?}"
        );
        // The intermediate touches both kernels: the whole time.
        assert!((r.findings[0].weight - 1.0).abs() < 1e-9);
        assert_eq!(r.levels()[0], Level::L0);
        let text = r.render();
        assert!(text.contains("finding -> l0: intermediates"), "{text}");
        assert!(text.contains("estimated from the loop program's work"), "{text}");
    }

    #[test]
    fn a_hot_gpu_kernel_goes_to_the_schedule_first_then_the_source() {
        let host = TargetProfile::load("host").unwrap();
        let r = profile(&module(TWO_KERNELS), None, &host, true);
        let k0: Vec<(&str, Level)> = r
            .findings
            .iter()
            .filter(|f| f.kernel.as_deref() == Some("k0"))
            .map(|f| (f.kind, f.level))
            .collect();
        assert_eq!(k0, [("gpu-hot", Level::L1), ("scheduled-hot", Level::L2)]);
        assert!(!r.findings.iter().any(|f| f.kind == "scalar" || f.kind == "serial"));
    }
}
