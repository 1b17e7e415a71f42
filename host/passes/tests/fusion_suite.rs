//! The default pipeline's fusion over every Level-2 and Level-3 task: every group it writes
//! checks, and every fused graph lowers (one kernel per group) for the CPU and for both GPU
//! interfaces; on the three smallest tasks (CPU and GPU modules), and the smallest with a
//! convolution in a group (its CPU module), the fused modules compute what the graph computes
//! (L1 interpreter against the L0 reference).

use ekb_ir::l0::check::load;
use ekb_ir::l0::Graph;
use ekb_ir::tensor::{compare, Tolerance};
use ekb_ir::{SourceFile, TargetProfile};
use ekb_lower::{lower, lower_gpu, lower_with, Knobs, Schedule};
use ekb_passes::{run, Selection};
use std::collections::HashMap;
use std::path::PathBuf;

/// Every task graph of Levels 2 and 3, by file name.
fn tasks() -> Vec<(String, Graph)> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tasks");
    let mut out = Vec::new();
    for level in ["level2", "level3"] {
        let mut paths: Vec<PathBuf> = std::fs::read_dir(root.join(level))
            .expect("the task folder")
            .map(|e| e.expect("an entry").path())
            .filter(|p| p.extension().is_some_and(|e| e == "ekir"))
            .collect();
        paths.sort();
        for p in paths {
            let g = load(&SourceFile::read(&p).expect("readable"))
                .unwrap_or_else(|ds| panic!("{}: {}", p.display(), ds[0]));
            out.push((p.file_stem().expect("a name").to_string_lossy().into_owned(), g));
        }
    }
    out
}

/// Runs the module lowered from `fused` on `g`'s seeded inputs and compares with the reference.
fn agrees(g: &Graph, m: &ekb_ir::l1::Module) -> Result<(), String> {
    let inputs = ekb_ir::l0::inputs::generate(g, 1).map_err(|d| d.to_string())?;
    let tensors = inputs.iter().map(|(n, b)| (n.clone(), b.to_tensor())).collect();
    let want = ekb_ir::l0::interp::run(g, &tensors).map_err(|d| d.to_string())?;
    let buffers: HashMap<_, _> = inputs.into_iter().collect();
    let got = ekb_ir::l1::interp::run(m, &buffers).map_err(|d| d.to_string())?;
    for (o, w) in g.outputs.iter().zip(&want) {
        let b = got.get(&o.name).ok_or_else(|| format!("no output `{}`", o.name))?;
        compare(w, &b.to_tensor(), Tolerance::default_for(o.ty.dtype))
            .map_err(|e| format!("`{}`: {e}", o.name))?;
    }
    Ok(())
}

#[test]
fn every_fused_task_lowers_on_cpu_and_gpu_and_the_smallest_agree() {
    let cpu = TargetProfile::load("host").expect("a shipped profile");
    let gpus = ["pocl", "h200"].map(|t| TargetProfile::load(t).expect("a shipped profile"));
    let tasks = tasks();
    assert!(tasks.len() > 200, "{} task graphs", tasks.len());
    let (mut groups, mut saved) = (0, 0);
    let mut small: Vec<(usize, &str, &Graph, Graph)> = Vec::new();
    let mut fused_graphs = Vec::new();
    for (name, g) in &tasks {
        let fused = run(g, &Selection::Default, None).unwrap_or_else(|d| panic!("{name}: {d}"));
        let mut checked = fused.clone();
        ekb_ir::l0::check::check(&mut checked).unwrap_or_else(|ds| panic!("{name}: {}", ds[0]));
        groups += fused.groups.len();
        saved += fused.groups.iter().map(|f| f.nodes.len() - 1).sum::<usize>();
        fused_graphs.push((name, g, fused));
    }
    // Concatenations, slices and transposes in place remove copy kernels, and where depends on
    // the groups (a kernel naming two operands keeps its copy; a grouped slice is no copy):
    // counted with every copy kept.
    let mut copies = Knobs::for_target(&cpu);
    copies.set("concat.in_place", 0).expect("a knob");
    copies.set("slice.in_place", 0).expect("a knob");
    copies.set("transpose.in_place", 0).expect("a knob");
    for (name, g, fused) in &fused_graphs {
        lower(fused, Schedule::Default, &cpu).unwrap_or_else(|d| panic!("{name} on the CPU: {d}"));
        let m = lower_with(fused, Schedule::Default, &copies, &cpu).expect("lowers");
        // The same graph after the rewrites, without its groups: one kernel per node.
        let unfused = Graph { groups: Vec::new(), ..fused.clone() };
        let unfused = lower_with(&unfused, Schedule::Default, &copies, &cpu).expect("lowers");
        // A group of values computed from parameters alone is left out on the CPU (its members
        // are prepare steps, one kernel each).
        let mut ready: std::collections::HashSet<&str> =
            fused.params.iter().map(|p| p.name.as_str()).collect();
        for n in &fused.nodes {
            if n.args.iter().all(|a| ready.contains(a.name.as_str())) {
                ready.insert(&n.name);
            }
        }
        let folded = fused
            .groups
            .iter()
            .filter(|f| !f.nodes.iter().all(|v| ready.contains(v.name.as_str())))
            .map(|f| f.nodes.len() - 1)
            .sum::<usize>();
        let want = unfused.kernels.len() - folded;
        assert_eq!(m.kernels.len(), want, "{name}: one kernel per group on the CPU");
        for t in &gpus {
            lower_gpu(fused, Schedule::Default, t).unwrap_or_else(|d| panic!("{name} on {}: {d}", t.name));
        }
        // The interpreters' work grows with the elements every node computes.
        let elements: usize = g.nodes.iter().filter_map(|n| n.ty.as_ref()).map(|t| t.numel()).sum();
        if !fused.groups.is_empty() {
            small.push((elements, name, g, fused.clone()));
        }
    }
    assert!(groups > 500, "only {groups} groups over the suite");
    eprintln!("{groups} groups fold {saved} kernels over {} tasks", tasks.len());
    small.sort_by_key(|s| s.0);
    // The three smallest, and the smallest whose groups hold a convolution (its stores take
    // the epilogue).
    let conv = |f: &Graph| {
        f.groups
            .iter()
            .flat_map(|grp| &grp.nodes)
            .any(|v| f.nodes.iter().any(|n| n.name == v.name && matches!(n.op, ekb_ir::l0::Op::Conv2d(_))))
    };
    let first_conv = small.iter().position(|s| conv(&s.3)).expect("a task with a convolution group");
    for (i, (_, name, g, fused)) in small.iter().enumerate().take(first_conv.max(2) + 1) {
        if i >= 3 && i != first_conv {
            continue;
        }
        let m = lower(fused, Schedule::Default, &cpu).expect("lowered above");
        agrees(g, &m).unwrap_or_else(|e| panic!("{name} on the CPU: {e}"));
        // The GPU module of the convolution task runs for half a minute on the L1 interpreter;
        // the lowering's own tests (host/lower/tests/fusion.rs) run a convolution group's GPU
        // kernel on small shapes.
        if i < 3 {
            let m = lower_gpu(fused, Schedule::Default, &gpus[1]).expect("lowered above");
            agrees(g, &m).unwrap_or_else(|e| panic!("{name} on h200: {e}"));
        }
    }
}
