//! `ekb-pool`: the persistent thread pool that runs a kernel's outlined `parallel` bodies, shared
//! by host runs (`ekb-llvm`) and the board runtime (`ekb-rt`). It depends on `std` and `libc`
//! only, so that the runtime stays a small static binary.
//!
//! A [`Pool`] has `threads - 1` persistent workers, started once and asleep on a condition
//! variable between launches, each with a stack of [`PoolConfig::stack_bytes`] (rounded up to
//! whole pages) and optionally pinned to a CPU of [`PoolConfig::cpus`]. A launch
//! ([`Pool::parallel_for`]) splits `[0, n)` into at most `threads` contiguous, near-equal chunks;
//! thread `i` (the launching one is 0) runs chunk `i`, and then claims any chunk another thread
//! has not started: a worker the scheduler has not run yet (another process holds its core)
//! only means the others run its chunk, not that the launch waits a time slice for it. After a job a worker watches for
//! the next one for [`SPIN`] before sleeping, and so does a launcher for its last chunks (waking
//! a sleeping thread can cost more than a small kernel's whole run); the watch is short, so an
//! idle pool gives its cores back at once.
//!
//! What it guarantees (the launch contract of `docs/abi.md`):
//! - every index of `[0, n)` is passed to exactly one call of the body, and `n <= 0` calls
//!   nothing;
//! - the chunks of one launch may run concurrently, and [`Pool::parallel_for`] returns only after
//!   every chunk has returned; the mutex hand-off orders the launcher's writes before every chunk
//!   and every chunk's writes before the return;
//! - launches from different threads are serialised; a launch from inside a chunk (of any pool)
//!   runs serially on that thread instead of deadlocking;
//! - nothing unwinds across the C frames of kernels: chunk bodies are `extern "C"`, the ABI entry
//!   [`ekb_parallel_for`] is `extern "C"`, and a panic in the pool's own code on a worker or a
//!   launching thread aborts the process.
//!
//! Kernels that import `ekb_parallel_for` without a pool pointer use the process-wide active
//! pool: [`Pool::activate`] installs a pool for as long as the returned [`Active`] guard lives,
//! and a second activation waits until the first guard is dropped. With no active pool a launch
//! runs serially on the calling thread. Create pools in the process that runs kernels (after any
//! `fork`: threads do not survive it).

use nix::sched::{sched_getaffinity, sched_setaffinity, CpuSet};
use nix::unistd::{Pid, SysconfVar};
use std::cell::Cell;
use std::ffi::c_void;
use std::fmt;
use std::io;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicPtr, AtomicU64, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The outlined body of a `parallel` loop: runs iterations `[begin, end)`.
pub type ChunkFn = unsafe extern "C" fn(ctx: *mut c_void, begin: i64, end: i64);

/// How to build a pool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PoolConfig {
    /// Threads in all, the launching thread included; 0: one per CPU in `cpus`, or per CPU
    /// this process may run on when `cpus` is empty.
    pub threads: usize,
    /// CPUs to pin to: worker `i` runs on `cpus[i % len]` and [`Pool::pin_caller`] pins the
    /// launching thread to `cpus[0]`. Empty: no pinning.
    pub cpus: Vec<usize>,
    /// Stack of every worker thread, rounded up to whole pages; 0: the standard library's
    /// default.
    pub stack_bytes: usize,
}

impl PoolConfig {
    /// `threads` threads, unpinned, with worker stacks of `stack_bytes`.
    pub fn new(threads: usize, stack_bytes: usize) -> PoolConfig {
        PoolConfig { threads, cpus: Vec::new(), stack_bytes }
    }
}

/// Why a pool could not be built.
#[derive(Debug)]
pub enum PoolError {
    Spawn(io::Error),
    Affinity {
        cpu: usize,
        error: io::Error,
    },
    /// The stack size overflows the address space.
    Stack {
        bytes: usize,
    },
}

