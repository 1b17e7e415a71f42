//! The emitter at the nesting limit of L1 (`ekb_ir::l1::nesting`): a kernel body of exactly
//! `MAX_NESTING` levels, in one expression or half in loops, emits on a 2 MiB thread stack, and
//! the kernel clang-19 compiles from it computes the chain's value.

mod common;
use common::*;
use ekb_ir::l1::nesting::{chain_module, MAX_NESTING};
use ekb_llvm::HostModule;
use std::collections::HashMap;

#[test]
fn a_body_at_the_nesting_limit_emits_on_a_small_stack_and_computes_its_value() {
    for loops in [0, MAX_NESTING / 2] {
        let terms = MAX_NESTING - loops - 2;
        std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(move || {
                let m = module(&chain_module(loops, terms, false));
                let hm = HostModule::build(&m, &host(), 1).unwrap_or_else(|d| panic!("{d}"));
                let got = hm.run(&m, &HashMap::from([("x".to_string(), f32s(&[1], vec![0.5]))])).unwrap();
                assert_eq!(got["y"], f32s(&[1], vec![0.5 * terms as f32]), "{loops} loops, {terms} terms");
            })
            .unwrap()
            .join()
            .expect("the emitter stays within the stack");
    }
}
