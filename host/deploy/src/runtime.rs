//! Finding the board runtime binaries (`ekb-rt`, static musl builds for x86_64 and aarch64,
//! and the GPU builds: glibc binaries with the `opencl` and `cuda` features) that transports
//! start or copy to devices and bundles ship.
//!
//! Search order for an architecture, first hit wins:
//! 1. the environment: `EKB_RT_X86_64` / `EKB_RT_AARCH64`, and `EKB_RT` for this machine's
//!    own architecture (a variable that is set must name a usable file: it is never skipped);
//! 2. next to the `ekb` executable: `ekb-rt-x86_64` / `ekb-rt-aarch64` (how an installation or
//!    a release archive ships them);
//! 3. the workspace's cargo output: `target/<arch>-unknown-linux-musl/release/ekb-rt`, under
//!    `$CARGO_TARGET_DIR` when set, else under the workspace `ekb` was built from.
//!
//! The GPU runtime ([`find_gpu_runtime`], for GPU payloads) is searched the same way under its
//! own names: `EKB_RT_GPU_X86_64` / `EKB_RT_GPU_AARCH64` and `EKB_RT_GPU`, `ekb-rt-gpu-<arch>`
//! next to `ekb`, `target/<arch>-unknown-linux-gnu/release/ekb-rt` (and for this machine's own
//! architecture `target/release/ekb-rt`).
//!
//! What it must keep true: a binary is only returned after its ELF header says it is a 64-bit
//! little-endian executable for the requested architecture; the GPU search only returns a
//! binary whose bytes carry the runtime's backends marker (`ekb_rt::BACKENDS_MARKER`) naming a
//! GPU backend, so a CPU-only build (e.g. `target/release/ekb-rt`, next to a workspace `ekb`)
//! is never started for a GPU payload (it would refuse it); whether it is statically linked
//! is recorded, so transports that copy it to a device can refuse a dynamic one (a GPU runtime
//! is dynamic by design: it loads the board's drivers). Nothing is found means one diagnostic
//! listing every place tried and the command that builds it.

use ekb_ir::Diagnostic;
use ekb_llvm::Arch;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The variable naming the runtime for this machine's own architecture.
pub const EKB_RT: &str = "EKB_RT";

/// The variable naming the runtime for `arch`.
pub fn env_var(arch: Arch) -> &'static str {
    match arch {
        Arch::X86_64 => "EKB_RT_X86_64",
        Arch::Aarch64 => "EKB_RT_AARCH64",
    }
}

/// The Rust target the static runtime for `arch` is built for.
pub fn musl_triple(arch: Arch) -> &'static str {
    match arch {
        Arch::X86_64 => "x86_64-unknown-linux-musl",
        Arch::Aarch64 => "aarch64-unknown-linux-musl",
    }
}

/// The file name of the runtime for `arch` next to `ekb` and inside bundles.
pub fn file_name(arch: Arch) -> String {
    format!("ekb-rt-{}", arch.name())
}

/// The command that builds the static runtime for `arch`.
pub fn build_command(arch: Arch) -> String {
    format!("cargo build --release -p ekb-rt --target {}", musl_triple(arch))
}

/// The variable naming the GPU runtime for this machine's own architecture.
pub const EKB_RT_GPU: &str = "EKB_RT_GPU";

/// The variable naming the GPU runtime for `arch`.
pub fn gpu_env_var(arch: Arch) -> &'static str {
    match arch {
        Arch::X86_64 => "EKB_RT_GPU_X86_64",
        Arch::Aarch64 => "EKB_RT_GPU_AARCH64",
    }
}

/// The Rust target the GPU runtime for `arch` is built for (glibc: it loads the drivers).
pub fn gnu_triple(arch: Arch) -> &'static str {
    match arch {
        Arch::X86_64 => "x86_64-unknown-linux-gnu",
        Arch::Aarch64 => "aarch64-unknown-linux-gnu",
    }
}

/// The file name of the GPU runtime for `arch` next to `ekb` and inside bundles.
pub fn gpu_file_name(arch: Arch) -> String {
    format!("ekb-rt-gpu-{}", arch.name())
}

/// The command that builds the GPU runtime for `arch`.
pub fn gpu_build_command(arch: Arch) -> String {
    format!("cargo build --release -p ekb-rt --features opencl,cuda --target {}", gnu_triple(arch))
}

