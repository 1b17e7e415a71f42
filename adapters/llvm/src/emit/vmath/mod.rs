//! Inline math: `exp`, `exp_ftz`, `log`, `tanh`, `erf`, `pow`, `sin` and `cos` as LLVM IR functions the
//! emitted kernels call and LLVM inlines (`alwaysinline`), so that a loop calling them still
//! vectorises: each is straight-line code of arithmetic, integer bit operations and `select`s,
//! with no branch and no library call, which the loop vectoriser widens like any other body.
//! Calls to the C library's `expf` (the kernel ABI's imports) are scalar, and a loop containing
//! one is never vectorised.
//!
//! Every function is built here, instruction by instruction, by [`Fb`]; one file per family:
//! `exp_log.rs` (exp, exp_ftz, log), `tanh_erf.rs` (tanh, erf), `pow.rs` (pow, in f64 inside),
//! `trig.rs` (sin, cos: f64 inside, a reduction exact over the whole f32 range). Their
//! polynomial coefficients come from `fit.py` (which prints them and the approximation error of
//! each polynomial); `pow`, `sin` and `cos` use plain Taylor and atanh series in f64.
//!
//! What this module must keep true: each function returns, for every f32 input (every pair for
//! `pow`), a result within the error bound [`MathFn::max_ulp`] of the exact value, with the
//! C library's special values (NaN in, NaN out; infinities, signed zeros, overflow to infinity,
//! gradual underflow, except `exp_ftz`, whose results below 2^-125 may be `+0` instead); `tests/vmath.rs` checks it over the whole f32 range against an f64
//! reference. The code carries no fast-math flags (the range reductions rely on exact IEEE
//! rounding), uses `llvm.fmuladd` where a fused multiply-add may round once instead of twice
//! (both roundings are within the bounds), and converts a float to an integer only where the
//! value is known to fit (`fptosi` of anything else is poison).

mod exp_log;
mod pow;
mod tanh_erf;
mod trig;

use super::expr::float_lit;
use super::Callee;
use std::collections::BTreeSet;

/// The math functions defined inline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum MathFn {
    Exp,
    ExpFtz,
    Log,
    Tanh,
    Erf,
    Pow,
    Sin,
    Cos,
}

impl MathFn {
    pub const ALL: [MathFn; 8] = [
        MathFn::Exp,
        MathFn::ExpFtz,
        MathFn::Log,
        MathFn::Tanh,
        MathFn::Erf,
        MathFn::Pow,
        MathFn::Sin,
        MathFn::Cos,
    ];

    /// The L1 name, which is also the C library's name without its `f`.
    pub fn name(self) -> &'static str {
        match self {
            MathFn::Exp => "exp",
            MathFn::ExpFtz => "exp_ftz",
            MathFn::Log => "log",
            MathFn::Tanh => "tanh",
            MathFn::Erf => "erf",
            MathFn::Pow => "pow",
            MathFn::Sin => "sin",
            MathFn::Cos => "cos",
        }
    }

    /// The symbol of the definition (internal to each kernel object).
    pub fn symbol(self) -> &'static str {
        match self {
            MathFn::Exp => "ekb_exp",
            MathFn::ExpFtz => "ekb_exp_ftz",
            MathFn::Log => "ekb_log",
            MathFn::Tanh => "ekb_tanh",
            MathFn::Erf => "ekb_erf",
            MathFn::Pow => "ekb_pow",
            MathFn::Sin => "ekb_sin",
            MathFn::Cos => "ekb_cos",
        }
    }

    /// Arguments: 2 for `pow`, 1 for the others.
    pub fn arity(self) -> usize {
        if self == MathFn::Pow {
            2
        } else {
            1
        }
    }

    /// The largest error, in units in the last place of the f32 result, over every f32 input
    /// (`docs/abi.md`, Math functions, gives each one's range reduction and its measured error);
    /// for `exp_ftz`, over every input whose result it does not flush (below 2^-125, to `+0`).
    pub fn max_ulp(self) -> f64 {
        match self {
            MathFn::Exp | MathFn::ExpFtz => 1.5,
            MathFn::Log => 1.0,
            MathFn::Tanh => 1.5,
            MathFn::Erf => 1.5,
            MathFn::Pow => 1.0,
            MathFn::Sin | MathFn::Cos => 1.0,
        }
    }

    /// The definition's LLVM IR text and the intrinsics it calls (which the module declares).
    pub(crate) fn define(self) -> (String, BTreeSet<Callee>) {
        let mut b = Fb::default();
        let x = V::new("%x", T::F32);
        let y = V::new("%y", T::F32);
        let r = match self {
            MathFn::Exp => exp_log::exp(&mut b, &x),
            MathFn::ExpFtz => exp_log::exp_ftz(&mut b, &x),
            MathFn::Log => exp_log::log(&mut b, &x),
            MathFn::Tanh => tanh_erf::tanh(&mut b, &x),
            MathFn::Erf => tanh_erf::erf(&mut b, &x),
            MathFn::Pow => pow::pow(&mut b, &x, &y),
            MathFn::Sin => trig::sin_cos(&mut b, &x, false),
            MathFn::Cos => trig::sin_cos(&mut b, &x, true),
        };
        let params = if self.arity() == 2 { "float %x, float %y" } else { "float %x" };
        let text = format!(
            "define internal float @{}({params}) alwaysinline nounwind {{\n{}  ret float {}\n}}",
            self.symbol(),
            b.body,
            r.repr
        );
        (text, b.deps)
    }
}

