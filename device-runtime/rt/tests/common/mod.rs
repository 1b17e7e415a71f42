//! Helpers of the runtime's integration tests: compile corpus graphs to kernel objects (or to
//! GPU source with the default GPU lowering), pack them into payloads with the host's own
//! assembler (`ekb_deploy::build::assemble`: the reference interpreter's expected outputs,
//! parameter data), assemble small hand-written objects and GPU kernels, and build the static
//! runtime binaries.
#![allow(dead_code)] // Each test binary uses a different subset.

use ekb_deploy::build::BuildOptions;
use ekb_deploy::driver::Sources;
use ekb_e2e::{load_graph, SEEDS};
use ekb_ir::l0::Graph;
use ekb_ir::l1::Module;
use ekb_ir::TargetProfile;
use ekb_lower::{lower, Schedule};
use ekb_wire::f16;
use ekb_wire::payload::{
    f16s_to_le, f32s_to_le, i32s_to_le, i8s_to_le, le_f16s, le_f32s, le_i32s, le_i8s, Access, Backend,
    BlobKind, BufferDecl, DType, ExpectedOutput, KernelDecl, Launch, LaunchStep, Manifest, MemoryPlan,
    ParamDecl, Payload, PayloadBuilder, Role, Source, TimingSettings, Tolerance,
};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Lowers `g` with `schedule` for `target` and compiles it to an object file in `dir`.
pub fn compile_graph(g: &Graph, schedule: Schedule, target: &TargetProfile, dir: &Path) -> (Module, Vec<u8>) {
    let what = format!("{} ({schedule}, {})", g.name, target.name);
    let m = lower(g, schedule, target).unwrap_or_else(|d| panic!("{what}: {d}"));
    let obj = dir.join(format!("{}-{schedule}-{}.o", g.name, target.name));
    let ir = ekb_llvm::emit(&m, target).unwrap_or_else(|d| panic!("{what}: {d}"));
    ekb_llvm::compile(&ir, target, &obj).unwrap_or_else(|d| panic!("{what}: {d}"));
    (m, std::fs::read(&obj).unwrap())
}

/// A payload running module `m` (lowered from `g`) with kernel object `object`, packed by the
/// host's own assembler (`ekb_deploy::build::assemble`): the seeds of the end-to-end tests,
/// expected outputs from the reference interpreter, the graph's data parameters (loaded) as
/// blobs.
pub fn payload(g: &Graph, m: &Module, target: &TargetProfile, object: &[u8]) -> Vec<u8> {
    let options = BuildOptions { seeds: SEEDS.to_vec(), ..BuildOptions::default() };
    match ekb_deploy::build::assemble(g, m, object, target, &options, Sources::default()) {
        Ok(a) => a.payload,
        Err(ds) => panic!("{}: {}", g.name, ds.iter().map(|d| d.to_string()).collect::<Vec<_>>().join("\n")),
    }
}

/// [`payload`], with `tweak(seed index, output name, values)` applied to each expected output
/// before it is stored.
pub fn payload_with(
    g: &Graph,
    m: &Module,
    target: &TargetProfile,
    object: &[u8],
    mut tweak: impl FnMut(usize, &str, &mut Vec<f64>),
) -> Vec<u8> {
    let bytes = payload(g, m, target, object);
    let view = Payload::parse(&bytes).unwrap();
    let manifest = view.manifest();
    let mut pb = PayloadBuilder::new();
    for i in 0..view.blob_count() as u32 {
        let blob = view.blob(i).unwrap();
        let mut data = blob.data.to_vec();
        if let Some(e) = manifest.expected.iter().find(|e| e.blob == i) {
            let b = &manifest.buffers[e.buffer as usize];
            let mut values: Vec<f64> = match b.dtype {
                DType::F32 => le_f32s(&data).map(f64::from).collect(),
                DType::I32 => le_i32s(&data).map(f64::from).collect(),
                DType::I8 => le_i8s(&data).map(f64::from).collect(),
                DType::F16 => le_f16s(&data).map(|h| f64::from(f16::to_f32(h))).collect(),
            };
            tweak(e.seed as usize, &b.name, &mut values);
            data = match b.dtype {
                DType::F32 => f32s_to_le(&values.iter().map(|&v| v as f32).collect::<Vec<_>>()),
                DType::I32 => i32s_to_le(&values.iter().map(|&v| v as i32).collect::<Vec<_>>()),
                DType::I8 => i8s_to_le(&values.iter().map(|&v| v as i8).collect::<Vec<_>>()),
                DType::F16 => {
                    f16s_to_le(&values.iter().map(|&v| f16::from_f32(v as f32)).collect::<Vec<_>>())
                }
            };
        }
        pb.add_blob(blob.kind, data);
    }
    pb.finish(manifest).unwrap()
}

