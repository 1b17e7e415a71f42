//! `ekb collect`: read report files back (written by `ekb-rt run --out` on a board, or by
//! `ekb run --save-report`) and print them as tables or JSON; with `--lava`, the test cases of a
//! LAVA job that ran a bundle (`ekb pack --lava`), and with `--into RUN` those written as an
//! evaluation run (`lava_run.rs`). Exit status 0 when every payload in every report was correct
//! (every case passed), 1 when one failed or a file is not a report.

use ekb_deploy::{lava, report};
use ekb_eval::tasks::Backend;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Read report files and print their results: correctness per seed, timing, counters, memory.
#[derive(clap::Args)]
#[command(after_help = "Examples:\n  \
ekb collect bundle/reports/*.ekr\n  \
ekb collect --json run.ekr > run.json\n  \
ekb collect --lava results.json            a LAVA job's test cases (GET /api/v0.2/jobs/ID/tests/)\n  \
ekb collect --lava results.json --lava-job job.json --into runs/farm   as a run (job.json: GET /api/v0.2/jobs/ID/)\n  \
ekb report runs/farm --by-device           then the run's report, per board")]
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
    /// With `--lava`: also write the cases as an evaluation run into this directory (run.json and
    /// results.jsonl, as `ekb eval` writes them), for `ekb report RUN`: each payload is sample 0
    /// of the instance of its name (the suite's task of that name, when there is one), correct
    /// when its case passed, with its median (unpaired: no speedup), and the job's board as its
    /// device.
    #[arg(long, value_name = "RUN", requires_all = ["lava", "lava_job"])]
    into: Option<PathBuf>,
    /// With `--into`: LAVA's record of the job (`GET /api/v0.2/jobs/ID/`), for the board that
    /// ran it (`actual_device`) and the bundle's target (the job's name, `ekb bundle for
    /// TARGET`).
    #[arg(long, value_name = "JOB", requires = "into")]
    lava_job: Option<PathBuf>,
    /// With `--into`: the backend the bundle's payloads ran on (`cpu`, `opencl` or `cuda`).
    #[arg(long, default_value = "cpu", requires = "into")]
    backend: String,
    /// With `--into`: the task folder the payloads' instances are looked up in (default: the
    /// nearest `tasks/` with a `level1/` folder, from here up; none found: level 0, no family).
    #[arg(long, requires = "into")]
    dir: Option<PathBuf>,
}

pub fn run(args: Args) -> Result<ExitCode, String> {
    if let Some(path) = &args.lava {
        return lava_cases(path, &args);
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

/// The payloads' test cases of a LAVA job, as a table or JSON, and with `--into` as a run.
fn lava_cases(path: &Path, args: &Args) -> Result<ExitCode, String> {
    let name = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| format!("error: cannot read `{name}`: {e}"))?;
    let cases = lava::parse_results(&name, &text).map_err(|d| d.to_string())?;
    if cases.is_empty() {
        return Err(format!(
            "error: `{name}` has no test case of a payload\n  = hint: did the job run `lava-cases.sh` (`ekb pack --lava`)?"
        ));
    }
    if let (Some(out), Some(job_path)) = (&args.into, &args.lava_job) {
        let job_name = job_path.display().to_string();
        let job_text =
            std::fs::read_to_string(job_path).map_err(|e| format!("error: cannot read `{job_name}`: {e}"))?;
        let job = lava::parse_job(&job_name, &job_text).map_err(|d| d.to_string())?;
        let backend = Backend::ALL.into_iter().find(|b| b.name() == args.backend).ok_or_else(|| {
            format!("error: `--backend {}` is not a backend\n  = expected: cpu, opencl or cuda", args.backend)
        })?;
        crate::lava_run::write(&cases, &job, backend, &args.dir, out)?;
        eprintln!(
            "wrote {} case(s) of LAVA job {} on {} as the run {}; `ekb report {}` reads it",
            cases.len(),
            job.id,
            job.device,
            out.display(),
            out.display()
        );
    }
    if args.json {
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
