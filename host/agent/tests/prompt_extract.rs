//! Prompts built from a real task and target profiles, and candidate extraction from answers.

use ekb_agent::{build_prompt, extract, CandidateKind, ExtractError, Mode, Role};
use ekb_eval::tasks::{load_task, Backend};
use ekb_ir::target::TargetProfile;
use std::path::Path;

fn task() -> ekb_eval::tasks::Task {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tasks/level1/add_resnet18_residual.ekir");
    load_task(&p).unwrap_or_else(|d| panic!("{d:?}"))
}

#[test]
fn the_prompt_holds_the_graph_the_limits_and_an_example() {
    let t = task();
    let profile = TargetProfile::load("rk3588").unwrap();
    let msgs = build_prompt(&t, Backend::Cpu, &profile, Mode::Unified).unwrap();
    assert_eq!(msgs.len(), 2);
    assert_eq!(msgs[0].role, Role::System);
    assert!(msgs[0].content.contains("`parallel i in 0..N` (CPU threads)"));
    let user = &msgs[1].content;
    assert!(user.contains(t.graph_text()), "the task's graph, verbatim");
    assert!(user.contains(&format!("- stack per thread: {} bytes", profile.cpu.stack_bytes)));
    assert!(user.contains(&format!("({} f32 lanes)", profile.cpu_f32_lanes())));
    assert!(user.contains("module bias_relu {"), "the worked example");
    assert!(user.contains("Level-1 task"));
    assert!(user.ends_with("Answer with the L1 module `add_resnet18_residual` in one ```ekir block."));
}

#[test]
fn a_gpu_prompt_gives_the_gpus_limits_and_native_mode_asks_for_cuda() {
    let t = task();
    let profile = TargetProfile::load("jetson-orin").unwrap();
    let gpu = profile.gpu.as_ref().expect("the Jetson has a GPU");
    let msgs = build_prompt(&t, Backend::Cuda, &profile, Mode::Native).unwrap();
    let user = &msgs[1].content;
    assert!(user.contains(&format!("- threads per block: at most {}", gpu.max_threads_per_block)));
    assert!(user.contains(&format!("- shared memory per block: {} bytes", gpu.shared_bytes_per_block)));
    assert!(user.contains("// launch: grid=[4] block=[8]\nextern \"C\" __global__ void bias_relu("));
    assert!(msgs[0].content.contains("extern \"C\" __global__ void NAME(...)"));
    assert!(msgs[0].content.contains("`// launch: grid=[X,Y,Z] block=[X,Y,Z]`"));
    assert!(!msgs[0].content.contains("`vectorize j in 0..N`"), "no L1 reference in native mode");
    // The prompt is a pure function of its inputs.
    assert_eq!(msgs, build_prompt(&t, Backend::Cuda, &profile, Mode::Native).unwrap());
}

const GOOD: &str = "module m {\n  input x: f32[4]\n  output y: f32[4]\n\n  kernel k(x: f32[4] in, y: f32[4] out) {\n    for i in 0..4 {\n      y[i] = x[i]\n    }\n  }\n\n  run k(x, y)\n}\n";

#[test]
fn a_fenced_module_is_found_among_prose() {
    let answer = format!("Here is my kernel:\n\n```ekir\n{GOOD}```\n\nIt copies x to y.");
    let c = extract(&answer, Mode::Unified).unwrap();
    assert_eq!((c.kind, c.text.as_str(), c.parses), (CandidateKind::L1, GOOD, true));
}

#[test]
fn of_several_fences_the_one_that_parses_wins() {
    let broken = "module m {\n  input x f32[4]\n}\n";
    let answer =
        format!("First try:\n```text\n{broken}```\nFixed:\n~~~\n{GOOD}~~~\n```python\nprint(1)\n```\n");
    let c = extract(&answer, Mode::Unified).unwrap();
    assert_eq!(c.text, GOOD);
    assert!(c.parses);
}

#[test]
fn a_module_that_parses_beats_a_repeated_graph_before_it() {
    let graph = "graph m(x: f32[4]) -> (y: f32[4]) {\n  %0 = relu(x)\n  return %0\n}\n";
    let answer = format!("The task:\n```ekir\n{graph}```\nMy module:\n```ekir\n{GOOD}```\n");
    let c = extract(&answer, Mode::Unified).unwrap();
    assert_eq!((c.kind, c.text.as_str()), (CandidateKind::L1, GOOD));
    let c = extract(&format!("```ekir\n{graph}```\n```ekir\nmodule m {{\n  oops\n}}\n```\n"), Mode::Unified)
        .unwrap();
    assert_eq!(
        (c.kind, c.text.as_str(), c.parses),
        (CandidateKind::L0, graph, true),
        "a graph that parses beats a broken module"
    );
}

#[test]
fn when_nothing_parses_the_last_attempt_is_kept_with_its_error() {
    let answer = "```ekir\nmodule a {\n  input x f32[4]\n}\n```\n```ekir\nmodule b {\n  oops\n}\n```\n";
    let c = extract(answer, Mode::Unified).unwrap();
    assert_eq!(c.text, "module b {\n  oops\n}\n");
    assert!(!c.parses);
    assert!(c.parse_error.is_some());
}

