//! The JSON form bindings pass across their boundary: any text either is refused with an error
//! or gives a value whose encoding decodes back to it, and a record key for KIP-1266 events.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(bytes) = rlmeta::json::encode_value_from_json(text) {
        let back = rlmeta::decode_value(&bytes).expect("rlmeta's own encoding decodes");
        let again = back.encode().expect("a decoded value re-encodes");
        assert_eq!(again, bytes, "encode(decode(encode(json))) is stable");
    }
    if let Ok(doc) = rlmeta::json::parse(text) {
        let _ = rlmeta::plan::event_from_json(&doc);
    }
});