impl fmt::Display for PoolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PoolError::Spawn(e) => write!(f, "cannot start a kernel thread: {e}"),
            PoolError::Affinity { cpu, error } => {
                write!(f, "cannot pin a kernel thread to CPU {cpu}: {error}")
            }
            PoolError::Stack { bytes } => write!(f, "a kernel thread stack of {bytes} bytes is too large"),
        }
    }
}

impl std::error::Error for PoolError {}

/// Pins the calling thread to `cpus` (`sched_setaffinity`).
pub fn pin_current_thread(cpus: &[usize]) -> io::Result<()> {
    let mut set = CpuSet::new();
    for &c in cpus {
        set.set(c).map_err(|_| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("CPU {c} is beyond the {} a set holds", CpuSet::count()),
            )
        })?;
    }
    // Pid 0 is the calling thread.
    Ok(sched_setaffinity(Pid::from_raw(0), &set)?)
}

/// The CPUs this process may run on (`sched_getaffinity`), in increasing order; empty if the
/// system will not say.
pub fn allowed_cpus() -> Vec<usize> {
    match sched_getaffinity(Pid::from_raw(0)) {
        Ok(set) => (0..CpuSet::count()).filter(|&c| set.is_set(c).unwrap_or(false)).collect(),
        Err(_) => Vec::new(),
    }
}

/// `n` rounded up to a whole number of pages, or `None` on overflow.
fn page_round_up(n: usize) -> Option<usize> {
    let page = nix::unistd::sysconf(SysconfVar::PAGE_SIZE).ok().flatten();
    // POSIX requires a page size; 4096 is the smallest any supported system uses.
    let p = page.and_then(|p| usize::try_from(p).ok()).filter(|p| p.is_power_of_two()).unwrap_or(4096);
    n.checked_add(p - 1).map(|x| x & !(p - 1))
}

/// Aborts the process if dropped during a panic: the pool's own code must not unwind into
/// kernel frames, nor leave a launch waiting forever for a dead worker.
struct AbortOnUnwind;

impl Drop for AbortOnUnwind {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("ekb-pool: panic in a kernel thread; aborting");
            std::process::abort();
        }
    }
}

thread_local! {
    static IN_CHUNK: Cell<bool> = const { Cell::new(false) };
}

#[derive(Clone, Copy)]
struct Job {
    f: ChunkFn,
    ctx: *mut c_void,
    n: i64,
    chunks: usize,
}

// SAFETY: the context pointer is only dereferenced by the chunk function, whose launch contract
// allows any thread to run it while the launching call waits.
unsafe impl Send for Job {}

impl Job {
    /// Chunk `i` of `chunks` contiguous, near-equal chunks of `[0, n)`.
    fn range(&self, i: usize) -> (i64, i64) {
        let at = |k: usize| (i128::from(self.n) * k as i128 / self.chunks as i128) as i64;
        (at(i), at(i + 1))
    }

    fn run_chunk(&self, i: usize) {
        let (begin, end) = self.range(i);
        IN_CHUNK.with(|c| c.set(true));
        // SAFETY: the launcher vouched for `f` and `ctx` (see `Pool::parallel_for`).
        unsafe { (self.f)(self.ctx, begin, end) };
        IN_CHUNK.with(|c| c.set(false));
    }
}

struct State {
    generation: u64,
    /// The latest job; it stays after its launch returns, but its chunks are all claimed by
    /// then, so nothing calls it again.
    job: Option<Job>,
    shutdown: bool,
}

struct Shared {
    state: Mutex<State>,
    work: Condvar,
    done: Condvar,
    /// `State::generation`, mirrored under the lock, for idle workers to watch while spinning.
    generation: AtomicU64,
    /// One word per thread (chunk `i` of a job is claimed in word `i`): `2g` while chunk `i` of
    /// the job of generation `g` is unclaimed, `2g + 1` once a thread has claimed it. A thread
    /// claims by moving the word from `2g` to `2g + 1` for the generation it read the job of, so
    /// a late worker can never claim a chunk of a later job with an earlier job's function.
    claims: Vec<AtomicU64>,
    /// Chunks of the current job that have returned.
    finished: AtomicUsize,
}

