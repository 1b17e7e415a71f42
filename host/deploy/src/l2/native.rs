//! A native answer (`ekb generate --mode native`: C, CUDA C or OpenCL C for the whole task) as
//! an L2 candidate: a plan of one kernel, named after the graph, over all of the graph's buffers
//! (its inputs, then its parameters, then its outputs, in declaration order), whose source is the
//! answer. A GPU answer states its launch geometry in a line `// launch: grid=[X,Y,Z]
//! block=[X,Y,Z]` (one to three sizes each), which becomes the plan's `launch`.
//!
//! What must stay true: the plan is made from the graph alone (the answer cannot change the
//! buffers or their roles); a missing or malformed launch line is an error located in the
//! answer's file, saying the expected form.

use super::{KernelLang, KernelSource, L2};
use ekb_ir::diag::Span;
use ekb_ir::l0::Graph;
use ekb_ir::{l1, Diagnostic, SourceFile};
use std::fmt::Write;

/// The marker of a GPU answer's launch line.
pub const LAUNCH_MARKER: &str = "// launch:";

/// The L2 candidate of the native answer `answer` (in `lang`) for the task `graph`.
pub fn candidate(graph: &Graph, answer: SourceFile, lang: KernelLang) -> Result<L2, Diagnostic> {
    let gpu = matches!(lang, KernelLang::OpenCl | KernelLang::Cuda);
    let launch = if gpu { Some(launch_line(&answer)?) } else { None };
    let text = plan_text(graph, launch);
    let module_source = SourceFile::new(format!("{} (the plan of a native answer)", answer.name), text);
    let module = l1::parse::parse(&module_source)?;
    let kernel = KernelSource { kernel: graph.name.clone(), lang, source: answer };
    Ok(L2 { module_source, module, kernels: vec![kernel] })
}

