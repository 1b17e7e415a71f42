//! The prompt for one instance (task, backend): a system message with the rules of the answer and
//! a brief IR reference, and a user message with the task's L0 graph, the target profile's limits
//! and one worked example.
//!
//! Three modes: [`Mode::Unified`] asks for an L1 module (the unified IR's loop level) that computes
//! the graph; [`Mode::Native`] asks for the backend's own source (C for CPU, CUDA C, OpenCL C), for
//! the comparison between the two: one kernel computing the whole graph with the L2 kernel ABI
//! (`docs/l2.md`), which the evaluator builds as a plan of that one kernel over all graph buffers
//! (a GPU answer states its launch geometry in a `// launch:` line); [`Mode::Trace`] asks for a
//! schedule trace (`docs/schedules.md`) and shows the loop program the evaluator replays it on
//! (`ekb_eval::evaluate::compile::trace_start`), with a brief of every primitive. The level shapes
//! the advice (a single operator, a composed graph, a whole model).
//!
//! What must stay true: the prompt is a pure function of its inputs (the cache and replay keys
//! depend on it); the worked examples parse and verify, the native ones compile as native
//! candidates, the trace example applies to its starting program, and every syntax line of the
//! trace brief parses as the primitive it documents (tests check them).

use crate::provider::Message;
use ekb_eval::evaluate::compile::trace_start;
use ekb_eval::tasks::{Backend, Task};
use ekb_ir::target::{GpuApi, TargetProfile};
use ekb_ir::{l0, l1, Diagnostic, SourceFile};
use std::fmt::Write;

/// What the answer is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// An L1 module (L0/L1 text of the unified IR).
    Unified,
    /// The backend's own source.
    Native,
    /// A schedule trace over the task's naive lowering for its backend.
    Trace,
}

impl Mode {
    pub fn name(self) -> &'static str {
        match self {
            Mode::Unified => "unified",
            Mode::Native => "native",
            Mode::Trace => "trace",
        }
    }
}

/// The worked example's L0 graph (shared by every backend).
pub const EXAMPLE_GRAPH: &str = "\
graph bias_relu(x: f32[4,8]) -> (y: f32[4,8]) {
  param b: f32[8] = uniform(-0.1, 0.1)
  %0 = add(x, b)
  %1 = relu(%0)
  return %1
}
";

/// The worked example's answer for CPU: threads over rows, SIMD lanes over columns.
pub const EXAMPLE_L1_CPU: &str = "\
module bias_relu {
  input x: f32[4,8]
  input b: f32[8]
  output y: f32[4,8]

  kernel k0(x: f32[4,8] in, b: f32[8] in, y: f32[4,8] out) {
    parallel i in 0..4 {
      vectorize j in 0..8 {
        y[i, j] = max(x[i, j] + b[j], 0.0)
      }
    }
  }

  run k0(x, b, y)
}
";

/// The worked example's answer for a GPU: one block per row, one thread per column.
pub const EXAMPLE_L1_GPU: &str = "\
module bias_relu {
  input x: f32[4,8]
  input b: f32[8]
  output y: f32[4,8]

  kernel k0(x: f32[4,8] in, b: f32[8] in, y: f32[4,8] out) {
    launch grid(i in 0..4) block(j in 0..8) {
      y[i, j] = max(x[i, j] + b[j], 0.0)
    }
  }

  run k0(x, b, y)
}
";

const EXAMPLE_C: &str = "\
void ekb_k_bias_relu(void *const *args) {
  const float *x = args[0], *b = args[1];
  float *y = args[2];
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 8; j++) {
      float v = x[i * 8 + j] + b[j];
      y[i * 8 + j] = v > 0.0f ? v : 0.0f;
    }
}
";

const EXAMPLE_CUDA: &str = "\
// launch: grid=[4] block=[8]
extern \"C\" __global__ void bias_relu(const float *x, const float *b, float *y) {
  int i = blockIdx.x, j = threadIdx.x;
  float v = x[i * 8 + j] + b[j];
  y[i * 8 + j] = v > 0.0f ? v : 0.0f;
}
";

const EXAMPLE_OPENCL: &str = "\
// launch: grid=[4] block=[8]
__kernel void bias_relu(__global const float *x, __global const float *b, __global float *y) {
  int i = get_group_id(0), j = get_local_id(0);
  float v = x[i * 8 + j] + b[j];
  y[i * 8 + j] = v > 0.0f ? v : 0.0f;
}
";

