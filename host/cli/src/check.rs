//! `ekb check`: parse and verify an IR file, print its diagnostics, exit 1 on any error.
//!
//! An L0 graph is checked for types, shapes and attributes; with `--target` it is also lowered
//! with the default schedule and the loop program is verified against the profile (allocation
//! legality, memory budget). An L1 module is verified (types, scopes, bounds, legality).

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
    diagnostics: Vec<Diagnostic>,
}

pub fn run(args: Args) -> Result<ExitCode, String> {
    let target = args.target.as_deref().map(source::target).transpose()?;
    let mut report = Report {
        file: args.file.display().to_string(),
        level: None,
        ok: false,
        peak_memory_bytes: None,
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
                        Some(t) => match ekb_lower::lower(&g, ekb_lower::Schedule::Default, t) {
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
    }
    Ok(if report.ok { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}
