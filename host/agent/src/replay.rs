//! Replay: answers recorded in a JSON-lines file, one object per line:
//! `{"prompt_hash": "<sha256 of the messages>", "seed": 3, "text": "...", "usage": {...}}`
//! (`seed` and `usage` optional). A request is answered by the line with its prompt hash and
//! seed, else by the line with its prompt hash and no seed.
//!
//! What must stay true: a request with no recorded answer is [`ProviderError::NotRecorded`]
//! naming the hash, never a made-up answer; a malformed line is an error naming its line number.

use crate::provider::{Provider, ProviderError, Request, Response, Usage};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::io::Write;
use std::path::Path;

/// One recorded answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    pub prompt_hash: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    pub text: String,
    #[serde(default)]
    pub usage: Usage,
}

/// The recorded answers of one file.
#[derive(Debug, Clone, Default)]
pub struct Replay {
    answers: HashMap<(String, Option<u64>), Record>,
}

impl Replay {
    /// Reads a recording; the first record for a (hash, seed) wins.
    pub fn load(path: &Path) -> Result<Replay, ProviderError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| ProviderError::Io(format!("cannot read {}: {e}", path.display())))?;
        Replay::parse(&path.display().to_string(), &text)
    }

    /// Parses recording text; `origin` names it in errors.
    pub fn parse(origin: &str, text: &str) -> Result<Replay, ProviderError> {
        let mut answers = HashMap::new();
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let r: Record = serde_json::from_str(line)
                .map_err(|e| ProviderError::Io(format!("{origin}:{}: not a replay record: {e}", i + 1)))?;
            answers.entry((r.prompt_hash.clone(), r.seed)).or_insert(r);
        }
        Ok(Replay { answers })
    }

    /// Appends the answer to a request to a recording (creating the file).
    pub fn record(path: &Path, req: &Request, resp: &Response) -> Result<(), ProviderError> {
        let rec = Record {
            prompt_hash: req.prompt_hash(),
            seed: req.seed,
            text: resp.text.clone(),
            usage: resp.usage,
        };
        let line = serde_json::to_string(&rec).expect("a record serialises");
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .and_then(|mut f| writeln!(f, "{line}"))
            .map_err(|e| ProviderError::Io(format!("cannot append to {}: {e}", path.display())))
    }

    pub fn len(&self) -> usize {
        self.answers.len()
    }

    pub fn is_empty(&self) -> bool {
        self.answers.is_empty()
    }
}

impl Provider for Replay {
    fn id(&self) -> String {
        "replay".into()
    }

    fn complete(&self, req: &Request) -> Result<Response, ProviderError> {
        let hash = req.prompt_hash();
        let rec = self
            .answers
            .get(&(hash.clone(), req.seed))
            .or_else(|| self.answers.get(&(hash.clone(), None)))
            .ok_or(ProviderError::NotRecorded { prompt_hash: hash })?;
        Ok(Response { text: rec.text.clone(), usage: rec.usage, cached: false })
    }
}
