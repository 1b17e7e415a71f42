//! The buffers of a program: one page-aligned memory region per buffer, with guard zones, the
//! seeded fill of inputs and parameters, the payload's values of data parameters, and poison for
//! outputs and temporaries.
//!
//! Each buffer is its own anonymous mapping, shared with the kernel process forked after it
//! is made (the parent generates inputs into it and reads outputs from it), laid out as
//!
//! ```text
//! [fence: 1 page, no access][guard: whole pages][data: whole pages, the buffer at their start, then slack][guard][fence]
//! ```
//!
//! so the data starts on a page boundary (64-byte aligned as the kernel ABI requires, and never
//! null, even for an empty buffer), the data pages belong to this buffer alone (inputs can be
//! made read-only with `mprotect` without touching anything else), and every byte around the
//! data — the guards and the slack after the last element — holds [`GUARD_BYTE`], so a write
//! past either end shows up in [`Buffers::check_guards`] with the buffer's name. An access
//! beyond the guards hits a fence and faults; [`Buffers::locate`] attributes the faulting
//! address to the buffer whose region holds it.
//!
//! A manifest with a temp arena (`Manifest::arena`, validated: temps that share bytes are never
//! live at the same step) gets one region more, [`ARENA_NAME`], laid out the same way, and each
//! temp it places is a slice of it at its offset (64-byte aligned, as the region starts on a
//! page); every other buffer keeps a region of its own. Guards surround the arena as a whole, so
//! a temp that overruns into a neighbouring slot is not caught by them (the host's verifier
//! proves every access in bounds; the guards are the runtime's second line).
//!
//! The two programs of a paired run read one copy of their inputs: the second program's
//! buffers are made beside the first's ([`Buffers::allocate_beside`]), and each seeded input or
//! parameter both declare alike (same task and seeds) is the first's region itself, held by
//! both (`Arc`), so both read the same physical pages.
//!
//! Temps that the manifest's prepare steps write (`Manifest::prepared`, validated: never in the
//! arena) hold what those steps computed from the parameters across executions: the poison
//! before each execution passes them over ([`Buffers::poison`]); they are poisoned once before
//! the prepare steps run ([`Buffers::poison_prepared`]) and can be made read-only like inputs
//! ([`Buffers::protect_prepared`]).
//!
//! A parameter that only prepare steps read may have a slot in the arena too
//! (`Manifest::consumed_params`; a **consumed** parameter here): the execution's temps reuse
//! its bytes, so its values are gone after the first execution. It is written again (drawn, or
//! copied from its blob: [`Buffers::fill_consumed_data`]) each time the parameters are bound,
//! before the prepare steps run; it is never shared with a twin, never copied to another
//! program's buffers, never protected (the arena is writable), and its checksum is not one
//! that holds across executions ([`Buffers::input_checksums`] passes it over).
//!
//! What it must keep true: the memory is only ever reached through raw pointers (kernels write
//! it while the runtime holds `&Buffers`); the safe accessors that hand out slices say when
//! they may be called (never while kernels run). Inputs and seeded parameters are generated with
//! the shared seeded generator under the key `tensor_key(task, seed, buffer name)`, exactly as
//! the host generates them, for every seed; data parameters are copied from their blobs once,
//! when the buffers are made, and hold the same values for every seed (nothing writes them
//! afterwards: kernels see them read-only, and their checksums are checked after every run);
//! outputs and temporaries hold [`POISON_F32_BITS`] / [`POISON_I32`] / [`POISON_I8`] /
//! [`POISON_F16_BITS`] (the L1 interpreter's patterns) before every run, prepared temps before
//! the prepare steps.

use crate::sys::{self, Mapping, Protection};
use ekb_wire::payload::{BufferDecl, DType, Manifest, Role, Source};
use ekb_wire::seeded::{self, InitError};
use ekb_wire::Init;
use std::fmt;
use std::sync::Arc;

/// Alignment of every buffer a kernel receives.
pub const BUFFER_ALIGN: usize = 64;
/// Bits of the f32 poison (a quiet NaN whose payload reads `dead`).
pub const POISON_F32_BITS: u32 = 0x7fc0_dead;
/// The i32 poison.
pub const POISON_I32: i32 = 0x7ead_beef;
/// The i8 poison: the low byte of [`POISON_I32`] (`0xef`).
pub const POISON_I8: i8 = POISON_I32 as i8;
/// The f16 poison: a quiet NaN, the high half of [`POISON_I32`] (`0x7ead`).
pub const POISON_F16_BITS: u16 = 0x7ead;
/// The byte every guard zone and the slack after each buffer hold.
pub const GUARD_BYTE: u8 = 0xa5;

/// How buffer regions are laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RegionLayout {
    /// Bytes of guard zone on each side of the data (rounded up to whole pages; 0: none
    /// beyond the slack of the last data page). The fences come on top.
    pub guard_bytes: usize,
}

/// Where an address lies relative to one buffer's region.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Zone {
    /// In the data: `offset` bytes from its start.
    Data { offset: usize },
    /// Outside the data but inside the region (guard, slack or fence): `offset` from the
    /// data's start, negative before it.
    Outside { offset: i64 },
}

impl RegionLayout {
    /// One page of guard on each side.
    pub fn one_page() -> RegionLayout {
        RegionLayout { guard_bytes: sys::page_size() }
    }
}

/// One buffer's region.
#[derive(Debug)]
pub struct Region {
    map: Mapping,
    /// Length of each fence (one page).
    fence: usize,
    /// Offset of the data in the mapping (fence and leading guard).
    lead: usize,
    /// Length of the data in bytes.
    len: usize,
    /// Length of the data pages.
    data_pages: usize,
}

/// A byte outside a buffer that no longer holds [`GUARD_BYTE`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GuardHit {
    /// Offset from the start of the data: negative before it, `>= len` after it.
    pub offset: i64,
    /// How many guard bytes were changed.
    pub bytes: usize,
}

impl Region {
    /// A region for `len` bytes of data.
    pub fn new(len: usize, layout: RegionLayout) -> std::io::Result<Region> {
        let overflow = || std::io::Error::new(std::io::ErrorKind::OutOfMemory, "buffer size overflows");
        let fence = sys::page_size();
        let guard = sys::page_round_up(layout.guard_bytes).ok_or_else(overflow)?;
        let data_pages = sys::page_round_up(len.max(1)).ok_or_else(overflow)?;
        let total =
            (fence + guard).checked_mul(2).and_then(|n| n.checked_add(data_pages)).ok_or_else(overflow)?;
        let map = Mapping::shared(total)?;
        map.protect(0, fence, Protection::None)?;
        map.protect(total - fence, fence, Protection::None)?;
        if data_pages >= 2 << 20 {
            // Large buffers on huge pages where the system allows it for shared memory
            // (`shmem_enabled=advise`); a refusal changes nothing but the page size.
            // SAFETY: advice on whole pages inside this mapping (so the address is not null),
            // which changes no contents.
            let _ = unsafe {
                let start = std::ptr::NonNull::new_unchecked(map.as_ptr().add(fence + guard));
                nix::sys::mman::madvise(start.cast(), data_pages, nix::sys::mman::MmapAdvise::MADV_HUGEPAGE)
            };
        }
        let r = Region { map, fence, lead: fence + guard, len, data_pages };
        r.fill_guards();
        Ok(r)
    }

    /// Where `addr` lies relative to this buffer, if inside its region.
    pub fn locate(&self, addr: usize) -> Option<Zone> {
        let base = self.map.addr();
        if addr < base || addr >= base + self.map.len() {
            return None;
        }
        let offset = addr as i64 - (base + self.lead) as i64;
        Some(match usize::try_from(offset) {
            Ok(o) if o < self.len => Zone::Data { offset: o },
            _ => Zone::Outside { offset },
        })
    }

    /// The address range of the whole region (fences included).
    pub fn span(&self) -> std::ops::Range<usize> {
        self.map.addr()..self.map.addr() + self.map.len()
    }

