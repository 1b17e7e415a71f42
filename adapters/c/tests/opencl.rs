//! OpenCL execution through the system's driver (PoCL in CI): every corpus graph's default GPU
//! lowering matches the L0 reference and the L1 interpreter, the golden kernels build and run,
//! profiling times and kernel resources come back, and illegal launches or broken sources are
//! reported as what they are before or instead of running.

use ekb_e2e::{check_outputs, corpus_files, load_graph, reference, SEEDS};
use ekb_gpu_c::run::{Api, Gpu, KernelResources};
use ekb_gpu_c::{emit, Dialect};
use ekb_ir::l1::{interp, parse::parse, Module};
use ekb_ir::tensor::{BufData, Buffer};
use ekb_ir::types::{DType, TensorType};
use ekb_ir::{SourceFile, TargetProfile};
use ekb_lower::{lower_gpu, Schedule};
use std::collections::HashMap;
use std::path::Path;

fn golden(stem: &str) -> Module {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/golden/{stem}.ekl1"));
    parse(&SourceFile::read(&path).unwrap()).unwrap()
}

fn f32s(data: Vec<f32>, shape: &[usize]) -> Buffer {
    Buffer { ty: TensorType::new(DType::F32, shape.to_vec()), data: BufData::F32(data) }
}

#[test]
fn every_corpus_graph_runs_on_the_opencl_device_and_matches() {
    let gpu = Gpu::open(Api::OpenCl).unwrap_or_else(|d| panic!("{d}"));
    let t = TargetProfile::load("pocl").unwrap();
    let mut kernels_run = 0;
    for (path, schedule) in corpus_files().into_iter().flat_map(|p| Schedule::ALL.map(|s| (p.clone(), s))) {
        let g = load_graph(&path);
        let m = lower_gpu(&g, schedule, &t).unwrap_or_else(|d| panic!("{} {schedule}: {d}", g.name));
        for seed in SEEDS {
            let (inputs, want) = reference(&g, seed);
            let report = gpu.run(&m, &inputs).unwrap_or_else(|d| panic!("{} seed {seed}: {d}", g.name));
            let problems = check_outputs(&g, &want, &report.outputs);
            assert!(
                problems.is_empty(),
                "{} {schedule} seed {seed} on {}: {problems:?}",
                g.name,
                report.device.name
            );
            // The L1 interpreter agrees with the device too.
            let interp = interp::run(&m, &inputs).unwrap();
            assert!(check_outputs(&g, &want, &interp).is_empty());
            assert_eq!(report.steps.len(), m.plan.len());
            for s in &report.steps {
                let threads: u64 = s.block.iter().map(|&b| u64::from(b)).product();
                assert!(s.resources.max_threads().0 >= threads, "{}: {s:?}", g.name);
                assert!(matches!(s.resources, KernelResources::OpenCl { .. }));
            }
            kernels_run += report.steps.len();
        }
    }
    assert!(kernels_run >= 2 * 3 * 63, "{kernels_run}");
}

#[test]
fn golden_kernels_build_run_and_report_their_resources() {
    let gpu = Gpu::open(Api::OpenCl).unwrap();
    let m = golden("rowsum");
    let x: Vec<f32> = (0..800).map(|i| ((i * 7) % 13) as f32 - 6.0).collect();
    let report = gpu.run(&m, &HashMap::from([("x".to_string(), f32s(x.clone(), &[8, 100]))])).unwrap();
    let BufData::F32(y) = &report.outputs["y"].data else { panic!() };
    for (row, got) in y.iter().enumerate() {
        let want: f32 = x[row * 100..(row + 1) * 100].iter().sum();
        assert!((got - want).abs() <= 1e-4 * want.abs().max(1.0), "row {row}: {got} vs {want}");
    }
    let step = &report.steps[0];
    assert_eq!((step.grid, step.block), ([8, 1, 1], [64, 1, 1]));
    assert!(step.time_ns > 0, "profiling time {step:?}");
    // The 64-float shared tree: the driver reports at least its 256 bytes of local memory.
    let KernelResources::OpenCl { local_mem_bytes, .. } = step.resources else { panic!("{step:?}") };
    assert!(local_mem_bytes >= 256, "{step:?}");
    // The tiled matmul in shared memory, against a plain product.
    let m = golden("matmul_tiled");
    let a: Vec<f32> = (0..480).map(|i| (i % 5) as f32 - 2.0).collect();
    let b: Vec<f32> = (0..432).map(|i| (i % 3) as f32 * 0.5).collect();
    let inputs = HashMap::from([
        ("a".to_string(), f32s(a.clone(), &[20, 24])),
        ("b".to_string(), f32s(b.clone(), &[24, 18])),
    ]);
    let report = gpu.run(&m, &inputs).unwrap();
    let BufData::F32(y) = &report.outputs["y"].data else { panic!() };
    for r in 0..20 {
        for c in 0..18 {
            let want: f32 = (0..24).map(|k| a[r * 24 + k] * b[k * 18 + c]).sum();
            assert_eq!(y[r * 18 + c], want, "y[{r}, {c}]");
        }
    }
    assert_eq!(report.steps[0].block, [8, 8, 1]);
    let KernelResources::OpenCl { local_mem_bytes, .. } = report.steps[0].resources else { panic!() };
    assert!(local_mem_bytes >= 544);
}

