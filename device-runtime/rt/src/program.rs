//! A payload's program, ready to run: its kernel objects loaded, every kernel of the manifest
//! resolved to an entry point, and the launch plan bound to buffers.
//!
//! The pieces are separate so that the isolation and measurement layers can place them where
//! they belong: [`Program::load`] links the code (no expected outputs involved), [`Buffers`]
//! are allocated with the payload's parameter data in them ([`Program::allocate`]) and prepared
//! per seed ([`Program::prepare`]), [`Program::bind`] turns the plan
//! into argument arrays once, [`Bound::prepare`] runs the plan's prepare steps (once per binding
//! of the parameters), [`Bound::execute`] runs one whole execution of the plan's other steps (what
//! one timing sample measures), and [`crate::check`] compares outputs afterwards, outside the
//! code path that runs kernels.
//!
//! What it must keep true: the manifest was validated by `Payload::parse`, so every kernel,
//! buffer and blob index in it is in range and every plan step passes buffers of exactly its
//! parameters' types with no written buffer aliased; this module re-checks nothing of that but
//! never indexes with anything else. Kernels only ever receive pointers to the program's own
//! page-aligned buffers.

use crate::buffers::{BufferError, Buffers, RegionLayout};
use crate::check;
use crate::loader::{KernelFn, LoadError, LoadedObject};
use crate::pool::STACK_RESERVE;
use ekb_wire::payload::{Backend, LaunchStep, Manifest, PayloadView};
use ekb_wire::protocol::SeedCheck;
use std::fmt;
use std::marker::PhantomData;

/// Why a payload's code cannot be made ready to run.
#[derive(Debug, Clone, PartialEq)]
pub enum ProgramError {
    /// This build of the runtime does not run the payload's backend.
    Backend(Backend),
    /// A GPU program's source is not text.
    Source(String),
    /// A code blob failed to load.
    Load { blob: u32, error: LoadError },
    /// A kernel's entry symbol is not exported by its object.
    MissingEntry { kernel: String, symbol: String, blob: u32, available: Vec<String> },
}

impl fmt::Display for ProgramError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProgramError::Backend(b) => {
                let mut runs = vec!["cpu-llvm"];
                runs.extend(crate::gpu_backends().iter().map(|b| b.name()));
                write!(
                    f,
                    "this runtime runs {} kernels; the payload's backend is {b} (a GPU runtime is built with \
                     `cargo build --release -p ekb-rt --features opencl,cuda --target {}-unknown-linux-gnu`)",
                    runs.join(" and "),
                    std::env::consts::ARCH
                )
            }
            ProgramError::Source(e) => f.write_str(e),
            ProgramError::Load { blob, error } => write!(f, "blob {blob}: {error}"),
            ProgramError::MissingEntry { kernel, symbol, blob, available } => write!(
                f,
                "kernel `{kernel}`: blob {blob} does not export `{symbol}` (it exports: {})",
                if available.is_empty() { "nothing".to_string() } else { available.join(", ") }
            ),
        }
    }
}

impl std::error::Error for ProgramError {}

/// A payload's code, loaded.
#[derive(Debug)]
pub struct Program {
    manifest: Manifest,
    /// Loaded code blobs: (blob index, object), in first-use order (CPU programs).
    objects: Vec<(u32, LoadedObject)>,
    /// The entry point of each kernel of the manifest (CPU programs).
    entries: Vec<KernelFn>,
    /// A GPU program: its sources, kernels, buffers and steps, built in the process that runs
    /// it (the driver is never initialised where the program is loaded).
    #[cfg(feature = "gpu")]
    gpu: Option<ekb_gpu::Plan>,
}

