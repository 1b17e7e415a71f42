//! The host's `ekb_parallel_for`: a persistent thread pool that runs a kernel's outlined
//! `parallel` body over contiguous chunks of `[0, n)`.
//!
//! What it must keep true (the launch contract of `docs/abi.md`): every index of `[0, n)` is
//! passed to exactly one call of the body, the chunks may run concurrently, and
//! [`Pool::parallel_for`] returns only after every chunk has finished (the mutex hand-off gives
//! the caller a happens-before edge to every write the chunks made). The launching thread runs
//! chunk 0 itself; the workers are started once and sleep on a condition variable between
//! launches. A launch from inside a chunk (a nested `parallel`, which emitted code never does)
//! runs serially on the calling thread instead of deadlocking.

use std::cell::Cell;
use std::ffi::c_void;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;

/// The outlined body of a `parallel` loop: runs iterations `[begin, end)`.
pub type ChunkFn = unsafe extern "C" fn(ctx: *mut c_void, begin: i64, end: i64);

/// Stack size of worker threads: room for `local` allocations well past any profile's limit.
pub const WORKER_STACK_BYTES: usize = 16 << 20;

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

// SAFETY: the context pointer is only dereferenced by the chunk function, whose contract (the
// launch contract) allows any thread to run it while the launching call waits.
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
        // SAFETY: the launcher of this job vouched for `f` and `ctx` (see `parallel_for`).
        unsafe { (self.f)(self.ctx, begin, end) };
        IN_CHUNK.with(|c| c.set(false));
    }
}

struct State {
    generation: u64,
    job: Option<Job>,
    /// Workers still running a chunk of the current job.
    pending: usize,
    shutdown: bool,
}

struct Shared {
    state: Mutex<State>,
    work: Condvar,
    done: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A poisoned lock only means some thread panicked while holding it; the state it
        // protects is still consistent (every update is a single assignment).
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

pub struct Pool {
    threads: usize,
    shared: Arc<Shared>,
    workers: Vec<JoinHandle<()>>,
    /// Serialises launches from different threads.
    launch: Mutex<()>,
}

impl Pool {
    /// A pool of `threads` threads in all (the launching thread counts as one); 0 means the
    /// machine's available parallelism.
    pub fn new(threads: usize) -> std::io::Result<Pool> {
        let threads =
            if threads == 0 { std::thread::available_parallelism().map_or(1, |n| n.get()) } else { threads };
        let shared = Arc::new(Shared {
            state: Mutex::new(State { generation: 0, job: None, pending: 0, shutdown: false }),
            work: Condvar::new(),
            done: Condvar::new(),
        });
        let mut pool = Pool { threads, shared, workers: Vec::new(), launch: Mutex::new(()) };
        for id in 1..threads {
            let shared = Arc::clone(&pool.shared);
            let handle = std::thread::Builder::new()
                .name(format!("ekb-pool-{id}"))
                .stack_size(WORKER_STACK_BYTES)
                .spawn(move || worker(&shared, id))?;
            pool.workers.push(handle);
        }
        Ok(pool)
    }

