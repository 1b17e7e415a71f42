//! `ekb-eval`: the evaluation side of EdgeKernelBench.
//!
//! - [`tasks`]: the benchmark task suite (`tasks/levelN/NAME.ekir` with its PyTorch twin
//!   `NAME.py`): metadata, loading, filters, cost estimates, validation, reference I/O export and
//!   the counts table.
//! - [`evaluate`]: the evaluation protocol over candidates: build, check on every seed, time
//!   against the baseline on a device, classify failures, store each result as it finishes.
//! - [`results`]: the stored form of an evaluation run (`run.json`, `results.jsonl`) and its
//!   run directory, appended as candidates finish and resumable.
//! - [`metrics`]: Compile@k, Correct@k, Fast@p, speedup and memory summaries per group, the
//!   failure taxonomy and review flags, computed from stored runs; [`report`] renders them.

pub mod evaluate;
pub mod metrics;
pub mod report;
pub mod results;
pub mod tasks;