impl Program {
    /// Loads every code blob the kernels use and resolves every kernel's entry symbol; a GPU
    /// payload's sources are copied for the process that builds them.
    pub fn load(view: &PayloadView<'_>) -> Result<Program, ProgramError> {
        let manifest = view.manifest().clone();
        #[cfg(feature = "gpu")]
        if crate::gpu_backends().contains(&manifest.backend) {
            let plan = crate::gpu::plan(&manifest, |b| view.blob(b).map(|x| (x.kind, x.data)))
                .map_err(ProgramError::Source)?;
            return Ok(Program { manifest, objects: Vec::new(), entries: Vec::new(), gpu: Some(plan) });
        }
        if manifest.backend != Backend::CpuLlvm {
            return Err(ProgramError::Backend(manifest.backend));
        }
        let mut objects: Vec<(u32, LoadedObject)> = Vec::new();
        let mut entries = Vec::with_capacity(manifest.kernels.len());
        for k in &manifest.kernels {
            let pos = match objects.iter().position(|(b, _)| *b == k.blob) {
                Some(p) => p,
                None => {
                    // Validated: the blob exists and is an ELF object.
                    let blob = view.blob(k.blob).expect("a validated blob index");
                    let obj = LoadedObject::load(blob.data)
                        .map_err(|error| ProgramError::Load { blob: k.blob, error })?;
                    objects.push((k.blob, obj));
                    objects.len() - 1
                }
            };
            let obj = &objects[pos].1;
            let f = obj.entry(&k.symbol).ok_or_else(|| ProgramError::MissingEntry {
                kernel: k.name.clone(),
                symbol: k.symbol.clone(),
                blob: k.blob,
                available: obj.summary().entries.clone(),
            })?;
            entries.push(f);
        }
        Ok(Program {
            manifest,
            objects,
            entries,
            #[cfg(feature = "gpu")]
            gpu: None,
        })
    }

    /// The plan of a GPU program (`None` for CPU programs).
    #[cfg(feature = "gpu")]
    pub fn gpu_plan(&self) -> Option<&ekb_gpu::Plan> {
        self.gpu.as_ref()
    }

    /// Makes a GPU program's plan load the code of `built` (its build at load time: the CUBIN of
    /// its CUDA C) rather than compile its source again in every kernel process.
    #[cfg(feature = "gpu")]
    pub fn adopt_built(&mut self, built: &ekb_gpu::Built) {
        if let Some(plan) = &self.gpu {
            self.gpu = Some(plan.with_built(built));
        }
    }

    /// Whether the kernels run on a GPU (never in a CPU-only build, which loads no GPU program;
    /// saying so lets the compiler drop the GPU paths from the static binary).
    pub fn is_gpu(&self) -> bool {
        cfg!(feature = "gpu") && self.manifest.backend != Backend::CpuLlvm
    }

    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }

    /// The loaded code blobs, with their blob indices.
    pub fn objects(&self) -> impl Iterator<Item = (u32, &LoadedObject)> {
        self.objects.iter().map(|(b, o)| (*b, o))
    }

    /// Stack the thread that calls kernels needs: the profile's budget for `local`
    /// allocations plus the kernel ABI's reserve. (Workers of a pool built with this as
    /// `stack_bytes` get the same.)
    pub fn kernel_stack_bytes(&self) -> usize {
        usize::try_from(self.manifest.memory.stack_limit_bytes)
            .unwrap_or(usize::MAX)
            .saturating_add(STACK_RESERVE)
    }

    /// Allocates the program's buffers and copies the values of its data parameters into them
    /// from the payload's blobs, which `blob(index)` returns (the parent keeps the payload; the
    /// process that runs kernels never maps it).
    /// Seeded inputs and parameters that `twin` (another program's buffers, with its manifest)
    /// declares alike share its regions ([`Buffers::allocate_beside`]).
    pub fn allocate<'d>(
        &self,
        layout: RegionLayout,
        blob: impl Fn(u32) -> Option<&'d [u8]>,
        twin: Option<(&Buffers, &Manifest)>,
    ) -> Result<Buffers, BufferError> {
        let bufs = Buffers::allocate_beside(&self.manifest, layout, twin)?;
        bufs.fill_data(&self.manifest, blob)?;
        Ok(bufs)
    }

    /// Prepares `bufs` for a run under `seeds[seed_index]`: inputs and seeded parameters
    /// generated (data parameters keep the values [`Program::allocate`] copied), outputs and
    /// temporaries poisoned, prepared temps too (the parameters they were computed from may have
    /// changed: [`Bound::prepare`] computes them again). (Inputs and prepared temps must be
    /// writable.)
    pub fn prepare(&self, bufs: &Buffers, seed_index: usize) -> Result<(), BufferError> {
        bufs.generate(&self.manifest, self.manifest.seeds[seed_index])?;
        bufs.poison(&self.manifest);
        bufs.poison_prepared(&self.manifest);
        Ok(())
    }

    /// The plan with each step's kernel entry and argument array, for buffers `bufs` (which
    /// must come from [`Program::allocate`] of this program), its prepare steps apart from its
    /// execution steps. A GPU program has no entries: its plan is empty here (the GPU executor
    /// runs it).
    pub fn bind<'b>(&self, bufs: &'b Buffers) -> Bound<'b> {
        if self.is_gpu() {
            return Bound { prepare: Vec::new(), steps: Vec::new(), _bufs: PhantomData };
        }
        assert_eq!(bufs.len(), self.manifest.buffers.len(), "buffers of another program");
        let bind = |steps: &[LaunchStep]| -> Vec<Step> {
            steps
                .iter()
                .map(|s| {
                    let args = s.args.iter().map(|&a| bufs.data(a as usize).ptr()).collect();
                    (self.entries[s.kernel as usize], args)
                })
                .collect()
        };
        Bound {
            prepare: bind(self.manifest.prepare_plan()),
            steps: bind(self.manifest.execution_plan()),
            _bufs: PhantomData,
        }
    }

    /// Compares the outputs in `bufs` with the expected values of `seeds[seed_index]`, which
    /// `expected(seed index, buffer index)` returns (little-endian elements, as stored in the
    /// payload).
    pub fn check<'e>(
        &self,
        seed_index: usize,
        bufs: &Buffers,
        expected: impl Fn(u32, u32) -> Option<&'e [u8]>,
    ) -> SeedCheck {
        let m = &self.manifest;
        let outputs = m
            .buffers
            .iter()
            .enumerate()
            .filter(|(_, b)| b.role == ekb_wire::payload::Role::Output)
            .map(|(i, b)| {
                // Validated: every (seed, output) pair has an expected blob; a missing one
                // compares as empty, which never passes.
                let expected = expected(seed_index as u32, i as u32).unwrap_or(&[]);
                check::compare(&b.name, b.dtype, bufs.data(i).bytes(), expected, m.tolerance)
            })
            .collect();
        SeedCheck { seed: m.seeds[seed_index], outputs }
    }
}

