//! The lowering pipeline, as an ordered list of steps: check that the graph can be lowered,
//! place every value in a module buffer, emit one kernel per node in node order, emit copy
//! kernels for outputs no node writes, assemble the plan, and (default schedule) fold each
//! fusion group's kernels into one (`fusion`; a group of values computed from parameters alone
//! is left out, its members prepared one by one), move the kernels of nodes computed from
//! parameters alone to the front as `prepare` steps, which run once, before the first execution
//! ([`prepared_nodes`]), let the writers of a concat's operands write its result
//! (`concat_in_place`), and the readers of a slice or a transpose read its operand
//! (`read_in_place`).

use crate::concat_in_place::concat_in_place;
use crate::prepack::Packing;
use crate::read_in_place::{read_in_place, Moves};
use crate::recipe::Knob;
use crate::sched::Cx;
use crate::{
    conv, conv_transpose, elementwise, fusion, matmul, movement, norm, plan, pool, reduce, resize, scan,
    Knobs, Schedule,
};
use ekb_ir::l0::ops::infer;
use ekb_ir::l0::{Graph, Node, Op, ReduceKind};
use ekb_ir::l1::build::{Buf, Names};
use ekb_ir::l1::{
    verify, Access, BufferDecl, BufferRole, ExprKind, Kernel, KernelParam, Module, Name, Run, Stmt,
};
use ekb_ir::{Diagnostic, Span, TargetProfile};
use std::collections::{HashMap, HashSet};

/// Lowers a checked L0 graph into an L1 module under `schedule`, for `target` (the default
/// schedule reads its core count and SIMD width, and the target's default knobs).
pub fn lower(g: &Graph, schedule: Schedule, target: &TargetProfile) -> Result<Module, Diagnostic> {
    lower_with(g, schedule, &Knobs::for_target(target), target)
}