/// The trace example's graph: a matmul with a ReLU, whose naive lowering has a reduction loop on
/// every backend.
pub const EXAMPLE_TRACE_GRAPH: &str = "\
graph mm_relu(x: f32[4,8]) -> (y: f32[4,16]) {
  param w: f32[8,16] = uniform(-0.1, 0.1)
  %0 = matmul(x, w)
  %1 = relu(%0)
  return %1
}
";

/// The trace example's answer for CPU.
pub const EXAMPLE_TRACE_CPU: &str = "\
# fold the ReLU into the matmul's final store: one kernel, no temp
reverse_compute_inline t0
# threads over rows, the reduction unrolled
parallel k0_matmul.i0
unroll k0_matmul.k
";

/// The trace example's answer for a GPU (the naive kernels are `launch`es already).
pub const EXAMPLE_TRACE_GPU: &str = "\
# the reduction in chunks of 4, each unrolled
split k0_matmul.k by 4 -> ko, ki
unroll ki
";

/// Every primitive of the trace language: its syntax (a line that parses) and what it does and
/// when it is legal, in one line (the full rules: `docs/schedules.md`).
pub const TRACE_PRIMITIVES: [(&str, &str); 18] = [
    (
        "split K.v by 16 -> vo, vi",
        "`v` becomes `vo` over chunks of 16 and `vi in 0..16` (`let v = lo + vo*16 + vi`, guarded when 16 does not divide the extent); the bounds read no memory",
    ),
    (
        "reorder K.a, b, c",
        "the named loops of one perfect nest take this order; no bound uses a loop moved inside it; loops that may touch one element from different iterations keep their order",
    ),
    ("fuse K.a, b -> f", "`b`, the only statement of `a`'s body, merges with `a` into `f`; literal bounds"),
    (
        "parallel K.v",
        "iterations on CPU threads; no two iterations touch an element either writes; not inside a `launch`, `parallel` or `vectorize` loop",
    ),
    (
        "vectorize K.v",
        "iterations as SIMD lanes; `v` is innermost and not `parallel`; iterations touch distinct elements, except a sum `s[I] = s[I] + e`",
    ),
    ("unroll K.v", "the body replicated by the backend; `v` is not `parallel`"),
    (
        "compute_inline t",
        "every load of the temp `t` becomes its producer's formula and the producer's kernel goes; the producer is a plain loop nest (not a `launch`) storing each element once",
    ),
    (
        "reverse_compute_inline t",
        "the elementwise kernel reading the temp `t` folds into `t`'s producer, storing its formula where `t` was stored; the reader is a plain loop nest reading `t` at the element it stores",
    ),
    (
        "bind K.v blockIdx.x",
        "`v` becomes the GPU blocks (`blockIdx.x|y|z`) or the threads of a block (`threadIdx.x|y|z`); `v` is the kernel's only statement besides `let`s; x, then y, then z; at most 1024 threads per block",
    ),
    (
        "rfactor K.v -> rf, c",
        "a reduction `acc[I] = acc[I] op e` inside `v` (op `+ * min max`) accumulates into partials `rf[v]`, which a loop `c` combines; literal bounds",
    ),
    (
        "pad K.buf by 1",
        "the innermost dimension of the allocation `buf` grows (rows off one shared-memory bank); its indices stay below the old extent",
    ),
    (
        "storage_align K.buf axis 0 factor 32 offset 1",
        "the stride of dimension 0 of the allocation `buf` becomes the smallest S not below it with S % 32 == 1; not the innermost dimension, offset below factor",
    ),
    (
        "pack b at K.v -> bp layout 1, 0",
        "before `v`, the box of `b` that `v` reads is copied into a `local` `bp` in the layout given (dimensions `d`, or tiles `d/F` and `d%F`); `v` never writes `b`",
    ),
    (
        "decompose_reduction K.r",
        "the scalar accumulator of reduction `r` becomes the output element, its init and the loops around get nests of their own, so `r` then reorders with the output loops; outside a `launch`",
    ),
    (
        "cache_read b at K.v -> bl local",
        "each iteration of `v` copies the box of `b` its body reads into `bl` and reads it there; `local`, or `shared` inside a `launch` (one copy per GPU block); at most 16 KiB local, 48 KiB shared",
    ),
    (
        "cache_write y at K.v -> yl local",
        "each iteration of `v` works on a copy `yl` of the box of `y` it writes, copied back after; `local` outside a `launch`, `shared` inside one",
    ),
    (
        "compute_at t at K.v",
        "the nest producing the allocation `t` moves into the top of `v` (a later nest of the kernel) and computes the box each iteration reads; outside a `launch`",
    ),
    (
        "reverse_compute_at t at K.v",
        "the elementwise nest consuming `t` moves to the end of `v`, a loop of `t`'s producer, computing the matching box; the boxes tile `t`; outside a `launch`",
    ),
];

