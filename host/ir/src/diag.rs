//! Diagnostics: what every parser and verifier reports, rendered for people and for LLMs.
//!
//! A diagnostic names the source file, line and column of the offending text, says what was
//! found and what was expected, and may carry a hint ("did you mean `conv2d`?"). Spans are byte
//! offsets into the source text; line and column are computed on rendering (1-based, columns in
//! characters). Generated IR (from lowering) uses `Span::NONE` and renders without a location.

use serde::Serialize;
use std::fmt;

/// A half-open byte range `[start, end)` in one source text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize)]
pub struct Span {
    pub start: u32,
    pub end: u32,
}

impl Span {
    /// The span of generated IR that has no source text.
    pub const NONE: Span = Span { start: u32::MAX, end: u32::MAX };

    pub fn new(start: usize, end: usize) -> Span {
        Span { start: start as u32, end: end as u32 }
    }

    pub fn is_none(&self) -> bool {
        self.start == u32::MAX
    }

    /// The smallest span covering both.
    pub fn to(self, other: Span) -> Span {
        if self.is_none() {
            return other;
        }
        if other.is_none() {
            return self;
        }
        Span { start: self.start.min(other.start), end: self.end.max(other.end) }
    }
}

/// A named source text: a file read from disk, or a string given on the command line.
#[derive(Debug, Clone)]
pub struct SourceFile {
    pub name: String,
    pub text: String,
}

impl SourceFile {
    pub fn new(name: impl Into<String>, text: impl Into<String>) -> SourceFile {
        SourceFile { name: name.into(), text: text.into() }
    }

    /// Reads a file; bytes that are not UTF-8 become a diagnostic naming the line and column of
    /// the first bad byte, never a panic.
    pub fn read(path: &std::path::Path) -> Result<SourceFile, Diagnostic> {
        let name = path.display().to_string();
        let bytes = std::fs::read(path)
            .map_err(|e| Diagnostic::error(format!("cannot read `{name}`: {e}")).with_file(&name))?;
        Self::from_bytes(name, bytes)
    }

    /// Checks UTF-8 and wraps; see [`SourceFile::read`].
    pub fn from_bytes(name: String, bytes: Vec<u8>) -> Result<SourceFile, Diagnostic> {
        match String::from_utf8(bytes) {
            Ok(text) => Ok(SourceFile { name, text }),
            Err(e) => {
                let valid = e.utf8_error().valid_up_to();
                let bytes = e.into_bytes();
                // Everything before `valid` is UTF-8, so the prefix converts losslessly.
                let prefix = String::from_utf8_lossy(&bytes[..valid]).into_owned();
                let src = SourceFile { name, text: prefix };
                let mut d = Diagnostic::error(format!(
                    "the file is not valid UTF-8: byte 0x{:02x} at offset {valid}",
                    bytes[valid]
                ))
                .with_expected("IR text in UTF-8");
                d.location = Some(src.location(valid));
                Err(d)
            }
        }
    }

    /// 1-based line and column (in characters) of a byte offset.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.text.len());
        let before = &self.text[..floor_char_boundary(&self.text, offset)];
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let col = before[line_start..].chars().count() + 1;
        (line, col)
    }

    /// The full text of the 1-based line.
    pub fn line_text(&self, line: usize) -> &str {
        self.text.lines().nth(line.saturating_sub(1)).unwrap_or("")
    }

    /// Where a byte offset lies, with the line's text, for rendering.
    pub fn location(&self, offset: usize) -> Location {
        let (line, column) = self.line_col(offset);
        Location {
            file: self.name.clone(),
            line,
            column,
            source_line: self.line_text(line).to_string(),
            width: 1,
        }
    }

    /// Attaches this file's location to a diagnostic that carries a span.
    pub fn locate(&self, mut d: Diagnostic) -> Diagnostic {
        if d.location.is_none() {
            if let Some(span) = d.span.filter(|s| !s.is_none()) {
                let mut loc = self.location(span.start as usize);
                let end = (span.end as usize).min(self.text.len());
                let start = (span.start as usize).min(end);
                let text =
                    &self.text[floor_char_boundary(&self.text, start)..floor_char_boundary(&self.text, end)];
                let first_line = text.split('\n').next().unwrap_or("");
                loc.width = first_line.chars().count().max(1);
                d.location = Some(loc);
            } else {
                d.location = Some(Location {
                    file: self.name.clone(),
                    line: 0,
                    column: 0,
                    source_line: String::new(),
                    width: 0,
                });
            }
        }
        d
    }
}

fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
}

/// A resolved source position (line 0 means "the whole file").
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Location {
    pub file: String,
    pub line: usize,
    pub column: usize,
    /// The text of the offending line, shown under the message.
    pub source_line: String,
    /// How many characters to underline.
    #[serde(skip)]
    pub width: usize,
}

/// One finding of a parser, verifier or interpreter. Boxed so that `Result<T, Diagnostic>` stays
/// one pointer wide on the success path; fields are reached through `Deref`
/// (`d.message`, `d.hint`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(transparent)]
pub struct Diagnostic(Box<DiagnosticData>);

/// The contents of a [`Diagnostic`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DiagnosticData {
    pub severity: Severity,
    pub message: String,
    #[serde(skip)]
    pub span: Option<Span>,
    pub location: Option<Location>,
    /// What the tool expected to find instead.
    pub expected: Option<String>,
    /// A suggestion, e.g. "did you mean `conv2d`?".
    pub hint: Option<String>,
    /// Further context, one line each.
    pub notes: Vec<String>,
}

impl Diagnostic {
    pub fn error(message: impl Into<String>) -> Diagnostic {
        Diagnostic(Box::new(DiagnosticData {
            severity: Severity::Error,
            message: message.into(),
            span: None,
            location: None,
            expected: None,
            hint: None,
            notes: Vec::new(),
        }))
    }

    pub fn warning(message: impl Into<String>) -> Diagnostic {
        let mut d = Diagnostic::error(message);
        d.severity = Severity::Warning;
        d
    }

    pub fn at(mut self, span: Span) -> Diagnostic {
        if !span.is_none() {
            self.span = Some(span);
        }
        self
    }

    pub fn with_expected(mut self, expected: impl Into<String>) -> Diagnostic {
        self.expected = Some(expected.into());
        self
    }

    pub fn with_hint(mut self, hint: impl Into<String>) -> Diagnostic {
        self.hint = Some(hint.into());
        self
    }

    pub fn with_note(mut self, note: impl Into<String>) -> Diagnostic {
        self.notes.push(note.into());
        self
    }

