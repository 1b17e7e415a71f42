//! How the loop measures candidates: the evaluation protocol of `ekb eval` (compile, correctness
//! on the run's seeds, paired timing against the baseline, memory, failure classes), run on a
//! batch of one instance's candidates in one device session.
//!
//! A batch `NAME` is a candidate folder `DIR/NAME/candidates` (sample `i` is the batch's `i`-th
//! candidate) evaluated into the run directory `DIR/NAME/run`, resumed when it exists: a batch
//! interrupted by a kill is finished, not started again, and a candidate that crashed the
//! evaluator is recorded as failed there.
//!
//! A batch may be timed against a program of the run instead of the evaluator's baseline
//! ([`Batch::against`]: the confirmation of an answer against the run's root): that program is
//! written as the candidate folder `DIR/NAME/against` and is the baseline of that batch alone.
//!
//! The batch runs on the device of this machine's link ([`Where::Device`]), or is sent elsewhere
//! ([`Where::Elsewhere`]: `ekb agent --queue`, a pool of workers) into the same run directory.
//!
//! What must stay true: one result per candidate, in the batch's order; where the batch runs
//! changes nothing else (the candidate folder, the run directory and its resumption are the
//! same).

use crate::tree::CandidateFile;
use ekb_eval::evaluate::candidate::Candidates;
use ekb_eval::evaluate::{self, Baseline, Config, DeviceLink, Observer};
use ekb_eval::results::{load_run, CandidateResult, Instance};
use ekb_eval::tasks::{Backend, Task};
use ekb_ir::Diagnostic;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Candidates of one instance to measure together.
pub struct Batch<'a> {
    /// Unique in the run: the batch's folder name.
    pub name: String,
    pub task: &'a Task,
    pub instance: Instance,
    pub candidates: Vec<Vec<CandidateFile>>,
    /// The program to time the candidates against instead of the baseline, if any.
    pub against: Option<Vec<CandidateFile>>,
}

/// Measures batches of candidates.
pub trait Evaluator {
    /// One result per candidate of `batch`, in order. `Err` only for what must stop the run
    /// (the device is gone).
    fn evaluate(&mut self, batch: &Batch<'_>) -> Result<Vec<CandidateResult>, Diagnostic>;

    /// The baseline every candidate is timed against, as the tree records it.
    fn baseline(&self) -> String;
}

/// Opens a link to the device of a backend, once per batch.
pub type Connect = Box<dyn FnMut(Backend) -> Result<DeviceLink, Diagnostic>>;

/// Evaluates the configuration's candidates of an instance of a task into a run directory
/// (continued when it exists) somewhere else than through a device link here.
pub type Elsewhere =
    Box<dyn FnMut(&Config, &Task, &Instance, &Path, &mut dyn Observer) -> Result<(), Diagnostic>>;

/// Where a batch is evaluated.
pub enum Where {
    /// On the device of a link opened for each batch.
    Device(Connect),
    /// Somewhere else (a pool of workers).
    Elsewhere(Elsewhere),
}

/// The evaluation protocol through `ekb_eval::evaluate`.
pub struct Protocol {
    pub config: Config,
    /// Where batches are kept: `DIR/NAME/candidates`, `DIR/NAME/run`.
    pub dir: PathBuf,
    pub run_on: Where,
    /// Lines worth showing (a restarted runtime, an installation).
    pub notes: Vec<String>,
}

/// Collects the protocol's notes; the loop reports progress per node itself.
struct Notes<'a>(&'a mut Vec<String>);

impl Observer for Notes<'_> {
    fn started(&mut self, _total: usize, _done: usize) {}
    fn note(&mut self, line: &str) {
        self.0.push(line.to_string());
    }
    fn finished(&mut self, _result: &CandidateResult) {}
}

/// Writes `files` (the candidate's, not its layers') as sample `sample` of `instance` in `dir`.
fn write_sample(
    dir: &Path,
    instance: &Instance,
    sample: usize,
    files: &[CandidateFile],
) -> Result<(), Diagnostic> {
    let sample_dir = dir.join(&instance.task).join(&instance.backend).join(format!("sample-{sample}"));
    for f in files.iter().filter(|f| !f.path.starts_with(crate::layers::LAYERS_DIR)) {
        let path = sample_dir.join(&f.path);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| Diagnostic::error(format!("cannot create `{}`: {e}", parent.display())))?;
        }
        std::fs::write(&path, &f.text)
            .map_err(|e| Diagnostic::error(format!("cannot write `{}`: {e}", path.display())))?;
    }
    Ok(())
}

impl Evaluator for Protocol {
    fn evaluate(&mut self, batch: &Batch<'_>) -> Result<Vec<CandidateResult>, Diagnostic> {
        let root = self.dir.join(&batch.name);
        let cands = root.join("candidates");
        for (i, files) in batch.candidates.iter().enumerate() {
            write_sample(&cands, &batch.instance, i, files)?;
        }
        let backend = Backend::ALL
            .into_iter()
            .find(|b| b.name() == batch.instance.backend)
            .ok_or_else(|| Diagnostic::error(format!("unknown backend `{}`", batch.instance.backend)))?;
        self.config.candidates = Candidates::Dir(cands);
        self.config.samples = batch.candidates.len() as u32;
        let baseline = match &batch.against {
            Some(files) => {
                let dir = root.join("against");
                write_sample(&dir, &batch.instance, 0, files)?;
                Some(std::mem::replace(&mut self.config.baseline, Baseline::Candidates(dir)))
            }
            None => None,
        };
        let run_dir = root.join("run");
        let mut notes = Notes(&mut self.notes);
        let run = match &mut self.run_on {
            Where::Device(connect) => connect(backend).and_then(|link| {
                evaluate::evaluate(
                    &[batch.task],
                    vec![batch.instance.clone()],
                    &self.config,
                    BTreeMap::from([(backend, link)]),
                    &run_dir,
                    true,
                    &mut notes,
                )
            }),
            Where::Elsewhere(run) => run(&self.config, batch.task, &batch.instance, &run_dir, &mut notes)
                .and_then(|()| load_run(&run_dir)),
        };
        if let Some(b) = baseline {
            self.config.baseline = b;
        }
        let mut results = run?.results;
        results.sort_by_key(|r| r.sample);
        if results.len() != batch.candidates.len() {
            return Err(Diagnostic::error(format!(
                "batch `{}`: {} candidates, {} results in `{}`",
                batch.name,
                batch.candidates.len(),
                results.len(),
                root.join("run").display()
            )));
        }
        Ok(results)
    }

    fn baseline(&self) -> String {
        self.config.baseline.describe()
    }
}
