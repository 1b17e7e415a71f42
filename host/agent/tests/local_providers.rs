//! The command provider with real child processes, and replay from a recorded file.

use ekb_agent::replay::Record;
use ekb_agent::{
    Cached, CommandProvider, Message, Provider, ProviderError, Replay, Request, Response, Usage,
};
use std::time::{Duration, Instant};

fn request(seed: Option<u64>) -> Request {
    Request {
        model: "agent-x".into(),
        messages: vec![Message::system("rules"), Message::user("the task")],
        temperature: 0.0,
        max_tokens: 100,
        seed,
    }
}

fn sh(script: &str, timeout_ms: u64) -> CommandProvider {
    CommandProvider::new("sh", vec!["-c".into(), script.into()], Duration::from_millis(timeout_ms))
}

#[test]
fn the_prompt_goes_to_stdin_and_the_answer_comes_from_stdout() {
    let cat = CommandProvider::new("cat", vec![], Duration::from_secs(10));
    assert_eq!(cat.complete(&request(None)).unwrap().text, "rules\n\nthe task\n");
    assert_eq!(cat.id(), "command:cat");
}

#[test]
fn the_request_parameters_reach_the_program() {
    let r = sh("cat >/dev/null; echo \"$EKB_MODEL $EKB_SEED\"", 10_000).complete(&request(Some(4))).unwrap();
    assert_eq!(r.text, "agent-x 4\n");
}

#[test]
fn a_failing_program_reports_its_status_and_stderr() {
    let e = sh("echo 'model not found' >&2; exit 3", 10_000).complete(&request(None)).unwrap_err();
    match &e {
        ProviderError::Command { status, stderr_tail } => {
            assert!(status.contains('3'), "{status}");
            assert_eq!(stderr_tail, "model not found");
        }
        other => panic!("{other:?}"),
    }
    assert!(e.to_string().contains("model not found"));
}

#[test]
fn a_slow_program_is_killed_at_the_timeout() {
    let t = Instant::now();
    let e = sh("sleep 5", 200).complete(&request(None)).unwrap_err();
    assert_eq!(e, ProviderError::Timeout { secs: 0.2 });
    assert!(t.elapsed() < Duration::from_secs(3));
}

#[test]
fn a_missing_program_is_an_error() {
    let p = CommandProvider::new("ekb-no-such-program", vec![], Duration::from_secs(1));
    assert!(matches!(p.complete(&request(None)), Err(ProviderError::Io(_))));
}

#[test]
fn replay_answers_by_prompt_hash_and_seed() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("answers.jsonl");
    let answer = |t: &str| Response {
        text: t.into(),
        usage: Usage { prompt_tokens: 3, completion_tokens: 1 },
        cached: false,
    };
    Replay::record(&file, &request(Some(1)), &answer("sample one")).unwrap();
    Replay::record(&file, &request(Some(2)), &answer("sample two")).unwrap();
    let r = Replay::load(&file).unwrap();
    assert_eq!(r.len(), 2);
    assert_eq!(r.complete(&request(Some(2))).unwrap().text, "sample two");
    assert_eq!(r.complete(&request(Some(1))).unwrap().usage.prompt_tokens, 3);
    let e = r.complete(&request(Some(3))).unwrap_err();
    assert_eq!(e, ProviderError::NotRecorded { prompt_hash: request(None).prompt_hash() });
    // A record without a seed answers every seed.
    let any = Record {
        prompt_hash: request(None).prompt_hash(),
        seed: None,
        text: "any".into(),
        usage: Usage::default(),
    };
    let r = Replay::parse("x", &serde_json::to_string(&any).unwrap()).unwrap();
    assert_eq!(r.complete(&request(Some(9))).unwrap().text, "any");
}

#[test]
fn a_malformed_replay_line_names_its_line() {
    let e = Replay::parse("rec.jsonl", "\n{\"prompt_hash\":\"a\",\"text\":\"t\"}\nnot json\n").unwrap_err();
    assert!(e.to_string().starts_with("rec.jsonl:3: not a replay record"), "{e}");
}

#[test]
fn the_cache_keeps_a_failing_commands_error_out() {
    let dir = tempfile::tempdir().unwrap();
    let c = Cached::new(sh("exit 1", 10_000), dir.path());
    assert!(c.complete(&request(None)).is_err());
    assert!(c.complete(&request(None)).is_err(), "errors are not cached");
    assert_eq!((c.hits(), c.misses()), (0, 2));
}
