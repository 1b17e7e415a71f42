//! The L0 text reader: `.ekir` text to a [`Graph`] (names unresolved, types not yet inferred).
//!
//! Grammar (see `docs/ir.md`):
//! ```text
//! file    := 'graph' NAME '(' [input {',' input}] ')' '->' '(' output {',' output} ')' '{' body '}'
//! input   := NAME ':' type ['=' init]          output := NAME ':' type
//! type    := ('f32' | 'i32') '[' [INT {',' INT}] ']'
//! body    := {param} {node} {fuse} 'return' value {',' value}   (one statement per line, or `;`)
//! fuse    := 'fuse' VALUE {',' VALUE}                (a fusion group: `l0::fusion`)
//! param   := 'param' NAME ':' type '=' ( init | file )
//! file    := 'file' '(' STRING ',' 'offset' '=' INT ',' 'crc32' '=' STRING ')'   (either order)
//! node    := VALUE [':' type] '=' OP '(' [arg {',' arg}] ')'     arg := value | NAME '=' attr
//! ```
//! Invariants: the parser never panics on any input; every diagnostic carries a span into the
//! source, says what was found and what was expected, and is located (`SourceFile::locate`)
//! before it is returned. Operators and attributes are resolved here (via `ops`), so a parsed
//! graph holds only well-formed `Op`s with the right number of inputs; names and types are left
//! to `check`.

use crate::diag::{did_you_mean, Diagnostic, SourceFile, Span};
use crate::l0::ast::{FusionGroup, Graph, Node, Op, OutputDecl, ParamData, TensorDecl, ValueRef};
use crate::l0::ops::{Attr, AttrValue};
use crate::lex::{lex, Tok, Token};
use crate::types::{DType, TensorType};
use ekb_wire::Init;

/// The initialiser names, for "did you mean" hints.
pub const INIT_NAMES: &[&str] =
    &["uniform", "normal", "kaiming_uniform", "zeros", "ones", "const", "randint", "file"];

/// Parses one graph. Diagnostics come back located in `src`.
pub fn parse(src: &SourceFile) -> Result<Graph, Diagnostic> {
    let toks = lex(&src.text).map_err(|d| src.locate(d))?;
    let mut p = Parser { src, toks, pos: 0, graph: None };
    p.file().map_err(|d| src.locate(d))
}

/// Reads one seeded initialiser from its text form (`uniform(-1, 1)`, `randint(0, 10)`,
/// `zeros`), as it appears after `=` in a declaration.
pub fn parse_init(text: &str) -> Result<Init, Diagnostic> {
    let src = SourceFile::new("initialiser", text);
    let toks = lex(text).map_err(|d| src.locate(d))?;
    let mut p = Parser { src: &src, toks, pos: 0, graph: None };
    let init = p.init().map_err(|d| src.locate(d))?;
    if !p.at(&Tok::Eof) {
        return Err(src.locate(p.unexpected("end of the initialiser")));
    }
    Ok(init)
}

/// Sets every span in the graph to `Span::NONE`, so graphs parsed from different text compare
/// equal when they mean the same thing.
pub fn strip_spans(g: &mut Graph) {
    g.span = Span::NONE;
    for d in g.inputs.iter_mut().chain(&mut g.params) {
        d.span = Span::NONE;
    }
    for n in &mut g.nodes {
        n.span = Span::NONE;
        n.op_span = Span::NONE;
        for a in &mut n.args {
            a.span = Span::NONE;
        }
    }
    for o in &mut g.outputs {
        o.span = Span::NONE;
        o.value.span = Span::NONE;
    }
    for f in &mut g.groups {
        f.span = Span::NONE;
        for v in &mut f.nodes {
            v.span = Span::NONE;
        }
    }
}

/// The statements of a graph's body.
struct Body {
    params: Vec<TensorDecl>,
    nodes: Vec<Node>,
    groups: Vec<FusionGroup>,
    /// The values after `return`, and the span of `return`.
    ret: (Vec<ValueRef>, Span),
}

