//! The offline L2 policy: compiler options written into the source of the hottest kernel (the
//! hottest with an L2 finding, else the hottest), the decisions a backend compiler takes by its
//! own heuristics and a source can state instead:
//!
//! - **LLVM IR** (CPU): the interleave count of the vector loops (`llvm.loop.interleave.count`
//!   1, 2 or 4 on every loop the emitter vectorizes: how many vectors of one loop are in flight,
//!   which the vectorizer otherwise picks itself), and on a target with 512-bit vectors the width
//!   the vectorizer prefers for loops whose width the emitter left open
//!   (`"prefer-vector-width"="512"`; LLVM keeps 256 on many AVX-512 cores).
//! - **CUDA C**: the occupancy the register allocator must keep (`__launch_bounds__(T, B)`, at
//!   least `B` = 2 or 4 blocks of the launch's `T` threads resident per multiprocessor), and
//!   `#pragma unroll 4` on every loop.
//! - **C** and **OpenCL C**: nothing yet.
//!
//! What must stay true: deterministic; every proposal is the kernel's current source with one
//! option written in, never the source itself and never an edit the run already tried.

use super::{kernel_source, Context, Edit, LevelAgent, Proposal};
use crate::tree::{Cost, Level};
use ekb_eval::tasks::Backend;
use ekb_ir::Diagnostic;
use std::time::Instant;

/// Compiler options, as an L2 agent.
#[derive(Debug, Default)]
pub struct OfflineL2;

impl LevelAgent for OfflineL2 {
    fn level(&self) -> Level {
        Level::L2
    }

    fn name(&self) -> String {
        "l2-offline".into()
    }

    fn propose(&mut self, ctx: &Context<'_>) -> Result<Vec<Proposal>, Diagnostic> {
        let t0 = Instant::now();
        let Some(kernel) = super::hottest_kernel(ctx) else { return Ok(Vec::new()) };
        let ext = match ctx.layers.kernels.get(&kernel) {
            Some(k) => k.lang.extension(),
            None => match ctx.backend {
                Backend::Cpu => "ll",
                Backend::Cuda => "cu",
                Backend::Opencl => "cl",
            },
        };
        let source = kernel_source(ctx, &kernel)?;
        let variants = match ext {
            "ll" => llvm_variants(&source, ctx.target.cpu.vector_bits),
            "cu" => cuda_variants(&source),
            _ => Vec::new(),
        };
        let routed: Vec<String> = ctx.report.for_level(Level::L2).map(|f| f.evidence.clone()).collect();
        let why = if routed.is_empty() { "no L2 finding; exploring".to_string() } else { routed.join("; ") };
        let mut out = Vec::new();
        for (what, text) in variants {
            let edit = Edit::Kernel { kernel: kernel.clone(), ext: ext.into(), text };
            if out.len() == ctx.want || ctx.tried.iter().any(|n| n.edit.text == edit.text()) {
                continue;
            }
            out.push(Proposal {
                edit: Some(edit),
                rationale: format!("kernel `{kernel}`: {what} ({why})"),
                cost: Cost::default(),
            });
        }
        let wall = t0.elapsed().as_secs_f64() / out.len().max(1) as f64;
        for p in &mut out {
            p.cost.wall_s = wall;
        }
        Ok(out)
    }
}

/// The LLVM IR options, each with what it states: the source with it written in, only where it
/// changes the source.
fn llvm_variants(source: &str, vector_bits: u32) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for count in [2, 4, 1] {
        if let Some(text) = with_interleave(source, count) {
            out.push((
                format!(
                    "{count} vector(s) in flight in each vector loop (`llvm.loop.interleave.count` {count})"
                ),
                text,
            ));
        }
    }
    if vector_bits >= 512 {
        if let Some(text) = with_function_attribute(source, "\"prefer-vector-width\"=\"512\"") {
            out.push(("512-bit vectors for the loops whose width the emitter left to LLVM".into(), text));
        }
    }
    out
}

