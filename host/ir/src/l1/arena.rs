//! Memory planning: a module's temporaries placed at byte offsets of one arena, so that temps
//! that are never live at the same plan step share bytes.
//!
//! **Liveness** is the definition of [`super::memory`]: a temp is live from the first plan step
//! naming it to the last one, both included (a step that reads one temp and writes another holds
//! both); a temp no step names is never live. A temp a `prepare` step writes (a prepared temp)
//! lives on to the last step: the executions after the first read it without the prepare steps
//! running again. Inputs, parameters, outputs and prepared temps are not placed: they live for
//! the whole program (the host fills inputs before the plan and reads outputs after it; the
//! runtime makes prepared temps read-only after the prepare steps, a page protection that a
//! shared arena could not give one temp alone). The exception is a **consumed parameter**: an
//! `input` buffer that only `prepare` steps read (a weight the prepare steps pack into the
//! layout the execution reads). It is live from the first to the last prepare step naming it,
//! so the execution's temps take its bytes afterwards, and the runtime writes it again each time
//! the parameters are bound, before the prepare steps run.
//!
//! **Placement** ([`place`]) is greedy by size, largest first (ties: earlier first use, then
//! position): each temp goes to the best-fitting gap (the smallest one that holds it) between the
//! temps already placed whose lifetimes intersect its own, or after the last of them. Offsets are
//! multiples of [`ARENA_ALIGN`], the alignment the kernel ABI promises every buffer. The arena is
//! never smaller than [`live_bound`] (the most bytes live at one step) and never larger than the
//! sum of the temps, each rounded up to the alignment.
//!
//! **In-place reuse** (an output written into the bytes of an input whose last read is by the
//! same kernel) is not done: the kernel ABI (`docs/abi.md`) declares every buffer parameter
//! `noalias` (`restrict` in OpenCL and CUDA C), so two arguments of one step sharing bytes would
//! break what the compiled code assumes, whatever the access analyses prove about its indices.
//!
//! What it must keep true: two temps whose byte ranges `[offset, offset + bytes)` intersect are
//! never live at the same step; every temp lies inside the arena; every offset is a multiple of
//! [`ARENA_ALIGN`]. `ekb_wire`'s manifest validation checks the same invariant on every payload.

use super::ast::{BufferDecl, BufferRole, Module};
use super::memory::{kernel_stack, type_bytes};

/// Alignment of every temp's offset in the arena (the kernel ABI's buffer alignment), as the
/// payload format defines it.
pub use ekb_wire::payload::ARENA_ALIGN;

/// A temp to place: its size and the steps it is live at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TempLife {
    pub bytes: u64,
    /// First and last plan step naming it (both included); `None`: never live.
    pub live: Option<(usize, usize)>,
}

impl TempLife {
    fn overlaps(&self, other: &TempLife) -> bool {
        match (self.live, other.live) {
            (Some((a0, a1)), Some((b0, b1))) => a0 <= b1 && b0 <= a1,
            _ => false,
        }
    }
}

/// Where each temp lies in the arena, and the arena's size.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placement {
    /// Byte offset of each temp, in the order given to [`place`].
    pub offsets: Vec<u64>,
    /// The arena's size: the end of the temp that ends last (0 without temps).
    pub arena_bytes: u64,
}

fn align_up(bytes: u64) -> u64 {
    bytes.div_ceil(ARENA_ALIGN).saturating_mul(ARENA_ALIGN)
}

