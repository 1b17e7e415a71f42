//! The tables of a candidate tree database and its version.
//!
//! `meta` holds `schema_version`; a database of another version is refused with both numbers
//! named, never read as if it were this one. The checks in the tables keep the invariants the
//! queries rely on: the root alone has no parent and level `root`, one root per run, an
//! evaluated node has its evaluation record, every file belongs to a node.
//!
//! A version-2 tree (before batches and confirmations) is upgraded in place when opened: the
//! two tables are added and its nodes get an empty `batch`.
//!
//! What must stay true: a change of the tables is a new [`SCHEMA_VERSION`] (and the docs'
//! schema section with it).

use ekb_ir::Diagnostic;
use rusqlite::{Connection, OptionalExtension};
use std::path::Path;

/// The version of the tables written by this build.
pub const SCHEMA_VERSION: u32 = 3;

/// The tables, as created in a new database.
pub const TABLES: &str = "
CREATE TABLE meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE runs (
    id TEXT PRIMARY KEY,
    task TEXT NOT NULL,
    backend TEXT NOT NULL,
    target TEXT NOT NULL,
    baseline TEXT NOT NULL,
    budgets TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('running', 'finished', 'stopped')),
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE TABLE nodes (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    run TEXT NOT NULL REFERENCES runs(id),
    parent INTEGER REFERENCES nodes(id),
    level TEXT NOT NULL CHECK (level IN ('root', 'l0', 'l1', 'l2', 'flat')),
    agent TEXT NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('in_flight', 'evaluated')),
    edit_kind TEXT NOT NULL CHECK (edit_kind IN ('none', 'graph', 'trace', 'kernel', 'program')),
    edit_text TEXT NOT NULL,
    edit_diff TEXT NOT NULL,
    file_count INTEGER NOT NULL,
    rationale TEXT NOT NULL,
    tokens_in INTEGER NOT NULL,
    tokens_out INTEGER NOT NULL,
    llm_calls INTEGER NOT NULL,
    wall_s REAL NOT NULL,
    device_s REAL NOT NULL,
    compiled INTEGER,
    correct INTEGER,
    failure_class TEXT,
    failure_detail TEXT,
    failure_evidence TEXT,
    speedup REAL,
    ci_low REAL,
    ci_high REAL,
    stable INTEGER,
    verified INTEGER NOT NULL DEFAULT 0,
    baseline TEXT,
    peak_bytes INTEGER,
    planned_peak_bytes INTEGER,
    result TEXT,
    created_at TEXT NOT NULL,
    evaluated_at TEXT,
    batch TEXT REFERENCES batches(name),
    CHECK ((parent IS NULL) = (level = 'root')),
    CHECK ((state = 'evaluated') = (result IS NOT NULL))
);
CREATE UNIQUE INDEX nodes_one_root_per_run ON nodes(run) WHERE parent IS NULL;
CREATE INDEX nodes_by_parent ON nodes(parent);
CREATE INDEX nodes_by_speedup ON nodes(run, verified, speedup);
CREATE TABLE files (
    node INTEGER NOT NULL REFERENCES nodes(id),
    path TEXT NOT NULL,
    text TEXT NOT NULL,
    PRIMARY KEY (node, path)
) WITHOUT ROWID;
";

