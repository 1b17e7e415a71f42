//! The host's end of the protocol (`docs/protocol.md`) over any byte-stream pair: the stdin and
//! stdout of `ekb-rt serve` started locally, under qemu-user, through ssh or through adb.
//!
//! A session opens with `Hello` (this side speaks `MIN_PROTOCOL_VERSION..=PROTOCOL_VERSION`)
//! and must be answered by `HelloAck` with a version in that range; then every request gets
//! exactly one response. What it must keep true: a response is read as whole CRC-checked
//! frames (`FrameDecoder`), a `Response::Error` is returned as [`SessionError::Refused`] with
//! the session still usable, and the peer closing the stream or answering with the wrong kind
//! of message is an error naming what was expected, never a hang or a panic.

use ekb_wire::protocol::{
    decode_message, encode_frame, DeviceInfo, DeviceSummary, ErrorKind, FrameDecoder, PairedReport,
    PairedSettings, PayloadId, ProtocolError, Request, Response, RunReport, TimingOverrides,
    MIN_PROTOCOL_VERSION, PROTOCOL_VERSION,
};
use std::fmt;
use std::io::{Read, Write};

/// Why a request got no usable answer.
#[derive(Debug)]
pub enum SessionError {
    /// Reading or writing the stream failed.
    Io(std::io::Error),
    /// The peer closed the stream; `inside_frame` when it stopped mid-message.
    Closed { waiting_for: &'static str, inside_frame: Option<ProtocolError> },
    /// A frame or message that does not decode.
    Protocol(ProtocolError),
    /// The runtime answered with an error; the session goes on.
    Refused { kind: ErrorKind, message: String },
    /// The runtime answered with another message than the request calls for.
    Unexpected { expected: &'static str, got: String },
    /// `HelloAck` chose a version outside the range this side offered.
    BadVersion { version: u32 },
}

impl fmt::Display for SessionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SessionError::Io(e) => write!(f, "the connection to the runtime failed: {e}"),
            SessionError::Closed { waiting_for, inside_frame: None } => {
                write!(f, "the runtime closed the connection while ekb waited for {waiting_for}")
            }
            SessionError::Closed { waiting_for, inside_frame: Some(e) } => {
                write!(f, "the runtime closed the connection in the middle of {waiting_for} ({e})")
            }
            SessionError::Protocol(e) => write!(f, "the runtime sent a bad frame: {e}"),
            SessionError::Refused { kind, message } => write!(f, "the runtime refused ({kind}): {message}"),
            SessionError::Unexpected { expected, got } => {
                write!(f, "the runtime answered with {got} where ekb expected {expected}")
            }
            SessionError::BadVersion { version } => write!(
                f,
                "the runtime chose protocol version {version}, outside the {MIN_PROTOCOL_VERSION}..={PROTOCOL_VERSION} ekb offered"
            ),
        }
    }
}

impl std::error::Error for SessionError {}

/// The name of a response variant, for messages.
pub fn response_name(r: &Response) -> String {
    match r {
        Response::HelloAck { .. } => "HelloAck".into(),
        Response::DeviceInfo(_) => "DeviceInfo".into(),
        Response::Loaded { .. } => "Loaded".into(),
        Response::RunReport(_) => "RunReport".into(),
        Response::PairedReport(_) => "PairedReport".into(),
        Response::Unloaded { .. } => "Unloaded".into(),
        Response::Bye => "Bye".into(),
        Response::Error { kind, message } => format!("Error ({kind}: {message})"),
    }
}

/// What `HelloAck` said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hello {
    pub version: u32,
    pub runtime: String,
    pub runtime_version: String,
    pub device: DeviceSummary,
}

impl Hello {
    /// The `HelloAck` this was read from (the first frame of a report file).
    pub fn to_response(&self) -> Response {
        Response::HelloAck {
            version: self.version,
            runtime: self.runtime.clone(),
            runtime_version: self.runtime_version.clone(),
            device: self.device.clone(),
        }
    }
}

