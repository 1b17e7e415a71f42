//! L1 expressions -> LLVM instructions, with the L1 semantics made explicit:
//!
//! - `i32` `+ - *` wrap (no `nsw`); `/` and `%` truncate toward zero; a zero divisor branches to
//!   the function's trap block (`llvm.trap`); `i32::MIN / -1` is `i32::MIN` and
//!   `i32::MIN % -1` is `0` (wrapping, as Rust's `wrapping_div`/`wrapping_rem`): the divisor
//!   `-1` is replaced by `1` and the quotient negated, so no division ever overflows.
//! - Float arithmetic is plain IEEE; inside `vectorize` loops it carries `reassoc contract`, but
//!   a quotient only `contract` ([`FnCx::fmf_quotient`] says why).
//! - `f32 -> i32` saturates, NaN -> 0 (`llvm.fptosi.sat` on aarch64, `ekb_f2i` elsewhere);
//!   `bool -> i32/f32` is 0/1.
//! - `min`/`max` on f32 are `llvm.minimum`/`maximum` (a NaN operand gives NaN), marked `nsz`:
//!   L1 leaves open which zero `max(-0.0, 0.0)` gives, and without `nsz` x86 orders the zeros
//!   with two more blends per vector and a branch per scalar (aarch64's `fmax` is exact either way).
//! - Both sides of `&&`, `||` and both arms of `select` are evaluated.
//! - Addresses: each index is sign-extended to i64 and scaled by its row-major stride; the sum
//!   indexes the buffer with `getelementptr inbounds`.
//!
//! Constant `i32` arithmetic is folded (wrapping) so that loop bounds written as expressions of
//! literals give the loop hints a known trip count.

use super::func::{elem_align, elem_ty, llvm_ty, BufRef, FnCx, Val};
use super::{Callee, MathFn};
use ekb_ir::diag::{Diagnostic, Span};
use ekb_ir::l1::{BinOp, Expr, ExprKind, Intrinsic, Ty, UnOp};
use ekb_ir::DType;

type R<T> = Result<T, Diagnostic>;

/// An `f32` constant as LLVM writes it: the hex of the equal `double` (exact for every f32,
/// NaN payloads included).
pub(super) fn float_lit(x: f32) -> String {
    let bits = x.to_bits();
    let d = if x.is_nan() {
        (u64::from(bits >> 31) << 63) | (0x7ffu64 << 52) | (u64::from(bits & 0x7f_ffff) << 29)
    } else {
        f64::from(x).to_bits()
    };
    format!("0x{d:016X}")
}

