//! Host execution of compiled kernels: link a kernel object into a shared library, load it, and
//! run an L1 module's plan on 64-byte-aligned buffers, for tests and host benchmarks.
//!
//! The object is linked (`clang-19 -shared -fuse-ld=lld`) with a tiny LLVM IR shim that defines
//! `ekb_parallel_for` (hidden, so the kernels bind to it) as a call through two globals of the
//! library, a function pointer and a pool pointer, which [`HostModule::load`] sets right after
//! `dlopen`; nothing is exported from the running executable. The math imports and
//! `memset`/`memcpy`/`memmove` come from the system's libc and libm.
//!
//! What it must keep true: every buffer a kernel receives is 64-byte aligned, exactly the type
//! of the parameter it is bound to, and not passed to a second parameter of the same run when
//! either is written; temporaries and outputs start poisoned with the L1 interpreter's patterns
//! (`POISON_F32_BITS`, `POISON_I32`, `POISON_I8`, `POISON_F16_BITS` of `ekb_ir::l1::interp`) so reading before writing shows.
//! Kernels are native code without bounds checks: run only modules the L1 verifier accepted.

use crate::abi::{check_object, kernel_symbol, Arch, PARALLEL_FOR};
use crate::compile::{compile, find_clang, run, CompileLog};
use crate::emit::emit;
use ekb_ir::diag::did_you_mean;
use ekb_ir::l1::interp::{POISON_F16_BITS, POISON_F32_BITS, POISON_I32, POISON_I8};
use ekb_ir::l1::{Access, BufferRole, Module};
use ekb_ir::tensor::{BufData, Buffer};
use ekb_ir::types::{DType, TensorType};
use ekb_ir::{Diagnostic, TargetProfile};
use ekb_pool::{ChunkFn, Pool, PoolConfig};
use std::alloc::Layout;
use std::collections::HashMap;
use std::ffi::c_void;
use std::path::Path;
use std::ptr::NonNull;
use std::time::{Duration, Instant};

/// Alignment of every buffer passed to a kernel.
pub const BUFFER_ALIGN: usize = 64;

/// Stack size of the pool's worker threads: room for `local` allocations well past any
/// profile's limit.
const WORKER_STACK_BYTES: usize = 16 << 20;

type KernelFn = unsafe extern "C" fn(args: *const *mut c_void);
type HostParallelFor = unsafe extern "C" fn(pool: *const Pool, f: ChunkFn, ctx: *mut c_void, n: i64);

/// Defines `ekb_parallel_for` in the host library as a call through `ekb_host_parallel_for`.
const SHIM: &str = r#"; host shim: ekb_parallel_for for kernels loaded in-process
@ekb_host_parallel_for = global ptr null, align 8
@ekb_host_pool = global ptr null, align 8

define hidden void @ekb_parallel_for(ptr %fn, ptr %ctx, i64 %n) nounwind {
entry:
  %f = load ptr, ptr @ekb_host_parallel_for, align 8
  %p = load ptr, ptr @ekb_host_pool, align 8
  call void %f(ptr %p, ptr %fn, ptr %ctx, i64 %n)
  ret void
}
"#;

/// The pool's entry from the shim. Unwinding out of here would cross C frames: abort instead.
unsafe extern "C" fn host_parallel_for(pool: *const Pool, f: ChunkFn, ctx: *mut c_void, n: i64) {
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        // SAFETY: `pool` is the module's pool, alive while its library is loaded; `f` and `ctx`
        // come from emitted code, which follows the launch contract.
        unsafe { (*pool).parallel_for(f, ctx, n) }
    }));
    if r.is_err() {
        eprintln!("ekb: panic inside {PARALLEL_FOR}; aborting");
        std::process::abort();
    }
}

/// A kernel of the loaded library with the signature it was compiled for.
struct Entry {
    f: KernelFn,
    params: Vec<(TensorType, Access)>,
}

/// A compiled module loaded into this process.
pub struct HostModule {
    kernels: HashMap<String, Entry>,
    // Field order is drop order: the library goes before the pool its shim points to.
    _lib: libloading::Library,
    pool: Box<Pool>,
    link: CompileLog,
}

impl HostModule {
    /// Emits, compiles and loads `m` for `target`, which must be for this machine's
    /// architecture. `threads` as in [`HostModule::load`].
    pub fn build(m: &Module, target: &TargetProfile, threads: usize) -> Result<HostModule, Diagnostic> {
        let host =
            Arch::host().ok_or_else(|| Diagnostic::error("this machine's architecture has no kernel ABI"))?;
        if Arch::of_triple(&target.cpu.triple) != Some(host) {
            return Err(Diagnostic::error(format!(
                "target `{}` ({}) cannot run on this {} machine",
                target.name,
                target.cpu.triple,
                host.name()
            ))
            .with_hint("use the `host` profile for in-process runs"));
        }
        let dir = temp_dir()?;
        let obj = dir.path().join("kernels.o");
        compile(&emit(m, target)?, target, &obj)?;
        HostModule::load(&obj, m, threads)
    }

