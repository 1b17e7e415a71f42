//! The exact commands the remote transports run (ssh and adb), and their decisions — copy the
//! runtime only when the device lacks this build, refuse a runtime that does not run there,
//! clean up after an offline run whatever happened — driven by recorded answers instead of a
//! device. (adb is covered only this way: no Android device is attached here.)

use ekb_deploy::command::{Cmd, Exec, Output};
use ekb_deploy::runtime::Runtime;
use ekb_deploy::transport::{self, Device, Mode, RemoteOptions, RunSettings, Transport};
use ekb_ir::Diagnostic;
use ekb_llvm::Arch;
use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::process::Child;

/// Records every command and answers from a script, in order.
struct Recorder {
    calls: Vec<String>,
    answers: VecDeque<Output>,
    /// Files that `scp`/`adb pull` would have fetched: written when a pull command runs.
    pulled: Vec<u8>,
}

impl Recorder {
    fn new(answers: Vec<Output>) -> Recorder {
        Recorder { calls: Vec::new(), answers: answers.into(), pulled: Vec::new() }
    }
}

impl Exec for Recorder {
    fn run(&mut self, cmd: &Cmd) -> Result<Output, Diagnostic> {
        self.calls.push(cmd.to_string());
        let is_pull = cmd.args.iter().any(|a| a == "pull")
            || (cmd.program == "scp"
                && cmd.args.last().is_some_and(|a| a.ends_with("report.ekr") && !a.contains(':')));
        if is_pull {
            std::fs::write(cmd.args.last().unwrap(), &self.pulled).unwrap();
        }
        Ok(self.answers.pop_front().expect("an answer for every command"))
    }

    fn spawn(&mut self, cmd: &Cmd) -> Result<Child, Diagnostic> {
        panic!("unexpected spawn of {cmd}")
    }
}

fn ok(stdout: &str) -> Output {
    Output { status: Some(0), stdout: stdout.as_bytes().to_vec(), stderr: String::new() }
}

fn status(code: i32, stderr: &str) -> Output {
    Output { status: Some(code), stdout: Vec::new(), stderr: stderr.into() }
}

/// A fake aarch64 static executable (only its header matters here) and the runtime for it.
fn runtime(dir: &Path) -> Runtime {
    let mut b = vec![0u8; 64];
    b[..4].copy_from_slice(b"\x7fELF");
    (b[4], b[5]) = (2, 1);
    b[16] = 2;
    b[18..20].copy_from_slice(&183u16.to_le_bytes());
    let path = dir.join("ekb-rt");
    std::fs::write(&path, b).unwrap();
    Runtime::inspect(&path, Arch::Aarch64, "test").unwrap()
}

fn transport_for(device: &str, rt: &Runtime, options: &RemoteOptions) -> Box<dyn Transport> {
    transport::connect(&Device::parse(device).unwrap(), rt, options).unwrap()
}

#[test]
fn ssh_copies_a_missing_runtime_then_checks_it_runs() {
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime(dir.path());
    let id = rt.content_id().to_string();
    let options = RemoteOptions { ssh_options: vec!["IdentityFile=/keys/board".into()], remote_dir: None };
    let mut t = transport_for("ssh://root@rk3588.lan:2222", &rt, &options);
    let mut exec = Recorder::new(vec![
        status(127, "sh: .cache/ekb/ekb-rt-x: not found"),
        ok(""),
        ok(""),
        ok(""),
        ok("ekb-rt 0.1.0 (aarch64)\n"),
    ]);
    let log = t.install(&mut exec).unwrap();
    let ssh = "ssh -p 2222 -o BatchMode=yes -o IdentityFile=/keys/board root@rk3588.lan";
    let rt_path = format!(".cache/ekb/ekb-rt-{id}");
    assert_eq!(
        exec.calls,
        vec![
            format!("{ssh} '{rt_path} --version'"),
            format!("{ssh} 'mkdir -p .cache/ekb'"),
            format!(
                "scp -q -P 2222 -o BatchMode=yes -o IdentityFile=/keys/board {} root@rk3588.lan:{rt_path}.part",
                rt.path.display()
            ),
            format!("{ssh} 'chmod 755 {rt_path}.part && mv -f {rt_path}.part {rt_path}'"),
            format!("{ssh} '{rt_path} --version'"),
        ]
    );
    assert_eq!(log, vec![format!("runtime: copied {} to {rt_path}", rt.path.display())]);
    assert_eq!(t.serve_cmd().to_string(), format!("{ssh} '{rt_path} serve'"));
    assert_eq!(t.describe(), "root@rk3588.lan:2222 (ssh)");
}

