//! The candidate tree's store: a SQLite database (`tree.sqlite` in an agent run's folder) of
//! runs, nodes and the files of each node's candidate.
//!
//! A node is added in flight ([`Tree::insert_node`]: the edit, the whole candidate, the diff
//! against its parent, the agent's rationale and cost) before its candidate is evaluated, and
//! its evaluation is recorded when it finishes ([`Tree::record_outcome`]). A resumed loop finds
//! the nodes it left in flight with [`Tree::in_flight`].
//!
//! What must stay true: each write is one transaction (a node with all its files, or an outcome
//! with all its columns), so a process killed at any moment leaves every node either whole or
//! absent; the database is in WAL mode with full syncs, so a committed node survives the kill
//! of the writer (and a power loss); a reader may read while the writer writes.

use super::diff;
use super::node::{
    Budgets, CandidateFile, Cost, Edit, EditKind, Failure, Level, NewNode, Node, NodeId, Outcome, RunRecord,
    RunSpec, RunStatus, State,
};
use super::schema;
use ekb_eval::results::{utc_now, CandidateResult, FailureClass};
use ekb_ir::Diagnostic;
use rusqlite::{Connection, OpenFlags, OptionalExtension, Row};
use std::path::{Component, Path, PathBuf};
use std::time::Duration;

/// The file name of the tree in an agent run's folder.
pub const TREE_FILE: &str = "tree.sqlite";

/// How long a reader waits for the writer's lock before giving up.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// An open candidate tree.
#[derive(Debug)]
pub struct Tree {
    conn: Connection,
    path: PathBuf,
}

/// A database error as a diagnostic naming the file.
pub(super) fn sql_error(path: &Path, e: rusqlite::Error) -> Diagnostic {
    Diagnostic::error(format!("candidate tree `{}`: {e}", path.display()))
        .with_hint("a database another program changed, or a full disk: check the file with `sqlite3 FILE 'PRAGMA integrity_check'`")
}

/// The columns of a node, in the order [`node_of_row`] reads them.
pub(super) const NODE_COLUMNS: &str =
    "id, run, parent, level, agent, state, edit_kind, edit_text, edit_diff, \
     rationale, tokens_in, tokens_out, llm_calls, wall_s, device_s, compiled, correct, failure_class, \
     failure_detail, failure_evidence, speedup, ci_low, ci_high, stable, verified, baseline, peak_bytes, \
     planned_peak_bytes, created_at, evaluated_at, batch";

/// A text column that must be one of an enum's names.
pub(super) fn named<T>(row: &Row, i: usize, parse: fn(&str) -> Option<T>) -> rusqlite::Result<T> {
    let text: String = row.get(i)?;
    parse(&text).ok_or_else(|| {
        rusqlite::Error::FromSqlConversionFailure(
            i,
            rusqlite::types::Type::Text,
            format!("unknown value `{text}`").into(),
        )
    })
}

pub(super) fn failure_class(name: &str) -> Option<FailureClass> {
    FailureClass::ALL.into_iter().find(|c| c.name() == name)
}

/// A node from a row of [`NODE_COLUMNS`].
pub(super) fn node_of_row(row: &Row) -> rusqlite::Result<Node> {
    let state = named(row, 5, State::parse)?;
    let outcome = match state {
        State::InFlight => None,
        State::Evaluated => {
            let failure = match row.get::<_, Option<String>>(17)? {
                Some(_) => Some(Failure {
                    class: named(row, 17, failure_class)?,
                    detail: row.get(18)?,
                    evidence: row.get(19)?,
                }),
                None => None,
            };
            Some(Outcome {
                compiled: row.get(15)?,
                correct: row.get(16)?,
                failure,
                speedup: row.get(20)?,
                ci_low: row.get(21)?,
                ci_high: row.get(22)?,
                stable: row.get(23)?,
                verified: row.get(24)?,
                baseline: row.get(25)?,
                peak_bytes: row.get::<_, Option<i64>>(26)?.map(|b| b as u64),
                planned_peak_bytes: row.get::<_, Option<i64>>(27)?.map(|b| b as u64),
            })
        }
    };
    Ok(Node {
        id: row.get(0)?,
        run: row.get(1)?,
        parent: row.get(2)?,
        level: named(row, 3, Level::parse)?,
        agent: row.get(4)?,
        state,
        edit: Edit { kind: named(row, 6, EditKind::parse)?, text: row.get(7)?, diff: row.get(8)? },
        rationale: row.get(9)?,
        cost: Cost {
            tokens_in: row.get::<_, i64>(10)? as u64,
            tokens_out: row.get::<_, i64>(11)? as u64,
            llm_calls: row.get(12)?,
            wall_s: row.get(13)?,
            device_s: row.get(14)?,
        },
        outcome,
        created_at: row.get(28)?,
        evaluated_at: row.get(29)?,
        batch: row.get(30)?,
    })
}