    /// A checksum of the data (to prove after a run that nothing wrote it).
    pub fn checksum(&self) -> u64 {
        checksum(self.bytes())
    }

    /// The address of the data (page-aligned).
    pub fn ptr(&self) -> *mut u8 {
        // In bounds: `lead` < the mapping's length.
        self.map.as_ptr().wrapping_add(self.lead)
    }

    /// Length of the data in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The data. Must not be called while a kernel may write the buffer.
    pub fn bytes(&self) -> &[u8] {
        // SAFETY: `len` bytes at `ptr` are mapped and readable (the data pages are never made
        // unreadable); the caller does not run kernels while the slice lives (module notes).
        unsafe { std::slice::from_raw_parts(self.ptr(), self.len) }
    }

    /// Writes `f(data)`; the data pages must be writable, and no kernel may run on them (a GPU
    /// program's results are copied in this way: its kernels work on device memory).
    pub fn with_bytes_mut<T>(&self, f: impl FnOnce(&mut [u8]) -> T) -> T {
        // SAFETY: as in `bytes`, and no other slice of the data is live inside this call.
        f(unsafe { std::slice::from_raw_parts_mut(self.ptr(), self.len) })
    }

    /// Makes the data pages read-only (`true`) or read-write again (`false`).
    pub fn protect_data(&self, read_only: bool) -> std::io::Result<()> {
        let prot = if read_only { Protection::Read } else { Protection::ReadWrite };
        self.map.protect(self.lead, self.data_pages, prot)
    }

    /// The guard zones and slack: the read-write bytes around the data, as offsets into the
    /// mapping.
    fn guard_ranges(&self) -> [std::ops::Range<usize>; 2] {
        let end = self.map.len() - self.fence;
        [self.fence..self.lead, self.lead + self.len..end]
    }

    /// Fills the guards and the slack with [`GUARD_BYTE`] (in this process's view they are
    /// always writable).
    pub fn fill_guards(&self) {
        let base = self.map.as_ptr();
        for r in self.guard_ranges() {
            // SAFETY: the range lies inside the read-write part of the mapping, outside the data.
            unsafe { std::ptr::write_bytes(base.add(r.start), GUARD_BYTE, r.len()) };
        }
    }

    /// The first changed byte around the data, with the count of changed bytes; `None` when
    /// every guard byte is intact.
    pub fn check_guards(&self) -> Option<GuardHit> {
        let mut first = None;
        let mut bytes = 0;
        for r in self.guard_ranges() {
            // SAFETY: guards are read-write in this process and nothing writes them meanwhile
            // (the kernel process is stopped between runs).
            let zone = unsafe { std::slice::from_raw_parts(self.map.as_ptr().add(r.start), r.len()) };
            for (i, &b) in zone.iter().enumerate() {
                if b != GUARD_BYTE {
                    bytes += 1;
                    first.get_or_insert((r.start + i) as i64 - self.lead as i64);
                }
            }
        }
        first.map(|offset| GuardHit { offset, bytes })
    }
}

/// One step of [`checksum`]'s chains: a bijection of `h` for any word and of the word for any
/// `h`, so a changed word always changes the chain it falls in.
fn checksum_step(h: u64, word: u64) -> u64 {
    (h.rotate_left(5) ^ word).wrapping_mul(0x0100_0000_01b3_9e37)
}

/// The checksum of [`Region::checksum`] and [`Data::checksum`]: four chains over the 8-byte
/// words of each 32-byte block in turn (independent, so the CPU overlaps their multiplies: 2.3
/// times the speed of one chain over 64 MB), the rest on the first, folded in at the end.
fn checksum(bytes: &[u8]) -> u64 {
    let word = |w: &[u8]| u64::from_ne_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]]);
    let start = 0xcbf2_9ce4_8422_2325u64 ^ bytes.len() as u64;
    let mut h = [start, start ^ 1, start ^ 2, start ^ 3];
    let mut blocks = bytes.chunks_exact(32);
    for b in &mut blocks {
        for (lane, h) in h.iter_mut().enumerate() {
            *h = checksum_step(*h, word(&b[8 * lane..]));
        }
    }
    let mut words = blocks.remainder().chunks_exact(8);
    for w in &mut words {
        h[0] = checksum_step(h[0], word(w));
    }
    for &b in words.remainder() {
        h[0] = checksum_step(h[0], u64::from(b));
    }
    h[1..].iter().fold(h[0], |a, &x| checksum_step(a, x))
}

/// Why a program's buffers could not be set up.
#[derive(Debug, Clone, PartialEq)]
pub enum BufferError {
    Allocate {
        buffer: String,
        bytes: u64,
        error: String,
    },
    Init {
        buffer: String,
        error: InitError,
    },
    /// A data parameter whose blob is missing or not of the buffer's size (a validated payload
    /// has neither).
    Data {
        buffer: String,
        blob: u32,
    },
}

impl fmt::Display for BufferError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BufferError::Allocate { buffer, bytes, error } => {
                write!(f, "cannot allocate buffer `{buffer}` ({bytes} bytes): {error}")
            }
            BufferError::Init { buffer, error } => write!(f, "cannot generate buffer `{buffer}`: {error}"),
            BufferError::Data { buffer, blob } => {
                write!(f, "cannot fill parameter `{buffer}`: blob {blob} is missing or not its size")
            }
        }
    }
}

impl std::error::Error for BufferError {}

/// A guard violation, by buffer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GuardViolation {
    pub buffer: String,
    pub hit: GuardHit,
}

/// The name of the temp arena's region, in guard findings (not an IR name: it has a space).
pub const ARENA_NAME: &str = "temp arena";

/// Where one buffer's data lies: `len` bytes at `offset` in region `region`.
#[derive(Debug, Clone, Copy)]
struct Slot {
    region: usize,
    offset: usize,
    len: usize,
}

/// One buffer's data: its own region's, or its slot of the arena.
#[derive(Debug, Clone, Copy)]
pub struct Data<'b> {
    region: &'b Region,
    slot: Slot,
}

impl Data<'_> {
    /// The address of the data (64-byte aligned).
    pub fn ptr(&self) -> *mut u8 {
        // In bounds: a validated slot lies inside its region's data.
        self.region.ptr().wrapping_add(self.slot.offset)
    }

    /// Length of the data in bytes.
    pub fn len(&self) -> usize {
        self.slot.len
    }

    pub fn is_empty(&self) -> bool {
        self.slot.len == 0
    }

    /// The data. Must not be called while a kernel may write the buffer.
    pub fn bytes(&self) -> &[u8] {
        &self.region.bytes()[self.slot.offset..self.slot.offset + self.slot.len]
    }

    /// Writes `f(data)`, as [`Region::with_bytes_mut`].
    pub fn with_bytes_mut<T>(&self, f: impl FnOnce(&mut [u8]) -> T) -> T {
        let Slot { offset, len, .. } = self.slot;
        self.region.with_bytes_mut(|d| f(&mut d[offset..offset + len]))
    }

    /// A checksum of the data, as [`Region::checksum`].
    pub fn checksum(&self) -> u64 {
        checksum(self.bytes())
    }
}

/// The buffers of one program, in the manifest's order.
#[derive(Debug)]
pub struct Buffers {
    /// One per buffer outside the arena, in manifest order, then the arena's. A region may
    /// belong to another program's buffers as well ([`Buffers::allocate_beside`]).
    regions: Vec<Arc<Region>>,
    /// The name of each region (a buffer's, or [`ARENA_NAME`]).
    region_names: Vec<String>,
    /// Per buffer, where its data lies.
    slots: Vec<Slot>,
    names: Vec<String>,
    roles: Vec<Role>,
    /// Per buffer: a temp the prepare steps write.
    prepared: Vec<bool>,
    /// Per buffer: a parameter only prepare steps read, placed in the arena.
    consumed: Vec<bool>,
}

