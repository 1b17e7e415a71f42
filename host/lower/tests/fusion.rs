//! Fusion groups lower to one kernel per group, on the CPU (default schedule, two targets) and
//! the GPU (OpenCL and CUDA profiles), and the fused module computes what the graph computes
//! (L1 interpreter against the L0 reference). A group the primitives cannot fold is an error
//! at its `fuse` statement.

mod support;

use ekb_ir::l0::Graph;
use ekb_ir::TargetProfile;
use ekb_lower::{lower_gpu, Schedule};
use support::{check_module, graph, run_case, targets};

/// Kernels of a module run by each execution.
fn kernels(m: &ekb_ir::l1::Module) -> usize {
    // An execution's kernels: the prepare steps (a packed weight) run once, before them.
    m.plan.iter().filter(|r| !r.prepare).count()
}

/// Checks `text` (with its `fuse` statements) fused on every CPU and GPU target: correct, and
/// `fused_kernels` kernels on the CPU (each group one kernel), fewer than without the groups.
#[track_caller]
fn check_fused(text: &str, fused_kernels: usize) {
    let g = graph(text);
    let mut plain = g.clone();
    plain.groups.clear();
    for t in targets() {
        let m = run_case(&g, Schedule::Default, &t, 3)
            .unwrap_or_else(|e| panic!("{} on {}: {e}", g.name, t.name));
        assert_eq!(kernels(&m), fused_kernels, "{} on {}:\n{}", g.name, t.name, ekb_ir::l1::print::print(&m));
        let unfused = run_case(&plain, Schedule::Default, &t, 3).expect("the graph lowers without groups");
        assert!(kernels(&unfused) > fused_kernels);
    }
    // The naive schedule is the baseline: it ignores the groups.
    let host = TargetProfile::load("host").expect("shipped profile");
    let naive = run_case(&g, Schedule::Naive, &host, 3).expect("naive lowering");
    assert_eq!(kernels(&naive), g.nodes.len());
    for name in ["pocl", "h200"] {
        let t = TargetProfile::load(name).expect("shipped profile");
        let gpu = |g: &Graph| lower_gpu(g, Schedule::Default, &t).unwrap_or_else(|d| panic!("{name}: {d}"));
        let (m, unfused) = (gpu(&g), gpu(&plain));
        assert!(kernels(&m) < kernels(&unfused), "{name}:\n{}", ekb_ir::l1::print::print(&m));
        check_module(&g, m, &t, 3).unwrap_or_else(|e| panic!("{} on {name}: {e}", g.name));
    }
}

#[test]
fn conv_bias_relu_is_one_kernel() {
    check_fused(
        "graph conv(x: f32[1,3,8,8]) -> (y: f32[0]) {
  param w: f32[8,3,3,3] = kaiming_uniform
  param b: f32[1,8,1,1] = uniform(-0.1, 0.1)
  %0 = conv2d(x, w, pad=[1,1,1,1])
  %1 = add(%0, b)
  %2 = relu(%1)
  fuse %0, %1, %2
  return %2
}",
        1,
    );
}

#[test]
fn matmul_silu_with_a_shared_value_is_one_kernel() {
    // `%0` is read twice in the group (sigmoid and mul): the sigmoid is inlined into the mul,
    // which then joins the matmul's stores.
    check_fused(
        "graph mm(a: f32[6,20], b: f32[20,12]) -> (y: f32[0]) {
  %0 = matmul(a, b)
  %1 = sigmoid(%0)
  %2 = mul(%0, %1)
  fuse %0, %1, %2
  return %2
}",
        1,
    );
}

#[test]
fn linear_gelu_residual_is_one_kernel() {
    check_fused(
        "graph lin(x: f32[4,16]) -> (y: f32[0]) {
  param w: f32[16,16] = kaiming_uniform
  param b: f32[16] = uniform(-0.1, 0.1)
  %0 = linear(x, w, b)
  %1 = gelu(%0)
  %2 = add(%1, x)
  fuse %0, %1, %2
  return %2
}",
        1,
    );
}

#[test]
fn an_elementwise_chain_is_one_kernel() {
    check_fused(
        "graph ew(x: f32[4,33], z: f32[33]) -> (y: f32[0]) {
  %0 = mul(x, x)
  %1 = add(%0, z)
  %2 = tanh(%1)
  fuse %0, %1, %2
  return %2
}",
        1,
    );
}

#[test]
fn a_group_reads_values_the_graph_also_returns() {
    // `%0` and `%1` are outputs written before the group: inputs of its kernel.
    check_fused(
        "graph outs(a: f32[5,7], b: f32[7]) -> (s: f32[5,7], q: f32[5,7], m: f32[5,7]) {
  %0 = add(a, b)
  %1 = sub(a, b)
  %2 = max(%0, %1)
  %3 = mul(%2, b)
  fuse %2, %3
  return %0, %1, %3
}",
        3,
    );
}

#[test]
fn reductions_pools_and_norms_take_their_epilogue() {
    check_fused(
        "graph red(x: f32[2,8,6,6]) -> (y: f32[0], p: f32[0], n: f32[0], r: f32[0]) {
  param s: f32[2,8,1,1] = uniform(0.5, 1.5)
  param g: f32[6] = ones
  param h: f32[6] = zeros
  %0 = global_avg_pool2d(x)
  %1 = mul(%0, s)
  %2 = sigmoid(%1)
  %3 = max_pool2d(x, kernel=[2,2], stride=[2,2])
  %4 = relu(%3)
  %5 = layer_norm(x, g, h, eps=0.00001)
  %6 = add(%5, x)
  %7 = sum(x, axes=[3])
  %8 = sqrt(%7)
  fuse %0, %1, %2
  fuse %3, %4
  fuse %5, %6
  fuse %7, %8
  return %2, %4, %6, %8
}",
        4,
    );
}

