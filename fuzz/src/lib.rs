//! The bodies of the fuzz targets, shared by the libFuzzer targets (`fuzz_targets/`) and the
//! stable-Rust driver (`src/bin/stable_fuzz.rs`).
//!
//! Each body must never panic on any bytes. Beyond "no panic" they check the round-trip
//! property of the text forms: whatever reads successfully prints to text that reads again and
//! prints identically. A violated property panics, which the fuzzer reports as a crash.

use ekb_ir::SourceFile;

mod requests;

/// L0: bytes -> `SourceFile::from_bytes` -> `l0::check::load`; a graph that loads must print,
/// reload and print the same text; every diagnostic must render. Returns whether it loaded.
pub fn parse_l0(data: &[u8]) -> bool {
    let Ok(src) = SourceFile::from_bytes("fuzz.ekir".into(), data.to_vec()) else { return false };
    match ekb_ir::l0::check::load(&src) {
        Ok(g) => {
            let printed = ekb_ir::l0::print::print(&g);
            let again = match ekb_ir::l0::check::load(&SourceFile::new("printed.ekir", printed.clone())) {
                Ok(g) => g,
                Err(ds) => panic!("printed graph does not load:\n{printed}\n{}", ds[0]),
            };
            assert_eq!(ekb_ir::l0::print::print(&again), printed, "printing is not a fixed point");
            true
        }
        Err(ds) => {
            assert!(!ds.is_empty(), "load failed without a diagnostic");
            for d in ds {
                let _ = d.to_string();
            }
            false
        }
    }
}

/// L1: bytes -> `l1::parse::parse` -> `l1::verify::verify`; a module that parses must print,
/// reparse and print the same text. Returns whether it parsed.
pub fn parse_l1(data: &[u8]) -> bool {
    let Ok(src) = SourceFile::from_bytes("fuzz.ekl1".into(), data.to_vec()) else { return false };
    match ekb_ir::l1::parse::parse(&src) {
        Ok(m) => {
            for d in ekb_ir::l1::verify::verify(&m, None) {
                let _ = d.to_string();
            }
            let printed = ekb_ir::l1::print::print(&m);
            let again = match ekb_ir::l1::parse::parse(&SourceFile::new("printed.ekl1", printed.clone())) {
                Ok(m) => m,
                Err(d) => panic!("printed module does not parse:\n{printed}\n{d}"),
            };
            assert_eq!(ekb_ir::l1::print::print(&again), printed, "printing is not a fixed point");
            true
        }
        Err(d) => {
            let _ = d.to_string();
            false
        }
    }
}

/// Requests: bytes -> a session's worth of structurally valid requests (every field drawn from
/// the bytes, legal or not, around and beyond the protocol's bounds) -> frames -> an
/// in-process runtime session (`ekb_rt::serve::Session`: decoding, `Request::check`,
/// handling). Every request must be answered; one outside the bounds with exactly the
/// `InvalidRequest` error that names its field, one inside them with anything else. Returns
/// whether any request was legal.
pub fn requests(data: &[u8]) -> bool {
    use ekb_wire::protocol::{encode_frame, ErrorKind, Request, Response, PROTOCOL_VERSION};
    let mut u = arbitrary::Unstructured::new(data);
    let mut session = ekb_rt::serve::Session::new(ekb_rt::run::RunOptions::default());
    let hello = Request::Hello {
        min_version: PROTOCOL_VERSION,
        max_version: PROTOCOL_VERSION,
        client: "fuzz".into(),
        client_version: "0".into(),
    };
    session.handle(&encode_frame(&hello).expect("a small frame")[8..]);
    let mut any_legal = false;
    while !u.is_empty() {
        let Ok(request) = requests::request(&mut u) else { break };
        let body = encode_frame(&request).expect("a small frame");
        let (response, done) = session.handle(&body[8..]);
        match (request.check(), &response) {
            (Err(e), Response::Error { kind: ErrorKind::InvalidRequest, message }) => {
                assert_eq!(message, &e.to_string(), "{request:?}")
            }
            (Err(e), other) => panic!("{request:?} is out of bounds ({e}) but was answered {other:?}"),
            (Ok(()), Response::Error { kind: ErrorKind::InvalidRequest, message }) => {
                panic!("{request:?} is within the bounds but was refused: {message}")
            }
            (Ok(()), _) => any_legal = true,
        }
        if done {
            break;
        }
    }
    any_legal
}