/// Every corpus graph with both schedules, compiled for `profile` into payload files in `dir`:
/// (name for messages, payload path).
pub fn corpus_payloads(profile: &str, dir: &Path) -> Vec<(String, PathBuf)> {
    let target = TargetProfile::load(profile).unwrap();
    let mut out = Vec::new();
    for path in ekb_e2e::corpus_files() {
        let g = load_graph(&path);
        for schedule in Schedule::ALL {
            let (m, obj) = compile_graph(&g, schedule, &target, dir);
            let name = format!("{}-{schedule}", g.name);
            let file = dir.join(format!("{name}.ekp"));
            std::fs::write(&file, payload(&g, &m, &target, &obj)).unwrap();
            out.push((name, file));
        }
    }
    out
}

/// The default GPU lowering of `g` for `target` (which has a GPU), written in the GPU's dialect
/// and packed by the host's assembler: (the module, the payload).
pub fn gpu_graph_payload(g: &Graph, target: &TargetProfile) -> (Module, Vec<u8>) {
    let what = format!("{} (GPU, {})", g.name, target.name);
    let m = ekb_lower::lower_gpu(g, Schedule::Default, target).unwrap_or_else(|d| panic!("{what}: {d}"));
    let dialect = match target.gpu.as_ref().map(|g| g.api) {
        Some(ekb_ir::target::GpuApi::Cuda) => ekb_gpu_c::Dialect::Cuda,
        _ => ekb_gpu_c::Dialect::OpenCl,
    };
    let source = ekb_gpu_c::emit(&m, dialect, target).unwrap_or_else(|d| panic!("{what}: {d}"));
    let bytes = payload(g, &m, target, source.as_bytes());
    (m, bytes)
}

/// A hand-written GPU kernel `name(x: f32[..] in, y: f32[..] out)` and its launch.
pub struct HandKernel<'a> {
    pub backend: Backend,
    pub name: &'a str,
    pub source: &'a str,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    /// Shared memory per block it declares (an allocation `s`).
    pub shared: u64,
    /// Opts in to dynamic shared memory (CUDA): `shared` rounded to 16 bytes at launch.
    pub optin: bool,
}

