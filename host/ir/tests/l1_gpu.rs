//! L1 for GPUs: `launch` / `barrier` / `shared` allocations through the parser, the printer, the
//! verifier (scopes, barrier placement by uniformity, legality against GPU profiles) and the
//! interpreter (blocks, threads, barriers, shared memory). Each test states what it expects in
//! the words of the message, so a vaguer message fails.

use ekb_ir::diag::Severity;
use ekb_ir::l1::gpu::{check_limits, GpuLimits, LaunchShape, Limit};
use ekb_ir::l1::parse::parse;
use ekb_ir::l1::print::print;
use ekb_ir::l1::verify::verify;
use ekb_ir::l1::*;
use ekb_ir::tensor::{BufData, Buffer};
use ekb_ir::types::{DType, TensorType};
use ekb_ir::{Diagnostic, SourceFile, TargetProfile};
use std::collections::HashMap;

fn module(text: &str) -> Module {
    parse(&SourceFile::new("gpu.ekl1", text)).unwrap_or_else(|d| panic!("{d}"))
}

fn errors(text: &str, target: Option<&str>) -> Vec<Diagnostic> {
    let src = SourceFile::new("gpu.ekl1", text);
    let m = parse(&src).unwrap_or_else(|d| panic!("{d}"));
    let t = target.map(|t| TargetProfile::load(t).unwrap());
    verify(&m, t.as_ref())
        .into_iter()
        .filter(|d| d.severity == Severity::Error)
        .map(|d| src.locate(d))
        .collect()
}

/// Exactly one error, containing `want`.
fn one_error(text: &str, target: Option<&str>, want: &str) -> Diagnostic {
    let errs = errors(text, target);
    let all = errs.iter().map(|d| d.to_string()).collect::<Vec<_>>().join("\n");
    assert_eq!(errs.len(), 1, "expected one error containing {want:?}, got:\n{all}");
    assert!(errs[0].message.contains(want), "expected {want:?} in:\n{}", errs[0]);
    errs.into_iter().next().unwrap()
}

fn parse_error(text: &str) -> Diagnostic {
    match parse(&SourceFile::new("gpu.ekl1", text)) {
        Ok(m) => panic!("parsed: {m:?}"),
        Err(d) => d,
    }
}

/// A one-kernel module of `x: f32[256] in`, `n: i32[256] in` and `y: f32[256] out` around a body.
fn kernel(body: &str) -> String {
    format!(
        "module m {{\n  input x: f32[256]\n  input n: i32[256]\n  output y: f32[256]\n\n  \
         kernel k0(x: f32[256] in, n: i32[256] in, y: f32[256] out) {{\n{body}\n  }}\n\n  run k0(x, n, y)\n}}\n"
    )
}

/// `kernel(..)` with the body inside `launch grid(bx in 0..4) block(tx in 0..64)`.
fn launch(body: &str) -> String {
    kernel(&format!("    launch grid(bx in 0..4) block(tx in 0..64) {{\n{body}\n    }}"))
}

const ROWSUM: &str = "module rowsum {
  input x: f32[8,100]
  output y: f32[8]

  kernel rowsum(x: f32[8,100] in, y: f32[8] out) {
    launch grid(row in 0..8) block(tx in 0..64) {
      alloc part: f32[64] shared
      alloc acc: f32[1] local
      acc[0] = 0.0
      for r in 0..2 {
        let k = r * 64 + tx
        if k < 100 {
          acc[0] = acc[0] + x[row, k]
        }
      }
      part[tx] = acc[0]
      barrier
      if tx < 32 {
        part[tx] = part[tx] + part[tx + 32]
      }
      barrier
      if tx < 16 {
        part[tx] = part[tx] + part[tx + 16]
      }
      barrier
      if tx < 8 {
        part[tx] = part[tx] + part[tx + 8]
      }
      barrier
      if tx < 4 {
        part[tx] = part[tx] + part[tx + 4]
      }
      barrier
      if tx < 2 {
        part[tx] = part[tx] + part[tx + 2]
      }
      barrier
      if tx == 0 {
        y[row] = part[0] + part[1]
      }
    }
  }

  run rowsum(x, y)
}
";

