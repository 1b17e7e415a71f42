//! A node's candidate written out as a candidate folder sample, `DIR/TASK/BACKEND/sample-N/`,
//! the layout `ekb generate` writes and `ekb eval --candidates DIR` reads.
//!
//! What must stay true: the sample folder holds exactly the node's files, byte for byte; an
//! existing sample folder is never written into (a file left there by another candidate, such
//! as a `candidate.ekir` beside an exported `candidate.trace`, would be evaluated instead).

use super::node::NodeId;
use super::store::Tree;
use ekb_ir::Diagnostic;
use std::path::{Path, PathBuf};

impl Tree {
    /// Writes node `id`'s candidate into `dir` as sample `sample` of its run's task and
    /// backend; returns the sample folder.
    pub fn export(&self, id: NodeId, dir: &Path, sample: u32) -> Result<PathBuf, Diagnostic> {
        let node = self.node(id)?;
        let run = self.run(&node.run)?;
        let sample_dir = dir.join(&run.spec.task).join(&run.spec.backend).join(format!("sample-{sample}"));
        if sample_dir.exists() {
            return Err(Diagnostic::error(format!("`{}` already exists", sample_dir.display()))
                .with_hint("export into a new folder, or give another `--sample`"));
        }
        let io = |path: &Path, e: std::io::Error| {
            Diagnostic::error(format!("cannot write `{}`: {e}", path.display()))
                .with_hint("check that the folder is writable")
        };
        for f in self.files(id)? {
            let path = sample_dir.join(&f.path);
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent).map_err(|e| io(parent, e))?;
            }
            std::fs::write(&path, &f.text).map_err(|e| io(&path, e))?;
        }
        Ok(sample_dir)
    }
}
