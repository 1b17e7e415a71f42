//! Helpers of the unit tests of the lowering: lower a graph given as text, check that the module
//! verifies, and compare the L1 interpreter's outputs with the L0 reference on a seed.

use crate::{lower, lower_gpu, lower_gpu_with, lower_with, Knobs, Schedule};
use ekb_ir::l0::Graph;
use ekb_ir::l0::{check, inputs, interp};
use ekb_ir::l1::{self, Module};
use ekb_ir::tensor::{compare, Tensor, Tolerance};
use ekb_ir::{SourceFile, TargetProfile};
use std::collections::HashMap;

/// Lowers `text` for the profile `target` under `schedule`, checks that it verifies and that it
/// computes the reference's outputs on seed 0; returns the module.
pub fn lowered_matches_reference(text: &str, schedule: Schedule, target: &str) -> Module {
    matches_reference(text, schedule, target, &lower)
}

/// [`lowered_matches_reference`] through the GPU lowering (`target` must have a GPU).
pub fn gpu_lowered_matches_reference(text: &str, schedule: Schedule, target: &str) -> Module {
    matches_reference(text, schedule, target, &lower_gpu)
}

/// [`lowered_matches_reference`] under the default schedule with the knobs `set` changed from
/// the target's defaults.
pub fn knobs_match_reference(text: &str, set: &[(&str, usize)], target: &str) -> Module {
    let lowering =
        |g: &Graph, schedule: Schedule, t: &TargetProfile| lower_with(g, schedule, &knobs(set, t), t);
    matches_reference(text, Schedule::Default, target, &lowering)
}

/// [`gpu_lowered_matches_reference`] under the default schedule with the knobs `set` changed
/// from the target's defaults.
pub fn gpu_knobs_match_reference(text: &str, set: &[(&str, usize)], target: &str) -> Module {
    let lowering =
        |g: &Graph, schedule: Schedule, t: &TargetProfile| lower_gpu_with(g, schedule, &knobs(set, t), t);
    matches_reference(text, Schedule::Default, target, &lowering)
}

fn knobs(set: &[(&str, usize)], target: &TargetProfile) -> Knobs {
    let mut knobs = Knobs::for_target(target);
    for &(name, value) in set {
        knobs.set(name, value).unwrap_or_else(|d| panic!("{d}"));
    }
    knobs
}

type Lowering<'a> = &'a dyn Fn(&Graph, Schedule, &TargetProfile) -> Result<Module, ekb_ir::Diagnostic>;

fn matches_reference(text: &str, schedule: Schedule, target: &str, lowering: Lowering) -> Module {
    let g = check::load(&SourceFile::new("t.ekir", text)).unwrap_or_else(|ds| panic!("{}", ds[0]));
    let target = TargetProfile::load(target).unwrap();
    let m = lowering(&g, schedule, &target).unwrap_or_else(|d| panic!("{d}"));
    let errors: Vec<_> = l1::verify::verify(&m, Some(&target)).into_iter().filter(|d| d.is_error()).collect();
    assert!(errors.is_empty(), "{errors:?}");
    let bufs = inputs::generate(&g, 0).unwrap();
    let tensors: HashMap<String, Tensor> = bufs.iter().map(|(n, b)| (n.clone(), b.to_tensor())).collect();
    let want = interp::run(&g, &tensors).unwrap();
    let got = l1::interp::run(&m, &bufs.into_iter().collect()).unwrap_or_else(|d| panic!("{d}"));
    for (o, w) in g.outputs.iter().zip(&want) {
        compare(w, &got[&o.name].to_tensor(), Tolerance::default_for(o.ty.dtype))
            .unwrap_or_else(|e| panic!("{} ({schedule}): output `{}`: {e}", g.name, o.name));
    }
    m
}
