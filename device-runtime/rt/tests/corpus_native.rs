//! Every operator of the corpus, lowered with both schedules and compiled by clang for this
//! machine (`host` profile), packed into a payload, loaded by the runtime's own ELF loader and
//! run in a kernel process under the system-call filter, on its thread pool: every output of
//! every seed matches the reference interpreter.

mod common;

use ekb_rt::run::{run_payload, RunOptions};
use ekb_rt::store::LoadedPayload;
use ekb_wire::protocol::{PayloadId, RunReport, TimingOverrides};

/// Options that time each payload with a single sample (correctness is what these tests check).
fn quick(threads: usize) -> RunOptions {
    RunOptions {
        threads,
        timing: TimingOverrides {
            warmup: Some(0),
            min_samples: Some(1),
            max_samples: Some(1),
            ..TimingOverrides::default()
        },
        ..RunOptions::default()
    }
}

fn run(id: u64, bytes: &[u8], options: &RunOptions) -> RunReport {
    let p = std::sync::Arc::new(LoadedPayload::from_bytes(PayloadId(id), bytes).unwrap());
    run_payload(&p, &[(p.mapping().addr(), p.mapping().len())], options).unwrap()
}

#[test]
fn every_corpus_payload_runs_correctly_through_the_loader() {
    let dir = common::work_dir("corpus-native");
    let payloads = common::corpus_payloads("host", &dir);
    assert_eq!(payloads.len(), ekb_e2e::corpus_files().len() * 2);
    let mut failures = Vec::new();
    for (i, (name, path)) in payloads.iter().enumerate() {
        let bytes = std::fs::read(path).unwrap();
        let r = run(i as u64, &bytes, &quick(3));
        assert_eq!(r.seeds.len(), ekb_e2e::SEEDS.len(), "{name}");
        assert_eq!(r.threads, 3);
        if !r.is_correct() {
            failures.push(format!("{name}: {:?}", r.failure));
        }
    }
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn a_wrong_expected_value_is_a_correctness_failure_naming_the_element() {
    let target = ekb_ir::TargetProfile::load("host").unwrap();
    let dir = common::work_dir("corpus-native-wrong");
    let g = ekb_e2e::load_graph(
        &ekb_e2e::corpus_files().into_iter().find(|p| p.ends_with("softmax.ekir")).unwrap(),
    );
    let (m, obj) = common::compile_graph(&g, ekb_lower::Schedule::Default, &target, &dir);
    // Seed index 1, element 5 of the output is off by 1e-2 (100x the tolerance at |ref| <= 1).
    let bytes = common::payload_with(&g, &m, &target, &obj, |seed, _, values| {
        if seed == 1 {
            values[5] += 1e-2;
        }
    });
    let r = run(7, &bytes, &quick(0));
    assert!(!r.is_correct());
    assert!(r.seeds[0].ok() && !r.seeds[1].ok() && r.seeds[2].ok());
    let o = &r.seeds[1].outputs[0];
    assert_eq!((o.first_mismatch, o.mismatches), (Some(5), 1));
    assert!((o.max_abs_err - 1e-2).abs() < 1e-5, "{}", o.max_abs_err);
    let f = r.failure.unwrap();
    assert_eq!(f.kind, ekb_wire::protocol::FailureKind::Correctness);
    assert!(
        f.evidence.starts_with("seed 1: output `") && f.evidence.contains("first at index 5"),
        "{}",
        f.evidence
    );
}

#[cfg(target_arch = "x86_64")]
#[test]
fn a_kernel_writing_past_its_output_is_reported_by_buffer_name() {
    // `ekb_k_over`: y[i] = x[i] for i in 0..4, then one more f32 at y[4], past the end of y.
    let object = common::assemble(
        r#"
    .text
    .globl ekb_k_over
    .type ekb_k_over,@function
ekb_k_over:
    movq (%rdi), %rax
    movq 8(%rdi), %rcx
    movups (%rax), %xmm0
    movups %xmm0, (%rcx)
    movl $0x12345678, 16(%rcx)
    ret
    .section .note.GNU-stack,"",@progbits
"#,
        "x86_64-unknown-linux-gnu",
    );
    let bytes = common::elementwise_payload(object, "over", 4, &[1], |x| x);
    let r = run(0, &bytes, &quick(0));
    assert!(r.seeds[0].ok(), "the outputs themselves are right: {:?}", r.seeds);
    let f = r.failure.unwrap();
    assert_eq!(
        f.kind,
        ekb_wire::protocol::FailureKind::Memory(ekb_wire::protocol::MemoryFault::GuardCorruption {
            buffer: "y".into()
        })
    );
    assert!(
        f.evidence.contains("4 byte(s) around buffer `y`") && f.evidence.contains("offset 16"),
        "{}",
        f.evidence
    );
}
