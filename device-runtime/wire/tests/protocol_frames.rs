//! The incremental frame decoder against hostile and awkward streams: garbage, oversized
//! lengths, checksum failures, frames split across many feeds and many frames in one feed,
//! streams that end mid-frame, and bodies that are not messages.

use ekb_wire::crc32;
use ekb_wire::protocol::*;

fn hello() -> Request {
    Request::Hello { min_version: 1, max_version: 1, client: "test".into(), client_version: "1".into() }
}

fn frame(msg: &Request) -> Vec<u8> {
    encode_frame(msg).unwrap()
}

/// A frame around arbitrary body bytes.
fn raw_frame(body: &[u8]) -> Vec<u8> {
    let mut f = (body.len() as u32).to_le_bytes().to_vec();
    f.extend_from_slice(&crc32(body).to_le_bytes());
    f.extend_from_slice(body);
    f
}

/// Everything `decode` yields for `input` fed in one piece.
fn decode_all(dec: &mut FrameDecoder, mut input: &[u8]) -> Vec<Result<Vec<u8>, ProtocolError>> {
    let mut out = Vec::new();
    while !input.is_empty() {
        match dec.decode(&mut input) {
            Ok(Some(body)) => out.push(Ok(body)),
            Ok(None) => assert!(input.is_empty(), "Ok(None) with input left"),
            Err(e) => out.push(Err(e)),
        }
    }
    out
}

#[test]
fn many_frames_in_one_feed() {
    let msgs: Vec<Request> = (0..50).map(|i| Request::Unload { payload: PayloadId(i) }).collect();
    let stream: Vec<u8> = msgs.iter().flat_map(frame).collect();
    let mut dec = FrameDecoder::new();
    let got: Vec<Request> =
        decode_all(&mut dec, &stream).into_iter().map(|b| decode_message(&b.unwrap()).unwrap()).collect();
    assert_eq!(got, msgs);
    assert_eq!(dec.buffered(), 0);
    dec.finish().unwrap();
}

#[test]
fn a_frame_split_across_many_small_feeds() {
    let msgs = [hello(), Request::Load { payload: vec![7; 3000] }, Request::Shutdown];
    let stream: Vec<u8> = msgs.iter().flat_map(frame).collect();
    for size in [1, 2, 3, 7, 8, 9, 1000] {
        let mut dec = FrameDecoder::new();
        let mut got = Vec::new();
        for chunk in stream.chunks(size) {
            let mut input = chunk;
            while let Some(body) = dec.decode(&mut input).unwrap() {
                got.push(decode_message::<Request>(&body).unwrap());
            }
            assert!(input.is_empty());
        }
        assert_eq!(got, msgs, "feeds of {size} bytes");
        dec.finish().unwrap();
    }
}

#[test]
fn buffered_counts_the_partial_frame() {
    let f = frame(&hello());
    let mut dec = FrameDecoder::new();
    let mut input = &f[..5];
    assert_eq!(dec.decode(&mut input).unwrap(), None);
    assert_eq!(dec.buffered(), 5);
    let mut input = &f[5..10];
    assert_eq!(dec.decode(&mut input).unwrap(), None);
    assert_eq!(dec.buffered(), 10);
}

#[test]
fn oversized_frame_length() {
    let mut dec = FrameDecoder::new();
    let mut stream = (MAX_FRAME_LEN + 1).to_le_bytes().to_vec();
    stream.extend_from_slice(&[0; 4]);
    let mut input = &stream[..];
    let e = dec.decode(&mut input).unwrap_err();
    assert_eq!(e, ProtocolError::Oversized { len: u64::from(MAX_FRAME_LEN) + 1, max: MAX_FRAME_LEN });
    assert_eq!(e.to_string(), "frame length 1073741825 exceeds the maximum of 1073741824 bytes");
    assert_eq!(e.error_kind(), ErrorKind::BadFrame);

    // A smaller limit of the receiver's choosing.
    let mut dec = FrameDecoder::with_max_len(16);
    assert_eq!(dec.max_len(), 16);
    let big = frame(&Request::Load { payload: vec![0; 17] });
    let mut input = &big[..];
    assert_eq!(dec.decode(&mut input).unwrap_err(), ProtocolError::Oversized { len: 19, max: 16 });
    // The header was consumed; the body is now read as the next header.
    assert_eq!(input.len(), 19);
    // A limit above the protocol's is clamped to it.
    assert_eq!(FrameDecoder::with_max_len(u32::MAX).max_len(), MAX_FRAME_LEN);
}

