//! L1 module -> LLVM IR text (LLVM 19 syntax, opaque pointers), implementing the kernel ABI of
//! `docs/abi.md`.
//!
//! Per kernel `k`: the exported entry `void ekb_k_<k>(ptr args)` loads the buffer pointers and
//! calls the internal body `ekb.<k>.body`, whose buffer parameters are `noalias`, aligned and
//! dereferenceable; each `parallel` loop is outlined into `ekb.<k>.par<n>` (the `ekb_parallel_for`
//! callback, which unpacks a context struct) and `ekb.<k>.par<n>.body` (noalias again). Only
//! kernels are emitted: the plan stays on the host side.
//!
//! What this module must keep true: the output references no symbol outside
//! [`crate::IMPORTS`] (math calls and the parallel entry are declared `nonlazybind` and the
//! module asks for GOT calls to runtime functions, so every import goes through a GOT slot), it
//! defines no global variables, and float arithmetic carries fast-math flags only inside
//! `vectorize` loops. The math functions (`exp`, `exp_ftz`, `log`, `tanh`, `erf`, `pow`, `sin`,
//! `cos`) are defined in the module (`vmath`, inlined so that loops calling them vectorise)
//! rather than imported.

mod expr;
mod func;
mod stmt;
mod vmath;

pub use vmath::MathFn;

use crate::abi::{is_valid_kernel_name, kernel_symbol};
use ekb_ir::diag::Diagnostic;
use ekb_ir::l1::{Access, Kernel, Module};
use ekb_ir::TargetProfile;
use func::{buffer_param, BufRef, FnCx};
use std::borrow::Cow;
use std::collections::{BTreeSet, HashMap, HashSet};

/// The start of the diagnostic for GPU constructs, which CPU code cannot express.
pub(crate) const NO_GPU: &str = "`launch` needs a GPU target";

/// `unroll` loops with a constant trip count up to this are unrolled fully.
pub const UNROLL_FULL_MAX_TRIPS: i64 = 32;
/// `unroll` loops with a larger or unknown trip count are unrolled by this factor.
pub const UNROLL_COUNT: u32 = 4;

/// The LLVM IR text of every kernel of `m`, for `target`'s triple. Errors (with the span of the
/// offending node) for what the verifier should have rejected: unknown names, type mismatches,
/// stores to `in` parameters, nested `parallel`, and kernel names that are not C identifiers.
pub fn emit(m: &Module, target: &TargetProfile) -> Result<String, Diagnostic> {
    let mut seen = HashSet::new();
    for k in &m.kernels {
        if k.has_launch() {
            return Err(Diagnostic::error(format!("{NO_GPU}; target `{}` has no GPU", target.name))
                .at(k.span)
                .with_note(format!("kernel {} launches on a GPU; the LLVM adapter emits CPU code", k.name)));
        }
        if !is_valid_kernel_name(&k.name) {
            return Err(Diagnostic::error(format!("kernel name `{}` is not a C identifier", k.name))
                .at(k.span)
                .with_expected("a name of letters, digits and `_`, not starting with a digit")
                .with_note(format!("the kernel is exported as the symbol `{}`", kernel_symbol(&k.name))));
        }
        if !seen.insert(k.name.as_str()) {
            return Err(Diagnostic::error(format!("kernel `{}` is defined twice", k.name)).at(k.span));
        }
    }
    let mut cx = ModuleCx::new(target.cpu_f32_lanes(), &target.cpu.triple);
    for k in &m.kernels {
        kernel(&mut cx, k)?;
    }
    Ok(cx.finish(&m.name, &target.cpu.triple))
}

/// The body function and the exported wrapper of one kernel.
fn kernel(cx: &mut ModuleCx, k: &Kernel) -> Result<(), Diagnostic> {
    cx.par_count = 0;
    let mut f = FnCx::new(cx, &k.name, false, false);
    let mut params = Vec::new();
    let mut names = HashSet::new();
    for p in &k.params {
        if !names.insert(p.name.as_str()) {
            return Err(f.err(p.span, format!("parameter `{}` is declared twice", p.name)));
        }
        let reg = f.fresh(&p.name);
        let writable = p.access != Access::In;
        params.push(buffer_param(&p.ty, writable, &reg));
        f.bind_buf(&p.name, BufRef { ptr: reg, ty: p.ty.clone(), writable });
    }
    f.block(&k.body)?;
    let body = format!("ekb.{}.body", k.name);
    let text = f.finish(&format!("define internal void @{body}({})", params.join(", ")));
    cx.funcs.push(text);

    let mut w = format!("define void @{}(ptr noundef %args) #0 {{\nentry:\n", kernel_symbol(&k.name));
    let mut args = Vec::new();
    for i in 0..k.params.len() {
        if i == 0 {
            w.push_str("  %arg.0 = load ptr, ptr %args\n");
        } else {
            w.push_str(&format!("  %slot.{i} = getelementptr inbounds ptr, ptr %args, i64 {i}\n"));
            w.push_str(&format!("  %arg.{i} = load ptr, ptr %slot.{i}\n"));
        }
        args.push(format!("ptr %arg.{i}"));
    }
    w.push_str(&format!("  call void @{body}({})\n  ret void\n}}\n", args.join(", ")));
    cx.funcs.push(w);
    Ok(())
}