/// The LLVM types the functions compute in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum T {
    F32,
    F64,
    I32,
    I64,
    I1,
}

impl T {
    fn llvm(self) -> &'static str {
        match self {
            T::F32 => "float",
            T::F64 => "double",
            T::I32 => "i32",
            T::I64 => "i64",
            T::I1 => "i1",
        }
    }
}

/// An SSA value (a register or a constant) and its type.
#[derive(Debug, Clone)]
pub(super) struct V {
    repr: String,
    ty: T,
}

impl V {
    fn new(repr: impl Into<String>, ty: T) -> V {
        V { repr: repr.into(), ty }
    }
}

/// An f32 constant.
pub(super) fn f(x: f32) -> V {
    V::new(float_lit(x), T::F32)
}

/// An f64 constant.
pub(super) fn d(x: f64) -> V {
    V::new(format!("0x{:016X}", x.to_bits()), T::F64)
}

/// An i32 constant.
pub(super) fn i(x: i32) -> V {
    V::new(x.to_string(), T::I32)
}

/// An i64 constant.
pub(super) fn l(x: i64) -> V {
    V::new(x.to_string(), T::I64)
}

/// The body of a function being built: one instruction per call, each a fresh register.
#[derive(Default)]
pub(super) struct Fb {
    body: String,
    next: u32,
    deps: BTreeSet<Callee>,
}

impl Fb {
    fn inst(&mut self, ty: T, text: String) -> V {
        let r = format!("%v{}", self.next);
        self.next += 1;
        self.body.push_str(&format!("  {r} = {text}\n"));
        V::new(r, ty)
    }

    fn bin(&mut self, op: &str, a: &V, b: &V) -> V {
        debug_assert_eq!(a.ty, b.ty, "{op} of mixed types");
        self.inst(a.ty, format!("{op} {} {}, {}", a.ty.llvm(), a.repr, b.repr))
    }

    pub fn fadd(&mut self, a: &V, b: &V) -> V {
        self.bin("fadd", a, b)
    }
    pub fn fsub(&mut self, a: &V, b: &V) -> V {
        self.bin("fsub", a, b)
    }
    pub fn fmul(&mut self, a: &V, b: &V) -> V {
        self.bin("fmul", a, b)
    }
    pub fn fdiv(&mut self, a: &V, b: &V) -> V {
        self.bin("fdiv", a, b)
    }
    pub fn add(&mut self, a: &V, b: &V) -> V {
        self.bin("add", a, b)
    }
    pub fn sub(&mut self, a: &V, b: &V) -> V {
        self.bin("sub", a, b)
    }
    pub fn and(&mut self, a: &V, b: &V) -> V {
        self.bin("and", a, b)
    }
    pub fn or(&mut self, a: &V, b: &V) -> V {
        self.bin("or", a, b)
    }
    pub fn xor(&mut self, a: &V, b: &V) -> V {
        self.bin("xor", a, b)
    }
    pub fn shl(&mut self, a: &V, b: &V) -> V {
        self.bin("shl", a, b)
    }
    pub fn ashr(&mut self, a: &V, b: &V) -> V {
        self.bin("ashr", a, b)
    }
    pub fn lshr(&mut self, a: &V, b: &V) -> V {
        self.bin("lshr", a, b)
    }

