//! What the runtime knows about the machine it runs on: CPU model, cores and clusters, memory,
//! page size, operating system, and whether it is being emulated by qemu-user.
//!
//! Sources, all read-only: `/proc/cpuinfo` (`model name` on x86_64; on aarch64 each processor's
//! `CPU implementer` / `CPU part`, decoded for the common Arm cores), `/sys/devices/system/cpu`
//! (`online`, and each CPU's `cpufreq/cpuinfo_max_freq`), `/proc/meminfo` (`MemTotal`),
//! `sysconf(_SC_PAGESIZE)` and `uname`. Everything is parsed by pure functions over text, and
//! the files are read relative to a root directory, so the detection is tested on recorded
//! trees of other boards.
//!
//! **Clusters** are groups of CPUs with the same core type and the same maximum frequency,
//! fastest first: that is what "big" and "little" mean for scheduling. `topology/cluster_id` is
//! not used, because on x86_64 it numbers L2-sharing groups of identical cores and on some Arm
//! boards it splits one core type into several groups (the RK3588's two Cortex-A76 pairs), which
//! says nothing about speed. With no frequency information every CPU of one core type is one
//! cluster.
//!
//! **Emulation.** qemu-user passes most of `/proc` through but rewrites `/proc/self/maps` to
//! show only the guest's mappings. Its rewrite does not cover `/proc/thread-self/maps`, which
//! therefore still lists the emulator's own executable (`qemu-aarch64`, …); a mapped file whose
//! name starts with `qemu-` is taken as proof. As a second, independent sign, a `/proc/cpuinfo`
//! that describes another architecture than the one this binary was built for (x86 `vendor_id`
//! and `flags` in an aarch64 runtime) can only come from an emulator. Either sign is reported,
//! with its evidence; neither is a sign of anything else. (Auxiliary-vector or `uname` checks are
//! useless: qemu emulates both faithfully.)

use crate::loader::Arch;
use ekb_wire::protocol::{Availability, CounterSupport, CpuCluster, DeviceInfo, DeviceSummary};
use std::path::{Path, PathBuf};

/// The machine, as probed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Device {
    pub arch: Arch,
    pub cpu_model: String,
    /// Online CPUs.
    pub cores: u32,
    /// Fastest first.
    pub clusters: Vec<CpuCluster>,
    pub memory_bytes: u64,
    pub page_size: u64,
    pub os: String,
    /// `Some(evidence)` when running under qemu-user.
    pub emulation: Option<String>,
}

impl Device {
    /// Probes this machine.
    pub fn probe() -> Device {
        let mut d = Device::probe_at(Path::new("/"), Arch::host());
        d.page_size = crate::sys::page_size() as u64;
        d.os = os_name();
        d
    }

