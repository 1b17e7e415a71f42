//! `ekb build`, `ekb run`, `ekb pack` and `ekb collect` as users run them, with the static
//! runtimes built by cargo: payloads run here and under qemu-user, and the air-gapped round
//! trip — a bundle copied to a fresh directory, its `run.sh` run with nothing of the host on
//! `PATH`, the reports read back — gives the same results as running the payloads directly.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The static release runtime for a musl target, built by cargo for the tests.
fn static_runtime(triple: &str) -> PathBuf {
    ekb_e2e::static_runtime(triple, Path::new(env!("CARGO_TARGET_TMPDIR")))
}

/// `ekb` with both static runtimes named by the environment.
fn ekb(args: &[&str], dir: &Path) -> Output {
    ekb_cmd(args, dir).output().expect("ekb runs")
}

fn ekb_cmd(args: &[&str], dir: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_ekb"));
    c.args(args)
        .current_dir(dir)
        .env("EKB_RT_X86_64", static_runtime("x86_64-unknown-linux-musl"))
        .env("EKB_RT_AARCH64", static_runtime("aarch64-unknown-linux-musl"))
        .env_remove("EKB_RT")
        .env_remove("EKB_RT_GPU");
    c
}

/// `ekb` with the static runtimes and this machine's OpenCL runtime named by the environment.
fn ekb_gpu(args: &[&str], dir: &Path) -> Output {
    let gpu = ekb_e2e::opencl_runtime(Path::new(env!("CARGO_TARGET_TMPDIR")));
    ekb_cmd(args, dir).env("EKB_RT_GPU_X86_64", gpu).output().expect("ekb runs")
}

fn corpus(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/ops").join(name).display().to_string()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn ok(o: &Output) -> String {
    assert!(
        o.status.success(),
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status,
        text(&o.stdout),
        text(&o.stderr)
    );
    text(&o.stdout)
}

fn json(o: &Output) -> serde_json::Value {
    serde_json::from_str(&ok(o)).unwrap_or_else(|e| panic!("{e}: {}", text(&o.stdout)))
}

#[test]
fn build_writes_a_payload_and_prints_a_summary() {
    let dir = tempfile::tempdir().unwrap();
    let out =
        ok(&ekb(&["build", &corpus("matmul.ekir"), "--target", "aarch64-qemu", "-o", "mm.ekp"], dir.path()));
    assert!(
        out.starts_with("wrote mm.ekp: matmul for aarch64-qemu, default schedule: 1 kernel, 1 plan step, "),
        "{out}"
    );
    // a, b, y: (19*23 + 23*37 + 19*37) * 4 = 7964 bytes, plus the kernel's `acc: f32[1,37]`
    // local row (148 bytes) = 8112 bytes = 7.9 KiB; aarch64-qemu's budget is 2 GiB.
    assert!(out.trim_end().ends_with("3 seeds, peak memory 7.9 KiB of 2.0 GiB"), "{out}");
    let bytes = std::fs::read(dir.path().join("mm.ekp")).unwrap();
    let view = ekb_wire::payload::Payload::parse(&bytes).unwrap();
    assert_eq!(view.manifest().target, "aarch64-qemu");

    // Default output name, seeds and schedule as given, JSON summary.
    let j = json(&ekb(
        &["build", &corpus("relu.ekir"), "--schedule", "naive", "--seeds", "4,5", "--json"],
        dir.path(),
    ));
    assert_eq!(j["payload"], "relu.ekp");
    assert_eq!(j["summary"]["schedule"], "naive");
    assert_eq!(j["summary"]["target"], "host");
    assert_eq!(j["summary"]["seeds"], serde_json::json!([4, 5]));
    assert_eq!(j["summary"]["payload_bytes"], std::fs::metadata(dir.path().join("relu.ekp")).unwrap().len());
    let tolerance = |name: &str| {
        let bytes = std::fs::read(dir.path().join(name)).unwrap();
        let t = ekb_wire::payload::Payload::parse(&bytes).unwrap().manifest().tolerance;
        (t.atol, t.rtol)
    };
    // A plain graph is compared at the protocol's default; a task file at its own tolerance.
    assert_eq!(tolerance("relu.ekp"), (1e-4, 1e-4));
    let task = dir.path().join("relu_task.ekir");
    let graph = std::fs::read_to_string(corpus("relu.ekir")).unwrap();
    let graph = &graph[graph.find("graph ").unwrap()..];
    std::fs::write(
        &task,
        format!(
            "# task: level=1 family=activation domains=[mobile]\n\
             # provenance: model=test layer=relu module=torch.nn.ReLU\n\
             # tolerance: atol=2e-3 rtol=1e-3 reason=\"a test\"\n{graph}"
        ),
    )
    .unwrap();
    ok(&ekb(&["build", task.to_str().unwrap(), "-o", "task.ekp"], dir.path()));
    assert_eq!(tolerance("task.ekp"), (2e-3, 1e-3));
}