/// A runtime binary found on this machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Runtime {
    pub arch: Arch,
    pub path: PathBuf,
    /// How it was found (`$EKB_RT_AARCH64`, `next to ekb`, `workspace build`).
    pub found_by: String,
    /// No program interpreter: runs on any Linux of its architecture.
    pub is_static: bool,
    /// Found as the GPU runtime (a glibc binary that loads the board's GPU drivers).
    pub gpu: bool,
    /// The backends its marker names (`cpu-llvm`, `opencl`, `cuda`); empty for a binary built
    /// before the marker, which is taken as CPU-only.
    pub backends: Vec<String>,
    pub size_bytes: u64,
    /// SHA-256 of the file, hex.
    pub sha256: String,
}

impl Runtime {
    /// A short content id (16 hex digits of the SHA-256): devices keep the runtime under a
    /// name that carries it, so a rebuilt runtime is a new file and an outdated one is never
    /// run.
    pub fn content_id(&self) -> &str {
        &self.sha256[..16]
    }

    /// Inspects a file as the runtime for `arch`.
    pub fn inspect(path: &Path, arch: Arch, found_by: &str) -> Result<Runtime, Diagnostic> {
        let bytes = std::fs::read(path).map_err(|e| {
            Diagnostic::error(format!("cannot read the runtime `{}` ({found_by}): {e}", path.display()))
        })?;
        let elf = ElfInfo::parse(&bytes).map_err(|why| {
            Diagnostic::error(format!("`{}` ({found_by}) is not an ekb-rt binary: {why}", path.display()))
        })?;
        if elf.arch != Some(arch) {
            let found = elf.arch.map_or(format!("machine {}", elf.machine), |a| a.name().to_string());
            return Err(Diagnostic::error(format!(
                "`{}` ({found_by}) is a runtime for {found}, not {}",
                path.display(),
                arch.name()
            ))
            .with_hint(format!(
                "build the {} runtime with `{}`",
                arch.name(),
                build_command(arch)
            )));
        }
        Ok(Runtime {
            arch,
            path: path.to_path_buf(),
            found_by: found_by.to_string(),
            is_static: !elf.has_interpreter,
            gpu: false,
            backends: backends(&bytes),
            size_bytes: bytes.len() as u64,
            sha256: hex(&Sha256::digest(&bytes)),
        })
    }

    /// An error unless the binary is static (what a device without the host's libc needs) or
    /// the GPU runtime (a glibc binary by design: it loads the device's drivers, so the device
    /// needs a glibc at least as new as the one it was linked against, `docs/gpu.md`).
    pub fn require_static(&self, why: &str) -> Result<(), Diagnostic> {
        if self.is_static || self.gpu {
            return Ok(());
        }
        Err(Diagnostic::error(format!(
            "the runtime `{}` ({}) is dynamically linked; {why} needs the static musl build",
            self.path.display(),
            self.found_by
        ))
        .with_hint(format!("build it with `{}`", build_command(self.arch))))
    }
}

/// The text `ekb-rt` builds into itself to name its backends (`ekb_rt::BACKENDS_MARKER`).
const BACKENDS_MARKER: &[u8] = b"ekb-rt backends: ";

/// The backends named by the marker in a runtime binary's bytes (empty without one).
fn backends(bytes: &[u8]) -> Vec<String> {
    let Some(at) = bytes.windows(BACKENDS_MARKER.len()).position(|w| w == BACKENDS_MARKER) else {
        return Vec::new();
    };
    let rest = &bytes[at + BACKENDS_MARKER.len()..];
    let Some(end) = rest.iter().take(64).position(|&b| b == b';') else { return Vec::new() };
    String::from_utf8_lossy(&rest[..end]).split(' ').filter(|s| !s.is_empty()).map(String::from).collect()
}

/// Whether the backends include a GPU one.
fn runs_gpu(backends: &[String]) -> bool {
    backends.iter().any(|b| b == "opencl" || b == "cuda")
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// What the ELF header and program headers say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct ElfInfo {
    machine: u16,
    arch: Option<Arch>,
    has_interpreter: bool,
}

