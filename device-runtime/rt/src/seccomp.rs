//! The system-call filter of the kernel process, built with `seccompiler` (Firecracker's
//! seccomp compiler) for x86_64 and aarch64.
//!
//! Once installed (with `SECCOMP_FILTER_FLAG_TSYNC`, so it covers the kernel threads that were
//! started before it), the process may only:
//! - synchronise and schedule its threads: `futex`, `sched_yield`, `restart_syscall`;
//! - read the clock: `clock_gettime`, `gettimeofday` (normally answered by the vDSO anyway);
//! - manage its own memory, never executable: `brk`, `munmap`, `mremap`, `madvise`, and
//!   `mmap`/`mprotect` without `PROT_EXEC` (the runtime's allocator needs them after the filter
//!   is in place; inputs stay protected because the parent verifies their bytes after every
//!   run, `docs/runtime.md`);
//! - talk to its parent: `write` to the report descriptors only, `read` from the command and
//!   counter descriptors only;
//! - drive its performance counters: `ioctl` with the perf enable, disable and reset requests;
//! - end: `exit`, `exit_group`, `rt_sigreturn`, and `abort()`'s `rt_sigprocmask`, `getpid`,
//!   `gettid`, and `tkill`/`tgkill` with `SIGABRT` only.
//!
//! Everything else — `openat`, `socket`, `clone`, `execve`, `kill`, `ptrace`, … — is answered
//! with `SECCOMP_RET_TRAP`: the kernel sends `SIGSYS` with the system call's number, which the
//! kernel process's handler records before exiting. A call made with another architecture's
//! convention (a foreign `AUDIT_ARCH`) kills the process outright; an x32 call on x86_64 (bit
//! 30 of the number set) matches no rule and traps like any other.
//!
//! What it must keep true: the program only ever allows the calls above (the tests run the
//! compiled program through an interpreter of the classic-BPF subset it uses, so they check
//! what the kernel will execute, not the rule table); the filter is installed with
//! `no_new_privs` set, as unprivileged seccomp requires (`seccompiler` sets it).

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter, SeccompRule,
    TargetArch,
};
use std::collections::BTreeMap;
use std::io;
use std::os::fd::RawFd;

/// One BPF instruction (`struct sock_filter`).
pub type Insn = seccompiler::sock_filter;

/// `SECCOMP_RET_ALLOW`.
pub const RET_ALLOW: u32 = libc::SECCOMP_RET_ALLOW;
/// `SECCOMP_RET_TRAP`: deliver `SIGSYS`.
pub const RET_TRAP: u32 = libc::SECCOMP_RET_TRAP;
/// `SECCOMP_RET_KILL_PROCESS`.
pub const RET_KILL_PROCESS: u32 = libc::SECCOMP_RET_KILL_PROCESS;

/// `AUDIT_ARCH_X86_64`.
pub const AUDIT_ARCH_X86_64: u32 = 0xc000_003e;
/// `AUDIT_ARCH_AARCH64`.
pub const AUDIT_ARCH_AARCH64: u32 = 0xc000_00b7;

/// The audit architecture of this build, and `seccompiler`'s name for it.
#[cfg(target_arch = "x86_64")]
pub const AUDIT_ARCH: u32 = AUDIT_ARCH_X86_64;
#[cfg(target_arch = "x86_64")]
const ARCH: TargetArch = TargetArch::x86_64;
#[cfg(target_arch = "aarch64")]
pub const AUDIT_ARCH: u32 = AUDIT_ARCH_AARCH64;
#[cfg(target_arch = "aarch64")]
const ARCH: TargetArch = TargetArch::aarch64;

/// `_IO('$', 0)`, `_IO('$', 1)`, `_IO('$', 3)`: perf enable, disable, reset.
pub const PERF_IOC_ENABLE: u32 = 0x2400;
pub const PERF_IOC_DISABLE: u32 = 0x2401;
pub const PERF_IOC_RESET: u32 = 0x2403;