#[test]
fn build_errors_are_diagnostics_with_exit_status_1() {
    let dir = tempfile::tempdir().unwrap();
    let l1 = dir.path().join("k.ekir");
    std::fs::write(&l1, "module k {\n  input x: f32[2]\n  output y: f32[2]\n  kernel c(x: f32[2] in, y: f32[2] out) {\n    for i in 0..2 {\n      y[i] = x[i]\n    }\n  }\n  run c(x, y)\n}\n").unwrap();
    let o = ekb(&["build", l1.to_str().unwrap()], dir.path());
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stderr).contains(
            "is an L1 module; it takes its inputs and reference from an L0 graph: pass `--graph TASK.ekir`"
        ),
        "{}",
        text(&o.stderr)
    );

    let o = ekb(&["build", &corpus("relu.ekir"), "--target", "rk3589"], dir.path());
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stderr).contains("unknown target `rk3589` (did you mean `rk3588`?)"),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn run_builds_and_runs_here_and_under_qemu() {
    let dir = tempfile::tempdir().unwrap();
    let out = ok(&ekb(&["run", &corpus("conv2d.ekir")], dir.path()));
    assert!(out.contains(" on local: ekb-rt 0.1.0 (protocol 3) on x86_64 "), "{out}");
    assert!(out.contains("[0] conv2d on host (cpu-llvm, "), "{out}");
    assert!(out.contains("): correct\n"), "{out}");

    let j = json(&ekb(&["run", &corpus("softmax.ekir"), "--target", "aarch64-qemu", "--json"], dir.path()));
    assert_eq!(j["device"]["arch"], "aarch64");
    assert_eq!(j["all_correct"], true);
    let seeds: Vec<u64> = j["entries"][0]["run"]["seeds"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["seed"].as_u64().unwrap())
        .collect();
    assert_eq!(seeds, vec![0, 1, 2]);
}

#[test]
fn a_missing_runtime_says_how_to_build_it() {
    let dir = tempfile::tempdir().unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_ekb"))
        .args(["run", &corpus("relu.ekir")])
        .current_dir(dir.path())
        .env("EKB_RT_X86_64", dir.path().join("nothing-here"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let err = text(&o.stderr);
    assert!(err.contains("cannot read the runtime `"), "{err}");
    assert!(err.contains("($EKB_RT_X86_64)"), "{err}");
}

#[test]
fn collect_refuses_files_that_are_not_reports() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), "hello").unwrap();
    let o = ekb(&["collect", "notes.txt"], dir.path());
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o.stderr).starts_with("error: `notes.txt` is not a report file: "), "{}", text(&o.stderr));
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), &dest).unwrap();
        }
    }
}

/// What must agree between two reports of the same payload: the task, the target and every
/// seed's output checks (timing, counters and memory figures vary from run to run).
fn results(j: &serde_json::Value) -> Vec<serde_json::Value> {
    j["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            let r = &e["run"];
            serde_json::json!({ "task": r["task"], "target": r["target"], "seeds": r["seeds"] })
        })
        .collect()
}

