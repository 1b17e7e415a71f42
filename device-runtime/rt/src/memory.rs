//! The memory section of a report: bytes by scope, the peak, and the allocation-legality list,
//! and for GPU programs the legality of every launch.
//!
//! Every allocation of the program is listed with its size, scope, the limit it was checked
//! against and a verdict:
//! - **buffers** (scope `global`), in manifest order, against the profile's memory budget
//!   (`memory.memory_limit_bytes`): the runtime allocates them all at once, so a buffer that
//!   brings the running total over the budget, and every one after it, is `OverCapacity`; the
//!   temps a manifest places in its arena are one allocation, listed after the other buffers
//!   as [`ARENA_NAME`] with the arena's size (what [`crate::buffers::Buffers`] reserves); on a
//!   GPU, a buffer larger than the largest single allocation (the profile's
//!   `gpu.max_buffer_bytes`, the device's `CL_DEVICE_MAX_MEM_ALLOC_SIZE`) is `OverCapacity` too;
//! - **kernel allocations** (the manifest's `allocs`, named `kernel.alloc`): on a CPU, `local`
//!   ones live together on the stack of the thread running the kernel, so the one that brings
//!   the kernel's running total over the stack budget (`memory.stack_limit_bytes`), and every one
//!   after it, is `Illegal` (a per-scope limit), and `shared` memory does not exist (`Illegal`);
//!   on a GPU, `shared` ones live together in the block's shared (work-group local) memory,
//!   checked the same way against the smallest of the profile's and the device's limits (the
//!   opt-in limits for a launch that opts in), and `local` ones against the profile's private
//!   memory per thread, where it has one; `global` ones add to the program's total against the
//!   memory budget.
//!
//! A GPU kernel's **launch** is checked against the smallest limit of threads per block (the
//! profile's `gpu.max_threads_per_block`, the device's, and the kernel's own as its driver
//! reports it: `CL_KERNEL_WORK_GROUP_SIZE`, `CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK`) and the
//! device's block and grid extents; an illegal launch is an `IllegalAllocation` failure naming
//! the limit. The device's limits are those [`LiveGpu`] gives (the driver's answers when the
//! payload was loaded); without them, the profile's alone.
//!
//! The peak is the buffers' bytes plus the largest kernel's allocations (kernels run one after
//! the other). [`check`] returns the failure the verdicts imply: an illegal launch, then
//! `IllegalAllocation`, then `Capacity`, naming the first offending launch or allocation; the
//! runtime runs no kernel of a program with one.
//!
//! What it must keep true: every buffer outside the arena, the arena, and every declared
//! allocation appear exactly once, so the buffers' bytes are the data bytes the runtime
//! reserves (`Buffers::data_bytes`);
//! sums saturate instead of overflowing (sizes come from the payload); every GPU verdict names
//! the limit that decided it and where it comes from.

use crate::buffers::ARENA_NAME;
use ekb_wire::payload::{Backend, Launch, Manifest, MemScope};
use ekb_wire::protocol::{
    AllocationCheck, Failure, FailureKind, MemoryFault, MemoryReport, ScopeBytes, Verdict,
};

/// A limit and where it comes from (`from OpenCL device `X` (CL_DEVICE_LOCAL_MEM_SIZE)`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveLimit {
    pub value: u64,
    pub source: String,
}

/// The GPU's limits as its driver reported them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveGpu {
    pub threads_per_block: LiveLimit,
    pub block_dims: [LiveLimit; 3],
    /// CUDA only.
    pub grid_dims: Option<[LiveLimit; 3]>,
    pub shared_per_block: LiveLimit,
    /// CUDA only.
    pub shared_optin: Option<LiveLimit>,
    pub max_alloc: LiveLimit,
    /// Per kernel of the manifest, the most threads per block its driver allows.
    pub kernel_threads: Vec<LiveLimit>,
}

/// The smallest of `limits` (the first of equals), if any.
fn smallest(limits: impl IntoIterator<Item = LiveLimit>) -> Option<LiveLimit> {
    limits.into_iter().fold(None, |best: Option<LiveLimit>, l| match best {
        Some(b) if b.value <= l.value => Some(b),
        _ => Some(l),
    })
}