/// Refuses a candidate file path that would land outside the sample folder, and a candidate
/// without files or with one path twice.
fn check_files(files: &[CandidateFile]) -> Result<(), Diagnostic> {
    if files.is_empty() {
        return Err(Diagnostic::error("a node's candidate has no file")
            .with_expected("`candidate.ekir`, `candidate.trace` or the files of `candidate.l2/`"));
    }
    let mut seen = std::collections::BTreeSet::new();
    for f in files {
        let p = Path::new(&f.path);
        let plain = !f.path.is_empty() && p.components().all(|c| matches!(c, Component::Normal(_)));
        if !plain {
            return Err(Diagnostic::error(format!(
                "candidate file path `{}` is not a plain relative path",
                f.path
            ))
            .with_expected(
                "a path inside the sample folder, e.g. `candidate.ekir` or `candidate.l2/kernels/k0.c`",
            ));
        }
        if !seen.insert(f.path.as_str()) {
            return Err(Diagnostic::error(format!("candidate file `{}` is given twice", f.path)));
        }
    }
    Ok(())
}

impl Tree {
    /// Opens the tree at `path` (a database file), creating it when absent.
    pub fn open(path: &Path) -> Result<Tree, Diagnostic> {
        Tree::open_with(path, true)
    }

    /// Opens an existing tree; a missing file or one that is not a tree is an error.
    pub fn open_existing(path: &Path) -> Result<Tree, Diagnostic> {
        if !path.is_file() {
            return Err(Diagnostic::error(format!("no candidate tree at `{}`", path.display())).with_hint(
                format!("give an agent run's folder (it holds `{TREE_FILE}`) or the database file"),
            ));
        }
        Tree::open_with(path, false)
    }

    /// The tree of `run_or_db`: the database file itself, or the `tree.sqlite` of a run folder.
    pub fn locate(run_or_db: &Path) -> PathBuf {
        if run_or_db.is_dir() {
            run_or_db.join(TREE_FILE)
        } else {
            run_or_db.to_path_buf()
        }
    }