const MATMUL: &str = "module mm {
  input a: f32[20,24]
  input b: f32[24,18]
  output y: f32[20,18]

  kernel mm(a: f32[20,24] in, b: f32[24,18] in, y: f32[20,18] out) {
    launch grid(bx in 0..3, by in 0..3) block(tx in 0..8, ty in 0..8) {
      alloc ta: f32[8,8] shared
      alloc tb: f32[8,9] shared
      alloc acc: f32[1] local
      let row = by * 8 + ty
      let col = bx * 8 + tx
      acc[0] = 0.0
      for t in 0..3 {
        if row < 20 {
          ta[ty, tx] = a[row, t * 8 + tx]
        } else {
          ta[ty, tx] = 0.0
        }
        if col < 18 {
          tb[ty, tx] = b[t * 8 + ty, col]
        } else {
          tb[ty, tx] = 0.0
        }
        barrier
        for kk in 0..8 {
          acc[0] = acc[0] + ta[ty, kk] * tb[kk, tx]
        }
        barrier
      }
      if row < 20 && col < 18 {
        y[row, col] = acc[0]
      }
    }
  }

  run mm(a, b, y)
}
";

fn f32_input(name: &str, shape: &[usize], f: impl Fn(usize) -> f32) -> (String, Buffer) {
    let ty = TensorType::new(DType::F32, shape.to_vec());
    let data = (0..ty.numel()).map(f).collect();
    (name.to_string(), Buffer { ty, data: BufData::F32(data) })
}

fn f32_out(outs: &HashMap<String, Buffer>, name: &str) -> Vec<f32> {
    match &outs[name].data {
        BufData::F32(v) => v.clone(),
        other => panic!("{name} is not f32: {other:?}"),
    }
}

#[test]
fn gpu_modules_print_canonically_and_read_back() {
    for text in [ROWSUM, MATMUL] {
        let m = module(text);
        assert_eq!(print(&m), text, "canonical text");
        let again = module(&print(&m));
        assert_eq!(print(&again), text);
    }
    // Several dimensions, `shared_optin`, and a layout that is not canonical.
    let m = module(
        "module m { input x: f32[4]; output y: f32[4]
  kernel k(x: f32[4] in, y: f32[4] out) {
    launch grid(bx in 0..1, by in 0..1, bz in 0..1) block(tx in 0..2,
        ty in 0..2) shared_optin { alloc s: f32[4] shared; s[ty * 2 + tx] = x[ty * 2 + tx]; barrier
      y[ty * 2 + tx] = s[3 - (ty * 2 + tx)] }
  }
  run k(x, y) }",
    );
    let printed = print(&m);
    assert!(
        printed.contains(
            "    launch grid(bx in 0..1, by in 0..1, bz in 0..1) block(tx in 0..2, ty in 0..2) shared_optin {\n      \
             alloc s: f32[4] shared\n"
        ),
        "{printed}"
    );
    assert!(printed.contains("\n      barrier\n"), "{printed}");
    assert_eq!(print(&module(&printed)), printed);
}

#[test]
fn the_launch_shape_is_what_the_launch_says() {
    let m = module(MATMUL);
    let s = LaunchShape::of(&m.kernels[0]).expect("a GPU kernel");
    assert_eq!(s.grid, [3, 3, 1]);
    assert_eq!(s.block, [8, 8, 1]);
    assert_eq!(s.threads_per_block(), 64);
    assert_eq!(s.blocks(), 9);
    assert_eq!(s.shared_bytes, (64 + 72) * 4);
    assert_eq!(s.shared_allocs, vec![("ta".to_string(), 256), ("tb".to_string(), 288)]);
    assert_eq!(s.local_bytes, 4);
    assert!(!s.shared_optin);
}

