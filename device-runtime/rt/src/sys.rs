//! The few operating-system services the runtime needs, behind checked wrappers: the page size,
//! anonymous page-aligned memory mappings (private or shared with child processes) with page
//! protections, read-only file mappings, pipes, and the monotonic clock. The system calls go
//! through `nix`; what `nix` does not wrap (the alternate signal stack) is called here directly.
//!
//! What it must keep true: a [`Mapping`] owns exactly the pages it mapped and unmaps them once,
//! on drop; every protection change is checked to lie inside the mapping and on page
//! boundaries before the system call is made, so a caller's arithmetic mistake is an error and
//! never a change to somebody else's pages.

use nix::errno::Errno;
use nix::fcntl::OFlag;
use nix::sys::mman::{self, MapFlags, ProtFlags};
use nix::time::ClockId;
use nix::unistd::SysconfVar;
use std::fs::File;
use std::io;
use std::num::NonZeroUsize;
use std::os::fd::{BorrowedFd, OwnedFd, RawFd};
use std::ptr::NonNull;
use std::sync::OnceLock;

/// The system's page size in bytes (`sysconf(_SC_PAGESIZE)`; 4 KiB, 16 KiB or 64 KiB on the
/// boards), read once.
pub fn page_size() -> usize {
    static PAGE: OnceLock<usize> = OnceLock::new();
    *PAGE.get_or_init(|| {
        // POSIX requires a page size; 4096 is the smallest any supported system uses.
        nix::unistd::sysconf(SysconfVar::PAGE_SIZE)
            .ok()
            .flatten()
            .and_then(|n| usize::try_from(n).ok())
            .filter(|n| n.is_power_of_two())
            .unwrap_or(4096)
    })
}

/// `n` rounded up to a whole number of pages, or `None` on overflow.
pub fn page_round_up(n: usize) -> Option<usize> {
    let p = page_size();
    n.checked_add(p - 1).map(|x| x & !(p - 1))
}

/// Page protections the runtime uses. There is deliberately no write-and-execute variant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protection {
    None,
    Read,
    ReadWrite,
    ReadExec,
}

impl Protection {
    fn flags(self) -> ProtFlags {
        match self {
            Protection::None => ProtFlags::PROT_NONE,
            Protection::Read => ProtFlags::PROT_READ,
            Protection::ReadWrite => ProtFlags::PROT_READ | ProtFlags::PROT_WRITE,
            Protection::ReadExec => ProtFlags::PROT_READ | ProtFlags::PROT_EXEC,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Protection::None => "none",
            Protection::Read => "read",
            Protection::ReadWrite => "read-write",
            Protection::ReadExec => "read-execute",
        }
    }
}

/// Pages obtained with `mmap`, unmapped on drop.
#[derive(Debug)]
pub struct Mapping {
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: a mapping is plain memory owned by this value; every access to its contents goes
// through raw pointers whose users uphold their own synchronisation.
unsafe impl Send for Mapping {}
// SAFETY: as above; `&Mapping` only hands out the address and length.
unsafe impl Sync for Mapping {}

impl Mapping {
    /// `len` bytes (rounded up to whole pages, at least one page) of zeroed, private,
    /// read-write memory.
    pub fn anonymous(len: usize) -> io::Result<Mapping> {
        Mapping::new_anonymous(len, MapFlags::MAP_PRIVATE)
    }

    /// `len` bytes (whole pages, at least one) of zeroed read-write memory shared with the
    /// child processes forked after this call: what either side writes, the other sees.
    pub fn shared(len: usize) -> io::Result<Mapping> {
        Mapping::new_anonymous(len, MapFlags::MAP_SHARED)
    }

    fn new_anonymous(len: usize, flags: MapFlags) -> io::Result<Mapping> {
        let len = page_round_up(len.max(1))
            .and_then(NonZeroUsize::new)
            .ok_or_else(|| io::Error::new(io::ErrorKind::OutOfMemory, "mapping size overflows"))?;
        let rw = ProtFlags::PROT_READ | ProtFlags::PROT_WRITE;
        // SAFETY: a new anonymous mapping at an address of the system's choosing touches no
        // existing memory.
        let p = unsafe { mman::mmap_anonymous(None, len, rw, flags) }?;
        Ok(Mapping { ptr: p.cast(), len: len.get() })
    }

    /// The whole of `file`, mapped read-only and private. `None` for an empty file (which
    /// cannot be mapped).
    pub fn file_readonly(file: &File) -> io::Result<Option<Mapping>> {
        let len = usize::try_from(file.metadata()?.len())
            .map_err(|_| io::Error::new(io::ErrorKind::OutOfMemory, "the file is larger than memory"))?;
        let Some(len) = NonZeroUsize::new(len) else { return Ok(None) };
        // SAFETY: a new read-only private mapping of an open file; nothing aliases it.
        let p = unsafe { mman::mmap(None, len, ProtFlags::PROT_READ, MapFlags::MAP_PRIVATE, file, 0) }?;
        Ok(Some(Mapping { ptr: p.cast(), len: len.get() }))
    }

