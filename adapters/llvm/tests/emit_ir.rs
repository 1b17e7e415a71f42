//! Small exact checks on the emitted LLVM IR of representative kernels: the ABI wrapper, the
//! noalias body, loop metadata per loop kind, fast-math only inside `vectorize`, the outlined
//! `parallel` functions, the division checks and the intrinsics used.

mod common;
use common::*;

/// The text of function `@name` (from `define` to its closing brace).
fn function<'a>(ir: &'a str, name: &str) -> &'a str {
    let start = ir
        .find(&format!("@{name}("))
        .and_then(|at| ir[..at].rfind("define "))
        .unwrap_or_else(|| panic!("no function @{name} in:\n{ir}"));
    let end = start + ir[start..].find("\n}\n").expect("functions end with a brace") + 3;
    &ir[start..end]
}

/// The definition line of the loop ID attached to the `nth` loop latch of function text `f`.
fn loop_md<'a>(ir: &'a str, f: &str, nth: usize) -> &'a str {
    let id = f.lines().filter_map(|l| l.split("!llvm.loop ").nth(1)).nth(nth).expect("a loop");
    ir.lines().find(|l| l.starts_with(&format!("{id} = "))).expect("the loop node")
}

/// The properties of loop node `line`, resolved to their text.
fn props(ir: &str, line: &str) -> Vec<String> {
    line.split("!{")
        .nth(1)
        .unwrap()
        .trim_end_matches('}')
        .split(", ")
        .skip(1)
        .map(|id| {
            ir.lines()
                .find(|l| l.starts_with(&format!("{id} = ")))
                .unwrap()
                .split(" = ")
                .nth(1)
                .unwrap()
                .to_string()
        })
        .collect()
}

const VEC: &str = "module vec_sum {
  input x: f32[64]
  input n: i32[1]
  output y: f32[1]
  output z: f32[64]

  kernel k(x: f32[64] in, n: i32[1] in, y: f32[1] out, z: f32[64] out) {
    alloc acc: f32[1] local
    acc[0] = 0.0
    vectorize i in 0..64 {
      acc[0] = acc[0] + x[i] * 2.0
    }
    y[0] = acc[0]
    for i in 0..64 {
      z[i] = x[i] * 3.0 + 1.0
    }
    unroll i in 0..4 {
      z[i] = -z[i]
    }
    unroll i in 0..n[0] {
      z[i] = z[i] / 2.0
    }
  }

  run k(x, n, y, z)
}
";

#[test]
fn wrapper_unpacks_pointers_into_a_noalias_body() {
    let ir = ekb_llvm::emit(&module(VEC), &host()).unwrap();
    let w = function(&ir, "ekb_k_k");
    assert!(w.starts_with("define void @ekb_k_k(ptr noundef %args)"), "{w}");
    assert!(w.contains("getelementptr inbounds ptr, ptr %args, i64 3"), "{w}");
    assert!(w.contains("call void @ekb.k.body(ptr %arg.0, ptr %arg.1, ptr %arg.2, ptr %arg.3)"), "{w}");
    let b = function(&ir, "ekb.k.body");
    let header = b.lines().next().unwrap();
    assert!(header.starts_with("define internal void @ekb.k.body("), "{header}");
    assert!(
        header.contains("ptr noalias noundef nonnull align 64 dereferenceable(256) readonly %x."),
        "{header}"
    );
    assert!(
        header.contains("ptr noalias noundef nonnull align 64 dereferenceable(4) readonly %n."),
        "{header}"
    );
    assert!(header.contains("ptr noalias noundef nonnull align 64 dereferenceable(256) %z."), "{header}");
    // The local alloc lives in the entry block, before the first loop.
    let entry: Vec<&str> = b.lines().skip(2).take_while(|l| !l.ends_with(':')).collect();
    assert!(entry[0].contains("= alloca [1 x float], align 64"), "{entry:?}");
    // Freestanding: no global variables; the import of the math and parallel entry via GOT.
    assert!(!ir.lines().any(|l| l.starts_with('@')), "{ir}");
    assert!(ir.contains("!{i32 7, !\"RtLibUseGOT\", i32 1}"));
    assert!(ir.contains("target triple = \"x86_64-unknown-linux-gnu\""));
}

