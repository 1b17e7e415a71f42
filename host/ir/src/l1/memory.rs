//! Peak memory of an L1 module: the bytes alive at the worst step of its plan.
//!
//! Definition (also in `docs/ir-l1.md`). The plan is a list of steps (`run`s), numbered from 0.
//! At step `s` the module occupies
//!
//! ```text
//! bytes(s) = inputs + outputs + (temps live at s) + (local bytes of the kernel run at s)
//! ```
//!
//! - `inputs`: every `input` buffer (graph inputs and parameters) is live throughout, but a
//!   parameter that only `prepare` steps read (a consumed parameter, [`super::arena`]): it is
//!   live like a temp, from the first to the last step naming it, and counted with the temps;
//! - `outputs`: every `output` buffer is live throughout;
//! - a temp (`buffer`) is live from the first to the last step that names it, both included; a
//!   temp no step names is never live; a temp a `prepare` step writes is live on to the last step
//!   (the executions after the first read it again);
//! - the local bytes of a kernel are one thread's stack peak: the largest sum of `alloc ... local`
//!   sizes live at once (for a GPU kernel, one thread's private allocations; `shared` ones are
//!   on-chip per block and reported by [`kernel_shared`], not counted here) (an allocation is live in the rest of the block that declares it, so the
//!   sum runs along one path of nested blocks, and sibling blocks do not add up). Other threads
//!   of a `parallel` loop hold their own copies; they are not counted, because the number of
//!   threads is the target's, not the module's.
//!
//! The peak is the largest `bytes(s)`, at its first step; a module with an empty plan occupies its
//! inputs and outputs. Sizes are `numel` times the element size (4 bytes for f32 and i32, 1 for
//! i8); arithmetic saturates rather than overflows, so an absurd shape gives a huge number, never
//! a panic.

use super::arena::TempLife;
use super::ast::*;
use super::visit::{for_each_stmt, walk_block, walk_stmt, Visitor};
use crate::types::TensorType;
use std::fmt;

/// Where and how large the module's memory peak is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryPlan {
    /// Total bytes at the peak.
    pub peak_bytes: u64,
    /// The plan step (index into `Module::plan`) where the peak is first reached; `None` for an
    /// empty plan.
    pub step: Option<usize>,
    /// The kernel that step runs.
    pub kernel: Option<String>,
    /// Bytes of `input` buffers (inputs and parameters) but the consumed parameters.
    pub inputs_bytes: u64,
    /// Bytes of `output` buffers.
    pub outputs_bytes: u64,
    /// Bytes of the temps (and consumed parameters) live at the peak step.
    pub temps_bytes: u64,
    /// Names of the temps live at the peak step in declaration order, then of the consumed
    /// parameters live there.
    pub live_temps: Vec<String>,
    /// One thread's local (stack) bytes of the kernel running at the peak step.
    pub local_bytes: u64,
}

/// One thread's stack peak in a kernel: the allocations live at the worst point.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct StackUse {
    pub bytes: u64,
    /// `(name, bytes)` of the allocations live together at that point, outermost first.
    pub allocs: Vec<(String, u64)>,
}

/// Bytes of a tensor type, saturating.
pub fn type_bytes(ty: &TensorType) -> u64 {
    ty.shape.iter().fold(ty.dtype.size_bytes() as u64, |acc, &d| acc.saturating_mul(d as u64))
}

/// The stack peak of one kernel (see the module header).
pub fn kernel_stack(k: &Kernel) -> StackUse {
    let mut stack = Stack { live: Vec::new(), best: StackUse::default() };
    stack.block(&k.body);
    stack.best
}

/// Shared memory one block of a GPU kernel uses: every `alloc .. shared` of its launch (they
/// all live for the whole launch), in order. Zero for a CPU kernel.
pub fn kernel_shared(k: &Kernel) -> StackUse {
    let mut used = StackUse::default();
    for_each_stmt(&k.body, &mut |s| {
        if let Stmt::Alloc { name, ty, scope: Scope::Shared, .. } = s {
            let b = type_bytes(ty);
            used.bytes = used.bytes.saturating_add(b);
            used.allocs.push((name.clone(), b));
        }
    });
    used
}