/// The trace language in brief, then [`TRACE_PRIMITIVES`].
fn trace_brief() -> String {
    let mut s = String::from(
        "A schedule trace rewrites a loop program (an L1 module) step by step; every step keeps the \
program's meaning, and a step the checker cannot prove legal is refused (the whole answer then \
fails, with the step, its line and the reason). One step per line (or `;` between steps); `#` starts \
a comment. A loop is `KERNEL.VAR`; a bare `VAR` is a loop of the kernel named last; `VAR@N` the N-th \
loop named VAR. An allocation is `KERNEL.BUF`; a buffer of the module (a temp `t0`, an output) is \
its bare name. New names (the loops a step makes) must be unused in the kernel. In the module, \
`for` loops are plain, `parallel` (CPU threads), `vectorize` (SIMD lanes), `unroll`; `launch \
grid(..) block(..)` is a GPU kernel; `run` lines are the plan.\n\nPrimitives (K a kernel, v a loop, \
t a temp or allocation):\n",
    );
    for (syntax, what) in TRACE_PRIMITIVES {
        let _ = writeln!(s, "- `{syntax}`: {what}");
    }
    s
}

const IR_BRIEF: &str = "\
The unified IR has two levels.
L0 (the task): `graph NAME(inputs) -> (outputs) { param ...; %n = op(args, attr=value); return ... }`,
whole-tensor operators in SSA form, static shapes, dtypes f32, i32, i8 and f16, row-major.
L1 (your answer): one `module NAME { ... }` with
- buffer declarations: `input NAME: f32[...]` for every graph input and every param (same names),
  `output NAME: f32[...]` for every graph output (same names), `buffer NAME: f32[...]` for
  intermediates;
- kernels: `kernel NAME(p: TYPE in|out|inout, ...) { ... }`; a kernel sees only its parameters and
  its own `alloc NAME: TYPE local|shared`;
- loops: `for i in 0..N`, `parallel i in 0..N` (CPU threads), `vectorize j in 0..N` (SIMD lanes),
  `unroll k in 0..N`; `launch grid(b in 0..G) block(t in 0..T) { ... }` as the whole body makes a
  GPU kernel, with `shared` allocations and `barrier`; in a GPU kernel, `vectorize v in 0..4` over
  `buf[..., base + v]` (base and the last extent multiples of 4) becomes float4 loads and stores;
- i8 elements load as i32 (sign-extended) and a store keeps the low 8 bits; f16 elements load as
  f32 exactly and a store rounds to the nearest f16;
- statements: `let v = EXPR`, `buf[i, j] = EXPR`, `if C { } else { }`; expressions use + - * / %,
  comparisons, && ||, `max`, `min`, `exp`, `select(c, a, b)`, casts `f32(i)`, `i32(x)`;
- the plan: `run KERNEL(buffers...)` lines, in order.
Comments start with `#`. Every index must stay in bounds; the verifier proves it.";

/// The chat messages for one instance. A trace prompt shows the loop program its trace is
/// replayed on; a graph that does not lower gives the lowering's diagnostics.
pub fn build_prompt(
    task: &Task,
    backend: Backend,
    profile: &TargetProfile,
    mode: Mode,
) -> Result<Vec<Message>, Vec<Diagnostic>> {
    let user = user_text(task, backend, profile, mode)?;
    Ok(vec![Message::system(system_text(backend, mode)), Message::user(user)])
}

fn language(backend: Backend, mode: Mode) -> (&'static str, &'static str) {
    match (mode, backend) {
        (Mode::Unified, _) => ("an L1 module of the unified IR", "ekir"),
        (Mode::Trace, _) => ("a schedule trace", "trace"),
        (Mode::Native, Backend::Cpu) => ("freestanding C (C11)", "c"),
        (Mode::Native, Backend::Cuda) => ("CUDA C", "cuda"),
        (Mode::Native, Backend::Opencl) => ("OpenCL C", "opencl"),
    }
}

