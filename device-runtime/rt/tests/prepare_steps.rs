//! Prepare steps: a plan whose first step computes a temp from a parameter (`nw = -w`, after a
//! long spin) and whose execution step reads it with the input (`y = x + nw`). The runtime runs
//! the prepare step once per seed (the parameter is seeded, so every seed needs its own), never
//! inside a timed execution, keeps the temp across executions (it is not poisoned between
//! samples), reports only the execution step, and keeps the temp read-only for the execution
//! steps; two such programs paired in one kernel process are both right. Parameters that only
//! prepare steps read may share the arena with each other and with the execution's temps: the
//! runtime binds each just before the first step that reads it, again for every seed.

mod common;

use ekb_rt::run::{run_paired, run_payload, RunOptions};
use ekb_rt::store::LoadedPayload;
use ekb_wire::payload::{
    f32s_to_le, Access, Arena, ArenaSlot, Backend, BlobKind, BufferDecl, DType, ExpectedOutput, KernelDecl,
    Launch, LaunchStep, Manifest, MemoryPlan, ParamDecl, PayloadBuilder, Role, Source, TimingSettings,
    Tolerance,
};
use ekb_wire::protocol::{
    CounterKind, FailureKind, MemoryFault, PairedSettings, PayloadId, RunReport, TimingOverrides,
};

/// Volatile stores the prepare step makes before its result: tens of milliseconds, far more
/// than one execution of the plan.
const SPIN: u64 = 200_000_000;

/// The kernels: `ekb_k_neg(w: f32[4] in, nw: f32[4] out)` spins, then writes `nw = -w`, then
/// runs `extra_neg`; `ekb_k_add(x: f32[4] in, nw: f32[4] in, y: f32[4] out)` writes
/// `y = x + nw`, then runs `extra`.
fn kernels(extra: &str, extra_neg: &str) -> Vec<u8> {
    let mut neg = String::new();
    let mut add = String::new();
    for i in 0..4 {
        neg += &format!(
            "  %wp{i} = getelementptr float, ptr %w, i64 {i}\n  %wv{i} = load float, ptr %wp{i}\n  \
             %n{i} = fneg float %wv{i}\n  %np{i} = getelementptr float, ptr %nw, i64 {i}\n  \
             store float %n{i}, ptr %np{i}\n"
        );
        add += &format!(
            "  %xp{i} = getelementptr float, ptr %x, i64 {i}\n  %xv{i} = load float, ptr %xp{i}\n  \
             %np{i} = getelementptr float, ptr %nw, i64 {i}\n  %nv{i} = load float, ptr %np{i}\n  \
             %s{i} = fadd float %xv{i}, %nv{i}\n  %yp{i} = getelementptr float, ptr %y, i64 {i}\n  \
             store float %s{i}, ptr %yp{i}\n"
        );
    }
    let ir = format!(
        r#"
define void @ekb_k_neg(ptr %args) nounwind {{
entry:
  %w = load ptr, ptr %args
  %nslot = getelementptr ptr, ptr %args, i64 1
  %nw = load ptr, ptr %nslot
  br label %spin
spin:
  %i = phi i64 [ 0, %entry ], [ %i1, %spin ]
  store volatile float 0.0, ptr %nw
  %i1 = add i64 %i, 1
  %done = icmp eq i64 %i1, {SPIN}
  br i1 %done, label %body, label %spin
body:
{neg}{extra_neg}  ret void
}}

define void @ekb_k_add(ptr %args) nounwind {{
entry:
  %x = load ptr, ptr %args
  %nslot = getelementptr ptr, ptr %args, i64 1
  %nw = load ptr, ptr %nslot
  %yslot = getelementptr ptr, ptr %args, i64 2
  %y = load ptr, ptr %yslot
{add}{extra}  ret void
}}
"#
    );
    common::compile_ir(&ir)
}