/// A payload of one hand-written GPU kernel, with the GPU limits of profile `target`: `x`
/// (`x_shape`) from `uniform(-1, 1)`, and for each seed the expected `y` (`y_shape`) is `f(x)`;
/// `tweak` changes the manifest before the payload is written.
pub fn gpu_kernel_payload(
    k: &HandKernel<'_>,
    target: &TargetProfile,
    (x_shape, y_shape): (&[u64], &[u64]),
    seeds: &[u64],
    f: impl Fn(&[f32]) -> Vec<f32>,
    tweak: impl FnOnce(&mut Manifest),
) -> Vec<u8> {
    let init = ekb_wire::Init::Uniform { lo: -1.0, hi: 1.0 };
    let numel = |s: &[u64]| s.iter().product::<u64>() as usize;
    let mut pb = PayloadBuilder::new();
    let kind = if k.backend == Backend::Cuda { BlobKind::CudaSource } else { BlobKind::OpenClSource };
    let code = pb.add_blob(kind, k.source.as_bytes().to_vec());
    let mut expected = Vec::new();
    for (s, &seed) in seeds.iter().enumerate() {
        let mut x = vec![0f32; numel(x_shape)];
        let key = ekb_wire::seeded::tensor_key(k.name, seed, "x");
        let shape: Vec<usize> = x_shape.iter().map(|&d| d as usize).collect();
        ekb_wire::seeded::fill_f32(&init, &shape, key, &mut x).unwrap();
        let y = f(&x);
        assert_eq!(y.len(), numel(y_shape));
        let blob = pb.add_blob(BlobKind::ExpectedOutput, f32s_to_le(&y));
        expected.push(ExpectedOutput { seed: s as u32, buffer: 1, blob });
    }
    let param = |name: &str, shape: &[u64], access| ParamDecl {
        name: name.into(),
        dtype: DType::F32,
        shape: shape.to_vec(),
        access,
    };
    let buffer = |name: &str, shape: &[u64], role, init: Option<ekb_wire::Init>| BufferDecl {
        name: name.into(),
        dtype: DType::F32,
        shape: shape.to_vec(),
        role,
        source: init.map(Source::Seeded),
    };
    let gpu = target.gpu.as_ref().expect("a target with a GPU");
    let allocs = if k.shared > 0 {
        vec![ekb_wire::payload::AllocDecl {
            name: "s".into(),
            scope: ekb_wire::payload::MemScope::Shared,
            bytes: k.shared,
        }]
    } else {
        vec![]
    };
    let mut manifest = Manifest {
        generator_version: ekb_wire::seeded::GENERATOR_VERSION,
        producer: "ekb-rt tests".into(),
        task: k.name.into(),
        target: target.name.clone(),
        backend: k.backend,
        kernels: vec![KernelDecl {
            name: k.name.into(),
            symbol: k.name.into(),
            blob: code,
            params: vec![param("x", x_shape, Access::In), param("y", y_shape, Access::Out)],
            launch: Launch::Grid {
                grid: k.grid,
                block: k.block,
                shared_bytes: if k.optin { k.shared.next_multiple_of(16) as u32 } else { 0 },
                shared_optin: k.optin,
            },
            allocs,
        }],
        buffers: vec![
            buffer("x", x_shape, Role::Input, Some(init)),
            buffer("y", y_shape, Role::Output, None),
        ],
        plan: vec![LaunchStep { kernel: 0, args: vec![0, 1] }],
        prepare_steps: 0,
        seeds: seeds.to_vec(),
        tolerance: Tolerance { atol: 1e-5, rtol: 1e-5 },
        expected,
        timing: TimingSettings::DEFAULT,
        memory: MemoryPlan {
            peak_bytes: 4 * (numel(x_shape) + numel(y_shape)) as u64,
            stack_limit_bytes: 1 << 16,
            memory_limit_bytes: gpu.memory_bytes,
        },
        gpu: Some(ekb_wire::payload::GpuLimits {
            max_threads_per_block: gpu.max_threads_per_block,
            shared_bytes_per_block: gpu.shared_bytes_per_block,
            shared_bytes_optin: gpu.shared_bytes_per_block_optin,
            private_bytes_per_thread: gpu.private_bytes_per_thread,
            max_buffer_bytes: gpu.max_buffer_bytes,
        }),
        arena: None,
        repeat: 1,
    };
    tweak(&mut manifest);
    pb.finish(&manifest).unwrap()
}

/// Assembles `asm` for `triple` with clang into object bytes.
pub fn assemble(asm: &str, triple: &str) -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let (src, obj) = (dir.path().join("k.s"), dir.path().join("k.o"));
    std::fs::write(&src, asm).unwrap();
    let out = Command::new(ekb_llvm::find_clang().unwrap())
        .args(["-c", &format!("--target={triple}"), "-x", "assembler"])
        .arg(&src)
        .arg("-o")
        .arg(&obj)
        .output()
        .unwrap();
    assert!(out.status.success(), "clang: {}", String::from_utf8_lossy(&out.stderr));
    std::fs::read(obj).unwrap()
}

