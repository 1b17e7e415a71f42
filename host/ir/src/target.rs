//! Target profiles: what the compiler and the verifier know about a board.
//!
//! Profiles are TOML files in `toolchains/` (built into the binary, so `ekb` works from any
//! directory); a user may also pass a path to their own. Every number in a shipped profile
//! carries a comment saying where it comes from. The live device limits reported by the runtime
//! take precedence over a profile when both are known. `docs/targets.md` is the schema.
//!
//! What it must keep true: a profile that loads is consistent (parse rejects unknown fields,
//! and [`TargetProfile::validate`] rejects numbers no device has: zero sizes, non-power-of-two
//! widths, a simd width that does not divide the block size, overlapping cluster CPUs, ...), so
//! the verifier and the schedulers can divide by and trust every field.

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
    /// `-mcpu` value; `native` means the machine compiling, for profiles that compile and run on
    /// the same machine (`host`, `pocl`, `h200`).
    pub cpu: String,
    /// Extra `-mattr`-style features, e.g. `+neon`, `+dotprod`.
    #[serde(default)]
    pub features: Vec<String>,
    /// Core clusters, fastest first; empty means "detect on the machine at run time".
    #[serde(default)]
    pub clusters: Vec<CoreCluster>,
    /// SIMD register width in bits (128 for NEON, 256 for AVX2, 512 for AVX-512). 0 in a
    /// profile's file, with `cpu = "native"`: the widest of the machine loading the profile (the
    /// one that compiles and runs), detected when the profile is loaded (see
    /// [`native_vector_bits`]); a loaded profile always holds the number.
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
    /// Largest single buffer the driver allocates (OpenCL `CL_DEVICE_MAX_MEM_ALLOC_SIZE`), where
    /// it is below `memory_bytes`; `None`: no limit beyond `memory_bytes`.
    #[serde(default)]
    pub max_buffer_bytes: Option<u64>,
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

    /// Parses a profile's TOML text and validates it; `origin` names it in errors.
    pub fn parse(origin: &str, text: &str) -> Result<TargetProfile, String> {
        let mut p: TargetProfile =
            toml::from_str(text).map_err(|e| format!("invalid target profile `{origin}`: {e}"))?;
        if p.cpu.vector_bits == 0 {
            if p.cpu.cpu != "native" {
                return Err(format!(
                    "invalid target profile `{origin}`:\n  cpu.vector_bits = 0: expected a width in bits; 0 (this machine's) needs cpu = \"native\""
                ));
            }
            p.cpu.vector_bits = native_vector_bits(&p.cpu.triple);
        }
        p.validate()
            .map_err(|problems| format!("invalid target profile `{origin}`:\n  {}", problems.join("\n  ")))?;
        Ok(p)
    }

    /// Every inconsistency of the profile, one line each naming the field (`cpu.vector_bits`).
    pub fn validate(&self) -> Result<(), Vec<String>> {
        let mut bad = Vec::new();
        let mut check = |ok: bool, field: &str, value: &dyn std::fmt::Display, want: &str| {
            if !ok {
                bad.push(format!("{field} = {value}: expected {want}"));
            }
        };
        let name_ok = !self.name.is_empty()
            && self
                .name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_');
        check(name_ok, "name", &format!("{:?}", self.name), "lowercase letters, digits, `-` and `_`");

        let c = &self.cpu;
        let parts = c.triple.split('-').filter(|p| !p.is_empty()).count();
        check(
            parts >= 3,
            "cpu.triple",
            &format!("{:?}", c.triple),
            "an LLVM triple such as `aarch64-unknown-linux-gnu`",
        );
        check(!c.cpu.is_empty(), "cpu.cpu", &"\"\"", "a CPU name such as `cortex-a76`, or `native`");
        for f in &c.features {
            let ok = (f.starts_with('+') || f.starts_with('-')) && f.len() > 1;
            check(ok, "cpu.features", &format!("{f:?}"), "`+feature` or `-feature`");
        }
        let vb = c.vector_bits;
        check(
            vb.is_power_of_two() && (32..=2048).contains(&vb),
            "cpu.vector_bits",
            &vb,
            "a power of two from 32 to 2048",
        );
        check(c.stack_bytes > 0, "cpu.stack_bytes", &c.stack_bytes, "more than 0");
        check(c.memory_bytes > 0, "cpu.memory_bytes", &c.memory_bytes, "more than 0");
        check(c.stack_bytes <= c.memory_bytes, "cpu.stack_bytes", &c.stack_bytes, "at most cpu.memory_bytes");
        let line = c.cache_line_bytes;
        check(
            line.is_power_of_two() && (16..=512).contains(&line),
            "cpu.cache_line_bytes",
            &line,
            "a power of two from 16 to 512",
        );

        let mut seen_cpus = std::collections::BTreeSet::new();
        for (i, cl) in c.clusters.iter().enumerate() {
            let at = |f: &str| format!("cpu.clusters[{i}].{f}");
            check(!cl.name.is_empty(), &at("name"), &"\"\"", "a name such as `big`");
            check(cl.count > 0, &at("count"), &cl.count, "at least 1");
            let n = cl.cpus.len();
            check(
                n == 0 || n == cl.count as usize,
                &at("cpus"),
                &format!("{:?}", cl.cpus),
                &format!("{} CPU numbers (count), or none", cl.count),
            );
            for &cpu in &cl.cpus {
                check(seen_cpus.insert(cpu), &at("cpus"), &cpu, "each CPU in one cluster only");
            }
            check(cl.max_mhz != Some(0), &at("max_mhz"), &0, "more than 0");
            if let (Some(prev), Some(mhz)) =
                (i.checked_sub(1).and_then(|j| c.clusters[j].max_mhz), cl.max_mhz)
            {
                check(
                    mhz <= prev,
                    &at("max_mhz"),
                    &mhz,
                    &format!("clusters fastest first (the one before runs at {prev})"),
                );
            }
        }

        if let Some(g) = &self.gpu {
            let (arch_ok, arch_want) = match g.api {
                GpuApi::Cuda => (
                    g.arch
                        .strip_prefix("sm_")
                        .is_some_and(|v| !v.is_empty() && v.chars().all(|c| c.is_ascii_digit())),
                    "a compute capability such as `sm_87`",
                ),
                GpuApi::Opencl => (
                    g.arch.strip_prefix("CL").and_then(|v| v.split_once('.')).is_some_and(|(a, b)| {
                        [a, b].iter().all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
                    }),
                    "an OpenCL C version such as `CL3.0`",
                ),
            };
            check(arch_ok, "gpu.arch", &format!("{:?}", g.arch), arch_want);
            check(g.compute_units > 0, "gpu.compute_units", &g.compute_units, "at least 1");
            check(
                g.max_threads_per_block > 0,
                "gpu.max_threads_per_block",
                &g.max_threads_per_block,
                "at least 1",
            );
            let w = g.simd_width;
            check(
                w > 0 && g.max_threads_per_block % w.max(1) == 0,
                "gpu.simd_width",
                &w,
                &format!("a divisor of gpu.max_threads_per_block ({})", g.max_threads_per_block),
            );
            let v = g.vector_width_f32;
            check(matches!(v, 1 | 2 | 4 | 8 | 16), "gpu.vector_width_f32", &v, "1, 2, 4, 8 or 16");
            check(
                g.shared_bytes_per_block > 0,
                "gpu.shared_bytes_per_block",
                &g.shared_bytes_per_block,
                "more than 0",
            );
            if let Some(optin) = g.shared_bytes_per_block_optin {
                check(
                    g.api == GpuApi::Cuda,
                    "gpu.shared_bytes_per_block_optin",
                    &optin,
                    "no value: the opt-in is CUDA only",
                );
                check(
                    optin >= g.shared_bytes_per_block,
                    "gpu.shared_bytes_per_block_optin",
                    &optin,
                    "at least gpu.shared_bytes_per_block",
                );
            }
            if let (Some(per_block), Some(per_thread)) = (g.registers_per_block, g.registers_per_thread) {
                check(
                    u64::from(per_thread) <= per_block && per_thread > 0,
                    "gpu.registers_per_thread",
                    &per_thread,
                    &format!("from 1 to gpu.registers_per_block ({per_block})"),
                );
            }
            check(g.memory_bytes > 0, "gpu.memory_bytes", &g.memory_bytes, "more than 0");
            if let Some(m) = g.max_buffer_bytes {
                check(m > 0 && m <= g.memory_bytes, "gpu.max_buffer_bytes", &m, "from 1 to gpu.memory_bytes");
            }
            if g.unified_memory {
                check(
                    g.memory_bytes <= c.memory_bytes,
                    "gpu.memory_bytes",
                    &g.memory_bytes,
                    "at most cpu.memory_bytes: with unified memory both budgets are one DRAM pool",
                );
            }
        }
        if bad.is_empty() {
            Ok(())
        } else {
            Err(bad)
        }
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

/// The widest SIMD registers of this machine for a profile of triple `triple` with `cpu =
/// "native"`: 512 bits with AVX-512F, 256 with AVX2, else 128 (SSE2, and NEON on aarch64). A
/// triple of another architecture than this machine's gets 128.
pub fn native_vector_bits(triple: &str) -> u32 {
    let arch = triple.split('-').next().unwrap_or_default();
    #[cfg(target_arch = "x86_64")]
    if arch == "x86_64" {
        return if std::is_x86_feature_detected!("avx512f") {
            512
        } else if std::is_x86_feature_detected!("avx2") {
            256
        } else {
            128
        };
    }
    let _ = arch;
    128
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_native_profile_may_take_this_machines_vector_width() {
        let native = MINIMAL
            .replace("vector_bits = 128", "vector_bits = 0")
            .replace("cpu = \"cortex-a55\"", "cpu = \"native\"");
        let p = TargetProfile::parse("n", &native).unwrap();
        assert_eq!(p.cpu.vector_bits, native_vector_bits(&p.cpu.triple));
        assert!(p.cpu.vector_bits >= 128 && p.cpu.vector_bits.is_power_of_two());
        let named = MINIMAL.replace("vector_bits = 128", "vector_bits = 0");
        let e = TargetProfile::parse("n", &named).unwrap_err();
        assert!(e.contains("cpu.vector_bits = 0") && e.contains("needs cpu = \"native\""), "{e}");
        assert_eq!(native_vector_bits("riscv64gc-unknown-linux-gnu"), 128);
    }

    /// A small valid profile to mutate in tests.
    const MINIMAL: &str = r#"
name = "my-board"
description = "test board"

[cpu]
triple = "aarch64-unknown-linux-gnu"
cpu = "cortex-a55"
vector_bits = 128
stack_bytes = 65536
memory_bytes = 1073741824
cache_line_bytes = 64
"#;

    fn with_gpu(gpu: &str) -> String {
        format!("{MINIMAL}\n[gpu]\n{gpu}")
    }

    const CUDA_GPU: &str = r#"api = "cuda"
device = "X"
arch = "sm_87"
compute_units = 4
max_threads_per_block = 1024
shared_bytes_per_block = 49152
simd_width = 32
vector_width_f32 = 4
memory_bytes = 1073741824
unified_memory = true
"#;

    #[test]
    fn every_builtin_profile_parses_validates_and_is_named_after_its_file() {
        assert_eq!(BUILTIN.len(), 6);
        for (name, text) in BUILTIN {
            let p = TargetProfile::parse(name, text).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(&p.name, name);
            assert!(!p.description.is_empty() && !p.description.contains("placeholder"), "{name}");
            assert_eq!(TargetProfile::load(name).unwrap(), p);
        }
    }

    #[test]
    fn gpu_profiles_have_gpu_sections_and_cpu_profiles_do_not() {
        let by_name = |n: &str| TargetProfile::load(n).unwrap();
        for (name, api, arch) in [
            ("jetson-orin", GpuApi::Cuda, "sm_87"),
            ("h200", GpuApi::Cuda, "sm_90"),
            ("rk3588", GpuApi::Opencl, "CL3.0"),
            ("pocl", GpuApi::Opencl, "CL3.0"),
        ] {
            let g = by_name(name).gpu.unwrap_or_else(|| panic!("{name} has no gpu section"));
            assert_eq!((g.api, g.arch.as_str()), (api, arch), "{name}");
        }
        assert!(by_name("host").gpu.is_none() && by_name("aarch64-qemu").gpu.is_none());
    }

    #[test]
    fn board_limits_are_the_documented_ones() {
        let orin = TargetProfile::load("jetson-orin").unwrap();
        let g = orin.gpu.as_ref().unwrap();
        assert_eq!((g.max_threads_per_block, g.shared_bytes_per_block), (1024, 48 * 1024));
        assert_eq!(g.shared_bytes_per_block_optin, Some(163 * 1024));
        assert_eq!((g.registers_per_block, g.simd_width, g.compute_units), (Some(65536), 32, 16));
        assert!(g.unified_memory);
        assert_eq!(orin.cpu_cores(), 12);
        let rk = TargetProfile::load("rk3588").unwrap();
        let g = rk.gpu.as_ref().unwrap();
        assert_eq!((g.max_threads_per_block, g.shared_bytes_per_block, g.simd_width), (1024, 32 * 1024, 16));
        assert_eq!(
            rk.cpu.clusters.iter().map(|c| (c.count, c.max_mhz)).collect::<Vec<_>>(),
            [(4, Some(2400)), (4, Some(1800))]
        );
        assert_eq!((rk.cpu_cores(), rk.cpu_f32_lanes()), (8, 4));
        let h200 = TargetProfile::load("h200").unwrap();
        assert_eq!(h200.gpu.as_ref().unwrap().shared_bytes_per_block_optin, Some(227 * 1024));
        // `host` takes this machine's width.
        let host = TargetProfile::load("host").unwrap();
        assert_eq!(host.cpu_f32_lanes(), native_vector_bits(&host.cpu.triple) / 32);
    }

    #[test]
    fn an_unknown_target_name_gets_a_did_you_mean() {
        let e = TargetProfile::load("jetson-orn").unwrap_err();
        assert!(e.contains("unknown target `jetson-orn`"), "{e}");
        assert!(e.contains("did you mean `jetson-orin`?"), "{e}");
        assert!(e.contains("rk3588") && e.contains(".toml"), "the error lists what exists: {e}");
        let e = TargetProfile::load("completely-different").unwrap_err();
        assert!(!e.contains("did you mean"), "{e}");
    }

    #[test]
    fn an_unknown_field_is_rejected_by_name() {
        let text = MINIMAL.replace("vector_bits = 128", "vector_bits = 128\nvector_bit = 128");
        let e = TargetProfile::parse("mine.toml", &text).unwrap_err();
        assert!(e.contains("mine.toml") && e.contains("unknown field `vector_bit`"), "{e}");
        let e = TargetProfile::parse("mine.toml", &with_gpu(&format!("{CUDA_GPU}warps = 2\n"))).unwrap_err();
        assert!(e.contains("unknown field `warps`"), "{e}");
        let e = TargetProfile::parse("mine.toml", &MINIMAL.replace("cache_line_bytes = 64", "")).unwrap_err();
        assert!(e.contains("missing field `cache_line_bytes`"), "{e}");
    }

    #[test]
    fn a_user_profile_loads_from_a_path() {
        let dir = std::env::temp_dir().join(format!("ekb-target-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("my-board.toml");
        std::fs::write(&path, with_gpu(CUDA_GPU)).unwrap();
        let p = TargetProfile::load(path.to_str().unwrap()).unwrap();
        assert_eq!((p.name.as_str(), p.gpu.unwrap().arch.as_str()), ("my-board", "sm_87"));
        let missing = dir.join("absent.toml");
        let e = TargetProfile::load(missing.to_str().unwrap()).unwrap_err();
        assert!(e.starts_with("cannot read target profile"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn inconsistent_numbers_are_rejected_with_the_field_named() {
        let cases = [
            (MINIMAL.replace("vector_bits = 128", "vector_bits = 100"), "cpu.vector_bits = 100"),
            (MINIMAL.replace("cache_line_bytes = 64", "cache_line_bytes = 0"), "cpu.cache_line_bytes = 0"),
            (MINIMAL.replace("stack_bytes = 65536", "stack_bytes = 0"), "cpu.stack_bytes = 0"),
            (MINIMAL.replace("my-board", "My Board"), "name = \"My Board\""),
            (MINIMAL.replace("aarch64-unknown-linux-gnu", "aarch64"), "cpu.triple"),
            (with_gpu(&CUDA_GPU.replace("simd_width = 32", "simd_width = 48")), "gpu.simd_width = 48"),
            (with_gpu(&CUDA_GPU.replace("sm_87", "CL3.0")), "gpu.arch = \"CL3.0\""),
            (
                with_gpu(&CUDA_GPU.replace("vector_width_f32 = 4", "vector_width_f32 = 3")),
                "gpu.vector_width_f32",
            ),
            (
                with_gpu(&CUDA_GPU.replace("memory_bytes = 1073741824", "memory_bytes = 2147483648")),
                "gpu.memory_bytes = 2147483648: expected at most cpu.memory_bytes",
            ),
            (
                with_gpu(&format!("{CUDA_GPU}shared_bytes_per_block_optin = 1024\n")),
                "gpu.shared_bytes_per_block_optin = 1024",
            ),
            (
                with_gpu(&CUDA_GPU.replace("cuda", "opencl").replace("sm_87", "CL3.0"))
                    .replace("[gpu]", "[gpu]\nshared_bytes_per_block_optin = 65536"),
                "the opt-in is CUDA only",
            ),
        ];
        for (text, want) in cases {
            let e = TargetProfile::parse("t", &text).unwrap_err();
            assert!(e.contains(want), "expected `{want}` in: {e}");
        }
    }

    #[test]
    fn clusters_must_be_consistent() {
        let cluster = |name: &str, count: u32, cpus: &str, mhz: u32| {
            format!("\n[[cpu.clusters]]\nname = \"{name}\"\ncore = \"c\"\ncount = {count}\ncpus = {cpus}\nmax_mhz = {mhz}\n")
        };
        let ok =
            format!("{MINIMAL}{}{}", cluster("big", 2, "[2, 3]", 2000), cluster("little", 2, "[0, 1]", 1000));
        assert_eq!(TargetProfile::parse("t", &ok).unwrap().cpu_cores(), 4);
        let overlap =
            format!("{MINIMAL}{}{}", cluster("big", 2, "[1, 2]", 2000), cluster("little", 2, "[0, 1]", 1000));
        assert!(TargetProfile::parse("t", &overlap).unwrap_err().contains("cpu.clusters[1].cpus = 1"));
        let order =
            format!("{MINIMAL}{}{}", cluster("little", 2, "[0, 1]", 1000), cluster("big", 2, "[2, 3]", 2000));
        assert!(TargetProfile::parse("t", &order).unwrap_err().contains("fastest first"));
        let count = format!("{MINIMAL}{}", cluster("big", 3, "[0, 1]", 2000));
        assert!(TargetProfile::parse("t", &count).unwrap_err().contains("cpu.clusters[0].cpus"));
    }

    #[test]
    fn the_example_in_the_targets_guide_is_a_valid_profile() {
        let doc = include_str!("../../../docs/targets.md");
        let start = doc.find("```toml\n").expect("docs/targets.md has a ```toml example") + 8;
        let len = doc[start..].find("```").unwrap();
        let p = TargetProfile::parse("docs/targets.md", &doc[start..start + len])
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(p.gpu.is_some(), "the example shows a GPU section too");
    }
}