/// The memory report of `m` (without the RSS, which only a run measures) and the failure its
/// verdicts imply; `live` are the device's limits for a GPU program.
pub fn check(m: &Manifest, live: Option<&LiveGpu>) -> (MemoryReport, Option<Failure>) {
    let budget = m.memory.memory_limit_bytes;
    let stack = m.memory.stack_limit_bytes;
    // A CPU-only build never loads a GPU program: the GPU checks compile away there.
    let gpu = cfg!(feature = "gpu") && m.backend != Backend::CpuLlvm;
    let profile = |field: &str| format!("from target profile `{}` (gpu.{field})", m.target);
    let limit = |value: u64, source: String| LiveLimit { value, source };
    let mut allocations = Vec::new();
    let mut global = 0u64;
    let over_budget = |global: &mut u64, bytes: u64, what: String| -> Verdict {
        *global = global.saturating_add(bytes);
        if *global > budget {
            Verdict::OverCapacity {
                reason: format!(
                    "{what} brings the program's memory to {global} bytes, over the memory budget of {budget} bytes"
                ),
            }
        } else {
            Verdict::Legal
        }
    };
    let largest_buffer = smallest(
        m.gpu
            .and_then(|g| g.max_buffer_bytes)
            .map(|v| limit(v, profile("max_buffer_bytes")))
            .into_iter()
            .chain(live.map(|l| l.max_alloc.clone()))
            .filter(|_| gpu),
    );
    let in_arena =
        |i: usize| m.arena.as_ref().is_some_and(|a| a.slots.iter().any(|s| s.buffer as usize == i));
    let apart = m.buffers.iter().enumerate().filter(|(i, _)| !in_arena(*i)).map(|(_, b)| {
        (b.name.as_str(), b.size_bytes().unwrap_or(u64::MAX), format!("buffer `{}` ({})", b.name, b.role))
    });
    let arena = m
        .arena
        .as_ref()
        .map(|a| (ARENA_NAME, a.bytes, format!("the {ARENA_NAME} of {} temps", a.slots.len())));
    for (name, bytes, what) in apart.chain(arena) {
        let mut verdict = over_budget(&mut global, bytes, what);
        if let Some(l) =
            largest_buffer.as_ref().filter(|l| gpu && bytes > l.value && verdict == Verdict::Legal)
        {
            verdict = Verdict::OverCapacity {
                reason: format!(
                    "buffer `{name}` ({bytes} bytes) is larger than the largest single allocation of {} bytes {}",
                    l.value, l.source
                ),
            };
        }
        allocations.push(AllocationCheck {
            name: name.to_string(),
            bytes,
            scope: MemScope::Global,
            limit_bytes: Some(budget),
            verdict,
        });
    }
    let buffers = global;
    let mut launches = Vec::new();
    let mut largest_kernel = 0u64;
    let mut by_scope = [0u64; 3];
    for (ki, k) in m.kernels.iter().enumerate() {
        let optin = matches!(k.launch, Launch::Grid { shared_optin: true, .. });
        let shared_limit = smallest(
            m.gpu
                .map(|g| match (optin, g.shared_bytes_optin) {
                    (true, Some(v)) => limit(v, profile("shared_bytes_per_block_optin")),
                    _ => limit(g.shared_bytes_per_block, profile("shared_bytes_per_block")),
                })
                .into_iter()
                .chain(live.map(|l| match (&l.shared_optin, optin) {
                    (Some(o), true) => o.clone(),
                    _ => l.shared_per_block.clone(),
                }))
                .filter(|_| gpu),
        );
        let private_limit = m
            .gpu
            .and_then(|g| g.private_bytes_per_thread)
            .filter(|_| gpu)
            .map(|v| limit(v, profile("private_bytes_per_thread")));
        if let (true, Launch::Grid { grid, block, .. }) = (gpu, &k.launch) {
            launches.extend(launch_findings(&k.name, grid, block, m, ki, live));
        }
        let mut local = 0u64;
        let mut shared = 0u64;
        let mut kernel_total = 0u64;
        let mut kernel_scope = [0u64; 3];
        for a in &k.allocs {
            let name = format!("{}.{}", k.name, a.name);
            kernel_total = kernel_total.saturating_add(a.bytes);
            let (limit, verdict) = match a.scope {
                MemScope::Local if gpu => {
                    local = local.saturating_add(a.bytes);
                    match &private_limit {
                        Some(l) if local > l.value => (
                            Some(l.value),
                            Verdict::Illegal {
                                reason: format!(
                                    "the `local` allocations of kernel `{}` reach {local} bytes per thread with `{}`, \
                                     over the limit of {} bytes {}",
                                    k.name, a.name, l.value, l.source
                                ),
                            },
                        ),
                        l => (l.as_ref().map(|l| l.value), Verdict::Legal),
                    }
                }
                MemScope::Local => {
                    local = local.saturating_add(a.bytes);
                    let v = if local > stack {
                        Verdict::Illegal {
                            reason: format!(
                                "the `local` allocations of kernel `{}` reach {local} bytes with `{}`, over the \
                                 stack budget of {stack} bytes",
                                k.name, a.name
                            ),
                        }
                    } else {
                        Verdict::Legal
                    };
                    (Some(stack), v)
                }
                MemScope::Shared if !gpu => (
                    None,
                    Verdict::Illegal { reason: "`shared` memory does not exist for CPU kernels".into() },
                ),
                MemScope::Shared => {
                    shared = shared.saturating_add(a.bytes);
                    match &shared_limit {
                        Some(l) if shared > l.value => (
                            Some(l.value),
                            Verdict::Illegal {
                                reason: format!(
                                    "the `shared` allocations of kernel `{}` reach {shared} bytes per block with \
                                     `{}`, over the limit of {} bytes {}",
                                    k.name, a.name, l.value, l.source
                                ),
                            },
                        ),
                        l => (l.as_ref().map(|l| l.value), Verdict::Legal),
                    }
                }
                MemScope::Global => {
                    (Some(budget), over_budget(&mut global, a.bytes, format!("allocation `{name}`")))
                }
            };
            let slot = &mut kernel_scope[a.scope as usize];
            *slot = slot.saturating_add(a.bytes);
            allocations.push(AllocationCheck {
                name,
                bytes: a.bytes,
                scope: a.scope,
                limit_bytes: limit,
                verdict,
            });
        }
        largest_kernel = largest_kernel.max(kernel_total);
        for (s, k) in by_scope.iter_mut().zip(kernel_scope) {
            *s = (*s).max(k);
        }
    }
    let mut scopes = vec![ScopeBytes { scope: MemScope::Global, bytes: buffers.saturating_add(by_scope[0]) }];
    for (scope, bytes) in [(MemScope::Shared, by_scope[1]), (MemScope::Local, by_scope[2])] {
        if bytes > 0 {
            scopes.push(ScopeBytes { scope, bytes });
        }
    }
    let failure = launches
        .into_iter()
        .next()
        .map(|evidence| Failure {
            kind: FailureKind::Memory(MemoryFault::IllegalAllocation),
            evidence: format!("{evidence}; no kernel was run"),
        })
        .or_else(|| first_failure(&allocations));
    let report = MemoryReport {
        by_scope: scopes,
        peak_bytes: buffers.saturating_add(largest_kernel),
        max_rss_bytes: None,
        allocations,
    };
    (report, failure)
}

