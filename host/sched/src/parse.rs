//! The trace reader: text into a [`Trace`] (the grammar is in `docs/schedules.md`).
//!
//! What this reader must keep true: it never panics; every error is one diagnostic located at
//! the offending word, saying what was found and what was expected (with "did you mean" for a
//! misspelt primitive); a bare loop name resolves to the kernel of the loop written before it.

use crate::trace::{Axis, BufRef, LayoutDim, LoopRef, Prim, Step, Trace, PRIMITIVES};
use ekb_ir::diag::did_you_mean;
use ekb_ir::l1::parse::is_valid_name;
use ekb_ir::l1::Scope;
use ekb_ir::{Diagnostic, SourceFile, Span};

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    /// A primitive, a loop (`k.v`, `v@2`), a name or a number.
    Word(String),
    Arrow,
    Comma,
    /// `/` and `%` of a packed layout (`0/4`, `0%4`).
    Slash,
    Percent,
    /// `;` or a new line.
    End,
}

impl Tok {
    fn describe(&self) -> String {
        match self {
            Tok::Word(w) => format!("`{w}`"),
            Tok::Arrow => "`->`".into(),
            Tok::Comma => "`,`".into(),
            Tok::Slash => "`/`".into(),
            Tok::Percent => "`%`".into(),
            Tok::End => "the end of the step".into(),
        }
    }
}

/// Reads a trace. Errors are located in `src`.
pub fn parse(src: &SourceFile) -> Result<Trace, Diagnostic> {
    let toks = lex(&src.text).map_err(|d| src.locate(d))?;
    let mut p = Parser { toks, pos: 0, kernel: None };
    p.trace().map_err(|d| src.locate(d))
}

fn lex(text: &str) -> Result<Vec<(Tok, Span)>, Diagnostic> {
    let mut out = Vec::new();
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let word = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c == b'.' || c == b'@';
        match c {
            b'#' => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'\n' | b';' => {
                out.push((Tok::End, Span::new(i, i + 1)));
                i += 1;
            }
            b' ' | b'\t' | b'\r' => i += 1,
            b',' => {
                out.push((Tok::Comma, Span::new(i, i + 1)));
                i += 1;
            }
            b'/' | b'%' => {
                out.push((if c == b'/' { Tok::Slash } else { Tok::Percent }, Span::new(i, i + 1)));
                i += 1;
            }
            b'-' if b.get(i + 1) == Some(&b'>') => {
                out.push((Tok::Arrow, Span::new(i, i + 2)));
                i += 2;
            }
            c if word(c) => {
                let start = i;
                while i < b.len() && word(b[i]) {
                    i += 1;
                }
                out.push((Tok::Word(text[start..i].to_string()), Span::new(start, i)));
            }
            _ => {
                let ch = text[i..].chars().next().unwrap_or('?');
                return Err(Diagnostic::error(format!("unexpected character `{ch}` in a schedule trace"))
                    .at(Span::new(i, i + ch.len_utf8()))
                    .with_expected(
                        "primitive names, loops (`kernel.var`), names, numbers, `,`, `->`, `/`, `%`, `;`",
                    ));
            }
        }
    }
    out.push((Tok::End, Span::new(b.len(), b.len())));
    Ok(out)
}

struct Parser {
    toks: Vec<(Tok, Span)>,
    pos: usize,
    /// The kernel of the last loop written: what a bare loop name refers to.
    kernel: Option<String>,
}

type R<T> = Result<T, Diagnostic>;

impl Parser {
    fn peek(&self) -> &(Tok, Span) {
        &self.toks[self.pos.min(self.toks.len() - 1)]
    }

    fn next(&mut self) -> (Tok, Span) {
        let t = self.peek().clone();
        self.pos += 1;
        t
    }

    fn unexpected(&self, expected: &str) -> Diagnostic {
        let (t, span) = self.peek();
        Diagnostic::error(format!("expected {expected}, found {}", t.describe()))
            .at(*span)
            .with_expected(expected)
    }

