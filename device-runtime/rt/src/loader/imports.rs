//! The runtime's fixed import table: the only symbols a kernel object may leave undefined, and
//! the functions they resolve to.
//!
//! What it must keep true: [`IMPORTS`] is exactly the kernel ABI's table (`docs/abi.md`, the
//! same list and order as the CPU adapter's), and every entry resolves to a function of this
//! runtime with the C prototype the ABI gives. The math functions are the `libm` crate's (a
//! port of musl's libm), so a kernel computes the same results whether this runtime is linked
//! against glibc (native tests) or musl (the static board binary). `memset` and `memmove` are
//! the C library's, `memcpy` this runtime's (copy.rs: fast for short copies, the C library's
//! beyond): their results are defined bit for bit by C, whichever code provides them. No
//! function here unwinds: a panic inside an `extern "C"` function aborts.

use crate::pool;

/// Every symbol a kernel object may reference without defining it, in the ABI's order.
pub const IMPORTS: &[&str] = &[
    "ekb_parallel_for",
    "memset",
    "memcpy",
    "memmove",
    "expf",
    "logf",
    "powf",
    "tanhf",
    "erff",
    "sqrtf",
    "fabsf",
    "floorf",
    "ceilf",
    "exp2f",
    "ldexpf",
    "sinf",
    "cosf",
];

/// The position of `name` in [`IMPORTS`].
pub fn index_of(name: &[u8]) -> Option<usize> {
    IMPORTS.iter().position(|i| i.as_bytes() == name)
}

extern "C" fn expf(x: f32) -> f32 {
    libm::expf(x)
}
extern "C" fn logf(x: f32) -> f32 {
    libm::logf(x)
}
extern "C" fn powf(x: f32, y: f32) -> f32 {
    libm::powf(x, y)
}
extern "C" fn tanhf(x: f32) -> f32 {
    libm::tanhf(x)
}
extern "C" fn erff(x: f32) -> f32 {
    libm::erff(x)
}
extern "C" fn sqrtf(x: f32) -> f32 {
    libm::sqrtf(x)
}
extern "C" fn fabsf(x: f32) -> f32 {
    libm::fabsf(x)
}
extern "C" fn floorf(x: f32) -> f32 {
    libm::floorf(x)
}
extern "C" fn ceilf(x: f32) -> f32 {
    libm::ceilf(x)
}
extern "C" fn exp2f(x: f32) -> f32 {
    libm::exp2f(x)
}
extern "C" fn ldexpf(x: f32, n: i32) -> f32 {
    libm::ldexpf(x, n)
}
extern "C" fn sinf(x: f32) -> f32 {
    libm::sinf(x)
}
extern "C" fn cosf(x: f32) -> f32 {
    libm::cosf(x)
}