#[test]
fn loop_kinds_carry_their_hints_and_fast_math_stays_inside_vectorize() {
    let ir = ekb_llvm::emit(&module(VEC), &host()).unwrap();
    let b = function(&ir, "ekb.k.body");
    let lanes = host().cpu_f32_lanes();
    let vec = props(&ir, loop_md(&ir, b, 0));
    assert_eq!(
        vec[..4],
        [
            "!{!\"llvm.loop.mustprogress\"}".to_string(),
            "!{!\"llvm.loop.vectorize.enable\", i1 true}".into(),
            format!("!{{!\"llvm.loop.vectorize.width\", i32 {lanes}}}"),
            // Not unrolled before the vectoriser sees it; its follow-ups keep only mustprogress.
            "!{!\"llvm.loop.unroll.disable\"}".into(),
        ]
    );
    assert_eq!(vec.len(), 5, "{vec:?}");
    assert!(vec[4].starts_with("!{!\"llvm.loop.vectorize.followup_all\", !"), "{vec:?}");
    assert_eq!(props(&ir, loop_md(&ir, b, 1)), ["!{!\"llvm.loop.mustprogress\"}"]);
    assert_eq!(
        props(&ir, loop_md(&ir, b, 2)),
        ["!{!\"llvm.loop.mustprogress\"}", "!{!\"llvm.loop.unroll.full\"}"]
    );
    assert_eq!(
        props(&ir, loop_md(&ir, b, 3)),
        [
            "!{!\"llvm.loop.mustprogress\"}".to_string(),
            format!("!{{!\"llvm.loop.unroll.count\", i32 {}}}", ekb_llvm::UNROLL_COUNT)
        ]
    );
    // Loop IDs are distinct self-references.
    let id = loop_md(&ir, b, 0);
    let n = id.split(" = ").next().unwrap();
    assert!(id.starts_with(&format!("{n} = distinct !{{{n}, ")), "{id}");
    // Inside `vectorize` both the multiply and the reduction add are reassociable; outside not.
    assert_eq!(b.matches("fmul reassoc contract float").count(), 1, "{b}");
    assert_eq!(b.matches("fadd reassoc contract float").count(), 1, "{b}");
    assert_eq!(b.matches("fmul float").count(), 1, "{b}");
    assert_eq!(b.matches("fadd float").count(), 1, "{b}");
    assert_eq!(b.matches("fneg float").count(), 1, "{b}");
    assert_eq!(b.matches("fdiv float").count(), 1, "{b}");
}

const PAR: &str = "module par {
  input x: f32[8,4]
  input k: i32[1]
  output y: f32[8,4]

  kernel p(x: f32[8,4] in, k: i32[1] in, y: f32[8,4] out) {
    let lo = k[0]
    let scale = 0.5
    let off = f32(lo)
    parallel i in lo..8 {
      alloc tmp: f32[4] local
      vectorize j in 0..4 {
        tmp[j] = x[i, j] * scale + off
      }
      for j in 0..4 {
        y[i, j] = tmp[j]
      }
    }
  }

  run p(x, k, y)
}
";

