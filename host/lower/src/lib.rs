//! `ekb-lower`: L0 graph -> L1 loop program.
//!
//! [`lower`] turns a checked L0 graph (every node typed by `ekb_ir::l0::check`) into an L1
//! module under one of two schedules:
//! - [`Schedule::Naive`]: one plain serial loop nest per operator, computing every output
//!   element from its definition (the obviously correct baseline);
//! - [`Schedule::Default`]: the same arithmetic laid out for a CPU: threads over outer loops,
//!   the innermost contiguous loop vectorized, and operator-specific tiling for matmul and
//!   convolution, each operator family's layout a template whose numbers (tile sizes, thread
//!   thresholds) are the named knobs of [`Knobs`], the search space of a tuner.
//!
//! With the default schedule, each fusion group of the graph (`fuse %a, %b`) becomes one kernel
//! (`fusion`); the naive schedule ignores the groups.
//!
//! Every module produced passes `ekb_ir::l1::verify::verify` against the target it was lowered
//! for. The steps are in [`lower`]; each operator family lives in its own file.

mod concat_in_place;
mod conv;
mod conv_transpose;
mod elementwise;
mod fusion;
mod gpu;
mod lower;
mod matmul;
mod movement;
mod norm;
mod plan;
mod pool;
mod prepack;
mod read_in_place;
mod rebind;
mod recipe;
mod reduce;
mod resize;
mod scan;
mod sched;
#[cfg(test)]
mod testing;
mod write_in_place;

pub use gpu::{lower_gpu, lower_gpu_with};
pub use lower::{lower, lower_with};
pub use recipe::{families_of, Knob, KnobSpec, Knobs, KNOBS};

use ekb_ir::diag::did_you_mean;
use ekb_ir::Diagnostic;

/// How operators are laid out as loops.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Schedule {
    /// One serial loop nest per operator, straight from the definition.
    Naive,
    /// Threads, vectorization and tiling for a CPU target; shared-memory reductions and tiled
    /// matmul for a GPU.
    Default,
}

impl Schedule {
    pub const ALL: [Schedule; 2] = [Schedule::Naive, Schedule::Default];

    pub fn name(self) -> &'static str {
        match self {
            Schedule::Naive => "naive",
            Schedule::Default => "default",
        }
    }

    /// Parses a schedule name; an unknown name gives a diagnostic listing the known ones.
    pub fn from_name(name: &str) -> Result<Schedule, Diagnostic> {
        if let Some(s) = Schedule::ALL.into_iter().find(|s| s.name() == name) {
            return Ok(s);
        }
        let names = Schedule::ALL.map(Schedule::name);
        let mut d = Diagnostic::error(format!("unknown schedule `{name}`"))
            .with_expected(format!("one of {}", names.map(|n| format!("`{n}`")).join(", ")));
        if let Some(h) = did_you_mean(name, names) {
            d = d.with_hint(h);
        }
        Err(d)
    }
}

impl std::fmt::Display for Schedule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedule_names_round_trip_and_unknown_names_get_a_hint() {
        for s in Schedule::ALL {
            assert_eq!(Schedule::from_name(s.name()).unwrap(), s);
        }
        let d = Schedule::from_name("defualt").unwrap_err();
        assert!(d.message.contains("`defualt`"), "{d}");
        assert_eq!(d.hint.as_deref(), Some("did you mean `default`?"));
        assert_eq!(d.expected.as_deref(), Some("one of `naive`, `default`"));
        assert!(Schedule::from_name("tiled").unwrap_err().hint.is_none());
    }
}
