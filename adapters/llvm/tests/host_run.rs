//! Runs the conformance corpus through the whole host path (emit, clang-19, link, dlopen) and
//! compares every output with the hand-computed expectation and the L1 interpreter, with several
//! threads and with one, for the host CPU and for the x86-64 baseline.

mod common;
use common::cases::{all, check};
use common::*;
use ekb_llvm::HostModule;

#[test]
fn corpus_runs_on_the_host_and_matches_the_expected_outputs() {
    clang();
    run_corpus(&host(), &[4, 1]);
}

/// The baseline CPU calls the library's floorf/ceilf through the GOT, and vectorises 4 wide.
#[test]
fn corpus_runs_for_the_x86_64_baseline_cpu() {
    clang();
    run_corpus(&x86_64_baseline(), &[3]);
}

fn run_corpus(target: &ekb_ir::TargetProfile, thread_counts: &[usize]) {
    for case in all() {
        let m = module(case.text);
        let diags = ekb_ir::l1::verify::verify(&m, Some(target));
        assert!(
            !ekb_ir::l1::verify::has_errors(&diags),
            "{}: the test module does not verify: {diags:#?}",
            case.name
        );
        let inputs = (case.inputs)();
        let expected = (case.expect)(&inputs);
        // The hand-computed expectation and the L1 interpreter agree, so comparing compiled
        // code with either is comparing it with the reference semantics.
        let interp = ekb_ir::l1::interp::run(&m, &inputs).unwrap_or_else(|d| panic!("{}: {d}", case.name));
        check(&format!("{} (interpreter)", case.name), &expected, &interp);
        for &threads in thread_counts {
            let hm = HostModule::build(&m, target, threads).unwrap_or_else(|d| panic!("{}: {d}", case.name));
            assert_eq!(hm.threads(), threads);
            let got = hm.run(&m, &inputs).unwrap_or_else(|d| panic!("{}: {d}", case.name));
            assert_eq!(got.len(), expected.len(), "{}: outputs {:?}", case.name, got.keys());
            check(case.name, &expected, &got);
        }
    }
}
