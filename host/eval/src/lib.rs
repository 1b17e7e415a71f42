//! `ekb-eval`: the evaluation side of EdgeKernelBench.
//!
//! - [`tasks`]: the benchmark task suite (`tasks/levelN/NAME.ekir` with its PyTorch twin
//!   `NAME.py`): metadata, loading, filters, cost estimates, validation, reference I/O export and
//!   the counts table.
//! - [`results`]: the stored form of an evaluation run (`run.json`, `results.jsonl`) and its
//!   run directory, appended as candidates finish and resumable.

pub mod results;
pub mod tasks;
