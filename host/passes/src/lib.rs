//! L0 -> L0 graph passes, run by the compile driver before the lowering.
//!
//! [`index`] answers use-def questions about a graph, [`rewrite`] builds a changed graph from a
//! pass's edits (keeping it typed, in topological order and with its signature), [`manager`]
//! runs a pipeline of passes to a fixed point, and [`pass`] holds the passes. A [`Selection`]
//! says which passes run (`default`, `none` or a list of names) and [`run`] runs them.
//!
//! What it keeps true: every pass keeps what the graph computes (within the evaluation
//! tolerance) and its signature (inputs, parameters, output names and types), so the task's
//! graph as written stays the reference of the rewritten one.

pub mod index;
pub mod manager;
pub mod pass;
pub mod rewrite;
#[cfg(test)]
mod testing;

use ekb_ir::l0::{interp, Graph};
use ekb_ir::tensor::{compare, Tolerance};
use ekb_ir::Diagnostic;
use manager::{DumpSink, Pass};
use std::fmt;

/// Which passes run.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Selection {
    /// The default pipeline ([`pass::DEFAULT`]).
    #[default]
    Default,
    /// No pass: the graph as written.
    None,
    /// These passes, in this order (names from [`pass::PASSES`]).
    List(Vec<&'static str>),
}

impl Selection {
    /// `default`, `none`, or a comma-separated list of pass names (`fold,cse,dce`).
    pub fn parse(text: &str) -> Result<Selection, Diagnostic> {
        match text.trim() {
            "default" => return Ok(Selection::Default),
            "none" => return Ok(Selection::None),
            _ => {}
        }
        let mut names = Vec::new();
        for word in text.split(',').map(str::trim) {
            let Some(p) = pass::find(word) else {
                let known: Vec<&str> = pass::PASSES.iter().map(|p| p.name).collect();
                let mut d = Diagnostic::error(format!("unknown graph pass `{word}`")).with_expected(format!(
                    "`default`, `none`, or a comma-separated list of {}",
                    known.join(", ")
                ));
                if let Some(h) = ekb_ir::diag::did_you_mean(word, known.iter().copied()) {
                    d = d.with_hint(h);
                }
                return Err(d);
            };
            names.push(p.name);
        }
        Ok(Selection::List(names))
    }

    /// The passes selected, in order (the same for every backend).
    pub fn passes(&self) -> Vec<&'static Pass> {
        let names: Vec<&str> = match self {
            Selection::Default => pass::DEFAULT.to_vec(),
            Selection::None => Vec::new(),
            Selection::List(names) => names.clone(),
        };
        names.iter().map(|n| pass::find(n).expect("names are checked when parsed")).collect()
    }
}

impl fmt::Display for Selection {
    /// `default (patchify, pixel_transpose, trim, bn_fold, fold, cse, dce, fuse)`, `none`, or the
    /// list (`fold, cse`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names = self.passes().into_iter().map(|p| p.name).collect::<Vec<_>>().join(", ");
        match self {
            Selection::Default => write!(f, "default ({names})"),
            Selection::None => f.write_str("none"),
            Selection::List(_) => f.write_str(&names),
        }
    }
}

/// `g` after the selected passes; `dump` sees the graph after each pass run.
pub fn run(g: &Graph, selection: &Selection, dump: DumpSink<'_>) -> Result<Graph, Diagnostic> {
    manager::run_pipeline(g, &selection.passes(), dump)
}

/// Whether `after` computes what `before` computes on the inputs and parameters of `seed`, within
/// the evaluation tolerance of each output's dtype (the reference interpreter runs both).
pub fn agrees(before: &Graph, after: &Graph, seed: u64) -> Result<(), String> {
    let want = interp::run_seeded(before, seed).map_err(|d| format!("the graph before: {d}"))?;
    let got = interp::run_seeded(after, seed).map_err(|d| format!("the graph after: {d}"))?;
    for ((w, g), o) in want.iter().zip(&got).zip(&before.outputs) {
        if w.ty != g.ty {
            return Err(format!("output `{}`: {} before, {} after", o.name, w.ty, g.ty));
        }
        compare(w, g, Tolerance::default_for(w.ty.dtype)).map_err(|m| format!("output `{}`: {m}", o.name))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selections_parse_and_unknown_names_list_the_known_ones() {
        assert_eq!(Selection::parse("default").unwrap(), Selection::Default);
        assert_eq!(Selection::parse("none").unwrap(), Selection::None);
        assert_eq!(Selection::parse("dce, fold").unwrap(), Selection::List(vec!["dce", "fold"]));
        assert_eq!(
            Selection::default().to_string(),
            "default (patchify, pixel_transpose, trim, bn_fold, fold, cse, dce, fuse)"
        );
        assert_eq!(Selection::parse("dce,fold").unwrap().to_string(), "dce, fold");
        assert_eq!(Selection::parse("bn_fold,dce").unwrap().passes().len(), 2);
        let e = Selection::parse("fold,csee").unwrap_err();
        assert_eq!(e.message, "unknown graph pass `csee`");
        assert!(
            e.expected
                .as_deref()
                .unwrap()
                .contains("patchify, pixel_transpose, phase_split, trim, bn_fold, fold, cse, dce, fuse"),
            "{e}"
        );
        assert_eq!(e.hint.as_deref(), Some("did you mean `cse`?"));
    }

    #[test]
    fn the_default_pipeline_folds_shares_removes_and_fuses() {
        let g = testing::graph(
            "graph t(x: f32[4]) -> (y: f32[4]) {
               %0 = full(shape=[4], value=1.0)
               %1 = full(shape=[4], value=1.0)
               %2 = add(%0, %1)
               %3 = relu(x)
               %4 = relu(x)
               %5 = mul(%3, %2)
               %6 = add(%5, %4)
               return %6
             }",
        );
        let out = run(&g, &Selection::Default, None).unwrap();
        assert_eq!(
            ekb_ir::l0::print::print(&out),
            "graph t(x: f32[4]) -> (y: f32[4]) {\n  %2: f32[4] = full(shape=[4], value=2.0, dtype=f32)\n  \
             %3: f32[4] = relu(x)\n  %5: f32[4] = mul(%3, %2)\n  %6: f32[4] = add(%5, %3)\n  \
             fuse %3, %5, %6\n  return %6\n}\n"
        );
        agrees(&g, &out, 1).unwrap();
        assert_eq!(
            ekb_ir::l0::print::print(&run(&g, &Selection::None, None).unwrap()),
            ekb_ir::l0::print::print(&g)
        );
    }
}
