//! `ekb-rt serve`: the protocol of `docs/protocol.md` over a byte stream (stdin and stdout, so
//! a pipe, ssh or adb carries it).
//!
//! The loop reads whatever bytes arrive, feeds them to a [`FrameDecoder`] and answers every
//! frame with exactly one response frame: a frame that fails its checksum or declares an
//! impossible length is answered with `Error { BadFrame }`, a body that is no request of the
//! agreed version with `Error { BadMessage }`, any request before `Hello` with
//! `Error { NotNegotiated }`, a `Hello` whose version range misses this runtime's with
//! `Error { UnsupportedVersion }`, a request with a field outside its bounds (`Request::check`)
//! with `Error { InvalidRequest }` before anything acts on it — and the session goes on in
//! every case. The stream ending at
//! a frame boundary ends the session quietly; ending inside a frame (the host vanished
//! mid-message) ends it with [`ServeEnd::Truncated`]. A response that cannot be written (the
//! host is gone) ends it with [`ServeEnd::HostGone`].
//!
//! What it must keep true: nothing but response frames is ever written to the output (logs go
//! to stderr or into reports); every request gets one response; no input, however hostile,
//! makes the loop panic or stop serving. Payload bytes received in `Load` are wiped from the
//! receive buffers once copied into the payload's own mapping, so that the only copy a kernel
//! process could inherit is the mapping it unmaps (`docs/runtime.md`).

use crate::device::Device;
use crate::run::{self, Held, RunOptions};
use crate::store::LoadedPayload;
use crate::{counters, isolate};
use ekb_wire::protocol::{
    decode_message, encode_frame, negotiate, DeviceInfo, ErrorKind, FrameDecoder, PayloadId, ProtocolError,
    Request, Response, TimingOverrides,
};
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::sync::Arc;

/// How a session ended.
#[derive(Debug)]
pub enum ServeEnd {
    /// The host sent `Shutdown` (answered with `Bye`).
    Shutdown,
    /// The input ended at a frame boundary.
    Closed,
    /// The input ended inside a frame.
    Truncated(ProtocolError),
    /// A response could not be written, or the input could not be read.
    HostGone(std::io::Error),
}

/// The runtime's side of one session.
pub struct Session {
    version: Option<u32>,
    payloads: BTreeMap<PayloadId, Arc<LoadedPayload>>,
    /// The payloads whose kernel process is kept between turns (`Hold`).
    held: BTreeMap<PayloadId, Held>,
    next_id: u64,
    device: Device,
    info: Option<DeviceInfo>,
    options: RunOptions,
}

impl Session {
    /// A session whose runs use `options` (threads, CPUs, the host's file descriptor to
    /// watch) unless a request says otherwise.
    pub fn new(options: RunOptions) -> Session {
        Session {
            version: None,
            payloads: BTreeMap::new(),
            held: BTreeMap::new(),
            next_id: 0,
            device: Device::probe(),
            info: None,
            options,
        }
    }

    /// The agreed protocol version, once `Hello` succeeded.
    pub fn version(&self) -> Option<u32> {
        self.version
    }

