//! L1 parser diagnostics: every malformed input gives one located diagnostic saying what was
//! found and what was expected (with a "did you mean" where a word is misspelt), and no input
//! makes the parser panic.

use ekb_ir::l1::parse::parse;
use ekb_ir::{Diagnostic, SourceFile};
use proptest::prelude::*;

fn parse_err(text: &str) -> Diagnostic {
    match parse(&SourceFile::new("bad.ekl1", text)) {
        Ok(m) => panic!("parsed, expected an error: {m:?}"),
        Err(d) => d,
    }
}

/// The 1-based line and column of a diagnostic.
fn at(d: &Diagnostic) -> (usize, usize) {
    let l = d.location.as_ref().expect("located");
    (l.line, l.column)
}

const GOOD: &str = "module m {
  input x: f32[4]
  output y: f32[4]

  kernel k(x: f32[4] in, y: f32[4] out) {
    for i in 0..4 {
      y[i] = sqrt(x[i])
    }
  }

  run k(x, y)
}
";

#[test]
fn the_reference_module_parses() {
    let m = parse(&SourceFile::new("good.ekl1", GOOD)).unwrap();
    assert_eq!((m.buffers.len(), m.kernels.len(), m.plan.len()), (2, 1, 1));
}

#[test]
fn unknown_function_suggests_the_intrinsic() {
    let d = parse_err(&GOOD.replace("sqrt(", "sqr("));
    assert_eq!(d.message, "unknown function `sqr`: did you mean `sqrt`?");
    assert_eq!(at(&d), (7, 14));
    assert!(d.expected.as_deref().unwrap().contains(
        "exp, exp_ftz, log, sqrt, rsqrt, tanh, erf, pow, abs, min, max, floor, ceil, sin, cos, round, select"
    ));
    let text = d.to_string();
    assert!(text.contains("--> bad.ekl1:7:14") && text.contains("^^^"), "{text}");
}

#[test]
fn misspelt_keywords_suggest_the_keyword() {
    let d = parse_err(&GOOD.replace("for i", "fro i"));
    assert_eq!(d.message, "unknown statement `fro`: did you mean `for`?");
    assert_eq!(at(&d), (6, 5));
    let d = parse_err(&GOOD.replace("kernel k(", "kernal k("));
    assert_eq!(d.message, "unknown item `kernal`: did you mean `kernel`?");
    let d = parse_err(&GOOD.replace("x: f32[4] in,", "x: f32[4] inn,"));
    assert_eq!(d.hint.as_deref(), Some("did you mean `in`?"));
    assert_eq!(d.expected.as_deref(), Some("`in`, `out` or `inout` after the type of `x`"));
    let d = parse_err(&GOOD.replace("input x: f32[4]", "input x: f33[4]"));
    assert_eq!(d.message, "unknown element type `f33`: did you mean `f32`?");
    let d = parse_err(&GOOD.replace("module m", "graph m"));
    assert!(d.hint.clone().unwrap().contains("this is L0 text"));
}

#[test]
fn truncated_input_names_what_is_still_open() {
    let cut = &GOOD[..GOOD.find("y[i] =").unwrap() + 6];
    let d = parse_err(cut);
    assert_eq!(d.message, "unexpected end of file: expected an expression");
    assert_eq!(at(&d).0, 7);
    assert_eq!(
        d.notes,
        [
            "the file ends inside loop `i` opened at line 6, column 19",
            "the file ends inside kernel `k` opened at line 5, column 41",
            "the file ends inside module `m` opened at line 1, column 10",
        ]
    );
    assert!(d.hint.clone().unwrap().contains("truncated"));
    // Cut at every byte: always a diagnostic, never a panic (and never a success but the end).
    for n in 0..GOOD.len() {
        if GOOD.is_char_boundary(n) {
            let r = parse(&SourceFile::new("cut", &GOOD[..n]));
            assert!(r.is_err() || GOOD[n..].trim().is_empty(), "prefix of {n} bytes parsed");
        }
    }
}

