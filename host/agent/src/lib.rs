//! Candidate generation for the benchmark: the model providers, the response cache, the prompts
//! and the extraction of a candidate from a model's answer.
//!
//! - [`provider`]: the [`Provider`] trait and its request/response types.
//! - [`openai`]: an OpenAI-compatible chat-completions client (hosted APIs, vLLM, llama.cpp,
//!   Ollama).
//! - [`command`]: any program that reads the prompt on stdin and answers on stdout.
//! - [`replay`]: answers recorded in a JSON-lines file, keyed by prompt hash.
//! - [`cache`]: a response cache in front of any provider, so that a re-run sends no request.
//! - [`prompt`]: the prompt for one (task, backend) instance, in unified-IR, native or trace mode.
//! - [`extract`]: the candidate in an answer, tolerant of prose and fences.
//!
//! What must stay true: a provider never logs or stores the API key; the cache key covers
//! everything that can change an answer (provider, model, parameters, prompt), so a cache hit is
//! the answer the same request would have been given.

pub mod cache;
pub mod command;
pub mod extract;
pub mod openai;
pub mod prompt;
pub mod provider;
pub mod replay;

pub use cache::Cached;
pub use command::CommandProvider;
pub use extract::{extract, Candidate, CandidateKind, ExtractError};
pub use openai::{OpenAi, OpenAiConfig};
pub use prompt::{build_prompt, Mode};
pub use provider::{Message, Provider, ProviderError, Request, Response, Role, Usage};
pub use replay::Replay;