/// What is illegal about the launch of kernel `ki` (`name`): threads per block over the
/// smallest limit, block or grid extents over the device's.
fn launch_findings(
    name: &str,
    grid: &[u32; 3],
    block: &[u32; 3],
    m: &Manifest,
    ki: usize,
    live: Option<&LiveGpu>,
) -> Vec<String> {
    let mut out = Vec::new();
    let threads: u64 = block.iter().map(|&b| u64::from(b)).product();
    let profile = m.gpu.map(|g| LiveLimit {
        value: u64::from(g.max_threads_per_block),
        source: format!("from target profile `{}` (gpu.max_threads_per_block)", m.target),
    });
    let candidates = profile.into_iter().chain(
        live.into_iter()
            .flat_map(|l| [Some(l.threads_per_block.clone()), l.kernel_threads.get(ki).cloned()])
            .flatten(),
    );
    if let Some(l) = smallest(candidates).filter(|l| threads > l.value) {
        out.push(format!(
            "the launch of kernel `{name}` has {threads} threads per block (block {}x{}x{}), over the limit of {} {}",
            block[0], block[1], block[2], l.value, l.source
        ));
    }
    const AXES: [&str; 3] = ["x", "y", "z"];
    if let Some(l) = live {
        for (a, (&extent, lim)) in block.iter().zip(&l.block_dims).enumerate() {
            if u64::from(extent) > lim.value {
                out.push(format!(
                    "the block of kernel `{name}` has extent {extent} along {}, over the limit of {} {}",
                    AXES[a], lim.value, lim.source
                ));
            }
        }
        for (a, (&extent, lim)) in grid.iter().zip(l.grid_dims.iter().flatten()).enumerate() {
            if u64::from(extent) > lim.value {
                out.push(format!(
                    "the grid of kernel `{name}` has extent {extent} along {}, over the limit of {} {}",
                    AXES[a], lim.value, lim.source
                ));
            }
        }
    }
    out
}