/// One bound plan step: the kernel's entry point and its argument array.
type Step = (KernelFn, Vec<*mut u8>);

/// The plan bound to buffers: one entry point and argument array per step, the prepare steps
/// apart from the execution steps.
pub struct Bound<'b> {
    prepare: Vec<Step>,
    steps: Vec<Step>,
    _bufs: PhantomData<&'b Buffers>,
}

impl Bound<'_> {
    /// Runs the prepare steps `steps` (indices among them, clamped to their count), in order:
    /// what they write (the prepared temps, which must be writable) the execution steps then
    /// read. All of them once per binding of the parameters, before the first execution, in
    /// one call or in consecutive ranges (the parent binds a consumed parameter just before the
    /// first step that reads it); nothing when the plan has none.
    ///
    /// # Safety
    /// As [`Bound::execute`].
    pub unsafe fn prepare(&self, steps: std::ops::Range<usize>) {
        let from = steps.start.min(self.prepare.len());
        let to = steps.end.clamp(from, self.prepare.len());
        // SAFETY: as in `execute`.
        unsafe { call(&self.prepare[from..to]) };
    }

    /// Runs every execution step of the plan once, in order (one execution of the program; the
    /// prepare steps are not part of it). Parallel loops run on the active pool
    /// ([`crate::pool::Pool::activate`]), or serially without one.
    ///
    /// # Safety
    /// Kernels are native code from the payload: the loader checked their form, not their
    /// behaviour. A kernel may crash, hang or write anywhere in this process, so run this
    /// where that is survivable (the isolation layer's child process). No slice of the
    /// buffers may be live during the call, and the calling thread needs
    /// [`Program::kernel_stack_bytes`] of stack.
    pub unsafe fn execute(&self) {
        // SAFETY: the caller's contract.
        unsafe { call(&self.steps) };
    }

    /// As [`Bound::execute`], adding each step's time by `clock` (nanoseconds) to `step_ns`.
    ///
    /// # Safety
    /// As [`Bound::execute`].
    pub unsafe fn execute_timed(&self, clock: fn() -> u64, step_ns: &mut [u64]) {
        for ((f, args), total) in self.steps.iter().zip(step_ns.iter_mut()) {
            let t0 = clock();
            // SAFETY: as in `execute`.
            unsafe { f(args.as_ptr()) };
            *total += clock() - t0;
        }
    }

    /// Number of kernel launches per execution (the prepare steps are not counted).
    pub fn steps(&self) -> usize {
        self.steps.len()
    }

    /// Number of prepare steps.
    pub fn prepare_steps(&self) -> usize {
        self.prepare.len()
    }
}

/// Calls each step's kernel once, in order.
///
/// # Safety
/// As [`Bound::execute`].
unsafe fn call(steps: &[Step]) {
    for (f, args) in steps {
        // SAFETY: the caller accepts the kernel's behaviour; every pointer is a live,
        // page-aligned buffer of exactly the parameter's type (validated plan).
        unsafe { f(args.as_ptr()) };
    }
}