#[test]
fn launch_syntax_errors_say_what_to_write() {
    let d = parse_error(&kernel("    launch grid(56, 2) block(32, 8) {\n    }"));
    assert!(d.message.contains("a grid dimension needs a variable"), "{d}");
    assert_eq!(
        d.hint.as_deref(),
        Some("name each dimension with its range: `grid(bx in 0..56, by in 0..2)`")
    );
    let d = parse_error(&kernel("    launch grid(bx in 1..4) block(tx in 0..8) {\n    }"));
    assert!(d.message.contains("expected `0`: grid dimensions start at 0, found integer `1`"), "{d}");
    let d = parse_error(&kernel("    launch grid(bx in 0..n) block(tx in 0..8) {\n    }"));
    assert!(d.message.contains("the extent of `bx`: an integer from 1 to 2147483647"), "{d}");
    let d = parse_error(&kernel("    launch grid(bx in 0..0) block(tx in 0..8) {\n    }"));
    assert!(d.message.contains("found integer `0`"), "{d}");
    let d = parse_error(&kernel(
        "    launch grid(a in 0..1, b in 0..1, c in 0..1, d in 0..1) block(tx in 0..8) {\n    }",
    ));
    assert!(d.message.contains("a grid has 1 to 3 dimensions, found 4"), "{d}");
    let d = parse_error(&kernel("    launch block(tx in 0..8) {\n    }"));
    assert!(d.message.contains("expected `grid` after `launch`"), "{d}");
    let d = parse_error(&launch("      alloc t: f32[4] global"));
    assert!(d.message.contains("an `alloc` cannot be `global`"), "{d}");
    let d = parse_error(&launch("      alloc t: f32[4] shard"));
    assert_eq!(d.hint.as_deref(), Some("did you mean `shared`?"));
    let d = parse_error(&launch("      barrier()"));
    assert_eq!(d.hint.as_deref(), Some("`barrier` is a statement on its own: no parentheses"));
    let loc = d.location.as_ref().expect("located");
    assert_eq!((loc.line, loc.column), (8, 14));
}

#[test]
fn gpu_modules_verify_against_gpu_profiles() {
    for text in [ROWSUM, MATMUL] {
        for target in [None, Some("pocl"), Some("jetson-orin"), Some("rk3588"), Some("h200")] {
            assert_eq!(errors(text, target), vec![], "{target:?}");
        }
    }
}

#[test]
fn a_launch_needs_a_gpu_target() {
    let d = one_error(ROWSUM, Some("host"), "`launch` needs a GPU target; target `host` has no GPU");
    assert!(d.hint.as_deref().unwrap().contains("kernel rowsum launches on a GPU"));
}

#[test]
fn launch_scopes_are_checked() {
    one_error(
        &kernel("    launch grid(bx in 0..1) block(tx in 0..1) {\n      launch grid(b in 0..1) block(t in 0..1) {\n      }\n    }"),
        None,
        "nested `launch` in kernel k0",
    );
    one_error(
        &kernel(
            "    parallel i in 0..2 {\n      launch grid(bx in 0..1) block(tx in 0..1) {\n      }\n    }",
        ),
        None,
        "`launch` inside parallel loop `i` in kernel k0",
    );
    let d = one_error(
        &kernel("    let z = 1\n    launch grid(bx in 0..1) block(tx in 0..1) {\n      y[0] = x[0]\n    }"),
        None,
        "the `launch` of kernel k0 is not its whole body",
    );
    assert!(d.hint.as_deref().unwrap().contains("exactly one `launch`"));
    one_error(
        &launch("      parallel i in 0..4 {\n        y[i] = x[i]\n      }"),
        None,
        "parallel loop `i` inside the `launch` of kernel k0",
    );
    one_error(&kernel("    barrier"), None, "`barrier` outside a `launch` in kernel k0");
    one_error(
        &kernel("    alloc s: f32[4] shared"),
        None,
        "alloc `s` is `shared` outside a `launch` in kernel k0",
    );
    let d = one_error(
        &launch("      for i in 0..2 {\n        alloc s: f32[4] shared\n      }"),
        None,
        "shared alloc `s` is inside a loop or `if` of the launch in kernel k0",
    );
    assert_eq!(
        d.hint.as_deref(),
        Some("move it to the top of the launch body: it is allocated once per block")
    );
    // Launch variables are scoped like loop variables.
    let errs =
        errors(&kernel("    launch grid(bx in 0..1) block(tx in 0..1) {\n    }\n    y[0] = f32(tx)"), None);
    assert!(errs.iter().any(|d| d.message == "undefined variable `tx` in kernel k0"), "{errs:?}");
}