/// `source` with `!{!"llvm.loop.interleave.count", i32 COUNT}` added to every loop that asks to
/// be vectorized; `None` when it has none (or states an interleave count already).
fn with_interleave(source: &str, count: u32) -> Option<String> {
    if source.contains("llvm.loop.interleave.count") {
        return None;
    }
    // The metadata nodes, `!ID = ...` lines.
    let node = |line: &str| -> Option<(u32, String)> {
        let rest = line.strip_prefix('!')?;
        let (id, body) = rest.split_once(" = ")?;
        Some((id.parse().ok()?, body.to_string()))
    };
    let nodes: Vec<(u32, String)> = source.lines().filter_map(node).collect();
    let enable = nodes.iter().find(|(_, b)| b.contains("!\"llvm.loop.vectorize.enable\", i1 true"))?.0;
    let next = nodes.iter().map(|(id, _)| id + 1).max()?;
    let member = format!("!{enable}");
    let mut changed = false;
    let mut out = String::with_capacity(source.len() + 64);
    for line in source.lines() {
        match node(line) {
            Some((id, body))
                if body.starts_with("distinct !{")
                    && body.trim_end().ends_with('}')
                    && body.split([',', '{', '}']).any(|m| m.trim() == member) =>
            {
                let body = body.trim_end();
                out.push_str(&format!("!{id} = {}, !{next}}}\n", &body[..body.len() - 1]));
                changed = true;
            }
            _ => {
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    changed.then(|| format!("{out}!{next} = !{{!\"llvm.loop.interleave.count\", i32 {count}}}\n"))
}

/// `source` with `attribute` added to every attribute group of its functions (those that are not
/// the imports' `nonlazybind` group); `None` when none changes.
fn with_function_attribute(source: &str, attribute: &str) -> Option<String> {
    let name = attribute.split('=').next()?;
    let mut changed = false;
    let mut out = String::with_capacity(source.len() + 64);
    for line in source.lines() {
        if line.starts_with("attributes #") && !line.contains("nonlazybind") && !line.contains(name) {
            if let Some(open) = line.rfind('}') {
                out.push_str(&format!("{} {attribute} }}\n", line[..open].trim_end()));
                changed = true;
                continue;
            }
        }
        out.push_str(line);
        out.push('\n');
    }
    changed.then_some(out)
}

/// The CUDA C options, each with what it states.
fn cuda_variants(source: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for blocks in [2, 4] {
        if let Some(text) = with_min_blocks(source, blocks) {
            out.push((
                format!("at least {blocks} blocks resident per multiprocessor (`__launch_bounds__(T, {blocks})`): registers capped for occupancy"),
                text,
            ));
        }
    }
    if let Some(text) = with_unroll_pragmas(source, 4) {
        out.push(("every loop unrolled by 4 (`#pragma unroll 4`)".into(), text));
    }
    out
}

/// `source` with each `__launch_bounds__(T)` made `__launch_bounds__(T, BLOCKS)`.
fn with_min_blocks(source: &str, blocks: u32) -> Option<String> {
    let mut out = String::with_capacity(source.len() + 16);
    let mut rest = source;
    let mut changed = false;
    while let Some(at) = rest.find("__launch_bounds__(") {
        let open = at + "__launch_bounds__(".len();
        let close = open + rest[open..].find(')')?;
        out.push_str(&rest[..open]);
        let args = &rest[open..close];
        if args.contains(',') {
            out.push_str(args);
        } else {
            out.push_str(&format!("{}, {blocks}", args.trim()));
            changed = true;
        }
        rest = &rest[close..];
    }
    out.push_str(rest);
    changed.then_some(out)
}

/// `source` with `#pragma unroll FACTOR` before every `for` loop that has no pragma yet.
fn with_unroll_pragmas(source: &str, factor: u32) -> Option<String> {
    let mut out = String::with_capacity(source.len() + 64);
    let mut changed = false;
    let mut previous = "";
    for line in source.lines() {
        let code = line.trim_start();
        if code.starts_with("for (") && !previous.trim_start().starts_with("#pragma unroll") {
            let indent = &line[..line.len() - code.len()];
            out.push_str(&format!("{indent}#pragma unroll {factor}\n"));
            changed = true;
        }
        out.push_str(line);
        out.push('\n');
        previous = line;
    }
    changed.then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const LL: &str = r#"define void @ekb_k_k0(ptr noundef %args) #0 {
  br label %exit, !llvm.loop !5
}
attributes #0 = { nounwind "probe-stack"="inline-asm" }
attributes #1 = { nounwind nonlazybind }
!0 = !{!"llvm.loop.mustprogress"}
!1 = !{!"llvm.loop.vectorize.enable", i1 true}
!2 = !{!"llvm.loop.vectorize.width", i32 16}
!4 = !{!"llvm.loop.vectorize.followup_all", !0}
!5 = distinct !{!5, !0, !1, !2, !4}
!6 = distinct !{!6, !0}
!8 = !{i32 7, !"RtLibUseGOT", i32 1}
"#;

    #[test]
    fn an_interleave_count_joins_every_vector_loop_and_no_other() {
        let text = with_interleave(LL, 4).unwrap();
        assert!(text.contains("!5 = distinct !{!5, !0, !1, !2, !4, !9}\n"), "{text}");
        assert!(text.contains("!6 = distinct !{!6, !0}\n"), "the scalar loop keeps its own: {text}");
        assert!(text.ends_with("!9 = !{!\"llvm.loop.interleave.count\", i32 4}\n"), "{text}");
        assert_eq!(with_interleave(&text, 2), None, "a count stated already is kept");
        assert_eq!(with_interleave(&LL.replace("i1 true", "i1 false"), 2), None, "no vector loop");
    }

    #[test]
    fn a_preferred_width_goes_to_the_kernels_attributes_not_the_imports() {
        let text = with_function_attribute(LL, "\"prefer-vector-width\"=\"512\"").unwrap();
        assert!(text.contains(
            "attributes #0 = { nounwind \"probe-stack\"=\"inline-asm\" \"prefer-vector-width\"=\"512\" }\n"
        ));
        assert!(text.contains("attributes #1 = { nounwind nonlazybind }\n"));
        assert_eq!(with_function_attribute(&text, "\"prefer-vector-width\"=\"512\""), None);
        // Only targets with 512-bit vectors are offered it.
        assert_eq!(llvm_variants(LL, 256).len(), 3);
        assert_eq!(llvm_variants(LL, 512).len(), 4);
    }

    #[test]
    fn launch_bounds_gain_a_block_count_and_loops_a_pragma() {
        let cu = "extern \"C\" __global__ void __launch_bounds__(256) k(const float* __restrict__ x) {\n  for (int k = 0; k < 8; ++k) {\n    #pragma unroll 2\n    for (int j = 0; j < 4; ++j) {}\n  }\n}\n";
        let text = with_min_blocks(cu, 2).unwrap();
        assert!(text.contains("__launch_bounds__(256, 2) k("), "{text}");
        assert_eq!(with_min_blocks(&text, 4), None, "a block count stated already is kept");
        let text = with_unroll_pragmas(cu, 4).unwrap();
        assert_eq!(text.matches("#pragma unroll 4\n").count(), 1, "the loop with a pragma keeps it: {text}");
        assert!(text.contains("  #pragma unroll 4\n  for (int k"), "{text}");
        assert_eq!(cuda_variants("__global__ void k() {}\n"), vec![]);
    }
}
