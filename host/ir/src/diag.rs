//! Diagnostics: what every parser and verifier reports, rendered for people and for LLMs.
//!
//! A diagnostic names the source file, line and column of the offending text, says what was
//! found and what was expected, and may carry a hint ("did you mean `conv2d`?"). Spans are byte
//! offsets into the source text; line and column are computed on rendering (1-based, columns in
//! characters). Generated IR (from lowering) uses `Span::NONE` and renders without a location.
//!
//! A diagnostic stays short whatever the input: the source line it shows is a window of at most
//! [`LINE_EXCERPT_CHARS`] characters around the offending text, and every quoted piece of text in
//! its message, expected line, hint and notes (between backticks or double quotes) longer than
//! [`QUOTE_EXCERPT_CHARS`] keeps its start; each cut is marked with `…`. A leading UTF-8
//! byte-order mark is not part of a source text.

use serde::Serialize;
use std::fmt;

/// The most characters of a source line a diagnostic shows (a window around the offending text).
pub const LINE_EXCERPT_CHARS: usize = 120;

/// The most characters of one quoted piece of text (`` `...` `` or `"..."`) a diagnostic's
/// message, expected line, hint or notes show.
pub const QUOTE_EXCERPT_CHARS: usize = 200;

/// Marks where a diagnostic cut text short.
const CUT: char = '…';

/// The UTF-8 byte-order mark some editors put at the start of a file.
const BYTE_ORDER_MARK: char = '\u{feff}';

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
    /// Wraps a text, without its byte-order mark if it has one.
    pub fn new(name: impl Into<String>, text: impl Into<String>) -> SourceFile {
        let text = text.into();
        let text = match text.strip_prefix(BYTE_ORDER_MARK) {
            Some(rest) => rest.to_string(),
            None => text,
        };
        SourceFile { name: name.into(), text }
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
            Ok(text) => Ok(SourceFile::new(name, text)),
            Err(e) => {
                let valid = e.utf8_error().valid_up_to();
                let bytes = e.into_bytes();
                // Everything before `valid` is UTF-8, so the prefix converts losslessly.
                let prefix = String::from_utf8_lossy(&bytes[..valid]).into_owned();
                let src = SourceFile::new(name, prefix);
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
        self.location_spanning(offset, 1)
    }

    /// Where a byte offset lies, underlining `width` characters from it; a line longer than
    /// [`LINE_EXCERPT_CHARS`] is shown as a window around them.
    fn location_spanning(&self, offset: usize, width: usize) -> Location {
        let (line, column) = self.line_col(offset);
        let chars: Vec<char> = self.line_text(line).chars().collect();
        let at = column - 1;
        // The window starts a quarter of its width before the offending text, and ends at the
        // line's end when that is closer.
        let start = if chars.len() <= LINE_EXCERPT_CHARS {
            0
        } else {
            at.saturating_sub(LINE_EXCERPT_CHARS / 4).min(chars.len() - LINE_EXCERPT_CHARS)
        };
        let end = chars.len().min(start + LINE_EXCERPT_CHARS);
        let mut source_line = String::new();
        if start > 0 {
            source_line.push(CUT);
        }
        source_line.extend(&chars[start..end]);
        if end < chars.len() {
            source_line.push(CUT);
        }
        Location {
            file: self.name.clone(),
            line,
            column,
            source_line,
            caret: at - start + usize::from(start > 0) + 1,
            width: width.min(end.saturating_sub(at)).max(1),
        }
    }

    /// Attaches this file's location to a diagnostic that carries a span.
    pub fn locate(&self, mut d: Diagnostic) -> Diagnostic {
        if d.location.is_none() {
            if let Some(span) = d.span.filter(|s| !s.is_none()) {
                let end = (span.end as usize).min(self.text.len());
                let start = (span.start as usize).min(end);
                let text =
                    &self.text[floor_char_boundary(&self.text, start)..floor_char_boundary(&self.text, end)];
                let first_line = text.split('\n').next().unwrap_or("");
                d.location = Some(self.location_spanning(span.start as usize, first_line.chars().count()));
            } else {
                d.location = Some(Location::whole_file(&self.name));
            }
        }
        d
    }
}

/// `text` with every quoted piece longer than [`QUOTE_EXCERPT_CHARS`] cut short.
fn cut_quotes(text: String) -> String {
    let mut out = String::with_capacity(text.len().min(4 * LINE_EXCERPT_CHARS));
    let mut quote: Option<char> = None;
    let mut quoted = 0;
    for c in text.chars() {
        match quote {
            Some(q) if c == q => {
                quote = None;
                out.push(c);
            }
            Some(_) => {
                quoted += 1;
                if quoted < QUOTE_EXCERPT_CHARS {
                    out.push(c);
                } else if quoted == QUOTE_EXCERPT_CHARS {
                    out.push(CUT);
                }
            }
            None => {
                if c == '`' || c == '"' {
                    quote = Some(c);
                    quoted = 0;
                }
                out.push(c);
            }
        }
    }
    out
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
    /// The text of the offending line, shown under the message: the whole line, or a window of
    /// [`LINE_EXCERPT_CHARS`] characters around the offending text with `…` where it was cut.
    pub source_line: String,
    /// Where the underline starts in `source_line` (1-based, in characters).
    #[serde(skip)]
    pub caret: usize,
    /// How many characters to underline.
    #[serde(skip)]
    pub width: usize,
}