    pub fn as_ptr(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }

    /// The mapped length in bytes (whole pages for anonymous mappings).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Mappings are never empty; provided for API completeness with `len`.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The address of the first byte.
    pub fn addr(&self) -> usize {
        self.ptr.as_ptr() as usize
    }

    /// Sets the protection of bytes `[offset, offset + len)`, which must lie inside the mapping
    /// on page boundaries (an empty range is a no-op).
    pub fn protect(&self, offset: usize, len: usize, prot: Protection) -> io::Result<()> {
        let p = page_size();
        let end = offset.checked_add(len);
        if offset % p != 0 || len % p != 0 || end.is_none_or(|e| e > self.len) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "cannot protect bytes {offset}..+{len} of a {}-byte mapping: not whole pages inside it",
                    self.len
                ),
            ));
        }
        if len == 0 {
            return Ok(());
        }
        // SAFETY: the range is whole pages of this mapping (checked above), so the address is
        // inside it and not null.
        let start = unsafe { NonNull::new_unchecked(self.ptr.as_ptr().add(offset)) };
        // SAFETY: as above; the pages are this mapping's own.
        unsafe { mman::mprotect(start.cast(), len, prot.flags()) }?;
        Ok(())
    }

    /// The mapped bytes.
    ///
    /// # Safety
    /// The whole mapping must be readable and nothing may write it while the slice lives.
    pub unsafe fn bytes(&self) -> &[u8] {
        // SAFETY: the caller vouches for readability and the absence of writers.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: exactly the pages mapped in the constructor. A failure cannot be handled in a
        // destructor and only leaks address space.
        let _ = unsafe { mman::munmap(self.ptr.cast(), self.len) };
    }
}

/// A pipe: (read end, write end), both close-on-exec.
pub fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    Ok(nix::unistd::pipe2(OFlag::O_CLOEXEC)?)
}

/// `fd` borrowed for one call.
fn borrow(fd: RawFd) -> BorrowedFd<'static> {
    // SAFETY: the callers pass a descriptor they keep open across the call; the borrow does not
    // outlive it (it is used for one system call and dropped).
    unsafe { BorrowedFd::borrow_raw(fd) }
}

