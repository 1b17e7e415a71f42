//! Bundles for air-gapped boards: one directory holding the runtime for the target's
//! architecture (the static one, or the GPU runtime when a payload runs on the GPU), the payloads, a plain POSIX `run.sh` that runs each payload with `ekb-rt run`
//! and writes one report file per payload into `reports/`, a `SHA256SUMS` file to check the
//! copy, and a short README for the person at the board.
//!
//! ```text
//! BUNDLE/run.sh  README.txt  SHA256SUMS  bin/ekb-rt-<arch>  payloads/<name>.ekp  [reports/<name>.ekr]
//! ```
//!
//! What it must keep true: `run.sh` needs nothing but a POSIX shell, `uname` and `mkdir` on the
//! board (no ekb, no Python, no network); every payload in a bundle was parsed and is for the
//! bundle's target; a bundle with a GPU payload carries the GPU runtime; an existing directory is only ever replaced when it is a bundle and the
//! caller forces it.

use crate::runtime::Runtime;
use ekb_ir::Diagnostic;
use ekb_wire::payload::{Backend, Payload};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// The first line after the shebang of every `run.sh` this module writes: how a bundle is
/// recognised before it is replaced.
const MARKER: &str = "# EdgeKernelBench bundle runner";

/// The runner script for runtimes of architecture `arch`.
pub fn run_script(arch: &str) -> String {
    RUN_SH.replace("@ARCH@", arch)
}

const RUN_SH: &str = r#"#!/bin/sh
# EdgeKernelBench bundle runner
# Runs every payload in payloads/ with the bundled ekb-rt and writes one report per payload to
# reports/NAME.ekr, and a description of this board to reports/device.txt.
#
# Usage: sh run.sh [ekb-rt run options]     e.g. sh run.sh --threads 4, sh run.sh --big-cores
# Exit status: 0 every payload correct, 1 some payload failed or could not run (the reports say
# why), 2 the runtime could not run here at all.
# EKB_RT_LAUNCHER, when set, is put before the runtime (e.g. qemu-aarch64 to emulate a board).
set -u
case $0 in
    */*) here=${0%/*} ;;
    *) here=. ;;
esac
here=$(cd "$here" && pwd) || exit 2
arch=@ARCH@
rt="$here/bin/ekb-rt-$arch"
launcher=${EKB_RT_LAUNCHER:-}
if [ -z "$launcher" ]; then
    machine=$(uname -m)
    case $machine in
        arm64) machine=aarch64 ;;
        amd64) machine=x86_64 ;;
    esac
    if [ "$machine" != "$arch" ]; then
        echo "run.sh: this bundle is for $arch boards, this machine is $machine" >&2
        exit 2
    fi
fi
if [ ! -x "$rt" ] && ! chmod 755 "$rt"; then
    echo "run.sh: cannot make $rt executable" >&2
    exit 2
fi
mkdir -p "$here/reports" || exit 2
$launcher "$rt" info > "$here/reports/device.txt" 2>&1
status=0
found=0
for payload in "$here"/payloads/*.ekp; do
    [ -e "$payload" ] || continue
    found=1
    name=${payload##*/}
    name=${name%.ekp}
    $launcher "$rt" run "$payload" --out "$here/reports/$name.ekr" "$@"
    rc=$?
    case $rc in
        0) ;;
        1) status=1 ;;
        *)
            echo "run.sh: ekb-rt exited with status $rc on $name" >&2
            exit 2
            ;;
    esac
done
if [ "$found" = 0 ]; then
    echo "run.sh: no payloads in $here/payloads" >&2
    exit 2
fi
echo "reports are in $here/reports: copy that directory back and run: ekb collect reports/*.ekr"
exit $status
"#;

