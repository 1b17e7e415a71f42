//! The OpenAI-compatible client against a real HTTP server on loopback that speaks the
//! chat-completions wire format: the request it sends, retries on 429 and 5xx, errors, timeouts,
//! and the cache sending no second request.

use ekb_agent::{Cached, Message, OpenAi, OpenAiConfig, Provider, ProviderError, Request};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

/// What the server saw of one request.
#[derive(Debug, Clone)]
struct Seen {
    request_line: String,
    headers: Vec<(String, String)>,
    body: String,
}

impl Seen {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

/// One scripted answer: status, extra headers, body. `None` accepts and never answers.
type Script = Option<(u16, Vec<(&'static str, String)>, String)>;

/// Serves the scripted answers in order, one connection each, then stops listening.
fn serve(script: Vec<Script>) -> (String, Arc<Mutex<Vec<Seen>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}/v1", listener.local_addr().unwrap());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    thread::spawn(move || {
        for answer in script {
            let (stream, _) = listener.accept().unwrap();
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut request_line = String::new();
            reader.read_line(&mut request_line).unwrap();
            let mut headers = Vec::new();
            loop {
                let mut line = String::new();
                reader.read_line(&mut line).unwrap();
                let line = line.trim_end();
                if line.is_empty() {
                    break;
                }
                let (k, v) = line.split_once(':').unwrap();
                headers.push((k.trim().to_string(), v.trim().to_string()));
            }
            let len = headers
                .iter()
                .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
                .map_or(0, |(_, v)| v.parse::<usize>().unwrap());
            let mut body = vec![0; len];
            reader.read_exact(&mut body).unwrap();
            log.lock().unwrap().push(Seen {
                request_line: request_line.trim_end().to_string(),
                headers,
                body: String::from_utf8(body).unwrap(),
            });
            let Some((status, extra, body)) = answer else {
                // Hold the connection open past the client's timeout, then drop it.
                thread::sleep(Duration::from_millis(1500));
                continue;
            };
            let mut out = stream;
            let mut head = format!(
                "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n",
                body.len()
            );
            for (k, v) in extra {
                head.push_str(&format!("{k}: {v}\r\n"));
            }
            head.push_str("\r\n");
            out.write_all(head.as_bytes()).unwrap();
            out.write_all(body.as_bytes()).unwrap();
        }
    });
    (base, seen)
}

fn completion(text: &str) -> Script {
    let body = serde_json::json!({
        "id": "chatcmpl-1", "object": "chat.completion", "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 11, "completion_tokens": 5, "total_tokens": 16}
    });
    Some((200, vec![], body.to_string()))
}

fn request(seed: u64) -> Request {
    Request {
        model: "qwen-coder".into(),
        messages: vec![Message::system("be brief"), Message::user("write a kernel")],
        temperature: 0.2,
        max_tokens: 512,
        seed: Some(seed),
    }
}

fn client(base: &str, key_env: Option<&str>) -> OpenAi {
    let mut cfg = OpenAiConfig::new(base, key_env.map(String::from));
    cfg.timeout = Duration::from_millis(700);
    cfg.max_retries = 2;
    cfg.backoff = Duration::from_millis(10);
    OpenAi::new(cfg).unwrap()
}

#[test]
fn sends_the_chat_completions_request_and_reads_the_answer() {
    std::env::set_var("EKB_TEST_KEY_A", "sk-test-123");
    let (base, seen) = serve(vec![completion("```ekir\nmodule m {\n}\n```")]);
    let r = client(&base, Some("EKB_TEST_KEY_A")).complete(&request(7)).unwrap();
    assert_eq!(r.text, "```ekir\nmodule m {\n}\n```");
    assert_eq!((r.usage.prompt_tokens, r.usage.completion_tokens), (11, 5));
    assert!(!r.cached);
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].request_line, "POST /v1/chat/completions HTTP/1.1");
    assert_eq!(seen[0].header("authorization"), Some("Bearer sk-test-123"));
    assert_eq!(seen[0].header("content-type"), Some("application/json"));
    let body: serde_json::Value = serde_json::from_str(&seen[0].body).unwrap();
    assert_eq!(
        body,
        serde_json::json!({
            "model": "qwen-coder",
            "messages": [{"role": "system", "content": "be brief"}, {"role": "user", "content": "write a kernel"}],
            "temperature": 0.2,
            "max_tokens": 512,
            "seed": 7
        })
    );
}

