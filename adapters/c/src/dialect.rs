//! The two C dialects as a table: everything that differs between CUDA C and OpenCL C, and
//! nothing else. The tree walk in `emit` asks this table for each spelling; adding a dialect is a
//! new arm in each `match` here (the compiler lists the ones missing), not a new walk.
//!
//! What this table must keep true: each entry gives exactly L1's semantics in its dialect (for
//! instance `i32(x)` of an f32 truncates toward zero, saturates and maps NaN to 0: CUDA's
//! `__float2int_rz` and OpenCL's `convert_int_sat` do; a plain C cast does not), and the barrier
//! makes both shared and global memory writes visible to the block, as L1's `barrier` promises.

use ekb_ir::l1::{Intrinsic, Ty};
use ekb_ir::target::GpuApi;
use ekb_ir::DType;

/// A C-family GPU language.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dialect {
    /// CUDA C++ as NVRTC and nvcc compile it.
    Cuda,
    /// OpenCL C 1.2 and later.
    OpenCl,
}

impl Dialect {
    pub const ALL: [Dialect; 2] = [Dialect::Cuda, Dialect::OpenCl];

    pub fn name(self) -> &'static str {
        match self {
            Dialect::Cuda => "CUDA C",
            Dialect::OpenCl => "OpenCL C",
        }
    }

    /// The dialect of a target's GPU API.
    pub fn of(api: GpuApi) -> Dialect {
        match api {
            GpuApi::Cuda => Dialect::Cuda,
            GpuApi::Opencl => Dialect::OpenCl,
        }
    }

    /// What comes before `void NAME(...)`, given the block size (x, y, z).
    pub fn kernel_qualifier(self, block: [u32; 3]) -> String {
        let threads: u64 = block.iter().map(|&b| u64::from(b)).product();
        match self {
            Dialect::Cuda => format!("extern \"C\" __global__ void __launch_bounds__({threads})"),
            Dialect::OpenCl => format!(
                "__kernel __attribute__((reqd_work_group_size({}, {}, {}))) void",
                block[0], block[1], block[2]
            ),
        }
    }

    /// The address space of a kernel's buffer parameters, with its trailing space.
    pub fn global_space(self) -> &'static str {
        match self {
            Dialect::Cuda => "",
            Dialect::OpenCl => "__global ",
        }
    }

    /// The no-alias qualifier of buffer parameters (the plan never passes a written buffer
    /// twice).
    pub fn restrict(self) -> &'static str {
        match self {
            Dialect::Cuda => "__restrict__",
            Dialect::OpenCl => "restrict",
        }
    }

    /// The declaration of a block-shared array of `n` elements of C type `elem`, aligned to 16
    /// bytes (so that vector loads may read it at any offset of a multiple of 4 elements).
    pub fn shared_array(self, elem: &str, c: &str, n: usize) -> String {
        match self {
            Dialect::Cuda => format!("__shared__ __align__(16) {elem} {c}[{n}];"),
            Dialect::OpenCl => format!("__local {elem} {c}[{n}] __attribute__((aligned(16)));"),
        }
    }

    /// The block barrier statement, ordering shared and global memory.
    pub fn barrier(self) -> &'static str {
        match self {
            Dialect::Cuda => "__syncthreads();",
            Dialect::OpenCl => "barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);",
        }
    }

    /// The block index along axis 0 (x), 1 (y) or 2 (z), as an `int`.
    pub fn block_index(self, axis: usize) -> String {
        match self {
            Dialect::Cuda => format!("(int)blockIdx.{}", xyz(axis)),
            Dialect::OpenCl => format!("(int)get_group_id({axis})"),
        }
    }

    /// The thread index inside its block along an axis, as an `int`.
    pub fn thread_index(self, axis: usize) -> String {
        match self {
            Dialect::Cuda => format!("(int)threadIdx.{}", xyz(axis)),
            Dialect::OpenCl => format!("(int)get_local_id({axis})"),
        }
    }

    /// The C type of an L1 scalar type.
    pub fn ty(self, t: Ty) -> &'static str {
        // The same in both dialects (OpenCL C has `bool` built in).
        match t {
            Ty::F32 => "float",
            Ty::I32 => "int",
            Ty::Bool => "bool",
        }
    }

    /// The C type of a buffer element: an i8 element is a `signed char`, which C promotes to
    /// `int` when it is read (so a load widens with its sign). An f16 element is OpenCL's
    /// `half` (read and written only through `vload_half`/`vstore_half_rte`, which core OpenCL
    /// has without `cl_khr_fp16`) and, in CUDA, an `unsigned short` holding its bits, converted
    /// by [`CUDA_HALF_HELPERS`] (PTX `cvt`, so no `cuda_fp16.h` is needed).
    pub fn elem(self, d: DType) -> &'static str {
        match (self, d) {
            (_, DType::I8) => "signed char",
            (Dialect::OpenCl, DType::F16) => "half",
            (Dialect::Cuda, DType::F16) => "unsigned short",
            _ => self.ty(Ty::of(d)),
        }
    }

    /// The vector type of `width` (2 or 4) elements of `t` (f32 or i32): `float4`, `int2`, ...
    /// (the same name in both dialects).
    pub fn vector_ty(self, t: Ty, width: u32) -> String {
        format!("{}{width}", self.ty(t))
    }

    /// A load of `width` consecutive elements of type `t` starting at the element `first` (an
    /// lvalue such as `x[i * 4]`) of a global buffer, as one vector access. The element's byte
    /// address must be a multiple of the vector's size.
    pub fn vector_load(self, t: Ty, width: u32, first: &str, constant: bool) -> String {
        let vt = self.vector_ty(t, width);
        match self {
            Dialect::Cuda => {
                let c = if constant { "const " } else { "" };
                format!("*({c}{vt}*)(&{first})")
            }
            Dialect::OpenCl => format!("vload{width}(0, &{first})"),
        }
    }

    /// The store of `lanes` (one expression per element) as one vector access at `first`, as
    /// [`Dialect::vector_load`]; a whole statement.
    pub fn vector_store(self, t: Ty, first: &str, lanes: &[String]) -> String {
        let width = lanes.len() as u32;
        let vt = self.vector_ty(t, width);
        match self {
            Dialect::Cuda => format!("*({vt}*)(&{first}) = make_{vt}({});", lanes.join(", ")),
            Dialect::OpenCl => format!("vstore{width}(({vt})({}), 0, &{first});", lanes.join(", ")),
        }
    }

    /// The function converting an f32 to i32 by truncation, saturating, NaN to 0.
    pub fn float_to_int(self) -> &'static str {
        match self {
            Dialect::Cuda => "__float2int_rz",
            Dialect::OpenCl => "convert_int_sat",
        }
    }

    /// The function (or cast-and-function) computing an intrinsic on operands of type `t`.
    pub fn math(self, f: Intrinsic, t: Ty) -> &'static str {
        use Intrinsic::*;
        let float = t == Ty::F32;
        match (self, f) {
            // `exp_ftz` may flush tiny results; the full `exp` is one of its allowed results.
            (Dialect::Cuda, Exp | ExpFtz) => "expf",
            (Dialect::Cuda, Log) => "logf",
            (Dialect::Cuda, Sqrt) => "sqrtf",
            (Dialect::Cuda, Rsqrt) => "rsqrtf",
            (Dialect::Cuda, Tanh) => "tanhf",
            (Dialect::Cuda, Erf) => "erff",
            (Dialect::Cuda, Pow) => "powf",
            (Dialect::Cuda, Floor) => "floorf",
            (Dialect::Cuda, Ceil) => "ceilf",
            (Dialect::Cuda, Sin) => "sinf",
            (Dialect::Cuda, Cos) => "cosf",
            // Round to nearest, ties to even (the default rounding mode).
            (Dialect::Cuda, Round) => "rintf",
            (Dialect::Cuda, Abs) if float => "fabsf",
            // L1's NaN-propagating f32 min and max: see `min_max_preamble`.
            (Dialect::Cuda | Dialect::OpenCl, Min) if float => "ekb_fmin",
            (Dialect::Cuda | Dialect::OpenCl, Max) if float => "ekb_fmax",
            (Dialect::Cuda, Abs) => "abs",
            (Dialect::Cuda, Min) => "min",
            (Dialect::Cuda, Max) => "max",
            (Dialect::OpenCl, Exp | ExpFtz) => "exp",
            (Dialect::OpenCl, Log) => "log",
            (Dialect::OpenCl, Sqrt) => "sqrt",
            (Dialect::OpenCl, Rsqrt) => "rsqrt",
            (Dialect::OpenCl, Tanh) => "tanh",
            (Dialect::OpenCl, Erf) => "erf",
            (Dialect::OpenCl, Pow) => "pow",
            (Dialect::OpenCl, Floor) => "floor",
            (Dialect::OpenCl, Ceil) => "ceil",
            (Dialect::OpenCl, Sin) => "sin",
            (Dialect::OpenCl, Cos) => "cos",
            (Dialect::OpenCl, Round) => "rint",
            (Dialect::OpenCl, Abs) if float => "fabs",
            // OpenCL's integer `abs` returns `uint`: back to `int` (abs(INT_MIN) wraps, as in L1).
            (Dialect::OpenCl, Abs) => "(int)abs",
            (Dialect::OpenCl, Min) => "min",
            (Dialect::OpenCl, Max) => "max",
        }
    }

    /// What the source needs before its kernels, given what they use.
    /// The definitions f16 buffers need: none in OpenCL (`vload_half`/`vstore_half_rte` are
    /// built in), [`CUDA_HALF_HELPERS`] in CUDA.
    pub fn half_preamble(self) -> &'static str {
        match self {
            Dialect::Cuda => CUDA_HALF_HELPERS,
            Dialect::OpenCl => "",
        }
    }

    /// The definitions of `ekb_fmin` and `ekb_fmax`, L1's f32 `min` and `max`, which propagate
    /// NaN: C's `fminf`/`fmaxf` (`fmin`/`fmax`) return the other operand when one is NaN, so a
    /// NaN operand is checked first (`a != a`, true only for NaN: no fast-math option is ever
    /// passed) and gives `a + b`, a NaN. Zeros of opposite signs give either zero, as L1 allows.
    /// CUDA has no NaN-propagating f32 `max` on every architecture (`max.NaN.f32` needs sm_80),
    /// so the select is written out in both dialects.
    pub fn min_max_preamble(self) -> &'static str {
        match self {
            Dialect::Cuda => CUDA_MIN_MAX,
            Dialect::OpenCl => OPENCL_MIN_MAX,
        }
    }

    pub fn preamble(self, uses_inf_nan: bool) -> &'static str {
        match (self, uses_inf_nan) {
            // NVRTC has no <math.h>: spell the two constants by their bits.
            (Dialect::Cuda, true) => {
                "#define INFINITY __int_as_float(0x7f800000)\n#define NAN __int_as_float(0x7fc00000)\n"
            }
            // OpenCL C defines INFINITY and NAN itself.
            (Dialect::Cuda, false) | (Dialect::OpenCl, _) => "",
        }
    }

    /// Shared memory above the static limit: CUDA's dynamic shared memory, declared once per
    /// kernel and carved into the shared allocations at 16-byte aligned offsets.
    pub fn dynamic_shared_decl(self) -> Option<&'static str> {
        match self {
            Dialect::Cuda => Some("extern __shared__ __align__(16) unsigned char ekb_smem[];"),
            Dialect::OpenCl => None,
        }
    }
}