    fn trace(&mut self) -> R<Trace> {
        let mut steps = Vec::new();
        loop {
            while self.peek().0 == Tok::End && self.pos + 1 < self.toks.len() {
                self.pos += 1;
            }
            if self.pos + 1 >= self.toks.len() {
                return Ok(Trace { steps });
            }
            steps.push(self.step()?);
            if self.peek().0 != Tok::End {
                return Err(self.unexpected("the end of the step (a new line or `;`)"));
            }
        }
    }

    fn step(&mut self) -> R<Step> {
        let (tok, start) = self.next();
        let Tok::Word(name) = tok else {
            self.pos -= 1;
            return Err(self.unexpected("a primitive"));
        };
        let prim = match name.as_str() {
            "split" => {
                let lp = self.loop_ref()?;
                self.keyword("by")?;
                let factor = self.factor()?;
                self.arrow()?;
                let outer = self.name()?;
                self.comma()?;
                let inner = self.name()?;
                Prim::Split { lp, factor, outer, inner }
            }
            "reorder" => {
                let mut loops = vec![self.loop_ref()?];
                while self.peek().0 == Tok::Comma {
                    self.pos += 1;
                    loops.push(self.loop_ref()?);
                }
                if loops.len() < 2 {
                    return Err(self.unexpected("`,` and another loop (reorder names at least two)"));
                }
                Prim::Reorder { loops }
            }
            "fuse" => {
                let outer = self.loop_ref()?;
                self.comma()?;
                let inner = self.loop_ref()?;
                self.arrow()?;
                Prim::Fuse { outer, inner, fused: self.name()? }
            }
            "parallel" => Prim::Parallel { lp: self.loop_ref()? },
            "vectorize" => Prim::Vectorize { lp: self.loop_ref()? },
            "unroll" => Prim::Unroll { lp: self.loop_ref()? },
            "compute_inline" => Prim::ComputeInline { buffer: self.name()? },
            "bind" => Prim::Bind { lp: self.loop_ref()?, axis: self.axis()? },
            "rfactor" => {
                let lp = self.loop_ref()?;
                self.arrow()?;
                let partials = self.name()?;
                self.comma()?;
                Prim::Rfactor { lp, partials, combine: self.name()? }
            }
            "pad" => {
                let buf = self.buf_ref()?;
                self.keyword("by")?;
                Prim::Pad { buf, by: self.positive("padding")? }
            }
            "storage_align" => {
                let buf = self.buf_ref()?;
                self.keyword("axis")?;
                let axis = self.natural("dimension")?;
                self.keyword("factor")?;
                let factor = self.positive("alignment factor")?;
                self.keyword("offset")?;
                Prim::StorageAlign { buf, axis, factor, offset: self.natural("offset")? }
            }
            "pack" => {
                let buffer = self.name()?;
                self.keyword("at")?;
                let lp = self.loop_ref()?;
                self.arrow()?;
                let packed = self.name()?;
                self.keyword("layout")?;
                let mut layout = vec![self.layout_dim()?];
                while self.peek().0 == Tok::Comma {
                    self.pos += 1;
                    layout.push(self.layout_dim()?);
                }
                Prim::Pack { buffer, lp, packed, layout }
            }
            "decompose_reduction" => Prim::DecomposeReduction { lp: self.loop_ref()? },
            "cache_read" | "cache_write" => {
                let buffer = self.name()?;
                self.keyword("at")?;
                let at = self.loop_ref()?;
                self.arrow()?;
                let cache = self.name()?;
                let scope = self.scope()?;
                if name == "cache_read" {
                    Prim::CacheRead { buffer, at, cache, scope }
                } else {
                    Prim::CacheWrite { buffer, at, cache, scope }
                }
            }
            "compute_at" | "reverse_compute_at" => {
                let buffer = self.name()?;
                self.keyword("at")?;
                let at = self.loop_ref()?;
                if name == "compute_at" {
                    Prim::ComputeAt { buffer, at }
                } else {
                    Prim::ReverseComputeAt { buffer, at }
                }
            }
            "reverse_compute_inline" => Prim::ReverseComputeInline { buffer: self.name()? },
            other => {
                let mut d = Diagnostic::error(format!("unknown schedule primitive `{other}`"))
                    .at(start)
                    .with_expected(format!("one of {}", PRIMITIVES.map(|p| format!("`{p}`")).join(", ")));
                d.hint = did_you_mean(other, PRIMITIVES);
                return Err(d);
            }
        };
        let end = self.toks[self.pos - 1].1;
        Ok(Step { prim, span: start.to(end) })
    }