fn system_text(backend: Backend, mode: Mode) -> String {
    let (lang, fence) = language(backend, mode);
    let mut s = match mode {
        Mode::Trace => format!(
            "You schedule kernels for edge devices. You are given a computation as a graph of the \
unified tensor IR, the loop program it lowers to without any optimisation (one plain loop nest per \
operator) and the limits of the target device; you answer with {lang}: the rewrites of that loop \
program (split, reorder, fuse, parallel, vectorize, inline, ...) that make it run as fast as possible \
on that device. Every rewrite keeps the program's meaning.\n\nAnswer with exactly one fenced code \
block (```{fence} ... ```) holding the complete trace. Text outside the block is ignored.\n\n"
        ),
        Mode::Unified | Mode::Native => format!(
            "You write fast, correct kernels for edge devices. You are given a computation as a graph \
of the unified tensor IR and the limits of the target device; you answer with {lang} that computes \
exactly the graph's outputs (within 1e-4 absolute plus relative error for f32) and runs as fast as \
possible on that device.\n\nAnswer with exactly one fenced code block (```{fence} ... ```) holding \
the complete program. Text outside the block is ignored.\n\n"
        ),
    };
    match mode {
        Mode::Unified => s.push_str(IR_BRIEF),
        Mode::Trace => s.push_str(&trace_brief()),
        Mode::Native => {
            s.push_str(
                "The L0 graph notation: `graph NAME(inputs) -> (outputs) { param ...; %n = op(args, \
attr=value); return ... }`, whole-tensor operators, static shapes, row-major, dtypes f32, i32, i8 and f16.\n",
            );
            let abi = match backend {
                Backend::Cpu => {
                    "Write one function `void ekb_k_NAME(void *const *args)`, NAME being the graph's \
name, exported (every other function `static`). `args[i]` points to the i-th buffer: the graph \
inputs, then the params, then the outputs, in declaration order; contiguous row-major, 64-byte \
aligned, never overlapping (`float` for f32, `int32_t` for i32, `int8_t` for i8, `uint16_t` bits for \
f16). It is compiled freestanding by clang-19 (-O3, C11): no C library; you may declare and call \
`expf logf powf tanhf erff sqrtf fabsf floorf ceilf exp2f ldexpf sinf cosf memset memcpy memmove`, \
and nothing else outside your file; no global variables."
                }
                Backend::Cuda => {
                    "Write one kernel `extern \"C\" __global__ void NAME(...)`, NAME being the graph's \
name, with one pointer parameter per graph input, then per param, then per output, in declaration \
order (`const float *` for inputs and params, `float *` for outputs; `int` for i32, `signed char` for \
i8, `unsigned short` bits for f16); contiguous row-major device buffers. You may write `__device__` \
helpers; no host code. It is compiled by NVRTC and launched once: state the launch geometry in a \
line `// launch: grid=[X,Y,Z] block=[X,Y,Z]` (one to three sizes each; static `__shared__` arrays \
only)."
                }
                Backend::Opencl => {
                    "Write one kernel `__kernel void NAME(...)`, NAME being the graph's name, with one \
`__global` pointer parameter per graph input, then per param, then per output, in declaration order \
(`const float *` for inputs and params, `float *` for outputs; `int` for i32, `char` for i8, `ushort` \
bits for f16); contiguous row-major buffers. You may write helper functions. It is built once by \
the OpenCL driver and enqueued once: state the launch geometry in a line `// launch: grid=[X,Y,Z] \
block=[X,Y,Z]` (work-groups per dimension and work-items per work-group, one to three sizes \
each: the global size is grid times block)."
                }
            };
            s.push_str(abi);
        }
    }
    s
}

fn level_advice(level: u8) -> &'static str {
    match level {
        1 => {
            "This is a Level-1 task: a single basic operator. Choose the loop order, tiling, threads \
and vector lanes well."
        }
        2 => "This is a Level-2 task: a few composed operators. Fuse where it saves memory traffic.",
        _ => {
            "This is a Level-3 task: a compact model graph. Plan intermediates so peak memory stays \
within the device's limits, and fuse where it pays."
        }
    }
}

