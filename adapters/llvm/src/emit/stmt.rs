//! L1 statements -> LLVM instructions: loops (with their `!llvm.loop` hints), `if`, `let`,
//! stores, local allocs, and the outlining of `parallel` loops.
//!
//! Loops are rotated: a guard `lo < hi`, a body block whose phi is the loop variable, and the
//! latch (`v + 1 < hi`, branch back) at the body's end, carrying the loop metadata. `v + 1` is
//! `nsw`: `v < hi <= i32::MAX`. A `parallel` loop becomes a call to `ekb_parallel_for` with a
//! stack context holding every captured value; its body is emitted in two new functions (see
//! the module header of `emit`).

use super::func::{buffer_param, elem_align, elem_ty, llvm_ty, BufRef, FnCx, Val};
use super::{Callee, UNROLL_COUNT, UNROLL_FULL_MAX_TRIPS};
use ekb_ir::diag::{Diagnostic, Span};
use ekb_ir::l1::visit::names_used;
use ekb_ir::l1::{Expr, LoopKind, Stmt, Ty};
use ekb_ir::DType;

type R<T> = Result<T, Diagnostic>;

impl FnCx<'_> {
    /// A block of statements in a new scope.
    pub fn block(&mut self, stmts: &[Stmt]) -> R<()> {
        self.push_scope();
        let r = stmts.iter().try_for_each(|s| self.stmt(s));
        self.pop_scope();
        r
    }

    fn stmt(&mut self, s: &Stmt) -> R<()> {
        match s {
            Stmt::Loop { var, kind: LoopKind::Parallel, lo, hi, body, span } => {
                self.parallel(var, lo, hi, body, *span)
            }
            Stmt::Loop { var, kind, lo, hi, body, .. } => {
                let lo = self.typed(lo, Ty::I32, "a loop bound")?;
                let hi = self.typed(hi, Ty::I32, "a loop bound")?;
                let props = self.loop_props(*kind, &lo, &hi, body);
                let hint = match kind {
                    LoopKind::Vectorize => "vec",
                    LoopKind::Unroll => "unroll",
                    _ => "for",
                };
                let was_fast = self.fast;
                self.fast |= *kind == LoopKind::Vectorize;
                let r = self.counted_loop(hint, var, &lo.repr, &hi.repr, &props, |f, iv| {
                    f.push_scope();
                    f.bind_scalar(var, Val::new(iv, Ty::I32));
                    let r = body.iter().try_for_each(|s| f.stmt(s));
                    f.pop_scope();
                    r
                });
                self.fast = was_fast;
                r
            }
            Stmt::If { cond, then_body, else_body, .. } => {
                let c = self.typed(cond, Ty::Bool, "an `if` condition")?;
                let l = self.fresh_label("if");
                let (then_l, else_l, end_l) = (format!("{l}.then"), format!("{l}.else"), format!("{l}.end"));
                let no_else = else_body.is_empty();
                let false_l = if no_else { &end_l } else { &else_l };
                self.emit(format!("br i1 {}, label %{then_l}, label %{false_l}", c.repr));
                self.start_block(then_l);
                self.block(then_body)?;
                self.emit(format!("br label %{end_l}"));
                if !no_else {
                    self.start_block(else_l);
                    self.block(else_body)?;
                    self.emit(format!("br label %{end_l}"));
                }
                self.start_block(end_l);
                Ok(())
            }
            Stmt::Let { name, value, .. } => {
                let v = self.expr(value)?;
                self.bind_scalar(name, v);
                Ok(())
            }
            Stmt::Store { buf, index, value, span } => {
                let b = self.buf(&buf.name, buf.span)?;
                if !b.writable {
                    return Err(self
                        .err(*span, format!("cannot store to `{}`: it is an `in` parameter", buf.name))
                        .with_hint("declare the parameter `out` or `inout`"));
                }
                let want = Ty::of(b.ty.dtype);
                let mut v =
                    self.typed(value, want, &format!("a value stored to `{}` ({})", buf.name, b.ty))?;
                let p = self.address(&buf.name, &b, index, *span)?;
                let (elem, align) = (elem_ty(b.ty.dtype), elem_align(b.ty.dtype));
                if b.ty.dtype == DType::F16 {
                    // Rounded to the nearest f16, ties to even.
                    let f2h = self.m.callee(Callee::FloatToHalf);
                    v = self.op("fh", want, format!("call i16 {f2h}(float {})", v.repr));
                } else if elem != llvm_ty(want) {
                    // An i8 element keeps the low 8 bits of the i32 value.
                    v = self.op("tr", want, format!("trunc {} {} to {elem}", llvm_ty(want), v.repr));
                }
                self.emit(format!("store {elem} {}, ptr {p}, align {align}", v.repr));
                Ok(())
            }
            Stmt::Alloc { name, ty, .. } => {
                let reg = self.fresh(name);
                self.entry_alloca(format!(
                    "{reg} = alloca [{} x {}], align 64",
                    ty.numel(),
                    elem_ty(ty.dtype)
                ));
                self.bind_buf(name, BufRef { ptr: reg, ty: ty.clone(), writable: true });
                Ok(())
            }
            Stmt::Launch { span, .. } | Stmt::Barrier { span } => Err(self.err(*span, super::NO_GPU)),
        }
    }

    /// The `!llvm.loop` properties of a loop kind, given its (possibly constant) bounds and its
    /// body.
    fn loop_props(&mut self, kind: LoopKind, lo: &Val, hi: &Val, body: &[Stmt]) -> Vec<String> {
        let trips = lo.const_i32().zip(hi.const_i32()).map(|(l, h)| (i64::from(h) - i64::from(l)).max(0));
        let mut props = vec!["!{!\"llvm.loop.mustprogress\"}".to_string()];
        match kind {
            LoopKind::Serial | LoopKind::Parallel => {}
            LoopKind::Vectorize => {
                props.push("!{!\"llvm.loop.vectorize.enable\", i1 true}".into());
                // A vector holds more elements of a narrower type: a loop over i8 data runs 4
                // times the f32 lanes (its i32 sums widen into several registers, or into dot
                // product instructions, as the backend chooses).
                let mut lanes = self.m.lanes * 4 / self.narrowest_element(body);
                // Narrower, down to the f32 lanes, where that leaves no remainder: a known trip
                // count the wide vector does not divide (112 bytes of i8 against 64 lanes) would
                // run its tail as scalar code.
                if let Some(t) = trips.filter(|&t| t % i64::from(lanes) != 0) {
                    let divides = |w: u32| t % i64::from(w) == 0;
                    let mut w = lanes / 2;
                    while w >= self.m.lanes && !divides(w) {
                        w /= 2;
                    }
                    if w >= self.m.lanes && w > 1 {
                        lanes = w;
                    }
                }
                // A fixed width only where a full vector fits; a shorter loop is left to the
                // cost model (it may still vectorise with narrower vectors).
                if lanes > 1 && trips.is_none_or(|t| t >= i64::from(lanes)) {
                    props.push(format!("!{{!\"llvm.loop.vectorize.width\", i32 {lanes}}}"));
                }
                // Keep the loop whole until the vectoriser has seen it: a short constant trip
                // count would otherwise be fully unrolled into scalar code first, and the
                // vectoriser would then pick an outer loop and gather. The vectorised loop and
                // its remainder (the follow-ups) may be unrolled as usual.
                props.push("!{!\"llvm.loop.unroll.disable\"}".into());
                let progress = self.m.shared("!{!\"llvm.loop.mustprogress\"}".into());
                props.push(format!("!{{!\"llvm.loop.vectorize.followup_all\", !{progress}}}"));
            }
            LoopKind::Unroll => match trips {
                Some(t) if t <= UNROLL_FULL_MAX_TRIPS => props.push("!{!\"llvm.loop.unroll.full\"}".into()),
                _ => props.push(format!("!{{!\"llvm.loop.unroll.count\", i32 {UNROLL_COUNT}}}")),
            },
        }
        props
    }

    /// The smallest element size, in bytes, of the buffers `body` reads or writes (4 if none).
    fn narrowest_element(&self, body: &[Stmt]) -> u32 {
        let (_, bufs) = names_used(body);
        bufs.iter()
            .filter_map(|b| self.buf(b, Span::NONE).ok())
            .map(|b| b.ty.dtype.size_bytes() as u32)
            .min()
            .unwrap_or(4)
            .clamp(1, 4)
    }

    /// A rotated counted loop `var in lo..hi` over i32 (`hint` names its blocks); `body` emits
    /// the body given the loop variable's LLVM name.
    fn counted_loop(
        &mut self,
        hint: &str,
        var: &str,
        lo: &str,
        hi: &str,
        props: &[String],
        body: impl FnOnce(&mut Self, &str) -> R<()>,
    ) -> R<()> {
        let l = self.fresh_label(hint);
        let (body_l, exit_l) = (format!("{l}.body"), format!("{l}.exit"));
        let guard = self.fresh("guard");
        self.emit(format!("{guard} = icmp slt i32 {lo}, {hi}"));
        self.emit(format!("br i1 {guard}, label %{body_l}, label %{exit_l}"));
        let pre = self.block.clone();
        self.start_block(body_l.clone());
        let iv = self.fresh(var);
        let phi = self.reserve();
        body(self, &iv)?;
        let next = self.fresh("next");
        let more = self.fresh("more");
        self.emit(format!("{next} = add nsw i32 {iv}, 1"));
        self.emit(format!("{more} = icmp slt i32 {next}, {hi}"));
        let md = self.m.loop_id(props);
        self.emit(format!("br i1 {more}, label %{body_l}, label %{exit_l}, !llvm.loop !{md}"));
        let latch = self.block.clone();
        self.fill(phi, format!("{iv} = phi i32 [ {lo}, %{pre} ], [ {next}, %{latch} ]"));
        self.start_block(exit_l);
        Ok(())
    }

    /// `parallel v in lo..hi { body }`: outlines the body and launches it through
    /// `ekb_parallel_for` over `hi - lo` iterations (none when `hi <= lo`).
    fn parallel(&mut self, var: &str, lo: &Expr, hi: &Expr, body: &[Stmt], span: Span) -> R<()> {
        if self.in_parallel {
            return Err(self.err(span, "nested `parallel` loop").with_hint(
                "make the inner loop `for` or `vectorize`; only one level of CPU threads is supported",
            ));
        }
        let lo = self.typed(lo, Ty::I32, "a loop bound")?;
        let hi = self.typed(hi, Ty::I32, "a loop bound")?;
        let outlined = format!("ekb.{}.par{}", self.kernel, self.m.par_count);
        self.m.par_count += 1;

        // What the body uses from the enclosing scopes: buffers by pointer, scalars by value
        // (constants are re-materialised in the body instead of travelling in the context).
        let (used_scalars, used_bufs) = names_used(body);
        let bufs: Vec<(String, BufRef)> =
            self.visible_bufs().into_iter().filter(|(n, _)| used_bufs.contains(n)).collect();
        let mut scalars: Vec<(String, Val)> = Vec::new();
        let mut consts: Vec<(String, Val)> = Vec::new();
        for (n, v) in self.visible_scalars() {
            if used_scalars.contains(&n) && n != var {
                if v.is_const() {
                    consts.push((n, v));
                } else {
                    scalars.push((n, v));
                }
            }
        }

        self.outline_body(&outlined, var, &lo, body, &bufs, &scalars, &consts)?;

        // Context fields: buffers, captured scalars, then `lo` when it is not a constant.
        let mut fields: Vec<(&'static str, String)> =
            bufs.iter().map(|(_, b)| ("ptr", b.ptr.clone())).collect();
        fields.extend(scalars.iter().map(|(_, v)| (llvm_ty(v.ty), v.repr.clone())));
        if !lo.is_const() {
            fields.push(("i32", lo.repr.clone()));
        }
        let struct_ty = format!("{{ {} }}", fields.iter().map(|f| f.0).collect::<Vec<_>>().join(", "));
        self.trampoline(&outlined, &struct_ty, &fields);

        let l = self.fresh_label("par");
        let (launch_l, done_l) = (format!("{l}.launch"), format!("{l}.done"));
        let (lo64, hi64, n, go) = (self.fresh("lo"), self.fresh("hi"), self.fresh("n"), self.fresh("go"));
        self.emit(format!("{lo64} = sext i32 {} to i64", lo.repr));
        self.emit(format!("{hi64} = sext i32 {} to i64", hi.repr));
        self.emit(format!("{n} = sub nsw i64 {hi64}, {lo64}"));
        self.emit(format!("{go} = icmp sgt i64 {n}, 0"));
        self.emit(format!("br i1 {go}, label %{launch_l}, label %{done_l}"));
        self.start_block(launch_l);
        let ctx = if fields.is_empty() {
            "null".to_string()
        } else {
            let ctx = self.fresh("ctx");
            self.entry_alloca(format!("{ctx} = alloca {struct_ty}, align 8"));
            for (i, (ty, v)) in fields.iter().enumerate() {
                let slot = self.fresh("ctx_slot");
                self.emit(format!("{slot} = getelementptr inbounds {struct_ty}, ptr {ctx}, i32 0, i32 {i}"));
                self.emit(format!("store {ty} {v}, ptr {slot}"));
            }
            ctx
        };
        let pf = self.m.callee(Callee::ParallelFor);
        self.emit(format!("call void {pf}(ptr @{outlined}, ptr {ctx}, i64 {n})"));
        self.emit(format!("br label %{done_l}"));
        self.start_block(done_l);
        Ok(())
    }

    /// `@<outlined>.body(buffers..., scalars..., [i32 lo], i64 begin, i64 end)`: iterations
    /// `[begin, end)` of `0..hi-lo`, that is `var in lo+begin..lo+end`.
    #[allow(clippy::too_many_arguments)]
    fn outline_body(
        &mut self,
        outlined: &str,
        var: &str,
        lo: &Val,
        body: &[Stmt],
        bufs: &[(String, BufRef)],
        scalars: &[(String, Val)],
        consts: &[(String, Val)],
    ) -> R<()> {
        let (kernel, fast) = (self.kernel.clone(), self.fast);
        let mut f = FnCx::new(&mut *self.m, &kernel, true, fast);
        let mut params = Vec::new();
        for (name, b) in bufs {
            let reg = f.fresh(name);
            params.push(buffer_param(&b.ty, b.writable, &reg));
            f.bind_buf(name, BufRef { ptr: reg, ..b.clone() });
        }
        for (name, v) in scalars {
            let reg = f.fresh(name);
            params.push(format!("{} noundef {reg}", llvm_ty(v.ty)));
            f.bind_scalar(name, Val::new(reg, v.ty));
        }
        for (name, v) in consts {
            f.bind_scalar(name, v.clone());
        }
        let lo_repr = if lo.is_const() {
            lo.repr.clone()
        } else {
            let reg = f.fresh("lo");
            params.push(format!("i32 noundef {reg}"));
            reg
        };
        let (begin, end) = (f.fresh("begin"), f.fresh("end"));
        params.push(format!("i64 noundef {begin}"));
        params.push(format!("i64 noundef {end}"));
        // `lo + begin` and `lo + end` lie in `[lo, hi]`, so they fit i32.
        let lo64 = f.fresh("lo");
        f.emit(format!("{lo64} = sext i32 {lo_repr} to i64"));
        let mut bounds = Vec::new();
        for (hint, x) in [("start", &begin), ("stop", &end)] {
            let (wide, narrow) = (f.fresh(hint), f.fresh(hint));
            f.emit(format!("{wide} = add nsw i64 {lo64}, {x}"));
            f.emit(format!("{narrow} = trunc i64 {wide} to i32"));
            bounds.push(narrow);
        }
        let props = vec!["!{!\"llvm.loop.mustprogress\"}".to_string()];
        f.counted_loop("chunk", var, &bounds[0], &bounds[1], &props, |f, v| {
            f.push_scope();
            f.bind_scalar(var, Val::new(v, Ty::I32));
            let r = body.iter().try_for_each(|s| f.stmt(s));
            f.pop_scope();
            r
        })?;
        let text = f.finish(&format!("define internal void @{outlined}.body({})", params.join(", ")));
        self.m.funcs.push(text);
        Ok(())
    }

    /// `@<outlined>(ptr ctx, i64 begin, i64 end)`, the `ekb_parallel_for` callback: unpacks the
    /// context and calls the body.
    fn trampoline(&mut self, outlined: &str, struct_ty: &str, fields: &[(&'static str, String)]) {
        let mut t = format!(
            "define internal void @{outlined}(ptr noundef %ctx, i64 noundef %begin, i64 noundef %end) #0 {{\nentry:\n"
        );
        let mut args = Vec::new();
        for (i, (ty, _)) in fields.iter().enumerate() {
            t.push_str(&format!(
                "  %slot.{i} = getelementptr inbounds {struct_ty}, ptr %ctx, i32 0, i32 {i}\n"
            ));
            t.push_str(&format!("  %field.{i} = load {ty}, ptr %slot.{i}\n"));
            args.push(format!("{ty} %field.{i}"));
        }
        args.push("i64 %begin".into());
        args.push("i64 %end".into());
        t.push_str(&format!("  call void @{outlined}.body({})\n  ret void\n}}\n", args.join(", ")));
        self.m.funcs.push(t);
    }
}
