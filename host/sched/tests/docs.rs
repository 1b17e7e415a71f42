//! The examples of `docs/schedules.md` are real: every `trace` block parses and round-trips,
//! the first applies to the `ekir` graph and keeps its outputs, and the second is refused with
//! the diagnostic of the `text` block. The `l1` blocks come in pairs, a module and what the next
//! `trace` block makes of it: each of those traces gives exactly the second module, which
//! computes what the first does.

mod support;

use ekb_ir::l1::print::print;
use ekb_ir::SourceFile;

/// The fenced blocks of a language, in order.
fn blocks(md: &str, lang: &str) -> Vec<String> {
    let fence = format!("```{lang}\n");
    let mut out = Vec::new();
    let mut rest = md;
    while let Some(start) = rest.find(&fence) {
        let body = &rest[start + fence.len()..];
        let end = body.find("```").expect("a closed block");
        out.push(body[..end].to_string());
        rest = &body[end..];
    }
    out
}

#[test]
fn schedule_doc_examples_hold() {
    let md =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/schedules.md")).unwrap();
    let graph = &blocks(&md, "ekir")[0];
    let traces = blocks(&md, "trace");
    let modules = blocks(&md, "l1");
    assert!(modules.len() >= 2 && modules.len().is_multiple_of(2), "the `l1` blocks come in pairs");
    assert_eq!(traces.len(), 2 + modules.len() / 2);
    for t in &traces {
        let parsed = ekb_sched::parse(&SourceFile::new("g.trace", t.clone())).unwrap();
        let printed = parsed.print();
        assert_eq!(ekb_sched::parse(&SourceFile::new("p.trace", printed)).unwrap(), parsed);
    }
    let p = support::load("g.ekir", graph).unwrap();
    let first = ekb_sched::parse(&SourceFile::new("g.trace", traces[0].clone())).unwrap();
    let scheduled = ekb_sched::apply(&p.module, &first).unwrap_or_else(|d| panic!("{d}"));
    support::same_on_interp(&p, &scheduled).unwrap();
    assert_eq!(scheduled.kernels.len(), 1);
    let src = SourceFile::new("g.trace", traces[1].clone());
    let second = ekb_sched::parse(&src).unwrap();
    let d = ekb_sched::apply(&p.module, &second).unwrap_err();
    assert_eq!(src.locate(d).to_string().trim_end(), blocks(&md, "text")[0].trim_end());
    for (i, (pair, t)) in modules.chunks(2).zip(&traces[2..]).enumerate() {
        let p = support::load(&format!("example{i}.l1"), &pair[0]).unwrap();
        let trace = ekb_sched::parse(&SourceFile::new("e.trace", t.clone())).unwrap();
        let scheduled = ekb_sched::apply(&p.module, &trace).unwrap_or_else(|d| panic!("{d}"));
        assert_eq!(print(&scheduled).trim_end(), pair[1].trim_end(), "example {i}: `{}`", t.trim_end());
        support::same_on_interp(&p, &scheduled).unwrap();
    }
}