#[test]
fn launch_variables_have_intervals() {
    // tx ranges over [0, 63], bx over [0, 3]: bx * 64 + tx over [0, 255], in bounds.
    assert_eq!(errors(&launch("      y[bx * 64 + tx] = x[bx * 64 + tx]"), None), vec![]);
    let d = one_error(&launch("      y[bx * 64 + tx + 1] = x[0]"), None, "ranges over [1, 256]");
    assert!(d.message.contains("index `bx * 64 + tx + 1` of `y` (dim 0, size 256)"), "{d}");
    one_error(
        &kernel("    launch grid(bx in 0..2) block(bx in 0..2) {\n    }"),
        None,
        "`bx` is defined twice in the same block of kernel k0",
    );
}

#[test]
fn barriers_under_thread_divergent_control_flow_are_rejected() {
    let d = one_error(
        &launch("      if tx < 32 {\n        barrier\n      }"),
        None,
        "`barrier` under thread-divergent control flow in kernel k0: the condition `tx < 32` depends on thread variable `tx`",
    );
    assert!(d.hint.as_deref().unwrap().contains("every thread of a block must reach the same barriers"));
    let loc = d.location.as_ref().expect("located");
    assert_eq!(loc.line, 9);
    // Through a `let`.
    one_error(
        &launch("      let half = tx / 2\n      if half == 0 {\n        barrier\n      }"),
        None,
        "the condition `half == 0` depends on `half`, which depends on thread variable `tx`",
    );
    // Loop bounds.
    one_error(
        &launch("      for i in 0..tx {\n        barrier\n      }"),
        None,
        "the bounds of loop `i` depend on thread variable `tx`",
    );
    // A value loaded from memory the threads may write.
    one_error(
        &launch("      alloc s: f32[1] shared\n      if s[0] > 0.0 {\n        barrier\n      }"),
        None,
        "the condition `s[0] > 0.0` depends on a load from `s`, which the block's threads may write",
    );
    // An `in` parameter read at a thread-dependent index.
    one_error(
        &launch("      if n[tx] > 0 {\n        barrier\n      }"),
        None,
        "the condition `n[tx] > 0` depends on thread variable `tx`",
    );
    // Divergence outside the barrier's own branch counts too.
    one_error(
        &launch("      if tx == 0 {\n        for i in 0..4 {\n          barrier\n        }\n      }"),
        None,
        "the condition `tx == 0` depends on thread variable `tx`",
    );
}

#[test]
fn barriers_under_uniform_control_flow_are_accepted() {
    let ok = [
        // Block indices, constants, uniform lets and loops.
        "      if bx < 2 {\n        barrier\n      }",
        "      let b2 = bx * 2\n      for i in b2..8 {\n        barrier\n      }",
        // An `in` parameter at a uniform index is the same for every thread.
        "      if n[bx] > 0 {\n        barrier\n      }\n      for i in 0..n[0] {\n        barrier\n      }",
        // Divergent work beside a barrier is fine.
        "      alloc s: f32[64] shared\n      if tx < 32 {\n        s[tx] = 1.0\n      } else {\n        s[tx] = 2.0\n      }\n      barrier\n      y[bx * 64 + tx] = s[63 - tx]",
    ];
    for body in ok {
        assert_eq!(errors(&launch(body), None), vec![], "{body}");
    }
}

