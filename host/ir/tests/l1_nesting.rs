//! The nesting limit of L1 (`l1::nesting`): a body deeper than `MAX_NESTING` levels, binary
//! chains included, is a located diagnostic from the parser and, for a module built in code, from
//! the verifier (and so from the interpreter), never a stack overflow; a body of exactly
//! `MAX_NESTING` levels goes through every walk of this crate on a 2 MiB thread stack.

use ekb_ir::l1::build::{f, var, E};
use ekb_ir::l1::interp::run;
use ekb_ir::l1::nesting::{chain_module, expr_levels, MAX_NESTING};
use ekb_ir::l1::parse::parse;
use ekb_ir::l1::print::print;
use ekb_ir::l1::verify::verify;
use ekb_ir::l1::{Module, Stmt};
use ekb_ir::tensor::{BufData, Buffer};
use ekb_ir::types::{DType, TensorType};
use ekb_ir::SourceFile;
use std::collections::HashMap;

/// Runs `f` on a thread with a 2 MiB stack, the default of test threads, whatever
/// `RUST_MIN_STACK` says.
fn on_small_stack(f: impl FnOnce() + Send + 'static) {
    std::thread::Builder::new().stack_size(2 << 20).spawn(f).unwrap().join().expect("the walk finished");
}

#[test]
fn long_binary_chains_are_a_located_diagnostic_not_a_stack_overflow() {
    for terms in [10_000, 15_000] {
        on_small_stack(move || {
            let src = SourceFile::new("deep.ekl1", chain_module(0, terms, false));
            let d = parse(&src).expect_err("a chain this long is refused");
            assert!(d.message.contains(&format!("nests more than {MAX_NESTING} levels deep")), "{d}");
            assert!(d.hint.as_ref().is_some_and(|h| h.contains("`let`")), "{d}");
            let at = d.location.as_ref().expect("located");
            // The store, at level 1 on line 6, crosses the limit at the `+` adding the chain's
            // 256th term (the `+` before it).
            assert_eq!(at.line, 6, "{d}");
            let col = "y[0] = max(".len() + (MAX_NESTING - 2) * "v + ".len() + "v +".len();
            assert_eq!(at.column, col, "{d}");
        });
    }
}

#[test]
fn a_body_of_exactly_the_limit_goes_through_every_walk_and_one_level_more_does_not_parse() {
    // All levels in the expression, or half of them in loops.
    for loops in [0, MAX_NESTING / 2] {
        let terms = MAX_NESTING - loops - 2;
        let over = SourceFile::new("over.ekl1", chain_module(loops, terms + 1, false));
        let d = parse(&over).expect_err("one level over the limit");
        assert!(d.message.contains("nests more than"), "{d}");
        on_small_stack(move || {
            let m = parse(&SourceFile::new("limit.ekl1", chain_module(loops, terms, false))).unwrap();
            assert!(verify(&m, None).is_empty(), "{:?}", verify(&m, None));
            let back = parse(&SourceFile::new("printed", print(&m))).unwrap();
            assert_eq!(print(&back), print(&m));
            let x = Buffer { ty: TensorType::new(DType::F32, [1]), data: BufData::F32(vec![1.0]) };
            let out = run(&m, &HashMap::from([("x".to_string(), x)])).unwrap();
            assert_eq!(out["y"].data, BufData::F32(vec![terms as f32]));
        });
    }
}

/// The store of the innermost statement list of `m`'s kernel.
fn store_value(m: &mut Module) -> &mut ekb_ir::l1::Expr {
    let mut body = &mut m.kernels[0].body;
    loop {
        match body.last_mut().unwrap() {
            Stmt::Loop { body: inner, .. } => body = inner,
            Stmt::Store { value, .. } => return value,
            other => panic!("unexpected statement {other:?}"),
        }
    }
}

#[test]
fn a_module_built_in_code_deeper_than_the_limit_is_refused_by_the_verifier_without_recursion() {
    on_small_stack(|| {
        let mut m = parse(&SourceFile::new("built.ekl1", chain_module(3, 1, false))).unwrap();
        // 5,000 terms: far over the limit, and still shallow enough to drop on this stack.
        let chain = (1..5_000).fold(var("v"), |acc: E, _| acc + var("v"));
        assert_eq!(expr_levels(&chain.0), 5_000);
        *store_value(&mut m) = chain.max(f(0.0)).0;
        let diags = verify(&m, None);
        assert_eq!(diags.len(), 1, "{diags:?}");
        let d = &diags[0];
        assert!(d.is_error());
        // Three loops, the store at level 4, its value 5,001 levels below it.
        assert!(
            d.message.contains("the store into `y` in kernel `k` nests 5005 levels deep; at most 256"),
            "{d}"
        );
        let e = run(&m, &HashMap::new()).expect_err("the interpreter verifies first");
        assert!(e.message.contains("nests 5005 levels deep"), "{e}");
    });
}
