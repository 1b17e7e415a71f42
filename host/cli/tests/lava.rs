//! `ekb pack --lava` and `ekb collect --lava`: the LAVA job passes LAVA's own schema validator
//! (`lava_common.schemas.validate`, Debian's `lava-common`; a missing one fails the test with the
//! command that installs it), and a job that breaks the schema does not; the bundle's real
//! output becomes one LAVA test case per payload (pass with the median, fail with none); LAVA's
//! results for those cases read back, and written as a run (`--into`) that `ekb report` reads with
//! the job's board as the device.

use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn ekb(dir: &Path) -> Command {
    let rt = ekb_e2e::static_runtime("x86_64-unknown-linux-musl", Path::new(env!("CARGO_TARGET_TMPDIR")));
    let mut c = Command::new(env!("CARGO_BIN_EXE_ekb"));
    c.current_dir(dir).env("EKB_RT_X86_64", rt).env_remove("EKB_RT");
    c
}

fn op(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/ops").join(name)
}

/// Runs LAVA's validator on the job file; `Err` with its message when the job is refused.
fn lava_validate(job: &Path) -> Result<(), String> {
    // Debian's interpreter: lava-common installs its module for it.
    let python = if Path::new("/usr/bin/python3").exists() { "/usr/bin/python3" } else { "python3" };
    let check = Command::new(python)
        .args(["-c", "import lava_common.schemas"])
        .output()
        .unwrap_or_else(|e| panic!("cannot run {python}: {e}"));
    assert!(
        check.status.success(),
        "this test needs LAVA's schema validator: apt-get install lava-common (toolchains/setup.sh does)\n{}",
        String::from_utf8_lossy(&check.stderr)
    );
    let out = Command::new(python)
        .args([
            "-c",
            "import sys, yaml\nfrom lava_common.schemas import validate\nvalidate(yaml.safe_load(open(sys.argv[1])))",
        ])
        .arg(job)
        .output()
        .unwrap();
    if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    }
}