    fn word(&mut self, expected: &str) -> R<(String, Span)> {
        match self.peek().clone() {
            (Tok::Word(w), span) => {
                self.pos += 1;
                Ok((w, span))
            }
            _ => Err(self.unexpected(expected)),
        }
    }

    fn keyword(&mut self, kw: &str) -> R<()> {
        match self.peek() {
            (Tok::Word(w), _) if w == kw => {
                self.pos += 1;
                Ok(())
            }
            _ => Err(self.unexpected(&format!("`{kw}`"))),
        }
    }

    fn comma(&mut self) -> R<()> {
        if self.peek().0 != Tok::Comma {
            return Err(self.unexpected("`,`"));
        }
        self.pos += 1;
        Ok(())
    }

    fn arrow(&mut self) -> R<()> {
        if self.peek().0 != Tok::Arrow {
            return Err(self.unexpected("`->` and the names of the new loops"));
        }
        self.pos += 1;
        Ok(())
    }

    /// A new name (a loop variable or a buffer).
    fn name(&mut self) -> R<String> {
        let (w, span) = self.word("a name")?;
        if !is_valid_name(&w) {
            return Err(Diagnostic::error(format!("`{w}` cannot name a loop or a buffer"))
                .at(span)
                .with_expected("letters, digits and `_`, not starting with a digit, and not an L1 keyword"));
        }
        Ok(w)
    }

    /// A split factor: a positive integer.
    fn factor(&mut self) -> R<u32> {
        self.positive("split factor")
    }

    /// A positive integer that fits i32, `what` saying which.
    fn positive(&mut self, what: &str) -> R<u32> {
        let (w, span) = self.word(&format!("a {what} (a positive integer)"))?;
        match w.parse::<u32>() {
            Ok(f) if f >= 1 && f <= i32::MAX as u32 => Ok(f),
            _ => Err(Diagnostic::error(format!("{what} `{w}` is not a positive integer"))
                .at(span)
                .with_expected(format!("an integer in 1..={}", i32::MAX))),
        }
    }

    /// A non-negative integer that fits i32, `what` saying which.
    fn natural(&mut self, what: &str) -> R<u32> {
        let (w, span) = self.word(&format!("a {what} (a non-negative integer)"))?;
        match w.parse::<u32>() {
            Ok(f) if f <= i32::MAX as u32 => Ok(f),
            _ => Err(Diagnostic::error(format!("{what} `{w}` is not a non-negative integer"))
                .at(span)
                .with_expected(format!("an integer in 0..={}", i32::MAX))),
        }
    }

    /// A launch axis: `blockIdx.x` .. `threadIdx.z`.
    fn axis(&mut self) -> R<Axis> {
        let (w, span) = self.word("a launch axis (`blockIdx.x`, `threadIdx.x`, ..)")?;
        Axis::from_name(&w).ok_or_else(|| {
            let mut d = Diagnostic::error(format!("`{w}` is not a launch axis"))
                .at(span)
                .with_expected(format!("one of {}", Axis::NAMES.map(|a| format!("`{a}`")).join(", ")));
            d.hint = did_you_mean(&w, Axis::NAMES);
            d
        })
    }

    /// `kernel.buf`, with an optional `@n` (always with the kernel: it does not change the
    /// kernel a bare loop name refers to).
    fn buf_ref(&mut self) -> R<BufRef> {
        let (w, span) = self.word("an allocation (`kernel.buf`)")?;
        let bad = |why: &str| {
            Diagnostic::error(format!("`{w}` is not an allocation: {why}"))
                .at(span)
                .with_expected("`kernel.buf`, or `kernel.buf@N` for the N-th allocation named `buf`")
        };
        let (path, nth) = match w.split_once('@') {
            Some((p, n)) => match n.parse::<u32>() {
                Ok(n) if n >= 1 => (p, Some(n)),
                _ => return Err(bad("the number after `@` must be a positive integer")),
            },
            None => (w.as_str(), None),
        };
        let Some((kernel, buf)) = path.split_once('.') else {
            return Err(bad("an allocation is written with its kernel"));
        };
        if !is_valid_name(kernel) || !is_valid_name(buf) {
            return Err(bad("the kernel and the buffer must be identifiers"));
        }
        Ok(BufRef { kernel: kernel.to_string(), buf: buf.to_string(), nth })
    }

