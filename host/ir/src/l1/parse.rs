//! The L1 text reader: `module NAME { buffers, kernels, runs }` into a [`Module`].
//!
//! The grammar is in `docs/ir-l1.md`. Statements are separated by new lines or `;`; inside
//! parentheses and brackets, and after a binary operator, new lines are ignored so that long
//! expressions may wrap. A `-` written directly before a number literal folds into a negative
//! literal (`-3` is `Int(-3)`, which is also how `i32::MIN` is written), so that printing and
//! reading back give the same tree.
//!
//! What this reader must keep true: it never panics, whatever the input (nesting is bounded, so
//! the recursion is too); it never builds a kernel body that nests deeper than
//! [`MAX_NESTING`](super::nesting::MAX_NESTING) levels (binary chains included, so the tree is
//! refused while it is read, before it is deep); every error is one [`Diagnostic`] located in the source, saying what was
//! found, what was expected, and a "did you mean" when a misspelt keyword or function is close to a
//! known one; every node carries the span of its text.

use super::ast::*;
use super::nesting::{MAX_NESTING, SPLIT_HINT};
use crate::diag::{did_you_mean, Diagnostic, SourceFile, Span};
use crate::lex::{lex, Tok, Token};
use crate::types::{DType, TensorType};

/// Words that cannot name a buffer, a kernel, a variable or a module.
pub const KEYWORDS: &[&str] = &[
    "module",
    "input",
    "output",
    "buffer",
    "kernel",
    "run",
    "prepare",
    "in",
    "out",
    "inout",
    "for",
    "parallel",
    "vectorize",
    "unroll",
    "if",
    "else",
    "let",
    "alloc",
    "local",
    "shared",
    "launch",
    "barrier",
    "true",
    "false",
    "inf",
    "nan",
    "select",
    "f32",
    "i32",
    "bool",
];

/// Whether `s` can name something in L1 text: an identifier that is not a keyword.
pub fn is_valid_name(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !KEYWORDS.contains(&s)
}

const STMT_KEYWORDS: [&str; 9] =
    ["for", "parallel", "vectorize", "unroll", "if", "let", "alloc", "launch", "barrier"];
/// Most dimensions of a launch's grid or block (x, y, z).
pub const MAX_LAUNCH_DIMS: usize = 3;
const ITEM_KEYWORDS: [&str; 6] = ["input", "output", "buffer", "kernel", "run", "prepare"];
/// The reader's own recursion (blocks, parentheses, prefix operators): deep enough for any real
/// program, shallow enough for the thread's stack.
const MAX_DEPTH: u32 = 200;

/// Parses one module. Errors are located in `src`.
pub fn parse(src: &SourceFile) -> Result<Module, Diagnostic> {
    let toks = lex(&src.text).map_err(|d| src.locate(d))?;
    let mut p = Parser { src, toks, pos: 0, nest: 0, depth: 0, level: 0, prev_end: 0, open: Vec::new() };
    p.module().map_err(|d| src.locate(d))
}

type PResult<T> = Result<T, Diagnostic>;

struct Parser<'a> {
    src: &'a SourceFile,
    toks: Vec<Token>,
    pos: usize,
    /// Inside this many parentheses or brackets: new lines are not separators there.
    nest: u32,
    /// Recursion depth of blocks and expressions.
    depth: u32,
    /// The nesting level of the statements being read (1 for a kernel's body, see `nesting`).
    level: usize,
    /// End of the last consumed token.
    prev_end: usize,
    /// Constructs opened and not yet closed, for "the file ends inside ..." notes.
    open: Vec<(String, Span)>,
}

