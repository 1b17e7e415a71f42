//! The response cache: a provider wrapped in [`Cached`] answers a request it has answered before
//! from a file, sending nothing. Files live at `DIR/KEY[..2]/KEY.json`, where KEY is
//! [`Request::cache_key`] (provider id, model, parameters and prompt); each holds the request and
//! the response.
//!
//! What must stay true: only successful answers are stored; a file is written whole (to a
//! temporary name, then renamed) so an interrupted run leaves no half entry; an unreadable entry
//! is a miss, and the fresh answer replaces it.

use crate::provider::{Provider, ProviderError, Request, Response};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// A provider behind a cache directory.
#[derive(Debug)]
pub struct Cached<P> {
    inner: P,
    dir: PathBuf,
    hits: AtomicUsize,
    misses: AtomicUsize,
}

#[derive(Serialize, Deserialize)]
struct Entry {
    provider: String,
    request: Request,
    response: Response,
}

impl<P: Provider> Cached<P> {
    pub fn new(inner: P, dir: impl Into<PathBuf>) -> Cached<P> {
        Cached { inner, dir: dir.into(), hits: AtomicUsize::new(0), misses: AtomicUsize::new(0) }
    }

    /// Answers served from the cache so far.
    pub fn hits(&self) -> usize {
        self.hits.load(Ordering::Relaxed)
    }

    /// Requests passed to the provider so far.
    pub fn misses(&self) -> usize {
        self.misses.load(Ordering::Relaxed)
    }

    /// The file of a request's entry.
    pub fn entry_path(&self, req: &Request) -> PathBuf {
        let key = req.cache_key(&self.inner.id());
        self.dir.join(&key[..2]).join(format!("{key}.json"))
    }

    fn store(&self, path: &Path, req: &Request, resp: &Response) -> Result<(), ProviderError> {
        let io = |e: std::io::Error| ProviderError::Io(format!("cache {}: {e}", path.display()));
        std::fs::create_dir_all(path.parent().expect("entries are in a folder")).map_err(io)?;
        let entry = Entry { provider: self.inner.id(), request: req.clone(), response: resp.clone() };
        let tmp = path.with_extension(format!("tmp{}", std::process::id()));
        std::fs::write(&tmp, serde_json::to_vec_pretty(&entry).expect("an entry serialises")).map_err(io)?;
        std::fs::rename(&tmp, path).map_err(io)
    }
}

impl<P: Provider> Provider for Cached<P> {
    fn id(&self) -> String {
        self.inner.id()
    }

    fn complete(&self, req: &Request) -> Result<Response, ProviderError> {
        let path = self.entry_path(req);
        let hit = std::fs::read(&path).ok().and_then(|b| serde_json::from_slice::<Entry>(&b).ok());
        if let Some(e) = hit {
            self.hits.fetch_add(1, Ordering::Relaxed);
            return Ok(Response { cached: true, ..e.response });
        }
        self.misses.fetch_add(1, Ordering::Relaxed);
        let resp = self.inner.complete(req)?;
        self.store(&path, req, &resp)?;
        Ok(resp)
    }
}
