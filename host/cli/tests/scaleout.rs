//! `ekb eval --queue` over a pool of `ekb worker` processes, against a real `redis-server` on
//! loopback (started here; a missing one fails the test with the command that installs it): one
//! worker is killed (SIGKILL) while it holds a job, another takes that job after the min-idle
//! time; the submitter is killed after its first result and the run resumed; the run ends with
//! every candidate stored exactly once, each naming its device, with the outcomes of the same
//! command run locally; `--resume` of the finished run adds nothing. A broker killed and restarted
//! mid-run is waited for by the worker and the submitter, and the run ends with every candidate
//! stored once. `ekb tune --queue` and `ekb agent --queue` have their candidates measured by a
//! worker, with records and runs of the form of local ones.

use ekb_queue::server::LocalBroker;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn ekb(dir: &Path) -> Command {
    let rt = ekb_e2e::static_runtime("x86_64-unknown-linux-musl", Path::new(env!("CARGO_TARGET_TMPDIR")));
    let mut c = Command::new(env!("CARGO_BIN_EXE_ekb"));
    c.current_dir(dir).env("EKB_RT_X86_64", rt).env_remove("EKB_RT");
    c
}

fn repo_tasks() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tasks")
}

/// The evaluation's options, the same for the pooled and the local run: the Level-1 CPU
/// instances of `*relu*`, two samples each, fixed seeds, a short timing budget.
fn eval_args(out: &Path) -> Vec<String> {
    let mut a: Vec<String> =
        ["eval", "*relu*", "--level", "1", "--samples", "2", "--seeds", "11,22,33"].map(String::from).into();
    a.extend(["--budget", "0.1", "--plain", "--dir"].map(String::from));
    a.push(repo_tasks().display().to_string());
    a.push("--out".into());
    a.push(out.display().to_string());
    a
}

/// (task, sample) -> (compiled, correct) of every stored result; panics on a key stored twice
/// or a result without its device.
fn outcomes(run: &Path) -> BTreeMap<(String, u64), (bool, bool)> {
    let text = std::fs::read_to_string(run.join("results.jsonl")).unwrap();
    let mut out = BTreeMap::new();
    for line in text.lines() {
        let r: Value = serde_json::from_str(line).unwrap();
        let key = (r["instance"]["task"].as_str().unwrap().to_string(), r["sample"].as_u64().unwrap());
        assert_eq!(r["device"]["profile"], "host", "{key:?} names its device: {}", r["device"]);
        assert!(r["device"]["host"].as_str().is_some_and(|h| !h.is_empty()), "{}", r["device"]);
        let v = (r["compiled"].as_bool().unwrap(), r["correct"].as_bool().unwrap());
        assert!(out.insert(key.clone(), v).is_none(), "{key:?} stored twice");
    }
    out
}

/// Kills the children when the test ends, however it ends.
struct Workers(Vec<(String, Child, PathBuf)>);