/// The payload: `x` (input) and `w` (parameter) seeded, `nw` a temp the prepare step writes,
/// `y = x - w` expected on three seeds.
fn payload(task: &str, object: Vec<u8>) -> Vec<u8> {
    let init = ekb_wire::Init::Uniform { lo: -1.0, hi: 1.0 };
    let seeds = [3u64, 4, 5];
    let mut pb = PayloadBuilder::new();
    let code = pb.add_blob(BlobKind::ElfObject, object);
    let draw = |seed: u64, name: &str| {
        let mut v = [0f32; 4];
        ekb_wire::seeded::fill_f32(&init, &[4], ekb_wire::seeded::tensor_key(task, seed, name), &mut v)
            .unwrap();
        v
    };
    let mut expected = Vec::new();
    for (s, &seed) in seeds.iter().enumerate() {
        let (x, w) = (draw(seed, "x"), draw(seed, "w"));
        let y: Vec<f32> = x.iter().zip(w).map(|(a, b)| a - b).collect();
        let blob = pb.add_blob(BlobKind::ExpectedOutput, f32s_to_le(&y));
        expected.push(ExpectedOutput { seed: s as u32, buffer: 3, blob });
    }
    let param =
        |name: &str, access| ParamDecl { name: name.into(), dtype: DType::F32, shape: vec![4], access };
    let kernel = |name: &str, params| KernelDecl {
        name: name.into(),
        symbol: format!("ekb_k_{name}"),
        blob: code,
        params,
        launch: Launch::Cpu,
        allocs: vec![],
    };
    let buffer = |name: &str, role, source| BufferDecl {
        name: name.into(),
        dtype: DType::F32,
        shape: vec![4],
        role,
        source,
    };
    let manifest = Manifest {
        generator_version: ekb_wire::seeded::GENERATOR_VERSION,
        producer: "ekb-rt tests".into(),
        task: task.into(),
        target: "hand-written".into(),
        backend: Backend::CpuLlvm,
        kernels: vec![
            kernel("neg", vec![param("w", Access::In), param("nw", Access::Out)]),
            kernel("add", vec![param("x", Access::In), param("nw", Access::In), param("y", Access::Out)]),
        ],
        buffers: vec![
            buffer("x", Role::Input, Some(Source::Seeded(init))),
            buffer("w", Role::Param, Some(Source::Seeded(init))),
            buffer("nw", Role::Temp, None),
            buffer("y", Role::Output, None),
        ],
        plan: vec![LaunchStep { kernel: 0, args: vec![1, 2] }, LaunchStep { kernel: 1, args: vec![0, 2, 3] }],
        prepare_steps: 1,
        seeds: seeds.to_vec(),
        tolerance: Tolerance { atol: 0.0, rtol: 0.0 },
        expected,
        timing: TimingSettings::DEFAULT,
        memory: MemoryPlan { peak_bytes: 64, stack_limit_bytes: 4096, memory_limit_bytes: 1 << 20 },
        gpu: None,
        arena: None,
        repeat: 1,
    };
    pb.finish(&manifest).unwrap()
}

fn run(bytes: &[u8]) -> RunReport {
    let options = RunOptions {
        threads: 2,
        timing: TimingOverrides {
            warmup: Some(2),
            min_samples: Some(6),
            max_samples: Some(6),
            ..TimingOverrides::default()
        },
        ..RunOptions::default()
    };
    let p = std::sync::Arc::new(LoadedPayload::from_bytes(PayloadId(0), bytes).unwrap());
    run_payload(&p, &[(p.mapping().addr(), p.mapping().len())], &options).unwrap()
}

#[test]
fn a_prepare_step_runs_once_per_seed_untimed_and_its_temp_lasts_across_executions() {
    let r = run(&payload("prepared", kernels("", "")));
    // Every seed is right: `w` differs per seed, so `nw` was computed again for each; and after
    // the samples (outputs compared again, and on fresh inputs during timing) it still held
    // `-w`: nothing poisoned it between executions.
    assert!(r.is_correct(), "{:?}\n{:#?}", r.failure, r.log);
    assert_eq!(r.seeds.iter().map(|s| s.seed).collect::<Vec<_>>(), [3, 4, 5]);
    assert!(r.seeds.iter().all(|s| s.ok()), "{:?}", r.seeds);
    // The samples time `add` alone: the spin of `neg` (tens of milliseconds) is in none of
    // them.
    let t = r.timing.as_ref().expect("timed");
    assert_eq!(t.samples_ns.len(), 6);
    assert!(t.stats.median_ns < 1e6, "median {} ns: the prepare step was timed", t.stats.median_ns);
    // Only the execution step is counted and named.
    let steps: Vec<&str> =
        r.counters.iter().filter(|c| c.kind == CounterKind::Step).map(|c| c.name.as_str()).collect();
    assert_eq!(steps.len(), 1, "{steps:?}");
    assert!(steps[0].starts_with("add (step 0): time"), "{steps:?}");
    let line =
        "plan: 1 prepare step(s) (neg) compute 1 temp(s) (16 bytes) from the parameters once per seed, \
                untimed; an execution is the other 1 step(s)";
    assert!(r.log.iter().any(|l| l.message == line), "{:#?}", r.log);
}

