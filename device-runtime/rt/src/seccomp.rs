//! The system-call filter of the kernel process: a classic-BPF seccomp program, written by hand
//! (no extra crate), for x86_64 and aarch64.
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
//! kernel process's handler records before exiting. A system call of another architecture
//! (the x32 ABI on x86_64, or a foreign `AUDIT_ARCH`) kills the process outright.
//!
//! What it must keep true: the program only ever returns ALLOW for the calls above (the tests
//! run it through an interpreter of the BPF subset used here); every jump stays inside the
//! program (offsets are computed, and a block longer than a jump can reach is an error); the
//! filter is installed with `no_new_privs` set, as unprivileged seccomp requires.

use std::io;
use std::os::fd::RawFd;

/// One BPF instruction (`struct sock_filter`).
pub type Insn = libc::sock_filter;

const BPF_LD_W_ABS: u16 = 0x20;
const BPF_JEQ_K: u16 = 0x15;
const BPF_JSET_K: u16 = 0x45;
const BPF_RET_K: u16 = 0x06;

/// `SECCOMP_RET_ALLOW`.
pub const RET_ALLOW: u32 = 0x7fff_0000;
/// `SECCOMP_RET_TRAP`: deliver `SIGSYS`.
pub const RET_TRAP: u32 = 0x0003_0000;
/// `SECCOMP_RET_KILL_PROCESS`.
pub const RET_KILL_PROCESS: u32 = 0x8000_0000;

/// `AUDIT_ARCH_X86_64`.
pub const AUDIT_ARCH_X86_64: u32 = 0xc000_003e;
/// `AUDIT_ARCH_AARCH64`.
pub const AUDIT_ARCH_AARCH64: u32 = 0xc000_00b7;

/// The audit architecture of this build.
#[cfg(target_arch = "x86_64")]
pub const AUDIT_ARCH: u32 = AUDIT_ARCH_X86_64;
#[cfg(target_arch = "aarch64")]
pub const AUDIT_ARCH: u32 = AUDIT_ARCH_AARCH64;

/// Offsets in `struct seccomp_data`.
const OFF_NR: u32 = 0;
const OFF_ARCH: u32 = 4;
const fn off_arg_lo(i: u32) -> u32 {
    16 + 8 * i
}

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

fn stmt(code: u16, k: u32) -> Insn {
    Insn { code, jt: 0, jf: 0, k }
}

