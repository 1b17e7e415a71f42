//! The lowering test harness: build a checked L0 graph from short text, lower it under both
//! schedules for a few targets, verify the L1 module, run it in the L1 interpreter and compare
//! every output against the L0 reference interpreter at the default tolerance.
#![allow(dead_code)]

use ekb_ir::l0::check::check;
use ekb_ir::l0::ops::infer;
use ekb_ir::l0::parse::parse;
use ekb_ir::l0::Graph;
use ekb_ir::l1::{LoopKind, Module, Stmt};
use ekb_ir::tensor::{compare, Tolerance};
use ekb_ir::{SourceFile, TargetProfile, TensorType};
use ekb_lower::{Knobs, Schedule};
use std::collections::HashMap;

/// Parses `text`, whose output types may be placeholders (`f32[0]`): every node's type is
/// inferred and each output takes the type of the value it returns; then the graph is checked.
pub fn graph(text: &str) -> Graph {
    let mut g = parse(&SourceFile::new("test.ekir", text)).unwrap_or_else(|d| panic!("{text}\n{d}"));
    for i in 0..g.nodes.len() {
        let args: Vec<TensorType> = g.nodes[i]
            .args
            .iter()
            .map(|a| {
                g.type_of(&a.name).cloned().unwrap_or_else(|| panic!("`{}` undefined in\n{text}", a.name))
            })
            .collect();
        let refs: Vec<&TensorType> = args.iter().collect();
        let ty = infer(&g.nodes[i].op, &refs, g.nodes[i].op_span).unwrap_or_else(|d| panic!("{text}\n{d}"));
        g.nodes[i].ty = Some(ty);
    }
    let out_types: Vec<TensorType> =
        g.outputs.iter().map(|o| g.type_of(&o.value.name).cloned().expect("returned value")).collect();
    for (o, ty) in g.outputs.iter_mut().zip(out_types) {
        o.ty = ty;
    }
    check(&mut g)
        .unwrap_or_else(|ds| panic!("{text}\n{}", ds.iter().map(|d| d.to_string()).collect::<String>()));
    g
}

/// A one-node graph `%0 = call` over `inputs` (the text inside `graph t(...)`), returning `%0`.
pub fn op(inputs: &str, call: &str) -> Graph {
    graph(&format!("graph t({inputs}) -> (y: f32[0]) {{\n  %0 = {call}\n  return %0\n}}\n"))
}

/// The targets the default schedule is checked against: this machine's profile, and a 12-core
/// NEON board (a different core count and vector width, so different thread splits and tiles).
pub fn targets() -> Vec<TargetProfile> {
    ["host", "jetson-orin"].iter().map(|t| TargetProfile::load(t).expect("shipped profile")).collect()
}

/// Lowers `g` under `schedule` for `target`, verifies the module and compares its interpreted
/// outputs with the L0 reference; `Err` describes the first failure.
pub fn run_case(g: &Graph, schedule: Schedule, target: &TargetProfile, seed: u64) -> Result<Module, String> {
    run_case_with(g, schedule, &Knobs::for_target(target), target, seed)
}

/// [`run_case`] with the default schedule's templates reading `knobs`.
pub fn run_case_with(
    g: &Graph,
    schedule: Schedule,
    knobs: &Knobs,
    target: &TargetProfile,
    seed: u64,
) -> Result<Module, String> {
    let m = ekb_lower::lower_with(g, schedule, knobs, target).map_err(|d| format!("lowering failed: {d}"))?;
    if schedule == Schedule::Naive {
        if let Some(kind) = loop_kinds(&m).into_iter().find(|&k| k != LoopKind::Serial) {
            return Err(format!(
                "the naive schedule emitted a {kind:?} loop\n{}",
                ekb_ir::l1::print::print(&m)
            ));
        }
    }
    check_module(g, m, target, seed)
}

/// Verifies `m` against `target`, runs it in the L1 interpreter on `g`'s inputs for `seed` and
/// compares every output with the L0 reference; `Err` describes the first failure.
pub fn check_module(g: &Graph, m: Module, target: &TargetProfile, seed: u64) -> Result<Module, String> {
    let text = || ekb_ir::l1::print::print(&m);
    let errors: Vec<String> = ekb_ir::l1::verify::verify(&m, Some(target))
        .into_iter()
        .filter(|d| d.is_error())
        .map(|d| d.to_string())
        .collect();
    if !errors.is_empty() {
        return Err(format!("the module does not verify:\n{}\n{}", errors.join(""), text()));
    }
    let inputs = ekb_ir::l0::inputs::generate(g, seed).map_err(|d| d.to_string())?;
    let tensors = inputs.iter().map(|(n, b)| (n.clone(), b.to_tensor())).collect();
    let reference = ekb_ir::l0::interp::run(g, &tensors).map_err(|d| format!("L0 interpreter: {d}"))?;
    let buffers: HashMap<_, _> = inputs.into_iter().collect();
    let got =
        ekb_ir::l1::interp::run(&m, &buffers).map_err(|d| format!("L1 interpreter: {d}\n{}", text()))?;
    for (o, r) in g.outputs.iter().zip(&reference) {
        let b = got.get(&o.name).ok_or_else(|| format!("output `{}` missing", o.name))?;
        compare(r, &b.to_tensor(), Tolerance::default_for(o.ty.dtype))
            .map_err(|mm| format!("output `{}`: {mm}\n{}", o.name, text()))?;
    }
    Ok(m)
}

/// Checks `g` under the naive schedule and under the default schedule for every target.
pub fn check_graph(g: &Graph) {
    let host = TargetProfile::load("host").expect("shipped profile");
    let mut cases = vec![(Schedule::Naive, host)];
    cases.extend(targets().into_iter().map(|t| (Schedule::Default, t)));
    for (schedule, target) in &cases {
        if let Err(e) = run_case(g, *schedule, target, 7) {
            panic!(
                "graph:\n{}\nschedule {schedule} on target {}: {e}",
                ekb_ir::l0::print::print(g),
                target.name
            );
        }
    }
}

/// `check_graph` of a one-node graph.
pub fn check_op(inputs: &str, call: &str) {
    check_graph(&op(inputs, call));
}

/// Every loop kind in a module, in order.
pub fn loop_kinds(m: &Module) -> Vec<LoopKind> {
    fn walk(body: &[Stmt], out: &mut Vec<LoopKind>) {
        for s in body {
            match s {
                Stmt::Loop { kind, body, .. } => {
                    out.push(*kind);
                    walk(body, out);
                }
                Stmt::If { then_body, else_body, .. } => {
                    walk(then_body, out);
                    walk(else_body, out);
                }
                _ => {}
            }
        }
    }
    let mut out = Vec::new();
    for k in &m.kernels {
        walk(&k.body, &mut out);
    }
    out
}

/// The default schedule's module for `g` on the host profile, checked like `check_graph`.
pub fn default_module(g: &Graph) -> Module {
    let host = TargetProfile::load("host").expect("shipped profile");
    run_case(g, Schedule::Default, &host, 7).unwrap_or_else(|e| panic!("{e}"))
}