/// How long an idle worker watches for the next job, and a launcher for the last chunks to
/// return, before sleeping on a condition variable. A kernel's launches follow each other
/// within microseconds, and a wake-up through the scheduler costs tens of microseconds on a
/// virtual machine, so a short watch pays; a long one takes a core from any other thread that
/// wants it (another process, the runtime's own) for nothing.
pub const SPIN: Duration = Duration::from_micros(100);

/// Spins until `ready()` or [`SPIN`] has passed; whether `ready()` became true.
fn spin_until(ready: impl Fn() -> bool) -> bool {
    let start = Instant::now();
    loop {
        for _ in 0..64 {
            if ready() {
                return true;
            }
            std::hint::spin_loop();
        }
        if start.elapsed() >= SPIN {
            return ready();
        }
    }
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A poisoned lock only means a thread panicked holding it; every update of the state is
        // a single assignment, so it is still consistent.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Thread `id` claims and runs chunks of `job` (of `generation`): its own chunk `id` first,
    /// then any the others have not reached (in order after its own), until none is left; each
    /// finished chunk is counted, and the last one wakes the launcher. Chunk `i` thus runs on
    /// thread `i` whenever that thread is on a core in time, so a launch after another touches
    /// the same part of the data on the same core (its caches), as a static partition would.
    fn run_chunks(&self, job: &Job, generation: u64, id: usize) {
        let (free, taken) = (2 * generation, 2 * generation + 1);
        for k in 0..job.chunks {
            let i = (id + k) % job.chunks;
            if self.claims[i].compare_exchange(free, taken, Ordering::AcqRel, Ordering::Relaxed).is_err() {
                continue;
            }
            job.run_chunk(i);
            if self.finished.fetch_add(1, Ordering::AcqRel) + 1 == job.chunks {
                // Under the lock, so that a launcher about to sleep cannot miss it.
                let _s = self.lock();
                self.done.notify_all();
            }
        }
    }
}

/// A persistent pool of kernel threads.
pub struct Pool {
    threads: usize,
    cpus: Vec<usize>,
    shared: Arc<Shared>,
    workers: Vec<JoinHandle<()>>,
    /// Serialises launches from different threads.
    launch: Mutex<()>,
}

impl fmt::Debug for Pool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Pool").field("threads", &self.threads).field("cpus", &self.cpus).finish()
    }
}

impl Pool {
    /// Starts the workers (`threads - 1` of them), pinned as configured. Fails if a thread
    /// cannot be started or pinned.
    pub fn new(config: &PoolConfig) -> Result<Pool, PoolError> {
        Pool::with_worker_init(config, || ())
    }

    /// As [`Pool::new`], and every worker calls `init` first and keeps what it returns (a guard,
    /// such as an alternate signal stack) until it exits.
    pub fn with_worker_init<G, F>(config: &PoolConfig, init: F) -> Result<Pool, PoolError>
    where
        G: 'static,
        F: Fn() -> G + Send + Sync + 'static,
    {
        let threads = match (config.threads, config.cpus.len()) {
            (0, 0) => std::thread::available_parallelism().map_or(1, |n| n.get()),
            (0, n) => n,
            (t, _) => t,
        };
        let stack = match config.stack_bytes {
            0 => None,
            b => Some(page_round_up(b).ok_or(PoolError::Stack { bytes: b })?),
        };
        let shared = Arc::new(Shared {
            state: Mutex::new(State { generation: 0, job: None, shutdown: false }),
            work: Condvar::new(),
            done: Condvar::new(),
            generation: AtomicU64::new(0),
            claims: (0..threads).map(|_| AtomicU64::new(0)).collect(),
            finished: AtomicUsize::new(0),
        });
        let init = Arc::new(init);
        let mut pool =
            Pool { threads, cpus: config.cpus.clone(), shared, workers: Vec::new(), launch: Mutex::new(()) };
        for id in 1..threads {
            let shared = Arc::clone(&pool.shared);
            let init = Arc::clone(&init);
            let cpu = (!pool.cpus.is_empty()).then(|| pool.cpus[id % pool.cpus.len()]);
            let (ready_tx, ready_rx) = mpsc::channel();
            let mut builder = std::thread::Builder::new().name(format!("ekb-kernel-{id}"));
            if let Some(bytes) = stack {
                builder = builder.stack_size(bytes);
            }
            let handle = builder
                .spawn(move || {
                    let _abort = AbortOnUnwind;
                    let _guard = init();
                    let pinned = cpu.map_or(Ok(()), |c| pin_current_thread(&[c]));
                    let ok = pinned.is_ok();
                    // The receiver waits for this message; if it is gone the pool is being
                    // dropped and the worker just exits below.
                    let _ = ready_tx.send(pinned);
                    if ok {
                        worker(&shared, id);
                    }
                })
                .map_err(PoolError::Spawn)?;
            pool.workers.push(handle);
            match ready_rx.recv() {
                Ok(Ok(())) => {}
                Ok(Err(error)) => return Err(PoolError::Affinity { cpu: cpu.unwrap_or(0), error }),
                Err(_) => return Err(PoolError::Spawn(io::Error::other("a kernel thread exited at start"))),
            }
        }
        Ok(pool)
    }