#[test]
fn an_execution_step_cannot_write_a_prepared_temp() {
    // `add` declares `nw` read-only (the payload could not say otherwise) and stores to it
    // anyway: the temp is read-only while executions run.
    let r = run(&payload("scribble", kernels("  store float 0.0, ptr %nw\n", "")));
    let f = r.failure.expect("a failure");
    assert_eq!(
        f.kind,
        FailureKind::Memory(MemoryFault::InputWrite { buffer: "nw".into() }),
        "{}",
        f.evidence
    );
    assert!(f.evidence.contains("write to byte 0 of read-only prepared temp `nw`"), "{}", f.evidence);
}

#[test]
fn paired_programs_with_prepare_steps_are_both_prepared_for_every_seed() {
    // Both sides in one kernel process, their parameters bound and prepared before their inputs
    // (the candidate's copied from the baseline's, the same tensors of the same task).
    let bytes = payload("prepared", kernels("", ""));
    let b = std::sync::Arc::new(LoadedPayload::from_bytes(PayloadId(0), &bytes).unwrap());
    let c = std::sync::Arc::new(LoadedPayload::from_bytes(PayloadId(1), &bytes).unwrap());
    let hidden = [(b.mapping().addr(), b.mapping().len()), (c.mapping().addr(), c.mapping().len())];
    let settings = PairedSettings {
        timing: TimingOverrides {
            warmup: Some(2),
            min_samples: Some(10),
            max_samples: Some(20),
            budget_ms: Some(1_000),
            ..TimingOverrides::default()
        },
        ..PairedSettings::DEFAULT
    };
    let options = RunOptions { threads: 2, ..RunOptions::default() };
    let r = run_paired(&b, &c, &hidden, &settings, &options).unwrap();
    for side in [&r.baseline, &r.candidate] {
        let failed = side.failure.as_ref().filter(|f| f.kind != FailureKind::UnstableTiming);
        assert!(failed.is_none(), "{failed:?}\n{:#?}", side.log);
        assert_eq!(side.seeds.len(), 3);
        assert!(side.seeds.iter().all(|s| s.ok()), "{:?}", side.seeds);
        let t = side.timing.as_ref().expect("timed");
        assert!(t.stats.median_ns < 1e6, "median {} ns: the prepare step was timed", t.stats.median_ns);
    }
    assert!(r.ratio.is_some());
}