#[test]
fn illegal_launches_are_found_before_anything_runs() {
    let gpu = Gpu::open(Api::OpenCl).unwrap();
    let info = &gpu.info;
    // One more thread per block than the device allows.
    let too_many = info.max_threads_per_block + 1;
    let text = format!(
        "module wide {{\n  input x: f32[1]\n  output y: f32[1]\n\n  kernel k(x: f32[1] in, y: f32[1] out) {{\n    launch grid(bx in 0..1) block(tx in 0..{too_many}) {{\n      if tx == 0 {{\n        y[0] = x[0]\n      }}\n    }}\n  }}\n\n  run k(x, y)\n}}\n"
    );
    let m = parse(&SourceFile::new("wide", text)).unwrap();
    let inputs = HashMap::from([("x".to_string(), f32s(vec![1.0], &[1]))]);
    let d = gpu.run(&m, &inputs).unwrap_err();
    assert!(
        d.message.contains(&format!(
            "has {too_many} threads per block (block(tx in 0..{too_many})), over the limit of {} from OpenCL device `{}` (CL_DEVICE_MAX_WORK_GROUP_SIZE)",
            info.max_threads_per_block, info.name
        )),
        "{d}"
    );
    assert!(d.notes.iter().any(|n| n == "found before launch: nothing was enqueued"), "{d}");
    // More local memory than the device has.
    let floats = info.shared_bytes_per_block / 4 + 1;
    let text = format!(
        "module big {{\n  input x: f32[1]\n  output y: f32[1]\n\n  kernel k(x: f32[1] in, y: f32[1] out) {{\n    launch grid(bx in 0..1) block(tx in 0..1) {{\n      alloc s: f32[{floats}] shared\n      s[0] = x[0]\n      y[0] = s[0]\n    }}\n  }}\n\n  run k(x, y)\n}}\n"
    );
    let m = parse(&SourceFile::new("big", text)).unwrap();
    let d = gpu.run(&m, &inputs).unwrap_err();
    assert!(
        d.message.contains(&format!(
            "shared alloc `s` (f32[{floats}]) of kernel k needs {} bytes per block",
            floats * 4
        )),
        "{d}"
    );
    assert!(d.message.contains("(CL_DEVICE_LOCAL_MEM_SIZE)"), "{d}");
    // The rk3588 profile's limit is found by the verifier the same way, without a device.
    let t = TargetProfile::load("rk3588").unwrap();
    let d = emit(&m, Dialect::OpenCl, &t).unwrap_err();
    assert!(
        d.message.contains(
            "over the limit of 32768 bytes from target profile `rk3588` (gpu.shared_bytes_per_block)"
        ),
        "{d}"
    );
}

#[test]
fn a_write_past_a_buffer_is_caught_by_its_guard() {
    let gpu = Gpu::open(Api::OpenCl).unwrap();
    let m = golden("relu");
    let t = TargetProfile::load("pocl").unwrap();
    let source = emit(&m, Dialect::OpenCl, &t).unwrap().replace("y[i] = ekb_fmax", "y[i + 1] = ekb_fmax");
    let inputs = HashMap::from([("x".to_string(), f32s(vec![0.5; 1000], &[1000]))]);
    let d = gpu.run_source(&m, &source, &inputs).unwrap_err();
    assert_eq!(
        d.message,
        "a kernel of module relu wrote 4 byte(s) outside buffer `y` (f32[1000]), the first 0 bytes past the end"
    );
}

#[test]
fn a_broken_source_is_a_build_error_with_the_log() {
    let gpu = Gpu::open(Api::OpenCl).unwrap();
    let m = golden("relu");
    let t = TargetProfile::load("pocl").unwrap();
    let broken = emit(&m, Dialect::OpenCl, &t)
        .unwrap()
        .replace("ekb_fmax(x[i], 0.0f)", "ekb_fmax(x[i], undefined_value)");
    let inputs = HashMap::from([("x".to_string(), f32s(vec![0.0; 1000], &[1000]))]);
    let d = gpu.run_source(&m, &broken, &inputs).unwrap_err();
    assert!(d.message.starts_with("OpenCL build of module relu failed"), "{d}");
    let log = d.notes.iter().find(|n| n.starts_with("build log:")).expect("the build log");
    assert!(log.contains("undefined_value"), "{log}");
}

