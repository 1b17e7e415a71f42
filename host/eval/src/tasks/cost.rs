//! What a task costs: floating-point operations, the fewest bytes it must move, and the peak
//! memory of its default CPU lowering. Speed-of-light and roofline figures come from the first
//! two, so both are computed from the graph rather than stored beside it (they cannot go stale).
//!
//! Counting rules (also in `docs/tasks.md`):
//! - a multiply-add counts two operations; matmul `2·M·N·K` per batch, `linear` adds one per
//!   output for the bias, `conv2d` `2·OC·OH·OW·(C/groups)·KH·KW` per image plus one per output
//!   for the bias;
//! - elementwise operators count one per output element (transcendental functions too), pools
//!   one per window element, reductions and `argmax` one per input element, `softmax` and
//!   `log_softmax` five per element (max, subtract, exp, sum, divide or log), `layer_norm` eight,
//!   `rms_norm` four, `batch_norm` four;
//! - data movement (`reshape`, `transpose`, `concat`, `slice`, `pad`, `cast`, `full`) counts none.
//!
//! Minimum bytes: every input and parameter read once and every output written once (4 bytes
//! an element); intermediates are free, as in a perfectly fused kernel.

use ekb_ir::l0::{Graph, Op};
use ekb_ir::{l1, TargetProfile, TensorType};
use serde::Serialize;

/// A task's work and traffic.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Cost {
    pub flops: u64,
    /// Inputs and parameters read once, outputs written once.
    pub min_bytes: u64,
}

impl Cost {
    /// Operations per byte of the minimum traffic.
    pub fn intensity(&self) -> f64 {
        self.flops as f64 / self.min_bytes.max(1) as f64
    }

    /// The roofline time on a machine of `flops_per_s` and `bytes_per_s`: the larger of the two
    /// times, below which no kernel can run.
    pub fn roofline_seconds(&self, flops_per_s: f64, bytes_per_s: f64) -> f64 {
        (self.flops as f64 / flops_per_s).max(self.min_bytes as f64 / bytes_per_s)
    }
}

fn numel(t: &TensorType) -> u64 {
    t.shape.iter().map(|&d| d as u64).product()
}

fn bytes(t: &TensorType) -> u64 {
    numel(t) * t.dtype.size_bytes() as u64
}

/// The cost of a checked graph (every node typed).
pub fn estimate(g: &Graph) -> Cost {
    let ty = |name: &str| g.type_of(name).expect("a checked graph types every value");
    let mut flops = 0u64;
    for n in &g.nodes {
        let out = n.ty.as_ref().expect("a checked graph types every node");
        let ins: Vec<&TensorType> = n.args.iter().map(|a| ty(&a.name)).collect();
        let per_out = |k: u64| k * numel(out);
        flops += match &n.op {
            Op::Unary(_) | Op::Binary(_) | Op::Compare(_) | Op::Where => per_out(1),
            Op::QuantizeLinear { .. } | Op::DequantizeLinear { .. } => per_out(2),
            Op::Reduce { .. } | Op::ArgMax { .. } => numel(ins[0]),
            Op::Softmax { .. } => per_out(5),
            Op::LayerNorm { .. } => per_out(8),
            Op::RmsNorm { .. } | Op::BatchNorm { .. } => per_out(4),
            Op::MatMul { transpose_a, .. } => {
                let a = &ins[0].shape;
                let k = if *transpose_a { a[a.len() - 2] } else { a[a.len() - 1] };
                per_out(2 * k as u64)
            }
            Op::Linear => {
                let k = *ins[0].shape.last().expect("linear input has rank >= 1") as u64;
                per_out(2 * k) + if ins.len() > 2 { numel(out) } else { 0 }
            }
            Op::Conv2d(_) => {
                let w = &ins[1].shape;
                let k = (w[1] * w[2] * w[3]) as u64;
                per_out(2 * k) + if ins.len() > 2 { numel(out) } else { 0 }
            }
            Op::MaxPool2d(p) | Op::AvgPool2d { pool: p, .. } => per_out((p.kernel[0] * p.kernel[1]) as u64),
            Op::GlobalAvgPool2d => numel(ins[0]),
            Op::CumSum { .. } => per_out(1),
            Op::GroupNorm { .. } => per_out(8),
            // Every input element is multiplied into a KH x KW window of outputs.
            Op::ConvTranspose2d(_) => {
                let w = &ins[1].shape;
                let k = (w[1] * w[2] * w[3]) as u64;
                2 * k * numel(ins[0]) + if ins.len() > 2 { numel(out) } else { 0 }
            }
            // Bilinear: 4 taps, 3 lerps of 2 flops each (nearest: a copy).
            Op::Resize { mode, .. } => match mode {
                ekb_ir::l0::ast::ResizeMode::Bilinear => per_out(7),
                ekb_ir::l0::ast::ResizeMode::Nearest => 0,
            },
            Op::Reshape { .. }
            | Op::Transpose { .. }
            | Op::Concat { .. }
            | Op::Slice { .. }
            | Op::Pad { .. }
            | Op::Cast { .. }
            | Op::Full { .. }
            | Op::Iota { .. }
            | Op::Expand { .. }
            | Op::Gather { .. } => 0,
        };
    }
    let read: u64 = g.inputs.iter().chain(&g.params).map(|d| bytes(&d.ty)).sum();
    let written: u64 = g.outputs.iter().map(|o| bytes(&o.ty)).sum();
    Cost { flops, min_bytes: read + written }
}

