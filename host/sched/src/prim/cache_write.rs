//! `cache_write b at K.v -> c local|shared`: each iteration of loop `v` works on a copy of the
//! region of `b` its body touches (a box of literal extents at an offset the iteration fixes,
//! see `stage`), its body reading and writing `c` at the offset indices, and the region copied
//! back at its end. Copying in first keeps the elements the body reads before writing, and
//! those it never writes, as they were; so every element of `b` ends the iteration as it would
//! have, and the body reads what it would have read.
//!
//! `local`: `alloc c: .. local` at the top of the body, the region copied in (loops `c_d` as
//! for `cache_read`) and back (loops of the same names).
//! `shared` (inside a `launch` only): `alloc c: .. shared` at the top of the launch; the region
//! is the block's (its thread variables vary in it, as for `cache_read .. shared`), the block's
//! threads copy it in together (thread `t` takes the flattened elements `t`, `t + T`, ..), a
//! `barrier`, the body, a `barrier`, the threads copy it back together, and a last `barrier`
//! before the next iteration copies over what others may still be copying back.
//!
//! Legal when: the body of `v` writes `b`; `v` is not a `vectorize` loop; the region is a box of
//! literal extents (as for `cache_read`, over the loads and stores of `b`) of at most 16 KiB
//! (`local`) or 48 KiB (`shared`). `local`: `v` is outside any `launch` (threads' regions could
//! overlap), and every `parallel` loop around `v`, and `v` itself, still provably keeps its
//! iterations on distinct elements of `b` with the copies (a box that two iterations share would
//! be copied back by both). `shared`: `v` is inside a `launch`; every access of `b` in the kernel
//! is in the body of `v` (another thread could touch the box between the copies); and the boxes
//! of distinct blocks provably do not overlap (the dependence analysis over the grid and block
//! variables pins the grid variables by the copy back's index; each block copies back its whole
//! box, so a shared element would be written back by two blocks at once). The barriers need the
//! loop's control flow uniform, which the verifier checks.

use super::stage;
use super::{check_new_name, locate, parts};
use crate::handle::Path;
use crate::trace::LoopRef;
use ekb_ir::l1::analysis::access::accesses;
use ekb_ir::l1::analysis::deps::{dependences, BandLoop};
use ekb_ir::l1::analysis::interval::Interval;
use ekb_ir::l1::build::{Buf, Names};
use ekb_ir::l1::visit::defined_names;
use ekb_ir::l1::{Kernel, LaunchDim, Module, Scope, Stmt};
use ekb_ir::{Diagnostic, Span, TensorType};

