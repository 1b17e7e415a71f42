//! `ekb generate` with the command provider: a real child process answers every prompt; each
//! sample is stored with its prompt, raw answer, extracted candidate and metadata, and a second
//! run is answered from the response cache.

use std::path::Path;
use std::process::{Command, Output};

fn tasks_dir() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tasks").display().to_string()
}

fn generate(out: &Path, answerer: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ekb"))
        .args(["generate", "relu6_mobilenetv2_*", "--provider", "command", "--backend", "cpu"])
        .arg("--command")
        .arg(format!("sh {}", answerer.display()))
        .args(["--dir", &tasks_dir(), "--samples", "2", "--out"])
        .arg(out)
        .output()
        .expect("ekb runs")
}

#[test]
fn command_answers_are_stored_per_sample_and_cached() {
    let dir = tempfile::tempdir().unwrap();
    // The "model": reads the prompt, counts its calls, and answers with prose around a fence.
    let calls = dir.path().join("calls");
    let answerer = dir.path().join("answer.sh");
    std::fs::write(
        &answerer,
        format!(
            "cat > /dev/null\necho x >> {}\nprintf 'Here it is:\\n```ekir\\nmodule m {{\\n  output y: f32[1]\\n\\n  kernel k(y: f32[1] out) {{\\n    y[0] = 1.0\\n  }}\\n\\n  run k(y)\\n}}\\n```\\nDone.\\n'\n",
            calls.display()
        ),
    )
    .unwrap();
    let out = dir.path().join("out");
    let o = generate(&out, &answerer);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let samples: Vec<_> = walk(&out).into_iter().filter(|p| p.ends_with("meta.json")).collect();
    assert!(samples.len() >= 2, "{samples:?}");
    for meta in &samples {
        let sample = meta.parent().unwrap();
        for f in ["prompt.json", "answer.txt", "candidate.ekir"] {
            assert!(sample.join(f).exists(), "{} missing in {}", f, sample.display());
        }
        let candidate = std::fs::read_to_string(sample.join("candidate.ekir")).unwrap();
        assert!(candidate.starts_with("module m {") && !candidate.contains("Done."), "{candidate}");
        let prompt = std::fs::read_to_string(sample.join("prompt.json")).unwrap();
        assert!(prompt.contains("relu6"), "the prompt carries the task's graph");
    }
    let first = std::fs::read_to_string(&calls).unwrap().lines().count();
    assert_eq!(first, samples.len(), "one call per sample");

    // Again: every answer comes from the cache, the command is not run.
    let o = generate(&out, &answerer);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(std::fs::read_to_string(&calls).unwrap().lines().count(), first);
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// An answer holding a module whose expression is a chain of 200,000 terms (the parsed tree once
/// overflowed the stack when it was dropped, aborting the run) is stored with its parse error;
/// the run goes on.
#[test]
fn an_answer_too_deep_to_read_is_stored_with_its_parse_error() {
    let dir = tempfile::tempdir().unwrap();
    let chain = vec!["x[0]"; 200_000].join(" + ");
    let answer = dir.path().join("answer.txt");
    std::fs::write(
        &answer,
        format!(
            "```ekir\nmodule m {{\n  input x: f32[1]\n  output y: f32[1]\n\n  kernel k(x: f32[1] in, y: f32[1] out) \
             {{\n    y[0] = {chain}\n  }}\n\n  run k(x, y)\n}}\n```\n"
        ),
    )
    .unwrap();
    let answerer = dir.path().join("answer.sh");
    std::fs::write(&answerer, format!("cat > /dev/null\ncat {}\n", answer.display())).unwrap();
    let out = dir.path().join("out");
    let o = generate(&out, &answerer);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let metas: Vec<_> = walk(&out).into_iter().filter(|p| p.ends_with("meta.json")).collect();
    assert!(metas.len() >= 2, "{metas:?}");
    for meta in &metas {
        let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(meta).unwrap()).unwrap();
        assert_eq!(v["extracted"]["parses"], false, "{v}");
        let e = v["extracted"]["parse_error"].as_str().unwrap();
        assert!(e.contains("nests more than 256 levels deep"), "{e}");
        assert!(meta.parent().unwrap().join("candidate.ekir").is_file());
    }
}