#[test]
fn bare_ir_is_cut_out_of_the_prose_around_it() {
    let graph = "graph g(x: f32[2]) -> (y: f32[2]) {\n  %0 = relu(x)\n  return %0\n}\n";
    let answer = format!("The graph module below computes relu.\n{graph}That is all.\n");
    let c = extract(&answer, Mode::Unified).unwrap();
    assert_eq!((c.kind, c.text.as_str(), c.parses), (CandidateKind::L0, graph, true));
}

#[test]
fn prose_only_or_empty_is_a_clear_error() {
    let e = extract("I cannot write this kernel, sorry.", Mode::Unified).unwrap_err();
    assert_eq!(
        e,
        ExtractError::NoProgram { looked_for: "an IR unit (`module NAME {` or `graph NAME(`)", blocks: 0 }
    );
    assert!(e.to_string().starts_with("no candidate in the answer: looked for an IR unit"));
    assert_eq!(extract(" \n", Mode::Native).unwrap_err(), ExtractError::Empty);
    let e = extract("```python\nimport torch\n```", Mode::Native).unwrap_err();
    assert_eq!(e, ExtractError::NoProgram { looked_for: "a function in C, CUDA C or OpenCL C", blocks: 1 });
}

#[test]
fn native_code_is_taken_from_its_language_fence_or_bare() {
    let cuda = "__global__ void k(float *y) { y[threadIdx.x] = 0.0f; }\n";
    let answer = format!("Plan:\n```\nstep 1\n```\n```cuda\n{cuda}```\n");
    let c = extract(&answer, Mode::Native).unwrap();
    assert_eq!((c.kind, c.text.as_str()), (CandidateKind::Native, cuda));
    let bare = "void f(float *y) { y[0] = 1.0f; }";
    assert_eq!(extract(bare, Mode::Native).unwrap().text, format!("{bare}\n"));
}

/// A trace prompt shows the loop program the evaluator replays the trace on: the naive lowering
/// of the task's graph for the backend, printed as `ekb lower --schedule naive` prints it.
#[test]
fn a_trace_prompt_shows_the_loop_program_the_trace_is_replayed_on() {
    let t = task();
    let profile = TargetProfile::load("host").unwrap();
    let msgs = build_prompt(&t, Backend::Cpu, &profile, Mode::Trace).unwrap();
    let start =
        ekb_eval::evaluate::compile::trace_start(&t.graph, &t.source, Backend::Cpu, &profile).unwrap();
    let start = ekb_ir::l1::print::print(&start);
    assert!(start.contains("kernel k0_add("), "{start}");
    let user = &msgs[1].content;
    assert!(user.contains(&format!("```ekir\n{start}```")), "{user}");
    assert!(user.contains(t.graph_text()) && user.contains("reverse_compute_inline t0"), "{user}");
    assert!(
        user.ends_with("Answer with the schedule trace for `add_resnet18_residual` in one ```trace block.")
    );
    let system = &msgs[0].content;
    assert!(system.contains("exactly one fenced code block (```trace ... ```)"), "{system}");
    for (syntax, _) in ekb_agent::prompt::TRACE_PRIMITIVES {
        assert!(system.contains(&format!("`{syntax}`")), "{syntax}");
    }
    assert_eq!(msgs, build_prompt(&t, Backend::Cpu, &profile, Mode::Trace).unwrap(), "a pure function");
    // A GPU instance starts from the GPU lowering: `launch` kernels.
    let gpu = TargetProfile::load("pocl").unwrap();
    let msgs = build_prompt(&t, Backend::Opencl, &gpu, Mode::Trace).unwrap();
    assert!(msgs[1].content.contains("launch grid("), "{}", msgs[1].content);
}

#[test]
fn a_trace_is_taken_from_its_fence_or_an_untagged_block_of_steps() {
    let steps = "split k0_add.i3 by 8 -> o, l\nvectorize l\n";
    let answer = format!("Plan:\n```ekir\nmodule m {{\n}}\n```\nTrace:\n```trace\n{steps}```\nDone.");
    let c = extract(&answer, Mode::Trace).unwrap();
    assert_eq!((c.kind, c.text.as_str(), c.parses, c.parse_error), (CandidateKind::Trace, steps, true, None));
    // Untagged: the block of prose is skipped, the block of steps taken.
    let answer = format!("```\nFirst I split.\n```\n```\n{steps}```\n");
    assert_eq!(extract(&answer, Mode::Trace).unwrap().text, steps);
    // A tagged trace that does not parse is kept with the reader's located error.
    let c = extract("```trace\nparallel k0_add.i1\nvectorise k0_add.i3\n```", Mode::Trace).unwrap();
    assert!(!c.parses);
    let e = c.parse_error.unwrap();
    assert!(e.contains("unknown schedule primitive `vectorise`") && e.contains("candidate.trace:2:1"), "{e}");
    assert!(e.contains("vectorize"), "did you mean: {e}");
    match extract("I would split the loop.\n```\nno steps here\n```", Mode::Trace) {
        Err(ExtractError::NoProgram { looked_for, blocks: 1 }) => assert!(looked_for.contains("```trace")),
        other => panic!("{other:?}"),
    }
}
