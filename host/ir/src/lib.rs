//! `ekb-ir`: the unified IR of EdgeKernelBench.
//!
//! - [`l0`]: the graph level (operators on whole tensors): text form, shape inference,
//!   verifier, and the f64 reference interpreter (the correctness oracle).
//! - [`l1`]: the loop level (kernels of loop nests over buffers, and the plan that runs them):
//!   text form, verifier (types, bounds, scopes, allocation legality), peak memory, and a
//!   bounds-checked interpreter.
//! - [`target`]: target profiles (the limits the verifier checks against).
//! - [`diag`], [`lex`], [`types`], [`tensor`]: shared by both levels.

pub mod diag;
pub mod l0;
pub mod l1;
pub mod lex;
pub mod target;
pub mod tensor;
pub mod types;

pub use diag::{Diagnostic, SourceFile, Span};
pub use target::TargetProfile;
pub use types::{DType, TensorType};
