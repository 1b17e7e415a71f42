//! A private broker: `redis-server` started as a child process on loopback, on a free port, with
//! its data in a temporary folder and an append-only file (`--appendfsync always`: every write synced before
//! it is acknowledged, the durability the workers rely on).
//! The tests and the simulation start one (and the tests kill and restart it, on the same port
//! with the same data, as a crashed broker comes back); a pool's real broker is started the
//! same way by hand (docs/scaleout.md).
//!
//! What must stay true: a missing `redis-server` is an error that says how to install it, never a
//! silent skip; the child is killed and reaped when the value is dropped.

use ekb_ir::Diagnostic;
use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running `redis-server` child.
pub struct LocalBroker {
    child: Child,
    port: u16,
    appendfsync: String,
    /// Holds the append-only file; removed with the broker.
    data: tempfile::TempDir,
}

impl LocalBroker {
    /// Starts `redis-server` on 127.0.0.1 and waits until it answers; `appendfsync` is when it
    /// syncs its append-only file: `always` (before each write is acknowledged: what the
    /// delivery guarantees assume), `everysec` (up to a second of writes lost with the machine).
    pub fn start(appendfsync: &str) -> Result<LocalBroker, Diagnostic> {
        let data = tempfile::tempdir()
            .map_err(|e| Diagnostic::error(format!("cannot create a folder for the broker's data: {e}")))?;
        // A free port: bind port 0, read what the system chose, release it for the server.
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(|e| Diagnostic::error(format!("cannot find a free loopback port: {e}")))?
            .port();
        let child = spawn(port, appendfsync, data.path())?;
        let mut broker = LocalBroker { child, port, appendfsync: appendfsync.into(), data };
        broker.wait_ready()?;
        Ok(broker)
    }

    /// Kills the server (SIGKILL: it writes nothing more) and waits for it to exit.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Starts the server again on the same port with the same data (after [`LocalBroker::kill`]),
    /// and waits until it answers: what it had synced to its append-only file is back.
    pub fn restart(&mut self) -> Result<(), Diagnostic> {
        self.kill();
        self.child = spawn(self.port, &self.appendfsync, self.data.path())?;
        self.wait_ready()
    }

    fn wait_ready(&mut self) -> Result<(), Diagnostic> {
        let port = self.port;
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if crate::broker::Broker::connect(&self.url()).is_ok() {
                return Ok(());
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(Diagnostic::error(format!(
                    "`redis-server` on port {port} exited at start: {status}"
                )));
            }
            if Instant::now() > deadline {
                return Err(Diagnostic::error(format!(
                    "`redis-server` on port {port} did not answer within 10 s"
                )));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// `redis://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }
}

/// `redis-server` on 127.0.0.1:`port` with its append-only file in `dir`.
fn spawn(port: u16, appendfsync: &str, dir: &std::path::Path) -> Result<Child, Diagnostic> {
    Command::new("redis-server")
        .args(["--bind", "127.0.0.1", "--port", &port.to_string(), "--save", ""])
        .args(["--appendonly", "yes", "--appendfsync", appendfsync])
        .arg("--dir")
        .arg(dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| {
            Diagnostic::error(format!("cannot start `redis-server`: {e}"))
                .with_hint("install it: `apt-get install redis-server` (toolchains/setup.sh does)")
        })
}

impl Drop for LocalBroker {
    fn drop(&mut self) {
        self.kill();
    }
}
