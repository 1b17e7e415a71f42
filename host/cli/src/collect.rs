//! `ekb collect`: read report files back (written by `ekb-rt run --out` on a board, or by
//! `ekb run --save-report`) and print them as tables or JSON. Exit status 0 when every payload
//! in every report was correct, 1 when one failed or a file is not a report.

use ekb_deploy::report;
use std::path::PathBuf;
use std::process::ExitCode;

/// Read report files and print their results: correctness per seed, timing, counters, memory.
#[derive(clap::Args)]
#[command(after_help = "Examples:\n  \
ekb collect bundle/reports/*.ekr\n  \
ekb collect --json run.ekr > run.json")]
pub struct Args {
    /// Report files.
    #[arg(required = true)]
    reports: Vec<PathBuf>,
    /// Print a JSON array (one object per file) instead of tables.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> Result<ExitCode, String> {
    let mut files = Vec::new();
    for path in &args.reports {
        let name = path.display().to_string();
        let bytes = std::fs::read(path).map_err(|e| format!("error: cannot read `{name}`: {e}"))?;
        files.push((name.clone(), report::parse(&name, &bytes).map_err(|d| d.to_string())?));
    }
    if args.json {
        let all: Vec<serde_json::Value> = files.iter().map(|(n, f)| report::to_json(n, f)).collect();
        println!("{}", serde_json::to_string_pretty(&all).expect("reports serialise"));
    } else {
        let tables: Vec<String> = files.iter().map(|(n, f)| report::render(n, f)).collect();
        print!("{}", tables.join("\n"));
    }
    Ok(if files.iter().all(|(_, f)| f.all_correct()) { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}
