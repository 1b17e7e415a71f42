//! Task metadata: the header of structured comments at the top of a task's `.ekir` file.
//!
//! A task file is a header, then the canonical text of its L0 graph. Every header line reads
//! `# KEY: ...`; the keys are `task` and `provenance` (required, once each), `tolerance`
//! (optional, once) and `notes` (optional, any number of lines, joined with spaces). The
//! `task`, `provenance` and `tolerance` lines hold `name=value` fields separated by spaces; a
//! value is a bare word (no spaces), a quoted string (`"..."`, with `\"` and `\\` escapes) or a
//! list of bare words (`[mobile, aiot]`). The exact grammar is in `docs/tasks.md`.
//!
//! What it keeps true: every problem is a [`Diagnostic`] located at the offending text (file,
//! line, column), all problems of a header are reported at once, and nothing panics on any
//! input. The header ends at the first line that does not start with `#`.

use ekb_ir::diag::did_you_mean;
use ekb_ir::{Diagnostic, SourceFile, Span};
use serde::Serialize;
use std::fmt;

/// An application domain of the suite; each is evaluated on one backend.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Domain {
    /// Mobile and Personal Intelligence, evaluated on CPU/LLVM.
    Mobile,
    /// Embodied Robotics, evaluated on GPU/CUDA.
    Robotics,
    /// Smart AIoT, evaluated on GPU/OpenCL.
    Aiot,
}

/// A backend a task instance is compiled for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Backend {
    Cpu,
    Cuda,
    Opencl,
}

impl Domain {
    pub const ALL: [Domain; 3] = [Domain::Mobile, Domain::Robotics, Domain::Aiot];

    pub fn name(self) -> &'static str {
        match self {
            Domain::Mobile => "mobile",
            Domain::Robotics => "robotics",
            Domain::Aiot => "aiot",
        }
    }

    /// The backend this domain's instances run on.
    pub fn backend(self) -> Backend {
        match self {
            Domain::Mobile => Backend::Cpu,
            Domain::Robotics => Backend::Cuda,
            Domain::Aiot => Backend::Opencl,
        }
    }

    /// The domain's name as the paper writes it.
    pub fn title(self) -> &'static str {
        match self {
            Domain::Mobile => "Mobile and Personal Intelligence",
            Domain::Robotics => "Embodied Robotics",
            Domain::Aiot => "Smart AIoT",
        }
    }

    pub fn from_name(s: &str) -> Option<Domain> {
        Domain::ALL.into_iter().find(|d| d.name() == s)
    }
}

impl Backend {
    pub const ALL: [Backend; 3] = [Backend::Cpu, Backend::Cuda, Backend::Opencl];

    pub fn name(self) -> &'static str {
        match self {
            Backend::Cpu => "cpu",
            Backend::Cuda => "cuda",
            Backend::Opencl => "opencl",
        }
    }

    /// The domain whose instances run on this backend.
    pub fn domain(self) -> Domain {
        match self {
            Backend::Cpu => Domain::Mobile,
            Backend::Cuda => Domain::Robotics,
            Backend::Opencl => Domain::Aiot,
        }
    }
}

impl fmt::Display for Domain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Where the task comes from: which model, which layer, which PyTorch module it normalises.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Provenance {
    /// The model (`MobileNetV2`, `Qwen2-0.5B`).
    pub model: String,
    /// The layer inside the model, as its reference implementation names it (`features.2.conv.1.0`).
    pub layer: String,
    /// The PyTorch module or function the task normalises (`torch.nn.Conv2d`).
    pub module: String,
    /// Where the model's definition comes from (`torchvision.models.mobilenet_v2`).
    pub source: Option<String>,
}

/// A task's tolerance when it is not the evaluation protocol's default.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TolSpec {
    pub atol: f64,
    pub rtol: f64,
    /// Why a looser bound is needed (required when looser than the default).
    pub reason: Option<String>,
}

/// Everything the header says about a task.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TaskMeta {
    pub level: u8,
    pub family: String,
    /// Distinct, in [`Domain::ALL`] order whatever the order written.
    pub domains: Vec<Domain>,
    pub provenance: Provenance,
    pub tolerance: Option<TolSpec>,
    pub notes: String,
    /// Byte offset where the header ends (the start of the first line not starting with `#`).
    #[serde(skip)]
    pub header_end: usize,
}

