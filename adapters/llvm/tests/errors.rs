//! Bad input gets a located diagnostic, never a panic: modules the emitter cannot lower, IR that
//! clang rejects, objects that break the kernel ABI, and host runs given the wrong buffers.

mod common;
use common::*;
use ekb_ir::SourceFile;
use ekb_llvm::{compile, emit, HostModule};

/// Emits `text` and returns the error rendered against its source.
fn emit_error(text: &str) -> String {
    let src = SourceFile::new("bad.ekl1", text);
    let m = ekb_ir::l1::parse::parse(&src).unwrap_or_else(|d| panic!("{d}"));
    let d = emit(&m, &host()).expect_err("the emitter must refuse this module");
    src.locate(d).to_string()
}

#[test]
fn nested_parallel_is_refused_at_the_inner_loop() {
    let e = emit_error(
        "module m {
  output y: f32[4,4]
  kernel k(y: f32[4,4] out) {
    parallel i in 0..4 {
      parallel j in 0..4 {
        y[i, j] = 0.0
      }
    }
  }
  run k(y)
}
",
    );
    assert!(e.contains("nested `parallel` loop"), "{e}");
    assert!(e.contains("bad.ekl1:5:7"), "{e}");
    assert!(e.contains("in kernel `k`"), "{e}");
}

#[test]
fn stores_to_in_parameters_and_type_errors_are_refused() {
    let e = emit_error(
        "module m {
  input x: f32[4]
  kernel k(x: f32[4] in) {
    x[0] = 1.0
  }
  run k(x)
}
",
    );
    assert!(e.contains("cannot store to `x`: it is an `in` parameter") && e.contains("bad.ekl1:4:5"), "{e}");
    let e = emit_error(
        "module m {
  output y: f32[4]
  kernel k(y: f32[4] out) {
    for i in 0..4 {
      y[i] = f32(i) + i
    }
  }
  run k(y)
}
",
    );
    assert!(e.contains("`+` operands differ in type: f32 and i32"), "{e}");
    let e = emit_error(
        "module m {
  output y: f32[4]
  kernel k(y: f32[4] out) {
    for idx in 0..4 {
      y[idx] = f32(indx)
    }
  }
  run k(y)
}
",
    );
    assert!(e.contains("unknown variable `indx`") && e.contains("did you mean `idx`?"), "{e}");
}

#[test]
fn kernel_names_must_be_c_identifiers_and_unique() {
    let mut m = module(common::cases::RELU_ADD);
    m.kernels[0].name = "k-0".into();
    let e = emit(&m, &host()).unwrap_err();
    assert!(e.message.contains("`k-0` is not a C identifier"), "{e}");
    m.kernels[0].name = "k1".into();
    let e = emit(&m, &host()).unwrap_err();
    assert!(e.message.contains("kernel `k1` is defined twice"), "{e}");
}

fn compile_error(ir: &str) -> ekb_ir::Diagnostic {
    clang();
    let dir = tempfile::tempdir().unwrap();
    compile(ir, &host(), &dir.path().join("x.o")).expect_err("this IR must be refused")
}

#[test]
fn clang_errors_keep_its_stderr() {
    let d = compile_error("define void @ekb_k_x(ptr %args) {\n  ret i32 0\n}\n");
    assert!(d.message.contains("clang-19 failed") || d.message.contains("clang failed"), "{d}");
    assert!(d.notes.iter().any(|n| n.contains("error:")), "{d}");
    assert!(d.notes.iter().any(|n| n.starts_with("command: ") && n.contains("-x ir")), "{d}");
}