impl Buffers {
    /// One region per buffer of `manifest` outside its arena, and one for the arena (a
    /// validated manifest: every size fits in usize, every arena slot lies inside the arena).
    pub fn allocate(manifest: &Manifest, layout: RegionLayout) -> Result<Buffers, BufferError> {
        Buffers::allocate_beside(manifest, layout, None)
    }

    /// As [`Buffers::allocate`], but each seeded input and parameter that `twin` (another
    /// program's buffers, with its manifest) declares identically, for the same task and the
    /// same seeds, is `twin`'s region itself rather than a copy: both programs read one set of
    /// pages (the same physical memory, so a paired measurement of the two sees their inputs
    /// placed alike), and whatever draws one seed's values into it draws them for both. The
    /// caller binds the two programs' seeds in lockstep, so the values are always the ones both
    /// expect; neither program's kernels may write an input or parameter, so sharing changes
    /// nothing they can observe.
    pub fn allocate_beside(
        manifest: &Manifest,
        layout: RegionLayout,
        twin: Option<(&Buffers, &Manifest)>,
    ) -> Result<Buffers, BufferError> {
        let twin = twin.filter(|(_, m)| m.task == manifest.task && m.seeds == manifest.seeds);
        let shared = |b: &BufferDecl| -> Option<Arc<Region>> {
            let (bufs, m) = twin?;
            if !matches!(b.source, Some(Source::Seeded(_))) || !matches!(b.role, Role::Input | Role::Param) {
                return None;
            }
            let j = m.buffers.iter().position(|d| d == b).filter(|&j| !bufs.consumed[j])?;
            let slot = bufs.slots[j];
            let region = &bufs.regions[slot.region];
            (slot.offset == 0 && region.len == slot.len).then(|| Arc::clone(region))
        };
        let new_region = |name: &str, bytes: u64| {
            usize::try_from(bytes)
                .map_err(|_| "larger than the address space".to_string())
                .and_then(|n| Region::new(n, layout).map_err(|e| e.to_string()))
                .map_err(|error| BufferError::Allocate { buffer: name.to_string(), bytes, error })
        };
        let in_arena = |i: usize| {
            manifest
                .arena
                .as_ref()
                .and_then(|a| a.slots.iter().find(|s| s.buffer as usize == i))
                .map(|s| s.offset)
        };
        let mut regions = Vec::with_capacity(manifest.buffers.len() + 1);
        let mut region_names = Vec::with_capacity(manifest.buffers.len() + 1);
        let mut slots = Vec::with_capacity(manifest.buffers.len());
        // The arena's region comes last: its index is the count of buffers apart.
        let apart = (0..manifest.buffers.len()).filter(|&i| in_arena(i).is_none()).count();
        for (i, b) in manifest.buffers.iter().enumerate() {
            let len = b.size_bytes().unwrap_or(u64::MAX) as usize;
            match in_arena(i) {
                Some(offset) => slots.push(Slot { region: apart, offset: offset as usize, len }),
                None => {
                    slots.push(Slot { region: regions.len(), offset: 0, len });
                    let region = match shared(b) {
                        Some(r) => r,
                        None => Arc::new(new_region(&b.name, b.size_bytes().unwrap_or(u64::MAX))?),
                    };
                    regions.push(region);
                    region_names.push(b.name.clone());
                }
            }
        }
        if let Some(a) = &manifest.arena {
            regions.push(Arc::new(new_region(ARENA_NAME, a.bytes)?));
            region_names.push(ARENA_NAME.to_string());
        }
        let consumed = manifest
            .consumed_params()
            .into_iter()
            .enumerate()
            .map(|(i, c)| c && in_arena(i).is_some())
            .collect();
        Ok(Buffers {
            regions,
            region_names,
            slots,
            names: manifest.buffers.iter().map(|b| b.name.clone()).collect(),
            roles: manifest.buffers.iter().map(|b| b.role).collect(),
            prepared: manifest.prepared(),
            consumed,
        })
    }