/// The descriptors the kernel process may use after the filter is in place.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FilterSpec {
    /// `write` is allowed to these only.
    pub write_fds: Vec<RawFd>,
    /// `read` is allowed from these only.
    pub read_fds: Vec<RawFd>,
}

/// Syscalls allowed whatever their arguments.
fn plain_allowed() -> Vec<libc::c_long> {
    vec![
        libc::SYS_futex,
        libc::SYS_sched_yield,
        libc::SYS_restart_syscall,
        libc::SYS_clock_gettime,
        libc::SYS_gettimeofday,
        libc::SYS_brk,
        libc::SYS_munmap,
        libc::SYS_mremap,
        libc::SYS_madvise,
        libc::SYS_exit,
        libc::SYS_exit_group,
        libc::SYS_rt_sigreturn,
        libc::SYS_rt_sigprocmask,
        libc::SYS_getpid,
        libc::SYS_gettid,
    ]
}

fn invalid(e: impl std::fmt::Display) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, format!("the system-call filter: {e}"))
}

/// Rules allowing the call when the low 32 bits of argument `arg` are one of `values` (no
/// rule for an empty list: the call is then never allowed).
fn one_of(arg: u8, values: &[u32]) -> io::Result<Vec<SeccompRule>> {
    values
        .iter()
        .map(|&v| {
            let c = SeccompCondition::new(arg, SeccompCmpArgLen::Dword, SeccompCmpOp::Eq, u64::from(v));
            SeccompRule::new(vec![c.map_err(invalid)?]).map_err(invalid)
        })
        .collect()
}

/// A rule allowing the call when none of `bits` is set in the low 32 bits of argument `arg`.
fn no_bits(arg: u8, bits: u32) -> io::Result<Vec<SeccompRule>> {
    let c = SeccompCondition::new(arg, SeccompCmpArgLen::Dword, SeccompCmpOp::MaskedEq(u64::from(bits)), 0);
    Ok(vec![SeccompRule::new(vec![c.map_err(invalid)?]).map_err(invalid)?])
}

fn fd_values(fds: &[RawFd]) -> Vec<u32> {
    fds.iter().map(|&f| f as u32).collect()
}

/// Builds the filter program for `spec`.
pub fn build(spec: &FilterSpec) -> io::Result<BpfProgram> {
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> =
        plain_allowed().into_iter().map(|nr| (nr, Vec::new())).collect();
    let exec = libc::PROT_EXEC as u32;
    let guarded = [
        (libc::SYS_write, one_of(0, &fd_values(&spec.write_fds))?),
        (libc::SYS_read, one_of(0, &fd_values(&spec.read_fds))?),
        (libc::SYS_ioctl, one_of(1, &[PERF_IOC_ENABLE, PERF_IOC_DISABLE, PERF_IOC_RESET])?),
        (libc::SYS_mmap, no_bits(2, exec)?),
        (libc::SYS_mprotect, no_bits(2, exec)?),
        (libc::SYS_tkill, one_of(1, &[libc::SIGABRT as u32])?),
        (libc::SYS_tgkill, one_of(2, &[libc::SIGABRT as u32])?),
    ];
    // A call with no rule would be allowed unconditionally: one whose list is empty (no
    // descriptor to read from) is left out, so it traps.
    rules.extend(guarded.into_iter().filter(|(_, r)| !r.is_empty()));
    let filter =
        SeccompFilter::new(rules, SeccompAction::Trap, SeccompAction::Allow, ARCH).map_err(invalid)?;
    BpfProgram::try_from(filter).map_err(invalid)
}

/// Installs `program` on every thread of the calling process (`no_new_privs`, then
/// `seccomp(SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC)`).
pub fn install(program: &[Insn]) -> io::Result<()> {
    seccompiler::apply_filter_all_threads(program).map_err(|e| match e {
        seccompiler::Error::Seccomp(e) | seccompiler::Error::Prctl(e) => e,
        other => io::Error::other(other.to_string()),
    })
}