impl Drop for Workers {
    fn drop(&mut self) {
        for (_, child, _) in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// The consumers holding a pending job of the `host` stream, with the entry ids.
fn pending(conn: &mut redis::Connection) -> Vec<(String, String)> {
    let reply: redis::streams::StreamPendingCountReply =
        redis::cmd("XPENDING").arg(&["ekb:jobs:host", "workers", "-", "+", "16"]).query(conn).unwrap();
    reply.ids.into_iter().map(|p| (p.consumer, p.id)).collect()
}

fn signal(child: &Child, sig: i32) {
    assert_eq!(unsafe { libc::kill(child.id() as i32, sig) }, 0);
}

#[test]
fn a_pool_with_a_worker_killed_mid_job_stores_every_candidate_once_as_a_local_run_would() {
    let broker = LocalBroker::start("always")
        .unwrap_or_else(|d| panic!("this test needs redis-server on this machine:\n{d}"));
    let url = broker.url();
    let tmp = tempfile::tempdir().unwrap();
    let mut workers = Workers(Vec::new());
    for n in 0..3 {
        let name = format!("w{n}");
        let log = tmp.path().join(format!("{name}.log"));
        let child = ekb(tmp.path())
            .args(["worker", "--queue", &url, "--name", &name, "--min-idle", "1"])
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap();
        workers.0.push((name, child, log));
    }
    let pooled = tmp.path().join("pooled");
    let mut submit = ekb(tmp.path())
        .args(eval_args(&pooled))
        .args(["--queue", &url, "--queue-depth", "4"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();

    // Freeze a worker that holds a job (its heartbeat stops with it), check it still holds one,
    // and kill it; one that finished its job meanwhile is let go and another is tried.
    let mut conn = redis::Client::open(url.as_str()).unwrap().get_connection().unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    let (killed, entry) = 'found: loop {
        assert!(Instant::now() < deadline, "no worker took a job within 60 s");
        for (owner, _) in pending(&mut conn) {
            let Some((_, child, _)) = workers.0.iter_mut().find(|(n, _, _)| *n == owner) else { continue };
            signal(child, libc::SIGSTOP);
            if let Some((_, id)) = pending(&mut conn).into_iter().find(|(o, _)| *o == owner) {
                child.kill().unwrap();
                child.wait().unwrap();
                break 'found (owner, id);
            }
            signal(child, libc::SIGCONT);
        }
        std::thread::sleep(Duration::from_millis(20));
    };

    // The submitter is killed too once a first result is stored, and the run resumed: the
    // answers its workers posted meanwhile are found on the results stream, what it had not
    // published yet is published, and what comes back twice is dropped.
    let results = pooled.join("results.jsonl");
    let stored = |p: &Path| std::fs::read_to_string(p).map_or(0, |t| t.lines().count());
    while stored(&results) == 0 {
        assert!(Instant::now() < deadline, "no result within 60 s");
        assert!(submit.try_wait().unwrap().is_none(), "the submitter ended before its first result");
        std::thread::sleep(Duration::from_millis(20));
    }
    submit.kill().unwrap();
    let first = submit.wait_with_output().unwrap();
    let before = stored(&results);
    assert!(before < 6, "the submitter was killed mid-run ({before} of 6 stored)");
    let out = ekb(tmp.path()).args(eval_args(&pooled)).args(["--queue", &url, "--resume"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "the resumed pooled run failed:\n{stderr}\nbefore the kill:\n{}",
        String::from_utf8_lossy(&first.stderr)
    );
    assert!(stderr.contains(&format!("resuming: {before} of 6 candidate(s) already stored")), "{stderr}");
    let logs: String = workers
        .0
        .iter()
        .filter(|(n, _, _)| *n != killed)
        .map(|(_, _, log)| std::fs::read_to_string(log).unwrap())
        .collect();
    assert!(
        logs.contains(&format!("claimed job entry {entry} abandoned by another worker")),
        "the job of the killed worker {killed} (entry {entry}) was taken by another:\n{logs}"
    );
    let pooled_outcomes = outcomes(&pooled);
    assert_eq!(pooled_outcomes.len(), 6, "3 instances x 2 samples:\n{stderr}");
    let run: Value =
        serde_json::from_str(&std::fs::read_to_string(pooled.join("run.json")).unwrap()).unwrap();
    assert_eq!(run["instances"].as_array().unwrap().len(), 3);

    // Resuming the finished run publishes nothing and stores nothing more.
    let again =
        ekb(tmp.path()).args(eval_args(&pooled)).args(["--queue", &url, "--resume"]).output().unwrap();
    let again_err = String::from_utf8_lossy(&again.stderr);
    assert!(again.status.success(), "{again_err}");
    assert!(again_err.contains("submitting 0 job(s)"), "{again_err}");
    assert_eq!(outcomes(&pooled), pooled_outcomes);

    // The results split per device.
    let report = ekb(tmp.path()).args(["report", "--by-device"]).arg(&pooled).output().unwrap();
    let table = String::from_utf8_lossy(&report.stdout);
    assert!(report.status.success(), "{}", String::from_utf8_lossy(&report.stderr));
    let compiled = pooled_outcomes.values().filter(|&&(c, _)| c).count();
    let rows: Vec<&str> = table.lines().skip(1).collect();
    assert_eq!(rows.len(), 1, "one device, this machine:\n{table}");
    let cells: Vec<&str> = rows[0].split_whitespace().collect();
    assert_eq!((cells[3], cells[4], cells[5]), ("host", "6", compiled.to_string().as_str()), "{table}");

    // The same command without `--queue`, on this machine.
    let local = tmp.path().join("local");
    let l = ekb(tmp.path()).args(eval_args(&local)).output().unwrap();
    assert!(l.status.success(), "the local run failed:\n{}", String::from_utf8_lossy(&l.stderr));
    assert_eq!(pooled_outcomes, outcomes(&local), "the pool gives the local run's outcomes");
    assert!(pooled_outcomes.values().any(|&(compiled, correct)| compiled && correct));
}

#[test]
fn a_broker_killed_and_restarted_mid_run_is_waited_for_by_the_worker_and_the_submitter() {
    let mut broker = LocalBroker::start("always")
        .unwrap_or_else(|d| panic!("this test needs redis-server on this machine:\n{d}"));
    let url = broker.url();
    let tmp = tempfile::tempdir().unwrap();
    let log = tmp.path().join("w.log");
    let worker = ekb(tmp.path())
        .args(["worker", "--queue", &url, "--name", "w", "--min-idle", "5", "--reconnect-s", "60"])
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    let _workers = Workers(vec![("w".into(), worker, log.clone())]);
    let pooled = tmp.path().join("pooled");
    let submit = ekb(tmp.path())
        .args(eval_args(&pooled))
        .args(["--queue", &url, "--queue-depth", "2", "--reconnect-s", "60"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Kill the broker (SIGKILL) once a first result is stored, and bring it back a second later
    // on the same port with its append-only file.
    let results = pooled.join("results.jsonl");
    let deadline = Instant::now() + Duration::from_secs(60);
    while std::fs::read_to_string(&results).map_or(0, |t| t.lines().count()) == 0 {
        assert!(Instant::now() < deadline, "no result within 60 s");
        std::thread::sleep(Duration::from_millis(20));
    }
    broker.kill();
    std::thread::sleep(Duration::from_secs(1));
    broker.restart().unwrap();
    let out = submit.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let worker_log = std::fs::read_to_string(&log).unwrap();
    assert!(
        out.status.success(),
        "the submitter did not ride out the restart:\n{stderr}\nworker:\n{worker_log}"
    );
    for (who, text) in [("submitter", &*stderr), ("worker", &*worker_log)] {
        assert!(text.contains(&format!("the broker at {url} is unreachable")), "{who}:\n{text}");
        assert!(text.contains(&format!("reconnected to the broker at {url}")), "{who}:\n{text}");
    }
    assert_eq!(outcomes(&pooled).len(), 6, "3 instances x 2 samples, each once:\n{stderr}");
}

#[test]
fn a_candidate_baseline_travels_with_its_jobs() {
    // `--baseline candidates:DIR` on a pool: the baseline's files go in each job (a worker
    // cannot read DIR), and the candidate is timed against them as a local run would time it.
    let broker = LocalBroker::start("always")
        .unwrap_or_else(|d| panic!("this test needs redis-server on this machine:\n{d}"));
    let url = broker.url();
    let tmp = tempfile::tempdir().unwrap();
    let _workers = one_worker(tmp.path(), &url, "w");
    let task = repo_tasks().join("level1/relu_resnet18_stem.ekir");
    for (dir, schedule) in [("cands", "default"), ("base", "naive")] {
        let o = ekb(tmp.path()).arg("lower").arg(&task).args(["--schedule", schedule]).output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let sample = tmp.path().join(dir).join("relu_resnet18_stem/cpu/sample-0");
        std::fs::create_dir_all(&sample).unwrap();
        std::fs::write(sample.join("candidate.ekir"), &o.stdout).unwrap();
    }
    let run = tmp.path().join("run");
    let out = ekb(tmp.path())
        .args(["eval", "relu_resnet18_stem", "--level", "1", "--candidates", "cands", "--baseline"])
        .arg(format!("candidates:{}", tmp.path().join("base").display()))
        .args(["--seeds", "3,5,7", "--budget", "0.1", "--plain", "--queue", &url, "--dir"])
        .arg(repo_tasks())
        .arg("--out")
        .arg(&run)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let text = std::fs::read_to_string(run.join("results.jsonl")).unwrap();
    let r: Value = serde_json::from_str(text.lines().next().expect("one result")).unwrap();
    assert_eq!((r["compiled"].as_bool(), r["correct"].as_bool()), (Some(true), Some(true)), "{r}");
    assert!(r["timing"].is_object(), "timed against the baseline's files: {r}");
    let run_json: Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("run.json")).unwrap()).unwrap();
    assert!(run_json["baseline"].as_str().is_some_and(|b| b.starts_with("candidates:")), "{run_json}");
}

/// One worker of the `host` profile on `url`, its stderr in `dir/NAME.log`.
fn one_worker(dir: &Path, url: &str, name: &str) -> Workers {
    let log = dir.join(format!("{name}.log"));
    let child = ekb(dir)
        .args(["worker", "--queue", url, "--name", name, "--min-idle", "5"])
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    Workers(vec![(name.into(), child, log)])
}

/// The records of a tuning database (its lines after the header).
fn tune_records(db: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(db).unwrap();
    text.lines().skip(1).map(|l| serde_json::from_str(l).unwrap()).collect()
}

#[test]
fn ekb_tune_with_a_queue_has_its_candidates_measured_by_the_workers() {
    let broker = LocalBroker::start("always")
        .unwrap_or_else(|d| panic!("this test needs redis-server on this machine:\n{d}"));
    let url = broker.url();
    let tmp = tempfile::tempdir().unwrap();
    let workers = one_worker(tmp.path(), &url, "w");
    let tasks = repo_tasks().display().to_string();
    let tune = |db: &str, pooled: bool| {
        let mut c = ekb(tmp.path());
        c.args(["tune", "gemv_mobilenetv2_classifier", "--level", "1", "--dir", &tasks, "--db", db]);
        c.args(["--trials", "4", "--batch", "3", "--rounds", "1", "--round-ms", "5"]);
        if pooled {
            c.args(["--queue", &url]);
        }
        c.output().unwrap()
    };
    let out = tune("pooled.jsonl", true);
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    let log = std::fs::read_to_string(&workers.0[0].2).unwrap();
    assert!(out.status.success(), "{stderr}\nworker:\n{log}");
    assert!(stdout.contains("times measured on ekb workers of host (a pool)"), "{stdout}");
    // Four trials, each a job the worker evaluated: the default first, then a batch of three.
    let pooled = tune_records(&tmp.path().join("pooled.jsonl"));
    assert_eq!(pooled.iter().map(|r| r["trial"].as_u64().unwrap()).collect::<Vec<_>>(), [1, 2, 3, 4]);
    assert_eq!(log.matches(": gemv_mobilenetv2_classifier on cpu sample").count(), 4, "{log}");
    for r in &pooled {
        assert!(r["device"].as_str().unwrap().starts_with("ekb workers of host (a pool)"), "{r}");
        if r["outcome"] == "ok" {
            assert!(r["time_ms"].as_f64().unwrap() > 0.0 && r["vs_best"].as_f64().unwrap() > 0.0, "{r}");
        }
    }
    // The default against itself: a ratio near 1, and its time is the scale.
    let default = &pooled[0];
    assert_eq!(default["outcome"], "ok", "{default}");
    let ratio = default["vs_best"].as_f64().unwrap();
    assert!((0.5..2.0).contains(&ratio), "{default}");
    // The records have the form of a local tune's.
    let local = tune("local.jsonl", false);
    assert!(local.status.success(), "{}", String::from_utf8_lossy(&local.stderr));
    let fields = |r: &Value| r.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
    let here = tune_records(&tmp.path().join("local.jsonl"));
    assert_eq!(fields(&here[0]), fields(&pooled[0]));
    assert_eq!(here[0]["recipe"], pooled[0]["recipe"], "the default first, in both");
    // A graph file is not a task a worker can load.
    std::fs::write(
        tmp.path().join("g.ekir"),
        "graph g(a: f32[4]) -> (b: f32[4]) {\n  %0 = relu(a)\n  return %0\n}\n",
    )
    .unwrap();
    let refused = ekb(tmp.path()).args(["tune", "g.ekir", "--queue", &url]).output().unwrap();
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("with `--queue`, the workloads are tasks"));
}

#[test]
fn ekb_agent_with_a_queue_has_its_attempts_evaluated_by_the_workers() {
    let broker = LocalBroker::start("always")
        .unwrap_or_else(|d| panic!("this test needs redis-server on this machine:\n{d}"));
    let url = broker.url();
    let tmp = tempfile::tempdir().unwrap();
    let workers = one_worker(tmp.path(), &url, "w");
    let run = tmp.path().join("agent");
    let out = ekb(tmp.path())
        .args(["agent", "gemv_mobilenetv2_classifier", "--level", "1", "--dir"])
        .arg(repo_tasks())
        .args([
            "--nodes",
            "3",
            "--batch",
            "2",
            "--budget",
            "0.2",
            "--baseline",
            "default",
            "--seeds",
            "3,5,7",
        ])
        .args(["--plain", "--queue", &url, "--out"])
        .arg(&run)
        .output()
        .unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    let log = std::fs::read_to_string(&workers.0[0].2).unwrap();
    assert!(out.status.success(), "{stderr}\nworker:\n{log}");
    assert!(stderr.contains(&format!("on the pool at {url}")), "{stderr}");
    assert!(stdout.contains("| gemv_mobilenetv2_classifier/cpu |"), "{stdout}");
    // Every attempt was a job: each batch's run directory is a pooled run's (its results stream
    // named), and each result names the worker's device.
    let batches: Vec<PathBuf> =
        std::fs::read_dir(run.join("evals")).unwrap().map(|e| e.unwrap().path().join("run")).collect();
    assert!(!batches.is_empty());
    let mut attempts = 0;
    for b in &batches {
        assert!(b.join("queue.json").is_file(), "{}", b.display());
        let text = std::fs::read_to_string(b.join("results.jsonl")).unwrap();
        for line in text.lines() {
            let r: Value = serde_json::from_str(line).unwrap();
            assert_eq!(r["device"]["profile"], "host", "{r}");
            attempts += 1;
        }
    }
    assert_eq!(log.matches(": gemv_mobilenetv2_classifier on cpu sample").count(), attempts, "{log}");
    // The answers are a run `ekb report` reads, as after a local agent run.
    let report = ekb(tmp.path()).arg("report").arg(&run).output().unwrap();
    assert!(report.status.success(), "{}", String::from_utf8_lossy(&report.stderr));
}
