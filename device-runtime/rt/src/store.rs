//! Payloads loaded into the runtime: the validated file kept in a mapping of its own, its
//! manifest, its blob table and its linked code.
//!
//! A [`LoadedPayload`] is what a session's `Load` creates and what `Run` and `PairedRun` use;
//! the offline `run` command makes one per payload file. Its bytes live in one page-aligned
//! mapping ([`LoadedPayload::mapping`]) so that the process that runs kernels can unmap it
//! whole: the expected outputs are blobs of that file and must never be reachable by kernel
//! code (`docs/runtime.md`, isolation).
//!
//! A GPU payload's programs are built on the device when it is loaded (in a child process,
//! `crate::gpu::probe`): one that does not build is refused with the build log, like a CPU object
//! that does not link.
//!
//! What it must keep true: a `LoadedPayload` exists only for a payload that passed
//! `Payload::parse` and whose code linked (or built), so the manifest's indices are valid and every blob
//! region lies inside the mapping; the mapping is never written after it is filled.

use crate::buffers::{BufferError, Buffers, RegionLayout};
use crate::memory::LiveGpu;
use crate::program::{Program, ProgramError};
use crate::sys::{Mapping, Protection};
use ekb_wire::payload::{BlobEntry, Manifest, Payload, PayloadError};
use ekb_wire::protocol::{ErrorKind, PayloadId};
use std::fmt;

/// Why a payload could not be loaded, as the protocol's error answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadFailure {
    pub kind: ErrorKind,
    pub message: String,
}

impl fmt::Display for LoadFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind, self.message)
    }
}

impl From<PayloadError> for LoadFailure {
    fn from(e: PayloadError) -> LoadFailure {
        LoadFailure { kind: ErrorKind::PayloadInvalid, message: e.to_string() }
    }
}

impl From<ProgramError> for LoadFailure {
    fn from(e: ProgramError) -> LoadFailure {
        let kind = match e {
            ProgramError::Backend(_) => ErrorKind::Unsupported,
            ProgramError::Load { .. } | ProgramError::MissingEntry { .. } | ProgramError::Source(_) => {
                ErrorKind::LoadFailed
            }
        };
        LoadFailure { kind, message: e.to_string() }
    }
}

/// A validated, linked payload.
#[derive(Debug)]
pub struct LoadedPayload {
    id: PayloadId,
    map: Mapping,
    /// Length of the file (the mapping may be longer: whole pages).
    len: usize,
    blobs: Vec<BlobEntry>,
    program: Program,
    /// A GPU program as built when it was loaded: the device, the build logs and the kernels'
    /// resources.
    #[cfg(feature = "gpu")]
    gpu: Option<ekb_gpu::Built>,
}

/// A GPU program that did not build, or no device to build it on, as the protocol's error.
#[cfg(feature = "gpu")]
fn gpu_failure(e: ekb_gpu::GpuError) -> LoadFailure {
    let kind = match e.kind {
        ekb_gpu::ErrorKind::Unavailable => ErrorKind::Unsupported,
        _ => ErrorKind::LoadFailed,
    };
    LoadFailure { kind, message: e.to_string() }
}

impl LoadedPayload {
    /// Validates `bytes`, copies them into a read-only mapping of their own and links the code.
    pub fn from_bytes(id: PayloadId, bytes: &[u8]) -> Result<LoadedPayload, LoadFailure> {
        // Validate before allocating in proportion to the (possibly hostile) length.
        Payload::parse(bytes)?;
        let system = |e: std::io::Error| LoadFailure {
            kind: ErrorKind::Internal,
            message: format!("cannot map {} bytes for the payload: {e}", bytes.len()),
        };
        let map = Mapping::anonymous(bytes.len()).map_err(system)?;
        // SAFETY: a fresh read-write mapping of at least `bytes.len()` bytes, not aliased.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), map.as_ptr(), bytes.len()) };
        map.protect(0, map.len(), Protection::Read).map_err(system)?;
        LoadedPayload::link(id, map, bytes.len())
    }

