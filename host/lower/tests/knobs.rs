//! Property: the default schedule lowers correctly with any knob values in their ranges (what
//! a tuner may try): the op corpus, lowered with random knobs for the host and a board,
//! verifies and computes what the L0 reference computes.

mod support;

use ekb_ir::TargetProfile;
use ekb_lower::{Knobs, Schedule, KNOBS};
use proptest::prelude::*;
use std::path::PathBuf;

/// The corpus graphs whose default lowering reads knobs other than `threads` (matmul, conv,
/// reductions, transposes), plus a few others.
fn corpus() -> Vec<(String, ekb_ir::l0::Graph)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/ops");
    let names = [
        "matmul",
        "matmul_batched",
        "matmul_transposed",
        "matmul_int8",
        "linear",
        "linear_int8",
        "mlp_block",
        "conv2d",
        "conv2d_depthwise",
        "conv2d_grouped",
        "conv2d_strided",
        "conv2d_int8",
        "softmax",
        "log_softmax",
        "reduce_sum",
        "reduce_mean",
        "argmax",
        "layer_norm",
        "reshape_transpose",
        "relu",
    ];
    names
        .iter()
        .map(|n| {
            let text = std::fs::read_to_string(dir.join(format!("{n}.ekir"))).expect("corpus file");
            (n.to_string(), support::graph(&text))
        })
        .collect()
}

/// Knobs with each value drawn from its range, capped at 4 times its default (larger tiles
/// only repeat what the cap already covers on corpus shapes).
fn knobs(target: &TargetProfile, draws: &[u32]) -> Knobs {
    let base = Knobs::for_target(target);
    let mut k = base;
    for (s, d) in KNOBS.iter().zip(draws) {
        let hi = s.max.min(4 * base.get(s.knob).max(1)).max(s.min);
        let v = s.min + (*d as usize) % (hi - s.min + 1);
        k.set(s.name, v).expect("in range");
    }
    k
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn the_default_schedule_is_correct_under_random_knobs(
        draws in proptest::collection::vec(any::<u32>(), KNOBS.len()),
        pick in 0usize..1000,
        seed in 0u64..100,
    ) {
        let graphs = corpus();
        let (name, g) = &graphs[pick % graphs.len()];
        for t in ["host", "jetson-orin"] {
            let target = TargetProfile::load(t).expect("shipped profile");
            let k = knobs(&target, &draws);
            support::run_case_with(g, Schedule::Default, &k, &target, seed)
                .map_err(|e| TestCaseError::fail(format!("{name} on {t} with\n{}\n{e}", k.print(None))))?;
        }
    }
}
