//! Board farms run by LAVA: the test job that runs a bundle on a farm's board, and LAVA's test
//! results read back.
//!
//! The job ([`job`]) deploys the LAVA overlay onto the board's own system (`deploy: to:
//! overlay`), boots it (`boot: method: minimal`) and runs an inline Lava-Test-Shell definition
//! that downloads the bundle (a `.tar.gz` of the bundle folder served at a URL), runs its `run.sh`
//! and turns each payload's line of the runtime's output into `lava-test-case NAME --result
//! pass|fail [--measurement MEDIAN --units ns]` ([`CASES_SH`], written into the bundle).
//! [`parse_results`] reads the test cases LAVA returns for the job (its REST API's JSON), and
//! [`parse_job`] what LAVA says of the job itself: the board that ran it and the target named
//! in its `job_name` (`ekb bundle for TARGET`).
//!
//! What must stay true: the job passes LAVA's own schema (`lava_common.schemas.validate`, checked
//! by a test); one test case per payload, named after the payload file; a payload that failed or
//! could not run is `fail`, never missing; the cases of LAVA's own suite (`lava`) are not
//! payloads and are left out.

use ekb_ir::Diagnostic;
use serde::Serialize;

/// The name of the inline test definition (and of its suite in LAVA's results, after the
/// definition's index: `0_ekb-bundle`).
pub const DEFINITION: &str = "ekb-bundle";

/// The file in the bundle that turns `run.sh`'s output into LAVA test cases.
pub const CASES_FILE: &str = "lava-cases.sh";

/// The file of the LAVA job definition beside the bundle's other files.
pub const JOB_FILE: &str = "lava-job.yaml";

/// The job's name is this and the target profile's name.
pub const JOB_NAME_PREFIX: &str = "ekb bundle for ";

/// Reads `run.sh`'s output on stdin; for each payload, one `lava-test-case`: `pass` with the
/// timing's median for `PATH: correct (...)` followed by `PATH: median N ns`, `pass` without a
/// measurement when the payload was not timed, `fail` for `PATH: FAILED ...` and
/// `PATH: error (...)`.
pub const CASES_SH: &str = r#"#!/bin/sh
# EdgeKernelBench: run.sh's output (stdin) as LAVA test cases, one per payload.
set -u
passed=
flush() {
    if [ -n "$passed" ]; then
        lava-test-case "$passed" --result pass
        passed=
    fi
}
while IFS= read -r line; do
    path=${line%%: *}
    rest=${line#*: }
    name=${path##*/}
    name=${name%.ekp}
    case $rest in
        "correct ("*)
            flush
            passed=$name
            ;;
        "median "*" ns")
            value=${rest#median }
            value=${value% ns}
            lava-test-case "$name" --result pass --measurement "$value" --units ns
            passed=
            ;;
        "FAILED "* | "error ("*)
            flush
            lava-test-case "$name" --result fail
            ;;
    esac
done
flush
"#;

/// The LAVA job that runs the bundle served at `bundle_url` (a `.tar.gz` of the bundle folder) on
/// a board of LAVA device type `device_type`; `target` names it.
pub fn job(target: &str, device_type: &str, bundle_url: &str) -> String {
    let q = |s: &str| serde_json::to_string(s).expect("a string serialises");
    let fetch =
        format!("wget -q -O bundle.tar.gz {0} || curl -fsSL -o bundle.tar.gz {0}", shell_quote(bundle_url));
    let steps = [
        "rm -rf /tmp/ekb-bundle && mkdir -p /tmp/ekb-bundle && cd /tmp/ekb-bundle".to_string(),
        fetch,
        "tar -xzf bundle.tar.gz".to_string(),
        "sh run.sh > run.log 2>&1; echo \"run.sh exited with status $?\"; cat run.log".to_string(),
        format!("sh {CASES_FILE} < run.log"),
    ];
    let steps: Vec<String> = steps.iter().map(|s| format!("              - {}", q(s))).collect();
    format!(
        "# LAVA test job: the EdgeKernelBench bundle for target `{target}`, one test case per payload.\n\
         # Serve the bundle folder as a .tar.gz at the URL below, then: lavacli jobs submit {JOB_FILE}\n\
         device_type: {device_type}\n\
         job_name: {job_name}\n\
         priority: medium\n\
         visibility: public\n\
         timeouts:\n  job:\n    minutes: 60\n  action:\n    minutes: 30\n  connection:\n    minutes: 2\n\
         actions:\n\
         - deploy:\n    to: overlay\n\
         - boot:\n    method: minimal\n    prompts:\n    - {prompt}\n\
         - test:\n    timeout:\n      minutes: 50\n    definitions:\n\
         \x20   - from: inline\n      name: {DEFINITION}\n      path: inline/{DEFINITION}.yaml\n      repository:\n\
         \x20       metadata:\n          format: Lava-Test Test Definition 1.0\n          name: {DEFINITION}\n\
         \x20         description: {description}\n        run:\n          steps:\n{steps}\n",
        device_type = q(device_type),
        job_name = q(&format!("{JOB_NAME_PREFIX}{target}")),
        prompt = q("# "),
        description = q(&format!("EdgeKernelBench payloads for target {target}, checked and timed by ekb-rt")),
        steps = steps.join("\n"),
    )
}