/// Peak memory in bytes of the graph lowered with the default CPU schedule for `target`
/// (inputs, outputs, live temporaries and one thread's stack at the worst step).
pub fn default_peak_memory(g: &Graph, target: &TargetProfile) -> Result<u64, ekb_ir::Diagnostic> {
    let m = ekb_lower::lower(g, ekb_lower::Schedule::Default, target)?;
    Ok(l1::memory::peak_memory(&m).peak_bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ekb_ir::SourceFile;

    fn graph(text: &str) -> Graph {
        ekb_ir::l0::check::load(&SourceFile::new("t", text)).unwrap_or_else(|d| panic!("{}", d[0]))
    }

    #[test]
    fn conv_matmul_and_movement_are_counted_by_hand() {
        // conv: 8 outputs channels x 4x4 positions, 3 in-channels x 3x3 taps, plus bias.
        let g = graph(
            "graph c(x: f32[1,3,4,4]) -> (y: f32[1,8,4,4]) {\n  param w: f32[8,3,3,3] = kaiming_uniform\n  \
             param b: f32[8] = zeros\n  %0 = conv2d(x, w, b, pad=[1,1,1,1])\n  %1 = transpose(%0, perm=[0,1,3,2])\n  \
             return %1\n}\n",
        );
        let c = estimate(&g);
        assert_eq!(c.flops, 2 * 8 * 16 * 27 + 8 * 16);
        assert_eq!(c.min_bytes, 4 * (48 + 216 + 8 + 128));
        // matmul with a transposed A: K is A's second-to-last dim; batch 2.
        let g = graph(
            "graph m(a: f32[2,5,3], b: f32[2,5,7]) -> (y: f32[2,3,7]) {\n  %0 = matmul(a, b, transpose_a=true)\n  return %0\n}\n",
        );
        assert_eq!(estimate(&g).flops, 2 * 2 * 3 * 7 * 5);
        let g = graph(
            "graph s(x: f32[4,10]) -> (y: f32[4,10], z: f32[4]) {\n  %0 = softmax(x)\n  %1 = sum(x, axes=[1])\n  return %0, %1\n}\n",
        );
        let c = estimate(&g);
        assert_eq!(c.flops, 5 * 40 + 40);
        assert_eq!(c.min_bytes, 4 * (40 + 40 + 4));
        assert!((c.intensity() - 240.0 / 336.0).abs() < 1e-12);
        assert!((c.roofline_seconds(1e9, 1e6) - 336e-6).abs() < 1e-12);
    }

    #[test]
    fn transposed_convolution_counts_each_input_element_times_its_window() {
        // 2 in-channels x 3x3 positions, each feeding 4 out-channels x 2x2 taps.
        let g = graph(
            "graph t(x: f32[1,2,3,3]) -> (y: f32[1,4,6,6]) {\n  param w: f32[2,4,2,2] = kaiming_uniform\n  \
             %0 = conv_transpose2d(x, w, stride=[2,2])\n  return %0\n}\n",
        );
        assert_eq!(estimate(&g).flops, 2 * (4 * 2 * 2) * 18);
    }

    #[test]
    fn peak_memory_of_the_default_lowering_covers_inputs_and_outputs() {
        let g = graph("graph r(x: f32[64,64]) -> (y: f32[64,64]) {\n  %0 = relu(x)\n  return %0\n}\n");
        let host = TargetProfile::load("host").unwrap();
        assert!(default_peak_memory(&g, &host).unwrap() >= 2 * 64 * 64 * 4);
    }
}