/// [`lower`] with the default schedule's templates reading `knobs`.
pub fn lower_with(
    g: &Graph,
    schedule: Schedule,
    knobs: &Knobs,
    target: &TargetProfile,
) -> Result<Module, Diagnostic> {
    // Types, shapes and sizes first: every later step relies on them.
    check_lowerable(g)?;
    let ungrouped;
    let g = match without_parameter_groups(g, schedule) {
        Some(lean) => {
            ungrouped = lean;
            &ungrouped
        }
        None => g,
    };
    let storage = plan::assign(g)?;
    let typed = |name: &str| Buf::new(storage.loc(name), g.type_of(name).expect("checked above").clone());
    let mut kernels = Vec::new();
    // The naive schedule is the baseline: it ignores fusion groups. The default one gives the
    // members folded into another kernel the plain nests the folding needs.
    let fused = schedule == Schedule::Default && !g.groups.is_empty();
    let folded = if fused { fusion::folded_members(g) } else { Default::default() };
    let default = schedule == Schedule::Default;
    let (ready, prepared) = if default { prepared_nodes(g, &storage) } else { Default::default() };
    // Weights packed by prepare steps: the weight's buffer -> the packed temp.
    let mut packed: HashMap<String, BufferDecl> = HashMap::new();
    // The kernels of the prepare steps, flagged once the groups are folded (the folding works
    // on spans of the plan as single executions; no group member is prepared).
    let mut prepare_kernels: HashSet<String> = HashSet::new();
    // Node order is a topological order (every value is defined before its uses), so running
    // the kernels in this order respects every dependence.
    for (i, node) in g.nodes.iter().enumerate() {
        if storage.is_view(&node.name) {
            continue;
        }
        let mut ins: Vec<Buf> = node.args.iter().map(|a| typed(&a.name)).collect();
        let out = typed(&node.name);
        let name = kernel_name(i, node);
        let member = folded.contains(node.name.as_str());
        let schedule = if member { Schedule::Naive } else { schedule };
        // A weight computed from parameters alone, packed once by a prepare step.
        let packing =
            (default && !member && ready.contains(node.args.get(1).map_or("", |a| a.name.as_str())))
                .then(|| Packing::of(node, &ins, &out, knobs, target))
                .flatten();
        if let Some(packing) = packing {
            let w = ins[1].clone();
            let decl = packed.entry(w.name.clone()).or_insert_with(|| {
                let mut name = format!("{}_packed", w.name);
                while storage.buffers.iter().any(|b| b.name == name) {
                    name.push('_');
                }
                let ty = packing.packed_type(&w.ty);
                let wt = Buf::new(name.clone(), ty.clone());
                let kernel_name = format!("{}_pack", kernel_name(i, node));
                let pack = kernel(
                    kernel_name,
                    std::slice::from_ref(&w),
                    &wt,
                    (schedule, knobs),
                    (target, &storage),
                    |cx| packing.pack(cx, &w, &wt),
                );
                prepare_kernels.insert(pack.0.name.clone());
                kernels.push(pack);
                BufferDecl { name, ty, role: BufferRole::Temp, span: Span::NONE }
            });
            ins[1] = Buf::new(decl.name.clone(), decl.ty.clone());
        }
        if prepared.contains(node.name.as_str()) {
            prepare_kernels.insert(name.clone());
        }
        // Operands read under their own shape only: those computed by a member of this node's
        // own fusion group, folded into its kernel (a group's last member keeps its buffer,
        // which readers elsewhere read), and slices and transposes, which `read_in_place` may
        // read from their operand (it refuses a reader whose view splits the innermost axis).
        let group =
            if fused { g.groups.iter().find(|f| f.nodes.iter().any(|v| v.name == node.name)) } else { None };
        let moved = |v: &str| {
            g.nodes.iter().any(|n| n.name == v && matches!(n.op, Op::Slice { .. } | Op::Transpose { .. }))
        };
        let own_shape: Vec<String> = node
            .args
            .iter()
            .filter(|a| group.is_some_and(|f| f.nodes.iter().any(|v| v.name == a.name)) || moved(&a.name))
            .map(|a| storage.loc(&a.name).to_string())
            .collect();
        kernels.push(kernel(name, &ins, &out, (schedule, knobs), (target, &storage), |cx| {
            cx.folded = member;
            cx.own_shape = own_shape;
            match packing {
                Some(p) => p.lower(cx, node, &ins, &out),
                None => lower_node(cx, node, &ins, &out),
            }
        }));
    }
    // Copies last: their sources (inputs, or outputs written above) are final by then.
    for (j, c) in storage.copies.iter().enumerate() {
        let name = format!("k{}_copy", g.nodes.len() + j);
        let src = Buf::new(c.src.clone(), c.ty.clone());
        let dst = Buf::new(c.dst.clone(), c.ty.clone());
        kernels.push(kernel(
            name,
            std::slice::from_ref(&src),
            &dst,
            (schedule, knobs),
            (target, &storage),
            |cx| movement::copy(cx, &src, &dst),
        ));
    }
    let (kernels, plan): (Vec<Kernel>, Vec<Run>) = kernels.into_iter().unzip();
    let mut buffers = storage.buffers.clone();
    let mut packed: Vec<BufferDecl> = packed.into_values().collect();
    packed.sort_by(|a, b| a.name.cmp(&b.name));
    buffers.extend(packed);
    let mut module = Module { name: g.name.clone(), buffers, kernels, plan, span: Span::NONE };
    if fused {
        module = fusion::fuse_groups(g, module, &|v| storage.loc(v).to_string(), &|n| node_kernel(g, n))?;
    }
    // The prepare steps first: they read parameters and each other's temps only, so moving
    // them ahead of the other steps keeps every dependence.
    for r in &mut module.plan {
        r.prepare = prepare_kernels.contains(&r.kernel);
    }
    let (mut plan, rest): (Vec<Run>, Vec<Run>) = module.plan.into_iter().partition(|r| r.prepare);
    plan.extend(rest);
    module.plan = plan;
    if default && knobs.get(Knob::ConcatInPlace) == 1 {
        module = concat_in_place(g, module, &|v| storage.buffer(storage.loc(v)).to_string(), &|n| {
            node_kernel(g, n)
        });
    }
    if default {
        let moves = Moves {
            slices: knobs.get(Knob::SliceInPlace) == 1,
            transposes: knobs.get(Knob::TransposeInPlace) == 1,
        };
        module = read_in_place(g, module, &moves, &|v| storage.buffer(storage.loc(v)).to_string(), &|n| {
            node_kernel(g, n)
        });
    }
    // Lowering bugs surface here in debug builds rather than as wrong numbers later; a graph
    // too large for the target's memory is the verify stage's finding, not a lowering bug.
    debug_assert!(
        !verify::has_errors(&verify::verify_code(&module, Some(target))),
        "lowering produced a module that does not verify: {:#?}",
        verify::verify_code(&module, Some(target))
            .into_iter()
            .filter(Diagnostic::is_error)
            .collect::<Vec<_>>()
    );
    Ok(module)
}