fn first_failure(allocations: &[AllocationCheck]) -> Option<Failure> {
    let illegal = allocations.iter().find(|a| matches!(a.verdict, Verdict::Illegal { .. }));
    let over = allocations.iter().find(|a| matches!(a.verdict, Verdict::OverCapacity { .. }));
    let (a, fault) = match (illegal, over) {
        (Some(a), _) => (a, MemoryFault::IllegalAllocation),
        (None, Some(a)) => (a, MemoryFault::Capacity),
        (None, None) => return None,
    };
    let reason = match &a.verdict {
        Verdict::Illegal { reason } | Verdict::OverCapacity { reason } => reason.clone(),
        Verdict::Legal => String::new(),
    };
    Some(Failure {
        kind: FailureKind::Memory(fault),
        evidence: format!(
            "allocation `{}` ({} bytes, {}): {reason}; no kernel was run",
            a.name, a.bytes, a.scope
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ekb_wire::payload::{
        AllocDecl, BufferDecl, DType, KernelDecl, Launch, MemoryPlan, Role, TimingSettings, Tolerance,
    };

    fn manifest(
        buffers: &[(&str, u64)],
        allocs: &[(&str, MemScope, u64)],
        budget: u64,
        stack: u64,
    ) -> Manifest {
        Manifest {
            generator_version: 1,
            producer: String::new(),
            task: "t".into(),
            target: "host".into(),
            backend: Backend::CpuLlvm,
            kernels: vec![KernelDecl {
                name: "k".into(),
                symbol: "ekb_k_k".into(),
                blob: 0,
                params: vec![],
                launch: Launch::Cpu,
                allocs: allocs
                    .iter()
                    .map(|(n, s, b)| AllocDecl { name: (*n).into(), scope: *s, bytes: *b })
                    .collect(),
            }],
            buffers: buffers
                .iter()
                .map(|(n, elems)| BufferDecl {
                    name: (*n).into(),
                    dtype: DType::F32,
                    shape: vec![*elems],
                    role: Role::Temp,
                    source: None,
                })
                .collect(),
            plan: vec![],
            prepare_steps: 0,
            seeds: vec![0],
            tolerance: Tolerance { atol: 0.0, rtol: 0.0 },
            expected: vec![],
            timing: TimingSettings::DEFAULT,
            memory: MemoryPlan { peak_bytes: 0, stack_limit_bytes: stack, memory_limit_bytes: budget },
            gpu: None,
            arena: None,
            repeat: 1,
        }
    }

    #[test]
    fn a_legal_program_lists_every_allocation_and_its_peak() {
        let m = manifest(
            &[("x", 100), ("y", 50)],
            &[("acc", MemScope::Local, 64), ("t", MemScope::Local, 32)],
            1000,
            96,
        );
        let (r, f) = check(&m, None);
        assert_eq!(f, None);
        let names: Vec<_> = r.allocations.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(names, ["x", "y", "k.acc", "k.t"]);
        assert!(r.allocations.iter().all(|a| a.verdict == Verdict::Legal));
        assert_eq!(r.allocations[2].limit_bytes, Some(96));
        assert_eq!(r.peak_bytes, 600 + 96);
        assert_eq!(
            r.by_scope,
            vec![
                ScopeBytes { scope: MemScope::Global, bytes: 600 },
                ScopeBytes { scope: MemScope::Local, bytes: 96 }
            ]
        );
    }

    #[test]
    fn arena_temps_are_one_allocation_of_the_bytes_the_buffers_reserve() {
        use crate::buffers::{Buffers, RegionLayout};
        use ekb_wire::payload::{Arena, ArenaSlot};
        // Temps x (400 bytes) and y (200) share the arena's first bytes; z (4) stays apart.
        let mut m = manifest(&[("x", 100), ("y", 50), ("z", 1)], &[("acc", MemScope::Local, 64)], 1000, 96);
        m.arena = Some(Arena {
            bytes: 400,
            slots: vec![ArenaSlot { buffer: 0, offset: 0 }, ArenaSlot { buffer: 1, offset: 0 }],
        });
        let (r, f) = check(&m, None);
        assert_eq!(f, None);
        let listed: Vec<_> = r.allocations.iter().map(|a| (a.name.as_str(), a.bytes)).collect();
        assert_eq!(listed, [("z", 4), (ARENA_NAME, 400), ("k.acc", 64)]);
        assert_eq!(r.peak_bytes, 404 + 64);
        let bufs = Buffers::allocate(&m, RegionLayout::one_page()).unwrap();
        assert_eq!(bufs.data_bytes(), 404, "the report's buffers are what the runtime reserved");
        // Over the budget, the arena is named.
        m.memory.memory_limit_bytes = 403;
        let (_, f) = check(&m, None);
        assert!(f
            .unwrap()
            .evidence
            .contains("the temp arena of 2 temps brings the program's memory to 404 bytes"));
    }

    #[test]
    fn over_the_stack_budget_is_illegal_and_over_memory_is_capacity() {
        let m = manifest(&[("x", 100)], &[("a", MemScope::Local, 64), ("b", MemScope::Local, 64)], 1000, 100);
        let (r, f) = check(&m, None);
        assert_eq!(r.allocations[1].verdict, Verdict::Legal);
        assert!(
            matches!(&r.allocations[2].verdict, Verdict::Illegal { reason } if reason.contains("reach 128 bytes"))
        );
        let f = f.unwrap();
        assert_eq!(f.kind, FailureKind::Memory(MemoryFault::IllegalAllocation));
        assert!(f.evidence.starts_with("allocation `k.b` (64 bytes, local)"), "{}", f.evidence);

        let m = manifest(&[("x", 200), ("y", 100), ("z", 1)], &[], 1000, 100);
        let (r, f) = check(&m, None);
        assert_eq!(r.allocations[0].verdict, Verdict::Legal);
        assert!(
            matches!(&r.allocations[1].verdict, Verdict::OverCapacity { reason } if reason.contains("1200 bytes"))
        );
        assert!(matches!(r.allocations[2].verdict, Verdict::OverCapacity { .. }));
        assert_eq!(f.unwrap().kind, FailureKind::Memory(MemoryFault::Capacity));
    }

    #[test]
    fn shared_memory_is_illegal_for_cpu_kernels() {
        let m = manifest(&[("x", 1)], &[("tile", MemScope::Shared, 16)], 1000, 100);
        let (r, f) = check(&m, None);
        assert!(matches!(r.allocations[1].verdict, Verdict::Illegal { .. }));
        assert_eq!(f.unwrap().kind, FailureKind::Memory(MemoryFault::IllegalAllocation));
    }

    /// A GPU program for target `rk3588` (its profile limits: 1024 threads, 32 KiB shared per
    /// block): kernel `k` on blocks of `threads`, with these allocations.
    #[cfg(feature = "gpu")]
    fn gpu_manifest(threads: u32, allocs: &[(&str, MemScope, u64)]) -> Manifest {
        use ekb_wire::payload::GpuLimits;
        let mut m = manifest(&[("x", 256)], allocs, 1 << 30, 0);
        m.target = "rk3588".into();
        m.backend = Backend::OpenCl;
        m.kernels[0].launch =
            Launch::Grid { grid: [4, 1, 1], block: [threads, 1, 1], shared_bytes: 0, shared_optin: false };
        m.gpu = Some(GpuLimits {
            max_threads_per_block: 1024,
            shared_bytes_per_block: 32768,
            shared_bytes_optin: None,
            private_bytes_per_thread: None,
            max_buffer_bytes: None,
        });
        m
    }

    #[cfg(feature = "gpu")]
    fn live(threads: u64, shared: u64, kernel_threads: u64) -> LiveGpu {
        let l = |value, q: &str| LiveLimit { value, source: format!("from OpenCL device `d` ({q})") };
        LiveGpu {
            threads_per_block: l(threads, "CL_DEVICE_MAX_WORK_GROUP_SIZE"),
            block_dims: [
                l(threads, "CL_DEVICE_MAX_WORK_ITEM_SIZES"),
                l(threads, "CL_DEVICE_MAX_WORK_ITEM_SIZES"),
                l(threads, "CL_DEVICE_MAX_WORK_ITEM_SIZES"),
            ],
            grid_dims: None,
            shared_per_block: l(shared, "CL_DEVICE_LOCAL_MEM_SIZE"),
            shared_optin: None,
            max_alloc: l(1 << 20, "CL_DEVICE_MAX_MEM_ALLOC_SIZE"),
            kernel_threads: vec![l(kernel_threads, "CL_KERNEL_WORK_GROUP_SIZE")],
        }
    }

    #[test]
    #[cfg(feature = "gpu")]
    fn gpu_shared_memory_is_checked_against_the_smallest_limit_naming_it() {
        // 16 + 16 KiB fit rk3588's 32 KiB; one byte more does not.
        let fits = gpu_manifest(256, &[("a", MemScope::Shared, 16384), ("b", MemScope::Shared, 16384)]);
        let (r, f) = check(&fits, None);
        assert_eq!(f, None);
        assert_eq!(r.allocations[2].limit_bytes, Some(32768));
        let over = gpu_manifest(256, &[("a", MemScope::Shared, 16384), ("b", MemScope::Shared, 16385)]);
        let (r, f) = check(&over, None);
        let Verdict::Illegal { reason } = &r.allocations[2].verdict else { panic!("{r:?}") };
        assert_eq!(
            reason,
            "the `shared` allocations of kernel `k` reach 32769 bytes per block with `b`, over the limit of 32768 \
             bytes from target profile `rk3588` (gpu.shared_bytes_per_block)"
        );
        assert_eq!(f.unwrap().kind, FailureKind::Memory(MemoryFault::IllegalAllocation));
        // A device with less local memory than the profile decides, and is named.
        let (r, _) = check(&fits, Some(&live(4096, 16384, 4096)));
        let Verdict::Illegal { reason } = &r.allocations[2].verdict else { panic!("{r:?}") };
        assert!(reason
            .ends_with("over the limit of 16384 bytes from OpenCL device `d` (CL_DEVICE_LOCAL_MEM_SIZE)"));
        // A CUDA launch that opts in is checked against the opt-in limit.
        let mut optin = gpu_manifest(256, &[("big", MemScope::Shared, 200 << 10)]);
        optin.backend = Backend::Cuda;
        optin.kernels[0].launch =
            Launch::Grid { grid: [1; 3], block: [256, 1, 1], shared_bytes: 200 << 10, shared_optin: true };
        optin.gpu.as_mut().unwrap().shared_bytes_optin = Some(166912);
        let (r, _) = check(&optin, None);
        let Verdict::Illegal { reason } = &r.allocations[1].verdict else { panic!("{r:?}") };
        assert!(reason.ends_with("over the limit of 166912 bytes from target profile `rk3588` (gpu.shared_bytes_per_block_optin)"), "{reason}");
        optin.gpu.as_mut().unwrap().shared_bytes_optin = Some(232448);
        assert_eq!(check(&optin, None).1, None);
        // Local memory of GPU kernels is per thread: no stack budget applies.
        let (_, f) = check(&gpu_manifest(256, &[("r", MemScope::Local, 4096)]), None);
        assert_eq!(f, None);
    }

    #[test]
    #[cfg(feature = "gpu")]
    fn gpu_launches_over_the_threads_per_block_are_illegal_naming_the_limit() {
        let (_, f) = check(&gpu_manifest(2048, &[]), None);
        let f = f.unwrap();
        assert_eq!(f.kind, FailureKind::Memory(MemoryFault::IllegalAllocation));
        assert_eq!(
            f.evidence,
            "the launch of kernel `k` has 2048 threads per block (block 2048x1x1), over the limit of 1024 from \
             target profile `rk3588` (gpu.max_threads_per_block); no kernel was run"
        );
        // The kernel's own limit from its driver, when it is the smallest.
        let (_, f) = check(&gpu_manifest(512, &[]), Some(&live(4096, 1 << 20, 256)));
        assert!(f
            .unwrap()
            .evidence
            .contains("over the limit of 256 from OpenCL device `d` (CL_KERNEL_WORK_GROUP_SIZE)"));
        // A buffer beyond the device's largest allocation is over capacity.
        let mut m = gpu_manifest(64, &[]);
        m.buffers[0].shape = vec![1 << 20];
        let (r, f) = check(&m, Some(&live(4096, 1 << 20, 4096)));
        let Verdict::OverCapacity { reason } = &r.allocations[0].verdict else { panic!("{r:?}") };
        assert!(
            reason.contains("larger than the largest single allocation of 1048576 bytes from OpenCL device")
        );
        assert_eq!(f.unwrap().kind, FailureKind::Memory(MemoryFault::Capacity));
    }
}
