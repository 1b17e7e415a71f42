//! The frame decoder and message decoding must not allocate for lengths that are only
//! declared: a counting allocator measures peak heap growth. (One test in this binary, so no
//! other test allocates at the same time.)

mod counting_alloc;
use counting_alloc::peak_during;
use ekb_wire::protocol::*;

#[test]
fn declared_lengths_never_become_allocations() {
    // A header declaring the maximum frame (1 GiB), then 100 000 bytes, fed in one piece and
    // then byte by byte: the buffer follows the bytes that arrived, at most doubling.
    const SENT: usize = 100_000;
    let mut stream = MAX_FRAME_LEN.to_le_bytes().to_vec();
    stream.extend_from_slice(&[0; 4]);
    stream.resize(8 + SENT, 0xab);
    for chunk in [stream.len(), 1] {
        let (r, peak) = peak_during(|| {
            let mut dec = FrameDecoder::new();
            for piece in stream.chunks(chunk) {
                let mut input = piece;
                assert_eq!(dec.decode(&mut input), Ok(None));
            }
            dec.buffered()
        });
        assert_eq!(r, 8 + SENT);
        assert!(peak <= 2 * SENT + 4096, "fed {SENT} bytes in pieces of {chunk}: allocated {peak}");
    }

    // Message bodies that claim huge lengths.
    let huge_load = [2u8, 0xff, 0xff, 0xff, 0xff, 0x0f, 1, 2, 3];
    let huge_seeds = [3u8, 0, 1, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01, 5];
    for body in [&huge_load[..], &huge_seeds[..]] {
        let (r, peak) = peak_during(|| decode_message::<Request>(body));
        assert_eq!(r, Err(ProtocolError::Decode { error: postcard::Error::DeserializeUnexpectedEnd }));
        assert!(peak < 4096, "decoding {body:?} allocated {peak}");
    }
}
