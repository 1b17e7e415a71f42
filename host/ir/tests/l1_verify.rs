//! The L1 verifier: typing, scopes, stores, loop nesting, index bounds by interval analysis, the
//! plan, and allocation legality against a target profile. Each test states the finding it
//! expects in the words of the message, so a vaguer message fails.

use ekb_ir::diag::Severity;
use ekb_ir::l1::parse::parse;
use ekb_ir::l1::verify::verify;
use ekb_ir::l1::*;
use ekb_ir::types::{DType, TensorType};
use ekb_ir::{Diagnostic, SourceFile, Span, TargetProfile};

fn diags_of(text: &str, target: Option<&TargetProfile>) -> Vec<Diagnostic> {
    let src = SourceFile::new("test.ekl1", text);
    let m = parse(&src).unwrap_or_else(|d| panic!("{d}"));
    verify(&m, target).into_iter().map(|d| src.locate(d)).collect()
}

fn errors(text: &str) -> Vec<Diagnostic> {
    diags_of(text, None).into_iter().filter(|d| d.severity == Severity::Error).collect()
}

/// Exactly one error, whose message contains `want`; returns it.
fn one_error(text: &str, want: &str) -> Diagnostic {
    let errs = errors(text);
    assert_eq!(errs.len(), 1, "expected one error containing {want:?}, got:\n{}", render(&errs));
    assert!(errs[0].message.contains(want), "expected {want:?} in:\n{}", errs[0]);
    errs.into_iter().next().unwrap()
}

fn render(ds: &[Diagnostic]) -> String {
    ds.iter().map(|d| d.to_string()).collect::<Vec<_>>().join("\n")
}

/// A one-kernel module around a body: `x: f32[4,8] in`, `y: f32[4,8] out`, `n: i32[4] in`.
fn kernel(body: &str) -> String {
    format!(
        "module m {{\n  input x: f32[4,8]\n  input n: i32[4]\n  output y: f32[4,8]\n\n  \
         kernel k0(x: f32[4,8] in, n: i32[4] in, y: f32[4,8] out) {{\n{body}\n  }}\n\n  run k0(x, n, y)\n}}\n"
    )
}