impl FnCx<'_> {
    /// An expression that must have type `want`; `what` names its role in the error.
    pub fn typed(&mut self, e: &Expr, want: Ty, what: &str) -> R<Val> {
        let v = self.expr(e)?;
        if v.ty != want {
            return Err(self
                .err(e.span, format!("{what} must be {}, found {}", want.name(), v.ty.name()))
                .with_expected(want.name()));
        }
        Ok(v)
    }

    fn fmf(&self) -> &'static str {
        if self.fast {
            " reassoc contract"
        } else {
            ""
        }
    }

    /// The flags of a quotient: `contract` only, inside `vectorize` loops. With `reassoc` on
    /// both, LLVM sinks a division into the product that reads it (`x * (a / b)` becomes `(x *
    /// a) / b`), turning a quotient of loop invariants computed once into one division per
    /// element.
    fn fmf_quotient(&self) -> &'static str {
        if self.fast {
            " contract"
        } else {
            ""
        }
    }

    /// Emits `<dest> = <inst>` with a fresh name and returns it as a value of type `ty`.
    pub(super) fn op(&mut self, hint: &str, ty: Ty, inst: String) -> Val {
        let r = self.fresh(hint);
        self.emit(format!("{r} = {inst}"));
        Val::new(r, ty)
    }

    pub fn expr(&mut self, e: &Expr) -> R<Val> {
        match &e.kind {
            ExprKind::Int(i) => Ok(Val::new(i.to_string(), Ty::I32)),
            ExprKind::Float(x) => Ok(Val::new(float_lit(*x), Ty::F32)),
            ExprKind::Bool(b) => Ok(Val::new(b.to_string(), Ty::Bool)),
            ExprKind::Var(n) => self.scalar(n, e.span),
            ExprKind::Load { buf, index } => {
                let b = self.buf(&buf.name, buf.span)?;
                let p = self.address(&buf.name, &b, index, e.span)?;
                let ty = Ty::of(b.ty.dtype);
                let (elem, align) = (elem_ty(b.ty.dtype), elem_align(b.ty.dtype));
                let v = self.op("ld", ty, format!("load {elem}, ptr {p}, align {align}"));
                if elem == llvm_ty(ty) {
                    return Ok(v);
                }
                if b.ty.dtype == DType::F16 {
                    let h2f = self.m.callee(Callee::HalfToFloat);
                    return Ok(self.op("hf", ty, format!("call float {h2f}(i16 {})", v.repr)));
                }
                // An i8 element widens with its sign.
                Ok(self.op("sx", ty, format!("sext {elem} {} to {}", v.repr, llvm_ty(ty))))
            }
            ExprKind::Unary { op, arg } => {
                let a = self.expr(arg)?;
                match (op, a.ty) {
                    (UnOp::Neg, Ty::I32) => Ok(match a.const_i32() {
                        Some(c) => Val::new(c.wrapping_neg().to_string(), Ty::I32),
                        None => self.op("neg", Ty::I32, format!("sub i32 0, {}", a.repr)),
                    }),
                    (UnOp::Neg, Ty::F32) => {
                        let inst = format!("fneg{} float {}", self.fmf(), a.repr);
                        Ok(self.op("neg", Ty::F32, inst))
                    }
                    (UnOp::Not, Ty::Bool) => Ok(self.op("not", Ty::Bool, format!("xor i1 {}, true", a.repr))),
                    (UnOp::Neg, Ty::Bool) => {
                        Err(self.err(e.span, "`-` needs an i32 or f32 operand, found bool"))
                    }
                    (UnOp::Not, t) => Err(self
                        .err(e.span, format!("`!` needs a bool operand, found {}", t.name()))
                        .with_hint("compare instead, e.g. `x == 0`")),
                }
            }
            ExprKind::Binary { op, lhs, rhs } => {
                let a = self.expr(lhs)?;
                let b = self.expr(rhs)?;
                self.binary(*op, a, b, e.span)
            }
            ExprKind::Select { cond, then_val, else_val } => {
                let c = self.typed(cond, Ty::Bool, "a `select` condition")?;
                let a = self.expr(then_val)?;
                let b = self.expr(else_val)?;
                if a.ty != b.ty {
                    return Err(self.err(
                        e.span,
                        format!("`select` arms differ in type: {} and {}", a.ty.name(), b.ty.name()),
                    ));
                }
                let t = llvm_ty(a.ty);
                Ok(self.op("sel", a.ty, format!("select i1 {}, {t} {}, {t} {}", c.repr, a.repr, b.repr)))
            }
            ExprKind::Cast { to, arg } => {
                let a = self.expr(arg)?;
                self.cast(*to, a, e.span)
            }
            ExprKind::Call { func, args } => self.call(*func, args, e.span),
        }
    }

    fn binary(&mut self, op: BinOp, a: Val, b: Val, span: Span) -> R<Val> {
        let sym = op.symbol();
        if a.ty != b.ty {
            return Err(self
                .err(span, format!("`{sym}` operands differ in type: {} and {}", a.ty.name(), b.ty.name()))
                .with_hint("convert one side explicitly with `f32(..)` or `i32(..)`"));
        }
        let t = a.ty;
        let lt = llvm_ty(t);
        let (x, y) = (&a.repr, &b.repr);
        match op {
            BinOp::And | BinOp::Or if t == Ty::Bool => {
                let name = if op == BinOp::And { "and" } else { "or" };
                Ok(self.op(name, Ty::Bool, format!("{name} i1 {x}, {y}")))
            }
            BinOp::And | BinOp::Or => {
                Err(self.err(span, format!("`{sym}` needs bool operands, found {}", t.name())))
            }
            BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge | BinOp::Eq | BinOp::Ne => {
                let pred = match (t, op) {
                    (Ty::F32, _) => fcmp_pred(op),
                    (Ty::I32, _) | (Ty::Bool, BinOp::Eq | BinOp::Ne) => icmp_pred(op),
                    (Ty::Bool, _) => {
                        return Err(self.err(span, format!("`{sym}` does not order bools; use `==` or `!=`")))
                    }
                };
                let inst = if t == Ty::F32 { "fcmp" } else { "icmp" };
                Ok(self.op("cmp", Ty::Bool, format!("{inst} {pred} {lt} {x}, {y}")))
            }
            BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::Rem => match t {
                Ty::I32 => Ok(self.int_arith(op, &a, &b)),
                Ty::F32 if op != BinOp::Rem => {
                    let name = match op {
                        BinOp::Add => "fadd",
                        BinOp::Sub => "fsub",
                        BinOp::Mul => "fmul",
                        _ => "fdiv",
                    };
                    let flags = if op == BinOp::Div { self.fmf_quotient() } else { self.fmf() };
                    let inst = format!("{name}{flags} float {x}, {y}");
                    Ok(self.op(&name[1..], Ty::F32, inst))
                }
                Ty::F32 => Err(self.err(span, "`%` needs i32 operands, found f32")),
                Ty::Bool => Err(self.err(span, format!("`{sym}` needs i32 or f32 operands, found bool"))),
            },
        }
    }

    /// `i32` arithmetic: wrapping `+ - *`, checked and overflow-free `/ %`, folded on constants.
    fn int_arith(&mut self, op: BinOp, a: &Val, b: &Val) -> Val {
        let (x, y) = (&a.repr, &b.repr);
        if let (Some(p), Some(q)) = (a.const_i32(), b.const_i32()) {
            let folded = match op {
                BinOp::Add => Some(p.wrapping_add(q)),
                BinOp::Sub => Some(p.wrapping_sub(q)),
                BinOp::Mul => Some(p.wrapping_mul(q)),
                BinOp::Div if q != 0 => Some(p.wrapping_div(q)),
                BinOp::Rem if q != 0 => Some(p.wrapping_rem(q)),
                _ => None,
            };
            if let Some(c) = folded {
                return Val::new(c.to_string(), Ty::I32);
            }
        }
        let name = match op {
            BinOp::Add => "add",
            BinOp::Sub => "sub",
            BinOp::Mul => "mul",
            BinOp::Div => "sdiv",
            _ => "srem",
        };
        match (op, b.const_i32()) {
            (BinOp::Add | BinOp::Sub | BinOp::Mul, _) => {
                self.op(name, Ty::I32, format!("{name} i32 {x}, {y}"))
            }
            (_, Some(c)) if c != 0 && c != -1 => self.op(name, Ty::I32, format!("{name} i32 {x}, {y}")),
            _ => {
                let zero = self.fresh("divzero");
                self.emit(format!("{zero} = icmp eq i32 {y}, 0"));
                let ok = format!("{}.ok", self.fresh_label("div"));
                let trap = self.trap_label();
                self.emit(format!("br i1 {zero}, label %{trap}, label %{ok}"));
                self.start_block(ok);
                let m1 = self.op("minus1", Ty::Bool, format!("icmp eq i32 {y}, -1"));
                let d = self.op("divisor", Ty::I32, format!("select i1 {}, i32 1, i32 {y}", m1.repr));
                let q = self.op(name, Ty::I32, format!("{name} i32 {x}, {}", d.repr));
                let alt = if op == BinOp::Div {
                    self.op("neg", Ty::I32, format!("sub i32 0, {x}")).repr
                } else {
                    "0".to_string()
                };
                self.op(name, Ty::I32, format!("select i1 {}, i32 {alt}, i32 {}", m1.repr, q.repr))
            }
        }
    }

    fn cast(&mut self, to: Ty, a: Val, span: Span) -> R<Val> {
        let x = &a.repr;
        Ok(match (a.ty, to) {
            (f, t) if f == t => a,
            (Ty::I32, Ty::F32) => self.op("conv", Ty::F32, format!("sitofp i32 {x} to float")),
            (Ty::Bool, Ty::F32) => self.op("conv", Ty::F32, format!("uitofp i1 {x} to float")),
            (Ty::F32, Ty::I32) => {
                let f = self.m.callee(self.m.float_to_int);
                self.op("conv", Ty::I32, format!("call i32 {f}(float {x})"))
            }
            (Ty::Bool, Ty::I32) => self.op("conv", Ty::I32, format!("zext i1 {x} to i32")),
            (from, _) => {
                return Err(self
                    .err(span, format!("cannot convert {} to bool", from.name()))
                    .with_hint("compare instead, e.g. `x != 0`"))
            }
        })
    }

    fn call(&mut self, func: Intrinsic, args: &[Expr], span: Span) -> R<Val> {
        if args.len() != func.arity() {
            return Err(self.err(
                span,
                format!("`{}` takes {} argument(s), found {}", func.name(), func.arity(), args.len()),
            ));
        }
        let vals = args.iter().map(|a| self.expr(a)).collect::<R<Vec<Val>>>()?;
        let t = vals[0].ty;
        if vals.iter().any(|v| v.ty != t) {
            return Err(self.err(span, format!("`{}` arguments differ in type", func.name())));
        }
        let int_ok = matches!(func, Intrinsic::Abs | Intrinsic::Min | Intrinsic::Max);
        if t == Ty::Bool || (t == Ty::I32 && !int_ok) {
            let want = if int_ok { "f32 or i32" } else { "f32" };
            let mut d =
                self.err(span, format!("`{}` needs {want} arguments, found {}", func.name(), t.name()));
            if t == Ty::I32 {
                d = d.with_hint("convert with `f32(..)`");
            }
            return Err(d);
        }
        let x = vals[0].repr.clone();
        let y = vals.get(1).map(|v| v.repr.clone()).unwrap_or_default();
        let fmf = self.fmf();
        let name = func.name();
        let v = match (func, t) {
            (Intrinsic::Exp | Intrinsic::ExpFtz | Intrinsic::Log | Intrinsic::Tanh | Intrinsic::Erf, _) => {
                let m = match func {
                    Intrinsic::Exp => MathFn::Exp,
                    Intrinsic::ExpFtz => MathFn::ExpFtz,
                    Intrinsic::Log => MathFn::Log,
                    Intrinsic::Tanh => MathFn::Tanh,
                    _ => MathFn::Erf,
                };
                let f = self.m.callee(Callee::Math(m));
                self.op(name, Ty::F32, format!("call float {f}(float {x})"))
            }
            (Intrinsic::Sin | Intrinsic::Cos, _) => {
                let m = if func == Intrinsic::Sin { MathFn::Sin } else { MathFn::Cos };
                let f = self.m.callee(Callee::Math(m));
                self.op(name, Ty::F32, format!("call float {f}(float {x})"))
            }
            (Intrinsic::Pow, _) => {
                let f = self.m.callee(Callee::Math(MathFn::Pow));
                self.op(name, Ty::F32, format!("call float {f}(float {x}, float {y})"))
            }
            (Intrinsic::Sqrt | Intrinsic::Rsqrt, _) => {
                let f = self.m.callee(Callee::Sqrt);
                let s = self.op("sqrt", Ty::F32, format!("call float {f}(float {x})"));
                if func == Intrinsic::Sqrt {
                    s
                } else {
                    let one = float_lit(1.0);
                    self.op(name, Ty::F32, format!("fdiv{} float {one}, {}", self.fmf_quotient(), s.repr))
                }
            }
            (Intrinsic::Round, _) => {
                // Ties to even without a library call (the x86-64 baseline has no instruction
                // for it): for |x| < 2^23, |x| + 2^23 rounds to an integer under the default
                // rounding mode and subtracting 2^23 is exact; larger values, infinities and
                // NaN are their own rounding. No fast-math flags, even in `vectorize` loops, so
                // the addition and subtraction are never folded away.
                let fabs = self.m.callee(Callee::Fabs);
                let copysign = self.m.callee(Callee::CopySign);
                let two23 = float_lit(8_388_608.0);
                let a = self.op("abs", Ty::F32, format!("call float {fabs}(float {x})"));
                let up = self.op("up", Ty::F32, format!("fadd float {}, {two23}", a.repr));
                let down = self.op("down", Ty::F32, format!("fsub float {}, {two23}", up.repr));
                let small = self.op("small", Ty::Bool, format!("fcmp olt float {}, {two23}", a.repr));
                let r = self.op(
                    "mag",
                    Ty::F32,
                    format!("select i1 {}, float {}, float {}", small.repr, down.repr, a.repr),
                );
                self.op(name, Ty::F32, format!("call float {copysign}(float {}, float {x})", r.repr))
            }
            (Intrinsic::Floor | Intrinsic::Ceil, _) => {
                let f = self.m.callee(if func == Intrinsic::Floor { Callee::Floor } else { Callee::Ceil });
                self.op(name, Ty::F32, format!("call float {f}(float {x})"))
            }
            (Intrinsic::Abs, Ty::F32) => {
                let f = self.m.callee(Callee::Fabs);
                self.op(name, Ty::F32, format!("call float {f}(float {x})"))
            }
            (Intrinsic::Abs, _) => {
                // `false`: abs(i32::MIN) is i32::MIN (wrapping), not poison.
                let f = self.m.callee(Callee::IAbs);
                self.op(name, Ty::I32, format!("call i32 {f}(i32 {x}, i1 false)"))
            }
            (Intrinsic::Min | Intrinsic::Max, Ty::F32) => {
                let f = self.m.callee(if func == Intrinsic::Min { Callee::Minimum } else { Callee::Maximum });
                self.op(name, Ty::F32, format!("call{fmf} nsz float {f}(float {x}, float {y})"))
            }
            (Intrinsic::Min | Intrinsic::Max, _) => {
                let f = self.m.callee(if func == Intrinsic::Min { Callee::SMin } else { Callee::SMax });
                self.op(name, Ty::I32, format!("call i32 {f}(i32 {x}, i32 {y})"))
            }
        };
        Ok(v)
    }

    /// The address of `buf[index]`: row-major offset in i64 elements, `getelementptr inbounds`.
    pub fn address(&mut self, name: &str, b: &BufRef, index: &[Expr], span: Span) -> R<String> {
        if index.len() != b.ty.rank() {
            return Err(self
                .err(
                    span,
                    format!(
                        "`{name}` has {} dimension(s) but {} index(es) are given",
                        b.ty.rank(),
                        index.len()
                    ),
                )
                .with_expected(format!("one i32 index per dimension of {}", b.ty)));
        }
        let mut offset: Option<String> = None;
        let mut const_part: i64 = 0;
        for (e, stride) in index.iter().zip(b.ty.strides()) {
            let v = self.typed(e, Ty::I32, &format!("an index of `{name}`"))?;
            let stride = stride as i64;
            if let Some(c) = v.const_i32() {
                const_part += i64::from(c) * stride;
                continue;
            }
            let wide = self.fresh("idx");
            self.emit(format!("{wide} = sext i32 {} to i64", v.repr));
            let term = if stride == 1 {
                wide
            } else {
                let t = self.fresh("idx");
                self.emit(format!("{t} = mul nsw i64 {wide}, {stride}"));
                t
            };
            offset = Some(match offset {
                None => term,
                Some(o) => {
                    let s = self.fresh("idx");
                    self.emit(format!("{s} = add nsw i64 {o}, {term}"));
                    s
                }
            });
        }
        let offset = match (offset, const_part) {
            (None, 0) => return Ok(b.ptr.clone()),
            (None, c) => c.to_string(),
            (Some(o), 0) => o,
            (Some(o), c) => {
                let s = self.fresh("idx");
                self.emit(format!("{s} = add nsw i64 {o}, {c}"));
                s
            }
        };
        let p = self.fresh(&format!("{name}_p"));
        self.emit(format!(
            "{p} = getelementptr inbounds {}, ptr {}, i64 {offset}",
            elem_ty(b.ty.dtype),
            b.ptr
        ));
        Ok(p)
    }
}

