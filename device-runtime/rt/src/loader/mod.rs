//! The ELF loader for CPU kernels: turns a kernel object (an ELF relocatable file compiled by
//! clang from the CPU adapter's LLVM IR, or written by anyone else) into callable entry points.
//!
//! [`LoadedObject::load`] validates the object against the kernel ABI ([`elf::parse`], rules
//! in `docs/abi.md`), lays code, read-only constants and a GOT out in one anonymous mapping,
//! copies the sections, resolves imports from the runtime's fixed table ([`IMPORTS`]) into GOT
//! slots, applies the relocations with range checks, and only then makes the code
//! read-execute and the rest read-only.
//!
//! What it must keep true:
//! - **W^X.** The mapping is never writable and executable at once: it is read-write while it
//!   is filled, then code becomes read-execute and everything else read-only, before any entry
//!   point is handed out. Nothing ever makes it writable again.
//! - **Instruction cache.** On aarch64 the data cache is cleaned and the instruction cache
//!   invalidated for the code range (to the point of unification, the inner-shareable domain)
//!   after writing and before the code can run. This uses inline `dc cvau` / `ic ivau` with the
//!   line sizes from `CTR_EL0` rather than `__clear_cache`, so it depends on no C runtime
//!   (musl's static builds provide none). Other threads that run the code first pass through
//!   the pool's lock hand-off (a system call, which is a context synchronisation event), so the
//!   `isb` on the loading thread is enough. x86_64 keeps instruction fetch coherent itself.
//! - An entry point is only ever the address of an exported `ekb_k_*` function inside the
//!   mapped code, and lives as long as the [`LoadedObject`].

mod copy;
mod elf;
mod error;
mod imports;
mod reloc;

pub use elf::{KERNEL_PREFIX, MAX_IMAGE_BYTES};
pub use error::LoadError;
pub use imports::IMPORTS;
pub use reloc::{Arch, Field, RelocType};

use crate::sys::{self, Mapping, Protection};

/// A kernel entry point: `void ekb_k_<kernel>(void *const *args)`, `args[i]` the base address
/// of the buffer of the kernel's `i`-th parameter.
pub type KernelFn = unsafe extern "C" fn(args: *const *mut u8);

/// What [`check`] finds in a valid object, without mapping it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectSummary {
    pub arch: Arch,
    /// Exported entry symbols (`ekb_k_*`), in symbol-table order.
    pub entries: Vec<String>,
    /// Imports the object references, in the order of [`IMPORTS`].
    pub imports: Vec<&'static str>,
    /// Number of relocations applied, by type name, sorted by name.
    pub relocations: Vec<(&'static str, usize)>,
    /// Bytes of the mapped image (code, constants, GOT; whole pages).
    pub image_bytes: u64,
    /// Bytes of code (whole pages).
    pub code_bytes: u64,
}