/// The nodes whose kernels are `prepare` steps: computed from parameters and other prepared
/// values alone (a node without operands, `full` or `iota`, included), by a kernel of their own
/// (not a view, not a fusion group's member) into a temp (a returned value is computed by every
/// execution). Their results then stay in memory across executions: a weight transposed for a
/// product is transposed once, as inference engines pack weights when they load a model.
/// Returns the values ready before the first execution (parameters, prepared nodes and views
/// of them), and the prepared nodes.
pub(crate) fn prepared_nodes<'g>(
    g: &'g Graph,
    storage: &plan::Storage,
) -> (HashSet<&'g str>, HashSet<&'g str>) {
    let grouped: HashSet<&str> =
        g.groups.iter().flat_map(|f| f.nodes.iter().map(|v| v.name.as_str())).collect();
    let mut ready: HashSet<&str> = g.params.iter().map(|p| p.name.as_str()).collect();
    let mut prepared = HashSet::new();
    for node in &g.nodes {
        if !node.args.iter().all(|a| ready.contains(a.name.as_str())) {
            continue;
        }
        let temp =
            storage.buffers.iter().any(|b| b.name == storage.loc(&node.name) && b.role == BufferRole::Temp);
        if storage.is_view(&node.name) {
            ready.insert(&node.name);
        } else if temp && !grouped.contains(node.name.as_str()) {
            ready.insert(&node.name);
            prepared.insert(node.name.as_str());
        }
    }
    (ready, prepared)
}

/// `g` without its fusion groups of values computed from parameters alone, under the default
/// schedule; `None` when it has none. Each member of such a group is then a prepare step of its
/// own, computed once, where the group's kernel would run every execution (rotary tables built
/// from `iota`: 1.14x and 1.35x paired on a 2-core AVX-512 VM, docs/passes.md).
pub(crate) fn without_parameter_groups(g: &Graph, schedule: Schedule) -> Option<Graph> {
    if schedule != Schedule::Default || g.groups.is_empty() {
        return None;
    }
    let mut ready: HashSet<&str> = g.params.iter().map(|p| p.name.as_str()).collect();
    for node in &g.nodes {
        if node.args.iter().all(|a| ready.contains(a.name.as_str())) {
            ready.insert(&node.name);
        }
    }
    let of_parameters =
        |f: &&ekb_ir::l0::FusionGroup| f.nodes.iter().all(|v| ready.contains(v.name.as_str()));
    if !g.groups.iter().any(|f| of_parameters(&f)) {
        return None;
    }
    let groups = g.groups.iter().filter(|f| !of_parameters(f)).cloned().collect();
    Some(Graph { groups, ..g.clone() })
}

/// The name of the kernel computing node `i`: `k{i}_{operator}`.
pub(crate) fn kernel_name(i: usize, node: &Node) -> String {
    format!("k{i}_{}", node.op.name())
}

/// [`kernel_name`] of the node named `name`.
pub(crate) fn node_kernel(g: &Graph, name: &str) -> String {
    let (i, node) = g.nodes.iter().enumerate().find(|(_, n)| n.name == name).expect("a node of the graph");
    kernel_name(i, node)
}

