//! `compute_inline t`: the temp `t` is recomputed wherever it is read, from its producer's
//! formula, and the producer's kernel, its run and the buffer go (how elementwise chains fuse
//! at L1, across the kernels of one plan).
//!
//! Legal when: `t` is a temp of dtype f32 or i32 (an f16 or i8 store rounds, which inlining
//! would skip); exactly one run writes it, with a kernel that runs once and writes nothing
//! else, whose body is a plain nest `for i0 in 0..d0 { .. t[i0, ..] = value }` (loops over the
//! whole extent of each dimension, `let`s allowed, one store); every later run that reads `t`
//! only reads it, runs a kernel used once, and no run between the producer and the last reader
//! writes a buffer the producer reads. Each load `t[e0, ..]` becomes `value` with `i0 := e0`,
//! ...; the buffers the producer reads become parameters of the readers that lack them.

use crate::handle::quoted;
use ekb_ir::diag::did_you_mean;
use ekb_ir::l1::visit::{defined_names, mutate_expr, substitute, Mutator};
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
        let role = if decl.role == BufferRole::Input { "an input" } else { "an output" };
        return Err(Diagnostic::error(format!(
            "`{buf}` is {role} of module {}: only temps can be inlined",
            m.name
        )));
    }
    if !matches!(decl.ty.dtype, DType::F32 | DType::I32) {
        return Err(Diagnostic::error(format!(
            "`{buf}` is {}: storing into it rounds, which inlining would skip",
            decl.ty
        ))
        .with_hint("inline f32 and i32 temps"));
    }
    // Who writes and who reads it, by plan step.
    let access = |step: usize| -> Vec<Access> {
        let r = &m.plan[step];
        let k = m.kernel(&r.kernel).expect("the plan verifies");
        r.args.iter().zip(&k.params).filter(|(a, _)| a.name == buf).map(|(_, p)| p.access).collect()
    };
    let writers: Vec<usize> =
        (0..m.plan.len()).filter(|&s| access(s).iter().any(|a| *a != Access::In)).collect();
    let [pw] = writers.as_slice() else {
        return Err(Diagnostic::error(format!("`{buf}` is written by {} runs of the plan", writers.len()))
            .with_hint("inline a temp that exactly one run produces"));
    };
    let pw = *pw;
    let runs_of = |name: &str| m.plan.iter().filter(|r| r.kernel == name).count();
    let producer = m.kernel(&m.plan[pw].kernel).expect("the plan verifies").clone();
    if runs_of(&producer.name) != 1 {
        return Err(Diagnostic::error(format!("kernel {} runs more than once in the plan", producer.name))
            .with_hint("inline a temp whose producer kernel runs once"));
    }
    if access(pw) != [Access::Out] || producer.params.iter().filter(|p| p.access != Access::In).count() != 1 {
        return Err(Diagnostic::error(format!(
            "kernel {} (which produces `{buf}`) reads it or writes other buffers too",
            producer.name
        ))
        .with_hint("inline a temp whose producer writes only it, as an `out` parameter"));
    }
    let out_param = producer.params.iter().find(|p| p.access == Access::Out).expect("checked").name.clone();
    let (vars, value) = plain_nest(&producer.body, &out_param, &decl.ty.shape).ok_or_else(|| {
        Diagnostic::error(format!(
            "the producer of `{buf}` (kernel {}) is not a plain loop nest storing `{out_param}[i0, ..]` once per element",
            producer.name
        ))
        .with_hint("inline before scheduling the producer: on the naive lowering each elementwise kernel is such a nest")
    })?;
    // The producer's inputs, by module buffer.
    let inputs: Vec<(String, KernelParam)> = m.plan[pw]
        .args
        .iter()
        .zip(&producer.params)
        .filter(|(_, p)| p.access == Access::In)
        .map(|(a, p)| (a.name.clone(), p.clone()))
        .collect();
    let readers: Vec<usize> = (pw + 1..m.plan.len()).filter(|&s| !access(s).is_empty()).collect();
    let last = readers.last().copied().unwrap_or(pw);
    for s in pw + 1..=last {
        let r = &m.plan[s];
        let k = m.kernel(&r.kernel).expect("the plan verifies");
        for (a, p) in r.args.iter().zip(&k.params) {
            if p.access != Access::In && inputs.iter().any(|(b, _)| *b == a.name) {
                return Err(Diagnostic::error(format!(
                    "run {s} (kernel {}) writes `{}`, which the producer of `{buf}` reads, before `{buf}` is last read",
                    k.name, a.name
                ))
                .with_hint("inline a temp whose producer's inputs stay unchanged until its last reader"));
            }
            if a.name == buf && p.access != Access::In {
                return Err(Diagnostic::error(format!("run {s} (kernel {}) writes `{buf}` too", k.name)));
            }
        }
        if readers.contains(&s) && runs_of(&k.name) != 1 {
            return Err(Diagnostic::error(format!(
                "kernel {} (which reads `{buf}`) runs more than once",
                k.name
            ))
            .with_hint("inline a temp whose readers' kernels run once each"));
        }
    }
    for &s in &readers {
        let r = &m.plan[s];
        let k = m.kernel(&r.kernel).expect("the plan verifies");
        if let Some((_, p)) = r.args.iter().zip(&k.params).find(|(a, p)| a.name == buf && p.ty != decl.ty) {
            return Err(Diagnostic::error(format!(
                "run {s} (kernel {}) reads `{buf}` as `{}`, of type {}: a view under another shape than its {}",
                k.name, p.name, p.ty, decl.ty
            ))
            .with_hint("inline a temp its readers read under its own shape"));
        }
    }
    for s in readers {
        rewrite_reader(m, s, buf, &inputs, &vars, &value);
    }
    let name = producer.name.clone();
    m.plan.remove(pw);
    m.kernels.retain(|k| k.name != name);
    m.buffers.retain(|b| b.name != buf);
    Ok(())
}