/// The README for the person at the board; `gpu`: the bundle carries the GPU runtime.
pub fn readme(target: &str, arch: &str, gpu: bool, payloads: &[String]) -> String {
    let list: Vec<String> = payloads.iter().map(|p| format!("    payloads/{p}.ekp")).collect();
    let runtime = if gpu {
        "the benchmark runtime with GPU executors: it needs the board's\n\
         \x20                         glibc and its OpenCL or CUDA driver (see below)"
    } else {
        "the benchmark runtime: one static binary, no dependencies"
    };
    let gpu_note = if gpu {
        "\nThe runtime here loads the board's GPU driver (libOpenCL.so.1 or libmali.so through\n\
         OPENCL_DYLIB_PATH; libcuda.so.1 and libnvrtc). If run.sh exits 2, `bin/ekb-rt-ARCH info`\n\
         says what is missing (a glibc older than the runtime's, or no driver).\n"
    } else {
        ""
    };
    format!(
        "EdgeKernelBench bundle for target `{target}` ({arch} Linux)\n\
         \n\
         What is here\n\
         \x20   {:<22}runs every payload and writes reports/\n\
         \x20   {:<22}{runtime}\n\
         \x20   {:<22}checksums of everything above\n\
         {}\n\
         \n\
         On the board (no network and no other tools needed)\n\
         \x20   1. Copy this whole directory to the board (USB stick, SD card, ...).\n\
         \x20   2. Optionally check the copy:  sha256sum -c SHA256SUMS\n\
         \x20   3. In this directory run:      sh run.sh\n\
         \x20      Options go to the runtime: sh run.sh --threads 4, or sh run.sh --big-cores\n\
         \x20   4. Copy the reports/ directory back to the machine that has ekb.\n\
         \n\
         run.sh exits 0 when every payload was correct, 1 when some payload failed (its report\n\
         says why), 2 when the runtime could not run on this board at all.\n\
         reports/device.txt describes the board (ekb-rt info).\n\
         \n\
         Back on the host\n\
         \x20   ekb collect reports/*.ekr           one table per payload\n\
         \x20   ekb collect --json reports/*.ekr    the same as JSON\n\
         {gpu_note}",
        "run.sh",
        format!("bin/ekb-rt-{arch}"),
        "SHA256SUMS",
        list.join("\n")
    )
}

/// What was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Written {
    pub dir: PathBuf,
    /// Every file, relative to `dir`, in the order of `SHA256SUMS`.
    pub files: Vec<String>,
    pub total_bytes: u64,
}

fn io_err(what: &str, path: &Path, e: std::io::Error) -> Diagnostic {
    Diagnostic::error(format!("cannot {what} `{}`: {e}", path.display()))
}

/// Checks a payload name: it becomes a file name on the board and a word in the script.
fn check_name(name: &str) -> Result<(), Diagnostic> {
    let ok = !name.is_empty()
        && !name.starts_with(['.', '-'])
        && name.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c));
    if ok {
        Ok(())
    } else {
        Err(Diagnostic::error(format!("payload name `{name}` cannot be a file name in a bundle"))
            .with_expected("letters, digits, `-`, `_` and `.`, not starting with `.` or `-`"))
    }
}

/// Writes a bundle into `dir`: the runtime, the payloads (`(name, bytes)`; each is parsed and
/// must be for `target`), the script, the README and the checksums. An existing non-empty
/// `dir` is an error unless it holds a bundle and `force` is set (then it is replaced).
pub fn write(
    dir: &Path,
    target: &str,
    runtime: &Runtime,
    payloads: &[(String, Vec<u8>)],
    force: bool,
) -> Result<Written, Diagnostic> {
    runtime.require_static("a bundle")?;
    if payloads.is_empty() {
        return Err(Diagnostic::error("a bundle needs at least one payload"));
    }
    let mut gpu_payload = None;
    for (i, (name, bytes)) in payloads.iter().enumerate() {
        check_name(name)?;
        if payloads[..i].iter().any(|(n, _)| n == name) {
            return Err(Diagnostic::error(format!("two payloads are named `{name}`"))
                .with_hint("give the files different names"));
        }
        let view = Payload::parse(bytes)
            .map_err(|e| Diagnostic::error(format!("payload `{name}` is invalid: {e}")))?;
        let backend = view.manifest().backend;
        if backend != Backend::CpuLlvm && gpu_payload.is_none() {
            gpu_payload = Some((name, backend));
        }
        if view.manifest().target != target {
            return Err(Diagnostic::error(format!(
                "payload `{name}` was built for target `{}`, the bundle is for `{target}`",
                view.manifest().target
            ))
            .with_hint(format!("rebuild it with `--target {target}`")));
        }
    }
    if let (Some((name, backend)), false) = (gpu_payload, runtime.gpu) {
        return Err(Diagnostic::error(format!(
            "payload `{name}` runs on the GPU ({}), and the runtime `{}` is the CPU-only build",
            backend.name(),
            runtime.path.display()
        ))
        .with_hint(format!(
            "a bundle with GPU payloads carries the GPU runtime: build it with `{}`",
            crate::runtime::gpu_build_command(runtime.arch)
        )));
    }
    prepare_dir(dir, force)?;

    let arch = runtime.arch.name();
    let rt_name = format!("bin/{}", crate::runtime::file_name(runtime.arch));
    let runtime_bytes =
        std::fs::read(&runtime.path).map_err(|e| io_err("read the runtime", &runtime.path, e))?;
    let names: Vec<String> = payloads.iter().map(|(n, _)| n.clone()).collect();
    let mut files: Vec<(String, Vec<u8>)> = vec![
        ("run.sh".into(), run_script(arch).into_bytes()),
        ("README.txt".into(), readme(target, arch, runtime.gpu, &names).into_bytes()),
        (rt_name, runtime_bytes),
    ];
    files.extend(payloads.iter().map(|(n, b)| (format!("payloads/{n}.ekp"), b.clone())));

    let mut sums = String::new();
    let mut total = 0u64;
    for (rel, bytes) in &files {
        let path = dir.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| io_err("create", parent, e))?;
        }
        std::fs::write(&path, bytes).map_err(|e| io_err("write", &path, e))?;
        let executable = rel == "run.sh" || rel.starts_with("bin/");
        set_mode(&path, if executable { 0o755 } else { 0o644 })?;
        let digest: String = Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect();
        sums.push_str(&format!("{digest}  {rel}\n"));
        total += bytes.len() as u64;
    }
    let sums_path = dir.join("SHA256SUMS");
    std::fs::write(&sums_path, &sums).map_err(|e| io_err("write", &sums_path, e))?;
    let mut rels: Vec<String> = files.into_iter().map(|(r, _)| r).collect();
    rels.push("SHA256SUMS".into());
    Ok(Written { dir: dir.to_path_buf(), files: rels, total_bytes: total + sums.len() as u64 })
}

