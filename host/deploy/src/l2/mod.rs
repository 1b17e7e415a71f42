//! L2, the backend level of the unified IR (`docs/l2.md`): an L1 module (the plan: buffers,
//! kernel signatures, run order, GPU launch geometry) of which any kernels are given as source in
//! the backend's own language, edited directly, instead of being emitted from their L1 body.
//!
//! The folder form ([`read`], [`write`]):
//!
//! ```text
//! candidate.l2/
//!   module.ekir          the L1 module: every buffer, kernel signature and `run`
//!   kernels/NAME.ll      kernel NAME as LLVM IR (CPU), or NAME.c (C, CPU),
//!   kernels/NAME.cl      NAME.cl (OpenCL C) or NAME.cu (CUDA C) for a GPU
//! ```
//!
//! A kernel without a file is emitted from its L1 body as usual. [`native`] makes the same form
//! of a native answer: one kernel over all of a graph's buffers.
//!
//! What must stay true: a kernel source names a kernel of the module, at most one source per
//! kernel, in a language of the backend (checked by the driver's adapter stage, located in the
//! source's file); every source keeps its file name (relative to the folder's parent as given),
//! so the compiler's messages name the candidate's own file and lines.

pub mod native;

use ekb_ir::l1::{self, Module};
use ekb_ir::{Diagnostic, SourceFile, TargetProfile};
use ekb_wire::payload::Backend;
use std::path::{Path, PathBuf};

/// The L1 module's file in an L2 folder.
pub const MODULE_FILE: &str = "module.ekir";
/// The folder of kernel sources in an L2 folder.
pub const KERNELS_DIR: &str = "kernels";

/// The language of a kernel source, by its file extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KernelLang {
    /// `.ll`: LLVM IR, a whole module defining `ekb_k_NAME` (CPU).
    LlvmIr,
    /// `.c`: freestanding C11 defining `ekb_k_NAME` (CPU).
    C,
    /// `.cl`: the OpenCL C function `NAME` (the `opencl` backend).
    OpenCl,
    /// `.cu`: the CUDA C function `NAME` (the `cuda` backend).
    Cuda,
}

impl KernelLang {
    pub const ALL: [KernelLang; 4] =
        [KernelLang::LlvmIr, KernelLang::C, KernelLang::OpenCl, KernelLang::Cuda];

    pub fn extension(self) -> &'static str {
        match self {
            KernelLang::LlvmIr => "ll",
            KernelLang::C => "c",
            KernelLang::OpenCl => "cl",
            KernelLang::Cuda => "cu",
        }
    }

    pub fn from_extension(ext: &str) -> Option<KernelLang> {
        KernelLang::ALL.into_iter().find(|l| l.extension() == ext)
    }

    /// Whether `backend` compiles this language.
    pub fn fits(self, backend: Backend) -> bool {
        matches!(
            (self, backend),
            (KernelLang::LlvmIr | KernelLang::C, Backend::CpuLlvm)
                | (KernelLang::OpenCl, Backend::OpenCl)
                | (KernelLang::Cuda, Backend::Cuda)
        )
    }

    /// The languages of `backend`, as extensions: `.ll or .c`, `.cl`, `.cu`.
    pub fn of_backend(backend: Backend) -> String {
        let exts: Vec<String> = KernelLang::ALL
            .into_iter()
            .filter(|l| l.fits(backend))
            .map(|l| format!("`.{}`", l.extension()))
            .collect();
        exts.join(" or ")
    }
}

/// The hand-written source of one kernel; `source.name` is what diagnostics call it.
#[derive(Debug, Clone)]
pub struct KernelSource {
    pub kernel: String,
    pub lang: KernelLang,
    pub source: SourceFile,
}

/// An L2 candidate: the L1 module and the kernels given as source.
#[derive(Debug, Clone)]
pub struct L2 {
    pub module_source: SourceFile,
    pub module: Module,
    pub kernels: Vec<KernelSource>,
}