/// The name of system call `nr` of this architecture, for the ones a kernel is likely to try
/// (and the ones the filter allows).
pub fn syscall_name(nr: libc::c_long) -> Option<&'static str> {
    let table: &[(libc::c_long, &str)] = &[
        (libc::SYS_read, "read"),
        (libc::SYS_write, "write"),
        (libc::SYS_openat, "openat"),
        (libc::SYS_close, "close"),
        (libc::SYS_socket, "socket"),
        (libc::SYS_connect, "connect"),
        (libc::SYS_clone, "clone"),
        (libc::SYS_clone3, "clone3"),
        (libc::SYS_execve, "execve"),
        (libc::SYS_kill, "kill"),
        (libc::SYS_ptrace, "ptrace"),
        (libc::SYS_mmap, "mmap"),
        (libc::SYS_mprotect, "mprotect"),
        (libc::SYS_ioctl, "ioctl"),
        (libc::SYS_getpid, "getpid"),
        (libc::SYS_tkill, "tkill"),
        (libc::SYS_tgkill, "tgkill"),
        (libc::SYS_rt_sigaction, "rt_sigaction"),
        (libc::SYS_prctl, "prctl"),
        (libc::SYS_nanosleep, "nanosleep"),
        (libc::SYS_clock_nanosleep, "clock_nanosleep"),
        (libc::SYS_getrandom, "getrandom"),
        (libc::SYS_sched_setaffinity, "sched_setaffinity"),
        (libc::SYS_perf_event_open, "perf_event_open"),
        #[cfg(target_arch = "x86_64")]
        (libc::SYS_open, "open"),
        #[cfg(target_arch = "x86_64")]
        (libc::SYS_fork, "fork"),
        #[cfg(target_arch = "x86_64")]
        (libc::SYS_vfork, "vfork"),
    ];
    table.iter().find(|(n, _)| *n == nr).map(|(_, name)| *name)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs the subset of classic BPF the compiled filter uses over a `seccomp_data`.
    fn run(p: &[Insn], arch: u32, nr: libc::c_long, args: [u64; 6]) -> u32 {
        const LD_W_ABS: u16 = 0x20;
        const JA: u16 = 0x05;
        const JEQ_K: u16 = 0x15;
        const JGT_K: u16 = 0x25;
        const JGE_K: u16 = 0x35;
        const JSET_K: u16 = 0x45;
        const AND_K: u16 = 0x54;
        const RET_K: u16 = 0x06;
        let mut data = [0u8; 64];
        data[0..4].copy_from_slice(&(nr as i32).to_le_bytes());
        data[4..8].copy_from_slice(&arch.to_le_bytes());
        for (i, a) in args.iter().enumerate() {
            data[16 + 8 * i..24 + 8 * i].copy_from_slice(&a.to_le_bytes());
        }
        let (mut pc, mut acc) = (0usize, 0u32);
        loop {
            let i = &p[pc];
            pc += 1;
            let jump = |taken: bool| usize::from(if taken { i.jt } else { i.jf });
            match i.code {
                LD_W_ABS => {
                    let o = i.k as usize;
                    acc = u32::from_le_bytes(data[o..o + 4].try_into().unwrap());
                }
                JA => pc += i.k as usize,
                JEQ_K => pc += jump(acc == i.k),
                JGT_K => pc += jump(acc > i.k),
                JGE_K => pc += jump(acc >= i.k),
                JSET_K => pc += jump(acc & i.k != 0),
                AND_K => acc &= i.k,
                RET_K => return i.k,
                c => panic!("unexpected opcode {c:#x}"),
            }
            assert!(pc < p.len(), "a jump left the program");
        }
    }

    fn call(p: &[Insn], nr: libc::c_long, args: [u64; 6]) -> u32 {
        run(p, AUDIT_ARCH, nr, args)
    }

    #[test]
    fn the_filter_allows_exactly_what_running_kernels_needs() {
        let p = build(&FilterSpec { write_fds: vec![7], read_fds: vec![5, 9] }).unwrap();
        for nr in plain_allowed() {
            assert_eq!(call(&p, nr, [0; 6]), RET_ALLOW, "{nr}");
        }
        // Writes only to the report pipe, reads only from the command and counter fds.
        assert_eq!(call(&p, libc::SYS_write, [7, 0, 1, 0, 0, 0]), RET_ALLOW);
        assert_eq!(call(&p, libc::SYS_write, [1, 0, 1, 0, 0, 0]), RET_TRAP);
        assert_eq!(call(&p, libc::SYS_read, [5, 0, 1, 0, 0, 0]), RET_ALLOW);
        assert_eq!(call(&p, libc::SYS_read, [9, 0, 1, 0, 0, 0]), RET_ALLOW);
        assert_eq!(call(&p, libc::SYS_read, [0, 0, 1, 0, 0, 0]), RET_TRAP);
        // Perf ioctls only.
        assert_eq!(call(&p, libc::SYS_ioctl, [9, PERF_IOC_RESET as u64, 0, 0, 0, 0]), RET_ALLOW);
        assert_eq!(call(&p, libc::SYS_ioctl, [9, 0x5401, 0, 0, 0, 0]), RET_TRAP);
        // Memory, never executable.
        let rw = (libc::PROT_READ | libc::PROT_WRITE) as u64;
        let rx = (libc::PROT_READ | libc::PROT_EXEC) as u64;
        assert_eq!(call(&p, libc::SYS_mmap, [0, 4096, rw, 0x22, u64::MAX, 0]), RET_ALLOW);
        assert_eq!(call(&p, libc::SYS_mmap, [0, 4096, rx, 0x22, u64::MAX, 0]), RET_TRAP);
        assert_eq!(call(&p, libc::SYS_mprotect, [0x1000, 4096, rw, 0, 0, 0]), RET_ALLOW);
        assert_eq!(call(&p, libc::SYS_mprotect, [0x1000, 4096, rx, 0, 0, 0]), RET_TRAP);
        // abort() may signal itself with SIGABRT, nothing else.
        assert_eq!(call(&p, libc::SYS_tkill, [1, libc::SIGABRT as u64, 0, 0, 0, 0]), RET_ALLOW);
        assert_eq!(call(&p, libc::SYS_tkill, [1, libc::SIGKILL as u64, 0, 0, 0, 0]), RET_TRAP);
        assert_eq!(call(&p, libc::SYS_tgkill, [1, 1, libc::SIGABRT as u64, 0, 0, 0]), RET_ALLOW);
        // Files, sockets, processes, signals to others: trapped.
        for nr in [
            libc::SYS_openat,
            libc::SYS_socket,
            libc::SYS_connect,
            libc::SYS_clone,
            libc::SYS_clone3,
            libc::SYS_execve,
            libc::SYS_kill,
            libc::SYS_ptrace,
            libc::SYS_rt_sigaction,
            libc::SYS_prctl,
            libc::SYS_perf_event_open,
        ] {
            assert_eq!(call(&p, nr, [0; 6]), RET_TRAP, "{}", syscall_name(nr).unwrap());
        }
        // Another architecture's numbers are never interpreted.
        let other = if AUDIT_ARCH == AUDIT_ARCH_X86_64 { AUDIT_ARCH_AARCH64 } else { AUDIT_ARCH_X86_64 };
        assert_eq!(run(&p, other, libc::SYS_futex, [0; 6]), RET_KILL_PROCESS);
        #[cfg(target_arch = "x86_64")]
        assert_eq!(call(&p, libc::SYS_futex | 0x4000_0000, [0; 6]), RET_TRAP);
        // Without a descriptor to read from, `read` is never allowed.
        let none = build(&FilterSpec { write_fds: vec![7], read_fds: vec![] }).unwrap();
        assert_eq!(call(&none, libc::SYS_read, [5, 0, 1, 0, 0, 0]), RET_TRAP);
        assert_eq!(call(&none, libc::SYS_write, [7, 0, 1, 0, 0, 0]), RET_ALLOW);
    }

    #[test]
    fn syscall_names_cover_the_usual_escapes() {
        assert_eq!(syscall_name(libc::SYS_openat), Some("openat"));
        assert_eq!(syscall_name(libc::SYS_socket), Some("socket"));
        assert_eq!(syscall_name(99_999), None);
    }
}
