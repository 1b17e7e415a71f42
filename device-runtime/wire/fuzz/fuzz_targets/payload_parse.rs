//! libFuzzer target: bytes -> `Payload::parse`, as they are and with their checksums
//! re-sealed; see `ekb_wire_fuzz::payload_parse`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    ekb_wire_fuzz::payload_parse(data);
});