/// The local allocations live at each point (a block's end frees those it made), and the
/// largest total seen.
struct Stack {
    live: Vec<(String, u64)>,
    best: StackUse,
}

impl<'a> Visitor<'a> for Stack {
    fn block(&mut self, body: &'a [Stmt]) {
        let depth = self.live.len();
        walk_block(self, body);
        self.live.truncate(depth);
    }
    fn stmt(&mut self, s: &'a Stmt) {
        if let Stmt::Alloc { name, ty, scope: Scope::Local, .. } = s {
            self.live.push((name.clone(), type_bytes(ty)));
            let bytes = self.live.iter().fold(0u64, |a, (_, b)| a.saturating_add(*b));
            if bytes > self.best.bytes {
                self.best = StackUse { bytes, allocs: self.live.clone() };
            }
        }
        walk_stmt(self, s);
    }
}

/// The module's memory peak (see the module header for the definition).
pub fn peak_memory(m: &Module) -> MemoryPlan {
    let sum_role = |role| {
        m.buffers.iter().filter(|b| b.role == role).fold(0u64, |a, b| a.saturating_add(type_bytes(&b.ty)))
    };
    let consumed = super::arena::consumed_lives(m);
    let consumed_bytes = consumed.iter().fold(0u64, |a, (_, t)| a.saturating_add(t.bytes));
    let inputs_bytes = sum_role(BufferRole::Input).saturating_sub(consumed_bytes);
    let outputs_bytes = sum_role(BufferRole::Output);
    let mut lives = super::arena::temp_lives(m);
    lives.extend(consumed);
    let mut plan = MemoryPlan {
        peak_bytes: inputs_bytes.saturating_add(outputs_bytes),
        step: None,
        kernel: None,
        inputs_bytes,
        outputs_bytes,
        temps_bytes: 0,
        live_temps: Vec::new(),
        local_bytes: 0,
    };
    for (s, run) in m.plan.iter().enumerate() {
        let live: Vec<&(&str, TempLife)> = lives
            .iter()
            .filter(|(_, t)| t.live.is_some_and(|(first, last)| first <= s && s <= last))
            .collect();
        let temps_bytes = live.iter().fold(0u64, |a, (_, t)| a.saturating_add(t.bytes));
        let local_bytes = m.kernel(&run.kernel).map_or(0, |k| kernel_stack(k).bytes);
        let total = inputs_bytes
            .saturating_add(outputs_bytes)
            .saturating_add(temps_bytes)
            .saturating_add(local_bytes);
        if plan.step.is_none() || total > plan.peak_bytes {
            plan = MemoryPlan {
                peak_bytes: total,
                step: Some(s),
                kernel: Some(run.kernel.clone()),
                inputs_bytes,
                outputs_bytes,
                temps_bytes,
                live_temps: live.iter().map(|(name, _)| name.to_string()).collect(),
                local_bytes,
            };
        }
    }
    plan
}

impl fmt::Display for MemoryPlan {
    /// One line: `peak 4096 bytes at step 1 (run k1): inputs 1024 + outputs 1024 + temps 2048
    /// (t0) + local 0`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "peak {} bytes", self.peak_bytes)?;
        if let (Some(s), Some(k)) = (self.step, &self.kernel) {
            write!(f, " at step {s} (run {k})")?;
        }
        write!(
            f,
            ": inputs {} + outputs {} + temps {}",
            self.inputs_bytes, self.outputs_bytes, self.temps_bytes
        )?;
        if !self.live_temps.is_empty() {
            write!(f, " ({})", self.live_temps.join(", "))?;
        }
        write!(f, " + local {}", self.local_bytes)
    }
}
