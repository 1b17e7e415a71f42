//! Writing the files a command leaves for the user, all or nothing.
//!
//! Every file is first written in full to a temporary name in its own folder, and only when
//! every file of the set is written are they renamed into place, in order. So a failure (a full
//! disk, a folder that cannot be written, an interrupted run) leaves the earlier files as they
//! were and no half-written or orphaned file beside them; a reader never sees a file half
//! written. New files get the permissions `std::fs::write` would give them (0666 less the umask).

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// Writes one file; see the module header.
pub fn write(path: &Path, bytes: &[u8]) -> Result<(), String> {
    write_set(&[(path, bytes)])
}

/// Writes a set of files that belong together (a graph and its weights, a folder of arrays); see
/// the module header.
pub fn write_set(files: &[(&Path, &[u8])]) -> Result<(), String> {
    // A folder in a file's place is the one thing that makes a rename in the same folder fail
    // after the writes succeeded: refuse it before anything is written.
    if let Some((path, _)) = files.iter().find(|(path, _)| path.is_dir()) {
        return Err(format!("error: cannot write `{}`: a folder of that name is in the way", path.display()));
    }
    let staged = files
        .iter()
        .map(|&(path, bytes)| {
            let cannot = |e: std::io::Error| format!("error: cannot write `{}`: {e}", path.display());
            let folder = match path.parent() {
                Some(p) if !p.as_os_str().is_empty() => p,
                _ => Path::new("."),
            };
            let mut tmp = tempfile::Builder::new()
                .prefix(".ekb-")
                .permissions(std::fs::Permissions::from_mode(0o666))
                .tempfile_in(folder)
                .map_err(cannot)?;
            tmp.write_all(bytes).and_then(|()| tmp.flush()).map_err(cannot)?;
            Ok((path, tmp))
        })
        .collect::<Result<Vec<_>, String>>()?;
    for (path, tmp) in staged {
        tmp.persist(path).map_err(|e| format!("error: cannot write `{}`: {}", path.display(), e.error))?;
    }
    Ok(())
}
