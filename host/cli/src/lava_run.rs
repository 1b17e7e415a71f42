//! `ekb collect --lava RESULTS --lava-job JOB --into RUN`: a board farm's results as an
//! evaluation run, so that `ekb report RUN` (and `--by-device`) reads them as it reads a run of
//! `ekb eval`. Each LAVA test case (one payload of the bundle) is sample 0 of an instance named
//! after the payload (its level, domain and family from the task of that name in the suite, when
//! there is one); the device of every result is the job's board.
//!
//! What must stay true: nothing is invented: a passing case is correct with its median
//! (`median_ns`, unpaired: the job timed each payload alone), never a speedup (`timing` stays
//! absent: there was no baseline beside it); a failing case is failed with LAVA's verdict as its
//! evidence; what the job does not say (the runtime's version, the seeds, the board's serial,
//! temperature and clock) is `unknown` or empty.

use ekb_deploy::lava::{Case, JobRecord};
use ekb_eval::evaluate;
use ekb_eval::results::{
    utc_now, BackendEnv, CandidateResult, CandidateText, DeviceIdentity, FailureClass, FailureRecord,
    Instance, Phases, RunDir, RunInfo, TimingSettings, RESULTS_FORMAT,
};
use ekb_eval::tasks::{self, Backend, Suite};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Writes `cases` of `job` as the run directory `out` (which must not hold a run yet), for
/// `backend`; instances are looked up in the suite at `dir` (or the nearest `tasks/`).
pub fn write(
    cases: &[Case],
    job: &JobRecord,
    backend: Backend,
    dir: &Option<PathBuf>,
    out: &Path,
) -> Result<(), String> {
    let target = job.target.clone().ok_or_else(|| {
        format!(
            "error: LAVA job {} was not written by `ekb pack --lava` (its name is not `{}TARGET`)\n  \
             = hint: collect the results of a job that ran an ekb bundle",
            job.id,
            ekb_deploy::lava::JOB_NAME_PREFIX
        )
    })?;
    let profile = crate::source::target(&target)?;
    let suite = suite(dir)?;
    let instances: Vec<Instance> = cases.iter().map(|c| instance(&c.name, backend, suite.as_ref())).collect();
    let device_name = format!("lava job {} on {} ({})", job.id, job.device, job.device_type);
    let env = BackendEnv {
        target: profile.name.clone(),
        device: device_name.clone(),
        runtime: "ekb-rt".into(),
        runtime_version: "unknown".into(),
        arch: profile.cpu.triple.split('-').next().unwrap_or("").into(),
        cpu_model: "unknown".into(),
        cores: 0,
        memory_bytes: 0,
        gpu: None,
    };
    let info = RunInfo {
        format: RESULTS_FORMAT,
        created: utc_now(),
        ekb_version: env!("CARGO_PKG_VERSION").into(),
        command: std::env::args().collect(),
        candidates: format!("the payloads of LAVA job {}", job.id),
        baseline: "none".into(),
        samples: 1,
        seeds: Vec::new(),
        timing: TimingSettings {
            cold_cache: false,
            target_rse: 0.0,
            max_ci: 0.0,
            budget_s: 0.0,
            timeout_s: 0.0,
            threads: None,
        },
        backends: BTreeMap::from([(backend.name().to_string(), env)]),
        tools: BTreeMap::from([("ekb".to_string(), env!("CARGO_PKG_VERSION").to_string())]),
        instances: instances.clone(),
    };
    let mut run = RunDir::create(out, &info).map_err(|d| d.to_string())?;
    let device = DeviceIdentity {
        host: job.device.clone(),
        serial: "unknown".into(),
        device: device_name,
        profile: profile.name.clone(),
        runtime: "ekb-rt".into(),
        temperature_c: "unknown".into(),
        clock_mhz: "unknown".into(),
    };
    for (case, instance) in cases.iter().zip(instances) {
        let passed = case.result == "pass";
        let result = CandidateResult {
            instance,
            sample: 0,
            candidate: CandidateText {
                origin: format!("payloads/{}.ekp", case.name),
                kind: "payload".into(),
                sha256: None,
                text: None,
            },
            // The payload was built before it was bundled.
            compiled: true,
            correct: passed,
            failure: (!passed).then(|| FailureRecord {
                class: FailureClass::Runtime,
                detail: format!("lava: {}", case.result),
                evidence: format!(
                    "LAVA job {} recorded case `{}` as `{}`: the payload failed its check on the board or could not run \
                     there; the job's log (run.log) says which",
                    job.id, case.name, case.result
                ),
            }),
            timing: None,
            baseline_failure: None,
            memory: None,
            passes: None,
            seconds: Phases::default(),
            finished: job.end_time.clone().unwrap_or_else(utc_now),
            device: Some(device.clone()),
            median_ns: case.measurement.filter(|_| passed && case.unit == "ns"),
        };
        run.append(&result).map_err(|d| d.to_string())?;
    }
    Ok(())
}

/// The suite at `dir`, or at the nearest `tasks/` (none when there is none).
fn suite(dir: &Option<PathBuf>) -> Result<Option<Suite>, String> {
    let root = match dir {
        Some(d) => Some(d.clone()),
        None => std::env::current_dir().ok().and_then(|cwd| tasks::find_root(&cwd)),
    };
    root.map(|r| tasks::load_suite(&r).map_err(|d| d.to_string())).transpose()
}

/// The instance of payload `name`: the suite task's, or one of level 0 with no domain or
/// family when the suite has no task of that name.
fn instance(name: &str, backend: Backend, suite: Option<&Suite>) -> Instance {
    suite
        .and_then(|s| s.tasks.iter().find(|t| t.name == name))
        .and_then(|t| evaluate::instances(&[t], &[backend]).into_iter().next())
        .unwrap_or_else(|| Instance {
            task: name.into(),
            backend: backend.name().into(),
            level: 0,
            domain: String::new(),
            family: String::new(),
        })
}