#[test]
fn objects_that_break_the_abi_are_refused_with_every_reason() {
    let triple = host().cpu.triple;
    let d = compile_error(&format!(
        "target triple = \"{triple}\"
@counter = global i32 1
@tls = thread_local global i32 0
declare i32 @printf(ptr, ...)
define void @helper() {{
  ret void
}}
define void @ekb_k_x(ptr %args) {{
  %c = load i32, ptr @counter
  %t = load i32, ptr @tls
  %s = add i32 %c, %t
  store i32 %s, ptr @counter
  call i32 (ptr, ...) @printf(ptr %args)
  ret void
}}
"
    ));
    let text = d.to_string();
    assert!(d.message.contains("breaks the kernel ABI"), "{text}");
    for reason in [
        "undefined symbol `printf` is not in the import table",
        "writable section `.data`",
        "thread-local",
        "exported symbol `helper` is not a kernel entry",
    ] {
        assert!(d.notes.iter().any(|n| n.contains(reason)), "missing `{reason}` in:\n{text}");
    }
}

#[test]
fn imports_called_directly_are_refused() {
    // A declaration without `nonlazybind` and no GOT module flag: `call expf@PLT`, twice.
    let d = compile_error(&format!(
        "target triple = \"{}\"
declare float @expf(float)
define void @ekb_k_x(ptr %args) {{
  %v = load float, ptr %args
  %e = call float @expf(float %v)
  store float %e, ptr %args
  %f = call float @expf(float %e)
  store float %f, ptr %args
  ret void
}}
",
        host().cpu.triple
    ));
    assert!(d.message.contains("(1 problem)"), "{d}");
    let direct: Vec<&String> = d.notes.iter().filter(|n| n.contains("referenced directly")).collect();
    assert_eq!(direct.len(), 1, "one note per symbol:\n{d}");
    assert!(direct[0].contains("`expf` is referenced directly (R_X86_64_PLT32), not through the GOT"), "{d}");
    assert!(d.hint.as_deref().unwrap_or("").contains("nonlazybind"), "{d}");
}

#[test]
fn host_runs_check_their_inputs_and_the_plan() {
    clang();
    let m = module(common::cases::RELU_ADD);
    let hm = HostModule::build(&m, &host(), 2).unwrap();
    let good = || inputs(vec![("x", f32s(&[4, 8], vec![0.0; 32])), ("w", f32s(&[8], vec![0.0; 8]))]);

    let mut i = good();
    i.remove("w");
    let e = hm.run(&m, &i).unwrap_err();
    assert!(e.message.contains("input `w` (f32[8]) was not given"), "{e}");

    let mut i = good();
    i.insert("ww".into(), f32s(&[8], vec![0.0; 8]));
    let e = hm.run(&m, &i).unwrap_err();
    assert!(
        e.message.contains("`ww` is not an input") && e.hint.as_deref() == Some("did you mean `w`?"),
        "{e}"
    );

    let mut i = good();
    i.insert("w".into(), f32s(&[2, 4], vec![0.0; 8]));
    let e = hm.run(&m, &i).unwrap_err();
    assert!(e.message.contains("input of type f32[2,4]"), "{e}");

    // A plan that passes one buffer to an `in` and an `out` parameter of the same run.
    let mut bad = m.clone();
    bad.plan[0].args[1].name = "x".into();
    let e = hm.run(&bad, &good()).unwrap_err();
    assert!(e.message.contains("buffer `x` is passed to `k0` twice"), "{e}");

    // A module that is not the one the library was compiled from.
    let mut other = m.clone();
    other.kernels[1].params[1].ty = ekb_ir::TensorType::new(ekb_ir::DType::F32, [4]);
    let e = hm.run(&other, &good()).unwrap_err();
    assert!(e.message.contains("different parameters than the compiled one"), "{e}");
}

#[test]
fn timing_runs_the_whole_plan_each_sample() {
    clang();
    let m = module(common::cases::PARALLEL);
    let hm = HostModule::build(&m, &host(), 2).unwrap();
    let inputs = (common::cases::all().into_iter().find(|c| c.name == "parallel").unwrap().inputs)();
    let samples = hm.time(&m, &inputs, 2, 5).unwrap();
    assert_eq!(samples.len(), 5);
    assert!(samples.iter().all(|d| !d.is_zero()), "{samples:?}");
    assert!(hm.link_log().command.iter().any(|a| a == "-shared"));
}
