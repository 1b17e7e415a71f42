//! What the graph passes did to a candidate compiled from a graph: its kernels and planned peak
//! as compiled (after the passes the driver runs by default) beside those of the same program
//! compiled with no pass. That second compile stops after the verifier (the lowering, a
//! schedule trace's replay if there is one, the verification: no code generation, no
//! toolchain), so it costs little next to the candidate's own build.
//!
//! What must stay true: both sides are the same program compiled with the same options but the
//! passes; a program that does not compile without the passes leaves no record, never the
//! figures of another program.

use crate::results::{PassesRecord, ProgramSize};
use ekb_deploy::driver::{self, CompileOptions, Program, Sources, Stage};
use ekb_ir::l1::{arena, Module};
use ekb_ir::TargetProfile;
use ekb_passes::Selection;

/// The size of a loop program: the kernels an execution runs (its steps after the prepare
/// steps, which run once: a packed weight, a batch norm's factors) and its memory plan's peak.
pub fn size(module: &Module) -> ProgramSize {
    let kernels = module.plan.iter().filter(|r| !r.prepare).count();
    ProgramSize { kernels, planned_peak_bytes: arena::plan(module).planned_bytes() }
}

/// The record of `program`, compiled with `options` into `after`: `after`'s size, and the size
/// of `program` compiled with the same options, no graph pass, up to the verifier. `None` when
/// that compile fails.
pub fn record(
    program: Program<'_>,
    sources: Sources<'_>,
    target: &TargetProfile,
    options: &CompileOptions,
    after: &Module,
) -> Option<PassesRecord> {
    let before_options = CompileOptions {
        passes: Selection::None,
        until: Stage::Verify,
        dump: driver::Dump::None,
        dump_passes: false,
        ..options.clone()
    };
    let before = driver::compile(program, sources, target, &before_options).ok()?;
    Some(PassesRecord { before: size(&before.module), after: size(after) })
}
