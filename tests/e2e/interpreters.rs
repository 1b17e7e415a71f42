//! Every corpus graph, lowered with both schedules, verifies clean and runs in the L1
//! interpreter to the reference interpreter's outputs on every seed.

use ekb_e2e::{check_outputs, corpus_files, load_graph, reference, SEEDS};
use ekb_ir::{l1, TargetProfile};
use ekb_lower::{lower, Schedule};

#[test]
fn corpus_covers_every_operator() {
    let mut seen = std::collections::BTreeSet::new();
    for path in corpus_files() {
        for n in &load_graph(&path).nodes {
            seen.insert(n.op.name());
        }
    }
    let missing: Vec<_> = ekb_ir::l0::ops::OP_NAMES.iter().filter(|n| !seen.contains(*n)).collect();
    assert!(missing.is_empty(), "operators without a corpus graph in tests/ops: {missing:?}");
}

#[test]
fn lowered_modules_match_the_reference_in_the_l1_interpreter() {
    let target = TargetProfile::load("host").unwrap();
    let mut failures = Vec::new();
    for path in corpus_files() {
        let g = load_graph(&path);
        for schedule in Schedule::ALL {
            let m = match lower(&g, schedule, &target) {
                Ok(m) => m,
                Err(d) => {
                    failures.push(format!("{} ({schedule}): lowering failed: {d}", g.name));
                    continue;
                }
            };
            let errors: Vec<_> =
                l1::verify::verify(&m, Some(&target)).into_iter().filter(|d| d.is_error()).collect();
            if !errors.is_empty() {
                failures.push(format!("{} ({schedule}): verifier: {}", g.name, errors[0]));
                continue;
            }
            for seed in SEEDS {
                let (inputs, expected) = reference(&g, seed);
                match l1::interp::run(&m, &inputs) {
                    Err(d) => failures.push(format!("{} ({schedule}, seed {seed}): {d}", g.name)),
                    Ok(got) => failures.extend(
                        check_outputs(&g, &expected, &got)
                            .into_iter()
                            .map(|p| format!("{} ({schedule}, seed {seed}): {p}", g.name)),
                    ),
                }
            }
        }
    }
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
}