    /// Probes the `/proc` and `/sys` files under `root` for an `arch` runtime. Page size and
    /// OS come from system calls in [`Device::probe`]; here they are the defaults (4096, "").
    pub fn probe_at(root: &Path, arch: Arch) -> Device {
        let read = |p: &str| std::fs::read_to_string(root.join(p)).unwrap_or_default();
        let cpuinfo = parse_cpuinfo(&read("proc/cpuinfo"));
        let online = parse_cpu_list(read("sys/devices/system/cpu/online").trim());
        let cpus: Vec<u32> = if !online.is_empty() {
            online
        } else if !cpuinfo.cpus.is_empty() {
            cpuinfo.cpus.iter().map(|c| c.0).collect()
        } else {
            (0..std::thread::available_parallelism().map_or(1, |n| n.get() as u32)).collect()
        };
        let cpu_dir = root.join("sys/devices/system/cpu");
        let described: Vec<(u32, String, Option<u64>)> = cpus
            .iter()
            .map(|&c| {
                let core = cpuinfo.cpus.iter().find(|x| x.0 == c).map(|x| x.1.clone()).unwrap_or_default();
                (c, core, max_khz(&cpu_dir, c))
            })
            .collect();
        let clusters = group_clusters(&described);
        let mut models: Vec<&str> = Vec::new();
        for cl in &clusters {
            if !cl.core.is_empty() && !models.contains(&cl.core.as_str()) {
                models.push(&cl.core);
            }
        }
        let cpu_model = match (&cpuinfo.model, models.is_empty()) {
            (Some(m), _) => m.clone(),
            (None, false) => models.join(" + "),
            (None, true) => "unknown".to_string(),
        };
        let mut evidence = Vec::new();
        if let Some(file) = emulator_in_maps(&read("proc/thread-self/maps")) {
            evidence.push(format!("the emulator `{file}` is mapped into this process"));
        }
        if let Some(other) = cpuinfo.arch.filter(|a| *a != arch) {
            evidence.push(format!(
                "/proc/cpuinfo describes an {} CPU in an {} runtime",
                other.name(),
                arch.name()
            ));
        }
        Device {
            arch,
            cpu_model,
            cores: cpus.len() as u32,
            clusters,
            memory_bytes: parse_meminfo_total(&read("proc/meminfo")).unwrap_or(0),
            page_size: 4096,
            os: String::new(),
            emulation: (!evidence.is_empty()).then(|| format!("qemu-user ({})", evidence.join("; "))),
        }
    }

    /// The one-line summary sent with the protocol's `HelloAck`.
    pub fn summary(&self) -> DeviceSummary {
        DeviceSummary {
            arch: self.arch.name().to_string(),
            cpu_model: self.cpu_model.clone(),
            cores: self.cores,
            memory_bytes: self.memory_bytes,
        }
    }

    /// The protocol's full description. Counter support and isolation are probed by the layers
    /// that own them and passed in. Emulation, which the message has no field for, is appended
    /// to `os`.
    pub fn to_info(&self, counters: Vec<CounterSupport>, isolation: Availability) -> DeviceInfo {
        let os = match &self.emulation {
            Some(e) => format!("{} (emulated: {e})", self.os),
            None => self.os.clone(),
        };
        DeviceInfo {
            arch: self.arch.name().to_string(),
            cpu_model: self.cpu_model.clone(),
            cores: self.cores,
            clusters: self.clusters.clone(),
            memory_bytes: self.memory_bytes,
            page_size: self.page_size,
            os,
            counters,
            isolation,
            gpus: Vec::new(),
        }
    }

    /// The CPUs of the fastest cluster when the machine has several (big.LITTLE), else empty
    /// (nothing to choose).
    pub fn big_cores(&self) -> Vec<usize> {
        match self.clusters.as_slice() {
            [big, _, ..] => big.cpus.iter().map(|&c| c as usize).collect(),
            _ => Vec::new(),
        }
    }
}

fn max_khz(cpu_dir: &Path, cpu: u32) -> Option<u64> {
    let p: PathBuf = cpu_dir.join(format!("cpu{cpu}/cpufreq/cpuinfo_max_freq"));
    std::fs::read_to_string(p).ok()?.trim().parse().ok()
}

fn os_name() -> String {
    match nix::sys::utsname::uname() {
        Ok(u) => format!("{} {}", u.sysname().to_string_lossy(), u.release().to_string_lossy()),
        Err(_) => "unknown".to_string(),
    }
}

/// What `/proc/cpuinfo` says.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CpuInfo {
    /// The first `model name` (x86_64 and some Arm kernels).
    pub model: Option<String>,
    /// Each processor with its core name (decoded Arm part, or the model name).
    pub cpus: Vec<(u32, String)>,
    /// The architecture the file describes, when it is recognisable.
    pub arch: Option<Arch>,
}

