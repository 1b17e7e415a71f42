//! The pass manager: runs a pipeline of passes over a graph. The passes that run to a fixed
//! point ([`When::FixedPoint`]) run in their listed order, round after round, until a round
//! changes nothing; then the passes that run once ([`When::AtEnd`]) run in their order.
//!
//! What it keeps true:
//! - at most [`MAX_ROUNDS`] rounds: a pipeline still changing the graph then is an error naming
//!   the passes that changed it in the last round (two passes undoing each other's work);
//! - in debug builds the graph is re-checked with the L0 checker after every pass that changed
//!   it, and a refusal names the pass;
//! - a dump, when asked for, sees every pass run: its name, the round, whether it changed the
//!   graph, and the graph after it.

use ekb_ir::l0::check::check;
use ekb_ir::l0::Graph;
use ekb_ir::Diagnostic;

/// When a pass runs in a pipeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum When {
    /// With the other fixed-point passes, in rounds, until none changes the graph.
    FixedPoint,
    /// Once, after the fixed point (a pass whose result the others must not rewrite).
    AtEnd,
}

/// One L0 -> L0 pass: `run` returns the rewritten graph, or `None` when it changes nothing.
pub struct Pass {
    pub name: &'static str,
    /// One line: what it rewrites into what.
    pub summary: &'static str,
    pub when: When,
    pub run: fn(&Graph) -> Result<Option<Graph>, Diagnostic>,
}

/// What a dump sees after each pass run.
pub struct PassDump<'a> {
    pub pass: &'static str,
    /// 1 for the first round; the passes run at the end report the last round's number.
    pub round: usize,
    pub changed: bool,
    /// The graph after the pass.
    pub graph: &'a Graph,
}

/// Where the dump after each pass goes (`None`: nowhere).
pub type DumpSink<'s> = Option<&'s mut dyn FnMut(&PassDump<'_>)>;

/// The most rounds of the fixed-point passes.
pub const MAX_ROUNDS: usize = 16;

/// Runs `passes` over `g` as described in the module header.
pub fn run_pipeline(
    g: &Graph,
    passes: &[&'static Pass],
    mut dump: DumpSink<'_>,
) -> Result<Graph, Diagnostic> {
    let mut graph = g.clone();
    let fixed: Vec<&Pass> = passes.iter().copied().filter(|p| p.when == When::FixedPoint).collect();
    let mut round = 0;
    if !fixed.is_empty() {
        loop {
            round += 1;
            let mut changed_by = Vec::new();
            for pass in &fixed {
                if run_one(pass, &mut graph, round, &mut dump)? {
                    changed_by.push(pass.name);
                }
            }
            if changed_by.is_empty() {
                break;
            }
            if round == MAX_ROUNDS {
                return Err(Diagnostic::error(format!(
                    "the graph passes did not reach a fixed point in {MAX_ROUNDS} rounds: the last round was changed by {}",
                    changed_by.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ")
                ))
                .with_note("two passes probably undo each other's rewrites (a bug of the passes)")
                .with_hint("leave out one of those passes (`--passes LIST`), or `--passes none`"));
            }
        }
    }
    for pass in passes.iter().filter(|p| p.when == When::AtEnd) {
        run_one(pass, &mut graph, round.max(1), &mut dump)?;
    }
    Ok(graph)
}

/// Runs one pass over `graph` in place; returns whether it changed it.
fn run_one(
    pass: &Pass,
    graph: &mut Graph,
    round: usize,
    dump: &mut DumpSink<'_>,
) -> Result<bool, Diagnostic> {
    let out = (pass.run)(graph).map_err(|d| d.with_note(format!("in the graph pass `{}`", pass.name)))?;
    let changed = out.is_some();
    if let Some(new) = out {
        if cfg!(debug_assertions) {
            let mut checked = new.clone();
            if let Err(ds) = check(&mut checked) {
                let first = &ds[0];
                return Err(Diagnostic::error(format!(
                    "the graph pass `{}` made a graph the L0 checker refuses: {}",
                    pass.name, first.message
                ))
                .with_note("this is a bug of the pass, not of the input graph")
                .with_hint(format!("leave `{}` out of `--passes` and report the graph", pass.name)));
            }
        }
        *graph = new;
    }
    if let Some(sink) = dump.as_mut() {
        sink(&PassDump { pass: pass.name, round, changed, graph });
    }
    Ok(changed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::graph;
    use ekb_ir::l0::{Op, UnaryOp};

    const G: &str = "graph t(x: f32[4]) -> (y: f32[4]) {
      %0 = relu(x)
      return %0
    }";

    /// Flips the operator of the first node between relu and neg: never converges alone.
    fn flip(g: &Graph) -> Result<Option<Graph>, Diagnostic> {
        let mut out = g.clone();
        out.nodes[0].op = match out.nodes[0].op {
            Op::Unary(UnaryOp::Relu) => Op::Unary(UnaryOp::Neg),
            _ => Op::Unary(UnaryOp::Relu),
        };
        Ok(Some(out))
    }

    /// Turns relu into neg once; then nothing to do.
    fn relu_to_neg(g: &Graph) -> Result<Option<Graph>, Diagnostic> {
        if g.nodes[0].op != Op::Unary(UnaryOp::Relu) {
            return Ok(None);
        }
        let mut out = g.clone();
        out.nodes[0].op = Op::Unary(UnaryOp::Neg);
        Ok(Some(out))
    }

    /// Makes a graph the checker refuses (an operand nothing defines).
    #[cfg(debug_assertions)]
    fn breaks(g: &Graph) -> Result<Option<Graph>, Diagnostic> {
        let mut out = g.clone();
        out.nodes[0].args[0].name = "nowhere".into();
        Ok(Some(out))
    }

    static FLIP: Pass = Pass { name: "flip", summary: "", when: When::FixedPoint, run: flip };
    static ONCE: Pass = Pass { name: "once", summary: "", when: When::FixedPoint, run: relu_to_neg };
    static AT_END: Pass = Pass { name: "at_end", summary: "", when: When::AtEnd, run: flip };
    #[cfg(debug_assertions)]
    static BREAKS: Pass = Pass { name: "breaks", summary: "", when: When::FixedPoint, run: breaks };

    #[test]
    fn passes_run_to_a_fixed_point_then_the_end_passes_once() {
        let mut seen = Vec::new();
        let mut sink = |d: &PassDump<'_>| seen.push((d.pass, d.round, d.changed, d.graph.nodes[0].op.name()));
        let out = run_pipeline(&graph(G), &[&AT_END, &ONCE], Some(&mut sink)).unwrap();
        assert_eq!(out.nodes[0].op, Op::Unary(UnaryOp::Relu), "neg, flipped back once at the end");
        assert_eq!(seen, [("once", 1, true, "neg"), ("once", 2, false, "neg"), ("at_end", 2, true, "relu")]);
    }

    #[test]
    fn a_pipeline_that_does_not_converge_is_an_error_naming_the_pass() {
        let e = run_pipeline(&graph(G), &[&FLIP], None).unwrap_err();
        assert!(e.message.contains("did not reach a fixed point in 16 rounds"), "{e}");
        assert!(e.message.contains("`flip`"), "{e}");
    }

    #[test]
    #[cfg(debug_assertions)]
    fn a_pass_that_breaks_the_graph_is_named_in_debug_builds() {
        let e = run_pipeline(&graph(G), &[&BREAKS], None).unwrap_err();
        assert!(e.message.contains("`breaks` made a graph the L0 checker refuses"), "{e}");
        assert!(e.message.contains("unknown value `nowhere`"), "{e}");
    }
}
