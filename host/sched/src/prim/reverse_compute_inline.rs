//! `reverse_compute_inline t`: the elementwise kernel that reads the temp `t` is folded into
//! the kernel that produces it: where the producer stores `t[I] = v`, it stores the reader's
//! formula at that element instead, `y[I] = f(v)`, and the reader's kernel, its run and `t` go
//! (how an activation after a matmul or a convolution joins its reduction's final store, which
//! `compute_inline` cannot do: a reduction is not a plain nest).
//!
//! Legal when: `t` is a temp of dtype f32 or i32 (an f16 or i8 store rounds, which folding would
//! skip); one run writes it and one later run reads it, each of a kernel that runs once; the
//! reader writes only its output `y`, is a plain nest storing each element of `y` once (as
//! `compute_inline` requires of its producers), and reads `t` only at the element it stores
//! (`t` and `y` of one shape); the producer never reads `t` back, does not write the reader's
//! other inputs, nor touch `y`; and no run between the two writes the reader's inputs or
//! touches `y`. The producer may store `t` in any number of places, at any indices, under any
//! statements (the tiles and vector lanes of a scheduled kernel, the threads of a GPU launch):
//! every store `t[I] = v` becomes `y[I] = f(v)`. Why that is sound: the producer is the only
//! writer of `t` and never reads it, so the last value stored at `t[I]` is the one the reader
//! sees, and `y[I]` gets `f` of that same last value; an element the producer never stores
//! would have been read as poison (L1's uninitialised temps), and stays unwritten in `y`.
//! The reader's inputs become parameters of the producer (with `y`); `v` is bound to a `let`
//! (a fresh name at each store) when the formula reads `t` more than once.

use crate::handle::quoted;
use ekb_ir::diag::did_you_mean;
use ekb_ir::l1::build::{let_, Names, E};
use ekb_ir::l1::print::print_expr;
use ekb_ir::l1::visit::{defined_names, for_each_subexpr, mutate_expr, mutate_stmt, substitute, Mutator};
use ekb_ir::l1::{Access, BufferRole, Expr, ExprKind, KernelParam, Module, Name, Stmt};
use ekb_ir::{DType, Diagnostic, Span};
use std::collections::HashMap;