#[test]
fn bad_tokens_and_misplaced_punctuation() {
    let d = parse_err(&GOOD.replace("y[i] = sqrt", "y[i] = $sqrt"));
    assert_eq!(d.message, "unexpected character `$`");
    assert_eq!(at(&d), (7, 14));
    let d = parse_err(&GOOD.replace("0..4", "0.."));
    assert_eq!(d.message, "expected an expression, found `{`");
    let d = parse_err(&GOOD.replace("y[i] =", "y[i] =="));
    assert_eq!(d.hint.as_deref(), Some("a store is written `buf[i] = value`"));
    let d = parse_err(&GOOD.replace("y[i] = sqrt(x[i])", "y[i] = sqrt(x[i]) x"));
    assert_eq!(d.message, "expected the end of the line (or `;`), found `x`");
    let d = parse_err(&GOOD.replace("for i in", "for i ="));
    assert_eq!(d.hint.as_deref(), Some("write `for i in 0..n {`"));
    let d = parse_err(&GOOD.replace("y[i] = sqrt(x[i])", "let v = 1 < 2 < 3"));
    assert_eq!(d.message, "comparisons do not chain: found `<`");
    let d = parse_err(&GOOD.replace("y[i] = sqrt(x[i])", "v = 1"));
    assert_eq!(d.message, "cannot assign to `v`");
    let d = parse_err(&GOOD.replace("y[i] = sqrt(x[i])", "let for = 1"));
    assert_eq!(d.message, "`for` is a keyword and cannot name a variable");
    let d = parse_err(&GOOD.replace("y[i] = sqrt(x[i])", "y[i] = max(x[i])"));
    assert_eq!(d.message, "`max` takes 2 arguments, found 1");
    let d = parse_err(&GOOD.replace("y[i] = sqrt(x[i])", "let v = 2147483648"));
    assert_eq!(d.message, "integer 2147483648 does not fit in i32");
    let d = parse_err(&GOOD.replace("    for i in 0..4 {", "  }\n  for i in 0..4 {"));
    assert_eq!(d.message, "`for` statement outside a kernel");
    let d = parse_err(&format!("{GOOD}module n {{\n}}\n"));
    assert_eq!(d.message, "expected end of file after the module's closing `}`, found `module`");
    let d = parse_err(&GOOD.replace("{\n      y[i]", "{\n      alloc t: f32[4] global\n      y[i]"));
    assert_eq!(d.message, "an `alloc` cannot be `global`");
}

#[test]
fn newlines_inside_brackets_and_after_operators_continue_the_line() {
    let text = GOOD.replace("y[i] = sqrt(x[i])", "y[\n  i] = sqrt(x[i]) +\n  1.0 *\n  max(\n  x[i],\n  0.0)");
    parse(&SourceFile::new("wrapped", text)).unwrap();
}

#[test]
fn deep_nesting_is_a_diagnostic_not_a_stack_overflow() {
    let deep = format!("{}x[i]{}", "(".repeat(5000), ")".repeat(5000));
    let d = parse_err(&GOOD.replace("sqrt(x[i])", &deep));
    assert!(d.message.contains("nesting deeper than"), "{d}");
    let negs = format!("{}x[i]", "-".repeat(5000));
    assert!(parse_err(&GOOD.replace("sqrt(x[i])", &negs)).message.contains("nesting deeper than"));
}

proptest! {
    #[test]
    fn arbitrary_text_never_panics(text in "\\PC{0,200}") {
        let _ = parse(&SourceFile::new("fuzz", text));
    }

    #[test]
    fn mutated_modules_never_panic(pos in 0usize..GOOD.len(), insert in "[a-z0-9(){}\\[\\],.;:=<>+*/%!&|\\- \n-]{0,6}", del in 0usize..8) {
        let mut text = GOOD.to_string();
        let pos = (0..=pos).rev().find(|&p| text.is_char_boundary(p)).unwrap_or(0);
        let end = (pos + del).min(text.len());
        text.replace_range(pos..end, &insert);
        let _ = parse(&SourceFile::new("fuzz", text));
    }
}