impl TaskMeta {
    /// The task's instances: one backend per domain.
    pub fn backends(&self) -> Vec<Backend> {
        self.domains.iter().map(|d| d.backend()).collect()
    }

    /// The tolerance a payload of this task carries: the task's bound, else the protocol's
    /// default (the board applies it per output dtype, [`ekb_wire::payload::Tolerance::for_dtype`]).
    pub fn payload_tolerance(&self) -> ekb_wire::payload::Tolerance {
        self.tolerance.as_ref().map_or(ekb_deploy::build::TOLERANCE, |t| ekb_wire::payload::Tolerance {
            atol: t.atol,
            rtol: t.rtol,
        })
    }
}

/// The header keys, in the order the canonical header writes them.
pub const KEYS: [&str; 4] = ["task", "provenance", "tolerance", "notes"];
const TASK_FIELDS: [&str; 3] = ["level", "family", "domains"];
const PROVENANCE_FIELDS: [&str; 4] = ["model", "layer", "module", "source"];
const TOLERANCE_FIELDS: [&str; 3] = ["atol", "rtol", "reason"];

/// The protocol's default f32 tolerance, against which a task's bound counts as looser.
pub const DEFAULT_F32_TOL: f64 = 1e-4;

/// A field's value as written.
#[derive(Debug, Clone, PartialEq)]
enum Value {
    /// A bare word or a quoted string.
    Text(String),
    /// `[a, b]`, each item with its span.
    List(Vec<(String, Span)>),
}

#[derive(Debug, Clone)]
struct Field {
    name: String,
    name_span: Span,
    value: Value,
    value_span: Span,
}

/// One `# KEY: rest` line.
struct Line<'a> {
    key: &'a str,
    key_span: Span,
    /// The text after the colon and its byte offset in the file.
    rest: &'a str,
    rest_at: usize,
}

/// Parses the header of a task file. All problems are returned, each located in `src`.
pub fn parse_header(src: &SourceFile) -> Result<TaskMeta, Vec<Diagnostic>> {
    let mut errs = Vec::new();
    let mut lines = Vec::new();
    let mut offset = 0;
    let text = &src.text;
    while offset < text.len() && text[offset..].starts_with('#') {
        let end = text[offset..].find('\n').map_or(text.len(), |i| offset + i);
        match split_line(text, offset, end) {
            Ok(l) => lines.push(l),
            Err(d) => errs.push(d),
        }
        offset = if end < text.len() { end + 1 } else { end };
    }
    let header_end = offset;
    let mut seen: Vec<(&str, Span)> = Vec::new();
    let mut task = None;
    let mut provenance = None;
    let mut tolerance = None;
    let mut notes: Vec<&str> = Vec::new();
    for l in &lines {
        if !KEYS.contains(&l.key) {
            let mut d = Diagnostic::error(format!("unknown header key `{}`", l.key))
                .at(l.key_span)
                .with_expected(format!("one of {}", list(&KEYS)));
            if let Some(h) = did_you_mean(l.key, KEYS) {
                d = d.with_hint(h);
            }
            errs.push(d);
            continue;
        }
        if l.key != "notes" {
            if let Some((_, first)) = seen.iter().find(|(k, _)| *k == l.key) {
                let (line, _) = src.line_col(first.start as usize);
                errs.push(
                    Diagnostic::error(format!("header key `{}` given twice", l.key))
                        .at(l.key_span)
                        .with_note(format!("first given on line {line}")),
                );
                continue;
            }
            seen.push((l.key, l.key_span));
        }
        match l.key {
            "notes" => notes.push(l.rest.trim()),
            key => {
                let fields = match fields(l.rest, l.rest_at) {
                    Ok(f) => f,
                    Err(d) => {
                        errs.push(d);
                        continue;
                    }
                };
                match key {
                    "task" => task = task_line(&fields, l.key_span, &mut errs),
                    "provenance" => provenance = provenance_line(&fields, l.key_span, &mut errs),
                    _ => tolerance = tolerance_line(&fields, l.key_span, &mut errs),
                }
            }
        }
    }
    let at_graph = Span::new(header_end, (header_end + 1).min(text.len().max(header_end)));
    for (key, example, present) in [
        (
            "task",
            "# task: level=1 family=conv domains=[mobile, aiot]",
            task.is_some() || seen_key(&seen, "task"),
        ),
        (
            "provenance",
            "# provenance: model=MobileNetV2 layer=features.0.0 module=torch.nn.Conv2d",
            provenance.is_some() || seen_key(&seen, "provenance"),
        ),
    ] {
        if !present {
            errs.push(
                Diagnostic::error(format!("the task header has no `# {key}:` line"))
                    .at(at_graph)
                    .with_expected(format!("a header line such as `{example}` before the graph")),
            );
        }
    }
    if !errs.is_empty() {
        return Err(errs.into_iter().map(|d| src.locate(d)).collect());
    }
    let ((level, family, domains), provenance) =
        (task.expect("no errors, so present"), provenance.expect("no errors, so present"));
    Ok(TaskMeta { level, family, domains, provenance, tolerance, notes: notes.join(" "), header_end })
}