/// The address of import `index` (an index into [`IMPORTS`]).
pub fn address(index: usize) -> Option<u64> {
    type Unary = extern "C" fn(f32) -> f32;
    type Binary = extern "C" fn(f32, f32) -> f32;
    type Ldexp = extern "C" fn(f32, i32) -> f32;
    type ParallelFor = unsafe extern "C" fn(Option<pool::ChunkFn>, *mut core::ffi::c_void, i64);
    type MemSet = unsafe extern "C" fn(*mut libc::c_void, libc::c_int, libc::size_t) -> *mut libc::c_void;
    type MemCopy =
        unsafe extern "C" fn(*mut libc::c_void, *const libc::c_void, libc::size_t) -> *mut libc::c_void;
    let p: *const () = match *IMPORTS.get(index)? {
        "ekb_parallel_for" => pool::ekb_parallel_for as ParallelFor as *const (),
        "memset" => libc::memset as MemSet as *const (),
        "memcpy" => super::copy::memcpy as MemCopy as *const (),
        "memmove" => libc::memmove as MemCopy as *const (),
        "expf" => expf as Unary as *const (),
        "logf" => logf as Unary as *const (),
        "powf" => powf as Binary as *const (),
        "tanhf" => tanhf as Unary as *const (),
        "erff" => erff as Unary as *const (),
        "sqrtf" => sqrtf as Unary as *const (),
        "fabsf" => fabsf as Unary as *const (),
        "floorf" => floorf as Unary as *const (),
        "ceilf" => ceilf as Unary as *const (),
        "exp2f" => exp2f as Unary as *const (),
        "ldexpf" => ldexpf as Ldexp as *const (),
        "sinf" => sinf as Unary as *const (),
        "cosf" => cosf as Unary as *const (),
        _ => return None,
    };
    Some(p as usize as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_import_resolves_and_the_math_functions_are_distinct() {
        let mut math = std::collections::HashSet::new();
        for (i, name) in IMPORTS.iter().enumerate() {
            let a = address(i).unwrap_or_else(|| panic!("`{name}` has no address"));
            assert_ne!(a, 0, "`{name}`");
            // The C library may implement memcpy as memmove (a valid memcpy); the math
            // functions are this module's own and must not be confused.
            assert!(i < 4 || math.insert(a), "`{name}`");
            assert_eq!(index_of(name.as_bytes()), Some(i));
        }
        assert_eq!(address(IMPORTS.len()), None);
        assert_eq!(index_of(b"printf"), None);
    }

    /// Import `name` as a function pointer of type `F`.
    ///
    /// # Safety
    /// `F` must be a function pointer type with the import's C prototype.
    unsafe fn import<F>(name: &str) -> F {
        assert_eq!(std::mem::size_of::<F>(), std::mem::size_of::<usize>());
        let a = address(index_of(name.as_bytes()).unwrap()).unwrap() as usize;
        // SAFETY: a function address, reinterpreted as the caller's function pointer type.
        unsafe { std::mem::transmute_copy::<usize, F>(&a) }
    }

    #[test]
    fn mem_imports_follow_their_c_contracts() {
        type MemCopy = unsafe extern "C" fn(*mut u8, *const u8, usize) -> *mut u8;
        type MemSet = unsafe extern "C" fn(*mut u8, i32, usize) -> *mut u8;
        // SAFETY: the C prototypes of memset, memcpy and memmove.
        let (memset, memcpy, memmove) = unsafe {
            (import::<MemSet>("memset"), import::<MemCopy>("memcpy"), import::<MemCopy>("memmove"))
        };
        let mut b = [0u8; 8];
        // SAFETY: all ranges lie inside `b`; only memmove gets overlapping ranges.
        unsafe {
            memset(b.as_mut_ptr(), 7, 4);
            assert_eq!(b, [7, 7, 7, 7, 0, 0, 0, 0]);
            memcpy(b.as_mut_ptr().add(4), [1u8, 2, 3, 4].as_ptr(), 4);
            assert_eq!(b, [7, 7, 7, 7, 1, 2, 3, 4]);
            memmove(b.as_mut_ptr().add(1), b.as_ptr(), 7);
            assert_eq!(b, [7, 7, 7, 7, 7, 1, 2, 3]);
        }
    }

    #[test]
    fn math_imports_compute_through_their_c_prototypes() {
        // SAFETY: the unary math imports have the prototype float f(float).
        let call1 = |name: &str, x: f32| unsafe { import::<extern "C" fn(f32) -> f32>(name) }(x);
        assert_eq!(call1("expf", 0.0), 1.0);
        assert_eq!(call1("logf", 1.0), 0.0);
        assert_eq!(call1("sqrtf", 9.0), 3.0);
        assert_eq!(call1("fabsf", -2.5), 2.5);
        assert_eq!(call1("floorf", -1.5), -2.0);
        assert_eq!(call1("ceilf", -1.5), -1.0);
        assert_eq!(call1("exp2f", 10.0), 1024.0);
        assert_eq!(call1("tanhf", 0.0), 0.0);
        assert_eq!(call1("erff", 0.0), 0.0);
        assert_eq!(call1("sinf", 0.0), 0.0);
        assert_eq!(call1("cosf", 0.0), 1.0);
        assert!((call1("sinf", std::f32::consts::FRAC_PI_2) - 1.0).abs() <= f32::EPSILON);
        assert!((call1("cosf", std::f32::consts::PI) + 1.0).abs() <= f32::EPSILON);
        assert!((call1("expf", 1.0) - std::f32::consts::E).abs() <= f32::EPSILON * 4.0);
        // SAFETY: powf is float(float, float), ldexpf is float(float, int).
        let powf = unsafe { import::<extern "C" fn(f32, f32) -> f32>("powf") };
        assert_eq!(powf(3.0, 2.0), 9.0);
        assert!((powf(2.0, 0.5) - std::f32::consts::SQRT_2).abs() <= f32::EPSILON);
        let ldexpf = unsafe { import::<extern "C" fn(f32, i32) -> f32>("ldexpf") };
        assert_eq!(ldexpf(1.5, 3), 12.0);
    }
}