    /// Threads used by a launch, the launching thread included.
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// The CPUs the pool pins to (empty: unpinned).
    pub fn cpus(&self) -> &[usize] {
        &self.cpus
    }

    /// Pins the calling thread (the one that will launch and run chunk 0) to the first
    /// configured CPU; does nothing for an unpinned pool.
    pub fn pin_caller(&self) -> io::Result<()> {
        match self.cpus.first() {
            Some(&c) => pin_current_thread(&[c]),
            None => Ok(()),
        }
    }

    /// Makes this pool the one [`ekb_parallel_for`] uses until the guard is dropped. Waits while
    /// another pool is active.
    pub fn activate(&self) -> Active<'_> {
        let lock = ACTIVE_LOCK.lock().unwrap_or_else(|e| e.into_inner());
        ACTIVE.store(self as *const Pool as *mut Pool, Ordering::Release);
        Active { _lock: lock, _pool: PhantomData }
    }

    /// Runs `f(ctx, begin, end)` over a partition of `[0, n)` into at most `threads` contiguous
    /// chunks and returns when all have finished. `n <= 0` runs nothing.
    ///
    /// # Safety
    /// `f` must be safe to call with `ctx` on any thread, concurrently for disjoint ranges,
    /// until this call returns.
    pub unsafe fn parallel_for(&self, f: ChunkFn, ctx: *mut c_void, n: i64) {
        if n <= 0 {
            return;
        }
        let chunks = (self.threads as i64).min(n) as usize;
        if chunks == 1 || IN_CHUNK.with(Cell::get) {
            // SAFETY: one chunk covering [0, n), on this thread.
            unsafe { f(ctx, 0, n) };
            return;
        }
        let _abort = AbortOnUnwind;
        let job = Job { f, ctx, n, chunks };
        let _launch = self.launch.lock().unwrap_or_else(|e| e.into_inner());
        let generation = {
            let mut s = self.shared.lock();
            s.generation += 1;
            s.job = Some(job);
            self.shared.finished.store(0, Ordering::Relaxed);
            for c in &self.shared.claims[..chunks] {
                c.store(2 * s.generation, Ordering::Release);
            }
            self.shared.generation.store(s.generation, Ordering::Release);
            s.generation
        };
        self.shared.work.notify_all();
        // The launcher claims chunks too: a worker that the scheduler has not run yet (another
        // process holds its core) costs the launch its chunk's time, not a time slice.
        self.shared.run_chunks(&job, generation, 0);
        let all = || self.shared.finished.load(Ordering::Acquire) == chunks;
        if !spin_until(all) {
            let mut s = self.shared.lock();
            while !all() {
                s = self.shared.done.wait(s).unwrap_or_else(|e| e.into_inner());
            }
        }
    }
}