impl Parser<'_> {
    // ---- tokens ----

    fn index(&self) -> usize {
        let mut i = self.pos;
        if self.nest > 0 {
            while i + 1 < self.toks.len() && self.toks[i].tok == Tok::Newline {
                i += 1;
            }
        }
        i
    }

    fn tok(&self) -> &Token {
        &self.toks[self.index()]
    }

    fn peek(&self) -> &Tok {
        &self.tok().tok
    }

    /// The token after the current one (no new-line skipping between them).
    fn peek2(&self) -> &Tok {
        let i = self.index();
        &self.toks[(i + 1).min(self.toks.len() - 1)].tok
    }

    fn bump(&mut self) -> Token {
        let i = self.index();
        let t = self.toks[i].clone();
        self.pos = (i + 1).min(self.toks.len() - 1);
        self.prev_end = t.span.end as usize;
        t
    }

    fn skip_newlines(&mut self) {
        while matches!(self.peek(), Tok::Newline | Tok::Semi) {
            self.bump();
        }
    }

    fn eat(&mut self, t: &Tok) -> bool {
        if self.peek() == t {
            self.bump();
            true
        } else {
            false
        }
    }

    fn is_ident(&self, word: &str) -> bool {
        matches!(self.peek(), Tok::Ident(s) if s == word)
    }

    fn span_from(&self, start: usize) -> Span {
        Span::new(start, self.prev_end.max(start))
    }

    /// "expected X, found Y", pointing at the current token.
    fn unexpected(&self, expected: &str) -> Diagnostic {
        let t = self.tok();
        let mut d = Diagnostic::error(format!("expected {expected}, found {}", t.tok.describe()))
            .at(t.span)
            .with_expected(expected.to_string());
        if t.tok == Tok::Eof {
            d.message = format!("unexpected end of file: expected {expected}");
            for (what, span) in self.open.iter().rev() {
                let (line, col) = self.src.line_col(span.start as usize);
                d = d.with_note(format!("the file ends inside {what} opened at line {line}, column {col}"));
            }
            if !self.open.is_empty() {
                d = d.with_hint("the input looks truncated: is a closing `}` missing?");
            }
        }
        d
    }

    fn expect(&mut self, t: &Tok, expected: &str) -> PResult<Token> {
        if self.peek() == t {
            Ok(self.bump())
        } else {
            Err(self.unexpected(expected))
        }
    }

    fn expect_word(&mut self, word: &str, expected: &str) -> PResult<Token> {
        if self.is_ident(word) {
            Ok(self.bump())
        } else {
            Err(self.unexpected(expected))
        }
    }

    /// A name being defined (buffer, kernel, parameter, variable).
    fn def_name(&mut self, what: &str) -> PResult<Name> {
        let t = self.tok().clone();
        match &t.tok {
            Tok::Ident(s) if KEYWORDS.contains(&s.as_str()) => {
                Err(Diagnostic::error(format!("`{s}` is a keyword and cannot name {what}"))
                    .at(t.span)
                    .with_expected(format!("a name for {what}"))
                    .with_hint(format!("choose another name, e.g. `{s}_`")))
            }
            Tok::Ident(s) => {
                self.bump();
                Ok(Name { name: s.clone(), span: t.span })
            }
            _ => Err(self.unexpected(&format!("a name for {what}"))),
        }
    }

    fn enter(&mut self) -> PResult<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(Diagnostic::error(format!("nesting deeper than {MAX_DEPTH} levels"))
                .at(self.tok().span)
                .with_hint("split the expression with `let`"));
        }
        Ok(())
    }

    fn leave(&mut self) {
        self.depth -= 1;
    }

    /// The levels an operator at `at` spans over operands spanning `operands`; an error when
    /// its statement would then nest deeper than [`MAX_NESTING`].
    fn operator_levels(&self, operands: usize, at: Span) -> PResult<usize> {
        let levels = operands + 1;
        if self.level + levels > MAX_NESTING {
            return Err(Diagnostic::error(format!(
                "expression nests more than {MAX_NESTING} levels deep (its statement at level {}, the \
                 expression {levels} levels at this operator); at most {MAX_NESTING} are allowed",
                self.level
            ))
            .at(at)
            .with_expected(format!("statements and expressions nested at most {MAX_NESTING} levels"))
            .with_hint(SPLIT_HINT));
        }
        Ok(levels)
    }

    // ---- module level ----

    fn module(&mut self) -> PResult<Module> {
        self.skip_newlines();
        let start = self.tok().span.start as usize;
        if !self.is_ident("module") {
            let mut d = self.unexpected("`module`, the first word of an L1 module");
            if self.is_ident("graph") {
                d = d.with_hint("this is L0 text (a `graph`); L1 text starts with `module NAME {`");
            } else if let Tok::Ident(s) = self.peek() {
                if let Some(h) = did_you_mean(s, ["module"]) {
                    d = d.with_hint(h);
                }
            }
            return Err(d);
        }
        self.bump();
        let name = self.def_name("the module")?;
        let span = self.span_from(start);
        let open = self.expect(&Tok::LBrace, "`{` to open the module body")?;
        self.open.push((format!("module `{}`", name.name), open.span));
        let mut m =
            Module { name: name.name, buffers: Vec::new(), kernels: Vec::new(), plan: Vec::new(), span };
        loop {
            self.skip_newlines();
            match self.peek().clone() {
                Tok::RBrace => {
                    self.bump();
                    break;
                }
                Tok::Ident(w) => match w.as_str() {
                    "input" | "output" | "buffer" => m.buffers.push(self.buffer_decl()?),
                    "kernel" => m.kernels.push(self.kernel()?),
                    "run" | "prepare" => m.plan.push(self.run()?),
                    _ => return Err(self.unknown_item(&w)),
                },
                _ => {
                    return Err(
                        self.unexpected("`input`, `output`, `buffer`, `kernel`, `run`, `prepare` or `}`")
                    )
                }
            }
            self.end_of_item()?;
        }
        self.open.pop();
        self.skip_newlines();
        if *self.peek() != Tok::Eof {
            return Err(self
                .unexpected("end of file after the module's closing `}`")
                .with_note("a file holds exactly one module"));
        }
        Ok(m)
    }

    fn unknown_item(&self, w: &str) -> Diagnostic {
        let span = self.tok().span;
        let expected = "`input`, `output`, `buffer`, `kernel` or `run`";
        if STMT_KEYWORDS.contains(&w) {
            return Diagnostic::error(format!("`{w}` statement outside a kernel"))
                .at(span)
                .with_expected(expected)
                .with_hint("statements belong inside `kernel NAME(...) { ... }`");
        }
        let mut msg = format!("unknown item `{w}`");
        if let Some(h) = did_you_mean(w, ITEM_KEYWORDS) {
            msg = format!("{msg}: {h}");
        }
        Diagnostic::error(msg).at(span).with_expected(expected)
    }

    /// After an item or a statement: a new line, `;`, or the closing `}`.
    fn end_of_item(&mut self) -> PResult<()> {
        match self.peek() {
            Tok::Newline | Tok::Semi => {
                self.bump();
                Ok(())
            }
            Tok::RBrace => Ok(()),
            _ => Err(self.unexpected("the end of the line (or `;`)")),
        }
    }

    fn buffer_decl(&mut self) -> PResult<BufferDecl> {
        let kw = self.bump();
        let role = match &kw.tok {
            Tok::Ident(w) if w == "input" => BufferRole::Input,
            Tok::Ident(w) if w == "output" => BufferRole::Output,
            _ => BufferRole::Temp,
        };
        let name = self.def_name("a buffer")?;
        self.expect(&Tok::Colon, &format!("`:` and the type of `{}`", name.name))?;
        let ty = self.tensor_type()?;
        Ok(BufferDecl { name: name.name, ty, role, span: self.span_from(kw.span.start as usize) })
    }

    /// `f32[4,8]`, `i32[]`, `i8[16]`.
    fn tensor_type(&mut self) -> PResult<TensorType> {
        let t = self.tok().clone();
        let dtype = match &t.tok {
            Tok::Ident(s) => match DType::from_name(s) {
                Some(d) => d,
                None => {
                    let mut msg = format!("unknown element type `{s}`");
                    if let Some(h) = did_you_mean(s, ["f32", "i32", "i8", "f16"]) {
                        msg = format!("{msg}: {h}");
                    }
                    return Err(Diagnostic::error(msg)
                        .at(t.span)
                        .with_expected("`f32`, `i32`, `i8` or `f16` (the element types of L1 buffers)"));
                }
            },
            _ => return Err(self.unexpected("a tensor type such as `f32[4,8]`")),
        };
        self.bump();
        self.expect(&Tok::LBracket, "`[` and the shape, e.g. `f32[4,8]` (`f32[]` for a scalar)")?;
        self.nest += 1;
        let mut shape = Vec::new();
        while *self.peek() != Tok::RBracket {
            let t = self.tok().clone();
            match t.tok {
                Tok::Int(n) if n >= 0 && n <= i64::from(i32::MAX) => {
                    self.bump();
                    shape.push(n as usize);
                }
                Tok::Int(n) => {
                    return Err(Diagnostic::error(format!("dimension {n} is out of range"))
                        .at(t.span)
                        .with_expected(format!("a size between 0 and {}", i32::MAX)))
                }
                _ => return Err(self.unexpected("a dimension size (an integer) or `]`")),
            }
            if !self.eat(&Tok::Comma) && *self.peek() != Tok::RBracket {
                return Err(self.unexpected("`,` or `]` in the shape"));
            }
        }
        self.nest -= 1;
        self.bump();
        Ok(TensorType::new(dtype, shape))
    }

    fn kernel(&mut self) -> PResult<Kernel> {
        let kw = self.bump();
        let name = self.def_name("a kernel")?;
        self.expect(&Tok::LParen, &format!("`(` and the parameters of kernel `{}`", name.name))?;
        self.nest += 1;
        let mut params = Vec::new();
        while *self.peek() != Tok::RParen {
            params.push(self.param()?);
            if !self.eat(&Tok::Comma) && *self.peek() != Tok::RParen {
                return Err(self.unexpected("`,` or `)` in the parameter list"));
            }
        }
        self.nest -= 1;
        self.bump();
        let span = self.span_from(kw.span.start as usize);
        let what = format!("kernel `{}`", name.name);
        let body = self.block(&what)?;
        Ok(Kernel { name: name.name, params, body, span })
    }

    fn param(&mut self) -> PResult<KernelParam> {
        let start = self.tok().span.start as usize;
        let name = self.def_name("a parameter")?;
        self.expect(&Tok::Colon, &format!("`:` and the type of parameter `{}`", name.name))?;
        let ty = self.tensor_type()?;
        let t = self.tok().clone();
        let access = match &t.tok {
            Tok::Ident(w) if w == "in" => Access::In,
            Tok::Ident(w) if w == "out" => Access::Out,
            Tok::Ident(w) if w == "inout" => Access::InOut,
            _ => {
                let mut d =
                    self.unexpected(&format!("`in`, `out` or `inout` after the type of `{}`", name.name));
                if let Tok::Ident(w) = &t.tok {
                    if let Some(h) = did_you_mean(w, ["in", "out", "inout"]) {
                        d = d.with_hint(h);
                    }
                }
                return Err(d);
            }
        };
        self.bump();
        Ok(KernelParam { name: name.name, ty, access, span: self.span_from(start) })
    }

    fn run(&mut self) -> PResult<Run> {
        let kw = self.bump();
        let t = self.tok().clone();
        let Tok::Ident(kernel) = t.tok else {
            return Err(self.unexpected("the name of the kernel to run"));
        };
        self.bump();
        self.expect(&Tok::LParen, &format!("`(` and the buffers passed to `{kernel}`"))?;
        self.nest += 1;
        let mut args = Vec::new();
        while *self.peek() != Tok::RParen {
            let t = self.tok().clone();
            let Tok::Ident(a) = t.tok else {
                return Err(self.unexpected("a module buffer name"));
            };
            self.bump();
            args.push(Name { name: a, span: t.span });
            if !self.eat(&Tok::Comma) && *self.peek() != Tok::RParen {
                return Err(self.unexpected("`,` or `)` in the argument list"));
            }
        }
        self.nest -= 1;
        self.bump();
        let prepare = kw.tok == Tok::Ident("prepare".into());
        Ok(Run { kernel, args, span: self.span_from(kw.span.start as usize), prepare })
    }

    // ---- statements ----

    /// `{ stmt* }`; `what` names the construct for truncation notes.
    fn block(&mut self, what: &str) -> PResult<Vec<Stmt>> {
        let open = self.expect(&Tok::LBrace, &format!("`{{` to open the body of {what}"))?;
        self.enter()?;
        self.level += 1;
        self.open.push((what.to_string(), open.span));
        let saved_nest = std::mem::replace(&mut self.nest, 0);
        let mut body = Vec::new();
        loop {
            self.skip_newlines();
            if self.eat(&Tok::RBrace) {
                break;
            }
            body.push(self.stmt()?);
            self.end_of_item()?;
        }
        self.nest = saved_nest;
        self.open.pop();
        self.level -= 1;
        self.leave();
        Ok(body)
    }

    fn stmt(&mut self) -> PResult<Stmt> {
        let t = self.tok().clone();
        let start = t.span.start as usize;
        let Tok::Ident(w) = &t.tok else {
            return Err(self.unexpected(
                "a statement (`for`, `parallel`, `vectorize`, `unroll`, `if`, `let`, `alloc`, `launch`, `barrier`, or \
                 a store `buf[i] = e`)",
            ));
        };
        match w.as_str() {
            "for" | "parallel" | "vectorize" | "unroll" => self.loop_stmt(),
            "if" => self.if_stmt(),
            "let" => {
                self.bump();
                let name = self.def_name("a variable")?;
                if *self.peek() == Tok::Colon {
                    return Err(self
                        .unexpected("`=`")
                        .with_hint("`let` takes no type: it is the type of its value"));
                }
                self.expect(&Tok::Eq, &format!("`=` and the value of `{}`", name.name))?;
                let value = self.expr()?;
                Ok(Stmt::Let { name: name.name, value, span: self.span_from(start) })
            }
            "alloc" => {
                self.bump();
                let name = self.def_name("an allocation")?;
                self.expect(&Tok::Colon, &format!("`:` and the type of `{}`", name.name))?;
                let ty = self.tensor_type()?;
                let t = self.tok().clone();
                let scope = match &t.tok {
                    Tok::Ident(s) if s == "local" => Scope::Local,
                    Tok::Ident(s) if s == "shared" => Scope::Shared,
                    Tok::Ident(s) if s == "global" => {
                        return Err(Diagnostic::error("an `alloc` cannot be `global`")
                            .at(t.span)
                            .with_expected("`local` (per thread) or `shared` (per GPU block)")
                            .with_hint("buffers in global memory are module `buffer`s passed to the kernel"))
                    }
                    _ => {
                        let mut d = self.unexpected("the scope `local` or `shared` after the type");
                        if let Tok::Ident(w) = &t.tok {
                            if let Some(h) = did_you_mean(w, ["local", "shared"]) {
                                d = d.with_hint(h);
                            }
                        }
                        return Err(d);
                    }
                };
                self.bump();
                Ok(Stmt::Alloc { name: name.name, ty, scope, span: self.span_from(start) })
            }
            "barrier" => {
                self.bump();
                if *self.peek() == Tok::LParen {
                    return Err(self
                        .unexpected("the end of the line after `barrier`")
                        .with_hint("`barrier` is a statement on its own: no parentheses"));
                }
                Ok(Stmt::Barrier { span: self.span_from(start) })
            }
            "launch" => self.launch(),
            "else" => Err(Diagnostic::error("`else` without an `if`")
                .at(t.span)
                .with_expected("a statement")
                .with_hint("write `} else {` right after the `}` of the `if` block")),
            _ if *self.peek2() == Tok::LBracket => {
                let buf = Name { name: w.clone(), span: t.span };
                self.bump();
                self.store(buf)
            }
            _ if *self.peek2() == Tok::Eq => Err(Diagnostic::error(format!("cannot assign to `{w}`"))
                .at(t.span)
                .with_expected("a store `buf[i, ...] = value` or `let name = value`")
                .with_hint(
                    "variables are immutable: bind a new name with `let`, or store into a buffer element",
                )),
            _ => {
                let mut msg = format!("unknown statement `{w}`");
                if let Some(h) = did_you_mean(w, STMT_KEYWORDS) {
                    msg = format!("{msg}: {h}");
                }
                Err(Diagnostic::error(msg).at(t.span).with_expected(
                    "`for`, `parallel`, `vectorize`, `unroll`, `if`, `let`, `alloc`, `launch`, `barrier`, or a store \
                     `buf[i] = e`",
                ))
            }
        }
    }

    fn loop_stmt(&mut self) -> PResult<Stmt> {
        let kw = self.bump();
        let kind = match &kw.tok {
            Tok::Ident(w) if w == "parallel" => LoopKind::Parallel,
            Tok::Ident(w) if w == "vectorize" => LoopKind::Vectorize,
            Tok::Ident(w) if w == "unroll" => LoopKind::Unroll,
            _ => LoopKind::Serial,
        };
        let var = self.def_name("a loop variable")?;
        if *self.peek() == Tok::Eq {
            return Err(self.unexpected("`in`").with_hint(format!("write `for {} in 0..n {{`", var.name)));
        }
        self.expect_word("in", &format!("`in` after the loop variable `{}`", var.name))?;
        let lo = self.expr()?;
        self.expect(&Tok::DotDot, "`..` between the loop bounds (`lo..hi`, `hi` exclusive)")?;
        let hi = self.expr()?;
        let span = self.span_from(kw.span.start as usize);
        let body = self.block(&format!("loop `{}`", var.name))?;
        Ok(Stmt::Loop { var: var.name, kind, lo, hi, body, span })
    }

    /// `launch grid(bx in 0..GX, ..) block(tx in 0..BX, ..) [shared_optin] { body }`.
    fn launch(&mut self) -> PResult<Stmt> {
        let kw = self.bump();
        let grid = self.launch_dims("grid")?;
        let block = self.launch_dims("block")?;
        let shared_optin = self.is_ident("shared_optin");
        if shared_optin {
            self.bump();
        }
        let span = self.span_from(kw.span.start as usize);
        let body = self.block("`launch`")?;
        Ok(Stmt::Launch { grid, block, shared_optin, body, span })
    }

    /// `grid(bx in 0..4, by in 0..2)` or `block(...)`: 1 to 3 named dimensions starting at 0.
    fn launch_dims(&mut self, which: &str) -> PResult<Vec<LaunchDim>> {
        let example = if which == "grid" { "grid(bx in 0..64)" } else { "block(tx in 0..256)" };
        if !self.is_ident(which) {
            let after = if which == "grid" { "after `launch`" } else { "after the grid" };
            return Err(self.unexpected(&format!("`{which}` {after}, e.g. `{example}`")));
        }
        let start = self.bump().span.start as usize;
        self.expect(&Tok::LParen, &format!("`(` and the {which} dimensions, e.g. `{example}`"))?;
        self.nest += 1;
        let mut dims = Vec::new();
        while *self.peek() != Tok::RParen {
            let t = self.tok().clone();
            if let Tok::Int(_) = t.tok {
                return Err(Diagnostic::error(format!("a {which} dimension needs a variable"))
                    .at(t.span)
                    .with_expected(format!("a named dimension, e.g. `{example}`"))
                    .with_hint("name each dimension with its range: `grid(bx in 0..56, by in 0..2)`"));
            }
            let var = self.def_name(&format!("a {which} variable"))?;
            self.expect_word("in", &format!("`in` after the {which} variable `{}`", var.name))?;
            let lo = self.tok().clone();
            if lo.tok != Tok::Int(0) {
                return Err(self
                    .unexpected(&format!("`0`: {which} dimensions start at 0"))
                    .with_hint(format!("write `{} in 0..N`", var.name)));
            }
            self.bump();
            self.expect(&Tok::DotDot, "`..` between the bounds (`0..N`, `N` exclusive)")?;
            let hi = self.tok().clone();
            let extent =
                match hi.tok {
                    Tok::Int(n) if (1..=i64::from(i32::MAX)).contains(&n) => n as u32,
                    _ => return Err(self
                        .unexpected(&format!(
                            "the extent of `{}`: an integer from 1 to {}",
                            var.name,
                            i32::MAX
                        ))
                        .with_note(
                            "launch dimensions are fixed when the kernel is launched, so they are literals",
                        )),
                };
            self.bump();
            dims.push(LaunchDim { var: var.name, extent, span: self.span_from(var.span.start as usize) });
            if !self.eat(&Tok::Comma) && *self.peek() != Tok::RParen {
                return Err(self.unexpected(&format!("`,` or `)` in the {which} dimensions")));
            }
        }
        self.nest -= 1;
        let close = self.bump();
        if dims.is_empty() || dims.len() > MAX_LAUNCH_DIMS {
            return Err(Diagnostic::error(format!(
                "a {which} has 1 to {MAX_LAUNCH_DIMS} dimensions, found {}",
                dims.len()
            ))
            .at(Span::new(start, close.span.end as usize))
            .with_expected(format!("x, y and z dimensions at most, e.g. `{example}`")));
        }
        Ok(dims)
    }

    fn if_stmt(&mut self) -> PResult<Stmt> {
        let kw = self.bump();
        let cond = self.expr()?;
        let span = self.span_from(kw.span.start as usize);
        let then_body = self.block("`if`")?;
        // `else` may follow the `}` on the same line or on the next one.
        if *self.peek() == Tok::Newline && matches!(self.peek2(), Tok::Ident(w) if w == "else") {
            self.bump();
        }
        let mut else_body = Vec::new();
        if self.is_ident("else") {
            self.bump();
            if self.is_ident("if") {
                self.enter()?;
                else_body.push(self.if_stmt()?);
                self.leave();
            } else {
                else_body = self.block("`else`")?;
            }
        }
        Ok(Stmt::If { cond, then_body, else_body, span })
    }

    /// `buf[i, ...] = value`, after the buffer name.
    fn store(&mut self, buf: Name) -> PResult<Stmt> {
        let start = buf.span.start as usize;
        let (index, _) = self.index_list(&buf.name)?;
        if *self.peek() == Tok::EqEq {
            return Err(self.unexpected("`=`").with_hint("a store is written `buf[i] = value`"));
        }
        self.expect(&Tok::Eq, &format!("`=` and the value to store into `{}`", buf.name))?;
        let value = self.expr()?;
        Ok(Stmt::Store { buf, index, value, span: self.span_from(start) })
    }

    /// `[e, e, ...]` after a buffer name, with the levels its indices span.
    fn index_list(&mut self, buf: &str) -> PResult<(Vec<Expr>, usize)> {
        self.expect(&Tok::LBracket, "`[`")?;
        self.nest += 1;
        let mut index = Vec::new();
        let mut levels = 0;
        while *self.peek() != Tok::RBracket {
            let (i, i_levels) = self.expr_levels()?;
            index.push(i);
            levels = levels.max(i_levels);
            if !self.eat(&Tok::Comma) && *self.peek() != Tok::RBracket {
                return Err(self.unexpected(&format!("`,` or `]` in the index of `{buf}`")));
            }
        }
        self.nest -= 1;
        self.bump();
        Ok((index, levels))
    }

    // ---- expressions ----

    fn expr(&mut self) -> PResult<Expr> {
        Ok(self.expr_levels()?.0)
    }

    /// An expression and the levels it spans (see `nesting`).
    fn expr_levels(&mut self) -> PResult<(Expr, usize)> {
        self.enter()?;
        let e = self.binary(0);
        self.leave();
        e
    }

    /// Precedence climbing over the binary levels: 0 `||`, 1 `&&`, 2 comparisons (not chaining),
    /// 3 `+ -`, 4 `* / %`.
    fn binary(&mut self, level: u8) -> PResult<(Expr, usize)> {
        if level > 4 {
            return self.unary();
        }
        let (mut lhs, mut levels) = self.binary(level + 1)?;
        while let Some(op) = bin_op(self.peek()).filter(|&op| prec(op) == level) {
            let op_span = self.bump().span;
            // An operator at the end of a line continues the expression on the next.
            while *self.peek() == Tok::Newline {
                self.bump();
            }
            let (rhs, rhs_levels) = self.binary(level + 1)?;
            levels = self.operator_levels(levels.max(rhs_levels), op_span)?;
            let span = lhs.span.to(rhs.span);
            lhs = Expr { kind: ExprKind::Binary { op, lhs: Box::new(lhs), rhs: Box::new(rhs) }, span };
            if level == 2 {
                if let Some(op2) = bin_op(self.peek()).filter(|&o| prec(o) == 2) {
                    let t = self.tok();
                    return Err(Diagnostic::error(format!(
                        "comparisons do not chain: found `{}`",
                        op2.symbol()
                    ))
                    .at(t.span)
                    .with_expected("`&&`, `||` or the end of the expression")
                    .with_hint("write `a < b && b < c`, or parenthesise one comparison"));
                }
                break;
            }
        }
        Ok((lhs, levels))
    }

    fn unary(&mut self) -> PResult<(Expr, usize)> {
        let t = self.tok().clone();
        let start = t.span.start as usize;
        match t.tok {
            Tok::Minus => {
                self.bump();
                // `-` directly before a literal makes a negative literal (this is how
                // -2147483648 is written); `-(3)` stays a negation.
                let next = self.tok().clone();
                let arg = match next.tok {
                    Tok::Int(n) => {
                        self.bump();
                        let span = self.span_from(start);
                        let v = i32::try_from(-n).map_err(|_| int_range(-n, span))?;
                        return Ok((Expr { kind: ExprKind::Int(v), span }, 1));
                    }
                    Tok::Float(_) | Tok::Ident(_) => self.primary()?,
                    _ => {
                        self.enter()?;
                        let arg = self.unary()?;
                        self.leave();
                        arg
                    }
                };
                let (arg, arg_levels) = arg;
                let (kind, levels) = match arg.kind {
                    ExprKind::Float(x) if matches!(next.tok, Tok::Float(_) | Tok::Ident(_)) => {
                        (ExprKind::Float(-x), arg_levels)
                    }
                    _ => (
                        ExprKind::Unary { op: UnOp::Neg, arg: Box::new(arg) },
                        self.operator_levels(arg_levels, t.span)?,
                    ),
                };
                Ok((Expr { kind, span: self.span_from(start) }, levels))
            }
            Tok::Bang => {
                self.bump();
                self.enter()?;
                let (arg, arg_levels) = self.unary()?;
                self.leave();
                let levels = self.operator_levels(arg_levels, t.span)?;
                Ok((
                    Expr {
                        kind: ExprKind::Unary { op: UnOp::Not, arg: Box::new(arg) },
                        span: self.span_from(start),
                    },
                    levels,
                ))
            }
            _ => self.primary(),
        }
    }

    fn primary(&mut self) -> PResult<(Expr, usize)> {
        let t = self.tok().clone();
        let start = t.span.start as usize;
        // The levels the operands span: none for a literal or a variable.
        let mut operands = 0;
        let kind = match &t.tok {
            Tok::Int(n) => {
                self.bump();
                ExprKind::Int(i32::try_from(*n).map_err(|_| int_range(*n, t.span))?)
            }
            Tok::Float(_) => {
                self.bump();
                // Read the f32 from the text itself: going through f64 could round twice.
                let text: String = self.src.text[t.span.start as usize..t.span.end as usize]
                    .chars()
                    .filter(|&c| c != '_')
                    .collect();
                let x = text.parse::<f32>().map_err(|_| {
                    Diagnostic::error(format!("malformed number `{text}`"))
                        .at(t.span)
                        .with_expected("an f32 literal")
                })?;
                ExprKind::Float(x)
            }
            Tok::LParen => {
                self.bump();
                self.nest += 1;
                let e = self.expr_levels()?;
                self.nest -= 1;
                self.expect(&Tok::RParen, "`)` to close the parenthesis")?;
                // The parentheses only group: the node keeps its own span.
                return Ok(e);
            }
            Tok::Ident(w) => {
                let w = w.clone();
                self.bump();
                match w.as_str() {
                    "true" => ExprKind::Bool(true),
                    "false" => ExprKind::Bool(false),
                    "inf" => ExprKind::Float(f32::INFINITY),
                    "nan" => ExprKind::Float(f32::NAN),
                    _ if *self.peek() == Tok::LBracket => {
                        let (index, levels) = self.index_list(&w)?;
                        operands = levels;
                        ExprKind::Load { buf: Name { name: w, span: t.span }, index }
                    }
                    _ if *self.peek() == Tok::LParen => {
                        let (kind, levels) = self.call(&w, t.span)?;
                        operands = levels;
                        kind
                    }
                    _ if KEYWORDS.contains(&w.as_str()) => {
                        return Err(Diagnostic::error(format!("expected an expression, found keyword `{w}`"))
                            .at(t.span)
                            .with_expected("an expression"))
                    }
                    _ => ExprKind::Var(w),
                }
            }
            _ => return Err(self.unexpected("an expression")),
        };
        let levels = if operands == 0 { 1 } else { self.operator_levels(operands, t.span)? };
        Ok((Expr { kind, span: self.span_from(start) }, levels))
    }

    /// `name(args)`: a cast, `select`, or an intrinsic; with the levels its arguments span.
    fn call(&mut self, name: &str, name_span: Span) -> PResult<(ExprKind, usize)> {
        let known = Intrinsic::from_name(name);
        if known.is_none() && !matches!(name, "select" | "f32" | "i32") {
            let candidates =
                Intrinsic::ALL.iter().map(|i| i.name()).chain(["select", "f32", "i32"]).collect::<Vec<_>>();
            let mut msg = format!("unknown function `{name}`");
            if let Some(h) = did_you_mean(name, candidates.iter().copied()) {
                msg = format!("{msg}: {h}");
            }
            return Err(Diagnostic::error(msg)
                .at(name_span)
                .with_expected(format!("one of {}", candidates.join(", "))));
        }
        self.bump();
        self.nest += 1;
        let mut args = Vec::new();
        let mut levels = 0;
        while *self.peek() != Tok::RParen {
            let (arg, arg_levels) = self.expr_levels()?;
            args.push(arg);
            levels = levels.max(arg_levels);
            if !self.eat(&Tok::Comma) && *self.peek() != Tok::RParen {
                return Err(self.unexpected(&format!("`,` or `)` in the arguments of `{name}`")));
            }
        }
        self.nest -= 1;
        let close = self.bump();
        let want = match (known, name) {
            (Some(f), _) => f.arity(),
            (None, "select") => 3,
            _ => 1,
        };
        if args.len() != want {
            let s = if want == 1 { "" } else { "s" };
            return Err(Diagnostic::error(format!(
                "`{name}` takes {want} argument{s}, found {}",
                args.len()
            ))
            .at(name_span.to(close.span))
            .with_expected(format!("{want} argument{s}")));
        }
        if let Some(func) = known {
            return Ok((ExprKind::Call { func, args }, levels));
        }
        let mut args = args.into_iter().map(Box::new);
        let kind = match (name, args.next(), args.next(), args.next()) {
            ("select", Some(cond), Some(then_val), Some(else_val)) => {
                ExprKind::Select { cond, then_val, else_val }
            }
            ("f32", Some(arg), None, None) => ExprKind::Cast { to: Ty::F32, arg },
            (_, Some(arg), None, None) => ExprKind::Cast { to: Ty::I32, arg },
            _ => return Err(Diagnostic::error(format!("wrong arguments to `{name}`")).at(name_span)),
        };
        Ok((kind, levels))
    }
}