    /// The number of buffers.
    /// The address ranges of every region (fences included): what another kernel process
    /// must not see while these buffers are in use.
    pub fn spans(&self) -> impl Iterator<Item = std::ops::Range<usize>> + '_ {
        self.regions.iter().map(|r| r.span())
    }

    pub fn len(&self) -> usize {
        self.slots.len()
    }

    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// Buffer `i`'s data.
    pub fn data(&self, i: usize) -> Data<'_> {
        let slot = self.slots[i];
        Data { region: &self.regions[slot.region], slot }
    }

    pub fn name(&self, i: usize) -> &str {
        &self.names[i]
    }

    /// Total bytes of data the regions reserve (the arena once; without guards and slack):
    /// what the memory report's buffers add up to.
    pub fn data_bytes(&self) -> u64 {
        self.regions.iter().map(|r| r.len as u64).sum()
    }

    /// Bytes mapped for all regions (data, slack, guards and fences).
    pub fn mapped_bytes(&self) -> u64 {
        self.regions.iter().map(|r| r.map.len() as u64).sum()
    }

    /// The buffer whose data holds `addr`, and where. An address in the arena's region goes to
    /// a temp whose slot holds it, else to the last slot starting before it (or the first
    /// slot), as an offset outside that temp's data.
    pub fn locate(&self, addr: usize) -> Option<(usize, Zone)> {
        let (r, zone) =
            self.regions.iter().enumerate().find_map(|(r, region)| region.locate(addr).map(|z| (r, z)))?;
        let mut in_region = self.slots.iter().enumerate().filter(|(_, s)| s.region == r);
        let at = match zone {
            Zone::Data { offset } => offset as i64,
            Zone::Outside { offset } => offset,
        };
        if self.region_names[r] != ARENA_NAME {
            return in_region.next().map(|(i, _)| (i, zone));
        }
        let slots: Vec<(usize, Slot)> = in_region.map(|(i, s)| (i, *s)).collect();
        if let Some((i, s)) =
            slots.iter().find(|(_, s)| s.offset as i64 <= at && at < (s.offset + s.len) as i64)
        {
            return Some((*i, Zone::Data { offset: (at - s.offset as i64) as usize }));
        }
        let (i, s) = slots
            .iter()
            .filter(|(_, s)| s.offset as i64 <= at)
            .max_by_key(|(_, s)| s.offset)
            .or(slots.first())?;
        Some((*i, Zone::Outside { offset: at - s.offset as i64 }))
    }

    /// Whether buffer `i` is an input or parameter.
    pub fn is_generated(&self, i: usize) -> bool {
        self.roles[i].is_generated()
    }

    /// The role of buffer `i`.
    pub fn role(&self, i: usize) -> Role {
        self.roles[i]
    }

    /// Whether buffer `i` is a temp the prepare steps write.
    pub fn is_prepared(&self, i: usize) -> bool {
        self.prepared[i]
    }

    /// Whether buffer `i` is a consumed parameter: one only prepare steps read, placed in the
    /// arena, whose bytes the execution's temps reuse.
    pub fn is_consumed(&self, i: usize) -> bool {
        self.consumed[i]
    }

    /// Whether kernels see buffer `i` read-only while they execute: an input, a parameter but
    /// a consumed one, or a prepared temp.
    pub fn is_read_only(&self, i: usize) -> bool {
        (self.is_generated(i) && !self.consumed[i]) || self.is_prepared(i)
    }

    /// What buffer `i` is, in words: its role, or `prepared temp`.
    pub fn kind(&self, i: usize) -> &'static str {
        if self.prepared[i] {
            "prepared temp"
        } else {
            self.roles[i].name()
        }
    }

    /// Checksums of every input and parameter but the consumed ones (whose bytes the execution
    /// reuses), in buffer order (`None` for the others).
    pub fn input_checksums(&self) -> Vec<Option<u64>> {
        (0..self.len())
            .map(|i| (self.roles[i].is_generated() && !self.consumed[i]).then(|| self.data(i).checksum()))
            .collect()
    }

    /// Checksums of every prepared temp, in buffer order (`None` for the others).
    pub fn prepared_checksums(&self) -> Vec<Option<u64>> {
        (0..self.len()).map(|i| self.prepared[i].then(|| self.data(i).checksum())).collect()
    }

    /// Copies every data parameter's values from its blob (`blob(index)` returns a blob's
    /// bytes: little-endian elements, as stored in the payload). Parameters must be writable.
    /// Done once per set of buffers: the values do not depend on the seed (the consumed ones
    /// are copied again at each binding, [`Buffers::bind_consumed`]).
    pub fn fill_data<'d>(
        &self,
        manifest: &Manifest,
        blob: impl Fn(u32) -> Option<&'d [u8]>,
    ) -> Result<(), BufferError> {
        for (i, b) in manifest.buffers.iter().enumerate() {
            if let Some(index) = b.data_blob().filter(|_| b.role == Role::Param) {
                self.copy_blob(i, b, index, &blob)?;
            }
        }
        Ok(())
    }

    fn copy_blob<'d>(
        &self,
        i: usize,
        b: &BufferDecl,
        index: u32,
        blob: &impl Fn(u32) -> Option<&'d [u8]>,
    ) -> Result<(), BufferError> {
        let region = self.data(i);
        let data = blob(index)
            .filter(|d| d.len() == region.len())
            .ok_or_else(|| BufferError::Data { buffer: b.name.clone(), blob: index })?;
        let element = b.dtype.size_bytes() as usize;
        region.with_bytes_mut(|dst| le_to_native(dst, data, element));
        Ok(())
    }

    /// Writes the consumed parameters `which(index)` selects: drawn for `seed` (the seed's
    /// value) with the shared generator, or copied from their blobs (`blob(index)`, as for
    /// [`Buffers::fill_data`]). The runtime binds each just before the first prepare step that
    /// names it: until then its bytes may belong to a consumed parameter an earlier prepare step
    /// read last, and after its last one to the execution's temps.
    pub fn bind_consumed<'d>(
        &self,
        manifest: &Manifest,
        seed: u64,
        which: impl Fn(usize) -> bool,
        blob: impl Fn(u32) -> Option<&'d [u8]>,
    ) -> Result<(), BufferError> {
        for (i, b) in manifest.buffers.iter().enumerate() {
            if !self.consumed[i] || !which(i) {
                continue;
            }
            match &b.source {
                Some(Source::Seeded(init)) => self.draw(manifest, i, init, seed)?,
                Some(Source::Data { blob: index, .. }) => self.copy_blob(i, b, *index, &blob)?,
                None => {}
            }
        }
        Ok(())
    }

    /// Generates every input and seeded parameter for `seed` (the seed's value, not its index)
    /// with the shared generator, keyed by `tensor_key(task, seed, name)`; data parameters are
    /// left as [`Buffers::fill_data`] wrote them. Inputs must be writable.
    pub fn generate(&self, manifest: &Manifest, seed: u64) -> Result<(), BufferError> {
        self.generate_like(manifest, seed, None)
    }

    /// As [`Buffers::generate`], copying instead of drawing again each buffer that `donor` (other
    /// buffers, with their manifest) holds for the same seed: same task, name, role, type, shape
    /// and initialiser, so the same key and the same values. The caller vouches that `donor`
    /// was generated for `seed` and that nothing wrote its inputs since (their checksums held).
    pub fn generate_like(
        &self,
        manifest: &Manifest,
        seed: u64,
        donor: Option<(&Buffers, &Manifest)>,
    ) -> Result<(), BufferError> {
        self.generate_role_like(manifest, seed, donor, Role::Param)?;
        self.generate_role_like(manifest, seed, donor, Role::Input)
    }

    /// As [`Buffers::generate_like`], for the buffers of `role` only (`Input` or `Param`): the
    /// parameters can be bound, and the prepare steps run on them, before the inputs are. The
    /// consumed parameters are left alone: they are bound step by step
    /// ([`Buffers::bind_consumed`]).
    pub fn generate_role_like(
        &self,
        manifest: &Manifest,
        seed: u64,
        donor: Option<(&Buffers, &Manifest)>,
        role: Role,
    ) -> Result<(), BufferError> {
        for (i, b) in manifest.buffers.iter().enumerate() {
            let region = self.data(i);
            let Some(Source::Seeded(init)) =
                b.source.as_ref().filter(|_| b.role == role && !self.consumed[i])
            else {
                continue;
            };
            // A donor's consumed parameter may hold the execution's temps by now.
            let twin = donor.filter(|(_, m)| m.task == manifest.task).and_then(|(bufs, m)| {
                m.buffers
                    .iter()
                    .position(|d| d == b)
                    .filter(|&j| !bufs.consumed[j])
                    .map(|j| bufs.data(j))
                    .filter(|d| d.len() == region.len())
            });
            if let Some(twin) = twin {
                // A region shared with the donor ([`Buffers::allocate_beside`]) holds the values.
                if twin.ptr() != region.ptr() {
                    region.with_bytes_mut(|dst| dst.copy_from_slice(twin.bytes()));
                }
                continue;
            }
            self.draw(manifest, i, init, seed)?;
        }
        Ok(())
    }

    /// Draws buffer `i` (initialiser `init`) for `seed` with the shared generator.
    fn draw(&self, manifest: &Manifest, i: usize, init: &Init, seed: u64) -> Result<(), BufferError> {
        let b = &manifest.buffers[i];
        let region = self.data(i);
        let key = seeded::tensor_key(&manifest.task, seed, &b.name);
        let err = |error| BufferError::Init { buffer: b.name.clone(), error };
        let shape: Vec<usize> = b
            .shape
            .iter()
            .map(|&d| usize::try_from(d).map_err(|_| err(InitError::ShapeOverflow)))
            .collect::<Result<_, _>>()?;
        let n = region.len() / b.dtype.size_bytes() as usize;
        match b.dtype {
            DType::F32 => {
                // SAFETY: the data is page-aligned (so f32-aligned), `n * 4` bytes long, and
                // not otherwise borrowed during this call.
                let v = unsafe { std::slice::from_raw_parts_mut(region.ptr().cast::<f32>(), n) };
                seeded::fill_f32(init, &shape, key, v).map_err(err)?;
                // The generator produces native values; buffers hold native values too.
            }
            DType::I32 => {
                // SAFETY: as above, for i32.
                let v = unsafe { std::slice::from_raw_parts_mut(region.ptr().cast::<i32>(), n) };
                seeded::fill_i32(init, key, v).map_err(err)?;
            }
            DType::I8 => {
                // SAFETY: as above, for i8 (one byte per element).
                let v = unsafe { std::slice::from_raw_parts_mut(region.ptr().cast::<i8>(), n) };
                seeded::fill_i8(init, key, v).map_err(err)?;
            }
            DType::F16 => {
                // SAFETY: as above, for the bits of f16 elements (two bytes each).
                let v = unsafe { std::slice::from_raw_parts_mut(region.ptr().cast::<u16>(), n) };
                seeded::fill_f16(init, &shape, key, v).map_err(err)?;
            }
        }
        Ok(())
    }

    /// Writes the poison pattern into every output and temporary but the prepared temps, which
    /// keep what the prepare steps computed.
    pub fn poison(&self, manifest: &Manifest) {
        self.poison_with(manifest, fill_pattern);
    }

    /// As [`Buffers::poison`], each buffer filled by `fill(data, word)`, which must leave `data`
    /// as [`fill_pattern`] does (the kernel process fills large buffers on all its threads).
    pub fn poison_with(&self, manifest: &Manifest, fill: impl Fn(&mut [u8], &[u8; 4])) {
        self.poison_where(manifest, |i| self.poisoned(i), fill);
    }

    /// Whether the poison covers buffer `i`: an output or a temporary, not a prepared one.
    fn poisoned(&self, i: usize) -> bool {
        !self.roles[i].is_generated() && !self.prepared[i]
    }

    /// Whether [`Buffers::place_again`] keeps buffer `i`'s values: an input, a parameter (but a
    /// consumed one, written again at each binding) or a prepared temp.
    fn kept(&self, i: usize) -> bool {
        !self.poisoned(i) && !self.consumed[i]
    }

    /// Bytes of data [`Buffers::place_again`] gives new pages (each buffer's own size; arena
    /// temps that share bytes counted apart).
    pub fn placed_bytes(&self, manifest: &Manifest) -> u64 {
        (0..manifest.buffers.len())
            .filter(|&i| self.poisoned(i) || self.kept(i))
            .map(|i| self.data(i).len() as u64)
            .sum()
    }

    /// Gives every buffer new physical pages: the whole pages inside each one's data are
    /// released (`MADV_REMOVE`, which frees the shared memory behind them; a partial page, such
    /// as the last one with the slack and its guard bytes, is kept) and written again while a
    /// scratch mapping of `scratch_pages` pages holds the pages the system freed last, so that
    /// the new ones are not the old ones handed back in order. The buffers the poison covers
    /// are poisoned; the others (inputs, parameters, prepared temps) get their values back and
    /// are read-only again, as the kernel process holds them; the arena's consumed parameters
    /// lose their values, as they do at the first execution. Where a kernel's time depends on
    /// which physical pages its buffers got (cache sets, memory banks), this draws that
    /// placement again; the paired timing does it before every batch (`docs/runtime.md`,
    /// placements). Returns whether the system released anything (`false`: it refused, as
    /// qemu-user may, and the placement stays); an error when a kept buffer's protection could
    /// not be changed (its pages are then left as they were, or writable).
    pub fn place_again(&self, manifest: &Manifest, scratch_pages: usize) -> std::io::Result<bool> {
        let page = sys::page_size();
        let released = std::cell::Cell::new(false);
        let release = |d: &mut [u8]| {
            // The whole pages inside the data (an arena temp starts on 64 bytes, not a page).
            let at = d.as_mut_ptr() as usize;
            let (start, end) = (at.next_multiple_of(page), (at + d.len()) / page * page);
            if end > start {
                // SAFETY: whole pages inside this buffer's data, a shared mapping (the address
                // is not null); their contents are written again below.
                let freed = unsafe {
                    let p = std::ptr::NonNull::new_unchecked(start as *mut std::ffi::c_void);
                    nix::sys::mman::madvise(p, end - start, nix::sys::mman::MmapAdvise::MADV_REMOVE)
                };
                released.set(released.get() | freed.is_ok());
            }
        };
        let mut kept = Vec::new();
        for i in (0..manifest.buffers.len()).filter(|&i| self.kept(i)) {
            let data = self.data(i);
            let values = data.bytes().to_vec();
            // Kept buffers are alone in their regions (never in the arena).
            let region = &self.regions[self.slots[i].region];
            region.protect_data(false)?;
            data.with_bytes_mut(release);
            kept.push((i, values));
        }
        self.poison_with(manifest, |d, _| release(d));
        // Holding the pages freed last while the buffers fault in new ones.
        let scratch = Mapping::anonymous(scratch_pages.max(1) * page).ok();
        if let Some(m) = &scratch {
            for i in (0..m.len()).step_by(page) {
                // SAFETY: inside this process's own private mapping.
                unsafe { m.as_ptr().add(i).write_volatile(1) };
            }
        }
        for (i, values) in kept {
            self.data(i).with_bytes_mut(|d| d.copy_from_slice(&values));
            self.regions[self.slots[i].region].protect_data(true)?;
        }
        self.poison(manifest);
        drop(scratch);
        Ok(released.get())
    }

    /// Writes the poison pattern into every prepared temp (before the prepare steps run; the
    /// temps must be writable).
    pub fn poison_prepared(&self, manifest: &Manifest) {
        self.poison_where(manifest, |i| self.prepared[i], fill_pattern);
    }

    fn poison_where(
        &self,
        manifest: &Manifest,
        which: impl Fn(usize) -> bool,
        fill: impl Fn(&mut [u8], &[u8; 4]),
    ) {
        for (i, b) in manifest.buffers.iter().enumerate() {
            if !which(i) {
                continue;
            }
            let region = self.data(i);
            let word = match b.dtype {
                DType::F32 => POISON_F32_BITS.to_ne_bytes(),
                DType::I32 => POISON_I32.to_ne_bytes(),
                DType::I8 => [POISON_I8 as u8; 4],
                DType::F16 => {
                    let [a, b] = POISON_F16_BITS.to_ne_bytes();
                    [a, b, a, b]
                }
            };
            region.with_bytes_mut(|d| fill(d, &word));
        }
    }

    /// Makes every input and parameter but the consumed ones (in the arena, which stays
    /// writable) read-only (`true`) or writable again (`false`).
    pub fn protect_generated(&self, read_only: bool) -> std::io::Result<()> {
        for ((role, slot), &consumed) in self.roles.iter().zip(&self.slots).zip(&self.consumed) {
            if role.is_generated() && !consumed {
                // Other inputs and parameters never live in the arena: the region is theirs alone.
                self.regions[slot.region].protect_data(read_only)?;
            }
        }
        Ok(())
    }

    /// Makes every prepared temp read-only (`true`) or writable again (`false`).
    pub fn protect_prepared(&self, read_only: bool) -> std::io::Result<()> {
        for (&prepared, slot) in self.prepared.iter().zip(&self.slots) {
            if prepared {
                // Prepared temps never live in the arena: the region is theirs alone.
                self.regions[slot.region].protect_data(read_only)?;
            }
        }
        Ok(())
    }

    /// Refills every guard zone and slack with [`GUARD_BYTE`].
    pub fn fill_guards(&self) {
        self.regions.iter().for_each(|r| r.fill_guards());
    }

    /// Every region whose guard zones or slack were written (named by its buffer, or
    /// [`ARENA_NAME`]), in region order.
    pub fn check_guards(&self) -> Vec<GuardViolation> {
        self.regions
            .iter()
            .zip(&self.region_names)
            .filter_map(|(r, n)| r.check_guards().map(|hit| GuardViolation { buffer: n.clone(), hit }))
            .collect()
    }
}