struct Parser<'a> {
    src: &'a SourceFile,
    toks: Vec<Token>,
    pos: usize,
    /// The graph's name and the span of `graph`, once read (for end-of-file messages).
    graph: Option<(String, Span)>,
}

type PResult<T> = Result<T, Diagnostic>;

impl Parser<'_> {
    fn peek(&self) -> &Token {
        &self.toks[self.pos.min(self.toks.len() - 1)]
    }

    fn peek_at(&self, k: usize) -> &Tok {
        &self.toks[(self.pos + k).min(self.toks.len() - 1)].tok
    }

    fn bump(&mut self) -> Token {
        let t = self.peek().clone();
        if self.pos < self.toks.len() - 1 {
            self.pos += 1;
        }
        t
    }

    /// The span of the token just consumed.
    fn prev_span(&self) -> Span {
        self.toks[self.pos.saturating_sub(1)].span
    }

    fn at(&self, tok: &Tok) -> bool {
        &self.peek().tok == tok
    }

    fn eat(&mut self, tok: &Tok) -> bool {
        if self.at(tok) {
            self.bump();
            true
        } else {
            false
        }
    }

    fn skip_newlines(&mut self) {
        while self.at(&Tok::Newline) {
            self.bump();
        }
    }

    /// Skips a line break only when the next token continues the list (`,` or the closer), so
    /// an unclosed `(` is reported at the end of its line rather than on the next statement.
    fn skip_newlines_before(&mut self, closer: &Tok) {
        if self.at(&Tok::Newline) && matches!(self.peek_at(1), t if t == closer || *t == Tok::Comma) {
            self.bump();
        }
    }

    /// "expected X, found Y" at the current token; at end of file, says which graph is open.
    fn unexpected(&self, expected: &str) -> Diagnostic {
        let t = self.peek();
        let d = if t.tok == Tok::Eof {
            let mut d = Diagnostic::error(format!("unexpected end of file: expected {expected}"));
            if let Some((name, span)) = &self.graph {
                let (line, _) = self.src.line_col(span.start as usize);
                d = d.with_note(format!("graph `{name}` opened at line {line} is not closed"));
            }
            d
        } else {
            Diagnostic::error(format!("expected {expected}, found {}", t.tok.describe()))
        };
        d.at(t.span).with_expected(expected.to_string())
    }

    fn expect(&mut self, tok: Tok, expected: &str) -> PResult<Span> {
        if self.at(&tok) {
            Ok(self.bump().span)
        } else {
            Err(self.unexpected(expected))
        }
    }

    fn ident(&mut self, expected: &str) -> PResult<(String, Span)> {
        match &self.peek().tok {
            Tok::Ident(s) => {
                let s = s.clone();
                Ok((s, self.bump().span))
            }
            _ => Err(self.unexpected(expected)),
        }
    }

    fn file(&mut self) -> PResult<Graph> {
        self.skip_newlines();
        let start = match &self.peek().tok {
            Tok::Ident(k) if k == "graph" => self.bump().span,
            _ => return Err(self.unexpected("`graph` at the start of the file")),
        };
        let (name, name_span) = self.ident("the graph's name after `graph`")?;
        self.graph = Some((name.clone(), start));
        self.expect(Tok::LParen, "`(` to open the graph's inputs")?;
        let inputs = self.comma_list("an input such as `x: f32[1,3]`", |p| p.decl(false))?;
        self.expect(Tok::Arrow, "`->` and the graph's outputs")?;
        self.expect(Tok::LParen, "`(` to open the graph's outputs, as in `-> (y: f32[4])`")?;
        let outs = self.comma_list("an output such as `y: f32[1,3]`", |p| p.output())?;
        if outs.is_empty() {
            return Err(Diagnostic::error(format!("graph `{name}` declares no outputs"))
                .at(self.prev_span())
                .with_expected("at least one output, as in `-> (y: f32[4])`"));
        }
        self.expect(Tok::LBrace, "`{` to open the graph's body")?;
        let Body { params, nodes, groups, ret } = self.body(&name, name_span)?;
        let end = self.bump().span; // the `}`, checked by `body`
        self.skip_newlines();
        if !self.at(&Tok::Eof) {
            return Err(self.unexpected("end of file after the graph's closing `}` (one graph per file)"));
        }
        let (ret_values, ret_span) = ret;
        if ret_values.len() != outs.len() {
            let names: Vec<&str> = outs.iter().map(|o| o.0.as_str()).collect();
            return Err(Diagnostic::error(format!(
                "`return` gives {} value{} but the signature declares {} output{} ({})",
                ret_values.len(),
                if ret_values.len() == 1 { "" } else { "s" },
                outs.len(),
                if outs.len() == 1 { "" } else { "s" },
                names.join(", ")
            ))
            .at(ret_span)
            .with_expected(format!("`return` with {} value(s), one per output", outs.len())));
        }
        let outputs = outs
            .into_iter()
            .zip(ret_values)
            .map(|((name, ty, span), value)| OutputDecl { name, ty, value, span })
            .collect();
        Ok(Graph { name, inputs, params, nodes, outputs, groups, span: start.to(end) })
    }

    /// `item {, item}` up to and including `)`; newlines are allowed between items.
    fn comma_list<T>(&mut self, item: &str, mut f: impl FnMut(&mut Self) -> PResult<T>) -> PResult<Vec<T>> {
        let mut out = Vec::new();
        self.skip_newlines();
        if self.eat(&Tok::RParen) {
            return Ok(out);
        }
        loop {
            self.skip_newlines();
            if !matches!(self.peek().tok, Tok::Ident(_)) {
                return Err(self.unexpected(item));
            }
            out.push(f(self)?);
            self.skip_newlines_before(&Tok::RParen);
            if self.eat(&Tok::RParen) {
                return Ok(out);
            }
            if !self.eat(&Tok::Comma) {
                return Err(self.unexpected(&format!("`,` or `)` after {}", item_after(item))));
            }
        }
    }

    /// `name: type [= init]` (an input) or `param name: type = init` after `param`.
    fn decl(&mut self, is_param: bool) -> PResult<TensorDecl> {
        let what = if is_param { "a parameter name after `param`" } else { "an input name" };
        let (name, start) = self.ident(what)?;
        self.expect(Tok::Colon, &format!("`:` and a type after `{name}`"))?;
        let ty = self.ty()?;
        let has_init = self.eat(&Tok::Eq);
        if has_init && matches!(&self.peek().tok, Tok::Ident(k) if k == "file") {
            let file_span = self.bump().span;
            if !is_param {
                return Err(Diagnostic::error(format!("input `{name}` cannot take its values from a file"))
                    .at(file_span)
                    .with_expected("a seeded initialiser such as `uniform(-1, 1)`")
                    .with_note("inputs are generated from seeds; `file(...)` gives a parameter's values"));
            }
            let data = self.file_ref()?;
            return Ok(TensorDecl::with_data(name, ty, data, start.to(self.prev_span())));
        }
        let init = if has_init {
            self.init()?
        } else if is_param {
            return Err(self
                .unexpected(&format!("`=` and an initialiser for parameter `{name}`"))
                .with_hint("e.g. `= kaiming_uniform`, `= zeros` or `= uniform(-0.1, 0.1)`"));
        } else {
            ty.dtype.default_init()
        };
        Ok(TensorDecl::seeded(name, ty, init, start.to(self.prev_span())))
    }

    /// `("NAME.bin", offset=N, crc32="xxxxxxxx")` after `file`; `offset` and `crc32` in either
    /// order, each exactly once.
    fn file_ref(&mut self) -> PResult<ParamData> {
        self.expect(
            Tok::LParen,
            "`(` after `file`, as in `file(\"model.bin\", offset=0, crc32=\"1a2b3c4d\")`",
        )?;
        let file = match &self.peek().tok {
            Tok::Str(s) if !s.is_empty() => s.clone(),
            _ => return Err(self.unexpected("the data file's name as a string, such as `\"model.bin\"`")),
        };
        self.bump();
        let (mut offset, mut crc32) = (None, None);
        while self.eat(&Tok::Comma) {
            let (key, key_span) = self.ident("`offset=` or `crc32=`")?;
            self.expect(Tok::Eq, &format!("`=` after `{key}`"))?;
            let seen = match key.as_str() {
                "offset" => {
                    let (v, span) = self.int("the byte offset (an integer >= 0)")?;
                    if v < 0 {
                        return Err(Diagnostic::error(format!("`offset` must be >= 0, found {v}"))
                            .at(span)
                            .with_expected("a byte offset >= 0"));
                    }
                    offset.replace(v as u64).is_some()
                }
                "crc32" => {
                    let t = self.peek().clone();
                    let parsed = match &t.tok {
                        Tok::Str(s) => parse_crc32(s),
                        _ => None,
                    };
                    let Some(c) = parsed else {
                        return Err(Diagnostic::error(format!(
                            "`crc32` must be a string of 1 to 8 hex digits, found {}",
                            t.tok.describe()
                        ))
                        .at(t.span)
                        .with_expected("a checksum such as `crc32=\"1a2b3c4d\"`"));
                    };
                    self.bump();
                    crc32.replace(c).is_some()
                }
                _ => {
                    let mut d = Diagnostic::error(format!("`file` has no argument `{key}`"))
                        .at(key_span)
                        .with_expected("`offset=` or `crc32=`");
                    if let Some(h) = did_you_mean(&key, ["offset", "crc32"]) {
                        d = d.with_hint(h);
                    }
                    return Err(d);
                }
            };
            if seen {
                return Err(Diagnostic::error(format!("`{key}` is given twice"))
                    .at(key_span)
                    .with_expected("each of `offset=` and `crc32=` once"));
            }
        }
        if !self.at(&Tok::RParen) {
            return Err(self.unexpected("`,` or `)` in `file(...)`"));
        }
        let close = self.bump().span;
        match (offset, crc32) {
            (Some(offset), Some(crc32)) => Ok(ParamData { file, offset, crc32, values: None }),
            (o, _) => Err(Diagnostic::error(format!(
                "`file(...)` needs `{}`",
                if o.is_none() { "offset=" } else { "crc32=" }
            ))
            .at(close)
            .with_expected("`file(\"NAME.bin\", offset=N, crc32=\"xxxxxxxx\")`")),
        }
    }

    fn output(&mut self) -> PResult<(String, TensorType, Span)> {
        let (name, start) = self.ident("an output name")?;
        self.expect(Tok::Colon, &format!("`:` and a type after `{name}`"))?;
        let ty = self.ty()?;
        Ok((name, ty, start.to(self.prev_span())))
    }

    /// `f32[1,3,8,8]`; `f32[]` is a scalar.
    fn ty(&mut self) -> PResult<TensorType> {
        let (name, span) = self.ident("a type such as `f32[1,3]`")?;
        let Some(dtype) = DType::from_name(&name) else {
            let mut d = Diagnostic::error(format!("unknown dtype `{name}`"))
                .at(span)
                .with_expected("`f32`, `i32`, `i8` or `f16`");
            if let Some(h) = did_you_mean(&name, ["f32", "i32", "i8", "f16"]) {
                d = d.with_hint(h);
            }
            return Err(d);
        };
        self.expect(Tok::LBracket, &format!("`[` and the shape after `{name}`, as in `{name}[1,3]`"))?;
        let mut shape = Vec::new();
        self.skip_newlines();
        if !self.eat(&Tok::RBracket) {
            loop {
                self.skip_newlines();
                match self.peek().tok {
                    Tok::Int(d) => {
                        self.bump();
                        shape.push(d as usize);
                    }
                    Tok::Minus => {
                        return Err(Diagnostic::error("negative dimension in a shape")
                            .at(self.peek().span)
                            .with_expected("a dimension >= 0"))
                    }
                    _ => return Err(self.unexpected("a dimension (an integer)")),
                }
                self.skip_newlines();
                if self.eat(&Tok::RBracket) {
                    break;
                }
                self.expect(Tok::Comma, "`,` or `]` after a dimension")?;
            }
        }
        Ok(TensorType::new(dtype, shape))
    }

    fn init(&mut self) -> PResult<Init> {
        let (name, span) = self.ident("an initialiser such as `uniform(-1, 1)` or `zeros`")?;
        let init = match name.as_str() {
            "kaiming_uniform" => Init::KaimingUniform,
            "zeros" => Init::Const(0.0),
            "ones" => Init::Const(1.0),
            "uniform" | "normal" => {
                let (x, y) = self.two_numbers(&name)?;
                if name == "uniform" {
                    Init::Uniform { lo: x, hi: y }
                } else {
                    Init::Normal { mean: x, std: y }
                }
            }
            "const" => {
                self.expect(Tok::LParen, "`(` after `const`, as in `const(0.5)`")?;
                let v = self.number()?;
                self.expect(Tok::RParen, "`)` after the value of `const`")?;
                Init::Const(v)
            }
            "randint" => {
                self.expect(Tok::LParen, "`(` after `randint`, as in `randint(0, 10)`")?;
                let lo = self.int("the lower bound of `randint` (an integer)")?.0;
                self.expect(Tok::Comma, "`,` between the bounds of `randint`")?;
                let hi = self.int("the upper bound of `randint` (an integer)")?.0;
                self.expect(Tok::RParen, "`)` after the bounds of `randint`")?;
                Init::RandInt { lo, hi }
            }
            _ => {
                let mut d = Diagnostic::error(format!("unknown initialiser `{name}`"))
                    .at(span)
                    .with_expected("one of `uniform(lo, hi)`, `normal(mean, std)`, `kaiming_uniform`, `zeros`, `ones`, `const(v)`, `randint(lo, hi)`, `file(...)` (parameters)");
                if let Some(h) = did_you_mean(&name, INIT_NAMES.iter().copied()) {
                    d = d.with_hint(h);
                }
                return Err(d);
            }
        };
        Ok(init)
    }

    fn two_numbers(&mut self, name: &str) -> PResult<(f64, f64)> {
        self.expect(Tok::LParen, &format!("`(` after `{name}`, as in `{name}(-1, 1)`"))?;
        let x = self.number()?;
        self.expect(Tok::Comma, &format!("`,` between the two arguments of `{name}`"))?;
        let y = self.number()?;
        self.expect(Tok::RParen, &format!("`)` after the arguments of `{name}`"))?;
        Ok((x, y))
    }

    /// A possibly negative number; integers are accepted.
    fn number(&mut self) -> PResult<f64> {
        let neg = self.eat(&Tok::Minus);
        let x = match self.peek().tok {
            Tok::Int(i) => i as f64,
            Tok::Float(x) => x,
            _ => return Err(self.unexpected("a number")),
        };
        self.bump();
        Ok(if neg { -x } else { x })
    }

    /// A possibly negative integer and its span.
    fn int(&mut self, expected: &str) -> PResult<(i64, Span)> {
        let start = self.peek().span;
        let neg = self.eat(&Tok::Minus);
        match self.peek().tok {
            Tok::Int(i) => {
                let end = self.bump().span;
                Ok((if neg { -i } else { i }, start.to(end)))
            }
            _ => Err(self.unexpected(expected)),
        }
    }

    /// Statements up to (not consuming) the closing `}`. Returns params, nodes and the
    /// `return` values with the span of `return`.
    fn body(&mut self, graph: &str, name_span: Span) -> PResult<Body> {
        let mut params = Vec::new();
        let mut nodes: Vec<Node> = Vec::new();
        let mut groups: Vec<FusionGroup> = Vec::new();
        let mut ret: Option<(Vec<ValueRef>, Span)> = None;
        loop {
            while self.eat(&Tok::Newline) || self.eat(&Tok::Semi) {}
            let t = self.peek().clone();
            if t.tok == Tok::RBrace {
                break;
            }
            if t.tok == Tok::Eof {
                let (line, _) = self.src.line_col(name_span.start as usize);
                return Err(Diagnostic::error(format!(
                    "unexpected end of file: expected `}}` to close graph `{graph}` opened at line {line}"
                ))
                .at(t.span)
                .with_expected("`}`"));
            }
            if ret.is_some() {
                return Err(Diagnostic::error(format!(
                    "statement after `return`, found {}",
                    t.tok.describe()
                ))
                .at(t.span)
                .with_expected("`}` to close the graph: `return` is the last statement"));
            }
            match &t.tok {
                Tok::Ident(k) if k == "param" => {
                    self.bump();
                    if let Some(first) = nodes.first() {
                        return Err(Diagnostic::error("`param` after a node")
                            .at(t.span)
                            .with_expected("every `param` before the first node")
                            .with_note(format!("the first node is `{}`", first.name)));
                    }
                    params.push(self.decl(true)?);
                }
                Tok::Ident(k) if k == "return" => {
                    self.bump();
                    let mut values = vec![self.value_ref("a value to return, such as `%3` or `x`")?];
                    while self.eat(&Tok::Comma) {
                        values.push(self.value_ref("a value to return after `,`")?);
                    }
                    ret = Some((values, t.span));
                }
                Tok::Ident(k) if k == "fuse" => {
                    self.bump();
                    let mut members = vec![self.value_ref("a node to fuse, such as `%3`")?];
                    while self.eat(&Tok::Comma) {
                        members.push(self.value_ref("a node to fuse after `,`")?);
                    }
                    groups.push(FusionGroup { nodes: members, span: t.span.to(self.prev_span()) });
                }
                Tok::Value(_) if !groups.is_empty() => {
                    return Err(Diagnostic::error("a node after `fuse`")
                        .at(t.span)
                        .with_expected("every node before the first `fuse` statement"));
                }
                Tok::Value(_) => nodes.push(self.node()?),
                _ => {
                    return Err(self.unexpected(
                        "a statement: `param name: type = init`, `%name = op(...)`, `fuse %a, %b` or `return values`",
                    ))
                }
            }
            if !matches!(self.peek().tok, Tok::Newline | Tok::Semi | Tok::RBrace) {
                return Err(self.unexpected("end of line or `;` after the statement"));
            }
        }
        match ret {
            Some(ret) => Ok(Body { params, nodes, groups, ret }),
            None => Err(Diagnostic::error(format!("graph `{graph}` has no `return`"))
                .at(self.peek().span)
                .with_expected("`return` and the output values before the closing `}`")),
        }
    }

    fn value_ref(&mut self, expected: &str) -> PResult<ValueRef> {
        match &self.peek().tok {
            Tok::Value(s) | Tok::Ident(s) => {
                let name = s.clone();
                Ok(ValueRef { name, span: self.bump().span })
            }
            _ => Err(self.unexpected(expected)),
        }
    }

    /// `%name[: type] = op(args, attr=value, ...)`.
    fn node(&mut self) -> PResult<Node> {
        let first = self.bump();
        let Tok::Value(name) = first.tok else { return Err(self.unexpected("a node name such as `%0`")) };
        let ty = if self.eat(&Tok::Colon) { Some(self.ty()?) } else { None };
        self.expect(Tok::Eq, &format!("`=` after `{name}`"))?;
        let (op_name, op_span) = match &self.peek().tok {
            Tok::Ident(s) => {
                let s = s.clone();
                (s, self.bump().span)
            }
            _ => return Err(self.unexpected("an operator name such as `conv2d` or `add`")),
        };
        if !self.at(&Tok::LParen) {
            return Err(self.unexpected(&format!("`(` after `{op_name}`")));
        }
        let open = self.bump().span;
        let mut args = Vec::new();
        let mut attrs: Vec<Attr> = Vec::new();
        self.skip_newlines();
        if !self.eat(&Tok::RParen) {
            loop {
                self.skip_newlines();
                let t = self.peek().clone();
                match (&t.tok, self.peek_at(1)) {
                    (Tok::Ident(k), Tok::Eq) => {
                        self.bump();
                        self.bump();
                        let (value, value_span) = self.attr_value(k)?;
                        attrs.push(Attr { name: k.clone(), value, name_span: t.span, value_span });
                    }
                    (Tok::Value(_) | Tok::Ident(_), _) => {
                        if let Some(a) = attrs.first() {
                            return Err(Diagnostic::error(format!(
                                "input {} after the attribute `{}`",
                                t.tok.describe(),
                                a.name
                            ))
                            .at(t.span)
                            .with_expected("inputs first, then `name=value` attributes"));
                        }
                        args.push(self.value_ref("an input")?);
                    }
                    _ => {
                        return Err(self.unexpected(&format!(
                            "an input (such as `x` or `%0`) or an attribute (`name=value`) of `{op_name}`"
                        )))
                    }
                }
                self.skip_newlines_before(&Tok::RParen);
                if self.eat(&Tok::RParen) {
                    break;
                }
                if !self.eat(&Tok::Comma) {
                    let (line, col) = self.src.line_col(open.start as usize);
                    return Err(self.unexpected("`)` or `,` after argument").with_note(format!(
                        "the `(` of `{op_name}` at line {line}, column {col} is not closed"
                    )));
                }
            }
        }
        let end = self.prev_span();
        let op = Op::from_text(&op_name, op_span, args.len(), &attrs)?;
        Ok(Node { name, op, args, ty, span: first.span.to(end), op_span })
    }

    /// An attribute value: integer, number (`inf`, `-inf`, `nan` too), `true`/`false`, a list of
    /// integers, or a name.
    fn attr_value(&mut self, attr: &str) -> PResult<(AttrValue, Span)> {
        let start = self.peek().span;
        let value = match self.peek().tok.clone() {
            Tok::Minus => {
                self.bump();
                match &self.peek().tok {
                    Tok::Int(i) => AttrValue::Int(-i),
                    Tok::Float(x) => AttrValue::Float(-x),
                    Tok::Ident(s) if s == "inf" => AttrValue::Float(f64::NEG_INFINITY),
                    _ => return Err(self.unexpected(&format!("a number after `-` in `{attr}=`"))),
                }
            }
            Tok::Int(i) => AttrValue::Int(i),
            Tok::Float(x) => AttrValue::Float(x),
            Tok::Ident(s) => match s.as_str() {
                "true" => AttrValue::Bool(true),
                "false" => AttrValue::Bool(false),
                "inf" => AttrValue::Float(f64::INFINITY),
                "nan" => AttrValue::Float(f64::NAN),
                _ => AttrValue::Ident(s),
            },
            Tok::LBracket => {
                self.bump();
                let mut v = Vec::new();
                self.skip_newlines();
                if !self.at(&Tok::RBracket) {
                    loop {
                        self.skip_newlines();
                        v.push(self.int(&format!("an integer in the list of `{attr}`"))?.0);
                        self.skip_newlines();
                        if self.at(&Tok::RBracket) {
                            break;
                        }
                        self.expect(Tok::Comma, &format!("`,` or `]` in the list of `{attr}`"))?;
                    }
                }
                AttrValue::Ints(v)
            }
            _ => {
                return Err(self.unexpected(&format!(
                    "a value for `{attr}`: a number, `true`/`false`, a list such as `[1,1]`, or a name"
                )))
            }
        };
        let end = self.bump().span;
        Ok((value, start.to(end)))
    }
}

/// A CRC-32 written as 1 to 8 hex digits, with or without `0x`.
fn parse_crc32(s: &str) -> Option<u32> {
    let digits = s.strip_prefix("0x").unwrap_or(s);
    if digits.is_empty() || digits.len() > 8 || !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    u32::from_str_radix(digits, 16).ok()
}

/// "an input such as ..." -> "an input", for "`,` or `)` after an input".
fn item_after(item: &str) -> &str {
    item.split(" such as").next().unwrap_or(item)
}