#[test]
fn no_key_variable_means_no_authorization_header() {
    let (base, seen) = serve(vec![completion("ok")]);
    client(&base, None).complete(&request(1)).unwrap();
    assert_eq!(seen.lock().unwrap()[0].header("authorization"), None);
}

#[test]
fn a_429_is_retried_after_the_servers_retry_after() {
    let busy = Some((429, vec![("Retry-After", "1".to_string())], "{\"error\":\"slow down\"}".to_string()));
    let (base, seen) = serve(vec![busy, completion("second time lucky")]);
    let t = Instant::now();
    let r = client(&base, None).complete(&request(1)).unwrap();
    assert_eq!(r.text, "second time lucky");
    assert!(t.elapsed() >= Duration::from_secs(1), "Retry-After: 1 honoured, not the 10 ms backoff");
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 2);
    assert_eq!(seen[0].body, seen[1].body, "the retry sends the same request");
}

#[test]
fn a_persistent_500_fails_after_the_retries_with_the_body() {
    let err = || Some((500, vec![], "{\"error\":\"boom\"}".to_string()));
    let (base, seen) = serve(vec![err(), err(), err()]);
    let e = client(&base, None).complete(&request(1)).unwrap_err();
    assert_eq!(e, ProviderError::Status { code: 500, body: "{\"error\":\"boom\"}".into() });
    assert_eq!(seen.lock().unwrap().len(), 3, "one attempt and two retries");
}

#[test]
fn a_400_is_not_retried() {
    let (base, seen) = serve(vec![Some((400, vec![], "bad model".to_string())), completion("never")]);
    let e = client(&base, None).complete(&request(1)).unwrap_err();
    assert!(matches!(e, ProviderError::Status { code: 400, .. }), "{e}");
    assert_eq!(seen.lock().unwrap().len(), 1);
}

#[test]
fn malformed_json_and_empty_answers() {
    let (base, _) = serve(vec![Some((200, vec![], "{not json".to_string())), completion("")]);
    let c = client(&base, None);
    let e = c.complete(&request(1)).unwrap_err();
    assert!(matches!(e, ProviderError::BadResponse(_)), "{e}");
    assert_eq!(c.complete(&request(1)).unwrap().text, "");
}

#[test]
fn a_silent_server_times_out() {
    let (base, seen) = serve(vec![None]);
    let mut cfg = OpenAiConfig::new(base, None);
    cfg.timeout = Duration::from_millis(300);
    cfg.max_retries = 0;
    let t = Instant::now();
    let e = OpenAi::new(cfg).unwrap().complete(&request(1)).unwrap_err();
    assert!(matches!(e, ProviderError::Transport(_)), "{e}");
    assert!(t.elapsed() < Duration::from_millis(1400), "gave up at the timeout, not when the server hung up");
    assert_eq!(seen.lock().unwrap().len(), 1);
}

#[test]
fn the_cache_answers_a_repeated_request_without_sending_it() {
    let dir = tempfile::tempdir().unwrap();
    let (base, seen) = serve(vec![completion("first"), completion("for seed 2")]);
    let cached = Cached::new(client(&base, None), dir.path());
    let a = cached.complete(&request(1)).unwrap();
    let b = cached.complete(&request(1)).unwrap();
    assert_eq!((a.text.as_str(), a.cached), ("first", false));
    assert_eq!((b.text.as_str(), b.cached), ("first", true));
    assert_eq!(b.usage, a.usage);
    assert_eq!(seen.lock().unwrap().len(), 1, "the second request was not sent");
    // A different seed is a different request.
    assert_eq!(cached.complete(&request(2)).unwrap().text, "for seed 2");
    assert_eq!(seen.lock().unwrap().len(), 2);
    assert_eq!((cached.hits(), cached.misses()), (1, 2));
    // A fresh process (a new wrapper on the same folder) hits too, with the server gone.
    let again = Cached::new(client(&base, None), dir.path());
    assert_eq!(again.complete(&request(2)).unwrap().text, "for seed 2");
    assert!(again.entry_path(&request(2)).is_file());
}