/// Packs three corpus graphs for `target`, runs the bundle's `run.sh` in a fresh directory
/// (through `launcher`), and compares the reports with direct runs; `ekb` is `ekb` or `ekb_gpu`
/// and `backend` the payloads' backend.
fn round_trip(target: &str, launcher: Option<&str>, ekb: fn(&[&str], &Path) -> Output, backend: &str) {
    let dir = tempfile::tempdir().unwrap();
    let graphs = ["matmul.ekir", "layer_norm.ekir", "argmax.ekir"];
    let mut args = vec!["pack".to_string()];
    args.extend(graphs.iter().map(|g| corpus(g)));
    args.extend(["--target".into(), target.into(), "-o".into(), "bundle".into()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = ok(&ekb(&args, dir.path()));
    assert!(out.starts_with(&format!("wrote bundle: 3 payload(s) for {target} (")), "{out}");
    let readme = std::fs::read_to_string(dir.path().join("bundle/README.txt")).unwrap();
    assert_eq!(readme.contains("GPU executors"), backend != "cpu-llvm", "{readme}");

    // The board: a fresh directory holding only the bundle, nothing of the host on PATH.
    let board = tempfile::tempdir().unwrap();
    let copy = board.path().join("bundle");
    copy_dir(&dir.path().join("bundle"), &copy);
    let check =
        Command::new("sha256sum").args(["-c", "--quiet", "SHA256SUMS"]).current_dir(&copy).output().unwrap();
    assert!(check.status.success(), "{}", text(&check.stdout));
    let mut sh = Command::new("/bin/sh");
    sh.arg("run.sh").current_dir(&copy).env_clear().env("PATH", "/usr/bin:/bin");
    if let Some(l) = launcher {
        sh.env("EKB_RT_LAUNCHER", l);
    }
    let run = sh.output().unwrap();
    let stdout = ok(&run);
    assert_eq!(stdout.matches("correct (3 seeds").count(), 3, "{stdout}");
    let mut reports: Vec<String> = std::fs::read_dir(copy.join("reports"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    reports.sort();
    assert_eq!(reports, vec!["argmax.ekr", "device.txt", "layer_norm.ekr", "matmul.ekr"]);

    // Back on the host: the reports read back, and agree with a direct run of each payload.
    for g in graphs {
        let name = g.trim_end_matches(".ekir");
        let report = copy.join("reports").join(format!("{name}.ekr"));
        let collected = json(&ekb(&["collect", "--json", report.to_str().unwrap()], dir.path()));
        let payload = dir.path().join("bundle/payloads").join(format!("{name}.ekp"));
        let direct = dir.path().join(format!("{name}.direct.ekr"));
        ok(&ekb(&["run", payload.to_str().unwrap(), "--save-report", direct.to_str().unwrap()], dir.path()));
        let direct = json(&ekb(&["collect", "--json", direct.to_str().unwrap()], dir.path()));
        assert_eq!(collected[0]["all_correct"], true);
        assert_eq!(results(&collected[0]), results(&direct[0]), "{name}");
        assert_eq!(collected[0]["device"]["arch"], direct[0]["device"]["arch"]);
        // And the table shows it.
        let table = ok(&ekb(&["collect", report.to_str().unwrap()], dir.path()));
        assert!(table.contains(&format!("[0] {name} on {target} ({backend}, ")), "{table}");
    }
}

#[test]
fn air_gapped_round_trip_on_this_machine() {
    round_trip("host", None, ekb, "cpu-llvm");
}

#[test]
fn air_gapped_round_trip_for_aarch64_under_qemu() {
    round_trip("aarch64-qemu", Some("qemu-aarch64"), ekb, "cpu-llvm");
}

#[test]
fn air_gapped_round_trip_of_gpu_payloads_on_this_machines_opencl_device() {
    round_trip("pocl", None, ekb_gpu, "opencl");
}

#[test]
fn deploy_installs_the_gpu_runtime_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    let out = ok(&ekb_gpu(&["deploy", "--gpu"], dir.path()));
    assert!(out.starts_with("x86_64 GPU runtime ($EKB_RT_GPU_X86_64, "), "{out}");
    assert!(out.contains("ready on this machine"), "{out}");
}

#[test]
fn run_with_a_dir_device_writes_a_bundle_and_pack_refuses_to_overwrite() {
    let dir = tempfile::tempdir().unwrap();
    let out = ok(&ekb(&["run", &corpus("relu.ekir"), "--target", "rk3588", "--device", "dir:b"], dir.path()));
    assert!(out.starts_with("wrote a bundle for rk3588 to b (5 files)"), "{out}");
    let readme = std::fs::read_to_string(dir.path().join("b/README.txt")).unwrap();
    assert!(readme.starts_with("EdgeKernelBench bundle for target `rk3588` (aarch64 Linux)"), "{readme}");
    assert!(dir.path().join("b/bin/ekb-rt-aarch64").is_file());

    let o = ekb(&["pack", &corpus("relu.ekir"), "--target", "rk3588", "-o", "b"], dir.path());
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o.stderr).contains("`b` already holds a bundle"), "{}", text(&o.stderr));
    ok(&ekb(&["pack", &corpus("relu.ekir"), "--target", "rk3588", "-o", "b", "--force"], dir.path()));

    // Payloads keep their own target; mixing targets is refused.
    ok(&ekb(&["build", &corpus("relu.ekir"), "-o", "h.ekp"], dir.path()));
    let o = ekb(&["pack", "h.ekp", "--target", "rk3588", "-o", "c"], dir.path());
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stderr).contains("payload `h` was built for target `host`, the bundle is for `rk3588`"),
        "{}",
        text(&o.stderr)
    );
}

