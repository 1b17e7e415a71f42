//! The L0 verifier: resolves names, infers every node's type, and checks the graph.
//!
//! Checks: every name defined once (inputs, params, nodes; output names distinct from each
//! other and from inputs and params); every tensor within `ops::MAX_NUMEL` elements; each
//! initialiser valid for its dtype (`randint` only for i32 and i8, the others only for f32; bounds
//! finite and ordered); every use after its definition; each node's type inferred by
//! `ops::infer` and equal to its annotation when one is written; each returned value of the
//! declared output type; each fusion group as `fusion` requires. Afterwards every node's `ty`
//! holds its inferred type.
//! A data parameter (`= file(...)`) is checked for its size only; `load` of a graph read from a
//! file on disk also reads and verifies its data files (see `inputs::load_data`).
//! Invariant: all errors are collected (a failed node does not cascade into errors at its
//! uses), each carries a span, and nothing panics.

use crate::diag::{did_you_mean, Diagnostic, SourceFile, Span};
use crate::l0::ast::{Graph, TensorDecl};
use crate::l0::inputs::load_data;
use crate::l0::ops::{check_numel, infer};
use crate::l0::parse::parse;
use crate::l0::print::init_text;
use crate::types::{DType, TensorType};
use ekb_wire::Init;
use std::collections::HashMap;

/// Parses and checks a graph; every diagnostic comes back located in `src`.
///
/// When `src.name` is a file on disk (as `SourceFile::read` names it), the data files of its
/// data parameters are read from that file's directory and verified (size and CRC-32); a graph
/// from a string leaves them unloaded (`inputs::load_data` loads them from a chosen directory).
pub fn load(src: &SourceFile) -> Result<Graph, Vec<Diagnostic>> {
    let mut g = parse(src).map_err(|d| vec![d])?;
    let locate = |ds: Vec<Diagnostic>| ds.into_iter().map(|d| src.locate(d)).collect::<Vec<_>>();
    check(&mut g).map_err(locate)?;
    let path = std::path::Path::new(&src.name);
    if path.is_file() && g.params.iter().any(|p| p.data.is_some()) {
        let dir = path.parent().unwrap_or(std::path::Path::new(""));
        load_data(&mut g, dir).map_err(locate)?;
    }
    Ok(g)
}

/// What a name refers to while checking: a known type, or a node whose check failed (uses of it
/// are not reported again).
enum Def {
    Typed(TensorType),
    Failed,
}

/// Infers every node's type into `node.ty` and verifies the graph; returns every error found.
pub fn check(g: &mut Graph) -> Result<(), Vec<Diagnostic>> {
    let mut errs = Vec::new();
    // Name -> (definition, span of the definition).
    let mut defs: HashMap<String, (Def, Span)> = HashMap::new();
    let mut define = |defs: &mut HashMap<String, (Def, Span)>, name: &str, def: Def, span: Span| {
        if defs.contains_key(name) {
            errs.push(
                Diagnostic::error(format!("`{name}` is defined twice"))
                    .at(span)
                    .with_expected("a name not used before in this graph"),
            );
        } else {
            defs.insert(name.to_string(), (def, span));
        }
    };
    let mut decl_errs = Vec::new();
    // Inputs, parameters and outputs keep their names as the buffers of the loop program.
    let interface = g.inputs.iter().chain(&g.params).map(|d| (&d.name, d.span));
    for (name, span) in interface.chain(g.outputs.iter().map(|o| (&o.name, o.span))) {
        if crate::l1::parse::KEYWORDS.contains(&name.as_str()) {
            decl_errs.push(
                Diagnostic::error(format!("`{name}` is a keyword of the loop language (L1)"))
                    .at(span)
                    .with_note("inputs, parameters and outputs keep their names as the buffers of the lowered loop program")
                    .with_hint(format!("rename it, e.g. `{name}_`")),
            );
        }
    }
    for (d, is_param) in g.inputs.iter().map(|d| (d, false)).chain(g.params.iter().map(|d| (d, true))) {
        let ok = check_decl(d, is_param, &mut decl_errs);
        define(&mut defs, &d.name, if ok { Def::Typed(d.ty.clone()) } else { Def::Failed }, d.span);
    }
    // Names defined by nodes, with their spans, to tell "used before definition" from "unknown".
    let node_names: Vec<String> = g.nodes.iter().map(|n| n.name.clone()).collect();
    for node in &mut g.nodes {
        let mut types = Vec::with_capacity(node.args.len());
        let mut ok = true;
        for a in &node.args {
            match defs.get(&a.name) {
                Some((Def::Typed(t), _)) => types.push(t.clone()),
                Some((Def::Failed, _)) => ok = false,
                None => {
                    ok = false;
                    decl_errs.push(undefined(&a.name, a.span, &defs, node_names.contains(&a.name)));
                }
            }
        }
        let def = if ok {
            let refs: Vec<&TensorType> = types.iter().collect();
            match infer(&node.op, &refs, node.op_span) {
                Ok(t) => match &node.ty {
                    Some(ann) if *ann != t => {
                        decl_errs.push(
                            Diagnostic::error(format!(
                                "`{}` is annotated {ann} but `{}` produces {t}",
                                node.name,
                                node.op.name()
                            ))
                            .at(node.span)
                            .with_expected(format!("`{}: {t}` or no annotation", node.name)),
                        );
                        Def::Failed
                    }
                    _ => {
                        node.ty = Some(t.clone());
                        Def::Typed(t)
                    }
                },
                Err(d) => {
                    decl_errs.push(d);
                    Def::Failed
                }
            }
        } else {
            Def::Failed
        };
        define(&mut defs, &node.name, def, node.span);
    }
    let mut out_names: HashMap<&str, Span> = HashMap::new();
    for o in &g.outputs {
        if g.decl(&o.name).is_some() || out_names.contains_key(o.name.as_str()) {
            decl_errs.push(
                Diagnostic::error(format!("output name `{}` is already used", o.name))
                    .at(o.span)
                    .with_expected("output names distinct from each other and from inputs and params"),
            );
        }
        out_names.insert(&o.name, o.span);
        if let Err(n) = check_numel(&o.ty.shape) {
            decl_errs.push(Diagnostic::error(format!("output `{}: {}` has {n}", o.name, o.ty)).at(o.span));
        }
        match defs.get(&o.value.name) {
            Some((Def::Typed(t), _)) if *t != o.ty => decl_errs.push(
                Diagnostic::error(format!(
                    "output `{}` is declared {} but `{}` is {t}",
                    o.name, o.ty, o.value.name
                ))
                .at(o.value.span)
                .with_expected(format!("a value of type {}", o.ty)),
            ),
            Some(_) => {}
            None => decl_errs.push(undefined(&o.value.name, o.value.span, &defs, false)),
        }
    }
    errs.extend(decl_errs);
    // Fusion groups read node types: checked once every node is typed.
    if errs.is_empty() {
        errs.extend(crate::l0::fusion::check_groups(g));
    }
    if errs.is_empty() {
        Ok(())
    } else {
        errs.sort_by_key(|d| d.span.map_or(u32::MAX, |s| s.start));
        Err(errs)
    }
}

