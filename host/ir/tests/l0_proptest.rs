//! Property: random well-typed graphs of elementwise, broadcasting and reduction operators are
//! canonical as generated, load (parse + check), and survive print -> parse -> check -> print
//! unchanged, with the same graph (spans aside) on both sides.

#[path = "support/random_graph.rs"]
mod random_graph;

use ekb_ir::l0::check::load;
use ekb_ir::l0::parse::strip_spans;
use ekb_ir::l0::print::print;
use ekb_ir::SourceFile;
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn random_graphs_round_trip(text in random_graph::graph_text(12)) {
        let g = match load(&SourceFile::new("random.ekir", text.clone())) {
            Ok(g) => g,
            Err(ds) => {
                let msgs: Vec<String> = ds.iter().map(|d| d.to_string()).collect();
                return Err(TestCaseError::fail(format!("{text}\n{}", msgs.join(""))));
            }
        };
        let printed = print(&g);
        prop_assert_eq!(&printed, &text, "the generator writes canonical text");
        let again = load(&SourceFile::new("again.ekir", printed.clone()))
            .map_err(|ds| TestCaseError::fail(ds[0].to_string()))?;
        prop_assert_eq!(print(&again), printed);
        let (mut a, mut b) = (g, again);
        strip_spans(&mut a);
        strip_spans(&mut b);
        prop_assert_eq!(a, b);
    }
}

#[test]
fn generator_covers_the_operator_families() {
    let all: String = (0..200).map(|seed| random_graph::generate(seed, 12)).collect();
    for op in [
        "add(",
        "sub(",
        "mul(",
        "div(",
        "max(",
        "min(",
        "pow(",
        "sum(",
        "mean(",
        "exp(",
        "log(",
        "sqrt(",
        "rsqrt(",
        "relu(",
        "gelu(",
        "clip(",
        "keepdims=true",
        "axes=[-",
    ] {
        assert!(all.contains(op), "no generated graph uses `{op}`");
    }
}
