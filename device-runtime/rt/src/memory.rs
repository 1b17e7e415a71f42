//! The memory section of a report: bytes by scope, the peak, and the allocation-legality list.
//!
//! Every allocation of the program is listed with its size, scope, the limit it was checked
//! against and a verdict:
//! - **buffers** (scope `global`), in manifest order, against the profile's memory budget
//!   (`memory.memory_limit_bytes`): the runtime allocates them all at once, so a buffer that
//!   brings the running total over the budget, and every one after it, is `OverCapacity`;
//! - **kernel allocations** (the manifest's `allocs`, named `kernel.alloc`): `local` ones live
//!   together on the stack of the thread running the kernel, so the one that brings the
//!   kernel's running total over the stack budget (`memory.stack_limit_bytes`), and every one
//!   after it, is `Illegal` (a per-scope limit); `shared` memory does not exist for CPU kernels
//!   (`Illegal`); `global` ones add to the program's total against the memory budget.
//!
//! The peak is the buffers' bytes plus the largest kernel's allocations (kernels run one after
//! the other). [`check`] returns the failure the verdicts imply: `IllegalAllocation` before
//! `Capacity`, naming the first offending allocation; the runtime runs no kernel of a program
//! with one.
//!
//! What it must keep true: every buffer and every declared allocation appears exactly once;
//! sums saturate instead of overflowing (sizes come from the payload).

use ekb_wire::payload::{Backend, Manifest, MemScope};
use ekb_wire::protocol::{
    AllocationCheck, Failure, FailureKind, MemoryFault, MemoryReport, ScopeBytes, Verdict,
};

/// The memory report of `m` (without the RSS, which only a run measures) and the failure its
/// verdicts imply.
pub fn check(m: &Manifest) -> (MemoryReport, Option<Failure>) {
    let budget = m.memory.memory_limit_bytes;
    let stack = m.memory.stack_limit_bytes;
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
    for b in &m.buffers {
        let bytes = b.size_bytes().unwrap_or(u64::MAX);
        let verdict = over_budget(&mut global, bytes, format!("buffer `{}` ({})", b.name, b.role));
        allocations.push(AllocationCheck {
            name: b.name.clone(),
            bytes,
            scope: MemScope::Global,
            limit_bytes: Some(budget),
            verdict,
        });
    }
    let buffers = global;
    let mut largest_kernel = 0u64;
    let mut by_scope = [0u64; 3];
    for k in &m.kernels {
        let mut local = 0u64;
        let mut kernel_total = 0u64;
        let mut kernel_scope = [0u64; 3];
        for a in &k.allocs {
            let name = format!("{}.{}", k.name, a.name);
            kernel_total = kernel_total.saturating_add(a.bytes);
            let (limit, verdict) = match a.scope {
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
                MemScope::Shared if m.backend == Backend::CpuLlvm => (
                    None,
                    Verdict::Illegal { reason: "`shared` memory does not exist for CPU kernels".into() },
                ),
                MemScope::Shared => (None, Verdict::Legal),
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
    let failure = first_failure(&allocations);
    let report = MemoryReport {
        by_scope: scopes,
        peak_bytes: buffers.saturating_add(largest_kernel),
        max_rss_bytes: None,
        allocations,
    };
    (report, failure)
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
            seeds: vec![0],
            tolerance: Tolerance { atol: 0.0, rtol: 0.0 },
            expected: vec![],
            timing: TimingSettings::DEFAULT,
            memory: MemoryPlan { peak_bytes: 0, stack_limit_bytes: stack, memory_limit_bytes: budget },
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
        let (r, f) = check(&m);
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
    fn over_the_stack_budget_is_illegal_and_over_memory_is_capacity() {
        let m = manifest(&[("x", 100)], &[("a", MemScope::Local, 64), ("b", MemScope::Local, 64)], 1000, 100);
        let (r, f) = check(&m);
        assert_eq!(r.allocations[1].verdict, Verdict::Legal);
        assert!(
            matches!(&r.allocations[2].verdict, Verdict::Illegal { reason } if reason.contains("reach 128 bytes"))
        );
        let f = f.unwrap();
        assert_eq!(f.kind, FailureKind::Memory(MemoryFault::IllegalAllocation));
        assert!(f.evidence.starts_with("allocation `k.b` (64 bytes, local)"), "{}", f.evidence);

        let m = manifest(&[("x", 200), ("y", 100), ("z", 1)], &[], 1000, 100);
        let (r, f) = check(&m);
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
        let (r, f) = check(&m);
        assert!(matches!(r.allocations[1].verdict, Verdict::Illegal { .. }));
        assert_eq!(f.unwrap().kind, FailureKind::Memory(MemoryFault::IllegalAllocation));
    }
}