/// Worker `id` claims chunks of every job it sees until none is left, then watches for the next.
fn worker(shared: &Shared, id: usize) {
    let mut seen = 0;
    loop {
        spin_until(|| shared.generation.load(Ordering::Acquire) != seen);
        let job = {
            let mut s = shared.lock();
            loop {
                if s.shutdown {
                    return;
                }
                if s.generation != seen {
                    seen = s.generation;
                    break s.job;
                }
                s = shared.work.wait(s).unwrap_or_else(|e| e.into_inner());
            }
        };
        if let Some(job) = job {
            shared.run_chunks(&job, seen, id);
        }
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        self.shared.lock().shutdown = true;
        self.shared.work.notify_all();
        for w in self.workers.drain(..) {
            // Workers abort rather than panic, so a join cannot report one; nothing is left to
            // clean up either way.
            let _ = w.join();
        }
    }
}

/// Serialises activations: held by the [`Active`] guard.
static ACTIVE_LOCK: Mutex<()> = Mutex::new(());
/// The active pool, or null. Set only while `ACTIVE_LOCK` is held by an [`Active`] guard whose
/// borrow keeps the pool alive.
static ACTIVE: AtomicPtr<Pool> = AtomicPtr::new(std::ptr::null_mut());

/// The active-pool guard from [`Pool::activate`].
pub struct Active<'p> {
    _lock: MutexGuard<'static, ()>,
    _pool: PhantomData<&'p Pool>,
}

impl Drop for Active<'_> {
    fn drop(&mut self) {
        ACTIVE.store(std::ptr::null_mut(), Ordering::Release);
    }
}