#[test]
fn threads_per_block_and_dimensions_are_checked_against_the_profile() {
    let text =
        kernel("    launch grid(bx in 0..1) block(tx in 0..64, ty in 0..32) {\n      y[0] = x[0]\n    }");
    assert_eq!(errors(&text, Some("pocl")), vec![], "PoCL allows 4096");
    let d = one_error(
        &text,
        Some("jetson-orin"),
        "the launch of kernel k0 has 2048 threads per block (block(tx in 0..64, ty in 0..32)), over the limit of \
         1024 from target profile `jetson-orin` (gpu.max_threads_per_block)",
    );
    assert_eq!(d.hint.as_deref(), Some("use fewer threads per block and more blocks"));
    one_error(&text, Some("rk3588"), "over the limit of 1024 from target profile `rk3588`");
    let tall =
        kernel("    launch grid(bx in 0..1, by in 0..70000) block(tx in 0..1) {\n      y[0] = x[0]\n    }");
    one_error(
        &tall,
        Some("h200"),
        "grid dimension `by` of kernel k0 has extent 70000, over the limit of 65535 of CUDA (the y dimension",
    );
    assert_eq!(errors(&tall, Some("pocl")), vec![], "OpenCL has no such grid limit");
    let deep = kernel(
        "    launch grid(bx in 0..1) block(tx in 0..1, ty in 0..1, tz in 0..128) {\n      y[0] = x[0]\n    }",
    );
    one_error(
        &deep,
        Some("jetson-orin"),
        "block dimension `tz` of kernel k0 has extent 128, over the limit of 64",
    );
}

#[test]
fn shared_memory_is_checked_against_the_profile_naming_the_allocation() {
    // 40960 bytes: over the Mali's 32 KiB, within Orin's 48 KiB.
    let one = launch("      alloc tile: f32[64,160] shared\n      tile[0, tx] = 1.0");
    let d = one_error(
        &one,
        Some("rk3588"),
        "shared alloc `tile` (f32[64,160]) of kernel k0 needs 40960 bytes per block, over the limit of 32768 bytes \
         from target profile `rk3588` (gpu.shared_bytes_per_block)",
    );
    assert_eq!(d.hint.as_deref(), Some("use smaller tiles"));
    assert_eq!(errors(&one, Some("jetson-orin")), vec![]);
    // 65536 bytes in two allocations: over Orin's static 48 KiB, within its opt-in limit.
    let two = launch("      alloc a: f32[8192] shared\n      alloc b: f32[8192] shared\n      a[tx] = 1.0\n      b[tx] = 1.0");
    let d = one_error(
        &two,
        Some("jetson-orin"),
        "the shared allocs of kernel k0 (`a` 32768, `b` 32768) need 65536 bytes per block, over the limit of 49152 \
         bytes from target profile `jetson-orin` (gpu.shared_bytes_per_block)",
    );
    assert_eq!(
        d.hint.as_deref(),
        Some(
            "add `shared_optin` to the launch for up to 166912 bytes from target profile `jetson-orin` \
             (gpu.shared_bytes_per_block_optin) (dynamic shared memory)"
        )
    );
    let opted = two.replace("block(tx in 0..64) {", "block(tx in 0..64) shared_optin {");
    assert_eq!(errors(&opted, Some("jetson-orin")), vec![]);
    let small = launch("      alloc a: f32[64] shared\n      a[tx] = 1.0")
        .replace("0..64) {", "0..64) shared_optin {");
    one_error(&small, Some("rk3588"), "the launch of kernel k0 says `shared_optin`, which only CUDA has");
    assert_eq!(errors(&opted, Some("rk3588")).len(), 2, "the opt-in and the size");
    // Beyond the opt-in limit as well.
    let huge = launch("      alloc a: f32[60000] shared\n      a[tx] = 1.0")
        .replace("0..64) {", "0..64) shared_optin {");
    let d = one_error(&huge, Some("h200"), "needs 240000 bytes per block, over the limit of 232448 bytes");
    assert!(d.message.contains("(gpu.shared_bytes_per_block_optin)"), "{d}");
}