/// Parses `/proc/cpuinfo` (blocks per processor, `key : value` lines).
pub fn parse_cpuinfo(text: &str) -> CpuInfo {
    let mut info = CpuInfo::default();
    for block in text.split("\n\n") {
        let mut cpu = None;
        let (mut implementer, mut part, mut model) = (None, None, None);
        for line in block.lines() {
            let Some((k, v)) = line.split_once(':') else { continue };
            let (k, v) = (k.trim(), v.trim());
            match k {
                "processor" => cpu = v.parse::<u32>().ok(),
                "model name" => model = Some(v.to_string()),
                "CPU implementer" => implementer = parse_hex(v),
                "CPU part" => part = parse_hex(v),
                "vendor_id" | "flags" => info.arch = info.arch.or(Some(Arch::X86_64)),
                "Features" if implementer.is_some() || block.contains("CPU implementer") => {
                    info.arch = info.arch.or(Some(Arch::Aarch64))
                }
                _ => {}
            }
        }
        if info.model.is_none() {
            info.model.clone_from(&model);
        }
        let core = match (implementer, part) {
            (Some(i), Some(p)) => {
                arm_core_name(i, p).map_or_else(|| format!("arm {i:#x}:{p:#05x}"), str::to_string)
            }
            _ => model.unwrap_or_default(),
        };
        if let Some(c) = cpu {
            info.cpus.push((c, core));
        }
    }
    info
}

fn parse_hex(v: &str) -> Option<u32> {
    u32::from_str_radix(v.trim_start_matches("0x"), 16).ok()
}

/// The name of an Arm core from its `CPU implementer` and `CPU part` (the MIDR fields).
pub fn arm_core_name(implementer: u32, part: u32) -> Option<&'static str> {
    let name = match (implementer, part) {
        (0x41, 0xd03) => "Cortex-A53",
        (0x41, 0xd04) => "Cortex-A35",
        (0x41, 0xd05) => "Cortex-A55",
        (0x41, 0xd07) => "Cortex-A57",
        (0x41, 0xd08) => "Cortex-A72",
        (0x41, 0xd09) => "Cortex-A73",
        (0x41, 0xd0a) => "Cortex-A75",
        (0x41, 0xd0b) => "Cortex-A76",
        (0x41, 0xd0c) => "Neoverse-N1",
        (0x41, 0xd0d) => "Cortex-A77",
        (0x41, 0xd40) => "Neoverse-V1",
        (0x41, 0xd41) => "Cortex-A78",
        (0x41, 0xd42) => "Cortex-A78AE",
        (0x41, 0xd44) => "Cortex-X1",
        (0x41, 0xd46) => "Cortex-A510",
        (0x41, 0xd47) => "Cortex-A710",
        (0x41, 0xd48) => "Cortex-X2",
        (0x41, 0xd49) => "Neoverse-N2",
        (0x41, 0xd4b) => "Cortex-A78C",
        (0x41, 0xd4d) => "Cortex-A715",
        (0x41, 0xd4e) => "Cortex-X3",
        (0x41, 0xd4f) => "Neoverse-V2",
        (0x41, 0xd80) => "Cortex-A520",
        (0x41, 0xd81) => "Cortex-A720",
        (0x41, 0xd82) => "Cortex-X4",
        (0x4e, 0x004) => "NVIDIA Carmel",
        (0x51, 0x800..=0x805) => "Qualcomm Kryo",
        _ => return None,
    };
    Some(name)
}

/// Parses a kernel CPU list (`0-3,5,7-8`); malformed parts are skipped.
pub fn parse_cpu_list(text: &str) -> Vec<u32> {
    let mut cpus = Vec::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                if let (Ok(a), Ok(b)) = (a.parse::<u32>(), b.parse::<u32>()) {
                    // Bounded: a CPU list names real CPUs; refuse absurd ranges.
                    if a <= b && b - a < 65_536 {
                        cpus.extend(a..=b);
                    }
                }
            }
            None => cpus.extend(part.parse::<u32>().ok()),
        }
    }
    cpus.sort_unstable();
    cpus.dedup();
    cpus
}

