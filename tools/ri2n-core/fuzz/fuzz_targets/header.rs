#![no_main]
//! Header and heartbeat decoding: never panics, and what decodes re-encodes
//! to the same bytes.

use libfuzzer_sys::fuzz_target;
use ri2n_core::header::{Header, Heartbeat, HEADER_LEN, HEARTBEAT_LEN};

fuzz_target!(|data: &[u8]| {
    if let Ok((h, None)) = Header::decode(data) {
        let mut b = [0u8; HEADER_LEN];
        h.encode(&mut b);
        assert_eq!(&b[..], &data[..HEADER_LEN]);
        if let Ok(hb) = Heartbeat::decode(&data[HEADER_LEN..]) {
            let mut b = [0u8; HEARTBEAT_LEN];
            hb.encode(&mut b);
            assert_eq!(&b[..7], &data[HEADER_LEN..HEADER_LEN + 7]);
        }
    }
});
