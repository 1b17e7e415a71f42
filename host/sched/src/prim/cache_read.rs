//! `cache_read b at K.v -> c local|shared`: each iteration of loop `v` first copies the region
//! of `b` its body reads (a box of literal extents at an offset the iteration fixes, see
//! `stage`) into the new allocation `c`, and its body then reads `c` at the offset indices.
//!
//! `local`: `alloc c: .. local` and the copy loops (`c_d` over dimension `d`, none where the
//! region is one element wide) at the top of the body.
//! `shared` (inside a `launch` only): `alloc c: .. shared` at the top of the launch, and the
//! block's threads copy the region together (thread `t` takes the elements `t`, `t + T`, ..,
//! flattened), with a `barrier` after the copy and one at the end of the body, before the next
//! iteration copies over what others may still read; the region counts the block's threads as
//! varying, and its offset must be the same for all of them (the barriers need the loop's
//! control flow uniform, which the verifier checks).
//!
//! Legal when: `v` is not a `vectorize` loop (its body stays innermost); the body of `v` reads
//! `b` and does not write it; inside a `launch` the kernel never writes `b` (another thread
//! could change it between the copy and a read), and inside a `parallel` loop that loop's body
//! does not either; along each dimension every index is the same fixed part plus a part whose
//! range is known, with no term mixing the two, and no index reads memory; the region holds at
//! most 16 KiB (`local`) or 48 KiB (`shared`). Elements of the box outside `b` (a padded
//! convolution's border) are not copied: they are never read.

use super::stage;
use super::{check_new_name, locate, parts};
use crate::trace::LoopRef;
use ekb_ir::l1::build::{Names, E};
use ekb_ir::l1::visit::defined_names;
use ekb_ir::l1::{LaunchDim, LoopKind, Module, Scope, Stmt};
use ekb_ir::{Diagnostic, Span, TensorType};

pub fn apply(m: &mut Module, buf: &str, at: &LoopRef, cache: &str, scope: Scope) -> Result<(), Diagnostic> {
    let (k, path) = locate(m, at)?;
    check_new_name(k, cache)?;
    let kname = k.name.clone();
    let ty = stage::buffer_type(k, &path, buf)?;
    stage::not_vectorized(k, &path)?;
    let enclosing = path.enclosing(&k.body);
    let launch = enclosing.iter().position(|s| matches!(s, Stmt::Launch { .. }));
    let lp = parts(path.get(&k.body));
    if scope == Scope::Shared && launch.is_none() {
        return Err(Diagnostic::error(format!(
            "loop `{}` of kernel {kname} is not inside a `launch`: `shared` memory belongs to a GPU block",
            at.var
        ))
        .with_hint(format!(
            "stage it in the thread's own memory: `cache_read {buf} at {at} -> {cache} local`"
        )));
    }
    if stage::stores(lp.body, buf) {
        return Err(Diagnostic::error(format!("loop `{}` of kernel {kname} writes `{buf}`", at.var))
            .with_hint(format!(
                "stage a buffer the loop writes with `cache_write {buf} at {at} -> {cache} local`"
            )));
    }
    if launch.is_some() && stage::stores(&k.body, buf) {
        return Err(Diagnostic::error(format!(
            "kernel {kname} writes `{buf}` inside its `launch`: another thread may change it between the copy and a read"
        ))
        .with_hint("stage a buffer the GPU kernel only reads (an `in` parameter)"));
    }
    if let Some(Stmt::Loop { var, .. }) = enclosing
        .iter()
        .find(|s| matches!(s, Stmt::Loop { kind: LoopKind::Parallel, body, .. } if stage::stores(body, buf)))
    {
        return Err(Diagnostic::error(format!(
            "parallel loop `{var}` around loop `{}` (kernel {kname}) writes `{buf}`: another thread may change it \
             between the copy and a read",
            at.var
        ))
        .with_hint("stage a buffer that the threads only read"));
    }
    let threads: Option<Vec<LaunchDim>> = match (scope, launch) {
        (Scope::Shared, Some(i)) => match enclosing[i] {
            Stmt::Launch { block, .. } => Some(block.clone()),
            _ => unreachable!("a launch"),
        },
        _ => None,
    };
    let region = stage::region(k, &path, buf, false, threads.as_deref())?;
    stage::check_size(&region, buf, ty.dtype.size_bytes(), scope == Scope::Shared, &kname)?;
    let mut names = Names::default();
    defined_names(k).iter().for_each(|n| names.reserve(n));
    names.reserve(cache);
    let env = stage::env_at(k, &path);
    let staged = TensorType::new(ty.dtype, region.shape());
    let alloc = Stmt::Alloc { name: cache.to_string(), ty: staged.clone(), scope, span: Span::NONE };
    let store = |c: &[E], at: &[E]| -> Stmt {
        let cbuf = ekb_ir::l1::build::Buf::new(cache, staged.clone());
        let bbuf = ekb_ir::l1::build::Buf::new(buf, ty.clone());
        cbuf.store(c, bbuf.load(at))
    };
    let mut body = Vec::new();
    match &threads {
        None => {
            body.push(alloc.clone());
            let vars = stage::loop_names(&region, &mut names, cache);
            body.push(stage::nest(&region, &vars, &env, &ty.shape, |c| store(c, &region.element(c))));
        }
        Some(block) => {
            body.push(stage::shared_copy(&region, &mut names, cache, &env, &ty.shape, block, store));
            body.push(Stmt::Barrier { span: Span::NONE });
        }
    }
    body.extend(stage::redirect(lp.body.to_vec(), buf, cache, &region, false));
    if threads.is_some() {
        body.push(Stmt::Barrier { span: Span::NONE });
    }
    let block = path.block_mut(&mut k.body);
    let Stmt::Loop { body: old, .. } = &mut block[path.index] else { unreachable!("a loop") };
    *old = body;
    if let Some(i) = launch.filter(|_| scope == Scope::Shared) {
        let at = crate::handle::Path { outer: path.outer[..i].to_vec(), index: path.outer[i].0 };
        let Stmt::Launch { body, .. } = &mut at.block_mut(&mut k.body)[at.index] else {
            unreachable!("a launch")
        };
        body.insert(0, alloc);
    }
    Ok(())
}
