//! libFuzzer target: L0 text -> load (parse + check) -> print -> load -> print; see
//! `ekb_fuzz::parse_l0`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    ekb_fuzz::parse_l0(data);
});
