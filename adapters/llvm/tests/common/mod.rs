//! Shared helpers of the adapter's tests: parsing L1 text, making buffers, and requiring the
//! toolchain (a missing clang fails the test with the setup instruction, never passes it).

#![allow(dead_code)]

use ekb_ir::l1::{parse::parse, Module};
use ekb_ir::tensor::{BufData, Buffer};
use ekb_ir::types::{DType, TensorType};
use ekb_ir::{SourceFile, TargetProfile};
use std::collections::HashMap;

/// Parses L1 text; a parse error fails the test with the rendered diagnostic.
pub fn module(text: &str) -> Module {
    let src = SourceFile::new("test.ekl1", text);
    parse(&src).unwrap_or_else(|d| panic!("test module does not parse:\n{d}"))
}

/// The path of clang-19, failing the test when it is missing.
pub fn clang() -> std::path::PathBuf {
    ekb_llvm::find_clang().unwrap_or_else(|d| panic!("{d}"))
}

pub fn host() -> TargetProfile {
    TargetProfile::load("host").unwrap()
}

/// The host profile for the x86-64 baseline CPU (no SSE4.1: floor and ceil are library calls).
pub fn x86_64_baseline() -> TargetProfile {
    let mut t = host();
    t.name = "x86-64-baseline".into();
    t.cpu.cpu = "x86-64".into();
    t.cpu.vector_bits = 128;
    t
}

pub fn f32s(shape: &[usize], data: Vec<f32>) -> Buffer {
    let ty = TensorType::new(DType::F32, shape);
    assert_eq!(ty.numel(), data.len());
    Buffer { ty, data: BufData::F32(data) }
}

pub fn i8s(shape: &[usize], data: Vec<i8>) -> Buffer {
    let ty = TensorType::new(DType::I8, shape);
    assert_eq!(ty.numel(), data.len());
    Buffer { ty, data: BufData::I8(data) }
}

pub fn as_i8(b: &Buffer) -> &[i8] {
    match &b.data {
        BufData::I8(v) => v,
        _ => panic!("expected an i8 buffer, got {}", b.ty),
    }
}

/// An f16 buffer from the bits of its elements.
pub fn f16s(shape: &[usize], data: Vec<u16>) -> Buffer {
    let ty = TensorType::new(DType::F16, shape);
    assert_eq!(ty.numel(), data.len());
    Buffer { ty, data: BufData::F16(data) }
}

pub fn i32s(shape: &[usize], data: Vec<i32>) -> Buffer {
    let ty = TensorType::new(DType::I32, shape);
    assert_eq!(ty.numel(), data.len());
    Buffer { ty, data: BufData::I32(data) }
}

pub fn inputs(list: Vec<(&str, Buffer)>) -> HashMap<String, Buffer> {
    list.into_iter().map(|(n, b)| (n.to_string(), b)).collect()
}

pub fn as_f32(b: &Buffer) -> &[f32] {
    match &b.data {
        BufData::F32(v) => v,
        _ => panic!("expected an f32 buffer, got {}", b.ty),
    }
}

pub fn as_i32(b: &Buffer) -> &[i32] {
    match &b.data {
        BufData::I32(v) => v,
        _ => panic!("expected an i32 buffer, got {}", b.ty),
    }
}

pub mod cases;
pub mod driver;
