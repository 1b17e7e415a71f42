//! Helpers of the unit tests: load a graph from text, and run one pass over it, checking that
//! the result is a valid graph that computes what the input computes.

use ekb_ir::l0::check::{check, load};
use ekb_ir::l0::print::print;
use ekb_ir::l0::Graph;
use ekb_ir::{Diagnostic, SourceFile};

type PassFn = fn(&Graph) -> Result<Option<Graph>, Diagnostic>;

/// A graph that must load.
pub fn graph(text: &str) -> Graph {
    load(&SourceFile::new("t.ekir", text))
        .unwrap_or_else(|ds| panic!("the test graph does not load:\n{}", ds[0]))
}

/// The printed graph after one run of `pass`, which must change it, keep it valid, and keep
/// what it computes (on seeds 1 and 2).
#[track_caller]
pub fn rewrite(pass: PassFn, text: &str) -> String {
    let g = graph(text);
    let out =
        pass(&g).unwrap_or_else(|d| panic!("the pass failed: {d}")).expect("the pass changes the graph");
    let mut checked = out.clone();
    check(&mut checked).unwrap_or_else(|ds| panic!("the result does not check: {}\n{}", ds[0], print(&out)));
    for seed in [1, 2] {
        crate::agrees(&g, &out, seed).unwrap_or_else(|e| panic!("seed {seed}: {e}\n{}", print(&out)));
    }
    print(&out)
}

/// Asserts that `pass` leaves the graph as it is.
#[track_caller]
pub fn expect_unchanged(pass: PassFn, text: &str) {
    let g = graph(text);
    if let Some(out) = pass(&g).unwrap_or_else(|d| panic!("the pass failed: {d}")) {
        panic!("expected no change, got\n{}", print(&out));
    }
}
