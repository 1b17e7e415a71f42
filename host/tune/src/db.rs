//! The tuning database: every measured point of every tune, in a JSON-lines file. The first
//! line names the target profile the records are for (its name and the SHA-256 of its
//! contents); each later line is one [`Record`]: the graph (name and SHA-256 of its text), the
//! device it was measured on, the recipe, the program's fingerprint, the outcome and the time.
//!
//! ```text
//! {"ekb_tune_db":1,"target":"host","profile_sha256":"9f2c…"}
//! {"graph":"matmul_512","graph_sha256":"41d0…","device":"AMD EPYC 9R14 (2 cpus), ekb 0.1.0","recipe":"set matmul.tile_cols = 64\n…","program_sha256":"…","outcome":"ok","time_ms":1.27,"vs_best":1.0,"error":null,"trial":1}
//! ```
//!
//! What must stay true:
//! - A record is appended as one write of one whole line and flushed to the disk before the
//!   next candidate is measured, so a killed tune loses at most the candidate in flight; a torn
//!   last line (no newline) is dropped when the file is opened again, with a warning.
//! - A database is for one target profile: opening it for another profile is an error that
//!   says which profile it is for. Records of another device of the same profile are read (they
//!   warm-start the model) but never count as measured here.

use ekb_ir::TargetProfile;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The first line of a database file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Header {
    pub ekb_tune_db: u32,
    pub target: String,
    pub profile_sha256: String,
}

/// How a measured point ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Compiled, correct and timed.
    Ok,
    /// A stage of the compile driver refused it.
    Compile,
    /// Its outputs differ from the reference.
    Incorrect,
    /// It could not be loaded or run.
    Run,
}

/// One measured point.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    pub graph: String,
    pub graph_sha256: String,
    /// The machine and the runtime that measured it ([`device_fingerprint`]).
    pub device: String,
    pub recipe: String,
    pub program_sha256: String,
    pub outcome: Outcome,
    /// The median time, on the scale of the first point of this graph measured in its tune
    /// (the candidate's paired ratio to the best so far, times the best's time); measured on a
    /// pool, on the scale of the default schedule (the ratio to the default, times the
    /// default's time as first measured).
    pub time_ms: Option<f64>,
    /// The candidate's median over the best point's, timed alternately with it; measured on a
    /// pool, over the default schedule's.
    pub vs_best: Option<f64>,
    pub error: Option<String>,
    /// Its number among this graph's trials on this device, from 1.
    pub trial: usize,
}

/// The version of the file format.
const VERSION: u32 = 1;

/// A database file, open for appending.
#[derive(Debug)]
pub struct Db {
    pub path: PathBuf,
    pub header: Header,
    records: Vec<Record>,
    file: File,
    /// What opening it noticed (a torn last line).
    pub warnings: Vec<String>,
}

/// The SHA-256 of a profile's contents (its fields, as JSON).
pub fn profile_sha256(target: &TargetProfile) -> String {
    sha256(serde_json::to_string(target).expect("a profile serialises").as_bytes())
}

pub fn sha256(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

/// This machine and runtime: the CPU's model name, its logical CPUs and ekb's version.
pub fn device_fingerprint() -> String {
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, m)| m.trim().to_string())
        })
        .unwrap_or_else(|| std::env::consts::ARCH.to_string());
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    format!("{model} ({cpus} cpus), ekb {}", env!("CARGO_PKG_VERSION"))
}

