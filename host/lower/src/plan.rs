//! Module buffers: where every L0 value lives in the L1 module.
//!
//! Inputs and parameters become `input` buffers of the same name; each graph output becomes an
//! `output` buffer of its declared name; every other node result becomes a `buffer` temporary
//! named after the node (`%0` -> `t0`, `%h` -> `t_h`), renamed on collision. A node whose
//! result is returned is written straight into the (first) output buffer returning it; an
//! output whose value is an input, a parameter or a value already stored in another output is
//! filled by a copy kernel. Buffer names are unique within the module.
//!
//! A `reshape` whose result is not returned is a *view*: no buffer and no kernel, its readers
//! take its operand's buffer under the reshaped type (a kernel parameter may have another shape
//! of the same element type and count than the buffer a run passes it, docs/ir-l1.md). The
//! view's name is the kernel parameter's, unique among the buffer names, so a kernel reading
//! both the view and its operand has two parameters.

use ekb_ir::l0::{Graph, Op};
use ekb_ir::l1::{BufferDecl, BufferRole};
use ekb_ir::{Diagnostic, Span, TensorType};
use std::collections::{HashMap, HashSet};

/// An output filled by copying another buffer after the node kernels have run.
#[derive(Debug, Clone, PartialEq)]
pub struct Copy {
    pub src: String,
    pub dst: String,
    pub ty: TensorType,
}

/// The module's buffers and the buffer holding each L0 value.
#[derive(Debug, Clone)]
pub struct Storage {
    pub buffers: Vec<BufferDecl>,
    /// L0 value name -> module buffer name.
    loc: HashMap<String, String>,
    /// View name -> the module buffer it reads.
    views: HashMap<String, String>,
    pub copies: Vec<Copy>,
}

impl Storage {
    /// The buffer holding an L0 value (defined for every input, parameter and node result), or
    /// for a view the name its readers' parameter takes.
    pub fn loc(&self, value: &str) -> &str {
        &self.loc[value]
    }

    /// The module buffer behind a name [`Storage::loc`] gave: a view's operand's, else itself.
    pub fn buffer<'a>(&'a self, name: &'a str) -> &'a str {
        self.views.get(name).map_or(name, String::as_str)
    }

    /// Whether the node `value` is a view (lowered to no kernel).
    pub fn is_view(&self, value: &str) -> bool {
        self.loc.get(value).is_some_and(|l| self.views.contains_key(l))
    }
}

/// Module buffers being declared, with the names taken so far.
#[derive(Default)]
struct Decls {
    buffers: Vec<BufferDecl>,
    taken: HashSet<String>,
}

impl Decls {
    fn declare(
        &mut self,
        name: &str,
        ty: &TensorType,
        role: BufferRole,
        span: Span,
    ) -> Result<(), Diagnostic> {
        if !self.taken.insert(name.to_string()) {
            return Err(Diagnostic::error(format!("the name `{name}` is declared twice"))
                .at(span)
                .with_expected("distinct names for inputs, parameters and outputs"));
        }
        self.buffers.push(BufferDecl { name: name.to_string(), ty: ty.clone(), role, span: Span::NONE });
        Ok(())
    }

    /// `base`, or `base_2`, `base_3`, ... when taken.
    fn unique(&self, base: String) -> String {
        let mut name = base.clone();
        let mut i = 2;
        while self.taken.contains(&name) {
            name = format!("{base}_{i}");
            i += 1;
        }
        name
    }
}

