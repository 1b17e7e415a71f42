//! `ekb-onnx`: ONNX in and out of L0, and external engines (onnxruntime, TVM, MNN) as baselines.
//!
//! - [`import`]: an ONNX model (opset 13+, static shapes) to a checked L0 graph whose parameters
//!   carry the model's weights as data (`param w: ... = file(...)`), plus the sidecar file.
//! - [`export`]: a checked L0 graph to an ONNX model (opset 17).
//! - [`proto`]: the `onnx.proto` messages, hand-written for `prost`.
//! - [`npy`]: reading `.npy` files (outputs of the Python helpers).
//! - [`baseline`]: timing an exported graph in onnxruntime, TVM or MNN, in the runtime's timing
//!   form.
//! - [`python`]: running the helper scripts in `python/` (the engines on exported models).
//!
//! The operator tables, the data-parameter format and the baseline protocol are in
//! `docs/onnx.md`. External engines are baselines only: nothing in the core depends on them.

pub mod baseline;
pub mod consts;
pub mod export;
pub mod import;
pub mod npy;
pub mod proto;
pub mod python;

pub use export::{export, export_bytes};
pub use import::{import, ImportOptions, Imported};