    /// Links and loads a kernel object compiled from `m` for this machine. `threads` is the
    /// number of threads `parallel` loops use (0: the available cores).
    pub fn load(object: &Path, m: &Module, threads: usize) -> Result<HostModule, Diagnostic> {
        let host =
            Arch::host().ok_or_else(|| Diagnostic::error("this machine's architecture has no kernel ABI"))?;
        let triple = format!("{}-unknown-linux-gnu", host.name());
        let bytes = std::fs::read(object)
            .map_err(|e| Diagnostic::error(format!("cannot read `{}`: {e}", object.display())))?;
        let info = check_object(&bytes, &triple)?;
        for k in &m.kernels {
            if !info.kernels.contains(&k.name) {
                return Err(Diagnostic::error(format!(
                    "the object `{}` does not define kernel `{}` (symbol `{}`)",
                    object.display(),
                    k.name,
                    kernel_symbol(&k.name)
                ))
                .at(k.span));
            }
        }

        let dir = temp_dir()?;
        let shim = dir.path().join("shim.ll");
        let so = dir.path().join("kernels.so");
        std::fs::write(&shim, SHIM)
            .map_err(|e| Diagnostic::error(format!("cannot write the host shim: {e}")))?;
        let mut command = vec![find_clang()?.display().to_string()];
        command.extend([
            format!("--target={triple}"),
            "-shared".into(),
            "-fPIC".into(),
            "-fuse-ld=lld".into(),
            "-Wl,-z,defs".into(),
            "-Wl,-z,now".into(),
            "-o".into(),
            so.display().to_string(),
            object.display().to_string(),
            shim.display().to_string(),
            "-lm".into(),
        ]);
        let link = run(&command, None)?;

        let pool = Box::new(
            Pool::new(&PoolConfig::new(threads, WORKER_STACK_BYTES))
                .map_err(|e| Diagnostic::error(format!("cannot start kernel threads: {e}")))?,
        );
        let load_err =
            |e: libloading::Error| Diagnostic::error(format!("cannot load the kernel library: {e}"));
        // SAFETY: the library is our own link of a checked kernel object and the shim; it has
        // no initialisers beyond libc's.
        let lib = unsafe {
            libloading::os::unix::Library::open(
                Some(&so),
                libloading::os::unix::RTLD_NOW | libloading::os::unix::RTLD_LOCAL,
            )
        }
        .map_err(load_err)?;
        let lib = libloading::Library::from(lib);
        // SAFETY: both symbols are the shim's pointer-sized globals; nothing reads them before
        // the first kernel call, which happens after these writes on a thread that sees them.
        unsafe {
            let f = lib.get::<*mut HostParallelFor>(b"ekb_host_parallel_for").map_err(load_err)?;
            (*f).write(host_parallel_for);
            let p = lib.get::<*mut *const Pool>(b"ekb_host_pool").map_err(load_err)?;
            (*p).write(&*pool as *const Pool);
        }
        let mut kernels = HashMap::new();
        for k in &m.kernels {
            // SAFETY: `ekb_k_*` symbols of a checked object are kernel entries with this signature.
            let f = unsafe { *lib.get::<KernelFn>(kernel_symbol(&k.name).as_bytes()).map_err(load_err)? };
            let params = k.params.iter().map(|p| (p.ty.clone(), p.access)).collect();
            kernels.insert(k.name.clone(), Entry { f, params });
        }
        Ok(HostModule { kernels, _lib: lib, pool, link })
    }

    /// Threads used by `parallel` loops.
    pub fn threads(&self) -> usize {
        self.pool.threads()
    }

    /// The link step's log.
    pub fn link_log(&self) -> &CompileLog {
        &self.link
    }

    /// Runs the plan of `m` (the module this library was compiled from) on `inputs` (every
    /// `input` buffer, by name) and returns every `output` buffer. The kernels run in this
    /// process: an integer division by zero traps and ends it (run untrusted modules in a child
    /// process, as the device runtime does).
    pub fn run(
        &self,
        m: &Module,
        inputs: &HashMap<String, Buffer>,
    ) -> Result<HashMap<String, Buffer>, Diagnostic> {
        let bufs = Buffers::new(m, inputs)?;
        let plan = self.bind(m, &bufs)?;
        plan.prepare();
        plan.execute();
        Ok(bufs.outputs(m))
    }

