//! libFuzzer target: bytes -> `FrameDecoder` in pieces -> `decode_message`; see
//! `ekb_wire_fuzz::frame_decode`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    ekb_wire_fuzz::frame_decode(data);
});