#[test]
fn parallel_loops_are_outlined_with_a_context_struct() {
    let ir = ekb_llvm::emit(&module(PAR), &host()).unwrap();
    let b = function(&ir, "ekb.p.body");
    // Captured: x and y by pointer, `off` by value (a register), `lo`; the constant `scale` is
    // re-materialised in the outlined body instead of travelling.
    assert!(b.contains("alloca { ptr, ptr, float, i32 }, align 8"), "{b}");
    assert!(b.contains("call void @ekb_parallel_for(ptr @ekb.p.par0, ptr %ctx."), "{b}");
    assert!(b.contains("icmp sgt i64 %n."), "{b}");
    assert!(
        !b.contains("alloca [4 x float]"),
        "the parallel body's alloc belongs to the outlined function:\n{b}"
    );
    let t = function(&ir, "ekb.p.par0");
    assert!(t.starts_with(
        "define internal void @ekb.p.par0(ptr noundef %ctx, i64 noundef %begin, i64 noundef %end)"
    ));
    assert!(t.contains("call void @ekb.p.par0.body(ptr %field.0, ptr %field.1, float %field.2, i32 %field.3, i64 %begin, i64 %end)"), "{t}");
    let pb = function(&ir, "ekb.p.par0.body");
    let header = pb.lines().next().unwrap();
    assert!(
        header.contains("ptr noalias noundef nonnull align 64 dereferenceable(128) readonly %x."),
        "{header}"
    );
    assert!(header.contains("ptr noalias noundef nonnull align 64 dereferenceable(128) %y."), "{header}");
    assert!(header.contains(", i64 noundef %begin.") && header.contains(", i64 noundef %end."), "{header}");
    let entry: Vec<&str> = pb.lines().skip(2).take_while(|l| !l.ends_with(':')).collect();
    assert!(entry[0].contains("= alloca [4 x float], align 64"), "{entry:?}");
    assert!(pb.contains("fmul reassoc contract float %ld."), "{pb}");
    assert!(pb.contains(", 0x3FE0000000000000"), "the constant 0.5 is inlined:\n{pb}");
    assert!(ir.contains("declare void @ekb_parallel_for(ptr, ptr, i64) #1"));
    assert!(ir.contains("attributes #1 = { nounwind nonlazybind }"));
}

const ARITH: &str = "module arith {
  input a: i32[4]
  input x: f32[4]
  output q: i32[4]
  output f: f32[4]

  kernel k(a: i32[4] in, x: f32[4] in, q: i32[4] out, f: f32[4] out) {
    for i in 0..4 {
      q[i] = a[i] / a[3 - i] + a[i] % 7 + abs(a[i]) + min(a[i], 2) + i32(x[i])
      f[i] = exp(x[i]) + max(x[i], 1.0) + rsqrt(x[i]) + floor(x[i]) + f32(a[i] > 0)
    }
  }

  run k(a, x, q, f)
}
";

#[test]
fn arithmetic_is_explicit_about_overflow_division_and_conversions() {
    let ir = ekb_llvm::emit(&module(ARITH), &host()).unwrap();
    let b = function(&ir, "ekb.k.body");
    // Wrapping i32 arithmetic: no nsw/nuw on the L1 operations (only on the loop counter and
    // index arithmetic in i64).
    assert!(b.lines().filter(|l| l.contains(" = add i32 ")).count() >= 4, "{b}");
    assert!(!b.contains("add nsw i32 %ld") && !b.contains("add nuw"), "{b}");
    // A variable divisor: zero traps, -1 is made safe; a constant divisor divides directly.
    assert!(b.contains("icmp eq i32 %ld."), "{b}");
    assert!(b.contains(", label %trap, label %div."), "{b}");
    assert!(b.contains("trap:\n  call void @llvm.trap()\n  unreachable\n"), "{b}");
    assert!(b.contains(", -1\n"), "{b}");
    assert!(b.contains("srem i32 %ld.") && b.contains(", 7\n"), "{b}");
    for call in [
        "call i32 @llvm.abs.i32(i32 %ld.",
        "call i32 @llvm.smin.i32(i32 %ld.",
        "call i32 @ekb_f2i(float %ld.",
        "call float @ekb_exp(float %ld.",
        "call nsz float @llvm.maximum.f32(float %ld.",
        "call float @llvm.sqrt.f32(float %ld.",
        "fdiv float 0x3FF0000000000000, %sqrt.",
        "call float @llvm.floor.f32(float %ld.",
        "uitofp i1 %cmp.",
    ] {
        assert!(b.contains(call), "missing `{call}` in:\n{b}");
    }
    assert!(b.contains(", i1 false)"), "abs(i32::MIN) must not be poison:\n{b}");
    assert!(ir.contains("define internal float @ekb_exp(float %x) alwaysinline nounwind {"));
    assert!(!ir.contains("@expf"), "exp is inline, not the library's");
    // Indexing: sign-extended, row-major, inbounds GEP on the element type.
    assert!(b.contains("getelementptr inbounds i32, ptr %a."), "{b}");
}