/// Copies little-endian elements of `element` bytes each (as payload blobs store them) into
/// `dst` as native values, every byte of `src`: an i8 or f16 buffer's length need not be a
/// multiple of 4, and its last element is copied like the others. `dst` and `src` have the
/// same length.
fn le_to_native(dst: &mut [u8], src: &[u8], element: usize) {
    dst.copy_from_slice(src);
    if cfg!(target_endian = "big") {
        dst.chunks_exact_mut(element).for_each(<[u8]>::reverse);
    }
}

/// Fills `d` with `word` repeated (cut short at the end, so a length not a multiple of 4, as
/// i8 and f16 buffers have, is filled to its last byte). Samples poison the outputs before
/// every timed execution, so this runs once per execution: it only stores, a cache line of the
/// pattern at a time (copying the filled prefix after itself, as it did before, also read it
/// back: 1.3 to 1.7 times slower from 1 to 128 MB on a 2-core x86_64 VM).
pub fn fill_pattern(d: &mut [u8], word: &[u8; 4]) {
    let mut line = [0u8; 64];
    for (b, w) in line.iter_mut().zip(word.iter().cycle()) {
        *b = *w;
    }
    let mut lines = d.chunks_exact_mut(line.len());
    for l in &mut lines {
        l.copy_from_slice(&line);
    }
    let rest = lines.into_remainder();
    let n = rest.len();
    rest.copy_from_slice(&line[..n]);
}

#[cfg(test)]
mod tests {
    use super::*;
    use ekb_wire::Init;

    #[test]
    fn the_pattern_fill_repeats_the_word_to_the_last_byte() {
        let word = [1u8, 2, 3, 4];
        for len in (0..=13).chain([64, 1000, 4097]) {
            let mut d = vec![0u8; len];
            fill_pattern(&mut d, &word);
            let want: Vec<u8> = word.iter().copied().cycle().take(len).collect();
            assert_eq!(d, want, "length {len}");
        }
    }