/// The loop variables (one per dimension, `None` for a dimension of extent 1 indexed by 0)
/// and the stored value with the nest's `let`s substituted, when `body` is a plain nest that
/// stores `out[i0, ..]` once per element.
pub(super) fn plain_nest(body: &[Stmt], out: &str, shape: &[usize]) -> Option<(Vec<Option<String>>, Expr)> {
    let mut lets: HashMap<String, Expr> = HashMap::new();
    let mut extents: HashMap<String, i32> = HashMap::new();
    let mut cur = body;
    loop {
        let (last, head) = cur.split_last()?;
        for s in head {
            let Stmt::Let { name, value, .. } = s else { return None };
            let v = substitute(value.clone(), &lets);
            lets.insert(name.clone(), v);
        }
        match last {
            Stmt::Loop { var, lo, hi, body, .. } => {
                let (ExprKind::Int(0), ExprKind::Int(n)) = (&lo.kind, &hi.kind) else { return None };
                extents.insert(var.clone(), *n);
                cur = body;
            }
            Stmt::Store { buf, index, value, .. } if buf.name == out && index.len() == shape.len() => {
                let mut vars = Vec::new();
                for (e, &d) in index.iter().zip(shape) {
                    match &e.kind {
                        ExprKind::Int(0) if d == 1 => vars.push(None),
                        ExprKind::Var(v) if extents.get(v) == Some(&(d as i32)) && !lets.contains_key(v) => {
                            vars.push(Some(v.clone()))
                        }
                        _ => return None,
                    }
                }
                let used: Vec<&String> = vars.iter().flatten().collect();
                let distinct = used.iter().enumerate().all(|(i, v)| !used[i + 1..].contains(v));
                if !distinct || used.len() != extents.len() {
                    return None;
                }
                let value = substitute(value.clone(), &lets);
                return (!reads(&value, out)).then_some((vars, value));
            }
            _ => return None,
        }
    }
}