#[test]
fn ssh_reuses_a_runtime_already_on_the_board() {
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime(dir.path());
    let options = RemoteOptions { ssh_options: vec![], remote_dir: Some("/opt/ekb dir/".into()) };
    let mut t = transport_for("ssh://[fe80::2]", &rt, &options);
    let mut exec = Recorder::new(vec![ok("ekb-rt 0.1.0 (aarch64)\n")]);
    let log = t.install(&mut exec).unwrap();
    let rt_path = format!("/opt/ekb dir/ekb-rt-{}", rt.content_id());
    assert_eq!(exec.calls, vec![format!("ssh -o BatchMode=yes fe80::2 ''\\''{rt_path}'\\'' --version'")]);
    assert_eq!(log, vec![format!("runtime: {rt_path} (already on the device)")]);
}

#[test]
fn a_runtime_that_does_not_run_on_the_board_is_an_error_not_a_copy_loop() {
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime(dir.path());
    let mut t = transport_for("ssh://pi@board", &rt, &RemoteOptions::default());
    let mut exec = Recorder::new(vec![status(126, "sh: 1: .cache/ekb/ekb-rt-x: Exec format error")]);
    let e = t.install(&mut exec).unwrap_err();
    assert_eq!(exec.calls.len(), 1);
    assert!(e.message.ends_with("on pi@board (ssh) does not run: exited with status 126: sh: 1: .cache/ekb/ekb-rt-x: Exec format error"), "{}", e.message);
    assert_eq!(
        e.hint.as_deref(),
        Some("the copied runtime is the aarch64 build: check that the device is aarch64 Linux (`uname -m`)")
    );

    // Copied, but still not runnable: reported once, after the copy.
    let mut exec = Recorder::new(vec![
        status(127, "not found"),
        ok(""),
        ok(""),
        ok(""),
        status(126, "Exec format error"),
    ]);
    let e = t.install(&mut exec).unwrap_err();
    assert_eq!(exec.calls.len(), 5);
    assert!(e.message.contains("was copied but does not run"), "{}", e.message);

    // A failed copy stops at the failing command and shows it.
    let mut exec = Recorder::new(vec![status(127, "not found"), ok(""), status(1, "scp: disk full")]);
    let e = t.install(&mut exec).unwrap_err();
    assert_eq!(e.message, "a command on pi@board (ssh) failed: exited with status 1: scp: disk full");
    assert!(e.notes[0].starts_with("command: scp -q -o BatchMode=yes "), "{:?}", e.notes);
}

#[test]
fn adb_commands_with_and_without_a_serial() {
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime(dir.path());
    let id = rt.content_id().to_string();
    let rt_path = format!("/data/local/tmp/ekb/ekb-rt-{id}");
    let mut t = transport_for("adb:R58M12ABC", &rt, &RemoteOptions::default());
    let mut exec =
        Recorder::new(vec![status(127, "not found"), ok(""), ok(""), ok(""), ok("ekb-rt 0.1.0 (aarch64)\n")]);
    t.install(&mut exec).unwrap();
    assert_eq!(
        exec.calls,
        vec![
            format!("adb -s R58M12ABC shell -T '{rt_path} --version'"),
            "adb -s R58M12ABC shell -T 'mkdir -p /data/local/tmp/ekb'".to_string(),
            format!("adb -s R58M12ABC push {} {rt_path}.part", rt.path.display()),
            format!("adb -s R58M12ABC shell -T 'chmod 755 {rt_path}.part && mv -f {rt_path}.part {rt_path}'"),
            format!("adb -s R58M12ABC shell -T '{rt_path} --version'"),
        ]
    );
    assert_eq!(t.serve_cmd().to_string(), format!("adb -s R58M12ABC shell -T '{rt_path} serve'"));
    assert_eq!(t.describe(), "Android device R58M12ABC (adb)");

    // adb failing itself (no such device) is not mistaken for a missing runtime.
    let mut exec = Recorder::new(vec![status(1, "adb: device 'R58M12ABC' not found")]);
    let e = t.install(&mut exec).unwrap_err();
    assert_eq!(e.message, "cannot reach Android device R58M12ABC (adb): exited with status 1: adb: device 'R58M12ABC' not found");
    assert_eq!(
        e.hint.as_deref(),
        Some("check that `adb devices` lists `R58M12ABC` as `device` (connected and authorised)")
    );

    let t = transport_for("adb", &rt, &RemoteOptions::default());
    assert_eq!(t.serve_cmd().to_string(), format!("adb shell -T '{rt_path} serve'"));
}