    #[test]
    fn data_is_page_aligned_and_guards_catch_writes_on_both_sides() {
        let page = sys::page_size();
        let r = Region::new(10, RegionLayout::one_page()).unwrap();
        assert_eq!(r.span().len(), 5 * page, "fence, guard, data, guard, fence");
        assert_eq!(r.ptr() as usize % page, 0);
        assert_eq!(r.ptr() as usize % BUFFER_ALIGN, 0);
        assert_eq!(r.check_guards(), None);
        // SAFETY: one byte past the end, in the slack of the data page.
        unsafe { *r.ptr().add(10) = 0 };
        assert_eq!(r.check_guards(), Some(GuardHit { offset: 10, bytes: 1 }));
        r.fill_guards();
        assert_eq!(r.check_guards(), None);
        // SAFETY: inside the leading guard page.
        unsafe { *r.ptr().sub(3) = 1 };
        unsafe { *r.ptr().sub(1) = 1 };
        assert_eq!(r.check_guards(), Some(GuardHit { offset: -3, bytes: 2 }));
        // Writing the data itself is not a guard hit.
        let r = Region::new(8, RegionLayout { guard_bytes: 0 }).unwrap();
        r.with_bytes_mut(|d| d.fill(0));
        assert_eq!(r.check_guards(), None);
    }

    #[test]
    fn addresses_are_attributed_to_data_guards_and_fences() {
        let page = sys::page_size();
        let r = Region::new(8, RegionLayout::one_page()).unwrap();
        let p = r.ptr() as usize;
        assert_eq!(r.locate(p), Some(Zone::Data { offset: 0 }));
        assert_eq!(r.locate(p + 7), Some(Zone::Data { offset: 7 }));
        assert_eq!(r.locate(p + 8), Some(Zone::Outside { offset: 8 }));
        assert_eq!(r.locate(p - 1), Some(Zone::Outside { offset: -1 }));
        // The leading fence starts two pages before the data; the trailing one ends three after.
        assert_eq!(r.locate(p - 2 * page), Some(Zone::Outside { offset: -2 * page as i64 }));
        assert_eq!(r.locate(p - 2 * page - 1), None);
        assert_eq!(r.locate(p + 3 * page - 1), Some(Zone::Outside { offset: 3 * page as i64 - 1 }));
        assert_eq!(r.locate(p + 3 * page), None);
    }

    #[test]
    fn checksums_change_with_any_byte_of_the_data() {
        // Three 32-byte blocks (every chain), a word and 3 bytes after them.
        let r = Region::new(107, RegionLayout::one_page()).unwrap();
        let before = r.checksum();
        for i in 0..107 {
            r.with_bytes_mut(|d| d[i] = 1);
            assert_ne!(r.checksum(), before, "byte {i}");
            r.with_bytes_mut(|d| d[i] = 0);
        }
        assert_eq!(r.checksum(), before);
        // The chains start apart: the same word in another chain's place is another sum.
        r.with_bytes_mut(|d| d[0] = 7);
        let first = r.checksum();
        r.with_bytes_mut(|d| (d[0], d[8]) = (0, 7));
        assert_ne!(r.checksum(), first);
        r.with_bytes_mut(|d| d[8] = 0);
        // Bytes outside the data do not count.
        // SAFETY: in the slack after the data.
        unsafe { *r.ptr().add(107) = 1 };
        assert_eq!(r.checksum(), before);
    }

    #[test]
    fn empty_buffers_have_a_valid_aligned_address() {
        let r = Region::new(0, RegionLayout { guard_bytes: 0 }).unwrap();
        assert!(!r.ptr().is_null() && r.ptr() as usize % BUFFER_ALIGN == 0);
        assert!(r.is_empty() && r.bytes().is_empty());
    }

    /// Buffers `x: f32[2]` (input), `w: f32[3]` (param, data in blob 0), `k: i32[2]` (param,
    /// seeded), `y: f32[2]` (output).
    fn data_manifest() -> Manifest {
        use ekb_wire::payload::{Backend, BufferDecl, MemoryPlan, TimingSettings, Tolerance};
        let buffer = |name: &str, dtype, n, role, source| BufferDecl {
            name: String::from(name),
            dtype,
            shape: vec![n],
            role,
            source,
        };
        Manifest {
            generator_version: 1,
            producer: String::new(),
            task: "t".into(),
            target: "host".into(),
            backend: Backend::CpuLlvm,
            kernels: vec![],
            buffers: vec![
                buffer(
                    "x",
                    DType::F32,
                    2,
                    Role::Input,
                    Some(Source::Seeded(Init::Uniform { lo: -1.0, hi: 1.0 })),
                ),
                buffer("w", DType::F32, 3, Role::Param, Some(Source::Data { blob: 0, crc32: 0 })),
                buffer(
                    "k",
                    DType::I32,
                    2,
                    Role::Param,
                    Some(Source::Seeded(Init::RandInt { lo: 0, hi: 100 })),
                ),
                buffer("y", DType::F32, 2, Role::Output, None),
            ],
            plan: vec![],
            prepare_steps: 0,
            seeds: vec![0, 1],
            tolerance: Tolerance { atol: 0.0, rtol: 0.0 },
            expected: vec![],
            timing: TimingSettings::DEFAULT,
            memory: MemoryPlan { peak_bytes: 0, stack_limit_bytes: 0, memory_limit_bytes: 1 << 20 },
            gpu: None,
            arena: None,
            repeat: 1,
        }
    }

    fn f32s(r: Data<'_>) -> Vec<f32> {
        r.bytes().chunks_exact(4).map(|c| f32::from_ne_bytes([c[0], c[1], c[2], c[3]])).collect()
    }

    #[test]
    fn data_params_hold_their_blob_for_every_seed_and_seeded_ones_change() {
        let m = data_manifest();
        let bufs = Buffers::allocate(&m, RegionLayout::one_page()).unwrap();
        let blob: Vec<u8> = [1.5f32, -2.0, 0.25].iter().flat_map(|v| v.to_le_bytes()).collect();
        bufs.fill_data(&m, |b| (b == 0).then_some(&blob[..])).unwrap();
        assert_eq!(f32s(bufs.data(1)), [1.5, -2.0, 0.25]);
        bufs.generate(&m, 0).unwrap();
        let (x0, k0) = (bufs.data(0).checksum(), bufs.data(2).checksum());
        assert_eq!(f32s(bufs.data(1)), [1.5, -2.0, 0.25], "generating leaves data alone");
        bufs.generate(&m, 1).unwrap();
        assert_eq!(f32s(bufs.data(1)), [1.5, -2.0, 0.25]);
        assert_ne!(bufs.data(0).checksum(), x0, "the input changes with the seed");
        assert_ne!(bufs.data(2).checksum(), k0, "so does the seeded parameter");
        // The input is the shared generator's, under (task, seed, name).
        let mut want = [0f32; 2];
        let key = seeded::tensor_key("t", 1, "x");
        seeded::fill_f32(&Init::Uniform { lo: -1.0, hi: 1.0 }, &[2], key, &mut want).unwrap();
        assert_eq!(f32s(bufs.data(0)), want);
        // Data parameters are checked like inputs and kept apart from the poison.
        assert_eq!(bufs.input_checksums().iter().filter(|c| c.is_some()).count(), 3);
        bufs.poison(&m);
        assert_eq!(f32s(bufs.data(1)), [1.5, -2.0, 0.25]);
        assert_eq!(bufs.data(3).bytes()[..4], POISON_F32_BITS.to_ne_bytes());
    }