impl ElfInfo {
    /// Reads a 64-bit little-endian ELF executable's machine and whether it names a program
    /// interpreter (`PT_INTERP`: dynamically linked). Every offset is bounds-checked.
    fn parse(b: &[u8]) -> Result<ElfInfo, String> {
        if b.len() < 64 || b[..4] != *b"\x7fELF" {
            return Err("not an ELF file".into());
        }
        if b[4] != 2 || b[5] != 1 {
            return Err("not a 64-bit little-endian ELF file".into());
        }
        let u16_at = |i: usize| u16::from_le_bytes([b[i], b[i + 1]]);
        let e_type = u16_at(16);
        // ET_EXEC, or ET_DYN for position-independent executables.
        if e_type != 2 && e_type != 3 {
            return Err(format!("ELF type {e_type} is not an executable"));
        }
        let machine = u16_at(18);
        let arch = match machine {
            62 => Some(Arch::X86_64),
            183 => Some(Arch::Aarch64),
            _ => None,
        };
        let mut phoff = [0u8; 8];
        phoff.copy_from_slice(&b[32..40]);
        let phoff = u64::from_le_bytes(phoff);
        let (phentsize, phnum) = (u64::from(u16_at(54)), u64::from(u16_at(56)));
        let mut has_interpreter = false;
        for i in 0..phnum {
            let at = phoff.checked_add(i.checked_mul(phentsize).ok_or("program headers overflow")?);
            let at = at
                .and_then(|a| usize::try_from(a).ok())
                .filter(|&a| a.checked_add(4).is_some_and(|e| e <= b.len()));
            let at = at.ok_or("program headers lie outside the file")?;
            if u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]]) == 3 {
                has_interpreter = true;
            }
        }
        Ok(ElfInfo { machine, arch, has_interpreter })
    }
}

/// Where to look: the environment, the directory of `ekb`, and cargo target directories.
#[derive(Debug, Clone, Default)]
pub struct Search {
    pub vars: HashMap<String, OsString>,
    pub exe_dir: Option<PathBuf>,
    pub target_dirs: Vec<PathBuf>,
}

impl Search {
    /// This process's environment, executable and workspace.
    pub fn from_env() -> Search {
        let names = [EKB_RT, env_var(Arch::X86_64), env_var(Arch::Aarch64)];
        let gpu_names = [EKB_RT_GPU, gpu_env_var(Arch::X86_64), gpu_env_var(Arch::Aarch64)];
        let vars = names
            .into_iter()
            .chain(gpu_names)
            .filter_map(|k| std::env::var_os(k).filter(|v| !v.is_empty()).map(|v| (k.to_string(), v)))
            .collect();
        let exe_dir = std::env::current_exe().ok().and_then(|p| p.parent().map(Path::to_path_buf));
        let mut target_dirs = Vec::new();
        if let Some(d) = std::env::var_os("CARGO_TARGET_DIR").filter(|v| !v.is_empty()) {
            target_dirs.push(PathBuf::from(d));
        }
        // The workspace this crate was built in (host/deploy -> the workspace root).
        if let Some(root) = Path::new(env!("CARGO_MANIFEST_DIR")).ancestors().nth(2) {
            target_dirs.push(root.join("target"));
        }
        Search { vars, exe_dir, target_dirs }
    }

    /// The places tried for `arch`, in order, each with how it is named in messages; the
    /// environment's entries come first and are marked as required.
    fn candidates(&self, arch: Arch) -> Vec<(PathBuf, String, bool)> {
        let mut out = Vec::new();
        let mut vars = vec![env_var(arch)];
        if Arch::host() == Some(arch) {
            vars.push(EKB_RT);
        }
        for v in vars {
            if let Some(p) = self.vars.get(v) {
                out.push((PathBuf::from(p), format!("${v}"), true));
            }
        }
        if let Some(d) = &self.exe_dir {
            out.push((d.join(file_name(arch)), "next to ekb".into(), false));
        }
        for t in &self.target_dirs {
            out.push((t.join(musl_triple(arch)).join("release/ekb-rt"), "workspace build".into(), false));
        }
        out
    }