/// `s` as one POSIX shell word.
fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// One test case as LAVA returns it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Case {
    /// The suite: its name (`0_ekb-bundle`), or its id in the REST API's answers.
    pub suite: String,
    /// The payload's name.
    pub name: String,
    /// `pass`, `fail`, `skip` or `unknown`.
    pub result: String,
    pub measurement: Option<f64>,
    pub unit: String,
}

/// The test cases in `text` (file `origin`): LAVA's JSON for a job's tests, either a list of
/// cases or the REST API's page (`{"results": [...]}`); LAVA's own suite is left out.
pub fn parse_results(origin: &str, text: &str) -> Result<Vec<Case>, Diagnostic> {
    let not = |why: String| {
        Diagnostic::error(format!("`{origin}` is not LAVA's test results: {why}")).with_expected(
            "the JSON of a job's test cases: `[{\"name\": ..., \"result\": \"pass\", \"measurement\": ..., \"unit\": ..., \"suite\": ...}]` \
             or the REST API's page `{\"results\": [...]}` (GET /api/v0.2/jobs/ID/tests/)",
        )
    };
    let value: serde_json::Value = serde_json::from_str(text).map_err(|e| not(e.to_string()))?;
    let cases = match &value {
        serde_json::Value::Array(a) => a,
        serde_json::Value::Object(o) => match o.get("results") {
            Some(serde_json::Value::Array(a)) => a,
            _ => return Err(not("an object without a `results` list".into())),
        },
        _ => return Err(not("neither a list nor an object".into())),
    };
    let mut out = Vec::new();
    for (i, c) in cases.iter().enumerate() {
        let text_of = |key: &str| match c.get(key) {
            Some(serde_json::Value::String(s)) => Some(s.clone()),
            Some(serde_json::Value::Number(n)) => Some(n.to_string()),
            _ => None,
        };
        let (Some(name), Some(result)) = (text_of("name"), text_of("result")) else {
            return Err(not(format!("case {} has no `name` or no `result`", i + 1)));
        };
        let suite = text_of("suite").unwrap_or_default();
        if suite == "lava" {
            continue;
        }
        let measurement = match text_of("measurement") {
            None => None,
            Some(m) => Some(m.trim().parse::<f64>().map_err(|_| {
                not(format!("case {} (`{name}`) has measurement `{m}`, which is not a number", i + 1))
            })?),
        };
        out.push(Case { suite, name, result, measurement, unit: text_of("unit").unwrap_or_default() });
    }
    Ok(out)
}

/// What LAVA says of a job (its REST API's `GET /api/v0.2/jobs/ID/`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JobRecord {
    pub id: String,
    /// The board that ran it (LAVA's device name, `actual_device`).
    pub device: String,
    /// Its LAVA device type (`requested_device_type`).
    pub device_type: String,
    /// The target profile of the bundle, from the job's name (`ekb bundle for TARGET`: its
    /// `description`, or the `job_name` of its `definition`); `None` for a job `ekb pack` did
    /// not write.
    pub target: Option<String>,
    /// When it ended (`end_time`), as LAVA writes it.
    pub end_time: Option<String>,
}