/// A report file as `ekb-rt run` writes it: a HelloAck and one error entry.
fn report_bytes() -> Vec<u8> {
    use ekb_wire::protocol::{encode_frame, DeviceSummary, ErrorKind, Response};
    let mut b = encode_frame(&Response::HelloAck {
        version: ekb_wire::protocol::PROTOCOL_VERSION,
        runtime: "ekb-rt".into(),
        runtime_version: "0.1.0".into(),
        device: DeviceSummary {
            arch: "aarch64".into(),
            cpu_model: "phone".into(),
            cores: 8,
            memory_bytes: 1,
        },
    })
    .unwrap();
    b.extend(encode_frame(&Response::Error { kind: ErrorKind::LoadFailed, message: "bad".into() }).unwrap());
    b
}

#[test]
fn offline_runs_stage_run_fetch_and_clean_up() {
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime(dir.path());
    let rt_path = format!("/data/local/tmp/ekb/ekb-rt-{}", rt.content_id());
    let mut t = transport_for("adb:emulator-5554", &rt, &RemoteOptions::default());
    let payloads = [PathBuf::from("/w/conv 2d.ekp"), PathBuf::from("/w/mm.ekp")];
    // The probe, mkdir, two pushes, the run (exit 1: a payload failed), pull, rm.
    let mut exec = Recorder::new(vec![
        ok("ekb-rt 0.1.0 (aarch64)\n"),
        ok(""),
        ok(""),
        ok(""),
        status(1, ""),
        ok(""),
        ok(""),
    ]);
    exec.pulled = report_bytes();
    let settings = RunSettings { threads: Some(4), ..RunSettings::default() };
    let out = transport::run_payloads(t.as_mut(), &mut exec, &payloads, &settings, Mode::Offline).unwrap();
    assert_eq!(out.mode, Mode::Offline);
    assert_eq!(out.report.hello.device.cpu_model, "phone");
    assert_eq!(out.report.entries.len(), 1);
    let adb = "adb -s emulator-5554";
    let work = exec.calls[1]
        .strip_prefix(&format!("{adb} shell -T 'mkdir -p "))
        .unwrap()
        .trim_end_matches('\'')
        .to_string();
    assert!(work.starts_with("/data/local/tmp/ekb/run-"), "{work}");
    let pull_to = exec.calls[5].rsplit(' ').next().unwrap().to_string();
    assert_eq!(
        exec.calls[2..],
        [
            format!("{adb} push '/w/conv 2d.ekp' {work}/000-conv_2d.ekp"),
            format!("{adb} push /w/mm.ekp {work}/001-mm.ekp"),
            format!(
                "{adb} shell -T '{rt_path} run {work}/000-conv_2d.ekp {work}/001-mm.ekp --out {work}/report.ekr --threads 4'"
            ),
            format!("{adb} pull {work}/report.ekr {pull_to}"),
            format!("{adb} shell -T 'rm -rf {work}'"),
        ]
    );

    // A run that fails outright still removes the work directory, then reports the failure.
    let mut exec = Recorder::new(vec![
        ok("ekb-rt 0.1.0 (aarch64)\n"),
        ok(""),
        ok(""),
        status(2, "ekb-rt: `run` needs at least one payload"),
        ok(""),
    ]);
    let e =
        transport::run_payloads(t.as_mut(), &mut exec, &payloads[1..], &settings, Mode::Offline).unwrap_err();
    assert_eq!(
        e.message,
        "`ekb-rt run` failed on Android device emulator-5554 (adb): exited with status 2: ekb-rt: `run` needs at least one payload"
    );
    assert!(
        exec.calls.last().unwrap().contains("shell -T 'rm -rf /data/local/tmp/ekb/run-"),
        "{:?}",
        exec.calls
    );
}

#[test]
fn local_runtimes_must_match_this_machine_and_remote_ones_must_be_static() {
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime(dir.path());
    if Arch::host() != Some(Arch::Aarch64) {
        let e = transport::connect(&Device::Local, &rt, &RemoteOptions::default()).err().unwrap();
        assert_eq!(e.hint.as_deref(), Some("use `--device qemu` to emulate it"));
    }
    let e = transport::connect(&Device::Dir("b".into()), &rt, &RemoteOptions::default()).err().unwrap();
    assert_eq!(e.message, "`dir:b` writes a bundle; it runs nothing");
    let t = transport::connect(&Device::Qemu, &rt, &RemoteOptions::default()).unwrap();
    assert_eq!(t.serve_cmd().to_string(), format!("qemu-aarch64 {} serve", rt.path.display()));
}