/// Builds one kernel reading `ins` (each distinct buffer or view once, in order) and writing
/// `out`, with the body `emit` produces, and the plan step that runs it (a view's parameter
/// passed its buffer).
fn kernel(
    name: String,
    ins: &[Buf],
    out: &Buf,
    (schedule, knobs): (Schedule, &Knobs),
    (target, storage): (&TargetProfile, &plan::Storage),
    emit: impl FnOnce(&mut Cx) -> Vec<Stmt>,
) -> (Kernel, Run) {
    let mut params: Vec<KernelParam> = Vec::new();
    let mut names = Names::default();
    for b in ins {
        if !params.iter().any(|p| p.name == b.name) {
            params.push(param(b, Access::In));
            names.reserve(&b.name);
        }
    }
    params.push(param(out, Access::Out));
    names.reserve(&out.name);
    let mut cx = Cx::new(schedule, target, names, *knobs);
    let body = if out.ty.numel() == 0 {
        // Nothing to write (a slice or `full` of an empty shape).
        Vec::new()
    } else {
        emit(&mut cx)
    };
    // Views join the parameters before the output, bound to their operand's buffer; an operand
    // the body reads only through views leaves them.
    let mut read = std::collections::HashSet::new();
    ekb_ir::l1::visit::for_each_expr(&body, |e| {
        if let ExprKind::Load { buf, .. } = &e.kind {
            read.insert(buf.name.as_str());
        }
    });
    params.retain(|p| {
        p.access != Access::In || read.contains(p.name.as_str()) || !cx.views.iter().any(|v| v.of == p.name)
    });
    let mut sources: Vec<String> = params.iter().map(|p| p.name.clone()).collect();
    for v in cx.views {
        let at = params.len() - 1;
        params.insert(at, KernelParam { name: v.name, ty: v.ty, access: Access::In, span: Span::NONE });
        sources.insert(at, v.of);
    }
    let args = sources.iter().map(|s| Name::new(storage.buffer(s))).collect();
    let run = Run { kernel: name.clone(), args, span: Span::NONE, prepare: false };
    (Kernel { name, params, body, span: Span::NONE }, run)
}

fn param(b: &Buf, access: Access) -> KernelParam {
    KernelParam { name: b.name.clone(), ty: b.ty.clone(), access, span: Span::NONE }
}