fn jump(code: u16, k: u32, jt: u8, jf: u8) -> Insn {
    Insn { code, jt, jf, k }
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

/// Builds the filter program for `spec`.
pub fn build(spec: &FilterSpec) -> io::Result<Vec<Insn>> {
    let mut p = vec![
        stmt(BPF_LD_W_ABS, OFF_ARCH),
        jump(BPF_JEQ_K, AUDIT_ARCH, 1, 0),
        stmt(BPF_RET_K, RET_KILL_PROCESS),
        stmt(BPF_LD_W_ABS, OFF_NR),
    ];
    #[cfg(target_arch = "x86_64")]
    {
        // x32 system calls have bit 30 set: a second, unfiltered table. Refuse it outright.
        p.push(jump(BPF_JSET_K, 0x4000_0000, 0, 1));
        p.push(stmt(BPF_RET_K, RET_KILL_PROCESS));
    }
    for nr in plain_allowed() {
        p.push(jump(BPF_JEQ_K, nr as u32, 0, 1));
        p.push(stmt(BPF_RET_K, RET_ALLOW));
    }
    // Each guarded call: `jeq nr` over a block that ends in a return.
    let mut guarded = |nr: libc::c_long, block: Vec<Insn>| -> io::Result<()> {
        let skip = u8::try_from(block.len()).map_err(|_| {
            io::Error::new(io::ErrorKind::InvalidInput, "a filter block is too long to jump over")
        })?;
        p.push(jump(BPF_JEQ_K, nr as u32, 0, skip));
        p.extend(block);
        Ok(())
    };
    guarded(libc::SYS_write, one_of(off_arg_lo(0), &fd_values(&spec.write_fds)))?;
    guarded(libc::SYS_read, one_of(off_arg_lo(0), &fd_values(&spec.read_fds)))?;
    guarded(libc::SYS_ioctl, one_of(off_arg_lo(1), &[PERF_IOC_ENABLE, PERF_IOC_DISABLE, PERF_IOC_RESET]))?;
    guarded(libc::SYS_mmap, no_bits(off_arg_lo(2), libc::PROT_EXEC as u32))?;
    guarded(libc::SYS_mprotect, no_bits(off_arg_lo(2), libc::PROT_EXEC as u32))?;
    guarded(libc::SYS_tkill, one_of(off_arg_lo(1), &[libc::SIGABRT as u32]))?;
    guarded(libc::SYS_tgkill, one_of(off_arg_lo(2), &[libc::SIGABRT as u32]))?;
    p.push(stmt(BPF_RET_K, RET_TRAP));
    Ok(p)
}

fn fd_values(fds: &[RawFd]) -> Vec<u32> {
    fds.iter().map(|&f| f as u32).collect()
}

/// A block allowing the call when the low 32 bits at `offset` are one of `values`.
fn one_of(offset: u32, values: &[u32]) -> Vec<Insn> {
    let mut b = vec![stmt(BPF_LD_W_ABS, offset)];
    for &v in values {
        b.push(jump(BPF_JEQ_K, v, 0, 1));
        b.push(stmt(BPF_RET_K, RET_ALLOW));
    }
    b.push(stmt(BPF_RET_K, RET_TRAP));
    b
}

/// A block allowing the call when none of `bits` is set in the low 32 bits at `offset`.
fn no_bits(offset: u32, bits: u32) -> Vec<Insn> {
    vec![
        stmt(BPF_LD_W_ABS, offset),
        jump(BPF_JSET_K, bits, 0, 1),
        stmt(BPF_RET_K, RET_TRAP),
        stmt(BPF_RET_K, RET_ALLOW),
    ]
}

/// Installs `program` on every thread of the calling process (`no_new_privs`, then
/// `seccomp(SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC)`).
pub fn install(program: &[Insn]) -> io::Result<()> {
    // SAFETY: prctl with integer arguments only.
    if unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) } != 0 {
        return Err(io::Error::last_os_error());
    }
    let len = u16::try_from(program.len())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "the filter is too long"))?;
    let prog = libc::sock_fprog { len, filter: program.as_ptr().cast_mut() };
    // SAFETY: `prog` points at `len` valid instructions for the duration of the call; the
    // kernel copies them.
    let r = unsafe {
        libc::syscall(
            libc::SYS_seccomp,
            libc::SECCOMP_SET_MODE_FILTER,
            libc::SECCOMP_FILTER_FLAG_TSYNC,
            &prog as *const libc::sock_fprog,
        )
    };
    match r {
        0 => Ok(()),
        r if r < 0 => Err(io::Error::last_os_error()),
        // TSYNC answers with the id of a thread that could not be synchronised.
        tid => Err(io::Error::other(format!("thread {tid} could not take the filter"))),
    }
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

    /// Runs the subset of classic BPF the builder emits over a `seccomp_data`.
    fn run(p: &[Insn], arch: u32, nr: libc::c_long, args: [u64; 6]) -> u32 {
        let mut data = [0u8; 64];
        data[0..4].copy_from_slice(&(nr as i32).to_le_bytes());
        data[4..8].copy_from_slice(&arch.to_le_bytes());
        for (i, a) in args.iter().enumerate() {
            data[16 + 8 * i..24 + 8 * i].copy_from_slice(&a.to_le_bytes());
        }
        let (mut pc, mut acc) = (0usize, 0u32);
        loop {
            let i = p[pc];
            pc += 1;
            match i.code {
                BPF_LD_W_ABS => {
                    let o = i.k as usize;
                    acc = u32::from_le_bytes(data[o..o + 4].try_into().unwrap());
                }
                BPF_JEQ_K => pc += usize::from(if acc == i.k { i.jt } else { i.jf }),
                BPF_JSET_K => pc += usize::from(if acc & i.k != 0 { i.jt } else { i.jf }),
                BPF_RET_K => return i.k,
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
        assert_eq!(call(&p, libc::SYS_futex | 0x4000_0000, [0; 6]), RET_KILL_PROCESS);
    }

    #[test]
    fn syscall_names_cover_the_usual_escapes() {
        assert_eq!(syscall_name(libc::SYS_openat), Some("openat"));
        assert_eq!(syscall_name(libc::SYS_socket), Some("socket"));
        assert_eq!(syscall_name(99_999), None);
    }
}