#[test]
fn live_device_limits_are_checked_the_same_way() {
    let m = module(&launch("      alloc s: f32[1024] shared\n      s[tx] = 1.0"));
    let limits = GpuLimits {
        api: ekb_ir::target::GpuApi::Opencl,
        threads_per_block: Limit::new(32, "from the OpenCL device (CL_DEVICE_MAX_WORK_GROUP_SIZE)"),
        block_dims: [
            Some(Limit::new(16, "from the OpenCL device (CL_DEVICE_MAX_WORK_ITEM_SIZES)")),
            None,
            None,
        ],
        grid_dims: [None, None, None],
        shared_bytes_per_block: Limit::new(2048, "from the OpenCL device (CL_DEVICE_LOCAL_MEM_SIZE)"),
        shared_bytes_optin: None,
        private_bytes_per_thread: None,
    };
    let found: Vec<String> = check_limits(&m, &limits).into_iter().map(|d| d.message.clone()).collect();
    assert_eq!(
        found,
        vec![
            "the launch of kernel k0 has 64 threads per block (block(tx in 0..64)), over the limit of 32 from the \
             OpenCL device (CL_DEVICE_MAX_WORK_GROUP_SIZE)",
            "block dimension `tx` of kernel k0 has extent 64, over the limit of 16 from the OpenCL device \
             (CL_DEVICE_MAX_WORK_ITEM_SIZES)",
            "shared alloc `s` (f32[1024]) of kernel k0 needs 4096 bytes per block, over the limit of 2048 bytes from \
             the OpenCL device (CL_DEVICE_LOCAL_MEM_SIZE)",
        ]
    );
}

#[test]
fn per_thread_local_memory_is_checked_where_the_profile_knows_it() {
    // Orin: 512 KiB of local memory per thread.
    let big = launch("      alloc r: f32[140000] local\n      r[tx] = 1.0");
    one_error(
        &big,
        Some("jetson-orin"),
        "the local allocs of kernel k0 need 560000 bytes per thread, over the limit of 524288 bytes from target \
         profile `jetson-orin` (gpu.private_bytes_per_thread)",
    );
    // A GPU kernel is not held to the CPU stack limit.
    assert_eq!(errors(&big, Some("pocl")), vec![]);
}

#[test]
fn the_interpreter_runs_a_shared_memory_reduction() {
    let m = module(ROWSUM);
    let inputs = HashMap::from([f32_input("x", &[8, 100], |i| ((i * 7) % 13) as f32 - 6.0)]);
    let out = interp::run(&m, &inputs).unwrap_or_else(|d| panic!("{d}"));
    let y = f32_out(&out, "y");
    for (row, got) in y.iter().enumerate() {
        let want: f32 = (0..100).map(|k| ((row * 100 + k) * 7 % 13) as f32 - 6.0).sum();
        assert_eq!(*got, want, "row {row}");
    }
}

#[test]
fn the_interpreter_runs_a_tiled_matmul() {
    let m = module(MATMUL);
    let inputs = HashMap::from([
        f32_input("a", &[20, 24], |i| (i % 5) as f32 - 2.0),
        f32_input("b", &[24, 18], |i| (i % 3) as f32 * 0.5),
    ]);
    let out = interp::run(&m, &inputs).unwrap_or_else(|d| panic!("{d}"));
    let y = f32_out(&out, "y");
    for r in 0..20 {
        for c in 0..18 {
            let want: f32 = (0..24)
                .map(|k| ((r * 24 + k) % 5) as f32 - 2.0)
                .zip((0..24).map(|k| ((k * 18 + c) % 3) as f32 * 0.5))
                .map(|(p, q)| p * q)
                .sum();
            assert_eq!(y[r * 18 + c], want, "y[{r}, {c}]");
        }
    }
}

