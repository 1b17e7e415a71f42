//! An OpenAI-compatible chat-completions client: `POST {base}/chat/completions` with a JSON body
//! `{model, messages, temperature, max_tokens, seed}`, answer in `choices[0].message.content`,
//! token counts in `usage`. Hosted APIs and local servers (vLLM, llama.cpp, Ollama) speak it.
//!
//! What must stay true: the key is read from the environment variable the configuration names,
//! sent only in the `Authorization` header, and never printed (no `Debug` of the key, no key in
//! any error). HTTP 429 and 5xx answers and transport failures are retried with exponential
//! backoff, honouring `Retry-After` (seconds) when the server sends it; other statuses fail at
//! once.

use crate::provider::{tail, Provider, ProviderError, Request, Response, Usage};
use std::fmt;
use std::time::Duration;

/// Where and how to reach the server.
#[derive(Debug, Clone)]
pub struct OpenAiConfig {
    /// The API base, e.g. `https://api.openai.com/v1` or `http://127.0.0.1:8000/v1`.
    pub base_url: String,
    /// The environment variable holding the key; `None` for servers that need none.
    pub api_key_env: Option<String>,
    /// Timeout of one request (connect, send and read together).
    pub timeout: Duration,
    /// Retries after the first attempt.
    pub max_retries: u32,
    /// The first backoff; attempt n waits `backoff * 2^n`, at most `max_backoff`.
    pub backoff: Duration,
    pub max_backoff: Duration,
}

impl OpenAiConfig {
    /// Defaults: 300 s per request, 5 retries, backoff from 1 s up to 60 s.
    pub fn new(base_url: impl Into<String>, api_key_env: Option<String>) -> OpenAiConfig {
        OpenAiConfig {
            base_url: base_url.into(),
            api_key_env,
            timeout: Duration::from_secs(300),
            max_retries: 5,
            backoff: Duration::from_secs(1),
            max_backoff: Duration::from_secs(60),
        }
    }
}

/// The client.
pub struct OpenAi {
    cfg: OpenAiConfig,
    key: Option<String>,
    agent: ureq::Agent,
}

impl fmt::Debug for OpenAi {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpenAi")
            .field("cfg", &self.cfg)
            .field("key", &self.key.as_ref().map(|_| "<set>"))
            .finish()
    }
}

/// One attempt's failure: whether it may be retried, and the server's `Retry-After`.
struct Attempt {
    err: ProviderError,
    retry: bool,
    retry_after: Option<Duration>,
}

impl OpenAi {
    /// Reads the key from the named variable; an unset variable is [`ProviderError::MissingKey`].
    pub fn new(cfg: OpenAiConfig) -> Result<OpenAi, ProviderError> {
        let key = match &cfg.api_key_env {
            Some(var) => match std::env::var(var) {
                Ok(k) if !k.is_empty() => Some(k),
                _ => return Err(ProviderError::MissingKey { var: var.clone() }),
            },
            None => None,
        };
        let agent = ureq::AgentBuilder::new().timeout(cfg.timeout).build();
        Ok(OpenAi { cfg, key, agent })
    }

    fn url(&self) -> String {
        format!("{}/chat/completions", self.cfg.base_url.trim_end_matches('/'))
    }

    /// The JSON body of a request.
    pub fn body(req: &Request) -> serde_json::Value {
        let mut body = serde_json::json!({
            "model": req.model,
            "messages": req.messages,
            "temperature": req.temperature,
            "max_tokens": req.max_tokens,
        });
        if let Some(seed) = req.seed {
            body["seed"] = seed.into();
        }
        body
    }

    fn attempt(&self, body: &str) -> Result<Response, Attempt> {
        let mut call = self.agent.post(&self.url()).set("Content-Type", "application/json");
        if let Some(key) = &self.key {
            call = call.set("Authorization", &format!("Bearer {key}"));
        }
        match call.send_string(body) {
            Ok(resp) => {
                let text = resp.into_string().map_err(|e| Attempt {
                    err: ProviderError::Transport(format!("reading the answer: {e}")),
                    retry: true,
                    retry_after: None,
                })?;
                parse_completion(&text).map_err(|err| Attempt { err, retry: false, retry_after: None })
            }
            Err(ureq::Error::Status(code, resp)) => {
                let retry_after = resp
                    .header("Retry-After")
                    .and_then(|v| v.trim().parse::<f64>().ok())
                    .filter(|s| s.is_finite() && *s >= 0.0)
                    .map(Duration::from_secs_f64);
                let body = resp.into_string().unwrap_or_default();
                Err(Attempt {
                    err: ProviderError::Status { code, body: tail(&body, 500) },
                    retry: code == 429 || code >= 500,
                    retry_after,
                })
            }
            Err(ureq::Error::Transport(t)) => {
                Err(Attempt { err: ProviderError::Transport(t.to_string()), retry: true, retry_after: None })
            }
        }
    }

