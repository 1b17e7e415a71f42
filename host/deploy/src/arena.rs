//! The temp arena of a CPU payload: the manifest's temporaries, and its parameters that only
//! prepare steps read (`Manifest::consumed_params`), placed by the L1 memory plan
//! (`ekb_ir::l1::arena::place`) over the manifest's own plan, so that the runtime reserves one
//! allocation for all of them where it used to reserve one per temp (and one per parameter).
//!
//! What it must keep true: the arena satisfies the manifest's validation (temps that share bytes
//! are never live at the same step, offsets aligned, every temp inside), because its lifetimes
//! are the manifest's ([`Manifest::lifetimes`], the rule the validation checks); GPU payloads
//! get none (their runtimes allocate every buffer apart), nor do prepared temps (a prepare step
//! writes them; the runtime protects their pages after it, so they live apart).

use ekb_ir::l1::arena::{place, TempLife};
use ekb_wire::payload::{Arena, ArenaSlot, Backend, Manifest, Role};

/// Every temp and consumed parameter of `m` placed in one arena, in buffer order (the L1 plan's
/// declaration order, so the same placement as `ekb_ir::l1::arena::plan`); `None` for a GPU
/// payload or one without either.
pub fn plan(m: &Manifest) -> Option<Arena> {
    if m.backend != Backend::CpuLlvm {
        return None;
    }
    let lives = m.lifetimes();
    let prepared = m.prepared();
    let consumed = m.consumed_params();
    let temps: Vec<(usize, TempLife)> = m
        .buffers
        .iter()
        .enumerate()
        .filter(|&(i, b)| (b.role == Role::Temp && !prepared[i]) || consumed[i])
        .map(|(i, b)| (i, TempLife { bytes: b.size_bytes().unwrap_or(u64::MAX), live: lives[i] }))
        .collect();
    if temps.is_empty() {
        return None;
    }
    let placement = place(&temps.iter().map(|(_, t)| *t).collect::<Vec<_>>());
    let slots = temps
        .iter()
        .zip(placement.offsets)
        .map(|((i, _), offset)| ArenaSlot { buffer: *i as u32, offset })
        .collect();
    Some(Arena { bytes: placement.arena_bytes, slots })
}