fn summarise(layout: &elf::Layout<'_>) -> ObjectSummary {
    let mut relocations: Vec<(&'static str, usize)> = Vec::new();
    for r in &layout.relocs {
        match relocations.iter_mut().find(|(n, _)| *n == r.ty.name) {
            Some((_, c)) => *c += 1,
            None => relocations.push((r.ty.name, 1)),
        }
    }
    relocations.sort();
    ObjectSummary {
        arch: layout.arch,
        entries: layout.kernels.iter().map(|(n, _)| n.clone()).collect(),
        imports: layout.imports.iter().map(|&i| IMPORTS[i]).collect(),
        relocations,
        image_bytes: layout.len,
        code_bytes: layout.code_len,
    }
}

/// Validates `bytes` as a kernel object for `arch` (which need not be this machine's) without
/// mapping or running anything: every check of [`LoadedObject::load`], relocation range checks
/// included. The image is linked into ordinary memory at a page-aligned stand-in address; every
/// relocation target lies in the image, so the displacements are those of a real load.
pub fn check(bytes: &[u8], arch: Arch) -> Result<ObjectSummary, LoadError> {
    let page = sys::page_size() as u64;
    let layout = elf::parse(bytes, arch, page)?;
    // `len` <= MAX_IMAGE_BYTES, so it fits in usize.
    let mut image = vec![0u8; layout.len as usize];
    layout.link(&mut image, 1 << 32, |_| 0)?;
    Ok(summarise(&layout))
}

/// A kernel object mapped into this process, ready to run.
#[derive(Debug)]
pub struct LoadedObject {
    map: Mapping,
    /// Entry symbols and their offsets in the mapping.
    entries: Vec<(String, usize)>,
    summary: ObjectSummary,
}

impl LoadedObject {
    /// Loads a kernel object for this machine's architecture.
    pub fn load(bytes: &[u8]) -> Result<LoadedObject, LoadError> {
        let layout = elf::parse(bytes, Arch::host(), sys::page_size() as u64)?;
        let system =
            |op: &'static str| move |e: std::io::Error| LoadError::System { op, error: e.to_string() };
        // `len` <= MAX_IMAGE_BYTES, so it fits in usize.
        let map = Mapping::anonymous(layout.len as usize).map_err(system("mmap"))?;
        {
            // SAFETY: the mapping is fresh, read-write, at least `layout.len` bytes, and
            // nothing else refers to it yet.
            let image = unsafe { std::slice::from_raw_parts_mut(map.as_ptr(), map.len()) };
            layout.link(image, map.addr() as u64, |i| {
                // Every index in the layout comes from `imports::index_of`.
                imports::address(i).expect("an import of the table")
            })?;
        }
        let code = layout.code_len as usize;
        sync_instruction_cache(map.as_ptr(), code);
        map.protect(0, code, Protection::ReadExec).map_err(system("mprotect (code: read-execute)"))?;
        map.protect(code, map.len() - code, Protection::Read)
            .map_err(system("mprotect (data: read-only)"))?;
        let entries = layout.kernels.iter().map(|(n, off)| (n.clone(), *off as usize)).collect();
        Ok(LoadedObject { map, entries, summary: summarise(&layout) })
    }

    /// The entry point of kernel `name` (symbol `ekb_k_<name>`).
    pub fn kernel(&self, name: &str) -> Option<KernelFn> {
        self.entry(&format!("{KERNEL_PREFIX}{name}"))
    }

    /// The entry point with symbol `symbol` (e.g. `ekb_k_matmul`).
    pub fn entry(&self, symbol: &str) -> Option<KernelFn> {
        let (_, off) = self.entries.iter().find(|(n, _)| n == symbol)?;
        let addr = self.map.addr() + off;
        // SAFETY: `addr` is an exported function symbol inside the read-execute code of this
        // mapping (checked by `elf::parse`), compiled to the kernel ABI's entry prototype.
        Some(unsafe { std::mem::transmute::<usize, KernelFn>(addr) })
    }

    /// Kernel names (entry symbols without the `ekb_k_` prefix), in symbol-table order.
    pub fn kernels(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().filter_map(|(n, _)| n.strip_prefix(KERNEL_PREFIX))
    }

    pub fn summary(&self) -> &ObjectSummary {
        &self.summary
    }

    /// The entry symbol at or before `addr` in this object's code and the offset from it
    /// (attributing a faulting program counter to a kernel); `None` outside the code.
    pub fn symbolize(&self, addr: usize) -> Option<(&str, usize)> {
        if !self.code_range().contains(&addr) {
            return None;
        }
        let off = addr - self.map.addr();
        self.entries
            .iter()
            .filter(|(_, o)| *o <= off)
            .max_by_key(|(_, o)| *o)
            .map(|(n, o)| (n.as_str(), off - o))
    }

    /// The address range of the mapped code, for diagnostics (attributing a faulting address
    /// to the kernel).
    pub fn code_range(&self) -> std::ops::Range<usize> {
        self.map.addr()..self.map.addr() + self.summary.code_bytes as usize
    }
}

/// Makes freshly written code visible to instruction fetch (see the module notes).
#[cfg(target_arch = "aarch64")]
fn sync_instruction_cache(start: *mut u8, len: usize) {
    if len == 0 {
        return;
    }
    let ctr: u64;
    // SAFETY: CTR_EL0 is readable at EL0 on Linux (the kernel sets SCTLR_EL1.UCT or emulates).
    unsafe { core::arch::asm!("mrs {}, ctr_el0", out(reg) ctr, options(nomem, nostack)) };
    // DminLine (bits 19:16) and IminLine (bits 3:0) are log2 of the line size in 4-byte words.
    let dline = 4usize << ((ctr >> 16) & 0xf);
    let iline = 4usize << (ctr & 0xf);
    let (begin, end) = (start as usize, start as usize + len);
    // SAFETY: cache maintenance by virtual address on the range this loader just wrote; the
    // instructions neither read nor write memory architecturally.
    unsafe {
        let mut a = begin & !(dline - 1);
        while a < end {
            core::arch::asm!("dc cvau, {}", in(reg) a, options(nostack));
            a += dline;
        }
        core::arch::asm!("dsb ish", options(nostack));
        let mut a = begin & !(iline - 1);
        while a < end {
            core::arch::asm!("ic ivau, {}", in(reg) a, options(nostack));
            a += iline;
        }
        core::arch::asm!("dsb ish", "isb", options(nostack));
    }
}

/// x86_64 keeps instruction fetch coherent with stores: nothing to do.
#[cfg(not(target_arch = "aarch64"))]
fn sync_instruction_cache(_start: *mut u8, _len: usize) {}
