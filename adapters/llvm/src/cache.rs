//! A cache of compiled objects on disk: clang's object and diagnostics for one LLVM IR text,
//! target and compiler, so that a program compiled before (a baseline evaluated again, a
//! candidate an agent or a tuner returns to) costs a file read instead of a clang process.
//!
//! The key is a SHA-256 over everything the object depends on: this cache's format version, the
//! compiler binary (its resolved path, size and modification time: another clang, or the same
//! one upgraded, misses), every argument clang is given but the input and output paths (the
//! target's triple, CPU and features; for `-march=native`, this machine's processor model and
//! feature flags as `/proc/cpuinfo` lists them), and the IR text. An entry is two files named by the key,
//! `KEY.o` and `KEY.stderr`, each written to a temporary file in the directory first and renamed
//! into place, so a reader sees a whole entry or none, and processes that compile the same IR at
//! once both write the same bytes. An object read from the cache is checked against the kernel
//! ABI like a fresh one ([`crate::compile`]); one that fails the check, or cannot be read, is a
//! miss and compiled again.
//!
//! Where: `$EKB_CACHE_DIR/objects`, else `$XDG_CACHE_HOME/ekb/objects`, else
//! `$HOME/.cache/ekb/objects`; `EKB_CACHE_DIR` set to nothing (or `off`) turns the cache off.
//! Entries are a few kilobytes and never expire; deleting the directory is always safe.
//!
//! What it must keep true: an entry is only ever what clang wrote for exactly its key's inputs;
//! a cache that cannot be written (read-only home, full disk) slows nothing down but the
//! writes, which fail silently, and never fails a compile.

use sha2::{Digest, Sha256};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Environment variable naming the cache's root (`objects/` is made under it); empty or `off`:
/// no cache.
pub const CACHE_ENV: &str = "EKB_CACHE_DIR";

/// Bumped when what an entry holds, or what its key covers, changes.
const FORMAT: &str = "ekb-llvm-objects-1";

/// The directory of cached objects, or `None` when the cache is off or no home is known.
pub fn dir() -> Option<PathBuf> {
    dir_from(std::env::var_os(CACHE_ENV), std::env::var_os("XDG_CACHE_HOME"), std::env::var_os("HOME"))
}

fn dir_from(
    ekb: Option<std::ffi::OsString>,
    xdg: Option<std::ffi::OsString>,
    home: Option<std::ffi::OsString>,
) -> Option<PathBuf> {
    if let Some(root) = ekb {
        return (!root.is_empty() && root != "off").then(|| PathBuf::from(root).join("objects"));
    }
    let xdg = xdg.filter(|v| !v.is_empty()).map(PathBuf::from);
    let root = xdg.or_else(|| home.filter(|v| !v.is_empty()).map(|h| PathBuf::from(h).join(".cache")))?;
    Some(root.join("ekb").join("objects"))
}

