//! The ssh transport against a real OpenSSH server that the test starts on loopback: its own
//! configuration, host key, client key and `authorized_keys` in a temporary directory, on a
//! free port, logging in as the user running the test. The runtime is copied with scp on first
//! use, reused while unchanged, copied again when it changes, and payloads run on the "board"
//! with correct results.
//!
//! Needs `/usr/sbin/sshd` (Debian `openssh-server`, installed by `toolchains/setup.sh`).

mod common;

use ekb_deploy::build::{self, BuildOptions};
use ekb_deploy::command::{Cmd, Exec, System};
use ekb_deploy::driver::{Program, Sources};
use ekb_deploy::runtime::Runtime;
use ekb_deploy::transport::{self, Device, Mode, RemoteOptions, RunSettings};
use ekb_ir::TargetProfile;
use ekb_llvm::Arch;
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const SSHD: &str = "/usr/sbin/sshd";

/// An sshd child process, killed when dropped.
struct Sshd {
    child: Child,
    port: u16,
    dir: tempfile::TempDir,
}

impl Drop for Sshd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn sh(cmd: &mut Command) {
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{cmd:?}: {}", String::from_utf8_lossy(&out.stderr));
}

fn keygen(path: &Path) {
    sh(Command::new("ssh-keygen").args(["-q", "-t", "ed25519", "-N", "", "-C", "ekb-test", "-f"]).arg(path));
}

