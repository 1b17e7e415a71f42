//! The candidate in a model's answer. Answers mix prose, fenced blocks (```` ```ekir ````,
//! ```` ```text ````, untagged, or a native language tag) and bare code; this module finds the
//! program.
//!
//! Unified mode: every fenced block that holds an IR unit (a line starting `module NAME {` or
//! `graph NAME(`) is a candidate, and so is, when there is no fence, the unit found in the bare
//! text (from its first line to the brace that closes it). The first L1 module that parses wins,
//! else the first L0 graph that parses (an answer often repeats the task's graph before its
//! module); when none parses, the last one is returned, marked as not parsing, so that it is
//! evaluated and counted as a syntax failure rather than dropped. Native mode: the first block
//! tagged with the backend's language family (c, cpp, cuda, cu, opencl, cl), else the first block
//! that defines a function, else the bare answer when it defines one. Trace mode: the first block
//! tagged `trace`, else the first untagged block whose lines parse as a schedule trace of at least
//! one step; a tagged block that does not parse is returned, marked as not parsing, with the trace
//! reader's located diagnostic.
//!
//! What must stay true: an answer with nothing usable is an [`ExtractError`] that says what was
//! looked for, never an empty candidate.

use crate::prompt::Mode;
use ekb_ir::{l0, l1, SourceFile};
use std::fmt;

/// What a candidate is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CandidateKind {
    L0,
    L1,
    Native,
    /// A schedule trace (`docs/schedules.md`).
    Trace,
}

/// The program found in an answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    pub kind: CandidateKind,
    pub text: String,
    /// Unified and trace modes: whether the text parses; native candidates are not parsed here
    /// (`true`).
    pub parses: bool,
    /// The parse error of a candidate that does not parse.
    pub parse_error: Option<String>,
}

/// Why no candidate was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExtractError {
    /// The answer is empty or whitespace.
    Empty,
    /// The answer has text but no program of the expected kind.
    NoProgram { looked_for: &'static str, blocks: usize },
}

impl fmt::Display for ExtractError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExtractError::Empty => f.write_str("the answer is empty"),
            ExtractError::NoProgram { looked_for, blocks } => write!(
                f,
                "no candidate in the answer: looked for {looked_for} in {blocks} fenced block(s) and in the bare text"
            ),
        }
    }
}

impl std::error::Error for ExtractError {}

/// A fenced block: its info string (first word, lowercase) and body.
#[derive(Debug, PartialEq)]
struct Block {
    tag: String,
    body: String,
}

/// The fenced blocks of `text` (```` ``` ```` or `~~~` fences, three or more; an unclosed fence runs
/// to the end).
fn blocks(text: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut open: Option<(String, String, Block)> = None;
    for line in text.lines() {
        let t = line.trim_start();
        match &mut open {
            None => {
                let ch = if t.starts_with("```") {
                    '`'
                } else if t.starts_with("~~~") {
                    '~'
                } else {
                    continue;
                };
                let n = t.chars().take_while(|&c| c == ch).count();
                let tag = t[n..].split_whitespace().next().unwrap_or("").to_lowercase();
                open = Some((ch.to_string().repeat(n), String::new(), Block { tag, body: String::new() }));
            }
            Some((fence, body, _)) => {
                if t.starts_with(fence.as_str())
                    && t.trim_end().chars().all(|c| c == fence.chars().next().unwrap())
                {
                    let (_, body, mut b) = open.take().expect("a fence is open");
                    b.body = body;
                    out.push(b);
                } else {
                    body.push_str(line);
                    body.push('\n');
                }
            }
        }
    }
    if let Some((_, body, mut b)) = open {
        b.body = body;
        out.push(b);
    }
    out
}

/// The IR unit in `text`: from the first `module NAME {` / `graph NAME(` line to the brace that
/// closes it (or the end of the text).
fn ir_unit(text: &str) -> Option<String> {
    let start = text.lines().position(|l| is_ir_start(l.trim_start()))?;
    let mut out = String::new();
    let mut depth = 0i64;
    for line in text.lines().skip(start) {
        out.push_str(line);
        out.push('\n');
        let code = line.split('#').next().unwrap_or("");
        depth += code.matches('{').count() as i64 - code.matches('}').count() as i64;
        if depth <= 0 && code.contains('}') {
            break;
        }
    }
    Some(out)
}