fn golden(name: &str) -> String {
    std::fs::read_to_string(format!("{}/tests/golden/l1/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

#[test]
fn golden_modules_verify_clean() {
    for name in ["relu_add.ekl1", "conv_pad.ekl1", "ints.ekl1"] {
        let ds = diags_of(&golden(name), None);
        assert!(ds.is_empty(), "{name}:\n{}", render(&ds));
    }
}

#[test]
fn mixed_arithmetic_is_a_type_error_with_the_conversion_to_write() {
    let d = one_error(
        &kernel("    for i in 0..4 {\n      y[i, 0] = x[i, 0] + i\n    }"),
        "cannot add f32 and i32: convert with f32(...)",
    );
    assert!(d.message.contains("`x[i, 0] + i` in kernel k0"), "{d}");
    assert_eq!(d.location.as_ref().unwrap().line, 8);
    one_error(&kernel("    y[0, 0] = 1.0 * 2"), "cannot multiply f32 and i32");
    one_error(&kernel("    let b = 1 < 2.0"), "cannot compare i32 and f32");
    one_error(&kernel("    let b = 5.0 % 2.0"), "`%` needs i32 operands, found f32");
    one_error(&kernel("    let b = 1 && true"), "`&&` needs bool operands, found i32 and bool");
    one_error(&kernel("    let b = !3"), "`!` needs a bool operand, found i32");
    one_error(&kernel("    let b = -true"), "cannot negate a bool");
    one_error(&kernel("    let b = select(1, 2, 3)"), "`select` needs a bool condition, found i32");
    one_error(
        &kernel("    let b = select(true, 2, 3.0)"),
        "the arms of `select` have different types, i32 and f32",
    );
    one_error(&kernel("    let b = exp(1)"), "`exp` takes f32, found i32: convert with f32(...)");
    one_error(&kernel("    let b = max(1, 2.0)"), "`max` needs arguments of one type, found i32 and f32");
    one_error(&kernel("    let b = true == false"), "cannot compare bool values with `==`");
    one_error(&kernel("    if 1 {\n    }"), "the condition of `if` must be bool, found i32");
    one_error(&kernel("    for i in 0..4.0 {\n    }"), "the bounds of loop `i` must be i32, found f32");
    // Integer forms of abs/min/max, casts and comparisons are fine.
    assert!(errors(&kernel(
        "    let a = abs(-3) + min(1, 2) + max(i32(2.5), i32(true))\n    let c = f32(a) < 1.0"
    ))
    .is_empty());
}

#[test]
fn an_ill_typed_operand_is_reported_once() {
    // `q` is undefined: the sum and the store that use it say nothing more.
    one_error(&kernel("    y[0, 0] = q + 1.0 * 2.0"), "undefined variable `q` in kernel k0");
    // A `let` of an ill-typed value is not reported again where it is used.
    one_error(&kernel("    let a = 1 + 2.0\n    let b = a * 3\n    y[0, 0] = a"), "cannot add i32 and f32");
}

#[test]
fn stores_check_the_value_type_the_rank_and_the_access() {
    let d = one_error(
        &kernel("    y[0, 0] = 1"),
        "cannot store i32 into `y` (f32[4,8]) in kernel k0: convert with f32(...)",
    );
    assert_eq!(d.location.clone().unwrap().line, 7);
    one_error(&kernel("    x[0, 0] = 1.0"), "kernel k0 writes `x`, which is an `in` parameter");
    let d = one_error(
        &kernel("    y[0] = 1.0"),
        "`y` has 2 dimensions (f32[4,8]) but is indexed with 1 index in kernel k0",
    );
    assert_eq!(d.expected.as_deref(), Some("one index per dimension: `y[i0, i1]`"));
    one_error(
        &kernel("    let v = x[0, 0, 0]"),
        "`x` has 2 dimensions (f32[4,8]) but is indexed with 3 indices",
    );
    one_error(&kernel("    let v = x[0, 1.0]"), "index 1 of `x` must be i32, found f32");
    // Reading an `out` parameter is allowed: it serves as scratch.
    assert!(errors(&kernel("    y[0, 0] = 1.0\n    y[1, 0] = y[0, 0] * 2.0")).is_empty());
}

#[test]
fn scopes_undefined_names_shadowing_and_module_buffers() {
    let d = one_error(
        &kernel("    for ii in 0..4 {\n      y[i, 0] = 0.0\n    }"),
        "undefined variable `i` in kernel k0",
    );
    assert_eq!(d.hint.as_deref(), Some("did you mean `ii`?"));
    one_error(
        &kernel("    for i in 0..4 {\n      for i in 0..8 {\n      }\n    }"),
        "loop variable `i` shadows an outer `i` in kernel k0",
    );
    one_error(&kernel("    let x = 1"), "`let` `x` shadows an outer `x` in kernel k0");
    one_error(&kernel("    let a = 1\n    let a = 2"), "`a` is defined twice in the same block of kernel k0");
    // Sibling blocks may reuse a name; a `let` is visible after it, not before.
    assert!(errors(&kernel("    for i in 0..4 {\n    }\n    for i in 0..4 {\n    }")).is_empty());
    one_error(&kernel("    let a = b\n    let b = 1"), "undefined variable `b`");
    // A `let` inside a loop is gone after it.
    one_error(
        &kernel("    for i in 0..4 {\n      let a = i\n    }\n    let c = a"),
        "undefined variable `a`",
    );
    one_error(&kernel("    let v = i[0]\n"), "undefined buffer `i` in kernel k0");
    one_error(&kernel("    let v = x + 1.0"), "`x` is a buffer, not a variable, in kernel k0");
    one_error(
        &kernel("    for i in 0..4 {\n      i[0] = 1\n    }"),
        "`i` is a loop variable, not a buffer, in kernel k0",
    );
    // A module buffer that is not a parameter is invisible, and the hint says how to fix it.
    let text = "module m {\n  input x: f32[4]\n  output y: f32[4]\n\n  kernel k0(y: f32[4] out) {\n    y[0] = x[0]\n  }\n\n  run k0(y)\n}\n";
    let d = one_error(text, "undefined buffer `x` in kernel k0");
    assert!(d.hint.clone().unwrap().contains("add `x: f32[4] in` to the parameters of k0"));
}

#[test]
fn allocs_are_visible_in_the_rest_of_their_block() {
    assert!(errors(&kernel(
        "    for i in 0..4 {\n      alloc t: f32[8] local\n      t[0] = 1.0\n      y[i, 0] = t[0]\n    }"
    ))
    .is_empty());
    one_error(
        &kernel("    for i in 0..4 {\n      alloc t: f32[8] local\n    }\n    y[0, 0] = t[0]"),
        "undefined buffer `t`",
    );
}

#[test]
fn parallel_may_not_nest_in_parallel_or_vectorize() {
    one_error(
        &kernel("    parallel i in 0..4 {\n      for j in 0..8 {\n        parallel q in 0..2 {\n        }\n      }\n    }"),
        "parallel loop `q` is nested inside parallel loop `i` in kernel k0",
    );
    one_error(
        &kernel("    vectorize i in 0..4 {\n      parallel j in 0..8 {\n      }\n    }"),
        "parallel loop `j` is nested inside vectorize loop `i` in kernel k0",
    );
    assert!(errors(&kernel(
        "    parallel i in 0..4 {\n      vectorize j in 0..8 {\n        y[i, j] = x[i, j]\n      }\n    }"
    ))
    .is_empty());
}

#[test]
fn constant_out_of_bounds_indices_are_found_by_interval_analysis() {
    let d = one_error(
        &kernel("    for i in 0..4 {\n      y[i, 8] = 0.0\n    }"),
        "index `8` of `y` (dim 1, size 8) ranges over [8, 8] in kernel k0",
    );
    assert_eq!(d.location.clone().unwrap().line, 8);
    one_error(
        &kernel("    for i in 0..5 {\n      y[i, 0] = 0.0\n    }"),
        "index `i` of `y` (dim 0, size 4) ranges over [0, 4] in kernel k0",
    );
    one_error(
        &kernel(
            "    for i in 0..4 {\n      for j in 0..4 {\n        y[i, j * 2 + 1 - 2] = 0.0\n      }\n    }",
        ),
        "index `j * 2 + 1 - 2` of `y` (dim 1, size 8) ranges over [-1, 5]",
    );
    one_error(
        &kernel("    for i in 0..4 {\n      let h = i * 3 / 2\n      y[h, 0] = 0.0\n    }"),
        "index `h` of `y` (dim 0, size 4) ranges over [0, 4]",
    );
    // `%` and `min` keep an index in range; an empty loop never runs.
    assert!(errors(&kernel("    for i in 0..100 {\n      y[i % 4, min(i, 7)] = 0.0\n    }\n    for i in 9..9 {\n      y[i, i] = 0.0\n    }")).is_empty());
    // The padded-conv shape from the brief: `x[.., h * 2 + kh - 1, ..]` of a size-8 dimension.
    one_error(
        &kernel(
            "    for h in 0..4 {\n      for kh in 0..3 {\n        y[0, h * 2 + kh - 1] = 0.0\n      }\n    }",
        ),
        "index `h * 2 + kh - 1` of `y` (dim 1, size 8) ranges over [-1, 7]",
    );
    // Indices computed from loads are unknown: left to the interpreter.
    assert!(errors(&kernel("    for i in 0..4 {\n      y[n[i], 0] = 0.0\n    }")).is_empty());
}

#[test]
fn guards_narrow_intervals_so_the_padded_conv_pattern_verifies() {
    // Guard on a `let`.
    let guarded = "    for h in 0..4 {\n      for kh in 0..3 {\n        let ih = h * 2 + kh - 1\n        if ih >= 0 && ih < 8 {\n          y[0, ih] = 0.0\n        }\n      }\n    }";
    assert!(errors(&kernel(guarded)).is_empty(), "{}", render(&errors(&kernel(guarded))));
    // Guard on the expression itself, constants on either side.
    let inline = "    for h in 0..4 {\n      for kh in 0..3 {\n        if 0 <= h * 2 + kh - 1 && h * 2 + kh - 1 < 8 {\n          y[0, h * 2 + kh - 1] = 0.0\n        }\n      }\n    }";
    assert!(errors(&kernel(inline)).is_empty(), "{}", render(&errors(&kernel(inline))));
    // The index is the `let`'s value written out, guarded through the `let`.
    let alias = "    for h in 0..4 {\n      for kh in 0..3 {\n        let ih = h * 2 + kh - 1\n        if ih >= 0 && ih < 8 {\n          y[0, h * 2 + kh - 1] = 0.0\n        }\n      }\n    }";
    assert!(errors(&kernel(alias)).is_empty(), "{}", render(&errors(&kernel(alias))));
    // The guard is on the expression, the index is the `let` bound to it.
    let reverse = "    for h in 0..4 {\n      for kh in 0..3 {\n        let ih = h * 2 + kh - 1\n        if h * 2 + kh - 1 >= 0 && h * 2 + kh - 1 < 8 {\n          y[0, ih] = 0.0\n        }\n      }\n    }";
    assert!(errors(&kernel(reverse)).is_empty(), "{}", render(&errors(&kernel(reverse))));
    // `else` of a disjunction narrows too: not (ih < 0 || ih >= 8).
    let negated = "    for h in 0..4 {\n      for kh in 0..3 {\n        let ih = h * 2 + kh - 1\n        if ih < 0 || ih >= 8 {\n        } else {\n          y[0, ih] = 0.0\n        }\n      }\n    }";
    assert!(errors(&kernel(negated)).is_empty(), "{}", render(&errors(&kernel(negated))));
    // With h < 4, `ih` never exceeds 7: the lower guard alone suffices.
    let half = "    for h in 0..4 {\n      for kh in 0..3 {\n        let ih = h * 2 + kh - 1\n        if ih >= 0 {\n          y[0, ih] = 0.0\n        }\n      }\n    }";
    assert!(errors(&kernel(half)).is_empty());
}

#[test]
fn guards_that_are_too_weak_still_report() {
    let half = "    for h in 0..5 {\n      for kh in 0..3 {\n        let ih = h * 2 + kh - 1\n        if ih >= 0 {\n          y[0, ih] = 0.0\n        }\n      }\n    }";
    one_error(&kernel(half), "index `ih` of `y` (dim 1, size 8) ranges over [0, 9]");
    // A guard by a variable bound narrows by that variable's interval.
    let by_var = "    for i in 0..4 {\n      for j in 0..16 {\n        if j < i + 6 {\n          y[i, j] = 0.0\n        }\n      }\n    }";
    one_error(&kernel(by_var), "index `j` of `y` (dim 1, size 8) ranges over [0, 8]");
    assert!(errors(&kernel(&by_var.replace("i + 6", "i + 5"))).is_empty());
}

#[test]
fn division_by_a_constant_zero_is_an_error() {
    one_error(&kernel("    let a = 7 / 0"), "integer division by zero (`7 / 0` in kernel k0)");
    one_error(
        &kernel("    let z = 1 - 1\n    let a = 7 % z"),
        "integer division by zero (`7 % z` in kernel k0)",
    );
    // Float division by zero is IEEE (infinity), not an error.
    assert!(errors(&kernel("    y[0, 0] = 1.0 / 0.0")).is_empty());
}

fn plan_module(runs: &str) -> String {
    format!(
        "module m {{\n  input x: f32[4]\n  output y: f32[4]\n  buffer t: f32[4]\n  buffer u: f32[2]\n\n  \
         kernel copy(a: f32[4] in, b: f32[4] out) {{\n    for i in 0..4 {{\n      b[i] = a[i]\n    }}\n  }}\n\n  \
         kernel acc(a: f32[4] in, b: f32[4] inout) {{\n    for i in 0..4 {{\n      b[i] = b[i] + a[i]\n    }}\n  }}\n\n\
         {runs}\n}}\n"
    )
}

#[test]
fn plan_checks() {
    let clean = plan_module("  run copy(x, t)\n  run acc(t, y)\n  run copy(x, y)\n  run acc(x, y)");
    let ds = diags_of(&clean, None);
    assert_eq!(ds.len(), 1, "{}", render(&ds));
    assert_eq!(
        (ds[0].severity, ds[0].message.as_str()),
        (Severity::Warning, "buffer `u` is never used by the plan")
    );

    let d = one_error(&plan_module("  run copy(x, y)\n  run cpy(x, t)"), "run 1 names unknown kernel `cpy`");
    assert_eq!(d.hint.as_deref(), Some("did you mean `copy`?"));
    one_error(
        &plan_module("  run copy(x, y)\n  run copy(x)"),
        "run 1 passes 1 argument to kernel copy, which has 2 parameters",
    );
    let d = one_error(
        &plan_module("  run copy(x, y)\n  run copy(x, u)"),
        "run 1 passes `u` of type f32[2] to parameter `b` of kernel copy, of type f32[4]",
    );
    assert_eq!(d.expected.as_deref(), Some("a buffer of type f32[4] (or another shape of 4 f32 elements)"));
    one_error(
        &plan_module("  run copy(x, y)\n  run copy(y, x)"),
        "run 1 passes input `x` to parameter `b` of kernel copy, which is `out`: inputs are never written",
    );
    one_error(
        &plan_module("  run copy(x, y)\n  run acc(t, y)"),
        "run 1 of kernel acc reads temp `t` (parameter `a`) before any run writes it",
    );
    one_error(
        &plan_module("  run copy(x, t)\n  run acc(t, t)\n  run copy(t, y)"),
        "run 1 passes `t` twice to kernel acc (parameters `a` and `b`) and one of them is written",
    );
    one_error(&plan_module("  run copy(x, t)"), "output `y` is never written by the plan");
    one_error(
        &plan_module("  run copy(x, y)\n  run copy(x, z)"),
        "run 1 of kernel copy passes unknown buffer `z` (parameter `b`)",
    );
    // An `inout` temp is read first: it must have been written before.
    one_error(
        &plan_module("  run copy(x, y)\n  run acc(x, t)"),
        "reads temp `t` (parameter `b`) before any run writes it",
    );
}

#[test]
fn prepare_steps_come_first_write_temps_and_stay_unwritten_after() {
    let clean = plan_module("  prepare copy(x, t)\n  prepare acc(x, t)\n  run copy(t, y)\n  run acc(t, y)");
    assert!(errors(&clean).is_empty(), "{}", render(&errors(&clean)));
    let d = one_error(
        &plan_module("  run copy(x, y)\n  prepare copy(x, t)\n  run acc(t, y)"),
        "prepare step 1 (kernel copy) follows a `run` step",
    );
    assert_eq!(
        d.hint.as_deref(),
        Some("the prepare steps come first in the plan: they run once, before the first execution")
    );
    one_error(
        &plan_module("  prepare copy(x, y)"),
        "prepare step 0 (kernel copy) writes output `y`: prepare steps write temps only",
    );
    one_error(
        &plan_module("  prepare copy(x, t)\n  run acc(x, t)\n  run copy(t, y)"),
        "run 1 (kernel acc) writes `t`, which prepare step 0 computes: prepared temps are read-only to the executions",
    );
    one_error(
        &plan_module("  prepare acc(x, t)\n  run copy(t, y)"),
        "prepare step 0 (kernel acc) reads temp `t`, which no earlier prepare step writes",
    );
    one_error(
        &plan_module("  prepare copy(y, t)\n  run copy(t, y)"),
        "prepare step 0 (kernel copy) reads output `y`, which no earlier prepare step writes",
    );
}

fn profile(stack: u64, memory: u64) -> TargetProfile {
    TargetProfile::parse(
        "small-board",
        &format!(
            "name = \"small-board\"\ndescription = \"test\"\n[cpu]\ntriple = \"aarch64-unknown-linux-gnu\"\n\
             cpu = \"cortex-a55\"\nvector_bits = 128\nstack_bytes = {stack}\nmemory_bytes = {memory}\ncache_line_bytes = 64\n"
        ),
    )
    .unwrap()
}

#[test]
fn stack_allocations_are_checked_against_the_profile() {
    let text = kernel("    alloc big: f32[64,64] local\n    for i in 0..4 {\n      alloc a: f32[256] local\n      alloc b: f32[512] local\n    }\n    for i in 0..4 {\n      alloc c: f32[1024] local\n    }");
    // big 16384 + a 1024 + b 2048 = 19456 at the worst point; big + c = 20480 is worse.
    assert!(diags_of(&text, Some(&profile(20480, 1 << 30))).is_empty());
    let ds: Vec<_> = diags_of(&text, Some(&profile(20000, 1 << 30)));
    assert_eq!(ds.len(), 1, "{}", render(&ds));
    assert_eq!(
        ds[0].message,
        "the allocs live at once in kernel k0 (`big` 16384, `c` 4096) need 20480 bytes of stack, over the limit of \
         20000 bytes from target profile `small-board` (cpu.stack_bytes)"
    );
    let ds = diags_of(&text, Some(&profile(16000, 1 << 30)));
    assert_eq!(ds.len(), 1, "{}", render(&ds));
    assert_eq!(
        ds[0].message,
        "alloc `big` (f32[64,64]) in kernel k0 needs 16384 bytes of stack, over the limit of 16000 bytes from target \
         profile `small-board` (cpu.stack_bytes)"
    );
    assert_eq!(ds[0].location.as_ref().unwrap().line, 7);
}

#[test]
fn a_shipped_profile_limits_the_stack() {
    let host = TargetProfile::load("aarch64-qemu").unwrap();
    let limit = host.cpu.stack_bytes;
    let n = limit / 4 + 1;
    let text = kernel(&format!("    alloc t: f32[{n}] local"));
    let ds = diags_of(&text, Some(&host));
    assert_eq!(ds.len(), 1, "{}", render(&ds));
    assert!(ds[0].message.contains(&format!("needs {} bytes of stack, over the limit of {limit} bytes from target profile `aarch64-qemu` (cpu.stack_bytes)", n * 4)), "{}", ds[0]);
}

#[test]
fn peak_memory_is_checked_against_the_profile() {
    // Inputs 128 + 16, output 128, no temps, no allocs: 272 bytes.
    let text = kernel("    y[0, 0] = 1.0");
    assert!(diags_of(&text, Some(&profile(256, 272))).is_empty());
    let ds = diags_of(&text, Some(&profile(256, 271)));
    assert_eq!(ds.len(), 1, "{}", render(&ds));
    assert_eq!(
        ds[0].message,
        "module m needs 272 bytes of memory (inputs 144 + outputs 128 + temp arena 0 (planned; 0 unplanned) + stack \
         0), over the limit of 271 bytes from target profile `small-board` (cpu.memory_bytes)"
    );
    assert!(
        ds[0].hint.as_deref().is_some_and(|h| h.contains("fewer or smaller temps live at once")),
        "{}",
        ds[0]
    );
}

/// A chain of three steps through two temps of 64 bytes that are never live at once, then a
/// third live with the second.
fn chain() -> String {
    let step = |k: &str, a: &str, b: &str| {
        format!(
            "  kernel {k}({a}: f32[16] in, {b}: f32[16] out) {{\n    for i in 0..16 {{\n      {b}[i] = {a}[i] + 1.0\n    }}\n  }}\n"
        )
    };
    format!(
        "module m {{\n  input x: f32[16]\n  output y: f32[16]\n  buffer t0: f32[16]\n  buffer t1: f32[16]\n  buffer t2: f32[16]\n\n{}{}{}{}\n  \
         run k0(x, t0)\n  run k1(t0, t1)\n  run k2(t1, t2)\n  run k3(t2, y)\n}}\n",
        step("k0", "x", "t0"),
        step("k1", "t0", "t1"),
        step("k2", "t1", "t2"),
        step("k3", "t2", "y")
    )
}

#[test]
fn the_budget_holds_the_planned_footprint_not_every_temp_apart() {
    // Inputs 64 + outputs 64; t0 and t2 share 64 bytes, t1 takes 64 more: an arena of 128 where
    // the temps apart take 192.
    let text = chain();
    assert!(
        diags_of(&text, Some(&profile(64, 256))).is_empty(),
        "{}",
        render(&diags_of(&text, Some(&profile(64, 256))))
    );
    let ds = diags_of(&text, Some(&profile(64, 255)));
    assert_eq!(ds.len(), 1, "{}", render(&ds));
    assert_eq!(
        ds[0].message,
        "module m needs 256 bytes of memory (inputs 64 + outputs 64 + temp arena 128 (planned; 192 unplanned) + stack \
         0), over the limit of 255 bytes from target profile `small-board` (cpu.memory_bytes)"
    );
}

/// A generated module: no spans anywhere, so every message must name what it is about.
#[test]
fn generated_modules_get_self_contained_messages() {
    let ty = TensorType::new(DType::F32, [4]);
    let var = |v: &str| Expr::new(ExprKind::Var(v.into()));
    let m = Module {
        name: "gen".into(),
        buffers: vec![
            BufferDecl { name: "a".into(), ty: ty.clone(), role: BufferRole::Input, span: Span::NONE },
            BufferDecl { name: "b".into(), ty: ty.clone(), role: BufferRole::Output, span: Span::NONE },
        ],
        kernels: vec![Kernel {
            name: "k7".into(),
            params: vec![
                KernelParam { name: "a".into(), ty: ty.clone(), access: Access::In, span: Span::NONE },
                KernelParam { name: "b".into(), ty: ty.clone(), access: Access::Out, span: Span::NONE },
            ],
            body: vec![Stmt::Loop {
                var: "i".into(),
                kind: LoopKind::Serial,
                lo: Expr::new(ExprKind::Int(0)),
                hi: Expr::new(ExprKind::Int(5)),
                body: vec![Stmt::Store {
                    buf: Name::new("a"),
                    index: vec![var("i")],
                    value: Expr::new(ExprKind::Load { buf: Name::new("b"), index: vec![var("i")] }),
                    span: Span::NONE,
                }],
                span: Span::NONE,
            }],
            span: Span::NONE,
        }],
        plan: vec![Run {
            kernel: "k7".into(),
            args: vec![Name::new("a"), Name::new("b")],
            span: Span::NONE,
            prepare: false,
        }],
        span: Span::NONE,
    };
    let ds = verify(&m, None);
    let msgs: Vec<&str> = ds.iter().map(|d| d.message.as_str()).collect();
    assert_eq!(
        msgs,
        [
            "kernel k7 writes `a`, which is an `in` parameter",
            "index `i` of `a` (dim 0, size 4) ranges over [0, 4] in kernel k7",
            "index `i` of `b` (dim 0, size 4) ranges over [0, 4] in kernel k7",
        ]
    );
    assert!(ds.iter().all(|d| d.span.is_none()));
}

/// A parameter may take a buffer under another shape of its element count: the kernel sees the
/// buffer's elements in row-major order under its own shape (a reshape without a copy). Another
/// element type or count is still refused.
#[test]
fn a_parameter_views_a_buffer_of_its_element_count() {
    let module = |param: &str| {
        format!(
            "module m {{\n  input x: f32[2,6]\n  output y: f32[12]\n\n  \
             kernel flat(a: {param} in, b: f32[12] out) {{\n    for i in 0..12 {{\n      b[i] = a[i / 4, i % 4 / 2, i % 2]\n    }}\n  }}\n\n  \
             run flat(x, y)\n}}\n"
        )
    };
    assert!(errors(&module("f32[3,2,2]")).is_empty(), "{}", render(&errors(&module("f32[3,2,2]"))));
    one_error(
        &module("f32[3,2,3]"),
        "run 0 passes `x` of type f32[2,6] to parameter `a` of kernel flat, of type f32[3,2,3]",
    );
    // (The kernel's store of an i32 into f32 is an error of its own.)
    let want = "run 0 passes `x` of type f32[2,6] to parameter `a` of kernel flat, of type i32[3,2,2]";
    let ds = errors(&module("i32[3,2,2]"));
    assert!(ds.iter().any(|d| d.message.contains(want)), "{}", render(&ds));
}