    /// Answers one frame body; the flag is true when the session is over (`Bye`).
    pub fn handle(&mut self, body: &[u8]) -> (Response, bool) {
        let request = match decode_message::<Request>(body) {
            Ok(r) => r,
            Err(e) => return (error(e.error_kind(), e.to_string()), false),
        };
        if self.version.is_none() && !matches!(request, Request::Hello { .. }) {
            return (
                error(
                    ErrorKind::NotNegotiated,
                    format!(
                        "{} before `Hello`: the protocol version is not agreed yet",
                        request_name(&request)
                    ),
                ),
                false,
            );
        }
        if let Err(e) = request.check() {
            return (error(ErrorKind::InvalidRequest, e.to_string()), false);
        }
        match request {
            Request::Hello { min_version, max_version, .. } => match negotiate(min_version, max_version) {
                Some(version) => {
                    self.version = Some(version);
                    let ack = Response::HelloAck {
                        version,
                        runtime: "ekb-rt".into(),
                        runtime_version: env!("CARGO_PKG_VERSION").into(),
                        device: self.device.summary(),
                    };
                    (ack, false)
                }
                None => (Response::unsupported_version(min_version, max_version), false),
            },
            Request::DeviceInfo => {
                let device = &self.device;
                let info = self.info.get_or_insert_with(|| {
                    let mut info = device.to_info(counters::support(device), isolate::availability(device));
                    // Described in a child process: the driver is never loaded here.
                    info.gpus = crate::gpu::list().0;
                    info
                });
                (Response::DeviceInfo(info.clone()), false)
            }
            Request::Load { mut payload } => {
                let id = PayloadId(self.next_id);
                let result = LoadedPayload::from_bytes(id, &payload);
                wipe(&mut payload);
                match result {
                    Ok(p) => {
                        self.next_id += 1;
                        let kernels = p.manifest().kernels.iter().map(|k| k.name.clone()).collect();
                        let warnings = run::load_warnings(&p, &self.device);
                        self.payloads.insert(id, Arc::new(p));
                        (Response::Loaded { payload: id, kernels, warnings }, false)
                    }
                    Err(e) => (error(e.kind, e.message), false),
                }
            }
            Request::Run { payload, seeds, timing, threads } => {
                let Some(p) = self.payloads.get(&payload) else { return (unknown(payload), false) };
                let options = self.run_options(seeds, &timing, threads);
                let hidden = self.hidden();
                match run::run_payload(p, &hidden, &options) {
                    Ok(r) => (Response::RunReport(r), false),
                    Err(e) => (error(e.kind, e.message), false),
                }
            }
            Request::PairedRun { baseline, candidate, settings } => {
                let (Some(b), Some(c)) = (self.payloads.get(&baseline), self.payloads.get(&candidate)) else {
                    let missing = if self.payloads.contains_key(&baseline) { candidate } else { baseline };
                    return (unknown(missing), false);
                };
                let mut options = self.options.clone();
                if let Some(t) = settings.threads {
                    options.threads = t as usize;
                }
                let hidden = self.hidden();
                match run::run_paired(b, c, &hidden, &settings, &options) {
                    Ok(r) => (Response::PairedReport(Box::new(r)), false),
                    Err(e) => (error(e.kind, e.message), false),
                }
            }
            Request::Hold { payload, seeds, timing, threads } => {
                let Some(p) = self.payloads.get(&payload) else { return (unknown(payload), false) };
                if self.held.contains_key(&payload) {
                    return (
                        error(
                            ErrorKind::InvalidRequest,
                            format!("{payload} is held already: `Release` it before holding it again"),
                        ),
                        false,
                    );
                }
                let options = self.run_options(seeds, &timing, threads);
                let hidden = self.hidden();
                match run::hold(p, &hidden, &options) {
                    Ok((report, held)) => {
                        if let Some(h) = held {
                            self.held.insert(payload, h);
                        }
                        (Response::RunReport(report), false)
                    }
                    Err(e) => (error(e.kind, e.message), false),
                }
            }
            Request::Turn { payload, budget_ms } => match self.take_held(payload) {
                Err(e) => (*e, false),
                Ok(h) => match h.turn(budget_ms) {
                    Ok((report, held)) => {
                        if let Some(h) = held {
                            self.held.insert(payload, h);
                        }
                        (Response::RunReport(report), false)
                    }
                    Err(e) => (error(e.kind, e.message), false),
                },
            },
            Request::Release { payload } => match self.take_held(payload) {
                Err(e) => (*e, false),
                Ok(h) => match h.release() {
                    Ok(report) => (Response::RunReport(report), false),
                    Err(e) => (error(e.kind, e.message), false),
                },
            },
            Request::Unload { payload } => match self.payloads.remove(&payload) {
                Some(_) => {
                    // Its kernel process, if held, ends with it.
                    self.held.remove(&payload);
                    (Response::Unloaded { payload }, false)
                }
                None => (unknown(payload), false),
            },
            Request::Shutdown => (Response::Bye, true),
        }
    }

    /// The session's run options with a request's seeds, timing changes and threads.
    fn run_options(
        &self,
        seeds: Option<Vec<u32>>,
        timing: &TimingOverrides,
        threads: Option<u32>,
    ) -> RunOptions {
        let mut options = self.options.clone();
        options.seeds = seeds;
        options.timing = merge(&options.timing, timing);
        if let Some(t) = threads {
            options.threads = t as usize;
        }
        options
    }

    /// The hold of `payload`, taken out of the session (a turn puts it back unless it ended);
    /// the answer when there is none.
    fn take_held(&mut self, payload: PayloadId) -> Result<Held, Box<Response>> {
        match self.held.remove(&payload) {
            Some(h) => Ok(h),
            None if self.payloads.contains_key(&payload) => Err(Box::new(error(
                ErrorKind::InvalidRequest,
                format!("{payload} is not held: send `Hold` first (a failed turn ends the hold)"),
            ))),
            None => Err(Box::new(unknown(payload))),
        }
    }

    /// Every loaded payload's mapping and every held run's buffers: what a kernel process must
    /// not see.
    fn hidden(&self) -> Vec<(usize, usize)> {
        let payloads = self.payloads.values().map(|p| (p.mapping().addr(), p.mapping().len()));
        payloads.chain(self.held.values().flat_map(Held::hidden)).collect()
    }
}