/// `payload` with the first element of its first expected output changed by `delta`.
fn tamper(payload: &[u8], delta: f32) -> Vec<u8> {
    use ekb_wire::payload::{le_f32s, Payload, PayloadBuilder};
    let view = Payload::parse(payload).unwrap();
    let first_expected = view.manifest().expected[0].blob;
    let mut pb = PayloadBuilder::new();
    for i in 0..view.blob_count() as u32 {
        let blob = view.blob(i).unwrap();
        let mut data = blob.data.to_vec();
        if i == first_expected {
            let v = le_f32s(&data).next().unwrap() + delta;
            data[..4].copy_from_slice(&v.to_le_bytes());
        }
        assert_eq!(pb.add_blob(blob.kind, data), i);
    }
    pb.finish(view.manifest()).unwrap()
}

#[test]
fn a_wrong_result_fails_run_and_collect_with_the_evidence() {
    let dir = tempfile::tempdir().unwrap();
    ok(&ekb(&["build", &corpus("relu.ekir"), "-o", "relu.ekp"], dir.path()));
    let good = std::fs::read(dir.path().join("relu.ekp")).unwrap();
    std::fs::write(dir.path().join("bad.ekp"), tamper(&good, 0.5)).unwrap();
    let o = ekb(&["run", "bad.ekp", "--offline", "--save-report", "bad.ekr"], dir.path());
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(out.contains("): FAILED: correctness\n  evidence: seed 0: output `y` has 1 element(s) outside the tolerance, the first at index 0"), "{out}");
    // Seeds 1 and 2 still match: only the tampered element of seed 0 differs, by 0.5.
    assert!(out.contains("  0                    y            NO        5.000e-1"), "{out}");
    assert!(out.contains("  1                    y            ok         0.000e0"), "{out}");
    let o = ekb(&["collect", "bad.ekr"], dir.path());
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o.stdout).contains("FAILED: correctness"), "{}", text(&o.stdout));
    let j: serde_json::Value =
        serde_json::from_slice(&ekb(&["collect", "--json", "bad.ekr"], dir.path()).stdout).unwrap();
    assert_eq!(j[0]["all_correct"], false);
    assert_eq!(j[0]["entries"][0]["run"]["seeds"][0]["outputs"][0]["first_mismatch"], 0);
}

