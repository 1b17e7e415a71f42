//! Batches and confirmations in the store: each batch of evaluations with the load of the
//! machine when it started ([`Tree::begin_batch`]), and the confirmation of a run's answer, its
//! measurement again against the run's root ([`Tree::insert_confirmation`],
//! [`Tree::record_confirmation`]).
//!
//! What must stay true: a confirmation is added in flight together with its batch (one
//! transaction) before it is evaluated, so a killed run finds it with [`Tree::confirmations`]
//! and finishes it; its verdict is [`verdict`] of its record, nothing else.

use super::node::{BatchKind, BatchRecord, Confirmation, NodeId, State, Verdict};
use super::store::{failure_class, named, sql_error, Tree};
use ekb_eval::results::{utc_now, CandidateResult, FailureClass};
use ekb_ir::Diagnostic;
use rusqlite::Row;

/// The columns of a confirmation, in the order [`confirmation_of_row`] reads them.
const COLUMNS: &str = "id, run, node, against, batch, state, verdict, correct, failure_class, speedup, \
     ci_low, ci_high, stable, wall_s, device_s, created_at, evaluated_at";

fn confirmation_of_row(row: &Row) -> rusqlite::Result<Confirmation> {
    let failure = match row.get::<_, Option<String>>(8)? {
        Some(_) => Some(named(row, 8, failure_class)?),
        None => None,
    };
    let verdict = match row.get::<_, Option<String>>(6)? {
        Some(_) => Some(named(row, 6, Verdict::parse)?),
        None => None,
    };
    Ok(Confirmation {
        id: row.get(0)?,
        run: row.get(1)?,
        node: row.get(2)?,
        against: row.get(3)?,
        batch: row.get(4)?,
        state: named(row, 5, State::parse)?,
        verdict,
        correct: row.get(7)?,
        failure,
        speedup: row.get(9)?,
        ci_low: row.get(10)?,
        ci_high: row.get(11)?,
        stable: row.get(12)?,
        wall_s: row.get(13)?,
        device_s: row.get(14)?,
        created_at: row.get(15)?,
        evaluated_at: row.get(16)?,
    })
}

/// The verdict on a confirmation's record: confirmed when it is correct, had no failure other
/// than an unstable timing, its baseline (the start) ran, and the interval of its speedup over
/// the start has a lower bound of at least 1.0. This is the answer rule of the loop with the
/// start as the baseline (its speedup over itself is 1.0), except that the interval need not be
/// narrow: the question is whether the answer is still faster than the start, which a wide
/// interval above 1.0 answers as well as a narrow one.
pub fn verdict(result: &CandidateResult) -> Verdict {
    let clean = result.correct
        && result.baseline_failure.is_none()
        && result.failure.as_ref().is_none_or(|f| f.class == FailureClass::UnstableTiming);
    if clean && result.timing.as_ref().is_some_and(|t| t.ci_low >= 1.0) {
        Verdict::Confirmed
    } else {
        Verdict::Rejected
    }
}

/// The load average of this machine now: the first three fields of `/proc/loadavg`, or
/// `unknown` where there is none.
pub fn load_now() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .map(|t| t.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .filter(|l| !l.is_empty())
        .unwrap_or_else(|| "unknown".into())
}

impl Tree {
    /// Records that batch `name` of `run` starts now, with the load `load`, and that it measures
    /// `nodes`. A batch started again (a resumed run) gets the load of its new start.
    pub fn begin_batch(
        &mut self,
        run: &str,
        name: &str,
        kind: BatchKind,
        load: &str,
        nodes: &[NodeId],
    ) -> Result<(), Diagnostic> {
        self.run(run)?;
        let path = self.path().to_path_buf();
        let tx = self.conn_mut().transaction().map_err(|e| sql_error(&path, e))?;
        let done = (|| {
            tx.execute(
                "INSERT INTO batches (name, run, kind, load, started_at) VALUES (?1, ?2, ?3, ?4, ?5) \
                 ON CONFLICT(name) DO UPDATE SET load = excluded.load, started_at = excluded.started_at",
                (name, run, kind.name(), load, utc_now()),
            )?;
            for id in nodes {
                tx.execute("UPDATE nodes SET batch = ?2 WHERE id = ?1", (id, name))?;
            }
            tx.commit()
        })();
        done.map_err(|e| sql_error(&path, e))
    }