    /// The wait before retry number `n` (0-based).
    fn backoff(&self, n: u32, retry_after: Option<Duration>) -> Duration {
        let exp = self.cfg.backoff.saturating_mul(1u32 << n.min(20));
        retry_after.unwrap_or(exp).min(self.cfg.max_backoff)
    }
}

/// The text and usage of a chat-completion body. A `null` content is an empty answer.
pub fn parse_completion(text: &str) -> Result<Response, ProviderError> {
    let v: serde_json::Value = serde_json::from_str(text)
        .map_err(|e| ProviderError::BadResponse(format!("{e}; the body starts with `{}`", head(text))))?;
    let msg =
        v.get("choices").and_then(|c| c.get(0)).and_then(|c| c.get("message")).ok_or_else(|| {
            ProviderError::BadResponse(format!("no `choices[0].message` in `{}`", head(text)))
        })?;
    let content = match msg.get("content") {
        Some(serde_json::Value::String(s)) => s.clone(),
        Some(serde_json::Value::Null) | None => String::new(),
        Some(other) => {
            return Err(ProviderError::BadResponse(format!("`content` is not a string: {other}")));
        }
    };
    let count = |k: &str| v.get("usage").and_then(|u| u.get(k)).and_then(|n| n.as_u64()).unwrap_or(0);
    Ok(Response {
        text: content,
        usage: Usage { prompt_tokens: count("prompt_tokens"), completion_tokens: count("completion_tokens") },
        cached: false,
    })
}

fn head(s: &str) -> String {
    let mut end = s.len().min(200);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s[..end].to_string()
}

impl Provider for OpenAi {
    fn id(&self) -> String {
        format!("openai:{}", self.cfg.base_url.trim_end_matches('/'))
    }

    fn complete(&self, req: &Request) -> Result<Response, ProviderError> {
        let body = OpenAi::body(req).to_string();
        let mut n = 0;
        loop {
            match self.attempt(&body) {
                Ok(r) => return Ok(r),
                Err(a) if a.retry && n < self.cfg.max_retries => {
                    std::thread::sleep(self.backoff(n, a.retry_after));
                    n += 1;
                }
                Err(a) => return Err(a.err),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn completion_body_is_parsed() {
        let r = parse_completion(
            r#"{"choices":[{"index":0,"message":{"role":"assistant","content":"hi"}}],
                "usage":{"prompt_tokens":7,"completion_tokens":2,"total_tokens":9}}"#,
        )
        .unwrap();
        assert_eq!(r.text, "hi");
        assert_eq!(r.usage, Usage { prompt_tokens: 7, completion_tokens: 2 });
    }

    #[test]
    fn null_content_is_an_empty_answer_and_garbage_is_an_error() {
        let r = parse_completion(r#"{"choices":[{"message":{"content":null}}]}"#).unwrap();
        assert_eq!(r.text, "");
        assert_eq!(r.usage, Usage::default());
        assert!(matches!(parse_completion("{\"choices\":[]}"), Err(ProviderError::BadResponse(_))));
        assert!(matches!(parse_completion("<html>"), Err(ProviderError::BadResponse(_))));
    }

    #[test]
    fn backoff_doubles_and_is_capped_and_retry_after_wins() {
        let mut cfg = OpenAiConfig::new("http://x", None);
        cfg.backoff = Duration::from_millis(100);
        cfg.max_backoff = Duration::from_millis(350);
        let c = OpenAi::new(cfg).unwrap();
        assert_eq!(c.backoff(0, None), Duration::from_millis(100));
        assert_eq!(c.backoff(1, None), Duration::from_millis(200));
        assert_eq!(c.backoff(2, None), Duration::from_millis(350));
        assert_eq!(c.backoff(0, Some(Duration::from_millis(300))), Duration::from_millis(300));
    }

    #[test]
    fn an_unset_key_variable_is_reported_by_name() {
        let cfg = OpenAiConfig::new("http://x", Some("EKB_TEST_SURELY_UNSET_KEY".into()));
        assert_eq!(
            OpenAi::new(cfg).unwrap_err(),
            ProviderError::MissingKey { var: "EKB_TEST_SURELY_UNSET_KEY".into() }
        );
    }
}