/// `MemTotal` of `/proc/meminfo`, in bytes.
pub fn parse_meminfo_total(text: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kb: u64 = line["MemTotal:".len()..].trim().trim_end_matches("kB").trim().parse().ok()?;
    kb.checked_mul(1024)
}

/// The first file in a maps listing whose name starts with `qemu-`.
pub fn emulator_in_maps(maps: &str) -> Option<String> {
    maps.lines()
        .filter_map(|l| l.split_whitespace().nth(5))
        .find(|path| {
            Path::new(path).file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("qemu-"))
        })
        .map(str::to_string)
}

/// Groups `(cpu, core name, max kHz)` into clusters of equal core and frequency, fastest first
/// (unknown frequency last), ties by lowest CPU number.
pub fn group_clusters(cpus: &[(u32, String, Option<u64>)]) -> Vec<CpuCluster> {
    let mut clusters: Vec<CpuCluster> = Vec::new();
    for (cpu, core, khz) in cpus {
        match clusters.iter_mut().find(|c| c.core == *core && c.max_khz == *khz) {
            Some(c) => c.cpus.push(*cpu),
            None => clusters.push(CpuCluster { core: core.clone(), cpus: vec![*cpu], max_khz: *khz }),
        }
    }
    clusters.sort_by_key(|c| (std::cmp::Reverse(c.max_khz.map_or(0, |k| k + 1)), c.cpus[0]));
    clusters
}