fn seen_key(seen: &[(&str, Span)], key: &str) -> bool {
    seen.iter().any(|(k, _)| *k == key)
}

fn list(items: &[&str]) -> String {
    items.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ")
}

/// Splits `# key: rest` (the line spans `start..end` of `text`).
fn split_line(text: &str, start: usize, end: usize) -> Result<Line<'_>, Diagnostic> {
    let line = &text[start..end];
    let after_hash = 1 + line[1..].len() - line[1..].trim_start().len();
    let body = &line[after_hash..];
    let key_len = body.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(body.len());
    let key_at = start + after_hash;
    let bad = || {
        Diagnostic::error("a task header line must read `# KEY: ...`")
            .at(Span::new(start, end.max(start + 1)))
            .with_expected(format!("a header key ({}) followed by `:`", list(&KEYS)))
            .with_hint("descriptions go in `# notes: ...` lines; the header ends where the graph starts")
    };
    if key_len == 0 || !body[key_len..].starts_with(':') {
        return Err(bad());
    }
    Ok(Line {
        key: &body[..key_len],
        key_span: Span::new(key_at, key_at + key_len),
        rest: &body[key_len + 1..],
        rest_at: key_at + key_len + 1,
    })
}

/// Splits `name=value name=value ...`; `at` is the byte offset of `rest` in the file.
fn fields(rest: &str, at: usize) -> Result<Vec<Field>, Diagnostic> {
    let bytes = rest.as_bytes();
    let mut i = 0;
    let mut out = Vec::new();
    loop {
        while i < bytes.len() && (bytes[i] == b' ' || bytes[i] == b'\t' || bytes[i] == b'\r') {
            i += 1;
        }
        if i >= bytes.len() {
            return Ok(out);
        }
        let name_start = i;
        while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
            i += 1;
        }
        if i == name_start || i >= bytes.len() || bytes[i] != b'=' {
            let end = rest[name_start..].find([' ', '\t']).map_or(rest.len(), |e| name_start + e);
            return Err(Diagnostic::error(format!(
                "expected `name=value`, found `{}`",
                &rest[name_start..end]
            ))
            .at(Span::new(at + name_start, at + end.max(name_start + 1)))
            .with_expected("fields written `name=value`, separated by spaces"));
        }
        let name = rest[name_start..i].to_string();
        let name_span = Span::new(at + name_start, at + i);
        i += 1;
        let value_start = i;
        let value = match bytes.get(i) {
            Some(b'"') => {
                let mut s = String::new();
                let mut chars = rest[i + 1..].char_indices();
                let mut closed = None;
                while let Some((j, c)) = chars.next() {
                    match c {
                        '"' => {
                            closed = Some(i + 1 + j + 1);
                            break;
                        }
                        '\\' => match chars.next() {
                            Some((_, e @ ('"' | '\\'))) => s.push(e),
                            _ => {
                                return Err(Diagnostic::error("unknown escape in a quoted header value")
                                    .at(Span::new(at + i + 1 + j, at + i + 3 + j))
                                    .with_expected("`\\\"` or `\\\\`"))
                            }
                        },
                        c => s.push(c),
                    }
                }
                let Some(end) = closed else {
                    return Err(Diagnostic::error("unterminated quoted value")
                        .at(Span::new(at + i, at + rest.len()))
                        .with_expected("a closing `\"` on the same line"));
                };
                i = end;
                Value::Text(s)
            }
            Some(b'[') => {
                let close = rest[i..].find(']').map(|c| i + c).ok_or_else(|| {
                    Diagnostic::error("unclosed list")
                        .at(Span::new(at + i, at + rest.len()))
                        .with_expected("`]` on the same line, as in `[mobile, aiot]`")
                })?;
                let mut items = Vec::new();
                let mut item_start = i + 1;
                let inner = &rest[i + 1..close];
                for part in inner.split(',').filter(|_| !inner.trim().is_empty()) {
                    let lead = part.len() - part.trim_start().len();
                    let word = part.trim();
                    let span = Span::new(at + item_start + lead, at + item_start + lead + word.len().max(1));
                    if word.is_empty() || word.contains([' ', '\t', '"', '[']) {
                        return Err(Diagnostic::error(format!("bad list item `{word}`"))
                            .at(span)
                            .with_expected("words separated by commas, as in `[mobile, aiot]`"));
                    }
                    items.push((word.to_string(), span));
                    item_start += part.len() + 1;
                }
                i = close + 1;
                Value::List(items)
            }
            Some(b' ' | b'\t' | b'\r') | None => {
                return Err(Diagnostic::error(format!("field `{name}` has no value"))
                    .at(Span::new(at + name_start, at + i))
                    .with_expected("a value right after `=` (quote values that contain spaces)"));
            }
            Some(_) => {
                while i < bytes.len() && !matches!(bytes[i], b' ' | b'\t' | b'\r') {
                    i += 1;
                }
                Value::Text(rest[value_start..i].to_string())
            }
        };
        if i < bytes.len() && !matches!(bytes[i], b' ' | b'\t' | b'\r') {
            return Err(Diagnostic::error(format!("expected a space after the value of `{name}`"))
                .at(Span::new(at + i, at + i + 1))
                .with_expected("fields separated by spaces"));
        }
        out.push(Field { name, name_span, value, value_span: Span::new(at + value_start, at + i) });
    }
}