    /// One dimension of a packed layout: `d`, `d/F` or `d%F`.
    fn layout_dim(&mut self) -> R<LayoutDim> {
        let (w, span) = self.word("a dimension of the buffer (`0`, `1`, ..), or its tiles (`0/4`, `0%4`)")?;
        let d = w.parse::<usize>().map_err(|_| {
            Diagnostic::error(format!("`{w}` is not a dimension of the packed buffer"))
                .at(span)
                .with_expected("a dimension's position, from 0, as in `layout 1, 0` for a transpose")
        })?;
        Ok(match self.peek().0 {
            Tok::Slash => {
                self.pos += 1;
                LayoutDim::Tile(d, self.positive("tile size")?)
            }
            Tok::Percent => {
                self.pos += 1;
                LayoutDim::InTile(d, self.positive("tile size")?)
            }
            _ => LayoutDim::Dim(d),
        })
    }

    /// Where a new buffer lives: `local` or `shared`.
    fn scope(&mut self) -> R<Scope> {
        match self.word("`local` or `shared`")? {
            (w, _) if w == "local" => Ok(Scope::Local),
            (w, _) if w == "shared" => Ok(Scope::Shared),
            (w, span) => Err(Diagnostic::error(format!("`{w}` is not a memory scope"))
                .at(span)
                .with_expected("`local` (the running thread's own) or `shared` (a GPU block's)")),
        }
    }