#[test]
fn transposes_and_resizes_take_their_epilogue() {
    check_fused(
        "graph mv(x: f32[1,4,5,6]) -> (y: f32[0], z: f32[0]) {
  %0 = transpose(x, perm=[0,2,3,1])
  %1 = neg(%0)
  %2 = resize(x, size=[10,12], mode=bilinear)
  %3 = relu(%2)
  fuse %0, %1
  fuse %2, %3
  return %1, %3
}",
        2,
    );
}

#[test]
fn a_prologue_is_recomputed_inside_its_anchor() {
    check_fused(
        "graph pro(x: f32[1,4,6,6]) -> (y: f32[0]) {
  param w: f32[4,4,1,1] = kaiming_uniform
  %0 = relu(x)
  %1 = conv2d(%0, w)
  %2 = relu(%1)
  fuse %0, %1, %2
  return %2
}",
        1,
    );
}

#[test]
fn conv_batch_norm_relu_is_one_kernel() {
    // batch_norm is elementwise in `x`, its parameters read at the channel index: it joins the
    // convolution's stores like a bias add.
    check_fused(
        "graph cbr(x: f32[2,3,8,8]) -> (y: f32[0]) {
  param w: f32[8,3,3,3] = kaiming_uniform
  param gamma: f32[8] = uniform(0.5, 1.5)
  param beta: f32[8] = uniform(-0.5, 0.5)
  param mean: f32[8] = uniform(-0.2, 0.2)
  param var: f32[8] = uniform(0.5, 1.5)
  %0 = conv2d(x, w, pad=[1,1,1,1])
  %1 = batch_norm(%0, gamma, beta, mean, var, eps=0.00001)
  %2 = relu(%1)
  fuse %0, %1, %2
  return %2
}",
        1,
    );
}

#[test]
fn batch_norm_leads_a_group_as_prologue_or_elementwise_chain() {
    // First member of an all-elementwise group (the relu is the anchor), and a prologue
    // recomputed inside a convolution that reads it at shifted positions.
    check_fused(
        "graph bnr(x: f32[1,4,6,6]) -> (y: f32[0], z: f32[0]) {
  param w: f32[4,4,3,3] = kaiming_uniform
  param gamma: f32[4] = uniform(0.5, 1.5)
  param beta: f32[4] = uniform(-0.5, 0.5)
  param mean: f32[4] = uniform(-0.2, 0.2)
  param var: f32[4] = uniform(0.5, 1.5)
  %0 = batch_norm(x, gamma, beta, mean, var, eps=0.00001)
  %1 = relu(%0)
  %2 = batch_norm(x, gamma, beta, mean, var, eps=0.001)
  %3 = conv2d(%2, w, pad=[1,1,1,1])
  %4 = relu(%3)
  fuse %0, %1
  fuse %2, %3, %4
  return %1, %4
}",
        2,
    );
}

#[test]
fn a_group_the_primitives_refuse_is_an_error_at_its_fuse_statement() {
    // The default CPU softmax stores its output and reads it back to normalise: its stores are
    // not final, so nothing can join them.
    let g = graph(
        "graph sm(x: f32[4,16]) -> (y: f32[0]) {
  %0 = softmax(x, axis=1)
  %1 = mul(%0, x)
  fuse %0, %1
  return %1
}",
    );
    let host = TargetProfile::load("host").expect("shipped profile");
    let d = ekb_lower::lower(&g, Schedule::Default, &host).expect_err("refused");
    assert!(
        d.message.starts_with("fusion group `fuse %0, %1` of graph sm cannot be lowered as one kernel: "),
        "{d}"
    );
    assert!(d.message.contains("reads `t0` back"), "{d}");
    assert!(d.span.is_some(), "{d}");
}

#[test]
fn a_group_of_parameters_alone_is_prepared_node_by_node() {
    // A rotary table: computed from an `iota` and a parameter, once, by prepare steps; only the
    // product with the input runs every execution, on the CPU and on the GPU.
    let g = graph(
        "graph rope(x: f32[8,4]) -> (y: f32[8,4]) {
  param f: f32[4] = uniform(0.5, 1.5)
  %i = iota(shape=[8,4], axis=0, dtype=f32)
  %a = mul(%i, f)
  %c = cos(%a)
  %y = mul(x, %c)
  fuse %a, %c
  return %y
}",
    );
    for t in targets() {
        let m = run_case(&g, Schedule::Default, &t, 3).unwrap_or_else(|e| panic!("{}: {e}", t.name));
        let prepared: Vec<&str> = m.plan.iter().filter(|r| r.prepare).map(|r| r.kernel.as_str()).collect();
        assert_eq!(prepared.len(), 3, "{}:\n{}", t.name, ekb_ir::l1::print::print(&m));
        assert_eq!(kernels(&m), 1, "{}", t.name);
    }
    let t = TargetProfile::load("h200").expect("shipped profile");
    let m = lower_gpu(&g, Schedule::Default, &t).unwrap_or_else(|d| panic!("{d}"));
    let m = check_module(&g, m, &t, 3).unwrap_or_else(|e| panic!("{e}"));
    let prepare: Vec<bool> = m.plan.iter().map(|r| r.prepare).collect();
    assert_eq!(prepare, [true, true, true, false], "{}", ekb_ir::l1::print::print(&m));
}