/// Places `temps` in one arena (see the module header). A temp that is never live, or holds no
/// bytes, goes to offset 0 (the arena holds it, sharing bytes with the others: it is never live
/// with them).
pub fn place(temps: &[TempLife]) -> Placement {
    let mut order: Vec<usize> = (0..temps.len()).collect();
    order.sort_by_key(|&i| (std::cmp::Reverse(temps[i].bytes), temps[i].live.map(|(first, _)| first), i));
    let mut offsets = vec![0u64; temps.len()];
    // (offset, end) of the temps placed so far, by index into `temps`.
    let mut placed: Vec<usize> = Vec::new();
    for i in order {
        let t = &temps[i];
        if t.bytes == 0 || t.live.is_none() {
            continue;
        }
        let mut rivals: Vec<(u64, u64)> = placed
            .iter()
            .filter(|&&j| temps[j].overlaps(t))
            .map(|&j| (offsets[j], offsets[j].saturating_add(temps[j].bytes)))
            .collect();
        rivals.sort_unstable();
        // The smallest gap that holds the temp, else the end of the last rival.
        let mut best: Option<(u64, u64)> = None;
        let mut free_from = 0u64;
        for (start, end) in rivals {
            if start > free_from && start - free_from >= t.bytes {
                let gap = start - free_from;
                if best.is_none_or(|(g, _)| gap < g) {
                    best = Some((gap, free_from));
                }
            }
            free_from = free_from.max(align_up(end));
        }
        offsets[i] = best.map_or(free_from, |(_, at)| at);
        placed.push(i);
    }
    let arena_bytes = temps.iter().zip(&offsets).map(|(t, &o)| o.saturating_add(t.bytes)).max().unwrap_or(0);
    Placement { offsets, arena_bytes }
}

/// The most bytes of temps live at one step: no placement's arena is smaller.
pub fn live_bound(temps: &[TempLife]) -> u64 {
    let steps = temps.iter().filter_map(|t| t.live.map(|(_, last)| last + 1)).max().unwrap_or(0);
    (0..steps)
        .map(|s| {
            temps
                .iter()
                .filter(|t| t.live.is_some_and(|(first, last)| first <= s && s <= last))
                .fold(0u64, |acc, t| acc.saturating_add(t.bytes))
        })
        .max()
        .unwrap_or(0)
}

/// The lifetimes of a module's temps, in declaration order, with their names.
pub fn temp_lives(m: &Module) -> Vec<(&str, TempLife)> {
    m.buffers.iter().filter(|b| b.role == BufferRole::Temp).map(|b| (b.name.as_str(), life(m, b))).collect()
}

/// The lifetimes of a module's consumed parameters (`input` buffers that only `prepare` steps
/// read), in declaration order, with their names.
pub fn consumed_lives(m: &Module) -> Vec<(&str, TempLife)> {
    m.buffers.iter().filter(|b| is_consumed(m, b)).map(|b| (b.name.as_str(), life(m, b))).collect()
}

/// Whether `b` is an `input` buffer that some `prepare` step names and no other step does.
pub fn is_consumed(m: &Module, b: &BufferDecl) -> bool {
    let mut named = m.plan.iter().filter(|r| r.args.iter().any(|a| a.name == b.name));
    b.role == BufferRole::Input && named.clone().next().is_some() && named.all(|r| r.prepare)
}

/// Buffer `b`'s life: the first and last step naming it, or to the last step for a prepared
/// temp.
fn life(m: &Module, b: &BufferDecl) -> TempLife {
    let mut steps = m.plan.iter().enumerate().filter(|(_, r)| r.args.iter().any(|a| a.name == b.name));
    let first = steps.next().map(|(i, _)| i);
    let last = steps.next_back().map(|(i, _)| i).or(first);
    let last = if b.role == BufferRole::Temp && is_prepared(m, &b.name) {
        first.map(|_| m.plan.len() - 1)
    } else {
        last
    };
    TempLife { bytes: type_bytes(&b.ty), live: first.zip(last) }
}

/// Whether a `prepare` step of `m` names the temp `name`.
pub fn is_prepared(m: &Module, name: &str) -> bool {
    m.plan.iter().any(|r| r.prepare && r.args.iter().any(|a| a.name == name))
}

