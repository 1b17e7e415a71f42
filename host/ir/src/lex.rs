//! The lexer shared by the L0 and L1 text forms.
//!
//! Tokens: identifiers (`relu`, `k0`, `f32`), value names (`%0`, `%h1`), integer and float
//! literals (a literal is a float when it has a `.` or an exponent; a leading `-` is a separate
//! token), strings (`"..."`, no escapes but `\"` and `\\`), punctuation, and `#` comments to the
//! end of the line. Every token carries its byte span. Bad characters are diagnostics naming the
//! character, never panics.

use crate::diag::{Diagnostic, Span};

#[derive(Debug, Clone, PartialEq)]
pub enum Tok {
    Ident(String),
    /// `%name`; the text includes the `%`.
    Value(String),
    Int(i64),
    Float(f64),
    Str(String),
    LParen,
    RParen,
    LBracket,
    RBracket,
    LBrace,
    RBrace,
    Comma,
    Colon,
    Semi,
    Eq,
    Arrow,
    DotDot,
    Plus,
    Minus,
    Star,
    Slash,
    Percent,
    Lt,
    Le,
    Gt,
    Ge,
    EqEq,
    Ne,
    AndAnd,
    OrOr,
    Bang,
    Newline,
    Eof,
}

impl Tok {
    /// How the token reads in a diagnostic ("found `)`").
    pub fn describe(&self) -> String {
        match self {
            Tok::Ident(s) | Tok::Value(s) => format!("`{s}`"),
            Tok::Int(i) => format!("integer `{i}`"),
            Tok::Float(x) => format!("number `{x}`"),
            Tok::Str(s) => format!("string \"{s}\""),
            Tok::Newline => "end of line".into(),
            Tok::Eof => "end of file".into(),
            other => format!("`{}`", other.punct()),
        }
    }

    fn punct(&self) -> &'static str {
        match self {
            Tok::LParen => "(",
            Tok::RParen => ")",
            Tok::LBracket => "[",
            Tok::RBracket => "]",
            Tok::LBrace => "{",
            Tok::RBrace => "}",
            Tok::Comma => ",",
            Tok::Colon => ":",
            Tok::Semi => ";",
            Tok::Eq => "=",
            Tok::Arrow => "->",
            Tok::DotDot => "..",
            Tok::Plus => "+",
            Tok::Minus => "-",
            Tok::Star => "*",
            Tok::Slash => "/",
            Tok::Percent => "%",
            Tok::Lt => "<",
            Tok::Le => "<=",
            Tok::Gt => ">",
            Tok::Ge => ">=",
            Tok::EqEq => "==",
            Tok::Ne => "!=",
            Tok::AndAnd => "&&",
            Tok::OrOr => "||",
            Tok::Bang => "!",
            _ => "",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Token {
    pub tok: Tok,
    pub span: Span,
}

/// Splits text into tokens. Newlines are kept as tokens because both text forms are
/// line-oriented (one statement per line, `;` also separates); consecutive newlines collapse.
pub fn lex(text: &str) -> Result<Vec<Token>, Diagnostic> {
    let bytes = text.as_bytes();
    let mut out: Vec<Token> = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        let start = i;
        match c {
            b' ' | b'\t' | b'\r' => i += 1,
            b'\n' => {
                i += 1;
                if !matches!(out.last(), Some(Token { tok: Tok::Newline, .. }) | None) {
                    out.push(Token { tok: Tok::Newline, span: Span::new(start, i) });
                }
            }
            b'#' => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
            }
            b'a'..=b'z' | b'A'..=b'Z' | b'_' => {
                i = ident_end(bytes, i);
                out.push(Token { tok: Tok::Ident(text[start..i].to_string()), span: Span::new(start, i) });
            }
            b'%' if i + 1 < bytes.len() && is_ident_byte(bytes[i + 1]) => {
                i = ident_end(bytes, i + 1);
                out.push(Token { tok: Tok::Value(text[start..i].to_string()), span: Span::new(start, i) });
            }
            b'0'..=b'9' => {
                let (tok, end) = number(text, i)?;
                i = end;
                out.push(Token { tok, span: Span::new(start, i) });
            }
            b'"' => {
                i += 1;
                let mut s = String::new();
                loop {
                    match bytes.get(i) {
                        None | Some(b'\n') => {
                            return Err(Diagnostic::error("unterminated string")
                                .at(Span::new(start, i))
                                .with_expected("a closing `\"` on the same line"))
                        }
                        Some(b'"') => {
                            i += 1;
                            break;
                        }
                        Some(b'\\') if matches!(bytes.get(i + 1), Some(b'"') | Some(b'\\')) => {
                            s.push(bytes[i + 1] as char);
                            i += 2;
                        }
                        Some(_) => {
                            let ch = text[i..].chars().next().unwrap_or('\u{fffd}');
                            s.push(ch);
                            i += ch.len_utf8();
                        }
                    }
                }
                out.push(Token { tok: Tok::Str(s), span: Span::new(start, i) });
            }
            _ => {
                let two = if i + 1 < bytes.len() { &bytes[i..i + 2] } else { &bytes[i..i + 1] };
                let (tok, len) = match two {
                    b"->" => (Tok::Arrow, 2),
                    b".." => (Tok::DotDot, 2),
                    b"<=" => (Tok::Le, 2),
                    b">=" => (Tok::Ge, 2),
                    b"==" => (Tok::EqEq, 2),
                    b"!=" => (Tok::Ne, 2),
                    b"&&" => (Tok::AndAnd, 2),
                    b"||" => (Tok::OrOr, 2),
                    _ => {
                        match c {
                            b'(' => (Tok::LParen, 1),
                            b')' => (Tok::RParen, 1),
                            b'[' => (Tok::LBracket, 1),
                            b']' => (Tok::RBracket, 1),
                            b'{' => (Tok::LBrace, 1),
                            b'}' => (Tok::RBrace, 1),
                            b',' => (Tok::Comma, 1),
                            b':' => (Tok::Colon, 1),
                            b';' => (Tok::Semi, 1),
                            b'=' => (Tok::Eq, 1),
                            b'+' => (Tok::Plus, 1),
                            b'-' => (Tok::Minus, 1),
                            b'*' => (Tok::Star, 1),
                            b'/' => (Tok::Slash, 1),
                            b'%' => (Tok::Percent, 1),
                            b'<' => (Tok::Lt, 1),
                            b'>' => (Tok::Gt, 1),
                            b'!' => (Tok::Bang, 1),
                            _ => {
                                let ch = text[i..].chars().next().unwrap_or('\u{fffd}');
                                return Err(Diagnostic::error(format!("unexpected character `{ch}`"))
                                .at(Span::new(i, i + ch.len_utf8()))
                                .with_expected("an identifier, a number, or punctuation such as `(` `)` `[` `]` `,` `=`"));
                            }
                        }
                    }
                };
                i += len;
                out.push(Token { tok, span: Span::new(start, i) });
            }
        }
    }
    out.push(Token { tok: Tok::Eof, span: Span::new(bytes.len(), bytes.len()) });
    Ok(out)
}