/// The documented order: each thread runs from one barrier to the next before the next thread
/// starts, threads in linear order, blocks in linear order.
#[test]
fn the_interpreter_runs_threads_segment_by_segment_in_order() {
    // Without a barrier, each thread reads back its own write (it runs the whole segment alone).
    let racy = launch("      alloc s: f32[1] shared\n      s[0] = f32(tx)\n      y[bx * 64 + tx] = s[0]");
    let m = module(&racy);
    let inputs = HashMap::from([
        f32_input("x", &[256], |_| 0.0),
        (
            "n".to_string(),
            Buffer { ty: TensorType::new(DType::I32, [256]), data: BufData::I32(vec![0; 256]) },
        ),
    ]);
    let y = f32_out(&interp::run(&m, &inputs).unwrap(), "y");
    assert_eq!(y, (0..256).map(|i| (i % 64) as f32).collect::<Vec<_>>());
    // With a barrier between, every thread reads the last thread's write.
    let synced = racy.replace("      y[bx", "      barrier\n      y[bx");
    let y = f32_out(&interp::run(&module(&synced), &inputs).unwrap(), "y");
    assert_eq!(y, vec![63.0; 256]);
    // Shared memory is per block and poisoned when the block starts; locals are per thread.
    let fresh = launch(
        "      alloc s: f32[1] shared\n      alloc r: f32[1] local\n      if bx == 0 && tx == 0 {\n        s[0] = 5.0\n      }\n      r[0] = f32(tx)\n      barrier\n      y[bx * 64 + tx] = s[0] + r[0]",
    );
    let y = f32_out(&interp::run(&module(&fresh), &inputs).unwrap(), "y");
    assert_eq!(&y[..3], &[5.0, 6.0, 7.0]);
    assert!(y[64..].iter().all(|v| v.is_nan()), "blocks 1 to 3 never wrote their `s`: poison");
}

#[test]
fn the_interpreter_runs_uniform_loops_around_barriers() {
    // Prefix sums of x by doubling, in shared memory: the loop around the barriers is uniform.
    let text = kernel(
        "    launch grid(bx in 0..4) block(tx in 0..64) {
      alloc s: f32[64] shared
      s[tx] = x[bx * 64 + tx]
      barrier
      for lvl in 0..6 {
        let d = select(lvl == 0, 1, select(lvl == 1, 2, select(lvl == 2, 4, select(lvl == 3, 8, select(lvl == 4, 16, 32)))))
        let v = select(tx >= d, s[max(tx - d, 0)], 0.0)
        barrier
        s[tx] = s[tx] + v
        barrier
      }
      y[bx * 64 + tx] = s[tx]
    }",
    );
    let inputs = HashMap::from([
        f32_input("x", &[256], |i| (i % 4) as f32),
        (
            "n".to_string(),
            Buffer { ty: TensorType::new(DType::I32, [256]), data: BufData::I32(vec![0; 256]) },
        ),
    ]);
    let y = f32_out(&interp::run(&module(&text), &inputs).unwrap_or_else(|d| panic!("{d}")), "y");
    let mut want = Vec::new();
    for b in 0..4 {
        let mut acc = 0.0;
        for t in 0..64 {
            acc += ((b * 64 + t) % 4) as f32;
            want.push(acc);
        }
    }
    assert_eq!(y, want);
}

#[test]
fn out_of_bounds_in_a_thread_names_the_thread() {
    let text = launch("      y[bx * 64 + tx] = x[n[bx * 64 + tx]]");
    let src = SourceFile::new("gpu.ekl1", text);
    let m = parse(&src).unwrap();
    let mut idx: Vec<i32> = (0..256).collect();
    idx[131] = 300;
    let inputs = HashMap::from([
        f32_input("x", &[256], |i| i as f32),
        ("n".to_string(), Buffer { ty: TensorType::new(DType::I32, [256]), data: BufData::I32(idx) }),
    ]);
    let d = src.locate(interp::run(&m, &inputs).unwrap_err());
    assert!(d.message.contains("index 300 out of bounds for dim 0 of `x` (size 256) in kernel k0"), "{d}");
    assert!(d.notes.iter().any(|n| n == "at bx = 2, tx = 3"), "{d}");
}