/// Checks field names against `known` and duplicates; returns the fields by name.
fn known_fields<'f>(
    fields: &'f [Field],
    key: &str,
    known: &[&str],
    errs: &mut Vec<Diagnostic>,
) -> Vec<(&'f str, &'f Field)> {
    let mut out: Vec<(&str, &Field)> = Vec::new();
    for f in fields {
        if !known.contains(&f.name.as_str()) {
            let mut d = Diagnostic::error(format!("`# {key}:` has no field `{}`", f.name))
                .at(f.name_span)
                .with_expected(format!("one of {}", list(known)));
            if let Some(h) = did_you_mean(&f.name, known.iter().copied()) {
                d = d.with_hint(h);
            }
            errs.push(d);
        } else if out.iter().any(|(n, _)| *n == f.name) {
            errs.push(Diagnostic::error(format!("field `{}` given twice", f.name)).at(f.name_span));
        } else {
            out.push((f.name.as_str(), f));
        }
    }
    out
}

fn get<'f>(fs: &[(&str, &'f Field)], name: &str) -> Option<&'f Field> {
    fs.iter().find(|(n, _)| *n == name).map(|(_, f)| *f)
}

/// A required text field, or a diagnostic at the key.
fn text(
    fs: &[(&str, &Field)],
    name: &str,
    key: &str,
    key_span: Span,
    example: &str,
    errs: &mut Vec<Diagnostic>,
) -> Option<(String, Span)> {
    match get(fs, name) {
        None => {
            errs.push(
                Diagnostic::error(format!("`# {key}:` needs a `{name}=` field"))
                    .at(key_span)
                    .with_expected(format!("`{name}={example}`")),
            );
            None
        }
        Some(Field { value: Value::Text(s), value_span, .. }) if !s.is_empty() => {
            Some((s.clone(), *value_span))
        }
        Some(f) => {
            errs.push(
                Diagnostic::error(format!("field `{name}` needs a word or a quoted string"))
                    .at(f.value_span)
                    .with_expected(format!("`{name}={example}`")),
            );
            None
        }
    }
}