fn int_range(n: i64, span: Span) -> Diagnostic {
    Diagnostic::error(format!("integer {n} does not fit in i32")).at(span).with_expected(format!(
        "an integer between {} and {}",
        i32::MIN,
        i32::MAX
    ))
}

fn bin_op(t: &Tok) -> Option<BinOp> {
    Some(match t {
        Tok::OrOr => BinOp::Or,
        Tok::AndAnd => BinOp::And,
        Tok::Lt => BinOp::Lt,
        Tok::Le => BinOp::Le,
        Tok::Gt => BinOp::Gt,
        Tok::Ge => BinOp::Ge,
        Tok::EqEq => BinOp::Eq,
        Tok::Ne => BinOp::Ne,
        Tok::Plus => BinOp::Add,
        Tok::Minus => BinOp::Sub,
        Tok::Star => BinOp::Mul,
        Tok::Slash => BinOp::Div,
        Tok::Percent => BinOp::Rem,
        _ => return None,
    })
}

/// Binding level of a binary operator: 0 `||` (loosest) to 4 `* / %` (tightest).
pub(crate) fn prec(op: BinOp) -> u8 {
    match op {
        BinOp::Or => 0,
        BinOp::And => 1,
        BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge | BinOp::Eq | BinOp::Ne => 2,
        BinOp::Add | BinOp::Sub => 3,
        BinOp::Mul | BinOp::Div | BinOp::Rem => 4,
    }
}
