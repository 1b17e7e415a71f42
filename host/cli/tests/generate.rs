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
