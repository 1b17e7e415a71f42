//! How a tensor is initialised from a seed: the closed set of initialisers a graph may declare
//! for its inputs and parameters.
//!
//! Initialisers are numbers, not code: the generator in `seeded` interprets them identically on
//! every machine, so seeded weights never travel with a payload (real weights imported from a
//! model travel as parameter data instead: `payload::Source::Data`).

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum Init {
    /// Uniform in `[lo, hi)`.
    Uniform { lo: f64, hi: f64 },
    /// Approximately normal with this mean and standard deviation.
    Normal { mean: f64, std: f64 },
    /// PyTorch's default for `Linear` and `Conv*d` weights: uniform in `[-b, b)` with
    /// `b = 1/sqrt(fan_in)`, `fan_in` = product of all dimensions but the first.
    KaimingUniform,
    /// Every element equal to this value.
    Const(f64),
    /// Uniform integers in `[lo, hi)` (for integer tensors such as indices).
    RandInt { lo: i64, hi: i64 },
}

impl Init {
    /// The initialiser used when a graph input declares none: `uniform(-1, 1)` for floats,
    /// `randint(0, 16)` for integers.
    pub const fn default_for(is_float: bool) -> Init {
        if is_float {
            Init::Uniform { lo: -1.0, hi: 1.0 }
        } else {
            Init::RandInt { lo: 0, hi: 16 }
        }
    }
}