/// A CPU list in the kernel's compact form (`0-3,6`).
pub fn format_cpu_list(cpus: &[u32]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
            j += 1;
        }
        parts.push(if i == j { cpus[i].to_string() } else { format!("{}-{}", cpus[i], cpus[j]) });
        i = j + 1;
    }
    parts.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An RK3588-like tree (4 Cortex-A55 at 1.8 GHz, 4 Cortex-A76 at 2.4 GHz), abridged to the
    /// lines the probe reads.
    fn rk3588(root: &Path) {
        let mut cpuinfo = String::new();
        for c in 0..8 {
            let part = if c < 4 { "0xd05" } else { "0xd0b" };
            cpuinfo.push_str(&format!(
                "processor\t: {c}\nBogoMIPS\t: 48.00\nFeatures\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm lrcpc dcpop asimddp\nCPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x{}\nCPU part\t: {part}\nCPU revision\t: 0\n\n",
                if c < 4 { 2 } else { 4 }
            ));
        }
        std::fs::create_dir_all(root.join("proc")).unwrap();
        std::fs::write(root.join("proc/cpuinfo"), cpuinfo).unwrap();
        std::fs::write(root.join("proc/meminfo"), "MemTotal:        7924728 kB\nMemFree: 1 kB\n").unwrap();
        let cpu = root.join("sys/devices/system/cpu");
        for c in 0..8 {
            std::fs::create_dir_all(cpu.join(format!("cpu{c}/cpufreq"))).unwrap();
            let khz = if c < 4 { "1800000\n" } else { "2400000\n" };
            std::fs::write(cpu.join(format!("cpu{c}/cpufreq/cpuinfo_max_freq")), khz).unwrap();
        }
        std::fs::write(cpu.join("online"), "0-7\n").unwrap();
    }

    #[test]
    fn a_big_little_board_has_two_clusters_big_first() {
        let dir = tempfile::tempdir().unwrap();
        rk3588(dir.path());
        let d = Device::probe_at(dir.path(), Arch::Aarch64);
        assert_eq!(d.cores, 8);
        assert_eq!(d.cpu_model, "Cortex-A76 + Cortex-A55");
        assert_eq!(
            d.clusters,
            vec![
                CpuCluster { core: "Cortex-A76".into(), cpus: vec![4, 5, 6, 7], max_khz: Some(2_400_000) },
                CpuCluster { core: "Cortex-A55".into(), cpus: vec![0, 1, 2, 3], max_khz: Some(1_800_000) },
            ]
        );
        assert_eq!(d.big_cores(), vec![4, 5, 6, 7]);
        assert_eq!(d.memory_bytes, 7_924_728 * 1024);
        assert_eq!(d.emulation, None);
        // The same tree seen by an x86_64 runtime can only be emulation.
        let d = Device::probe_at(dir.path(), Arch::X86_64);
        assert_eq!(
            d.emulation.as_deref(),
            Some("qemu-user (/proc/cpuinfo describes an aarch64 CPU in an x86_64 runtime)")
        );
    }

    #[test]
    fn an_x86_machine_without_frequencies_is_one_cluster() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        std::fs::create_dir_all(p.join("proc")).unwrap();
        let block = |c: u32| {
            format!("processor\t: {c}\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC\nflags\t\t: fpu sse2 avx2\n\n")
        };
        std::fs::write(p.join("proc/cpuinfo"), format!("{}{}", block(0), block(1))).unwrap();
        let d = Device::probe_at(p, Arch::X86_64);
        assert_eq!(d.cpu_model, "AMD EPYC");
        assert_eq!(d.cores, 2, "from cpuinfo when sysfs is missing");
        assert_eq!(d.clusters, vec![CpuCluster { core: "AMD EPYC".into(), cpus: vec![0, 1], max_khz: None }]);
        assert!(d.big_cores().is_empty());
        assert_eq!(d.memory_bytes, 0, "no meminfo: unknown");
        // An aarch64 runtime reading x86 cpuinfo, with the emulator mapped: both signs reported.
        std::fs::create_dir_all(p.join("proc/thread-self")).unwrap();
        std::fs::write(
            p.join("proc/thread-self/maps"),
            "00400000-0047e000 r--p 00000000 fe:00 1 /opt/ekb/ekb-rt\n55a30469a000-55a304733000 r--p 00000000 fe:00 2 /usr/bin/qemu-aarch64\n",
        )
        .unwrap();
        let d = Device::probe_at(p, Arch::Aarch64);
        let e = d.emulation.unwrap();
        assert!(
            e.contains("`/usr/bin/qemu-aarch64` is mapped") && e.contains("describes an x86_64 CPU"),
            "{e}"
        );
    }

    #[test]
    fn cpu_lists_parse_and_print_in_the_kernel_form() {
        assert_eq!(parse_cpu_list("0-3,5,7-8\n".trim()), vec![0, 1, 2, 3, 5, 7, 8]);
        assert_eq!(parse_cpu_list("2"), vec![2]);
        assert_eq!(parse_cpu_list("x,1-0,3"), vec![3]);
        assert_eq!(parse_cpu_list("0-4294967295"), Vec::<u32>::new(), "absurd ranges are refused");
        assert_eq!(format_cpu_list(&[0, 1, 2, 3, 5, 7, 8]), "0-3,5,7-8");
        assert_eq!(format_cpu_list(&[]), "");
    }

    #[test]
    fn arm_parts_decode_and_unknown_parts_keep_their_numbers() {
        assert_eq!(arm_core_name(0x41, 0xd42), Some("Cortex-A78AE"));
        let info = parse_cpuinfo("processor : 0\nCPU implementer : 0x41\nCPU part : 0xfff\nFeatures : fp\n");
        assert_eq!(info.cpus, vec![(0, "arm 0x41:0xfff".to_string())]);
        assert_eq!(info.arch, Some(Arch::Aarch64));
    }

    #[test]
    fn this_machine_probes_without_emulation_natively() {
        let d = Device::probe();
        assert!(d.cores >= 1 && d.memory_bytes > 0 && d.page_size >= 4096);
        assert!(d.os.starts_with("Linux "), "{}", d.os);
        assert_eq!(d.emulation, None, "the test binary runs natively");
        assert_eq!(d.summary().arch, Arch::host().name());
    }
}
