//! `ekb collect`: read report files back (written by `ekb-rt run --out` on a board, or by
//! `ekb run --save-report`) and print them as tables or JSON; with `--lava`, the test cases of a
//! LAVA job that ran a bundle (`ekb pack --lava`). Exit status 0 when every payload in every
//! report was correct (every case passed), 1 when one failed or a file is not a report.

use ekb_deploy::{lava, report};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Read report files and print their results: correctness per seed, timing, counters, memory.
#[derive(clap::Args)]
#[command(after_help = "Examples:\n  \
ekb collect bundle/reports/*.ekr\n  \
ekb collect --json run.ekr > run.json\n  \
ekb collect --lava results.json            a LAVA job's test cases (GET /api/v0.2/jobs/ID/tests/)")]
pub struct Args {
    /// Report files.
    #[arg(required_unless_present = "lava")]
    reports: Vec<PathBuf>,
    /// Read the test cases of a LAVA job that ran a bundle written by `ekb pack --lava` (the JSON
    /// LAVA's REST API gives for the job's tests) instead of report files.
    #[arg(long, value_name = "RESULTS", conflicts_with = "reports")]
    lava: Option<PathBuf>,
    /// Print a JSON array (one object per file) instead of tables.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> Result<ExitCode, String> {
    if let Some(path) = &args.lava {
        return lava_cases(path, args.json);
    }
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

/// The payloads' test cases of a LAVA job, as a table or JSON.
fn lava_cases(path: &Path, json: bool) -> Result<ExitCode, String> {
    let name = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| format!("error: cannot read `{name}`: {e}"))?;
    let cases = lava::parse_results(&name, &text).map_err(|d| d.to_string())?;
    if cases.is_empty() {
        return Err(format!(
            "error: `{name}` has no test case of a payload\n  = hint: did the job run `lava-cases.sh` (`ekb pack --lava`)?"
        ));
    }
    if json {
        println!("{}", serde_json::to_string_pretty(&cases).expect("cases serialise"));
    } else {
        println!("{:<32} {:<8} {:>14}", "payload", "result", "median");
        for c in &cases {
            let m = c.measurement.map_or(String::new(), |m| format!("{m:.0} {}", c.unit));
            println!("{:<32} {:<8} {:>14}", c.name, c.result, m);
        }
    }
    Ok(if cases.iter().all(|c| c.result == "pass") { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}