/// `y = x - w - v` with both parameters consumed: prepare steps `neg(w) -> nw`, `neg(v) -> nv`,
/// execution steps `add(x, nw) -> t`, `add(t, nv) -> y`; `w`, `v` and `t` share the arena's
/// first 16 bytes (`w` is live at step 0, `v` at step 1, `t` at steps 2-3).
fn consumed_payload(task: &str, object: Vec<u8>) -> Vec<u8> {
    let init = ekb_wire::Init::Uniform { lo: -1.0, hi: 1.0 };
    let seeds = [3u64, 4, 5];
    let mut pb = PayloadBuilder::new();
    let code = pb.add_blob(BlobKind::ElfObject, object);
    let draw = |seed: u64, name: &str| {
        let mut v = [0f32; 4];
        ekb_wire::seeded::fill_f32(&init, &[4], ekb_wire::seeded::tensor_key(task, seed, name), &mut v)
            .unwrap();
        v
    };
    let mut expected = Vec::new();
    for (s, &seed) in seeds.iter().enumerate() {
        let (x, w, v) = (draw(seed, "x"), draw(seed, "w"), draw(seed, "v"));
        let y: Vec<f32> = (0..4).map(|i| (x[i] + -w[i]) + -v[i]).collect();
        let blob = pb.add_blob(BlobKind::ExpectedOutput, f32s_to_le(&y));
        expected.push(ExpectedOutput { seed: s as u32, buffer: 6, blob });
    }
    let param =
        |name: &str, access| ParamDecl { name: name.into(), dtype: DType::F32, shape: vec![4], access };
    let kernel = |name: &str, params| KernelDecl {
        name: name.into(),
        symbol: format!("ekb_k_{name}"),
        blob: code,
        params,
        launch: Launch::Cpu,
        allocs: vec![],
    };
    let buffer = |name: &str, role, source| BufferDecl {
        name: name.into(),
        dtype: DType::F32,
        shape: vec![4],
        role,
        source,
    };
    let step = |kernel, args: &[u32]| LaunchStep { kernel, args: args.to_vec() };
    let slot = |buffer, offset| ArenaSlot { buffer, offset };
    let manifest = Manifest {
        generator_version: ekb_wire::seeded::GENERATOR_VERSION,
        producer: "ekb-rt tests".into(),
        task: task.into(),
        target: "hand-written".into(),
        backend: Backend::CpuLlvm,
        kernels: vec![
            kernel("neg", vec![param("w", Access::In), param("nw", Access::Out)]),
            kernel("add", vec![param("x", Access::In), param("nw", Access::In), param("y", Access::Out)]),
        ],
        buffers: vec![
            buffer("x", Role::Input, Some(Source::Seeded(init))),
            buffer("w", Role::Param, Some(Source::Seeded(init))),
            buffer("v", Role::Param, Some(Source::Seeded(init))),
            buffer("nw", Role::Temp, None),
            buffer("nv", Role::Temp, None),
            buffer("t", Role::Temp, None),
            buffer("y", Role::Output, None),
        ],
        plan: vec![step(0, &[1, 3]), step(0, &[2, 4]), step(1, &[0, 3, 5]), step(1, &[5, 4, 6])],
        prepare_steps: 2,
        seeds: seeds.to_vec(),
        tolerance: Tolerance { atol: 0.0, rtol: 0.0 },
        expected,
        timing: TimingSettings::DEFAULT,
        memory: MemoryPlan { peak_bytes: 64, stack_limit_bytes: 4096, memory_limit_bytes: 1 << 20 },
        gpu: None,
        arena: Some(Arena { bytes: 16, slots: vec![slot(1, 0), slot(2, 0), slot(5, 0)] }),
        repeat: 1,
    };
    assert_eq!(manifest.consumed_params(), [false, true, true, false, false, false, false]);
    pb.finish(&manifest).unwrap()
}

#[test]
fn parameters_only_prepare_steps_read_share_the_arena_and_are_bound_step_by_step() {
    // Bound all at once, `v` would overwrite `w` before `neg` read it; left from the previous
    // seed, `t` would have taken their bytes. Every seed is right, alone and paired.
    let bytes = consumed_payload("consumed", kernels("", ""));
    let r = run(&bytes);
    assert!(r.is_correct(), "{:?}\n{:#?}", r.failure, r.log);
    assert_eq!(r.seeds.len(), 3);
    assert!(r.seeds.iter().all(|s| s.ok()), "{:?}", r.seeds);
    // x, nw, nv and y apart, and the arena of 16 bytes for w, v and t.
    assert_eq!(r.memory.peak_bytes, 5 * 16);
    let b = std::sync::Arc::new(LoadedPayload::from_bytes(PayloadId(0), &bytes).unwrap());
    let c = std::sync::Arc::new(LoadedPayload::from_bytes(PayloadId(1), &bytes).unwrap());
    let hidden = [(b.mapping().addr(), b.mapping().len()), (c.mapping().addr(), c.mapping().len())];
    let settings = PairedSettings {
        timing: TimingOverrides {
            warmup: Some(2),
            min_samples: Some(6),
            max_samples: Some(6),
            ..TimingOverrides::default()
        },
        ..PairedSettings::DEFAULT
    };
    let options = RunOptions { threads: 2, ..RunOptions::default() };
    let r = run_paired(&b, &c, &hidden, &settings, &options).unwrap();
    for side in [&r.baseline, &r.candidate] {
        let failed = side.failure.as_ref().filter(|f| f.kind != FailureKind::UnstableTiming);
        assert!(failed.is_none(), "{failed:?}\n{:#?}", side.log);
        assert!(side.seeds.len() == 3 && side.seeds.iter().all(|s| s.ok()), "{:?}", side.seeds);
    }
}

#[test]
fn a_prepare_step_cannot_write_a_parameter_it_consumes() {
    // `neg` stores into its parameter after reading it: the arena is writable, so the
    // checksums taken when the parameters were bound catch it.
    let r = run(&consumed_payload("spent", kernels("", "  store float 0.0, ptr %w\n")));
    let f = r.failure.expect("a failure");
    assert_eq!(f.kind, FailureKind::Memory(MemoryFault::InputWrite { buffer: "w".into() }), "{}", f.evidence);
    assert!(f.evidence.contains("`w` changed during the prepare steps"), "{}", f.evidence);
}