#[test]
fn vector_loads_and_stores_compute_what_the_plain_loops_do() {
    let gpu = Gpu::open(Api::OpenCl).unwrap();
    let m = golden("vector");
    let x: Vec<f32> = (0..64 * 256).map(|i| ((i * 37) % 101) as f32 / 50.0 - 1.0).collect();
    let b: Vec<f32> = (0..256).map(|i| ((i * 11) % 7) as f32 / 7.0 - 0.5).collect();
    let inputs = HashMap::from([
        ("x".to_string(), f32s(x.clone(), &[64, 256])),
        ("b".to_string(), f32s(b.clone(), &[256])),
    ]);
    let src = emit(&m, Dialect::OpenCl, &TargetProfile::load("pocl").unwrap()).unwrap();
    assert_eq!(src.matches("vload4(0, &").count(), 4, "{src}");
    assert!(src.contains("vload4(0, &tile[1 * 260 + t4 + 0]);"), "{src}");
    assert_eq!(src.matches("vstore4(").count(), 2, "{src}");
    let report = gpu.run(&m, &inputs).unwrap_or_else(|d| panic!("{d}"));
    let want = interp::run(&m, &inputs).unwrap();
    for name in ["y", "z", "w", "f"] {
        assert_eq!(report.outputs[name].data, want[name].data, "{name}");
    }
    // And by hand: y = relu(x + b) * x[r, 0], z = sign, w the strided copy.
    let BufData::F32(y) = &report.outputs["y"].data else { panic!() };
    let BufData::I32(z) = &report.outputs["z"].data else { panic!() };
    let BufData::F32(w) = &report.outputs["w"].data else { panic!() };
    let BufData::F32(f) = &report.outputs["f"].data else { panic!() };
    for r in 0..64 {
        for c in 0..256 {
            let i = r * 256 + c;
            assert_eq!(y[i], (x[i] + b[c]).max(0.0) * x[r * 256], "y[{r}, {c}]");
            assert_eq!(z[i], if x[i] > 0.0 { 1 } else { -1 }, "z[{r}, {c}]");
            assert_eq!(w[r * 256 + (c % 4) * 64 + c / 4], x[i], "w at x[{r}, {c}]");
            // A thread's fragment is its mirror thread's 4 elements, reversed and doubled, plus
            // one of the two elements after their first.
            let (t, j) = (c / 4, c % 4);
            let (m, off) = ((63 - t) * 4, |k: usize| if k < 256 { x[r * 256 + k] } else { 0.5 });
            assert_eq!(f[i], x[r * 256 + m + 3 - j] * 2.0 + off(m + 1 + j % 2), "f[{r}, {c}]");
        }
    }
}

#[test]
fn register_tiled_products_on_dividing_shapes_move_whole_vectors_and_match() {
    // Tiles that divide the matrices: each thread's share of a stage is loaded as float4s (along
    // `k` or along the rows, by the operand's layout), `b`-like tiles are stored to shared memory
    // as float4s, and every fragment is read back as float4s.
    let text = "graph g(a: f32[128,64], b: f32[64,128], at: f32[64,128], bt: f32[128,64], \
                x: f32[2,64,64], w: f32[128,64], c: f32[128]) \
                -> (y: f32[128,128], ya: f32[128,128], yb: f32[128,128], l: f32[2,64,128]) {
  %y = matmul(a, b, transpose_a=false, transpose_b=false)
  %ya = matmul(at, b, transpose_a=true, transpose_b=false)
  %yb = matmul(a, bt, transpose_a=false, transpose_b=true)
  %l = linear(x, w, c)
  return %y, %ya, %yb, %l
}
";
    let g = ekb_ir::l0::check::load(&SourceFile::new("g.ekir", text)).unwrap_or_else(|d| panic!("{}", d[0]));
    let t = TargetProfile::load("pocl").unwrap();
    let m = lower_gpu(&g, Schedule::Default, &t).unwrap_or_else(|d| panic!("{d}"));
    let src = emit(&m, Dialect::OpenCl, &t).unwrap();
    assert_eq!(m.kernels.len(), 4, "{src}");
    for operand in ["a", "b", "at", "bt", "x", "w"] {
        assert!(src.contains(&format!("vload4(0, &{operand}[")), "{operand} loaded as vectors:\n{src}");
    }
    // Per kernel, the fragments' two vector loads from shared memory.
    assert_eq!(src.matches("vload4(0, &sa[").count(), 4, "{src}");
    assert_eq!(src.matches("vload4(0, &sb[").count(), 4, "{src}");
    assert!(src.contains(", 0, &sb["), "a tile of rows stored as vectors:\n{src}");
    let gpu = Gpu::open(Api::OpenCl).unwrap_or_else(|d| panic!("{d}"));
    for seed in SEEDS {
        let (inputs, want) = reference(&g, seed);
        let report = gpu.run(&m, &inputs).unwrap_or_else(|d| panic!("seed {seed}: {d}"));
        let problems = check_outputs(&g, &want, &report.outputs);
        assert!(problems.is_empty(), "seed {seed}: {problems:?}");
    }
}