/// The target profile's limits that matter for a kernel on `backend`.
pub fn limits_text(profile: &TargetProfile, backend: Backend) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "Target `{}`: {}", profile.name, profile.description);
    let c = &profile.cpu;
    match (backend, &profile.gpu) {
        (Backend::Cpu, _) | (_, None) => {
            let _ = writeln!(s, "- CPU: {} ({}), {} cores", c.triple, c.cpu, profile.cpu_cores());
            let _ = writeln!(s, "- SIMD: {} bits ({} f32 lanes)", c.vector_bits, profile.cpu_f32_lanes());
            let _ = writeln!(s, "- stack per thread: {} bytes", c.stack_bytes);
            let _ = writeln!(s, "- memory: {} bytes", c.memory_bytes);
            let _ = writeln!(s, "- cache line: {} bytes", c.cache_line_bytes);
        }
        (_, Some(g)) => {
            let api = match g.api {
                GpuApi::Cuda => "CUDA",
                GpuApi::Opencl => "OpenCL",
            };
            let _ = writeln!(s, "- GPU: {} ({api}, {}), {} compute units", g.device, g.arch, g.compute_units);
            let _ = writeln!(s, "- threads per block: at most {}", g.max_threads_per_block);
            let _ = writeln!(s, "- shared memory per block: {} bytes", g.shared_bytes_per_block);
            if let Some(r) = g.registers_per_thread {
                let _ = writeln!(s, "- registers per thread: {r}");
            }
            if let Some(p) = g.private_bytes_per_thread {
                let _ = writeln!(s, "- private memory per thread: {p} bytes");
            }
            let _ = writeln!(s, "- SIMD width (warp/wavefront): {}", g.simd_width);
            let _ = writeln!(s, "- memory: {} bytes", g.memory_bytes);
            if let Some(m) = g.max_buffer_bytes {
                let _ = writeln!(s, "- largest buffer: {m} bytes");
            }
        }
    }
    s
}

/// The worked example's graph and answer for `mode` on `backend`.
fn example(mode: Mode, backend: Backend) -> (&'static str, &'static str) {
    match (mode, backend) {
        (Mode::Unified, Backend::Cpu) => (EXAMPLE_GRAPH, EXAMPLE_L1_CPU),
        (Mode::Unified, _) => (EXAMPLE_GRAPH, EXAMPLE_L1_GPU),
        (Mode::Native, Backend::Cpu) => (EXAMPLE_GRAPH, EXAMPLE_C),
        (Mode::Native, Backend::Cuda) => (EXAMPLE_GRAPH, EXAMPLE_CUDA),
        (Mode::Native, Backend::Opencl) => (EXAMPLE_GRAPH, EXAMPLE_OPENCL),
        (Mode::Trace, Backend::Cpu) => (EXAMPLE_TRACE_GRAPH, EXAMPLE_TRACE_CPU),
        (Mode::Trace, _) => (EXAMPLE_TRACE_GRAPH, EXAMPLE_TRACE_GPU),
    }
}

/// The loop program a trace for `graph` (read from `source`) on `backend` is replayed on, as
/// text.
fn start_text(
    graph: &l0::Graph,
    source: &SourceFile,
    backend: Backend,
    profile: &TargetProfile,
) -> Result<String, Vec<Diagnostic>> {
    trace_start(graph, source, backend, profile).map(|m| l1::print::print(&m))
}