pub fn apply(m: &mut Module, buf: &str) -> Result<(), Diagnostic> {
    let Some(decl) = m.buffer(buf).cloned() else {
        let temps = m.buffers.iter().filter(|b| b.role == BufferRole::Temp).map(|b| b.name.as_str());
        let mut d = Diagnostic::error(format!("module {} has no buffer `{buf}`", m.name))
            .with_expected(format!("a temp buffer: {}", quoted(temps.clone())));
        d.hint = did_you_mean(buf, temps);
        return Err(d);
    };
    if decl.role != BufferRole::Temp {
        return Err(Diagnostic::error(format!("`{buf}` is not a temp of module {}", m.name))
            .with_hint("fold the reader of a temp buffer into its producer"));
    }
    if !matches!(decl.ty.dtype, DType::F32 | DType::I32) {
        return Err(Diagnostic::error(format!(
            "`{buf}` is {}: storing into it rounds, which folding its reader would skip",
            decl.ty
        ))
        .with_hint("fold the readers of f32 and i32 temps"));
    }
    // Who touches what, by plan step: the parameters each run binds to a module buffer.
    let params = |step: usize, name: &str| -> Vec<KernelParam> {
        let r = &m.plan[step];
        let k = m.kernel(&r.kernel).expect("the plan verifies");
        r.args.iter().zip(&k.params).filter(|(a, _)| a.name == name).map(|(_, p)| p.clone()).collect()
    };
    let writes = |step: usize, name: &str| params(step, name).iter().any(|p| p.access != Access::In);
    let steps: Vec<usize> = (0..m.plan.len()).filter(|&s| !params(s, buf).is_empty()).collect();
    let (pw, pr) = match steps.as_slice() {
        [pw, pr] if writes(*pw, buf) && !writes(*pr, buf) && params(*pw, buf).len() + params(*pr, buf).len() == 2 => {
            (*pw, *pr)
        }
        _ => {
            return Err(Diagnostic::error(format!(
                "`{buf}` is used by {} runs of the plan, not written by one and then read by one (passed once to each)",
                steps.len()
            ))
            .with_hint("fold the one reader of a temp into its one producer"))
        }
    };
    let runs_of = |name: &str| m.plan.iter().filter(|r| r.kernel == name).count();
    let (producer, reader) = (m.plan[pw].kernel.clone(), m.plan[pr].kernel.clone());
    if let Some(k) = [&producer, &reader].into_iter().find(|k| runs_of(k) != 1) {
        return Err(Diagnostic::error(format!("kernel {k} runs more than once in the plan"))
            .with_hint("fold kernels that run once each"));
    }
    let rk = m.kernel(&reader).expect("the plan verifies").clone();
    let outs: Vec<&KernelParam> = rk.params.iter().filter(|p| p.access != Access::In).collect();
    let [out] = outs.as_slice() else {
        return Err(Diagnostic::error(format!(
            "kernel {reader} (which reads `{buf}`) writes {} buffers",
            outs.len()
        ))
        .with_hint("fold a reader that writes one output"));
    };
    let y =
        m.plan[pr].args[rk.params.iter().position(|p| p.name == out.name).expect("a parameter")].name.clone();
    if let Some(p) = [pw, pr].iter().flat_map(|&s| params(s, buf)).find(|p| p.ty != decl.ty) {
        return Err(Diagnostic::error(format!(
            "`{buf}` is passed as `{}`, of type {}: a view under another shape than its {}",
            p.name, p.ty, decl.ty
        ))
        .with_hint("fold a temp its producer and reader take under its own shape"));
    }
    let t_param = params(pr, buf).pop().expect("the reader reads it").name;
    let (vars, value) = super::compute_inline::plain_nest(&rk.body, &out.name, &out.ty.shape)
        .filter(|_| out.ty.shape == decl.ty.shape)
        .ok_or_else(|| {
            Diagnostic::error(format!(
                "the reader of `{buf}` (kernel {reader}) is not a plain loop nest storing `{}[i0, ..]` once per element",
                out.name
            ))
            .with_hint("fold an elementwise reader, before scheduling it (the naive lowering writes it as such a nest)")
        })?;
    let here: Vec<Expr> = vars
        .iter()
        .map(|v| Expr::new(v.as_ref().map_or(ExprKind::Int(0), |v| ExprKind::Var(v.clone()))))
        .collect();
    let mut reads = 0;
    let mut elsewhere = None;
    for_each_subexpr(&value, |e| {
        if let ExprKind::Load { buf: b, index } = &e.kind {
            if b.name == t_param {
                reads += 1;
                if index.iter().map(print_expr).ne(here.iter().map(print_expr)) && elsewhere.is_none() {
                    elsewhere = Some(print_expr(e));
                }
            }
        }
    });
    if let Some(at) = elsewhere {
        return Err(Diagnostic::error(format!(
            "kernel {reader} reads `{at}`, not `{buf}` at the element it stores: other elements of `{buf}` are not there \
             yet where the producer stores one"
        ))
        .with_hint("fold an elementwise reader (a transpose or a stencil reads other elements: compute_inline it instead)"));
    }
    // The producer's stores of `t`: it must never read `t` back, so each stored value is final
    // wherever it lands (a later store to the same element replaces it in both programs).
    let pk = m.kernel(&producer).expect("the plan verifies").clone();
    let pt = params(pw, buf).pop().expect("the producer writes it").name;
    let mut loaded = false;
    ekb_ir::l1::visit::for_each_expr(&pk.body, |e| {
        loaded |= matches!(&e.kind, ExprKind::Load { buf: b, .. } if b.name == pt)
    });
    if loaded {
        return Err(Diagnostic::error(format!(
            "kernel {producer} reads `{buf}` back (it accumulates there): a value it stores is not final"
        ))
        .with_hint("fold into a producer that only stores the temp (accumulating in a local or a `let`)"));
    }
    // Inputs: the reader's, by module buffer; none written by the producer or in between, and
    // `y` untouched until the reader.
    let inputs: Vec<(String, KernelParam)> = m.plan[pr]
        .args
        .iter()
        .zip(&rk.params)
        .filter(|(a, p)| p.access == Access::In && a.name != buf)
        .map(|(a, p)| (a.name.clone(), p.clone()))
        .collect();
    for s in pw..pr {
        let k = &m.plan[s].kernel;
        if let Some((b, _)) = inputs.iter().find(|(b, _)| writes(s, b)) {
            return Err(Diagnostic::error(format!(
                "run {s} (kernel {k}) writes `{b}`, which the reader of `{buf}` reads, before the reader runs"
            ))
            .with_hint("fold a reader whose inputs are ready when the producer runs"));
        }
        if !params(s, &y).is_empty() {
            return Err(Diagnostic::error(format!(
                "run {s} (kernel {k}) uses `{y}`, which the reader of `{buf}` writes, before the reader runs"
            ))
            .with_hint("fold a reader whose output nothing uses before it"));
        }
    }
    // The producer gets `y` and the reader's inputs as parameters.
    let ki = m.kernels.iter().position(|k| k.name == producer).expect("the plan verifies");
    let mut args = m.plan[pw].args.clone();
    let k = &mut m.kernels[ki];
    let mut names = Names::default();
    defined_names(k).iter().for_each(|n| names.reserve(n));
    let mut rename: HashMap<String, String> = HashMap::new();
    let wanted = inputs.iter().map(|(b, p)| (b, p, Access::In)).chain([(&y, *out, Access::Out)]);
    for (module_buf, p, access) in wanted {
        // (A parameter viewing the buffer under another shape is not the same operand.)
        let have = args
            .iter()
            .zip(&k.params)
            .find(|(a, q)| a.name == *module_buf && q.access == Access::In && q.ty == p.ty);
        let name = match have {
            Some((_, q)) if access == Access::In => q.name.clone(),
            _ => {
                let name = names.fresh(&p.name);
                k.params.push(KernelParam { name: name.clone(), ty: p.ty.clone(), access, span: Span::NONE });
                args.push(Name::new(module_buf.clone()));
                name
            }
        };
        rename.insert(p.name.clone(), name);
    }
    let tv = format!("{buf}_v");
    let y_param = rename[&out.name].clone();
    let mut fold = Fold {
        t: &pt,
        tv: &tv,
        names: &mut names,
        y: &y_param,
        reader_t: &t_param,
        vars: &vars,
        value: &value,
        reads,
        rename: &rename,
    };
    k.body = fold.block(std::mem::take(&mut k.body));
    // `t` leaves the producer, and the reader, its run and `t` go.
    let keep: Vec<bool> = k.params.iter().map(|p| p.name != pt).collect();
    let mut it = keep.iter();
    k.params.retain(|_| *it.next().expect("one flag per parameter"));
    let mut it = keep.iter();
    args.retain(|_| *it.next().expect("one flag per argument"));
    m.plan[pw].args = args;
    m.plan.remove(pr);
    m.kernels.retain(|k| k.name != reader);
    m.buffers.retain(|b| b.name != buf);
    Ok(())
}