    /// Times the plan: buffers are set up and the `prepare` steps run once, then `warmup`
    /// untimed and `iters` timed executions of the other steps; one duration per timed one.
    pub fn time(
        &self,
        m: &Module,
        inputs: &HashMap<String, Buffer>,
        warmup: usize,
        iters: usize,
    ) -> Result<Vec<Duration>, Diagnostic> {
        let bufs = Buffers::new(m, inputs)?;
        let plan = self.bind(m, &bufs)?;
        plan.prepare();
        for _ in 0..warmup {
            plan.execute();
        }
        Ok((0..iters)
            .map(|_| {
                let t = Instant::now();
                plan.execute();
                t.elapsed()
            })
            .collect())
    }

    /// Resolves each run of the plan to a kernel entry and its argument pointers, checking
    /// everything the kernels rely on.
    fn bind<'b>(&self, m: &Module, bufs: &'b Buffers) -> Result<Plan<'b>, Diagnostic> {
        let mut steps = Vec::new();
        for r in &m.plan {
            let k = m.kernel(&r.kernel).ok_or_else(|| {
                let names = m.kernels.iter().map(|k| k.name.as_str());
                let d = Diagnostic::error(format!("`run` names unknown kernel `{}`", r.kernel)).at(r.span);
                match did_you_mean(&r.kernel, names) {
                    Some(h) => d.with_hint(h),
                    None => d,
                }
            })?;
            let entry = self.kernels.get(&k.name).ok_or_else(|| {
                Diagnostic::error(format!("kernel `{}` is not in the compiled library", k.name)).at(r.span)
            })?;
            let sig: Vec<(TensorType, Access)> = k.params.iter().map(|p| (p.ty.clone(), p.access)).collect();
            if sig != entry.params {
                return Err(Diagnostic::error(format!(
                    "kernel `{}` has different parameters than the compiled one",
                    k.name
                ))
                .at(k.span)
                .with_hint("recompile the module"));
            }
            if r.args.len() != k.params.len() {
                return Err(Diagnostic::error(format!(
                    "`run {}` passes {} buffers, the kernel takes {}",
                    k.name,
                    r.args.len(),
                    k.params.len()
                ))
                .at(r.span));
            }
            let mut args = Vec::new();
            for (i, (a, p)) in r.args.iter().zip(&k.params).enumerate() {
                let b = bufs.get(&a.name).ok_or_else(|| {
                    Diagnostic::error(format!("`run {}` passes unknown buffer `{}`", k.name, a.name))
                        .at(a.span)
                })?;
                // A parameter may view the buffer under another shape of its element count.
                if b.ty.dtype != p.ty.dtype || b.ty.numel() != p.ty.numel() {
                    return Err(Diagnostic::error(format!(
                        "buffer `{}` is {} but parameter `{}` of `{}` is {}",
                        a.name, b.ty, p.name, k.name, p.ty
                    ))
                    .at(a.span));
                }
                for (j, (a2, p2)) in r.args.iter().zip(&k.params).enumerate().take(i) {
                    if a2.name == a.name && (p.access != Access::In || p2.access != Access::In) {
                        return Err(Diagnostic::error(format!(
                            "buffer `{}` is passed to `{}` twice (parameters {} and {}) and written",
                            a.name, k.name, j, i
                        ))
                        .at(a.span)
                        .with_note("kernel parameters must not overlap when one of them is written"));
                    }
                }
                args.push(b.ptr.as_ptr().cast::<c_void>());
            }
            steps.push((entry.f, args));
        }
        let prepare = m.plan.iter().take_while(|r| r.prepare).count();
        Ok(Plan { steps, prepare, _bufs: std::marker::PhantomData })
    }
}

/// The plan bound to buffers: kernel entries with their argument arrays, the `prepare` steps
/// first.
struct Plan<'b> {
    steps: Vec<(KernelFn, Vec<*mut c_void>)>,
    prepare: usize,
    _bufs: std::marker::PhantomData<&'b Buffers>,
}

impl Plan<'_> {
    /// The prepare steps: once, before the first execution.
    fn prepare(&self) {
        Self::call(&self.steps[..self.prepare]);
    }

    /// One execution: every step after the prepare steps.
    fn execute(&self) {
        Self::call(&self.steps[self.prepare..]);
    }

    fn call(steps: &[(KernelFn, Vec<*mut c_void>)]) {
        for (f, args) in steps {
            // SAFETY: `bind` checked that each pointer is a live, aligned buffer of exactly the
            // parameter's type and that written parameters do not overlap; the kernel is
            // verified L1 compiled to the ABI.
            unsafe { f(args.as_ptr()) };
        }
    }
}

/// The module's buffers, allocated for one or more runs of the plan.
struct Buffers {
    map: HashMap<String, AlignedBuf>,
}