/// A loaded payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Loaded {
    pub id: PayloadId,
    pub kernels: Vec<String>,
    pub warnings: Vec<String>,
}

/// One protocol session with a runtime.
#[derive(Debug)]
pub struct Session<R, W> {
    reader: R,
    writer: W,
    decoder: FrameDecoder,
    /// Bytes read but not yet fed to the decoder.
    pending: Vec<u8>,
    hello: Hello,
}

impl<R: Read, W: Write> Session<R, W> {
    /// Sends `Hello` and waits for `HelloAck`.
    pub fn open(
        reader: R,
        writer: W,
        client: &str,
        client_version: &str,
    ) -> Result<Session<R, W>, SessionError> {
        let placeholder = Hello {
            version: 0,
            runtime: String::new(),
            runtime_version: String::new(),
            device: DeviceSummary {
                arch: String::new(),
                cpu_model: String::new(),
                cores: 0,
                memory_bytes: 0,
            },
        };
        let mut s =
            Session { reader, writer, decoder: FrameDecoder::new(), pending: Vec::new(), hello: placeholder };
        let hello = Request::Hello {
            min_version: MIN_PROTOCOL_VERSION,
            max_version: PROTOCOL_VERSION,
            client: client.into(),
            client_version: client_version.into(),
        };
        match s.request(&hello, "HelloAck")? {
            Response::HelloAck { version, runtime, runtime_version, device } => {
                if !(MIN_PROTOCOL_VERSION..=PROTOCOL_VERSION).contains(&version) {
                    return Err(SessionError::BadVersion { version });
                }
                s.hello = Hello { version, runtime, runtime_version, device };
                Ok(s)
            }
            other => Err(SessionError::Unexpected { expected: "HelloAck", got: response_name(&other) }),
        }
    }

    /// What the runtime said when the session opened.
    pub fn hello(&self) -> &Hello {
        &self.hello
    }

    /// Sends one request and reads its response; `Response::Error` becomes
    /// [`SessionError::Refused`].
    pub fn request(&mut self, req: &Request, waiting_for: &'static str) -> Result<Response, SessionError> {
        let frame = encode_frame(req).map_err(SessionError::Protocol)?;
        self.writer.write_all(&frame).map_err(SessionError::Io)?;
        self.writer.flush().map_err(SessionError::Io)?;
        match self.read_response(waiting_for)? {
            Response::Error { kind, message } => Err(SessionError::Refused { kind, message }),
            r => Ok(r),
        }
    }

    fn read_response(&mut self, waiting_for: &'static str) -> Result<Response, SessionError> {
        let mut chunk = vec![0u8; 64 << 10];
        loop {
            let mut input: &[u8] = &self.pending;
            let frame = self.decoder.decode(&mut input);
            let used = self.pending.len() - input.len();
            self.pending.drain(..used);
            if let Some(body) = frame.map_err(SessionError::Protocol)? {
                return decode_message(&body).map_err(SessionError::Protocol);
            }
            let n = loop {
                match self.reader.read(&mut chunk) {
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    r => break r.map_err(SessionError::Io)?,
                }
            };
            if n == 0 {
                return Err(SessionError::Closed { waiting_for, inside_frame: self.decoder.finish().err() });
            }
            self.pending.extend_from_slice(&chunk[..n]);
        }
    }

    pub fn device_info(&mut self) -> Result<DeviceInfo, SessionError> {
        match self.request(&Request::DeviceInfo, "DeviceInfo")? {
            Response::DeviceInfo(d) => Ok(d),
            other => Err(SessionError::Unexpected { expected: "DeviceInfo", got: response_name(&other) }),
        }
    }

    pub fn load(&mut self, payload: Vec<u8>) -> Result<Loaded, SessionError> {
        match self.request(&Request::Load { payload }, "Loaded")? {
            Response::Loaded { payload, kernels, warnings } => Ok(Loaded { id: payload, kernels, warnings }),
            other => Err(SessionError::Unexpected { expected: "Loaded", got: response_name(&other) }),
        }
    }