/// Reads the L2 folder `dir`; `name` is how diagnostics call the folder (its files are
/// `NAME/module.ekir` and `NAME/kernels/FILE`).
pub fn read(dir: &Path, name: &str) -> Result<L2, Vec<Diagnostic>> {
    let text = |file: &Path, shown: String| -> Result<SourceFile, Vec<Diagnostic>> {
        let bytes = std::fs::read(file)
            .map_err(|e| vec![Diagnostic::error(format!("cannot read `{shown}`: {e}"))])?;
        SourceFile::from_bytes(shown, bytes).map_err(|d| vec![d])
    };
    let module_source = text(&dir.join(MODULE_FILE), format!("{name}/{MODULE_FILE}")).map_err(|ds| {
        ds.into_iter()
            .map(|d| d.with_hint(format!("an L2 folder holds its L1 module as `{MODULE_FILE}` (docs/l2.md)")))
            .collect::<Vec<_>>()
    })?;
    let module = l1::parse::parse(&module_source).map_err(|d| vec![d])?;
    let mut kernels = Vec::new();
    let mut diags = Vec::new();
    let mut files: Vec<PathBuf> = match std::fs::read_dir(dir.join(KERNELS_DIR)) {
        Ok(entries) => entries.filter_map(|e| e.ok().map(|e| e.path())).collect(),
        Err(_) => Vec::new(),
    };
    files.sort();
    for path in files {
        let file = path.file_name().map_or(String::new(), |n| n.to_string_lossy().into_owned());
        let shown = format!("{name}/{KERNELS_DIR}/{file}");
        let (stem, ext) = file.rsplit_once('.').unwrap_or((file.as_str(), ""));
        let Some(lang) = KernelLang::from_extension(ext) else {
            diags.push(
                Diagnostic::error(format!("`{shown}` is not a kernel source"))
                    .with_expected("`KERNEL.ll`, `KERNEL.c`, `KERNEL.cl` or `KERNEL.cu`"),
            );
            continue;
        };
        let source = match text(&path, shown.clone()) {
            Ok(s) => s,
            Err(ds) => {
                diags.extend(ds);
                continue;
            }
        };
        if !module.kernels.iter().any(|k| k.name == stem) {
            let names = module.kernels.iter().map(|k| k.name.as_str());
            let mut d = Diagnostic::error(format!(
                "`{shown}` is the source of kernel `{stem}`, which module {} does not have",
                module.name
            ))
            .with_expected(format!("one of: {}", names.clone().collect::<Vec<_>>().join(", ")));
            if let Some(h) = ekb_ir::diag::did_you_mean(stem, names) {
                d = d.with_hint(h);
            }
            diags.push(d);
            continue;
        }
        if let Some(other) = kernels.iter().find(|k: &&KernelSource| k.kernel == stem) {
            diags.push(Diagnostic::error(format!(
                "kernel `{stem}` has two sources, `{}` and `{shown}`",
                other.source.name
            )));
            continue;
        }
        kernels.push(KernelSource { kernel: stem.to_string(), lang, source });
    }
    if !diags.is_empty() {
        return Err(diags);
    }
    Ok(L2 { module_source, module, kernels })
}