impl Db {
    /// Opens the database at `path` for `target`, creating it when it does not exist.
    pub fn open(path: &Path, target: &TargetProfile) -> Result<Db, String> {
        let header = Header {
            ekb_tune_db: VERSION,
            target: target.name.clone(),
            profile_sha256: profile_sha256(target),
        };
        let cannot = |what: &str, e: std::io::Error| format!("cannot {what} `{}`: {e}", path.display());
        let mut records = Vec::new();
        let mut warnings = Vec::new();
        if path.exists() {
            let text = std::fs::read_to_string(path).map_err(|e| cannot("read", e))?;
            let mut lines = text.split_inclusive('\n').enumerate();
            let (_, first) = lines
                .next()
                .ok_or_else(|| format!("`{}` is empty, not a tuning database", path.display()))?;
            let found: Header = serde_json::from_str(first.trim()).map_err(|e| {
                format!(
                    "`{}` line 1: not a tuning database header ({e}); expected {}",
                    path.display(),
                    json(&header)
                )
            })?;
            if found.ekb_tune_db != VERSION {
                return Err(format!(
                    "`{}` is a version {} tuning database; this ekb reads version {VERSION}",
                    path.display(),
                    found.ekb_tune_db
                ));
            }
            if found.target != header.target || found.profile_sha256 != header.profile_sha256 {
                let same_name = found.target == header.target;
                return Err(format!(
                    "`{}` holds records for target `{}`{}, not for `{}`: a tuned schedule is only valid for the profile it was measured on; use another --db",
                    path.display(),
                    found.target,
                    if same_name { " as its profile was then (the profile has changed since)" } else { "" },
                    header.target
                ));
            }
            for (i, line) in lines {
                if !line.ends_with('\n') {
                    warnings.push(format!(
                        "`{}` line {}: a record cut short (a tune was stopped while writing it); dropped",
                        path.display(),
                        i + 1
                    ));
                    break;
                }
                let r: Record = serde_json::from_str(line.trim())
                    .map_err(|e| format!("`{}` line {}: not a tuning record: {e}", path.display(), i + 1))?;
                records.push(r);
            }
            if !warnings.is_empty() {
                // Drop the torn tail so the next record starts on a line of its own.
                let keep: usize =
                    text.split_inclusive('\n').filter(|l| l.ends_with('\n')).map(str::len).sum();
                let f = OpenOptions::new().write(true).open(path).map_err(|e| cannot("open", e))?;
                f.set_len(keep as u64).map_err(|e| cannot("truncate", e))?;
            }
        } else {
            if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::create_dir_all(dir).map_err(|e| cannot("create the folder of", e))?;
            }
            let mut f = File::create(path).map_err(|e| cannot("create", e))?;
            f.write_all(format!("{}\n", json(&header)).as_bytes()).map_err(|e| cannot("write", e))?;
            f.sync_data().map_err(|e| cannot("write", e))?;
        }
        let file = OpenOptions::new().append(true).open(path).map_err(|e| cannot("open", e))?;
        Ok(Db { path: path.to_path_buf(), header, records, file, warnings })
    }

    pub fn records(&self) -> &[Record] {
        &self.records
    }

    /// Appends `r` and waits until it is on the disk.
    pub fn append(&mut self, r: Record) -> Result<(), String> {
        let line = format!("{}\n", json(&r));
        self.file
            .write_all(line.as_bytes())
            .and_then(|()| self.file.sync_data())
            .map_err(|e| format!("cannot write to `{}`: {e}", self.path.display()))?;
        self.records.push(r);
        Ok(())
    }

    /// The records of the graph with this text's hash.
    pub fn of_graph<'a>(&'a self, graph_sha256: &'a str) -> impl Iterator<Item = &'a Record> + 'a {
        self.records.iter().filter(move |r| r.graph_sha256 == graph_sha256)
    }

    /// The fastest correct record of a graph (on any device of the profile).
    pub fn best(&self, graph_sha256: &str) -> Option<&Record> {
        self.records
            .iter()
            .filter(|r| r.graph_sha256 == graph_sha256 && r.outcome == Outcome::Ok)
            .min_by(|a, b| a.time_ms.unwrap_or(f64::INFINITY).total_cmp(&b.time_ms.unwrap_or(f64::INFINITY)))
    }
}

fn json<T: Serialize>(v: &T) -> String {
    serde_json::to_string(v).expect("records serialise")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(trial: usize, time: f64) -> Record {
        Record {
            graph: "g".into(),
            graph_sha256: "abc".into(),
            device: device_fingerprint(),
            recipe: format!("set conv.oc_block = {trial}\n"),
            program_sha256: format!("p{trial}"),
            outcome: Outcome::Ok,
            time_ms: Some(time),
            vs_best: Some(1.0),
            error: None,
            trial,
        }
    }

    #[test]
    fn records_survive_reopening_and_a_torn_line_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/tune.jsonl");
        let host = TargetProfile::load("host").unwrap();
        let mut db = Db::open(&path, &host).unwrap();
        db.append(record(1, 2.0)).unwrap();
        db.append(record(2, 1.5)).unwrap();
        drop(db);
        // A kill in the middle of a write.
        let mut f = OpenOptions::new().append(true).open(&path).unwrap();
        f.write_all(b"{\"graph\":\"g\",\"gra").unwrap();
        drop(f);
        let mut db = Db::open(&path, &host).unwrap();
        assert_eq!(db.records().len(), 2);
        assert_eq!(db.warnings.len(), 1, "{:?}", db.warnings);
        assert_eq!(db.best("abc").unwrap().trial, 2);
        db.append(record(3, 3.0)).unwrap();
        drop(db);
        let db = Db::open(&path, &host).unwrap();
        assert_eq!(db.records().len(), 3);
        assert!(db.warnings.is_empty());
    }

    #[test]
    fn a_database_of_another_profile_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tune.jsonl");
        let host = TargetProfile::load("host").unwrap();
        Db::open(&path, &host).unwrap();
        let rk = TargetProfile::load("rk3588").unwrap();
        let e = Db::open(&path, &rk).unwrap_err();
        assert!(e.contains("records for target `host`") && e.contains("not for `rk3588`"), "{e}");
        let mut changed = host.clone();
        changed.cpu.stack_bytes += 1;
        let e = Db::open(&path, &changed).unwrap_err();
        assert!(e.contains("the profile has changed"), "{e}");
        std::fs::write(&path, "not json\n").unwrap();
        assert!(Db::open(&path, &host).unwrap_err().contains("line 1: not a tuning database header"));
    }
}
