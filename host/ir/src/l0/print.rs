//! The L0 printer: a [`Graph`] to its canonical text.
//!
//! Canonical form: `graph NAME(inputs) -> (outputs) {` on one line; two-space indent; params
//! after inputs, one per line, then nodes, then fusion groups (`fuse %a, %b`), then `return`;
//! every node annotated with its type when known (always, after `check`); every attribute
//! printed in the operator's fixed order, defaults included; input initialisers only when not
//! the default; lists and shapes without spaces; floats via `types::fmt_float`; `Const(0)` prints `zeros`, `Const(1)` `ones`; a data
//! parameter prints `file("NAME", offset=N, crc32="xxxxxxxx")` (8 lowercase hex digits).
//! Invariant: for every graph that parses, `print(parse(print(g))) == print(g)`.

use crate::l0::ast::{Graph, ParamData, TensorDecl};
use crate::types::fmt_float;
use ekb_wire::Init;
use std::fmt::Write;

/// The canonical text of a graph, ending in a newline.
pub fn print(g: &Graph) -> String {
    let mut s = String::new();
    let inputs: Vec<String> = g.inputs.iter().map(|d| decl(d, false)).collect();
    let outputs: Vec<String> = g.outputs.iter().map(|o| format!("{}: {}", o.name, o.ty)).collect();
    let _ = writeln!(s, "graph {}({}) -> ({}) {{", g.name, inputs.join(", "), outputs.join(", "));
    for p in &g.params {
        let _ = writeln!(s, "  param {}", decl(p, true));
    }
    for n in &g.nodes {
        let mut parts: Vec<String> = n.args.iter().map(|a| a.name.clone()).collect();
        parts.extend(n.op.attrs_for_print().into_iter().map(|(k, v)| format!("{k}={v}")));
        let ty = n.ty.as_ref().map(|t| format!(": {t}")).unwrap_or_default();
        let _ = writeln!(s, "  {}{ty} = {}({})", n.name, n.op.name(), parts.join(", "));
    }
    for f in &g.groups {
        let members: Vec<&str> = f.nodes.iter().map(|v| v.name.as_str()).collect();
        let _ = writeln!(s, "  fuse {}", members.join(", "));
    }
    let values: Vec<&str> = g.outputs.iter().map(|o| o.value.name.as_str()).collect();
    let _ = writeln!(s, "  return {}", values.join(", "));
    s.push_str("}\n");
    s
}

/// `name: type[ = init]`; an input's init is omitted when it is the default for its dtype.
fn decl(d: &TensorDecl, always_init: bool) -> String {
    let mut s = format!("{}: {}", d.name, d.ty);
    if let Some(data) = &d.data {
        s.push_str(" = ");
        s.push_str(&file_text(data));
        return s;
    }
    if always_init || d.init != d.ty.dtype.default_init() {
        s.push_str(" = ");
        s.push_str(&init_text(&d.init));
    }
    s
}

/// `file("NAME", offset=N, crc32="xxxxxxxx")`, with `"` and `\` in the name escaped.
pub fn file_text(data: &ParamData) -> String {
    let name = data.file.replace('\\', "\\\\").replace('"', "\\\"");
    format!("file(\"{name}\", offset={}, crc32=\"{:08x}\")", data.offset, data.crc32)
}

/// The text form of an initialiser (`uniform(-0.1, 0.1)`, `zeros`, `randint(0, 10)`).
pub fn init_text(init: &Init) -> String {
    match *init {
        Init::Uniform { lo, hi } => format!("uniform({}, {})", fmt_float(lo), fmt_float(hi)),
        Init::Normal { mean, std } => format!("normal({}, {})", fmt_float(mean), fmt_float(std)),
        Init::KaimingUniform => "kaiming_uniform".into(),
        Init::Const(v) if v == 0.0 && v.is_sign_positive() => "zeros".into(),
        Init::Const(1.0) => "ones".into(),
        Init::Const(v) => format!("const({})", fmt_float(v)),
        Init::RandInt { lo, hi } => format!("randint({lo}, {hi})"),
    }
}