fn is_ident_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

fn ident_end(bytes: &[u8], mut i: usize) -> usize {
    while i < bytes.len() && is_ident_byte(bytes[i]) {
        i += 1;
    }
    i
}

/// Reads a decimal literal: digits, then optionally `.digits` (not `..`, the range token) and an
/// exponent. Out-of-range integers are diagnostics.
fn number(text: &str, start: usize) -> Result<(Tok, usize), Diagnostic> {
    let bytes = text.as_bytes();
    let mut i = start;
    let digits = |mut i: usize| {
        while i < bytes.len() && (bytes[i].is_ascii_digit() || bytes[i] == b'_') {
            i += 1;
        }
        i
    };
    i = digits(i);
    let mut is_float = false;
    if i + 1 < bytes.len() && bytes[i] == b'.' && bytes[i + 1] != b'.' {
        is_float = true;
        i = digits(i + 1);
    } else if i + 1 == bytes.len() && bytes[i] == b'.' {
        is_float = true;
        i += 1;
    }
    if i < bytes.len() && (bytes[i] == b'e' || bytes[i] == b'E') {
        let mut j = i + 1;
        if j < bytes.len() && (bytes[j] == b'+' || bytes[j] == b'-') {
            j += 1;
        }
        if j < bytes.len() && bytes[j].is_ascii_digit() {
            is_float = true;
            i = digits(j);
        }
    }
    if i < bytes.len() && is_ident_byte(bytes[i]) {
        let end = ident_end(bytes, i);
        return Err(Diagnostic::error(format!("malformed number `{}`", &text[start..end]))
            .at(Span::new(start, end))
            .with_expected("a decimal number such as `3`, `0.5` or `1e-5`"));
    }
    let lit: String = text[start..i].chars().filter(|&c| c != '_').collect();
    let span = Span::new(start, i);
    if is_float {
        lit.parse::<f64>()
            .map(|x| (Tok::Float(x), i))
            .map_err(|_| Diagnostic::error(format!("malformed number `{lit}`")).at(span))
    } else {
        lit.parse::<i64>().map(|x| (Tok::Int(x), i)).map_err(|_| {
            Diagnostic::error(format!("integer `{lit}` is out of range"))
                .at(span)
                .with_expected("an integer between -9223372036854775808 and 9223372036854775807")
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(s: &str) -> Vec<Tok> {
        lex(s).unwrap().into_iter().map(|t| t.tok).collect()
    }

    #[test]
    fn numbers_ranges_and_values() {
        assert_eq!(
            toks("for i in 0..56 { %0 = 1e-5 2.5 }"),
            vec![
                Tok::Ident("for".into()),
                Tok::Ident("i".into()),
                Tok::Ident("in".into()),
                Tok::Int(0),
                Tok::DotDot,
                Tok::Int(56),
                Tok::LBrace,
                Tok::Value("%0".into()),
                Tok::Eq,
                Tok::Float(1e-5),
                Tok::Float(2.5),
                Tok::RBrace,
                Tok::Eof
            ]
        );
    }

    #[test]
    fn comments_and_blank_lines_collapse() {
        assert_eq!(
            toks("a # c\n\n\nb"),
            vec![Tok::Ident("a".into()), Tok::Newline, Tok::Ident("b".into()), Tok::Eof]
        );
    }

    #[test]
    fn bad_input_is_a_diagnostic() {
        assert!(lex("a $ b").unwrap_err().message.contains("`$`"));
        assert!(lex("99999999999999999999").unwrap_err().message.contains("out of range"));
        assert!(lex("12ab").unwrap_err().message.contains("malformed number"));
        assert!(lex("\"abc").unwrap_err().message.contains("unterminated"));
    }
}
