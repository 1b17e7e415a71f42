//! LLVM IR text -> ELF relocatable object, with clang-19 for the target profile's triple and CPU.
//!
//! The options make a freestanding object a small loader can map: position-independent code
//! (`-fPIC`, small code model: sections within ±2 GiB of each other), no stack protector (it
//! would need a TLS guard and `__stack_chk_fail`), no unwind tables, and `-ffp-contract=on`
//! (the backend fuses only what the IR marks `contract`). The IR itself carries the rest: GOT
//! calls for imports, inline stack probes, no fast-math outside `vectorize`. Every object is
//! checked against the kernel ABI before `compile` returns, whoever wrote the IR.

use crate::abi::{check_object, Arch, ObjectInfo};
use ekb_ir::{Diagnostic, TargetProfile};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// Environment variable naming the clang 19 binary to use (a path, or a name looked up in `PATH`).
pub const CLANG_ENV: &str = "EKB_CLANG";

/// What one compiler run did.
#[derive(Debug, Clone, PartialEq)]
pub struct CompileLog {
    /// Program and arguments, as run.
    pub command: Vec<String>,
    pub duration: Duration,
    /// Whether the object came from the object cache ([`crate::cache`]) instead of a clang
    /// process (`command` is then the one that made it; `duration` the cache's read).
    pub cached: bool,
    /// clang's diagnostics: warnings and `-Rpass` remarks (one `remark: ... vectorized loop`
    /// per vectorised loop; `loop not vectorized` warnings when a `vectorize` hint failed).
    pub stderr: String,
}

impl CompileLog {
    /// The command as one shell-quoted line.
    pub fn command_line(&self) -> String {
        self.command.iter().map(|a| shell_quote(a)).collect::<Vec<_>>().join(" ")
    }
}

fn shell_quote(s: &str) -> String {
    if !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || "-_=+.,/:@%".contains(c)) {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// The clang 19 binary: `$EKB_CLANG` if set, else `clang-19` on `PATH`, else LLVM 19's own
/// directory. Missing means a diagnostic telling how to install it.
pub fn find_clang() -> Result<PathBuf, Diagnostic> {
    if let Some(v) = std::env::var_os(CLANG_ENV).filter(|v| !v.is_empty()) {
        let p = PathBuf::from(&v);
        let found =
            if p.components().count() > 1 { p.is_file().then_some(p.clone()) } else { search_path(&p) };
        return found.ok_or_else(|| {
            Diagnostic::error(format!("{CLANG_ENV}=`{}` does not name a clang binary", p.display()))
                .with_hint(format!("unset {CLANG_ENV} to use clang-19 from PATH, or run toolchains/setup.sh"))
        });
    }
    search_path(Path::new("clang-19"))
        .or_else(|| {
            let p = PathBuf::from("/usr/lib/llvm-19/bin/clang");
            p.is_file().then_some(p)
        })
        .ok_or_else(|| {
            Diagnostic::error("clang-19 not found: run toolchains/setup.sh")
                .with_hint(format!("or set {CLANG_ENV} to a clang 19 binary"))
        })
}

fn search_path(name: &Path) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|d| d.join(name)).find(|p| p.is_file())
}

/// The code generation options for `target` (everything but input and output).
pub fn codegen_args(target: &TargetProfile) -> Vec<String> {
    let cpu = &target.cpu;
    let mut args = vec![
        "-c".to_string(),
        "-O3".into(),
        format!("--target={}", cpu.triple),
        // x86 takes the CPU as -march (its -mcpu is unsupported); other targets as -mcpu.
        if Arch::of_triple(&cpu.triple) == Some(Arch::X86_64) {
            format!("-march={}", cpu.cpu)
        } else {
            format!("-mcpu={}", cpu.cpu)
        },
    ];
    for f in &cpu.features {
        args.extend(["-Xclang".into(), "-target-feature".into(), "-Xclang".into(), f.clone()]);
    }
    args.extend(
        [
            "-fPIC",
            "-fno-stack-protector",
            "-fno-unwind-tables",
            "-fno-asynchronous-unwind-tables",
            "-ffp-contract=on",
            "-Rpass=loop-vectorize",
            // No shrink-wrapping: LLVM 19 may then place the prologue after the first block,
            // and the inline stack probes of a frame over a page (`"probe-stack"`, so a
            // kernel's large locals never step over the guard page) take x86's r11 as scratch
            // even where that block left a live value in it. A parallel body's loop bound
            // was so overwritten and a strided convolution wrote rows past its output.
            "-mllvm",
            "-enable-shrink-wrap=false",
        ]
        .map(String::from),
    );
    args
}