/// A per-test scratch directory under cargo's target tmpdir.
pub fn work_dir(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("ekb-rt-{name}"));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The static release runtime for `target` (a musl triple), built by cargo for the tests
/// (`ekb_e2e::static_runtime`).
pub fn build_static_runtime(target: &str) -> PathBuf {
    ekb_e2e::static_runtime(target, Path::new(env!("CARGO_TARGET_TMPDIR")))
}

/// A payload of one hand-written kernel `ekb_k_<task>(x: f32[n] in, y: f32[n] out)` in
/// `object`, with `x` from `uniform(-1, 1)` and the expected `y[i] = f(x[i])` for each seed.
pub fn elementwise_payload(
    object: Vec<u8>,
    task: &str,
    n: u64,
    seeds: &[u64],
    f: impl Fn(f32) -> f32,
) -> Vec<u8> {
    let init = ekb_wire::Init::Uniform { lo: -1.0, hi: 1.0 };
    let mut pb = PayloadBuilder::new();
    let code = pb.add_blob(BlobKind::ElfObject, object);
    let mut expected = Vec::new();
    for (s, &seed) in seeds.iter().enumerate() {
        let mut x = vec![0f32; n as usize];
        let key = ekb_wire::seeded::tensor_key(task, seed, "x");
        ekb_wire::seeded::fill_f32(&init, &[n as usize], key, &mut x).unwrap();
        let y: Vec<f32> = x.iter().map(|&v| f(v)).collect();
        let blob = pb.add_blob(BlobKind::ExpectedOutput, f32s_to_le(&y));
        expected.push(ExpectedOutput { seed: s as u32, buffer: 1, blob });
    }
    let buffer = |name: &str, role, init: Option<ekb_wire::Init>| BufferDecl {
        name: name.into(),
        dtype: DType::F32,
        shape: vec![n],
        role,
        source: init.map(Source::Seeded),
    };
    let buffers = vec![buffer("x", Role::Input, Some(init)), buffer("y", Role::Output, None)];
    let manifest = one_kernel_manifest(task, code, buffers, seeds, expected, 8 * n);
    pb.finish(&manifest).unwrap()
}

/// The manifest of a payload whose plan runs one hand-written CPU kernel `ekb_k_<task>` (object
/// blob `code`) once over every buffer in order: its parameters are the buffers, read for inputs
/// and parameters and written for outputs. Outputs are compared exactly with `expected` on
/// `seeds`, and the plan's peak is `peak_bytes`.
pub fn one_kernel_manifest(
    task: &str,
    code: u32,
    buffers: Vec<BufferDecl>,
    seeds: &[u64],
    expected: Vec<ExpectedOutput>,
    peak_bytes: u64,
) -> Manifest {
    let params = buffers
        .iter()
        .map(|b| ParamDecl {
            name: b.name.clone(),
            dtype: b.dtype,
            shape: b.shape.clone(),
            access: if b.role == Role::Output { Access::Out } else { Access::In },
        })
        .collect();
    Manifest {
        generator_version: ekb_wire::seeded::GENERATOR_VERSION,
        producer: "ekb-rt tests".into(),
        task: task.into(),
        target: "hand-written".into(),
        backend: Backend::CpuLlvm,
        kernels: vec![KernelDecl {
            name: task.into(),
            symbol: format!("ekb_k_{task}"),
            blob: code,
            params,
            launch: Launch::Cpu,
            allocs: vec![],
        }],
        plan: vec![LaunchStep { kernel: 0, args: (0..buffers.len() as u32).collect() }],
        prepare_steps: 0,
        buffers,
        seeds: seeds.to_vec(),
        tolerance: Tolerance { atol: 0.0, rtol: 0.0 },
        expected,
        timing: TimingSettings::DEFAULT,
        memory: MemoryPlan { peak_bytes, stack_limit_bytes: 4096, memory_limit_bytes: 1 << 20 },
        gpu: None,
        arena: None,
        repeat: 1,
    }
}

