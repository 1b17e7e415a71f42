//! Hand-written (L2) kernels: one kernel's source, LLVM IR or freestanding C, compiled on its
//! own into an object ([`compile_kernel`]), and the objects of one module linked into the one
//! relocatable object a loader maps ([`link_objects`]).
//!
//! What this module must keep true: a kernel's object passes [`check_object`] and exports
//! exactly that kernel's entry `ekb_k_<kernel>`, so the linked object holds every kernel once;
//! the linked object is checked again (the loader sees only it); clang's diagnostics name the
//! source by the name the caller gives (the candidate's own file name), with its lines.

use crate::abi::{check_object, kernel_symbol, ObjectInfo};
use crate::compile::{compile_input, find_clang, run, CompileLog};
use ekb_ir::{Diagnostic, TargetProfile};
use std::path::{Component, Path};

/// The language of a hand-written kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KernelLang {
    /// LLVM IR text (`.ll`), as `ekb lower --to l2` writes it.
    LlvmIr,
    /// C11 (`.c`), compiled freestanding: no C library beyond the ABI's imports.
    C,
}

impl KernelLang {
    /// The file extension: `ll` or `c`.
    pub fn extension(self) -> &'static str {
        match self {
            KernelLang::LlvmIr => "ll",
            KernelLang::C => "c",
        }
    }

    /// clang's options for the language: `-x` and, for C, the freestanding dialect the kernel
    /// ABI allows: no `errno` (so `sqrtf` can be an instruction), and every call to an import
    /// through the GOT (`-fno-plt`, which also makes LLVM's own `memset` calls use it).
    fn clang_options(self) -> &'static [&'static str] {
        match self {
            KernelLang::LlvmIr => &["-x", "ir"],
            KernelLang::C => {
                &["-x", "c", "-std=c11", "-ffreestanding", "-fno-math-errno", "-fno-plt", "-Wall"]
            }
        }
    }
}

/// Compiles the source `text` of kernel `kernel`, named `name` in diagnostics (a relative path
/// such as `candidate.l2/kernels/k0.ll`), into the object `out` for `target`. The object must
/// pass [`check_object`] and export exactly `ekb_k_<kernel>`.
pub fn compile_kernel(
    text: &str,
    name: &str,
    lang: KernelLang,
    kernel: &str,
    target: &TargetProfile,
    out: &Path,
) -> Result<(CompileLog, ObjectInfo), Diagnostic> {
    let rel = Path::new(name);
    if rel.is_absolute() || rel.components().any(|c| !matches!(c, Component::Normal(_))) {
        return Err(Diagnostic::error(format!("kernel source name `{name}` is not a plain relative path")));
    }
    // The source is written under its own name in a scratch directory where clang runs, so
    // clang's messages say `NAME:LINE:COLUMN` exactly as the candidate's author knows the file.
    let dir = tempfile::tempdir()
        .map_err(|e| Diagnostic::error(format!("cannot create a temporary directory: {e}")))?;
    let path = dir.path().join(rel);
    let io = |e: std::io::Error| Diagnostic::error(format!("cannot write `{}`: {e}", path.display()));
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(io)?;
    }
    std::fs::write(&path, text).map_err(io)?;
    let (log, info) = compile_input(name, lang.clang_options(), target, out, Some(dir.path()))
        .map_err(|d| d.with_note(format!("in the source of kernel `{kernel}`, `{name}`")))?;
    if info.kernels != [kernel] {
        let found = if info.kernels.is_empty() {
            "no kernel entry".to_string()
        } else {
            info.kernels.iter().map(|k| format!("`{}`", kernel_symbol(k))).collect::<Vec<_>>().join(", ")
        };
        return Err(Diagnostic::error(format!(
            "`{name}` must define exactly the entry of kernel `{kernel}`, `{}`; it defines {found}",
            kernel_symbol(kernel)
        ))
        .with_expected(format!("`void {}(void *const *args)`, exported", kernel_symbol(kernel)))
        .with_hint("one file per kernel; helper functions are `static` (internal in LLVM IR)"));
    }
    Ok((log, info))
}

/// Links the kernel objects `objects` into one relocatable object `out` (`ld.lld -r` through
/// clang-19) and checks it against the kernel ABI.
pub fn link_objects(
    objects: &[&Path],
    target: &TargetProfile,
    out: &Path,
) -> Result<(CompileLog, ObjectInfo), Diagnostic> {
    let clang = find_clang()?;
    let mut command = vec![
        clang.display().to_string(),
        format!("--target={}", target.cpu.triple),
        "-fuse-ld=lld".into(),
        "-nostdlib".into(),
        "-r".into(),
    ];
    command.extend(objects.iter().map(|o| o.display().to_string()));
    command.extend(["-o".into(), out.display().to_string()]);
    let log = run(&command, None)?;
    let bytes =
        std::fs::read(out).map_err(|e| Diagnostic::error(format!("cannot read `{}`: {e}", out.display())))?;
    let info = check_object(&bytes, &target.cpu.triple)
        .map_err(|d| d.with_note(format!("linked with: {}", log.command_line())))?;
    Ok((log, info))
}