fn set_mode(path: &Path, mode: u32) -> Result<(), Diagnostic> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
        .map_err(|e| io_err("set the mode of", path, e))
}

/// Makes `dir` an empty directory: new, empty, or (with `force`) a bundle to replace.
fn prepare_dir(dir: &Path, force: bool) -> Result<(), Diagnostic> {
    let mut entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return std::fs::create_dir_all(dir).map_err(|e| io_err("create", dir, e));
        }
        Err(e) => return Err(io_err("read the directory", dir, e)),
    };
    if entries.next().is_none() {
        return Ok(());
    }
    let is_bundle =
        std::fs::read_to_string(dir.join("run.sh")).is_ok_and(|s| s.lines().nth(1) == Some(MARKER));
    if !is_bundle {
        return Err(Diagnostic::error(format!(
            "`{}` exists and is not an empty directory or a bundle",
            dir.display()
        ))
        .with_hint("choose a new directory"));
    }
    if !force {
        return Err(Diagnostic::error(format!("`{}` already holds a bundle", dir.display()))
            .with_hint("pass `--force` to replace it (its reports/ go too), or choose a new directory"));
    }
    std::fs::remove_dir_all(dir).map_err(|e| io_err("remove the old bundle", dir, e))?;
    std::fs::create_dir_all(dir).map_err(|e| io_err("create", dir, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_script_starts_with_its_marker_and_names_the_architecture() {
        let s = run_script("aarch64");
        assert_eq!(s.lines().nth(1), Some(MARKER));
        assert!(s.contains("\narch=aarch64\n"));
        assert!(!s.contains("@ARCH@"));
    }

    #[test]
    fn payload_names_must_be_plain_file_names() {
        for ok in ["matmul", "conv2d-default", "a_b.1"] {
            assert!(check_name(ok).is_ok(), "{ok}");
        }
        for bad in ["", ".hidden", "-x", "a b", "a/b", "x;rm"] {
            assert!(check_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn only_empty_directories_or_forced_bundles_are_written_into() {
        let tmp = tempfile::tempdir().unwrap();
        let fresh = tmp.path().join("new/deeper");
        prepare_dir(&fresh, false).unwrap();
        assert!(fresh.is_dir());
        prepare_dir(&fresh, false).unwrap();

        let other = tmp.path().join("other");
        std::fs::create_dir(&other).unwrap();
        std::fs::write(other.join("notes.txt"), "mine").unwrap();
        let e = prepare_dir(&other, true).unwrap_err();
        assert!(e.message.ends_with("exists and is not an empty directory or a bundle"), "{}", e.message);
        assert!(other.join("notes.txt").exists());

        let bundle = tmp.path().join("bundle");
        std::fs::create_dir_all(bundle.join("reports")).unwrap();
        std::fs::write(bundle.join("run.sh"), run_script("x86_64")).unwrap();
        std::fs::write(bundle.join("reports/old.ekr"), "x").unwrap();
        assert!(prepare_dir(&bundle, false).unwrap_err().message.ends_with("already holds a bundle"));
        prepare_dir(&bundle, true).unwrap();
        assert_eq!(std::fs::read_dir(&bundle).unwrap().count(), 0);
    }
}
