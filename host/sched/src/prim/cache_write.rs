//! `cache_write b at K.v -> c local`: each iteration of loop `v` works on a copy of the region
//! of `b` its body touches: `alloc c: .. local` at the top of the body, the region copied in
//! (loops `c_d` as for `cache_read`), the body reading and writing `c` at the offset indices,
//! and the region copied back (loops of the same names) at its end. Copying in first keeps the
//! elements the body reads before writing, and those it never writes, as they were; so every
//! element of `b` ends the iteration as it would have, and the body reads what it would have
//! read.
//!
//! Legal when: the body of `v` writes `b`; `v` is not a `vectorize` loop and is outside any
//! `launch` (threads' regions could overlap); the region is a box of literal extents (as for
//! `cache_read`, over the loads and stores of `b`) of at most 16 KiB; and every `parallel` loop
//! around `v`, and `v` itself, still provably keeps its iterations on distinct elements of `b`
//! with the copies (a box that two iterations share would be copied back by both). Only
//! `local` staging: a block's threads writing one `shared` copy would need the copy back split
//! between them.

use super::stage;
use super::{check_new_name, locate, parts};
use crate::trace::LoopRef;
use ekb_ir::l1::build::{Buf, Names};
use ekb_ir::l1::visit::defined_names;
use ekb_ir::l1::{Module, Scope, Stmt};
use ekb_ir::{Diagnostic, Span, TensorType};

pub fn apply(m: &mut Module, buf: &str, at: &LoopRef, cache: &str, scope: Scope) -> Result<(), Diagnostic> {
    if scope == Scope::Shared {
        return Err(Diagnostic::error(format!("`cache_write` stages `{buf}` in `local` memory only"))
            .with_hint(format!("write `cache_write {buf} at {at} -> {cache} local`")));
    }
    let (k, path) = locate(m, at)?;
    check_new_name(k, cache)?;
    let kname = k.name.clone();
    let ty = stage::buffer_type(k, &path, buf)?;
    stage::not_vectorized(k, &path)?;
    if path.enclosing(&k.body).iter().any(|s| matches!(s, Stmt::Launch { .. })) {
        return Err(Diagnostic::error(format!("loop `{}` of kernel {kname} is inside a `launch`", at.var))
            .with_hint("stage the results of a GPU kernel's threads before binding, on the CPU loop nest"));
    }
    let lp = parts(path.get(&k.body));
    if !stage::stores(lp.body, buf) {
        return Err(Diagnostic::error(format!("loop `{}` of kernel {kname} does not write `{buf}`", at.var))
            .with_hint(format!(
                "stage a buffer the loop only reads with `cache_read {buf} at {at} -> {cache} local`"
            )));
    }
    let region = stage::region(k, &path, buf, true, None)?;
    stage::check_size(&region, buf, ty.dtype.size_bytes(), false, &kname)?;
    let mut names = Names::default();
    defined_names(k).iter().for_each(|n| names.reserve(n));
    names.reserve(cache);
    let env = stage::env_at(k, &path);
    let staged = Buf::new(cache, TensorType::new(ty.dtype, region.shape()));
    let orig = Buf::new(buf, ty.clone());
    let mut body =
        vec![Stmt::Alloc { name: cache.to_string(), ty: staged.ty.clone(), scope, span: Span::NONE }];
    // One set of names for both copies: the dependence analysis then sees the copy back store
    // the very elements the copy in loaded.
    let vars = stage::loop_names(&region, &mut names, cache);
    body.push(stage::nest(&region, &vars, &env, &ty.shape, |c| {
        staged.store(c, orig.load(&region.element(c)))
    }));
    body.extend(stage::redirect(lp.body.to_vec(), buf, cache, &region, true));
    body.push(stage::nest(&region, &vars, &env, &ty.shape, |c| {
        orig.store(&region.element(c), staged.load(c))
    }));
    let block = path.block_mut(&mut k.body);
    let Stmt::Loop { body: old, .. } = &mut block[path.index] else { unreachable!("a loop") };
    *old = body;
    stage::check_parallel(k, &path, buf, &format!("staging `{buf}` at loop `{}`", at.var))
}