/// `over`'s fields where it has them, else `base`'s: a request's timing changes on top of the
/// session's (from `ekb-rt serve`'s options).
fn merge(base: &TimingOverrides, over: &TimingOverrides) -> TimingOverrides {
    TimingOverrides {
        warmup: over.warmup.or(base.warmup),
        min_samples: over.min_samples.or(base.min_samples),
        max_samples: over.max_samples.or(base.max_samples),
        target_rse: over.target_rse.or(base.target_rse),
        budget_ms: over.budget_ms.or(base.budget_ms),
        cold_cache: over.cold_cache.or(base.cold_cache),
    }
}

fn error(kind: ErrorKind, message: String) -> Response {
    Response::Error { kind, message }
}

fn unknown(id: PayloadId) -> Response {
    error(ErrorKind::UnknownPayload, format!("no payload is loaded under {id} in this session"))
}

fn request_name(r: &Request) -> &'static str {
    match r {
        Request::Hello { .. } => "`Hello`",
        Request::DeviceInfo => "`DeviceInfo`",
        Request::Load { .. } => "`Load`",
        Request::Run { .. } => "`Run`",
        Request::PairedRun { .. } => "`PairedRun`",
        Request::Unload { .. } => "`Unload`",
        Request::Shutdown => "`Shutdown`",
        Request::Hold { .. } => "`Hold`",
        Request::Turn { .. } => "`Turn`",
        Request::Release { .. } => "`Release`",
    }
}

/// Overwrites `bytes` with zeros in a way the compiler may not drop as a dead store.
fn wipe(bytes: &mut [u8]) {
    bytes.fill(0);
    std::hint::black_box(&bytes);
}

/// Serves one session: reads frames from `input`, writes responses to `output`.
pub fn serve(mut input: impl Read, mut output: impl Write, mut session: Session) -> ServeEnd {
    let mut decoder = FrameDecoder::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = match input.read(&mut buf) {
            Ok(0) => {
                return match decoder.finish() {
                    Ok(()) => ServeEnd::Closed,
                    Err(e) => ServeEnd::Truncated(e),
                }
            }
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return ServeEnd::HostGone(e),
        };
        let mut rest = &buf[..n];
        while !rest.is_empty() {
            let (response, done) = match decoder.decode(&mut rest) {
                Ok(None) => break,
                Ok(Some(mut body)) => {
                    let answer = session.handle(&body);
                    wipe(&mut body);
                    answer
                }
                Err(e) => (error(e.error_kind(), e.to_string()), false),
            };
            if let Err(e) = send(&mut output, &response) {
                return ServeEnd::HostGone(e);
            }
            if done {
                return ServeEnd::Shutdown;
            }
        }
        wipe(&mut buf[..n]);
    }
}

fn send(output: &mut impl Write, response: &Response) -> std::io::Result<()> {
    let frame = match encode_frame(response) {
        Ok(f) => f,
        // A report too large for a frame: say so instead of dropping the answer.
        Err(e) => encode_frame(&error(ErrorKind::Internal, format!("cannot send the response: {e}")))
            .map_err(std::io::Error::other)?,
    };
    output.write_all(&frame)?;
    output.flush()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ekb_wire::protocol::PROTOCOL_VERSION;

    #[test]
    fn request_timing_overrides_the_sessions_field_by_field() {
        let session = TimingOverrides {
            warmup: Some(1),
            max_samples: Some(50),
            budget_ms: Some(100),
            ..TimingOverrides::default()
        };
        let request =
            TimingOverrides { max_samples: Some(7), cold_cache: Some(true), ..TimingOverrides::default() };
        let m = merge(&session, &request);
        assert_eq!(
            m,
            TimingOverrides {
                warmup: Some(1),
                min_samples: None,
                max_samples: Some(7),
                target_rse: None,
                budget_ms: Some(100),
                cold_cache: Some(true),
            }
        );
    }

    #[test]
    fn an_in_process_session_refuses_requests_before_hello_and_survives_garbage() {
        let mut s = Session::new(RunOptions::default());
        let (r, done) = s.handle(&encode_frame(&Request::Shutdown).unwrap()[8..]);
        assert!(!done);
        assert!(matches!(r, Response::Error { kind: ErrorKind::NotNegotiated, .. }), "{r:?}");
        let (r, _) = s.handle(&[0xff, 0xff, 0xff]);
        assert!(matches!(r, Response::Error { kind: ErrorKind::BadMessage, .. }), "{r:?}");
        let hello =
            Request::Hello { min_version: 1, max_version: 3, client: "t".into(), client_version: "0".into() };
        let (r, _) = s.handle(&encode_frame(&hello).unwrap()[8..]);
        assert!(matches!(r, Response::HelloAck { version: PROTOCOL_VERSION, .. }), "{r:?}");
        assert_eq!(s.version(), Some(PROTOCOL_VERSION));
        let (r, done) = s.handle(&encode_frame(&Request::Shutdown).unwrap()[8..]);
        assert_eq!((r, done), (Response::Bye, true));
    }
}