/// CUDA's f16 conversions: `ekb_h2f` widens the bits exactly (`cvt.f32.f16`), `ekb_f2h` rounds
/// to the nearest f16, ties to even, overflowing to infinity (`cvt.rn.f16.f32`).
pub const CUDA_HALF_HELPERS: &str = "__device__ __forceinline__ float ekb_h2f(unsigned short h) { float f; asm(\"cvt.f32.f16 %0, %1;\" : \"=f\"(f) : \"h\"(h)); return f; }
__device__ __forceinline__ unsigned short ekb_f2h(float f) { unsigned short h; asm(\"cvt.rn.f16.f32 %0, %1;\" : \"=h\"(h) : \"f\"(f)); return h; }
";

/// CUDA's NaN-propagating f32 `min` and `max` (see [`Dialect::min_max_preamble`]).
const CUDA_MIN_MAX: &str = "__device__ __forceinline__ float ekb_fmin(float a, float b) { return a != a || b != b ? a + b : fminf(a, b); }
__device__ __forceinline__ float ekb_fmax(float a, float b) { return a != a || b != b ? a + b : fmaxf(a, b); }
";

/// OpenCL's NaN-propagating f32 `min` and `max` (see [`Dialect::min_max_preamble`]).
const OPENCL_MIN_MAX: &str =
    "float ekb_fmin(float a, float b) { return a != a || b != b ? a + b : fmin(a, b); }
float ekb_fmax(float a, float b) { return a != a || b != b ? a + b : fmax(a, b); }
";

fn xyz(axis: usize) -> &'static str {
    ["x", "y", "z"][axis.min(2)]
}

/// Words a generated name must not be: C, C++ (CUDA compiles C++), CUDA and OpenCL keywords,
/// built-in variables and types, and every function or macro the emitted code calls.
pub const RESERVED: &[&str] = &[
    // C and C++ keywords.
    "auto",
    "break",
    "case",
    "char",
    "const",
    "continue",
    "default",
    "do",
    "double",
    "else",
    "enum",
    "extern",
    "float",
    "for",
    "goto",
    "if",
    "inline",
    "int",
    "long",
    "register",
    "restrict",
    "return",
    "short",
    "signed",
    "sizeof",
    "static",
    "struct",
    "switch",
    "typedef",
    "union",
    "unsigned",
    "void",
    "volatile",
    "while",
    "bool",
    "true",
    "false",
    "class",
    "new",
    "delete",
    "this",
    "template",
    "typename",
    "namespace",
    "using",
    "operator",
    "private",
    "public",
    "protected",
    "virtual",
    "friend",
    "try",
    "catch",
    "throw",
    "explicit",
    "mutable",
    "export",
    "asm",
    "constexpr",
    "nullptr",
    "static_assert",
    "decltype",
    "noexcept",
    "alignas",
    "alignof",
    "thread_local",
    // CUDA built-ins.
    "threadIdx",
    "blockIdx",
    "blockDim",
    "gridDim",
    "warpSize",
    // OpenCL C keywords, types and built-ins.
    "kernel",
    "global",
    "local",
    "constant",
    "read_only",
    "write_only",
    "read_write",
    "half",
    "uchar",
    "ushort",
    "uint",
    "ulong",
    "size_t",
    "ptrdiff_t",
    "intptr_t",
    "uintptr_t",
    "image2d_t",
    "image3d_t",
    "sampler_t",
    "event_t",
    "barrier",
    "get_group_id",
    "get_local_id",
    "get_global_id",
    "float2",
    "float3",
    "float4",
    "float8",
    "float16",
    "int2",
    "int3",
    "int4",
    "int8",
    "int16",
    // Functions and macros the emitter calls.
    "exp",
    "expf",
    "log",
    "logf",
    "sqrt",
    "sqrtf",
    "rsqrt",
    "rsqrtf",
    "tanh",
    "tanhf",
    "erf",
    "erff",
    "pow",
    "powf",
    "floor",
    "floorf",
    "ceil",
    "ceilf",
    "rint",
    "rintf",
    "sin",
    "sinf",
    "cos",
    "cosf",
    "fabs",
    "fabsf",
    "fmin",
    "fminf",
    "fmax",
    "fmaxf",
    "ekb_fmin",
    "ekb_fmax",
    "abs",
    "min",
    "max",
    "convert_int_sat",
    "INFINITY",
    "NAN",
    "ekb_smem",
    // Vector accesses the emitter writes.
    "vload2",
    "vload4",
    "vstore2",
    "vstore4",
    // f16 accesses.
    "half",
    "vload_half",
    "vstore_half_rte",
    "ekb_h2f",
    "ekb_f2h",
    "make_float2",
    "make_float4",
    "make_int2",
    "make_int4",
    // Other OpenCL C built-in functions: a kernel of one of these names does not build (OpenCL
    // kernels cannot overload a built-in), and a variable would hide it.
    "sign",
    "step",
    "smoothstep",
    "clamp",
    "mix",
    "degrees",
    "radians",
    "dot",
    "cross",
    "length",
    "distance",
    "normalize",
    "select",
    "all",
    "any",
    "mad",
    "fma",
    "hypot",
    "exp2",
    "exp10",
    "log2",
    "log10",
    "tan",
    "sinh",
    "cosh",
    "asin",
    "acos",
    "atan",
    "atan2",
    "trunc",
    "round",
    "fract",
    "fmod",
    "remainder",
    "copysign",
    "ldexp",
    "nan",
    "mul24",
    "mad24",
    "clz",
    "popcount",
    "rotate",
    "add_sat",
    "sub_sat",
    "printf",
    "shuffle",
    "mem_fence",
    "get_local_size",
    "get_global_size",
    "get_num_groups",
    "get_work_dim",
];
