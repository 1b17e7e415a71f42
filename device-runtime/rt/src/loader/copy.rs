//! The `memcpy` kernels import: the C contract, fast for the short copies kernels make.
//!
//! Kernels copy rows of a few hundred bytes (a convolution's zero-padded input rows and planes,
//! concatenations of narrow tensors): LLVM turns such loops into `memcpy` calls. musl's x86_64
//! `memcpy` (the static board binary's C library) aligns the destination a byte at a time and
//! then runs `rep movsq`, slow at these lengths: MobileNetV2's first depthwise convolution,
//! which copies its 112-wide planes row by row, took 225 us in the graph with musl's and 114 us
//! with glibc's on a 2-core AVX-512 VM. On x86_64 this module copies up to [`SHORT`] bytes with
//! 16-byte unaligned moves (SSE2, present on every x86_64), the last ones overlapping the end,
//! and hands longer copies to the C library (whose string instructions are fast there). Other
//! architectures take the C library's (musl's aarch64 `memcpy` is already a vector routine).
//!
//! What it must keep true: the C contract, bit for bit: `n` bytes from `src` to `dst`, ranges
//! that do not overlap, `dst` returned; no byte outside `dst..dst + n` written and none outside
//! `src..src + n` read. The moves are written in assembly so that the compiler cannot turn the
//! loop back into a `memcpy` call.

use core::ffi::c_void;

/// The longest copy done here; longer ones go to the C library.
#[cfg(target_arch = "x86_64")]
pub const SHORT: usize = 4096;

/// `memcpy(dst, src, n)` for kernels.
///
/// # Safety
/// The C contract: `src..src + n` readable, `dst..dst + n` writable, the two not overlapping.
pub unsafe extern "C" fn memcpy(dst: *mut c_void, src: *const c_void, n: usize) -> *mut c_void {
    #[cfg(target_arch = "x86_64")]
    if n <= SHORT {
        // SAFETY: the caller's contract, which `short` takes over unchanged.
        unsafe { short(dst.cast(), src.cast(), n) };
        return dst;
    }
    // SAFETY: the caller's contract is the C library's.
    unsafe { libc::memcpy(dst, src, n) }
}

/// Copies `n <= SHORT` bytes: up to 16 with two overlapping scalar moves, up to 32 with two
/// overlapping 16-byte moves, more with a loop of 32-byte moves and the last 32 bytes of the
/// range (overlapping what the loop copied, which the non-overlapping ranges allow).
///
/// # Safety
/// As [`memcpy`].
#[cfg(target_arch = "x86_64")]
unsafe fn short(dst: *mut u8, src: *const u8, n: usize) {
    use core::ptr::{read_unaligned as rd, write_unaligned as wr};
    // SAFETY (every arm): the reads lie inside `src..src + n` and the writes inside
    // `dst..dst + n`, the first move at offset 0 and the second ending at `n`.
    unsafe {
        match n {
            0 => {}
            1 => *dst = *src,
            2..=3 => {
                let (a, b) = (rd(src.cast::<u16>()), rd(src.add(n - 2).cast::<u16>()));
                wr(dst.cast::<u16>(), a);
                wr(dst.add(n - 2).cast::<u16>(), b);
            }
            4..=7 => {
                let (a, b) = (rd(src.cast::<u32>()), rd(src.add(n - 4).cast::<u32>()));
                wr(dst.cast::<u32>(), a);
                wr(dst.add(n - 4).cast::<u32>(), b);
            }
            8..=16 => {
                let (a, b) = (rd(src.cast::<u64>()), rd(src.add(n - 8).cast::<u64>()));
                wr(dst.cast::<u64>(), a);
                wr(dst.add(n - 8).cast::<u64>(), b);
            }
            17..=32 => core::arch::asm!(
                "movdqu {a}, [{s}]",
                "movdqu {b}, [{s} + {n} - 16]",
                "movdqu [{d}], {a}",
                "movdqu [{d} + {n} - 16], {b}",
                s = in(reg) src, d = in(reg) dst, n = in(reg) n,
                a = out(xmm_reg) _, b = out(xmm_reg) _,
                options(nostack, preserves_flags),
            ),
            _ => core::arch::asm!(
                // The last 32 bytes first (the loop below moves the pointers).
                "movdqu {a}, [{s} + {n} - 32]",
                "movdqu {b}, [{s} + {n} - 16]",
                "movdqu [{d} + {n} - 32], {a}",
                "movdqu [{d} + {n} - 16], {b}",
                // Then 32 bytes at a time while more than 32 remain.
                "2:",
                "movdqu {a}, [{s}]",
                "movdqu {b}, [{s} + 16]",
                "movdqu [{d}], {a}",
                "movdqu [{d} + 16], {b}",
                "add {s}, 32",
                "add {d}, 32",
                "sub {n}, 32",
                "cmp {n}, 32",
                "ja 2b",
                s = inout(reg) src => _, d = inout(reg) dst => _, n = inout(reg) n => _,
                a = out(xmm_reg) _, b = out(xmm_reg) _,
                options(nostack),
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::memcpy;

    #[test]
    fn every_length_and_alignment_copies_exactly_its_range() {
        // Every short length, and around the longest copy done here on x86_64.
        const SHORT: usize = 4096;
        let src: Vec<u8> = (0..2 * SHORT + 300).map(|i| (i * 7 + 3) as u8).collect();
        let lengths = (0..=300).chain([SHORT - 1, SHORT, SHORT + 1, 2 * SHORT]);
        for n in lengths {
            for (s_off, d_off) in [(0, 0), (1, 3), (4, 0), (7, 13), (16, 5)] {
                let mut dst = vec![0xAAu8; n + 64];
                // SAFETY: both ranges lie inside their vectors, which do not overlap.
                let r =
                    unsafe { memcpy(dst.as_mut_ptr().add(d_off).cast(), src.as_ptr().add(s_off).cast(), n) };
                assert_eq!(r, dst.as_mut_ptr().wrapping_add(d_off).cast());
                assert!(dst[..d_off].iter().all(|&b| b == 0xAA), "n {n}: a byte before the range");
                assert_eq!(&dst[d_off..d_off + n], &src[s_off..s_off + n], "n {n} at {s_off}/{d_off}");
                assert!(dst[d_off + n..].iter().all(|&b| b == 0xAA), "n {n}: a byte after the range");
            }
        }
    }
}
