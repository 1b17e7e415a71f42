//! `ekb-sched`: schedules as data. A schedule is a [`Trace`], a list of primitive applications
//! (split, reorder, fuse, parallel, vectorize, unroll, compute_inline, ...), each an L1 -> L1
//! rewrite that keeps the program's meaning, with a legality check that refuses a step it
//! cannot prove safe. [`apply`] replays a trace on a module.
//!
//! Layout: `trace` (the data and its printer), `parse` (the text reader), `handle` (loop
//! handles and paths), `prim/` (one file per primitive).
//!
//! What this crate must keep true: a step either gives a module that verifies and computes
//! what its input computed (bit for bit on the L1 interpreter; `vectorize` may reassociate
//! float reductions in the backend, as L1 allows, and `rfactor` reassociates f32 sums and
//! products in the module itself, so the property test compares a trace with an `rfactor`
//! within the dtype's tolerance: `docs/schedules.md`, "Reassociation"), or is refused with a
//! diagnostic naming the step, the loop or buffer, the dependence or bound in the way, and what
//! would be legal, and then the module is unchanged.

pub mod handle;
pub mod parse;
mod prim;
pub mod trace;

pub use parse::parse;
pub use trace::{LoopRef, Prim, Step, Trace, PRIMITIVES};

use ekb_ir::l1::{verify, Module};
use ekb_ir::Diagnostic;

/// Replays `trace` on `m`: the scheduled module, or the first refused step's diagnostic
/// (located at the step, for `SourceFile::locate` on the trace's text).
pub fn apply(m: &Module, trace: &Trace) -> Result<Module, Diagnostic> {
    let mut cur = m.clone();
    for (i, s) in trace.steps.iter().enumerate() {
        cur = apply_step(&cur, s).map_err(|d| in_step(d, i + 1, s))?;
    }
    Ok(cur)
}

/// Applies one step: the new module, or why the step is refused (`m` is never changed).
pub fn apply_step(m: &Module, s: &Step) -> Result<Module, Diagnostic> {
    let mut out = m.clone();
    prim::apply(&mut out, &s.prim)?;
    // Every step's result is checked: a step that would break the verifier's rules (a parallel
    // loop inside a vectorized one, an index out of bounds) is refused rather than produced.
    let errors: Vec<Diagnostic> =
        verify::verify(&out, None).into_iter().filter(Diagnostic::is_error).collect();
    if let Some(e) = errors.first() {
        let mut d = Diagnostic::error(format!("the result would not verify: {}", e.message));
        d.hint = e
            .hint
            .clone()
            .or_else(|| Some("schedule the loops in another order, or leave this step out".into()));
        return Err(d);
    }
    Ok(out)
}

/// `step N (`text`) is refused: reason`, located at the step.
fn in_step(d: Diagnostic, n: usize, s: &Step) -> Diagnostic {
    let mut out =
        Diagnostic::error(format!("step {n} (`{}`) is refused: {}", s.text(), d.message)).at(s.span);
    out.hint = d.hint.clone();
    out.expected = d.expected.clone();
    out.notes = d.notes.clone();
    out
}