    /// Names the file when no finer location is known.
    pub fn with_file(mut self, file: &str) -> Diagnostic {
        self.location = Some(Location {
            file: file.to_string(),
            line: 0,
            column: 0,
            source_line: String::new(),
            width: 0,
        });
        self
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

/// A "did you mean" hint: the closest candidate within a small edit distance, if any.
pub fn did_you_mean<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<String> {
    let lower = word.to_ascii_lowercase();
    let mut best: Option<(usize, &str)> = None;
    for c in candidates {
        let d = edit_distance(&lower, &c.to_ascii_lowercase());
        if best.is_none_or(|(bd, _)| d < bd) {
            best = Some((d, c));
        }
    }
    let limit = (word.chars().count() / 3).max(1) + 1;
    best.filter(|&(d, _)| d <= limit).map(|(_, c)| format!("did you mean `{c}`?"))
}

/// Levenshtein distance over characters.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, ca) in a.chars().enumerate() {
        cur[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

impl std::ops::Deref for Diagnostic {
    type Target = DiagnosticData;
    fn deref(&self) -> &DiagnosticData {
        &self.0
    }
}

impl std::ops::DerefMut for Diagnostic {
    fn deref_mut(&mut self) -> &mut DiagnosticData {
        &mut self.0
    }
}

impl fmt::Display for Diagnostic {
    /// Renders like a compiler: `error: msg`, ` --> file:line:col`, the line, a caret, then
    /// `= expected:`, `= hint:` and notes.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sev = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        writeln!(f, "{sev}: {}", self.message)?;
        if let Some(loc) = &self.location {
            if loc.line == 0 {
                writeln!(f, "  --> {}", loc.file)?;
            } else {
                let gutter = loc.line.to_string().len();
                writeln!(f, "{:gutter$}--> {}:{}:{}", "", loc.file, loc.line, loc.column)?;
                writeln!(f, "{:gutter$} |", "")?;
                let (shown, column, width) = shown_line(&loc.source_line, loc.column, loc.width.max(1));
                writeln!(f, "{} | {shown}", loc.line)?;
                writeln!(
                    f,
                    "{:gutter$} | {}{}",
                    "",
                    " ".repeat(column.saturating_sub(1)),
                    "^".repeat(width)
                )?;
            }
        }
        if let Some(e) = &self.expected {
            writeln!(f, "  = expected: {e}")?;
        }
        if let Some(h) = &self.hint {
            writeln!(f, "  = hint: {h}")?;
        }
        for n in &self.notes {
            writeln!(f, "  = note: {n}")?;
        }
        Ok(())
    }
}

impl std::error::Error for Diagnostic {}

/// The most characters of a source line a rendered diagnostic shows.
const MAX_SHOWN: usize = 120;

/// The part of `line` to show under a message, with the 1-based column and the underline
/// width in it: the whole line when it is short, else a window of [`MAX_SHOWN`] characters around
/// `column` with `...` where it was cut (a generated line can be megabytes long).
fn shown_line(line: &str, column: usize, width: usize) -> (String, usize, usize) {
    let chars: Vec<char> = line.chars().collect();
    if chars.len() <= MAX_SHOWN {
        return (line.to_string(), column, width);
    }
    let at = column.saturating_sub(1).min(chars.len());
    let end = (at.saturating_sub(MAX_SHOWN / 2) + MAX_SHOWN).min(chars.len());
    let start = end - MAX_SHOWN;
    let cut = if start > 0 { "..." } else { "" };
    let text = format!(
        "{cut}{}{}",
        chars[start..end].iter().collect::<String>(),
        if end < chars.len() { "..." } else { "" }
    );
    (text, at - start + cut.len() + 1, width.min(end.saturating_sub(at)).max(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_line_is_shown_as_a_window_around_the_column() {
        let text = format!("{}y{}", "a".repeat(5000), "b".repeat(5000));
        let src = SourceFile::new("long.ekl1", text);
        let d = src.locate(Diagnostic::error("here").at(Span::new(5000, 5001)));
        let shown = d.to_string();
        let lines: Vec<&str> = shown.lines().collect();
        assert!(lines.iter().all(|l| l.chars().count() < MAX_SHOWN + 20), "{shown}");
        let (code, caret) = (lines[3], lines[4]);
        assert!(code.contains("...a") && code.ends_with("b..."), "{code}");
        assert_eq!(code.find('y'), caret.find('^'), "{shown}");
        assert!(lines[1].contains("long.ekl1:1:5001"), "{shown}");
        // Short lines are shown whole.
        let short = SourceFile::new("s", "abc y").locate(Diagnostic::error("here").at(Span::new(4, 5)));
        assert!(short.to_string().contains("1 | abc y\n  |     ^\n"), "{short}");
    }

    #[test]
    fn line_and_column_are_one_based_and_count_characters() {
        let src = SourceFile::new("t.ekir", "ab\ncé d\n");
        assert_eq!(src.line_col(0), (1, 1));
        assert_eq!(src.line_col(3), (2, 1));
        // 'é' is two bytes: byte 6 is the space after it, the third character.
        assert_eq!(src.line_col(6), (2, 3));
    }

    #[test]
    fn rendering_shows_file_line_caret_and_hint() {
        let src = SourceFile::new("g.ekir", "graph g() {\n  %0 = conv2D(x)\n}\n");
        let d = src.locate(
            Diagnostic::error("unknown operator `conv2D`")
                .at(Span::new(19, 25))
                .with_hint("did you mean `conv2d`?"),
        );
        let text = d.to_string();
        assert!(text.contains("--> g.ekir:2:8"), "{text}");
        assert!(text.contains("2 |   %0 = conv2D(x)"), "{text}");
        assert!(text.contains("^^^^^^"), "{text}");
        assert!(text.contains("hint: did you mean `conv2d`?"), "{text}");
    }

    #[test]
    fn did_you_mean_finds_close_names_only() {
        let ops = ["conv2d", "relu", "softmax"];
        assert_eq!(did_you_mean("conv2D", ops).as_deref(), Some("did you mean `conv2d`?"));
        assert_eq!(did_you_mean("sofmax", ops).as_deref(), Some("did you mean `softmax`?"));
        assert_eq!(did_you_mean("transpose", ops), None);
    }

    #[test]
    fn non_utf8_input_is_a_diagnostic_with_position() {
        let d = SourceFile::from_bytes("bad.ekir".into(), b"graph g\n  \xff x".to_vec()).unwrap_err();
        let loc = d.location.clone().unwrap();
        assert_eq!((loc.line, loc.column), (2, 3));
        assert!(d.message.contains("0xff"));
    }
}