fn reads(e: &Expr, buf: &str) -> bool {
    let mut found = false;
    ekb_ir::l1::visit::for_each_subexpr(e, |x| {
        found |= matches!(&x.kind, ExprKind::Load { buf: b, .. } if b.name == buf)
    });
    found
}

/// Rewrites the reader run at plan step `s`: its loads of `buf` become `value`, the producer's
/// inputs become its parameters where they are not already, and `buf` leaves its parameters.
fn rewrite_reader(
    m: &mut Module,
    s: usize,
    buf: &str,
    inputs: &[(String, KernelParam)],
    vars: &[Option<String>],
    value: &Expr,
) {
    let run = m.plan[s].clone();
    let ki = m.kernels.iter().position(|k| k.name == run.kernel).expect("the plan verifies");
    let k = &mut m.kernels[ki];
    // The reader's parameters bound to `buf`, and the producer's inputs by reader parameter.
    let targets: Vec<String> =
        run.args.iter().zip(&k.params).filter(|(a, _)| a.name == buf).map(|(_, p)| p.name.clone()).collect();
    let mut taken = defined_names(k);
    let mut rename: HashMap<String, String> = HashMap::new();
    let mut new_args = run.args.clone();
    for (module_buf, pp) in inputs {
        // (A parameter viewing the buffer under another shape is not the same operand.)
        let have = run
            .args
            .iter()
            .zip(&k.params)
            .find(|(a, p)| a.name == *module_buf && p.access == Access::In && p.ty == pp.ty);
        let name = match have {
            Some((_, p)) => p.name.clone(),
            None => {
                let mut name = module_buf.clone();
                let mut i = 1;
                while taken.contains(&name) || ekb_ir::l1::parse::KEYWORDS.contains(&name.as_str()) {
                    name = format!("{module_buf}_{i}");
                    i += 1;
                }
                taken.push(name.clone());
                k.params.push(KernelParam {
                    name: name.clone(),
                    ty: pp.ty.clone(),
                    access: Access::In,
                    span: Span::NONE,
                });
                new_args.push(Name::new(module_buf.clone()));
                name
            }
        };
        rename.insert(pp.name.clone(), name);
    }
    let renamed = Rename(&rename).expr(value.clone());
    let mut inline = Inline { targets: &targets, vars, value: &renamed };
    k.body = inline.block(std::mem::take(&mut k.body));
    // Drop `buf` from the parameters and the run.
    let keep: Vec<bool> = k.params.iter().map(|p| !targets.contains(&p.name)).collect();
    let mut it = keep.iter();
    k.params.retain(|_| *it.next().expect("one flag per parameter"));
    let mut it = keep.iter();
    new_args.retain(|_| *it.next().expect("one flag per argument"));
    m.plan[s].args = new_args;
}

/// Renames the buffers of loads.
struct Rename<'a>(&'a HashMap<String, String>);

impl Mutator for Rename<'_> {
    fn expr(&mut self, e: Expr) -> Expr {
        let e = mutate_expr(self, e);
        match e.kind {
            ExprKind::Load { buf, index } => {
                let name = self.0.get(&buf.name).cloned().unwrap_or(buf.name);
                Expr { kind: ExprKind::Load { buf: Name { name, span: buf.span }, index }, span: e.span }
            }
            kind => Expr { kind, span: e.span },
        }
    }
}

/// Replaces loads of the target parameters by the producer's value at their indices.
struct Inline<'a> {
    targets: &'a [String],
    vars: &'a [Option<String>],
    value: &'a Expr,
}

impl Mutator for Inline<'_> {
    fn expr(&mut self, e: Expr) -> Expr {
        let e = mutate_expr(self, e);
        match &e.kind {
            ExprKind::Load { buf, index } if self.targets.contains(&buf.name) => {
                let map: HashMap<String, Expr> = self
                    .vars
                    .iter()
                    .zip(index)
                    .filter_map(|(v, i)| v.as_ref().map(|v| (v.clone(), i.clone())))
                    .collect();
                substitute(self.value.clone(), &map)
            }
            _ => e,
        }
    }
}