fn icmp_pred(op: BinOp) -> &'static str {
    match op {
        BinOp::Lt => "slt",
        BinOp::Le => "sle",
        BinOp::Gt => "sgt",
        BinOp::Ge => "sge",
        BinOp::Eq => "eq",
        _ => "ne",
    }
}

/// Ordered comparisons are false on NaN, `!=` is true on NaN (as in Rust and C).
fn fcmp_pred(op: BinOp) -> &'static str {
    match op {
        BinOp::Lt => "olt",
        BinOp::Le => "ole",
        BinOp::Gt => "ogt",
        BinOp::Ge => "oge",
        BinOp::Eq => "oeq",
        _ => "une",
    }
}

#[cfg(test)]
mod tests {
    use super::float_lit;

    #[test]
    fn float_literals_are_exact_doubles() {
        assert_eq!(float_lit(1.0), "0x3FF0000000000000");
        assert_eq!(float_lit(-0.0), "0x8000000000000000");
        assert_eq!(float_lit(0.1), format!("0x{:016X}", f64::from(0.1f32).to_bits()));
        assert_eq!(float_lit(f32::INFINITY), "0x7FF0000000000000");
        assert_eq!(float_lit(f32::NAN), "0x7FF8000000000000");
        assert_eq!(float_lit(f32::from_bits(0x7f80_0001)), "0x7FF0000020000000");
    }
}
