//! Features of a lowered loop program, for the cost model: how much work its kernels do
//! (operations, loads and stores weighted by the trip counts around them), how much of it runs in
//! vector loops and how wide, how many parallel iterations there are per core, how much of it is
//! unrolled, and how much local memory (register tiles) a kernel holds. Followed by the point's
//! knob values, so the model can tell apart points whose loop nests look alike.
//!
//! [`roofline`] turns the features into a time estimate with no measurement at all: the
//! search's prior before the model has data.
//!
//! What must stay true: the vector has [`LEN`] entries in a fixed order for every module, so
//! records of one graph are comparable; every entry is finite.

use ekb_ir::l1::visit::{walk_expr, walk_stmt, Visitor};
use ekb_ir::l1::{Expr, ExprKind, Kernel, LoopKind, Module, Stmt};
use ekb_ir::TargetProfile;

/// Entries of a feature vector before the knob values.
pub const LOOP_FEATURES: usize = 12;

/// The trip count assumed for a loop whose bounds are not literals.
const UNKNOWN_TRIPS: f64 = 16.0;

/// What one walk over a kernel counts: its work weighted by the trip counts around it (loops
/// with non-literal bounds count as 16 trips).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Work {
    /// Trip count of the loops around the current statement.
    trips: f64,
    /// Arithmetic operations, loads and stores executed.
    pub ops: f64,
    pub loads: f64,
    pub stores: f64,
    /// Operations inside a `vectorize` loop, and the widest such loop.
    pub vector_ops: f64,
    pub vector_width: f64,
    pub unrolled_ops: f64,
    /// Iterations of the outermost `parallel` loops.
    pub parallel: f64,
    pub loops: f64,
    /// Bytes of the kernel's `local` allocations.
    pub local_bytes: f64,
    in_vector: bool,
    in_unroll: bool,
    in_parallel: bool,
}

fn trips(lo: &Expr, hi: &Expr) -> f64 {
    match (&lo.kind, &hi.kind) {
        (ExprKind::Int(a), ExprKind::Int(b)) => (*b as f64 - *a as f64).max(0.0),
        _ => UNKNOWN_TRIPS,
    }
}

impl<'a> Visitor<'a> for Work {
    fn stmt(&mut self, s: &'a Stmt) {
        match s {
            Stmt::Loop { kind, lo, hi, body, .. } => {
                let n = trips(lo, hi);
                self.loops += 1.0;
                let saved = (self.trips, self.in_vector, self.in_unroll, self.in_parallel);
                match kind {
                    LoopKind::Vectorize => {
                        self.in_vector = true;
                        self.vector_width = self.vector_width.max(n);
                    }
                    LoopKind::Unroll => self.in_unroll = true,
                    LoopKind::Parallel if !self.in_parallel => {
                        self.in_parallel = true;
                        self.parallel += self.trips * n;
                    }
                    _ => {}
                }
                self.trips *= n;
                self.block(body);
                (self.trips, self.in_vector, self.in_unroll, self.in_parallel) = saved;
            }
            Stmt::Store { .. } => {
                self.stores += self.trips;
                walk_stmt(self, s);
            }
            Stmt::Alloc { ty, .. } => {
                self.local_bytes += (ty.numel() * ty.dtype.size_bytes()) as f64;
            }
            _ => walk_stmt(self, s),
        }
    }

    fn expr(&mut self, e: &'a Expr) {
        match &e.kind {
            ExprKind::Load { .. } => self.loads += self.trips,
            ExprKind::Binary { .. }
            | ExprKind::Unary { .. }
            | ExprKind::Call { .. }
            | ExprKind::Select { .. } => {
                self.ops += self.trips;
                if self.in_vector {
                    self.vector_ops += self.trips;
                }
                if self.in_unroll {
                    self.unrolled_ops += self.trips;
                }
            }
            _ => {}
        }
        walk_expr(self, e)
    }
}