#[test]
fn frame_crc_mismatch_skips_the_frame_and_goes_on() {
    let mut stream = frame(&hello());
    let stored = u32::from_le_bytes(stream[4..8].try_into().unwrap());
    stream[10] ^= 0x20;
    let computed = crc32(&stream[8..]);
    let len = (stream.len() - 8) as u32;
    stream.extend(frame(&Request::Shutdown));
    let mut dec = FrameDecoder::new();
    let got = decode_all(&mut dec, &stream);
    assert_eq!(got.len(), 2);
    assert_eq!(got[0], Err(ProtocolError::CrcMismatch { len, stored, computed }));
    assert_eq!(decode_message::<Request>(got[1].as_ref().unwrap()).unwrap(), Request::Shutdown);
}

#[test]
fn garbage_frames() {
    // Line noise: 0xff bytes declare an oversized length; the decoder reports each bad header
    // and goes on with the next bytes, so a frame after 8 bytes of noise is read again.
    let mut stream = vec![0xff; 8];
    stream.extend(frame(&hello()));
    let mut dec = FrameDecoder::new();
    let got = decode_all(&mut dec, &stream);
    assert_eq!(got[0], Err(ProtocolError::Oversized { len: u64::from(u32::MAX), max: MAX_FRAME_LEN }));
    assert_eq!(decode_message::<Request>(got[1].as_ref().unwrap()).unwrap(), hello());

    // Text where a frame should be: "GET / HTTP/1.1" declares 0x20544547 bytes (542 MB),
    // under the limit: nothing is allocated beyond what arrives, and the stream ends inside it.
    let mut dec = FrameDecoder::new();
    let text = b"GET / HTTP/1.1\r\n\r\n";
    assert!(decode_all(&mut dec, text).is_empty());
    assert_eq!(dec.buffered(), text.len());
    assert_eq!(dec.finish().unwrap_err(), ProtocolError::Truncated { needed: 0x2054_4547 + 8, got: 18 });

    // A well-formed frame whose body is no message.
    let mut dec = FrameDecoder::new();
    let got = decode_all(&mut dec, &raw_frame(&[0xee, 0x01]));
    let e = decode_message::<Request>(got[0].as_ref().unwrap()).unwrap_err();
    assert!(matches!(e, ProtocolError::Decode { .. }), "{e}");
    assert_eq!(e.error_kind(), ErrorKind::BadMessage);
    // An empty frame is a frame, with no message in it.
    let got = decode_all(&mut dec, &raw_frame(&[]));
    assert_eq!(got, [Ok(vec![])]);
    assert_eq!(
        decode_message::<Request>(&[]).unwrap_err(),
        ProtocolError::Decode { error: postcard::Error::DeserializeUnexpectedEnd }
    );
    // A message with bytes after it.
    let mut body = frame(&Request::Shutdown)[8..].to_vec();
    body.extend_from_slice(&[1, 2]);
    assert_eq!(decode_message::<Request>(&body).unwrap_err(), ProtocolError::TrailingBytes { unused: 2 });
}

#[test]
fn a_peer_vanishing_mid_frame_is_reported_at_the_end() {
    let f = frame(&hello());
    let mut dec = FrameDecoder::new();
    dec.finish().unwrap();
    let mut input = &f[..3];
    assert_eq!(dec.decode(&mut input).unwrap(), None);
    assert_eq!(dec.finish().unwrap_err(), ProtocolError::Truncated { needed: 8, got: 3 });
    let mut input = &f[3..f.len() - 1];
    assert_eq!(dec.decode(&mut input).unwrap(), None);
    assert_eq!(
        dec.finish().unwrap_err(),
        ProtocolError::Truncated { needed: f.len() as u64, got: f.len() as u64 - 1 }
    );
    assert_eq!(
        dec.finish().unwrap_err().to_string(),
        format!("the stream ended inside a frame: {} of {} bytes", f.len() - 1, f.len())
    );
}

#[test]
fn an_unknown_variant_is_a_decode_error() {
    // A request variant this version does not have (index 200).
    let e = decode_message::<Request>(&[0xc8, 0x01]).unwrap_err();
    assert!(matches!(e, ProtocolError::Decode { .. }), "{e}");
    assert!(e.to_string().starts_with("the frame holds no message of protocol version 3"), "{e}");
}