impl Buffers {
    fn new(m: &Module, inputs: &HashMap<String, Buffer>) -> Result<Buffers, Diagnostic> {
        let input_names: Vec<&str> =
            m.buffers.iter().filter(|b| b.role == BufferRole::Input).map(|b| b.name.as_str()).collect();
        for name in inputs.keys() {
            if !input_names.contains(&name.as_str()) {
                let mut d = Diagnostic::error(format!("`{name}` is not an input of module `{}`", m.name));
                if let Some(h) = did_you_mean(name, input_names.iter().copied()) {
                    d = d.with_hint(h);
                }
                return Err(d.with_note(format!("inputs: {}", input_names.join(", "))));
            }
        }
        let mut map = HashMap::new();
        for decl in &m.buffers {
            let mut b = AlignedBuf::new(&decl.ty).map_err(|e| e.at(decl.span))?;
            if decl.role == BufferRole::Input {
                let given = inputs.get(&decl.name).ok_or_else(|| {
                    Diagnostic::error(format!("input `{}` ({}) was not given", decl.name, decl.ty))
                        .at(decl.span)
                })?;
                b.fill(given).map_err(|e| e.at(decl.span))?;
            } else {
                b.poison();
            }
            map.insert(decl.name.clone(), b);
        }
        Ok(Buffers { map })
    }

    fn get(&self, name: &str) -> Option<&AlignedBuf> {
        self.map.get(name)
    }

    fn outputs(&self, m: &Module) -> HashMap<String, Buffer> {
        m.buffers
            .iter()
            .filter(|b| b.role == BufferRole::Output)
            .map(|b| (b.name.clone(), self.map[&b.name].to_buffer()))
            .collect()
    }
}

/// A 64-byte-aligned allocation holding one buffer (at least 64 bytes, never null).
struct AlignedBuf {
    ptr: NonNull<u8>,
    layout: Layout,
    ty: TensorType,
}

impl AlignedBuf {
    fn new(ty: &TensorType) -> Result<AlignedBuf, Diagnostic> {
        let size = ty.size_bytes().max(1).next_multiple_of(BUFFER_ALIGN);
        let too_big = || Diagnostic::error(format!("cannot allocate {size} bytes for a buffer of type {ty}"));
        let layout = Layout::from_size_align(size, BUFFER_ALIGN).map_err(|_| too_big())?;
        // SAFETY: the layout has a non-zero size.
        let ptr = NonNull::new(unsafe { std::alloc::alloc(layout) }).ok_or_else(too_big)?;
        Ok(AlignedBuf { ptr, layout, ty: ty.clone() })
    }

    fn bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: the allocation holds at least `size_bytes` bytes and is exclusively ours.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.ty.size_bytes()) }
    }

    fn fill(&mut self, b: &Buffer) -> Result<(), Diagnostic> {
        let len = match &b.data {
            BufData::F32(v) if b.ty.dtype == DType::F32 => v.len(),
            BufData::I32(v) if b.ty.dtype == DType::I32 => v.len(),
            BufData::I8(v) if b.ty.dtype == DType::I8 => v.len(),
            BufData::F16(v) if b.ty.dtype == DType::F16 => v.len(),
            _ => usize::MAX,
        };
        if b.ty != self.ty || len != self.ty.numel() {
            return Err(Diagnostic::error(format!(
                "input of type {} (with {len} elements) given for {}",
                b.ty, self.ty
            )));
        }
        self.bytes_mut().copy_from_slice(b.as_bytes());
        Ok(())
    }

    fn poison(&mut self) {
        let word = match self.ty.dtype {
            DType::F32 => POISON_F32_BITS.to_ne_bytes(),
            DType::I32 => POISON_I32.to_ne_bytes(),
            DType::I8 => {
                self.bytes_mut().fill(POISON_I8 as u8);
                return;
            }
            DType::F16 => {
                let [a, b] = POISON_F16_BITS.to_ne_bytes();
                [a, b, a, b]
            }
        };
        // Cyclically: an f16 buffer of an odd length ends in half a word.
        for (x, &w) in self.bytes_mut().iter_mut().zip(word.iter().cycle()) {
            *x = w;
        }
    }

    fn to_buffer(&self) -> Buffer {
        let mut b = Buffer::zeros(&self.ty);
        // SAFETY: the allocation holds at least `size_bytes` initialised bytes (filled, poisoned
        // or written by kernels).
        let src = unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.ty.size_bytes()) };
        b.as_bytes_mut().copy_from_slice(src);
        b
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with this layout.
        unsafe { std::alloc::dealloc(self.ptr.as_ptr(), self.layout) }
    }
}

fn temp_dir() -> Result<tempfile::TempDir, Diagnostic> {
    tempfile::Builder::new()
        .prefix("ekb-host-")
        .tempdir()
        .map_err(|e| Diagnostic::error(format!("cannot create a temporary directory: {e}")))
}