/// "unknown value" (with a hint) or "used before its definition".
fn undefined(name: &str, span: Span, defs: &HashMap<String, (Def, Span)>, defined_later: bool) -> Diagnostic {
    if defined_later {
        return Diagnostic::error(format!("`{name}` is used before its definition"))
            .at(span)
            .with_expected("a value defined on an earlier line");
    }
    let mut d = Diagnostic::error(format!("unknown value `{name}`"))
        .at(span)
        .with_expected("an input, a parameter, or a node defined earlier");
    // Numbered node names (`%3` vs `%5`) are all "close"; a hint between them would be noise.
    let numbered = name.strip_prefix('%').is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit()));
    if let Some(h) = did_you_mean(name, defs.keys().map(|k| k.as_str())).filter(|_| !numbered) {
        d = d.with_hint(h);
    }
    d
}

/// Checks a declaration's type size and initialiser; returns whether it is valid.
fn check_decl(d: &TensorDecl, is_param: bool, errs: &mut Vec<Diagnostic>) -> bool {
    let what = if is_param { "parameter" } else { "input" };
    if let Err(n) = check_numel(&d.ty.shape) {
        errs.push(Diagnostic::error(format!("{what} `{}: {}` has {n}", d.name, d.ty)).at(d.span));
        return false;
    }
    let bad = |msg: String| Diagnostic::error(format!("{what} `{}`: {msg}", d.name)).at(d.span);
    if d.data.is_some() {
        if is_param {
            return true;
        }
        errs.push(
            bad("cannot take its values from a file".into())
                .with_note("inputs are generated from seeds; `file(...)` gives a parameter's values"),
        );
        return false;
    }
    let problem = match (d.init, d.ty.dtype) {
        (Init::RandInt { .. }, DType::F32 | DType::F16) => Some(
            bad("`randint` initialises only integer (i32, i8) tensors".into())
                .with_hint(format!("use `uniform(lo, hi)` for {}", d.ty.dtype)),
        ),
        (Init::RandInt { lo, hi }, DType::I32) => {
            let range = i64::from(i32::MIN)..=i64::from(i32::MAX);
            if lo >= hi || !range.contains(&lo) || !range.contains(&hi) {
                Some(bad(format!("`randint({lo}, {hi})` needs lo < hi, both within i32")))
            } else {
                None
            }
        }
        (Init::RandInt { lo, hi }, DType::I8) => {
            if lo >= hi || lo < -128 || hi > 128 {
                Some(
                    bad(format!("`randint({lo}, {hi})` needs lo < hi with -128 <= lo and hi <= 128 for i8"))
                        .with_note("the values drawn lie in [lo, hi), so `randint(-128, 128)` is the whole i8 range"),
                )
            } else {
                None
            }
        }
        (_, DType::I32 | DType::I8) => Some(
            bad(format!("`{}` initialises only float (f32, f16) tensors", init_text(&d.init)))
                .with_hint(format!("use `randint(lo, hi)` for {}", d.ty.dtype)),
        ),
        (Init::Uniform { lo, hi }, _) if !(lo.is_finite() && hi.is_finite() && lo < hi) => {
            Some(bad(format!("`{}` needs finite lo < hi", init_text(&d.init))))
        }
        (Init::Normal { mean, std }, _) if !(mean.is_finite() && std.is_finite() && std >= 0.0) => {
            Some(bad(format!("`{}` needs a finite mean and a finite std >= 0", init_text(&d.init))))
        }
        (Init::Const(v), _) if !v.is_finite() => {
            Some(bad(format!("`{}` needs a finite value", init_text(&d.init))))
        }
        (Init::KaimingUniform, _) if d.ty.rank() == 0 || d.ty.numel() == 0 => Some(bad(
            "`kaiming_uniform` needs a non-empty tensor of rank >= 1 (fan_in = product of all dims but the first)"
                .into(),
        )),
        _ => None,
    };
    match problem {
        Some(p) => {
            errs.push(p);
            false
        }
        None => true,
    }
}
