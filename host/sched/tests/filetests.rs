//! File tests of the schedule primitives (`tests/files/*.test`), in the style of LLVM lit and
//! Cranelift's filetests. A file holds, in order:
//!
//! - the input program (an L0 graph, lowered under the naive schedule for the host, or an L1
//!   module), whose leading comments may say `# run: interp, llvm, opencl, cuda` (the backends
//!   on which the scheduled module must compute what the input computes on the same seeded
//!   inputs, the input run on the L1 interpreter): `interp` bit for bit on 3 seeds; `llvm`
//!   compiled for the host with clang-19 and run on seed 0; `opencl` emitted as OpenCL C for the
//!   `pocl` profile and run on this machine's OpenCL device (PoCL) on 3 seeds; `cuda` emitted as
//!   CUDA C for the `h200` profile and, with feature `cuda` on a machine with an NVIDIA GPU
//!   (`cargo test -p ekb-sched --features cuda --test filetests`), run on 3 seeds. The compiled
//!   backends compare within the dtype's tolerance (exact for integers). A `cuda` run that was
//!   not executed (no feature, or no CUDA device) is never counted as passed: its source must
//!   still be emitted without error, and the test prints the files whose CUDA runs were not
//!   executed, with the reason;
//! - `--- trace`: the schedule trace to apply;
//! - one expectation: `--- output` (the scheduled module's exact text), `--- check` (`CHECK:`,
//!   `CHECK-NEXT:` and `CHECK-NOT:` lines matched against that text, FileCheck-style), or
//!   `--- error` (the refusal's exact diagnostic, located in the trace; the program must then be
//!   unchanged).
//!
//! `EKB_BLESS=1 cargo test -p ekb-sched --test filetests` rewrites `--- output` and `--- error`
//! sections with what the code now produces (review the diff before committing it). The format's
//! sections, settings, directives and blessing are `ekb_ir::filetest`, shared with the graph
//! passes' file tests.

mod support;

use ekb_ir::filetest;
use ekb_ir::l1::print::print;
use ekb_ir::SourceFile;
use std::path::Path;

struct FileTest {
    input: String,
    trace: String,
    kind: String,
    expected: String,
    runs: Vec<String>,
}

fn read(path: &Path) -> Result<FileTest, String> {
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let [(_, input), (t, trace), (kind, expected)] = filetest::sections(&text).try_into().map_err(|_| {
        "expected the input, `--- trace`, and one of `--- output`, `--- check`, `--- error`".to_string()
    })?;
    if t != "trace" || !["output", "check", "error"].contains(&kind.as_str()) {
        return Err(format!("unexpected sections `{t}` and `{kind}`"));
    }
    let runs = filetest::setting(&input, "run");
    Ok(FileTest { input, trace, kind, expected, runs })
}

/// Runs one file; `Ok(Some(text))` when blessing should rewrite its expectation. A `cuda` run
/// that was emitted but not executed adds the file and the reason to `cuda_not_run`.
fn run(path: &Path, cuda_not_run: &mut Vec<String>) -> Result<Option<String>, String> {
    let t = read(path)?;
    // Named relative to the crate, so expectations do not depend on where the checkout is.
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let name = path.strip_prefix(root).unwrap_or(path).display().to_string();
    let p = support::load(&name, &t.input)?;
    let trace_src = SourceFile::new(format!("{name} (trace)"), t.trace.clone());
    let trace = ekb_sched::parse(&trace_src).map_err(|d| format!("the trace does not parse: {d}"))?;
    let before = print(&p.module);
    let got = match ekb_sched::apply(&p.module, &trace) {
        Ok(m) => {
            for backend in &t.runs {
                match backend.as_str() {
                    "interp" => support::same_on_interp(&p, &m),
                    "llvm" => support::same_on_llvm(&p, &m),
                    "opencl" => support::same_on_opencl(&p, &m),
                    "cuda" => support::same_on_cuda(&p, &m).map(|ran| match ran {
                        support::CudaRun::Ran => {}
                        support::CudaRun::NotRun(why) => cuda_not_run.push(format!("{name}: {why}")),
                    }),
                    other => {
                        return Err(format!(
                            "unknown backend `{other}` in `# run:` (expected interp, llvm, opencl or cuda)"
                        ))
                    }
                }
                .map_err(|e| format!("`# run: {backend}`: {e}\n--- scheduled module\n{}", print(&m)))?;
            }
            Ok(print(&m))
        }
        Err(d) => {
            if print(&p.module) != before {
                return Err("a refused trace changed the program".into());
            }
            Err(trace_src.locate(d).to_string())
        }
    };
    match (t.kind.as_str(), got) {
        ("check", Ok(out)) => {
            filetest::check(&t.expected, &out).map(|_| None).map_err(|e| format!("{e}\n--- output\n{out}"))
        }
        ("check" | "output", Err(e)) => Err(format!("the trace was refused: {e}")),
        ("error", Ok(out)) => Err(format!("the trace was applied, but a refusal was expected:\n{out}")),
        (_, Ok(out) | Err(out)) => filetest::expect_text(&t.expected, &out),
    }
}

#[test]
fn schedule_file_tests() {
    let mut cuda_not_run = Vec::new();
    filetest::run_dir(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/files"), |f| {
        run(f, &mut cuda_not_run)
    });
    if !cuda_not_run.is_empty() {
        eprintln!(
            "CUDA runs not executed ({} files; their CUDA C was emitted; on a machine with an NVIDIA \
             GPU: `cargo test -p ekb-sched --features cuda --test filetests`):\n  {}",
            cuda_not_run.len(),
            cuda_not_run.join("\n  ")
        );
    }
}