fn is_ir_start(t: &str) -> bool {
    let word =
        |kw: &str| t.strip_prefix(kw).is_some_and(|r| r.starts_with(|c: char| c.is_alphabetic() || c == '_'));
    (word("module ") && t.trim_end().ends_with('{')) || (word("graph ") && t.contains('('))
}

fn parse_unit(text: &str) -> (CandidateKind, Result<(), String>) {
    let src = SourceFile::new("candidate.ekir", text);
    let first = text.lines().map(str::trim_start).find(|l| is_ir_start(l)).unwrap_or("");
    if first.starts_with("module") {
        (CandidateKind::L1, l1::parse::parse(&src).map(|_| ()).map_err(|d| d.message.clone()))
    } else {
        (CandidateKind::L0, l0::parse::parse(&src).map(|_| ()).map_err(|d| d.message.clone()))
    }
}

/// A schedule trace read as the file the generate command writes (where its errors point).
fn parse_trace(text: &str) -> Result<ekb_sched::Trace, ekb_ir::Diagnostic> {
    ekb_sched::parse(&SourceFile::new("candidate.trace", text))
}

const NATIVE_TAGS: [&str; 8] = ["c", "cpp", "c++", "cuda", "cu", "opencl", "cl", "h"];

fn defines_function(t: &str) -> bool {
    t.contains("__global__") || t.contains("__kernel") || (t.contains("void ") && t.contains('('))
}

/// The candidate in `answer` for `mode`.
pub fn extract(answer: &str, mode: Mode) -> Result<Candidate, ExtractError> {
    if answer.trim().is_empty() {
        return Err(ExtractError::Empty);
    }
    let bs = blocks(answer);
    match mode {
        Mode::Unified => {
            let mut units: Vec<String> = bs.iter().filter_map(|b| ir_unit(&b.body)).collect();
            if bs.is_empty() {
                units.extend(ir_unit(answer));
            }
            let mut last = None;
            let mut graph = None;
            for u in units {
                match parse_unit(&u) {
                    (CandidateKind::L1, Ok(())) => {
                        return Ok(Candidate {
                            kind: CandidateKind::L1,
                            text: u,
                            parses: true,
                            parse_error: None,
                        })
                    }
                    (kind, Ok(())) => {
                        graph.get_or_insert(Candidate { kind, text: u, parses: true, parse_error: None });
                    }
                    (kind, Err(e)) => {
                        last = Some(Candidate { kind, text: u, parses: false, parse_error: Some(e) })
                    }
                }
            }
            let last = graph.or(last);
            last.ok_or(ExtractError::NoProgram {
                looked_for: "an IR unit (`module NAME {` or `graph NAME(`)",
                blocks: bs.len(),
            })
        }
        Mode::Trace => {
            let tagged = bs.iter().find(|b| b.tag == "trace" && !b.body.trim().is_empty());
            let untagged = || {
                bs.iter()
                    .find(|b| b.tag.is_empty() && parse_trace(&b.body).is_ok_and(|t| !t.steps.is_empty()))
            };
            let found = tagged.or_else(untagged).ok_or(ExtractError::NoProgram {
                looked_for: "a ```trace block, or an untagged block of schedule trace steps",
                blocks: bs.len(),
            })?;
            let parse_error = parse_trace(&found.body).err().map(|d| d.to_string());
            Ok(Candidate {
                kind: CandidateKind::Trace,
                text: found.body.clone(),
                parses: parse_error.is_none(),
                parse_error,
            })
        }
        Mode::Native => {
            let found = bs
                .iter()
                .find(|b| NATIVE_TAGS.contains(&b.tag.as_str()) && !b.body.trim().is_empty())
                .or_else(|| bs.iter().find(|b| defines_function(&b.body)))
                .map(|b| b.body.clone())
                .or_else(|| {
                    (bs.is_empty() && defines_function(answer)).then(|| answer.trim().to_string() + "\n")
                });
            found
                .map(|text| Candidate { kind: CandidateKind::Native, text, parses: true, parse_error: None })
                .ok_or(ExtractError::NoProgram {
                    looked_for: "a function in C, CUDA C or OpenCL C",
                    blocks: bs.len(),
                })
        }
    }
}