    pub fn threads(&self) -> usize {
        self.threads
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
        let job = Job { f, ctx, n, chunks };
        if chunks == 1 || IN_CHUNK.with(Cell::get) {
            // SAFETY: one chunk covering [0, n), on this thread.
            unsafe { f(ctx, 0, n) };
            return;
        }
        let _launch = self.launch.lock().unwrap_or_else(|e| e.into_inner());
        {
            let mut s = self.shared.lock();
            s.generation += 1;
            s.job = Some(job);
            s.pending = chunks - 1;
        }
        self.shared.work.notify_all();
        job.run_chunk(0);
        let mut s = self.shared.lock();
        while s.pending > 0 {
            s = self.shared.done.wait(s).unwrap_or_else(|e| e.into_inner());
        }
        s.job = None;
    }
}

/// Worker `id` runs chunk `id` of every job that has more than `id` chunks.
fn worker(shared: &Shared, id: usize) {
    let mut seen = 0;
    loop {
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
        if let Some(job) = job.filter(|j| id < j.chunks) {
            job.run_chunk(id);
            let mut s = shared.lock();
            s.pending -= 1;
            if s.pending == 0 {
                shared.done.notify_all();
            }
        }
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        self.shared.lock().shutdown = true;
        self.shared.work.notify_all();
        for w in self.workers.drain(..) {
            // A worker can only have panicked outside a chunk, in this module's own code; there
            // is nothing left to clean up for it.
            let _ = w.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering};

    /// Context of the test body: one counter per index and the set of threads seen.
    struct Counts {
        hits: Vec<AtomicU32>,
        threads: Mutex<std::collections::HashSet<std::thread::ThreadId>>,
    }

    unsafe extern "C" fn count(ctx: *mut c_void, begin: i64, end: i64) {
        // SAFETY: the tests pass a `Counts` that outlives the launch.
        let c = unsafe { &*(ctx as *const Counts) };
        for i in begin..end {
            c.hits[i as usize].fetch_add(1, Ordering::Relaxed);
        }
        c.threads.lock().unwrap().insert(std::thread::current().id());
        std::thread::sleep(std::time::Duration::from_millis(2));
    }

    fn launch(pool: &Pool, n: usize) -> (Vec<u32>, usize) {
        let c = Counts { hits: (0..n).map(|_| AtomicU32::new(0)).collect(), threads: Mutex::default() };
        // SAFETY: `count` only touches `c`, which lives until the call returns.
        unsafe { pool.parallel_for(count, &c as *const Counts as *mut c_void, n as i64) };
        let threads = c.threads.lock().unwrap().len();
        (c.hits.iter().map(|h| h.load(Ordering::Relaxed)).collect(), threads)
    }

    #[test]
    fn every_index_runs_exactly_once_on_several_threads() {
        let pool = Pool::new(4).unwrap();
        for n in [1, 2, 3, 4, 5, 17, 1000] {
            let (hits, threads) = launch(&pool, n);
            assert!(hits.iter().all(|&h| h == 1), "n = {n}: {hits:?}");
            assert_eq!(threads, n.min(4), "n = {n}");
        }
        assert_eq!(launch(&pool, 0).0, Vec::<u32>::new());
    }

    #[test]
    fn chunks_partition_the_range_contiguously() {
        let job = Job { f: count, ctx: std::ptr::null_mut(), n: 10, chunks: 4 };
        let ranges: Vec<_> = (0..4).map(|i| job.range(i)).collect();
        assert_eq!(ranges, vec![(0, 2), (2, 5), (5, 7), (7, 10)]);
    }

    #[test]
    fn threads_are_reused_across_launches_and_from_other_threads() {
        let pool = Arc::new(Pool::new(3).unwrap());
        let mut all = std::collections::HashSet::new();
        for _ in 0..20 {
            let c = Counts { hits: (0..3).map(|_| AtomicU32::new(0)).collect(), threads: Mutex::default() };
            unsafe { pool.parallel_for(count, &c as *const Counts as *mut c_void, 3) };
            all.extend(c.threads.into_inner().unwrap());
        }
        // The caller plus the two workers, whatever the number of launches.
        assert_eq!(all.len(), 3);
        let handles: Vec<_> = (0..4)
            .map(|_| {
                let pool = Arc::clone(&pool);
                std::thread::spawn(move || launch(&pool, 50).0)
            })
            .collect();
        for h in handles {
            assert!(h.join().unwrap().iter().all(|&x| x == 1));
        }
    }

    #[test]
    fn a_launch_from_inside_a_chunk_runs_serially() {
        struct Nested {
            pool: *const Pool,
            inner: Counts,
        }
        unsafe extern "C" fn outer(ctx: *mut c_void, begin: i64, end: i64) {
            let n = unsafe { &*(ctx as *const Nested) };
            for _ in begin..end {
                unsafe { (*n.pool).parallel_for(count, &n.inner as *const Counts as *mut c_void, 8) };
            }
        }
        let pool = Pool::new(2).unwrap();
        let n = Nested {
            pool: &pool,
            inner: Counts { hits: (0..8).map(|_| AtomicU32::new(0)).collect(), threads: Mutex::default() },
        };
        unsafe { pool.parallel_for(outer, &n as *const Nested as *mut c_void, 2) };
        assert!(n.inner.hits.iter().all(|h| h.load(Ordering::Relaxed) == 2));
    }
}