/// Functions called by emitted code: LLVM intrinsics and imports of the ABI.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Callee {
    ParallelFor,
    /// A function defined inline (`vmath`).
    Math(MathFn),
    Sqrt,
    Fabs,
    FabsF64,
    FshlI64,
    FmaF32,
    FmaF64,
    CopySign,
    Floor,
    Ceil,
    Minimum,
    Maximum,
    IAbs,
    SMin,
    SMax,
    FptosiSat,
    /// `f32 -> i32` saturating, NaN to 0, as compares and selects around a plain `fptosi`.
    FloatToInt,
    Trap,
    /// f16 bits to their exact f32 value, in integer operations (no library call).
    HalfToFloat,
    /// An f32 to the bits of the nearest f16 (ties to even), in integer operations.
    FloatToHalf,
}

impl Callee {
    /// The `declare` line: the parallel entry is `nonlazybind` (called through the GOT); the
    /// others are LLVM intrinsics. The math functions are definitions (`vmath`), and so are the
    /// f16 conversions: LLVM's `fpext`/`fptrunc` of `half` become calls to compiler-rt's
    /// `__extendhfsf2`/`__truncsfhf2` on the x86-64 baseline (no F16C), which the static runtime
    /// does not have, so they are written out as integer code that is inlined (the algorithm of
    /// `ekb_wire::f16`, bit for bit; subnormals are rounded by one exact-or-nearest f32 add or
    /// subtract, which needs the default rounding mode and no fast-math flags).
    fn decl(self) -> Cow<'static, str> {
        Cow::Borrowed(match self {
            Callee::Math(f) => return Cow::Owned(f.define().0),
            Callee::ParallelFor => "declare void @ekb_parallel_for(ptr, ptr, i64) #1",
            Callee::Sqrt => "declare float @llvm.sqrt.f32(float)",
            Callee::Fabs => "declare float @llvm.fabs.f32(float)",
            Callee::FabsF64 => "declare double @llvm.fabs.f64(double)",
            Callee::FshlI64 => "declare i64 @llvm.fshl.i64(i64, i64, i64)",
            Callee::FmaF32 => "declare float @llvm.fmuladd.f32(float, float, float)",
            Callee::FmaF64 => "declare double @llvm.fmuladd.f64(double, double, double)",
            Callee::CopySign => "declare float @llvm.copysign.f32(float, float)",
            Callee::Floor => "declare float @llvm.floor.f32(float)",
            Callee::Ceil => "declare float @llvm.ceil.f32(float)",
            Callee::Minimum => "declare float @llvm.minimum.f32(float, float)",
            Callee::Maximum => "declare float @llvm.maximum.f32(float, float)",
            Callee::IAbs => "declare i32 @llvm.abs.i32(i32, i1)",
            Callee::SMin => "declare i32 @llvm.smin.i32(i32, i32)",
            Callee::SMax => "declare i32 @llvm.smax.i32(i32, i32)",
            Callee::FptosiSat => "declare i32 @llvm.fptosi.sat.i32.f32(float)",
            Callee::FloatToInt => FLOAT_TO_INT,
            Callee::Trap => "declare void @llvm.trap()",
            Callee::HalfToFloat => HALF_TO_FLOAT,
            Callee::FloatToHalf => FLOAT_TO_HALF,
        })
    }

    /// What a definition calls, which the module must declare too.
    fn deps(self) -> BTreeSet<Callee> {
        match self {
            Callee::Math(f) => f.define().1,
            _ => BTreeSet::new(),
        }
    }

    /// The symbol after `@`.
    fn symbol(self) -> &'static str {
        let d = match (self, self.decl()) {
            (Callee::Math(f), _) => return f.symbol(),
            (_, Cow::Borrowed(d)) => d,
            (_, Cow::Owned(_)) => unreachable!("only math functions are generated"),
        };
        let start = d.find('@').expect("declarations name a function") + 1;
        let end = start + d[start..].find('(').expect("declarations have parameters");
        &d[start..end]
    }
}