#[test]
fn deploy_makes_the_runtime_ready_and_refuses_bundles() {
    let dir = tempfile::tempdir().unwrap();
    let out = ok(&ekb(&["deploy", "--target", "aarch64-qemu"], dir.path()));
    assert!(out.starts_with("aarch64 runtime ($EKB_RT_AARCH64, "), "{out}");
    assert!(out.contains("ready on this machine under qemu-aarch64"), "{out}");
    let out = ok(&ekb(&["deploy"], dir.path()));
    assert!(out.contains("x86_64 runtime") && out.contains("ready on this machine"), "{out}");

    let o = ekb(&["deploy", "--device", "dir:somewhere"], dir.path());
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o.stderr).contains("use `ekb pack`"), "{}", text(&o.stderr));
    let o = ekb(&["deploy", "--target", "rk3858"], dir.path());
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o.stderr).contains("did you mean `rk3588`?"), "{}", text(&o.stderr));
}

// `ekb run` and `ekb build` took seeds only: the user's own arrays (`--inputs DIR`) now travel in
// the payload like weights, the expected outputs are the reference interpreter's on them, and
// the device's outputs are checked against those.
#[test]
fn run_and_build_take_the_users_inputs_from_npy_files() {
    use ekb_ir::tensor::{write_npy, BufData, Buffer};
    use ekb_ir::{DType, TensorType};
    use ekb_wire::payload::{le_f32s, Payload};
    let dir = tempfile::tempdir().unwrap();
    let graph = "graph g(x: f32[2,3]) -> (y: f32[2,3]) {\n  %0 = relu(x)\n  return %0\n}\n";
    std::fs::write(dir.path().join("g.ekir"), graph).unwrap();
    std::fs::create_dir(dir.path().join("data")).unwrap();
    let x = vec![-1.0f32, 2.0, -3.0, 4.0, 0.5, -0.5];
    let buf = Buffer { ty: TensorType::new(DType::F32, [2, 3]), data: BufData::F32(x) };
    write_npy(&dir.path().join("data/x.npy"), &buf).unwrap();

    ok(&ekb(&["build", "g.ekir", "--inputs", "data", "-o", "g.ekp"], dir.path()));
    let bytes = std::fs::read(dir.path().join("g.ekp")).unwrap();
    let view = Payload::parse(&bytes).unwrap();
    assert_eq!(view.manifest().expected.len(), 3, "one expected output per seed");
    for e in &view.manifest().expected {
        let y: Vec<f32> = le_f32s(view.blob(e.blob).unwrap().data).collect();
        assert_eq!(y, [0.0, 2.0, 0.0, 4.0, 0.5, 0.0], "relu of the given x, whatever the seed");
    }

    let j = json(&ekb(&["run", "g.ekir", "--inputs", "data", "--json"], dir.path()));
    assert_eq!(j["all_correct"], true, "{j}");
}

#[test]
fn a_packed_weight_is_prepared_once_and_the_payload_runs_correctly() {
    // A linear layer widening its rows, of a parameter weight: the default schedule packs the
    // weight in a prepare step; the payload carries it, keeps the packed weight out of the
    // arena, and the board computes the right answers on every seed.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("mlp.ekir"),
        "graph mlp(x: f32[24,32] = normal(0.0, 1.0)) -> (y: f32[24,96]) {\n  param w: f32[96,32] = kaiming_uniform\n  \
         param b: f32[96] = uniform(-0.1, 0.1)\n  %0 = linear(x, w, b)\n  %1 = relu(%0)\n  return %1\n}\n",
    )
    .unwrap();
    ok(&ekb(&["build", "mlp.ekir", "-o", "mlp.ekp"], dir.path()));
    let bytes = std::fs::read(dir.path().join("mlp.ekp")).unwrap();
    let view = ekb_wire::payload::Payload::parse(&bytes).unwrap();
    let m = view.manifest();
    assert_eq!(m.prepare_steps, 1, "{m:?}");
    let prepared: Vec<&str> =
        m.prepared().iter().zip(&m.buffers).filter(|(p, _)| **p).map(|(_, b)| b.name.as_str()).collect();
    assert_eq!(prepared, ["w_packed"]);
    let r = json(&ekb(&["run", "mlp.ekp", "--json"], dir.path()));
    assert_eq!(r["all_correct"], true, "{r}");
}

