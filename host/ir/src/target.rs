//! Target profiles: what the compiler and the verifier know about a board.
//!
//! Profiles are TOML files in `toolchains/` (built into the binary, so `ekb` works from any
//! directory); a user may also pass a path to their own. Every number in a shipped profile
//! carries a comment saying where it comes from. The live device limits reported by the runtime
//! take precedence over a profile when both are known.

use serde::{Deserialize, Serialize};

/// The profiles shipped in `toolchains/`, by name.
pub const BUILTIN: &[(&str, &str)] = &[
    ("host", include_str!("../../../toolchains/host.toml")),
    ("aarch64-qemu", include_str!("../../../toolchains/aarch64-qemu.toml")),
    ("jetson-orin", include_str!("../../../toolchains/jetson-orin.toml")),
    ("rk3588", include_str!("../../../toolchains/rk3588.toml")),
    ("pocl", include_str!("../../../toolchains/pocl.toml")),
    ("h200", include_str!("../../../toolchains/h200.toml")),
];

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TargetProfile {
    pub name: String,
    pub description: String,
    pub cpu: CpuProfile,
    #[serde(default)]
    pub gpu: Option<GpuProfile>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CpuProfile {
    /// LLVM target triple given to clang (`--target`).
    pub triple: String,
    /// `-mcpu` value; `native` means the machine compiling (host profile only).
    pub cpu: String,
    /// Extra `-mattr`-style features, e.g. `+neon`, `+dotprod`.
    #[serde(default)]
    pub features: Vec<String>,
    /// Core clusters, fastest first; empty means "detect on the machine" (host profile only).
    #[serde(default)]
    pub clusters: Vec<CoreCluster>,
    /// SIMD register width in bits (128 for NEON, 256 for AVX2, 512 for AVX-512).
    pub vector_bits: u32,
    /// Bytes of stack a kernel thread may use for `local` allocations.
    pub stack_bytes: u64,
    /// Bytes of memory a benchmark program may occupy on the board (inputs, parameters,
    /// outputs, intermediates).
    pub memory_bytes: u64,
    /// Data cache line size in bytes.
    pub cache_line_bytes: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CoreCluster {
    /// e.g. `big`, `little`.
    pub name: String,
    /// Core model (`cortex-a76`).
    pub core: String,
    pub count: u32,
    /// Logical CPU numbers of this cluster as Linux numbers them, for affinity.
    #[serde(default)]
    pub cpus: Vec<u32>,
    #[serde(default)]
    pub max_mhz: Option<u32>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GpuProfile {
    /// `cuda` or `opencl`.
    pub api: GpuApi,
    /// Device name as the driver reports it.
    pub device: String,
    /// CUDA compute capability (`sm_87`) or OpenCL C version (`CL3.0`).
    pub arch: String,
    pub compute_units: u32,
    pub max_threads_per_block: u32,
    /// Static shared (work-group local) memory per block without an opt-in.
    pub shared_bytes_per_block: u64,
    /// Shared memory per block with the explicit opt-in (dynamic shared memory, CUDA only).
    #[serde(default)]
    pub shared_bytes_per_block_optin: Option<u64>,
    /// 32-bit registers per block (CUDA) or `None` where the driver does not say.
    #[serde(default)]
    pub registers_per_block: Option<u64>,
    #[serde(default)]
    pub registers_per_thread: Option<u32>,
    /// Private (per work-item) memory the compiler may spill to, where the driver reports it.
    #[serde(default)]
    pub private_bytes_per_thread: Option<u64>,
    /// Threads that execute in lockstep (warp / subgroup size).
    pub simd_width: u32,
    /// Preferred vector width for f32 in elements.
    pub vector_width_f32: u32,
    /// Device memory a program may occupy.
    pub memory_bytes: u64,
    /// Whether device memory is the CPU's DRAM (Jetson, Mali).
    pub unified_memory: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GpuApi {
    Cuda,
    Opencl,
}

impl TargetProfile {
    /// A shipped profile by name, or a TOML file by path. Errors name what was tried.
    pub fn load(name_or_path: &str) -> Result<TargetProfile, String> {
        if let Some((_, text)) = BUILTIN.iter().find(|(n, _)| *n == name_or_path) {
            return Self::parse(name_or_path, text);
        }
        let path = std::path::Path::new(name_or_path);
        if path.extension().is_some_and(|e| e == "toml") || path.exists() {
            let text = std::fs::read_to_string(path)
                .map_err(|e| format!("cannot read target profile `{name_or_path}`: {e}"))?;
            return Self::parse(name_or_path, &text);
        }
        let names: Vec<&str> = BUILTIN.iter().map(|(n, _)| *n).collect();
        let hint = crate::diag::did_you_mean(name_or_path, names.iter().copied())
            .map(|h| format!(" ({h})"))
            .unwrap_or_default();
        Err(format!(
            "unknown target `{name_or_path}`{hint}; known targets: {}, or a path to a .toml profile",
            names.join(", ")
        ))
    }

    /// Parses a profile's TOML text; `origin` names it in errors.
    pub fn parse(origin: &str, text: &str) -> Result<TargetProfile, String> {
        toml::from_str(text).map_err(|e| format!("invalid target profile `{origin}`: {e}"))
    }

    /// All shipped profiles.
    pub fn builtin() -> Vec<TargetProfile> {
        BUILTIN.iter().map(|(n, t)| Self::parse(n, t).expect("shipped profiles parse")).collect()
    }

    /// Total CPU cores: the clusters' sum, or the running machine's count when none are listed.
    pub fn cpu_cores(&self) -> u32 {
        let n: u32 = self.cpu.clusters.iter().map(|c| c.count).sum();
        if n > 0 {
            n
        } else {
            std::thread::available_parallelism().map_or(1, |n| n.get() as u32)
        }
    }

    /// Lanes of f32 in one SIMD register.
    pub fn cpu_f32_lanes(&self) -> u32 {
        (self.cpu.vector_bits / 32).max(1)
    }
}
