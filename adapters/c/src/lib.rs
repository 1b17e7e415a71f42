//! `ekb-gpu-c`: L1 GPU kernels -> CUDA C or OpenCL C, from one C-family emitter.
//!
//! [`emit`] verifies a module against a GPU target and writes the source of its kernels in the
//! target's dialect (or the one asked for); [`emit_with`] puts hand-written (L2) kernels in place
//! of some, and [`emit_kernel`] writes one kernel alone, the start of such a kernel; [`kernels`] describes each kernel as a runtime
//! launches it (the ABI of `docs/gpu.md`). The dialects differ only through the table in
//! [`dialect`]; the walk in `emit` is shared. With the `opencl` feature (on by default) or
//! `cuda`, `run` runs a module on this machine's GPU, through the system's OpenCL driver or
//! NVRTC and the CUDA driver, with the board runtime's own execution code (`ekb-gpu`).
//!
//! What this crate must keep true: it emits only modules that verify against the target (so
//! every launch is legal there), and a module it cannot express is a [`Diagnostic`], never a
//! panic.

pub mod dialect;
mod emit;
#[cfg(any(feature = "opencl", feature = "cuda"))]
pub mod run;

pub use dialect::Dialect;
pub use emit::{HandWritten, DYNAMIC_SHARED_ALIGN};

use ekb_ir::l1::gpu::LaunchShape;
use ekb_ir::l1::verify::verify;
use ekb_ir::l1::{Access, Module};
use ekb_ir::types::TensorType;
use ekb_ir::{Diagnostic, TargetProfile};

/// The source of every kernel of `m` in `dialect`, for `target` (whose GPU must speak that
/// dialect). The module must verify against `target` with no errors.
pub fn emit(m: &Module, dialect: Dialect, target: &TargetProfile) -> Result<String, Diagnostic> {
    emit_with(m, dialect, target, &[])
}

/// [`emit`] with the kernels of `replaced` written by hand (L2, `docs/l2.md`): their text comes
/// after the emitted kernels and the whole preamble, each under a `#line` naming its file.
pub fn emit_with(
    m: &Module,
    dialect: Dialect,
    target: &TargetProfile,
    replaced: &[HandWritten<'_>],
) -> Result<String, Diagnostic> {
    check_target(m, dialect, target)?;
    emit::module_source(m, dialect, replaced)
}

/// The function of kernel `kernel` of `m` in `dialect`, without the preamble: the starting point
/// of a hand-written (L2) kernel.
pub fn emit_kernel(
    m: &Module,
    dialect: Dialect,
    target: &TargetProfile,
    kernel: &str,
) -> Result<String, Diagnostic> {
    check_target(m, dialect, target)?;
    emit::kernel_source(m, dialect, kernel)
}

/// An error unless `target` has a GPU of `dialect` and `m` verifies against it.
fn check_target(m: &Module, dialect: Dialect, target: &TargetProfile) -> Result<(), Diagnostic> {
    let Some(gpu) = &target.gpu else {
        return Err(Diagnostic::error(format!(
            "target `{}` has no GPU: {} needs one",
            target.name,
            dialect.name()
        ))
        .with_hint("choose a target with a GPU, e.g. `pocl`, `rk3588`, `jetson-orin` or `h200`"));
    };
    if Dialect::of(gpu.api) != dialect {
        return Err(Diagnostic::error(format!(
            "target `{}` runs {}, not {}",
            target.name,
            Dialect::of(gpu.api).name(),
            dialect.name()
        )));
    }
    if let Some(first) = verify(m, Some(target)).into_iter().find(Diagnostic::is_error) {
        return Err(
            first.with_note(format!("module {} does not verify for target `{}`", m.name, target.name))
        );
    }
    Ok(())
}

/// A kernel as a runtime launches it: its name (the symbol in the source), its parameters in
/// order, and its launch shape.
#[derive(Debug, Clone, PartialEq)]
pub struct GpuKernel {
    pub name: String,
    pub params: Vec<GpuParam>,
    pub launch: LaunchShape,
}

/// One parameter: a pointer to a whole buffer.
#[derive(Debug, Clone, PartialEq)]
pub struct GpuParam {
    pub name: String,
    pub ty: TensorType,
    pub access: Access,
}

/// Every kernel of `m` as launched; an error names a kernel that is not a GPU kernel.
pub fn kernels(m: &Module) -> Result<Vec<GpuKernel>, Diagnostic> {
    m.kernels
        .iter()
        .map(|k| {
            let launch = LaunchShape::of(k).ok_or_else(|| {
                Diagnostic::error(format!(
                    "kernel {} is not a GPU kernel: its body is not exactly one `launch`",
                    k.name
                ))
                .at(k.span)
            })?;
            let params = k
                .params
                .iter()
                .map(|p| GpuParam { name: p.name.clone(), ty: p.ty.clone(), access: p.access })
                .collect();
            Ok(GpuKernel { name: k.name.clone(), params, launch })
        })
        .collect()
}