/// What a module reserves with and without the plan: every buffer allocated apart (unplanned),
/// or the temps and the consumed parameters in one arena (planned) but the prepared temps,
/// which live apart. Both add the largest stack of one kernel thread (kernels run one after
/// another), as the runtime's memory report does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Footprint {
    /// Inputs and parameters but the consumed ones.
    pub inputs_bytes: u64,
    /// The consumed parameters (only `prepare` steps read them): apart when unplanned, in the
    /// arena when planned.
    pub consumed_bytes: u64,
    pub outputs_bytes: u64,
    /// Every temp, allocated apart.
    pub temps_bytes: u64,
    /// The prepared temps, apart from the arena in either case.
    pub prepared_bytes: u64,
    /// The temps and consumed parameters placed in one arena.
    pub arena_bytes: u64,
    /// The least arena any placement needs ([`live_bound`]).
    pub arena_bound_bytes: u64,
    /// The largest local (stack) bytes of one kernel thread.
    pub stack_bytes: u64,
    /// Name and offset of every temp and consumed parameter in the arena, in declaration order.
    pub offsets: Vec<(String, u64)>,
}

impl Footprint {
    /// Inputs, outputs, every temp and consumed parameter apart, and the largest stack.
    pub fn unplanned_bytes(&self) -> u64 {
        self.fixed_bytes().saturating_add(self.temps_bytes).saturating_add(self.consumed_bytes)
    }

    /// Inputs (but the consumed parameters), outputs, the prepared temps, the arena, and the
    /// largest stack.
    pub fn planned_bytes(&self) -> u64 {
        self.fixed_bytes().saturating_add(self.prepared_bytes).saturating_add(self.arena_bytes)
    }

    fn fixed_bytes(&self) -> u64 {
        self.inputs_bytes.saturating_add(self.outputs_bytes).saturating_add(self.stack_bytes)
    }
}