    pub fn fneg(&mut self, a: &V) -> V {
        self.inst(a.ty, format!("fneg {} {}", a.ty.llvm(), a.repr))
    }

    /// `a * b + c`, fused where the target has the instruction.
    pub fn fma(&mut self, a: &V, b: &V, c: &V) -> V {
        let (callee, ty) = match a.ty {
            T::F32 => (Callee::FmaF32, "float"),
            _ => (Callee::FmaF64, "double"),
        };
        self.deps.insert(callee);
        let s = callee.symbol();
        self.inst(a.ty, format!("call {ty} @{s}({ty} {}, {ty} {}, {ty} {})", a.repr, b.repr, c.repr))
    }

    /// A one-operand intrinsic of the module's [`Callee`] table (`fabs`, `floor`).
    pub fn call1(&mut self, callee: Callee, a: &V) -> V {
        self.call(callee, &[a])
    }

    /// An intrinsic of the module's [`Callee`] table whose result has its first operand's type.
    pub fn call(&mut self, callee: Callee, args: &[&V]) -> V {
        self.deps.insert(callee);
        let ty = args[0].ty;
        let list: Vec<String> = args.iter().map(|a| format!("{} {}", a.ty.llvm(), a.repr)).collect();
        self.inst(ty, format!("call {} @{}({})", ty.llvm(), callee.symbol(), list.join(", ")))
    }

    pub fn fcmp(&mut self, pred: &str, a: &V, b: &V) -> V {
        self.inst(T::I1, format!("fcmp {pred} {} {}, {}", a.ty.llvm(), a.repr, b.repr))
    }

    pub fn icmp(&mut self, pred: &str, a: &V, b: &V) -> V {
        self.inst(T::I1, format!("icmp {pred} {} {}, {}", a.ty.llvm(), a.repr, b.repr))
    }

    pub fn select(&mut self, c: &V, a: &V, b: &V) -> V {
        debug_assert_eq!(a.ty, b.ty, "select of mixed types");
        let ty = a.ty.llvm();
        self.inst(a.ty, format!("select i1 {}, {ty} {}, {ty} {}", c.repr, a.repr, b.repr))
    }

    /// `op a to ty`: `bitcast`, `sitofp`, `fptosi`, `fpext`, `fptrunc`, `zext`, `trunc`.
    pub fn cast(&mut self, op: &str, a: &V, ty: T) -> V {
        self.inst(ty, format!("{op} {} {} to {}", a.ty.llvm(), a.repr, ty.llvm()))
    }

    /// `c[0] + x (c[1] + x (c[2] + ..))`.
    pub fn horner(&mut self, c: &[V], x: &V) -> V {
        let (last, rest) = c.split_last().expect("a polynomial has a coefficient");
        rest.iter().rev().fold(last.clone(), |acc, k| self.fma(&acc, x, k))
    }

    /// `x` where `x` is not NaN, else `v` (comparisons with NaN are false: `lo`, `hi` bounds
    /// keep NaN).
    pub fn clamp(&mut self, x: &V, lo: &V, hi: &V) -> V {
        let above = self.fcmp("ogt", x, hi);
        let a = self.select(&above, hi, x);
        let below = self.fcmp("olt", &a, lo);
        self.select(&below, lo, &a)
    }

    /// A quiet NaN in place of `r` wherever `x` is NaN (`x + x` quiets a signalling NaN).
    pub fn nan_through(&mut self, x: &V, r: &V) -> V {
        let nan = self.fcmp("uno", x, x);
        let q = self.fadd(x, x);
        self.select(&nan, &q, r)
    }
}

/// f32 coefficient table.
pub(super) fn coeffs(c: &[f32]) -> Vec<V> {
    c.iter().map(|&x| f(x)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_definition_names_its_symbol_and_ends_in_a_return() {
        for m in MathFn::ALL {
            let (text, deps) = m.define();
            assert!(text.starts_with(&format!("define internal float @{}(", m.symbol())), "{text}");
            assert!(text.trim_end().ends_with('}'));
            assert!(text.contains("  ret float %v"), "{}", m.name());
            assert!(!text.contains(" br "), "{} branches", m.name());
            assert!(deps.contains(&Callee::FmaF32) || deps.contains(&Callee::FmaF64));
        }
    }
}