#[test]
fn a_lava_job_passes_lavas_schema_and_its_cases_come_back() {
    let tmp = tempfile::tempdir().unwrap();
    let bundle = tmp.path().join("bundle");
    let url = "https://files.example/ekb's bundle.tar.gz";
    let out = ekb(tmp.path())
        .arg("pack")
        .args([op("relu.ekir"), op("add.ekir")])
        .args(["--lava", url, "--lava-device-type", "qemu-aarch64", "-o"])
        .arg(&bundle)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let job_file = bundle.join("lava-job.yaml");
    let job = std::fs::read_to_string(&job_file).unwrap();
    lava_validate(&job_file).unwrap_or_else(|e| panic!("LAVA refuses the job:\n{e}\n{job}"));
    assert!(job.contains("device_type: \"qemu-aarch64\""), "{job}");
    assert!(
        job.contains(r#"'https://files.example/ekb'\\''s bundle.tar.gz'"#),
        "the URL is one shell word:\n{job}"
    );
    // The validator does check: a deploy without its method is refused.
    let broken = tmp.path().join("broken.yaml");
    std::fs::write(&broken, job.replace("    to: overlay\n", "    timeout:\n      minutes: 1\n")).unwrap();
    assert!(lava_validate(&broken).is_err(), "a job without `to` must be refused");

    // On the "board": run.sh's real output, then the cases script with a stand-in for LAVA's
    // `lava-test-case` that records its arguments.
    let run = Command::new("sh").arg(bundle.join("run.sh")).output().unwrap();
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let mut log = String::from_utf8(run.stdout).unwrap();
    log.push_str("/b/payloads/broken.ekp: FAILED correctness: y[3] = 1 (expected 2)\n");
    let bin = tmp.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let cases = tmp.path().join("cases.txt");
    std::fs::write(bin.join("lava-test-case"), format!("#!/bin/sh\necho \"$*\" >> '{}'\n", cases.display()))
        .unwrap();
    assert!(Command::new("chmod").arg("755").arg(bin.join("lava-test-case")).status().unwrap().success());
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let mut sh = Command::new("sh")
        .arg(bundle.join("lava-cases.sh"))
        .env("PATH", path)
        .stdin(Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(sh.stdin.as_mut().unwrap(), log.as_bytes()).unwrap();
    assert!(sh.wait().unwrap().success());
    let recorded = std::fs::read_to_string(&cases).unwrap();
    let lines: Vec<&str> = recorded.lines().collect();
    assert_eq!(lines.len(), 3, "one case per payload:\n{recorded}\nfrom:\n{log}");
    let mut results =
        vec![json!({"suite": "lava", "name": "job", "result": "pass", "measurement": null, "unit": ""})];
    for line in &lines {
        let w: Vec<&str> = line.split_whitespace().collect();
        match w.as_slice() {
            [name @ ("relu" | "add"), "--result", "pass", "--measurement", m, "--units", "ns"] => {
                let median: f64 = m.parse().unwrap_or_else(|_| panic!("a median in ns: {line}"));
                assert!(median > 0.0, "{line}");
                results.push(json!({"suite": "0_ekb-bundle", "name": name, "result": "pass",
                    "measurement": format!("{median:.10}"), "unit": "ns"}));
            }
            ["broken", "--result", "fail"] => {
                results.push(json!({"suite": "0_ekb-bundle", "name": "broken", "result": "fail", "measurement": null, "unit": ""}))
            }
            _ => panic!("unexpected case `{line}`"),
        }
    }

    // LAVA's results read back: the failing payload makes the exit status 1.
    let file = tmp.path().join("results.json");
    std::fs::write(&file, serde_json::to_string(&results).unwrap()).unwrap();
    let back = ekb(tmp.path()).args(["collect", "--json", "--lava"]).arg(&file).output().unwrap();
    assert_eq!(back.status.code(), Some(1), "{}", String::from_utf8_lossy(&back.stderr));
    let cases: Value = serde_json::from_slice(&back.stdout).unwrap();
    let names: Vec<&str> = cases.as_array().unwrap().iter().map(|c| c["name"].as_str().unwrap()).collect();
    assert_eq!(names.len(), 3, "LAVA's own suite is left out: {names:?}");
    assert!(cases
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["result"] == "pass")
        .all(|c| c["measurement"].as_f64().unwrap() > 0.0));
    results.retain(|r| r["name"] != "broken");
    std::fs::write(&file, serde_json::to_string(&results).unwrap()).unwrap();
    let back = ekb(tmp.path()).args(["collect", "--lava"]).arg(&file).output().unwrap();
    let table = String::from_utf8_lossy(&back.stdout);
    assert!(back.status.success(), "{table}");
    assert!(
        table.lines().any(|l| l.starts_with("relu") && l.contains("pass") && l.ends_with(" ns")),
        "{table}"
    );
}

#[test]
fn lavas_results_become_a_run_that_ekb_report_reads_with_the_jobs_board_as_device() {
    let tmp = tempfile::tempdir().unwrap();
    let ekb = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_ekb")).args(args).current_dir(tmp.path()).output().unwrap()
    };
    // LAVA's cases (its own suite, a suite task's payload, a payload of no task, a failed one)
    // and its record of the job `ekb pack --lava` wrote.
    let results = json!([
        {"suite": "lava", "name": "job", "result": "pass", "measurement": null, "unit": ""},
        {"suite": "0_ekb-bundle", "name": "gemv_mobilenetv2_classifier", "result": "pass", "measurement": "1234.5000000000", "unit": "ns"},
        {"suite": "0_ekb-bundle", "name": "relu", "result": "pass", "measurement": "99.0", "unit": "ns"},
        {"suite": "0_ekb-bundle", "name": "broken", "result": "fail", "measurement": null, "unit": ""}
    ]);
    std::fs::write(tmp.path().join("results.json"), results.to_string()).unwrap();
    let definition = ekb_deploy::lava::job("rk3588", "rk3588-rock-5b", "https://files.lab/b.tar.gz");
    let job = json!({"id": 4711, "actual_device": "rock5b-03", "requested_device_type": "rk3588-rock-5b",
        "description": "ekb bundle for rk3588", "definition": definition, "end_time": "2026-03-01T10:00:00Z"});
    std::fs::write(tmp.path().join("job.json"), job.to_string()).unwrap();
    let tasks = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tasks").display().to_string();
    let into = |run: &str| {
        ekb(&["collect", "--lava", "results.json", "--lava-job", "job.json", "--into", run, "--dir", &tasks])
    };
    let out = into("farm");
    assert_eq!(out.status.code(), Some(1), "a case failed:\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("broken"), "the table is still printed");

    let run: Value =
        serde_json::from_str(&std::fs::read_to_string(tmp.path().join("farm/run.json")).unwrap()).unwrap();
    assert_eq!(run["instances"].as_array().unwrap().len(), 3, "{run}");
    assert_eq!(run["backends"]["cpu"]["target"], "rk3588");
    let lines: Vec<Value> = std::fs::read_to_string(tmp.path().join("farm/results.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3);
    let by_name = |n: &str| lines.iter().find(|r| r["instance"]["task"] == n).unwrap();
    let gemv = by_name("gemv_mobilenetv2_classifier");
    assert_eq!(
        (gemv["instance"]["level"].as_u64(), gemv["instance"]["family"].as_str()),
        (Some(1), Some("gemv"))
    );
    assert_eq!((gemv["correct"].as_bool(), gemv["median_ns"].as_f64()), (Some(true), Some(1234.5)));
    assert!(gemv["timing"].is_null(), "an unpaired median is not a speedup: {gemv}");
    assert_eq!(by_name("relu")["instance"]["level"], 0, "no task of that name: level 0");
    let broken = by_name("broken");
    assert_eq!(
        (broken["correct"].as_bool(), broken["failure"]["class"].as_str()),
        (Some(false), Some("runtime"))
    );
    assert!(broken["median_ns"].is_null());
    for r in &lines {
        assert_eq!(
            (r["device"]["host"].as_str(), r["device"]["profile"].as_str()),
            (Some("rock5b-03"), Some("rk3588"))
        );
    }

    // `ekb report` reads the run: three instances, two correct, on the job's board.
    let report = ekb(&["report", "farm"]);
    let text = String::from_utf8_lossy(&report.stdout);
    assert!(report.status.success(), "{}", String::from_utf8_lossy(&report.stderr));
    let pooled = text.lines().find(|l| l.starts_with("all ")).unwrap_or_else(|| panic!("{text}"));
    assert_eq!(
        pooled.split_whitespace().take(5).collect::<Vec<_>>(),
        ["all", "3", "1", "100.0%", "66.7%"],
        "{text}"
    );
    let by_device = ekb(&["report", "--by-device", "farm"]);
    let row = String::from_utf8_lossy(&by_device.stdout).lines().nth(1).unwrap().to_string();
    assert_eq!(
        row.split_whitespace().collect::<Vec<_>>()[1..7],
        ["rock5b-03", "unknown", "rk3588", "3", "3", "2"]
    );
    // A run directory is not overwritten.
    let again = into("farm");
    assert!(String::from_utf8_lossy(&again.stderr).contains("already holds a run"));
}