impl Location {
    /// A location naming only the file (line 0).
    fn whole_file(file: &str) -> Location {
        Location {
            file: file.to_string(),
            line: 0,
            column: 0,
            source_line: String::new(),
            caret: 0,
            width: 0,
        }
    }
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
            message: cut_quotes(message.into()),
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
        self.expected = Some(cut_quotes(expected.into()));
        self
    }

    pub fn with_hint(mut self, hint: impl Into<String>) -> Diagnostic {
        self.hint = Some(cut_quotes(hint.into()));
        self
    }

    pub fn with_note(mut self, note: impl Into<String>) -> Diagnostic {
        self.notes.push(cut_quotes(note.into()));
        self
    }

    /// Names the file when no finer location is known.
    pub fn with_file(mut self, file: &str) -> Diagnostic {
        self.location = Some(Location::whole_file(file));
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
                writeln!(f, "{} | {}", loc.line, loc.source_line)?;
                writeln!(
                    f,
                    "{:gutter$} | {}{}",
                    "",
                    " ".repeat(loc.caret.saturating_sub(1)),
                    "^".repeat(loc.width.max(1))
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

#[cfg(test)]
mod tests {
    use super::*;

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

    // A long line used to be shown whole, with an underline as long as the offending token.
    #[test]
    fn a_long_line_is_shown_as_a_window_with_the_caret_under_the_offending_text() {
        let line = format!("{}BAD{}", "a ".repeat(500), "b".repeat(5000));
        let src = SourceFile::new("long.ekir", format!("graph g\n{line}\n"));
        let at = 8 + 1000;
        let d = src.locate(Diagnostic::error("found `BAD`").at(Span::new(at, at + 3 + 5000)));
        let loc = d.location.clone().unwrap();
        assert_eq!((loc.line, loc.column), (2, 1001));
        assert_eq!(loc.source_line.chars().count(), LINE_EXCERPT_CHARS + 2, "{}", loc.source_line);
        assert!(loc.source_line.starts_with('…') && loc.source_line.ends_with('…'));
        let shown: Vec<char> = loc.source_line.chars().collect();
        assert_eq!(shown[loc.caret - 1..loc.caret + 2].iter().collect::<String>(), "BAD");
        assert_eq!(
            loc.caret + loc.width - 1,
            LINE_EXCERPT_CHARS + 1,
            "the underline stops at the window's end"
        );
        let text = d.to_string();
        let rendered: Vec<&str> = text.lines().collect();
        let caret_line = rendered.iter().find(|l| l.contains('^')).unwrap();
        let line_line = rendered.iter().find(|l| l.starts_with("2 |")).unwrap();
        let bad = line_line[..line_line.find("BAD").unwrap()].chars().count();
        assert_eq!(caret_line.chars().position(|c| c == '^'), Some(bad), "{text}");
    }

    // A token as long as the input used to be quoted whole in the message.
    #[test]
    fn long_quoted_text_is_cut_in_every_part_of_a_diagnostic() {
        let long = "z".repeat(10_000);
        let d = Diagnostic::error(format!("unknown operator `{long}`"))
            .with_expected(format!("string \"{long}\""))
            .with_hint(format!("`{long}` and `short`"))
            .with_note(format!("`{long}`"));
        let cut = format!("`{}…`", "z".repeat(QUOTE_EXCERPT_CHARS - 1));
        assert_eq!(d.message, format!("unknown operator {cut}"));
        assert_eq!(
            d.expected.as_deref(),
            Some(format!("string \"{}…\"", "z".repeat(QUOTE_EXCERPT_CHARS - 1)).as_str())
        );
        assert_eq!(d.hint.as_deref(), Some(format!("{cut} and `short`").as_str()));
        assert_eq!(d.notes, vec![cut]);
        let short = Diagnostic::error("expected `)`, found `relu`");
        assert_eq!(short.message, "expected `)`, found `relu`");
    }

    #[test]
    fn a_byte_order_mark_is_not_part_of_the_text() {
        let src = SourceFile::from_bytes("bom.ekir".into(), b"\xef\xbb\xbfgraph g".to_vec()).unwrap();
        assert_eq!(src.text, "graph g");
        assert_eq!(src.line_col(0), (1, 1));
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