/// Assigns every value of a typed graph to a module buffer.
pub fn assign(g: &Graph) -> Result<Storage, Diagnostic> {
    let mut decls = Decls::default();
    let mut loc = HashMap::new();
    for d in g.inputs.iter().chain(&g.params) {
        decls.declare(&d.name, &d.ty, BufferRole::Input, d.span)?;
        loc.insert(d.name.clone(), d.name.clone());
    }
    let mut copies = Vec::new();
    for o in &g.outputs {
        decls.declare(&o.name, &o.ty, BufferRole::Output, o.span)?;
        let is_node = g.nodes.iter().any(|n| n.name == o.value.name);
        if is_node && !loc.contains_key(&o.value.name) {
            loc.insert(o.value.name.clone(), o.name.clone());
        } else {
            let src = loc.get(&o.value.name).cloned().ok_or_else(|| {
                Diagnostic::error(format!(
                    "output `{}` returns `{}`, which is not defined",
                    o.name, o.value.name
                ))
                .at(o.value.span)
            })?;
            copies.push(Copy { src, dst: o.name.clone(), ty: o.ty.clone() });
        }
    }
    let mut views: HashMap<String, String> = HashMap::new();
    for n in &g.nodes {
        if loc.contains_key(&n.name) {
            continue;
        }
        let ty = n.ty.as_ref().ok_or_else(|| untyped(&n.name, n.span))?;
        let name = decls.unique(temp_name(&n.name));
        if let Op::Reshape { .. } = n.op {
            let operand: &str = &loc[&n.args[0].name];
            let buffer = views.get(operand).cloned().unwrap_or_else(|| operand.to_string());
            decls.taken.insert(name.clone());
            views.insert(name.clone(), buffer);
        } else {
            decls.declare(&name, ty, BufferRole::Temp, n.span)?;
        }
        loc.insert(n.name.clone(), name);
    }
    Ok(Storage { buffers: decls.buffers, loc, views, copies })
}

/// The diagnostic for a graph that was not checked before lowering.
pub fn untyped(node: &str, span: Span) -> Diagnostic {
    Diagnostic::error(format!("node `{node}` has no type: lowering needs a checked graph"))
        .at(span)
        .with_hint("run the L0 checker (`ekb_ir::l0::check`) before lowering")
}

/// `%0` -> `t0`, `%h` -> `t_h`; characters other than letters, digits and `_` become `_`.
fn temp_name(node: &str) -> String {
    let rest: String = node
        .trim_start_matches('%')
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '_' { c } else { '_' })
        .collect();
    if rest.starts_with(|c: char| c.is_ascii_digit()) {
        format!("t{rest}")
    } else {
        format!("t_{rest}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{gpu_lowered_matches_reference, lowered_matches_reference};
    use crate::Schedule;
    use ekb_ir::l1::print::print;

    #[test]
    fn reshapes_not_returned_are_views_without_a_kernel() {
        // A reshaped parameter read by a convolution, a reshape of a reshape of a node's result,
        // an add reading a view and the buffer it views (two parameters, one buffer), and a
        // returned reshape, which is a copy into its output. (200 pixels: more than the default
        // schedule packs a convolution's weight for.)
        let g = "graph g(x: f32[1,4,1,200]) -> (y: f32[1,4,1,200], z: f32[4,200], r: f32[800]) {
  param w: f32[4,4,3] = kaiming_uniform
  %w4 = reshape(w, shape=[4,4,1,3])
  %c = conv2d(x, %w4, pad=[0,1,0,1])
  %f = reshape(%c, shape=[4,200])
  %f2 = reshape(%f, shape=[4,1,200])
  %b = reshape(%f2, shape=[1,4,1,200])
  %y = add(%b, %c)
  %z = mul(%f, %f)
  %r = reshape(%y, shape=[800])
  return %y, %z, %r
}
";
        let gr = ekb_ir::l0::check::load(&ekb_ir::SourceFile::new("g.ekir", g)).unwrap();
        let st = assign(&gr).unwrap();
        for (view, buffer) in [("%w4", "w"), ("%f", "t_c"), ("%f2", "t_c"), ("%b", "t_c")] {
            assert!(st.is_view(view), "{view}");
            assert_eq!(st.buffer(st.loc(view)), buffer, "{view}");
        }
        assert!(!st.is_view("%r") && st.loc("%r") == "r");
        for schedule in Schedule::ALL {
            let m = lowered_matches_reference(g, schedule, "rk3588");
            let kernels: Vec<&str> = m.kernels.iter().map(|k| k.name.as_str()).collect();
            assert_eq!(kernels, ["k1_conv2d", "k5_add", "k6_mul", "k7_reshape"], "{}", print(&m));
            assert!(
                !m.buffers.iter().any(|b| b.name.starts_with("t_f") || b.name == "t_w4"),
                "{}",
                print(&m)
            );
            gpu_lowered_matches_reference(g, schedule, "pocl");
        }
    }

    #[test]
    fn temp_names_follow_node_names() {
        assert_eq!(temp_name("%0"), "t0");
        assert_eq!(temp_name("%12"), "t12");
        assert_eq!(temp_name("%h"), "t_h");
        assert_eq!(temp_name("%a.b"), "t_a_b");
    }
}