    /// Maps the payload file at `path` read-only, validates it and links the code.
    pub fn from_file(id: PayloadId, path: &std::path::Path) -> Result<LoadedPayload, LoadFailure> {
        let fail = |e: std::io::Error| LoadFailure {
            kind: ErrorKind::PayloadInvalid,
            message: format!("cannot read `{}`: {e}", path.display()),
        };
        let file = std::fs::File::open(path).map_err(fail)?;
        match Mapping::file_readonly(&file).map_err(fail)? {
            Some(map) => {
                let len = map.len();
                LoadedPayload::link(id, map, len)
            }
            None => Err(LoadFailure {
                kind: ErrorKind::PayloadInvalid,
                message: format!("`{}` is empty, not a payload", path.display()),
            }),
        }
    }

    fn link(id: PayloadId, map: Mapping, len: usize) -> Result<LoadedPayload, LoadFailure> {
        // SAFETY: the mapping is readable and never written from here on (module notes).
        let bytes = unsafe { &map.bytes()[..len] };
        let view = Payload::parse(bytes)?;
        #[cfg_attr(not(feature = "gpu"), allow(unused_mut))]
        let mut program = Program::load(&view)?;
        let blobs = view.blob_entries().to_vec();
        #[cfg(feature = "gpu")]
        let gpu = program.gpu_plan().map(crate::gpu::probe).transpose().map_err(gpu_failure)?;
        // Kernel processes load the code the probe built instead of compiling it again.
        #[cfg(feature = "gpu")]
        if let Some(built) = &gpu {
            program.adopt_built(built);
        }
        Ok(LoadedPayload {
            id,
            map,
            len,
            blobs,
            program,
            #[cfg(feature = "gpu")]
            gpu,
        })
    }

    /// A GPU program as built when it was loaded (`None` for CPU programs).
    #[cfg(feature = "gpu")]
    pub fn gpu(&self) -> Option<&ekb_gpu::Built> {
        self.gpu.as_ref()
    }

    /// The GPU's limits for the memory check, as its driver reported them when the payload was
    /// loaded (`None` for CPU programs).
    #[cfg(feature = "gpu")]
    pub fn live_limits(&self) -> Option<LiveGpu> {
        self.gpu.as_ref().map(crate::gpu::live_limits)
    }

    /// The GPU's limits for the memory check: none in a CPU-only build.
    #[cfg(not(feature = "gpu"))]
    pub fn live_limits(&self) -> Option<LiveGpu> {
        None
    }

    pub fn id(&self) -> PayloadId {
        self.id
    }

    pub fn program(&self) -> &Program {
        &self.program
    }

    pub fn manifest(&self) -> &Manifest {
        self.program.manifest()
    }

    /// The mapping holding the payload file (the process that runs kernels unmaps it).
    pub fn mapping(&self) -> &Mapping {
        &self.map
    }

    /// The expected value of buffer `buffer` under seed index `seed` (little-endian elements).
    pub fn expected(&self, seed: u32, buffer: u32) -> Option<&[u8]> {
        let m = self.manifest();
        let i = m.expected.binary_search_by_key(&(seed, buffer), |e| (e.seed, e.buffer)).ok()?;
        self.blob(m.expected[i].blob)
    }

    /// The bytes of blob `index`.
    pub fn blob(&self, index: u32) -> Option<&[u8]> {
        let r = self.blobs.get(index as usize)?.region;
        // SAFETY: as in `link`; validated regions lie inside the file.
        let bytes = unsafe { self.map.bytes() };
        bytes.get(r.offset as usize..(r.offset + r.len) as usize)
    }

    /// The program's buffers, with its data parameters' values copied from the payload.
    pub fn allocate(&self, layout: RegionLayout) -> Result<Buffers, BufferError> {
        self.program.allocate(layout, |b| self.blob(b), None)
    }

    /// As [`LoadedPayload::allocate`], the seeded inputs and parameters that `twin`'s program
    /// declares alike (same task, same seeds) in `twin`'s regions ([`Buffers::allocate_beside`]).
    pub fn allocate_beside(
        &self,
        layout: RegionLayout,
        twin: (&Buffers, &LoadedPayload),
    ) -> Result<Buffers, BufferError> {
        self.program.allocate(layout, |b| self.blob(b), Some((twin.0, twin.1.manifest())))
    }

    /// Size of the payload file in bytes.
    pub fn file_bytes(&self) -> u64 {
        self.len as u64
    }
}