/// Compiles hand-written LLVM IR for the `host` profile with the CPU adapter's compiler
/// (which checks the object against the kernel ABI).
pub fn compile_ir(ir: &str) -> Vec<u8> {
    let target = TargetProfile::load("host").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let obj = dir.path().join("k.o");
    ekb_llvm::compile(ir, &target, &obj).unwrap_or_else(|d| panic!("{d}\n{ir}"));
    std::fs::read(obj).unwrap()
}

/// [`elementwise_payload`] with the manifest changed by `tweak` before the payload is written.
pub fn elementwise_payload_with(
    object: Vec<u8>,
    task: &str,
    n: u64,
    seeds: &[u64],
    f: impl Fn(f32) -> f32,
    tweak: impl FnOnce(&mut Manifest),
) -> Vec<u8> {
    let bytes = elementwise_payload(object, task, n, seeds, f);
    let view = ekb_wire::payload::Payload::parse(&bytes).unwrap();
    let mut manifest = view.manifest().clone();
    tweak(&mut manifest);
    let mut pb = PayloadBuilder::new();
    for i in 0..view.blob_count() {
        let b = view.blob(i as u32).unwrap();
        pb.add_blob(b.kind, b.data.to_vec());
    }
    pb.finish(&manifest).unwrap()
}

/// A client of `ekb-rt serve` over pipes: the runtime as a child process.
pub struct Client {
    pub child: std::process::Child,
    stdin: Option<std::process::ChildStdin>,
    stdout: Option<std::process::ChildStdout>,
    decoder: ekb_wire::protocol::FrameDecoder,
    pending: Vec<Vec<u8>>,
}

