//! `ekb-deploy`: the host side of deployment, everything between an IR file and a report from a
//! board.
//!
//! - [`driver`]: the compile pipeline, every stage in order (graph passes, lowering for the CPU
//!   or the GPU, verification, binding to the task's graph, LLVM IR or OpenCL C / CUDA C,
//!   clang-19), with per-stage dumps; and the run of one payload on a device (`measure`).
//! - [`l2`]: the L2 form, an L1 module some of whose kernels are given as backend source (an
//!   editable folder, or a native answer as one kernel over the graph's buffers).
//! - [`arena`]: the temp arena of a CPU payload (temps never live at once share bytes).
//! - [`build`]: a compiled program becomes a payload file for a target profile (parameter data,
//!   expected outputs from the reference interpreter, the manifest).
//! - [`references`]: reference outputs shared by the payloads of one task, given or computed
//!   once on demand.
//! - [`runtime`]: finding the static `ekb-rt` binaries for each architecture, and the GPU
//!   builds.
//! - [`session`]: the protocol client (hello and version negotiation, then requests) over any
//!   byte-stream pair.
//! - [`transport`]: reaching a device: `local`, `qemu`, `ssh://…`, `adb[:serial]`, and
//!   `dir:PATH` (a bundle instead of a run).
//! - [`bundle`]: self-contained directories for air-gapped boards.
//! - [`report`]: report files read back, shown as tables or JSON.
//! - [`lava`]: LAVA test jobs that run a bundle on a board farm, and LAVA's results read back.
//! - [`command`]: external commands as data, so every command line a transport runs is
//!   testable.
//!
//! Errors are `ekb_ir::Diagnostic`s, rendered like every other `ekb` error.

pub mod arena;
pub mod build;
pub mod bundle;
pub mod command;
pub mod driver;
pub mod l2;
pub mod lava;
pub mod references;
pub mod report;
pub mod runtime;
pub mod session;
pub mod transport;

pub use build::{build, build_for, BuildOptions, BuildSummary, Built};
pub use driver::{
    compile, measure, Artifact, BackendChoice, CompileOptions, Dump, Failure, Program, Sources, Stage,
    TraceInput,
};
pub use runtime::{find_gpu_runtime, find_runtime, Runtime};
pub use transport::{connect, run_payloads, Device, Mode, RemoteOptions, RunOutcome, RunSettings, Transport};