/// Writes `module` as an L2 folder `dir` for `backend` on `target`: `module.ekir`, and every
/// kernel's source as the adapter emits it (a whole LLVM IR module per CPU kernel; the kernel's
/// function for a GPU, the emitter's preamble being in scope). Returns the files written.
pub fn write(
    dir: &Path,
    module: &Module,
    backend: Backend,
    target: &TargetProfile,
) -> Result<Vec<PathBuf>, Diagnostic> {
    let kernels_dir = dir.join(KERNELS_DIR);
    std::fs::create_dir_all(&kernels_dir)
        .map_err(|e| Diagnostic::error(format!("cannot create `{}`: {e}", kernels_dir.display())))?;
    let mut files = vec![(dir.join(MODULE_FILE), l1::print::print(module))];
    for k in &module.kernels {
        let (lang, text) = match backend {
            Backend::CpuLlvm => {
                let alone = Module { kernels: vec![k.clone()], ..module.clone() };
                (KernelLang::LlvmIr, ekb_llvm::emit(&alone, target)?)
            }
            Backend::OpenCl | Backend::Cuda => {
                let (lang, dialect) = match backend {
                    Backend::Cuda => (KernelLang::Cuda, ekb_gpu_c::Dialect::Cuda),
                    _ => (KernelLang::OpenCl, ekb_gpu_c::Dialect::OpenCl),
                };
                let function = ekb_gpu_c::emit_kernel(module, dialect, target, &k.name)?;
                let header = format!(
                    "// L2 kernel `{}` in {} (docs/l2.md): the launch geometry is the plan's, in {MODULE_FILE};\n\
                     // the emitter's preamble (docs/gpu.md) is in scope.\n",
                    k.name,
                    dialect.name()
                );
                (lang, header + &function)
            }
        };
        files.push((kernels_dir.join(format!("{}.{}", k.name, lang.extension())), text));
    }
    for (path, text) in &files {
        std::fs::write(path, text)
            .map_err(|e| Diagnostic::error(format!("cannot write `{}`: {e}", path.display())))?;
    }
    Ok(files.into_iter().map(|(p, _)| p).collect())
}

/// The CPU object of a module some of whose kernels are hand-written: the emitted LLVM IR `ir`
/// of the others (`None` when there are none) and each of `kernels` compiled on its own, then
/// linked into one object, which is checked against the kernel ABI like any other.
pub(crate) fn cpu_object(
    ir: Option<&str>,
    kernels: &[KernelSource],
    target: &TargetProfile,
) -> Result<crate::driver::Code, Vec<Diagnostic>> {
    let started = std::time::Instant::now();
    let dir = tempfile::tempdir()
        .map_err(|e| vec![Diagnostic::error(format!("cannot create a temporary directory: {e}"))])?;
    let mut objects = Vec::new();
    let mut stderr = String::new();
    if let Some(ir) = ir {
        let path = dir.path().join("emitted.o");
        let log = ekb_llvm::compile(ir, target, &path).map_err(|d| vec![d])?;
        stderr.push_str(&log.stderr);
        objects.push(path);
    }
    let mut diags = Vec::new();
    for (i, k) in kernels.iter().enumerate() {
        let lang = match k.lang {
            KernelLang::LlvmIr => ekb_llvm::KernelLang::LlvmIr,
            KernelLang::C => ekb_llvm::KernelLang::C,
            KernelLang::OpenCl | KernelLang::Cuda => unreachable!("the adapter stage checked the languages"),
        };
        let path = dir.path().join(format!("kernel{i}.o"));
        match ekb_llvm::compile_kernel(&k.source.text, &k.source.name, lang, &k.kernel, target, &path) {
            Ok((log, _)) => {
                stderr.push_str(&log.stderr);
                objects.push(path);
            }
            Err(d) => diags.push(d),
        }
    }
    if !diags.is_empty() {
        return Err(diags);
    }
    let out = dir.path().join("kernels.o");
    let paths: Vec<&Path> = objects.iter().map(PathBuf::as_path).collect();
    let (mut log, _) = ekb_llvm::link_objects(&paths, target, &out).map_err(|d| vec![d])?;
    let bytes = std::fs::read(&out)
        .map_err(|e| vec![Diagnostic::error(format!("cannot read `{}`: {e}", out.display()))])?;
    stderr.push_str(&log.stderr);
    log.stderr = stderr;
    log.duration = started.elapsed();
    Ok(crate::driver::Code { bytes, log })
}

/// An error for each of `kernels` that is not in a language of `backend`, located in its file.
pub fn check_languages(kernels: &[KernelSource], backend: Backend) -> Vec<Diagnostic> {
    kernels
        .iter()
        .filter(|k| !k.lang.fits(backend))
        .map(|k| {
            k.source.locate(
                Diagnostic::error(format!(
                    "kernel `{}` is given as `.{}` source, which the {} backend does not compile",
                    k.kernel,
                    k.lang.extension(),
                    backend.name()
                ))
                .with_expected(KernelLang::of_backend(backend)),
            )
        })
        .collect()
}