impl Client {
    /// Starts `runtime serve` (the binary under test unless given).
    pub fn start(runtime: &Path, args: &[&str]) -> Client {
        let mut child = Command::new(runtime)
            .arg("serve")
            .args(args)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::inherit())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let stdout = child.stdout.take();
        Client { child, stdin, stdout, decoder: ekb_wire::protocol::FrameDecoder::new(), pending: Vec::new() }
    }

    /// Writes raw bytes to the runtime.
    pub fn send_raw(&mut self, bytes: &[u8]) {
        use std::io::Write;
        let stdin = self.stdin.as_mut().expect("stdin is open");
        stdin.write_all(bytes).unwrap();
        stdin.flush().unwrap();
    }

    pub fn send(&mut self, r: &ekb_wire::protocol::Request) {
        self.send_raw(&ekb_wire::protocol::encode_frame(r).unwrap());
    }

    /// The next response; panics if the stream ends first.
    pub fn recv(&mut self) -> ekb_wire::protocol::Response {
        self.try_recv().expect("the runtime closed its output")
    }

    /// The next response, or `None` at the end of the stream.
    pub fn try_recv(&mut self) -> Option<ekb_wire::protocol::Response> {
        use std::io::Read;
        loop {
            if !self.pending.is_empty() {
                let body = self.pending.remove(0);
                return Some(ekb_wire::protocol::decode_message(&body).unwrap());
            }
            let mut buf = [0u8; 65536];
            let n = self.stdout.as_mut().expect("stdout is open").read(&mut buf).unwrap();
            if n == 0 {
                return None;
            }
            let mut rest = &buf[..n];
            while !rest.is_empty() {
                if let Some(body) = self.decoder.decode(&mut rest).unwrap() {
                    self.pending.push(body);
                }
            }
        }
    }

    /// Sends `r` and returns the response.
    pub fn call(&mut self, r: &ekb_wire::protocol::Request) -> ekb_wire::protocol::Response {
        self.send(r);
        self.recv()
    }

    /// `Hello` for the current protocol version.
    pub fn hello(&mut self) {
        use ekb_wire::protocol::PROTOCOL_VERSION;
        let ack = self.call(&ekb_wire::protocol::Request::Hello {
            min_version: PROTOCOL_VERSION,
            max_version: PROTOCOL_VERSION,
            client: "tests".into(),
            client_version: "0".into(),
        });
        let agreed = matches!(ack, ekb_wire::protocol::Response::HelloAck { version, .. } if version == PROTOCOL_VERSION);
        assert!(agreed, "{ack:?}");
    }

    /// Loads `payload` and returns its id.
    pub fn load(&mut self, payload: &[u8]) -> ekb_wire::protocol::PayloadId {
        match self.call(&ekb_wire::protocol::Request::Load { payload: payload.to_vec() }) {
            ekb_wire::protocol::Response::Loaded { payload, .. } => payload,
            other => panic!("{other:?}"),
        }
    }

    /// Closes the runtime's input.
    pub fn close_input(&mut self) {
        self.stdin = None;
    }

    /// Stops reading the runtime's output (closes the pipe's read end).
    pub fn close_output(&mut self) {
        self.stdout = None;
    }

    /// Waits for the runtime to exit (at most 20 s).
    pub fn wait(&mut self) -> std::process::ExitStatus {
        for _ in 0..2000 {
            if let Some(s) = self.child.try_wait().unwrap() {
                return s;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let _ = self.child.kill();
        panic!("the runtime did not exit");
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The values of the data parameters of [`data_graph`]: `w: f32[5,6]`, `b: f32[5]`, `k: i32[5]`.
pub fn data_values() -> (Vec<f32>, Vec<f32>, Vec<i32>) {
    let w = (0..30).map(|i| ((i * 7) % 13) as f32 / 8.0 - 0.75).collect();
    (w, vec![0.5, -0.25, 0.125, 1.0, -2.0], vec![3, -2, 7, 0, -9])
}

/// Writes `lin.ekir` and its data file `lin.bin` into `dir`: `y = relu(linear(x, w, b))` and
/// `z = n + k`, with `w`, `b` and `k` taken from the file (64-byte aligned, as the ONNX importer
/// writes them), and returns the graph's path.
pub fn data_graph(dir: &Path) -> PathBuf {
    let (w, b, k) = data_values();
    let mut bin = f32s_to_le(&w);
    let (w_crc, b_crc, k_crc) =
        (ekb_wire::crc32(&bin), ekb_wire::crc32(&f32s_to_le(&b)), ekb_wire::crc32(&i32s_to_le(&k)));
    bin.resize(128, 0);
    bin.extend_from_slice(&f32s_to_le(&b));
    bin.resize(192, 0);
    bin.extend_from_slice(&i32s_to_le(&k));
    std::fs::write(dir.join("lin.bin"), bin).unwrap();
    let text = format!(
        "graph lin(x: f32[4,6], n: i32[5] = randint(-50, 50)) -> (y: f32[4,5], z: i32[5]) {{
  param w: f32[5,6] = file(\"lin.bin\", offset=0, crc32=\"{w_crc:08x}\")
  param b: f32[5] = file(\"lin.bin\", offset=128, crc32=\"{b_crc:08x}\")
  param k: i32[5] = file(\"lin.bin\", offset=192, crc32=\"{k_crc:08x}\")
  %0 = linear(x, w, b)
  %1 = relu(%0)
  %2 = add(n, k)
  return %1, %2
}}
"
    );
    let path = dir.join("lin.ekir");
    std::fs::write(&path, text).unwrap();
    path
}

/// [`data_graph`] compiled for `profile` with the default schedule into a payload file in
/// `dir`: (name for messages, payload path).
pub fn data_payload(profile: &str, dir: &Path) -> (String, PathBuf) {
    let target = TargetProfile::load(profile).unwrap();
    let g = load_graph(&data_graph(dir));
    let (m, obj) = compile_graph(&g, Schedule::Default, &target, dir);
    let file = dir.join("lin-data.ekp");
    std::fs::write(&file, payload(&g, &m, &target, &obj)).unwrap();
    ("lin (parameter data)".into(), file)
}
