//! The runtime's side of the thread pool behind `ekb_parallel_for` (the pool itself is the
//! `ekb-pool` crate, re-exported here): the kernel ABI's stack reserve, and [`start`], which
//! gives every kernel thread an alternate signal stack so that the kernel process's fault
//! handler also runs after a stack overflow.
//!
//! What it must keep true: every kernel thread has the stack the kernel ABI asks for, the
//! profile's budget for `local` allocations plus [`STACK_RESERVE`] (callers pass that sum as
//! `stack_bytes`, see `Program::kernel_stack_bytes`), and an alternate signal stack for its
//! whole life.

use std::ffi::c_void;

pub use ekb_pool::{
    allowed_cpus, ekb_parallel_for, pin_current_thread, Active, ChunkFn, Pool, PoolConfig, PoolError,
};

/// Stack every kernel thread gets beyond the profile's `stack_bytes` (the ABI's 64 KiB for the
/// kernel's own frames and the runtime's).
pub const STACK_RESERVE: usize = 64 << 10;

/// Starts a pool of kernel threads as configured, each with an alternate signal stack.
pub fn start(config: &PoolConfig) -> Result<Pool, PoolError> {
    Pool::with_worker_init(config, crate::sys::AltStack::install)
}

/// Runs `f(i)` for every `i` in `0..n` on the pool's threads (in contiguous chunks, as a
/// kernel's `parallel` loop runs), for the runtime's own bulk work between executions.
pub fn for_each(pool: &Pool, n: usize, f: &(dyn Fn(usize) + Sync)) {
    unsafe extern "C" fn body(ctx: *mut c_void, begin: i64, end: i64) {
        // SAFETY: `ctx` is the `&dyn Fn` below, alive until the launch returns.
        let f = unsafe { &*(ctx as *const &(dyn Fn(usize) + Sync)) };
        (begin..end).for_each(|i| f(i as usize));
    }
    let ctx = &f as *const &(dyn Fn(usize) + Sync) as *mut c_void;
    // SAFETY: `body` only calls `f`, which is `Sync`, on disjoint indices, until this returns.
    unsafe { pool.parallel_for(body, ctx, n as i64) };
}
