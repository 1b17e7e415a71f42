//! A run directory on disk: `run.json` written once when the run starts, `results.jsonl`
//! appended one line per evaluated candidate as it finishes (and the marker of the candidate in
//! flight, kept by `inflight`).
//!
//! What must stay true: a finished result is on disk (written and synced) before the next
//! candidate starts, so an interrupted run loses at most the candidate in flight; a torn last
//! line (the process died mid-write) is dropped when the run is reopened, never misread; a
//! result key appears at most once in a run that was only ever resumed through [`RunDir`].

use super::record::{CandidateResult, ResultKey, RunInfo, RESULTS_FORMAT};
use ekb_ir::Diagnostic;
use std::collections::BTreeSet;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The plan file of a run.
pub const RUN_FILE: &str = "run.json";
/// The results file of a run.
pub const RESULTS_FILE: &str = "results.jsonl";

/// A run read back.
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    pub dir: PathBuf,
    pub info: RunInfo,
    /// In the order they were written.
    pub results: Vec<CandidateResult>,
    /// What was odd about the files (a torn last line, a duplicated key), one line each.
    pub warnings: Vec<String>,
}

impl Run {
    /// The keys of every result present.
    pub fn done(&self) -> BTreeSet<ResultKey> {
        self.results.iter().map(CandidateResult::key).collect()
    }
}

/// A run directory open for appending.
#[derive(Debug)]
pub struct RunDir {
    dir: PathBuf,
    results: File,
}

fn io_error(what: &str, path: &Path, e: std::io::Error) -> Diagnostic {
    Diagnostic::error(format!("cannot {what} `{}`: {e}", path.display()))
}

impl RunDir {
    /// Starts a new run in `dir`, which must not exist or be empty.
    pub fn create(dir: &Path, info: &RunInfo) -> Result<RunDir, Diagnostic> {
        if dir.join(RUN_FILE).exists() || dir.join(RESULTS_FILE).exists() {
            return Err(Diagnostic::error(format!("`{}` already holds a run", dir.display()))
                .with_hint("continue it with `--resume`, or choose another `--out`"));
        }
        std::fs::create_dir_all(dir).map_err(|e| io_error("create", dir, e))?;
        let text = serde_json::to_string_pretty(info).expect("run info serialises");
        write_synced(&dir.join(RUN_FILE), format!("{text}\n").as_bytes())?;
        let results = OpenOptions::new()
            .create_new(true)
            .append(true)
            .open(dir.join(RESULTS_FILE))
            .map_err(|e| io_error("create", &dir.join(RESULTS_FILE), e))?;
        Ok(RunDir { dir: dir.to_path_buf(), results })
    }

    /// Reopens a run to continue it: reads what is there, drops a torn last line from the file,
    /// and returns the run so the caller can skip what is done.
    pub fn resume(dir: &Path) -> Result<(RunDir, Run), Diagnostic> {
        let run = load_run(dir)?;
        let path = dir.join(RESULTS_FILE);
        let bytes = std::fs::read(&path).map_err(|e| io_error("read", &path, e))?;
        let keep = complete_prefix(&bytes);
        if keep < bytes.len() {
            let f = OpenOptions::new().write(true).open(&path).map_err(|e| io_error("open", &path, e))?;
            f.set_len(keep as u64).map_err(|e| io_error("truncate", &path, e))?;
            f.sync_all().map_err(|e| io_error("sync", &path, e))?;
        }
        let results = OpenOptions::new().append(true).open(&path).map_err(|e| io_error("open", &path, e))?;
        Ok((RunDir { dir: dir.to_path_buf(), results }, run))
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Appends one result and syncs it to disk.
    pub fn append(&mut self, result: &CandidateResult) -> Result<(), Diagnostic> {
        let mut line = serde_json::to_string(result).expect("results serialise");
        line.push('\n');
        let path = self.dir.join(RESULTS_FILE);
        self.results.write_all(line.as_bytes()).map_err(|e| io_error("write", &path, e))?;
        self.results.sync_data().map_err(|e| io_error("sync", &path, e))
    }
}

fn write_synced(path: &Path, bytes: &[u8]) -> Result<(), Diagnostic> {
    let mut f = File::create(path).map_err(|e| io_error("create", path, e))?;
    f.write_all(bytes).map_err(|e| io_error("write", path, e))?;
    f.sync_all().map_err(|e| io_error("sync", path, e))
}

/// The length of the part of `bytes` that ends with a newline.
fn complete_prefix(bytes: &[u8]) -> usize {
    bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1)
}

