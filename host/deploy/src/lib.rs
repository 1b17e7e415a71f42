//! `ekb-deploy`: the host side of deployment, everything between an IR file and a report from a
//! board.
//!
//! - [`build`]: an L0 graph or an L1 module becomes a payload file for a target profile
//!   (lowered, verified, compiled with clang-19 for the CPU or emitted as OpenCL C / CUDA C for
//!   the GPU, expected outputs from the reference interpreter).
//! - [`runtime`]: finding the static `ekb-rt` binaries for each architecture, and the GPU
//!   builds.
//! - [`session`]: the protocol client (hello and version negotiation, then requests) over any
//!   byte-stream pair.
//! - [`transport`]: reaching a device: `local`, `qemu`, `ssh://…`, `adb[:serial]`, and
//!   `dir:PATH` (a bundle instead of a run).
//! - [`bundle`]: self-contained directories for air-gapped boards.
//! - [`report`]: report files read back, shown as tables or JSON.
//! - [`command`]: external commands as data, so every command line a transport runs is
//!   testable.
//!
//! Errors are `ekb_ir::Diagnostic`s, rendered like every other `ekb` error.

pub mod build;
pub mod bundle;
pub mod command;
pub mod report;
pub mod runtime;
pub mod session;
pub mod transport;

pub use build::{build, build_for, BackendChoice, BuildOptions, BuildSummary, Built, Program, Sources};
pub use runtime::{find_gpu_runtime, find_runtime, Runtime};
pub use transport::{connect, run_payloads, Device, Mode, RemoteOptions, RunOutcome, RunSettings, Transport};
