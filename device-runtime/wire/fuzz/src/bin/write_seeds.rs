//! Writes the seed corpora the fuzz targets start from, made with the crate's own builder and
//! encoder so they always match the current format: `seeds/payload_parse/` and
//! `seeds/frame_decode/` under the current directory.
//!
//! Usage: `cargo run --no-default-features --bin write_seeds`.

fn main() {
    let write = |dir: &str, name: String, bytes: &[u8]| {
        let dir = std::path::Path::new("seeds").join(dir);
        std::fs::create_dir_all(&dir).expect("create the seed directory");
        std::fs::write(dir.join(name), bytes).expect("write a seed");
    };
    write("payload_parse", "sample.ekp".into(), &ekb_wire_fuzz::sample_payload());
    write("payload_parse", "sample-data.ekp".into(), &ekb_wire_fuzz::sample_data_payload());
    write("payload_parse", "sample-gpu.ekp".into(), &ekb_wire_fuzz::sample_gpu_payload());
    write("payload_parse", "sample-prepare.ekp".into(), &ekb_wire_fuzz::sample_prepare_payload());
    write("payload_parse", "sample-v1.ekp".into(), ekb_wire_fuzz::VERSION_1_PAYLOAD);
    write("payload_parse", "sample-v2-gpu.ekp".into(), ekb_wire_fuzz::VERSION_2_GPU_PAYLOAD);
    write("payload_parse", "sample-v4.ekp".into(), ekb_wire_fuzz::VERSION_4_PAYLOAD);
    for (i, s) in ekb_wire_fuzz::sample_streams().iter().enumerate() {
        write("frame_decode", format!("stream-{i}"), s);
    }
}
