//! Loop handles: from a [`LoopRef`] (`kernel.var`, `kernel.var@n`) to the loop statement, and
//! back to the statements around it.
//!
//! A handle names a loop by its kernel and variable, so it survives any rewrite that keeps that
//! loop (a split of another loop, a reorder around it). A [`Path`] is where a statement sits in
//! its kernel's body right now: the index in each enclosing block, outermost first; it is valid
//! only until the kernel changes.

use crate::trace::LoopRef;
use ekb_ir::diag::did_you_mean;
use ekb_ir::l1::visit::for_each_stmt;
use ekb_ir::l1::{Kernel, Module, Stmt};
use ekb_ir::Diagnostic;

/// Where a statement sits: `(index in the block, which child block of that statement to enter)`
/// for each enclosing statement, then the index in the innermost block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Path {
    pub outer: Vec<(usize, usize)>,
    pub index: usize,
}

/// The child blocks of a statement: a loop's or launch's body, an `if`'s two branches.
pub fn children(s: &Stmt) -> Vec<&Vec<Stmt>> {
    match s {
        Stmt::Loop { body, .. } | Stmt::Launch { body, .. } => vec![body],
        Stmt::If { then_body, else_body, .. } => vec![then_body, else_body],
        Stmt::Let { .. } | Stmt::Store { .. } | Stmt::Alloc { .. } | Stmt::Barrier { .. } => Vec::new(),
    }
}

fn children_mut(s: &mut Stmt) -> Vec<&mut Vec<Stmt>> {
    match s {
        Stmt::Loop { body, .. } | Stmt::Launch { body, .. } => vec![body],
        Stmt::If { then_body, else_body, .. } => vec![then_body, else_body],
        Stmt::Let { .. } | Stmt::Store { .. } | Stmt::Alloc { .. } | Stmt::Barrier { .. } => Vec::new(),
    }
}

impl Path {
    /// The block holding the statement.
    pub fn block<'a>(&self, body: &'a [Stmt]) -> &'a [Stmt] {
        let mut cur = body;
        for &(i, c) in &self.outer {
            cur = children(&cur[i])[c];
        }
        cur
    }

    pub fn block_mut<'a>(&self, body: &'a mut Vec<Stmt>) -> &'a mut Vec<Stmt> {
        let mut cur = body;
        for &(i, c) in &self.outer {
            cur = children_mut(&mut cur[i]).swap_remove(c);
        }
        cur
    }

    pub fn get<'a>(&self, body: &'a [Stmt]) -> &'a Stmt {
        &self.block(body)[self.index]
    }

    /// The statements enclosing this one, outermost first.
    pub fn enclosing<'a>(&self, body: &'a [Stmt]) -> Vec<&'a Stmt> {
        let mut out = Vec::new();
        let mut cur = body;
        for &(i, c) in &self.outer {
            out.push(&cur[i]);
            cur = children(&cur[i])[c];
        }
        out
    }

    /// Whether `self` lies inside the statement at `o`.
    pub fn inside(&self, o: &Path) -> bool {
        self.outer.len() > o.outer.len()
            && self.outer[..o.outer.len()] == o.outer[..]
            && self.outer[o.outer.len()].0 == o.index
    }
}

/// Every statement of a body with its path, in program order (a statement before the
/// statements nested in it).
pub fn statements(body: &[Stmt]) -> Vec<(&Stmt, Path)> {
    fn walk<'a>(body: &'a [Stmt], outer: &mut Vec<(usize, usize)>, out: &mut Vec<(&'a Stmt, Path)>) {
        for (i, s) in body.iter().enumerate() {
            out.push((s, Path { outer: outer.clone(), index: i }));
            for (c, child) in children(s).into_iter().enumerate() {
                outer.push((i, c));
                walk(child, outer, out);
                outer.pop();
            }
        }
    }
    let mut out = Vec::new();
    walk(body, &mut Vec::new(), &mut out);
    out
}

/// Every loop of a body with its path, in program order.
pub fn loops(body: &[Stmt]) -> Vec<(String, Path)> {
    statements(body)
        .into_iter()
        .filter_map(|(s, p)| match s {
            Stmt::Loop { var, .. } => Some((var.clone(), p)),
            _ => None,
        })
        .collect()
}

/// The kernel a handle names.
pub fn kernel_index(m: &Module, name: &str) -> Result<usize, Diagnostic> {
    m.kernels.iter().position(|k| k.name == name).ok_or_else(|| {
        let mut d = Diagnostic::error(format!("module {} has no kernel `{name}`", m.name))
            .with_expected(format!("one of {}", quoted(m.kernels.iter().map(|k| k.name.as_str()))));
        d.hint = did_you_mean(name, m.kernels.iter().map(|k| k.name.as_str()));
        d
    })
}

/// The loop a handle names, in kernel `k`.
pub fn find(k: &Kernel, r: &LoopRef) -> Result<Path, Diagnostic> {
    let all = loops(&k.body);
    let same: Vec<&Path> = all.iter().filter(|(v, _)| *v == r.var).map(|(_, p)| p).collect();
    match (same.len(), r.nth) {
        (1, None | Some(1)) => Ok(same[0].clone()),
        (0, _) => {
            let names: Vec<&str> = all.iter().map(|(v, _)| v.as_str()).collect();
            let mut is_let = false;
            for_each_stmt(&k.body, &mut |s| is_let |= matches!(s, Stmt::Let { name, .. } if *name == r.var));
            let msg = if is_let {
                format!(
                    "`{}` is not a loop of kernel {} (it is a `let`, perhaps left by an earlier step)",
                    r.var, k.name
                )
            } else {
                format!("kernel {} has no loop `{}`", k.name, r.var)
            };
            let mut d = Diagnostic::error(msg).with_expected(if names.is_empty() {
                format!("kernel {} has no loops", k.name)
            } else {
                format!("one of its loops: {}", quoted(names.iter().copied()))
            });
            d.hint = did_you_mean(&r.var, names);
            Err(d)
        }
        (n, None) => Err(Diagnostic::error(format!("kernel {} has {n} loops named `{}`", k.name, r.var))
            .with_hint(format!(
                "say which: `{}.{}@1` .. `{}.{}@{n}`, in program order",
                k.name, r.var, k.name, r.var
            ))),
        (n, Some(i)) if i as usize <= n => Ok(same[i as usize - 1].clone()),
        (n, Some(i)) => Err(Diagnostic::error(format!(
            "kernel {} has {n} loop{} named `{}`, not {i}",
            k.name,
            if n == 1 { "" } else { "s" },
            r.var
        ))
        .with_expected(format!("`@1` .. `@{n}`"))),
    }
}

/// `a`, `b`, `c` for a message.
pub fn quoted<'a>(names: impl Iterator<Item = &'a str>) -> String {
    names.map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ")
}