    #[test]
    fn a_donor_gives_its_identical_buffers_and_only_those() {
        let m = data_manifest();
        let donor = Buffers::allocate(&m, RegionLayout::one_page()).unwrap();
        donor.generate(&m, 7).unwrap();
        // Another program of the same task whose seeded parameter is drawn differently.
        let mut other = m.clone();
        let k = other.buffers.iter().position(|b| b.name == "k").unwrap();
        other.buffers[k].source = Some(Source::Seeded(Init::RandInt { lo: 0, hi: 50 }));
        let bufs = Buffers::allocate(&other, RegionLayout::one_page()).unwrap();
        let fresh = Buffers::allocate(&other, RegionLayout::one_page()).unwrap();
        fresh.generate(&other, 7).unwrap();
        // The donor's input holds values its key would not give: only a copy can carry them.
        donor.data(0).with_bytes_mut(|d| d.fill(0x11));
        bufs.generate_like(&other, 7, Some((&donor, &m))).unwrap();
        assert_eq!(bufs.data(0).bytes(), donor.data(0).bytes(), "the same input is copied");
        assert_eq!(bufs.data(k).bytes(), fresh.data(k).bytes(), "a differently drawn one is drawn");
        assert_ne!(bufs.data(k).bytes(), donor.data(k).bytes());
        // Another task's buffers are never copied, even with the same declarations.
        let mut stranger = m.clone();
        stranger.task = "u".into();
        bufs.generate_like(&other, 7, Some((&donor, &stranger))).unwrap();
        assert_eq!(bufs.data(0).bytes(), fresh.data(0).bytes());
    }

    #[test]
    fn a_twin_shares_the_regions_of_its_alike_seeded_buffers_and_only_those() {
        let m = data_manifest();
        let twin = Buffers::allocate(&m, RegionLayout::one_page()).unwrap();
        // The same task and seeds; the seeded parameter `k` drawn differently.
        let mut other = m.clone();
        let k = other.buffers.iter().position(|b| b.name == "k").unwrap();
        other.buffers[k].source = Some(Source::Seeded(Init::RandInt { lo: 0, hi: 50 }));
        let bufs = Buffers::allocate_beside(&other, RegionLayout::one_page(), Some((&twin, &m))).unwrap();
        assert_eq!(bufs.data(0).ptr(), twin.data(0).ptr(), "the seeded input is one region");
        assert_ne!(bufs.data(1).ptr(), twin.data(1).ptr(), "a data parameter is not (its blob may differ)");
        assert_ne!(bufs.data(k).ptr(), twin.data(k).ptr(), "nor a parameter drawn differently");
        assert_ne!(bufs.data(3).ptr(), twin.data(3).ptr(), "nor an output");
        // Drawn by the twin, the input holds the values for both; a donor that is the same
        // region is left as it is (not copied onto itself), and the values are the seed's.
        twin.generate(&m, 7).unwrap();
        bufs.generate_like(&other, 7, Some((&twin, &m))).unwrap();
        let fresh = Buffers::allocate(&m, RegionLayout::one_page()).unwrap();
        fresh.generate(&m, 7).unwrap();
        assert_eq!(bufs.data(0).bytes(), fresh.data(0).bytes());
        // The region outlives the buffers that made it.
        drop(twin);
        assert_eq!(bufs.data(0).bytes(), fresh.data(0).bytes());
        bufs.protect_generated(true).unwrap();
        bufs.protect_generated(false).unwrap();
        // Another task or other seeds share nothing.
        for change in [|m: &mut Manifest| m.task = "u".into(), |m: &mut Manifest| m.seeds[0] += 1] {
            let mut stranger = m.clone();
            change(&mut stranger);
            let alone =
                Buffers::allocate_beside(&m, RegionLayout::one_page(), Some((&bufs, &stranger))).unwrap();
            assert_ne!(alone.data(0).ptr(), bufs.data(0).ptr());
        }
    }

    #[test]
    fn arena_temps_are_slices_of_one_region_and_faults_are_attributed_to_them() {
        use ekb_wire::payload::{Arena, ArenaSlot};
        // Temps `t0` (f32[2], 8 bytes) at 0 and `t1` (f32[4], 16 bytes) at 64 in an arena of 80.
        let mut m = data_manifest();
        for (name, n) in [("t0", 2), ("t1", 4)] {
            m.buffers.push(ekb_wire::payload::BufferDecl {
                name: name.into(),
                dtype: DType::F32,
                shape: vec![n],
                role: Role::Temp,
                source: None,
            });
        }
        m.arena = Some(Arena {
            bytes: 80,
            slots: vec![ArenaSlot { buffer: 4, offset: 0 }, ArenaSlot { buffer: 5, offset: 64 }],
        });
        let bufs = Buffers::allocate(&m, RegionLayout::one_page()).unwrap();
        assert_eq!(bufs.len(), 6);
        assert_eq!(bufs.data_bytes(), 8 + 12 + 8 + 8 + 80, "four buffers apart, the arena once");
        let (t0, t1) = (bufs.data(4), bufs.data(5));
        assert_eq!((t0.len(), t1.len()), (8, 16));
        assert_eq!(t1.ptr() as usize - t0.ptr() as usize, 64);
        assert_eq!(t0.ptr() as usize % BUFFER_ALIGN, 0);
        // Poison reaches every temp's slot, and nothing else of the arena.
        bufs.poison(&m);
        assert_eq!(f32s(t1).iter().map(|v| v.to_bits()).collect::<Vec<_>>(), [POISON_F32_BITS; 4]);
        assert_eq!(bufs.check_guards(), vec![], "the slack between slots is not a guard");
        // Addresses: in a slot, between slots, before the arena.
        let p = t0.ptr() as usize;
        assert_eq!(bufs.locate(p + 4), Some((4, Zone::Data { offset: 4 })));
        assert_eq!(bufs.locate(p + 66), Some((5, Zone::Data { offset: 2 })));
        assert_eq!(bufs.locate(p + 20), Some((4, Zone::Outside { offset: 20 })));
        assert_eq!(bufs.locate(p - 1), Some((4, Zone::Outside { offset: -1 })));
        // A write past the arena's end is the arena's guard hit.
        // SAFETY: in the slack after the arena's data.
        unsafe { *t1.ptr().add(16) = 0 };
        assert_eq!(
            bufs.check_guards(),
            vec![GuardViolation { buffer: ARENA_NAME.into(), hit: GuardHit { offset: 80, bytes: 1 } }]
        );
    }

    #[test]
    fn placing_again_gives_every_buffer_new_pages_keeping_the_inputs_and_poisoning_the_outputs() {
        // `w` and `y` of 3000 f32: two whole pages and part of a third (with the slack's guard
        // bytes).
        let mut m = data_manifest();
        m.buffers[1].shape = vec![3000];
        m.buffers[3].shape = vec![3000];
        let bufs = Buffers::allocate(&m, RegionLayout::one_page()).unwrap();
        bufs.data(1).with_bytes_mut(|d| d.iter_mut().enumerate().for_each(|(i, b)| *b = i as u8));
        bufs.data(3).with_bytes_mut(|d| d.fill(7));
        let before: Vec<u64> = [0, 1, 2].iter().map(|&i| bufs.data(i).checksum()).collect();
        assert_eq!(bufs.placed_bytes(&m), 8 + 12_000 + 8 + 12_000);
        // As the kernel process holds them: the inputs and parameters read-only.
        bufs.protect_generated(true).unwrap();
        assert!(bufs.place_again(&m, 3).unwrap(), "shared memory gives its pages up");
        let y = f32s(bufs.data(3));
        assert!(y.iter().all(|v| v.to_bits() == POISON_F32_BITS), "every page poisoned again");
        assert_eq!(bufs.check_guards(), vec![], "the partial last pages and their guard bytes kept");
        let after: Vec<u64> = [0, 1, 2].iter().map(|&i| bufs.data(i).checksum()).collect();
        assert_eq!(before, after, "inputs and parameters keep their values");
        bufs.protect_generated(false).unwrap();
    }