    pub fn run(
        &mut self,
        payload: PayloadId,
        seeds: Option<Vec<u32>>,
        timing: TimingOverrides,
        threads: Option<u32>,
    ) -> Result<RunReport, SessionError> {
        self.report(&Request::Run { payload, seeds, timing, threads })
    }

    pub fn paired_run(
        &mut self,
        baseline: PayloadId,
        candidate: PayloadId,
        settings: PairedSettings,
    ) -> Result<PairedReport, SessionError> {
        match self.request(&Request::PairedRun { baseline, candidate, settings }, "PairedReport")? {
            Response::PairedReport(r) => Ok(*r),
            other => Err(SessionError::Unexpected { expected: "PairedReport", got: response_name(&other) }),
        }
    }

    /// Starts a kernel process for `payload` and checks its seeds; it is kept for
    /// [`Session::turn`]s unless the report has a failure (protocol version 3).
    pub fn hold(
        &mut self,
        payload: PayloadId,
        seeds: Option<Vec<u32>>,
        timing: TimingOverrides,
        threads: Option<u32>,
    ) -> Result<RunReport, SessionError> {
        self.needs(3, "Hold")?;
        self.report(&Request::Hold { payload, seeds, timing, threads })
    }

    /// Times the held `payload` for `budget_ms`; a report with a failure ended the hold.
    pub fn turn(&mut self, payload: PayloadId, budget_ms: u64) -> Result<RunReport, SessionError> {
        self.needs(3, "Turn")?;
        self.report(&Request::Turn { payload, budget_ms })
    }

    /// Checks the held `payload` once more and ends its kernel process.
    pub fn release(&mut self, payload: PayloadId) -> Result<RunReport, SessionError> {
        self.needs(3, "Release")?;
        self.report(&Request::Release { payload })
    }

    /// Sends a request that a `RunReport` answers.
    fn report(&mut self, req: &Request) -> Result<RunReport, SessionError> {
        match self.request(req, "RunReport")? {
            Response::RunReport(r) => Ok(r),
            other => Err(SessionError::Unexpected { expected: "RunReport", got: response_name(&other) }),
        }
    }

    /// An error unless the session speaks protocol `version` or later (what `request` needs).
    fn needs(&self, version: u32, request: &str) -> Result<(), SessionError> {
        let spoken = self.hello.version;
        if spoken >= version {
            return Ok(());
        }
        Err(SessionError::Refused {
            kind: ErrorKind::Unsupported,
            message: format!(
                "`{request}` needs protocol version {version}, and this runtime speaks {spoken}: install the runtime that comes with this ekb on the device"
            ),
        })
    }

    pub fn unload(&mut self, payload: PayloadId) -> Result<(), SessionError> {
        match self.request(&Request::Unload { payload }, "Unloaded")? {
            Response::Unloaded { .. } => Ok(()),
            other => Err(SessionError::Unexpected { expected: "Unloaded", got: response_name(&other) }),
        }
    }