pub fn apply(m: &mut Module, buf: &str, at: &LoopRef, cache: &str, scope: Scope) -> Result<(), Diagnostic> {
    let (k, path) = locate(m, at)?;
    check_new_name(k, cache)?;
    let kname = k.name.clone();
    let ty = stage::buffer_type(k, &path, buf)?;
    stage::not_vectorized(k, &path)?;
    let launch = path.enclosing(&k.body).iter().position(|s| matches!(s, Stmt::Launch { .. }));
    match (scope, launch) {
        (Scope::Local, Some(_)) => {
            return Err(Diagnostic::error(format!("loop `{}` of kernel {kname} is inside a `launch`", at.var))
                .with_hint(format!(
                    "stage the results of a GPU kernel's threads per block with `cache_write {buf} at {at} -> {cache} shared`, \
                     or before binding, on the CPU loop nest"
                )))
        }
        (Scope::Shared, None) => {
            return Err(Diagnostic::error(format!(
                "loop `{}` of kernel {kname} is not inside a `launch`: `shared` memory belongs to a GPU block",
                at.var
            ))
            .with_hint(format!("stage it in the thread's own memory: `cache_write {buf} at {at} -> {cache} local`")))
        }
        _ => {}
    }
    let lp = parts(path.get(&k.body));
    if !stage::stores(lp.body, buf) {
        return Err(Diagnostic::error(format!("loop `{}` of kernel {kname} does not write `{buf}`", at.var))
            .with_hint(format!(
                "stage a buffer the loop only reads with `cache_read {buf} at {at} -> {cache} {}`",
                scope.name()
            )));
    }
    let block_dims: Option<Vec<LaunchDim>> = launch.map(|i| match path.enclosing(&k.body)[i] {
        Stmt::Launch { block, .. } => block.clone(),
        _ => unreachable!("a launch"),
    });
    let count = |body| accesses(body).iter().filter(|a| a.buf == buf).count();
    if launch.is_some() && count(&k.body) != count(lp.body) {
        return Err(Diagnostic::error(format!(
            "kernel {kname} accesses `{buf}` outside loop `{}`: another thread may touch the block's copy of it between \
             the copy in and the copy back",
            at.var
        ))
        .with_hint("stage a buffer at a loop that holds every access of it in the launch"));
    }
    let region = stage::region(k, &path, buf, true, block_dims.as_deref())?;
    stage::check_size(&region, buf, ty.dtype.size_bytes(), scope == Scope::Shared, &kname)?;
    let mut names = Names::default();
    defined_names(k).iter().for_each(|n| names.reserve(n));
    names.reserve(cache);
    let env = stage::env_at(k, &path);
    let staged = Buf::new(cache, TensorType::new(ty.dtype, region.shape()));
    let orig = Buf::new(buf, ty.clone());
    let alloc = Stmt::Alloc { name: cache.to_string(), ty: staged.ty.clone(), scope, span: Span::NONE };
    let copy_in = |c: &[_], at: &[_]| staged.store(c, orig.load(at));
    let copy_back = |c: &[_], at: &[_]| orig.store(at, staged.load(c));
    let redirected = stage::redirect(lp.body.to_vec(), buf, cache, &region, true);
    let body = match &block_dims {
        None => {
            // One set of names for both copies: the dependence analysis then sees the copy back
            // store the very elements the copy in loaded.
            let vars = stage::loop_names(&region, &mut names, cache);
            let mut body = vec![alloc.clone()];
            body.push(stage::nest(&region, &vars, &env, &ty.shape, |c| copy_in(c, &region.element(c))));
            body.extend(redirected);
            body.push(stage::nest(&region, &vars, &env, &ty.shape, |c| copy_back(c, &region.element(c))));
            body
        }
        Some(block) => {
            let barrier = Stmt::Barrier { span: Span::NONE };
            let mut body =
                vec![stage::shared_copy(&region, &mut names, cache, &env, &ty.shape, block, copy_in)];
            body.push(barrier.clone());
            body.extend(redirected);
            body.push(barrier.clone());
            body.push(stage::shared_copy(&region, &mut names, cache, &env, &ty.shape, block, copy_back));
            body.push(barrier);
            body
        }
    };
    let block = path.block_mut(&mut k.body);
    let Stmt::Loop { body: old, .. } = &mut block[path.index] else { unreachable!("a loop") };
    *old = body;
    let step = format!("staging `{buf}` at loop `{}`", at.var);
    match launch {
        None => stage::check_parallel(k, &path, buf, &step),
        Some(i) => {
            let at = Path { outer: path.outer[..i].to_vec(), index: path.outer[i].0 };
            let Stmt::Launch { body, .. } = &mut at.block_mut(&mut k.body)[at.index] else {
                unreachable!("a launch")
            };
            body.insert(0, alloc);
            check_blocks(k, &at, buf, &step)
        }
    }
}

/// After staging in `shared` memory, each block of the launch at `at` copies its box of `buf`
/// back whole: the boxes of two blocks must not overlap. The copy back's store, paired with
/// itself over the grid and block variables, must pin every grid variable (two stores of one
/// element are then in one block).
fn check_blocks(k: &Kernel, at: &Path, buf: &str, step: &str) -> Result<(), Diagnostic> {
    let Stmt::Launch { grid, block, body, .. } = at.get(&k.body) else { unreachable!("a launch") };
    let band: Vec<BandLoop> = grid
        .iter()
        .chain(block)
        .map(|d| BandLoop { var: d.var.clone(), range: Some(Interval::new(0, i64::from(d.extent) - 1)) })
        .collect();
    let in_grid = |v: &String| grid.iter().any(|g| g.var == *v);
    let shared = dependences(body, &band)
        .into_iter()
        .find(|d| d.buf == buf && d.first == d.second && d.carried_by.iter().any(in_grid));
    match shared {
        None => Ok(()),
        Some(d) => Err(Diagnostic::error(format!(
            "{step} would let two blocks of the launch (kernel {}) copy back the same element of `{buf}`: `{}` is not \
             proven to stay in one block's box across `{}`",
            k.name,
            d.first,
            d.carried_by.iter().filter(|v| in_grid(v)).cloned().collect::<Vec<_>>().join("`, `")
        ))
        .with_hint(format!(
            "stage at a loop where each block's box of `{buf}` is its own (the blocks' offsets a multiple of the box's \
             extent, as after `split` and `bind`)"
        ))),
    }
}
