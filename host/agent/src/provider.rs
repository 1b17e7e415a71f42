//! The provider interface: a chat request (model, messages, sampling parameters) goes in, the
//! answer's text and its token usage come out.
//!
//! What must stay true: [`Request::prompt_hash`] depends on the messages only (it keys recorded
//! answers), [`Request::cache_key`] on everything that can change an answer; both are stable
//! across runs and platforms (SHA-256 of a fixed JSON form).

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::fmt;

/// Who speaks a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    System,
    User,
    Assistant,
}

/// One chat message.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Message {
    pub role: Role,
    pub content: String,
}

impl Message {
    pub fn system(content: impl Into<String>) -> Message {
        Message { role: Role::System, content: content.into() }
    }

    pub fn user(content: impl Into<String>) -> Message {
        Message { role: Role::User, content: content.into() }
    }
}

/// One completion request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Request {
    pub model: String,
    pub messages: Vec<Message>,
    pub temperature: f64,
    pub max_tokens: u32,
    /// The sampling seed; with `--samples k` the samples differ by seed.
    pub seed: Option<u64>,
}

/// Tokens spent on one request, as the provider reports them (zero where it reports none).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
}

/// One answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Response {
    pub text: String,
    pub usage: Usage,
    /// True when the answer came from the response cache (no request was sent).
    #[serde(default)]
    pub cached: bool,
}

/// Why a provider gave no answer.
#[derive(Debug, Clone, PartialEq)]
pub enum ProviderError {
    /// The configuration names an environment variable for the key and it is not set.
    MissingKey { var: String },
    /// The server could not be reached or the connection failed (including timeouts), after
    /// all retries.
    Transport(String),
    /// The server answered with an error status (after all retries for 429 and 5xx).
    Status { code: u16, body: String },
    /// The server answered 200 with a body that is not a chat completion.
    BadResponse(String),
    /// The command ran longer than its timeout and was killed.
    Timeout { secs: f64 },
    /// The command exited unsuccessfully.
    Command { status: String, stderr_tail: String },
    /// Replay has no recorded answer for this prompt.
    NotRecorded { prompt_hash: String },
    /// A local file or process could not be used.
    Io(String),
}

impl fmt::Display for ProviderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProviderError::MissingKey { var } => {
                write!(f, "the API key variable `{var}` is not set in the environment")
            }
            ProviderError::Transport(m) => write!(f, "request failed: {m}"),
            ProviderError::Status { code, body } => write!(f, "the server answered HTTP {code}: {body}"),
            ProviderError::BadResponse(m) => write!(f, "the server's answer is not a chat completion: {m}"),
            ProviderError::Timeout { secs } => write!(f, "the command did not answer within {secs} s"),
            ProviderError::Command { status, stderr_tail } => {
                write!(f, "the command failed ({status})")?;
                if !stderr_tail.is_empty() {
                    write!(f, "; its stderr ends with:\n{stderr_tail}")?;
                }
                Ok(())
            }
            ProviderError::NotRecorded { prompt_hash } => {
                write!(f, "no recorded answer for the prompt with hash {prompt_hash}")
            }
            ProviderError::Io(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for ProviderError {}

/// A source of answers, shareable between threads (requests may be in flight at once).
pub trait Provider: Send + Sync {
    /// A stable name of the endpoint, part of the cache key (`openai:URL`, `command:PROGRAM`,
    /// `replay`). It never contains a secret.
    fn id(&self) -> String;

    /// Answers one request.
    fn complete(&self, req: &Request) -> Result<Response, ProviderError>;
}

impl<P: Provider + ?Sized> Provider for Box<P> {
    fn id(&self) -> String {
        (**self).id()
    }

    fn complete(&self, req: &Request) -> Result<Response, ProviderError> {
        (**self).complete(req)
    }
}

impl Request {
    /// SHA-256 (lowercase hex) of the messages: the key of recorded answers.
    pub fn prompt_hash(&self) -> String {
        sha256_hex(&serde_json::to_vec(&self.messages).expect("messages serialise"))
    }

    /// SHA-256 (lowercase hex) of the provider id, model, parameters and messages.
    pub fn cache_key(&self, provider_id: &str) -> String {
        let key = serde_json::json!({
            "provider": provider_id,
            "model": self.model,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "seed": self.seed,
            "messages": self.messages,
        });
        sha256_hex(&serde_json::to_vec(&key).expect("key serialises"))
    }

    /// The messages as one text, for programs that read a plain prompt: each message's content,
    /// separated by a blank line.
    pub fn plain_prompt(&self) -> String {
        let parts: Vec<&str> = self.messages.iter().map(|m| m.content.trim_end()).collect();
        let mut s = parts.join("\n\n");
        s.push('\n');
        s
    }
}

/// Lowercase hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

/// The last `max` bytes of `s` (on a character boundary), for error messages.
pub fn tail(s: &str, max: usize) -> String {
    let s = s.trim_end();
    if s.len() <= max {
        return s.to_string();
    }
    let mut start = s.len() - max;
    while !s.is_char_boundary(start) {
        start += 1;
    }
    format!("...{}", &s[start..])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(seed: Option<u64>) -> Request {
        Request {
            model: "m".into(),
            messages: vec![Message::system("s"), Message::user("u")],
            temperature: 0.0,
            max_tokens: 100,
            seed,
        }
    }

    #[test]
    fn sha256_of_abc_is_the_standard_vector() {
        assert_eq!(sha256_hex(b"abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    }

    #[test]
    fn prompt_hash_ignores_parameters_but_cache_key_does_not() {
        assert_eq!(req(Some(1)).prompt_hash(), req(Some(2)).prompt_hash());
        assert_ne!(req(Some(1)).cache_key("p"), req(Some(2)).cache_key("p"));
        assert_ne!(req(Some(1)).cache_key("p"), req(Some(1)).cache_key("q"));
        assert_eq!(req(Some(1)).cache_key("p"), req(Some(1)).cache_key("p"));
    }

    #[test]
    fn tail_keeps_the_end() {
        assert_eq!(tail("abcdef\n", 3), "...def");
        assert_eq!(tail("ab", 3), "ab");
    }
}