/// Compiles LLVM IR text to an ELF object at `out` for `target`, then checks the object against
/// the kernel ABI. Errors carry clang's stderr (one note per line) and the command line.
///
/// The object may come from the object cache ([`crate::cache`]), keyed by the IR, the options
/// and the compiler; it is checked against the kernel ABI either way, and a fresh object is
/// stored there.
pub fn compile(ir: &str, target: &TargetProfile, out: &Path) -> Result<CompileLog, Diagnostic> {
    let io = |what: &str, e: std::io::Error| Diagnostic::error(format!("cannot {what}: {e}"));
    let started = Instant::now();
    // The cache's directory and this compile's key (no compiler: the compile reports it).
    let cache = crate::cache::dir().and_then(|dir| {
        let clang = find_clang().ok()?;
        let mut args = codegen_args(target);
        args.extend(IR_LANGUAGE.map(String::from));
        let key = crate::cache::key(&clang, &args, ir);
        Some((dir, clang, args, key))
    });
    if let Some((dir, clang, args, key)) = &cache {
        if let Some((bytes, stderr)) = crate::cache::get(dir, key) {
            if check_object(&bytes, &target.cpu.triple).is_ok() && std::fs::write(out, &bytes).is_ok() {
                let mut command = vec![clang.display().to_string()];
                command.extend(args.iter().cloned());
                command.extend(["<ir>".into(), "-o".into(), out.display().to_string()]);
                return Ok(CompileLog { command, duration: started.elapsed(), cached: true, stderr });
            }
        }
    }
    // Always `kernels.ll` (in a directory of its own): the object names its source file, so
    // the same IR gives the same bytes.
    let dir = tempfile::Builder::new()
        .prefix("ekb-kernels-")
        .tempdir()
        .map_err(|e| io("create a temporary directory", e))?;
    let input = dir.path().join("kernels.ll");
    std::fs::write(&input, ir).map_err(|e| io("write the LLVM IR", e))?;
    let input = input.display().to_string();
    let (log, _) = compile_input(&input, &IR_LANGUAGE, target, out, None)?;
    if let Some((dir, _, _, key)) = &cache {
        if let Ok(bytes) = std::fs::read(out) {
            crate::cache::put(dir, key, &bytes, &log.stderr);
        }
    }
    Ok(log)
}

/// clang's options for reading LLVM IR.
const IR_LANGUAGE: [&str; 2] = ["-x", "ir"];

/// Runs clang with [`codegen_args`] on the file `input` (a path, relative to `cwd` when given),
/// read as `language` (clang's `-x` and any options of the language), into the object `out`,
/// and checks the object against the kernel ABI.
pub(crate) fn compile_input(
    input: &str,
    language: &[&str],
    target: &TargetProfile,
    out: &Path,
    cwd: Option<&Path>,
) -> Result<(CompileLog, ObjectInfo), Diagnostic> {
    let clang = find_clang()?;
    let mut command = vec![clang.display().to_string()];
    command.extend(codegen_args(target));
    command.extend(language.iter().map(|a| a.to_string()));
    command.push(input.to_string());
    command.extend(["-o".into(), out.display().to_string()]);
    let log = run(&command, cwd)?;
    let bad_feature: Vec<&str> =
        log.stderr.lines().filter(|l| l.contains("is not a recognized feature")).collect();
    if !bad_feature.is_empty() {
        let mut d = Diagnostic::error(format!(
            "target profile `{}` names a CPU feature clang does not know",
            target.name
        ))
        .with_hint("fix `[cpu] features` in the profile");
        for l in bad_feature {
            d = d.with_note(l.trim().to_string());
        }
        return Err(d);
    }
    let bytes =
        std::fs::read(out).map_err(|e| Diagnostic::error(format!("cannot read `{}`: {e}", out.display())))?;
    let info = check_object(&bytes, &target.cpu.triple)
        .map_err(|d| d.with_note(format!("compiled with: {}", log.command_line())))?;
    Ok((log, info))
}

