//! Every code block with the info string `ekir` in `docs/ir.md` is a complete graph that parses
//! and checks (blocks showing errors use `text`).

use ekb_ir::l0::check::load;
use ekb_ir::SourceFile;
use std::path::PathBuf;

/// The `ekir` blocks of a markdown text, with the line each starts on.
fn ekir_blocks(markdown: &str) -> Vec<(usize, String)> {
    let mut blocks = Vec::new();
    let mut current: Option<(usize, String)> = None;
    for (i, line) in markdown.lines().enumerate() {
        let fence = line.trim_start().strip_prefix("```");
        match (&mut current, fence) {
            (None, Some(info)) if info.trim() == "ekir" => current = Some((i + 2, String::new())),
            (Some(_), Some(_)) => blocks.extend(current.take()),
            (Some((_, text)), None) => {
                text.push_str(line);
                text.push('\n');
            }
            _ => {}
        }
    }
    blocks
}

#[test]
fn every_ekir_block_in_the_docs_loads() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/ir.md");
    let md = std::fs::read_to_string(&path).expect("docs/ir.md is readable");
    let blocks = ekir_blocks(&md);
    assert!(blocks.len() >= 3, "expected several ekir blocks, found {}", blocks.len());
    for (line, text) in blocks {
        if let Err(ds) = load(&SourceFile::new(format!("docs/ir.md block at line {line}"), text)) {
            panic!("{}", ds.iter().map(|d| d.to_string()).collect::<String>());
        }
    }
}

#[test]
fn block_extraction_skips_other_languages() {
    let md = "```text\nnot ekir\n```\n\n```ekir\ngraph g() {}\n```\n";
    assert_eq!(ekir_blocks(md), vec![(6, "graph g() {}\n".to_string())]);
}
