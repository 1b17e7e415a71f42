//! Facts about L1 code that the verifier, the lowering and the schedule primitives rely on,
//! each computed from the tree alone:
//! - [`interval`]: the range of an i32 expression from the ranges of its variables;
//! - [`access`]: every load and store of a body, and the region of each buffer a body reads
//!   and writes;
//! - [`deps`]: which loops may carry a dependence between two accesses to the same buffer
//!   (what decides whether iterations may run in parallel or in another order);
//! - [`uniform`]: whether an expression has the same value on every thread of a GPU block.
//!
//! Every analysis over-approximates: a fact it states holds for every execution, and when it
//! cannot tell it says so (`None`, or a dependence) rather than guessing.

pub mod access;
pub mod deps;
pub mod interval;
pub mod uniform;