    /// Every batch of a run, in the order they started first.
    pub fn batches(&self, run: &str) -> Result<Vec<BatchRecord>, Diagnostic> {
        self.run(run)?;
        let mut stmt = self
            .conn()
            .prepare("SELECT name, run, kind, load, started_at FROM batches WHERE run = ?1 ORDER BY rowid")
            .map_err(|e| self.sql(e))?;
        let rows = stmt
            .query_map([run], |r| {
                Ok(BatchRecord {
                    name: r.get(0)?,
                    run: r.get(1)?,
                    kind: named(r, 2, BatchKind::parse)?,
                    load: r.get(3)?,
                    started_at: r.get(4)?,
                })
            })
            .map_err(|e| self.sql(e))?;
        rows.collect::<Result<_, _>>().map_err(|e| self.sql(e))
    }

    /// Adds a confirmation of `node` against `against`, in flight, with its batch `batch`
    /// (started now, under `load`), in one transaction.
    pub fn insert_confirmation(
        &mut self,
        run: &str,
        node: NodeId,
        against: NodeId,
        batch: &str,
        load: &str,
    ) -> Result<i64, Diagnostic> {
        for id in [node, against] {
            let n = self.node(id)?;
            if n.run != run {
                return Err(Diagnostic::error(format!(
                    "node {id} belongs to run `{}`, not to run `{run}`",
                    n.run
                )));
            }
        }
        let path = self.path().to_path_buf();
        let tx = self.conn_mut().transaction().map_err(|e| sql_error(&path, e))?;
        let now = utc_now();
        let done = (|| {
            tx.execute(
                "INSERT INTO batches (name, run, kind, load, started_at) VALUES (?1, ?2, 'confirm', ?3, ?4) \
                 ON CONFLICT(name) DO UPDATE SET load = excluded.load, started_at = excluded.started_at",
                (batch, run, load, &now),
            )?;
            tx.execute(
                "INSERT INTO confirmations (run, node, against, batch, state, created_at) \
                 VALUES (?1, ?2, ?3, ?4, 'in_flight', ?5)",
                (run, node, against, batch, &now),
            )?;
            let id = tx.last_insert_rowid();
            tx.commit()?;
            Ok(id)
        })();
        done.map_err(|e| sql_error(&path, e))
    }

    /// Records the evaluation of an in-flight confirmation: its verdict ([`verdict`]), its
    /// columns, the whole record, and the evaluation's seconds.
    pub fn record_confirmation(&mut self, id: i64, result: &CandidateResult) -> Result<Verdict, Diagnostic> {
        let c = self.confirmation(id)?;
        if c.state == State::Evaluated {
            return Err(Diagnostic::error(format!(
                "confirmation {id} is already evaluated ({})",
                c.describe()
            )));
        }
        let v = verdict(result);
        let timing = result.timing.as_ref();
        let json = serde_json::to_string(result).expect("a result serialises");
        self.conn()
            .execute(
                "UPDATE confirmations SET state = 'evaluated', verdict = ?2, correct = ?3, failure_class = ?4, \
                 speedup = ?5, ci_low = ?6, ci_high = ?7, stable = ?8, wall_s = ?9, device_s = ?10, result = ?11, \
                 evaluated_at = ?12 WHERE id = ?1",
                rusqlite::params![
                    id,
                    v.name(),
                    result.correct,
                    result.failure.as_ref().map(|f| f.class.name()),
                    timing.map(|t| t.speedup),
                    timing.map(|t| t.ci_low),
                    timing.map(|t| t.ci_high),
                    timing.map(|t| t.stable),
                    result.seconds.build + result.seconds.run,
                    result.seconds.run,
                    json,
                    utc_now(),
                ],
            )
            .map_err(|e| self.sql(e))?;
        Ok(v)
    }

    /// The confirmation `id`.
    pub fn confirmation(&self, id: i64) -> Result<Confirmation, Diagnostic> {
        self.conn()
            .query_row(
                &format!("SELECT {COLUMNS} FROM confirmations WHERE id = ?1"),
                [id],
                confirmation_of_row,
            )
            .map_err(|e| match e {
                rusqlite::Error::QueryReturnedNoRows => {
                    Diagnostic::error(format!("no confirmation {id} in `{}`", self.path().display()))
                }
                e => self.sql(e),
            })
    }

    /// Every confirmation of a run, oldest first.
    pub fn confirmations(&self, run: &str) -> Result<Vec<Confirmation>, Diagnostic> {
        self.run(run)?;
        let mut stmt = self
            .conn()
            .prepare(&format!("SELECT {COLUMNS} FROM confirmations WHERE run = ?1 ORDER BY id"))
            .map_err(|e| self.sql(e))?;
        let rows = stmt.query_map([run], confirmation_of_row).map_err(|e| self.sql(e))?;
        rows.collect::<Result<_, _>>().map_err(|e| self.sql(e))
    }
}