/// `ekb_f2i`: `llvm.fptosi.sat.i32.f32` in operations every vector width has. The operand of
/// the `fptosi` is always in range: NaN and values from 2^31 up become 0.0 (then NaN gives 0 and
/// the others `i32::MAX` by the last select), values below -2^31 become -2^31 (`i32::MIN`).
const FLOAT_TO_INT: &str = "define internal i32 @ekb_f2i(float %x) alwaysinline nounwind {\n\
  %below = fcmp olt float %x, 0x41E0000000000000\n\
  %above_min = fcmp oge float %x, 0xC1E0000000000000\n\
  %lo = select i1 %above_min, float %x, float 0xC1E0000000000000\n\
  %m = select i1 %below, float %lo, float 0.0\n\
  %i = fptosi float %m to i32\n\
  %big = fcmp oge float %x, 0x41E0000000000000\n\
  %r = select i1 %big, i32 2147483647, i32 %i\n\
  ret i32 %r\n\
}";

/// `ekb_h2f`: the exponent and mantissa shifted into place and rebiased; infinities and NaN
/// (exponent 31) rebiased again, NaN made quiet; subnormals renormalised by subtracting 2^-14
/// from a float holding `2^-14 + m * 2^-24` (exact).
const HALF_TO_FLOAT: &str = "define internal float @ekb_h2f(i16 %h) alwaysinline nounwind {\n\
  %w = zext i16 %h to i32\n\
  %em = and i32 %w, 32767\n\
  %sh = shl i32 %em, 13\n\
  %exp = and i32 %sh, 260046848\n\
  %adj = add i32 %sh, 939524096\n\
  %isspecial = icmp eq i32 %exp, 260046848\n\
  %special = add i32 %adj, 939524096\n\
  %man = and i32 %w, 1023\n\
  %hasman = icmp ne i32 %man, 0\n\
  %quiet = select i1 %hasman, i32 4194304, i32 0\n\
  %nan = or i32 %special, %quiet\n\
  %iszero = icmp eq i32 %exp, 0\n\
  %sub.u = add i32 %adj, 8388608\n\
  %sub.f = bitcast i32 %sub.u to float\n\
  %sub.r = fsub float %sub.f, 0x3F10000000000000\n\
  %sub = bitcast float %sub.r to i32\n\
  %a = select i1 %iszero, i32 %sub, i32 %adj\n\
  %b = select i1 %isspecial, i32 %nan, i32 %a\n\
  %sgn16 = and i32 %w, 32768\n\
  %sgn = shl i32 %sgn16, 16\n\
  %r = or i32 %b, %sgn\n\
  %f = bitcast i32 %r to float\n\
  ret float %f\n\
}";

/// `ekb_f2h`: at or above 2^16, infinity (or a quiet NaN keeping the top payload bits); below
/// 2^-14, `|x| + 0.5` rounds to a multiple of 2^-24 (ties to even) whose low bits are the
/// subnormal; otherwise the rebiased bits plus `0xfff` plus the lowest kept bit (ties to even),
/// shifted right by 13, a carry rounding up into the next exponent or to infinity.
const FLOAT_TO_HALF: &str = "define internal i16 @ekb_f2h(float %x) alwaysinline nounwind {\n\
  %u = bitcast float %x to i32\n\
  %sgn32 = and i32 %u, -2147483648\n\
  %abs = and i32 %u, 2147483647\n\
  %big = icmp uge i32 %abs, 1199570944\n\
  %isnan = icmp ugt i32 %abs, 2139095040\n\
  %pay = lshr i32 %abs, 13\n\
  %pay10 = and i32 %pay, 1023\n\
  %nan = or i32 %pay10, 32256\n\
  %inf = select i1 %isnan, i32 %nan, i32 31744\n\
  %small = icmp ult i32 %abs, 947912704\n\
  %absf = bitcast i32 %abs to float\n\
  %dn.f = fadd float %absf, 5.000000e-01\n\
  %dn.u = bitcast float %dn.f to i32\n\
  %dn = sub i32 %dn.u, 1056964608\n\
  %odd.s = lshr i32 %abs, 13\n\
  %odd = and i32 %odd.s, 1\n\
  %nb = add i32 %abs, -939520001\n\
  %nb2 = add i32 %nb, %odd\n\
  %nm = lshr i32 %nb2, 13\n\
  %fin = select i1 %small, i32 %dn, i32 %nm\n\
  %mag = select i1 %big, i32 %inf, i32 %fin\n\
  %sgn = lshr i32 %sgn32, 16\n\
  %r = or i32 %mag, %sgn\n\
  %h = trunc i32 %r to i16\n\
  ret i16 %h\n\
}";