    fn open_with(path: &Path, create: bool) -> Result<Tree, Diagnostic> {
        let sql = |e| sql_error(path, e);
        let mut flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        if create {
            flags |= OpenFlags::SQLITE_OPEN_CREATE;
        }
        let mut conn = Connection::open_with_flags(path, flags).map_err(sql)?;
        conn.busy_timeout(BUSY_TIMEOUT).map_err(sql)?;
        // WAL: a reader never blocks the writer, and a commit is one append to the log; FULL:
        // the log is synced at every commit, so a committed node survives a power loss too.
        let mode: String = conn.query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0)).map_err(sql)?;
        if mode != "wal" {
            return Err(Diagnostic::error(format!(
                "candidate tree `{}`: the database refused WAL mode (it is in `{mode}` mode)",
                path.display()
            ))
            .with_hint("keep the tree on a local file system"));
        }
        conn.execute_batch("PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON;").map_err(sql)?;
        schema::prepare(&mut conn, path, create)?;
        Ok(Tree { conn, path: path.to_path_buf() })
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    pub(super) fn conn(&self) -> &Connection {
        &self.conn
    }

    pub(super) fn conn_mut(&mut self) -> &mut Connection {
        &mut self.conn
    }

    pub(super) fn sql(&self, e: rusqlite::Error) -> Diagnostic {
        sql_error(&self.path, e)
    }

    /// Records a new run, `running`. Its id must be new in this database.
    pub fn begin_run(&mut self, spec: &RunSpec) -> Result<RunRecord, Diagnostic> {
        if self.find_run(&spec.id)?.is_some() {
            return Err(Diagnostic::error(format!(
                "run `{}` already exists in `{}`",
                spec.id,
                self.path.display()
            ))
            .with_hint("continue it (its in-flight nodes: `Tree::in_flight`) or choose another run id"));
        }
        let now = utc_now();
        let budgets = serde_json::to_string(&spec.budgets).expect("budgets serialise");
        self.conn
            .execute(
                "INSERT INTO runs (id, task, backend, target, baseline, budgets, status, created_at, updated_at) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'running', ?7, ?7)",
                (&spec.id, &spec.task, &spec.backend, &spec.target, &spec.baseline, budgets, &now),
            )
            .map_err(|e| self.sql(e))?;
        Ok(RunRecord {
            spec: spec.clone(),
            status: RunStatus::Running,
            created_at: now.clone(),
            updated_at: now,
        })
    }

    /// Sets a run's status.
    pub fn set_run_status(&mut self, run: &str, status: RunStatus) -> Result<(), Diagnostic> {
        self.run(run)?;
        self.conn
            .execute(
                "UPDATE runs SET status = ?2, updated_at = ?3 WHERE id = ?1",
                (run, status.name(), utc_now()),
            )
            .map_err(|e| self.sql(e))?;
        Ok(())
    }

    /// Every run, in the order they were begun.
    pub fn runs(&self) -> Result<Vec<RunRecord>, Diagnostic> {
        let mut stmt = self
            .conn
            .prepare(
                "SELECT id, task, backend, target, baseline, budgets, status, created_at, updated_at \
                 FROM runs ORDER BY created_at, rowid",
            )
            .map_err(|e| self.sql(e))?;
        let rows = stmt.query_map([], run_of_row).map_err(|e| self.sql(e))?;
        rows.collect::<Result<_, _>>().map_err(|e| self.sql(e))
    }

    fn find_run(&self, id: &str) -> Result<Option<RunRecord>, Diagnostic> {
        self.conn
            .query_row(
                "SELECT id, task, backend, target, baseline, budgets, status, created_at, updated_at \
                 FROM runs WHERE id = ?1",
                [id],
                run_of_row,
            )
            .optional()
            .map_err(|e| self.sql(e))
    }

    /// The run `id`; an error names the runs that exist.
    pub fn run(&self, id: &str) -> Result<RunRecord, Diagnostic> {
        if let Some(r) = self.find_run(id)? {
            return Ok(r);
        }
        let names: Vec<String> = self.runs()?.into_iter().map(|r| format!("`{}`", r.spec.id)).collect();
        let exists = if names.is_empty() {
            "it holds no run".to_string()
        } else {
            format!("its runs: {}", names.join(", "))
        };
        Err(Diagnostic::error(format!("no run `{id}` in `{}`: {exists}", self.path.display())))
    }

    /// Adds a node, in flight, in one transaction with its candidate's files; computes its diff
    /// against its parent's candidate. The root (no parent) is the run's starting program; a run
    /// has one.
    pub fn insert_node(&mut self, run: &str, node: &NewNode) -> Result<NodeId, Diagnostic> {
        self.run(run)?;
        check_files(&node.files)?;
        let parent_files = match node.parent {
            None => {
                if node.level != Level::Root || node.edit_kind != EditKind::None {
                    return Err(Diagnostic::error(format!(
                        "a node without a parent is the root: its level must be `root` and its edit kind `none` (got `{}`, `{}`)",
                        node.level.name(),
                        node.edit_kind.name()
                    ))
                    .with_hint("give the parent of an edit"));
                }
                if let Some(root) = self.root(run)? {
                    return Err(Diagnostic::error(format!(
                        "run `{run}` already has its root, node {}",
                        root.id
                    ))
                    .with_hint("an edit names its parent"));
                }
                None
            }
            Some(parent) => {
                let p = self.node(parent)?;
                if p.run != run {
                    return Err(Diagnostic::error(format!(
                        "node {parent} belongs to run `{}`, not to run `{run}`",
                        p.run
                    )));
                }
                if node.level == Level::Root || node.edit_kind == EditKind::None {
                    return Err(Diagnostic::error(format!(
                        "an edit of node {parent} needs a level (l0, l1, l2) and an edit kind (graph, trace, kernel); got `{}`, `{}`",
                        node.level.name(),
                        node.edit_kind.name()
                    )));
                }
                Some((parent, self.files(parent)?))
            }
        };
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
            .map_err(|e| sql_error(&self.path, e))?;
        let sql = |e| sql_error(&self.path, e);
        // The id this node gets (the writer holds the database from here to the commit), so
        // that its diff names it.
        let id: NodeId = tx
            .query_row(
                "SELECT coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'nodes'), 0) + 1",
                [],
                |r| r.get(0),
            )
            .map_err(sql)?;
        let diff = parent_files.map_or_else(String::new, |(parent, files)| {
            diff::unified(&files, &node.files, &parent.to_string(), &id.to_string())
        });
        tx.execute(
            "INSERT INTO nodes (id, run, parent, level, agent, state, edit_kind, edit_text, edit_diff, file_count, \
             rationale, tokens_in, tokens_out, llm_calls, wall_s, device_s, created_at) \
             VALUES (?1, ?2, ?3, ?4, ?5, 'in_flight', ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)",
            rusqlite::params![
                id,
                run,
                node.parent,
                node.level.name(),
                node.agent,
                node.edit_kind.name(),
                node.edit_text,
                diff,
                node.files.len() as i64,
                node.rationale,
                node.cost.tokens_in as i64,
                node.cost.tokens_out as i64,
                node.cost.llm_calls,
                node.cost.wall_s,
                node.cost.device_s,
                utc_now(),
            ],
        )
        .map_err(sql)?;
        {
            let mut add =
                tx.prepare("INSERT INTO files (node, path, text) VALUES (?1, ?2, ?3)").map_err(sql)?;
            for f in &node.files {
                add.execute((id, &f.path, &f.text)).map_err(sql)?;
            }
        }
        tx.commit().map_err(sql)?;
        Ok(id)
    }

    /// Records the evaluation of an in-flight node (one transaction): the whole record as JSON,
    /// the columns the queries read, and the evaluation's seconds added to the node's cost
    /// (build and run to its wall time, run to its device time).
    pub fn record_outcome(
        &mut self,
        id: NodeId,
        baseline: &str,
        result: &CandidateResult,
    ) -> Result<(), Diagnostic> {
        let node = self.node(id)?;
        if node.state == State::Evaluated {
            return Err(Diagnostic::error(format!(
                "node {id} is already evaluated ({})",
                node.describe_outcome()
            ))
            .with_hint("an evaluation is recorded once; add a new node to measure the candidate again"));
        }
        let timing = result.timing.as_ref();
        let verified = result.counted_speedup().is_some() && timing.is_some_and(|t| t.stable);
        let json = serde_json::to_string(result).expect("a result serialises");
        self.conn
            .execute(
                "UPDATE nodes SET state = 'evaluated', compiled = ?2, correct = ?3, failure_class = ?4, \
                 failure_detail = ?5, failure_evidence = ?6, speedup = ?7, ci_low = ?8, ci_high = ?9, stable = ?10, \
                 verified = ?11, baseline = ?12, peak_bytes = ?13, planned_peak_bytes = ?14, result = ?15, \
                 wall_s = wall_s + ?16, device_s = device_s + ?17, evaluated_at = ?18 WHERE id = ?1",
                rusqlite::params![
                    id,
                    result.compiled,
                    result.correct,
                    result.failure.as_ref().map(|f| f.class.name()),
                    result.failure.as_ref().map(|f| &f.detail),
                    result.failure.as_ref().map(|f| &f.evidence),
                    timing.map(|t| t.speedup),
                    timing.map(|t| t.ci_low),
                    timing.map(|t| t.ci_high),
                    timing.map(|t| t.stable),
                    verified,
                    baseline,
                    result.memory.as_ref().map(|m| m.candidate_peak_bytes as i64),
                    result.passes.as_ref().map(|p| p.after.planned_peak_bytes as i64),
                    json,
                    result.seconds.build + result.seconds.run,
                    result.seconds.run,
                    utc_now(),
                ],
            )
            .map_err(|e| self.sql(e))?;
        Ok(())
    }

    /// The node `id`; an error names the ids that exist.
    pub fn node(&self, id: NodeId) -> Result<Node, Diagnostic> {
        let found = self
            .conn
            .query_row(&format!("SELECT {NODE_COLUMNS} FROM nodes WHERE id = ?1"), [id], node_of_row)
            .optional()
            .map_err(|e| self.sql(e))?;
        match found {
            Some(n) => Ok(n),
            None => Err(self.no_node(id)),
        }
    }

    fn no_node(&self, id: NodeId) -> Diagnostic {
        let range: rusqlite::Result<(Option<i64>, Option<i64>, i64)> =
            self.conn.query_row("SELECT min(id), max(id), count(*) FROM nodes", [], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?))
            });
        let exists = match range {
            Ok((Some(lo), Some(hi), n)) => format!("it holds {n} node(s), ids {lo} to {hi}"),
            Ok(_) => "it holds no node".to_string(),
            Err(e) => e.to_string(),
        };
        Diagnostic::error(format!("no node {id} in `{}`: {exists}", self.path.display()))
            .with_hint("`ekb tree RUN show` lists the nodes")
    }

    /// The files of a node's candidate, in path order.
    pub fn files(&self, id: NodeId) -> Result<Vec<CandidateFile>, Diagnostic> {
        self.node(id)?;
        let mut stmt = self
            .conn
            .prepare("SELECT path, text FROM files WHERE node = ?1 ORDER BY path")
            .map_err(|e| self.sql(e))?;
        let rows = stmt
            .query_map([id], |r| Ok(CandidateFile { path: r.get(0)?, text: r.get(1)? }))
            .map_err(|e| self.sql(e))?;
        rows.collect::<Result<_, _>>().map_err(|e| self.sql(e))
    }

    /// The whole evaluation record of a node; `None` while it is in flight.
    pub fn result(&self, id: NodeId) -> Result<Option<CandidateResult>, Diagnostic> {
        self.node(id)?;
        let json: Option<String> = self
            .conn
            .query_row("SELECT result FROM nodes WHERE id = ?1", [id], |r| r.get(0))
            .map_err(|e| self.sql(e))?;
        json.map(|j| {
            serde_json::from_str(&j).map_err(|e| {
                Diagnostic::error(format!("node {id}: its stored evaluation record does not read: {e}"))
                    .with_file(&self.path.display().to_string())
            })
        })
        .transpose()
    }

    /// The run's root (its starting program), once added.
    pub fn root(&self, run: &str) -> Result<Option<Node>, Diagnostic> {
        self.conn
            .query_row(
                &format!("SELECT {NODE_COLUMNS} FROM nodes WHERE run = ?1 AND parent IS NULL"),
                [run],
                node_of_row,
            )
            .optional()
            .map_err(|e| self.sql(e))
    }

    /// Every node of a run, in the order they were added.
    pub fn nodes(&self, run: &str) -> Result<Vec<Node>, Diagnostic> {
        self.run(run)?;
        self.select_nodes("WHERE run = ?1 ORDER BY id", [run])
    }

    /// The run's nodes still in flight (added, never evaluated: the loop stopped while they
    /// were evaluated), oldest first. A resumed loop evaluates them again or abandons them.
    pub fn in_flight(&self, run: &str) -> Result<Vec<Node>, Diagnostic> {
        self.run(run)?;
        self.select_nodes("WHERE run = ?1 AND state = 'in_flight' ORDER BY id", [run])
    }

    pub(super) fn select_nodes(
        &self,
        tail: &str,
        params: impl rusqlite::Params,
    ) -> Result<Vec<Node>, Diagnostic> {
        let mut stmt = self
            .conn
            .prepare(&format!("SELECT {NODE_COLUMNS} FROM nodes {tail}"))
            .map_err(|e| self.sql(e))?;
        let rows = stmt.query_map(params, node_of_row).map_err(|e| self.sql(e))?;
        rows.collect::<Result<_, _>>().map_err(|e| self.sql(e))
    }

    /// SQLite's own check of the file (`PRAGMA integrity_check`) and that every node holds as
    /// many files as it was written with: the empty list when all is well.
    pub fn check_integrity(&self) -> Result<Vec<String>, Diagnostic> {
        let mut problems = Vec::new();
        let mut stmt = self.conn.prepare("PRAGMA integrity_check").map_err(|e| self.sql(e))?;
        let rows = stmt.query_map([], |r| r.get::<_, String>(0)).map_err(|e| self.sql(e))?;
        for row in rows {
            let line = row.map_err(|e| self.sql(e))?;
            if line != "ok" {
                problems.push(line);
            }
        }
        let mut stmt = self
            .conn
            .prepare(
                "SELECT n.id, n.file_count, (SELECT count(*) FROM files f WHERE f.node = n.id) AS found \
                 FROM nodes n WHERE found != n.file_count",
            )
            .map_err(|e| self.sql(e))?;
        let rows = stmt
            .query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?, r.get::<_, i64>(2)?)))
            .map_err(|e| self.sql(e))?;
        for row in rows {
            let (id, want, found) = row.map_err(|e| self.sql(e))?;
            problems.push(format!("node {id} was written with {want} file(s) and holds {found}"));
        }
        Ok(problems)
    }
}

fn run_of_row(row: &Row) -> rusqlite::Result<RunRecord> {
    let budgets: String = row.get(5)?;
    let budgets: Budgets = serde_json::from_str(&budgets).map_err(|e| {
        rusqlite::Error::FromSqlConversionFailure(5, rusqlite::types::Type::Text, Box::new(e))
    })?;
    Ok(RunRecord {
        spec: RunSpec {
            id: row.get(0)?,
            task: row.get(1)?,
            backend: row.get(2)?,
            target: row.get(3)?,
            baseline: row.get(4)?,
            budgets,
        },
        status: named(row, 6, RunStatus::parse)?,
        created_at: row.get(7)?,
        updated_at: row.get(8)?,
    })
}
