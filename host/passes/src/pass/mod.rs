//! The passes, one file each, and the table that names them ([`PASSES`]).

pub mod cse;
pub mod dce;
pub mod fold;

use crate::manager::{Pass, When};

/// Every pass, by the name `--passes` takes.
pub static PASSES: &[Pass] = &[
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
];

/// The passes of the default pipeline, in order: the rewrites that are always a win.
pub const DEFAULT: &[&str] = &["fold", "cse", "dce"];

/// The pass of that name.
pub fn find(name: &str) -> Option<&'static Pass> {
    PASSES.iter().find(|p| p.name == name)
}
