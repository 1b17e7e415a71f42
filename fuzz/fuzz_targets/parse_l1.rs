//! libFuzzer target: L1 text -> parse -> verify, and print -> parse -> print; see
//! `ekb_fuzz::parse_l1`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    ekb_fuzz::parse_l1(data);
});