fn task_line(
    fields: &[Field],
    key_span: Span,
    errs: &mut Vec<Diagnostic>,
) -> Option<(u8, String, Vec<Domain>)> {
    let n = errs.len();
    let fs = known_fields(fields, "task", &TASK_FIELDS, errs);
    let level = text(&fs, "level", "task", key_span, "1", errs).and_then(|(s, span)| match s.parse::<u8>() {
        Ok(l @ 1..=3) => Some(l),
        _ => {
            errs.push(
                Diagnostic::error(format!("level `{s}` is not a suite level"))
                    .at(span)
                    .with_expected("1 (basic compute patterns), 2 (composed graphs) or 3 (model graphs)"),
            );
            None
        }
    });
    let family = text(&fs, "family", "task", key_span, "conv", errs).and_then(|(s, span)| {
        if s.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_') {
            Some(s)
        } else {
            errs.push(
                Diagnostic::error(format!("family `{s}` is not a lowercase identifier"))
                    .at(span)
                    .with_expected("letters a-z, digits and `_`, as in `conv` or `softmax`"),
            );
            None
        }
    });
    let domains = match get(&fs, "domains") {
        None => {
            errs.push(
                Diagnostic::error("`# task:` needs a `domains=` field")
                    .at(key_span)
                    .with_expected("`domains=[mobile, robotics, aiot]` (one or more)"),
            );
            None
        }
        Some(Field { value: Value::List(items), value_span, .. }) => {
            let mut ds: Vec<Domain> = Vec::new();
            for (w, span) in items {
                match Domain::from_name(w) {
                    Some(d) if ds.contains(&d) => {
                        errs.push(Diagnostic::error(format!("domain `{w}` listed twice")).at(*span));
                    }
                    Some(d) => ds.push(d),
                    None => {
                        let names = Domain::ALL.map(Domain::name);
                        let mut d = Diagnostic::error(format!("unknown domain `{w}`"))
                            .at(*span)
                            .with_expected(format!("one of {}", list(&names)));
                        if let Some(h) = did_you_mean(w, names) {
                            d = d.with_hint(h);
                        }
                        errs.push(d);
                    }
                }
            }
            if items.is_empty() {
                errs.push(
                    Diagnostic::error("a task needs at least one domain")
                        .at(*value_span)
                        .with_expected("`[mobile]`, `[robotics, aiot]`, ..."),
                );
            }
            ds.sort();
            Some(ds)
        }
        Some(f) => {
            errs.push(
                Diagnostic::error("`domains` needs a list")
                    .at(f.value_span)
                    .with_expected("`domains=[mobile, aiot]`"),
            );
            None
        }
    };
    if errs.len() > n {
        return None;
    }
    Some((level?, family?, domains?))
}

fn provenance_line(fields: &[Field], key_span: Span, errs: &mut Vec<Diagnostic>) -> Option<Provenance> {
    let n = errs.len();
    let fs = known_fields(fields, "provenance", &PROVENANCE_FIELDS, errs);
    let model = text(&fs, "model", "provenance", key_span, "MobileNetV2", errs);
    let layer = text(&fs, "layer", "provenance", key_span, "features.0.0", errs);
    let module = text(&fs, "module", "provenance", key_span, "torch.nn.Conv2d", errs);
    let source = match get(&fs, "source") {
        Some(_) => {
            Some(text(&fs, "source", "provenance", key_span, "torchvision.models.mobilenet_v2", errs)?)
        }
        None => None,
    };
    if errs.len() > n {
        return None;
    }
    Some(Provenance { model: model?.0, layer: layer?.0, module: module?.0, source: source.map(|s| s.0) })
}

fn tolerance_line(fields: &[Field], key_span: Span, errs: &mut Vec<Diagnostic>) -> Option<TolSpec> {
    let n = errs.len();
    let fs = known_fields(fields, "tolerance", &TOLERANCE_FIELDS, errs);
    let mut num = |name: &str| {
        text(&fs, name, "tolerance", key_span, "1e-4", errs).and_then(|(s, span)| match s.parse::<f64>() {
            Ok(v) if v.is_finite() && v >= 0.0 => Some(v),
            _ => {
                errs.push(
                    Diagnostic::error(format!("`{name}` must be a finite number >= 0, found `{s}`"))
                        .at(span)
                        .with_expected("a number such as `1e-4`"),
                );
                None
            }
        })
    };
    let (atol, rtol) = (num("atol"), num("rtol"));
    let reason = get(&fs, "reason").and_then(|_| text(&fs, "reason", "tolerance", key_span, "\"...\"", errs));
    if let (Some(a), Some(r)) = (atol, rtol) {
        if (a > DEFAULT_F32_TOL || r > DEFAULT_F32_TOL) && reason.is_none() {
            errs.push(
                Diagnostic::error("a tolerance looser than the protocol's default needs a reason")
                    .at(key_span)
                    .with_expected(format!(
                        "`reason=\"...\"` saying why atol/rtol above {DEFAULT_F32_TOL:e} is justified"
                    )),
            );
        }
    }
    if errs.len() > n {
        return None;
    }
    Some(TolSpec { atol: atol?, rtol: rtol?, reason: reason.map(|r| r.0) })
}