/// Reads a run directory. A torn last line is reported as a warning and ignored; any other
/// unreadable line is an error naming the file and line.
pub fn load_run(dir: &Path) -> Result<Run, Diagnostic> {
    let run_path = dir.join(RUN_FILE);
    let text = std::fs::read_to_string(&run_path).map_err(|e| {
        io_error("read", &run_path, e)
            .with_hint("a run directory is what `ekb eval --out DIR` or `ekb bench --out DIR` wrote")
    })?;
    let info: RunInfo = serde_json::from_str(&text)
        .map_err(|e| Diagnostic::error(format!("`{}` is not a run description: {e}", run_path.display())))?;
    if info.format > RESULTS_FORMAT {
        return Err(Diagnostic::error(format!(
            "`{}` has results format {}, newer than this ekb reads ({RESULTS_FORMAT})",
            run_path.display(),
            info.format
        ))
        .with_hint("use a newer ekb"));
    }
    let path = dir.join(RESULTS_FILE);
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(io_error("read", &path, e)),
    };
    let mut warnings = Vec::new();
    let complete = complete_prefix(&bytes);
    if complete < bytes.len() {
        warnings.push(format!(
            "{}: ignored an unfinished last line ({} bytes): the run was interrupted while writing it",
            path.display(),
            bytes.len() - complete
        ));
    }
    let text = std::str::from_utf8(&bytes[..complete])
        .map_err(|e| Diagnostic::error(format!("`{}` is not UTF-8: {e}", path.display())))?;
    let mut results = Vec::new();
    let mut seen = BTreeSet::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let r: CandidateResult = serde_json::from_str(line).map_err(|e| {
            Diagnostic::error(format!("{}:{}: not a candidate result: {e}", path.display(), i + 1))
        })?;
        if !seen.insert(r.key()) {
            warnings.push(format!(
                "{}:{}: a second result for {} on {} sample {}; the first one counts",
                path.display(),
                i + 1,
                r.instance.task,
                r.instance.backend,
                r.sample
            ));
            continue;
        }
        results.push(r);
    }
    Ok(Run { dir: dir.to_path_buf(), info, results, warnings })
}

/// The current time, `YYYY-MM-DDTHH:MM:SSZ` (UTC).
pub fn utc_now() -> String {
    let secs = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    utc_timestamp(secs)
}

/// Seconds since the Unix epoch as `YYYY-MM-DDTHH:MM:SSZ`.
pub fn utc_timestamp(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Civil date from days since 1970-01-01 (proleptic Gregorian), by 400-year eras.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z", rem / 3600, rem % 3600 / 60, rem % 60)
}

#[cfg(test)]
mod tests {
    use super::super::record::*;
    use super::*;
    use std::collections::BTreeMap;

    fn info() -> RunInfo {
        RunInfo {
            format: RESULTS_FORMAT,
            created: utc_timestamp(0),
            ekb_version: "0.1.0".into(),
            command: vec!["ekb".into(), "eval".into()],
            candidates: "builtin:default".into(),
            baseline: "naive".into(),
            samples: 1,
            seeds: vec![0, 1, 2],
            timing: TimingSettings {
                cold_cache: false,
                target_rse: 0.01,
                max_ci: 0.02,
                budget_s: 1.0,
                timeout_s: 20.0,
                threads: None,
            },
            backends: BTreeMap::new(),
            tools: BTreeMap::new(),
            instances: vec![],
        }
    }