/// The L1 text of the one-kernel plan: every graph input and parameter an `input`, every
/// output an `output`, and the kernel over them, a `launch` of `geometry` on a GPU.
fn plan_text(graph: &Graph, geometry: Option<([u32; 3], [u32; 3])>) -> String {
    let mut s = format!("module {} {{\n", graph.name);
    let mut params = Vec::new();
    for d in graph.inputs.iter().chain(&graph.params) {
        let _ = writeln!(s, "  input {}: {}", d.name, d.ty);
        params.push((d.name.as_str(), d.ty.to_string(), "in"));
    }
    for o in &graph.outputs {
        let _ = writeln!(s, "  output {}: {}", o.name, o.ty);
        params.push((o.name.as_str(), o.ty.to_string(), "out"));
    }
    let signature: Vec<String> = params.iter().map(|(n, t, a)| format!("{n}: {t} {a}")).collect();
    let _ = writeln!(s, "\n  kernel {}({}) {{", graph.name, signature.join(", "));
    if let Some((grid, block)) = geometry {
        let dims = |var: &str, sizes: [u32; 3]| {
            sizes
                .iter()
                .enumerate()
                .map(|(i, n)| format!("{var}{i} in 0..{n}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let _ = writeln!(s, "    launch grid({}) block({}) {{\n    }}", dims("b", grid), dims("t", block));
    }
    let args: Vec<&str> = params.iter().map(|(n, _, _)| *n).collect();
    let _ = writeln!(s, "  }}\n\n  run {}({})\n}}", graph.name, args.join(", "));
    s
}

/// The grid and block sizes of the answer's `// launch: grid=[..] block=[..]` line (missing
/// sizes are 1).
fn launch_line(answer: &SourceFile) -> Result<([u32; 3], [u32; 3]), Diagnostic> {
    let form = "`// launch: grid=[X,Y,Z] block=[X,Y,Z]` (one to three positive sizes each)";
    let mut offset = 0;
    for line in answer.text.split_inclusive('\n') {
        let start = offset;
        offset += line.len();
        let Some(at) = line.find(LAUNCH_MARKER) else { continue };
        let span = Span::new(start + at, start + line.trim_end().len());
        let rest = &line[at + LAUNCH_MARKER.len()..];
        let bad = |what: String| answer.locate(Diagnostic::error(what).at(span).with_expected(form));
        let grid = sizes(rest, "grid").map_err(bad)?;
        let block = sizes(rest, "block").map_err(bad)?;
        return Ok((grid, block));
    }
    Err(answer.locate(
        Diagnostic::error("the answer does not say its launch geometry")
            .with_expected(format!("a line {form} in the source"))
            .with_hint(
                "the runtime launches the kernel once with these sizes; add the line above the kernel",
            ),
    ))
}

/// The sizes of `KEY=[a,b,c]` in `text`.
fn sizes(text: &str, key: &str) -> Result<[u32; 3], String> {
    let pattern = format!("{key}=[");
    let start = text.find(&pattern).ok_or_else(|| format!("the launch line has no `{key}=[..]`"))?;
    let body = &text[start + pattern.len()..];
    let end = body.find(']').ok_or_else(|| format!("`{key}=[` is not closed with `]`"))?;
    let items: Vec<&str> = body[..end].split(',').map(str::trim).collect();
    if items.is_empty() || items.len() > 3 {
        return Err(format!("`{key}` has {} sizes", items.len()));
    }
    let mut out = [1u32; 3];
    for (slot, item) in out.iter_mut().zip(&items) {
        *slot = item
            .parse::<u32>()
            .ok()
            .filter(|&n| n > 0)
            .ok_or_else(|| format!("`{item}` in `{key}` is not a positive size"))?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph() -> Graph {
        let text = "graph bias_relu(x: f32[4,8]) -> (y: f32[4,8]) {\n  param b: f32[8] = uniform(-0.1, 0.1)\n  %0 = add(x, b)\n  %1 = relu(%0)\n  return %1\n}\n";
        ekb_ir::l0::check::load(&SourceFile::new("g.ekir", text)).unwrap()
    }

    #[test]
    fn a_cpu_answer_is_one_kernel_over_every_graph_buffer() {
        let answer = SourceFile::new("a/candidate.c", "void ekb_k_bias_relu(void *const *args) {}\n");
        let l2 = candidate(&graph(), answer, KernelLang::C).unwrap();
        let m = &l2.module;
        let names: Vec<&str> = m.buffers.iter().map(|b| b.name.as_str()).collect();
        assert_eq!(names, ["x", "b", "y"]);
        assert_eq!(m.kernels.len(), 1);
        assert_eq!(m.kernels[0].name, "bias_relu");
        let access: Vec<_> = m.kernels[0].params.iter().map(|p| p.access).collect();
        assert_eq!(access, [l1::Access::In, l1::Access::In, l1::Access::Out]);
        assert!(l1::verify::verify(m, None).iter().all(|d| !d.is_error()));
        assert_eq!(l2.kernels[0].kernel, "bias_relu");
    }

    #[test]
    fn a_gpu_answer_states_its_launch_geometry() {
        let text = "// launch: grid=[4] block=[8, 2]\n__kernel void bias_relu() {}\n";
        let l2 = candidate(&graph(), SourceFile::new("a/candidate.cl", text), KernelLang::OpenCl).unwrap();
        let shape = l1::gpu::LaunchShape::of(&l2.module.kernels[0]).expect("a GPU kernel");
        assert_eq!((shape.grid, shape.block), ([4, 1, 1], [8, 2, 1]));
    }

    #[test]
    fn a_missing_or_bad_launch_line_is_located_in_the_answer() {
        let missing = SourceFile::new("a/candidate.cu", "__global__ void bias_relu() {}\n");
        let d = candidate(&graph(), missing, KernelLang::Cuda).unwrap_err().to_string();
        assert!(d.contains("a/candidate.cu") && d.contains("launch geometry"), "{d}");
        let bad = SourceFile::new("a/candidate.cu", "int x;\n// launch: grid=[0] block=[32]\n");
        let d = candidate(&graph(), bad, KernelLang::Cuda).unwrap_err().to_string();
        assert!(d.contains("a/candidate.cu:2") && d.contains("`0` in `grid`"), "{d}");
    }
}