/// The canonical header text of `meta` (what `ekb tasks fmt` writes): one line per key, fields
/// in a fixed order, values quoted only where they must be.
pub fn print_header(meta: &TaskMeta) -> String {
    let domains: Vec<&str> = meta.domains.iter().map(|d| d.name()).collect();
    let mut s =
        format!("# task: level={} family={} domains=[{}]\n", meta.level, meta.family, domains.join(", "));
    let p = &meta.provenance;
    s.push_str(&format!(
        "# provenance: model={} layer={} module={}",
        word(&p.model),
        word(&p.layer),
        word(&p.module)
    ));
    if let Some(src) = &p.source {
        s.push_str(&format!(" source={}", word(src)));
    }
    s.push('\n');
    if let Some(t) = &meta.tolerance {
        s.push_str(&format!("# tolerance: atol={:e} rtol={:e}", t.atol, t.rtol));
        if let Some(r) = &t.reason {
            s.push_str(&format!(" reason={}", quote(r)));
        }
        s.push('\n');
    }
    if !meta.notes.is_empty() {
        s.push_str(&wrap_notes(&meta.notes));
    }
    s
}

/// A value as a bare word when it is one, else quoted.
fn word(s: &str) -> String {
    let bare = !s.is_empty() && !s.contains([' ', '\t', '"', '[']) && !s.starts_with('"');
    if bare {
        s.to_string()
    } else {
        quote(s)
    }
}