    fn result(task: &str, sample: u32) -> CandidateResult {
        CandidateResult {
            instance: Instance {
                task: task.into(),
                backend: "cpu".into(),
                level: 1,
                domain: "mobile".into(),
                family: "activation".into(),
            },
            sample,
            candidate: CandidateText {
                origin: "builtin:default".into(),
                kind: "l1".into(),
                sha256: None,
                text: None,
            },
            compiled: true,
            correct: false,
            failure: Some(FailureRecord {
                class: FailureClass::Correctness,
                detail: "correctness".into(),
                evidence: "y[3]: 1 vs 2".into(),
            }),
            timing: None,
            baseline_failure: None,
            memory: None,
            passes: None,
            seconds: Phases::default(),
            finished: utc_timestamp(0),
            device: None,
            median_ns: None,
        }
    }

    #[test]
    fn timestamps_are_civil_utc() {
        assert_eq!(utc_timestamp(0), "1970-01-01T00:00:00Z");
        assert_eq!(utc_timestamp(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(utc_timestamp(1_796_000_000), "2026-11-30T00:53:20Z");
        assert_eq!(utc_timestamp(4_107_542_399), "2100-02-28T23:59:59Z");
    }

    #[test]
    fn results_round_trip_and_a_second_create_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("run");
        let mut run = RunDir::create(&dir, &info()).unwrap();
        run.append(&result("a", 0)).unwrap();
        run.append(&result("b", 0)).unwrap();
        drop(run);
        let back = load_run(&dir).unwrap();
        assert_eq!(back.info, info());
        assert_eq!(back.results, vec![result("a", 0), result("b", 0)]);
        assert!(back.warnings.is_empty());
        let e = RunDir::create(&dir, &info()).unwrap_err();
        assert!(e.to_string().contains("already holds a run"), "{e}");
    }

    #[test]
    fn a_torn_last_line_is_dropped_on_resume_and_appending_continues_cleanly() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("run");
        let mut run = RunDir::create(&dir, &info()).unwrap();
        run.append(&result("a", 0)).unwrap();
        drop(run);
        let line = serde_json::to_string(&result("b", 0)).unwrap();
        let mut f = OpenOptions::new().append(true).open(dir.join(RESULTS_FILE)).unwrap();
        f.write_all(&line.as_bytes()[..line.len() / 2]).unwrap();
        drop(f);
        let read = load_run(&dir).unwrap();
        assert_eq!(read.results.len(), 1);
        assert_eq!(read.warnings.len(), 1, "{:?}", read.warnings);
        assert!(read.warnings[0].contains("unfinished last line"));
        let (mut run, resumed) = RunDir::resume(&dir).unwrap();
        assert_eq!(resumed.done().into_iter().collect::<Vec<_>>(), vec![("a".into(), "cpu".into(), 0)]);
        run.append(&result("b", 0)).unwrap();
        let back = load_run(&dir).unwrap();
        assert_eq!(back.results, vec![result("a", 0), result("b", 0)]);
        assert!(back.warnings.is_empty(), "{:?}", back.warnings);
    }

    #[test]
    fn a_corrupt_line_names_the_file_and_line_and_duplicates_keep_the_first() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("run");
        let mut run = RunDir::create(&dir, &info()).unwrap();
        run.append(&result("a", 0)).unwrap();
        let mut second = result("a", 0);
        second.correct = true;
        run.append(&second).unwrap();
        drop(run);
        let back = load_run(&dir).unwrap();
        assert_eq!(back.results, vec![result("a", 0)]);
        assert!(
            back.warnings[0].contains(":2: a second result for a on cpu sample 0"),
            "{:?}",
            back.warnings
        );
        std::fs::write(dir.join(RESULTS_FILE), "{\"instance\": 3}\n").unwrap();
        let e = load_run(&dir).unwrap_err();
        assert!(e.to_string().contains("results.jsonl:1: not a candidate result"), "{e}");
        let e = load_run(&tmp.path().join("missing")).unwrap_err();
        assert!(e.to_string().contains("run.json"), "{e}");
    }
}
