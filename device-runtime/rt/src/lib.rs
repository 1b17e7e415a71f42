//! `ekb-rt`: the device runtime. It loads benchmark payloads (`ekb_wire::payload`), links their
//! CPU kernels with its own ELF loader (or, built with the features `opencl` and `cuda`, builds
//! their GPU programs on the device through `ekb-gpu`), runs them on a thread pool or the GPU
//! over seeded inputs, and checks the outputs against the expected values the host computed.
//!
//! The library is the runtime's building blocks; `main.rs` is the `ekb-rt` command on top:
//! - [`loader`]: kernel objects → callable entry points (W^X, import table, relocations);
//! - [`pool`]: the thread pool behind the kernels' `ekb_parallel_for` import (`ekb-pool`);
//! - [`buffers`]: page-aligned buffer regions with guard zones, seeded fills and poison;
//! - [`program`]: a payload's plan bound to loaded kernels and buffers, run seed by seed;
//! - [`store`]: loaded payloads, each in a mapping of its own;
//! - [`check`]: output comparison under the payload's tolerance;
//! - [`device`]: what `ekb-rt info` reports about the machine;
//! - [`counters`]: performance counters (perf-event2);
//! - [`memory`]: bytes by scope, the peak, allocation legality;
//! - [`isolate`]: the kernel process (fork, fault records, rlimits, watchdog, reaping);
//! - [`seccomp`]: the kernel process's system-call filter (hand-written BPF);
//! - [`worker`]: what the kernel process does (setup, sandbox, timed executions);
//! - [`run`]: a payload run or a paired run, as the protocol's reports;
//! - [`serve`]: the protocol loop of `ekb-rt serve`;
//! - [`sys`]: page-level memory mappings;
//! - [`gpu`]: GPU payloads (features `opencl` and `cuda`): plans for the shared GPU executors
//!   of `ekb-gpu`, builds at load time and device descriptions, each in a child process.

pub mod buffers;
pub mod check;
pub mod counters;
pub mod device;
pub mod gpu;
pub mod isolate;
pub mod loader;
pub mod memory;
pub mod pool;
pub mod program;
pub mod run;
pub mod seccomp;
pub mod serve;
pub mod store;
pub mod sys;
pub mod worker;

#[cfg(all(feature = "gpu", target_env = "musl"))]
compile_error!(
    "GPU builds of ekb-rt load their drivers with dlopen, which a static musl binary cannot: build for \
     x86_64-unknown-linux-gnu or aarch64-unknown-linux-gnu"
);

/// The backends this build runs, as text the host finds in the binary's bytes: the host tells a
/// GPU build from a CPU-only one by it before it starts or copies a runtime for a GPU payload
/// (`ekb_deploy::runtime`), and `ekb-rt --version` prints it. The format is fixed:
/// `ekb-rt backends: ` then the backends' names, space-separated, then `;`.
pub const BACKENDS_MARKER: &str = match (cfg!(feature = "opencl"), cfg!(feature = "cuda")) {
    (true, true) => "ekb-rt backends: cpu-llvm opencl cuda;",
    (true, false) => "ekb-rt backends: cpu-llvm opencl;",
    (false, true) => "ekb-rt backends: cpu-llvm cuda;",
    (false, false) => "ekb-rt backends: cpu-llvm;",
};

/// The GPU backends this build runs (empty in the default, CPU-only build).
pub fn gpu_backends() -> &'static [ekb_wire::payload::Backend] {
    use ekb_wire::payload::Backend;
    match (cfg!(feature = "opencl"), cfg!(feature = "cuda")) {
        (true, true) => &[Backend::OpenCl, Backend::Cuda],
        (true, false) => &[Backend::OpenCl],
        (false, true) => &[Backend::Cuda],
        (false, false) => &[],
    }
}