    /// The places tried for the GPU runtime of `arch`, as [`Search::candidates`].
    fn gpu_candidates(&self, arch: Arch) -> Vec<(PathBuf, String, bool)> {
        let mut out = Vec::new();
        let mut vars = vec![gpu_env_var(arch)];
        if Arch::host() == Some(arch) {
            vars.push(EKB_RT_GPU);
        }
        for v in vars {
            if let Some(p) = self.vars.get(v) {
                out.push((PathBuf::from(p), format!("${v}"), true));
            }
        }
        if let Some(d) = &self.exe_dir {
            out.push((d.join(gpu_file_name(arch)), "next to ekb".into(), false));
        }
        for t in &self.target_dirs {
            out.push((t.join(gnu_triple(arch)).join("release/ekb-rt"), "workspace GPU build".into(), false));
            if Arch::host() == Some(arch) {
                out.push((t.join("release/ekb-rt"), "workspace build for this machine".into(), false));
            }
        }
        out
    }

    /// The runtime for `arch`.
    pub fn find(&self, arch: Arch) -> Result<Runtime, Diagnostic> {
        let candidates = self.candidates(arch);
        Search::first(arch, &candidates, false).ok_or_else(|| {
            let d = Diagnostic::error(format!("no ekb-rt runtime for {} found", arch.name())).with_hint(
                format!("build it with `{}`, or set {} to the binary", build_command(arch), env_var(arch)),
            );
            tried(d, candidates)
        })?
    }

    /// The GPU runtime for `arch`.
    pub fn find_gpu(&self, arch: Arch) -> Result<Runtime, Diagnostic> {
        let candidates = self.gpu_candidates(arch);
        Search::first(arch, &candidates, true).ok_or_else(|| {
            let d = Diagnostic::error(format!("no GPU build of ekb-rt for {} found", arch.name())).with_hint(
                format!(
                    "build it with `{}`, or set {} to the binary",
                    gpu_build_command(arch),
                    gpu_env_var(arch)
                ),
            );
            tried(d, candidates)
        })?
    }

    /// The first candidate that is set or exists, inspected; for the GPU runtime, the first
    /// that is a GPU build (a CPU-only build found on the way is passed over, one named by the
    /// environment is an error).
    fn first(
        arch: Arch,
        candidates: &[(PathBuf, String, bool)],
        gpu: bool,
    ) -> Option<Result<Runtime, Diagnostic>> {
        for (path, how, required) in candidates {
            if !*required && !path.is_file() {
                continue;
            }
            let r = match Runtime::inspect(path, arch, how) {
                Ok(r) => r,
                Err(e) => return Some(Err(e)),
            };
            if !gpu {
                return Some(Ok(r));
            }
            if runs_gpu(&r.backends) {
                return Some(Ok(Runtime { gpu, ..r }));
            }
            if *required {
                let runs =
                    if r.backends.is_empty() { "no backends marker".into() } else { r.backends.join(" ") };
                return Some(Err(Diagnostic::error(format!(
                    "`{}` ({how}) is a CPU-only build of ekb-rt ({runs}); a GPU payload needs the GPU build",
                    path.display()
                ))
                .with_hint(format!("build it with `{}`", gpu_build_command(arch)))));
            }
        }
        None
    }
}

/// `d` with a note per place tried.
fn tried(mut d: Diagnostic, candidates: Vec<(PathBuf, String, bool)>) -> Diagnostic {
    for (path, how, _) in candidates {
        d = d.with_note(format!("tried {} ({how})", path.display()));
    }
    d
}

/// The runtime for `arch`, searched from this process's environment.
pub fn find_runtime(arch: Arch) -> Result<Runtime, Diagnostic> {
    Search::from_env().find(arch)
}

