//! Runs the conformance corpus through the whole host path (emit, clang-19, link, dlopen) and
//! compares every output with the hand-computed expectation, with several threads and with one.

mod common;
use common::cases::{all, check};
use common::*;
use ekb_llvm::HostModule;

#[test]
fn corpus_runs_on_the_host_and_matches_the_expected_outputs() {
    clang();
    let target = host();
    for case in all() {
        let m = module(case.text);
        let diags = ekb_ir::l1::verify::verify(&m, Some(&target));
        assert!(!ekb_ir::l1::verify::has_errors(&diags), "{}: the test module does not verify: {diags:#?}", case.name);
        let inputs = (case.inputs)();
        let expected = (case.expect)(&inputs);
        for threads in [4, 1] {
            let hm = HostModule::build(&m, &target, threads).unwrap_or_else(|d| panic!("{}: {d}", case.name));
            assert_eq!(hm.threads(), threads);
            let got = hm.run(&m, &inputs).unwrap_or_else(|d| panic!("{}: {d}", case.name));
            assert_eq!(got.len(), expected.len(), "{}: outputs {:?}", case.name, got.keys());
            check(case.name, &expected, &got);
        }
    }
}