/// Replaces the producer's stores of `t` by stores of the reader's formula to `y`.
struct Fold<'a> {
    t: &'a str,
    /// The base of the `let` each store's value is bound to (a fresh name per store: a block
    /// may store `t` more than once).
    tv: &'a str,
    names: &'a mut Names,
    y: &'a str,
    reader_t: &'a str,
    vars: &'a [Option<String>],
    value: &'a Expr,
    reads: usize,
    rename: &'a HashMap<String, String>,
}

impl Mutator for Fold<'_> {
    fn stmt(&mut self, s: Stmt) -> Vec<Stmt> {
        match mutate_stmt(self, s) {
            Stmt::Store { buf, index, value: v, span } if buf.name == self.t => {
                let map: HashMap<String, Expr> = self
                    .vars
                    .iter()
                    .zip(&index)
                    .filter_map(|(var, i)| var.as_ref().map(|var| (var.clone(), i.clone())))
                    .collect();
                let (stored, pre) = if self.reads > 1 {
                    let tv = self.names.fresh(self.tv);
                    (Expr::new(ExprKind::Var(tv.clone())), vec![let_(&tv, E(v))])
                } else {
                    (v, Vec::new())
                };
                // The reader's variables first, so that none of the producer's in `v` is replaced.
                let f = substitute(self.value.clone(), &map);
                let f = Reader { t: self.reader_t, stored: &stored, rename: self.rename }.expr(f);
                let mut out = pre;
                out.push(Stmt::Store {
                    buf: Name { name: self.y.to_string(), span: buf.span },
                    index,
                    value: f,
                    span,
                });
                out
            }
            s => vec![s],
        }
    }
}

/// The reader's formula in the producer: its loads of `t` become the stored value, its other
/// loads read the producer's parameters.
struct Reader<'a> {
    t: &'a str,
    stored: &'a Expr,
    rename: &'a HashMap<String, String>,
}

impl Mutator for Reader<'_> {
    fn expr(&mut self, e: Expr) -> Expr {
        match mutate_expr(self, e) {
            Expr { kind: ExprKind::Load { buf, .. }, .. } if buf.name == self.t => self.stored.clone(),
            Expr { kind: ExprKind::Load { buf, index }, span } => {
                let name = self.rename.get(&buf.name).cloned().unwrap_or(buf.name);
                Expr { kind: ExprKind::Load { buf: Name { name, span: buf.span }, index }, span }
            }
            e => e,
        }
    }
}
