//! GPU kernels of L1: the launch shape of a kernel, and its legality against GPU limits.
//!
//! A GPU kernel is a kernel whose body is exactly one `launch`. [`LaunchShape`] is what a runtime
//! needs to launch it (grid and block extents as x, y, z, threads per block, shared bytes per
//! block, whether it opts in to large shared memory) and what the verifier checks against a
//! [`GpuLimits`]: from a target profile ([`GpuLimits::from_profile`]) or from the live device a
//! runtime queries (built by the runtime, each limit naming the driver query it came from).
//!
//! What this module must keep true: every finding names the kernel, the quantity and its value,
//! the limit and where the limit comes from (`from target profile `rk3588`
//! (gpu.max_threads_per_block)`), and a kernel that is not a well-formed GPU kernel gets no
//! finding here (the verifier reports its shape).

use super::ast::*;
use super::memory::{kernel_shared, kernel_stack};
use crate::diag::Diagnostic;
use crate::target::{GpuApi, TargetProfile};

/// How a GPU kernel is launched: what the L1 `launch` says, as a runtime needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaunchShape {
    /// Blocks along x, y, z (missing dimensions are 1).
    pub grid: [u32; 3],
    /// Threads per block along x, y, z (missing dimensions are 1).
    pub block: [u32; 3],
    /// Bytes of `shared` allocations per block.
    pub shared_bytes: u64,
    /// `(name, bytes)` of each shared allocation, in order.
    pub shared_allocs: Vec<(String, u64)>,
    /// Bytes of `local` allocations one thread holds at its peak.
    pub local_bytes: u64,
    /// The launch says `shared_optin`: its shared memory is dynamic and may exceed the static
    /// limit (CUDA).
    pub shared_optin: bool,
}

impl LaunchShape {
    /// The launch of a GPU kernel; `None` for a kernel whose body is not exactly one `launch`.
    pub fn of(k: &Kernel) -> Option<LaunchShape> {
        let Some(Stmt::Launch { grid, block, shared_optin, .. }) = k.launch() else { return None };
        let xyz = |dims: &[LaunchDim]| {
            let mut out = [1u32; 3];
            for (o, d) in out.iter_mut().zip(dims) {
                *o = d.extent;
            }
            out
        };
        let shared = kernel_shared(k);
        Some(LaunchShape {
            grid: xyz(grid),
            block: xyz(block),
            shared_bytes: shared.bytes,
            shared_allocs: shared.allocs,
            local_bytes: kernel_stack(k).bytes,
            shared_optin: *shared_optin,
        })
    }

    /// Threads in one block.
    pub fn threads_per_block(&self) -> u64 {
        self.block.iter().map(|&b| u64::from(b)).product()
    }

    /// Blocks in the grid.
    pub fn blocks(&self) -> u64 {
        self.grid.iter().map(|&b| u64::from(b)).product()
    }
}

/// One limit and where it comes from, as a finding quotes it: `from target profile `pocl`
/// (gpu.max_threads_per_block)` or `from the OpenCL device (CL_DEVICE_MAX_WORK_GROUP_SIZE)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limit {
    pub value: u64,
    pub source: String,
}

impl Limit {
    pub fn new(value: u64, source: impl Into<String>) -> Limit {
        Limit { value, source: source.into() }
    }
}

/// The limits GPU kernels are checked against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GpuLimits {
    pub api: GpuApi,
    pub threads_per_block: Limit,
    /// Per-dimension block extents (x, y, z), where known.
    pub block_dims: [Option<Limit>; 3],
    /// Per-dimension grid extents (x, y, z), where known.
    pub grid_dims: [Option<Limit>; 3],
    /// Shared memory per block without an opt-in.
    pub shared_bytes_per_block: Limit,
    /// Shared memory per block with `shared_optin` (CUDA only).
    pub shared_bytes_optin: Option<Limit>,
    /// Private memory per thread, where known.
    pub private_bytes_per_thread: Option<Limit>,
}

/// CUDA's block extents (x, y, z) on every compute capability the project targets.
pub const CUDA_MAX_BLOCK_DIMS: [u64; 3] = [1024, 1024, 64];
/// CUDA's grid extents (x, y, z) on every compute capability the project targets.
pub const CUDA_MAX_GRID_DIMS: [u64; 3] = [i32::MAX as u64, 65535, 65535];

impl GpuLimits {
    /// The limits a target profile gives; `None` when it has no GPU.
    pub fn from_profile(t: &TargetProfile) -> Option<GpuLimits> {
        let g = t.gpu.as_ref()?;
        let src = |field: &str| format!("from target profile `{}` (gpu.{field})", t.name);
        let cuda = |table: [u64; 3]| {
            let axes = ["x", "y", "z"];
            let mut out: [Option<Limit>; 3] = [None, None, None];
            if g.api == GpuApi::Cuda {
                for ((o, v), a) in out.iter_mut().zip(table).zip(axes) {
                    *o =
                        Some(Limit::new(v, format!("of CUDA (the {a} dimension, every compute capability)")));
                }
            }
            out
        };
        Some(GpuLimits {
            api: g.api,
            threads_per_block: Limit::new(u64::from(g.max_threads_per_block), src("max_threads_per_block")),
            block_dims: cuda(CUDA_MAX_BLOCK_DIMS),
            grid_dims: cuda(CUDA_MAX_GRID_DIMS),
            shared_bytes_per_block: Limit::new(g.shared_bytes_per_block, src("shared_bytes_per_block")),
            shared_bytes_optin: g
                .shared_bytes_per_block_optin
                .map(|v| Limit::new(v, src("shared_bytes_per_block_optin"))),
            private_bytes_per_thread: g
                .private_bytes_per_thread
                .map(|v| Limit::new(v, src("private_bytes_per_thread"))),
        })
    }
}

