//! `ekb-llvm`: the CPU adapter. An L1 module becomes LLVM IR text ([`emit`]), clang-19 turns
//! it into an ELF relocatable object for the target profile's triple and CPU ([`compile`]), and
//! [`HostModule`] loads such an object into this process to run a module's plan (tests and
//! host benchmarks). The device runtime loads the same objects with its own ELF loader.
//!
//! Hand-written (L2) kernels, LLVM IR or C, are compiled one per object ([`compile_kernel`]) and
//! linked with the emitted ones into one object ([`link_objects`]).
//!
//! The contract between emitted kernels and whoever loads them is the kernel ABI, written down
//! in `docs/abi.md` and checked on every compiled object by [`check_object`]: exported
//! `void ekb_k_<kernel>(void *const *args)` entries, 64-byte-aligned non-overlapping buffers,
//! and no undefined symbol outside [`IMPORTS`].

pub mod abi;
pub mod cache;
mod compile;
mod emit;
mod host;
mod l2;

pub use abi::{check_object, kernel_symbol, Arch, ObjectInfo, IMPORTS, KERNEL_PREFIX, PARALLEL_FOR};
pub use compile::{assembly, codegen_args, compile, find_clang, CompileLog, CLANG_ENV};
pub use emit::{emit, MathFn, UNROLL_COUNT, UNROLL_FULL_MAX_TRIPS};
pub use host::{HostModule, BUFFER_ALIGN};
pub use l2::{compile_kernel, link_objects, KernelLang};
