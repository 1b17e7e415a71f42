//! The passes, one file each, and the table that names them ([`PASSES`]).

pub mod cse;
pub mod dce;
pub mod fold;
pub mod fuse;
pub mod patchify;

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
pub const DEFAULT: &[&str] = &["patchify", "fold", "cse", "dce", "fuse"];

/// The pass of that name.
pub fn find(name: &str) -> Option<&'static Pass> {
    PASSES.iter().find(|p| p.name == name)
}
