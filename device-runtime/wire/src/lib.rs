//! `ekb-wire`: what the host and the board must agree on bit for bit.
//!
//! `no_std` (with `alloc` nowhere required) so the device runtime can use it unchanged. Today it
//! holds the tensor initialisers and the seeded generator that turns (task, seed, tensor) into
//! bit-identical data on every machine; the payload format and protocol join it later.
#![no_std]

pub mod init;
pub mod seeded;

pub use init::Init;