#[test]
fn a_narrow_type_vectorises_at_a_width_its_trip_count_divides() {
    // f32 in, i8 out: 4 f32 lanes on the x86-64 baseline, so 16 lanes for the i8 store.
    let text = |n: u32| {
        format!(
            "module q {{
  input x: f32[{n}]
  output y: i8[{n}]
  kernel k(x: f32[{n}] in, y: i8[{n}] out) {{
    vectorize i in 0..{n} {{
      y[i] = i32(x[i])
    }}
  }}
  run k(x, y)
}}
"
        )
    };
    let width = |n: u32| {
        let ir = ekb_llvm::emit(&module(&text(n)), &x86_64_baseline()).unwrap();
        let at = ir.find("llvm.loop.vectorize.width\", i32 ").unwrap_or_else(|| panic!("no width:\n{ir}"));
        ir[at..].split(['}', ' ']).nth(2).unwrap().parse::<u32>().unwrap()
    };
    assert_eq!(width(64), 16, "the full width where it divides");
    assert_eq!(width(40), 8, "40 = 5 x 8: no scalar tail of 8");
    assert_eq!(width(36), 4, "down to the f32 lanes");
    assert_eq!(width(34), 16, "nothing divides: the full width, with its tail");
}

#[test]
fn vectorize_width_is_left_to_llvm_for_short_constant_loops() {
    let m = module(
        "module short {
  output y: f32[3]
  kernel k(y: f32[3] out) {
    vectorize i in 0..3 {
      y[i] = 1.0
    }
  }
  run k(y)
}
",
    );
    let ir = ekb_llvm::emit(&m, &host()).unwrap();
    assert!(ir.contains("llvm.loop.vectorize.enable"), "{ir}");
    assert!(!ir.contains("llvm.loop.vectorize.width"), "{ir}");
}

#[test]
fn vectorize_width_counts_the_narrowest_elements_the_loop_touches() {
    // An i8 dot product: 4 times the f32 lanes; an f16 copy: twice; the f32 loop: the lanes.
    let m = module(
        "module narrow {
  input a: i8[256]
  input h: f16[256]
  output s: i32[1]
  output g: f16[256]
  output f: f32[256]
  kernel k(a: i8[256] in, h: f16[256] in, s: i32[1] out, g: f16[256] out, f: f32[256] out) {
    s[0] = 0
    vectorize i in 0..256 {
      s[0] = s[0] + a[i] * a[i]
    }
    vectorize j in 0..256 {
      g[j] = h[j]
    }
    vectorize l in 0..256 {
      f[l] = 1.0
    }
  }
  run k(a, h, s, g, f)
}
",
    );
    let ir = ekb_llvm::emit(&m, &host()).unwrap();
    let b = function(&ir, "ekb.k.body");
    let lanes = host().cpu_f32_lanes();
    for (i, want) in [4 * lanes, 2 * lanes, lanes].into_iter().enumerate() {
        let p = props(&ir, loop_md(&ir, b, i));
        assert_eq!(p[2], format!("!{{!\"llvm.loop.vectorize.width\", i32 {want}}}"), "loop {i}: {p:?}");
    }
}
