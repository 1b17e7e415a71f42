//! `ekb check`: parse and verify an IR file, print its diagnostics, exit 1 on any error.
//!
//! An L0 graph is checked for types, shapes and attributes; with `--target` it is also lowered
//! as `ekb build` lowers it (the default graph passes, the default schedule) and the loop
//! program is verified against the profile (allocation
//! legality, memory budget). An L1 module is verified (types, scopes, bounds, legality).
//!
//! With a loop program, the memory plan (`ekb_ir::l1::arena`) is reported: the planned peak
//! (inputs, outputs, the temps in one arena, the largest kernel stack: what a CPU runtime
//! reserves) next to the unplanned one (every temp apart), and with `--target` the budget the
//! verifier held the program to.

use crate::source::{self, Program};
use ekb_ir::{l1, Diagnostic};
use serde::Serialize;
use std::path::PathBuf;
use std::process::ExitCode;

/// Verify an L0 graph or L1 module; exit status 1 when anything is wrong.
#[derive(clap::Args)]
#[command(after_help = "Examples:\n  ekb check conv.ekir\n  ekb check conv.ekir --target rk3588 --json")]
pub struct Args {
    /// The `.ekir` file (L0 graph or L1 module).
    file: PathBuf,
    /// Also check allocation legality and memory against this target profile (a name from
    /// `ekb targets` or a path to a .toml profile).
    #[arg(long)]
    target: Option<String>,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

#[derive(Serialize)]
struct Report {
    file: String,
    level: Option<&'static str>,
    ok: bool,
    peak_memory_bytes: Option<u64>,
    memory: Option<Memory>,
    diagnostics: Vec<Diagnostic>,
}

/// The memory plan of the loop program, in bytes.
#[derive(Serialize)]
struct Memory {
    planned_peak_bytes: u64,
    unplanned_peak_bytes: u64,
    /// Inputs and parameters but the consumed ones.
    inputs_bytes: u64,
    /// Parameters only the prepare steps read: in the arena when planned, apart when not.
    consumed_bytes: u64,
    outputs_bytes: u64,
    arena_bytes: u64,
    /// Temps the prepare steps compute (docs/ir-l1.md), apart from the arena.
    prepared_bytes: u64,
    temps_bytes: u64,
    stack_bytes: u64,
    /// The budget the program is held to (`cpu.memory_bytes`, or `gpu.memory_bytes` for a
    /// module that launches), with `--target`.
    memory_limit_bytes: Option<u64>,
}

impl Memory {
    fn of(m: &l1::Module, target: Option<&ekb_ir::TargetProfile>) -> Memory {
        let f = l1::arena::plan(m);
        let limit = target.map(|t| match &t.gpu {
            Some(g) if m.has_launch() => g.memory_bytes,
            _ => t.cpu.memory_bytes,
        });
        Memory {
            planned_peak_bytes: f.planned_bytes(),
            unplanned_peak_bytes: f.unplanned_bytes(),
            inputs_bytes: f.inputs_bytes,
            consumed_bytes: f.consumed_bytes,
            outputs_bytes: f.outputs_bytes,
            arena_bytes: f.arena_bytes,
            prepared_bytes: f.prepared_bytes,
            temps_bytes: f.temps_bytes,
            stack_bytes: f.stack_bytes,
            memory_limit_bytes: limit,
        }
    }

    /// `planned 2048 bytes (inputs 512 + outputs 512 + arena 1024 + stack 0), unplanned 3072
    /// bytes (0.67x), budget 4096 bytes` (with `+ prepared N` after the outputs where prepare
    /// steps compute temps, and `(N of it params the prepare steps consume)` after the arena's
    /// size where it holds some).
    fn line(&self) -> String {
        let ratio = self.planned_peak_bytes as f64 / self.unplanned_peak_bytes.max(1) as f64;
        let budget = self.memory_limit_bytes.map(|b| format!(", budget {b} bytes")).unwrap_or_default();
        let prepared = if self.prepared_bytes > 0 {
            format!(" + prepared {}", self.prepared_bytes)
        } else {
            String::new()
        };
        let consumed = if self.consumed_bytes > 0 {
            format!(" ({} of it params the prepare steps consume)", self.consumed_bytes)
        } else {
            String::new()
        };
        format!(
            "planned {} bytes (inputs {} + outputs {}{prepared} + arena {}{consumed} + stack {}), unplanned {} bytes ({ratio:.2}x){budget}",
            self.planned_peak_bytes,
            self.inputs_bytes,
            self.outputs_bytes,
            self.arena_bytes,
            self.stack_bytes,
            self.unplanned_peak_bytes
        )
    }
}

pub fn run(args: Args) -> Result<ExitCode, String> {
    let target = args.target.as_deref().map(source::target).transpose()?;
    let mut report = Report {
        file: args.file.display().to_string(),
        level: None,
        ok: false,
        peak_memory_bytes: None,
        memory: None,
        diagnostics: Vec::new(),
    };
    match source::load(&args.file) {
        Err(diags) => {
            report.level =
                std::fs::read(&args.file).ok().and_then(|b| ekb_ir::level(&String::from_utf8_lossy(&b)));
            report.diagnostics = diags;
        }
        Ok((src, program)) => {
            let module = match program {
                Program::Graph(g) => {
                    report.level = Some("l0");
                    match &target {
                        Some(t) => match ekb_passes::run(&g, &ekb_passes::Selection::Default, None)
                            .and_then(|g| ekb_lower::lower(&g, ekb_lower::Schedule::Default, t))
                        {
                            Ok(m) => Some(m),
                            Err(d) => {
                                report.diagnostics.push(d);
                                None
                            }
                        },
                        None => None,
                    }
                }
                Program::Module(m) => {
                    report.level = Some("l1");
                    Some(m)
                }
            };
            if let Some(m) = module {
                let diags = l1::verify::verify(&m, target.as_ref());
                report.diagnostics.extend(diags.into_iter().map(|d| src.locate(d)));
                report.peak_memory_bytes = Some(l1::memory::peak_memory(&m).peak_bytes);
                report.memory = Some(Memory::of(&m, target.as_ref()));
            }
        }
    }
    report.ok = !report.diagnostics.iter().any(Diagnostic::is_error);
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report).expect("report serialises"));
    } else {
        if !report.diagnostics.is_empty() {
            eprint!("{}", source::render(&report.diagnostics));
        }
        if report.ok {
            let mem =
                report.peak_memory_bytes.map(|b| format!(", peak memory {b} bytes")).unwrap_or_default();
            println!("ok: {} ({}{mem})", report.file, report.level.unwrap_or("?"));
        }
        if let Some(m) = &report.memory {
            println!("memory: {}", m.line());
        }
    }
    Ok(if report.ok { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}