/// The key of the object clang (`compiler`) makes of `source` with `args` (the arguments
/// without the input and output paths), as 64 hex digits.
pub fn key(compiler: &Path, args: &[String], source: &str) -> String {
    let mut h = Sha256::new();
    let mut field = |bytes: &[u8]| {
        h.update((bytes.len() as u64).to_le_bytes());
        h.update(bytes);
    };
    field(FORMAT.as_bytes());
    let resolved = std::fs::canonicalize(compiler).unwrap_or_else(|_| compiler.to_path_buf());
    field(resolved.to_string_lossy().as_bytes());
    let identity = std::fs::metadata(&resolved).ok().map(|m| {
        let modified = m.modified().ok().and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok());
        format!("{} {:?}", m.len(), modified)
    });
    field(identity.unwrap_or_default().as_bytes());
    for a in args {
        field(a.as_bytes());
    }
    // `-march=native` names the machine compiling: a cache shared between machines must not
    // hand one's objects to another.
    if args.iter().any(|a| a.ends_with("=native")) {
        field(native_cpu().as_bytes());
    }
    field(source.as_bytes());
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// What `/proc/cpuinfo` says of this machine's first processor that decides what `native`
/// compiles for (model, stepping, feature flags; not its clock), or nothing where unreadable.
fn native_cpu() -> String {
    const KEYS: [&str; 11] = [
        "vendor_id",
        "cpu family",
        "model",
        "model name",
        "stepping",
        "flags",
        "Features",
        "CPU implementer",
        "CPU architecture",
        "CPU variant",
        "CPU part",
    ];
    let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let first = info.split("\n\n").next().unwrap_or("");
    first
        .lines()
        .filter(|l| l.split(':').next().is_some_and(|k| KEYS.contains(&k.trim())))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The entry for `key` in `dir`: the object's bytes and clang's diagnostics.
pub fn get(dir: &Path, key: &str) -> Option<(Vec<u8>, String)> {
    let object = std::fs::read(dir.join(format!("{key}.o"))).ok()?;
    let stderr = std::fs::read_to_string(dir.join(format!("{key}.stderr"))).ok()?;
    Some((object, stderr))
}

/// Stores the entry for `key` in `dir` (the diagnostics first: an entry is whole once its
/// object is in place); failures are ignored.
pub fn put(dir: &Path, key: &str, object: &[u8], stderr: &str) {
    let write = |name: String, bytes: &[u8]| -> std::io::Result<()> {
        let mut tmp = tempfile::Builder::new().prefix(".entry-").tempfile_in(dir)?;
        tmp.write_all(bytes)?;
        tmp.persist(dir.join(name)).map_err(|e| e.error)?;
        Ok(())
    };
    let _ = std::fs::create_dir_all(dir)
        .and_then(|()| write(format!("{key}.stderr"), stderr.as_bytes()))
        .and_then(|()| write(format!("{key}.o"), object));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_directory_follows_the_environment_and_can_be_turned_off() {
        let s = |v: &str| Some(std::ffi::OsString::from(v));
        assert_eq!(dir_from(s("/c"), s("/x"), s("/h")), Some(PathBuf::from("/c/objects")));
        assert_eq!(dir_from(s(""), s("/x"), s("/h")), None);
        assert_eq!(dir_from(s("off"), s("/x"), s("/h")), None);
        assert_eq!(dir_from(None, s("/x"), s("/h")), Some(PathBuf::from("/x/ekb/objects")));
        assert_eq!(dir_from(None, s(""), s("/h")), Some(PathBuf::from("/h/.cache/ekb/objects")));
        assert_eq!(dir_from(None, None, None), None);
    }

    #[test]
    fn keys_change_with_every_input_and_entries_round_trip() {
        let tmp = tempfile::tempdir().unwrap();
        let clang = tmp.path().join("clang");
        std::fs::write(&clang, "v1").unwrap();
        let args = vec!["-O3".to_string(), "--target=x86_64-unknown-linux-gnu".to_string()];
        let k = key(&clang, &args, "define void @f() { ret void }");
        assert_eq!(k.len(), 64);
        assert_eq!(k, key(&clang, &args, "define void @f() { ret void }"), "the same inputs, the same key");
        assert_ne!(k, key(&clang, &args, "define void @g() { ret void }"));
        assert_ne!(k, key(&clang, &args[..1], "define void @f() { ret void }"));
        assert!(!native_cpu().is_empty() || !Path::new("/proc/cpuinfo").exists());
        // Arguments are fields, not a concatenation: moving a byte between two changes the key.
        assert_ne!(key(&clang, &["ab".into(), "c".into()], ""), key(&clang, &["a".into(), "bc".into()], ""));
        std::fs::write(&clang, "v2, a longer compiler").unwrap();
        assert_ne!(k, key(&clang, &args, "define void @f() { ret void }"), "another compiler binary");
        let dir = tmp.path().join("objects");
        assert_eq!(get(&dir, &k), None);
        put(&dir, &k, b"\x7fELF...", "remark: vectorized loop\n");
        assert_eq!(get(&dir, &k), Some((b"\x7fELF...".to_vec(), "remark: vectorized loop\n".into())));
        // A directory that cannot be made is no error.
        put(&clang.join("under-a-file"), &k, b"x", "");
    }
}