fn user_text(
    task: &Task,
    backend: Backend,
    profile: &TargetProfile,
    mode: Mode,
) -> Result<String, Vec<Diagnostic>> {
    let (_, fence) = language(backend, mode);
    let (graph, answer) = example(mode, backend);
    let b = backend.name();
    let mut s = String::new();
    let _ = writeln!(s, "## Example\n\nGraph:\n```ekir\n{graph}```");
    if mode == Mode::Trace {
        let src = SourceFile::new("example.ekir", graph);
        let start = start_text(&l0::check::load(&src)?, &src, backend, profile)?;
        let _ = writeln!(s, "Its loop program for the {b} backend:\n```ekir\n{start}```");
    }
    let _ = writeln!(s, "Answer:\n```{fence}\n{answer}```\n");
    let _ = writeln!(s, "## Task `{}` for the {b} backend\n", task.name);
    let _ = writeln!(s, "{}\n", level_advice(task.meta.level));
    let _ = writeln!(s, "Graph:\n```ekir\n{}```\n", task.graph_text());
    if mode == Mode::Trace {
        let start = start_text(&task.graph, &task.source, backend, profile)?;
        let _ = writeln!(
            s,
            "The loop program your trace is replayed on (the graph after the graph passes, one plain \
loop nest per operator for the {b} backend):\n```ekir\n{start}```\n"
        );
    }
    let _ = writeln!(s, "{}", limits_text(profile, backend));
    let what = match mode {
        Mode::Unified => format!("the L1 module `{}`", task.name),
        Mode::Native => format!("the {} source for `{}`", language(backend, mode).0, task.name),
        Mode::Trace => format!("the schedule trace for `{}`", task.name),
    };
    let _ = write!(s, "Answer with {what} in one ```{fence} block.");
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn native_examples_are_native_candidates_and_the_c_one_compiles() {
        use ekb_deploy::l2::{native, KernelLang};
        let graph = l0::check::load(&SourceFile::new("ex.ekir", EXAMPLE_GRAPH)).unwrap();
        for (text, lang) in [(EXAMPLE_CUDA, KernelLang::Cuda), (EXAMPLE_OPENCL, KernelLang::OpenCl)] {
            let c = native::candidate(&graph, SourceFile::new("ex", text), lang).expect("a launch line");
            let shape = l1::gpu::LaunchShape::of(&c.module.kernels[0]).expect("a GPU kernel");
            assert_eq!((shape.grid, shape.block), ([4, 1, 1], [8, 1, 1]));
        }
        let c = native::candidate(&graph, SourceFile::new("ex.c", EXAMPLE_C), KernelLang::C).unwrap();
        let options = ekb_deploy::CompileOptions { kernel_sources: c.kernels, ..Default::default() };
        let program = ekb_deploy::Program::Module { module: &c.module, graph: &graph };
        let target = ekb_ir::TargetProfile::load("host").unwrap();
        let artifact = ekb_deploy::compile(program, Default::default(), &target, &options)
            .unwrap_or_else(|f| panic!("{:?}", f.diagnostics));
        assert!(artifact.code.is_some());
    }

    #[test]
    fn every_primitive_is_in_the_trace_brief_and_its_syntax_parses_as_it() {
        let mut documented: Vec<&str> =
            TRACE_PRIMITIVES.iter().map(|(syntax, _)| syntax.split(' ').next().unwrap()).collect();
        documented.sort_unstable();
        let mut all = ekb_sched::PRIMITIVES.to_vec();
        all.sort_unstable();
        assert_eq!(documented, all, "one line per primitive of the trace reader");
        for (syntax, _) in TRACE_PRIMITIVES {
            let t =
                ekb_sched::parse(&SourceFile::new("brief.trace", syntax)).unwrap_or_else(|d| panic!("{d}"));
            assert_eq!(t.steps.len(), 1, "{syntax}");
            assert_eq!(t.steps[0].prim.name(), syntax.split(' ').next().unwrap());
            assert_eq!(t.print(), format!("{syntax}\n"), "written as the trace printer writes it");
            assert!(trace_brief().contains(&format!("- `{syntax}`: ")));
        }
    }

    /// The trace example's answer applies to the example's loop program on every backend (the
    /// lowering of the target the backend's prompts use by default), and its result verifies.
    #[test]
    fn the_trace_example_applies_to_its_loop_program_on_every_backend() {
        let src = SourceFile::new("example.ekir", EXAMPLE_TRACE_GRAPH);
        let graph = l0::check::load(&src).unwrap();
        for (backend, target) in
            [(Backend::Cpu, "host"), (Backend::Cuda, "jetson-orin"), (Backend::Opencl, "pocl")]
        {
            let target = TargetProfile::load(target).unwrap();
            let start = trace_start(&graph, &src, backend, &target).unwrap();
            let (_, answer) = example(Mode::Trace, backend);
            let trace = ekb_sched::parse(&SourceFile::new("example.trace", answer)).unwrap();
            let m = ekb_sched::apply(&start, &trace).unwrap_or_else(|d| panic!("{backend:?}: {d}"));
            let errors: Vec<_> =
                l1::verify::verify(&m, Some(&target)).into_iter().filter(|d| d.is_error()).collect();
            assert!(errors.is_empty(), "{backend:?}: {errors:?}");
            assert_ne!(l1::print::print(&m), l1::print::print(&start), "the trace changes the program");
        }
    }

    #[test]
    fn worked_examples_parse_and_verify() {
        l0::check::load(&SourceFile::new("ex.ekir", EXAMPLE_GRAPH)).expect("the example graph checks");
        for text in [EXAMPLE_L1_CPU, EXAMPLE_L1_GPU] {
            let m = l1::parse::parse(&SourceFile::new("ex.ekir", text)).expect("the example parses");
            let d = l1::verify::verify(&m, None);
            assert!(d.is_empty(), "{d:?}");
        }
    }
}