/// The memory plan of a module: its temps placed ([`place`]) and its footprint either way.
pub fn plan(m: &Module) -> Footprint {
    let sum_role = |role| {
        m.buffers.iter().filter(|b| b.role == role).fold(0u64, |a, b| a.saturating_add(type_bytes(&b.ty)))
    };
    let prepared: Vec<(&str, TempLife)> =
        temp_lives(m).into_iter().filter(|(n, _)| is_prepared(m, n)).collect();
    // The arena's buffers in declaration order, as the payload's arena lists them.
    let lives: Vec<(&str, TempLife)> = m
        .buffers
        .iter()
        .filter(|b| (b.role == BufferRole::Temp && !is_prepared(m, &b.name)) || is_consumed(m, b))
        .map(|b| (b.name.as_str(), life(m, b)))
        .collect();
    let consumed_bytes = consumed_lives(m).iter().fold(0u64, |a, (_, t)| a.saturating_add(t.bytes));
    let temps: Vec<TempLife> = lives.iter().map(|(_, t)| *t).collect();
    let placement = place(&temps);
    Footprint {
        inputs_bytes: sum_role(BufferRole::Input).saturating_sub(consumed_bytes),
        consumed_bytes,
        outputs_bytes: sum_role(BufferRole::Output),
        temps_bytes: sum_role(BufferRole::Temp),
        prepared_bytes: prepared.iter().fold(0u64, |a, (_, t)| a.saturating_add(t.bytes)),
        arena_bytes: placement.arena_bytes,
        arena_bound_bytes: live_bound(&temps),
        stack_bytes: m.kernels.iter().map(|k| kernel_stack(k).bytes).max().unwrap_or(0),
        offsets: lives.iter().zip(placement.offsets).map(|((n, _), o)| (n.to_string(), o)).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn life(bytes: u64, first: usize, last: usize) -> TempLife {
        TempLife { bytes, live: Some((first, last)) }
    }

    /// The module header's invariant, checked pair by pair.
    fn assert_sound(temps: &[TempLife], p: &Placement) {
        for (i, a) in temps.iter().enumerate() {
            assert_eq!(p.offsets[i] % ARENA_ALIGN, 0, "temp {i} at {}", p.offsets[i]);
            assert!(p.offsets[i] + a.bytes <= p.arena_bytes, "temp {i} outside the arena");
            for (j, b) in temps.iter().enumerate().skip(i + 1) {
                let bytes_meet =
                    p.offsets[i] < p.offsets[j] + b.bytes && p.offsets[j] < p.offsets[i] + a.bytes;
                assert!(
                    !(bytes_meet && a.overlaps(b)),
                    "temps {i} and {j} share bytes while both live: {p:?}"
                );
            }
        }
    }

    #[test]
    fn disjoint_lifetimes_share_bytes_and_overlapping_ones_do_not() {
        // A chain: t0 at steps 0-1, t1 at 1-2, t2 at 2-3. t0 and t2 never meet.
        let temps = [life(256, 0, 1), life(256, 1, 2), life(256, 2, 3)];
        let p = place(&temps);
        assert_sound(&temps, &p);
        assert_eq!(p.offsets[0], p.offsets[2], "{p:?}");
        assert_ne!(p.offsets[0], p.offsets[1]);
        assert_eq!(p.arena_bytes, 512);
        assert_eq!(live_bound(&temps), 512);
        // All live at step 1: nothing shared.
        let temps = [life(100, 0, 1), life(200, 1, 1), life(300, 1, 2)];
        let p = place(&temps);
        assert_sound(&temps, &p);
        // Largest first, each after the aligned end of the one before: 300 at 0, 200 at 320,
        // 100 at 576.
        assert_eq!(p.offsets, [576, 320, 0]);
        assert_eq!(p.arena_bytes, 676);
    }

    #[test]
    fn offsets_are_aligned_and_the_arena_ends_at_the_last_byte() {
        let temps = [life(10, 0, 0), life(3, 0, 0), life(70, 0, 0)];
        let p = place(&temps);
        assert_sound(&temps, &p);
        assert_eq!(p.offsets, [128, 192, 0]);
        assert_eq!(p.arena_bytes, 195);
    }

    #[test]
    fn a_temp_read_by_several_steps_is_live_between_them() {
        // t0 is written at step 0 and read at steps 1 and 4; t1 lives at 2-3, inside t0's life.
        let temps = [life(64, 0, 4), life(64, 2, 3), life(64, 5, 6)];
        let p = place(&temps);
        assert_sound(&temps, &p);
        assert_ne!(p.offsets[0], p.offsets[1]);
        assert_eq!(p.arena_bytes, 128, "t2 reuses either slot");
    }

    #[test]
    fn the_smallest_gap_that_fits_is_chosen() {
        // Two long-lived temps leave gaps of 64 and 192 bytes around a short-lived one; the
        // late small temp must take the 64-byte gap.
        let temps = [
            life(64, 0, 9),  // kept
            life(192, 0, 1), // freed early: a 192-byte gap
            life(64, 0, 9),  // kept
            life(64, 0, 1),  // freed early: a 64-byte gap
            life(64, 0, 9),  // kept
            life(64, 5, 6),  // fits either gap
        ];
        let p = place(&temps);
        assert_sound(&temps, &p);
        assert_eq!(p.offsets[1], 0, "{p:?}");
        assert_eq!(p.offsets[5], p.offsets[3], "{p:?}");
    }

    #[test]
    fn unused_and_empty_temps_share_offset_0_with_every_temp() {
        let temps = [TempLife { bytes: 4096, live: None }, life(0, 0, 3), life(64, 1, 2)];
        let p = place(&temps);
        assert_sound(&temps, &p);
        assert_eq!(p.offsets, [0, 0, 0]);
        assert_eq!(p.arena_bytes, 4096, "the arena holds every temp");
        assert_eq!(place(&[]).arena_bytes, 0);
    }

    #[test]
    fn random_lifetimes_keep_the_invariant_and_the_bounds() {
        // A small linear congruential generator: deterministic and dependency-free.
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = |n: u64| {
            state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            (state >> 33) % n
        };
        for _ in 0..200 {
            let temps: Vec<TempLife> = (0..next(12) + 1)
                .map(|_| {
                    let first = next(10) as usize;
                    life(next(1000), first, first + next(4) as usize)
                })
                .collect();
            let p = place(&temps);
            assert_sound(&temps, &p);
            assert!(p.arena_bytes >= live_bound(&temps), "{p:?}");
            let aligned_sum: u64 = temps.iter().map(|t| align_up(t.bytes)).sum();
            assert!(p.arena_bytes <= aligned_sum, "{p:?} over {aligned_sum}");
        }
    }
}