/// The job in `text` (file `origin`): LAVA's JSON for one job.
pub fn parse_job(origin: &str, text: &str) -> Result<JobRecord, Diagnostic> {
    let not = |why: String| {
        Diagnostic::error(format!("`{origin}` is not LAVA's record of a job: {why}")).with_expected(
            "the JSON of GET /api/v0.2/jobs/ID/: `{\"id\": ..., \"actual_device\": ..., \"requested_device_type\": ..., \"description\": ...}`",
        )
    };
    let value: serde_json::Value = serde_json::from_str(text).map_err(|e| not(e.to_string()))?;
    let text_of = |key: &str| match value.get(key) {
        Some(serde_json::Value::String(s)) => Some(s.clone()),
        Some(serde_json::Value::Number(n)) => Some(n.to_string()),
        _ => None,
    };
    let id = text_of("id").ok_or_else(|| not("no `id`".into()))?;
    let device = text_of("actual_device")
        .ok_or_else(|| not(format!("job {id} has no `actual_device` (did it run on a board?)")))?;
    let from_definition = text_of("definition").and_then(|d| {
        d.lines().find_map(|l| {
            let name = l.strip_prefix("job_name:")?.trim();
            serde_json::from_str::<String>(name).ok().or_else(|| Some(name.to_string()))
        })
    });
    let target = text_of("description")
        .into_iter()
        .chain(from_definition)
        .find_map(|name| name.strip_prefix(JOB_NAME_PREFIX).map(str::to_string));
    Ok(JobRecord {
        id,
        device,
        device_type: text_of("requested_device_type").unwrap_or_default(),
        target,
        end_time: text_of("end_time"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_are_read_from_a_list_or_a_rest_page_without_lavas_own_suite() {
        let list = r#"[
            {"suite": "lava", "name": "job", "result": "pass", "measurement": null, "unit": ""},
            {"suite": "0_ekb-bundle", "name": "relu", "result": "pass", "measurement": "1234.5000000000", "unit": "ns"},
            {"suite": "0_ekb-bundle", "name": "conv", "result": "fail", "measurement": null, "unit": ""}
        ]"#;
        let cases = parse_results("r.json", list).unwrap();
        assert_eq!(cases.len(), 2);
        assert_eq!(
            cases[0],
            Case {
                suite: "0_ekb-bundle".into(),
                name: "relu".into(),
                result: "pass".into(),
                measurement: Some(1234.5),
                unit: "ns".into()
            }
        );
        assert_eq!((cases[1].result.as_str(), cases[1].measurement), ("fail", None));
        let page = r#"{"count": 1, "next": null, "results": [{"id": 7, "suite": 3, "name": "relu", "result": "pass", "measurement": 10, "unit": "ns"}]}"#;
        let cases = parse_results("p.json", page).unwrap();
        assert_eq!((cases[0].suite.as_str(), cases[0].measurement), ("3", Some(10.0)));
        let e = parse_results("bad.json", r#"[{"name": "x", "result": "pass", "measurement": "fast"}]"#)
            .unwrap_err();
        assert!(e.to_string().contains("measurement `fast`"), "{e}");
        assert!(parse_results("n.json", "{}").unwrap_err().to_string().contains("results"));
    }

    #[test]
    fn a_job_names_its_board_and_the_target_of_its_bundle() {
        let definition = job("rk3588", "rk3588-rock-5b", "https://files.lab/b.tar.gz");
        let page = serde_json::json!({"id": 4711, "actual_device": "rock5b-03", "requested_device_type": "rk3588-rock-5b",
            "description": "something else", "definition": definition, "end_time": "2026-03-01T10:00:00Z"});
        let j = parse_job("job.json", &page.to_string()).unwrap();
        assert_eq!(
            (j.id.as_str(), j.device.as_str(), j.device_type.as_str()),
            ("4711", "rock5b-03", "rk3588-rock-5b")
        );
        assert_eq!(j.target.as_deref(), Some("rk3588"), "from the definition's job_name");
        let named = serde_json::json!({"id": 1, "actual_device": "b", "description": "ekb bundle for host"});
        assert_eq!(parse_job("j.json", &named.to_string()).unwrap().target.as_deref(), Some("host"));
        let unrun = serde_json::json!({"id": 2, "actual_device": null});
        assert!(parse_job("j.json", &unrun.to_string()).unwrap_err().to_string().contains("actual_device"));
    }

    #[test]
    fn the_bundle_url_is_one_shell_word() {
        assert_eq!(shell_quote("http://h/b.tar.gz"), "'http://h/b.tar.gz'");
        assert_eq!(shell_quote("a'b"), r"'a'\''b'");
    }
}
