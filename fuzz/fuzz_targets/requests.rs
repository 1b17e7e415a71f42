//! libFuzzer target: structurally valid protocol requests -> a runtime session; see
//! `ekb_fuzz::requests`.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    ekb_fuzz::requests(data);
});