/// The module being written: finished functions, declarations in use, metadata nodes.
pub(crate) struct ModuleCx {
    /// f32 lanes of the target's SIMD registers (the `vectorize` width).
    lanes: u32,
    /// How `f32 -> i32` saturates on this target: `llvm.fptosi.sat` where it is one
    /// instruction for any width (aarch64's `fcvtzs`), else the compare-and-select form of
    /// `ekb_f2i`, which x86 vectorises where it scalarises the intrinsic.
    float_to_int: Callee,
    funcs: Vec<String>,
    callees: BTreeSet<Callee>,
    meta: Vec<String>,
    shared_meta: HashMap<String, usize>,
    /// `parallel` loops outlined so far in the current kernel.
    par_count: u32,
}

impl ModuleCx {
    fn new(lanes: u32, triple: &str) -> ModuleCx {
        let native_saturation = triple.starts_with("aarch64");
        ModuleCx {
            lanes,
            float_to_int: if native_saturation { Callee::FptosiSat } else { Callee::FloatToInt },
            funcs: Vec::new(),
            callees: BTreeSet::new(),
            meta: Vec::new(),
            shared_meta: HashMap::new(),
            par_count: 0,
        }
    }

    /// `@symbol` of a callee, declaring it.
    fn callee(&mut self, c: Callee) -> String {
        self.callees.insert(c);
        format!("@{}", c.symbol())
    }

    fn use_trap(&mut self) {
        self.callees.insert(Callee::Trap);
    }

    /// A metadata node shared by all users (loop properties).
    fn shared(&mut self, text: String) -> usize {
        if let Some(&id) = self.shared_meta.get(&text) {
            return id;
        }
        let id = self.meta.len();
        self.meta.push(text.clone());
        self.shared_meta.insert(text, id);
        id
    }

    /// A distinct loop ID node with the given properties (`!"llvm.loop..."` tuples).
    fn loop_id(&mut self, props: &[String]) -> usize {
        let ids: Vec<String> = props.iter().map(|p| format!("!{}", self.shared(p.clone()))).collect();
        let id = self.meta.len();
        self.meta.push(format!("distinct !{{!{id}, {}}}", ids.join(", ")));
        id
    }

    fn finish(mut self, module: &str, triple: &str) -> String {
        let name = escape(module);
        let mut out = format!(
            "; kernels of L1 module `{name}`; kernel ABI: docs/abi.md\nsource_filename = \"{name}\"\ntarget triple = \"{}\"\n",
            escape(triple)
        );
        for f in &self.funcs {
            out.push('\n');
            out.push_str(f);
        }
        out.push('\n');
        let mut callees = self.callees.clone();
        for c in &self.callees {
            callees.extend(c.deps());
        }
        for c in &callees {
            out.push_str(&c.decl());
            out.push('\n');
        }
        out.push_str(
            "\nattributes #0 = { nounwind \"probe-stack\"=\"inline-asm\" }\n\
             attributes #1 = { nounwind nonlazybind }\n\n",
        );
        let got = self.meta.len();
        self.meta.push("!{i32 7, !\"RtLibUseGOT\", i32 1}".into());
        self.meta.push("!{i32 8, !\"PIC Level\", i32 2}".into());
        out.push_str(&format!("!llvm.module.flags = !{{!{got}, !{}}}\n", got + 1));
        for (i, m) in self.meta.iter().enumerate() {
            out.push_str(&format!("!{i} = {m}\n"));
        }
        out
    }
}

/// Escapes a string for an LLVM string literal (`\XX` for quotes, backslashes and non-printables).
fn escape(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b == b'"' || b == b'\\' || !(0x20..0x7f).contains(&b) {
            out.push_str(&format!("\\{b:02X}"));
        } else {
            out.push(b as char);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn callee_symbols_come_from_their_declarations() {
        assert_eq!(Callee::ParallelFor.symbol(), "ekb_parallel_for");
        assert_eq!(Callee::FptosiSat.symbol(), "llvm.fptosi.sat.i32.f32");
        assert_eq!(Callee::FloatToInt.symbol(), "ekb_f2i");
        assert_eq!(Callee::FshlI64.symbol(), "llvm.fshl.i64");
        assert_eq!(Callee::Math(MathFn::Erf).symbol(), "ekb_erf");
    }

    #[test]
    fn strings_are_escaped() {
        assert_eq!(escape("a\"b\\c\u{e9}"), "a\\22b\\5Cc\\C3\\A9");
    }
}
