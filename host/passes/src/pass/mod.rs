//! The passes, one file each, and the table that names them ([`PASSES`]).

pub mod bn_fold;
pub mod cse;
pub mod dce;
pub mod fold;
pub mod fuse;
pub mod patchify;
pub mod phase_split;
pub mod pixel_transpose;
pub mod trim;

use crate::manager::{Pass, When};

/// Every pass, by the name `--passes` takes.
pub static PASSES: &[Pass] = &[
    Pass {
        name: "patchify",
        summary: "a convolution whose windows tile its input (stride = kernel, no padding) becomes a patch transpose and a `linear`",
        when: When::FixedPoint,
        run: patchify::run,
    },
    Pass {
        name: "pixel_transpose",
        summary: "a transposed convolution of a single input pixel (a latent vector to planes) becomes a `matmul` with its weight as [C, OC*kh*kw]",
        when: When::FixedPoint,
        run: pixel_transpose::run,
    },
    Pass {
        name: "phase_split",
        summary: "a strided transposed convolution whose kernel is a multiple of its stride becomes one convolution per stride phase, interleaved (not in the default pipeline)",
        when: When::FixedPoint,
        run: phase_split::run,
    },
    Pass {
        name: "trim",
        summary: "a slice keeping a window of a convolution's output (a causal conv1d's first L) becomes a convolution of that window alone, with less padding",
        when: When::FixedPoint,
        run: trim::run,
    },
    Pass {
        name: "bn_fold",
        summary: "a batch norm of parameters becomes a product and a sum per channel, their factors computed once by prepare steps (the CPU's default pipeline only)",
        when: When::FixedPoint,
        run: bn_fold::run,
    },
    Pass {
        name: "fold",
        summary: "operators of constants become one `full`; identities (x*1, x+0, reshape of reshape, ...) give their operand",
        when: When::FixedPoint,
        run: fold::run,
    },
    Pass {
        name: "cse",
        summary: "a node computing what an earlier node computes (same operator, attributes, operands) is replaced by it",
        when: When::FixedPoint,
        run: cse::run,
    },
    Pass {
        name: "dce",
        summary: "nodes no output depends on are removed",
        when: When::FixedPoint,
        run: dce::run,
    },
    Pass {
        name: "fuse",
        summary: "an anchor (conv, matmul, reduction, pool, norm, ...) or elementwise node and the elementwise nodes after it become one fusion group, one kernel",
        when: When::AtEnd,
        run: fuse::run,
    },
];

/// The passes of the default pipeline, in order: the rewrites that are always a win, then the
/// fusion of what is left.
pub const DEFAULT: &[&str] =
    &["patchify", "pixel_transpose", "trim", "bn_fold", "fold", "cse", "dce", "fuse"];

/// The pass of that name.
pub fn find(name: &str) -> Option<&'static Pass> {
    PASSES.iter().find(|p| p.name == name)
}