/// Every finding of every GPU kernel of `m` against `limits`.
pub fn check_limits(m: &Module, limits: &GpuLimits) -> Vec<Diagnostic> {
    m.kernels.iter().flat_map(|k| check_kernel(k, limits)).collect()
}

/// The findings of one kernel against `limits` (none for a kernel that is not a GPU kernel).
pub fn check_kernel(k: &Kernel, limits: &GpuLimits) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let (Some(shape), Some(Stmt::Launch { grid, block, span, .. })) = (LaunchShape::of(k), k.launch()) else {
        return out;
    };
    let span = *span;
    let dims_text = |ds: &[LaunchDim]| {
        ds.iter().map(|d| format!("{} in 0..{}", d.var, d.extent)).collect::<Vec<_>>().join(", ")
    };
    let threads = shape.threads_per_block();
    let l = &limits.threads_per_block;
    if threads > l.value {
        out.push(
            Diagnostic::error(format!(
                "the launch of kernel {} has {threads} threads per block (block({})), over the limit of {} {}",
                k.name,
                dims_text(block),
                l.value,
                l.source
            ))
            .at(span)
            .with_hint("use fewer threads per block and more blocks"),
        );
    }
    for (which, dims, table) in [("block", block, &limits.block_dims), ("grid", grid, &limits.grid_dims)] {
        for (d, lim) in dims.iter().zip(table) {
            if let Some(lim) = lim.as_ref().filter(|lim| u64::from(d.extent) > lim.value) {
                out.push(
                    Diagnostic::error(format!(
                        "{which} dimension `{}` of kernel {} has extent {}, over the limit of {} {}",
                        d.var, k.name, d.extent, lim.value, lim.source
                    ))
                    .at(d.span)
                    .with_hint("reorder the dimensions so the largest extent is x (the first)"),
                );
            }
        }
    }
    if shape.shared_optin && limits.api == GpuApi::Opencl {
        out.push(
            Diagnostic::error(format!(
                "the launch of kernel {} says `shared_optin`, which only CUDA has (the OpenCL limit is {} bytes {})",
                k.name, limits.shared_bytes_per_block.value, limits.shared_bytes_per_block.source
            ))
            .at(span)
            .with_hint("remove `shared_optin`"),
        );
    }
    let optin = limits.shared_bytes_optin.as_ref().filter(|_| limits.api == GpuApi::Cuda);
    let shared_limit = match optin {
        Some(o) if shape.shared_optin => o,
        _ => &limits.shared_bytes_per_block,
    };
    if shape.shared_bytes > shared_limit.value {
        let what = match shape.shared_allocs.as_slice() {
            [(name, _)] => {
                let ty = shared_type(k, name).map(|t| format!(" ({t})")).unwrap_or_default();
                format!("shared alloc `{name}`{ty} of kernel {}", k.name)
            }
            allocs => {
                let parts: Vec<String> = allocs.iter().map(|(n, b)| format!("`{n}` {b}")).collect();
                format!("the shared allocs of kernel {} ({})", k.name, parts.join(", "))
            }
        };
        let mut d = Diagnostic::error(format!(
            "{what} need{} {} bytes per block, over the limit of {} bytes {}",
            if shape.shared_allocs.len() == 1 { "s" } else { "" },
            shape.shared_bytes,
            shared_limit.value,
            shared_limit.source
        ))
        .at(span);
        d.hint = Some(match optin {
            Some(o) if !shape.shared_optin && shape.shared_bytes <= o.value => format!(
                "add `shared_optin` to the launch for up to {} bytes {} (dynamic shared memory)",
                o.value, o.source
            ),
            _ => "use smaller tiles".into(),
        });
        out.push(d);
    }
    if let Some(p) = limits.private_bytes_per_thread.as_ref().filter(|p| shape.local_bytes > p.value) {
        out.push(
            Diagnostic::error(format!(
                "the local allocs of kernel {} need {} bytes per thread, over the limit of {} bytes {}",
                k.name, shape.local_bytes, p.value, p.source
            ))
            .at(span)
            .with_hint("keep less per thread, or stage it through `shared` memory"),
        );
    }
    out
}

/// The type of a shared allocation by name.
fn shared_type<'a>(k: &'a Kernel, name: &str) -> Option<&'a crate::types::TensorType> {
    let Some(Stmt::Launch { body, .. }) = k.launch() else { return None };
    body.iter().find_map(|s| match s {
        Stmt::Alloc { name: n, ty, scope: Scope::Shared, .. } if n == name => Some(ty),
        _ => None,
    })
}
