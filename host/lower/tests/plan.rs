//! The module's buffers and plan: names derived from the graph, outputs written in place,
//! copies for outputs that no node writes, and multi-node graphs end to end.

mod support;
use ekb_ir::l1::BufferRole;
use ekb_ir::TargetProfile;
use ekb_lower::{lower, Schedule};
use support::*;

#[test]
fn buffers_are_named_after_the_graph() {
    let g = graph(
        "graph net(x: f32[4,8], t0: f32[8]) -> (y: f32[0]) {\n  param w: f32[8] = ones\n  %0 = add(x, t0)\n  \
         %h = mul(%0, w)\n  %2 = relu(%h)\n  return %2\n}\n",
    );
    check_graph(&g);
    let m = lower(&g, Schedule::Naive, &TargetProfile::load("host").unwrap()).unwrap();
    let bufs: Vec<(&str, BufferRole)> = m.buffers.iter().map(|b| (b.name.as_str(), b.role)).collect();
    assert_eq!(
        bufs,
        [
            ("x", BufferRole::Input),
            ("t0", BufferRole::Input),
            ("w", BufferRole::Input),
            ("y", BufferRole::Output),
            // `t0` is taken by an input, so `%0` gets the next free name.
            ("t0_2", BufferRole::Temp),
            ("t_h", BufferRole::Temp),
        ]
    );
    let kernels: Vec<&str> = m.kernels.iter().map(|k| k.name.as_str()).collect();
    assert_eq!(kernels, ["k0_add", "k1_mul", "k2_relu"]);
    let runs: Vec<Vec<&str>> =
        m.plan.iter().map(|r| r.args.iter().map(|a| a.name.as_str()).collect()).collect();
    assert_eq!(runs, [vec!["x", "t0", "t0_2"], vec!["t0_2", "w", "t_h"], vec!["t_h", "y"]]);
}

#[test]
fn outputs_that_are_inputs_or_repeated_values_are_copied() {
    let g = graph(
        "graph g(x: f32[3,5]) -> (a: f32[0], b: f32[0], c: f32[0], d: f32[0]) {\n  %0 = exp(x)\n  \
         %1 = add(%0, x)\n  return x, %0, %0, %1\n}\n",
    );
    check_graph(&g);
    let m = lower(&g, Schedule::Default, &TargetProfile::load("host").unwrap()).unwrap();
    let kernels: Vec<&str> = m.kernels.iter().map(|k| k.name.as_str()).collect();
    assert_eq!(kernels, ["k0_exp", "k1_add", "k2_copy", "k3_copy"]);
    let runs: Vec<Vec<&str>> =
        m.plan.iter().map(|r| r.args.iter().map(|a| a.name.as_str()).collect()).collect();
    // `%0` lives in `b`; `%1` is read from `b` and written straight into `d`.
    assert_eq!(runs, [vec!["x", "b"], vec!["b", "x", "d"], vec!["x", "a"], vec!["b", "c"]]);
    assert!(m.buffers.iter().all(|b| b.role != BufferRole::Temp));
}

#[test]
fn the_same_operand_twice_is_one_parameter() {
    let g = op("x: f32[4,4]", "mul(x, x)");
    check_graph(&g);
    let m = lower(&g, Schedule::Naive, &TargetProfile::load("host").unwrap()).unwrap();
    assert_eq!(m.kernels[0].params.len(), 2);
    assert_eq!(m.plan[0].args.len(), 2);
}

#[test]
fn a_small_network_end_to_end() {
    let g = graph(
        "graph cnn(x: f32[2,3,16,16]) -> (logits: f32[0], feat: f32[0]) {\n  \
         param w1: f32[8,3,3,3] = kaiming_uniform\n  param b1: f32[8] = uniform(-0.1, 0.1)\n  \
         param g: f32[8] = ones\n  param be: f32[8] = zeros\n  param mu: f32[8] = zeros\n  \
         param var: f32[8] = ones\n  param w2: f32[10,8] = kaiming_uniform\n  \
         %c = conv2d(x, w1, b1, pad=[1,1,1,1])\n  %bn = batch_norm(%c, g, be, mu, var)\n  \
         %r = relu(%bn)\n  %p = max_pool2d(%r, kernel=[2,2])\n  %gap = global_avg_pool2d(%p)\n  \
         %f = reshape(%gap, shape=[2,8])\n  %l = linear(%f, w2)\n  %s = softmax(%l)\n  return %s, %f\n}\n",
    );
    check_graph(&g);
}

#[test]
fn default_schedule_uses_threads_and_lanes_only_when_worth_it() {
    use ekb_ir::l1::LoopKind::{Parallel, Vectorize};
    let big = default_module(&op("x: f32[256,512]", "relu(x)"));
    let kinds = loop_kinds(&big);
    assert!(kinds.contains(&Parallel) && kinds.contains(&Vectorize), "{kinds:?}");
    // 64 elements: far below the threading threshold, still vectorized.
    let small = default_module(&op("x: f32[8,8]", "relu(x)"));
    let kinds = loop_kinds(&small);
    assert!(!kinds.contains(&Parallel) && kinds.contains(&Vectorize), "{kinds:?}");
}

#[test]
fn unchecked_graphs_are_diagnostics_not_panics() {
    let mut g = op("x: f32[3]", "relu(x)");
    let host = TargetProfile::load("host").unwrap();
    g.nodes[0].ty = None;
    let d = lower(&g, Schedule::Naive, &host).unwrap_err();
    assert!(d.message.contains("`%0` has no type"), "{d}");
    g.nodes[0].ty = Some(ekb_ir::TensorType::new(ekb_ir::DType::F32, [4]));
    let d = lower(&g, Schedule::Naive, &host).unwrap_err();
    assert!(d.message.contains("typed `f32[4]`") && d.message.contains("gives `f32[3]`"), "{d}");
}

#[test]
fn nodes_of_parameters_alone_are_prepared_unless_a_run_step_computes_an_operand() {
    // `%0` is returned, so every execution computes it: `%1`, of parameters alone too, reads
    // it and runs with it; `%2` reads the parameter only and is prepared.
    let g = graph(
        "graph t(x: f32[3]) -> (o0: f32[0], o1: f32[0]) {
  param p: f32[3] = uniform(-1, 1)
  %0 = tanh(p)
  %1 = relu(%0)
  %2 = neg(p)
  %3 = add(%1, %2)
  %4 = add(%3, x)
  return %0, %4
}
",
    );
    check_graph(&g);
    let m = default_module(&g);
    let steps: Vec<(bool, &str)> = m.plan.iter().map(|r| (r.prepare, r.kernel.as_str())).collect();
    assert_eq!(steps[0], (true, "k2_neg"), "{steps:?}");
    assert!(steps[1..].iter().all(|(p, _)| !p), "{steps:?}");
}
