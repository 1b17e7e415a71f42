//! `ekb-rt`: the device runtime. It loads benchmark payloads (`ekb_wire::payload`), links their
//! CPU kernels with its own ELF loader, runs them on a thread pool over seeded inputs, and
//! checks the outputs against the expected values the host computed.
//!
//! The library is the runtime's building blocks; `main.rs` is the `ekb-rt` command on top:
//! - [`loader`]: kernel objects → callable entry points (W^X, import table, relocations);
//! - [`pool`]: the thread pool behind the kernels' `ekb_parallel_for` import;
//! - [`buffers`]: page-aligned buffer regions with guard zones, seeded fills and poison;
//! - [`program`]: a payload's plan bound to loaded kernels and buffers, run seed by seed;
//! - [`check`]: output comparison under the payload's tolerance;
//! - [`device`]: what `ekb-rt info` reports about the machine;
//! - [`run`]: a payload run for correctness, as the protocol's report;
//! - [`sys`]: page-level memory mappings.

pub mod buffers;
pub mod check;
pub mod device;
pub mod loader;
pub mod pool;
pub mod program;
pub mod run;
pub mod sys;