// An answer with no candidate in it is a failed sample: the run exits non-zero and says which
// sample and what was looked for (it used to exit 0).
#[test]
fn an_answer_without_a_candidate_fails_the_run_and_says_what_was_missing() {
    let dir = tempfile::tempdir().unwrap();
    let answerer = dir.path().join("answer.sh");
    std::fs::write(&answerer, "cat > /dev/null\necho 'I cannot help with that.'\n").unwrap();
    let out = dir.path().join("out");
    let o = generate(&out, &answerer);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("sample 0: no candidate") && err.contains("sample 1: no candidate"), "{err}");
    assert!(err.contains("looked for"), "{err}");
    let summary = String::from_utf8_lossy(&o.stdout);
    assert!(summary.contains("0 provider error(s), 2 without a candidate"), "{summary}");
}

/// Trace mode end to end: the prompt shows the naive loop program of the task, the answers are
/// stored as `candidate.trace`, and `ekb eval` replays them on that program: a legal trace is
/// compiled and correct, one with an illegal step is a `syntax_api` failure naming the step.
#[test]
fn trace_answers_are_stored_as_traces_and_evaluated() {
    let dir = tempfile::tempdir().unwrap();
    let answerer = dir.path().join("answer.sh");
    std::fs::write(
        &answerer,
        "cat > /dev/null\nif [ \"$EKB_SEED\" = 0 ]; then\n\
         printf 'Threads on rows, lanes on columns:\\n```trace\\nfuse k0_add.i1, i2 -> f\\nparallel f\\nvectorize i3\\n```\\n'\n\
         else\nprintf '```trace\\n# vectorize a loop that is not innermost\\nvectorize k0_add.i1\\n```\\n'\nfi\n",
    )
    .unwrap();
    let out = dir.path().join("out");
    let o = Command::new(env!("CARGO_BIN_EXE_ekb"))
        .args([
            "generate",
            "add_resnet18_residual",
            "--mode",
            "trace",
            "--provider",
            "command",
            "--backend",
            "cpu",
        ])
        .arg("--command")
        .arg(format!("sh {}", answerer.display()))
        .args(["--dir", &tasks_dir(), "--samples", "2", "--out"])
        .arg(&out)
        .output()
        .expect("ekb runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let sample = out.join("add_resnet18_residual/cpu/sample-0");
    let prompt = std::fs::read_to_string(sample.join("prompt.json")).unwrap();
    assert!(prompt.contains("kernel k0_add(") && prompt.contains("```trace"), "{prompt}");
    let trace = std::fs::read_to_string(sample.join("candidate.trace")).unwrap();
    assert_eq!(trace, "fuse k0_add.i1, i2 -> f\nparallel f\nvectorize i3\n");
    let meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(sample.join("meta.json")).unwrap()).unwrap();
    assert_eq!(
        (&meta["mode"], &meta["extracted"]["kind"], &meta["extracted"]["parses"]),
        (&"trace".into(), &"Trace".into(), &true.into())
    );

    let run = dir.path().join("run");
    let o = Command::new(env!("CARGO_BIN_EXE_ekb"))
        .args(["eval", "add_resnet18_residual", "--level", "1", "--backend", "cpu", "--samples", "2"])
        .args(["--budget", "0.3", "--max-ci", "1e9", "--plain", "--dir", &tasks_dir(), "--candidates"])
        .arg(&out)
        .arg("--out")
        .arg(&run)
        .output()
        .expect("ekb runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let results: Vec<serde_json::Value> = std::fs::read_to_string(run.join("results.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let sample = |s: u64| results.iter().find(|r| r["sample"] == s).expect("stored");
    let good = sample(0);
    assert_eq!(good["candidate"]["kind"], "trace", "{good}");
    assert!(good["compiled"].as_bool().unwrap() && good["correct"].as_bool().unwrap(), "{good}");
    let bad = sample(1);
    assert_eq!(bad["failure"]["class"], "syntax_api", "{bad}");
    let evidence = bad["failure"]["evidence"].as_str().unwrap();
    assert!(evidence.contains("step 1 (`vectorize k0_add.i1`) is refused"), "{evidence}");
    assert!(evidence.contains("not innermost"), "{evidence}");
}
