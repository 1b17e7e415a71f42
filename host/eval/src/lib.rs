//! `ekb-eval`: the evaluation side of EdgeKernelBench.
//!
//! - [`tasks`]: the benchmark task suite (`tasks/levelN/NAME.ekir` with its PyTorch twin
//!   `NAME.py`): metadata, loading, filters, cost estimates, validation, reference I/O export and
//!   the counts table.

pub mod tasks;