/// Dispatches one node to its operator family. The operands were checked against the shape
/// rules (`check_lowerable`), so their count and ranks are what each family expects.
fn lower_node(cx: &mut Cx, node: &Node, ins: &[Buf], y: &Buf) -> Vec<Stmt> {
    match &node.op {
        Op::Unary(u) => elementwise::unary(cx, *u, &ins[0], y),
        Op::Binary(b) => elementwise::binary(cx, *b, &ins[0], &ins[1], y),
        Op::Reduce { kind, axes, keepdims } => reduce::reduce(cx, *kind, axes, *keepdims, &ins[0], y),
        Op::ArgMax { axis, keepdims } => reduce::argmax(cx, *axis, *keepdims, &ins[0], y),
        Op::Softmax { axis, log } => reduce::softmax(cx, *axis, *log, &ins[0], y),
        Op::LayerNorm { eps } => norm::layer_norm(cx, *eps, &ins[0], &ins[1], Some(&ins[2]), y),
        Op::RmsNorm { eps } => norm::layer_norm(cx, *eps, &ins[0], &ins[1], None, y),
        Op::BatchNorm { eps } => norm::batch_norm(cx, *eps, &ins[0], [&ins[1], &ins[2], &ins[3], &ins[4]], y),
        Op::MatMul { transpose_a, transpose_b } => {
            matmul::matmul(cx, *transpose_a, *transpose_b, &ins[0], &ins[1], y)
        }
        Op::Linear => matmul::linear(cx, &ins[0], &ins[1], ins.get(2), y),
        Op::Conv2d(a) => conv::conv2d(cx, a, &ins[0], &ins[1], ins.get(2), y),
        Op::MaxPool2d(a) => pool::max_pool2d(cx, a, &ins[0], y),
        Op::AvgPool2d { pool, count_include_pad } => {
            pool::avg_pool2d(cx, pool, *count_include_pad, &ins[0], y)
        }
        Op::GlobalAvgPool2d => reduce::reduce(cx, ReduceKind::Mean, &[2, 3], true, &ins[0], y),
        Op::Reshape { .. } => movement::reshape(cx, &ins[0], y),
        Op::Transpose { perm } => movement::transpose(cx, perm, &ins[0], y),
        Op::Concat { axis } => movement::concat(cx, *axis, ins, y),
        Op::Slice { axes, starts, steps, .. } => movement::slice(cx, axes, starts, steps, &ins[0], y),
        Op::Pad { pads, mode } => movement::pad(cx, pads, *mode, &ins[0], y),
        Op::Cast { .. } => elementwise::cast(cx, &ins[0], y),
        Op::Full { value, .. } => elementwise::full(cx, *value, y),
        Op::Compare(op) => elementwise::compare(cx, *op, &ins[0], &ins[1], y),
        Op::Where => elementwise::where_(cx, &ins[0], &ins[1], &ins[2], y),
        Op::Iota { axis, .. } => elementwise::iota(cx, reduce::norm_axis(*axis, y.rank()), y),
        Op::Expand { .. } => movement::expand(cx, &ins[0], y),
        Op::Gather { axis } => movement::gather(cx, *axis, &ins[0], &ins[1], y),
        Op::CumSum { axis, exclusive, reverse } => scan::cumsum(cx, *axis, *exclusive, *reverse, &ins[0], y),
        Op::GroupNorm { groups, eps } => norm::group_norm(cx, *groups, *eps, &ins[0], &ins[1], &ins[2], y),
        Op::ConvTranspose2d(a) => conv_transpose::conv_transpose2d(cx, a, &ins[0], &ins[1], ins.get(2), y),
        Op::Resize { mode, align_corners, .. } => resize::resize(cx, *mode, *align_corners, &ins[0], y),
        Op::QuantizeLinear { scale, zero_point } => {
            elementwise::quantize(cx, *scale, *zero_point, &ins[0], y)
        }
        Op::DequantizeLinear { scale, zero_point } => {
            elementwise::dequantize(cx, *scale, *zero_point, &ins[0], y)
        }
    }
}

/// Rejects graphs lowering cannot handle: untyped nodes, nodes whose type is not what the shape
/// rules give for their operands (every operator family relies on those rules: arity, ranks,
/// extents), and tensors whose element count does not fit the i32 indices of L1.
fn check_lowerable(g: &Graph) -> Result<(), Diagnostic> {
    for n in &g.nodes {
        let ty = n.ty.as_ref().ok_or_else(|| plan::untyped(&n.name, n.span))?;
        let args = n
            .args
            .iter()
            .map(|a| {
                g.type_of(&a.name)
                    .ok_or_else(|| Diagnostic::error(format!("`{}` is not defined", a.name)).at(a.span))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let inferred = infer(&n.op, &args, n.op_span)?;
        if &inferred != ty {
            return Err(Diagnostic::error(format!(
                "node `{}` is typed `{ty}` but `{}` of its operands gives `{inferred}`",
                n.name,
                n.op.name()
            ))
            .at(n.span)
            .with_hint("run the L0 checker (`ekb_ir::l0::check`) before lowering"));
        }
    }
    let limit = i32::MAX as usize;
    let decls = g.inputs.iter().chain(&g.params).map(|d| (&d.name, Some(&d.ty), d.span));
    let nodes = g.nodes.iter().map(|n| (&n.name, n.ty.as_ref(), n.span));
    for (name, ty, span) in decls.chain(nodes) {
        let ty = ty.ok_or_else(|| plan::untyped(name, span))?;
        let numel = ty.shape.iter().try_fold(1usize, |acc, &d| acc.checked_mul(d));
        if numel.is_none_or(|n| n > limit) {
            return Err(Diagnostic::error(format!("`{name}: {ty}` has too many elements to lower"))
                .at(span)
                .with_expected(format!("at most {limit} elements (L1 indices are i32)")));
        }
    }
    Ok(())
}