fn user() -> String {
    let out = Command::new("id").arg("-un").output().unwrap();
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

fn start_sshd() -> Sshd {
    assert!(
        Path::new(SSHD).is_file(),
        "{SSHD} is missing: install Debian's openssh-server (toolchains/setup.sh does)"
    );
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    keygen(&d.join("host_key"));
    keygen(&d.join("client_key"));
    std::fs::copy(d.join("client_key.pub"), d.join("authorized_keys")).unwrap();
    // A free port: bind to port 0, note it, release it for sshd.
    let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let config = format!(
        "Port {port}\nListenAddress 127.0.0.1\nHostKey {d}/host_key\nAuthorizedKeysFile {d}/authorized_keys\n\
         PidFile {d}/sshd.pid\nStrictModes no\nPubkeyAuthentication yes\nPasswordAuthentication no\n\
         KbdInteractiveAuthentication no\nUsePAM no\nPermitRootLogin prohibit-password\n\
         Subsystem sftp internal-sftp\nLogLevel ERROR\n",
        d = d.display()
    );
    std::fs::write(d.join("sshd_config"), config).unwrap();
    let host_pub = std::fs::read_to_string(d.join("host_key.pub")).unwrap();
    std::fs::write(d.join("known_hosts"), format!("[127.0.0.1]:{port} {host_pub}")).unwrap();
    // Run as root, sshd separates privileges into /run/sshd, which Debian's service would
    // create at boot; as another user it needs nothing outside the temporary directory.
    if user() == "root" && !Path::new("/run/sshd").is_dir() {
        std::fs::create_dir_all("/run/sshd").unwrap();
    }
    let child = Command::new(SSHD)
        .args(["-D", "-e", "-f"])
        .arg(d.join("sshd_config"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut sshd = Sshd { child, port, dir };
    let start = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        if let Some(status) = sshd.child.try_wait().unwrap() {
            panic!("sshd exited with {status} before listening (its stderr is above)");
        }
        assert!(start.elapsed() < Duration::from_secs(20), "sshd did not listen on port {port} within 20 s");
        std::thread::sleep(Duration::from_millis(50));
    }
    sshd
}

fn options(sshd: &Sshd) -> RemoteOptions {
    let d = sshd.dir.path().display();
    RemoteOptions {
        ssh_options: vec![
            format!("IdentityFile={d}/client_key"),
            "IdentitiesOnly=yes".into(),
            format!("UserKnownHostsFile={d}/known_hosts"),
            "StrictHostKeyChecking=yes".into(),
        ],
        remote_dir: Some(format!("{d}/board")),
    }
}

fn payload(dir: &Path, graph: &str) -> PathBuf {
    let g = ekb_e2e::load_graph(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/ops").join(graph));
    let host = TargetProfile::load("host").unwrap();
    let built =
        build::build(Program::Graph(&g), Sources::default(), &host, &BuildOptions::default()).unwrap();
    let path = dir.join(format!("{}.ekp", g.name));
    std::fs::write(&path, built.payload).unwrap();
    path
}

fn board_files(sshd: &Sshd) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(sshd.dir.path().join("board"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    v.sort();
    v
}

#[test]
fn ssh_copies_the_runtime_once_and_runs_payloads_on_the_board() {
    let rt_path = common::static_runtime(Arch::X86_64);
    let runtime = Runtime::inspect(&rt_path, Arch::X86_64, "test build").unwrap();
    let sshd = start_sshd();
    let opts = options(&sshd);
    let device = Device::Ssh { user: Some(user()), host: "127.0.0.1".into(), port: Some(sshd.port) };
    let work = tempfile::tempdir().unwrap();
    let payloads = [payload(work.path(), "matmul.ekir"), payload(work.path(), "softmax.ekir")];

    // The plain ssh command line works with these options (the transport adds nothing magic).
    let mut probe =
        Cmd::new("ssh").args(["-p".to_string(), sshd.port.to_string(), "-o".into(), "BatchMode=yes".into()]);
    for o in &opts.ssh_options {
        probe = probe.args(["-o".to_string(), o.clone()]);
    }
    let echo =
        System.run(&probe.arg(format!("{}@127.0.0.1", user())).arg("echo hello from the board")).unwrap();
    assert!(echo.success(), "plain ssh failed: {}", echo.failure());
    assert_eq!(echo.stdout_text(), "hello from the board\n");

    // First run: the runtime is copied, then the payloads run there.
    let mut t = transport::connect(&device, &runtime, &opts).unwrap();
    let out =
        transport::run_payloads(t.as_mut(), &mut System, &payloads, &RunSettings::default(), Mode::Auto)
            .unwrap();
    let copied = format!("ekb-rt-{}", runtime.content_id());
    assert_eq!(
        out.log[0],
        format!("runtime: copied {} to {}/board/{copied}", rt_path.display(), sshd.dir.path().display())
    );
    assert_eq!(board_files(&sshd), vec![copied.clone()], "only the runtime is left on the board");
    assert_eq!(
        std::fs::read(sshd.dir.path().join("board").join(&copied)).unwrap(),
        std::fs::read(&rt_path).unwrap()
    );
    let tasks: Vec<String> = out
        .report
        .entries
        .iter()
        .map(|e| match e {
            ekb_deploy::report::Entry::Run(r) => {
                assert!(r.is_correct(), "{}", ekb_deploy::report::render("ssh", &out.report));
                assert_eq!(r.seeds.iter().map(|s| s.seed).collect::<Vec<_>>(), vec![0, 1, 2]);
                r.task.clone()
            }
            other => panic!("not run: {other:?}"),
        })
        .collect();
    assert_eq!(tasks, vec!["matmul", "softmax"]);
    assert_eq!(out.report.hello.device.arch, "x86_64");

    // Second run, offline: the runtime on the board is reused.
    let out = transport::run_payloads(
        t.as_mut(),
        &mut System,
        &payloads[..1],
        &RunSettings::default(),
        Mode::Offline,
    )
    .unwrap();
    assert_eq!(out.mode, Mode::Offline);
    assert_eq!(
        out.log[0],
        format!("runtime: {}/board/{copied} (already on the device)", sshd.dir.path().display())
    );
    assert!(out.report.all_correct());
    assert_eq!(board_files(&sshd), vec![copied.clone()]);

    // A rebuilt runtime (different bytes) is a new file on the board, copied again.
    let rebuilt = work.path().join("ekb-rt-rebuilt");
    let mut bytes = std::fs::read(&rt_path).unwrap();
    bytes.push(0);
    std::fs::write(&rebuilt, bytes).unwrap();
    std::fs::set_permissions(&rebuilt, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let runtime2 = Runtime::inspect(&rebuilt, Arch::X86_64, "rebuilt").unwrap();
    let mut t2 = transport::connect(&device, &runtime2, &opts).unwrap();
    let out = transport::run_payloads(
        t2.as_mut(),
        &mut System,
        &payloads[1..],
        &RunSettings::default(),
        Mode::Offline,
    )
    .unwrap();
    let copied2 = format!("ekb-rt-{}", runtime2.content_id());
    assert!(out.log[0].starts_with("runtime: copied "), "{:?}", out.log);
    let mut want = vec![copied, copied2];
    want.sort();
    assert_eq!(board_files(&sshd), want);
    assert!(out.report.all_correct());
}

#[test]
fn a_key_the_board_does_not_accept_is_a_clear_error() {
    let rt_path = common::static_runtime(Arch::X86_64);
    let runtime = Runtime::inspect(&rt_path, Arch::X86_64, "test build").unwrap();
    let sshd = start_sshd();
    let mut opts = options(&sshd);
    let other = sshd.dir.path().join("other_key");
    keygen(&other);
    opts.ssh_options[0] = format!("IdentityFile={}", other.display());
    let device = Device::Ssh { user: Some(user()), host: "127.0.0.1".into(), port: Some(sshd.port) };
    let mut t = transport::connect(&device, &runtime, &opts).unwrap();
    let start = Instant::now();
    let e = t.install(&mut System).unwrap_err();
    // BatchMode: no password prompt, an answer within seconds.
    assert!(start.elapsed() < Duration::from_secs(30));
    assert!(
        e.message.starts_with(&format!(
            "cannot reach {}@127.0.0.1:{} (ssh): exited with status 255: ",
            user(),
            sshd.port
        )),
        "{}",
        e.message
    );
    assert!(e.message.contains("Permission denied"), "{}", e.message);
    assert!(e
        .hint
        .as_deref()
        .unwrap()
        .starts_with(&format!("check that `ssh {}@127.0.0.1` logs in without a password prompt", user())));
}