/// The GPU runtime for `arch` (for GPU payloads), searched from this process's environment.
pub fn find_gpu_runtime(arch: Arch) -> Result<Runtime, Diagnostic> {
    Search::from_env().find_gpu(arch)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A minimal ELF executable header for `machine`, with one program header of `ptype`.
    fn elf(machine: u16, ptype: u32) -> Vec<u8> {
        let mut b = vec![0u8; 64 + 56];
        b[..4].copy_from_slice(b"\x7fELF");
        b[4] = 2;
        b[5] = 1;
        b[16..18].copy_from_slice(&2u16.to_le_bytes());
        b[18..20].copy_from_slice(&machine.to_le_bytes());
        b[32..40].copy_from_slice(&64u64.to_le_bytes());
        b[54..56].copy_from_slice(&56u16.to_le_bytes());
        b[56..58].copy_from_slice(&1u16.to_le_bytes());
        b[64..68].copy_from_slice(&ptype.to_le_bytes());
        b
    }

    #[test]
    fn elf_headers_give_the_machine_and_linking() {
        assert_eq!(
            ElfInfo::parse(&elf(183, 1)),
            Ok(ElfInfo { machine: 183, arch: Some(Arch::Aarch64), has_interpreter: false })
        );
        assert_eq!(
            ElfInfo::parse(&elf(62, 3)),
            Ok(ElfInfo { machine: 62, arch: Some(Arch::X86_64), has_interpreter: true })
        );
        assert_eq!(ElfInfo::parse(b"#!/bin/sh\n"), Err("not an ELF file".to_string()));
        let mut far = elf(62, 1);
        far[32..40].copy_from_slice(&u64::MAX.to_le_bytes());
        assert_eq!(ElfInfo::parse(&far), Err("program headers lie outside the file".to_string()));
    }

    fn search_in(dir: &Path) -> Search {
        Search { vars: HashMap::new(), exe_dir: Some(dir.join("bin")), target_dirs: vec![dir.join("target")] }
    }

    #[test]
    fn the_search_order_is_environment_then_next_to_ekb_then_workspace() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().join("target/aarch64-unknown-linux-musl/release/ekb-rt");
        std::fs::create_dir_all(ws.parent().unwrap()).unwrap();
        std::fs::write(&ws, elf(183, 1)).unwrap();
        let mut s = search_in(dir.path());
        let rt = s.find(Arch::Aarch64).unwrap();
        assert_eq!(
            (rt.path.as_path(), rt.found_by.as_str(), rt.is_static),
            (ws.as_path(), "workspace build", true)
        );
        assert_eq!(rt.size_bytes, 120);

        let next = dir.path().join("bin/ekb-rt-aarch64");
        std::fs::create_dir_all(next.parent().unwrap()).unwrap();
        std::fs::write(&next, elf(183, 3)).unwrap();
        let rt = s.find(Arch::Aarch64).unwrap();
        assert_eq!(
            (rt.path.as_path(), rt.found_by.as_str(), rt.is_static),
            (next.as_path(), "next to ekb", false)
        );
        assert_eq!(
            rt.require_static("a board").unwrap_err().hint.as_deref(),
            Some("build it with `cargo build --release -p ekb-rt --target aarch64-unknown-linux-musl`")
        );

        let env = dir.path().join("custom");
        std::fs::write(&env, elf(183, 1)).unwrap();
        s.vars.insert("EKB_RT_AARCH64".into(), env.clone().into());
        let rt = s.find(Arch::Aarch64).unwrap();
        assert_eq!((&rt.path, rt.found_by.as_str()), (&env, "$EKB_RT_AARCH64"));
        assert_ne!(rt.sha256, Runtime::inspect(&next, Arch::Aarch64, "x").unwrap().sha256);
        assert_eq!(rt.sha256.len(), 64);
        assert_eq!(rt.content_id(), &rt.sha256[..16]);
    }

    #[test]
    fn a_set_variable_is_never_skipped_and_the_architecture_is_checked() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = search_in(dir.path());
        s.vars.insert("EKB_RT_AARCH64".into(), dir.path().join("missing").into());
        let e = s.find(Arch::Aarch64).unwrap_err();
        assert!(e.message.starts_with("cannot read the runtime `"), "{}", e.message);
        assert!(e.message.contains("($EKB_RT_AARCH64)"), "{}", e.message);

        let x86 = dir.path().join("x86");
        std::fs::write(&x86, elf(62, 1)).unwrap();
        s.vars.insert("EKB_RT_AARCH64".into(), x86.clone().into());
        let e = s.find(Arch::Aarch64).unwrap_err();
        assert_eq!(
            e.message,
            format!("`{}` ($EKB_RT_AARCH64) is a runtime for x86_64, not aarch64", x86.display())
        );
    }

    #[test]
    fn the_gpu_runtime_has_names_of_its_own_and_may_be_dynamic() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = search_in(dir.path());
        // The static runtime is not the GPU runtime.
        let musl = dir.path().join("target/x86_64-unknown-linux-musl/release/ekb-rt");
        std::fs::create_dir_all(musl.parent().unwrap()).unwrap();
        std::fs::write(&musl, elf(62, 1)).unwrap();
        let e = s.find_gpu(Arch::Aarch64).unwrap_err();
        assert_eq!(e.message, "no GPU build of ekb-rt for aarch64 found");
        assert_eq!(
            e.hint.as_deref(),
            Some(
                "build it with `cargo build --release -p ekb-rt --features opencl,cuda --target \
                 aarch64-unknown-linux-gnu`, or set EKB_RT_GPU_AARCH64 to the binary"
            )
        );
        let gnu = dir.path().join("target/aarch64-unknown-linux-gnu/release/ekb-rt");
        std::fs::create_dir_all(gnu.parent().unwrap()).unwrap();
        std::fs::write(&gnu, gpu_elf(183)).unwrap();
        let rt = s.find_gpu(Arch::Aarch64).unwrap();
        assert_eq!(
            (rt.path.as_path(), rt.found_by.as_str(), rt.gpu),
            (gnu.as_path(), "workspace GPU build", true)
        );
        assert!(!rt.is_static);
        assert_eq!(rt.require_static("a board"), Ok(()));
        s.vars.insert("EKB_RT_GPU_AARCH64".into(), musl.clone().into());
        assert!(s
            .find_gpu(Arch::Aarch64)
            .unwrap_err()
            .message
            .ends_with("is a runtime for x86_64, not aarch64"));
    }

    /// [`elf`] of a GPU build: dynamic, with the backends marker the runtime carries.
    fn gpu_elf(machine: u16) -> Vec<u8> {
        let mut b = elf(machine, 3);
        b.extend_from_slice(b"\0ekb-rt backends: cpu-llvm opencl cuda;\0");
        b
    }

    #[test]
    fn a_cpu_only_build_is_never_taken_for_the_gpu_runtime() {
        let Some(host) = Arch::host() else { return };
        let machine = if host == Arch::X86_64 { 62 } else { 183 };
        let dir = tempfile::tempdir().unwrap();
        let mut s = search_in(dir.path());
        // `cargo build --release` leaves a CPU-only runtime beside the workspace's `ekb`.
        let cpu = dir.path().join("target/release/ekb-rt");
        std::fs::create_dir_all(cpu.parent().unwrap()).unwrap();
        let mut bytes = elf(machine, 3);
        bytes.extend_from_slice(b"\0ekb-rt backends: cpu-llvm;\0");
        std::fs::write(&cpu, &bytes).unwrap();
        assert_eq!(Runtime::inspect(&cpu, host, "x").unwrap().backends, ["cpu-llvm"]);
        let e = s.find_gpu(host).unwrap_err();
        assert_eq!(e.message, format!("no GPU build of ekb-rt for {} found", host.name()));
        // Named by the environment, it is refused with the reason.
        s.vars.insert(gpu_env_var(host).into(), cpu.clone().into());
        let e = s.find_gpu(host).unwrap_err();
        assert_eq!(
            e.message,
            format!(
                "`{}` (${}) is a CPU-only build of ekb-rt (cpu-llvm); a GPU payload needs the GPU build",
                cpu.display(),
                gpu_env_var(host)
            )
        );
        // The GPU build in the same place is taken.
        s.vars.clear();
        std::fs::write(&cpu, gpu_elf(machine)).unwrap();
        let rt = s.find_gpu(host).unwrap();
        assert_eq!((rt.path.as_path(), rt.gpu), (cpu.as_path(), true));
        assert_eq!(rt.backends, ["cpu-llvm", "opencl", "cuda"]);
    }

    #[test]
    fn nothing_found_lists_every_place_tried_and_how_to_build() {
        let dir = tempfile::tempdir().unwrap();
        let e = search_in(dir.path()).find(Arch::X86_64).unwrap_err();
        assert_eq!(e.message, "no ekb-rt runtime for x86_64 found");
        assert_eq!(
            e.hint.as_deref(),
            Some("build it with `cargo build --release -p ekb-rt --target x86_64-unknown-linux-musl`, or set EKB_RT_X86_64 to the binary")
        );
        assert_eq!(
            e.notes,
            vec![
                format!("tried {} (next to ekb)", dir.path().join("bin/ekb-rt-x86_64").display()),
                format!(
                    "tried {} (workspace build)",
                    dir.path().join("target/x86_64-unknown-linux-musl/release/ekb-rt").display()
                ),
            ]
        );
    }
}
