//! `docs/ir-l1.md` stays true: every `ekir-l1` block is a complete module that parses and
//! verifies with no findings, and the numbers and messages the text quotes for its examples are
//! what the verifier, the peak-memory computation and the interpreter produce.

use ekb_ir::l1::interp::run;
use ekb_ir::l1::memory::peak_memory;
use ekb_ir::l1::parse::parse;
use ekb_ir::l1::verify::verify;
use ekb_ir::l1::Module;
use ekb_ir::tensor::{BufData, Buffer};
use ekb_ir::types::{DType, TensorType};
use ekb_ir::SourceFile;
use std::collections::HashMap;

fn doc() -> String {
    std::fs::read_to_string(format!("{}/../../docs/ir-l1.md", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

/// The `ekir-l1` blocks, with the line each starts on.
fn blocks(doc: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut current: Option<(usize, String)> = None;
    for (n, line) in doc.lines().enumerate() {
        match &mut current {
            None if line.trim() == "```ekir-l1" => current = Some((n + 2, String::new())),
            Some(_) if line.trim() == "```" => out.extend(current.take()),
            Some((_, text)) => {
                text.push_str(line);
                text.push('\n');
            }
            None => {}
        }
    }
    assert!(current.is_none(), "unterminated ekir-l1 block");
    out
}

fn module_named(name: &str) -> Module {
    let doc = doc();
    blocks(&doc)
        .into_iter()
        .map(|(_, text)| parse(&SourceFile::new("doc", text)).unwrap())
        .find(|m| m.name == name)
        .unwrap_or_else(|| panic!("no ekir-l1 block defines module {name}"))
}

#[test]
fn every_ekir_l1_block_parses_and_verifies_clean() {
    let doc = doc();
    let blocks = blocks(&doc);
    assert!(blocks.len() >= 3, "expected the examples of the page");
    for (line, text) in blocks {
        let src = SourceFile::new(format!("docs/ir-l1.md, block at line {line}"), text);
        let m = parse(&src).unwrap_or_else(|d| panic!("{d}"));
        let ds = verify(&m, None);
        assert!(
            ds.is_empty(),
            "{}",
            ds.iter().map(|d| src.locate(d.clone()).to_string()).collect::<String>()
        );
    }
}

#[test]
fn the_peak_memory_example_says_what_peak_memory_computes() {
    let plan = peak_memory(&module_named("two_stage"));
    let line = format!("`{plan}`");
    assert!(doc().replace('\n', " ").contains(&line), "the page should quote {line}");
    assert_eq!(plan.peak_bytes, 7240);
}

#[test]
fn the_conv_example_without_its_guard_gives_the_quoted_message() {
    let mut m = module_named("conv3x3_pad1");
    let text = ekb_ir::l1::print::print(&m).replace("if ih >= 0 && ih < 8 {", "if true {");
    m = parse(&SourceFile::new("unguarded", text)).unwrap();
    let msgs: Vec<String> = verify(&m, None).into_iter().map(|d| d.message.clone()).collect();
    let quoted = "index `ih` of `x` (dim 2, size 8) ranges over [-1, 8] in kernel conv";
    assert_eq!(msgs, [quoted]);
    assert!(doc().contains(quoted));
}

#[test]
fn the_first_example_runs() {
    let m = module_named("relu_add");
    let ty = |s: &[usize]| TensorType::new(DType::F32, s);
    let inputs: HashMap<String, Buffer> = [
        ("x".to_string(), Buffer { ty: ty(&[4, 8]), data: BufData::F32(vec![2.0; 32]) }),
        ("w".to_string(), Buffer { ty: ty(&[8]), data: BufData::F32(vec![0.0; 8]) }),
    ]
    .into_iter()
    .collect();
    let y = run(&m, &inputs).unwrap();
    // v = 2 everywhere: even j add 2; odd j subtract 1 below 4 and halve from 4 on.
    let BufData::F32(y) = &y["y"].data else { panic!("y is f32") };
    assert_eq!(y[..8], [2.0, 1.0, 3.0, 2.0, 4.0, 2.0, 4.0, 2.0]);
}