/// Writes all of `bytes` to `fd` (retrying on interruption and short writes).
pub fn write_all(fd: RawFd, mut bytes: &[u8]) -> io::Result<()> {
    while !bytes.is_empty() {
        match nix::unistd::write(borrow(fd), bytes) {
            Ok(n) => bytes = &bytes[n..],
            Err(Errno::EINTR) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

/// Fills `buf` from `fd`; `Ok(false)` when the stream ends first.
pub fn read_exact(fd: RawFd, buf: &mut [u8]) -> io::Result<bool> {
    let mut at = 0;
    while at < buf.len() {
        match nix::unistd::read(borrow(fd), &mut buf[at..]) {
            Ok(0) => return Ok(false),
            Ok(n) => at += n,
            Err(Errno::EINTR) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(true)
}

/// `CLOCK_MONOTONIC` in nanoseconds.
#[inline]
pub fn monotonic_ns() -> u64 {
    // CLOCK_MONOTONIC always exists on Linux; a zero time would only make a sample empty.
    let t = nix::time::clock_gettime(ClockId::CLOCK_MONOTONIC).unwrap_or(nix::sys::time::TimeSpec::new(0, 0));
    t.tv_sec() as u64 * 1_000_000_000 + t.tv_nsec() as u64
}

/// A thread's figures from its `schedstat` file in `/proc`: nanoseconds it ran on a CPU and
/// nanoseconds it spent runnable but waiting for one (a wait is added when the thread gets its
/// CPU); `None` where the file cannot be read (a kernel without `SCHED_INFO`, no `/proc`).
pub fn schedstat(path: &str) -> Option<(u64, u64)> {
    let text = std::fs::read_to_string(path).ok()?;
    let mut figures = text.split_ascii_whitespace().map(str::parse::<u64>);
    Some((figures.next()?.ok()?, figures.next()?.ok()?))
}

/// Nanoseconds each thread of process `pid` has run on a CPU, by thread id, from its tasks in
/// `/proc`; `None` where they cannot be read.
pub fn thread_cpu_ns(pid: i32) -> Option<Vec<(u32, u64)>> {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).ok()?;
    tasks
        .map(|t| {
            let t = t.ok()?;
            let tid = t.file_name().to_str()?.parse().ok()?;
            Some((tid, schedstat(&format!("{}/schedstat", t.path().display()))?.0))
        })
        .collect()
}

/// Whether the thread of `stat` (a `/proc/<pid>/task/<tid>/stat`) is running or runnable
/// (state `R`); `None` where the file cannot be read.
pub fn thread_runnable(stat: &str) -> Option<bool> {
    let text = std::fs::read_to_string(stat).ok()?;
    // The state follows the command name, which is in parentheses and may contain any byte.
    Some(text[text.rfind(')')? + 1..].trim_start().starts_with('R'))
}

/// An alternate signal stack for the calling thread, so that a signal handler can run after a
/// stack overflow. Keep the guard as long as the thread runs code that may fault; dropping it
/// (on the thread that installed it) switches the alternate stack off before unmapping it.
#[derive(Debug)]
pub struct AltStack {
    _map: Mapping,
}

impl AltStack {
    /// Bytes of alternate stack: room for the runtime's handlers, whatever `SIGSTKSZ` is.
    pub const BYTES: usize = 64 << 10;

    pub fn install() -> io::Result<AltStack> {
        let map = Mapping::anonymous(AltStack::BYTES)?;
        let st = libc::stack_t { ss_sp: map.as_ptr().cast(), ss_flags: 0, ss_size: map.len() };
        // SAFETY: the stack is a live read-write mapping owned by the returned guard.
        if unsafe { libc::sigaltstack(&st, std::ptr::null_mut()) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(AltStack { _map: map })
    }
}

impl Drop for AltStack {
    fn drop(&mut self) {
        let st = libc::stack_t { ss_sp: std::ptr::null_mut(), ss_flags: libc::SS_DISABLE, ss_size: 0 };
        // SAFETY: disabling the calling thread's alternate stack has no memory preconditions.
        unsafe { libc::sigaltstack(&st, std::ptr::null_mut()) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

    #[test]
    fn the_scheduler_figures_of_this_thread_and_process_grow_as_they_run() {
        // A thread reading its own state is running.
        assert_eq!(thread_runnable("/proc/thread-self/stat"), Some(true));
        let own = || schedstat("/proc/thread-self/schedstat").expect("schedstat of this thread").0;
        // This thread's CPU time grows as it runs: 10 ms of it, however busy the machine is
        // (10 s of wall time at most).
        let (start, deadline) = (own(), std::time::Instant::now() + std::time::Duration::from_secs(10));
        while own() - start < 10_000_000 {
            assert!(std::time::Instant::now() < deadline, "10 s of wall time, {} ns on a CPU", own() - start);
            for _ in 0..10_000 {
                std::hint::spin_loop();
            }
        }
        // The process's listing has this thread, with a figure read between two of its own.
        let (pid, tid) = (std::process::id() as i32, nix::unistd::gettid().as_raw() as u32);
        let before = own();
        let listed = thread_cpu_ns(pid).expect("schedstat of this process's threads");
        let after = own();
        let mine = listed.iter().find(|t| t.0 == tid).expect("this thread is listed").1;
        assert!(before <= mine && mine <= after, "{before} {mine} {after}");
        assert_eq!(schedstat("/proc/thread-self/no-such-file"), None);
        assert_eq!(thread_cpu_ns(-1), None);
    }

    #[test]
    fn pages_are_a_power_of_two_and_rounding_is_exact() {
        let p = page_size();
        assert!(p.is_power_of_two() && p >= 4096);
        assert_eq!(page_round_up(0), Some(0));
        assert_eq!(page_round_up(1), Some(p));
        assert_eq!(page_round_up(p), Some(p));
        assert_eq!(page_round_up(p + 1), Some(2 * p));
        assert_eq!(page_round_up(usize::MAX), None);
    }

    #[test]
    fn anonymous_mappings_are_zeroed_whole_pages() {
        let m = Mapping::anonymous(10).unwrap();
        assert_eq!(m.len(), page_size());
        assert_eq!(m.addr() % page_size(), 0);
        // SAFETY: fresh read-write mapping.
        assert!(unsafe { m.bytes() }.iter().all(|&b| b == 0));
    }

    #[test]
    fn protection_ranges_are_checked_before_the_system_call() {
        let p = page_size();
        let m = Mapping::anonymous(2 * p).unwrap();
        assert!(m.protect(0, p, Protection::Read).is_ok());
        assert!(m.protect(p, p, Protection::ReadExec).is_ok());
        for (off, len) in [(1, p), (0, p + 1), (p, 2 * p), (usize::MAX - p + 1, p)] {
            let e = m.protect(off, len, Protection::Read).unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::InvalidInput, "{off} {len}");
        }
    }

    #[test]
    fn files_map_read_only_and_empty_files_are_not_mapped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, b"payload bytes").unwrap();
        let m = Mapping::file_readonly(&File::open(&path).unwrap()).unwrap().unwrap();
        assert_eq!(m.len(), 13);
        // SAFETY: a read-only mapping nothing writes.
        assert_eq!(unsafe { m.bytes() }, b"payload bytes");
        std::fs::write(&path, b"").unwrap();
        assert!(Mapping::file_readonly(&File::open(&path).unwrap()).unwrap().is_none());
    }

    #[test]
    fn pipes_carry_whole_messages_and_report_their_end() {
        let (r, w) = pipe().unwrap();
        write_all(w.as_raw_fd(), b"twelve bytes").unwrap();
        drop(w);
        let mut buf = [0u8; 12];
        assert!(read_exact(r.as_raw_fd(), &mut buf).unwrap());
        assert_eq!(&buf, b"twelve bytes");
        assert!(!read_exact(r.as_raw_fd(), &mut buf).unwrap(), "the write end is closed");
    }
}