/// The tables version 3 added to version 2: each batch of evaluations with the machine's load
/// when it started, and the confirmations of a run's answer.
pub const TABLES_V3: &str = "
CREATE TABLE batches (
    name TEXT PRIMARY KEY,
    run TEXT NOT NULL REFERENCES runs(id),
    kind TEXT NOT NULL CHECK (kind IN ('search', 'confirm')),
    load TEXT NOT NULL,
    started_at TEXT NOT NULL
);
CREATE TABLE confirmations (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    run TEXT NOT NULL REFERENCES runs(id),
    node INTEGER NOT NULL REFERENCES nodes(id),
    against INTEGER NOT NULL REFERENCES nodes(id),
    batch TEXT NOT NULL REFERENCES batches(name),
    state TEXT NOT NULL CHECK (state IN ('in_flight', 'evaluated')),
    verdict TEXT CHECK (verdict IN ('confirmed', 'rejected')),
    correct INTEGER,
    failure_class TEXT,
    speedup REAL,
    ci_low REAL,
    ci_high REAL,
    stable INTEGER,
    wall_s REAL NOT NULL DEFAULT 0,
    device_s REAL NOT NULL DEFAULT 0,
    result TEXT,
    created_at TEXT NOT NULL,
    evaluated_at TEXT,
    CHECK ((state = 'evaluated') = (verdict IS NOT NULL AND result IS NOT NULL))
);
";

/// Creates the tables in an empty database, or checks the version of an existing one.
pub fn prepare(conn: &mut Connection, path: &Path, create: bool) -> Result<(), Diagnostic> {
    let sql = |e: rusqlite::Error| super::store::sql_error(path, e);
    let tables: i64 = conn
        .query_row("SELECT count(*) FROM sqlite_schema WHERE type = 'table'", [], |r| r.get(0))
        .map_err(sql)?;
    if tables == 0 {
        if !create {
            return Err(not_a_tree(path, "it holds no tables"));
        }
        let tx = conn.transaction().map_err(sql)?;
        tx.execute_batch(TABLES).map_err(sql)?;
        tx.execute_batch(TABLES_V3).map_err(sql)?;
        tx.execute(
            "INSERT INTO meta (key, value) VALUES ('schema_version', ?1), ('created_by', ?2)",
            (SCHEMA_VERSION.to_string(), format!("ekb {}", env!("CARGO_PKG_VERSION"))),
        )
        .map_err(sql)?;
        return tx.commit().map_err(sql);
    }
    let has_meta: bool = conn
        .query_row("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'meta'", [], |_| Ok(true))
        .optional()
        .map_err(sql)?
        .unwrap_or(false);
    if !has_meta {
        return Err(not_a_tree(path, "it has tables but no `meta` table"));
    }
    let version: Option<String> = conn
        .query_row("SELECT value FROM meta WHERE key = 'schema_version'", [], |r| r.get(0))
        .optional()
        .map_err(sql)?;
    match version.as_deref().map(str::parse::<u32>) {
        Some(Ok(SCHEMA_VERSION)) => Ok(()),
        Some(Ok(2)) => {
            let tx = conn.transaction().map_err(sql)?;
            tx.execute_batch(TABLES_V3).map_err(sql)?;
            tx.execute_batch(
                "ALTER TABLE nodes ADD COLUMN batch TEXT REFERENCES batches(name); \
                 UPDATE meta SET value = '3' WHERE key = 'schema_version';",
            )
            .map_err(sql)?;
            tx.commit().map_err(sql)
        }
        Some(Ok(v)) if v > SCHEMA_VERSION => Err(Diagnostic::error(format!(
            "the candidate tree `{}` has schema version {v}, newer than version {SCHEMA_VERSION} that this ekb reads",
            path.display()
        ))
        .with_hint("read it with the ekb that wrote it (its `meta` table names it as `created_by`), or a newer one")),
        Some(Ok(v)) => Err(Diagnostic::error(format!(
            "the candidate tree `{}` has schema version {v}; this ekb reads version {SCHEMA_VERSION} only (and upgrades version 2)",
            path.display()
        ))
        .with_hint("read it with the ekb that wrote it (its `meta` table names it as `created_by`)")),
        Some(Err(_)) | None => Err(not_a_tree(
            path,
            &format!("its `meta` table has no readable `schema_version` (found {:?})", version.unwrap_or_default()),
        )),
    }
}

fn not_a_tree(path: &Path, why: &str) -> Diagnostic {
    Diagnostic::error(format!("`{}` is not a candidate tree: {why}", path.display()))
        .with_hint("give the run folder of an agent run, or its `tree.sqlite`")
}
