//! Peak memory of L1 plans, against byte counts worked out by hand in the comments.

use ekb_ir::l1::memory::{kernel_stack, peak_memory, MemoryPlan};
use ekb_ir::l1::parse::parse;
use ekb_ir::l1::Module;
use ekb_ir::SourceFile;

fn module(text: &str) -> Module {
    parse(&SourceFile::new("t.ekl1", text)).unwrap_or_else(|d| panic!("{d}"))
}

/// Inputs 1024 + 256 bytes, output 64 bytes; temps t0 4096, t1 2048, t2 512 bytes.
const PIPELINE: &str = "module mem {
  input x: f32[256]
  input w: i32[64]
  output y: f32[16]
  buffer t0: f32[1024]
  buffer t1: f32[512]
  buffer t2: f32[128]

  kernel a(x: f32[256] in, t0: f32[1024] out) {
    alloc s: f32[32] local
    t0[0] = x[0]
  }

  kernel b(t0: f32[1024] in, t1: f32[512] out) {
    for i in 0..2 {
      alloc p: f32[64] local
      if i == 0 {
        alloc q: i32[16] local
      }
    }
    for i in 0..2 {
      alloc r: f32[100] local
    }
    t1[0] = t0[0]
  }

  kernel c(t1: f32[512] in, w: i32[64] in, t2: f32[128] out) {
    t2[0] = t1[0] + f32(w[0])
  }

  kernel d(t2: f32[128] in, y: f32[16] out) {
    y[0] = t2[0]
  }

  run a(x, t0)
  run b(t0, t1)
  run c(t1, w, t2)
  run d(t2, y)
}
";

#[test]
fn stack_peak_follows_nesting_not_siblings() {
    let m = module(PIPELINE);
    // Kernel b: p (256) + q (64) = 320 live together; r (400) alone is more.
    let b = kernel_stack(m.kernel("b").unwrap());
    assert_eq!(b.bytes, 400);
    assert_eq!(b.allocs, [("r".to_string(), 400)]);
    assert_eq!(kernel_stack(m.kernel("a").unwrap()).bytes, 128);
    assert_eq!(kernel_stack(m.kernel("c").unwrap()).bytes, 0);
    let nested = module(&PIPELINE.replace("alloc r: f32[100] local", "alloc r: f32[10] local"));
    let b = kernel_stack(nested.kernel("b").unwrap());
    assert_eq!((b.bytes, b.allocs.len()), (320, 2));
}

#[test]
fn peak_is_at_the_step_with_the_most_live_bytes() {
    // Step 0: 1344 fixed + t0 4096 + local 128        = 5568
    // Step 1: 1344 fixed + t0 4096 + t1 2048 + local 400 = 7888  <- peak
    // Step 2: 1344 fixed + t1 2048 + t2 512              = 3904
    // Step 3: 1344 fixed + t2 512                        = 1856
    let plan = peak_memory(&module(PIPELINE));
    assert_eq!(
        plan,
        MemoryPlan {
            peak_bytes: 7888,
            step: Some(1),
            kernel: Some("b".into()),
            inputs_bytes: 1280,
            outputs_bytes: 64,
            temps_bytes: 6144,
            live_temps: vec!["t0".into(), "t1".into()],
            local_bytes: 400,
        }
    );
    assert_eq!(
        plan.to_string(),
        "peak 7888 bytes at step 1 (run b): inputs 1280 + outputs 64 + temps 6144 (t0, t1) + local 400"
    );
}

#[test]
fn a_temp_is_live_between_its_first_and_last_use() {
    // t0 is named at steps 0 and 3, so it is live at steps 1 and 2 too: step 2 holds
    // t0 4096 + t1 2048 + t2 512 = 6656 (+1344) = 8000, more than step 1's 1344 + 6144 + local 8 = 7496.
    let text = PIPELINE
        .replace(
            "kernel d(t2: f32[128] in, y: f32[16] out) {\n    y[0] = t2[0]",
            "kernel d(t2: f32[128] in, t0: f32[1024] in, y: f32[16] out) {\n    y[0] = t2[0] + t0[0]",
        )
        .replace("run d(t2, y)", "run d(t2, t0, y)")
        .replace("alloc r: f32[100] local", "alloc r: f32[1] local")
        .replace("alloc p: f32[64] local", "alloc p: f32[1] local")
        .replace("alloc q: i32[16] local", "alloc q: i32[1] local");
    let plan = peak_memory(&module(&text));
    assert_eq!((plan.peak_bytes, plan.step, plan.temps_bytes), (8000, Some(2), 6656));
    assert_eq!(plan.live_temps, ["t0", "t1", "t2"]);
}

#[test]
fn an_empty_plan_holds_inputs_and_outputs() {
    let m = module("module e {\n  input x: f32[10]\n  output y: i32[2,3]\n  buffer t: f32[1000]\n}\n");
    let plan = peak_memory(&m);
    assert_eq!((plan.peak_bytes, plan.step, plan.temps_bytes), (40 + 24, None, 0));
    assert_eq!(plan.to_string(), "peak 64 bytes: inputs 40 + outputs 24 + temps 0 + local 0");
}

#[test]
fn a_prepared_temp_lives_to_the_last_step_and_the_input_it_consumes_to_its_step() {
    // Step 0 prepares t0 from the parameter `x`: the executions after the first read it
    // without step 0, so it stays live to the end; `x` (1024 bytes), which no other step
    // reads, is spent after step 0 and counted like a temp. Fixed: w 256 + y 64 = 320.
    // Step 0: 320 + x 1024 + t0 4096 + local 128           = 5568
    // Step 1: 320 + t0 4096 + t1 2048 + local 400          = 6864
    // Step 2: 320 + t0 4096 + t1 2048 + t2 512             = 6976  <- peak
    // The memory plan keeps t0 out of the arena, apart, and places `x` in it.
    let text = PIPELINE.replace("run a(x, t0)", "prepare a(x, t0)");
    let m = module(&text);
    let lives = ekb_ir::l1::arena::temp_lives(&m);
    assert_eq!(lives[0], ("t0", ekb_ir::l1::arena::TempLife { bytes: 4096, live: Some((0, 3)) }));
    assert_eq!(lives[2].1.live, Some((2, 3)));
    let consumed = ekb_ir::l1::arena::consumed_lives(&m);
    assert_eq!(consumed, [("x", ekb_ir::l1::arena::TempLife { bytes: 1024, live: Some((0, 0)) })]);
    let plan = peak_memory(&m);
    assert_eq!((plan.peak_bytes, plan.step, plan.inputs_bytes), (6976, Some(2), 256));
    let footprint = ekb_ir::l1::arena::plan(&m);
    assert_eq!(
        (footprint.prepared_bytes, footprint.consumed_bytes, footprint.inputs_bytes),
        (4096, 1024, 256)
    );
    let names: Vec<&str> = footprint.offsets.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["x", "t1", "t2"]);
    // `x` and t1 never live at once: t1 takes x's bytes; t2 lives with t1.
    assert_eq!(footprint.arena_bytes, 2048 + 512);
    assert_eq!(footprint.planned_bytes(), 320 + 4096 + footprint.arena_bytes + footprint.stack_bytes);
    assert_eq!(footprint.unplanned_bytes(), 1344 + 4096 + 2048 + 512 + footprint.stack_bytes);
    // Read by an execution step as well, `x` is an input like the others.
    let both = module(&text.replace("run b(t0, t1)", "run b(t0, t1)\n  run a(x, t0)"));
    assert!(ekb_ir::l1::arena::consumed_lives(&both).is_empty());
}