/// The work of one kernel, run once.
pub fn kernel_work(k: &Kernel) -> Work {
    let mut c = Work { trips: 1.0, ..Work::default() };
    c.block(&k.body);
    c
}

/// The loop features of `m` on `target` (see the module's comment), [`LOOP_FEATURES`] of them.
pub fn loop_features(m: &Module, target: &TargetProfile) -> Vec<f64> {
    let cores = target.cpu_cores().max(1) as f64;
    let mut total = Work::default();
    let mut local_max: f64 = 0.0;
    let mut balance = 0.0;
    for k in &m.kernels {
        let c = kernel_work(k);
        // A kernel's share of its parallel work the busiest core does, relative to a perfect split.
        let work = c.ops + c.loads + c.stores;
        let eff =
            if c.parallel >= 1.0 { c.parallel / ((c.parallel / cores).ceil() * cores) } else { 1.0 / cores };
        balance += work * eff;
        local_max = local_max.max(c.local_bytes);
        total.ops += c.ops;
        total.loads += c.loads;
        total.stores += c.stores;
        total.vector_ops += c.vector_ops;
        total.vector_width = total.vector_width.max(c.vector_width);
        total.unrolled_ops += c.unrolled_ops;
        total.parallel += c.parallel;
        total.loops += c.loops;
    }
    let work = (total.ops + total.loads + total.stores).max(1.0);
    let ops = total.ops.max(1.0);
    vec![
        (1.0 + total.ops).ln(),
        (1.0 + total.loads).ln(),
        (1.0 + total.stores).ln(),
        total.vector_ops / ops,
        (1.0 + total.vector_width).log2(),
        (1.0 + total.parallel).ln(),
        balance / work,
        total.unrolled_ops / ops,
        (1.0 + local_max).ln(),
        m.kernels.len() as f64,
        (1.0 + total.loops).ln(),
        total.loads / ops,
    ]
}

/// A time estimate from the loop features alone, in arbitrary units (smaller is faster): the
/// weighted work, divided by the vector lanes it keeps busy and the cores its parallel loops
/// keep busy. It ranks points before any has been measured.
pub fn roofline(f: &[f64], target: &TargetProfile) -> f64 {
    let lanes = target.cpu_f32_lanes() as f64;
    let cores = target.cpu_cores().max(1) as f64;
    let (ops, loads, stores) = (f[0].exp() - 1.0, f[1].exp() - 1.0, f[2].exp() - 1.0);
    let width = (f[4].exp2() - 1.0).clamp(1.0, lanes);
    let vector = 1.0 + f[3].clamp(0.0, 1.0) * (width - 1.0);
    let parallel = (f[6] * cores).max(1.0);
    (ops + 2.0 * loads + stores) / (vector * parallel)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ekb_ir::SourceFile;

    #[test]
    fn features_count_weighted_work_vectors_and_threads() {
        let src = SourceFile::new(
            "m.ekl1",
            "module m {\n  input x: f32[64,32]\n  output y: f32[64,32]\n  \
             kernel k(x: f32[64,32] in, y: f32[64,32] out) {\n    \
             parallel i in 0..64 {\n      vectorize j in 0..32 {\n        y[i, j] = x[i, j] * 2.0 + 1.0\n      }\n    }\n  }\n  \
             run k(x, y)\n}\n",
        );
        let m = ekb_ir::l1::parse::parse(&src).unwrap();
        let host = TargetProfile::load("host").unwrap();
        let f = loop_features(&m, &host);
        assert_eq!(f.len(), LOOP_FEATURES);
        assert!((f[0] - (1.0f64 + 2.0 * 2048.0).ln()).abs() < 1e-9, "{f:?}");
        assert!((f[1] - (1.0f64 + 2048.0).ln()).abs() < 1e-9);
        assert_eq!(f[3], 1.0);
        assert_eq!(f[4], 33f64.log2());
        assert_eq!(f[5], 65f64.ln());
        assert!(f.iter().all(|x| x.is_finite()));
        assert!(roofline(&f, &host) > 0.0);
    }
}
