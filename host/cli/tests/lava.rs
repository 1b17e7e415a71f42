//! `ekb pack --lava` and `ekb collect --lava`: the LAVA job passes LAVA's own schema validator
//! (`lava_common.schemas.validate`, Debian's `lava-common`; a missing one fails the test with the
//! command that installs it), and a job that breaks the schema does not; the bundle's real
//! output becomes one LAVA test case per payload (pass with the median, fail with none); LAVA's
//! results for those cases read back.

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