    /// Ends the session (`Shutdown`, answered by `Bye`).
    pub fn shutdown(mut self) -> Result<(), SessionError> {
        match self.request(&Request::Shutdown, "Bye")? {
            Response::Bye => Ok(()),
            other => Err(SessionError::Unexpected { expected: "Bye", got: response_name(&other) }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Frames of these responses, as a runtime's stdout would carry them.
    fn stream(responses: &[Response]) -> Vec<u8> {
        responses.iter().flat_map(|r| encode_frame(r).unwrap()).collect()
    }

    fn ack(version: u32) -> Response {
        Response::HelloAck {
            version,
            runtime: "ekb-rt".into(),
            runtime_version: "0.1.0".into(),
            device: DeviceSummary {
                arch: "x86_64".into(),
                cpu_model: "cpu".into(),
                cores: 2,
                memory_bytes: 1 << 30,
            },
        }
    }

    /// The requests a session wrote, decoded.
    fn requests(written: &[u8]) -> Vec<Request> {
        ekb_wire::protocol::split_frames(written)
            .unwrap()
            .into_iter()
            .map(|b| decode_message(b).unwrap())
            .collect()
    }

    #[test]
    fn hello_comes_first_and_offers_this_sides_version_range() {
        let input =
            stream(&[ack(PROTOCOL_VERSION), Response::Unloaded { payload: PayloadId(4) }, Response::Bye]);
        let mut out = Vec::new();
        let mut s = Session::open(input.as_slice(), &mut out, "ekb", "0.1.0").unwrap();
        assert_eq!(s.hello().runtime, "ekb-rt");
        assert_eq!(s.hello().device.cores, 2);
        s.unload(PayloadId(4)).unwrap();
        s.shutdown().unwrap();
        assert_eq!(
            requests(&out),
            vec![
                Request::Hello {
                    min_version: MIN_PROTOCOL_VERSION,
                    max_version: PROTOCOL_VERSION,
                    client: "ekb".into(),
                    client_version: "0.1.0".into()
                },
                Request::Unload { payload: PayloadId(4) },
                Request::Shutdown,
            ]
        );
    }

    #[test]
    fn a_version_refusal_and_a_version_outside_the_offer_are_errors() {
        let refusal = Response::unsupported_version(7, 9);
        let mut out = Vec::new();
        let e = Session::open(stream(&[refusal]).as_slice(), &mut out, "ekb", "0").unwrap_err();
        assert!(
            matches!(&e, SessionError::Refused { kind: ErrorKind::UnsupportedVersion, message } if message.contains("7..=9")),
            "{e}"
        );
        let e = Session::open(stream(&[ack(PROTOCOL_VERSION + 1)]).as_slice(), Vec::new(), "ekb", "0")
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "the runtime chose protocol version {}, outside the {MIN_PROTOCOL_VERSION}..={PROTOCOL_VERSION} ekb offered",
                PROTOCOL_VERSION + 1
            )
        );
    }

    #[test]
    fn refusals_keep_the_session_and_wrong_answers_are_named() {
        let input = stream(&[
            ack(PROTOCOL_VERSION),
            Response::Error { kind: ErrorKind::UnknownPayload, message: "no payload #9".into() },
            Response::Bye,
        ]);
        let mut s = Session::open(input.as_slice(), Vec::new(), "ekb", "0").unwrap();
        let e = s.unload(PayloadId(9)).unwrap_err();
        assert_eq!(e.to_string(), "the runtime refused (unknown-payload): no payload #9");
        let e = s.unload(PayloadId(1)).unwrap_err();
        assert_eq!(e.to_string(), "the runtime answered with Bye where ekb expected Unloaded");
    }

    #[test]
    fn a_peer_that_vanishes_mid_frame_or_sends_garbage_is_an_error() {
        let mut input = stream(&[ack(PROTOCOL_VERSION)]);
        let whole = stream(&[Response::Bye]);
        input.extend_from_slice(&whole[..whole.len() - 1]);
        let s = Session::open(input.as_slice(), Vec::new(), "ekb", "0").unwrap();
        let e = s.shutdown().unwrap_err();
        assert!(matches!(e, SessionError::Closed { waiting_for: "Bye", inside_frame: Some(_) }), "{e}");

        let e = Session::open(&b""[..], Vec::new(), "ekb", "0").unwrap_err();
        assert_eq!(e.to_string(), "the runtime closed the connection while ekb waited for HelloAck");

        let mut garbage = stream(&[ack(PROTOCOL_VERSION)]);
        garbage[8] ^= 0xff;
        let e = Session::open(garbage.as_slice(), Vec::new(), "ekb", "0").unwrap_err();
        assert!(matches!(e, SessionError::Protocol(ProtocolError::CrcMismatch { .. })), "{e}");
    }
}