#[test]
fn a_product_whose_block_splits_k_between_groups_runs_correctly_on_this_machines_opencl_device() {
    // Eight rows against 96 columns with a `k` of 250 (its last stage ragged): with the few-row
    // tiles on and any grid allowed, PoCL's short grid splits the stages between two groups of
    // the block's threads (`gpu.matmul_split_k`, the most its threads per block allow); the
    // OpenCL C the runtime compiles computes the right answers on every seed, as the unsplit
    // kernel does.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("sk.ekir"),
        "graph sk(x: f32[8,250], w: f32[96,250], b: f32[96]) -> (y: f32[8,96]) {\n  %y = linear(x, w, b)\n  \
         return %y\n}\n",
    )
    .unwrap();
    for (most, block) in [(8, "block(lane in 0..256)"), (1, "block(tid in 0..128)")] {
        let knobs = ["gpu.matmul_few_rows=64", "gpu.matmul_min_blocks=1", "gpu.dot_max_rows=0"];
        let split = format!("gpu.matmul_split_k={most}");
        let mut args = vec!["lower", "sk.ekir", "--target", "pocl", "--backend", "gpu", "-o", "sk.l1.ekir"];
        for k in knobs.iter().chain([&split.as_str()]) {
            args.extend(["--knob", k]);
        }
        ok(&ekb(&args, dir.path()));
        let l1 = std::fs::read_to_string(dir.path().join("sk.l1.ekir")).unwrap();
        assert!(l1.contains(block), "{l1}");
        let r = json(&ekb_gpu(
            &["run", "sk.l1.ekir", "--graph", "sk.ekir", "--target", "pocl", "--json"],
            dir.path(),
        ));
        assert_eq!(r["all_correct"], true, "{most}: {r}");
    }
}

#[test]
fn a_planned_payload_runs_correctly_and_the_runtime_reserves_the_planned_peak() {
    let dir = tempfile::tempdir().unwrap();
    let graph = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tasks/level3/resnet8_cifar10.ekir");
    let j = json(&ekb(&["build", graph.to_str().unwrap(), "-o", "r8.ekp", "--json"], dir.path()));
    let planned = j["summary"]["peak_bytes"].as_u64().unwrap();
    let unplanned = j["summary"]["unplanned_peak_bytes"].as_u64().unwrap();
    assert!(planned < unplanned, "{j}");
    let bytes = std::fs::read(dir.path().join("r8.ekp")).unwrap();
    let view = ekb_wire::payload::Payload::parse(&bytes).unwrap();
    let arena = view.manifest().arena.as_ref().expect("a CPU payload places its temps");
    // Every temp but the prepared ones (computed once, by the prepare steps) has a slot, and so
    // has every parameter only the prepare steps read (the packed convolutions' weights).
    let m = view.manifest();
    let prepared = m.prepared();
    let temps = (0..m.buffers.len()).filter(|&i| m.buffers[i].role == ekb_wire::payload::Role::Temp).count();
    let apart = prepared.iter().filter(|&&p| p).count();
    let consumed = m.consumed_params().iter().filter(|&&c| c).count();
    assert!(consumed > 0, "{:?}", m.buffers);
    assert_eq!(arena.slots.len(), temps - apart + consumed);
    assert_eq!(view.manifest().memory.peak_bytes, planned);

    // The board computes the right answers with temps sharing bytes, and reports the planned
    // peak as what it reserved.
    let r = json(&ekb(&["run", "r8.ekp", "--json"], dir.path()));
    assert_eq!(r["all_correct"], true, "{r}");
    let memory = &r["entries"][0]["run"]["memory"];
    assert_eq!(memory["peak_bytes"].as_u64(), Some(planned), "{memory}");
    let listed: Vec<&str> =
        memory["allocations"].as_array().unwrap().iter().map(|a| a["name"].as_str().unwrap()).collect();
    assert!(listed.contains(&"temp arena"), "{listed:?}");
}