fn quote(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

/// `# notes:` lines of at most about 100 characters.
fn wrap_notes(notes: &str) -> String {
    let mut out = String::new();
    let mut line = String::new();
    for w in notes.split_whitespace() {
        if !line.is_empty() && line.len() + 1 + w.len() > 92 {
            out.push_str(&format!("# notes: {line}\n"));
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(w);
    }
    if !line.is_empty() {
        out.push_str(&format!("# notes: {line}\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(text: &str) -> Result<TaskMeta, Vec<Diagnostic>> {
        parse_header(&SourceFile::new("t.ekir", format!("{text}graph t(x: f32[2]) -> (y: f32[2]) {{\n")))
    }

    #[test]
    fn a_full_header_parses_with_quoted_values_and_joined_notes() {
        let m = header(
            "# task: level=2 family=conv_bn domains=[robotics, mobile]\n\
             # provenance: model=\"Monodepth2 (ResNet-18)\" layer=\"convs[(\\\"upconv\\\", 0, 1)]\" module=torch.nn.ELU source=nianticlabs/monodepth2\n\
             # tolerance: atol=2e-4 rtol=1e-4 reason=\"sum over 4608 products\"\n\
             # notes: first line\n# notes: second line\n",
        )
        .unwrap();
        assert_eq!((m.level, m.family.as_str()), (2, "conv_bn"));
        assert_eq!(m.domains, [Domain::Mobile, Domain::Robotics], "kept in canonical order");
        assert_eq!(m.backends(), [Backend::Cpu, Backend::Cuda]);
        assert_eq!(m.provenance.model, "Monodepth2 (ResNet-18)");
        assert_eq!(m.provenance.layer, "convs[(\"upconv\", 0, 1)]");
        assert_eq!(m.provenance.source.as_deref(), Some("nianticlabs/monodepth2"));
        assert_eq!(
            m.tolerance,
            Some(TolSpec { atol: 2e-4, rtol: 1e-4, reason: Some("sum over 4608 products".into()) })
        );
        assert_eq!(m.notes, "first line second line");
        let text = print_header(&m);
        let mut back = header(&text).unwrap();
        assert_eq!(back.header_end, text.len());
        back.header_end = m.header_end;
        assert_eq!(back, m, "the printed header parses back to the same metadata:\n{text}");
    }

    fn errors(text: &str) -> Vec<(usize, usize, String)> {
        header(text)
            .unwrap_err()
            .into_iter()
            .map(|d| {
                let l = d.location.clone().unwrap();
                (l.line, l.column, d.to_string())
            })
            .collect()
    }

    #[test]
    fn unknown_keys_fields_and_domains_are_located_with_hints() {
        let e = errors(
            "# task: level=1 famly=conv domains=[mobile, aoit]\n# provenanc: model=x layer=y module=z\n",
        );
        let (l, c, m) = &e[0];
        assert_eq!((*l, *c), (1, 17), "{m}");
        assert!(m.contains("`# task:` has no field `famly`") && m.contains("did you mean `family`?"), "{m}");
        assert!(e.iter().any(|(l, c, m)| (*l, *c) == (1, 45) && m.contains("did you mean `aiot`?")), "{e:?}");
        assert!(
            e.iter().any(|(l, c, m)| (*l, *c) == (2, 3) && m.contains("did you mean `provenance`?")),
            "{e:?}"
        );
        assert!(e.iter().any(|(_, _, m)| m.contains("no `# provenance:` line")), "{e:?}");
    }

    #[test]
    fn bad_values_and_missing_fields_are_reported_together() {
        let e = errors(
            "# task: level=4 family=Conv domains=[]\n# provenance: model=m layer=\"unterminated\n# tolerance: atol=1e-3 rtol=-1\n",
        );
        let msgs: Vec<&str> = e.iter().map(|(_, _, m)| m.as_str()).collect();
        assert!(msgs.iter().any(|m| m.contains("level `4` is not a suite level")), "{msgs:?}");
        assert!(msgs.iter().any(|m| m.contains("family `Conv`")), "{msgs:?}");
        assert!(msgs.iter().any(|m| m.contains("at least one domain")), "{msgs:?}");
        assert!(e.iter().any(|(l, c, m)| (*l, *c) == (2, 29) && m.contains("unterminated")), "{e:?}");
        assert!(
            msgs.iter().any(|m| m.contains("`rtol` must be a finite number >= 0, found `-1`")),
            "{msgs:?}"
        );
    }

    #[test]
    fn a_looser_tolerance_needs_a_reason_and_keys_are_given_once() {
        let e = errors(
            "# task: level=1 family=x domains=[mobile]\n# provenance: model=m layer=l module=m\n# tolerance: atol=1e-3 rtol=1e-4\n# task: level=1 family=y domains=[aiot]\n",
        );
        assert_eq!(e.len(), 2, "{e:?}");
        assert!(e[0].2.contains("needs a reason") && e[0].0 == 3, "{e:?}");
        assert!(
            e[1].2.contains("given twice") && e[1].0 == 4 && e[1].2.contains("first given on line 1"),
            "{e:?}"
        );
    }

    proptest::proptest! {
        /// Any text, header-like or not, gives metadata or located diagnostics, never a panic.
        #[test]
        fn any_header_text_is_parsed_or_diagnosed(
            lines in proptest::collection::vec(
                proptest::prop_oneof![
                    "# (task|provenance|tolerance|notes|tsk): ?[ a-z=\\[\\],\"\\\\0-9.é-]{0,40}",
                    "#[^\n]{0,30}",
                ],
                0..6,
            )
        ) {
            let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
            match header(&text) {
                Ok(m) => proptest::prop_assert!(!m.domains.is_empty() && (1..=3).contains(&m.level)),
                Err(ds) => proptest::prop_assert!(ds.iter().all(|d| d.location.as_ref().is_some_and(|l| l.line >= 1))),
            }
        }
    }

    #[test]
    fn free_comments_and_missing_headers_are_errors() {
        let e = errors("# Depthwise convolution of MobileNetV2\n");
        assert!(e[0].2.contains("must read `# KEY: ...`") && e[0].0 == 1, "{e:?}");
        let e = errors("");
        assert_eq!(e.len(), 2, "{e:?}");
        assert!(e.iter().all(|(l, _, _)| *l == 1), "reported where the graph starts: {e:?}");
        let e = errors(
            "# task: level=1 family=x domains=[mobile, mobile] extra\n# provenance: layer=l module=m\n",
        );
        assert!(e.iter().any(|(_, _, m)| m.contains("expected `name=value`, found `extra`")), "{e:?}");
        let e = errors("# task: level=1 family=x domains=[mobile, mobile]\n# provenance: layer=l module=m\n");
        assert!(e.iter().any(|(_, _, m)| m.contains("domain `mobile` listed twice")), "{e:?}");
        assert!(e.iter().any(|(l, _, m)| *l == 2 && m.contains("needs a `model=` field")), "{e:?}");
    }
}