    #[test]
    fn the_poison_before_each_execution_passes_prepared_temps_over() {
        use ekb_wire::payload::{Access, KernelDecl, Launch, LaunchStep, ParamDecl};
        // A prepare step `pack(w) -> p` (`p`: buffer 4, a temp of 3 f32) before the execution
        // step `run(x) -> y`.
        let mut m = data_manifest();
        m.buffers.push(ekb_wire::payload::BufferDecl {
            name: "p".into(),
            dtype: DType::F32,
            shape: vec![3],
            role: Role::Temp,
            source: None,
        });
        let param = |name: &str, n, access| ParamDecl {
            name: name.into(),
            dtype: DType::F32,
            shape: vec![n],
            access,
        };
        let kernel = |name: &str, params| KernelDecl {
            name: name.into(),
            symbol: name.into(),
            blob: 1,
            params,
            launch: Launch::Cpu,
            allocs: vec![],
        };
        m.kernels = vec![
            kernel("pack", vec![param("w", 3, Access::In), param("p", 3, Access::Out)]),
            kernel("run", vec![param("x", 2, Access::In), param("y", 2, Access::Out)]),
        ];
        m.plan = vec![LaunchStep { kernel: 0, args: vec![1, 4] }, LaunchStep { kernel: 1, args: vec![0, 3] }];
        m.prepare_steps = 1;
        let bufs = Buffers::allocate(&m, RegionLayout::one_page()).unwrap();
        assert!(bufs.is_prepared(4) && bufs.is_read_only(4) && !bufs.is_prepared(3));
        assert_eq!((bufs.kind(4), bufs.kind(3)), ("prepared temp", "output"));
        bufs.data(4).with_bytes_mut(|d| d.fill(1));
        bufs.poison(&m);
        assert_eq!(bufs.data(4).bytes(), [1; 12], "prepared values kept");
        assert_eq!(bufs.data(3).bytes()[..4], POISON_F32_BITS.to_ne_bytes());
        assert_eq!(bufs.prepared_checksums().iter().flatten().count(), 1);
        bufs.poison_prepared(&m);
        assert_eq!(f32s(bufs.data(4)).iter().map(|v| v.to_bits()).collect::<Vec<_>>(), [POISON_F32_BITS; 3]);
        // Read-only like an input, and writable again for the next binding.
        bufs.protect_prepared(true).unwrap();
        assert_eq!(bufs.data(4).bytes()[..4], POISON_F32_BITS.to_ne_bytes(), "still readable");
        bufs.protect_prepared(false).unwrap();
        bufs.data(4).with_bytes_mut(|d| d[0] = 7);
        assert_eq!(bufs.data(4).bytes()[0], 7);
    }

    #[test]
    fn a_parameter_only_prepare_steps_read_lives_in_the_arena_under_the_execution_temps() {
        use ekb_wire::payload::{Access, Arena, ArenaSlot, KernelDecl, Launch, LaunchStep, ParamDecl};
        // `pack(w, k) -> p` prepares; the execution `run(p) -> t` writes temp `t` (buffer 5)
        // over the bytes of the data parameter `w` (buffer 1), spent by then; the seeded `k`
        // (buffer 2) is consumed too.
        let mut m = data_manifest();
        let decl = |name: &str, role| ekb_wire::payload::BufferDecl {
            name: name.into(),
            dtype: DType::F32,
            shape: vec![3],
            role,
            source: None,
        };
        m.buffers.push(decl("p", Role::Temp));
        m.buffers.push(decl("t", Role::Temp));
        let param =
            |name: &str, access| ParamDecl { name: name.into(), dtype: DType::F32, shape: vec![3], access };
        let kernel = |name: &str, params| KernelDecl {
            name: name.into(),
            symbol: name.into(),
            blob: 1,
            params,
            launch: Launch::Cpu,
            allocs: vec![],
        };
        m.kernels = vec![
            kernel("pack", vec![param("w", Access::In), param("k", Access::In), param("p", Access::Out)]),
            kernel("run", vec![param("a", Access::In), param("b", Access::Out)]),
        ];
        m.plan =
            vec![LaunchStep { kernel: 0, args: vec![1, 2, 4] }, LaunchStep { kernel: 1, args: vec![4, 5] }];
        m.prepare_steps = 1;
        let slot = |buffer, offset| ArenaSlot { buffer, offset };
        m.arena = Some(Arena { bytes: 72, slots: vec![slot(1, 0), slot(2, 64), slot(5, 0)] });
        let bufs = Buffers::allocate(&m, RegionLayout::one_page()).unwrap();
        assert!(bufs.is_consumed(1) && bufs.is_consumed(2) && !bufs.is_consumed(0) && !bufs.is_read_only(1));
        assert_eq!(bufs.data(1).ptr(), bufs.data(5).ptr(), "one slot of the arena");
        let blob: Vec<u8> = [1.0f32, 2.0, 3.0].iter().flat_map(|v| v.to_le_bytes()).collect();
        // Generating the parameters leaves the consumed ones alone; binding writes them.
        bufs.data(2).with_bytes_mut(|d| d.fill(0));
        bufs.generate(&m, 0).unwrap();
        assert_eq!(bufs.data(2).bytes(), [0; 8]);
        bufs.bind_consumed(&m, 0, |i| i == 2, |_| Some(&blob[..])).unwrap();
        assert_ne!(bufs.data(2).bytes(), [0; 8], "`k` drawn");
        let sums = bufs.input_checksums();
        assert!(sums[0].is_some() && sums[1].is_none() && sums[2].is_none(), "{sums:?}");
        // The execution's poison takes the bytes; the next binding writes them again.
        bufs.poison(&m);
        assert_eq!(f32s(bufs.data(1)).iter().map(|v| v.to_bits()).collect::<Vec<_>>(), [POISON_F32_BITS; 3]);
        bufs.bind_consumed(&m, 0, |i| i == 1, |_| Some(&blob[..])).unwrap();
        assert_eq!(f32s(bufs.data(1)), [1.0, 2.0, 3.0]);
        // The arena stays writable when the inputs and other parameters are protected.
        bufs.protect_generated(true).unwrap();
        bufs.data(5).with_bytes_mut(|d| d[0] = 9);
        bufs.protect_generated(false).unwrap();
        // A second program's buffers never take a consumed parameter's values from these (they
        // may hold the execution's temps): drawn again when bound, where an input is copied.
        let drawn = bufs.data(2).bytes().to_vec();
        bufs.data(2).with_bytes_mut(|d| d.fill(0xab));
        bufs.data(0).with_bytes_mut(|d| d.fill(0));
        let other = Buffers::allocate_beside(&m, RegionLayout::one_page(), Some((&bufs, &m))).unwrap();
        assert_ne!(other.data(2).ptr(), bufs.data(2).ptr());
        other.generate_like(&m, 0, Some((&bufs, &m))).unwrap();
        other.bind_consumed(&m, 0, |_| true, |_| Some(&blob[..])).unwrap();
        assert_eq!(other.data(2).bytes(), drawn, "drawn, not copied from the donor's arena");
        assert_eq!(other.data(0).bytes(), [0; 8], "the input copied from the donor");
    }

    #[test]
    fn a_missing_or_short_data_blob_is_an_error() {
        let m = data_manifest();
        let bufs = Buffers::allocate(&m, RegionLayout::one_page()).unwrap();
        let short = [0u8; 8];
        let want = BufferError::Data { buffer: "w".into(), blob: 0 };
        assert_eq!(bufs.fill_data(&m, |_| Some(&short[..])), Err(want.clone()));
        assert_eq!(bufs.fill_data(&m, |_| None), Err(want.clone()));
        assert_eq!(want.to_string(), "cannot fill parameter `w`: blob 0 is missing or not its size");
    }

    #[test]
    fn read_only_data_can_be_made_writable_again() {
        let r = Region::new(16, RegionLayout::one_page()).unwrap();
        r.protect_data(true).unwrap();
        assert_eq!(r.bytes()[0], 0, "still readable");
        r.protect_data(false).unwrap();
        r.with_bytes_mut(|d| d[0] = 7);
        assert_eq!(r.bytes()[0], 7);
    }
}
