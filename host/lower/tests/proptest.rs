//! Property: random well-typed graphs of elementwise, broadcasting and reduction operators,
//! lowered under either schedule, verify and compute what the L0 reference computes.

#[path = "../../ir/tests/support/random_graph.rs"]
mod random_graph;
mod support;

use ekb_ir::l0::check::load;
use ekb_ir::{SourceFile, TargetProfile};
use ekb_lower::Schedule;
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn lowered_random_graphs_match_the_reference(text in random_graph::graph_text(10), seed in 0u64..1000) {
        let g = load(&SourceFile::new("random.ekir", text.clone()))
            .map_err(|ds| TestCaseError::fail(format!("{text}\n{}", ds[0])))?;
        let host = TargetProfile::load("host").expect("shipped profile");
        let orin = TargetProfile::load("jetson-orin").expect("shipped profile");
        for (schedule, target) in [(Schedule::Naive, &host), (Schedule::Default, &host), (Schedule::Default, &orin)] {
            support::run_case(&g, schedule, target, seed)
                .map_err(|e| TestCaseError::fail(format!("{text}\nschedule {schedule} on {}: {e}", target.name)))?;
        }
    }
}