/// The kernel ABI's parallel-launch entry: `void ekb_parallel_for(void (*fn)(void *, int64_t,
/// int64_t), void *ctx, int64_t n)`. Runs on the active pool, or serially without one. A null
/// `fn` aborts the process (a broken kernel).
///
/// # Safety
/// Called by kernels under the launch contract of `docs/abi.md`.
pub unsafe extern "C" fn ekb_parallel_for(f: Option<ChunkFn>, ctx: *mut c_void, n: i64) {
    let Some(f) = f else {
        eprintln!("ekb-pool: ekb_parallel_for called with a null function; aborting");
        std::process::abort();
    };
    let pool = ACTIVE.load(Ordering::Acquire);
    if pool.is_null() {
        if n > 0 {
            // SAFETY: the kernel's own body over its whole range, on its own thread.
            unsafe { f(ctx, 0, n) };
        }
    } else {
        // SAFETY: a non-null pointer is the pool of a live `Active` guard (see `ACTIVE`); the
        // kernel follows the launch contract.
        unsafe { (*pool).parallel_for(f, ctx, n) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;
    use std::sync::atomic::AtomicU32;
    use std::time::{Duration, Instant};

    /// Context of the test body: one counter per index, the threads seen, their CPUs.
    struct Counts {
        hits: Vec<AtomicU32>,
        threads: Mutex<HashSet<std::thread::ThreadId>>,
        cpus: Mutex<HashSet<i32>>,
    }

    impl Counts {
        fn new(n: usize) -> Counts {
            Counts {
                hits: (0..n).map(|_| AtomicU32::new(0)).collect(),
                threads: Mutex::default(),
                cpus: Mutex::default(),
            }
        }
        fn hits(&self) -> Vec<u32> {
            self.hits.iter().map(|h| h.load(Ordering::Relaxed)).collect()
        }
    }

    unsafe extern "C" fn count(ctx: *mut c_void, begin: i64, end: i64) {
        // SAFETY: the tests pass a `Counts` that outlives the launch.
        let c = unsafe { &*(ctx as *const Counts) };
        for i in begin..end {
            c.hits[i as usize].fetch_add(1, Ordering::Relaxed);
        }
        c.threads.lock().unwrap().insert(std::thread::current().id());
        // SAFETY: no preconditions.
        c.cpus.lock().unwrap().insert(unsafe { libc::sched_getcpu() });
        std::thread::sleep(Duration::from_millis(2));
    }

    fn ctx<T>(c: &T) -> *mut c_void {
        c as *const T as *mut c_void
    }

    #[test]
    fn every_index_runs_exactly_once_on_several_threads() {
        let pool = Pool::new(&PoolConfig::new(4, 0)).unwrap();
        for n in [1usize, 2, 3, 4, 5, 17, 1000] {
            let c = Counts::new(n);
            // SAFETY: `count` only touches `c`, alive until the call returns.
            unsafe { pool.parallel_for(count, ctx(&c), n as i64) };
            assert!(c.hits().iter().all(|&h| h == 1), "n = {n}: {:?}", c.hits());
            // Any thread may claim any chunk (the launcher takes those no worker reached in
            // time), so at most one thread per chunk took part.
            let threads = c.threads.lock().unwrap().len();
            assert!((1..=n.min(4)).contains(&threads), "n = {n}: {threads} threads");
        }
        let c = Counts::new(1);
        // SAFETY: as above.
        unsafe { pool.parallel_for(count, ctx(&c), 0) };
        unsafe { pool.parallel_for(count, ctx(&c), -3) };
        assert_eq!(c.hits(), vec![0]);
    }

    #[test]
    fn chunks_are_contiguous_and_near_equal() {
        let job = Job { f: count, ctx: std::ptr::null_mut(), n: 10, chunks: 4 };
        let ranges: Vec<_> = (0..4).map(|i| job.range(i)).collect();
        assert_eq!(ranges, vec![(0, 2), (2, 5), (5, 7), (7, 10)]);
        let job = Job { f: count, ctx: std::ptr::null_mut(), n: i64::MAX, chunks: 3 };
        assert_eq!(job.range(0).0, 0);
        assert_eq!(job.range(0).1, job.range(1).0);
        assert_eq!(job.range(2).1, i64::MAX, "no overflow at the top of the range");
    }

    #[test]
    fn the_chunks_of_a_launch_run_concurrently() {
        // Every chunk announces itself, then waits until all have: this only completes in
        // time if all chunks are running at once.
        struct Rendezvous {
            arrived: AtomicU32,
            all_met: AtomicU32,
        }
        unsafe extern "C" fn meet(ctx: *mut c_void, _: i64, _: i64) {
            // SAFETY: the test passes a `Rendezvous` that outlives the launch.
            let r = unsafe { &*(ctx as *const Rendezvous) };
            r.arrived.fetch_add(1, Ordering::SeqCst);
            let deadline = Instant::now() + Duration::from_secs(10);
            while r.arrived.load(Ordering::SeqCst) < 4 && Instant::now() < deadline {
                std::thread::yield_now();
            }
            if r.arrived.load(Ordering::SeqCst) == 4 {
                r.all_met.fetch_add(1, Ordering::SeqCst);
            }
        }
        let pool = Pool::new(&PoolConfig::new(4, 0)).unwrap();
        for _ in 0..5 {
            let r = Rendezvous { arrived: AtomicU32::new(0), all_met: AtomicU32::new(0) };
            // SAFETY: `meet` only touches `r`, alive until the call returns.
            unsafe { pool.parallel_for(meet, ctx(&r), 4) };
            assert_eq!(r.all_met.load(Ordering::SeqCst), 4);
        }
    }

    #[test]
    fn threads_are_reused_and_launches_from_other_threads_serialise() {
        let pool = Arc::new(Pool::new(&PoolConfig::new(3, 0)).unwrap());
        let mut all = HashSet::new();
        for _ in 0..20 {
            let c = Counts::new(3);
            // SAFETY: as above.
            unsafe { pool.parallel_for(count, ctx(&c), 3) };
            all.extend(c.threads.into_inner().unwrap());
        }
        // At most the caller and the two workers, whatever the number of launches.
        assert!(all.len() <= 3, "{} threads", all.len());
        let handles: Vec<_> = (0..4)
            .map(|_| {
                let pool = Arc::clone(&pool);
                std::thread::spawn(move || {
                    let c = Counts::new(50);
                    // SAFETY: as above.
                    unsafe { pool.parallel_for(count, ctx(&c), 50) };
                    c.hits()
                })
            })
            .collect();
        for h in handles {
            assert!(h.join().unwrap().iter().all(|&x| x == 1));
        }
    }

    #[test]
    fn the_abi_entry_uses_the_active_pool_and_runs_serially_without_one() {
        let pool = Pool::new(&PoolConfig::new(3, 0)).unwrap();
        {
            let _active = pool.activate();
            let c = Counts::new(30);
            // SAFETY: as above.
            unsafe { ekb_parallel_for(Some(count), ctx(&c), 30) };
            assert!(c.hits().iter().all(|&h| h == 1));
            // The pool ran it: a thread other than the caller took chunks. (How many of the
            // three do depends on the scheduler: on a loaded 2-core machine a worker woken
            // late can find the chunks taken.)
            let threads = c.threads.lock().unwrap();
            assert!(threads.iter().any(|t| *t != std::thread::current().id()), "{threads:?}");
        }
        // The guard is gone: the launch must not touch the pool.
        let c = Counts::new(30);
        // SAFETY: as above.
        unsafe { ekb_parallel_for(Some(count), ctx(&c), 30) };
        assert!(c.hits().iter().all(|&h| h == 1));
        assert_eq!(*c.threads.lock().unwrap(), HashSet::from([std::thread::current().id()]));
        let c = Counts::new(1);
        // SAFETY: as above.
        unsafe { ekb_parallel_for(Some(count), ctx(&c), 0) };
        unsafe { ekb_parallel_for(Some(count), ctx(&c), -5) };
        assert_eq!(c.hits(), vec![0]);
    }

    #[test]
    fn workers_get_the_configured_stack_and_run_the_init_hook() {
        // The worker's stack, as pthreads reports it, and a chunk that touches most of a
        // 2 MiB local array: it only survives on a worker whose stack is that large.
        unsafe extern "C" fn deep(ctx: *mut c_void, _: i64, _: i64) {
            let mut a = [0u8; 2 << 20];
            for i in (0..a.len()).step_by(4096) {
                // SAFETY: volatile write inside the array, so the frame is really used.
                unsafe { std::ptr::write_volatile(&mut a[i], 1) };
            }
            // SAFETY: ctx is the test's counter.
            unsafe { &*(ctx as *const AtomicU32) }.fetch_add(1, Ordering::Relaxed);
        }
        let stack = (3 << 20) + 1;
        let inits = Arc::new(AtomicU32::new(0));
        let seen = Arc::clone(&inits);
        let sizes = Arc::new(Mutex::new(Vec::new()));
        let sizes_seen = Arc::clone(&sizes);
        let pool = Pool::with_worker_init(&PoolConfig::new(3, stack), move || {
            seen.fetch_add(1, Ordering::Relaxed);
            sizes_seen.lock().unwrap().push(current_stack_size());
        })
        .unwrap();
        assert_eq!(inits.load(Ordering::Relaxed), 2, "one init per worker");
        let sizes = sizes.lock().unwrap().clone();
        assert_eq!(sizes.len(), 2);
        for s in sizes {
            assert!(s >= page_round_up(stack).unwrap(), "stack of {s} bytes");
        }
        let hits = AtomicU32::new(0);
        std::thread::scope(|s| {
            // A launcher with a big enough stack for chunk 0 as well.
            let launcher = std::thread::Builder::new().stack_size(8 << 20);
            let addr = &hits as *const AtomicU32 as usize;
            // SAFETY: `deep` only touches `hits`, alive until the launch returns.
            let run = move || unsafe { pool.parallel_for(deep, addr as *mut c_void, 3) };
            launcher.spawn_scoped(s, run).unwrap().join().unwrap();
        });
        assert_eq!(hits.load(Ordering::Relaxed), 3);
        let e = Pool::new(&PoolConfig::new(2, usize::MAX)).unwrap_err();
        assert!(matches!(e, PoolError::Stack { bytes: usize::MAX }), "{e}");
    }

    /// Size of the calling thread's stack, from its pthread attributes.
    fn current_stack_size() -> usize {
        // SAFETY: the attribute object is initialised by `pthread_getattr_np` and destroyed
        // after use; the out-pointers are valid.
        unsafe {
            let mut attr: libc::pthread_attr_t = std::mem::zeroed();
            assert_eq!(libc::pthread_getattr_np(libc::pthread_self(), &mut attr), 0);
            let mut size = 0usize;
            let mut addr = std::ptr::null_mut();
            assert_eq!(libc::pthread_attr_getstack(&attr, &mut addr, &mut size), 0);
            libc::pthread_attr_destroy(&mut attr);
            size
        }
    }

    #[test]
    fn pinned_workers_run_on_their_cpus() {
        let allowed = allowed_cpus();
        assert!(!allowed.is_empty());
        let cpu = *allowed.last().unwrap();
        // Pinning may be forbidden here (a restricted container): then there is nothing to check.
        let permitted = std::thread::spawn(move || pin_current_thread(&[cpu])).join().unwrap();
        if let Err(e) = permitted {
            assert_eq!(e.kind(), io::ErrorKind::PermissionDenied, "{e}");
            return;
        }
        // Two threads, both on one CPU: every chunk runs there once the caller is pinned too.
        let pool = Pool::new(&PoolConfig { threads: 2, cpus: vec![cpu], stack_bytes: 0 }).unwrap();
        assert_eq!(pool.cpus(), &[cpu]);
        std::thread::scope(|s| {
            s.spawn(|| {
                pool.pin_caller().unwrap();
                let c = Counts::new(2);
                // SAFETY: as above.
                unsafe { pool.parallel_for(count, ctx(&c), 2) };
                assert_eq!(c.threads.lock().unwrap().len(), 2);
                assert_eq!(*c.cpus.lock().unwrap(), HashSet::from([cpu as i32]));
            });
        });
        // threads = 0 with a CPU list: one thread per listed CPU.
        assert_eq!(
            Pool::new(&PoolConfig { threads: 0, cpus: vec![cpu; 3], stack_bytes: 0 }).unwrap().threads(),
            3
        );
        let e = Pool::new(&PoolConfig { threads: 2, cpus: vec![100_000], stack_bytes: 0 }).unwrap_err();
        assert!(matches!(e, PoolError::Affinity { cpu: 100_000, .. }), "{e}");
    }

    #[test]
    fn a_launch_from_inside_a_chunk_runs_serially() {
        struct Nested {
            pool: *const Pool,
            inner: Counts,
        }
        unsafe extern "C" fn outer(nested: *mut c_void, begin: i64, end: i64) {
            // SAFETY: the test passes a `Nested` that outlives the launch.
            let n = unsafe { &*(nested as *const Nested) };
            for _ in begin..end {
                let me = std::thread::current().id();
                let inner = Counts::new(8);
                // SAFETY: as above.
                unsafe { (*n.pool).parallel_for(count, ctx(&inner), 8) };
                assert_eq!(*inner.threads.lock().unwrap(), HashSet::from([me]));
                for (total, h) in n.inner.hits.iter().zip(inner.hits()) {
                    total.fetch_add(h, Ordering::Relaxed);
                }
            }
        }
        let pool = Pool::new(&PoolConfig::new(2, 0)).unwrap();
        let n = Nested { pool: &pool, inner: Counts::new(8) };
        // SAFETY: as above.
        unsafe { pool.parallel_for(outer, ctx(&n), 2) };
        assert!(n.inner.hits().iter().all(|&h| h == 2));
    }

    #[test]
    fn a_panic_on_a_worker_aborts_the_process() {
        // Run in a child copy of this test binary: the panic must kill it with SIGABRT.
        const CHILD: &str = "EKB_POOL_TEST_PANIC_CHILD";
        if std::env::var_os(CHILD).is_some() {
            let _ = Pool::with_worker_init(&PoolConfig::new(2, 0), || panic!("init failed"));
            // Only reached if the panic did not abort.
            std::process::exit(0);
        }
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "tests::a_panic_on_a_worker_aborts_the_process", "--nocapture"])
            .env(CHILD, "1")
            .output()
            .unwrap();
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(out.status.signal(), Some(libc::SIGABRT), "{:?}", out);
        assert!(String::from_utf8_lossy(&out.stderr).contains("ekb-pool: panic in a kernel thread"));
    }
}