    /// `kernel.var`, `var`, with an optional `@n`.
    fn loop_ref(&mut self) -> R<LoopRef> {
        let (w, span) = self.word("a loop (`kernel.var`, or `var` for the kernel named before)")?;
        let bad = |why: &str| {
            Diagnostic::error(format!("`{w}` is not a loop: {why}"))
                .at(span)
                .with_expected("`kernel.var`, `var`, or `kernel.var@N` for the N-th loop named `var`")
        };
        let (path, nth) = match w.split_once('@') {
            Some((p, n)) => match n.parse::<u32>() {
                Ok(n) if n >= 1 => (p, Some(n)),
                _ => return Err(bad("the number after `@` must be a positive integer")),
            },
            None => (w.as_str(), None),
        };
        let (kernel, var) = match path.split_once('.') {
            Some((k, v)) => (k.to_string(), v),
            None => match &self.kernel {
                Some(k) => (k.clone(), path),
                None => {
                    return Err(Diagnostic::error(format!(
                        "loop `{path}` names no kernel, and no earlier step named one"
                    ))
                    .at(span)
                    .with_hint(format!(
                        "write `KERNEL.{path}` (the kernel names are in `ekb lower --schedule naive`)"
                    )))
                }
            },
        };
        if !is_valid_name(&kernel) || !is_valid_name(var) {
            return Err(bad("the kernel and the variable must be identifiers"));
        }
        self.kernel = Some(kernel.clone());
        Ok(LoopRef { kernel, var: var.to_string(), nth })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(text: &str) -> Result<Trace, Diagnostic> {
        parse(&SourceFile::new("t.trace", text))
    }

    #[test]
    fn traces_round_trip_and_bare_loops_take_the_previous_kernel() {
        let text = "# tile\nsplit k0_matmul.j by 16 -> j_o, j_i; vectorize j_i\nparallel k1_relu.i0@2\n\
                    reorder i0, j\nfuse k0_matmul.i, j_o -> f\ncompute_inline t0\nunroll f\n";
        let t = p(text).unwrap();
        assert_eq!(t.steps.len(), 7);
        assert_eq!(t.steps[1].prim, Prim::Vectorize { lp: LoopRef::new("k0_matmul", "j_i") });
        let Prim::Parallel { lp } = &t.steps[2].prim else { panic!() };
        assert_eq!((lp.kernel.as_str(), lp.nth), ("k1_relu", Some(2)));
        let Prim::Reorder { loops } = &t.steps[3].prim else { panic!() };
        assert_eq!(loops[1], LoopRef::new("k1_relu", "j"));
        assert_eq!(t.steps[6].prim, Prim::Unroll { lp: LoopRef::new("k0_matmul", "f") });
        let printed = t.print();
        assert!(printed.starts_with("split k0_matmul.j by 16 -> j_o, j_i\nvectorize j_i\n"), "{printed}");
        assert_eq!(p(&printed).unwrap(), t);
        assert_eq!(p(&printed).unwrap().print(), printed);
    }

    #[test]
    fn errors_name_the_line_and_what_was_expected() {
        let d = p("split k.j by 0 -> a, b").unwrap_err();
        assert!(d.message.contains("split factor `0`"), "{d}");
        let d = p("vectorise k.j").unwrap_err();
        assert_eq!(d.hint.as_deref(), Some("did you mean `vectorize`?"));
        let d = p("\n\nvectorize j").unwrap_err();
        assert!(d.message.contains("names no kernel"), "{d}");
        assert_eq!(d.location.as_ref().unwrap().line, 3);
        let d = p("split k.j 16 -> a, b").unwrap_err();
        assert!(d.message.contains("expected `by`"), "{d}");
        let d = p("parallel k.i k.j").unwrap_err();
        assert!(d.message.contains("the end of the step"), "{d}");
        let d = p("fuse k.i, j -> for").unwrap_err();
        assert!(d.message.contains("`for` cannot name"), "{d}");
        assert!(p("reorder k.i").is_err());
        assert!(p("parallel k.i $").unwrap_err().message.contains("unexpected character `$`"));
        assert!(p("").unwrap().steps.is_empty());
    }

    /// `text` parses, prints as `printed`, and the printed text parses back to the same trace.
    fn round_trip(text: &str, printed: &str) -> Trace {
        let t = p(text).unwrap();
        assert_eq!(t.print(), printed);
        assert_eq!(p(printed).unwrap(), t);
        t
    }

    #[test]
    fn bind_names_a_launch_axis() {
        let t = round_trip(
            "bind k0_add.i0 blockIdx.x; bind i1 threadIdx.y",
            "bind k0_add.i0 blockIdx.x\nbind i1 threadIdx.y\n",
        );
        let axis = Axis { thread: true, dim: 1 };
        assert_eq!(t.steps[1].prim, Prim::Bind { lp: LoopRef::new("k0_add", "i1"), axis });
        let d = p("bind k.i blockIdx.w").unwrap_err();
        assert!(d.message.contains("`blockIdx.w` is not a launch axis"), "{d}");
        assert_eq!(d.hint.as_deref(), Some("did you mean `blockIdx.x`?"));
    }

    #[test]
    fn rfactor_names_the_partial_results_and_the_combining_loop() {
        let t = round_trip("rfactor k0_sum.ki -> rf, c\nunroll c", "rfactor k0_sum.ki -> rf, c\nunroll c\n");
        let lp = LoopRef::new("k0_sum", "ki");
        assert_eq!(t.steps[0].prim, Prim::Rfactor { lp, partials: "rf".into(), combine: "c".into() });
        let d = p("rfactor k.i -> rf").unwrap_err();
        assert!(d.message.contains("expected `,`"), "{d}");
    }

    #[test]
    fn pad_names_an_allocation_with_its_kernel() {
        // A pad names its kernel, so the bare loop after it is still one of k0_sum.
        let t = round_trip(
            "split k0_sum.r0 by 4 -> o, i; pad k1.tile@2 by 1; unroll i",
            "split k0_sum.r0 by 4 -> o, i\npad k1.tile@2 by 1\nunroll i\n",
        );
        let buf = BufRef { kernel: "k1".into(), buf: "tile".into(), nth: Some(2) };
        assert_eq!(t.steps[1].prim, Prim::Pad { buf, by: 1 });
        assert_eq!(t.steps[2].prim, Prim::Unroll { lp: LoopRef::new("k0_sum", "i") });
        let d = p("pad tile by 1").unwrap_err();
        assert!(d.message.contains("written with its kernel"), "{d}");
        let d = p("pad k.tile by 0").unwrap_err();
        assert!(d.message.contains("padding `0` is not a positive integer"), "{d}");
    }

    #[test]
    fn storage_align_names_an_allocation_an_axis_a_factor_and_an_offset() {
        let t = round_trip(
            "storage_align k1.tile axis 0 factor 32 offset 1; unroll k1.i",
            "storage_align k1.tile axis 0 factor 32 offset 1\nunroll k1.i\n",
        );
        let buf = BufRef { kernel: "k1".into(), buf: "tile".into(), nth: None };
        assert_eq!(t.steps[0].prim, Prim::StorageAlign { buf, axis: 0, factor: 32, offset: 1 });
        let d = p("storage_align k.t axis 0 factor 0 offset 0").unwrap_err();
        assert!(d.message.contains("alignment factor `0` is not a positive integer"), "{d}");
        let d = p("storage_align k.t axis x factor 8 offset 0").unwrap_err();
        assert!(d.message.contains("dimension `x` is not a non-negative integer"), "{d}");
        let d = p("storage_align k.t axis 0 factor 8").unwrap_err();
        assert!(d.message.contains("expected `offset`"), "{d}");
    }

    #[test]
    fn pack_takes_a_layout_of_dimensions_and_tiles() {
        let t = round_trip(
            "pack b at k0_matmul.i0 -> bp layout 0 / 4, 1, 0%4",
            "pack b at k0_matmul.i0 -> bp layout 0/4, 1, 0%4\n",
        );
        let Prim::Pack { buffer, layout, .. } = &t.steps[0].prim else { panic!() };
        assert_eq!(buffer, "b");
        assert_eq!(layout, &[LayoutDim::Tile(0, 4), LayoutDim::Dim(1), LayoutDim::InTile(0, 4)]);
        let d = p("pack b at k.i -> bp layout x").unwrap_err();
        assert!(d.message.contains("`x` is not a dimension"), "{d}");
        let d = p("pack b at k.i -> bp layout 0/").unwrap_err();
        assert!(d.message.contains("expected a tile size"), "{d}");
    }

    #[test]
    fn staging_steps_name_a_buffer_a_loop_and_a_scope() {
        let text = "decompose_reduction k0_matmul.k\ncache_read b at k0_matmul.jo -> bl shared\n\
                    cache_write y at k -> yl local\ncompute_at bl at k1.j\nreverse_compute_inline t0\n";
        let t = p(text).unwrap();
        assert_eq!(t.steps[0].prim, Prim::DecomposeReduction { lp: LoopRef::new("k0_matmul", "k") });
        let Prim::CacheWrite { buffer, at, cache, scope } = &t.steps[2].prim else { panic!() };
        assert_eq!(
            (buffer.as_str(), at, cache.as_str(), *scope),
            ("y", &LoopRef::new("k0_matmul", "k"), "yl", Scope::Local)
        );
        assert_eq!(t.steps[3].prim, Prim::ComputeAt { buffer: "bl".into(), at: LoopRef::new("k1", "j") });
        assert_eq!(t.steps[4].prim, Prim::ReverseComputeInline { buffer: "t0".into() });
        let rt = round_trip(
            "reverse_compute_at t at k1.io; unroll io",
            "reverse_compute_at t at k1.io\nunroll io\n",
        );
        assert_eq!(
            rt.steps[0].prim,
            Prim::ReverseComputeAt { buffer: "t".into(), at: LoopRef::new("k1", "io") }
        );
        assert_eq!(rt.steps[1].prim, Prim::Unroll { lp: LoopRef::new("k1", "io") });
        let printed = t.print();
        assert!(
            printed.contains("cache_read b at jo -> bl shared\ncache_write y at k -> yl local\n"),
            "{printed}"
        );
        assert_eq!(p(&printed).unwrap(), t);
        let d = p("cache_read b at k.j -> bl global").unwrap_err();
        assert!(d.message.contains("`global` is not a memory scope"), "{d}");
        let d = p("compute_at t k.j").unwrap_err();
        assert!(d.message.contains("expected `at`"), "{d}");
        let st = round_trip("cache_write y at k.h -> ys shared", "cache_write y at k.h -> ys shared\n");
        let Prim::CacheWrite { scope, .. } = &st.steps[0].prim else { panic!() };
        assert_eq!(*scope, Scope::Shared);
        let d = p("cache_write y at k.j local").unwrap_err();
        assert!(d.message.contains("expected `->`"), "{d}");
    }
}