/// The assembly clang makes of `ir` for `target`, with [`compile`]'s options (`-S` instead of
/// `-c`): the instructions of the object `compile` would write, for people reading them
/// (`ekb lower --to asm`) and for tests of code quality (aarch64 code is read, not timed, under
/// qemu).
pub fn assembly(ir: &str, target: &TargetProfile) -> Result<String, Diagnostic> {
    let clang = find_clang()?;
    let io = |what: &str, e: std::io::Error| Diagnostic::error(format!("cannot {what}: {e}"));
    let dir = tempfile::tempdir().map_err(|e| io("create a temporary directory", e))?;
    let (input, out) = (dir.path().join("kernels.ll"), dir.path().join("kernels.s"));
    std::fs::write(&input, ir).map_err(|e| io("write the LLVM IR", e))?;
    let mut command = vec![clang.display().to_string()];
    command.extend(codegen_args(target).into_iter().filter(|a| a != "-c"));
    command.extend(["-S".into(), "-x".into(), "ir".into(), input.display().to_string()]);
    command.extend(["-o".into(), out.display().to_string()]);
    run(&command, None)?;
    std::fs::read_to_string(&out).map_err(|e| io("read the assembly", e))
}

/// Runs a compiler command (in directory `cwd`, else this process's); a non-zero exit is an
/// error carrying its stderr.
pub(crate) fn run(command: &[String], cwd: Option<&Path>) -> Result<CompileLog, Diagnostic> {
    let start = Instant::now();
    let mut cmd = Command::new(&command[0]);
    cmd.args(&command[1..]);
    if let Some(dir) = cwd {
        cmd.current_dir(dir);
    }
    let output = cmd.output().map_err(|e| Diagnostic::error(format!("cannot run `{}`: {e}", command[0])))?;
    let log = CompileLog {
        command: command.to_vec(),
        duration: start.elapsed(),
        cached: false,
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    };
    if !output.status.success() {
        let program =
            Path::new(&command[0]).file_name().map_or(command[0].clone(), |n| n.to_string_lossy().into());
        let mut d = Diagnostic::error(format!("{program} failed ({})", output.status));
        for l in log.stderr.lines().filter(|l| !l.trim().is_empty()) {
            d = d.with_note(l.to_string());
        }
        return Err(d.with_note(format!("command: {}", log.command_line())));
    }
    Ok(log)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_flag_depends_on_the_architecture() {
        let mut t = TargetProfile::load("host").unwrap();
        t.cpu.triple = "x86_64-unknown-linux-gnu".into();
        t.cpu.cpu = "skylake".into();
        t.cpu.features = vec!["+avx2".into()];
        let a = codegen_args(&t);
        assert!(a.contains(&"-march=skylake".to_string()), "{a:?}");
        assert!(a.windows(4).any(|w| w == ["-Xclang", "-target-feature", "-Xclang", "+avx2"]), "{a:?}");
        t.cpu.triple = "aarch64-unknown-linux-gnu".into();
        t.cpu.cpu = "cortex-a76".into();
        assert!(codegen_args(&t).contains(&"-mcpu=cortex-a76".to_string()));
    }

    #[test]
    fn command_lines_quote_what_the_shell_would_split() {
        let log = CompileLog {
            command: vec!["clang-19".into(), "-o".into(), "a b.o".into(), "it's".into()],
            duration: Duration::ZERO,
            cached: false,
            stderr: String::new(),
        };
        assert_eq!(log.command_line(), "clang-19 -o 'a b.o' 'it'\\''s'");
    }
}
